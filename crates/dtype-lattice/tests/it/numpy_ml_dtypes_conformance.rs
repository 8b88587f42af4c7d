//! `--rules numpy` with ml_dtypes' types against NumPy 2.4.6 with ml_dtypes 0.6.0
//! (`tools/gen_numpy_ml_dtypes_fixtures.py`): `np.promote_types` of every pair of the 34
//! dtypes, `np.result_type` of pairs and random lists, and the loop every ufunc `eval` uses
//! picks for every operand combination with an ml_dtypes type. Every case must agree, error
//! messages included.

use crate::common;

use common::{
    MessageCheck, assert_all_agree, check, check_result_type_file, class, load, parse_ops,
};
use dtype_lattice::ufunc::{astype, can_cast_safely, numpy_ufunc};
use dtype_lattice::{DType, Op, Rules};
use serde::Deserialize;

#[test]
fn promote_types_of_every_pair_agrees() {
    let f = load("numpy/ml_dtypes_promote_types.json");
    let rules = Rules::numpy();
    let failures: Vec<String> = f
        .cases
        .iter()
        .filter_map(|case| {
            let [a, b] = &case.operands[..] else {
                panic!("two operands: {:?}", case.operands)
            };
            let (a, b): (DType, DType) = (a.parse().unwrap(), b.parse().unwrap());
            check(
                case,
                &rules
                    .promote_types(a, b)
                    .map(|dtype| dtype_lattice::Promotion {
                        dtype,
                        weak_type: false,
                    }),
                MessageCheck::Exact,
            )
        })
        .collect();
    assert_eq!(f.cases.len(), 34 * 34);
    assert_all_agree(
        "numpy/ml_dtypes_promote_types.json",
        f.cases.len(),
        &failures,
    );
}

#[derive(Deserialize)]
struct CastCase {
    operands: Vec<String>,
    safe: bool,
    #[serde(default)]
    error: Option<common::ErrorCase>,
}

#[derive(Deserialize)]
struct CastFixture {
    cases: Vec<CastCase>,
}

/// Every pair's safe cast (ml_dtypes' registered casts are data in the numpy rule set) and
/// whether `astype` converts at all.
#[test]
fn casts_agree() {
    let path = common::fixture_path("numpy/ml_dtypes_casts.json");
    let f: CastFixture = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut failures = Vec::new();
    for c in &f.cases {
        let (a, b): (DType, DType) = (
            c.operands[0].parse().unwrap(),
            c.operands[1].parse().unwrap(),
        );
        if can_cast_safely(a, b) != c.safe {
            failures.push(format!("{a} -> {b}: safe is {}", c.safe));
        }
        let got = astype(a, b).map_err(|e| (class(&e).to_string(), e.message()));
        let want = c
            .error
            .as_ref()
            .map(|e| (e.kind.clone(), e.message.clone()));
        if got.err() != want {
            failures.push(format!("{a}.astype({b}): want {want:?}"));
        }
    }
    assert_eq!(f.cases.len(), 34 * 34);
    assert_all_agree("numpy/ml_dtypes_casts.json", f.cases.len(), &failures);
}

#[test]
fn result_type_agrees() {
    check_result_type_file(
        "numpy/ml_dtypes_result_type.json",
        Rules::numpy(),
        MessageCheck::Exact,
        &[],
    );
}

#[derive(Deserialize)]
struct LoopCase {
    ufunc: String,
    operands: Vec<String>,
    #[serde(default)]
    #[serde(rename = "loop")]
    dtypes: Option<Vec<String>>,
    #[serde(default)]
    error: Option<common::ErrorCase>,
}

#[derive(Deserialize)]
struct LoopFixture {
    cases: Vec<LoopCase>,
}

fn loop_cases() -> Vec<LoopCase> {
    let path = common::fixture_path("numpy/ml_dtypes_ufunc_loops.json");
    let f: LoopFixture = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f.cases
}

#[test]
fn every_ufunc_loop_agrees() {
    let cases = loop_cases();
    let mut failures = Vec::new();
    for case in &cases {
        let (name, reduce) = match case.ufunc.strip_suffix(".reduce") {
            Some(n) => (n, true),
            None => (case.ufunc.as_str(), false),
        };
        let u = numpy_ufunc(name).unwrap_or_else(|| panic!("no ufunc {name}"));
        let ops = parse_ops(&case.operands);
        let got = if reduce {
            u.resolve_reduce(ops[0].dtype().unwrap())
        } else {
            u.resolve(&ops)
        };
        let got = match got {
            Ok(Some(l)) => {
                let mut all: Vec<String> = l.inputs.iter().map(|d| d.to_string()).collect();
                all.push(l.output.to_string());
                Ok(all)
            }
            Ok(None) => panic!("{} {:?}: no ml_dtypes operand?", case.ufunc, case.operands),
            Err(e) => Err((class(&e).to_string(), e.message())),
        };
        let agrees = match (&got, &case.dtypes, &case.error) {
            (Ok(g), Some(w), None) => g == w,
            (Err((k, m)), None, Some(w)) => *k == w.kind && *m == w.message,
            _ => false,
        };
        if !agrees {
            failures.push(format!(
                "{} {:?}: got {got:?}, want {:?} {:?}",
                case.ufunc,
                case.operands,
                case.dtypes,
                case.error.as_ref().map(|e| (&e.kind, &e.message))
            ));
        }
    }
    assert!(cases.len() > 27_000);
    assert_all_agree("numpy/ml_dtypes_ufunc_loops.json", cases.len(), &failures);
}

/// The ten ops of `promote --op` are these ufuncs: their result is the loop's output.
#[test]
fn ops_give_the_loops_output() {
    let rules = Rules::numpy();
    let mut n = 0;
    let mut failures = Vec::new();
    for case in loop_cases() {
        let Ok(op) = case.ufunc.parse::<Op>() else {
            continue;
        };
        n += 1;
        let got = rules.op_result(op, &parse_ops(&case.operands));
        let want = common::Case {
            operands: case.operands.clone(),
            dtype: case.dtypes.as_ref().map(|l| l.last().unwrap().clone()),
            weak_type: Some(false),
            error: case.error,
        };
        if let Some(f) = check(&want, &got, MessageCheck::Exact) {
            failures.push(format!("{op}: {f}"));
        }
    }
    assert_all_agree("numpy/ml_dtypes_ufunc_loops.json (ops)", n, &failures);
}

/// `Ufunc::loop_for`, NumPy's loop for operands of any dtype (NumPy's own included, through
/// each ufunc's legacy type resolver), outputs what NumPy's ufunc returns on every case of
/// the ten op fixtures (`np.true_divide(int8, int8)` is float64, `np.power(bool, bool)` int8,
/// `np.subtract(bool, bool)` refused …), Python ints that must fit their loop included.
#[test]
fn every_loop_outputs_the_ops_dtype() {
    let mut n = 0;
    let mut failures = Vec::new();
    for op in Op::ALL {
        let name = op.name();
        let f = load(&format!("numpy/op_{name}.json"));
        let u = numpy_ufunc(name).unwrap_or_else(|| panic!("no ufunc {name}"));
        for case in &f.cases {
            n += 1;
            let got = u
                .loop_for(&parse_ops(&case.operands))
                .map(|l| dtype_lattice::Promotion {
                    dtype: l.output,
                    weak_type: false,
                });
            if let Some(f) = check(case, &got, MessageCheck::Exact) {
                failures.push(format!("{name}: {f}"));
            }
        }
    }
    assert_all_agree("numpy/op_*.json (loops)", n, &failures);
}
