//! Shared helpers for the conformance tests: loading fixtures written by `tools/` and
//! comparing cases.
#![allow(dead_code)]

use std::path::PathBuf;

use dtype_lattice::{DType, Error, Operand, Promotion, PyType, Value};
use serde::Deserialize;

/// The name an error goes by in the fixtures: the Python exception class of a refusal the
/// library raises, else our error's kind (as the CLI's JSON prints it).
pub fn class(e: &Error) -> &'static str {
    e.exception().map_or(e.kind().name(), |x| x.name())
}

/// One fixture case: operands and either a result or an error.
#[derive(Debug, Deserialize)]
pub struct Case {
    pub operands: Vec<String>,
    #[serde(default)]
    pub dtype: Option<String>,
    #[serde(default)]
    pub weak_type: Option<bool>,
    #[serde(default)]
    pub error: Option<ErrorCase>,
}

#[derive(Debug, Deserialize)]
pub struct ErrorCase {
    pub kind: String,
    pub message: String,
}

#[derive(Debug, Default, Deserialize)]
pub struct Mode {
    #[serde(default)]
    pub strict: bool,
    #[serde(default)]
    pub x64: bool,
    #[serde(default)]
    pub dtype_conversion_mode: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Fixture {
    #[serde(default)]
    pub mode: Mode,
    pub cases: Vec<Case>,
}

pub fn fixture_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
}

pub fn load(rel: &str) -> Fixture {
    let path = fixture_path(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad fixture {}: {e}", path.display()))
}

/// How strictly error messages are compared.
#[derive(Clone, Copy, Debug)]
pub enum MessageCheck {
    /// Exactly.
    Exact,
    /// Exactly, up to the order of the quoted names in a `(...)` tuple (JAX lists a *set*).
    UpToTupleOrder,
    /// Only the error kind.
    KindOnly,
}

fn sorted_tuple(message: &str) -> String {
    let (Some(open), Some(close)) = (message.find('('), message.find(')')) else {
        return message.to_string();
    };
    let mut items: Vec<&str> = message[open + 1..close]
        .split(", ")
        .map(|s| s.trim_end_matches(','))
        .collect();
    items.sort();
    format!(
        "{}({}){}",
        &message[..open],
        items.join(", "),
        &message[close + 1..]
    )
}

/// Compares one case; `None` when it agrees, else a description of the disagreement.
pub fn check(
    case: &Case,
    got: &Result<Promotion, Error>,
    messages: MessageCheck,
) -> Option<String> {
    let ops = case.operands.join(" ");
    match (got, &case.error) {
        (Ok(p), None) => {
            let want_dtype = case.dtype.as_deref().expect("dtype or error");
            let want_weak = case.weak_type.unwrap_or(false);
            if p.dtype.name() == want_dtype && p.weak_type == want_weak {
                None
            } else {
                Some(format!(
                    "[{ops}]: got {p}, want {want_dtype}{}",
                    if want_weak { " (weak)" } else { "" }
                ))
            }
        }
        (Err(e), Some(want)) => {
            let (kind, message) = (class(e), e.message());
            let same_message = match messages {
                MessageCheck::Exact => message == want.message,
                MessageCheck::UpToTupleOrder => {
                    sorted_tuple(&message) == sorted_tuple(&want.message)
                }
                MessageCheck::KindOnly => true,
            };
            if kind == want.kind && same_message {
                None
            } else {
                Some(format!(
                    "[{ops}]: got {kind}: {message}\n      want {}: {}",
                    want.kind, want.message
                ))
            }
        }
        (Ok(p), Some(want)) => Some(format!(
            "[{ops}]: got {p}, want {}: {}",
            want.kind, want.message
        )),
        (Err(e), None) => Some(format!(
            "[{ops}]: got {e}, want {}",
            case.dtype.as_deref().unwrap_or("?")
        )),
    }
}

/// Asserts that no case disagrees, listing the first disagreements.
pub fn assert_all_agree(name: &str, total: usize, failures: &[String]) {
    assert!(total > 0, "{name}: no cases");
    if !failures.is_empty() {
        let shown: Vec<&str> = failures.iter().take(25).map(String::as_str).collect();
        panic!(
            "{name}: {} of {total} cases disagree with the library:\n  {}",
            failures.len(),
            shown.join("\n  ")
        );
    }
    eprintln!("{name}: {total} cases agree");
}

/// Parses a fixture's operand strings with the CLI's grammar.
pub fn parse_ops(ops: &[String]) -> Vec<Operand> {
    ops.iter()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|e| panic!("fixture operand {s:?}: {e}"))
        })
        .collect()
}

/// A class of cases the model cannot represent, set aside from the comparison: we refuse an
/// operand with `UnsupportedOperand` (`Reason::Unsupported` with exactly the reason `ours`) and
/// the library answers exactly `library` (`"Kind: message"` of its exception, or `"dtype NAME"`
/// for a dtype the model does not have). Anything else, including any other
/// `UnsupportedOperand`, is compared; each fixture pins how many cases each class sets aside.
#[derive(Clone, Copy, Debug)]
pub struct SetAside {
    /// Our refusal's reason.
    pub ours: &'static str,
    /// The library's answer.
    pub library: &'static str,
    /// Why the two answers cannot be compared further.
    pub reason: &'static str,
}

/// The library's answer of a case, as [`SetAside::library`] writes it.
fn library_answer(case: &Case) -> String {
    match (&case.error, &case.dtype) {
        (Some(e), _) => format!("{}: {}", e.kind, e.message),
        (None, Some(d)) => format!("dtype {d}"),
        (None, None) => String::new(),
    }
}

/// The class of `set_aside` a case falls in, if any.
pub fn set_aside_class(
    case: &Case,
    got: &Result<Promotion, Error>,
    set_aside: &[(SetAside, usize)],
) -> Option<usize> {
    let Err(e) = got else { return None };
    let dtype_lattice::error::Reason::Unsupported { why, .. } = e.reason() else {
        return None;
    };
    let library = library_answer(case);
    set_aside
        .iter()
        .position(|(s, _)| s.ours == why && s.library == library)
}

/// Asserts that each class of `set_aside` set aside exactly its pinned number of cases.
pub fn assert_set_aside(name: &str, set_aside: &[(SetAside, usize)], counts: &[usize]) {
    for ((s, want), &got) in set_aside.iter().zip(counts) {
        assert_eq!(
            got, *want,
            "{name}: {got} cases set aside (pinned: {want}) as ours {:?} vs the library's {:?} ({})",
            s.ours, s.library, s.reason
        );
        eprintln!(
            "{name}: {got} cases set aside: {} (ours: {}; the library: {})",
            s.reason, s.ours, s.library
        );
    }
}

/// Operands of every shape: each dtype as an array, weak array and 0-d array at its edges,
/// the Python types, and literals at the edges of every range.
pub fn edge_operands() -> Vec<Operand> {
    let mut out = Vec::new();
    let values = [
        Value::Bool(true),
        Value::Int(0),
        Value::Int(-1),
        Value::Int(i128::MAX),
        Value::Int(i128::MIN),
        Value::Int(1 << 64),
        Value::Float(f64::NAN),
        Value::Float(-f64::INFINITY),
        Value::Float(f64::MAX),
        Value::Float(-0.0),
        Value::Complex(f64::NAN, 1e300),
    ];
    for &t in DType::ALL {
        out.push(Operand::array(t));
        out.push(Operand::weak_array(t));
        for v in values {
            if let Ok(o) = Operand::scalar(t, v) {
                out.push(o);
            }
            // Also a value the constructor would have converted first.
            out.push(Operand::Scalar { dtype: t, value: v });
        }
    }
    out.extend(PyType::ALL.map(Operand::PyType));
    out.extend(values.map(Operand::Literal));
    out
}

/// Checks every case of a plain-promotion fixture with `rules` (in the fixture's mode), but
/// the classes of `set_aside`, each of which must set aside exactly its pinned count.
pub fn check_result_type_file(
    name: &str,
    rules: dtype_lattice::Rules,
    messages: MessageCheck,
    set_aside: &[(SetAside, usize)],
) {
    check_file(name, rules, messages, set_aside, |r, ops| {
        r.result_type(ops)
    });
}

/// Checks every case of one fixture with `answer` under `rules` in the fixture's mode.
fn check_file(
    name: &str,
    rules: dtype_lattice::Rules,
    messages: MessageCheck,
    set_aside: &[(SetAside, usize)],
    answer: impl Fn(&dtype_lattice::Rules, &[Operand]) -> Result<Promotion, Error>,
) {
    let f = load(name);
    let rules = rules.strict(f.mode.strict).x64(f.mode.x64);
    let mut counts = vec![0; set_aside.len()];
    let failures: Vec<String> = f
        .cases
        .iter()
        .filter_map(|case| {
            let got = answer(&rules, &parse_ops(&case.operands));
            match set_aside_class(case, &got, set_aside) {
                Some(i) => {
                    counts[i] += 1;
                    None
                }
                None => check(case, &got, messages),
            }
        })
        .collect();
    let aside: usize = counts.iter().sum();
    assert_all_agree(name, f.cases.len() - aside, &failures);
    assert_set_aside(name, set_aside, &counts);
}

/// Checks `<dir>/op_<op><suffix>.json` for every op but `skip`, with `rules` in each file's
/// mode; `set_aside` as [`check_result_type_file`]'s, pinned for each file.
pub fn check_op_files(
    dir: &str,
    suffix: &str,
    rules: dtype_lattice::Rules,
    skip: &[dtype_lattice::Op],
    messages: MessageCheck,
    set_aside: &[(SetAside, usize)],
) {
    for op in dtype_lattice::Op::ALL
        .into_iter()
        .filter(|o| !skip.contains(o))
    {
        let name = format!("{dir}/op_{op}{suffix}.json");
        check_file(&name, rules, messages, set_aside, |r, ops| {
            r.op_result(op, ops)
        });
    }
}

/// NumPy (2 and 1.26) cannot build a bfloat16 operand: `np.dtype('bfloat16')` is unknown
/// without ml_dtypes.
pub const NUMPY_BFLOAT16: SetAside = SetAside {
    ours: "it has no dtype bfloat16",
    library: "TypeError: data type 'bfloat16' not understood",
    reason: "NumPy has no bfloat16: the library cannot build the operand",
};

/// NumPy gives a Python int beyond int64/uint64 the `object` dtype, which the model lacks.
pub const NUMPY_OBJECT: SetAside = SetAside {
    ours: "NumPy gives this Python int the object dtype, which dtype-lattice does not model",
    library: "dtype object",
    reason: "a Python int beyond 64 bits makes an object array; the model has no object dtype",
};

/// array-api-strict has no float16: our reason is the library's message, only the class
/// differs (`UnsupportedOperand`, not `AttributeError`).
pub const ARRAY_API_FLOAT16: SetAside = SetAside {
    ours: "module 'array_api_strict' has no attribute 'float16'",
    library: "AttributeError: module 'array_api_strict' has no attribute 'float16'",
    reason: "the standard has no float16: the library cannot build the operand",
};

/// array-api-strict has no bfloat16 (as [`ARRAY_API_FLOAT16`]).
pub const ARRAY_API_BFLOAT16: SetAside = SetAside {
    ours: "module 'array_api_strict' has no attribute 'bfloat16'",
    library: "AttributeError: module 'array_api_strict' has no attribute 'bfloat16'",
    reason: "the standard has no bfloat16: the library cannot build the operand",
};

pub mod layering;
