//! Helpers shared by the transformation tests (tests/it/transformations.rs, vmap.rs, float0.rs,
//! compositions.rs): the fixtures of tools/gen_transform_fixtures.py and its siblings, and
//! the generators' arguments.

#![allow(dead_code)]

use std::path::PathBuf;

use dtype_lattice::DType;
use dtype_lattice_array::{Array, numpy as jnp, random};
use serde_json::Value;

/// `tests/fixtures/transformations/NAME`.
pub fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/transformations")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture")).expect("JSON")
}

pub fn dtype(name: &str) -> DType {
    name.parse().expect("a dtype")
}

pub fn shape_of(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

/// Argument `i` of dtype `d` and `shape`: element k is ((7k + 3i) mod 11) / 4 - 1.3,
/// converted (the generator's pattern).
pub fn pattern(d: DType, shape: &[usize], i: usize) -> Array {
    let n: usize = shape.iter().product();
    let vals: Vec<f64> = (0..n)
        .map(|k| ((k * 7 + 3 * i) % 11) as f64 / 4.0 - 1.3)
        .collect();
    Array::from_shape_vec(shape, vals)
        .unwrap()
        .astype(d)
        .unwrap()
}

/// Argument `i` of a case from its spec (the generators' `*_arg`): `["key", seed]`,
/// `["keys", seed, n]` (`split`), `["float0", shape]` (zeros), `["bool", shape]` (element k
/// true when 7k + 3i is a multiple of 3), `["mod", dtype, shape, m]` ((7k + 3i) mod m,
/// converted) or `[dtype, shape]` ([`pattern`]).
pub fn argument(spec: &Value, i: usize) -> Array {
    let s = spec.as_array().unwrap();
    let key = || random::key(i128::from(s[1].as_i64().unwrap())).unwrap();
    match s[0].as_str().unwrap() {
        "key" => key(),
        "keys" => random::split(&key(), s[2].as_u64().unwrap() as usize).unwrap(),
        "float0" => jnp::zeros(&shape_of(&s[1]), DType::Float0).unwrap(),
        "bool" => {
            let shape = shape_of(&s[1]);
            let n: usize = shape.iter().product();
            let vals: Vec<bool> = (0..n).map(|k| (k * 7 + 3 * i).is_multiple_of(3)).collect();
            Array::from_shape_vec(&shape, vals).unwrap()
        }
        "mod" => {
            let shape = shape_of(&s[2]);
            let m = s[3].as_u64().unwrap() as usize;
            let n: usize = shape.iter().product();
            let vals: Vec<i64> = (0..n).map(|k| ((k * 7 + 3 * i) % m) as i64).collect();
            Array::from_shape_vec(&shape, vals)
                .unwrap()
                .astype(dtype(s[1].as_str().unwrap()))
                .unwrap()
        }
        d => pattern(dtype(d), &shape_of(&s[1]), i),
    }
}

/// Whether JAX's leaf `want` is float0 (the tangent or cotangent of an integer, bool or
/// key); if so, `got` is float0 zeros of its shape, holding no bytes.
pub fn is_float0(name: &str, what: &str, got: &Array, want: &Value) -> bool {
    if want["dtype"] != "float0" {
        return false;
    }
    assert_eq!(got.dtype(), DType::Float0, "{name} {what}: {got}");
    assert_eq!(
        got.shape(),
        shape_of(&want["shape"]).as_slice(),
        "{name} {what}"
    );
    assert!(got.as_bytes().is_empty(), "{name} {what}");
    true
}

/// `got` has `want`'s dtype and shape, and its values are within `tol` (relative, at least
/// absolute) of `want`'s.
pub fn close(name: &str, what: &str, got: &Array, want: &Value, tol: f64) {
    assert_eq!(
        got.dtype(),
        dtype(want["dtype"].as_str().unwrap()),
        "{name} {what}"
    );
    assert_eq!(
        got.shape(),
        shape_of(&want["shape"]).as_slice(),
        "{name} {what}"
    );
    let vals = got.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
    let want_vals = want["values"].as_array().unwrap();
    assert_eq!(vals.len(), want_vals.len(), "{name} {what}");
    for (i, (g, w)) in vals.iter().zip(want_vals).enumerate() {
        let w = w.as_f64().unwrap();
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{name} {what}: element {i} is {g:e}, JAX's {w:e}; got {got}, want {:?}",
            want["values"]
        );
    }
}
