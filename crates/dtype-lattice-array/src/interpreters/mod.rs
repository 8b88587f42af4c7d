//! The transformations, as interpreters of primitives (JAX's `jax/_src/interpreters/`): each
//! is a trace (`core::Trace`) that, given a primitive application, calls the rule its
//! definition holds (JVP, transpose, batching) or stages it; none holds per-primitive code.
//!
//! - `stage`: the staging trace (`make_jaxpr`, `jit`'s tracing; omnistaging), also the
//!   partial evaluator of `linearize`, and closure conversion;
//! - `jvp`: forward mode (`jvp`, `linearize_jvp`, symbolic zeros, `stop_gradient`);
//! - `vjp`: reverse mode (`linearize`, the backward pass over the transpose rules, `vjp`,
//!   `grad`, `value_and_grad`);
//! - `batching`: `vmap` (the batching rules, `in_axes`/`out_axes`);
//! - `custom`: `custom_jvp`/`custom_vjp` and their primitives;
//! - [`control`]: control flow (`cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`)
//!   and its primitives.

pub(crate) mod batching;
pub mod control;
pub(crate) mod custom;
pub(crate) mod jvp;
pub(crate) mod stage;
pub(crate) mod vjp;

pub use batching::{MapAxes, Vmap, vmap};
pub use custom::{CustomJvp, CustomVjp};
pub use jvp::{jvp, linearize_jvp, stop_gradient};
pub use stage::make_jaxpr;
pub use vjp::{Grad, Linearized, grad, linearize, value_and_grad, vjp};
