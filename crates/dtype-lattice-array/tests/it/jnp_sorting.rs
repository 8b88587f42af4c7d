//! `jax.numpy`'s searching, set and cumulative functions against JAX 0.10.2
//! (tests/fixtures/indexing/jnp_sorting.json, from tools/gen_jnp_sorting_fixtures.py): each
//! case is a described call — `lexsort`, `searchsorted`, `partition`, `argpartition`,
//! `unique`, `nonzero`, `argwhere`, `flatnonzero`, `cumsum`, `cumprod`, `nancumsum`,
//! `nancumprod`, `cumulative_sum`, `cumulative_prod` — made through
//! `dtype_lattice_array::numpy` outside any transformation and under `jit`, each compared
//! with what JAX gave (dtype, shape and bits, or the exception class and message; for the
//! concrete-only paths under `jit`, JAX's `ConcretizationTypeError` with its first two
//! lines); the gradient of `sum(sin(f(x)))` with `jax.grad`'s; JAX's printed programs read
//! back and computing what JAX's `jit` computed; `vmap` of `searchsorted` and of the
//! cumulative functions along an axis is stacking.

use crate::jnp_indexing::{other_example, read_back};
use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Rules, Value};
use dtype_lattice_array::config::with_rules;
use dtype_lattice_array::numpy::{
    self as jnp, ArrayLike, Axes, NonzeroFill, SearchMethod, Side, UniqueOptions,
};
use dtype_lattice_array::{Array, grad, jit, make_jaxpr, vmap};
use serde_json::Value as Json;

use crate::common::fixture_path;
use crate::gather::differs_unless;
use crate::jaxpr_reader::{arrays, close};

fn cases() -> Vec<Json> {
    let text = std::fs::read_to_string(fixture_path("indexing/jnp_sorting.json")).unwrap();
    let doc: Json = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

/// A Python scalar of the fixture (`{"int": 3}`, `{"float": 1.5}`, `{"bool": true}`).
fn scalar(v: &Json) -> Value {
    let (k, x) = v.as_object().unwrap().iter().next().unwrap();
    match k.as_str() {
        "int" => Value::Int(i128::from(x.as_i64().unwrap())),
        "float" => Value::Float(x.as_f64().unwrap()),
        "bool" => Value::Bool(x.as_bool().unwrap()),
        other => panic!("scalar {other}"),
    }
}

struct Kw<'c>(&'c Json);

impl Kw<'_> {
    fn get(&self, k: &str) -> Option<&Json> {
        self.0.get(k).filter(|v| !v.is_null())
    }
    fn int(&self, k: &str) -> Option<isize> {
        self.get(k).map(|v| v.as_i64().unwrap() as isize)
    }
    fn flag(&self, k: &str, default: bool) -> bool {
        self.get(k).map_or(default, |v| v.as_bool().unwrap())
    }
    fn dtype(&self) -> Option<DType> {
        self.get("dtype")
            .map(|v| v.as_str().unwrap().parse().unwrap())
    }
    fn fill(&self) -> NonzeroFill {
        match self.get("fill_value") {
            None => NonzeroFill::Zero,
            Some(Json::Array(v)) => NonzeroFill::PerAxis(v.iter().map(scalar).collect()),
            Some(v) => NonzeroFill::All(scalar(v)),
        }
    }
}

/// The case's call on `args` (traced or not): its outputs in JAX's order.
fn call(case: &Json, args: &[Array]) -> Result<Vec<Array>, Error> {
    let f = case["fn"].as_str().unwrap();
    let kw = Kw(&case["kw"]);
    let axis = kw.int("axis");
    let size = kw.int("size").map(|s| s as usize);
    let x = &args[0];
    let one = |r: Result<Array, Error>| r.map(|a| vec![a]);
    match f {
        "lexsort" => {
            let keys: Vec<ArrayLike<'_>> = args.iter().map(ArrayLike::from).collect();
            one(jnp::lexsort(&keys, axis.unwrap_or(-1)))
        }
        "searchsorted" => {
            let side: Side = kw
                .get("side")
                .map_or("left", |s| s.as_str().unwrap())
                .parse()?;
            let method: SearchMethod = kw
                .get("method")
                .map_or("scan", |s| s.as_str().unwrap())
                .parse()?;
            let (v, sorter) = match kw.get("v") {
                Some(v) => (ArrayLike::Scalar(scalar(v)), args.get(1)),
                None => (ArrayLike::from(&args[1]), args.get(2)),
            };
            one(jnp::searchsorted(x, v, side, sorter, method))
        }
        "partition" => one(jnp::partition(
            x,
            kw.int("kth").unwrap(),
            axis.unwrap_or(-1),
        )),
        "argpartition" => one(jnp::argpartition(
            x,
            kw.int("kth").unwrap(),
            axis.unwrap_or(-1),
        )),
        "unique" => {
            let opts = UniqueOptions {
                return_index: kw.flag("return_index", false),
                return_inverse: kw.flag("return_inverse", false),
                return_counts: kw.flag("return_counts", false),
                axis,
                size,
                fill_value: kw.get("fill_value").map(scalar),
                equal_nan: kw.flag("equal_nan", true),
            };
            jnp::unique(x, &opts).map(jnp::Unique::into_vec)
        }
        "nonzero" => jnp::nonzero(x, size, &kw.fill()),
        "argwhere" => one(jnp::argwhere(x, size, &kw.fill())),
        "flatnonzero" => one(jnp::flatnonzero(x, size, &kw.fill())),
        "cumsum" => one(jnp::cumsum_axis(x, axis, kw.dtype())),
        "cumprod" => one(jnp::cumprod(x, axis, kw.dtype())),
        "nancumsum" => one(jnp::nancumsum(x, axis, kw.dtype())),
        "nancumprod" => one(jnp::nancumprod(x, axis, kw.dtype())),
        "cumulative_sum" => one(jnp::cumulative_sum(
            x,
            axis,
            kw.dtype(),
            kw.flag("include_initial", false),
        )),
        "cumulative_prod" => one(jnp::cumulative_prod(
            x,
            axis,
            kw.dtype(),
            kw.flag("include_initial", false),
        )),
        other => panic!("fn {other}"),
    }
}

/// Whether the error's class and message are JAX's (a `ConcretizationTypeError`: its first
/// two lines, the rest names JAX's Python function and source line).
fn same_error(got: &Error, kind: &str, message: &str) -> bool {
    if got.exception().map(Exception::name) != Some(kind) {
        return false;
    }
    if kind == "ConcretizationTypeError" {
        let head = |m: &str| m.lines().take(2).collect::<Vec<_>>().join("\n");
        head(&got.message()) == head(message)
    } else {
        got.message() == message
    }
}

/// JAX's result (`want`: leaves, or an error) against ours.
fn differs(what: &str, got: Result<Vec<Array>, Error>, want: &Json) -> Option<String> {
    if let Some(e) = want.get("error") {
        let (kind, message) = (e["kind"].as_str().unwrap(), e["message"].as_str().unwrap());
        return match got {
            Ok(a) => Some(format!("{what}: {a:?}, JAX {kind}: {message}")),
            Err(g) => (!same_error(&g, kind, message))
                .then(|| format!("{what}: {g:?} / {}, JAX {kind}: {message}", g.message())),
        };
    }
    differs_unless(what, got, want, |_, _| false)
}

#[test]
fn searching_and_cumulative_functions_compute_what_jax_computes() {
    let all = cases();
    assert!(all.len() >= 450, "{} cases", all.len());
    let mut failures = Vec::new();
    let (mut jitted, mut errors, mut grads) = (0, 0, 0);
    for case in &all {
        let name = case["name"].as_str().unwrap();
        if case["kw"].get("kth").is_some_and(Json::is_array) {
            // NumPy's sequence of kth, which JAX refuses (its kth is a static, hashable
            // argument) and the Rust `kth` (one integer) cannot express.
            assert_eq!(case["jit"]["error"]["kind"], "ValueError", "{name}");
            continue;
        }
        with_rules(Rules::jax().x64(case["x64"].as_bool().unwrap()), || {
            let args = arrays(&case["args"]);
            failures.extend(differs(
                &format!("{name} eager"),
                call(case, &args),
                &case["eager"],
            ));
            let got = jit(|a: Vec<Array>| call(case, &a)).call(&args);
            if case["jit"].get("error").is_some() {
                errors += 1;
            } else {
                jitted += 1;
            }
            failures.extend(differs(&format!("{name} jit"), got, &case["jit"]));
            if let Some(want) = case.get("grad") {
                grads += 1;
                let rest = args[1..].to_vec();
                let g = grad(
                    |x: Array| {
                        let mut a = vec![x];
                        a.extend(rest.iter().cloned());
                        let y = call(case, &a)?.remove(0).astype(DType::Float32)?;
                        jnp::sum(jnp::sin(&y)?, Axes::All, false)
                    },
                    &args[0],
                );
                failures.extend(differs_unless(
                    &format!("{name} grad"),
                    g.map(|g| vec![g]),
                    want,
                    close,
                ));
            }
        });
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        jitted >= 340 && errors >= 90 && grads >= 26,
        "{jitted} jitted, {errors} errors under jit, {grads} gradients"
    );
}

/// Why JAX's text of a program does not read back here, if it does not: programs whose
/// empty intermediate results JAX prints as `_` and then uses (`unique` of an empty array
/// with `size`), which the reader cannot bind. (`searchsorted`'s `'scan'` and
/// `'compare_all'` programs, which compare with JAX's total-order primitives `lt_to` and
/// `le_to`, read.)
fn unreadable(text: &str) -> Option<&'static str> {
    if text.contains("in (_,") {
        Some("`_` used")
    } else {
        None
    }
}

/// Whether the reader's printing of JAX's text is JAX's text: not where a `scatter-add`
/// names its shared `update_jaxpr` (`update_jaxpr=jaxpr`), whose definition the printer
/// leaves out (the program computes the same all the same).
fn prints_back(text: &str) -> bool {
    !text.contains("update_jaxpr=jaxpr")
}

/// Each program JAX printed reads back through the jaxpr reader, prints to the same text
/// (see [`prints_back`]), and evaluates (with its constants) to what JAX's `jit` computed
/// (see [`unreadable`]).
#[test]
fn jax_texts_read_back_and_compute_the_same() {
    let mut failures = Vec::new();
    let mut read = 0;
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        let Some(text) = case["text"].as_str() else {
            continue;
        };
        if unreadable(text).is_some() {
            continue;
        }
        failures.extend(read_back(&case, name, text, prints_back(text)));
        read += 1;
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(read >= 350, "{read}");
}

/// `vmap` over a batch of two examples is the stack of the calls on each: `searchsorted`
/// with the queries batched, the sorted array batched, and both (the sorter shared); the
/// cumulative functions along an axis, `lexsort`, `partition`, `argpartition` and the
/// functions with a `size` with every argument batched.
#[test]
fn vmap_is_stacking() {
    let mut checked = 0;
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        let f = case["fn"].as_str().unwrap();
        let kw = Kw(&case["kw"]);
        let batchable = match f {
            "searchsorted" | "lexsort" | "partition" | "argpartition" => true,
            "unique" | "nonzero" | "argwhere" | "flatnonzero" => kw.get("size").is_some(),
            _ => kw.get("axis").is_some(),
        };
        if !batchable || case["jit"].get("error").is_some() || case["kw"]["kth"].is_array() {
            continue;
        }
        with_rules(Rules::jax().x64(case["x64"].as_bool().unwrap()), || {
            let args = arrays(&case["args"]);
            let others: Vec<Array> = args.iter().map(|a| other_example(a, true)).collect();
            let stacked = |a: &Array, b: &Array| jnp::stack(&[a.into(), b.into()], 0).unwrap();
            let same = |got: Vec<Array>, want: Vec<Array>, how: &str| {
                assert_eq!(got.len(), want.len(), "{name} ({how})");
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(
                        (g.dtype(), g.shape(), g.as_bytes()),
                        (w.dtype(), w.shape(), w.as_bytes()),
                        "{name} ({how})"
                    );
                }
            };
            let stack_all = |a: Vec<Array>, b: Vec<Array>| -> Vec<Array> {
                a.iter().zip(&b).map(|(a, b)| stacked(a, b)).collect()
            };
            // The arguments batched: which ones (a sorter is shared: it must stay a
            // permutation of its array's positions).
            let batched: Vec<bool> = (0..args.len())
                .map(|k| !(f == "searchsorted" && k == 2 && kw.get("v").is_none()))
                .collect();
            let mut patterns: Vec<Vec<bool>> = vec![batched.clone()];
            if f == "searchsorted" && args.len() > 1 {
                // Only the queries, then only the sorted array.
                let mut only = vec![false; args.len()];
                only[1] = kw.get("v").is_none();
                patterns.push(only.clone());
                let mut first = vec![false; args.len()];
                first[0] = true;
                patterns.push(first);
            }
            for pattern in patterns.iter().filter(|p| p.iter().any(|&b| b)) {
                let with = |batch: &[Array]| {
                    let mut it = batch.iter();
                    let full: Vec<Array> = args
                        .iter()
                        .zip(pattern)
                        .map(|(a, &b)| {
                            if b {
                                it.next().unwrap().clone()
                            } else {
                                a.clone()
                            }
                        })
                        .collect();
                    call(&case, &full)
                };
                let pick = |k: usize| -> Vec<Array> {
                    args.iter()
                        .zip(&others)
                        .zip(pattern)
                        .filter(|(_, b)| **b)
                        .map(|((a, o), _)| if k == 0 { a.clone() } else { o.clone() })
                        .collect()
                };
                let input: Vec<Array> = pick(0)
                    .iter()
                    .zip(&pick(1))
                    .map(|(a, b)| stacked(a, b))
                    .collect();
                let got = vmap(|b: Vec<Array>| with(&b))
                    .call(&input)
                    .unwrap_or_else(|e| panic!("{name} {pattern:?}: {e}"));
                let want = stack_all(with(&pick(0)).unwrap(), with(&pick(1)).unwrap());
                same(got, want, &format!("{pattern:?}"));
                checked += 1;
            }
        });
    }
    assert!(checked >= 480, "{checked}");
}

/// The flattened `jnp::cumsum` keeps its meaning: `cumsum_axis` without an axis or dtype is
/// it, under JAX's rules and NumPy's.
#[test]
fn flattened_cumsum_is_unchanged() {
    let x = Array::from_shape_vec(&[2, 3], vec![1i8, 2, 3, 4, 5, 6]).unwrap();
    for rules in [Rules::jax(), Rules::numpy()] {
        with_rules(rules, || {
            let a = jnp::cumsum(&x).unwrap();
            let b = jnp::cumsum_axis(&x, None, None).unwrap();
            assert_eq!(
                (a.dtype(), a.shape(), a.as_bytes()),
                (b.dtype(), b.shape(), b.as_bytes())
            );
        });
    }
    let b = Array::from_vec(vec![true, true, false]);
    let c = jnp::cumsum_axis(&b, Some(0), None).unwrap();
    assert_eq!(
        (c.dtype(), c.to_vec::<i32>().unwrap()),
        (DType::Int32, vec![1, 2, 2])
    );
}

/// The functions whose programs print as JAX prints them (their jitted functions named as
/// JAX's, `_where` shared): the cumulative functions, `lexsort`, `nonzero`, `flatnonzero`,
/// `argwhere`, `partition` and `argpartition`. The others still differ in JAX's helpers:
/// `searchsorted`'s `scan` over a body with a jitted `floor_divide`, `unique`'s jitted
/// `_unique_sorted_mask`.
const PRINTS_AS_JAX: &[&str] = &[
    "cumsum",
    "cumprod",
    "nancumsum",
    "nancumprod",
    "cumulative_sum",
    "cumulative_prod",
    "lexsort",
    "nonzero",
    "flatnonzero",
    "argwhere",
    "partition",
    "argpartition",
];

/// Whether `ours` is JAX's `text`: the same, or, where JAX printed NumPy integers its
/// batching rules put in parameters (`np.int64(1)`: a Python detail of how JAX computed the
/// dimension numbers, not of the program), the same with those as the integers they are
/// and the line breaks their longer text caused ignored.
fn same_text(ours: &str, text: &str) -> bool {
    if ours == text {
        return true;
    }
    if !text.contains("np.int64(") {
        return false;
    }
    let mut plain = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("np.int64(") {
        plain.push_str(&rest[..i]);
        let tail = &rest[i + "np.int64(".len()..];
        let close = tail.find(')').unwrap_or(tail.len());
        plain.push_str(&tail[..close]);
        rest = tail.get(close + 1..).unwrap_or("");
    }
    plain.push_str(rest);
    let squeezed = |t: &str| t.split_whitespace().collect::<String>();
    squeezed(ours) == squeezed(&plain)
}

/// `make_jaxpr` of each call of [`PRINTS_AS_JAX`] prints JAX's text (see [`same_text`]).
#[test]
fn programs_print_as_jax_prints_them() {
    let mut failures = Vec::new();
    let mut same = 0;
    for case in cases() {
        let (Some(text), Some(f)) = (case["text"].as_str(), case["fn"].as_str()) else {
            continue;
        };
        if !PRINTS_AS_JAX.contains(&f) {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        with_rules(Rules::jax().x64(case["x64"].as_bool().unwrap()), || {
            let args = arrays(&case["args"]);
            match make_jaxpr(|a: Vec<Array>| call(&case, &a), &args) {
                Ok(g) if same_text(&g.to_string(), text) => same += 1,
                Ok(g) => failures.push(format!("{name}:\n{g}\nJAX:\n{text}")),
                Err(e) => failures.push(format!("{name}: {e:?}")),
            }
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(same >= 230, "{same} texts");
}
