//! `jax.numpy`'s shape functions and friends: `reshape`, `transpose`, `concatenate`,
//! `stack`, `clip`, `dot`, each binding the `lax` primitives JAX binds (indexing is in
//! `indexing.rs`).

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::functions::{dot_params, lax};
use super::{ArrayLike, Family, promote_family, promote_only};
use crate::array::{Array, py_shape};
use crate::lax::{Param, Params};

fn ints(v: &[usize]) -> Param {
    Param::Ints(v.iter().map(|&d| d as i64).collect())
}

/// A positive axis for an array of rank `ndim` (negative counts from the end).
pub(super) fn axis(a: isize, ndim: usize) -> Result<usize, Error> {
    let n = ndim as isize;
    if a < -n || a >= n {
        // NumPy's `AxisError` (a `ValueError` subclass); JAX's plain `ValueError`.
        let class = if super::is_numpy(&super::rules()) {
            Exception::AxisError
        } else {
            Exception::ValueError
        };
        return Err(Error::refused(
            class,
            format!("axis {a} is out of bounds for array of dimension {ndim}"),
        ));
    }
    Ok(if a < 0 { a + n } else { a } as usize)
}

/// `jnp.reshape(x, shape)`; one dimension may be `-1` (inferred).
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = jnp::reshape(&Array::from_vec(vec![1i32, 2, 3, 4, 5, 6]), &[3, -1])?;
/// assert_eq!(x.shape(), &[3, 2]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// NumPy's `ValueError` when the sizes differ or more than one dimension is `-1`.
pub fn reshape<'a>(x: impl Into<ArrayLike<'a>>, shape: &[isize]) -> Result<Array, Error> {
    let x = promote_family(None, Family::Any, &[x.into()])?.remove(0);
    let known: usize = shape
        .iter()
        .filter(|&&d| d >= 0)
        .map(|&d| d as usize)
        .try_fold(1usize, usize::checked_mul)
        .unwrap_or(usize::MAX);
    let unknown = shape.iter().filter(|&&d| d < 0).count();
    let bad = || {
        Error::refused(
            Exception::ValueError,
            format!(
                "cannot reshape array of shape {} (size {}) into shape {}",
                py_shape(x.shape()),
                x.size(),
                py_isizes(shape)
            ),
        )
    };
    if unknown > 1 || shape.iter().any(|&d| d < -1) {
        return Err(bad());
    }
    let new: Vec<usize> = if unknown == 1 {
        if known == 0 || x.size() % known != 0 {
            return Err(bad());
        }
        shape
            .iter()
            .map(|&d| if d < 0 { x.size() / known } else { d as usize })
            .collect()
    } else {
        if known != x.size() {
            return Err(bad());
        }
        shape.iter().map(|&d| d as usize).collect()
    };
    if new.as_slice() == x.shape() {
        return Ok(x);
    }
    let params = Params::new()
        .with("dimensions", Param::None)
        .with("new_sizes", ints(&new))
        .with("sharding", Param::None);
    lax(&crate::lax::RESHAPE, &[&x], params)
}

fn py_isizes(v: &[isize]) -> String {
    match v {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            v.iter()
                .map(isize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `jnp.transpose(x, axes)`; `None` reverses the axes.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let m = Array::from_shape_vec(&[2, 3], vec![1i8, 2, 3, 4, 5, 6])?;
/// let t = jnp::transpose(&m, None)?;
/// assert_eq!((t.shape(), t.to_vec::<i8>()?), (&[3usize, 2][..], vec![1, 4, 2, 5, 3, 6]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// `ValueError` for axes that are not a permutation of the array's.
pub fn transpose<'a>(x: impl Into<ArrayLike<'a>>, axes: Option<&[isize]>) -> Result<Array, Error> {
    let x = promote_family(None, Family::Any, &[x.into()])?.remove(0);
    let perm: Vec<usize> = match axes {
        None => (0..x.ndim()).rev().collect(),
        Some(a) => {
            if a.len() != x.ndim() {
                return Err(Error::refused(
                    Exception::ValueError,
                    "axes don't match array",
                ));
            }
            a.iter()
                .map(|&i| axis(i, x.ndim()))
                .collect::<Result<_, _>>()?
        }
    };
    lax(
        &crate::lax::TRANSPOSE,
        &[&x],
        Params::new().with("permutation", ints(&perm)),
    )
}

/// `jnp.concatenate(arrays, axis)`: promoted together, joined along `axis`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let a = Array::from_vec(vec![1i8, 2]);
/// let b = Array::from_vec(vec![3.5f32]);
/// let c = jnp::concatenate(&[(&a).into(), (&b).into()], 0)?;
/// assert_eq!((c.dtype(), c.to_vec::<f32>()?), (DType::Float32, vec![1.0, 2.0, 3.5]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// `ValueError` for no arrays, 0-d arrays or an axis out of range; the primitive's
/// `TypeError` for mismatched shapes; promotion refusals.
pub fn concatenate(arrays: &[ArrayLike<'_>], axis_: isize) -> Result<Array, Error> {
    if arrays.is_empty() {
        return Err(Error::refused(
            Exception::ValueError,
            "Need at least one array to concatenate.",
        ));
    }
    let xs = promote_only(None, Family::Any, arrays)?;
    if xs.iter().any(|x| x.ndim() == 0) {
        return Err(Error::refused(
            Exception::ValueError,
            "Zero-dimensional arrays cannot be concatenated.",
        ));
    }
    let d = axis(axis_, xs[0].ndim())?;
    if xs.len() == 1 {
        return Ok(xs[0].clone());
    }
    let refs: Vec<&Array> = xs.iter().collect();
    lax(
        &crate::lax::CONCATENATE,
        &refs,
        Params::new().with("dimension", Param::Int(d as i64)),
    )
}

/// `jnp.stack(arrays, axis)`: a new axis, then [`concatenate`].
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let a = Array::from_vec(vec![1i32, 2]);
/// let s = jnp::stack(&[(&a).into(), (&a).into()], 1)?;
/// assert_eq!((s.shape(), s.to_vec::<i32>()?), (&[2usize, 2][..], vec![1, 1, 2, 2]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// `ValueError` for no arrays, shapes that differ, an axis out of range.
pub fn stack(arrays: &[ArrayLike<'_>], axis_: isize) -> Result<Array, Error> {
    if arrays.is_empty() {
        return Err(Error::refused(
            Exception::ValueError,
            "Need at least one array to stack.",
        ));
    }
    let xs = promote_only(None, Family::Any, arrays)?;
    if xs.iter().any(|x| x.shape() != xs[0].shape()) {
        return Err(Error::refused(
            Exception::ValueError,
            "All input arrays must have the same shape.",
        ));
    }
    let d = axis(axis_, xs[0].ndim() + 1)?;
    let expanded = xs
        .iter()
        .map(|x| {
            let mut shape = x.shape().to_vec();
            shape.insert(d, 1);
            let params = Params::new()
                .with("dimensions", Param::None)
                .with("new_sizes", ints(&shape))
                .with("sharding", Param::None);
            lax(&crate::lax::RESHAPE, &[x], params).map(ArrayLike::Owned)
        })
        .collect::<Result<Vec<_>, _>>()?;
    concatenate(&expanded, d as isize)
}

/// `jnp.clip(x, min, max)`: `minimum(max, maximum(min, x))`, each bound optional.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_vec(vec![-2.0f32, 0.5, 3.0]);
/// let c = jnp::clip(&x, Some(0.into()), Some(1.into()))?;
/// assert_eq!(c.to_vec::<f32>()?, [0.0, 0.5, 1.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// Under JAX's rules it runs inside JAX's jitted `clip` (`jit[name=clip]`, the bounds given
/// as its arguments; one cache for the crate, so that equal calls print as one shared
/// jaxpr).
///
/// # Errors
///
/// Promotion refusals, shapes that do not broadcast.
pub fn clip<'a>(
    x: impl Into<ArrayLike<'a>>,
    min: Option<ArrayLike<'a>>,
    max: Option<ArrayLike<'a>>,
) -> Result<Array, Error> {
    type One = fn(Array) -> Result<Array, Error>;
    type Two = fn((Array, Array)) -> Result<Array, Error>;
    type Three = fn((Array, Array, Array)) -> Result<Array, Error>;
    if super::is_numpy(&super::rules()) {
        return clip_traced(x.into(), min, max);
    }
    let x = super::functions::arraylike(x)?;
    let array = |b: ArrayLike<'a>| super::functions::arraylike(b);
    // One cache a set of bounds given (a signature of two arrays is either).
    match (min, max) {
        (None, None) => shared_jit!("clip", One, |x| clip_traced((&x).into(), None, None)).call(&x),
        (Some(lo), None) => shared_jit!("clip", Two, |(x, lo)| {
            clip_traced((&x).into(), Some((&lo).into()), None)
        })
        .call(&(x, array(lo)?)),
        (None, Some(hi)) => shared_jit!("clip", Two, |(x, hi)| {
            clip_traced((&x).into(), None, Some((&hi).into()))
        })
        .call(&(x, array(hi)?)),
        (Some(lo), Some(hi)) => shared_jit!("clip", Three, |(x, lo, hi)| {
            clip_traced((&x).into(), Some((&lo).into()), Some((&hi).into()))
        })
        .call(&(x, array(lo)?, array(hi)?)),
    }
}

/// [`clip`]'s body.
fn clip_traced<'a>(
    x: ArrayLike<'a>,
    min: Option<ArrayLike<'a>>,
    max: Option<ArrayLike<'a>>,
) -> Result<Array, Error> {
    let mut out: ArrayLike<'a> = x;
    if let Some(lo) = min {
        out = ArrayLike::Owned(super::maximum(lo, out)?);
    }
    if let Some(hi) = max {
        out = ArrayLike::Owned(super::minimum(hi, out)?);
    }
    match out {
        ArrayLike::Owned(a) => Ok(a),
        other => Ok(promote_family(None, Family::Any, &[other])?.remove(0)),
    }
}

/// `jnp.dot(a, b)`: a product with a 0-d operand; otherwise `a`'s last axis contracted with
/// `b`'s second-to-last (its only, for a vector).
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let a = Array::from_vec(vec![1.0f32, 2.0]);
/// assert_eq!(jnp::dot(&a, &a)?.to_vec::<f32>()?, [5.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// `TypeError` for contracted dimensions of different sizes, promotion refusals.
pub fn dot<'a>(a: impl Into<ArrayLike<'a>>, b: impl Into<ArrayLike<'a>>) -> Result<Array, Error> {
    let mut v = promote_only(None, Family::Any, &[a.into(), b.into()])?;
    let b = v.pop().expect("two");
    let a = v.pop().expect("two");
    if a.ndim() == 0 || b.ndim() == 0 {
        return super::multiply(&a, &b);
    }
    let lc = a.ndim() as i64 - 1;
    let rc = b.ndim().saturating_sub(2) as i64;
    let params = dot_params(&[lc], &[rc], &[], &[], a.dtype())?;
    lax(&crate::lax::DOT_GENERAL, &[&a, &b], params)
}
