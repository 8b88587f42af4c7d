//! `select_n`, `clamp` and `bitcast_convert_type`, with `jax.lax`'s rules and messages.
//!
//! - `select_n(which, *cases)`: `which` bool (at most two cases) or any integer, scalar or of
//!   the cases' shape; out-of-range integer predicates pick the nearest case (XLA's tree of
//!   comparisons). The result is weak when every case is.
//! - `clamp(min, x, max)`: `max(min(x, max), min)` in `x`'s lane with NaN propagating;
//!   `min`/`max` may be scalars.
//! - `bitcast_convert_type[new_dtype]`: the elements' bit patterns, little-endian; a narrower
//!   type adds a trailing dimension, a wider one consumes it (bits of sub-byte types count).

use super::{Avals, Outputs};
use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind};

use super::elementwise::{ANY, Arith, check_same_dtypes, refuse_dtype};
use super::lanes::{Lane, with_lane};
use super::{Param, Params, Primitive};
use crate::array::{Array, ShapedArray, Storage, layout, py_shape};

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

/// The predicate's values as case indices, clamped to the cases.
fn case_indices(which: &Array, n_cases: usize) -> Result<Vec<usize>, Error> {
    let last = n_cases.saturating_sub(1);
    let raw = which.as_bytes();
    let (width, _) = layout(which.dtype());
    let bits = which.dtype().bits();
    let signed = which.dtype().kind() == Kind::SignedInt;
    if which.dtype() == DType::Bool {
        return Ok(raw.iter().map(|&b| usize::from(b != 0).min(last)).collect());
    }
    Ok(raw
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
        .collect())
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
    let idx = case_indices(which, cases.len())?;
    let n = aval.size();
    let (width, words) = layout(aval.dtype());
    let size = width * words;
    let scalar = which.shape().is_empty();
    let pick = |i: usize| {
        if scalar { idx.first() } else { idx.get(i) }
            .copied()
            .unwrap_or(0)
    };
    // Word by word where every case holds its elements in one word each.
    fn by_word<W: crate::array::storage::Word>(
        cases: &[&Array],
        n: usize,
        pick: impl Fn(usize) -> usize,
    ) -> Option<Storage> {
        let views: Vec<&[W]> = cases
            .iter()
            .map(|c| W::view(c.storage()).filter(|v| v.len() == n))
            .collect::<Option<_>>()?;
        let out: Vec<W> = (0..n)
            .map(|i| views.get(pick(i)).map_or(W::default(), |v| v[i]))
            .collect();
        Some(W::into_storage(out))
    }
    let fast = if words == 1 && cases.iter().all(|c| c.shape() == aval.shape()) {
        match width {
            1 => by_word::<u8>(cases, n, pick),
            2 => by_word::<u16>(cases, n, pick),
            4 => by_word::<u32>(cases, n, pick),
            8 => by_word::<u64>(cases, n, pick),
            _ => None,
        }
    } else {
        None
    };
    let data = match fast {
        Some(d) => d,
        None => Storage::filled(width, n * words, |bytes| {
            for i in 0..n {
                let k = pick(i);
                let src = cases.get(k).map(|c| c.as_bytes()).unwrap_or(&[]);
                if let (Some(s), Some(d)) = (
                    src.get(i * size..(i + 1) * size),
                    bytes.get_mut(i * size..(i + 1) * size),
                ) {
                    d.copy_from_slice(s);
                }
            }
            Ok::<(), Error>(())
        })?,
    };
    let y = Array::from_parts(aval.clone(), data);
    let d = aval.dtype();
    if d.kind() == Kind::Float
        && d.bits() <= 16
        && !matches!(d, DType::Float16 | DType::Float8E8M0Fnu)
    {
        // XLA moves bfloat16 and the 8-bit floats through float32: NaN payloads become
        // canonical (keeping the sign).
        let v = f32::load_raw(&y);
        return Ok(smallvec::smallvec![Array::from_parts(
            aval.clone(),
            f32::store_raw(d, v)
        )]);
    }
    Ok(smallvec::smallvec![y])
}

pub(crate) static SELECT_N: Primitive = Primitive {
    name: "select_n",
    arity: None,
    shape_rule: select_shape_rule,
    impl_rule: select_impl,
    jvp: Some(super::ad::multilinear_jvp),
    transpose: Some(super::transpose::structural_transpose),
    batch: Some(super::batching::select_n),
};

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

pub(crate) static CLAMP: Primitive = Primitive {
    name: "clamp",
    arity: Some(3),
    shape_rule: clamp_shape_rule,
    impl_rule: clamp_impl,
    jvp: None,
    transpose: None,
    batch: Some(super::batching::clamp),
};

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
    let read = |i: usize| -> u128 {
        let mut b = [0u8; 16];
        if let Some(s) = x.as_bytes().get(i * ow..(i + 1) * ow) {
            b[..ow].copy_from_slice(s);
        }
        u128::from_le_bytes(b) & bit_mask(ob)
    };
    let data = Storage::filled(nw, n_out, |bytes| {
        for i in 0..n_out {
            let p = if ob == nb {
                read(i)
            } else if ob > nb {
                let k = (ob / nb) as usize;
                (read(i / k) >> ((i % k) as u32 * nb)) & bit_mask(nb)
            } else {
                let k = (nb / ob) as usize;
                (0..k).fold(0u128, |acc, j| acc | read(i * k + j) << (j as u32 * ob))
            };
            if let Some(d) = bytes.get_mut(i * nw..(i + 1) * nw) {
                d.copy_from_slice(&p.to_le_bytes()[..nw]);
            }
        }
        Ok::<(), Error>(())
    })?;
    Ok(smallvec::smallvec![Array::from_parts(aval.clone(), data)])
}

fn bit_mask(bits: u32) -> u128 {
    if bits >= 128 { !0 } else { (1u128 << bits) - 1 }
}

pub(crate) static BITCAST_CONVERT_TYPE: Primitive = Primitive {
    name: "bitcast_convert_type",
    arity: Some(1),
    shape_rule: bitcast_shape_rule,
    impl_rule: bitcast_impl,
    jvp: Some(super::ad::zero_jvp),
    transpose: None,
    batch: Some(super::batching::bitcast),
};
