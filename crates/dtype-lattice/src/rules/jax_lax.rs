//! `jax.lax`: no implicit promotion. Operands must share one dtype after JAX's
//! canonicalisation (a Python scalar takes its default dtype: int32 or int64, …); the result
//! is weak only when every operand is.

use crate::dtype::DType;
use crate::error::{Error, Exception, Reason};
use crate::operand::{Node, Operand, Value};
use crate::ops::Op;
use crate::rules::jax::{canonicalize, check_known, dtype_and_weak};
use crate::rules::{OptionName, Options, Promotion, RuleSetDef};

fn different_dtypes(name: &str, dtypes: impl Iterator<Item = DType>) -> Error {
    let got: Vec<String> = dtypes.map(|d| d.to_string()).collect();
    let lax = if name.is_empty() {
        "lax".to_string()
    } else {
        format!("lax.{name}")
    };
    Error::refused(
        Exception::TypeError,
        format!(
            "{lax} requires arguments to have the same dtypes, got {}.",
            got.join(", ")
        ),
    )
}

use crate::dtype::Kind::{
    self, Bool as B, Complex as C, Float as F, SignedInt as I, UnsignedInt as U,
};

/// The kinds a `lax` primitive accepts at one position, and how its error names them.
type Accepts = (&'static [Kind], &'static str);

const NUMBER: Accepts = (&[U, I, F, C], "integer, floating, complexfloating");
const INEXACT: Accepts = (&[F, C], "floating, complexfloating");
const INTEGRAL_OR_BOOL: Accepts = (&[B, U, I], "integer, bool");
const ORDERED: Accepts = (&[B, U, I, F], "integer, floating, bool");
const ANY: Accepts = (&[B, U, I, F, C], "");

/// `pow`'s own wording for mismatched dtypes (`{0}`, `{1}`: the operands' dtypes).
const POW_MISMATCH: &str = "the first argument to pow must have an inexact dtype (float or \
    complex), and the second argument must have an inexact or integer dtype, and two inexact \
    dtypes must match, but got {0} and {1} respectively.";

/// Each op's `lax` primitive: its name, what it accepts at positions 0 and 1, and its
/// wording for mismatched dtypes (`None`: `check_same_dtypes`'). Operands must then share a
/// dtype, except that `pow` takes an integer exponent.
const OPS: &[(Op, &str, Accepts, Accepts, Option<&str>)] = &[
    (Op::Add, "add", NUMBER, NUMBER, None),
    (Op::Subtract, "sub", NUMBER, NUMBER, None),
    (Op::Multiply, "mul", NUMBER, NUMBER, None),
    (Op::TrueDivide, "div", NUMBER, NUMBER, None),
    (Op::Power, "pow", INEXACT, NUMBER, Some(POW_MISMATCH)),
    (Op::Equal, "eq", ANY, ANY, None),
    (Op::Less, "lt", ORDERED, ORDERED, None),
    (
        Op::LogicalAnd,
        "and",
        INTEGRAL_OR_BOOL,
        INTEGRAL_OR_BOOL,
        None,
    ),
    (
        Op::BitwiseAnd,
        "and",
        INTEGRAL_OR_BOOL,
        INTEGRAL_OR_BOOL,
        None,
    ),
];

/// The result of `jax.lax`'s primitive for `op` on two operands.
pub(crate) fn op_result(opts: Options, op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
    let Some(&(_, name, a0, a1, mismatch)) = OPS.iter().find(|(o, ..)| *o == op) else {
        return Err(Error::refused(
            Exception::AttributeError,
            format!("module 'jax.lax' has no attribute '{op}'"),
        ));
    };
    let typed: Vec<(DType, bool)> = operands
        .iter()
        .map(|o| lax_dtype_and_weak(o, opts.x64))
        .collect::<Result<_, _>>()?;
    for (i, &(dtype, _)) in typed.iter().enumerate() {
        let (kinds, names) = if i == 0 { a0 } else { a1 };
        if !kinds.contains(&dtype.kind()) {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "{name} does not accept dtype {dtype} at position {i}. Accepted dtypes at \
                     position {i} are subtypes of {names}."
                ),
            ));
        }
    }
    let integer_exponent = op == Op::Power && typed.get(1).is_some_and(|t| t.0.kind().is_integer());
    let Some(&(dtype, weak)) = typed.first() else {
        return Err(Reason::EmptyOperands.into());
    };
    if !integer_exponent && typed.iter().any(|t| t.0 != dtype) {
        return Err(match mismatch {
            None => different_dtypes(name, typed.iter().map(|t| t.0)),
            Some(template) => Error::refused(
                Exception::TypeError,
                template
                    .replace("{0}", typed[0].0.name())
                    .replace("{1}", typed[1].0.name()),
            ),
        });
    }
    let weak = weak && typed.iter().all(|t| t.1);
    Ok(Promotion {
        dtype: match op {
            Op::Equal | Op::Less => DType::Bool,
            _ => dtype,
        },
        weak_type: weak,
    })
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
                Exception::OverflowError,
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
            return Err(different_dtypes("", all?.into_iter()));
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
        Err(different_dtypes("", [da, db].into_iter()))
    }
}

/// The rule set's row in the registry.
pub(crate) static DEF: RuleSetDef = RuleSetDef {
    options: &[OptionName::X64],
    ..RuleSetDef::new(
        &["jax-lax", "lax"],
        "jax.lax: no implicit promotion",
        (
            promote_types,
            result_type,
            op_result,
            |_| None,
            |d| check_known(d).is_ok(),
        ),
    )
};
