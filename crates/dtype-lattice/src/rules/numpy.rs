//! NumPy ≥ 2 (NEP 50; CuPy and Dask follow it): `np.promote_types` is the smallest type both
//! dtypes cast to safely, ties going to the lower type number; Python scalars are weak and
//! meet the strong result through a small table by kind; NumPy scalars and 0-d arrays are
//! strong.

use std::sync::OnceLock;

use crate::dtype::DType::{self, *};
use crate::dtype::Kind;
use crate::error::{Error, Exception, Reason};
use crate::lattice::{Lattice, Lub};
use crate::operand::{Node, Operand, PyType, Value};
use crate::ops::{Op, OpRule, Outcome};
use crate::rules::compiled::{Compiled, NO_JOIN};
use crate::rules::{Defaults, Promotion, RuleSetDef, WeakRule, no_weak, unsupported};

const fn d(t: DType) -> Node {
    Node::Dtype(t)
}

/// NumPy's safe casts between its numeric dtypes, node → dtypes it casts to directly
/// (`np.can_cast(a, b, "safe")`, transitively reduced).
const SAFE_CASTS: &[(Node, &[Node])] = &[
    (d(Bool), &[d(UInt8), d(Int8)]),
    (d(UInt8), &[d(UInt16), d(Int16), d(Float16)]),
    (d(Int8), &[d(Int16), d(Float16)]),
    (d(UInt16), &[d(UInt32), d(Int32), d(Float32)]),
    (d(Int16), &[d(Int32), d(Float32)]),
    (d(UInt32), &[d(UInt64), d(Int64), d(Float64)]),
    (d(Int32), &[d(Int64), d(Float64)]),
    (d(UInt64), &[d(Float64)]),
    (d(Int64), &[d(Float64)]),
    (d(Float16), &[d(Float32), d(Complex64)]),
    (d(Float32), &[d(Float64), d(Complex64)]),
    (d(Float64), &[d(Complex128)]),
    (d(Complex64), &[d(Complex128)]),
    (d(Complex128), &[]),
];

/// NumPy's type numbers (`np.dtype(t).num`): where two smallest safe casts tie (int8 with
/// uint8: int16 or float16), the lower number wins.
const TYPE_NUMBER: &[(DType, usize)] = &[
    (Bool, 0),
    (Int8, 1),
    (UInt8, 2),
    (Int16, 3),
    (UInt16, 4),
    (Int32, 5),
    (UInt32, 6),
    (Int64, 7),
    (UInt64, 8),
    (Float32, 11),
    (Float64, 12),
    (Complex64, 14),
    (Complex128, 15),
    (Float16, 23),
];

/// NEP 50: a Python scalar meets the strong result by kind.
pub(crate) const WEAK_RULES: &[(PyType, Kind, WeakRule)] = &[
    (PyType::Int, Kind::Bool, WeakRule::Default),
    (PyType::Int, Kind::UnsignedInt, WeakRule::Keep),
    (PyType::Int, Kind::SignedInt, WeakRule::Keep),
    (PyType::Int, Kind::Float, WeakRule::Keep),
    (PyType::Int, Kind::Complex, WeakRule::Keep),
    (PyType::Float, Kind::Bool, WeakRule::Default),
    (PyType::Float, Kind::UnsignedInt, WeakRule::Default),
    (PyType::Float, Kind::SignedInt, WeakRule::Default),
    (PyType::Float, Kind::Float, WeakRule::Keep),
    (PyType::Float, Kind::Complex, WeakRule::Keep),
    (PyType::Complex, Kind::Bool, WeakRule::Default),
    (PyType::Complex, Kind::UnsignedInt, WeakRule::Default),
    (PyType::Complex, Kind::SignedInt, WeakRule::Default),
    (PyType::Complex, Kind::Float, WeakRule::ToComplex),
    (PyType::Complex, Kind::Complex, WeakRule::Keep),
];

/// NumPy's dtypes for Python scalars, and complex of a float's precision.
pub(crate) const DEFAULTS: Defaults = Defaults {
    int: Int64,
    float: Float64,
    complex: Complex128,
    to_complex: |f| if f == Float64 { Complex128 } else { Complex64 },
};

/// NumPy's refusal when no loop of a ufunc accepts the inputs by safe casting.
pub(crate) const UFUNC_NO_LOOP: Outcome = Outcome::Refuse(
    Exception::TypeError,
    "ufunc '{op}' not supported for the input types, and the inputs could not be safely \
     coerced to any supported types according to the casting rule ''safe''",
);

/// What each ufunc's loops make of the promoted dtype (bool, unsigned, signed, float,
/// complex); ops not listed keep it.
pub(crate) const OPS: &[OpRule] = &[
    OpRule::kinds(
        Op::Subtract,
        [
            Outcome::Refuse(
                Exception::TypeError,
                "numpy boolean subtract, the `-` operator, is not supported, use the \
                 bitwise_xor, the `^` operator, or the logical_xor function instead.",
            ),
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
        ],
    ),
    OpRule::integers_to(Op::TrueDivide, Outcome::To(Float64)),
    OpRule::kinds(
        Op::FloorDivide,
        [
            Outcome::To(Int8),
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            UFUNC_NO_LOOP,
        ],
    ),
    OpRule::kinds(
        Op::Power,
        [
            Outcome::To(Int8),
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
        ],
    ),
    OpRule::all(Op::Equal, Outcome::Bool),
    OpRule::all(Op::Less, Outcome::Bool),
    OpRule::all(Op::LogicalAnd, Outcome::Bool),
    OpRule::kinds(
        Op::BitwiseAnd,
        [
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            UFUNC_NO_LOOP,
            UFUNC_NO_LOOP,
        ],
    ),
];

fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| {
        let lattice = Lattice::from_edges(SAFE_CASTS.iter().map(|&(n, a)| (n, a.to_vec())))
            .expect("acyclic")
            .with_tie_break(|n| match n {
                Node::Dtype(t) => TYPE_NUMBER
                    .iter()
                    .find(|(d, _)| d == t)
                    .map_or(usize::MAX, |&(_, k)| k),
                Node::Weak(_) => usize::MAX,
            });
        Compiled::from_lattice(lattice)
    })
}

/// The safe-cast order (not a lattice: see [`Lattice::ambiguous_pairs`]).
pub(crate) fn lattice() -> &'static Lattice<Node> {
    &compiled().lattice
}

/// Whether NumPy has this dtype.
pub(crate) fn knows(dtype: DType) -> bool {
    TYPE_NUMBER.iter().any(|&(d, _)| d == dtype)
}

/// What an operand contributes in NumPy 2: a strong dtype, or a weak Python scalar type.
pub(crate) enum Part {
    Strong(DType),
    Weak(PyType),
}

pub(crate) fn classify(
    rules: &'static str,
    op: &Operand,
    knows: fn(DType) -> bool,
) -> Result<Part, Error> {
    let check = |dtype: DType| {
        if knows(dtype) {
            Ok(dtype)
        } else {
            Err(unsupported(rules, op, format!("it has no dtype {dtype}")))
        }
    };
    Ok(match *op {
        Operand::Array { weak: true, .. } => return Err(no_weak(rules, op, "arrays")),
        Operand::Array { dtype, .. } | Operand::Scalar { dtype, .. } => Part::Strong(check(dtype)?),
        Operand::Literal(Value::Bool(_)) => Part::Strong(Bool),
        Operand::Literal(v) => Part::Weak(v.py_type().expect("non-bool literal")),
        Operand::PyType(t) => Part::Weak(t),
    })
}

/// `np.promote_types(a, b)`; Python types stand for NumPy's dtype of them (int → int64).
pub(crate) fn promote_types(a: Node, b: Node) -> Result<DType, Error> {
    let dtype = |n: Node| match n {
        Node::Dtype(t) if knows(t) => Ok(t),
        Node::Dtype(t) => Err(unsupported(
            "numpy",
            &Operand::array(t),
            format!("it has no dtype {t}"),
        )),
        Node::Weak(t) => Ok(t.default_dtype()),
    };
    let (a, b) = (dtype(a)?, dtype(b)?);
    let c = compiled();
    let r = c.step(a.index() as u8, b.index());
    debug_assert_ne!(
        r, NO_JOIN,
        "NumPy promotes every pair of its numeric dtypes"
    );
    Ok(Node::from_index(r as usize).dtype_or_default())
}

/// `np.result_type(*operands)`.
pub(crate) fn result_type(operands: &[Operand]) -> Result<Promotion, Error> {
    let c = compiled();
    let mut strong: Vec<usize> = Vec::with_capacity(operands.len());
    let mut weak: Option<PyType> = None;
    for op in operands {
        match classify("numpy", op, knows)? {
            Part::Strong(t) => strong.push(c.lattice.index_of(&d(t)).expect("a NumPy dtype")),
            Part::Weak(t) => weak = weak.max(Some(t)),
        }
    }
    let dtype = if strong.is_empty() {
        // Only Python scalars: NumPy's dtypes for them (a Python int by its value).
        match weak {
            None => return Err(Reason::EmptyOperands.into()),
            Some(PyType::Int) => python_int_dtype(operands)?,
            Some(t) => t.default_dtype(),
        }
    } else {
        // The smallest type every strong dtype casts to safely (ties by type number); NumPy
        // promotes the whole set at once, not pairwise.
        let s = match c.lattice.lub_index(&strong) {
            Lub::Node(i) => c.lattice.node(i).dtype_or_default(),
            _ => unreachable!("NumPy promotes every set of its numeric dtypes"),
        };
        match weak {
            None => s,
            Some(t) => {
                WeakRule::apply(WEAK_RULES, t, s, &DEFAULTS).expect("NEP 50 covers every kind")
            }
        }
    };
    Ok(Promotion {
        dtype,
        weak_type: false,
    })
}

/// The dtype NumPy gives Python ints without strong operands: int64, except that a single
/// Python int is converted by its value (`np.result_type(2**63)` is uint64; beyond 64 bits
/// NumPy makes it an object array, which the model does not have: a refusal).
fn python_int_dtype(operands: &[Operand]) -> Result<DType, Error> {
    let [op @ Operand::Literal(Value::Int(v))] = operands else {
        return Ok(Int64);
    };
    [Int64, UInt64]
        .into_iter()
        .find(|t| {
            let (min, max) = t.int_range().expect("integer");
            (min..=max).contains(v)
        })
        .ok_or_else(|| {
            unsupported(
                "numpy",
                op,
                "NumPy gives this Python int the object dtype, which dtype-lattice does not model"
                    .into(),
            )
        })
}

/// The result of NumPy's ufunc for `op` on `operands`: promotion, the ufunc's loops, and
/// NEP 50's checks on Python ints where the loop runs in the promoted integer dtype (they
/// must fit it; `power` refuses a negative one as exponent).
pub(crate) fn op_result(op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
    let promoted = result_type(operands)?;
    let result = crate::ops::rule_for(OPS, op).apply(promoted, Float64, &[])?;
    let integer_loop = result.dtype == promoted.dtype && promoted.dtype.kind().is_integer();
    if !integer_loop {
        return Ok(result);
    }
    let (min, max) = promoted.dtype.int_range().expect("integer");
    for o in operands {
        if let Operand::Literal(Value::Int(v)) = *o
            && !(min..=max).contains(&v)
        {
            return Err(Error::refused(
                Exception::OverflowError,
                format!("Python integer {v} out of bounds for {}", promoted.dtype),
            ));
        }
    }
    let negative = |o: &Operand| matches!(o, Operand::Literal(Value::Int(v)) | Operand::Scalar { value: Value::Int(v), .. } if *v < 0);
    if op == Op::Power && operands.get(1).is_some_and(negative) {
        return Err(Error::refused(
            Exception::ValueError,
            "Integers to negative integer powers are not allowed.",
        ));
    }
    Ok(result)
}

/// The rule set's row in the registry.
pub(crate) static DEF: RuleSetDef = RuleSetDef::new(
    &["numpy", "np", "cupy", "dask"],
    "NumPy >= 2 (NEP 50); CuPy and Dask follow it",
    (
        |_, a, b| promote_types(a, b),
        |_, ops| result_type(ops),
        |_, op, ops| op_result(op, ops),
        |_| Some(lattice()),
        knows,
    ),
);
