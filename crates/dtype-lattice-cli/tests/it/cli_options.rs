//! Options that mean nothing for a command or rule set are refused (exit 2); the options in
//! effect are named in headers; with JSON output asked for, errors are JSON on stdout.

use assert_cmd::Command;
use serde_json::Value;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("dtype-lattice")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The JSON error object on stdout, nothing on stderr.
fn json_error(args: &[&str]) -> (i32, String, String) {
    let (code, out, err) = run(args);
    assert_eq!(err, "", "{args:?}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"));
    let obj = v.as_object().unwrap();
    assert_eq!(obj.len(), 1, "{v}");
    (
        code,
        v["error"]["kind"].as_str().unwrap().to_string(),
        v["error"]["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn the_table_header_names_the_default_float() {
    let (code, out, _) = run(&[
        "table",
        "--rules",
        "torch",
        "--default-float",
        "float64",
        "--types",
        "int8,float",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        out.lines().next().unwrap(),
        "# torch promotion table (default float float64); rows promote with columns; `-`: refused"
    );
}

#[test]
fn a_non_float_default_is_refused_by_table_as_by_promote() {
    let refusal = "error: TypeError: only floating-point types are supported as the default type\n";
    for args in [
        &[
            "promote",
            "--rules",
            "torch",
            "--default-float",
            "int8",
            "int8",
        ][..],
        &["table", "--rules", "torch", "--default-float", "int8"],
        &["audit", "--rules", "torch", "--default-float", "int8"],
    ] {
        assert_eq!(run(args), (1, String::new(), refusal.into()), "{args:?}");
    }
}

#[test]
fn options_that_mean_nothing_are_refused() {
    for (args, message) in [
        (
            &["promote", "--rules", "numpy", "--strict", "int8"][..],
            "invalid --strict: jax_numpy_dtype_promotion='strict' applies to --rules jax only; numpy has no strict mode",
        ),
        (
            &["promote", "--rules", "jax-lax", "--strict", "int8"],
            "invalid --strict: jax_numpy_dtype_promotion='strict' applies to --rules jax only; jax-lax has no strict mode",
        ),
        (
            &["table", "--rules", "torch", "--x64"],
            "invalid --x64: jax_enable_x64 applies to --rules jax and jax-lax only; torch has no x64 mode",
        ),
        (
            &["promote", "--default-float", "float64", "int8"],
            "invalid --default-float: torch.set_default_dtype applies to --rules torch only; jax's default float is fixed",
        ),
        (
            &["graph", "--op", "add"],
            "invalid --op: graph draws the promotion lattice, which no op changes; `dtype-lattice table --op add` shows the op",
        ),
        (
            &["audit", "--markdown"],
            "invalid --markdown: it formats --compare's table; give --compare too",
        ),
        (
            &["random", "bits", "--seed", "1", "--minval", "0"],
            "invalid --minval: bits takes no --minval (uniform and randint do)",
        ),
        (
            &["random", "key", "--seed", "1", "--num", "3"],
            "invalid --num: key takes no --num (split, bits, uniform, normal, randint and 31 more do)",
        ),
        (
            &["random", "uniform", "--seed", "1", "--p", "0.5"],
            "invalid --p: uniform takes no --p (bernoulli, geometric, choice, generalized-normal, ball and 2 more do)",
        ),
        (
            &["random", "normal", "--seed", "1", "--width", "8"],
            "invalid --width: normal takes no --width (bits does)",
        ),
        (
            &["random", "bits", "--seed", "1", "--data", "3"],
            "invalid --data: bits takes no --data (fold-in does)",
        ),
        (
            &["random", "bernoulli", "--seed", "1", "--dtype", "float32"],
            "invalid --dtype: bernoulli takes no --dtype (bits, uniform, normal, randint, exponential and 27 more do)",
        ),
    ] {
        let (code, out, err) = run(args);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (2, "", format!("error: {message}\n").as_str()),
            "{args:?}"
        );
    }
    // --out writes raw values; --json asks for JSON on stdout: one or the other.
    let (code, _, err) = run(&[
        "random", "bits", "--seed", "1", "--num", "2", "--json", "--out", "x.bin",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn json_errors_are_json_on_stdout_for_every_command() {
    assert_eq!(
        json_error(&["table", "--format", "json", "--types", "flaot32"]).1,
        "UnknownDtype"
    );
    assert_eq!(
        json_error(&["table", "--format", "json", "--types", ","]),
        (
            2,
            "EmptyOperands".into(),
            "at least one operand is required".into()
        )
    );
    assert_eq!(
        json_error(&["table", "--format", "json", "--rules", "numpy", "--strict"]).1,
        "InvalidArgument"
    );
    let (code, kind, message) = json_error(&["check", "--json", "no/such/file.json"]);
    assert_eq!((code, kind.as_str()), (2, "InvalidDefinition"));
    assert!(message.contains("no/such/file.json"), "{message}");
    assert_eq!(
        json_error(&["audit", "--json", "--types", "int9"]).1,
        "UnknownDtype"
    );
    assert_eq!(
        json_error(&["audit", "--json", "--compare", "--lattice", "no/such.json"]).1,
        "InvalidDefinition"
    );
    assert_eq!(
        json_error(&["promote", "--json", "--rules", "numpy", "--strict", "int8"]).1,
        "InvalidArgument"
    );
    assert_eq!(
        json_error(&["random", "bits", "--seed", "1", "--width", "12", "--json"]).1,
        "InvalidArgument"
    );
    // Without JSON, errors stay plain text on stderr.
    let (code, out, err) = run(&["table", "--types", "flaot32"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.starts_with("error: unknown dtype \"flaot32\""), "{err}");
}

/// Python's repr of a float32 value.
fn py_repr(x: f32) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        serde_json::json!(f64::from(x)).to_string()
    }
}

#[test]
fn random_text_prints_inf_and_nan_as_python_does() {
    for bounds in [
        &["--maxval", "inf"][..],
        &["--minval", "-inf", "--maxval", "inf"],
        &["--minval", "-1", "--maxval", "1"],
    ] {
        let args: Vec<&str> = ["random", "uniform", "--seed", "1", "--num", "2"]
            .iter()
            .chain(bounds)
            .copied()
            .collect();
        let (code, text, _) = run(&args);
        assert_eq!(code, 0);
        // --json keeps JSON (null for inf and NaN), with the bit patterns alongside.
        let (_, json, _) = run(&[&args[..], &["--json"]].concat());
        let v: Value = serde_json::from_str(&json).unwrap();
        let want: Vec<String> = v["bits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| py_repr(f32::from_bits(b.as_u64().unwrap() as u32)))
            .collect();
        assert_eq!(text.lines().collect::<Vec<_>>(), want, "{bounds:?}");
        assert!(!text.contains("null"), "{text}");
    }
    let (_, text, _) = run(&[
        "random", "uniform", "--seed", "1", "--num", "2", "--maxval", "inf",
    ]);
    assert_eq!(text, "inf\ninf\n");
}

#[test]
fn random_bits_writes_to_a_pipe() {
    let (code, text, _) = run(&["random", "bits", "--seed", "7", "--num", "5"]);
    assert_eq!(code, 0);
    let want: Vec<u8> = text
        .lines()
        .flat_map(|l| l.parse::<u32>().unwrap().to_le_bytes())
        .collect();
    // The test's stdout is a pipe: /dev/stdout cannot seek.
    let out = Command::cargo_bin("dtype-lattice")
        .unwrap()
        .args([
            "random",
            "bits",
            "--seed",
            "7",
            "--num",
            "5",
            "--out",
            "/dev/stdout",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, want);
}

#[test]
fn shapes_with_an_empty_component_are_refused() {
    let (code, out, err) = run(&["random", "bits", "--seed", "1", "--shape", "3,,2"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "error: invalid shape: \"3,,2\" has an empty component (write D1,D2,...)\n"
    );
    assert_eq!(
        run(&["random", "bits", "--seed", "1", "--shape", ",3"]).0,
        2
    );
    assert_eq!(run(&["random", "key", "--key", "1,,2"]).0, 2);
    // Python's one-element tuple (3,) and the empty shape still work.
    assert_eq!(
        run(&["random", "bits", "--seed", "1", "--shape", "3,"])
            .1
            .lines()
            .count(),
        3
    );
    assert_eq!(
        run(&["random", "bits", "--seed", "1", "--shape", ""])
            .1
            .lines()
            .count(),
        1
    );
}
