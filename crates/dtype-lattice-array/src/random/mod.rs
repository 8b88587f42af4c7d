//! JAX's counter-based, splittable PRNG with typed keys (`key<fry>`), bit for bit.
//!
//! Two APIs share one set of kernels:
//!
//! - **the array API (primary)**: `jax.random`'s functions on [`Array`](crate::Array)s —
//!   [`key`], [`split`], [`split_shape`], [`fold_in`], [`fold_in_array`], [`bits`],
//!   [`bits_dtype`], [`uniform`], [`normal`], [`bernoulli`], [`randint`], [`key_data`],
//!   [`wrap_key_data`]. Keys are arrays of a key dtype (JEP 9263 typed keys), made and
//!   transformed by the PRNG primitives (`random_seed`, `random_split`, `random_fold_in`,
//!   `random_bits`, `random_wrap`, `random_unwrap` in [`crate::lax`]), so that they can be
//!   staged and batched like any other primitive; x64 follows the rules in force
//!   ([`crate::config::rules`]). The samplers (`uniform`, `normal`, `bernoulli`, `randint`)
//!   compute a concrete key's values with the struct API's kernels directly; a traced key
//!   (under `jit`, `vmap`...) makes `uniform`, `normal` and `bernoulli` bind `random_bits`
//!   followed by the `lax` primitives JAX stages for them (`randint` needs a concrete key).
//! - **the struct API** (what the CLI's `random` command uses): [`Random`] (x64 and threads
//!   as explicit options) with [`Key`], [`KeyArray`], [`Sample`] and [`Values`], plus
//!   streaming ([`BitsWriter`], [`Random::bits_into`]) for outputs larger than memory.
//!
//! ```
//! use dtype_lattice::DType;
//! use dtype_lattice_array::random;
//!
//! let key = random::key(42)?;                        // jax.random.key(42)
//! let keys = random::split(&key, 3)?;                // key<fry>[3]
//! let data = random::key_data(&keys)?;               // u32[3,2]
//! assert_eq!(data.shape(), &[3, 2]);
//! let u = random::uniform(&random::fold_in(&key, 7)?, &[4], DType::Float32, 0.0, 1.0)?;
//! assert_eq!(u.dtype(), DType::Float32);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```
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
//! The struct API:
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

mod arrays;
mod counts;
mod discrete;
mod gamma;
mod samplers;

pub use crate::array::MAX_ELEMENTS;
pub use crate::kernels::threefry::threefry2x32;
pub use crate::kernels::threefry_simd::Backend;
pub use crate::lax::prng_impl::PrngImpl;
pub use crate::prng::{
    BitsWriter, Key, KeyArray, Random, Sample, Shape, Values, fill_bits32, fill_bits32_with,
};
pub(crate) use crate::prng::{implemented, output_size};
pub use arrays::{
    bernoulli, bits, bits_dtype, define_prng_impl, fold_in, fold_in_array, key, key_data, key_impl,
    key_with, normal, prng_key, randint, resolve_impl, set_default_impl, split, split_shape,
    uniform, wrap_key_data,
};
pub use counts::{binomial, multinomial, poisson};
pub use discrete::{bernoulli_array, categorical, choice, geometric, permutation, rademacher};
pub use gamma::{
    RANDOM_GAMMA, ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, t,
};
pub use samplers::{
    cauchy, double_sided_maxwell, exponential, gumbel, laplace, logistic, lognormal, maxwell,
    pareto, rayleigh, triangular, truncated_normal, uniform_array, wald, weibull_min,
};
