//! Rewrites of XLA's algebraic simplifier that change the values of `jax.numpy`'s functions.
//!
//! `jnp.multiply` and `jnp.true_divide` convert a boolean operand to the float dtype they
//! compute in (`convert_element_type`, in the jaxpr as in JAX); XLA then compiles a product
//! with such a conversion into a select, and a quotient of one by a broadcast operand into the
//! select of the broadcast reciprocal:
//!
//! - `convert(p) * a` ⇒ `select(p, a, 0)`: `False * inf` and `False * nan` are `+0`, and
//!   `True * a` is `a` itself, a subnormal kept (no arithmetic, so no flushing);
//! - `convert(p) / broadcast(b)` ⇒ `select(p, broadcast(1 / b), 0)`: `False / 0` is `+0`.
//!
//! XLA matches the conversion only as a direct operand: the boolean operand must have the
//! result's shape, neither broadcast nor given leading dimensions by jnp's rank promotion, but
//! for a reshape XLA moves past a broadcast single element (`bool[2] * float32[[x]]`). The
//! divisor must really be broadcast (fewer elements than the result: a single element
//! broadcast to one element is a reshape). Only the dtypes XLA multiplies and divides
//! natively are rewritten (float16, float32, float64 and complex): bfloat16 and the 8-bit
//! formats compute in float32 behind conversions, and integer products are the same either
//! way. (Measured on JAX 0.10.2's CPU backend; the eval fixtures' `true_divide bool[…] False`,
//! `multiply bool[…] float32[…]` and `multiply True 5e-324` show it.)
//!
//! These apply where the function is computed, not staged: a jaxpr keeps JAX's equations.

use dtype_lattice::{DType, Error, Op, Value};

use super::ufuncs::Ufunc;
use super::{ArrayLike, Family, promote_family};
use crate::array::{Array, ShapedArray};
use crate::lax::ops as lax;

/// How XLA rewrites one function's operation on a converted boolean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rewrite {
    /// `convert(p) * a`, either side: `select(p, a, 0)`.
    Product,
    /// `convert(p) / broadcast(b)`: `select(p, broadcast(1 / b), 0)`.
    QuotientByBroadcast,
}

/// The dtypes XLA's CPU backend multiplies and divides as themselves (the rewrite applies).
const NATIVE: &[DType] = &[
    DType::Float16,
    DType::Float32,
    DType::Float64,
    DType::Complex64,
    DType::Complex128,
];

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// The shape and the boolean-ness of an operand (a Python `bool` is a 0-d boolean).
fn bool_shape<'s>(x: &'s ArrayLike<'_>) -> Option<&'s [usize]> {
    match x {
        ArrayLike::Scalar(Value::Bool(_)) => Some(&[]),
        ArrayLike::Array(a) if a.dtype() == DType::Bool => Some(a.shape()),
        ArrayLike::Owned(a) if a.dtype() == DType::Bool => Some(a.shape()),
        _ => None,
    }
}

fn concrete(x: &ArrayLike<'_>) -> bool {
    match x {
        ArrayLike::Array(a) => a.is_concrete(),
        ArrayLike::Owned(a) => a.is_concrete(),
        ArrayLike::Scalar(_) => true,
        ArrayLike::Failed(_) => false,
    }
}

/// `jnp.multiply(x, y)` as XLA computes it when a boolean operand is converted: `convert(p) *
/// a` ⇒ `select(p, a, 0)` (see the module doc); `None` when XLA does not rewrite it (the row
/// then computes as its jaxpr says).
pub(crate) fn product_of_bool(
    _: &'static Ufunc,
    args: &[ArrayLike<'_>],
) -> Option<Result<Array, Error>> {
    let [x, y] = args else { return None };
    rewritten(Op::Multiply, Family::Any, Rewrite::Product, x, y)
}

/// `jnp.true_divide(x, y)` as XLA computes it for a boolean numerator and a broadcast
/// divisor: `convert(p) / broadcast(b)` ⇒ `select(p, broadcast(1 / b), 0)`; `None` otherwise.
pub(crate) fn quotient_of_bool(
    _: &'static Ufunc,
    args: &[ArrayLike<'_>],
) -> Option<Result<Array, Error>> {
    let [x, y] = args else { return None };
    rewritten(
        Op::TrueDivide,
        Family::Inexact,
        Rewrite::QuotientByBroadcast,
        x,
        y,
    )
}

/// `x op y` (promoted by `op` into `family`) as XLA computes it under `rewrite`, where it
/// applies to these operands (concrete, outside any transformation: a jaxpr keeps JAX's
/// equations).
fn rewritten(
    op: Op,
    family: Family,
    rewrite: Rewrite,
    x: &ArrayLike<'_>,
    y: &ArrayLike<'_>,
) -> Option<Result<Array, Error>> {
    if crate::core::current().is_some() || !concrete(x) || !concrete(y) {
        return None;
    }
    // The boolean operand and the other one (a product commutes; a quotient's boolean is
    // its numerator).
    let (p_shape, other_shape, p_first) = match (bool_shape(x), bool_shape(y)) {
        (Some(_), Some(_)) if rewrite == Rewrite::Product => return None,
        (Some(s), _) => (s.to_vec(), operand_shape(y), true),
        (None, Some(s)) if rewrite == Rewrite::Product => (s.to_vec(), operand_shape(x), false),
        _ => return None,
    };
    Some((|| {
        let args = promote_family(Some(op), family, &[x.clone(), y.clone()])?;
        let dtype = args[0].dtype();
        let out_shape = super::broadcast_shapes(&[args[0].shape(), args[1].shape()])?;
        let other = if p_first { &args[1] } else { &args[0] };
        let n = numel(&out_shape);
        let direct =
            p_shape == out_shape || numel(&p_shape) == n && numel(&other_shape) == 1 && n > 1;
        let applies = NATIVE.contains(&dtype)
            && direct
            && (rewrite == Rewrite::Product || numel(&other_shape) < n);
        if !applies {
            return match rewrite {
                Rewrite::Product => lax::mul(&args[0], &args[1]),
                Rewrite::QuotientByBroadcast => lax::div(&args[0], &args[1]),
            };
        }
        let weak = args[0].weak_type() && args[1].weak_type();
        let taken = match rewrite {
            Rewrite::Product => other.clone(),
            Rewrite::QuotientByBroadcast => {
                let one = crate::array::scalar_array(Value::Int(1), dtype, other.weak_type())?;
                lax::div(&one, other)?
            }
        };
        let taken = lax::broadcast_to(&taken, &out_shape)?;
        let zero = lax::broadcast_to(
            &crate::array::scalar_array(Value::Int(0), dtype, taken.weak_type())?,
            &out_shape,
        )?;
        // The boolean operand itself, given the result's leading dimensions of size 1 (it has
        // the result's elements).
        let pred = super::functions::arraylike(if p_first { x.clone() } else { y.clone() })?;
        let pred = lax::broadcast_to(&pred, &out_shape)?;
        let r = lax::select_n(&pred, &[&zero, &taken])?;
        Ok(Array::from_parts(
            ShapedArray::new(&out_shape, dtype, weak),
            r.storage().clone(),
        ))
    })())
}

fn operand_shape(x: &ArrayLike<'_>) -> Vec<usize> {
    match x {
        ArrayLike::Array(a) => a.shape().to_vec(),
        ArrayLike::Owned(a) => a.shape().to_vec(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numpy as jnp;
    use dtype_lattice::Rules;

    fn bits32(a: &Array) -> Vec<u32> {
        a.to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect()
    }

    /// `multiply bool[False,True,True] float32[-1e+40,0.0,0.001]` and `multiply True 5e-324`
    /// of tests/fixtures/eval/jax_x64_binary.json: `False * -inf` is `+0`, and `True * 5e-324`
    /// keeps the subnormal.
    #[test]
    fn products_with_a_converted_bool_select() {
        jnp::with_rules(Rules::jax().x64(true), || {
            let p = Array::from_vec(vec![false, true, true]);
            let a = Array::from_vec(vec![f32::NEG_INFINITY, 0.0, 0.001]);
            let r = jnp::multiply(&p, &a).unwrap();
            assert_eq!(bits32(&r), [0, 0, 0.001f32.to_bits()]);
            let r = jnp::multiply(true, 5e-324).unwrap();
            assert_eq!(r.to_vec::<f64>().unwrap()[0].to_bits(), 1);
            assert!(r.weak_type());
        });
    }

    /// `true_divide bool[[True,False,True],[True,False,True]] False` of
    /// tests/fixtures/eval/jax_x32_binary.json: `False / False` is `+0`, `True / False` inf.
    #[test]
    fn quotients_of_a_converted_bool_by_a_broadcast_select() {
        let p = Array::from_shape_vec(&[2, 3], vec![true, false, true, true, false, true]).unwrap();
        let r = jnp::true_divide(&p, false).unwrap();
        let inf = f32::INFINITY.to_bits();
        assert_eq!(bits32(&r), [inf, 0, inf, inf, 0, inf]);
    }

    /// Where XLA keeps the arithmetic (tests/fixtures/eval/jax_x32_probes.json): a
    /// broadcast boolean (`multiply bool[False] float32[inf,-1.0]`), a divisor of the
    /// result's size (`true_divide bool[[False,True]] float32[0.0,1.0]`), bfloat16 (computed
    /// in float32 behind conversions: `multiply bool[False,…] bfloat16[-1.0,inf,…]`).
    #[test]
    fn the_rewrite_needs_a_direct_conversion() {
        let p = Array::from_vec(vec![false]);
        let a = Array::from_vec(vec![f32::INFINITY, -1.0]);
        assert!(jnp::multiply(&p, &a).unwrap().to_vec::<f32>().unwrap()[0].is_nan());
        let p2 = Array::from_shape_vec(&[1, 2], vec![false, true]).unwrap();
        let z = Array::from_vec(vec![0f32, 1.0]);
        assert!(jnp::true_divide(&p2, &z).unwrap().to_vec::<f32>().unwrap()[0].is_nan());
        let p2 = Array::from_vec(vec![false, false]);
        let b = Array::from_vec(vec![-half::bf16::ONE, half::bf16::INFINITY]);
        let r = jnp::multiply(&p2, &b).unwrap();
        assert!(r.to_vec::<half::bf16>().unwrap()[1].is_nan());
    }
}
