//! The transcendental functions of the elementwise primitives, per lane type.
//!
//! What matches JAX exactly and what approximately (measured on the fixtures of
//! `tests/it/lax_elementwise.rs`, which print the largest difference per primitive and dtype):
//!
//! - float64: Rust's `std` (the platform's libm) and, for `erf`/`erfc`, a series and a
//!   continued fraction here; XLA uses its own polynomials, so results agree within a couple of
//!   units in the last place, not bit for bit.
//! - float32: computed in float64 and rounded once (correctly rounded but for double rounding),
//!   except `sqrt` (IEEE, exact) and `erf_inv` (Giles' float32 polynomial, XLA's); XLA's own
//!   float32 approximations differ from the correctly rounded result by an ulp or two. Slices
//!   of float32 lanes get `exp`, `exp2`, `expm1`, `log`, `log1p`, `logistic`, `sin`, `cos`,
//!   `tanh`, `sinh` and `cosh` (XLA's and libm's) from [`super::vmath`], which gives
//!   [`real_f32`]'s results bit for bit, vectorised.
//! - float16, bfloat16 and the float8/float6/float4 formats: the float32 result rounded once to
//!   the format, as XLA's CPU backend computes them (in float32); they differ from JAX only
//!   where the float32 results differ and the rounding of the two falls on different sides.
//! - complex: under JAX's rules XLA's forms ([`complex_xla_f32`]/[`complex_xla_f64`]:
//!   StableHLO's `sqrt`, XLA's `exp`, jax's `sin`/`cos`, accurate `log`, `log1p`, `atan` and
//!   `asin`; Smith's division and fused products; and `pow`, `tanh`, `tan` and `expm1` step for
//!   step on XLA's own real functions, [`super::xla_math`], bit for bit);
//!   otherwise `num_complex`'s formulas (but for XLA's sinh and cosh, below); finite results
//!   agree to a few ulps, the branch cuts and infinities follow C99's conventions where
//!   `num_complex` does.
//!
//! `sinh`, `cosh` and `tanh` are XLA's own, in every type ([`Fn1::Sinh`], [`Fn1::Cosh`],
//! [`Fn1::Tanh`]); NumPy's loops, the platform's libm, are [`Fn1::SinhLibm`] & co.:
//!
//! - sinh and cosh are the decompositions of StableHLO's `chlo.sinh`/`chlo.cosh`, float16 and
//!   bfloat16 computed in float32: `cosh x = e^(x + log ½) + e^(−x + log ½)`,
//!   `sinh x = e^(x + log ½) − e^(−x + log ½)` for `|x| ≥ 1`, and `(E + E/(E + 1))/2` with
//!   `E = expm1(x)` below 1, every step rounded in the working type (`log ½` included). The
//!   rounding of `x + log ½` moves the result by up to 2⁻²⁴·|x| relatively in float32 (a few
//!   dozen ulps for |x| near 80), which JAX's results have: for those results to agree bit
//!   for bit, the steps are replayed here on correctly rounded `exp`/`expm1`. Complex sinh and
//!   cosh are the same sum and difference of complex exponentials (no `|x| < 1` branch), each
//!   as StableHLO expands a complex `exp`: `(eᵃ·cos b, eᵃ·sin b)`, the imaginary part 0 where
//!   `b` is, `(e^(a/2)·cos b)·e^(a/2)` & co. where `eᵃ` overflows, subnormal operands and
//!   products flushed to zero as XLA's CPU code does.
//! - tanh is XLA's CPU approximation, Eigen's rational function ([`super::xla_math`]), bit for
//!   bit in float32 and float64 (float16 and bfloat16: its float32 result rounded once). It
//!   differs from the correctly rounded tanh by an ulp or two in about two arguments of three;
//!   in float32 it is exactly ±1 from |x| ≥ 7.998812 on (its argument clamp) and `x` below
//!   4·10⁻⁴; in float64 its argument is clamped to ±17.714196154005176 and it is ±1 from 20 on.

use num_complex::Complex;

/// A unary function of the floating-point primitives (XLA's, see the module doc; the `Libm`
/// variants are NumPy's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fn1 {
    Exp,
    Exp2,
    Expm1,
    Log,
    Log1p,
    Sin,
    Cos,
    Tan,
    Tanh,
    Logistic,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    Sqrt,
    Rsqrt,
    Cbrt,
    Erf,
    Erfc,
    ErfInv,
    /// sinh as the platform's libm computes it (NumPy's loops).
    SinhLibm,
    /// cosh as the platform's libm computes it.
    CoshLibm,
    /// tanh as the platform's libm computes it.
    TanhLibm,
}

const FRAC_2_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// erf(x) for |x| < 3: 2x/sqrt(pi) e^(-x^2) sum (2x^2)^n / (1*3*...*(2n+1)) (positive terms).
fn erf_small(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut n = 0.0;
    while term > 1e-18 * sum {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
    }
    FRAC_2_SQRT_PI * x * (-x2).exp() * sum
}

/// erfc(x) for x >= 0.5 by its continued fraction (modified Lentz).
fn erfc_cf(x: f64) -> f64 {
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..20_000 {
        let a = f64::from(k) / 2.0;
        d = x + a * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = x + a / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-17 {
            break;
        }
    }
    (-x * x).exp() / (f * std::f64::consts::PI.sqrt())
}

pub(crate) fn erf(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x.is_infinite() {
        1f64.copysign(x)
    } else if x.abs() < 3.0 {
        erf_small(x)
    } else {
        (1.0 - erfc_cf(x.abs())).copysign(x)
    }
}

pub(crate) fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x < 0.5 {
        1.0 - erf(x)
    } else if x > 27.3 {
        0.0
    } else {
        erfc_cf(x)
    }
}

/// `f` of a float64.
pub(crate) fn real_f64(f: Fn1, x: f64) -> f64 {
    match f {
        Fn1::Exp => x.exp(),
        // XLA: exp(x * ln 2), in the lane's precision.
        Fn1::Exp2 => (x * std::f64::consts::LN_2).exp(),
        Fn1::Expm1 => x.exp_m1(),
        Fn1::Log => x.ln(),
        Fn1::Log1p => x.ln_1p(),
        Fn1::Sin => x.sin(),
        Fn1::Cos => x.cos(),
        Fn1::Tan => x.tan(),
        Fn1::Tanh => xla_tanh_f64(x),
        Fn1::TanhLibm => x.tanh(),
        Fn1::Logistic => 1.0 / (1.0 + (-x).exp()),
        Fn1::Asin => x.asin(),
        Fn1::Acos => x.acos(),
        Fn1::Atan => x.atan(),
        Fn1::Sinh => xla_sinh(x, |a| a.exp_m1(), f64::exp),
        Fn1::Cosh => xla_cosh(x, f64::exp),
        Fn1::SinhLibm => x.sinh(),
        Fn1::CoshLibm => x.cosh(),
        Fn1::Asinh => x.asinh(),
        Fn1::Acosh => x.acosh(),
        Fn1::Atanh => x.atanh(),
        Fn1::Sqrt => x.sqrt(),
        Fn1::Rsqrt => 1.0 / x.sqrt(),
        Fn1::Cbrt => x.cbrt(),
        Fn1::Erf => erf(x),
        Fn1::Erfc => erfc(x),
        // NaN stays NaN; below 1e-150 erfinv is its first-order term.
        Fn1::ErfInv if x.is_nan() => x,
        Fn1::ErfInv if x.abs() < 1e-150 => x * (std::f64::consts::PI.sqrt() / 2.0),
        Fn1::ErfInv => crate::kernels::erfinv::erf_inv_f64(x),
    }
}

/// `f` of a float32 (see the module doc).
pub(crate) fn real_f32(f: Fn1, x: f32) -> f32 {
    match f {
        Fn1::Sqrt => x.sqrt(),
        Fn1::ErfInv => crate::kernels::erfinv::erf_inv_f32(x),
        Fn1::Exp2 => real_f32(Fn1::Exp, x * std::f32::consts::LN_2),
        Fn1::Sinh => xla_sinh(x, |a| real_f32(Fn1::Expm1, a), |a| real_f32(Fn1::Exp, a)),
        Fn1::Cosh => xla_cosh(x, |a| real_f32(Fn1::Exp, a)),
        Fn1::Tanh => xla_tanh_f32(x),
        _ => real_f64(f, f64::from(x)) as f32,
    }
}

/// The real float types XLA's decompositions are replayed in.
pub(crate) trait Float:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// `log ½` rounded to the type (`−ln 2`: the rounding is symmetric).
    const LOG_HALF: Self;
    const HALF: Self;
    const ONE: Self;
    fn abs(self) -> Self;
    /// `self · b + c` rounded once (for XLA's contracted complex products).
    fn mul_add(self, b: Self, c: Self) -> Self;
    /// The canonical NaN (`max`/`min`'s result on a NaN operand in `kernels::fast`).
    const NAN: Self;
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
}

impl Float for f32 {
    const LOG_HALF: f32 = -std::f32::consts::LN_2;
    const HALF: f32 = 0.5;
    const ONE: f32 = 1.0;
    fn abs(self) -> f32 {
        f32::abs(self)
    }
    fn mul_add(self, b: f32, c: f32) -> f32 {
        f32::mul_add(self, b, c)
    }
    const NAN: f32 = f32::NAN;
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline(always)]
    fn is_sign_negative(self) -> bool {
        f32::is_sign_negative(self)
    }
}

impl Float for f64 {
    const LOG_HALF: f64 = -std::f64::consts::LN_2;
    const HALF: f64 = 0.5;
    const ONE: f64 = 1.0;
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    fn mul_add(self, b: f64, c: f64) -> f64 {
        f64::mul_add(self, b, c)
    }
    const NAN: f64 = f64::NAN;
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline(always)]
    fn is_sign_negative(self) -> bool {
        f64::is_sign_negative(self)
    }
}

/// XLA's sinh (`chlo.sinh`'s decomposition, see the module doc) on the type's `expm1` and `exp`:
/// `(E + E/(E + 1))/2` with `E = expm1(x)` for `|x| < 1`, else
/// `e^(x + log ½) − e^(log ½ − x)`, each step rounded to the type.
#[inline(always)]
pub(crate) fn xla_sinh<T: Float>(x: T, expm1: impl Fn(T) -> T, exp: impl Fn(T) -> T) -> T {
    if x.abs() < T::ONE {
        let e = expm1(x);
        T::HALF * (e + e / (e + T::ONE))
    } else {
        exp(x + T::LOG_HALF) - exp(T::LOG_HALF - x)
    }
}

/// XLA's cosh: `e^(x + log ½) + e^(log ½ − x)`, each step rounded to the type.
#[inline(always)]
pub(crate) fn xla_cosh<T: Float>(x: T, exp: impl Fn(T) -> T) -> T {
    exp(x + T::LOG_HALF) + exp(T::LOG_HALF - x)
}

/// Where XLA's float32 tanh is exactly ±1 on: its rational function's argument clamp, where
/// the function is 1 (7.99881172180175781).
#[cfg(test)]
pub(crate) const TANH_F32_ONE: f32 = 7.998_811_7;
/// Below this magnitude XLA's float32 tanh is `x` itself (`0.0004` rounded to float32).
#[cfg(test)]
pub(crate) const TANH_F32_LINEAR: f32 = 0.000_4;

/// XLA's float32 tanh ([`super::xla_math::tanh_f32`], see the module doc).
pub(crate) fn xla_tanh_f32(x: f32) -> f32 {
    super::xla_math::tanh_f32(x)
}

/// XLA's float64 tanh ([`super::xla_math::tanh_f64`]).
fn xla_tanh_f64(x: f64) -> f64 {
    super::xla_math::tanh_f64(x)
}

macro_rules! complex_fn {
    ($name:ident, $t:ty, $real:ident) => {
        /// `f` of a complex number.
        pub(crate) fn $name(f: Fn1, z: Complex<$t>) -> Complex<$t> {
            let one = Complex::new(1.0, 0.0);
            // XLA's complex exp (StableHLO's expansion): (eᵃ·cos b, eᵃ·sin b), the imaginary
            // part 0 where b is, and (e^(a/2)·cos b)·e^(a/2) & co. where eᵃ overflows; the
            // CPU's flushing of subnormal operands and products to zero.
            let ftz = |v: $t| {
                if v.abs() < <$t>::MIN_POSITIVE {
                    0.0 * v
                } else {
                    v
                }
            };
            let exp = |w: Complex<$t>| {
                let (a, b) = (ftz(w.re), ftz(w.im));
                let e = $real(Fn1::Exp, a);
                let (c, s) = ($real(Fn1::Cos, b), $real(Fn1::Sin, b));
                let (re, im) = if e == <$t>::INFINITY {
                    let h = $real(Fn1::Exp, a * 0.5);
                    (ftz(h * c) * h, ftz(h * s) * h)
                } else {
                    (e * c, e * s)
                };
                Complex::new(ftz(re), if b == 0.0 { 0.0 } else { ftz(im) })
            };
            let log_half = Complex::new(<$t as Float>::LOG_HALF, 0.0);
            match f {
                Fn1::Exp => z.exp(),
                Fn1::Exp2 => (z * std::f64::consts::LN_2 as $t).exp(),
                Fn1::Expm1 => z.exp() - one,
                Fn1::Log => z.ln(),
                Fn1::Log1p => (z + one).ln(),
                Fn1::Sin => z.sin(),
                Fn1::Cos => z.cos(),
                Fn1::Tan => z.tan(),
                Fn1::Tanh | Fn1::TanhLibm => z.tanh(),
                Fn1::Logistic => one / (one + (-z).exp()),
                Fn1::Asin => z.asin(),
                Fn1::Acos => z.acos(),
                Fn1::Atan => z.atan(),
                Fn1::Sinh => exp(z + log_half) - exp(log_half - z),
                Fn1::Cosh => exp(z + log_half) + exp(log_half - z),
                Fn1::SinhLibm => z.sinh(),
                Fn1::CoshLibm => z.cosh(),
                Fn1::Asinh => z.asinh(),
                Fn1::Acosh => z.acosh(),
                Fn1::Atanh => z.atanh(),
                Fn1::Sqrt => z.sqrt(),
                Fn1::Rsqrt => one / z.sqrt(),
                Fn1::Cbrt => z.cbrt(),
                Fn1::Erf | Fn1::Erfc | Fn1::ErfInv => Complex::new(<$t>::NAN, <$t>::NAN),
            }
        }
    };
}
complex_fn!(complex_f32, f32, real_f32);
complex_fn!(complex_f64, f64, real_f64);

const SQRT_2: f64 = std::f64::consts::SQRT_2;

/// `asin(x + iy)` for `x, y ≥ 0` (finite, below 1e150) by Hull, Fairgrieve and Tang's
/// algorithm: `A = (|z + 1| + |z − 1|)/2`, the real part `asin(x/A)` or an `atan` form near
/// the branch point, the imaginary part `log(A + √(A² − 1))` or its `log1p` form for `A`
/// near 1.
fn asin_first_quadrant(x: f64, y: f64) -> (f64, f64) {
    let (r, s) = ((x + 1.0).hypot(y), (x - 1.0).hypot(y));
    let a = 0.5 * (r + s);
    let b = x / a;
    let apx = a + x;
    let re = if b <= 0.6417 {
        b.asin()
    } else if x <= 1.0 {
        (x / (0.5 * apx * (y * y / (r + x + 1.0) + (s + (1.0 - x)))).sqrt()).atan()
    } else {
        (x / (y * (0.5 * (apx / (r + x + 1.0) + apx / (s + (x - 1.0)))).sqrt())).atan()
    };
    let im = if a <= 1.5 {
        let am1 = if x < 1.0 {
            0.5 * (y * y / (r + x + 1.0) + y * y / (s + (1.0 - x)))
        } else {
            0.5 * (y * y / (r + x + 1.0) + (s + (x - 1.0)))
        };
        (am1 + (am1 * (a + 1.0)).sqrt()).ln_1p()
    } else {
        (a + (a * a - 1.0).sqrt()).ln()
    };
    (re, im)
}

/// The complex product XLA's CPU code computes: `(ac − bd, ad + bc)` with LLVM's
/// contraction of the second product of each part into a fused multiply-add,
/// `(fma(−b, d, a·c), fma(b, c, a·d))` (JAX's results; the unfused form differs by an ulp).
pub(crate) fn xla_mul<T: Float>(x: Complex<T>, y: Complex<T>) -> Complex<T> {
    let (a, b, c, d) = (x.re, x.im, y.re, y.im);
    Complex::new(a.mul_add(c, -(b * d)), b.mul_add(c, a * d))
}

macro_rules! complex_xla_fn {
    ($name:ident, $div:ident, $atan2:ident, $tanh:ident, $pow:ident, $t:ty, $real:ident, $complex:ident) => {
        /// Complex division as XLA's CPU backend divides: Smith's algorithm (the ratio of the
        /// smaller to the larger part of the divisor; each `ratio·p + q` a fused multiply-add,
        /// as LLVM contracts it), and where both parts of that quotient
        /// are NaN, XLA's corner cases: a zero divisor (∞ with the sign of its real part times
        /// each part of the dividend), an infinite dividend over a finite divisor, a finite
        /// dividend over an infinite divisor.
        pub(crate) fn $div(a: Complex<$t>, b: Complex<$t>) -> Complex<$t> {
            let (ar, ai, br, bi) = (a.re, a.im, b.re, b.im);
            let inf = <$t>::INFINITY;
            let (cr, ci) = if br.abs() < bi.abs() {
                let ratio = br / bi;
                let denom = ratio.mul_add(br, bi);
                (
                    ratio.mul_add(ar, ai) / denom,
                    ratio.mul_add(ai, -ar) / denom,
                )
            } else {
                let ratio = bi / br;
                let denom = ratio.mul_add(bi, br);
                (
                    ratio.mul_add(ai, ar) / denom,
                    (-ratio).mul_add(ar, ai) / denom,
                )
            };
            if !(cr.is_nan() && ci.is_nan()) {
                return Complex::new(cr, ci);
            }
            let unit = |v: $t| if v.is_infinite() { 1.0 as $t } else { 0.0 }.copysign(v);
            if br == 0.0 && bi == 0.0 && !(ar.is_nan() && ai.is_nan()) {
                let s = inf.copysign(br);
                return Complex::new(s * ar, s * ai);
            }
            let a_finite = ar.is_finite() && ai.is_finite();
            let b_finite = br.is_finite() && bi.is_finite();
            if (ar.is_infinite() || ai.is_infinite()) && b_finite {
                let (ur, ui) = (unit(ar), unit(ai));
                return Complex::new(inf * (ur * br + ui * bi), inf * (ui * br - ur * bi));
            }
            if (br.is_infinite() || bi.is_infinite()) && a_finite {
                let (ur, ui) = (unit(br), unit(bi));
                return Complex::new(0.0 * (ar * ur + ai * ui), 0.0 * (ai * ur - ar * ui));
            }
            Complex::new(cr, ci)
        }

        /// `x ** y` of complex numbers as XLA's CPU backend emits it:
        /// `|x|^c·e^(−d·θ)·(cos q, sin q)` with `θ = atan2(b, a)` and `q = c·θ + d·log|x|`
        /// (`|x|` as XLA's complex `abs`, `max·√((min/max)² + 1)`), its real functions
        /// [`super::xla_math`]'s, and XLA's selects: `x^0` and `1^y` are 1, `0^y` for a real
        /// non-negative `y` is 1 or 0, `∞^y` for a real `y` ∞ or 0, the imaginary part 0 in
        /// each of those cases.
        pub(crate) fn $pow(x: Complex<$t>, y: Complex<$t>) -> Complex<$t> {
            use super::xla_math::XlaReal;
            let (a, b, c, d) = (x.re, x.im, y.re, y.im);
            let inf = <$t>::INFINITY;
            let (aa, ab) = (a.abs(), b.abs());
            // LLVM's maximum/minimum: NaN propagating.
            let (hi, lo) = if aa.is_nan() || ab.is_nan() {
                (<$t>::NAN, <$t>::NAN)
            } else {
                (aa.max(ab), aa.min(ab))
            };
            let t = lo / hi;
            let m = hi * t.mul_add(t, 1.0).sqrt();
            let m = if m.is_nan() { lo } else { m };
            let p = XlaReal::pow(m, c);
            let theta = XlaReal::atan2(b, a);
            let coeff = XlaReal::exp(theta * -d) * p;
            let q = c.mul_add(theta, d * XlaReal::log(m));
            let (re, im) = (coeff * XlaReal::cos(q), coeff * XlaReal::sin(q));
            let real_exponent = d == 0.0;
            let zero_base = real_exponent && c >= 0.0 && m == 0.0;
            let one = (a == 1.0 && b == 0.0) || (c == 0.0 && real_exponent);
            let inf_base = a == inf && b == 0.0;
            let to_inf = inf_base && c > 0.0 && real_exponent;
            let to_zero = inf_base && c < 0.0 && real_exponent;
            let re = if to_zero {
                0.0
            } else if to_inf {
                inf
            } else if one {
                1.0
            } else if zero_base {
                if c == 0.0 { 1.0 } else { 0.0 }
            } else {
                re
            };
            let real_result = if c < 0.0 && real_exponent {
                inf_base
            } else {
                to_inf
            };
            let im = if real_result || one || zero_base {
                0.0
            } else {
                im
            };
            Complex::new(re, im)
        }

        /// `tanh` of a complex number as XLA's CPU backend emits it, with
        /// [`super::xla_math`]'s real functions:
        /// `(E₊ − E₋ + i·4 cos b sin b) / (4 cos² b + E₊ + E₋)` with `E± = expm1(±2a)`,
        /// `±1` for the real part where `E₊ + E₋` overflows, a NaN real part where
        /// `4 cos b sin b` is NaN (but for an infinite `a`), and a zero imaginary part where
        /// `b` is zero or `a` infinite with that NaN. Also whether the real part is that NaN.
        fn $tanh(a: $t, b: $t) -> (Complex<$t>, bool) {
            use super::xla_math::XlaReal;
            let inf = <$t>::INFINITY;
            let w = a + a;
            let (e_pos, e_neg) = (XlaReal::expm1(w), XlaReal::expm1(-w));
            let (c, s) = (XlaReal::cos(b), XlaReal::sin(b));
            let c4 = (c * c) * 4.0;
            let s4 = (c * s) * 4.0;
            let sum = e_pos + e_neg;
            let denom = c4 + sum;
            let re = if sum == inf {
                (1.0 as $t).copysign(a)
            } else {
                (e_pos - e_neg) / denom
            };
            let a_inf = a.abs() == inf;
            let nan_re = s4.is_nan() && !a_inf;
            let re = if nan_re { <$t>::NAN } else { re };
            let im = if b == 0.0 || (a_inf && s4.is_nan()) {
                0.0
            } else {
                s4 / denom
            };
            (Complex::new(re, im), nan_re)
        }

        /// `atan2(y, x)` of complex numbers as XLA's CPU backend emits it:
        /// `−i·log((x + i·y) / √(x² + y²))`, each step XLA's complex operation (the square
        /// root and logarithm in polar form: `√r·(cos(θ/2), sin(θ/2))` with
        /// `√r = √max·(1 + (min/max)²)^¼`, and `(log |w|, atan2(im w, re w))`).
        pub(crate) fn $atan2(y: Complex<$t>, x: Complex<$t>) -> Complex<$t> {
            let real_atan2 = |b: $t, a: $t| (f64::from(b).atan2(f64::from(a))) as $t;
            let mul = xla_mul::<$t>;
            let add = |p: Complex<$t>, q: Complex<$t>| Complex::new(p.re + q.re, p.im + q.im);
            // XLA's |w|: max·√(1 + (min/max)²), min where that is NaN.
            let helper = |w: Complex<$t>| {
                let (a, b) = (w.re.abs(), w.im.abs());
                let (hi, lo) = if a.is_nan() || b.is_nan() {
                    (<$t>::NAN, <$t>::NAN)
                } else {
                    (a.max(b), a.min(b))
                };
                let q = lo / hi;
                (hi, lo, 1.0 + q * q)
            };
            let sqrt = |w: Complex<$t>| {
                let (hi, lo, s) = helper(w);
                let p = (f64::from(s).powf(0.25)) as $t;
                let mut r = $real(Fn1::Sqrt, hi) * p;
                if r.is_nan() {
                    r = lo;
                }
                if r == 0.0 {
                    return Complex::new(0.0, 0.0);
                }
                let (a, b, inf) = (w.re, w.im, <$t>::INFINITY);
                let angle = real_atan2(b, a) * 0.5;
                let (c, sn) = ($real(Fn1::Cos, angle), $real(Fn1::Sin, angle));
                let re = if b.abs() == inf || a == inf {
                    inf
                } else if a == -inf {
                    0.0
                } else {
                    r * c
                };
                let im = if b.abs() == inf || a == -inf {
                    inf.copysign(b)
                } else if r.is_nan() {
                    <$t>::NAN
                } else if sn == 0.0 {
                    sn
                } else {
                    r * sn
                };
                Complex::new(re, im)
            };
            let log = |w: Complex<$t>| {
                let (hi, lo, s) = helper(w);
                let mut m = hi * $real(Fn1::Sqrt, s);
                if m.is_nan() {
                    m = lo;
                }
                Complex::new($real(Fn1::Log, m), real_atan2(w.im, w.re))
            };
            let root = sqrt(add(mul(x, x), mul(y, y)));
            let iy = mul(Complex::new(0.0, 1.0), y);
            let w = $div(add(x, iy), root);
            mul(Complex::new(0.0, -1.0), log(w))
        }

        /// `f` of a complex number as XLA's CPU backend computes it where that differs from
        /// the `num_complex` formulas: `sqrt` as StableHLO expands it (`u = √((|z| + |a|)/2)`,
        /// the other part `|b|/2u`, rescaled where `u` underflows or overflows).
        pub(crate) fn $name(f: Fn1, z: Complex<$t>) -> Complex<$t> {
            let (a, b) = (z.re, z.im);
            match f {
                Fn1::Sqrt => {
                    // StableHLO's expansion (functional_algorithms): u = √((|z| + |a|)/2)
                    // and |b|/(2u), rescaled where u underflows or overflows.
                    let sqrt = |v: $t| $real(Fn1::Sqrt, v);
                    // |(mx, mn)| without overflow, √2·mx on a tie.
                    let hypot = |mx: $t, mn: $t| {
                        if mx == mn {
                            (SQRT_2 as $t) * mx
                        } else {
                            let q = mn / mx;
                            let r = q * q;
                            let sqa = sqrt(1.0 + r);
                            if sqa == 1.0 && r > 0.0 {
                                mx + mx * r / 2.0
                            } else {
                                mx * sqa
                            }
                        }
                    };
                    let (ax, ay) = (a.abs(), b.abs());
                    // The constants in the type; XLA divides by a constant as a product by
                    // its reciprocal and folds products of constants.
                    let (sq_ax, sq_ay, sq_2) = (sqrt(ax), sqrt(ay), SQRT_2 as $t);
                    let inv_sq_2 = 1.0 / sq_2;
                    let sq_12 = sqrt(1.0 + sq_2);
                    let eq = ax == ay;
                    let u_general = sqrt(hypot(ax.max(ay), ax.min(ay)) / 2.0 + ax / 2.0);
                    let rescale = u_general == 0.0 || u_general == <$t>::INFINITY;
                    let ratio = if eq {
                        1.0
                    } else if ax < ay {
                        ax / ay
                    } else {
                        ay / ax
                    };
                    let h = hypot((1.0 as $t).max(ratio.abs()), (1.0 as $t).min(ratio.abs()));
                    let (sq_1h, sq_rh) = (sqrt(1.0 + h), sqrt(ratio + h));
                    let u = if eq {
                        sq_ax * (sq_12 * inv_sq_2)
                    } else if !rescale {
                        u_general
                    } else if ax > ay {
                        sq_ax * (sq_1h * inv_sq_2)
                    } else {
                        sq_ay * (sq_rh * inv_sq_2)
                    };
                    let ay_over_2u = if eq {
                        sq_ay * (1.0 / (sq_12 * sq_2))
                    } else if !rescale {
                        ay / (u_general * 2.0)
                    } else if ax > ay {
                        sq_ay * (sq_ay / sq_ax) / (sq_1h * sq_2)
                    } else {
                        sq_ay / (sq_rh * sq_2)
                    };
                    let signed = |v: $t| if b < 0.0 { -v } else { v };
                    if a >= 0.0 {
                        Complex::new(u, signed(ay_over_2u))
                    } else {
                        Complex::new(ay_over_2u, signed(u))
                    }
                }
                // (eᵃ·cos b, eᵃ·sin b), the imaginary part 0 where b is; where eᵃ overflows,
                // (e^(a/2)·cos b)·e^(a/2) & co.
                Fn1::Exp => {
                    let e = $real(Fn1::Exp, a);
                    let (c, sn) = ($real(Fn1::Cos, b), $real(Fn1::Sin, b));
                    let (re, im) = if e == <$t>::INFINITY {
                        let h = $real(Fn1::Exp, a * 0.5);
                        ((h * c) * h, (h * sn) * h)
                    } else {
                        (e * c, e * sn)
                    };
                    Complex::new(re, if b == 0.0 { 0.0 } else { im })
                }
                // XLA's: (cosm1 b + expm1(a)·(cosm1 b + 1), sin b·(expm1(a) + 1)), the
                // imaginary part 0 where b is ([`super::xla_math`]'s real functions).
                Fn1::Expm1 => {
                    use super::xla_math::XlaReal;
                    let em1 = XlaReal::expm1(a);
                    let cm1 = XlaReal::cosm1(b);
                    let re = em1.mul_add(cm1 + 1.0, cm1);
                    // `b == 0` with denormals off: a subnormal `b` too.
                    let im = if b == 0.0 || b.is_subnormal() {
                        0.0
                    } else {
                        XlaReal::sin(b) * (em1 + 1.0)
                    };
                    Complex::new(re, im)
                }
                // jax's own: (sin a·cosh b, cos a·sinh b) and (cos a·cosh b, −sin a·sinh b),
                // cosh and sinh from expm1(±b), the part with sin a exactly 0 where a is.
                Fn1::Sin | Fn1::Cos => {
                    let (sn, cs) = ($real(Fn1::Sin, a), $real(Fn1::Cos, a));
                    let (e1, e2) = ($real(Fn1::Expm1, b), $real(Fn1::Expm1, -b));
                    let (sinh, cosh) = ((e1 - e2) / 2.0, (e1 + e2 + 2.0) / 2.0);
                    if f == Fn1::Sin {
                        Complex::new(if a == 0.0 { 0.0 } else { sn * cosh }, cs * sinh)
                    } else {
                        Complex::new(cs * cosh, if a == 0.0 { 0.0 } else { -sn * sinh })
                    }
                }
                // log |z| as ½·log1p(x² + y² − 1) near the unit circle (the squares' rounding
                // errors kept, as StableHLO's expansion keeps them with Dekker's products), and
                // log1p z as ½·log1p(2a + a² + b²) + i·atan2(b, 1 + a): XLA's accurate forms.
                Fn1::Log | Fn1::Log1p => {
                    let log1p = f == Fn1::Log1p;
                    let big = if log1p { 1e15 } else { 2.0 };
                    let (hi, lo) = (a.abs().max(b.abs()), a.abs().min(b.abs()));
                    let near = if log1p {
                        hi < big
                    } else {
                        hi > 0.5 && hi < big && lo < big
                    };
                    let angle = if log1p {
                        (f64::from(b).atan2(f64::from(a) + 1.0)) as $t
                    } else {
                        (f64::from(b).atan2(f64::from(a))) as $t
                    };
                    if !near || !(a.is_finite() && b.is_finite()) {
                        return $complex(f, z);
                    }
                    // The squares and their rounding errors (exact products).
                    let (xa, xb) = (f64::from(a), f64::from(b));
                    let (ha, hb) = (xa * xa, xb * xb);
                    let (la, lb) = (xa.mul_add(xa, -ha), xb.mul_add(xb, -hb));
                    let sum = if log1p {
                        ((2.0 * xa + ha) + hb) + (la + lb)
                    } else {
                        ((ha - 1.0) + hb) + (la + lb)
                    };
                    Complex::new((0.5 * sum.ln_1p()) as $t, angle)
                }
                // atan z = −i·atanh(i·z) as StableHLO's accurate expansion computes it:
                // (½·atan2(2a, (1 + b)(1 − b) − a²), −¼·log1p(−4b / ((1 + b)² + a²))),
                // evaluated in float64.
                Fn1::Atan
                    if a.is_finite()
                        && b.is_finite()
                        && f64::from(a.abs().max(b.abs())) < 1e150 =>
                {
                    let (x, y) = (f64::from(a), f64::from(b));
                    let re = 0.5 * (2.0 * x).atan2((1.0 + y) * (1.0 - y) - x * x);
                    let im = -0.25 * (-4.0 * y / ((1.0 + y) * (1.0 + y) + x * x)).ln_1p();
                    Complex::new(re as $t, im as $t)
                }
                // asin z by Hull, Fairgrieve and Tang's algorithm (as StableHLO's accurate
                // expansion), evaluated in float64; the parts take the operand's signs.
                Fn1::Asin
                    if a.is_finite()
                        && b.is_finite()
                        && f64::from(a.abs().max(b.abs())) < 1e150 =>
                {
                    let (re, im) = asin_first_quadrant(f64::from(a).abs(), f64::from(b).abs());
                    Complex::new((re as $t).copysign(a), (im as $t).copysign(b))
                }
                Fn1::Tanh => $tanh(a, b).0,
                // tan z = −i·tanh(i·z) (XLA's NaN real part of that tanh stays positive).
                Fn1::Tan => {
                    let (t, nan) = $tanh(-b, a);
                    Complex::new(t.im, if nan { t.re } else { -t.re })
                }
                _ => $complex(f, z),
            }
        }
    };
}
complex_xla_fn!(
    complex_xla_f32,
    xla_div_f32,
    xla_atan2_f32,
    xla_ctanh_f32,
    xla_pow_f32,
    f32,
    real_f32,
    complex_f32
);
complex_xla_fn!(
    complex_xla_f64,
    xla_div_f64,
    xla_atan2_f64,
    xla_ctanh_f64,
    xla_pow_f64,
    f64,
    real_f64,
    complex_f64
);

/// `x ** |y|` by JAX's square-and-multiply (`_integer_pow`): the powers of `x` by repeated
/// squaring, multiplied into the result from the lowest bit of `|y|` up, each product by
/// `mul` (which rounds as the caller's dtype does); `None` for `y = 0`. The one order of
/// products for every caller (arrays in `lax`, words in loop bodies' kernels).
pub(crate) fn square_and_multiply<T: Clone>(x: T, y: i64, mul: impl Fn(&T, &T) -> T) -> Option<T> {
    let mut n = y.unsigned_abs();
    let mut base = x;
    let mut acc: Option<T> = None;
    while n > 0 {
        if n & 1 == 1 {
            acc = Some(match acc {
                None => base.clone(),
                Some(a) => mul(&a, &base),
            });
        }
        n >>= 1;
        if n > 0 {
            base = mul(&base, &base);
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Units in the last place between two float32 values.
    fn ulps(a: f32, b: f32) -> u32 {
        let key = |x: f32| {
            let b = x.to_bits() as i64;
            if b < 0x8000_0000 { b } else { 0x8000_0000 - b }
        };
        key(a).abs_diff(key(b)) as u32
    }

    fn grid() -> Vec<Complex<f32>> {
        let parts = [
            -1e30f32, -3.5, -1.0, -0.001, -0.0, 0.0, 0.001, 0.5, 2.5, 1e30,
        ];
        let mut v = Vec::new();
        for &a in &parts {
            for &b in &parts {
                v.push(Complex::new(a, b));
            }
        }
        v
    }

    /// Smith's quotient is the exact one within a few ulps (computed in float64 from the
    /// float32 operands), also where the naive `|y|²` overflows float32.
    #[test]
    fn xla_division_is_close_to_the_exact_quotient() {
        for &x in &grid() {
            for &y in &grid() {
                if y.re == 0.0 && y.im == 0.0 {
                    continue;
                }
                let wide = |z: Complex<f32>| Complex::new(f64::from(z.re), f64::from(z.im));
                let exact = wide(x) / wide(y);
                let got = xla_div_f32(x, y);
                for (g, e) in [(got.re, exact.re), (got.im, exact.im)] {
                    let e = e as f32;
                    if e.is_finite() && e.abs() > 1e-30 && e.abs() < 1e30 {
                        assert!(ulps(g, e) <= 4, "{x} / {y}: {got} vs {exact}");
                    }
                }
            }
        }
    }

    /// The zero divisor: ∞ with the sign of its real part times each part of the dividend.
    #[test]
    fn xla_division_by_zero_scales_by_a_signed_infinity() {
        let q = xla_div_f32(Complex::new(2.0, -3.0), Complex::new(-0.0, 0.0));
        assert_eq!(q, Complex::new(f32::NEG_INFINITY, f32::INFINITY));
    }

    /// StableHLO's square root is the principal one: it squares back to its operand, has a
    /// non-negative real part and the imaginary part's sign is the operand's (but for a
    /// negative zero, which StableHLO's `y < 0` reads as positive).
    #[test]
    fn xla_sqrt_is_the_principal_square_root() {
        for &z in &grid() {
            if z.re.abs() > 1e20 || z.im.abs() > 1e20 {
                continue;
            }
            let r = complex_xla_f32(Fn1::Sqrt, z);
            assert!(r.re >= 0.0, "sqrt({z}) = {r}");
            if z.im != 0.0 {
                assert_eq!(
                    r.im.is_sign_negative(),
                    z.im.is_sign_negative(),
                    "sqrt({z})"
                );
            }
            let back = Complex::new(
                f64::from(r.re) * f64::from(r.re) - f64::from(r.im) * f64::from(r.im),
                2.0 * f64::from(r.re) * f64::from(r.im),
            );
            let scale = f64::from(z.norm()).max(1e-6);
            assert!(
                (back.re - f64::from(z.re)).abs() / scale < 1e-6,
                "sqrt({z}) = {r}"
            );
            assert!(
                (back.im - f64::from(z.im)).abs() / scale < 1e-6,
                "sqrt({z}) = {r}"
            );
        }
    }

    fn bits32(z: Complex<f32>) -> [u32; 2] {
        [z.re.to_bits(), z.im.to_bits()]
    }

    /// XLA's complex formulas on XLA's real functions are its results bit for bit (on glibc):
    /// `power (-1-1j) complex64((-3.454-2.547j))` and `tan (-1.043+0.001j)`, `expm1
    /// complex128[[…,(-1.992-2.426j)]]` (x32) of tests/fixtures/eval/jax_x32_*.json, `tanh
    /// complex128[[(0.001-3j)],[(0.001+1.147j)]]` of jax_x64_unary.json.
    #[test]
    fn xla_complex_formulas_are_xlas_results() {
        let c = |a: f32, b: f32| Complex::new(a, b);
        let p = xla_pow_f32(c(-1.0, -1.0), c(-3.454, -2.547));
        assert_eq!(bits32(p), [970_776_788, 975_305_499]);
        let t = complex_xla_f32(Fn1::Tan, c(-1.043, 0.001));
        assert_eq!(bits32(t), [3_218_837_865, 998_322_244]);
        let e = complex_xla_f32(Fn1::Expm1, c(-1.992, -2.426));
        assert_eq!(bits32(e), [3_213_700_543, 3_182_906_558]);
        let h = complex_xla_f64(Fn1::Tanh, Complex::new(0.001, 1.147));
        assert_eq!(
            [h.re.to_bits(), h.im.to_bits()],
            [4_573_467_767_668_234_310, 4_612_173_813_609_005_018]
        );
    }

    /// Complex atan2 of real arguments (zero imaginary parts) is the real atan2.
    #[test]
    fn xla_complex_atan2_of_reals_is_the_real_atan2() {
        for (y, x) in [(1.0f32, 2.0f32), (-3.0, 0.5), (0.25, -4.0), (2.5, 2.5)] {
            let r = xla_atan2_f32(Complex::new(y, 0.0), Complex::new(x, 0.0));
            let want = (f64::from(y).atan2(f64::from(x))) as f32;
            assert!(ulps(r.re, want) <= 2, "atan2({y}, {x}) = {r} vs {want}");
            assert!(r.im.abs() < 1e-6, "atan2({y}, {x}) = {r}");
        }
    }
}
