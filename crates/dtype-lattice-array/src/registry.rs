//! Every primitive by name, for text that names one (the CLI's `eval` of a primitive, the
//! jaxpr reader): a map built once. Code names primitives by their statics
//! ([`crate::lax::ADD`]), so that a wrong name does not compile.
//!
//! ```
//! use dtype_lattice_array::registry::by_name;
//! assert_eq!(by_name("mul").unwrap().name, "mul");
//! assert!(by_name("nope").is_none());
//! ```

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::core::Primitive;
use crate::lax;

/// Every primitive, one row each: the `jax.lax` families' and the call primitives (`jit`,
/// `custom_jvp_call`, `custom_vjp_call`, `custom_lin`). (jit's internal `fma` is never in a
/// jaxpr, so not here.)
pub static PRIMITIVES: &[&Primitive] = &[
    &crate::jit::JIT,
    &crate::interpreters::custom::CUSTOM_JVP_CALL,
    &crate::interpreters::control::COND,
    &crate::interpreters::control::WHILE,
    &crate::interpreters::control::SCAN,
    &crate::interpreters::custom::CUSTOM_VJP_CALL,
    &crate::interpreters::custom::CUSTOM_LIN,
    &lax::GATHER,
    &lax::SCATTER,
    &lax::SCATTER_ADD,
    &lax::SCATTER_SUB,
    &lax::SCATTER_MUL,
    &lax::SCATTER_MIN,
    &lax::SCATTER_MAX,
    &lax::SORT,
    &lax::TOP_K,
    &lax::REDUCE_WINDOW,
    &lax::REDUCE_WINDOW_SUM,
    &lax::REDUCE_WINDOW_MAX,
    &lax::REDUCE_WINDOW_MIN,
    &lax::SELECT_AND_SCATTER_ADD,
    &lax::SELECT_AND_GATHER_ADD,
    &lax::ADD,
    &lax::ADD_ANY,
    &lax::SUB,
    &lax::MUL,
    &lax::MAX,
    &lax::MIN,
    &lax::NEG,
    &lax::EQ,
    &lax::NE,
    &lax::LT,
    &lax::LE,
    &lax::GT,
    &lax::GE,
    &lax::EQ_TO,
    &lax::LE_TO,
    &lax::LT_TO,
    &lax::AND,
    &lax::OR,
    &lax::XOR,
    &lax::CONVERT_ELEMENT_TYPE,
    &lax::BROADCAST_IN_DIM,
    &lax::RESHAPE,
    &lax::RANDOM_SEED,
    &lax::RANDOM_SPLIT,
    &lax::RANDOM_FOLD_IN,
    &lax::RANDOM_BITS,
    &lax::RANDOM_WRAP,
    &lax::RANDOM_UNWRAP,
    &lax::RNG_BIT_GENERATOR,
    &crate::random::RANDOM_GAMMA,
    &lax::DIV,
    &lax::REM,
    &lax::POW,
    &lax::ATAN2,
    &lax::NEXTAFTER,
    &lax::COMPLEX,
    &lax::SHIFT_LEFT,
    &lax::SHIFT_RIGHT_ARITHMETIC,
    &lax::SHIFT_RIGHT_LOGICAL,
    &lax::NOT,
    &lax::SIGN,
    &lax::FLOOR,
    &lax::CEIL,
    &lax::ROUND,
    &lax::IS_FINITE,
    &lax::ABS,
    &lax::SQUARE,
    &lax::INTEGER_POW,
    &lax::POPULATION_COUNT,
    &lax::CLZ,
    &lax::REAL,
    &lax::IMAG,
    &lax::CONJ,
    &lax::EXP,
    &lax::EXP2,
    &lax::EXPM1,
    &lax::LOG,
    &lax::LOG1P,
    &lax::SIN,
    &lax::COS,
    &lax::TAN,
    &lax::TANH,
    &lax::LOGISTIC,
    &lax::ASIN,
    &lax::ACOS,
    &lax::ATAN,
    &lax::SINH,
    &lax::COSH,
    &lax::ASINH,
    &lax::ACOSH,
    &lax::ATANH,
    &lax::SQRT,
    &lax::RSQRT,
    &lax::CBRT,
    &lax::ERF,
    &lax::ERFC,
    &lax::ERF_INV,
    &lax::SELECT_N,
    &lax::CLAMP,
    &lax::BITCAST_CONVERT_TYPE,
    &lax::TRANSPOSE,
    &lax::SQUEEZE,
    &lax::REV,
    &lax::STOP_GRADIENT,
    &lax::COPY,
    &lax::SLICE,
    &lax::DYNAMIC_SLICE,
    &lax::DYNAMIC_UPDATE_SLICE,
    &lax::CONCATENATE,
    &lax::STACK,
    &lax::UNSTACK,
    &lax::SPLIT,
    &lax::PAD,
    &lax::IOTA,
    &lax::REDUCE_SUM,
    &lax::REDUCE_PROD,
    &lax::REDUCE_MAX,
    &lax::REDUCE_MIN,
    &lax::REDUCE_AND,
    &lax::REDUCE_OR,
    &lax::ARGMAX,
    &lax::ARGMIN,
    &lax::CUMSUM,
    &lax::CUMPROD,
    &lax::CUMMAX,
    &lax::CUMMIN,
    &lax::CUMLOGSUMEXP,
    &lax::DOT_GENERAL,
    &lax::CONV_GENERAL_DILATED,
    &lax::LGAMMA,
    &lax::DIGAMMA,
    &lax::IGAMMA,
    &lax::IGAMMAC,
    &lax::IGAMMA_GRAD_A,
    &lax::RANDOM_GAMMA_GRAD,
];

/// The primitive of a name.
pub fn by_name(name: &str) -> Option<&'static Primitive> {
    static MAP: OnceLock<HashMap<&'static str, &'static Primitive>> = OnceLock::new();
    MAP.get_or_init(|| PRIMITIVES.iter().map(|&p| (p.name, p)).collect())
        .get(name)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for p in PRIMITIVES {
            assert!(seen.insert(p.name), "{}", p.name);
        }
        assert_eq!(by_name("reduce_sum").map(|p| p.name), Some("reduce_sum"));
    }

    #[test]
    fn jax_randoms_primitives_are_registered() {
        for name in [
            "random_seed",
            "random_split",
            "random_fold_in",
            "random_bits",
            "random_wrap",
            "random_unwrap",
            "random_gamma",
            "rng_bit_generator",
        ] {
            assert!(by_name(name).is_some(), "{name}");
        }
    }
}
