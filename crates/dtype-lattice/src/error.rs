//! The one error type of the library, with the distinction the CLI's exit codes rest on:
//! a *refusal* (the rule set answers "no": exit 1) versus *unusable input* (exit 2).

use serde::Serialize;

use crate::dtype::DType;

/// An error: a boxed [`Reason`], so that `Result<DType, Error>` stays two words and the
/// promotion hot path does not pay for the error's size.
///
/// [`Error::kind`] says what went wrong as a typed [`ErrorKind`]; for a refusal that the
/// real library raises as a Python exception, [`Error::exception`] names its class
/// ([`Exception`]); [`Error::is_refusal`] tells the rules' "no" from unusable input.
///
/// ```
/// use dtype_lattice::error::{ErrorKind, Exception};
/// use dtype_lattice::{DType, Rules};
/// let err = Rules::jax().strict(true).promote_types(DType::Float32, DType::Int32).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Refused);
/// assert_eq!(err.exception(), Some(Exception::TypePromotionError));
/// assert!(err.is_refusal());
/// let err = "int9".parse::<DType>().unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::UnknownDtype);
/// assert_eq!(err.exception(), None);
/// assert!(!err.is_refusal());
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(transparent)]
pub struct Error(Box<Reason>);

macro_rules! exceptions {
    ($( $(#[$doc:meta])* $variant:ident, )*) => {
        /// The class of the Python exception a real library raises for a refusal (JAX's
        /// `TypePromotionError`, TensorFlow's `InvalidArgumentError`, Python's `TypeError`, …).
        ///
        /// ```
        /// use dtype_lattice::error::Exception;
        /// assert_eq!(Exception::TypeError.name(), "TypeError");
        /// assert_eq!("OverflowError".parse::<Exception>().unwrap(), Exception::OverflowError);
        /// assert!("Oops".parse::<Exception>().is_err());
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
        #[non_exhaustive]
        pub enum Exception {
            $( $(#[$doc])* $variant, )*
        }

        impl Exception {
            /// Every exception class the models raise.
            pub const ALL: &'static [Exception] = &[ $( Exception::$variant, )* ];

            /// The class name, as Python prints it.
            pub fn name(self) -> &'static str {
                match self {
                    $( Exception::$variant => stringify!($variant), )*
                }
            }
        }
    };
}

exceptions! {
    /// JAX's `jax.errors.JaxTypePromotionError`, printed `TypePromotionError`.
    TypePromotionError,
    /// Python's `TypeError`.
    TypeError,
    /// NumPy's `numpy.exceptions.DTypePromotionError` (a `TypeError`): DTypes without a
    /// common DType (ml_dtypes' types with most of NumPy's own).
    DTypePromotionError,
    /// NumPy's `UFuncTypeError` (a `TypeError`; its private subclasses print this name): a
    /// ufunc has no loop for the dtypes its type resolver chose (`np.positive` of bool).
    UFuncTypeError,
    /// Python's `ValueError`.
    ValueError,
    /// Python's `OverflowError`.
    OverflowError,
    /// Python's `NotImplementedError`.
    NotImplementedError,
    /// Python's `KeyError`.
    KeyError,
    /// Python's `IndexError` (JAX's indexing of a 0-dimensional array).
    IndexError,
    /// NumPy's `numpy.exceptions.AxisError` (a `ValueError` and an `IndexError`): an axis out
    /// of range (JAX raises a plain `ValueError`).
    AxisError,
    /// Python's `RuntimeError` (PyTorch's c10 errors).
    RuntimeError,
    /// Python's `AttributeError`.
    AttributeError,
    /// Python's `AssertionError` (JAX's implementation asserting what it was given: a PRNG
    /// implementation's key of the wrong shape).
    AssertionError,
    /// Python's `SystemError`.
    SystemError,
    /// TensorFlow's `InvalidArgumentError`.
    InvalidArgumentError,
    /// TensorFlow's `NotFoundError`.
    NotFoundError,
    /// JAX's `jax.errors.ConcretizationTypeError`: a concrete value asked of a traced one.
    ConcretizationTypeError,
    /// JAX's `jax.errors.UnexpectedTracerError`: a tracer used after its transformation ended.
    UnexpectedTracerError,
    /// JAX's `jax.errors.NonConcreteBooleanIndexError` (an `IndexError`): a boolean mask
    /// index that is traced (under `jit` or `make_jaxpr`), whose result shape is unknown.
    NonConcreteBooleanIndexError,
    /// JAX's `jax.errors.JaxRuntimeError`: XLA failed to compile or run a computation (its CPU
    /// backend has no `dot` or multi-operand `reduce` on int2/uint2).
    JaxRuntimeError,
}

impl std::fmt::Display for Exception {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Exception {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Exception::ALL
            .iter()
            .copied()
            .find(|e| e.name() == s)
            .ok_or_else(|| {
                Reason::InvalidArgument {
                    argument: "exception".into(),
                    reason: format!("unknown exception class {s:?}"),
                }
                .into()
            })
    }
}

/// Everything that can go wrong, from parsing an operand to a promotion the rules refuse.
///
/// ```
/// use dtype_lattice::{DType, error::Reason};
/// let err = "int9".parse::<DType>().unwrap_err();
/// assert!(matches!(err.reason(), Reason::UnknownDtype { name, .. } if name == "int9"));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Reason {
    /// The rule set refuses the promotion as the real library does: `exception` is the class
    /// it raises and `message` its wording.
    #[error("{exception}: {message}")]
    Refused {
        /// The exception class.
        exception: Exception,
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
    /// Two nodes of a lattice have no join (no common upper bound, or no least one).
    #[error("{message}")]
    NoJoin {
        /// Which nodes, and why.
        message: String,
    },
    /// A table or rule set that a lattice operation needs to be a lattice is not one.
    #[error("{message}")]
    NotALattice {
        /// What is not a lattice.
        message: String,
    },
}

/// What kind of error an [`Error`] is: one per [`Reason`] variant, without its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub enum ErrorKind {
    /// [`Reason::Refused`]: see [`Error::exception`].
    Refused,
    /// [`Reason::UnknownDtype`].
    UnknownDtype,
    /// [`Reason::MalformedOperand`].
    MalformedOperand,
    /// [`Reason::ValueOutOfRange`].
    ValueOutOfRange,
    /// [`Reason::EmptyOperands`].
    EmptyOperands,
    /// [`Reason::UnknownRules`].
    UnknownRules,
    /// [`Reason::InvalidDefinition`].
    InvalidDefinition,
    /// [`Reason::Cycle`].
    Cycle,
    /// [`Reason::Unsupported`].
    UnsupportedOperand,
    /// [`Reason::UnknownOp`].
    UnknownOp,
    /// [`Reason::InvalidArgument`].
    InvalidArgument,
    /// [`Reason::LatticeTooLarge`].
    LatticeTooLarge,
    /// [`Reason::NoJoin`].
    NoJoin,
    /// [`Reason::NotALattice`].
    NotALattice,
}

impl ErrorKind {
    /// The kind's name (`UnknownDtype`, `UnsupportedOperand`).
    ///
    /// ```
    /// assert_eq!(dtype_lattice::error::ErrorKind::UnknownOp.name(), "UnknownOp");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Refused => "Refused",
            ErrorKind::UnknownDtype => "UnknownDtype",
            ErrorKind::MalformedOperand => "MalformedOperand",
            ErrorKind::ValueOutOfRange => "ValueOutOfRange",
            ErrorKind::EmptyOperands => "EmptyOperands",
            ErrorKind::UnknownRules => "UnknownRules",
            ErrorKind::InvalidDefinition => "InvalidDefinition",
            ErrorKind::Cycle => "Cycle",
            ErrorKind::UnsupportedOperand => "UnsupportedOperand",
            ErrorKind::UnknownOp => "UnknownOp",
            ErrorKind::InvalidArgument => "InvalidArgument",
            ErrorKind::LatticeTooLarge => "LatticeTooLarge",
            ErrorKind::NoJoin => "NoJoin",
            ErrorKind::NotALattice => "NotALattice",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
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
    /// A refusal as the real library raises it: its exception class and message.
    pub fn refused(exception: Exception, message: impl Into<String>) -> Self {
        Reason::Refused {
            exception,
            message: message.into(),
        }
        .into()
    }

    /// What went wrong, to match on.
    pub fn reason(&self) -> &Reason {
        &self.0
    }

    /// What kind of error this is.
    ///
    /// ```
    /// use dtype_lattice::{error::ErrorKind, Rules};
    /// assert_eq!(Rules::jax().result_type(&[]).unwrap_err().kind(), ErrorKind::EmptyOperands);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self.reason() {
            Reason::Refused { .. } => ErrorKind::Refused,
            Reason::UnknownDtype { .. } => ErrorKind::UnknownDtype,
            Reason::MalformedOperand { .. } => ErrorKind::MalformedOperand,
            Reason::ValueOutOfRange { .. } => ErrorKind::ValueOutOfRange,
            Reason::EmptyOperands => ErrorKind::EmptyOperands,
            Reason::UnknownRules { .. } => ErrorKind::UnknownRules,
            Reason::InvalidDefinition { .. } => ErrorKind::InvalidDefinition,
            Reason::Cycle { .. } => ErrorKind::Cycle,
            Reason::LatticeTooLarge { .. } => ErrorKind::LatticeTooLarge,
            Reason::Unsupported { .. } => ErrorKind::UnsupportedOperand,
            Reason::UnknownOp { .. } => ErrorKind::UnknownOp,
            Reason::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            Reason::NoJoin { .. } => ErrorKind::NoJoin,
            Reason::NotALattice { .. } => ErrorKind::NotALattice,
        }
    }

    /// The class of the exception the real library raises, for a refusal that is one.
    pub fn exception(&self) -> Option<Exception> {
        match self.reason() {
            Reason::Refused { exception, .. } => Some(*exception),
            _ => None,
        }
    }

    /// The human-readable message without the exception class.
    pub fn message(&self) -> String {
        match self.reason() {
            Reason::Refused { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }

    /// Whether this is the rules' answer "no" (the library refuses; no join; not a lattice)
    /// rather than unusable input.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self.reason(),
            Reason::Refused { .. }
                | Reason::Unsupported { .. }
                | Reason::NoJoin { .. }
                | Reason::NotALattice { .. }
        )
    }
}
