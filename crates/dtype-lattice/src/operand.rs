//! What a value contributes to promotion: its dtype, its weakness, its dimensionality and,
//! for scalars, its value.
//!
//! The text form is the CLI's operand grammar:
//!
//! | text | meaning |
//! |---|---|
//! | `int8` | a strongly typed array of that dtype |
//! | `~int8` | a weakly typed array (JAX's `weak_type=True`) |
//! | `int8(3)` | a zero-dimensional array / NumPy scalar of that dtype holding 3 |
//! | `int`, `float`, `complex` | the Python scalar types |
//! | `3`, `-200`, `2.5`, `1e+40`, `inf`, `nan`, `1j`, `(1e+40+1j)`, `True` | Python literals, as `repr()` prints them |

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::dtype::{DType, Kind};
use crate::error::{Error, Reason};

/// The Python scalar types that JAX treats as weakly typed.
///
/// ```
/// use dtype_lattice::PyType;
/// assert_eq!("float".parse::<PyType>().unwrap(), PyType::Float);
/// assert_eq!(PyType::Complex.short_name(), "c*");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PyType {
    /// Python `int`.
    Int,
    /// Python `float`.
    Float,
    /// Python `complex`.
    Complex,
}

impl PyType {
    /// All three, in lattice order.
    pub const ALL: [PyType; 3] = [PyType::Int, PyType::Float, PyType::Complex];

    /// The Python name (`int`).
    pub fn name(self) -> &'static str {
        match self {
            PyType::Int => "int",
            PyType::Float => "float",
            PyType::Complex => "complex",
        }
    }

    /// The short name of JAX's documentation (`i*`).
    pub fn short_name(self) -> &'static str {
        match self {
            PyType::Int => "i*",
            PyType::Float => "f*",
            PyType::Complex => "c*",
        }
    }

    /// The 64-bit dtype NumPy gives a value of this type (`int` → int64).
    pub fn default_dtype(self) -> DType {
        match self {
            PyType::Int => DType::Int64,
            PyType::Float => DType::Float64,
            PyType::Complex => DType::Complex128,
        }
    }

    /// The Python scalar type a dtype's values convert to (`.item()`): `None` for bool.
    ///
    /// ```
    /// use dtype_lattice::{DType, PyType};
    /// assert_eq!(PyType::of_kind(DType::UInt8.kind()), Some(PyType::Int));
    /// assert_eq!(PyType::of_kind(DType::BFloat16.kind()), Some(PyType::Float));
    /// ```
    pub fn of_kind(kind: Kind) -> Option<PyType> {
        match kind {
            Kind::Bool => None,
            Kind::UnsignedInt | Kind::SignedInt => Some(PyType::Int),
            Kind::Float => Some(PyType::Float),
            Kind::Complex => Some(PyType::Complex),
            _ => None,
        }
    }
}

impl FromStr for PyType {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        PyType::ALL
            .into_iter()
            .find(|t| t.name() == s || t.short_name() == s)
            .ok_or(())
    }
}

impl fmt::Display for PyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A node of a dtype promotion lattice: a dtype, or a weak Python scalar type
/// (`i*`, `f*`, `c*`).
///
/// ```
/// use dtype_lattice::{DType, Node, PyType};
/// assert_eq!(Node::from(DType::Int8).to_string(), "int8");
/// assert_eq!(Node::Weak(PyType::Int).to_string(), "int");
/// assert_eq!("f*".parse::<Node>().unwrap(), Node::Weak(PyType::Float));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    /// A dtype.
    Dtype(DType),
    /// A weakly typed Python scalar type.
    Weak(PyType),
}

impl Node {
    /// Whether the node is an extended (PRNG key) dtype.
    #[inline]
    pub fn is_extended(self) -> bool {
        matches!(self, Node::Dtype(d) if d.is_extended())
    }

    /// Whether the node is a dtype that no promotion lattice holds: an extended (PRNG key)
    /// dtype or `float0` (answered before any lattice, with the library's refusal).
    ///
    /// ```
    /// use dtype_lattice::{DType, Node};
    /// assert!(Node::from(DType::Float0).is_outside_lattices());
    /// assert!(Node::from(DType::KeyRbg).is_outside_lattices());
    /// assert!(!Node::from(DType::Int8).is_outside_lattices());
    /// ```
    #[inline]
    pub fn is_outside_lattices(self) -> bool {
        matches!(self, Node::Dtype(d) if d.is_extended() || d.is_float0())
    }

    /// Number of distinct nodes ([`Node::index`] is below this).
    pub const COUNT: usize = DType::COUNT + 3;

    /// A dense index in `0..Node::COUNT`.
    pub fn index(self) -> usize {
        match self {
            Node::Dtype(d) => d.index(),
            Node::Weak(t) => DType::COUNT + t as usize,
        }
    }

    /// The node with [`Node::index`] `i` (panics when `i >= Node::COUNT`).
    ///
    /// ```
    /// use dtype_lattice::{DType, Node};
    /// assert_eq!(Node::from_index(Node::from(DType::Int8).index()), Node::from(DType::Int8));
    /// ```
    pub fn from_index(i: usize) -> Node {
        match i.checked_sub(DType::COUNT) {
            None => Node::Dtype(DType::ALL[i]),
            Some(k) => Node::Weak(PyType::ALL[k]),
        }
    }

    /// The dtype of a dtype node; for a weak node, NumPy's dtype of the Python type
    /// (`int` → int64), as `np.dtype(int)` gives it.
    ///
    /// ```
    /// use dtype_lattice::{DType, Node, PyType};
    /// assert_eq!(Node::Weak(PyType::Float).dtype_or_default(), DType::Float64);
    /// ```
    pub fn dtype_or_default(self) -> DType {
        match self {
            Node::Dtype(d) => d,
            Node::Weak(t) => t.default_dtype(),
        }
    }

    /// The short name of JAX's documentation (`i4`, `bf`, `i*`).
    pub fn short_name(self) -> &'static str {
        match self {
            Node::Dtype(d) => d.short_name(),
            Node::Weak(t) => t.short_name(),
        }
    }
}

impl From<DType> for Node {
    fn from(d: DType) -> Self {
        Node::Dtype(d)
    }
}

impl From<PyType> for Node {
    fn from(t: PyType) -> Self {
        Node::Weak(t)
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Dtype(d) => d.fmt(f),
            Node::Weak(t) => t.fmt(f),
        }
    }
}

impl FromStr for Node {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.parse::<PyType>() {
            Ok(t) => Ok(Node::Weak(t)),
            Err(()) => s.parse().map(Node::Dtype),
        }
    }
}

/// A Python-like scalar value.
///
/// Parsed from and printed as Python's `repr()`: `3`, `-2.5`, `1e+40`, `inf`, `nan`, `1j`,
/// `(1+2j)`, `True`. Integers are exact up to 128 bits. A literal has the value Python gives
/// it: complex literals are arithmetic (`(-1-0j)` is `complex(-1, +0.0)`, `-1j` is
/// `complex(-0.0, -1)`), so `repr` and the value differ in zero signs as in Python.
///
/// ```
/// use dtype_lattice::Value;
/// let v: Value = "(1e+40+1j)".parse().unwrap();
/// assert_eq!(v, Value::Complex(1e40, 1.0));
/// assert_eq!(v.to_string(), "(1e+40+1j)");
/// assert_eq!("18446744073709551615".parse::<Value>().unwrap(), Value::Int(u64::MAX as i128));
/// assert_eq!((Value::from(2.5), Value::from(3i32), Value::from(true)), (Value::Float(2.5), Value::Int(3), Value::Bool(true)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// `True` / `False`.
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// A complex number `(re, im)`.
    Complex(f64, f64),
}

impl Value {
    /// The Python type of the value (`None` for bool, which is not weakly typed).
    pub fn py_type(self) -> Option<PyType> {
        match self {
            Value::Bool(_) => None,
            Value::Int(_) => Some(PyType::Int),
            Value::Float(_) => Some(PyType::Float),
            Value::Complex(..) => Some(PyType::Complex),
        }
    }

    /// Converts the value to `dtype` as a NumPy scalar constructor would: integers must fit
    /// the dtype's range, floats round to the dtype's format (too large becomes inf, or NaN
    /// for formats without inf, as `astype` does), complex values only go to complex dtypes.
    ///
    /// # Errors
    ///
    /// `ValueOutOfRange` for an integer outside an integer dtype's range; `MalformedOperand`
    /// for a complex value cast to a real dtype, or any value cast to a key dtype.
    ///
    /// ```
    /// use dtype_lattice::{DType, Value};
    /// assert_eq!(Value::Float(1e40).cast(DType::Float32).unwrap(), Value::Float(f64::INFINITY));
    /// assert_eq!(Value::Float(0.1).cast(DType::BFloat16).unwrap(), Value::Float(0.10009765625));
    /// assert!(Value::Int(300).cast(DType::Int8).is_err());
    /// ```
    pub fn cast(self, dtype: DType) -> Result<Value, Error> {
        let out_of_range = |value: String| {
            let (min, max) = dtype.int_range().unwrap_or((0, 0));
            Error::from(Reason::ValueOutOfRange {
                value,
                dtype,
                min,
                max,
            })
        };
        match (dtype.kind(), self) {
            (Kind::Bool, Value::Bool(b)) => Ok(Value::Bool(b)),
            (Kind::Bool, Value::Int(i)) => Ok(Value::Bool(i != 0)),
            (Kind::Bool, Value::Float(x)) => Ok(Value::Bool(x != 0.0)),
            (Kind::UnsignedInt | Kind::SignedInt, v @ (Value::Bool(_) | Value::Int(_))) => {
                let i = match v {
                    Value::Bool(b) => b as i128,
                    Value::Int(i) => i,
                    _ => unreachable!(),
                };
                let (min, max) = dtype.int_range().expect("integer dtype");
                if (min..=max).contains(&i) {
                    Ok(Value::Int(i))
                } else {
                    Err(out_of_range(i.to_string()))
                }
            }
            (Kind::UnsignedInt | Kind::SignedInt, Value::Float(x)) => {
                let (min, max) = dtype.int_range().expect("integer dtype");
                let t = x.trunc();
                if t.is_finite() && t >= min as f64 && t <= max as f64 {
                    Ok(Value::Int(t as i128))
                } else {
                    Err(out_of_range(Value::Float(x).to_string()))
                }
            }
            (Kind::Float, Value::Bool(b)) => Ok(Value::Float(round_to(dtype, b as u8 as f64))),
            (Kind::Float, Value::Int(i)) => Ok(Value::Float(round_to(dtype, i as f64))),
            (Kind::Float, Value::Float(x)) => Ok(Value::Float(round_to(dtype, x))),
            (Kind::Complex, v) => {
                let (re, im) = match v {
                    Value::Bool(b) => (b as u8 as f64, 0.0),
                    Value::Int(i) => (i as f64, 0.0),
                    Value::Float(x) => (x, 0.0),
                    Value::Complex(re, im) => (re, im),
                };
                let c = dtype.component();
                Ok(Value::Complex(round_to(c, re), round_to(c, im)))
            }
            (Kind::Extended, _) => Err(malformed(
                &format!("{dtype}({self})"),
                format!("{dtype} holds PRNG keys, not numbers"),
            )),
            (Kind::Void, _) => Err(malformed(
                &format!("{dtype}({self})"),
                format!("{dtype} holds no numbers (JAX's dtype of the tangents of integers)"),
            )),
            (_, Value::Complex(..)) => Err(malformed(
                &format!("{dtype}({self})"),
                format!("a complex value does not convert to {dtype}"),
            )),
        }
    }
}

/// Rounds `x` to the nearest value of a real floating dtype (ties to even), with `astype`'s
/// overflow behaviour: inf where the format has it, else NaN, else saturation.
fn round_to(dtype: DType, x: f64) -> f64 {
    let f = dtype.float_format().expect("float dtype");
    if dtype == DType::Float64 || x.is_nan() {
        return if f.has_nan { x } else { f.max };
    }
    if x < 0.0 && !f.signed {
        return f64::NAN;
    }
    let overflow = || {
        if f.has_inf {
            f64::INFINITY.copysign(x)
        } else if f.has_nan {
            f64::NAN
        } else {
            f.max.copysign(x)
        }
    };
    let a = x.abs();
    if a.is_infinite() {
        return overflow();
    }
    if a == 0.0 {
        return x;
    }
    // Exponent of `a` (exact for finite f64: from the bit pattern), clamped to the normal
    // range so that subnormals share the smallest normal's quantum.
    let exp = ((a.to_bits() >> 52) as i32 - 1023).max(f.min_exponent);
    let quantum = 2f64.powi(exp - f.mantissa_bits as i32);
    let r = (a / quantum).round_ties_even() * quantum;
    if r > f.max {
        return overflow();
    }
    if r < f.smallest_normal() && !f.signed {
        return f.smallest_normal();
    }
    r.copysign(x)
}

/// One operand of a promotion.
///
/// ```
/// use dtype_lattice::{DType, Operand, PyType, Value};
/// assert_eq!("~float16".parse::<Operand>().unwrap(), Operand::Array { dtype: DType::Float16, weak: true });
/// assert_eq!("int8(3)".parse::<Operand>().unwrap(), Operand::Scalar { dtype: DType::Int8, value: Value::Int(3) });
/// assert_eq!("complex".parse::<Operand>().unwrap(), Operand::PyType(PyType::Complex));
/// assert_eq!("-200".parse::<Operand>().unwrap(), Operand::Literal(Value::Int(-200)));
/// assert!("int8(300)".parse::<Operand>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    /// An array with at least one dimension; `weak` marks JAX's weakly typed arrays.
    Array {
        /// Its dtype.
        dtype: DType,
        /// Whether it is weakly typed.
        weak: bool,
    },
    /// A zero-dimensional array (or NumPy scalar) of `dtype` holding `value`, already
    /// converted to the dtype.
    Scalar {
        /// Its dtype.
        dtype: DType,
        /// Its value.
        value: Value,
    },
    /// A Python scalar type itself (`int`, `float`, `complex`).
    PyType(PyType),
    /// A Python scalar value.
    Literal(Value),
}

impl Operand {
    /// A strongly typed array.
    pub fn array(dtype: DType) -> Self {
        Operand::Array { dtype, weak: false }
    }

    /// A weakly typed array.
    pub fn weak_array(dtype: DType) -> Self {
        Operand::Array { dtype, weak: true }
    }

    /// A zero-dimensional array of `dtype` holding `value` (converted, range-checked).
    ///
    /// # Errors
    ///
    /// As [`Value::cast`].
    ///
    /// ```
    /// use dtype_lattice::{DType, Operand, Value};
    /// assert!(Operand::scalar(DType::UInt8, Value::Int(-1)).is_err());
    /// ```
    pub fn scalar(dtype: DType, value: Value) -> Result<Self, Error> {
        Ok(Operand::Scalar {
            dtype,
            value: value.cast(dtype)?,
        })
    }

    /// The operand's dtype, for arrays and zero-dimensional arrays (`None` for Python
    /// scalars and their types).
    ///
    /// ```
    /// use dtype_lattice::{DType, Operand};
    /// assert_eq!("~int8".parse::<Operand>().unwrap().dtype(), Some(DType::Int8));
    /// assert_eq!("2.5".parse::<Operand>().unwrap().dtype(), None);
    /// ```
    pub fn dtype(&self) -> Option<DType> {
        match *self {
            Operand::Array { dtype, .. } | Operand::Scalar { dtype, .. } => Some(dtype),
            Operand::PyType(_) | Operand::Literal(_) => None,
        }
    }

    /// The short label used in table headers (`i4`, `~f2`, `i*`, `i1(3)`, `2.5`).
    pub fn short_label(&self) -> String {
        match self {
            Operand::Array { dtype, weak } => {
                format!("{}{}", if *weak { "~" } else { "" }, dtype.short_name())
            }
            Operand::Scalar { dtype, value } => format!("{}({value})", dtype.short_name()),
            Operand::PyType(t) => t.short_name().to_string(),
            Operand::Literal(v) => v.to_string(),
        }
    }
}

impl From<DType> for Operand {
    fn from(d: DType) -> Self {
        Operand::array(d)
    }
}

impl From<PyType> for Operand {
    fn from(t: PyType) -> Self {
        Operand::PyType(t)
    }
}

impl From<Value> for Operand {
    fn from(v: Value) -> Self {
        Operand::Literal(v)
    }
}

fn malformed(operand: &str, reason: impl Into<String>) -> Error {
    Reason::MalformedOperand {
        operand: operand.to_string(),
        reason: reason.into(),
    }
    .into()
}

/// Python's `digitpart` in `radix` (`digit (["_"] digit)*`): digits, single underscores
/// only between two digits; with `leading_underscore`, also one before the first digit (as
/// after `0x`).
fn digit_part(s: &str, radix: u32, leading_underscore: bool) -> bool {
    let body = match s.strip_prefix('_') {
        Some(rest) if leading_underscore => rest,
        _ => s,
    };
    !body.is_empty()
        && !body.starts_with('_')
        && !body.ends_with('_')
        && !body.contains("__")
        && body.chars().all(|c| c == '_' || c.is_digit(radix))
}

/// One optional sign (Python's unary `+`/`-`) and the rest.
fn split_sign(s: &str) -> (&str, &str) {
    match s.strip_prefix(['+', '-']) {
        Some(rest) => (&s[..1], rest),
        None => ("", s),
    }
}

/// A Python integer literal, with an optional sign: `decinteger` (no leading zeros but in
/// `0`, `00`, `0_0`), `0b`/`0o`/`0x` literals, underscores only between digits. `Err` for a
/// valid literal beyond 128 bits.
fn parse_int(s: &str) -> Option<Result<i128, ()>> {
    let (sign, body) = split_sign(s);
    let (digits, radix) = match body.get(..2) {
        Some("0b" | "0B") => (&body[2..], 2),
        Some("0o" | "0O") => (&body[2..], 8),
        Some("0x" | "0X") => (&body[2..], 16),
        _ => (body, 10),
    };
    let valid = if radix == 10 {
        digit_part(digits, 10, false)
            && (!digits.starts_with('0') || digits.chars().all(|c| c == '0' || c == '_'))
    } else {
        digit_part(digits, radix, true)
    };
    if !valid {
        return None;
    }
    let magnitude = i128::from_str_radix(&digits.replace('_', ""), radix);
    Some(
        magnitude
            .map(|m| if sign == "-" { -m } else { m })
            .map_err(|_| ()),
    )
}

/// A Python float literal (`floatnumber`: `1.5`, `.5`, `5.`, `1e5`, `1_000.0`), or `inf`/`nan`
/// as `repr` prints them, with an optional sign. With `digits_only`, a bare `digitpart` too
/// (`007`, as in the imaginary literal `007j`).
fn parse_float_with(s: &str, digits_only: bool) -> Option<f64> {
    let (_, body) = split_sign(s);
    if matches!(body, "inf" | "nan") {
        return s.parse().ok();
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    if let Some(e) = exponent
        && !digit_part(split_sign(e).1, 10, false)
    {
        return None;
    }
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            (!int.is_empty() || !frac.is_empty())
                && (int.is_empty() || digit_part(int, 10, false))
                && (frac.is_empty() || digit_part(frac, 10, false))
        }
        None => (exponent.is_some() || digits_only) && digit_part(mantissa, 10, false),
    };
    if !mantissa_ok {
        return None;
    }
    s.replace('_', "").parse().ok()
}

fn parse_float(s: &str) -> Option<f64> {
    parse_float_with(s, false)
}

/// The imaginary part of a Python imaginary literal (`floatnumber | digitpart`, before `j`).
fn parse_imag(s: &str) -> Option<f64> {
    parse_float_with(s, true)
}

macro_rules! value_from {
    ($($t:ty => $v:ident as $as:ty),*) => {$(
        impl From<$t> for Value {
            /// The Python scalar of a Rust number or bool (`2.5` is `Value::Float(2.5)`).
            fn from(x: $t) -> Value {
                Value::$v(<$as>::from(x))
            }
        }
    )*};
}

value_from!(
    bool => Bool as bool,
    i8 => Int as i128, i16 => Int as i128, i32 => Int as i128, i64 => Int as i128,
    u8 => Int as i128, u16 => Int as i128, u32 => Int as i128, u64 => Int as i128,
    f32 => Float as f64, f64 => Float as f64
);

impl FromStr for Value {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "True" => return Ok(Value::Bool(true)),
            "False" => return Ok(Value::Bool(false)),
            _ => {}
        }
        if s.is_empty() {
            return Err(malformed(s, "empty value"));
        }
        // (re±imj) — the real part ends at the last sign that does not follow an exponent.
        // Python evaluates the literal as arithmetic (`ast.literal_eval` as well): `re ± imj`
        // is `complex(re, 0.0) ± complex(0.0, im)`, part by part, so `(-1-0j)` is
        // `complex(-1, 0.0 - 0.0)` = `(-1+0j)` and `(-0.0+1j)` is `complex(-0.0 + 0.0, 1)` =
        // `1j` (CPython 3.11's `complex` arithmetic; `repr` writes `complex(-1, -0.0)` as
        // `(-1-0j)` nonetheless).
        if let Some(inner) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            let body = inner
                .strip_suffix(['j', 'J'])
                .ok_or_else(|| malformed(s, "a parenthesised complex literal ends in `j)`"))?;
            let bytes = body.as_bytes();
            let split = (1..bytes.len())
                .rev()
                .find(|&i| matches!(bytes[i], b'+' | b'-') && !matches!(bytes[i - 1], b'e' | b'E'))
                .ok_or_else(|| malformed(s, "expected (REAL+IMAGj)"))?;
            let re = match parse_int(&body[..split]) {
                Some(Ok(i)) => Some(i as f64),
                Some(Err(())) => None,
                None => parse_float(&body[..split]),
            };
            // The imaginary literal itself is unsigned; the sign is the binary operator.
            let unsigned = &body[split + 1..];
            let im = parse_imag(unsigned).filter(|_| !unsigned.starts_with(['+', '-']));
            return match (re, im) {
                (Some(re), Some(im)) if bytes[split] == b'-' => {
                    Ok(Value::Complex(re - 0.0, 0.0 - im))
                }
                (Some(re), Some(im)) => Ok(Value::Complex(re + 0.0, 0.0 + im)),
                _ => Err(malformed(s, "expected (REAL+IMAGj)")),
            };
        }
        if let Some(imag) = s.strip_suffix(['j', 'J']) {
            // `-imj` is unary minus on `complex(0.0, im)`: both parts negated (`-1j` is
            // `complex(-0.0, -1)`, `-0j` is `complex(-0.0, -0.0)`).
            let (sign, unsigned) = split_sign(imag);
            return parse_imag(unsigned)
                .filter(|_| !unsigned.starts_with(['+', '-']))
                .map(|im| {
                    if sign == "-" {
                        Value::Complex(-0.0, -im)
                    } else {
                        Value::Complex(0.0, im)
                    }
                })
                .ok_or_else(|| malformed(s, "not a Python complex literal"));
        }
        match parse_int(s) {
            Some(Ok(i)) => return Ok(Value::Int(i)),
            Some(Err(())) => {
                return Err(malformed(
                    s,
                    "integer literals are supported up to 128 bits",
                ));
            }
            None => {}
        }
        let (_, body) = split_sign(s);
        if body.len() > 1
            && body.starts_with('0')
            && body.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        {
            return Err(malformed(
                s,
                "leading zeros in a decimal integer literal are not permitted (Python: use an 0o prefix for octal integers)",
            ));
        }
        parse_float(s)
            .map(Value::Float)
            .ok_or_else(|| malformed(s, "not a dtype, Python type or Python literal"))
    }
}

/// Formats like Python's `float.__repr__`: shortest round-trip digits, exponent form outside
/// `1e-4 <= |x| < 1e16`.
fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let a = x.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = format!("{x:e}");
        let (mantissa, exp) = s.split_once('e').expect("exponent form");
        let exp: i32 = exp.parse().expect("integer exponent");
        return format!(
            "{mantissa}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        );
    }
    let s = format!("{x:?}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

/// Formats one component of a complex repr (Python drops `.0` there).
fn py_complex_part(x: f64) -> String {
    let s = py_float(x);
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Bool(b) => f.write_str(if b { "True" } else { "False" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => f.write_str(&py_float(x)),
            Value::Complex(re, im) if re == 0.0 && re.is_sign_positive() => {
                write!(f, "{}j", py_complex_part(im))
            }
            Value::Complex(re, im) => {
                let im_s = py_complex_part(im);
                let sign = if im_s.starts_with('-') { "" } else { "+" };
                write!(f, "({}{sign}{im_s}j)", py_complex_part(re))
            }
        }
    }
}

impl FromStr for Operand {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let s = s.trim();
        if s.is_empty() {
            return Err(malformed(s, "empty operand"));
        }
        if let Ok(t) = s.parse::<PyType>() {
            return Ok(Operand::PyType(t));
        }
        if let Some(rest) = s.strip_prefix('~') {
            let dtype = rest.parse::<DType>()?;
            if dtype.is_extended() {
                return Err(malformed(s, "key arrays are never weakly typed"));
            }
            return Ok(Operand::weak_array(dtype));
        }
        if let Some(open) = s.find('(').filter(|&i| i > 0) {
            let inner = s[open + 1..]
                .strip_suffix(')')
                .ok_or_else(|| malformed(s, "expected DTYPE(VALUE)"))?;
            let dtype: DType = s[..open].parse()?;
            let value: Value = inner.parse().map_err(|e: Error| match e.reason() {
                Reason::MalformedOperand { reason, .. } => malformed(s, reason.clone()),
                _ => e,
            })?;
            return Operand::scalar(dtype, value);
        }
        if s.starts_with(|c: char| c.is_ascii_alphabetic())
            && !matches!(s, "inf" | "nan" | "infj" | "nanj" | "infJ" | "nanJ")
        {
            if s == "None" {
                return Err(malformed(
                    s,
                    "None is not an operand (give a dtype, a Python type or a Python number)",
                ));
            }
            if (s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false"))
                && !matches!(s, "True" | "False")
            {
                return Err(malformed(s, "Python booleans are written True and False"));
            }
            if !matches!(s, "True" | "False") {
                return s.parse::<DType>().map(Operand::array);
            }
        }
        s.parse::<Value>().map(Operand::Literal)
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Array { dtype, weak } => {
                write!(f, "{}{dtype}", if *weak { "~" } else { "" })
            }
            Operand::Scalar { dtype, value } => {
                // The value was converted to the dtype; print it as that dtype's scalar would.
                match (dtype.kind(), value) {
                    (Kind::Complex, Value::Complex(re, im)) => {
                        write!(f, "{dtype}({})", Value::Complex(*re, *im))
                    }
                    _ => write!(f, "{dtype}({value})"),
                }
            }
            Operand::PyType(t) => t.fmt(f),
            Operand::Literal(v) => v.fmt(f),
        }
    }
}

impl Serialize for Operand {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Operand {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Parses a comma-separated operand list (`int8,~float16,3`).
///
/// # Errors
///
/// The first operand that does not parse: `UnknownDtype` (with suggestions), `MalformedOperand`
/// or `ValueOutOfRange`.
///
/// ```
/// let ops = dtype_lattice::operand::parse_list("int8, uint8 ,float").unwrap();
/// assert_eq!(ops.len(), 3);
/// ```
pub fn parse_list(s: &str) -> Result<Vec<Operand>, Error> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(str::parse)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn literals_round_trip_through_repr() {
        for s in [
            "3",
            "-200",
            "18446744073709551615",
            "2.5",
            "1e+40",
            "1e-05",
            "inf",
            "-inf",
            "nan",
            "1j",
            "(1e+40+1j)",
            "(1-2.5j)",
            "True",
            "False",
            "0.0",
            "-0.0",
        ] {
            let v: Value = s.parse().unwrap();
            assert_eq!(v.to_string(), s, "{v:?}");
        }
    }

    #[test]
    fn malformed_operands_are_errors() {
        for s in [
            "", "int8(", "int8(x)", "1.2.3", "(1+j)", "true", "--3", "~int", "1e", "int8()",
        ] {
            assert!(s.parse::<Operand>().is_err(), "{s:?} parsed");
        }
        assert_eq!(
            "int8(300)".parse::<Operand>().unwrap_err().kind(),
            ErrorKind::ValueOutOfRange
        );
        assert_eq!(
            "flaot32".parse::<Operand>().unwrap_err().kind(),
            ErrorKind::UnknownDtype
        );
    }

    /// Python's grammar for int, float and imaginary literals: Python 3.11's `eval` accepts
    /// every string of the first list and rejects every one of the second (a `SyntaxError`, or a
    /// `NameError` for an identifier such as `_1`).
    #[test]
    fn literals_follow_pythons_grammar() {
        for (s, v) in [
            ("000", Value::Int(0)),
            ("0_0", Value::Int(0)),
            ("1_000", Value::Int(1000)),
            ("0x_1f", Value::Int(31)),
            ("0o17", Value::Int(15)),
            ("0b1_0", Value::Int(2)),
            ("-0x10", Value::Int(-16)),
            ("007.5", Value::Float(7.5)),
            ("007e1", Value::Float(70.0)),
            ("1_0.5", Value::Float(10.5)),
            ("1.5_0", Value::Float(1.5)),
            ("1e1_0", Value::Float(1e10)),
            (".5", Value::Float(0.5)),
            ("5.", Value::Float(5.0)),
            ("1E5", Value::Float(1e5)),
            ("007j", Value::Complex(0.0, 7.0)),
            ("1_0J", Value::Complex(0.0, 10.0)),
            ("(1-2.5j)", Value::Complex(1.0, -2.5)),
        ] {
            assert_eq!(s.parse::<Value>(), Ok(v), "{s}");
        }
        for s in [
            "_1", "1_", "1__0", "007", "0_7", "1._5", "1_.5", "1.5_", "1e_5", "1e5_", "0x", "0x1_",
            "0b2", "0o8", "1_j", "_1j", "1.e", "e5", "._5", "(007+1j)", "0x1p3",
        ] {
            assert!(s.parse::<Value>().is_err(), "{s:?} parsed");
        }
        assert!(
            "007"
                .parse::<Value>()
                .unwrap_err()
                .message()
                .contains("leading zeros")
        );
    }

    #[test]
    fn capitalised_names_and_none_get_their_own_messages() {
        let e = "Float32".parse::<Operand>().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownDtype);
        assert!(
            e.message().contains("did you mean float32"),
            "{}",
            e.message()
        );
        let e = "None".parse::<Operand>().unwrap_err();
        assert_eq!(
            e.message(),
            "malformed operand \"None\": None is not an operand (give a dtype, a Python type or a Python number)"
        );
        for s in ["TRUE", "false", "tRUE"] {
            assert!(
                s.parse::<Operand>()
                    .unwrap_err()
                    .message()
                    .contains("True and False"),
                "{s}"
            );
        }
    }

    #[test]
    fn casting_follows_the_format() {
        let f = |d, x| Value::Float(x).cast(d).unwrap();
        assert_eq!(f(DType::Float16, 65519.0), Value::Float(65504.0));
        assert_eq!(f(DType::Float16, 65520.0), Value::Float(f64::INFINITY));
        assert!(matches!(f(DType::Float8E4M3Fn, 1e10), Value::Float(x) if x.is_nan()));
        assert_eq!(f(DType::Float8E4M3Fn, 460.0), Value::Float(448.0));
        assert_eq!(f(DType::Float4E2M1Fn, 100.0), Value::Float(6.0));
        assert_eq!(f(DType::Float16, 1e-8), Value::Float(0.0));
        assert_eq!(f(DType::Float16, 6e-8), Value::Float(5.960464477539063e-08));
    }
}
