//! The toolkit's CLI contract: `check`, `audit`, `graph`, `report`; exit codes 0 (yes),
//! 1 (a refusal or a failed check), 2 (unusable input).

use std::path::PathBuf;

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

fn example(name: &str) -> String {
    format!(
        "{}/../../examples/lattices/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn temp(name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dtype-lattice-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

#[test]
fn check_exit_codes_and_json() {
    let (code, out, _) = run(&["check", &example("jax.json")]);
    assert_eq!(code, 0);
    assert!(out.contains("lattice: yes"), "{out}");
    let (code, out, _) = run(&["check", "--json", &example("non-lattice-right.json")]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["acyclic"], true);
    assert_eq!(v["undefined_pairs"], serde_json::json!([["C", "D"]]));
    assert_eq!(
        v["ambiguous_pairs"],
        serde_json::json!([{"pair": ["A", "B"], "minimal_upper_bounds": ["C", "D"], "minimal_upper_bound_count": 2}])
    );
    assert_eq!(v["undefined_pair_count"], 1);
    assert_eq!(v["ambiguous_pair_count"], 1);
    assert_eq!(v["redundant_edge_count"], 0);
    assert_eq!(v["is_partial_lattice"], false);
    assert_eq!(v["is_lattice"], false);
    // TOML works the same.
    assert_eq!(run(&["check", &example("python.toml")]).0, 0);
}

#[test]
fn a_cycle_is_a_verdict_not_an_error() {
    let p = temp(
        "cycle.json",
        br#"{"edges": {"a": ["b"], "b": ["c"], "c": ["a"]}}"#,
    );
    let (code, out, _) = run(&["check", "--json", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["acyclic"], false);
    assert_eq!(v["cycle"], serde_json::json!(["a", "b", "c"]));
    let (code, out, _) = run(&["check", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        out.contains("acyclic: no (cycle a -> b -> c -> a)"),
        "{out}"
    );
}

#[test]
fn unusable_files_exit_2_with_a_clear_error() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "bad.json",
            b"{\"edges\": [1, 2]}".to_vec(),
            "invalid definition",
        ),
        (
            "utf8.json",
            b"{\"edges\": {\"a\xff\": []}}".to_vec(),
            "invalid UTF-8",
        ),
        ("none.json", b"{\"name\": \"x\"}".to_vec(), "no \"edges\""),
        (
            "both.json",
            br#"{"edges": {}, "table": {}}"#.to_vec(),
            "not both",
        ),
        (
            "dup.json",
            br#"{"edges": {"a": [], "a": ["b"]}}"#.to_vec(),
            "duplicate key",
        ),
        (
            "blank.json",
            br#"{"edges": {" ": ["b"]}}"#.to_vec(),
            "non-blank",
        ),
        ("bad.toml", b"[edges\nint = 3".to_vec(), "not valid TOML"),
        (
            "table.json",
            br#"{"table": {"a": {"b": "a"}}}"#.to_vec(),
            "is not a row",
        ),
    ];
    for (name, contents, needle) in cases {
        let p = temp(name, &contents);
        let (code, out, err) = run(&["check", p.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(needle), "{name}: {err}");
    }
    let (code, _, err) = run(&["check", "/no/such/file.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"), "{err}");
    // More nodes than the engine takes.
    let big: String = (0..5000)
        .map(|i| format!("\"n{i}\": [\"n{}\"]", i + 1))
        .collect::<Vec<_>>()
        .join(",");
    let p = temp("big.json", format!("{{\"edges\": {{{big}}}}}").as_bytes());
    let (code, _, err) = run(&["check", p.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("at most 4096"), "{err}");
}

#[test]
fn check_decides_tables_with_counterexamples() {
    // NumPy's int8/uint8/float16 corner: commutative, not associative.
    let p = temp(
        "np.json",
        br#"{"table": {
        "int8": {"int8": "int8", "uint8": "int16", "float16": "float16", "int16": "int16", "float32": "float32"},
        "uint8": {"int8": "int16", "uint8": "uint8", "float16": "float16", "int16": "int16", "float32": "float32"},
        "float16": {"int8": "float16", "uint8": "float16", "float16": "float16", "int16": "float32", "float32": "float32"},
        "int16": {"int8": "int16", "uint8": "int16", "float16": "float32", "int16": "int16", "float32": "float32"},
        "float32": {"int8": "float32", "uint8": "float32", "float16": "float32", "int16": "float32", "float32": "float32"}}}"#,
    );
    let (code, out, _) = run(&["check", "--json", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["commutative"], true);
    assert_eq!(v["associative"], false);
    assert_eq!(v["representable_as_lattice"], false);
    assert_eq!(
        v["non_associative"],
        serde_json::json!({"types": ["int8", "uint8", "float16"], "results": ["float32", "float16"]})
    );
    // A table that is a join gives back its lattice.
    let p = temp(
        "py.toml",
        b"[table.int]\nint = \"int\"\nfloat = \"float\"\n[table.float]\nint = \"float\"\nfloat = \"float\"\n",
    );
    let (code, out, _) = run(&["check", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("int -> float"), "{out}");
}

#[test]
fn audit_prints_the_criteria_and_compares() {
    let (code, out, _) = run(&["audit", "--rules", "numpy", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["associative"], false);
    for k in [
        "component_loss",
        "overflow",
        "magnitude_loss",
        "precision_loss",
        "widening",
    ] {
        assert!(v["criteria"][k].is_array(), "{k}");
    }
    let (code, out, _) = run(&["audit", "--rules", "jax", "--x64"]);
    assert_eq!(code, 0);
    assert!(out.contains("associative: yes"), "{out}");
    let (code, out, _) = run(&[
        "audit",
        "--compare",
        "--x64",
        "--json",
        "--lattice",
        &example("mine.toml"),
    ]);
    assert_eq!(code, 0);
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.len(), 11);
    assert_eq!(rows[10]["subject"], "mine (lattice file)");
    let (code, out, _) = run(&["audit", "--compare", "--markdown"]);
    assert_eq!(code, 0);
    assert!(out.contains("| numpy | 15 |"), "{out}");
    assert!(out.contains("| numpy-legacy | 14 |"), "{out}");
    // A lattice file alone; bad input.
    let (code, out, _) = run(&["audit", "--lattice", &example("option2.json")]);
    assert_eq!(code, 0);
    assert!(out.starts_with("audit: option2"), "{out}");
    assert_eq!(run(&["audit", "--types", "int9"]).0, 2);
    assert_eq!(
        run(&["audit", "--rules", "numpy-legacy", "--types", "bfloat16"]).0,
        1
    );
}

#[test]
fn graph_formats_and_highlight() {
    let (code, svg, _) = run(&["graph", "--x64"]);
    assert_eq!(code, 0);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let (code, dot, _) = run(&[
        "graph",
        "--lattice",
        &example("jax.json"),
        "--format",
        "dot",
        "--highlight",
        "int8,uint8",
    ]);
    assert_eq!(code, 0);
    assert!(dot.contains("\"int8\" -> \"int16\" [color="), "{dot}");
    // The join is filled gold, the two starting nodes outlined.
    assert!(dot.contains("fillcolor=\"#ffd966\""), "{dot}");
    let join_line = dot.lines().find(|l| l.contains("#ffd966")).unwrap();
    assert!(
        join_line.trim_start().starts_with("\"int16\""),
        "{join_line}"
    );
    let (code, mm, _) = run(&["graph", "--format", "mermaid", "--names", "short"]);
    assert_eq!(code, 0);
    assert!(
        mm.starts_with("graph LR") && mm.contains("[\"i*\"]"),
        "{mm}"
    );
    // No join: a refusal; not a lattice: a refusal; unknown node: unusable.
    let (code, _, err) = run(&[
        "graph",
        "--lattice",
        &example("non-lattice-right.json"),
        "--highlight",
        "A,B",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no least upper bound"), "{err}");
    assert_eq!(run(&["graph", "--rules", "megengine"]).0, 1);
    let (code, _, err) = run(&["graph", "--highlight", "int8,nope"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(run(&["graph", "--highlight", "int8"]).0, 2);
}

#[test]
fn report_writes_one_self_contained_page() {
    let p = temp("r.html", b"");
    let (code, _, err) = run(&["report", "--x64", "-o", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&p).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // No network: nothing is fetched.
    for needle in ["http://", "https://", "src=", "<link"] {
        let hits: Vec<&str> = html.matches(needle).collect();
        let allowed = if needle == "http://" {
            html.matches("http://www.w3.org/2000/svg").count()
        } else {
            0
        };
        assert_eq!(hits.len(), allowed, "{needle}");
    }
    assert_eq!(html.matches("<table class=\"promotion\">").count(), 10);
    assert!(html.contains("option3") && html.contains("non-lattice-right"));
}

#[test]
fn graph_draws_tensorflows_lattice() {
    let (code, out, err) = run(&[
        "graph",
        "--rules",
        "tensorflow",
        "--format",
        "mermaid",
        "--highlight",
        "uint64,int64",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.iter().filter(|l| l.contains("[\"")).count(), 20);
    // uint64 and int64 meet in weak float64, drawn as the join (gold).
    let id = lines
        .iter()
        .find_map(|l| l.strip_suffix("[\"~float64\"]"))
        .unwrap()
        .trim();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("  style {id} fill:#ffd966"))),
        "{out}"
    );
    let (code, out, _) = run(&[
        "graph",
        "--rules",
        "tensorflow",
        "--format",
        "dot",
        "--names",
        "short",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("\"~f8\""), "{out}");
    // SAFE refuses joins the lattice has: not a lattice.
    assert_eq!(run(&["graph", "--rules", "tensorflow-safe"]).0, 1);
}
