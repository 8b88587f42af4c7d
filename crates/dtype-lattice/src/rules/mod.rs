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
mod extended;
pub use extended::float0_operation;
pub(crate) mod jax;
mod jax_lax;
mod megengine;
pub(crate) mod numpy;
mod numpy_legacy;
mod tensorflow;
mod torch;
pub mod ufunc;

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::dtype::{DType, Kind};
use crate::error::{Error, Reason};
use crate::lattice::Lattice;
use crate::operand::{Node, Operand, PyType};
use crate::ops::Op;
pub use crate::ops::Promotion;

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

/// Which options a rule set honours; the others mean nothing to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OptionName {
    /// [`Options::strict`].
    Strict,
    /// [`Options::x64`].
    X64,
    /// [`Options::default_float`].
    DefaultFloat,
}

impl OptionName {
    /// The option's name on the command line (`strict`, `x64`, `default-float`).
    pub fn name(self) -> &'static str {
        match self {
            OptionName::Strict => "strict",
            OptionName::X64 => "x64",
            OptionName::DefaultFloat => "default-float",
        }
    }
}

/// How a rule set meets extended (PRNG key) dtypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Extended {
    /// As JAX does: a key promotes only with itself, with JAX's errors otherwise.
    Jax,
    /// The library has no such dtypes: an operand it cannot represent.
    Refuse,
}

/// One row of the registry: a rule set's names and its entry points. A rule set is a file
/// under `rules/` that defines one of these, plus its line in [`REGISTRY`].
pub(crate) struct RuleSetDef {
    /// The canonical name first, then aliases.
    pub(crate) names: &'static [&'static str],
    /// One line saying what the rule set follows.
    pub(crate) summary: &'static str,
    /// The options it honours.
    pub(crate) options: &'static [OptionName],
    /// How it meets key dtypes.
    pub(crate) extended: Extended,
    pub(crate) promote_types: fn(Options, Node, Node) -> Result<DType, Error>,
    pub(crate) result_type: fn(Options, &[Operand]) -> Result<Promotion, Error>,
    /// What an operation promotes its operands to before computing (JAX's
    /// `lattice_result_type`, which keeps a weak result's joined dtype); most libraries:
    /// `result_type`.
    pub(crate) promoted: fn(Options, &[Operand]) -> Result<Promotion, Error>,
    pub(crate) op_result: fn(Options, Op, &[Operand]) -> Result<Promotion, Error>,
    pub(crate) lattice: fn(Options) -> Option<&'static Lattice<Node>>,
    /// The promotion lattice with its nodes named, for a rule set defined by a lattice whose
    /// nodes are not all [`Node`]s (TensorFlow's weak int64 and float64).
    pub(crate) named_lattice: fn(Options) -> Option<&'static Lattice<String>>,
    /// The `promote_types` table for some options, when the rule set has one: an entry other
    /// than `NO_JOIN` is the answer (a `DType::index`); `NO_JOIN` defers to `promote_types`.
    /// [`Rules`] resolves it once, so the hot path is one lookup.
    pub(crate) promote_table: Option<fn(Options) -> &'static PromoteTable>,
    /// Whether the library has this (numeric) dtype.
    pub(crate) knows: fn(DType) -> bool,
}

/// A rule set's entry points: `promote_types`, `result_type`, `op_result`, `lattice`, `knows`.
pub(crate) type EntryPoints = (
    fn(Options, Node, Node) -> Result<DType, Error>,
    fn(Options, &[Operand]) -> Result<Promotion, Error>,
    fn(Options, Op, &[Operand]) -> Result<Promotion, Error>,
    fn(Options) -> Option<&'static Lattice<Node>>,
    fn(DType) -> bool,
);

impl RuleSetDef {
    /// A row with the common defaults: no options honoured, no key dtypes, operands promoted
    /// as `result_type` says, no named lattice, no compiled `promote_types` table. Rows that
    /// differ override fields with struct update syntax.
    pub(crate) const fn new(
        names: &'static [&'static str],
        summary: &'static str,
        (promote_types, result_type, op_result, lattice, knows): EntryPoints,
    ) -> RuleSetDef {
        RuleSetDef {
            names,
            summary,
            options: &[],
            extended: Extended::Refuse,
            promote_types,
            result_type,
            promoted: result_type,
            op_result,
            lattice,
            named_lattice: |_| None,
            knows,
            promote_table: None,
        }
    }
}

/// Every rule set, one row each, in the order `--help` and `--compare` list them.
static REGISTRY: [&RuleSetDef; 10] = [
    &jax::DEF,
    &jax_lax::DEF,
    &numpy::DEF,
    &numpy_legacy::DEF,
    &torch::DEF,
    &tensorflow::DEF,
    &tensorflow::DEF_SAFE,
    &tensorflow::DEF_LEGACY,
    &array_api::DEF,
    &megengine::DEF,
];

/// A rule set: which library's promotion semantics to follow. A handle on one row of the
/// registry; the built-in ones are also constants (`RuleSet::JAX`).
///
/// ```
/// use dtype_lattice::RuleSet;
/// assert_eq!("jax-numpy".parse::<RuleSet>().unwrap(), RuleSet::JAX);
/// assert_eq!(RuleSet::JAX_LAX.to_string(), "jax-lax");
/// assert!("numpyy".parse::<RuleSet>().is_err());
/// assert_eq!(RuleSet::all().count(), 10);
/// ```
#[derive(Clone, Copy)]
pub struct RuleSet(&'static RuleSetDef);

impl PartialEq for RuleSet {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for RuleSet {}

impl std::hash::Hash for RuleSet {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RuleSet({})", self.name())
    }
}

impl Serialize for RuleSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl RuleSet {
    /// `jax.numpy` (JAX 0.10): the promotion lattice with weak types.
    pub const JAX: RuleSet = RuleSet(&jax::DEF);
    /// `jax.lax`: no implicit promotion.
    pub const JAX_LAX: RuleSet = RuleSet(&jax_lax::DEF);
    /// NumPy ≥ 2 (NEP 50) with ml_dtypes' types; CuPy and Dask follow it.
    pub const NUMPY: RuleSet = RuleSet(&numpy::DEF);
    /// NumPy 1.x value-based casting.
    pub const NUMPY_LEGACY: RuleSet = RuleSet(&numpy_legacy::DEF);
    /// PyTorch 2.x.
    pub const TORCH: RuleSet = RuleSet(&torch::DEF);
    /// TensorFlow ≥ 2.15 auto dtype conversion, mode ALL.
    pub const TENSORFLOW: RuleSet = RuleSet(&tensorflow::DEF);
    /// TensorFlow auto dtype conversion, mode SAFE.
    pub const TENSORFLOW_SAFE: RuleSet = RuleSet(&tensorflow::DEF_SAFE);
    /// TensorFlow without NumPy behaviour: no implicit promotion, order-dependent.
    pub const TENSORFLOW_LEGACY: RuleSet = RuleSet(&tensorflow::DEF_LEGACY);
    /// The Python array API standard (2025.12, as array-api-strict implements it).
    pub const ARRAY_API: RuleSet = RuleSet(&array_api::DEF);
    /// MegEngine.
    pub const MEGENGINE: RuleSet = RuleSet(&megengine::DEF);

    /// Every rule set, in the registry's order.
    pub fn all() -> impl ExactSizeIterator<Item = RuleSet> + Clone {
        REGISTRY.iter().map(|d| RuleSet(d))
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        self.0.names[0]
    }

    /// The canonical name followed by the aliases.
    pub fn names(self) -> &'static [&'static str] {
        self.0.names
    }

    /// One line saying which library and version the rule set follows.
    pub fn summary(self) -> &'static str {
        self.0.summary
    }

    /// Its row in the registry.
    pub(crate) fn def(self) -> &'static RuleSetDef {
        self.0
    }

    /// The options this rule set honours (others mean nothing to it).
    ///
    /// ```
    /// use dtype_lattice::{OptionName, RuleSet};
    /// assert_eq!(RuleSet::JAX.options(), &[OptionName::Strict, OptionName::X64]);
    /// assert!(RuleSet::NUMPY.options().is_empty());
    /// ```
    pub fn options(self) -> &'static [OptionName] {
        self.0.options
    }
}

impl FromStr for RuleSet {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        RuleSet::all()
            .find(|r| r.names().contains(&s))
            .ok_or_else(|| {
                Reason::UnknownRules {
                    name: s.to_string(),
                    valid: RuleSet::all()
                        .flat_map(|r| r.names().iter().copied())
                        .collect(),
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
#[derive(Clone, Copy, Serialize)]
pub struct Rules {
    set: RuleSet,
    options: Options,
    /// The row's `promote_table` for `options`, resolved by [`Rules::new`] and the builders.
    #[serde(skip)]
    fast: Option<&'static PromoteTable>,
}

/// A rule set's `promote_types` answers by [`Node::index`] pair.
pub(crate) type PromoteTable = [[u8; Node::COUNT]; Node::COUNT];

impl PartialEq for Rules {
    fn eq(&self, other: &Self) -> bool {
        (self.set, self.options) == (other.set, other.options)
    }
}

impl Eq for Rules {}

impl std::hash::Hash for Rules {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.set, self.options).hash(state);
    }
}

impl fmt::Debug for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rules")
            .field("set", &self.set)
            .field("options", &self.options)
            .finish()
    }
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
            fast: None,
        }
        .resolved()
    }

    /// Resolves the fast `promote_types` table for the current options.
    fn resolved(mut self) -> Self {
        self.fast = self.set.0.promote_table.map(|t| t(self.options));
        self
    }

    /// `jax.numpy` promotion.
    pub fn jax() -> Self {
        Rules::new(RuleSet::JAX)
    }

    /// `jax.lax`: no implicit promotion.
    pub fn jax_lax() -> Self {
        Rules::new(RuleSet::JAX_LAX)
    }

    /// NumPy ≥ 2 promotion (NEP 50), with ml_dtypes imported: its types (bfloat16, the
    /// float8/float6/float4 formats, the sub-byte integers, complex32/bcomplex32) promote as
    /// NumPy's legacy user DTypes, and ops run the ufunc loop NumPy picks ([`ufunc`]).
    ///
    /// ```
    /// use dtype_lattice::{DType, Op, Operand, PyType, Rules};
    /// let np = Rules::numpy();
    /// assert_eq!(np.promote_types(DType::Int8, DType::BFloat16).unwrap(), DType::BFloat16);
    /// assert!(np.promote_types(DType::Int16, DType::BFloat16).is_err());
    /// let ops = [Operand::array(DType::UInt2), PyType::Int.into()];
    /// assert_eq!(np.op_result(Op::Add, &ops).unwrap().dtype, DType::Int8);
    /// ```
    pub fn numpy() -> Self {
        Rules::new(RuleSet::NUMPY)
    }

    /// The library's default float, where it can be changed (`torch.set_default_dtype`).
    #[must_use]
    pub fn default_float(mut self, dtype: DType) -> Self {
        self.options.default_float = Some(dtype);
        self.resolved()
    }

    /// Strict promotion (`jax_numpy_dtype_promotion='strict'`); `jax.lax` ignores it.
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.options.strict = strict;
        self.resolved()
    }

    /// 64-bit mode (`jax_enable_x64`).
    #[must_use]
    pub fn x64(mut self, x64: bool) -> Self {
        self.options.x64 = x64;
        self.resolved()
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
    /// # Errors
    ///
    /// A refusal ([`Error::is_refusal`]) when the rule set has no promotion for the pair: the
    /// real library's exception class and message (JAX's `TypePromotionError` in strict mode or
    /// for float8 mixes, PyTorch's `RuntimeError`, …), or `UnsupportedOperand` for a dtype the
    /// library does not have.
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
        let (a, b) = (a.into(), b.into());
        if let Some(t) = self.fast {
            let r = t[a.index()][b.index()];
            if r != compiled::NO_JOIN {
                return Ok(DType::ALL[r as usize]);
            }
        }
        if a.is_outside_lattices() || b.is_outside_lattices() {
            return extended::promote_types(self, a, b);
        }
        (self.set.0.promote_types)(self.options, a, b)
    }

    /// `result_type(*operands)`: the dtype and weak flag of an operation on `operands`.
    ///
    /// # Errors
    ///
    /// `EmptyOperands` for no operands; otherwise a refusal as [`Rules::promote_types`]
    /// describes (including Python's `OverflowError` where a library checks a Python int
    /// against the result).
    ///
    /// ```
    /// use dtype_lattice::{DType, Operand, Rules, Value};
    /// let p = Rules::jax().result_type(&[Operand::array(DType::Int16), Value::Int(1).into()]).unwrap();
    /// assert_eq!((p.dtype, p.weak_type), (DType::Int16, false));
    /// assert_eq!(Rules::jax().result_type(&[]).unwrap_err().kind(), dtype_lattice::error::ErrorKind::EmptyOperands);
    /// ```
    #[inline]
    pub fn result_type(&self, operands: &[Operand]) -> Result<Promotion, Error> {
        if extended::any_extended(operands) {
            return extended::evaluate(self, None, operands);
        }
        (self.set.0.result_type)(self.options, operands)
    }

    /// The dtype and weak type an operation converts its operands to before computing: JAX's
    /// `dtypes.lattice_result_type` (a weak result keeps its joined dtype, where
    /// [`Rules::result_type`] reports the default dtype of its kind); `result_type` for the
    /// libraries without weak types.
    ///
    /// # Errors
    ///
    /// As [`Rules::result_type`].
    ///
    /// ```
    /// use dtype_lattice::{DType, Operand, Rules};
    /// let ops = [Operand::weak_array(DType::Float32); 2];
    /// let p = Rules::jax().x64(true).promoted(&ops).unwrap();
    /// assert_eq!((p.dtype, p.weak_type), (DType::Float32, true));
    /// let r = Rules::jax().x64(true).result_type(&ops).unwrap();
    /// assert_eq!((r.dtype, r.weak_type), (DType::Float64, true));
    /// ```
    pub fn promoted(&self, operands: &[Operand]) -> Result<Promotion, Error> {
        if extended::any_extended(operands) {
            return extended::evaluate(self, None, operands);
        }
        (self.set.0.promoted)(self.options, operands)
    }

    /// `op_result` for `Some(op)`, `result_type` for `None`.
    ///
    /// # Errors
    ///
    /// As [`Rules::result_type`] and [`Rules::op_result`].
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
    /// # Errors
    ///
    /// As [`Rules::result_type`], and the op's own refusals in this library (JAX's `TypeError`
    /// for `bitwise_and` of floats, NumPy's `TypeError` for `subtract` of bools, …).
    ///
    /// ```
    /// use dtype_lattice::{DType, Op, Operand, Rules};
    /// let ops = [Operand::array(DType::Int8), Operand::array(DType::Int8)];
    /// assert_eq!(Rules::numpy().op_result(Op::TrueDivide, &ops).unwrap().dtype, DType::Float64);
    /// assert_eq!(Rules::jax().op_result(Op::TrueDivide, &ops).unwrap().dtype, DType::Float32);
    /// assert_eq!(Rules::numpy().op_result(Op::Less, &ops).unwrap().dtype, DType::Bool);
    /// ```
    pub fn op_result(&self, op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
        if extended::any_extended(operands) {
            return extended::evaluate(self, Some(op), operands);
        }
        (self.set.0.op_result)(self.options, op, operands)
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
        (self.set.0.lattice)(self.options)
    }

    /// The promotion lattice of a rule set defined by one whose nodes are not all [`Node`]s,
    /// with its nodes named: TensorFlow's (mode ALL), whose weak nodes (`~int32`, a Python int;
    /// `~int64`, a weak tensor; `~float32`, `~float64`, `~complex128`) `Node` cannot express.
    /// `None` for every other rule set: [`Rules::lattice`] gives theirs.
    ///
    /// ```
    /// use dtype_lattice::{RuleSet, Rules, lattice::Lub};
    /// let l = Rules::new(RuleSet::TENSORFLOW).named_lattice().unwrap();
    /// assert!(l.is_lattice());
    /// assert_eq!(l.len(), 20);
    /// let join = l.join(&"uint64".to_string(), &"int64".to_string());
    /// assert_eq!(join, Some(Lub::Node(l.index_of(&"~float64".to_string()).unwrap())));
    /// assert!(Rules::new(RuleSet::TENSORFLOW_SAFE).named_lattice().is_none());
    /// assert!(Rules::jax().named_lattice().is_none());
    /// ```
    pub fn named_lattice(&self) -> Option<&'static Lattice<String>> {
        (self.set.0.named_lattice)(self.options)
    }

    /// The numeric dtypes this rule set knows (key dtypes are not promoted with them).
    pub fn dtypes(&self) -> Vec<DType> {
        let knows = self.set.0.knows;
        DType::NUMERIC
            .iter()
            .copied()
            .filter(|&d| knows(d))
            .collect()
    }

    /// The options that matter for this rule set, for labels: `standard, x64 off`.
    ///
    /// ```
    /// use dtype_lattice::Rules;
    /// assert_eq!(Rules::jax().x64(true).options_label(), "standard, x64 on");
    /// assert_eq!(Rules::jax_lax().options_label(), "x64 off");
    /// let torch = Rules::new(dtype_lattice::RuleSet::TORCH);
    /// assert_eq!(torch.default_float(dtype_lattice::DType::Float64).options_label(), "default float float64");
    /// ```
    pub fn options_label(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for &o in self.set.options() {
            match o {
                OptionName::Strict if self.options.strict => parts.push("strict".into()),
                OptionName::Strict => parts.push("standard".into()),
                OptionName::X64 if self.options.x64 => parts.push("x64 on".into()),
                OptionName::X64 => parts.push("x64 off".into()),
                OptionName::DefaultFloat => {
                    if let Some(d) = self.options.default_float {
                        parts.push(format!("default float {d}"));
                    }
                }
            }
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

#[cfg(test)]
mod registry_tests {
    use super::*;

    /// The fast table answers exactly what the row's `promote_types` answers, for every pair
    /// of nodes in every mode, wherever it answers at all; and at least for every pair the
    /// row promotes without error (so the fast path is taken where it can be).
    #[test]
    fn promote_tables_agree_with_promote_types() {
        let nodes: Vec<Node> = (0..Node::COUNT).map(Node::from_index).collect();
        for set in RuleSet::all() {
            let Some(table) = set.def().promote_table else {
                continue;
            };
            for (strict, x64) in [(false, false), (false, true), (true, false), (true, true)] {
                let o = Options {
                    strict,
                    x64,
                    default_float: None,
                };
                let t = table(o);
                let mut fast = 0;
                for &a in &nodes {
                    for &b in &nodes {
                        let slow = (set.def().promote_types)(o, a, b);
                        let r = t[a.index()][b.index()];
                        if r != compiled::NO_JOIN {
                            assert_eq!(slow, Ok(DType::ALL[r as usize]), "{set} {o:?} {a} {b}");
                            fast += 1;
                        } else if !a.is_extended() && !b.is_extended() {
                            assert!(
                                slow.is_err(),
                                "{set} {o:?} {a} {b}: the table defers an answer"
                            );
                        }
                    }
                }
                assert!(fast > 0);
            }
        }
    }
}
