//! MegEngine, as its *Tensor data type* page (the seeds' `004_*.txt`) describes it: the
//! category-priority rule of `dtype_promotion` / `convert_inputs` (MegEngine's
//! `core/tensor/utils.py`, ported to C++ as `_dtype_promotion`), which the page's examples
//! follow. MegEngine cannot be installed on Python 3.11, so this rule set is read from the
//! source (see `tools/megengine.md`) and checked against the page's examples.
//!
//! - Tensors, NumPy arrays and NumPy scalars (`DTYPE`, `DTYPE(VALUE)`) keep their dtype;
//!   Python scalars are typed by default: bool → bool, int → int32, float → float32; Python
//!   complex values are ignored by the promotion.
//! - Categories rank float 3, integer 2, bool 1. If the Python scalars' top category is
//!   higher than the tensors', the result is their default dtype; otherwise the tensors of the
//!   top category are promoted with NumPy's `promote_types`, and lower categories are dropped
//!   (`bool + int8` → int8, `int32 + float16` → float16).
//! - Supported dtypes: bool, int8, int16, int32, uint8, uint16, float16, float32; others
//!   (int64, uint32, uint64, float64, complex) cannot be MegEngine tensors.
//!
//! Choices the page leaves open follow the source: bool joins the chain by being dropped
//! (not refused); true division and power of integers give float32; comparisons give bool;
//! `&` (and `logical_and`) need two bool tensors. MegEngine's newer C++
//! `DTypePromoteTransformation` answers differently for some pairs (bool with int → float32,
//! mixed signedness refused); `tools/megengine.md` lists them.

use crate::dtype::DType::{self, *};
use crate::dtype::Kind;
use crate::error::{Error, Exception, Reason};
use crate::lattice::Lattice;
use crate::operand::{Node, Operand, PyType, Value};
use crate::ops::{Op, OpRule, Outcome};
use crate::rules::{Options, Promotion, RuleSetDef, no_weak, numpy, unsupported};

const NAME: &str = "megengine";

/// The dtypes a MegEngine tensor can have (the page's support table).
const DTYPES: &[DType] = &[Bool, Int8, Int16, Int32, UInt8, UInt16, Float16, Float32];

/// Category priority by kind (`dtype.kind`: f 3, i/u 2, b 1, anything else 0).
const CATEGORY: &[(Kind, u8)] = &[
    (Kind::Bool, 1),
    (Kind::UnsignedInt, 2),
    (Kind::SignedInt, 2),
    (Kind::Float, 3),
    (Kind::Complex, 0),
];

/// `scalar2dtype`: the dtype of a Python scalar; complex is not a scalar to MegEngine.
const SCALAR_DTYPES: &[(PyType, Option<DType>)] = &[
    (PyType::Int, Some(Int32)),
    (PyType::Float, Some(Float32)),
    (PyType::Complex, None),
];

/// `&`-style logical ops need two bool tensors.
const NEEDS_BOOL: Outcome = Outcome::Refuse(Exception::TypeError, "{op} requires 2 bool tensors");

/// Ops after promotion (bool, unsigned, signed, float, complex).
const OPS: &[OpRule] = &[
    OpRule::kinds(
        Op::TrueDivide,
        [
            Outcome::Same,
            Outcome::To(Float32),
            Outcome::To(Float32),
            Outcome::Same,
            Outcome::Same,
        ],
    ),
    OpRule::kinds(
        Op::Power,
        [
            Outcome::Same,
            Outcome::To(Float32),
            Outcome::To(Float32),
            Outcome::Same,
            Outcome::Same,
        ],
    ),
    OpRule::all(Op::Equal, Outcome::Bool),
    OpRule::all(Op::Less, Outcome::Bool),
    OpRule::kinds(
        Op::LogicalAnd,
        [
            Outcome::Same,
            NEEDS_BOOL,
            NEEDS_BOOL,
            NEEDS_BOOL,
            NEEDS_BOOL,
        ],
    ),
    OpRule::kinds(
        Op::BitwiseAnd,
        [
            Outcome::Same,
            NEEDS_BOOL,
            NEEDS_BOOL,
            NEEDS_BOOL,
            NEEDS_BOOL,
        ],
    ),
];

/// Whether MegEngine has this dtype.
pub(crate) fn knows(dtype: DType) -> bool {
    DTYPES.contains(&dtype)
}

fn category(dtype: DType) -> u8 {
    CATEGORY
        .iter()
        .find(|(k, _)| *k == dtype.kind())
        .map_or(0, |&(_, c)| c)
}

/// What an operand contributes: `(dtype, is a tensor)`, or nothing (a Python complex).
fn part(op: &Operand) -> Result<Option<(DType, bool)>, Error> {
    let scalar = |t: PyType| {
        SCALAR_DTYPES
            .iter()
            .find(|(p, _)| *p == t)
            .and_then(|&(_, d)| d)
            .map(|d| (d, false))
    };
    Ok(match *op {
        Operand::Array { weak: true, .. } => return Err(no_weak(NAME, op, "tensors")),
        Operand::Array { dtype, .. } | Operand::Scalar { dtype, .. } if knows(dtype) => {
            Some((dtype, true))
        }
        Operand::Array { dtype, .. } | Operand::Scalar { dtype, .. } => {
            return Err(unsupported(
                NAME,
                op,
                format!(
                    "MegEngine has no {dtype} tensors (ConversionError: unsupported numpy dtype)"
                ),
            ));
        }
        Operand::Literal(Value::Bool(_)) => Some((Bool, false)),
        Operand::Literal(v) => v.py_type().and_then(scalar),
        Operand::PyType(t) => scalar(t),
    })
}

/// `dtype_promotion(*inputs)`.
pub(crate) fn result_type(_opts: Options, operands: &[Operand]) -> Result<Promotion, Error> {
    if operands.is_empty() {
        return Err(Reason::EmptyOperands.into());
    }
    let parts: Vec<(DType, bool)> = operands
        .iter()
        .map(part)
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    let top = |tensor: bool| {
        parts
            .iter()
            .filter(|p| p.1 == tensor)
            .map(|p| category(p.0))
            .max()
            .unwrap_or(0)
    };
    let (scalars, tensors) = (top(false), top(true));
    if scalars == 0 && tensors == 0 {
        return Err(Error::refused(
            Exception::ValueError,
            "invalid input, no dtype avaliable",
        ));
    }
    let (from_tensors, cat) = if scalars > tensors {
        (false, scalars)
    } else {
        (true, tensors)
    };
    let mut chosen = parts
        .iter()
        .filter(|p| p.1 == from_tensors && category(p.0) == cat)
        .map(|p| p.0);
    let first = chosen.next().expect("the top category has a member");
    let dtype = chosen.try_fold(first, |acc, d| {
        numpy::promote_types(Node::Dtype(acc), Node::Dtype(d))
    })?;
    Ok(Promotion {
        dtype,
        weak_type: false,
    })
}

/// Two types: MegEngine's promotion of two tensors (Python types as scalars).
pub(crate) fn promote_types(opts: Options, a: Node, b: Node) -> Result<DType, Error> {
    let operand = |n: Node| match n {
        Node::Dtype(d) => Operand::array(d),
        Node::Weak(t) => Operand::PyType(t),
    };
    result_type(opts, &[operand(a), operand(b)]).map(|p| p.dtype)
}

/// The result of MegEngine's elementwise `op`.
pub(crate) fn op_result(opts: Options, op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
    let promoted = result_type(opts, operands)?;
    crate::ops::rule_for(OPS, op).apply(promoted, Float32, &[])
}

/// Rule A is not a lattice (lower categories are dropped, not joined).
pub(crate) fn lattice(_opts: Options) -> Option<&'static Lattice<Node>> {
    None
}

/// The rule set's row in the registry.
pub(crate) static DEF: RuleSetDef = RuleSetDef::new(
    &["megengine"],
    "MegEngine",
    (promote_types, result_type, op_result, lattice, knows),
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rules;
    use crate::error::ErrorKind;

    fn promote(ops: &[&str]) -> Result<DType, Error> {
        let ops: Vec<Operand> = ops.iter().map(|s| s.parse().unwrap()).collect();
        Rules::new(crate::RuleSet::MEGENGINE)
            .result_type(&ops)
            .map(|p| p.dtype)
    }

    /// The examples of MegEngine's *Tensor data type* page.
    #[test]
    fn the_pages_examples() {
        assert_eq!(promote(&["int8", "uint8"]).unwrap(), Int16);
        assert_eq!(promote(&["int16", "float32"]).unwrap(), Float32);
        assert_eq!(promote(&["int16", "1"]).unwrap(), Int16);
        assert_eq!(promote(&["int16", "1.0"]).unwrap(), Float32);
    }

    #[test]
    fn lower_categories_are_dropped_and_unsupported_dtypes_refused() {
        assert_eq!(promote(&["bool", "int8"]).unwrap(), Int8);
        assert_eq!(promote(&["int32", "float16"]).unwrap(), Float16);
        assert_eq!(promote(&["float16", "2.5"]).unwrap(), Float16);
        assert_eq!(promote(&["1", "2.0"]).unwrap(), Float32);
        assert_eq!(promote(&["bool", "True"]).unwrap(), Bool);
        assert_eq!(promote(&["int8", "1j"]).unwrap(), Int8);
        assert_eq!(
            promote(&["1j"]).unwrap_err().exception(),
            Some(Exception::ValueError)
        );
        assert_eq!(
            promote(&["float64", "int8"]).unwrap_err().kind(),
            ErrorKind::UnsupportedOperand
        );
    }
}
