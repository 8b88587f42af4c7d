//! The rule helpers the primitive families share (JAX's `ad.defjvp`, `ad.deflinear`,
//! `ad.defbilinear` and the transposes' reshapes): each family's file holds its primitives'
//! JVP and transpose rules and uses these. A JVP rule gets the primals and the tangents
//! (`None`: a symbolic zero), runs in the parent of the JVP trace and returns the primal
//! outputs and their tangents; a transpose rule gets the output cotangents and the operands
//! (linear, or known) and returns the linear operands' cotangents. Every operation in a rule
//! is a bound primitive, so rules compose with staging and with each other.

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::ops as lax;
use super::{Outputs, Param, Params, Primitive, bind, bind1};
use crate::array::{Array, ShapedArray};
use crate::core::Lin;

// ---- JVP rules

pub(crate) fn primal_out(
    prim: &'static Primitive,
    primals: &[Array],
    params: &Params,
) -> Result<Outputs, Error> {
    let refs: Vec<&Array> = primals.iter().collect();
    bind(prim, &refs, params)
}

/// `t` summed with `u` (either may be zero).
pub(crate) fn plus(t: Option<Array>, u: Option<Array>) -> Result<Option<Array>, Error> {
    Ok(match (t, u) {
        (Some(a), Some(b)) => Some(lax::add_any(&a, &b)?),
        (a, None) => a,
        (None, b) => b,
    })
}

/// A tangent of `out`'s shape (a 0-d operand's tangent broadcast, as lax broadcasts it).
pub(crate) fn fit(t: Option<Array>, out: &Array) -> Result<Option<Array>, Error> {
    t.map(|t| {
        let t = lax::broadcast_to(&t, out.shape())?;
        lax::convert_like(&t, out)
    })
    .transpose()
}

pub(crate) fn scale(
    t: &Option<Array>,
    by: impl FnOnce() -> Result<Array, Error>,
) -> Result<Option<Array>, Error> {
    t.as_ref().map(|t| lax::mul(t, &by()?)).transpose()
}

pub(crate) fn not_differentiable(prim: &Primitive) -> Error {
    Error::refused(
        Exception::NotImplementedError,
        format!("Differentiation rule for '{}' not implemented", prim.name),
    )
}

/// The JVP of a primitive linear in its first operand, the others constant (JAX's
/// `ad.deflinear` on the first operand): the tangent is the primitive applied to the tangent;
/// a tangent of another operand is refused (not differentiable there).
pub(crate) fn linear_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = primal_out(prim, primals, params)?;
    let t = match tangents.first().cloned().flatten() {
        None => None,
        Some(t) => {
            let mut ins: Vec<Array> = vec![t];
            ins.extend(primals.iter().skip(1).cloned());
            let refs: Vec<&Array> = ins.iter().collect();
            Some(bind(prim, &refs, params)?[0].clone())
        }
    };
    if tangents.iter().skip(1).any(Option::is_some) {
        return Err(not_differentiable(prim));
    }
    Ok((out, vec![t]))
}

/// The JVP of a primitive linear in every operand jointly (`concatenate`; `select_n`'s cases
/// through [`multilinear_from`]): the tangent is the primitive applied to the tangents, zeros
/// instantiated.
pub(crate) fn multilinear_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    multilinear_from(prim, primals, tangents, params, 0)
}

/// [`multilinear_jvp`] in the operands from `first` on (those before it constant, as
/// `select_n`'s `which`).
pub(crate) fn multilinear_from(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
    first: usize,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    multilinear_in(prim, primals, tangents, params, first..primals.len())
}

/// [`multilinear_jvp`] in the operands of `linear` (the others constant: `select_n`'s
/// `which`, `dynamic_update_slice`'s start indices).
pub(crate) fn multilinear_in(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
    linear: std::ops::Range<usize>,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = primal_out(prim, primals, params)?;
    let ins = primals
        .iter()
        .zip(tangents)
        .enumerate()
        .map(|(i, (p, t))| match t {
            Some(t) if linear.contains(&i) => Ok(t.clone()),
            None if linear.contains(&i) => lax::zeros_like(p),
            _ => Ok(p.clone()),
        })
        .collect::<Result<Vec<Array>, Error>>()?;
    let refs: Vec<&Array> = ins.iter().collect();
    let t = bind(prim, &refs, params)?[0].clone();
    Ok((out, vec![Some(t)]))
}

/// `reduce_max`/`reduce_min` and other primitives whose tangent is zero (comparisons,
/// integer results, argmax, iota, the PRNG).
pub(crate) fn zero_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    _tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = primal_out(prim, primals, params)?;
    let n = out.len();
    Ok((out, vec![None; n]))
}

// ---- transpose rules

/// The transpose of a primitive linear in its first operand only: that operand's cotangent
/// `f(ct, aval)` from the output cotangent and the operand's aval, none for the others (a zero
/// output cotangent gives zeros).
pub(crate) fn transpose_first(
    cts: &[Option<Array>],
    ins: &[Lin],
    f: impl FnOnce(Array, &ShapedArray) -> Result<Array, Error>,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let mut v = vec![Some(f(ct, ins[0].aval())?)];
    v.extend(std::iter::repeat_n(None, ins.len() - 1));
    Ok(v)
}

pub(crate) fn reduce_sum(x: &Array, axes: &[usize]) -> Result<Array, Error> {
    if axes.is_empty() {
        return Ok(x.clone());
    }
    let p = Params::new()
        .with("axes", super::ints(axes.iter().copied()))
        .with("out_sharding", Param::None);
    bind1(&super::REDUCE_SUM, &[x], &p)
}

pub(crate) fn reshape(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    let p = Params::new()
        .with("new_sizes", super::ints(shape.iter().copied()))
        .with("dimensions", Param::None)
        .with("sharding", Param::None);
    bind1(&super::RESHAPE, &[x], &p)
}

pub(crate) fn transpose(x: &Array, perm: &[usize]) -> Result<Array, Error> {
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(x.clone());
    }
    bind1(
        &super::TRANSPOSE,
        &[x],
        &Params::new().with("permutation", super::ints(perm.iter().copied())),
    )
}

/// The cotangent `ct` of a broadcast result summed back to `aval` (lax's implicit
/// broadcasting of 0-d operands and size-1 dimensions), in `aval`'s dtype.
pub(crate) fn unbroadcast(ct: &Array, aval: &ShapedArray) -> Result<Array, Error> {
    let ct = if ct.shape() == aval.shape() {
        ct.clone()
    } else if aval.ndim() == 0 {
        reduce_sum(ct, &(0..ct.ndim()).collect::<Vec<_>>())?
    } else {
        let axes: Vec<usize> = (0..ct.ndim())
            .filter(|&d| aval.shape()[d] == 1 && ct.shape()[d] != 1)
            .collect();
        reshape(&reduce_sum(ct, &axes)?, aval.shape())?
    };
    convert_to(&ct, aval)
}

pub(crate) fn convert_to(x: &Array, aval: &ShapedArray) -> Result<Array, Error> {
    if x.dtype() == aval.dtype() {
        return Ok(x.clone());
    }
    lax::convert(x, aval.dtype(), false)
}

pub(crate) fn slice(
    x: &Array,
    lo: &[usize],
    hi: &[usize],
    strides: Option<&[usize]>,
) -> Result<Array, Error> {
    let p = Params::new()
        .with("start_indices", super::ints(lo.iter().copied()))
        .with("limit_indices", super::ints(hi.iter().copied()))
        .with(
            "strides",
            strides.map_or(Param::None, |s| super::ints(s.iter().copied())),
        );
    bind1(&super::SLICE, &[x], &p)
}

pub(crate) fn pad(x: &Array, cfg: &[(i64, i64, i64)]) -> Result<Array, Error> {
    if cfg.iter().all(|&c| c == (0, 0, 0)) {
        return Ok(x.clone());
    }
    let zero = lax::konst(x, 0.0)?;
    bind1(
        &super::PAD,
        &[x, &zero],
        &Params::new().with("padding_config", Param::Padding(cfg.to_vec())),
    )
}
