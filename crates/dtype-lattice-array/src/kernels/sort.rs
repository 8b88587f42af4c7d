//! Stable sorting of slices by unsigned integer keys: a least-significant-digit radix sort,
//! for `sort`, `argsort` and `top_k` (the primitive maps each element to a key whose unsigned
//! order is the comparator's order, then sorts here).
//!
//! Written here rather than taken from a crate: the sort must be stable, must carry items that
//! are not their keys (the key is computed from the item on every pass, so an `f32` sort
//! moves four bytes an element, not eight), and must skip the passes whose digit is the same
//! in every key; the radix crates on crates.io sort keys only or require a key type per item.
//! No `unsafe`: the scatter's indices come from the prefix sums of the counts, which bound
//! them (a logic error would panic, never write out of bounds).

/// Digit width: 11 bits, three passes for 32-bit keys, with counts (8 KiB a digit) in L1.
const DIGIT: u32 = 11;
/// Below this length a comparison sort (Rust's stable sort) is faster than the passes' fixed
/// costs.
const SMALL: usize = 192;

/// Sorts `items` stably by `key(item)`, of which only the low `bits` bits are significant
/// (`bits` ≤ 64). `scratch` is reused between calls.
pub(crate) fn radix_sort_by_key<T: Copy, K: Fn(T) -> u64>(
    items: &mut [T],
    scratch: &mut Vec<T>,
    bits: u32,
    key: K,
) {
    let n = items.len();
    if n < 2 {
        return;
    }
    if n < SMALL {
        items.sort_by_key(|&x| key(x));
        return;
    }
    let passes = bits.div_ceil(DIGIT).max(1) as usize;
    let buckets = 1usize << DIGIT;
    let mask = (buckets - 1) as u64;
    // Every pass's counts in one read of the keys.
    let mut counts = vec![0u32; passes * buckets];
    for &x in items.iter() {
        let k = key(x);
        for (p, c) in counts.chunks_exact_mut(buckets).enumerate() {
            c[((k >> (p as u32 * DIGIT)) & mask) as usize] += 1;
        }
    }
    scratch.clear();
    scratch.extend_from_slice(items);
    // `src` holds the items before a pass, `dst` after; `in_items` says which is `items`.
    let mut in_items = true;
    let mut offsets = vec![0usize; buckets];
    for (p, c) in counts.chunks_exact(buckets).enumerate() {
        // A digit every key shares moves nothing.
        if c.iter().any(|&k| k as usize == n) {
            continue;
        }
        let mut sum = 0usize;
        for (o, &k) in offsets.iter_mut().zip(c) {
            *o = sum;
            sum += k as usize;
        }
        let shift = p as u32 * DIGIT;
        let (src, dst): (&[T], &mut [T]) = if in_items {
            (&*items, &mut scratch[..])
        } else {
            (&scratch[..], &mut *items)
        };
        for &x in src {
            let d = ((key(x) >> shift) & mask) as usize;
            dst[offsets[d]] = x;
            offsets[d] += 1;
        }
        in_items = !in_items;
    }
    if !in_items {
        items.copy_from_slice(scratch);
    }
}

/// The permutation that sorts `keys` stably (`perm[i]` is the index of the `i`-th smallest),
/// `keys` of at most `bits` significant bits; `keys.len()` must fit in `u32`.
pub(crate) fn sorting_permutation(keys: &[u64], bits: u32, perm: &mut Vec<u32>) {
    perm.clear();
    if bits <= 32 {
        // Key and index packed in one word: one item moved a pass.
        let mut packed: Vec<u64> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (k << 32) | i as u64)
            .collect();
        let mut scratch = Vec::new();
        radix_sort_by_key(&mut packed, &mut scratch, bits, |p| p >> 32);
        perm.extend(packed.iter().map(|&p| p as u32));
    } else {
        perm.extend(0..keys.len() as u32);
        let mut scratch = Vec::new();
        radix_sort_by_key(perm, &mut scratch, bits, |i| keys[i as usize]);
    }
}

/// Sorts `v` by `less` with the algorithm of libstdc++'s `std::sort` (introsort: median of
/// three pivots moved to the front, Hoare partitions, a heap sort past `2·⌊log2 n⌋` levels,
/// insertion sorts of the runs of 16 at the end), the one XLA's CPU backend calls for a sort
/// that need not be stable. Reproducing its steps gives ties the order XLA gives them.
pub(crate) fn unstable_sort_like_xla<T: Copy>(v: &mut [T], less: &impl Fn(T, T) -> bool) {
    let n = v.len();
    if n < 2 {
        return;
    }
    introsort_loop(v, 0, n, 2 * n.ilog2() as usize, less);
    // The final insertion sort: guarded on the first 16, unguarded after (the first 16 hold
    // the minimum).
    if n > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD], less);
        for i in THRESHOLD..n {
            unguarded_linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

/// libstdc++'s `_S_threshold`.
const THRESHOLD: usize = 16;

fn introsort_loop<T: Copy>(
    v: &mut [T],
    first: usize,
    mut last: usize,
    mut depth: usize,
    less: &impl Fn(T, T) -> bool,
) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[first..last], less);
            return;
        }
        depth -= 1;
        let mid = first + (last - first) / 2;
        median_to_first(v, first, first + 1, mid, last - 1, less);
        let cut = unguarded_partition(v, first + 1, last, first, less);
        introsort_loop(v, cut, last, depth, less);
        last = cut;
    }
}

/// The median of `v[a]`, `v[b]`, `v[c]` swapped into `v[result]`.
fn median_to_first<T: Copy>(
    v: &mut [T],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    less: &impl Fn(T, T) -> bool,
) {
    let l = |i: usize, j: usize| less(v[i], v[j]);
    let m = if l(a, b) {
        if l(b, c) {
            b
        } else if l(a, c) {
            c
        } else {
            a
        }
    } else if l(a, c) {
        a
    } else if l(b, c) {
        c
    } else {
        b
    };
    v.swap(result, m);
}

fn unguarded_partition<T: Copy>(
    v: &mut [T],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    less: &impl Fn(T, T) -> bool,
) -> usize {
    loop {
        while less(v[first], v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(v[pivot], v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(T, T) -> bool) {
    for i in 1..v.len() {
        if less(v[i], v[0]) {
            let x = v[i];
            v.copy_within(0..i, 1);
            v[0] = x;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

fn unguarded_linear_insert<T: Copy>(v: &mut [T], mut last: usize, less: &impl Fn(T, T) -> bool) {
    let x = v[last];
    // (`last > 0` never fails under a strict weak order: the minimum stops the walk.)
    while last > 0 && less(x, v[last - 1]) {
        v[last] = v[last - 1];
        last -= 1;
    }
    v[last] = x;
}

/// libstdc++'s `__partial_sort(first, last, last)`: `make_heap`, then `sort_heap`.
fn heap_sort<T: Copy>(v: &mut [T], less: &impl Fn(T, T) -> bool) {
    let len = v.len();
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let x = v[parent];
        adjust_heap(v, parent, len, x, less);
        if parent == 0 {
            break;
        }
        parent -= 1;
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let x = v[last];
        v[last] = v[0];
        adjust_heap(&mut v[..last], 0, last, x, less);
    }
}

fn adjust_heap<T: Copy>(
    v: &mut [T],
    mut hole: usize,
    len: usize,
    x: T,
    less: &impl Fn(T, T) -> bool,
) {
    let top = hole;
    let mut child = hole;
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(v[child], v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len.is_multiple_of(2) && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    // Push `x` up from the hole.
    let mut parent = hole.wrapping_sub(1) / 2;
    while hole > top && less(v[parent], x) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.wrapping_sub(1) / 2;
    }
    v[hole] = x;
}

/// The order key of an `f32`'s bits under JAX's sort comparator: `-0.0` and `+0.0` equal
/// (and, with `daz`, every subnormal equal to them, as XLA's CPU code compares with denormals
/// off), every NaN equal and above `+inf`, otherwise the float's order.
#[inline(always)]
pub(crate) fn f32_sort_key(b: u32, daz: bool) -> u32 {
    let abs = b & 0x7fff_ffff;
    if abs > 0x7f80_0000 {
        u32::MAX
    } else if abs == 0 || (daz && abs < 0x0080_0000) {
        0x8000_0000
    } else if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// [`f32_sort_key`] for `f64`.
#[inline(always)]
pub(crate) fn f64_sort_key(b: u64, daz: bool) -> u64 {
    let abs = b & 0x7fff_ffff_ffff_ffff;
    if abs > 0x7ff0_0000_0000_0000 {
        u64::MAX
    } else if abs == 0 || (daz && abs < 0x0010_0000_0000_0000) {
        1 << 63
    } else if b & (1 << 63) != 0 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// The total order of a float's bits (`-NaN < -inf < … < -0 < +0 < … < +inf < NaN`, NaNs by
/// payload), as unsigned keys: XLA's `top_k` order.
#[inline(always)]
pub(crate) fn total_order_key(b: u64, width: u32) -> u64 {
    let sign = 1u64 << (width - 1);
    let all = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    if b & sign != 0 { !b & all } else { b | sign }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (the tests need no quality, only spread).
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 16
    }

    #[test]
    fn radix_sort_is_a_stable_sort() {
        let mut seed = 7;
        for &(n, bits, range) in &[
            (0usize, 32u32, 10u64),
            (1, 32, 10),
            (100, 32, 10),
            (5000, 32, 7),
            (5000, 32, 1 << 32),
            (3000, 64, u64::MAX),
            (3000, 20, 1 << 20),
            (4000, 32, 1),
        ] {
            let items: Vec<(u64, usize)> =
                (0..n).map(|i| (lcg(&mut seed) % range.max(1), i)).collect();
            let mut want = items.clone();
            want.sort_by_key(|&(k, _)| k);
            let mut got = items.clone();
            radix_sort_by_key(&mut got, &mut Vec::new(), bits, |(k, _)| k);
            assert_eq!(got, want, "n={n} bits={bits}");
            let keys: Vec<u64> = items.iter().map(|&(k, _)| k).collect();
            let mut perm = Vec::new();
            sorting_permutation(&keys, bits, &mut perm);
            let via: Vec<(u64, usize)> = perm.iter().map(|&i| items[i as usize]).collect();
            assert_eq!(via, want, "permutation n={n} bits={bits}");
        }
    }

    /// The introsort sorts (every length around its thresholds, many ties, and a depth limit
    /// of zero through the heap sort).
    #[test]
    fn unstable_sort_sorts() {
        let mut seed = 3;
        for n in [0usize, 1, 2, 15, 16, 17, 33, 100, 1000, 5000] {
            for range in [3u64, 1 << 30] {
                let v: Vec<u64> = (0..n).map(|_| lcg(&mut seed) % range).collect();
                let mut got = v.clone();
                unstable_sort_like_xla(&mut got, &|a, b| a < b);
                let mut want = v.clone();
                want.sort();
                assert_eq!(got, want, "n={n}");
                let mut heap = v.clone();
                heap_sort(&mut heap, &|a, b| a < b);
                assert_eq!(heap, want, "heap n={n}");
            }
        }
    }

    #[test]
    fn float_keys_order_as_jax_sorts() {
        let vals = [
            f32::NEG_INFINITY,
            -1.0,
            -1e-40,
            -0.0,
            0.0,
            1e-40,
            1.0,
            f32::INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        let k = |v: f32, daz| f32_sort_key(v.to_bits(), daz);
        for daz in [false, true] {
            assert!(k(f32::NEG_INFINITY, daz) < k(-1.0, daz));
            assert_eq!(k(-0.0, daz), k(0.0, daz));
            assert_eq!(k(f32::NAN, daz), k(-f32::NAN, daz));
            assert!(k(f32::INFINITY, daz) < k(f32::NAN, daz));
            assert_eq!(k(1e-40, daz) == k(0.0, daz), daz);
            assert_eq!(k(-1e-40, daz) == k(0.0, daz), daz);
        }
        assert!(k(-1e-40, false) < k(0.0, false) && k(0.0, false) < k(1e-40, false));
        for w in vals.windows(2).take(8) {
            let d = |v: f64| f64_sort_key(v.to_bits(), false);
            assert!(d(w[0] as f64) <= d(w[1] as f64), "{w:?}");
        }
        let t = |v: f32| total_order_key(v.to_bits() as u64, 32);
        assert!(
            t(-f32::NAN) < t(f32::NEG_INFINITY)
                && t(-0.0) < t(0.0)
                && t(f32::INFINITY) < t(f32::NAN)
        );
    }
}
