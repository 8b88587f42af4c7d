//! The peers' rule sets against fixtures written from the real libraries by `tools/`.
//! Operands a rule set cannot represent are refused by us with `UnsupportedOperand` while the
//! library raises its own error: those cases compare only as refusals.

mod common;

use common::{check_peer, parse_ops};

use common::{assert_all_agree, load, MessageCheck};
use dtype_lattice::Rules;

/// Checks every case of a plain-promotion fixture with `rules`.
fn check_result_type(name: &str, rules: Rules, messages: MessageCheck) {
    let f = load(name);
    let failures: Vec<String> = f
        .cases
        .iter()
        .filter_map(|case| {
            let got = rules.result_type(&parse_ops(&case.operands));
            check_peer(case, &got, messages)
        })
        .collect();
    assert_all_agree(name, f.cases.len(), &failures);
}

#[test]
fn numpy_result_type_agrees_with_numpy_2() {
    check_result_type(
        "numpy/result_type.json",
        Rules::numpy(),
        MessageCheck::Exact,
    );
}
