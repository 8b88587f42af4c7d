//! The structural primitives, reductions, cumulative reductions, `iota` and `dot_general`
//! against JAX 0.10.2 on CPU (x64 on): every case of tests/fixtures/lax_structural/*.json
//! (tools/gen_lax_structural_fixtures.py) through `core::bind`: output dtype, shape and
//! weak_type exactly, the parameters as `jax.make_jaxpr` prints them, refusals (exception
//! class and first line of the message) exactly, and the values bit for bit, except float
//! sums and products (`reduce_sum`, `reduce_prod`, `cumsum`, `cumprod`, `dot_general` of
//! floats), where XLA's CPU backend accumulates in an order we do not reproduce: those agree
//! within the summation error bound `2 (m + 1) eps · scale` (eps of the result's dtype, m the
//! number of terms, scale
//! `m · max|x|` for sums, `|result|` for products) plus two ulps of the result's dtype.
//! NaNs compare equal whatever their sign and payload bits (XLA's `max`/`min` make their own).
//! Cases of dtypes the kernels do not implement yet (float8, int4 arithmetic) must answer
//! `NotImplementedError`; they are counted.

use crate::common;

use std::collections::BTreeMap;

use dtype_lattice::{DType, Kind};
use dtype_lattice_array::Array;
use dtype_lattice_array::core::{self, Param, Params};
use dtype_lattice_array::lax;
use dtype_lattice_array::registry;
use serde_json::Value;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn dtype(v: &Value) -> DType {
    v.as_str().unwrap().parse().unwrap()
}

fn shape(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_i64().unwrap())
        .collect()
}

fn param(v: &Value) -> Param {
    match v {
        Value::Null => Param::None,
        Value::Bool(b) => Param::Bool(*b),
        Value::Number(n) => Param::Int(n.as_i64().unwrap()),
        Value::Array(_) => Param::Ints(ints(v)),
        Value::Object(o) => {
            if let Some(d) = o.get("dtype") {
                Param::DType(dtype(d))
            } else if let Some(p) = o.get("padding") {
                Param::Padding(
                    p.as_array()
                        .unwrap()
                        .iter()
                        .map(|t| {
                            let t = ints(t);
                            (t[0], t[1], t[2])
                        })
                        .collect(),
                )
            } else {
                let d = o["dot"].as_array().unwrap();
                Param::DotDimensionNumbers {
                    lhs_contracting: ints(&d[0]),
                    rhs_contracting: ints(&d[1]),
                    lhs_batch: ints(&d[2]),
                    rhs_batch: ints(&d[3]),
                }
            }
        }
        Value::String(_) => panic!("unexpected parameter {v}"),
    }
}

fn array(v: &Value) -> Array {
    Array::from_bytes(
        dtype(&v["dtype"]),
        &shape(&v["shape"]),
        &unhex(v["hex"].as_str().unwrap()),
    )
    .unwrap()
    .with_weak_type(v["weak"].as_bool().unwrap())
}

/// Elements as (re, im) f64 pairs.
fn decoded(a: &Array) -> Vec<(f64, f64)> {
    if a.dtype().kind() == Kind::Complex {
        let c = a.astype(DType::Complex128).unwrap();
        c.to_vec::<num_complex::Complex<f64>>()
            .unwrap()
            .iter()
            .map(|z| (z.re, z.im))
            .collect()
    } else {
        let f = a.astype(DType::Float64).unwrap();
        f.to_vec::<f64>()
            .unwrap()
            .iter()
            .map(|&x| (x, 0.0))
            .collect()
    }
}

fn eps(d: DType) -> f64 {
    let c = if d.kind() == Kind::Complex {
        d.component()
    } else {
        d
    };
    let m = c.float_format().map_or(52, |f| f.mantissa_bits);
    (2f64).powi(-(m as i32))
}

fn max_abs(a: &Array) -> f64 {
    decoded(a)
        .iter()
        .map(|(r, i)| r.abs().max(i.abs()))
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max)
}

/// How a float result is compared: exactly, or within the bound (number of terms, sum-like).
fn tolerance(name: &str, inputs: &[Array], params: &Params, out: &Array) -> Option<(f64, bool)> {
    let kind = out.dtype().kind();
    if !matches!(kind, Kind::Float | Kind::Complex) {
        return None;
    }
    let x = &inputs[0];
    match name {
        "reduce_sum" | "reduce_prod" => {
            let m = if out.size() == 0 {
                0
            } else {
                x.size() / out.size()
            };
            Some((m as f64, name == "reduce_sum"))
        }
        "cumsum" | "cumprod" => {
            let Some(Param::Int(a)) = params.get("axis") else {
                return None;
            };
            Some((x.shape()[*a as usize] as f64, name == "cumsum"))
        }
        "dot_general" => {
            let Some(Param::DotDimensionNumbers {
                lhs_contracting, ..
            }) = params.get("dimension_numbers")
            else {
                return None;
            };
            let m: usize = lhs_contracting
                .iter()
                .map(|&d| x.shape()[d as usize])
                .product();
            Some((m as f64, true))
        }
        _ => None,
    }
}

fn close(got: &Array, want: &Array, m: f64, sum_like: bool, scale_in: f64) -> Option<String> {
    // float16/bfloat16: XLA rounds partial results (e.g. between the axes of a multi-axis
    // reduction) to the output precision, so the bound is the output's.
    let e_acc = eps(got.dtype());
    let e_out = eps(got.dtype());
    for (i, (g, w)) in decoded(got).iter().zip(decoded(want)).enumerate() {
        for (g, w) in [(g.0, w.0), (g.1, w.1)] {
            if g.is_nan() && w.is_nan() || g == w {
                continue;
            }
            if g.is_infinite() || w.is_infinite() || g.is_nan() || w.is_nan() {
                return Some(format!("[{i}] got {g} want {w}"));
            }
            let scale = if sum_like { scale_in } else { w.abs() * m };
            let tol = 2.0 * (m + 1.0) * e_acc * scale + 2.0 * e_out * w.abs();
            if (g - w).abs() > tol {
                return Some(format!("[{i}] got {g} want {w} (tolerance {tol})"));
            }
        }
    }
    None
}

#[derive(Default)]
struct Tally {
    checked: BTreeMap<String, usize>,
    refusals: usize,
    approximate: BTreeMap<String, usize>,
    nan_bits: usize,
    not_implemented: BTreeMap<String, usize>,
    failures: Vec<String>,
}

/// A `lax.expand_dims` case: the equation it stages (as printed), its output or refusal.
fn check_expand_dims(c: &Value, t: &mut Tally) {
    let x = array(&c["inputs"][0]);
    let dims = ints(&c["dims"]);
    let label = format!("expand_dims({}, {dims:?})", x.aval());
    *t.checked.entry("expand_dims".into()).or_default() += 1;
    match (lax::expand_dims(&x, &dims), c.get("error")) {
        (Err(e), Some(err)) => {
            t.refusals += 1;
            let (kind, msg) = (common::class(&e), e.to_string());
            if kind != err["kind"].as_str().unwrap()
                || !msg.ends_with(err["message"].as_str().unwrap())
            {
                t.failures
                    .push(format!("{label}: got {kind}: {msg}, want {err}"));
            }
        }
        (Ok(y), None) => {
            let out = &c["out"];
            if y.shape() != shape(&out["shape"]).as_slice()
                || y.as_bytes() != unhex(out["hex"].as_str().unwrap()).as_slice()
            {
                t.failures.push(format!("{label}: got {}", y.aval()));
            }
            // jaxprs print broadcast_in_dim with its broadcast_dimensions only (none when
            // empty); an empty `dims` stages nothing.
            let staged = c["staged"].as_str().unwrap();
            let kept = expand_kept(&x, &dims);
            let want = match (dims.is_empty(), kept.is_empty()) {
                (true, _) => String::new(),
                (false, true) => "broadcast_in_dim".to_string(),
                (false, false) => format!(
                    "broadcast_in_dim{}",
                    Params::new().with("broadcast_dimensions", Param::Ints(kept))
                ),
            };
            if staged != want {
                t.failures
                    .push(format!("{label}: binds {want}, JAX stages {staged}"));
            }
        }
        (got, want) => t
            .failures
            .push(format!("{label}: got {got:?}, want {want:?}")),
    }
}

/// The kept (broadcast) dimensions of `expand_dims(x, dims)`.
fn expand_kept(x: &Array, dims: &[i64]) -> Vec<i64> {
    let n = (x.ndim() + dims.len()) as i64;
    let new: Vec<i64> = dims
        .iter()
        .map(|&d| if d < 0 { d + n } else { d })
        .collect();
    (0..n).filter(|i| !new.contains(i)).collect()
}

fn check(c: &Value, t: &mut Tally) {
    if c.get("fn").and_then(Value::as_str) == Some("expand_dims") {
        return check_expand_dims(c, t);
    }
    let name = c["prim"].as_str().unwrap();
    let p = registry::by_name(name).unwrap_or_else(|| panic!("no primitive {name}"));
    let mut params = Params::new();
    for kv in c["params"].as_array().unwrap() {
        let k: &'static str = Box::leak(kv[0].as_str().unwrap().to_string().into_boxed_str());
        params = params.with(k, param(&kv[1]));
    }
    let inputs: Vec<Array> = c["inputs"].as_array().unwrap().iter().map(array).collect();
    let refs: Vec<&Array> = inputs.iter().collect();
    let label = format!(
        "{name}{params} on {}",
        inputs
            .iter()
            .map(|a| a.aval().to_string() + if a.weak_type() { "~" } else { "" })
            .collect::<Vec<_>>()
            .join(", ")
    );
    *t.checked.entry(name.to_string()).or_default() += 1;
    let got = core::bind(p, &refs, &params);
    if let Some(err) = c.get("error") {
        t.refusals += 1;
        match got {
            Ok(_) => t
                .failures
                .push(format!("{label}: accepted, JAX refuses: {err}")),
            Err(e) => {
                let (kind, msg) = (common::class(&e), e.to_string());
                let want_kind = err["kind"].as_str().unwrap();
                let want_msg = err["message"].as_str().unwrap();
                if kind != want_kind || !msg.ends_with(want_msg) {
                    t.failures.push(format!(
                        "{label}: got {kind}: {msg}\n   want {want_kind}: {want_msg}"
                    ));
                }
            }
        }
        return;
    }
    // The parameters as jaxprs print them (dot_general's printer leaves out the Nones).
    if let Some(j) = c.get("jaxpr").and_then(Value::as_str) {
        let mut shown = Params::new();
        for kv in c["params"].as_array().unwrap() {
            let k: &'static str = Box::leak(kv[0].as_str().unwrap().to_string().into_boxed_str());
            let v = param(&kv[1]);
            if name == "dot_general" && v == Param::None {
                continue;
            }
            shown = shown.with(k, v);
        }
        if shown.to_string() != j {
            t.failures
                .push(format!("{label}: printed {shown}, jaxpr prints {j}"));
        }
    }
    let out = &c["out"];
    let got = match got {
        Ok(v) => v.into_iter().next().unwrap(),
        Err(e) => {
            if e.exception() == Some(dtype_lattice::error::Exception::NotImplementedError) {
                *t.not_implemented
                    .entry(format!(
                        "{name} {}",
                        inputs
                            .first()
                            .map_or(String::new(), |a| a.dtype().to_string())
                    ))
                    .or_default() += 1;
            } else {
                t.failures
                    .push(format!("{label}: refused {e}, JAX answers"));
            }
            return;
        }
    };
    let want = Array::from_bytes(
        dtype(&out["dtype"]),
        &shape(&out["shape"]),
        &unhex(out["hex"].as_str().unwrap()),
    )
    .unwrap();
    if got.dtype() != want.dtype()
        || got.shape() != want.shape()
        || got.weak_type() != out["weak_type"].as_bool().unwrap()
    {
        t.failures.push(format!(
            "{label}: got {}{} want {}{}",
            got.aval(),
            if got.weak_type() { " weak" } else { "" },
            want.aval(),
            if out["weak_type"].as_bool().unwrap() {
                " weak"
            } else {
                ""
            }
        ));
        return;
    }
    if got.as_bytes() == want.as_bytes() {
        return;
    }
    let (g, w) = (decoded(&got), decoded(&want));
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
    if g.iter()
        .zip(&w)
        .all(|(a, b)| same(a.0, b.0) && same(a.1, b.1))
    {
        // Equal but for NaN sign or payload bits (XLA's max/min make their own NaNs).
        t.nan_bits += 1;
        return;
    }
    if let Some((m, sum_like)) = tolerance(name, &inputs, &params, &got) {
        let scale = if name == "dot_general" {
            m * max_abs(&inputs[0]) * max_abs(&inputs[1])
        } else {
            m * max_abs(&inputs[0])
        };
        match close(&got, &want, m, sum_like, scale) {
            None => {
                if std::env::var_os("SHOW_APPROX").is_some() {
                    eprintln!("approximate: {label}");
                }
                *t.approximate
                    .entry(format!("{name} {}", got.dtype()))
                    .or_default() += 1;
            }
            Some(why) => t.failures.push(format!("{label}: {why}")),
        }
        return;
    }
    let first = g
        .iter()
        .zip(&w)
        .position(|(a, b)| a != b && !(a.0.is_nan() && b.0.is_nan()));
    t.failures.push(format!(
        "{label}: values differ at {first:?}: got {:?} want {:?}",
        first.map(|i| g[i]),
        first.map(|i| w[i])
    ));
}

#[test]
fn lax_structural_fixtures() {
    let mut t = Tally::default();
    for group in ["structural", "reduce", "dot", "long"] {
        let path = common::fixture_path(&format!("lax_structural/{group}.json"));
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for c in doc["cases"].as_array().unwrap() {
            check(c, &mut t);
        }
    }
    eprintln!(
        "checked {:?}; {} refusals; float results within tolerance: {:?}; {} equal but for NaN \
         bits; not implemented: {:?}",
        t.checked, t.refusals, t.approximate, t.nan_bits, t.not_implemented
    );
    assert!(
        t.failures.is_empty(),
        "{} failures:\n{}",
        t.failures.len(),
        t.failures.join("\n")
    );
}
