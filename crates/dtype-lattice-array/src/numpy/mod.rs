//! `jax.numpy`'s functions on [`Array`]s, built on the primitives: the operands are promoted
//! as the configured [`Rules`] say (JAX's standard promotion by default; strict mode and x64
//! honoured), Python scalars (Rust numbers) are weakly typed, shapes broadcast as NumPy's do,
//! and the `lax` primitive computes. Errors carry JAX's exception class and message.
//!
//! ```
//! use dtype_lattice::DType;
//! use dtype_lattice_array::{numpy as jnp, Array};
//! use half::bf16;
//!
//! let x = Array::from_vec(vec![bf16::from_f32(1.5), bf16::from_f32(2.0)]);
//! let y = jnp::multiply(&x, 2.0)?;                 // a Python float is weak: bfloat16 stays
//! assert_eq!(y.dtype(), DType::BFloat16);
//! let z = jnp::add(&Array::from_vec(vec![1i8, 2]), &Array::from_vec(vec![1u8]))?;
//! assert_eq!((z.dtype(), z.to_vec::<i16>()?), (DType::Int16, vec![2, 3])); // int8 + uint8, broadcast
//! let s = (&x + 1.0)?;                             // operators answer Results
//! assert_eq!(s.astype(DType::Float32)?.to_vec::<f32>()?, [2.5, 3.0]);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

/// `shared_jit!(name, Type, body)`: the function `body` (of the `fn` pointer type `Type`)
/// jitted under `name` once for the crate, as JAX's module-level `@jit` functions are: one
/// cache, so that equal calls print as one shared jaxpr.
macro_rules! shared_jit {
    ($name:literal, $ty:ty, $body:expr) => {{
        static JIT: std::sync::LazyLock<crate::jit::Jit<$ty>> = std::sync::LazyLock::new(|| {
            let body: $ty = $body;
            crate::jit::jit(body).named($name)
        });
        &*JIT
    }};
}

mod compositions;
mod creation;
mod cumulative;
mod dispatch;
mod functions;
pub(crate) mod indexing;
mod keywords;
mod ml;
mod npmath;
mod ops;
mod shape;
mod simplify;
mod sorting;
mod ufuncs;

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Operand, Rules, Value};
use num_complex::Complex;

use crate::array::{Array, py_shape};
use crate::lax::{self, Param, Params};

pub(crate) use crate::array::{encode_value, python_scalar_array, scalar_array};
pub(crate) use crate::config::{default_int, is_numpy};
pub use crate::config::{rules, semantics, set_rules, with_rules};
pub use creation::*;
pub use cumulative::*;
pub use dispatch::JitDispatch;
pub use functions::*;
pub use indexing::{At, Index, IndexMode, IndexUpdate, index, take, take_along_axis};
pub use keywords::Keywords;
pub use shape::*;
pub use sorting::{
    NonzeroFill, SearchMethod, Side, Unique, UniqueOptions, argpartition, argwhere, flatnonzero,
    lexsort, nonzero, partition, searchsorted, unique,
};
pub use sorting::{argsort, sort};
pub use ufuncs::*;

/// An operand of a `jax.numpy` function: an array, or a Python scalar (a Rust number or bool:
/// weakly typed, as JAX treats Python scalars).
#[derive(Clone, Debug)]
pub enum ArrayLike<'a> {
    /// An array.
    Array(&'a Array),
    /// An owned array (the result of an earlier operation).
    Owned(Array),
    /// A Python scalar.
    Scalar(Value),
    /// An earlier step's error, carried to the next operation (see the operators).
    Failed(Box<Error>),
}

impl<'a> From<&'a Array> for ArrayLike<'a> {
    fn from(a: &'a Array) -> Self {
        ArrayLike::Array(a)
    }
}

impl From<Array> for ArrayLike<'_> {
    fn from(a: Array) -> Self {
        ArrayLike::Owned(a)
    }
}

macro_rules! scalar_like {
    ($($t:ty => |$v:ident| $e:expr;)*) => {$(
        impl From<$t> for ArrayLike<'_> {
            fn from($v: $t) -> Self {
                ArrayLike::Scalar($e)
            }
        }
    )*};
}

scalar_like! {
    f64 => |v| Value::Float(v);
    f32 => |v| Value::Float(f64::from(v));
    i64 => |v| Value::Int(i128::from(v));
    i32 => |v| Value::Int(i128::from(v));
    bool => |v| Value::Bool(v);
    Complex<f64> => |v| Value::Complex(v.re, v.im);
}

impl ArrayLike<'_> {
    /// What it contributes to promotion.
    fn operand(&self) -> Operand {
        match self {
            ArrayLike::Array(a) => Operand::Array {
                dtype: a.dtype(),
                weak: a.weak_type(),
            },
            ArrayLike::Owned(a) => Operand::Array {
                dtype: a.dtype(),
                weak: a.weak_type(),
            },
            ArrayLike::Scalar(v) => Operand::Literal(*v),
            // Never promoted: `promote_and_broadcast` returns the error first.
            ArrayLike::Failed(_) => Operand::PyType(dtype_lattice::PyType::Int),
        }
    }

    /// As an array of `dtype` (weak or not), shape unchanged.
    fn as_array(&self) -> Option<&Array> {
        match self {
            ArrayLike::Array(a) => Some(a),
            ArrayLike::Owned(a) => Some(a),
            _ => None,
        }
    }

    fn shape(&self) -> &[usize] {
        match self {
            ArrayLike::Array(a) => a.shape(),
            ArrayLike::Owned(a) => a.shape(),
            ArrayLike::Scalar(_) | ArrayLike::Failed(_) => &[],
        }
    }

    pub(crate) fn to_array(&self, dtype: DType, weak: bool) -> Result<Array, Error> {
        let a = match self {
            ArrayLike::Array(a) => (*a).clone(),
            ArrayLike::Owned(a) => a.clone(),
            ArrayLike::Scalar(v) => return python_scalar_array(*v, dtype, weak),
            ArrayLike::Failed(e) => return Err((**e).clone()),
        };
        if a.dtype() == dtype && a.weak_type() == weak {
            return Ok(a);
        }
        let params = Params::new()
            .with("new_dtype", Param::DType(dtype))
            .with("weak_type", Param::Bool(weak))
            .with("sharding", Param::None);
        lax::bind1(&lax::CONVERT_ELEMENT_TYPE, &[&a], &params)
    }
}

/// NumPy's broadcasting of shapes (aligned at the right; 1 stretches).
///
/// # Errors
///
/// JAX's `ValueError` for incompatible shapes.
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Result<Vec<usize>, Error> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[rank - s.len() + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                let names: Vec<String> = shapes.iter().map(|s| py_shape(s)).collect();
                return Err(Error::refused(
                    Exception::ValueError,
                    format!(
                        "Incompatible shapes for broadcasting: shapes=[{}]",
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// `x` broadcast to `shape` (`jnp.broadcast_to` with NumPy's rank promotion).
pub(crate) fn broadcast_to(x: Array, shape: &[usize]) -> Result<Array, Error> {
    lax::ops::broadcast_to(&x, shape)
}

/// Which dtype family a function computes in after promotion (`jnp`'s `promote_args`,
/// `promote_args_inexact`, `promote_args_numeric`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// The promoted dtype itself.
    Any,
    /// Booleans and integers become the default float (NumPy: the smallest float its loops
    /// take).
    Inexact,
    /// Booleans become the default integer.
    Numeric,
}

/// `dtype` moved into `family` under `rules` (JAX's `to_inexact_dtype`/`to_numeric_dtype`;
/// NumPy's ufunc loop choice for the inexact family).
pub(crate) fn family_dtype(rules: &Rules, family: Family, dtype: DType) -> DType {
    let numpy = is_numpy(rules);
    let x64 = rules.options().x64 || numpy;
    match (family, dtype.kind()) {
        (Family::Inexact, Kind::Bool | Kind::SignedInt | Kind::UnsignedInt) if numpy => {
            match dtype.bits() {
                1 | 8 => DType::Float16,
                16 => DType::Float32,
                _ => DType::Float64,
            }
        }
        // JAX's to_inexact_dtype: 64-bit integers become float64 (with x64), the others
        // float32; int2 and uint2 stay as they are (and the primitive refuses them).
        (Family::Inexact, Kind::Bool | Kind::SignedInt | Kind::UnsignedInt) => match dtype.bits() {
            2 => dtype,
            64 if x64 => DType::Float64,
            _ => DType::Float32,
        },
        // to_numeric_dtype: bool becomes int32, with x64 too.
        (Family::Numeric, Kind::Bool) if !numpy => DType::Int32,
        _ => dtype,
    }
}

/// The operands promoted together into `family` (with `op`'s checks) and broadcast.
pub(crate) fn promote_family(
    op: Option<dtype_lattice::Op>,
    family: Family,
    args: &[ArrayLike<'_>],
) -> Result<Vec<Array>, Error> {
    // jnp's promote_shapes comes first: operands of different ranks (0-d ones aside) must
    // broadcast (NumPy's ValueError), and get leading dimensions of size 1; the primitive
    // then broadcasts dimensions of size 1 itself (or refuses with lax's TypeError).
    let shapes: Vec<&[usize]> = args.iter().map(ArrayLike::shape).collect();
    if is_numpy(&rules()) && broadcast_shapes(&shapes).is_err() {
        // A ufunc broadcasts every dimension (NumPy's ValueError), not only ranks, after it
        // found its loop (a TypeError first) and converted Python ints (an OverflowError).
        if let Some(op) = op {
            let operands: Vec<Operand> = args.iter().map(ArrayLike::operand).collect();
            rules().op_result(op, &operands)?;
        }
        let names: Vec<String> = shapes.iter().map(|s| py_shape(s)).collect();
        return Err(Error::refused(
            Exception::ValueError,
            format!(
                "operands could not be broadcast together with shapes {}",
                names.join(" ")
            ),
        ));
    }
    let ranks: Vec<usize> = shapes
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| s.len())
        .collect();
    let rank_differ = ranks.windows(2).any(|w| w[0] != w[1]);
    let rank = if rank_differ {
        broadcast_shapes(&shapes)?.len()
    } else {
        0
    };
    let arrays = promote_only(op, family, args)?;
    if !rank_differ {
        return Ok(arrays);
    }
    arrays
        .into_iter()
        .map(|a| {
            if a.ndim() == rank {
                return Ok(a);
            }
            let mut shape = vec![1usize; rank - a.ndim()];
            shape.extend_from_slice(a.shape());
            broadcast_to(a, &shape)
        })
        .collect()
}

/// One operand promoted into `family` alone, without the checks of jitted functions (a
/// Python int out of the default integer's range wraps, as `lax.convert_element_type`
/// outside `jit` converts it).
pub(crate) fn promote_unchecked(family: Family, x: &ArrayLike<'_>) -> Result<Array, Error> {
    if let ArrayLike::Failed(e) = x {
        return Err((**e).clone());
    }
    let rules = rules();
    let p = rules.promoted(&[x.operand()])?;
    let dtype = family_dtype(&rules, family, p.dtype);
    x.to_array(dtype, p.weak_type && !is_numpy(&rules))
}

/// The operands promoted together into `family` (with `op`'s checks), shapes unchanged.
pub(crate) fn promote_only(
    op: Option<dtype_lattice::Op>,
    family: Family,
    args: &[ArrayLike<'_>],
) -> Result<Vec<Array>, Error> {
    if let Some(ArrayLike::Failed(e)) = args.iter().find(|a| matches!(a, ArrayLike::Failed(_))) {
        return Err((**e).clone());
    }
    let rules = rules();
    let operands: Vec<Operand> = args.iter().map(ArrayLike::operand).collect();
    // JAX checks Python ints as `add` does; NumPy converts them without checks where no ufunc
    // runs (`np.where` wraps them).
    // A function that is no operation (`where`, `concatenate`) takes float0 arrays, as jnp's.
    let float0 = operands
        .iter()
        .any(|o| o.dtype().is_some_and(DType::is_float0));
    if op.is_some() || !(is_numpy(&rules) || float0) {
        rules.op_result(op.unwrap_or(dtype_lattice::Op::Add), &operands)?;
    }
    let p = rules.promoted(&operands)?;
    let dtype = family_dtype(&rules, family, p.dtype);
    let weak = p.weak_type && !is_numpy(&rules);
    args.iter().map(|a| a.to_array(dtype, weak)).collect()
}

/// Two arrays of one dtype, weak type and shape, which promote to themselves under JAX's
/// rule sets and go straight to the primitive: not bool (`add` is `or` there), complex
/// (comparisons) or a key; not 64-bit where x64 is off (canonicalised). Never under NumPy's
/// rules, where each function runs NumPy's loop.
pub(crate) fn same_operands<'b>(
    x: &'b ArrayLike<'_>,
    y: &'b ArrayLike<'_>,
) -> Option<(&'b Array, &'b Array)> {
    let (a, b) = (x.as_array()?, y.as_array()?);
    let d = a.dtype();
    let plain = d == b.dtype()
        && a.weak_type() == b.weak_type()
        && crate::array::same_shape(a.shape(), b.shape())
        && !d.is_extended()
        && !d.is_float0()
        && d != DType::Bool
        && d.kind() != Kind::Complex;
    if !plain {
        return None;
    }
    let rules = rules();
    let canonical = d.bits() < 64 || rules.options().x64;
    (canonical && !is_numpy(&rules)).then_some((a, b))
}
