//! # dtype-lattice
//!
//! What dtype does `a + b` produce? This crate answers with JAX's lattice-based type
//! promotion (weak types for Python scalars, strict mode, 64-bit canonicalisation), served by
//! a generic lattice engine, and explains it.
//!
//! ```
//! use dtype_lattice::{DType, Operand, Rules};
//!
//! // jnp.promote_types
//! assert_eq!(Rules::jax().promote_types(DType::Int8, DType::UInt8).unwrap(), DType::Int16);
//!
//! // jax.dtypes.result_type(np.int16 array, 1.0, return_weak_type_flag=True)
//! let ops: Vec<Operand> = vec!["int16".parse().unwrap(), "1.0".parse().unwrap()];
//! let p = Rules::jax().result_type(&ops).unwrap();
//! assert_eq!((p.dtype, p.weak_type), (DType::Float32, true));
//!
//! // Strict mode refuses mixed strong dtypes, with JAX's error.
//! let err = Rules::jax().strict(true).promote_types(DType::Float32, DType::Int32).unwrap_err();
//! assert!(err.message().contains("jax_numpy_dtype_promotion=strict"));
//! ```
//!
//! Modules: [`dtype`] (the dtype model), [`lattice`] (the generic engine), [`rules`] (one file
//! per rule set), [`operand`] (what a value contributes), [`table`] (promotion tables).
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::missing_errors_doc, clippy::return_self_not_must_use)]

pub mod dtype;
pub mod error;
pub mod key;
pub mod lattice;
pub mod operand;
pub mod ops;
pub mod rules;
pub mod table;
pub mod toolkit;

pub use dtype::{DType, DTypeInfo, FloatFormat, Kind, Repr};
pub use error::Error;
pub use operand::{Node, Operand, PyType, Value};
pub use ops::Op;
pub use ops::Promotion;
pub use rules::ufunc;
pub use rules::{OptionName, Options, RuleSet, Rules};
