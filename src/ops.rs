//! Operations: the result dtype of an operation is its operands' promotion, then the
//! operation's own rule (true division of integers gives a float, comparisons give bool,
//! bitwise operations refuse floats, …), which each rule set states as data.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, Reason};

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
