//! float32/float64 matrix products: small ones summed in XLA's order (each element's sum in
//! order of the contracted index, one fused multiply-add a step; float32 matrix-vector
//! products whose rows run along the contraction in XLA's eight lanes, [`row_dots`]), larger
//! ones through the
//! `gemm` crate: its kernels for AVX-512 (`x86-v4`), AVX2+FMA and SSE, chosen at run time, on
//! rayon's pool (the pool every other parallel kernel of this crate uses) for products large
//! enough to share.
//!
//! `gemm::gemm` takes raw pointers and strides; this module is the crate's one call of it,
//! behind [`matmul`], which checks every slice against the shape it is read or written as
//! before the call (the `unsafe` is that the pointers with those strides stay inside the
//! slices, which the checks establish). Tested against a plain triple loop (the reference)
//! over shapes that exercise every kernel edge, transposed operands and the threaded path.

/// The element types `gemm` computes in.
pub(crate) trait GemmScalar: Copy + Default + 'static {
    /// One, the `beta` that scales the product.
    const ONE: Self;
    /// `self * a + b` rounded once.
    fn fma(self, a: Self, b: Self) -> Self;
    /// A subnormal as a zero of its sign (XLA's flush-to-zero), others unchanged.
    fn flush(self) -> Self;
    /// `a + b` rounded once.
    fn add(self, b: Self) -> Self;
    /// The lanes XLA's matrix-vector products of this type sum in (see [`row_dots`]), if
    /// they are known.
    const LANES: Option<usize>;
}

impl GemmScalar for f32 {
    const ONE: f32 = 1.0;
    #[inline(always)]
    fn fma(self, a: f32, b: f32) -> f32 {
        self.mul_add(a, b)
    }
    #[inline(always)]
    fn flush(self) -> f32 {
        super::flush::flush32(self)
    }
    #[inline(always)]
    fn add(self, b: f32) -> f32 {
        self + b
    }
    const LANES: Option<usize> = Some(8);
}

impl GemmScalar for f64 {
    const ONE: f64 = 1.0;
    #[inline(always)]
    fn fma(self, a: f64, b: f64) -> f64 {
        self.mul_add(a, b)
    }
    #[inline(always)]
    fn flush(self) -> f64 {
        super::flush::flush64(self)
    }
    #[inline(always)]
    fn add(self, b: f64) -> f64 {
        self + b
    }
    const LANES: Option<usize> = None;
}

/// Products of at most this many multiply-adds run [`sequential`]: XLA's order for the small
/// products its CPU backend emits as loops (the conformance fixtures' sizes, bit for bit).
pub(crate) const SEQUENTIAL_MAX: usize = 1 << 12;

/// [`sequential_loop`], compiled for AVX2 and FMA where the CPU has them (a fused
/// multiply-add is then one instruction, not a library call).
fn sequential<T: GemmScalar, const FTZ: bool>(
    a: &[T],
    a_t: bool,
    b: &[T],
    b_t: bool,
    mkn: (usize, usize, usize),
    out: &mut [T],
) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA (checked on the line above).
        unsafe { sequential_fma::<T, FTZ>(a, a_t, b, b_t, mkn, out) };
        return;
    }
    sequential_loop::<T, FTZ>(a, a_t, b, b_t, mkn, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn sequential_fma<T: GemmScalar, const FTZ: bool>(
    a: &[T],
    a_t: bool,
    b: &[T],
    b_t: bool,
    mkn: (usize, usize, usize),
    out: &mut [T],
) {
    sequential_loop::<T, FTZ>(a, a_t, b, b_t, mkn, out);
}

/// `out[i][j] = Σ_l a[i][l]·b[l][j]` summed in order of `l` from zero, each step one fused
/// multiply-add (as XLA's loop, whose multiply LLVM contracts into the running sum's add);
/// with `FTZ`, each result written flushed to zero where subnormal.
#[inline(always)]
fn sequential_loop<T: GemmScalar, const FTZ: bool>(
    a: &[T],
    a_t: bool,
    b: &[T],
    b_t: bool,
    (m, k, n): (usize, usize, usize),
    out: &mut [T],
) {
    // XLA's matrix-vector products whose matrix rows run along the contraction.
    if let Some(lanes) = T::LANES
        && k % lanes == 0
        && k > 0
    {
        if m == 1 && b_t && n % lanes == 0 {
            return row_dots::<T, FTZ>(b, a, k, out);
        }
        if n == 1 && !a_t && m % lanes == 0 {
            return row_dots::<T, FTZ>(a, b, k, out);
        }
    }
    // The transpositions as constants: the loops below are compiled once per layout, with no
    // test of a flag in their inner steps (measured: 67 ns → 40 ns for a 1×32 by 32×32).
    match (a_t, b_t) {
        (false, false) => columns::<T, FTZ, false, false>(a, b, (m, k, n), out),
        (false, true) => columns::<T, FTZ, false, true>(a, b, (m, k, n), out),
        (true, false) => columns::<T, FTZ, true, false>(a, b, (m, k, n), out),
        (true, true) => columns::<T, FTZ, true, true>(a, b, (m, k, n), out),
    }
}

/// [`sequential_loop`]'s in-order sums for the layout `A_T`, `B_T`.
#[inline(always)]
fn columns<T: GemmScalar, const FTZ: bool, const A_T: bool, const B_T: bool>(
    a: &[T],
    b: &[T],
    (m, k, n): (usize, usize, usize),
    out: &mut [T],
) {
    for i in 0..m {
        let row = &mut out[i * n..(i + 1) * n];
        // Columns in blocks whose sums stay in registers over the whole contraction (the
        // same fused steps in the same order as the loop below, which finishes the rest).
        let mut j0 = 0;
        while j0 + 32 <= n {
            block::<T, 32, FTZ, A_T, B_T>(a, b, (m, k, n), i, j0, &mut row[j0..j0 + 32]);
            j0 += 32;
        }
        while j0 + 8 <= n {
            block::<T, 8, FTZ, A_T, B_T>(a, b, (m, k, n), i, j0, &mut row[j0..j0 + 8]);
            j0 += 8;
        }
        let row = &mut row[j0..];
        row.fill(T::default());
        for l in 0..k {
            let x = if A_T { a[l * m + i] } else { a[i * k + l] };
            if B_T {
                for (j, c) in row.iter_mut().enumerate() {
                    *c = x.fma(b[(j0 + j) * k + l], *c);
                }
            } else {
                for (c, &y) in row.iter_mut().zip(&b[l * n + j0..(l + 1) * n]) {
                    *c = x.fma(y, *c);
                }
            }
        }
        if FTZ {
            for c in row.iter_mut() {
                *c = c.flush();
            }
        }
    }
}

/// `out[r] = Σ_l rows[r][l]·v[l]` for row-major `rows` of `k` elements, as XLA's CPU
/// backend emits a float32 matrix-vector product whose matrix rows run along the contraction
/// (the rows and `k` multiples of 8): eight lanes, lane `i` the fused chain of the elements
/// `i, i + 8, i + 16, …` from zero, then summed in adjacent pairs, `((l₀ + l₁) + (l₂ + l₃)) +
/// ((l₄ + l₅) + (l₆ + l₇))`. (Measured against JAX 0.10.2 on CPU for 8 to 128 rows of 8 to
/// 256 elements, batched or not; other shapes are emitted otherwise and keep the in-order
/// loop.)
#[inline(always)]
fn row_dots<T: GemmScalar, const FTZ: bool>(rows: &[T], v: &[T], k: usize, out: &mut [T]) {
    const L: usize = 8;
    for (o, row) in out.iter_mut().zip(rows.chunks_exact(k)) {
        let mut acc = [T::default(); L];
        for (xs, ys) in row.chunks_exact(L).zip(v.chunks_exact(L)) {
            for ((c, &x), &y) in acc.iter_mut().zip(xs).zip(ys) {
                *c = x.fma(y, *c);
            }
        }
        let [a, b, c, d, e, f, g, h] = acc;
        let s = a.add(b).add(c.add(d)).add(e.add(f).add(g.add(h)));
        *o = if FTZ { s.flush() } else { s };
    }
}

/// Columns `j0..j0 + W` of row `i` of the product, their sums in registers:
/// [`sequential_loop`]'s steps for those elements (`b` row-major, or read transposed).
#[inline(always)]
fn block<T: GemmScalar, const W: usize, const FTZ: bool, const A_T: bool, const B_T: bool>(
    a: &[T],
    b: &[T],
    (m, k, n): (usize, usize, usize),
    i: usize,
    j0: usize,
    out: &mut [T],
) {
    let mut acc = [T::default(); W];
    for l in 0..k {
        let x = if A_T { a[l * m + i] } else { a[i * k + l] };
        if B_T {
            for (jj, c) in acc.iter_mut().enumerate() {
                *c = x.fma(b[(j0 + jj) * k + l], *c);
            }
        } else {
            let ys: &[T; W] = b[l * n + j0..l * n + j0 + W]
                .try_into()
                .expect("a block of W columns");
            for (c, &y) in acc.iter_mut().zip(ys) {
                *c = x.fma(y, *c);
            }
        }
    }
    for (o, c) in out.iter_mut().zip(acc) {
        *o = if FTZ { c.flush() } else { c };
    }
}

/// `out = a · b` for a row-major `m×k` `a` (or `k×m` when `a_t`: read transposed) and a
/// row-major `k×n` `b` (or `n×k` when `b_t`), into a row-major `m×n` `out` (never read first:
/// any contents are overwritten).
///
/// # Panics
/// When a slice is shorter than its shape: callers pass operands of exactly the shapes they
/// name (a violated check is a bug in the caller, never an out-of-bounds access).
pub(crate) fn matmul<T: GemmScalar>(
    (a, a_t): (&[T], bool),
    (b, b_t): (&[T], bool),
    (m, k, n): (usize, usize, usize),
    out: &mut [T],
) {
    let (mk, kn, mn) = (
        m.checked_mul(k).expect("m·k fits"),
        k.checked_mul(n).expect("k·n fits"),
        m.checked_mul(n).expect("m·n fits"),
    );
    assert!(a.len() >= mk && b.len() >= kn && out.len() >= mn);
    if mn == 0 {
        return;
    }
    if k == 0 {
        out[..mn].fill(T::default());
        return;
    }
    if mn.saturating_mul(k) <= SEQUENTIAL_MAX {
        return sequential::<T, false>(a, a_t, b, b_t, (m, k, n), &mut out[..mn]);
    }
    // (column stride, row stride) of each matrix as the product reads it.
    let (a_cs, a_rs) = if a_t { (m, 1) } else { (1, k) };
    let (b_cs, b_rs) = if b_t { (k, 1) } else { (1, n) };
    let s = |x: usize| x as isize;
    // SAFETY: `a` holds `m·k` elements and every index `i·a_rs + l·a_cs` (i < m, l < k) is
    // below `m·k` for either layout; likewise `b` (`k·n`) and `out` (`m·n`, row stride `n`),
    // all checked above. `out` is exclusively borrowed and does not alias `a` or `b` (shared
    // borrows). `read_dst = false`: `out`'s old contents are never read.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            1,
            s(n),
            false,
            a.as_ptr(),
            s(a_cs),
            s(a_rs),
            b.as_ptr(),
            s(b_cs),
            s(b_rs),
            T::default(),
            T::ONE,
            false,
            false,
            false,
            gemm::Parallelism::Rayon(0),
        );
    }
}

/// [`matmul`] as XLA's CPU code writes it: every result flushed to zero where subnormal
/// (the operands are the caller's to flush), in the small products' loop as it stores them.
///
/// # Panics
/// As [`matmul`].
pub(crate) fn matmul_ftz<T: GemmScalar>(
    (a, a_t): (&[T], bool),
    (b, b_t): (&[T], bool),
    (m, k, n): (usize, usize, usize),
    out: &mut [T],
) {
    let mn = m.checked_mul(n).expect("m·n fits");
    if k > 0 && mn.saturating_mul(k) <= SEQUENTIAL_MAX {
        assert!(a.len() >= m * k && b.len() >= k * n && out.len() >= mn);
        return sequential::<T, true>(a, a_t, b, b_t, (m, k, n), &mut out[..mn]);
    }
    matmul((a, a_t), (b, b_t), (m, k, n), out);
    for c in &mut out[..mn] {
        *c = c.flush();
    }
}

/// `out[i][j] = a[i]·b[j]` flushed to zero where subnormal: XLA's multiply for a product
/// contracting one element, `out` row-major `a.len() × b.len()`.
///
/// # Panics
/// When `out` is shorter than `a.len()·b.len()`.
pub(crate) fn outer_ftz<T: GemmScalar + std::ops::Mul<Output = T>>(
    a: &[T],
    b: &[T],
    out: &mut [T],
) {
    assert!(out.len() >= a.len().saturating_mul(b.len()));
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked on the line above).
        unsafe { outer_avx2(a, b, out) };
        return;
    }
    outer_loop(a, b, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn outer_avx2<T: GemmScalar + std::ops::Mul<Output = T>>(a: &[T], b: &[T], out: &mut [T]) {
    outer_loop(a, b, out);
}

#[inline(always)]
fn outer_loop<T: GemmScalar + std::ops::Mul<Output = T>>(a: &[T], b: &[T], out: &mut [T]) {
    if b.is_empty() {
        return;
    }
    for (&x, row) in a.iter().zip(out.chunks_exact_mut(b.len())) {
        for (o, &y) in row.iter_mut().zip(b) {
            *o = (x * y).flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(
        (a, a_t): (&[f64], bool),
        (b, b_t): (&[f64], bool),
        (m, k, n): (usize, usize, usize),
    ) -> Vec<f64> {
        let mut out = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                out[i * n + j] = (0..k)
                    .map(|l| {
                        let x = if a_t { a[l * m + i] } else { a[i * k + l] };
                        let y = if b_t { b[j * k + l] } else { b[l * n + j] };
                        x * y
                    })
                    .sum();
            }
        }
        out
    }

    /// Small integers, so that every product and sum is exact in float32 and float64 and any
    /// order of summation agrees with the reference bit for bit.
    fn values(len: usize, seed: usize) -> Vec<f64> {
        (0..len)
            .map(|i| ((i * 7 + seed * 3) % 11) as f64 - 5.0)
            .collect()
    }

    #[test]
    fn products_agree_with_the_reference_for_every_shape_and_layout() {
        let shapes = [
            (1, 1, 1),
            (1, 7, 1),
            (3, 5, 4),
            (17, 33, 9),
            (48, 1, 48),
            (1, 32, 32),
            (2, 9, 45),
            (1, 8, 72),
            (2, 300, 3),
            (129, 65, 31),
            // Large enough for gemm's threaded path on rayon's pool.
            (200, 150, 170),
        ];
        for &(m, k, n) in &shapes {
            for (a_t, b_t) in [(false, false), (true, false), (false, true), (true, true)] {
                let (a, b) = (values(m * k, 1), values(k * n, 2));
                let want = reference((&a, a_t), (&b, b_t), (m, k, n));
                let mut out64 = vec![f64::NAN; m * n];
                matmul((&a, a_t), (&b, b_t), (m, k, n), &mut out64);
                assert_eq!(out64, want, "f64 {m}x{k}x{n} a_t={a_t} b_t={b_t}");
                let (a32, b32): (Vec<f32>, Vec<f32>) = (
                    a.iter().map(|&x| x as f32).collect(),
                    b.iter().map(|&x| x as f32).collect(),
                );
                let mut out32 = vec![f32::NAN; m * n];
                matmul((&a32, a_t), (&b32, b_t), (m, k, n), &mut out32);
                let want32: Vec<f32> = want.iter().map(|&x| x as f32).collect();
                assert_eq!(out32, want32, "f32 {m}x{k}x{n} a_t={a_t} b_t={b_t}");
            }
        }
    }

    /// Small products sum in order with one rounding a step (XLA's loop): `1·(-1)` then
    /// `(1 + e)(1 - e)` added in one fused step is `-e²`, where rounding the product first
    /// gives 0.
    #[test]
    fn small_products_fuse_each_step_in_order() {
        let e = f32::EPSILON;
        let mut out = [f32::NAN];
        matmul(
            (&[1.0, 1.0 + e], false),
            (&[-1.0, 1.0 - e], false),
            (1, 2, 1),
            &mut out,
        );
        assert_eq!(out, [-e * e]);
        let e = f64::EPSILON;
        let mut out = [f64::NAN; 2];
        let b = [-1.0, 2.0, 1.0 - e, 0.5];
        matmul((&[1.0, 1.0 + e], false), (&b, false), (1, 2, 2), &mut out);
        assert_eq!(out, [-e * e, 2.5 + 0.5 * e]);
        // The loop compiled for the baseline target (fused multiply-adds by the library)
        // computes the bits of the dispatched one, in every layout.
        let (m, k, n) = (7, 13, 5);
        let a: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i as f32 * 0.11).cos()).collect();
        for (a_t, b_t) in [(false, false), (true, false), (false, true), (true, true)] {
            let (mut x, mut y) = (vec![0f32; m * n], vec![1f32; m * n]);
            sequential::<f32, false>(&a, a_t, &b, b_t, (m, k, n), &mut x);
            sequential_loop::<f32, false>(&a, a_t, &b, b_t, (m, k, n), &mut y);
            assert_eq!(x, y, "a_t={a_t} b_t={b_t}");
        }
    }

    /// Every element is its own in-order chain of fused multiply-adds from zero, whichever
    /// register block (32 or 8 columns) or remainder computes it.
    #[test]
    fn register_blocks_sum_each_element_in_order() {
        fn chain(
            a: &[f32],
            a_t: bool,
            b: &[f32],
            b_t: bool,
            (m, k, n): (usize, usize, usize),
        ) -> Vec<f32> {
            let mut out = Vec::with_capacity(m * n);
            for i in 0..m {
                for j in 0..n {
                    out.push((0..k).fold(0f32, |c, l| {
                        let x = if a_t { a[l * m + i] } else { a[i * k + l] };
                        let y = if b_t { b[j * k + l] } else { b[l * n + j] };
                        x.mul_add(y, c)
                    }));
                }
            }
            out
        }
        for (m, k, n) in [
            (1, 32, 32),
            (2, 7, 45),
            (1, 8, 72),
            (3, 5, 8),
            (2, 3, 7),
            (1, 64, 40),
        ] {
            let a: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.731).sin() * 3.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| (i as f32 * 0.173).cos()).collect();
            for (a_t, b_t) in [(false, false), (true, false), (false, true), (true, true)] {
                if m == 1 && b_t && k % 8 == 0 && n % 8 == 0 {
                    // XLA's matrix-vector order (`row_dots`, checked by the jaxpr corpus).
                    continue;
                }
                let mut out = vec![f32::NAN; m * n];
                matmul((&a, a_t), (&b, b_t), (m, k, n), &mut out);
                let want = chain(&a, a_t, &b, b_t, (m, k, n));
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&out), bits(&want), "{m}x{k}x{n} a_t={a_t} b_t={b_t}");
            }
        }
    }

    /// The flushing forms write what the plain ones write, subnormal results as zeros of
    /// their sign, in the register blocks, the remainder and the outer product alike.
    #[test]
    fn flushing_products_flush_exactly_the_subnormal_results() {
        let tiny = f32::MIN_POSITIVE;
        for (m, k, n) in [(1, 4, 45), (2, 3, 9), (1, 1, 33)] {
            let a: Vec<f32> = (0..m * k)
                .map(|i| if i % 3 == 0 { -tiny } else { tiny })
                .collect();
            let b: Vec<f32> = (0..k * n)
                .map(|i| [0.5, -0.25, 0.125, 0.0625][i % 4])
                .collect();
            for (a_t, b_t) in [(false, false), (true, false), (false, true)] {
                let (mut plain, mut ftz) = (vec![0f32; m * n], vec![0f32; m * n]);
                matmul((&a, a_t), (&b, b_t), (m, k, n), &mut plain);
                matmul_ftz((&a, a_t), (&b, b_t), (m, k, n), &mut ftz);
                assert!(plain.iter().any(|x| x.is_subnormal()), "{m}x{k}x{n}");
                let want: Vec<u32> = plain.iter().map(|x| x.flush().to_bits()).collect();
                assert_eq!(ftz.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want);
            }
        }
        let (a, b) = ([tiny, -1.0, -tiny], [0.5f32, 2.0, -0.125, 1.0]);
        let mut out = [f32::NAN; 12];
        outer_ftz(&a, &b, &mut out);
        let want: Vec<u32> = a
            .iter()
            .flat_map(|&x| b.iter().map(move |&y| (x * y).flush().to_bits()))
            .collect();
        assert_eq!(out.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want);
        assert!(out.contains(&0.0) && out.iter().any(|x| x.to_bits() == 0x8000_0000));
    }

    #[test]
    fn an_empty_contraction_writes_zeros_and_an_empty_result_nothing() {
        let mut out = vec![f32::NAN; 6];
        matmul((&[], false), (&[], false), (2, 0, 3), &mut out);
        assert_eq!(out, [0.0; 6]);
        let mut none: Vec<f64> = vec![];
        matmul((&[], false), (&[1.0; 10], false), (0, 2, 5), &mut none);
        assert!(none.is_empty());
    }

    #[test]
    #[should_panic]
    fn a_short_operand_is_refused_before_the_call() {
        let mut out = vec![0.0f32; 4];
        matmul((&[1.0; 3], false), (&[1.0; 4], false), (2, 2, 2), &mut out);
    }
}
