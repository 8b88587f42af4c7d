//! float32 `a + b` and `a − b` accumulated in place as XLA's CPU backend computes them — each
//! operand flushed (a subnormal is a zero of its sign), the result flushed, a NaN operand's
//! payload kept ([`super::fast::f32_op`], the scalar reference) — at the cost of the
//! processor's own sum where that already is the flushed one.
//!
//! The reference flushes three times and tests for NaNs, about twenty vector instructions for
//! eight lanes; a scatter-add of 2^20 rows of 64 float32 spent more time there than in memory.
//! Here the processor's sum `r = a ⊕ b` (round to nearest, no flushing) is kept whenever
//! `|r| ≥ 2^-100` or `r = 0`, which proves it is the flushed result:
//!
//! - without a subnormal operand, `r` is the exact sum rounded, as the reference's, and only
//!   its own flush could change it: a subnormal `r` is below `2^-100` (and not zero);
//! - a subnormal `a` (below `2^-126`) changes nothing when `|b| ≥ 2^-102`: `|a|` is under
//!   half an ulp of `b` (at least `2^-125`, also below a power of two), so `r = b`, as
//!   `0 ⊕ b` gives. When `|b| < 2^-102`, `|r| < 2^-101`: not kept, unless `r = 0`, which
//!   needs `b = −a` (so `b` subnormal too), where both give `+0`. The same holds with the
//!   roles swapped;
//! - a NaN `r` fails both tests (and an infinite one passes: it is the reference's too). The
//!   processor's NaN is the reference's as long as the first operand stays first, which the
//!   compiler need not keep (an addition commutes for it): NaNs take the reference.
//!
//! A row of 64 lanes is tested at once, with AVX-512 (four vectors) or AVX2 (eight): the
//! magnitudes' bits all lie in `[2^-100, inf]` (a minimum and a maximum per vector); a row
//! that fails that (a zero sum among them) is tested lane by lane, and goes through the
//! reference if a lane fails again; a last vector (sixteen or eight lanes) is tested lane by
//! lane. Every lane's result is the reference's, bit for bit (each kernel the CPU has tested
//! lane by lane on every pairing of the special values, at every lane position, and on random
//! words; the scatter's loops on every run length they are specialised for).
//!
//! [`Sums`] is the scatter's combiner: its loops over the runs ([`rows::in_order`],
//! [`rows::part`]) are compiled with the kernel's CPU feature and the row kernel inlined into
//! them, specialised for runs of 32 to 256 float32, so that a row costs a few dozen
//! instructions: the loop is bound by the cache misses in flight, which fewer instructions
//! per row raise (a scatter-add of 2^20 rows of 64 float32 into a 16 MiB table: about 15 %
//! faster for the constant run, more against the former calls through function pointers).

use std::convert::Infallible;

use super::fast::{BinOp, f32_op};
use super::rows::{self, Combiner};

/// `2^-100`: sums at least this large (or zero) are the flushed sums.
const TINY: f32 = f32::from_bits(27 << 23);

/// The bits of `+inf`: a magnitude's bits above it are a NaN's.
const INF: u32 = 0x7f80_0000;

/// Which vector kernel this CPU runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    /// AVX-512F: a 256-byte row is four vectors.
    Avx512,
    /// AVX2: a row is eight vectors.
    Avx2,
    /// The reference only.
    Scalar,
}

fn isa() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            return Isa::Avx512;
        }
        if std::is_x86_feature_detected!("avx2") {
            return Isa::Avx2;
        }
    }
    Isa::Scalar
}

/// `acc[i] = acc[i] ⊕ new[i]` (float32 words; `⊕` is [`BinOp::ADD`] or [`BinOp::SUB`], any
/// other `OP` goes through the reference) over the shorter of the two.
pub(crate) fn accumulate<const OP: u8>(acc: &mut [u32], new: &[u32]) {
    accumulate_on::<OP>(isa(), acc, new);
}

/// [`accumulate`] by `isa`'s kernel (one the CPU has).
fn accumulate_on<const OP: u8>(isa: Isa, acc: &mut [u32], new: &[u32]) {
    let n = acc.len().min(new.len());
    let (acc, new) = (&mut acc[..n], &new[..n]);
    let vector = OP == BinOp::ADD || OP == BinOp::SUB;
    let done = match isa {
        // SAFETY: the CPU has the feature (`isa` says so).
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 if vector => unsafe { avx512::accumulate::<OP>(acc, new) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 if vector => unsafe { avx2::accumulate::<OP>(acc, new) },
        _ => 0,
    };
    reference::<OP>(&mut acc[done..], &new[done..]);
}

/// The reference, element by element.
fn reference<const OP: u8>(acc: &mut [u32], new: &[u32]) {
    for (a, &b) in acc.iter_mut().zip(new) {
        *a = f32_op::<OP>(*a, b);
    }
}

/// The reference on runs of bytes (little-endian words), which need not be aligned.
fn reference_bytes<const OP: u8>(slot: &mut [u8], new: &[u8]) {
    for (o, n) in slot.chunks_exact_mut(4).zip(new.chunks_exact(4)) {
        let a = u32::from_le_bytes([o[0], o[1], o[2], o[3]]);
        let b = u32::from_le_bytes([n[0], n[1], n[2], n[3]]);
        o.copy_from_slice(&f32_op::<OP>(a, b).to_le_bytes());
    }
}

/// Runs of float32 bytes as words, where both are aligned to the word.
#[inline(always)]
fn words<'a>(slot: &'a mut [u8], new: &'a [u8]) -> Option<(&'a mut [u32], &'a [u32])> {
    Some((
        bytemuck::try_cast_slice_mut(slot).ok()?,
        bytemuck::try_cast_slice(new).ok()?,
    ))
}

/// A scatter's combiner summing (`OP` [`BinOp::ADD`]) or subtracting ([`BinOp::SUB`])
/// float32 runs by [`accumulate`]. Its loops over the runs are compiled with the CPU's
/// vector features, the row kernel inlined into them (a scatter-add of 2^20 rows of 64
/// float32 spent a third of its time getting from the loop to the kernel and back).
pub(crate) struct Sums<const OP: u8>;

impl<const OP: u8> Combiner for Sums<OP> {
    type Error = Infallible;

    fn combine(&self, slot: &mut [u8], new: &[u8]) -> Result<(), Infallible> {
        match words(slot, new) {
            Some((a, b)) => accumulate::<OP>(a, b),
            None => reference_bytes::<OP>(slot, new),
        }
        Ok(())
    }

    fn in_order(
        &self,
        dst: &mut [u8],
        offsets: &[u64],
        run: usize,
        updates: &[u8],
    ) -> Result<(), Infallible> {
        match isa() {
            // SAFETY: the CPU has the feature (`isa` says so).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { avx512::in_order::<OP>(dst, offsets, run, updates) },
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { avx2::in_order::<OP>(dst, offsets, run, updates) },
            _ => rows::in_order(dst, offsets, run, updates, self),
        }
    }

    fn part(
        &self,
        lo: usize,
        dst: &mut [u8],
        offsets: &[u64],
        run: usize,
        updates: &[u8],
    ) -> Result<(), Infallible> {
        match isa() {
            // SAFETY: the CPU has the feature (`isa` says so).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { avx512::part::<OP>(lo, dst, offsets, run, updates) },
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { avx2::part::<OP>(lo, dst, offsets, run, updates) },
            _ => rows::part(lo, dst, offsets, run, updates, self),
        }
    }
}

/// `by_run!(run, |r| loop)`: `loop` with `r` the constant `run` for the runs of 32 to 256
/// float32 (an embedding's rows; the loops' prefetches and the kernel's rows then unroll:
/// 15 % of a scatter-add of 2^20 rows of 64), else with `r = run`.
#[cfg(target_arch = "x86_64")]
macro_rules! by_run {
    ($run:expr, |$r:ident| $body:expr) => {
        match $run {
            128 => {
                let $r = 128;
                $body
            }
            256 => {
                let $r = 256;
                $body
            }
            512 => {
                let $r = 512;
                $body
            }
            1024 => {
                let $r = 1024;
                $body
            }
            $r => $body,
        }
    };
}

/// `loops!(feature)`: a vector module's [`Combiner`] (its `accumulate` on a
/// run, the reference on the rest) and its scatter loops, [`rows::in_order`] and
/// [`rows::part`] compiled with `feature`, the kernel inlined into them.
#[cfg(target_arch = "x86_64")]
macro_rules! loops {
    ($feature:literal) => {
        /// The row kernel as a [`Combiner`]; made only where the CPU has the feature.
        struct Kernel<const OP: u8>;

        impl<const OP: u8> Combiner for Kernel<OP> {
            type Error = Infallible;

            #[inline(always)]
            fn combine(&self, slot: &mut [u8], new: &[u8]) -> Result<(), Infallible> {
                match words(slot, new) {
                    Some((a, b)) => {
                        // SAFETY: a `Kernel` is only made inside the functions below, which
                        // run where the CPU has the feature.
                        let done = unsafe { accumulate::<OP>(a, b) };
                        reference::<OP>(&mut a[done..], &b[done..]);
                    }
                    None => reference_bytes::<OP>(slot, new),
                }
                Ok(())
            }
        }

        /// [`rows::in_order`] with the kernel inlined.
        #[target_feature(enable = $feature)]
        pub(super) fn in_order<const OP: u8>(
            dst: &mut [u8],
            offsets: &[u64],
            run: usize,
            updates: &[u8],
        ) -> Result<(), Infallible> {
            by_run!(run, |r| rows::in_order(
                dst,
                offsets,
                r,
                updates,
                &Kernel::<OP>
            ))
        }

        /// [`rows::part`] with the kernel inlined.
        #[target_feature(enable = $feature)]
        pub(super) fn part<const OP: u8>(
            lo: usize,
            dst: &mut [u8],
            offsets: &[u64],
            run: usize,
            updates: &[u8],
        ) -> Result<(), Infallible> {
            by_run!(run, |r| rows::part(
                lo,
                dst,
                offsets,
                r,
                updates,
                &Kernel::<OP>
            ))
        }
    };
}

/// Both vector kernels test a row of 64 sums at once: the magnitudes' bits, as unsigned
/// words, all lie in `[TINY, INF]` exactly when every sum is kept by the argument above and
/// none is zero — a minimum and a maximum per vector, two comparisons per row. A row that
/// fails (a zero sum, or one to flush, or a NaN) is tested lane by lane (`|r| ≥ TINY` or
/// `r = 0`) and goes through the reference if a lane fails that too. The sums are stored
/// only once the row has passed, all of them, from registers (an array of vectors stored in
/// a loop became a call to `memmove`).
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::{
        __m512, _CMP_EQ_OQ, _CMP_GE_OQ, _mm512_abs_ps, _mm512_add_ps, _mm512_and_si512,
        _mm512_castps_si512, _mm512_cmp_ps_mask, _mm512_cmpgt_epu32_mask, _mm512_cmplt_epu32_mask,
        _mm512_loadu_ps, _mm512_max_epu32, _mm512_min_epu32, _mm512_set1_epi32, _mm512_set1_ps,
        _mm512_setzero_ps, _mm512_storeu_ps, _mm512_sub_ps,
    };
    use std::convert::Infallible;

    use super::{BinOp, Combiner, INF, TINY, reference, reference_bytes, rows, words};

    loops!("avx512f");

    /// Sixteen sums `a ⊕ b` from `pa` and `pb`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn sum<const OP: u8>(pa: *const u32, pb: *const u32) -> __m512 {
        // SAFETY: the caller's: sixteen words at each (unaligned loads).
        let (a, b) = unsafe { (_mm512_loadu_ps(pa.cast()), _mm512_loadu_ps(pb.cast())) };
        if OP == BinOp::SUB {
            _mm512_sub_ps(a, b)
        } else {
            _mm512_add_ps(a, b)
        }
    }

    /// Whether each lane's sum is kept (`|s| ≥ TINY` or `s = 0`), as a mask.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn kept(s: __m512) -> u16 {
        _mm512_cmp_ps_mask::<_CMP_GE_OQ>(_mm512_abs_ps(s), _mm512_set1_ps(TINY))
            | _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(s, _mm512_setzero_ps())
    }

    /// [`super::accumulate`] on rows of 64 words and vectors of sixteen; returns how many
    /// words it did (the rest, fewer than sixteen, is the caller's).
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn accumulate<const OP: u8>(acc: &mut [u32], new: &[u32]) -> usize {
        let n = acc.len().min(new.len());
        let abs = _mm512_set1_epi32(0x7fff_ffff);
        let mut i = 0;
        while i + 64 <= n {
            // SAFETY: `i + 64 <= n`: the row is inside both slices, and nothing else refers
            // to `acc` meanwhile.
            unsafe {
                let (pa, pb) = (acc.as_mut_ptr().add(i), new.as_ptr().add(i));
                let s0 = sum::<OP>(pa, pb);
                let s1 = sum::<OP>(pa.add(16), pb.add(16));
                let s2 = sum::<OP>(pa.add(32), pb.add(32));
                let s3 = sum::<OP>(pa.add(48), pb.add(48));
                let m = |s: __m512| _mm512_and_si512(_mm512_castps_si512(s), abs);
                let (m0, m1, m2, m3) = (m(s0), m(s1), m(s2), m(s3));
                let lo = _mm512_min_epu32(_mm512_min_epu32(m0, m1), _mm512_min_epu32(m2, m3));
                let hi = _mm512_max_epu32(_mm512_max_epu32(m0, m1), _mm512_max_epu32(m2, m3));
                let out = _mm512_cmplt_epu32_mask(lo, _mm512_set1_epi32(TINY.to_bits() as i32))
                    | _mm512_cmpgt_epu32_mask(hi, _mm512_set1_epi32(INF as i32));
                if out == 0 || kept(s0) & kept(s1) & kept(s2) & kept(s3) == u16::MAX {
                    _mm512_storeu_ps(pa.cast(), s0);
                    _mm512_storeu_ps(pa.add(16).cast(), s1);
                    _mm512_storeu_ps(pa.add(32).cast(), s2);
                    _mm512_storeu_ps(pa.add(48).cast(), s3);
                } else {
                    reference::<OP>(&mut acc[i..i + 64], &new[i..i + 64]);
                }
            }
            i += 64;
        }
        while i + 16 <= n {
            // SAFETY: `i + 16 <= n`, as above.
            unsafe {
                let pa = acc.as_mut_ptr().add(i);
                let s = sum::<OP>(pa, new.as_ptr().add(i));
                if kept(s) == u16::MAX {
                    _mm512_storeu_ps(pa.cast(), s);
                } else {
                    reference::<OP>(&mut acc[i..i + 16], &new[i..i + 16]);
                }
            }
            i += 16;
        }
        i
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256, _CMP_EQ_OQ, _CMP_GE_OQ, _mm256_add_ps, _mm256_and_ps, _mm256_and_si256,
        _mm256_castps_si256, _mm256_castsi256_ps, _mm256_cmp_ps, _mm256_cmpgt_epi32,
        _mm256_loadu_ps, _mm256_max_epu32, _mm256_min_epu32, _mm256_movemask_ps, _mm256_or_ps,
        _mm256_or_si256, _mm256_set1_epi32, _mm256_set1_ps, _mm256_setzero_ps, _mm256_storeu_ps,
        _mm256_sub_ps, _mm256_testz_si256,
    };
    use std::convert::Infallible;

    use super::{BinOp, Combiner, INF, TINY, reference, reference_bytes, rows, words};

    loops!("avx2");

    /// Eight sums `a ⊕ b` from `pa` and `pb`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sum<const OP: u8>(pa: *const u32, pb: *const u32) -> __m256 {
        // SAFETY: the caller's: eight words at each (unaligned loads).
        let (a, b) = unsafe { (_mm256_loadu_ps(pa.cast()), _mm256_loadu_ps(pb.cast())) };
        if OP == BinOp::SUB {
            _mm256_sub_ps(a, b)
        } else {
            _mm256_add_ps(a, b)
        }
    }

    /// Whether every lane's sum is kept (`|s| ≥ TINY` or `s = 0`).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn kept(s: &[__m256]) -> bool {
        let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
        let mut ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
        for &s in s {
            let large = _mm256_cmp_ps::<_CMP_GE_OQ>(_mm256_and_ps(s, abs), _mm256_set1_ps(TINY));
            let zero = _mm256_cmp_ps::<_CMP_EQ_OQ>(s, _mm256_setzero_ps());
            ok = _mm256_and_ps(ok, _mm256_or_ps(large, zero));
        }
        _mm256_movemask_ps(ok) == 0xff
    }

    /// [`super::accumulate`] on rows of 64 words and vectors of eight; returns how many
    /// words it did (the rest, fewer than eight, is the caller's).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn accumulate<const OP: u8>(acc: &mut [u32], new: &[u32]) -> usize {
        let n = acc.len().min(new.len());
        let abs = _mm256_set1_epi32(0x7fff_ffff);
        let mut i = 0;
        while i + 64 <= n {
            // SAFETY: `i + 64 <= n`: the row is inside both slices, and nothing else refers
            // to `acc` meanwhile.
            unsafe {
                let (pa, pb) = (acc.as_mut_ptr().add(i), new.as_ptr().add(i));
                let s = [
                    sum::<OP>(pa, pb),
                    sum::<OP>(pa.add(8), pb.add(8)),
                    sum::<OP>(pa.add(16), pb.add(16)),
                    sum::<OP>(pa.add(24), pb.add(24)),
                    sum::<OP>(pa.add(32), pb.add(32)),
                    sum::<OP>(pa.add(40), pb.add(40)),
                    sum::<OP>(pa.add(48), pb.add(48)),
                    sum::<OP>(pa.add(56), pb.add(56)),
                ];
                let (mut lo, mut hi) = (_mm256_set1_epi32(-1), _mm256_set1_epi32(0));
                for &s in &s {
                    let m = _mm256_and_si256(_mm256_castps_si256(s), abs);
                    lo = _mm256_min_epu32(lo, m);
                    hi = _mm256_max_epu32(hi, m);
                }
                // The magnitudes are below 2^31: a signed comparison is the unsigned one.
                let out = _mm256_or_si256(
                    _mm256_cmpgt_epi32(_mm256_set1_epi32(TINY.to_bits() as i32), lo),
                    _mm256_cmpgt_epi32(hi, _mm256_set1_epi32(INF as i32)),
                );
                if _mm256_testz_si256(out, out) != 0 || kept(&s) {
                    let [s0, s1, s2, s3, s4, s5, s6, s7] = s;
                    _mm256_storeu_ps(pa.cast(), s0);
                    _mm256_storeu_ps(pa.add(8).cast(), s1);
                    _mm256_storeu_ps(pa.add(16).cast(), s2);
                    _mm256_storeu_ps(pa.add(24).cast(), s3);
                    _mm256_storeu_ps(pa.add(32).cast(), s4);
                    _mm256_storeu_ps(pa.add(40).cast(), s5);
                    _mm256_storeu_ps(pa.add(48).cast(), s6);
                    _mm256_storeu_ps(pa.add(56).cast(), s7);
                } else {
                    reference::<OP>(&mut acc[i..i + 64], &new[i..i + 64]);
                }
            }
            i += 64;
        }
        while i + 8 <= n {
            // SAFETY: `i + 8 <= n`, as above.
            unsafe {
                let pa = acc.as_mut_ptr().add(i);
                let s = sum::<OP>(pa, new.as_ptr().add(i));
                if kept(&[s]) {
                    _mm256_storeu_ps(pa.cast(), s);
                } else {
                    reference::<OP>(&mut acc[i..i + 8], &new[i..i + 8]);
                }
            }
            i += 8;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words covering every class the argument above distinguishes, both signs.
    fn specials() -> Vec<u32> {
        let mut v = vec![
            0,
            1,
            2,
            0x0000_0003,
            0x0040_0000,
            0x007f_ffff,
            0x0080_0000,
            0x0080_0001,
            0x0100_0000,
            0x0c80_0000, // 2^-102
            0x0c80_0001,
            0x0d00_0000, // 2^-101
            0x0d7f_ffff,
            TINY.to_bits(),
            TINY.to_bits() + 1,
            TINY.to_bits() - 1,
            0x3f80_0000,
            0x3f80_0001,
            0x4b80_0000,
            0x7f7f_ffff,
            0x7f80_0000,
            0x7f80_0001, // signalling NaN
            0x7fc0_0000,
            0x7fc1_2345,
            0x7fff_ffff,
        ];
        let negated: Vec<u32> = v.iter().map(|w| w | 0x8000_0000).collect();
        v.extend(negated);
        v
    }

    /// The kernels this CPU has (the reference alone is one).
    fn isas() -> Vec<Isa> {
        let mut v = vec![Isa::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                v.push(Isa::Avx2);
            }
            if std::is_x86_feature_detected!("avx512f") {
                v.push(Isa::Avx512);
            }
        }
        v
    }

    /// Every kernel the CPU has, and the scatter's combiner, against the reference lane by
    /// lane.
    fn check<const OP: u8>(a: &[u32], b: &[u32]) {
        let want: Vec<u32> = a.iter().zip(b).map(|(&x, &y)| f32_op::<OP>(x, y)).collect();
        let mut runs: Vec<(String, Vec<u32>)> = isas()
            .into_iter()
            .map(|isa| {
                let mut got = a.to_vec();
                accumulate_on::<OP>(isa, &mut got, b);
                (format!("{isa:?}"), got)
            })
            .collect();
        let mut bytes: Vec<u8> = bytemuck::cast_slice(a).to_vec();
        let b_bytes: Vec<u8> = bytemuck::cast_slice(b).to_vec();
        let n = a.len() * 4;
        let offsets = [0u64];
        let _ = rows::scatter_with(
            &mut bytes,
            &offsets[..usize::from(n > 0)],
            n.max(1),
            &b_bytes,
            false,
            &Sums::<OP>,
        );
        runs.push((
            "scatter".into(),
            bytes
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect(),
        ));
        for (name, got) in runs {
            for (i, ((&g, &w), (&x, &y))) in got.iter().zip(&want).zip(a.iter().zip(b)).enumerate()
            {
                assert_eq!(g, w, "{name} op {OP} lane {i}: {x:#010x} ⊕ {y:#010x}");
            }
        }
    }

    /// The scatter's combiner over every run length its loops are specialised for (and
    /// others), split over threads or not, against the reference applied in order: random
    /// rows (repeated, so that the order of the sums matters), skipped runs, words of every
    /// class (subnormal sums among them).
    #[test]
    fn scatters_of_every_run_length_are_the_references_in_order() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let s = specials();
        for words in [1, 12, 32, 64, 128, 256, 50] {
            let run = words * 4;
            let rows = 61;
            // More than a MiB of updates, which splits the destination over threads.
            let n = (1 << 20) / run + 7;
            let word = |k: u64| match k % 4 {
                0 => s[(k as usize >> 2) % s.len()],
                1 => ((k >> 8) as u32 & 0x8000_0000) | ((k >> 16) as u32 % (30 << 23)),
                _ => (k >> 32) as u32,
            };
            let dst: Vec<u32> = (0..rows * words).map(|_| word(next())).collect();
            let upd: Vec<u32> = (0..n * words).map(|_| word(next())).collect();
            let offsets: Vec<u64> = (0..n)
                .map(|i| match next() % 17 {
                    0 => rows::SKIP,
                    r => (((r as usize * 7 + i) % rows) * run) as u64,
                })
                .collect();
            let mut want = dst.clone();
            for (i, &o) in offsets.iter().enumerate() {
                if o != rows::SKIP {
                    let o = o as usize / 4;
                    reference::<{ BinOp::ADD }>(
                        &mut want[o..o + words],
                        &upd[i * words..][..words],
                    );
                }
            }
            for parallel in [false, true] {
                let mut got: Vec<u8> = bytemuck::cast_slice(&dst).to_vec();
                let done = rows::scatter_with(
                    &mut got,
                    &offsets,
                    run,
                    bytemuck::cast_slice(&upd),
                    parallel,
                    &Sums::<{ BinOp::ADD }>,
                );
                assert_eq!(done, Ok(true));
                let got: Vec<u32> = got
                    .chunks_exact(4)
                    .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                    .collect();
                assert!(got == want, "run of {words} words, parallel {parallel}");
            }
        }
    }

    #[test]
    fn every_pairing_of_special_values_is_the_references() {
        let s = specials();
        // Each pairing lands in every lane position across the shifts.
        for shift in 0..8 {
            let (mut a, mut b) = (vec![0x3f80_0000; shift], vec![0x4000_0000; shift]);
            for &x in &s {
                for &y in &s {
                    a.push(x);
                    b.push(y);
                }
            }
            check::<{ BinOp::ADD }>(&a, &b);
            check::<{ BinOp::SUB }>(&a, &b);
            check::<{ BinOp::MUL }>(&a, &b);
        }
    }

    #[test]
    fn sums_near_the_threshold_and_random_words_are_the_references() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Random words; operands of exponents near 2^-126 .. 2^-96 (sums across the
        // threshold, cancellations to subnormals and zero); every length up to 40 and rows of 64 (whole, with a tail).
        for len in (0..40).chain([64, 71, 128, 200]) {
            for round in 0..200 {
                let word = |w: u64| {
                    let w = w as u32;
                    if round % 2 == 0 {
                        w
                    } else {
                        (w & 0x8000_0000) | ((w >> 8) % (32 << 23))
                    }
                };
                let a: Vec<u32> = (0..len).map(|_| word(next())).collect();
                let mut b: Vec<u32> = (0..len).map(|_| word(next())).collect();
                if round % 5 < 2 {
                    // Exact cancellations (of the difference, then of the sum) and doubles.
                    let flip = if round % 5 == 0 { 0 } else { 0x8000_0000 };
                    for (y, &x) in b.iter_mut().zip(&a).step_by(3) {
                        *y = x ^ flip;
                    }
                }
                check::<{ BinOp::ADD }>(&a, &b);
                check::<{ BinOp::SUB }>(&a, &b);
            }
        }
    }
}
