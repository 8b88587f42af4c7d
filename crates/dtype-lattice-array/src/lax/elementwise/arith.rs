//! The arithmetic of the compute lanes (`lanes`) as XLA's CPU backend computes it,
//! or NumPy's loops under NumPy's rules: one [`Arith`] implementation per lane type (integers
//! wrapping, booleans, float32/float64 with XLA's NaN rule and glibc's functions, complex
//! numbers with XLA's or NumPy's formulas).

use num_complex::Complex;

use super::lanes::Lane;
use crate::kernels::math::{self, Fn1};

#[allow(unused_imports)]
use super::*;

/// The arithmetic of a compute lane as XLA's CPU backend computes it. Methods that do not
/// apply to a lane type (shifts of floats, transcendentals of integers) are never called on it:
/// the shape rules refuse those dtypes first; their defaults return the operand.
pub(crate) trait Arith: Lane {
    /// The component type (complex) or the type itself.
    type Real: Lane;
    /// The complex type of a real float lane (conj), or the type itself.
    type Cplx: Lane;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn neg(self) -> Self;
    /// `<` and `==` as XLA compares (NaN unordered; complex: lexicographic for `<`).
    fn lt(self, o: Self) -> bool;
    fn equal(self, o: Self) -> bool;
    fn abs(self) -> Self::Real;
    fn real(self) -> Self::Real;
    fn imag(self) -> Self::Real;
    fn conj(self) -> Self::Cplx;
    fn one() -> Self;
    /// log(2) (for floats; one otherwise).
    fn ln2() -> Self {
        Self::one()
    }
    fn div(self, o: Self) -> Self {
        let _ = o;
        self
    }
    fn rem(self, o: Self) -> Self {
        let _ = o;
        self
    }
    fn pow(self, o: Self) -> Self {
        let _ = o;
        self
    }
    fn atan2(self, o: Self) -> Self {
        let _ = o;
        self
    }
    fn sign(self) -> Self {
        self
    }
    fn floor(self) -> Self {
        self
    }
    fn ceil(self) -> Self {
        self
    }
    fn round_away(self) -> Self {
        self
    }
    fn round_even(self) -> Self {
        self
    }
    fn is_finite(self) -> bool {
        true
    }
    fn f1(self, f: Fn1) -> Self {
        let _ = f;
        self
    }
    /// `x * y` as XLA multiplies (complex: LLVM contracts each part's second product into
    /// a fused multiply-add, `(fma(−b, d, a·c), fma(b, c, a·d))`).
    fn mul_xla(self, o: Self) -> Self {
        self.mul(o)
    }
    /// `x * x` as XLA squares (complex: StableHLO's `(a − b)(a + b)`, `2ab`).
    fn square_xla(self) -> Self {
        self.mul(self)
    }
    /// `x / y` as XLA divides (complex: Smith's algorithm with XLA's corner cases).
    fn div_xla(self, o: Self) -> Self {
        self.div(o)
    }
    /// `pow` as XLA computes it (complex: XLA's polar form; float32/float64: glibc's
    /// `powf`/`pow` under DAZ/FTZ, [`crate::kernels::glibc::pow`], on unflushed operands).
    fn pow_xla(self, o: Self) -> Self {
        self.pow(o)
    }
    /// `rem` as XLA computes it (float32/float64: glibc's `fmodf`/`fmod` under DAZ/FTZ,
    /// [`crate::kernels::glibc::fmod`], on unflushed operands).
    fn rem_xla(self, o: Self) -> Self {
        self.rem(o)
    }
    /// `==` as XLA compares (complex: each part compared with subnormals read as zero).
    fn equal_xla(self, o: Self) -> bool {
        self.equal(o)
    }
    /// `atan2` as XLA computes it (complex: `−i·log((x + i·y)/√(x² + y²))`; float32/float64:
    /// glibc's `atan2f`/`atan2` under DAZ/FTZ, [`crate::kernels::glibc`], on unflushed operands).
    fn atan2_xla(self, o: Self) -> Self {
        self.atan2(o)
    }
    /// `sign` as XLA computes it (complex: `x / |x|` with XLA's `abs`, `0` for `0`).
    fn sign_xla(self) -> Self {
        self.sign()
    }
    /// [`Arith::f1`] as glibc's function computes it on an unflushed operand (float32 `logf`,
    /// see [`glibc_elements`]); others as [`Arith::f1`].
    fn f1_glibc(self, f: Fn1) -> Self {
        self.f1(f)
    }
    /// The value with a subnormal flushed to a zero of its sign (floats; others as they are).
    fn ftz_lane(self) -> Self {
        self
    }
    /// [`Arith::f1`] as XLA computes it where that differs (complex `sqrt` and `exp`).
    fn f1_xla(self, f: Fn1) -> Self {
        self.f1(f)
    }
    /// The complex number of real part `self` and imaginary part `im` (`lax.complex`; the
    /// shape rule admits float32 and float64 only, other lanes return `self`'s complex form
    /// unchanged).
    fn compose(self, im: Self) -> Self::Cplx;
    /// [`Arith::f1`] of every element (float32 lanes: vectorised where [`crate::kernels::vmath`] has
    /// the function).
    fn f1_all(v: Vec<Self>, f: Fn1) -> Vec<Self> {
        v.into_iter().map(|a| a.f1(f)).collect()
    }
    /// Bitwise `and`, `or`, `xor`, `not` (logical for bool).
    fn and(self, o: Self) -> Self {
        let _ = o;
        self
    }
    fn or(self, o: Self) -> Self {
        let _ = o;
        self
    }
    fn xor(self, o: Self) -> Self {
        let _ = o;
        self
    }
    fn not(self) -> Self {
        self
    }
    /// XLA's TOTALORDER comparison (`lax.lt_to`, `le_to`, `eq_to`): for floats the order of
    /// their bits as sign-magnitude integers, −NaN < −inf < … < −0 < +0 < … < +inf < +NaN
    /// (NaNs by payload, −0 apart from +0); for integers and bools their ordinary order.
    fn total_lt(self, o: Self) -> bool {
        self.lt(o)
    }
    fn total_eq(self, o: Self) -> bool {
        self.equal(o)
    }
    /// The bit pattern of an integer (its low `bits` bits), and the integer of a pattern.
    fn pattern(self) -> u64 {
        0
    }
    fn of_pattern(p: u64) -> Self {
        let _ = p;
        Self::one()
    }
}

macro_rules! int_arith {
    ($($t:ty, $signed:expr);*) => {$(
        impl Arith for $t {
            type Real = $t;
            type Cplx = $t;
            #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)] fn max(self, o: Self) -> Self { Ord::max(self, o) }
            #[inline(always)] fn min(self, o: Self) -> Self { Ord::min(self, o) }
            #[inline(always)] fn neg(self) -> Self { self.wrapping_neg() }
            #[inline(always)] fn lt(self, o: Self) -> bool { self < o }
            #[inline(always)] fn equal(self, o: Self) -> bool { self == o }
            #[inline(always)] fn abs(self) -> Self { if $signed && self < (0 as $t) { self.wrapping_neg() } else { self } }
            #[inline(always)] fn real(self) -> Self { self }
            #[inline(always)] fn imag(self) -> Self { 0 }
            #[inline(always)] fn conj(self) -> Self { self }
            #[inline(always)] fn one() -> Self { 1 }
            #[inline(always)] fn div(self, o: Self) -> Self {
                if o == 0 { !0 } else { self.wrapping_div(o) }
            }
            #[inline(always)] fn rem(self, o: Self) -> Self {
                if o == 0 { self } else { self.wrapping_rem(o) }
            }
            #[inline(always)] fn sign(self) -> Self {
                if self == 0 { 0 } else if $signed && self < (0 as $t) { (0 as $t).wrapping_sub(1) } else { 1 }
            }
            #[inline(always)] fn and(self, o: Self) -> Self { self & o }
            #[inline(always)] fn or(self, o: Self) -> Self { self | o }
            #[inline(always)] fn xor(self, o: Self) -> Self { self ^ o }
            #[inline(always)] fn not(self) -> Self { !self }
            #[inline(always)] fn pattern(self) -> u64 { self as u64 }
            #[inline(always)] fn of_pattern(p: u64) -> Self { p as $t }
            fn compose(self, _im: Self) -> Self { self }
        }
    )*};
}
int_arith!(i8, true; i16, true; i32, true; i64, true; u8, false; u16, false; u32, false; u64, false);

impl Arith for bool {
    type Real = bool;
    type Cplx = bool;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self ^ o
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
    fn neg(self) -> Self {
        self
    }
    #[inline(always)]
    fn lt(self, o: Self) -> bool {
        !self & o
    }
    #[inline(always)]
    fn equal(self, o: Self) -> bool {
        self == o
    }
    fn abs(self) -> Self {
        self
    }
    fn real(self) -> Self {
        self
    }
    fn imag(self) -> Self {
        false
    }
    fn conj(self) -> Self {
        self
    }
    fn one() -> Self {
        true
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    fn not(self) -> Self {
        !self
    }
    fn pattern(self) -> u64 {
        u64::from(self)
    }
    fn of_pattern(p: u64) -> Self {
        p & 1 != 0
    }
    fn compose(self, _im: Self) -> Self {
        self
    }
}

use crate::kernels::fast::nan_first;

/// IEEE arithmetic at the lane's precision; `max`/`min` propagate NaN (XLA's semantics).
macro_rules! float_arith {
    ($($t:ty, $f1:expr, $wide:ty, $f1_all:expr, $atan2_glibc:expr);*) => {$(
        impl Arith for $t {
            type Real = $t;
            type Cplx = Complex<$t>;
            #[inline(always)] fn add(self, o: Self) -> Self { nan_first!(self, o, self + o) }
            #[inline(always)] fn sub(self, o: Self) -> Self { nan_first!(self, o, self - o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { nan_first!(self, o, self * o) }
            #[inline(always)] fn max(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() { <$t>::NAN } else if self > o { self } else if o > self { o } else if self.is_sign_negative() { o } else { self }
            }
            #[inline(always)] fn min(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() { <$t>::NAN } else if self < o { self } else if o < self { o } else if self.is_sign_negative() { self } else { o }
            }
            #[inline(always)] fn neg(self) -> Self { -self }
            #[inline(always)] fn lt(self, o: Self) -> bool { self < o }
            #[inline(always)] fn equal(self, o: Self) -> bool { self == o }
            fn total_lt(self, o: Self) -> bool { total_key(self.to_bits().into(), <$t>::MANTISSA_DIGITS) < total_key(o.to_bits().into(), <$t>::MANTISSA_DIGITS) }
            fn total_eq(self, o: Self) -> bool { self.to_bits() == o.to_bits() }
            fn abs(self) -> Self { self.abs() }
            fn real(self) -> Self { self }
            fn imag(self) -> Self { 0.0 }
            fn conj(self) -> Complex<$t> { Complex::new(self, 0.0) }
            fn one() -> Self { 1.0 }
            fn ln2() -> Self { std::f64::consts::LN_2 as $t }
            #[inline(always)] fn div(self, o: Self) -> Self { nan_first!(self, o, self / o) }
            #[inline(always)] fn rem(self, o: Self) -> Self { self % o }
            fn pow(self, o: Self) -> Self { (<$wide>::from(self).powf(<$wide>::from(o))) as $t }
            fn atan2(self, o: Self) -> Self { (<$wide>::from(self).atan2(<$wide>::from(o))) as $t }
            fn sign(self) -> Self {
                if self.is_nan() || self == 0.0 { self } else { (1.0 as $t).copysign(self) }
            }
            fn floor(self) -> Self { self.floor() }
            fn ceil(self) -> Self { self.ceil() }
            fn round_away(self) -> Self { self.round() }
            fn round_even(self) -> Self { self.round_ties_even() }
            fn is_finite(self) -> bool { self.is_finite() }
            fn f1(self, f: Fn1) -> Self { $f1(f, self) }
            fn f1_all(v: Vec<Self>, f: Fn1) -> Vec<Self> { $f1_all(v, f) }
            fn compose(self, im: Self) -> Complex<$t> { Complex::new(self, im) }
            fn pow_xla(self, o: Self) -> Self {
                crate::kernels::glibc::pow(self, o, |a: $t, b: $t| Arith::pow(a, b))
            }
            fn f1_glibc(self, f: Fn1) -> Self {
                use crate::kernels::glibc::Bits;
                if f == Fn1::Log {
                    crate::kernels::glibc::log(self, |a: $t| $f1(f, a.daz()))
                } else {
                    $f1(f, self.daz())
                }
            }
            fn ftz_lane(self) -> Self {
                crate::kernels::glibc::Bits::ftz(self)
            }
            fn rem_xla(self, o: Self) -> Self {
                crate::kernels::glibc::fmod(self, o, |a: $t, b: $t| a % b)
            }
            fn atan2_xla(self, o: Self) -> Self {
                $atan2_glibc(self, o)
            }
        }
    )*};
}
float_arith!(
    f32, math::real_f32, f64, crate::kernels::vmath::map_vec, |y: f32, x: f32| crate::kernels::glibc::atan2f(
        y,
        x,
        |t| math::real_f32(Fn1::Atan, t),
        |a: f32, b: f32| Arith::atan2(a, b),
    );
    f64, math::real_f64, f64, |v: Vec<f64>, f| v.into_iter().map(|a| math::real_f64(f, a)).collect(),
        |y: f64, x: f64| crate::kernels::glibc::atan2(y, x, |a: f64, b: f64| Arith::atan2(a, b))
);

macro_rules! complex_arith {
    ($($t:ty, $f1:expr, $f1_xla:expr, $div_xla:expr, $atan2_xla:expr, $pow_xla:expr);*) => {$(
        impl Arith for Complex<$t> {
            type Real = $t;
            type Cplx = Complex<$t>;
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn max(self, o: Self) -> Self { if Arith::lt(o, self) { self } else { o } }
            #[inline(always)] fn min(self, o: Self) -> Self { if Arith::lt(self, o) { self } else { o } }
            #[inline(always)] fn neg(self) -> Self { -self }
            #[inline(always)] fn lt(self, o: Self) -> bool {
                self.re < o.re || (self.re == o.re && self.im < o.im)
            }
            #[inline(always)] fn equal(self, o: Self) -> bool { self == o }
            fn total_eq(self, o: Self) -> bool {
                self.re.to_bits() == o.re.to_bits() && self.im.to_bits() == o.im.to_bits()
            }
            fn abs(self) -> $t {
                // XLA: max * sqrt(1 + (min / max)^2).
                let (a, b) = (self.re.abs(), self.im.abs());
                let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
                if hi == 0.0 || hi.is_infinite() || lo.is_nan() { a.hypot(b) } else {
                    let r = lo / hi;
                    hi * (1.0 + r * r).sqrt()
                }
            }
            fn real(self) -> $t { self.re }
            fn imag(self) -> $t { self.im }
            fn conj(self) -> Self { Complex::conj(&self) }
            fn one() -> Self { Complex::new(1.0, 0.0) }
            fn ln2() -> Self { Complex::new(std::f64::consts::LN_2 as $t, 0.0) }
            fn div(self, o: Self) -> Self {
                // NumPy's complex division (its `@TYPE@_divide` loop): Smith's algorithm on the
                // larger part of the divisor, a zero divisor dividing each part by a zero.
                let (a, b, c, d) = (self.re, self.im, o.re, o.im);
                let (c_abs, d_abs) = (c.abs(), d.abs());
                if c_abs >= d_abs {
                    if c_abs == 0.0 && d_abs == 0.0 {
                        Complex::new(a / c_abs, b / d_abs)
                    } else {
                        let rat = d / c;
                        let scl = 1.0 / (c + d * rat);
                        Complex::new((a + b * rat) * scl, (b - a * rat) * scl)
                    }
                } else {
                    let rat = c / d;
                    let scl = 1.0 / (d + c * rat);
                    Complex::new((a * rat + b) * scl, (b * rat - a) * scl)
                }
            }
            fn pow(self, o: Self) -> Self {
                if o.re == 0.0 && o.im == 0.0 { Self::one() } else { self.powc(o) }
            }
            fn sign(self) -> Self {
                let a = self.re.hypot(self.im);
                if a == 0.0 { self } else { self / a }
            }
            fn is_finite(self) -> bool { self.re.is_finite() && self.im.is_finite() }
            fn f1(self, f: Fn1) -> Self { $f1(f, self) }
            fn square_xla(self) -> Self {
                let (a, b) = (self.re, self.im);
                let re = if a.abs() == b.abs() { 0.0 } else { (a - b) * (a + b) };
                Complex::new(re, 2.0 * (a * b))
            }
            fn mul_xla(self, o: Self) -> Self { math::xla_mul(self, o) }
            fn div_xla(self, o: Self) -> Self { $div_xla(self, o) }
            fn atan2_xla(self, o: Self) -> Self { $atan2_xla(self, o) }
            fn pow_xla(self, o: Self) -> Self { $pow_xla(self, o) }
            fn sign_xla(self) -> Self {
                let m = Arith::abs(self);
                if m == 0.0 { Complex::new(0.0, 0.0) } else { Complex::new(self.re / m, self.im / m) }
            }
            fn f1_xla(self, f: Fn1) -> Self { $f1_xla(f, self) }
            fn equal_xla(self, o: Self) -> bool {
                use crate::kernels::glibc::Bits;
                self.re.daz() == o.re.daz() && self.im.daz() == o.im.daz()
            }
            fn compose(self, _im: Self) -> Self { self }
        }
    )*};
}
complex_arith!(
    f32, math::complex_f32, math::complex_xla_f32, math::xla_div_f32, math::xla_atan2_f32,
        math::xla_pow_f32;
    f64, math::complex_f64, math::complex_xla_f64, math::xla_div_f64, math::xla_atan2_f64,
        math::xla_pow_f64
);

/// A float's bits (`f32` or `f64` by its mantissa digits) as an unsigned key in XLA's total
/// order: negative numbers' bits inverted, positive ones' sign bit set.
fn total_key(bits: u64, mantissa_digits: u32) -> u64 {
    let width = if mantissa_digits == f32::MANTISSA_DIGITS {
        32
    } else {
        64
    };
    let sign = 1u64 << (width - 1);
    let mask = if width == 64 { !0 } else { (1u64 << width) - 1 };
    if bits & sign != 0 {
        !bits & mask
    } else {
        bits | sign
    }
}
