//! The dtype model against NumPy / ml_dtypes (`tests/fixtures/dtypes.json`, written by
//! `tools/gen_jax_fixtures.py`), and value rounding against the `half` crate.

use crate::common;

use dtype_lattice::{DType, Kind, Value};
use proptest::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct Row {
    name: String,
    category: String,
    bits: u32,
    iinfo: Option<IInfo>,
    finfo: Option<FInfo>,
    has_inf: bool,
    has_nan: bool,
}

#[derive(Deserialize)]
struct IInfo {
    min: i128,
    max: i128,
}

#[derive(Deserialize)]
struct FInfo {
    bits: u32,
    nmant: u32,
    nexp: u32,
    max: f64,
    min: f64,
    smallest_normal: f64,
    smallest_subnormal: f64,
    eps: f64,
}

#[derive(Deserialize)]
struct Fixture {
    dtypes: Vec<Row>,
}

#[test]
fn every_dtype_matches_numpy_and_ml_dtypes() {
    let text = std::fs::read_to_string(common::fixture_path("dtypes.json")).unwrap();
    let fixture: Fixture = serde_json::from_str(&text).unwrap();
    assert_eq!(fixture.dtypes.len(), 32);
    for row in &fixture.dtypes {
        let d: DType = row.name.parse().unwrap();
        assert_eq!(d.name(), row.name);
        let kind = match row.category.as_str() {
            "bool" => Kind::Bool,
            "uint" => Kind::UnsignedInt,
            "int" => Kind::SignedInt,
            "float" => Kind::Float,
            "complex" => Kind::Complex,
            other => panic!("{other}"),
        };
        assert_eq!(d.kind(), kind, "{d}");
        assert_eq!(d.bits(), row.bits, "{d}");
        if let Some(i) = &row.iinfo {
            assert_eq!(d.int_range(), Some((i.min, i.max)), "{d}");
        }
        match (&row.finfo, d.float_format()) {
            (Some(f), Some(m)) => {
                assert_eq!(d.component().bits(), f.bits, "{d}");
                assert_eq!((m.mantissa_bits, m.exponent_bits), (f.nmant, f.nexp), "{d}");
                // The fixture's floats went through single-precision finfo and repr; allow an
                // ulp or two (e.g. bfloat16's smallest subnormal is 2^-133 exactly).
                let close = |a: f64, b: f64| a == b || ((a - b) / b).abs() < 1e-15;
                assert!(close(m.max, f.max), "{d}: max {} vs {}", m.max, f.max);
                assert!(close(m.min(), f.min), "{d}: min {} vs {}", m.min(), f.min);
                assert!(
                    close(m.smallest_normal(), f.smallest_normal),
                    "{d}: smallest normal"
                );
                assert!(
                    close(m.smallest_subnormal(), f.smallest_subnormal),
                    "{d}: subnormal"
                );
                assert!(close(m.eps(), f.eps), "{d}: eps");
                assert_eq!((m.has_inf, m.has_nan), (row.has_inf, row.has_nan), "{d}");
            }
            (None, None) => {}
            _ => panic!("{d}: float format disagrees"),
        }
    }
}

fn cast(d: DType, x: f64) -> f64 {
    match Value::Float(x).cast(d).unwrap() {
        Value::Float(y) => y,
        other => panic!("{other:?}"),
    }
}

fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

proptest! {
    /// The generic rounding (any mantissa/exponent format) equals `half`'s IEEE conversions
    /// from single precision. (From double precision `half` may round twice, through f32:
    /// -2.074241521768272e-3 becomes -0.0020751953125 there, while NumPy and this crate give
    /// -0.0020732879638671875, the nearest float16.)
    #[test]
    fn rounding_agrees_with_half(bits in any::<u32>()) {
        let x32 = f32::from_bits(bits);
        let x = x32 as f64;
        prop_assert!(same(cast(DType::Float16, x), half::f16::from_f32(x32).to_f64()), "{x:e}");
        prop_assert!(same(cast(DType::BFloat16, x), half::bf16::from_f32(x32).to_f64()), "{x:e}");
        prop_assert!(same(cast(DType::Float32, x), x), "{x:e}");
    }

    #[test]
    fn rounding_to_f32_agrees_with_the_hardware(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assert!(same(cast(DType::Float32, x), x as f32 as f64), "{x:e}");
    }

    #[test]
    fn rounding_agrees_with_half_near_the_half_range(x in -70000.0f64..70000.0, scale in -30i32..5) {
        let x = x * 2f64.powi(scale);
        prop_assert!(same(cast(DType::Float16, x), half::f16::from_f32(x as f32).to_f64()) || x as f32 as f64 != x, "{x:e}");
    }
}

/// NumPy-style type codes never read otherwise than NumPy reads them
/// (`tests/fixtures/numpy/dtype_codes.json`, from `tools/gen_numpy_dtype_codes.py`): a code
/// that parses is the dtype NumPy reads; one NumPy maps elsewhere (`f16` is float128) or refuses (`c64`) is refused,
/// but for the model's spellings of ml_dtypes' types, which have no NumPy type code (`c4`
/// complex32, `bf16` bfloat16).
#[test]
fn type_codes_follow_numpy() {
    #[derive(serde::Deserialize)]
    struct Case {
        code: String,
        dtype: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct File {
        cases: Vec<Case>,
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/numpy/dtype_codes.json"
    );
    let f: File = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut own = Vec::new();
    for c in &f.cases {
        let ours = c.code.parse::<DType>();
        let numpy = c
            .dtype
            .as_deref()
            .and_then(|n| DType::ALL.iter().find(|d| d.name() == n));
        match (numpy, &ours) {
            (Some(&d), Ok(got)) => assert_eq!(*got, d, "{}", c.code),
            // Not every NumPy spelling is accepted (`b` is int8 to NumPy): never misread.
            (Some(_), Err(_)) | (None, Err(_)) => {}
            (None, Ok(got)) => {
                assert!(
                    c.dtype.is_none() && matches!(got, DType::Complex32 | DType::BFloat16),
                    "{}: NumPy reads {:?}, we read {got}",
                    c.code,
                    c.dtype
                );
                own.push(c.code.as_str());
            }
        }
    }
    assert_eq!(own, ["c4", "bf16", "bf"], "spellings of dtypes NumPy lacks");
    let e = "f16".parse::<DType>().unwrap_err();
    assert!(e.message().contains("float128"), "{e}");
}
