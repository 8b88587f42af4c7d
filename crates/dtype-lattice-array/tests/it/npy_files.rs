//! `.npy`/`.npz` files against NumPy 2.4.6 + ml_dtypes 0.6.0: every file of tests/fixtures/npy/
//! (tools/gen_npy_fixtures.py: `np.save` per dtype, ml_dtypes as raw void bytes, big-endian,
//! Fortran order (up to 64 dimensions), format versions 2.0 and 3.0, 0-d, empty, the named
//! encoding; `np.savez` and `np.savez_compressed`) reads to the recorded dtype, shape and
//! bytes, and the files of dtypes this crate does not hold are refused, naming the descr; the
//! writer reproduces `np.save`'s bytes exactly (the named encoding's too); round trips of
//! every dtype; bad input (every truncation, wrong magic, huge shapes, random bytes and
//! mutations) is an error, never a panic. `npy_bounds.rs` tests the reader's limits.
//!
//! With `NPY_CHECK_DIR=DIR`, the round-trip test also writes its files and `expected.json` to
//! DIR for `tools/gen_npy_fixtures.py --check DIR` (Python loads what Rust wrote).

use crate::common;

use std::io::Cursor;

use dtype_lattice::DType;
use dtype_lattice_array::{Array, npy, random};
use proptest::prelude::*;
use serde_json::{Value, json};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn index() -> Vec<Value> {
    let path = common::fixture_path("npy/index.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn shape(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

fn check(a: &Array, m: &Value) {
    let dtype: DType = m["dtype"].as_str().unwrap().parse().unwrap();
    assert_eq!(a.dtype(), dtype, "{m}");
    assert_eq!(a.shape(), shape(&m["shape"]), "{m}");
    assert_eq!(hex(a.as_bytes()), m["hex"].as_str().unwrap(), "{m}");
    assert!(!a.weak_type());
}

#[test]
fn files_numpy_wrote_read_to_their_values() {
    let cases = index();
    let mut files = 0;
    for case in &cases {
        let path = common::fixture_path(&format!("npy/{}", case["file"].as_str().unwrap()));
        if case["refused"].as_bool() == Some(true) {
            // A dtype NumPy writes and this crate does not hold: refused, naming it.
            let descr = case["descr"].as_str().unwrap();
            let e = npy::load(&path).unwrap_err();
            let named = if descr.starts_with('[') {
                "structured dtypes are not supported"
            } else {
                descr
            };
            assert!(e.message().contains(named), "{descr}: {}", e.message());
        } else if let Some(members) = case["members"].as_array() {
            let arrays = npy::read_npz_with(std::fs::File::open(&path).unwrap(), |name| {
                (name == "bf").then_some(DType::BFloat16)
            })
            .unwrap();
            assert_eq!(arrays.len(), members.len());
            for ((name, a), m) in arrays.iter().zip(members) {
                assert_eq!(name, m["name"].as_str().unwrap());
                check(a, m);
            }
            // Without the name's dtype, the raw bfloat16 member is refused, clearly.
            let e = npy::load_npz(&path).unwrap_err();
            assert!(e.message().contains("member bf.npy"), "{}", e.message());
        } else {
            let dtype: DType = case["dtype"].as_str().unwrap().parse().unwrap();
            let descr = case["descr"].as_str().unwrap();
            let named = descr.starts_with('[');
            let a = if descr.contains('V') && !named {
                let e = npy::load(&path).unwrap_err();
                assert!(e.message().contains("read_as"), "{}", e.message());
                let bytes = std::fs::read(&path).unwrap();
                npy::read_as(&mut &bytes[..], dtype).unwrap()
            } else {
                npy::load(&path).unwrap()
            };
            check(&a, case);
            if let Some(want) = case["npy_hex"].as_str()
                && (named || dtype != DType::Float8E5M2)
            {
                let encoding = if named {
                    npy::Encoding::Named
                } else {
                    npy::Encoding::NumPy
                };
                let mut bytes = Vec::new();
                npy::write_with(&mut bytes, &a, encoding).unwrap();
                assert_eq!(hex(&bytes), want, "{case}");
            }
        }
        files += 1;
    }
    assert!(files >= 54);
}

/// One small array of every dtype (bytes from a pattern, converted so that every value is
/// one the dtype holds).
fn arrays() -> Vec<(String, Array)> {
    DType::NUMERIC
        .iter()
        .map(|&d| {
            let x =
                Array::from_shape_vec(&[2, 3], vec![0.0f32, 1.5, -2.0, 0.25, 3.0, -0.5]).unwrap();
            let a = if d == DType::Bool || !d.kind().is_integer() && d.bits() >= 8 {
                x.astype(d).unwrap()
            } else {
                Array::from_shape_vec(&[2, 3], vec![0i8, 1, -1, 1, 0, -1])
                    .unwrap()
                    .astype(d)
                    .unwrap()
            };
            (d.to_string(), a)
        })
        .collect()
}

#[test]
fn every_dtype_round_trips_and_python_can_check_it() {
    let dir = std::env::var_os("NPY_CHECK_DIR").map(std::path::PathBuf::from);
    let mut expected = vec![];
    for (name, a) in arrays() {
        let bytes = a.to_npy_bytes().unwrap();
        let b = npy::read_as(&mut &bytes[..], a.dtype()).unwrap();
        assert_eq!((b.dtype(), b.shape()), (a.dtype(), a.shape()), "{name}");
        assert_eq!(b.as_bytes(), a.as_bytes(), "{name}");
        // Named: the dtype comes back without being given.
        let mut named = Vec::new();
        npy::write_with(&mut named, &a, npy::Encoding::Named).unwrap();
        let c = npy::read(&mut &named[..]).unwrap();
        assert_eq!(
            (c.dtype(), c.as_bytes()),
            (a.dtype(), a.as_bytes()),
            "{name}"
        );
        if let Some(dir) = &dir {
            std::fs::create_dir_all(dir).unwrap();
            npy::save(dir.join(format!("{name}.npy")), &a).unwrap();
            expected.push(json!({"file": format!("{name}.npy"), "dtype": name,
                "shape": a.shape(), "hex": hex(a.as_bytes())}));
            std::fs::write(dir.join(format!("named_{name}.npy")), &named).unwrap();
            expected.push(json!({"file": format!("named_{name}.npy"), "dtype": name,
                "shape": a.shape(), "hex": hex(a.as_bytes())}));
        }
    }
    let all = arrays();
    let named: Vec<(&str, &Array)> = all.iter().map(|(n, a)| (n.as_str(), a)).collect();
    for compressed in [false, true] {
        let mut buf = Cursor::new(Vec::new());
        npy::write_npz(&mut buf, &named, compressed).unwrap();
        let back = npy::read_npz_with(Cursor::new(buf.into_inner()), |n| n.parse().ok()).unwrap();
        assert_eq!(back.len(), all.len());
        for ((n, a), (m, b)) in all.iter().zip(&back) {
            assert_eq!((n, a.dtype(), a.as_bytes()), (m, b.dtype(), b.as_bytes()));
        }
        if let Some(dir) = &dir {
            let file = if compressed {
                "rust_compressed.npz"
            } else {
                "rust.npz"
            };
            if compressed {
                npy::savez_compressed(dir.join(file), &named).unwrap();
            } else {
                npy::savez(dir.join(file), &named).unwrap();
            }
            let members: Vec<Value> = all
                .iter()
                .map(|(n, a)| json!({"name": n, "dtype": n, "shape": a.shape(), "hex": hex(a.as_bytes())}))
                .collect();
            expected.push(json!({"file": file, "members": members}));
        }
    }
    if let Some(dir) = &dir {
        std::fs::write(dir.join("expected.json"), Value::from(expected).to_string()).unwrap();
    }
}

#[test]
fn key_arrays_are_refused_and_their_data_saves() {
    let keys = random::split(&random::key(0).unwrap(), 3).unwrap();
    let e = keys.to_npy_bytes().unwrap_err();
    assert!(e.message().contains("key_data"), "{}", e.message());
    let data = random::key_data(&keys).unwrap();
    let back = Array::from_npy_bytes(&data.to_npy_bytes().unwrap()).unwrap();
    let again = random::wrap_key_data(&back, DType::KeyThreefry2x32).unwrap();
    assert_eq!(again.as_bytes(), keys.as_bytes());
    assert_eq!(again.dtype(), keys.dtype());
}

#[test]
fn bad_input_is_an_error() {
    let good = std::fs::read(common::fixture_path("npy/float64.npy")).unwrap();
    for n in 0..good.len() {
        assert!(Array::from_npy_bytes(&good[..n]).is_err(), "prefix {n}");
    }
    let mut magic = good.clone();
    magic[1] = b'X';
    assert!(Array::from_npy_bytes(&magic).is_err());
    let mut version = good.clone();
    version[6] = 9;
    assert!(Array::from_npy_bytes(&version).is_err());
    // A huge shape: refused before anything is allocated.
    let huge =
        b"{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }";
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend_from_slice(&(huge.len() as u16).to_le_bytes());
    file.extend_from_slice(huge);
    let e = Array::from_npy_bytes(&file).unwrap_err();
    assert!(e.message().contains("larger than"), "{}", e.message());
    // A long header (NumPy's limit is 10,000 bytes) with a version 2.0 length.
    let mut long = b"\x93NUMPY\x02\x00".to_vec();
    long.extend_from_slice(&u32::MAX.to_le_bytes());
    assert!(Array::from_npy_bytes(&long).is_err());
    assert!(npy::read_npz(Cursor::new(b"PK\x03\x04 not a zip".to_vec())).is_err());
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = Array::from_npy_bytes(&bytes);
        let mut with_magic = b"\x93NUMPY\x01\x00".to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = Array::from_npy_bytes(&with_magic);
        let _ = npy::read_npz(Cursor::new(bytes));
    }

    #[test]
    fn mutated_files_never_panic(i in 0usize..200, b in any::<u8>(), cut in 0usize..300) {
        let mut good = std::fs::read(common::fixture_path("npy/fortran_int16_3d.npy")).unwrap();
        let n = good.len();
        good[i % n] = b;
        good.truncate(n - cut.min(n));
        let _ = Array::from_npy_bytes(&good);
        let _ = npy::read_as(&mut &good[..], DType::BFloat16);
    }
}
