//! The primitives' batching rules (JAX's `batching.primitive_batchers`), referenced from each
//! primitive's definition. A rule gets the operands — each the whole batch, its batch dimension
//! (`None`: the operand is the same for every example) — runs in the parent of the batching
//! trace, and returns the outputs and their batch dimensions. Every operation in a rule is a
//! bound primitive, so rules compose with staging, differentiation and other batching.
//!
//! Families share one rule: the elementwise primitives (JAX's `broadcast_batcher`: batch
//! dimensions moved to the front, unbatched operands given a unit leading dimension and lax's
//! implicit broadcasting doing the rest), the reductions (axes shifted past the batch
//! dimension), the scans, the structural primitives (their dimension parameters adjusted), the
//! PRNG primitives (a key array's leading dimensions are ordinary dimensions). Where no cheap
//! rewrite exists (`dynamic_slice` and `dynamic_update_slice` with batched start indices:
//! JAX lowers those to `gather`/`scatter`, which this crate does not have) the primitive is
//! applied to each example and the results stacked ([`per_example`]).

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::dot::DOT_GENERAL;
use super::select::SELECT_N;
use super::slicing::{CONCATENATE, SLICE};
use super::structural::{BROADCAST_IN_DIM, SQUEEZE, TRANSPOSE, param_int, param_ints};
use super::{Outputs, Param, Params, Primitive, bind, bind1, expand_dims};
use crate::array::{Array, ShapedArray};

pub use crate::core::BatchDims;

fn ints(v: impl IntoIterator<Item = usize>) -> Param {
    Param::Ints(v.into_iter().map(|d| d as i64).collect())
}

fn refs(xs: &[Array]) -> Vec<&Array> {
    xs.iter().collect()
}

/// A rule called with batch dimensions that do not fit its operands (a bug of a caller
/// inside the crate, refused rather than panicking).
fn internal(what: &str) -> Error {
    Error::refused(
        Exception::ValueError,
        format!("batching {what}: batch dimensions that do not fit the operands"),
    )
}

/// The first batched operand's batch dimension.
fn first_bdim(dims: &[Option<usize>]) -> Result<usize, Error> {
    dims.iter()
        .flatten()
        .copied()
        .next()
        .ok_or_else(|| internal("no batched operand"))
}

/// JAX's `batching.moveaxis`: `x` with dimension `src` moved to position `dst` (a
/// `transpose`, nothing when they are equal).
pub(crate) fn moveaxis(x: &Array, src: usize, dst: usize) -> Result<Array, Error> {
    if src == dst {
        return Ok(x.clone());
    }
    if src >= x.ndim() || dst >= x.ndim() {
        return Err(internal("moveaxis"));
    }
    let mut perm: Vec<usize> = (0..x.ndim()).filter(|&i| i != src).collect();
    perm.insert(dst, src);
    bind1(
        &TRANSPOSE,
        &[x],
        &Params::new().with("permutation", ints(perm)),
    )
}

/// JAX's `batching.broadcast`: `x` with a new dimension of `size` at `axis`.
pub(crate) fn broadcast_axis(x: &Array, size: usize, axis: usize) -> Result<Array, Error> {
    let mut shape = x.shape().to_vec();
    if axis > shape.len() {
        return Err(internal("broadcast"));
    }
    shape.insert(axis, size);
    let dims = (0..shape.len()).filter(|&d| d != axis);
    let p = Params::new()
        .with("shape", ints(shape.iter().copied()))
        .with("broadcast_dimensions", ints(dims))
        .with("sharding", Param::None);
    bind1(&BROADCAST_IN_DIM, &[x], &p)
}

/// JAX's `batching.bdim_at_front`: the batch dimension moved to the front, or for an
/// unbatched operand a new leading dimension of `size`.
pub(crate) fn bdim_at_front(x: &Array, bdim: Option<usize>, size: usize) -> Result<Array, Error> {
    match bdim {
        Some(d) => moveaxis(x, d, 0),
        None => broadcast_axis(x, size, 0),
    }
}

/// `x` (batched at the front, of shape `(size,)` when the example is a scalar) broadcast to
/// `shape` along its leading dimension (a scalar per example against arrays per example).
fn front_to(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    let p = Params::new()
        .with("shape", ints(shape.iter().copied()))
        .with("broadcast_dimensions", ints(0..x.ndim()))
        .with("sharding", Param::None);
    bind1(&BROADCAST_IN_DIM, &[x], &p)
}

/// An operand that may be a scalar per example (`select_n`'s `which`, `clamp`'s bounds) made
/// to go with operands batched at the front, of shape `full` (batch included): a 0-d
/// unbatched one stays (lax broadcasts it), others get the batch at the front and, a scalar
/// per example, the examples' shape.
fn scalar_or_full(x: &Array, bdim: Option<usize>, full: &[usize]) -> Result<Array, Error> {
    match bdim {
        None if x.ndim() == 0 => Ok(x.clone()),
        None => bdim_at_front(x, None, full[0]),
        Some(d) => front_to(&moveaxis(x, d, 0)?, full),
    }
}

/// The axis-size-0 case of the rules that cannot bind on an empty batch: empty outputs of the
/// examples' avals with a leading 0.
fn empty_outputs(
    prim: &'static Primitive,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let avals: Vec<ShapedArray> = args
        .iter()
        .zip(dims)
        .map(|(x, d)| example_aval(x.aval(), *d))
        .collect();
    let refs: Vec<&ShapedArray> = avals.iter().collect();
    let outs = prim.abstract_eval(&refs, params)?;
    let arrays = outs
        .iter()
        .map(|a| {
            let shape: Vec<usize> = std::iter::once(0)
                .chain(a.shape().iter().copied())
                .collect();
            Ok(Array::from_bytes(a.dtype(), &shape, &[])?.with_weak_type(a.weak_type()))
        })
        .collect::<Result<Outputs, Error>>()?;
    let n = arrays.len();
    Ok((arrays, vec![Some(0); n]))
}

/// The aval of one example of a value batched at `bdim`.
pub(crate) fn example_aval(aval: &ShapedArray, bdim: Option<usize>) -> ShapedArray {
    match bdim {
        None => aval.clone(),
        Some(d) => {
            let mut shape = aval.shape().to_vec();
            if d < shape.len() {
                shape.remove(d);
            }
            ShapedArray::new(&shape, aval.dtype(), aval.weak_type())
        }
    }
}

/// Example `i` of `x` along dimension `d` (a `slice` and a `squeeze`).
fn index_in_dim(x: &Array, i: usize, d: usize) -> Result<Array, Error> {
    let mut start = vec![0; x.ndim()];
    let mut limit = x.shape().to_vec();
    start[d] = i;
    limit[d] = i + 1;
    let p = Params::new()
        .with("start_indices", ints(start))
        .with("limit_indices", ints(limit))
        .with("strides", Param::None);
    let s = bind1(&SLICE, &[x], &p)?;
    bind1(
        &SQUEEZE,
        &[&s],
        &Params::new().with("dimensions", ints([d])),
    )
}

/// The fallback rule: the primitive applied to each example, the results stacked along a new
/// leading dimension (`concatenate` of unit-led slices).
pub(crate) fn per_example(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    if size == 0 {
        return empty_outputs(prim, args, dims, params);
    }
    let mut columns: Vec<Vec<Array>> = Vec::new();
    for i in 0..size {
        let ins = args
            .iter()
            .zip(dims)
            .map(|(x, d)| match d {
                Some(d) => index_in_dim(x, i, *d),
                None => Ok(x.clone()),
            })
            .collect::<Result<Vec<Array>, Error>>()?;
        let outs = bind(prim, &refs(&ins), params)?;
        if columns.is_empty() {
            columns = vec![Vec::with_capacity(size); outs.len()];
        }
        for (column, o) in columns.iter_mut().zip(outs) {
            column.push(expand_dims(&o, &[0])?);
        }
    }
    let outs = columns
        .iter()
        .map(|c| match c.as_slice() {
            [one] => Ok(one.clone()),
            _ => bind1(
                &CONCATENATE,
                &refs(c),
                &Params::new().with("dimension", Param::Int(0)),
            ),
        })
        .collect::<Result<Outputs, Error>>()?;
    let n = outs.len();
    Ok((outs, vec![Some(0); n]))
}

/// Unary primitives that map elements (or keys) to elements in place, and the PRNG
/// primitives whose outputs extend the keys' shape: the batch dimension stays where it is
/// (JAX's `vectorized_batcher`).
pub(crate) fn vectorized(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let outs = bind(prim, &refs(args), params)?;
    let n = outs.len();
    Ok((outs, vec![dims[0]; n]))
}

/// Every elementwise primitive: unary ones are [`vectorized`]; n-ary ones follow JAX's
/// `broadcast_batcher`: operands batched alike (scalars aside) bind as they are, otherwise
/// batch dimensions move to the front, unbatched operands get a unit leading dimension and
/// batched scalars trailing unit dimensions, and lax's implicit broadcasting does the rest.
pub(crate) fn elementwise(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    if args.len() == 1 {
        return vectorized(prim, size, args, dims, params);
    }
    let (shape, dim) = args
        .iter()
        .zip(dims)
        .find_map(|(x, d)| d.map(|d| (x.shape(), d)))
        .ok_or_else(|| internal("no batched operand"))?;
    let agree = args
        .iter()
        .zip(dims)
        .filter(|(x, _)| x.ndim() > 0)
        .all(|(x, d)| x.shape() == shape && *d == Some(dim));
    if agree {
        let outs = bind(prim, &refs(args), params)?;
        let n = outs.len();
        return Ok((outs, vec![Some(dim); n]));
    }
    let moved = args
        .iter()
        .zip(dims)
        .map(|(x, d)| {
            if x.ndim() > 0 {
                bdim_at_front(x, *d, 1)
            } else {
                Ok(x.clone())
            }
        })
        .collect::<Result<Vec<Array>, Error>>()?;
    let nd = moved.iter().map(Array::ndim).max().unwrap_or(0);
    let moved = moved
        .into_iter()
        .zip(dims)
        .map(|(x, d)| {
            if d.is_none() || x.ndim() == nd {
                Ok(x)
            } else {
                let trailing: Vec<i64> = (x.ndim()..nd).map(|a| a as i64).collect();
                expand_dims(&x, &trailing)
            }
        })
        .collect::<Result<Vec<Array>, Error>>()?;
    let outs = bind(prim, &refs(&moved), params)?;
    let n = outs.len();
    Ok((outs, vec![Some(0); n]))
}

/// Axes of one example (negative ones counting from its end) as axes of the batch.
fn shift_axes(axes: &[i64], example_ndim: usize, bdim: usize) -> Vec<usize> {
    axes.iter()
        .map(|&a| {
            let a = if a < 0 { a + example_ndim as i64 } else { a };
            let a = a.max(0) as usize;
            if a < bdim { a } else { a + 1 }
        })
        .collect()
}

/// The reductions (`reduce_*`, `argmax`, `argmin`): the reduced axes shifted past the batch
/// dimension, which lands among the kept ones (JAX's `reducer_batcher`).
pub(crate) fn reducer(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let x = &args[0];
    let bdim = first_bdim(dims)?;
    let axes = shift_axes(&param_ints(params, prim.name, "axes")?, x.ndim() - 1, bdim);
    let out_dim = (0..x.ndim())
        .filter(|d| !axes.contains(d))
        .position(|d| d == bdim);
    let params = params.clone().set("axes", ints(axes));
    let outs = bind(prim, &[x], &params)?;
    let n = outs.len();
    Ok((outs, vec![out_dim; n]))
}

/// The scans (`cumsum`, `cumprod`, `cummax`, `cummin`): the axis shifted past the batch
/// dimension.
pub(crate) fn scan(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let bdim = first_bdim(dims)?;
    let axis = param_int(params, prim.name, "axis")?;
    let axis = if axis >= bdim as i64 { axis + 1 } else { axis };
    let params = params.clone().set("axis", Param::Int(axis));
    let outs = bind(prim, &refs(args), &params)?;
    Ok((outs, vec![Some(bdim)]))
}

/// `broadcast_in_dim`: the batch in front of the target shape.
pub(crate) fn broadcast_in_dim(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let x = bdim_at_front(&args[0], dims[0], size)?;
    let shape = params.usizes(prim.name, "shape")?;
    let bdims = params.usizes(prim.name, "broadcast_dimensions")?;
    let params = params
        .clone()
        .set("shape", ints(std::iter::once(size).chain(shape)))
        .set(
            "broadcast_dimensions",
            ints(std::iter::once(0).chain(bdims.into_iter().map(|d| d + 1))),
        );
    Ok((bind(prim, &[&x], &params)?, vec![Some(0)]))
}

/// `reshape`: the batch moved to the front and kept there.
pub(crate) fn reshape(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let x = bdim_at_front(&args[0], dims[0], size)?;
    let sizes = params.usizes(prim.name, "new_sizes")?;
    let mut params = params
        .clone()
        .set("new_sizes", ints(std::iter::once(size).chain(sizes)));
    if params.get("dimensions").is_some() {
        params = params.set("dimensions", Param::None);
    }
    Ok((bind(prim, &[&x], &params)?, vec![Some(0)]))
}

/// `transpose`: the batch dimension first in the permutation.
pub(crate) fn transpose(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let bdim = first_bdim(dims)?;
    let perm = params.usizes(prim.name, "permutation")?;
    let perm =
        std::iter::once(bdim).chain(perm.into_iter().map(|p| if p >= bdim { p + 1 } else { p }));
    let params = params.clone().set("permutation", ints(perm));
    Ok((bind(prim, &[&args[0]], &params)?, vec![Some(0)]))
}

/// `squeeze`: the batch moved to the front, the squeezed dimensions after it.
pub(crate) fn squeeze(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let x = bdim_at_front(&args[0], dims[0], size)?;
    let squeezed = shift_axes(
        &param_ints(params, prim.name, "dimensions")?,
        x.ndim() - 1,
        0,
    );
    let params = params.clone().set("dimensions", ints(squeezed));
    Ok((bind(prim, &[&x], &params)?, vec![Some(0)]))
}

/// `rev`: the reversed dimensions shifted past the batch dimension.
pub(crate) fn rev(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let bdim = first_bdim(dims)?;
    let x = &args[0];
    let reversed = shift_axes(
        &param_ints(params, prim.name, "dimensions")?,
        x.ndim() - 1,
        bdim,
    );
    let params = params.clone().set("dimensions", ints(reversed));
    Ok((bind(prim, &[x], &params)?, vec![Some(bdim)]))
}

/// `slice`: the whole batch dimension taken (start 0, limit its size, stride 1).
pub(crate) fn slice(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let bdim = first_bdim(dims)?;
    let insert = |name: &str, v: i64| -> Result<Param, Error> {
        let mut p = param_ints(params, prim.name, name)?;
        if bdim > p.len() {
            return Err(internal("slice"));
        }
        p.insert(bdim, v);
        Ok(Param::Ints(p))
    };
    let mut new = params
        .clone()
        .set("start_indices", insert("start_indices", 0)?)
        .set("limit_indices", insert("limit_indices", size as i64)?);
    if let Some(Param::Ints(_)) = params.get("strides") {
        new = new.set("strides", insert("strides", 1)?);
    }
    Ok((bind(prim, &[&args[0]], &new)?, vec![Some(bdim)]))
}

/// `pad`: a batched operand is padded along its other dimensions; a batched padding value is
/// padded in through a mask (the operand padded with zeros, a boolean mask of the operand
/// padded with `false`, the padding values selected where the mask is `false`).
pub(crate) fn pad(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let (x, v) = (&args[0], &args[1]);
    let config = match params.require(prim.name, "padding_config")? {
        Param::Padding(c) => c.clone(),
        _ => return Err(internal("pad's padding_config")),
    };
    let with_batch = |at: usize| {
        let mut c = config.clone();
        c.insert(at.min(c.len()), (0, 0, 0));
        params.clone().set("padding_config", Param::Padding(c))
    };
    if dims[1].is_none() {
        let bdim = first_bdim(dims)?;
        return Ok((bind(prim, &[x, v], &with_batch(bdim))?, vec![Some(bdim)]));
    }
    let x = bdim_at_front(x, dims[0], size)?;
    let p = with_batch(0);
    let zero = crate::array::scalar(0.0, x.dtype())?.with_weak_type(v.weak_type());
    let padded = bind1(prim, &[&x, &zero], &p)?;
    let ones = front_to(
        &crate::array::scalar(1.0, dtype_lattice::DType::Bool)?,
        x.shape(),
    )?;
    let mask = bind1(
        prim,
        &[
            &ones,
            &crate::array::scalar(0.0, dtype_lattice::DType::Bool)?,
        ],
        &p,
    )?;
    let values = front_to(&moveaxis(v, dims[1].unwrap_or(0), 0)?, padded.shape())?;
    let out = bind1(&SELECT_N, &[&mask, &values, &padded], &Params::new())?;
    Ok((smallvec::smallvec![out], vec![Some(0)]))
}

/// `concatenate`: every operand batched at the front, the dimension shifted.
pub(crate) fn concatenate(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let moved = args
        .iter()
        .zip(dims)
        .map(|(x, d)| bdim_at_front(x, *d, size))
        .collect::<Result<Vec<Array>, Error>>()?;
    let dim = param_int(params, prim.name, "dimension")?;
    let params = params.clone().set("dimension", Param::Int(dim + 1));
    Ok((bind(prim, &refs(&moved), &params)?, vec![Some(0)]))
}

/// `select_n`: the cases batched at the front (full size); `which` stays a 0-d operand when
/// it is one for every example, else is batched at the front and broadcast to the cases.
pub(crate) fn select_n(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let cases = args[1..]
        .iter()
        .zip(&dims[1..])
        .map(|(x, d)| bdim_at_front(x, *d, size))
        .collect::<Result<Vec<Array>, Error>>()?;
    let full = cases
        .first()
        .map(|c| c.shape().to_vec())
        .unwrap_or_default();
    let which = scalar_or_full(&args[0], dims[0], &full)?;
    let mut ins = vec![which];
    ins.extend(cases);
    Ok((bind(prim, &refs(&ins), params)?, vec![Some(0)]))
}

/// `clamp`: the operand batched at the front; each bound stays 0-d when it is one for every
/// example, else is batched at the front and broadcast to the operand.
pub(crate) fn clamp(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let x = bdim_at_front(&args[1], dims[1], size)?;
    let lo = scalar_or_full(&args[0], dims[0], x.shape())?;
    let hi = scalar_or_full(&args[2], dims[2], x.shape())?;
    Ok((bind(prim, &[&lo, &x, &hi], params)?, vec![Some(0)]))
}

/// A zero start index of the dtype of the other start indices (`int32` when there are none).
fn zero_index(indices: &[Array]) -> Result<Array, Error> {
    let dtype = indices
        .first()
        .map_or(dtype_lattice::DType::Int32, Array::dtype);
    crate::array::scalar(0.0, dtype)
}

/// `dynamic_slice`: with start indices shared by every example, the whole batch dimension is
/// sliced (start 0, its size); with batched start indices, each example is sliced on its own.
pub(crate) fn dynamic_slice(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    if dims[1..].iter().any(Option::is_some) {
        return per_example(prim, size, args, dims, params);
    }
    let bdim = first_bdim(dims)?;
    let mut ins = args.to_vec();
    ins.insert(bdim + 1, zero_index(&args[1..])?);
    let mut sizes = param_ints(params, prim.name, "slice_sizes")?;
    if bdim > sizes.len() {
        return Err(internal("dynamic_slice"));
    }
    sizes.insert(bdim, size as i64);
    let params = params.clone().set("slice_sizes", Param::Ints(sizes));
    Ok((bind(prim, &refs(&ins), &params)?, vec![Some(bdim)]))
}

/// `dynamic_update_slice`: with start indices shared by every example, operand and update
/// batched at the front and a zero start for the batch; with batched start indices, each
/// example is updated on its own.
pub(crate) fn dynamic_update_slice(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    if dims[2..].iter().any(Option::is_some) {
        return per_example(prim, size, args, dims, params);
    }
    let x = bdim_at_front(&args[0], dims[0], size)?;
    let u = bdim_at_front(&args[1], dims[1], size)?;
    let mut ins = vec![x, u, zero_index(&args[2..])?];
    ins.extend_from_slice(&args[2..]);
    Ok((bind(prim, &refs(&ins), params)?, vec![Some(0)]))
}

/// `bitcast_convert_type`: in place, unless the batch dimension is the last one (which a
/// bitcast to a wider type would consume): then moved to the front first.
pub(crate) fn bitcast(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let bdim = first_bdim(dims)?;
    let x = &args[0];
    if bdim + 1 == x.ndim() && bdim != 0 {
        let x = moveaxis(x, bdim, 0)?;
        return Ok((bind(prim, &[&x], params)?, vec![Some(0)]));
    }
    Ok((bind(prim, &[x], params)?, vec![Some(bdim)]))
}

/// `random_wrap`: in place, unless the batch dimension is the last one (the key data's):
/// then moved to the front first.
pub(crate) fn random_wrap(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    bitcast(prim, size, args, dims, params)
}

/// `random_fold_in`: keys and messages broadcast against each other as lax's elementwise
/// primitives do: batches at the front, a unit leading dimension for an unbatched operand.
pub(crate) fn random_fold_in(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let moved = args
        .iter()
        .zip(dims)
        .map(|(x, d)| bdim_at_front(x, *d, 1))
        .collect::<Result<Vec<Array>, Error>>()?;
    Ok((bind(prim, &refs(&moved), params)?, vec![Some(0)]))
}

/// `dot_general` (JAX's `_dot_general_batch_dim_nums`): two batched operands gain a leading
/// batch dimension of the product; one batched operand's batch dimension becomes one of its
/// free dimensions, and the result's batch dimension is where that lands.
pub(crate) fn dot_general(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let (l, r) = (&args[0], &args[1]);
    let Param::DotDimensionNumbers {
        lhs_contracting: lc,
        rhs_contracting: rc,
        lhs_batch: lb,
        rhs_batch: rb,
    } = params.require(prim.name, "dimension_numbers")?
    else {
        return Err(internal("dot_general's dimension_numbers"));
    };
    let bump = |v: &[i64], b: usize| -> Vec<i64> {
        v.iter()
            .map(|&d| if d >= b as i64 { d + 1 } else { d })
            .collect()
    };
    let free_before = |ndim: usize, batch: &[i64], contract: &[i64], b: usize| {
        (0..ndim)
            .filter(|&d| !batch.contains(&(d as i64)) && !contract.contains(&(d as i64)))
            .filter(|&d| d < b)
            .count()
    };
    let (nlc, nrc, nlb, nrb, out) = match (dims[0], dims[1]) {
        (Some(lbd), Some(rbd)) => {
            let nlb: Vec<i64> = std::iter::once(lbd as i64).chain(bump(lb, lbd)).collect();
            let nrb: Vec<i64> = std::iter::once(rbd as i64).chain(bump(rb, rbd)).collect();
            (bump(lc, lbd), bump(rc, rbd), nlb, nrb, 0)
        }
        (Some(lbd), None) => {
            let out = lb.len() + free_before(l.ndim() - 1, lb, lc, lbd);
            (bump(lc, lbd), rc.clone(), bump(lb, lbd), rb.clone(), out)
        }
        (None, Some(rbd)) => {
            let out = l.ndim() - lc.len() + free_before(r.ndim() - 1, rb, rc, rbd);
            (lc.clone(), bump(rc, rbd), lb.clone(), bump(rb, rbd), out)
        }
        (None, None) => return Err(internal("no batched operand")),
    };
    let params = params.clone().set(
        "dimension_numbers",
        Param::DotDimensionNumbers {
            lhs_contracting: nlc,
            rhs_contracting: nrc,
            lhs_batch: nlb,
            rhs_batch: nrb,
        },
    );
    Ok((bind(&DOT_GENERAL, &[l, r], &params)?, vec![Some(out)]))
}

#[cfg(test)]
mod tests {
    /// Every primitive has a batching rule but those that never see a batched operand: `iota`
    /// (no operands), the `jit` call primitive (inlined by the batching trace) and
    /// `custom_lin` (only staged into linear jaxprs and transposed).
    #[test]
    fn every_primitive_has_a_rule_or_a_reason() {
        for p in crate::registry::PRIMITIVES {
            let exempt = matches!(p.name, "iota" | "jit" | "custom_lin");
            assert_eq!(p.batch.is_none(), exempt, "{}", p.name);
        }
    }
}
