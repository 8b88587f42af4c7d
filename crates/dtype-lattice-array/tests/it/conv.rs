//! `conv_general_dilated` against JAX 0.10.2 (tests/fixtures/indexing/conv.json, from
//! tools/gen_conv_fixtures.py): every dimension-numbers layout (1-D, 2-D, 3-D, NCHW, NHWC,
//! scrambled), strides, SAME/VALID and explicit padding (negative too), lhs and rhs
//! dilation, feature and batch groups, `preferred_element_type`, float, int, bool and
//! complex dtypes, `lax.conv`, `lax.conv_transpose`, `lax.conv_with_general_padding`, and
//! gradients in the input and in the kernel. Each program's printed jaxpr reads, prints back
//! to the same text, and computes what JAX's `jit` computes, evaluated and under `jit`
//! (integers and bools bit for bit; floats within the corpus's rule, [`close`]: XLA's CPU
//! convolutions sum in Eigen's order, not reproduced); its gradient what JAX's does, both
//! through our transpose rules and by reading JAX's own gradient jaxpr; its JVP is the
//! program on the tangent (a convolution is linear in each operand); `vmap` is stacking.

use dtype_lattice::{DType, Kind, Rules};
use dtype_lattice_array::config::with_rules;
use dtype_lattice_array::core::{self, ClosedJaxpr, Param, Params};
use dtype_lattice_array::numpy as jnp;
use dtype_lattice_array::{Array, grad, jit, jvp, lax, vmap};
use serde_json::Value;

use crate::common::fixture_path;
use crate::jaxpr_reader::{arrays, close};

const FIXTURES: &str = "indexing/conv.json";

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(fixture_path(FIXTURES)).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn is_inexact(d: DType) -> bool {
    matches!(d.kind(), Kind::Float | Kind::Complex)
}

/// Whether `got` is `want`: dtype, shape, and every bit (floats: within [`close`]).
fn same(got: &Array, want: &Array) -> bool {
    got.dtype() == want.dtype()
        && got.shape() == want.shape()
        && (got.as_bytes() == want.as_bytes() || (is_inexact(got.dtype()) && close(got, want)))
}

/// `got`'s outputs against JAX's leaves (floats within [`close`]).
fn differs(
    what: &str,
    got: Result<Vec<Array>, dtype_lattice::Error>,
    want: &Value,
) -> Option<String> {
    crate::gather::differs_unless(what, got, want, |g, w| is_inexact(g.dtype()) && close(g, w))
}

#[test]
fn convolutions_compute_what_jax_computes() {
    let all = cases();
    assert!(all.len() >= 70, "{} cases", all.len());
    let mut failures = Vec::new();
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
            let eager = case.get("eager").unwrap_or(want);
            failures.extend(differs(&format!("{name} eval"), f.call(&args), eager));
            let jitted = jit(|a: Vec<Array>| f.call(&a)).call(&args);
            // (The weighted sums of the `grad_` programs: XLA fuses the product into the
            // sum under jit and reorders its reduction, a change of a few ulps of the terms
            // (not of the sum): their value is also accepted as JAX computes it equation by
            // equation.)
            let jit_differs = differs(&format!("{name} jit"), jitted.clone(), want);
            if name.starts_with("grad_") && jit_differs.is_some() {
                failures.extend(differs(&format!("{name} jit"), jitted, eager));
            } else {
                failures.extend(jit_differs);
            }
            let Some(want) = case.get("grad") else {
                return;
            };
            // The gradient in the first input through the transpose rules, under jit.
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
            // JAX's own gradient program: its transposed convolutions read, print back and
            // compute the same.
            let text = case["grad_text"].as_str().unwrap();
            let g: ClosedJaxpr = text.parse().unwrap_or_else(|e| panic!("{name} grad: {e}"));
            assert_eq!(g.to_string(), text, "{name} grad prints back");
            let g = g.with_consts(arrays(&case["consts"])).unwrap();
            failures.extend(differs(&format!("{name} grad_text"), g.call(&args), want));
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A float array of `x`'s shape and dtype holding small values (a tangent).
fn tangent(x: &Array, seed: usize) -> Array {
    let n = x.size();
    let v: Vec<f64> = (0..n)
        .map(|i| ((i * 7 + seed * 3) % 13) as f64 / 4.0 - 1.5)
        .collect();
    Array::from_shape_vec(x.shape(), v)
        .unwrap()
        .astype(x.dtype())
        .unwrap()
}

/// The JVP of every float convolution program in either operand is the program on the
/// tangent (linear in each), and the primal is the program's value.
#[test]
fn jvps_are_the_convolution_of_the_tangent() {
    let mut checked = 0;
    for case in &cases() {
        let name = case["name"].as_str().unwrap();
        if name.starts_with("grad_") {
            continue;
        }
        let rules = Rules::jax().x64(case["x64"].as_bool().unwrap());
        with_rules(rules, || {
            let f: ClosedJaxpr = case["text"].as_str().unwrap().parse().unwrap();
            let f = f.with_consts(arrays(&case["consts"])).unwrap();
            let args = arrays(&case["args"]);
            if !matches!(args[0].dtype(), DType::Float32 | DType::Float64)
                || args.iter().any(|a| a.size() == 0)
            {
                return;
            }
            for k in 0..2 {
                let t = tangent(&args[k], k);
                let g = |x: Array| {
                    let mut a = args.clone();
                    a[k] = x;
                    Ok(f.call(&a)?.remove(0))
                };
                let (y, ty): (Array, Array) = jvp(g, &args[k], &t).unwrap();
                let mut on_t = args.clone();
                on_t[k] = t.clone();
                let plain = f.call(&on_t).unwrap().remove(0);
                let value = f.call(&args).unwrap().remove(0);
                assert_eq!(y.as_bytes(), value.as_bytes(), "{name} primal");
                assert!(same(&ty, &plain), "{name} jvp in {k}: {ty}, want {plain}");
                checked += 1;
            }
        });
    }
    assert!(checked >= 60, "{checked}");
}

/// `vmap` of every program is its examples stacked (integers bit for bit, floats within
/// [`close`]: the batched convolution folds the batch into the operand's batch, features or
/// groups, which may change the order of a sum): batched in the input only, in the kernel
/// only, and in both, at the front and (moved by the batching trace) elsewhere.
#[test]
fn vmap_of_convolutions_is_stacking_the_examples() {
    let mut checked = 0;
    for case in &cases() {
        let name = case["name"].as_str().unwrap();
        let rules = Rules::jax().x64(case["x64"].as_bool().unwrap());
        with_rules(rules, || {
            let f: ClosedJaxpr = case["text"].as_str().unwrap().parse().unwrap();
            let f = f.with_consts(arrays(&case["consts"])).unwrap();
            let args = arrays(&case["args"]);
            let other: Vec<Array> = args.iter().map(crate::gather::rotated).collect();
            let call = |a: &[Array]| f.call(a).unwrap().remove(0);
            for (which, axis) in [(vec![0], 0), (vec![1], 0), (vec![0, 1], 0), (vec![0, 1], 1)] {
                if which.iter().any(|&k| args[k].ndim() < axis) {
                    continue;
                }
                let second: Vec<Array> = (0..args.len())
                    .map(|k| {
                        if which.contains(&k) {
                            other[k].clone()
                        } else {
                            args[k].clone()
                        }
                    })
                    .collect();
                let stacked = |a: &Array, b: &Array, ax: usize| {
                    jnp::stack(&[a.into(), b.into()], ax as isize).unwrap()
                };
                let want = stacked(&call(&args), &call(&second), 0);
                let batched: Vec<Array> = which
                    .iter()
                    .map(|&k| stacked(&args[k], &second[k], axis))
                    .collect();
                let got: Array = vmap(|b: Vec<Array>| {
                    let mut a = args.clone();
                    for (&k, x) in which.iter().zip(b) {
                        a[k] = x;
                    }
                    Ok(f.call(&a)?.remove(0))
                })
                .in_axes(vec![Some(axis); which.len()])
                .call(&batched)
                .unwrap_or_else(|e| panic!("{name} {which:?}: {e}"));
                assert!(
                    same(&got, &want),
                    "{name} {which:?} axis {axis}: {got}, want {want}"
                );
                checked += 1;
            }
        });
    }
    assert!(checked >= 280, "{checked}");
}

/// A `conv_general_dilated` equation of `lhs` and `rhs` (jaxpr types) with these parameters
/// (JAX's text), read and called on zeros; the refusal, as text.
fn refused(lhs: &str, rhs: &str, out: &str, params: &str) -> String {
    let text = format!(
        "{{ lambda ; a:{lhs} b:{rhs}. let c:{out} = conv_general_dilated[{params}] a b in (c,) }}"
    );
    let f: ClosedJaxpr = match text.parse() {
        Ok(f) => f,
        Err(e) => return e.to_string(),
    };
    let zeros = |t: &str| {
        let (dt, dims) = t.split_once('[').unwrap();
        let shape: Vec<usize> = dims
            .trim_end_matches(']')
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        let dt: DType = match dt {
            "f32" => DType::Float32,
            "i32" => DType::Int32,
            other => panic!("{other}"),
        };
        Array::from_shape_vec(&shape, vec![0.0f64; shape.iter().product()])
            .unwrap()
            .astype(dt)
            .unwrap()
    };
    match f.call(&[zeros(lhs), zeros(rhs)]) {
        Ok(_) => "no error".into(),
        Err(e) => e.to_string(),
    }
}

fn params(groups: (i64, i64), padding: &str, strides: &str, dilation: &str) -> String {
    format!(
        "batch_group_count={} dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), \
         rhs_spec=(0, 1, 2), out_spec=(0, 1, 2)) feature_group_count={} lhs_dilation={dilation} \
         out_sharding=None padding={padding} precision=None preferred_element_type=None \
         rhs_dilation=(1,) window_strides={strides}",
        groups.1, groups.0
    )
}

/// JAX's refusals of bad shapes and parameters, with its classes and messages (the reader
/// checks each equation's types as JAX does, so most come from the text), and XLA's of a
/// stride it cannot compile.
#[test]
fn bad_convolutions_raise_jax_errors() {
    let ok = params((1, 1), "((0, 0),)", "(1,)", "(1,)");
    let e = refused("f32[2,3,5]", "f32[4,2,2]", "f32[2,4,4]", &ok);
    assert!(
        e.contains("ValueError")
            && e.contains(
                "conv_general_dilated lhs feature dimension size divided by feature_group_count \
                 must equal the rhs input feature dimension size, but 3 // 1 != 2."
            ),
        "{e}"
    );
    let e = refused(
        "f32[2,3,5]",
        "f32[4,1,2]",
        "f32[2,4,4]",
        &params((2, 1), "((0, 0),)", "(1,)", "(1,)"),
    );
    assert!(
        e.contains("ValueError")
            && e.contains(
                "conv_general_dilated feature_group_count must divide lhs feature dimension \
                 size, but 2 does not divide 3."
            ),
        "{e}"
    );
    let e = refused(
        "f32[2,3,5]",
        "f32[4,3,2]",
        "f32[2,4,4]",
        &params((1, 3), "((0, 0),)", "(1,)", "(1,)"),
    );
    assert!(
        e.contains(
            "conv_general_dilated batch_group_count must divide lhs batch dimension size, but 3 \
             does not divide 2."
        ),
        "{e}"
    );
    let e = refused(
        "f32[2,3,5]",
        "f32[4,3,2]",
        "f32[2,4,4]",
        &params((1, 1), "((-6, 0),)", "(1,)", "(1,)"),
    );
    assert!(
        e.contains("ValueError")
            && e.contains(
                "Negative padding is larger than the size of the corresponding dimension: got \
                 padding=((-6, 0),) for lhs_shape[2:]=(np.int64(5),)"
            ),
        "{e}"
    );
    let e = refused(
        "f32[2,3,5]",
        "f32[4,3,2]",
        "f32[2,4,4]",
        &params((1, 1), "((0, 0),)", "(1,)", "(0,)"),
    );
    assert!(
        e.contains("TypeError") && e.contains("All dilations must be positive, got (0,)."),
        "{e}"
    );
    let e = refused(
        "f32[2,3,5]",
        "f32[4,3,2]",
        "f32[2,4,4]",
        &params((1, 1), "((0, 0),)", "(1, 1)", "(1,)"),
    );
    assert!(
        e.contains(
            "conv_general_dilated window and window_strides must have the same number of \
             dimensions, but got 1 and 2"
        ),
        "{e}"
    );
    let e = refused("f32[2,3,5]", "f32[4,3]", "f32[2,4,4]", &ok);
    assert!(
        e.contains(
            "conv_general_dilated lhs and rhs must have the same number of dimensions, but got \
             (2, 3, 5) and (4, 3)."
        ),
        "{e}"
    );
    let e = refused("i32[2,3,5]", "f32[4,3,2]", "f32[2,4,4]", &ok);
    assert!(
        e.contains("TypeError")
            && e.contains(
                "lax.conv_general_dilated requires arguments to have the same dtypes, got \
                 int32, float32."
            ),
        "{e}"
    );
    // JAX traces a zero stride; XLA refuses to compile it.
    let e = refused(
        "f32[2,3,5]",
        "f32[4,3,2]",
        "f32[2,4,1]",
        &params((1, 1), "((0, 0),)", "(0,)", "(1,)"),
    );
    assert!(
        e.contains("expects window to have positive stride for 0-th window dimension, but got 0."),
        "{e}"
    );
    // Bound directly: `preferred_element_type` narrower, or of another signedness.
    let x = Array::from_shape_vec(&[1, 1, 2], vec![1i32, 2]).unwrap();
    let p = |pet: DType| {
        Params::new()
            .with("batch_group_count", Param::Int(1))
            .with(
                "dimension_numbers",
                Param::ConvDimensionNumbers {
                    lhs_spec: vec![0, 1, 2],
                    rhs_spec: vec![0, 1, 2],
                    out_spec: vec![0, 1, 2],
                },
            )
            .with("feature_group_count", Param::Int(1))
            .with("lhs_dilation", Param::Ints(vec![1]))
            .with("out_sharding", Param::None)
            .with("padding", Param::Pairs(vec![(0, 0)]))
            .with("precision", Param::None)
            .with("preferred_element_type", Param::DType(pet))
            .with("rhs_dilation", Param::Ints(vec![1]))
            .with("window_strides", Param::Ints(vec![1]))
    };
    let e = core::bind(&lax::CONV_GENERAL_DILATED, &[&x, &x], &p(DType::UInt32)).unwrap_err();
    assert!(
        e.to_string().contains(
            "`preferred_element_type` must have the same signedness as the original type."
        ),
        "{e}"
    );
    let e = core::bind(&lax::CONV_GENERAL_DILATED, &[&x, &x], &p(DType::Int16)).unwrap_err();
    assert!(
        e.to_string()
            .contains("`preferred_element_type` must not be narrower than the original type."),
        "{e}"
    );
    let y = core::bind(&lax::CONV_GENERAL_DILATED, &[&x, &x], &p(DType::Int64)).unwrap();
    assert_eq!(y[0].dtype(), DType::Int64);
    assert_eq!(y[0].to_vec::<i64>().unwrap(), [5]);
}

/// `vmap` over no examples (JAX's special case: zeros of the examples' result shape), in
/// the input, the kernel or both.
#[test]
fn vmap_of_no_examples_is_empty() {
    let case = cases()
        .into_iter()
        .find(|c| c["name"] == "feature_groups")
        .unwrap();
    let f: ClosedJaxpr = case["text"].as_str().unwrap().parse().unwrap();
    let args = arrays(&case["args"]);
    let want = f.call(&args).unwrap().remove(0);
    let none = |x: &Array| {
        let shape: Vec<usize> = std::iter::once(0)
            .chain(x.shape().iter().copied())
            .collect();
        Array::from_bytes(x.dtype(), &shape, &[]).unwrap()
    };
    for which in [vec![0], vec![1], vec![0, 1]] {
        let batched: Vec<Array> = which.iter().map(|&k| none(&args[k])).collect();
        let got: Array = vmap(|b: Vec<Array>| {
            let mut a = args.clone();
            for (&k, x) in which.iter().zip(b) {
                a[k] = x;
            }
            Ok(f.call(&a)?.remove(0))
        })
        .call(&batched)
        .unwrap();
        let shape: Vec<usize> = std::iter::once(0)
            .chain(want.shape().iter().copied())
            .collect();
        assert_eq!(got.shape(), shape.as_slice(), "{which:?}");
        assert_eq!(got.dtype(), want.dtype());
    }
}
