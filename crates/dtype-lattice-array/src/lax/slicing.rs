//! The slicing family, on the structural kernel ([`assemble_any`]): `slice`, `dynamic_slice`
//! and `dynamic_update_slice` (start indices are operands, clamped into range as XLA does),
//! `concatenate` (any number of operands) and `pad` (negative low/high padding crops; interior
//! padding between elements). Shape rules and refusals are `jax.lax`'s.

use super::{ad, batching};
use crate::core::{bind, bind1};

use super::ops;
use super::{Avals, Outputs};
use crate::core::{BatchDims, Lin};
use dtype_lattice::{DType, Error, Kind};

use super::structural::{
    assemble_any, flat, param_ints, py_ints, strided_any, strides, type_error, value_error,
};
use super::{Param, Params, Primitive};
use crate::array::{Array, ShapedArray, py_shape};

/// A Python tuple of a shape, as JAX's messages print `operand.shape`.
fn shape_str(a: &ShapedArray) -> String {
    py_shape(a.shape())
}

fn slice_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let start = param_ints(params, prim.name, "start_indices")?;
    let limit = param_ints(params, prim.name, "limit_indices")?;
    for (name, v) in [("start_indices", &start), ("limit_indices", &limit)] {
        if v.iter().any(|&i| i < 0) {
            return type_error(format!(
                "slice {name} must have every element be nonnegative, got {}.",
                py_ints(v)
            ));
        }
    }
    if x.ndim() != start.len() {
        return type_error(format!(
            "slice start_indices must have length equal to the number of dimensions of the \
             operand, got indices {} for operand shape {}.",
            py_ints(&start),
            shape_str(x)
        ));
    }
    if start.len() != limit.len() {
        return type_error(format!(
            "slice limit_indices must have the same length as start_indices, got start_indices \
             {} and limit_indices {}.",
            py_ints(&start),
            py_ints(&limit)
        ));
    }
    if x.shape()
        .iter()
        .zip(&limit)
        .any(|(&d, &l)| l as u64 > d as u64)
    {
        return type_error(format!(
            "slice limit_indices must be less than or equal to operand shape, got \
             limit_indices {} for operand shape {}.",
            py_ints(&limit),
            shape_str(x)
        ));
    }
    if limit.iter().zip(&start).any(|(l, s)| l < s) {
        return type_error(format!(
            "slice limit_indices must be greater than or equal to start_indices, got \
             start_indices {} and limit_indices {}.",
            py_ints(&start),
            py_ints(&limit)
        ));
    }
    let diff: Vec<usize> = limit
        .iter()
        .zip(&start)
        .map(|(l, s)| (l - s) as usize)
        .collect();
    let strides = match params.get("strides") {
        None | Some(Param::None) => None,
        Some(Param::Ints(v)) if v.iter().all(|&s| s == 1) && v.len() == x.ndim() => None,
        Some(Param::Ints(v)) => Some(v.clone()),
        Some(_) => return type_error("slice strides must be a tuple or None".into()),
    };
    let Some(st) = strides else {
        return Ok(smallvec::smallvec![ShapedArray::new(
            &diff,
            x.dtype(),
            x.weak_type()
        )]);
    };
    if st.iter().any(|&s| s < 0) {
        return type_error(format!(
            "slice strides must have every element be nonnegative, got {}.",
            py_ints(&st)
        ));
    }
    if st.len() != x.ndim() {
        return type_error(format!(
            "slice strides must have length equal to the number of dimensions of the operand, \
             got strides {} for operand shape {}.",
            py_ints(&st),
            shape_str(x)
        ));
    }
    if st.contains(&0) {
        // JAX raises Python's ZeroDivisionError here (no class of ours).
        return Err(crate::array::invalid(
            "slice.strides",
            "integer division or modulo by zero",
        ));
    }
    // core.stride_dim(d, 1, s): 0 if d < 1 else (d - 1) // s + 1
    let shape: Vec<usize> = diff
        .iter()
        .zip(&st)
        .map(|(&d, &s)| if d == 0 { 0 } else { (d - 1) / s as usize + 1 })
        .collect();
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        x.dtype(),
        x.weak_type()
    )])
}

fn slice_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let x = inputs[0];
    let start = params.usizes(prim.name, "start_indices")?;
    let step = match params.get("strides") {
        Some(Param::Ints(_)) => params.usizes(prim.name, "strides")?,
        _ => vec![1; x.ndim()],
    };
    let st = strides(x.shape());
    let base = flat(start.iter().copied(), &st);
    let steps: Vec<isize> = st
        .iter()
        .zip(&step)
        .map(|(&s, &k)| (s * k) as isize)
        .collect();
    Ok(smallvec::smallvec![strided_any(x, &out[0], base, &steps)])
}

/// The `slice` primitive.
pub static SLICE: Primitive = Primitive::new("slice", Some(1), slice_shape_rule, slice_impl)
    .jvp(ad::linear_jvp)
    .transpose(slice_transpose)
    .batch(slice_batch)
    .prepare(super::moves::prepare)
    .takes_float0();

/// NumPy's integer kinds (ml_dtypes' sub-byte integers are not among them).
fn is_int(d: DType) -> bool {
    matches!(d.kind(), Kind::SignedInt | Kind::UnsignedInt) && d.bits() >= 8
}

/// The start-index operands' dtype check (`index arguments to … must be integers of the same
/// type, got…`), `sep` being what JAX puts after `got` (`":"` for dynamic_slice, nothing for
/// dynamic_update_slice).
fn check_indices(name: &str, sep: &str, idx: &[&ShapedArray]) -> Result<(), Error> {
    if let Some(first) = idx.first()
        && idx
            .iter()
            .any(|i| i.dtype() != first.dtype() || !is_int(i.dtype()))
    {
        let names: Vec<String> = idx.iter().map(|i| i.dtype().to_string()).collect();
        return type_error(format!(
            "index arguments to {name} must be integers of the same type, got{sep} {}",
            names.join(", ")
        ));
    }
    Ok(())
}

/// `(ShapedArray(int32[]), ShapedArray(int32[2]))`: a tuple of avals as JAX prints it.
fn avals_tuple(idx: &[&ShapedArray]) -> String {
    let items: Vec<String> = idx.iter().map(|a| format!("ShapedArray({a})")).collect();
    match items.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", items.join(", ")),
    }
}

fn dynamic_slice_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let Some((&x, idx)) = inputs.split_first() else {
        return type_error(
            "dynamic_slice() missing 1 required positional argument: 'operand'".into(),
        );
    };
    let sizes = param_ints(params, prim.name, "slice_sizes")?;
    if sizes.len() != x.ndim() || idx.len() != x.ndim() {
        return type_error(format!(
            "dynamic_slice takes one start index per operand dimension and one slice size per \
             dimension, got {} indices and slice_sizes {} for operand shape {}.",
            idx.len(),
            py_ints(&sizes),
            shape_str(x)
        ));
    }
    if x.shape().iter().zip(&sizes).any(|(&d, &s)| s > d as i64) {
        return type_error(format!(
            "slice slice_sizes must be less than or equal to operand shape, got slice_sizes {} \
             for operand shape {}.",
            py_ints(&sizes),
            shape_str(x)
        ));
    }
    if sizes.iter().any(|&s| s < 0) {
        return type_error(format!(
            "slice slice_sizes must be greater than or equal to zero, got slice_sizes of {}.",
            py_ints(&sizes)
        ));
    }
    if idx.iter().any(|i| i.ndim() != 0) {
        return type_error(format!(
            "start_indices arguments to dynamic_slice must be scalars,  got indices {}",
            avals_tuple(idx)
        ));
    }
    check_indices("dynamic_slice", ":", idx)?;
    let shape: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        x.dtype(),
        x.weak_type()
    )])
}

/// The value of a 0-d integer array as `i128` (any integer dtype).
fn index_value(a: &Array) -> Result<i128, Error> {
    if a.dtype() == DType::UInt64 {
        return Ok(i128::from(a.to_vec::<u64>()?.first().copied().unwrap_or(0)));
    }
    let v = a.astype(DType::Int64)?.to_vec::<i64>()?;
    Ok(i128::from(v.first().copied().unwrap_or(0)))
}

/// Start indices clamped into `0..=dim - size` (XLA's semantics).
fn clamped_starts(idx: &[&Array], dims: &[usize], sizes: &[usize]) -> Result<Vec<usize>, Error> {
    idx.iter()
        .zip(dims.iter().zip(sizes))
        .map(|(i, (&d, &s))| {
            let hi = (d - s) as i128;
            Ok(index_value(i)?.clamp(0, hi) as usize)
        })
        .collect()
}

fn dynamic_slice_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let (x, idx) = (inputs[0], &inputs[1..]);
    let start = clamped_starts(idx, x.shape(), out[0].shape())?;
    let st = strides(x.shape());
    let steps: Vec<isize> = st.iter().map(|&s| s as isize).collect();
    Ok(smallvec::smallvec![strided_any(
        x,
        &out[0],
        flat(start.iter().copied(), &st),
        &steps
    )])
}

/// The `dynamic_slice` primitive.
pub static DYNAMIC_SLICE: Primitive = Primitive::new(
    "dynamic_slice",
    None,
    dynamic_slice_shape_rule,
    dynamic_slice_impl,
)
.jvp(dynamic_slice_jvp)
.transpose(dynamic_slice_transpose)
.batch(dynamic_slice_batch)
.prepare(super::moves::prepare_dynamic_slice)
.takes_float0();

fn dus_shape_rule(
    _: &'static Primitive,
    inputs: &[&ShapedArray],
    _: &Params,
) -> Result<Avals, Error> {
    let [x, u, idx @ ..] = inputs else {
        return type_error(
            "dynamic_update_slice() missing required positional arguments: 'operand', 'update'"
                .into(),
        );
    };
    if x.ndim() != u.ndim() {
        return type_error(format!(
            "dynamic_update_slice update must have the same rank as operand, got update shape \
             {} for operand shape {}.",
            shape_str(u),
            shape_str(x)
        ));
    }
    if x.ndim() != idx.len() {
        return type_error(format!(
            "dynamic_update_slice start_indices must have length equal to the rank of operand, \
             got indices {} for operand shape {}.",
            avals_tuple(idx),
            shape_str(x)
        ));
    }
    if x.shape().iter().zip(u.shape()).any(|(a, b)| b > a) {
        return type_error(format!(
            "dynamic_update_slice update shape must be smaller than operand shape, got update \
             shape {} for operand shape {}.",
            shape_str(u),
            shape_str(x)
        ));
    }
    if idx.iter().any(|i| i.ndim() != 0) {
        return type_error(format!(
            "start_indices arguments to dynamic_update_slice must be scalars, got indices {}",
            avals_tuple(idx)
        ));
    }
    if x.dtype() != u.dtype() && !x.dtype().is_extended() && !u.dtype().is_extended() {
        return type_error(format!(
            "lax.dynamic_update_slice requires arguments to have the same dtypes, got {}, {}.",
            x.dtype(),
            u.dtype()
        ));
    }
    check_indices("dynamic_update_slice", "", idx)?;
    let weak = inputs.iter().all(|a| a.weak_type());
    Ok(smallvec::smallvec![x.with_weak_type(weak)])
}

fn dus_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let (x, u, idx) = (inputs[0], inputs[1], &inputs[2..]);
    if x.dtype() != u.dtype() {
        return type_error(format!(
            "dynamic_update_slice of {} into {} is not implemented",
            u.dtype(),
            x.dtype()
        ));
    }
    let start = clamped_starts(idx, x.shape(), u.shape())?;
    let (xs, us) = (strides(x.shape()), strides(u.shape()));
    let ushape = u.shape();
    Ok(smallvec::smallvec![assemble_any(&[x, u], &out[0], |i| {
        let inside = i
            .iter()
            .zip(&start)
            .zip(ushape)
            .all(|((&a, &s), &n)| a >= s && a < s + n);
        if inside {
            (1, flat(i.iter().zip(&start).map(|(a, s)| a - s), &us))
        } else {
            (0, flat(i.iter().copied(), &xs))
        }
    })])
}

/// The `dynamic_update_slice` primitive.
pub static DYNAMIC_UPDATE_SLICE: Primitive =
    Primitive::new("dynamic_update_slice", None, dus_shape_rule, dus_impl)
        .jvp(dus_jvp)
        .transpose(dus_transpose)
        .batch(dynamic_update_slice_batch)
        .prepare(super::moves::prepare_dynamic_update_slice)
        .takes_float0();

fn concatenate_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let dim = super::structural::param_int(params, prim.name, "dimension")?;
    let Some(first) = inputs.first() else {
        return type_error("concatenate expects at least one operand, got 0.".into());
    };
    let shapes = || {
        inputs
            .iter()
            .map(|a| shape_str(a))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if inputs.iter().any(|a| a.ndim() != first.ndim()) {
        return type_error(format!(
            "Cannot concatenate arrays with different numbers of dimensions: got {}.",
            shapes()
        ));
    }
    let Some(d) = usize::try_from(dim).ok().filter(|&d| d < first.ndim()) else {
        return type_error(format!(
            "concatenate dimension out of bounds: dimension {dim} for shapes {}.",
            shapes()
        ));
    };
    let rest = |a: &ShapedArray| {
        let mut s = a.shape().to_vec();
        s.remove(d);
        s
    };
    if inputs.iter().any(|a| rest(a) != rest(first)) {
        return type_error(format!(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the one \
             being concatenated: concatenating along dimension {d} for shapes {}.",
            shapes()
        ));
    }
    if inputs.iter().any(|a| a.dtype() != first.dtype()) && !first.dtype().is_extended() {
        let names: Vec<String> = inputs.iter().map(|a| a.dtype().to_string()).collect();
        return type_error(format!(
            "lax.concatenate requires arguments to have the same dtypes, got {}. (Tip: \
             jnp.concatenate is a similar function that does automatic type promotion on \
             inputs).",
            names.join(", ")
        ));
    }
    let mut shape = first.shape().to_vec();
    shape[d] = inputs
        .iter()
        .try_fold(0usize, |n, a| {
            n.checked_mul(1).and_then(|n| n.checked_add(a.shape()[d]))
        })
        .ok_or_else(|| crate::array::invalid("concatenate", "size overflow"))?;
    if crate::array::checked_size(&shape).is_none() {
        return Err(crate::array::invalid("concatenate", "size overflow"));
    }
    let weak = inputs.iter().all(|a| a.weak_type());
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        first.dtype(),
        weak
    )])
}

fn concatenate_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let d = super::structural::param_int(params, prim.name, "dimension")? as usize;
    if inputs.iter().any(|a| a.dtype() != out[0].dtype()) {
        return type_error("concatenate of mixed key dtypes is not implemented".into());
    }
    // Where each operand starts along `d`, and its strides.
    let mut starts = Vec::with_capacity(inputs.len());
    let mut at = 0;
    for a in inputs {
        starts.push(at);
        at += a.shape()[d];
    }
    let st: Vec<Vec<usize>> = inputs.iter().map(|a| strides(a.shape())).collect();
    Ok(smallvec::smallvec![assemble_any(inputs, &out[0], |i| {
        let k = starts.partition_point(|&s| s <= i[d]).saturating_sub(1);
        // Skip empty operands that start at the same offset.
        let k = (k..inputs.len())
            .find(|&k| i[d] < starts[k] + inputs[k].shape()[d])
            .unwrap_or(k);
        let j = i
            .iter()
            .enumerate()
            .map(|(m, &v)| if m == d { v - starts[k] } else { v });
        (k, flat(j, &st[k]))
    })])
}

/// The `concatenate` primitive.
pub static CONCATENATE: Primitive = Primitive::new(
    "concatenate",
    None,
    concatenate_shape_rule,
    concatenate_impl,
)
.jvp(ad::multilinear_jvp)
.transpose(concatenate_transpose)
.batch(concatenate_batch)
.prepare(super::moves::prepare)
.takes_float0();

fn padding_config(params: &Params, prim: &str) -> Result<Vec<(i64, i64, i64)>, Error> {
    match params.require(prim, "padding_config")? {
        Param::Padding(v) => Ok(v.clone()),
        _ => Err(crate::array::invalid(
            "pad.padding_config",
            "not a tuple of (low, high, interior) tuples",
        )),
    }
}

fn pad_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let (x, v) = (inputs[0], inputs[1]);
    let cfg = padding_config(params, prim.name)?;
    let cfg_str = Param::Padding(cfg.clone()).to_string();
    if v.ndim() != 0 {
        return value_error(format!(
            "padding_value must be a scalar; got np.shape(padding_value)={}",
            shape_str(v)
        ));
    }
    if cfg.len() != x.ndim() {
        return value_error(format!(
            "length of padding_config must equal the number of axes of operand, got \
             padding_config {cfg_str} for operand shape {}",
            shape_str(x)
        ));
    }
    if cfg.iter().any(|&(_, _, i)| i < 0) {
        return value_error(format!(
            "interior padding in padding_config must be nonnegative, got padding_config \
             {cfg_str}"
        ));
    }
    let mut result = Vec::with_capacity(x.ndim());
    for (&(l, h, i), &d) in cfg.iter().zip(x.shape()) {
        let d = i128::try_from(d).unwrap_or(i128::MAX);
        let dilated = if d == 0 {
            0
        } else {
            1 + (i128::from(i) + 1) * (d - 1)
        };
        result.push(i128::from(l) + i128::from(h) + dilated);
    }
    if result.iter().any(|&d| d < 0) {
        let items: Vec<i64> = result
            .iter()
            .map(|&d| d.clamp(i64::MIN.into(), i64::MAX.into()) as i64)
            .collect();
        return value_error(format!(
            "Dimension size after padding is not at least 0, got result shape {}, for \
             padding_config {cfg_str} and operand shape {}",
            py_ints(&items),
            shape_str(x)
        ));
    }
    let shape: Vec<usize> = result
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| crate::array::invalid("pad", "size overflow"))?;
    if crate::array::checked_size(&shape).is_none() {
        return Err(crate::array::invalid("pad", "size overflow"));
    }
    if x.dtype() != v.dtype() {
        return type_error(format!(
            "pad operand and padding_value must be same dtype: got {} and {}.",
            x.dtype(),
            v.dtype()
        ));
    }
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        x.dtype(),
        x.weak_type() && v.weak_type(),
    )])
}

fn pad_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let x = inputs[0];
    super::structural::check_alloc(&out[0])?;
    let cfg = padding_config(params, prim.name)?;
    let st = strides(x.shape());
    let shape = x.shape();
    Ok(smallvec::smallvec![assemble_any(inputs, &out[0], |i| {
        let mut j = 0;
        for (k, (&o, &(lo, _, interior))) in i.iter().zip(&cfg).enumerate() {
            // i128: `lo` and `interior` may be any i64.
            let pos = o as i128 - i128::from(lo);
            let step = i128::from(interior) + 1;
            if pos < 0 || pos % step != 0 || pos / step >= shape[k] as i128 {
                return (1, 0);
            }
            j += (pos / step) as usize * st[k];
        }
        (0, j)
    })])
}

/// The `pad` primitive.
pub static PAD: Primitive = Primitive::new("pad", Some(2), pad_shape_rule, pad_impl)
    .jvp(pad_jvp)
    .transpose(pad_transpose)
    .batch(pad_batch)
    .prepare(super::moves::prepare)
    .takes_float0();

// ---- JVP and transpose rules

/// `dynamic_slice`: linear in the operand; the start indices are integers (their tangents
/// are zero, ignored).
fn dynamic_slice_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let mut first = tangents.to_vec();
    first.iter_mut().skip(1).for_each(|t| *t = None);
    ad::linear_jvp(prim, primals, &first, params)
}

/// The start indices of a dynamic slice or update, known (integers are never linear).
fn known_indices(ins: &[Lin]) -> Result<Vec<Array>, Error> {
    ins.iter()
        .map(|l| match l {
            Lin::Known(x) => Ok(x.clone()),
            Lin::Linear(_) => Err(crate::core::nonlinear()),
        })
        .collect()
}

/// `dynamic_slice` transposed (JAX's `_dynamic_slice_transpose_rule`): the cotangent written
/// into zeros of the operand's shape at the start indices.
fn dynamic_slice_transpose(
    _: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    _: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let idx = known_indices(&ins[1..])?;
    ad::transpose_first(cts, ins, |ct, a0| {
        let zeros = ops::zeros(a0)?;
        let mut operands = vec![&zeros, &ct];
        operands.extend(&idx);
        bind1(&super::DYNAMIC_UPDATE_SLICE, &operands, &Params::new())
    })
}

/// `dynamic_update_slice`: linear in the operand and the update jointly (JAX's
/// `_dynamic_update_slice_jvp`): the tangents written the same way, a zero one instantiated;
/// the start indices are integers.
fn dus_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    if tangents.iter().take(2).all(Option::is_none) {
        return Ok((ad::primal_out(prim, primals, params)?, vec![None]));
    }
    ad::multilinear_in(prim, primals, tangents, params, 0..2)
}

/// `dynamic_update_slice` transposed (JAX's `_dynamic_update_slice_transpose_rule`): the
/// operand's cotangent is the output's with zeros where the update went, the update's is the
/// output's slice there.
fn dus_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let idx = known_indices(&ins[2..])?;
    let update = ins[1].aval();
    let operand_t = if ins[0].is_linear() {
        let zeros = ops::zeros(&ShapedArray::new(update.shape(), ct.dtype(), false))?;
        let mut operands = vec![&ct, &zeros];
        operands.extend(&idx);
        Some(bind1(prim, &operands, params)?)
    } else {
        None
    };
    let update_t = if ins[1].is_linear() {
        let mut operands = vec![&ct];
        operands.extend(&idx);
        let sizes = update.shape().iter().map(|&d| d as i64).collect();
        let p = Params::new().with("slice_sizes", Param::Ints(sizes));
        Some(bind1(&super::DYNAMIC_SLICE, &operands, &p)?)
    } else {
        None
    };
    let mut out = vec![operand_t, update_t];
    out.extend(std::iter::repeat_n(None, idx.len()));
    Ok(out)
}

/// `pad`: linear in its operand and its padding value jointly (JAX's `deflinear2`): the
/// operand's tangent padded with the padding value's, a zero one instantiated (the operand's
/// as zeros, the padding value's as the literal 0).
fn pad_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = ad::primal_out(prim, primals, params)?;
    let (operand, value) = (
        tangents.first().cloned().flatten(),
        tangents.get(1).cloned().flatten(),
    );
    if operand.is_none() && value.is_none() {
        return Ok((out, vec![None]));
    }
    let operand = match operand {
        Some(t) => t,
        None => ops::zeros_like(&primals[0])?,
    };
    let value = match value {
        Some(t) => t,
        None => ops::konst(&primals[1], 0.0)?,
    };
    let t = bind(prim, &[&operand, &value], params)?[0].clone();
    Ok((out, vec![Some(t)]))
}

/// `concatenate` transposed: each linear operand's stretch of the cotangent.
fn concatenate_transpose(
    p: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let d = super::structural::param_int(params, p.name, "dimension")? as usize;
    let mut start = 0;
    let mut out = Vec::new();
    for l in ins {
        let n = l.aval().shape()[d];
        out.push(if l.is_linear() {
            let mut lo = vec![0; ct.ndim()];
            let mut hi = ct.shape().to_vec();
            lo[d] = start;
            hi[d] = start + n;
            Some(ad::slice(&ct, &lo, &hi, None)?)
        } else {
            None
        });
        start += n;
    }
    Ok(out)
}

/// `slice` transposed: the cotangent padded back into place (strides as interior padding).
fn slice_transpose(
    p: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    ad::transpose_first(cts, ins, |ct, a0| {
        let start = params.usizes(p.name, "start_indices")?;
        let strides = match params.get("strides") {
            Some(Param::Ints(_)) => params.usizes(p.name, "strides")?,
            _ => vec![1; start.len()],
        };
        let cfg: Vec<(i64, i64, i64)> = (0..a0.ndim())
            .map(|d| {
                let n = ct.shape()[d];
                let last = if n == 0 {
                    start[d]
                } else {
                    start[d] + (n - 1) * strides[d] + 1
                };
                (
                    start[d] as i64,
                    (a0.shape()[d] - last.min(a0.shape()[d])) as i64,
                    if n == 0 { 0 } else { strides[d] as i64 - 1 },
                )
            })
            .collect();
        ad::pad(&ct, &cfg)
    })
}

/// `pad` transposed (JAX's `_pad_transpose`): the operand's cotangent is the output's with the
/// padding cut off (negative padding) and interior padding skipped by a strided slice; the
/// padding value's is every element of the output's cotangent the operand's did not take.
fn pad_transpose(
    _: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let cfg = match params.get("padding_config") {
        Some(Param::Padding(c)) => c.clone(),
        _ => return Err(crate::core::nonlinear()),
    };
    let unpad: Vec<(i64, i64, i64)> = cfg.iter().map(|&(l, h, _)| (-l, -h, 0)).collect();
    let t = ad::pad(&ct, &unpad)?;
    let t = if cfg.iter().any(|c| c.2 > 0) {
        let hi = t.shape().to_vec();
        let strides: Vec<usize> = cfg.iter().map(|c| c.2 as usize + 1).collect();
        ad::slice(&t, &vec![0; t.ndim()], &hi, Some(&strides))?
    } else {
        t
    };
    let value = match ins.get(1) {
        Some(v) if v.is_linear() => {
            let all = |x: &Array| ad::reduce_sum(x, &(0..x.ndim()).collect::<Vec<_>>());
            let rest = ops::sub(&all(&ct)?, &all(&t)?)?;
            Some(ad::convert_to(&rest, v.aval())?)
        }
        _ => None,
    };
    Ok(vec![Some(t), value])
}

// ---- batching rules

/// `slice`: the whole batch dimension taken (start 0, limit its size, stride 1).
fn slice_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let bdim = batching::first_bdim(dims)?;
    let insert = |name: &str, v: i64| -> Result<Param, Error> {
        let mut p = super::structural::param_ints(params, prim.name, name)?;
        if bdim > p.len() {
            return Err(batching::internal("slice"));
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
fn pad_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let (x, v) = (&args[0], &args[1]);
    let config = match params.require(prim.name, "padding_config")? {
        Param::Padding(c) => c.clone(),
        _ => return Err(batching::internal("pad's padding_config")),
    };
    let with_batch = |at: usize| {
        let mut c = config.clone();
        c.insert(at.min(c.len()), (0, 0, 0));
        params.clone().set("padding_config", Param::Padding(c))
    };
    if dims[1].is_none() {
        let bdim = batching::first_bdim(dims)?;
        return Ok((bind(prim, &[x, v], &with_batch(bdim))?, vec![Some(bdim)]));
    }
    let x = batching::bdim_at_front(x, dims[0], size)?;
    let p = with_batch(0);
    let zero = crate::array::scalar(0.0, x.dtype())?.with_weak_type(v.weak_type());
    let padded = bind1(prim, &[&x, &zero], &p)?;
    let ones = batching::front_to(
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
    let values = batching::front_to(
        &batching::moveaxis(v, dims[1].unwrap_or(0), 0)?,
        padded.shape(),
    )?;
    let out = bind1(&super::SELECT_N, &[&mask, &values, &padded], &Params::new())?;
    Ok((smallvec::smallvec![out], vec![Some(0)]))
}

/// `concatenate`: every operand batched at the front, the dimension shifted.
fn concatenate_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let moved = args
        .iter()
        .zip(dims)
        .map(|(x, d)| batching::bdim_at_front(x, *d, size))
        .collect::<Result<Vec<Array>, Error>>()?;
    let dim = super::structural::param_int(params, prim.name, "dimension")?;
    let params = params.clone().set("dimension", Param::Int(dim + 1));
    Ok((bind(prim, &batching::refs(&moved), &params)?, vec![Some(0)]))
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
fn dynamic_slice_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    if dims[1..].iter().any(Option::is_some) {
        return batching::per_example(prim, size, args, dims, params);
    }
    let bdim = batching::first_bdim(dims)?;
    let mut ins = args.to_vec();
    ins.insert(bdim + 1, zero_index(&args[1..])?);
    let mut sizes = super::structural::param_ints(params, prim.name, "slice_sizes")?;
    if bdim > sizes.len() {
        return Err(batching::internal("dynamic_slice"));
    }
    sizes.insert(bdim, size as i64);
    let params = params.clone().set("slice_sizes", Param::Ints(sizes));
    Ok((
        bind(prim, &batching::refs(&ins), &params)?,
        vec![Some(bdim)],
    ))
}

/// `dynamic_update_slice`: with start indices shared by every example, operand and update
/// batched at the front and a zero start for the batch; with batched start indices, each
/// example is updated on its own.
fn dynamic_update_slice_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    if dims[2..].iter().any(Option::is_some) {
        return batching::per_example(prim, size, args, dims, params);
    }
    let x = batching::bdim_at_front(&args[0], dims[0], size)?;
    let u = batching::bdim_at_front(&args[1], dims[1], size)?;
    let mut ins = vec![x, u, zero_index(&args[2..])?];
    ins.extend_from_slice(&args[2..]);
    Ok((bind(prim, &batching::refs(&ins), params)?, vec![Some(0)]))
}

// ---- stack, unstack, split: JAX's primitives for jnp.stack, jnp.unstack and jnp.split
// (lowered by XLA to broadcasts, a concatenation and slices; computed here the same way).

fn axis_param(params: &Params, prim: &str) -> Result<usize, Error> {
    let axis = super::structural::param_int(params, prim, "axis")?;
    usize::try_from(axis).map_err(|_| crate::core::bad_param(prim, "axis", "negative"))
}

fn reshape_params(shape: &[usize]) -> Params {
    Params::new()
        .with("new_sizes", super::ints(shape.iter().copied()))
        .with("dimensions", Param::None)
        .with("sharding", Param::None)
}

/// `x` reshaped to `shape` by `reshape`'s implementation (same elements, no trace).
fn reshaped(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    let aval = ShapedArray::new(shape, x.dtype(), x.weak_type());
    let p = reshape_params(shape);
    Ok(crate::core::implement(&super::RESHAPE, &[x], &p, &[aval])?.swap_remove(0))
}

/// `x[..., lo:hi, ...]` along `axis` by `slice`'s implementation.
fn sliced(x: &Array, axis: usize, lo: usize, hi: usize) -> Result<Array, Error> {
    let mut start = vec![0; x.ndim()];
    let mut limit = x.shape().to_vec();
    start[axis] = lo;
    limit[axis] = hi;
    let mut shape = x.shape().to_vec();
    shape[axis] = hi - lo;
    let p = Params::new()
        .with("start_indices", super::ints(start))
        .with("limit_indices", super::ints(limit))
        .with("strides", Param::None);
    let aval = ShapedArray::new(&shape, x.dtype(), x.weak_type());
    Ok(crate::core::implement(&SLICE, &[x], &p, &[aval])?.swap_remove(0))
}

fn stack_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let axis = axis_param(params, prim.name)?;
    let Some(first) = inputs.first() else {
        return value_error("stack expects at least one operand, got 0.".into());
    };
    let shapes = || {
        let s: Vec<String> = inputs.iter().map(|a| shape_str(a)).collect();
        s.join(", ")
    };
    if inputs.iter().any(|a| a.ndim() != first.ndim()) {
        return value_error(format!(
            "Cannot stack arrays with different numbers of dimensions: got {}.",
            shapes()
        ));
    }
    if inputs.iter().any(|a| a.shape() != first.shape()) {
        return value_error(format!(
            "All input arrays must have the same shape. Got {}.",
            shapes()
        ));
    }
    if inputs.iter().any(|a| a.dtype() != first.dtype()) {
        let names: Vec<String> = inputs.iter().map(|a| a.dtype().to_string()).collect();
        return type_error(format!(
            "stack requires arguments to have the same dtypes, got {}.",
            names.join(", ")
        ));
    }
    if axis > first.ndim() {
        return value_error(format!(
            "stack axis {axis} is out of bounds for arrays of {} dimensions.",
            first.ndim()
        ));
    }
    let mut shape = first.shape().to_vec();
    shape.insert(axis, inputs.len());
    if crate::array::checked_size(&shape).is_none() {
        return Err(crate::array::invalid("stack", "size overflow"));
    }
    let weak = inputs.iter().all(|a| a.weak_type());
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        first.dtype(),
        weak
    )])
}

fn stack_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let axis = axis_param(params, prim.name)?;
    let mut shape = inputs[0].shape().to_vec();
    shape.insert(axis, 1);
    let expanded = inputs
        .iter()
        .map(|x| reshaped(x, &shape))
        .collect::<Result<Vec<_>, _>>()?;
    let p = Params::new().with("dimension", Param::Int(axis as i64));
    concatenate_impl(&CONCATENATE, &batching::refs(&expanded), &p, out)
}

/// `stack` transposed: the cotangent unstacked.
fn stack_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let axis = axis_param(params, prim.name)?;
    let p = Params::new().with("axis", Param::Int(axis as i64));
    let parts = bind(&UNSTACK, &[&ct], &p)?;
    Ok(ins
        .iter()
        .zip(parts)
        .map(|(l, part)| l.is_linear().then_some(part))
        .collect())
}

/// JAX's rule: operands batched alike stay where they are; otherwise all at the front.
fn stack_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let axis = axis_param(params, prim.name)?;
    if let Some(b) = dims[0]
        && dims.iter().all(|d| *d == Some(b))
    {
        let (out_axis, out_bdim) = if axis <= b {
            (axis, b + 1)
        } else {
            (axis + 1, b)
        };
        let p = params.clone().set("axis", Param::Int(out_axis as i64));
        return Ok((bind(prim, &batching::refs(args), &p)?, vec![Some(out_bdim)]));
    }
    let moved = args
        .iter()
        .zip(dims)
        .map(|(x, d)| batching::bdim_at_front(x, *d, size))
        .collect::<Result<Vec<_>, _>>()?;
    let p = params.clone().set("axis", Param::Int(axis as i64 + 1));
    Ok((bind(prim, &batching::refs(&moved), &p)?, vec![Some(0)]))
}

/// The `stack` primitive (`jnp.stack`).
pub static STACK: Primitive = Primitive::new("stack", None, stack_shape_rule, stack_impl)
    .jvp(ad::multilinear_jvp)
    .transpose(stack_transpose)
    .batch(stack_batch)
    .takes_float0();

fn unstack_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let axis = axis_param(params, prim.name)?;
    let x = inputs[0];
    if axis >= x.ndim() {
        return value_error(format!(
            "unstack axis {axis} is out of bounds for an array of {} dimensions.",
            x.ndim()
        ));
    }
    let mut shape = x.shape().to_vec();
    let n = shape.remove(axis);
    let aval = ShapedArray::new(&shape, x.dtype(), x.weak_type());
    Ok((0..n).map(|_| aval.clone()).collect())
}

fn unstack_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let axis = axis_param(params, prim.name)?;
    (0..out.len())
        .map(|i| reshaped(&sliced(inputs[0], axis, i, i + 1)?, out[i].shape()))
        .collect()
}

/// Linear in its one operand (`unstack`, `split`): every output's tangent is the primitive
/// applied to the tangent.
fn linear_outputs_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = ad::primal_out(prim, primals, params)?;
    let t = match tangents.first().cloned().flatten() {
        Some(t) => bind(prim, &[&t], params)?.into_iter().map(Some).collect(),
        None => vec![None; out.len()],
    };
    Ok((out, t))
}

/// Output cotangents with their symbolic zeros made zeros of the outputs' avals (the
/// transposes of the multi-output `unstack` and `split`).
fn instantiated<'a>(
    cts: &[Option<Array>],
    avals: impl Iterator<Item = &'a ShapedArray>,
) -> Result<Vec<Array>, Error> {
    cts.iter()
        .zip(avals)
        .map(|(c, a)| c.clone().map_or_else(|| ops::zeros(a), Ok))
        .collect()
}

/// The cotangents, zeros where symbolic, stacked back.
fn unstack_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    if cts.iter().all(Option::is_none) {
        return Ok(vec![None]);
    }
    let axis = axis_param(params, prim.name)?;
    let mut shape = ins[0].aval().shape().to_vec();
    shape.remove(axis);
    let part = ShapedArray::new(&shape, ins[0].aval().dtype(), false);
    let cts = instantiated(cts, std::iter::repeat(&part))?;
    let p = Params::new().with("axis", Param::Int(axis as i64));
    Ok(vec![Some(bind1(&STACK, &batching::refs(&cts), &p)?)])
}

fn unstack_batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let axis = axis_param(params, prim.name)?;
    let b = batching::first_bdim(dims)?;
    // The unstacked axis goes; the batch dimension moves down past it.
    let (axis, out) = if b <= axis {
        (axis + 1, b)
    } else {
        (axis, b - 1)
    };
    bind_at_axis(prim, args, params, axis, out)
}

/// `prim` bound on `args` with its `axis` parameter set to `axis` (moved past the batch
/// dimension), every output batched at `out`.
fn bind_at_axis(
    prim: &'static Primitive,
    args: &[Array],
    params: &Params,
    axis: usize,
    out: usize,
) -> Result<(Outputs, BatchDims), Error> {
    let p = params.clone().set("axis", Param::Int(axis as i64));
    let outs = bind(prim, &batching::refs(args), &p)?;
    let n = outs.len();
    Ok((outs, vec![Some(out); n]))
}

/// The `unstack` primitive (`jnp.unstack`; `stack`'s transpose).
pub static UNSTACK: Primitive =
    Primitive::new("unstack", Some(1), unstack_shape_rule, unstack_impl)
        .jvp(linear_outputs_jvp)
        .transpose(unstack_transpose)
        .batch(unstack_batch)
        .takes_float0();

fn split_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let axis = axis_param(params, prim.name)?;
    let sizes = param_ints(params, prim.name, "sizes")?;
    let x = inputs[0];
    if sizes.iter().any(|&s| s < 0) {
        return value_error(format!(
            "Sizes passed to split must be nonnegative, got {}",
            py_list(&sizes)
        ));
    }
    if axis >= x.ndim() {
        return value_error(format!(
            "split axis {axis} is out of bounds for an array of {} dimensions.",
            x.ndim()
        ));
    }
    let total = sizes.iter().try_fold(0i64, |a, &s| a.checked_add(s));
    if total != Some(x.shape()[axis] as i64) {
        return value_error(format!(
            "Sum of sizes {} must be equal to dimension {axis} of the operand shape {}",
            total.map_or_else(|| "(overflow)".to_string(), |t| t.to_string()),
            py_list(&x.shape().iter().map(|&d| d as i64).collect::<Vec<_>>())
        ));
    }
    Ok(sizes
        .iter()
        .map(|&s| {
            let mut shape = x.shape().to_vec();
            shape[axis] = s as usize;
            ShapedArray::new(&shape, x.dtype(), x.weak_type())
        })
        .collect())
}

/// A Python list of integers (`[2, 3]`).
fn py_list(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

fn split_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let axis = axis_param(params, prim.name)?;
    let mut at = 0;
    out.iter()
        .map(|o| {
            let n = o.shape()[axis];
            at += n;
            sliced(inputs[0], axis, at - n, at)
        })
        .collect()
}

/// The cotangents, zeros where symbolic, concatenated back.
fn split_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    if cts.iter().all(Option::is_none) {
        return Ok(vec![None]);
    }
    let axis = axis_param(params, prim.name)?;
    let avals = split_shape_rule(prim, &[ins[0].aval()], params)?;
    let cts = instantiated(cts, avals.iter())?;
    let p = Params::new().with("dimension", Param::Int(axis as i64));
    Ok(vec![Some(bind1(&CONCATENATE, &batching::refs(&cts), &p)?)])
}

fn split_batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let axis = axis_param(params, prim.name)?;
    let b = batching::first_bdim(dims)?;
    let axis = if axis >= b { axis + 1 } else { axis };
    bind_at_axis(prim, args, params, axis, b)
}

/// The `split` primitive (`jnp.split`, `jnp.array_split`).
pub static SPLIT: Primitive = Primitive::new("split", Some(1), split_shape_rule, split_impl)
    .jvp(linear_outputs_jvp)
    .transpose(split_transpose)
    .batch(split_batch)
    .takes_float0();
