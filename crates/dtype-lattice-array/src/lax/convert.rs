//! `convert_element_type`: every dtype to every other, element by element, as
//! [`crate::convert`] computes it, bit for bit with JAX (XLA's CPU backend), or with NumPy and
//! ml_dtypes when the NumPy rules are in force ([`crate::config::semantics`]); `new_dtype` and
//! `weak_type` are its parameters, as in JAX.

use super::{Avals, Outputs};
use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::{Param, Params, Primitive};
use crate::array::{Array, ShapedArray, Storage, layout};

fn shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let new_dtype = match params.require(prim.name, "new_dtype")? {
        Param::DType(d) => *d,
        _ => {
            return Err(Error::refused(
                Exception::TypeError,
                "convert_element_type new_dtype must be a dtype",
            ));
        }
    };
    if x.dtype().is_extended() && new_dtype.is_float0() {
        return Err(Error::refused(
            Exception::ValueError,
            format!(
                "Cannot convert_element_type from {} to {}",
                x.dtype(),
                new_dtype.numpy_name()
            ),
        ));
    }
    if x.dtype().is_float0() && (new_dtype == dtype_lattice::DType::Bool || new_dtype.is_extended())
    {
        // JAX fails on its way (NumPy's TypeError about bytes-like objects).
        return Err(Error::refused(
            Exception::TypeError,
            format!("convert_element_type cannot convert a float0 array to {new_dtype}"),
        ));
    }
    if x.dtype().is_extended() != new_dtype.is_extended() && x.dtype() != new_dtype {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "convert_element_type cannot convert {} to {new_dtype}: PRNG keys are not \
                 numbers (use random_wrap / random_unwrap)",
                x.dtype()
            ),
        ));
    }
    let weak = matches!(params.get("weak_type"), Some(Param::Bool(true)));
    Ok(smallvec::smallvec![ShapedArray::new(
        x.shape(),
        new_dtype,
        weak
    )])
}

fn impl_rule(
    _: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let x = inputs[0];
    let aval = out[0].clone();
    if aval.dtype() == x.dtype() {
        return Ok(smallvec::smallvec![Array::from_parts(
            aval,
            x.storage().clone()
        )]);
    }
    let (width, words) = layout(aval.dtype());
    // The conversion writes every byte.
    let data = Storage::overwritten(width, aval.size() * words, |bytes| {
        crate::convert::convert_with(
            crate::config::semantics(),
            x.dtype(),
            x.as_bytes(),
            aval.dtype(),
            bytes,
        )
    })
    .map_err(|e| {
        Error::from(dtype_lattice::error::Reason::InvalidArgument {
            argument: "convert_element_type".into(),
            reason: e.to_string(),
        })
    })?;
    Ok(smallvec::smallvec![Array::from_parts(aval, data)])
}

/// The `convert_element_type` primitive.
pub static CONVERT_ELEMENT_TYPE: Primitive =
    Primitive::new("convert_element_type", Some(1), shape_rule, impl_rule)
        .jvp(super::ad::convert_jvp)
        .transpose(super::transpose::convert_transpose)
        .batch(super::batching::vectorized)
        .takes_float0()
        .hides(&[("sharding", Some(&Param::None))]);
