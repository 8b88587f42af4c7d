//! Every case of the fixtures written by `tools/gen_jax_fixtures.py` from real JAX 0.10.

use crate::common;

use common::parse_ops;

use common::{Case, MessageCheck, assert_all_agree, check, load};
use dtype_lattice::{Error, Node, Promotion, Rules};

const MODES: [&str; 4] = ["standard_x32", "standard_x64", "strict_x32", "strict_x64"];

/// Checks every case of one fixture file with `base` in the file's mode.
fn check_fixture(
    name: &str,
    base: Rules,
    prepare: impl Fn(&mut Case),
    messages: impl Fn(&Case) -> MessageCheck,
    eval: impl Fn(&Rules, &Case) -> Result<Promotion, Error>,
) {
    let mut f = load(name);
    let rules = base.strict(f.mode.strict).x64(f.mode.x64);
    f.cases.iter_mut().for_each(&prepare);
    let failures: Vec<String> = f
        .cases
        .iter()
        .filter_map(|case| check(case, &eval(&rules, case), messages(case)))
        .collect();
    assert_all_agree(name, f.cases.len(), &failures);
}

#[test]
fn result_type_agrees_with_jax() {
    for mode in MODES {
        check_fixture(
            &format!("jax/result_type_{mode}.json"),
            Rules::jax(),
            |_| {},
            |_| MessageCheck::UpToTupleOrder,
            |rules, case| rules.result_type(&parse_ops(&case.operands)),
        );
    }
}

#[test]
fn promote_types_agrees_with_jax() {
    for mode in MODES {
        check_fixture(
            &format!("jax/promote_types_{mode}.json"),
            Rules::jax(),
            |_| {},
            |_| MessageCheck::Exact,
            |rules, case| {
                let n: Vec<Node> = case
                    .operands
                    .iter()
                    .map(|s| s.parse().expect("fixture node"))
                    .collect();
                rules.promote_types(n[0], n[1]).map(|dtype| Promotion {
                    dtype,
                    weak_type: false,
                })
            },
        );
    }
}

/// `jax.lax` has no result_type; the generator folds `lax.max` over the operands. Pairs are
/// compared with the message (up to the op's name); longer lists by kind, because a fold
/// names only the first mismatching pair.
#[test]
fn lax_agrees_with_jax() {
    for mode in ["x32", "x64"] {
        check_fixture(
            &format!("jax/lax_{mode}.json"),
            Rules::jax_lax(),
            |case| {
                if let Some(e) = &mut case.error {
                    e.message = e.message.replacen("lax.max requires", "lax requires", 1);
                }
            },
            |case| {
                if case.operands.len() == 2 {
                    MessageCheck::Exact
                } else {
                    MessageCheck::KindOnly
                }
            },
            |rules, case| rules.result_type(&parse_ops(&case.operands)),
        );
    }
}
