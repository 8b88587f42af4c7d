//! XLA's `RngBitGenerator` (`lax::rng_bit_generator`) and the key implementations JAX 0.10.2
//! ships besides threefry2x32 (rbg, unsafe_rbg, threefry4x32, philox4x32, philox2x32) against
//! jaxlib 0.10.2 on CPU (tests/fixtures/random_arrays/rbg.json, from tools/gen_rbg_fixtures.py),
//! x64 off and on: the primitive eager, under `jit`, under `vmap` (a batch of keys), its
//! printed jaxprs, JAX's texts read back and evaluated; each implementation's seed, split,
//! fold_in and random_bits on one key's data, and on key arrays as JAX's primitives map them.

use dtype_lattice::{DType, Error, Rules};
use dtype_lattice_array::config::with_rules;
use dtype_lattice_array::core::{self, ClosedJaxpr, Param, Params};
use dtype_lattice_array::lax::{self, RandomAlgorithm, key_impls_hook as hook};
use dtype_lattice_array::{Array, jit, make_jaxpr, vmap};
use serde_json::Value;

use crate::common::{self, fixture_path};
use crate::fixture_arrays::array;

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(fixture_path("random_arrays/rbg.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn dims(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `got` against JAX's leaves or error `want`: dtype, shape and every bit, or the exception's
/// class and message.
fn compare(what: &str, got: Result<Vec<Array>, Error>, want: &Value) -> Option<String> {
    if let Some(e) = want.get("error") {
        let (kind, msg) = (e["kind"].as_str().unwrap(), e["message"].as_str().unwrap());
        return match got {
            Err(mine) if common::class(&mine) == kind && mine.message() == msg => None,
            Err(mine) => Some(format!("{what}: JAX raised {kind}: {msg} but this {mine}")),
            Ok(_) => Some(format!(
                "{what}: JAX raised {kind}: {msg} but this computed"
            )),
        };
    }
    let got = match got {
        Ok(g) => g,
        Err(e) => return Some(format!("{what}: {e}")),
    };
    let want: Vec<&Value> = match want.as_array() {
        Some(v) => v.iter().collect(),
        None => vec![want],
    };
    if got.len() != want.len() {
        return Some(format!("{what}: {} outputs, JAX {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let w = array(w);
        if (g.dtype(), g.shape()) != (w.dtype(), w.shape()) || g.as_bytes() != w.as_bytes() {
            return Some(format!(
                "{what} output {i}: {} {} but JAX {} {}",
                g.aval(),
                hex(g.as_bytes()),
                w.aval(),
                hex(w.as_bytes())
            ));
        }
    }
    None
}

fn x64(case: &Value) -> Rules {
    Rules::jax().x64(case["x64"].as_bool().unwrap())
}

fn algorithm(case: &Value) -> RandomAlgorithm {
    case["algorithm"].as_str().unwrap().parse().unwrap()
}

fn dtype(case: &Value) -> DType {
    case["dtype"].as_str().unwrap().parse().unwrap()
}

/// The case's program: `lax::rng_bit_generator`, or the primitive bound directly.
fn program(case: &Value) -> impl Fn(Array) -> Result<(Array, Array), Error> + use<> {
    let (shape, dtype, alg) = (dims(&case["shape"]), dtype(case), algorithm(case));
    let bind = case.get("bind").is_some();
    move |key: Array| {
        if bind {
            let p = Params::new()
                .with("algorithm", Param::Name(alg.name().into()))
                .with("dtype", Param::DType(dtype))
                .with("out_sharding", Param::None)
                .with(
                    "shape",
                    Param::Ints(shape.iter().map(|&d| d as i64).collect()),
                );
            let mut out = core::bind(&lax::RNG_BIT_GENERATOR, &[&key], &p)?.into_vec();
            let bits = out.pop().unwrap();
            Ok((out.pop().unwrap(), bits))
        } else {
            lax::rng_bit_generator(&key, &shape, dtype, alg)
        }
    }
}

fn pair(r: Result<(Array, Array), Error>) -> Result<Vec<Array>, Error> {
    r.map(|(a, b)| vec![a, b])
}

/// JAX's text `text` read back: how it fails to print back the same or to compute `want`.
fn read_back(what: &str, text: &str, args: &[Array], want: &Value) -> Vec<String> {
    let f: ClosedJaxpr = match text.parse() {
        Ok(f) => f,
        Err(e) => return vec![format!("{what}: reading: {e}")],
    };
    let mut failures = Vec::new();
    if f.to_string() != text {
        failures.push(format!("{what} prints back:\n{f}\nJAX:\n{text}"));
    }
    failures.extend(compare(&format!("{what} read"), f.call(args), want));
    failures
}

#[test]
fn rng_bit_generator_is_xla_cpus() {
    let (mut n, mut texts, mut failures) = (0, 0, Vec::new());
    for case in cases().iter().filter(|c| c["kind"] == "rng") {
        n += 1;
        with_rules(x64(case), || {
            let key = array(&case["key"]);
            let what = format!(
                "{} {:?} {} {} x64={}",
                key.aval(),
                dims(&case["shape"]),
                case["dtype"],
                case["algorithm"],
                case["x64"]
            );
            let f = program(case);
            failures.extend(compare(&what, pair(f(key.clone())), &case["eager"]));
            if case["jit_same"] == true {
                let j = jit(program(case));
                failures.extend(compare(
                    &format!("{what} jit"),
                    pair(j.call(&key)),
                    &case["eager"],
                ));
            }
            if let Some(text) = case["text"].as_str() {
                texts += 1;
                match make_jaxpr(program(case), &key) {
                    Ok(j) if j.to_string() == text => {}
                    Ok(j) => failures.push(format!("{what} prints\n{j}\nJAX:\n{text}")),
                    Err(e) => failures.push(format!("{what} make_jaxpr: {e}")),
                }
                failures.extend(read_back(
                    &what,
                    text,
                    std::slice::from_ref(&key),
                    &case["eager"],
                ));
            }
        });
    }
    assert!(n > 1300 && texts > 200, "{n} cases, {texts} texts");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn vmap_draws_the_batch_from_its_first_key() {
    let (mut n, mut failures) = (0, Vec::new());
    for case in cases().iter().filter(|c| c["kind"] == "vmap") {
        n += 1;
        with_rules(x64(case), || {
            let keys = array(&case["keys"]);
            let axis = case["in_axes"].as_u64().unwrap() as usize;
            let what = format!(
                "vmap {} axis {axis} {:?} {} {} x64={}",
                keys.aval(),
                dims(&case["shape"]),
                case["dtype"],
                case["algorithm"],
                case["x64"]
            );
            let g = vmap(program(case)).in_axes(axis);
            failures.extend(compare(&what, pair(g.call(&keys)), &case["eager"]));
            if case["jit_same"] == true {
                let j = jit(|k: Array| vmap(program(case)).in_axes(axis).call(&k));
                failures.extend(compare(
                    &format!("{what} jit"),
                    pair(j.call(&keys)),
                    &case["eager"],
                ));
            }
            // This crate stages dynamic_update_index_in_dim's body, as JAX prints it under
            // disable_jit.
            if let Some(text) = case["text_nojit"].as_str() {
                let mine = make_jaxpr(|k: Array| vmap(program(case)).in_axes(axis).call(&k), &keys);
                match mine {
                    Ok(j) if j.to_string() == text => {}
                    Ok(j) => failures.push(format!("{what} prints\n{j}\nJAX:\n{text}")),
                    Err(e) => failures.push(format!("{what} make_jaxpr: {e}")),
                }
                failures.extend(read_back(
                    &what,
                    text,
                    std::slice::from_ref(&keys),
                    &case["eager"],
                ));
            }
            // JAX's own text, with its jit of dynamic_update_index_in_dim.
            if let Some(text) = case["text"].as_str() {
                failures.extend(read_back(
                    &format!("{what} (jit)"),
                    text,
                    std::slice::from_ref(&keys),
                    &case["eager"],
                ));
            }
        });
    }
    assert!(n > 60, "{n} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn impl_name(case: &Value) -> &str {
    case["impl"].as_str().unwrap()
}

/// The key data of one key of `name` from the Python int `seed` (as `jax.random.key` passes
/// it: an int64, canonicalised).
fn key_of(name: &str, seed: i64, x64: bool) -> Result<Array, Error> {
    let s = if x64 {
        Array::scalar(seed)
    } else {
        Array::scalar(seed as i32)
    };
    hook::seed(name, &s)
}

/// Outputs of `f` on each key of `keys` (`u32[*batch, words]`), stacked: `(*batch, *each)`.
fn per_key(
    keys: &Array,
    want: &Value,
    f: impl Fn(&Array) -> Result<Array, Error>,
) -> Result<Array, Error> {
    let (&words, batch) = keys.shape().split_last().unwrap();
    let n: usize = batch.iter().product();
    let bytes = keys.as_bytes();
    let mut out = Vec::new();
    let mut each: Option<Array> = None;
    for i in 0..n {
        let k = Array::from_bytes(
            DType::UInt32,
            &[words],
            &bytes[4 * words * i..4 * words * (i + 1)],
        )?;
        let r = f(&k)?;
        out.extend_from_slice(r.as_bytes());
        each = Some(r);
    }
    let (dtype, inner) = match &each {
        Some(e) => (e.dtype(), e.shape().to_vec()),
        // An empty batch: JAX's dtype and per-key shape.
        None => {
            let w = array(want);
            (w.dtype(), w.shape()[batch.len()..].to_vec())
        }
    };
    let shape: Vec<usize> = batch.iter().chain(&inner).copied().collect();
    Array::from_bytes(dtype, &shape, &out)
}

/// `fold_in` of every key with its message, broadcast as `random_fold_in` broadcasts (same
/// rank, or either 0-d).
fn fold_in_broadcast(name: &str, keys: &Array, msgs: &Array) -> Result<Array, Error> {
    let (&words, kshape) = keys.shape().split_last().unwrap();
    let mshape = msgs.shape();
    let out: Vec<usize> = if mshape.is_empty() {
        kshape.to_vec()
    } else if kshape.is_empty() {
        mshape.to_vec()
    } else {
        kshape
            .iter()
            .zip(mshape)
            .map(|(&a, &b)| a.max(b) * (a.min(b).min(1)))
            .collect()
    };
    let index = |shape: &[usize], i: usize| -> usize {
        if shape.is_empty() {
            return 0;
        }
        let (mut rest, mut at, mut stride) = (i, 0, 1);
        let mut js = vec![0; out.len()];
        for d in (0..out.len()).rev() {
            js[d] = rest % out[d];
            rest /= out[d];
        }
        for d in (0..shape.len()).rev() {
            if shape[d] != 1 {
                at += js[d] * stride;
            }
            stride *= shape[d];
        }
        at
    };
    let n: usize = out.iter().product();
    let (kb, w) = (keys.as_bytes(), msgs.as_bytes().len() / msgs.size().max(1));
    let mut bytes = Vec::new();
    for i in 0..n {
        let (k, m) = (index(kshape, i), index(mshape, i));
        let key = Array::from_bytes(
            DType::UInt32,
            &[words],
            &kb[4 * words * k..4 * words * (k + 1)],
        )?;
        let msg = Array::from_bytes(msgs.dtype(), &[], &msgs.as_bytes()[w * m..w * (m + 1)])?;
        bytes.extend_from_slice(hook::fold_in(name, &key, &msg)?.as_bytes());
    }
    let shape: Vec<usize> = out.iter().copied().chain([words]).collect();
    Array::from_bytes(DType::UInt32, &shape, &bytes)
}

/// JAX's uniform on `[0, 1)` from bits: the top 23 (float32, from 32-bit bits) or 52 (float64,
/// from 64-bit bits) bits as the mantissa of a number in `[1, 2)`, minus 1.
fn uniform(bits: &Array) -> Result<Array, Error> {
    if bits.dtype() == DType::UInt64 {
        let v: Vec<f64> = (bits.to_vec::<u64>()?.into_iter())
            .map(|b| f64::from_bits(b >> 12 | 0x3ff0_0000_0000_0000) - 1.0)
            .collect();
        return Array::from_shape_vec(bits.shape(), v);
    }
    let v: Vec<f32> = (bits.to_vec::<u32>()?.into_iter())
        .map(|b| f32::from_bits(b >> 9 | 0x3f80_0000) - 1.0)
        .collect();
    Array::from_shape_vec(bits.shape(), v)
}

#[test]
fn key_implementations_are_jaxs() {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    let mut failures = Vec::new();
    for case in cases() {
        let kind = case["kind"].as_str().unwrap();
        if matches!(kind, "rng" | "vmap") {
            continue;
        }
        let name = impl_name(&case).to_string();
        *counts.entry(kind.to_string()).or_default() += 1;
        let what = format!("{kind} {name} x64={} {}", case["x64"], {
            let mut c = case.clone();
            c.as_object_mut().unwrap().remove("out");
            c.as_object_mut().unwrap().remove("api");
            c.to_string()
        });
        with_rules(x64(&case), || {
            let one = |r: Result<Array, Error>| r.map(|a| vec![a]);
            match kind {
                "seed" => {
                    if case["seed"].get("error").is_some() {
                        return;
                    }
                    let seed = array(&case["seed"]);
                    let got = hook::seed(&name, &seed);
                    failures.extend(compare(&what, one(got.clone()), &case["out"]));
                    if let Some(api) = case.get("api").filter(|a| a.get("error").is_none()) {
                        failures.extend(compare(&format!("{what} api"), one(got), api));
                    }
                }
                "split" => {
                    let got = hook::split(&name, &array(&case["key"]), &dims(&case["shape"]));
                    failures.extend(compare(&what, one(got), &case["out"]));
                }
                "fold_in" => {
                    let got = hook::fold_in(&name, &array(&case["key"]), &array(&case["data"]));
                    failures.extend(compare(&what, one(got), &case["out"]));
                }
                "bits" => {
                    let w = case["bit_width"].as_u64().unwrap() as u32;
                    let got =
                        hook::random_bits(&name, &array(&case["key"]), w, &dims(&case["shape"]));
                    failures.extend(compare(&what, one(got), &case["out"]));
                }
                "api" => {
                    let x64 = case["x64"].as_bool().unwrap();
                    let key = key_of(&name, case["seed"].as_i64().unwrap(), x64);
                    // The default dtypes: uint32 and float32, or with x64 uint64 and float64.
                    let width = if x64 { 64 } else { 32 };
                    let got = key.and_then(|key| match case["fn"].as_str().unwrap() {
                        "split" => {
                            hook::split(&name, &key, &[case["arg"].as_u64().unwrap() as usize])
                        }
                        "fold_in" => hook::fold_in(&name, &key, &Array::scalar(5u32)),
                        "bits" => hook::random_bits(&name, &key, width, &dims(&case["arg"])),
                        _ => uniform(&hook::random_bits(&name, &key, width, &dims(&case["arg"]))?),
                    });
                    failures.extend(compare(&what, one(got), &case["out"]));
                }
                "batched" => {
                    let keys = array(&case["keys"]);
                    let urbg = name == "unsafe_rbg";
                    let got = match case["prim"].as_str().unwrap() {
                        "bits" => {
                            let w = case["bit_width"].as_u64().unwrap() as u32;
                            let shape = dims(&case["shape"]);
                            if name.ends_with("rbg") {
                                hook::random_bits_batched(&name, &keys, w, &shape)
                            } else {
                                per_key(&keys, &case["out"], |k| {
                                    hook::random_bits(&name, k, w, &shape)
                                })
                            }
                        }
                        "split" => {
                            let shape = dims(&case["shape"]);
                            if urbg {
                                hook::unsafe_rbg_split_batched(&keys, &shape)
                            } else {
                                per_key(&keys, &case["out"], |k| hook::split(&name, k, &shape))
                            }
                        }
                        _ => {
                            let msgs = array(&case["msgs"]);
                            if urbg {
                                hook::unsafe_rbg_fold_in_batched(&keys, &msgs)
                            } else {
                                fold_in_broadcast(&name, &keys, &msgs)
                            }
                        }
                    };
                    failures.extend(compare(&what, one(got), &case["out"]));
                }
                other => panic!("case kind {other}"),
            }
        });
    }
    let total: usize = counts.values().sum();
    assert!(total > 1800, "{counts:?}");
    assert!(
        failures.is_empty(),
        "{} of {total}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The issue's example: `jax.random.key(0, impl='rbg')` holds `[0 0 0 0]`, and its bits make
/// `uniform(key, (3,))` = `[0.39904642, 0.8805201, 0.73571277]` (the fixture holds JAX's).
#[test]
fn the_issue_example() {
    let key = key_of("rbg", 0, false).unwrap();
    assert_eq!(key.to_vec::<u32>().unwrap(), [0, 0, 0, 0]);
    let u = uniform(&hook::random_bits("rbg", &key, 32, &[3]).unwrap()).unwrap();
    let case = cases()
        .into_iter()
        .find(|c| {
            c["kind"] == "api" && c["impl"] == "rbg" && c["seed"] == 0 && c["fn"] == "uniform"
        })
        .unwrap();
    assert_eq!(compare("uniform", Ok(vec![u.clone()]), &case["out"]), None);
    assert_eq!(
        u.to_string(),
        "Array([0.39904642, 0.8805201 , 0.73571277], dtype=float32)"
    );
}
