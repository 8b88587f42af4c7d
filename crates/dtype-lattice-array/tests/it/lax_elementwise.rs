//! The elementwise primitives against real JAX 0.10.2 on CPU (x64 on): every case of
//! tests/fixtures/lax_elementwise/*.json (tools/gen_lax_elementwise_fixtures.py) through
//! `core::bind`, over every dtype XLA's CPU backend holds:
//!
//! - refusals: the exception class and the first line of JAX's message;
//! - output avals: dtype, shape, weak type (strong operands, and all operands weak);
//! - values: bit for bit (NaNs included) for everything but the transcendental functions,
//!   which are within [`MAX_ULP`] units in the last place of the output format (NaN where JAX
//!   gives NaN); the largest difference per primitive is printed (`--nocapture`).
//!
//! [`KNOWN`] lists the (primitive, dtype) pairs whose values still differ from JAX somewhere
//! (complex transcendentals and products at infinities and by a few ulps, float8_e8m0fnu's
//! arithmetic, XLA's own float32/float64 approximations beyond [`MAX_ULP`] for some inputs,
//! subnormal handling of a few functions): their differences are printed, not failed; any other
//! pair that differs fails the test, and so does a listed pair that no longer differs (remove
//! it from the list).

use std::collections::BTreeMap;
use std::path::PathBuf;

use dtype_lattice::DType;
use dtype_lattice_array::Array;
use dtype_lattice_array::convert::{decode_f64, element_size, minifloat::Layout};
use dtype_lattice_array::core::{self, Param, Params};
use dtype_lattice_array::registry;
use serde_json::Value;

/// The largest difference allowed for the transcendental functions, in units in the last
/// place of the output format.
const MAX_ULP: u64 = 2;

/// The primitives whose values are compared within [`MAX_ULP`] (XLA's own approximations).
const APPROX: &[&str] = &[
    "exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "logistic", "asin",
    "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "erf",
    "erfc", "erf_inv", "pow", "atan2",
];

/// The (primitive, dtypes) whose values are known to differ from JAX (see the module doc).
const KNOWN: &[(&str, &[&str])] = &[
    ("abs", &["complex64"]),
    ("acos", &["complex128", "complex64", "float4_e2m1fn"]),
    ("acosh", &["complex128", "complex64", "float64"]),
    ("asin", &["complex128", "complex64"]),
    (
        "asinh",
        &["complex128", "complex64", "float64", "float8_e8m0fnu"],
    ),
    ("atan", &["complex128", "complex64"]),
    ("atan2", &["complex128", "complex64"]),
    (
        "atanh",
        &["complex128", "complex64", "float64", "float8_e8m0fnu"],
    ),
    ("cbrt", &["bfloat16", "float32"]),
    ("clamp", &["bfloat16", "complex128", "complex64"]),
    ("cos", &["complex128", "complex64"]),
    ("cosh", &["complex128", "complex64"]),
    ("div", &["complex128", "complex64"]),
    ("erf", &["float32", "float64"]),
    ("erf_inv", &["float64"]),
    ("erfc", &["float32", "float64"]),
    ("exp", &["complex128", "complex64"]),
    ("exp2", &["complex128", "complex64"]),
    ("expm1", &["float32", "float64"]),
    ("integer_pow", &["complex128", "complex64"]),
    ("log", &["complex128"]),
    ("log1p", &["complex128"]),
    (
        "logistic",
        &[
            "complex128",
            "complex64",
            "float16",
            "float8_e3m4",
            "float8_e4m3b11fnuz",
            "float8_e4m3fn",
            "float8_e4m3fnuz",
            "float8_e5m2fnuz",
            "float8_e8m0fnu",
        ],
    ),
    ("mul", &["complex128", "complex64"]),
    ("nextafter", &["float8_e8m0fnu"]),
    ("rsqrt", &["complex128", "complex64"]),
    ("sign", &["complex64"]),
    ("sin", &["complex64"]),
    ("sinh", &["complex128", "complex64", "float32"]),
    ("sqrt", &["complex128", "complex64"]),
];

fn known(prim: &str, dtype: &str) -> bool {
    KNOWN
        .iter()
        .any(|(p, ds)| *p == prim && ds.contains(&dtype))
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/lax_elementwise")
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn dtype(name: &str) -> DType {
    name.parse().unwrap_or_else(|_| panic!("dtype {name}"))
}

fn param(v: &Value) -> Param {
    match v {
        Value::Null => Param::None,
        Value::Bool(b) => Param::Bool(*b),
        Value::Number(n) => Param::Int(n.as_i64().unwrap()),
        Value::String(s) => Param::DType(dtype(s)),
        other => panic!("param {other}"),
    }
}

fn params(case: &Value) -> Params {
    let mut p = Params::new();
    for kv in case["params"].as_array().unwrap() {
        let name: &'static str = Box::leak(kv[0].as_str().unwrap().to_string().into_boxed_str());
        p = p.with(name, param(&kv[1]));
    }
    p
}

/// An input profile's array: `x`, `y`, `lo`, `hi`, `shift` of the case's dtype, `pred2`
/// (bool), `pred3` (int32); `s:NAME` its first element as a scalar.
fn input(inputs: &Value, case_dtype: &str, arg: &str) -> Array {
    let (scalar, name) = match arg.strip_prefix("s:") {
        Some(n) => (true, n),
        None => (false, arg),
    };
    let d = match name {
        "pred2" => DType::Bool,
        "pred3" => DType::Int32,
        _ => dtype(case_dtype),
    };
    let bytes = unhex(inputs[case_dtype][name].as_str().unwrap());
    let size = element_size(d).unwrap();
    if scalar {
        Array::from_bytes(d, &[], &bytes[..size]).unwrap()
    } else {
        Array::from_bytes(d, &[bytes.len() / size], &bytes).unwrap()
    }
}

/// The position of a float code on the number line (units in the last place from zero).
fn rank(l: &Layout, code: u64) -> i64 {
    let mag = (code & l.mag_mask()) as i64;
    if l.signed && code & l.sign_bit() != 0 {
        -mag
    } else {
        mag
    }
}

/// The difference in ulps of two elements of `d` (per component for complex); `None` when one
/// is NaN and the other is not.
fn ulps(d: DType, a: &[u8], b: &[u8]) -> Option<u64> {
    if d.kind() == dtype_lattice::Kind::Complex {
        let h = a.len() / 2;
        let c = d.component();
        return Some(ulps(c, &a[..h], &b[..h])?.max(ulps(c, &a[h..], &b[h..])?));
    }
    let Some(fmt) = d.float_format() else {
        return (a == b).then_some(0).or(Some(u64::MAX));
    };
    let l = Layout::new(fmt);
    let (na, nb) = (
        decode_f64(d, a).unwrap().is_nan(),
        decode_f64(d, b).unwrap().is_nan(),
    );
    if na || nb {
        return (na && nb).then_some(0);
    }
    let word = |x: &[u8]| {
        let mut w = [0u8; 8];
        w[..x.len()].copy_from_slice(x);
        u64::from_le_bytes(w)
    };
    Some(rank(&l, word(a)).abs_diff(rank(&l, word(b))))
}

#[derive(Default)]
struct Tally {
    cases: usize,
    failures: Vec<String>,
    /// Differences of the [`KNOWN`] pairs, and the pairs that showed one.
    known: Vec<String>,
    known_seen: std::collections::BTreeSet<(String, String)>,
    /// Largest ulp difference per (primitive, dtype) of the approximate primitives.
    max_ulp: BTreeMap<(String, String), u64>,
}

fn check_case(inputs: &Value, case: &Value, t: &mut Tally) {
    t.cases += 1;
    let name = case["prim"].as_str().unwrap();
    let dt = case["dtype"].as_str().unwrap();
    let label = format!("{name}{:?} {dt} {}", case["params"], case["args"]);
    if std::env::var("TRACE").is_ok() {
        eprintln!("{label}");
    }
    let Some(p) = registry::by_name(name) else {
        t.failures.push(format!("{label}: no primitive {name}"));
        return;
    };
    let args: Vec<Array> = case["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| input(inputs, dt, a.as_str().unwrap()))
        .collect();
    let refs: Vec<&Array> = args.iter().collect();
    let params = params(case);
    let got = core::bind(p, &refs, &params);
    if let Some(err) = case.get("error") {
        let (kind, msg) = (
            err["kind"].as_str().unwrap(),
            err["message"].as_str().unwrap(),
        );
        match got {
            Ok(_) if kind == "JaxRuntimeError" => {} // XLA cannot compile it; we compute it
            Ok(_) => t
                .failures
                .push(format!("{label}: computed, JAX refuses {kind}: {msg}")),
            Err(e) => {
                let ours = e.exception().map_or("none", |x| x.name());
                let text = e.to_string();
                let first = text.lines().next().unwrap_or("");
                if kind == "JaxRuntimeError" {
                    if ours != "NotImplementedError" {
                        t.failures
                            .push(format!("{label}: {ours}: {first} (XLA: {msg})"));
                    }
                } else if ours != kind || !first.ends_with(msg) {
                    t.failures
                        .push(format!("{label}: {ours}: {first}\n   JAX {kind}: {msg}"));
                }
            }
        }
        return;
    }
    let out = &case["out"];
    let y = match got {
        Ok(v) => v.into_iter().next().unwrap(),
        Err(e) => {
            if known(name, dt) && e.exception().map(|x| x.name()) == Some("NotImplementedError") {
                t.known.push(format!("{label}: not implemented"));
                t.known_seen.insert((name.to_string(), dt.to_string()));
            } else {
                t.failures.push(format!("{label}: refused {e}"));
            }
            return;
        }
    };
    let want_dtype = dtype(out["dtype"].as_str().unwrap());
    let want_shape: Vec<usize> = out["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    let want_weak = out["weak_type"].as_bool().unwrap();
    if y.dtype() != want_dtype || y.shape() != want_shape || y.weak_type() != want_weak {
        t.failures.push(format!(
            "{label}: aval {} weak={} want {want_dtype}{want_shape:?} weak={want_weak}",
            y.aval(),
            y.weak_type()
        ));
        return;
    }
    if let Some(w) = case.get("weak") {
        let weak: Vec<Array> = args.iter().map(|a| a.with_weak_type(true)).collect();
        let avals: Vec<_> = weak.iter().map(|a| a.aval()).collect();
        match (p.abstract_eval(&avals, &params), w.get("dtype")) {
            (Ok(o), Some(d)) => {
                if o[0].dtype() != dtype(d.as_str().unwrap())
                    || o[0].weak_type() != w["weak_type"].as_bool().unwrap()
                {
                    t.failures.push(format!(
                        "{label}: weak aval {} weak={}, want {w}",
                        o[0],
                        o[0].weak_type()
                    ));
                }
            }
            (r, _) => t
                .failures
                .push(format!("{label}: weak {:?} want {w}", r.err())),
        }
    }
    let want = unhex(out["hex"].as_str().unwrap());
    let ours = y.as_bytes();
    let size = element_size(want_dtype).unwrap();
    if ours.len() != want.len() {
        t.failures.push(format!(
            "{label}: {} bytes, want {}",
            ours.len(),
            want.len()
        ));
        return;
    }
    let approx = APPROX.contains(&name);
    let mut worst = 0u64;
    let mut bad = Vec::new();
    for (i, (a, b)) in ours.chunks(size).zip(want.chunks(size)).enumerate() {
        if a == b {
            continue;
        }
        let u = if approx { ulps(want_dtype, a, b) } else { None };
        match u {
            Some(u) if u <= MAX_ULP => worst = worst.max(u),
            _ => {
                let xs: Vec<String> = args
                    .iter()
                    .map(|x| {
                        let s = element_size(x.dtype()).unwrap();
                        let k = if x.ndim() == 0 { 0 } else { i };
                        format!("{:02x?}", &x.as_bytes()[k * s..(k + 1) * s])
                    })
                    .collect();
                bad.push(format!(
                    "[{i}] in {} got {a:02x?} want {b:02x?}",
                    xs.join(",")
                ));
            }
        }
    }
    if approx {
        let e = t
            .max_ulp
            .entry((name.to_string(), dt.to_string()))
            .or_default();
        *e = (*e).max(worst);
    }
    if !bad.is_empty() {
        let n = bad.len();
        bad.truncate(4);
        let msg = format!("{label}: {n} elements differ: {}", bad.join("; "));
        if known(name, dt) {
            t.known.push(msg);
            t.known_seen.insert((name.to_string(), dt.to_string()));
        } else {
            t.failures.push(msg);
        }
    }
}

#[test]
fn lax_elementwise_against_jax() {
    let mut t = Tally::default();
    let mut files: Vec<_> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "fixtures missing: {files:?}");
    for f in files {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        for case in v["cases"].as_array().unwrap() {
            check_case(&v["inputs"], case, &mut t);
        }
    }
    let mut per_prim: BTreeMap<&str, u64> = BTreeMap::new();
    for ((p, _), u) in &t.max_ulp {
        let e = per_prim.entry(p).or_default();
        *e = (*e).max(*u);
    }
    println!("largest ulp difference per transcendental primitive (all dtypes): {per_prim:?}");
    println!("known differences ({} cases):", t.known.len());
    for f in &t.known {
        println!("  {f}");
    }
    for (p, ds) in KNOWN {
        for d in *ds {
            if !t.known_seen.contains(&(p.to_string(), d.to_string())) {
                t.failures.push(format!(
                    "{p} {d} is listed in KNOWN but agrees with JAX now"
                ));
            }
        }
    }
    for f in &t.failures {
        println!("{f}");
    }
    assert!(
        t.failures.is_empty(),
        "{} of {} cases differ from JAX",
        t.failures.len(),
        t.cases
    );
}
