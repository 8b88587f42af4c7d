//! XLA's algebraic simplifier as JAX 0.10.2's CPU backend applies it
//! (tests/fixtures/jaxpr/simplifier.json, from tools/gen_simplifier_fixtures.py): each
//! program's printed jaxpr is read and run under `jit`, which must compute JAX's `jit` bit for
//! bit (XLA rewrote `a / sqrt(b)` into `a * rsqrt(b)` …), and equation by equation, which must
//! compute JAX's primitives one at a time bit for bit. The programs were chosen so that the
//! two differ; a rule the plan lost fails here.

use std::collections::BTreeSet;

use dtype_lattice::Rules;
use dtype_lattice_array::config::with_rules;
use dtype_lattice_array::core::ClosedJaxpr;
use dtype_lattice_array::{Array, jit};
use serde_json::Value;

use crate::common::fixture_path;
use crate::fixture_arrays::{array, hex};
use crate::jaxpr_reader::arrays;

fn doc() -> Value {
    let text = std::fs::read_to_string(fixture_path("jaxpr/simplifier.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn rules(case: &Value) -> Rules {
    Rules::jax().x64(case["x64"].as_bool().unwrap())
}

/// The programs whose every primitive after XLA's rewrites the crate computes bit for bit as
/// XLA does (quotients, products, sums, `sqrt`, `abs`, selections): their `jit` is compared
/// bit for bit. The others still compute `exp`, `log`, `pow` or `rsqrt`, which the crate
/// computes within an ulp or two of XLA's (XLA's `rsqrt` is the processor's estimate refined
/// by Newton–Raphson steps): they are compared within [`ULPS`] of the output's largest
/// magnitude, where a lost rewrite can hide.
const EXACT_JIT: &[&str] = &[
    "over_constant",
    "over_scalar_used_again",
    "over_column_used_again",
    "over_row_used_again",
    "over_row_twice",
    "over_literal",
    "quotient_over_quotient",
    "quotient_over",
    "over_quotient",
    "pow_two",
    "pow_three",
    "pow_minus_one",
    "pow_half",
    "sqrt_square",
    "over_scalar_array",
    "over_sum",
];

/// The programs whose primitives, one at a time, the crate computes bit for bit as XLA does
/// (the others' are the elementwise suite's, within its ulp rules): their equation-by-equation
/// evaluation is compared bit for bit.
const EXACT_EAGER: &[&str] = &[
    "quotient_over_quotient",
    "quotient_over",
    "over_quotient",
    "sqrt_square",
    "over_scalar_array",
    "over_sum",
];

/// The distance allowed to the programs outside [`EXACT_JIT`]: this many units in the last
/// place of the output's largest finite magnitude.
const ULPS: f64 = 4.0;

/// Whether every element of `got` is within [`ULPS`] of `want`'s scale (NaN where JAX has
/// NaN), part by part for complex numbers.
fn close(got: &Array, want: &Array) -> bool {
    use dtype_lattice::DType;
    let parts = |a: &Array| -> Vec<f64> {
        match a.dtype() {
            DType::Complex64 | DType::Complex128 => a
                .astype(DType::Complex128)
                .and_then(|c| c.to_vec::<num_complex::Complex64>())
                .unwrap()
                .into_iter()
                .flat_map(|z| [z.re, z.im])
                .collect(),
            _ => a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap(),
        }
    };
    let eps = match want.dtype() {
        DType::Float16 => 2f64.powi(-10),
        DType::BFloat16 => 2f64.powi(-7),
        DType::Float32 | DType::Complex64 => 2f64.powi(-23),
        _ => 2f64.powi(-52),
    };
    let (g, w) = (parts(got), parts(want));
    let scale = w
        .iter()
        .filter(|v| v.is_finite())
        .fold(0f64, |m, v| m.max(v.abs()));
    g.len() == w.len()
        && g.iter().zip(&w).all(|(a, b)| {
            (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= ULPS * eps * scale
        })
}

/// The first element whose bits differ from JAX's, described.
fn bits(
    what: &str,
    got: &Result<Vec<Array>, dtype_lattice::Error>,
    want: &Value,
) -> Option<String> {
    let got = match got {
        Ok(g) => g,
        Err(e) => return Some(format!("{what}: {e}")),
    };
    let want = want.as_array().unwrap();
    if got.len() != want.len() {
        return Some(format!("{what}: {} outputs, JAX {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let w_arr = array(w);
        if g.dtype() != w_arr.dtype() || g.shape() != w_arr.shape() {
            return Some(format!("{what} output {i}: {g:?} but JAX {w_arr:?}"));
        }
        let wb = hex(w["hex"].as_str().unwrap());
        let gb = g.as_bytes();
        if gb != wb.as_slice() {
            let size = gb.len() / g.size().max(1);
            let k = (0..g.size())
                .find(|&k| gb[k * size..(k + 1) * size] != wb[k * size..(k + 1) * size])
                .unwrap_or(0);
            let differing = (0..g.size())
                .filter(|&k| gb[k * size..(k + 1) * size] != wb[k * size..(k + 1) * size])
                .count();
            return Some(format!(
                "{what} output {i}: {differing} of {} elements differ; element {k}: {:?} but JAX {:?}",
                g.size(),
                &gb[k * size..(k + 1) * size],
                &wb[k * size..(k + 1) * size],
            ));
        }
    }
    None
}

#[test]
fn jitted_programs_compute_what_xlas_simplified_programs_compute() {
    let doc = doc();
    let mut failures = Vec::new();
    let mut rewritten = BTreeSet::new();
    let programs = doc["programs"].as_array().unwrap();
    for case in programs {
        let name = case["name"].as_str().unwrap();
        with_rules(rules(case), || {
            let f: ClosedJaxpr = case["text"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let f = f.with_consts(arrays(&case["consts"])).unwrap();
            let args = arrays(&case["args"]);
            let program = name.rsplit_once('_').unwrap().0;
            let jitted = jit(|a: Vec<Array>| f.call(&a)).call(&args);
            let m = bits(&format!("{name} jit"), &jitted, &case["jit"]);
            if EXACT_JIT.contains(&program) {
                failures.extend(m);
            } else if let (Some(m), Ok(got)) = (m, &jitted) {
                let want = arrays(&case["jit"]);
                if !got.iter().zip(&want).all(|(g, w)| close(g, w)) {
                    failures.push(format!("{m} (beyond {ULPS} ulps of the scale)"));
                }
            }
            if EXACT_EAGER.contains(&program) {
                let eager = f.call(&args);
                failures.extend(bits(&format!("{name} eager"), &eager, &case["eager"]));
            }
        });
        if case["differs"] == true {
            rewritten.insert(name.rsplit_once('_').unwrap().0.to_string());
        }
    }
    // Every program shows its rule changing bits in at least one dtype, so that the plan
    // without the rule fails above. (`over_scalar_array`, `over_sum` and `softmax_rows`
    // divide by an implicitly broadcast operand (`over_column_used_again` too: a column is
    // reshaped first; `over_row_used_again` too), and `over_literal` by a 0-d literal, which
    // XLA rewrites even in a primitive compiled alone: see
    // `eager_divisions_by_a_broadcast_operand_are_xlas`.)
    for name in doc["programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().rsplit_once('_').unwrap().0)
    {
        if !rewritten.contains(name)
            && ![
                "over_scalar_array",
                "over_sum",
                "softmax_rows",
                "over_literal",
                "over_column_used_again",
                "over_row_used_again",
            ]
            .contains(&name)
        {
            failures.push(format!(
                "{name}: no dtype where XLA's rewrite changes a bit"
            ));
        }
    }
    assert!(programs.len() > 80);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `jnp.divide(x, s)` outside `jit`, `s` broadcast (0-d, or a column): JAX compiles the
/// function, and XLA divides by the broadcast operand as `x * broadcast(1 / s)` (float16,
/// float32, float64; not bfloat16, which XLA computes behind conversions, nor complex).
#[test]
fn eager_divisions_by_a_broadcast_operand_are_xlas() {
    let doc = doc();
    let mut failures = Vec::new();
    let mut differing = 0;
    for case in doc["eager"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        with_rules(rules(case), || {
            let args = arrays(&case["args"]);
            let got = dtype_lattice_array::numpy::divide(&args[0], &args[1]).map(|a| vec![a]);
            let want = Value::Array(vec![case["out"].clone()]);
            failures.extend(bits(name, &got, &want));
        });
        differing += usize::from(case["differs"] == true);
    }
    assert!(differing >= 6, "{differing}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
