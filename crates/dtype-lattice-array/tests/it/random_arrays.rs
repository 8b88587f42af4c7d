//! The PRNG on arrays against JAX 0.10.2: every case of tests/fixtures/random_arrays/
//! (tools/gen_random_arrays_fixtures.py), x64 off and on — `jax.random`'s functions on key
//! arrays (`random::key`, `split`, `fold_in`, `bits`, the samplers, `key_data`,
//! `wrap_key_data`, raw `uint32` keys and refusals included) and the PRNG primitives bound
//! directly (batched keys, broadcasting `random_fold_in`, seeds of every integer dtype), their
//! equations as jaxprs print them, output avals, key data bytes, values bytes and the reprs of
//! key arrays, bit for bit.

use crate::common;

use dtype_lattice::key::THREEFRY2X32;
use dtype_lattice::{DType, Error, Rules};
use dtype_lattice_array::array::jaxpr_dtype_name;
use dtype_lattice_array::core::{self, Param, Params};
use dtype_lattice_array::registry;
use dtype_lattice_array::{Array, numpy, random};
use serde_json::Value;

pub(crate) fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `u32[2,3]` → (uint32, [2, 3]).
pub(crate) fn parse_aval(s: &str) -> (DType, Vec<usize>) {
    let (name, dims) = s.split_once('[').unwrap();
    let dims = dims.trim_end_matches(']');
    let shape = if dims.is_empty() {
        vec![]
    } else {
        dims.split(',').map(|d| d.parse().unwrap()).collect()
    };
    let dtype = DType::NUMERIC
        .iter()
        .chain(DType::EXTENDED)
        .copied()
        .find(|&d| jaxpr_dtype_name(d) == name)
        .unwrap_or_else(|| panic!("dtype {name}"));
    (dtype, shape)
}

pub(crate) fn array(v: &Value) -> Array {
    let (dtype, shape) = parse_aval(v["aval"].as_str().unwrap());
    Array::from_bytes(dtype, &shape, &unhex(v["hex"].as_str().unwrap())).unwrap()
}

pub(crate) fn lit(v: &Value) -> String {
    v.as_str().unwrap().to_string()
}

pub(crate) fn shape(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

pub(crate) fn dtype(v: &Value) -> DType {
    v.as_str().unwrap().parse().unwrap()
}

/// Compares a result with the case's "out" or "error"; a description of any difference.
pub(crate) fn compare(case: &Value, got: Result<Array, Error>) -> Option<String> {
    match (got, case.get("out"), case.get("error")) {
        (Ok(a), Some(out), _) => {
            let mut diffs = vec![];
            if a.aval().to_string() != out["aval"].as_str().unwrap() {
                diffs.push(format!("aval {} != {}", a.aval(), out["aval"]));
            }
            if hex(a.as_bytes()) != out["hex"].as_str().unwrap() {
                diffs.push(format!("bytes {} != {}", hex(a.as_bytes()), out["hex"]));
            }
            if let Some(r) = out.get("repr")
                && a.to_string() != r.as_str().unwrap()
            {
                diffs.push(format!("repr {:?} != {r}", a.to_string()));
            }
            (!diffs.is_empty()).then(|| diffs.join("; "))
        }
        (Err(e), _, Some(err)) => {
            let (kind, msg) = (common::class(&e), e.message());
            (kind != err["kind"] || msg != err["message"].as_str().unwrap())
                .then(|| format!("error {kind}: {msg} != {err}"))
        }
        (Ok(a), None, Some(err)) => Some(format!("{a} but JAX: {err}")),
        (Err(e), Some(_), _) => Some(format!("error {}: {}", common::class(&e), e.message())),
        _ => Some("malformed case".into()),
    }
}

/// [`compare`], but float32 and float64 `normal` values within 1e-6 relative, as
/// tests/it/random_conformance.rs (XLA's erf_inv polynomial for float64 is not reproduced
/// bit for bit; float32's differs from XLA's `log1p` in 1% of values by an ulp).
pub(crate) fn compare_normal(c: &Value, got: Result<Array, Error>) -> Option<String> {
    match (&got, c["fn"].as_str(), c.get("out")) {
        (Ok(a), Some("normal"), Some(out))
            if matches!(a.dtype(), DType::Float32 | DType::Float64) =>
        {
            close(a, out, 1e-6)
        }
        _ => compare(c, got),
    }
}

/// Whether `a` has the aval of `out` and values within `rel` relative of its values.
pub(crate) fn close(a: &Array, out: &Value, rel: f64) -> Option<String> {
    let want = Array::from_bytes(a.dtype(), a.shape(), &unhex(out["hex"].as_str().unwrap()));
    let Ok(want) = want else {
        return Some(format!("aval {} != {}", a.aval(), out["aval"]));
    };
    let f64s = |x: &Array| x.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
    let (g, w) = (f64s(a), f64s(&want));
    let near = g
        .iter()
        .zip(&w)
        .all(|(x, y)| (x - y).abs() <= rel * y.abs().max(1e-30));
    (a.aval().to_string() != out["aval"].as_str().unwrap() || !near)
        .then(|| format!("{g:?} != {w:?}"))
}

fn api_case(case: &Value) -> Result<Array, Error> {
    let key = || array(&case["key"]);
    let int = |name: &str| lit(&case[name]).parse::<i128>().unwrap();
    let float = |name: &str| lit(&case[name]).parse::<f64>().unwrap();
    match case["fn"].as_str().unwrap() {
        "key" => random::key(int("seed")),
        "split" => {
            let s = shape(&case["shape"]);
            if s.len() == 1 {
                random::split(&key(), s[0])
            } else {
                random::split_shape(&key(), &s)
            }
        }
        "fold_in" => random::fold_in(&key(), int("data")),
        "fold_in_array" => random::fold_in_array(&key(), &array(&case["data"])),
        "bits" => match &case["dtype"] {
            Value::Null => random::bits(&key(), &shape(&case["shape"])),
            d => random::bits_dtype(&key(), &shape(&case["shape"]), dtype(d)),
        },
        "uniform" => random::uniform(
            &key(),
            &shape(&case["shape"]),
            dtype(&case["dtype"]),
            float("minval"),
            float("maxval"),
        ),
        "normal" => random::normal(&key(), &shape(&case["shape"]), dtype(&case["dtype"])),
        "bernoulli" => random::bernoulli(&key(), float("p"), &shape(&case["shape"])),
        "randint" => random::randint(
            &key(),
            &shape(&case["shape"]),
            int("minval"),
            int("maxval"),
            dtype(&case["dtype"]),
        ),
        "key_data" => random::key_data(&key()),
        "wrap_key_data" => random::wrap_key_data(&array(&case["data"]), DType::KeyThreefry2x32),
        other => panic!("unknown fn {other}"),
    }
}

fn prim_params(case: &Value) -> Params {
    let ints = |v: &Value| Param::Ints(shape(v).into_iter().map(|d| d as i64).collect());
    match case["prim"].as_str().unwrap() {
        "random_seed" | "random_wrap" => Params::new().with("impl", Param::KeyImpl(&THREEFRY2X32)),
        "random_split" => Params::new().with("shape", ints(&case["shape"])),
        "random_bits" => Params::new()
            .with("bit_width", Param::Int(case["bit_width"].as_i64().unwrap()))
            .with("shape", ints(&case["shape"])),
        _ => Params::new(),
    }
}

fn run_file(rel: &str, x64: bool, f: impl Fn(&Value) -> Option<String>) -> usize {
    let path = common::fixture_path(rel);
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(fixture["mode"]["x64"], x64);
    let cases = fixture["cases"].as_array().unwrap();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| f(c).map(|d| format!("{c}\n  -> {d}")))
        .collect();
    common::assert_all_agree(rel, cases.len(), &failures);
    cases.len()
}

#[test]
fn api_and_primitives_agree_with_jax() {
    for x64 in [false, true] {
        numpy::with_rules(Rules::jax().x64(x64), || {
            let mode = if x64 { "x64" } else { "x32" };
            let n = run_file(&format!("random_arrays/api_{mode}.json"), x64, |c| {
                let got = api_case(c);
                compare_normal(c, got)
            });
            assert!(n > 100);
            let n = run_file(&format!("random_arrays/prims_{mode}.json"), x64, |case| {
                let p = registry::by_name(case["prim"].as_str().unwrap()).unwrap();
                let params = prim_params(case);
                let operands: Vec<Array> = case["operands"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(array)
                    .collect();
                let refs: Vec<&Array> = operands.iter().collect();
                let got = core::bind(p, &refs, &params).map(|mut v| v.remove(0));
                let mut diff = compare(case, got);
                if let Some(eqn) = case["eqn"].as_str()
                    && case.get("out").is_some()
                {
                    let ours = format!("{}{params}", p.name);
                    if ours != eqn {
                        diff = Some(format!("eqn {ours} != {eqn}; {}", diff.unwrap_or_default()));
                    }
                }
                diff
            });
            assert!(n > 30);
        });
    }
}

#[test]
fn key_arrays_print_as_jax_prints_them() {
    let k = random::key(42).unwrap();
    assert_eq!(
        k.to_string(),
        "Array((), dtype=key<fry>) overlaying:\n[ 0 42]"
    );
    assert_eq!(k.aval().to_string(), "key<fry>[]");
}

#[test]
fn the_struct_api_and_the_array_api_agree() {
    let rng = random::Random::new();
    for seed in [0i128, 1, -7, 1 << 40] {
        let (k, key) = (rng.key(seed).unwrap(), random::key(seed).unwrap());
        let data = random::key_data(&key).unwrap().to_vec::<u32>().unwrap();
        assert_eq!(data, k.data());
        let ks = rng.split(&k, &[2, 2]).unwrap();
        let keys = random::split_shape(&key, &[2, 2]).unwrap();
        assert_eq!(
            random::key_data(&keys).unwrap().to_vec::<u32>().unwrap(),
            ks.key_data()
        );
        let u = rng
            .uniform(&k, &[7], DType::BFloat16, -1.0, 1.0)
            .unwrap()
            .values()
            .clone();
        let v = random::uniform(&key, &[7], DType::BFloat16, -1.0, 1.0).unwrap();
        assert_eq!(random::Values::BF16(v.to_vec().unwrap()), u);
    }
}

#[test]
fn numpy_refuses_key_arithmetic_as_jax_does() {
    // The expressions the numpy module has functions for: JAX's class and message exactly;
    // `key == key` is not arithmetic (JAX compares keys), and the module's answer is not
    // checked here.
    let path = common::fixture_path("random_arrays/numpy_refusals_x32.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let k = random::key(0).unwrap();
    let mut checked = 0;
    for case in fixture["cases"].as_array().unwrap() {
        let got = match case["expr"].as_str().unwrap() {
            "key + 1" | "jnp.add(key, 1)" => numpy::add(&k, 1),
            "1 + key" => numpy::add(1, &k),
            "key + 1.0" => numpy::add(&k, 1.0),
            "key + key" => numpy::add(&k, &k),
            "key - key" => numpy::subtract(&k, &k),
            "key * key" => numpy::multiply(&k, &k),
            "key < key" => numpy::less(&k, &k),
            _ => continue,
        };
        checked += 1;
        assert_eq!(compare(case, got), None, "{case}");
    }
    assert_eq!(checked, 8);
}
