//! The crate's layers (ARCHITECTURE.md, "Layers"): a module uses only modules of its own layer
//! and of those below it. The dtype model (`dtype`, its errors, its key implementations) is
//! the one layer whose modules use each other: a dtype's row names its key implementation,
//! an error names dtypes, and parsing a dtype fails with an error.
//!
//! The analyzer itself (`tests/common/layering.rs`, shared with the array crate) is tested
//! here on small trees written for the purpose.

use std::path::{Path, PathBuf};

use crate::common::layering::Layers;

/// Lowest first.
const LAYERS: Layers = Layers {
    layers: &[
        &["dtype", "error", "key"],
        &["operand"],
        &["lattice"],
        &["ops"],
        &["rules"],
        &["table"],
        &["toolkit"],
    ],
    allowed: &[],
};

#[test]
fn every_module_uses_only_its_layer_and_those_below() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    LAYERS.assert_layered(&src);
}

/// A tree of `(path, text)` files under a fresh directory.
fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "dtype-lattice-layering-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

const TOY: Layers = Layers {
    layers: &[&["low"], &["mid"], &["high"]],
    allowed: &[("low", "high", "a reason")],
};

fn found(src: &Path) -> Vec<(String, String, usize)> {
    let mut v: Vec<(String, String, usize)> = TOY
        .check(src)
        .0
        .into_iter()
        .map(|e| (e.file, e.to, e.line))
        .collect();
    v.dedup();
    v
}

#[test]
fn the_analyzer_finds_upward_paths_in_every_form() {
    let src = tree(
        "forms",
        &[
            ("lib.rs", "pub mod low; pub mod mid; pub mod high;"),
            // A grouped use, a use with an alias and a path in code.
            (
                "mid/mod.rs",
                "use crate::{low::A, high::{B, c as d}};\nmod sub;\nfn f() { crate::high::g(); }",
            ),
            // `super::super` out of a nested file, and from inside an inline module.
            (
                "mid/sub.rs",
                "fn f() { super::super::high::h(); }\nmod inner {\n    fn g() { super::super::super::high::x(); }\n}",
            ),
            ("high.rs", "use crate::mid::M; use crate::low::L;"),
        ],
    );
    let got = found(&src);
    assert!(
        got.contains(&("mid/mod.rs".into(), "high".into(), 1)),
        "{got:?}"
    );
    assert!(
        got.contains(&("mid/mod.rs".into(), "high".into(), 3)),
        "{got:?}"
    );
    assert!(
        got.contains(&("mid/sub.rs".into(), "high".into(), 1)),
        "{got:?}"
    );
    assert!(
        got.contains(&("mid/sub.rs".into(), "high".into(), 3)),
        "{got:?}"
    );
    // Downward edges are not edges against the order.
    assert!(!got.iter().any(|(f, _, _)| f == "high.rs"), "{got:?}");
    assert_eq!(got.len(), 4, "{got:?}");
}

#[test]
fn the_analyzer_ignores_comments_strings_and_tests() {
    let src = tree(
        "ignored",
        &[
            (
                "low.rs",
                "// crate::high::a\n/* crate::high::b */\nconst S: &str = \"crate::high::c\";\n\
                 const R: &str = r#\"crate::high::d\"#;\nconst C: char = '\"';\n\
                 #[cfg(test)]\nmod tests { use crate::high::e; }\n\
                 #[cfg(test)]\nfn t() { crate::high::f(); }\n\
                 fn real() { crate::mid::g(); }",
            ),
            ("mid.rs", ""),
            ("high.rs", ""),
        ],
    );
    let got = found(&src);
    assert_eq!(got, vec![("low.rs".into(), "mid".into(), 10)]);
}

#[test]
fn the_allow_list_and_unknown_modules() {
    let src = tree(
        "allowed",
        &[
            ("low.rs", "use crate::high::X; use crate::mid::Y;"),
            ("mid.rs", ""),
            ("high.rs", ""),
            ("stray.rs", "use crate::high::X;"),
        ],
    );
    let (edges, unknown) = TOY.check(&src);
    assert_eq!(edges.len(), 2);
    assert_eq!(unknown.into_iter().collect::<Vec<_>>(), vec!["stray"]);
    // low -> high is allowed; low -> mid is not.
    let src = tree(
        "allowed2",
        &[
            ("low.rs", "use crate::high::X; use crate::mid::Y;"),
            ("mid.rs", ""),
            ("high.rs", ""),
        ],
    );
    let bad = TOY.violations(&src);
    assert_eq!(bad.len(), 1);
    assert_eq!((bad[0].from.as_str(), bad[0].to.as_str()), ("low", "mid"));
}

#[test]
fn a_root_item_named_from_a_layer_is_an_upward_edge() {
    let src = tree(
        "root",
        &[
            ("lib.rs", "pub mod low; pub use low::Thing;"),
            ("low.rs", "fn f() -> crate::Thing { todo!() }"),
        ],
    );
    let got = found(&src);
    assert_eq!(got, vec![("low.rs".into(), "(crate root) Thing".into(), 1)]);
}
