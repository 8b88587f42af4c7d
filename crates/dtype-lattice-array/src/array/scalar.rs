//! Scalar constants: Python values as zero-dimensional arrays of a dtype, converted as JAX
//! converts them (the constants of `jax.numpy`'s functions, of the primitives' rules and of
//! the PRNG).

use dtype_lattice::error::{Exception, Reason};
use dtype_lattice::{DType, Error, Kind, Value};

use super::{Array, ShapedArray, Storage, layout};

/// A Python scalar as a zero-dimensional array of `dtype`, as JAX converts it
/// (`lax._convert_element_type(x, dtype, weak_type)`).
pub(crate) fn scalar_array(v: Value, dtype: DType, weak: bool) -> Result<Array, Error> {
    if dtype.is_float0() {
        // lax.full((), 1, float0): whatever the value, float0's one element.
        return Ok(Array::float0(ShapedArray::new(&[], dtype, weak)));
    }
    let (width, words) = layout(dtype);
    let mut bytes = vec![0u8; width * words];
    encode_value(v, dtype, crate::config::semantics(), &mut bytes).map_err(|e| {
        match e.reason() {
            Reason::ValueOutOfRange { .. } => Error::refused(
                Exception::OverflowError,
                format!("Python int {v} too large to convert to {dtype}"),
            ),
            _ => e,
        }
    })?;
    Ok(Array::from_parts(
        ShapedArray::new(&[], dtype, weak),
        Storage::from_bytes(width, &bytes),
    ))
}

/// A Python scalar operand of a `jax.numpy` function as a zero-dimensional array of `dtype`,
/// as JAX gets it there: a `bool`, `float` or `complex` becomes a jit argument of its Python
/// type's canonical dtype on the host (NumPy's conversion: `np.float32(1e-40)` keeps the
/// subnormal), and XLA's `convert` takes it to `dtype` if that differs (denormals off there);
/// an `int` converts to `dtype` at once, wrapping, as `lax._convert_element_type` does (the
/// jitted functions have refused ints out of range before). Under NumPy's rules,
/// [`scalar_array`].
pub(crate) fn python_scalar_array(v: Value, dtype: DType, weak: bool) -> Result<Array, Error> {
    let r = crate::config::rules();
    let host = match v {
        _ if crate::config::is_numpy(&r) || dtype.is_extended() => None,
        Value::Bool(_) => Some(DType::Bool),
        Value::Float(_) => Some(DType::Float64),
        Value::Complex(..) => Some(DType::Complex128),
        Value::Int(_) => None,
    };
    let Some(host) = host.map(|d| d.canonicalize(r.options().x64)) else {
        return scalar_array(v, dtype, weak);
    };
    let (hw, hn) = layout(host);
    let mut staged = vec![0u8; hw * hn];
    encode_value(v, host, crate::convert::Semantics::NumPy, &mut staged)?;
    let (width, words) = layout(dtype);
    let mut bytes = vec![0u8; width * words];
    crate::convert::convert_element(
        crate::convert::Semantics::Jax,
        host,
        &staged,
        dtype,
        &mut bytes,
    )
    .map_err(|e| {
        Error::from(Reason::InvalidArgument {
            argument: "value".into(),
            reason: e.to_string(),
        })
    })?;
    Ok(Array::from_parts(
        ShapedArray::new(&[], dtype, weak),
        Storage::from_bytes(width, &bytes),
    ))
}

/// Writes one element of `dtype` holding the Python value `v` (converted as `sem` converts
/// a float64; integers exactly) into `out`.
pub(crate) fn encode_value(
    v: Value,
    dtype: DType,
    sem: crate::convert::Semantics,
    out: &mut [u8],
) -> Result<(), Error> {
    let value = match (dtype.kind(), v) {
        // A Python int converted to a narrower integer dtype wraps (XLA's convert; the
        // promotion rules have already refused ints outside the default integer's range).
        (Kind::SignedInt | Kind::UnsignedInt, Value::Int(_)) => v,
        // Floats are rounded by the converter below (NaN to float4 included), not here.
        (Kind::Float, Value::Float(_)) => v,
        _ => v.cast(dtype)?,
    };
    let component = |x: f64, out: &mut [u8], t: DType| {
        crate::convert::encode_f64(sem, t, x, out).map_err(|e| {
            Error::from(Reason::InvalidArgument {
                argument: "value".into(),
                reason: e.to_string(),
            })
        })
    };
    match (dtype.kind(), value) {
        (Kind::Complex, Value::Complex(re, im)) => {
            let half = out.len() / 2;
            let (a, b) = out.split_at_mut(half);
            component(re, a, dtype.component())?;
            component(im, b, dtype.component())
        }
        (_, Value::Bool(b)) => component(f64::from(u8::from(b)), out, dtype),
        (_, Value::Float(x)) => component(x, out, dtype),
        (_, Value::Int(i)) => {
            // Integers are exact: their two's complement bytes, little-endian.
            let raw = crate::convert::ints::wrap(i, dtype.bits());
            let n = out.len();
            out.copy_from_slice(&raw.to_le_bytes()[..n]);
            Ok(())
        }
        (_, Value::Complex(re, _)) => component(re, out, dtype),
    }
}

/// A scalar constant of `dtype` holding `value` (for rules: `2` in the derivative of
/// `square`), strongly typed.
pub(crate) fn scalar(value: f64, dtype: DType) -> Result<Array, Error> {
    let v = match dtype.kind() {
        Kind::Bool => Value::Bool(value != 0.0),
        Kind::SignedInt | Kind::UnsignedInt => Value::Int(value as i128),
        _ => Value::Float(value),
    };
    scalar_array(v, dtype, false)
}

impl Array {
    /// A Python scalar as JAX holds one where a function receives it (`lax.fori_loop(0, n,
    /// …)`'s bounds, a loop's initial carry): a zero-dimensional array of its kind's default
    /// dtype under the rules in force (`int32`, `float32`, `complex64` with x64 off), weakly
    /// typed (a `bool` is `bool`, strongly typed).
    ///
    /// ```
    /// use dtype_lattice_array::Array;
    /// let n = Array::python_scalar(3)?;
    /// assert_eq!((n.dtype().name(), n.weak_type()), ("int32", true));
    /// assert_eq!(Array::python_scalar(2.5)?.to_vec::<f32>()?, [2.5]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// JAX's `OverflowError` for an integer out of the default integer's range.
    pub fn python_scalar(v: impl Into<Value>) -> Result<Array, Error> {
        let v = v.into();
        let rules = crate::config::rules();
        let x64 = rules.options().x64;
        let (dtype, weak) = match v {
            Value::Bool(_) => (DType::Bool, false),
            Value::Int(_) => (crate::config::default_int(&rules), true),
            Value::Float(_) => (DType::Float64.canonicalize(x64), true),
            Value::Complex(..) => (DType::Complex128.canonicalize(x64), true),
        };
        python_scalar_array(v, dtype, weak)
    }
}
