//! Element conversions (`astype`) between every pair of JAX's dtypes, bit for bit with
//! NumPy 2 + ml_dtypes and JAX 0.10 (XLA CPU), and fast.
//!
//! # Storage convention
//!
//! Each element is stored in its own bytes, little-endian, as NumPy and ml_dtypes store them:
//!
//! | dtypes | bytes per element |
//! |---|---|
//! | `bool` (0 or 1), float8/float6/float4 (`float8_e4m3fn`, …, `float4_e2m1fn`), int4/int2/int1, uint4/uint2/uint1, int8, uint8 | 1 (sub-byte values in the low bits) |
//! | `float16`, `bfloat16`, int16, uint16 | 2 |
//! | `float32`, int32, uint32 | 4 |
//! | `float64`, int64, uint64 | 8 |
//! | `complex32`, `bcomplex32`, `complex64`, `complex128` | two components, real then imaginary (4, 4, 8, 16) |
//!
//! [`element_size`] gives the size. Sub-byte elements are written with zero high bits; on
//! reading, integers use only their low bits and signed sub-byte floats read any bit above the
//! magnitude as the sign, as ml_dtypes does.
//!
//! # Semantics
//!
//! These conversions are written by hand: no Rust crate gets them right (the `float8` crate
//! saturates like CUDA, turning inf into 448 where both libraries give NaN; `microfloat` differs
//! from ml_dtypes at float8_e4m3fn's 464 tie, float8_e8m0fnu's subnormal inputs and negative
//! NaN to float4/float6). One generic codec ([`minifloat`]) serves every float format from its
//! [`FloatFormat`](dtype_lattice::FloatFormat) row, and one engine ([`scalar::convert`]) every
//! pair, under a [`Semantics`]: [`Semantics::Jax`] (the default: JAX 0.10 on XLA's CPU backend,
//! x64 on) or [`Semantics::NumPy`] (NumPy 2 + ml_dtypes 0.6). Where they differ, the difference
//! is a row of data (a rounding route, a NaN rule, a
//! flag), not a second implementation. Both are tested bit for bit, NaNs included, against
//! their library's results in `tests/fixtures/convert/` (`tools/gen_convert_fixtures.py`).
//!
//! What both do:
//!
//! - **float → float**: round to nearest, ties to even. Overflow becomes inf where the format
//!   has inf, else NaN (no saturation); only float4/float6, which have neither, saturate to
//!   their largest value. Values below the smallest subnormal round to a zero of the same sign
//!   (`+0` for the `fnuz` formats, which have no negative zero); float8_e8m0fnu (unsigned, no
//!   zero) turns 0, negative values and NaN into its NaN `0xff`, and rounds every value strictly
//!   between 2^-127 and 2^-126 up.
//! - **int → int**: wraps modulo `2^bits` (sign-extended into int4/int2/int1).
//! - **int → float**: rounded once, except 32/64-bit integers → bfloat16/float8_e8m0fnu, which
//!   both round through float32 (twice).
//! - **bool**: `x != 0` (NaN is true; a complex number is true if either part is non-zero);
//!   `True` → 1. **complex → real**: the real part; **real → complex**: imaginary part `+0`.
//!
//! Where they differ (the counts over the fixtures' inputs are in `tools/README.md`):
//!
//! | | NumPy + ml_dtypes | JAX (XLA CPU) |
//! |---|---|---|
//! | float64 → bfloat16/float8/float6/float4/e8m0fnu | through float32 (twice) | once, except → bfloat16 (below) and → e8m0fnu: values below 2^-127 are NaN |
//! | float64 → float32/float16/bfloat16 | once (float16, float32), through float32 (bfloat16) | through float32, subnormal float32 results flushed to zero |
//! | float32 → float64, bfloat16 → float64, float32/float64 → bool | exact | subnormal inputs read as zero (DAZ) |
//! | NaN payloads | NumPy's own casts keep them, others canonical | `scalar::nan_rule`: quieted where kept; `0x7f` into e5m2 from ≤16-bit formats; `fnuz` NaN is positive |
//! | NaN → float4_e2m1fn | zero of the opposite sign | `0x8` (-0) |
//! | float → int | truncation; out of range or NaN (undefined in C) as x86-64 gives them: `INT_MIN`/`0x8000…` and their low bits (`scalar::x86_cast`), float → uint32 otherwise in NumPy's vectorised loop (the leading elements of float32/float64/bfloat16/complex arrays, [`scalar::numpy_uint32_vector_len`]); ml_dtypes' float8: NaN → 0, ±inf → the bounds | saturating: NaN → 0, beyond the range → the nearest bound; float4_e2m1fn's ±6.0 read as ±inf |
//! | → int1 | wraps (low bit) | a predicate: `x != 0` → 1 (a complex number's real part; e8m0fnu's 2^-127 is 0) |
//!
//! JAX cannot hold uint1, float6_e2m3fn/float6_e3m2fn or complex32/bcomplex32 arrays on CPU, nor
//! take int1 arrays as input; for those pairs [`Semantics::Jax`] computes the same rules (and
//! NumPy's for int1 sources), untested against JAX. ml_dtypes refuses float8_e8m0fnu with the
//! sub-byte integers and the other narrow floats; [`Semantics::NumPy`] converts those pairs by
//! the same rules, untested.
//!
//! # Speed
//!
//! [`convert`] is table-driven where that is fastest (a 256-entry table of results for every
//! 8-bit source, a 65,536-entry one for large 16-bit sources), encodes float32 into the narrow
//! floats with branch-free bit manipulation that LLVM vectorises ([`fast`]), and splits large
//! slices over the available cores with `std::thread::scope`.
//!
//! ```
//! use dtype_lattice::DType;
//! use dtype_lattice_array::convert::{
//!     Semantics, convert_to_vec, convert_to_vec_with, decode_f64, encode_f64,
//! };
//!
//! let src: Vec<u8> = [464.0f32, 465.0, f32::INFINITY, 1e-9]
//!     .iter().flat_map(|x| x.to_le_bytes()).collect();
//! let f8 = convert_to_vec(DType::Float32, &src, DType::Float8E4M3Fn)?;
//! assert_eq!(f8, [0x7e, 0x7f, 0x7f, 0x00]); // 448 (tie to even), NaN, NaN (no saturation), 0
//! assert_eq!(decode_f64(DType::Float8E4M3Fn, &[0x7e])?, 448.0);
//! let mut out = [0u8; 1];
//! encode_f64(Semantics::Jax, DType::Int4, -100.0, &mut out)?;
//! assert_eq!(out, [0x08]); // saturates to -8, stored in the low 4 bits
//! // float64 -> float16 through float32 under JAX: 2^-25 (1 + 2^-52) ties there, then to even.
//! let x = (2f64.powi(-25) * (1.0 + f64::EPSILON)).to_le_bytes();
//! assert_eq!(convert_to_vec(DType::Float64, &x, DType::Float16)?, [0x00, 0x00]);
//! assert_eq!(convert_to_vec_with(Semantics::NumPy, DType::Float64, &x, DType::Float16)?, [0x01, 0x00]);
//! # Ok::<(), dtype_lattice_array::convert::Error>(())
//! ```

pub mod fast;
pub mod ints;
pub mod minifloat;
pub mod scalar;
#[allow(unsafe_code)]
mod slice;

use std::fmt;

use dtype_lattice::DType;

pub use slice::{convert, convert_to_vec, convert_to_vec_with, convert_with};

use scalar::{Class, Value};

/// Whose conversions to reproduce. The two agree on most pairs; every difference is listed in
/// the module doc, and each side is tested against its own library's results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Semantics {
    /// JAX 0.10 on CPU (XLA's CPU backend), `x.astype(t)` jitted or eagerly, x64 on: the
    /// default, as everywhere in this crate.
    #[default]
    Jax,
    /// NumPy 2 + ml_dtypes 0.6, `x.astype(t)`.
    NumPy,
}

/// Why a conversion was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The dtype has no numeric elements (a PRNG key dtype).
    NotNumeric(DType),
    /// A buffer's length is not a whole number of elements, or the two buffers hold different
    /// numbers of elements.
    Length {
        /// The source dtype.
        src: DType,
        /// Source bytes.
        src_len: usize,
        /// The destination dtype.
        dst: DType,
        /// Destination bytes.
        dst_len: usize,
    },
    /// The dtype's values are not all exactly float32 values ([`decode_f32`]).
    Inexact(DType),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotNumeric(t) => write!(f, "{t} has no numeric elements to convert"),
            Error::Length {
                src,
                src_len,
                dst,
                dst_len,
            } => write!(
                f,
                "cannot convert {src_len} bytes of {src} ({} bytes per element) into {dst_len} bytes of {dst} ({} bytes per element)",
                element_size(*src).unwrap_or(0),
                element_size(*dst).unwrap_or(0)
            ),
            Error::Inexact(t) => write!(f, "{t} values are not all exactly float32 values"),
        }
    }
}

impl std::error::Error for Error {}

fn class(t: DType) -> Result<Class, Error> {
    Class::of(t).ok_or(Error::NotNumeric(t))
}

/// Bytes of one stored element of `t` (the storage convention above); `None` for key dtypes.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::convert::element_size;
/// assert_eq!(element_size(DType::Int4), Some(1));
/// assert_eq!(element_size(DType::Complex32), Some(4));
/// ```
pub fn element_size(t: DType) -> Option<usize> {
    Class::of(t).map(|c| c.size())
}

fn one(t: DType, bytes: &[u8]) -> Result<Class, Error> {
    let c = class(t)?;
    if bytes.len() != c.size() {
        return Err(Error::Length {
            src: t,
            src_len: bytes.len(),
            dst: t,
            dst_len: c.size(),
        });
    }
    Ok(c)
}

/// Converts one stored element of `src` into `dst` (both slices exactly one element long)
/// under `sem`.
///
/// # Errors
///
/// [`Error::NotNumeric`] for key dtypes, [`Error::Length`] if a slice is not one element.
pub fn convert_element(
    sem: Semantics,
    src: DType,
    element: &[u8],
    dst: DType,
    out: &mut [u8],
) -> Result<(), Error> {
    let sc = one(src, element)?;
    let dc = one(dst, out)?;
    if src == dst {
        out.copy_from_slice(element);
        return Ok(());
    }
    scalar::store(scalar::convert(sem, &sc, scalar::load(element), &dc), out);
    Ok(())
}

/// The value of one stored element as a float64 (the real part of a complex number; an
/// integer beyond 2^53 rounded to nearest even; bool as 0 or 1).
///
/// # Errors
///
/// [`Error::NotNumeric`] for key dtypes, [`Error::Length`] if `element` is not one element.
pub fn decode_f64(t: DType, element: &[u8]) -> Result<f64, Error> {
    let c = one(t, element)?;
    Ok(match scalar::decode(&c, scalar::load(element)) {
        Value::Int(i) => {
            f64::from_bits(f64_layout().encode_parts(i < 0, i.unsigned_abs() as u64, 0))
        }
        Value::Real(r, l) | Value::Complex(r, _, l) => l.decode(r),
    })
}

/// The value of one stored element as a float32, for the dtypes whose values all are float32
/// values (every dtype of at most 16 bits, float32, complex32/bcomplex32/complex64's real part).
///
/// # Errors
///
/// [`Error::Inexact`] for float64, complex128 and the 32/64-bit integers;
/// [`Error::NotNumeric`], [`Error::Length`] as [`decode_f64`].
pub fn decode_f32(t: DType, element: &[u8]) -> Result<f32, Error> {
    let c = one(t, element)?;
    let exact = match c {
        Class::Bool => true,
        Class::Int { bits, .. } => bits <= 16,
        Class::Float(l) | Class::Complex(l) => l.m <= 23 && l.e <= 8,
    };
    if !exact {
        return Err(Error::Inexact(t));
    }
    Ok(decode_f64(t, element)? as f32)
}

fn f64_layout() -> minifloat::Layout {
    minifloat::Layout::new(DType::Float64.float_format().expect("float64 is a float"))
}

fn f32_layout() -> minifloat::Layout {
    minifloat::Layout::new(DType::Float32.float_format().expect("float32 is a float"))
}

/// Writes `x` as one element of `t`, as a float64 element converted under `sem`
/// (`np.float64(x).astype(t)`, or `jnp.float64(x).astype(t)` with x64 on).
///
/// # Errors
///
/// [`Error::NotNumeric`] for key dtypes, [`Error::Length`] if `out` is not one element.
pub fn encode_f64(sem: Semantics, t: DType, x: f64, out: &mut [u8]) -> Result<(), Error> {
    let dc = one(t, out)?;
    let sc = Class::Float(f64_layout());
    scalar::store(scalar::convert(sem, &sc, u128::from(x.to_bits()), &dc), out);
    Ok(())
}

/// Writes `x` as one element of `t`, as a float32 element converted under `sem`.
///
/// # Errors
///
/// [`Error::NotNumeric`] for key dtypes, [`Error::Length`] if `out` is not one element.
pub fn encode_f32(sem: Semantics, t: DType, x: f32, out: &mut [u8]) -> Result<(), Error> {
    let dc = one(t, out)?;
    let sc = Class::Float(f32_layout());
    scalar::store(scalar::convert(sem, &sc, u128::from(x.to_bits()), &dc), out);
    Ok(())
}
