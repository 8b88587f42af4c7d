//! `jax.lax`: no implicit promotion. Operands must share one dtype after JAX's
//! canonicalisation (a Python scalar takes its default dtype: int32 or int64, …); the result
//! is weak only when every operand is.

use crate::dtype::DType;
use crate::error::{Error, Reason};
use crate::operand::{Node, Operand, Value};
use crate::rules::jax::{canonicalize, check_known, dtype_and_weak};
use crate::rules::{Options, Promotion};

fn different_dtypes(dtypes: impl Iterator<Item = DType>) -> Error {
    let got: Vec<String> = dtypes.map(|d| d.to_string()).collect();
    Error::refused(
        "TypeError",
        format!(
            "lax requires arguments to have the same dtypes, got {}.",
            got.join(", ")
        ),
    )
}

/// An operand's (dtype, weak) in `jax.lax`: as in `jax.numpy`, except that a Python int is
/// converted to an array of the default int dtype, which it must fit.
fn lax_dtype_and_weak(op: &Operand, x64: bool) -> Result<(DType, bool), Error> {
    let (dtype, weak) = dtype_and_weak(op, x64)?;
    if let Operand::Literal(Value::Int(i)) = *op {
        let (min, max) = dtype
            .int_range()
            .expect("an int's default dtype is an integer");
        if !(min..=max).contains(&i) {
            return Err(Error::refused(
                "OverflowError",
                format!("Python int {i} too large to convert to {dtype}"),
            ));
        }
    }
    Ok((dtype, weak))
}

/// The result of a `jax.lax` n-ary operation on `operands`.
pub(crate) fn result_type(opts: Options, operands: &[Operand]) -> Result<Promotion, Error> {
    let (first, rest) = operands
        .split_first()
        .ok_or_else(|| Error::from(Reason::EmptyOperands))?;
    // Checked in order, as a left fold of binary lax ops meets them: each operand is
    // converted, then compared with the first.
    let (dtype, mut weak) = lax_dtype_and_weak(first, opts.x64)?;
    for op in rest {
        let (d, w) = lax_dtype_and_weak(op, opts.x64)?;
        if d != dtype {
            let all: Result<Vec<DType>, Error> = operands
                .iter()
                .map(|o| dtype_and_weak(o, opts.x64).map(|p| p.0))
                .collect();
            return Err(different_dtypes(all?.into_iter()));
        }
        weak &= w;
    }
    Ok(Promotion {
        dtype,
        weak_type: weak,
    })
}

/// Two dtypes (or Python types, as their default dtypes) promote only when equal.
pub(crate) fn promote_types(opts: Options, a: Node, b: Node) -> Result<DType, Error> {
    let dtype = |n: Node| match n {
        Node::Dtype(d) => check_known(d),
        Node::Weak(t) => Ok(canonicalize(t.default_dtype(), opts.x64)),
    };
    let (da, db) = (dtype(a)?, dtype(b)?);
    if da == db {
        Ok(da)
    } else {
        Err(different_dtypes([da, db].into_iter()))
    }
}
