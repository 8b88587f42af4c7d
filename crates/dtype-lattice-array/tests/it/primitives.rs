//! The primitive table: every primitive is reachable by name, its shape rule answers what its
//! implementation produces, and the elementwise kernels follow `jax.lax`'s rules (one dtype,
//! one shape, weak only when every operand is; integers wrap; NaN propagates through max).

use dtype_lattice::DType;
use dtype_lattice::error::Exception;
use dtype_lattice_array::core::{self, Param, Params};
use dtype_lattice_array::registry;
use dtype_lattice_array::{Array, ShapedArray};
use proptest::prelude::*;

fn bind1(name: &str, inputs: &[&Array], params: &Params) -> Result<Array, dtype_lattice::Error> {
    core::bind(registry::by_name(name).unwrap(), inputs, params).map(|mut v| v.remove(0))
}

#[test]
fn every_primitive_is_found_by_its_name() {
    for p in registry::PRIMITIVES {
        assert!(std::ptr::eq(registry::by_name(p.name).unwrap(), *p));
    }
}

#[test]
fn integers_wrap_and_comparisons_give_bool() {
    let x = Array::from_vec(vec![i8::MAX, -3, 0]);
    let y = Array::from_vec(vec![1i8, 5, 0]);
    assert_eq!(
        bind1("add", &[&x, &y], &Params::new())
            .unwrap()
            .to_vec::<i8>()
            .unwrap(),
        [i8::MIN, 2, 0]
    );
    assert_eq!(
        bind1("mul", &[&x, &y], &Params::new())
            .unwrap()
            .to_vec::<i8>()
            .unwrap(),
        [i8::MAX, -15, 0]
    );
    let lt = bind1("lt", &[&x, &y], &Params::new()).unwrap();
    assert_eq!(
        (lt.dtype(), lt.to_vec::<bool>().unwrap()),
        (DType::Bool, vec![false, true, false])
    );
    assert_eq!(
        bind1("neg", &[&y], &Params::new())
            .unwrap()
            .to_vec::<i8>()
            .unwrap(),
        [-1, -5, 0]
    );
}

#[test]
fn max_propagates_nan_and_half_precision_rounds_once() {
    let x = Array::from_vec(vec![f32::NAN, 1.0, -0.0]);
    let y = Array::from_vec(vec![2.0f32, f32::NAN, 0.0]);
    let m = bind1("max", &[&x, &y], &Params::new())
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert!(m[0].is_nan() && m[1].is_nan());
    let a = Array::from_vec(vec![half::bf16::from_f32(1.0)]);
    let b = Array::from_vec(vec![half::bf16::from_f32(0.00390625)]); // 2^-8: a tie below 1's ulp
    let s = bind1("add", &[&a, &b], &Params::new())
        .unwrap()
        .to_vec::<half::bf16>()
        .unwrap();
    assert_eq!(s[0].to_f32(), 1.0); // ties to even
}

#[test]
fn lax_refuses_mixed_dtypes_and_shapes_with_its_messages() {
    let x = Array::from_vec(vec![1i32]);
    let y = Array::from_vec(vec![1.0f32]);
    let e = bind1("add", &[&x, &y], &Params::new()).unwrap_err();
    assert_eq!(e.exception(), Some(Exception::TypeError));
    assert_eq!(
        e.message(),
        "lax.add requires arguments to have the same dtypes, got int32, float32. (Tip: jnp.add \
         is a similar function that does automatic type promotion on inputs)."
    );
    // Size-1 dimensions broadcast (lax's implicit broadcasting); other sizes do not.
    let z = Array::from_vec(vec![1i32, 2]);
    assert_eq!(
        bind1("add", &[&x, &z], &Params::new()).unwrap().shape(),
        &[2]
    );
    let w = Array::from_vec(vec![1i32, 2, 3]);
    let e = bind1("add", &[&w, &z], &Params::new()).unwrap_err();
    assert_eq!(
        e.message(),
        "add got incompatible shapes for broadcasting: (3,), (2,)."
    );
    let e = bind1("add", &[&x], &Params::new()).unwrap_err();
    assert_eq!(e.exception(), Some(Exception::TypeError));
}

#[test]
fn weak_results_need_every_operand_weak() {
    let x = Array::scalar(2.0f32).with_weak_type(true);
    let y = Array::scalar(3.0f32);
    assert!(bind1("add", &[&x, &x], &Params::new()).unwrap().weak_type());
    assert!(!bind1("add", &[&x, &y], &Params::new()).unwrap().weak_type());
    // Comparisons too: bool, weak when every operand is (JAX 0.10, tests/it/lax_elementwise.rs).
    assert!(bind1("lt", &[&x, &x], &Params::new()).unwrap().weak_type());
    assert!(!bind1("lt", &[&x, &y], &Params::new()).unwrap().weak_type());
}

proptest! {
    /// The shape rule predicts exactly what the implementation makes.
    #[test]
    fn shape_rules_predict_the_outputs(v in prop::collection::vec(any::<i32>(), 0..24), rows in 1usize..4) {
        let n = v.len() / rows * rows;
        let x = Array::from_shape_vec(&[rows, n / rows], v[..n].to_vec()).unwrap();
        for p in registry::PRIMITIVES {
            // The PRNG primitives take key arrays and required parameters: their shape rules
            // are checked in tests/random_arrays*.rs.
            if p.name.starts_with("random_") {
                continue;
            }
            // Operands other than `x` (a padding value, start indices): checked by
            // lax_structural_conformance.
            if matches!(p.name, "pad" | "dynamic_slice" | "dynamic_update_slice") {
                continue;
            }
            let ints = |v: &[usize]| Param::Ints(v.iter().map(|&d| d as i64).collect());
            let params = match p.name {
                "broadcast_in_dim" => Params::new()
                    .with("shape", Param::Ints(vec![2, rows as i64, (n / rows) as i64]))
                    .with("broadcast_dimensions", Param::Ints(vec![1, 2])),
                "reshape" => Params::new().with("new_sizes", Param::Ints(vec![n as i64])),
                "convert_element_type" => Params::new()
                    .with("new_dtype", Param::DType(DType::BFloat16))
                    .with("weak_type", Param::Bool(false)),
                "transpose" => Params::new().with("permutation", ints(&[1, 0])),
                "squeeze" | "rev" => Params::new().with("dimensions", ints(&[])),
                "slice" => Params::new()
                    .with("limit_indices", ints(&[rows, n / rows]))
                    .with("start_indices", ints(&[0, 0]))
                    .with("strides", Param::None),
                "concatenate" => Params::new().with("dimension", Param::Int(1)),
                "iota" => Params::new()
                    .with("dimension", Param::Int(0))
                    .with("dtype", Param::DType(DType::Int32))
                    .with("shape", ints(&[rows, n / rows]))
                    .with("sharding", Param::None),
                "reduce_sum" => Params::new().with("axes", ints(&[1])).with("out_sharding", Param::None),
                "reduce_prod" | "reduce_max" | "reduce_min" | "reduce_and" | "reduce_or" => {
                    Params::new().with("axes", ints(&[1]))
                }
                "argmax" | "argmin" => Params::new()
                    .with("axes", ints(&[0]))
                    .with("index_dtype", Param::DType(DType::Int32)),
                "cumsum" | "cumprod" | "cummax" | "cummin" => {
                    Params::new().with("axis", Param::Int(1)).with("reverse", Param::Bool(true))
                }
                "dot_general" => Params::new()
                    .with("dimension_numbers", Param::DotDimensionNumbers {
                        lhs_contracting: vec![1],
                        rhs_contracting: vec![1],
                        lhs_batch: vec![],
                        rhs_batch: vec![],
                    })
                    .with("out_sharding", Param::None)
                    .with("precision", Param::None)
                    .with("preferred_element_type", Param::None),
                _ => Params::new(),
            };
            let inputs: Vec<&Array> = vec![&x; p.arity.unwrap_or(1)];
            let avals: Vec<&ShapedArray> = inputs.iter().map(|a| a.aval()).collect();
            // Primitives that refuse int32 (or need other parameters) are skipped.
            let Ok(want) = p.abstract_eval(&avals, &params) else { continue };
            let got = core::bind(p, &inputs, &params).unwrap();
            prop_assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                prop_assert_eq!(g.aval(), w, "{}", p.name);
                prop_assert_eq!(g.as_bytes().len(), w.size() * dtype_lattice_array::array::layout(w.dtype()).0, "{}", p.name);
            }
        }
    }
}
