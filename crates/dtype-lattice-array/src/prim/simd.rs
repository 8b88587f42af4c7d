//! The fused elementwise loops of [`super::fast`] compiled a second time for AVX2 and FMA
//! (8 lanes of 32 bits), chosen at run time with `is_x86_feature_detected!`; other CPUs run the
//! same loops compiled for the baseline target (SSE2 on x86-64, 4 lanes).
//!
//! There are no intrinsics here: [`zip_into`] and [`map_into`] apply a branch-free closure
//! element by element, which LLVM vectorises; only the target differs (bfloat16 addition runs
//! about 1.8 times as fast in one thread with AVX2 as with SSE2). In the AVX2 build
//! `f64::mul_add` is one instruction; [`fused_mul_add`] tells whether the loops get it (the
//! float64 polynomials of [`super::vmath`] are only worth running where they do: elsewhere on
//! x86-64 each `mul_add` is a library call).
//!
//! # Why this module may use `unsafe`
//!
//! It is the primitives' only module allowed to (`lib.rs` denies `unsafe_code` everywhere
//! else). Calling a `#[target_feature(enable = "avx2,fma")]` function is only sound on a CPU
//! that has both: the one call sits right behind the `is_x86_feature_detected!` tests. The
//! tests compare every lane of both paths with the closure applied one element at a time, on
//! odd lengths.

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
