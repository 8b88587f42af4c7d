//! The fused loops of the hottest elementwise operations, on words: float32 and bfloat16
//! `add`, `sub`, `mul`, `div`, `max` and `min` (load, flush subnormals, operate, flush, round
//! once: XLA's CPU arithmetic with denormals off), float32 comparisons, `neg` and `abs`, the
//! float32 functions of [`super::vmath`], and the bit operations and logical shifts of words.
//! Each writes `out` from two [`Side`]s (the words of an operand as long as `out`, or one word
//! standing for every element); [`par_zip`] and [`par_map`] split an output across the cores
//! for large arrays. The caller (`lax::elementwise::fast`, jit's fused chunks) owns the
//! buffers; the tests there compare every path with the generic kernel, bit for bit.

use std::sync::OnceLock;

use super::flush::flush32 as flush;
use super::math::Fn1;
use super::simd;

/// Below this many elements one thread does the work.
pub(crate) const PARALLEL_MIN: usize = 1 << 16;

/// The binary float operations of the fused loops. Their `u8` codes (the associated
/// constants) are the const-generic parameter of the loops and SIMD kernels, so that each
/// operation is its own loop with no branch on it inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum BinOp {
    /// `add`.
    Add,
    /// `sub`.
    Sub,
    /// `mul`.
    Mul,
    /// `max` (NaN propagates; `+0` above `-0`).
    Max,
    /// `min` (NaN propagates; `-0` below `+0`).
    Min,
    /// `div`.
    Div,
}

impl BinOp {
    /// [`BinOp::Add`]'s code.
    pub(crate) const ADD: u8 = BinOp::Add as u8;
    /// [`BinOp::Sub`]'s code.
    pub(crate) const SUB: u8 = BinOp::Sub as u8;
    /// [`BinOp::Mul`]'s code.
    pub(crate) const MUL: u8 = BinOp::Mul as u8;
    /// [`BinOp::Max`]'s code.
    pub(crate) const MAX: u8 = BinOp::Max as u8;
    /// [`BinOp::Min`]'s code.
    pub(crate) const MIN: u8 = BinOp::Min as u8;
    /// [`BinOp::Div`]'s code.
    pub(crate) const DIV: u8 = BinOp::Div as u8;
}

/// `r`, the IEEE result of a binary operation on `a` and `b`, with x86's choice among NaN
/// operands made explicit: the first NaN operand, quieted (`a + a` quiets `a`). LLVM commutes
/// float addition and multiplication, so the hardware's own choice would depend on codegen
/// (XLA's results show the first operand's NaN: float8_e3m4 `add(+NaN, -NaN)` is +NaN).
macro_rules! nan_first {
    ($a:expr, $b:expr, $r:expr) => {{
        let (a, b) = ($a, $b);
        if a.is_nan() {
            a + a
        } else if b.is_nan() {
            b + b
        } else {
            $r
        }
    }};
}
pub(crate) use nan_first;

#[inline(always)]
fn apply<const OP: u8, F: super::math::Float>(a: F, b: F) -> F {
    match OP {
        BinOp::ADD => nan_first!(a, b, a + b),
        BinOp::SUB => nan_first!(a, b, a - b),
        BinOp::MUL => nan_first!(a, b, a * b),
        BinOp::DIV => nan_first!(a, b, a / b),
        BinOp::MAX => {
            if a.is_nan() || b.is_nan() {
                F::NAN
            } else if a > b || (a == b && !a.is_sign_negative()) {
                a
            } else {
                b
            }
        }
        _ => {
            if a.is_nan() || b.is_nan() {
                F::NAN
            } else if a < b || (a == b && a.is_sign_negative()) {
                a
            } else {
                b
            }
        }
    }
}

/// How many threads large arrays are split across (the cores, asked once).
fn threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |t| t.get().min(8)))
}

/// An operand of a fast binary operation: the words of an array of the output's shape, or one
/// word standing for every element (a 0-d operand, or any of one element, broadcast).
#[derive(Clone, Copy)]
pub(crate) enum Side<'a, W> {
    /// One word per output element.
    Words(&'a [W]),
    /// One word for every element.
    Scalar(W),
}

impl<W> Side<'_, W> {
    /// How many elements the two sides give: the shorter array's, 1 for two scalars.
    pub(crate) fn len_with(&self, other: &Side<'_, W>) -> usize {
        match (self, other) {
            (Side::Words(a), Side::Words(b)) => a.len().min(b.len()),
            (Side::Words(a), Side::Scalar(_)) | (Side::Scalar(_), Side::Words(a)) => a.len(),
            (Side::Scalar(_), Side::Scalar(_)) => 1,
        }
    }
}

/// `part(x, y, out)` over `out` split across the cores for large outputs: each call gets a
/// stretch of the output and the operands' words for it (a scalar side as it is).
pub(crate) fn par_zip<W: Copy + Send + Sync, O: Send>(
    x: Side<'_, W>,
    y: Side<'_, W>,
    out: &mut [O],
    part: impl Fn(Side<'_, W>, Side<'_, W>, &mut [O]) + Sync,
) {
    let n = out.len();
    // Output elements `start..start + out.len()`.
    let part = |start: usize, out: &mut [O]| {
        let m = out.len();
        let cut = |s| match s {
            Side::Words(a) => Side::Words(&a[start..start + m]),
            scalar => scalar,
        };
        part(cut(x), cut(y), out);
    };
    let threads = if n < PARALLEL_MIN { 1 } else { threads() };
    if threads < 2 {
        part(0, out);
        return;
    }
    let chunk = n.div_ceil(threads);
    // On rayon's pool, as the jit plan's fused blocks: one set of threads for all parallel
    // work (threads of several pools spinning at once fight for the cores).
    rayon::scope(|s| {
        for (i, o) in out.chunks_mut(chunk).enumerate() {
            let part = &part;
            s.spawn(move |_| part(i * chunk, o));
        }
    });
}

/// `f(x chunk, out chunk)` over `out` (as long as `x`), split across the cores for large
/// arrays.
pub(crate) fn par_map<W: Sync, O: Send>(x: &[W], out: &mut [O], f: impl Fn(&[W], &mut [O]) + Sync) {
    let n = x.len();
    let threads = if n < PARALLEL_MIN { 1 } else { threads() };
    if threads < 2 {
        f(x, out);
        return;
    }
    let chunk = n.div_ceil(threads);
    rayon::scope(|s| {
        for (o, a) in out.chunks_mut(chunk).zip(x.chunks(chunk)) {
            let f = &f;
            s.spawn(move |_| f(a, o));
        }
    });
}

/// A float32's bits with a subnormal flushed to a zero of its sign, unless `keep` is all ones.
#[inline(always)]
fn flush_bits(b: u32, keep: u32) -> u32 {
    let keep = if b & 0x7f80_0000 == 0 {
        keep | 0x8000_0000
    } else {
        u32::MAX
    };
    b & keep
}

/// A float32 result as bfloat16, rounding to nearest even; NaN keeps its sign with the
/// canonical payload.
#[inline(always)]
pub(crate) fn to_bf16(r: f32) -> u16 {
    let bits = r.to_bits();
    if r.is_nan() {
        ((bits >> 16) & 0x8000) as u16 | 0x7fc0
    } else {
        let round = 0x7fff + ((bits >> 16) & 1);
        (bits.wrapping_add(round) >> 16) as u16
    }
}

/// float32 `neg` (flips the sign bit) or `abs` (clears it) on words: bit operations, so
/// subnormals are kept.
pub(crate) fn sign_into(neg: bool, x: &[u32], out: &mut [u32]) {
    sign_words(neg, 0x8000_0000, x, out);
}

/// [`sign_into`] for float64.
pub(crate) fn sign64_into(neg: bool, x: &[u64], out: &mut [u64]) {
    sign_words(neg, 1 << 63, x, out);
}

fn sign_words<W>(neg: bool, sign: W, x: &[W], out: &mut [W])
where
    W: Copy
        + std::ops::BitXor<Output = W>
        + std::ops::BitAnd<Output = W>
        + std::ops::Not<Output = W>,
{
    if neg {
        simd::map_into(x, out, |w| w ^ sign);
    } else {
        simd::map_into(x, out, |w| w & !sign);
    }
}

/// The float32 function `f` of [`super::vmath`] on words (false, nothing written, where it has
/// no vectorised form): XLA's float32 `sin` and `tanh` return subnormal arguments as they are
/// (no flushing in or out), the others flush.
pub(crate) fn f32_fn_into(f: Fn1, x: &[u32], out: &mut [u32]) -> bool {
    if f == Fn1::ErfInv {
        // Giles' polynomial on blocks ([`super::erfinv::erf_inv_f32_slice`]: the scalar
        // function's bits), operands and results flushed.
        for (xs, os) in x.chunks(1024).zip(out.chunks_mut(1024)) {
            let mut v = [0f32; 1024];
            let v = &mut v[..xs.len()];
            for (a, &w) in v.iter_mut().zip(xs) {
                *a = f32::from_bits(flush_bits(w, 0));
            }
            super::erfinv::erf_inv_f32_slice(v);
            for (o, r) in os.iter_mut().zip(v.iter()) {
                *o = flush_bits(r.to_bits(), 0);
            }
        }
        return true;
    }
    let keep = if matches!(f, Fn1::Sin | Fn1::Tanh) {
        u32::MAX
    } else {
        0
    };
    let io = super::vmath::Io {
        load: move |w| f32::from_bits(flush_bits(w, keep)),
        store: move |r: f32| flush_bits(r.to_bits(), keep),
        stored_nan: |o| o & 0x7fff_ffff > 0x7f80_0000,
    };
    super::vmath::map(f, x, out, io)
}

/// The bfloat16 function `f` of [`super::vmath`] on words (flushed in and out, rounded once);
/// false, nothing written, where it has no vectorised form.
pub(crate) fn bf16_fn_into(f: Fn1, x: &[u16], out: &mut [u16]) -> bool {
    let io = super::vmath::Io {
        load: |w| flush(f32::from_bits(u32::from(w) << 16)),
        store: |r| to_bf16(flush(r)),
        stored_nan: |o| o & 0x7fff > 0x7f80,
    };
    super::vmath::map(f, x, out, io)
}

/// One float32 element of `OP` on words: flush, operate, flush.
#[inline(always)]
pub(crate) fn f32_op<const OP: u8>(a: u32, b: u32) -> u32 {
    let r = apply::<OP, f32>(flush(f32::from_bits(a)), flush(f32::from_bits(b)));
    flush(r).to_bits()
}

/// One float64 element of `OP` on words: flush, operate, flush.
#[inline(always)]
pub(crate) fn f64_op<const OP: u8>(a: u64, b: u64) -> u64 {
    use super::flush::flush64;
    let r = apply::<OP, f64>(flush64(f64::from_bits(a)), flush64(f64::from_bits(b)));
    flush64(r).to_bits()
}

/// `fn $name(x, y, out)` and `fn $word(x, y)` (one element): `integer_pow(x, y)` on float
/// words by JAX's square-and-multiply ([`super::math::square_and_multiply`]), each product
/// flushed as XLA's arithmetic is, a negative power the reciprocal of the product; the power
/// 1 is the operand's bits (JAX lowers it to its operand).
macro_rules! integer_pow_into {
    ($(#[$doc:meta])* $name:ident, $word:ident, $w:ty, $f:ty, $flush:path, $op:ident, $one:expr) => {
        $(#[$doc])*
        pub(crate) fn $name(x: &[$w], y: i64, out: &mut [$w]) {
            if y == 1 {
                let n = out.len().min(x.len());
                out[..n].copy_from_slice(&x[..n]);
                return;
            }
            for (o, &x) in out.iter_mut().zip(x) {
                *o = $word(x, y);
            }
        }

        /// One element of the function above.
        #[inline(always)]
        pub(crate) fn $word(x: $w, y: i64) -> $w {
            if y == 1 {
                return x;
            }
            let x = $flush(<$f>::from_bits(x)).to_bits();
            let mul = |a: &$w, b: &$w| $op::<{ BinOp::MUL }>(*a, *b);
            match super::math::square_and_multiply(x, y, mul) {
                None => $one,
                Some(a) if y < 0 => $op::<{ BinOp::DIV }>($one, a),
                Some(a) => a,
            }
        }
    };
}
integer_pow_into!(
    /// float32 [`integer_pow_into`].
    integer_pow32, integer_pow32_word, u32, f32, flush, f32_op, 1f32.to_bits()
);
integer_pow_into!(
    /// float64 [`integer_pow_into`].
    integer_pow64, integer_pow64_word, u64, f64, super::flush::flush64, f64_op, 1f64.to_bits()
);

/// `fn $name(op, a, b, out)`: `add`, `sub`, `mul`, `div`, `max` or `min` of two sides of
/// words into `out`, each element by `$op`.
macro_rules! float_into {
    ($(#[$doc:meta])* $name:ident, $w:ty, $op:ident) => {
        $(#[$doc])*
        pub(crate) fn $name(op: BinOp, a: Side<'_, $w>, b: Side<'_, $w>, out: &mut [$w]) {
            use simd::zip_sides as zip;
            match op {
                BinOp::Add => zip(a, b, out, $op::<{ BinOp::ADD }>),
                BinOp::Sub => zip(a, b, out, $op::<{ BinOp::SUB }>),
                BinOp::Mul => zip(a, b, out, $op::<{ BinOp::MUL }>),
                BinOp::Div => zip(a, b, out, $op::<{ BinOp::DIV }>),
                BinOp::Max => zip(a, b, out, $op::<{ BinOp::MAX }>),
                BinOp::Min => zip(a, b, out, $op::<{ BinOp::MIN }>),
            }
        }
    };
}
float_into!(
    /// `add`, `sub`, `mul`, `div`, `max` or `min` of float32 sides into `out`.
    f32_into, u32, f32_op
);
float_into!(
    /// [`f32_into`] for float64 (XLA's CPU arithmetic with denormals off).
    f64_into, u64, f64_op
);

/// [`f32_into`] of two operands of one length, on this thread.
pub(crate) fn f32_zip(op: BinOp, a: &[u32], b: &[u32], out: &mut [u32]) {
    match op {
        BinOp::Add => simd::zip_into(a, b, out, f32_op::<{ BinOp::ADD }>),
        BinOp::Sub => simd::zip_into(a, b, out, f32_op::<{ BinOp::SUB }>),
        BinOp::Mul => simd::zip_into(a, b, out, f32_op::<{ BinOp::MUL }>),
        BinOp::Div => simd::zip_into(a, b, out, f32_op::<{ BinOp::DIV }>),
        BinOp::Max => simd::zip_into(a, b, out, f32_op::<{ BinOp::MAX }>),
        BinOp::Min => simd::zip_into(a, b, out, f32_op::<{ BinOp::MIN }>),
    }
}

/// bfloat16 `add`, `sub`, `mul`, `div`, `max` or `min` of two sides into `out`: in float32 and
/// back, rounding to nearest even; NaN keeps its sign with the canonical payload. With AVX2
/// or AVX-512, [`simd::bf16_zip`]'s kernel computes the same bits many lanes at a time.
pub(crate) fn bf16_into(op: BinOp, a: Side<'_, u16>, b: Side<'_, u16>, out: &mut [u16]) {
    fn on<const OP: u8>(a: Side<'_, u16>, b: Side<'_, u16>, out: &mut [u16]) {
        simd::bf16_zip::<OP>(a, b, out, bf16_scalar::<OP>);
    }
    match op {
        BinOp::Add => on::<{ BinOp::ADD }>(a, b, out),
        BinOp::Sub => on::<{ BinOp::SUB }>(a, b, out),
        BinOp::Mul => on::<{ BinOp::MUL }>(a, b, out),
        BinOp::Div => on::<{ BinOp::DIV }>(a, b, out),
        BinOp::Max => on::<{ BinOp::MAX }>(a, b, out),
        BinOp::Min => on::<{ BinOp::MIN }>(a, b, out),
    }
}

/// One element of [`bf16_into`]: widen, flush, operate in float32, flush, round.
#[inline(always)]
pub(crate) fn bf16_scalar<const OP: u8>(a: u16, b: u16) -> u16 {
    let a = flush(f32::from_bits(u32::from(a) << 16));
    let b = flush(f32::from_bits(u32::from(b) << 16));
    to_bf16(flush(apply::<OP, f32>(a, b)))
}

/// A word of an integer (or bool) stored a whole word per element.
pub(crate) trait Bits:
    Copy
    + Default
    + Send
    + Sync
    + bytemuck::Pod
    + PartialOrd
    + std::ops::BitAnd<Output = Self>
    + std::ops::BitOr<Output = Self>
    + std::ops::BitXor<Output = Self>
    + std::ops::Shl<Output = Self>
    + std::ops::Shr<Output = Self>
{
    /// The width in bits, as a word.
    const WIDTH: Self;
}

macro_rules! bits {
    ($($w:ty),*) => {$(
        impl Bits for $w {
            const WIDTH: $w = <$w>::BITS as $w;
        }
    )*};
}
bits!(u8, u16, u32, u64);

/// The bit operations of words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BitOp {
    /// `and`.
    And,
    /// `or`.
    Or,
    /// `xor`.
    Xor,
    /// `shift_left`: 0 for a shift by the width or more.
    ShiftLeft,
    /// `shift_right_logical`: 0 for a shift by the width or more.
    ShiftRightLogical,
}

/// `op` of two sides of words into `out`: a shift by a negative amount or by at least the
/// width gives 0, as in JAX (a negative amount, read as an unsigned word, is at least the
/// width).
pub(crate) fn bits_into<W: Bits>(op: BitOp, a: Side<'_, W>, b: Side<'_, W>, out: &mut [W]) {
    use simd::zip_sides as zip;
    let zero = W::default();
    match op {
        BitOp::And => zip(a, b, out, |a, b| a & b),
        BitOp::Or => zip(a, b, out, |a, b| a | b),
        BitOp::Xor => zip(a, b, out, |a, b| a ^ b),
        BitOp::ShiftLeft => zip(a, b, out, |a, b| if b < W::WIDTH { a << b } else { zero }),
        BitOp::ShiftRightLogical => zip(a, b, out, |a, b| if b < W::WIDTH { a >> b } else { zero }),
    }
}

/// The comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Cmp {
    /// `eq`.
    Eq,
    /// `ne`.
    Ne,
    /// `lt`.
    Lt,
    /// `le`.
    Le,
    /// `gt`.
    Gt,
    /// `ge`.
    Ge,
}

impl Cmp {
    /// The comparison's code: a const-generic parameter for [`compared`].
    pub(crate) const fn code(self) -> u8 {
        self as u8
    }
}

/// Comparison `C` ([`Cmp::code`]) of two values (read as the caller reads them: floats with
/// subnormals as zeros of their sign), as a loop specialised for it computes it.
#[inline(always)]
pub(crate) fn compared<const C: u8, F: PartialOrd>(a: F, b: F) -> bool {
    const EQ: u8 = Cmp::Eq.code();
    const NE: u8 = Cmp::Ne.code();
    const LT: u8 = Cmp::Lt.code();
    const LE: u8 = Cmp::Le.code();
    const GT: u8 = Cmp::Gt.code();
    match C {
        EQ => a == b,
        NE => a != b,
        LT => a < b,
        LE => a <= b,
        GT => a > b,
        _ => a >= b,
    }
}

/// `op` of two float32 sides into bools (subnormals read as zeros of their sign, NaN
/// unordered and unequal to everything).
pub(crate) fn compare_into(op: Cmp, a: Side<'_, u32>, b: Side<'_, u32>, out: &mut [u8]) {
    compare_words(op, a, b, out, |w| flush(f32::from_bits(w)));
}

/// [`compare_into`] for float64.
pub(crate) fn compare64_into(op: Cmp, a: Side<'_, u64>, b: Side<'_, u64>, out: &mut [u8]) {
    compare_words(op, a, b, out, |w| super::flush::flush64(f64::from_bits(w)));
}

#[inline(always)]
fn compare_words<W: Copy, F: PartialOrd>(
    op: Cmp,
    a: Side<'_, W>,
    b: Side<'_, W>,
    out: &mut [u8],
    read: impl Fn(W) -> F + Copy,
) {
    use simd::zip_sides as zip;
    match op {
        Cmp::Eq => zip(a, b, out, |a, b| u8::from(read(a) == read(b))),
        Cmp::Ne => zip(a, b, out, |a, b| u8::from(read(a) != read(b))),
        Cmp::Lt => zip(a, b, out, |a, b| u8::from(read(a) < read(b))),
        Cmp::Le => zip(a, b, out, |a, b| u8::from(read(a) <= read(b))),
        Cmp::Gt => zip(a, b, out, |a, b| u8::from(read(a) > read(b))),
        Cmp::Ge => zip(a, b, out, |a, b| u8::from(read(a) >= read(b))),
    }
}
