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
//! A row of 64 lanes (or a last vector of eight) with any lane failing goes through the
//! reference; every lane's result is the reference's, bit for bit (tested lane by lane on
//! every pairing of the special values, at every lane position, and on random words).

use super::fast::{BinOp, f32_op};

/// `2^-100`: sums at least this large (or zero) are the flushed sums.
const TINY: f32 = f32::from_bits(27 << 23);

/// `acc[i] = acc[i] ⊕ new[i]` (float32 words; `⊕` is [`BinOp::ADD`] or [`BinOp::SUB`], any
/// other `OP` goes through the reference) over the shorter of the two.
pub(crate) fn accumulate<const OP: u8>(acc: &mut [u32], new: &[u32]) {
    let n = acc.len().min(new.len());
    let (acc, new) = (&mut acc[..n], &new[..n]);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if (OP == BinOp::ADD || OP == BinOp::SUB) && std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked on the line above).
        done = unsafe { avx2::accumulate::<OP>(acc, new) };
    }
    reference::<OP>(&mut acc[done..], &new[done..]);
}

/// The reference, element by element.
fn reference<const OP: u8>(acc: &mut [u32], new: &[u32]) {
    for (a, &b) in acc.iter_mut().zip(new) {
        *a = f32_op::<OP>(*a, b);
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        _CMP_EQ_OQ, _CMP_GE_OQ, _mm256_add_ps, _mm256_and_ps, _mm256_castsi256_ps, _mm256_cmp_ps,
        _mm256_loadu_ps, _mm256_movemask_ps, _mm256_or_ps, _mm256_set1_epi32, _mm256_set1_ps,
        _mm256_setzero_ps, _mm256_storeu_ps, _mm256_sub_ps,
    };

    use super::{BinOp, TINY, reference};

    /// [`super::accumulate`] on whole vectors of eight (`acc` and `new` of one length);
    /// returns how many words it did (the rest, fewer than eight, is the caller's). Eight
    /// vectors (a 256-byte row) are summed and tested before any is stored, and stored
    /// together when all are kept: fewer instructions per row than a test and a branch per
    /// vector, so that the processor holds more rows' loads in flight (the sum is bound by
    /// memory).
    #[target_feature(enable = "avx2")]
    pub(super) fn accumulate<const OP: u8>(acc: &mut [u32], new: &[u32]) -> usize {
        const ROW: usize = 8 * 8;
        let n = acc.len().min(new.len());
        let tiny = _mm256_set1_ps(TINY);
        let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
        let zero = _mm256_setzero_ps();
        let mut r = [zero; 8];
        let mut i = 0;
        while i < n - n % 8 {
            // A row, or a last vector of eight.
            let k = if i + ROW <= n { 8 } else { 1 };
            let mut ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
            for (v, r) in r.iter_mut().enumerate().take(k) {
                // SAFETY: `i + 8 * k <= n`, so the eight words from `i + 8 * v` are inside
                // both slices (unaligned loads).
                let (a, b) = unsafe {
                    (
                        _mm256_loadu_ps(acc.as_ptr().add(i + 8 * v).cast::<f32>()),
                        _mm256_loadu_ps(new.as_ptr().add(i + 8 * v).cast::<f32>()),
                    )
                };
                let s = if OP == BinOp::SUB {
                    _mm256_sub_ps(a, b)
                } else {
                    _mm256_add_ps(a, b)
                };
                let large = _mm256_cmp_ps::<_CMP_GE_OQ>(_mm256_and_ps(s, abs), tiny);
                let kept = _mm256_or_ps(large, _mm256_cmp_ps::<_CMP_EQ_OQ>(s, zero));
                ok = _mm256_and_ps(ok, kept);
                *r = s;
            }
            if _mm256_movemask_ps(ok) == 0xff {
                for (v, r) in r.iter().enumerate().take(k) {
                    // SAFETY: as above, inside `acc`, which nothing else refers to
                    // meanwhile.
                    unsafe { _mm256_storeu_ps(acc.as_mut_ptr().add(i + 8 * v).cast::<f32>(), *r) };
                }
            } else {
                reference::<OP>(&mut acc[i..i + 8 * k], &new[i..i + 8 * k]);
            }
            i += 8 * k;
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

    fn check<const OP: u8>(a: &[u32], b: &[u32]) {
        let mut got = a.to_vec();
        accumulate::<OP>(&mut got, b);
        for (i, ((&g, &x), &y)) in got.iter().zip(a).zip(b).enumerate() {
            let want = f32_op::<OP>(x, y);
            assert_eq!(g, want, "op {OP} lane {i}: {x:#010x} ⊕ {y:#010x}");
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
