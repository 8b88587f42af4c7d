//! jax.random conformance: every case of tests/fixtures/jax/random_{x32,x64}.json (written by
//! tools/gen_jax_random_fixtures.py from real JAX 0.10.2) through the library. Keys, bits,
//! uniform, randint and bernoulli must agree bit for bit; normal to 1e-6 relative (XLA's
//! erf_inv); errors by JAX's exception class and message, except where JAX fails inside XLA
//! (MLIRError for a negative dimension, KeyError for int4) and this crate refuses clearly.

use crate::common;

use dtype_lattice::{DType, Error};
use dtype_lattice_array::random::{Key, KeyArray, Random};
use serde_json::Value;

fn load(mode: &str) -> Value {
    let path = common::fixture_path(&format!("jax/random_{mode}.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn key_of(case: &Value) -> Key {
    let d: Vec<u32> = serde_json::from_value(case["key"].clone()).unwrap();
    Key::from_data([d[0], d[1]])
}

fn lit_i(case: &Value, field: &str) -> i128 {
    case[field].as_str().unwrap().parse().unwrap()
}

fn lit_f(case: &Value, field: &str, default: f64) -> f64 {
    match case[field].as_str() {
        None => default,
        Some("nan") => f64::NAN,
        Some(s) => s.parse().unwrap(),
    }
}

/// The shape, or `None` when it has a negative dimension (not representable as `usize`).
fn shape_of(case: &Value) -> Option<Vec<usize>> {
    case["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().map(|d| d as usize))
        .collect()
}

fn dtype_of(case: &Value) -> DType {
    case["dtype"].as_str().unwrap().parse().unwrap()
}

fn run(rng: Random, case: &Value) -> Option<Result<Value, Error>> {
    let op = case["op"].as_str().unwrap();
    let json = |r: Result<Value, Error>| Some(r);
    let to = |v: &dyn erased::Ser| serde_json::from_str::<Value>(&v.json()).unwrap();
    let shape = match case.get("shape") {
        Some(_) => shape_of(case)?,
        None => Vec::new(),
    };
    match op {
        "key" => json(rng.key(lit_i(case, "seed")).map(|k| to(&k.to_array()))),
        "split" => json(rng.split(&key_of(case), &shape).map(|k| to(&k))),
        "fold_in" => json(
            rng.fold_in(&key_of(case), lit_i(case, "data"))
                .map(|k| to(&k.to_array())),
        ),
        "wrap_key_data" => {
            let d: Vec<u32> = serde_json::from_value(case["key"].clone()).unwrap();
            json(KeyArray::wrap_key_data(DType::KeyThreefry2x32, &[d.len()], d).map(|k| to(&k)))
        }
        "bits" => {
            let width = case["width"].as_u64().unwrap() as u32;
            json(rng.bits(&key_of(case), &shape, width).map(|s| to(&s)))
        }
        "uniform" => json(
            rng.uniform(
                &key_of(case),
                &shape,
                dtype_of(case),
                lit_f(case, "minval", 0.0),
                lit_f(case, "maxval", 1.0),
            )
            .map(|s| to(&s)),
        ),
        "normal" => json(
            rng.normal(&key_of(case), &shape, dtype_of(case))
                .map(|s| to(&s)),
        ),
        "randint" => json(
            rng.randint(
                &key_of(case),
                &shape,
                lit_i(case, "minval"),
                lit_i(case, "maxval"),
                dtype_of(case),
            )
            .map(|s| to(&s)),
        ),
        "bernoulli" => json(
            rng.bernoulli(&key_of(case), &shape, lit_f(case, "p", 0.5))
                .map(|s| to(&s)),
        ),
        "chain" => {
            let result = (|| {
                let mut k = rng.key(lit_i(case, "seed"))?;
                for step in case["steps"].as_array().unwrap() {
                    let parts: Vec<&str> = step.as_str().unwrap().split(':').collect();
                    k = match parts[0] {
                        "split" => {
                            let shape: Vec<usize> =
                                parts[1].split(',').map(|d| d.parse().unwrap()).collect();
                            rng.split(&k, &shape)?.key(parts[2].parse().unwrap())?
                        }
                        _ => rng.fold_in(&k, parts[1].parse().unwrap())?,
                    };
                }
                Ok(to(&k.to_array()))
            })();
            json(result)
        }
        other => panic!("unknown op {other}"),
    }
}

/// Serialisation to JSON text for any of the library's serialisable results.
mod erased {
    pub trait Ser {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap()
        }
    }
}

/// JAX raises these from inside XLA or from an internal table; this crate refuses clearly.
const CLEAR_ERROR_INSTEAD: &[&str] = &["MLIRError", "KeyError"];

fn close(a: f64, b: f64, rel: f64) -> bool {
    a == b || (a - b).abs() <= rel * a.abs().max(b.abs())
}

fn check_mode(mode: &str, x64: bool) {
    let fixture = load(mode);
    assert_eq!(fixture["mode"]["x64"], x64);
    let rng = Random::new().x64(x64);
    let (mut exact, mut normal_values, mut normal_bit_exact, mut errors) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for case in fixture["cases"].as_array().unwrap() {
        let op = case["op"].as_str().unwrap();
        if op == "sample" {
            let key = key_of(case);
            let n = shape_of(case).unwrap();
            let s = rng.bits(&key, &n, 32).unwrap();
            let json: Value = serde_json::to_value(&s).unwrap();
            let values = json["values"].as_array().unwrap();
            for (i, v) in case["indices"]
                .as_array()
                .unwrap()
                .iter()
                .zip(case["values"].as_array().unwrap())
            {
                assert_eq!(&values[i.as_u64().unwrap() as usize], v, "sample at {i}");
            }
            let xor = values.iter().fold(0u64, |a, v| a ^ v.as_u64().unwrap());
            assert_eq!(
                xor,
                case["xor_all"].as_u64().unwrap(),
                "xor of all 2^20 bits"
            );
            exact += 1;
            continue;
        }
        let got = run(rng, case);
        match (got, case.get("out"), case.get("error")) {
            (None, None, Some(_)) => errors += 1, // negative dimension: not a usize
            (Some(Ok(got)), Some(want), None) if op == "normal" => {
                let ok = got["dtype"] == want["dtype"]
                    && got["shape"] == want["shape"]
                    && got["values"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .zip(want["values"].as_array().unwrap())
                        .all(|(a, b)| close(a.as_f64().unwrap(), b.as_f64().unwrap(), 1e-6));
                let bits = got["bits"].as_array().unwrap();
                // float16 and bfloat16 normals are bit-exact (XLA computes them in float32 and
                // rounds); float32 and float64 only within 1e-6.
                let ok = ok
                    && (!matches!(want["dtype"].as_str(), Some("float16" | "bfloat16"))
                        || got["bits"] == want["bits"]);
                normal_values += bits.len();
                normal_bit_exact += bits
                    .iter()
                    .zip(want["bits"].as_array().unwrap())
                    .filter(|(a, b)| a == b)
                    .count();
                if !ok {
                    failures.push(format!("{case}\n  got {got}"));
                }
            }
            (Some(Ok(got)), Some(want), None) => {
                if &got == want {
                    exact += 1;
                } else {
                    failures.push(format!("{case}\n  got {got}"));
                }
            }
            (Some(Err(e)), None, Some(want)) => {
                let kind = want["kind"].as_str().unwrap();
                if CLEAR_ERROR_INSTEAD.contains(&kind)
                    || (common::class(&e) == kind
                        && e.message() == want["message"].as_str().unwrap())
                {
                    errors += 1;
                } else {
                    failures.push(format!(
                        "{case}\n  got {}: {}",
                        common::class(&e),
                        e.message()
                    ));
                }
            }
            (got, _, _) => failures.push(format!("{case}\n  got {got:?}")),
        }
    }
    eprintln!(
        "{mode}: {exact} cases bit-exact, {errors} errors as JAX's, normal: \
         {normal_bit_exact}/{normal_values} values bit-exact (all within 1e-6)"
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        fixture["cases"].as_array().unwrap().len(),
        failures[..failures.len().min(15)].join("\n")
    );
}

#[test]
fn jax_random_x32() {
    check_mode("x32", false);
}

#[test]
fn jax_random_x64() {
    check_mode("x64", true);
}
