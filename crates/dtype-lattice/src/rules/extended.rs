//! Extended (PRNG key) dtypes and `float0` meet the rule sets here, before any lattice: a
//! rule set's row says whether it follows JAX (a key promotes only with itself; `float0` only
//! with itself in `result_type`, nowhere in `promote_types`, and no operation takes it;
//! everything else is refused with JAX's wording, as data) or has no such dtypes (an operand
//! it cannot represent).
//!
//! ```
//! use dtype_lattice::{DType, Op, Operand, Rules, Value};
//! let ops = [Operand::array(DType::KeyThreefry2x32), Operand::array(DType::Int32)];
//! // jax.dtypes.result_type(key, int32 array)
//! let e = Rules::jax().result_type(&ops).unwrap_err();
//! assert_eq!(e.message(), "dtype=key<fry> is not a valid dtype for JAX type promotion.");
//! // jnp.add(key, int32 array)
//! let e = Rules::jax().op_result(Op::Add, &ops).unwrap_err();
//! assert_eq!(e.message(), "add does not accept dtypes key<fry>, int32.");
//! // A key with itself: its own dtype.
//! let keys = [Operand::array(DType::KeyThreefry2x32); 2];
//! assert_eq!(Rules::jax().result_type(&keys).unwrap().dtype, DType::KeyThreefry2x32);
//!
//! // float0: jnp.result_type(float0, float32), jnp.add(float0, 1.0), jnp.result_type(float0).
//! let f0 = Operand::array(DType::Float0);
//! let e = Rules::jax().result_type(&[f0, Operand::array(DType::Float32)]).unwrap_err();
//! assert_eq!(e.message(), "dtype=dtype([('float0', 'V')]) is not a valid dtype for JAX type promotion.");
//! let e = Rules::jax().op_result(Op::Add, &[f0, Value::Float(1.0).into()]).unwrap_err();
//! assert!(e.message().starts_with("Called add with a float0 array. float0s do not support any operations by design"));
//! assert_eq!(Rules::jax().result_type(&[f0]).unwrap().dtype, DType::Float0);
//! ```

use crate::dtype::DType;
use crate::error::{Error, Exception, Reason};
use crate::operand::{Node, Operand, PyType, Value};
use crate::ops::Op;
use crate::rules::{Extended, Promotion, Rules};

/// Whether any operand has an extended dtype or `float0` (a dtype outside the lattices).
#[inline]
pub(crate) fn any_extended(operands: &[Operand]) -> bool {
    operands
        .iter()
        .any(|o| o.dtype().is_some_and(|d| d.is_extended() || d.is_float0()))
}

/// JAX's refusal of a dtype its promotion lattice does not hold (`dtype=key<fry> ...`,
/// `dtype=dtype([('float0', 'V')]) ...`: the dtype's `repr`).
fn not_in_lattice(d: DType) -> Error {
    let repr = if d.is_float0() {
        format!("dtype({})", d.numpy_str())
    } else {
        d.to_string()
    };
    Error::refused(
        Exception::ValueError,
        format!("dtype={repr} is not a valid dtype for JAX type promotion."),
    )
}

/// `jnp`'s `check_no_float0s`: the `TypeError` of any `jax.numpy` function called with a
/// `float0` array (`name` is the function's name: `add`, `true_divide`).
///
/// ```
/// let e = dtype_lattice::rules::float0_operation("sin");
/// assert!(e.to_string().starts_with("TypeError: Called sin with a float0 array."));
/// ```
pub fn float0_operation(name: &str) -> Error {
    Error::refused(
        Exception::TypeError,
        format!(
            "Called {name} with a float0 array. float0s do not support any operations by \
             design because they are not compatible with non-trivial vector spaces. No \
             implicit dtype conversion is done. You can use np.zeros_like(arr, \
             dtype=np.float) to cast a float0 array to a regular zeros array. \nIf you didn't \
             expect to get a float0 you might have accidentally taken a gradient with respect \
             to an integer argument."
        ),
    )
}

/// `float0` operands under JAX's rules: `result_type` of nothing but `float0` arrays is
/// `float0`, anything else (other dtypes beside it, any op) is refused.
fn jax_with_float0(op: Option<Op>, operands: &[Operand]) -> Result<Promotion, Error> {
    if let Some(op) = op {
        return Err(float0_operation(op.name()));
    }
    if operands
        .iter()
        .all(|o| matches!(o, Operand::Array { dtype, .. } if dtype.is_float0()))
    {
        return Ok(Promotion {
            dtype: DType::Float0,
            weak_type: false,
        });
    }
    Err(not_in_lattice(DType::Float0))
}

/// What a `jnp` op makes of two arrays of the same key dtype (the check for mixed dtypes
/// passes, so lax's own dtype rule or NumPy's dtype parsing decides).
#[derive(Clone, Copy, Debug)]
enum SameKey {
    /// A boolean array (`equal`: keys compare).
    Bool,
    /// lax refuses: `{lax name} does not accept dtype key<…> at position 0. Accepted dtypes
    /// at position 0 are subtypes of {kinds}.`
    Lax(&'static str, &'static str),
    /// NumPy cannot interpret the key dtype (`Cannot interpret 'key<fry>' as a data type`).
    NotADataType,
}

/// JAX 0.10's `jnp` ops on two arrays of one key dtype, as data.
const SAME_KEY: &[(Op, SameKey)] = &[
    (
        Op::Add,
        SameKey::Lax("add", "integer, floating, complexfloating"),
    ),
    (
        Op::Subtract,
        SameKey::Lax("sub", "integer, floating, complexfloating"),
    ),
    (
        Op::Multiply,
        SameKey::Lax("mul", "integer, floating, complexfloating"),
    ),
    (Op::TrueDivide, SameKey::NotADataType),
    (Op::FloorDivide, SameKey::NotADataType),
    (Op::Power, SameKey::NotADataType),
    (Op::Equal, SameKey::Bool),
    (Op::Less, SameKey::Lax("lt", "integer, floating, bool")),
    (Op::LogicalAnd, SameKey::NotADataType),
    (Op::BitwiseAnd, SameKey::Lax("and", "integer, bool")),
];

fn not_a_data_type(k: DType) -> Error {
    Error::refused(
        Exception::TypeError,
        format!("Cannot interpret '{k}' as a data type"),
    )
}

/// The dtype JAX reports for an operand in `… does not accept dtypes …` (`dtypes.dtype(x)`:
/// Python scalars as the default dtype of their kind).
fn reported_dtype(o: &Operand, x64: bool) -> Result<String, Error> {
    Ok(match o.dtype() {
        Some(k) if k.is_extended() => k.to_string(),
        _ => crate::rules::jax::dtype_and_weak(o, x64)?.0.to_string(),
    })
}

/// JAX's answer for operands of which `first_key` is the first extended dtype.
fn jax_with_keys(
    rules: &Rules,
    op: Option<Op>,
    operands: &[Operand],
    first_key: DType,
) -> Result<Promotion, Error> {
    let x64 = rules.options().x64;
    let key = Promotion {
        dtype: first_key,
        weak_type: false,
    };
    let all_same = operands.iter().all(|o| *o == Operand::array(first_key));
    let Some(op) = op else {
        // jax.dtypes.result_type: one dtype throughout passes; otherwise the lattice does not
        // know the key.
        return if all_same {
            Ok(key)
        } else {
            Err(not_in_lattice(first_key))
        };
    };
    // jnp.power with a Python int exponent parses the base's dtype with NumPy first.
    if op == Op::Power
        && matches!(
            operands.get(1),
            Some(Operand::Literal(Value::Int(_)) | Operand::PyType(PyType::Int))
        )
        && let Some(k) = operands.first().and_then(Operand::dtype)
        && k.is_extended()
    {
        return Err(not_a_data_type(k));
    }
    if !all_same {
        let names = operands
            .iter()
            .map(|o| reported_dtype(o, x64))
            .collect::<Result<Vec<_>, _>>()?;
        let mut distinct = names.clone();
        distinct.sort();
        distinct.dedup();
        if distinct.len() >= 2 {
            return Err(Error::refused(
                Exception::TypeError,
                format!("{op} does not accept dtypes {}.", names.join(", ")),
            ));
        }
    }
    match SAME_KEY.iter().find(|(o, _)| *o == op).map(|(_, r)| *r) {
        Some(SameKey::Bool) => Ok(Promotion {
            dtype: DType::Bool,
            weak_type: false,
        }),
        Some(SameKey::Lax(name, kinds)) => Err(Error::refused(
            Exception::TypeError,
            format!(
                "{name} does not accept dtype {first_key} at position 0. Accepted dtypes at \
                 position 0 are subtypes of {kinds}."
            ),
        )),
        Some(SameKey::NotADataType) | None => Err(not_a_data_type(first_key)),
    }
}

/// The refusal of a key dtype by a rule set without extended dtypes.
fn unsupported_key(rules: &Rules, key: DType) -> Error {
    Reason::Unsupported {
        rules: rules.rule_set().name(),
        operand: key.to_string(),
        why: "PRNG key dtypes are JAX's extended dtypes (use --rules jax)".into(),
    }
    .into()
}

/// The refusal of `float0` by a rule set other than JAX's.
fn unsupported_float0(rules: &Rules) -> Error {
    Reason::Unsupported {
        rules: rules.rule_set().name(),
        operand: DType::Float0.to_string(),
        why: "float0 is JAX's dtype of the tangents of integers, outside every promotion \
              lattice (use --rules jax)"
            .into(),
    }
    .into()
}

/// `result_type` (`op` is `None`) or an op's result, for operands of which at least one has
/// an extended dtype or `float0`.
pub(crate) fn evaluate(
    rules: &Rules,
    op: Option<Op>,
    operands: &[Operand],
) -> Result<Promotion, Error> {
    if operands
        .iter()
        .any(|o| o.dtype().is_some_and(DType::is_float0))
    {
        return match rules.rule_set().def().extended {
            Extended::Jax => jax_with_float0(op, operands),
            Extended::Refuse => Err(unsupported_float0(rules)),
        };
    }
    let mut keys = operands.iter().filter_map(|o| match *o {
        Operand::Array { dtype, weak } if dtype.is_extended() => Some((dtype, weak)),
        _ => None,
    });
    let Some((first_key, _)) = keys.clone().next() else {
        return Err(Reason::EmptyOperands.into());
    };
    if let Some((k, _)) = keys.find(|&(_, weak)| weak) {
        return Err(Reason::InvalidArgument {
            argument: "operand".into(),
            reason: format!("an array of {k} cannot be weakly typed"),
        }
        .into());
    }
    match rules.rule_set().def().extended {
        Extended::Jax => jax_with_keys(rules, op, operands, first_key),
        Extended::Refuse => Err(unsupported_key(rules, first_key)),
    }
}

/// `promote_types(a, b)` where `a` or `b` is an extended dtype or `float0`: JAX's
/// `promote_types` parses its arguments with NumPy, which cannot interpret a key dtype, then
/// finds no `float0` in its lattice.
pub(crate) fn promote_types(rules: &Rules, a: Node, b: Node) -> Result<DType, Error> {
    let key_first = [a, b].into_iter().find(|n| n.is_extended());
    if key_first.is_none() && [a, b].contains(&Node::Dtype(DType::Float0)) {
        return match rules.rule_set().def().extended {
            Extended::Jax => Err(not_in_lattice(DType::Float0)),
            Extended::Refuse => Err(unsupported_float0(rules)),
        };
    }
    let key = [a, b]
        .into_iter()
        .find_map(|n| match n {
            Node::Dtype(d) if d.is_extended() => Some(d),
            _ => None,
        })
        .ok_or(Reason::EmptyOperands)?;
    match rules.rule_set().def().extended {
        Extended::Jax => Err(not_a_data_type(key)),
        Extended::Refuse => Err(unsupported_key(rules, key)),
    }
}
