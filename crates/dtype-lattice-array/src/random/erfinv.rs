//! The inverse error function as `jax.random.normal` needs it.
//!
//! float32 (and the 16-bit floats, which XLA computes in float32): M. Giles, *Approximating
//! the erfinv function* (GPU Computing Gems, 2011), the single-precision polynomials in
//! `w = -log1p(-x²)` that XLA's `ErfInv` uses for F32, Horner steps fused into FMAs as XLA's
//! CPU backend compiles them. XLA's own `log1p` approximation is not reproduced (this one is
//! correctly rounded), so about 1% of float32 values differ from JAX's in the last bit or two;
//! the 16-bit floats, rounded from float32, agree bit for bit in every fixture case.
//!
//! float64: the same estimate refined by Newton steps on an accurate `erf`/`erfc` (series and
//! continued fraction), good to ~1e-15 relative; XLA uses Giles' double-precision
//! polynomials, so results agree to rounding, not bit for bit.

/// Giles' single-precision erfinv for `-1 < x < 1`; ±inf at ±1.
// The coefficients are written as Giles published them; they round to the same f32.
#[allow(clippy::excessive_precision)]
pub(crate) fn erf_inv_f32(x: f32) -> f32 {
    if x.abs() >= 1.0 {
        return if x.abs() == 1.0 {
            x * f32::INFINITY
        } else {
            f32::NAN
        };
    }
    // w = -log1p(-x*x), computed accurately and rounded to f32.
    let w = -((-(x * x)) as f64).ln_1p() as f32;
    let p = if w < 5.0 {
        let w = w - 2.5;
        let mut p = 2.810_226_36e-08_f32;
        p = p.mul_add(w, 3.432_739_39e-07);
        p = p.mul_add(w, -3.523_387_7e-06);
        p = p.mul_add(w, -4.391_506_54e-06);
        p = p.mul_add(w, 0.000_218_580_87);
        p = p.mul_add(w, -0.001_253_725_03);
        p = p.mul_add(w, -0.004_177_681_64);
        p = p.mul_add(w, 0.246_640_727);
        p.mul_add(w, 1.501_409_41)
    } else {
        let w = w.sqrt() - 3.0;
        let mut p = -0.000_200_214_257_f32;
        p = p.mul_add(w, 0.000_100_950_558);
        p = p.mul_add(w, 0.001_349_343_22);
        p = p.mul_add(w, -0.003_673_428_44);
        p = p.mul_add(w, 0.005_739_507_73);
        p = p.mul_add(w, -0.007_622_461_3);
        p = p.mul_add(w, 0.009_438_870_47);
        p = p.mul_add(w, 1.001_674_06);
        p.mul_add(w, 2.832_976_82)
    };
    p * x
}

/// Giles' single-precision polynomials evaluated in f64: the starting point of Newton.
fn giles_f64(a: f64) -> f64 {
    let w = -(-(a * a)).ln_1p();
    let p = if w < 5.0 {
        let w = w - 2.5;
        [
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ]
        .iter()
        .fold(2.810_226_36e-08, |p, c| c + p * w)
    } else {
        let w = w.sqrt() - 3.0;
        [
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ]
        .iter()
        .fold(-0.000_200_214_257, |p, c| c + p * w)
    };
    p * a
}

const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

// erf and erfc in float64: the crate's one implementation, the `erf`/`erfc` primitives'.
use crate::prim::math::{erf, erfc};

/// erfinv for float64, `-1 < x < 1`; ±inf at ±1.
pub(crate) fn erf_inv_f64(x: f64) -> f64 {
    if x.abs() >= 1.0 {
        return if x.abs() == 1.0 {
            x * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if x == 0.0 {
        return x;
    }
    let a = x.abs();
    let mut y = giles_f64(a);
    for _ in 0..12 {
        // Newton on erf(y) = a for small y, on ln erfc(y) = ln(1 - a) near 1 (1 - a is exact
        // there), where erf's residual would be lost to rounding.
        let dy = if a < 0.5 {
            (erf(y) - a) / (TWO_OVER_SQRT_PI * (-y * y).exp())
        } else {
            let e = erfc(y);
            (e.ln() - (1.0 - a).ln()) / (-TWO_OVER_SQRT_PI * (-y * y).exp() / e)
        };
        y -= dy;
        if dy.abs() <= 1e-16 * y {
            break;
        }
    }
    y.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_inverts() {
        for &y in &[
            1e-8, 0.001, 0.1, 0.5, 0.9, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 5.8,
        ] {
            let x = erf(y);
            if x < 1.0 {
                // Round trip through the rounded x: erfc(erfinv(x)) == 1 - x.
                let back = erf_inv_f64(x);
                let (q, e) = (1.0 - x, erfc(back));
                assert!(
                    ((e - q) / q).abs() < 1e-12,
                    "{y}: erfc({back}) = {e} != {q}"
                );
                // (x itself is y rounded through erf: far out, a relative 1e-6 of y.)
                assert!(((back - y) / y).abs() < 1e-6 || y > 5.0, "{y}: {back}");
            }
            let f = erf_inv_f32(x as f32) as f64;
            if x < 0.999 {
                assert!(((f - y) / y).abs() < 1e-5, "{y}: {f}");
            }
        }
        assert_eq!(erf_inv_f64(0.0), 0.0);
        assert_eq!(erf_inv_f32(1.0), f32::INFINITY);
        assert!((erfc(1.0) - 0.157_299_207_050_285_13).abs() < 1e-15);
        assert!((erfc(3.0) - 2.209_049_699_858_544e-5).abs() < 1e-19);
    }
}
