//! `gather` and the scatters against JAX 0.10.2 (tests/fixtures/indexing/gather.json, from
//! tools/gen_gather_fixtures.py): NumPy indexing, `take` in every mode, `take_along_axis`,
//! `lax.gather` windows in every mode with and without `fill_value`, operand batching
//! dimensions, negative, out-of-range, wide and unsigned indices, empty indices; `.at[]`
//! `set`, `add`, `multiply`, `min` and `max` in every mode with duplicate and out-of-range
//! indices, scatter windows partly outside the operand. Each program's printed jaxpr reads,
//! prints back to the same text, and computes what JAX's `jit` computes, bit for bit,
//! evaluated and under `jit`, and its gradient what JAX's does; its JVP in the operand is
//! the program on the tangent (0 where it fills); `vmap` is stacking. A new case is a Python
//! function in the generator.

use dtype_lattice::{DType, Rules};
use dtype_lattice_array::config::with_rules;
use dtype_lattice_array::core::ClosedJaxpr;
use dtype_lattice_array::numpy as jnp;
use dtype_lattice_array::{Array, grad, jit, jvp, vmap};
use serde_json::Value;

use crate::common::fixture_path;
use crate::fixture_arrays::array;
use crate::jaxpr_reader::{arrays, close};

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(fixture_path("indexing/gather.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

/// `got`'s outputs are JAX's: dtype, shape and bits (float results of programs that compute
/// more than moves and combinations, `grad_…`: within the corpus's rule, [`close`]).
fn differs(
    what: &str,
    got: Result<Vec<Array>, dtype_lattice::Error>,
    want: &Value,
) -> Option<String> {
    let got = match got {
        Ok(g) => g,
        Err(e) => return Some(format!("{what}: {e}")),
    };
    let want = want.as_array()?;
    if got.len() != want.len() {
        return Some(format!("{what}: {} outputs, JAX {}", got.len(), want.len()));
    }
    got.iter().zip(want).enumerate().find_map(|(i, (g, w))| {
        let w = array(w);
        let same = g.dtype() == w.dtype()
            && g.shape() == w.shape()
            && (g.as_bytes() == w.as_bytes() || (what.starts_with("grad_") && close(g, &w)));
        (!same).then(|| format!("{what} output {i}: {g}, JAX {w}"))
    })
}

#[test]
fn gathers_compute_what_jax_computes() {
    let mut failures = Vec::new();
    let all = cases();
    assert!(all.len() >= 64, "{} cases", all.len());
    for case in &all {
        let name = case["name"].as_str().unwrap();
        let rules = Rules::jax().x64(case["x64"].as_bool().unwrap());
        with_rules(rules, || {
            let text = case["text"].as_str().unwrap();
            let f: ClosedJaxpr = text.parse().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(f.to_string(), text, "{name} prints back");
            let f = f.with_consts(arrays(&case["consts"])).unwrap();
            let args = arrays(&case["args"]);
            let want = &case["jit"];
            failures.extend(differs(&format!("{name} eval"), f.call(&args), want));
            failures.extend(differs(
                &format!("{name} jit"),
                jit(|a: Vec<Array>| f.call(&a)).call(&args),
                want,
            ));
            // The gradient in the first input (gather's transpose is a scatter-add, a
            // scatter-add's a gather), under jit as JAX's was.
            if let Some(want) = case.get("grad") {
                let g = jit(|x: Array| {
                    grad(
                        |x: Array| {
                            let mut a = args.clone();
                            a[0] = x;
                            Ok(f.call(&a)?.remove(0))
                        },
                        &x,
                    )
                })
                .call(&args[0])
                .map(|g: Array| vec![g]);
                failures.extend(differs(&format!("{name} grad"), g, want));
            }
            // The JVP in a float operand: the same program on the tangent, where the fill
            // is 0 (the tangent of a filled element is zero).
            // (The linear gathers only: a scatter's JVP, and those of the programs computing
            // more, are checked through the gradients.)
            let no_jvp = text.contains("scatter") || name.starts_with("grad_");
            if matches!(args[0].dtype(), DType::Float32 | DType::Float64) && !no_jvp {
                let t = Array::from_bytes(
                    args[0].dtype(),
                    args[0].shape(),
                    &args[0]
                        .as_bytes()
                        .iter()
                        .map(|b| b.wrapping_mul(7).wrapping_add(1) & 0x3f)
                        .collect::<Vec<u8>>(),
                )
                .unwrap();
                let rest = args[1..].to_vec();
                let g = |x: Array| {
                    let mut a = vec![x];
                    a.extend(rest.clone());
                    Ok(f.call(&a)?.remove(0))
                };
                let (y, ty): (Array, Array) = jvp(g, &args[0], &t).unwrap();
                let mut on_t = vec![t.clone()];
                on_t.extend(rest.clone());
                let plain = f.call(&on_t).unwrap().remove(0);
                let f64s = |x: &Array| x.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
                assert_eq!(y.as_bytes(), f.call(&args).unwrap()[0].as_bytes(), "{name}");
                // Where the program fills (its value is the fill, not an operand element),
                // the tangent is 0; elsewhere the gather of the tangent.
                let (got, on_tangent) = (f64s(&ty), f64s(&plain));
                for (k, (&g, &p)) in got.iter().zip(&on_tangent).enumerate() {
                    assert!(
                        g == p || g == 0.0,
                        "{name} jvp element {k}: {g} not {p} or 0"
                    );
                }
            }
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// JAX's errors: a float index array (`ValueError`), dimension numbers JAX refuses
/// (`TypeError`, JAX's messages).
#[test]
fn bad_gathers_raise_jax_errors() {
    // The reader checks each equation's types as JAX's does: the refusal comes from the
    // text, or (bound directly) from the call.
    let refused = |text: &str| -> String {
        let f: ClosedJaxpr = match text.parse() {
            Ok(f) => f,
            Err(e) => return format!("{e}"),
        };
        let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
        let i = Array::from_shape_vec(&[1, 1], vec![1.0f32]).unwrap();
        let i32s = Array::from_shape_vec(&[1, 1], vec![1i32]).unwrap();
        let args = if text.contains("b:f32") {
            vec![x, i]
        } else {
            vec![x, i32s]
        };
        f.call(&args).unwrap_err().to_string()
    };
    let gather = |dn: &str, sizes: &str, b: &str| {
        format!(
            "{{ lambda ; a:f32[3] b:{b}[1,1]. let c:f32[1] = gather[dimension_numbers=\
             GatherDimensionNumbers({dn}) fill_value=None indices_are_sorted=False \
             mode=GatherScatterMode.CLIP slice_sizes={sizes} unique_indices=False] a b in (c,) }}"
        )
    };
    let ok = "offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), \
              operand_batching_dims=(), start_indices_batching_dims=()";
    let e = refused(&gather(ok, "(1,)", "f32"));
    assert!(
        e.contains("ValueError") && e.contains("indices must have an integer type"),
        "{e}"
    );
    let e = refused(&gather(ok, "(2,)", "i32"));
    assert!(
        e.contains("TypeError")
            && e.contains("Gather op can only collapse slice dims with bound 1, but bound is 2"),
        "{e}"
    );
    let bad_map = "offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(1,), \
                   operand_batching_dims=(), start_indices_batching_dims=()";
    let e = refused(&gather(bad_map, "(1,)", "i32"));
    assert!(
        e.contains("Invalid start_index_map; domain is [0, 1), got: 0->1."),
        "{e}"
    );
}

/// `x`'s elements rotated by one (another example of the same type and values).
fn rotated(x: &Array) -> Array {
    let b = x.as_bytes();
    let w = b.len().checked_div(x.size()).unwrap_or(0);
    let mut r = b.get(w..).unwrap_or_default().to_vec();
    r.extend_from_slice(&b[..w.min(b.len())]);
    Array::from_bytes(x.dtype(), x.shape(), &r).unwrap()
}

/// `vmap` of every program is its examples stacked, bit for bit: batched in the operand only,
/// in the indices only (the other inputs shared), and in every input.
#[test]
fn vmap_of_gathers_is_stacking_the_examples() {
    let mut checked = 0;
    for case in &cases() {
        let name = case["name"].as_str().unwrap();
        let rules = Rules::jax().x64(case["x64"].as_bool().unwrap());
        with_rules(rules, || {
            let f: ClosedJaxpr = case["text"].as_str().unwrap().parse().unwrap();
            let f = f.with_consts(arrays(&case["consts"])).unwrap();
            let args = arrays(&case["args"]);
            let other: Vec<Array> = args.iter().map(rotated).collect();
            let call = |a: &[Array]| f.call(a).unwrap().remove(0);
            let stacked = |a: &Array, b: &Array| jnp::stack(&[a.into(), b.into()], 0).unwrap();
            // Which inputs the batch changes: the operand, the rest, all.
            let n = args.len();
            for which in [vec![0], (1..n).collect::<Vec<_>>(), (0..n).collect()] {
                let second: Vec<Array> = (0..n)
                    .map(|k| {
                        if which.contains(&k) {
                            other[k].clone()
                        } else {
                            args[k].clone()
                        }
                    })
                    .collect();
                let want = stacked(&call(&args), &call(&second));
                let batched: Vec<Array> = which
                    .iter()
                    .map(|&k| stacked(&args[k], &second[k]))
                    .collect();
                let got: Array = vmap(|b: Vec<Array>| {
                    let mut a = args.clone();
                    for (&k, x) in which.iter().zip(b) {
                        a[k] = x;
                    }
                    Ok(f.call(&a)?.remove(0))
                })
                .call(&batched)
                .unwrap_or_else(|e| panic!("{name} {which:?}: {e}"));
                assert_eq!(got.shape(), want.shape(), "{name} {which:?}");
                assert_eq!(got.as_bytes(), want.as_bytes(), "{name} {which:?}");
                checked += 1;
            }
        });
    }
    assert!(checked >= 160, "{checked}");
}
