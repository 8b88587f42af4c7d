//! The batching rules the primitive families share (JAX's `batching.broadcast_batcher`,
//! `vectorized_batcher`, `reducer_batcher` and helpers such as `moveaxis` and
//! `bdim_at_front`); each family's file holds its own primitives' rules and uses these. A rule
//! gets the operands — each the whole batch, its batch dimension (`None`: the operand is the
//! same for every example) — runs in the parent of the batching trace, and returns the outputs
//! and their batch dimensions. Every operation in a rule is a bound primitive, so rules compose
//! with staging, differentiation and other batching.
//!
//! Shared rules: [`elementwise`] (batch dimensions moved to the front, unbatched operands
//! given a unit leading dimension, lax's implicit broadcasting doing the rest), [`vectorized`]
//! (in place), [`reducer`] (axes shifted past the batch dimension), [`scan`]. Where no cheap
//! rewrite exists (`dynamic_slice` and `dynamic_update_slice` with batched start indices: JAX
//! lowers those to `gather`/`scatter`, which this crate does not have) the primitive is applied
//! to each example and the results stacked ([`per_example`]).

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::slicing::{CONCATENATE, SLICE};
use super::structural::{BROADCAST_IN_DIM, SQUEEZE, TRANSPOSE, param_int, param_ints};
use super::{Outputs, Param, Params, Primitive, bind, bind1, expand_dims};
use crate::array::{Array, ShapedArray};

pub use crate::core::BatchDims;

pub(crate) fn refs(xs: &[Array]) -> Vec<&Array> {
    xs.iter().collect()
}

/// A rule called with batch dimensions that do not fit its operands (a bug of a caller
/// inside the crate, refused rather than panicking).
pub(crate) fn internal(what: &str) -> Error {
    Error::refused(
        Exception::ValueError,
        format!("batching {what}: batch dimensions that do not fit the operands"),
    )
}

/// The first batched operand's batch dimension.
pub(crate) fn first_bdim(dims: &[Option<usize>]) -> Result<usize, Error> {
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
        &Params::new().with("permutation", super::ints(perm)),
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
        .with("shape", super::ints(shape.iter().copied()))
        .with("broadcast_dimensions", super::ints(dims))
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
pub(crate) fn front_to(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    let p = Params::new()
        .with("shape", super::ints(shape.iter().copied()))
        .with("broadcast_dimensions", super::ints(0..x.ndim()))
        .with("sharding", Param::None);
    bind1(&BROADCAST_IN_DIM, &[x], &p)
}

/// An operand that may be a scalar per example (`select_n`'s `which`, `clamp`'s bounds) made
/// to go with operands batched at the front, of shape `full` (batch included): a 0-d
/// unbatched one stays (lax broadcasts it), others get the batch at the front and, a scalar
/// per example, the examples' shape.
pub(crate) fn scalar_or_full(
    x: &Array,
    bdim: Option<usize>,
    full: &[usize],
) -> Result<Array, Error> {
    match bdim {
        None if x.ndim() == 0 => Ok(x.clone()),
        None => bdim_at_front(x, None, full[0]),
        Some(d) => front_to(&moveaxis(x, d, 0)?, full),
    }
}

/// The axis-size-0 case of the rules that cannot bind on an empty batch: empty outputs of the
/// examples' avals with a leading 0.
pub(crate) fn empty_outputs(
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
pub(crate) fn index_in_dim(x: &Array, i: usize, d: usize) -> Result<Array, Error> {
    let mut start = vec![0; x.ndim()];
    let mut limit = x.shape().to_vec();
    start[d] = i;
    limit[d] = i + 1;
    let p = Params::new()
        .with("start_indices", super::ints(start))
        .with("limit_indices", super::ints(limit))
        .with("strides", Param::None);
    let s = bind1(&SLICE, &[x], &p)?;
    bind1(
        &SQUEEZE,
        &[&s],
        &Params::new().with("dimensions", super::ints([d])),
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
pub(crate) fn shift_axes(axes: &[i64], example_ndim: usize, bdim: usize) -> Vec<usize> {
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
    let params = params.clone().set("axes", super::ints(axes));
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

/// `x.sum(axis)` as JAX's `matchaxis` sums an unbatched cotangent over the batch (`jnp.sum`
/// of a float or complex array: float16 and bfloat16 accumulated in float32; the result
/// strong, of `x`'s dtype).
pub(crate) fn sum_axis(x: &Array, axis: usize) -> Result<Array, Error> {
    use dtype_lattice::DType;
    let strong = |x: &Array, d: DType| super::ops::convert(x, d, false);
    let dtype = x.dtype();
    let computation = match dtype {
        DType::Float16 | DType::BFloat16 => DType::Float32,
        d => d,
    };
    let a = strong(x, computation)?;
    let p = Params::new()
        .with("axes", Param::Ints(vec![axis as i64]))
        .with("out_sharding", Param::None);
    let r = bind1(&super::REDUCE_SUM, &[&a], &p)?;
    strong(&r, dtype)
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
