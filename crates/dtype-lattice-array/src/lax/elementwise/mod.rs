//! Elementwise primitives with `jax.lax`'s names, parameters and rules (operands of one dtype
//! and one shape; the result is weak when every operand is; lax's `TypeError`s for the dtypes
//! a primitive does not accept): arithmetic (`add`, `sub`, `mul`, `div`, `rem`, `pow`,
//! `integer_pow`, `square`, `neg`, `abs`, `sign`, `max`, `min`, `nextafter`), comparisons and
//! `is_finite`, bitwise operations and shifts (`not`, `and`, `or`, `xor`, `shift_left`,
//! `shift_right_arithmetic`, `shift_right_logical`, `population_count`, `clz`), rounding
//! (`floor`, `ceil`, `round`), complex parts (`real`, `imag`, `conj`) and the transcendental
//! functions ([`crate::kernels::math`]; on float32 lanes `exp`, `log`, `sin` and their kin run
//! vectorised through [`crate::kernels::vmath`], with the same results). `select_n`, `clamp` and `bitcast_convert_type` are in
//! [`super::select`].
//!
//! One generic kernel per operation runs on the dtype's compute lane ([`lanes`]):
//! integers wrap (int4/int2/uint4/uint2 to their width); float16, bfloat16 and every
//! float8/float6/float4 format compute in float32 and round to nearest even once per
//! primitive, as XLA's CPU backend does; `max`/`min` propagate NaN. Integer division by zero
//! gives all ones (-1, or the unsigned maximum) and `rem` by zero the dividend, as XLA does;
//! shifts by the bit width or more (negative amounts included) give 0, or the sign for
//! `shift_right_arithmetic`. Under NumPy's rules nothing is flushed (NumPy's loops keep
//! subnormals) and complex division is NumPy's (Smith's algorithm). XLA's CPU backend runs
//! with denormals off: float32, bfloat16,
//! float64 and complex arithmetic read subnormal inputs as zero and flush subnormal results
//! (complex inputs are read as they are, but compared with their subnormal parts as zero),
//! except the sign and bit operations (`neg`, `abs`, `real`, `imag`, `conj`, complex
//! `max`/`min`), the functions that return a tiny argument as it is ([`keeps_tiny`]: `sin`,
//! `tan`, `atan`, `tanh`, `expm1`), and glibc's functions, which read their operands' bits
//! ([`crate::kernels::glibc`]: `rem`, `pow`, `atan2`, and float32 `log` where LLVM calls `logf`,
//! [`glibc_elements`]). Real `asin` is XLA's decomposition, every step in the dtype. NaN
//! results of bfloat16 and the 8-bit formats keep their sign with the canonical payload
//! (float8_e5m2's are all `0x7f`); `max`/`min` give the positive NaN.
//!
//! Complex numbers under JAX's rules ([`super::on_xla`]) follow XLA's CPU formulas: products
//! with each part's second product fused (`mul`, `integer_pow`), Smith's division, `square`,
//! `sign`, `sqrt`, `atan2` and the transcendentals of [`crate::kernels::math`]'s `complex_xla_*`; under
//! NumPy's rules they keep NumPy's loops (unfused products, `num_complex`'s formulas). `complex`
//! composes two float32/float64 parts (`lax.complex`).
//!
//! `pow` takes an integer exponent as lax does: converted to the base's dtype first, as JAX
//! lowers it. Not implemented (`NotImplementedError`): complex `atan2` under NumPy's rules; the remaining complex differences from XLA are listed
//! in `tests/it/lax_elementwise.rs` (complex `pow`, `tanh`, `tan` and `expm1` are XLA's formulas
//! on XLA's real functions, [`crate::kernels::xla_math`], bit for bit).

mod arith;
mod broadcast;
pub(crate) mod fast;
mod kernel;
pub(crate) mod lanes;

use super::{ad, batching};
use crate::core::{bind, nonlinear};

use super::ops;
use super::{Avals, Outputs};
use crate::core::Lin;
use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind};

use super::{Param, Params, Primitive};
use crate::array::{Array, ShapedArray};
use crate::kernels::math::Fn1;
use lanes::with_lane;

pub(crate) use arith::Arith;
pub(crate) use broadcast::{broadcast_operands, broadcasting_shape};
use kernel::*;
pub(crate) use kernel::{alone, has_subnormal32, subnormal_rules_differ};

/// The dtypes a primitive accepts, with the wording of lax's refusal.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Accept {
    test: fn(DType) -> bool,
    names: &'static str,
}

impl Accept {
    pub(crate) fn accepts(&self, d: DType) -> bool {
        !d.is_extended() && (self.test)(d)
    }
}

fn is_int(d: DType) -> bool {
    matches!(d.kind(), Kind::SignedInt | Kind::UnsignedInt)
}
fn is_float(d: DType) -> bool {
    d.kind() == Kind::Float
}
fn is_complex(d: DType) -> bool {
    d.kind() == Kind::Complex
}

pub(crate) const NUM: Accept = Accept {
    test: |d| is_int(d) || is_float(d) || is_complex(d),
    names: "integer, floating, complexfloating",
};
pub(crate) const ANY: Accept = Accept {
    test: |_| true,
    names: "integer, floating, complexfloating, bool",
};
const ORDERED: Accept = Accept {
    test: |d| !is_complex(d),
    names: "integer, floating, bool",
};
const BOOL_OR_INT: Accept = Accept {
    test: |d| is_int(d) || d == DType::Bool,
    names: "integer, bool",
};
const INT: Accept = Accept {
    test: is_int,
    names: "integer",
};
const FLOAT: Accept = Accept {
    test: is_float,
    names: "floating",
};
const INEXACT: Accept = Accept {
    test: |d| is_float(d) || is_complex(d),
    names: "floating, complexfloating",
};
const INT_OR_FLOAT: Accept = Accept {
    test: |d| is_int(d) || is_float(d),
    names: "integer, floating",
};
const ACC_ABS: Accept = Accept {
    test: |d| is_float(d) || is_complex(d) || d.kind() == Kind::SignedInt,
    names: "floating, complexfloating, signedinteger",
};
const ACC_COMPLEX: Accept = Accept {
    test: is_complex,
    names: "complexfloating",
};
const ACC_CONJ: Accept = Accept {
    test: |d| is_complex(d) || d == DType::Float32 || d == DType::Float64,
    names: "float32, complexfloating, float64",
};

const ACC_COMPLEX_PARTS: Accept = Accept {
    test: |d| d == DType::Float32 || d == DType::Float64,
    names: "float32, float64",
};

/// The output dtype of an elementwise primitive from its operands'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Out {
    Same,
    Bool,
    /// The component dtype of a complex operand (`abs`, `real`, `imag`), else the same.
    Real,
    /// The complex dtype of a real operand (`conj`).
    Complex,
}

macro_rules! ops {
    ($($c:ident = $name:literal, $arity:literal, $op:ident, $accept:ident, $out:ident, $jnp:expr;)*) => {
        /// Which operation an elementwise primitive computes (the rules are instantiated per
        /// operation with its discriminant as a const parameter).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub(crate) enum Op { $($op,)* }

        impl Op {
            const ALL: &'static [Op] = &[$(Op::$op,)*];
            /// The operation of a const-generic rule's discriminant.
            pub(crate) const fn of(code: u8) -> Op {
                Op::ALL[code as usize]
            }
            fn accept(self) -> Accept {
                match self { $(Op::$op => $accept,)* }
            }
            fn out(self) -> Out {
                match self { $(Op::$op => Out::$out,)* }
            }
            /// `jax.numpy`'s function named in lax's tip on mismatched dtypes.
            fn jnp(self) -> Option<&'static str> {
                match self { $(Op::$op => $jnp,)* }
            }
        }

        /// Every primitive of this table.
        static TABLE: &[&Primitive] = &[$(&$c,)*];

        $(
            #[doc = concat!("The `", $name, "` primitive.")]
            pub static $c: Primitive = Primitive::new($name, Some($arity), shape_rule::<{ Op::$op as u8 }>, impl_rule::<{ Op::$op as u8 }>)
    .jvp(jvp::<{ Op::$op as u8 }>)
    .transpose(transpose::<{ Op::$op as u8 }>)
    .batch(batching::elementwise)
    .refuses_float0(float0_refusal);
        )*
    };
}

ops! {
    ADD = "add", 2, Add, NUM, Same, Some("add");
    ADD_ANY = "add_any", 2, AddAny, NUM, Same, None;
    SUB = "sub", 2, Sub, NUM, Same, Some("subtract");
    MUL = "mul", 2, Mul, NUM, Same, Some("multiply");
    MAX = "max", 2, Max, ANY, Same, Some("maximum");
    MIN = "min", 2, Min, ANY, Same, Some("minimum");
    NEG = "neg", 1, Neg, NUM, Same, None;
    EQ = "eq", 2, Eq, ANY, Bool, Some("equal");
    NE = "ne", 2, Ne, ANY, Bool, Some("not_equal");
    LT = "lt", 2, Lt, ORDERED, Bool, Some("less");
    LE = "le", 2, Le, ORDERED, Bool, Some("less_equal");
    GT = "gt", 2, Gt, ORDERED, Bool, Some("greater");
    GE = "ge", 2, Ge, ORDERED, Bool, Some("greater_equal");
    EQ_TO = "eq_to", 2, EqTo, ANY, Bool, None;
    LE_TO = "le_to", 2, LeTo, ORDERED, Bool, None;
    LT_TO = "lt_to", 2, LtTo, ORDERED, Bool, None;
    AND = "and", 2, And, BOOL_OR_INT, Same, None;
    OR = "or", 2, Or, BOOL_OR_INT, Same, None;
    XOR = "xor", 2, Xor, BOOL_OR_INT, Same, None;
    DIV = "div", 2, Div, NUM, Same, Some("divide");
    REM = "rem", 2, Rem, INT_OR_FLOAT, Same, Some("remainder");
    POW = "pow", 2, Pow, INEXACT, Same, Some("float_power");
    ATAN2 = "atan2", 2, Atan2, INEXACT, Same, Some("arctan2");
    NEXTAFTER = "nextafter", 2, Nextafter, FLOAT, Same, Some("nextafter");
    COMPLEX = "complex", 2, Complex, ACC_COMPLEX_PARTS, Complex, Some("complex");
    SHIFT_LEFT = "shift_left", 2, ShiftLeft, INT, Same, Some("left_shift");
    SHIFT_RIGHT_ARITHMETIC = "shift_right_arithmetic", 2, ShiftRightArithmetic, INT, Same, Some("right_shift");
    SHIFT_RIGHT_LOGICAL = "shift_right_logical", 2, ShiftRightLogical, INT, Same, Some("right_shift");
    NOT = "not", 1, Not, BOOL_OR_INT, Same, None;
    SIGN = "sign", 1, Sign, NUM, Same, None;
    FLOOR = "floor", 1, Floor, FLOAT, Same, None;
    CEIL = "ceil", 1, Ceil, FLOAT, Same, None;
    ROUND = "round", 1, Round, FLOAT, Same, None;
    IS_FINITE = "is_finite", 1, IsFinite, FLOAT, Bool, None;
    ABS = "abs", 1, Abs, ACC_ABS, Real, None;
    SQUARE = "square", 1, Square, NUM, Same, None;
    INTEGER_POW = "integer_pow", 1, IntegerPow, NUM, Same, None;
    POPULATION_COUNT = "population_count", 1, PopulationCount, INT, Same, None;
    CLZ = "clz", 1, Clz, INT, Same, None;
    REAL = "real", 1, Real, ACC_COMPLEX, Real, None;
    IMAG = "imag", 1, Imag, ACC_COMPLEX, Real, None;
    CONJ = "conj", 1, Conj, ACC_CONJ, Complex, None;
    EXP = "exp", 1, Exp, INEXACT, Same, None;
    EXP2 = "exp2", 1, Exp2, INEXACT, Same, None;
    EXPM1 = "expm1", 1, Expm1, INEXACT, Same, None;
    LOG = "log", 1, Log, INEXACT, Same, None;
    LOG1P = "log1p", 1, Log1p, INEXACT, Same, None;
    SIN = "sin", 1, Sin, INEXACT, Same, None;
    COS = "cos", 1, Cos, INEXACT, Same, None;
    TAN = "tan", 1, Tan, INEXACT, Same, None;
    TANH = "tanh", 1, Tanh, INEXACT, Same, None;
    LOGISTIC = "logistic", 1, Logistic, INEXACT, Same, None;
    ASIN = "asin", 1, Asin, INEXACT, Same, None;
    ACOS = "acos", 1, Acos, INEXACT, Same, None;
    ATAN = "atan", 1, Atan, INEXACT, Same, None;
    SINH = "sinh", 1, Sinh, INEXACT, Same, None;
    COSH = "cosh", 1, Cosh, INEXACT, Same, None;
    ASINH = "asinh", 1, Asinh, INEXACT, Same, None;
    ACOSH = "acosh", 1, Acosh, INEXACT, Same, None;
    ATANH = "atanh", 1, Atanh, INEXACT, Same, None;
    SQRT = "sqrt", 1, Sqrt, INEXACT, Same, None;
    RSQRT = "rsqrt", 1, Rsqrt, INEXACT, Same, None;
    CBRT = "cbrt", 1, Cbrt, FLOAT, Same, None;
    ERF = "erf", 1, Erf, FLOAT, Same, None;
    ERFC = "erfc", 1, Erfc, FLOAT, Same, None;
    ERF_INV = "erf_inv", 1, ErfInv, FLOAT, Same, None;
}

impl Op {
    fn is_unary(self) -> bool {
        (self as u8) >= (Op::Not as u8) || self == Op::Neg
    }

    /// The transcendental function of the operation, if it is one: XLA's, or, when the NumPy
    /// rules are in force ([`crate::config::semantics`], read on the calling thread), NumPy's
    /// (the platform's libm) for the functions whose XLA form differs (`sinh`, `cosh`, `tanh`).
    pub(crate) fn fn1(self) -> Option<Fn1> {
        let numpy = || !super::on_xla();
        Some(match self {
            Op::Tanh if numpy() => Fn1::TanhLibm,
            Op::Sinh if numpy() => Fn1::SinhLibm,
            Op::Cosh if numpy() => Fn1::CoshLibm,
            Op::Exp => Fn1::Exp,
            Op::Exp2 => Fn1::Exp2,
            Op::Expm1 => Fn1::Expm1,
            Op::Log => Fn1::Log,
            Op::Log1p => Fn1::Log1p,
            Op::Sin => Fn1::Sin,
            Op::Cos => Fn1::Cos,
            Op::Tan => Fn1::Tan,
            Op::Tanh => Fn1::Tanh,
            Op::Logistic => Fn1::Logistic,
            Op::Asin => Fn1::Asin,
            Op::Acos => Fn1::Acos,
            Op::Atan => Fn1::Atan,
            Op::Sinh => Fn1::Sinh,
            Op::Cosh => Fn1::Cosh,
            Op::Asinh => Fn1::Asinh,
            Op::Acosh => Fn1::Acosh,
            Op::Atanh => Fn1::Atanh,
            Op::Sqrt => Fn1::Sqrt,
            Op::Rsqrt => Fn1::Rsqrt,
            Op::Cbrt => Fn1::Cbrt,
            Op::Erf => Fn1::Erf,
            Op::Erfc => Fn1::Erfc,
            Op::ErfInv => Fn1::ErfInv,
            _ => return None,
        })
    }
}

/// lax's refusal of a `float0` operand (`add_any` named `add`, as JAX's cotangent sums are
/// refused).
fn float0_refusal(prim: &'static Primitive, inputs: &[&ShapedArray]) -> Error {
    let name = if prim.name == "add_any" {
        "add"
    } else {
        prim.name
    };
    crate::core::float0_refusal_named(name, prim.arity, inputs)
}

/// The table's primitives (each elementwise primitive with an [`Op`]).
#[cfg(test)]
pub(crate) fn primitives() -> &'static [&'static Primitive] {
    TABLE
}

/// Whether `prim` computes each output element from the same element of each operand (or
/// from a 0-d operand): the table's primitives, `select_n`, `clamp` and
/// `convert_element_type`. Such a primitive gives on any slice of its operands that slice of
/// its result (what fusion relies on).
pub(crate) fn is_elementwise(prim: &'static Primitive) -> bool {
    TABLE
        .iter()
        .chain([
            &&super::select::SELECT_N,
            &&super::select::CLAMP,
            &&super::CONVERT_ELEMENT_TYPE,
        ])
        .any(|p| std::ptr::eq(*p, prim))
}

/// The operation of a primitive of this module's table (not `select_n`, `clamp` or
/// `convert_element_type`).
pub(crate) fn op_of(prim: &'static Primitive) -> Option<Op> {
    // The table and `Op::ALL` list the primitives in one order (one macro writes both).
    let i = TABLE.iter().position(|p| std::ptr::eq(*p, prim))?;
    Op::ALL.get(i).copied()
}

/// lax's refusal of a dtype at a position (`position` `None` for unary primitives).
pub(crate) fn refuse_dtype(
    name: &str,
    d: DType,
    position: Option<usize>,
    accept: &Accept,
) -> Error {
    let msg = match position {
        None => format!(
            "{name} does not accept dtype {d}. Accepted dtypes are subtypes of {}.",
            accept.names
        ),
        Some(i) => format!(
            "{name} does not accept dtype {d} at position {i}. Accepted dtypes at position {i} \
             are subtypes of {}.",
            accept.names
        ),
    };
    Error::refused(Exception::TypeError, msg)
}

/// lax's `check_same_dtypes`: `lax.NAME requires arguments to have the same dtypes, …`.
pub(crate) fn check_same_dtypes(
    name: &str,
    jnp: Option<&str>,
    inputs: &[&ShapedArray],
) -> Result<(), Error> {
    let Some(first) = inputs.first() else {
        return Ok(());
    };
    if inputs.iter().all(|a| a.dtype() == first.dtype()) {
        return Ok(());
    }
    let names: Vec<String> = inputs.iter().map(|a| a.dtype().to_string()).collect();
    let mut msg = format!(
        "lax.{name} requires arguments to have the same dtypes, got {}.",
        names.join(", ")
    );
    if let Some(j) = jnp {
        msg.push_str(&format!(
            " (Tip: jnp.{j} is a similar function that does automatic type promotion on inputs)."
        ));
    }
    Err(Error::refused(Exception::TypeError, msg))
}

/// The `y` of `integer_pow`.
fn integer_pow_y(prim: &str, params: &Params) -> Result<i64, Error> {
    match params.require(prim, "y")? {
        Param::Int(y) => Ok(*y),
        _ => Err(Error::refused(
            Exception::TypeError,
            "integer_pow y must be an integer",
        )),
    }
}

/// `round`'s `rounding_method`: 0 (away from zero, the default) or 1 (to nearest even).
fn rounding_method(params: &Params) -> Result<i64, Error> {
    match params.get("rounding_method") {
        None | Some(Param::None) => Ok(0),
        Some(Param::Int(m @ (0 | 1))) => Ok(*m),
        Some(_) => Err(Error::refused(
            Exception::ValueError,
            "rounding_method must be 0 (AWAY_FROM_ZERO) or 1 (TO_NEAREST_EVEN)",
        )),
    }
}

/// `lax`'s shape rule for elementwise primitives: one dtype, one shape; weak when every
/// operand is; comparisons give bool.
fn shape_rule<const OP: u8>(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let op = Op::of(OP);
    let first = inputs[0];
    let accept = op.accept();
    // Operands of one dtype (the common case) need it accepted once and no dtype check.
    let uniform = inputs.iter().all(|a| a.dtype() == first.dtype());
    let checked = if uniform { &inputs[..1] } else { inputs };
    for (i, a) in checked.iter().enumerate() {
        // pow's exponent may also be an integer.
        let ok = accept.accepts(a.dtype()) || (op == Op::Pow && i == 1 && is_int(a.dtype()));
        if !ok {
            let pos = (!op.is_unary()).then_some(i);
            return Err(refuse_dtype(prim.name, a.dtype(), pos, &accept));
        }
    }
    if op == Op::Abs && matches!(first.dtype(), DType::Int4 | DType::Int2) {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "abs does not accept dtype {}. Support for narrow-width integers is \
                 platform-dependent and limited to a few specific operations, e.g. basic \
                 arithmetic and type casting.",
                first.dtype()
            ),
        ));
    }
    if op == Op::Pow {
        let (x, y) = (first.dtype(), inputs[1].dtype());
        if x != y && !is_int(y) {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "the first argument to pow must have an inexact dtype (float or complex), \
                     and the second argument must have an inexact or integer dtype, and two \
                     inexact dtypes must match, but got {x} and {y} respectively."
                ),
            ));
        }
    } else if !uniform {
        check_same_dtypes(prim.name, op.jnp(), inputs)?;
    }
    if op == Op::IntegerPow {
        let y = integer_pow_y(prim.name, params)?;
        if y < 0 && is_int(first.dtype()) {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "Integers cannot be raised to negative powers, got integer_pow({}[{}], {y})",
                    first.dtype(),
                    first
                        .shape()
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            ));
        }
    }
    if op == Op::Round {
        rounding_method(params)?;
    }
    let weak = inputs.iter().all(|a| a.weak_type());
    let d = first.dtype();
    let (dtype, weak) = match op.out() {
        Out::Same => (d, weak),
        Out::Bool => (DType::Bool, weak),
        Out::Real if is_complex(d) => (d.component(), weak),
        Out::Real => (d, weak),
        Out::Complex if is_complex(d) => (d, weak),
        Out::Complex if d == DType::Float64 => (DType::Complex128, weak),
        Out::Complex => (DType::Complex64, weak),
    };
    // The common case, operands of one shape, shares the first operand's shape.
    let same = inputs
        .iter()
        .all(|a| crate::array::same_shape(a.shape(), first.shape()));
    let out = if same {
        first.retyped(dtype, weak)
    } else {
        ShapedArray::new(&broadcasting_shape(prim.name, inputs)?, dtype, weak)
    };
    Ok(smallvec::smallvec![out])
}

fn impl_rule<const OP: u8>(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let op = Op::of(OP);
    let aval = &out[0];
    if op == Op::Div
        && let [x, y] = inputs
        && let Some(r) = by_broadcast_reciprocal(x, y, aval)
    {
        return r;
    }
    // `pow` with an integer exponent lowers to a conversion of the exponent to the base's
    // dtype (`stablehlo.convert`, as `convert_element_type` converts) and `pow` of the two.
    let exponent;
    let inputs: &[&Array] = match inputs {
        [x, y] if op == Op::Pow && is_int(y.dtype()) => {
            exponent = super::ops::convert(y, x.dtype(), false)?;
            &[*x, &exponent]
        }
        _ => inputs,
    };
    // The fast paths take a scalar operand as it is (no broadcast copy).
    if let [a, b] = inputs
        && let Some(data) = fast::binary(op, a, b, aval)
    {
        return Ok(smallvec::smallvec![Array::from_parts(aval.clone(), data)]);
    }
    let owned;
    let inputs: &[&Array] = if inputs
        .iter()
        .any(|a| !crate::array::same_shape(a.shape(), aval.shape()))
    {
        owned = broadcast_operands(inputs, aval.shape())?;
        &owned.iter().collect::<Vec<_>>()
    } else {
        inputs
    };
    let x = inputs[0];
    if let [a, b] = inputs
        && let Some(data) = fast::binary(op, a, b, aval)
    {
        return Ok(smallvec::smallvec![Array::from_parts(aval.clone(), data)]);
    }
    if let [a] = inputs
        && !needs_subnormal_rules(op, a, aval)
        && let Some(data) = fast::unary(op, a, aval)
    {
        return Ok(smallvec::smallvec![Array::from_parts(aval.clone(), data)]);
    }
    let identity = op == Op::IntegerPow && matches!(params.get("y"), Some(Param::Int(1)));
    let data = if identity {
        // integer_pow[y=1] lowers to its operand: the same bits.
        x.storage().clone()
    } else if op == Op::Nextafter {
        nextafter(x, inputs[1])?
    } else {
        with_lane!(x.dtype(), T => kernel::<T>(op, inputs, params, aval)?, {
            return Err(Error::refused(
                Exception::NotImplementedError,
                format!("{} of {} arrays is not implemented", prim.name, x.dtype()),
            ));
        })
    };
    Ok(smallvec::smallvec![Array::from_parts(aval.clone(), data)])
}

/// A division by an operand lax broadcasts (fewer elements than the result: a 0-d operand, a
/// size-1 dimension) as XLA's CPU backend computes it: the lowering broadcasts the divisor,
/// and XLA's algebraic simplifier rewrites `A / broadcast(B)` into `A · broadcast(1/B)` —
/// even for the primitive compiled alone, so `x / s` outside `jit` is `x · (1/s)`. For
/// float16, float32 and float64 under XLA's rules (bfloat16 and the 8-bit formats are
/// divided in float32 behind conversions, which hide the pattern; complex numbers keep the
/// division). `None` otherwise.
fn by_broadcast_reciprocal(
    x: &Array,
    y: &Array,
    aval: &ShapedArray,
) -> Option<Result<Outputs, Error>> {
    let real = matches!(
        aval.dtype(),
        DType::Float16 | DType::Float32 | DType::Float64
    );
    if !real || y.size() >= aval.size() || y.dtype() != aval.dtype() || !crate::config::on_xla() {
        return None;
    }
    Some((|| {
        let one = crate::array::scalar(1.0, y.dtype())?;
        let r = super::implement(
            &DIV,
            &[&one, y],
            &Params::new(),
            &[y.aval().retyped(y.dtype(), false)],
        )?;
        super::implement(
            &MUL,
            &[x, &r[0]],
            &Params::new(),
            std::slice::from_ref(aval),
        )
    })())
}

/// The generic kernel of a binary operation (what [`fast`] must agree with).
/// The generic kernel of a unary `op` (the fast paths' reference in tests).
#[cfg(test)]
pub(crate) fn generic_unary(op: Op, x: &Array, aval: &ShapedArray) -> Result<Array, Error> {
    let params = Params::new();
    let data = with_lane!(x.dtype(), T => kernel::<T>(op, &[x], &params, aval)?, {
        return Err(not_implemented(op, x.dtype()));
    });
    Ok(Array::from_parts(aval.clone(), data))
}

pub(crate) fn generic_binary(
    op: Op,
    x: &Array,
    y: &Array,
    aval: &ShapedArray,
) -> Result<Array, Error> {
    let params = Params::new();
    let data = with_lane!(x.dtype(), T => kernel::<T>(op, &[x, y], &params, aval)?, {
        return Err(not_implemented(op, x.dtype()));
    });
    Ok(Array::from_parts(aval.clone(), data))
}

/// `jnp.less` & co. on complex operands, as `jax.numpy` computes them: lexicographic on
/// (real, imag) with `lax`'s comparison `cmp` (which refuses complex itself):
/// `select(eq(re x, re y), cmp(im x, im y), cmp(re x, re y))`.
pub(crate) fn complex_comparison(
    cmp: &'static Primitive,
    x: &Array,
    y: &Array,
) -> Result<Array, Error> {
    let none = Params::new();
    let (rx, ry) = (
        super::bind1(&REAL, &[x], &none)?,
        super::bind1(&REAL, &[y], &none)?,
    );
    let (ix, iy) = (
        super::bind1(&IMAG, &[x], &none)?,
        super::bind1(&IMAG, &[y], &none)?,
    );
    let same = super::bind1(&EQ, &[&rx, &ry], &none)?;
    let on_real = super::bind1(cmp, &[&rx, &ry], &none)?;
    let on_imag = super::bind1(cmp, &[&ix, &iy], &none)?;
    super::bind1(
        &super::select::SELECT_N,
        &[&same, &on_real, &on_imag],
        &none,
    )
}

// ---- JVP and transpose rules (per operation)

/// `mul(g, _balanced_eq(x, z, y))`: 1 where `x` is the result alone, ½ on ties.
fn balanced(x: &Array, z: &Array, y: &Array) -> Result<Array, Error> {
    let full = |v: f64| ops::broadcast_to(&ops::konst(x, v)?, z.shape());
    let (one, half, zero) = (full(1.0)?, full(0.5)?, full(0.0)?);
    let when_y = ops::select_n(&ops::eq(y, z)?, &[&one, &half])?;
    ops::select_n(&ops::eq(x, z)?, &[&zero, &when_y])
}

/// The JVP rule of every elementwise primitive (the operation is the const parameter).
fn jvp<const OP: u8>(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let op = Op::of(OP);
    let out = ad::primal_out(prim, primals, params)?;
    let y = &out[0];
    let x = &primals[0];
    let t0 = tangents.first().cloned().flatten();
    let t1 = tangents.get(1).cloned().flatten();
    let x1 = primals.get(1);
    let second = || {
        x1.ok_or_else(|| Error::refused(Exception::TypeError, "a binary operation lost an operand"))
    };
    // Zero tangents: integer and boolean results, piecewise-constant functions.
    if matches!(
        y.dtype().kind(),
        Kind::Bool | Kind::SignedInt | Kind::UnsignedInt
    ) {
        return Ok((out, vec![None]));
    }
    let t = match op {
        Op::Add | Op::AddAny => ad::plus(t0, t1)?,
        Op::Sub => ad::plus(t0, t1.map(|t| ops::neg(&t)).transpose()?)?,
        Op::Mul => {
            // As JAX: mul(xdot, y) + mul(x, ydot).
            let x1 = second()?;
            let a = ad::scale(&t0, || Ok(x1.clone()))?;
            let b = t1.map(|t| ops::mul(x, &t)).transpose()?;
            ad::plus(a, b)?
        }
        Op::Div => {
            let x1 = second()?;
            let a = t0.map(|t| ops::div(&t, x1)).transpose()?;
            let b = ad::scale(&t1, || ops::mul(&ops::neg(x)?, &ops::integer_pow(x1, -2)?))?;
            ad::plus(a, b)?
        }
        Op::Max | Op::Min => {
            let x1 = second()?;
            ad::plus(
                ad::scale(&t0, || balanced(x, y, x1))?,
                ad::scale(&t1, || balanced(x1, y, x))?,
            )?
        }
        Op::Neg => t0.map(|t| ops::neg(&t)).transpose()?,
        // Linear in both parts: `complex(ṙ, i̇)`, a missing tangent a zero.
        Op::Complex if t0.is_some() || t1.is_some() => {
            let x1 = second()?;
            let re = match t0 {
                Some(t) => t,
                None => ops::zeros_like(x)?,
            };
            let im = match t1 {
                Some(t) => t,
                None => ops::zeros_like(x1)?,
            };
            Some(bind(prim, &[&re, &im], params)?[0].clone())
        }
        Op::Complex => None,
        Op::Exp => ad::scale(&t0, || Ok(y.clone()))?,
        Op::Exp2 => ad::scale(&t0, || ops::mul(y, &ops::konst(x, std::f64::consts::LN_2)?))?,
        Op::Expm1 => ad::scale(&t0, || ops::add(y, &ops::konst(x, 1.0)?))?,
        Op::Log => t0.map(|t| ops::div(&t, x)).transpose()?,
        Op::Log1p => t0
            .map(|t| ops::div(&t, &ops::add(x, &ops::konst(x, 1.0)?)?))
            .transpose()?,
        Op::Sin => ad::scale(&t0, || ops::unary(&super::COS, x))?,
        Op::Cos => ad::scale(&t0, || ops::neg(&ops::unary(&super::SIN, x)?))?,
        Op::Tan => ad::scale(&t0, || ops::add(&ops::konst(x, 1.0)?, &ops::mul(y, y)?))?,
        Op::Tanh => t0
            .map(|g| {
                ops::mul(
                    &ops::add(&g, &ops::mul(&g, y)?)?,
                    &ops::sub(&ops::konst(x, 1.0)?, y)?,
                )
            })
            .transpose()?,
        Op::Logistic => ad::scale(&t0, || ops::mul(y, &ops::sub(&ops::konst(x, 1.0)?, y)?))?,
        Op::Sqrt => ad::scale(&t0, || ops::div(&ops::konst(x, 0.5)?, y))?,
        Op::Rsqrt => ad::scale(&t0, || ops::mul(&ops::konst(x, -0.5)?, &ops::div(y, x)?))?,
        Op::Cbrt => ad::scale(&t0, || {
            ops::mul(&ops::konst(x, 1.0 / 3.0)?, &ops::integer_pow(y, -2)?)
        })?,
        Op::Sinh => ad::scale(&t0, || ops::unary(&super::COSH, x))?,
        Op::Cosh => ad::scale(&t0, || ops::unary(&super::SINH, x))?,
        Op::Asin => ad::scale(&t0, || {
            ops::unary(
                &super::RSQRT,
                &ops::sub(&ops::konst(x, 1.0)?, &ops::mul(x, x)?)?,
            )
        })?,
        Op::Acos => ad::scale(&t0, || {
            ops::neg(&ops::unary(
                &super::RSQRT,
                &ops::sub(&ops::konst(x, 1.0)?, &ops::mul(x, x)?)?,
            )?)
        })?,
        Op::Atan => t0
            .map(|t| ops::div(&t, &ops::add(&ops::konst(x, 1.0)?, &ops::mul(x, x)?)?))
            .transpose()?,
        Op::Asinh => ad::scale(&t0, || {
            ops::unary(
                &super::RSQRT,
                &ops::add(&ops::mul(x, x)?, &ops::konst(x, 1.0)?)?,
            )
        })?,
        Op::Acosh => ad::scale(&t0, || {
            let xm = ops::sub(x, &ops::konst(x, 1.0)?)?;
            let xp = ops::add(x, &ops::konst(x, 1.0)?)?;
            ops::unary(&super::RSQRT, &ops::mul(&xm, &xp)?)
        })?,
        Op::Atanh => t0
            .map(|t| ops::div(&t, &ops::sub(&ops::konst(x, 1.0)?, &ops::mul(x, x)?)?))
            .transpose()?,
        Op::Erf => ad::scale(&t0, || {
            let c = ops::konst(x, 2.0 / std::f64::consts::PI.sqrt())?;
            ops::mul(&c, &ops::unary(&super::EXP, &ops::neg(&ops::mul(x, x)?)?)?)
        })?,
        Op::Erfc => ad::scale(&t0, || {
            let c = ops::konst(x, -2.0 / std::f64::consts::PI.sqrt())?;
            ops::mul(&c, &ops::unary(&super::EXP, &ops::neg(&ops::mul(x, x)?)?)?)
        })?,
        Op::ErfInv => ad::scale(&t0, || {
            let c = ops::konst(x, std::f64::consts::PI.sqrt() / 2.0)?;
            ops::mul(&c, &ops::unary(&super::EXP, &ops::mul(y, y)?)?)
        })?,
        Op::Square => ad::scale(&t0, || ops::mul(&ops::konst(x, 2.0)?, x))?,
        Op::IntegerPow => {
            let n = match params.get("y") {
                Some(Param::Int(n)) => *n,
                _ => return Err(ad::not_differentiable(prim)),
            };
            if n == 0 {
                None
            } else {
                ad::scale(&t0, || {
                    let base = if n == 2 {
                        x.clone()
                    } else {
                        ops::integer_pow(x, n - 1)?
                    };
                    ops::mul(&ops::konst(x, n as f64)?, &base)
                })?
            }
        }
        Op::Pow if second()?.dtype().kind().is_integer() => {
            ad::scale(&t0, || pow_jac_of_int(prim, x, second()?))?
        }
        Op::Pow => {
            let x1 = second()?;
            let a = ad::scale(&t0, || {
                let ym1 = ops::sub(x1, &ops::konst(x1, 1.0)?)?;
                let p = bind(prim, &[x, &ym1], &Params::new())?;
                ops::mul(&ops::convert_like(x1, x)?, &p[0])
            })?;
            let b = ad::scale(&t1, || ops::mul(y, &ops::unary(&super::LOG, x)?))?;
            ad::plus(a, b)?
        }
        Op::Atan2 => {
            let x1 = second()?;
            let denom = ops::add(&ops::mul(x, x)?, &ops::mul(x1, x1)?)?;
            ad::plus(
                ad::scale(&t0, || ops::div(x1, &denom))?,
                ad::scale(&t1, || ops::div(&ops::neg(x)?, &denom))?,
            )?
        }
        // As JAX: `select(x >= 0, g, -g)`; for complex `x`, `real(g · conj(x) / |x|)` with a
        // zero modulus replaced by one.
        Op::Abs if x.dtype().kind() != Kind::Complex => t0
            .map(|g| {
                let nonneg = bind(&super::GE, &[x, &ops::konst(x, 0.0)?], &Params::new())?;
                ops::select_n(&nonneg[0], &[&ops::neg(&g)?, &g])
            })
            .transpose()?,
        Op::Abs => t0
            .map(|g| {
                let a = ops::convert_like(y, x)?;
                let zero = ops::eq(&a, &ops::konst(&a, 0.0)?)?;
                let one = ops::broadcast_to(&ops::konst(&a, 1.0)?, a.shape())?;
                let a = ops::select_n(&zero, &[&a, &one])?;
                let q = ops::div(&ops::unary(&super::CONJ, x)?, &a)?;
                ops::unary(&super::REAL, &ops::mul(&g, &q)?)
            })
            .transpose()?,
        // As JAX: `g` for the dividend, `-g · sign(x/y) · floor(|x/y|)` for the divisor.
        Op::Rem => {
            let x1 = second()?;
            let b = t1
                .map(|g| {
                    let q = ops::div(x, x1)?;
                    let s = ops::unary(&super::SIGN, &q)?;
                    let f = ops::unary(&super::FLOOR, &ops::unary(&super::ABS, &q)?)?;
                    ops::mul(&ops::neg(&g)?, &ops::mul(&s, &f)?)
                })
                .transpose()?;
            ad::plus(t0, b)?
        }
        Op::Sign | Op::Floor | Op::Ceil | Op::Round | Op::IsFinite | Op::Nextafter => None,
        Op::Real | Op::Imag | Op::Conj => t0
            .map(|t| bind(prim, &[&t], params).map(|o| o[0].clone()))
            .transpose()?,
        _ => return Err(ad::not_differentiable(prim)),
    };
    let t = ad::fit(t, y)?;
    Ok((out, vec![t]))
}

/// `∂pow(x, y)/∂x` for an integer exponent `y`, as JAX's `_pow_jvp_lhs` computes it: `y`
/// converted to `x`'s dtype, both broadcast to one shape (`_maybe_broadcast`), then
/// `select(y == 0, 0, y' · pow(x, y − 1))` with `y'` the exponent where a zero is replaced by
/// one; every step in `x`'s dtype (a zero exponent gives 0, even where `pow(x, −1)` is
/// infinite).
fn pow_jac_of_int(prim: &'static Primitive, x: &Array, y: &Array) -> Result<Array, Error> {
    let x = ops::convert(x, x.dtype(), false)?;
    let y = ops::convert(y, x.dtype(), false)?;
    let (x, y) = if x.shape() == y.shape() {
        (x, y)
    } else {
        let shape = broadcasting_shape(prim.name, &[x.aval(), y.aval()])?;
        (maybe_broadcast(&x, &shape)?, maybe_broadcast(&y, &shape)?)
    };
    let full = |v: f64| ops::broadcast_to(&ops::konst(&y, v)?, y.shape());
    let is_zero = ops::eq(&y, &ops::konst(&y, 0.0)?)?;
    let zeros = full(0.0)?;
    let replaced = ops::select_n(&ops::eq(&y, &ops::konst(&y, 0.0)?)?, &[&y, &full(1.0)?])?;
    let ym1 = ops::sub(&y, &full(1.0)?)?;
    let p = bind(prim, &[&x, &ym1], &Params::new())?;
    let jac = ops::mul(&replaced, &p[0])?;
    ops::select_n(&is_zero, &[&jac, &zeros])
}

/// `x` broadcast to `shape` of the same rank as `_maybe_broadcast` does it: a 0-d `x`
/// directly, another reshaped to its dimensions that keep their size first.
fn maybe_broadcast(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    if x.ndim() == 0 {
        return ops::broadcast_to(x, shape);
    }
    let dims: Vec<usize> = (0..x.ndim())
        .filter(|&i| x.shape()[i] == shape[i])
        .collect();
    let squeezed: Vec<i64> = dims.iter().map(|&i| x.shape()[i] as i64).collect();
    let x = if squeezed.len() == x.ndim() {
        x.clone()
    } else {
        let params = Params::new()
            .with("dimensions", Param::None)
            .with("new_sizes", Param::Ints(squeezed))
            .with("sharding", Param::None);
        bind(&super::RESHAPE, &[x], &params)?[0].clone()
    };
    let params = Params::new()
        .with(
            "shape",
            Param::Ints(shape.iter().map(|&d| d as i64).collect()),
        )
        .with(
            "broadcast_dimensions",
            Param::Ints(dims.iter().map(|&d| d as i64).collect()),
        )
        .with("sharding", Param::None);
    Ok(bind(&super::BROADCAST_IN_DIM, &[&x], &params)?[0].clone())
}

/// The elementwise primitives linear in some operand: `add`, `sub`, `neg`, `mul` and `div`
/// (by a known operand).
fn transpose<const OP: u8>(
    _prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    _params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let each = |f: &dyn Fn(usize, &ShapedArray) -> Result<Array, Error>| {
        ins.iter()
            .enumerate()
            .map(|(i, l)| match l {
                Lin::Linear(a) => f(i, a).map(Some),
                Lin::Known(_) => Ok(None),
            })
            .collect::<Result<Vec<_>, Error>>()
    };
    match Op::of(OP) {
        Op::Add | Op::AddAny => each(&|_, a| ad::unbroadcast(&ct, a)),
        Op::Sub => each(&|i, a| {
            let c = if i == 0 { ct.clone() } else { ops::neg(&ct)? };
            ad::unbroadcast(&c, a)
        }),
        Op::Neg => each(&|_, a| ad::unbroadcast(&ops::neg(&ct)?, a)),
        // As JAX: `mul(ct, y)` for a linear first operand, `mul(x, ct)` for the second.
        Op::Mul => each(&|i, a| {
            let other = ins[1 - i].known()?;
            let c = if i == 0 {
                ops::mul(&ct, other)?
            } else {
                ops::mul(other, &ct)?
            };
            ad::unbroadcast(&c, a)
        }),
        // As JAX: `real(ct)` for the real part, `imag(neg(ct))` for the imaginary one.
        Op::Complex => each(&|i, a| {
            let c = if i == 0 {
                ops::unary(&super::REAL, &ct)?
            } else {
                ops::unary(&super::IMAG, &ops::neg(&ct)?)?
            };
            ad::unbroadcast(&c, a)
        }),
        Op::Div => each(&|i, a| {
            if i != 0 {
                return Err(nonlinear());
            }
            ad::unbroadcast(&ops::div(&ct, ins[1].known()?)?, a)
        }),
        _ => Err(nonlinear()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Lin;
    use crate::lax::bind1;
    use dtype_lattice::rules::Rules;
    use num_complex::Complex;

    fn c32(v: &[(f32, f32)]) -> Array {
        Array::from_vec(
            v.iter()
                .map(|&(a, b)| Complex::new(a, b))
                .collect::<Vec<_>>(),
        )
    }

    fn un(p: &'static Primitive, x: &Array) -> Vec<Complex<f32>> {
        bind1(p, &[x], &Params::new())
            .unwrap()
            .to_vec::<Complex<f32>>()
            .unwrap()
    }

    #[test]
    fn complex_composes_float32_and_float64_parts_bit_for_bit() {
        let re = Array::from_vec(vec![1.5f32, -0.0, f32::MIN_POSITIVE / 4.0, f32::NAN]);
        let im = Array::from_vec(vec![-2.0f32, 0.0, -0.0, 3.0]);
        let z = bind1(&COMPLEX, &[&re, &im], &Params::new()).unwrap();
        assert_eq!(z.dtype(), DType::Complex64);
        let got = z.to_vec::<Complex<f32>>().unwrap();
        let want_re = re.to_vec::<f32>().unwrap();
        let want_im = im.to_vec::<f32>().unwrap();
        for ((g, r), i) in got.iter().zip(&want_re).zip(&want_im) {
            // No flushing, signed zeros kept: a composition, no arithmetic.
            assert_eq!((g.re.to_bits(), g.im.to_bits()), (r.to_bits(), i.to_bits()));
        }
        let wide = Array::from_vec(vec![0.25f64]);
        let z = bind1(&COMPLEX, &[&wide, &wide], &Params::new()).unwrap();
        assert_eq!(z.dtype(), DType::Complex128);
    }

    #[test]
    fn complex_refuses_what_lax_refuses() {
        let h = Array::from_vec(vec![half::f16::ONE]);
        let err = bind1(&COMPLEX, &[&h, &h], &Params::new()).unwrap_err();
        assert_eq!(err.exception(), Some(Exception::TypeError));
        assert!(err.to_string().contains("float32, float64"), "{err}");
        let (f, d) = (Array::from_vec(vec![1f32]), Array::from_vec(vec![1f64]));
        let err = bind1(&COMPLEX, &[&f, &d], &Params::new()).unwrap_err();
        assert_eq!(err.exception(), Some(Exception::TypeError));
        let c = c32(&[(1.0, 2.0)]);
        assert!(bind1(&COMPLEX, &[&c, &c], &Params::new()).is_err());
    }

    #[test]
    fn complex_is_linear_in_both_parts() {
        let (x, y) = (
            Array::from_vec(vec![1f32, 2.0]),
            Array::from_vec(vec![3f32, 4.0]),
        );
        let (tx, ty) = (
            Array::from_vec(vec![0.5f32, -1.0]),
            Array::from_vec(vec![2f32, 0.25]),
        );
        let jvp = COMPLEX.jvp.unwrap();
        let (_, t) = jvp(
            &COMPLEX,
            &[x.clone(), y.clone()],
            &[Some(tx.clone()), None],
            &Params::new(),
        )
        .unwrap();
        let t = t[0].clone().unwrap().to_vec::<Complex<f32>>().unwrap();
        assert_eq!(t, vec![Complex::new(0.5, 0.0), Complex::new(-1.0, 0.0)]);
        let (_, t) = jvp(&COMPLEX, &[x, y], &[None, Some(ty)], &Params::new()).unwrap();
        let t = t[0].clone().unwrap().to_vec::<Complex<f32>>().unwrap();
        assert_eq!(t, vec![Complex::new(0.0, 2.0), Complex::new(0.0, 0.25)]);
        // The transpose: real(ct) to the real part, imag(neg(ct)) to the imaginary one.
        let ct = c32(&[(1.0, 2.0), (-3.0, 0.5)]);
        let aval = tx.aval().clone();
        let cts = (COMPLEX.transpose.unwrap())(
            &COMPLEX,
            &[Some(ct)],
            &[Lin::Linear(aval.clone()), Lin::Linear(aval)],
            &Params::new(),
        )
        .unwrap();
        let re = cts[0].clone().unwrap().to_vec::<f32>().unwrap();
        let im = cts[1].clone().unwrap().to_vec::<f32>().unwrap();
        assert_eq!((re, im), (vec![1.0, -3.0], vec![-2.0, -0.5]));
    }

    /// XLA squares a complex number as StableHLO expands it, `((a − b)(a + b), 2ab)`; NumPy
    /// as its loop multiplies, `(a² − b², 2ab)`. On 1 + 0.001i the two real parts differ
    /// (`square complex64[(-1+0.001j), …]` of the eval fixtures has XLA's).
    #[test]
    fn square_follows_the_rules_in_force() {
        let (a, b) = (1f32, 0.001f32);
        let (xla, numpy) = ((a - b) * (a + b), a * a - b * b);
        assert_ne!(xla, numpy, "a case where the forms differ");
        let z = c32(&[(a, b)]);
        assert_eq!(un(&SQUARE, &z)[0], Complex::new(xla, 2.0 * (a * b)));
        let np = crate::config::with_rules(Rules::numpy(), || un(&SQUARE, &z));
        assert_eq!(np[0].re, numpy);
    }

    /// XLA multiplies complex numbers with each part's second product fused,
    /// `(fma(a, c, −bd), fma(b, c, ad))`; NumPy unfused. The operands are element 25 of the
    /// complex64 `mul` fixture of tests/fixtures/lax_elementwise, where the forms differ.
    #[test]
    fn complex_multiply_fuses_under_xla_only() {
        let (x, y) = (
            (f32::from_bits(0x42c8_0000), f32::from_bits(0x3f1c_91f4)),
            (f32::from_bits(0x42c8_0000), f32::from_bits(0x3dc9_745b)),
        );
        let ((a, b), (c, d)) = (x, y);
        let fused = Complex::new(a.mul_add(c, -(b * d)), b.mul_add(c, a * d));
        let plain = Complex::new(a * c - b * d, a * d + b * c);
        assert_ne!(fused, plain, "a case where the forms differ");
        let (zx, zy) = (c32(&[x]), c32(&[y]));
        let mul = |zx: &Array, zy: &Array| {
            bind1(&MUL, &[zx, zy], &Params::new())
                .unwrap()
                .to_vec::<Complex<f32>>()
                .unwrap()
        };
        assert_eq!(mul(&zx, &zy)[0], fused);
        let np = crate::config::with_rules(Rules::numpy(), || mul(&zx, &zy));
        assert_eq!(np[0], plain);
    }

    fn f32s(v: &[u32]) -> Array {
        Array::from_vec(v.iter().map(|&b| f32::from_bits(b)).collect::<Vec<_>>())
    }

    fn bits_of(a: &Array) -> Vec<u32> {
        a.to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect()
    }

    /// `expm1 1e-40` (tests/fixtures/eval/jax_x32_unary.json) keeps the subnormal; `exp`
    /// flushes it (1).
    #[test]
    fn tiny_arguments_pass_through_where_xla_keeps_them() {
        let x = f32s(&[71362]);
        assert_eq!(
            bits_of(&bind1(&EXPM1, &[&x], &Params::new()).unwrap()),
            [71362]
        );
        assert_eq!(
            bits_of(&bind1(&EXP, &[&x], &Params::new()).unwrap()),
            [1f32.to_bits()]
        );
    }

    /// `log float64[1e-40,2.898831971965567,1e+40]` (x32, tests/fixtures/eval): glibc's
    /// `logf` computes a lone log's rest of 3 lanes, and reads the subnormal's bits
    /// (3268407732); the same operation fused with others (`log2 float32[1e-40,…]` of
    /// jax_x32_probes.json), or on 4 elements (`log float32[1e-40,-1e-40,…]` there), is
    /// XLA's approximation, where the subnormal reads as zero (-inf).
    #[test]
    fn a_lone_logs_odd_rest_is_glibcs() {
        let x = f32s(&[71362, 2.898_832f32.to_bits(), f32::INFINITY.to_bits()]);
        let lone = alone(|| bind1(&LOG, &[&x], &Params::new())).unwrap();
        assert_eq!(bits_of(&lone)[0], 3_268_407_732);
        let fused = bind1(&LOG, &[&x], &Params::new()).unwrap();
        assert_eq!(bits_of(&fused)[0], f32::NEG_INFINITY.to_bits());
        let four = f32s(&[71362, 71362, 71362, 71362]);
        let lone4 = alone(|| bind1(&LOG, &[&four], &Params::new())).unwrap();
        assert_eq!(bits_of(&lone4)[0], f32::NEG_INFINITY.to_bits());
    }

    /// XLA computes `asin` as `2·atan2(x, 1 + √((1 − x)(1 + x)))` with every step in the
    /// dtype: `arcsin float4_e2m1fn[[0.5,2.5,100.0],[7.626392333685963,1.0,1e-40]]`
    /// (tests/fixtures/eval/jax_x32_unary.json) is `[0, 2, 3, 3, 2, 0]`.
    #[test]
    fn asin_rounds_each_step_of_xlas_decomposition() {
        let x = Array::from_vec(vec![0.5f32, 2.5, 100.0, 7.626_392, 1.0, 1e-40])
            .astype(DType::Float4E2M1Fn)
            .unwrap();
        let r = bind1(&ASIN, &[&x], &Params::new()).unwrap();
        let r = r.astype(DType::Float32).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(r, [0.0, 2.0, 3.0, 3.0, 2.0, 0.0]);
    }

    /// `exp2 float8_e8m0fnu[-2.45,2.5,1e-40]` (tests/fixtures/eval/jax_x32_unary.json) is
    /// `[nan, 2, 1]`: the product of the constant 2⁻¹²⁷ by log 2 is folded (2⁻¹²⁸, rounding
    /// back to 2⁻¹²⁷), and `exp` of it, read as zero, is 1.
    #[test]
    fn e8m0s_smallest_value_is_a_folded_constant_in_exp2() {
        let x = Array::from_vec(vec![-2.45f32, 2.5, 1e-40])
            .astype(DType::Float8E8M0Fnu)
            .unwrap();
        let r = bind1(&EXP2, &[&x], &Params::new()).unwrap();
        assert_eq!(r.as_bytes(), [255, 128, 127]);
    }

    /// XLA compares complex parts with denormals off: `logical_and complex64[(1e-40+0j),
    /// 1e-40j,0j,(1+0j)] True` (tests/fixtures/eval/jax_x32_probes.json) is
    /// `[False, False, False, True]`.
    #[test]
    fn complex_equality_reads_subnormal_parts_as_zero() {
        let sub = f32::from_bits(71362);
        let z = c32(&[(sub, 0.0), (0.0, sub), (1.0, 0.0)]);
        let zero = c32(&[(0.0, 0.0), (0.0, 0.0), (0.0, 0.0)]);
        let ne = bind1(&NE, &[&z, &zero], &Params::new()).unwrap();
        assert_eq!(ne.to_vec::<bool>().unwrap(), [false, false, true]);
    }

    /// XLA's sign is `x / |x|` with its own `|x|`, and `(+0, +0)` for a zero.
    #[test]
    fn complex_sign_divides_by_xlas_abs() {
        let z = c32(&[(0.001, 0.001), (-0.0, -0.0), (3.0, -4.0)]);
        let abs = bind1(&ABS, &[&z], &Params::new())
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        let s = un(&SIGN, &z);
        assert_eq!(s[0], Complex::new(0.001 / abs[0], 0.001 / abs[0]));
        assert_eq!((s[1].re.to_bits(), s[1].im.to_bits()), (0, 0));
        assert_eq!(s[2], Complex::new(3.0 / abs[2], -4.0 / abs[2]));
    }
}
