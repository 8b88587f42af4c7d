//! The train_mlp example's trajectory against JAX 0.10's (tools/gen_train_mlp_fixtures.py):
//! float32 within 1e-4 relative at every step, bfloat16 and float16 within 1e-2, float64 with
//! x64 (the example's `--x64`) too. The example's own code is compiled in here.

#[allow(dead_code)]
#[path = "../../examples/train_mlp.rs"]
mod example;

use dtype_lattice::{DType, Rules};
use dtype_lattice_array::numpy as jnp;
use example::{Args, losses};

fn fixture() -> serde_json::Value {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/transformations/train_mlp.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture")).expect("JSON")
}

fn check(dtype: DType, x64: bool, steps: usize, tol: f64) {
    let fixture = fixture();
    let case = fixture["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["dtype"] == dtype.name() && c["x64"] == x64)
        .expect("a case");
    let want: Vec<f64> = case["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().parse().unwrap())
        .collect();
    let args = Args {
        seed: 0,
        steps,
        n: 256,
        d: 2,
        hidden: 32,
        lr: 0.1,
        keep: 0.9,
        dtype,
        x64,
    };
    let run = || losses(&args).unwrap();
    let got = if x64 {
        jnp::with_rules(Rules::jax().x64(true), run)
    } else {
        run()
    };
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs(),
            "{dtype} step {i}: {g} vs JAX's {w}"
        );
    }
    assert_eq!(got.len(), steps);
}

#[test]
fn float32_follows_jax_at_every_step() {
    check(DType::Float32, false, 100, 1e-4);
}

#[test]
fn bfloat16_and_float16_follow_jax() {
    check(DType::BFloat16, false, 100, 1e-2);
    check(DType::Float16, false, 100, 1e-2);
}

#[test]
fn float64_with_x64_follows_jax() {
    check(DType::Float64, true, 100, 1e-12);
}

/// The README's Rust listing of the model is the example's code: each of its lines (trimmed)
/// is a line of `examples/train_mlp.rs`, in the same order.
#[test]
fn the_readmes_listing_is_the_examples_code() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../../README.md")).expect("the README");
    let example = std::fs::read_to_string(root.join("examples/train_mlp.rs")).expect("example");
    let listing = readme
        .split("```rust,ignore\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README's Rust listing of the MLP");
    let lines: Vec<&str> = example.lines().map(str::trim).collect();
    let mut at = 0;
    let mut checked = 0;
    for line in listing.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let found = lines[at..].iter().position(|l| *l == line);
        let Some(k) = found else {
            panic!("README line not in examples/train_mlp.rs (in order): {line}");
        };
        at += k + 1;
        checked += 1;
    }
    assert!(checked > 40, "the listing is the model ({checked} lines)");
}
