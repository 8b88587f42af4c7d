//! The transcendental functions of the elementwise primitives, per lane type.
//!
//! What matches JAX exactly and what approximately (measured on the fixtures of
//! `tests/lax_elementwise.rs`, which print the largest difference per primitive and dtype):
//!
//! - float64: Rust's `std` (the platform's libm) and, for `erf`/`erfc`, a series and a
//!   continued fraction here; XLA uses its own polynomials, so results agree within a couple of
//!   units in the last place, not bit for bit.
//! - float32: computed in float64 and rounded once (correctly rounded but for double rounding),
//!   except `sqrt` (IEEE, exact) and `erf_inv` (Giles' float32 polynomial, XLA's); XLA's own
//!   float32 approximations differ from the correctly rounded result by an ulp or two. Slices
//!   of float32 lanes get `exp`, `exp2`, `expm1`, `log`, `log1p`, `logistic`, `sin`, `cos`,
//!   `tanh`, `sinh` and `cosh` from [`super::vmath`], which gives [`real_f32`]'s results bit for
//!   bit, vectorised.
//! - float16, bfloat16 and the float8/float6/float4 formats: the float32 result rounded once to
//!   the format, as XLA's CPU backend computes them (in float32); they differ from JAX only
//!   where the float32 results differ and the rounding of the two falls on different sides.
//! - complex: `num_complex`'s formulas; finite results agree to a few ulps, the branch cuts
//!   and infinities follow C99's conventions where `num_complex` does.

use num_complex::Complex;

/// A unary function of the floating-point primitives.
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
        Fn1::Tanh => x.tanh(),
        Fn1::Logistic => 1.0 / (1.0 + (-x).exp()),
        Fn1::Asin => x.asin(),
        Fn1::Acos => x.acos(),
        Fn1::Atan => x.atan(),
        Fn1::Sinh => x.sinh(),
        Fn1::Cosh => x.cosh(),
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
        Fn1::ErfInv => crate::random::erfinv::erf_inv_f64(x),
    }
}

/// `f` of a float32 (see the module doc).
pub(crate) fn real_f32(f: Fn1, x: f32) -> f32 {
    match f {
        Fn1::Sqrt => x.sqrt(),
        Fn1::ErfInv => crate::random::erfinv::erf_inv_f32(x),
        Fn1::Exp2 => real_f32(Fn1::Exp, x * std::f32::consts::LN_2),
        _ => real_f64(f, f64::from(x)) as f32,
    }
}

macro_rules! complex_fn {
    ($name:ident, $t:ty) => {
        /// `f` of a complex number.
        pub(crate) fn $name(f: Fn1, z: Complex<$t>) -> Complex<$t> {
            let one = Complex::new(1.0, 0.0);
            match f {
                Fn1::Exp => z.exp(),
                Fn1::Exp2 => (z * std::f64::consts::LN_2 as $t).exp(),
                Fn1::Expm1 => z.exp() - one,
                Fn1::Log => z.ln(),
                Fn1::Log1p => (z + one).ln(),
                Fn1::Sin => z.sin(),
                Fn1::Cos => z.cos(),
                Fn1::Tan => z.tan(),
                Fn1::Tanh => z.tanh(),
                Fn1::Logistic => one / (one + (-z).exp()),
                Fn1::Asin => z.asin(),
                Fn1::Acos => z.acos(),
                Fn1::Atan => z.atan(),
                Fn1::Sinh => z.sinh(),
                Fn1::Cosh => z.cosh(),
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
complex_fn!(complex_f32, f32);
complex_fn!(complex_f64, f64);
