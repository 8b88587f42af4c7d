//! TensorFlow 2.21: auto dtype conversion (modes ALL and SAFE) and legacy TensorFlow.
//!
//! * **ALL** (`tensorflow`) and **SAFE** (`tensorflow-safe`),
//!   `experimental_enable_numpy_behavior(dtype_conversion_mode=…)`:
//!   `flexible_dtypes.result_type` folds its operands left to right through
//!   `_BINARY_DTYPE_RES_FULL`, a table over bool, the 14 numeric dtypes and five *weak* dtypes
//!   (int32, int64, float32, float64, complex128). That table is exactly the join of the lattice
//!   [`LATTICE`] (checked on every ordered pair of its 20 nodes by the fixtures), so the rules are
//!   that lattice, compiled by the generic engine. A Python `int`, `float` or `complex` is weak
//!   int32, float32 or complex128, `True` is strong bool, and a Python int outside int32 raises
//!   `OverflowError`. SAFE refuses the table's ALL-only pairs ([`SAFE_REFUSED`]) at the first
//!   refused step of the fold, so SAFE depends on the order of the operands.
//!   The ops TensorFlow patches (add, subtract, multiply, truediv, floordiv, pow, equal) promote
//!   first, convert both operands to the result and run the kernel; `less`, `logical_and` and
//!   `bitwise_and` are not patched and convert their operands as legacy TensorFlow does.
//! * **Legacy** (`tensorflow-legacy`): no implicit promotion. Python scalars become tensors
//!   through `py_seq_tensor.cc`'s converters (modelled value by value: [`convert`]), and the
//!   kernel then needs equal dtypes. `tf.math.add` and `tf.math.truediv` convert `x` alone and
//!   `y` with `x`'s dtype as a hint; the other ops (`args_to_matching_eager`) take the dtype of
//!   the first operand that is already a tensor. `result_type` is `tf.math.add` folded left to
//!   right, so it depends on the order of the operands.
//!
//! Every refusal carries TensorFlow's exception class and the first line of its message.

use std::fmt;
use std::sync::OnceLock;

use crate::dtype::DType::{self, *};
use crate::dtype::Kind;
use crate::error::{Error, Exception, Reason};
use crate::lattice::{Lattice, Lub};
use crate::operand::{Node, Operand, PyType, Value};
use crate::ops::{self, Op, OpRule, Outcome};
use crate::rules::{Options, Promotion, RuleSetDef, unsupported};

/// TensorFlow's modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `dtype_conversion_mode="all"`.
    All,
    /// `dtype_conversion_mode="safe"`.
    Safe,
    /// No NumPy behaviour.
    Legacy,
}

impl Mode {
    /// The rule set's name, for [`unsupported`].
    fn rules_name(self) -> &'static str {
        match self {
            Mode::All => "tensorflow",
            Mode::Safe => "tensorflow-safe",
            Mode::Legacy => "tensorflow-legacy",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Dtypes
// ---------------------------------------------------------------------------------------------

/// TensorFlow's dtypes in the model: the dtype, its C++ name (`DataTypeString`, used in kernel
/// messages: `half`, `float`, `double`) and the NumPy repr of the fixtures' 1-D operand
/// (`np.ones((2,), dtype)`), which TensorFlow prints in some messages.
const DTYPES: &[(DType, &str, &str)] = &[
    (Bool, "bool", "array([ True,  True])"),
    (UInt8, "uint8", "array([1, 1], dtype=uint8)"),
    (UInt16, "uint16", "array([1, 1], dtype=uint16)"),
    (UInt32, "uint32", "array([1, 1], dtype=uint32)"),
    (UInt64, "uint64", "array([1, 1], dtype=uint64)"),
    (Int8, "int8", "array([1, 1], dtype=int8)"),
    (Int16, "int16", "array([1, 1], dtype=int16)"),
    (Int32, "int32", "array([1, 1], dtype=int32)"),
    (Int64, "int64", "array([1, 1])"),
    (BFloat16, "bfloat16", "array([1, 1], dtype=bfloat16)"),
    (Float16, "half", "array([1., 1.], dtype=float16)"),
    (Float32, "float", "array([1., 1.], dtype=float32)"),
    (Float64, "double", "array([1., 1.])"),
    (
        Complex64,
        "complex64",
        "array([1.+0.j, 1.+0.j], dtype=complex64)",
    ),
    (Complex128, "complex128", "array([1.+0.j, 1.+0.j])"),
];

/// The dtypes a `WeakTensor` may have (`weak_tensor._ALLOWED_WEAK_DTYPES`).
const WEAK_DTYPES: &[DType] = &[Int32, Int64, Float32, Float64, Complex128];

/// Whether TensorFlow's promotion table has this dtype.
pub(crate) fn knows(dtype: DType) -> bool {
    DTYPES.iter().any(|&(d, ..)| d == dtype)
}

/// `DataTypeString(dtype)`: TensorFlow's C++ name (`half` for float16).
fn tf_name(dtype: DType) -> &'static str {
    DTYPES
        .iter()
        .find(|&&(d, ..)| d == dtype)
        .map_or(dtype.name(), |&(_, name, _)| name)
}

/// The NumPy repr of a 1-D operand of ones of this dtype.
fn ones_repr(dtype: DType) -> &'static str {
    DTYPES
        .iter()
        .find(|&&(d, ..)| d == dtype)
        .map_or("array([1, 1])", |&(.., repr)| repr)
}

// ---------------------------------------------------------------------------------------------
// The promotion lattice of modes ALL and SAFE
// ---------------------------------------------------------------------------------------------

/// A node of TensorFlow's promotion lattice: a dtype, strong or weak (`flexible_dtypes`' `_i32w`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct TfNode {
    /// The dtype.
    dtype: DType,
    /// Whether the node is weak (a `WeakTensor` or a Python scalar).
    weak: bool,
}

impl fmt::Display for TfNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", if self.weak { "~" } else { "" }, self.dtype)
    }
}

/// A strong node.
const fn s(dtype: DType) -> TfNode {
    TfNode { dtype, weak: false }
}

/// A weak node.
const fn w(dtype: DType) -> TfNode {
    TfNode { dtype, weak: true }
}

/// TensorFlow's promotion lattice, node → nodes directly above. Its join reproduces
/// `_BINARY_DTYPE_RES_FULL` on all 400 ordered pairs of its 20 nodes: weak types sit just above
/// bool and give way to every strong dtype of their kind or above; uint64 and int64 meet in weak
/// float64, which is also where weak floats meet integers; weak complex128 lies below complex64.
const LATTICE: &[(TfNode, &[TfNode])] = &[
    (s(Bool), &[w(Int32)]),
    (w(Int32), &[w(Int64)]),
    (w(Int64), &[s(UInt8), s(Int8), w(Float32)]),
    (s(UInt8), &[s(UInt16), s(Int16)]),
    (s(UInt16), &[s(UInt32), s(Int32)]),
    (s(UInt32), &[s(UInt64), s(Int64)]),
    (s(UInt64), &[w(Float64)]),
    (s(Int8), &[s(Int16)]),
    (s(Int16), &[s(Int32)]),
    (s(Int32), &[s(Int64)]),
    (s(Int64), &[w(Float64)]),
    (w(Float32), &[w(Float64)]),
    (w(Float64), &[s(BFloat16), s(Float16), w(Complex128)]),
    (s(BFloat16), &[s(Float32)]),
    (s(Float16), &[s(Float32)]),
    (s(Float32), &[s(Float64), s(Complex64)]),
    (s(Float64), &[s(Complex128)]),
    (w(Complex128), &[s(Complex64)]),
    (s(Complex64), &[s(Complex128)]),
    (s(Complex128), &[]),
];

/// The pairs `_BINARY_DTYPE_RES_HALF` marks `PromoMode.ALL`: SAFE refuses them (either order).
const SAFE_REFUSED: &[(TfNode, &[TfNode])] = &[
    (s(UInt8), &[s(Int8), w(Float32)]),
    (
        s(UInt16),
        &[s(Int8), s(Int16), s(BFloat16), s(Float16), w(Float32)],
    ),
    (
        s(UInt32),
        &[
            s(Int8),
            s(Int16),
            s(Int32),
            s(BFloat16),
            s(Float16),
            s(Float32),
            s(Complex64),
            w(Float32),
        ],
    ),
    (
        s(UInt64),
        &[
            s(Int8),
            s(Int16),
            s(Int32),
            s(Int64),
            s(BFloat16),
            s(Float16),
            s(Float32),
            s(Float64),
            s(Complex64),
            s(Complex128),
            w(Float32),
            w(Float64),
            w(Complex128),
        ],
    ),
    (s(Int8), &[w(Float32)]),
    (s(Int16), &[s(BFloat16), s(Float16), w(Float32)]),
    (
        s(Int32),
        &[
            s(BFloat16),
            s(Float16),
            s(Float32),
            s(Complex64),
            w(Float32),
        ],
    ),
    (
        s(Int64),
        &[
            s(BFloat16),
            s(Float16),
            s(Float32),
            s(Float64),
            s(Complex64),
            s(Complex128),
            w(Float32),
            w(Float64),
            w(Complex128),
        ],
    ),
    (s(BFloat16), &[s(Float16), w(Complex128)]),
    (s(Float16), &[w(Complex128)]),
    (s(Float32), &[w(Complex128)]),
    (s(Float64), &[s(Complex64)]),
];

/// The node of a Python scalar type (`_get_dtype_and_weakness`).
const PY_NODES: &[(PyType, TfNode)] = &[
    (PyType::Int, w(Int32)),
    (PyType::Float, w(Float32)),
    (PyType::Complex, w(Complex128)),
];

/// No node.
const NO_NODE: u8 = u8::MAX;

/// The lattice compiled for queries: node numbers by `(dtype, weak)` and SAFE's refusals as a
/// table by node number.
struct Compiled {
    /// The lattice, from [`LATTICE`].
    lattice: Lattice<TfNode>,
    /// `index[dtype.index()][weak as usize]`: the node's number, or [`NO_NODE`].
    index: [[u8; 2]; DType::COUNT],
    /// `refused[a * len + b]`: SAFE refuses the pair.
    refused: Vec<bool>,
}

impl Compiled {
    /// The number of a node, if it is one.
    fn index_of(&self, n: TfNode) -> Option<usize> {
        let i = self.index.get(n.dtype.index())?[usize::from(n.weak)];
        (i != NO_NODE).then_some(usize::from(i))
    }
}

/// The compiled lattice (built once per process).
fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| {
        let lattice = Lattice::from_edges(LATTICE.iter().map(|&(n, up)| (n, up.to_vec())))
            .expect("TensorFlow's lattice is acyclic");
        let mut index = [[NO_NODE; 2]; DType::COUNT];
        for (i, n) in lattice.nodes().iter().enumerate() {
            index[n.dtype.index()][usize::from(n.weak)] = i as u8;
        }
        let len = lattice.len();
        let mut refused = vec![false; len * len];
        for &(a, bs) in SAFE_REFUSED {
            for &b in bs {
                if let (Some(a), Some(b)) = (lattice.index_of(&a), lattice.index_of(&b)) {
                    refused[a * len + b] = true;
                    refused[b * len + a] = true;
                }
            }
        }
        Compiled {
            lattice,
            index,
            refused,
        }
    })
}

/// `str(dtype)` in TensorFlow: `<dtype: 'int8'>`.
fn dtype_str(dtype: DType) -> String {
    format!("<dtype: '{dtype}'>")
}

/// Python's name of a bool.
fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// One step of `_result_type_impl`'s fold: the table entry of `(acc, arg)`, refused in SAFE
/// mode when the entry is ALL-only.
fn join(mode: Mode, acc: TfNode, arg: TfNode) -> Result<TfNode, Error> {
    let c = compiled();
    let no_entry = || {
        Error::refused(
            Exception::KeyError,
            format!(
                "'Implicit Conversion between {} and {} is not allowed. Please convert the input \
                 manually if you need to.'",
                dtype_str(acc.dtype),
                dtype_str(arg.dtype)
            ),
        )
    };
    let (Some(a), Some(b)) = (c.index_of(acc), c.index_of(arg)) else {
        return Err(no_entry());
    };
    if mode == Mode::Safe
        && c.refused
            .get(a * c.lattice.len() + b)
            .copied()
            .unwrap_or(false)
    {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "In promotion mode PromoMode.SAFE, implicit dtype promotion between ({}, weak={}) \
                 and ({}, weak={}) is disallowed. You need to explicitly specify the dtype in \
                 your op, or relax your dtype promotion rules (such as from SAFE mode to ALL \
                 mode).",
                dtype_str(acc.dtype),
                py_bool(acc.weak),
                dtype_str(arg.dtype),
                py_bool(arg.weak)
            ),
        ));
    }
    match c.lattice.join_index(a, b) {
        Lub::Node(j) => Ok(*c.lattice.node(j)),
        _ => Err(no_entry()),
    }
}

/// `_get_dtype_and_weakness` of a Python scalar: `True` is strong bool; an int must fit int32.
fn scalar_node(v: Value) -> Result<TfNode, Error> {
    if let Value::Int(i) = v
        && i32::try_from(i).is_err()
    {
        return Err(Error::refused(
            Exception::OverflowError,
            format!("Python int {i} too large to convert to np.int32"),
        ));
    }
    let node = v
        .py_type()
        .and_then(|t| PY_NODES.iter().find(|(p, _)| *p == t))
        .map_or(s(Bool), |&(_, n)| n);
    Ok(node)
}

// ---------------------------------------------------------------------------------------------
// Operands
// ---------------------------------------------------------------------------------------------

/// An operand as TensorFlow sees it: a tensor (a `DTYPE` operand is the fixtures' 1-D tensor of
/// ones, a `DTYPE(VALUE)` operand a 0-d tensor) or a Python scalar still to be converted.
#[derive(Clone, Copy, Debug)]
enum Arg {
    /// A tensor (an `EagerTensor`, or a `WeakTensor` when `weak`).
    Tensor {
        /// Its dtype.
        dtype: DType,
        /// Whether it is a `WeakTensor`.
        weak: bool,
        /// The value of a 0-d tensor; `None` for a 1-D tensor of ones.
        value: Option<Value>,
    },
    /// A Python scalar.
    Py(Value),
}

impl Arg {
    /// A 1-D tensor (an op's result).
    fn tensor(dtype: DType, weak: bool) -> Arg {
        Arg::Tensor {
            dtype,
            weak,
            value: None,
        }
    }
}

/// The Python value of a Python scalar type in the fixtures' convention (`int` is `0`).
fn zero(t: PyType) -> Value {
    match t {
        PyType::Int => Value::Int(0),
        PyType::Float => Value::Float(0.0),
        PyType::Complex => Value::Complex(0.0, 0.0),
    }
}

/// Builds an operand, with TensorFlow's refusal of weak tensors of other dtypes.
fn arg_of(mode: Mode, op: &Operand) -> Result<Arg, Error> {
    let rules = mode.rules_name();
    let check = |dtype: DType| {
        if knows(dtype) {
            Ok(dtype)
        } else {
            Err(unsupported(
                rules,
                op,
                format!("TensorFlow's promotion table has no dtype {dtype}"),
            ))
        }
    };
    Ok(match *op {
        Operand::Array { dtype, weak: false } => Arg::tensor(check(dtype)?, false),
        Operand::Scalar { dtype, value } => Arg::Tensor {
            dtype: check(dtype)?,
            weak: false,
            value: Some(value),
        },
        Operand::Array { dtype, weak: true } => {
            let dtype = check(dtype)?;
            if mode == Mode::Legacy {
                return Err(unsupported(
                    rules,
                    op,
                    "weak tensors take part in promotion only with auto dtype conversion \
                     (rules tensorflow, tensorflow-safe)"
                        .into(),
                ));
            }
            if !WEAK_DTYPES.contains(&dtype) {
                let allowed: Vec<String> = WEAK_DTYPES.iter().map(|d| format!("tf.{d}")).collect();
                return Err(Error::refused(
                    Exception::TypeError,
                    format!(
                        "{} not allowed as a weak type. The allowed types are ({}).",
                        dtype_str(dtype),
                        allowed.join(", ")
                    ),
                ));
            }
            Arg::tensor(dtype, true)
        }
        Operand::PyType(t) => Arg::Py(zero(t)),
        Operand::Literal(v) => Arg::Py(v),
    })
}

/// The operands as [`Arg`]s; construction errors come first, in order.
fn args_of(mode: Mode, operands: &[Operand]) -> Result<Vec<Arg>, Error> {
    if operands.is_empty() {
        return Err(Reason::EmptyOperands.into());
    }
    operands.iter().map(|op| arg_of(mode, op)).collect()
}

/// `flexible_dtypes.result_type(*args)` (modes ALL and SAFE): every operand's node first (a
/// Python int outside int32 raises there), then the left fold.
fn promote(mode: Mode, args: &[Arg]) -> Result<TfNode, Error> {
    let nodes = args
        .iter()
        .map(|&a| match a {
            Arg::Tensor { dtype, weak, .. } => Ok(TfNode { dtype, weak }),
            Arg::Py(v) => scalar_node(v),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (&first, rest) = nodes.split_first().ok_or(Reason::EmptyOperands)?;
    rest.iter().try_fold(first, |acc, &n| join(mode, acc, n))
}

// ---------------------------------------------------------------------------------------------
// Converting Python scalars to tensors (`py_seq_tensor.cc`, `pywrap_tensor.cc`)
// ---------------------------------------------------------------------------------------------

/// The scalar converters of `py_seq_tensor.cc`.
#[derive(Clone, Copy, Debug)]
enum Converter {
    /// `ConvertOneFloat<T>`; `checked`: a finite Python float that becomes inf is refused (for
    /// types narrower than double).
    Float {
        /// Whether overflow to inf is refused.
        checked: bool,
    },
    /// `ConverterTraits<int64_t>`: Python ints within int64 (and bools).
    Int64,
    /// `ConverterTraits<int32>`: Python ints within int32 (and bools).
    Int32,
    /// `ConverterTraits<uint64>`: Python ints within uint64 (and bools); others leave a Python
    /// exception set.
    UInt64,
    /// `ConverterTraits<complex128>`: any Python number.
    Complex128,
    /// `ConverterTraits<bool>`: `True` and `False` only.
    Bool,
}

/// The requested dtypes that select a converter directly; any other requested dtype is
/// converted through the value's inferred dtype and then cast, if `IsCompatible` allows.
const DIRECT: &[(DType, Converter)] = &[
    (Float32, Converter::Float { checked: true }),
    (Float64, Converter::Float { checked: false }),
    (Float16, Converter::Float { checked: true }),
    (Int64, Converter::Int64),
    (Int32, Converter::Int32),
    (UInt64, Converter::UInt64),
    (Complex128, Converter::Complex128),
    (Bool, Converter::Bool),
];

/// Why a converter rejected a value (`py_seq_tensor.cc`'s error strings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reject {
    /// `ErrorOutOfRange`: an int beyond int64.
    OutOfRange,
    /// `ErrorOutOfRangeDouble`: a finite float that overflows the float type.
    OutOfRangeDouble,
    /// `ErrorFoundInt64`: an int beyond int32 for the int32 converter.
    FoundInt64,
    /// `ErrorFoundFloat`: a float for an integer converter.
    FoundFloat,
    /// `ErrorMixedTypes`: a value the converter does not take at all.
    MixedTypes,
    /// `PyLong_AsUnsignedLongLong` failed and left a Python exception set: the tensor is
    /// built anyway and Python raises `SystemError` on return.
    ExceptionSet,
}

impl Reject {
    /// The converter's error string.
    fn message(self) -> &'static str {
        match self {
            Reject::OutOfRange => {
                "Can't convert Python sequence with out-of-range integer to Tensor."
            }
            Reject::OutOfRangeDouble => {
                "Can't convert Python sequence with a value out of range for a double-precision \
                 float."
            }
            Reject::FoundInt64 => {
                "Can't convert Python sequence with out-of-range integer to int32 Tensor."
            }
            Reject::FoundFloat => {
                "Can't convert Python sequence with floating point values to integer Tensor."
            }
            Reject::MixedTypes => "Can't convert Python sequence with mixed types to Tensor.",
            Reject::ExceptionSet => {
                "<class 'tensorflow.python.framework.ops.EagerTensor'> returned a result with an \
                 exception set"
            }
        }
    }

    /// The exception Python sees: `ValueError`, or `SystemError` for [`Reject::ExceptionSet`].
    fn into_error(self) -> Error {
        let kind = if self == Reject::ExceptionSet {
            Exception::SystemError
        } else {
            Exception::ValueError
        };
        Error::refused(kind, self.message())
    }
}

/// Runs one converter on a Python scalar (`dtype` is the converter's output dtype).
fn run_converter(conv: Converter, dtype: DType, v: Value) -> Result<(), Reject> {
    let fits = |i: i128, t: DType| t.int_range().is_some_and(|(lo, hi)| (lo..=hi).contains(&i));
    match (conv, v) {
        (Converter::Bool, Value::Bool(_)) => Ok(()),
        (Converter::Bool, _) => Err(Reject::MixedTypes),
        (Converter::Complex128, Value::Complex(..)) => Ok(()),
        (Converter::Complex128, v) => {
            run_converter(Converter::Float { checked: false }, Float64, v)
        }
        (Converter::Float { .. }, Value::Bool(_) | Value::Int(_)) => Ok(()),
        (Converter::Float { checked }, Value::Float(x)) => {
            let overflows = x.is_finite()
                && matches!(Value::Float(x).cast(dtype), Ok(Value::Float(y)) if y.is_infinite());
            if checked && overflows {
                Err(Reject::OutOfRangeDouble)
            } else {
                Ok(())
            }
        }
        (Converter::Float { .. }, Value::Complex(..)) => Err(Reject::MixedTypes),
        // The integer converters.
        (_, Value::Float(_)) => Err(Reject::FoundFloat),
        (_, Value::Complex(..)) => Err(Reject::MixedTypes),
        (_, Value::Bool(_)) => Ok(()),
        (Converter::Int64, Value::Int(i)) if fits(i, Int64) => Ok(()),
        (Converter::Int32, Value::Int(i)) if fits(i, Int32) => Ok(()),
        (Converter::Int32, Value::Int(i)) if fits(i, Int64) => Err(Reject::FoundInt64),
        (Converter::UInt64, Value::Int(i)) if fits(i, UInt64) => Ok(()),
        (Converter::UInt64, Value::Int(_)) => Err(Reject::ExceptionSet),
        (_, Value::Int(_)) => Err(Reject::OutOfRange),
    }
}

/// `IsCompatible(desired, returned)`: whether the eager conversion may cast the inferred tensor
/// to the requested dtype (integers to integers, integers and floats to floats, anything
/// numeric to complex; never to or from bool).
fn is_compatible(desired: DType, returned: DType) -> bool {
    let int = |d: DType| d.kind().is_integer();
    let float = |d: DType| d.kind() == Kind::Float;
    let complex = |d: DType| d.kind() == Kind::Complex;
    desired == returned
        || (int(desired) && int(returned))
        || (float(desired) && (float(returned) || int(returned)))
        || (complex(desired) && (complex(returned) || float(returned) || int(returned)))
}

/// `ops.EagerTensor(value, dtype=requested)`: the dtype of the tensor a Python scalar becomes.
/// The requested dtype's own converter first; failing that, the value's inferred dtype (int →
/// int32, else int64; float → float32 without a request, float64 with one; complex →
/// complex128; bool → bool), cast to the requested dtype where `IsCompatible` allows.
fn convert(v: Value, requested: Option<DType>) -> Result<DType, Error> {
    if let Some(d) = requested
        && let Some(&(_, conv)) = DIRECT.iter().find(|(t, _)| *t == d)
    {
        match run_converter(conv, d, v) {
            Ok(()) => return Ok(d),
            Err(Reject::ExceptionSet) => return Err(Reject::ExceptionSet.into_error()),
            Err(_) => {}
        }
    }
    let inferred = match (v, requested) {
        (Value::Float(_), None) => {
            run_converter(Converter::Float { checked: true }, Float32, v).map(|()| Float32)
        }
        (Value::Float(_), Some(_)) => {
            run_converter(Converter::Float { checked: false }, Float64, v).map(|()| Float64)
        }
        (Value::Int(_), None) => match run_converter(Converter::Int32, Int32, v) {
            Err(Reject::FoundInt64) => run_converter(Converter::Int64, Int64, v).map(|()| Int64),
            r => r.map(|()| Int32),
        },
        (Value::Int(_), Some(_)) => run_converter(Converter::Int64, Int64, v).map(|()| Int64),
        (Value::Complex(..), _) => Ok(Complex128),
        (Value::Bool(_), _) => Ok(Bool),
    }
    .map_err(Reject::into_error)?;
    match requested {
        Some(d) if d != inferred && !is_compatible(d, inferred) => Err(Error::refused(
            Exception::TypeError,
            format!("Cannot convert {v} to EagerTensor of dtype {}", tf_name(d)),
        )),
        Some(d) => Ok(d),
        None => Ok(inferred),
    }
}

/// `tf.constant(v, dtype)` as Python code reaches it. With auto dtype conversion it is patched:
/// `result_type(v, dtype)` runs first (a Python int outside int32 raises `OverflowError`, SAFE
/// refuses its pairs), and without a dtype the scalar gets its weak type's dtype.
fn constant(mode: Mode, v: Value, dtype: Option<DType>) -> Result<DType, Error> {
    if mode == Mode::Legacy {
        return convert(v, dtype);
    }
    let node = scalar_node(v)?;
    match dtype {
        Some(d) => {
            join(mode, node, s(d))?;
            convert(v, Some(d))
        }
        None => convert(v, Some(node.dtype)),
    }
}

/// `ops.convert_to_tensor(v, dtype_hint=hint)`: the hint is tried, and a `TypeError` or
/// `ValueError` falls back to the scalar's own conversion.
fn convert_with_hint(mode: Mode, v: Value, hint: DType) -> Result<DType, Error> {
    match constant(mode, v, Some(hint)) {
        Err(e)
            if matches!(
                e.exception(),
                Some(Exception::TypeError | Exception::ValueError)
            ) =>
        {
            constant(mode, v, None)
        }
        r => r,
    }
}

// ---------------------------------------------------------------------------------------------
// Ops: kernels and conversions
// ---------------------------------------------------------------------------------------------

/// How a kernel's inputs are typed.
#[derive(Clone, Copy, Debug)]
enum Inputs {
    /// A type attribute `T` shared by the inputs, set by input #0, with the dtypes it accepts in
    /// TensorFlow's order (`None`: every dtype of the model).
    Attr(Option<&'static [DType]>),
    /// Every input has this dtype.
    Fixed(DType),
}

/// A TensorFlow kernel: op name, inputs, and the dtypes with no CPU kernel.
#[derive(Clone, Copy, Debug)]
struct Kernel {
    /// The op's name (`AddV2`).
    name: &'static str,
    /// How its inputs are typed.
    inputs: Inputs,
    /// Dtypes it has no CPU kernel for (`NotFoundError`).
    no_device: &'static [DType],
}

/// How legacy TensorFlow converts an op's Python scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conversion {
    /// `math_ops.add`: `x` alone, `y` with `x`'s dtype as hint.
    Hint,
    /// `_truediv_python3`: as [`Conversion::Hint`], then the dtypes must be equal (`TypeError`).
    HintSameDtype,
    /// `args_to_matching_eager`: the first operand that is already a tensor sets the dtype
    /// (else the first scalar's own conversion), and every scalar is converted to it.
    Matching,
}

/// One op in TensorFlow.
#[derive(Clone, Copy, Debug)]
struct TfOp {
    /// The op.
    op: Op,
    /// The kernel `tf.math`'s function runs.
    kernel: Kernel,
    /// How legacy TensorFlow (and an unpatched op) converts Python scalars.
    conversion: Conversion,
    /// Patched by `weak_tensor_ops.py` under auto dtype conversion (promotes first).
    patched: bool,
}

/// `AddV2`'s `T`. Each kernel's list is in TensorFlow's order, as its messages print it.
const ADD_V2: &[DType] = &[
    BFloat16, Float16, Float32, Float64, UInt8, UInt16, UInt32, UInt64, Int8, Int16, Int32, Int64,
    Complex64, Complex128,
];
/// `Sub`'s `T`.
const SUB: &[DType] = &[
    BFloat16, Float16, Float32, Float64, UInt8, Int8, UInt16, Int16, Int32, Int64, Complex64,
    Complex128, UInt32, UInt64,
];
/// `Mul`'s and `FloorDiv`'s `T`.
const MUL_FLOOR_DIV: &[DType] = &[
    BFloat16, Float16, Float32, Float64, UInt8, Int8, UInt16, Int16, Int32, UInt32, UInt64, Int64,
    Complex64, Complex128,
];
/// `Pow`'s `T`: no unsigned integers.
const POW: &[DType] = &[
    BFloat16, Float32, Float16, Float64, Int8, Int16, Int32, Int64, Complex64, Complex128,
];
/// `Less`'s `T`: no complex.
const LESS: &[DType] = &[
    Float32, Float64, Int32, UInt8, Int16, Int8, Int64, BFloat16, UInt16, Float16, UInt32, UInt64,
];
/// `BitwiseAnd`'s `T`: integers only.
const BITWISE: &[DType] = &[Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64];

/// The ops: kernel, legacy conversion, whether auto dtype conversion patches them.
const OPS: &[TfOp] = &[
    TfOp {
        op: Op::Add,
        kernel: Kernel {
            name: "AddV2",
            inputs: Inputs::Attr(Some(ADD_V2)),
            no_device: &[],
        },
        conversion: Conversion::Hint,
        patched: true,
    },
    TfOp {
        op: Op::Subtract,
        kernel: Kernel {
            name: "Sub",
            inputs: Inputs::Attr(Some(SUB)),
            no_device: &[],
        },
        conversion: Conversion::Matching,
        patched: true,
    },
    TfOp {
        op: Op::Multiply,
        kernel: Kernel {
            name: "Mul",
            inputs: Inputs::Attr(Some(MUL_FLOOR_DIV)),
            no_device: &[],
        },
        conversion: Conversion::Matching,
        patched: true,
    },
    TfOp {
        op: Op::TrueDivide,
        kernel: Kernel {
            name: "RealDiv",
            inputs: Inputs::Attr(None),
            no_device: &[],
        },
        conversion: Conversion::HintSameDtype,
        patched: true,
    },
    TfOp {
        op: Op::FloorDivide,
        kernel: Kernel {
            name: "FloorDiv",
            inputs: Inputs::Attr(Some(MUL_FLOOR_DIV)),
            no_device: &[Complex64, Complex128],
        },
        conversion: Conversion::Matching,
        patched: true,
    },
    TfOp {
        op: Op::Power,
        kernel: Kernel {
            name: "Pow",
            inputs: Inputs::Attr(Some(POW)),
            no_device: &[],
        },
        conversion: Conversion::Matching,
        patched: true,
    },
    TfOp {
        op: Op::Equal,
        kernel: Kernel {
            name: "Equal",
            inputs: Inputs::Attr(None),
            no_device: &[],
        },
        conversion: Conversion::Matching,
        patched: true,
    },
    TfOp {
        op: Op::Less,
        kernel: Kernel {
            name: "Less",
            inputs: Inputs::Attr(Some(LESS)),
            no_device: &[],
        },
        conversion: Conversion::Matching,
        patched: false,
    },
    TfOp {
        op: Op::LogicalAnd,
        kernel: Kernel {
            name: "LogicalAnd",
            inputs: Inputs::Fixed(Bool),
            no_device: &[],
        },
        conversion: Conversion::Matching,
        patched: false,
    },
    TfOp {
        op: Op::BitwiseAnd,
        kernel: Kernel {
            name: "BitwiseAnd",
            inputs: Inputs::Attr(Some(BITWISE)),
            no_device: &[],
        },
        conversion: Conversion::Matching,
        patched: false,
    },
];

/// What each op makes of its kernel's dtype (bool, unsigned, signed, float, complex); ops not
/// listed keep it. True division maps integers through `_TRUEDIV_TABLE` (8- and 16-bit to
/// float32, wider to float64) and has no entry for bool.
const RESULTS: &[OpRule] = &[
    OpRule::kinds(
        Op::TrueDivide,
        [
            Outcome::Refuse(
                Exception::TypeError,
                "Invalid dtype tf.{dtype} in __truediv__. Expected one of {tf.uint8, tf.int8, \
                 tf.uint16, tf.int16, tf.uint32, tf.int32, tf.uint64, tf.int64, tf.bfloat16, \
                 tf.float16, tf.float32, tf.float64, tf.complex64, tf.complex128}.",
            ),
            Outcome::To(Float64),
            Outcome::To(Float64),
            Outcome::Same,
            Outcome::Same,
        ],
    )
    .except(&[
        (UInt8, Outcome::To(Float32)),
        (Int8, Outcome::To(Float32)),
        (UInt16, Outcome::To(Float32)),
        (Int16, Outcome::To(Float32)),
    ]),
    OpRule::all(Op::Equal, Outcome::Bool),
    OpRule::all(Op::Less, Outcome::Bool),
    OpRule::all(Op::LogicalAnd, Outcome::Bool),
];

impl Kernel {
    /// Executes the kernel on its inputs' dtypes: `T` must be allowed, have a CPU kernel, and
    /// match every input. `fast`: the eager fast path ran it (its messages end in ` name:`).
    fn run(&self, dtypes: &[DType], fast: bool) -> Result<DType, Error> {
        let first = *dtypes.first().ok_or(Reason::EmptyOperands)?;
        let t = match self.inputs {
            Inputs::Fixed(d) => d,
            Inputs::Attr(Some(allowed)) if !allowed.contains(&first) => {
                let names: Vec<&str> = allowed.iter().map(|&d| tf_name(d)).collect();
                return Err(Error::refused(
                    Exception::InvalidArgumentError,
                    format!(
                        "Value for attr 'T' of {} is not in the list of allowed values: {}",
                        tf_name(first),
                        names.join(", ")
                    ),
                ));
            }
            Inputs::Attr(_) => first,
        };
        if self.no_device.contains(&t) {
            let name = self.name;
            return Err(Error::refused(
                Exception::NotFoundError,
                format!(
                    "Could not find device for node: {{{{node {name}}}}} = {name}[T=DT_{}]",
                    tf_name(t).to_ascii_uppercase()
                ),
            ));
        }
        if let Some((i, &d)) = dtypes.iter().enumerate().find(|&(_, &d)| d != t) {
            return Err(Error::refused(
                Exception::InvalidArgumentError,
                format!(
                    "cannot compute {name} as input #{i}(zero-based) was expected to be a {} \
                     tensor but is a {} tensor [Op:{name}]{}",
                    tf_name(t),
                    tf_name(d),
                    if fast { " name:" } else { "" },
                    name = self.name,
                ),
            ));
        }
        Ok(t)
    }
}

/// The op's entry.
fn spec(op: Op) -> Result<&'static TfOp, Error> {
    OPS.iter().find(|s| s.op == op).ok_or_else(|| {
        Error::refused(
            Exception::NotImplementedError,
            format!("the TensorFlow rules have no entry for {op}"),
        )
    })
}

/// Runs the kernel on the converted inputs and applies the op's result rule.
fn finish(spec: &TfOp, dtypes: &[DType], fast: bool, weak: bool) -> Result<Arg, Error> {
    let t = spec.kernel.run(dtypes, fast)?;
    let promoted = Promotion {
        dtype: t,
        weak_type: weak,
    };
    let p = ops::rule_for(RESULTS, spec.op).apply(promoted, Float32, &[])?;
    Ok(Arg::tensor(p.dtype, p.weak_type))
}

/// A patched op (ALL and SAFE): `result_type(x, y)`, both operands converted to it (Python
/// scalars through the patched `tf.constant`), then the kernel; the result is weak if the
/// promotion is.
fn patched(mode: Mode, spec: &TfOp, x: Arg, y: Arg) -> Result<Arg, Error> {
    let t = promote(mode, &[x, y])?;
    for a in [x, y] {
        if let Arg::Py(v) = a {
            constant(mode, v, Some(t.dtype))?;
        }
    }
    finish(spec, &[t.dtype, t.dtype], true, t.weak)
}

/// `math_ops.add` / `_truediv_python3` without auto dtype conversion.
fn python_wrapper(mode: Mode, spec: &TfOp, x: Arg, y: Arg) -> Result<Arg, Error> {
    let dx = match x {
        Arg::Tensor { dtype, .. } => dtype,
        Arg::Py(v) => constant(mode, v, None)?,
    };
    let dy = match y {
        Arg::Tensor { dtype, .. } => dtype,
        Arg::Py(v) => convert_with_hint(mode, v, dx)?,
    };
    if spec.conversion == Conversion::HintSameDtype && dx != dy {
        return Err(Error::refused(
            Exception::TypeError,
            format!("`x` and `y` must have the same dtype, got tf.{dx} != tf.{dy}."),
        ));
    }
    finish(spec, &[dx, dy], true, false)
}

/// `convert_to_tensor(tensor, dtype)` on a tensor of another dtype (the eager fallback of ops
/// with fixed input types).
fn requested_dtype_error(requested: DType, arg: Arg) -> Error {
    let (dtype, repr) = match arg {
        Arg::Tensor {
            dtype,
            value: Some(v),
            ..
        } => (
            dtype,
            format!("<tf.Tensor: shape=(), dtype={dtype}, numpy={v}>"),
        ),
        Arg::Tensor { dtype, .. } => (
            dtype,
            format!(
                "<tf.Tensor: shape=(2,), dtype={dtype}, numpy={}>",
                ones_repr(dtype)
            ),
        ),
        Arg::Py(_) => (requested, String::new()),
    };
    Error::refused(
        Exception::ValueError,
        format!(
            "Tensor conversion requested dtype {requested} for Tensor with dtype {dtype}: {repr}"
        ),
    )
}

/// An eager op through `args_to_matching_eager`. The C++ fast path takes tensors and Python
/// ints and floats; a weak tensor or a Python complex sends the call to the Python fallback,
/// whose conversions go through (patched) `tf.constant` and which checks fixed input types
/// while converting.
fn matching(mode: Mode, spec: &TfOp, args: &[Arg]) -> Result<Arg, Error> {
    let fallback = args.iter().any(|a| {
        matches!(
            a,
            Arg::Tensor { weak: true, .. } | Arg::Py(Value::Complex(..))
        )
    });
    let conv = |v: Value, d: Option<DType>| {
        if fallback {
            constant(mode, v, d)
        } else {
            convert(v, d)
        }
    };
    let mut dtypes = Vec::with_capacity(args.len());
    match spec.kernel.inputs {
        Inputs::Fixed(want) => {
            for &a in args {
                dtypes.push(match a {
                    Arg::Tensor { dtype, .. } if fallback && dtype != want => {
                        return Err(requested_dtype_error(want, a));
                    }
                    Arg::Tensor { dtype, .. } => dtype,
                    Arg::Py(v) => conv(v, Some(want))?,
                });
            }
        }
        Inputs::Attr(_) => {
            let mut t = args.iter().find_map(|a| match a {
                Arg::Tensor { dtype, .. } => Some(*dtype),
                Arg::Py(_) => None,
            });
            for &a in args {
                dtypes.push(match (a, t) {
                    (Arg::Tensor { dtype, .. }, _) => dtype,
                    (Arg::Py(v), Some(t)) => conv(v, Some(t))?,
                    (Arg::Py(v), None) => {
                        let d = conv(v, None)?;
                        t = Some(d);
                        d
                    }
                });
            }
        }
    }
    finish(spec, &dtypes, !fallback, false)
}

/// One call of the binary op.
fn call(mode: Mode, spec: &TfOp, x: Arg, y: Arg) -> Result<Arg, Error> {
    if mode != Mode::Legacy && spec.patched {
        return patched(mode, spec, x, y);
    }
    match spec.conversion {
        Conversion::Matching => matching(mode, spec, &[x, y]),
        Conversion::Hint | Conversion::HintSameDtype => python_wrapper(mode, spec, x, y),
    }
}

/// `functools.reduce(op, args)`; a single operand is `op(x, x)`.
fn fold(mode: Mode, spec: &TfOp, args: &[Arg]) -> Result<Promotion, Error> {
    let (&first, rest) = args.split_first().ok_or(Reason::EmptyOperands)?;
    let acc = match rest.split_first() {
        None => call(mode, spec, first, first)?,
        Some((&second, rest)) => rest
            .iter()
            .try_fold(call(mode, spec, first, second)?, |acc, &a| {
                call(mode, spec, acc, a)
            })?,
    };
    match acc {
        Arg::Tensor { dtype, weak, .. } => Ok(Promotion {
            dtype,
            weak_type: weak,
        }),
        Arg::Py(_) => Err(Reason::EmptyOperands.into()),
    }
}

// ---------------------------------------------------------------------------------------------
// The rule-set interface
// ---------------------------------------------------------------------------------------------

/// Plain promotion: `flexible_dtypes.result_type` in modes ALL and SAFE; in legacy mode, what
/// `tf.math.add` folded over the operands returns (a lone operand: its own conversion).
pub(crate) fn result_type(
    mode: Mode,
    _opts: Options,
    operands: &[Operand],
) -> Result<Promotion, Error> {
    let args = args_of(mode, operands)?;
    match (mode, args.as_slice()) {
        (Mode::Legacy, &[only]) => {
            let dtype = match only {
                Arg::Tensor { dtype, .. } => dtype,
                Arg::Py(v) => convert(v, None)?,
            };
            Ok(Promotion {
                dtype,
                weak_type: false,
            })
        }
        (Mode::Legacy, _) => fold(mode, spec(Op::Add)?, &args),
        _ => promote(mode, &args).map(|n| Promotion {
            dtype: n.dtype,
            weak_type: n.weak,
        }),
    }
}

/// Promotion of two types: a dtype is a 1-D tensor, a Python type the scalar `0`, `0.0` or
/// `0j` (weak int32, float32, complex128 under auto dtype conversion).
pub(crate) fn promote_types(mode: Mode, opts: Options, a: Node, b: Node) -> Result<DType, Error> {
    let operand = |n: Node| match n {
        Node::Dtype(d) => Operand::array(d),
        Node::Weak(t) => Operand::PyType(t),
    };
    result_type(mode, opts, &[operand(a), operand(b)]).map(|p| p.dtype)
}

/// The result of `op`, folded left to right over the operands (`op(x, x)` for one operand).
pub(crate) fn op_result(
    mode: Mode,
    _opts: Options,
    op: Op,
    operands: &[Operand],
) -> Result<Promotion, Error> {
    let args = args_of(mode, operands)?;
    fold(mode, spec(op)?, &args)
}

/// `None`: TensorFlow's lattice (modes ALL and SAFE) has weak int64 and weak float64 nodes, which
/// [`Node`] cannot express (its weak nodes are the three Python types), and legacy TensorFlow
/// has no promotion lattice at all. The lattice itself is [`LATTICE`], compiled internally, and
/// [`crate::Rules::named_lattice`] gives it with named nodes.
pub(crate) fn lattice(_mode: Mode, _opts: Options) -> Option<&'static Lattice<Node>> {
    None
}

/// Mode ALL's promotion lattice with its nodes named (`int8`, `~int32`); `None` for SAFE (which
/// refuses joins the lattice has) and legacy TensorFlow.
fn named_lattice(mode: Mode) -> Option<&'static Lattice<String>> {
    static L: OnceLock<Lattice<String>> = OnceLock::new();
    (mode == Mode::All).then(|| {
        L.get_or_init(|| {
            Lattice::from_edges(LATTICE.iter().map(|(n, up)| {
                (
                    n.to_string(),
                    up.iter().map(TfNode::to_string).collect::<Vec<_>>(),
                )
            }))
            .expect("TensorFlow's lattice is acyclic")
        })
    })
}

/// The registry row of one mode.
macro_rules! tensorflow_def {
    ($mode:expr, $names:expr, $summary:expr) => {
        RuleSetDef {
            named_lattice: |_| named_lattice($mode),
            ..RuleSetDef::new(
                $names,
                $summary,
                (
                    |o, a, b| promote_types($mode, o, a, b),
                    |o, ops| result_type($mode, o, ops),
                    |o, op, ops| op_result($mode, o, op, ops),
                    |o| lattice($mode, o),
                    knows,
                ),
            )
        }
    };
}

/// Mode ALL's row in the registry.
pub(crate) static DEF: RuleSetDef = tensorflow_def!(
    Mode::All,
    &["tensorflow", "tf"],
    "TensorFlow >= 2.15 auto dtype conversion, mode ALL"
);
/// Mode SAFE's row in the registry.
pub(crate) static DEF_SAFE: RuleSetDef = tensorflow_def!(
    Mode::Safe,
    &["tensorflow-safe", "tf-safe"],
    "TensorFlow auto dtype conversion, mode SAFE"
);
/// Legacy TensorFlow's row in the registry.
pub(crate) static DEF_LEGACY: RuleSetDef = tensorflow_def!(
    Mode::Legacy,
    &["tensorflow-legacy", "tf-legacy"],
    "TensorFlow without NumPy behaviour: no implicit promotion, order-dependent"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lattice_is_a_lattice_over_twenty_nodes() {
        let c = compiled();
        assert_eq!(c.lattice.len(), 20);
        assert!(c.lattice.is_lattice());
        for &(a, bs) in SAFE_REFUSED {
            for &b in bs {
                assert!(
                    c.index_of(a).is_some() && c.index_of(b).is_some(),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn the_named_lattice_joins_as_the_promotion_table() {
        let l = named_lattice(Mode::All).expect("mode ALL has one");
        let c = compiled();
        for (i, a) in c.lattice.nodes().iter().enumerate() {
            for (j, b) in c.lattice.nodes().iter().enumerate() {
                let name = |lub: Lub, nodes: &dyn Fn(usize) -> String| match lub {
                    Lub::Node(k) => Some(nodes(k)),
                    _ => None,
                };
                let want = name(c.lattice.join_index(i, j), &|k| {
                    c.lattice.node(k).to_string()
                });
                let got = l
                    .join(&a.to_string(), &b.to_string())
                    .and_then(|lub| name(lub, &|k| l.node(k).clone()));
                assert_eq!(got, want, "{a} {b}");
                // And the table: result_type of the two nodes.
                let r = join(Mode::All, *a, *b).expect("mode ALL refuses nothing");
                assert_eq!(Some(r.to_string()), want, "{a} {b}");
            }
        }
        assert!(named_lattice(Mode::Safe).is_none() && named_lattice(Mode::Legacy).is_none());
    }

    #[test]
    fn every_op_has_an_entry() {
        for op in Op::ALL {
            assert!(spec(op).is_ok(), "{op}");
        }
    }

    #[test]
    fn conversions_follow_py_seq_tensor() {
        assert_eq!(convert(Value::Int(1 << 40), None), Ok(Int64));
        assert_eq!(convert(Value::Int(300), Some(Int8)), Ok(Int8));
        assert_eq!(convert(Value::Bool(true), Some(Int32)), Ok(Int32));
        assert_eq!(
            convert(Value::Bool(true), Some(Int8))
                .unwrap_err()
                .exception(),
            Some(Exception::TypeError)
        );
        assert_eq!(convert(Value::Float(1e40), Some(Float16)), Ok(Float16));
        assert_eq!(
            convert(Value::Float(1e40), None).unwrap_err().exception(),
            Some(Exception::ValueError)
        );
        assert_eq!(
            convert(Value::Int(-1), Some(UInt64))
                .unwrap_err()
                .exception(),
            Some(Exception::SystemError)
        );
        assert_eq!(
            convert(Value::Int(u64::MAX as i128), Some(Complex64))
                .unwrap_err()
                .message(),
            Reject::OutOfRange.message()
        );
    }
}
