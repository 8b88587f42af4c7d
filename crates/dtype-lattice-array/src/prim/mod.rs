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
mod convert;
mod dot;
mod elem_arith;
pub(crate) mod elementwise;
pub(crate) mod fast;
mod iota;
pub(crate) mod lanes;
pub(crate) mod lax;
pub(crate) mod random;
mod reduce;
pub(crate) mod select;
mod slicing;
pub(crate) mod structural;
pub mod transpose;

pub(crate) use convert::CONVERT_ELEMENT_TYPE;
pub(crate) use structural::BROADCAST_IN_DIM;
pub use structural::expand_dims;

use dtype_lattice::Error;

pub(crate) use crate::config::on_xla;
pub use crate::core::{Avals, Outputs, Param, Params, Primitive, bind};
pub(crate) use crate::core::{bad_param, bind1, implement};

use crate::array::Array;

/// Every primitive, one row each.
pub static PRIMITIVES: &[&Primitive] = &[
    &crate::jit::JIT,
    &crate::interpreters::custom::CUSTOM_JVP_CALL,
    &crate::interpreters::custom::CUSTOM_VJP_CALL,
    &crate::interpreters::custom::CUSTOM_LIN,
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
