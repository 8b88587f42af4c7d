//! Vectorised float32 `exp`, `exp2`, `expm1`, `log`, `log1p`, `logistic`, `sin`, `cos`,
//! `tanh`, `sinh` and `cosh` that give, bit for bit, what [`math::real_f32`] gives: the
//! platform's float64 libm result rounded once to float32 (the `Libm` forms of `tanh`, `sinh`
//! and `cosh`, NumPy's), or XLA's `tanh`, `sinh` and `cosh` built on those (see the last
//! section of the reductions below).
//!
//! # The scheme
//!
//! Each function is a branch-free element function `f32 -> f32` that LLVM vectorises (4
//! float64 lanes with AVX2, run through [`simd::map_into`]):
//!
//! 1. the argument is widened to float64 and clamped into the range where the result is a
//!    normal float64 that float32 already rounds to 0, ±1 or ±∞ past it (`exp` of
//!    `[-120, 100]`, …), NaN passing through;
//! 2. the function is computed in float64 by range reduction and a polynomial, within 2⁻⁴⁴
//!    of the exact value relatively (bounds per function below) — a few thousand float64
//!    ulps, where libm is within one or two;
//! 3. the result `y` is *settled* ([`settle`]): `y·(1 − 2⁻⁴⁰)` and `y·(1 + 2⁻⁴⁰)` are
//!    rounded to float32. If both give the same float32, so does every float64 between them,
//!    libm's result among them (it is within 2⁻⁴⁴ + 2⁻⁵¹ of `y`), and that float32 is the
//!    answer. If not, `y` lies within 2⁻⁴⁰ of a float32 rounding boundary (about one argument
//!    in 40,000 at random), and the function answers NaN;
//! 4. special arguments (`log` of 0, ±∞, …) are selected at the end.
//!
//! A NaN answer means "ask the scalar path": after each chunk, the lanes that came out NaN are
//! recomputed by [`math::real_f32`] itself. NaN arguments, NaN results (`log` of a negative
//! number, `sin` of ±∞), `sin`/`cos` of arguments of 2²⁰ or more in magnitude and the rare
//! settling failures all go there, so every NaN payload and sign is today's.
//!
//! So the results are libm's rounded to float32 whatever the double-rounding coincidences:
//! rounding to float32 is monotonic and libm's float64 result lies between the two settled
//! bounds, which round alike. The accuracy of the polynomials only decides how often the
//! scalar path runs; float64 accuracy to the last ulp, which would cost twice the operations,
//! buys nothing here. The `#[ignore]`d exhaustive test checks all 2³² float32 arguments of
//! every function.
//!
//! The reductions (`a` the float64 argument, `k` an integer found by adding 1.5·2⁵² to
//! `a·c`, which rounds to the nearest integer without a conversion instruction):
//!
//! - `exp`, `expm1`: `a = k·ln 2 + r`, `|r| ≤ ln 2 / 2`, with ln 2 split into a 40-bit head
//!   (so `a − k·head` is exact) and a tail; `expm1(r) = r + r²·Q(r)` with `Q` a degree-7
//!   minimax polynomial (error 2⁻⁴⁴·⁶ relative to `eʳ`), `exp(a) = 2ᵏ·(1 + expm1(r))`,
//!   `expm1(a) = 2ᵏ·expm1(r) + (2ᵏ − 1)` in one fused multiply-add.
//! - `log`, `log1p`: `u = 2ᵏ·(1 + f)`, `√2/2 ≤ 1 + f < √2` read from the bits, `s = f/(2 + f)`,
//!   `log(1 + f) = f − f²/2 + s·(f²/2 + R(s²))` with `R(z)/z` a degree-4 minimax polynomial
//!   (error 2⁻⁴⁴ relative); `log1p(x)` is `log(1 + x)`, `1 + x` being exact in float64 for
//!   float32 `x` with `2⁻²⁹ ≤ |x| < 2⁵³` (below, `x − x²/2`; above, the rounding of `1 + x`
//!   moves the logarithm by less than 2⁻⁵³ relatively).
//! - `sin`, `cos`: Cody–Waite, `|a| = k·π/2 + r` with π/2 in three 33-bit pieces (`k·piece`
//!   exact for `k < 2²⁰`, so the first subtraction is exact and the others are rounded once);
//!   `sin r = r + r³·S(r²)`, `cos r = 1 − r²/2 + r⁴·C(r²)` (minimax, degree 4 each, errors
//!   2⁻⁴⁶·⁶ and 2⁻⁵¹), the quadrant `k mod 4` choosing and negating.
//! - `logistic` = `1/(1 + exp(−a))`, libm's `tanh` = `E/(E + 2)` with `E = expm1(2|a|)`,
//!   `sinh` = `(E + E/(E + 1))/2` with `E = expm1(|a|)`, `cosh` = `(e + 1/e)/2` with
//!   `e = exp(|a|)`, the sign restored for the odd ones.
//! - XLA's `sinh` and `cosh` ([`math::xla_sinh`], [`math::xla_cosh`]) are their float32 steps
//!   on this module's settled float32 `exp` and `expm1` (both branches of `sinh` computed,
//!   then selected): the steps are the scalar path's on the same float32 values, and a NaN
//!   from a settling failure carries through the arithmetic to the answer. XLA's `tanh` is
//!   its rational function in float32 ([`super::xla_math::tanh_f32`]), needing no settling:
//!   the same float32 operations as the scalar path, lane for lane.
//!
//! The polynomials' coefficients were fitted for this module (Remez, in 50-digit arithmetic)
//! and rounded to float64; their errors above include that rounding.
//!
//! These functions are only used where `mul_add` is one instruction
//! ([`simd::fused_mul_add`]); elsewhere the primitives keep the scalar path.
//!
//! # Measured
//!
//! All 2³² float32 arguments (the `#[ignore]`d exhaustive test, glibc 2.36): no mismatch in
//! any of the fourteen functions. Arguments with a non-NaN result that settling left to the
//! scalar path: 12,414 (`exp`), 12,374 (`exp2`), 11,920 (`expm1`), 45,934 (`log`), 32,718
//! (`log1p`), 13,434 (`logistic`), 13,390 (`sin`), 14,436 (`cos`); libm's 6,136 (`tanh`),
//! 7,166 (`sinh`), 5,802 (`cosh`); XLA's 14,372 (`sinh`), 15,400 (`cosh`,
//! two settled `exp`s); besides the `sin`/`cos` arguments of 2²⁰ or more.
//!
//! Time per element through `lax::bind` on a float32 array, one thread of an AMD EPYC (Zen 3)
//! under load, scalar path → this module: `[256, 32]`: `exp` 9.1 → 2.1 ns, `log1p` 13.4 →
//! 2.7, `logistic` 12.1 → 2.6, `sin` 38 → 3.0; 2²⁴ elements: `exp` 14.9 → 2.1, `log1p` 21 →
//! 2.8, `logistic` 16 → 2.6, `sin` 46 → 2.9 (the benches `exp_f32_2e24` & co.).

use super::math::{self, Fn1};
use super::simd;

/// Lanes computed per pass before the scalar path patches the NaN ones.
const CHUNK: usize = 1024;

/// Whether `f` has a vectorised form here and this CPU runs it (see the module doc).
pub(crate) fn fast(f: Fn1) -> bool {
    matches!(
        f,
        Fn1::Exp
            | Fn1::Exp2
            | Fn1::Expm1
            | Fn1::Log
            | Fn1::Log1p
            | Fn1::Logistic
            | Fn1::Sin
            | Fn1::Cos
            | Fn1::Tanh
            | Fn1::Sinh
            | Fn1::Cosh
            | Fn1::TanhLibm
            | Fn1::SinhLibm
            | Fn1::CoshLibm
    ) && simd::fused_mul_add()
}

/// How elements are read into float32 and written back: `load` and `store` (flushing,
/// rounding to a narrower format), and `stored_nan`, which tells a stored NaN (the lanes the
/// element functions leave to the scalar path).
#[derive(Clone, Copy)]
pub(crate) struct Io<L, S, N> {
    pub(crate) load: L,
    pub(crate) store: S,
    pub(crate) stored_nan: N,
}

/// Float32 elements as they are.
pub(crate) fn plain()
-> Io<impl Fn(f32) -> f32 + Copy, impl Fn(f32) -> f32 + Copy, impl Fn(f32) -> bool + Copy> {
    Io {
        load: |a| a,
        store: |r| r,
        stored_nan: |r: f32| r.is_nan(),
    }
}

/// `out[i] = store(math::real_f32(f, load(x[i])))` over the shorter of the two, for an `f`
/// that is [`fast`] (otherwise nothing is written and the result is false).
pub(crate) fn map<A: Copy, O: Copy, L, S, N>(
    f: Fn1,
    x: &[A],
    out: &mut [O],
    io: Io<L, S, N>,
) -> bool
where
    L: Fn(A) -> f32 + Copy,
    S: Fn(f32) -> O + Copy,
    N: Fn(O) -> bool + Copy,
{
    fast(f) && each(f, x, out, io)
}

/// [`map`] whatever the CPU (also where `mul_add` is a library call: slow, but the same
/// results), false for the functions without a vectorised form.
fn each<A: Copy, O: Copy, L, S, N>(f: Fn1, x: &[A], out: &mut [O], io: Io<L, S, N>) -> bool
where
    L: Fn(A) -> f32 + Copy,
    S: Fn(f32) -> O + Copy,
    N: Fn(O) -> bool + Copy,
{
    // One instance of the loop per function (each a distinct function item, inlined).
    match f {
        Fn1::Exp => chunks(f, x, out, io, exp),
        Fn1::Exp2 => chunks(f, x, out, io, exp2),
        Fn1::Expm1 => chunks(f, x, out, io, expm1),
        Fn1::Log => chunks(f, x, out, io, log),
        Fn1::Log1p => chunks(f, x, out, io, log1p),
        Fn1::Logistic => chunks(f, x, out, io, logistic),
        Fn1::Sin => chunks(f, x, out, io, sin),
        Fn1::Cos => chunks(f, x, out, io, cos),
        Fn1::Tanh => chunks(f, x, out, io, tanh),
        Fn1::Sinh => chunks(f, x, out, io, sinh),
        Fn1::Cosh => chunks(f, x, out, io, cosh),
        Fn1::TanhLibm => chunks(f, x, out, io, tanh_libm),
        Fn1::SinhLibm => chunks(f, x, out, io, sinh_libm),
        Fn1::CoshLibm => chunks(f, x, out, io, cosh_libm),
        _ => return false,
    }
    true
}

/// `real_f32(f, v[i])` for every element, in place (vectorised where [`fast`]).
pub(crate) fn map_vec(mut v: Vec<f32>, f: Fn1) -> Vec<f32> {
    if !fast(f) {
        v.iter_mut().for_each(|e| *e = math::real_f32(f, *e));
        return v;
    }
    let mut x = [0f32; CHUNK];
    for c in v.chunks_mut(CHUNK) {
        let x = &mut x[..c.len()];
        x.copy_from_slice(c);
        map(f, x, c, plain());
    }
    v
}

/// One generic loop: each chunk loaded, through `k` and stored in one vectorised pass, then
/// its NaN lanes recomputed by the scalar path.
#[inline(always)]
fn chunks<A: Copy, O: Copy, L, S, N>(
    f: Fn1,
    x: &[A],
    out: &mut [O],
    io: Io<L, S, N>,
    k: impl Fn(f32) -> f32 + Copy,
) where
    L: Fn(A) -> f32 + Copy,
    S: Fn(f32) -> O + Copy,
    N: Fn(O) -> bool + Copy,
{
    let Io {
        load,
        store,
        stored_nan,
    } = io;
    for (xs, os) in x.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
        // Inlined into the AVX2 loop with the kernel (a closure left out of line would be
        // compiled for the baseline target, its `mul_add`s library calls).
        simd::map_into(
            xs,
            os,
            #[inline(always)]
            |a| store(k(load(a))),
        );
        if os.iter().fold(false, |any, &o| any | stored_nan(o)) {
            for (o, &a) in os.iter_mut().zip(xs) {
                if stored_nan(*o) {
                    *o = store(math::real_f32(f, load(a)));
                }
            }
        }
    }
}

/// `2⁻⁴⁰`: the settling margin, relative (4096 to 8192 float64 ulps of the result).
const MARGIN: f64 = 1.0 / 1_099_511_627_776.0;

/// The float32 that every float64 within [`MARGIN`] of `y` (relatively) rounds to, or NaN where
/// they do not all round alike (or `y` is NaN).
#[inline(always)]
fn settle(y: f64) -> f32 {
    let lo = (y * (1.0 - MARGIN)) as f32;
    let hi = (y * (1.0 + MARGIN)) as f32;
    if lo == hi { lo } else { f32::NAN }
}

/// `x` clamped into `[lo, hi]`, NaN staying NaN (each step is one x86 `maxpd`/`minpd`,
/// which answer their second operand when unordered).
#[inline(always)]
fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    let x = if lo > x { lo } else { x };
    if hi < x { hi } else { x }
}

/// `c[0] + c[1]·x + c[2]·x² + …` (up to degree 11) by Estrin's scheme: pairs of coefficients
/// combined with `x`, pairs of those with `x²`, then `x⁴` and `x⁸`, a dependency chain of
/// about 5 operations rather than Horner's 11, so that consecutive lanes' evaluations overlap.
/// `N` is a constant: the branches fold away.
#[inline(always)]
fn poly<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let pair = |i: usize| {
        if i + 1 < N {
            c[i + 1].mul_add(x, c[i])
        } else {
            c[i]
        }
    };
    let x2 = x * x;
    let quad = |i: usize| {
        if i + 2 < N {
            pair(i + 2).mul_add(x2, pair(i))
        } else {
            pair(i)
        }
    };
    let x4 = x2 * x2;
    let oct = |i: usize| {
        if i + 4 < N {
            quad(i + 4).mul_add(x4, quad(i))
        } else {
            quad(i)
        }
    };
    if N > 8 {
        oct(8).mul_add(x4 * x4, oct(0))
    } else {
        oct(0)
    }
}

/// 1.5·2⁵²: adding it rounds a float64 below 2⁵¹ in magnitude to an integer, which the low
/// bits of the sum then hold.
const SHIFT: f64 = 6_755_399_441_055_744.0;

const INV_LN2: f64 = std::f64::consts::LOG2_E;
/// ln 2 rounded to 40 bits (`k·LN2_HI` is exact for `|k| < 2¹³`) and the rest.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fefa_4000);
const LN2_LO: f64 = f64::from_bits(0xbd48_432a_1b0e_2634);

/// `(eʳ − 1 − r)/r²` on `[-0.3467, 0.3467]`, degree 7 (minimax for `r²·Q(r)`: error
/// 2⁻⁴⁴·⁶ relative to eʳ).
const Q: [f64; 8] = [
    0.499_999_999_996_396_4,
    0.166_666_666_666_339_17,
    0.041_666_666_996_417_14,
    0.008_333_333_363_300_536,
    0.001_388_880_411_306_351,
    0.000_198_411_927_958_316_3,
    2.488_452_219_586_16e-5,
    2.763_269_715_304_146_5e-6,
];
/// `(2ᵏ, expm1(r))` with `a = k·ln 2 + r` (`|a| ≤ 200`): `expm1(r)` within 2⁻⁴⁴·⁵ of `eʳ`
/// and of itself.
#[inline(always)]
fn exp_parts(a: f64) -> (f64, f64) {
    let t = a.mul_add(INV_LN2, SHIFT);
    let kf = t - SHIFT;
    // The low 12 bits of `t` are `k` (two's complement): `k + 1023` is 2ᵏ's exponent field.
    let scale = f64::from_bits(t.to_bits().wrapping_add(1023) << 52);
    let r = (-kf).mul_add(LN2_LO, (-kf).mul_add(LN2_HI, a)); // the inner step exact
    let em1 = (r * r).mul_add(poly(r, &Q), r);
    (scale, em1)
}

/// eᵃ for `|a| ≤ 200`, within 2⁻⁴⁴·⁵ relatively.
#[inline(always)]
fn exp_core(a: f64) -> f64 {
    let (scale, em1) = exp_parts(a);
    scale.mul_add(em1, scale)
}

/// eᵃ − 1 for `|a| ≤ 200`, within 2⁻⁴⁴·⁵ relatively (`a = +0` gives +0).
#[inline(always)]
fn expm1_core(a: f64) -> f64 {
    let (scale, em1) = exp_parts(a);
    scale.mul_add(em1, scale - 1.0)
}

/// The bits of √2/2.
const SQRT1_2_BITS: u64 = 0x3fe6_a09e_667f_3bcd;
/// `R(z)/z` on `[0, 0.02945]` (`z = s²`, `|s| ≤ 3 − 2√2`), degree 4, for
/// `log(1 + f) = 2s + s·R(s²)` (error 2⁻⁴⁴ relative to `log(1 + f)`).
const L: [f64; 5] = [
    0.666_666_666_738_538_7,
    0.399_999_958_562_885_9,
    0.285_721_147_352_725_75,
    0.221_750_688_192_980_94,
    0.196_094_307_596_252_54,
];
/// log(u) for a positive finite float64 `u`, within 2⁻⁴⁴ relatively.
#[inline(always)]
fn log_core(u: f64) -> f64 {
    // u = 2ᵏ·m with √2/2 ≤ m < √2: offsetting the bits moves the exponent's step to √2/2.
    let ix = u
        .to_bits()
        .wrapping_add(0x3ff0_0000_0000_0000 - SQRT1_2_BITS);
    // k + 1023 + 2⁵², exactly, then k.
    let kf =
        f64::from_bits(0x4330_0000_0000_0000 | (ix >> 52)) - (4_503_599_627_370_496.0 + 1023.0);
    let m = f64::from_bits((ix & 0x000f_ffff_ffff_ffff) + SQRT1_2_BITS);
    let f = m - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * poly(z, &L);
    // 2s = f − f²/2 + s·f²/2, so log(1 + f) = f − (f²/2 − s·(f²/2 + R)).
    kf.mul_add(LN2_HI, f - (hfsq - s.mul_add(hfsq + r, kf * LN2_LO)))
}

/// 2/π and π/2 in three 33-bit pieces (`k·PIO2_1` is exact for `k < 2²⁰`).
const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;
const PIO2_1: f64 = f64::from_bits(0x3ff9_21fb_5440_0000);
const PIO2_2: f64 = f64::from_bits(0x3dd0_b461_1a60_0000);
const PIO2_3: f64 = f64::from_bits(0x3ba3_198a_2e00_0000);
/// Arguments from here on in magnitude go to the scalar path.
const SINCOS_MAX: f64 = 1_048_576.0;

/// `(sin r − r)/r³` as a function of `z = r²` on `[0, 0.6242]` (`|r| ≤ 0.79`), degree 4
/// (error 2⁻⁴⁶·⁶ relative to sin r).
const S: [f64; 5] = [
    -0.166_666_666_666_372_12,
    0.008_333_333_325_309_392,
    -0.000_198_412_635_472_264,
    2.755_526_200_313_324e-6,
    -2.475_307_648_521_143_3e-8,
];
/// `(cos r − 1 + r²/2)/r⁴` as a function of `z = r²` on `[0, 0.6242]`, degree 4 (error 2⁻⁵¹
/// relative to cos r).
const C: [f64; 5] = [
    0.041_666_666_666_645_605,
    -0.001_388_888_888_315_106_2,
    2.480_158_280_108_569e-5,
    -2.755_584_839_421_734e-7,
    2.066_301_139_216_639e-9,
];

/// sin(a + q·π/2) for `0 ≤ a < 2²⁰` (`q` 0 for sin, 1 for cos), within 2⁻⁴⁶ relatively.
#[inline(always)]
fn sin_core(a: f64, q: u64) -> f64 {
    let t = a.mul_add(FRAC_2_PI, SHIFT);
    let kf = t - SHIFT;
    let q = t.to_bits().wrapping_add(q);
    // r = a − k·π/2: the first step exact, each of the others rounded once (2⁻⁵³ of r); the
    // three pieces are within 2⁻¹⁰³ of π/2, k times that (below 2⁻⁸³) far below 2⁻⁴⁶·|r|: the
    // closest float32 below 2²⁰ to a multiple of π/2, 252.89821, is 2⁻²⁷·⁸ from it.
    let r = (-kf).mul_add(PIO2_1, a);
    let r = (-kf).mul_add(PIO2_2, r);
    let r = (-kf).mul_add(PIO2_3, r);
    let z = r * r;
    let s = (r * z).mul_add(poly(z, &S), r);
    let c = z.mul_add(z.mul_add(poly(z, &C), -0.5), 1.0);
    let v = if q & 1 == 0 { s } else { c };
    if q & 2 == 0 { v } else { -v }
}

/// eˣ.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    settle(exp_core(clamp(f64::from(x), -120.0, 100.0)))
}

/// 2ˣ as XLA computes it: eˣ of the float32 product `x·ln 2`.
#[inline(always)]
pub(crate) fn exp2(x: f32) -> f32 {
    exp(x * std::f32::consts::LN_2)
}

/// eˣ − 1.
#[inline(always)]
pub(crate) fn expm1(x: f32) -> f32 {
    let a = f64::from(x);
    let y = expm1_core(clamp(a, -60.0, 100.0));
    // ±0 keeps its sign.
    settle(if x == 0.0 { a } else { y })
}

/// log x.
#[inline(always)]
pub(crate) fn log(x: f32) -> f32 {
    let y = settle(log_core(f64::from(x)));
    if x == 0.0 {
        f32::NEG_INFINITY
    } else if x == f32::INFINITY {
        x
    } else if x > 0.0 {
        y
    } else {
        f32::NAN
    }
}

/// 2⁻²⁹: below it in magnitude `1 + x` is inexact and `x − x²/2` is log1p within 2⁻⁵⁸.
const LOG1P_TINY: f64 = 1.0 / 536_870_912.0;

/// log(1 + x).
#[inline(always)]
pub(crate) fn log1p(x: f32) -> f32 {
    let a = f64::from(x);
    let y = if a.abs() < LOG1P_TINY {
        (-0.5 * a).mul_add(a, a)
    } else {
        log_core(1.0 + a)
    };
    let y = settle(y);
    if x == -1.0 {
        f32::NEG_INFINITY
    } else if x == f32::INFINITY {
        x
    } else if x > -1.0 {
        y
    } else {
        f32::NAN
    }
}

/// 1/(1 + e⁻ˣ).
#[inline(always)]
pub(crate) fn logistic(x: f32) -> f32 {
    let e = exp_core(clamp(-f64::from(x), -120.0, 120.0));
    settle(1.0 / (1.0 + e))
}

/// The sign of `x` applied to the non-negative `y` (and flipping a negative one).
#[inline(always)]
fn odd(x: f32, y: f64) -> f64 {
    if x.is_sign_negative() { -y } else { y }
}

/// sin x.
#[inline(always)]
pub(crate) fn sin(x: f32) -> f32 {
    let a = f64::from(x).abs();
    let y = settle(odd(x, sin_core(a, 0)));
    if a < SINCOS_MAX { y } else { f32::NAN }
}

/// cos x.
#[inline(always)]
pub(crate) fn cos(x: f32) -> f32 {
    let a = f64::from(x).abs();
    let y = settle(sin_core(a, 1));
    if a < SINCOS_MAX { y } else { f32::NAN }
}

/// libm's tanh x = E/(E + 2), E = expm1(2|x|).
#[inline(always)]
pub(crate) fn tanh_libm(x: f32) -> f32 {
    let e = expm1_core(2.0 * clamp(f64::from(x).abs(), 0.0, 20.0));
    settle(odd(x, e / (e + 2.0)))
}

/// libm's sinh x = (E + E/(E + 1))/2, E = expm1(|x|).
#[inline(always)]
pub(crate) fn sinh_libm(x: f32) -> f32 {
    let e = expm1_core(clamp(f64::from(x).abs(), 0.0, 100.0));
    settle(odd(x, 0.5 * (e + e / (e + 1.0))))
}

/// libm's cosh x = (e + 1/e)/2, e = exp(|x|).
#[inline(always)]
pub(crate) fn cosh_libm(x: f32) -> f32 {
    let e = exp_core(clamp(f64::from(x).abs(), 0.0, 100.0));
    settle(0.5 * (e + 1.0 / e))
}

/// XLA's tanh, its rational function ([`super::xla_math::tanh_f32`]): branch-free float32
/// arithmetic, the scalar path's operations lane for lane (NaN only for a NaN argument).
#[inline(always)]
pub(crate) fn tanh(x: f32) -> f32 {
    super::xla_math::tanh_f32(x)
}

/// XLA's sinh ([`math::xla_sinh`]) on this module's float32 `exp` and `expm1`: the float32
/// steps are the scalar path's, and a NaN from either function carries through to the answer.
#[inline(always)]
pub(crate) fn sinh(x: f32) -> f32 {
    use math::Float;
    // Both branches, then a select: the lanes stay branch-free.
    let e = expm1(x);
    let small = 0.5 * (e + e / (e + 1.0));
    let large = exp(x + f32::LOG_HALF) - exp(f32::LOG_HALF - x);
    if x.abs() < 1.0 { small } else { large }
}

/// XLA's cosh ([`math::xla_cosh`]) on this module's float32 `exp`.
#[inline(always)]
pub(crate) fn cosh(x: f32) -> f32 {
    math::xla_cosh(x, exp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every function with a vectorised form.
    const ALL: [Fn1; 14] = [
        Fn1::Exp,
        Fn1::Exp2,
        Fn1::Expm1,
        Fn1::Log,
        Fn1::Log1p,
        Fn1::Logistic,
        Fn1::Sin,
        Fn1::Cos,
        Fn1::Tanh,
        Fn1::Sinh,
        Fn1::Cosh,
        Fn1::TanhLibm,
        Fn1::SinhLibm,
        Fn1::CoshLibm,
    ];

    /// The element function alone (NaN where it asks the scalar path).
    fn kernel(f: Fn1) -> fn(f32) -> f32 {
        match f {
            Fn1::Exp => exp,
            Fn1::Exp2 => exp2,
            Fn1::Expm1 => expm1,
            Fn1::Log => log,
            Fn1::Log1p => log1p,
            Fn1::Logistic => logistic,
            Fn1::Sin => sin,
            Fn1::Cos => cos,
            Fn1::Tanh => tanh,
            Fn1::Sinh => sinh,
            Fn1::Cosh => cosh,
            Fn1::TanhLibm => tanh_libm,
            Fn1::SinhLibm => sinh_libm,
            Fn1::CoshLibm => cosh_libm,
            _ => unreachable!(),
        }
    }

    /// Fixed-seed xorshift bit patterns (every float32 class).
    fn random_bits(n: usize, seed: u64) -> Vec<u32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 16) as u32
            })
            .collect()
    }

    /// `n` float32s either side of each of `points` (and the points).
    fn around(points: &[f32], n: u32) -> Vec<u32> {
        let mut v = Vec::new();
        for p in points {
            let b = p.to_bits();
            for d in 0..=n {
                v.push(b.wrapping_add(d));
                v.push(b.wrapping_sub(d));
                v.push((-*p).to_bits().wrapping_add(d));
                v.push((-*p).to_bits().wrapping_sub(d));
            }
        }
        v
    }

    /// Special values of every class.
    fn specials() -> Vec<u32> {
        let mut v = vec![
            0,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0xffc0_0000,
            0x7fc0_1234,
            0xffc1_2345,
            0x7f80_0001, // signalling NaNs
            0xff80_0001,
            0x7fbf_ffff,
            0x7fff_ffff,
            0xffff_ffff,
            0x0000_0001, // subnormals
            0x8000_0001,
            0x007f_ffff,
            0x807f_ffff,
            0x0040_0000,
            0x0080_0000, // the smallest normals
            0x8080_0000,
            0x7f7f_ffff, // the largest finite
            0xff7f_ffff,
        ];
        v.extend(around(
            &[1.0, 0.5, 2.0, 1e-10, 3.0e-8, 6.0e-8, 1e-20, 1e30],
            4,
        ));
        v
    }

    /// The boundaries of `f`: overflow and underflow thresholds, where `log1p` meets −1, the
    /// multiples of π/2, the limit of the vectorised `sin`/`cos`.
    fn boundaries(f: Fn1) -> Vec<u32> {
        let ln2 = std::f32::consts::LN_2;
        let mut points: Vec<f32> = match f {
            Fn1::Exp => vec![
                88.722_84,
                87.336_55,
                103.278_93,
                103.972_08,
                0.346_573_6,
                2.0 * ln2,
            ],
            Fn1::Exp2 => vec![128.0, 126.0, 149.0, 150.0, 0.5, 1.0],
            Fn1::Expm1 => vec![88.722_84, 17.328_68, 36.736_8, 0.346_573_6, 1.0e-8],
            Fn1::Log | Fn1::Log1p => vec![
                1.0,
                std::f32::consts::FRAC_1_SQRT_2,
                std::f32::consts::SQRT_2,
                f32::MAX,
                1.0 / 536_870_912.0,
                1.0 / 268_435_456.0,
            ],
            Fn1::Logistic => vec![88.722_84, 103.972_08, 16.635_532, 17.328_68, 1.0e-8],
            Fn1::Sin | Fn1::Cos => {
                let mut m: Vec<f32> = (1..2000)
                    .map(|k| k as f32 * std::f32::consts::FRAC_PI_2)
                    .collect();
                m.extend((0..20).map(|e| (1u32 << e) as f32 * 1.234_567));
                // The float32 closest to a multiple of π/2 below 2²⁰ (252.89821).
                m.extend([
                    1_048_576.0,
                    1.0e-4,
                    std::f32::consts::FRAC_PI_4,
                    f32::from_bits(0x437c_e5f1),
                ]);
                m
            }
            Fn1::TanhLibm => vec![9.010_913, 8.317_766, 20.0, 1.0e-4, 0.55],
            Fn1::Tanh => vec![
                9.010_913,
                8.317_766,
                20.0,
                1.0e-4,
                0.55,
                math::TANH_F32_ONE,
                math::TANH_F32_LINEAR,
            ],
            // Where `x ± log ½` overflows, the branch at 1, the float32 steps' rounding.
            Fn1::Sinh | Fn1::Cosh => vec![89.415_985, 88.722_84, 88.029_69, 1.0, 0.5, 22.0],
            _ => vec![89.415_985, 88.722_84, 1.0e-4, 0.5, 22.0],
        };
        points.push(ln2);
        let mut v = around(&points, 64);
        if f == Fn1::Log1p {
            // Just above −1, 1 + x tiny.
            v.extend((0..4096u32).map(|d| (-1.0f32).to_bits() - d));
        }
        v
    }

    /// Bit-for-bit agreement with `real_f32` on `xs`, through the chunked loop and, on every
    /// lane of short odd-length slices, through the element function and the loop again.
    fn check(f: Fn1, xs: &[u32]) {
        let xf: Vec<f32> = xs.iter().map(|&b| f32::from_bits(b)).collect();
        let mut got = vec![0u32; xs.len()];
        let bits = Io {
            load: |a: f32| a,
            store: f32::to_bits,
            stored_nan: |o: u32| f32::from_bits(o).is_nan(),
        };
        assert!(each(f, &xf, &mut got, bits));
        let mut bad = Vec::new();
        for (i, (&x, &g)) in xf.iter().zip(&got).enumerate() {
            let want = math::real_f32(f, x).to_bits();
            if g != want {
                bad.push(format!(
                    "{f:?}({x:e} = {:#010x}): {g:#010x}, want {want:#010x}",
                    xs[i]
                ));
            }
        }
        assert!(
            bad.is_empty(),
            "{} mismatches: {:?}",
            bad.len(),
            &bad[..bad.len().min(20)]
        );
        for len in [1, 3, 5, 7, 9, 13, 31, 33] {
            for start in 0..4.min(xf.len().saturating_sub(len)) {
                let x = &xf[start..start + len];
                let mut out = vec![0f32; len];
                assert!(each(f, x, &mut out, plain()));
                for (i, (&a, &o)) in x.iter().zip(&out).enumerate() {
                    let want = math::real_f32(f, a).to_bits();
                    assert_eq!(o.to_bits(), want, "{f:?} lane {i} of {len}: {a:e}");
                }
            }
        }
    }

    fn inputs(f: Fn1) -> Vec<u32> {
        let mut xs = random_bits((1 << 20) + 1, 0x9e37_79b9_7f4a_7c15 ^ f as u64);
        xs.extend(specials());
        xs.extend(boundaries(f));
        xs
    }

    #[test]
    fn exp_matches_libm() {
        check(Fn1::Exp, &inputs(Fn1::Exp));
    }
    #[test]
    fn exp2_matches_libm() {
        check(Fn1::Exp2, &inputs(Fn1::Exp2));
    }
    #[test]
    fn expm1_matches_libm() {
        check(Fn1::Expm1, &inputs(Fn1::Expm1));
    }
    #[test]
    fn log_matches_libm() {
        check(Fn1::Log, &inputs(Fn1::Log));
    }
    #[test]
    fn log1p_matches_libm() {
        check(Fn1::Log1p, &inputs(Fn1::Log1p));
    }
    #[test]
    fn logistic_matches_libm() {
        check(Fn1::Logistic, &inputs(Fn1::Logistic));
    }
    #[test]
    fn sin_matches_libm() {
        check(Fn1::Sin, &inputs(Fn1::Sin));
    }
    #[test]
    fn cos_matches_libm() {
        check(Fn1::Cos, &inputs(Fn1::Cos));
    }
    #[test]
    fn tanh_matches_the_scalar_path() {
        check(Fn1::Tanh, &inputs(Fn1::Tanh));
    }
    #[test]
    fn sinh_matches_the_scalar_path() {
        check(Fn1::Sinh, &inputs(Fn1::Sinh));
    }
    #[test]
    fn cosh_matches_the_scalar_path() {
        check(Fn1::Cosh, &inputs(Fn1::Cosh));
    }
    #[test]
    fn tanh_libm_matches_libm() {
        check(Fn1::TanhLibm, &inputs(Fn1::TanhLibm));
    }
    #[test]
    fn sinh_libm_matches_libm() {
        check(Fn1::SinhLibm, &inputs(Fn1::SinhLibm));
    }
    #[test]
    fn cosh_libm_matches_libm() {
        check(Fn1::CoshLibm, &inputs(Fn1::CoshLibm));
    }

    /// The element functions do the work: on ordinary arguments (finite, a finite result, below
    /// 2²⁰ for sin/cos) almost none is left to the scalar path (about 2 in 65,536 expected,
    /// those within 2⁻⁴⁰ of a float32 rounding boundary).
    #[test]
    fn the_scalar_path_is_rare() {
        for f in ALL {
            let k = kernel(f);
            let mut ordinary = 0usize;
            let mut punted = Vec::new();
            for b in random_bits(1 << 16, 7 ^ f as u64) {
                // Magnitudes from 2⁻²⁰ to 2⁸, both signs.
                let x = f32::from_bits((b & 0x807f_ffff) | ((107 + (b >> 23) % 28) << 23));
                if !math::real_f32(f, x).is_finite() {
                    continue;
                }
                ordinary += 1;
                if k(x).is_nan() {
                    punted.push(x);
                }
            }
            assert!(ordinary > 10_000, "{f:?}");
            assert!(
                punted.len() <= 16,
                "{f:?}: {} of {ordinary}: {punted:?}",
                punted.len()
            );
        }
    }

    /// Every lane of the vectorised path, with bfloat16-style loads and stores of another word
    /// width (what [`super::super::fast`] runs).
    #[test]
    fn loads_and_stores_are_applied_per_lane() {
        let xs: Vec<u16> = (0..=u16::MAX).collect();
        let load = |w: u16| f32::from_bits(u32::from(w) << 16);
        let store = |r: f32| (r.to_bits() >> 16) as u16;
        let io = Io {
            load,
            store,
            stored_nan: |o: u16| o & 0x7fff > 0x7f80,
        };
        for f in ALL {
            let mut out = vec![0u16; xs.len()];
            assert!(each(f, &xs, &mut out, io));
            for (&w, &o) in xs.iter().zip(&out) {
                assert_eq!(o, store(math::real_f32(f, load(w))), "{f:?} {w:#06x}");
            }
        }
    }

    /// The in-place form the generic kernel uses (float16 and the 8-bit formats), over several
    /// chunks and an odd tail.
    #[test]
    fn in_place_matches_libm() {
        let xs: Vec<f32> = random_bits(3 * CHUNK + 77, 3)
            .into_iter()
            .map(|b| f32::from_bits(b & 0xc1ff_ffff))
            .collect();
        for f in ALL.into_iter().chain([Fn1::Tan, Fn1::Erf]) {
            let got = map_vec(xs.clone(), f);
            for (&x, &g) in xs.iter().zip(&got) {
                assert_eq!(g.to_bits(), math::real_f32(f, x).to_bits(), "{f:?} {x:e}");
            }
        }
    }

    /// All 2³² float32 arguments of every function against `real_f32` (release mode, 3 to 5
    /// minutes per function on two busy cores, XLA's `sinh` and `cosh` up to 20;
    /// `VMATH_ONLY=sin` for one function, `VMATH_ONLY=sinhlibm` for libm's):
    /// `cargo test --release -p dtype-lattice-array --lib vmath::tests::exhaustive -- --ignored
    /// --nocapture`. Last run: no mismatch in any function (see the module doc).
    #[test]
    #[ignore = "2^32 arguments per function: run in release"]
    fn exhaustive() {
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        let only = std::env::var("VMATH_ONLY").ok();
        for f in ALL {
            if only
                .as_deref()
                .is_some_and(|o| !format!("{f:?}").eq_ignore_ascii_case(o))
            {
                continue;
            }
            let t0 = std::time::Instant::now();
            let per = (1u64 << 32) / threads as u64;
            let results: Vec<(Vec<u32>, u64)> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..threads as u64)
                    .map(|t| {
                        s.spawn(move || {
                            let (lo, hi) = (
                                t * per,
                                if t + 1 == threads as u64 {
                                    1 << 32
                                } else {
                                    (t + 1) * per
                                },
                            );
                            let k = kernel(f);
                            let mut bad = Vec::new();
                            let mut punts = 0u64;
                            let mut xs = vec![0f32; 1 << 16];
                            let mut out = vec![0f32; 1 << 16];
                            let mut b = lo;
                            while b < hi {
                                let n = ((hi - b) as usize).min(xs.len());
                                for (i, x) in xs[..n].iter_mut().enumerate() {
                                    *x = f32::from_bits((b + i as u64) as u32);
                                }
                                each(f, &xs[..n], &mut out[..n], plain());
                                for (&x, &o) in xs[..n].iter().zip(&out[..n]) {
                                    let want = math::real_f32(f, x);
                                    if k(x).is_nan() && !want.is_nan() {
                                        punts += 1;
                                    }
                                    if o.to_bits() != want.to_bits() {
                                        bad.push(x.to_bits());
                                    }
                                }
                                b += n as u64;
                            }
                            (bad, punts)
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let bad: Vec<u32> = results.iter().flat_map(|r| r.0.clone()).collect();
            let punts: u64 = results.iter().map(|r| r.1).sum();
            println!(
                "{f:?}: {} mismatches, {punts} arguments with a non-NaN result left to the scalar \
                 path, {:.0?}",
                bad.len(),
                t0.elapsed()
            );
            for b in bad.iter().take(20) {
                let x = f32::from_bits(*b);
                println!(
                    "  {b:#010x} {x:e}: {:e} want {:e}",
                    kernel(f)(x),
                    math::real_f32(f, x)
                );
            }
            assert!(bad.is_empty(), "{f:?}");
        }
    }
}
