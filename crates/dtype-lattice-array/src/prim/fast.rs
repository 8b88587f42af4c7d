//! Fast paths for the hottest elementwise primitives: `add`, `sub`, `mul`, `div`, `max` and
//! `min` of two operands of one shape, or of an array and a scalar (an operand of one element,
//! broadcast without being copied), in float32, bfloat16 or an 8-bit float format; the
//! transcendental functions of [`super::vmath`] in float32 and bfloat16; `and`, `or`, `xor`,
//! `shift_left` and `shift_right_logical` of integers (and the bitwise ones of bools) stored a
//! word per element; float32 comparisons, `neg` and `abs`. They compute bit for
//! bit what the generic kernel of [`super::elementwise`] computes (denormals off, one rounding
//! per primitive, the same NaN signs), in one pass over the operands, on all cores for large
//! arrays:
//!
//! - float32 and bfloat16: a fused loop (load, flush subnormals, operate, flush, round);
//! - the 8-bit formats: a 65,536-entry table of every pair of operands, built once per
//!   operation and dtype by the generic kernel itself, then one lookup per element; or, for
//!   `add`, `sub`, `mul` and `div` on a CPU with AVX-512 VBMI, the computing kernel of
//!   [`super::simd8`], used only once it has matched that table on every pair.
//!
//! The tests below compare them with the generic kernel, bit for bit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use dtype_lattice::{DType, Kind};

use super::elementwise::Op;
use super::lanes::flush32 as flush;
use super::math::Fn1;
use crate::array::{Array, ShapedArray, Storage, Word};

/// Below this many elements one thread does the work.
const PARALLEL_MIN: usize = 1 << 16;

pub(super) const ADD: u8 = 0;
pub(super) const SUB: u8 = 1;
pub(super) const MUL: u8 = 2;
pub(super) const MAX: u8 = 3;
pub(super) const MIN: u8 = 4;
pub(super) const DIV: u8 = 5;

/// The operation as a constant (one loop per operation, no branch on it inside).
fn code(op: Op) -> u8 {
    match op {
        Op::Add | Op::AddAny => ADD,
        Op::Sub => SUB,
        Op::Mul => MUL,
        Op::Max => MAX,
        Op::Div => DIV,
        _ => MIN,
    }
}

#[inline(always)]
fn apply<const OP: u8>(a: f32, b: f32) -> f32 {
    match OP {
        ADD => super::elementwise::nan_first!(a, b, a + b),
        SUB => super::elementwise::nan_first!(a, b, a - b),
        MUL => super::elementwise::nan_first!(a, b, a * b),
        DIV => super::elementwise::nan_first!(a, b, a / b),
        MAX => {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else if a > b || (a == b && !a.is_sign_negative()) {
                a
            } else {
                b
            }
        }
        _ => {
            if a.is_nan() || b.is_nan() {
                f32::NAN
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
pub(super) enum Side<'a, W> {
    Words(&'a [W]),
    Scalar(W),
}

/// `part(x, y, out)` over the output split across the cores for large arrays: each call gets
/// a stretch of the output and the operands' words for it (a scalar side as it is).
fn zip_par_with<W: Copy + Default + Send + Sync, O: crate::array::storage::pool::Pooled + Send>(
    x: Side<'_, W>,
    y: Side<'_, W>,
    part: impl Fn(Side<'_, W>, Side<'_, W>, &mut [O]) + Sync,
) -> Arc<Vec<O>> {
    let n = match (x, y) {
        (Side::Words(a), Side::Words(b)) => a.len().min(b.len()),
        (Side::Words(a), Side::Scalar(_)) | (Side::Scalar(_), Side::Words(a)) => a.len(),
        (Side::Scalar(_), Side::Scalar(_)) => 1,
    };
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
    let filled =
        crate::array::storage::pool::shared::<O, std::convert::Infallible>(n, false, |out| {
            if threads < 2 {
                part(0, out);
                return Ok(());
            }
            let chunk = n.div_ceil(threads);
            // On rayon's pool, as the jit plan's fused blocks: one set of threads for all
            // parallel work (threads of several pools spinning at once fight for the cores).
            rayon::scope(|s| {
                for (i, o) in out.chunks_mut(chunk).enumerate() {
                    let part = &part;
                    s.spawn(move |_| part(i * chunk, o));
                }
            });
            Ok(())
        });
    match filled {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

/// `f(x chunk, out chunk)` over `n` fresh words, split across the cores for large arrays.
fn map_par<W: Sync, O: crate::array::storage::pool::Pooled + Send>(
    x: &[W],
    f: impl Fn(&[W], &mut [O]) + Sync,
) -> Arc<Vec<O>> {
    let n = x.len();
    let threads = if n < PARALLEL_MIN { 1 } else { threads() };
    let filled =
        crate::array::storage::pool::shared::<O, std::convert::Infallible>(n, false, |out| {
            if threads < 2 {
                f(x, out);
                return Ok(());
            }
            let chunk = n.div_ceil(threads);
            rayon::scope(|s| {
                for (o, a) in out.chunks_mut(chunk).zip(x.chunks(chunk)) {
                    let f = &f;
                    s.spawn(move |_| f(a, o));
                }
            });
            Ok(())
        });
    match filled {
        Ok(v) => v,
        Err(never) => match never {},
    }
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
fn to_bf16(r: f32) -> u16 {
    let bits = r.to_bits();
    if r.is_nan() {
        ((bits >> 16) & 0x8000) as u16 | 0x7fc0
    } else {
        let round = 0x7fff + ((bits >> 16) & 1);
        (bits.wrapping_add(round) >> 16) as u16
    }
}

/// The fast result of a transcendental `op` ([`super::vmath`]) on a float32 or bfloat16 array
/// (the output of its dtype and shape), or `None` where the generic kernel must do it.
pub(crate) fn unary(op: Op, x: &Array, out: &ShapedArray) -> Option<Storage> {
    if matches!(op, Op::Neg | Op::Abs)
        && x.dtype() == DType::Float32
        && out.dtype() == DType::Float32
        && crate::array::same_shape(x.shape(), out.shape())
        && let Storage::W32(a) = x.storage()
    {
        let neg = op == Op::Neg;
        return Some(Storage::W32(
            map_par(a, |xs, os| sign_into(neg, xs, os)).into(),
        ));
    }
    let f = op.fn1()?;
    if !super::vmath::fast(f)
        || out.dtype() != x.dtype()
        || !crate::array::same_shape(x.shape(), out.shape())
    {
        return None;
    }
    match x.storage() {
        Storage::W32(a) if x.dtype() == DType::Float32 => {
            let v = map_par(a, |xs, os| {
                f32_fn_into(f, xs, os);
            });
            Some(Storage::W32(v.into()))
        }
        // bfloat16's exp2 rounds log(2) and the product to bfloat16 first (the generic kernel).
        Storage::W16(a) if x.dtype() == DType::BFloat16 && f != Fn1::Exp2 => {
            let io = super::vmath::Io {
                load: |w| flush(f32::from_bits(u32::from(w) << 16)),
                store: |r| to_bf16(flush(r)),
                stored_nan: |o| o & 0x7fff > 0x7f80,
            };
            let v = map_par(a, |xs, os| {
                super::vmath::map(f, xs, os, io);
            });
            Some(Storage::W16(v.into()))
        }
        _ => None,
    }
}

/// float32 `neg` (flips the sign bit) or `abs` (clears it) on words: bit operations, so
/// subnormals are kept.
pub(super) fn sign_into(neg: bool, x: &[u32], out: &mut [u32]) {
    if neg {
        super::simd::map_into(x, out, |w| w ^ 0x8000_0000);
    } else {
        super::simd::map_into(x, out, |w| w & 0x7fff_ffff);
    }
}

/// The float32 function `f` of [`super::vmath`] on words (false, nothing written, where it has
/// no vectorised form): XLA's float32 `sin` and `tanh` return subnormal arguments as they are
/// (no flushing in or out), the others flush.
pub(super) fn f32_fn_into(f: Fn1, x: &[u32], out: &mut [u32]) -> bool {
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

/// One float32 element of `OP` on words: flush, operate, flush.
#[inline(always)]
fn f32_op<const OP: u8>(a: u32, b: u32) -> u32 {
    let r = apply::<OP>(flush(f32::from_bits(a)), flush(f32::from_bits(b)));
    flush(r).to_bits()
}

/// `add`, `sub`, `mul`, `div`, `max` or `min` of float32 sides into `out`.
pub(super) fn f32_into(op: Op, a: Side<'_, u32>, b: Side<'_, u32>, out: &mut [u32]) {
    use super::simd::zip_sides as zip;
    match code(op) {
        ADD => zip(a, b, out, f32_op::<ADD>),
        SUB => zip(a, b, out, f32_op::<SUB>),
        MUL => zip(a, b, out, f32_op::<MUL>),
        DIV => zip(a, b, out, f32_op::<DIV>),
        MAX => zip(a, b, out, f32_op::<MAX>),
        _ => zip(a, b, out, f32_op::<MIN>),
    }
}

/// [`f32_into`] of two operands of one length on this thread, into a cached or pooled buffer.
fn f32_direct<const OP: u8>(a: &[u32], b: &[u32]) -> Arc<Vec<u32>> {
    let filled = crate::array::storage::pool::shared::<u32, std::convert::Infallible>(
        a.len(),
        false,
        |out| {
            super::simd::zip_into(a, b, out, f32_op::<OP>);
            Ok(())
        },
    );
    match filled {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

/// bfloat16 in float32 and back, rounding to nearest even; NaN keeps its sign with the
/// canonical payload.
/// With AVX2, [`super::simd::bf16_zip`]'s kernel computes the same 16 lanes at a time.
fn bf16_loop<const OP: u8>(a: Side<'_, u16>, b: Side<'_, u16>) -> Arc<Vec<u16>> {
    zip_par_with(a, b, |x, y, out| {
        super::simd::bf16_zip::<OP>(x, y, out, bf16_scalar::<OP>);
    })
}

/// One element of [`bf16_loop`]: widen, flush, operate in float32, flush, round.
#[inline(always)]
pub(super) fn bf16_scalar<const OP: u8>(a: u16, b: u16) -> u16 {
    let a = flush(f32::from_bits(u32::from(a) << 16));
    let b = flush(f32::from_bits(u32::from(b) << 16));
    to_bf16(flush(apply::<OP>(a, b)))
}

/// The operand's words as a [`Side`] of an output of `n` elements: all of them, or its one
/// word when it has a single element.
#[inline(always)]
fn side<'a, W: Word>(x: &'a Array, n: usize) -> Option<Side<'a, W>> {
    let w = W::view(x.storage())?;
    match w {
        _ if w.len() == n => Some(Side::Words(w)),
        [s] => Some(Side::Scalar(*s)),
        _ => None,
    }
}

/// `add`, `sub`, `mul`, `div`, `max` or `min` of two concrete float32 arrays of one aval
/// (shape, dtype and weak type), below the size split across the cores: the elementwise
/// shape rule's answer for equal avals is that aval, so this runs the loop of [`binary`]
/// without the general dispatch of `bind` (small arrays spend most of their time there).
/// `None` for anything else.
pub(crate) fn same_aval(prim: &'static super::Primitive, x: &Array, y: &Array) -> Option<Array> {
    use super::elementwise as E;
    if x.dtype() != DType::Float32
        || y.dtype() != DType::Float32
        || x.weak_type() != y.weak_type()
        || !crate::array::same_shape(x.shape(), y.shape())
        || !x.is_concrete()
        || !y.is_concrete()
    {
        return None;
    }
    let (Storage::W32(a), Storage::W32(b)) = (x.storage(), y.storage()) else {
        return None;
    };
    if a.len() >= PARALLEL_MIN || a.len() != b.len() {
        return None;
    }
    let is = |p: &'static super::Primitive| std::ptr::eq(prim, p);
    let v = if is(&E::ADD) {
        f32_direct::<ADD>(a, b)
    } else if is(&E::SUB) {
        f32_direct::<SUB>(a, b)
    } else if is(&E::MUL) {
        f32_direct::<MUL>(a, b)
    } else if is(&E::DIV) {
        f32_direct::<DIV>(a, b)
    } else if is(&E::MAX) {
        f32_direct::<MAX>(a, b)
    } else if is(&E::MIN) {
        f32_direct::<MIN>(a, b)
    } else {
        return None;
    };
    Some(Array::from_parts(x.aval().clone(), Storage::W32(v.into())))
}

/// The fast result of `op` on `x` and `y` (one dtype; each of the output's shape or of one
/// element, broadcast), or `None` where the generic kernel must do it.
pub(crate) fn binary(op: Op, x: &Array, y: &Array, out: &ShapedArray) -> Option<Storage> {
    if x.dtype() != y.dtype() {
        return None;
    }
    let of_out = |a: &Array| crate::array::same_shape(a.shape(), out.shape());
    if !(of_out(x) && (of_out(y) || y.size() == 1) || of_out(y) && x.size() == 1) {
        return None;
    }
    let n = out.size();
    let d = x.dtype();
    if matches!(
        op,
        Op::And | Op::Or | Op::Xor | Op::ShiftLeft | Op::ShiftRightLogical
    ) {
        return integer(op, x, y, n, out);
    }
    if matches!(op, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge) {
        return compare(op, x, y, n, out);
    }
    if !matches!(
        op,
        Op::Add | Op::AddAny | Op::Sub | Op::Mul | Op::Div | Op::Max | Op::Min
    ) || out.dtype() != d
    {
        return None;
    }
    match x.storage() {
        Storage::W32(_) if d == DType::Float32 => {
            let (a, b) = (side(x, n)?, side(y, n)?);
            let v = zip_par_with(a, b, |a, b, out| f32_into(op, a, b, out));
            Some(Storage::W32(v.into()))
        }
        Storage::W16(_) if d == DType::BFloat16 => {
            let (a, b) = (side(x, n)?, side(y, n)?);
            let v = match code(op) {
                ADD => bf16_loop::<ADD>(a, b),
                SUB => bf16_loop::<SUB>(a, b),
                MUL => bf16_loop::<MUL>(a, b),
                DIV => bf16_loop::<DIV>(a, b),
                MAX => bf16_loop::<MAX>(a, b),
                _ => bf16_loop::<MIN>(a, b),
            };
            Some(Storage::W16(v.into()))
        }
        Storage::W8(_) if d.kind() == Kind::Float && d.bits() == 8 => {
            let (a, b) = (side::<u8>(x, n)?, side::<u8>(y, n)?);
            let k = eight(op, d)?;
            let v = zip_par_with(a, b, |a, b, out| k.run(a, b, out));
            Some(Storage::W8(v.into()))
        }
        _ => None,
    }
}

/// `and`, `or`, `xor` (integers and bool) and `shift_left`, `shift_right_logical` (integers)
/// of operands stored a whole word per element, on the words themselves: a shift by a negative
/// amount or by at least the width gives 0, as in JAX (a negative amount, read as an unsigned
/// word, is at least the width).
fn integer(op: Op, x: &Array, y: &Array, n: usize, out: &ShapedArray) -> Option<Storage> {
    let d = x.dtype();
    let shift = matches!(op, Op::ShiftLeft | Op::ShiftRightLogical);
    let kind_ok = match d.kind() {
        Kind::SignedInt | Kind::UnsignedInt => true,
        Kind::Bool => !shift,
        _ => false,
    };
    if !kind_ok || out.dtype() != d || d.bits() as usize != 8 * crate::array::layout(d).0 {
        return None;
    }
    macro_rules! on_words {
        ($w:ty, $variant:ident) => {{
            let (a, b) = (side::<$w>(x, n)?, side::<$w>(y, n)?);
            let v = zip_par_with(a, b, |a, b, out| bits_into(op, a, b, out));
            Some(Storage::$variant(v.into()))
        }};
    }
    match x.storage() {
        Storage::W8(_) => on_words!(u8, W8),
        Storage::W16(_) => on_words!(u16, W16),
        Storage::W32(_) => on_words!(u32, W32),
        Storage::W64(_) => on_words!(u64, W64),
        _ => None,
    }
}

/// A word of an integer (or bool) stored a whole word per element.
pub(super) trait Bits:
    Copy
    + Default
    + Send
    + Sync
    + bytemuck::Pod
    + crate::array::storage::pool::Pooled
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

/// `and`, `or`, `xor`, `shift_left` or `shift_right_logical` (any other `op`) of two sides of
/// words into `out` (see [`integer`]).
pub(super) fn bits_into<W: Bits>(op: Op, a: Side<'_, W>, b: Side<'_, W>, out: &mut [W]) {
    use super::simd::zip_sides as zip;
    let zero = W::default();
    match op {
        Op::And => zip(a, b, out, |a, b| a & b),
        Op::Or => zip(a, b, out, |a, b| a | b),
        Op::Xor => zip(a, b, out, |a, b| a ^ b),
        Op::ShiftLeft => zip(a, b, out, |a, b| if b < W::WIDTH { a << b } else { zero }),
        _ => zip(a, b, out, |a, b| if b < W::WIDTH { a >> b } else { zero }),
    }
}

/// The comparisons of two float32 operands (subnormals read as zeros of their sign, NaN
/// unordered and unequal to everything), as bools.
fn compare(op: Op, x: &Array, y: &Array, n: usize, out: &ShapedArray) -> Option<Storage> {
    if x.dtype() != DType::Float32 || out.dtype() != DType::Bool {
        return None;
    }
    let (a, b) = (side::<u32>(x, n)?, side::<u32>(y, n)?);
    let v = zip_par_with(a, b, |a, b, out| compare_into(op, a, b, out));
    Some(Storage::W8(v.into()))
}

/// `eq`, `ne`, `lt`, `le`, `gt` or `ge` (any other `op`) of two float32 sides into bools.
pub(super) fn compare_into(op: Op, a: Side<'_, u32>, b: Side<'_, u32>, out: &mut [u8]) {
    use super::simd::zip_sides as zip;
    let read = |w: u32| flush(f32::from_bits(w));
    match op {
        Op::Eq => zip(a, b, out, |a, b| u8::from(read(a) == read(b))),
        Op::Ne => zip(a, b, out, |a, b| u8::from(read(a) != read(b))),
        Op::Lt => zip(a, b, out, |a, b| u8::from(read(a) < read(b))),
        Op::Le => zip(a, b, out, |a, b| u8::from(read(a) <= read(b))),
        Op::Gt => zip(a, b, out, |a, b| u8::from(read(a) > read(b))),
        _ => zip(a, b, out, |a, b| u8::from(read(a) >= read(b))),
    }
}

/// How an 8-bit float format's `op` is computed: its table of every pair of operands, and,
/// where this CPU has AVX-512 VBMI and the kernel agreed with the table on every pair, the
/// kernel of [`super::simd8`] (`add`, `sub`, `mul` and `div`).
pub(super) struct Eight {
    op: u8,
    table: Vec<u8>,
    simd: Option<super::simd8::Kernel>,
}

impl Eight {
    /// `out[i] = x[i] op y[i]`.
    fn run(&self, x: Side<'_, u8>, y: Side<'_, u8>, out: &mut [u8]) {
        use super::simd8::zip;
        let done = self.simd.as_ref().is_some_and(|k| match self.op {
            ADD => zip::<ADD>(k, x, y, out),
            SUB => zip::<SUB>(k, x, y, out),
            MUL => zip::<MUL>(k, x, y, out),
            DIV => zip::<DIV>(k, x, y, out),
            _ => false,
        });
        if !done {
            let table: &[u8; 1 << 16] = self.table.as_slice().try_into().expect("2^16 entries");
            super::simd::zip_sides(x, y, out, |a, b| {
                table[usize::from(u16::from(a) << 8 | u16::from(b))]
            });
        }
    }

    /// Whether the AVX-512 kernel computes it.
    #[cfg(test)]
    pub(super) fn computed(&self) -> bool {
        self.simd.is_some()
    }

    /// The AVX-512 kernel, if it computes it.
    #[cfg(test)]
    pub(super) fn kernel(&self) -> Option<&super::simd8::Kernel> {
        self.simd.as_ref()
    }

    /// The table of every pair (row: the first operand).
    #[cfg(test)]
    pub(super) fn table(&self) -> &[u8] {
        &self.table
    }
}

type Eights = Mutex<HashMap<(u8, DType), Arc<Eight>>>;

/// `op` of an 8-bit float dtype (see [`Eight`]), built once per operation and dtype: the
/// table by the generic kernel itself on every pair of bytes (row: the first operand).
pub(super) fn eight(op: Op, dtype: DType) -> Option<Arc<Eight>> {
    static EIGHTS: OnceLock<Eights> = OnceLock::new();
    let eights = EIGHTS.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (op as u8, dtype);
    if let Some(t) = eights.lock().ok()?.get(&key) {
        return Some(t.clone());
    }
    let a: Vec<u8> = (0..=u16::MAX).map(|i| (i >> 8) as u8).collect();
    let b: Vec<u8> = (0..=u16::MAX).map(|i| i as u8).collect();
    let x = Array::from_bytes(dtype, &[a.len()], &a).ok()?;
    let y = Array::from_bytes(dtype, &[b.len()], &b).ok()?;
    let aval = ShapedArray::new(&[a.len()], dtype, false);
    let out = super::elementwise::generic_binary(op, &x, &y, &aval).ok()?;
    let mut k = Eight {
        op: code(op),
        table: out.as_bytes().to_vec(),
        simd: None,
    };
    if matches!(k.op, ADD | SUB | MUL | DIV) && super::simd8::available() {
        let values = super::lanes::decode_table(dtype);
        // The table's NaN results of each sign: a NaN operand's with itself (of the other
        // sign's where the format has NaNs of one sign only).
        let nan_of = |neg: bool| {
            let c = (0..=255u8).find(|&c| values[usize::from(c)].is_nan() && (c >= 128) == neg);
            c.map(|c| k.table[usize::from(c) << 8 | usize::from(c)])
        };
        let nans = match (nan_of(false), nan_of(true)) {
            (Some(p), Some(n)) => Some([p, n]),
            (Some(c), None) | (None, Some(c)) => Some([c, c]),
            (None, None) => None,
        };
        let layout = crate::convert::minifloat::Layout::new(dtype.float_format()?);
        let enc = crate::convert::fast::Encoder32::new(&layout, crate::convert::Semantics::Jax);
        if let Some(kernel) = enc
            .zip(nans)
            .and_then(|(e, nans)| super::simd8::Kernel::new(&values, &e, nans))
        {
            let computed = Eight {
                simd: Some(kernel),
                table: Vec::new(),
                ..k
            };
            let mut all = vec![0u8; a.len()];
            computed.run(Side::Words(&a), Side::Words(&b), &mut all);
            if all == k.table {
                k.simd = computed.simd;
            }
        }
    }
    let k = Arc::new(k);
    eights.lock().ok()?.insert(key, k.clone());
    Some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random bit patterns (NaNs, infinities and subnormals included), a fixed seed.
    fn bits(n: usize, seed: u64) -> Vec<u64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s
            })
            .collect()
    }

    fn check(dtype: DType, x: &[u8], y: &[u8], n: usize) {
        let a = Array::from_bytes(dtype, &[n], x).unwrap();
        let b = Array::from_bytes(dtype, &[n], y).unwrap();
        let aval = ShapedArray::new(&[n], dtype, false);
        let generic = super::super::elementwise::generic_binary;
        // Scalar operands: a few of `y`'s elements and the special values (zeros, infinities,
        // NaNs of both signs, a subnormal, 1, 3), each against the generic kernel on the
        // scalar repeated.
        let w = x.len() / n;
        let special: [u32; 10] = [
            0,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0001,
            0xffc0_0000,
            0x8000_0001,
            0x3f80_0000,
            0x4040_0000,
            0x0000_0001,
        ];
        let mut scalars: Vec<Vec<u8>> = [0, 1, n / 2, n - 1]
            .iter()
            .map(|&i| y[i * w..(i + 1) * w].to_vec())
            .collect();
        scalars.extend(special.iter().map(|&v| {
            let v = if w == 4 { v } else { v >> (32 - 8 * w) };
            v.to_le_bytes()[..w].to_vec()
        }));
        for op in [Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Max, Op::Min] {
            let fast = binary(op, &a, &b, &aval).expect("a fast path");
            let slow = generic(op, &a, &b, &aval).unwrap();
            assert_eq!(fast.bytes(), slow.as_bytes(), "{op:?} {dtype}");
            for v in &scalars {
                let s = Array::from_bytes(dtype, &[], v).unwrap();
                let full = Array::from_bytes(dtype, &[n], &v.repeat(n)).unwrap();
                let fast = binary(op, &a, &s, &aval).expect("a fast path");
                let slow = generic(op, &a, &full, &aval).unwrap();
                assert_eq!(fast.bytes(), slow.as_bytes(), "{op:?} {dtype} by {v:x?}");
                let fast = binary(op, &s, &a, &aval).expect("a fast path");
                let slow = generic(op, &full, &a, &aval).unwrap();
                assert_eq!(fast.bytes(), slow.as_bytes(), "{op:?} {dtype} {v:x?} by");
            }
        }
    }

    #[test]
    fn float32_and_bfloat16_agree_with_the_generic_kernel_bit_for_bit() {
        // Large enough for the parallel split.
        let n = PARALLEL_MIN + 12_345;
        let x: Vec<u8> = bits(n, 1)
            .iter()
            .flat_map(|b| (*b as u32).to_le_bytes())
            .collect();
        let y: Vec<u8> = bits(n, 2)
            .iter()
            .flat_map(|b| (*b as u32).to_le_bytes())
            .collect();
        check(DType::Float32, &x, &y, n);
        // Small magnitudes too (subnormal sums and products).
        let tiny: Vec<u8> = bits(n, 3)
            .iter()
            .flat_map(|b| ((*b as u32) & 0x80ff_ffff).to_le_bytes())
            .collect();
        check(DType::Float32, &x, &tiny, n);
        let x16: Vec<u8> = bits(n, 4)
            .iter()
            .flat_map(|b| (*b as u16).to_le_bytes())
            .collect();
        let y16: Vec<u8> = bits(n, 5)
            .iter()
            .flat_map(|b| (*b as u16).to_le_bytes())
            .collect();
        check(DType::BFloat16, &x16, &y16, n);
        // Every bfloat16 code (NaNs and infinities of both signs among them) against the
        // smallest normals of both signs (subnormal sums and differences), a subnormal and a
        // NaN.
        let every: Vec<u16> = (0..=u16::MAX).collect();
        let band = [0x0080u16, 0x8081, 0x80fe, 0x0001, 0xffc1];
        let (xs, ys): (Vec<u8>, Vec<u8>) = every
            .iter()
            .flat_map(|&a| band.iter().map(move |&b| (a, b)))
            .map(|(a, b)| (a.to_le_bytes(), b.to_le_bytes()))
            .fold((Vec::new(), Vec::new()), |(mut xs, mut ys), (a, b)| {
                xs.extend(a);
                ys.extend(b);
                (xs, ys)
            });
        check(DType::BFloat16, &xs, &ys, every.len() * band.len());
    }

    /// The direct path of two small float32 arrays of one aval computes the generic kernel's
    /// bits (NaNs, infinities, zeros of both signs and subnormals among the operands), keeps
    /// the aval, and declines what it does not compute.
    #[test]
    fn same_aval_agrees_with_the_generic_kernel_and_declines_the_rest() {
        use super::super::elementwise as E;
        let n = 4096;
        let words = |seed: u64, mask: u32| -> Vec<u32> {
            let mut w: Vec<u32> = bits(n, seed).iter().map(|b| (*b as u32) & mask).collect();
            w[..6].copy_from_slice(&[0, 0x8000_0000, 0x7f80_0000, 0xffc0_0000, 0x8000_0001, 1]);
            w
        };
        let arr = |w: &[u32], weak: bool| {
            let bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
            Array::from_bytes(DType::Float32, &[64, 64], &bytes)
                .unwrap()
                .with_weak_type(weak)
        };
        for weak in [false, true] {
            let (x, y) = (
                arr(&words(1, u32::MAX), weak),
                arr(&words(2, 0x80ff_ffff), weak),
            );
            for (prim, op) in [
                (&E::ADD, Op::Add),
                (&E::SUB, Op::Sub),
                (&E::MUL, Op::Mul),
                (&E::DIV, Op::Div),
                (&E::MAX, Op::Max),
                (&E::MIN, Op::Min),
            ] {
                let got = same_aval(prim, &x, &y).expect("the direct path");
                let want = super::super::elementwise::generic_binary(op, &x, &y, x.aval()).unwrap();
                assert_eq!(got.aval(), x.aval(), "{op:?}");
                assert_eq!(got.as_bytes(), want.as_bytes(), "{op:?} weak={weak}");
            }
        }
        let x = arr(&words(1, u32::MAX), false);
        assert!(same_aval(&E::ADD, &x, &x.with_weak_type(true)).is_none());
        assert!(same_aval(&E::EQ, &x, &x).is_none());
        let h = x.astype(DType::BFloat16).unwrap();
        assert!(same_aval(&E::ADD, &h, &h).is_none());
    }

    /// The transcendental fast paths against the generic kernel's scalar form (load, flush,
    /// `real_f32` per element, flush, round), bit for bit, on float32 and bfloat16 arrays large
    /// enough for the parallel split, every bit pattern of bfloat16 included.
    #[test]
    fn transcendentals_agree_with_the_scalar_kernel() {
        use super::super::lanes::Lane;
        use super::super::math::real_f32;
        let n = PARALLEL_MIN + 4_321;
        let ops = [
            Op::Exp,
            Op::Exp2,
            Op::Expm1,
            Op::Log,
            Op::Log1p,
            Op::Logistic,
            Op::Sin,
            Op::Cos,
            Op::Tanh,
            Op::Sinh,
            Op::Cosh,
        ];
        // Small magnitudes (a third of the patterns are subnormal or near 1), then any.
        let x32: Vec<u8> = bits(n, 11)
            .iter()
            .enumerate()
            .flat_map(|(i, b)| {
                let b = *b as u32;
                (if i % 3 == 0 {
                    b & 0x80ff_ffff
                } else if i % 3 == 1 {
                    b & 0xbfff_ffff
                } else {
                    b
                })
                .to_le_bytes()
            })
            .collect();
        let x16: Vec<u8> = (0..n).flat_map(|i| (i as u16).to_le_bytes()).collect();
        for (dtype, bytes) in [(DType::Float32, x32), (DType::BFloat16, x16)] {
            let x = Array::from_bytes(dtype, &[n], &bytes).unwrap();
            let aval = ShapedArray::new(&[n], dtype, false);
            for op in ops {
                let f = op.fn1().unwrap();
                let Some(fast) = unary(op, &x, &aval) else {
                    assert!(
                        !super::super::vmath::fast(f)
                            || (dtype == DType::BFloat16 && op == Op::Exp2),
                        "{op:?} {dtype}"
                    );
                    continue;
                };
                let raw = matches!(f, Fn1::Sin | Fn1::Tanh) && dtype == DType::Float32;
                let v = if raw {
                    f32::load_raw(&x)
                } else {
                    f32::load(&x)
                };
                let v: Vec<f32> = v.into_iter().map(|a| real_f32(f, a)).collect();
                let want = if raw {
                    f32::store_raw(dtype, v)
                } else {
                    f32::store(dtype, v)
                };
                let want = Array::from_parts(aval.clone(), want);
                assert_eq!(fast.bytes(), want.as_bytes(), "{op:?} {dtype}");
            }
        }
    }

    /// The integer, comparison and sign fast paths against the generic kernel, bit for bit:
    /// every word-sized integer dtype and bool, shift amounts around the width and negative,
    /// float32 comparisons over NaNs, infinities, zeros and subnormals, with scalar sides.
    #[test]
    fn integer_comparison_and_sign_paths_agree_with_the_generic_kernel() {
        use super::super::elementwise::generic_binary;
        let n = PARALLEL_MIN + 777;
        let ints = [
            DType::Int8,
            DType::UInt8,
            DType::Int16,
            DType::UInt16,
            DType::Int32,
            DType::UInt32,
            DType::Int64,
            DType::UInt64,
            DType::Bool,
        ];
        for dtype in ints {
            let w = crate::array::layout(dtype).0;
            let word = |b: u64| -> Vec<u8> {
                if dtype == DType::Bool {
                    vec![(b & 1) as u8]
                } else {
                    b.to_le_bytes()[..w].to_vec()
                }
            };
            let x: Vec<u8> = bits(n, 21).into_iter().flat_map(word).collect();
            // Shift amounts: a third in [0, width + 2), a third negative small, a third any.
            let y: Vec<u8> = bits(n, 22)
                .into_iter()
                .enumerate()
                .flat_map(|(i, b)| {
                    let v = match i % 3 {
                        0 => b % (8 * w as u64 + 2),
                        1 => (b % 5 + 1).wrapping_neg(),
                        _ => b,
                    };
                    word(v)
                })
                .collect();
            let a = Array::from_bytes(dtype, &[n], &x).unwrap();
            let b = Array::from_bytes(dtype, &[n], &y).unwrap();
            let s = Array::from_bytes(dtype, &[], &y[..w]).unwrap();
            let full = Array::from_bytes(dtype, &[n], &y[..w].repeat(n)).unwrap();
            let aval = ShapedArray::new(&[n], dtype, false);
            let ops: &[Op] = if dtype == DType::Bool {
                &[Op::And, Op::Or, Op::Xor]
            } else {
                &[
                    Op::And,
                    Op::Or,
                    Op::Xor,
                    Op::ShiftLeft,
                    Op::ShiftRightLogical,
                ]
            };
            for &op in ops {
                for (p, q, r) in [(&a, &b, &b), (&a, &s, &full), (&s, &a, &a)] {
                    let fast = binary(op, p, q, &aval).expect("a fast path");
                    let (p, q) = if p.size() == 1 { (&full, r) } else { (p, r) };
                    let slow = generic_binary(op, p, q, &aval).unwrap();
                    assert_eq!(fast.bytes(), slow.as_bytes(), "{op:?} {dtype}");
                }
            }
        }
        let special: [u32; 8] = [
            0,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0001,
            0x8000_0001,
            0x0000_0001,
            0x3f80_0000,
        ];
        let f: Vec<u32> = bits(n, 23)
            .into_iter()
            .enumerate()
            .map(|(i, b)| match i % 4 {
                0 => special[(b % 8) as usize],
                1 => (b as u32) & 0x80ff_ffff,
                _ => b as u32,
            })
            .collect();
        let g: Vec<u32> = f.iter().rev().copied().collect();
        let bytes = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|w| w.to_le_bytes()).collect() };
        let a = Array::from_bytes(DType::Float32, &[n], &bytes(&f)).unwrap();
        let b = Array::from_bytes(DType::Float32, &[n], &bytes(&g)).unwrap();
        let bools = ShapedArray::new(&[n], DType::Bool, false);
        for op in [Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge] {
            let fast = binary(op, &a, &b, &bools).expect("a fast path");
            let slow = generic_binary(op, &a, &b, &bools).unwrap();
            assert_eq!(fast.bytes(), slow.as_bytes(), "{op:?}");
            for &v in &special {
                let s = Array::from_bytes(DType::Float32, &[], &v.to_le_bytes()).unwrap();
                let full = Array::from_bytes(DType::Float32, &[n], &bytes(&vec![v; n])).unwrap();
                let fast = binary(op, &a, &s, &bools).expect("a fast path");
                let slow = generic_binary(op, &a, &full, &bools).unwrap();
                assert_eq!(fast.bytes(), slow.as_bytes(), "{op:?} by {v:x}");
            }
        }
        let floats = ShapedArray::new(&[n], DType::Float32, false);
        for op in [Op::Neg, Op::Abs] {
            let fast = unary(op, &a, &floats).expect("a fast path");
            let slow = super::super::elementwise::generic_unary(op, &a, &floats).unwrap();
            let diff = fast
                .bytes()
                .chunks(4)
                .zip(slow.as_bytes().chunks(4))
                .zip(&f)
                .find(|((p, q), _)| p != q);
            assert!(diff.is_none(), "{op:?}: {diff:x?}");
        }
    }

    #[test]
    fn eight_bit_floats_agree_on_every_pair() {
        let a: Vec<u8> = (0..=u16::MAX).map(|i| (i >> 8) as u8).collect();
        let b: Vec<u8> = (0..=u16::MAX).map(|i| i as u8).collect();
        for dtype in [
            DType::Float8E4M3Fn,
            DType::Float8E5M2,
            DType::Float8E4M3B11Fnuz,
            DType::Float8E8M0Fnu,
            DType::Float8E4M3Fnuz,
            DType::Float8E5M2Fnuz,
            DType::Float8E3M4,
            DType::Float8E4M3,
        ] {
            check(dtype, &a, &b, a.len());
            // Computed by AVX-512 VBMI where the CPU has it, for every format but e8m0fnu
            // (whose planes `simd8` refuses).
            for op in [Op::Add, Op::Sub, Op::Mul, Op::Div] {
                let computed = super::super::simd8::available() && dtype != DType::Float8E8M0Fnu;
                assert_eq!(
                    eight(op, dtype).unwrap().computed(),
                    computed,
                    "{dtype} {op:?}"
                );
            }
        }
    }
}
