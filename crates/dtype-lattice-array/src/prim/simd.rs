//! The fused elementwise loops of [`super::fast`] compiled a second time for AVX2 and FMA
//! (8 lanes of 32 bits), chosen at run time with `is_x86_feature_detected!`; other CPUs run the
//! same loops compiled for the baseline target (SSE2 on x86-64, 4 lanes).
//!
//! [`zip_into`] and [`map_into`] apply a branch-free closure element by element, which LLVM
//! vectorises; only the target differs (bfloat16 addition runs about 1.8 times as fast in one
//! thread with AVX2 as with SSE2). The one use of intrinsics is [`zip_stream`]'s: an output
//! far larger than the caches is computed a stage of 2 KiB at a time into an aligned buffer
//! and copied out with non-temporal stores (`_mm256_stream_si256`, then `_mm_sfence`), which
//! skip the read of each output line an ordinary store makes first: a quarter less memory
//! traffic for a bfloat16 add. In the AVX2 build
//! `f64::mul_add` is one instruction; [`fused_mul_add`] tells whether the loops get it (the
//! float64 polynomials of [`super::vmath`] are only worth running where they do: elsewhere on
//! x86-64 each `mul_add` is a library call).
//!
//! # Why this module may use `unsafe`
//!
//! It is the primitives' only module allowed to (`lib.rs` denies `unsafe_code` everywhere
//! else). Calling a `#[target_feature(enable = "avx2,fma")]` function is only sound on a CPU
//! that has both: each call sits right behind the `is_x86_feature_detected!` tests. The
//! streaming stores write through raw pointers: each is a 32-byte aligned stretch inside the
//! output slice (the SAFETY comment there says why). The tests compare every lane of each path
//! with the closure applied one element at a time, on odd lengths, and the streamed path at
//! several offsets from a 32-byte boundary for 1-, 2- and 4-byte outputs.

/// `out[i] = f(x[i], y[i])` over the shortest of the three, with AVX2 and FMA where this CPU
/// has them.
#[inline]
pub(crate) fn zip_into<A: Copy, B: Copy, O>(
    x: &[A],
    y: &[B],
    out: &mut [O],
    f: impl Fn(A, B) -> O,
) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA (checked on the line above).
        unsafe { avx2::zip_into(x, y, out, f) };
        return;
    }
    zip_loop(x, y, out, f);
}

/// Outputs of at least this many bytes are written by [`zip_stream`] with non-temporal
/// stores: far beyond the caches, so nothing reads them back from there, and streaming
/// saves the read of every output line that an ordinary store makes first.
pub(crate) const STREAM_MIN_BYTES: usize = 4 << 20;

/// [`zip_into`] for an output of [`STREAM_MIN_BYTES`] or more, which (with AVX2) bypasses the
/// caches: the results are staged in a small aligned buffer and copied out with
/// non-temporal stores. Smaller outputs, and other CPUs, take [`zip_into`].
#[inline]
pub(crate) fn zip_stream<A: Copy, B: Copy, O: bytemuck::Pod>(
    x: &[A],
    y: &[B],
    out: &mut [O],
    f: impl Fn(A, B) -> O,
) {
    #[cfg(target_arch = "x86_64")]
    if std::mem::size_of_val(out) >= STREAM_MIN_BYTES
        && std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
    {
        // SAFETY: the CPU has AVX2 and FMA (checked on the line above).
        unsafe { avx2::zip_stream(x, y, out, f) };
        return;
    }
    zip_into(x, y, out, f);
}

/// `out[i] = f(x[i])` over the shorter of the two, with AVX2 and FMA where this CPU has them.
#[inline]
pub(crate) fn map_into<A: Copy, O>(x: &[A], out: &mut [O], f: impl Fn(A) -> O) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA (checked on the line above).
        unsafe { avx2::map_into(x, out, f) };
        return;
    }
    map_loop(x, out, f);
}

/// Whether the loops of [`zip_into`] and [`map_into`] compute `f64::mul_add` (and
/// `f32::mul_add`) in one instruction on this CPU: with AVX2 and FMA on x86-64, always on
/// AArch64, elsewhere where the build's target has FMA.
pub(crate) fn fused_mul_add() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        cfg!(any(target_arch = "aarch64", target_feature = "fma"))
    }
}

/// The loops both targets compile.
#[inline(always)]
fn map_loop<A: Copy, O>(x: &[A], out: &mut [O], f: impl Fn(A) -> O) {
    for (o, &a) in out.iter_mut().zip(x) {
        *o = f(a);
    }
}

#[inline(always)]
fn zip_loop<A: Copy, B: Copy, O>(x: &[A], y: &[B], out: &mut [O], f: impl Fn(A, B) -> O) {
    for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
        *o = f(a, b);
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn zip_into<A: Copy, B: Copy, O>(
        x: &[A],
        y: &[B],
        out: &mut [O],
        f: impl Fn(A, B) -> O,
    ) {
        super::zip_loop(x, y, out, f);
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn map_into<A: Copy, O>(x: &[A], out: &mut [O], f: impl Fn(A) -> O) {
        super::map_loop(x, out, f);
    }

    /// Bytes of results staged in L1 between two streaming copies.
    pub(super) const STAGE: usize = 2048;

    /// The staging buffer: aligned for 32-byte loads.
    #[repr(C, align(32))]
    struct Stage([u8; STAGE]);

    /// `zip_loop` through the staging buffer: the elements before `out`'s first 32-byte
    /// boundary and after its last whole stage are written directly, each stage in between
    /// computed into [`Stage`] and streamed to `out` 32 bytes at a time.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn zip_stream<A: Copy, B: Copy, O: bytemuck::Pod>(
        x: &[A],
        y: &[B],
        out: &mut [O],
        f: impl Fn(A, B) -> O,
    ) {
        use std::arch::x86_64::{__m256i, _mm_sfence, _mm256_load_si256, _mm256_stream_si256};
        let n = out.len().min(x.len()).min(y.len());
        let (x, y, out) = (&x[..n], &y[..n], &mut out[..n]);
        let size = size_of::<O>();
        // In elements; usize::MAX where no element boundary is 32-byte aligned.
        let head = out.as_ptr().align_offset(32);
        if size == 0 || !STAGE.is_multiple_of(size) || head >= n {
            return super::zip_loop(x, y, out, f);
        }
        super::zip_loop(&x[..head], &y[..head], &mut out[..head], &f);
        let per = STAGE / size;
        let mut stage = Stage([0; STAGE]);
        let buf: &mut [O] = bytemuck::cast_slice_mut(&mut stage.0);
        let mut i = head;
        while i + per <= n {
            super::zip_loop(&x[i..i + per], &y[i..i + per], buf, &f);
            let src = buf.as_ptr().cast::<__m256i>();
            let dst = out[i..i + per].as_mut_ptr().cast::<__m256i>();
            for k in 0..STAGE / 32 {
                // SAFETY: `buf` is the 32-byte aligned `STAGE` bytes of `stage`, and
                // `out[i..i + per]` is `STAGE` bytes of `out` starting at a 32-byte boundary
                // (`head` is one, and `per` elements are `STAGE` bytes, a multiple of 32):
                // both pointers stay inside them and are aligned for these accesses.
                unsafe { _mm256_stream_si256(dst.add(k), _mm256_load_si256(src.add(k))) };
            }
            i += per;
        }
        super::zip_loop(&x[i..], &y[i..], &mut out[i..], &f);
        // The streamed stores are weakly ordered: fence them before anyone reads `out`.
        _mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lane of the dispatched paths (AVX2 where the CPU has it) and of the baseline loops
    /// against the closure applied alone, for float32 arithmetic with NaN and subnormal
    /// operands, on odd lengths.
    #[test]
    fn lanes_match_the_closure_applied_alone() {
        let xs: Vec<u32> = (0..1003u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 7))
            .chain([0, 0x8000_0000, 0x7f80_0000, 0xffc0_0001, 0x0000_0001])
            .collect();
        let ys: Vec<u32> = xs.iter().rev().map(|y| y.rotate_left(3)).collect();
        let f = |a: u32, b: u32| {
            let (a, b) = (f32::from_bits(a), f32::from_bits(b));
            let r = if a.is_nan() {
                a + a
            } else if b.is_nan() {
                b + b
            } else {
                a.mul_add(b, a)
            };
            r.to_bits()
        };
        for len in [0, 1, 7, 8, 9, 31, 1000, 1008] {
            let mut fast = vec![0u32; len];
            let mut base = vec![0u32; len];
            zip_into(&xs[..len], &ys[..len], &mut fast, f);
            zip_loop(&xs[..len], &ys[..len], &mut base, f);
            for i in 0..len {
                let want = f(xs[i], ys[i]);
                assert_eq!((fast[i], base[i]), (want, want), "lane {i} of {len}");
            }
            let g = |a: u32| f(a, 0x3fc0_0000);
            map_into(&xs[..len], &mut fast, g);
            map_loop(&xs[..len], &mut base, g);
            for i in 0..len {
                let want = g(xs[i]);
                assert_eq!((fast[i], base[i]), (want, want), "map lane {i} of {len}");
            }
        }
    }

    /// The streaming path: every lane of outputs beyond [`STREAM_MIN_BYTES`] (so that it
    /// streams), of 1-, 2- and 4-byte words, starting at offsets from a 32-byte boundary
    /// and ending in a partial stage, against the closure applied alone.
    #[test]
    fn streamed_lanes_match_the_closure_applied_alone() {
        fn check<O: bytemuck::Pod + PartialEq + std::fmt::Debug>(f: impl Fn(u32, u32) -> O) {
            let n = STREAM_MIN_BYTES / size_of::<O>() + 1003;
            let xs: Vec<u32> = (0..n as u32 + 40)
                .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 7))
                .collect();
            let ys: Vec<u32> = xs.iter().map(|y| y.rotate_left(11)).collect();
            let mut out = vec![O::zeroed(); n + 40];
            for offset in [0, 1, 2, 3, 5, 17, 31] {
                let m = n - offset;
                zip_stream(
                    &xs[offset..],
                    &ys[offset..],
                    &mut out[offset..offset + m],
                    &f,
                );
                for i in 0..m {
                    let want = f(xs[offset + i], ys[offset + i]);
                    assert_eq!(out[offset + i], want, "lane {i} at offset {offset}");
                }
            }
        }
        check(|a, b| (a ^ b) as u8);
        check(|a, b| {
            let s = f32::from_bits(a & 0xbfff_ffff) + f32::from_bits(b & 0xbfff_ffff);
            (s.to_bits() >> 16) as u16
        });
        check(|a, b| (f32::from_bits(a) * f32::from_bits(b)).to_bits());
    }

    /// The same for the unary loop, with a float64 polynomial evaluated by `mul_add` (the
    /// shape of [`super::super::vmath`]'s kernels).
    #[test]
    fn unary_lanes_match_the_closure_applied_alone() {
        let xs: Vec<u32> = (0..1003u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 7))
            .chain([0, 0x8000_0000, 0x7f80_0000, 0xffc0_0001, 0x0000_0001])
            .collect();
        let f = |a: u32| {
            let x = f64::from(f32::from_bits(a));
            let p = x.mul_add(1.0 / 6.0, 0.5).mul_add(x, 1.0).mul_add(x, 1.0);
            (if x < 0.0 { -p } else { p } as f32).to_bits()
        };
        for len in [0, 1, 3, 7, 8, 9, 31, 1000, 1008] {
            let mut fast = vec![0u32; len];
            let mut base = vec![0u32; len];
            map_into(&xs[..len], &mut fast, f);
            map_loop(&xs[..len], &mut base, f);
            for i in 0..len {
                let want = f(xs[i]);
                assert_eq!((fast[i], base[i]), (want, want), "lane {i} of {len}");
            }
        }
    }
}
