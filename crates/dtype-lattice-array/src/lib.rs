//! # dtype-lattice-array
//!
//! Arrays with JAX's dtype semantics: [`Array`] (any dtype, immutable, shared elements), the
//! primitives of `jax.lax` as data ([`prim`]: shape/dtype rule and CPU implementation per
//! primitive, applied through [`prim::bind`]), and JAX's counter-based PRNG on typed keys
//! ([`random`]), bit for bit with JAX 0.10 (threefry2x32, `jax_threefry_partitionable=True`).
//! The key *dtypes* and their promotion live in the core crate, [`dtype_lattice`].
// `unsafe` is denied everywhere but in `kernels`, the layer of functions over slices (calls
// of `#[target_feature]` functions behind run-time CPU detection, vector loads and stores, the
// `gemm` crate's raw-pointer entry point); each use documents why and is tested against the
// scalar reference.
#![deny(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::missing_errors_doc, clippy::return_self_not_must_use)]

pub mod array;
pub mod config;
pub mod convert;
pub mod core;
pub mod interpreters;
pub mod jit;
#[allow(unsafe_code)]
mod kernels;
pub mod npy;
pub mod numpy;
pub mod prim;
mod prng;
pub mod random;
pub mod repr;

pub use array::{Array, Element, ShapedArray};
pub use interpreters::{
    CustomJvp, CustomVjp, Grad, Linearized, MapAxes, Vmap, grad, jvp, linearize, linearize_jvp,
    make_jaxpr, stop_gradient, value_and_grad, vjp, vmap,
};
pub use jit::{Jit, jit};

/// The README's Rust examples run as doctests (here, where both library crates are in scope).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
