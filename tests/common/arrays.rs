//! Arrays in fixtures as tools/gen_jaxpr_fixtures.py writes them: `{"dtype", "shape", "hex"}`,
//! the little-endian bytes of the elements as NumPy holds them. Shared by the array crate's
//! and the CLI crate's tests and the array crate's benches (`#[path]`); not part of `common`,
//! which the core crate's tests use without the array crate.

use dtype_lattice::DType;
use dtype_lattice_array::Array;
use serde_json::Value;

/// Bytes from their hex text.
pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The shape of a fixture array.
pub fn shape(v: &Value) -> Vec<usize> {
    v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

/// A fixture array.
pub fn array(v: &Value) -> Array {
    let dtype: DType = v["dtype"].as_str().unwrap().parse().unwrap();
    Array::from_bytes(dtype, &shape(v), &hex(v["hex"].as_str().unwrap())).unwrap()
}
