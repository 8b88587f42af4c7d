//! `jax.lax`: the primitives, one file per family, each primitive one [`Primitive`] definition
//! holding all its rules (shape/dtype rule, CPU implementation, JVP, transpose, batching)
//! beside the functions that implement them. They are public statics ([`ADD`],
//! [`REDUCE_SUM`], [`DOT_GENERAL`]…), bound with [`crate::core::bind`]; text that names a
//! primitive (the CLI) finds it in [`crate::registry`].
//!
//! | family | primitives |
//! |---|---|
//! | `elementwise` | the n-ary elementwise primitives: arithmetic, comparisons, bit operations and shifts, rounding, complex parts, transcendentals (XLA's CPU semantics or NumPy's loops, lanes, fast paths) |
//! | `convert` | `convert_element_type` |
//! | `select` | `select_n`, `clamp`, `bitcast_convert_type` |
//! | `structural` | `broadcast_in_dim`, `reshape`, `transpose`, `squeeze`, `rev`, `stop_gradient` |
//! | `slicing` | `slice`, `dynamic_slice`, `dynamic_update_slice`, `concatenate`, `pad` |
//! | `iota` | `iota` |
//! | `reduce` | `reduce_*`, `argmax`, `argmin`, `cumsum`, `cumprod`, `cummax`, `cummin`, `cumlogsumexp` (and `associative_scan`) |
//! | `gather`, `scatter` | `gather`; `scatter`, `scatter-add`, `scatter-mul`, `scatter-min`, `scatter-max` |
//! | `sort` | `sort`, `top_k` |
//! | `windowed` | `reduce_window`, `reduce_window_sum`, `reduce_window_max`, `reduce_window_min`, `select_and_gather_add`, `select_and_scatter_add` |
//! | `dot` | `dot_general` |
//! | `conv` | `conv_general_dilated` |
//! | `random` | `random_seed`, `random_split`, `random_fold_in`, `random_bits`, `random_wrap`, `random_unwrap` |
//! | `rng` | `rng_bit_generator` (XLA's `RngBitGenerator`: Philox on CPU); `key_impls`: the rbg, unsafe_rbg, threefry4x32, philox4x32 and philox2x32 key implementations' functions |
//!
//! `ad` and `batching` hold the rule helpers the families share (JAX's `ad.deflinear`,
//! `batching.broadcast_batcher` and the like); `ops` the one-primitive functions rules bind
//! (`lax.add`, `lax.convert_element_type`…).
//!
//! ```
//! use dtype_lattice_array::core::{self, Params};
//! use dtype_lattice_array::{Array, lax};
//!
//! let x = Array::from_vec(vec![1i32, 2, 3]);
//! let y = core::bind(&lax::ADD, &[&x, &x], &Params::new())?;
//! assert_eq!(y[0].to_vec::<i32>()?, [2, 4, 6]);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

mod accumulate;
pub(crate) mod ad;
pub(crate) mod associative;
pub(crate) mod batching;
pub(crate) mod conv;
mod convert;
mod dot;
pub(crate) mod elementwise;
pub(crate) mod gather;
mod iota;
pub(crate) mod key_impls;
mod moves;
pub(crate) mod ops;
pub(crate) mod prng_impl;
pub(crate) mod random;
mod reduce;
mod rng;
pub(crate) mod scatter;
pub(crate) mod select;
mod slicing;
pub(crate) mod sort;
pub(crate) mod special;
pub(crate) mod structural;
pub(crate) mod windowed;

pub use associative::associative_scan;
pub use conv::CONV_GENERAL_DILATED;
pub use conv::{
    ConvGeneralDilated, ConvTranspose, DimensionNumbers, Padding, Precision, conv,
    conv_general_dilated, conv_transpose, conv_with_general_padding, padtype_to_pads,
};
pub use convert::CONVERT_ELEMENT_TYPE;
pub use dot::DOT_GENERAL;
#[cfg(test)]
pub(crate) use dot::outer_product;
pub use elementwise::{
    ABS, ACOS, ACOSH, ADD, ADD_ANY, AND, ASIN, ASINH, ATAN, ATAN2, ATANH, CBRT, CEIL, CLZ, COMPLEX,
    CONJ, COS, COSH, DIV, EQ, EQ_TO, ERF, ERF_INV, ERFC, EXP, EXP2, EXPM1, FLOOR, GE, GT, IMAG,
    INTEGER_POW, IS_FINITE, LE, LE_TO, LOG, LOG1P, LOGISTIC, LT, LT_TO, MAX, MIN, MUL, NE, NEG,
    NEXTAFTER, NOT, OR, POPULATION_COUNT, POW, REAL, REM, ROUND, RSQRT, SHIFT_LEFT,
    SHIFT_RIGHT_ARITHMETIC, SHIFT_RIGHT_LOGICAL, SIGN, SIN, SINH, SQRT, SQUARE, SUB, TAN, TANH,
    XOR,
};
pub use gather::GATHER;
pub use iota::IOTA;
#[doc(hidden)]
pub use key_impls::test_hook as key_impls_hook;
pub use random::{
    RANDOM_BITS, RANDOM_FOLD_IN, RANDOM_SEED, RANDOM_SPLIT, RANDOM_UNWRAP, RANDOM_WRAP,
};
pub use reduce::{
    ARGMAX, ARGMIN, CUMLOGSUMEXP, CUMMAX, CUMMIN, CUMPROD, CUMSUM, REDUCE_AND, REDUCE_MAX,
    REDUCE_MIN, REDUCE_OR, REDUCE_PROD, REDUCE_SUM,
};
pub use rng::{RNG_BIT_GENERATOR, RandomAlgorithm, rng_bit_generator};
pub use scatter::{SCATTER, SCATTER_ADD, SCATTER_MAX, SCATTER_MIN, SCATTER_MUL, SCATTER_SUB};
pub use select::{BITCAST_CONVERT_TYPE, CLAMP, SELECT_N};
pub use slicing::{
    CONCATENATE, DYNAMIC_SLICE, DYNAMIC_UPDATE_SLICE, PAD, SLICE, SPLIT, STACK, UNSTACK,
};
pub use sort::{SORT, TOP_K};
pub use special::{DIGAMMA, IGAMMA, IGAMMA_GRAD_A, IGAMMAC, LGAMMA, RANDOM_GAMMA_GRAD};
pub use structural::expand_dims;
pub use structural::{BROADCAST_IN_DIM, COPY, RESHAPE, REV, SQUEEZE, STOP_GRADIENT, TRANSPOSE};
pub use windowed::{
    REDUCE_WINDOW, REDUCE_WINDOW_MAX, REDUCE_WINDOW_MIN, REDUCE_WINDOW_SUM, SELECT_AND_GATHER_ADD,
    SELECT_AND_SCATTER_ADD,
};

use dtype_lattice::Error;

pub(crate) use crate::config::on_xla;
pub(crate) use crate::core::{Avals, Outputs, Param, Params, Primitive, bind};
pub(crate) use crate::core::{bad_param, bind1, implement};

use crate::array::Array;

/// A tuple-of-integers parameter from dimensions.
pub(crate) fn ints(v: impl IntoIterator<Item = usize>) -> Param {
    Param::Ints(v.into_iter().map(|d| d as i64).collect())
}

/// [`bind1`] of a binary primitive on two arrays of one aval: small float32 arithmetic
/// outside any transformation runs its loop directly ([`elementwise::fast::same_aval`]), the rest binds.
pub(crate) fn bind_same_aval(
    prim: &'static Primitive,
    x: &Array,
    y: &Array,
) -> Result<Array, Error> {
    if crate::core::current().is_none()
        && let Some(out) = elementwise::fast::same_aval(prim, x, y)
    {
        return Ok(out);
    }
    bind1(prim, &[x, y], &Params::new())
}
