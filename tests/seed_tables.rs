//! The tables of the seed documents, reproduced by the CLI (`tests/fixtures/seed_tables/`
//! is extracted from `../shared/seeds/` by `tools/extract_seed_tables.py`).

mod common;

use assert_cmd::Command;
use serde::Deserialize;

#[derive(Deserialize)]
struct SeedTable {
    types: Vec<String>,
    cells: Vec<Vec<String>>,
}

fn seed(name: &str) -> SeedTable {
    let text = std::fs::read_to_string(common::fixture_path(&format!("seed_tables/{name}")))
        .expect("seed table");
    serde_json::from_str(&text).expect("seed table JSON")
}

/// Runs `dtype-lattice table ARGS --format csv` and returns (header, rows).
fn csv_table(args: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let out = Command::cargo_bin("dtype-lattice")
        .unwrap()
        .arg("table")
        .args(args)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>());
    let header = lines.next().unwrap()[1..].to_vec();
    let rows = lines.map(|r| r[1..].to_vec()).collect();
    (header, rows)
}

fn assert_same_table(name: &str, want: &SeedTable, header: &[String], rows: &[Vec<String>]) {
    assert_eq!(header, want.types.as_slice(), "{name}: header");
    let mut diffs = Vec::new();
    for (i, (got_row, want_row)) in rows.iter().zip(&want.cells).enumerate() {
        for (j, (g, w)) in got_row.iter().zip(want_row).enumerate() {
            if g != w {
                diffs.push(format!(
                    "({}, {}): got {g}, want {w}",
                    want.types[i], want.types[j]
                ));
            }
        }
    }
    assert_eq!(rows.len(), want.cells.len(), "{name}: rows");
    assert!(
        diffs.is_empty(),
        "{name}: {} cells differ: {diffs:?}",
        diffs.len()
    );
}

#[test]
fn jax_documentation_table_with_x64() {
    let want = seed("jax_doc_x64.json");
    let (header, rows) = csv_table(&["--rules", "jax", "--x64"]);
    assert_same_table("JAX documentation", &want, &header, &rows);
}

/// The appendix names types by bit width (u8 = uint8, f16 = float16, c64 = complex64).
fn appendix(name: &str) -> SeedTable {
    let want = seed(name);
    let rename = |s: &str| -> String {
        let map = [
            ("b", "b1"),
            ("u8", "u1"),
            ("u16", "u2"),
            ("u32", "u4"),
            ("u64", "u8"),
            ("i8", "i1"),
            ("i16", "i2"),
            ("i32", "i4"),
            ("i64", "i8"),
            ("bf16", "bf"),
            ("f16", "f2"),
            ("f32", "f4"),
            ("f64", "f8"),
            ("c64", "c8"),
            ("c128", "c16"),
        ];
        map.iter()
            .find(|(k, _)| *k == s)
            .map_or(s.to_string(), |(_, v)| v.to_string())
    };
    SeedTable {
        types: want.types.iter().map(|s| rename(s)).collect(),
        cells: want
            .cells
            .iter()
            .map(|r| r.iter().map(|s| rename(s)).collect())
            .collect(),
    }
}

#[test]
fn design_note_appendix_jax_numpy_table() {
    let (header, rows) = csv_table(&["--rules", "jax-numpy", "--x64", "--op", "add"]);
    assert_same_table(
        "appendix jax.numpy",
        &appendix("appendix_jax_numpy.json"),
        &header,
        &rows,
    );
}

#[test]
fn design_note_appendix_jax_lax_table() {
    let (header, rows) = csv_table(&["--rules", "jax-lax", "--x64", "--op", "add"]);
    assert_same_table(
        "appendix jax.lax",
        &appendix("appendix_jax_lax.json"),
        &header,
        &rows,
    );
}

#[test]
fn design_note_appendix_numpy_table() {
    let (header, rows) = csv_table(&["--rules", "numpy", "--op", "add"]);
    assert_same_table(
        "appendix NumPy",
        &appendix("appendix_numpy.json"),
        &header,
        &rows,
    );
}

#[test]
fn without_x64_the_table_canonicalises_64_bit_types() {
    let (header, rows) = csv_table(&["--rules", "jax"]);
    let at = |r: &str, c: &str| {
        let (i, j) = (
            header.iter().position(|h| h == r).unwrap(),
            header.iter().position(|h| h == c).unwrap(),
        );
        rows[i][j].clone()
    };
    // uint32 × int32 stays 32-bit (JAX's x32 lattice patch), int64 arrays become int32.
    assert_eq!(at("u4", "i4"), "i4");
    assert_eq!(at("i8", "i8"), "i4");
    assert_eq!(at("f8", "c8"), "c8");
    assert_eq!(at("i*", "f*"), "f*");
}
