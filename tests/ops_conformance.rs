//! `--op`: every op fixture written from the real libraries by `tools/`.

mod common;

use common::parse_ops;

use common::{assert_all_agree, check, load, MessageCheck};
use dtype_lattice::{Op, Rules};

/// Checks `op_<op><suffix>.json` under `dir` for every op that has a file.
fn check_ops(dir: &str, suffix: &str, rules: Rules, skip: &[Op], messages: MessageCheck) {
    for op in Op::ALL.into_iter().filter(|o| !skip.contains(o)) {
        let name = format!("{dir}/op_{op}{suffix}.json");
        let f = load(&name);
        let rules = if dir == "jax" {
            rules.x64(f.mode.x64)
        } else {
            rules
        };
        let failures: Vec<String> = f
            .cases
            .iter()
            .filter_map(|case| {
                let got = rules.op_result(op, &parse_ops(&case.operands));
                match &got {
                    Err(e) if e.kind() == "UnsupportedOperand" && case.error.is_some() => None,
                    _ => check(case, &got, messages),
                }
            })
            .collect();
        assert_all_agree(&name, f.cases.len(), &failures);
    }
}

#[test]
fn jax_numpy_ops_agree_with_jax() {
    for mode in ["x32", "x64"] {
        check_ops(
            "jax",
            &format!("_jnp_{mode}"),
            Rules::jax(),
            &[],
            MessageCheck::UpToTupleOrder,
        );
    }
}

#[test]
fn jax_lax_ops_agree_with_jax() {
    for mode in ["x32", "x64"] {
        check_ops(
            "jax",
            &format!("_lax_{mode}"),
            Rules::jax_lax(),
            &[Op::FloorDivide],
            MessageCheck::Exact,
        );
    }
}

#[test]
fn numpy_ops_agree_with_numpy_2() {
    check_ops("numpy", "", Rules::numpy(), &[], MessageCheck::Exact);
}
