//! `jnp.sort` and `jnp.argsort`, as `jax/_src/numpy/sorting.py` builds them on `lax.sort`:
//! the flattened array for `axis=None`; descending by reversing the ascending result (and,
//! for a stable descending `argsort`, the keys and the iota before it, so that equal keys
//! keep their order); `argsort`'s indices in the default integer type.

use dtype_lattice::Error;

use super::functions::{arraylike, ravel};
use super::shape::axis as canonical_axis;
use crate::array::Array;
use crate::config::{default_int, rules};
use crate::core::{Param, Params, bind};
use crate::lax;

fn rev(x: &Array, dim: usize) -> Result<Array, Error> {
    Ok(bind(
        &lax::REV,
        &[x],
        &Params::new().with("dimensions", Param::Ints(vec![dim as i64])),
    )?
    .remove(0))
}

/// The array to sort and the dimension: flattened for `None`, else the axis made positive.
fn prepared(x: &Array, axis: Option<isize>) -> Result<(Array, usize), Error> {
    match axis {
        None => Ok((ravel(x)?, 0)),
        Some(a) => Ok((x.clone(), canonical_axis(a, x.ndim())?)),
    }
}

fn sort_params(dim: usize, stable: bool) -> Params {
    Params::new()
        .with("dimension", Param::Int(dim as i64))
        .with("is_stable", Param::Bool(stable))
        .with("num_keys", Param::Int(1))
}

/// `jnp.sort(a, axis, stable=stable, descending=descending)`: NaNs last (first when
/// descending), `-0.0` and `+0.0` equal.
///
/// ```
/// use dtype_lattice_array::{Array, numpy as jnp};
/// let x = Array::from_vec(vec![3.0f32, f32::NAN, -1.0, 2.0]);
/// let y = jnp::sort(&x, Some(-1), true, false)?;
/// assert_eq!(&y.to_vec::<f32>()?[..3], [-1.0, 2.0, 3.0]);
/// assert!(y.to_vec::<f32>()?[3].is_nan());
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// NumPy's `ValueError` for an axis out of range; key arrays.
pub fn sort<'a>(
    a: impl Into<super::ArrayLike<'a>>,
    axis: Option<isize>,
    stable: bool,
    descending: bool,
) -> Result<Array, Error> {
    let x = arraylike(a)?;
    let (x, dim) = prepared(&x, axis)?;
    if x.ndim() == 0 {
        return Ok(x);
    }
    let y = bind(&lax::SORT, &[&x], &sort_params(dim, stable))?.remove(0);
    if descending { rev(&y, dim) } else { Ok(y) }
}

/// `jnp.argsort(a, axis, stable=stable, descending=descending)`: the indices that sort `a`
/// along `axis` (the default integer type; ties in order when `stable`, also descending).
///
/// ```
/// use dtype_lattice_array::{Array, numpy as jnp};
/// let x = Array::from_vec(vec![2.0f32, 1.0, 2.0, 0.0]);
/// assert_eq!(jnp::argsort(&x, Some(0), true, false)?.to_vec::<i32>()?, [3, 1, 0, 2]);
/// assert_eq!(jnp::argsort(&x, Some(0), true, true)?.to_vec::<i32>()?, [0, 2, 1, 3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// NumPy's `ValueError` for an axis out of range; key arrays.
pub fn argsort<'a>(
    a: impl Into<super::ArrayLike<'a>>,
    axis: Option<isize>,
    stable: bool,
    descending: bool,
) -> Result<Array, Error> {
    let x = arraylike(a)?;
    let (x, dim) = prepared(&x, axis)?;
    let x = if x.ndim() == 0 { ravel(&x)? } else { x };
    // JAX: int32 where the dimension fits, then the default integer (int64 under x64).
    let idx_dtype = if x.shape()[dim] as u64 > i32::MAX as u64 {
        dtype_lattice::DType::Int64
    } else {
        default_int(&rules())
    };
    let iota = bind(
        &lax::IOTA,
        &[],
        &Params::new()
            .with("dimension", Param::Int(dim as i64))
            .with("dtype", Param::DType(idx_dtype))
            .with(
                "shape",
                Param::Ints(x.shape().iter().map(|&d| d as i64).collect()),
            )
            .with("sharding", Param::None),
    )?
    .remove(0);
    let (x, iota) = if descending && stable {
        (rev(&x, dim)?, rev(&iota, dim)?)
    } else {
        (x, iota)
    };
    let mut out = bind(&lax::SORT, &[&x, &iota], &sort_params(dim, stable))?;
    let idx = out.pop().expect("sort returns its operands");
    if descending { rev(&idx, dim) } else { Ok(idx) }
}
