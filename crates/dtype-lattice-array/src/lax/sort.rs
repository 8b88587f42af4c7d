//! Sorting: `sort` (several operands sorted together along `dimension`, lexicographically on
//! the first `num_keys`) and `top_k`, as JAX 0.10.2 defines, prints and computes them on CPU.
//!
//! `sort`'s order is JAX's comparator (`_sort_lt_comparator`): floats compare after JAX's
//! canonicalisation, so `-0.0` and `+0.0` tie, every NaN ties with every other and sorts
//! after `+inf`, and (as XLA's CPU code compares with denormals off) a subnormal ties with
//! zero (the NaN of the `…fnuz` float8 formats, the bits of `-0`, sorts before every number
//! there); complex numbers compare by real part, then imaginary part; integers and booleans by
//! value. Ties keep their operands' order (a stable sort); with `is_stable=False` they come
//! in the order XLA's unstable sort leaves them (libstdc++'s introsort, step for step). `top_k` orders by the total order of the bits
//! (`-NaN < -inf < … < -0 < +0 < … < +inf < NaN`), largest first, ties lower index first, as
//! XLA's CPU `TopK` does.
//!
//! Each element becomes an unsigned key whose order is the comparator's, and the lanes are
//! sorted by a stable radix sort ([`crate::kernels::sort`]); a one-operand sort of 32-bit
//! elements moves the elements themselves, others sort a permutation and apply it.
//!
//! Rules: JAX's shape rules and errors, the JVP (`sort`: the operands sorted with an iota, the
//! tangents gathered by the permutation; `top_k`: the tangent gathered at the indices) and
//! the batching rules (the batch a dimension of every operand).

use dtype_lattice::{DType, Error, Kind};

use super::structural::{param_int, type_error, value_error};
use super::{Avals, Outputs, Param, Params, Primitive, bind};
use crate::array::{Array, ShapedArray, element_bytes, py_shape};
use crate::core::{BatchDims, GatherDimensionNumbers};
use crate::kernels::sort::{
    f32_sort_key, f64_sort_key, radix_sort_by_key, sorting_permutation, total_order_key,
    unstable_sort_like_xla,
};

/// The `sort` primitive (`lax.sort`, `jnp.sort`, `jnp.argsort`).
pub static SORT: Primitive = Primitive::new("sort", None, sort_shape_rule, sort_impl)
    .jvp(sort_jvp)
    .batch(sort_batch);

/// The `top_k` primitive (`lax.top_k`).
pub static TOP_K: Primitive = Primitive::new("top_k", Some(1), top_k_shape_rule, top_k_impl)
    .jvp(top_k_jvp)
    .batch(top_k_batch);

fn sort_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let Some(first) = inputs.first() else {
        return type_error("Sort requires at least one operand".into());
    };
    if inputs.iter().any(|a| a.shape() != first.shape()) {
        let shapes: Vec<String> = inputs.iter().map(|a| py_shape(a.shape())).collect();
        return type_error(format!(
            "Arguments to sort must have equal shapes, got: {}",
            shapes.join(" ")
        ));
    }
    let dimension = param_int(params, prim.name, "dimension")?;
    if dimension < 0 || dimension as u64 >= first.ndim() as u64 {
        return value_error(format!(
            "sort dimension {dimension} is out of bounds for array of shape {}",
            py_shape(first.shape())
        ));
    }
    let num_keys = param_int(params, prim.name, "num_keys")?;
    if num_keys < 1 || num_keys as u64 > inputs.len() as u64 {
        return value_error(format!(
            "num_keys={num_keys} must be between 1 and len(operand)={}",
            inputs.len()
        ));
    }
    if let Some(a) = inputs
        .iter()
        .find(|a| matches!(a.dtype().kind(), Kind::Extended | Kind::Void))
    {
        return type_error(format!("sort does not accept dtype {}", a.dtype()));
    }
    Ok(inputs.iter().map(|a| (*a).clone()).collect())
}

/// One key column: an unsigned key an element, and how many of its low bits count.
struct Column {
    keys: Vec<u64>,
    bits: u32,
}

/// The float values of `x` as float32 (float16, bfloat16 and the narrow formats widen
/// exactly) or float64.
fn widened(x: &Array) -> Result<Array, Error> {
    match x.dtype() {
        DType::Float32 | DType::Float64 => Ok(x.clone()),
        _ => x.astype(DType::Float32),
    }
}

/// The key columns of a sort key operand, under JAX's comparator (`daz`: subnormals tie with
/// zero).
fn sort_columns(x: &Array, daz: bool) -> Result<Vec<Column>, Error> {
    let d = x.dtype();
    let narrow = d.bits() <= 32;
    let col = |keys: Vec<u64>, bits| Column { keys, bits };
    Ok(match d.kind() {
        Kind::Float => match widened(x)? {
            w if w.dtype() == DType::Float64 => {
                let v = w.to_vec::<f64>()?;
                vec![col(
                    v.iter().map(|f| f64_sort_key(f.to_bits(), daz)).collect(),
                    64,
                )]
            }
            w => {
                let v = w.to_vec::<f32>()?;
                // The formats whose one NaN is the bits of -0 (`…fnuz`): XLA's comparison
                // orders that NaN before every number.
                let nan_first = daz
                    && matches!(
                        d,
                        DType::Float8E4M3Fnuz | DType::Float8E5M2Fnuz | DType::Float8E4M3B11Fnuz
                    );
                vec![col(
                    v.iter()
                        .map(|f| {
                            if nan_first && f.is_nan() {
                                0
                            } else {
                                f32_sort_key(f.to_bits(), daz) as u64
                            }
                        })
                        .collect(),
                    32,
                )]
            }
        },
        Kind::Complex if d == DType::Complex64 => {
            let v = x.to_vec::<num_complex::Complex<f32>>()?;
            let part = |f: fn(&num_complex::Complex<f32>) -> f32| {
                col(
                    v.iter()
                        .map(|c| f32_sort_key(f(c).to_bits(), daz) as u64)
                        .collect(),
                    32,
                )
            };
            vec![part(|c| c.re), part(|c| c.im)]
        }
        Kind::Complex => {
            let v = x.to_vec::<num_complex::Complex<f64>>()?;
            let part = |f: fn(&num_complex::Complex<f64>) -> f64| {
                col(
                    v.iter()
                        .map(|c| f64_sort_key(f(c).to_bits(), daz))
                        .collect(),
                    64,
                )
            };
            vec![part(|c| c.re), part(|c| c.im)]
        }
        Kind::SignedInt => {
            let v = x.astype(DType::Int64)?.to_vec::<i64>()?;
            if narrow {
                vec![col(
                    v.iter()
                        .map(|&i| ((i as i32 as u32) ^ (1 << 31)) as u64)
                        .collect(),
                    32,
                )]
            } else {
                vec![col(v.iter().map(|&i| (i as u64) ^ (1 << 63)).collect(), 64)]
            }
        }
        Kind::UnsignedInt | Kind::Bool => {
            let v = x.astype(DType::UInt64)?.to_vec::<u64>()?;
            vec![col(v, if narrow { 32 } else { 64 })]
        }
        _ => return type_error(format!("sort does not accept dtype {d}")),
    })
}

/// The lanes of a shape along `dim`: `(outer, n, inner)`, lane `(o, i)`'s element `t` at
/// `(o·n + t)·inner + i`.
fn lanes(shape: &[usize], dim: usize) -> (usize, usize, usize) {
    (
        shape[..dim].iter().product(),
        shape[dim],
        shape[dim + 1..].iter().product(),
    )
}

/// A one-operand sort of float32, int32 or uint32 along the last dimension: the elements
/// themselves radix-sorted by their keys.
fn sort_words(x: &Array, dim: usize, daz: bool) -> Result<Option<Array>, Error> {
    let (_, n, inner) = lanes(x.shape(), dim);
    if inner != 1 || n == 0 {
        return Ok(None);
    }
    let key: fn(u32, bool) -> u64 = match x.dtype() {
        DType::Float32 => |b, daz| f32_sort_key(b, daz) as u64,
        DType::Int32 => |b, _| (b ^ (1 << 31)) as u64,
        DType::UInt32 => |b, _| b as u64,
        _ => return Ok(None),
    };
    let mut words: Vec<u32> = x
        .as_bytes()
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut scratch = Vec::new();
    for lane in words.chunks_exact_mut(n) {
        radix_sort_by_key(lane, &mut scratch, 32, |b| key(b, daz));
    }
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    Ok(Some(Array::from_bytes(x.dtype(), x.shape(), &bytes)?))
}

/// The permutation sorting one lane by `cols` (lexicographically): stable, or (`stable`
/// false) as XLA's unstable sort orders ties.
fn lane_permutation(
    cols: &[Column],
    at: impl Fn(usize) -> usize,
    n: usize,
    stable: bool,
    perm: &mut Vec<u32>,
) {
    if !stable {
        perm.clear();
        perm.extend(0..n as u32);
        let less = |a: u32, b: u32| {
            let (a, b) = (at(a as usize), at(b as usize));
            cols.iter()
                .map(|c| c.keys[a].cmp(&c.keys[b]))
                .find(|o| o.is_ne())
                .is_some_and(|o| o.is_lt())
        };
        unstable_sort_like_xla(perm, &less);
    } else if let [c] = cols {
        let lane: Vec<u64> = (0..n).map(|t| c.keys[at(t)]).collect();
        sorting_permutation(&lane, c.bits, perm);
    } else {
        perm.clear();
        perm.extend(0..n as u32);
        perm.sort_by(|&a, &b| {
            let (a, b) = (at(a as usize), at(b as usize));
            cols.iter()
                .map(|c| c.keys[a].cmp(&c.keys[b]))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }
}

/// Every operand's elements moved by each lane's permutation.
fn permuted(
    inputs: &[&Array],
    dim: usize,
    mut perm_of: impl FnMut(&dyn Fn(usize) -> usize, &mut Vec<u32>),
) -> Vec<Vec<u8>> {
    let shape = inputs[0].shape();
    let (outer, n, inner) = lanes(shape, dim);
    let mut outs: Vec<Vec<u8>> = inputs.iter().map(|x| x.as_bytes().to_vec()).collect();
    let widths: Vec<usize> = inputs.iter().map(|x| element_bytes(x.dtype())).collect();
    let mut perm = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            let at = move |t: usize| (o * n + t) * inner + i;
            perm_of(&at, &mut perm);
            for ((out, x), &w) in outs.iter_mut().zip(inputs).zip(&widths) {
                let src = x.as_bytes();
                match (w, inner) {
                    // A contiguous lane of 4-byte elements: whole words moved.
                    (4, 1) => {
                        let lane = &mut out[o * n * 4..(o + 1) * n * 4];
                        let from = &src[o * n * 4..(o + 1) * n * 4];
                        for (d, &p) in lane.chunks_exact_mut(4).zip(perm.iter()) {
                            let k = p as usize * 4;
                            d.copy_from_slice(&from[k..k + 4]);
                        }
                    }
                    _ => {
                        for (t, &p) in perm.iter().enumerate() {
                            let (to, from) = (at(t) * w, at(p as usize) * w);
                            out[to..to + w].copy_from_slice(&src[from..from + w]);
                        }
                    }
                }
            }
        }
    }
    outs
}

fn sort_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let dim = param_int(params, prim.name, "dimension")? as usize;
    let num_keys = param_int(params, prim.name, "num_keys")? as usize;
    let daz = super::on_xla();
    let x = inputs[0];
    if x.shape()[dim] > u32::MAX as usize {
        return Err(crate::array::invalid(
            "sort",
            "a dimension longer than 2^32",
        ));
    }
    // XLA's CPU backend (not NumPy, under its rules) cannot compile a sort of 2-bit integers
    // beside operands of another width (`jnp.argsort` of int2: its iota is int32).
    let two_bit = |a: &&Array| matches!(a.dtype(), DType::Int2 | DType::UInt2);
    if daz && x.shape()[dim] >= 2 && inputs.iter().any(two_bit) && !inputs.iter().all(two_bit) {
        return Err(Error::refused(
            dtype_lattice::error::Exception::JaxRuntimeError,
            "INTERNAL: Inputs must have the same shape",
        ));
    }
    let stable = !matches!(params.get("is_stable"), Some(Param::Bool(false)));
    let weak = |y: Array, a: &ShapedArray| y.with_weak_type(a.weak_type());
    if inputs.len() == 1
        && stable
        && let Some(y) = sort_words(x, dim, daz)?
    {
        return Ok(smallvec::smallvec![weak(y, &out[0])]);
    }
    let mut cols = Vec::new();
    for k in &inputs[..num_keys] {
        cols.extend(sort_columns(k, daz)?);
    }
    let n = x.shape()[dim];
    let outs = permuted(inputs, dim, |at, perm| {
        lane_permutation(&cols, at, n, stable, perm)
    });
    outs.iter()
        .zip(inputs)
        .zip(out)
        .map(|((b, x), a)| Ok(weak(Array::from_bytes(x.dtype(), x.shape(), b)?, a)))
        .collect()
}

/// The index dtype of `sort`'s JVP (JAX's `int_dtype_for_shape(…, signed=False)`).
fn index_dtype(shape: &[usize]) -> DType {
    if shape.iter().any(|&d| d as u64 > u32::MAX as u64) {
        DType::UInt64
    } else {
        DType::UInt32
    }
}

/// `tangent` gathered along `dim` at `idx` (of `tangent`'s shape plus a trailing 1), every
/// other dimension a batching dimension: JAX's gather of sorted tangents.
fn gather_along(tangent: &Array, idx: &Array, dim: usize, mode: &str) -> Result<Array, Error> {
    let ndim = tangent.ndim() as i64;
    let others: Vec<i64> = (0..ndim).filter(|&d| d != dim as i64).collect();
    let dn = GatherDimensionNumbers {
        offset_dims: vec![],
        collapsed_slice_dims: vec![dim as i64],
        start_index_map: vec![dim as i64],
        operand_batching_dims: others.clone(),
        start_indices_batching_dims: others,
    };
    let p = Params::new()
        .with("dimension_numbers", Param::GatherDimensionNumbers(dn))
        .with("fill_value", Param::None)
        .with("indices_are_sorted", Param::Bool(false))
        .with("mode", Param::Name(mode.into()))
        .with("slice_sizes", Param::Ints(vec![1; ndim as usize]))
        .with("unique_indices", Param::Bool(false));
    super::bind1(&super::GATHER, &[tangent, idx], &p)
}

/// `sort`'s JVP (JAX's `_sort_jvp`): the operands sorted with an iota along the dimension as a
/// last operand, the tangents gathered by the permutation it gives.
fn sort_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let dim = param_int(params, prim.name, "dimension")?;
    let shape = primals[0].shape();
    let iota = bind(
        &super::IOTA,
        &[],
        &Params::new()
            .with("dimension", Param::Int(dim))
            .with("dtype", Param::DType(index_dtype(shape)))
            .with("shape", super::ints(shape.iter().copied()))
            .with("sharding", Param::None),
    )?
    .remove(0);
    let mut ops: Vec<&Array> = primals.iter().collect();
    ops.push(&iota);
    let mut sorted = bind(prim, &ops, params)?;
    let perm = sorted.pop().expect("sort returns its operands");
    let idx = super::expand_dims(&perm, &[shape.len() as i64])?;
    let ts = tangents
        .iter()
        .map(|t| {
            t.as_ref()
                .map(|t| gather_along(t, &idx, dim as usize, "GatherScatterMode.PROMISE_IN_BOUNDS"))
                .transpose()
        })
        .collect::<Result<_, _>>()?;
    Ok((sorted, ts))
}

/// `sort`'s batching rule (JAX's `_sort_batch_rule`): unbatched operands broadcast to the
/// batched ones' shape, every operand's batch at the first batched operand's dimension.
fn sort_batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    use super::batching::{first_bdim, moveaxis};
    let b = first_bdim(dims)?;
    let proto = args
        .iter()
        .zip(dims)
        .find_map(|(a, d)| d.map(|_| a))
        .expect("a batched operand");
    let shape = proto.shape().to_vec();
    let moved = args
        .iter()
        .zip(dims)
        .map(|(a, d)| match d {
            Some(d) => moveaxis(a, *d, b),
            None => {
                let kept: Vec<usize> = (0..shape.len()).filter(|&k| k != b).collect();
                let p = Params::new()
                    .with("shape", super::ints(shape.iter().copied()))
                    .with("broadcast_dimensions", super::ints(kept))
                    .with("sharding", Param::None);
                super::bind1(&super::BROADCAST_IN_DIM, &[a], &p)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let dim = param_int(params, prim.name, "dimension")? as usize;
    let dim = dim + usize::from(b <= dim);
    let p = params.clone().set("dimension", Param::Int(dim as i64));
    let refs: Vec<&Array> = moved.iter().collect();
    let out = bind(prim, &refs, &p)?;
    let n = out.len();
    Ok((out, vec![Some(b); n]))
}

// ---- top_k

fn top_k_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let k = param_int(params, prim.name, "k")?;
    let axis = param_int(params, prim.name, "axis")?;
    if x.dtype().kind() == Kind::Complex {
        return value_error("top_k is not compatible with complex inputs.".into());
    }
    if matches!(x.dtype().kind(), Kind::Extended | Kind::Void) {
        return type_error(format!("top_k does not accept dtype {}", x.dtype()));
    }
    if k < 0 {
        return value_error(format!("k argument to top_k must be nonnegative, got {k}"));
    }
    if x.ndim() == 0 {
        return type_error(format!(
            "top_k operand must have >= 1 dimension, got {}",
            py_shape(x.shape())
        ));
    }
    if axis < 0 || axis as u64 >= x.ndim() as u64 {
        return value_error(format!(
            "axis argument out of range: axis={axis} for operand.shape={}",
            py_shape(x.shape())
        ));
    }
    let axis = axis as usize;
    if x.shape()[axis] as u64 > i32::MAX as u64 + 1 {
        return value_error(format!(
            "top_k returns int32 indices, which will overflow for array dimensions larger \
             than the maximum int32 ({}). Got operand.shape={}",
            i32::MAX,
            py_shape(x.shape())
        ));
    }
    if (x.shape()[axis] as u64) < k as u64 {
        let list: Vec<String> = x.shape().iter().map(|d| d.to_string()).collect();
        return value_error(format!(
            "k argument to top_k must be no larger than size along axis; got k={k} with \
             shape=[{}] and axis={axis}",
            list.join(", ")
        ));
    }
    let mut shape = x.shape().to_vec();
    shape[axis] = k as usize;
    Ok(smallvec::smallvec![
        ShapedArray::new(&shape, x.dtype(), x.weak_type()),
        ShapedArray::new(&shape, DType::Int32, false),
    ])
}

/// `top_k`'s order keys: the total order of the bits (float16, bfloat16, float32, float64
/// as they are; the narrow float formats by their float32 values), integers by value.
fn top_k_keys(x: &Array) -> Result<(Vec<u64>, u32), Error> {
    let d = x.dtype();
    let b = x.as_bytes();
    Ok(match (d, d.kind()) {
        (DType::Float16 | DType::BFloat16, _) => (
            b.chunks_exact(2)
                .map(|c| total_order_key(u16::from_ne_bytes([c[0], c[1]]) as u64, 16))
                .collect(),
            16,
        ),
        (DType::Float64, _) => (
            x.to_vec::<f64>()?
                .iter()
                .map(|f| total_order_key(f.to_bits(), 64))
                .collect(),
            64,
        ),
        (_, Kind::Float) => (
            widened(x)?
                .to_vec::<f32>()?
                .iter()
                .map(|f| total_order_key(f.to_bits() as u64, 32))
                .collect(),
            32,
        ),
        (_, Kind::SignedInt) => (
            x.astype(DType::Int64)?
                .to_vec::<i64>()?
                .iter()
                .map(|&i| (i as u64) ^ (1 << 63))
                .collect(),
            64,
        ),
        _ => (x.astype(DType::UInt64)?.to_vec::<u64>()?, 64),
    })
}

fn top_k_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let x = inputs[0];
    let axis = param_int(params, prim.name, "axis")? as usize;
    let k = param_int(params, prim.name, "k")? as usize;
    let (keys, bits) = top_k_keys(x)?;
    let all = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let (outer, n, inner) = lanes(x.shape(), axis);
    let w = element_bytes(x.dtype());
    let src = x.as_bytes();
    let mut vals = vec![0u8; outer * k * inner * w];
    let mut idxs = vec![0i32; outer * k * inner];
    let mut perm = Vec::with_capacity(n);
    let mut lane = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            let at = |t: usize| (o * n + t) * inner + i;
            lane.clear();
            // Largest first: the complemented keys ascending, ties in index order.
            lane.extend((0..n).map(|t| !keys[at(t)] & all));
            sorting_permutation(&lane, bits, &mut perm);
            for (j, &p) in perm.iter().take(k).enumerate() {
                let to = (o * k + j) * inner + i;
                let from = at(p as usize);
                vals[to * w..(to + 1) * w].copy_from_slice(&src[from * w..(from + 1) * w]);
                idxs[to] = p as i32;
            }
        }
    }
    Ok(smallvec::smallvec![
        Array::from_bytes(x.dtype(), out[0].shape(), &vals)?.with_weak_type(out[0].weak_type()),
        Array::from_shape_vec(out[1].shape(), idxs)?,
    ])
}

/// `top_k`'s JVP (JAX's `_top_k_jvp`): the tangent gathered at the indices.
fn top_k_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = bind(prim, &[&primals[0]], params)?;
    let t = match &tangents[0] {
        None => None,
        Some(t) => {
            let axis = param_int(params, prim.name, "axis")? as usize;
            let mut shape = out[1].shape().to_vec();
            shape.push(1);
            let idx = super::ad::reshape(&out[1], &shape)?;
            Some(gather_along(
                t,
                &idx,
                axis,
                "GatherScatterMode.FILL_OR_DROP",
            )?)
        }
    };
    Ok((out, vec![t, None]))
}

/// `top_k`'s batching rule: the axis shifted past the batch dimension.
fn top_k_batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let b = super::batching::first_bdim(dims)?;
    let axis = param_int(params, prim.name, "axis")? as usize;
    let axis = axis + usize::from(b <= axis);
    let p = params.clone().set("axis", Param::Int(axis as i64));
    Ok((bind(prim, &[&args[0]], &p)?, vec![Some(b), Some(b)]))
}
