//! float32 → narrow float (every format of at most 16 bits: float8/6/4, e8m0fnu, bfloat16,
//! float16) with branch-free integer code that LLVM vectorises (no intrinsics; `convert::simd`
//! compiles the loops a second time for AVX2):
//! one [`Encoder32`] per target format, built from its [`Layout`], the same for every format.
//!
//! Normal values round to nearest even by adding `2^(s-1) - 1` plus the last kept bit and
//! shifting right by `s = 23 - m`, then re-biasing the exponent; below the smallest normal the
//! value is added to `2^(min_exp - m + 23)` in float32 arithmetic, whose rounding is exactly the
//! target's subnormal rounding, and the magic constant's bits are subtracted again. Overflow,
//! NaN, sign and the formats' special codes are selects on loop-invariant constants.
//! [`Encoder32::encode`] is tested against the per-element `scalar` module on every kind of input.

use super::Semantics;
use super::minifloat::{Layout, Specials};
use super::scalar::{self, NanRule};

/// Precomputed constants for encoding float32 into one format.
#[derive(Clone, Copy, Debug)]
pub struct Encoder32 {
    shift: u32,
    half_m1: u32,
    lsb_mask: u32,
    tie_up: u32,
    rebias: u32,
    min_normal: u32,
    magic: f32,
    magic_bits: u32,
    sub_mask: u32,
    max_code: u32,
    overflow: u32,
    sign_shift: u32,
    sign_mask: u32,
    fnuz: bool,
    unsigned_nan: u32,
    nan_pos: u32,
    nan_neg: u32,
    payload: bool,
    payload_min1: u32,
    payload_base: u32,
}

impl Encoder32 {
    /// The encoder for `l` under `sem`, if it is a format of at most 16 bits with at most
    /// float32's range and precision that `sem` reaches from float32 by one plain rounding.
    pub fn new(l: &Layout, sem: Semantics) -> Option<Encoder32> {
        if l.bits > 16 || l.m > 23 || l.min_exp < -127 || (l.m > 0 && l.min_exp < -126) {
            return None;
        }
        let f32l = Layout::new(dtype_lattice::DType::Float32.float_format()?);
        if scalar::route(sem, &f32l, l) != scalar::Route::default() {
            return None;
        }
        let (nan_pos, nan_neg, payload, min1, quiet) = match scalar::nan_rule(sem, &f32l, l) {
            NanRule::Canonical => (l.nan_code(false), l.nan_code(true), false, false, false),
            NanRule::Fixed(c) => (c, c, false, false, false),
            NanRule::Payload { quiet, min1 } => (0, 0, true, min1, quiet),
            NanRule::Same | NanRule::CanonicalPositive => return None,
        };
        let shift = 23 - l.m;
        let bias = if l.m == 0 { -l.min_exp } else { 1 - l.min_exp };
        let magic_exp = l.min_exp - l.m as i32 + 23;
        let magic = f32::from_bits(((magic_exp + 127) as u32) << 23);
        Some(Encoder32 {
            shift,
            half_m1: (1u32 << (shift - 1)) - 1,
            lsb_mask: if l.m == 0 { 0 } else { 1 },
            tie_up: u32::from(l.m == 0),
            rebias: ((127 - bias) as u32) << l.m,
            // A format without subnormals (e8m0fnu) takes the normal path for every value above
            // its smallest one: float32 subnormals there round up, as ml_dtypes and XLA.
            min_normal: if l.m == 0 {
                (1u32 << (l.min_exp + 149)) + 1
            } else {
                ((l.min_exp + 127) as u32) << 23
            },
            magic,
            magic_bits: magic.to_bits(),
            sub_mask: if l.m == 0 { 0 } else { u32::MAX },
            max_code: l.max_code as u32,
            overflow: l.overflow_code() as u32,
            sign_shift: if l.signed { l.bits - 1 } else { 0 },
            sign_mask: if l.signed { 1 } else { 0 },
            fnuz: l.specials == Specials::NanNegZero,
            unsigned_nan: if l.signed { 0 } else { u32::MAX },
            nan_pos: nan_pos as u32,
            nan_neg: nan_neg as u32,
            // float32 → float16 keeps the top payload bits of a NaN (NumPy: at least one set,
            // JAX: quieted).
            payload: payload && l.m > 0,
            payload_min1: u32::from(min1),
            payload_base: (l.inf_code() | if quiet { 1 << (l.m - 1) } else { 0 }) as u32,
        })
    }

    /// The code of `x` (float32 bits).
    ///
    /// Written with `i32` compares and without `min`/`max` (every quantity here is below
    /// 2^31), which baseline x86-64 (SSE2) has as single vector instructions.
    #[inline(always)]
    pub fn encode(&self, x: u32) -> u32 {
        self.encode_as::<true>(x)
    }

    /// Whether this format has none of the special cases [`encode_as`](Self::encode_as)
    /// `::<false>` leaves out: no negative-zero NaN (fnuz), an unsigned format's NaNs or a
    /// NaN payload to keep (most float8/6/4 formats and bfloat16).
    fn plain(&self) -> bool {
        !self.fnuz && self.unsigned_nan == 0 && !self.payload
    }

    /// [`encode`](Self::encode), with the code for fnuz zeros, unsigned formats and NaN
    /// payloads compiled in only when `SPECIAL` (without it, correct only for a
    /// [`plain`](Self::plain) format): a third fewer vector operations in the loops.
    #[inline(always)]
    fn encode_as<const SPECIAL: bool>(&self, x: u32) -> u32 {
        let a = (x & 0x7fff_ffff) as i32;
        let s = (x >> 31) as i32;
        let odd = ((a >> self.shift) & self.lsb_mask as i32) | self.tie_up as i32;
        let normal = (a.wrapping_add(self.half_m1 as i32 + odd) >> self.shift)
            .wrapping_sub(self.rebias as i32);
        let sub = ((f32::from_bits(a as u32) + self.magic).to_bits() as i32)
            .wrapping_sub(self.magic_bits as i32)
            & self.sub_mask as i32;
        let mag = if a < self.min_normal as i32 {
            sub
        } else {
            normal
        };
        let mag = if mag > self.max_code as i32 {
            self.overflow as i32
        } else {
            mag
        };
        let sign = (s & self.sign_mask as i32) << self.sign_shift;
        if !SPECIAL {
            let nan = if s == 1 {
                self.nan_neg as i32
            } else {
                self.nan_pos as i32
            };
            return (if a > 0x7f80_0000 { nan } else { mag | sign }) as u32;
        }
        let keep = !(-i32::from(self.fnuz) & -i32::from(mag == 0));
        let out = mag | (sign & keep);
        // float8_e8m0fnu: negative values and zeros are NaN.
        let out = if ((s == 1) | (a == 0)) & (self.unsigned_nan != 0) {
            self.nan_pos as i32
        } else {
            out
        };
        let payload = (a & 0x007f_ffff) >> self.shift;
        let payload = payload | (self.payload_min1 as i32 & i32::from(payload == 0));
        let canonical = if s == 1 {
            self.nan_neg as i32
        } else {
            self.nan_pos as i32
        };
        let pm = -i32::from(self.payload);
        let nan = (((s << self.sign_shift) | self.payload_base as i32 | payload) & pm)
            | (canonical & !pm);
        (if a > 0x7f80_0000 { nan } else { out }) as u32
    }

    /// The constants of [`encode`](Self::encode)'s roundings, for a copy of it written with
    /// intrinsics (`prim::simd8`), if this is an 8-bit format with a significand whose
    /// overflow code is the one above its largest finite code (every float8 format but
    /// `float8_e8m0fnu`).
    pub(crate) fn rounding(&self) -> Option<Rounding> {
        let eight = self.sign_shift == 7 && self.sign_mask == 1 && self.unsigned_nan == 0;
        let overflow_above = self.overflow == self.max_code + 1;
        (eight && overflow_above && self.lsb_mask == 1 && self.tie_up == 0 && !self.payload)
            .then_some(Rounding {
                shift: self.shift,
                half_m1: self.half_m1,
                rebias: self.rebias,
                min_normal: self.min_normal,
                magic: self.magic,
                overflow: self.overflow,
                fnuz: self.fnuz,
                nans: [self.nan_pos as u8, self.nan_neg as u8],
            })
    }

    /// Encodes every float32 of `src` (little-endian, 4 bytes each) into one byte each.
    pub fn encode_to_u8(&self, src: &[u8], dst: &mut [u8]) {
        if !super::simd::encode_to_u8(self, src, dst) {
            encode_u8_loop(self, src, dst);
        }
    }

    /// Encodes every float32 of `src` into two little-endian bytes each.
    pub fn encode_to_u16(&self, src: &[u8], dst: &mut [u8]) {
        if !super::simd::encode_to_u16(self, src, dst) {
            encode_u16_loop(self, src, dst);
        }
    }
}

/// The constants of [`Encoder32::encode`] for an 8-bit format ([`Encoder32::rounding`]): a
/// float32 of magnitude bits `a` at or above `min_normal` has the magnitude code
/// `min(((a + half_m1 + (a >> shift & 1)) >> shift) - rebias, overflow)`, one below has
/// `bits(f32(a) + magic) - bits(magic)`; the sign is the code's high bit, but for an fnuz
/// format's zero; a NaN's code is `nans[sign]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rounding {
    pub shift: u32,
    pub half_m1: u32,
    pub rebias: u32,
    pub min_normal: u32,
    pub magic: f32,
    pub overflow: u32,
    pub fnuz: bool,
    pub nans: [u8; 2],
}

/// The loop of [`Encoder32::encode_to_u8`], inlined into each target's copy
/// ([`super::simd`]). A plain element loop, which LLVM's loop vectoriser turns into vector code
/// (checked in the linked bench binary: with `lto = "thin"` the crate's own `--emit asm` is
/// the pre-link, not yet vectorised code and shows scalar loops).
#[inline(always)]
pub(crate) fn encode_u8_loop(e: &Encoder32, src: &[u8], dst: &mut [u8]) {
    let e = *e;
    let n = dst.len().min(src.len() / 4);
    let (dst, src) = (&mut dst[..n], &src.as_chunks::<4>().0[..n]);
    if e.plain() {
        for i in 0..n {
            dst[i] = e.encode_as::<false>(u32::from_le_bytes(src[i])) as u8;
        }
    } else {
        for i in 0..n {
            dst[i] = e.encode(u32::from_le_bytes(src[i])) as u8;
        }
    }
}

/// The loop of [`Encoder32::encode_to_u16`] (as [`encode_u8_loop`]).
#[inline(always)]
pub(crate) fn encode_u16_loop(e: &Encoder32, src: &[u8], dst: &mut [u8]) {
    let e = *e;
    let n = (dst.len() / 2).min(src.len() / 4);
    let (dst, src) = (
        &mut dst.as_chunks_mut::<2>().0[..n],
        &src.as_chunks::<4>().0[..n],
    );
    if e.plain() {
        for i in 0..n {
            dst[i] = (e.encode_as::<false>(u32::from_le_bytes(src[i])) as u16).to_le_bytes();
        }
    } else {
        for i in 0..n {
            dst[i] = (e.encode(u32::from_le_bytes(src[i])) as u16).to_le_bytes();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::scalar::{self, Class};
    use dtype_lattice::DType;

    /// Every lane of the vector code against the scalar reference: edges of every format and a
    /// spread of all float32 bit patterns.
    #[test]
    fn encoder_matches_scalar() {
        let f32l = Layout::new(DType::Float32.float_format().unwrap());
        let mut inputs: Vec<u32> = (0..=u32::MAX).step_by(65_521).collect();
        for t in DType::NUMERIC {
            if let Some(Class::Float(l)) = Class::of(*t)
                && l.bits <= 16
            {
                for c in 0..(1u64 << l.bits) {
                    let v = l.decode(c) as f32;
                    let b = v.to_bits();
                    inputs.extend([b, b.wrapping_add(1), b.wrapping_sub(1)]);
                    let next = l.decode(c + 1);
                    if next.is_finite() && v.is_finite() {
                        let mid = ((f64::from(v) + next) / 2.0) as f32;
                        inputs.extend([mid.to_bits(), mid.to_bits() + 1, mid.to_bits() - 1]);
                    }
                }
            }
        }
        let (mut checked, mut plain) = (0, 0);
        for t in DType::NUMERIC {
            let Some(Class::Float(l)) = Class::of(*t) else {
                continue;
            };
            for sem in [Semantics::Jax, Semantics::NumPy] {
                let Some(enc) = Encoder32::new(&l, sem) else {
                    assert!(l.bits > 16);
                    continue;
                };
                for &x in &inputs {
                    for x in [x, x ^ 0x8000_0000] {
                        let want = scalar::float_to_float(sem, u64::from(x), &f32l, &l);
                        assert_eq!(u64::from(enc.encode(x)), want, "{sem:?} {t} {x:#010x}");
                        if enc.plain() {
                            let got = enc.encode_as::<false>(x);
                            assert_eq!(u64::from(got), want, "plain {sem:?} {t} {x:#010x}");
                            plain += 1;
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1_000_000 && plain > 100_000, "{checked} {plain}");
    }
}
