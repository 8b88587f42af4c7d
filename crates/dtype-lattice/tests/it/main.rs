//! The crate's integration tests, gathered into one test binary (one compile and link instead
//! of one per file, for `cargo test` and `cargo build --release --all-targets` alike).
//! Each file is a module; `cargo test -p dtype-lattice --test it NAME` runs one of them.

mod array_api_conformance;
#[path = "../../../../tests/common/mod.rs"]
mod common;
mod dtype_model;
mod jax_conformance;
mod key_dtypes;
mod lattice_laws;
mod layering;
mod numpy_legacy_conformance;
mod numpy_ml_dtypes_conformance;
mod ops_conformance;
mod peers_conformance;
mod python_literals;
mod robustness;
mod tensorflow_conformance;
mod toolkit;
mod torch_conformance;
