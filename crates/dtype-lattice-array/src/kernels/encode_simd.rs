//! The float32 encoder's loops ([`Encoder32`]) compiled again for AVX-512 (16 lanes of 32
//! bits) and for AVX2 (8 lanes), chosen at run time with `is_x86_feature_detected!`; other
//! CPUs run the same loops compiled for the baseline target (SSE2 on x86-64, 4 lanes), which
//! LLVM vectorises too.
//!
//! There are no intrinsics here: the loops are plain Rust ([`Encoder32::encode`] applied
//! element by element, branch-free, so that LLVM vectorises it); only the target differs.
//!
//! # Why this module may use `unsafe`
//!
//! It is in `kernels`, the one layer allowed to (`lib.rs` denies `unsafe_code`
//! everywhere else). Calling a `#[target_feature(enable = "avx2")]` (or AVX-512) function is
//! only sound on a CPU that has those features: each call sits right behind the
//! `is_x86_feature_detected!` test. The tests compare every lane of every path the CPU can run
//! with [`Encoder32::encode`] on odd lengths and offsets.

use super::encode::{Encoder32, encode_u8_loop, encode_u16_loop};

/// Encodes `src` (float32, little-endian) into one byte each with AVX2 if this CPU has it;
/// `false` (nothing written) if it does not.
pub(crate) fn encode_to_u8(e: &Encoder32, src: &[u8], dst: &mut [u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        match e.rounding() {
            Some(r) if std::is_x86_feature_detected!("avx512vbmi") => {
                // SAFETY: the CPU has AVX-512 F, BW, VL and VBMI (checked above).
                unsafe { avx512::encode_rounded(e, &r, src, dst) }
            }
            // SAFETY: the CPU has AVX-512 F, BW and VL (checked above).
            _ => unsafe { avx512::encode_to_u8(e, src, dst) },
        }
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked on the line above).
        unsafe { avx2::encode_to_u8(e, src, dst) };
        return true;
    }
    let _ = (e, src, dst);
    false
}

/// Encodes `src` into two little-endian bytes each with AVX2 if this CPU has it; `false`
/// (nothing written) if it does not.
pub(crate) fn encode_to_u16(e: &Encoder32, src: &[u8], dst: &mut [u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512 F, BW and VL (checked on the line above).
        unsafe { avx512::encode_to_u16(e, src, dst) };
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked on the line above).
        unsafe { avx2::encode_to_u16(e, src, dst) };
        return true;
    }
    let _ = (e, src, dst);
    false
}

/// Whether this CPU has the AVX-512 subsets the 16-lane loops are compiled for.
#[cfg(target_arch = "x86_64")]
fn avx512() -> bool {
    std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vl")
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use super::*;
    use crate::kernels::encode::Rounding;
    use crate::kernels::simd::{PREFETCH_BYTES, prefetch};
    use std::arch::x86_64::{
        __m512, __m512i, _mm_sfence, _mm512_add_epi32, _mm512_add_ps, _mm512_and_si512,
        _mm512_castps_si512, _mm512_castsi512_ps, _mm512_cmpgt_epi32_mask, _mm512_cmplt_epi32_mask,
        _mm512_cmpneq_epi32_mask, _mm512_loadu_ps, _mm512_loadu_si512, _mm512_mask_mov_epi32,
        _mm512_mask_sub_epi32, _mm512_mask_ternarylogic_epi32, _mm512_min_epu32,
        _mm512_packus_epi16, _mm512_packus_epi32, _mm512_permutexvar_epi8, _mm512_set1_epi32,
        _mm512_set1_ps, _mm512_setzero_si512, _mm512_srli_epi32, _mm512_srlv_epi32,
        _mm512_storeu_si512, _mm512_stream_si512, _mm512_test_epi32_mask,
    };

    /// An 8-bit format's [`Rounding`] in registers, for [`encode`].
    #[derive(Clone, Copy)]
    pub(crate) struct Round {
        shift: __m512i,
        /// `1 << shift`: the bit that makes a tie round up.
        odd: __m512i,
        /// `half_m1 - (rebias << shift)`, wrapping: the rounding bias and the rebias in one
        /// addition (for a normal magnitude `a + half_m1 >= rebias << shift`, so the shift of
        /// the difference is the difference of the shifts).
        bias: __m512i,
        min_normal: __m512i,
        magic: __m512,
        magic_bits: __m512i,
        overflow: __m512i,
        fnuz: bool,
        /// The NaN codes of either sign, unless they are the overflow code and it with the
        /// sign bit, which the rounding gives a NaN anyway (the formats without infinities).
        nans: Option<(__m512i, __m512i)>,
    }

    impl Round {
        #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
        pub(crate) fn new(r: &Rounding) -> Round {
            let splat = |w: u32| _mm512_set1_epi32(w as i32);
            let own = [r.overflow as u8, r.overflow as u8 | 0x80];
            Round {
                shift: splat(r.shift),
                odd: splat(1 << r.shift),
                bias: splat(r.half_m1.wrapping_sub(r.rebias << r.shift)),
                min_normal: splat(r.min_normal),
                magic: _mm512_set1_ps(r.magic),
                magic_bits: splat(r.magic.to_bits()),
                overflow: splat(r.overflow),
                fnuz: r.fnuz,
                nans: (r.nans != own).then(|| (splat(r.nans[0].into()), splat(r.nans[1].into()))),
            }
        }
    }

    /// The codes of 16 float32s, one a dword: `Encoder32::encode`'s rounding
    /// ([`Rounding`] says how) with AVX-512's unsigned minimum for
    /// the overflow and mask registers for its selections.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(crate) fn encode(r: &Round, v: __m512) -> __m512i {
        let x = _mm512_castps_si512(v);
        let a = _mm512_and_si512(x, _mm512_set1_epi32(i32::MAX));
        let minus_one = _mm512_set1_epi32(-1);
        // `((a + half_m1 + (a >> shift & 1)) >> shift) - rebias`, the odd ones' extra 1
        // added under a mask.
        let t = _mm512_add_epi32(a, r.bias);
        let t = _mm512_mask_sub_epi32(t, _mm512_test_epi32_mask(a, r.odd), t, minus_one);
        let normal = _mm512_srlv_epi32(t, r.shift);
        let small = _mm512_cmplt_epi32_mask(a, r.min_normal);
        let sub = _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a), r.magic));
        let mag = _mm512_mask_sub_epi32(normal, small, sub, r.magic_bits);
        let mag = _mm512_min_epu32(mag, r.overflow);
        // mag | (x >> 24 & 0x80), but for an fnuz format's zero.
        let keep = if r.fnuz {
            _mm512_cmpneq_epi32_mask(mag, _mm512_setzero_si512())
        } else {
            u16::MAX
        };
        let out = _mm512_mask_ternarylogic_epi32::<0xf8>(
            mag,
            keep,
            _mm512_srli_epi32::<24>(x),
            _mm512_set1_epi32(0x80),
        );
        match r.nans {
            None => out,
            Some((pos, neg)) => {
                let nan = _mm512_cmpgt_epi32_mask(a, _mm512_set1_epi32(0x7f80_0000));
                let sign = _mm512_cmplt_epi32_mask(x, _mm512_setzero_si512());
                let out = _mm512_mask_mov_epi32(out, nan & !sign, pos);
                _mm512_mask_mov_epi32(out, nan & sign, neg)
            }
        }
    }

    /// Writes the 64 bytes of `v` at `dst[i..i + 64]`: with a non-temporal store if `stream`
    /// (then `dst[i]` must be at a 64-byte boundary), else an ordinary one.
    ///
    /// # Panics
    ///
    /// If `i + 64` is past `dst`'s end, or a streamed store's address is not 64-byte aligned.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn store64(dst: &mut [u8], i: usize, v: __m512i, stream: bool) {
        let to = dst[i..i + 64].as_mut_ptr();
        if stream {
            assert!(to.addr().is_multiple_of(64));
            // SAFETY: 64 bytes inside `dst` (sliced above), at a 64-byte boundary (asserted).
            unsafe { _mm512_stream_si512(to.cast(), v) };
        } else {
            // SAFETY: 64 bytes inside `dst` (sliced above).
            unsafe { _mm512_storeu_si512(to.cast(), v) };
        }
    }

    /// [`encode_u8_loop`] for a format with a [`Rounding`], 64 float32s at a time by
    /// [`encode`]: four registers of codes packed into one by two packs and a byte
    /// permute.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
    pub(crate) fn encode_rounded(e: &Encoder32, r: &Rounding, src: &[u8], dst: &mut [u8]) {
        let n = dst.len().min(src.len() / 4);
        let round = Round::new(r);
        // After the packs, 128-bit lane `l` holds codes `4l..4l + 4` of each register in
        // turn: code `j` of register `q` is byte `16 (j / 4) + 4 q + j % 4`.
        let order: [u8; 64] = std::array::from_fn(|b| {
            let (q, j) = (b / 16, b % 16);
            (16 * (j / 4) + 4 * q + j % 4) as u8
        });
        // SAFETY: 64 bytes read from a 64-byte array.
        let order = unsafe { _mm512_loadu_si512(order.as_ptr().cast()) };
        // Outputs far beyond the caches are streamed from their first 64-byte boundary
        // (non-temporal stores skip the read of each line an ordinary store makes first).
        let stream = n >= crate::kernels::simd::STREAM_MIN_BYTES;
        let mut i = if stream {
            dst.as_ptr().align_offset(64).min(n)
        } else {
            0
        };
        encode_u8_loop(e, &src[..4 * i], &mut dst[..i]);
        while i + 64 <= n {
            assert!(4 * (i + 64) <= src.len());
            if stream {
                // The four source lines `PREFETCH_BYTES` ahead.
                for q in 0..4 {
                    prefetch(src, 4 * i + 64 * q + PREFETCH_BYTES);
                }
            }
            let c = std::array::from_fn::<_, 4, _>(|q| {
                // SAFETY: 64 bytes at `4 (i + 16 q)`, inside `src` (asserted).
                encode(&round, unsafe {
                    _mm512_loadu_ps(src.as_ptr().add(4 * (i + 16 * q)).cast())
                })
            });
            let packed = _mm512_packus_epi16(
                _mm512_packus_epi32(c[0], c[1]),
                _mm512_packus_epi32(c[2], c[3]),
            );
            let codes = _mm512_permutexvar_epi8(order, packed);
            // Streamed ones at a 64-byte boundary (the first one's plus a multiple of 64).
            store64(dst, i, codes, stream);
            i += 64;
        }
        encode_u8_loop(e, &src[4 * i..], &mut dst[i..n]);
        if stream {
            // The streamed stores are weakly ordered: fence them before anyone reads `dst`.
            _mm_sfence();
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(crate) fn encode_to_u8(e: &Encoder32, src: &[u8], dst: &mut [u8]) {
        encode_u8_loop(e, src, dst);
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(crate) fn encode_to_u16(e: &Encoder32, src: &[u8], dst: &mut [u8]) {
        encode_u16_loop(e, src, dst);
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;

    #[target_feature(enable = "avx2")]
    pub(crate) fn encode_to_u8(e: &Encoder32, src: &[u8], dst: &mut [u8]) {
        encode_u8_loop(e, src, dst);
    }

    #[target_feature(enable = "avx2")]
    pub(crate) fn encode_to_u16(e: &Encoder32, src: &[u8], dst: &mut [u8]) {
        encode_u16_loop(e, src, dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::Semantics;
    use crate::convert::scalar::Class;
    use dtype_lattice::DType;

    type Path = fn(&Encoder32, &[u8], &mut [u8], usize);

    /// Every path this CPU can run: AVX-512 and AVX2 where it has them, the baseline loops.
    fn paths() -> Vec<Path> {
        let mut paths: Vec<Path> = vec![|e, s, d, w| {
            if w == 1 {
                encode_u8_loop(e, s, d)
            } else {
                encode_u16_loop(e, s, d)
            }
        }];
        #[cfg(target_arch = "x86_64")]
        {
            if avx512() && std::is_x86_feature_detected!("avx512vbmi") {
                // SAFETY: the CPU has AVX-512 F, BW, VL and VBMI (checked on the line above).
                paths.push(|e, s, d, w| match e.rounding() {
                    Some(r) if w == 1 => unsafe { avx512::encode_rounded(e, &r, s, d) },
                    _ if w == 1 => encode_u8_loop(e, s, d),
                    _ => encode_u16_loop(e, s, d),
                });
            }
            if avx512() {
                // SAFETY: the CPU has AVX-512 F, BW and VL (checked on the line above).
                paths.push(|e, s, d, w| unsafe {
                    if w == 1 {
                        avx512::encode_to_u8(e, s, d)
                    } else {
                        avx512::encode_to_u16(e, s, d)
                    }
                });
            }
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2 (checked on the line above).
                paths.push(|e, s, d, w| unsafe {
                    if w == 1 {
                        avx2::encode_to_u8(e, s, d)
                    } else {
                        avx2::encode_to_u16(e, s, d)
                    }
                });
            }
        }
        paths
    }

    /// Every lane of every path (AVX-512 and AVX2 where the CPU has them, and the baseline
    /// loops) against the scalar encoder, on odd lengths and at odd byte offsets of the
    /// buffers.
    #[test]
    fn lanes_match_the_scalar_encoder() {
        let xs: Vec<u32> = (0..1000u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 7))
            .chain([
                0,
                0x8000_0000,
                0x7f80_0000,
                0x7fc0_0001,
                0x0000_0001,
                0x4380_0000,
            ])
            .collect();
        let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let big: Vec<u8> = bytes
            .iter()
            .cycle()
            .take(4 * (crate::kernels::simd::STREAM_MIN_BYTES + 1004))
            .copied()
            .collect();
        for t in [
            DType::Float8E4M3Fn,
            DType::Float8E5M2,
            DType::Float8E4M3Fnuz,
            DType::Float8E5M2Fnuz,
            DType::Float8E4M3B11Fnuz,
            DType::Float8E4M3,
            DType::Float8E3M4,
            DType::Float8E8M0Fnu,
            DType::BFloat16,
            DType::Float16,
        ] {
            let Some(Class::Float(l)) = Class::of(t) else {
                unreachable!()
            };
            for sem in [Semantics::Jax, Semantics::NumPy] {
                let e = Encoder32::new(&l, sem).unwrap();
                let w = Class::of(t).unwrap().size();
                let mut cases: Vec<&[u8]> = [(0, 1000), (1, 999), (3, 17), (5, 1), (7, 0), (2, 33)]
                    .map(|(off, len)| &bytes[off..off + 4 * len])
                    .to_vec();
                // An output the AVX-512 path streams (from an odd address).
                if sem == Semantics::Jax && t == DType::Float8E4M3Fn {
                    cases.push(&big[4..]);
                }
                for src in cases {
                    let len = src.len() / 4;
                    for path in paths() {
                        let mut a = vec![0u8; w * len + 3];
                        let da = &mut a[1..1 + w * len];
                        path(&e, src, da, w);
                        for (i, x) in src.chunks_exact(4).enumerate() {
                            let x = u32::from_le_bytes(x.try_into().unwrap());
                            let want = e.encode(x).to_le_bytes();
                            assert_eq!(&a[1 + w * i..1 + w * (i + 1)], &want[..w], "{t} {x:#x}");
                        }
                        assert_eq!((a[0], a[w * len + 1]), (0, 0));
                    }
                }
            }
        }
    }

    /// Every path against the scalar encoder on float32 bit patterns spread over the whole
    /// range (every 65,521st, with its neighbours: ties, NaN payloads, subnormals, both
    /// signs), into every 8-bit float format, under both semantics.
    #[test]
    fn eight_bit_formats_match_the_scalar_encoder_across_float32() {
        let xs: Vec<u32> = (0..=u32::MAX / 65_521)
            .flat_map(|k| {
                let x = k.wrapping_mul(65_521);
                [x, x.wrapping_add(1), x.wrapping_sub(1), x ^ 0x8000]
            })
            .collect();
        let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
        for &t in DType::NUMERIC {
            let Some(Class::Float(l)) = Class::of(t) else {
                continue;
            };
            if Class::of(t).unwrap().size() != 1 {
                continue;
            }
            for sem in [Semantics::Jax, Semantics::NumPy] {
                let Some(e) = Encoder32::new(&l, sem) else {
                    continue;
                };
                for path in paths() {
                    let mut out = vec![0u8; xs.len()];
                    path(&e, &bytes, &mut out, 1);
                    for (&x, &c) in xs.iter().zip(&out) {
                        assert_eq!(u32::from(c), e.encode(x), "{t} {sem:?} {x:#x}");
                    }
                }
            }
        }
    }

    /// [`eight_bit_formats_match_the_scalar_encoder_across_float32`] on every float32 bit
    /// pattern, for the 8-bit formats' fastest path (six minutes on two cores in release:
    /// `cargo test --release -p dtype-lattice-array -- --ignored every_float32`).
    #[test]
    #[ignore]
    fn every_float32_encodes_as_the_scalar_encoder() {
        let fastest = paths().into_iter().nth(1).expect("a SIMD path");
        for &t in DType::NUMERIC {
            let Some(Class::Float(l)) = Class::of(t) else {
                continue;
            };
            for sem in [Semantics::Jax, Semantics::NumPy] {
                let Some(e) = Encoder32::new(&l, sem).filter(|_| l.bits == 8) else {
                    continue;
                };
                use rayon::prelude::*;
                (0..4096u32).into_par_iter().for_each(|hi| {
                    let mut bytes = vec![0u8; 4 << 20];
                    for (lo, b) in bytes.chunks_exact_mut(4).enumerate() {
                        b.copy_from_slice(&(hi << 20 | lo as u32).to_le_bytes());
                    }
                    let mut out = vec![0u8; 1 << 20];
                    fastest(&e, &bytes, &mut out, 1);
                    for (lo, &c) in out.iter().enumerate() {
                        let x = hi << 20 | lo as u32;
                        assert_eq!(u32::from(c), e.encode(x), "{t} {sem:?} {x:#x}");
                    }
                });
            }
        }
    }
}
