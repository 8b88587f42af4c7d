//! NumPy's ufuncs and casts as data, for the types ml_dtypes adds to NumPy: each ufunc's loops (its
//! `ufunc.types`, over the model's dtypes) and which of ml_dtypes' types register a loop of
//! their own, and the loop NumPy 2 picks when an operand has one of those types.
//!
//! ml_dtypes' types are legacy user DTypes, so NumPy does not promote them first as it does
//! its own: a call with one of them runs
//!
//! 1. ml_dtypes' loop when every operand has that one type (`bfloat16 + bfloat16` computes in
//!    bfloat16: ml_dtypes' loops compute in float32 and round once);
//! 2. for `logical_and`, `logical_or` and `logical_xor`, the bool loop (their promoter);
//! 3. otherwise NumPy's legacy linear search: ml_dtypes' loops of the operands' types, then
//!    NumPy's loops in `ufunc.types` order, the first one every operand casts to safely. A
//!    Python scalar casts as NEP 50 lets it into NumPy's numeric loops (a Python int into any
//!    integer loop, where it must then fit) and, into other loops, as its common DType with
//!    the loop's type does (a Python int reaches a bfloat16 loop, a Python float does not).
//!
//! So `uint2 + 0` runs NumPy's int8 loop, `float4_e2m1fn + 0.0` its float32 loop, `int4 &
//! int4` its int8 loop, and `bfloat16 & bfloat16` has no loop at all.
//!
//! Among NumPy's own dtypes ([`Ufunc::loop_for`]) each ufunc's legacy type resolver picks the
//! loop: the same search for most (`reciprocal` of int16 runs int16's loop, `square` of bool
//! int8's), the operands' common dtype for `add`, `multiply`, `maximum`, `positive`, `sign` …
//! (whose loop must exist: `positive` of bool has none), float64 for `true_divide` of
//! integers, the bool loop for the logical functions.
//!
//! ```
//! use dtype_lattice::{DType, Operand, PyType};
//! use dtype_lattice::ufunc::numpy_ufunc;
//! let add = numpy_ufunc("add").unwrap();
//! let l = add.resolve(&[Operand::array(DType::UInt2), PyType::Int.into()])?.unwrap();
//! assert_eq!((l.inputs.as_slice(), l.output), (&[DType::Int8, DType::Int8][..], DType::Int8));
//! let l = add.resolve(&[Operand::array(DType::BFloat16); 2])?.unwrap();
//! assert!(l.ml_dtypes && l.output == DType::BFloat16);
//! // NumPy's own dtypes are promoted first (`Rules::numpy().op_result`), not searched.
//! assert!(add.resolve(&[Operand::array(DType::Int8); 2])?.is_none());
//! let and = numpy_ufunc("bitwise_and").unwrap();
//! assert!(and.resolve(&[Operand::array(DType::BFloat16); 2]).is_err());
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

use super::numpy::{self, Part};
use crate::dtype::DType::{self, *};
use crate::error::{Error, Exception};
use crate::operand::{Node, Operand, PyType};

/// What a loop outputs, from its input dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    /// The input dtype.
    Same,
    /// bool (comparisons, logical functions, `isnan` …).
    Bool,
    /// A complex input's component (`absolute`), else the input dtype.
    Component,
}

/// NumPy's legacy type resolver of a ufunc, which picks the loop for NumPy's own dtypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resolver {
    /// `PyUFunc_DefaultTypeResolver`: the first loop in `ufunc.types` order every operand
    /// casts to safely (Python scalars by NEP 50's rules).
    Default,
    /// `PyUFunc_SimpleUniformOperationTypeResolver` (`add`, `multiply`, `maximum`,
    /// `positive`, `sign` …): the operands' common dtype (`np.result_type`), whose loop must
    /// exist (NumPy's `UFuncTypeError` otherwise: `positive` of bool).
    Uniform,
    /// `subtract`: [`Resolver::Uniform`], with NumPy's `TypeError` for two booleans.
    Subtract,
    /// `negative`: [`Resolver::Uniform`], with NumPy's `TypeError` for a boolean.
    Negative,
    /// `PyUFunc_TrueDivisionTypeResolver`: booleans and integers divide as float64.
    TrueDivide,
    /// `PyUFunc_SimpleBinaryComparisonTypeResolver`: one dtype's own loop, else the default
    /// search; a Python int compared with integers need not fit them (NumPy's special
    /// integer comparisons: the answer is then the same for every element).
    Comparison,
    /// `logical_and`/`or`/`xor`: a promoter runs the bool loop for any mix.
    Logical,
}

/// Which of ml_dtypes' types register a loop of a ufunc (bits).
const FLOATS: u8 = 1;
const INTS: u8 = 2;
const COMPLEX: u8 = 4;

/// One NumPy ufunc: its name, number of inputs, NumPy's homogeneous loops over the model's
/// dtypes (`ufunc.types`' input codes in order: `?bBhHiIlLqQefdFD`; longdouble, datetime and
/// object loops, never the first to take these operands, and the mixed int64/uint64
/// comparison loops, which the legacy search does not see, are left out), what they output,
/// and which of ml_dtypes' types (floats, sub-byte integers, complex32/bcomplex32) register a
/// loop of their own.
#[derive(Debug)]
pub struct Ufunc {
    name: &'static str,
    inputs: usize,
    loops: &'static str,
    output: Output,
    ml: u8,
    /// How NumPy picks the loop among its own dtypes.
    resolver: Resolver,
}

/// The loop a ufunc runs: the dtypes its inputs are cast to, its output dtype, and whether it
/// is ml_dtypes' loop (computing in float32 and rounding once to the type, or in the
/// sub-byte integer, wrapping) rather than one of NumPy's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    /// The dtype each input is cast to.
    pub inputs: Vec<DType>,
    /// The output dtype.
    pub output: DType,
    /// Whether it is ml_dtypes' loop.
    pub ml_dtypes: bool,
}

const fn ufunc(
    name: &'static str,
    inputs: usize,
    loops: &'static str,
    output: Output,
    ml: u8,
) -> Ufunc {
    Ufunc {
        name,
        inputs,
        loops,
        output,
        ml,
        resolver: Resolver::Default,
    }
}

/// A ufunc with another type resolver than the default one.
const fn with(resolver: Resolver, u: Ufunc) -> Ufunc {
    Ufunc { resolver, ..u }
}

const ALL: u8 = FLOATS | INTS | COMPLEX;
const NUMERIC: &str = "?bBhHiIlLqQefdFD";
const NO_BOOL: &str = "bBhHiIlLqQefdFD";
const INEXACT: &str = "efdFD";
const REAL: &str = "bBhHiIlLqQefd";
const REAL_BOOL: &str = "?bBhHiIlLqQefd";

/// The ufuncs `dtype-lattice eval` uses, as NumPy 2.4 and ml_dtypes 0.6 define them
/// (`np.divide` is `np.true_divide`, `np.abs` is `np.absolute`; `np.round` of these types
/// runs `np.rint`).
pub static NUMPY_UFUNCS: &[Ufunc] = &[
    with(
        Resolver::Uniform,
        ufunc("add", 2, NUMERIC, Output::Same, ALL),
    ),
    with(
        Resolver::Subtract,
        ufunc("subtract", 2, NO_BOOL, Output::Same, ALL),
    ),
    with(
        Resolver::Uniform,
        ufunc("multiply", 2, NUMERIC, Output::Same, ALL),
    ),
    with(
        Resolver::TrueDivide,
        ufunc("true_divide", 2, INEXACT, Output::Same, FLOATS | COMPLEX),
    ),
    ufunc("floor_divide", 2, REAL, Output::Same, FLOATS | INTS),
    ufunc("remainder", 2, REAL, Output::Same, FLOATS | INTS),
    ufunc("power", 2, NO_BOOL, Output::Same, FLOATS | COMPLEX),
    with(
        Resolver::Uniform,
        ufunc("maximum", 2, NUMERIC, Output::Same, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Uniform,
        ufunc("minimum", 2, NUMERIC, Output::Same, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Comparison,
        ufunc("equal", 2, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Comparison,
        ufunc("not_equal", 2, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Comparison,
        ufunc("less", 2, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Comparison,
        ufunc("less_equal", 2, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Comparison,
        ufunc("greater", 2, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Comparison,
        ufunc("greater_equal", 2, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Logical,
        ufunc("logical_and", 2, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Logical,
        ufunc("logical_or", 2, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Logical,
        ufunc("logical_xor", 2, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ),
    ufunc("bitwise_and", 2, "?bBhHiIlLqQ", Output::Same, 0),
    ufunc("bitwise_or", 2, "?bBhHiIlLqQ", Output::Same, 0),
    ufunc("bitwise_xor", 2, "?bBhHiIlLqQ", Output::Same, 0),
    ufunc("left_shift", 2, "bBhHiIlLqQ", Output::Same, 0),
    ufunc("right_shift", 2, "bBhHiIlLqQ", Output::Same, 0),
    ufunc("arctan2", 2, "efd", Output::Same, FLOATS),
    ufunc("matmul", 2, NUMERIC, Output::Same, 0),
    with(
        Resolver::Negative,
        ufunc("negative", 1, NO_BOOL, Output::Same, FLOATS | COMPLEX),
    ),
    with(
        Resolver::Uniform,
        ufunc("positive", 1, NO_BOOL, Output::Same, FLOATS | COMPLEX),
    ),
    ufunc("absolute", 1, NUMERIC, Output::Component, FLOATS | COMPLEX),
    with(
        Resolver::Uniform,
        ufunc("sign", 1, NO_BOOL, Output::Same, FLOATS | COMPLEX),
    ),
    ufunc("floor", 1, REAL_BOOL, Output::Same, FLOATS),
    ufunc("ceil", 1, REAL_BOOL, Output::Same, FLOATS),
    ufunc("rint", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("trunc", 1, REAL_BOOL, Output::Same, FLOATS),
    ufunc("sqrt", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("square", 1, NO_BOOL, Output::Same, FLOATS | COMPLEX),
    ufunc("reciprocal", 1, NO_BOOL, Output::Same, FLOATS | COMPLEX),
    ufunc("exp", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("exp2", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("expm1", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("log", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("log2", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("log1p", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("sin", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("cos", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("tan", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("tanh", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("arcsin", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("arctan", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("sinh", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("cosh", 1, INEXACT, Output::Same, FLOATS | COMPLEX),
    ufunc("isnan", 1, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ufunc("isinf", 1, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ufunc("isfinite", 1, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ufunc("logical_not", 1, NUMERIC, Output::Bool, FLOATS | COMPLEX),
    ufunc("invert", 1, "?bBhHiIlLqQ", Output::Same, 0),
];

/// The NumPy ufunc of a name (`divide` is `true_divide`, `abs` is `absolute`).
///
/// ```
/// use dtype_lattice::ufunc::numpy_ufunc;
/// assert_eq!(numpy_ufunc("divide").unwrap().name(), "true_divide");
/// assert_eq!(numpy_ufunc("sqrt").unwrap().inputs(), 1);
/// assert!(numpy_ufunc("sqrtt").is_none());
/// ```
pub fn numpy_ufunc(name: &str) -> Option<&'static Ufunc> {
    let name = match name {
        "divide" => "true_divide",
        "abs" => "absolute",
        other => other,
    };
    NUMPY_UFUNCS.iter().find(|u| u.name == name)
}

/// Whether NumPy has `dtype` through ml_dtypes (one of its legacy user DTypes: bfloat16,
/// the float8/float6/float4 formats, the sub-byte integers, complex32, bcomplex32).
///
/// ```
/// use dtype_lattice::DType;
/// assert!(dtype_lattice::ufunc::is_ml_dtype(DType::Int4));
/// assert!(!dtype_lattice::ufunc::is_ml_dtype(DType::Float16));
/// ```
pub fn is_ml_dtype(dtype: DType) -> bool {
    numpy::is_ml(dtype)
}

/// `np.can_cast(from, to, "safe")` in NumPy with ml_dtypes (`false` for a dtype NumPy does
/// not have). ml_dtypes' safe casts form no order: float8_e4m3 and float8_e4m3fn cast safely
/// into each other.
///
/// ```
/// use dtype_lattice::DType::*;
/// use dtype_lattice::ufunc::can_cast_safely;
/// assert!(can_cast_safely(Int8, BFloat16) && can_cast_safely(BFloat16, Float32));
/// assert!(can_cast_safely(Float8E4M3, Float8E4M3Fn) && can_cast_safely(Float8E4M3Fn, Float8E4M3));
/// assert!(!can_cast_safely(Int16, BFloat16));
/// ```
pub fn can_cast_safely(from: DType, to: DType) -> bool {
    numpy::knows(from) && numpy::knows(to) && numpy::can_cast_safely(from, to)
}

/// Whether NumPy with ml_dtypes converts an array of `from` to `to` at all (`x.astype(to)`,
/// unsafe casting): ml_dtypes registers no cast between some of its types.
///
/// ```
/// use dtype_lattice::DType::*;
/// assert!(dtype_lattice::ufunc::astype(Int4, Int8).is_ok());
/// assert!(dtype_lattice::ufunc::astype(Int4, UInt4).is_err());
/// ```
///
/// # Errors
///
/// NumPy's `TypeError` (`Cannot cast array data from dtype(int4) to dtype(uint4) according
/// to the rule 'unsafe'`) for those pairs.
pub fn astype(from: DType, to: DType) -> Result<(), Error> {
    numpy::astype(from, to)
}

/// The dtype of one of NumPy's one-character type codes.
fn code_dtype(c: char) -> DType {
    match c {
        '?' => Bool,
        'b' => Int8,
        'B' => UInt8,
        'h' => Int16,
        'H' => UInt16,
        'i' => Int32,
        'I' => UInt32,
        'l' | 'q' => Int64,
        'L' | 'Q' => UInt64,
        'e' => Float16,
        'f' => Float32,
        'd' => Float64,
        'F' => Complex64,
        _ => Complex128,
    }
}

/// `dtype_kind_to_simplified_ordering`: bool 0, integers 1, inexact 2, anything else 3.
fn simplified_kind(t: DType) -> u8 {
    match numpy::kind_char(t) {
        'b' => 0,
        'u' | 'i' => 1,
        'f' | 'c' => 2,
        _ => 3,
    }
}

impl Ufunc {
    /// The ufunc's name (`true_divide`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How many inputs it takes.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Whether ml_dtypes registers a loop of this ufunc for `t`.
    fn has_ml_loop(&self, t: DType) -> bool {
        let group = if t.kind() == crate::dtype::Kind::Complex {
            COMPLEX
        } else if t.kind().is_integer() {
            INTS
        } else {
            FLOATS
        };
        numpy::is_ml(t) && self.ml & group != 0
    }

    /// The loop of one dtype `t` for `n` inputs.
    fn loop_of(&self, t: DType, n: usize, ml_dtypes: bool) -> Loop {
        let output = match self.output {
            Output::Same => t,
            Output::Bool => Bool,
            Output::Component => t.component(),
        };
        Loop {
            inputs: vec![t; n],
            output,
            ml_dtypes,
        }
    }

    /// The loop NumPy 2 with ml_dtypes runs for `operands` (arrays, 0-d arrays, Python
    /// scalars, as [`Operand`]s) when one of them has one of ml_dtypes' types; `None` when
    /// every operand has one of NumPy's own dtypes (NumPy then promotes them first:
    /// [`crate::Rules::op_result`]). Python ints going into one of NumPy's integer loops must
    /// fit it, as NEP 50 says.
    ///
    /// # Errors
    ///
    /// NumPy's `TypeError` when no loop takes the operands (`ufunc 'bitwise_and' not
    /// supported for the input types, …`) or for the wrong number of operands; its
    /// `OverflowError` for a Python int out of an integer loop's range, `power`'s `ValueError`
    /// for a negative integer exponent in one; `UnsupportedOperand` for an operand NumPy
    /// cannot have (a weak array, a key dtype).
    pub fn resolve(&self, operands: &[Operand]) -> Result<Option<Loop>, Error> {
        let l = self.select(operands)?;
        if let Some(l) = &l {
            numpy::check_python_ints(operands, &l.inputs)?;
            if self.name == "power" {
                numpy::check_negative_power(operands, l.inputs[0])?;
            }
        }
        Ok(l)
    }

    /// The loop NumPy 2 with ml_dtypes runs for `operands`, whatever their dtypes:
    /// [`Ufunc::resolve`]'s when one of them has one of ml_dtypes' types, else the one the
    /// ufunc's legacy type resolver picks among NumPy's own loops: most search `ufunc.types`
    /// for the first loop every operand casts to safely (`reciprocal` of int16 runs int16's
    /// loop, `square` of bool int8's); `add`, `multiply`, `maximum`, `positive`, `sign` …
    /// take the operands' common dtype, whose loop must exist; `true_divide` divides booleans
    /// and integers as float64; the logical functions run their bool loop.
    ///
    /// Python ints going into an integer loop must fit it, except in a comparison with
    /// integers (NumPy compares such a Python int exactly: every element then gives the same
    /// answer).
    ///
    /// ```
    /// use dtype_lattice::{DType, Operand, PyType, Value};
    /// use dtype_lattice::ufunc::numpy_ufunc;
    /// let loop_of = |name: &str, ops: &[Operand]| numpy_ufunc(name).unwrap().loop_for(ops);
    /// let int8 = Operand::array(DType::Int8);
    /// assert_eq!(loop_of("true_divide", &[int8, int8])?.output, DType::Float64);
    /// assert_eq!(loop_of("sqrt", &[int8])?.output, DType::Float16);
    /// assert_eq!(loop_of("reciprocal", &[PyType::Int.into()])?.output, DType::Int64);
    /// assert_eq!(loop_of("square", &[Operand::array(DType::Bool)])?.output, DType::Int8);
    /// assert!(loop_of("positive", &[Operand::array(DType::Bool)]).is_err());
    /// let big = Operand::Literal(Value::Int(1 << 40));
    /// assert!(loop_of("add", &[int8, big]).is_err());
    /// assert_eq!(loop_of("less", &[int8, big])?.inputs, [DType::Int8, DType::Int8]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Ufunc::resolve`]; NumPy's `UFuncTypeError` when the common dtype has no loop
    /// (`positive` of bool), its `TypeError`s for `negative` of bool and `subtract` of two.
    pub fn loop_for(&self, operands: &[Operand]) -> Result<Loop, Error> {
        if let Some(l) = self.resolve(operands)? {
            return Ok(l);
        }
        let parts = operands
            .iter()
            .map(|op| numpy::classify("numpy", op, numpy::knows))
            .collect::<Result<Vec<Part>, Error>>()?;
        if parts.len() != self.inputs {
            return Err(self.arity_error(parts.len()));
        }
        let l = self.select_builtin(&parts, operands)?;
        let exact_comparison = self.resolver == Resolver::Comparison
            && parts.iter().any(|p| matches!(p, Part::Strong(_)))
            && parts.iter().all(|p| match *p {
                Part::Strong(t) => t.kind().is_integer(),
                Part::Weak(t) => t == PyType::Int,
            });
        if !exact_comparison {
            numpy::check_python_ints(operands, &l.inputs)?;
        }
        if self.name == "power" {
            numpy::check_negative_power(operands, l.inputs[0])?;
        }
        Ok(l)
    }

    /// NumPy's `TypeError` for the wrong number of operands.
    fn arity_error(&self, n: usize) -> Error {
        Error::refused(
            Exception::TypeError,
            format!(
                "{}() takes from {} to {} positional arguments but {n} were given",
                self.name,
                self.inputs,
                self.inputs + 1
            ),
        )
    }

    /// The loop of the ufunc's legacy type resolver for operands of NumPy's own dtypes.
    fn select_builtin(&self, parts: &[Part], operands: &[Operand]) -> Result<Loop, Error> {
        let n = parts.len();
        let has = |t: DType| self.loops.chars().map(code_dtype).any(|c| c == t);
        let is_bool = |p: &Part| matches!(p, Part::Strong(Bool));
        let uniform = || -> Result<Loop, Error> {
            let t = numpy::result_type(operands)?.dtype;
            if has(t) {
                return Ok(self.loop_of(t, n, false));
            }
            let classes: Vec<String> = parts.iter().map(|p| numpy::dtype_class(p.node())).collect();
            let types = match classes.as_slice() {
                [one] => one.clone(),
                all => format!("({})", all.join(", ")),
            };
            Err(Error::refused(
                Exception::UFuncTypeError,
                format!(
                    "ufunc '{}' did not contain a loop with signature matching types {types} -> None",
                    self.name
                ),
            ))
        };
        // A comparison of operands of one dtype runs that dtype's loop.
        if self.resolver == Resolver::Comparison
            && let [Part::Strong(t), rest @ ..] = parts
            && rest.iter().all(|p| matches!(p, Part::Strong(u) if u == t))
            && has(*t)
        {
            return Ok(self.loop_of(*t, n, false));
        }
        match self.resolver {
            Resolver::Logical => Ok(self.loop_of(Bool, n, false)),
            Resolver::Negative if parts.iter().all(is_bool) => Err(Error::refused(
                Exception::TypeError,
                "The numpy boolean negative, the `-` operator, is not supported, use the `~` \
                 operator or the logical_not function instead.",
            )),
            Resolver::Subtract if parts.iter().all(is_bool) => Err(Error::refused(
                Exception::TypeError,
                "numpy boolean subtract, the `-` operator, is not supported, use the \
                 bitwise_xor, the `^` operator, or the logical_xor function instead.",
            )),
            Resolver::Uniform | Resolver::Negative | Resolver::Subtract => uniform(),
            Resolver::TrueDivide
                if parts.iter().all(|p| match *p {
                    Part::Strong(t) => t == Bool || t.kind().is_integer(),
                    Part::Weak(t) => t == PyType::Int,
                }) =>
            {
                Ok(self.loop_of(Float64, n, false))
            }
            _ => self.linear_search(parts).ok_or_else(|| self.no_loop()),
        }
    }

    /// The legacy linear search over NumPy's loops (`ufunc.types` order): the first one every
    /// operand casts to safely.
    fn linear_search(&self, parts: &[Part]) -> Option<Loop> {
        let min_scalar = use_min_scalar(parts);
        self.loops
            .chars()
            .map(code_dtype)
            .find(|&t| parts.iter().all(|p| can_cast_operand(p, t, min_scalar)))
            .map(|t| self.loop_of(t, parts.len(), false))
    }

    /// NumPy's `TypeError` when no loop takes the operands by safe casting.
    fn no_loop(&self) -> Error {
        Error::refused(
            Exception::TypeError,
            format!(
                "ufunc '{}' not supported for the input types, and the inputs could not \
                 be safely coerced to any supported types according to the casting rule \
                 ''safe''",
                self.name
            ),
        )
    }

    /// [`Ufunc::resolve`] without the checks of values.
    fn select(&self, operands: &[Operand]) -> Result<Option<Loop>, Error> {
        let parts = operands
            .iter()
            .map(|op| numpy::classify("numpy", op, numpy::knows))
            .collect::<Result<Vec<Part>, Error>>()?;
        let ml = |p: &Part| matches!(p, Part::Strong(t) if numpy::is_ml(*t));
        if !parts.iter().any(ml) {
            return Ok(None);
        }
        let n = parts.len();
        if n != self.inputs {
            return Err(self.arity_error(n));
        }
        // An exact match: ml_dtypes' loop of the one type every operand has.
        if let Part::Strong(t) = parts[0]
            && parts
                .iter()
                .all(|p| matches!(p, Part::Strong(u) if *u == t))
            && self.has_ml_loop(t)
        {
            return Ok(Some(self.loop_of(t, n, true)));
        }
        if self.resolver == Resolver::Logical {
            return Ok(Some(self.loop_of(Bool, n, false)));
        }
        // The legacy linear search: ml_dtypes' loops of the operands' types first.
        let min_scalar = use_min_scalar(&parts);
        let takes = |t: DType| parts.iter().all(|p| can_cast_operand(p, t, min_scalar));
        let mut seen: Vec<DType> = Vec::new();
        for p in &parts {
            if let Part::Strong(t) = *p
                && numpy::is_ml(t)
                && !seen.contains(&t)
            {
                seen.push(t);
                if self.has_ml_loop(t) && takes(t) {
                    return Ok(Some(self.loop_of(t, n, true)));
                }
            }
        }
        self.linear_search(&parts)
            .map(Some)
            .ok_or_else(|| self.no_loop())
    }

    /// The loop of `ufunc.reduce` over an array of `dtype` (`None` for NumPy's own dtypes):
    /// as for two operands of `dtype`, but a reduction needs a loop that outputs its input
    /// dtype, so the logical functions run their bool loop.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// use dtype_lattice::ufunc::numpy_ufunc;
    /// let max = numpy_ufunc("maximum").unwrap();
    /// assert_eq!(max.resolve_reduce(DType::Int4)?.unwrap().output, DType::Int8);
    /// let sum = numpy_ufunc("add").unwrap();
    /// assert_eq!(sum.resolve_reduce(DType::Int4)?.unwrap().output, DType::Int4);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Ufunc::resolve`].
    pub fn resolve_reduce(&self, dtype: DType) -> Result<Option<Loop>, Error> {
        if self.resolver == Resolver::Logical && numpy::is_ml(dtype) {
            return Ok(Some(self.loop_of(Bool, 2, false)));
        }
        self.resolve(&[Operand::array(dtype), Operand::array(dtype)])
    }
}

/// `should_use_min_scalar_weak_literals`: whether Python scalars are cast by NEP 50's rules
/// (some operand is an array of a kind at least as high as every Python scalar's).
fn use_min_scalar(parts: &[Part]) -> bool {
    let mut scalar = None;
    let mut array = None;
    for p in parts {
        match *p {
            Part::Weak(t) => scalar = scalar.max(Some(if t == PyType::Int { 1 } else { 2 })),
            Part::Strong(t) => array = array.max(Some(simplified_kind(t))),
        }
    }
    match (array, scalar) {
        (None, _) => false,
        (Some(a), s) => s.is_none_or(|s| a >= s),
    }
}

/// Whether an operand casts safely into a loop of dtype `to` (`PyArray_CanCastArrayTo` and
/// `can_cast_pyscalar_scalar_to`).
fn can_cast_operand(p: &Part, to: DType, min_scalar: bool) -> bool {
    let t = match *p {
        Part::Strong(from) => return numpy::can_cast_safely(from, to),
        Part::Weak(t) => t,
    };
    if !min_scalar {
        return numpy::can_cast_safely(t.default_dtype(), to);
    }
    if numpy::knows_builtin(to) {
        match to.kind() {
            crate::dtype::Kind::Complex => return true,
            crate::dtype::Kind::Float => return t != PyType::Complex,
            crate::dtype::Kind::SignedInt | crate::dtype::Kind::UnsignedInt => {
                return t == PyType::Int;
            }
            _ => {}
        }
    }
    // Other loops: the Python scalar as its common DType with the loop's type.
    let from = match numpy::common_dtype_pair(Node::Weak(t), Node::Dtype(to)) {
        Ok(Node::Dtype(f)) => f,
        _ => t.default_dtype(),
    };
    numpy::can_cast_safely(from, to)
}
