//! `jax.numpy`'s cumulative functions along an axis, as `jax/_src/numpy/reductions.py`'s
//! `_cumulative_reduction` builds them on `lax.cumsum`/`lax.cumprod`: `axis=None` accumulates
//! the flattened array; without `dtype` the result keeps the input's dtype (booleans count
//! as the default integer; `cumulative_sum` also widens narrow integers, as
//! `_promote_integer_dtype` does); `dtype=bool` accumulates `x != 0` in the default integer
//! and converts back; the NaN-ignoring forms replace NaNs by 0 (or 1) first.
//!
//! [`cumsum_axis`] is `jnp.cumsum(a, axis, dtype)`; the flattened-only [`super::cumsum`]
//! keeps its NumPy-rule behaviour, and [`cumsum_axis`] with neither `axis` nor `dtype` under
//! NumPy's rules is that function.

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Value};

use super::functions::{arraylike, promote_integer};
use super::shape::axis as canonical_axis;
use super::{is_numpy, rules};
use crate::array::Array;
use crate::core::Primitive;
use crate::lax::{self, Param, Params};

fn value_error(msg: impl Into<String>) -> Error {
    Error::refused(Exception::ValueError, msg)
}

/// `lax.convert_element_type(x, dtype)`: `x` itself when nothing changes.
fn convert(x: &Array, dtype: DType) -> Result<Array, Error> {
    if x.dtype() == dtype && !x.weak_type() {
        return Ok(x.clone());
    }
    lax::ops::convert(x, dtype, false)
}

/// A dtype the caller asked for, as JAX canonicalises it (x64 off: 64-bit types are 32-bit).
fn canonical(dtype: DType) -> DType {
    let r = rules();
    if is_numpy(&r) {
        dtype
    } else {
        dtype.canonicalize(r.options().x64)
    }
}

/// What `_cumulative_reduction` is asked for beyond the operand.
#[derive(Clone, Copy)]
struct Cumulative {
    prim: &'static Primitive,
    /// The value NaNs become first (`nancumsum`: 0, `nancumprod`: 1).
    fill_nan: Option<i128>,
    /// Narrow integers widened without a `dtype` (`cumulative_sum`).
    promote_integers: bool,
    /// The name of the jitted function JAX computes it in (`None`: not jitted).
    jitted: Option<&'static str>,
}

const CUMSUM: Cumulative = Cumulative {
    prim: &lax::CUMSUM,
    fill_nan: None,
    promote_integers: false,
    jitted: Some("cumsum"),
};
const CUMPROD: Cumulative = Cumulative {
    prim: &lax::CUMPROD,
    fill_nan: None,
    promote_integers: false,
    jitted: Some("cumprod"),
};

/// `_cumulative_reduction(name, reduction, a, axis, dtype)`, under JAX's rules in the jitted
/// function JAX defines it in (`jit[name=cumsum]`, …; `axis` and `dtype` static).
fn cumulative(
    how: Cumulative,
    a: &Array,
    axis: Option<isize>,
    dtype: Option<DType>,
) -> Result<Array, Error> {
    match how.jitted {
        Some(name) if !is_numpy(&rules()) => {
            crate::jit::jit(move |a: Array| cumulative_traced(how, &a, axis, dtype))
                .named(name)
                .call(a)
        }
        _ => cumulative_traced(how, a, axis, dtype),
    }
}

fn cumulative_traced(
    how: Cumulative,
    a: &Array,
    axis: Option<isize>,
    dtype: Option<DType>,
) -> Result<Array, Error> {
    let (mut a, axis) = match axis {
        // `ravel` of one dimension is the operand (`lax.reshape` to its own shape binds
        // nothing).
        None if a.ndim() == 1 => (a.clone(), 0),
        None => {
            let params = Params::new()
                .with("dimensions", Param::None)
                .with("new_sizes", Param::Ints(vec![a.size() as i64]))
                .with("sharding", Param::None);
            (lax::bind1(&lax::RESHAPE, &[a], &params)?, 0)
        }
        Some(ax) => (a.clone(), canonical_axis(ax, a.ndim())?),
    };
    // JAX replaces NaNs whatever the dtype (an integer is never one: `a != a` is false).
    if let Some(fill) = how.fill_nan
        && (!is_numpy(&rules()) || matches!(a.dtype().kind(), Kind::Float | Kind::Complex))
    {
        // `_where(lax._isnan(a), lax._const(a, fill_value), a)`; `isnan` is `a != a`.
        let nan = lax::bind1(&lax::NE, &[&a, &a], &Params::new())?;
        let c = crate::array::scalar_array(Value::Int(fill), a.dtype(), a.weak_type())?;
        a = if is_numpy(&rules()) {
            let c = lax::ops::broadcast_to(&c, a.shape())?;
            lax::ops::select_n(&nan, &[&a, &c])?
        } else {
            super::where_jitted(&nan, &c, &a)?
        };
    }
    let (result, computation) = match dtype {
        None => {
            let r = if how.promote_integers || a.dtype() == DType::Bool {
                promote_integer(a.dtype())?
            } else {
                a.dtype()
            };
            (r, r)
        }
        Some(DType::Bool) => {
            if a.dtype() != DType::Bool {
                a = super::not_equal(&a, 0)?;
            }
            (DType::Bool, promote_integer(DType::Bool)?)
        }
        Some(d) => {
            let d = canonical(d);
            (d, d)
        }
    };
    let a = convert(&a, computation)?;
    let params = Params::new()
        .with("axis", Param::Int(axis as i64))
        .with("reverse", Param::Bool(false));
    let out = lax::bind1(how.prim, &[&a], &params)?;
    convert(&out, result)
}

/// `jnp.cumsum(a, axis, dtype)`: the running sum along `axis` (`None`: of the flattened
/// array). Without `dtype` the result has `a`'s dtype (integers wrap), booleans counting as
/// the default integer; `dtype=bool` is whether each running count of nonzeros is nonzero.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_shape_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6])?;
/// assert_eq!(jnp::cumsum_axis(&x, Some(1), None)?.to_vec::<i32>()?, [1, 3, 6, 4, 9, 15]);
/// assert_eq!(jnp::cumsum_axis(&x, None, None)?.shape(), &[6]);
/// let f = jnp::cumsum_axis(&x, Some(0), Some(DType::Float32))?;
/// assert_eq!(f.to_vec::<f32>()?, [1.0, 2.0, 3.0, 5.0, 7.0, 9.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for an axis out of range (a 0-d array has no axis 0); key arrays.
pub fn cumsum_axis<'a>(
    a: impl Into<super::ArrayLike<'a>>,
    axis: Option<isize>,
    dtype: Option<DType>,
) -> Result<Array, Error> {
    let a = arraylike(a)?;
    if axis.is_none() && dtype.is_none() && is_numpy(&rules()) {
        return super::cumsum(&a);
    }
    cumulative(CUMSUM, &a, axis, dtype)
}

/// `jnp.cumprod(a, axis, dtype)`: the running product along `axis` (`None`: of the flattened
/// array), with [`cumsum_axis`]'s dtype rules.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_shape_vec(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0])?;
/// assert_eq!(jnp::cumprod(&x, Some(0), None)?.to_vec::<f32>()?, [1.0, 2.0, 3.0, 8.0]);
/// assert_eq!(jnp::cumprod(&x, None, None)?.to_vec::<f32>()?, [1.0, 2.0, 6.0, 24.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for an axis out of range; key arrays.
pub fn cumprod<'a>(
    a: impl Into<super::ArrayLike<'a>>,
    axis: Option<isize>,
    dtype: Option<DType>,
) -> Result<Array, Error> {
    cumulative(CUMPROD, &arraylike(a)?, axis, dtype)
}

/// `jnp.nancumsum(a, axis, dtype)`: [`cumsum_axis`] with NaNs counted as 0.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_vec(vec![1.0f32, f32::NAN, 2.0]);
/// assert_eq!(jnp::nancumsum(&x, None, None)?.to_vec::<f32>()?, [1.0, 1.0, 3.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`cumsum_axis`].
pub fn nancumsum<'a>(
    a: impl Into<super::ArrayLike<'a>>,
    axis: Option<isize>,
    dtype: Option<DType>,
) -> Result<Array, Error> {
    let how = Cumulative {
        fill_nan: Some(0),
        jitted: Some("nancumsum"),
        ..CUMSUM
    };
    cumulative(how, &arraylike(a)?, axis, dtype)
}

/// `jnp.nancumprod(a, axis, dtype)`: [`cumprod`] with NaNs counted as 1.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_vec(vec![2.0f32, f32::NAN, 3.0]);
/// assert_eq!(jnp::nancumprod(&x, None, None)?.to_vec::<f32>()?, [2.0, 2.0, 6.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`cumprod`].
pub fn nancumprod<'a>(
    a: impl Into<super::ArrayLike<'a>>,
    axis: Option<isize>,
    dtype: Option<DType>,
) -> Result<Array, Error> {
    let how = Cumulative {
        fill_nan: Some(1),
        jitted: Some("nancumprod"),
        ..CUMPROD
    };
    cumulative(how, &arraylike(a)?, axis, dtype)
}

/// The Array API's forms: `axis` optional only for one dimension, the identity prepended
/// with `include_initial`.
fn cumulative_api(
    how: Cumulative,
    x: &Array,
    axis: Option<isize>,
    dtype: Option<DType>,
    include_initial: bool,
    what: &str,
    identity: i128,
) -> Result<Array, Error> {
    if x.ndim() == 0 {
        return Err(value_error(format!(
            "The input must be non-scalar to take a cumulative {what}, however a scalar value \
             or scalar array was given."
        )));
    }
    let axis = match axis {
        Some(a) => a,
        None if x.ndim() > 1 => {
            return Err(value_error(format!(
                "The input array has rank {}, however axis was not set to an explicit value. \
                 The axis argument is only optional for one-dimensional arrays.",
                x.ndim()
            )));
        }
        None => 0,
    };
    let axis = canonical_axis(axis, x.ndim())?;
    let out = cumulative(how, x, Some(axis as isize), dtype.map(canonical))?;
    if !include_initial {
        return Ok(out);
    }
    let mut shape = x.shape().to_vec();
    shape[axis] = 1;
    let first = crate::array::scalar_array(Value::Int(identity), out.dtype(), false)?;
    let first = lax::ops::broadcast_to(&first, &shape)?;
    lax::bind1(
        &lax::CONCATENATE,
        &[&first, &out],
        &Params::new().with("dimension", Param::Int(axis as i64)),
    )
}

/// `jnp.cumulative_sum(x, axis=axis, dtype=dtype, include_initial=include_initial)`: the
/// Array API's running sum; booleans and narrow integers accumulate in the default integer
/// (unsigned: the default unsigned); with `include_initial` a 0 leads along `axis`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_vec(vec![100i8, 100]);
/// let s = jnp::cumulative_sum(&x, None, None, true)?;
/// assert_eq!((s.dtype(), s.to_vec::<i32>()?), (DType::Int32, vec![0, 100, 200]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a 0-d array, no `axis` for more than one dimension, an axis out
/// of range.
pub fn cumulative_sum<'a>(
    x: impl Into<super::ArrayLike<'a>>,
    axis: Option<isize>,
    dtype: Option<DType>,
    include_initial: bool,
) -> Result<Array, Error> {
    let how = Cumulative {
        promote_integers: true,
        jitted: Some("_cumsum_with_promotion"),
        ..CUMSUM
    };
    let x = arraylike(x)?;
    cumulative_api(how, &x, axis, dtype, include_initial, "sum", 0)
}

/// `jnp.cumulative_prod(x, axis=axis, dtype=dtype, include_initial=include_initial)`: the
/// Array API's running product (integers keep their dtype, as JAX's does; booleans count as
/// the default integer); with `include_initial` a 1 leads along `axis`.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_shape_vec(&[2, 2], vec![2.0f32, 3.0, 4.0, 5.0])?;
/// let p = jnp::cumulative_prod(&x, Some(1), None, true)?;
/// assert_eq!(p.to_vec::<f32>()?, [1.0, 2.0, 6.0, 1.0, 4.0, 20.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`cumulative_sum`].
pub fn cumulative_prod<'a>(
    x: impl Into<super::ArrayLike<'a>>,
    axis: Option<isize>,
    dtype: Option<DType>,
    include_initial: bool,
) -> Result<Array, Error> {
    let x = arraylike(x)?;
    // `jnp.cumulative_prod` calls `lax.cumprod` itself, outside any jitted function.
    let how = Cumulative {
        jitted: None,
        ..CUMPROD
    };
    cumulative_api(how, &x, axis, dtype, include_initial, "product", 1)
}
