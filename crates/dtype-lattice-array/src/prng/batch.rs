//! Threefry over many keys at once: the PRNG primitives on key arrays (`random_bits`,
//! `random_split`, `random_fold_in` of a batch of keys, as `vmap` binds them).
//!
//! A key with many counters ([`direct`]) fills vectors on its own
//! ([`simd::xor_range`]/[`simd::pair_range`], one broadcast key). Keys with few counters each
//! (a split in two, a fold-in, a few bits per key) are gathered lane by lane into
//! [`blocks`] of [`BLOCK`] (key, counter) pairs that run through [`simd::lanes`] (vectors of
//! blocks with their own keys), so that no vector is left mostly empty and no key pays for a
//! call of its own.
//!
//! Every output equals what the single-key functions compute key by key (tested below).

use super::fill::par_fill;
use crate::array::storage::Word64;
use crate::kernels::threefry::counter;
use crate::kernels::threefry_simd as simd;

/// Whether keys of `per_key` counters each fill their own vectors (whole vectors, or enough of
/// them that a ragged end computed one block at a time costs little), rather than going
/// through [`blocks`] (measured: 8 counters per key in one vector of AVX2 beat a batch, whose
/// gathering of lanes costs about a third of the computation).
fn direct(per_key: usize) -> bool {
    let lanes = simd::Backend::detect().lanes();
    per_key >= 4 * lanes || (per_key >= lanes && per_key.is_multiple_of(lanes))
}

/// (key, counter) pairs per block of [`blocks`].
const BLOCK: usize = 128;

/// Threefry-2x32 of `n` blocks, each with its own key and counter, [`BLOCK`] at a time
/// through [`simd::lanes`]: `fill(k0, k1, c0, c1)` writes the keys and counters of the next
/// `k0.len()` blocks (in order), `sink(j, o0, o1)` takes the outputs of blocks `j..`.
fn blocks(
    n: usize,
    mut fill: impl FnMut(&mut [u32], &mut [u32], &mut [u32], &mut [u32]),
    mut sink: impl FnMut(usize, &[u32], &[u32]),
) {
    let (mut k0, mut k1, mut c0, mut c1) = ([0; BLOCK], [0; BLOCK], [0; BLOCK], [0; BLOCK]);
    let (mut o0, mut o1) = ([0; BLOCK], [0; BLOCK]);
    let mut j = 0;
    while j < n {
        let m = (n - j).min(BLOCK);
        fill(&mut k0[..m], &mut k1[..m], &mut c0[..m], &mut c1[..m]);
        simd::lanes(
            &k0[..m],
            &k1[..m],
            &c0[..m],
            &c1[..m],
            &mut o0[..m],
            &mut o1[..m],
        );
        sink(j, &o0[..m], &o1[..m]);
        j += m;
    }
}

/// A `fill` for [`blocks`]: every key of `keys` (key data) at the counters `0..per_key` in
/// turn, from key `key` at counter `at`.
fn runs(
    keys: &[u32],
    per_key: usize,
    mut key: usize,
    mut at: usize,
) -> impl FnMut(&mut [u32], &mut [u32], &mut [u32], &mut [u32]) {
    let mut k = key_at(keys, key);
    move |k0, k1, c0, c1| {
        for (((a, b), c), d) in k0.iter_mut().zip(k1).zip(c0).zip(c1) {
            [*a, *b] = k;
            [*c, *d] = counter(at as u64);
            at += 1;
            if at == per_key {
                (key, at) = (key + 1, 0);
                if let Some(&[x, y]) = keys.get(2 * key..2 * key + 2) {
                    k = [x, y];
                }
            }
        }
    }
}

/// The threefry2x32 key at flat index `i` of key data (two words per key).
#[inline(always)]
fn key_at(keys: &[u32], i: usize) -> [u32; 2] {
    [keys[2 * i], keys[2 * i + 1]]
}

/// The `width`-bit random bits (8, 16, 32 or 64) of a block's outputs, as `jax.random.bits`
/// takes them: the two words XORed and truncated, or `hi << 32 | lo`.
#[inline(always)]
fn bits_of(width: u32, o0: u32, o1: u32) -> u64 {
    if width == 64 {
        u64::from(o0) << 32 | u64::from(o1)
    } else {
        u64::from(o0 ^ o1) & (u64::MAX >> (64 - width))
    }
}

/// `random_bits` over key data `keys`: key `i` owns the `per_key` elements from `i * per_key`
/// (at counters `0..per_key`), of `width` bits (8, 16, 32 or 64) stored as `W` (truncating:
/// 64-bit bits in `u32` words keep their low word, as JAX's with x64 off). `out` is the whole
/// output, filled on up to `threads` threads.
pub(crate) fn bits<W: Word64 + Send>(
    keys: &[u32],
    per_key: usize,
    width: u32,
    threads: usize,
    out: &mut [W],
) {
    par_fill(out, threads, |start, chunk| {
        bits_range(keys, per_key, width, start as usize, chunk)
    });
}

/// Elements `start..start + out.len()` of [`bits`].
pub(crate) fn bits_range<W: Word64>(
    keys: &[u32],
    per_key: usize,
    width: u32,
    start: usize,
    out: &mut [W],
) {
    bits_range_as(direct(per_key), keys, per_key, width, start, out)
}

/// [`bits_range`], key by key (`direct`) or through [`blocks`].
fn bits_range_as<W: Word64>(
    direct: bool,
    keys: &[u32],
    per_key: usize,
    width: u32,
    start: usize,
    out: &mut [W],
) {
    if per_key == 0 || out.is_empty() {
        return;
    }
    let (mut key, mut j) = (start / per_key, start % per_key);
    if direct {
        let (mut a, mut b) = ([0u32; BLOCK], [0u32; BLOCK]);
        let mut done = 0;
        while done < out.len() {
            let take = (per_key - j).min(out.len() - done);
            let k = key_at(keys, key);
            for (c, part) in out[done..done + take].chunks_mut(BLOCK).enumerate() {
                let (m, at) = (part.len(), (j + c * BLOCK) as u64);
                if width == 64 {
                    simd::pair_range(k, at, &mut a[..m], &mut b[..m]);
                    for ((o, &x), &y) in part.iter_mut().zip(&a).zip(&b) {
                        *o = W::from_u64(bits_of(64, x, y));
                    }
                } else {
                    // The XOR of the two words, then the low `width` bits.
                    simd::xor_range(k, at, &mut a[..m]);
                    for (o, &x) in part.iter_mut().zip(&a) {
                        *o = W::from_u64(bits_of(width, x, 0));
                    }
                }
            }
            done += take;
            (key, j) = (key + 1, 0);
        }
        return;
    }
    blocks(out.len(), runs(keys, per_key, key, j), move |at, o0, o1| {
        let dst = out[at..].iter_mut().zip(o0).zip(o1);
        // One loop per width, without a test per element.
        if width == 64 {
            dst.for_each(|((o, &a), &b)| *o = W::from_u64(bits_of(64, a, b)));
        } else {
            dst.for_each(|((o, &a), &b)| *o = W::from_u64(bits_of(width, a, b)));
        }
    });
}

/// `random_split` over key data `keys`: the `per_key` new keys of each key (at counters
/// `0..per_key`), as key data (two words per key) in `out`.
pub(crate) fn split(keys: &[u32], per_key: usize, out: &mut [u32]) {
    split_as(direct(per_key), keys, per_key, out)
}

/// [`split`], key by key (`direct`) or through [`blocks`].
fn split_as(direct: bool, keys: &[u32], per_key: usize, out: &mut [u32]) {
    if per_key == 0 {
        return;
    }
    if direct {
        let (mut hi, mut lo) = ([0u32; BLOCK], [0u32; BLOCK]);
        for (i, out) in out.chunks_mut(2 * per_key).enumerate() {
            let key = key_at(keys, i);
            for (c, out) in out.chunks_mut(2 * BLOCK).enumerate() {
                let m = out.len() / 2;
                simd::pair_range(key, (c * BLOCK) as u64, &mut hi[..m], &mut lo[..m]);
                for ((d, &h), &l) in out.chunks_exact_mut(2).zip(&hi).zip(&lo) {
                    d.copy_from_slice(&[h, l]);
                }
            }
        }
        return;
    }
    let n = out.len() / 2;
    blocks(n, runs(keys, per_key, 0, 0), |at, o0, o1| {
        interleave(&mut out[2 * at..], o0, o1)
    });
}

/// `out[2j] = o0[j]`, `out[2j + 1] = o1[j]`.
fn interleave(out: &mut [u32], o0: &[u32], o1: &[u32]) {
    for ((d, &h), &l) in out.chunks_exact_mut(2).zip(o0).zip(o1) {
        d.copy_from_slice(&[h, l]);
    }
}

/// `random_fold_in`: output key `i` is threefry2x32 of key `i * key_step` of `keys` (key data)
/// at the counter `(0, msgs[i * msg_step])`, as key data (two words per key) in `out`; a step
/// of 0 broadcasts a single key or message.
pub(crate) fn fold_in(
    keys: &[u32],
    key_step: usize,
    msgs: &[u32],
    msg_step: usize,
    out: &mut [u32],
) {
    let mut i = 0;
    let fill = |k0: &mut [u32], k1: &mut [u32], c0: &mut [u32], c1: &mut [u32]| {
        for (((a, b), c), d) in k0.iter_mut().zip(k1).zip(c0).zip(c1) {
            [*a, *b] = key_at(keys, i * key_step);
            [*c, *d] = [0, msgs[i * msg_step]];
            i += 1;
        }
    };
    blocks(out.len() / 2, fill, |at, o0, o1| {
        interleave(&mut out[2 * at..], o0, o1)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::threefry::threefry2x32;
    use crate::prng::{Key, Random, Values};

    /// Key data of `n` distinct keys.
    fn keys(n: usize) -> Vec<u32> {
        (0..2 * n as u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 13))
            .collect()
    }

    /// The per-key counts worth checking: below, at and above a vector (of AVX2 and of
    /// AVX-512) and a batch block, on either side of [`direct`].
    const PER_KEY: [usize; 15] = [1, 2, 3, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64, 257, 300];

    /// The bits of each key computed alone ([`Random::bits`]), as `u64`s truncated to `keep`
    /// bits.
    fn one_at_a_time(keys: &[u32], per_key: usize, width: u32, keep: u32) -> Vec<u64> {
        let rng = Random::new().x64(true);
        let mut all = Vec::new();
        for k in keys.chunks_exact(2) {
            let s = rng
                .bits(&Key::from_data([k[0], k[1]]), &[per_key], width)
                .unwrap();
            let v: Vec<u64> = match s.into_values() {
                Values::U8(v) => v.into_iter().map(u64::from).collect(),
                Values::U16(v) => v.into_iter().map(u64::from).collect(),
                Values::U32(v) => v.into_iter().map(u64::from).collect(),
                Values::U64(v) => v,
                _ => unreachable!(),
            };
            all.extend(v.into_iter().map(|b| b & (u64::MAX >> (64 - keep))));
        }
        all
    }

    /// The bits of all keys at once, key by key (`direct`) or through a batch, as `u64`s.
    fn batched<W: Word64>(direct: bool, keys: &[u32], per_key: usize, width: u32) -> Vec<u64> {
        let mut out = vec![W::from_u64(0); keys.len() / 2 * per_key];
        bits_range_as(direct, keys, per_key, width, 0, &mut out);
        out.into_iter().map(W::to_u64).collect()
    }

    #[test]
    fn bits_of_a_batch_are_the_bits_of_each_key() {
        for n_keys in [1usize, 5, 40] {
            let k = keys(n_keys);
            for per_key in PER_KEY {
                for d in [true, false] {
                    let ctx = format!("{n_keys} keys of {per_key}, direct {d}");
                    let each = |w, keep| one_at_a_time(&k, per_key, w, keep);
                    assert_eq!(batched::<u8>(d, &k, per_key, 8), each(8, 8), "8 {ctx}");
                    assert_eq!(batched::<u16>(d, &k, per_key, 16), each(16, 16), "16 {ctx}");
                    assert_eq!(batched::<u32>(d, &k, per_key, 32), each(32, 32), "32 {ctx}");
                    assert_eq!(batched::<u64>(d, &k, per_key, 64), each(64, 64), "64 {ctx}");
                    // 64-bit bits kept as their low words (x64 off).
                    assert_eq!(
                        batched::<u32>(d, &k, per_key, 64),
                        each(64, 32),
                        "64/32 {ctx}"
                    );
                }
            }
        }
    }

    #[test]
    fn bits_on_several_threads_are_the_bits_on_one() {
        let k = keys(300);
        for per_key in [3usize, 500] {
            let mut one = vec![0u32; 300 * per_key];
            let mut two = one.clone();
            bits(&k, per_key, 32, 1, &mut one);
            bits(&k, per_key, 32, 2, &mut two);
            assert_eq!(one, two, "{per_key}");
        }
    }

    #[test]
    fn any_range_of_batched_bits_is_computable_on_its_own() {
        let k = keys(37);
        for per_key in [3usize, 32, 100] {
            for d in [true, false] {
                let whole = batched::<u32>(d, &k, per_key, 32);
                for (start, len) in [(0, 1), (1, 5), (2, 100), (5, whole.len() - 5)] {
                    let mut part = vec![0u32; len];
                    bits_range_as(d, &k, per_key, 32, start, &mut part);
                    let part: Vec<u64> = part.into_iter().map(u64::from).collect();
                    assert_eq!(part, whole[start..start + len], "{per_key}: {start}+{len}");
                }
            }
        }
    }

    #[test]
    fn split_of_a_batch_is_the_split_of_each_key() {
        let rng = Random::new();
        for n_keys in [1usize, 3, 70] {
            let k = keys(n_keys);
            for (per_key, d) in PER_KEY.into_iter().flat_map(|p| [(p, true), (p, false)]) {
                let mut got = vec![0u32; 2 * n_keys * per_key];
                split_as(d, &k, per_key, &mut got);
                let want: Vec<u32> = k
                    .chunks_exact(2)
                    .flat_map(|k| {
                        let key = Key::from_data([k[0], k[1]]);
                        rng.split(&key, &[per_key]).unwrap().key_data().to_vec()
                    })
                    .collect();
                assert_eq!(got, want, "{n_keys} keys of {per_key}, direct {d}");
            }
        }
    }

    #[test]
    fn fold_in_of_a_batch_is_each_fold_in() {
        for n in [0usize, 1, 9, 127, 128, 129, 1000] {
            let k = keys(n.max(1));
            let msgs: Vec<u32> = (0..n.max(1) as u32)
                .map(|j| j.wrapping_mul(2_654_435_761))
                .collect();
            for (ks, ms) in [(1, 1), (0, 1), (1, 0), (0, 0)] {
                let mut got = vec![0u32; 2 * n];
                fold_in(&k, ks, &msgs, ms, &mut got);
                let want: Vec<u32> = (0..n)
                    .flat_map(|j| threefry2x32(key_at(&k, j * ks), [0, msgs[j * ms]]))
                    .collect();
                assert_eq!(got, want, "{n} steps {ks} {ms}");
            }
        }
    }
}
