//! Primitives as `jax.lax` defines them: one [`Primitive`] definition each, holding its name,
//! its shape/dtype rule (output [`ShapedArray`]s from input ones and the parameters), its CPU
//! implementation and its JVP, transpose and batching rules, in the primitive's family's file
//! (`crate::lax`). Every array operation goes through [`bind`], which hands it to the current
//! trace (an interpreter) or evaluates it; interpreters call the definition's rules and hold
//! no per-primitive code.
//!
//! ```
//! use dtype_lattice_array::{core::{self, Params}};
//! use dtype_lattice_array::{Array, lax};
//!
//! let x = Array::from_vec(vec![1i32, 2, 3]);
//! let y = core::bind(&lax::ADD, &[&x, &x], &Params::new())?;
//! assert_eq!(y[0].to_vec::<i32>()?, [2, 4, 6]);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

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
    /// `(low, high)` per dimension: the windowed primitives' and convolutions' `padding`,
    /// printed as the tuple of pairs it is (`((0, 0), (1, 1))`).
    Pairs(Vec<(i64, i64)>),
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
    /// `gather`'s `dimension_numbers`.
    GatherDimensionNumbers(GatherDimensionNumbers),
    /// `scatter`'s (and `scatter-add`'s …) `dimension_numbers`.
    ScatterDimensionNumbers(ScatterDimensionNumbers),
    /// `conv_general_dilated`'s `dimension_numbers` (JAX's `ConvDimensionNumbers`): each spec
    /// the batch (or output feature) dimension, the feature (or input feature) dimension, then
    /// the spatial dimensions; printed as JAX prints it:
    /// `ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))`.
    ConvDimensionNumbers {
        /// The left operand's batch, feature and spatial dimensions.
        lhs_spec: Vec<i64>,
        /// The kernel's output feature, input feature and spatial dimensions.
        rhs_spec: Vec<i64>,
        /// The result's batch, feature and spatial dimensions.
        out_spec: Vec<i64>,
    },
    /// A Python number (`fill_value=nan`, `fill_value=-2147483648`), printed as Python prints
    /// it.
    Number(PyNumber),
    /// A call primitive's closed jaxpr (`jit[jaxpr={ lambda ... }]`).
    Jaxpr(std::sync::Arc<super::ClosedJaxpr>),
    /// A tuple of closed jaxprs (`cond[branches=(\n{ lambda … }\n{ lambda … }\n)]`).
    Jaxprs(Vec<std::sync::Arc<super::ClosedJaxpr>>),
    /// A name (`jit[name=f]`).
    Name(String),
    /// A `custom_jvp` function's rule (`custom_jvp_call[jvp=...]`).
    CustomJvp(super::RuleRef),
    /// A `custom_vjp` function's passes (`custom_vjp_call[fwd=...]`, `custom_lin[bwd=...]`).
    CustomVjp(super::VjpRef),
    /// Abstract values (`custom_lin[out_avals=(f32[3],)]`).
    Avals(Vec<crate::array::ShapedArray>),
    /// A value read from a jaxpr's text where JAX printed it in its own way
    /// (`sizes=(np.int64(2), np.int64(2))`, `jvp=<lambda>`): rules see `value`, printers write
    /// `text`, so that a jaxpr read prints as it was written.
    Verbatim {
        /// The value.
        value: Box<Param>,
        /// Its text as JAX printed it.
        text: std::sync::Arc<str>,
    },
}

/// `gather`'s dimension numbers (JAX's `GatherDimensionNumbers`), printed as JAX prints them:
/// `GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
/// operand_batching_dims=(), start_indices_batching_dims=())`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GatherDimensionNumbers {
    /// The result's dimensions that index into a slice.
    pub offset_dims: Vec<i64>,
    /// The operand's dimensions a slice of size 1 drops.
    pub collapsed_slice_dims: Vec<i64>,
    /// The operand dimension each component of an index vector starts.
    pub start_index_map: Vec<i64>,
    /// The operand's batching dimensions.
    pub operand_batching_dims: Vec<i64>,
    /// The indices' batching dimensions, one for each of the operand's.
    pub start_indices_batching_dims: Vec<i64>,
}

/// `scatter`'s dimension numbers (JAX's `ScatterDimensionNumbers`), printed as JAX prints
/// them: `ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
/// scatter_dims_to_operand_dims=(0,), operand_batching_dims=(),
/// scatter_indices_batching_dims=())`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScatterDimensionNumbers {
    /// The updates' dimensions that index into a window.
    pub update_window_dims: Vec<i64>,
    /// The operand's dimensions a window of size 1 leaves out of the updates.
    pub inserted_window_dims: Vec<i64>,
    /// The operand dimension each component of an index vector starts.
    pub scatter_dims_to_operand_dims: Vec<i64>,
    /// The operand's batching dimensions.
    pub operand_batching_dims: Vec<i64>,
    /// The indices' batching dimensions, one for each of the operand's.
    pub scatter_indices_batching_dims: Vec<i64>,
}

/// `NAME(a=(…), b=(…), …)`: dimension numbers as Python prints its named tuples.
fn named_tuple(f: &mut fmt::Formatter<'_>, name: &str, fields: &[(&str, &[i64])]) -> fmt::Result {
    let items: Vec<String> = fields
        .iter()
        .map(|(n, v)| format!("{n}={}", Param::Ints(v.to_vec())))
        .collect();
    write!(f, "{name}({})", items.join(", "))
}

impl fmt::Display for GatherDimensionNumbers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        named_tuple(
            f,
            "GatherDimensionNumbers",
            &[
                ("offset_dims", &self.offset_dims),
                ("collapsed_slice_dims", &self.collapsed_slice_dims),
                ("start_index_map", &self.start_index_map),
                ("operand_batching_dims", &self.operand_batching_dims),
                (
                    "start_indices_batching_dims",
                    &self.start_indices_batching_dims,
                ),
            ],
        )
    }
}

impl fmt::Display for ScatterDimensionNumbers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        named_tuple(
            f,
            "ScatterDimensionNumbers",
            &[
                ("update_window_dims", &self.update_window_dims),
                ("inserted_window_dims", &self.inserted_window_dims),
                (
                    "scatter_dims_to_operand_dims",
                    &self.scatter_dims_to_operand_dims,
                ),
                ("operand_batching_dims", &self.operand_batching_dims),
                (
                    "scatter_indices_batching_dims",
                    &self.scatter_indices_batching_dims,
                ),
            ],
        )
    }
}

impl GatherDimensionNumbers {
    /// The scatter that writes where this gather reads (JAX's transposes pair them).
    pub fn scatter(&self) -> ScatterDimensionNumbers {
        ScatterDimensionNumbers {
            update_window_dims: self.offset_dims.clone(),
            inserted_window_dims: self.collapsed_slice_dims.clone(),
            scatter_dims_to_operand_dims: self.start_index_map.clone(),
            operand_batching_dims: self.operand_batching_dims.clone(),
            scatter_indices_batching_dims: self.start_indices_batching_dims.clone(),
        }
    }
}

impl ScatterDimensionNumbers {
    /// The gather that reads where this scatter writes.
    pub fn gather(&self) -> GatherDimensionNumbers {
        GatherDimensionNumbers {
            offset_dims: self.update_window_dims.clone(),
            collapsed_slice_dims: self.inserted_window_dims.clone(),
            start_index_map: self.scatter_dims_to_operand_dims.clone(),
            operand_batching_dims: self.operand_batching_dims.clone(),
            start_indices_batching_dims: self.scatter_indices_batching_dims.clone(),
        }
    }
}

/// A Python number as a parameter holds it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum PyNumber {
    /// An `int` within `i64`.
    Int(i64),
    /// An `int` beyond `i64::MAX`, within `u64`.
    UInt(u64),
    /// A `float`.
    Float(f64),
    /// A `bool`.
    Bool(bool),
}

impl PyNumber {
    /// The number as a 0-d array of Python's type (int64, uint64, float64, bool).
    pub fn array(self) -> crate::array::Array {
        use crate::array::Array;
        match self {
            PyNumber::Int(i) => Array::scalar(i),
            PyNumber::UInt(u) => Array::scalar(u),
            PyNumber::Float(x) => Array::scalar(x),
            PyNumber::Bool(b) => Array::scalar(b),
        }
    }
}

impl Param {
    /// The value (a [`Param::Verbatim`]'s value, else itself).
    pub fn value(&self) -> &Param {
        match self {
            Param::Verbatim { value, .. } => value.value(),
            other => other,
        }
    }
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
            Param::Pairs(v) => {
                let items: Vec<String> = v.iter().map(|(l, h)| format!("({l}, {h})")).collect();
                match items.as_slice() {
                    [one] => write!(f, "({one},)"),
                    _ => write!(f, "({})", items.join(", ")),
                }
            }
            Param::Jaxpr(j) => write!(f, "{j}"),
            Param::Jaxprs(js) => {
                let items: Vec<String> = js.iter().map(ToString::to_string).collect();
                write!(f, "({})", items.join(" "))
            }
            Param::Verbatim { text, .. } => f.write_str(text),
            Param::Name(n) => f.write_str(n),
            Param::CustomJvp(r) => f.write_str(r.0.names().1.unwrap_or("<custom jvp rule>")),
            Param::CustomVjp(_) => f.write_str("<custom vjp rule>"),
            Param::Avals(a) => {
                let items: Vec<String> = a.iter().map(ToString::to_string).collect();
                match items.as_slice() {
                    [one] => write!(f, "({one},)"),
                    _ => write!(f, "({})", items.join(", ")),
                }
            }
            Param::GatherDimensionNumbers(d) => write!(f, "{d}"),
            Param::ScatterDimensionNumbers(d) => write!(f, "{d}"),
            Param::ConvDimensionNumbers {
                lhs_spec,
                rhs_spec,
                out_spec,
            } => named_tuple(
                f,
                "ConvDimensionNumbers",
                &[
                    ("lhs_spec", lhs_spec),
                    ("rhs_spec", rhs_spec),
                    ("out_spec", out_spec),
                ],
            ),
            Param::Number(PyNumber::Int(i)) => write!(f, "{i}"),
            Param::Number(PyNumber::UInt(u)) => write!(f, "{u}"),
            Param::Number(PyNumber::Float(x)) => f.write_str(&super::jaxpr::print::literal_text(
                &crate::array::Array::scalar(*x),
            )),
            Param::Number(PyNumber::Bool(b)) => f.write_str(if *b { "True" } else { "False" }),
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
/// use dtype_lattice_array::{core::{Param, Params}};
/// let p = Params::new().with("new_dtype", Param::DType(DType::Float32)).with("weak_type", Param::Bool(false));
/// assert_eq!(p.to_string(), "[new_dtype=float32 weak_type=False]");
/// assert_eq!(p.get("new_dtype"), Some(&Param::DType(DType::Float32)));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params(Vec<(std::borrow::Cow<'static, str>, Param)>);

impl Params {
    /// No parameters.
    pub fn new() -> Params {
        Params(Vec::new())
    }

    /// With one more parameter.
    #[must_use]
    pub fn with(mut self, name: &'static str, value: Param) -> Params {
        self.0.push((name.into(), value));
        self
    }

    /// With one more parameter whose name is text (a jaxpr read from text names its own).
    #[must_use]
    pub fn with_named(mut self, name: String, value: Param) -> Params {
        self.0.push((name.into(), value));
        self
    }

    /// A parameter by name.
    pub fn get(&self, name: &str) -> Option<&Param> {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.value())
    }

    /// The parameters, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Param)> {
        self.0.iter().map(|(n, v)| (n.as_ref(), v))
    }

    /// With `name` set to `value`: replaced in place if present, else appended (for rules
    /// that adjust a primitive's parameters).
    #[must_use]
    pub(crate) fn set(mut self, name: &'static str, value: Param) -> Params {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name.into(), value)),
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

    /// A required non-negative integer (a count, a length).
    pub(crate) fn count(&self, prim: &str, name: &str) -> Result<usize, Error> {
        match self.require(prim, name)? {
            Param::Int(n) => usize::try_from(*n).map_err(|_| bad_param(prim, name, "negative")),
            _ => Err(bad_param(prim, name, "not an integer")),
        }
    }

    /// A required closed jaxpr (a body of a control-flow primitive).
    pub(crate) fn jaxpr(
        &self,
        prim: &str,
        name: &str,
    ) -> Result<&std::sync::Arc<super::ClosedJaxpr>, Error> {
        match self.require(prim, name)? {
            Param::Jaxpr(j) => Ok(j),
            _ => Err(bad_param(prim, name, "not a jaxpr")),
        }
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

pub(crate) fn bad_param(prim: &str, name: &str, why: &str) -> Error {
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

/// A JVP rule (JAX's `ad.primitive_jvps`): `(primals, tangents, params) -> (primal outputs,
/// output tangents)`, a tangent `None` a symbolic zero. It runs in the parent of the JVP
/// trace; every operation in it is a bound primitive, so rules compose with staging.
pub type JvpRule = fn(
    &'static Primitive,
    &[Array],
    &[Option<Array>],
    &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error>;

/// An operand of a linear equation, as a transpose rule sees it: linear (of this aval) or
/// known.
#[derive(Clone, Debug)]
pub enum Lin {
    /// A linear operand (a tangent or cotangent).
    Linear(ShapedArray),
    /// A known operand (a residual or a literal).
    Known(Array),
}

impl Lin {
    /// Whether it is linear.
    pub fn is_linear(&self) -> bool {
        matches!(self, Lin::Linear(_))
    }

    /// Its abstract value.
    pub fn aval(&self) -> &ShapedArray {
        match self {
            Lin::Linear(a) => a,
            Lin::Known(x) => x.aval(),
        }
    }

    /// Its value, if known.
    ///
    /// # Errors
    ///
    /// `NotImplementedError`: a rule transposed in an operand the primitive is not linear in.
    pub fn known(&self) -> Result<&Array, Error> {
        match self {
            Lin::Known(x) => Ok(x),
            Lin::Linear(_) => Err(nonlinear()),
        }
    }
}

/// The refusal of a transpose rule asked to transpose in an operand it is not linear in.
pub(crate) fn nonlinear() -> Error {
    Error::refused(
        Exception::NotImplementedError,
        "a primitive was transposed in an operand it is not linear in",
    )
}

/// A transpose rule (JAX's `ad.primitive_transposes`): `(output cotangents, operands,
/// params) -> operand cotangents` (`None`: a zero, or a known operand's).
pub type TransposeRule =
    fn(&'static Primitive, &[Option<Array>], &[Lin], &Params) -> Result<Vec<Option<Array>>, Error>;

/// What a partial-evaluation rule may do (JAX's `JaxprTrace` seen from
/// `pe.custom_partial_eval_rules`): compute on known values in the enclosing trace, and stage
/// equations into the unknown (linear) jaxpr.
pub trait PartialEval {
    /// Binds `prim` on known inputs in the trace enclosing the partial evaluator.
    ///
    /// # Errors
    ///
    /// Whatever binding it does.
    fn known(
        &self,
        prim: &'static Primitive,
        inputs: &[&Array],
        params: &Params,
    ) -> Result<Outputs, Error>;

    /// Stages one equation of `prim` into the unknown jaxpr (known inputs become its
    /// constants), without calling `prim`'s partial-evaluation rule again.
    ///
    /// # Errors
    ///
    /// The shape rule's refusal.
    fn stage(
        &self,
        prim: &'static Primitive,
        inputs: &[&Array],
        params: &Params,
    ) -> Result<Outputs, Error>;
}

/// A partial-evaluation rule (JAX's `pe.custom_partial_eval_rules`): `(primitive, operands,
/// which are unknown, params, evaluator) -> outputs`, known outputs computed through
/// [`PartialEval::known`] and unknown ones staged through [`PartialEval::stage`]. Called only
/// when some operand is unknown; a primitive without one is staged whole.
pub type PartialEvalRule =
    fn(&'static Primitive, &[&Array], &[bool], &Params, &dyn PartialEval) -> Result<Outputs, Error>;

/// An operand of a [`Prepared`] kernel: its bytes (little-endian words, row-major), and
/// whether the caller knows they hold no subnormal float (a loop's constant, checked once).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operand<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) clean: bool,
}

impl<'a> Operand<'a> {
    /// The bytes of `x`, not known to hold no subnormal.
    pub(crate) fn of(x: &'a crate::array::Array) -> Operand<'a> {
        Operand {
            bytes: x.as_bytes(),
            clean: false,
        }
    }
}

/// A kernel of a [`Prepared`] computation: it writes the result's bytes from the operands'
/// and answers true, computing exactly what the implementation computes, or answers false
/// where it does not cover the case (the caller then runs the implementation).
pub(crate) type PreparedKernel = Box<dyn Fn(&[Operand<'_>], &mut [u8]) -> bool + Send + Sync>;

/// A primitive's computation prepared once for fixed operand and result types (a loop body's
/// equation in jit's plan).
pub(crate) enum Prepared {
    /// A kernel on the operands' bytes.
    Kernel(PreparedKernel),
    /// The result's bytes are the first operand's from byte `start` on, unchanged (a
    /// `reshape`, a `squeeze`, a contiguous `slice`, a conversion to the same dtype): a caller
    /// may read the operand's bytes in the result's place.
    Part {
        /// Where the result's bytes start in the operand's.
        start: usize,
    },
}

impl Prepared {
    /// Writes the result into `out` ([`PreparedKernel`]'s contract; [`Prepared::Part`]
    /// copies the first operand's part). The tests' way to call either.
    #[cfg(test)]
    pub(crate) fn run(&self, ops: &[Operand<'_>], out: &mut [u8]) -> bool {
        match self {
            Prepared::Kernel(k) => k(ops, out),
            Prepared::Part { start } => {
                match ops
                    .first()
                    .and_then(|x| x.bytes.get(*start..*start + out.len()))
                {
                    Some(part) => {
                        out.copy_from_slice(part);
                        true
                    }
                    None => false,
                }
            }
        }
    }
}

/// An in-place implementation: the [`ImplRule`] given its first operand owned (the other
/// operands borrowed), which may write its one result into that operand's buffer when no
/// other array shares it (jit hands over an operand at its last use, as XLA's buffer
/// assignment lets a scatter update its operand in place).
pub(crate) type InPlaceRule =
    fn(&'static Primitive, Array, &[&Array], &Params, &[ShapedArray]) -> Result<Outputs, Error>;

/// A prepare rule: `(primitive, params, operand avals, result aval) -> kernel`, `None` where
/// the primitive has no kernel for those types (single-result primitives only).
pub(crate) type PrepareRule =
    fn(&'static Primitive, &Params, &[ShapedArray], &ShapedArray) -> Option<Prepared>;

/// Batch dimensions of operands or outputs (`None`: not batched).
pub type BatchDims = Vec<Option<usize>>;

/// A batching rule (JAX's `batching.primitive_batchers`): `(primitive, axis size, operands,
/// their batch dimensions, params) -> (outputs, their batch dimensions)`. At least one operand
/// is batched when it is called; it runs in the parent of the batching trace.
pub type BatchRule = fn(
    &'static Primitive,
    usize,
    &[Array],
    &[Option<usize>],
    &Params,
) -> Result<(Outputs, BatchDims), Error>;

/// JAX's refusal of a `float0` operand: an error from the primitive and the operands' avals.
pub type Float0Refusal = fn(&'static Primitive, &[&ShapedArray]) -> Error;

/// What a primitive does with `float0` operands.
#[derive(Clone, Copy)]
pub enum Float0 {
    /// Takes them, as JAX's primitives that move, select or convert elements and compute
    /// nothing do (their `float0` outputs need no kernel).
    Takes,
    /// Refuses them with this error (lax's wording).
    Refuses(Float0Refusal),
}

/// Whether a primitive applies a jaxpr held in one of its parameters (JAX's call
/// primitives), and how the traces treat it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// An ordinary primitive.
    No,
    /// `jit`: its jaxpr (the named parameter) is applied in its place by the JVP and
    /// batching traces and under partial evaluation (inlined); only staging keeps the call.
    Inlined(&'static str),
    /// `custom_jvp_call`, `custom_vjp_call`: its implementation applies the jaxpr (the named
    /// parameter); the traces keep the call, whose parameters hold the custom rules.
    Kept(&'static str),
}

/// A parameter jaxprs leave out: always (`None`: it is the first output's shape, which the
/// binder's type gives: JAX's "implied by the let binder type"), or when it has this value.
pub type Hidden = (&'static str, Option<&'static Param>);

/// A primitive: its name, number of operands, and every rule, in one definition.
///
/// A definition is built with `Primitive::new` and the builder methods, in the primitive's
/// family's file next to the rules it names:
///
/// ```ignore
/// pub static REDUCE_SUM: Primitive = Primitive::new("reduce_sum", Some(1), shape_rule, impl_rule)
///     .jvp(reduce_sum_jvp)
///     .transpose(reduce_sum_transpose)
///     .batch(reducer);
/// ```
pub struct Primitive {
    /// `jax.lax`'s name (`add`, `convert_element_type`, `broadcast_in_dim`).
    pub name: &'static str,
    /// How many operands it takes (`None`: any number, as `concatenate`).
    pub arity: Option<usize>,
    pub(crate) shape_rule: ShapeRule,
    pub(crate) impl_rule: ImplRule,
    /// The JVP rule, if the primitive is differentiable.
    pub(crate) jvp: Option<JvpRule>,
    /// The transpose rule, if the primitive is linear in some operand.
    pub(crate) transpose: Option<TransposeRule>,
    /// The batching rule, for `vmap`: every primitive has one but `iota` (no operands), the
    /// `jit` call primitive (inlined by the batching trace) and `custom_lin`.
    pub(crate) batch: Option<BatchRule>,
    /// The partial-evaluation rule, for primitives whose equations split into a known and an
    /// unknown part (the loops).
    pub(crate) partial_eval: Option<PartialEvalRule>,
    /// The prepare rule, for primitives with a kernel on buffers (jit's loop bodies).
    pub(crate) prepare: Option<PrepareRule>,
    /// The in-place implementation, for primitives whose result can take its first
    /// operand's buffer (the scatters).
    pub(crate) in_place: Option<InPlaceRule>,
    /// What it does with `float0` operands.
    pub(crate) float0: Float0,
    /// The parameters jaxprs leave out.
    pub(crate) hidden: &'static [Hidden],
    /// Whether it is a call primitive.
    pub(crate) call: Call,
}

impl Primitive {
    /// A primitive with a shape rule and an implementation, and no other rule: not
    /// differentiable, not linear, not batchable, refusing `float0` operands with lax's
    /// elementwise wording, printing every parameter.
    pub(crate) const fn new(
        name: &'static str,
        arity: Option<usize>,
        shape_rule: ShapeRule,
        impl_rule: ImplRule,
    ) -> Primitive {
        Primitive {
            name,
            arity,
            shape_rule,
            impl_rule,
            jvp: None,
            transpose: None,
            batch: None,
            partial_eval: None,
            prepare: None,
            in_place: None,
            float0: Float0::Refuses(float0_refusal),
            hidden: &[],
            call: Call::No,
        }
    }

    /// With a JVP rule.
    pub(crate) const fn jvp(mut self, rule: JvpRule) -> Primitive {
        self.jvp = Some(rule);
        self
    }

    /// With a transpose rule.
    pub(crate) const fn transpose(mut self, rule: TransposeRule) -> Primitive {
        self.transpose = Some(rule);
        self
    }

    /// With a batching rule.
    pub(crate) const fn batch(mut self, rule: BatchRule) -> Primitive {
        self.batch = Some(rule);
        self
    }

    /// With a partial-evaluation rule.
    pub(crate) const fn partial_eval(mut self, rule: PartialEvalRule) -> Primitive {
        self.partial_eval = Some(rule);
        self
    }

    /// With a prepare rule.
    pub(crate) const fn prepare(mut self, rule: PrepareRule) -> Primitive {
        self.prepare = Some(rule);
        self
    }

    /// With an in-place implementation.
    pub(crate) const fn in_place(mut self, rule: InPlaceRule) -> Primitive {
        self.in_place = Some(rule);
        self
    }

    /// Taking `float0` operands.
    pub(crate) const fn takes_float0(mut self) -> Primitive {
        self.float0 = Float0::Takes;
        self
    }

    /// Refusing `float0` operands with this error.
    pub(crate) const fn refuses_float0(mut self, refusal: Float0Refusal) -> Primitive {
        self.float0 = Float0::Refuses(refusal);
        self
    }

    /// With parameters jaxprs leave out.
    pub(crate) const fn hides(mut self, hidden: &'static [Hidden]) -> Primitive {
        self.hidden = hidden;
        self
    }

    /// A call primitive.
    pub(crate) const fn call(mut self, call: Call) -> Primitive {
        self.call = call;
        self
    }

    /// The parameters jaxprs leave out, and their values when they do (`None`: the first
    /// output's shape), for the reader to restore.
    pub(crate) fn hidden_params(&self) -> &'static [Hidden] {
        self.hidden
    }

    /// Whether jaxprs print this parameter.
    pub(crate) fn shows_param(&self, name: &str, value: &Param) -> bool {
        !self
            .hidden
            .iter()
            .any(|&(param, when)| param == name && when.is_none_or(|w| w == value.value()))
    }

    /// The jaxpr a call primitive applies to its operands (`None`: not a call, or the
    /// parameter is missing).
    pub(crate) fn call_jaxpr(&self, params: &Params) -> Option<std::sync::Arc<super::ClosedJaxpr>> {
        let name = match self.call {
            Call::No => return None,
            Call::Inlined(name) | Call::Kept(name) => name,
        };
        match params.get(name) {
            Some(Param::Jaxpr(j)) => Some(j.clone()),
            _ => None,
        }
    }
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
        if let Float0::Refuses(refusal) = self.float0
            && inputs.iter().any(|a| a.dtype().is_float0())
        {
            return Err(refusal(self, inputs));
        }
        (self.shape_rule)(self, inputs, params)
    }
}

/// Why `float0` operands are refused (lax's words).
pub(crate) const FLOAT0_WHY: &str = "float0s do not support any operations by design, because \
    they are not compatible with non-trivial vector spaces. No implicit dtype conversion is \
    done. You can use np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular \
    zeros array. \nIf you didn't expect to get a float0 you might have accidentally taken a \
    gradient with respect to an integer argument.";

/// lax's refusal of a `float0` operand by an elementwise primitive (the default): unary
/// operations name the array, the others its position (`Called add with a float0 at position
/// 0. …`).
pub(crate) fn float0_refusal(prim: &'static Primitive, inputs: &[&ShapedArray]) -> Error {
    float0_refusal_named(prim.name, prim.arity, inputs)
}

/// [`float0_refusal`] under another name (`add_any` is refused as `add`).
pub(crate) fn float0_refusal_named(
    name: &str,
    arity: Option<usize>,
    inputs: &[&ShapedArray],
) -> Error {
    if arity == Some(1) {
        return Error::refused(
            Exception::TypeError,
            format!("Called {name} with a float0 array. {FLOAT0_WHY}"),
        );
    }
    let i = inputs
        .iter()
        .position(|a| a.dtype().is_float0())
        .unwrap_or(0);
    Error::refused(
        Exception::TypeError,
        format!("Called {name} with a float0 at position {i}. {FLOAT0_WHY}"),
    )
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
                    zero.repeated(a.shape())
                }
            })
            .collect();
    }
    (prim.impl_rule)(prim, inputs, params, avals)
}

/// [`implement`] with the first operand owned: by the primitive's in-place implementation
/// if it has one (and no operand or result is `float0`), which may reuse `first`'s buffer.
pub(crate) fn implement_owned(
    prim: &'static Primitive,
    first: Array,
    rest: &[&Array],
    params: &Params,
    avals: &[ShapedArray],
) -> Result<Outputs, Error> {
    let float0 = first.dtype().is_float0()
        || rest.iter().any(|x| x.dtype().is_float0())
        || avals.iter().any(|a| a.dtype().is_float0());
    match prim.in_place {
        Some(rule) if !float0 => rule(prim, first, rest, params, avals),
        _ => {
            let mut ins: smallvec::SmallVec<[&Array; 4]> = smallvec::smallvec![&first];
            ins.extend_from_slice(rest);
            implement(prim, &ins, params, avals)
        }
    }
}

/// Applies a primitive: to the current trace if there is one (staging, differentiation,
/// batching: the interpreters of `crate::interpreters`), else its shape rule, then its
/// implementation (evaluation).
///
/// # Errors
///
/// The shape rule's refusal (JAX's exception and message), or an implementation's.
pub fn bind(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
) -> Result<Outputs, Error> {
    if let Some(trace) = super::current() {
        return trace.process_primitive(prim, inputs, params);
    }
    super::check_concrete(inputs)?;
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
