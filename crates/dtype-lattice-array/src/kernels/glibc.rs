//! glibc's libm functions as XLA's CPU code calls them: with x86's denormals-are-zero and
//! flush-to-zero modes on (XLA sets both while its code runs), through the symbol versions
//! jaxlib links (`fmodf`, `fmod`, `pow`, `atan2f`, `atan2` of GLIBC_2.2.5 — for `fmod`/`fmodf`
//! and `pow` the compatibility wrappers of the SVID error handling —, `powf` and `logf` of
//! GLIBC_2.27). Measured against glibc 2.36 called that way, and against JAX 0.10.2
//! (`tests/fixtures/eval/jax_*_probes.json`).
//!
//! Under those modes a subnormal operand reads as zero in every floating-point operation,
//! but glibc classifies its operands by their bits first, so a subnormal number takes paths
//! neither the IEEE function nor its flushed-operand form take: `powf(0, 1e-40)` is `0` (not
//! `0⁰ = 1`), `atan2(5e-324, -2.7)` is `-π` (not `π`), `logf(1e-40)` is `-150·ln 2` (glibc
//! normalises the subnormal by multiplying it by 2²³, which yields zero, and reads the
//! exponent of what is left), `fmodf(1e-40, 2.5)` is `1e-40` (an exact integer algorithm
//! returning `x` when `|x| < |y|`). Each function here handles the operands glibc's special
//! cases see, and leaves the others (normal operands) to `ieee`, the caller's IEEE function
//! of flushed operands, whose subnormal results are flushed as the hardware does.

/// The float formats glibc's functions are emulated in.
pub(crate) trait Bits: Copy + PartialEq + PartialOrd + std::ops::Neg<Output = Self> {
    /// The bits of the value.
    fn bits(self) -> u64;
    /// The value of the bits.
    fn of(bits: u64) -> Self;
    /// The sign bit, the exponent field (at its place), the precision (mantissa bits).
    const SIGN: u64;
    const EXP: u64;
    const MANT_BITS: u32;
    fn zero() -> Self;
    fn is_nan(self) -> bool;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// The NaN x86 produces for an invalid operation (`0/0`): negative, quiet.
    fn default_nan() -> Self {
        Self::of(Self::SIGN | Self::EXP | (1 << (Self::MANT_BITS - 1)))
    }
    fn abs_bits(self) -> u64 {
        self.bits() & !Self::SIGN
    }
    fn is_subnormal(self) -> bool {
        self.bits() & Self::EXP == 0 && self.abs_bits() != 0
    }
    /// The value an arithmetic operation reads (DAZ: a subnormal is a zero of its sign).
    fn daz(self) -> Self {
        if self.is_subnormal() {
            Self::of(self.bits() & Self::SIGN)
        } else {
            self
        }
    }
    /// The value an arithmetic operation writes (FTZ: a subnormal result is a zero of its
    /// sign).
    fn ftz(self) -> Self {
        self.daz()
    }
    fn negative(self) -> bool {
        self.bits() & Self::SIGN != 0
    }
}

impl Bits for f32 {
    const SIGN: u64 = 0x8000_0000;
    const EXP: u64 = 0x7f80_0000;
    const MANT_BITS: u32 = 23;
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn of(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }
    fn zero() -> f32 {
        0.0
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Bits for f64 {
    const SIGN: u64 = 0x8000_0000_0000_0000;
    const EXP: u64 = 0x7ff0_0000_0000_0000;
    const MANT_BITS: u32 = 52;
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn of(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
    fn zero() -> f64 {
        0.0
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn from_f64(x: f64) -> f64 {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// `x` with the sign of `s` (a bit operation).
fn copysign<T: Bits>(x: T, s: T) -> T {
    T::of(x.abs_bits() | s.bits() & T::SIGN)
}

/// `x + y` where one of them is NaN: the first NaN, quieted (x86).
fn nan_sum<T: Bits>(x: T, y: T) -> T {
    let q = 1u64 << (T::MANT_BITS - 1);
    if x.is_nan() {
        T::of(x.bits() | q)
    } else {
        T::of(y.bits() | q)
    }
}

/// `fmodf`/`fmod` (GLIBC_2.2.5: the SVID wrapper around the exact integer algorithm).
///
/// The wrapper first: `x` infinite, or `y == 0` (a subnormal `y` compares equal to zero),
/// neither NaN: NaN. Then the algorithm, on the bits: `|x| < |y|` returns `x` itself (a
/// subnormal `x` too), `|x| = |y|` a zero of `x`'s sign; otherwise the exact remainder,
/// assembled from its bits (a subnormal one too: the compiler drops the multiplication by
/// one meant to raise the underflow).
pub(crate) fn fmod<T: Bits>(x: T, y: T, ieee: impl Fn(T, T) -> T) -> T {
    if x.is_nan() || y.is_nan() {
        return nan_sum(x, y);
    }
    if x.abs_bits() == T::EXP || y.daz().abs_bits() == 0 {
        return T::default_nan();
    }
    if x.abs_bits() < y.abs_bits() {
        return x;
    }
    if x.abs_bits() == y.abs_bits() {
        return copysign(T::zero(), x);
    }
    // The remainder is exact: IEEE's on the operands' own values.
    ieee(x, y)
}

/// glibc's `checkint` on the bits of `y`: 0 if not an integer, 1 if odd, 2 if even (a
/// subnormal is no integer).
fn checkint<T: Bits>(y: T) -> u8 {
    let bias = (T::EXP >> T::MANT_BITS) >> 1;
    let e = (y.abs_bits() >> T::MANT_BITS) as i64;
    if e < bias as i64 {
        return 0;
    }
    let shift = bias as i64 + i64::from(T::MANT_BITS) - e;
    if shift <= 0 {
        return 2;
    }
    let frac = y.bits() & ((1u64 << shift) - 1);
    if frac != 0 {
        return 0;
    }
    if y.bits() & (1u64 << shift) != 0 {
        1
    } else {
        2
    }
}

/// Zero, infinite or NaN (glibc's `zeroinfnan`, on the bits).
fn zeroinfnan<T: Bits>(x: T) -> bool {
    x.abs_bits() == 0 || x.abs_bits() >= T::EXP
}

/// The binary exponent glibc's `pow`/`powf`/`logf` read for a subnormal operand: they
/// normalise it by a multiplication by 2^p (zero under DAZ) and take the exponent of
/// `0 - p·2^p`'s bits, `-(bias + p)` with a mantissa of exactly one (2⁻¹⁵⁰ in float32,
/// 2⁻¹⁰⁷⁵ in float64).
fn subnormal_log2<T: Bits>() -> f64 {
    let bias = ((T::EXP >> T::MANT_BITS) >> 1) as f64;
    -(bias + f64::from(T::MANT_BITS))
}

/// `powf` (GLIBC_2.27) and `pow` (GLIBC_2.2.5, whose wrapper only changes the NaN and
/// overflow results' reporting, not their values).
///
/// On the bits: `y` zero, infinite or NaN, and `x` zero, infinite or NaN, as IEEE; a negative
/// `x` needs an integer `y` (a subnormal `y` is none: NaN); a subnormal `x` is `2^-150`
/// (float32) or `2^-1075` (float64), see [`subnormal_log2`]. Arithmetic reads a subnormal `y`
/// as zero: `x^y = 1` for a positive normal `x`.
pub(crate) fn pow<T: Bits>(x: T, y: T, ieee: impl Fn(T, T) -> T) -> T {
    if !x.is_subnormal() && !y.is_subnormal() {
        return ieee(x, y).ftz();
    }
    if zeroinfnan(y) {
        // y is ±0, ±inf or NaN and x subnormal: IEEE's answers for a tiny nonzero x.
        if y.abs_bits() == 0 {
            return T::from_f64(1.0);
        }
        if y.is_nan() {
            return nan_sum(x, y);
        }
        // |x| < 1: 0 for y = inf, inf for y = -inf.
        return if y.negative() {
            T::of(T::EXP)
        } else {
            T::zero()
        };
    }
    if zeroinfnan(x) {
        // x is ±0, ±inf or NaN, y subnormal (never an odd integer).
        if x.is_nan() {
            return nan_sum(x, y);
        }
        let x2 = T::of(x.abs_bits()); // x * x: 0 or inf
        return if y.negative() {
            if x2.abs_bits() == 0 {
                T::of(T::EXP)
            } else {
                T::zero()
            }
        } else {
            x2
        };
    }
    let mut negate = false;
    if x.negative() {
        match checkint(y) {
            0 => return T::default_nan(),
            1 => negate = true,
            _ => {}
        }
    }
    let r = if x.is_subnormal() {
        // 2^(y·log2 x) with log2 x read as the subnormal exponent; y is normal here
        // (a subnormal y with a subnormal x reads as zero: 1).
        let y = y.daz().to_f64();
        T::from_f64((y * subnormal_log2::<T>()).exp2())
    } else {
        // A normal x and a subnormal y, read as zero by the multiplication y·log2 x.
        T::from_f64(1.0)
    };
    let r = r.ftz();
    if negate { -r } else { r }
}

/// `logf` (GLIBC_2.27) of a subnormal: `-150·ln 2` for a positive one (see
/// [`subnormal_log2`]), NaN for a negative one (its sign bit makes it invalid); other
/// operands go to `ieee` (computed on the flushed operand).
pub(crate) fn log<T: Bits>(x: T, ieee: impl Fn(T) -> T) -> T {
    if !x.is_subnormal() {
        return ieee(x);
    }
    if x.negative() {
        return T::default_nan();
    }
    T::from_f64(subnormal_log2::<T>() * std::f64::consts::LN_2)
}

/// Float32 constants of glibc's `atan2f` (Sun's): π/2 and the low part of π.
const PI_O_2_F32: f32 = f32::from_bits(0x3fc9_0fdb);
const PI_LO_F32: f32 = f32::from_bits(0xb3bb_bd2e);
const PI_F32: f32 = f32::from_bits(0x4049_0fdb);

/// `atan2f` (GLIBC_2.2.5, Sun's algorithm) with a subnormal operand; others go to `ieee`
/// (then flushed). `atan` is the float32 arctangent.
///
/// On the bits: `x = 1` is `atanf(y)`, which returns a tiny `y` as it is; `y = ±0` and
/// `x = ±0` (only exact zeros) as IEEE; then, by the difference `k` of the exponent fields,
/// `z = π/2` (`k > 60`), `0` (`x < 0`, `k < -60`) or `atan(|y/x|)` with the quotient of the
/// flushed operands (`0/x = 0`, `0/0` NaN); and `z`, `-z`, `π - (z - π_lo)` or
/// `(z - π_lo) - π` by the signs.
pub(crate) fn atan2f(
    y: f32,
    x: f32,
    atan: impl Fn(f32) -> f32,
    ieee: impl Fn(f32, f32) -> f32,
) -> f32 {
    if !x.is_subnormal() && !y.is_subnormal() || x.is_nan() || y.is_nan() {
        return if x.is_nan() || y.is_nan() {
            nan_sum(x, y)
        } else {
            Bits::ftz(ieee(y, x))
        };
    }
    let (hx, hy) = (x.to_bits(), y.to_bits());
    let (ix, iy) = (hx & 0x7fff_ffff, hy & 0x7fff_ffff);
    if hx == 0x3f80_0000 {
        // atanf(y): |y| < 2^-29 returns y.
        return y;
    }
    let m = (hy >> 31) | ((hx >> 30) & 2);
    if iy == 0 {
        return match m {
            0 | 1 => y,
            2 => PI_F32,
            _ => -PI_F32,
        };
    }
    if ix == 0 {
        return if hy >> 31 != 0 {
            -PI_O_2_F32
        } else {
            PI_O_2_F32
        };
    }
    if ix == 0x7f80_0000 {
        // y is subnormal here (finite).
        return match m {
            0 => 0.0,
            1 => -0.0,
            2 => PI_F32,
            _ => -PI_F32,
        };
    }
    if iy == 0x7f80_0000 {
        return if hy >> 31 != 0 {
            -PI_O_2_F32
        } else {
            PI_O_2_F32
        };
    }
    let k = (iy as i32 - ix as i32) >> 23;
    let z = if k > 60 {
        PI_O_2_F32 + 0.5 * PI_LO_F32
    } else if (hx as i32) < 0 && k < -60 {
        0.0
    } else {
        let q = Bits::ftz(Bits::daz(y) / Bits::daz(x));
        atan(q.abs())
    };
    match m {
        0 => z,
        1 => -z,
        2 => PI_F32 - (z - PI_LO_F32),
        _ => (z - PI_LO_F32) - PI_F32,
    }
}

/// `atan2` (GLIBC_2.2.5, IBM's algorithm) with a subnormal operand; others go to `ieee`
/// (then flushed).
///
/// On the bits: NaN, `y = ±0` (exact) as IEEE; then `x == 0` compares a subnormal `x` equal
/// to zero: `±π/2` by `y`'s sign bit; infinities as IEEE; a subnormal `y` far below `x` (the
/// exponent fields 57 binades apart or more) gives `±0` by `y`'s sign for `x > 0`, and for
/// `x < 0` `y > 0 ? π : -π`, which a subnormal `y` reads as zero: `-π`. Closer (a tiny
/// normal `x`), the general path reads `y` as zero: `±0`, or `±π` by `y`'s sign.
pub(crate) fn atan2(y: f64, x: f64, ieee: impl Fn(f64, f64) -> f64) -> f64 {
    use std::f64::consts::{FRAC_PI_2, PI};
    if x.is_nan() || y.is_nan() {
        return nan_sum(x, y);
    }
    if !x.is_subnormal() && !y.is_subnormal() {
        return Bits::ftz(ieee(y, x));
    }
    let neg_y = y.is_sign_negative();
    if y.abs_bits() == 0 {
        return if x.is_sign_negative() {
            copysign(PI, y)
        } else {
            y
        };
    }
    if Bits::daz(x) == 0.0 {
        return if neg_y { -FRAC_PI_2 } else { FRAC_PI_2 };
    }
    if x.is_infinite() {
        // y is subnormal (finite).
        return if x > 0.0 {
            copysign(0.0, y)
        } else {
            copysign(PI, y)
        };
    }
    // y subnormal, x normal finite.
    let de =
        ((y.to_bits() >> 32) as i64 & 0x7ff0_0000) - ((x.to_bits() >> 32) as i64 & 0x7ff0_0000);
    let far = de <= -59_768_832;
    match (x > 0.0, far) {
        (true, _) => copysign(0.0, y),
        (false, true) => -PI,
        (false, false) => copysign(PI, y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ieee_atan2f(y: f32, x: f32) -> f32 {
        f64::from(y).atan2(f64::from(x)) as f32
    }

    /// Values of the eval fixtures (tests/fixtures/eval/): `remainder float64[-inf,1e-40,…]
    /// float64[0.0,-8.29,…]` (x32) keeps 1e-40 (`|x| < |y|` returns `x`); the probes'
    /// `remainder 2.5 float32[1e-40]` is NaN (the wrapper's `y == 0`).
    #[test]
    fn fmod_returns_a_smaller_x_and_refuses_a_subnormal_y() {
        let sub = f32::from_bits(71362);
        assert_eq!(fmod(sub, -8.29f32, |a, b| a % b).to_bits(), 71362);
        assert!(fmod(2.5f32, sub, |a, b| a % b).is_nan());
        assert_eq!(fmod(7.5f32, 2.0, |a, b| a % b), 1.5);
    }

    /// `power 0.0 ~float32[…,1.401298464324817e-45]` (x32) is 0 and `power float64[-5.12,…]
    /// float64[5e-324,…]` (x64) NaN: glibc classifies the subnormal exponent by its bits.
    #[test]
    fn pow_classifies_a_subnormal_exponent_by_its_bits() {
        let ieee32 = |a: f32, b: f32| f64::from(a).powf(f64::from(b)) as f32;
        assert_eq!(pow(0.0f32, f32::from_bits(1), ieee32).to_bits(), 0);
        assert!(pow(-5.12f64, f64::from_bits(1), f64::powf).is_nan());
        assert_eq!(pow(2.5f64, f64::from_bits(1), f64::powf), 1.0);
    }

    /// `arctan2 float64[1e-40,…] float64(1.0)` (x32) keeps 1e-40 (`atanf(y)` for `x = 1`);
    /// `arctan2 float64[5e-324,…] -2.7` (x64) is -π.
    #[test]
    fn atan2_of_a_subnormal_follows_glibcs_paths() {
        let sub = f32::from_bits(71362);
        let atan = |t: f32| f64::from(t).atan() as f32;
        assert_eq!(atan2f(sub, 1.0, atan, ieee_atan2f).to_bits(), 71362);
        assert_eq!(
            atan2(f64::from_bits(1), -2.7, f64::atan2),
            -std::f64::consts::PI
        );
    }

    /// `log float64[1e-40,2.898831971965567,1e+40]` (x32): glibc's `logf` of the subnormal
    /// is the float32 of bits 3268407732.
    #[test]
    fn logf_of_a_subnormal_is_that_of_two_to_the_minus_150() {
        let r = log(f32::from_bits(71362), |a: f32| a.ln());
        assert_eq!(r.to_bits(), 3_268_407_732);
        assert!(log(-f32::from_bits(71362), |a: f32| a.ln()).is_nan());
    }

    #[test]
    fn subnormal_exponents_are_those_glibc_reads() {
        assert_eq!(subnormal_log2::<f32>(), -150.0);
        assert_eq!(subnormal_log2::<f64>(), -1075.0);
    }

    #[test]
    fn checkint_reads_bits() {
        assert_eq!(checkint(3.0f32), 1);
        assert_eq!(checkint(2.0f32), 2);
        assert_eq!(checkint(2.5f32), 0);
        assert_eq!(checkint(f32::from_bits(1)), 0);
        assert_eq!(checkint(1e30f32), 2);
        assert_eq!(checkint(-7.0f64), 1);
        assert_eq!(checkint(f64::from_bits(1)), 0);
    }
}
