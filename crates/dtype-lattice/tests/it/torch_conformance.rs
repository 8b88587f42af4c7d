//! The `torch` rule set against every case of the fixtures written from torch 2.15.0 by
//! `tools/gen_torch_fixtures.py` (`tests/fixtures/torch/`, see `tools/torch.md`).
//!
//! Every case is compared exactly (dtype, or exception class and message; for op cases also the
//! recorded `torch.result_type`), with one rule-based exception, [`Artifacts`]: the single
//! operands and the random n-ary lists of the result_type files were computed by
//! `torch._prims_common.elementwise_dtypes`, torch's Python reference, which has none of c10's
//! refusals for uint16/32/64 and float8 mixes (it answers by a fixed ordering) and fails with
//! Python artifacts of its own on some lists with those dtypes (`KeyError: torch.float8_…` from
//! its float→complex map, `RuntimeError: Unexpected termination!` from its ordering, which lacks
//! them). On those lists the fixture does not hold what torch's C++ promotion (the model)
//! answers; they are recognised by that rule, counted by kind, and the counts pinned. All other
//! cases, including every `elementwise_dtypes` case without those dtypes, compare exactly.

use crate::common;

use common::parse_ops;

use common::{Case, ErrorCase, MessageCheck, assert_all_agree, check, fixture_path};
use dtype_lattice::error::{ErrorKind, Exception};
use dtype_lattice::{DType, Error, Node, Op, Operand, Promotion, PyType, Rules, Value};
use serde::Deserialize;

/// A torch fixture case: the common fields plus `fn` (result_type files) and `promoted` (op
/// files).
#[derive(Debug, Deserialize)]
struct TorchCase {
    operands: Vec<String>,
    #[serde(default, rename = "fn")]
    function: Option<String>,
    #[serde(default)]
    dtype: Option<String>,
    #[serde(default)]
    weak_type: Option<bool>,
    #[serde(default)]
    error: Option<ErrorCase>,
    #[serde(default)]
    promoted: Option<Promoted>,
}

/// `torch.result_type` on an op case's operands.
#[derive(Debug, Deserialize)]
struct Promoted {
    #[serde(default)]
    dtype: Option<String>,
    #[serde(default)]
    error: Option<ErrorCase>,
}

#[derive(Debug, Deserialize)]
struct TorchFixture {
    cases: Vec<TorchCase>,
}

fn load(name: &str) -> TorchFixture {
    let path = fixture_path(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad fixture {}: {e}", path.display()))
}

/// A common [`Case`] for [`check`].
fn case(
    operands: &[String],
    dtype: Option<&str>,
    weak_type: Option<bool>,
    error: Option<&ErrorCase>,
) -> Case {
    Case {
        operands: operands.to_vec(),
        dtype: dtype.map(str::to_string),
        weak_type,
        error: error.map(|e| ErrorCase {
            kind: e.kind.clone(),
            message: e.message.clone(),
        }),
    }
}

impl TorchCase {
    fn as_case(&self) -> Case {
        case(
            &self.operands,
            self.dtype.as_deref(),
            self.weak_type,
            self.error.as_ref(),
        )
    }
}

/// c10's refusals that `elementwise_dtypes` does not have: the uint16/32/64 and float8
/// promotion checks and the missing complex of a float8 format.
const C10_ONLY_REFUSALS: &[&str] = &[
    "Promotion for uint16, uint32, uint64 types is not supported",
    "Promotion for Float8 Types is not supported",
    "Unknown Complex ScalarType for Float8_",
];

/// How a case carries the Python reference's answer instead of torch's C++ promotion (the
/// model's), if it does: an `elementwise_dtypes` case mixing uint16/32/64 or float8 operands
/// where the model raises one of [`C10_ONLY_REFUSALS`] and the reference answered, or where the
/// reference failed with an artifact of its own (`KeyError: torch.float8_…` from its
/// float→complex map, `RuntimeError: Unexpected termination!` from its ordering) while the
/// model refuses or answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Artifacts {
    /// The reference answered, c10 refuses.
    answered_where_c10_refuses: usize,
    /// The reference failed, c10 refuses (with its own message).
    failed_where_c10_refuses: usize,
    /// The reference failed, c10 answers (a float8 zero-dim tensor or a uint16/32/64 one that
    /// the categories drop without promoting it).
    failed_where_c10_answers: usize,
}

impl Artifacts {
    /// Counts `case` if it is one; whether it is.
    fn count(&mut self, case: &TorchCase, got: &Result<Promotion, Error>) -> bool {
        let special = |s: &String| {
            ["uint16", "uint32", "uint64", "float8_"]
                .iter()
                .any(|p| s.starts_with(p))
        };
        if case.function.as_deref() != Some("elementwise_dtypes")
            || !case.operands.iter().any(special)
        {
            return false;
        }
        let reference_failed = case.error.as_ref().is_some_and(|e| {
            (e.kind == "KeyError" && e.message.starts_with("torch.float8_"))
                || (e.kind == "RuntimeError" && e.message == "Unexpected termination!")
        });
        let c10_refused = matches!(got, Err(e) if e.exception() == Some(Exception::RuntimeError)
            && C10_ONLY_REFUSALS.iter().any(|p| e.message().starts_with(p)));
        let slot = match (reference_failed, c10_refused) {
            (false, true) if case.error.is_none() => &mut self.answered_where_c10_refuses,
            (true, true) => &mut self.failed_where_c10_refuses,
            (true, false) if got.is_ok() => &mut self.failed_where_c10_answers,
            _ => return false,
        };
        *slot += 1;
        true
    }

    fn total(&self) -> usize {
        self.answered_where_c10_refuses
            + self.failed_where_c10_refuses
            + self.failed_where_c10_answers
    }
}

/// Checks a result_type file; returns its [`Artifacts`].
fn check_result_type(name: &str, rules: Rules) -> Artifacts {
    let f = load(name);
    let mut artifacts = Artifacts::default();
    let failures: Vec<String> = f
        .cases
        .iter()
        .filter_map(|c| {
            let got = rules.result_type(&parse_ops(&c.operands));
            if artifacts.count(c, &got) {
                return None;
            }
            check(&c.as_case(), &got, MessageCheck::Exact)
        })
        .collect();
    assert_all_agree(name, f.cases.len() - artifacts.total(), &failures);
    eprintln!("{name}: Python reference's cases set aside: {artifacts:?}");
    artifacts
}

#[test]
fn promote_types_agrees_with_torch() {
    let name = "torch/promote_types.json";
    let f = load(name);
    let rules = Rules::new(dtype_lattice::RuleSet::TORCH);
    let failures: Vec<String> = f
        .cases
        .iter()
        .filter_map(|c| {
            let [a, b] = &c.operands[..] else {
                panic!("promote_types case {:?}", c.operands)
            };
            let (a, b): (DType, DType) = (a.parse().unwrap(), b.parse().unwrap());
            let got = rules.promote_types(a, b).map(|dtype| Promotion {
                dtype,
                weak_type: false,
            });
            check(&c.as_case(), &got, MessageCheck::Exact)
        })
        .collect();
    assert_eq!(f.cases.len(), 441);
    assert_all_agree(name, f.cases.len(), &failures);
}

#[test]
fn result_type_agrees_with_torch() {
    let artifacts = check_result_type(
        "torch/result_type.json",
        Rules::new(dtype_lattice::RuleSet::TORCH),
    );
    let pinned = Artifacts {
        answered_where_c10_refuses: 315,
        failed_where_c10_refuses: 107,
        failed_where_c10_answers: 5,
    };
    assert_eq!(
        artifacts, pinned,
        "the Python reference's disagreements moved"
    );
}

#[test]
fn result_type_with_default_float64_agrees_with_torch() {
    let artifacts = check_result_type(
        "torch/result_type_default_float64.json",
        Rules::new(dtype_lattice::RuleSet::TORCH).default_float(DType::Float64),
    );
    let pinned = Artifacts {
        answered_where_c10_refuses: 312,
        failed_where_c10_refuses: 84,
        failed_where_c10_answers: 3,
    };
    assert_eq!(
        artifacts, pinned,
        "the Python reference's disagreements moved"
    );
}

/// torch's function names for the ops, as the fixture files are named.
const OP_FILES: &[(Op, &str)] = &[
    (Op::Add, "add"),
    (Op::Subtract, "sub"),
    (Op::Multiply, "mul"),
    (Op::TrueDivide, "true_divide"),
    (Op::FloorDivide, "floor_divide"),
    (Op::Power, "pow"),
    (Op::Equal, "eq"),
    (Op::Less, "lt"),
    (Op::LogicalAnd, "logical_and"),
    (Op::BitwiseAnd, "bitwise_and"),
];

#[test]
fn ops_agree_with_torch_on_the_cpu() {
    let rules = Rules::new(dtype_lattice::RuleSet::TORCH);
    for &(op, file) in OP_FILES {
        let name = format!("torch/op_{file}.json");
        let f = load(&name);
        let failures: Vec<String> = f
            .cases
            .iter()
            .flat_map(|c| {
                let ops = parse_ops(&c.operands);
                let promoted = c.promoted.as_ref().expect("op cases have `promoted`");
                let want = case(
                    &c.operands,
                    promoted.dtype.as_deref(),
                    Some(false),
                    promoted.error.as_ref(),
                );
                let p = check(&want, &rules.result_type(&ops), MessageCheck::Exact)
                    .map(|m| format!("promoted {m}"));
                let r = check(
                    &c.as_case(),
                    &rules.op_result(op, &ops),
                    MessageCheck::Exact,
                );
                [p, r]
            })
            .flatten()
            .collect();
        assert_all_agree(&name, f.cases.len(), &failures);
    }
}

#[test]
fn operands_torch_cannot_build_are_unsupported() {
    let rules = Rules::new(dtype_lattice::RuleSet::TORCH);
    for op in [
        Operand::weak_array(DType::Float32),
        Operand::array(DType::Int4),
        Operand::array(DType::Float8E4M3),
        Operand::array(DType::BComplex32),
        Operand::Literal(Value::Int(1 << 70)),
    ] {
        let err = rules
            .result_type(&[Operand::array(DType::Int8), op])
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnsupportedOperand, "{op}");
    }
    assert!(!rules.dtypes().contains(&DType::BComplex32));
    assert_eq!(rules.dtypes().len(), 21);
}

#[test]
fn python_types_are_torch_dtypes_in_promote_types() {
    let rules = Rules::new(dtype_lattice::RuleSet::TORCH);
    let t = rules.promote_types(DType::Int8, Node::Weak(PyType::Float));
    assert_eq!(t.unwrap(), DType::Float64);
}

#[test]
fn the_lattice_is_the_table_and_isolates_the_checked_dtypes() {
    let rules = Rules::new(dtype_lattice::RuleSet::TORCH);
    let l = rules.lattice().unwrap();
    assert!(l.is_partial_lattice());
    assert_eq!(l.len(), 21);
    let i = |t: DType| l.index_of(&Node::Dtype(t)).unwrap();
    assert!(l.above(i(DType::UInt16)).is_empty());
    assert!(l.leq(i(DType::Bool), i(DType::Complex32)));
}

#[test]
fn value_dependent_op_rules() {
    let rules = Rules::new(dtype_lattice::RuleSet::TORCH);
    let int8 = Operand::array(DType::Int8);
    let lit = |v: Value| Operand::Literal(v);
    // Integer floor division by a zero-dim zero, not by a nonzero number.
    let zero = Operand::scalar(DType::Int8, Value::Int(0)).unwrap();
    let e = rules.op_result(Op::FloorDivide, &[int8, zero]).unwrap_err();
    assert_eq!(e.message(), "ZeroDivisionError");
    let p = rules.op_result(Op::FloorDivide, &[int8, lit(Value::Int(3))]);
    assert_eq!(p.unwrap().dtype, DType::Int8);
    // pow: a Python 0 exponent fills, any other runs the pow kernel.
    let c32 = Operand::array(DType::Complex32);
    assert!(
        rules
            .op_result(Op::Power, &[c32, lit(Value::Int(0))])
            .is_ok()
    );
    let e = rules
        .op_result(Op::Power, &[c32, lit(Value::Int(2))])
        .unwrap_err();
    assert_eq!(e.message(), "\"pow\" not implemented for 'ComplexHalf'");
    let e = rules
        .op_result(Op::Power, &[int8, lit(Value::Int(-1))])
        .unwrap_err();
    assert_eq!(
        e.message(),
        "Integers to negative integer powers are not allowed."
    );
}
