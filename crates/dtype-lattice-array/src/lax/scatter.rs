//! `scatter`, `scatter-add`, `scatter-mul`, `scatter-min` and `scatter-max`, as JAX 0.10.2
//! defines, prints and computes them (the gather family's other half, [`super::gather`]):
//! each index vector of `indices` starts a window of the operand, which the updates' window
//! dimensions (`update_window_dims`) fill, combined with what is there by the primitive's
//! operation (`scatter` replaces).
//!
//! XLA's CPU backend applies the updates one at a time in the updates' row-major order, so
//! duplicate indices combine in that order (the last `scatter` wins; sums round in that
//! order). `CLIP` clamps each start so that its window lies in the operand (JAX clamps the
//! indices first); `FILL_OR_DROP` and `PROMISE_IN_BOUNDS` skip an update whose window does
//! not lie wholly in the operand.
//!
//! Rules: JAX's shape rule and messages, the dtype rule, the implementation, the batching
//! rule; `scatter-add` is linear (its JVP and transpose, the transpose of `gather`'s); `scatter`'s
//! JVP is JAX's (ids scattered and gathered back to find the updates that won), as are
//! `scatter-mul`'s JVP and transpose and `scatter-min`'s and `scatter-max`'s JVP (ties share
//! the tangent).

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error};

use super::gather::{
    Mode, Walk, Walked, disjoint, each_index, in_range, index_values, is_index, is_sorted,
    no_duplicates, sorted_in_range, strides, tuple, type_error,
};
use super::{Avals, Outputs, Param, Params, Primitive, bind};
use crate::array::{Array, ShapedArray, element_bytes};
use crate::core::jaxpr::{Atom, ClosedJaxpr, Eqn, Jaxpr, Var};
use crate::core::{Lin, ScatterDimensionNumbers};
use crate::kernels::rows;
use std::sync::Arc;

/// The `scatter` primitive (the updates replace the operand's elements).
pub static SCATTER: Primitive = Primitive::new("scatter", Some(3), shape_rule, impl_rule)
    .in_place(in_place)
    .jvp(scatter_jvp)
    .transpose(scatter_transpose)
    .batch(batch);
/// `scatter-add`.
pub static SCATTER_ADD: Primitive = Primitive::new("scatter-add", Some(3), shape_rule, impl_rule)
    .in_place(in_place)
    .jvp(add_jvp)
    .transpose(add_transpose)
    .batch(batch);
/// `scatter-sub` (`.at[].subtract`): each update subtracted from the element it lands on.
pub static SCATTER_SUB: Primitive = Primitive::new("scatter-sub", Some(3), shape_rule, impl_rule)
    .in_place(in_place)
    .jvp(add_jvp)
    .transpose(add_transpose)
    .batch(batch);
/// `scatter-mul`.
pub static SCATTER_MUL: Primitive = Primitive::new("scatter-mul", Some(3), shape_rule, impl_rule)
    .in_place(in_place)
    .jvp(mul_jvp)
    .transpose(mul_transpose)
    .batch(batch);
/// `scatter-min`.
pub static SCATTER_MIN: Primitive = Primitive::new("scatter-min", Some(3), shape_rule, impl_rule)
    .in_place(in_place)
    .jvp(extremal_jvp)
    .batch(batch);
/// `scatter-max`.
pub static SCATTER_MAX: Primitive = Primitive::new("scatter-max", Some(3), shape_rule, impl_rule)
    .in_place(in_place)
    .jvp(extremal_jvp)
    .batch(batch);

/// `scatter`'s dimension numbers, from its parameters.
fn dnums<'p>(prim: &Primitive, params: &'p Params) -> Result<&'p ScatterDimensionNumbers, Error> {
    match params.require(prim.name, "dimension_numbers")? {
        Param::ScatterDimensionNumbers(d) => Ok(d),
        _ => Err(super::bad_param(
            prim.name,
            "dimension_numbers",
            "not ScatterDimensionNumbers",
        )),
    }
}

/// Each operand dimension's window size: the updates' window bound, or 1 (inserted and
/// batching dimensions).
fn window_sizes(rank: usize, updates: &[usize], d: &ScatterDimensionNumbers) -> Vec<usize> {
    let mut w = d.update_window_dims.iter();
    (0..rank as i64)
        .map(|i| {
            if d.inserted_window_dims.contains(&i) || d.operand_batching_dims.contains(&i) {
                1
            } else {
                w.next()
                    .and_then(|&u| updates.get(u as usize))
                    .copied()
                    .unwrap_or(1)
            }
        })
        .collect()
}

/// JAX's checks (`_scatter_shape_rule`).
fn check(
    op: &[usize],
    indices: &[usize],
    updates: &[usize],
    d: &ScatterDimensionNumbers,
) -> Result<(), Error> {
    let s = "scatter";
    let Some(ivd) = indices.len().checked_sub(1) else {
        return type_error(
            "Scatter index leaf dimension must be within [0, rank(indices) + 1). rank(indices) \
             is 0 and scatter index leaf dimension is -1."
                .into(),
        );
    };
    let expected = ivd + d.update_window_dims.len();
    if updates.len() != expected {
        return type_error(format!(
            "Updates tensor must be of rank {expected}; got {}.",
            updates.len()
        ));
    }
    let rank = op.len();
    is_sorted(s, &d.update_window_dims, "update_window_dims")?;
    no_duplicates(s, &d.update_window_dims, "update_window_dims")?;
    sorted_in_range(
        s,
        &d.update_window_dims,
        updates.len(),
        "update_window_dims",
    )?;
    is_sorted(s, &d.inserted_window_dims, "inserted_window_dims")?;
    no_duplicates(s, &d.inserted_window_dims, "inserted_window_dims")?;
    sorted_in_range(s, &d.inserted_window_dims, rank, "inserted_window_dims")?;
    is_sorted(s, &d.operand_batching_dims, "operand_batching_dims")?;
    no_duplicates(s, &d.operand_batching_dims, "operand_batching_dims")?;
    sorted_in_range(s, &d.operand_batching_dims, rank, "operand_batching_dims")?;
    disjoint(
        s,
        &d.inserted_window_dims,
        &d.operand_batching_dims,
        "inserted_window_dims",
        "operand_batching_dims",
    )?;
    disjoint(
        s,
        &d.scatter_dims_to_operand_dims,
        &d.operand_batching_dims,
        "scatter_dims_to_operand_dims",
        "operand_batching_dims",
    )?;
    no_duplicates(
        s,
        &d.scatter_indices_batching_dims,
        "scatter_indices_batching_dims",
    )?;
    in_range(
        s,
        &d.scatter_indices_batching_dims,
        indices.len(),
        "scatter_indices_batching_dims",
    )?;
    if d.scatter_indices_batching_dims.contains(&(ivd as i64)) {
        return type_error(format!(
            "Scatter op cannot have the index vector dimension as a batching dimension; got {}.",
            tuple(&d.scatter_indices_batching_dims)
        ));
    }
    if d.operand_batching_dims.len() != d.scatter_indices_batching_dims.len() {
        return type_error(format!(
            "Scatter op requires equal numbers of operand_batching_dims and \
             scatter_indices_batching_dims, got {} and {}.",
            tuple(&d.operand_batching_dims),
            tuple(&d.scatter_indices_batching_dims)
        ));
    }
    let t = |v: &[usize]| tuple(&v.iter().map(|&x| x as i64).collect::<Vec<_>>());
    let ob: Vec<usize> = d
        .operand_batching_dims
        .iter()
        .map(|&i| op[i as usize])
        .collect();
    let ib: Vec<usize> = d
        .scatter_indices_batching_dims
        .iter()
        .map(|&i| indices[i as usize])
        .collect();
    if ob != ib {
        return type_error(format!(
            "Scatter op requires operand batching dimensions and indices batching dimensions \
             to have the same shape, got {} and {}.",
            t(&ob),
            t(&ib)
        ));
    }
    // The updates' scatter dimensions, in order, stand for the indices' dimensions but the
    // index vector's.
    let scatter_dims: Vec<usize> = (0..updates.len())
        .filter(|&i| !d.update_window_dims.contains(&(i as i64)))
        .collect();
    let ub: Vec<usize> = d
        .scatter_indices_batching_dims
        .iter()
        .map(|&i| scatter_dims.get(i as usize).map_or(0, |&u| updates[u]))
        .collect();
    if ob != ub {
        return type_error(format!(
            "Scatter op requires operand batching dimensions and updates batching dimensions \
             to have the same shape, got {} and {}.",
            t(&ob),
            t(&ub)
        ));
    }
    let window =
        d.update_window_dims.len() + d.inserted_window_dims.len() + d.operand_batching_dims.len();
    if rank != window {
        return type_error(format!(
            "Scatter op has window of size {window}; doesn't match operand of rank {rank}."
        ));
    }
    if d.scatter_dims_to_operand_dims.len() != indices[ivd] {
        return type_error(format!(
            "Scatter op has {} elements in scatter_dims_to_operand_dims and the bound of \
             dimension index_vector_dim={ivd} of indices is {}. These two numbers must be equal",
            d.scatter_dims_to_operand_dims.len(),
            indices[ivd]
        ));
    }
    for (i, &dim) in d.scatter_dims_to_operand_dims.iter().enumerate() {
        if dim < 0 || dim >= rank as i64 {
            return type_error(format!(
                "Invalid scatter_dims_to_operand_dims mapping; domain is [0, {rank}), got: \
                 {i}->{dim}."
            ));
        }
    }
    no_duplicates(
        s,
        &d.scatter_dims_to_operand_dims,
        "scatter_dims_to_operand_dims",
    )?;
    let max_sizes: Vec<usize> = (0..rank)
        .filter(|&i| {
            let i = i as i64;
            !d.inserted_window_dims.contains(&i) && !d.operand_batching_dims.contains(&i)
        })
        .map(|i| op[i])
        .collect();
    for (i, &u) in d.update_window_dims.iter().enumerate() {
        let (bound, max) = (updates[u as usize], max_sizes.get(i).copied().unwrap_or(0));
        if max < bound {
            return type_error(format!(
                "Bounds of the window dimensions of updates must not exceed the bounds of the \
                 corresponding dimensions of operand. For dimension {u}, updates bound is \
                 {bound}, operand bound is {max}."
            ));
        }
    }
    for (k, &i) in scatter_dims.iter().enumerate() {
        if updates[i] != indices[k] {
            return type_error(format!(
                "Bounds of the scatter dimensions of updates must be the same as the bounds of \
                 the corresponding dimensions of scatter indices. For scatter dimension {i}, \
                 updates bound is {}, indices bound is {}.",
                updates[i], indices[k]
            ));
        }
    }
    Ok(())
}

fn shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let [operand, indices, updates] = inputs else {
        return type_error(format!(
            "{}() takes 3 positional arguments but {} were given",
            prim.name,
            inputs.len()
        ));
    };
    let d = dnums(prim, params)?;
    Mode::of(prim, params)?;
    check(operand.shape(), indices.shape(), updates.shape(), d)?;
    if !is_index(indices.dtype()) {
        return Err(Error::refused(
            Exception::ValueError,
            "indices must have an integer type",
        ));
    }
    if operand.dtype() != updates.dtype() {
        return type_error(format!(
            "{} requires arguments to have the same dtypes, got {}, {}.",
            "scatter",
            operand.dtype(),
            updates.dtype()
        ));
    }
    Ok(smallvec::smallvec![ShapedArray::new(
        operand.shape(),
        operand.dtype(),
        operand.weak_type()
    )])
}

/// How an update combines with the element it lands on.
#[derive(Clone)]
enum Combine {
    Replace,
    With(&'static Primitive),
    /// `scatter`'s `update_jaxpr` when it has one (`lax.scatter_apply`, which `.at[].apply`
    /// binds: `f(old)`, once per update landing on the element, as XLA's loop applies it).
    Jaxpr(Arc<ClosedJaxpr>),
}

fn combine_of(prim: &Primitive, params: &Params) -> Combine {
    match prim.name {
        "scatter-add" => Combine::With(&super::ADD),
        "scatter-sub" => Combine::With(&super::SUB),
        "scatter-mul" => Combine::With(&super::MUL),
        "scatter-min" => Combine::With(&super::MIN),
        "scatter-max" => Combine::With(&super::MAX),
        _ => match params.get("update_jaxpr") {
            Some(Param::Jaxpr(j)) => Combine::Jaxpr(j.clone()),
            _ => Combine::Replace,
        },
    }
}

/// How a run of updates combines with the run of the operand it lands on, resolved once per
/// scatter.
#[derive(Clone)]
enum RunCombine {
    /// The update replaces the run.
    Replace,
    /// A typed loop: float32 and (under XLA) float64 `add`/`mul`/`min`/`max` by the fast
    /// kernels' element functions, which LLVM vectorises (branch-free selects).
    Typed(fn(&mut [u8], &[u8])),
    /// Element by element, as the primitive computes on 0-d arrays ([`combined`]).
    Elementwise(&'static Primitive),
    /// Element by element, the `update_jaxpr` evaluated on the old element and the update.
    Jaxpr(Arc<ClosedJaxpr>),
}

macro_rules! typed_runs {
    ($($name:ident: $w:ty, $f:ident;)*) => {$(
        /// A run of `slot` combined in place with the same run of `new` by `OP`.
        fn $name<const OP: u8>(slot: &mut [u8], new: &[u8]) {
            use crate::kernels::fast::$f;
            const N: usize = size_of::<$w>();
            match (
                bytemuck::try_cast_slice_mut::<u8, $w>(slot),
                bytemuck::try_cast_slice::<u8, $w>(new),
            ) {
                // Compiled for AVX2 where the CPU has it: the loop is bound by its
                // arithmetic (the flushes), which then takes a vector of 8 at once.
                (Ok(o), Ok(n)) => crate::kernels::simd::fused(|| {
                    o.iter_mut().zip(n).for_each(|(a, &b)| *a = $f::<OP>(*a, b))
                }),
                // Unaligned runs (an operand's bytes need not be aligned to the word).
                _ => {
                    for (o, n) in slot.chunks_exact_mut(N).zip(new.chunks_exact(N)) {
                        let a = <$w>::from_le_bytes(o.try_into().unwrap_or([0; N]));
                        let b = <$w>::from_le_bytes(n.try_into().unwrap_or([0; N]));
                        o.copy_from_slice(&$f::<OP>(a, b).to_le_bytes());
                    }
                }
            }
        }
    )*};
}
typed_runs! {
    f32_runs: u32, f32_op;
    f64_runs: u64, f64_op;
}

/// A whole scatter of runs (`rows::scatter_with`'s arguments): whether every offset was inside.
type Scatter = fn(&mut [u8], &[u64], usize, &[u8]) -> bool;

/// How a scatter combines, resolved once: float32 `add` and `sub` by
/// [`crate::kernels::flush_sum::Sums`], whose loops over the runs are its own (compiled for
/// the CPU's vector features), the rest run by run.
enum How {
    Sums(Scatter),
    Runs(RunCombine),
}

/// [`How::Sums`] by `OP`.
fn sums<const OP: u8>(dst: &mut [u8], offsets: &[u64], run: usize, updates: &[u8]) -> bool {
    use crate::kernels::flush_sum::Sums;
    let Ok(done) = rows::scatter_with(dst, offsets, run, updates, true, &Sums::<OP>);
    done
}

impl How {
    fn of(combine: Combine, dtype: DType) -> How {
        use crate::kernels::fast::BinOp;
        match (&combine, dtype) {
            (Combine::With(w), DType::Float32) if w.name == "add" => {
                How::Sums(sums::<{ BinOp::ADD }>)
            }
            (Combine::With(w), DType::Float32) if w.name == "sub" => {
                How::Sums(sums::<{ BinOp::SUB }>)
            }
            _ => How::Runs(RunCombine::of(combine, dtype)),
        }
    }
}

impl RunCombine {
    fn of(combine: Combine, dtype: DType) -> RunCombine {
        use crate::kernels::fast::BinOp;
        let with = match combine {
            Combine::With(with) => with,
            Combine::Replace => return RunCombine::Replace,
            Combine::Jaxpr(j) => return RunCombine::Jaxpr(j),
        };
        macro_rules! pick {
            ($runs:ident) => {
                match with.name {
                    "add" => RunCombine::Typed($runs::<{ BinOp::ADD }>),
                    "sub" => RunCombine::Typed($runs::<{ BinOp::SUB }>),
                    "mul" => RunCombine::Typed($runs::<{ BinOp::MUL }>),
                    "min" => RunCombine::Typed($runs::<{ BinOp::MIN }>),
                    "max" => RunCombine::Typed($runs::<{ BinOp::MAX }>),
                    _ => RunCombine::Elementwise(with),
                }
            };
        }
        match (dtype, with.name) {
            (DType::Float32, _) => pick!(f32_runs),
            (DType::Float64, _) if crate::lax::on_xla() => pick!(f64_runs),
            _ => RunCombine::Elementwise(with),
        }
    }

    /// Combines `new` into `slot` (runs of `eb`-byte elements of `dtype`).
    fn apply(&self, dtype: DType, eb: usize, slot: &mut [u8], new: &[u8]) -> Result<(), Error> {
        match self {
            RunCombine::Replace => slot.copy_from_slice(new),
            RunCombine::Typed(f) => f(slot, new),
            RunCombine::Elementwise(with) => {
                for (o, n) in slot.chunks_exact_mut(eb).zip(new.chunks_exact(eb)) {
                    let c = combined(with, dtype, o, n)?;
                    o.copy_from_slice(&c);
                }
            }
            RunCombine::Jaxpr(j) => {
                for (o, n) in slot.chunks_exact_mut(eb).zip(new.chunks_exact(eb)) {
                    let a = Array::from_bytes(dtype, &[], o)?;
                    let b = Array::from_bytes(dtype, &[], n)?;
                    let out = j.call(&[a, b])?;
                    let Some(c) = out.first() else {
                        return type_error("scatter's update_jaxpr has no output".into());
                    };
                    let c = if c.dtype() == dtype {
                        c.clone()
                    } else {
                        c.astype(dtype)?
                    };
                    match c.as_bytes() {
                        b if b.len() == o.len() => o.copy_from_slice(b),
                        _ => return type_error("scatter's update_jaxpr must give a scalar".into()),
                    }
                }
            }
        }
        Ok(())
    }
}

fn combined(
    with: &'static Primitive,
    dtype: DType,
    old: &[u8],
    new: &[u8],
) -> Result<Vec<u8>, Error> {
    use crate::kernels::fast::{BinOp, f32_op, f64_op};
    let op = match with.name {
        "add" => Some(BinOp::ADD),
        "sub" => Some(BinOp::SUB),
        "mul" => Some(BinOp::MUL),
        "min" => Some(BinOp::MIN),
        "max" => Some(BinOp::MAX),
        _ => None,
    };
    let word4 = |b: &[u8]| b.try_into().ok().map(u32::from_le_bytes);
    let word8 = |b: &[u8]| b.try_into().ok().map(u64::from_le_bytes);
    macro_rules! fast {
        ($f:ident, $a:expr, $b:expr, $op:expr) => {
            match $op {
                BinOp::ADD => $f::<{ BinOp::ADD }>($a, $b),
                BinOp::SUB => $f::<{ BinOp::SUB }>($a, $b),
                BinOp::MUL => $f::<{ BinOp::MUL }>($a, $b),
                BinOp::MIN => $f::<{ BinOp::MIN }>($a, $b),
                _ => $f::<{ BinOp::MAX }>($a, $b),
            }
        };
    }
    match (dtype, op) {
        (DType::Float32, Some(op)) => {
            if let (Some(a), Some(b)) = (word4(old), word4(new)) {
                return Ok(fast!(f32_op, a, b, op).to_le_bytes().to_vec());
            }
        }
        (DType::Float64, Some(op)) if crate::lax::on_xla() => {
            if let (Some(a), Some(b)) = (word8(old), word8(new)) {
                return Ok(fast!(f64_op, a, b, op).to_le_bytes().to_vec());
            }
        }
        _ => {}
    }
    let a = Array::from_bytes(dtype, &[], old)?;
    let b = Array::from_bytes(dtype, &[], new)?;
    Ok(super::bind1(with, &[&a, &b], &Params::new())?
        .as_bytes()
        .to_vec())
}

/// A scatter ready to apply: each block of updates' offset in the operand (or
/// [`rows::SKIP`]), the block's bytes, and how a block combines with the operand's.
struct Plan<'u> {
    offsets: Vec<u64>,
    run: usize,
    eb: usize,
    dtype: DType,
    how: How,
    updates: &'u [u8],
}

impl Plan<'_> {
    /// Combines the updates into `bytes` (the operand's, or a copy of them).
    fn apply(&self, bytes: &mut [u8]) -> Result<(), Error> {
        let (dtype, eb) = (self.dtype, self.eb);
        let (offsets, run, updates) = (&self.offsets[..], self.run * eb, self.updates);
        let done = match &self.how {
            How::Sums(scatter) => scatter(bytes, offsets, run, updates),
            How::Runs(how) => {
                // Copies and the typed loops are worth splitting over threads; the
                // element-by-element combination (a primitive bound per element) is not.
                let parallel = !matches!(how, RunCombine::Elementwise(_) | RunCombine::Jaxpr(_));
                rows::scatter(bytes, offsets, run, updates, parallel, |slot, new| {
                    how.apply(dtype, eb, slot, new)
                })?
            }
        };
        if done {
            Ok(())
        } else {
            Err(super::gather::too_large())
        }
    }
}

impl Drop for Plan<'_> {
    fn drop(&mut self) {
        crate::array::storage::pool::recycle(std::mem::take(&mut self.offsets));
    }
}

/// `offsets` (empty) becomes `offset(v)` of each index value `v`: a loop the compiler
/// vectorises, split over threads for millions of indices.
fn offsets_of<T: Copy + Into<i64> + Sync>(
    indices: &[T],
    offsets: &mut Vec<u64>,
    offset: impl Fn(i64) -> u64 + Sync,
) {
    use rayon::prelude::*;
    const PER: usize = 1 << 16;
    offsets.resize(indices.len(), 0);
    let part = |(o, v): (&mut [u64], &[T])| {
        for (o, &v) in o.iter_mut().zip(v) {
            *o = offset(v.into());
        }
    };
    if indices.len() < 4 * PER {
        part((offsets, indices));
    } else {
        offsets
            .par_chunks_mut(PER)
            .zip(indices.par_chunks(PER))
            .for_each(part);
    }
}

/// The offsets of a scatter's update blocks in its operand.
fn plan<'u>(
    prim: &'static Primitive,
    operand: &Array,
    indices: &Array,
    updates: &'u Array,
    params: &Params,
) -> Result<Plan<'u>, Error> {
    let d = dnums(prim, params)?;
    let mode = Mode::of(prim, params)?;
    let combine = combine_of(prim, params);
    let (os, is, us) = (operand.shape(), indices.shape(), updates.shape());
    let rank = os.len();
    let eb = element_bytes(operand.dtype());
    let ub = updates.as_bytes();
    let wins = window_sizes(rank, us, d);
    let ost = strides(os);
    let mut walk = Walk::new(
        us,
        &d.update_window_dims,
        rank,
        &[&d.inserted_window_dims, &d.operand_batching_dims],
        is,
    );
    let n = updates.size();
    // A block of trailing update dimensions contiguous in the operand is combined at once:
    // each block's offset in the operand first, then the combining (`kernels::rows`).
    let (t, run) = walk.contiguous_block(os);
    let run = run.max(1);
    // The start of the window an index vector names
    // (clamped under `CLIP`).
    let index_start = |vector: &[i128], start: &mut [i128]| {
        for (c, &dim) in d.scatter_dims_to_operand_dims.iter().enumerate() {
            let dim = dim as usize;
            let v = vector.get(c).copied().unwrap_or(0);
            let hi = os[dim] as i128 - wins[dim] as i128;
            start[dim] = if mode == Mode::Clip {
                v.clamp(0, hi.max(0))
            } else {
                v
            };
        }
    };
    // A window not wholly in the operand is skipped.
    let inside = |start: &[i128]| {
        start
            .iter()
            .zip(&wins)
            .zip(os)
            .all(|((&s, &w), &n)| s >= 0 && s + w as i128 <= n as i128)
    };
    let flat =
        |pos: &[i128]| -> usize { pos.iter().zip(&ost).map(|(&p, &s)| p as usize * s).sum() };
    let blocks = n / run;
    // A pooled buffer (already mapped: a fresh one of 2^20 offsets costs its page faults).
    let mut offsets = crate::array::storage::pool::reused::<u64>(blocks);
    offsets.clear();
    let mut start = vec![0i128; rank];
    if d.operand_batching_dims.is_empty() && walk.outer_dims_are_batch(t) {
        // Block `b` is the `b`-th index vector's window from its start: no walk.
        let k = walk.vector_len();
        let mut one = |vector: &[i128]| {
            index_start(vector, &mut start);
            offsets.push(if inside(&start) {
                (flat(&start) * eb) as u64
            } else {
                rows::SKIP
            });
        };
        if k == 1 && d.scatter_dims_to_operand_dims.len() == 1 {
            // One component: its window's offset is the start times a stride, the window
            // inside where the start is (the other dimensions' windows start at 0).
            let dim = d.scatter_dims_to_operand_dims[0] as usize;
            let hi = os[dim] as i128 - wins[dim] as i128;
            let stride = (ost[dim] * eb) as u64;
            let others_fit = wins.iter().zip(os).all(|(&w, &n)| w <= n);
            let clip = mode == Mode::Clip;
            // In i64 (a shape's extent fits it; wider index values are outside either way),
            // a loop over the typed indices the compiler vectorises.
            let hi = hi.clamp(-1, i64::MAX.into()) as i64;
            let offset = |v: i64| {
                let v = if clip { v.clamp(0, hi.max(0)) } else { v };
                if others_fit && v >= 0 && v <= hi {
                    v as u64 * stride
                } else {
                    rows::SKIP
                }
            };
            if let Ok(v) = indices.as_slice::<i32>() {
                offsets_of(v, &mut offsets, offset);
            } else if let Ok(v) = indices.as_slice::<i64>() {
                offsets_of(v, &mut offsets, offset);
            } else {
                each_index(indices, |v| {
                    offsets.push(offset(v.clamp(i64::MIN.into(), i64::MAX.into()) as i64))
                })?;
            }
        } else if k == 1 {
            each_index(indices, |v| one(&[v]))?;
        } else {
            let idx = index_values(indices)?;
            (0..blocks).for_each(|b| one(idx.get(b * k..b * k + k).unwrap_or_default()));
        }
    } else {
        let batching = (
            &d.operand_batching_dims[..],
            &d.scatter_indices_batching_dims[..],
        );
        let walked = Walked {
            t,
            ost: &ost,
            eb,
            batching,
        };
        let set = |vector: &[i128], start: &mut [i128]| {
            index_start(vector, start);
            true
        };
        walked.offsets(
            &mut walk,
            &index_values(indices)?,
            blocks,
            &mut offsets,
            set,
            inside,
        );
    }
    let dtype = operand.dtype();
    Ok(Plan {
        offsets,
        run,
        eb,
        dtype,
        how: How::of(combine, dtype),
        updates: ub,
    })
}

fn impl_rule(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    avals: &[ShapedArray],
) -> Result<Outputs, Error> {
    let [operand, indices, updates] = inputs else {
        return type_error(format!(
            "{} takes an operand, indices and updates",
            prim.name
        ));
    };
    let plan = plan(prim, operand, indices, updates, params)?;
    onto_copy(&plan, operand, &avals[0])
}

/// `plan` applied to a copy of `operand`, in a pooled buffer (already mapped, aligned).
fn onto_copy(plan: &Plan<'_>, operand: &Array, out: &ShapedArray) -> Result<Outputs, Error> {
    let width = crate::array::layout(out.dtype()).0;
    let mut result = Ok(());
    let data = crate::array::Storage::with_bytes(width, operand.as_bytes().len(), |bytes| {
        bytes.copy_from_slice(operand.as_bytes());
        result = plan.apply(bytes);
    });
    result?;
    Ok(smallvec::smallvec![Array::from_parts(out.clone(), data)])
}

/// The scatter given its operand: combined into the operand's own buffer when no other
/// array shares it (jit hands it over at its last use), else into a copy.
fn in_place(
    prim: &'static Primitive,
    operand: Array,
    rest: &[&Array],
    params: &Params,
    avals: &[ShapedArray],
) -> Result<Outputs, Error> {
    let ([indices, updates], [out]) = (rest, avals) else {
        return impl_rule(prim, &[&operand], params, avals);
    };
    let plan = plan(prim, &operand, indices, updates, params)?;
    let same = operand.dtype() == out.dtype() && operand.shape() == out.shape();
    let Some((aval, mut data)) = operand.into_parts() else {
        return type_error(format!("{} of a traced operand", prim.name));
    };
    if same && let Some(bytes) = data.unique_bytes_mut() {
        plan.apply(bytes)?;
        return Ok(smallvec::smallvec![Array::from_parts(out.clone(), data)]);
    }
    onto_copy(&plan, &Array::from_parts(aval, data), out)
}

/// The `update_jaxpr` JAX gives `scatter-add` on `dtype`: `{ lambda ; a b. let c = add a b in
/// (c,) }`.
pub(crate) fn add_jaxpr(dtype: DType) -> ClosedJaxpr {
    let aval = ShapedArray::new(&[], dtype, false);
    let var = |id| Var {
        id,
        aval: aval.clone(),
        dropped: false,
    };
    ClosedJaxpr {
        jaxpr: Jaxpr {
            constvars: Vec::new(),
            invars: vec![var(0), var(1)],
            eqns: vec![Eqn {
                prim: &super::ADD,
                inputs: vec![Atom::Var(var(0)), Atom::Var(var(1))],
                params: Params::new(),
                outputs: vec![var(2)],
            }],
            outvars: vec![Atom::Var(var(2))],
        },
        consts: Vec::new(),
    }
}

/// `scatter-add`'s parameters as JAX binds them: dimension numbers `d`, the mode and the
/// index promises of `like` (where it has none, JAX's defaults: FILL_OR_DROP, False).
pub(crate) fn add_params(dtype: DType, d: ScatterDimensionNumbers, like: &Params) -> Params {
    let get = |n: &str| like.get(n).cloned().unwrap_or(Param::Bool(false));
    Params::new()
        .with("dimension_numbers", Param::ScatterDimensionNumbers(d))
        .with("indices_are_sorted", get("indices_are_sorted"))
        .with(
            "mode",
            like.get("mode")
                .cloned()
                .unwrap_or_else(|| Mode::FillOrDrop.param()),
        )
        .with("unique_indices", get("unique_indices"))
        .with("update_consts", Param::Ints(Vec::new()))
        .with(
            "update_jaxpr",
            Param::Jaxpr(std::sync::Arc::new(add_jaxpr(dtype))),
        )
}

/// The tangents of the operand and the updates, a zero one instantiated (`None`: both zero).
fn both_tangents(
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<Option<(Array, Array)>, Error> {
    if tangents.first().is_none_or(Option::is_none) && tangents.get(2).is_none_or(Option::is_none) {
        return Ok(None);
    }
    let tangent = |k: usize| match tangents.get(k).cloned().flatten() {
        Some(t) => Ok(t),
        None => super::ops::zeros_like(&primals[k]),
    };
    Ok(Some((tangent(0)?, tangent(2)?)))
}

/// `scatter-add`'s JVP: linear in the operand and the updates jointly (a zero tangent
/// instantiated); the indices are integers.
fn add_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = super::ad::primal_out(prim, primals, params)?;
    let Some((a, b)) = both_tangents(primals, tangents)? else {
        return Ok((out, vec![None]));
    };
    let t = super::bind1(prim, &[&a, &primals[1], &b], params)?;
    Ok((out, vec![Some(t)]))
}

/// `scatter`'s JVP (JAX's `_scatter_jvp`): with unique indices the scatter of the tangents;
/// else each update gets an id (1, 2, … in the updates' row-major order, one per window), the
/// ids are scattered and gathered back, and the operand elements no update reached and the
/// updates whose id came back (the ones that won) are scatter-added, for the value and the
/// tangent alike.
fn scatter_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    use super::ops;
    let [operand, indices, updates] = primals else {
        return type_error("scatter takes an operand, indices and updates".into());
    };
    let Some((g_operand, g_updates)) = both_tangents(primals, tangents)? else {
        return Ok((super::ad::primal_out(prim, primals, params)?, vec![None]));
    };
    if params.get("unique_indices") == Some(&Param::Bool(true)) {
        let out = bind(prim, &[operand, indices, updates], params)?;
        let t = bind(prim, &[&g_operand, indices, &g_updates], params)?[0].clone();
        return Ok((out, vec![Some(t)]));
    }
    let d = dnums(prim, params)?;
    let us = updates.shape();
    // a) An id for each update (a window shares one), scattered.
    let mut ids_shape = us.to_vec();
    for &w in &d.update_window_dims {
        if let Some(s) = ids_shape.get_mut(w as usize) {
            *s = 1;
        }
    }
    let num_ids: usize = ids_shape.iter().product();
    let id_dtype = if num_ids > u32::MAX as usize {
        DType::UInt64
    } else {
        DType::UInt32
    };
    let iota = bind(
        &super::IOTA,
        &[],
        &Params::new()
            .with("dimension", Param::Int(0))
            .with("dtype", Param::DType(id_dtype))
            .with("shape", Param::Ints(vec![num_ids as i64]))
            .with("sharding", Param::None),
    )?
    .remove(0);
    let ids = super::ad::reshape(&iota, &ids_shape)?;
    let one = crate::array::scalar(1.0, id_dtype)?;
    let ids = ops::add(&ids, &ops::broadcast_to(&one, &ids_shape)?)?;
    // The ids of a window spread over it.
    let ids = ops::broadcast_to(&ids, us)?;
    let zero_ids = ops::zeros(&ShapedArray::new(operand.shape(), id_dtype, false))?;
    let scattered = bind(prim, &[&zero_ids, indices, &ids], params)?.remove(0);
    // b) The ids gathered back from where they went.
    let promise = params.clone().set("mode", Mode::PromiseInBounds.param());
    let gathered = gather_back(prim, &scattered, indices, us, &promise)?;
    // c) Masks: operand elements no update reached, updates that won.
    let untouched = ops::eq(&scattered, &ops::zeros_like(&scattered)?)?;
    let won = ops::eq(&ids, &gathered)?;
    let mask = |which: &Array, x: &Array| ops::select_n(which, &[&ops::zeros_like(x)?, x]);
    // d) Scatter-adds of the masked values and tangents.
    let ap = add_params(operand.dtype(), d.clone(), params);
    let out = bind(
        &SCATTER_ADD,
        &[&mask(&untouched, operand)?, indices, &mask(&won, updates)?],
        &ap,
    )?;
    let t = super::bind1(
        &SCATTER_ADD,
        &[
            &mask(&untouched, &g_operand)?,
            indices,
            &mask(&won, &g_updates)?,
        ],
        &ap,
    )?;
    Ok((out, vec![Some(t)]))
}

/// `scatter-mul`'s JVP (JAX's `defjvp`): in the operand, the scatter-mul of its tangent by
/// the updates; in the updates (only with unique indices, as JAX), the operand times the
/// scatter-add of their tangent into zeros.
fn mul_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let [operand, indices, updates] = primals else {
        return type_error("scatter-mul takes an operand, indices and updates".into());
    };
    let out = super::ad::primal_out(prim, primals, params)?;
    let lhs = match &tangents[0] {
        Some(g) => Some(super::bind1(prim, &[g, indices, updates], params)?),
        None => None,
    };
    let rhs = match tangents.get(2).cloned().flatten() {
        None => None,
        Some(g) => {
            if params.get("unique_indices") != Some(&Param::Bool(true)) {
                return Err(Error::refused(
                    Exception::NotImplementedError,
                    "scatter_mul gradients are only implemented if `unique_indices=True`",
                ));
            }
            let ap = add_params(operand.dtype(), dnums(prim, params)?.clone(), params);
            let zeros = super::ops::zeros_like(operand)?;
            let added = super::bind1(&SCATTER_ADD, &[&zeros, indices, &g], &ap)?;
            Some(super::ops::mul(operand, &added)?)
        }
    };
    let t = match (lhs, rhs) {
        (Some(a), Some(b)) => Some(super::ops::add_any(&a, &b)?),
        (a, b) => a.or(b),
    };
    Ok((out, vec![t]))
}

/// `scatter-mul` transposed (JAX's `_scatter_mul_transpose_rule`), linear in one of the
/// operand and the updates: the operand's cotangent the scatter-mul of the output's by the
/// updates; the updates' (unique indices only, as JAX) the output's times the operand,
/// gathered where they went.
fn mul_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let Lin::Known(indices) = &ins[1] else {
        return Err(crate::core::nonlinear());
    };
    let mut out = vec![None, None, None];
    if let (Lin::Linear(_), Lin::Known(updates)) = (&ins[0], &ins[2]) {
        out[0] = Some(super::bind1(prim, &[&ct, indices, updates], params)?);
    }
    if let (Lin::Known(operand), Lin::Linear(u)) = (&ins[0], &ins[2]) {
        if params.get("unique_indices") != Some(&Param::Bool(true)) {
            return Err(Error::refused(
                Exception::NotImplementedError,
                "scatter_mul gradients are only implemented if `unique_indices=True`",
            ));
        }
        let prod = super::ops::mul(&ct, operand)?;
        out[2] = Some(gather_back(prim, &prod, indices, u.shape(), params)?);
    }
    Ok(out)
}

/// `x` gathered where a scatter of updates of `updates_shape` went (the inverse gather of
/// JAX's scatter transposes, `fill_value=0` in FILL_OR_DROP mode).
fn gather_back(
    prim: &'static Primitive,
    x: &Array,
    indices: &Array,
    updates_shape: &[usize],
    params: &Params,
) -> Result<Array, Error> {
    let d = dnums(prim, params)?;
    let wins = window_sizes(x.ndim(), updates_shape, d);
    let fill = match Mode::of(prim, params)? {
        Mode::FillOrDrop => Param::Int(0),
        _ => Param::None,
    };
    let get = |n: &str| params.get(n).cloned().unwrap_or(Param::Bool(false));
    let p = Params::new()
        .with(
            "dimension_numbers",
            Param::GatherDimensionNumbers(d.gather()),
        )
        .with("fill_value", fill)
        .with("indices_are_sorted", get("indices_are_sorted"))
        .with("mode", get("mode"))
        .with(
            "slice_sizes",
            Param::Ints(wins.iter().map(|&w| w as i64).collect()),
        )
        .with("unique_indices", get("unique_indices"));
    super::bind1(&super::GATHER, &[x, indices], &p)
}

/// `scatter-min`'s and `scatter-max`'s JVP (JAX's `_scatter_extremal_jvp`): where several
/// values tie for an element (the operand's and updates'), the tangent is their mean; each
/// update's and each operand element's share is found by gathering back counts of the
/// updates that won and of all updates.
fn extremal_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    use super::ops::{add, div, eq, konst, mul, select_n, zeros_like};
    let [operand, indices, updates] = primals else {
        return type_error(format!(
            "{} takes an operand, indices and updates",
            prim.name
        ));
    };
    let out = super::ad::primal_out(prim, primals, params)?;
    let Some((g_operand, g_updates)) = both_tangents(primals, tangents)? else {
        return Ok((out, vec![None]));
    };
    let val = &out[0];
    let d = dnums(prim, params)?;
    // JAX's `gather(…)` and `scatter_add(…)` with their default modes.
    let promise = params.clone().set("mode", Mode::PromiseInBounds.param());
    let back = |x: &Array| gather_back(prim, x, indices, updates.shape(), &promise);
    let fill = add_params(operand.dtype(), d.clone(), &Params::new());
    let count = |x: &Array| {
        let zeros = zeros_like(operand)?;
        back(&super::bind1(&SCATTER_ADD, &[&zeros, indices, x], &fill)?)
    };
    let initial = back(operand)?;
    let target = back(val)?;
    let successful = eq(updates, &target)?;
    let retained = eq(&initial, &target)?;
    let (zeros_u, ones_u) = (zeros_like(updates)?, {
        let one = konst(updates, 1.0)?;
        super::ops::broadcast_to(&one, updates.shape())?
    });
    let num_updates = count(&select_n(&successful, &[&zeros_u, &ones_u])?)?;
    let num_refs = count(&ones_u)?;
    let one = konst(updates, 1.0)?;
    let inv = |x: &Array| div(&one, x);
    let updates_normalizer = select_n(
        &retained,
        &[&inv(&num_updates)?, &inv(&add(&num_updates, &one)?)?],
    )?;
    let updates_coef = select_n(&successful, &[&zeros_like(updates)?, &updates_normalizer])?;
    let operand_normalizer = select_n(
        &retained,
        &[&zeros_like(&num_updates)?, &inv(&add(&num_updates, &one)?)?],
    )?;
    let operand_coef = div(
        &add(&konst(updates, -1.0)?, &operand_normalizer)?,
        &num_refs,
    )?;
    let target_tangents = back(&g_operand)?;
    let tangent_updates = add(
        &mul(&target_tangents, &operand_coef)?,
        &mul(&g_updates, &updates_coef)?,
    )?;
    let ap = add_params(operand.dtype(), d.clone(), params);
    let t = super::bind1(&SCATTER_ADD, &[&g_operand, indices, &tangent_updates], &ap)?;
    Ok((out, vec![Some(t)]))
}

/// `scatter-add` and `scatter-sub` transposed (JAX's `_scatter_addsub_transpose_rule`): the
/// operand's cotangent is the output's; the updates' is the output's gathered where they went
/// (negated for `scatter-sub`).
fn add_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let Lin::Known(indices) = &ins[1] else {
        return Err(crate::core::nonlinear());
    };
    let operand_t = ins[0].is_linear().then(|| ct.clone());
    let updates_t = if ins[2].is_linear() {
        let g = gather_back(prim, &ct, indices, ins[2].aval().shape(), params)?;
        // `scatter-sub`'s updates count negatively.
        Some(if prim.name == "scatter-sub" {
            super::bind1(&super::NEG, &[&g], &Params::new())?
        } else {
            g
        })
    } else {
        None
    };
    Ok(vec![operand_t, None, updates_t])
}

/// `scatter`'s transpose (JAX's `_scatter_transpose_rule`), for unique indices only (JAX's
/// `NotImplementedError` otherwise): the operand's cotangent is the cotangent with the
/// overwritten slots zeroed (zeros scattered into it), the updates' the cotangent gathered
/// back.
fn scatter_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    if params.get("unique_indices") != Some(&Param::Bool(true)) {
        return Err(Error::refused(
            Exception::NotImplementedError,
            "scatter transpose is only implemented where unique_indices=True",
        ));
    }
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let Lin::Known(indices) = &ins[1] else {
        return Err(crate::core::nonlinear());
    };
    let updates_shape = ins[2].aval().shape();
    let operand_t = if ins[0].is_linear() {
        let zeros = super::ops::zeros(&ShapedArray::new(updates_shape, ct.dtype(), false))?;
        Some(super::bind1(prim, &[&ct, indices, &zeros], params)?)
    } else {
        None
    };
    let updates_t = if ins[2].is_linear() {
        Some(gather_back(prim, &ct, indices, updates_shape, params)?)
    } else {
        None
    };
    Ok(vec![operand_t, None, updates_t])
}

/// JAX's batching rule (`_scatter_batching_rule`): the operand and updates batched (an
/// unbatched one broadcast), the batch a leading operand batching dimension; indices
/// unbatched are broadcast along it.
fn batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, crate::core::BatchDims), Error> {
    use super::batching::bdim_at_front;
    let [operand, indices, updates] = args else {
        return type_error(format!(
            "{} takes an operand, indices and updates",
            prim.name
        ));
    };
    if dims.iter().all(Option::is_none) {
        return Ok((
            bind(prim, &[operand, indices, updates], params)?,
            vec![None],
        ));
    }
    let d = dnums(prim, params)?;
    let o = bdim_at_front(operand, dims[0], size)?;
    let u = bdim_at_front(updates, dims[2], size)?;
    let i = bdim_at_front(indices, dims[1], size)?;
    let up = |v: &[i64]| v.iter().map(|x| x + 1).collect::<Vec<i64>>();
    let dn = ScatterDimensionNumbers {
        update_window_dims: up(&d.update_window_dims),
        inserted_window_dims: up(&d.inserted_window_dims),
        scatter_dims_to_operand_dims: up(&d.scatter_dims_to_operand_dims),
        operand_batching_dims: std::iter::once(0)
            .chain(up(&d.operand_batching_dims))
            .collect(),
        scatter_indices_batching_dims: std::iter::once(0)
            .chain(up(&d.scatter_indices_batching_dims))
            .collect(),
    };
    let p = params
        .clone()
        .set("dimension_numbers", Param::ScatterDimensionNumbers(dn));
    Ok((bind(prim, &[&o, &i, &u], &p)?, vec![Some(0)]))
}
