//! `select_n`, `clamp` and `bitcast_convert_type`, with `jax.lax`'s rules and messages.
//!
//! - `select_n(which, *cases)`: `which` bool (at most two cases) or any integer, scalar or of
//!   the cases' shape; out-of-range integer predicates pick the nearest case (XLA's tree of
//!   comparisons). The result is weak when every case is.
//! - `clamp(min, x, max)`: `max(min(x, max), min)` in `x`'s lane with NaN propagating;
//!   `min`/`max` may be scalars.
//! - `bitcast_convert_type[new_dtype]`: the elements' bit patterns, little-endian; a narrower
//!   type adds a trailing dimension, a wider one consumes it (bits of sub-byte types count).

use super::{ad, batching};
use crate::core::bind;

use super::ops;
use super::{Avals, Outputs};
use crate::core::{BatchDims, Lin};
use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind};

use super::elementwise::lanes::{Lane, with_lane};
use super::elementwise::{ANY, Arith, check_same_dtypes, refuse_dtype};
use super::{Param, Params, Primitive};
use crate::array::storage::Word64;
use crate::array::storage::pool::Pooled;
use crate::array::storage::sealed::Words;
use crate::array::{Array, ShapedArray, Storage, Word, layout, py_shape};

fn type_error(msg: String) -> Error {
    Error::refused(Exception::TypeError, msg)
}

fn select_shape_rule(
    _: &'static Primitive,
    inputs: &[&ShapedArray],
    _: &Params,
) -> Result<Avals, Error> {
    let Some((which, cases)) = inputs.split_first() else {
        return Err(type_error(
            "select_n() missing required argument: 'which'".into(),
        ));
    };
    let Some(first) = cases.first() else {
        return Err(type_error("select must have at least one case".into()));
    };
    if cases.iter().any(|c| c.shape() != first.shape()) {
        let shapes: Vec<String> = cases.iter().map(|c| py_shape(c.shape())).collect();
        return Err(type_error(format!(
            "select cases must have the same shapes, got [{}].",
            shapes.join(", ")
        )));
    }
    if !which.shape().is_empty() && which.shape() != first.shape() {
        return Err(type_error(format!(
            "select `which` must be scalar or have the same shape as cases, got `which` shape \
             {} but case shape {}.",
            py_shape(which.shape()),
            py_shape(first.shape())
        )));
    }
    check_same_dtypes("select", Some("where"), cases)?;
    let wk = which.dtype().kind();
    if !matches!(wk, Kind::Bool | Kind::SignedInt | Kind::UnsignedInt) {
        return Err(type_error(format!(
            "select `which` must be boolean or integer type, got {}.",
            which.dtype()
        )));
    }
    if wk == Kind::Bool && cases.len() > 2 {
        return Err(type_error(
            "select with boolean `which` cannot have > 2 cases.".into(),
        ));
    }
    let weak = cases.iter().all(|c| c.weak_type());
    Ok(smallvec::smallvec![ShapedArray::new(
        first.shape(),
        first.dtype(),
        weak
    )])
}

/// How a predicate's stored word reads as a case index: its integer value (sign-extended from
/// `bits` when `signed`; bool bytes are unsigned) clamped to `0..=last`.
#[derive(Clone, Copy)]
struct CaseIndex {
    signed: bool,
    bits: u32,
    last: usize,
}

impl CaseIndex {
    fn new(which: DType, n_cases: usize) -> CaseIndex {
        CaseIndex {
            signed: which.kind() == Kind::SignedInt,
            bits: which.bits(),
            last: n_cases.saturating_sub(1),
        }
    }

    /// The case of the stored word `p` (the whole word: bits above a narrow type's width,
    /// which valid arrays do not have, count as they are).
    #[inline(always)]
    fn of(self, p: u64) -> usize {
        if !self.signed {
            return Ord::min(p, self.last as u64) as usize;
        }
        // Words of signed types narrower than 64 bits are at most 32 bits wide: exact in i64.
        let v = if self.bits >= 64 {
            p as i64
        } else {
            p as i64 - (((p >> (self.bits - 1)) & 1) << self.bits) as i64
        };
        v.clamp(0, self.last as i64) as usize
    }
}

/// `b` where `which` holds a positive value, else `a` (`select_n` of two cases of one word per
/// element), branch-free so that it vectorises.
fn select2<P: Word64, W: Word64>(ci: CaseIndex, which: &[P], a: &[W], b: &[W], out: &mut [W]) {
    #[inline(always)]
    fn blend<W: Word64>(pick_b: bool, a: W, b: W) -> W {
        let m = 0u64.wrapping_sub(u64::from(pick_b));
        W::from_u64((a.to_u64() & !m) | (b.to_u64() & m))
    }
    let it = out.iter_mut().zip(which).zip(a.iter().zip(b));
    if !ci.signed {
        for ((o, &p), (&x, &y)) in it {
            *o = blend(p.to_u64() != 0, x, y);
        }
    } else if ci.bits >= 64 {
        for ((o, &p), (&x, &y)) in it {
            *o = blend(p.to_u64() as i64 > 0, x, y);
        }
    } else {
        let sh = ci.bits - 1;
        for ((o, &p), (&x, &y)) in it {
            let p = p.to_u64();
            let v = p as i64 - (((p >> sh) & 1) << ci.bits) as i64;
            *o = blend(v > 0, x, y);
        }
    }
}

/// [`select2`] for predicate words `P`, if the cases are words of at most 64 bits.
fn select2_words<P: Word64>(
    which: &[P],
    ci: CaseIndex,
    a: &Storage,
    b: &Storage,
    n: usize,
) -> Option<Storage> {
    fn with<P: Word64, W: Word64>(
        which: &[P],
        ci: CaseIndex,
        a: &Storage,
        b: &Storage,
        n: usize,
    ) -> Option<Storage> {
        let (a, b) = (W::view(a)?, W::view(b)?);
        if which.len() != n || a.len() != n || b.len() != n {
            return None;
        }
        Some(Storage::words::<W>(n, |out| select2(ci, which, a, b, out)))
    }
    match a {
        Storage::W8(_) => with::<P, u8>(which, ci, a, b, n),
        Storage::W16(_) => with::<P, u16>(which, ci, a, b, n),
        Storage::W32(_) => with::<P, u32>(which, ci, a, b, n),
        Storage::W64(_) => with::<P, u64>(which, ci, a, b, n),
        Storage::W128(_) => None,
    }
}

/// Elements per block of case indices (computed from the predicate, then used to pick).
const SELECT_BLOCK: usize = 512;

/// The case indices of predicate words `pred` into `idx`.
fn case_indices<P: Word64>(pred: &[P], ci: CaseIndex, idx: &mut [u32]) {
    for (i, &p) in idx.iter_mut().zip(pred) {
        *i = ci.of(p.to_u64()) as u32;
    }
}

/// `select_n` of a per-element predicate on any cases (`k` words of `W` per element).
fn select_words<W: Word + Pooled>(
    which: &Array,
    ci: CaseIndex,
    cases: &[&Array],
    n: usize,
    k: usize,
) -> Option<Storage> {
    let views: Vec<&[W]> = cases
        .iter()
        .map(|c| W::view(c.storage()).filter(|v| v.len() == n * k))
        .collect::<Option<_>>()?;
    let pred = which.storage();
    // The predicate's words, block by block, as case indices.
    let indices = |start: usize, idx: &mut [u32]| -> Option<()> {
        let m = idx.len();
        match layout(which.dtype()).0 {
            1 => case_indices(u8::view(pred)?.get(start..start + m)?, ci, idx),
            2 => case_indices(u16::view(pred)?.get(start..start + m)?, ci, idx),
            4 => case_indices(u32::view(pred)?.get(start..start + m)?, ci, idx),
            _ => case_indices(u64::view(pred)?.get(start..start + m)?, ci, idx),
        }
        Some(())
    };
    let mut ok = true;
    let data = Storage::words::<W>(n * k, |out| {
        let mut idx = [0u32; SELECT_BLOCK];
        for (b, o) in out.chunks_mut(SELECT_BLOCK * k).enumerate() {
            let start = b * SELECT_BLOCK;
            let m = o.len() / k;
            let idx = &mut idx[..m];
            if indices(start, idx).is_none() {
                ok = false;
                return;
            }
            for (j, (o, &i)) in o.chunks_exact_mut(k).zip(&*idx).enumerate() {
                let at = (start + j) * k;
                o.copy_from_slice(&views[i as usize][at..at + k]);
            }
        }
    });
    ok.then_some(data)
}

fn select_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let aval = &out[0];
    let (which, cases) = inputs
        .split_first()
        .ok_or_else(|| type_error("select_n needs `which`".into()))?;
    let ci = CaseIndex::new(which.dtype(), cases.len());
    let n = aval.size();
    let (width, words) = layout(aval.dtype());
    let picked = if which.shape().is_empty() || cases.len() == 1 {
        // One case for every element: its words, shared.
        let p = match which.storage() {
            Storage::W8(v) => v.first().map(|&w| u64::from(w)),
            Storage::W16(v) => v.first().map(|&w| u64::from(w)),
            Storage::W32(v) => v.first().map(|&w| u64::from(w)),
            Storage::W64(v) => v.first().copied(),
            Storage::W128(_) => None,
        };
        let c = if cases.len() == 1 {
            Some(0)
        } else {
            p.map(|p| ci.of(p))
        };
        c.and_then(|c| cases.get(c)).map(|c| c.storage().clone())
    } else if let ([a, b], 1) = (cases, words)
        && width <= 8
    {
        let (a, b) = (a.storage(), b.storage());
        match which.storage() {
            Storage::W8(p) => select2_words(p, ci, a, b, n),
            Storage::W16(p) => select2_words(p, ci, a, b, n),
            Storage::W32(p) => select2_words(p, ci, a, b, n),
            Storage::W64(p) => select2_words(p, ci, a, b, n),
            Storage::W128(_) => None,
        }
    } else {
        match width {
            1 => select_words::<u8>(which, ci, cases, n, words),
            2 => select_words::<u16>(which, ci, cases, n, words),
            4 => select_words::<u32>(which, ci, cases, n, words),
            8 => select_words::<u64>(which, ci, cases, n, words),
            _ => select_words::<u128>(which, ci, cases, n, words),
        }
    };
    let data = picked.ok_or_else(|| {
        Error::refused(
            Exception::RuntimeError,
            "select_n: operands whose storage does not hold their shape",
        )
    })?;
    Ok(smallvec::smallvec![canonical_nans(Array::from_parts(
        aval.clone(),
        data
    ))])
}

/// A selection's result as XLA gives it: bfloat16 and the 8-bit floats move through float32,
/// so their NaN payloads become canonical (keeping the sign).
fn canonical_nans(y: Array) -> Array {
    let d = y.dtype();
    if d.kind() == Kind::Float
        && d.bits() <= 16
        && !matches!(d, DType::Float16 | DType::Float8E8M0Fnu)
    {
        let v = f32::load_raw(&y);
        return Array::from_parts(y.aval().clone(), f32::store_raw(d, v));
    }
    y
}

/// The `select_n` primitive.
pub static SELECT_N: Primitive = Primitive::new("select_n", None, select_shape_rule, select_impl)
    .jvp(select_n_jvp)
    .transpose(select_n_transpose)
    .batch(select_n_batch)
    .takes_float0();

fn clamp_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    _: &Params,
) -> Result<Avals, Error> {
    let (lo, x, hi) = (inputs[0], inputs[1], inputs[2]);
    for (what, b) in [("min", lo), ("max", hi)] {
        if !b.shape().is_empty() && b.shape() != x.shape() {
            return Err(type_error(format!(
                "clamp requires {what}.shape == operand.shape or {what}.shape == (), got \
                 {what}.shape={}, operand.shape={}.",
                py_shape(b.shape()),
                py_shape(x.shape())
            )));
        }
    }
    for (i, a) in inputs.iter().enumerate() {
        if !ANY.accepts(a.dtype()) {
            return Err(refuse_dtype(prim.name, a.dtype(), Some(i), &ANY));
        }
    }
    check_same_dtypes("clamp", None, inputs)?;
    let weak = inputs.iter().all(|a| a.weak_type());
    Ok(smallvec::smallvec![ShapedArray::new(
        x.shape(),
        x.dtype(),
        weak
    )])
}

fn clamp_kernel<T: Arith>(inputs: &[&Array], out: &ShapedArray) -> Storage {
    let lo = T::load(inputs[0]);
    let x = T::load(inputs[1]);
    let hi = T::load(inputs[2]);
    let at = |v: &[T], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    let r: Vec<T> = x
        .iter()
        .enumerate()
        .map(|(i, &a)| a.max(at(&lo, i)).min(at(&hi, i)))
        .collect();
    T::store(out.dtype(), r)
}

fn clamp_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let aval = &out[0];
    let d = inputs[1].dtype();
    let data = with_lane!(d, T => clamp_kernel::<T>(inputs, aval), {
        return Err(Error::refused(
            Exception::NotImplementedError,
            format!("{} of {d} arrays is not implemented", prim.name),
        ));
    });
    Ok(smallvec::smallvec![Array::from_parts(aval.clone(), data)])
}

/// The `clamp` primitive.
pub static CLAMP: Primitive =
    Primitive::new("clamp", Some(3), clamp_shape_rule, clamp_impl).batch(clamp_batch);

/// `dtypes.itemsize_bits`: the bits of one element (8 for bool).
fn itemsize_bits(d: DType) -> u32 {
    if d == DType::Bool { 8 } else { d.bits() }
}

fn new_dtype(prim: &str, params: &Params) -> Result<DType, Error> {
    match params.require(prim, "new_dtype")? {
        Param::DType(d) => Ok(*d),
        _ => Err(type_error(format!("{prim} new_dtype must be a dtype"))),
    }
}

fn bitcast_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let new = new_dtype(prim.name, params)?;
    let old = x.dtype();
    if old.is_float0() || new.is_float0() {
        return Err(Error::refused(
            Exception::ValueError,
            format!(
                "unexpected input: dtype=dtype({})",
                DType::Float0.numpy_str()
            ),
        ));
    }
    if old.is_extended() || new.is_extended() {
        return Err(type_error(format!(
            "bitcast_convert_type does not accept dtype {}.",
            if old.is_extended() { old } else { new }
        )));
    }
    let (ob, nb) = (itemsize_bits(old), itemsize_bits(new));
    let shape: Vec<usize> = if ob == nb {
        x.shape().to_vec()
    } else if ob > nb {
        let mut s = x.shape().to_vec();
        s.push((ob / nb) as usize);
        s
    } else {
        let dim = x.shape().last().copied().unwrap_or(1);
        if dim.checked_mul(ob as usize) != Some(nb as usize) {
            return Err(Error::refused(
                Exception::ValueError,
                format!(
                    "Attempting to convert array of shape {} from {old} of size {ob} bits to \
                     {new} of size {nb}, bits but {dim} * {ob} != {nb}",
                    py_shape(x.shape())
                ),
            ));
        }
        x.shape()[..x.ndim().saturating_sub(1)].to_vec()
    };
    let special = |d: DType| d == DType::Bool || d.kind() == Kind::Complex;
    if (special(old) || special(new)) && old != new {
        return Err(type_error(format!(
            "lax.bitcast_convert_type does not support bool or complex values unless the \
             operand and destination types match. Got operand dtype={old}, \
             new_dtype={}. Consider using the arr.view() method instead.",
            np_dtype_repr(new)
        )));
    }
    Ok(smallvec::smallvec![ShapedArray::new(&shape, new, false)])
}

/// NumPy's `repr` of a dtype: `dtype('int8')`, `dtype(int4)` for ml_dtypes' types.
fn np_dtype_repr(d: DType) -> String {
    let ml = d.kind() == Kind::Float
        && !matches!(d, DType::Float16 | DType::Float32 | DType::Float64)
        || matches!(d, DType::Int4 | DType::Int2 | DType::UInt4 | DType::UInt2);
    if ml {
        format!("dtype({d})")
    } else {
        format!("dtype('{d}')")
    }
}

fn bitcast_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let x = inputs[0];
    let aval = &out[0];
    let (old, new) = (x.dtype(), aval.dtype());
    let (ob, nb) = (itemsize_bits(old), itemsize_bits(new));
    let (ow, _) = layout(old);
    let (nw, _) = layout(new);
    let n_out = aval.size();
    let full = ob as usize == 8 * ow && nb as usize == 8 * nw;
    let bytes = x.as_bytes();
    let data = if full && ow == nw {
        // The same words.
        Some(x.storage().clone())
    } else if full && bytes.len() == n_out * nw {
        // Whole words of either width: the same little-endian bytes.
        Storage::overwritten(nw, n_out, |out| {
            out.copy_from_slice(bytes);
            Ok::<(), Error>(())
        })
        .ok()
    } else {
        match ow {
            1 => repack_from::<u8>(x, ob, nb, nw, n_out),
            2 => repack_from::<u16>(x, ob, nb, nw, n_out),
            4 => repack_from::<u32>(x, ob, nb, nw, n_out),
            8 => repack_from::<u64>(x, ob, nb, nw, n_out),
            _ => None,
        }
    };
    let data = data.ok_or_else(|| {
        Error::refused(
            Exception::NotImplementedError,
            format!("bitcast_convert_type from {old} to {new} is not implemented"),
        )
    })?;
    Ok(smallvec::smallvec![Array::from_parts(aval.clone(), data)])
}

/// The bits of `x` (words of `I`, `ob` bits per element) as `n_out` words of `nw` bytes.
fn repack_from<I: Word64>(x: &Array, ob: u32, nb: u32, nw: usize, n_out: usize) -> Option<Storage> {
    let src = I::view(x.storage())?;
    Some(match nw {
        1 => Storage::words::<u8>(n_out, |out| repack(src, ob, nb, out)),
        2 => Storage::words::<u16>(n_out, |out| repack(src, ob, nb, out)),
        4 => Storage::words::<u32>(n_out, |out| repack(src, ob, nb, out)),
        8 => Storage::words::<u64>(n_out, |out| repack(src, ob, nb, out)),
        _ => return None,
    })
}

/// The elements of `src` (`ob` bits each, in the low bits of their words) as elements of `nb`
/// bits in `out`: split into `ob / nb` parts (low bits first) when narrowing, joined from
/// `nb / ob` consecutive elements when widening; words `out` has beyond them are zero.
fn repack<I: Word64, O: Word64>(src: &[I], ob: u32, nb: u32, out: &mut [O]) {
    let (mi, mo) = (bit_mask(ob), bit_mask(nb));
    let mut written = 0;
    if ob == nb {
        for (o, &s) in out.iter_mut().zip(src) {
            *o = O::from_u64(s.to_u64() & mi);
            written += 1;
        }
    } else if ob > nb {
        let k = (ob / nb) as usize;
        for (chunk, &s) in out.chunks_exact_mut(k).zip(src) {
            let p = s.to_u64() & mi;
            for (j, o) in chunk.iter_mut().enumerate() {
                *o = O::from_u64((p >> (j as u32 * nb)) & mo);
            }
            written += k;
        }
    } else {
        let k = (nb / ob) as usize;
        for (o, chunk) in out.iter_mut().zip(src.chunks_exact(k)) {
            let p = chunk.iter().enumerate().fold(0u64, |acc, (j, &s)| {
                acc | (s.to_u64() & mi) << (j as u32 * ob)
            });
            *o = O::from_u64(p);
            written += 1;
        }
    }
    out[written..].fill(O::from_u64(0));
}

/// The low `bits` bits (at most 64).
fn bit_mask(bits: u32) -> u64 {
    if bits >= 64 { !0 } else { (1u64 << bits) - 1 }
}

/// The `bitcast_convert_type` primitive.
pub static BITCAST_CONVERT_TYPE: Primitive = Primitive::new(
    "bitcast_convert_type",
    Some(1),
    bitcast_shape_rule,
    bitcast_impl,
)
.jvp(ad::zero_jvp)
.batch(bitcast_batch)
.refuses_float0(|_, _| {
    Error::refused(
        Exception::ValueError,
        format!(
            "unexpected input: dtype=dtype({})",
            DType::Float0.numpy_str()
        ),
    )
});

// ---- JVP and transpose rules

/// `select_n`: linear in its cases jointly, `which` constant.
fn select_n_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    ad::multilinear_from(prim, primals, tangents, params, 1)
}

/// `select_n` transposed: each linear case gets the cotangent where it was selected, zeros
/// elsewhere.
fn select_n_transpose(
    _: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    _: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let which = ins[0].known()?;
    let zeros = ops::zeros_like(&ct)?;
    let mut out = vec![None];
    for (i, l) in ins.iter().enumerate().skip(1) {
        out.push(if l.is_linear() {
            let mut cases: Vec<&Array> = vec![&zeros; ins.len() - 1];
            cases[i - 1] = &ct;
            Some(ops::select_n(which, &cases)?)
        } else {
            None
        });
    }
    Ok(out)
}

// ---- batching rules

/// `select_n`: the cases batched at the front (full size); `which` stays a 0-d operand when
/// it is one for every example, else is batched at the front and broadcast to the cases.
fn select_n_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let cases = args[1..]
        .iter()
        .zip(&dims[1..])
        .map(|(x, d)| batching::bdim_at_front(x, *d, size))
        .collect::<Result<Vec<Array>, Error>>()?;
    let full = cases
        .first()
        .map(|c| c.shape().to_vec())
        .unwrap_or_default();
    let which = batching::scalar_or_full(&args[0], dims[0], &full)?;
    let mut ins = vec![which];
    ins.extend(cases);
    Ok((bind(prim, &batching::refs(&ins), params)?, vec![Some(0)]))
}

/// `clamp`: the operand batched at the front; each bound stays 0-d when it is one for every
/// example, else is batched at the front and broadcast to the operand.
fn clamp_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let x = batching::bdim_at_front(&args[1], dims[1], size)?;
    let lo = batching::scalar_or_full(&args[0], dims[0], x.shape())?;
    let hi = batching::scalar_or_full(&args[2], dims[2], x.shape())?;
    Ok((bind(prim, &[&lo, &x, &hi], params)?, vec![Some(0)]))
}

/// `bitcast_convert_type`: in place, unless the batch dimension is the last one (which a
/// bitcast to a wider type would consume): then moved to the front first.
pub(crate) fn bitcast_batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let bdim = batching::first_bdim(dims)?;
    let x = &args[0];
    if bdim + 1 == x.ndim() && bdim != 0 {
        let x = batching::moveaxis(x, bdim, 0)?;
        return Ok((bind(prim, &[&x], params)?, vec![Some(0)]));
    }
    Ok((bind(prim, &[x], params)?, vec![Some(bdim)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lax::bind1;

    /// Bytes from a fixed-seed xorshift.
    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 24) as u8
            })
            .collect()
    }

    /// The element-by-element `bitcast_convert_type` the word loops replaced: each element
    /// through a `u128`, byte by byte.
    fn bitcast_reference(x: &Array, aval: &ShapedArray) -> Vec<u8> {
        let (old, new) = (x.dtype(), aval.dtype());
        let (ob, nb) = (itemsize_bits(old), itemsize_bits(new));
        let (ow, _) = layout(old);
        let (nw, _) = layout(new);
        let mask = |bits: u32| if bits >= 128 { !0 } else { (1u128 << bits) - 1 };
        let read = |i: usize| -> u128 {
            let mut b = [0u8; 16];
            if let Some(s) = x.as_bytes().get(i * ow..(i + 1) * ow) {
                b[..ow].copy_from_slice(s);
            }
            u128::from_le_bytes(b) & mask(ob)
        };
        let n_out = aval.size();
        let mut bytes = vec![0u8; n_out * nw];
        for i in 0..n_out {
            let p = if ob == nb {
                read(i)
            } else if ob > nb {
                let k = (ob / nb) as usize;
                (read(i / k) >> ((i % k) as u32 * nb)) & mask(nb)
            } else {
                let k = (nb / ob) as usize;
                (0..k).fold(0u128, |acc, j| acc | read(i * k + j) << (j as u32 * ob))
            };
            bytes[i * nw..(i + 1) * nw].copy_from_slice(&p.to_le_bytes()[..nw]);
        }
        bytes
    }

    #[test]
    fn bitcasts_of_float0_are_refused() {
        // lax.bitcast_convert_type to or from float0: JAX's ValueError, never a division by
        // float0's zero bits.
        let x = Array::from_vec(vec![1.0f32, 2.0]);
        let z = Array::from_vec(vec![(); 2]);
        for (x, new) in [
            (&x, DType::Float0),
            (&z, DType::Float32),
            (&z, DType::Float0),
        ] {
            let params = Params::new().with("new_dtype", Param::DType(new));
            let e = bind1(&BITCAST_CONVERT_TYPE, &[x], &params).unwrap_err();
            assert_eq!(
                e.to_string(),
                "ValueError: unexpected input: dtype=dtype([('float0', 'V')])"
            );
        }
    }

    #[test]
    fn bitcasts_between_every_pair_of_dtypes_match_the_element_loop() {
        // float0 has no bits to cast (refused: bitcasts_of_float0_are_refused).
        let dtypes: Vec<DType> = DType::ALL
            .iter()
            .copied()
            .filter(|d| !d.is_extended() && !d.is_float0())
            .collect();
        let mut checked = 0;
        for (s, &old) in dtypes.iter().enumerate() {
            for &new in &dtypes {
                let (ob, nb) = (itemsize_bits(old), itemsize_bits(new));
                let shape: &[usize] = if ob < nb {
                    if nb % ob != 0 {
                        continue;
                    }
                    &[3, (nb / ob) as usize]
                } else {
                    &[7, 5]
                };
                let (ow, words) = layout(old);
                let n: usize = shape.iter().product();
                // Random words: narrow types get bits above their width too.
                let x = Array::from_bytes(old, shape, &noise(n * ow * words, s as u64)).unwrap();
                let params = Params::new().with("new_dtype", Param::DType(new));
                let Ok(y) = bind1(&BITCAST_CONVERT_TYPE, &[&x], &params) else {
                    continue;
                };
                assert_eq!(
                    y.as_bytes(),
                    bitcast_reference(&x, y.aval()),
                    "{old} -> {new}"
                );
                checked += 1;
            }
        }
        // Every same-width pair, and the narrowings and widenings among the integers and floats.
        assert!(checked > 400, "{checked} pairs");
    }

    /// The byte-by-byte selection the word loops replaced.
    fn select_reference(which: &Array, cases: &[&Array]) -> Array {
        let last = cases.len() - 1;
        let (width, _) = layout(which.dtype());
        let bits = which.dtype().bits();
        let signed = which.dtype().kind() == Kind::SignedInt;
        let idx: Vec<usize> = if which.dtype() == DType::Bool {
            which
                .as_bytes()
                .iter()
                .map(|&b| usize::from(b != 0).min(last))
                .collect()
        } else {
            which
                .as_bytes()
                .chunks_exact(width)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..width].copy_from_slice(c);
                    let p = u64::from_le_bytes(b);
                    let v: i128 = if signed && bits < 64 && p >> (bits - 1) & 1 == 1 {
                        i128::from(p) - (1i128 << bits)
                    } else if signed && bits == 64 {
                        i128::from(p as i64)
                    } else {
                        i128::from(p)
                    };
                    usize::try_from(v.clamp(0, last as i128)).unwrap_or(0)
                })
                .collect()
        };
        let aval = cases[0].aval().clone();
        let (w, words) = layout(aval.dtype());
        let size = w * words;
        let mut bytes = vec![0u8; aval.size() * size];
        for (i, d) in bytes.chunks_exact_mut(size).enumerate() {
            let k = if which.ndim() == 0 { idx[0] } else { idx[i] };
            d.copy_from_slice(&cases[k].as_bytes()[i * size..(i + 1) * size]);
        }
        canonical_nans(Array::from_bytes(aval.dtype(), aval.shape(), &bytes).unwrap())
    }

    #[test]
    fn select_n_with_every_predicate_dtype_matches_the_byte_loop() {
        let preds: Vec<DType> = DType::ALL
            .iter()
            .copied()
            .filter(|d| matches!(d.kind(), Kind::Bool | Kind::SignedInt | Kind::UnsignedInt))
            .collect();
        let case_dtypes = [
            DType::Float32,
            DType::UInt8,
            DType::BFloat16,
            DType::Float8E4M3Fn,
            DType::Int64,
            DType::Complex128,
            DType::KeyThreefry2x32,
        ];
        // More elements than a block of indices, and a few.
        for n in [1300usize, 3] {
            for (s, &pd) in preds.iter().enumerate() {
                for &cd in &case_dtypes {
                    for n_cases in [1usize, 2, 3, 5] {
                        if pd == DType::Bool && n_cases > 2 {
                            continue;
                        }
                        let (pw, _) = layout(pd);
                        let mut which = noise(n * pw, 100 + s as u64);
                        if pd.kind() != Kind::Bool && pd.bits() >= 8 {
                            // Small values too, so that every case is picked.
                            for (i, c) in which.chunks_exact_mut(pw).enumerate().step_by(2) {
                                c.fill(0);
                                c[0] = (i % 7) as u8;
                            }
                        }
                        let (cw, words) = layout(cd);
                        let cases: Vec<Array> = (0..n_cases)
                            .map(|c| {
                                let b = noise(n * cw * words, 7 * c as u64 + 1);
                                Array::from_bytes(cd, &[n], &b).unwrap()
                            })
                            .collect();
                        let refs: Vec<&Array> = cases.iter().collect();
                        let full = Array::from_bytes(pd, &[n], &which).unwrap();
                        let scalar = Array::from_bytes(pd, &[], &which[..pw]).unwrap();
                        for w in [&full, &scalar] {
                            let mut ins = vec![w];
                            ins.extend(&refs);
                            let got = bind1(&SELECT_N, &ins, &Params::new()).unwrap();
                            let want = select_reference(w, &refs);
                            assert_eq!(
                                got.as_bytes(),
                                want.as_bytes(),
                                "which {pd}{:?}, {n_cases} cases of {cd}",
                                w.shape()
                            );
                        }
                    }
                }
            }
        }
    }
}
