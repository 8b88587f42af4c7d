//! The crate's integration tests, gathered into one test binary (one compile and link instead
//! of one per file, for `cargo test` and `cargo build --release --all-targets` alike).
//! Each file is a module; `cargo test -p dtype-lattice-cli --test it NAME` runs one of them.

mod cli;
mod cli_bounds;
mod cli_eval;
mod cli_jaxpr;
mod cli_options;
mod cli_random;
mod cli_toolkit;
#[path = "../../../../tests/common/mod.rs"]
mod common;
mod eval_conformance;
#[path = "../../../../tests/common/arrays.rs"]
mod fixture_arrays;
mod report_chromium;
mod seed_tables;
