//! Extended dtypes next to the numeric model: JAX's PRNG key dtypes (`key<fry>`, …, one per
//! row of [`crate::key::KEY_IMPLS`]) as dtypes, operands and promotion results, and
//! `issubdtype` over the whole hierarchy (NumPy's abstract kinds, `extended ⊃ prng_key ⊃
//! key<fry>`).
//!
//! Keys promote only with themselves, and everything else is refused with JAX's wording:
//!
//! ```
//! use dtype_lattice::extended::{AnyOperand, AnyPromotion};
//! use dtype_lattice::{Op, Rules};
//! let ops: Vec<AnyOperand> = vec!["key<fry>".parse().unwrap(), "int32".parse().unwrap()];
//! // jax.dtypes.result_type(key, int32 array)
//! let e = Rules::jax().evaluate_any(None, &ops).unwrap_err();
//! assert_eq!(e.message(), "dtype=key<fry> is not a valid dtype for JAX type promotion.");
//! // jnp.add(key, int32 array)
//! let e = Rules::jax().evaluate_any(Some(Op::Add), &ops).unwrap_err();
//! assert_eq!(e.message(), "add does not accept dtypes key<fry>, int32.");
//! // A key with itself: its own dtype.
//! let keys: Vec<AnyOperand> = vec!["key<fry>".parse().unwrap(); 2];
//! assert_eq!(Rules::jax().evaluate_any(None, &keys).unwrap().to_string(), "key<fry>");
//! ```
//!
//! The numeric rule sets never see an extended operand: [`Rules::evaluate_any`] answers for
//! keys itself (JAX's semantics under `jax`; a refusal naming the rule set elsewhere) and hands
//! everything else to [`Rules::evaluate`].

use std::fmt;
use std::str::FromStr;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::dtype::{DType, Kind};
use crate::error::Error;
use crate::key::KeyDType;
use crate::operand::{Operand, PyType, Value};
use crate::ops::Op;
use crate::rules::{Extended, Promotion, Rules};

/// A dtype of the model or an extended (key) dtype.
///
/// ```
/// use dtype_lattice::extended::AnyDType;
/// use dtype_lattice::DType;
/// assert_eq!("int8".parse::<AnyDType>().unwrap(), AnyDType::Numeric(DType::Int8));
/// assert_eq!("key<fry>".parse::<AnyDType>().unwrap().to_string(), "key<fry>");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyDType {
    /// A numeric (or bool) dtype.
    Numeric(DType),
    /// A PRNG key dtype.
    Key(KeyDType),
}

impl FromStr for AnyDType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        if s.starts_with("key<") {
            s.parse().map(AnyDType::Key)
        } else {
            s.parse().map(AnyDType::Numeric)
        }
    }
}

impl fmt::Display for AnyDType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyDType::Numeric(d) => d.fmt(f),
            AnyDType::Key(k) => k.fmt(f),
        }
    }
}

impl From<DType> for AnyDType {
    fn from(d: DType) -> Self {
        AnyDType::Numeric(d)
    }
}

impl From<KeyDType> for AnyDType {
    fn from(k: KeyDType) -> Self {
        AnyDType::Key(k)
    }
}

/// The abstract dtype classes of NumPy (`np.number`, `np.integer`, …) and JAX
/// (`jax.dtypes.extended`, `jax.dtypes.prng_key`), for [`issubdtype`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DTypeClass {
    /// `np.generic`: everything.
    Generic,
    /// `np.number`.
    Number,
    /// `np.integer`.
    Integer,
    /// `np.signedinteger`.
    SignedInteger,
    /// `np.unsignedinteger`.
    UnsignedInteger,
    /// `np.inexact`.
    Inexact,
    /// `np.floating`.
    Floating,
    /// `np.complexfloating`.
    ComplexFloating,
    /// `np.bool_`.
    Bool,
    /// `jax.dtypes.extended`.
    Extended,
    /// `jax.dtypes.prng_key`.
    PrngKey,
}

/// The class hierarchy as data: each class, its name, and the class directly above it.
const CLASSES: &[(DTypeClass, &str, Option<DTypeClass>)] = &[
    (DTypeClass::Generic, "generic", None),
    (DTypeClass::Number, "number", Some(DTypeClass::Generic)),
    (DTypeClass::Integer, "integer", Some(DTypeClass::Number)),
    (
        DTypeClass::SignedInteger,
        "signedinteger",
        Some(DTypeClass::Integer),
    ),
    (
        DTypeClass::UnsignedInteger,
        "unsignedinteger",
        Some(DTypeClass::Integer),
    ),
    (DTypeClass::Inexact, "inexact", Some(DTypeClass::Number)),
    (DTypeClass::Floating, "floating", Some(DTypeClass::Inexact)),
    (
        DTypeClass::ComplexFloating,
        "complexfloating",
        Some(DTypeClass::Inexact),
    ),
    (DTypeClass::Bool, "bool", Some(DTypeClass::Generic)),
    (DTypeClass::Extended, "extended", Some(DTypeClass::Generic)),
    (DTypeClass::PrngKey, "prng_key", Some(DTypeClass::Extended)),
];

impl DTypeClass {
    /// The class's name (`signedinteger`, `prng_key`).
    pub fn name(self) -> &'static str {
        CLASSES
            .iter()
            .find(|(c, _, _)| *c == self)
            .map_or("generic", |(_, n, _)| n)
    }

    /// The class directly above (`None` for `generic`).
    pub fn parent(self) -> Option<DTypeClass> {
        CLASSES
            .iter()
            .find(|(c, _, _)| *c == self)
            .and_then(|(_, _, p)| *p)
    }

    /// The most specific class of a dtype: its kind's class, or `prng_key` for key dtypes.
    pub fn of(dtype: AnyDType) -> DTypeClass {
        match dtype {
            AnyDType::Key(_) => DTypeClass::PrngKey,
            AnyDType::Numeric(d) => match d.kind() {
                Kind::Bool => DTypeClass::Bool,
                Kind::UnsignedInt => DTypeClass::UnsignedInteger,
                Kind::SignedInt => DTypeClass::SignedInteger,
                Kind::Float => DTypeClass::Floating,
                Kind::Complex => DTypeClass::ComplexFloating,
            },
        }
    }
}

impl FromStr for DTypeClass {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        CLASSES
            .iter()
            .find(|(_, n, _)| *n == s)
            .map(|(c, _, _)| *c)
            .ok_or_else(|| {
                crate::error::Reason::InvalidArgument {
                    argument: "class".into(),
                    reason: format!(
                        "unknown dtype class {s:?}; valid: {}",
                        CLASSES.iter().map(|c| c.1).collect::<Vec<_>>().join(", ")
                    ),
                }
                .into()
            })
    }
}

impl fmt::Display for DTypeClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `jnp.issubdtype(dtype, class)`: whether the dtype lies under the class.
///
/// ```
/// use dtype_lattice::extended::{issubdtype, AnyDType, DTypeClass};
/// let key: AnyDType = "key<fry>".parse().unwrap();
/// assert!(issubdtype(key, DTypeClass::PrngKey) && issubdtype(key, DTypeClass::Extended));
/// assert!(!issubdtype(key, DTypeClass::Number));
/// assert!(issubdtype("bfloat16".parse().unwrap(), DTypeClass::Floating));
/// assert!(!issubdtype("bool".parse().unwrap(), DTypeClass::Number));
/// ```
pub fn issubdtype(dtype: AnyDType, class: DTypeClass) -> bool {
    let mut c = Some(DTypeClass::of(dtype));
    while let Some(x) = c {
        if x == class {
            return true;
        }
        c = x.parent();
    }
    false
}

/// An operand: one of the numeric model's, or an array of a key dtype.
///
/// ```
/// use dtype_lattice::extended::AnyOperand;
/// let k: AnyOperand = "key<fry>".parse().unwrap();
/// assert_eq!(k.to_string(), "key<fry>");
/// assert!(matches!("~float16".parse::<AnyOperand>().unwrap(), AnyOperand::Operand(_)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AnyOperand {
    /// A numeric operand.
    Operand(Operand),
    /// An array of keys.
    Key(KeyDType),
}

impl FromStr for AnyOperand {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let t = s.trim();
        if t.starts_with("key<") {
            t.parse().map(AnyOperand::Key)
        } else {
            t.parse().map(AnyOperand::Operand)
        }
    }
}

impl fmt::Display for AnyOperand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyOperand::Operand(o) => o.fmt(f),
            AnyOperand::Key(k) => k.fmt(f),
        }
    }
}

impl From<Operand> for AnyOperand {
    fn from(o: Operand) -> Self {
        AnyOperand::Operand(o)
    }
}

impl From<KeyDType> for AnyOperand {
    fn from(k: KeyDType) -> Self {
        AnyOperand::Key(k)
    }
}

impl Serialize for AnyOperand {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl AnyOperand {
    /// The short label of tables (`i4`, `~f2`, `key<fry>`).
    pub fn short_label(&self) -> String {
        match self {
            AnyOperand::Operand(o) => o.short_label(),
            AnyOperand::Key(k) => k.to_string(),
        }
    }
}

/// Parses a comma-separated list of operands, keys included (`key<fry>,int8,2.5`).
///
/// ```
/// let ops = dtype_lattice::extended::parse_list("key<fry>, int8").unwrap();
/// assert_eq!(ops.len(), 2);
/// ```
pub fn parse_list(s: &str) -> Result<Vec<AnyOperand>, Error> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(str::parse)
        .collect()
}

/// The result of a promotion with extended operands: a numeric [`Promotion`] or a key dtype.
/// Serialises like [`Promotion`]: `{"dtype": "key<fry>", "weak_type": false}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyPromotion {
    /// A numeric result.
    Numeric(Promotion),
    /// A key dtype (keys promote only with themselves; never weak).
    Key(KeyDType),
}

impl AnyPromotion {
    /// The result's dtype.
    pub fn dtype(&self) -> AnyDType {
        match self {
            AnyPromotion::Numeric(p) => AnyDType::Numeric(p.dtype),
            AnyPromotion::Key(k) => AnyDType::Key(*k),
        }
    }

    /// Whether the result is weakly typed (never, for keys).
    pub fn weak_type(&self) -> bool {
        matches!(self, AnyPromotion::Numeric(p) if p.weak_type)
    }

    /// The numeric promotion, if it is one.
    pub fn numeric(&self) -> Option<&Promotion> {
        match self {
            AnyPromotion::Numeric(p) => Some(p),
            AnyPromotion::Key(_) => None,
        }
    }
}

impl fmt::Display for AnyPromotion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyPromotion::Numeric(p) => p.fmt(f),
            AnyPromotion::Key(k) => k.fmt(f),
        }
    }
}

impl From<Promotion> for AnyPromotion {
    fn from(p: Promotion) -> Self {
        AnyPromotion::Numeric(p)
    }
}

impl Serialize for AnyPromotion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AnyPromotion::Numeric(p) => p.serialize(s),
            AnyPromotion::Key(k) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("dtype", k)?;
                m.serialize_entry("weak_type", &false)?;
                m.end()
            }
        }
    }
}

/// What a `jnp` op makes of two arrays of the same key dtype (the check for mixed dtypes
/// passes, so lax's own dtype rule or NumPy's dtype parsing decides).
#[derive(Clone, Copy, Debug)]
enum SameKey {
    /// A boolean array (`equal`: keys compare).
    Bool,
    /// lax refuses: `{lax name} does not accept dtype key<…> at position 0. Accepted dtypes
    /// at position 0 are subtypes of {kinds}.`
    Lax(&'static str, &'static str),
    /// NumPy cannot interpret the key dtype (`Cannot interpret 'key<fry>' as a data type`).
    NotADataType,
}

/// JAX 0.10's `jnp` ops on two arrays of one key dtype, as data.
const SAME_KEY: &[(Op, SameKey)] = &[
    (
        Op::Add,
        SameKey::Lax("add", "integer, floating, complexfloating"),
    ),
    (
        Op::Subtract,
        SameKey::Lax("sub", "integer, floating, complexfloating"),
    ),
    (
        Op::Multiply,
        SameKey::Lax("mul", "integer, floating, complexfloating"),
    ),
    (Op::TrueDivide, SameKey::NotADataType),
    (Op::FloorDivide, SameKey::NotADataType),
    (Op::Power, SameKey::NotADataType),
    (Op::Equal, SameKey::Bool),
    (Op::Less, SameKey::Lax("lt", "integer, floating, bool")),
    (Op::LogicalAnd, SameKey::NotADataType),
    (Op::BitwiseAnd, SameKey::Lax("and", "integer, bool")),
];

fn not_a_data_type(k: KeyDType) -> Error {
    Error::refused(
        "TypeError",
        format!("Cannot interpret '{k}' as a data type"),
    )
}

/// The dtype JAX reports for an operand in `… does not accept dtypes …` (`dtypes.dtype(x)`:
/// Python scalars as the default dtype of their kind).
fn reported_dtype(o: &AnyOperand, x64: bool) -> Result<String, Error> {
    Ok(match o {
        AnyOperand::Key(k) => k.to_string(),
        AnyOperand::Operand(op) => crate::rules::jax::dtype_and_weak(op, x64)?.0.to_string(),
    })
}

fn jax_with_keys(
    rules: &Rules,
    op: Option<Op>,
    operands: &[AnyOperand],
) -> Result<AnyPromotion, Error> {
    let x64 = rules.options().x64;
    let first_key = operands
        .iter()
        .find_map(|o| match o {
            AnyOperand::Key(k) => Some(*k),
            AnyOperand::Operand(_) => None,
        })
        .expect("called with a key operand");
    let all_same = operands.iter().all(|o| *o == AnyOperand::Key(first_key));
    let Some(op) = op else {
        // jax.dtypes.result_type: one dtype throughout passes; otherwise the lattice does not
        // know the key.
        return if all_same {
            Ok(AnyPromotion::Key(first_key))
        } else {
            Err(Error::refused(
                "ValueError",
                format!("dtype={first_key} is not a valid dtype for JAX type promotion."),
            ))
        };
    };
    // jnp.power with a Python int exponent parses the base's dtype with NumPy first.
    if op == Op::Power
        && matches!(
            operands.get(1),
            Some(AnyOperand::Operand(
                Operand::Literal(Value::Int(_)) | Operand::PyType(PyType::Int)
            ))
        )
        && let Some(AnyOperand::Key(k)) = operands.first()
    {
        return Err(not_a_data_type(*k));
    }
    if !all_same {
        let names = operands
            .iter()
            .map(|o| reported_dtype(o, x64))
            .collect::<Result<Vec<_>, _>>()?;
        let mut distinct = names.clone();
        distinct.sort();
        distinct.dedup();
        if distinct.len() >= 2 {
            return Err(Error::refused(
                "TypeError",
                format!("{op} does not accept dtypes {}.", names.join(", ")),
            ));
        }
    }
    match SAME_KEY.iter().find(|(o, _)| *o == op).map(|(_, r)| *r) {
        Some(SameKey::Bool) => Ok(AnyPromotion::Numeric(Promotion {
            dtype: DType::Bool,
            weak_type: false,
        })),
        Some(SameKey::Lax(name, kinds)) => Err(Error::refused(
            "TypeError",
            format!(
                "{name} does not accept dtype {first_key} at position 0. Accepted dtypes at \
                 position 0 are subtypes of {kinds}."
            ),
        )),
        Some(SameKey::NotADataType) | None => Err(not_a_data_type(first_key)),
    }
}

impl Rules {
    /// [`Rules::evaluate`] over operands that may include key arrays. Under `jax`, keys follow
    /// JAX: `result_type` of one key dtype throughout is that dtype, anything else is JAX's
    /// `ValueError`; a `jnp` op refuses mixed dtypes with `{op} does not accept dtypes …` and
    /// answers two keys of one dtype as lax and NumPy do. Other rule sets refuse keys as an
    /// operand they cannot represent. No operands at all is an error (`EmptyOperands`).
    pub fn evaluate_any(
        &self,
        op: Option<Op>,
        operands: &[AnyOperand],
    ) -> Result<AnyPromotion, Error> {
        if operands.is_empty() {
            return Err(crate::error::Reason::EmptyOperands.into());
        }
        let key = operands.iter().find_map(|o| match o {
            AnyOperand::Key(k) => Some(*k),
            AnyOperand::Operand(_) => None,
        });
        let Some(key) = key else {
            let numeric: Vec<Operand> = operands
                .iter()
                .filter_map(|o| match o {
                    AnyOperand::Operand(o) => Some(*o),
                    AnyOperand::Key(_) => None,
                })
                .collect();
            return self.evaluate(op, &numeric).map(AnyPromotion::Numeric);
        };
        match self.rule_set() {
            r if r.def().extended == Extended::Jax => jax_with_keys(self, op, operands),
            other => Err(crate::error::Reason::Unsupported {
                rules: other.name(),
                operand: key.to_string(),
                why: "PRNG key dtypes are JAX's extended dtypes (use --rules jax)".into(),
            }
            .into()),
        }
    }

    /// `jnp.promote_types(a, b)` over dtypes that may be key dtypes: JAX's `promote_types`
    /// parses its arguments with NumPy, which cannot interpret a key dtype.
    ///
    /// ```
    /// use dtype_lattice::{extended::AnyDType, Rules};
    /// let e = Rules::jax()
    ///     .promote_types_any("key<fry>".parse().unwrap(), "int32".parse().unwrap())
    ///     .unwrap_err();
    /// assert_eq!(e.message(), "Cannot interpret 'key<fry>' as a data type");
    /// ```
    pub fn promote_types_any(&self, a: AnyDType, b: AnyDType) -> Result<AnyDType, Error> {
        match (a, b) {
            (AnyDType::Numeric(a), AnyDType::Numeric(b)) => {
                self.promote_types(a, b).map(AnyDType::Numeric)
            }
            (AnyDType::Key(k), _) | (_, AnyDType::Key(k)) => match self.rule_set() {
                r if r.def().extended == Extended::Jax => Err(not_a_data_type(k)),
                other => Err(crate::error::Reason::Unsupported {
                    rules: other.name(),
                    operand: k.to_string(),
                    why: "PRNG key dtypes are JAX's extended dtypes (use --rules jax)".into(),
                }
                .into()),
            },
        }
    }
}
