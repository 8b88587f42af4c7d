//! The `random` command's contract: fixture cases from real JAX through the binary (JSON and
//! `--out`), exit codes, bad input.

use crate::common;

use assert_cmd::Command;
use serde_json::Value;

fn bin() -> Command {
    Command::cargo_bin("dtype-lattice").unwrap()
}

fn fixture(mode: &str) -> Value {
    let text =
        std::fs::read_to_string(common::fixture_path(&format!("jax/random_{mode}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The CLI arguments of a fixture case (`None` for cases the CLI does not spell).
fn args_of(case: &Value, x64: bool) -> Option<Vec<String>> {
    let op = match case["op"].as_str().unwrap() {
        "fold_in" => "fold-in",
        "wrap_key_data" => "key",
        "chain" | "sample" => return None,
        other => other,
    };
    let mut args = vec!["random".to_string(), op.to_string(), "--json".to_string()];
    if x64 {
        args.push("--x64".into());
    }
    let list = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    if let Some(k) = case.get("key") {
        args.push(format!("--key={}", list(k)));
    }
    if let Some(s) = case.get("shape") {
        args.push(format!("--shape={}", list(s)));
    }
    for field in ["seed", "data", "dtype", "minval", "maxval", "p"] {
        if let Some(v) = case.get(field) {
            args.push(format!("--{field}={}", v.as_str().unwrap()));
        }
    }
    if let Some(w) = case.get("width") {
        args.push(format!("--width={w}"));
    }
    Some(args)
}

fn close(a: &Value, b: &Value) -> bool {
    let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
    a == b || (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
}

/// Every third fixture case of each mode (and every key/split/fold_in case) through the binary.
#[test]
fn fixture_cases_through_the_binary() {
    let mut checked = 0;
    for (mode, x64) in [("x32", false), ("x64", true)] {
        for (i, case) in fixture(mode)["cases"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let op = case["op"].as_str().unwrap();
            if i % 3 != 0 && !matches!(op, "key" | "split" | "fold_in" | "wrap_key_data") {
                continue;
            }
            let Some(args) = args_of(case, x64) else {
                continue;
            };
            let output = bin().args(&args).output().unwrap();
            let code = output.status.code().unwrap();
            let got: Value = serde_json::from_slice(&output.stdout)
                .unwrap_or_else(|e| panic!("{args:?}: {e}: {output:?}"));
            if let Some(want) = case.get("out") {
                assert_eq!(code, 0, "{args:?}");
                if op == "normal" {
                    assert_eq!(got["dtype"], want["dtype"]);
                    let (g, w) = (
                        got["values"].as_array().unwrap(),
                        want["values"].as_array().unwrap(),
                    );
                    assert!(
                        g.len() == w.len() && g.iter().zip(w).all(|(a, b)| close(a, b)),
                        "{args:?}"
                    );
                } else {
                    assert_eq!(&got, want, "{args:?}");
                }
            } else {
                let want = &case["error"];
                let kind = want["kind"].as_str().unwrap();
                if kind == "MLIRError" {
                    // A negative dimension: unusable input here.
                    assert_eq!(code, 2, "{args:?}");
                    assert_eq!(got["error"]["kind"], "InvalidArgument");
                } else if kind == "KeyError" {
                    assert_eq!(code, 1, "{args:?}");
                } else {
                    assert_eq!(code, 1, "{args:?}");
                    assert_eq!(&got["error"], want, "{args:?}");
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 400, "{checked}");
}

fn read_u32(path: &std::path::Path) -> Vec<u32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

#[test]
fn out_streams_the_2_pow_20_bits_of_jax() {
    let fx = fixture("x32");
    let case = fx["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["op"] == "sample")
        .unwrap();
    let dir = std::env::temp_dir().join(format!("cli-random-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bits.bin");
    let out = bin()
        .args([
            "random", "bits", "--key", "0,42", "--width", "32", "--shape", "1048576",
        ])
        .arg("--out")
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "--out prints nothing on stdout");
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote 1048576 values (uint32"));
    let v = read_u32(&path);
    assert_eq!(v.len(), 1 << 20);
    for (i, want) in case["indices"]
        .as_array()
        .unwrap()
        .iter()
        .zip(case["values"].as_array().unwrap())
    {
        assert_eq!(
            u64::from(v[i.as_u64().unwrap() as usize]),
            want.as_u64().unwrap()
        );
    }
    let xor = v.iter().fold(0u32, |a, b| a ^ b);
    assert_eq!(u64::from(xor), case["xor_all"].as_u64().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn out_writes_what_json_prints() {
    let dir = std::env::temp_dir().join(format!("cli-random-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (args, width) in [
        (
            vec![
                "uniform", "--seed", "3", "--num", "50", "--dtype", "float16",
            ],
            2,
        ),
        (
            vec!["bits", "--seed", "3", "--num", "50", "--width", "8"],
            1,
        ),
        (
            vec![
                "bits", "--seed", "3", "--num", "50", "--width", "64", "--x64",
            ],
            8,
        ),
        (
            vec![
                "randint", "--seed", "3", "--num", "50", "--minval", "-9", "--maxval", "9",
                "--dtype", "int16",
            ],
            2,
        ),
        (vec!["bernoulli", "--seed", "3", "--num", "50"], 1),
        (vec!["split", "--seed", "3", "--num", "25"], 4),
    ] {
        let path = dir.join("v.bin");
        let json = bin()
            .arg("random")
            .args(&args)
            .arg("--json")
            .output()
            .unwrap();
        let json: Value = serde_json::from_slice(&json.stdout).unwrap();
        let out = bin()
            .arg("random")
            .args(&args)
            .arg("--out")
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success() && out.stdout.is_empty(), "{args:?}");
        let raw = std::fs::read(&path).unwrap();
        let expected: Vec<u64> = match json.get("bits") {
            Some(b) => b
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect(),
            None => json
                .get("values")
                .or(json.get("data"))
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|x| match x {
                    Value::Bool(b) => u64::from(*b),
                    n => n
                        .as_i64()
                        .map(|i| i as u64)
                        .unwrap_or_else(|| n.as_u64().unwrap()),
                })
                .collect(),
        };
        let got: Vec<u64> = raw
            .chunks_exact(width)
            .map(|b| {
                let mut w = [0u8; 8];
                w[..width].copy_from_slice(b);
                u64::from_le_bytes(w)
            })
            .collect();
        let mask = if width == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * width)) - 1
        };
        let expected: Vec<u64> = expected.iter().map(|x| x & mask).collect();
        assert_eq!(got, expected, "{args:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn text_output_is_one_item_per_line() {
    let out = bin()
        .args(["random", "split", "--seed", "0", "--num", "2"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "1797259609 2579123966\n928981903 3453687069\n"
    );
    let out = bin()
        .args([
            "random", "bits", "--seed", "0", "--num", "3", "--width", "8",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 3);
}

#[test]
fn bad_input_gets_a_clear_error_and_exit_code() {
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["bits", "--seed", "0", "--width", "12"],
            2,
            "not a bit width",
        ),
        (
            &["bits", "--seed", "0", "--shape", "3,-2"],
            2,
            "not a dimension",
        ),
        (
            &["bits", "--seed", "0", "--shape", "4294967296,4294967296,2"],
            1,
            "exceeding 2 ** 64",
        ),
        (&["bits", "--seed", "0", "--num", "2,3"], 2, "not one count"),
        (&["bits"], 2, "--seed S or --key"),
        (&["bits", "--seed", "x"], 2, "not an integer"),
        (
            &["key", "--seed", "18446744073709551616"],
            1,
            "too large to convert",
        ),
        (
            &["split", "--key", "1,2,3"],
            1,
            "expected key_data.shape to end with (2,)",
        ),
        (&["split", "--key", "1,-2"], 2, "not a uint32"),
        (&["fold-in", "--seed", "0"], 2, "needs --data"),
        (
            &["fold-in", "--seed", "0", "--data", "4294967296"],
            1,
            "out of bounds for uint32",
        ),
        (
            &["uniform", "--seed", "0", "--dtype", "int8"],
            1,
            "must be a float dtype",
        ),
        (
            &["uniform", "--seed", "0", "--dtype", "float8_e4m3fn"],
            2,
            "supports float16",
        ),
        (
            &["uniform", "--seed", "0", "--dtype", "flaot32"],
            2,
            "did you mean float32",
        ),
        (
            &["normal", "--seed", "0", "--dtype", "bool"],
            1,
            "float or complex dtype",
        ),
        (
            &["randint", "--seed", "0", "--maxval", "3"],
            2,
            "needs --minval",
        ),
        (
            &[
                "randint", "--seed", "0", "--minval", "0", "--maxval", "3", "--dtype", "float32",
            ],
            1,
            "only accepts integer dtypes",
        ),
        (
            &[
                "randint", "--seed", "0", "--minval", "0", "--maxval", "3", "--dtype", "int4",
            ],
            1,
            "8-, 16-, 32-, or 64-bit",
        ),
        (
            &["bernoulli", "--seed", "0", "--p", "half"],
            2,
            "not a number",
        ),
        (
            &["bits", "--seed", "0", "--dtype", "int32"],
            1,
            "unsigned int dtype",
        ),
    ];
    for (args, code, needle) in cases {
        let out = bin().arg("random").args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn degenerate_ranges_behave_as_jax() {
    let json = |args: &[&str]| -> Value {
        let out = bin()
            .arg("random")
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // minval >= maxval: minval everywhere, as JAX returns.
    let v = json(&[
        "randint", "--seed", "1", "--num", "4", "--minval", "5", "--maxval", "2",
    ]);
    assert_eq!(v["values"], serde_json::json!([5, 5, 5, 5]));
    let v = json(&[
        "uniform", "--seed", "1", "--num", "3", "--minval", "2", "--maxval", "-2",
    ]);
    assert_eq!(v["values"], serde_json::json!([2.0, 2.0, 2.0]));
    // p outside [0, 1]: all True above, all False below, as JAX computes uniform < p.
    let v = json(&["bernoulli", "--seed", "1", "--num", "3", "--p", "1.5"]);
    assert_eq!(v["values"], serde_json::json!([true, true, true]));
    let v = json(&["bernoulli", "--seed", "1", "--num", "3", "--p", "-0.5"]);
    assert_eq!(v["values"], serde_json::json!([false, false, false]));
    // An empty shape is a scalar; a zero dimension is an empty array.
    let v = json(&["uniform", "--seed", "1", "--shape", ""]);
    assert_eq!(
        (v["shape"].clone(), v["values"].as_array().unwrap().len()),
        (serde_json::json!([]), 1)
    );
    let v = json(&["bits", "--seed", "1", "--shape", "3,0"]);
    assert_eq!(v["values"], serde_json::json!([]));
}

#[test]
fn promote_and_table_refuse_keys_mixed_with_numbers() {
    let run = |args: &[&str]| {
        let out = bin().args(args).output().unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    // jax.dtypes.result_type(key, int32 array) and jnp.add(key, int32 array).
    let (code, _, err) = run(&["promote", "--rules", "jax", "key<fry>", "int32"]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim(),
        "error: ValueError: dtype=key<fry> is not a valid dtype for JAX type promotion."
    );
    let (code, _, err) = run(&["promote", "--op", "add", "key<fry>", "int32"]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim(),
        "error: TypeError: add does not accept dtypes key<fry>, int32."
    );
    let (code, out, _) = run(&["promote", "--json", "key<fry>", "key<fry>"]);
    assert_eq!(
        (code, out.trim()),
        (0, r#"{"dtype":"key<fry>","weak_type":false}"#)
    );
    let (code, out, _) = run(&["promote", "--json", "--op", "add", "key<fry>", "1"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("add does not accept dtypes key<fry>, int32."),
        "{out}"
    );
    let (code, _, err) = run(&["promote", "--rules", "numpy", "key<fry>", "int32"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("cannot represent the operand key<fry>"),
        "{err}"
    );
    let (code, _, err) = run(&["promote", "key<nope>", "int32"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown dtype \"key<nope>\"; did you mean") && err.contains("key<fry>"),
        "{err}"
    );
    let (code, out, _) = run(&[
        "table",
        "--types",
        "key<fry>,int32,float",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0);
    let rows: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(
        rows.iter().any(|r| r.starts_with("key<fry>,key<fry>,-,-")),
        "{out}"
    );
    let (code, out, _) = run(&["table", "--types", "key<fry>,int32", "--format", "json"]);
    assert_eq!(code, 0);
    let t: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(t["cells"][0][0]["dtype"], "key<fry>");
    assert_eq!(
        t["cells"][0][1]["error"]["message"],
        "dtype=key<fry> is not a valid dtype for JAX type promotion."
    );
}

/// The README's `random` examples (and its key-dtype `promote` examples) print what they say.
#[test]
fn readme_random_examples_hold() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let start = readme.find("### `random`").unwrap();
    let end = start + readme[start..].find("\n## ").unwrap();
    let mut lines = readme[start..end].lines().peekable();
    let mut checked = 0;
    while let Some(line) = lines.next() {
        let Some(cmd) = line.strip_prefix("$ dtype-lattice ") else {
            continue;
        };
        let cmd = cmd.split("  #").next().unwrap().trim();
        let mut expected = Vec::new();
        while let Some(next) = lines.peek() {
            if next.starts_with('$') || next.starts_with("```") {
                break;
            }
            expected.push(lines.next().unwrap());
        }
        if cmd.contains("--out") {
            continue; // writes a file and times itself
        }
        let args: Vec<&str> = cmd
            .split_whitespace()
            .map(|a| a.trim_matches('\''))
            .collect();
        let out = bin().args(&args).output().unwrap();
        let got = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(got.trim_end(), expected.join("\n"), "$ dtype-lattice {cmd}");
        checked += 1;
    }
    assert!(checked >= 12, "{checked}");
}

/// Little-endian words of `width` bytes of a fixture's hex.
fn words(hex: &str, width: usize) -> Vec<u64> {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    bytes
        .chunks(width)
        .map(|c| c.iter().rev().fold(0u64, |acc, &b| acc << 8 | u64::from(b)))
        .collect()
}

/// Every eager case of tests/fixtures/random_arrays/impls_*.json (JAX's six built-in PRNG
/// implementations) through the binary with `--impl`: key data and values bit for bit
/// (normal's float64 within 1e-6, as the library's tests).
#[test]
fn every_implementation_through_the_binary() {
    let mut checked = 0;
    for (mode, x64) in [("x32", false), ("x64", true)] {
        let path = common::fixture_path(&format!("random_arrays/impls_{mode}.json"));
        let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for case in fixture["cases"].as_array().unwrap() {
            let f = case["fn"].as_str().unwrap();
            if case["how"] != "eager" || case.get("out").is_none() || f == "sampler" {
                continue;
            }
            let impl_name = case["impl"].as_str().unwrap();
            let mut args: Vec<String> = vec![
                "random".into(),
                f.replace('_', "-"),
                "--json".into(),
                format!("--impl={impl_name}"),
            ];
            if x64 {
                args.push("--x64".into());
            }
            if let Some(k) = case.get("key") {
                let data: Vec<String> = words(k["hex"].as_str().unwrap(), 4)
                    .iter()
                    .map(u64::to_string)
                    .collect();
                args.push(format!("--key={}", data.join(",")));
            }
            if let Some(s) = case.get("shape") {
                let dims: Vec<String> = s
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.to_string())
                    .collect();
                args.push(format!("--shape={}", dims.join(",")));
            }
            for field in ["seed", "data", "dtype", "minval", "maxval", "p"] {
                if let Some(v) = case.get(field).and_then(Value::as_str) {
                    args.push(format!("--{field}={v}"));
                }
            }
            let output = bin().args(&args).output().unwrap();
            assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
            let got: Value = serde_json::from_slice(&output.stdout).unwrap();
            let out = &case["out"];
            let hex = out["hex"].as_str().unwrap();
            if f == "key" || f == "split" || f == "fold_in" {
                let want: Vec<Value> = words(hex, 4).into_iter().map(Value::from).collect();
                assert_eq!(got["data"].as_array().unwrap(), &want, "{args:?}");
                assert!(
                    out["aval"]
                        .as_str()
                        .unwrap()
                        .starts_with(got["dtype"].as_str().unwrap())
                );
            } else {
                let dtype = got["dtype"].as_str().unwrap();
                let width = match dtype {
                    "bool" | "uint8" | "int8" => 1,
                    "uint16" | "int16" | "float16" | "bfloat16" => 2,
                    "uint32" | "int32" | "float32" => 4,
                    _ => 8,
                };
                let want = words(hex, width);
                if dtype.starts_with("float") || dtype == "bfloat16" {
                    let bits: Vec<u64> = got["bits"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|b| b.as_u64().unwrap())
                        .collect();
                    if f == "normal" && dtype == "float64" {
                        let near = bits.iter().zip(&want).all(|(&a, &b)| {
                            let (a, b) = (f64::from_bits(a), f64::from_bits(b));
                            (a - b).abs() <= 1e-6 * b.abs()
                        });
                        assert!(near, "{args:?}: {bits:?} != {want:?}");
                    } else {
                        assert_eq!(bits, want, "{args:?}");
                    }
                } else {
                    let values: Vec<u64> = got["values"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| match v {
                            Value::Bool(b) => u64::from(*b),
                            v => v.as_i64().map_or_else(|| v.as_u64().unwrap(), |i| i as u64),
                        })
                        .collect();
                    let mask = if width == 8 {
                        u64::MAX
                    } else {
                        (1 << (8 * width)) - 1
                    };
                    let values: Vec<u64> = values.iter().map(|v| v & mask).collect();
                    assert_eq!(values, want, "{args:?}");
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 300, "{checked}");
}

/// The seed note's example: `jax.random.uniform(jax.random.key(0, impl='rbg'), shape=(3,))`.
#[test]
fn rbg_uniform_prints_the_notes_values() {
    let out = bin()
        .args([
            "random", "uniform", "--impl", "rbg", "--seed", "0", "--num", "3",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "0.3990464210510254\n0.8805201053619385\n0.7357127666473389\n"
    );
    let out = bin()
        .args(["random", "key", "--impl", "rgb", "--seed", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stderr).unwrap().contains(
        "ValueError: unrecognized PRNG implementation \"rgb\". Did you mean one of: \"philox2x32\""
    ));
}

/// The options a sampler's positional parameters are given as (the fixture's "args").
fn sampler_options(name: &str) -> Option<(&'static str, &'static [&'static str])> {
    Some(match name {
        "exponential" | "cauchy" | "laplace" | "logistic" | "gumbel" | "maxwell" | "rademacher"
        | "normal" => (name_of(name), &[]),
        "pareto" => ("pareto", &["b"]),
        "rayleigh" => ("rayleigh", &["scale"]),
        "wald" => ("wald", &["mean"]),
        "lognormal" => ("lognormal", &["sigma"]),
        "weibull_min" => ("weibull-min", &["scale", "concentration"]),
        "double_sided_maxwell" => ("double-sided-maxwell", &["loc", "scale"]),
        "triangular" => ("triangular", &["left", "mode", "right"]),
        "truncated_normal" => ("truncated-normal", &["lower", "upper"]),
        "geometric" => ("geometric", &["p"]),
        "categorical" => ("categorical", &["logits"]),
        "gamma" => ("gamma", &["a"]),
        "loggamma" => ("loggamma", &["a"]),
        "beta" => ("beta", &["a", "b"]),
        "chisquare" => ("chisquare", &["df"]),
        "f" => ("f", &["dfnum", "dfden"]),
        "t" => ("t", &["df"]),
        "generalized_normal" => ("generalized-normal", &["p"]),
        "poisson" => ("poisson", &["lam"]),
        "binomial" => ("binomial", &["n", "p"]),
        _ => return None,
    })
}

fn name_of(name: &str) -> &'static str {
    [
        "exponential",
        "cauchy",
        "laplace",
        "logistic",
        "gumbel",
        "maxwell",
        "rademacher",
        "normal",
    ]
    .into_iter()
    .find(|n| *n == name)
    .unwrap()
}

/// JAX's samplers on a philox4x32 key (tests/fixtures/random_arrays/impls_*.json, "sampler"
/// cases) through the binary: `random SAMPLER --impl philox4x32 --key K0,K1 --shape 4 ...`,
/// values within 1e-6 relative (1e-6 absolute near zero) of JAX's, as the library's tests;
/// and the refusals (poisson of a philox key) with JAX's message.
#[test]
fn every_sampler_through_the_binary() {
    let mut checked = 0;
    for (mode, x64) in [("x32", false), ("x64", true)] {
        let path = common::fixture_path(&format!("random_arrays/impls_{mode}.json"));
        let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for case in fixture["cases"].as_array().unwrap() {
            if case["fn"] != "sampler" {
                continue;
            }
            let Some((op, names)) = sampler_options(case["sampler"].as_str().unwrap()) else {
                continue;
            };
            // The fixture's lists are float32 arrays; the CLI's are of the default float
            // dtype, float64 with --x64.
            let lists = case["args"].as_array().unwrap().iter().any(Value::is_array);
            if x64 && lists {
                continue;
            }
            let key: Vec<String> = words(case["key"]["hex"].as_str().unwrap(), 4)
                .iter()
                .map(u64::to_string)
                .collect();
            let mut args: Vec<String> = vec![
                "random".into(),
                op.into(),
                "--json".into(),
                "--impl=philox4x32".into(),
                format!("--key={}", key.join(",")),
                "--shape=4".into(),
            ];
            if x64 {
                args.push("--x64".into());
            }
            for (name, v) in names.iter().zip(case["args"].as_array().unwrap()) {
                let text = match v {
                    Value::Array(items) => items
                        .iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                    v => v.to_string(),
                };
                args.push(format!("--{name}={text}"));
            }
            let output = bin().args(&args).output().unwrap();
            if let Some(err) = case.get("error") {
                assert_eq!(output.status.code(), Some(1), "{args:?}");
                // With --json the error is JSON on stdout.
                let said = String::from_utf8(output.stdout).unwrap();
                assert!(
                    said.contains(err["message"].as_str().unwrap()),
                    "{args:?}: {said}"
                );
                checked += 1;
                continue;
            }
            assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
            let got: Value = serde_json::from_slice(&output.stdout).unwrap();
            let out = &case["out"];
            let dtype = got["dtype"].as_str().unwrap();
            let width = match dtype {
                "bool" | "uint8" | "int8" => 1,
                "uint16" | "int16" | "float16" | "bfloat16" => 2,
                "uint32" | "int32" | "float32" => 4,
                _ => 8,
            };
            let want = words(out["hex"].as_str().unwrap(), width);
            let values = got["values"].as_array().unwrap();
            assert_eq!(values.len(), want.len(), "{args:?}");
            for (v, &w) in values.iter().zip(&want) {
                let ok = match dtype {
                    "float32" => {
                        let w = f64::from(f32::from_bits(w as u32));
                        (v.as_f64().unwrap() - w).abs() <= 1e-6 * w.abs().max(1.0)
                    }
                    "float64" => {
                        let w = f64::from_bits(w);
                        (v.as_f64().unwrap() - w).abs() <= 1e-6 * w.abs().max(1.0)
                    }
                    _ => {
                        v.as_i64()
                            .map(|i| i as u64 & ((1u128 << (8 * width)) - 1) as u64)
                            == Some(w)
                    }
                };
                assert!(ok, "{args:?}: {values:?} != {want:?}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 50, "{checked}");
}
