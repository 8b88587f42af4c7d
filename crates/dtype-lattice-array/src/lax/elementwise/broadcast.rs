//! lax's implicit broadcasting of elementwise operands: 0-d operands and dimensions of size 1
//! stretch to the others' shape (the shape the primitive computes, and the operands
//! broadcast to it where a kernel needs them whole: the generic kernel, jit's `fma`).

use super::Outputs;
use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::{Param, Params};
use crate::array::{Array, ShapedArray, py_shape};

#[allow(unused_imports)]
use super::*;

/// `lax`'s broadcasting rule for n-ary elementwise primitives: 0-d operands go with any
/// shape; the others must have one rank, and each dimension one size or 1.
pub(crate) fn broadcasting_shape(name: &str, inputs: &[&ShapedArray]) -> Result<Vec<usize>, Error> {
    let shapes: Vec<&[usize]> = inputs
        .iter()
        .map(|a| a.shape())
        .filter(|s| !s.is_empty())
        .collect();
    let Some(first) = shapes.first() else {
        return Ok(Vec::new());
    };
    if shapes.iter().any(|s| s.len() != first.len()) {
        let mut ranks: Vec<usize> = shapes.iter().map(|s| s.len()).collect();
        ranks.sort_unstable();
        ranks.dedup();
        let ranks: Vec<String> = ranks.iter().map(usize::to_string).collect();
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "{name}: arrays must have the same number of dimensions, got {{{}}}",
                ranks.join(", ")
            ),
        ));
    }
    let mut out = first.to_vec();
    for s in &shapes {
        for (o, &d) in out.iter_mut().zip(s.iter()) {
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                let all: Vec<String> = shapes.iter().map(|s| py_shape(s)).collect();
                return Err(Error::refused(
                    Exception::TypeError,
                    format!(
                        "{name} got incompatible shapes for broadcasting: {}.",
                        all.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// The operands broadcast to `shape` (`lax`'s implicit broadcasting of 0-d operands and
/// dimensions of size 1), sharing the ones already of that shape.
pub(crate) fn broadcast_operands(inputs: &[&Array], shape: &[usize]) -> Result<Outputs, Error> {
    inputs
        .iter()
        .map(|a| {
            if a.shape() == shape {
                return Ok((*a).clone());
            }
            let dims: Vec<i64> = if a.ndim() == 0 {
                Vec::new()
            } else {
                (0..shape.len() as i64).collect()
            };
            let params = Params::new()
                .with(
                    "shape",
                    Param::Ints(shape.iter().map(|&d| d as i64).collect()),
                )
                .with("broadcast_dimensions", Param::Ints(dims))
                .with("sharding", Param::None);
            super::super::bind1(&super::super::BROADCAST_IN_DIM, &[a], &params)
        })
        .collect()
}
