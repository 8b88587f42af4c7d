//! Arrays printed exactly as JAX 0.10's `repr(jax.Array)` and NumPy 2's `repr(np.ndarray)`
//! print them, with NumPy's default print options (line width 75, summarisation above 1000
//! elements with 3 edge items, precision 8).
//!
//! The functions here know no array type: they take a dtype, a shape and the elements by
//! their flat row-major index, as [`Scalar`]s holding the exact values.
//!
//! ```
//! use dtype_lattice::DType;
//! use dtype_lattice_array::repr::{Scalar, jax_repr, numpy_repr};
//!
//! let xs = [1.0, 2.5, -0.0];
//! let f = |i: usize| Scalar::Float(xs[i]);
//! assert_eq!(jax_repr(DType::Float32, &[3], &f, false), "Array([ 1. ,  2.5, -0. ], dtype=float32)");
//! assert_eq!(numpy_repr(DType::Float64, &[3], &f), "array([ 1. ,  2.5, -0. ])");
//! assert_eq!(jax_repr(DType::Int32, &[], &|_| Scalar::Int(3), true), "Array(3, dtype=int32, weak_type=True)");
//! let m = |i: usize| Scalar::Int(i as i128 + 1);
//! assert_eq!(jax_repr(DType::Int8, &[2, 2], &m, false), "Array([[1, 2],\n       [3, 4]], dtype=int8)");
//! assert_eq!(jax_repr(DType::Float32, &[0, 3], &f, false), "Array([], shape=(0, 3), dtype=float32)");
//! ```
//!
//! What NumPy prints with its own rules (`bool`, its integers, `float16`, `float32`,
//! `float64`, `complex64`, `complex128`), values are aligned in columns and floats get their
//! shortest round-trip digits *in their own format*: a `float32` holding 0.1 prints `0.1`.
//! Scientific notation takes over when a non-zero magnitude is at least 1e8 or below 1e-4,
//! or when the largest is more than 1000 times the smallest:
//!
//! ```
//! # use dtype_lattice::DType;
//! # use dtype_lattice_array::repr::{Scalar, jax_repr};
//! let xs = [0.1f32 as f64, 1e8, f64::NAN];
//! assert_eq!(jax_repr(DType::Float32, &[3], &|i| Scalar::Float(xs[i]), false),
//!            "Array([1.e-01, 1.e+08,    nan], dtype=float32)");
//! let c = [(1.0, 2.0), (-0.5, -1.0)];
//! assert_eq!(jax_repr(DType::Complex64, &[2], &|i| Scalar::Complex(c[i].0, c[i].1), false),
//!            "Array([ 1. +2.j, -0.5-1.j], dtype=complex64)");
//! assert_eq!(jax_repr(DType::Bool, &[2], &|i| Scalar::Bool(i == 0), false),
//!            "Array([ True, False], dtype=bool)");
//! ```
//!
//! The ml_dtypes types (`bfloat16`, the float8/6/4 types, `int4`, `uint4`, `int2`, `uint2`)
//! are not numbers to NumPy's printer: each element prints as its scalar's `repr()`, without
//! alignment, which for the floats is C's `%g` (six significant digits). So a `bfloat16`
//! holding 0.1 (exactly 0.10009765625) prints `0.100098`, as JAX 0.10 with ml_dtypes 0.6 does:
//!
//! ```
//! # use dtype_lattice::{DType, Value};
//! # use dtype_lattice_array::repr::{Scalar, jax_repr};
//! let Value::Float(x) = Value::Float(0.1).cast(DType::BFloat16).unwrap() else { unreachable!() };
//! assert_eq!(jax_repr(DType::BFloat16, &[2], &|i| Scalar::Float([x, -8.0][i]), false),
//!            "Array([0.100098, -8], dtype=bfloat16)");
//! ```
//!
//! Key arrays print their shape and their key data (`uint32` words) under it:
//!
//! ```
//! # use dtype_lattice::DType;
//! # use dtype_lattice_array::repr::{Scalar, jax_repr};
//! assert_eq!(jax_repr(DType::KeyThreefry2x32, &[], &|_| Scalar::KeyData(vec![0, 0]), false),
//!            "Array((), dtype=key<fry>) overlaying:\n[0 0]");
//! ```
//!
//! `float0` arrays (the tangents of integers) are NumPy arrays of a structured void dtype
//! in JAX, each element `(b'',)`; JAX 0.10 returns them as its `TypedNdArray`:
//!
//! ```
//! # use dtype_lattice::DType;
//! # use dtype_lattice_array::repr::{Scalar, jax_repr, numpy_repr};
//! assert_eq!(jax_repr(DType::Float0, &[2], &|_| Scalar::Float0, false),
//!            "TypedNdArray([(b'',), (b'',)], dtype=void)");
//! assert_eq!(numpy_repr(DType::Float0, &[], &|_| Scalar::Float0),
//!            "array((b'',), dtype=[('float0', 'V')])");
//! ```

mod digits;
mod element;
mod layout;

use dtype_lattice::{DType, Kind};

use element::Element;
pub use layout::{EDGE_ITEMS, LINE_WIDTH, THRESHOLD};

/// One element's value, exactly as the array holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    /// A `bool` element.
    Bool(bool),
    /// An integer element (any integer dtype, sub-byte ones included).
    Int(i128),
    /// A real floating-point element: the exact value of the dtype's element (for the narrow
    /// formats: the value it stands for, such as `0.10009765625` for `bfloat16(0.1)`). A
    /// value the dtype does not hold is first rounded to it (to nearest, ties to even).
    Float(f64),
    /// A complex element `(re, im)`, each component exact in the component dtype.
    Complex(f64, f64),
    /// A PRNG key: its key data (`key_words` `uint32` words, as `jax.random.key_data` gives).
    KeyData(Vec<u32>),
    /// A `float0` element: the one value of the trivial vector space (NumPy's `(b'',)`).
    Float0,
}

/// A shape as Python prints a tuple: `()`, `(3,)`, `(2, 3)`.
fn py_tuple(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => {
            let items: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
            format!("({})", items.join(", "))
        }
    }
}

/// NumPy's `array2string` with `prefix` before it on the first line, `suffix` after it and
/// `separator` between elements; `"[]"` for an empty array.
fn array2string(
    dtype: DType,
    shape: &[usize],
    element: &dyn Fn(usize) -> Scalar,
    separator: &str,
    prefix: &str,
    suffix: &str,
) -> String {
    let size: usize = shape.iter().product();
    if size == 0 {
        return "[]".to_string();
    }
    let summarise = size > THRESHOLD;
    let shown: Vec<Scalar> = layout::shown_indices(shape, summarise)
        .into_iter()
        .map(element)
        .collect();
    let format = Element::new(dtype, &shown, shape.is_empty());
    let mut word = |i: usize| format.format(&element(i));
    layout::layout(
        shape,
        &mut word,
        separator,
        prefix.len(),
        LINE_WIDTH - suffix.len(),
        summarise,
    )
}

/// What JAX 0.10's `repr()` prints for an array of `dtype` and `shape` whose element at flat
/// row-major index `i` is `element(i)`; `weak_type` is JAX's weak-type flag.
///
/// `float0` arrays print as JAX 0.10 prints its `TypedNdArray` (the NumPy arrays it returns
/// for `float0` tangents): `TypedNdArray([(b'',), (b'',)], dtype=void)`.
///
/// Key dtypes ([`Kind::Extended`]) take [`Scalar::KeyData`] elements and print as
/// `Array(SHAPE, dtype=key<…>) overlaying:` followed by the key data as NumPy's `str()`
/// prints a `uint32` array of shape `SHAPE + (key_words,)`.
///
/// `element` is called only for the elements shown (twice each: once to align them, once to
/// print them), so summarised arrays cost little whatever their size.
///
/// # Panics
///
/// If an element does not fit the dtype (a float for a key dtype, key data of the wrong
/// length, …).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::repr::{Scalar, jax_repr};
/// let r = jax_repr(DType::Float32, &[2000], &|i| Scalar::Float(i as f64), false);
/// assert_eq!(r, "Array([0.000e+00, 1.000e+00, 2.000e+00, ..., 1.997e+03, 1.998e+03,\n       1.999e+03], dtype=float32)");
/// ```
pub fn jax_repr(
    dtype: DType,
    shape: &[usize],
    element: &dyn Fn(usize) -> Scalar,
    weak_type: bool,
) -> String {
    if dtype.kind() == Kind::Extended {
        return key_repr(dtype, shape, element);
    }
    // float0 values are NumPy arrays, which JAX 0.10 returns as `TypedNdArray`s.
    let prefix = if dtype.is_float0() {
        "TypedNdArray("
    } else {
        "Array("
    };
    let dtype_text = if weak_type {
        format!("dtype={}, weak_type=True", dtype.numpy_name())
    } else {
        format!("dtype={}", dtype.numpy_name())
    };
    let size: usize = shape.iter().product();
    let body = if size == 0 {
        format!("[], shape={}", py_tuple(shape))
    } else {
        array2string(dtype, shape, element, ", ", prefix, ",")
    };
    // JAX measures the last line from after its newline, plus two (or the whole text plus
    // two), and when the dtype would not fit puts spaces, not a newline, before it.
    let last_line = match body.rfind('\n') {
        Some(p) => body.len() - p + 1,
        None => body.len() + 2,
    };
    let sep = if last_line + dtype_text.len() + 2 > LINE_WIDTH {
        " ".repeat(prefix.len())
    } else {
        " ".to_string()
    };
    format!("{prefix}{body},{sep}{dtype_text})")
}

fn key_repr(dtype: DType, shape: &[usize], element: &dyn Fn(usize) -> Scalar) -> String {
    let words = dtype.key_impl().expect("key dtype").key_words;
    let mut data_shape = shape.to_vec();
    data_shape.push(words);
    let data = |i: usize| match element(i / words) {
        Scalar::KeyData(d) => {
            assert_eq!(
                d.len(),
                words,
                "{dtype} keys have {words} words of key data"
            );
            Scalar::Int(d[i % words] as i128)
        }
        other => panic!("{dtype} elements are key data, got {other:?}"),
    };
    let text = array2string(DType::UInt32, &data_shape, &data, " ", "", "");
    format!(
        "Array({}, dtype={}) overlaying:\n{text}",
        py_tuple(shape),
        dtype.name()
    )
}

/// What NumPy 2's `repr()` prints for an `np.ndarray` (ml_dtypes' types included): the same
/// text as [`jax_repr`] but for the prefix `array(`, and NumPy's rules for what follows: no
/// dtype for `float64`, `int64`, `bool` and `complex128` unless the array is empty,
/// `shape=…` for empty arrays (but shape `(0,)`) and summarised ones, and names that are not
/// alphanumeric quoted (`dtype='float8_e4m3fn'`). Those go on a new line if they do not fit.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::repr::{Scalar, numpy_repr};
/// assert_eq!(numpy_repr(DType::Int64, &[2], &|i| Scalar::Int(i as i128)), "array([0, 1])");
/// assert_eq!(numpy_repr(DType::Float8E4M3Fn, &[1], &|_| Scalar::Float(1.5)), "array([1.5], dtype='float8_e4m3fn')");
/// assert_eq!(numpy_repr(DType::Float64, &[0], &|_| Scalar::Float(0.0)), "array([], dtype=float64)");
/// ```
///
/// # Panics
///
/// For key dtypes (NumPy has none), and as [`jax_repr`] for elements that do not fit.
pub fn numpy_repr(dtype: DType, shape: &[usize], element: &dyn Fn(usize) -> Scalar) -> String {
    assert!(
        dtype.kind() != Kind::Extended,
        "NumPy has no {dtype} arrays"
    );
    let prefix = "array(";
    let size: usize = shape.iter().product();
    let body = array2string(dtype, shape, element, ", ", prefix, ")");
    let mut extras = Vec::new();
    if (size == 0 && shape != [0]) || size > THRESHOLD {
        extras.push(format!("shape={}", py_tuple(shape)));
    }
    let implied = matches!(
        dtype,
        DType::Float64 | DType::Int64 | DType::Bool | DType::Complex128
    );
    if dtype.is_float0() {
        extras.push(format!("dtype={}", dtype.numpy_str()));
    } else if !implied || size == 0 {
        let name = dtype.name();
        if name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric())
        {
            extras.push(format!("dtype={name}"));
        } else {
            extras.push(format!("dtype='{name}'"));
        }
    }
    if extras.is_empty() {
        return format!("{prefix}{body})");
    }
    let head = format!("{prefix}{body},");
    let extra = format!("{})", extras.join(", "));
    let last_line = head.len() - head.rfind('\n').map_or(0, |p| p + 1);
    let spacer = if last_line + extra.len() + 1 > LINE_WIDTH {
        format!("\n{}", " ".repeat(prefix.len()))
    } else {
        " ".to_string()
    };
    format!("{head}{spacer}{extra}")
}

// ---- the printer's view of an array, and `Display`

impl crate::array::Array {
    /// Element `i` (row-major) as the printer takes it.
    /// Element `i` of the flattened (row-major) array, `None` past the end.
    ///
    /// ```
    /// use dtype_lattice_array::{Array, repr::Scalar};
    /// let x = Array::from_vec(vec![1.5f32, -2.0]);
    /// assert_eq!(x.element(1), Some(Scalar::Float(-2.0)));
    /// assert_eq!(x.element(2), None);
    /// ```
    pub fn element(&self, i: usize) -> Option<Scalar> {
        (i < self.size() && self.is_concrete()).then(|| self.scalar_at(i))
    }

    fn scalar_at(&self, i: usize) -> Scalar {
        let dtype = self.dtype();
        let (width, words) = crate::array::layout(dtype);
        let size = width * words;
        if dtype.is_float0() {
            return Scalar::Float0;
        }
        let bytes = &self.as_bytes()[i * size..(i + 1) * size];
        if dtype.is_extended() {
            let words = bytes
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
            return Scalar::KeyData(words.collect());
        }
        let float = |t: DType, b: &[u8]| crate::convert::decode_f64(t, b).unwrap_or(f64::NAN);
        match dtype.kind() {
            dtype_lattice::Kind::Bool => Scalar::Bool(bytes[0] != 0),
            dtype_lattice::Kind::SignedInt | dtype_lattice::Kind::UnsignedInt => {
                let mut raw = [0u8; 8];
                raw[..size.min(8)].copy_from_slice(&bytes[..size.min(8)]);
                Scalar::Int(crate::convert::ints::decode(
                    u64::from_le_bytes(raw),
                    dtype.bits(),
                    dtype.kind() == dtype_lattice::Kind::SignedInt,
                ))
            }
            dtype_lattice::Kind::Complex => {
                let (re, im) = bytes.split_at(size / 2);
                Scalar::Complex(float(dtype.component(), re), float(dtype.component(), im))
            }
            _ => Scalar::Float(float(dtype, bytes)),
        }
    }
}

impl std::fmt::Display for crate::array::Array {
    /// As JAX prints `repr(x)`: `Array([1., 2.], dtype=float32)`, `weak_type=True` when weak.
    ///
    /// ```
    /// use dtype_lattice_array::Array;
    /// let x = Array::from_vec(vec![1.0f32, 2.0]);
    /// assert_eq!(x.to_string(), "Array([1., 2.], dtype=float32)");
    /// assert_eq!(Array::scalar(3i32).with_weak_type(true).to_string(), "Array(3, dtype=int32, weak_type=True)");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(t) = self.tracer() {
            return write!(f, "Traced<{}>with<{}>", self.aval(), t.trace_name());
        }
        let text = jax_repr(
            self.dtype(),
            self.shape(),
            &|i| self.scalar_at(i),
            self.weak_type(),
        );
        f.write_str(&text)
    }
}

impl crate::array::Array {
    /// As Python prints `str(x)` (and `print(x)`) for a JAX array: NumPy's `str()` of its
    /// values, `[3. 3. 3. 3.]`; a tracer as its `repr`.
    ///
    /// ```
    /// use dtype_lattice_array::Array;
    /// assert_eq!(Array::from_vec(vec![3.0f32, 3.0]).str(), "[3. 3.]");
    /// assert_eq!(Array::scalar(2i32).str(), "2");
    /// assert_eq!(Array::scalar(3.0f32).str(), "3.0");
    /// assert_eq!(Array::scalar(true).str(), "True");
    /// ```
    pub fn str(&self) -> String {
        if self.tracer().is_some() || self.dtype().kind() == Kind::Extended {
            return self.to_string();
        }
        let text = array2string(
            self.dtype(),
            self.shape(),
            &|i| self.scalar_at(i),
            " ",
            "",
            "",
        );
        // A 0-d array prints as its scalar: Python's `3.0`, where the array form has `3.`.
        if self.ndim() == 0 && text.ends_with('.') {
            return format!("{text}0");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::BTreeSet;

    #[test]
    fn a_summarised_array_reads_only_its_corners() {
        let read = RefCell::new(BTreeSet::new());
        let element = |i: usize| {
            read.borrow_mut().insert(i);
            Scalar::Float(i as f64)
        };
        let text = jax_repr(DType::Float32, &[1000, 1000], &element, false);
        let read = read.into_inner();
        let corners: BTreeSet<usize> = [0, 1, 2, 997, 998, 999]
            .iter()
            .flat_map(|r| [0, 1, 2, 997, 998, 999].map(|c| r * 1000 + c))
            .collect();
        assert_eq!(read, corners);
        assert_eq!(text.matches("...").count(), 7, "{text}");
    }

    #[test]
    fn values_the_dtype_does_not_hold_are_rounded_to_it_first() {
        for dtype in [
            DType::BFloat16,
            DType::Float16,
            DType::Float32,
            DType::Float8E4M3Fn,
        ] {
            let dtype_lattice::Value::Float(held) =
                dtype_lattice::Value::Float(0.1).cast(dtype).unwrap()
            else {
                unreachable!()
            };
            assert_eq!(
                jax_repr(dtype, &[2], &|i| Scalar::Float([0.1, 3.0][i]), false),
                jax_repr(dtype, &[2], &|i| Scalar::Float([held, 3.0][i]), false),
            );
        }
    }

    #[test]
    fn deep_arrays_do_not_run_out_of_width() {
        let text = jax_repr(DType::Int8, &[1; 80], &|_| Scalar::Int(1), false);
        assert!(text.starts_with(&format!("Array({}1{}", "[".repeat(80), "]".repeat(80))));
    }
}
