//! XLA's `RngBitGenerator` as its CPU backend computes it: the HLO op is expanded by XLA's
//! `RngBitGeneratorExpander` into Philox-4x32-10 (`RNG_DEFAULT` is `RNG_PHILOX` on CPU) or
//! Threefry-2x32-20 (`RNG_THREE_FRY`) over a `u64[2]` state `[s0, s1]`. Found by comparing
//! with jaxlib 0.10.2 (`jax.lax.rng_bit_generator`), every layout below bit for bit:
//!
//! - **Philox**: the key is `s0` (words `[lo(s0), hi(s0)]`), the 128-bit counter of block
//!   `b` is `(s0 << 64 | s1) + b` (words low first: `[lo(s1 + b), hi(s1 + b), lo(s0 + c),
//!   hi(s0 + c)]`, `c` the carry out of `s1 + b`). 32-bit (and narrower) output element `i` is
//!   word `i % 4` of block `i / 4`, truncated for 8 and 16 bits; 64-bit element `i` is words
//!   `2h`, `2h + 1` (low first) of block `i / 2`, `h = i % 2`. The new state is `[s0, s1 +
//!   blocks]` (wrapping, no carry into `s0`), `blocks = ⌈n / 4⌉` (32 bits or narrower) or
//!   `⌈n / 2⌉` (64 bits).
//! - **ThreeFry**: the key is `s0`, the counter of index `j` is `s1 + j` (words `[lo, hi]`).
//!   64-bit element `i` is `o0 | o1 << 32` at index `i`, state `s1 + n`. 32-bit (and
//!   narrower) outputs split the shape in halves along the first even dimension (else the
//!   first longest one): `d` becomes `⌈d / 2⌉`, each output pair fills elements `2k` and `2k +
//!   1` of that dimension at index `k` of the half shape (row-major), the last one dropped for
//!   odd `d`; a 0-d output is `o0` at index 0. The state advances by the half shape's size (1
//!   for 0-d).
//!
//! Kernels on slices: the callers turn key data into states and back.

use super::philox::philox4x32;
use super::threefry::threefry2x32;

/// A generator state as XLA holds it: `u64[2]`.
pub(crate) type State = [u64; 2];

/// The algorithm an `RngBitGenerator` runs (after `RNG_DEFAULT` is resolved).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Algorithm {
    /// Philox-4x32-10.
    Philox,
    /// Threefry-2x32-20.
    ThreeFry,
}

/// The low and high words of a `u64`.
#[inline(always)]
fn words(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

/// The Philox counter of block `b`.
#[inline(always)]
fn philox_counter(state: State, b: u64) -> [u32; 4] {
    let lo = state[1].wrapping_add(b);
    let hi = state[0].wrapping_add(u64::from(lo < state[1]));
    let ([a, b], [c, d]) = (words(lo), words(hi));
    [a, b, c, d]
}

/// Philox blocks `first..first + n` of `state`, each handed to `sink(b, words)` in order.
fn philox_blocks(state: State, first: u64, n: u64, mut sink: impl FnMut(u64, [u32; 4])) {
    let key = words(state[0]);
    // Block by block: an 8-lane form of the cipher that LLVM vectorised computed wrong
    // words 0 and 2 for some lanes in this crate's optimised builds (right in debug builds
    // and in the same code compiled alone), so the scalar cipher serves every block.
    let mut b = first;
    let end = first + n;
    while b < end {
        sink(b, philox4x32(philox_counter(state, b), key));
        b += 1;
    }
}

/// Philox's 32-bit elements `start..start + out.len()`, each narrowed by `narrow` (a
/// truncation for 8 and 16 bits).
pub(crate) fn philox32<W>(state: State, start: usize, out: &mut [W], narrow: impl Fn(u32) -> W) {
    if out.is_empty() {
        return;
    }
    let (start, end) = (start as u64, (start + out.len()) as u64);
    let first = start / 4;
    philox_blocks(state, first, end.div_ceil(4) - first, |b, x| {
        for (w, &v) in x.iter().enumerate() {
            let i = 4 * b + w as u64;
            if (start..end).contains(&i) {
                out[(i - start) as usize] = narrow(v);
            }
        }
    });
}

/// Philox's 64-bit elements `start..start + out.len()`.
pub(crate) fn philox64(state: State, start: usize, out: &mut [u64]) {
    if out.is_empty() {
        return;
    }
    let (start, end) = (start as u64, (start + out.len()) as u64);
    let first = start / 2;
    philox_blocks(state, first, end.div_ceil(2) - first, |b, x| {
        for h in 0..2u64 {
            let i = 2 * b + h;
            if (start..end).contains(&i) {
                let k = 2 * h as usize;
                out[(i - start) as usize] = u64::from(x[k]) | u64::from(x[k + 1]) << 32;
            }
        }
    });
}

/// ThreeFry's output pair at counter index `j`.
#[inline(always)]
fn threefry_at(state: State, j: u64) -> [u32; 2] {
    threefry2x32(words(state[0]), words(state[1].wrapping_add(j)))
}

/// ThreeFry's 64-bit elements `start..start + out.len()`.
pub(crate) fn threefry64(state: State, start: usize, out: &mut [u64]) {
    for (j, o) in out.iter_mut().enumerate() {
        let [a, b] = threefry_at(state, (start + j) as u64);
        *o = u64::from(a) | u64::from(b) << 32;
    }
}

/// The dimension ThreeFry's 32-bit outputs split in halves: the first even one, else the
/// first longest one (`None` for a 0-d shape).
fn split_dim(shape: &[usize]) -> Option<usize> {
    shape.iter().position(|d| d % 2 == 0).or_else(|| {
        let longest = *shape.iter().max()?;
        shape.iter().position(|&d| d == longest)
    })
}

/// The number of counters ThreeFry's 32-bit outputs of `shape` take: the half shape's size.
fn threefry_half_size(shape: &[usize]) -> u64 {
    match split_dim(shape) {
        None => 1,
        Some(k) => shape
            .iter()
            .enumerate()
            .map(|(i, &d)| (if i == k { d.div_ceil(2) } else { d }) as u64)
            .product(),
    }
}

/// ThreeFry's 32-bit elements of a whole output of `shape` (`out.len()` its size), each
/// narrowed by `narrow`.
pub(crate) fn threefry32<W>(
    state: State,
    shape: &[usize],
    out: &mut [W],
    narrow: impl Fn(u32) -> W,
) {
    let Some(k) = split_dim(shape) else {
        if let Some(o) = out.first_mut() {
            *o = narrow(threefry_at(state, 0)[0]);
        }
        return;
    };
    let outer: usize = shape[..k].iter().product();
    let inner: usize = shape[k + 1..].iter().product();
    let (d, half) = (shape[k], shape[k].div_ceil(2));
    for a in 0..outer {
        for h in 0..half {
            for r in 0..inner {
                let [o0, o1] = threefry_at(state, ((a * half + h) * inner + r) as u64);
                let j = 2 * h;
                out[(a * d + j) * inner + r] = narrow(o0);
                if j + 1 < d {
                    out[(a * d + j + 1) * inner + r] = narrow(o1);
                }
            }
        }
    }
}

/// The state after drawing an output of `shape` (64-bit elements when `wide`).
pub(crate) fn next_state(algorithm: Algorithm, state: State, shape: &[usize], wide: bool) -> State {
    let n: u64 = shape.iter().map(|&d| d as u64).product();
    let used = match (algorithm, wide) {
        (Algorithm::Philox, false) => n.div_ceil(4),
        (Algorithm::Philox, true) => n.div_ceil(2),
        (Algorithm::ThreeFry, false) => threefry_half_size(shape),
        (Algorithm::ThreeFry, true) => n,
    };
    [state[0], state[1].wrapping_add(used)]
}

/// Outputs at least this long are split across threads.
const PARALLEL_MIN: usize = 1 << 15;

/// Fills `out` by `f(start, chunk)` on contiguous chunks (`start` the chunk's first index),
/// split across rayon's pool when it is long.
pub(crate) fn par_fill<W: Send>(out: &mut [W], f: impl Fn(usize, &mut [W]) + Sync) {
    let n = out.len();
    let threads = rayon::current_num_threads().clamp(1, (n / PARALLEL_MIN).max(1));
    if threads == 1 {
        f(0, out);
        return;
    }
    // Chunks of whole blocks (a multiple of 4 elements).
    let per = n.div_ceil(threads).next_multiple_of(4);
    rayon::scope(|s| {
        let f = &f;
        for (t, chunk) in out.chunks_mut(per).enumerate() {
            s.spawn(move |_| f(t * per, chunk));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Philox element `i` straight from the description.
    fn philox_ref(state: State, i: u64, wide: bool) -> u64 {
        let key = words(state[0]);
        let counter = |b: u64| {
            let wide = (u128::from(state[0]) << 64 | u128::from(state[1])).wrapping_add(b.into());
            let w = |k: u32| (wide >> (32 * k)) as u32;
            [w(0), w(1), w(2), w(3)]
        };
        if wide {
            let x = philox4x32(counter(i / 2), key);
            let h = 2 * (i % 2) as usize;
            u64::from(x[h]) | u64::from(x[h + 1]) << 32
        } else {
            u64::from(philox4x32(counter(i / 4), key)[(i % 4) as usize])
        }
    }

    const STATES: [State; 4] = [
        [0, 0],
        [0x0000_0002_0000_0001, 0x0000_0004_0000_0003],
        [5, u64::MAX - 6],
        [u64::MAX, u64::MAX],
    ];

    #[test]
    fn philox_is_the_described_layout_from_any_start() {
        for state in STATES {
            let all: Vec<u64> = (0..70).map(|i| philox_ref(state, i, false)).collect();
            let wide: Vec<u64> = (0..70).map(|i| philox_ref(state, i, true)).collect();
            for (start, len) in [(0, 70), (1, 5), (3, 9), (17, 40), (64, 6)] {
                let mut o = vec![0u32; len];
                philox32(state, start, &mut o, |x| x);
                let got: Vec<u64> = o.iter().map(|&x| u64::from(x)).collect();
                assert_eq!(got, all[start..start + len], "{state:x?} {start}+{len}");
                let mut o = vec![0u64; len];
                philox64(state, start, &mut o);
                assert_eq!(o, wide[start..start + len], "64 {state:x?} {start}+{len}");
                let mut o = vec![0u8; len];
                philox32(state, start, &mut o, |x| x as u8);
                let low: Vec<u8> = all[start..start + len].iter().map(|&x| x as u8).collect();
                assert_eq!(o, low);
            }
        }
    }

    /// A known value of jaxlib 0.10.2: `lax.rng_bit_generator(u32[1, 2, 3, 4], (9,))` (the
    /// CPU's default, Philox) begins `0x1e8fe864 0x4d5e0bd7` and leaves the key `[1 2 6 4]`.
    #[test]
    fn philox_agrees_with_xla_cpu() {
        let state = [1 | 2 << 32, 3 | 4 << 32];
        let mut o = [0u32; 9];
        philox32(state, 0, &mut o, |x| x);
        assert_eq!(&o[..2], &[0x1e8f_e864, 0x4d5e_0bd7]);
        assert_eq!(o[8], 0x9a2c_32b7);
        let next = next_state(Algorithm::Philox, state, &[9], false);
        assert_eq!(next, [1 | 2 << 32, 6 | 4 << 32]);
    }

    /// Likewise for `RNG_THREE_FRY` (`0x5df433ec 0x8617198e …`, key `[1 2 8 4]`).
    #[test]
    fn threefry_agrees_with_xla_cpu() {
        let state = [1 | 2 << 32, 3 | 4 << 32];
        let mut o = [0u32; 9];
        threefry32(state, &[9], &mut o, |x| x);
        assert_eq!(&o[..2], &[0x5df4_33ec, 0x8617_198e]);
        assert_eq!(o[8], 0xed54_bb55);
        let next = next_state(Algorithm::ThreeFry, state, &[9], false);
        assert_eq!(next, [1 | 2 << 32, 8 | 4 << 32]);
    }

    #[test]
    fn threefry_halves_split_the_first_even_else_longest_dimension() {
        assert_eq!(split_dim(&[]), None);
        assert_eq!(split_dim(&[3, 4, 2]), Some(1));
        assert_eq!(split_dim(&[3, 5, 5]), Some(1));
        assert_eq!(split_dim(&[7, 0]), Some(1));
        assert_eq!(threefry_half_size(&[]), 1);
        assert_eq!(threefry_half_size(&[3, 5]), 9);
        assert_eq!(threefry_half_size(&[0]), 0);
        // A (3, 5) output: halves of (3, 3); element (1, 3) is o1 at half index (1, 1).
        let state = [7, 9];
        let mut o = [0u32; 15];
        threefry32(state, &[3, 5], &mut o, |x| x);
        assert_eq!(o[5 + 3], threefry_at(state, 3 + 1)[1]);
        assert_eq!(o[5 + 4], threefry_at(state, 3 + 2)[0]);
    }

    #[test]
    fn parallel_fills_are_the_serial_fill() {
        let state = STATES[2];
        let n = 3 * PARALLEL_MIN + 3;
        let mut serial = vec![0u32; n];
        philox32(state, 0, &mut serial, |x| x);
        let mut par = vec![0u32; n];
        par_fill(&mut par, |start, chunk| {
            philox32(state, start, chunk, |x| x)
        });
        assert!(serial == par);
    }
}
