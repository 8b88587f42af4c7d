//! `eval`'s conformance: every case of tests/fixtures/eval/*.json (written by
//! tools/gen_eval_fixtures.py from JAX 0.10.2 with x64 off and on, and from NumPy 2.4.6 with
//! ml_dtypes 0.6.0) is one `eval --batch` line and the object the command must write for it.
//!
//! Results: dtype, weak type and shape exactly; integer and boolean values exactly; float
//! and complex elements bit for bit (the sign of a zero included), except for the functions
//! the fixture lists as approximate (XLA's own approximations of transcendental functions,
//! and float reductions whose summation order XLA chooses), which must be within 2 ULP of the
//! result dtype and of its sign; a NaN must be a NaN. Refusals: the same exception class. Cases that do not agree
//! yet are pinned, by line, in tests/fixtures/eval/known_divergences.txt with the reason;
//! a pinned case that starts agreeing fails the test too, so that the list only shrinks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::Value;

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/eval")
}

/// Runs `eval --batch` in-process on `lines`; returns one parsed object per line.
fn run_batch(flags: &[&str], lines: &[&str]) -> Vec<Value> {
    let mut args: Vec<std::ffi::OsString> = vec!["dtype-lattice".into(), "eval".into()];
    args.extend(flags.iter().map(|f| f.into()));
    args.push("--batch".into());
    let input = lines.join("\n") + "\n";
    let mut stdin = input.as_bytes();
    let mut out = Vec::new();
    dtype_lattice_cli::run(args, &mut stdin, &mut out);
    let text = String::from_utf8(out).expect("UTF-8 output");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

/// The float value of a JSON element (numbers, or the strings nan/inf/-inf).
fn float_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Distance in units in the last place between two elements' bit patterns of one width
/// (sign-magnitude ordered), NaN against NaN being 0.
fn ulp_distance(a: u64, b: u64, width_bits: u32) -> u64 {
    let sign = 1u64 << (width_bits - 1);
    let key = |x: u64| -> i128 {
        if x & sign != 0 {
            -i128::from(x & (sign - 1))
        } else {
            i128::from(x)
        }
    };
    key(a).abs_diff(key(b)).try_into().unwrap_or(u64::MAX)
}

/// Bits per element of a dtype as the fixtures store it (one byte for sub-byte formats).
fn width_bits(dtype: &str) -> u32 {
    match dtype {
        "float64" | "complex128" => 64,
        "float32" | "complex64" => 32,
        "float16" | "bfloat16" => 16,
        d if d.starts_with("float8") => 8,
        d if d.starts_with("float6") => 6,
        d if d.starts_with("float4") => 4,
        _ => 64,
    }
}

/// Whether one produced result agrees with the expected one; `Err(why)` if not.
fn agrees(expected: &Value, got: &Value, approximate: bool) -> Result<(), String> {
    if let Some(err) = expected.get("error") {
        let Some(gerr) = got.get("error") else {
            return Err(format!("expected {err}, got a result {got}"));
        };
        if err["kind"] != gerr["kind"] {
            return Err(format!("expected {err}, got {gerr}"));
        }
        return Ok(());
    }
    let exp = &expected["out"];
    if got.get("error").is_some() {
        return Err(format!("expected a result, got {got}"));
    }
    for field in ["dtype", "weak_type", "shape"] {
        if exp[field] != got[field] {
            return Err(format!(
                "{field}: expected {}, got {}",
                exp[field], got[field]
            ));
        }
    }
    let dtype = exp["dtype"].as_str().unwrap_or("");
    let Some(ebits) = exp.get("bits") else {
        return if exp["values"] == got["values"] {
            Ok(())
        } else {
            Err(format!(
                "values: expected {}, got {}",
                exp["values"], got["values"]
            ))
        };
    };
    let gbits = &got["bits"];
    let flat = |v: &Value| -> Vec<u64> {
        let mut out = Vec::new();
        for e in v.as_array().into_iter().flatten() {
            match e {
                Value::Array(parts) => out.extend(parts.iter().filter_map(Value::as_u64)),
                other => out.extend(other.as_u64()),
            }
        }
        out
    };
    let flat_vals = |v: &Value| -> Vec<Option<f64>> {
        let mut out = Vec::new();
        for e in v.as_array().into_iter().flatten() {
            match e {
                Value::Array(parts) => out.extend(parts.iter().map(float_of)),
                other => out.push(float_of(other)),
            }
        }
        out
    };
    let (eb, gb) = (flat(ebits), flat(gbits));
    let (ev, gv) = (flat_vals(&exp["values"]), flat_vals(&got["values"]));
    if eb.len() != gb.len() || ev.len() != gv.len() {
        return Err(format!("bits: expected {ebits}, got {gbits}"));
    }
    let bits = width_bits(dtype);
    for i in 0..eb.len() {
        let (e, g) = (ev[i].unwrap_or(f64::NAN), gv[i].unwrap_or(f64::NAN));
        if e.is_nan() || g.is_nan() {
            if e.is_nan() != g.is_nan() {
                return Err(format!("element {i}: expected {e}, got {g}"));
            }
            continue;
        }
        // Exact functions agree bit for bit (a NaN's payload aside); approximate ones within
        // 2 ULP but with the same sign (-0.0 is not +0.0).
        let sign = 1u64 << (bits - 1);
        let tolerance = if approximate { 2 } else { 0 };
        if (eb[i] ^ gb[i]) & sign != 0 || ulp_distance(eb[i], gb[i], bits) > tolerance {
            return Err(format!(
                "element {i}: expected {e} (bits {}), got {g} (bits {})",
                eb[i], gb[i]
            ));
        }
    }
    Ok(())
}

/// The pinned divergences: `FILE<TAB>LINE<TAB>REASON` per line (`#` comments).
fn known_divergences() -> BTreeMap<(String, String), String> {
    let path = fixtures_dir().join("known_divergences.txt");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut parts = l.splitn(3, '\t');
            Some((
                (parts.next()?.to_string(), parts.next()?.to_string()),
                parts.next().unwrap_or("").to_string(),
            ))
        })
        .collect()
}

#[test]
fn every_eval_case_agrees_with_jax_or_numpy() {
    let known = known_divergences();
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("tests/fixtures/eval exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "expected the eval fixture files");
    let mut total = 0;
    let mut failures: Vec<String> = Vec::new();
    let mut by_function: BTreeMap<String, usize> = BTreeMap::new();
    let mut fixed: Vec<String> = Vec::new();
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mode = &fixture["mode"];
        let mut flags = vec!["--rules", mode["rules"].as_str().unwrap()];
        if mode["rules"] == "jax" && mode["x64"] == true {
            flags.push("--x64");
        }
        let approximate: BTreeSet<&str> = fixture["approximate"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let cases = fixture["cases"].as_array().unwrap();
        let lines: Vec<&str> = cases.iter().map(|c| c["line"].as_str().unwrap()).collect();
        let got = run_batch(&flags, &lines);
        assert_eq!(got.len(), cases.len(), "{name}: one answer per line");
        for (case, got) in cases.iter().zip(&got) {
            total += 1;
            let line = case["line"].as_str().unwrap();
            let function = line.split_whitespace().next().unwrap_or("");
            let approx = approximate.contains(function);
            let key = (name.clone(), line.to_string());
            let pinned = known.contains_key(&key);
            seen.insert(key);
            match (agrees(case, got, approx), pinned) {
                (Ok(()), false) | (Err(_), true) => {}
                (Ok(()), true) => fixed.push(format!("{name}\t{line}")),
                (Err(why), false) => {
                    *by_function.entry(function.to_string()).or_default() += 1;
                    failures.push(format!("{name}\t{line}\t{why}"));
                }
            }
        }
    }
    let stale: Vec<_> = known.keys().filter(|k| !seen.contains(*k)).collect();
    if !failures.is_empty() {
        let dump = std::env::var("EVAL_DIVERGENCES").ok();
        if let Some(p) = dump {
            std::fs::write(p, failures.join("\n") + "\n").unwrap();
        }
    }
    assert!(
        failures.is_empty() && fixed.is_empty() && stale.is_empty(),
        "{} of {total} cases disagree (by function: {by_function:?}); first ones:\n{}\n\
         {} pinned cases now agree (remove them): {:?}\n{} pinned cases are not in the fixtures: {:?}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n"),
        fixed.len(),
        fixed.iter().take(10).collect::<Vec<_>>(),
        stale.len(),
        stale.iter().take(10).collect::<Vec<_>>(),
    );
}
