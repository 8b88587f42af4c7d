//! TensorFlow's three rule sets (`tensorflow`, `tensorflow-safe`, `tensorflow-legacy`) against
//! every case of the fixtures written from tensorflow-cpu 2.21.0 by
//! `tools/gen_tensorflow_fixtures.py`, plus the generator's own cross-check of
//! `result_type` against `tf.math.add` (recorded in the fixtures' notes).

use crate::common;

use common::{check, parse_ops};

use common::{MessageCheck, assert_all_agree, load};
use dtype_lattice::error::{ErrorKind, Exception};
use dtype_lattice::{Error, Op, Operand, Promotion, RuleSet, Rules};

/// The fixture suffix of each rule set.
const MODES: [(&str, RuleSet); 3] = [
    ("all", RuleSet::TENSORFLOW),
    ("safe", RuleSet::TENSORFLOW_SAFE),
    ("legacy", RuleSet::TENSORFLOW_LEGACY),
];

/// Cases no stateless model can reproduce, by check (a fixture file, or a file's `add`
/// cross-check) and operands, with the reason.
///
/// Converting a negative Python int to uint64 (`tf.math.add(uint64 tensor, -200)`, or the
/// patched `add` of modes ALL and SAFE casting `-200` to the promoted uint64) goes through
/// `PyLong_AsUnsignedLongLong`, which fails and leaves a Python `OverflowError` set; TensorFlow
/// builds the tensor anyway and Python raises `SystemError` on return. But
/// `ConvertToEagerTensor` caches the handle it built for the Python scalar (keyed by value and
/// dtype), so every *later* conversion of the same value to uint64 in the same process hits the
/// cache and succeeds. The generator runs each file in one process: the first `(uint64, -200)`
/// and `(uint64, -2)` raise `SystemError`, as modelled; the later ones below return uint64. The
/// model answers `SystemError`, TensorFlow's answer in a fresh process.
const ALLOWLIST: &[(&str, &[&str], &str)] = &[
    (
        "tensorflow/result_type_legacy.json",
        &["uint64(18446744073709551615)", "-200"],
        CACHED,
    ),
    (
        "tensorflow/result_type_legacy.json",
        &["uint64(3)", "int", "-200"],
        CACHED,
    ),
    (
        "tensorflow/result_type_all.json (add vs result_type)",
        &["uint64(18446744073709551615)", "-200"],
        CACHED,
    ),
    (
        "tensorflow/result_type_all.json (add vs result_type)",
        &["-200", "uint64"],
        CACHED,
    ),
    (
        "tensorflow/result_type_all.json (add vs result_type)",
        &["-200", "uint64(18446744073709551615)"],
        CACHED,
    ),
    (
        "tensorflow/result_type_safe.json (add vs result_type)",
        &["uint64(18446744073709551615)", "-200"],
        CACHED,
    ),
    (
        "tensorflow/result_type_safe.json (add vs result_type)",
        &["-200", "uint64"],
        CACHED,
    ),
    (
        "tensorflow/result_type_safe.json (add vs result_type)",
        &["-200", "uint64(18446744073709551615)"],
        CACHED,
    ),
];

/// The allowlist's reason.
const CACHED: &str = "TensorFlow's scalar handle cache: a later conversion of -200 to uint64 in the same process \
     succeeds where the first raised SystemError";

/// Whether a check's case is allowlisted; such a case must still get the modelled
/// `SystemError`, so that the list stays exact.
fn allowlisted(check: &str, operands: &[String], got: &Result<Promotion, Error>) -> Option<bool> {
    ALLOWLIST
        .iter()
        .any(|(c, ops, _)| *c == check && *ops == operands)
        .then(|| matches!(got, Err(e) if e.exception() == Some(Exception::SystemError)))
}

/// Compares every case of a fixture, except the allowlisted ones.
fn check_file(name: &str, answer: impl Fn(&[Operand]) -> Result<Promotion, Error>) {
    let f = load(name);
    let mut allowed = 0;
    let failures: Vec<String> = f
        .cases
        .iter()
        .filter_map(|case| {
            let got = answer(&parse_ops(&case.operands));
            match allowlisted(name, &case.operands, &got) {
                None => check(case, &got, MessageCheck::Exact),
                Some(true) => {
                    allowed += 1;
                    None
                }
                Some(false) => Some(format!(
                    "allowlisted case [{}] no longer answers as listed: got {got:?}",
                    case.operands.join(" ")
                )),
            }
        })
        .collect();
    assert_all_agree(name, f.cases.len() - allowed, &failures);
    if allowed > 0 {
        eprintln!("{name}: {allowed} allowlisted cases (see ALLOWLIST)");
    }
}

#[test]
fn result_type_agrees_with_tensorflow() {
    for (suffix, set) in MODES {
        let rules = Rules::new(set);
        check_file(&format!("tensorflow/result_type_{suffix}.json"), |ops| {
            rules.result_type(ops)
        });
    }
}

#[test]
fn ops_agree_with_tensorflow() {
    for (suffix, set) in MODES {
        let rules = Rules::new(set);
        for op in Op::ALL {
            check_file(&format!("tensorflow/op_{op}_{suffix}.json"), |ops| {
                rules.op_result(op, ops)
            });
        }
    }
}

/// The generator compared `result_type(a, b)` with `tf.math.add(a, b)` on every ordered pair of
/// the `result_type` fixtures (modes ALL and SAFE) and listed where they differ: `add` must
/// agree with `result_type` on every other pair and raise the recorded exception on those.
#[test]
fn add_matches_the_generators_cross_check() {
    for (suffix, set) in &MODES[..2] {
        let name = format!("tensorflow/result_type_{suffix}.json");
        let text = std::fs::read_to_string(common::fixture_path(&name)).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let cross = &json["notes"]["check_against_tf.math.add"];
        let differ: Vec<(Vec<String>, String)> = cross["differ"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let ops = d["operands"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| o.as_str().unwrap().to_string())
                    .collect();
                (ops, d["tf.math.add"].as_str().unwrap().to_string())
            })
            .collect();
        let rules = Rules::new(*set);
        let f = load(&name);
        // The file lists the pair operands alone, then their ordered pairs, then random lists.
        let pairs = cross["pairs"].as_u64().unwrap() as usize;
        let singles = f.cases.iter().take_while(|c| c.operands.len() == 1).count();
        assert_eq!(singles * singles, pairs);
        let check = format!("{name} (add vs result_type)");
        let mut failures = Vec::new();
        let mut allowed = 0;
        for case in f.cases.iter().skip(singles).take(pairs) {
            assert_eq!(case.operands.len(), 2);
            let ops = parse_ops(&case.operands);
            let add = rules.op_result(Op::Add, &ops);
            match allowlisted(&check, &case.operands, &add) {
                Some(true) => {
                    allowed += 1;
                    continue;
                }
                Some(false) => {
                    failures.push(format!(
                        "allowlisted [{}] got {add:?}",
                        case.operands.join(" ")
                    ));
                    continue;
                }
                None => {}
            }
            match differ.iter().find(|(o, _)| *o == case.operands) {
                Some((_, kind)) => {
                    if !matches!(&add, Err(e) if common::class(e) == kind) {
                        failures.push(format!(
                            "[{}]: add gave {add:?}, TensorFlow raised {kind}",
                            case.operands.join(" ")
                        ));
                    }
                }
                None => {
                    let rt = rules.result_type(&ops);
                    let same = match (&add, &rt) {
                        (Ok(a), Ok(r)) => a == r,
                        (Err(a), Err(r)) => a.kind() == r.kind(),
                        _ => false,
                    };
                    if !same {
                        failures.push(format!(
                            "[{}]: add gave {add:?}, result_type {rt:?}",
                            case.operands.join(" ")
                        ));
                    }
                }
            }
        }
        assert_all_agree(&check, pairs - allowed, &failures);
    }
}

#[test]
fn no_lattice_of_python_types_and_no_panic_on_odd_input() {
    for (_, set) in MODES {
        let rules = Rules::new(set);
        assert!(rules.lattice().is_none());
        assert_eq!(rules.dtypes().len(), 15);
        assert_eq!(
            rules.result_type(&[]).unwrap_err().kind(),
            ErrorKind::EmptyOperands
        );
        for op in Op::ALL {
            for ops in [
                vec!["float8_e4m3fn", "int8"],
                vec!["~int8", "int8"],
                vec!["int"],
                vec!["uint64", "-1", "18446744073709551616", "(1e+40+1j)", "True"],
            ] {
                let ops: Vec<Operand> = ops.iter().map(|s| s.parse().unwrap()).collect();
                let _ = rules.op_result(op, &ops);
                let _ = rules.result_type(&ops);
            }
        }
    }
    let err = Rules::new(RuleSet::TENSORFLOW)
        .result_type(&["~int8".parse().unwrap()])
        .unwrap_err();
    assert_eq!(
        err.message(),
        "<dtype: 'int8'> not allowed as a weak type. The allowed types are (tf.int32, \
         tf.int64, tf.float32, tf.float64, tf.complex128)."
    );
}
