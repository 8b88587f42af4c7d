//! Operations: the result dtype of an operation is its operands' promotion, then the
//! operation's own rule (true division of integers gives a float, comparisons give bool,
//! bitwise operations refuse floats, …), which each rule set states as data.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::dtype::DType;
use crate::error::{Error, Exception, Reason};

/// An elementwise binary operation.
///
/// ```
/// use dtype_lattice::Op;
/// assert_eq!("true_divide".parse::<Op>().unwrap(), Op::TrueDivide);
/// assert_eq!("divide".parse::<Op>().unwrap(), Op::TrueDivide);
/// assert_eq!(Op::BitwiseAnd.to_string(), "bitwise_and");
/// assert!("plus".parse::<Op>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Op {
    /// `add`, `+`.
    Add,
    /// `subtract`, `-`.
    Subtract,
    /// `multiply`, `*`.
    Multiply,
    /// `true_divide`, `/`.
    TrueDivide,
    /// `floor_divide`, `//`.
    FloorDivide,
    /// `power`, `**`.
    Power,
    /// `equal`, `==`.
    Equal,
    /// `less`, `<`.
    Less,
    /// `logical_and`.
    LogicalAnd,
    /// `bitwise_and`, `&`.
    BitwiseAnd,
}

/// Each op's names: the canonical one first, then aliases (other libraries' spellings).
const NAMES: &[(Op, &[&str])] = &[
    (Op::Add, &["add", "+"]),
    (Op::Subtract, &["subtract", "sub", "-"]),
    (Op::Multiply, &["multiply", "mul", "*"]),
    (
        Op::TrueDivide,
        &["true_divide", "divide", "div", "truediv", "/"],
    ),
    (Op::FloorDivide, &["floor_divide", "floordiv", "//"]),
    (Op::Power, &["power", "pow", "**"]),
    (Op::Equal, &["equal", "eq", "=="]),
    (Op::Less, &["less", "lt", "<"]),
    (Op::LogicalAnd, &["logical_and"]),
    (Op::BitwiseAnd, &["bitwise_and", "&"]),
];

impl Op {
    /// Every op.
    pub const ALL: [Op; 10] = [
        Op::Add,
        Op::Subtract,
        Op::Multiply,
        Op::TrueDivide,
        Op::FloorDivide,
        Op::Power,
        Op::Equal,
        Op::Less,
        Op::LogicalAnd,
        Op::BitwiseAnd,
    ];

    /// The canonical (NumPy) name.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(o, _)| *o == self)
            .map(|(_, n)| n[0])
            .expect("every op is named")
    }
}

impl FromStr for Op {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        NAMES
            .iter()
            .find(|(_, names)| names.contains(&s))
            .map(|(o, _)| *o)
            .ok_or_else(|| {
                Reason::UnknownOp {
                    name: s.to_string(),
                    valid: NAMES.iter().map(|(_, n)| n[0]).collect(),
                }
                .into()
            })
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an op makes of the promoted dtype, in one library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The promoted dtype (and its weakness).
    Same,
    /// The promoted dtype, never weak (JAX's integer `power`).
    Strong,
    /// `bool` (comparisons, logical ops).
    Bool,
    /// `bool`, weak when the promotion is (JAX's comparisons run on the promoted operands).
    WeakBool,
    /// A fixed dtype (NumPy's `bool // bool` runs the int8 loop), weak if the promotion is.
    To(DType),
    /// The library's default float (true division of integers); stays weak if the promoted
    /// dtype was weak.
    DefaultFloat,
    /// Refused: exception class and message template (`{op}`, `{dtype}`, `{dtypes}`).
    Refuse(Exception, &'static str),
}

/// One op's rule in one library: an outcome per kind of the promoted dtype, with
/// per-dtype exceptions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpRule {
    pub(crate) op: Op,
    /// Outcomes for bool, unsigned, signed, float, complex (in [`Kind`](crate::Kind) order).
    pub(crate) by_kind: [Outcome; 5],
    /// Exceptions by dtype, checked first.
    pub(crate) by_dtype: &'static [(DType, Outcome)],
}

impl OpRule {
    /// The same outcome for every kind.
    pub(crate) const fn all(op: Op, o: Outcome) -> OpRule {
        OpRule::kinds(op, [o, o, o, o, o])
    }

    /// Outcomes for bool, unsigned, signed, float, complex.
    pub(crate) const fn kinds(op: Op, by_kind: [Outcome; 5]) -> OpRule {
        OpRule {
            op,
            by_kind,
            by_dtype: &[],
        }
    }

    /// Bool and integers become `o` (true division's float), floats and complex stay.
    pub(crate) const fn integers_to(op: Op, o: Outcome) -> OpRule {
        OpRule::kinds(op, [o, o, o, Outcome::Same, Outcome::Same])
    }

    /// With exceptions by dtype.
    pub(crate) const fn except(mut self, by_dtype: &'static [(DType, Outcome)]) -> OpRule {
        self.by_dtype = by_dtype;
        self
    }

    /// Applies the rule to the promotion of the operands (`operands` for messages).
    pub(crate) fn apply(
        &self,
        promoted: Promotion,
        default_float: DType,
        operands: &[DType],
    ) -> Result<Promotion, Error> {
        let d = promoted.dtype;
        let outcome = self
            .by_dtype
            .iter()
            .find(|(t, _)| *t == d)
            .map_or(self.by_kind[d.kind() as usize], |&(_, o)| o);
        Ok(match outcome {
            Outcome::Same => promoted,
            Outcome::Strong => Promotion {
                dtype: d,
                weak_type: false,
            },
            Outcome::Bool => Promotion {
                dtype: DType::Bool,
                weak_type: false,
            },
            Outcome::WeakBool => Promotion {
                dtype: DType::Bool,
                weak_type: promoted.weak_type,
            },
            Outcome::To(t) => Promotion {
                dtype: t,
                weak_type: promoted.weak_type,
            },
            Outcome::DefaultFloat => Promotion {
                dtype: default_float,
                weak_type: promoted.weak_type,
            },
            Outcome::Refuse(kind, template) => {
                let dtypes: Vec<&str> = operands.iter().map(|t| t.name()).collect();
                let message = template
                    .replace("{op}", self.op.name())
                    .replace("{dtype}", d.name())
                    .replace("{dtypes}", &dtypes.join(", "));
                return Err(Error::refused(kind, message));
            }
        })
    }
}

/// Finds an op's rule in a rule set's table; ops without an entry are plain promotion.
pub(crate) fn rule_for(table: &[OpRule], op: Op) -> OpRule {
    table
        .iter()
        .copied()
        .find(|r| r.op == op)
        .unwrap_or(OpRule::all(op, Outcome::Same))
}

/// The result of a promotion: a dtype and whether it is weakly typed.
///
/// ```
/// use dtype_lattice::{DType, Promotion};
/// let p = Promotion { dtype: DType::Float32, weak_type: true };
/// assert_eq!(p.to_string(), "float32 (weak)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Promotion {
    /// The result dtype (for weak results, the default dtype of their kind).
    pub dtype: DType,
    /// Whether the result is weakly typed.
    pub weak_type: bool,
}

impl fmt::Display for Promotion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.dtype)?;
        if self.weak_type {
            f.write_str(" (weak)")?;
        }
        Ok(())
    }
}
