//! The `jaxpr` command's contract: the corpus of JAX programs (tests/fixtures/jaxpr) through
//! the binary under every `--apply` the fixtures record, `--print`, `--out`, and the errors:
//! unusable input exits 2 naming the line and column or the entry at fault; JAX's errors exit 1
//! with JAX's class.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use dtype_lattice::DType;
use dtype_lattice_array::{Array, npy};
use serde_json::Value;

use crate::common;
use crate::fixture_arrays::{array, hex};

fn bin() -> Command {
    Command::cargo_bin("dtype-lattice").unwrap()
}

fn corpus() -> Vec<Value> {
    let text = std::fs::read_to_string(common::fixture_path("jaxpr/corpus.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn case(name: &str) -> Value {
    corpus().into_iter().find(|c| c["name"] == name).unwrap()
}

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("cli-jaxpr-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    /// A corpus program's text and arguments, as `{tag}.txt` and `{tag}.npz` (`a0…`).
    fn program(&self, tag: &str, c: &Value) -> (PathBuf, PathBuf) {
        let f = self.file(&format!("{tag}.txt"), c["text"].as_str().unwrap());
        (f, self.npz(&format!("{tag}.npz"), &[("a", &c["args"])]))
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// An .npz of `prefix0, prefix1, …` from fixture arrays.
    fn npz(&self, name: &str, groups: &[(&str, &Value)]) -> PathBuf {
        let mut owned: Vec<(String, Array)> = Vec::new();
        for (prefix, arrays) in groups {
            for (i, a) in arrays.as_array().unwrap().iter().enumerate() {
                let dtype = a["dtype"].as_str().unwrap();
                if dtype == "float0" {
                    continue;
                }
                // A key as `jax.random.key_data` gives it: uint32 words, last.
                let x = if dtype.starts_with("key<") {
                    let mut shape: Vec<usize> = array(a).shape().to_vec();
                    shape.push(2);
                    Array::from_bytes(DType::UInt32, &shape, &hex(a["hex"].as_str().unwrap()))
                        .unwrap()
                } else {
                    array(a)
                };
                owned.push((format!("{prefix}{i}"), x));
            }
        }
        let items: Vec<(&str, &Array)> = owned.iter().map(|(n, a)| (n.as_str(), a)).collect();
        let p = self.0.join(name);
        npy::write_npz(std::fs::File::create(&p).unwrap(), &items, false).unwrap();
        p
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn json(args: &[&str]) -> (i32, Value) {
    let out = bin().args(args).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let v = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    (out.status.code().unwrap(), v)
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every output's dtype and shape are JAX's, and its bits JAX's or within the library test's
/// tolerance (`jaxpr_reader.rs`; checked there bit by bit).
fn same_as_jax(what: &str, got: &Value, want: &Value) {
    let (got, want) = (got.as_array().unwrap(), want.as_array().unwrap());
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g["dtype"], w["dtype"], "{what}");
        assert_eq!(g["shape"], w["shape"], "{what}");
    }
}

#[test]
fn runs_the_corpus_under_every_transformation() {
    let dir = Dir::new("corpus");
    let mut ran = 0;
    for c in corpus() {
        let name = c["name"].as_str().unwrap();
        if !c["consts"].as_array().unwrap().is_empty() {
            continue;
        }
        let (f, args) = dir.program(name, &c);
        let x64 = c["x64"].as_bool().unwrap();
        let mut run = |apply: &[&str], npz: &Path, want: &Value| {
            let mut argv = vec!["jaxpr", p(&f), "--args", p(npz), "--json"];
            for a in apply {
                argv.extend(["--apply", a]);
            }
            if x64 {
                argv.push("--x64");
            }
            let (code, out) = json(&argv);
            if want.get("error").is_some() {
                assert_ne!(code, 0, "{name} {apply:?}");
                return;
            }
            if code == 1
                && out["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("read from a jaxpr's text")
            {
                return;
            }
            assert_eq!(code, 0, "{name} {apply:?}: {out}");
            same_as_jax(&format!("{name} {apply:?}"), &out, want);
            ran += 1;
        };
        run(&[], &args, &c["jit"]);
        run(&["jit"], &args, &c["jit"]);
        if let Some(g) = c.get("grad") {
            run(&["grad"], &args, g);
        }
        let batched = dir.npz(&format!("{name}-vmap.npz"), &[("a", &c["vmap_args"])]);
        run(&["vmap"], &batched, &c["vmap"]);
        let with_tangents = dir.npz(
            &format!("{name}-jvp.npz"),
            &[("a", &c["args"]), ("t", &c["jvp_tangents"])],
        );
        run(&["jvp"], &with_tangents, &c["jvp"]);
    }
    assert!(ran > 60, "{ran}");
}

#[test]
fn print_gives_the_text_back_and_the_transformed_jaxpr() {
    let dir = Dir::new("print");
    let c = case("mlp_layer");
    let text = c["text"].as_str().unwrap();
    let (f, args) = dir.program("f", &c);
    let out = bin().args(["jaxpr", p(&f), "--print"]).output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim_end(), text);
    let out = bin()
        .args([
            "jaxpr",
            p(&f),
            "--args",
            p(&args),
            "--apply",
            "grad",
            "--print",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim_end(),
        c["grad_text"].as_str().unwrap()
    );
}

#[test]
fn out_writes_the_outputs_to_an_npz() {
    let dir = Dir::new("out");
    let c = case("integer_arithmetic");
    let (f, args) = dir.program("f", &c);
    let out = dir.0.join("o.npz");
    bin()
        .args(["jaxpr", p(&f), "--args", p(&args), "--out", p(&out)])
        .assert()
        .success();
    let got = npy::read_npz(std::fs::File::open(&out).unwrap()).unwrap();
    let want = c["jit"].as_array().unwrap();
    assert_eq!(got.len(), want.len());
    for (i, ((name, g), w)) in got.iter().zip(want).enumerate() {
        assert_eq!(name, &format!("o{i}"));
        assert_eq!(g.as_bytes(), array(w).as_bytes(), "o{i}");
    }
}

#[test]
fn unusable_input_exits_2_naming_the_place() {
    let dir = Dir::new("bad");
    let c = case("mlp_layer");
    let f = dir.file("f.txt", c["text"].as_str().unwrap());
    let typo = dir.file(
        "typo.txt",
        "{ lambda ; a:f32[]. let b:f32[] = mull a a in (b,) }",
    );
    let (code, out) = json(&["jaxpr", p(&typo), "--json"]);
    assert_eq!(code, 2);
    let msg = out["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("line 1, column 35") && msg.contains("did you mean `mul`"),
        "{msg}"
    );
    // A primitive of JAX's this crate does not have (linear algebra: a later issue).
    let later = dir.file(
        "cholesky.txt",
        "{ lambda ; a:f32[3,3]. let b:f32[3,3] = cholesky a in (b,) }",
    );
    let (code, out) = json(&["jaxpr", p(&later), "--json"]);
    assert_eq!(code, 2);
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown primitive `cholesky`"),
        "{out}"
    );
    // A missing input, an extra one, a mistyped one: each named.
    let args = dir.npz("a.npz", &[("a", &c["args"])]);
    let (code, out) = json(&["jaxpr", p(&f), "--json"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out["error"]["message"].as_str().unwrap().contains("--args"),
        "{out}"
    );
    let mut two = c["args"].as_array().unwrap().clone();
    two.pop();
    let short = dir.npz("short.npz", &[("a", &Value::Array(two))]);
    let (code, out) = json(&["jaxpr", p(&f), "--args", p(&short), "--json"]);
    assert_eq!(code, 2);
    assert!(
        out["error"]["message"].as_str().unwrap().contains("no a2"),
        "{out}"
    );
    let extra = dir.npz("extra.npz", &[("a", &c["args"]), ("t", &c["args"])]);
    let (code, out) = json(&["jaxpr", p(&f), "--args", p(&extra), "--json"]);
    assert_eq!(code, 2);
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("t0 is not an input"),
        "{out}"
    );
    let swapped = dir.npz(
        "swapped.npz",
        &[(
            "a",
            &Value::Array(
                c["args"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .rev()
                    .cloned()
                    .collect(),
            ),
        )],
    );
    let (code, out) = json(&["jaxpr", p(&f), "--args", p(&swapped), "--json"]);
    assert_eq!(code, 2);
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a0 is float32[5]"),
        "{out}"
    );
    let (code, _) = json(&[
        "jaxpr",
        p(&f),
        "--args",
        p(&args),
        "--apply",
        "jvp",
        "--apply",
        "jit",
        "--json",
    ]);
    assert_eq!(code, 2);
    let (code, _) = json(&[
        "jaxpr",
        p(&f),
        "--args",
        p(&args),
        "--apply",
        "hessian",
        "--json",
    ]);
    assert_eq!(code, 2);
    let binary = dir.0.join("bin.txt");
    std::fs::write(&binary, [0xff, 0xfe, b'{']).unwrap();
    let (code, out) = json(&["jaxpr", p(&binary), "--json"]);
    assert_eq!(code, 2);
    assert!(
        out["error"]["message"].as_str().unwrap().contains("UTF-8"),
        "{out}"
    );
}

#[test]
fn jax_errors_exit_1_with_jax_class() {
    let dir = Dir::new("refused");
    let c = case("integer_arithmetic");
    let (f, args) = dir.program("f", &c);
    // A vector-valued function has no gradient.
    let (code, out) = json(&[
        "jaxpr",
        p(&f),
        "--args",
        p(&args),
        "--apply",
        "grad",
        "--json",
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["error"]["kind"], "TypeError");
    // Differentiating a custom function read from text: refused, named.
    let c = case("custom_jvp_softplus");
    let (f, args) = dir.program("g", &c);
    let (code, out) = json(&[
        "jaxpr",
        p(&f),
        "--args",
        p(&args),
        "--apply",
        "grad",
        "--json",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`softplus`"),
        "{out}"
    );
    // It still evaluates.
    let (code, _) = json(&["jaxpr", p(&f), "--args", p(&args), "--json"]);
    assert_eq!(code, 0);
}

/// The README's `jaxpr` examples print what they say (run from the repository's root, where
/// examples/jaxpr/ holds the files examples/jaxpr/make.py wrote with JAX).
#[test]
fn readme_jaxpr_examples_hold() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut checked = 0;
    for (cmd, expected) in crate::cli_eval::readme_commands("## Running JAX programs") {
        let (stdin, cmd) = match cmd.split_once(" | ") {
            Some((echo, rest)) => {
                let text = echo
                    .strip_prefix("echo '")
                    .unwrap()
                    .strip_suffix('\'')
                    .unwrap();
                (format!("{text}\n"), rest)
            }
            None => (String::new(), cmd.as_str()),
        };
        let args: Vec<&str> = cmd
            .strip_prefix("dtype-lattice ")
            .unwrap()
            .split_whitespace()
            .collect();
        let out = bin()
            .current_dir(root)
            .args(&args)
            .write_stdin(stdin)
            .output()
            .unwrap();
        let got = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(got.trim_end(), expected, "$ {cmd}");
        checked += 1;
    }
    assert_eq!(checked, 4);
}

/// A `while` whose predicate never fails (JAX runs it forever) stops at `--timeout` with exit
/// code 1; a timeout that is not a number of seconds is unusable input (2).
#[test]
fn a_loop_that_does_not_end_stops_at_the_timeout() {
    let text = "{ lambda ; . let\n    b:i32[] = while[\n      body_jaxpr={ lambda ; c:i32[]. let d:i32[] = add c 1:i32[] in (d,) }\n      body_nconsts=0\n      cond_jaxpr={ lambda ; e:i32[]. let f:bool[] = gt e -1:i32[] in (f,) }\n      cond_nconsts=0\n    ] 0:i32[]\n  in (b,) }";
    for apply in [&[][..], &["--apply", "jit"][..]] {
        let start = std::time::Instant::now();
        let out = bin()
            .args(["jaxpr", "-", "--timeout", "0.3"])
            .args(apply)
            .write_stdin(text)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{apply:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("RuntimeError: the computation ran past its deadline"),
            "{err}"
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }
    let out = bin()
        .args(["jaxpr", "-", "--timeout", "-1"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
