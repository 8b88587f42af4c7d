//! The tables of the seed documents, reproduced by the CLI (`tests/fixtures/seed_tables/`
//! is extracted from `../shared/seeds/` by `tools/extract_seed_tables.py`).

use crate::common;

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
    assert_same_table_but(name, want, header, rows, None);
}

/// As [`assert_same_table`], but for the row and column of type `but`, whose cells are not
/// compared.
fn assert_same_table_but(
    name: &str,
    want: &SeedTable,
    header: &[String],
    rows: &[Vec<String>],
    but: Option<&str>,
) {
    assert_eq!(header, want.types.as_slice(), "{name}: header");
    let mut diffs = Vec::new();
    for (i, (got_row, want_row)) in rows.iter().zip(&want.cells).enumerate() {
        for (j, (g, w)) in got_row.iter().zip(want_row).enumerate() {
            if but.is_some_and(|b| want.types[i] == b || want.types[j] == b) {
                continue;
            }
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

/// The note's NumPy has no bfloat16 (`-` in its row and column); `--rules numpy` is NumPy
/// with ml_dtypes imported, whose bfloat16 loops `tests/it/numpy_ml_dtypes_conformance.rs` (in
/// the dtype-lattice crate) checks against NumPy: that row and column are not compared.
#[test]
fn design_note_appendix_numpy_table() {
    let (header, rows) = csv_table(&["--rules", "numpy", "--op", "add"]);
    let want = appendix("appendix_numpy.json");
    let bf = want.types.iter().position(|t| t == "bf").unwrap();
    assert!(want.cells[bf].iter().all(|c| c == "-"));
    assert_same_table_but("appendix NumPy", &want, &header, &rows, Some("bf"));
}

#[test]
fn design_note_appendix_tensorflow_table() {
    let (header, rows) = csv_table(&["--rules", "tensorflow-legacy", "--op", "add"]);
    assert_same_table(
        "appendix TensorFlow",
        &appendix("appendix_tensorflow.json"),
        &header,
        &rows,
    );
}

/// Cells of the design note's 2021 PyTorch `add` table that torch 2.15.0 answers
/// differently (row, column, 2021, now), as README's "PyTorch since 2021" lists them: uint16/32/64
/// now promote with the real floats and with Python floats and complexes; a Python complex
/// keeps float16's and bfloat16's precision (complex32; bcomplex32, which has no CPU add
/// kernel); `torch.add` of two Python numbers makes tensors of the default dtypes.
const TORCH_CHANGED_SINCE_2021: &[(&str, &str, &str, &str)] = &[
    ("u2", "bf", "-", "bf"),
    ("u2", "f2", "-", "f2"),
    ("u2", "f4", "-", "f4"),
    ("u2", "f8", "-", "f8"),
    ("u2", "f*", "-", "f4"),
    ("u2", "c*", "-", "c8"),
    ("u4", "bf", "-", "bf"),
    ("u4", "f2", "-", "f2"),
    ("u4", "f4", "-", "f4"),
    ("u4", "f8", "-", "f8"),
    ("u4", "f*", "-", "f4"),
    ("u4", "c*", "-", "c8"),
    ("u8", "bf", "-", "bf"),
    ("u8", "f2", "-", "f2"),
    ("u8", "f4", "-", "f4"),
    ("u8", "f8", "-", "f8"),
    ("u8", "f*", "-", "f4"),
    ("u8", "c*", "-", "c8"),
    ("bf", "u2", "-", "bf"),
    ("bf", "u4", "-", "bf"),
    ("bf", "u8", "-", "bf"),
    ("bf", "c*", "c8", "-"),
    ("f2", "u2", "-", "f2"),
    ("f2", "u4", "-", "f2"),
    ("f2", "u8", "-", "f2"),
    ("f2", "c*", "c8", "c4"),
    ("f4", "u2", "-", "f4"),
    ("f4", "u4", "-", "f4"),
    ("f4", "u8", "-", "f4"),
    ("f8", "u2", "-", "f8"),
    ("f8", "u4", "-", "f8"),
    ("f8", "u8", "-", "f8"),
    ("f*", "u2", "-", "f4"),
    ("f*", "u4", "-", "f4"),
    ("f*", "u8", "-", "f4"),
    ("f*", "f*", "f8", "f4"),
    ("c*", "u2", "-", "c8"),
    ("c*", "u4", "-", "c8"),
    ("c*", "u8", "-", "c8"),
    ("c*", "bf", "c8", "-"),
    ("c*", "f2", "c8", "c4"),
    ("c*", "c*", "c16", "c8"),
];

#[test]
fn design_note_appendix_torch_table_except_what_changed_since_2021() {
    let want = appendix("appendix_torch.json");
    let (header, rows) = csv_table(&["--rules", "torch", "--op", "add"]);
    assert_eq!(header, want.types);
    let mut changed = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        for (j, got) in row.iter().enumerate() {
            let was = &want.cells[i][j];
            if got != was {
                changed.push((
                    header[i].as_str(),
                    header[j].as_str(),
                    was.as_str(),
                    got.as_str(),
                ));
            }
        }
    }
    let expected: Vec<(&str, &str, &str, &str)> = TORCH_CHANGED_SINCE_2021.to_vec();
    assert_eq!(changed, expected);
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
