//! `iota`: no operands; each element is its index along `dimension`, converted to `dtype` as
//! `convert_element_type` converts an int64 (integers wrap, floats round to nearest even).
//! Parameters `dimension`, `dtype`, `shape`, `sharding`.

use super::ad;
use super::{Avals, Outputs};
use dtype_lattice::{DType, Error, Kind};

use super::structural::{param_int, param_ints, py_ints, type_error, value_error};
use super::{Param, Params, Primitive};
use crate::array::{Array, ShapedArray, checked_size, py_shape};

fn dtype_param(params: &Params, prim: &str) -> Result<DType, Error> {
    match params.require(prim, "dtype")? {
        Param::DType(d) => Ok(*d),
        _ => Err(crate::array::invalid("iota.dtype", "not a dtype")),
    }
}

fn shape_rule(
    prim: &'static Primitive,
    _: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let dtype = dtype_param(params, prim.name)?;
    let shape = param_ints(params, prim.name, "shape")?;
    let dim = param_int(params, prim.name, "dimension")?;
    if shape.iter().any(|&d| d < 0) {
        return type_error(format!(
            "iota shape must have every element be nonnegative, got {}.",
            py_ints(&shape)
        ));
    }
    if !matches!(
        dtype.kind(),
        Kind::SignedInt | Kind::UnsignedInt | Kind::Float | Kind::Complex
    ) {
        return type_error(format!(
            "iota does not accept dtype {}. Accepted dtypes are subtypes of integer, \
             floating, complexfloating.",
            dtype.numpy_name()
        ));
    }
    if dim < 0 || dim as usize >= shape.len() {
        return value_error(format!(
            "iota dimension must be between 0 and len(shape), got dimension={dim} for shape={}",
            py_ints(&shape)
        ));
    }
    let shape: Vec<usize> = shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| crate::array::invalid("iota.shape", "too large"))?;
    if checked_size(&shape).is_none() {
        return Err(crate::array::invalid(
            "iota.shape",
            format!("{} has too many elements", py_shape(&shape)),
        ));
    }
    Ok(smallvec::smallvec![ShapedArray::new(&shape, dtype, false)])
}

fn iota_values(
    prim: &'static Primitive,
    params: &Params,
    out: &[ShapedArray],
) -> Result<Array, Error> {
    super::structural::check_alloc(&out[0])?;
    super::structural::check_alloc(&out[0].with_dtype(DType::Int64))?;
    let dim = param_int(params, prim.name, "dimension")? as usize;
    let shape = out[0].shape();
    if shape.contains(&0) {
        return Array::from_bytes(out[0].dtype(), shape, &[]);
    }
    let inner: usize = shape[dim + 1..].iter().product();
    let n = shape[dim];
    let values: Vec<i64> = (0..out[0].size())
        .map(|i| ((i / inner.max(1)) % n.max(1)) as i64)
        .collect();
    Array::from_shape_vec(shape, values)?.astype(out[0].dtype())
}

fn impl_one(
    prim: &'static Primitive,
    _: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    Ok(smallvec::smallvec![iota_values(prim, params, out)?])
}

/// The `iota` primitive.
// No operands, so never batched: a batching trace binds it in its parent.
pub static IOTA: Primitive =
    Primitive::new("iota", Some(0), shape_rule, impl_one).jvp(ad::zero_jvp);
