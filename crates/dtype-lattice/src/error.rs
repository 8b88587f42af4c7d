//! The one error type of the library, with the distinction the CLI's exit codes rest on:
//! a *refusal* (the rule set answers "no": exit 1) versus *unusable input* (exit 2).

use serde::Serialize;

use crate::dtype::DType;

/// An error: a boxed [`Reason`], so that `Result<DType, Error>` stays two words and the
/// promotion hot path does not pay for the error's size.
///
/// [`Error::kind`] names the error the way the JSON output does (for refusals, the Python
/// exception class the real library raises, e.g. `TypePromotionError`), and
/// [`Error::is_refusal`] tells a refusal (exit code 1) from unusable input (exit code 2).
///
/// ```
/// use dtype_lattice::{Error, Rules, DType};
/// let err = Rules::jax().strict(true).promote_types(DType::Float32, DType::Int32).unwrap_err();
/// assert_eq!(err.kind(), "TypePromotionError");
/// assert!(err.is_refusal());
/// assert_eq!(err.exit_code(), 1);
/// let err = "int9".parse::<DType>().unwrap_err();
/// assert_eq!(err.kind(), "UnknownDtype");
/// assert_eq!(err.exit_code(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(transparent)]
pub struct Error(Box<Reason>);

/// Everything that can go wrong, from parsing an operand to a promotion the rules refuse.
///
/// ```
/// use dtype_lattice::{DType, error::Reason};
/// let err = "int9".parse::<DType>().unwrap_err();
/// assert!(matches!(err.reason(), Reason::UnknownDtype { name, .. } if name == "int9"));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Reason {
    /// The rule set refuses the promotion; `kind` is the exception class the real library
    /// raises (`TypePromotionError`, `TypeError`, `ValueError`) and `message` its wording.
    #[error("{kind}: {message}")]
    Refused {
        /// The exception class name.
        kind: &'static str,
        /// The library's message.
        message: String,
    },
    /// A dtype name that is not in the model.
    #[error("unknown dtype {name:?}{}", did_you_mean(suggestions))]
    UnknownDtype {
        /// What was given.
        name: String,
        /// The closest valid names, best first.
        suggestions: Vec<&'static str>,
    },
    /// An operand that does not follow the operand grammar.
    #[error("malformed operand {operand:?}: {reason}")]
    MalformedOperand {
        /// What was given.
        operand: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `DTYPE(VALUE)` with an integer VALUE outside the dtype's range.
    #[error("value {value} is out of range for {dtype} (it holds {min} to {max})")]
    ValueOutOfRange {
        /// The value as written.
        value: String,
        /// The dtype.
        dtype: DType,
        /// The dtype's smallest value.
        min: i128,
        /// The dtype's largest value.
        max: i128,
    },
    /// No operands at all.
    #[error("at least one operand is required")]
    EmptyOperands,
    /// A rule set name that does not exist.
    #[error("unknown rule set {name:?}; valid rule sets: {}", valid.join(", "))]
    UnknownRules {
        /// What was given.
        name: String,
        /// The valid names.
        valid: Vec<&'static str>,
    },
    /// A lattice or table definition that cannot be used: unreadable, not JSON or TOML,
    /// not of the documented form, or too large.
    #[error("invalid definition: {reason}")]
    InvalidDefinition {
        /// What is wrong with it.
        reason: String,
    },
    /// A lattice definition with a cycle; `cycle` lists its nodes in order.
    #[error("the lattice has a cycle: {}", cycle.join(" -> "))]
    Cycle {
        /// The nodes of one cycle, the first repeated at the end.
        cycle: Vec<String>,
    },
    /// An operand the rule set cannot represent (bfloat16 under `numpy`, a weak array under
    /// `torch`): a refusal, shown as `-` in tables.
    #[error("rules {rules} cannot represent the operand {operand}: {why}")]
    Unsupported {
        /// The rule set's name.
        rules: &'static str,
        /// The operand as written.
        operand: String,
        /// Why.
        why: String,
    },
    /// An operation name that does not exist.
    #[error("unknown op {name:?}; valid ops: {}", valid.join(", "))]
    UnknownOp {
        /// What was given.
        name: String,
        /// The valid names.
        valid: Vec<&'static str>,
    },
    /// An argument of a `random` function that cannot be used (a bit width other than 8, 16,
    /// 32 or 64, a shape too large for memory, malformed key data).
    #[error("invalid {argument}: {reason}")]
    InvalidArgument {
        /// The argument's name.
        argument: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A lattice definition larger than the engine accepts.
    #[error("the lattice has {nodes} nodes; at most {limit} are supported")]
    LatticeTooLarge {
        /// Number of nodes given.
        nodes: usize,
        /// The limit.
        limit: usize,
    },
}

fn did_you_mean(suggestions: &[&str]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", suggestions.join(", "))
    }
}

impl From<Reason> for Error {
    fn from(reason: Reason) -> Self {
        Error(Box::new(reason))
    }
}

impl Error {
    /// A refusal with the given exception kind and message.
    pub fn refused(kind: &'static str, message: impl Into<String>) -> Self {
        Reason::Refused {
            kind,
            message: message.into(),
        }
        .into()
    }

    /// What went wrong, to match on.
    pub fn reason(&self) -> &Reason {
        &self.0
    }

    /// The error's name in JSON output: the exception class for refusals, otherwise the
    /// variant's name.
    pub fn kind(&self) -> &'static str {
        match self.reason() {
            Reason::Refused { kind, .. } => kind,
            Reason::UnknownDtype { .. } => "UnknownDtype",
            Reason::MalformedOperand { .. } => "MalformedOperand",
            Reason::ValueOutOfRange { .. } => "ValueOutOfRange",
            Reason::EmptyOperands => "EmptyOperands",
            Reason::UnknownRules { .. } => "UnknownRules",
            Reason::InvalidDefinition { .. } => "InvalidDefinition",
            Reason::Cycle { .. } => "Cycle",
            Reason::LatticeTooLarge { .. } => "LatticeTooLarge",
            Reason::Unsupported { .. } => "UnsupportedOperand",
            Reason::UnknownOp { .. } => "UnknownOp",
            Reason::InvalidArgument { .. } => "InvalidArgument",
        }
    }

    /// The human-readable message without the kind prefix.
    pub fn message(&self) -> String {
        match self.reason() {
            Reason::Refused { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }

    /// Whether this is the rule set's answer "no" rather than unusable input.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self.reason(),
            Reason::Refused { .. } | Reason::Unsupported { .. }
        )
    }

    /// The CLI exit code: 1 for a refusal, 2 for unusable input.
    pub fn exit_code(&self) -> i32 {
        if self.is_refusal() { 1 } else { 2 }
    }

    /// The JSON form used by the CLI: `{"kind": ..., "message": ...}`.
    ///
    /// ```
    /// let e = dtype_lattice::Error::from(dtype_lattice::error::Reason::EmptyOperands);
    /// assert_eq!(e.to_json().kind, "EmptyOperands");
    /// ```
    pub fn to_json(&self) -> ErrorJson {
        ErrorJson {
            kind: self.kind(),
            message: self.message(),
        }
    }
}

/// The serialisable form of an [`Error`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorJson {
    /// [`Error::kind`].
    pub kind: &'static str,
    /// [`Error::message`].
    pub message: String,
}
