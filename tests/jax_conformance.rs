//! Every case of the fixtures written by `tools/gen_jax_fixtures.py` from real JAX 0.10.

mod common;

use common::{assert_all_agree, check, load, MessageCheck};
use dtype_lattice::{Node, Operand, Rules};

const MODES: [&str; 4] = ["standard_x32", "standard_x64", "strict_x32", "strict_x64"];

fn rules_for(f: &common::Fixture, base: Rules) -> Rules {
    base.strict(f.mode.strict).x64(f.mode.x64)
}

fn parse_ops(ops: &[String]) -> Vec<Operand> {
    ops.iter()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|e| panic!("fixture operand {s:?}: {e}"))
        })
        .collect()
}

#[test]
fn result_type_agrees_with_jax() {
    for mode in MODES {
        let name = format!("jax/result_type_{mode}.json");
        let f = load(&name);
        let rules = rules_for(&f, Rules::jax());
        let failures: Vec<String> = f
            .cases
            .iter()
            .filter_map(|case| {
                let got = rules.result_type(&parse_ops(&case.operands));
                check(case, &got, MessageCheck::UpToTupleOrder)
            })
            .collect();
        assert_all_agree(&name, f.cases.len(), &failures);
    }
}

#[test]
fn promote_types_agrees_with_jax() {
    for mode in MODES {
        let name = format!("jax/promote_types_{mode}.json");
        let f = load(&name);
        let rules = rules_for(&f, Rules::jax());
        let failures: Vec<String> = f
            .cases
            .iter()
            .filter_map(|case| {
                let n: Vec<Node> = case
                    .operands
                    .iter()
                    .map(|s| s.parse().expect("fixture node"))
                    .collect();
                let got = rules
                    .promote_types(n[0], n[1])
                    .map(|dtype| dtype_lattice::Promotion {
                        dtype,
                        weak_type: false,
                    });
                check(case, &got, MessageCheck::Exact)
            })
            .collect();
        assert_all_agree(&name, f.cases.len(), &failures);
    }
}

/// `jax.lax` has no result_type; the generator folds `lax.max` over the operands. Pairs are
/// compared with the message (up to the op's name and tip); longer lists by kind, because a
/// fold names only the first mismatching pair.
#[test]
fn lax_agrees_with_jax() {
    for mode in ["x32", "x64"] {
        let name = format!("jax/lax_{mode}.json");
        let mut f = load(&name);
        let rules = rules_for(&f, Rules::jax_lax());
        for case in &mut f.cases {
            if let Some(e) = &mut case.error {
                let m = e.message.replacen("lax.max requires", "lax requires", 1);
                e.message = match m.split_once(" (Tip:") {
                    Some((head, _)) => head.to_string(),
                    None => m,
                };
            }
        }
        let failures: Vec<String> = f
            .cases
            .iter()
            .filter_map(|case| {
                let got = rules.result_type(&parse_ops(&case.operands));
                let messages = if case.operands.len() == 2 {
                    MessageCheck::Exact
                } else {
                    MessageCheck::KindOnly
                };
                check(case, &got, messages)
            })
            .collect();
        assert_all_agree(&name, f.cases.len(), &failures);
    }
}
