//! Under `Rules::numpy()`, the functions of the ten ops (`add` … `bitwise_and`) give, on
//! NumPy's own dtypes and Python scalars, the dtype (or the refusal) NumPy 2.4.6 gives: every
//! case of `tests/fixtures/numpy/op_*.json` (`tools/gen_numpy_fixtures.py`), run on
//! zero-filled arrays of shape (2,), 0-d arrays `DTYPE(VALUE)` and the Python scalars written
//! there. The functions run the loop each ufunc's type resolver picks
//! (`dtype_lattice::ufunc::Ufunc::loop_for`): `true_divide` of integers in float64, `power`
//! of booleans in int8, Python ints checked against the loop's range but in comparisons.

use dtype_lattice::{DType, Op, Rules, Value};
use dtype_lattice_array::numpy::{self as jnp, ArrayLike, function};
use serde::Deserialize;

#[derive(Deserialize)]
struct ErrorCase {
    kind: String,
}

#[derive(Deserialize)]
struct Case {
    operands: Vec<String>,
    #[serde(default)]
    dtype: Option<String>,
    #[serde(default)]
    error: Option<ErrorCase>,
}

#[derive(Deserialize)]
struct Fixture {
    cases: Vec<Case>,
}

/// An operand as the fixture writes it: `DTYPE` (zeros of shape (2,)), `DTYPE(VALUE)` (0-d),
/// `int`/`float`/`complex` (0, 0.0, 0j) or a Python literal.
fn operand(s: &str) -> ArrayLike<'static> {
    let scalar = match s {
        "int" => Some(Value::Int(0)),
        "float" => Some(Value::Float(0.0)),
        "complex" => Some(Value::Complex(0.0, 0.0)),
        _ => None,
    };
    if let Some(v) = scalar {
        return ArrayLike::Scalar(v);
    }
    if let Ok(dtype) = s.parse::<DType>() {
        return ArrayLike::Owned(jnp::zeros(&[2], dtype).unwrap());
    }
    if let Some((name, rest)) = s.split_once('(')
        && let Ok(dtype) = name.parse::<DType>()
    {
        let v: Value = rest.trim_end_matches(')').parse().unwrap();
        return ArrayLike::Owned(jnp::array(&[v], &[], dtype).unwrap());
    }
    ArrayLike::Scalar(s.parse().unwrap())
}

#[test]
fn every_op_function_gives_numpys_dtype() {
    let mut failures = Vec::new();
    let mut n = 0;
    jnp::with_rules(Rules::numpy(), || {
        for op in Op::ALL {
            let name = op.name();
            let path = format!(
                "{}/../../tests/fixtures/numpy/op_{name}.json",
                env!("CARGO_MANIFEST_DIR")
            );
            let f: Fixture = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let func = function(name).unwrap_or_else(|| panic!("no eval function {name}"));
            for case in &f.cases {
                n += 1;
                let got = func.call(case.operands.iter().map(|o| operand(o)).collect());
                let ok = match (&got, &case.dtype, &case.error) {
                    (Ok(r), Some(d), None) => r.dtype().name() == d && !r.weak_type(),
                    (Err(e), None, Some(w)) => {
                        e.exception().map(|x| x.name()) == Some(w.kind.as_str())
                    }
                    _ => false,
                };
                if !ok {
                    failures.push(format!(
                        "{name} {:?}: got {:?}, want {:?} {:?}",
                        case.operands,
                        got.map(|r| r.dtype()),
                        case.dtype,
                        case.error.as_ref().map(|e| &e.kind)
                    ));
                }
            }
        }
    });
    assert!(n > 8_000, "{n} cases");
    assert!(
        failures.is_empty(),
        "{} of {n} cases disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A Python int beyond an integer array's range compares exactly with every element (NumPy 2's
/// comparisons; no `OverflowError`), either side of the operator; in arithmetic it still
/// does not fit the loop.
#[test]
fn comparisons_with_python_ints_beyond_the_range_are_exact() {
    let values: Vec<i16> = vec![i16::MIN, -5, 0, 7, i16::MAX];
    let x = dtype_lattice_array::Array::from_vec(values.clone());
    type Cmp = fn(i128, i128) -> bool;
    let ops: [(&str, Cmp); 6] = [
        ("equal", |a, b| a == b),
        ("not_equal", |a, b| a != b),
        ("less", |a, b| a < b),
        ("less_equal", |a, b| a <= b),
        ("greater", |a, b| a > b),
        ("greater_equal", |a, b| a >= b),
    ];
    jnp::with_rules(Rules::numpy(), || {
        for v in [-(1i128 << 40), -32769, 32768, 1 << 62] {
            for (name, cmp) in ops {
                let f = function(name).unwrap();
                let right = f
                    .call(vec![ArrayLike::Array(&x), ArrayLike::Scalar(Value::Int(v))])
                    .unwrap();
                let left = f
                    .call(vec![ArrayLike::Scalar(Value::Int(v)), ArrayLike::Array(&x)])
                    .unwrap();
                let want_right: Vec<bool> = values.iter().map(|&e| cmp(i128::from(e), v)).collect();
                let want_left: Vec<bool> = values.iter().map(|&e| cmp(v, i128::from(e))).collect();
                assert_eq!(right.to_vec::<bool>().unwrap(), want_right, "{name} x {v}");
                assert_eq!(left.to_vec::<bool>().unwrap(), want_left, "{name} {v} x");
            }
            let add = jnp::add(&x, ArrayLike::Scalar(Value::Int(v))).unwrap_err();
            assert_eq!(add.exception().map(|e| e.name()), Some("OverflowError"));
        }
    });
}

/// float32 arithmetic, comparisons, `maximum` and `minimum` keep subnormals under the NumPy
/// rules (the host's IEEE float32 arithmetic is the reference), where XLA's primitives flush
/// them.
#[test]
fn float32_loops_keep_subnormals() {
    use dtype_lattice_array::Array;
    let tiny = [
        f32::from_bits(1),
        f32::from_bits(0x0004_0003),
        -f32::from_bits(7),
        0.0,
        1e-30,
    ];
    let other = [
        f32::from_bits(2),
        -f32::from_bits(0x0004_0000),
        0.5,
        3.0,
        -1e-10,
    ];
    let (x, y) = (
        Array::from_vec(tiny.to_vec()),
        Array::from_vec(other.to_vec()),
    );
    type F = fn(f32, f32) -> f32;
    let ops: [(&str, F); 6] = [
        ("add", |a, b| a + b),
        ("subtract", |a, b| a - b),
        ("multiply", |a, b| a * b),
        ("true_divide", |a, b| a / b),
        ("maximum", |a, b| a.max(b)),
        ("minimum", |a, b| a.min(b)),
    ];
    let bits = |v: &[f32]| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
    jnp::with_rules(Rules::numpy(), || {
        for (name, op) in ops {
            let got = function(name)
                .unwrap()
                .call(vec![ArrayLike::Array(&x), ArrayLike::Array(&y)])
                .unwrap()
                .to_vec::<f32>()
                .unwrap();
            let want: Vec<f32> = tiny.iter().zip(&other).map(|(&a, &b)| op(a, b)).collect();
            assert_eq!(bits(&got), bits(&want), "{name}");
        }
        let ne = jnp::not_equal(&x, &y).unwrap().to_vec::<bool>().unwrap();
        let want: Vec<bool> = tiny.iter().zip(&other).map(|(a, b)| a != b).collect();
        assert_eq!(ne, want);
    });
}
