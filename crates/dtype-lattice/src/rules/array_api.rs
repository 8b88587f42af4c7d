//! The Python array API standard (2025.12) as array-api-strict 2.6.1 implements it.
//!
//! Arrays (0-d ones too) are folded left to right through the standard's lattice: bool alone,
//! signed and unsigned integers (a signed type above each unsigned one but uint64), and real
//! and complex floats; there is no float16 or bfloat16, and mixed kinds are refused. Python
//! scalars come after all the arrays, whatever their position: each must suit the arrays'
//! result by kind (an int must also fit an integer dtype) and takes its dtype (a complex one
//! the complex dtype of a real float), then joins the result. At least one array is required.
//! Each operation first checks its operands' dtype category, then computes what NumPy 2 does
//! on the promoted operands.

use std::sync::OnceLock;

use crate::dtype::DType::{self, *};
use crate::dtype::Kind;
use crate::error::{Error, Exception, Reason};
use crate::lattice::Lattice;
use crate::operand::{Node, Operand, PyType, Value};
use crate::ops::Op;
use crate::rules::compiled::{Compiled, NO_JOIN};
use crate::rules::{Options, Promotion, RuleSetDef, WeakRule, no_weak, numpy, unsupported};

/// The rule set's name in refusals.
const NAME: &str = "array-api";

/// A dtype node (for the lattice table).
const fn d(t: DType) -> Node {
    Node::Dtype(t)
}

/// The standard's type promotion lattice, node → dtypes directly above it.
const LATTICE: &[(Node, &[Node])] = &[
    (d(Bool), &[]),
    (d(Int8), &[d(Int16)]),
    (d(Int16), &[d(Int32)]),
    (d(Int32), &[d(Int64)]),
    (d(Int64), &[]),
    (d(UInt8), &[d(UInt16), d(Int16)]),
    (d(UInt16), &[d(UInt32), d(Int32)]),
    (d(UInt32), &[d(UInt64), d(Int64)]),
    (d(UInt64), &[]),
    (d(Float32), &[d(Float64), d(Complex64)]),
    (d(Float64), &[d(Complex128)]),
    (d(Complex64), &[d(Complex128)]),
    (d(Complex128), &[]),
];

/// How a Python scalar meets the arrays' result (`Array._promote_scalar`): keyed by the
/// scalar's Python type (`None`: bool), the kinds it promotes with and how, whether an int must
/// fit an integer dtype, and the refusal for other kinds.
struct ScalarRule {
    /// The scalar's Python type (`None`: bool, as [`Value::py_type`] gives it).
    py_type: Option<PyType>,
    /// The kinds of the arrays' result it promotes with, and how.
    meets: &'static [(Kind, WeakRule)],
    /// Whether an int must lie within an integer dtype's bounds.
    fits_integer_dtypes: bool,
    /// The `TypeError` message for any other kind.
    refusal: &'static str,
}

/// array-api-strict's rules for Python scalars.
const SCALAR_RULES: &[ScalarRule] = &[
    ScalarRule {
        py_type: None,
        meets: &[(Kind::Bool, WeakRule::Keep)],
        fits_integer_dtypes: false,
        refusal: "Python bool scalars can only be promoted with bool arrays",
    },
    ScalarRule {
        py_type: Some(PyType::Int),
        meets: &[
            (Kind::UnsignedInt, WeakRule::Keep),
            (Kind::SignedInt, WeakRule::Keep),
            (Kind::Float, WeakRule::Keep),
            (Kind::Complex, WeakRule::Keep),
        ],
        fits_integer_dtypes: true,
        refusal: "Python int scalars cannot be promoted with bool arrays",
    },
    ScalarRule {
        py_type: Some(PyType::Float),
        meets: &[
            (Kind::Float, WeakRule::Keep),
            (Kind::Complex, WeakRule::Keep),
        ],
        fits_integer_dtypes: false,
        refusal: "Python float scalars can only be promoted with floating-point arrays.",
    },
    ScalarRule {
        py_type: Some(PyType::Complex),
        meets: &[
            (Kind::Float, WeakRule::ToComplex),
            (Kind::Complex, WeakRule::Keep),
        ],
        fits_integer_dtypes: false,
        refusal: "Python complex scalars can only be promoted with floating-point arrays.",
    },
];

/// The refusal of a Python int outside an integer array's dtype.
const OUT_OF_BOUNDS: (Exception, &str) = (
    Exception::OverflowError,
    "Python int scalars must be within the bounds of the dtype for integer arrays",
);

/// The standard's dtype categories (`_dtype_categories`), by kind.
const CATEGORIES: &[(&str, &[Kind])] = &[
    (
        "all",
        &[
            Kind::Bool,
            Kind::UnsignedInt,
            Kind::SignedInt,
            Kind::Float,
            Kind::Complex,
        ],
    ),
    (
        "numeric",
        &[
            Kind::UnsignedInt,
            Kind::SignedInt,
            Kind::Float,
            Kind::Complex,
        ],
    ),
    (
        "real numeric",
        &[Kind::UnsignedInt, Kind::SignedInt, Kind::Float],
    ),
    ("floating-point", &[Kind::Float, Kind::Complex]),
    ("boolean", &[Kind::Bool]),
    (
        "integer or boolean",
        &[Kind::Bool, Kind::UnsignedInt, Kind::SignedInt],
    ),
];

/// Each op: its array API name and the dtype category it accepts (`_binary_funcs`).
const OPS: &[(Op, &str, &str)] = &[
    (Op::Add, "add", "numeric"),
    (Op::Subtract, "subtract", "numeric"),
    (Op::Multiply, "multiply", "numeric"),
    (Op::TrueDivide, "divide", "floating-point"),
    (Op::FloorDivide, "floor_divide", "real numeric"),
    (Op::Power, "pow", "numeric"),
    (Op::Equal, "equal", "all"),
    (Op::Less, "less", "real numeric"),
    (Op::LogicalAnd, "logical_and", "boolean"),
    (Op::BitwiseAnd, "bitwise_and", "integer or boolean"),
];

/// The lattice, compiled once.
fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| Compiled::new(LATTICE.iter().map(|&(n, a)| (n, a.to_vec()))))
}

/// Whether array-api-strict has this dtype.
pub(crate) fn knows(dtype: DType) -> bool {
    LATTICE.iter().any(|&(n, _)| n == d(dtype))
}

/// How array-api-strict prints a dtype (`array_api_strict.int8`).
fn repr(t: DType) -> String {
    format!("array_api_strict.{t}")
}

/// What an operand is to array-api-strict: an array (with its value when 0-d) or a Python
/// scalar (`int`, `float`, `complex` are 0, 0.0, 0j).
#[derive(Clone, Copy, Debug)]
enum Part {
    /// An array of the dtype; a 0-d one holds the value.
    Array(DType, Option<Value>),
    /// A Python scalar.
    Scalar(Value),
}

/// The operand as array-api-strict builds it; dtypes it lacks are refused with its
/// `AttributeError` as the reason.
fn part(op: &Operand) -> Result<Part, Error> {
    let check = |dtype: DType| {
        if knows(dtype) {
            Ok(dtype)
        } else {
            Err(unsupported(
                NAME,
                op,
                format!("module 'array_api_strict' has no attribute '{dtype}'"),
            ))
        }
    };
    Ok(match *op {
        Operand::Array { weak: true, .. } => return Err(no_weak(NAME, op, "arrays")),
        Operand::Array { dtype, .. } => Part::Array(check(dtype)?, None),
        Operand::Scalar { dtype, value } => Part::Array(check(dtype)?, Some(value)),
        Operand::PyType(PyType::Int) => Part::Scalar(Value::Int(0)),
        Operand::PyType(PyType::Float) => Part::Scalar(Value::Float(0.0)),
        Operand::PyType(PyType::Complex) => Part::Scalar(Value::Complex(0.0, 0.0)),
        Operand::Literal(v) => Part::Scalar(v),
    })
}

/// `_result_type(a, b)`: the lattice's join, or array-api-strict's refusal.
fn join(a: DType, b: DType) -> Result<DType, Error> {
    match compiled().step(a.index() as u8, b.index()) {
        NO_JOIN => Err(Error::refused(
            Exception::TypeError,
            format!(
                "{} and {} cannot be type promoted together",
                repr(a),
                repr(b)
            ),
        )),
        r => Ok(Node::from_index(r as usize).dtype_or_default()),
    }
}

/// `Array._promote_scalar`: the dtype a Python scalar takes beside an array of `dtype`.
fn promote_scalar(dtype: DType, scalar: Value) -> Result<DType, Error> {
    let rule = SCALAR_RULES
        .iter()
        .find(|r| r.py_type == scalar.py_type())
        .ok_or_else(|| Error::refused(Exception::TypeError, "'scalar' must be a Python scalar"))?;
    let &(_, meet) = rule
        .meets
        .iter()
        .find(|(k, _)| *k == dtype.kind())
        .ok_or_else(|| Error::refused(Exception::TypeError, rule.refusal))?;
    if let (true, Value::Int(i), Some((min, max))) =
        (rule.fits_integer_dtypes, scalar, dtype.int_range())
        && !(min..=max).contains(&i)
    {
        return Err(Error::refused(OUT_OF_BOUNDS.0, OUT_OF_BOUNDS.1));
    }
    Ok(match meet {
        WeakRule::Keep => dtype,
        WeakRule::ToComplex => (numpy::DEFAULTS.to_complex)(dtype),
        WeakRule::Default => scalar.py_type().map_or(dtype, |t| numpy::DEFAULTS.of(t)),
    })
}

/// `xp.result_type(*operands)`.
pub(crate) fn result_type(_opts: Options, operands: &[Operand]) -> Result<Promotion, Error> {
    if operands.is_empty() {
        return Err(Reason::EmptyOperands.into());
    }
    let parts = operands.iter().map(part).collect::<Result<Vec<_>, _>>()?;
    let mut arrays = parts.iter().filter_map(|p| match p {
        Part::Array(t, _) => Some(*t),
        Part::Scalar(_) => None,
    });
    let first = arrays.next().ok_or_else(|| {
        Error::refused(
            Exception::ValueError,
            "at least one array or dtype is required",
        )
    })?;
    let base = arrays.try_fold(first, join)?;
    // Python scalars meet the arrays' result, in their order, after every array.
    let mut result = base;
    for p in &parts {
        if let Part::Scalar(v) = *p {
            result = join(promote_scalar(base, v)?, result)?;
        }
    }
    Ok(Promotion {
        dtype: result,
        weak_type: false,
    })
}

/// `xp.result_type(a, b)` of two types; a Python type stands for its scalar.
pub(crate) fn promote_types(opts: Options, a: Node, b: Node) -> Result<DType, Error> {
    let operand = |n: Node| match n {
        Node::Dtype(t) => Operand::array(t),
        Node::Weak(t) => Operand::PyType(t),
    };
    result_type(opts, &[operand(a), operand(b)]).map(|p| p.dtype)
}

/// The Python class name of a scalar, for messages.
fn class_name(v: Value) -> &'static str {
    v.py_type().map_or("bool", PyType::name)
}

/// The operand NumPy 2 computes on once a part is promoted to `dtype`.
fn promoted(dtype: DType, part: Part) -> Result<Operand, Error> {
    match part {
        Part::Array(_, None) => Ok(Operand::array(dtype)),
        Part::Array(_, Some(v)) | Part::Scalar(v) => Operand::scalar(dtype, v),
    }
}

/// `xp.<op>(x1, x2)`: the category check, the promotion (a Python scalar meeting the other
/// operand), then NumPy 2's ufunc on the promoted operands.
pub(crate) fn op_result(_opts: Options, op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
    let &(_, name, category) = OPS
        .iter()
        .find(|(o, _, _)| *o == op)
        .ok_or_else(|| unsupported_op(op, operands))?;
    let kinds = CATEGORIES
        .iter()
        .find(|(c, _)| *c == category)
        .map_or(&[][..], |&(_, k)| k);
    let allowed = |t: DType| kinds.contains(&t.kind());
    let (x1, x2) = match operands {
        [] => return Err(Reason::EmptyOperands.into()),
        [a, b] => (part(a)?, part(b)?),
        [a] => {
            part(a)?;
            return Err(Error::refused(
                Exception::TypeError,
                "_create_binary_func.<locals>.inner() missing 1 required positional argument: \
                 'x2'",
            ));
        }
        more => {
            for o in more {
                part(o)?;
            }
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "_create_binary_func.<locals>.inner() takes 2 positional arguments but {} \
                     were given",
                    more.len()
                ),
            ));
        }
    };
    let only = |got: String| {
        Error::refused(
            Exception::TypeError,
            format!("Only {category} dtypes are allowed {got}."),
        )
    };
    let (t1, t2) = match (x1, x2) {
        (Part::Scalar(a), Part::Scalar(b)) => {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "Two scalars not allowed, got type(x1) = <class '{}'> and type(x2) =<class \
                     '{}'>",
                    class_name(a),
                    class_name(b)
                ),
            ));
        }
        (Part::Scalar(s), Part::Array(t, _)) | (Part::Array(t, _), Part::Scalar(s)) => {
            if !allowed(t) {
                return Err(only(format!("{name}. Got {}", repr(t))));
            }
            let s = promote_scalar(t, s)?;
            match x1 {
                Part::Scalar(_) => (s, t),
                Part::Array(..) => (t, s),
            }
        }
        (Part::Array(a, _), Part::Array(b, _)) => {
            if !allowed(a) || !allowed(b) {
                return Err(only(format!(
                    "in {name}(...). Got {} and {}",
                    repr(a),
                    repr(b)
                )));
            }
            (a, b)
        }
    };
    join(t1, t2)?;
    numpy::op_result(op, &[promoted(t1, x1)?, promoted(t2, x2)?])
}

/// An op the table lacks (every [`Op`] has a row; kept total without panicking).
fn unsupported_op(op: Op, operands: &[Operand]) -> Error {
    let shown = operands.first().copied().unwrap_or(Operand::array(Bool));
    unsupported(NAME, &shown, format!("it has no op {op}"))
}

/// The standard's promotion lattice (a partial lattice: bool, the integers and the inexact
/// types are separate, and uint64 joins no signed integer).
pub(crate) fn lattice(_opts: Options) -> Option<&'static Lattice<Node>> {
    Some(&compiled().lattice)
}

/// The rule set's row in the registry.
pub(crate) static DEF: RuleSetDef = RuleSetDef::new(
    &["array-api", "array-api-strict"],
    "the Python array API standard (2025.12, as array-api-strict implements it)",
    (promote_types, result_type, op_result, lattice, knows),
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_has_a_known_category() {
        for op in Op::ALL {
            let (_, _, category) = OPS.iter().find(|(o, _, _)| *o == op).expect("op row");
            assert!(CATEGORIES.iter().any(|(c, _)| c == category), "{category}");
        }
    }

    #[test]
    fn the_lattice_has_no_ambiguous_joins() {
        let l = &compiled().lattice;
        assert!(l.is_partial_lattice());
        assert!(!l.is_lattice());
        assert_eq!(join(UInt8, Int8).unwrap(), Int16);
        assert_eq!(join(UInt32, Int16).unwrap(), Int64);
        assert_eq!(join(Float32, Complex128).unwrap(), Complex128);
        assert!(join(UInt64, Int8).is_err());
    }
}
