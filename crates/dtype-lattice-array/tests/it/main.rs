//! The crate's integration tests, gathered into one test binary (one compile and link instead
//! of one per file, for `cargo test` and `cargo build --release --all-targets` alike).
//! Each file is a module; `cargo test -p dtype-lattice-array --test it NAME` runs one of them.

mod buffer_reuse;
#[path = "../../../../tests/common/mod.rs"]
mod common;
mod compositions;
mod conv;
mod convert_conformance;
mod convert_laws;
#[path = "../../../../tests/common/arrays.rs"]
mod fixture_arrays;
mod float0;
mod gather;
mod jaxpr_reader;
mod jnp_indexing;
mod jnp_sorting;
mod lax_elementwise;
mod lax_elementwise_laws;
mod lax_structural_conformance;
mod lax_structural_laws;
mod layering;
mod nn;
mod npy_bounds;
mod npy_files;
mod numpy_builtin_loops;
mod numpy_functions;
mod numpy_ml_dtypes;
mod odeint;
mod primitives;
mod prng_impls;
mod random_arrays;
mod random_arrays_laws;
mod random_conformance;
mod random_gamma;
mod random_robustness;
mod random_samplers;
mod rbg;
mod repr_conformance;
mod simplifier;
mod train_mlp;
mod transform_common;
mod transform_laws;
mod transformations;
mod vmap;
