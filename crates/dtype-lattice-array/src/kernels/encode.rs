//! The float32 → narrow float encoder's kernel: [`Encoder32`], a format's rounding as
//! loop-invariant constants (built by `convert::fast` from the format's layout), its
//! branch-free element function and the loops over slices, which LLVM vectorises; with
//! AVX-512 or AVX2 the loops run compiled for them ([`super::encode_simd`]).

/// Precomputed constants for encoding float32 into one format.
#[derive(Clone, Copy, Debug)]
pub struct Encoder32 {
    pub(crate) shift: u32,
    pub(crate) half_m1: u32,
    pub(crate) lsb_mask: u32,
    pub(crate) tie_up: u32,
    pub(crate) rebias: u32,
    pub(crate) min_normal: u32,
    pub(crate) magic: f32,
    pub(crate) magic_bits: u32,
    pub(crate) sub_mask: u32,
    pub(crate) max_code: u32,
    pub(crate) overflow: u32,
    pub(crate) sign_shift: u32,
    pub(crate) sign_mask: u32,
    pub(crate) fnuz: bool,
    pub(crate) unsigned_nan: u32,
    pub(crate) nan_pos: u32,
    pub(crate) nan_neg: u32,
    pub(crate) payload: bool,
    pub(crate) payload_min1: u32,
    pub(crate) payload_base: u32,
}

impl Encoder32 {
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
    pub(crate) fn plain(&self) -> bool {
        !self.fnuz && self.unsigned_nan == 0 && !self.payload
    }

    /// [`encode`](Self::encode), with the code for fnuz zeros, unsigned formats and NaN
    /// payloads compiled in only when `SPECIAL` (without it, correct only for a
    /// [`plain`](Self::plain) format): a third fewer vector operations in the loops.
    #[inline(always)]
    pub(crate) fn encode_as<const SPECIAL: bool>(&self, x: u32) -> u32 {
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
    /// intrinsics (`kernels::simd8`), if this is an 8-bit format with a significand whose
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
        if !super::encode_simd::encode_to_u8(self, src, dst) {
            encode_u8_loop(self, src, dst);
        }
    }

    /// Encodes every float32 of `src` into two little-endian bytes each.
    pub fn encode_to_u16(&self, src: &[u8], dst: &mut [u8]) {
        if !super::encode_simd::encode_to_u16(self, src, dst) {
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
/// ([`super::encode_simd`]). A plain element loop, which LLVM's loop vectoriser turns into vector code
/// (checked in the linked bench binary: under the bench profile's thin LTO the crate's own
/// `--emit asm` is the pre-link, not yet vectorised code and shows scalar loops).
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
