//! Laws of the structural primitives, reductions and `dot_general` (proptest): transposing by
//! a permutation and then by its inverse is the identity; slicing an array in two along a
//! dimension and concatenating the halves gives it back; padding then slicing the padding off
//! gives it back; an integer sum over all axes does not depend on how the axes are split;
//! `dot_general`'s result shape is batch, then lhs free, then rhs free. And no parameters,
//! however wrong or extreme, make a primitive panic: it answers or refuses. `dynamic_slice`
//! and `dynamic_update_slice` are linear: their JVPs apply them to the tangents, and their
//! transposes are the JVPs' adjoints (`<ct, f(t)> = <f^T(ct), t>`), start indices clamped
//! alike.

use dtype_lattice_array::Array;
use dtype_lattice_array::core::{self, Param, Params};
use dtype_lattice_array::registry;
use proptest::prelude::*;

fn bind(name: &str, xs: &[&Array], p: Params) -> Array {
    core::bind(registry::by_name(name).unwrap(), xs, &p)
        .unwrap()
        .remove(0)
}

fn ints(v: &[usize]) -> Param {
    Param::Ints(v.iter().map(|&d| d as i64).collect())
}

fn arb_array() -> impl Strategy<Value = Array> {
    prop::collection::vec(0usize..4, 0..4).prop_flat_map(|shape| {
        let n: usize = shape.iter().product();
        prop::collection::vec(any::<i32>(), n)
            .prop_map(move |v| Array::from_shape_vec(&shape, v).unwrap())
    })
}

proptest! {
    #[test]
    fn transpose_then_inverse_is_identity(x in arb_array(), seed in any::<u64>()) {
        let n = x.ndim();
        let mut perm: Vec<usize> = (0..n).collect();
        let mut s = seed;
        for i in (1..n).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
            perm.swap(i, (s >> 33) as usize % (i + 1));
        }
        let mut inv = vec![0; n];
        for (i, &p) in perm.iter().enumerate() {
            inv[p] = i;
        }
        let y = bind("transpose", &[&x], Params::new().with("permutation", ints(&perm)));
        let z = bind("transpose", &[&y], Params::new().with("permutation", ints(&inv)));
        prop_assert_eq!(z.shape(), x.shape());
        prop_assert_eq!(z.to_vec::<i32>().unwrap(), x.to_vec::<i32>().unwrap());
    }

    #[test]
    fn slice_halves_concatenate_back(x in arb_array(), cut in 0usize..4) {
        prop_assume!(x.ndim() > 0);
        let d = 0;
        let cut = cut.min(x.shape()[d]);
        let limit = x.shape().to_vec();
        let zeros = vec![0; x.ndim()];
        let mut mid_hi = limit.clone();
        mid_hi[d] = cut;
        let mut mid_lo = zeros.clone();
        mid_lo[d] = cut;
        let slice = |lo: &[usize], hi: &[usize]| bind("slice", &[&x], Params::new()
            .with("limit_indices", ints(hi))
            .with("start_indices", ints(lo))
            .with("strides", Param::None));
        let (a, b) = (slice(&zeros, &mid_hi), slice(&mid_lo, &limit));
        let y = bind("concatenate", &[&a, &b], Params::new().with("dimension", Param::Int(d as i64)));
        prop_assert_eq!(y.shape(), x.shape());
        prop_assert_eq!(y.to_vec::<i32>().unwrap(), x.to_vec::<i32>().unwrap());
    }

    #[test]
    fn pad_then_slice_is_identity(x in arb_array(), lo in 0usize..3, hi in 0usize..3, v in any::<i32>()) {
        let cfg: Vec<(i64, i64, i64)> = (0..x.ndim()).map(|_| (lo as i64, hi as i64, 0)).collect();
        let y = bind("pad", &[&x, &Array::scalar(v)], Params::new().with("padding_config", Param::Padding(cfg)));
        let start = vec![lo; x.ndim()];
        let limit: Vec<usize> = x.shape().iter().map(|&d| d + lo).collect();
        let z = bind("slice", &[&y], Params::new()
            .with("limit_indices", ints(&limit))
            .with("start_indices", ints(&start))
            .with("strides", Param::None));
        prop_assert_eq!(z.to_vec::<i32>().unwrap(), x.to_vec::<i32>().unwrap());
    }

    #[test]
    fn integer_sums_do_not_depend_on_the_axis_order(x in arb_array()) {
        let all: Vec<usize> = (0..x.ndim()).collect();
        let total = bind("reduce_sum", &[&x], Params::new().with("axes", ints(&all)).with("out_sharding", Param::None));
        let mut y = x.clone();
        while y.ndim() > 0 {
            let last = y.ndim() - 1;
            y = bind("reduce_sum", &[&y], Params::new().with("axes", ints(&[last])).with("out_sharding", Param::None));
        }
        prop_assert_eq!(total.to_vec::<i32>().unwrap(), y.to_vec::<i32>().unwrap());
    }

    #[test]
    fn dot_general_shape_is_batch_then_free(b in 1usize..3, m in 1usize..4, k in 0usize..4, n in 1usize..4) {
        let l = Array::from_shape_vec(&[m, b, k], vec![1i32; m * b * k]).unwrap();
        let r = Array::from_shape_vec(&[k, n, b], vec![2i32; k * n * b]).unwrap();
        let p = Params::new()
            .with("dimension_numbers", Param::DotDimensionNumbers {
                lhs_contracting: vec![2], rhs_contracting: vec![0], lhs_batch: vec![1], rhs_batch: vec![2] })
            .with("out_sharding", Param::None)
            .with("precision", Param::None)
            .with("preferred_element_type", Param::None);
        let y = bind("dot_general", &[&l, &r], p);
        prop_assert_eq!(y.shape(), &[b, m, n]);
        prop_assert!(y.to_vec::<i32>().unwrap().iter().all(|&v| v == 2 * k as i32));
    }

    #[test]
    fn wrong_or_extreme_parameters_are_refused_not_panics(
        x in arb_array(),
        a in prop::collection::vec(arb_int(), 0..5),
        b in prop::collection::vec(arb_int(), 0..5),
        c in prop::collection::vec(arb_int(), 0..5),
        k in arb_int(),
        flag in any::<bool>(),
    ) {
        let one = |v: &[i64]| Param::Ints(v.to_vec());
        let ix = Array::scalar(k.clamp(i32::MIN.into(), i32::MAX.into()) as i32);
        let pad_cfg: Vec<(i64, i64, i64)> = a.iter().zip(&b).zip(&c).map(|((&l, &h), &i)| (l, h, i)).collect();
        let cases: Vec<(&str, Vec<&Array>, Params)> = vec![
            ("transpose", vec![&x], Params::new().with("permutation", one(&a))),
            ("squeeze", vec![&x], Params::new().with("dimensions", one(&a))),
            ("rev", vec![&x], Params::new().with("dimensions", one(&a))),
            ("slice", vec![&x], Params::new().with("limit_indices", one(&b)).with("start_indices", one(&a))
                .with("strides", if flag { one(&c) } else { Param::None })),
            ("dynamic_slice", vec![&x, &ix, &ix], Params::new().with("slice_sizes", one(&a))),
            ("dynamic_update_slice", vec![&x, &x, &ix], Params::new()),
            ("concatenate", vec![&x, &x], Params::new().with("dimension", Param::Int(k))),
            ("pad", vec![&x, &ix], Params::new().with("padding_config", Param::Padding(pad_cfg))),
            ("iota", vec![], Params::new().with("dimension", Param::Int(k)).with("dtype", Param::DType(dtype_lattice::DType::Int8))
                .with("shape", one(&a)).with("sharding", Param::None)),
            ("reduce_sum", vec![&x], Params::new().with("axes", one(&a)).with("out_sharding", Param::None)),
            ("reduce_or", vec![&x], Params::new().with("axes", one(&a))),
            ("argmax", vec![&x], Params::new().with("axes", one(&a)).with("index_dtype", Param::DType(dtype_lattice::DType::Int32))),
            ("cumsum", vec![&x], Params::new().with("axis", Param::Int(k)).with("reverse", Param::Bool(flag))),
            ("dot_general", vec![&x, &x], Params::new().with("dimension_numbers", Param::DotDimensionNumbers {
                lhs_contracting: a.clone(), rhs_contracting: b.clone(), lhs_batch: c.clone(), rhs_batch: c.clone() })
                .with("out_sharding", Param::None).with("precision", Param::None).with("preferred_element_type", Param::None)),
            // Wrong parameter kinds.
            ("transpose", vec![&x], Params::new().with("permutation", Param::Int(k))),
            ("pad", vec![&x, &ix], Params::new().with("padding_config", one(&a))),
            ("slice", vec![&x], Params::new()),
        ];
        // An empty array whose other dimensions multiply past usize.
        let z = Array::from_shape_vec(&[0, 1 << 40, 1 << 40], Vec::<i32>::new()).unwrap();
        let cases2: Vec<(&str, Vec<&Array>, Params)> = vec![
            ("transpose", vec![&z], Params::new().with("permutation", one(&a))),
            ("rev", vec![&z], Params::new().with("dimensions", one(&a))),
            ("reduce_max", vec![&z], Params::new().with("axes", one(&a))),
            ("cumsum", vec![&z], Params::new().with("axis", Param::Int(k)).with("reverse", Param::Bool(flag))),
            ("concatenate", vec![&z, &z], Params::new().with("dimension", Param::Int(k))),
            ("dot_general", vec![&z, &z], Params::new().with("dimension_numbers", Param::DotDimensionNumbers {
                lhs_contracting: a.clone(), rhs_contracting: b.clone(), lhs_batch: c.clone(), rhs_batch: c.clone() })
                .with("out_sharding", Param::None).with("precision", Param::None).with("preferred_element_type", Param::None)),
        ];
        for (name, inputs, params) in cases.into_iter().chain(cases2) {
            let _ = core::bind(registry::by_name(name).unwrap(), &inputs, &params);
        }
    }
}

/// Small integers mostly, extremes sometimes.
fn arb_int() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => -3i64..6,
        1 => Just(i64::MIN),
        1 => Just(i64::MAX),
        1 => Just(1i64 << 40),
    ]
}

/// `sum(a * b)` over every element, in float64.
fn inner(a: &Array, b: &Array) -> f64 {
    let (a, b) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
    a.iter()
        .zip(&b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

#[test]
fn dynamic_slice_and_update_are_linear_with_adjoint_transposes() {
    use dtype_lattice_array::{jvp, vjp};
    let grid = |shape: &[usize], f: fn(f32) -> f32| {
        let n: usize = shape.iter().product();
        Array::from_shape_vec(shape, (0..n).map(|i| f(i as f32)).collect()).unwrap()
    };
    let x = grid(&[4, 3], |i| i - 5.0);
    let tx = grid(&[4, 3], |i| (i * 7.0) % 5.0 - 2.0);
    let u = grid(&[2, 3], |i| 10.0 + i);
    let tu = grid(&[2, 3], |i| 3.0 - i);
    let ct_slice = grid(&[2, 3], |i| i * 0.5 - 1.0);
    let ct_update = grid(&[4, 3], |i| 2.0 - i * 0.25);
    // In range, and past the end (clamped to the last start that fits).
    for start in [1i32, 3, -2] {
        let (i, j) = (Array::scalar(start), Array::scalar(0i32));
        let ds = |x: Array| {
            let p = Params::new().with("slice_sizes", ints(&[2, 3]));
            Ok(bind("dynamic_slice", &[&x, &i, &j], p))
        };
        let dus = |(x, u): (Array, Array)| {
            Ok(bind(
                "dynamic_update_slice",
                &[&x, &u, &i, &j],
                Params::new(),
            ))
        };
        let (_, t) = jvp(ds, &x, &tx).unwrap();
        assert_eq!(
            t.to_vec::<f32>().unwrap(),
            ds(tx.clone()).unwrap().to_vec::<f32>().unwrap()
        );
        let (_, pullback) = vjp(ds, &x).unwrap();
        let back = pullback(&ct_slice).unwrap();
        assert_eq!(
            inner(&ct_slice, &t),
            inner(&back, &tx),
            "dynamic_slice at {start}"
        );

        let (_, t) = jvp(dus, &(x.clone(), u.clone()), &(tx.clone(), tu.clone())).unwrap();
        let want = dus((tx.clone(), tu.clone())).unwrap();
        assert_eq!(t.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
        let (_, pullback) = vjp(dus, &(x.clone(), u.clone())).unwrap();
        let (bx, bu) = pullback(&ct_update).unwrap();
        assert_eq!(
            inner(&ct_update, &t),
            inner(&bx, &tx) + inner(&bu, &tu),
            "dynamic_update_slice at {start}"
        );
    }
}
