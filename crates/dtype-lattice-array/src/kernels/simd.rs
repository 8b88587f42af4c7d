//! The fused elementwise loops (of [`super::fast`], `lax::elementwise::fast` and jit's chunks) compiled a second time for AVX2 and FMA
//! (8 lanes of 32 bits), chosen at run time with `is_x86_feature_detected!`; other CPUs run the
//! same loops compiled for the baseline target (SSE2 on x86-64, 4 lanes).
//!
//! [`zip_into`] and [`map_into`] apply a branch-free closure element by element, which LLVM
//! vectorises; only the target differs (bfloat16 addition runs about 1.8 times as fast in one
//! thread with AVX2 as with SSE2). The one use of intrinsics is [`zip_stream`]'s: an output
//! far larger than the caches is computed a stage of 2 KiB at a time into an aligned buffer
//! and copied out with non-temporal stores (`_mm256_stream_si256`, then `_mm_sfence`), which
//! skip the read of each output line an ordinary store makes first: a quarter less memory
//! traffic for a bfloat16 add. In the AVX2 build
//! `f64::mul_add` is one instruction; [`fused_mul_add`] tells whether the loops get it (the
//! float64 polynomials of [`super::vmath`] are only worth running where they do: elsewhere on
//! x86-64 each `mul_add` is a library call).
//!
//! The other use is [`bf16_zip`], bfloat16 `add`, `sub`, `mul`, `div`, `max` and `min`
//! written with intrinsics: the autovectorised closure flushes, tests and rounds 8 float32
//! lanes at a time (about 35 instructions); the kernel does it on lanes of 16 bits and widens
//! only for the float32 operation itself, a 64-byte line of output an iteration, streamed like
//! [`zip_stream`]'s for large outputs. One driver macro (`bf16_driver!`) is instantiated for
//! AVX-512 F+BW (32 lanes, mask registers for the comparisons and selections) and for
//! AVX2+FMA (16 lanes); [`Isa`] picks the best this CPU has. [`zip_sides`] and
//! [`zip3_sides`] run the loops on operands that are arrays or one value standing for all
//! (the fast paths' and jit's fused chunks' scalar operands).
//!
//! # Why this module may use `unsafe`
//!
//! It is in `kernels`, the one layer allowed to (`lib.rs` denies `unsafe_code` everywhere
//! else). Calling a `#[target_feature(enable = "avx2,fma")]` function is only sound on a CPU
//! that has both: each call sits right behind the `is_x86_feature_detected!` tests. The
//! streaming stores write through raw pointers: each is a 32-byte aligned stretch inside the
//! output slice (the SAFETY comments there say why); the bfloat16 kernel's loads and stores
//! too (32 bytes inside the operand and output slices, whose lengths it asserts). The tests
//! compare every lane of each path with the closure applied one element at a time, on odd
//! lengths (three operands in each arrangement of arrays and scalars too), and the streamed path at several offsets from a 32-byte boundary for 1-, 2- and
//! 4-byte outputs; the bfloat16 kernel, for each of its six operations, on every bfloat16
//! code against each of 64 codes (the special values, subnormals, overflow and underflow,
//! others) on either side, as arrays (streamed) and as scalar sides, and at odd lengths and
//! offsets.

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

/// `f()` compiled with AVX2 and FMA where this CPU has them (`mul_add` inlined into `f` is
/// one instruction there, [`fused_mul_add`]), else as it is: for a few elements' loops that
/// are not [`zip_into`]'s (jit's block instructions).
#[inline(always)]
pub(crate) fn fused<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA (checked on the line above).
        return unsafe { avx2::fused(f) };
    }
    f()
}

/// `out[i·n + j] = f(a[i], b[j], z[i·n + j])` for `n = b.len()`: a rank-one update's rows
/// (`a[i]` standing for every element of row `i`), with AVX2 and FMA where this CPU has them.
/// Rows past the shortest of `a`, `z` and `out` are left as they are.
#[inline]
pub(crate) fn rows_into<A: Copy, B: Copy, C: Copy, O>(
    a: &[A],
    b: &[B],
    z: &[C],
    out: &mut [O],
    f: impl Fn(A, B, C) -> O,
) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA (checked on the line above).
        unsafe { avx2::rows_into(a, b, z, out, f) };
        return;
    }
    rows_loop(a, b, z, out, f);
}

#[inline(always)]
fn rows_loop<A: Copy, B: Copy, C: Copy, O>(
    a: &[A],
    b: &[B],
    z: &[C],
    out: &mut [O],
    f: impl Fn(A, B, C) -> O,
) {
    let n = b.len();
    if n == 0 {
        return;
    }
    for ((&x, zr), or) in a.iter().zip(z.chunks_exact(n)).zip(out.chunks_exact_mut(n)) {
        for ((o, &y), &c) in or.iter_mut().zip(b).zip(zr) {
            *o = f(x, y, c);
        }
    }
}

/// Outputs of at least this many bytes are written by [`zip_stream`] with non-temporal
/// stores: far beyond the caches, so nothing reads them back from there, and streaming
/// saves the read of every output line that an ordinary store makes first.
pub(crate) const STREAM_MIN_BYTES: usize = 4 << 20;

/// How far ahead of its loads (in bytes of each operand) a streaming kernel asks for the
/// operands' cache lines with [`prefetch`]. With both cores computing, the hardware
/// prefetchers alone leave the loads waiting: on this machine the hint cut the 2^24-element
/// bfloat16 add and float32 → float8 cast by 15–25 % (distances of 2–4 KiB measured alike).
/// The float8 arithmetic (bound by its arithmetic) and the generic staged loop of
/// [`zip_stream`] (float32 add, bound by memory) measured no gain, and do without.
pub(crate) const PREFETCH_BYTES: usize = 3072;

/// Asks for the cache line holding byte `byte` of `v` (nothing if it is past the end): a hint,
/// which neither faults nor changes any value.
#[inline(always)]
pub(crate) fn prefetch<T>(v: &[T], byte: usize) {
    #[cfg(target_arch = "x86_64")]
    hint::<{ std::arch::x86_64::_MM_HINT_T0 }, T>(v, byte);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, byte);
}

/// Asks for every cache line holding a byte of `v[byte..byte + len]` (bytes; nothing if
/// `byte` is past the end): one test for the span, not one per line (the scatter's loop
/// asks for two spans per row, and its instructions per row decide how many rows' misses
/// are in flight). Lines are counted from the span's first line, so that a row not aligned
/// to the line has its last line asked for too.
#[inline(always)]
pub(crate) fn prefetch_span<T>(v: &[T], byte: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    span::<{ std::arch::x86_64::_MM_HINT_T0 }, T>(v, byte, len);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, byte, len);
}

/// [`prefetch_span`] of lines read once: not kept in the outer caches.
#[inline(always)]
pub(crate) fn prefetch_span_nta<T>(v: &[T], byte: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    span::<{ std::arch::x86_64::_MM_HINT_NTA }, T>(v, byte, len);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, byte, len);
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn span<const H: i32, T>(v: &[T], byte: usize, len: usize) {
    let size = std::mem::size_of_val(v);
    if byte >= size {
        return;
    }
    let first = v.as_ptr().cast::<i8>().wrapping_add(byte);
    let skew = first as usize % 64;
    let (mut at, end) = (first.wrapping_sub(skew), len.min(size - byte) + skew);
    let mut b = 0;
    while b < end {
        // SAFETY: a prefetch reads nothing into the program and never faults; the address is
        // computed without `add`'s in-bounds requirement (the line's start may precede `v`).
        unsafe { std::arch::x86_64::_mm_prefetch::<H>(at) };
        at = at.wrapping_add(64);
        b += 64;
    }
}

/// `_mm_prefetch` with hint `H` of byte `byte` of `v`, if it is inside.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn hint<const H: i32, T>(v: &[T], byte: usize) {
    if byte < std::mem::size_of_val(v) {
        // SAFETY: the address is inside `v` (checked above); a prefetch reads nothing into
        // the program and never faults.
        unsafe { std::arch::x86_64::_mm_prefetch::<H>(v.as_ptr().cast::<i8>().add(byte)) };
    }
}

/// [`zip_into`] for an output of [`STREAM_MIN_BYTES`] or more, which (with AVX2) bypasses the
/// caches: the results are staged in a small aligned buffer and copied out with
/// non-temporal stores. Smaller outputs, and other CPUs, take [`zip_into`].
#[inline]
pub(crate) fn zip_stream<A: Copy, B: Copy, O: bytemuck::Pod>(
    x: &[A],
    y: &[B],
    out: &mut [O],
    f: impl Fn(A, B) -> O,
) {
    #[cfg(target_arch = "x86_64")]
    if std::mem::size_of_val(out) >= STREAM_MIN_BYTES
        && std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
    {
        // SAFETY: the CPU has AVX2 and FMA (checked on the line above).
        unsafe { avx2::zip_stream(x, y, out, f) };
        return;
    }
    zip_into(x, y, out, f);
}

/// `out[i] = f(x[i], y[i], z[i])` over the shortest of the four, with AVX2 and FMA where this
/// CPU has them.
#[inline]
pub(crate) fn zip3_into<A: Copy, B: Copy, C: Copy, O>(
    x: &[A],
    y: &[B],
    z: &[C],
    out: &mut [O],
    f: impl Fn(A, B, C) -> O,
) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA (checked on the line above).
        unsafe { avx2::zip3_into(x, y, z, out, f) };
        return;
    }
    zip3_loop(x, y, z, out, f);
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

/// The instruction sets a kernel of this module is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// AVX-512 F and BW (32 lanes of 16 bits).
    Avx512,
    /// AVX2 and FMA (16 lanes of 16 bits).
    Avx2,
    /// The baseline target: the element-by-element loops.
    Baseline,
}

impl Isa {
    /// The best this CPU has.
    fn detected() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
            {
                return Isa::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                return Isa::Avx2;
            }
        }
        Isa::Baseline
    }

    /// Every one this CPU can run, best first (for the tests of each path).
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Isa> {
        let mut all = vec![Isa::Baseline];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                all.insert(0, Isa::Avx2);
            }
            if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
            {
                all.insert(0, Isa::Avx512);
            }
        }
        all
    }
}

/// `out[i] = f(x[i], y[i])` for the bfloat16 arithmetic `OP` of [`super::fast`] (`BinOp::ADD`, `SUB`,
/// `MUL`, `DIV`, `MAX`, `MIN`), a scalar side the same for every `i`, a side of words as long
/// as `out`. `f` is the operation one element at a time ([`super::fast::bf16_scalar`]); with
/// AVX-512 (else AVX2) the hand-written kernel [`avx512::bf16_zip`] ([`avx2::bf16_zip`])
/// computes the same bits 32 (16) lanes at a time (`f` doing the few elements at the ends),
/// streaming outputs of [`STREAM_MIN_BYTES`] or more; other CPUs run `f` through
/// [`zip_stream`] and [`map_into`].
#[inline]
pub(crate) fn bf16_zip<const OP: u8>(
    x: Side<'_, u16>,
    y: Side<'_, u16>,
    out: &mut [u16],
    f: impl Fn(u16, u16) -> u16,
) {
    bf16_zip_on::<OP>(Isa::detected(), x, y, out, f);
}

/// [`bf16_zip`] on `isa`, which the caller has checked this CPU has.
#[inline]
pub(crate) fn bf16_zip_on<const OP: u8>(
    isa: Isa,
    x: Side<'_, u16>,
    y: Side<'_, u16>,
    out: &mut [u16],
    f: impl Fn(u16, u16) -> u16,
) {
    #[cfg(target_arch = "x86_64")]
    if isa != Isa::Baseline {
        let stream = std::mem::size_of_val(out) >= STREAM_MIN_BYTES;
        macro_rules! on {
            ($xs:literal, $ys:literal, $x:expr, $y:expr) => {{
                if isa == Isa::Avx512 {
                    // SAFETY: the CPU has AVX-512 F and BW (the caller's check).
                    unsafe { avx512::bf16_zip::<OP, $xs, $ys>($x, $y, out, stream, f) };
                } else {
                    // SAFETY: the CPU has AVX2 and FMA (the caller's check).
                    unsafe { avx2::bf16_zip::<OP, $xs, $ys>($x, $y, out, stream, f) };
                }
                return;
            }};
        }
        match (x, y) {
            (Side::Words(a), Side::Words(b)) => on!(false, false, a, b),
            (Side::Words(a), Side::Scalar(s)) => on!(false, true, a, &[s]),
            (Side::Scalar(s), Side::Words(b)) => on!(true, false, &[s], b),
            (Side::Scalar(_), Side::Scalar(_)) => {}
        }
    }
    let _ = isa;
    zip_sides(x, y, out, f);
}

/// `out[i] = f(x[i], y[i])` on two [`Side`]s (a scalar side the same for every `i`): the
/// generic loops, [`zip_stream`] for two arrays, [`map_into`] for an array and a scalar.
pub(crate) fn zip_sides<W: Copy, O: bytemuck::Pod>(
    x: Side<'_, W>,
    y: Side<'_, W>,
    out: &mut [O],
    f: impl Fn(W, W) -> O,
) {
    match (x, y) {
        (Side::Words(a), Side::Words(b)) => zip_stream(a, b, out, f),
        (Side::Words(a), Side::Scalar(s)) => map_into(a, out, |a| f(a, s)),
        (Side::Scalar(s), Side::Words(b)) => map_into(b, out, |b| f(s, b)),
        (Side::Scalar(s), Side::Scalar(t)) => out.fill_with(|| f(s, t)),
    }
}

/// [`zip_sides`] for a few elements ([`FEW`] or fewer): plain loops the caller inlines, no
/// call into vector code (whose set-up costs more than the work here).
#[inline(always)]
pub(crate) fn few_sides<W: Copy, O>(
    x: Side<'_, W>,
    y: Side<'_, W>,
    out: &mut [O],
    f: impl Fn(W, W) -> O,
) {
    match (x, y) {
        (Side::Words(a), Side::Words(b)) => {
            for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
                *o = f(a, b);
            }
        }
        (Side::Words(a), Side::Scalar(s)) => {
            for (o, &a) in out.iter_mut().zip(a) {
                *o = f(a, s);
            }
        }
        (Side::Scalar(s), Side::Words(b)) => {
            for (o, &b) in out.iter_mut().zip(b) {
                *o = f(s, b);
            }
        }
        (Side::Scalar(s), Side::Scalar(t)) => out.fill_with(|| f(s, t)),
    }
}

/// The most elements [`few_sides`] is meant for.
pub(crate) const FEW: usize = 16;

/// `out[i] = f(x[i], y[i], z[i])` on three [`Side`]s (a scalar side the same for every `i`),
/// each arrangement of arrays and scalars its own loop ([`zip3_into`], [`zip_into`],
/// [`map_into`]), so that scalars stay in registers.
pub(crate) fn zip3_sides<A: Copy, B: Copy, C: Copy, O>(
    x: Side<'_, A>,
    y: Side<'_, B>,
    z: Side<'_, C>,
    out: &mut [O],
    f: impl Fn(A, B, C) -> O,
) {
    use Side::{Scalar as S, Words as W};
    match (x, y, z) {
        (W(a), W(b), W(c)) => zip3_into(a, b, c, out, f),
        (W(a), W(b), S(c)) => zip_into(a, b, out, |a, b| f(a, b, c)),
        (W(a), S(b), W(c)) => zip_into(a, c, out, |a, c| f(a, b, c)),
        (S(a), W(b), W(c)) => zip_into(b, c, out, |b, c| f(a, b, c)),
        (W(a), S(b), S(c)) => map_into(a, out, |a| f(a, b, c)),
        (S(a), W(b), S(c)) => map_into(b, out, |b| f(a, b, c)),
        (S(a), S(b), W(c)) => map_into(c, out, |c| f(a, b, c)),
        (S(a), S(b), S(c)) => out.fill_with(|| f(a, b, c)),
    }
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
fn zip3_loop<A: Copy, B: Copy, C: Copy, O>(
    x: &[A],
    y: &[B],
    z: &[C],
    out: &mut [O],
    f: impl Fn(A, B, C) -> O,
) {
    for (((o, &a), &b), &c) in out.iter_mut().zip(x).zip(y).zip(z) {
        *o = f(a, b, c);
    }
}

#[inline(always)]
fn zip_loop<A: Copy, B: Copy, O>(x: &[A], y: &[B], out: &mut [O], f: impl Fn(A, B) -> O) {
    for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
        *o = f(a, b);
    }
}

use super::fast::Side;

/// The bfloat16 kernel of [`bf16_zip`] for one instruction set: `bf16_zip::<OP, XS, YS>(x, y,
/// out, stream, f)` computes `out[i] = f(x[i], y[i])` where `f` is the operation `OP` of
/// [`super::fast`], `LANES` lanes at a time by `$block` from `out`'s first 64-byte boundary
/// (when `stream`) or start, a whole 64-byte line of `out` an iteration (streamed lines are
/// written out whole by the write-combining buffers when all of them is filled together), `f`
/// itself on the elements before and after. `XS` (`YS`): `x` (`y`) is one word standing for
/// every element; else it has `out.len()` words. With `stream` the blocks are written with
/// non-temporal stores, fenced at the end.
#[cfg(target_arch = "x86_64")]
macro_rules! bf16_driver {
    ($features:literal, $lanes:literal, $load:ident, $store:ident, $stream:ident, $splat:ident,
     $block:ident) => {
        #[target_feature(enable = $features)]
        pub(crate) fn bf16_zip<const OP: u8, const XS: bool, const YS: bool>(
            x: &[u16],
            y: &[u16],
            out: &mut [u16],
            stream: bool,
            f: impl Fn(u16, u16) -> u16,
        ) {
            use std::arch::x86_64::_mm_sfence;
            const LANES: usize = $lanes;
            // Words of a 64-byte line.
            const LINE: usize = 32;
            let n = out.len();
            assert!(x.len() == if XS { 1 } else { n } && y.len() == if YS { 1 } else { n });
            let at = |v: &[u16], scalar: bool, i: usize| if scalar { v[0] } else { v[i] };
            let head = if stream {
                out.as_ptr().align_offset(64).min(n)
            } else {
                0
            };
            let ends = |from: usize, out: &mut [u16]| {
                for (i, o) in (from..).zip(out) {
                    *o = f(at(x, XS, i), at(y, YS, i));
                }
            };
            ends(0, &mut out[..head]);
            // The scalar sides broadcast (their flushing and tests hoisted out of the loop).
            let first = |v: &[u16]| v.first().map_or(0, |&w| w as i16);
            let (xs, ys) = ($splat(first(x)), $splat(first(y)));
            // `LANES` words from `i`: `i + LANES <= n`, and a side that is not scalar has `n`
            // words, so the bytes read from `x`, `y` and written to `out` are inside them
            // (unaligned accesses but the streaming store, whose address is `out`'s 64-byte
            // boundary `head` plus a multiple of `LANES` words, `LANES * 2` bytes).
            let block = |i: usize, out: &mut [u16]| {
                // SAFETY: as said above; the caller of this function checked the CPU's
                // features (`$features`).
                unsafe {
                    let a = if XS {
                        xs
                    } else {
                        $load(x.as_ptr().add(i).cast())
                    };
                    let b = if YS {
                        ys
                    } else {
                        $load(y.as_ptr().add(i).cast())
                    };
                    let r = $block::<OP>(a, b);
                    let dst = out.as_mut_ptr().add(i).cast();
                    if stream {
                        $stream(dst, r);
                    } else {
                        $store(dst, r);
                    }
                }
            };
            let mut i = head;
            while i + LINE <= n {
                if stream {
                    // Each operand's line `PREFETCH_BYTES` ahead (a line an iteration).
                    let ahead = 2 * i + super::PREFETCH_BYTES;
                    if !XS {
                        super::prefetch(x, ahead);
                    }
                    if !YS {
                        super::prefetch(y, ahead);
                    }
                }
                for k in 0..LINE / LANES {
                    block(i + k * LANES, out);
                }
                i += LINE;
            }
            while i + LANES <= n {
                block(i, out);
                i += LANES;
            }
            ends(i, &mut out[i..]);
            if stream {
                // The streamed stores are weakly ordered: fence them before anyone reads
                // `out`.
                _mm_sfence();
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::{
        __m512i, _mm512_add_ps, _mm512_and_si512, _mm512_andnot_si512, _mm512_castps_si512,
        _mm512_castsi512_ps, _mm512_cmpgt_epi16_mask, _mm512_div_ps, _mm512_loadu_si512,
        _mm512_mask_add_epi16, _mm512_mask_blend_epi16, _mm512_mask_mov_epi16, _mm512_max_epi16,
        _mm512_min_epi16, _mm512_mul_ps, _mm512_set1_epi16, _mm512_set1_epi32,
        _mm512_setzero_si512, _mm512_slli_epi32, _mm512_srai_epi16, _mm512_srli_epi32,
        _mm512_storeu_si512, _mm512_stream_si512, _mm512_sub_epi16, _mm512_sub_ps,
        _mm512_xor_si512,
    };

    bf16_driver!(
        "avx512f,avx512bw",
        32,
        _mm512_loadu_si512,
        _mm512_storeu_si512,
        _mm512_stream_si512,
        _mm512_set1_epi16,
        bf16_block
    );

    /// 32 bfloat16 results of `OP` on 32 pairs of operands: [`super::avx2`]'s `bf16_block`
    /// (whose documentation says how) on 32 lanes of 16 bits, with AVX-512's mask registers
    /// for its comparisons and selections.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn bf16_block<const OP: u8>(a: __m512i, b: __m512i) -> __m512i {
        use crate::kernels::fast::BinOp;
        let abs = _mm512_set1_epi16(0x7fff);
        let min_normal = _mm512_set1_epi16(0x0080);
        let inf = _mm512_set1_epi16(0x7f80);
        let (a_abs, b_abs) = (_mm512_and_si512(a, abs), _mm512_and_si512(b, abs));
        // A subnormal (or zero) keeps its sign alone.
        let flush = |v, v_abs| {
            let tiny = _mm512_cmpgt_epi16_mask(min_normal, v_abs);
            _mm512_mask_mov_epi16(v, tiny, _mm512_andnot_si512(abs, v))
        };
        let (a, b) = (flush(a, a_abs), flush(b, b_abs));
        if OP == BinOp::MAX || OP == BinOp::MIN {
            let nan = _mm512_cmpgt_epi16_mask(a_abs, inf) | _mm512_cmpgt_epi16_mask(b_abs, inf);
            let key = |v| _mm512_xor_si512(v, _mm512_and_si512(_mm512_srai_epi16::<15>(v), abs));
            let r = if OP == BinOp::MAX {
                _mm512_max_epi16(key(a), key(b))
            } else {
                _mm512_min_epi16(key(a), key(b))
            };
            return _mm512_mask_mov_epi16(key(r), nan, _mm512_set1_epi16(0x7fc0));
        }
        let b = _mm512_mask_mov_epi16(b, _mm512_cmpgt_epi16_mask(a_abs, inf), a);
        let high = _mm512_set1_epi32(0xffff_0000_u32 as i32);
        let even = |v| _mm512_castsi512_ps(_mm512_slli_epi32::<16>(v));
        let odd = |v| _mm512_castsi512_ps(_mm512_and_si512(v, high));
        let (ae, ao, be, bo) = (even(a), odd(a), even(b), odd(b));
        let (re, ro) = match OP {
            BinOp::ADD => (_mm512_add_ps(ae, be), _mm512_add_ps(ao, bo)),
            BinOp::SUB => (_mm512_sub_ps(ae, be), _mm512_sub_ps(ao, bo)),
            BinOp::MUL => (_mm512_mul_ps(ae, be), _mm512_mul_ps(ao, bo)),
            BinOp::DIV => (_mm512_div_ps(ae, be), _mm512_div_ps(ao, bo)),
            _ => unreachable!(),
        };
        let (re, ro) = (_mm512_castps_si512(re), _mm512_castps_si512(ro));
        // The odd 16-bit lanes from the second operand.
        const ODD: u32 = 0xaaaa_aaaa;
        let hi = _mm512_mask_blend_epi16(ODD, _mm512_srli_epi32::<16>(re), ro);
        let lo = _mm512_mask_blend_epi16(ODD, re, _mm512_slli_epi32::<16>(ro));
        // lo + lsb > 0x8000, as a signed comparison: lo - 0x8000 > -lsb.
        let lsb = _mm512_and_si512(hi, _mm512_set1_epi16(1));
        let up = _mm512_cmpgt_epi16_mask(
            _mm512_xor_si512(lo, _mm512_set1_epi16(i16::MIN)),
            _mm512_sub_epi16(_mm512_setzero_si512(), lsb),
        );
        let rounded = _mm512_mask_add_epi16(hi, up, hi, _mm512_set1_epi16(1));
        let hi_abs = _mm512_and_si512(hi, abs);
        let tiny = _mm512_cmpgt_epi16_mask(min_normal, hi_abs);
        let nan = _mm512_cmpgt_epi16_mask(hi_abs, inf);
        let r = _mm512_mask_mov_epi16(rounded, tiny, _mm512_andnot_si512(abs, rounded));
        _mm512_mask_mov_epi16(r, nan, _mm512_andnot_si512(_mm512_set1_epi16(0x003f), r))
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        _mm256_loadu_si256, _mm256_set1_epi16, _mm256_storeu_si256, _mm256_stream_si256,
    };

    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn fused<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn zip_into<A: Copy, B: Copy, O>(
        x: &[A],
        y: &[B],
        out: &mut [O],
        f: impl Fn(A, B) -> O,
    ) {
        super::zip_loop(x, y, out, f);
    }

    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn zip3_into<A: Copy, B: Copy, C: Copy, O>(
        x: &[A],
        y: &[B],
        z: &[C],
        out: &mut [O],
        f: impl Fn(A, B, C) -> O,
    ) {
        super::zip3_loop(x, y, z, out, f);
    }

    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn rows_into<A: Copy, B: Copy, C: Copy, O>(
        a: &[A],
        b: &[B],
        z: &[C],
        out: &mut [O],
        f: impl Fn(A, B, C) -> O,
    ) {
        super::rows_loop(a, b, z, out, f);
    }

    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn map_into<A: Copy, O>(x: &[A], out: &mut [O], f: impl Fn(A) -> O) {
        super::map_loop(x, out, f);
    }

    bf16_driver!(
        "avx2,fma",
        16,
        _mm256_loadu_si256,
        _mm256_storeu_si256,
        _mm256_stream_si256,
        _mm256_set1_epi16,
        bf16_block
    );

    /// 16 bfloat16 results of `OP` on 16 pairs of operands, bit for bit those of
    /// [`super::super::fast::bf16_scalar`]:
    ///
    /// - subnormal operands (exponent 0) are flushed to zeros of their sign in 16-bit lanes;
    /// - `MAX`, `MIN` stay in 16-bit lanes: the operands mapped to integers of the same order
    ///   (a negative one's magnitude bits flipped, so -0 < +0 as `apply` orders them), the
    ///   larger or smaller taken and mapped back; a NaN on either side gives `0x7fc0`;
    /// - `ADD`, `SUB`, `MUL`, `DIV`: where `a` is NaN `b` is replaced by `a`, so that the
    ///   instruction returns `a`'s NaN whichever operand order LLVM gives it (`nan_first!`);
    ///   the even and odd 16-bit lanes are widened to float32 in place (shifted up, or their
    ///   low halves cleared), operated on, and the results' high and low halves gathered
    ///   back into 16-bit lanes (`hi`, `lo`). Rounding to nearest even adds 1 to `hi` where
    ///   `lo + (hi & 1) > 0x8000`. A float32 result is subnormal exactly where `hi`'s
    ///   exponent is 0, so flushing after the rounding to `hi`'s sign is the scalar flush
    ///   before it (a product that rounds up to the smallest normal is flushed too); a NaN
    ///   (`hi`'s magnitude above `0x7f80`, its quiet bit set by the instruction, low half 0)
    ///   keeps its sign and `0x7fc0`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn bf16_block<const OP: u8>(
        a: std::arch::x86_64::__m256i,
        b: std::arch::x86_64::__m256i,
    ) -> std::arch::x86_64::__m256i {
        use crate::kernels::fast::BinOp;
        use std::arch::x86_64::*;
        let abs = _mm256_set1_epi16(0x7fff);
        let min_normal = _mm256_set1_epi16(0x0080);
        let inf = _mm256_set1_epi16(0x7f80);
        let (a_abs, b_abs) = (_mm256_and_si256(a, abs), _mm256_and_si256(b, abs));
        let flush = |v, v_abs| {
            let tiny = _mm256_cmpgt_epi16(min_normal, v_abs);
            _mm256_andnot_si256(_mm256_and_si256(tiny, abs), v)
        };
        let (a, b) = (flush(a, a_abs), flush(b, b_abs));
        if OP == BinOp::MAX || OP == BinOp::MIN {
            let nan = _mm256_or_si256(
                _mm256_cmpgt_epi16(a_abs, inf),
                _mm256_cmpgt_epi16(b_abs, inf),
            );
            // An involution: negative codes' magnitude bits flipped.
            let key = |v| _mm256_xor_si256(v, _mm256_and_si256(_mm256_srai_epi16::<15>(v), abs));
            let r = if OP == BinOp::MAX {
                _mm256_max_epi16(key(a), key(b))
            } else {
                _mm256_min_epi16(key(a), key(b))
            };
            return _mm256_blendv_epi8(key(r), _mm256_set1_epi16(0x7fc0), nan);
        }
        let b = _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi16(a_abs, inf));
        let high = _mm256_set1_epi32(0xffff_0000_u32 as i32);
        let even = |v| _mm256_castsi256_ps(_mm256_slli_epi32::<16>(v));
        let odd = |v| _mm256_castsi256_ps(_mm256_and_si256(v, high));
        let (ae, ao, be, bo) = (even(a), odd(a), even(b), odd(b));
        let (re, ro) = match OP {
            BinOp::ADD => (_mm256_add_ps(ae, be), _mm256_add_ps(ao, bo)),
            BinOp::SUB => (_mm256_sub_ps(ae, be), _mm256_sub_ps(ao, bo)),
            BinOp::MUL => (_mm256_mul_ps(ae, be), _mm256_mul_ps(ao, bo)),
            BinOp::DIV => (_mm256_div_ps(ae, be), _mm256_div_ps(ao, bo)),
            _ => unreachable!(),
        };
        let (re, ro) = (_mm256_castps_si256(re), _mm256_castps_si256(ro));
        let hi = _mm256_blend_epi16::<0xaa>(_mm256_srli_epi32::<16>(re), ro);
        let lo = _mm256_blend_epi16::<0xaa>(re, _mm256_slli_epi32::<16>(ro));
        // lo + lsb > 0x8000, as a signed comparison: lo - 0x8000 > -lsb.
        let lsb = _mm256_and_si256(hi, _mm256_set1_epi16(1));
        let up = _mm256_cmpgt_epi16(
            _mm256_xor_si256(lo, _mm256_set1_epi16(i16::MIN)),
            _mm256_sub_epi16(_mm256_setzero_si256(), lsb),
        );
        let rounded = _mm256_sub_epi16(hi, up);
        let hi_abs = _mm256_and_si256(hi, abs);
        let tiny = _mm256_cmpgt_epi16(min_normal, hi_abs);
        let nan = _mm256_cmpgt_epi16(hi_abs, inf);
        let clear = _mm256_or_si256(
            _mm256_and_si256(tiny, abs),
            _mm256_and_si256(nan, _mm256_set1_epi16(0x003f)),
        );
        _mm256_andnot_si256(clear, rounded)
    }

    /// Bytes of results staged in L1 between two streaming copies.
    pub(crate) const STAGE: usize = 2048;

    /// The staging buffer: aligned for 32-byte loads.
    #[repr(C, align(32))]
    struct Stage([u8; STAGE]);

    /// `zip_loop` through the staging buffer: the elements before `out`'s first 32-byte
    /// boundary and after its last whole stage are written directly, each stage in between
    /// computed into [`Stage`] and streamed to `out` 32 bytes at a time.
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn zip_stream<A: Copy, B: Copy, O: bytemuck::Pod>(
        x: &[A],
        y: &[B],
        out: &mut [O],
        f: impl Fn(A, B) -> O,
    ) {
        use std::arch::x86_64::{__m256i, _mm_sfence, _mm256_load_si256, _mm256_stream_si256};
        let n = out.len().min(x.len()).min(y.len());
        let (x, y, out) = (&x[..n], &y[..n], &mut out[..n]);
        let size = size_of::<O>();
        // In elements; usize::MAX where no element boundary is 32-byte aligned.
        let head = out.as_ptr().align_offset(32);
        if size == 0 || !STAGE.is_multiple_of(size) || head >= n {
            return super::zip_loop(x, y, out, f);
        }
        super::zip_loop(&x[..head], &y[..head], &mut out[..head], &f);
        let per = STAGE / size;
        let mut stage = Stage([0; STAGE]);
        let buf: &mut [O] = bytemuck::cast_slice_mut(&mut stage.0);
        let mut i = head;
        while i + per <= n {
            super::zip_loop(&x[i..i + per], &y[i..i + per], buf, &f);
            let src = buf.as_ptr().cast::<__m256i>();
            let dst = out[i..i + per].as_mut_ptr().cast::<__m256i>();
            for k in 0..STAGE / 32 {
                // SAFETY: `buf` is the 32-byte aligned `STAGE` bytes of `stage`, and
                // `out[i..i + per]` is `STAGE` bytes of `out` starting at a 32-byte boundary
                // (`head` is one, and `per` elements are `STAGE` bytes, a multiple of 32):
                // both pointers stay inside them and are aligned for these accesses.
                unsafe { _mm256_stream_si256(dst.add(k), _mm256_load_si256(src.add(k))) };
            }
            i += per;
        }
        super::zip_loop(&x[i..], &y[i..], &mut out[i..], &f);
        // The streamed stores are weakly ordered: fence them before anyone reads `out`.
        _mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`fused`] computes what the baseline build computes (`mul_add` rounded once either
    /// way: one instruction in the AVX2 build, a library call in the other), on products
    /// and addends that cancel, overflow, underflow to subnormals and hold NaNs.
    #[test]
    fn fused_code_computes_what_the_baseline_computes() {
        let v = [
            1.0f64,
            -1.0 - f64::EPSILON,
            1e308,
            -3e-308,
            1e-200,
            f64::NAN,
            f64::INFINITY,
            -0.0,
            0.1,
            7.5,
        ];
        let mut n = 0;
        for &a in &v {
            for &b in &v {
                for &c in &v {
                    let want = (a.mul_add(b, c), (a as f32).mul_add(b as f32, c as f32));
                    let got = fused(|| (a.mul_add(b, c), (a as f32).mul_add(b as f32, c as f32)));
                    assert_eq!(
                        (got.0.to_bits(), got.1.to_bits()),
                        (want.0.to_bits(), want.1.to_bits()),
                        "{a} {b} {c}"
                    );
                    n += 1;
                }
            }
        }
        assert_eq!(n, 1000);
    }

    /// Every lane of the dispatched paths (AVX2 where the CPU has it) and of the baseline loops
    /// against the closure applied alone, for float32 arithmetic with NaN and subnormal
    /// operands, on odd lengths; two operands and three ([`zip3_into`], [`zip3_sides`]).
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
            // Three operands: the dispatched path (AVX2 and FMA where the CPU has them) and
            // the baseline loop, a fused multiply-add of each lane.
            let zs: Vec<u32> = xs.iter().map(|z| z.rotate_right(5)).collect();
            let h = |a: u32, b: u32, c: u32| {
                let (a, b, c) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
                a.mul_add(b, c).to_bits()
            };
            zip3_into(&xs[..len], &ys[..len], &zs[..len], &mut fast, h);
            zip3_loop(&xs[..len], &ys[..len], &zs[..len], &mut base, h);
            for i in 0..len {
                let want = h(xs[i], ys[i], zs[i]);
                // NaNs compared by bits: the lanes must produce the same ones.
                assert_eq!((fast[i], base[i]), (want, want), "zip3 lane {i} of {len}");
            }
            // Rows ([`rows_into`]): each of `len / 7` rows of 7 lanes, its own first operand.
            let rows = len / 7;
            rows_into(&xs[..rows], &ys[..7], &zs[..rows * 7], &mut fast, h);
            rows_loop(&xs[..rows], &ys[..7], &zs[..rows * 7], &mut base, h);
            for i in 0..rows * 7 {
                let want = h(xs[i / 7], ys[i % 7], zs[i]);
                assert_eq!((fast[i], base[i]), (want, want), "rows lane {i} of {len}");
            }
            // Each arrangement of arrays and scalars ([`zip3_sides`]): a scalar side is the
            // first element of its operand, standing for every lane.
            for mask in 0..8u8 {
                fn side(v: &[u32], scalar: bool, len: usize) -> Side<'_, u32> {
                    if scalar {
                        Side::Scalar(v[0])
                    } else {
                        Side::Words(&v[..len])
                    }
                }
                let (a, b, c) = (
                    side(&xs, mask & 1 != 0, len),
                    side(&ys, mask & 2 != 0, len),
                    side(&zs, mask & 4 != 0, len),
                );
                zip3_sides(a, b, c, &mut fast, h);
                let at = |v: &[u32], bit: u8, i: usize| if mask & bit != 0 { v[0] } else { v[i] };
                for (i, &got) in fast.iter().enumerate() {
                    let want = h(at(&xs, 1, i), at(&ys, 2, i), at(&zs, 4, i));
                    assert_eq!(got, want, "zip3_sides {mask:03b} lane {i} of {len}");
                }
            }
        }
    }

    /// The streaming path: every lane of outputs beyond [`STREAM_MIN_BYTES`] (so that it
    /// streams), of 1-, 2- and 4-byte words, starting at offsets from a 32-byte boundary
    /// and ending in a partial stage, against the closure applied alone.
    #[test]
    fn streamed_lanes_match_the_closure_applied_alone() {
        fn check<O: bytemuck::Pod + PartialEq + std::fmt::Debug>(f: impl Fn(u32, u32) -> O) {
            let n = STREAM_MIN_BYTES / size_of::<O>() + 1003;
            let xs: Vec<u32> = (0..n as u32 + 40)
                .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 7))
                .collect();
            let ys: Vec<u32> = xs.iter().map(|y| y.rotate_left(11)).collect();
            let mut out = vec![O::zeroed(); n + 40];
            for offset in [0, 1, 2, 3, 5, 17, 31] {
                let m = n - offset;
                zip_stream(
                    &xs[offset..],
                    &ys[offset..],
                    &mut out[offset..offset + m],
                    &f,
                );
                for i in 0..m {
                    let want = f(xs[offset + i], ys[offset + i]);
                    assert_eq!(out[offset + i], want, "lane {i} at offset {offset}");
                }
            }
        }
        check(|a, b| (a ^ b) as u8);
        check(|a, b| {
            let s = f32::from_bits(a & 0xbfff_ffff) + f32::from_bits(b & 0xbfff_ffff);
            (s.to_bits() >> 16) as u16
        });
        check(|a, b| (f32::from_bits(a) * f32::from_bits(b)).to_bits());
    }

    /// bfloat16 codes the exhaustive tests pair with every code: zeros, subnormals, the
    /// smallest normals, around 1, the largest finite values, infinities, quiet and
    /// signalling NaNs of both signs, magnitudes whose products and quotients overflow or
    /// underflow (to subnormals that round up to the smallest normal), and a spread of others.
    fn bf16_band() -> Vec<u16> {
        let mut band = vec![
            0x0000, 0x8000, 0x0001, 0x807f, 0x0040, 0x0080, 0x8080, 0x0081, 0x00ff, 0x0100, 0x3f80,
            0xbf80, 0x3f7f, 0xbf7f, 0x3f81, 0x3f00, 0x4000, 0x7f7f, 0xff7f, 0x7f00, 0x7f80, 0xff80,
            0x7f81, 0xff81, 0x7fc0, 0xffc0, 0x7fff, 0xffff, 0x1f80, 0x2000, 0x5f80, 0xdf80, 0x4300,
            0xc2ff,
        ];
        let mut s = 0x2545_f491_u32;
        band.extend((0..30).map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 7) as u16
        }));
        band
    }

    /// Every lane of `bf16_zip::<OP>` against `bf16_scalar::<OP>` one element at a time.
    /// Every kernel this CPU runs ([`Isa::available`]; the baseline is the scalar form
    /// itself), lane by lane against the scalar form.
    fn check_bf16<const OP: u8>(x: Side<'_, u16>, y: Side<'_, u16>, out: &mut [u16]) {
        use crate::kernels::fast::bf16_scalar;
        let at = |s: Side<'_, u16>, i: usize| match s {
            Side::Words(w) => w[i],
            Side::Scalar(v) => v,
        };
        for isa in Isa::available().into_iter().filter(|&i| i != Isa::Baseline) {
            out.fill(0x5a5a);
            bf16_zip_on::<OP>(isa, x, y, out, bf16_scalar::<OP>);
            for (i, &o) in out.iter().enumerate() {
                let (a, b) = (at(x, i), at(y, i));
                let want = bf16_scalar::<OP>(a, b);
                assert_eq!(
                    o,
                    want,
                    "{isa:?} op {OP}: {a:#06x}, {b:#06x} in lane {i} of {}",
                    out.len()
                );
            }
        }
    }

    /// The bfloat16 kernels (AVX-512 and AVX2 where the CPU has them, and the baseline
    /// loops), lane by lane against the scalar form, for every operation: every code against
    /// each of a band of codes on either side, as arrays long enough to stream (the streamed
    /// stores) and as a scalar side; odd lengths and offsets from a 64-byte boundary,
    /// streamed and not.
    #[test]
    fn bf16_kernel_matches_the_scalar_form_on_every_code() {
        use crate::kernels::fast::BinOp;
        fn every_op<const OP: u8>() {
            let band = bf16_band();
            let every: Vec<u16> = (0..=u16::MAX).collect();
            let xs: Vec<u16> = every
                .iter()
                .flat_map(|&a| band.iter().map(move |_| a))
                .collect();
            let ys: Vec<u16> = every.iter().flat_map(|_| band.iter().copied()).collect();
            let mut out = vec![0u16; xs.len()];
            assert!(size_of_val(&out[..]) >= STREAM_MIN_BYTES);
            check_bf16::<OP>(Side::Words(&xs), Side::Words(&ys), &mut out);
            check_bf16::<OP>(Side::Words(&ys), Side::Words(&xs), &mut out);
            let mut out = vec![0u16; every.len()];
            for &b in &band {
                check_bf16::<OP>(Side::Words(&every), Side::Scalar(b), &mut out);
                check_bf16::<OP>(Side::Scalar(b), Side::Words(&every), &mut out);
            }
            // Offsets and odd lengths: unaligned operands, streamed outputs starting off a
            // 32-byte boundary, short outputs (the scalar ends alone).
            let n = STREAM_MIN_BYTES / 2 + 1003;
            let mut out = vec![0u16; n + 40];
            for offset in [0, 1, 3, 5, 17, 31] {
                let m = n - offset;
                let (x, y) = (&xs[offset..offset + m], &ys[7 + offset..7 + offset + m]);
                check_bf16::<OP>(Side::Words(x), Side::Words(y), &mut out[offset..offset + m]);
                check_bf16::<OP>(
                    Side::Words(x),
                    Side::Scalar(0x3f81),
                    &mut out[offset..][..m],
                );
                for len in [0, 1, 15, 16, 17, 31, 32, 33, 63, 65, 1001] {
                    let (x, y) = (&x[..len], &y[..len]);
                    check_bf16::<OP>(Side::Words(x), Side::Words(y), &mut out[offset..][..len]);
                    check_bf16::<OP>(Side::Scalar(0xc000), Side::Words(y), &mut out[..len]);
                }
            }
        }
        every_op::<{ BinOp::ADD }>();
        every_op::<{ BinOp::SUB }>();
        every_op::<{ BinOp::MUL }>();
        every_op::<{ BinOp::DIV }>();
        every_op::<{ BinOp::MAX }>();
        every_op::<{ BinOp::MIN }>();
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
