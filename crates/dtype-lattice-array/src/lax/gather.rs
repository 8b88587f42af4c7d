//! `gather`, as JAX 0.10.2 defines, prints and computes it (`jax/_src/lax/slicing.py`, XLA's
//! operation semantics): each index vector of `indices` (its last dimension) starts a slice of
//! `slice_sizes` in the operand; the result holds the slices, the dimensions of a slice at
//! `offset_dims`, the indices' other dimensions at the rest, dimensions of size one dropped
//! where `collapsed_slice_dims` says, and operand batching dimensions indexed by the indices'
//! batching dimensions.
//!
//! The modes: `CLIP` and `PROMISE_IN_BOUNDS` clamp each start so that the slice lies in the
//! operand (XLA's CPU backend clamps both); `FILL_OR_DROP` gives `fill_value` for a slice
//! whose start is out of bounds, after converting the indices to the index type JAX picks
//! (int32 where the operand's dimensions fit, so wider indices wrap first, as JAX's do).
//!
//! Rules: the shape rule with JAX's `TypeError`s, the dtype rule (`ValueError`: integer
//! indices), the implementation, the JVP (the gather of the tangent, filling with 0) and
//! JAX's batching rule (the batch a new leading dimension of the operand's slices, of the
//! indices' batch, or a batching dimension of both), and the transpose: the cotangent
//! scatter-added into zeros ([`super::scatter`]).

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind};

use super::{Avals, Outputs, Param, Params, Primitive, bind};
use crate::array::{Array, ShapedArray, element_bytes};
use crate::core::GatherDimensionNumbers;
use crate::kernels::rows;

/// The `gather` primitive.
pub static GATHER: Primitive = Primitive::new("gather", Some(2), shape_rule, impl_rule)
    .jvp(jvp)
    .transpose(transpose)
    .batch(batch);

pub(super) fn type_error<T>(msg: String) -> Result<T, Error> {
    Err(Error::refused(Exception::TypeError, msg))
}

/// `gather`'s dimension numbers, from its parameters.
fn dnums<'p>(prim: &Primitive, params: &'p Params) -> Result<&'p GatherDimensionNumbers, Error> {
    match params.require(prim.name, "dimension_numbers")? {
        Param::GatherDimensionNumbers(d) => Ok(d),
        _ => Err(super::bad_param(
            prim.name,
            "dimension_numbers",
            "not GatherDimensionNumbers",
        )),
    }
}

/// JAX's `GatherScatterMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Clip,
    FillOrDrop,
    PromiseInBounds,
}

impl Mode {
    /// The mode as JAX prints it (`GatherScatterMode.CLIP`).
    pub(crate) fn param(self) -> Param {
        Param::Name(
            match self {
                Mode::Clip => "GatherScatterMode.CLIP",
                Mode::FillOrDrop => "GatherScatterMode.FILL_OR_DROP",
                Mode::PromiseInBounds => "GatherScatterMode.PROMISE_IN_BOUNDS",
            }
            .into(),
        )
    }

    /// The mode of `params` (`mode=GatherScatterMode.CLIP`, as JAX prints it).
    pub(super) fn of(prim: &Primitive, params: &Params) -> Result<Mode, Error> {
        let text = match params.require(prim.name, "mode")? {
            Param::Name(n) => n.as_str(),
            _ => "",
        };
        match text {
            "GatherScatterMode.CLIP" => Ok(Mode::Clip),
            "GatherScatterMode.FILL_OR_DROP" => Ok(Mode::FillOrDrop),
            "GatherScatterMode.PROMISE_IN_BOUNDS" => Ok(Mode::PromiseInBounds),
            _ => Err(super::bad_param(
                prim.name,
                "mode",
                "not a GatherScatterMode",
            )),
        }
    }
}

/// Python's `(1, 2)`, `(1,)`, `()`.
pub(super) fn tuple(v: &[i64]) -> String {
    Param::Ints(v.to_vec()).to_string()
}

pub(super) fn is_sorted(op: &str, dims: &[i64], name: &str) -> Result<(), Error> {
    if dims.windows(2).any(|w| w[1] < w[0]) {
        return type_error(format!(
            "{name} in {op} op must be sorted; got {}",
            tuple(dims)
        ));
    }
    Ok(())
}

pub(super) fn no_duplicates(op: &str, dims: &[i64], name: &str) -> Result<(), Error> {
    let mut seen = std::collections::HashSet::new();
    if !dims.iter().all(|d| seen.insert(*d)) {
        return type_error(format!(
            "{name} in {op} op must not repeat; got: {}.",
            tuple(dims)
        ));
    }
    Ok(())
}

pub(super) fn sorted_in_range(
    op: &str,
    dims: &[i64],
    rank: usize,
    name: &str,
) -> Result<(), Error> {
    let (Some(&first), Some(&last)) = (dims.first(), dims.last()) else {
        return Ok(());
    };
    let bad = if first < 0 {
        first
    } else if last >= rank as i64 {
        last
    } else {
        return Ok(());
    };
    // JAX tests `if invalid_dim:`, so a 0 passes.
    if bad == 0 {
        return Ok(());
    }
    type_error(format!(
        "Invalid {name} set in {op} op; valid range is [0, {rank}); got: {bad}."
    ))
}

pub(super) fn in_range(op: &str, dims: &[i64], rank: usize, name: &str) -> Result<(), Error> {
    if let Some(d) = dims.iter().find(|&&d| d < 0 || d >= rank as i64) {
        return type_error(format!(
            "Invalid {name} set in {op} op; valid range is [0, {rank}); got: {d}."
        ));
    }
    Ok(())
}

pub(super) fn disjoint(op: &str, a: &[i64], b: &[i64], na: &str, nb: &str) -> Result<(), Error> {
    if a.iter().any(|x| b.contains(x)) {
        return type_error(format!(
            "{na} and {nb} in {op} op must be disjoint; got: {} and {}.",
            tuple(a),
            tuple(b)
        ));
    }
    Ok(())
}

/// The result's shape, after JAX's checks (`_gather_shape_rule`).
fn result_shape(
    operand: &[usize],
    indices: &[usize],
    d: &GatherDimensionNumbers,
    slice_sizes: &[i64],
) -> Result<Vec<usize>, Error> {
    let Some(ivd) = indices.len().checked_sub(1) else {
        return type_error(
            "Gather index leaf dimension must be within [0, rank(indices) + 1). rank(indices) \
             is 0 and gather index leaf dimension is -1."
                .into(),
        );
    };
    let rank = operand.len();
    is_sorted("gather", &d.offset_dims, "offset_dims")?;
    no_duplicates("gather", &d.offset_dims, "offset_dims")?;
    let out_rank = d.offset_dims.len() + ivd;
    for (i, &o) in d.offset_dims.iter().enumerate() {
        if o < 0 || o >= out_rank as i64 {
            return type_error(format!(
                "Offset dimension {i} in gather op is out of bounds; got {o}, but should have \
                 been in [0, {out_rank})"
            ));
        }
    }
    if d.start_index_map.len() != indices[ivd] {
        return type_error(format!(
            "Gather op has {} elements in start_index_map and the bound of dimension \
             index_vector_dim={ivd} of indices is {}. These two numbers must be equal.",
            d.start_index_map.len(),
            indices[ivd]
        ));
    }
    for (i, &s) in d.start_index_map.iter().enumerate() {
        if s < 0 || s >= rank as i64 {
            return type_error(format!(
                "Invalid start_index_map; domain is [0, {rank}), got: {i}->{s}."
            ));
        }
    }
    no_duplicates("gather", &d.start_index_map, "start_index_map")?;
    is_sorted("gather", &d.collapsed_slice_dims, "collapsed_slice_dims")?;
    sorted_in_range(
        "gather",
        &d.collapsed_slice_dims,
        rank,
        "collapsed_slice_dims",
    )?;
    no_duplicates("gather", &d.collapsed_slice_dims, "collapsed_slice_dims")?;
    no_duplicates("gather", &d.operand_batching_dims, "operand_batching_dims")?;
    is_sorted("gather", &d.operand_batching_dims, "operand_batching_dims")?;
    sorted_in_range(
        "gather",
        &d.operand_batching_dims,
        rank,
        "operand_batching_dims",
    )?;
    disjoint(
        "gather",
        &d.collapsed_slice_dims,
        &d.operand_batching_dims,
        "collapsed_slice_dims",
        "operand_batching_dims",
    )?;
    disjoint(
        "gather",
        &d.start_index_map,
        &d.operand_batching_dims,
        "start_index_map",
        "operand_batching_dims",
    )?;
    no_duplicates(
        "gather",
        &d.start_indices_batching_dims,
        "start_indices_batching_dims",
    )?;
    in_range(
        "gather",
        &d.start_indices_batching_dims,
        indices.len(),
        "start_indices_batching_dims",
    )?;
    if d.start_indices_batching_dims.contains(&(ivd as i64)) {
        return type_error(format!(
            "Gather op cannot have the index vector dimension as a batching dimension; got {}.",
            tuple(&d.start_indices_batching_dims)
        ));
    }
    if d.operand_batching_dims.len() != d.start_indices_batching_dims.len() {
        return type_error(format!(
            "Gather op requires equal numbers of operand_batching_dims and \
             start_indices_batching_dims, got {} and{}.",
            tuple(&d.operand_batching_dims),
            tuple(&d.start_indices_batching_dims)
        ));
    }
    // Every dimension below was checked in range above.
    let ob: Vec<usize> = d
        .operand_batching_dims
        .iter()
        .map(|&i| operand[i as usize])
        .collect();
    let ib: Vec<usize> = d
        .start_indices_batching_dims
        .iter()
        .map(|&i| indices[i as usize])
        .collect();
    if ob != ib {
        let t = |v: &[usize]| tuple(&v.iter().map(|&x| x as i64).collect::<Vec<_>>());
        return type_error(format!(
            "Gather op requires operand batching dimensions and indices batching dimensions to \
             have the same shape, got {} and {}.",
            t(&ob),
            t(&ib)
        ));
    }
    if rank != slice_sizes.len() {
        return type_error(format!(
            "Gather op must have one slice size for every input dimension; got: \
             len(slice_sizes)={}, input_shape.rank={rank}",
            slice_sizes.len()
        ));
    }
    if slice_sizes.len()
        != d.offset_dims.len() + d.collapsed_slice_dims.len() + d.operand_batching_dims.len()
    {
        return type_error(format!(
            "All components of the offset index in a gather op must either be a offset \
             dimension or explicitly collapsed/batching; got len(slice_sizes)={}, \
             output_slice_sizes={}, collapsed_slice_dims={}, operand_batching_dims={}.",
            slice_sizes.len(),
            tuple(&d.offset_dims),
            tuple(&d.collapsed_slice_dims),
            tuple(&d.operand_batching_dims)
        ));
    }
    let empty = indices.contains(&0);
    for (i, (&s, &n)) in slice_sizes.iter().zip(operand).enumerate() {
        if !(empty || (s >= 0 && n as i64 >= s)) {
            return type_error(format!(
                "Slice size at index {i} in gather op is out of range, must be within [0, {n} \
                 + 1), got {s}."
            ));
        }
    }
    for (i, &c) in d.collapsed_slice_dims.iter().enumerate() {
        let bound = slice_sizes[c as usize];
        if bound != 1 {
            return type_error(format!(
                "Gather op can only collapse slice dims with bound 1, but bound is {bound} for \
                 index {c} at position {i}."
            ));
        }
    }
    for (i, &b) in d.operand_batching_dims.iter().enumerate() {
        let bound = slice_sizes[b as usize];
        if bound > 1 {
            return type_error(format!(
                "Gather op can only have operand batching dims with bound 0/1, but bound is \
                 {bound} for index {b} at position {i}."
            ));
        }
    }
    let mut sizes = slice_sizes
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            let i = *i as i64;
            !d.collapsed_slice_dims.contains(&i) && !d.operand_batching_dims.contains(&i)
        })
        .map(|(_, &s)| s.max(0) as usize);
    let mut batch = indices[..ivd].iter().copied();
    (0..out_rank)
        .map(|i| {
            if d.offset_dims.contains(&(i as i64)) {
                sizes.next()
            } else {
                batch.next()
            }
        })
        .collect::<Option<Vec<usize>>>()
        .map_or_else(
            || type_error("gather: inconsistent dimension numbers".into()),
            Ok,
        )
}

fn slice_sizes(prim: &Primitive, params: &Params) -> Result<Vec<i64>, Error> {
    match params.require(prim.name, "slice_sizes")? {
        Param::Ints(v) => Ok(v.clone()),
        _ => Err(super::bad_param(
            prim.name,
            "slice_sizes",
            "not a tuple of integers",
        )),
    }
}

pub(super) fn is_index(d: DType) -> bool {
    matches!(d.kind(), Kind::SignedInt | Kind::UnsignedInt)
}

fn shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let [operand, indices] = inputs else {
        return type_error(format!(
            "gather() takes 2 positional arguments but {} were given",
            inputs.len()
        ));
    };
    let d = dnums(prim, params)?;
    let sizes = slice_sizes(prim, params)?;
    Mode::of(prim, params)?;
    let shape = result_shape(operand.shape(), indices.shape(), d, &sizes)?;
    if !is_index(indices.dtype()) {
        return Err(Error::refused(
            Exception::ValueError,
            "indices must have an integer type",
        ));
    }
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        operand.dtype(),
        operand.weak_type()
    )])
}

/// The index vectors' components as exact integers (unsigned ones beyond `i64` kept).
pub(super) fn index_values(indices: &Array) -> Result<Vec<i128>, Error> {
    // JAX's usual index types read directly.
    match indices.dtype() {
        DType::Int32 => {
            return Ok(super::reduce::elems::<i32>(indices)
                .map(i128::from)
                .collect());
        }
        DType::Int64 => {
            return Ok(super::reduce::elems::<i64>(indices)
                .map(i128::from)
                .collect());
        }
        _ => {}
    }
    Ok(match indices.dtype().kind() {
        Kind::UnsignedInt => indices
            .astype(DType::UInt64)?
            .to_vec::<u64>()?
            .into_iter()
            .map(i128::from)
            .collect(),
        _ => indices
            .astype(DType::Int64)?
            .to_vec::<i64>()?
            .into_iter()
            .map(i128::from)
            .collect(),
    })
}

/// `f` of each of the indices' values in order, as exact integers (int32 and int64 read in
/// place, without a copy).
pub(super) fn each_index(indices: &Array, mut f: impl FnMut(i128)) -> Result<(), Error> {
    match indices.dtype() {
        DType::Int32 => super::reduce::elems::<i32>(indices).for_each(|v| f(v.into())),
        DType::Int64 => super::reduce::elems::<i64>(indices).for_each(|v| f(v.into())),
        _ => index_values(indices)?.into_iter().for_each(f),
    }
    Ok(())
}

/// The fill of a `FILL_OR_DROP` gather: `fill_value` as the operand's dtype (`None`: JAX's
/// default, NaN, the least signed or greatest unsigned integer, or True).
fn fill_bytes(dtype: DType, params: &Params) -> Result<Vec<u8>, Error> {
    let bad = || super::bad_param(GATHER.name, "fill_value", "not a number");
    let bits = dtype.bits().clamp(1, 64);
    let x = match params.get("fill_value") {
        None | Some(Param::None) => match dtype.kind() {
            Kind::SignedInt => Array::scalar(-(1i128 << (bits - 1)) as i64),
            Kind::UnsignedInt => Array::scalar(((1u128 << bits) - 1) as u64),
            Kind::Bool => Array::scalar(true),
            _ => Array::scalar(f64::NAN),
        },
        Some(Param::Number(x)) => x.array(),
        Some(Param::Int(i)) => Array::scalar(*i),
        Some(Param::Bool(b)) => Array::scalar(*b),
        Some(Param::Name(t)) => match (t.parse::<u64>(), t.parse::<f64>()) {
            (Ok(u), _) => Array::scalar(u),
            (_, Ok(f)) => Array::scalar(f),
            _ => return Err(bad()),
        },
        Some(_) => return Err(bad()),
    };
    Ok(x.astype(dtype)?.as_bytes().to_vec())
}

/// Row-major strides of `shape`, in elements.
pub(super) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

fn impl_rule(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    avals: &[ShapedArray],
) -> Result<Outputs, Error> {
    let [operand, indices] = inputs else {
        return type_error("gather takes an operand and indices".into());
    };
    let out = &avals[0];
    let d = dnums(prim, params)?;
    let sizes = slice_sizes(prim, params)?;
    let mode = Mode::of(prim, params)?;
    let (os, is) = (operand.shape(), indices.shape());
    let rank = os.len();
    let eb = element_bytes(operand.dtype());
    let n = out.size();
    let total = n.checked_mul(eb).ok_or_else(too_large)?;
    if n == 0 {
        return Ok(smallvec::smallvec![
            Array::from_bytes(out.dtype(), out.shape(), &[])?.with_weak_type(out.weak_type())
        ]);
    }
    let src = operand.as_bytes();
    let fill = match mode {
        Mode::FillOrDrop => Some(fill_bytes(operand.dtype(), params)?),
        _ => None,
    };
    // JAX's FILL_OR_DROP index type: int32 where every dimension fits, else int64.
    let narrow = os.iter().all(|&s| s <= i32::MAX as usize);
    let ost = strides(os);
    let mut walk = Walk::new(
        out.shape(),
        &d.offset_dims,
        rank,
        &[&d.collapsed_slice_dims, &d.operand_batching_dims],
        is,
    );
    // A block of trailing result dimensions contiguous in the operand is copied at once:
    // each block's offset in the operand first, then the copies (`kernels::rows`).
    let (t, run) = walk.contiguous_block(os);
    let run = run.max(1);
    // The start of the window an index vector names,
    // clamped as XLA clamps it; whether it lies wholly inside (`FILL_OR_DROP`).
    let index_start = |vector: &[i128], start: &mut [i128]| {
        let mut inside = true;
        for (c, &dim) in d.start_index_map.iter().enumerate() {
            let mut v = vector.get(c).copied().unwrap_or(0);
            let dim = dim as usize;
            let hi = os[dim] as i128 - i128::from(sizes[dim]);
            if fill.is_some() {
                v = if narrow {
                    i128::from(v as i32)
                } else {
                    i128::from(v as i64)
                };
                inside &= v >= 0 && v <= hi;
            }
            start[dim] = v.clamp(0, hi.max(0));
        }
        inside
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
            let inside = index_start(vector, &mut start);
            offsets.push(if inside {
                (flat(&start) * eb) as u64
            } else {
                rows::SKIP
            });
        };
        if k == 1 && d.start_index_map.len() == 1 {
            // One component: its window's offset is the clamped start times a stride.
            let dim = d.start_index_map[0] as usize;
            let hi = os[dim] as i128 - i128::from(sizes[dim]);
            let stride = (ost[dim] * eb) as u64;
            let checked = fill.is_some();
            each_index(indices, |v| {
                let v = match (checked, narrow) {
                    (false, _) => v,
                    (true, true) => i128::from(v as i32),
                    (true, false) => i128::from(v as i64),
                };
                offsets.push(if checked && (v < 0 || v > hi) {
                    rows::SKIP
                } else {
                    v.clamp(0, hi.max(0)) as u64 * stride
                });
            })?;
        } else if k == 1 {
            each_index(indices, |v| one(&[v]))?;
        } else {
            let idx = index_values(indices)?;
            (0..blocks).for_each(|b| one(idx.get(b * k..b * k + k).unwrap_or_default()));
        }
    } else {
        let batching = (
            &d.operand_batching_dims[..],
            &d.start_indices_batching_dims[..],
        );
        let walked = Walked {
            t,
            ost: &ost,
            eb,
            batching,
        };
        walked.offsets(
            &mut walk,
            &index_values(indices)?,
            blocks,
            &mut offsets,
            index_start,
            |_| true,
        );
    }
    let fill_run = match &fill {
        Some(f) => f[..eb].repeat(run),
        None => Vec::new(),
    };
    let mut copied = true;
    let width = crate::array::layout(out.dtype()).0;
    let data = crate::array::Storage::with_bytes(width, total, |bytes| {
        copied = rows::gather(src, &offsets, run * eb, &fill_run, bytes);
    });
    crate::array::storage::pool::recycle(offsets);
    if !copied {
        return Err(too_large());
    }
    Ok(smallvec::smallvec![Array::from_parts(out.clone(), data)])
}

/// How a gather's result, or a scatter's updates, index the operand: each of its dimensions
/// a window dimension (the operand dimension it runs along, `window_dims` naming them) or a
/// batch dimension (the indices' dimension it runs along, in order), walked in row-major
/// order.
pub(super) struct Walk {
    dims: Vec<Option<usize>>,
    shape: Vec<usize>,
    /// Strides of the indices' batch dimensions, and the index vectors' length.
    ist: Vec<usize>,
    k: usize,
    at: Vec<usize>,
    batch: Vec<usize>,
}

impl Walk {
    /// A walk over `shape`, its `window_dims` running along the operand's dimensions that
    /// are not in `dropped` (of `rank`), over indices of `indices` (the last their vectors).
    pub(super) fn new(
        shape: &[usize],
        window_dims: &[i64],
        rank: usize,
        dropped: &[&[i64]],
        indices: &[usize],
    ) -> Walk {
        let mut free = (0..rank).filter(|&i| !dropped.iter().any(|d| d.contains(&(i as i64))));
        let dims = (0..shape.len())
            .map(|i| {
                if window_dims.contains(&(i as i64)) {
                    Some(free.next().unwrap_or(0))
                } else {
                    None
                }
            })
            .collect();
        let ivd = indices.len().saturating_sub(1);
        Walk {
            dims,
            shape: shape.to_vec(),
            ist: strides(indices.get(..ivd).unwrap_or_default()),
            k: indices.get(ivd).copied().unwrap_or(0),
            at: vec![0; shape.len()],
            batch: vec![0; ivd],
        }
    }

    /// The offset, in the indices' values, of the current element's index vector.
    pub(super) fn row(&mut self) -> usize {
        let mut b = 0;
        for (dim, &a) in self.dims.iter().zip(&self.at) {
            if dim.is_none() {
                if let Some(slot) = self.batch.get_mut(b) {
                    *slot = a;
                }
                b += 1;
            }
        }
        self.batch
            .iter()
            .zip(&self.ist)
            .map(|(a, s)| a * s)
            .sum::<usize>()
            * self.k
    }

    /// The current element's position along the indices' batch dimension `i`.
    pub(super) fn batch(&self, i: usize) -> usize {
        self.batch.get(i).copied().unwrap_or(0)
    }

    /// `start` moved by the current element's place in its window.
    pub(super) fn offset(&self, start: &mut [i128]) {
        for (dim, &a) in self.dims.iter().zip(&self.at) {
            if let Some(w) = dim
                && let Some(s) = start.get_mut(*w)
            {
                *s += a as i128;
            }
        }
    }

    /// The trailing dimensions whose elements lie contiguously in an operand of shape `os`
    /// (row-major): window dimensions running along the operand's last dimensions in order,
    /// each but the outermost spanning its operand dimension whole. Returns how many
    /// dimensions and how many elements such a block holds (`(0, 1)`: none).
    pub(super) fn contiguous_block(&self, os: &[usize]) -> (usize, usize) {
        let (mut t, mut run) = (0, 1usize);
        let rank = os.len();
        for j in (0..self.dims.len()).rev() {
            match self.dims[j] {
                Some(w) if t < rank && w == rank - 1 - t => {
                    run = run.saturating_mul(self.shape[j]);
                    t += 1;
                    if self.shape[j] != os[w] {
                        break;
                    }
                }
                _ => break,
            }
        }
        (t, run)
    }

    /// Whether every dimension before the last `t` runs along the indices (none is a window
    /// dimension): then the blocks of the last `t` dimensions follow the index vectors in
    /// order.
    pub(super) fn outer_dims_are_batch(&self, t: usize) -> bool {
        self.dims[..self.dims.len().saturating_sub(t)]
            .iter()
            .all(Option::is_none)
    }

    /// The length of the index vectors.
    pub(super) fn vector_len(&self) -> usize {
        self.k
    }

    /// On past a block of the last `t` dimensions (from its first element, where they are
    /// all 0).
    pub(super) fn advance_block(&mut self, t: usize) {
        for i in (0..self.at.len().saturating_sub(t)).rev() {
            self.at[i] += 1;
            if self.at[i] < self.shape[i] {
                break;
            }
            self.at[i] = 0;
        }
    }
}

/// The walk over blocks in general: `t` trailing dimensions a block, the operand's strides
/// `ost`, `eb` bytes an element, the (operand, indices) batching dimensions.
pub(super) struct Walked<'a> {
    pub(super) t: usize,
    pub(super) ost: &'a [usize],
    pub(super) eb: usize,
    pub(super) batching: (&'a [i64], &'a [i64]),
}

impl Walked<'_> {
    /// Each of `blocks` blocks' operand byte offset in walk order, pushed to `offsets`: the
    /// window start `set` from the index vector (returning whether it may be inside), the
    /// batching dimensions' starts from the walk, then [`rows::SKIP`] unless `inside` the
    /// whole start, else the start moved by the block's place in its window.
    pub(super) fn offsets(
        &self,
        walk: &mut Walk,
        idx: &[i128],
        blocks: usize,
        offsets: &mut Vec<u64>,
        mut set: impl FnMut(&[i128], &mut [i128]) -> bool,
        inside: impl Fn(&[i128]) -> bool,
    ) {
        let k = walk.vector_len();
        let mut start = vec![0i128; self.ost.len()];
        let mut pos = start.clone();
        for _ in 0..blocks {
            let row = walk.row();
            let vector = idx.get(row..row + k).unwrap_or_default();
            start.iter_mut().for_each(|s| *s = 0);
            let mut ok = set(vector, &mut start);
            for (&ob, &ib) in self.batching.0.iter().zip(self.batching.1) {
                start[ob as usize] = walk.batch(ib as usize) as i128;
            }
            ok &= inside(&start);
            offsets.push(if ok {
                pos.copy_from_slice(&start);
                walk.offset(&mut pos);
                let flat: usize = pos
                    .iter()
                    .zip(self.ost)
                    .map(|(&p, &s)| p as usize * s)
                    .sum();
                (flat * self.eb) as u64
            } else {
                rows::SKIP
            });
            walk.advance_block(self.t);
        }
    }
}

pub(super) fn too_large() -> Error {
    Error::refused(
        Exception::ValueError,
        "gather: an index outside the operand",
    )
}

/// The JVP: the gather of the tangent, filling with 0 (JAX's `_gather_jvp_rule`).
fn jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = super::ad::primal_out(prim, primals, params)?;
    let t = match tangents.first().cloned().flatten() {
        None => None,
        Some(t) => {
            let fill = if Mode::of(prim, params)? == Mode::FillOrDrop {
                Param::Int(0)
            } else {
                Param::None
            };
            let p = params.clone().set("fill_value", fill);
            Some(super::bind1(prim, &[&t, &primals[1]], &p)?)
        }
    };
    Ok((out, vec![t]))
}

/// JAX's batching rule (`_gather_batching_rule`): the batch dimensions moved to the front; an
/// operand batch becomes a leading offset dimension of full slices, an indices batch a
/// leading batch dimension of the result, and a batch of both a batching dimension of each.
fn batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, crate::core::BatchDims), Error> {
    use super::batching::moveaxis;
    let [operand, indices] = args else {
        return type_error("gather takes an operand and indices".into());
    };
    let d = dnums(prim, params)?;
    let sizes = slice_sizes(prim, params)?;
    let up = |v: &[i64]| v.iter().map(|x| x + 1).collect::<Vec<i64>>();
    let front = |x: &Array, b: Option<usize>| b.map_or(Ok(x.clone()), |b| moveaxis(x, b, 0));
    let (o, i) = (front(operand, dims[0])?, front(indices, dims[1])?);
    let (dn, sizes) = match (dims[0], dims[1]) {
        (Some(_), None) => (
            GatherDimensionNumbers {
                offset_dims: std::iter::once(0).chain(up(&d.offset_dims)).collect(),
                collapsed_slice_dims: up(&d.collapsed_slice_dims),
                start_index_map: up(&d.start_index_map),
                operand_batching_dims: up(&d.operand_batching_dims),
                start_indices_batching_dims: d.start_indices_batching_dims.clone(),
            },
            std::iter::once(o.shape()[0] as i64)
                .chain(sizes.iter().copied())
                .collect::<Vec<_>>(),
        ),
        (None, Some(_)) => (
            GatherDimensionNumbers {
                offset_dims: up(&d.offset_dims),
                start_indices_batching_dims: up(&d.start_indices_batching_dims),
                ..d.clone()
            },
            sizes,
        ),
        (Some(_), Some(_)) => (
            GatherDimensionNumbers {
                offset_dims: up(&d.offset_dims),
                collapsed_slice_dims: up(&d.collapsed_slice_dims),
                start_index_map: up(&d.start_index_map),
                operand_batching_dims: std::iter::once(0)
                    .chain(up(&d.operand_batching_dims))
                    .collect(),
                start_indices_batching_dims: std::iter::once(0)
                    .chain(up(&d.start_indices_batching_dims))
                    .collect(),
            },
            std::iter::once(1).chain(sizes.iter().copied()).collect(),
        ),
        (None, None) => return Ok((bind(prim, &[operand, indices], params)?, vec![None])),
    };
    let p = params
        .clone()
        .set("dimension_numbers", Param::GatherDimensionNumbers(dn))
        .set("slice_sizes", Param::Ints(sizes));
    Ok((bind(prim, &[&o, &i], &p)?, vec![Some(0)]))
}

/// `gather` transposed (JAX's `_gather_transpose_rule`): the cotangent scatter-added into
/// zeros of the operand's shape, with the gather's mode.
fn transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[crate::core::Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    use crate::core::Lin;
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let Lin::Known(indices) = &ins[1] else {
        return Err(crate::core::nonlinear());
    };
    let zeros = super::ops::zeros(&ShapedArray::new(ins[0].aval().shape(), ct.dtype(), false))?;
    let p = super::scatter::add_params(ct.dtype(), dnums(prim, params)?.scatter(), params);
    let out = super::bind1(&super::SCATTER_ADD, &[&zeros, indices, &ct], &p)?;
    Ok(vec![Some(out), None])
}
