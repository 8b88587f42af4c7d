//! `jax.lax`-level helpers for the transformation rules: each binds one primitive (so that a
//! rule applied under a trace is traced in turn), operands of one dtype.

use dtype_lattice::{DType, Error};

use super::elementwise::{self as ew};
use super::{Param, Params, Primitive, bind1};
use crate::array::Array;

fn un(p: &'static Primitive, x: &Array) -> Result<Array, Error> {
    bind1(p, &[x], &Params::new())
}

fn bin(p: &'static Primitive, x: &Array, y: &Array) -> Result<Array, Error> {
    bind1(p, &[x, y], &Params::new())
}

/// `x + y`.
pub(crate) fn add(x: &Array, y: &Array) -> Result<Array, Error> {
    bin(&ew::ADD, x, y)
}
/// `x + y` accumulating cotangents (JAX's `add_any`).
pub(crate) fn add_any(x: &Array, y: &Array) -> Result<Array, Error> {
    bin(&ew::ADD_ANY, x, y)
}
/// `x - y`.
pub(crate) fn sub(x: &Array, y: &Array) -> Result<Array, Error> {
    bin(&ew::SUB, x, y)
}
/// `x * y`.
pub(crate) fn mul(x: &Array, y: &Array) -> Result<Array, Error> {
    bin(&ew::MUL, x, y)
}
/// `x / y`.
pub(crate) fn div(x: &Array, y: &Array) -> Result<Array, Error> {
    bin(&ew::DIV, x, y)
}
/// `-x`.
pub(crate) fn neg(x: &Array) -> Result<Array, Error> {
    un(&ew::NEG, x)
}
/// `x == y`.
pub(crate) fn eq(x: &Array, y: &Array) -> Result<Array, Error> {
    bin(&ew::EQ, x, y)
}
/// A unary primitive of no parameters (`cos`, `sign`, `log`).
pub(crate) fn unary(p: &'static Primitive, x: &Array) -> Result<Array, Error> {
    un(p, x)
}
/// `x ** n` for an integer `n`.
pub(crate) fn integer_pow(x: &Array, n: i64) -> Result<Array, Error> {
    bind1(
        &ew::INTEGER_POW,
        &[x],
        &Params::new().with("y", Param::Int(n)),
    )
}
/// A scalar constant of `x`'s dtype (JAX's `_const(x, v)`), strongly typed.
pub(crate) fn konst(x: &Array, v: f64) -> Result<Array, Error> {
    crate::array::scalar(v, x.dtype())
}
/// `select_n(which, cases...)`.
pub(crate) fn select_n(which: &Array, cases: &[&Array]) -> Result<Array, Error> {
    let mut inputs = vec![which];
    inputs.extend_from_slice(cases);
    bind1(&super::select::SELECT_N, &inputs, &Params::new())
}
/// `x` converted to `y`'s dtype and weak type.
pub(crate) fn convert_like(x: &Array, y: &Array) -> Result<Array, Error> {
    convert(x, y.dtype(), y.weak_type())
}
/// `x` converted to `dtype` (weakly typed or not); nothing staged when it already is.
pub(crate) fn convert(x: &Array, dtype: DType, weak_type: bool) -> Result<Array, Error> {
    if x.dtype() == dtype && x.weak_type() == weak_type {
        return Ok(x.clone());
    }
    let p = Params::new()
        .with("new_dtype", Param::DType(dtype))
        .with("weak_type", Param::Bool(weak_type))
        .with("sharding", Param::None);
    bind1(&super::CONVERT_ELEMENT_TYPE, &[x], &p)
}
/// `x` broadcast to `shape` (its dimensions the trailing ones).
pub(crate) fn broadcast_to(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    let offset = shape.len().saturating_sub(x.ndim());
    let dims: Vec<i64> = (offset..shape.len()).map(|d| d as i64).collect();
    let params = Params::new()
        .with(
            "shape",
            Param::Ints(shape.iter().map(|&d| d as i64).collect()),
        )
        .with("broadcast_dimensions", Param::Ints(dims))
        .with("sharding", Param::None);
    bind1(&super::BROADCAST_IN_DIM, &[x], &params)
}

/// Zeros of `aval` (strong), under the current trace: a zero scalar broadcast.
pub(crate) fn zeros(aval: &crate::array::ShapedArray) -> Result<Array, Error> {
    let zero = crate::array::scalar(0.0, aval.dtype())?;
    broadcast_to(&zero, aval.shape())
}

/// Zeros of `x`'s aval (strong), under the current trace.
pub(crate) fn zeros_like(x: &Array) -> Result<Array, Error> {
    zeros(x.aval())
}
