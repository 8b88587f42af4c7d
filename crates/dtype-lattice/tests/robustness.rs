//! Bad input never panics: arbitrary text through the parsers, arbitrary operand lists
//! through every rule set and mode.

use dtype_lattice::{DType, Operand, PyType, RuleSet, Rules, Value};
use proptest::prelude::*;

fn all_rules() -> Vec<Rules> {
    let mut out = Vec::new();
    for &set in RuleSet::ALL {
        for strict in [false, true] {
            for x64 in [false, true] {
                out.push(Rules::new(set).strict(strict).x64(x64));
            }
        }
    }
    out
}

fn operand() -> impl Strategy<Value = Operand> {
    let dtype = prop::sample::select(DType::ALL.to_vec());
    let value = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        any::<i128>().prop_map(Value::Int),
        any::<f64>().prop_map(Value::Float),
        (any::<f64>(), any::<f64>()).prop_map(|(a, b)| Value::Complex(a, b)),
    ];
    prop_oneof![
        dtype.clone().prop_map(Operand::array),
        dtype.clone().prop_map(Operand::weak_array),
        (dtype, value.clone()).prop_filter_map("in range", |(d, v)| Operand::scalar(d, v).ok()),
        prop::sample::select(PyType::ALL.to_vec()).prop_map(Operand::PyType),
        value.prop_map(Operand::Literal),
    ]
}

proptest! {
    #[test]
    fn parsing_arbitrary_text_never_panics(s in "\\PC{0,40}") {
        let _ = s.parse::<Operand>();
        let _ = s.parse::<DType>();
        let _ = s.parse::<Value>();
        let _ = dtype_lattice::operand::parse_list(&s);
    }

    #[test]
    fn parsing_operand_shaped_text_never_panics(s in "[~(]?[a-z0-9_]{0,14}(\\([-+0-9.eEjinaf()]{0,12}\\))?") {
        if let Ok(op) = s.parse::<Operand>() {
            // What parses prints back to something that parses to the same operand.
            let again: Operand = op.to_string().parse().unwrap();
            prop_assert_eq!(format!("{op:?}"), format!("{again:?}"));
        }
    }

    #[test]
    fn promotion_never_panics(ops in prop::collection::vec(operand(), 0..7)) {
        for rules in all_rules() {
            match rules.result_type(&ops) {
                Ok(p) => prop_assert!(DType::ALL.contains(&p.dtype)),
                Err(e) => prop_assert!(!e.message().is_empty()),
            }
            // Every op, on any operand list (empty ones included), answers or refuses.
            for op in dtype_lattice::Op::ALL {
                if let Err(e) = rules.op_result(op, &ops) {
                    prop_assert!(!e.message().is_empty());
                }
            }
            if ops.len() >= 2
                && let (Operand::Array { dtype: a, .. }, Operand::Array { dtype: b, .. }) = (ops[0], ops[1]) {
                    let _ = rules.promote_types(a, b);
                }
        }
    }
}

proptest! {
    /// Definition files: arbitrary bytes, and JSON/TOML-shaped text with odd names, never
    /// panic; whatever parses can be checked, audited and drawn.
    #[test]
    fn definition_files_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
        names in prop::collection::vec("[A-Za-z0-9_~*<> \"\\\\]{0,6}", 1..8),
        edges in prop::collection::vec((0usize..8, 0usize..8), 0..16),
        table in any::<bool>(),
    ) {
        let _ = dtype_lattice::toolkit::check::DefinitionFile::from_bytes(&bytes);
        let json = if table {
            let cells: Vec<String> = names.iter().enumerate().map(|(i, a)| {
                let row: Vec<String> = edges.iter().filter(|(x, _)| x % names.len() == i).map(|(_, y)| {
                    format!("{}: {}", serde_json::json!(names[y % names.len()]), serde_json::json!(names[(i + y) % names.len()]))
                }).collect();
                format!("{}: {{{}}}", serde_json::json!(a), row.join(", "))
            }).collect();
            format!("{{\"table\": {{{}}}}}", cells.join(", "))
        } else {
            let cells: Vec<String> = names.iter().enumerate().map(|(i, a)| {
                let above: Vec<serde_json::Value> = edges.iter().filter(|(x, _)| x % names.len() == i)
                    .map(|(_, y)| serde_json::json!(names[y % names.len()])).collect();
                format!("{}: {}", serde_json::json!(a), serde_json::Value::from(above))
            }).collect();
            format!("{{\"edges\": {{{}}}}}", cells.join(", "))
        };
        if let Ok(file) = json.parse::<dtype_lattice::toolkit::check::DefinitionFile>() {
            if let Ok(report) = dtype_lattice::toolkit::check::check(&file.definition) {
                let _ = report.is_lattice();
            }
            if let dtype_lattice::toolkit::check::Definition::Lattice(e) = &file.definition
                && let Ok(l) = dtype_lattice::toolkit::check::lattice_of(e) {
                    let _ = dtype_lattice::toolkit::audit::Audit::of_lattice("x", &l);
                    let h = dtype_lattice::toolkit::graph::Hasse::new(&l, |n| n.clone());
                    let _ = (h.to_svg(None, "x"), h.to_dot(None, "x"), h.to_mermaid(None));
                }
        }
    }
}

/// Found by the `operand` fuzz target: `8_e88_8j` is `1e888j`, an infinite imaginary part
/// that displays as `infj` (as Python's repr does), which must parse back.
#[test]
fn displayed_infinite_and_nan_imaginary_literals_parse_back() {
    for s in [
        "8_e88_8j",
        "1e400j",
        "infj",
        "nanj",
        "-infj",
        "(1+infj)",
        "(nan-nanj)",
    ] {
        let o: Operand = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
        let shown = o.to_string();
        let again: Operand = shown
            .parse()
            .unwrap_or_else(|e| panic!("{s} displays as {shown}, which does not parse: {e}"));
        assert_eq!(again.to_string(), shown, "{s}");
        assert!(matches!(again, Operand::Literal(Value::Complex(..))), "{s}");
    }
    assert_eq!("1e400j".parse::<Operand>().unwrap().to_string(), "infj");
}
