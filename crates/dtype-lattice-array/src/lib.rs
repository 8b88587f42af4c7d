//! # dtype-lattice-array
//!
//! Arrays with JAX's dtype semantics, and the computations JAX does with them: [`Array`] (any
//! dtype, immutable, shared elements), the primitives of `jax.lax` as data ([`lax`]: each
//! primitive one definition with its shape/dtype rule, CPU implementation, JVP, transpose and
//! batching rules, applied through [`core::bind`]), JAX's transformations as interpreters of
//! them ([`interpreters`]: [`jvp`], [`grad`], [`vjp`], [`vmap`], [`make_jaxpr`]; [`jit()`]),
//! `jax.numpy` ([`numpy`]), `jax.random` on typed keys ([`random`]) and `jax.nn` ([`nn`]), bit
//! for bit with JAX 0.10.2 on CPU. [`ode`] integrates ODEs as `jax.experimental.ode.odeint` does, on all of
//! these. The dtypes and their promotion live in the core crate, [`dtype_lattice`].
//!
//! The modules are layers, each using only those before it (ARCHITECTURE.md draws them; a
//! test keeps them): `kernels` (functions over slices: every `unsafe`), [`convert`] (element
//! codecs), [`config`] (the rules in force), [`array`](mod@array), `prng` (the PRNG on plain keys),
//! [`core`], [`lax`], [`interpreters`], [`jit`](mod@jit), [`registry`], [`reader`], then [`numpy`],
//! [`random`], [`nn`], [`repr`] and [`npy`], and last [`ode`].
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
pub mod lax;
pub mod nn;
pub mod npy;
pub mod numpy;
pub mod ode;
mod prng;
pub mod random;
pub mod reader;
pub mod registry;
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
