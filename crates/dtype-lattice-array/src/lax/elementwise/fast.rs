//! Fast paths for the hottest elementwise primitives: `add`, `sub`, `mul`, `div`, `max` and
//! `min` of two operands of one shape, or of an array and a scalar (an operand of one element,
//! broadcast without being copied), in float32, bfloat16 or an 8-bit float format; the
//! transcendental functions of [`crate::kernels::vmath`] in float32 and bfloat16; `and`, `or`,
//! `xor`, `shift_left` and `shift_right_logical` of integers (and the bitwise ones of bools)
//! stored a word per element; float32 comparisons, `neg` and `abs`. They compute bit for bit
//! what the generic kernel of [`super::elementwise`] computes (denormals off, one rounding per
//! primitive, the same NaN signs), in one pass over the operands, on all cores for large
//! arrays, by the loops of [`crate::kernels::fast`] into buffers of the storage pool:
//!
//! - float32 and bfloat16: a fused loop (load, flush subnormals, operate, flush, round);
//! - the 8-bit formats: a 65,536-entry table of every pair of operands, built once per
//!   operation and dtype by the generic kernel itself, then one lookup per element; or, for
//!   `add`, `sub`, `mul` and `div` on a CPU with AVX-512 VBMI, the computing kernel of
//!   [`crate::kernels::simd8`], used only once it has matched that table on every pair.
//!
//! The tests below compare them with the generic kernel, bit for bit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use dtype_lattice::{DType, Kind};

use super::Op;
use crate::array::storage::Shared;
use crate::array::storage::pool::{self, Pooled};
use crate::array::{Array, ShapedArray, Storage, Word};
use crate::kernels::fast::{
    BinOp, BitOp, Bits, Cmp, PARALLEL_MIN, Side, bf16_fn_into, bf16_into, bits_into, compare_into,
    f32_fn_into, f32_into, f32_zip, par_map, par_zip, sign_into,
};
use crate::kernels::math::Fn1;
use crate::kernels::{simd, simd8};

/// The fused loops' operation of an elementwise arithmetic primitive (`None`: not one).
pub(crate) fn bin_op(op: Op) -> Option<BinOp> {
    Some(match op {
        Op::Add | Op::AddAny => BinOp::Add,
        Op::Sub => BinOp::Sub,
        Op::Mul => BinOp::Mul,
        Op::Max => BinOp::Max,
        Op::Min => BinOp::Min,
        Op::Div => BinOp::Div,
        _ => return None,
    })
}

/// The bit operation of an elementwise primitive (`None`: not one).
pub(crate) fn bit_op(op: Op) -> Option<BitOp> {
    Some(match op {
        Op::And => BitOp::And,
        Op::Or => BitOp::Or,
        Op::Xor => BitOp::Xor,
        Op::ShiftLeft => BitOp::ShiftLeft,
        Op::ShiftRightLogical => BitOp::ShiftRightLogical,
        _ => return None,
    })
}

/// The comparison of an elementwise primitive (`None`: not one).
pub(crate) fn cmp_op(op: Op) -> Option<Cmp> {
    Some(match op {
        Op::Eq => Cmp::Eq,
        Op::Ne => Cmp::Ne,
        Op::Lt => Cmp::Lt,
        Op::Le => Cmp::Le,
        Op::Gt => Cmp::Gt,
        Op::Ge => Cmp::Ge,
        _ => return None,
    })
}

/// `n` words from the storage pool (not cleared: `fill` writes every one) filled by `fill`.
fn filled<O: Pooled>(n: usize, fill: impl FnOnce(&mut [O])) -> Shared<O> {
    let v = pool::shared::<O, std::convert::Infallible>(n, false, |out| {
        fill(out);
        Ok(())
    });
    match v {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

/// [`par_zip`] into a fresh pooled buffer as long as the sides.
fn zip_par_with<W: Copy + Send + Sync, O: Pooled + Send>(
    x: Side<'_, W>,
    y: Side<'_, W>,
    part: impl Fn(Side<'_, W>, Side<'_, W>, &mut [O]) + Sync,
) -> Shared<O> {
    filled(x.len_with(&y), |out| par_zip(x, y, out, part))
}

/// [`par_map`] into a fresh pooled buffer as long as `x`.
fn map_par<W: Sync, O: Pooled + Send>(x: &[W], f: impl Fn(&[W], &mut [O]) + Sync) -> Shared<O> {
    filled(x.len(), |out| par_map(x, out, f))
}

/// The fast result of a transcendental `op` ([`crate::kernels::vmath`]) on a float32 or
/// bfloat16 array (the output of its dtype and shape), or `None` where the generic kernel
/// must do it.
pub(crate) fn unary(op: Op, x: &Array, out: &ShapedArray) -> Option<Storage> {
    if matches!(op, Op::Neg | Op::Abs)
        && x.dtype() == DType::Float32
        && out.dtype() == DType::Float32
        && crate::array::same_shape(x.shape(), out.shape())
        && let Storage::W32(a) = x.storage()
    {
        let neg = op == Op::Neg;
        return Some(Storage::W32(map_par(a, |xs, os| sign_into(neg, xs, os))));
    }
    let f = op.fn1()?;
    if !(crate::kernels::vmath::fast(f) || f == Fn1::ErfInv && x.dtype() == DType::Float32)
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
            Some(Storage::W32(v))
        }
        // bfloat16's exp2 rounds log(2) and the product to bfloat16 first (the generic kernel).
        Storage::W16(a) if x.dtype() == DType::BFloat16 && f != Fn1::Exp2 => {
            let v = map_par(a, |xs, os| {
                bf16_fn_into(f, xs, os);
            });
            Some(Storage::W16(v))
        }
        _ => None,
    }
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
    let op = match super::op_of(prim)? {
        Op::AddAny => return None,
        op => bin_op(op)?,
    };
    let v = filled(a.len(), |out| f32_zip(op, a, b, out));
    Some(Array::from_parts(x.aval().clone(), Storage::W32(v)))
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
    if let Some(bits) = bit_op(op) {
        return integer(bits, x, y, n, out);
    }
    if let Some(cmp) = cmp_op(op) {
        return compare(cmp, x, y, n, out);
    }
    let op8 = op;
    let op = bin_op(op)?;
    if out.dtype() != d {
        return None;
    }
    match x.storage() {
        Storage::W32(_) if d == DType::Float32 => {
            let (a, b) = (side(x, n)?, side(y, n)?);
            let v = zip_par_with(a, b, |a, b, out| f32_into(op, a, b, out));
            Some(Storage::W32(v))
        }
        Storage::W16(_) if d == DType::BFloat16 => {
            let (a, b) = (side(x, n)?, side(y, n)?);
            let v = zip_par_with(a, b, |a, b, out| bf16_into(op, a, b, out));
            Some(Storage::W16(v))
        }
        Storage::W8(_) if d.kind() == Kind::Float && d.bits() == 8 => {
            let (a, b) = (side::<u8>(x, n)?, side::<u8>(y, n)?);
            let k = eight(op8, d)?;
            let v = zip_par_with(a, b, |a, b, out| k.run(a, b, out));
            Some(Storage::W8(v))
        }
        _ => None,
    }
}

/// `and`, `or`, `xor` (integers and bool) and `shift_left`, `shift_right_logical` (integers)
/// of operands stored a whole word per element, on the words themselves
/// ([`crate::kernels::fast::bits_into`]).
fn integer(op: BitOp, x: &Array, y: &Array, n: usize, out: &ShapedArray) -> Option<Storage> {
    let d = x.dtype();
    let shift = matches!(op, BitOp::ShiftLeft | BitOp::ShiftRightLogical);
    let kind_ok = match d.kind() {
        Kind::SignedInt | Kind::UnsignedInt => true,
        Kind::Bool => !shift,
        _ => false,
    };
    if !kind_ok || out.dtype() != d || d.bits() as usize != 8 * crate::array::layout(d).0 {
        return None;
    }
    fn on<W: Bits + Word + Pooled>(op: BitOp, x: &Array, y: &Array, n: usize) -> Option<Shared<W>> {
        let (a, b) = (side::<W>(x, n)?, side::<W>(y, n)?);
        Some(zip_par_with(a, b, |a, b, out| bits_into(op, a, b, out)))
    }
    Some(match x.storage() {
        Storage::W8(_) => Storage::W8(on::<u8>(op, x, y, n)?),
        Storage::W16(_) => Storage::W16(on::<u16>(op, x, y, n)?),
        Storage::W32(_) => Storage::W32(on::<u32>(op, x, y, n)?),
        Storage::W64(_) => Storage::W64(on::<u64>(op, x, y, n)?),
        _ => return None,
    })
}

/// The comparisons of two float32 operands (subnormals read as zeros of their sign, NaN
/// unordered and unequal to everything), as bools.
fn compare(op: Cmp, x: &Array, y: &Array, n: usize, out: &ShapedArray) -> Option<Storage> {
    if x.dtype() != DType::Float32 || out.dtype() != DType::Bool {
        return None;
    }
    let (a, b) = (side::<u32>(x, n)?, side::<u32>(y, n)?);
    let v = zip_par_with(a, b, |a, b, out| compare_into(op, a, b, out));
    Some(Storage::W8(v))
}

/// How an 8-bit float format's `op` is computed: its table of every pair of operands, and,
/// where this CPU has AVX-512 VBMI and the kernel agreed with the table on every pair, the
/// kernel of [`crate::kernels::simd8`] (`add`, `sub`, `mul` and `div`).
pub(crate) struct Eight {
    op: BinOp,
    table: Vec<u8>,
    simd: Option<simd8::Kernel>,
}

impl Eight {
    /// `out[i] = x[i] op y[i]`.
    fn run(&self, x: Side<'_, u8>, y: Side<'_, u8>, out: &mut [u8]) {
        use simd8::zip;
        let done = self.simd.as_ref().is_some_and(|k| match self.op {
            BinOp::Add => zip::<{ BinOp::ADD }>(k, x, y, out),
            BinOp::Sub => zip::<{ BinOp::SUB }>(k, x, y, out),
            BinOp::Mul => zip::<{ BinOp::MUL }>(k, x, y, out),
            BinOp::Div => zip::<{ BinOp::DIV }>(k, x, y, out),
            _ => false,
        });
        if !done {
            let table: &[u8; 1 << 16] = self.table.as_slice().try_into().expect("2^16 entries");
            simd::zip_sides(x, y, out, |a, b| {
                table[usize::from(u16::from(a) << 8 | u16::from(b))]
            });
        }
    }

    /// Whether the AVX-512 kernel computes it.
    #[cfg(test)]
    pub(crate) fn computed(&self) -> bool {
        self.simd.is_some()
    }

    /// The AVX-512 kernel, if it computes it.
    #[cfg(test)]
    pub(crate) fn kernel(&self) -> Option<&simd8::Kernel> {
        self.simd.as_ref()
    }

    /// The table of every pair (row: the first operand).
    #[cfg(test)]
    pub(crate) fn table(&self) -> &[u8] {
        &self.table
    }
}

type Eights = Mutex<HashMap<(u8, DType), Arc<Eight>>>;

/// `op` of an 8-bit float dtype (see [`Eight`]), built once per operation and dtype: the
/// table by the generic kernel itself on every pair of bytes (row: the first operand).
pub(crate) fn eight(op: Op, dtype: DType) -> Option<Arc<Eight>> {
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
    let out = super::generic_binary(op, &x, &y, &aval).ok()?;
    let mut k = Eight {
        op: bin_op(op)?,
        table: out.as_bytes().to_vec(),
        simd: None,
    };
    if matches!(k.op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div) && simd8::available() {
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
            .and_then(|(e, nans)| simd8::Kernel::new(&values, &e, nans))
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
        let generic = super::super::generic_binary;
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
        use super::super as E;
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
                let want = super::super::generic_binary(op, &x, &y, x.aval()).unwrap();
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
        use crate::kernels::math::real_f32;
        let n = PARALLEL_MIN + 4_321;
        let ops = [
            Op::ErfInv,
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
                        !crate::kernels::vmath::fast(f)
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
        use super::super::generic_binary;
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
            let slow = super::super::generic_unary(op, &a, &floats).unwrap();
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
                let computed = crate::kernels::simd8::available() && dtype != DType::Float8E8M0Fnu;
                assert_eq!(
                    eight(op, dtype).unwrap().computed(),
                    computed,
                    "{dtype} {op:?}"
                );
            }
        }
    }
}
