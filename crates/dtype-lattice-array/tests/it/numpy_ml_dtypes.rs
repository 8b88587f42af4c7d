//! Under `Rules::numpy()`, every `jax.numpy`-style function `eval` uses gives, on operands
//! with one of ml_dtypes' types, the dtype (or the refusal) of the loop NumPy 2.4.6 with
//! ml_dtypes 0.6.0 picks: every case of `tests/fixtures/numpy/ml_dtypes_ufunc_loops.json`
//! (`tools/gen_numpy_ml_dtypes_fixtures.py`), run on zero-filled arrays of shape (2,) and the
//! Python scalars 0, 0.0, 0j. (`tests/fixtures/eval/numpy_*.json` checks the values.)

use dtype_lattice::{DType, Rules, Value};
use dtype_lattice_array::numpy::{self as jnp, ArrayLike, function};
use serde::Deserialize;

#[derive(Deserialize)]
struct ErrorCase {
    kind: String,
}

#[derive(Deserialize)]
struct LoopCase {
    ufunc: String,
    operands: Vec<String>,
    #[serde(default, rename = "loop")]
    dtypes: Option<Vec<String>>,
    #[serde(default)]
    error: Option<ErrorCase>,
}

#[derive(Deserialize)]
struct LoopFixture {
    cases: Vec<LoopCase>,
}

/// The `eval` function that runs a ufunc, and its reduction over every axis.
fn eval_name(ufunc: &str) -> &str {
    match ufunc {
        "absolute" => "abs",
        "rint" => "round",
        "add.reduce" => "sum",
        "multiply.reduce" => "prod",
        "maximum.reduce" => "max",
        "minimum.reduce" => "min",
        "logical_and.reduce" => "all",
        "logical_or.reduce" => "any",
        other => other,
    }
}

fn operand(s: &str) -> ArrayLike<'static> {
    match s {
        "int" => ArrayLike::Scalar(Value::Int(0)),
        "float" => ArrayLike::Scalar(Value::Float(0.0)),
        "complex" => ArrayLike::Scalar(Value::Complex(0.0, 0.0)),
        name => {
            let dtype: DType = name.parse().unwrap();
            ArrayLike::Owned(jnp::zeros(&[2], dtype).unwrap())
        }
    }
}

#[test]
fn every_function_runs_numpys_loop() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/numpy/ml_dtypes_ufunc_loops.json"
    );
    let f: LoopFixture = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut failures = Vec::new();
    let mut n = 0;
    jnp::with_rules(Rules::numpy(), || {
        for case in &f.cases {
            let py = case
                .operands
                .iter()
                .any(|o| matches!(o.as_str(), "int" | "float" | "complex"));
            // matmul refuses a 0-d operand whatever its loop.
            if case.ufunc == "matmul" && py {
                continue;
            }
            n += 1;
            let func = function(eval_name(&case.ufunc))
                .unwrap_or_else(|| panic!("no eval function for {}", case.ufunc));
            let got = func.call(case.operands.iter().map(|o| operand(o)).collect());
            let ok = match (&got, &case.dtypes, &case.error) {
                (Ok(r), Some(l), None) => r.dtype().name() == l.last().unwrap(),
                (Err(e), None, Some(w)) => e.exception().map(|x| x.name()) == Some(w.kind.as_str()),
                _ => false,
            };
            if !ok {
                failures.push(format!(
                    "{} {:?}: got {:?}, want {:?}",
                    case.ufunc,
                    case.operands,
                    got.map(|r| r.dtype()),
                    case.dtypes.as_ref().map(|l| l.last().cloned())
                ));
            }
        }
    });
    assert!(n > 27_000, "{n} cases");
    assert!(
        failures.is_empty(),
        "{} of {n} cases disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
