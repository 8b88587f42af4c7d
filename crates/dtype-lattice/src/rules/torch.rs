//! PyTorch 2.x, as torch 2.15.0 answers on the CPU (fixtures in `tests/fixtures/torch/`,
//! observations in `tools/torch.md`).
//!
//! - `torch.promote_types` is c10's `promoteTypes`: a lattice over bool, the signed integers,
//!   uint8, bfloat16/float16/float32/float64 and complex32/64/128 ([`PROMOTION`]), with
//!   uint16/32/64 and the float8 formats as isolated nodes that c10 checks first
//!   ([`UNPROMOTABLE`]): a float8 dtype promotes with nothing but itself, and uint16/32/64
//!   only with themselves and the real floats (which win). A Python type given as a dtype is
//!   torch's dtype of it (`int` → int64, `float` → float64).
//! - `torch.result_type` (and the common dtype of an elementwise op) sorts the operands into
//!   three categories, folds `promoteTypes` within each in operand order, and combines them
//!   with `combine_categories` ([`COMBINE`]): dimensioned tensors over zero-dim tensors over
//!   wrapped Python numbers, except that a lower category of a higher kind (an integer tensor
//!   with a float number) promotes, and a complex lower category makes a float higher one
//!   complex of its own precision ([`TO_COMPLEX`]: float16 + 1j → complex32, bfloat16 + 1j →
//!   bcomplex32). A Python float counts as the default dtype ([`Options::default_float`],
//!   float32 unless set), a Python complex as the default complex dtype.
//! - An op is what a CPU user of torch 2.15 gets from `torch.<op>(a, b)`: the Python binding's
//!   argument checks ([`BINDINGS`]), checks on the operands' own dtypes ([`BOOL_OPERAND`]),
//!   promotion, the op's result dtype ([`OPS`]: true division of integers gives the default
//!   float, comparisons bool), then whether the CPU kernel the call reaches is compiled for
//!   the dtype it computes in ([`KERNELS`]: `NotImplementedError: "add_stub" not implemented
//!   for 'UInt16'`), then value checks (integer `floor_divide` by a Python 0 or a zero-dim 0).
//!   Tensors (`DTYPE`) are taken to hold no zeros, as the fixtures' `torch.ones` do.
//! - Not representable (refused as unsupported): weak tensors (`~DTYPE`), dtypes torch lacks
//!   (uint1/2/4, int1/2/4, float4/6 and the float8 formats torch does not have), bcomplex32 as
//!   an operand (torch 2.15 makes it only as a result: `torch.ones` cannot fill it and its
//!   promotion with other dtypes is not observed), and Python ints beyond int64.

use std::sync::OnceLock;

use crate::dtype::DType::{self, *};
use crate::dtype::Kind;
use crate::error::{Error, Exception, Reason};
use crate::lattice::Lattice;
use crate::operand::{Node, Operand, PyType, Value};
use crate::ops::{Op, OpRule, Outcome};
use crate::rules::compiled::{Compiled, NO_JOIN};
use crate::rules::{OptionName, Options, Promotion, RuleSetDef, no_weak, unsupported};

/// The rule set's name in `unsupported` errors.
const NAME: &str = "torch";

/// A dtype node.
const fn d(t: DType) -> Node {
    Node::Dtype(t)
}

/// torch's dtypes with c10's `ScalarType` names, as its messages print them.
const SCALAR_TYPES: &[(DType, &str)] = &[
    (Bool, "Bool"),
    (UInt8, "Byte"),
    (UInt16, "UInt16"),
    (UInt32, "UInt32"),
    (UInt64, "UInt64"),
    (Int8, "Char"),
    (Int16, "Short"),
    (Int32, "Int"),
    (Int64, "Long"),
    (BFloat16, "BFloat16"),
    (Float16, "Half"),
    (Float32, "Float"),
    (Float64, "Double"),
    (Complex32, "ComplexHalf"),
    (BComplex32, "BComplex32"),
    (Complex64, "ComplexFloat"),
    (Complex128, "ComplexDouble"),
    (Float8E4M3Fn, "Float8_e4m3fn"),
    (Float8E5M2, "Float8_e5m2"),
    (Float8E4M3Fnuz, "Float8_e4m3fnuz"),
    (Float8E5M2Fnuz, "Float8_e5m2fnuz"),
    (Float8E8M0Fnu, "Float8_e8m0fnu"),
];

/// Dtypes torch 2.15 makes only as results: not accepted as operands.
const RESULT_ONLY: &[DType] = &[BComplex32];

/// c10's `ScalarType` name of a dtype (the NumPy name for dtypes torch lacks, which never
/// reach a message).
fn scalar_type_name(t: DType) -> &'static str {
    SCALAR_TYPES
        .iter()
        .find(|(d, _)| *d == t)
        .map_or(t.name(), |&(_, n)| n)
}

/// `promoteTypes`' table as a lattice, node → nodes directly above. uint16/32/64 and the
/// float8 formats are isolated: [`UNPROMOTABLE`] answers for them.
const PROMOTION: &[(Node, &[Node])] = &[
    (d(Bool), &[d(UInt8), d(Int8)]),
    (d(UInt8), &[d(Int16)]),
    (d(Int8), &[d(Int16)]),
    (d(Int16), &[d(Int32)]),
    (d(Int32), &[d(Int64)]),
    (d(Int64), &[d(BFloat16), d(Float16)]),
    (d(BFloat16), &[d(Float32)]),
    (d(Float16), &[d(Float32), d(Complex32)]),
    (d(Float32), &[d(Float64), d(Complex64)]),
    (d(Float64), &[d(Complex128)]),
    (d(Complex32), &[d(Complex64)]),
    (d(Complex64), &[d(Complex128)]),
    (d(Complex128), &[]),
    (d(UInt16), &[]),
    (d(UInt32), &[]),
    (d(UInt64), &[]),
    (d(Float8E4M3Fn), &[]),
    (d(Float8E5M2), &[]),
    (d(Float8E4M3Fnuz), &[]),
    (d(Float8E5M2Fnuz), &[]),
    (d(Float8E8M0Fnu), &[]),
];

/// A class of dtypes c10's `promoteTypes` checks before its table, for two different dtypes.
struct Unpromotable {
    /// The dtypes of the class.
    class: &'static [DType],
    /// Whether a real float partner is the answer (`isFloatingType(other)` → other).
    float_partner_wins: bool,
    /// The `RuntimeError` message; `{a}`, `{b}`: the two `ScalarType` names in call order.
    message: &'static str,
}

/// torch's float8 formats.
const FLOAT8: &[DType] = &[
    Float8E4M3Fn,
    Float8E5M2,
    Float8E4M3Fnuz,
    Float8E5M2Fnuz,
    Float8E8M0Fnu,
];

/// c10's checks ahead of the table, in its order.
const UNPROMOTABLE: &[Unpromotable] = &[
    Unpromotable {
        class: FLOAT8,
        float_partner_wins: false,
        message: "Promotion for Float8 Types is not supported, attempted to promote {a} and {b}",
    },
    Unpromotable {
        class: &[UInt16, UInt32, UInt64],
        float_partner_wins: true,
        message: "Promotion for uint16, uint32, uint64 types is not supported, attempted to \
                  promote {a} and {b}",
    },
];

/// What `combine_categories(higher, lower)` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Combine {
    /// The higher category's dtype.
    Higher,
    /// The lower category's dtype.
    Lower,
    /// `promoteTypes(higher, lower)`.
    Promote,
    /// The complex dtype of the higher (float) dtype's precision ([`TO_COMPLEX`]).
    ComplexOfHigher,
}

/// The kind of a category's dtype as `combine_categories` tests it: undefined (no operand of
/// the category), bool, integer, float (with bfloat16 and float8), complex.
fn class_of(t: Option<DType>) -> usize {
    match t {
        None => 0,
        Some(t) => match t.kind() {
            Kind::Bool => 1,
            Kind::UnsignedInt | Kind::SignedInt => 2,
            Kind::Float => 3,
            Kind::Complex => 4,
            Kind::Extended | Kind::Void => 0,
        },
    }
}

/// `combine_categories(higher, lower)`, by class of higher (rows) and lower (columns):
/// undefined, bool, integer, float, complex.
const COMBINE: [[Combine; 5]; 5] = {
    use Combine::*;
    [
        [Lower, Lower, Lower, Lower, Lower],
        [Higher, Promote, Promote, Promote, Lower],
        [Higher, Higher, Higher, Promote, Lower],
        [Higher, Higher, Higher, Higher, ComplexOfHigher],
        [Higher, Higher, Higher, Higher, Higher],
    ]
};

/// c10's `toComplexType` for the real floats; others raise
/// `RuntimeError: Unknown Complex ScalarType for …`.
const TO_COMPLEX: &[(DType, DType)] = &[
    (Float16, Complex32),
    (BFloat16, BComplex32),
    (Float32, Complex64),
    (Float64, Complex128),
];

/// The default complex dtype for a default float (`set_default_dtype`); complex64 otherwise.
const DEFAULT_COMPLEX: &[(DType, DType)] = &[(Float16, Complex32), (Float64, Complex128)];

/// The three categories of `ResultTypeState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Category {
    /// Tensors with at least one dimension (`dimResult`).
    Dim = 0,
    /// Zero-dim tensors (`zeroResult`).
    Zero = 1,
    /// Wrapped Python numbers (`wrappedResult`).
    Wrapped = 2,
}

/// [`PROMOTION`], compiled once.
fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| Compiled::new(PROMOTION.iter().map(|&(n, a)| (n, a.to_vec()))))
}

/// Whether torch has this dtype (as an operand).
pub(crate) fn knows(dtype: DType) -> bool {
    SCALAR_TYPES.iter().any(|&(t, _)| t == dtype) && !RESULT_ONLY.contains(&dtype)
}

/// Refuses dtypes torch cannot take as operands.
fn check_known(op: &Operand, dtype: DType) -> Result<DType, Error> {
    if RESULT_ONLY.contains(&dtype) {
        Err(unsupported(
            NAME,
            op,
            format!("torch 2.15 makes {dtype} only as a result (its promotion is not observed)"),
        ))
    } else if knows(dtype) {
        Ok(dtype)
    } else {
        Err(unsupported(NAME, op, format!("it has no dtype {dtype}")))
    }
}

/// The default float and complex dtypes (`torch.get_default_dtype()`,
/// `get_default_complex_dtype()`).
fn defaults(opts: Options) -> Result<(DType, DType), Error> {
    let float = match opts.default_float {
        None => Float32,
        Some(t) if t.kind() == Kind::Float => check_known(&Operand::array(t), t)?,
        Some(_) => {
            return Err(Error::refused(
                Exception::TypeError,
                "only floating-point types are supported as the default type",
            ));
        }
    };
    let complex = DEFAULT_COMPLEX
        .iter()
        .find(|(f, _)| *f == float)
        .map_or(Complex64, |&(_, c)| c);
    Ok((float, complex))
}

/// The category and dtype an operand contributes (`update_result_type_state`).
fn contribution(defaults: (DType, DType), op: &Operand) -> Result<(Category, DType), Error> {
    let (float, complex) = defaults;
    Ok(match *op {
        Operand::Array { weak: true, .. } => return Err(no_weak(NAME, op, "tensors")),
        Operand::Array { dtype, .. } => (Category::Dim, check_known(op, dtype)?),
        Operand::Scalar { dtype, .. } => (Category::Zero, check_known(op, dtype)?),
        Operand::Literal(Value::Bool(_)) => (Category::Wrapped, Bool),
        Operand::Literal(Value::Int(v)) if i64::try_from(v).is_err() => {
            return Err(unsupported(
                NAME,
                op,
                "Python ints beyond int64 are not modelled".into(),
            ));
        }
        Operand::Literal(v) => match v.py_type() {
            Some(t) => (Category::Wrapped, wrapped_dtype(t, float, complex)),
            None => (Category::Wrapped, Bool),
        },
        Operand::PyType(t) => (Category::Wrapped, wrapped_dtype(t, float, complex)),
    })
}

/// The dtype of a wrapped Python number: int64, or the default float / complex dtype.
fn wrapped_dtype(t: PyType, float: DType, complex: DType) -> DType {
    match t {
        PyType::Int => Int64,
        PyType::Float => float,
        PyType::Complex => complex,
    }
}

/// c10's `promoteTypes(a, b)` on torch dtypes.
fn promote(a: DType, b: DType) -> Result<DType, Error> {
    let r = compiled().step(a.index() as u8, b.index());
    if r != NO_JOIN {
        return Ok(Node::from_index(r as usize).dtype_or_default());
    }
    for rule in UNPROMOTABLE {
        let (in_a, in_b) = (rule.class.contains(&a), rule.class.contains(&b));
        if !(in_a || in_b) {
            continue;
        }
        if rule.float_partner_wins
            && let Some(f) = [a, b].into_iter().find(|t| t.kind() == Kind::Float)
        {
            return Ok(f);
        }
        let message = rule
            .message
            .replace("{a}", scalar_type_name(a))
            .replace("{b}", scalar_type_name(b));
        return Err(Error::refused(Exception::RuntimeError, message));
    }
    // Every pair of torch dtypes is in the table or in a checked class.
    Err(Error::refused(
        Exception::RuntimeError,
        format!(
            "Promotion from {} and {} is unsupported.",
            scalar_type_name(a),
            scalar_type_name(b)
        ),
    ))
}

/// `promote_skip_undefined`.
fn promote_skip_undefined(a: Option<DType>, b: Option<DType>) -> Result<Option<DType>, Error> {
    Ok(match (a, b) {
        (Some(a), Some(b)) => Some(promote(a, b)?),
        (a, None) => a,
        (None, b) => b,
    })
}

/// `combine_categories(higher, lower)`.
fn combine(higher: Option<DType>, lower: Option<DType>) -> Result<Option<DType>, Error> {
    match COMBINE[class_of(higher)][class_of(lower)] {
        Combine::Higher => Ok(higher),
        Combine::Lower => Ok(lower),
        Combine::Promote => promote_skip_undefined(higher, lower),
        Combine::ComplexOfHigher => {
            let Some(h) = higher else { return Ok(lower) };
            TO_COMPLEX
                .iter()
                .find(|(f, _)| *f == h)
                .map(|&(_, c)| Some(c))
                .ok_or_else(|| {
                    Error::refused(
                        Exception::RuntimeError,
                        format!("Unknown Complex ScalarType for {}", scalar_type_name(h)),
                    )
                })
        }
    }
}

/// `torch.promote_types(a, b)`; a Python type stands for torch's dtype of it (`float` →
/// float64).
pub(crate) fn promote_types(_opts: Options, a: Node, b: Node) -> Result<DType, Error> {
    let dtype = |n: Node| {
        let t = n.dtype_or_default();
        check_known(&Operand::array(t), t)
    };
    promote(dtype(a)?, dtype(b)?)
}

/// `torch.result_type` generalised to any number of operands, as TensorIterator computes a
/// common dtype: the `ResultTypeState` fold in operand order, then the categories combined.
pub(crate) fn result_type(opts: Options, operands: &[Operand]) -> Result<Promotion, Error> {
    if operands.is_empty() {
        return Err(Reason::EmptyOperands.into());
    }
    let defaults = defaults(opts)?;
    let mut state: [Option<DType>; 3] = [None; 3];
    for op in operands {
        let (category, dtype) = contribution(defaults, op)?;
        let slot = &mut state[category as usize];
        *slot = promote_skip_undefined(*slot, Some(dtype))?;
    }
    let [dim, zero, wrapped] = state;
    let dtype = combine(dim, combine(zero, wrapped)?)?;
    let dtype = dtype.ok_or_else(|| Error::from(Reason::EmptyOperands))?;
    Ok(Promotion {
        dtype,
        weak_type: false,
    })
}

/// The lattice of `promoteTypes`' table; uint16/32/64 and the float8 formats are isolated
/// nodes (c10 answers for them ahead of the table, see [`UNPROMOTABLE`]).
pub(crate) fn lattice(_opts: Options) -> Option<&'static Lattice<Node>> {
    Some(&compiled().lattice)
}

// ---------------------------------------------------------------------------------------
// Ops
// ---------------------------------------------------------------------------------------

/// torch's function names for the ops.
const TORCH_NAMES: &[(Op, &str)] = &[
    (Op::Add, "add"),
    (Op::Subtract, "sub"),
    (Op::Multiply, "mul"),
    (Op::TrueDivide, "true_divide"),
    (Op::FloorDivide, "floor_divide"),
    (Op::Power, "pow"),
    (Op::Equal, "eq"),
    (Op::Less, "lt"),
    (Op::LogicalAnd, "logical_and"),
    (Op::BitwiseAnd, "bitwise_and"),
];

/// torch's name of an op (`sub`, `pow`, …).
fn torch_name(op: Op) -> &'static str {
    TORCH_NAMES
        .iter()
        .find(|(o, _)| *o == op)
        .map_or(op.name(), |&(_, n)| n)
}

/// Which Python numbers the binding of `torch.<op>` accepts in place of tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Binding {
    /// Either or both operands may be Python numbers (`torch.add(0, 0)` is an int64 tensor).
    Numbers,
    /// One operand may be a Python number, not both (`pow`, `bitwise_and`).
    NotBothNumbers,
    /// The first operand must be a tensor (`eq(Tensor, Number)` exists, not the reverse).
    TensorFirst,
    /// Both must be tensors.
    TensorsOnly,
}

/// The Python binding of each op.
const BINDINGS: &[(Op, Binding)] = &[
    (Op::Add, Binding::Numbers),
    (Op::Subtract, Binding::Numbers),
    (Op::Multiply, Binding::Numbers),
    (Op::TrueDivide, Binding::Numbers),
    (Op::FloorDivide, Binding::Numbers),
    (Op::Power, Binding::NotBothNumbers),
    (Op::BitwiseAnd, Binding::NotBothNumbers),
    (Op::Equal, Binding::TensorFirst),
    (Op::Less, Binding::TensorFirst),
    (Op::LogicalAnd, Binding::TensorsOnly),
];

/// `TypeError` when no overload of the binding matches; `{op}`, `{a}`, `{b}`: the function and
/// the Python types of the arguments (`Tensor`, `int`, …).
const INVALID_COMBINATION: &str =
    "{op}() received an invalid combination of arguments - got ({a}, {b}), but expected one of:";

/// `TypeError` for a Python number where only a tensor is accepted.
const MUST_BE_TENSOR: &str = "{op}(): argument '{arg}' (position {pos}) must be Tensor, not {t}";

/// Ops refused on bool operands before promotion (on the operands' own dtypes; a Python
/// `True` is a bool): op, exception, message when both are bool, message when one is.
const BOOL_OPERAND: &[(Op, Exception, &str, &str)] = &[(
    Op::Subtract,
    Exception::NotImplementedError,
    "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or \
     `logical_xor()` operator instead.",
    "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to \
     invert a mask, use the `~` or `logical_not()` operator instead.",
)];

/// Ops whose kernel computes in the promoted dtype and writes bool.
const COMPARISONS: &[Op] = &[Op::Equal, Op::Less, Op::LogicalAnd];

/// The result dtype after promotion (bool, unsigned, signed, float, complex); ops not listed
/// keep it.
const OPS: &[OpRule] = &[
    OpRule::integers_to(Op::TrueDivide, Outcome::DefaultFloat),
    OpRule::all(Op::Equal, Outcome::Bool),
    OpRule::all(Op::Less, Outcome::Bool),
    OpRule::all(Op::LogicalAnd, Outcome::Bool),
];

/// Which call reaches a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// Any call (the op's general kernel).
    Always,
    /// The second operand is a CPU scalar (a Python number or a zero-dim tensor) and the dtype
    /// a reduced float ([`REDUCED_FLOATS`]): `iter.is_scalar(2)` kernels.
    ScalarOtherReducedFloat,
    /// `pow(Tensor, Number)` with the number 0: `out.fill_(1)`.
    ExponentZero,
    /// `pow(Tensor, Number)` with the number 1: `out.copy_(base)`.
    ExponentOne,
    /// `pow(Number, Tensor)` with the number 1: `out.fill_(1)`.
    BaseOne,
}

/// A CPU kernel: the op and call that reach it, the name its dispatch reports, the dtypes
/// it is compiled for.
struct Kernel {
    /// The op.
    op: Op,
    /// The calls that reach it.
    path: Path,
    /// The name its dispatch reports when a dtype is missing.
    name: &'static str,
    /// The dtypes it is compiled for.
    dtypes: &'static [DType],
}

/// float16, bfloat16 and the float8 formats (`isReducedFloatingType`).
const REDUCED_FLOATS: &[DType] = &[
    Float16,
    BFloat16,
    Float8E4M3Fn,
    Float8E5M2,
    Float8E4M3Fnuz,
    Float8E5M2Fnuz,
    Float8E8M0Fnu,
];

/// `AT_DISPATCH_REDUCED_FLOATING_TYPES`.
const HALF_TYPES: &[DType] = &[Float16, BFloat16];

/// `add_stub` (add and sub).
const ADD_TYPES: &[DType] = &[
    Bool, UInt8, Int8, Int16, Int32, Int64, BFloat16, Float16, Float32, Float64, Complex32,
    Complex64, Complex128,
];

/// `mul_cpu`: every dtype but bcomplex32.
const MUL_TYPES: &[DType] = &[
    Bool,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Int8,
    Int16,
    Int32,
    Int64,
    BFloat16,
    Float16,
    Float32,
    Float64,
    Complex32,
    Complex64,
    Complex128,
    Float8E4M3Fn,
    Float8E5M2,
    Float8E4M3Fnuz,
    Float8E5M2Fnuz,
    Float8E8M0Fnu,
];

/// `div_cpu` (true division).
const DIV_TYPES: &[DType] = &[BFloat16, Float16, Float32, Float64, Complex64, Complex128];

/// The integer dtypes of `AT_DISPATCH_INTEGRAL_TYPES`.
const INTEGRAL_TYPES: &[DType] = &[UInt8, Int8, Int16, Int32, Int64];

/// `div_floor_cpu`: the integral and the real float kernels.
const DIV_FLOOR_TYPES: &[DType] = &[
    UInt8, Int8, Int16, Int32, Int64, BFloat16, Float16, Float32, Float64,
];

/// `pow` (tensor-tensor and tensor-scalar kernels).
const POW_TYPES: &[DType] = &[
    UInt8, Int8, Int16, Int32, Int64, BFloat16, Float16, Float32, Float64, Complex64, Complex128,
];

/// Every dtype a torch tensor has, including the result-only bcomplex32 (`copy_`, `eq`).
const ALL_TYPES: &[DType] = &[
    Bool,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Int8,
    Int16,
    Int32,
    Int64,
    BFloat16,
    Float16,
    Float32,
    Float64,
    Complex32,
    BComplex32,
    Complex64,
    Complex128,
    Float8E4M3Fn,
    Float8E5M2,
    Float8E4M3Fnuz,
    Float8E5M2Fnuz,
    Float8E8M0Fnu,
];

/// `fill_cpu`: everything but bcomplex32, as `mul_cpu`.
const FILL_TYPES: &[DType] = MUL_TYPES;

/// `lt_cpu`: bool, integers but uint16/32/64, real floats but float8.
const LT_TYPES: &[DType] = &[
    Bool, UInt8, Int8, Int16, Int32, Int64, BFloat16, Float16, Float32, Float64,
];

/// `logical_and_cpu`: as `lt_cpu` plus complex64/128 (bcomplex32 inferred absent, as from
/// every other dispatch list but `eq`'s).
const LOGICAL_TYPES: &[DType] = &[
    Bool, UInt8, Int8, Int16, Int32, Int64, BFloat16, Float16, Float32, Float64, Complex64,
    Complex128,
];

/// `bitwise_and_cpu`: bool and the integers.
const BITWISE_TYPES: &[DType] = &[
    Bool, UInt8, UInt16, UInt32, UInt64, Int8, Int16, Int32, Int64,
];

/// The CPU kernels of torch 2.15 by op and call, first match wins.
const KERNELS: &[Kernel] = &[
    Kernel {
        op: Op::Add,
        path: Path::Always,
        name: "add_stub",
        dtypes: ADD_TYPES,
    },
    Kernel {
        op: Op::Subtract,
        path: Path::Always,
        name: "add_stub",
        dtypes: ADD_TYPES,
    },
    Kernel {
        op: Op::Multiply,
        path: Path::ScalarOtherReducedFloat,
        name: "mul_cpu_reduced_float",
        dtypes: HALF_TYPES,
    },
    Kernel {
        op: Op::Multiply,
        path: Path::Always,
        name: "mul_cpu",
        dtypes: MUL_TYPES,
    },
    Kernel {
        op: Op::TrueDivide,
        path: Path::ScalarOtherReducedFloat,
        name: "div_cpu_reduced_float",
        dtypes: HALF_TYPES,
    },
    Kernel {
        op: Op::TrueDivide,
        path: Path::Always,
        name: "div_cpu",
        dtypes: DIV_TYPES,
    },
    Kernel {
        op: Op::FloorDivide,
        path: Path::ScalarOtherReducedFloat,
        name: "div_floor_cpu_reduced_float",
        dtypes: HALF_TYPES,
    },
    Kernel {
        op: Op::FloorDivide,
        path: Path::Always,
        name: "div_floor_cpu",
        dtypes: DIV_FLOOR_TYPES,
    },
    Kernel {
        op: Op::Power,
        path: Path::ExponentZero,
        name: "fill_cpu",
        dtypes: FILL_TYPES,
    },
    Kernel {
        op: Op::Power,
        path: Path::ExponentOne,
        name: "copy_",
        dtypes: ALL_TYPES,
    },
    Kernel {
        op: Op::Power,
        path: Path::BaseOne,
        name: "fill_cpu",
        dtypes: FILL_TYPES,
    },
    Kernel {
        op: Op::Power,
        path: Path::Always,
        name: "pow",
        dtypes: POW_TYPES,
    },
    Kernel {
        op: Op::Equal,
        path: Path::Always,
        name: "eq_cpu",
        dtypes: ALL_TYPES,
    },
    Kernel {
        op: Op::Less,
        path: Path::Always,
        name: "lt_cpu",
        dtypes: LT_TYPES,
    },
    Kernel {
        op: Op::LogicalAnd,
        path: Path::Always,
        name: "logical_and_cpu",
        dtypes: LOGICAL_TYPES,
    },
    Kernel {
        op: Op::BitwiseAnd,
        path: Path::Always,
        name: "bitwise_and_cpu",
        dtypes: BITWISE_TYPES,
    },
];

/// Value checks after the kernel is chosen: ops whose kernel raises `RuntimeError` on a zero
/// divisor in these dtypes (`TORCH_CHECK(b != 0, "ZeroDivisionError")`).
const ZERO_DIVISOR: &[(Op, &[DType])] = &[(Op::FloorDivide, INTEGRAL_TYPES)];

/// The value of a Python number operand (`int`, `float`, `complex` are 0, 0.0, 0j).
fn number_value(op: &Operand) -> Option<Value> {
    match *op {
        Operand::PyType(PyType::Int) => Some(Value::Int(0)),
        Operand::PyType(PyType::Float) => Some(Value::Float(0.0)),
        Operand::PyType(PyType::Complex) => Some(Value::Complex(0.0, 0.0)),
        Operand::Literal(v) => Some(v),
        _ => None,
    }
}

/// Whether a value is numerically `x` (c10's `Scalar::equal`, bool as 0/1).
fn value_is(v: Value, x: f64) -> bool {
    match v {
        Value::Bool(b) => f64::from(u8::from(b)) == x,
        Value::Int(i) => i as f64 == x,
        Value::Float(f) => f == x,
        Value::Complex(re, im) => re == x && im == 0.0,
    }
}

/// The Python type name the binding reports for an operand.
fn python_type(op: &Operand) -> &'static str {
    match *op {
        Operand::Array { .. } | Operand::Scalar { .. } => "Tensor",
        Operand::PyType(t) => t.name(),
        Operand::Literal(Value::Bool(_)) => "bool",
        Operand::Literal(v) => v.py_type().map_or("bool", PyType::name),
    }
}

/// The binding's `TypeError`, if the call matches no overload.
fn check_binding(op: Op, a: &Operand, b: &Operand) -> Result<(), Error> {
    let binding = BINDINGS
        .iter()
        .find(|(o, _)| *o == op)
        .map_or(Binding::Numbers, |&(_, b)| b);
    let (a_number, b_number) = (number_value(a).is_some(), number_value(b).is_some());
    let invalid = match binding {
        Binding::Numbers => false,
        Binding::NotBothNumbers => a_number && b_number,
        Binding::TensorFirst => a_number,
        Binding::TensorsOnly => {
            let bad = [("input", 1, a, a_number), ("other", 2, b, b_number)];
            if let Some(&(arg, pos, o, _)) = bad.iter().find(|x| x.3) {
                let message = MUST_BE_TENSOR
                    .replace("{op}", torch_name(op))
                    .replace("{arg}", arg)
                    .replace("{pos}", &pos.to_string())
                    .replace("{t}", python_type(o));
                return Err(Error::refused(Exception::TypeError, message));
            }
            false
        }
    };
    if invalid {
        let message = INVALID_COMBINATION
            .replace("{op}", torch_name(op))
            .replace("{a}", python_type(a))
            .replace("{b}", python_type(b));
        return Err(Error::refused(Exception::TypeError, message));
    }
    Ok(())
}

/// Whether an operand is bool in its own dtype (a bool tensor or a Python `True`/`False`).
fn is_bool(op: &Operand) -> bool {
    matches!(
        op,
        Operand::Array { dtype: Bool, .. }
            | Operand::Scalar { dtype: Bool, .. }
            | Operand::Literal(Value::Bool(_))
    )
}

/// [`BOOL_OPERAND`]'s checks.
fn check_bool_operands(op: Op, a: &Operand, b: &Operand) -> Result<(), Error> {
    let Some(&(_, kind, both, one)) = BOOL_OPERAND.iter().find(|r| r.0 == op) else {
        return Ok(());
    };
    match (is_bool(a), is_bool(b)) {
        (true, true) => Err(Error::refused(kind, both)),
        (true, false) | (false, true) => Err(Error::refused(kind, one)),
        (false, false) => Ok(()),
    }
}

/// `pow(Tensor, Number)`'s NumPy-compatibility check: an integer (or bool) tensor to a
/// negative Python int.
fn check_negative_power(op: Op, a: &Operand, b: &Operand) -> Result<(), Error> {
    let integral_base = match *a {
        Operand::Array { dtype, .. } | Operand::Scalar { dtype, .. } => {
            dtype == Bool || dtype.kind().is_integer()
        }
        _ => false,
    };
    if op == Op::Power && integral_base && matches!(b, Operand::Literal(Value::Int(v)) if *v < 0) {
        return Err(Error::refused(
            Exception::RuntimeError,
            "Integers to negative integer powers are not allowed.",
        ));
    }
    Ok(())
}

/// Whether a call takes a kernel's path, for the dtype it computes in.
fn takes(path: Path, a: &Operand, b: &Operand, dtype: DType) -> bool {
    let number_is = |o: &Operand, x: f64| number_value(o).is_some_and(|v| value_is(v, x));
    let tensor = |o: &Operand| number_value(o).is_none();
    match path {
        Path::Always => true,
        Path::ScalarOtherReducedFloat => {
            !matches!(b, Operand::Array { .. }) && REDUCED_FLOATS.contains(&dtype)
        }
        Path::ExponentZero => tensor(a) && number_is(b, 0.0),
        Path::ExponentOne => tensor(a) && number_is(b, 1.0),
        Path::BaseOne => number_is(a, 1.0) && tensor(b),
    }
}

/// Whether an operand holds zero as far as the model knows: a Python number or zero-dim
/// tensor of value 0 (dimensioned tensors are taken to hold no zeros).
fn is_zero(op: &Operand) -> bool {
    match *op {
        Operand::Scalar { value, .. } => value_is(value, 0.0),
        _ => number_value(op).is_some_and(|v| value_is(v, 0.0)),
    }
}

/// `torch.<op>(a, b)` on the CPU: binding, operand checks, promotion, the op's result dtype,
/// the kernel's dtypes, value checks.
pub(crate) fn op_result(opts: Options, op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
    let (a, b) = match operands {
        [] => return Err(Reason::EmptyOperands.into()),
        [a, b] => (a, b),
        [.., last] => {
            return Err(unsupported(
                NAME,
                last,
                format!("torch.{} takes two operands", torch_name(op)),
            ));
        }
    };
    let defaults = defaults(opts)?;
    for o in operands {
        contribution(defaults, o)?;
    }
    check_binding(op, a, b)?;
    check_bool_operands(op, a, b)?;
    check_negative_power(op, a, b)?;
    let promoted = result_type(opts, operands)?;
    let result = crate::ops::rule_for(OPS, op).apply(promoted, defaults.0, &[])?;
    let computes_in = if COMPARISONS.contains(&op) {
        promoted.dtype
    } else {
        result.dtype
    };
    if let Some(k) = KERNELS
        .iter()
        .find(|k| k.op == op && takes(k.path, a, b, computes_in))
        && !k.dtypes.contains(&computes_in)
    {
        return Err(Error::refused(
            Exception::NotImplementedError,
            format!(
                "\"{}\" not implemented for '{}'",
                k.name,
                scalar_type_name(computes_in)
            ),
        ));
    }
    let zero_checked = ZERO_DIVISOR
        .iter()
        .any(|(o, dtypes)| *o == op && dtypes.contains(&computes_in));
    if zero_checked && is_zero(b) {
        return Err(Error::refused(Exception::RuntimeError, "ZeroDivisionError"));
    }
    Ok(result)
}

/// The rule set's row in the registry.
pub(crate) static DEF: RuleSetDef = RuleSetDef {
    options: &[OptionName::DefaultFloat],
    ..RuleSetDef::new(
        &["torch", "pytorch"],
        "PyTorch 2.x",
        (promote_types, result_type, op_result, lattice, knows),
    )
};
