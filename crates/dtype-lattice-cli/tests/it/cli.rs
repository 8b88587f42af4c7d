//! The CLI contract: output formats, exit codes (0 answer, 1 refusal, 2 unusable input),
//! batch mode, bad input.

use assert_cmd::Command;
use serde_json::{Value, json};

fn cmd() -> Command {
    Command::cargo_bin("dtype-lattice").unwrap()
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = cmd().args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn promote_prints_the_result() {
    assert_eq!(
        run(&["promote", "int8", "uint8"]),
        (0, "int16\n".into(), String::new())
    );
    assert_eq!(run(&["promote", "int16", "2.5"]).1, "float32 (weak)\n");
    assert_eq!(
        run(&["promote", "--x64", "int16", "2.5"]).1,
        "float64 (weak)\n"
    );
    assert_eq!(
        run(&["promote", "--rules", "jax-numpy", "uint32", "int32"]).1,
        "int32\n"
    );
    assert_eq!(run(&["promote", "uint32", "int32", "--x64"]).1, "int64\n");
    assert_eq!(run(&["promote", "int8", "-200"]).1, "int8\n");
    assert_eq!(run(&["promote", "-1j", "float16"]).1, "complex64\n");
    assert_eq!(run(&["promote", "int8(3)", "-inf"]).1, "float32 (weak)\n");
    assert_eq!(run(&["promote", "True", "int"]).1, "int32 (weak)\n");
}

#[test]
fn promote_json_schema() {
    let (code, out, _) = run(&["promote", "--json", "~float16", "bfloat16"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v, json!({"dtype": "bfloat16", "weak_type": false}));

    let (code, out, _) = run(&["promote", "--json", "--strict", "float32", "int32"]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["error"]["kind"], "TypePromotionError");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("Input dtypes ('float32', 'int32') have no available implicit dtype promotion path when jax_numpy_dtype_promotion=strict."));
}

#[test]
fn refusals_exit_1_with_jax_wording() {
    let (code, out, err) = run(&["promote", "float8_e4m3fn", "float16"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains("8-bit floats do not support implicit promotion"),
        "{err}"
    );
    let (code, _, err) = run(&["promote", "int4", "int8"]);
    assert_eq!(code, 1);
    assert!(err.contains("1-bit, 2-bit and 4-bit integers"), "{err}");
    let (code, _, err) = run(&["promote", "--rules", "jax-lax", "int8", "int16"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("lax requires arguments to have the same dtypes, got int8, int16."),
        "{err}"
    );
    let (code, _, err) = run(&["promote", "complex32", "float16"]);
    assert_eq!(code, 1);
    assert!(err.contains("complex32"), "{err}");
}

#[test]
fn unusable_input_exits_2_with_a_clear_error() {
    let (code, _, err) = run(&["promote", "flaot32", "int8"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown dtype \"flaot32\"; did you mean float32"),
        "{err}"
    );
    let (code, _, err) = run(&["promote", "int8(300)"]);
    assert_eq!(code, 2);
    assert!(err.contains("300 is out of range for int8"), "{err}");
    let (code, _, err) = run(&["promote"]);
    assert_eq!(code, 2);
    assert!(err.contains("at least one operand"), "{err}");
    let (code, _, err) = run(&["promote", "1.2.3"]);
    assert_eq!(code, 2);
    assert!(err.contains("malformed operand \"1.2.3\""), "{err}");
    let (code, _, err) = run(&["promote", "--rules", "numpyy", "int8"]);
    assert_eq!(code, 2);
    assert!(err.contains("valid rule sets: jax, jax-numpy"), "{err}");
    let (code, out, _) = run(&["promote", "--json", "int9"]);
    assert_eq!(code, 2);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["error"]["kind"], "UnknownDtype");
}

#[cfg(unix)]
#[test]
fn invalid_utf8_arguments_are_unusable_input() {
    use std::os::unix::ffi::OsStrExt;
    let out = cmd()
        .arg("promote")
        .arg(std::ffi::OsStr::from_bytes(b"int\xff8"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn batch_answers_every_line_in_order() {
    let input = b"int8 uint8\n\nflaot32\nfloat32 int32\nfloat32 2.5\n\xff\xfe\nbool True\n";
    let out = cmd()
        .args(["promote", "--batch", "--strict"])
        .write_stdin(input.to_vec())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "the worst line decides");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 7);
    assert_eq!(lines[0]["error"]["kind"], "TypePromotionError");
    assert_eq!(lines[1]["error"]["kind"], "EmptyOperands");
    assert_eq!(lines[2]["error"]["kind"], "UnknownDtype");
    assert_eq!(lines[3]["error"]["kind"], "TypePromotionError");
    assert_eq!(lines[4], json!({"dtype": "float32", "weak_type": false}));
    assert_eq!(lines[5]["error"]["kind"], "MalformedOperand");
    assert_eq!(lines[6], json!({"dtype": "bool", "weak_type": false}));

    let out = cmd()
        .args(["promote", "--batch"])
        .write_stdin("int8 uint8\r\nint16 2.5")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"dtype\":\"int16\",\"weak_type\":false}\n{\"dtype\":\"float32\",\"weak_type\":true}\n"
    );
}

#[test]
fn table_formats() {
    let (code, text, _) = run(&["table", "--types", "int8,uint8,float", "--names", "long"]);
    assert_eq!(code, 0);
    assert!(
        text.starts_with("# jax promotion table (standard, x64 off)"),
        "{text}"
    );
    assert!(text.contains("\nuint8 int16 uint8 float\n"), "{text}");

    let (_, md, _) = run(&["table", "--types", "i1,u1,f*", "--format", "markdown"]);
    assert!(md.contains("| **i1** | i1 | i2 | f\\* |"), "{md}");

    let (_, csv, _) = run(&["table", "--types", "f8_e4m3fn,float16", "--format", "csv"]);
    assert!(
        csv.is_empty(),
        "unknown dtype in --types prints nothing: {csv}"
    );

    let (_, csv, _) = run(&[
        "table",
        "--types",
        "float8_e4m3fn,float16",
        "--format",
        "csv",
    ]);
    assert_eq!(
        csv,
        ",float8_e4m3fn,f2\nfloat8_e4m3fn,float8_e4m3fn,-\nf2,-,f2\n"
    );

    let (_, html, _) = run(&["table", "--types", "int,float", "--format", "html"]);
    assert!(
        html.contains("<tr><th>i*</th><td>i*</td><td>f*</td></tr>"),
        "{html}"
    );

    let (_, j, _) = run(&[
        "table",
        "--types",
        "int8,~int8,float32",
        "--format",
        "json",
        "--x64",
        "--strict",
    ]);
    let v: Value = serde_json::from_str(&j).unwrap();
    assert_eq!(v["rules"], "jax");
    assert_eq!(v["options"], json!({"strict": true, "x64": true}));
    assert_eq!(v["types"], json!(["int8", "~int8", "float32"]));
    assert_eq!(
        v["cells"][0][1],
        json!({"dtype": "int8", "weak_type": false})
    );
    assert_eq!(v["cells"][0][2]["error"]["kind"], "TypePromotionError");
    assert_eq!(
        v["cells"][1][1],
        json!({"dtype": "int64", "weak_type": true})
    );
}

#[test]
fn table_defaults_to_the_documentation_types() {
    let (code, text, _) = run(&["table", "--x64"]);
    assert_eq!(code, 0);
    let header: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "c8",
            "c16", "i*", "f*", "c*"
        ]
    );
    assert!(text.starts_with("# jax promotion table (standard, x64 on)"));
}

#[test]
fn oversized_tables_are_refused_as_unusable_input() {
    let types = vec!["int8"; 2000].join(",");
    let (code, out, err) = run(&["table", "--types", &types]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("at most 1024"), "{err}");
    let (code, _, err) = run(&["table", "--types", ","]);
    assert_eq!(code, 2);
    assert!(err.contains("at least one operand"), "{err}");
}

#[test]
fn op_and_diff() {
    assert_eq!(
        run(&[
            "promote",
            "--rules",
            "numpy",
            "--op",
            "true_divide",
            "int8",
            "int8"
        ])
        .1,
        "float64\n"
    );
    assert_eq!(
        run(&["promote", "--op", "true_divide", "int8", "int8"]).1,
        "float32\n"
    );
    assert_eq!(
        run(&[
            "promote", "--rules", "numpy", "--op", "less", "int8", "float32"
        ])
        .1,
        "bool\n"
    );
    let (code, _, err) = run(&[
        "promote", "--rules", "numpy", "--op", "subtract", "bool", "bool",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("numpy boolean subtract"), "{err}");
    let (code, _, err) = run(&["promote", "--op", "plus", "int8"]);
    assert_eq!(code, 2);
    assert!(err.contains("valid ops: add, subtract"), "{err}");
    let (code, _, err) = run(&["promote", "--rules", "numpy-legacy", "bfloat16", "int8"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("rules numpy-legacy cannot represent the operand bfloat16"),
        "{err}"
    );

    let (_, text, _) = run(&[
        "table",
        "--rules",
        "jax",
        "--x64",
        "--types",
        "int32,float16,bool",
        "--diff",
        "numpy",
    ]);
    assert!(text.contains("differs from numpy"), "{text}");
    assert!(text.contains("\ni4     i4 [f2]   i4\n"), "{text}");
    let (_, j, _) = run(&[
        "table",
        "--types",
        "int32,float16",
        "--diff",
        "numpy",
        "--format",
        "json",
        "--op",
        "add",
    ]);
    let v: Value = serde_json::from_str(&j).unwrap();
    assert_eq!(v["op"], "add");
    assert_eq!(v["diff"]["rules"], "numpy");
    assert_eq!(v["diff"]["cells"], json!([[false, true], [true, false]]));
    let (_, html, _) = run(&[
        "table",
        "--types",
        "int32,float16",
        "--diff",
        "numpy",
        "--format",
        "html",
    ]);
    assert!(
        html.contains("<td class=\"d\" style=\"background:#c8f0c8\">f2</td>"),
        "{html}"
    );
}
