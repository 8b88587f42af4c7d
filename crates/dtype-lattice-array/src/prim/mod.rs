//! Primitives as `jax.lax` defines them: one [`Primitive`] definition each, holding its name,
//! its shape/dtype rule (output [`ShapedArray`]s from input ones and the parameters) and its
//! CPU implementation, all registered in one table ([`PRIMITIVES`]). Every array operation
//! goes through [`bind`], so that an interpreter can later stage or differentiate any of them
//! (the JVP, transpose and batching rules are in the same definitions).
//!
//! ```
//! use dtype_lattice_array::prim::{self, Params};
//! use dtype_lattice_array::Array;
//!
//! let x = Array::from_vec(vec![1i32, 2, 3]);
//! let y = prim::bind(prim::by_name("add").unwrap(), &[&x, &x], &Params::new())?;
//! assert_eq!(y[0].to_vec::<i32>()?, [2, 4, 6]);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

pub(crate) mod ad;
pub(crate) mod batching;
pub(crate) mod chunk;
mod convert;
mod dot;
mod elem_arith;
pub(crate) mod elementwise;
pub(crate) mod fast;
pub(crate) mod fma;
mod iota;
pub(crate) mod lanes;
pub(crate) mod lax;
pub(crate) mod random;
mod reduce;
mod select;
mod slicing;
pub(crate) mod structural;
pub mod transpose;

pub(crate) use convert::CONVERT_ELEMENT_TYPE;
pub(crate) use structural::BROADCAST_IN_DIM;
pub use structural::expand_dims;

use std::fmt;

use dtype_lattice::error::{Exception, Reason};
use dtype_lattice::{DType, Error};

use crate::array::{Array, ShapedArray};

/// A primitive's output abstract values (nearly always one, kept inline).
pub type Avals = smallvec::SmallVec<[ShapedArray; 1]>;

/// A primitive's output arrays (nearly always one, kept inline).
pub type Outputs = smallvec::SmallVec<[Array; 1]>;

/// One parameter value of a primitive (as jaxprs print them).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Param {
    /// A boolean (`weak_type=False`).
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A tuple of integers (`axes=(0,)`, `shape=(2, 3)`).
    Ints(Vec<i64>),
    /// A dtype (`new_dtype=float32`).
    DType(DType),
    /// Python's `None`.
    None,
    /// A PRNG implementation (`impl=fry`: printed as its dtype tag).
    KeyImpl(&'static dtype_lattice::key::KeyImpl),
    /// `pad`'s `padding_config`: `(low, high, interior)` per dimension, printed as the tuple
    /// of tuples it is (`((1, 2, 0), (-1, 0, 1))`).
    Padding(Vec<(i64, i64, i64)>),
    /// `dot_general`'s `dimension_numbers`, `((lhs_contracting, rhs_contracting), (lhs_batch,
    /// rhs_batch))`, printed as jaxprs print it: `(([2], [1]), ([0], [0]))`.
    DotDimensionNumbers {
        /// The contracting dimensions of the left operand.
        lhs_contracting: Vec<i64>,
        /// The contracting dimensions of the right operand.
        rhs_contracting: Vec<i64>,
        /// The batch dimensions of the left operand.
        lhs_batch: Vec<i64>,
        /// The batch dimensions of the right operand.
        rhs_batch: Vec<i64>,
    },
    /// A call primitive's closed jaxpr (`jit[jaxpr={ lambda ... }]`).
    Jaxpr(std::sync::Arc<crate::core::ClosedJaxpr>),
    /// A name (`jit[name=f]`).
    Name(String),
    /// A `custom_jvp` function's rule (`custom_jvp_call[jvp=...]`).
    CustomJvp(crate::core::RuleRef),
    /// A `custom_vjp` function's passes (`custom_vjp_call[fwd=...]`, `custom_lin[bwd=...]`).
    CustomVjp(crate::core::VjpRef),
    /// Abstract values (`custom_lin[out_avals=(f32[3],)]`).
    Avals(Vec<crate::array::ShapedArray>),
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Param::Bool(true) => f.write_str("True"),
            Param::Bool(false) => f.write_str("False"),
            Param::Int(i) => write!(f, "{i}"),
            Param::Ints(v) if v.len() == 1 => write!(f, "({},)", v[0]),
            Param::Ints(v) => {
                let items: Vec<String> = v.iter().map(i64::to_string).collect();
                write!(f, "({})", items.join(", "))
            }
            Param::DType(d) => write!(f, "{d}"),
            Param::None => f.write_str("None"),
            Param::KeyImpl(k) => f.write_str(k.tag),
            Param::Padding(v) => {
                let items: Vec<String> = v
                    .iter()
                    .map(|(l, h, i)| format!("({l}, {h}, {i})"))
                    .collect();
                match items.as_slice() {
                    [one] => write!(f, "({one},)"),
                    _ => write!(f, "({})", items.join(", ")),
                }
            }
            Param::Jaxpr(j) => write!(f, "{j}"),
            Param::Name(n) => f.write_str(n),
            Param::CustomJvp(_) => f.write_str("<custom jvp rule>"),
            Param::CustomVjp(_) => f.write_str("<custom vjp rule>"),
            Param::Avals(a) => {
                let items: Vec<String> = a.iter().map(ToString::to_string).collect();
                match items.as_slice() {
                    [one] => write!(f, "({one},)"),
                    _ => write!(f, "({})", items.join(", ")),
                }
            }
            Param::DotDimensionNumbers {
                lhs_contracting,
                rhs_contracting,
                lhs_batch,
                rhs_batch,
            } => {
                let list = |v: &[i64]| {
                    let items: Vec<String> = v.iter().map(i64::to_string).collect();
                    format!("[{}]", items.join(", "))
                };
                write!(
                    f,
                    "(({}, {}), ({}, {}))",
                    list(lhs_contracting),
                    list(rhs_contracting),
                    list(lhs_batch),
                    list(rhs_batch)
                )
            }
        }
    }
}

/// A primitive's parameters, in the order jaxprs print them.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::prim::{Param, Params};
/// let p = Params::new().with("new_dtype", Param::DType(DType::Float32)).with("weak_type", Param::Bool(false));
/// assert_eq!(p.to_string(), "[new_dtype=float32 weak_type=False]");
/// assert_eq!(p.get("new_dtype"), Some(&Param::DType(DType::Float32)));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params(Vec<(&'static str, Param)>);

impl Params {
    /// No parameters.
    pub fn new() -> Params {
        Params(Vec::new())
    }

    /// With one more parameter.
    #[must_use]
    pub fn with(mut self, name: &'static str, value: Param) -> Params {
        self.0.push((name, value));
        self
    }

    /// A parameter by name.
    pub fn get(&self, name: &str) -> Option<&Param> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The parameters, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Param)> {
        self.0.iter().map(|(n, v)| (*n, v))
    }

    /// With `name` set to `value`: replaced in place if present, else appended (for rules
    /// that adjust a primitive's parameters).
    #[must_use]
    pub(crate) fn set(mut self, name: &'static str, value: Param) -> Params {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name, value)),
        }
        self
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A required parameter, for rules.
    pub(crate) fn require(&self, prim: &str, name: &str) -> Result<&Param, Error> {
        self.get(name).ok_or_else(|| {
            Error::refused(
                Exception::TypeError,
                format!("{prim}() missing required keyword argument: '{name}'"),
            )
        })
    }

    /// A required tuple of non-negative integers (axes, dimensions, a shape).
    pub(crate) fn usizes(&self, prim: &str, name: &str) -> Result<Vec<usize>, Error> {
        match self.require(prim, name)? {
            Param::Ints(v) => v
                .iter()
                .map(|&i| usize::try_from(i))
                .collect::<Result<_, _>>()
                .map_err(|_| bad_param(prim, name, "negative entries")),
            _ => Err(bad_param(prim, name, "not a tuple of integers")),
        }
    }
}

impl fmt::Display for Params {
    /// As jaxprs print them: `[axes=(0,) out_sharding=None]` (nothing for no parameters).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        let items: Vec<String> = self.0.iter().map(|(n, v)| format!("{n}={v}")).collect();
        write!(f, "[{}]", items.join(" "))
    }
}

fn bad_param(prim: &str, name: &str, why: &str) -> Error {
    Reason::InvalidArgument {
        argument: format!("{prim}.{name}"),
        reason: why.to_string(),
    }
    .into()
}

/// The shape/dtype rule: output abstract values from the inputs' and the parameters.
pub type ShapeRule = fn(&'static Primitive, &[&ShapedArray], &Params) -> Result<Avals, Error>;

/// The CPU implementation: outputs (of the avals the shape rule gave) from the inputs.
pub type ImplRule =
    fn(&'static Primitive, &[&Array], &Params, &[ShapedArray]) -> Result<Outputs, Error>;

/// A primitive: its name, number of operands, and rules.
pub struct Primitive {
    /// `jax.lax`'s name (`add`, `convert_element_type`, `broadcast_in_dim`).
    pub name: &'static str,
    /// How many operands it takes (`None`: any number, as `concatenate`).
    pub arity: Option<usize>,
    pub(crate) shape_rule: ShapeRule,
    pub(crate) impl_rule: ImplRule,
    /// The JVP rule ([`ad`]), if the primitive is differentiable.
    pub(crate) jvp: Option<ad::JvpRule>,
    /// The transpose rule ([`transpose`]), if the primitive is linear in some operand.
    pub(crate) transpose: Option<transpose::TransposeRule>,
    /// The batching rule (`batching`), for `vmap`: every primitive has one but `iota` (no
    /// operands) and the `jit` call primitive (inlined by the batching trace).
    pub(crate) batch: Option<batching::BatchRule>,
}

impl fmt::Debug for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Primitive({})", self.name)
    }
}

impl fmt::Display for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl Primitive {
    /// Whether jaxprs print this parameter ([`HIDDEN_PARAMS`]).
    pub(crate) fn shows_param(&self, name: &str, value: &Param) -> bool {
        !HIDDEN_PARAMS.iter().any(|&(prim, param, when)| {
            prim == self.name && param == name && when.is_none_or(|w| w == value)
        })
    }

    /// The output abstract values for these inputs and parameters (`jax.eval_shape` of one
    /// primitive).
    ///
    /// # Errors
    ///
    /// The primitive's own refusal, with JAX's exception class and message where JAX has one
    /// (`TypeError: add requires arguments to have the same dtypes, got int32, float32.`).
    pub fn abstract_eval(
        &'static self,
        inputs: &[&ShapedArray],
        params: &Params,
    ) -> Result<Avals, Error> {
        if let Some(n) = self.arity
            && inputs.len() != n
        {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "{}() takes {n} positional arguments but {} were given",
                    self.name,
                    inputs.len()
                ),
            ));
        }
        if inputs.iter().any(|a| a.dtype().is_float0()) {
            float0_operands(self, inputs)?;
        }
        (self.shape_rule)(self, inputs, params)
    }
}

/// The primitives that take `float0` operands, as JAX's do: they move, select or convert
/// elements and compute nothing (their `float0` outputs need no kernel).
const TAKES_FLOAT0: &[&str] = &[
    "broadcast_in_dim",
    "reshape",
    "transpose",
    "squeeze",
    "rev",
    "slice",
    "dynamic_slice",
    "dynamic_update_slice",
    "concatenate",
    "pad",
    "select_n",
    "convert_element_type",
    "jit",
    "custom_jvp_call",
    "custom_vjp_call",
    "custom_lin",
    // The PRNG primitives refuse a float0 operand with their own key checks.
    "random_seed",
    "random_split",
    "random_fold_in",
    "random_bits",
    "random_wrap",
    "random_unwrap",
];

/// JAX's refusal of a `float0` operand by a primitive that computes (`lax`'s wording: the
/// elementwise operations' `Called add with a float0 at position 0. …`, the reductions'
/// dtype errors).
fn float0_operands(prim: &'static Primitive, inputs: &[&ShapedArray]) -> Result<(), Error> {
    if TAKES_FLOAT0.contains(&prim.name) {
        return Ok(());
    }
    const WHY: &str = "float0s do not support any operations by design, because they are not \
        compatible with non-trivial vector spaces. No implicit dtype conversion is done. You \
        can use np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular zeros \
        array. \nIf you didn't expect to get a float0 you might have accidentally taken a \
        gradient with respect to an integer argument.";
    let f0 = DType::Float0.numpy_str();
    let refused = |e: Exception, m: String| Err(Error::refused(e, m));
    match prim.name {
        "reduce_sum" | "reduce_prod" | "cumsum" | "cumprod" | "cummax" | "cummin" => refused(
            Exception::TypeError,
            format!(
                "{} does not accept dtype void. Accepted dtypes are subtypes of number.",
                prim.name
            ),
        ),
        "reduce_max" | "argmax" => refused(
            Exception::ValueError,
            format!("Unsupported dtype for max: {f0}"),
        ),
        "reduce_min" | "argmin" => refused(
            Exception::ValueError,
            format!("Unsupported dtype for min: {f0}"),
        ),
        "reduce_and" | "reduce_or" | "reduce_xor" => refused(
            Exception::TypeError,
            format!("logical reduction requires operand dtype bool or int, got {f0}."),
        ),
        "bitcast_convert_type" => refused(
            Exception::ValueError,
            format!("unexpected input: dtype=dtype({f0})"),
        ),
        // JAX fails an assertion.
        "dot_general" => refused(
            Exception::TypeError,
            "dot_general does not accept float0 operands".to_string(),
        ),
        // Elementwise: unary operations name the array, the others its position.
        _ if prim.arity == Some(1) => refused(
            Exception::TypeError,
            format!("Called {} with a float0 array. {WHY}", prim.name),
        ),
        _ => {
            let i = inputs
                .iter()
                .position(|a| a.dtype().is_float0())
                .unwrap_or(0);
            let name = if prim.name == "add_any" {
                "add"
            } else {
                prim.name
            };
            refused(
                Exception::TypeError,
                format!("Called {name} with a float0 at position {i}. {WHY}"),
            )
        }
    }
}

/// Runs `prim`'s implementation on concrete `inputs` for outputs of `avals` (the shape rule
/// has passed). `float0` needs no kernel: its outputs hold no bytes, and a `float0` operand
/// converts to zeros.
pub(crate) fn implement(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    avals: &[ShapedArray],
) -> Result<Outputs, Error> {
    if avals.iter().any(|a| a.dtype().is_float0()) || inputs.iter().any(|x| x.dtype().is_float0()) {
        return avals
            .iter()
            .map(|a| {
                if a.dtype().is_float0() {
                    Ok(Array::float0(a.clone()))
                } else {
                    // convert_element_type of float0: zeros.
                    let zero = crate::array::scalar_array(
                        dtype_lattice::Value::Int(0),
                        a.dtype(),
                        a.weak_type(),
                    )?;
                    lax::broadcast_to(&zero, a.shape())
                }
            })
            .collect();
    }
    (prim.impl_rule)(prim, inputs, params, avals)
}

/// Parameters JAX's jaxpr printer leaves out: `(primitive, parameter, when)` (`None`: always;
/// else when the parameter has this value). `broadcast_in_dim`'s shape is the output's.
const HIDDEN_PARAMS: &[(&str, &str, Option<&Param>)] = &[
    ("dot_general", "precision", Some(&Param::None)),
    ("dot_general", "out_sharding", Some(&Param::None)),
    ("convert_element_type", "sharding", Some(&Param::None)),
    ("broadcast_in_dim", "shape", None),
    ("broadcast_in_dim", "sharding", Some(&Param::None)),
    (
        "broadcast_in_dim",
        "broadcast_dimensions",
        Some(&Param::Ints(Vec::new())),
    ),
];

/// Every primitive, one row each.
pub static PRIMITIVES: &[&Primitive] = &[
    &crate::core::JIT_PRIMITIVE,
    &crate::core::CUSTOM_JVP_CALL,
    &crate::core::CUSTOM_VJP_CALL,
    &crate::core::CUSTOM_LIN,
    &elementwise::ADD,
    &elementwise::ADD_ANY,
    &elementwise::SUB,
    &elementwise::MUL,
    &elementwise::MAX,
    &elementwise::MIN,
    &elementwise::NEG,
    &elementwise::EQ,
    &elementwise::NE,
    &elementwise::LT,
    &elementwise::LE,
    &elementwise::GT,
    &elementwise::GE,
    &elementwise::AND,
    &elementwise::OR,
    &elementwise::XOR,
    &convert::CONVERT_ELEMENT_TYPE,
    &structural::BROADCAST_IN_DIM,
    &structural::RESHAPE,
    &random::RANDOM_SEED,
    &random::RANDOM_SPLIT,
    &random::RANDOM_FOLD_IN,
    &random::RANDOM_BITS,
    &random::RANDOM_WRAP,
    &random::RANDOM_UNWRAP,
    &elementwise::DIV,
    &elementwise::REM,
    &elementwise::POW,
    &elementwise::ATAN2,
    &elementwise::NEXTAFTER,
    &elementwise::COMPLEX,
    &elementwise::SHIFT_LEFT,
    &elementwise::SHIFT_RIGHT_ARITHMETIC,
    &elementwise::SHIFT_RIGHT_LOGICAL,
    &elementwise::NOT,
    &elementwise::SIGN,
    &elementwise::FLOOR,
    &elementwise::CEIL,
    &elementwise::ROUND,
    &elementwise::IS_FINITE,
    &elementwise::ABS,
    &elementwise::SQUARE,
    &elementwise::INTEGER_POW,
    &elementwise::POPULATION_COUNT,
    &elementwise::CLZ,
    &elementwise::REAL,
    &elementwise::IMAG,
    &elementwise::CONJ,
    &elementwise::EXP,
    &elementwise::EXP2,
    &elementwise::EXPM1,
    &elementwise::LOG,
    &elementwise::LOG1P,
    &elementwise::SIN,
    &elementwise::COS,
    &elementwise::TAN,
    &elementwise::TANH,
    &elementwise::LOGISTIC,
    &elementwise::ASIN,
    &elementwise::ACOS,
    &elementwise::ATAN,
    &elementwise::SINH,
    &elementwise::COSH,
    &elementwise::ASINH,
    &elementwise::ACOSH,
    &elementwise::ATANH,
    &elementwise::SQRT,
    &elementwise::RSQRT,
    &elementwise::CBRT,
    &elementwise::ERF,
    &elementwise::ERFC,
    &elementwise::ERF_INV,
    &select::SELECT_N,
    &select::CLAMP,
    &select::BITCAST_CONVERT_TYPE,
    &structural::TRANSPOSE,
    &structural::SQUEEZE,
    &structural::REV,
    &structural::STOP_GRADIENT,
    &slicing::SLICE,
    &slicing::DYNAMIC_SLICE,
    &slicing::DYNAMIC_UPDATE_SLICE,
    &slicing::CONCATENATE,
    &slicing::PAD,
    &iota::IOTA,
    &reduce::REDUCE_SUM,
    &reduce::REDUCE_PROD,
    &reduce::REDUCE_MAX,
    &reduce::REDUCE_MIN,
    &reduce::REDUCE_AND,
    &reduce::REDUCE_OR,
    &reduce::ARGMAX,
    &reduce::ARGMIN,
    &reduce::CUMSUM,
    &reduce::CUMPROD,
    &reduce::CUMMAX,
    &reduce::CUMMIN,
    &dot::DOT_GENERAL,
];

/// The primitive of a name.
///
/// ```
/// assert_eq!(dtype_lattice_array::prim::by_name("mul").unwrap().name, "mul");
/// assert!(dtype_lattice_array::prim::by_name("nope").is_none());
/// ```
pub fn by_name(name: &str) -> Option<&'static Primitive> {
    PRIMITIVES.iter().copied().find(|p| p.name == name)
}

/// Applies a primitive: its shape rule, then its implementation (the evaluation
/// interpreter; staging and differentiation interpreters will sit here).
///
/// # Errors
///
/// The shape rule's refusal (JAX's exception and message), or an implementation's.
pub fn bind(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
) -> Result<Outputs, Error> {
    if let Some(trace) = crate::core::current() {
        return trace.process_primitive(prim, inputs, params);
    }
    crate::core::check_concrete(inputs)?;
    // Up to four operands' avals on the stack (binds of small arrays are allocation-bound).
    let out = match inputs {
        [] => prim.abstract_eval(&[], params)?,
        [first, ..] if inputs.len() <= 4 => {
            let mut avals = [first.aval(); 4];
            for (slot, a) in avals.iter_mut().zip(inputs) {
                *slot = a.aval();
            }
            prim.abstract_eval(&avals[..inputs.len()], params)?
        }
        _ => {
            let avals: Vec<&ShapedArray> = inputs.iter().map(|a| a.aval()).collect();
            prim.abstract_eval(&avals, params)?
        }
    };
    implement(prim, inputs, params, &out)
}

/// Whether the primitives compute as XLA's CPU backend does (JAX's rules), not as NumPy's
/// loops (the NumPy rules in force on this thread, [`crate::config::semantics`]).
pub(crate) fn on_xla() -> bool {
    crate::config::semantics() == crate::convert::Semantics::Jax
}

/// [`bind1`] of a binary primitive on two arrays of one aval: small float32 arithmetic
/// outside any transformation runs its loop directly ([`fast::same_aval`]), the rest binds.
pub(crate) fn bind_same_aval(
    prim: &'static Primitive,
    x: &Array,
    y: &Array,
) -> Result<Array, Error> {
    if crate::core::current().is_none()
        && let Some(out) = fast::same_aval(prim, x, y)
    {
        return Ok(out);
    }
    bind1(prim, &[x, y], &Params::new())
}

/// [`bind`] for a primitive with one output.
pub(crate) fn bind1(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
) -> Result<Array, Error> {
    let mut out = bind(prim, inputs, params)?;
    if out.is_empty() {
        return Err(Reason::EmptyOperands.into());
    }
    Ok(out.swap_remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for (i, p) in PRIMITIVES.iter().enumerate() {
            assert!(
                PRIMITIVES[..i].iter().all(|q| q.name != p.name),
                "{}",
                p.name
            );
        }
    }
}
