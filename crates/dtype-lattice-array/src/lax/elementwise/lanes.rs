//! Compute lanes: the one mechanism by which every elementwise primitive runs on every dtype
//! XLA's CPU backend holds, as that backend computes it.
//!
//! A dtype's elements are loaded into its *lane* type, the kernel runs on lanes, and the
//! results are stored back into the output dtype, rounded or wrapped once per primitive:
//!
//! | dtypes | lane | store |
//! |---|---|---|
//! | bool, the 8- to 64-bit integers, float64, complex64/128 | itself | as is |
//! | int4, int2 | `i8` (sign-extended) | wrapped to the width |
//! | uint4, uint2 | `u8` | wrapped to the width |
//! | float32, float16, bfloat16, every float8/float6/float4 format | `f32` | rounded to nearest even ([`crate::convert`]'s float32 encoder under JAX's semantics) |
//!
//! Loading an 8-bit float is one lookup in a 256-entry table of its float32 values.
//!
//! To run an operation on float32 and round to a low-precision dtype from another module:
//! `let xs: Vec<f32> = f32::load(&x); let ys = xs.iter().map(|v| v.exp()).collect();
//! Array::from_parts(aval, f32::store(aval.dtype(), ys))` (see [`with_lane!`] for the dtype to
//! lane dispatch).

use dtype_lattice::DType;
use half::{bf16, f16};
use num_complex::Complex;

use crate::array::storage::sealed::Words;
use crate::array::{Array, Element, Storage};

/// A type kernels compute in (see the module doc).
pub(crate) trait Lane: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// The elements of `x` (whose dtype has this lane) as lanes.
    fn load(x: &Array) -> Vec<Self>;
    /// Lanes as the storage of `dtype` (rounded or wrapped to it).
    fn store(dtype: DType, v: Vec<Self>) -> Storage;
    /// [`Lane::load`] without flushing subnormals (for the sign and bit operations, which XLA
    /// computes without the floating-point unit: `neg`, `abs`, `real`, `imag`, `conj`).
    fn load_raw(x: &Array) -> Vec<Self> {
        Self::load(x)
    }
    /// [`Lane::store`] without flushing subnormals.
    fn store_raw(dtype: DType, v: Vec<Self>) -> Storage {
        Self::store(dtype, v)
    }
}

fn native_load<T: Element>(x: &Array) -> Vec<T> {
    T::Word::view(x.storage())
        .unwrap_or(&[])
        .iter()
        .map(|&w| T::from_word(w))
        .collect()
}

fn native_store<T: Element>(v: Vec<T>) -> Storage {
    T::Word::into_storage(v.into_iter().map(T::to_word).collect())
}

macro_rules! native_lane {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            fn load(x: &Array) -> Vec<Self> { native_load::<$t>(x) }
            fn store(_: DType, v: Vec<Self>) -> Storage { native_store(v) }
        }
    )*};
}
native_lane!(bool, i16, i32, i64, u16, u32, u64);

/// Flushes a subnormal to a zero of its sign (XLA's CPU backend runs with denormals off:
/// subnormal float32/bfloat16/float64 inputs, float8_e8m0fnu's 2⁻¹²⁷ among them, read as zero
/// and results are flushed).
trait Flush: Copy {
    fn flush(self) -> Self;
}

pub(crate) use crate::kernels::flush::{flush32, flush64};

impl Flush for f32 {
    #[inline(always)]
    fn flush(self) -> Self {
        flush32(self)
    }
}

impl Flush for f64 {
    #[inline(always)]
    fn flush(self) -> Self {
        flush64(self)
    }
}

macro_rules! flushed_lane {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            fn load(x: &Array) -> Vec<Self> {
                let mut v = native_load::<$t>(x);
                v.iter_mut().for_each(|e| *e = e.flush());
                v
            }
            fn store(_: DType, mut v: Vec<Self>) -> Storage {
                v.iter_mut().for_each(|e| *e = e.flush());
                native_store(v)
            }
            fn load_raw(x: &Array) -> Vec<Self> {
                native_load::<$t>(x)
            }
            fn store_raw(_: DType, v: Vec<Self>) -> Storage {
                native_store(v)
            }
        }
    )*};
}
flushed_lane!(f64);

/// Complex numbers: subnormal inputs are read as they are, results are flushed.
macro_rules! complex_lane {
    ($($t:ty),*) => {$(
        impl Lane for Complex<$t> {
            fn load(x: &Array) -> Vec<Self> {
                native_load::<Complex<$t>>(x)
            }
            fn store(_: DType, mut v: Vec<Self>) -> Storage {
                v.iter_mut().for_each(|e| *e = Complex::new(e.re.flush(), e.im.flush()));
                native_store(v)
            }
            fn store_raw(_: DType, v: Vec<Self>) -> Storage {
                native_store(v)
            }
        }
    )*};
}
complex_lane!(f32, f64);

/// The width in bits of a narrow integer dtype (8 for the others).
fn int_bits(dtype: DType) -> u32 {
    dtype.bits().min(8)
}

impl Lane for i8 {
    fn load(x: &Array) -> Vec<i8> {
        let sh = 8 - int_bits(x.dtype());
        let words = u8::view(x.storage()).unwrap_or(&[]);
        words.iter().map(|&w| ((w << sh) as i8) >> sh).collect()
    }
    fn store(dtype: DType, v: Vec<i8>) -> Storage {
        let mask = (0xffu16 >> (8 - int_bits(dtype))) as u8;
        u8::into_storage(v.into_iter().map(|x| x as u8 & mask).collect())
    }
}

impl Lane for u8 {
    fn load(x: &Array) -> Vec<u8> {
        let mask = (0xffu16 >> (8 - int_bits(x.dtype()))) as u8;
        let words = u8::view(x.storage()).unwrap_or(&[]);
        words.iter().map(|&w| w & mask).collect()
    }
    fn store(dtype: DType, v: Vec<u8>) -> Storage {
        let mask = (0xffu16 >> (8 - int_bits(dtype))) as u8;
        u8::into_storage(v.into_iter().map(|x| x & mask).collect())
    }
}

/// The float32 values of every byte of an 8-bit (or narrower) float dtype.
pub(crate) fn decode_table(dtype: DType) -> [f32; 256] {
    let mut t = [f32::NAN; 256];
    for (b, slot) in t.iter_mut().enumerate() {
        if let Ok(v) = crate::convert::decode_f32(dtype, &[b as u8]) {
            *slot = v;
        }
    }
    t
}

impl Lane for f32 {
    fn load_raw(x: &Array) -> Vec<f32> {
        match x.storage() {
            Storage::W32(v) => v.iter().map(|&w| f32::from_bits(w)).collect(),
            Storage::W16(v) if x.dtype() == DType::BFloat16 => {
                v.iter().map(|&w| bf16::from_bits(w).to_f32()).collect()
            }
            Storage::W8(v) => {
                let t = decode_table(x.dtype());
                v.iter().map(|&w| t[usize::from(w)]).collect()
            }
            _ => Self::load(x),
        }
    }
    fn store_raw(dtype: DType, v: Vec<f32>) -> Storage {
        match dtype {
            DType::Float32 => native_store(v),
            DType::BFloat16 => native_store(
                v.into_iter()
                    .map(|e| bf16::from_f32(if e.is_nan() { f32::NAN.copysign(e) } else { e }))
                    .collect::<Vec<_>>(),
            ),
            // The narrower formats: float16's and the 8-bit formats' smallest values are far
            // above float32's subnormals but for float8_e8m0fnu's 2⁻¹²⁷, which stays.
            _ => encode_f32_lanes(dtype, v),
        }
    }
    fn load(x: &Array) -> Vec<f32> {
        match x.storage() {
            Storage::W32(v) => v.iter().map(|&w| f32::from_bits(w).flush()).collect(),
            Storage::W16(v) if x.dtype() == DType::BFloat16 => v
                .iter()
                .map(|&w| bf16::from_bits(w).to_f32().flush())
                .collect(),
            Storage::W16(v) => v.iter().map(|&w| f16::from_bits(w).to_f32()).collect(),
            // float8_e8m0fnu's 2⁻¹²⁷ is a float32 subnormal (the other formats have none).
            Storage::W8(v) => {
                let t = decode_table(x.dtype());
                v.iter().map(|&w| t[usize::from(w)].flush()).collect()
            }
            _ => Vec::new(),
        }
    }
    fn store(dtype: DType, mut v: Vec<f32>) -> Storage {
        v.iter_mut().for_each(|e| *e = e.flush());
        if dtype == DType::Float32 {
            return native_store(v);
        }
        encode_f32_lanes(dtype, v)
    }
}

/// Float32 lanes as the storage of a narrower float `dtype`, rounded once, as they are.
fn encode_f32_lanes(dtype: DType, mut v: Vec<f32>) -> Storage {
    // NaN results of the 8-bit formats and bfloat16 keep their sign (x86 propagates the NaN
    // operand) with the canonical payload; float8_e5m2's are all 0x7f (below); float16 keeps
    // the payload.
    if dtype != DType::Float16 {
        v.iter_mut()
            .filter(|e| e.is_nan())
            .for_each(|e| *e = f32::NAN.copysign(*e));
    }
    let (width, _) = crate::array::layout(dtype);
    let src: &[u8] = bytemuck::cast_slice(&v);
    Storage::filled(width, v.len(), |out| {
        crate::convert::convert(DType::Float32, src, dtype, out)?;
        if dtype == DType::Float8E5M2 {
            for (o, e) in out.iter_mut().zip(&v) {
                if e.is_nan() {
                    *o = 0x7f;
                }
            }
        }
        Ok::<(), crate::convert::Error>(())
    })
    .unwrap_or_else(|_| zeroed(width, v.len()))
}

/// `n` zero words of `width` bytes.
fn zeroed(width: usize, n: usize) -> Storage {
    match Storage::filled::<()>(width, n, |_| Ok(())) {
        Ok(s) => s,
        Err(()) => Storage::W8(Default::default()),
    }
}

/// Calls `$body` with `$t` the lane type of `$dtype` (see the module doc), or evaluates
/// `$other` for the dtypes without one (keys, int1/uint1, complex32/bcomplex32).
macro_rules! with_lane {
    ($dtype:expr, $t:ident => $body:expr, $other:expr) => {{
        let d: DType = $dtype;
        match d {
            DType::Bool => {
                type $t = bool;
                $body
            }
            DType::Int8 | DType::Int4 | DType::Int2 => {
                type $t = i8;
                $body
            }
            DType::Int16 => {
                type $t = i16;
                $body
            }
            DType::Int32 => {
                type $t = i32;
                $body
            }
            DType::Int64 => {
                type $t = i64;
                $body
            }
            DType::UInt8 | DType::UInt4 | DType::UInt2 => {
                type $t = u8;
                $body
            }
            DType::UInt16 => {
                type $t = u16;
                $body
            }
            DType::UInt32 => {
                type $t = u32;
                $body
            }
            DType::UInt64 => {
                type $t = u64;
                $body
            }
            DType::Float64 => {
                type $t = f64;
                $body
            }
            DType::Complex64 => {
                type $t = num_complex::Complex<f32>;
                $body
            }
            DType::Complex128 => {
                type $t = num_complex::Complex<f64>;
                $body
            }
            _ if d.kind() == dtype_lattice::Kind::Float && d.bits() <= 32 => {
                type $t = f32;
                $body
            }
            _ => $other,
        }
    }};
}

pub(crate) use with_lane;
