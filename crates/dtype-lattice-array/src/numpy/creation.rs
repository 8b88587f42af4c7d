//! Creating arrays: `jnp.array` from Python values, `zeros`, `ones`, `full`, `arange`,
//! `linspace`, `eye`.

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Value};

use super::{broadcast_to, encode_value, is_numpy, rules, scalar_array};
use crate::array::{Array, ShapedArray, Storage, checked_size, layout, py_shape};
use crate::convert::Semantics;

/// The dtype `jnp.array(..., dtype=dtype)` makes: canonicalised under JAX's rules (x64 off:
/// `int64` is `int32`).
fn canonical(dtype: DType) -> DType {
    let r = rules();
    if is_numpy(&r) {
        dtype
    } else {
        dtype.canonicalize(r.options().x64)
    }
}

/// `jnp.array(values, dtype=dtype).reshape(shape)`: Python values (row-major) converted as
/// NumPy converts them (`np.array(values, dtype)`, which `jnp.array` does first): integers
/// exactly, floats rounded to nearest even from float64, booleans as 0 and 1.
///
/// ```
/// use dtype_lattice::{DType, Value};
/// use dtype_lattice_array::numpy as jnp;
/// let x = jnp::array(&[Value::Float(1.5), Value::Int(2)], &[2], DType::BFloat16)?;
/// assert_eq!(x.to_string(), "Array([1.5, 2], dtype=bfloat16)");
/// let e = jnp::array(&[Value::Int(300)], &[1], DType::Int8).unwrap_err();
/// assert_eq!(e.to_string(), "OverflowError: Python integer 300 out of bounds for int8");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// NumPy's `OverflowError` for an integer the dtype cannot hold, `ValueError` when the
/// number of values is not the shape's size, `TypeError` for key dtypes and for numbers as
/// `float0` (NumPy's `a bytes-like object is required, not 'int'`: `float0` takes none).
pub fn array(values: &[Value], shape: &[usize], dtype: DType) -> Result<Array, Error> {
    if dtype.is_extended() {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "cannot create an array of {dtype} from Python values; use random.wrap_key_data"
            ),
        ));
    }
    let dtype = canonical(dtype);
    let size = checked_size(shape).ok_or_else(|| too_large(shape))?;
    if size != values.len() {
        return Err(Error::refused(
            Exception::ValueError,
            format!(
                "cannot reshape array of size {} into shape {}",
                values.len(),
                py_shape(shape)
            ),
        ));
    }
    if dtype.is_float0() {
        // np.array(values, dtype=float0): a structured void dtype takes no numbers.
        return match values.first() {
            None => Ok(Array::float0(ShapedArray::new(shape, dtype, false))),
            Some(v) => Err(Error::refused(
                Exception::TypeError,
                format!(
                    "a bytes-like object is required, not '{}'",
                    match v {
                        Value::Bool(_) => "bool",
                        Value::Int(_) => "int",
                        Value::Float(_) => "float",
                        Value::Complex(..) => "complex",
                    }
                ),
            )),
        };
    }
    let (width, words) = layout(dtype);
    let n = width * words;
    let mut bytes = vec![0u8; size * n];
    for (v, out) in values.iter().zip(bytes.chunks_exact_mut(n)) {
        let v = match (dtype.kind(), *v) {
            // np.array truncates floats into integer arrays.
            (Kind::SignedInt | Kind::UnsignedInt, Value::Float(x)) if x.is_finite() => {
                Value::Int(x.trunc() as i128)
            }
            (_, v) => v,
        };
        // NumPy refuses an int its integer dtype cannot hold; ml_dtypes' narrow integers
        // (int4, uint2, ...) wrap it.
        if let (Value::Int(i), Some((lo, hi))) = (v, dtype.int_range())
            && dtype.bits() >= 8
            && !(lo..=hi).contains(&i)
        {
            return Err(Error::refused(
                Exception::OverflowError,
                format!("Python integer {i} out of bounds for {dtype}"),
            ));
        }
        if let Value::Float(x) = v
            && let Some(code) = setitem_code(dtype, x)
        {
            out.copy_from_slice(&code.to_le_bytes()[..n]);
            continue;
        }
        encode_value(v, dtype, Semantics::NumPy, out)?;
    }
    Ok(Array::from_parts(
        ShapedArray::new(shape, dtype, false),
        Storage::from_bytes(width, &bytes),
    ))
}

/// The code ml_dtypes' `setitem` stores for a Python float in one of its float8, float6 and
/// float4 types (`np.array(v, dtype)`, which `jnp.array` calls): the double converted directly,
/// rounded once (float8_e8m0fnu takes a positive value below 2⁻¹²⁷ as 2⁻¹²⁷), where `astype`
/// from float64 rounds through float32. `None` for other dtypes (bfloat16's goes through
/// float32 too) and NaN.
fn setitem_code(dtype: DType, x: f64) -> Option<u64> {
    if !dtype_lattice::ufunc::is_ml_dtype(dtype) || dtype == DType::BFloat16 || x.is_nan() {
        return None;
    }
    let layout = crate::convert::minifloat::Layout::new(dtype.float_format()?);
    Some(layout.encode_f64(x))
}

fn too_large(shape: &[usize]) -> Error {
    Error::refused(
        Exception::ValueError,
        format!(
            "array is too big; the shape {} has too many elements",
            py_shape(shape)
        ),
    )
}

/// `jnp.full(shape, value, dtype)`: `value` converted as JAX converts a Python scalar,
/// broadcast (the elements are shared until written, as XLA's broadcast is free).
///
/// ```
/// use dtype_lattice::{DType, Value};
/// use dtype_lattice_array::numpy as jnp;
/// let x = jnp::full(&[2, 2], Value::Float(0.5), DType::Float16)?;
/// assert_eq!(x.to_string(), "Array([[0.5, 0.5],\n       [0.5, 0.5]], dtype=float16)");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// `OverflowError` for an integer the dtype cannot hold, `ValueError` for a shape too large.
pub fn full(shape: &[usize], value: Value, dtype: DType) -> Result<Array, Error> {
    checked_size(shape).ok_or_else(|| too_large(shape))?;
    let dtype = canonical(dtype);
    broadcast_to(scalar_array(value, dtype, false)?, shape)
}

/// `jnp.zeros(shape, dtype)`.
///
/// ```
/// use dtype_lattice::DType;
/// let z = dtype_lattice_array::numpy::zeros(&[3], DType::Int8)?;
/// assert_eq!(z.to_vec::<i8>()?, [0, 0, 0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`full`].
pub fn zeros(shape: &[usize], dtype: DType) -> Result<Array, Error> {
    full(shape, Value::Int(0), dtype)
}

/// `jnp.ones(shape, dtype)`.
///
/// ```
/// use dtype_lattice::DType;
/// let o = dtype_lattice_array::numpy::ones(&[2], DType::BFloat16)?;
/// assert_eq!(o.to_string(), "Array([1, 1], dtype=bfloat16)");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`full`].
pub fn ones(shape: &[usize], dtype: DType) -> Result<Array, Error> {
    full(shape, Value::Int(1), dtype)
}

/// `jnp.full_like(x, value)`: an array of `x`'s shape, dtype and weak type (as `lax.full_like`
/// keeps a weak type) filled with `value`.
///
/// ```
/// use dtype_lattice::Value;
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_vec(vec![1.0f32, 2.0]).with_weak_type(true);
/// let y = jnp::full_like(&x, Value::Float(1.5))?;
/// assert_eq!(y.to_string(), "Array([1.5, 1.5], dtype=float32, weak_type=True)");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`full`].
pub fn full_like(x: &Array, value: impl Into<Value>) -> Result<Array, Error> {
    let dtype = canonical(x.dtype());
    broadcast_to(scalar_array(value.into(), dtype, x.weak_type())?, x.shape())
}

/// `jnp.zeros_like(x)`: [`full_like`] with 0.
///
/// # Errors
///
/// As [`full`].
pub fn zeros_like(x: &Array) -> Result<Array, Error> {
    full_like(x, Value::Int(0))
}

/// `jnp.ones_like(x)`: [`full_like`] with 1.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let o = jnp::ones_like(&Array::from_vec(vec![3i8, 4]))?;
/// assert_eq!((o.dtype(), o.to_vec::<i8>()?), (DType::Int8, vec![1, 1]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`full`].
pub fn ones_like(x: &Array) -> Result<Array, Error> {
    full_like(x, Value::Int(1))
}

/// `jnp.arange(start, stop, step, dtype)` with concrete bounds, as NumPy computes it (which
/// is what `jnp.arange` does for concrete arguments): `ceil((stop - start) / step)` elements
/// `start + i * step`, computed in float64 (integers exactly), then converted.
///
/// ```
/// use dtype_lattice::DType;
/// let a = dtype_lattice_array::numpy::arange(0.0, 1.0, 0.25, DType::Float32)?;
/// assert_eq!(a.to_vec::<f32>()?, [0.0, 0.25, 0.5, 0.75]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// `ZeroDivisionError`-like `ValueError` for a zero step, `ValueError` for more elements than
/// memory holds.
pub fn arange(start: f64, stop: f64, step: f64, dtype: DType) -> Result<Array, Error> {
    if step == 0.0 || !step.is_finite() || !start.is_finite() || !stop.is_finite() {
        return Err(Error::refused(
            Exception::ValueError,
            "arange: step must be finite and non-zero, bounds finite",
        ));
    }
    let n = ((stop - start) / step).ceil().max(0.0);
    if n > crate::array::MAX_ELEMENTS as f64 {
        return Err(too_large(&[usize::MAX]));
    }
    let n = n as usize;
    if [start, step]
        .iter()
        .all(|v| v.fract() == 0.0 && v.abs() < 2f64.powi(53))
        && !dtype.is_extended()
        && dtype != DType::Bool
    {
        // As jnp.arange builds it from integers: `iota`, scaled and shifted (staged as such).
        return arange_iota(start, step, n, dtype);
    }
    let integral = matches!(dtype.kind(), Kind::SignedInt | Kind::UnsignedInt);
    let values: Vec<Value> = (0..n)
        .map(|i| {
            let x = start + i as f64 * step;
            if integral {
                Value::Int(x as i128)
            } else {
                Value::Float(x)
            }
        })
        .collect();
    array(&values, &[n], dtype)
}

/// `start + step * iota(n)`, leaving out a zero start and a unit step.
fn arange_iota(start: f64, step: f64, n: usize, dtype: DType) -> Result<Array, Error> {
    use crate::lax::{Param, Params};
    let iota = &crate::lax::IOTA;
    let params = Params::new()
        .with("dimension", Param::Int(0))
        .with("dtype", Param::DType(dtype))
        .with("shape", Param::Ints(vec![n as i64]))
        .with("sharding", Param::None);
    let mut x = crate::lax::bind(iota, &[], &params)?
        .into_iter()
        .next()
        .ok_or_else(|| too_large(&[n]))?;
    let konst = |v: f64| crate::array::scalar(v, dtype);
    if step != 1.0 {
        x = crate::lax::ops::mul(&konst(step)?, &x)?;
    }
    if start != 0.0 || step != 1.0 {
        x = crate::lax::ops::add(&konst(start)?, &x)?;
    }
    Ok(x)
}

/// `jnp.linspace(start, stop, num, dtype)` (endpoint included), computed as NumPy computes it
/// in float64 (`start + i * (stop - start) / (num - 1)`, the last element `stop` exactly),
/// then converted.
///
/// ```
/// use dtype_lattice::DType;
/// let a = dtype_lattice_array::numpy::linspace(0.0, 1.0, 5, DType::Float32)?;
/// assert_eq!(a.to_vec::<f32>()?, [0.0, 0.25, 0.5, 0.75, 1.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// `ValueError` for more elements than memory holds.
pub fn linspace(start: f64, stop: f64, num: usize, dtype: DType) -> Result<Array, Error> {
    if num > crate::array::MAX_ELEMENTS {
        return Err(too_large(&[num]));
    }
    let div = num.saturating_sub(1).max(1) as f64;
    let step = (stop - start) / div;
    let values: Vec<Value> = (0..num)
        .map(|i| {
            if num > 1 && i == num - 1 {
                Value::Float(stop)
            } else {
                Value::Float(start + i as f64 * step)
            }
        })
        .collect();
    array(&values, &[num], dtype)
}

/// `jnp.eye(n, m, dtype)`: ones on the diagonal.
///
/// ```
/// use dtype_lattice::DType;
/// let i = dtype_lattice_array::numpy::eye(2, None, DType::Int32)?;
/// assert_eq!(i.to_vec::<i32>()?, [1, 0, 0, 1]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// `ValueError` for more elements than memory holds.
pub fn eye(n: usize, m: Option<usize>, dtype: DType) -> Result<Array, Error> {
    let m = m.unwrap_or(n);
    let shape = [n, m];
    let size = checked_size(&shape).ok_or_else(|| too_large(&shape))?;
    if size > crate::array::MAX_ELEMENTS {
        return Err(too_large(&shape));
    }
    let values: Vec<Value> = (0..size)
        .map(|i| Value::Int(i128::from(i / m.max(1) == i % m.max(1))))
        .collect();
    array(&values, &shape, dtype)
}
