//! The inverse error function as `jax.random.normal` needs it.
//!
//! float32 (and the 16-bit floats, which XLA computes in float32): M. Giles, *Approximating
//! the erfinv function* (GPU Computing Gems, 2011), the single-precision polynomials in
//! `w = -log1p(-x²)` that XLA's `ErfInv` uses for F32, Horner steps fused into FMAs as XLA's
//! CPU backend compiles them. XLA's own `log1p` approximation is not reproduced (this one is
//! correctly rounded), so about 1% of float32 values differ from JAX's in the last bit or two;
//! the 16-bit floats, rounded from float32, agree bit for bit in every fixture case.
//! `normal` computes it over slices ([`erf_inv_f32_slice`]): the same bits, vectorised with a
//! float64 `log1p` of its own that leaves the rare values it cannot round with certainty to
//! the C library's (checked on every float32 argument by an ignored test).
//!
//! float64: the same estimate refined by Newton steps on an accurate `erf`/`erfc` (series and
//! continued fraction), good to ~1e-15 relative; XLA uses Giles' double-precision
//! polynomials, so results agree to rounding, not bit for bit.

/// Giles' single-precision erfinv for `-1 < x < 1`; ±inf at ±1.
#[inline]
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
    giles_f32(w) * x
}

/// Giles' single-precision polynomial in `w = -log1p(-x²)`: `erfinv(x) / x`.
// The coefficients are written as Giles published them; they round to the same f32.
#[allow(clippy::excessive_precision)]
#[inline(always)]
fn giles_f32(w: f32) -> f32 {
    if w < 5.0 {
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
    }
}

/// `-log1p(t)` of a float32 `t` in `(-1, 0]`, rounded to float32 exactly as
/// `-(t as f64).ln_1p() as f32` rounds (the C library's `log1p`), or NaN where that rounding
/// cannot be told from here (about one value in 2^19) and for `t` out of range: branch-free
/// float64 arithmetic, so that a loop of it vectorises.
///
/// For `|t| >= 2^-26`, `u = 1 + t` is exact in float64 and `log(u)` is `k ln 2 + 2 atanh(s)`
/// with `u = 2^k m`, `m` in `[sqrt(1/2), sqrt(2))`, `s = (m - 1) / (m + 1)`, `|s| <= 0.1716`;
/// the series to `s^21` and the roundings leave a relative error below 2^-48. The result is
/// kept when it lies more than 512 float64 units in the last place (2^-43 relative) from a
/// float32 rounding boundary, where both it and the C library's (within one unit) round to
/// the same float32. Below 2^-26, `log1p(t)` differs from `t` by less than `t²`, far less
/// than half a float32 unit: the result is `t`.
#[inline(always)]
fn neg_log1p_f32(t: f32) -> f32 {
    // ln 2 = LN2_HI + LN2_LO, LN2_HI with 32 trailing zero bits (k LN2_HI is exact).
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    const TINY: f64 = 1.0 / (1u64 << 26) as f64;
    let t = f64::from(t);
    let u = 1.0 + t;
    // u = 2^k m: the exponent, shifted so that m is in [sqrt(1/2), sqrt(2)).
    let ix = u
        .to_bits()
        .wrapping_add(0x3ff0_0000_0000_0000 - 0x3fe6_a09e_667f_3bcd);
    let two52 = 4_503_599_627_370_496.0;
    let k = f64::from_bits(0x4330_0000_0000_0000 | (ix >> 52)) - (two52 + 1023.0);
    let m = f64::from_bits((ix & 0x000f_ffff_ffff_ffff) + 0x3fe6_a09e_667f_3bcd);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let s2 = s * s;
    // 2 atanh(s) = 2s + s (s² P(s²)), P's coefficients 2 / (2n + 1) for n = 1..10.
    let c = [
        2.0 / 3.0,
        2.0 / 5.0,
        2.0 / 7.0,
        2.0 / 9.0,
        2.0 / 11.0,
        2.0 / 13.0,
        2.0 / 15.0,
        2.0 / 17.0,
        2.0 / 19.0,
        2.0 / 21.0,
    ];
    let p = c.iter().rev().fold(0.0, |p, &c| p * s2 + c);
    let log_m = 2.0 * s + s * (s2 * p);
    let y = k * LN2_HI + (log_m + k * LN2_LO);
    let y = if t > -TINY { t } else { y };
    // The distance from a float32 rounding boundary, in float64 units (bits 0..29 of the
    // mantissa against their midpoint).
    let near = (y.to_bits() & 0x1fff_ffff).abs_diff(0x1000_0000) <= 512;
    let in_range = u > 0.0 && t <= 0.0;
    let y = if near || !in_range { f64::NAN } else { y };
    (-y) as f32
}

/// [`erf_inv_f32`], or NaN where [`neg_log1p_f32`] cannot tell its rounding (and for NaN or
/// `|x| >= 1`): branch-free, for [`erf_inv_f32_slice`].
#[inline(always)]
fn erf_inv_f32_fast(x: f32) -> f32 {
    let w = neg_log1p_f32(-(x * x));
    let r = giles_f32(w) * x;
    if x.abs() < 1.0 { r } else { f32::NAN }
}

/// [`erf_inv_f32`] of every element, in place, bit for bit: a vectorised pass (AVX2 and FMA
/// where the CPU has them) and [`erf_inv_f32`] itself for the elements it leaves NaN.
pub(crate) fn erf_inv_f32_slice(xs: &mut [f32]) {
    const BLOCK: usize = 256;
    let mut r = [0f32; BLOCK];
    for block in xs.chunks_mut(BLOCK) {
        let r = &mut r[..block.len()];
        crate::kernels::simd::map_into(block, r, erf_inv_f32_fast);
        for (x, &e) in block.iter_mut().zip(r.iter()) {
            *x = if e.is_nan() { erf_inv_f32(*x) } else { e };
        }
    }
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
use crate::kernels::math::{erf, erfc};

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

    /// `-log1p(t)` as [`erf_inv_f32`] computes it.
    fn reference(t: f32) -> f32 {
        -(t as f64).ln_1p() as f32
    }

    /// Every float32 in `(-1, 0]` whose bits are `i * step + offset` from `-0`.
    fn check_neg_log1p(step: u32, offset: u32) -> (u64, u64) {
        let (mut checked, mut unsure) = (0, 0);
        let mut b = 0x8000_0000u32 + offset;
        while b < 0xbf80_0000 {
            let t = f32::from_bits(b);
            let fast = neg_log1p_f32(t);
            if fast.is_nan() {
                unsure += 1;
            } else {
                assert_eq!(fast.to_bits(), reference(t).to_bits(), "t = {t:e} ({b:#x})");
            }
            checked += 1;
            b += step;
        }
        (checked, unsure)
    }

    #[test]
    fn fast_log1p_rounds_as_the_c_library_does() {
        let (checked, unsure) = check_neg_log1p(4099, 0);
        assert!(
            unsure * 1000 < checked,
            "{unsure} of {checked} left to the C library"
        );
        for t in [
            0.0f32,
            -0.0,
            -1e-30,
            -1.0 / (1u64 << 26) as f32,
            -0.5,
            -0.75,
        ] {
            let f = neg_log1p_f32(t);
            assert!(f.is_nan() || f.to_bits() == reference(t).to_bits(), "{t}");
        }
        assert!(neg_log1p_f32(-1.0).is_nan() && neg_log1p_f32(1e-3).is_nan());
    }

    /// Every float32 in `(-1, 0]`: run with `--ignored` (a minute or so in release).
    #[test]
    #[ignore]
    fn fast_log1p_rounds_as_the_c_library_does_everywhere() {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let counts: Vec<(u64, u64)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|o| s.spawn(move || check_neg_log1p(threads, o)))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let (checked, unsure) = counts.iter().fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
        println!("{checked} values, {unsure} left to the C library");
    }

    #[test]
    fn the_slice_matches_the_scalar_function() {
        // The uniform values `normal` draws, a sample of them, and the edges.
        let mut xs: Vec<f32> = (0..1u32 << 23)
            .step_by(61)
            .map(|m| f32::from_bits(0x3f80_0000 | m) * 2.0 - 3.0 + 1.0)
            .collect();
        xs.extend([
            0.0,
            -0.0,
            1.0,
            -1.0,
            1.5,
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            1e-30,
            -1e-40,
            0.999_999_94,
            -0.999_999_94,
        ]);
        let mut fast = xs.clone();
        erf_inv_f32_slice(&mut fast);
        for (x, f) in xs.iter().zip(&fast) {
            assert_eq!(f.to_bits(), erf_inv_f32(*x).to_bits(), "{x:e}");
        }
    }

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
