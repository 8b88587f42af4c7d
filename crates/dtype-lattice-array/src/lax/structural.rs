//! Structural primitives: they move elements without looking at them, so one kernel per
//! storage word width serves every dtype, key dtypes included (`broadcast_in_dim`, `reshape`,
//! `transpose`, `squeeze`, `rev`; [`expand_dims`] binds `broadcast_in_dim` as JAX does). The
//! slicing family is in `slicing.rs`, on the same kernels ([`assemble_any`]).

use super::{ad, batching};
use crate::core::{bind, bind1};

use super::{Avals, Outputs};
use crate::core::{BatchDims, Lin};
use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::{Param, Params, Primitive};
use crate::array::py_shape;
use crate::array::storage::pool::Pooled;
use crate::array::{Array, ShapedArray, Storage, Word};
use crate::core::Hidden;

/// A tuple of integers as Python prints it: `(3,)`, `(0, -1)`, `()`.
pub(crate) fn py_ints(v: &[i64]) -> String {
    match v {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// A required tuple-of-integers parameter, negative entries kept (the shape rules word their
/// refusals of them as JAX does).
pub(crate) fn param_ints(params: &Params, prim: &str, name: &str) -> Result<Vec<i64>, Error> {
    match params.require(prim, name)? {
        Param::Ints(v) => Ok(v.clone()),
        _ => Err(crate::array::invalid(
            &format!("{prim}.{name}"),
            "not a tuple of integers",
        )),
    }
}

/// A required integer parameter.
pub(crate) fn param_int(params: &Params, prim: &str, name: &str) -> Result<i64, Error> {
    match params.require(prim, name)? {
        Param::Int(v) => Ok(*v),
        _ => Err(crate::array::invalid(
            &format!("{prim}.{name}"),
            "not an integer",
        )),
    }
}

/// A `TypeError` refusal.
pub(crate) fn type_error<T>(msg: String) -> Result<T, Error> {
    Err(Error::refused(Exception::TypeError, msg))
}

/// A `ValueError` refusal.
pub(crate) fn value_error<T>(msg: String) -> Result<T, Error> {
    Err(Error::refused(Exception::ValueError, msg))
}

/// An error, not an abort, when memory cannot hold an output of this abstract value (for the
/// primitives whose output can be much larger than their operands: `pad`, `iota`,
/// `dot_general`).
pub(crate) fn check_alloc(out: &ShapedArray) -> Result<(), Error> {
    let (width, words) = crate::array::layout(out.dtype());
    let bytes = out
        .shape()
        .iter()
        .try_fold(width * words, |n, &d| n.checked_mul(d));
    let mut probe: Vec<u8> = Vec::new();
    match bytes.map(|b| probe.try_reserve_exact(b)) {
        Some(Ok(())) => Ok(()),
        _ => Err(crate::array::invalid(
            "shape",
            format!("cannot allocate an array of {out}"),
        )),
    }
}

/// Entries as `usize` once checked in `0..bound`.
pub(crate) fn in_range(v: &[i64], bound: usize) -> Option<Vec<usize>> {
    v.iter()
        .map(|&i| usize::try_from(i).ok().filter(|&u| u < bound))
        .collect()
}

/// Whether the entries are distinct.
pub(crate) fn distinct<T: Ord + Copy>(v: &[T]) -> bool {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.windows(2).all(|w| w[0] != w[1])
}

/// Calls `f` with every multi-index of `shape`, row-major (once for a 0-d shape, never for an
/// empty one).
pub(crate) fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut idx = vec![0; shape.len()];
    loop {
        f(&idx);
        let mut k = shape.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// `out[idx] = srcs[s][j]` where `(s, j) = pick(idx)` for every output multi-index.
fn assemble<W: Word>(
    srcs: &[&[W]],
    out_shape: &[usize],
    words: usize,
    mut pick: impl FnMut(&[usize]) -> (usize, usize),
) -> Storage {
    // An empty result may have other dimensions whose product overflows.
    let n: usize = if out_shape.contains(&0) {
        0
    } else {
        out_shape.iter().product()
    };
    let mut out = Vec::with_capacity(n * words);
    for_each_index(out_shape, |idx| {
        let (s, j) = pick(idx);
        let j = j * words;
        out.extend_from_slice(&srcs[s][j..j + words]);
    });
    W::into_storage(out)
}

/// [`assemble`] over arrays of one dtype (so of one storage width): output element `idx` of
/// `out` is element `j` (row-major) of `xs[s]`, `(s, j) = pick(idx)`.
pub(crate) fn assemble_any(
    xs: &[&Array],
    out: &ShapedArray,
    pick: impl FnMut(&[usize]) -> (usize, usize),
) -> Array {
    fn views<'a, W: Word>(xs: &[&'a Array]) -> Vec<&'a [W]> {
        xs.iter()
            .map(|a| W::view(a.storage()).unwrap_or(&[]))
            .collect()
    }
    let words = crate::array::layout(out.dtype()).1;
    let shape = out.shape();
    let data = match xs.first().map(|x| x.storage()) {
        Some(Storage::W8(_)) | None => assemble::<u8>(&views(xs), shape, words, pick),
        Some(Storage::W16(_)) => assemble::<u16>(&views(xs), shape, words, pick),
        Some(Storage::W32(_)) => assemble::<u32>(&views(xs), shape, words, pick),
        Some(Storage::W64(_)) => assemble::<u64>(&views(xs), shape, words, pick),
        Some(Storage::W128(_)) => assemble::<u128>(&views(xs), shape, words, pick),
    };
    Array::from_parts(out.clone(), data)
}

/// An affine gather: output element `idx` (row-major over `out`'s shape) is element
/// `base + Σ idx[k] · steps[k]` of `x` (steps in elements, negative for `rev`, 0 for a
/// broadcast dimension). Transpose, slice, dynamic_slice and rev are all of this form; the
/// innermost dimension runs as one tight loop (a plain copy when its step is 1) instead of one
/// closure call per element as [`assemble_any`] makes.
pub(crate) fn strided_any(x: &Array, out: &ShapedArray, base: usize, steps: &[isize]) -> Array {
    let words = crate::array::layout(out.dtype()).1;
    let shape = out.shape();
    let data = match x.storage() {
        Storage::W8(_) => strided::<u8>(x, shape, words, base, steps),
        Storage::W16(_) => strided::<u16>(x, shape, words, base, steps),
        Storage::W32(_) => strided::<u32>(x, shape, words, base, steps),
        Storage::W64(_) => strided::<u64>(x, shape, words, base, steps),
        Storage::W128(_) => strided::<u128>(x, shape, words, base, steps),
    };
    Array::from_parts(out.clone(), data)
}

fn strided<W: Word>(
    x: &Array,
    shape: &[usize],
    words: usize,
    base: usize,
    steps: &[isize],
) -> Storage {
    let src: &[W] = W::view(x.storage()).unwrap_or(&[]);
    // An empty result may have other dimensions whose product overflows.
    let n: usize = if shape.contains(&0) {
        0
    } else {
        shape.iter().product()
    };
    let mut out: Vec<W> = Vec::with_capacity(n * words);
    if n == 0 {
        return W::into_storage(out);
    }
    // Dimensions of size 1 move nothing; a dimension contiguous with the next one merges into
    // it (so the inner loop is as long as it can be).
    let mut dims: Vec<(usize, isize)> = Vec::with_capacity(shape.len());
    for (&d, &s) in shape.iter().zip(steps).filter(|(d, _)| **d != 1) {
        match dims.last_mut() {
            Some((pd, ps)) if *ps == s * d as isize => {
                *pd *= d;
                *ps = s;
            }
            _ => dims.push((d, s)),
        }
    }
    let (shape, steps): (Vec<usize>, Vec<isize>) = dims.into_iter().unzip();
    let nd = shape.len();
    let (inner, inner_step) = match nd {
        0 => (1, 0),
        _ => (shape[nd - 1], steps[nd - 1]),
    };
    let outer = &shape[..nd.saturating_sub(1)];
    let mut idx = vec![0usize; outer.len()];
    // The source offset of the current row's first element (kept in isize: steps may be
    // negative, every offset reached is in range).
    let mut row = base as isize;
    loop {
        match (inner_step, words) {
            (1, _) => {
                let start = row as usize * words;
                out.extend_from_slice(&src[start..start + inner * words]);
            }
            (_, 1) => out.extend((0..inner).map(|i| src[(row + i as isize * inner_step) as usize])),
            _ => {
                for i in 0..inner {
                    let start = (row + i as isize * inner_step) as usize * words;
                    out.extend_from_slice(&src[start..start + words]);
                }
            }
        }
        // Odometer over the outer dimensions, moving `row` by each dimension's step.
        let mut k = outer.len();
        loop {
            if k == 0 {
                return W::into_storage(out);
            }
            k -= 1;
            idx[k] += 1;
            row += steps[k];
            if idx[k] < outer[k] {
                break;
            }
            row -= steps[k] * outer[k] as isize;
            idx[k] = 0;
        }
    }
}

/// The row-major flat index of a multi-index.
pub(crate) fn flat(idx: impl IntoIterator<Item = usize>, strides: &[usize]) -> usize {
    idx.into_iter().zip(strides).map(|(i, s)| i * s).sum()
}

/// Row-major strides of a shape, in elements.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        // Saturating: an empty array may have dimensions whose product overflows, and then no
        // element is ever indexed.
        s[i] = s[i + 1].saturating_mul(shape[i + 1]);
    }
    s
}

fn broadcast_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let shape = params.usizes(prim.name, "shape")?;
    let dims = params.usizes(prim.name, "broadcast_dimensions")?;
    let refuse = |why: String| Err(Error::refused(Exception::TypeError, why));
    if dims.len() != x.ndim() {
        return refuse(format!(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got \
             broadcast_dimensions {} for operand ndim {}.",
            py_shape(&dims),
            x.ndim()
        ));
    }
    if dims.windows(2).any(|w| w[0] >= w[1]) {
        return refuse(format!(
            "broadcast_in_dim broadcast_dimensions must be strictly increasing; got \
             broadcast_dimensions {}",
            py_shape(&dims)
        ));
    }
    for (i, &d) in dims.iter().enumerate() {
        if d >= shape.len() || (x.shape()[i] != 1 && x.shape()[i] != shape[d]) {
            return refuse(format!(
                "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their \
                 corresponding dimensions in the target broadcast shape; got operand of shape \
                 {}, target broadcast shape {}, broadcast_dimensions {} ",
                py_shape(x.shape()),
                py_shape(&shape),
                py_shape(&dims)
            ));
        }
    }
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        x.dtype(),
        x.weak_type()
    )])
}

fn broadcast_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let x = inputs[0];
    let dims = params.usizes(prim.name, "broadcast_dimensions")?;
    let out_shape = out[0].shape();
    let in_strides = strides(x.shape());
    // Each output dimension's stride in the input (0 where it broadcasts).
    let mut step = vec![0; out_shape.len()];
    for (i, &d) in dims.iter().enumerate() {
        if x.shape()[i] != 1 {
            step[d] = in_strides[i];
        }
    }
    let words = crate::array::layout(x.dtype()).1;
    let n = out[0].size();
    if x.size() == n && in_order(out_shape, &step) {
        // Only dimensions of size 1 inserted: `x`'s elements in their order, shared.
        return Ok(smallvec::smallvec![Array::from_parts(
            out[0].clone(),
            x.storage().clone()
        )]);
    }
    let data = match x.storage() {
        Storage::W8(v) => broadcast_runs(v, out_shape, &step, words, n),
        Storage::W16(v) => broadcast_runs(v, out_shape, &step, words, n),
        Storage::W32(v) => broadcast_runs(v, out_shape, &step, words, n),
        Storage::W64(v) => broadcast_runs(v, out_shape, &step, words, n),
        Storage::W128(v) => broadcast_runs(v, out_shape, &step, words, n),
    };
    Ok(smallvec::smallvec![Array::from_parts(out[0].clone(), data)])
}

/// Whether a broadcast with these strides (`step[k]`: output dimension k's stride in the
/// input, 0 where it repeats) reads the input's elements in their order: each dimension of
/// the output is of size 1 or strides by the product of the sizes after it.
fn in_order(out_shape: &[usize], step: &[usize]) -> bool {
    let mut expect = 1;
    out_shape.iter().zip(step).rev().all(|(&d, &s)| {
        let fits = d == 1 || s == expect;
        if d != 1 {
            expect *= d;
        }
        fits
    })
}

/// The broadcast of `x` to `out_shape` (`step[k]`: output dimension k's stride in `x`, 0
/// where it repeats), written into a pooled buffer (a fresh one of megabytes costs a page
/// fault per 4 KiB): one fill when `x` is one element, else a run of the last dimension at
/// a time — a copy when the run is contiguous in `x`, a fill when it repeats one element.
fn broadcast_runs<W: Word + Pooled>(
    x: &[W],
    out_shape: &[usize],
    step: &[usize],
    words: usize,
    n: usize,
) -> Storage {
    Storage::words::<W>(n * words, |out| {
        if n == 0 {
            return;
        }
        if words == 1 && step.iter().all(|&s| s == 0) {
            out.fill(x[0]);
            return;
        }
        let Some((&last, outer)) = out_shape.split_last() else {
            out.copy_from_slice(&x[..words]);
            return;
        };
        let last_step = step[outer.len()];
        let width = last * words;
        let mut runs = out.chunks_exact_mut(width.max(1));
        for_each_index(outer, |idx| {
            let base: usize = idx.iter().zip(step).map(|(&i, &s)| i * s).sum();
            let Some(o) = runs.next() else { return };
            let j = base * words;
            match last_step {
                0 if words == 1 => o.fill(x[j]),
                1 => o.copy_from_slice(&x[j..j + width]),
                _ => {
                    for (k, o) in o.chunks_exact_mut(words).enumerate() {
                        let j = (base + k * last_step) * words;
                        o.copy_from_slice(&x[j..j + words]);
                    }
                }
            }
        });
    })
}

/// Parameters jaxprs leave out: the shape (the output's), a `None` sharding, no broadcast
/// dimensions.
const BROADCAST_HIDDEN: &[Hidden] = &[
    ("shape", None),
    ("sharding", Some(&Param::None)),
    ("broadcast_dimensions", Some(&Param::Ints(Vec::new()))),
];

/// The `broadcast_in_dim` primitive.
pub static BROADCAST_IN_DIM: Primitive = Primitive::new(
    "broadcast_in_dim",
    Some(1),
    broadcast_shape_rule,
    broadcast_impl,
)
.jvp(ad::linear_jvp)
.transpose(broadcast_in_dim_transpose)
.batch(broadcast_in_dim_batch)
.prepare(super::moves::prepare)
.takes_float0()
.hides(BROADCAST_HIDDEN);

fn reshape_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let new_sizes = params.usizes(prim.name, "new_sizes")?;
    if let Some(Param::Ints(d)) = params.get("dimensions") {
        let mut seen = vec![false; x.ndim()];
        let ok = d.len() == x.ndim()
            && d.iter().all(|&p| {
                usize::try_from(p)
                    .ok()
                    .and_then(|p| seen.get_mut(p))
                    .is_some_and(|s| !std::mem::replace(s, true))
            });
        if !ok {
            return type_error(format!(
                "reshape dimensions must be a permutation of operand dimensions, got \
                 dimensions {} for shape {}.",
                py_ints(d),
                py_shape(x.shape())
            ));
        }
    }
    if crate::array::checked_size(&new_sizes) != Some(x.size()) {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "reshape total size must be unchanged, got new_sizes {} (of total size {}) for \
                 shape {} (of total size {}).",
                py_shape(&new_sizes),
                crate::array::checked_size(&new_sizes).map_or("overflow".into(), |n| n.to_string()),
                py_shape(x.shape()),
                x.size()
            ),
        ));
    }
    Ok(smallvec::smallvec![ShapedArray::new(
        &new_sizes,
        x.dtype(),
        x.weak_type()
    )])
}

/// `reshape`'s `dimensions` (JAX: the operand is transposed by them first), if they are not
/// `None` and not the identity.
fn reshape_permutation(params: &Params) -> Option<Vec<usize>> {
    match params.get("dimensions") {
        Some(Param::Ints(d)) if d.iter().enumerate().any(|(i, &p)| p != i as i64) => {
            Some(d.iter().map(|&p| p as usize).collect())
        }
        _ => None,
    }
}

fn reshape_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    // (`squeeze`, which shares this implementation, names the dimensions it drops.)
    let perm = (prim.name == "reshape")
        .then(|| reshape_permutation(params))
        .flatten();
    let x = match perm {
        Some(perm) => ad::transpose(inputs[0], &perm)?,
        None => inputs[0].clone(),
    };
    // Row-major elements stay in order: the words are shared.
    Ok(smallvec::smallvec![Array::from_parts(
        out[0].clone(),
        x.storage().clone(),
    )])
}

/// The `reshape` primitive.
pub static RESHAPE: Primitive =
    Primitive::new("reshape", Some(1), reshape_shape_rule, reshape_impl)
        .jvp(ad::linear_jvp)
        .transpose(reshape_transpose)
        .batch(reshape_batch)
        .prepare(super::moves::prepare)
        .takes_float0();

fn transpose_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let perm = param_ints(params, prim.name, "permutation")?;
    let mut sorted = perm.clone();
    sorted.sort_unstable();
    if !sorted.iter().copied().eq(0..x.ndim() as i64) {
        return type_error(format!(
            "transpose permutation isn't a permutation of operand dimensions, got permutation \
             {} for operand shape {}.",
            py_ints(&perm),
            py_shape(x.shape())
        ));
    }
    let shape: Vec<usize> = sorted
        .iter()
        .zip(&perm)
        .map(|(_, &p)| x.shape()[p as usize])
        .collect();
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        x.dtype(),
        x.weak_type()
    )])
}

fn transpose_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let x = inputs[0];
    let perm = params.usizes(prim.name, "permutation")?;
    let st = strides(x.shape());
    let steps: Vec<isize> = perm.iter().map(|&p| st[p] as isize).collect();
    Ok(smallvec::smallvec![strided_any(x, &out[0], 0, &steps)])
}

/// The `transpose` primitive.
pub static TRANSPOSE: Primitive =
    Primitive::new("transpose", Some(1), transpose_shape_rule, transpose_impl)
        .jvp(ad::linear_jvp)
        .transpose(transpose_transpose)
        .batch(transpose_batch)
        .prepare(super::moves::prepare)
        .takes_float0();

fn squeeze_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let dims = param_ints(params, prim.name, "dimensions")?;
    if !distinct(&dims) {
        return value_error(format!("dimensions are not unique: {}", py_ints(&dims)));
    }
    let Some(ok) = in_range(&dims, x.ndim()) else {
        return value_error(format!(
            "dimensions outside range [0, ndim): {}",
            py_ints(&dims)
        ));
    };
    if ok.iter().any(|&d| x.shape()[d] != 1) {
        return value_error(format!(
            "cannot select an axis to squeeze out which has size not equal to one, got \
             shape={} and dimensions={}",
            py_shape(x.shape()),
            py_ints(&dims)
        ));
    }
    let shape: Vec<usize> = (0..x.ndim())
        .filter(|i| !ok.contains(i))
        .map(|i| x.shape()[i])
        .collect();
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        x.dtype(),
        x.weak_type()
    )])
}

/// The `squeeze` primitive.
pub static SQUEEZE: Primitive =
    Primitive::new("squeeze", Some(1), squeeze_shape_rule, reshape_impl)
        .jvp(ad::linear_jvp)
        .transpose(reshape_transpose)
        .batch(squeeze_batch)
        .prepare(super::moves::prepare)
        .takes_float0();

fn rev_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let dims = param_ints(params, prim.name, "dimensions")?;
    if dims.iter().any(|&d| d < 0) {
        return type_error(format!(
            "rev dimensions must have every element be nonnegative, got {}.",
            py_ints(&dims)
        ));
    }
    if !distinct(&dims) {
        return type_error(format!(
            "rev dimensions must be unique, got {}.",
            py_ints(&dims)
        ));
    }
    if in_range(&dims, x.ndim()).is_none() {
        return type_error(format!(
            "rev dimensions must all be less than operand ndim, got dimensions {} for operand \
             ndim {}.",
            py_ints(&dims),
            x.ndim()
        ));
    }
    Ok(smallvec::smallvec![x.clone()])
}

fn rev_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let x = inputs[0];
    let dims = params.usizes(prim.name, "dimensions")?;
    let st = strides(x.shape());
    // A reversed dimension starts at its last element and steps backwards (an empty array
    // reads nothing, whatever its base).
    let base = dims
        .iter()
        .map(|&k| x.shape()[k].saturating_sub(1).saturating_mul(st[k]))
        .fold(0usize, usize::saturating_add);
    let steps: Vec<isize> = (0..x.ndim())
        .map(|k| {
            let s = st[k] as isize;
            if dims.contains(&k) { -s } else { s }
        })
        .collect();
    Ok(smallvec::smallvec![strided_any(x, &out[0], base, &steps)])
}

/// The `rev` primitive.
pub static REV: Primitive = Primitive::new("rev", Some(1), rev_shape_rule, rev_impl)
    .jvp(ad::linear_jvp)
    .transpose(rev_transpose)
    .batch(rev_batch)
    .prepare(super::moves::prepare)
    .takes_float0();

/// `lax.stop_gradient`'s primitive (`ad_util.stop_gradient_p`): the identity, whose tangent is
/// zero, so no gradient flows back through it; batched as it is.
fn stop_gradient_shape_rule(
    _: &'static Primitive,
    inputs: &[&ShapedArray],
    _: &Params,
) -> Result<Avals, Error> {
    Ok(smallvec::smallvec![inputs[0].clone()])
}

fn stop_gradient_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    _: &[ShapedArray],
) -> Result<Outputs, Error> {
    Ok(smallvec::smallvec![inputs[0].clone()])
}

/// The `stop_gradient` primitive.
pub static STOP_GRADIENT: Primitive = Primitive::new(
    "stop_gradient",
    Some(1),
    stop_gradient_shape_rule,
    stop_gradient_impl,
)
.jvp(ad::zero_jvp)
.batch(batching::vectorized);

/// `jnp.copy`'s and `jnp.array(x, copy=True)`'s primitive (`lax.copy_p`): the identity, as a
/// primitive of its own; linear (its tangent and cotangent are copied) and batched as it is.
fn copy_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    _: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    Ok(vec![match &cts[0] {
        Some(ct) => Some(bind1(prim, &[ct], params)?),
        None => None,
    }])
}

/// The `copy` primitive.
pub static COPY: Primitive = Primitive::new(
    "copy",
    Some(1),
    stop_gradient_shape_rule,
    stop_gradient_impl,
)
.jvp(ad::linear_jvp)
.transpose(copy_transpose)
.batch(batching::vectorized)
.takes_float0();

/// `lax.expand_dims(x, dimensions)`: inserts unit dimensions at `dims` (negative ones count
/// from the end of the result) by binding `broadcast_in_dim`, as JAX does, so a staged program
/// reads `broadcast_in_dim[broadcast_dimensions=… shape=… sharding=None]` (jaxprs print only
/// a non-empty `broadcast_dimensions`); no dimensions bind nothing.
///
/// ```
/// use dtype_lattice_array::{lax, Array};
/// let x = Array::from_shape_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6])?;
/// assert_eq!(lax::expand_dims(&x, &[0, -1])?.shape(), &[1, 2, 3, 1]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError`s: a dimension out of range of the result's rank (`axis 5 is out of
/// bounds for array of dimension 3`), a repeated one.
pub fn expand_dims(x: &Array, dims: &[i64]) -> Result<Array, Error> {
    if dims.is_empty() {
        return Ok(x.clone()); // JAX stages nothing
    }
    if !distinct(dims) {
        return value_error(format!(
            "repeated axis in lax.expand_dims: {}",
            py_ints(dims)
        ));
    }
    let ndim_out = x.ndim() + dims.len();
    let n = ndim_out as i64;
    let mut norm = Vec::with_capacity(dims.len());
    for &d in dims {
        if d < -n || d >= n {
            return value_error(format!(
                "axis {d} is out of bounds for array of dimension {ndim_out}"
            ));
        }
        norm.push(if d < 0 { (d + n) as usize } else { d as usize });
    }
    if !distinct(&norm) {
        // Python prints the canonical axes as a list here.
        let items: Vec<String> = norm.iter().map(usize::to_string).collect();
        return value_error(format!(
            "repeated axis in lax.expand_dims: [{}]",
            items.join(", ")
        ));
    }
    let mut shape = Vec::with_capacity(ndim_out);
    let mut kept = Vec::with_capacity(x.ndim());
    let mut src = x.shape().iter();
    for i in 0..ndim_out {
        if norm.contains(&i) {
            shape.push(1);
        } else {
            shape.push(src.next().copied().unwrap_or(1));
            kept.push(i as i64);
        }
    }
    let params = Params::new()
        .with(
            "shape",
            Param::Ints(shape.iter().map(|&d| d as i64).collect()),
        )
        .with("broadcast_dimensions", Param::Ints(kept))
        .with("sharding", Param::None);
    super::bind1(&BROADCAST_IN_DIM, &[x], &params)
}

// ---- transpose rules

/// `broadcast_in_dim` transposed: the cotangent summed over the broadcast dimensions (new
/// ones and stretched size-1 ones), reshaped to the operand.
fn broadcast_in_dim_transpose(
    p: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    ad::transpose_first(cts, ins, |ct, a0| {
        let bd = params.usizes(p.name, "broadcast_dimensions")?;
        let sum: Vec<usize> = (0..ct.ndim())
            .filter(|d| match bd.iter().position(|b| b == d) {
                None => true,
                Some(i) => a0.shape()[i] == 1 && ct.shape()[*d] != 1,
            })
            .collect();
        ad::reshape(&ad::reduce_sum(&ct, &sum)?, a0.shape())
    })
}

/// `reshape` and `squeeze` transposed: the cotangent reshaped back (and, for a `reshape`
/// with `dimensions`, to the transposed operand's shape, then transposed back).
fn reshape_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    // (`squeeze`'s `dimensions` are the dimensions it drops.)
    let perm = (prim.name == "reshape")
        .then(|| reshape_permutation(params))
        .flatten();
    ad::transpose_first(cts, ins, |ct, a0| match &perm {
        Some(perm) => {
            let shape: Vec<usize> = perm.iter().map(|&p| a0.shape()[p]).collect();
            let mut inv = vec![0; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inv[p] = i;
            }
            ad::transpose(&ad::reshape(&ct, &shape)?, &inv)
        }
        None => ad::reshape(&ct, a0.shape()),
    })
}

/// `transpose` transposed: the inverse permutation.
fn transpose_transpose(
    p: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    ad::transpose_first(cts, ins, |ct, _| {
        let perm = params.usizes(p.name, "permutation")?;
        let mut inv = vec![0; perm.len()];
        for (i, &q) in perm.iter().enumerate() {
            inv[q] = i;
        }
        ad::transpose(&ct, &inv)
    })
}

/// `rev` transposed: reversed again.
fn rev_transpose(
    p: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    ad::transpose_first(cts, ins, |ct, _| bind1(p, &[&ct], params))
}

// ---- batching rules

/// `broadcast_in_dim`: the batch in front of the target shape.
fn broadcast_in_dim_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let x = batching::bdim_at_front(&args[0], dims[0], size)?;
    let shape = params.usizes(prim.name, "shape")?;
    let bdims = params.usizes(prim.name, "broadcast_dimensions")?;
    let params = params
        .clone()
        .set("shape", super::ints(std::iter::once(size).chain(shape)))
        .set(
            "broadcast_dimensions",
            super::ints(std::iter::once(0).chain(bdims.into_iter().map(|d| d + 1))),
        );
    Ok((bind(prim, &[&x], &params)?, vec![Some(0)]))
}

/// `reshape`: the batch moved to the front and kept there.
fn reshape_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let x = batching::bdim_at_front(&args[0], dims[0], size)?;
    let sizes = params.usizes(prim.name, "new_sizes")?;
    let mut params = params
        .clone()
        .set("new_sizes", super::ints(std::iter::once(size).chain(sizes)));
    if params.get("dimensions").is_some() {
        // JAX's rule: the batch first, the operand's dimensions after it.
        let dims = match reshape_permutation(&params) {
            Some(perm) => super::ints(std::iter::once(0).chain(perm.iter().map(|p| p + 1))),
            None => Param::None,
        };
        params = params.set("dimensions", dims);
    }
    Ok((bind(prim, &[&x], &params)?, vec![Some(0)]))
}

/// `transpose`: the batch dimension first in the permutation.
fn transpose_batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let bdim = batching::first_bdim(dims)?;
    let perm = params.usizes(prim.name, "permutation")?;
    let perm =
        std::iter::once(bdim).chain(perm.into_iter().map(|p| if p >= bdim { p + 1 } else { p }));
    let params = params.clone().set("permutation", super::ints(perm));
    Ok((bind(prim, &[&args[0]], &params)?, vec![Some(0)]))
}

/// `squeeze`: the batch moved to the front, the squeezed dimensions after it.
fn squeeze_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let x = batching::bdim_at_front(&args[0], dims[0], size)?;
    let squeezed = batching::shift_axes(
        &super::structural::param_ints(params, prim.name, "dimensions")?,
        x.ndim() - 1,
        0,
    );
    let params = params.clone().set("dimensions", super::ints(squeezed));
    Ok((bind(prim, &[&x], &params)?, vec![Some(0)]))
}

/// `rev`: the reversed dimensions shifted past the batch dimension.
fn rev_batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let bdim = batching::first_bdim(dims)?;
    let x = &args[0];
    let reversed = batching::shift_axes(
        &super::structural::param_ints(params, prim.name, "dimensions")?,
        x.ndim() - 1,
        bdim,
    );
    let params = params.clone().set("dimensions", super::ints(reversed));
    Ok((bind(prim, &[x], &params)?, vec![Some(bdim)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lax::{Param, bind1};

    #[test]
    fn broadcast_in_dim_repeats_along_new_and_unit_dimensions() {
        let x = Array::from_shape_vec(&[2, 1], vec![1i32, 2]).unwrap();
        let p = Params::new()
            .with("shape", Param::Ints(vec![3, 2, 4]))
            .with("broadcast_dimensions", Param::Ints(vec![1, 2]));
        let y = bind1(&BROADCAST_IN_DIM, &[&x], &p).unwrap();
        assert_eq!(y.shape(), &[3, 2, 4]);
        let v = y.to_vec::<i32>().unwrap();
        assert_eq!(&v[..8], &[1, 1, 1, 1, 2, 2, 2, 2]);
        assert_eq!(&v[8..16], &v[..8]);
    }

    #[test]
    fn reshape_keeps_the_order_and_refuses_another_size() {
        let x = Array::from_vec(vec![1u8, 2, 3, 4, 5, 6]);
        let p = Params::new().with("new_sizes", Param::Ints(vec![2, 3]));
        let y = bind1(&RESHAPE, &[&x], &p).unwrap();
        assert_eq!(
            (y.shape(), y.to_vec::<u8>().unwrap()),
            (&[2usize, 3][..], vec![1, 2, 3, 4, 5, 6])
        );
        let p = Params::new().with("new_sizes", Param::Ints(vec![4]));
        let e = bind1(&RESHAPE, &[&x], &p).unwrap_err();
        assert_eq!(e.exception(), Some(Exception::TypeError));
    }

    /// `dimensions` transpose the operand first (`lax.reshape(x, (6,), dimensions=(1, 0))`
    /// of `[[1, 2, 3], [4, 5, 6]]` is `[1, 4, 2, 5, 3, 6]`); a non-permutation is JAX's
    /// `TypeError`.
    #[test]
    fn reshape_with_dimensions_transposes_first() {
        let x = Array::from_shape_vec(&[2, 3], vec![1u8, 2, 3, 4, 5, 6]).unwrap();
        let p = Params::new()
            .with("new_sizes", Param::Ints(vec![6]))
            .with("dimensions", Param::Ints(vec![1, 0]));
        let y = bind1(&RESHAPE, &[&x], &p).unwrap();
        assert_eq!(y.to_vec::<u8>().unwrap(), [1, 4, 2, 5, 3, 6]);
        let bad = p.set("dimensions", Param::Ints(vec![1, 1]));
        let e = bind1(&RESHAPE, &[&x], &bad).unwrap_err();
        assert!(e.to_string().contains("must be a permutation"), "{e}");
    }

    fn keys(shape: &[usize]) -> Array {
        let n: usize = shape.iter().product();
        let bytes: Vec<u8> = (0..n as u32)
            .flat_map(|k| [2 * k, 2 * k + 1])
            .flat_map(u32::to_le_bytes)
            .collect();
        Array::from_bytes(dtype_lattice::DType::KeyThreefry2x32, shape, &bytes).unwrap()
    }

    /// The key numbers (0, 1, 2 … in the input) of a key array, from its first words.
    fn key_ids(a: &Array) -> Vec<u32> {
        a.as_bytes()
            .chunks_exact(8)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) / 2)
            .collect()
    }

    #[test]
    fn structural_kernels_move_whole_keys() {
        let x = keys(&[2, 3]);
        let t = bind1(
            &TRANSPOSE,
            &[&x],
            &Params::new().with("permutation", Param::Ints(vec![1, 0])),
        )
        .unwrap();
        assert_eq!(
            (t.shape(), key_ids(&t)),
            (&[3usize, 2][..], vec![0, 3, 1, 4, 2, 5])
        );
        let r = bind1(
            &REV,
            &[&x],
            &Params::new().with("dimensions", Param::Ints(vec![1])),
        )
        .unwrap();
        assert_eq!(key_ids(&r), [2, 1, 0, 5, 4, 3]);
        let c = bind1(
            &crate::lax::slicing::CONCATENATE,
            &[&x, &x],
            &Params::new().with("dimension", Param::Int(0)),
        )
        .unwrap();
        assert_eq!(key_ids(&c), [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5]);
        let e = expand_dims(&x, &[1]).unwrap();
        assert_eq!((e.shape(), key_ids(&e)), (&[2usize, 1, 3][..], key_ids(&x)));
    }

    #[test]
    fn expand_dims_refuses_as_jax_does() {
        let x = Array::from_vec(vec![1i8, 2]);
        let e = expand_dims(&x, &[0, 0]).unwrap_err();
        assert_eq!(e.exception(), Some(Exception::ValueError));
        assert!(expand_dims(&x, &[2]).is_err());
        assert_eq!(expand_dims(&x, &[-1]).unwrap().shape(), &[2, 1]);
    }
}
