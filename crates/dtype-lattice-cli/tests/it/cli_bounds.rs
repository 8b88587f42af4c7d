//! Bounded time and memory: inputs that once took minutes, gigabytes or aborted now answer
//! quickly (listings capped, totals exact) or are refused up front with exit code 2 and the
//! documented limit. Every input is generated here.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

/// Runs the binary; returns (exit code, stdout, stderr, wall time).
fn run_with(args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String, Duration) {
    let t = Instant::now();
    let out = Command::cargo_bin("dtype-lattice")
        .unwrap()
        .args(args)
        .write_stdin(stdin)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().expect("exited, not killed"),
        out.stdout,
        String::from_utf8(out.stderr).unwrap(),
        t.elapsed(),
    )
}

fn run(args: &[&str]) -> (i32, Vec<u8>, String, Duration) {
    run_with(args, b"")
}

fn temp(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dtype-lattice-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

/// A small deterministic generator (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// `{"edges": {"n<i>": [...]}}` from a list of targets per node.
fn edges_json(targets: &[Vec<usize>]) -> String {
    let rows: Vec<String> = targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let t: Vec<String> = t.iter().map(|j| format!("\"n{j}\"")).collect();
            format!("\"n{i}\": [{}]", t.join(", "))
        })
        .collect();
    format!("{{\"edges\": {{{}}}}}", rows.join(", "))
}

/// A DAG with `per` random edges from each node to later nodes.
fn random_dag(n: usize, per: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = Lcg(seed);
    (0..n)
        .map(|i| {
            let mut t: Vec<usize> = if i + 1 < n {
                (0..per).map(|_| i + 1 + rng.below(n - i - 1)).collect()
            } else {
                Vec::new()
            };
            t.sort_unstable();
            t.dedup();
            t
        })
        .collect()
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn check_counts_every_redundant_edge_of_a_complete_dag() {
    // Every edge i → j (i < j) of 600 nodes: a chain with all 178,701 implied edges given.
    let n = 600;
    let targets: Vec<Vec<usize>> = (0..n).map(|i| (i + 1..n).collect()).collect();
    let f = temp("complete600.json", &edges_json(&targets));
    let (code, out, _, t) = run(&["check", "--json", f.to_str().unwrap()]);
    assert_eq!(code, 0, "a chain is a lattice");
    let v = json(&out);
    let all = n * (n - 1) / 2;
    assert_eq!(v["redundant_edge_count"], all - (n - 1));
    let listed = v["redundant_edges"].as_array().unwrap();
    assert_eq!(listed.len(), 100);
    // The first ones in file order: n0's edges past its cover n1.
    assert_eq!(listed[0], serde_json::json!(["n0", "n2"]));
    assert_eq!(listed[99], serde_json::json!(["n0", "n101"]));
    assert!(t < Duration::from_secs(20), "{t:?}");
    // The text names the total.
    let (code, out, _, _) = run(&["check", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(&format!("… {} more", all - (n - 1) - 8)),
        "{text}"
    );
}

#[test]
fn check_json_on_a_random_dag_is_capped_with_exact_totals() {
    let targets = random_dag(1000, 5, 7);
    let f = temp("random1000.json", &edges_json(&targets));
    let (code, out, _, t) = run(&["check", "--json", f.to_str().unwrap()]);
    assert_eq!(code, 1, "not a lattice");
    assert!(out.len() < 1 << 20, "{} bytes of JSON", out.len());
    let v = json(&out);
    let ambiguous = v["ambiguous_pairs"].as_array().unwrap();
    let undefined = v["undefined_pairs"].as_array().unwrap();
    let count = |k: &str| v[k].as_u64().unwrap() as usize;
    assert_eq!(ambiguous.len(), count("ambiguous_pair_count").min(100));
    assert_eq!(undefined.len(), count("undefined_pair_count").min(100));
    assert!(count("ambiguous_pair_count") > 100);
    for p in ambiguous {
        let bounds = p["minimal_upper_bounds"].as_array().unwrap().len();
        let total = p["minimal_upper_bound_count"].as_u64().unwrap() as usize;
        assert!(bounds >= 2 && bounds == total.min(100));
    }
    assert_eq!(v["is_partial_lattice"], false);
    assert!(t < Duration::from_secs(20), "{t:?}");
}

#[test]
fn check_lists_the_first_ambiguous_pairs_in_file_order_and_counts_them_all() {
    // k bottoms below the same two tops: every pair of bottoms is ambiguous, the two tops
    // are undefined.
    let k = 30;
    let mut targets: Vec<Vec<usize>> = (0..k).map(|_| vec![k, k + 1]).collect();
    targets.push(Vec::new());
    targets.push(Vec::new());
    let f = temp("bipartite.json", &edges_json(&targets));
    let (code, out, _, _) = run(&["check", "--json", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    let v = json(&out);
    assert_eq!(v["ambiguous_pair_count"], k * (k - 1) / 2);
    assert_eq!(v["undefined_pair_count"], 1);
    let first = &v["ambiguous_pairs"][0];
    assert_eq!(first["pair"], serde_json::json!(["n0", "n1"]));
    assert_eq!(
        first["minimal_upper_bounds"],
        serde_json::json!([format!("n{k}"), format!("n{}", k + 1)])
    );
    let listed = v["ambiguous_pairs"].as_array().unwrap();
    assert_eq!(listed.len(), 100);
    // In file order: n0 with each later bottom, then n1, ...
    assert_eq!(
        listed[k - 2]["pair"],
        serde_json::json!(["n0", format!("n{}", k - 1)])
    );
    assert_eq!(listed[k - 1]["pair"], serde_json::json!(["n1", "n2"]));
}

/// A `{"table": ...}` of `n` types with random results.
fn random_table(n: usize, seed: u64) -> String {
    let mut rng = Lcg(seed);
    let rows: Vec<String> = (0..n)
        .map(|a| {
            let cells: Vec<String> = (0..n)
                .map(|b| format!("\"t{b}\": \"t{}\"", rng.below(n)))
                .collect();
            format!("\"t{a}\": {{{}}}", cells.join(", "))
        })
        .collect();
    format!("{{\"table\": {{{}}}}}", rows.join(", "))
}

#[test]
fn audit_of_a_random_table_counts_triples_and_lists_a_few() {
    let n = 96;
    let f = temp("table96.json", &random_table(n, 3));
    let (code, out, _, t) = run(&["audit", "--json", "--lattice", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v = json(&out);
    let count = v["non_associative_triple_count"].as_u64().unwrap();
    let listed = v["non_associative_triples"].as_array().unwrap();
    assert!(count > 100 && count <= (n * n * n) as u64);
    assert_eq!(listed.len(), 100);
    assert_eq!(v["associative"], false);
    assert!(v["non_commutative_pairs"].as_array().unwrap().len() <= 100);
    assert!(t < Duration::from_secs(20), "{t:?}");
    // The text prints the same total.
    let (_, out, _, _) = run(&["audit", "--lattice", f.to_str().unwrap()]);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(&format!("no, {count} triples")), "{text}");
}

#[test]
fn audit_refuses_a_table_over_the_type_limit() {
    let f = temp("table513.json", &random_table(513, 5));
    let (code, _, err, _) = run(&["audit", "--lattice", f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("at most 512"), "{err}");
}

#[test]
fn audit_of_a_long_chain_is_associative_without_listing_triples() {
    // More nodes than the cubic check takes: a lattice's join is associative.
    let n = 1024;
    let targets: Vec<Vec<usize>> = (0..n)
        .map(|i| if i + 1 < n { vec![i + 1] } else { Vec::new() })
        .collect();
    let f = temp("chain1024.json", &edges_json(&targets));
    let (code, out, _, t) = run(&["audit", "--json", "--lattice", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v = json(&out);
    assert_eq!(v["associative"], true);
    assert_eq!(v["non_associative_triple_count"], 0);
    assert_eq!(v["refused_pair_count"], 0);
    assert!(t < Duration::from_secs(20), "{t:?}");
}

#[test]
fn audit_refuses_a_large_non_lattice_up_front() {
    // 600 nodes whose join has ambiguous pairs: associativity would need 600³ triples.
    let targets = random_dag(600, 3, 11);
    let f = temp("random600.json", &edges_json(&targets));
    let (code, _, err, t) = run(&["audit", "--lattice", f.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("at most 512 types"), "{err}");
    assert!(t < Duration::from_secs(20), "{t:?}");
}

#[test]
fn graph_of_a_dense_lattice_file_finishes() {
    // 60 bottoms below 60 tops, all joined by a top: 3,660 cover edges.
    let k = 60;
    let mut targets: Vec<Vec<usize>> = (0..k).map(|_| (k..2 * k).collect()).collect();
    targets.extend((k..2 * k).map(|_| vec![2 * k]));
    targets.push(Vec::new());
    let f = temp("dense.json", &edges_json(&targets));
    for format in ["svg", "dot", "mermaid"] {
        let (code, out, err, t) = run(&[
            "graph",
            "--format",
            format,
            "--lattice",
            f.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(!out.is_empty());
        assert!(t < Duration::from_secs(20), "{t:?}");
    }
}

#[test]
fn random_refuses_outputs_over_the_memory_and_print_limits() {
    // 2^32 keys: more than printed (2^24), more than held in memory (2^28): refused at once.
    let split = ["random", "split", "--seed", "1", "--num", "4294967296"];
    let split_out = [&split[..], &["--out", "/dev/null"]].concat();
    let uniform = "random uniform --seed 1 --shape 65536,65536 --out /dev/null";
    let uniform: Vec<&str> = uniform.split(' ').collect();
    for (args, limit) in [
        (&split[..], "at most 2^24"),
        (&split_out[..], "at most 2^28"),
        (&uniform[..], "at most 2^28"),
    ] {
        let (code, out, err, t) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(limit), "{err}");
        assert!(t < Duration::from_secs(10), "{t:?}");
    }
    // 2^25 values: computable, but not printed.
    let (code, _, err, _) = run(&["random", "bits", "--seed", "1", "--num", "33554432"]);
    assert_eq!(code, 2);
    assert!(err.contains("at most 2^24"), "{err}");
    // JSON answers with an error object.
    let (code, out, _, _) = run(&[
        "random", "bits", "--seed", "1", "--num", "33554432", "--json",
    ]);
    assert_eq!(code, 2);
    assert_eq!(json(&out)["error"]["kind"], "InvalidArgument");
    // Beyond 2^64 elements JAX's own NotImplementedError still answers.
    let (code, _, err, _) = run(&[
        "random",
        "bits",
        "--seed",
        "0",
        "--shape",
        "4294967296,4294967296,2",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("exceeding 2 ** 64"), "{err}");
}

#[test]
fn batch_answers_an_over_long_line_with_an_error_and_goes_on() {
    let mut input = vec![b'0'; 3 << 20];
    input.extend_from_slice(b"\nint8 uint8\n");
    let (code, out, _, _) = run_with(&["promote", "--batch"], &input);
    assert_eq!(code, 2);
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["error"]["kind"], "InvalidArgument");
    assert!(
        lines[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1 MiB")
    );
    assert_eq!(lines[1]["dtype"], "int16");
    // A line of exactly the limit is read.
    let mut input = b"int8".to_vec();
    input.resize(1 << 20, b' ');
    let (code, out, _, _) = run_with(&["promote", "--batch"], &input);
    assert_eq!(code, 0);
    assert_eq!(json(&out)["dtype"], "int8");
}

#[cfg(target_os = "linux")]
#[test]
fn batch_reading_an_endless_line_holds_little_memory() {
    let bin = assert_cmd::cargo::cargo_bin("dtype-lattice");
    let mut child = std::process::Command::new(bin)
        .args(["promote", "--batch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let chunk = vec![b'1'; 1 << 20];
    for _ in 0..64 {
        stdin.write_all(&chunk).unwrap();
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let rss_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    // End the line: one error object, exit 2.
    stdin.write_all(b"\n").unwrap();
    drop(stdin);
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(2));
    assert!(
        rss_kb < 32 << 10,
        "peak RSS {rss_kb} kB after 64 MiB of one line"
    );
}
