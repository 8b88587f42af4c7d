//! `jax.numpy`'s functions on arrays: the result dtype and weak type are what the promotion
//! rules say for the op (one source of truth: `Rules::op_result`), shapes broadcast as NumPy's
//! do, and weak Python scalars keep the array's dtype.

use dtype_lattice::{DType, Op, Operand, Rules};
use dtype_lattice_array::Array;
use dtype_lattice_array::numpy as jnp;
use proptest::prelude::*;

/// Arrays of the dtypes with a Rust element type, one per dtype, holding 1 and 2.
fn sample(dtype: DType) -> Array {
    Array::from_vec(vec![1i64, 2]).astype(dtype).unwrap()
}

const NATIVE: [DType; 13] = [
    DType::Bool,
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::UInt8,
    DType::UInt16,
    DType::UInt32,
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Complex64,
    DType::Int64,
    DType::Float64,
];

#[test]
fn binary_results_follow_the_op_rules_for_every_pair() {
    for &a in &NATIVE {
        for &b in &NATIVE {
            type F = fn(&Array, &Array) -> Result<Array, dtype_lattice::Error>;
            let table: [(Op, F); 4] = [
                (Op::Add, |x, y| jnp::add(x, y)),
                (Op::Multiply, |x, y| jnp::multiply(x, y)),
                (Op::Less, |x, y| jnp::less(x, y)),
                (Op::Equal, |x, y| jnp::equal(x, y)),
            ];
            for (op, f) in table {
                let want = Rules::jax().op_result(op, &[Operand::array(a), Operand::array(b)]);
                let got = f(&sample(a), &sample(b));
                match (want, got) {
                    (Ok(w), Ok(g)) => {
                        assert_eq!(
                            (g.dtype(), g.weak_type()),
                            (w.dtype, w.weak_type),
                            "{op} {a} {b}"
                        );
                    }
                    (Err(w), Err(g)) => assert_eq!(w.exception(), g.exception(), "{op} {a} {b}"),
                    (w, g) => panic!("{op} {a} {b}: rules {w:?}, arrays {g:?}"),
                }
            }
        }
    }
}

#[test]
fn python_scalars_are_weak() {
    let x = sample(DType::BFloat16);
    assert_eq!(jnp::add(&x, 2.0).unwrap().dtype(), DType::BFloat16);
    assert_eq!(
        jnp::add(sample(DType::Int8), 3).unwrap().dtype(),
        DType::Int8
    );
    let w = jnp::add(2.0, 3.0).unwrap();
    assert_eq!(
        (w.dtype(), w.weak_type(), w.shape()),
        (DType::Float32, true, &[][..])
    );
    // A Python int out of int32 refuses as JAX does (x64 off).
    let e = jnp::add(sample(DType::Int8), 4_294_967_296i64).unwrap_err();
    assert_eq!(
        e.exception(),
        Some(dtype_lattice::error::Exception::OverflowError)
    );
}

#[test]
fn values_are_computed_after_promotion() {
    let x = Array::from_vec(vec![250u8, 3]);
    let y = Array::from_vec(vec![10i8, -4]);
    let z = jnp::add(&x, &y).unwrap(); // uint8 + int8 -> int16: no wrap at 255
    assert_eq!(
        (z.dtype(), z.to_vec::<i16>().unwrap()),
        (DType::Int16, vec![260, -1])
    );
    let b = jnp::less(&x, &y).unwrap();
    assert_eq!(b.to_vec::<bool>().unwrap(), [false, false]);
}

proptest! {
    /// Broadcasting: the result has NumPy's broadcast shape, and each element is the sum of the
    /// elements its index selects (a dimension of 1 stretches).
    #[test]
    fn broadcasting_selects_the_right_elements(a in 1usize..4, b in 1usize..4, stretch in any::<bool>()) {
        let xs: Vec<i32> = (0..(a * b) as i32).collect();
        let x = Array::from_shape_vec(&[a, b], xs.clone()).unwrap();
        let yb = if stretch { 1 } else { b };
        let ys: Vec<i32> = (0..yb as i32).map(|v| 100 * v).collect();
        let y = Array::from_shape_vec(&[yb], ys.clone()).unwrap();
        let z = jnp::add(&x, &y).unwrap();
        prop_assert_eq!(z.shape(), &[a, b][..]);
        let v = z.to_vec::<i32>().unwrap();
        for i in 0..a {
            for j in 0..b {
                prop_assert_eq!(v[i * b + j], xs[i * b + j] + ys[if stretch { 0 } else { j }]);
            }
        }
        // Shapes that do not broadcast are JAX's ValueError.
        if b > 1 {
            let bad = Array::from_vec(vec![0i32; b + 1]);
            let e = jnp::add(&x, &bad).unwrap_err();
            prop_assert_eq!(e.exception(), Some(dtype_lattice::error::Exception::ValueError));
        }
    }
}

/// sinh, cosh and tanh are XLA's under JAX's rules and the platform's libm (NumPy's loops)
/// under NumPy's, on an array long enough for the vectorised path and on one element. XLA's
/// sinh and cosh are `e^(x + log ½) ∓ e^(log ½ − x)` (sinh below 1: `(E + E/(E + 1))/2`,
/// `E = expm1(x)`), each step rounded in the argument's float type; its float32 tanh is
/// Eigen's rational function.
#[test]
fn hyperbolic_functions_follow_the_rules_in_force() {
    let half = -std::f32::consts::LN_2;
    let exp = |t: f32| f64::from(t).exp() as f32;
    let xla_sinh = |a: f32| {
        if a.abs() < 1.0 {
            let e = f64::from(a).exp_m1() as f32;
            0.5 * (e + e / (e + 1.0))
        } else {
            exp(a + half) - exp(half - a)
        }
    };
    let xla_cosh = |a: f32| exp(a + half) + exp(half - a);
    // Eigen's float32 tanh (XLA's CPU tanh), from the coefficients Eigen publishes: an odd
    // polynomial over an even one in x², each by Horner's rule in fused multiply-adds, the
    // argument clamped to ±7.998812, x itself below 4·10⁻⁴.
    let xla_tanh = |a: f32| {
        let alpha = [
            -2.760_768_477_423_55e-16_f64,
            2.000_187_904_824_77e-13,
            -8.604_671_522_137_35e-11,
            5.122_297_090_371_14e-8,
            1.485_722_357_179_79e-5,
            6.372_619_288_754_36e-4,
            4.893_524_558_917_86e-3,
        ]
        .map(|k| k as f32);
        let beta = [
            1.198_258_394_667_02e-6_f64,
            1.185_347_056_866_54e-4,
            2.268_434_632_439e-3,
            4.893_525_185_543_85e-3,
        ]
        .map(|k| k as f32);
        let c = a.clamp(-7.998_811_7, 7.998_811_7);
        let x2 = c * c;
        let horner = |cs: &[f32]| cs[1..].iter().fold(cs[0], |p, &k| x2.mul_add(p, k));
        if a.abs() < 4e-4 {
            a
        } else {
            c * horner(&alpha) / horner(&beta)
        }
    };
    /// The function, libm's, XLA's.
    type Row<'a> = (
        fn(&Array) -> Result<Array, dtype_lattice::Error>,
        fn(f64) -> f64,
        &'a dyn Fn(f32) -> f32,
    );
    let table: [Row; 3] = [
        (|x| jnp::sinh(x), f64::sinh, &xla_sinh),
        (|x| jnp::cosh(x), f64::cosh, &xla_cosh),
        (|x| jnp::tanh(x), f64::tanh, &xla_tanh),
    ];
    // Multiples of 0.0437 up to 87.4 in magnitude (no subnormal, no overflow).
    let xs: Vec<f32> = (0..4001).map(|i| (i - 2000) as f32 * 0.0437).collect();
    let mut differ = [0usize; 3];
    for (i, (f, libm, xla)) in table.into_iter().enumerate() {
        for x in [xs.clone(), vec![-56.0]] {
            let a = Array::from_vec(x.clone());
            let numpy = jnp::with_rules(Rules::numpy(), || f(&a)).unwrap();
            let jax = f(&a).unwrap();
            let (numpy, jax) = (numpy.to_vec::<f32>().unwrap(), jax.to_vec::<f32>().unwrap());
            for (k, &v) in x.iter().enumerate() {
                let lib = libm(f64::from(v)) as f32;
                assert_eq!(numpy[k].to_bits(), lib.to_bits(), "numpy {i} {v}");
                assert_eq!(jax[k].to_bits(), xla(v).to_bits(), "jax {i} {v}");
                differ[i] += usize::from(lib != xla(v));
            }
        }
    }
    // The two differ somewhere for each function (the rules do choose).
    assert!(differ.iter().all(|&d| d > 0), "{differ:?}");
}

/// `jnp.right_shift` picks the logical shift by NumPy's `np.issubdtype(dtype,
/// np.unsignedinteger)`, which ml_dtypes' uint2/uint4 fail: they shift arithmetically. Values
/// from `right_shift uint2[[3,3,2],[1,0,2]] uint2[[3,1,2],[2,3,2]]` and
/// `right_shift uint4[[4,11,12],[3,5,12]] uint4[[2,14,11],[0,11,6]]` of
/// tests/fixtures/eval/jax_x32_binary.json; uint8 keeps the logical shift.
#[test]
fn right_shift_of_ml_dtypes_unsigned_ints_is_arithmetic() {
    let shift = |d: DType, x: Vec<i64>, y: Vec<i64>| -> Vec<i64> {
        let (x, y) = (
            Array::from_vec(x).astype(d).unwrap(),
            Array::from_vec(y).astype(d).unwrap(),
        );
        let r = jnp::right_shift(&x, &y).unwrap();
        r.astype(DType::Int64).unwrap().to_vec::<i64>().unwrap()
    };
    assert_eq!(
        shift(DType::UInt2, vec![3, 3, 2, 1, 0, 2], vec![3, 1, 2, 2, 3, 2]),
        [3, 3, 3, 0, 0, 3]
    );
    assert_eq!(
        shift(
            DType::UInt4,
            vec![4, 11, 12, 3, 5, 12],
            vec![2, 14, 11, 0, 11, 6]
        ),
        [1, 15, 15, 3, 0, 15]
    );
    assert_eq!(shift(DType::UInt8, vec![200], vec![1]), [100]);
}

/// A Python float operand becomes a float32 jit argument on the host (NumPy's conversion,
/// which keeps subnormals; XLA's conversions flush them): `abs 1e-40` of
/// tests/fixtures/eval/jax_x32_unary.json is the float32 subnormal of bits 71362.
#[test]
fn python_floats_convert_on_the_host() {
    let r = jnp::abs(1e-40).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap()[0].to_bits(), 71362);
}

/// A bfloat16 compared with the constant zero is a test of its bits (LLVM's folding), so a
/// subnormal is true: `logical_and ~float32[100.0,0.0,-1.0]
/// bfloat16[1e-40,-1.72,1.1754943508222875e-38]` of tests/fixtures/eval/jax_x32_binary.json.
#[test]
fn bfloat16_truth_is_a_test_of_its_bits() {
    use half::bf16;
    let x = Array::from_vec(vec![100f32, 0.0, -1.0]).with_weak_type(true);
    let y = Array::from_vec(vec![
        bf16::from_f32(1e-40),
        bf16::from_f32(-1.72),
        bf16::from_f32(1.175_494_4e-38),
    ]);
    let r = jnp::logical_and(&x, &y).unwrap();
    assert_eq!(r.to_vec::<bool>().unwrap(), [true, false, true]);
}

/// The mean divides by a constant, which XLA rewrites: `A / 1` is `A`, so `mean float32[1e-40]`
/// of tests/fixtures/eval/jax_x32_probes.json keeps the subnormal (bits 71362).
#[test]
fn a_mean_of_one_element_is_that_element() {
    let x = Array::from_vec(vec![f32::from_bits(71362)]);
    let r = jnp::mean(&x, jnp::Axes::All, false).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap()[0].to_bits(), 71362);
}
