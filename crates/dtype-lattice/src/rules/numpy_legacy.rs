//! NumPy 1.26 value-based casting (`np._get_promotion_state() == 'legacy'`).
//!
//! Python scalars are 0-d arrays (`int` is int64, or uint64 from 2**63 to 2**64-1; `float` is
//! float64, `complex` complex128). With only arrays, or only 0-d values, or when a 0-d value's
//! kind (bool < integer < inexact) is above every array's, the result is NumPy's plain
//! promotion of the dtypes, the same safe-cast order as NumPy 2 ([`super::numpy`]). Otherwise
//! each 0-d value is replaced by `np.min_scalar_type` of its value and the operands are folded
//! left to right with `promote_types`, a "small unsigned" minimum type (a non-negative value
//! that also fits the signed type of its size) acting as that signed type against anything
//! but bool and unsigned. Ufuncs with NumPy's default type resolver (`floor_divide`, `power`,
//! `bitwise_and`, and `true_divide` of inexact inputs) take the first loop of `ufunc.types`
//! that accepts every input by safe casting, by value where value-based casting applies.

use crate::dtype::DType::{self, *};
use crate::dtype::Kind;
use crate::error::{Error, Exception, Reason};
use crate::lattice::{Lattice, Lub};
use crate::operand::{Node, Operand, PyType, Value};
use crate::ops::{Op, OpRule};
use crate::rules::{Options, Promotion, RuleSetDef, no_weak, numpy, unsupported};

/// The rule set's name in refusals.
const NAME: &str = "numpy-legacy";

/// NumPy's simplified kind order for value-based casting (`dtype_kind_to_simplified_ordering`),
/// by [`Kind`]: bool, unsigned, signed, float, complex.
const KIND_RANK: [u8; 5] = [0, 1, 1, 2, 2];

/// `np.min_scalar_type` of integers: the first unsigned type of a row that holds a value
/// ≥ 0 ("small" when the row's signed type holds it too), else the first signed type that
/// holds it. The rows also give the signed type a small unsigned value acts as.
const INT_LADDER: &[(DType, DType)] = &[
    (UInt8, Int8),
    (UInt16, Int16),
    (UInt32, Int32),
    (UInt64, Int64),
];

/// `np.min_scalar_type` of an inexact value: the first step whose exclusive bound exceeds the
/// magnitude (for complex values, of both parts), else the top; a non-finite value gets its
/// own dtype. A 0-d array never goes above its own dtype.
struct InexactLadder {
    /// The kind of 0-d value the ladder serves.
    kind: Kind,
    /// (exclusive bound on the magnitude, dtype), ascending.
    steps: &'static [(f64, DType)],
    /// The dtype beyond every step.
    top: DType,
    /// The dtype of a value with a non-finite part.
    non_finite: DType,
}

/// NumPy 1.26's thresholds (`min_scalar_type_num` in `convert_datatype.c`).
const INEXACT_LADDERS: &[InexactLadder] = &[
    InexactLadder {
        kind: Kind::Float,
        steps: &[(65000.0, Float16), (3.4e38, Float32)],
        top: Float64,
        non_finite: Float16,
    },
    InexactLadder {
        kind: Kind::Complex,
        steps: &[(3.4e38, Complex64)],
        top: Complex128,
        non_finite: Complex128,
    },
];

/// The dtypes NumPy 1.26 gives a Python int, the first that holds it (beyond them: `object`).
const PYTHON_INT: &[DType] = &[Int64, UInt64];

/// NumPy's one-character type codes (`dtype.char`, LP64) of the dtypes the model has. Loops on
/// other codes (longdouble `g`/`G`, datetimes, `O`) are never the first to accept these
/// inputs, so they are skipped.
const TYPE_CODES: &[(char, DType)] = &[
    ('?', Bool),
    ('b', Int8),
    ('B', UInt8),
    ('h', Int16),
    ('H', UInt16),
    ('i', Int32),
    ('I', UInt32),
    ('l', Int64),
    ('L', UInt64),
    ('q', Int64),
    ('Q', UInt64),
    ('e', Float16),
    ('f', Float32),
    ('d', Float64),
    ('F', Complex64),
    ('D', Complex128),
];

/// A ufunc resolved by NumPy's default type resolver (linear search over its loops).
struct LoopSearch {
    /// The ufunc.
    op: Op,
    /// The loops' (homogeneous) input type codes, in `ufunc.types` order.
    loops: &'static str,
    /// The loop forced when every input is bool or an integer (`true_divide`'s resolver).
    integer_inputs: Option<DType>,
    /// Whether an integer loop refuses a negative integer second operand (`power`).
    no_negative_exponent: bool,
}

/// The ufuncs that do not run on `result_type` (the others follow NumPy 2's [`numpy::OPS`]:
/// their resolvers take the loop of the promoted dtype).
const LOOP_SEARCH: &[LoopSearch] = &[
    LoopSearch {
        op: Op::TrueDivide,
        loops: "efdgFDG",
        integer_inputs: Some(Float64),
        no_negative_exponent: false,
    },
    LoopSearch {
        op: Op::FloorDivide,
        loops: "bBhHiIlLqQefdg",
        integer_inputs: None,
        no_negative_exponent: false,
    },
    LoopSearch {
        op: Op::Power,
        loops: "bBhHiIlLqQefdefdgFDG",
        integer_inputs: None,
        no_negative_exponent: true,
    },
    LoopSearch {
        op: Op::BitwiseAnd,
        loops: "?bBhHiIlLqQ",
        integer_inputs: None,
        no_negative_exponent: false,
    },
];

/// What an operand is to NumPy 1.26: an array with dimensions, or a 0-d value (a 0-d array,
/// or a Python scalar converted to one).
#[derive(Clone, Copy, Debug)]
enum Item {
    /// An array with at least one dimension.
    Array(DType),
    /// A 0-d array of the dtype holding the value (converted to it).
    ZeroD(DType, Value),
}

impl Item {
    /// The item's dtype.
    fn dtype(self) -> DType {
        match self {
            Item::Array(d) | Item::ZeroD(d, _) => d,
        }
    }
}

/// `np.min_scalar_type`'s answer with its "small unsigned" flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MinScalar {
    /// The minimum type.
    dtype: DType,
    /// An unsigned minimum type whose value also fits the signed type of its size.
    small_unsigned: bool,
}

/// Whether NumPy has this dtype.
pub(crate) fn knows(dtype: DType) -> bool {
    numpy::knows_builtin(dtype)
}

/// The dtype if NumPy has it, else the refusal naming `op`.
fn check(op: &Operand, dtype: DType) -> Result<DType, Error> {
    if knows(dtype) {
        Ok(dtype)
    } else {
        Err(unsupported(NAME, op, format!("it has no dtype {dtype}")))
    }
}

/// The operand as NumPy 1.26 sees it; the `int`, `float`, `complex` operands are the Python
/// scalars 0, 0.0, 0j.
fn item(op: &Operand) -> Result<Item, Error> {
    let python = |value: Value| -> Result<Item, Error> {
        let dtype = match value {
            Value::Bool(_) => Bool,
            Value::Int(i) => *PYTHON_INT
                .iter()
                .find(|t| t.int_range().is_some_and(|(lo, hi)| (lo..=hi).contains(&i)))
                .ok_or_else(|| {
                    unsupported(
                        NAME,
                        op,
                        "NumPy gives this Python int the object dtype, which dtype-lattice \
                         does not model"
                            .into(),
                    )
                })?,
            Value::Float(_) => numpy::DEFAULTS.float,
            Value::Complex(..) => numpy::DEFAULTS.complex,
        };
        Ok(Item::ZeroD(dtype, value))
    };
    match *op {
        Operand::Array { weak: true, .. } => Err(no_weak(NAME, op, "arrays")),
        Operand::Array { dtype, .. } => Ok(Item::Array(check(op, dtype)?)),
        Operand::Scalar { dtype, value } => Ok(Item::ZeroD(check(op, dtype)?, value.cast(dtype)?)),
        Operand::PyType(PyType::Int) => python(Value::Int(0)),
        Operand::PyType(PyType::Float) => python(Value::Float(0.0)),
        Operand::PyType(PyType::Complex) => python(Value::Complex(0.0, 0.0)),
        Operand::Literal(v) => python(v),
    }
}

/// `np.min_scalar_type` of a 0-d `dtype` holding `value` (already converted to `dtype`).
fn min_scalar(dtype: DType, value: Value) -> MinScalar {
    let plain = MinScalar {
        dtype,
        small_unsigned: false,
    };
    let holds = |t: DType, i: i128| t.int_range().is_some_and(|(lo, hi)| (lo..=hi).contains(&i));
    match (dtype.kind(), value) {
        (k, Value::Int(i)) if k.is_integer() => {
            let found = if i >= 0 {
                INT_LADDER
                    .iter()
                    .find(|&&(u, _)| holds(u, i))
                    .map(|&(u, s)| MinScalar {
                        dtype: u,
                        small_unsigned: holds(s, i),
                    })
            } else {
                INT_LADDER
                    .iter()
                    .find(|&&(_, s)| holds(s, i))
                    .map(|&(_, s)| MinScalar {
                        dtype: s,
                        small_unsigned: false,
                    })
            };
            found.unwrap_or(plain)
        }
        (k @ (Kind::Float | Kind::Complex), Value::Float(_) | Value::Complex(..)) => {
            let (re, im) = match value {
                Value::Complex(re, im) => (re, im),
                Value::Float(x) => (x, 0.0),
                _ => (0.0, 0.0),
            };
            let Some(ladder) = INEXACT_LADDERS.iter().find(|l| l.kind == k) else {
                return plain;
            };
            let climbed = if re.is_finite() && im.is_finite() {
                let magnitude = re.abs().max(im.abs());
                ladder
                    .steps
                    .iter()
                    .find(|&&(bound, _)| magnitude < bound)
                    .map_or(ladder.top, |&(_, t)| t)
            } else {
                ladder.non_finite
            };
            // Never above the operand's own dtype (a float16 0-d stays float16).
            let position = |t: DType| {
                ladder
                    .steps
                    .iter()
                    .map(|&(_, s)| s)
                    .chain([ladder.top])
                    .position(|s| s == t)
            };
            let dtype = match (position(dtype), position(climbed)) {
                (Some(own), Some(up)) if own < up => dtype,
                _ => climbed,
            };
            MinScalar {
                dtype,
                small_unsigned: false,
            }
        }
        _ => plain,
    }
}

/// `np.min_scalar_type(operand)` as NumPy 1.26 computes it: by value for Python scalars and
/// 0-d arrays, the dtype itself for arrays. Python ints beyond 64 bits (NumPy's `object`) and
/// dtypes NumPy lacks are refused as unsupported.
#[allow(dead_code)] // the crate's view of `np.min_scalar_type`; checked against its fixture
pub(crate) fn min_scalar_type(operand: &Operand) -> Result<DType, Error> {
    Ok(match item(operand)? {
        Item::Array(d) => d,
        Item::ZeroD(d, v) => min_scalar(d, v).dtype,
    })
}

/// The signed type a small unsigned value acts as.
fn signed(t: DType) -> DType {
    INT_LADDER
        .iter()
        .find(|&&(u, _)| u == t)
        .map_or(t, |&(_, s)| s)
}

/// NumPy's `promote_types` with the small-unsigned rule: a small unsigned side acts as its
/// signed type unless the other side is bool or unsigned.
fn promote_small(a: MinScalar, b: MinScalar) -> Result<DType, Error> {
    let acts_as = |x: MinScalar, other: DType| {
        if x.small_unsigned && !matches!(other.kind(), Kind::Bool | Kind::UnsignedInt) {
            signed(x.dtype)
        } else {
            x.dtype
        }
    };
    numpy::promote_types(
        Node::Dtype(acts_as(a, b.dtype)),
        Node::Dtype(acts_as(b, a.dtype)),
    )
}

/// Whether value-based casting applies: there are both arrays with dimensions and 0-d values,
/// and no 0-d value's kind is above every array's (`should_use_min_scalar`; NumPy 1.26 takes
/// the legacy path only when some operand is 0-d, so arrays alone get the plain promotion).
fn value_based(items: &[Item]) -> bool {
    let rank = |d: DType| KIND_RANK.get(d.kind() as usize).copied().unwrap_or(u8::MAX);
    let (mut max_array, mut max_scalar) = (None, None);
    for &i in items {
        let slot = match i {
            Item::Array(_) => &mut max_array,
            Item::ZeroD(..) => &mut max_scalar,
        };
        *slot = (*slot).max(Some(rank(i.dtype())));
    }
    matches!((max_array, max_scalar), (Some(a), Some(s)) if s <= a)
}

/// `np.result_type` of the items.
fn promote(items: &[Item]) -> Result<DType, Error> {
    if value_based(items) {
        // The left fold in operand order, with each 0-d value's minimum type.
        let mut acc: Option<MinScalar> = None;
        for &i in items {
            let next = match i {
                Item::Array(dtype) => MinScalar {
                    dtype,
                    small_unsigned: false,
                },
                Item::ZeroD(d, v) => min_scalar(d, v),
            };
            acc = Some(match acc {
                None => next,
                Some(a) => MinScalar {
                    dtype: promote_small(next, a)?,
                    small_unsigned: next.small_unsigned && a.small_unsigned,
                },
            });
        }
        return acc
            .map(|m| m.dtype)
            .ok_or_else(|| Reason::EmptyOperands.into());
    }
    // The plain promotion of the whole set: the smallest type all cast to safely.
    let lattice = numpy::lattice();
    let indices: Vec<usize> = items
        .iter()
        .filter_map(|i| lattice.index_of(&Node::Dtype(i.dtype())))
        .collect();
    match lattice.lub_index(&indices) {
        Lub::Node(c) => Ok(lattice.node(c).dtype_or_default()),
        _ => Err(Reason::EmptyOperands.into()),
    }
}

/// `np.result_type(*operands)` in NumPy 1.26.
pub(crate) fn result_type(_opts: Options, operands: &[Operand]) -> Result<Promotion, Error> {
    let items = operands.iter().map(item).collect::<Result<Vec<_>, _>>()?;
    Ok(Promotion {
        dtype: promote(&items)?,
        weak_type: false,
    })
}

/// `np.promote_types(a, b)`: unchanged from NumPy 1.26 to 2 for numeric dtypes (Python types
/// stand for NumPy's dtype of them).
pub(crate) fn promote_types(_opts: Options, a: Node, b: Node) -> Result<DType, Error> {
    for n in [a, b] {
        if let Node::Dtype(t) = n {
            check(&Operand::array(t), t)?;
        }
    }
    numpy::promote_types(a, b)
}

/// Whether `from` casts safely to `to` (NumPy's safe-cast order).
fn safe(from: DType, to: DType) -> bool {
    let l = numpy::lattice();
    match (l.index_of(&Node::Dtype(from)), l.index_of(&Node::Dtype(to))) {
        (Some(a), Some(b)) => l.leq(a, b),
        _ => false,
    }
}

/// Whether a loop with input dtype `to` accepts the item (`ufunc_loop_matches`): safe casting
/// of the dtype or, where value-based casting applies, of a 0-d value's minimum type (a small
/// unsigned one acting as signed unless `to` is unsigned).
fn accepts(item: Item, to: DType, by_value: bool) -> bool {
    if safe(item.dtype(), to) {
        return true;
    }
    match item {
        Item::ZeroD(d, v) if by_value => {
            let m = min_scalar(d, v);
            let t = if m.small_unsigned && to.kind() != Kind::UnsignedInt {
                signed(m.dtype)
            } else {
                m.dtype
            };
            safe(t, to)
        }
        _ => false,
    }
}

/// NumPy's default type resolver for `search`: the first loop accepting every input.
fn search_loops(search: &LoopSearch, items: &[Item]) -> Result<Promotion, Error> {
    let all_integer = items.iter().all(|i| {
        matches!(
            i.dtype().kind(),
            Kind::Bool | Kind::UnsignedInt | Kind::SignedInt
        )
    });
    if let (Some(forced), true) = (search.integer_inputs, all_integer) {
        return Ok(Promotion {
            dtype: forced,
            weak_type: false,
        });
    }
    let by_value = value_based(items);
    let found = search
        .loops
        .chars()
        .filter_map(|c| TYPE_CODES.iter().find(|&&(k, _)| k == c).map(|&(_, t)| t))
        .find(|&t| items.iter().all(|&i| accepts(i, t, by_value)));
    let Some(loop_dtype) = found else {
        // No loop: NumPy's refusal (which names no dtype).
        let promoted = Promotion {
            dtype: Bool,
            weak_type: false,
        };
        return OpRule::all(search.op, numpy::UFUNC_NO_LOOP).apply(
            promoted,
            numpy::DEFAULTS.float,
            &[],
        );
    };
    let negative_exponent = matches!(items.get(1), Some(Item::ZeroD(_, Value::Int(v))) if *v < 0);
    if search.no_negative_exponent && loop_dtype.kind().is_integer() && negative_exponent {
        return Err(Error::refused(
            Exception::ValueError,
            "Integers to negative integer powers are not allowed.",
        ));
    }
    Ok(Promotion {
        dtype: loop_dtype,
        weak_type: false,
    })
}

/// The result of NumPy 1.26's ufunc for `op` on `operands`.
pub(crate) fn op_result(_opts: Options, op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
    let items = operands.iter().map(item).collect::<Result<Vec<_>, _>>()?;
    if items.is_empty() {
        return Err(Reason::EmptyOperands.into());
    }
    if let Some(search) = LOOP_SEARCH.iter().find(|s| s.op == op) {
        return search_loops(search, &items);
    }
    let promoted = Promotion {
        dtype: promote(&items)?,
        weak_type: false,
    };
    crate::ops::rule_for(numpy::OPS, op).apply(promoted, numpy::DEFAULTS.float, &[])
}

/// NumPy's safe-cast order, which `np.promote_types` follows (value-based casting is not a
/// lattice).
pub(crate) fn lattice(_opts: Options) -> Option<&'static Lattice<Node>> {
    Some(numpy::lattice())
}

/// The rule set's row in the registry.
pub(crate) static DEF: RuleSetDef = RuleSetDef::new(
    &["numpy-legacy", "numpy1"],
    "NumPy 1.x value-based casting",
    (promote_types, result_type, op_result, lattice, knows),
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[derive(serde::Deserialize)]
    struct Case {
        operands: Vec<String>,
        dtype: String,
    }

    #[derive(serde::Deserialize)]
    struct Fixture {
        cases: Vec<Case>,
    }

    /// `np.min_scalar_type` against every case NumPy 1.26 recorded.
    #[test]
    fn min_scalar_type_agrees_with_numpy_1_26() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/numpy/min_scalar_type.json"
        );
        let text = std::fs::read_to_string(path).expect("fixture");
        let f: Fixture = serde_json::from_str(&text).expect("valid fixture");
        let mut failures = Vec::new();
        for case in &f.cases {
            let [s] = case.operands.as_slice() else {
                panic!("one operand per case")
            };
            let op: Operand = s.parse().expect("operand");
            let got = match min_scalar_type(&op) {
                Ok(d) => d.name().to_string(),
                Err(e) if e.kind() == ErrorKind::UnsupportedOperand => "object".to_string(),
                Err(e) => e.to_string(),
            };
            if got != case.dtype {
                failures.push(format!("{s}: got {got}, want {}", case.dtype));
            }
        }
        assert!(f.cases.len() == 269, "{} cases", f.cases.len());
        assert!(failures.is_empty(), "{failures:#?}");
    }

    #[test]
    fn small_unsigned_values_act_as_signed() {
        let m = min_scalar(Int64, Value::Int(3));
        assert_eq!(
            m,
            MinScalar {
                dtype: UInt8,
                small_unsigned: true
            }
        );
        assert_eq!(
            promote_small(
                m,
                MinScalar {
                    dtype: Int8,
                    small_unsigned: false
                }
            )
            .unwrap(),
            Int8
        );
        assert!(!min_scalar(UInt8, Value::Int(200)).small_unsigned);
    }

    #[test]
    fn every_set_of_numpy_dtypes_promotes() {
        let known: Vec<DType> = DType::ALL.iter().copied().filter(|&d| knows(d)).collect();
        for &a in &known {
            for &b in &known {
                let items = [Item::Array(a), Item::Array(b)];
                assert!(promote(&items).is_ok(), "{a} {b}");
            }
        }
    }
}
