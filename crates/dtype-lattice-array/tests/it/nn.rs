//! `jax.nn`, flax's pooling and `jax.lax`'s convolution functions against JAX 0.10.2
//! (tests/fixtures/indexing/nn.json, from tools/gen_nn_fixtures.py). Each case is a described
//! call — an activation, `softmax`/`log_softmax`/`logsumexp`/`standardize` over axes (with
//! masks, scales, signs), `one_hot`, a pool, a convolution — made through
//! `dtype_lattice_array::nn` and `dtype_lattice_array::lax` outside any transformation, under
//! `jit` and under `make_jaxpr`, each compared with what JAX gave (dtype, shape and bits, or
//! the exception class and message); the printed jaxpr with JAX's text; the gradient of a
//! weighted sum of the result with `jax.grad`'s, eagerly and under `jit`. JAX's own texts
//! read back, print back and compute the same.
//!
//! Tolerance: bit for bit, but for results that pass through a transcendental function (or a
//! convolution, or a gradient, which multiplies them) where XLA's code may round otherwise
//! than this crate's, and which are compared within the corpus's rule ([`close`]: 16 units of
//! the format's precision at the result's largest finite magnitude, NaN for NaN, equal
//! infinities). [`exact`] lists the functions that must agree bit for bit; the test also
//! counts how many of the others do.

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Rules};
use dtype_lattice_array::config::with_rules;
use dtype_lattice_array::core::ClosedJaxpr;
use dtype_lattice_array::lax::{self, ConvGeneralDilated, ConvTranspose, Padding, Precision};
use dtype_lattice_array::nn::{self, LogSumExp};
use dtype_lattice_array::numpy::{self as jnp, Axes};
use dtype_lattice_array::{Array, grad, jit, make_jaxpr};
use serde_json::Value as Json;

use crate::common::fixture_path;
use crate::fixture_arrays::array;
use crate::gather::differs_unless;
use crate::jaxpr_reader::{arrays, close};

fn cases() -> Vec<Json> {
    let text = std::fs::read_to_string(fixture_path("indexing/nn.json")).unwrap();
    let doc: Json = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn ints(v: &Json) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_i64().unwrap())
        .collect()
}

fn usizes(v: &Json) -> Vec<usize> {
    ints(v).into_iter().map(|d| d as usize).collect()
}

fn axes(v: &Json) -> Axes {
    match v {
        Json::Null => Axes::All,
        Json::Array(_) => Axes::Some(ints(v).into_iter().map(|a| a as isize).collect()),
        n => Axes::from(n.as_i64().unwrap() as isize),
    }
}

fn padding(v: &Json) -> Padding {
    match v {
        Json::String(s) => s.as_str().into(),
        Json::Array(pairs) => Padding::Explicit(
            pairs
                .iter()
                .map(|p| (p[0].as_i64().unwrap(), p[1].as_i64().unwrap()))
                .collect(),
        ),
        other => panic!("padding {other}"),
    }
}

fn dtype(v: &Json) -> Option<DType> {
    v.as_str().map(|s| s.parse().unwrap())
}

/// The argument a keyword names (`{"arg": k}`), if any.
fn arg<'a>(v: &Json, args: &'a [Array]) -> Option<&'a Array> {
    v.get("arg").map(|k| &args[k.as_u64().unwrap() as usize])
}

/// The case's call on `args` (traced or not).
fn call(case: &Json, args: &[Array]) -> Result<Vec<Array>, Error> {
    let kw = &case["kw"];
    let x = &args[0];
    let one = |r: Result<Array, Error>| r.map(|a| vec![a]);
    let fname = case["fn"].as_str().unwrap();
    match fname {
        "relu" => one(nn::relu(x)),
        "sigmoid" => one(nn::sigmoid(x)),
        "silu" => one(nn::silu(x)),
        "swish" => one(nn::swish(x)),
        "softplus" => one(nn::softplus(x)),
        "gelu" => one(nn::gelu(x, kw["approximate"].as_bool().unwrap())),
        "softmax" => one(nn::softmax(x, axes(&kw["axis"]), arg(&kw["where"], args))),
        "log_softmax" => one(nn::log_softmax(
            x,
            axes(&kw["axis"]),
            arg(&kw["where"], args),
        )),
        "logsumexp" => {
            let mut l = LogSumExp::new().keepdims(kw["keepdims"].as_bool().unwrap());
            if let Some(b) = arg(&kw["b"], args) {
                l = l.b(b);
            }
            if let Some(w) = arg(&kw["where"], args) {
                l = l.where_mask(w);
            }
            if kw["return_sign"].as_bool().unwrap() {
                l.apply_with_sign(x, axes(&kw["axis"]))
                    .map(|(o, s)| vec![o, s])
            } else {
                one(l.apply(x, axes(&kw["axis"])))
            }
        }
        "one_hot" => one(nn::one_hot(
            x,
            kw["num_classes"].as_u64().unwrap() as usize,
            dtype(&kw["dtype"]),
            kw["axis"].as_i64().unwrap() as isize,
        )),
        "standardize" if kw["where"].is_null() && kw["algorithm"].is_null() => {
            one(nn::standardize(
                x,
                axes(&kw["axis"]),
                arg(&kw["mean"], args),
                arg(&kw["variance"], args),
                kw["epsilon"].as_f64().unwrap(),
            ))
        }
        "standardize" => {
            let mut s = nn::Standardize::new().epsilon(kw["epsilon"].as_f64().unwrap());
            if let Some(m) = arg(&kw["mean"], args) {
                s = s.mean(m);
            }
            if let Some(v) = arg(&kw["variance"], args) {
                s = s.variance(v);
            }
            if let Some(w) = arg(&kw["where"], args) {
                s = s.where_mask(w);
            }
            match kw["algorithm"]
                .as_str()
                .map(str::parse::<nn::VarianceAlgorithm>)
            {
                Some(Err(e)) => Err(e),
                Some(Ok(a)) => one(s.algorithm(a).apply(x, axes(&kw["axis"]))),
                None => one(s.apply(x, axes(&kw["axis"]))),
            }
        }
        "max_pool" | "min_pool" | "avg_pool" => {
            let window = usizes(&kw["window_shape"]);
            let strides = (!kw["strides"].is_null()).then(|| usizes(&kw["strides"]));
            let strides = strides.as_deref();
            let pad = padding(&kw["padding"]);
            one(match fname {
                "max_pool" => nn::max_pool(x, &window, strides, pad),
                "min_pool" => nn::min_pool(x, &window, strides, pad),
                _ => nn::avg_pool(
                    x,
                    &window,
                    strides,
                    pad,
                    kw["count_include_pad"].as_bool().unwrap(),
                ),
            })
        }
        _ => one(convolve(fname, kw, x, &args[1])),
    }
}

fn convolve(fname: &str, kw: &Json, x: &Array, w: &Array) -> Result<Array, Error> {
    let precision: Option<Precision> = kw["precision"].as_str().map(|p| p.parse().unwrap());
    let pet = dtype(&kw["preferred_element_type"]);
    fn dn(v: &Json) -> [&str; 3] {
        let s: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        [s[0], s[1], s[2]]
    }
    let opt = |v: &Json| (!v.is_null()).then(|| ints(v));
    match fname {
        "conv_general_dilated" => {
            let mut c =
                ConvGeneralDilated::new(&ints(&kw["window_strides"]), padding(&kw["padding"]))
                    .feature_group_count(kw["feature_group_count"].as_i64().unwrap())
                    .batch_group_count(kw["batch_group_count"].as_i64().unwrap());
            if let Some(d) = opt(&kw["lhs_dilation"]) {
                c = c.lhs_dilation(&d);
            }
            if let Some(d) = opt(&kw["rhs_dilation"]) {
                c = c.rhs_dilation(&d);
            }
            if !kw["dimension_numbers"].is_null() {
                c = c.dimension_numbers(dn(&kw["dimension_numbers"]));
            }
            if let Some(p) = precision {
                c = c.precision(p);
            }
            if let Some(t) = pet {
                c = c.preferred_element_type(t);
            }
            c.apply(x, w)
        }
        "conv" => lax::conv(
            x,
            w,
            &ints(&kw["window_strides"]),
            padding(&kw["padding"]),
            precision,
            pet,
        ),
        "conv_with_general_padding" => lax::conv_with_general_padding(
            x,
            w,
            &ints(&kw["window_strides"]),
            padding(&kw["padding"]),
            opt(&kw["lhs_dilation"]).as_deref(),
            opt(&kw["rhs_dilation"]).as_deref(),
            precision,
            pet,
        ),
        "conv_transpose" => {
            let mut c = ConvTranspose::new(&ints(&kw["strides"]), padding(&kw["padding"]))
                .transpose_kernel(kw["transpose_kernel"].as_bool().unwrap())
                .use_consistent_padding(kw["use_consistent_padding"] == true);
            if let Some(d) = opt(&kw["rhs_dilation"]) {
                c = c.rhs_dilation(&d);
            }
            if !kw["dimension_numbers"].is_null() {
                c = c.dimension_numbers(dn(&kw["dimension_numbers"]));
            }
            if let Some(p) = precision {
                c = c.precision(p);
            }
            if let Some(t) = pet {
                c = c.preferred_element_type(t);
            }
            c.apply(x, w)
        }
        other => panic!("fn {other}"),
    }
}

/// Functions whose every result must be JAX's bit for bit: selections and comparisons
/// (`relu`, `one_hot`, max and min pooling), and integer convolutions (see [`tolerates`]).
fn exact(fname: &str) -> bool {
    matches!(fname, "relu" | "one_hot" | "max_pool" | "min_pool")
}

/// Whether `got` may differ from JAX's `want` within [`close`]: float results of the other
/// functions (transcendentals, quotients by constants XLA rewrites, convolutions summed in
/// Eigen's order).
fn tolerates(fname: &str, got: &Array) -> bool {
    !exact(fname) && matches!(got.dtype().kind(), Kind::Float | Kind::Complex)
}

/// JAX's result (`want`: leaves, or an error) against ours: `Some(message)` when they differ;
/// `bits` counts exact agreements.
fn differs(
    what: &str,
    fname: &str,
    got: Result<Vec<Array>, Error>,
    want: &Json,
    bits: &mut (usize, usize),
) -> Option<String> {
    if let Some(e) = want.get("error") {
        let (kind, message) = (e["kind"].as_str().unwrap(), e["message"].as_str().unwrap());
        return match got {
            Ok(a) => Some(format!("{what}: {a:?}, JAX {kind}: {message}")),
            Err(g) => {
                let same =
                    g.exception().map(Exception::name) == Some(kind) && g.message() == message;
                (!same).then(|| format!("{what}: {g:?} / {}, JAX {kind}: {message}", g.message()))
            }
        };
    }
    if let Ok(g) = &got {
        let w = want.as_array().unwrap();
        bits.1 += 1;
        if g.len() == w.len()
            && g.iter()
                .zip(w)
                .all(|(g, w)| g.as_bytes() == array(w).as_bytes())
        {
            bits.0 += 1;
        }
    }
    differs_unless(what, got, want, |g, w| {
        (tolerates(fname, g) && close(g, w)) || (fname == "min_pool" && nan_sign_only(g, w))
    })
}

/// Whether `got` is `want` but for the sign of NaNs. JAX's `reduce_window_min` gives NaN with
/// its sign bit set (the x86 default NaN, `0xffc00000`) in some windows that hold a NaN, and
/// the `reduce_window_min` primitive here keeps the operand's NaN: a difference of the
/// primitive (`src/lax/windowed.rs`), not of pooling, which binds the primitive JAX binds.
fn nan_sign_only(got: &Array, want: &Array) -> bool {
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        return false;
    }
    let f64s = |x: &Array| x.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
    let (g, w) = (f64s(got), f64s(want));
    got.as_bytes().len() == want.as_bytes().len()
        && g.iter()
            .zip(&w)
            .all(|(a, b)| (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits())
}

/// `sum(f(args) * weights)` as the generator's loss.
fn loss(case: &Json, args: &[Array], weights: &Array) -> Result<Array, Error> {
    let y = call(case, args)?.remove(0);
    jnp::sum(jnp::multiply(&y, weights)?, Axes::All, false)
}

/// The gradient of [`loss`] in the arguments `which`.
fn gradient(
    case: &Json,
    args: &[Array],
    which: &[usize],
    weights: &Array,
) -> Result<Vec<Array>, Error> {
    let diff: Vec<Array> = which.iter().map(|&k| args[k].clone()).collect();
    grad(
        |d: Vec<Array>| {
            let mut a = args.to_vec();
            for (&k, x) in which.iter().zip(d) {
                a[k] = x;
            }
            loss(case, &a, weights)
        },
        &diff,
    )
}

/// Functions whose gradients are differences of terms much larger than themselves
/// (`standardize`: `rsqrt(variance + epsilon)` and its derivative, `-(variance + epsilon)^(-3/2)
/// / 2`, weigh sums that cancel; on rows of equal elements the variance is 0 and the terms are
/// 10⁷ times the result), so that XLA's rewrites of the jitted `standardize` (quotients by
/// constants as products by reciprocals, fused reductions) move the result by more than
/// [`close`] allows: the gradient is compared with JAX's computed primitive by primitive
/// (`jax.disable_jit()`) where it is not JAX's jitted one.
fn ill_conditioned(fname: &str) -> bool {
    fname == "standardize"
}

#[test]
fn nn_functions_compute_what_jax_computes() {
    let all = cases();
    assert!(all.len() >= 300, "{} cases", all.len());
    let mut failures = Vec::new();
    let (mut texts, mut grads, mut bits) = (0, 0, (0, 0));
    for case in &all {
        let name = case["name"].as_str().unwrap();
        let fname = case["fn"].as_str().unwrap();
        with_rules(Rules::jax().x64(case["x64"].as_bool().unwrap()), || {
            let args = arrays(&case["args"]);
            failures.extend(differs(
                &format!("{name} eager"),
                fname,
                call(case, &args),
                &case["eager"],
                &mut bits,
            ));
            let jitted = jit(|a: Vec<Array>| call(case, &a)).call(&args);
            failures.extend(differs(
                &format!("{name} jit"),
                fname,
                jitted,
                &case["jit"],
                &mut bits,
            ));
            let text = make_jaxpr(|a: Vec<Array>| call(case, &a), &args);
            match (&case["text"], text) {
                (Json::String(want), Ok(got)) => {
                    texts += 1;
                    if got.to_string() != *want {
                        failures.push(format!("{name} text:\n{got}\nJAX:\n{want}"));
                    }
                }
                (want, got) => failures.extend(differs(
                    &format!("{name} make_jaxpr"),
                    fname,
                    got.map(|_| vec![Array::scalar(0i8)]),
                    want,
                    &mut (0, 0),
                )),
            }
            let Some(want) = case.get("grad") else {
                return;
            };
            grads += 1;
            let which: Vec<usize> = usizes(&case["grad_args"]);
            let weights = array(&case["weights"]);
            let op_by_op = &case["grad_op_by_op"];
            let mut check = |what: String, got: Result<Vec<Array>, Error>, want: &Json| {
                let first = differs(&what, fname, got.clone(), want, &mut (0, 0));
                if first.is_some() && ill_conditioned(fname) {
                    failures.extend(differs(&what, fname, got, op_by_op, &mut (0, 0)));
                } else {
                    failures.extend(first);
                }
            };
            check(
                format!("{name} grad"),
                gradient(case, &args, &which, &weights),
                want,
            );
            let g = jit(|a: Vec<Array>| gradient(case, &a, &which, &weights)).call(&args);
            check(format!("{name} grad_jit"), g, &case["grad_jit"]);
        });
    }
    eprintln!(
        "nn: {} cases, {texts} texts, {grads} gradients, {} of {} values bit for bit",
        all.len(),
        bits.0,
        bits.1
    );
    assert!(
        texts >= 250 && grads >= 100,
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
/// evaluates (with its constants) to what JAX's `jit` computed.
#[test]
fn jax_texts_read_back_and_compute_the_same() {
    let mut failures = Vec::new();
    let mut read = 0;
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        let fname = case["fn"].as_str().unwrap();
        let Some(text) = case["text"].as_str() else {
            continue;
        };
        with_rules(Rules::jax().x64(case["x64"].as_bool().unwrap()), || {
            let f: ClosedJaxpr = match text.parse() {
                Ok(f) => f,
                Err(e) => return failures.push(format!("{name}: {e}")),
            };
            if f.to_string() != text {
                failures.push(format!("{name} prints back:\n{f}\nJAX:\n{text}"));
            }
            let f = f.with_consts(arrays(&case["consts"])).unwrap();
            let args = arrays(&case["args"]);
            // Evaluated equation by equation, as JAX's eager call runs it; and jitted.
            failures.extend(differs(
                &format!("{name} read"),
                fname,
                f.call(&args),
                &case["eager"],
                &mut (0, 0),
            ));
            failures.extend(differs(
                &format!("{name} read jit"),
                fname,
                jit(|a: Vec<Array>| f.call(&a)).call(&args),
                &case["jit"],
                &mut (0, 0),
            ));
            read += 1;
        });
    }
    assert!(read >= 290, "{read}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
