//! JAX's counter-based, splittable PRNG with typed keys (`key<fry>`), bit for bit.
//!
//! JAX represents a PRNG key as a scalar of an *extended dtype* such as `key<fry>`, whose
//! implementation (here: [`KeyImpl`](dtype_lattice::key::KeyImpl), one row of a table) says how many `uint32` words of key
//! data a key holds and how keys are seeded, split, folded and turned into bits. This module
//! reproduces JAX 0.10's default, `threefry2x32` with `jax_threefry_partitionable=True`:
//!
//! - `key(seed)`: the seed's two 32-bit halves (with x64 off, JAX first converts the seed to
//!   int32, so the high word is 0);
//! - output element `i` of any sampler, or split key `i`, is Threefry-2x32 of the key at the
//!   counter `(i >> 32, i & 0xffffffff)` ([`threefry2x32`]); 32-bit bits are the two output
//!   words XORed, 64-bit bits are `hi << 32 | lo`, 8- and 16-bit bits truncate the 32-bit ones;
//! - `fold_in(key, d)` is Threefry-2x32 of the key at the counter `(0, d)`;
//! - `uniform`, `normal`, `randint` and `bernoulli` turn those bits into values exactly as
//!   `jax.random` does (mantissa bits under an exponent of 1, XLA's `erf_inv` approximation,
//!   a double-width modulus, a comparison with a uniform sample).
//!
//! Every element depends only on its index, so any slice of an output can be computed on its
//! own ([`fill_bits32`]); large outputs are filled with SIMD (AVX-512 or AVX2, chosen at run time: [`Backend`]) on all cores.
//!
//! ```
//! use dtype_lattice_array::random::{Random, Shape};
//! use dtype_lattice::DType;
//!
//! let rng = Random::new();                          // x64 off, like JAX's default
//! let key = rng.key(42)?;                           // jax.random.key(42)
//! assert_eq!(key.data(), [0, 42]);                  // jax.random.key_data(key)
//! let keys = rng.split(&key, &[3])?;                // jax.random.split(key, 3)
//! assert_eq!((keys.shape(), keys.key_data().len()), (&[3usize][..], 6));
//! let sub = rng.fold_in(&key, 7)?;                  // jax.random.fold_in(key, 7)
//! let u = rng.uniform(&sub, &[4], DType::Float32, 0.0, 1.0)?;
//! assert_eq!(u.dtype(), DType::Float32);
//! let n = rng.normal(&keys.key(1)?, &Shape::from([2, 2]), DType::Float32)?;
//! assert_eq!(n.shape(), &[2, 2]);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

pub(crate) mod erfinv;
mod fill;
mod floats;
mod keys;
mod sampler;
mod shape;
#[allow(unsafe_code)]
mod simd;
#[cfg(test)]
mod tests;
mod threefry;
mod values;
mod writer;

use dtype_lattice::Error;
use dtype_lattice::error::Reason;

pub use fill::{fill_bits32, fill_bits32_with};
pub use keys::{Key, KeyArray};
pub use sampler::Random;
pub use shape::MAX_ELEMENTS;
pub use simd::Backend;
pub use threefry::threefry2x32;
pub use values::{Sample, Values};
pub use writer::BitsWriter;

/// A shape: the dimensions of an array, row-major.
pub type Shape = Vec<usize>;

/// Unusable input to a random function (exit code 2 in the CLI).
fn invalid(argument: &str, reason: impl Into<String>) -> Error {
    Reason::InvalidArgument {
        argument: argument.to_string(),
        reason: reason.into(),
    }
    .into()
}
