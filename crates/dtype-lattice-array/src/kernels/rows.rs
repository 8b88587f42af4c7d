//! The moves of `gather` and `scatter`: runs of `run` bytes copied out of a source at byte
//! offsets computed above (the primitives turn their index vectors and windows into offsets
//! first), or combined into a destination at such offsets, in order.
//!
//! Both are bound by memory: each run is a random row of a table larger than the caches. A
//! run's load waits for memory unless it was asked for earlier, so each loop asks for the
//! run [`AHEAD`] places on ([`simd::prefetch_span`]) while it moves the current one; and the work
//! is split over rayon's threads (a gather by its output, a scatter by the destination's
//! bytes, so that the updates of each destination run are still combined in their order:
//! each thread picks its runs a block at a time without branching, and reads the updates
//! past the caches, which keep the destination). On this machine a gather of 2^20 rows of
//! 256 bytes from a 16 MiB table took 190 ms walking the indices run by run, and takes a
//! tenth of that here. The scatter-add of as many rows into a 16 MiB table is bound by how
//! many cache misses a core keeps in flight (a prefetch issued ahead stalls when the miss
//! buffers are full), so by the instructions each row takes: the loops are written once,
//! generic over a [`Combiner`], and a combiner with a vector kernel has them compiled with
//! its CPU feature, the kernel inlined (`flush_sum`). One thread, two threads, a split by
//! columns, tiles of the destination fitting the second-level cache and non-temporal reads
//! were timed, and the split by rows, one part per thread, with non-temporal reads of the
//! updates was the fastest (in one run of the crate's scatter-add: two parts 26.5 ms, six
//! parts 37 ms — each part reads its updates sparser — one thread 30 ms).

use rayon::prelude::*;

use super::simd;

/// An offset standing for no source run: the run is the fill (gather), or is skipped
/// (scatter).
pub(crate) const SKIP: u64 = u64::MAX;

/// How many runs ahead the loops ask for their next run's cache lines (for the scatter of
/// 2^20 rows of 256 bytes on this machine, in one run: 4 ahead 51 ms, 8 ahead 47 ms, 16
/// ahead 45 ms, 24 to 48 ahead the same within the noise).
const AHEAD: usize = 16;

/// The fewest bytes moved worth splitting over threads.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

fn threads(bytes: usize) -> usize {
    if bytes < PARALLEL_MIN_BYTES {
        1
    } else {
        rayon::current_num_threads().clamp(1, 8)
    }
}

/// Whether every offset but [`SKIP`] starts a run of `run` bytes inside `len` bytes (`None`
/// if one does not), and whether all are multiples of `run`: a pass without branches (which
/// the compiler vectorises; a mask rather than a division per offset for a power of two),
/// split over threads for millions of offsets.
fn scan(offsets: &[u64], run: usize, len: usize) -> Option<bool> {
    let step = run as u64;
    // The last start of a run inside; with none, every offset but SKIP is outside.
    let Some(last) = (len as u64).checked_sub(step) else {
        return offsets.iter().all(|&o| o == SKIP).then_some(true);
    };
    let part = |offsets: &[u64]| scan_part(offsets, step, last);
    let t = threads(offsets.len() * 8);
    let (outside, aligned) = if t < 2 {
        part(offsets)
    } else {
        offsets
            .par_chunks(offsets.len().div_ceil(t))
            .map(part)
            .reduce(|| (false, true), |a, b| (a.0 | b.0, a.1 & b.1))
    };
    (!outside).then_some(aligned)
}

/// [`scan`] of a part: whether an offset is past `last`, whether all are multiples of
/// `step`.
fn scan_part(offsets: &[u64], step: u64, last: u64) -> (bool, bool) {
    let (mut outside, mut aligned) = (false, true);
    match step.is_power_of_two().then(|| step - 1) {
        Some(mask) => {
            for &o in offsets {
                let some = o != SKIP;
                outside |= some & (o > last);
                aligned &= !some | (o & mask == 0);
            }
        }
        None => {
            for &o in offsets {
                if o != SKIP {
                    outside |= o > last;
                    aligned &= o % step == 0;
                }
            }
        }
    }
    (outside, aligned)
}

/// Asks for the cache lines of the run at `offset` of `v`.
#[inline(always)]
fn prefetch_run(v: &[u8], offset: u64, run: usize) {
    if offset != SKIP {
        simd::prefetch_span(v, offset as usize, run);
    }
}

/// `dst`'s `i`-th run of `run` bytes is `src[offsets[i]..][..run]`, or `fill` (`run` bytes)
/// where the offset is [`SKIP`]. `dst` holds `offsets.len()` runs. Returns `false`, writing
/// nothing, if an offset is outside `src` or the lengths disagree.
pub(crate) fn gather(src: &[u8], offsets: &[u64], run: usize, fill: &[u8], dst: &mut [u8]) -> bool {
    if run == 0 {
        return true;
    }
    if offsets.len().checked_mul(run) != Some(dst.len())
        || (offsets.contains(&SKIP) && fill.len() != run)
        || scan(offsets, run, src.len()).is_none()
    {
        return false;
    }
    let part = |offsets: &[u64], dst: &mut [u8]| {
        for (i, (&o, d)) in offsets.iter().zip(dst.chunks_exact_mut(run)).enumerate() {
            if let Some(&next) = offsets.get(i + AHEAD) {
                prefetch_run(src, next, run);
            }
            if o == SKIP {
                d.copy_from_slice(fill);
            } else {
                // Inside `src` (checked above), so `o` fits a usize.
                let o = o as usize;
                d.copy_from_slice(&src[o..o + run]);
            }
        }
    };
    let t = threads(dst.len());
    if t < 2 {
        part(offsets, dst);
    } else {
        let per = offsets.len().div_ceil(t * 4).max(1);
        dst.par_chunks_mut(per * run)
            .zip(offsets.par_chunks(per))
            .for_each(|(d, o)| part(o, d));
    }
    true
}

/// How a [`scatter`] combines an update's run into the destination's. The loops over the
/// runs ([`in_order`], [`part`]) are written once, inlined into [`Combiner::in_order`] and
/// [`Combiner::part`]: a combiner whose kernel is compiled for a CPU feature overrides those
/// two with functions compiled for it, so that its kernel is inlined into the loop (a call
/// per run through function pointers costs as much as the run's arithmetic).
pub(crate) trait Combiner: Sync {
    /// What a combination can fail with.
    type Error: Send;

    /// Combines `new` into `slot` (runs of one length).
    ///
    /// # Errors
    ///
    /// The combiner's own.
    fn combine(&self, slot: &mut [u8], new: &[u8]) -> Result<(), Self::Error>;

    /// [`in_order`] with this combiner.
    ///
    /// # Errors
    ///
    /// The first of [`Combiner::combine`]'s.
    fn in_order(
        &self,
        dst: &mut [u8],
        offsets: &[u64],
        run: usize,
        updates: &[u8],
    ) -> Result<(), Self::Error> {
        in_order(dst, offsets, run, updates, self)
    }

    /// [`part`] with this combiner.
    ///
    /// # Errors
    ///
    /// The first of [`Combiner::combine`]'s.
    fn part(
        &self,
        lo: usize,
        dst: &mut [u8],
        offsets: &[u64],
        run: usize,
        updates: &[u8],
    ) -> Result<(), Self::Error> {
        part(lo, dst, offsets, run, updates, self)
    }
}

/// A closure as a [`Combiner`].
struct With<F>(F);

impl<E: Send, F: Fn(&mut [u8], &[u8]) -> Result<(), E> + Sync> Combiner for With<F> {
    type Error = E;

    #[inline(always)]
    fn combine(&self, slot: &mut [u8], new: &[u8]) -> Result<(), E> {
        (self.0)(slot, new)
    }
}

/// Combines the `i`-th run of `run` bytes of `updates` into `dst[offsets[i]..][..run]` by
/// `combine(slot, update)`, in the order of `i` (runs at [`SKIP`] left out): [`scatter_with`]
/// of a closure.
pub(crate) fn scatter<E: Send>(
    dst: &mut [u8],
    offsets: &[u64],
    run: usize,
    updates: &[u8],
    parallel: bool,
    combine: impl Fn(&mut [u8], &[u8]) -> Result<(), E> + Sync,
) -> Result<bool, E> {
    scatter_with(dst, offsets, run, updates, parallel, &With(combine))
}

/// Combines the `i`-th run of `run` bytes of `updates` into `dst[offsets[i]..][..run]` by
/// `combiner`, in the order of `i` (runs at [`SKIP`] left out). With `parallel` (a
/// combination cheap enough to be worth it), and every offset a multiple of `run` (so that
/// no run straddles two threads' parts), the destination is split over threads by its rows,
/// each combining the runs that land in its part, still in order ([`part`]). Returns
/// `Ok(false)`, combining nothing, if an offset is outside `dst` or the lengths disagree; the
/// first error of the combiner otherwise.
pub(crate) fn scatter_with<C: Combiner + ?Sized>(
    dst: &mut [u8],
    offsets: &[u64],
    run: usize,
    updates: &[u8],
    parallel: bool,
    combiner: &C,
) -> Result<bool, C::Error> {
    if run == 0 {
        return Ok(true);
    }
    if offsets.len().checked_mul(run) != Some(updates.len()) {
        return Ok(false);
    }
    let Some(aligned) = scan(offsets, run, dst.len()) else {
        return Ok(false);
    };
    let t = threads(updates.len());
    if !parallel || t < 2 || dst.len() < 2 * run || !aligned {
        combiner.in_order(dst, offsets, run, updates)?;
        return Ok(true);
    }
    // Parts of whole runs.
    let per = (dst.len() / run).div_ceil(t) * run;
    dst.par_chunks_mut(per)
        .enumerate()
        .try_for_each(|(k, d)| combiner.part(k * per, d, offsets, run, updates))?;
    Ok(true)
}

/// The runs combined one after the other, each asking for the destination's run [`AHEAD`]
/// places on. The caller has checked that every offset but [`SKIP`] starts a run inside
/// `dst` and that `updates` holds `offsets.len()` runs.
#[inline(always)]
pub(crate) fn in_order<C: Combiner + ?Sized>(
    dst: &mut [u8],
    offsets: &[u64],
    run: usize,
    updates: &[u8],
    combiner: &C,
) -> Result<(), C::Error> {
    for (i, (&o, u)) in offsets.iter().zip(updates.chunks_exact(run)).enumerate() {
        if let Some(&next) = offsets.get(i + AHEAD) {
            prefetch_run(dst, next, run);
            simd::prefetch_span_nta(updates, (i + AHEAD) * run, run);
        }
        if o != SKIP {
            // Inside `dst` (checked by the caller), so `o` fits a usize.
            let o = o as usize;
            combiner.combine(&mut dst[o..o + run], u)?;
        }
    }
    Ok(())
}

/// Offsets a thread sorts out at a time in [`part`].
const BLOCK: usize = 2048;

/// One thread's part of a split [`scatter_with`]: the runs whose offsets fall in `lo..lo +
/// part.len()`, combined into `part` in order. A block of offsets at a time, the thread
/// first picks its runs without a branch (a test per run would be mispredicted half the
/// time, the runs landing anywhere), then combines them, asking for the destination's run
/// and the update [`AHEAD`] picked runs on. The updates are no longer read in a stream the
/// hardware follows, and each is read once: they are asked for past the caches
/// ([`simd::prefetch_span_nta`]), which keeps the destination there. The caller has checked the
/// offsets (inside, multiples of `run`) and that `part` is whole runs.
#[inline(always)]
pub(crate) fn part<C: Combiner + ?Sized>(
    lo: usize,
    part: &mut [u8],
    offsets: &[u64],
    run: usize,
    updates: &[u8],
    combiner: &C,
) -> Result<(), C::Error> {
    let (lo, len) = (lo as u64, part.len() as u64);
    let mut picked = [0u32; BLOCK];
    for (b, offs) in offsets.chunks(BLOCK).enumerate() {
        let mut m = 0;
        for (q, &o) in offs.iter().enumerate() {
            // `m <= q < BLOCK`. SKIP (the largest u64) is never inside.
            picked[m] = q as u32;
            m += usize::from(o.wrapping_sub(lo) < len);
        }
        let picked = &picked[..m];
        let base = b * BLOCK;
        for (j, &q) in picked.iter().enumerate() {
            if let Some(&p) = picked.get(j + AHEAD) {
                let p = p as usize;
                simd::prefetch_span(part, (offs[p] - lo) as usize, run);
                simd::prefetch_span_nta(updates, (base + p) * run, run);
            }
            let q = q as usize;
            // Picked: `lo <= offs[q] < lo + len`, and the run fits `part` (offsets are
            // multiples of `run`, parts whole runs).
            let o = (offs[q] - lo) as usize;
            let u = base + q;
            combiner.combine(&mut part[o..o + run], &updates[u * run..(u + 1) * run])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets of random rows (some skipped) of a table of `rows` runs.
    fn offsets(n: usize, rows: usize, run: usize, skip: bool) -> Vec<u64> {
        (0..n)
            .map(|i| {
                let r = (i * 2_654_435_761) % rows;
                if skip && i % 7 == 3 {
                    SKIP
                } else {
                    (r * run) as u64
                }
            })
            .collect()
    }

    #[test]
    fn gather_copies_each_run_or_the_fill_on_every_split() {
        for (n, run) in [(5, 3), (20_000, 64), (70_000, 24)] {
            let rows = 97;
            let src: Vec<u8> = (0..rows * run).map(|i| (i * 31 % 251) as u8).collect();
            let offs = offsets(n, rows, run, true);
            let fill = vec![0xEE; run];
            let mut dst = vec![0u8; n * run];
            assert!(gather(&src, &offs, run, &fill, &mut dst));
            for (i, &o) in offs.iter().enumerate() {
                let want = if o == SKIP {
                    &fill[..]
                } else {
                    &src[o as usize..o as usize + run]
                };
                assert_eq!(&dst[i * run..(i + 1) * run], want, "run {i} of {n}");
            }
        }
    }

    #[test]
    fn gather_refuses_offsets_outside_and_writes_nothing() {
        let src = [1u8; 10];
        let mut dst = [7u8; 8];
        assert!(!gather(&src, &[0, 7], 4, &[], &mut dst));
        assert!(!gather(&src, &[0, SKIP], 4, &[], &mut dst));
        assert!(!gather(&src, &[0], 4, &[], &mut dst));
        assert_eq!(dst, [7; 8]);
    }

    /// The sequential reference: each update added in order.
    fn reference(dst: &mut [u8], offs: &[u64], run: usize, upd: &[u8]) {
        for (i, &o) in offs.iter().enumerate() {
            if o != SKIP {
                let o = o as usize;
                for k in 0..run {
                    dst[o + k] = dst[o + k].wrapping_mul(3).wrapping_add(upd[i * run + k]);
                }
            }
        }
    }

    #[test]
    fn scatter_combines_in_order_split_or_not() {
        // An order-dependent combination (x·3 + u), so that a reordering fails.
        let f = |s: &mut [u8], u: &[u8]| -> Result<(), ()> {
            for (a, &b) in s.iter_mut().zip(u) {
                *a = a.wrapping_mul(3).wrapping_add(b);
            }
            Ok(())
        };
        // More than a MiB of updates split over threads (blocks of offsets, a last one
        // partial); unaligned offsets in one thread.
        for (n, run, aligned) in [
            (9, 4, true),
            (40_000, 64, true),
            (40_000, 64, false),
            (5_000, 256, true),
            (6_000, 200, true),
            (6_000, 200, false),
        ] {
            let rows = 131;
            let mut offs = offsets(n, rows, run, true);
            if !aligned {
                offs.iter_mut()
                    .filter(|o| **o != SKIP)
                    .for_each(|o| *o /= 2);
            }
            let upd: Vec<u8> = (0..n * run).map(|i| (i * 17 % 253) as u8).collect();
            let init: Vec<u8> = (0..rows * run).map(|i| (i % 13) as u8).collect();
            let mut want = init.clone();
            reference(&mut want, &offs, run, &upd);
            for parallel in [false, true] {
                let mut got = init.clone();
                assert_eq!(scatter(&mut got, &offs, run, &upd, parallel, f), Ok(true));
                assert_eq!(got, want, "{n} {run} {aligned} {parallel}");
            }
        }
    }

    #[test]
    fn scatter_refuses_offsets_outside_and_reports_errors() {
        let mut dst = [0u8; 8];
        let f = |_: &mut [u8], _: &[u8]| -> Result<(), &str> { Err("no") };
        assert_eq!(scatter(&mut dst, &[6], 4, &[1; 4], true, f), Ok(false));
        assert_eq!(scatter(&mut dst, &[4], 4, &[1; 4], true, f), Err("no"));
        // A destination shorter than a run holds none.
        assert_eq!(
            scatter(&mut dst[..2], &[SKIP], 4, &[1; 4], true, f),
            Ok(true)
        );
        assert_eq!(scatter(&mut dst[..2], &[0], 4, &[1; 4], true, f), Ok(false));
        // Enough offsets to be checked on several threads, the last one outside.
        let mut many = vec![0u64; 1 << 18];
        *many.last_mut().unwrap_or(&mut 0) = 8;
        let upd = vec![1u8; many.len() * 4];
        assert_eq!(scatter(&mut dst, &many, 4, &upd, true, f), Ok(false));
        // Offsets not multiples of the run, one of them past the end.
        assert_eq!(scatter(&mut dst, &[1, 6], 3, &[1; 6], true, f), Ok(false));
        assert_eq!(scatter(&mut dst, &[1, 5], 3, &[1; 6], true, f), Err("no"));
    }
}
