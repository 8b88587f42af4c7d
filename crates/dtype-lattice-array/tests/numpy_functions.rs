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
