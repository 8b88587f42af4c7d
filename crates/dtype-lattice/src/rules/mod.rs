//! Rule sets: each is one readable definition (a lattice as "node → nodes directly above",
//! or a table) in its own file, answered by the generic engine in [`crate::lattice`].
//!
//! A [`Rules`] value selects a rule set and its options, builder-style:
//!
//! ```
//! use dtype_lattice::{DType, Operand, PyType, Rules};
//! let rules = Rules::jax().x64(true);
//! assert_eq!(rules.promote_types(DType::UInt32, DType::Int32).unwrap(), DType::Int64);
//! let p = rules.result_type(&[Operand::array(DType::Int8), PyType::Float.into()]).unwrap();
//! assert_eq!((p.dtype, p.weak_type), (DType::Float64, true));
//! ```

mod array_api;
mod compiled;
pub mod jax;
mod jax_lax;
mod megengine;
pub(crate) mod numpy;
mod numpy_legacy;
mod tensorflow;
mod torch;

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::dtype::{DType, Kind};
use crate::error::{Error, Reason};
use crate::lattice::Lattice;
use crate::operand::{Node, Operand, PyType};
use crate::ops::Op;

/// The refusal for an operand a rule set cannot represent.
pub(crate) fn unsupported(rules: &'static str, operand: &Operand, why: String) -> Error {
    Reason::Unsupported {
        rules,
        operand: operand.to_string(),
        why,
    }
    .into()
}

/// The refusal of a weakly typed array by a library that has none (`noun`: `arrays`,
/// `tensors`).
pub(crate) fn no_weak(rules: &'static str, operand: &Operand, noun: &str) -> Error {
    unsupported(rules, operand, format!("it has no weakly typed {noun}"))
}

/// How a weak Python scalar meets the strong result, by the scalar's type and the result's
/// kind: rule sets state these as tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WeakRule {
    /// The strong result stands.
    Keep,
    /// The library's default dtype for the Python type.
    Default,
    /// The complex dtype with the strong (float) result's precision.
    ToComplex,
}

/// A library's default dtypes for Python scalars and its float → complex map.
pub(crate) struct Defaults {
    pub(crate) int: DType,
    pub(crate) float: DType,
    pub(crate) complex: DType,
    pub(crate) to_complex: fn(DType) -> DType,
}

impl Defaults {
    pub(crate) fn of(&self, t: PyType) -> DType {
        match t {
            PyType::Int => self.int,
            PyType::Float => self.float,
            PyType::Complex => self.complex,
        }
    }
}

impl WeakRule {
    /// Looks up `(t, kind of strong)` in `table` and applies the rule; `None` when the
    /// table has no entry (the library refuses the combination).
    pub(crate) fn apply(
        table: &[(PyType, Kind, WeakRule)],
        t: PyType,
        strong: DType,
        defaults: &Defaults,
    ) -> Option<DType> {
        let rule = table
            .iter()
            .find(|(p, k, _)| *p == t && *k == strong.kind())?
            .2;
        Some(match rule {
            WeakRule::Keep => strong,
            WeakRule::Default => defaults.of(t),
            WeakRule::ToComplex => (defaults.to_complex)(strong),
        })
    }
}

/// A rule set: which library's promotion semantics to follow.
///
/// ```
/// use dtype_lattice::RuleSet;
/// assert_eq!("jax-numpy".parse::<RuleSet>().unwrap(), RuleSet::Jax);
/// assert_eq!(RuleSet::JaxLax.to_string(), "jax-lax");
/// assert!("numpyy".parse::<RuleSet>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleSet {
    /// `jax.numpy` (JAX 0.10): the promotion lattice with weak types.
    Jax,
    /// `jax.lax`: no implicit promotion.
    JaxLax,
    /// NumPy ≥ 2 (NEP 50); CuPy and Dask follow it.
    Numpy,
    /// NumPy 1.x value-based casting.
    NumpyLegacy,
    /// PyTorch 2.x.
    Torch,
    /// TensorFlow ≥ 2.15 auto dtype conversion, mode ALL.
    Tensorflow,
    /// TensorFlow auto dtype conversion, mode SAFE.
    TensorflowSafe,
    /// TensorFlow without NumPy behaviour: no implicit promotion, order-dependent.
    TensorflowLegacy,
    /// The Python array API standard (2025.12, as array-api-strict implements it).
    ArrayApi,
    /// MegEngine.
    Megengine,
}

/// Each rule set's names: the canonical one first, then aliases.
const NAMES: &[(RuleSet, &[&str])] = &[
    (RuleSet::Jax, &["jax", "jax-numpy", "jnp"]),
    (RuleSet::JaxLax, &["jax-lax", "lax"]),
    (RuleSet::Numpy, &["numpy", "np", "cupy", "dask"]),
    (RuleSet::NumpyLegacy, &["numpy-legacy", "numpy1"]),
    (RuleSet::Torch, &["torch", "pytorch"]),
    (RuleSet::Tensorflow, &["tensorflow", "tf"]),
    (RuleSet::TensorflowSafe, &["tensorflow-safe", "tf-safe"]),
    (
        RuleSet::TensorflowLegacy,
        &["tensorflow-legacy", "tf-legacy"],
    ),
    (RuleSet::ArrayApi, &["array-api", "array-api-strict"]),
    (RuleSet::Megengine, &["megengine"]),
];

impl RuleSet {
    /// Every rule set.
    pub const ALL: &'static [RuleSet] = &[
        RuleSet::Jax,
        RuleSet::JaxLax,
        RuleSet::Numpy,
        RuleSet::NumpyLegacy,
        RuleSet::Torch,
        RuleSet::Tensorflow,
        RuleSet::TensorflowSafe,
        RuleSet::TensorflowLegacy,
        RuleSet::ArrayApi,
        RuleSet::Megengine,
    ];

    /// The canonical name.
    pub fn name(self) -> &'static str {
        self.names()[0]
    }

    /// The canonical name followed by the aliases.
    pub fn names(self) -> &'static [&'static str] {
        NAMES
            .iter()
            .find(|(r, _)| *r == self)
            .map(|(_, n)| *n)
            .expect("every rule set is named")
    }
}

impl FromStr for RuleSet {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        NAMES
            .iter()
            .find(|(_, names)| names.contains(&s))
            .map(|(r, _)| *r)
            .ok_or_else(|| {
                Reason::UnknownRules {
                    name: s.to_string(),
                    valid: NAMES.iter().flat_map(|(_, n)| n.iter().copied()).collect(),
                }
                .into()
            })
    }
}

impl fmt::Display for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The options of a rule set. Defaults follow JAX's: x64 off, standard promotion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Options {
    /// `jax_numpy_dtype_promotion='strict'`.
    pub strict: bool,
    /// `jax_enable_x64=True`.
    pub x64: bool,
    /// The library's default float where it can be changed (`torch.set_default_dtype`);
    /// `None`: the library's own default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_float: Option<DType>,
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

/// A rule set with its options: the entry point of the library.
///
/// ```
/// use dtype_lattice::{DType, Operand, Rules};
/// let ops: Vec<Operand> = ["int8", "uint8", "float16", "2.5"]
///     .iter().map(|s| s.parse().unwrap()).collect();
/// let p = Rules::jax().result_type(&ops).unwrap();
/// assert_eq!(p.dtype, DType::Float16);
/// assert!(Rules::jax_lax().result_type(&ops).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Rules {
    set: RuleSet,
    options: Options,
}

impl Default for Rules {
    fn default() -> Self {
        Rules::jax()
    }
}

impl Rules {
    /// A rule set with default options.
    pub fn new(set: RuleSet) -> Self {
        Rules {
            set,
            options: Options::default(),
        }
    }

    /// `jax.numpy` promotion.
    pub fn jax() -> Self {
        Rules::new(RuleSet::Jax)
    }

    /// `jax.lax`: no implicit promotion.
    pub fn jax_lax() -> Self {
        Rules::new(RuleSet::JaxLax)
    }

    /// NumPy ≥ 2 promotion (NEP 50).
    pub fn numpy() -> Self {
        Rules::new(RuleSet::Numpy)
    }

    /// The library's default float, where it can be changed (`torch.set_default_dtype`).
    pub fn default_float(mut self, dtype: DType) -> Self {
        self.options.default_float = Some(dtype);
        self
    }

    /// Strict promotion (`jax_numpy_dtype_promotion='strict'`); `jax.lax` ignores it.
    pub fn strict(mut self, strict: bool) -> Self {
        self.options.strict = strict;
        self
    }

    /// 64-bit mode (`jax_enable_x64`).
    pub fn x64(mut self, x64: bool) -> Self {
        self.options.x64 = x64;
        self
    }

    /// The rule set.
    pub fn rule_set(&self) -> RuleSet {
        self.set
    }

    /// The options.
    pub fn options(&self) -> Options {
        self.options
    }

    /// `promote_types(a, b)`: the promotion of two types (dtypes, or the weak Python types),
    /// as `jnp.promote_types` computes it: no canonicalisation of the inputs.
    ///
    /// ```
    /// use dtype_lattice::{DType, PyType, Rules};
    /// let r = Rules::jax();
    /// assert_eq!(r.promote_types(DType::BFloat16, DType::Float16).unwrap(), DType::Float32);
    /// assert_eq!(r.promote_types(DType::UInt8, PyType::Int).unwrap(), DType::UInt8);
    /// assert!(r.promote_types(DType::Float8E5M2, DType::Float16).is_err());
    /// ```
    #[inline(always)]
    pub fn promote_types(&self, a: impl Into<Node>, b: impl Into<Node>) -> Result<DType, Error> {
        let (o, a, b) = (self.options, a.into(), b.into());
        match self.set {
            RuleSet::Jax => jax::promote_types(o, a, b),
            RuleSet::JaxLax => jax_lax::promote_types(o, a, b),
            RuleSet::Numpy => numpy::promote_types(a, b),
            RuleSet::NumpyLegacy => numpy_legacy::promote_types(o, a, b),
            RuleSet::Torch => torch::promote_types(o, a, b),
            RuleSet::Tensorflow => tensorflow::promote_types(tensorflow::Mode::All, o, a, b),
            RuleSet::TensorflowSafe => tensorflow::promote_types(tensorflow::Mode::Safe, o, a, b),
            RuleSet::TensorflowLegacy => {
                tensorflow::promote_types(tensorflow::Mode::Legacy, o, a, b)
            }
            RuleSet::ArrayApi => array_api::promote_types(o, a, b),
            RuleSet::Megengine => megengine::promote_types(o, a, b),
        }
    }

    /// `result_type(*operands)`: the dtype and weak flag of an operation on `operands`.
    ///
    /// ```
    /// use dtype_lattice::{DType, Operand, Rules, Value};
    /// let p = Rules::jax().result_type(&[Operand::array(DType::Int16), Value::Int(1).into()]).unwrap();
    /// assert_eq!((p.dtype, p.weak_type), (DType::Int16, false));
    /// assert_eq!(Rules::jax().result_type(&[]).unwrap_err().kind(), "EmptyOperands");
    /// ```
    #[inline]
    pub fn result_type(&self, operands: &[Operand]) -> Result<Promotion, Error> {
        let o = self.options;
        match self.set {
            RuleSet::Jax => jax::result_type(o, operands),
            RuleSet::JaxLax => jax_lax::result_type(o, operands),
            RuleSet::Numpy => numpy::result_type(operands),
            RuleSet::NumpyLegacy => numpy_legacy::result_type(o, operands),
            RuleSet::Torch => torch::result_type(o, operands),
            RuleSet::Tensorflow => tensorflow::result_type(tensorflow::Mode::All, o, operands),
            RuleSet::TensorflowSafe => tensorflow::result_type(tensorflow::Mode::Safe, o, operands),
            RuleSet::TensorflowLegacy => {
                tensorflow::result_type(tensorflow::Mode::Legacy, o, operands)
            }
            RuleSet::ArrayApi => array_api::result_type(o, operands),
            RuleSet::Megengine => megengine::result_type(o, operands),
        }
    }

    /// `op_result` for `Some(op)`, `result_type` for `None`.
    ///
    /// ```
    /// use dtype_lattice::{DType, Op, Operand, Rules};
    /// let ops = [Operand::array(DType::Bool), Operand::array(DType::Bool)];
    /// assert_eq!(Rules::numpy().evaluate(None, &ops).unwrap().dtype, DType::Bool);
    /// assert!(Rules::numpy().evaluate(Some(Op::Subtract), &ops).is_err());
    /// ```
    pub fn evaluate(&self, op: Option<Op>, operands: &[Operand]) -> Result<Promotion, Error> {
        match op {
            None => self.result_type(operands),
            Some(op) => self.op_result(op, operands),
        }
    }

    /// The result of an operation: the operands' promotion, then the op's own rule in this
    /// library (true division of integers gives a float, comparisons give bool, …).
    ///
    /// ```
    /// use dtype_lattice::{DType, Op, Operand, Rules};
    /// let ops = [Operand::array(DType::Int8), Operand::array(DType::Int8)];
    /// assert_eq!(Rules::numpy().op_result(Op::TrueDivide, &ops).unwrap().dtype, DType::Float64);
    /// assert_eq!(Rules::jax().op_result(Op::TrueDivide, &ops).unwrap().dtype, DType::Float32);
    /// assert_eq!(Rules::numpy().op_result(Op::Less, &ops).unwrap().dtype, DType::Bool);
    /// ```
    pub fn op_result(&self, op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
        let o = self.options;
        match self.set {
            RuleSet::Jax => jax::op_result(o, op, operands),
            RuleSet::JaxLax => jax_lax::op_result(o, op, operands),
            RuleSet::Numpy => numpy::op_result(op, operands),
            RuleSet::NumpyLegacy => numpy_legacy::op_result(o, op, operands),
            RuleSet::Torch => torch::op_result(o, op, operands),
            RuleSet::Tensorflow => tensorflow::op_result(tensorflow::Mode::All, o, op, operands),
            RuleSet::TensorflowSafe => {
                tensorflow::op_result(tensorflow::Mode::Safe, o, op, operands)
            }
            RuleSet::TensorflowLegacy => {
                tensorflow::op_result(tensorflow::Mode::Legacy, o, op, operands)
            }
            RuleSet::ArrayApi => array_api::op_result(o, op, operands),
            RuleSet::Megengine => megengine::op_result(o, op, operands),
        }
    }

    /// The promotion lattice of this rule set and mode, if it is defined by one.
    ///
    /// ```
    /// use dtype_lattice::{DType, Node, Rules};
    /// let l = Rules::jax().x64(true).lattice().unwrap();
    /// // 8/6/4-bit floats and 1/2/4-bit integers join with nothing else: a partial lattice.
    /// assert!(l.is_partial_lattice() && !l.is_lattice());
    /// assert_eq!(l.len(), 35);
    /// ```
    pub fn lattice(&self) -> Option<&'static Lattice<Node>> {
        let o = self.options;
        match self.set {
            RuleSet::Jax => Some(&jax::lattice(o).lattice),
            RuleSet::JaxLax => None,
            RuleSet::Numpy => Some(numpy::lattice()),
            RuleSet::NumpyLegacy => numpy_legacy::lattice(o),
            RuleSet::Torch => torch::lattice(o),
            RuleSet::Tensorflow => tensorflow::lattice(tensorflow::Mode::All, o),
            RuleSet::TensorflowSafe => tensorflow::lattice(tensorflow::Mode::Safe, o),
            RuleSet::TensorflowLegacy => tensorflow::lattice(tensorflow::Mode::Legacy, o),
            RuleSet::ArrayApi => array_api::lattice(o),
            RuleSet::Megengine => megengine::lattice(o),
        }
    }

    /// The dtypes this rule set knows.
    pub fn dtypes(&self) -> Vec<DType> {
        let knows: fn(DType) -> bool = match self.set {
            RuleSet::Jax | RuleSet::JaxLax => |d| jax::check_known(d).is_ok(),
            RuleSet::Numpy => numpy::knows,
            RuleSet::NumpyLegacy => numpy_legacy::knows,
            RuleSet::Torch => torch::knows,
            RuleSet::Tensorflow | RuleSet::TensorflowSafe | RuleSet::TensorflowLegacy => {
                tensorflow::knows
            }
            RuleSet::ArrayApi => array_api::knows,
            RuleSet::Megengine => megengine::knows,
        };
        DType::ALL.iter().copied().filter(|&d| knows(d)).collect()
    }

    /// The options that matter for this rule set, for labels: `standard, x64 off`.
    ///
    /// ```
    /// use dtype_lattice::Rules;
    /// assert_eq!(Rules::jax().x64(true).options_label(), "standard, x64 on");
    /// assert_eq!(Rules::jax_lax().options_label(), "x64 off");
    /// let torch = Rules::new(dtype_lattice::RuleSet::Torch);
    /// assert_eq!(torch.default_float(dtype_lattice::DType::Float64).options_label(), "default float float64");
    /// ```
    pub fn options_label(&self) -> String {
        let mut parts = Vec::new();
        if self.set == RuleSet::Jax {
            parts.push(if self.options.strict {
                "strict"
            } else {
                "standard"
            });
        }
        if matches!(self.set, RuleSet::Jax | RuleSet::JaxLax) {
            parts.push(if self.options.x64 {
                "x64 on"
            } else {
                "x64 off"
            });
        }
        let default_float = match self.options.default_float {
            Some(d) if self.set == RuleSet::Torch => format!("default float {d}"),
            _ => String::new(),
        };
        if !default_float.is_empty() {
            parts.push(&default_float);
        }
        parts.join(", ")
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.set)?;
        let options = self.options_label();
        if !options.is_empty() {
            write!(f, ", {options}")?;
        }
        Ok(())
    }
}
