//! `eval`: the README's examples print what they say, the JSON contract, exit codes, and
//! unusable input answered (never a panic).

use assert_cmd::Command;
use serde_json::Value;

fn bin() -> Command {
    Command::cargo_bin("dtype-lattice").unwrap()
}

/// Runs `eval ARGS`; returns (exit code, stdout + stderr).
fn eval(args: &[&str]) -> (i32, String) {
    let out = bin().arg("eval").args(args).output().unwrap();
    (
        out.status.code().expect("exited"),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The README's shell examples in the section headed `heading`: each command after `$ `
/// with the output lines that follow it (up to the next command or the block's end).
pub(crate) fn readme_commands(heading: &str) -> Vec<(String, String)> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let start = readme.find(heading).unwrap();
    let end = start + readme[start + 3..].find("\n## ").unwrap();
    let mut lines = readme[start..end].lines().peekable();
    let mut out = Vec::new();
    while let Some(line) = lines.next() {
        let Some(cmd) = line.strip_prefix("$ ") else {
            continue;
        };
        let mut expected = Vec::new();
        while let Some(next) = lines.peek() {
            if next.starts_with('$') || next.starts_with("```") {
                break;
            }
            expected.push(lines.next().unwrap());
        }
        out.push((cmd.to_string(), expected.join("\n")));
    }
    out
}

/// The README's `eval` examples print what they say.
#[test]
fn readme_eval_examples_hold() {
    let mut checked = 0;
    for (cmd, expected) in readme_commands("## Arrays") {
        let Some(cmd) = cmd.strip_prefix("dtype-lattice ") else {
            continue;
        };
        let args: Vec<&str> = cmd.split_whitespace().collect();
        let out = bin().args(&args).output().unwrap();
        let got = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(got.trim_end(), expected, "$ dtype-lattice {cmd}");
        checked += 1;
    }
    assert!(checked >= 12, "{checked}");
}

#[test]
fn json_has_the_documented_fields_in_order() {
    let (code, out) = eval(&["--json", "add", "bfloat16[1.5,2]", "2.0"]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        r#"{"dtype":"bfloat16","weak_type":false,"shape":[2],"values":[3.5,4.0],"bits":[16480,16512]}"#
    );
    let (_, out) = eval(&["--json", "true_divide", "float32[1,-1,0]", "0"]);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["values"], serde_json::json!(["inf", "-inf", "nan"]));
    let (_, out) = eval(&["--json", "multiply", "complex64((1+2j))", "2"]);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["values"], serde_json::json!([[2.0, 4.0]]));
    assert_eq!(
        v["bits"],
        serde_json::json!([[0x4000_0000u32, 0x4080_0000u32]])
    );
}

#[test]
fn refusals_and_unusable_input_have_their_exit_codes() {
    // A refusal: the library's exception, exit 1.
    let (code, out) = eval(&["--json", "bitwise_and", "float32[1]", "float32[1]"]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["error"]["kind"], "TypeError");
    // Unusable input: exit 2, never a panic.
    for bad in [
        &["add", "int8[1,[2]]", "1"][..],
        &["add", "int8[1", "1"],
        &["add", "int9[1]", "1"],
        &["add", "int8[1,2", "]"],
        &["nope", "1"],
        &["add", "~3"],
        &["add", "int8[1e999999]", "1"],
    ] {
        let (code, out) = eval(bad);
        assert!(code == 1 || code == 2, "{bad:?}: {code} {out}");
        assert!(!out.contains("panicked"), "{bad:?}: {out}");
    }
    assert_eq!(eval(&["--rules", "numpy", "--x64", "add", "1", "2"]).0, 2);
}

#[test]
fn batch_answers_every_line_in_order() {
    let out = bin()
        .args(["eval", "--batch"])
        .write_stdin("add int8[1] 2\nsin\nfoo 1\n\nsum int8[[1,2],[3,4]]\n")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["values"], serde_json::json!([3]));
    assert!(lines[1]["error"].is_object() && lines[2]["error"].is_object());
    assert_eq!(lines[4]["dtype"], "int32");
    assert_eq!(lines[4]["values"], serde_json::json!([10]));
    assert_eq!(out.status.code(), Some(2));
}
