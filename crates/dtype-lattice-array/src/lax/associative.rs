//! `lax.associative_scan` (JAX's parallel prefix scan, `jax/_src/lax/control_flow/loops.py`)
//! and what is built on it here: the JVPs of `cumprod`, `cummax`, `cummin` and
//! `cumlogsumexp`, which JAX defines as the JVP of `associative_scan` with the reduction's
//! combining function (`_cumulative_jvp_rule`), and `lax.logaddexp`.
//!
//! The scan is JAX's, operation for operation: adjacent pairs combined (strided slices), the
//! half-length scan recursively, the even positions combined with it, and the two halves
//! interleaved by padding with zeros and adding (so a `-0.0` comes out `+0.0`, as in JAX). The
//! primal outputs of these JVPs are therefore the scan's, not the primitive's (they can differ
//! in the last bits of a product, exactly as JAX's do).

use dtype_lattice::Error;

use super::{Param, Params, Primitive, bind1};
use crate::array::Array;

/// A combining function of [`associative_scan`]: two tuples of arrays (the same structure as
/// the scanned elements) to one.
pub type Combine<'a> = dyn Fn(&[Array], &[Array]) -> Result<Vec<Array>, Error> + 'a;

/// `x[start:limit:stride]` along `axis`.
fn slice_in_dim(
    x: &Array,
    start: usize,
    limit: usize,
    stride: usize,
    axis: usize,
) -> Result<Array, Error> {
    let mut lo = vec![0; x.ndim()];
    let mut hi = x.shape().to_vec();
    let mut st = vec![1; x.ndim()];
    lo[axis] = start;
    hi[axis] = limit.max(start);
    st[axis] = stride;
    super::ad::slice(x, &lo, &hi, Some(&st))
}

fn rev(x: &Array, axis: usize) -> Result<Array, Error> {
    bind1(
        &super::REV,
        &[x],
        &Params::new().with("dimensions", super::ints([axis])),
    )
}

/// `a` and `b` interleaved along `axis` (`a` first; `a` as long as `b` or one longer), as JAX
/// interleaves them: each padded with zeros between its elements and the two added (`or` for
/// booleans).
fn interleave(a: &Array, b: &Array, axis: usize) -> Result<Array, Error> {
    let same = a.shape()[axis] == b.shape()[axis];
    let cfg = |lo: i64, hi: i64| -> Vec<(i64, i64, i64)> {
        (0..a.ndim())
            .map(|d| if d == axis { (lo, hi, 1) } else { (0, 0, 0) })
            .collect()
    };
    let pa = pad(a, &cfg(0, i64::from(same)))?;
    let pb = pad(b, &cfg(1, i64::from(!same)))?;
    if a.dtype() == dtype_lattice::DType::Bool {
        bind1(&super::OR, &[&pa, &pb], &Params::new())
    } else {
        super::ops::add(&pa, &pb)
    }
}

/// `lax.pad` with zeros, staged even where the configuration is all zeros (as JAX's is).
fn pad(x: &Array, cfg: &[(i64, i64, i64)]) -> Result<Array, Error> {
    let zero = super::ops::konst(x, 0.0)?;
    bind1(
        &super::PAD,
        &[x, &zero],
        &Params::new().with("padding_config", Param::Padding(cfg.to_vec())),
    )
}

/// `lax.associative_scan(fn, elems, reverse, axis)` over a tuple of arrays of the same length
/// along `axis`: the inclusive scan by `combine`, which must be associative, in JAX's order of
/// operations.
///
/// # Errors
///
/// JAX's `ValueError` for elements of different lengths along `axis`, an axis out of range,
/// and whatever `combine` returns.
pub fn associative_scan(
    combine: &Combine<'_>,
    elems: &[Array],
    reverse: bool,
    axis: usize,
) -> Result<Vec<Array>, Error> {
    let Some(first) = elems.first() else {
        return Ok(Vec::new());
    };
    if axis >= first.ndim() {
        return super::structural::value_error(format!(
            "axis {axis} is out of bounds for array of dimension {}",
            first.ndim()
        ));
    }
    let n = first.shape()[axis];
    if elems
        .iter()
        .any(|e| e.ndim() <= axis || e.shape()[axis] != n)
    {
        let shapes: Vec<String> = elems
            .iter()
            .map(|e| crate::array::py_shape(e.shape()))
            .collect();
        return super::structural::value_error(format!(
            "Array inputs to associative_scan must have the same first dimension. (saw: [{}])",
            shapes.join(", ")
        ));
    }
    let elems: Vec<Array> = if reverse {
        elems
            .iter()
            .map(|e| rev(e, axis))
            .collect::<Result<_, _>>()?
    } else {
        elems.to_vec()
    };
    let scans = scan_rec(combine, &elems, axis)?;
    if reverse {
        scans.iter().map(|e| rev(e, axis)).collect()
    } else {
        Ok(scans)
    }
}

fn scan_rec(combine: &Combine<'_>, elems: &[Array], axis: usize) -> Result<Vec<Array>, Error> {
    let n = elems[0].shape()[axis];
    if n < 2 {
        return Ok(elems.to_vec());
    }
    let each = |f: &dyn Fn(&Array) -> Result<Array, Error>,
                xs: &[Array]|
     -> Result<Vec<Array>, Error> { xs.iter().map(f).collect() };
    // Adjacent pairs combined.
    let reduced = combine(
        &each(&|e| slice_in_dim(e, 0, n - 1, 2, axis), elems)?,
        &each(&|e| slice_in_dim(e, 1, n, 2, axis), elems)?,
    )?;
    let odd = scan_rec(combine, &reduced, axis)?;
    let rest = each(&|e| slice_in_dim(e, 2, n, 2, axis), elems)?;
    let even = if n.is_multiple_of(2) {
        let m = odd[0].shape()[axis];
        combine(&each(&|e| slice_in_dim(e, 0, m - 1, 1, axis), &odd)?, &rest)?
    } else {
        combine(&odd, &rest)?
    };
    elems
        .iter()
        .zip(&even)
        .zip(&odd)
        .map(|((e, r), o)| {
            let head = slice_in_dim(e, 0, 1, 1, axis)?;
            let p = Params::new().with("dimension", Param::Int(axis as i64));
            let even = bind1(&super::CONCATENATE, &[&head, r], &p)?;
            interleave(&even, o, axis)
        })
        .collect()
}

/// `lax.logaddexp(x1, x2)`: `log(exp(x1) + exp(x2))` as JAX computes it (`max(x1, x2) +
/// log1p(exp(-|x1 − x2|))`, or `x1 + x2` where the difference is NaN: NaNs, and infinities
/// of the same sign).
pub(crate) fn logaddexp(x1: &Array, x2: &Array) -> Result<Array, Error> {
    use super::ops::{add, neg, select_n, sub, unary};
    let amax = bind1(&super::MAX, &[x1, x2], &Params::new())?;
    let delta = sub(x1, x2)?;
    let isnan = bind1(&super::NE, &[&delta, &delta], &Params::new())?;
    let sum = add(x1, x2)?;
    let e = unary(&super::EXP, &neg(&unary(&super::ABS, &delta)?)?)?;
    let y = add(&amax, &unary(&super::LOG1P, &e)?)?;
    select_n(&isnan, &[&y, &sum])
}

/// `logaddexp`'s JVP (JAX's custom `_logaddexp_jvp`): `t1·exp(x1' − y') + t2·exp(x2' − y')`,
/// `v'` being `v` with `+inf` replaced by 0.
fn logaddexp_jvp(x: [&Array; 2], t: [&Array; 2]) -> Result<(Array, Array), Error> {
    use super::ops::{add, eq, konst, mul, select_n, sub, unary, zeros_like};
    let y = logaddexp(x[0], x[1])?;
    let finite = |v: &Array| -> Result<Array, Error> {
        let inf = eq(v, &konst(v, f64::INFINITY)?)?;
        select_n(&inf, &[v, &zeros_like(v)?])
    };
    let part = |t: &Array, x: &Array| -> Result<Array, Error> {
        let d = sub(&finite(x)?, &finite(&y)?)?;
        mul(t, &unary(&super::EXP, &d)?)
    };
    let ty = add(&part(t[0], x[0])?, &part(t[1], x[1])?)?;
    Ok((y, ty))
}

/// The JVP of a cumulative reduction (JAX's `_cumulative_jvp_rule`): the JVP of
/// [`associative_scan`] with the reduction's combining function, `combine` (a primitive,
/// differentiated by its own JVP rule) or `lax.logaddexp` (`None`).
pub(crate) fn cumulative_jvp(
    prim: &'static Primitive,
    combine: Option<&'static Primitive>,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(super::Outputs, Vec<Option<Array>>), Error> {
    let Some(t) = tangents[0].clone() else {
        return Ok((super::ad::primal_out(prim, primals, params)?, vec![None]));
    };
    let axis = super::structural::param_int(params, prim.name, "axis")? as usize;
    let reverse = matches!(params.get("reverse"), Some(Param::Bool(true)));
    let pair = |a: &[Array], b: &[Array]| -> Result<Vec<Array>, Error> {
        let (y, ty) = match combine {
            None => logaddexp_jvp([&a[0], &b[0]], [&a[1], &b[1]])?,
            Some(c) => {
                let rule = c.jvp.ok_or_else(|| super::ad::not_differentiable(c))?;
                let (mut y, mut ty) = rule(
                    c,
                    &[a[0].clone(), b[0].clone()],
                    &[Some(a[1].clone()), Some(b[1].clone())],
                    &Params::new(),
                )?;
                let t = match ty.pop().flatten() {
                    Some(t) => t,
                    None => super::ops::zeros_like(&y[0])?,
                };
                (y.remove(0), t)
            }
        };
        Ok(vec![y, ty])
    };
    let mut out = associative_scan(&pair, &[primals[0].clone(), t], reverse, axis)?;
    let t = out.pop();
    Ok((smallvec::smallvec![out.remove(0)], vec![t]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan of an addition is the running sum, forward and reversed, at every length
    /// around the recursion's odd and even cases.
    #[test]
    fn associative_scan_of_add_is_the_running_sum() {
        for n in 0..12usize {
            let v: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
            let x = Array::from_vec(v.clone());
            let add = |a: &[Array], b: &[Array]| Ok(vec![super::super::ops::add(&a[0], &b[0])?]);
            for reverse in [false, true] {
                let got = associative_scan(&add, std::slice::from_ref(&x), reverse, 0).unwrap();
                let mut want = v.clone();
                if reverse {
                    for i in (0..n.saturating_sub(1)).rev() {
                        want[i] += want[i + 1];
                    }
                } else {
                    for i in 1..n {
                        want[i] += want[i - 1];
                    }
                }
                assert_eq!(got[0].to_vec::<i32>().unwrap(), want, "n={n} {reverse}");
            }
        }
    }
}
