//! Array printing conformance: every case of tests/fixtures/repr/{jax_x32,jax_x64,numpy}.json
//! (written by tools/gen_repr_fixtures.py from JAX 0.10.2, NumPy 2.4.6 and ml_dtypes 0.6.0)
//! printed by `repr::jax_repr` / `repr::numpy_repr` and compared character for character.
//!
//! The fixtures give each element as its bit pattern; [`decode`] turns them into
//! [`Scalar`]s: `half` for float16 and bfloat16, the dtype's [`FloatFormat`] for the
//! narrower float formats.

use crate::common;

use dtype_lattice::{DType, FloatFormat, Kind};
use dtype_lattice_array::repr::{Scalar, jax_repr, numpy_repr};
use serde_json::Value;

fn load(name: &str) -> Value {
    let path = common::fixture_path(&format!("repr/{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A float of a narrow format (8 bits or fewer) from its bit pattern.
fn small_float(dtype: DType, f: &FloatFormat, bits: u64) -> f64 {
    let width = dtype.bits();
    let p = f.mantissa_bits;
    let mantissa = bits & ((1 << p) - 1);
    let exp_field = (bits >> p) & ((1 << f.exponent_bits) - 1);
    let negative = f.signed && (bits >> (width - 1)) & 1 == 1;
    let all_ones = (1 << f.exponent_bits) - 1;
    let fnuz = dtype.name().ends_with("fnuz");
    let value = if !f.signed {
        // float8_e8m0fnu: a power of two, 0xff is NaN
        if exp_field == all_ones {
            f64::NAN
        } else {
            2f64.powi(exp_field as i32 - 127)
        }
    } else if fnuz && bits == 1 << (width - 1) {
        f64::NAN
    } else if f.has_inf && exp_field == all_ones {
        if mantissa == 0 {
            f64::INFINITY
        } else {
            f64::NAN
        }
    } else if f.has_nan && !f.has_inf && !fnuz && exp_field == all_ones && mantissa == (1 << p) - 1
    {
        f64::NAN
    } else if exp_field == 0 {
        mantissa as f64 * 2f64.powi(f.min_exponent - p as i32)
    } else {
        (1.0 + mantissa as f64 / (1u64 << p) as f64)
            * 2f64.powi(exp_field as i32 - 1 + f.min_exponent)
    };
    if negative { -value } else { value }
}

/// A real float element of `dtype` from its bit pattern.
fn float(dtype: DType, bits: u64) -> f64 {
    match dtype {
        DType::Float64 => f64::from_bits(bits),
        DType::Float32 => f32::from_bits(bits as u32) as f64,
        DType::Float16 => half::f16::from_bits(bits as u16).to_f64(),
        DType::BFloat16 => half::bf16::from_bits(bits as u16).to_f64(),
        _ => small_float(dtype, dtype.float_format().unwrap(), bits),
    }
}

/// The elements of a case, from its hex words.
fn decode(dtype: DType, bits: &str) -> Vec<Scalar> {
    let words: Vec<u64> = bits
        .split_whitespace()
        .map(|w| u64::from_str_radix(w, 16).unwrap())
        .collect();
    match dtype.kind() {
        Kind::Bool => words.iter().map(|&w| Scalar::Bool(w != 0)).collect(),
        Kind::UnsignedInt => words.iter().map(|&w| Scalar::Int(w as i128)).collect(),
        Kind::SignedInt => {
            let width = dtype.bits();
            words
                .iter()
                .map(|&w| Scalar::Int(((w as i128) << (128 - width)) >> (128 - width)))
                .collect()
        }
        Kind::Float => words
            .iter()
            .map(|&w| Scalar::Float(float(dtype, w)))
            .collect(),
        Kind::Complex => words
            .chunks(2)
            .map(|c| {
                Scalar::Complex(
                    float(dtype.component(), c[0]),
                    float(dtype.component(), c[1]),
                )
            })
            .collect(),
        Kind::Extended => {
            let n = dtype.key_impl().unwrap().key_words;
            words
                .chunks(n)
                .map(|c| Scalar::KeyData(c.iter().map(|&w| w as u32).collect()))
                .collect()
        }
        _ => unreachable!(),
    }
}

/// Runs every case of a fixture file; returns (cases, failures as printable text).
fn check(name: &str, print: &Printer) -> (usize, Vec<String>) {
    let fixture = load(name);
    let cases = fixture["cases"].as_array().unwrap();
    let mut failures = Vec::new();
    for case in cases {
        let dtype: DType = case["dtype"].as_str().unwrap().parse().unwrap();
        let shape: Vec<usize> = case["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        let elements = decode(dtype, case["bits"].as_str().unwrap());
        assert_eq!(elements.len(), shape.iter().product::<usize>(), "{case}");
        let weak = case["weak_type"].as_bool().unwrap();
        let got = print(dtype, &shape, &elements, weak);
        let want = case["repr"].as_str().unwrap();
        if got != want {
            failures.push(format!(
                "{dtype} {shape:?} ({}):\n  want {want:?}\n  got  {got:?}",
                case["label"]
            ));
        }
    }
    (cases.len(), failures)
}

/// A printer: (dtype, shape, elements, weak_type) to text.
type Printer = dyn Fn(DType, &[usize], &[Scalar], bool) -> String;

fn jax(dtype: DType, shape: &[usize], elements: &[Scalar], weak: bool) -> String {
    jax_repr(dtype, shape, &|i| elements[i].clone(), weak)
}

fn numpy(dtype: DType, shape: &[usize], elements: &[Scalar], _weak: bool) -> String {
    numpy_repr(dtype, shape, &|i| elements[i].clone())
}

fn assert_all(name: &str, print: &Printer) {
    let (n, failures) = check(name, print);
    assert!(n > 500, "{name}: only {n} cases");
    assert!(
        failures.is_empty(),
        "{name}: {} of {n} cases differ; the first:\n{}",
        failures.len(),
        failures
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn jax_x32() {
    assert_all("jax_x32", &jax);
}

#[test]
fn jax_x64() {
    assert_all("jax_x64", &jax);
}

#[test]
fn numpy_arrays() {
    assert_all("numpy", &numpy);
}

#[test]
fn decoding_agrees_with_the_dtypes_formats() {
    // The largest finite value of every narrow float format decodes to its `max`.
    for &dtype in DType::NUMERIC {
        let Some(f) = dtype.float_format() else {
            continue;
        };
        if dtype.bits() > 8 || dtype.kind() != Kind::Float {
            continue;
        }
        let max = (0..1u64 << dtype.bits())
            .map(|b| float(dtype, b))
            .filter(|x| x.is_finite())
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(max, f.max, "{dtype}");
    }
}

/// An `Array` built from a case's bit patterns prints exactly JAX's repr: the printer hooked
/// to the array's own element decoding (`Display`).
#[test]
fn arrays_display_as_jax_repr() {
    use dtype_lattice_array::Array;
    for name in ["jax_x32", "jax_x64"] {
        let f = load(name);
        let mut n = 0;
        for case in f["cases"].as_array().unwrap() {
            let dtype: DType = case["dtype"].as_str().unwrap().parse().unwrap();
            let shape: Vec<usize> = case["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            let (width, _) = dtype_lattice_array::array::layout(dtype);
            // Each hex word is one stored word (complex: two words, one per component).
            let word_bytes = if dtype.kind() == Kind::Complex {
                width / 2
            } else {
                width
            };
            let bytes: Vec<u8> = case["bits"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .flat_map(|w| {
                    let v = u128::from_str_radix(w, 16).unwrap();
                    v.to_le_bytes()[..word_bytes].to_vec()
                })
                .collect();
            let a = Array::from_bytes(dtype, &shape, &bytes)
                .unwrap()
                .with_weak_type(case["weak_type"].as_bool().unwrap());
            assert_eq!(
                a.to_string(),
                case["repr"].as_str().unwrap(),
                "{name}: {case}"
            );
            n += 1;
        }
        eprintln!("{name}: {n} arrays display as JAX prints them");
    }
}
