//! The float formats `uniform` produces, with their arithmetic at the format's precision.

use half::{bf16, f16};

use super::values::*;

/// A float format `uniform` can produce, with its arithmetic at the format's precision.
pub(crate) trait UniformFloat: Copy + Send + Sync + Default + PartialOrd {
    /// Total bits and explicit mantissa bits.
    const NBITS: u32;
    const NMANT: u32;
    fn from_bits_u64(b: u64) -> Self;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// Rounded from / widened to float32 (float64 narrows to float32).
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
    fn one() -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn add(self, o: Self) -> Self;
    /// `self * a + b` as XLA's CPU backend computes `x * a + b` (fused for float32/64).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// `nextafter(-1, 0)`.
    fn next_above_minus_one() -> Self;
    fn wrap(v: Vec<Self>) -> Values;
}

macro_rules! small_float {
    ($t:ty, $nbits:expr, $nmant:expr, $variant:ident) => {
        impl UniformFloat for $t {
            const NBITS: u32 = $nbits;
            const NMANT: u32 = $nmant;
            fn from_bits_u64(b: u64) -> Self {
                <$t>::from_bits(b as u16)
            }
            fn from_f64(x: f64) -> Self {
                <$t>::from_f64(x)
            }
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
            fn from_f32(x: f32) -> Self {
                <$t>::from_f32(x)
            }
            fn to_f32(self) -> f32 {
                <$t>::to_f32(self)
            }
            fn one() -> Self {
                <$t>::ONE
            }
            // XLA computes 16-bit float arithmetic in f32 and rounds each result.
            fn sub(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() - o.to_f32())
            }
            fn mul(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() * o.to_f32())
            }
            fn add(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() + o.to_f32())
            }
            fn mul_add(self, a: Self, b: Self) -> Self {
                UniformFloat::add(UniformFloat::mul(self, a), b)
            }
            fn next_above_minus_one() -> Self {
                <$t>::from_bits(<$t>::NEG_ONE.to_bits() - 1)
            }
            fn wrap(v: Vec<Self>) -> Values {
                Values::$variant(v)
            }
        }
    };
}

small_float!(f16, 16, 10, F16);
small_float!(bf16, 16, 7, BF16);

macro_rules! ieee_float {
    ($t:ty, $nbits:expr, $nmant:expr, $variant:ident, $ut:ty) => {
        impl UniformFloat for $t {
            const NBITS: u32 = $nbits;
            const NMANT: u32 = $nmant;
            fn from_bits_u64(b: u64) -> Self {
                <$t>::from_bits(b as $ut)
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f32(x: f32) -> Self {
                x as $t
            }
            fn to_f32(self) -> f32 {
                self as f32
            }
            fn one() -> Self {
                1.0
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
            fn next_above_minus_one() -> Self {
                <$t>::from_bits((-1.0 as $t).to_bits() - 1)
            }
            fn wrap(v: Vec<Self>) -> Values {
                Values::$variant(v)
            }
        }
    };
}

ieee_float!(f32, 32, 23, F32, u32);
ieee_float!(f64, 64, 52, F64, u64);

/// `lax.max(minval, x)`: XLA's max propagates NaN.
pub(crate) fn xla_max<T: UniformFloat>(a: T, b: T) -> T {
    if a.to_f64().is_nan() || b.to_f64().is_nan() {
        T::from_f64(f64::NAN)
    } else if b > a {
        b
    } else {
        a
    }
}

/// JAX's `_uniform` of one element from its random bits.
#[inline(always)]
pub(crate) fn uniform_of_bits<T: UniformFloat>(bits: u64, rng_bits: u32, minval: T, span: T) -> T {
    let one = T::one();
    let f = T::from_bits_u64((bits >> (rng_bits - T::NMANT)) | one_pattern::<T>()).sub(one);
    xla_max(minval, f.mul_add(span, minval))
}

/// The bit pattern of 1.0 in `T`: the exponent bias under a zero mantissa.
#[inline(always)]
pub(crate) fn one_pattern<T: UniformFloat>() -> u64 {
    let exponent_bits = T::NBITS - T::NMANT - 1;
    ((1u64 << (exponent_bits - 1)) - 1) << T::NMANT
}
