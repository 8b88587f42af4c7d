//! `jax.numpy`'s indexing layer against JAX 0.10.2 (tests/fixtures/indexing/jnp_indexing.json,
//! from tools/gen_jnp_indexing_fixtures.py): each case is a described call — `x[idx]`,
//! `x.at[idx].get/set/add/subtract/multiply/divide/power/min/max/apply`, `jnp.take`,
//! `jnp.take_along_axis` — made through `dtype_lattice_array::numpy` outside any
//! transformation, under `jit` and under `make_jaxpr`, each compared with what JAX gave
//! (dtype, shape and bits, or the exception class and message); the printed jaxpr with JAX's
//! text; the gradient of `sum(sin(f(x)))` in `x` with `jax.grad`'s; `vmap` over a batch of
//! `x` with the stacked results.

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Rules, Value};
use dtype_lattice_array::config::with_rules;
use dtype_lattice_array::core::ClosedJaxpr;
use dtype_lattice_array::numpy::{self as jnp, ArrayLike, At, Axes, Index, IndexMode};
use dtype_lattice_array::{Array, grad, jit, make_jaxpr, vmap};
use serde_json::Value as Json;

use crate::common::fixture_path;
use crate::fixture_arrays::array;
use crate::gather::differs_unless;
use crate::jaxpr_reader::{arrays, close};

fn cases() -> Vec<Json> {
    let text = std::fs::read_to_string(fixture_path("indexing/jnp_indexing.json")).unwrap();
    let doc: Json = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

/// A Python scalar of the fixture (`{"int": 3}`, `{"float": 1.5}`, `{"bool": true}`).
fn scalar(v: &Json) -> Option<Value> {
    let (k, x) = v.as_object()?.iter().next()?;
    Some(match k.as_str() {
        "int" => Value::Int(i128::from(x.as_i64().unwrap())),
        "float" => Value::Float(x.as_f64().unwrap()),
        "bool" => Value::Bool(x.as_bool().unwrap()),
        other => panic!("scalar {other}"),
    })
}

/// The index items: traced arrays from `args`, closed-over ones from `consts`.
fn indices(spec: &Json, args: &[Array], consts: &[Array]) -> Vec<Index> {
    spec.as_array()
        .unwrap()
        .iter()
        .map(|item| match item {
            Json::String(s) if s == "None" => Index::NewAxis,
            Json::String(s) if s == "..." => Index::Ellipsis,
            Json::Number(n) => Index::At(n.as_i64().unwrap() as isize),
            Json::Object(o) => {
                if let Some(s) = o.get("slice") {
                    let part = |k: usize| s.get(k).and_then(Json::as_i64).map(|v| v as isize);
                    Index::Slice(part(0), part(1), part(2).unwrap_or(1))
                } else if let Some(k) = o.get("arg") {
                    Index::Array(args[k.as_u64().unwrap() as usize].clone())
                } else {
                    Index::Array(consts[o["const"].as_u64().unwrap() as usize].clone())
                }
            }
            other => panic!("index item {other}"),
        })
        .collect()
}

/// The case's call on `args` (traced or not); `consts` are the concrete arguments.
fn call(case: &Json, args: &[Array], consts: &[Array]) -> Result<Array, Error> {
    let f = case["fn"].as_str().unwrap();
    let mode: Option<IndexMode> = case["mode"].as_str().map(|m| m.parse()).transpose()?;
    let fill = scalar(&case["fill_value"]);
    let axis = case["axis"].as_i64().map(|a| a as isize);
    let x = &args[0];
    match f {
        "take" => return jnp::take(x, &args[1], axis, mode, fill),
        "take_along_axis" => return jnp::take_along_axis(x, &args[1], axis, mode, fill),
        _ => {}
    }
    let idx = indices(&case["index"], args, consts);
    let at = x.at(&idx);
    let value = || -> ArrayLike<'_> {
        let v = &case["value"];
        match v.get("arg") {
            Some(k) => ArrayLike::Array(&args[k.as_u64().unwrap() as usize]),
            None => ArrayLike::Scalar(scalar(v).unwrap()),
        }
    };
    match f {
        "index" => jnp::index(x, &idx),
        "get" => at.get(mode, fill),
        "set" => at.set(value(), mode),
        "add" => at.add(value(), mode),
        "subtract" => at.subtract(value(), mode),
        "multiply" => at.multiply(value(), mode),
        "divide" => at.divide(value(), mode),
        "power" => at.power(value(), mode),
        "min" => at.min(value(), mode),
        "max" => at.max(value(), mode),
        "apply_sin" => at.apply(|v| jnp::sin(v), mode),
        other => panic!("fn {other}"),
    }
}

/// JAX's result (`want`: leaves, or an error) against ours.
fn differs(what: &str, got: Result<Array, Error>, want: &Json) -> Option<String> {
    if let Some(e) = want.get("error") {
        let (kind, message) = (e["kind"].as_str().unwrap(), e["message"].as_str().unwrap());
        return match got {
            Ok(a) => Some(format!("{what}: {a}, JAX {kind}: {message}")),
            Err(g) => {
                let same =
                    g.exception().map(Exception::name) == Some(kind) && g.message() == message;
                (!same).then(|| format!("{what}: {g:?} / {}, JAX {kind}: {message}", g.message()))
            }
        };
    }
    differs_unless(what, got.map(|a| vec![a]), want, |_, _| false)
}

/// `apply`'s function runs inside XLA's scatter loop, whose `sin` can differ from its
/// vectorised one in the last bit.
fn approximate(name: &str) -> bool {
    name.starts_with("at_apply_sin")
}

#[test]
fn indexing_computes_what_jax_computes() {
    let all = cases();
    assert!(all.len() >= 290, "{} cases", all.len());
    let mut failures = Vec::new();
    let (mut texts, mut grads) = (0, 0);
    for case in &all {
        let name = case["name"].as_str().unwrap();
        with_rules(Rules::jax().x64(case["x64"].as_bool().unwrap()), || {
            let args = arrays(&case["args"]);
            let consts = args.clone();
            let check = |what: &str, got: Result<Array, Error>, want: &Json| {
                if approximate(name) && want.get("error").is_none() {
                    differs_unless(what, got.map(|a| vec![a]), want, close)
                } else {
                    differs(what, got, want)
                }
            };
            failures.extend(check(
                &format!("{name} eager"),
                call(case, &args, &consts),
                &case["eager"],
            ));
            let jitted = jit(|a: Vec<Array>| call(case, &a, &consts)).call(&args);
            failures.extend(check(&format!("{name} jit"), jitted, &case["jit"]));
            let text = make_jaxpr(|a: Vec<Array>| call(case, &a, &consts), &args);
            match (&case["text"], text) {
                (Json::String(want), Ok(got)) => {
                    texts += 1;
                    if got.to_string() != *want {
                        failures.push(format!("{name} text:\n{got}\nJAX:\n{want}"));
                    }
                }
                (want, got) => failures.extend(differs(
                    &format!("{name} make_jaxpr"),
                    got.map(|_| Array::scalar(0i8)),
                    want,
                )),
            }
            if let Some(want) = case.get("grad") {
                grads += 1;
                let rest = args[1..].to_vec();
                let g = grad(
                    |x: Array| {
                        let mut a = vec![x];
                        a.extend(rest.iter().cloned());
                        let y = call(case, &a, &consts)?.astype(DType::Float32)?;
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
        texts >= 200 && grads >= 20,
        "{texts} texts, {grads} gradients"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Each program JAX printed reads back through the jaxpr reader, prints to the same text, and
/// evaluates (with its constants) to what JAX's `jit` computed (`apply`'s `scatter` evaluating
/// its `update_jaxpr`).
#[test]
fn jax_texts_read_back_and_compute_the_same() {
    let mut failures = Vec::new();
    let mut read = 0;
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        let Some(text) = case["text"].as_str() else {
            continue;
        };
        failures.extend(read_back_within(&case, name, text, true, approximate(name)));
        read += 1;
    }
    assert!(read >= 240, "{read}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// How JAX's text `text` of fixture case `case` fails to read back, to print back the same
/// (with `prints_back`), or to evaluate (with its constants) to what JAX's `jit` computed.
pub(crate) fn read_back(case: &Json, name: &str, text: &str, prints_back: bool) -> Vec<String> {
    read_back_within(case, name, text, prints_back, false)
}

/// [`read_back`], the values within [`close`] where `approx`.
fn read_back_within(
    case: &Json,
    name: &str,
    text: &str,
    prints_back: bool,
    approx: bool,
) -> Vec<String> {
    with_rules(Rules::jax().x64(case["x64"].as_bool().unwrap()), || {
        let f: ClosedJaxpr = match text.parse() {
            Ok(f) => f,
            Err(e) => return vec![format!("{name}: {e}")],
        };
        let mut failures = Vec::new();
        if prints_back && f.to_string() != text {
            failures.push(format!("{name} prints back:\n{f}\nJAX:\n{text}"));
        }
        let f = f.with_consts(arrays(&case["consts"])).unwrap();
        let got = f.call(&arrays(&case["args"]));
        let read = format!("{name} read");
        failures.extend(if approx {
            differs_unless(&read, got, &case["jit"], close)
        } else {
            differs_unless(&read, got, &case["jit"], |_, _| false)
        });
        failures
    })
}

/// A second example of the same type: floats and complex numbers scaled by -2, integer arrays
/// reversed (as flattened), 0-d arrays unchanged, booleans negated with `negate_bools`, else
/// (masks, which must stay concrete) unchanged.
pub(crate) fn other_example(a: &Array, negate_bools: bool) -> Array {
    match a.dtype().kind() {
        dtype_lattice::Kind::Bool if negate_bools => jnp::logical_not(a).unwrap(),
        dtype_lattice::Kind::Bool => a.clone(),
        dtype_lattice::Kind::Float | dtype_lattice::Kind::Complex => {
            jnp::multiply(a, -2.0).unwrap()
        }
        _ if a.ndim() == 0 => a.clone(),
        _ => {
            let flat = jnp::reshape(a, &[-1]).unwrap();
            let rev = jnp::index(&flat, &[Index::Slice(None, None, -1)]).unwrap();
            let shape: Vec<isize> = a.shape().iter().map(|&d| d as isize).collect();
            jnp::reshape(&rev, &shape).unwrap()
        }
    }
}

/// `vmap` over a batch of two examples is the stack of the calls on each, for every case JAX
/// computes under `jit`: first `x` batched alone (the indices and values shared), then every
/// argument but the masks batched (the indices too: `gather`'s and the scatters' batching
/// rules with batched indices).
#[test]
fn vmap_of_indexing_is_stacking() {
    let mut checked = 0;
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        if case["jit"].get("error").is_some() {
            continue;
        }
        with_rules(Rules::jax().x64(case["x64"].as_bool().unwrap()), || {
            let args = arrays(&case["args"]);
            let consts = args.clone();
            let others: Vec<Array> = args.iter().map(|a| other_example(a, false)).collect();
            let stacked = |a: &Array, b: &Array| jnp::stack(&[a.into(), b.into()], 0).unwrap();
            let same = |got: Array, want: Array, how: &str| {
                // `.at[].divide` divides `x` by a scatter of the values: with `x` batched alone
                // the divisor is unbatched, so the batched quotient divides by a broadcast
                // value, which XLA (and `lax::DIV`) computes as the product by its reciprocal,
                // where each example divides: within two roundings (JAX's vmap differs alike).
                if name.starts_with("at_divide")
                    && how == "x batched"
                    && got.as_bytes() != want.as_bytes()
                    && matches!(
                        got.dtype(),
                        DType::Float16 | DType::Float32 | DType::Float64
                    )
                {
                    assert_eq!((got.dtype(), got.shape()), (want.dtype(), want.shape()));
                    let eps = match got.dtype() {
                        DType::Float16 => 2f64.powi(-10),
                        DType::Float32 => 2f64.powi(-23),
                        _ => 2f64.powi(-52),
                    };
                    let f = |a: &Array| a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
                    for (g, w) in f(&got).iter().zip(f(&want)) {
                        assert!(
                            *g == w
                                || (g.is_nan() && w.is_nan())
                                || (g - w).abs() <= 2.0 * eps * w.abs(),
                            "{name} ({how}): {g} but {w}"
                        );
                    }
                    return;
                }
                assert_eq!(
                    (got.dtype(), got.shape(), got.as_bytes()),
                    (want.dtype(), want.shape(), want.as_bytes()),
                    "{name} ({how})"
                );
            };
            // x batched alone.
            let on = |x: &Array| {
                let mut a = args.clone();
                a[0] = x.clone();
                call(&case, &a, &consts)
            };
            let got = vmap(|x: Array| on(&x))
                .call(&stacked(&args[0], &others[0]))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let want = stacked(&on(&args[0]).unwrap(), &on(&others[0]).unwrap());
            same(got, want, "x batched");
            // Every argument batched but the booleans (masks are shared: concrete).
            let masks: Vec<bool> = args.iter().map(|a| a.dtype() == DType::Bool).collect();
            if masks[0] {
                return;
            }
            let batch: Vec<Array> = args
                .iter()
                .zip(&others)
                .zip(&masks)
                .filter(|(_, m)| !**m)
                .map(|((a, b), _)| stacked(a, b))
                .collect();
            let with = |batched: Vec<Array>| {
                let mut it = batched.into_iter();
                let full: Vec<Array> = args
                    .iter()
                    .zip(&masks)
                    .map(|(a, &m)| if m { a.clone() } else { it.next().unwrap() })
                    .collect();
                call(&case, &full, &consts)
            };
            let got = vmap(|b: Vec<Array>| with(b))
                .call(&batch)
                .unwrap_or_else(|e| panic!("{name} (all batched): {e}"));
            let unbatched = |k: usize| -> Vec<Array> {
                args.iter()
                    .zip(&others)
                    .zip(&masks)
                    .filter(|(_, m)| !**m)
                    .map(|((a, b), _)| if k == 0 { a.clone() } else { b.clone() })
                    .collect()
            };
            let want = stacked(&with(unbatched(0)).unwrap(), &with(unbatched(1)).unwrap());
            same(got, want, "all batched");
            checked += 1;
        });
    }
    assert!(checked >= 200, "{checked}");
}

/// The static-index entry point keeps its old uses: rows, reversed slices, new axes.
#[test]
fn static_indexing_examples() {
    let m = Array::from_shape_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
    let v = jnp::index(&m, &[Index::At(1), Index::Slice(None, None, -1)]).unwrap();
    assert_eq!(v.to_vec::<i32>().unwrap(), [6, 5, 4]);
    let c = jnp::index(&v, &[Index::ALL, Index::NewAxis]).unwrap();
    assert_eq!(c.shape(), &[3, 1]);
    let e = jnp::index(&m, &[Index::At(0), Index::At(0), Index::At(0)]).unwrap_err();
    assert_eq!(e.exception(), Some(Exception::IndexError));
    assert!("nearest".parse::<IndexMode>().is_err());
    let _ = array;
}
