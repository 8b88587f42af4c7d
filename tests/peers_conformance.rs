//! The peers' rule sets against fixtures written from the real libraries by `tools/`.
//! Operands a rule set cannot represent are refused by us with `UnsupportedOperand` while the
//! library raises its own error: those cases compare only as refusals.

mod common;

use common::{assert_all_agree, check, load, Case, MessageCheck};
use dtype_lattice::{Error, Operand, Promotion, Rules};

fn parse_ops(ops: &[String]) -> Vec<Operand> {
    ops.iter()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|e| panic!("fixture operand {s:?}: {e}"))
        })
        .collect()
}

/// Checks every case of a plain-promotion fixture with `rules`.
fn check_result_type(name: &str, rules: Rules, messages: MessageCheck) {
    let f = load(name);
    let failures: Vec<String> = f
        .cases
        .iter()
        .filter_map(|case| {
            let got = rules.result_type(&parse_ops(&case.operands));
            compare(case, &got, messages)
        })
        .collect();
    assert_all_agree(name, f.cases.len(), &failures);
}

fn compare(case: &Case, got: &Result<Promotion, Error>, messages: MessageCheck) -> Option<String> {
    match got {
        Err(e)
            if e.kind() == "UnsupportedOperand"
                && (case.error.is_some() || case.dtype.as_deref() == Some("object")) =>
        {
            None
        }
        _ => check(case, got, messages),
    }
}

#[test]
fn numpy_result_type_agrees_with_numpy_2() {
    check_result_type(
        "numpy/result_type.json",
        Rules::numpy(),
        MessageCheck::Exact,
    );
}
