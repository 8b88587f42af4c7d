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

fn cases_of(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(fixture_path(file)).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

/// Programs whose last bits XLA decides in ways not reproduced: gradients through more than
/// moves and combinations, `cumlogsumexp` (XLA's `exp` and `log1p` inside its window loop
/// differ from its elementwise ones by an ulp at times), a product over padded windows
/// (XLA's loop order over a padded window is not row-major), and the evaluation of a
/// division by a literal (JAX's dispatch compiles the literal in, and XLA multiplies by its
/// reciprocal, which only the plan of `jit` reproduces here).
fn approximate(what: &str) -> bool {
    [
        "grad_",
        "cumlogsumexp",
        "product_pool",
        "avg_pool_VALID eval",
        "avg_pool_SAME eval",
    ]
    .iter()
    .any(|p| what.starts_with(p))
}

/// `got`'s outputs are JAX's: dtype, shape and bits (float results of [`approximate`]
/// programs: within the corpus's rule, [`close`]).
fn differs(
    what: &str,
    got: Result<Vec<Array>, dtype_lattice::Error>,
    want: &Value,
) -> Option<String> {
    differs_unless(what, got, want, |g, w| approximate(what) && close(g, w))
}

/// `got`'s outputs against JAX's leaves: dtype, shape and bits, or `near(got, jax)`; the
/// message names the first element that differs and both its bits.
pub(crate) fn differs_unless(
    what: &str,
    got: Result<Vec<Array>, dtype_lattice::Error>,
    want: &Value,
    near: impl Fn(&Array, &Array) -> bool,
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
            && (g.as_bytes() == w.as_bytes() || near(g, &w));
        (!same).then(|| {
            // The first element that differs, by its bits.
            let width = g.as_bytes().len().checked_div(g.size()).unwrap_or(1).max(1);
            let at = g
                .as_bytes()
                .chunks(width)
                .zip(w.as_bytes().chunks(width))
                .position(|(a, b)| a != b);
            let hex = |x: &Array| {
                at.and_then(|k| x.as_bytes().chunks(width).nth(k))
                    .map(|c| c.iter().rev().map(|b| format!("{b:02x}")).collect::<String>())
            };
            format!(
                "{what} output {i} (first difference at element {at:?}: {:?}, JAX {:?}): {g}, JAX {w}",
                hex(g),
                hex(&w)
            )
        })
    })
}

#[test]
fn gathers_compute_what_jax_computes() {
    programs_compute_what_jax_computes("indexing/gather.json", 64, true);
}

#[test]
fn sorts_compute_what_jax_computes() {
    programs_compute_what_jax_computes("indexing/sort.json", 93, false);
}

#[test]
fn windows_compute_what_jax_computes() {
    programs_compute_what_jax_computes("indexing/window.json", 39, false);
}

/// Every program of a fixture file (at least `min` of them) evaluated, jitted and (`grad_…`)
/// differentiated agrees with JAX; with `linear`, the JVP of each float program is the
/// program on the tangent where it does not fill.
fn programs_compute_what_jax_computes(file: &str, min: usize, linear: bool) {
    let mut failures = Vec::new();
    let all = cases_of(file);
    assert!(all.len() >= min, "{} cases", all.len());
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
            // Evaluated equation by equation: JAX's eager outputs where recorded.
            let eager = case.get("eager").unwrap_or(want);
            failures.extend(differs(&format!("{name} eval"), f.call(&args), eager));
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
            let no_jvp = !linear || text.contains("scatter") || name.starts_with("grad_");
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
pub(crate) fn rotated(x: &Array) -> Array {
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
    vmap_is_stacking("indexing/gather.json", 160);
}

#[test]
fn vmap_of_sorts_is_stacking_the_examples() {
    vmap_is_stacking("indexing/sort.json", 190);
}

#[test]
fn vmap_of_windows_is_stacking_the_examples() {
    vmap_is_stacking("indexing/window.json", 60);
}

/// `vmap` of every program of a fixture file is its examples stacked (at least `min` checks).
fn vmap_is_stacking(file: &str, min: usize) {
    let mut checked = 0;
    for case in &cases_of(file) {
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
                if which.is_empty() {
                    continue;
                }
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
    assert!(checked >= min, "{checked}");
}

/// `sort`'s and `top_k`'s refusals, with JAX's classes and messages.
#[test]
fn bad_sorts_raise_jax_errors() {
    let refused = |text: &str| -> String {
        match text.parse::<ClosedJaxpr>() {
            Ok(f) => {
                let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
                let y = Array::from_vec(vec![1.0f32, 2.0]);
                f.call(&[x, y]).unwrap_err().to_string()
            }
            Err(e) => e.to_string(),
        }
    };
    let e = refused(
        "{ lambda ; a:f32[3] b:f32[2]. let c:f32[3] d:f32[2] = \
         sort[dimension=0 is_stable=True num_keys=1] a b in (c, d) }",
    );
    assert!(
        e.contains("TypeError")
            && e.contains("Arguments to sort must have equal shapes, got: (3,) (2,)"),
        "{e}"
    );
    let e = refused(
        "{ lambda ; a:f32[3] b:f32[2]. let c:f32[5] d:i32[5] = top_k[axis=0 k=5] a in (c, d) }",
    );
    assert!(
        e.contains("ValueError")
            && e.contains(
                "k argument to top_k must be no larger than size along axis; got k=5 with \
                 shape=[3] and axis=0"
            ),
        "{e}"
    );
    let e = refused(
        "{ lambda ; a:f32[3] b:f32[2]. let c:f32[1] d:i32[1] = top_k[axis=1 k=1] a in (c, d) }",
    );
    assert!(
        e.contains("axis argument out of range: axis=1 for operand.shape=(3,)"),
        "{e}"
    );
    let z = Array::from_vec(vec![num_complex::Complex::new(1.0f32, 0.0)]);
    let p = dtype_lattice_array::core::Params::new()
        .with("k", dtype_lattice_array::core::Param::Int(1))
        .with("axis", dtype_lattice_array::core::Param::Int(0));
    let e = dtype_lattice_array::core::bind(&dtype_lattice_array::lax::TOP_K, &[&z], &p)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ValueError") && e.contains("top_k is not compatible with complex inputs."),
        "{e}"
    );
}

/// `jnp.sort` and `jnp.argsort` (the library functions) give JAX's outputs on the fixture
/// programs that call them (the same inputs; axis, stability and direction from the name).
#[test]
fn jnp_sort_and_argsort_are_jaxs() {
    let mut checked = 0;
    for case in &cases_of("indexing/sort.json") {
        let name = case["name"].as_str().unwrap();
        let is_argsort = name.starts_with("argsort_");
        if !(is_argsort || name.starts_with("sort_"))
            || ["pairs", "two_keys"].iter().any(|s| name.contains(s))
        {
            continue;
        }
        let axis = if name.contains("axis0") {
            Some(0)
        } else if name.contains("axis1") {
            Some(1)
        } else {
            Some(-1)
        };
        let stable = !name.contains("unstable");
        let descending = name.contains("descending");
        let rules = Rules::jax().x64(case["x64"].as_bool().unwrap());
        with_rules(rules, || {
            let x = &arrays(&case["args"])[0];
            let got = if is_argsort {
                jnp::argsort(x, axis, stable, descending)
            } else {
                jnp::sort(x, axis, stable, descending)
            };
            let want = array(&case["jit"][0]);
            let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(got.dtype(), want.dtype(), "{name}");
            assert_eq!(got.shape(), want.shape(), "{name}");
            assert_eq!(got.as_bytes(), want.as_bytes(), "{name}");
            checked += 1;
        });
    }
    assert!(checked >= 30, "{checked}");
}
