//! The arithmetic of each Rust element type as the reductions and `dot_general`'s generic
//! loop compute it (integers wrap; float16 and bfloat16 compute in float32 and round once;
//! `max`/`min` propagate NaN). The elementwise primitives use the lane types of
//! [`super::elementwise::lanes`] instead.

use half::{bf16, f16};
use num_complex::Complex;

use crate::array::Element;

/// The arithmetic of an element type as XLA's CPU backend computes it.
pub(crate) trait Accumulate: Element {
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// `acc + self·o`, one step of a dot product's accumulation: fused (rounded once) for
    /// float32 and float64, as XLA's CPU dot accumulates (a product beyond the range is not
    /// infinite on its own: `fma(-3e38, 255, inf)` is `inf`).
    #[inline(always)]
    fn mul_acc(self, o: Self, acc: Self) -> Self {
        acc.add(self.mul(o))
    }
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    /// `<` and `==` as XLA compares (NaN unordered; complex: lexicographic for `<`).
    fn lt(self, o: Self) -> bool;
    /// Bitwise `and`, `or`, `xor` (logical for bool); never called for floats (the shape rule
    /// refuses them).
    fn and(self, o: Self) -> Self {
        let _ = o;
        self
    }
    fn or(self, o: Self) -> Self {
        let _ = o;
        self
    }
}

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Accumulate for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)] fn max(self, o: Self) -> Self { Ord::max(self, o) }
            #[inline(always)] fn min(self, o: Self) -> Self { Ord::min(self, o) }
            #[inline(always)] fn lt(self, o: Self) -> bool { self < o }
            #[inline(always)] fn and(self, o: Self) -> Self { self & o }
            #[inline(always)] fn or(self, o: Self) -> Self { self | o }
        }
    )*};
}
int_arith!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Accumulate for bool {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn lt(self, o: Self) -> bool {
        !self & o
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        self | o
    }
}

/// IEEE arithmetic at the type's precision; `max`/`min` propagate NaN (XLA's semantics).
macro_rules! float_arith {
    ($($t:ty),*) => {$(
        impl Accumulate for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn mul_acc(self, o: Self, acc: Self) -> Self { self.mul_add(o, acc) }
            #[inline(always)] fn max(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() { self + o } else if self > o { self } else { o }
            }
            #[inline(always)] fn min(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() { self + o } else if self < o { self } else { o }
            }
            #[inline(always)] fn lt(self, o: Self) -> bool { self < o }
        }
    )*};
}
float_arith!(f32, f64);

/// float16 and bfloat16: computed in float32, rounded once (`half` rounds to nearest even).
macro_rules! half_arith {
    ($($t:ty),*) => {$(
        impl Accumulate for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() + o.to_f32()) }
            #[inline(always)] fn mul(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() * o.to_f32()) }
            #[inline(always)] fn max(self, o: Self) -> Self { <$t>::from_f32(Accumulate::max(self.to_f32(), o.to_f32())) }
            #[inline(always)] fn min(self, o: Self) -> Self { <$t>::from_f32(Accumulate::min(self.to_f32(), o.to_f32())) }
            #[inline(always)] fn lt(self, o: Self) -> bool { self.to_f32() < o.to_f32() }
        }
    )*};
}
half_arith!(f16, bf16);

macro_rules! complex_arith {
    ($($t:ty),*) => {$(
        impl Accumulate for Complex<$t> {
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn max(self, o: Self) -> Self { if Accumulate::lt(self, o) { o } else { self } }
            #[inline(always)] fn min(self, o: Self) -> Self { if Accumulate::lt(o, self) { o } else { self } }
            #[inline(always)] fn lt(self, o: Self) -> bool {
                self.re < o.re || (self.re == o.re && self.im < o.im)
            }
        }
    )*};
}
complex_arith!(f32, f64);
