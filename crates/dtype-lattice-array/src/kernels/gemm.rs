//! float32/float64 matrix products: small ones summed in XLA's order (each element's sum in
//! order of the contracted index, one fused multiply-add a step), larger ones through the
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
}

impl GemmScalar for f32 {
    const ONE: f32 = 1.0;
    #[inline(always)]
    fn fma(self, a: f32, b: f32) -> f32 {
        self.mul_add(a, b)
    }
}

impl GemmScalar for f64 {
    const ONE: f64 = 1.0;
    #[inline(always)]
    fn fma(self, a: f64, b: f64) -> f64 {
        self.mul_add(a, b)
    }
}

/// Products of at most this many multiply-adds run [`sequential`]: XLA's order for the small
/// products its CPU backend emits as loops (the conformance fixtures' sizes, bit for bit).
const SEQUENTIAL_MAX: usize = 1 << 12;

/// [`sequential_loop`], compiled for AVX2 and FMA where the CPU has them (a fused
/// multiply-add is then one instruction, not a library call).
fn sequential<T: GemmScalar>(
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
        unsafe { sequential_fma(a, a_t, b, b_t, mkn, out) };
        return;
    }
    sequential_loop(a, a_t, b, b_t, mkn, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn sequential_fma<T: GemmScalar>(
    a: &[T],
    a_t: bool,
    b: &[T],
    b_t: bool,
    mkn: (usize, usize, usize),
    out: &mut [T],
) {
    sequential_loop(a, a_t, b, b_t, mkn, out);
}

/// `out[i][j] = Σ_l a[i][l]·b[l][j]` summed in order of `l` from zero, each step one fused
/// multiply-add (as XLA's loop, whose multiply LLVM contracts into the running sum's add).
#[inline(always)]
fn sequential_loop<T: GemmScalar>(
    a: &[T],
    a_t: bool,
    b: &[T],
    b_t: bool,
    (m, k, n): (usize, usize, usize),
    out: &mut [T],
) {
    for i in 0..m {
        let row = &mut out[i * n..(i + 1) * n];
        row.fill(T::default());
        for l in 0..k {
            let x = if a_t { a[l * m + i] } else { a[i * k + l] };
            if b_t {
                for (j, c) in row.iter_mut().enumerate() {
                    *c = x.fma(b[j * k + l], *c);
                }
            } else {
                for (c, &y) in row.iter_mut().zip(&b[l * n..(l + 1) * n]) {
                    *c = x.fma(y, *c);
                }
            }
        }
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
        return sequential(a, a_t, b, b_t, (m, k, n), &mut out[..mn]);
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
            sequential(&a, a_t, &b, b_t, (m, k, n), &mut x);
            sequential_loop(&a, a_t, &b, b_t, (m, k, n), &mut y);
            assert_eq!(x, y, "a_t={a_t} b_t={b_t}");
        }
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
