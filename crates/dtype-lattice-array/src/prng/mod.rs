//! JAX's PRNG on plain keys and vectors, below the arrays: Threefry-2x32 keys ([`Key`],
//! [`KeyArray`]), their splitting and folding, and the samplers ([`Random`]: `bits`,
//! `uniform`, `normal`, `randint`, `bernoulli` as JAX 0.10 computes them), filled in parallel
//! ([`fill_bits32`]) or streamed to a file ([`BitsWriter`]). The PRNG primitives (`lax::random`)
//! implement key arrays with it, and `jax.random`'s array API ([`crate::random`]) computes a
//! concrete key's samples with it; [`crate::random`] re-exports its public items (the
//! struct API of the CLI's `random` command).

pub(crate) mod batch;
mod fill;
mod floats;
mod keys;
mod sampler;
mod shape;
#[cfg(test)]
mod tests;
mod values;
mod writer;

use dtype_lattice::Error;
use dtype_lattice::error::Reason;

pub use crate::kernels::threefry::threefry2x32;
pub use fill::{fill_bits32, fill_bits32_with};
pub(crate) use keys::implemented;
pub use keys::{Key, KeyArray};
pub use sampler::Random;
pub(crate) use shape::output_size;
pub use values::{Sample, Values};
pub use writer::BitsWriter;

/// A shape: the dimensions of an array, row-major.
pub type Shape = Vec<usize>;

/// Unusable input to a random function (exit code 2 in the CLI).
pub(crate) fn invalid(argument: &str, reason: impl Into<String>) -> Error {
    Reason::InvalidArgument {
        argument: argument.to_string(),
        reason: reason.into(),
    }
    .into()
}
