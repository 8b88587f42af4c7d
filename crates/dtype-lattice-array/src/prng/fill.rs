//! Random bits into memory: any slice computable on its own, filled on all cores.

use super::keys::*;
use crate::kernels::threefry_simd::{self as simd, Backend};

/// Elements per thread below which a fill stays on the calling thread.
pub(crate) const PARALLEL_MIN: usize = 1 << 16;

/// Fills `out` by calling `f(start, chunk)` on contiguous chunks, `start` being the chunk's
/// first flat index, on up to `threads` threads (rayon's pool, which the other parallel
/// kernels share).
pub(crate) fn par_fill<T: Send>(out: &mut [T], threads: usize, f: impl Fn(u64, &mut [T]) + Sync) {
    let n = out.len();
    let threads = threads.clamp(1, (n / PARALLEL_MIN).max(1));
    if threads == 1 {
        f(0, out);
        return;
    }
    let per = n.div_ceil(threads);
    rayon::scope(|s| {
        let f = &f;
        for (t, chunk) in out.chunks_mut(per).enumerate() {
            s.spawn(move |_| f((t * per) as u64, chunk));
        }
    });
}

/// The 32-bit random bits of elements `start..start + out.len()` of any output drawn from
/// `key` (JAX's `random_bits(key, 32, shape)` at those flat indices): any slice computable on
/// its own, on one thread, with SIMD.
///
/// ```
/// use dtype_lattice_array::random::{fill_bits32, Random};
/// let rng = Random::new();
/// let key = rng.key(1).unwrap();
/// let all = rng.bits(&key, &[100], 32).unwrap();
/// let mut part = [0u32; 10];
/// fill_bits32(&key, 50, &mut part);
/// let dtype_lattice_array::random::Values::U32(all) = all.into_values() else { unreachable!() };
/// assert_eq!(&part[..], &all[50..60]);
/// ```
pub fn fill_bits32(key: &Key, start: u64, out: &mut [u32]) {
    simd::xor_range(key.data, start, out)
}

/// [`fill_bits32`] on one core with a chosen SIMD backend (a backend the CPU lacks falls back
/// to scalar), for benchmarks and for checking the backends against each other.
///
/// ```
/// use dtype_lattice_array::random::{Backend, Key, fill_bits32, fill_bits32_with};
/// let key = Key::from_data([0, 7]);
/// let (mut a, mut b) = ([0u32; 37], [0u32; 37]);
/// fill_bits32(&key, 5, &mut a);
/// fill_bits32_with(Backend::Scalar, &key, 5, &mut b);
/// assert_eq!(a, b);
/// ```
pub fn fill_bits32_with(backend: Backend, key: &Key, start: u64, out: &mut [u32]) {
    simd::xor_range_with(backend, key.data, start, out)
}

/// Elements per block of [`map_bits`].
const MAP_BLOCK: usize = 512;

/// `out[j] = f(bits)` of the `width`-bit random bits (8, 16, 32 or 64, as a `u64`) of the
/// elements from flat index `start`, block by block. `f` runs with AVX2 and FMA where the CPU
/// has them ([`crate::kernels::simd`]): `mul_add` is one instruction there, not a call of the C
/// library's `fma`, and a branch-free `f` is vectorised.
pub(crate) fn map_bits<T>(
    key: [u32; 2],
    width: u32,
    start: u64,
    out: &mut [T],
    f: impl Fn(u64) -> T + Copy,
) {
    use crate::kernels::simd::{map_into, zip_into};
    let (mut a, mut b) = ([0u32; MAP_BLOCK], [0u32; MAP_BLOCK]);
    for (c, chunk) in out.chunks_mut(MAP_BLOCK).enumerate() {
        let (m, at) = (chunk.len(), start + (c * MAP_BLOCK) as u64);
        if width == 64 {
            simd::pair_range(key, at, &mut a[..m], &mut b[..m]);
            zip_into(&a[..m], &b[..m], chunk, |x, y| {
                f(u64::from(x) << 32 | u64::from(y))
            });
        } else {
            simd::xor_range(key, at, &mut a[..m]);
            let mask = u32::MAX >> (32 - width);
            map_into(&a[..m], chunk, |x| f(u64::from(x & mask)));
        }
    }
}

/// Scratch block for conversions from bits.
pub(crate) const BLOCK: usize = 2048;

/// Calls `sink(j, bits)` for the `n` elements from `start`, with `width`-bit random bits
/// (8, 16, 32 or 64) as a `u64`.
pub(crate) fn for_each_bits(
    key: [u32; 2],
    width: u32,
    start: u64,
    n: usize,
    mut sink: impl FnMut(usize, u64),
) {
    let mut a = [0u32; BLOCK];
    let mut b = [0u32; BLOCK];
    let mut done = 0;
    while done < n {
        let m = (n - done).min(BLOCK);
        let at = start + done as u64;
        if width == 64 {
            simd::pair_range(key, at, &mut a[..m], &mut b[..m]);
            for j in 0..m {
                sink(done + j, (u64::from(a[j]) << 32) | u64::from(b[j]));
            }
        } else {
            simd::xor_range(key, at, &mut a[..m]);
            let mask = if width == 32 {
                u32::MAX
            } else {
                (1u32 << width) - 1
            };
            for (j, &x) in a[..m].iter().enumerate() {
                sink(done + j, u64::from(x & mask));
            }
        }
        done += m;
    }
}
