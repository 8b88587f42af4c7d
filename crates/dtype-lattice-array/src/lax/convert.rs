//! `convert_element_type`: every dtype to every other, element by element, as
//! [`crate::convert`] computes it, bit for bit with JAX (XLA's CPU backend), or with NumPy and
//! ml_dtypes when the NumPy rules are in force ([`crate::config::semantics`]); `new_dtype` and
//! `weak_type` are its parameters, as in JAX.

use super::{ad, batching};
use crate::core::Lin;
use dtype_lattice::Kind;

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

/// The prepare rule: the implementation's conversion of the operand's bytes into the
/// result's (a copy between equal dtypes), under the rules in force when it runs.
fn prepare(
    _: &'static Primitive,
    _: &Params,
    ins: &[ShapedArray],
    out: &ShapedArray,
) -> Option<crate::core::Prepared> {
    let [x] = ins else { return None };
    let (from, to) = (x.dtype(), out.dtype());
    if from.is_float0() || to.is_float0() {
        return None;
    }
    if from == to {
        return Some(crate::core::Prepared::Part { start: 0 });
    }
    Some(crate::core::Prepared::Kernel(Box::new(move |ops, dst| {
        let [x] = ops else { return false };
        crate::convert::convert_with(crate::config::semantics(), from, x.bytes, to, dst).is_ok()
    })))
}

/// The `convert_element_type` primitive.
pub static CONVERT_ELEMENT_TYPE: Primitive =
    Primitive::new("convert_element_type", Some(1), shape_rule, impl_rule)
        .jvp(jvp)
        .transpose(transpose)
        .batch(batching::vectorized)
        .prepare(prepare)
        .takes_float0()
        .hides(&[("sharding", Some(&Param::None))]);

// ---- JVP and transpose rules

/// `convert_element_type`: linear between inexact dtypes, zero into or out of integers.
fn jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = ad::primal_out(prim, primals, params)?;
    let inexact = |k: Kind| matches!(k, Kind::Float | Kind::Complex);
    if !inexact(out[0].dtype().kind()) || !inexact(primals[0].dtype().kind()) {
        return Ok((out, vec![None]));
    }
    ad::linear_jvp(prim, primals, tangents, params)
}

/// `convert_element_type`: the cotangent converted back.
fn transpose(
    _prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    _params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    cts[0]
        .as_ref()
        .map(|ct| ad::convert_to(ct, ins[0].aval()))
        .transpose()
        .map(|c| vec![c])
}

/// `x.astype(dtype)`: the conversion primitive, as an array method.
impl Array {
    /// The elements converted to `dtype` (`x.astype(dtype)`: JAX's `convert_element_type`,
    /// bit for bit; the result is strongly typed).
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// use dtype_lattice_array::Array;
    /// let x = Array::from_vec(vec![464.0f32, 1e-9, -1.5]);
    /// let y = x.astype(DType::Float8E4M3Fn)?;
    /// assert_eq!(y.as_bytes(), [0x7e, 0x00, 0xbc]); // 448 (ties to even), 0, -1.5
    /// assert_eq!(y.astype(DType::Float32)?.to_vec::<f32>()?, [448.0, 0.0, -1.5]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// JAX's `TypeError` for a key dtype to a number or back.
    pub fn astype(&self, dtype: dtype_lattice::DType) -> Result<Array, Error> {
        let params = Params::new()
            .with("new_dtype", Param::DType(dtype))
            .with("weak_type", Param::Bool(false))
            .with("sharding", Param::None);
        super::bind1(&CONVERT_ELEMENT_TYPE, &[self], &params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtype_lattice::DType;

    /// The prepared conversion writes the implementation's bytes, between every pair of a
    /// few dtypes (bool, integers, floats of every width, complex), NaNs and out-of-range
    /// values included.
    #[test]
    fn the_prepared_conversion_is_the_implementation() {
        let x = Array::from_vec(vec![
            0.0f64,
            -1.5,
            2.75,
            1e10,
            -1e-40,
            f64::NAN,
            f64::INFINITY,
            300.0,
        ]);
        let dtypes = [
            DType::Bool,
            DType::Int8,
            DType::UInt32,
            DType::Int64,
            DType::Float16,
            DType::BFloat16,
            DType::Float32,
            DType::Float64,
            DType::Float8E4M3Fn,
            DType::Complex64,
        ];
        for &from in &dtypes {
            let x = x.astype(from).unwrap();
            for &to in &dtypes {
                let params = Params::new()
                    .with("new_dtype", Param::DType(to))
                    .with("weak_type", Param::Bool(false))
                    .with("sharding", Param::None);
                let out = ShapedArray::new(x.shape(), to, false);
                let want = impl_rule(
                    &CONVERT_ELEMENT_TYPE,
                    &[&x],
                    &params,
                    std::slice::from_ref(&out),
                )
                .unwrap();
                let kernel = prepare(
                    &CONVERT_ELEMENT_TYPE,
                    &params,
                    std::slice::from_ref(x.aval()),
                    &out,
                )
                .unwrap();
                let mut got = vec![0u8; want[0].as_bytes().len()];
                let op = crate::core::Operand::of(&x);
                assert!(kernel.run(&[op], &mut got), "{from} -> {to}");
                assert_eq!(got, want[0].as_bytes(), "{from} -> {to}");
            }
        }
    }
}
