//! The transformation corpus of tools/gen_transform_fixtures.py, each function written here a
//! second time under the same name: `jit` and `jvp` values against JAX 0.10's, and the printed
//! jaxprs of the functions whose Rust and Python are written with the same primitives.

use crate::transform_common as common;

use common::fixture;
use dtype_lattice::{DType, Error};
use dtype_lattice_array::core::{self, Params};
use dtype_lattice_array::lax;
use dtype_lattice_array::numpy::{self as jnp, Axes};
use dtype_lattice_array::registry;
use dtype_lattice_array::{Array, ShapedArray};
use dtype_lattice_array::{grad, jit, jvp, make_jaxpr, vjp};
use serde_json::Value;

type F = fn(Vec<Array>) -> Result<Array, Error>;

fn lax(name: &str, args: &[&Array]) -> Result<Array, Error> {
    let p = registry::by_name(name).expect("a primitive");
    Ok(core::bind(p, args, &Params::new())?[0].clone())
}

fn weak_i32(v: i32) -> Array {
    Array::scalar(v).with_weak_type(true)
}

fn select_tril(x: &Array) -> Result<Array, Error> {
    let rows = jnp::arange(0.0, x.shape()[0] as f64, 1.0, DType::Int32)?;
    let rows = lax::expand_dims(&rows, &[1])?;
    let cols = jnp::arange(0.0, x.shape()[1] as f64, 1.0, DType::Int32)?;
    let mask = jnp::greater(&rows, &cols)?;
    let zeros = jnp::zeros(x.shape(), x.dtype())?;
    lax("select_n", &[&mask, &zeros, x])
}

/// The corpus, by name (the same functions as the generator's `CORPUS`).
fn corpus(name: &str) -> Option<F> {
    Some(match name {
        "sin_mul_add" => |a| jnp::add(jnp::multiply(jnp::sin(&a[0])?, 2.0)?, 1),
        "omnistaging_add" => |a| jnp::multiply(&a[0], lax("add", &[&weak_i32(1), &weak_i32(1)])?),
        "select_tril" => |a| select_tril(&a[0]),
        "poly" => |a| {
            let x = &a[0];
            let cube = jnp::multiply(jnp::multiply(x, x)?, x)?;
            jnp::add(jnp::subtract(cube, jnp::multiply(2, x)?)?, 1)
        },
        "exp_log" => |a| {
            let x = &a[0];
            let e = jnp::log1p(jnp::exp(jnp::negative(jnp::abs(x)?)?)?)?;
            jnp::add(e, jnp::maximum(x, 0)?)
        },
        "tanh_logistic" => |a| jnp::multiply(jnp::tanh(&a[0])?, lax("logistic", &[&a[0]])?),
        "matmul_bias" => |a| jnp::tanh(jnp::add(jnp::matmul(&a[0], &a[1])?, 1.0)?),
        "sum_mean" => |a| {
            let x = &a[0];
            let s = jnp::sum(jnp::multiply(x, x)?, Axes::All, false)?;
            jnp::add(
                jnp::divide(s, x.size() as i64)?,
                jnp::mean(x, Axes::All, false)?,
            )
        },
        "mixed_dtypes" => |a| jnp::add(&a[0], &a[1]),
        "weak_scalar" => |a| jnp::add(jnp::multiply(&a[0], 3)?, 0.5),
        "sqrt_div" => |a| {
            let (x, y) = (&a[0], &a[1]);
            let n = jnp::sqrt(jnp::add(jnp::multiply(x, x)?, 1.0)?)?;
            jnp::divide(n, jnp::add(jnp::multiply(y, y)?, 2.0)?)
        },
        "reduce_max" => |a| jnp::max(&a[0], Axes::Some(vec![1]), false),
        "where_relu" => |a| {
            let x = &a[0];
            jnp::r#where(jnp::greater(x, 0)?, x, jnp::multiply(0.1, x)?)
        },
        "broadcast_add" => |a| jnp::add(&a[0], &a[1]),
        "sin_times_x" => |a| jnp::multiply(jnp::sin(&a[0])?, &a[0]),
        "tanh_poly" => |a| {
            let x = &a[0];
            jnp::multiply(jnp::tanh(jnp::add(jnp::multiply(x, x)?, 1.0)?)?, 3.0)
        },
        "cos_square" => |a| {
            let x = &a[0];
            jnp::add(jnp::power(jnp::cos(x)?, 2)?, jnp::square(jnp::sin(x)?)?)
        },
        _ => return None,
    })
}

/// The functions whose jaxpr must print exactly as JAX's (the others reach the same values
/// through other equations: `jnp.where` is a nested `jit` in JAX, `jnp.sum` converts first).
const SAME_JAXPR: &[&str] = &[
    "sin_mul_add",
    "select_tril",
    "poly",
    "exp_log",
    "tanh_logistic",
    "matmul_bias",
    "weak_scalar",
    "sqrt_div",
    "broadcast_add",
    "mixed_dtypes",
    "sin_times_x",
    "tanh_poly",
];

/// The functions of arithmetic alone (no transcendental, whose XLA approximations are only
/// matched to a few ulp; no reduction of a product, which XLA fuses into the reduction's
/// additions and the plan does not), whose jitted values must be JAX's bit for bit.
const EXACT_JIT: &[&str] = &[
    "poly",
    "omnistaging_add",
    "select_tril",
    "mixed_dtypes",
    "weak_scalar",
    "broadcast_add",
    "sqrt_div",
    "reduce_max",
    "where_relu",
];

/// Argument `i` of a case: element k is ((7k + 3i) mod 11) / 4 - 1.3, converted.
fn check_values(name: &str, what: &str, got: &Array, want: &Value) {
    if common::is_float0(name, what, got, want) {
        return;
    }
    let tol = match got.dtype() {
        DType::BFloat16 | DType::Float16 => 1e-2,
        _ => 1e-5,
    };
    common::close(name, what, got, want, tol);
}

#[test]
fn the_corpus_agrees_with_jax() {
    let fixture = fixture("corpus.json");
    let cases = fixture["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 17);
    let mut same_text = 0;
    let mut grad_texts = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let f = corpus(name).unwrap_or_else(|| panic!("{name} is not in the Rust corpus"));
        let args: Vec<Array> = case["args"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, s)| common::argument(s, i))
            .collect();
        // jit: traced once, applied twice.
        let jitted = jit(f);
        let out: Array = jitted.call(&args).unwrap();
        let again: Array = jitted.call(&args).unwrap();
        assert_eq!(jitted.traces(), 1, "{name}");
        assert_eq!(out.as_bytes(), again.as_bytes(), "{name}");
        check_values(name, "jit", &out, &case["jit"]);
        // jit computes XLA's bits: its fused multiply-adds included, which eager evaluation
        // (a primitive at a time, as JAX's own) does not have.
        if EXACT_JIT.contains(&name) {
            common::close(name, "jit bits", &out, &case["jit"], 1e-12);
        }
        // jvp along ones (JAX's float0 zeros for integer inputs).
        let tangents: Vec<Array> = args
            .iter()
            .map(|a| {
                let t = a.dtype().tangent_dtype();
                jnp::full(a.shape(), dtype_lattice::Value::Float(1.0), t).unwrap()
            })
            .collect();
        let (p, t) = jvp(f, &args, &tangents).unwrap();
        check_values(name, "jvp primal", &p, &case["jvp"][0]);
        check_values(name, "jvp tangent", &t, &case["jvp"][1]);
        // vjp with a cotangent of ones; grad of the output's sum (in float32).
        let (y, pullback) = vjp(f, &args).unwrap();
        let ones = jnp::full(y.shape(), dtype_lattice::Value::Float(1.0), y.dtype()).unwrap();
        let cts = pullback(&ones).unwrap();
        for (i, c) in cts.iter().enumerate() {
            check_values(name, &format!("vjp {i}"), c, &case["vjp"][i]);
        }
        let want_grads = case["grad"].as_array().unwrap();
        if !want_grads.is_empty() {
            let g = grad(
                |a: Vec<Array>| jnp::sum(f(a)?, Axes::All, false)?.astype(DType::Float32),
                &args,
            )
            .unwrap();
            for (i, w) in want_grads.iter().enumerate() {
                check_values(name, &format!("grad {i}"), &g[i], w);
            }
        }
        // grad's own jaxpr (scalar functions): JVP, partial evaluation and transposition
        // produce JAX's equations in JAX's order.
        if let Some(want) = case["grad_jaxpr"].as_str() {
            let g = make_jaxpr(|x: Array| grad(|x: Array| f(vec![x]), &x), &args[0]).unwrap();
            assert_eq!(g.to_string(), want, "{name} grad jaxpr");
            grad_texts += 1;
        }
        // The jaxpr: equations always typecheck; the text is JAX's for most.
        let j = make_jaxpr(f, &args).unwrap();
        j.jaxpr().typecheck().unwrap();
        if SAME_JAXPR.contains(&name) {
            assert_eq!(j.to_string(), case["jaxpr"].as_str().unwrap(), "{name}");
            let eqns: Vec<(String, Vec<String>)> = j
                .jaxpr()
                .eqns()
                .iter()
                .map(|e| {
                    let outs = e.outputs().iter().map(|v| v.aval().to_string()).collect();
                    (e.primitive().name.to_string(), outs)
                })
                .collect();
            let want: Vec<(String, Vec<String>)> = case["eqns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    let outs = e["outputs"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|o| o.as_str().unwrap().to_string())
                        .collect();
                    (e["primitive"].as_str().unwrap().to_string(), outs)
                })
                .collect();
            assert_eq!(eqns, want, "{name}");
            same_text += 1;
        }
    }
    assert_eq!(same_text, SAME_JAXPR.len());
    assert_eq!(grad_texts, 2);
}

/// The omnistaging note: under `jit` everything is staged, constants included.
#[test]
fn omnistaging_stages_operations_on_constants() {
    let f = |x: Array| jnp::multiply(&x, lax("add", &[&weak_i32(1), &weak_i32(1)])?);
    let j = make_jaxpr(f, &Array::scalar(3i32)).unwrap();
    let text = j.to_string();
    assert!(text.contains("add 1:i32[] 1:i32[]"), "{text}");
    let g = jit(f);
    let y: Array = g.call(&Array::scalar(3i32)).unwrap();
    assert_eq!(y.to_vec::<i32>().unwrap(), [6]);
}

/// A value computed from a traced one cannot become a shape: JAX's ConcretizationTypeError,
/// naming the equation that made it a tracer.
#[test]
fn concretizing_a_traced_value_is_refused_with_its_origin() {
    let f = |x: Array| -> Result<Array, Error> {
        let dims = Array::from_vec(x.shape().iter().map(|&d| d as i32).collect::<Vec<_>>());
        let n = jnp::prod(&dims, Axes::All, false)?;
        let n = n.to_vec::<i32>()?[0] as usize;
        jnp::zeros(&[n], DType::Float32)
    };
    let x = jnp::ones(&[2, 3], DType::Float32).unwrap();
    // Eagerly, the shape is concrete.
    assert_eq!(f(x.clone()).unwrap().shape(), [6]);
    let e = jit(f).call::<Array, Array>(&x).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("ConcretizationTypeError: Abstract tracer value"),
        "{text}"
    );
    assert!(
        text.contains("operation a:i32[] = reduce_prod[axes=(0,)"),
        "{text}"
    );
    // Under jvp, primals stay concrete: value-dependent Rust control flow works.
    let (y, _) = jvp(f, &x, &jnp::ones(&[2, 3], DType::Float32).unwrap()).unwrap();
    assert_eq!(y.shape(), [6]);
}

/// A tracer kept past its transformation raises UnexpectedTracerError when used.
#[test]
fn an_escaped_tracer_is_refused() {
    let leaked = std::sync::Mutex::new(None);
    let f = |x: Array| -> Result<Array, Error> {
        *leaked.lock().unwrap() = Some(jnp::multiply(&x, 2.0)?);
        Ok(x)
    };
    let _: Array = jit(f).call(&Array::scalar(1.0f32)).unwrap();
    let t = leaked.lock().unwrap().clone().unwrap();
    let e = jnp::add(&t, 1.0).unwrap_err().to_string();
    assert!(
        e.starts_with("UnexpectedTracerError: Encountered an unexpected tracer"),
        "{e}"
    );
    assert!(
        e.contains("float32[] wrapped in a DynamicJaxprTracer"),
        "{e}"
    );
    assert!(t.to_vec::<f32>().is_err());
}

/// Nested transformations: jvp of jit, jit of jvp, jvp of jvp.
#[test]
fn transformations_compose() {
    let x = Array::from_vec(vec![0.5f32, 1.0, 2.0]);
    let ones = jnp::ones(&[3], DType::Float32).unwrap();
    let f = |x: Array| jnp::multiply(jnp::sin(&x)?, &x);
    let (_, d1) = jvp(f, &x, &ones).unwrap();
    let g = jit(f);
    let (_, d2) = jvp(|x: Array| g.call::<Array, Array>(&x), &x, &ones).unwrap();
    assert_eq!(d1.as_bytes(), d2.as_bytes());
    let h = jit(|x: Array| {
        let ones = jnp::ones(&[3], DType::Float32)?;
        jvp(f, &x, &ones).map(|(_, t)| t)
    });
    let d3: Array = h.call(&x).unwrap();
    assert_eq!(d1.to_vec::<f32>().unwrap(), d3.to_vec::<f32>().unwrap());
    // Second derivative of sin(x)·x: 2cos(x) − x·sin(x).
    let d2f = |x: Array| {
        let ones = jnp::ones(&[3], DType::Float32)?;
        jvp(f, &x, &ones).map(|(_, t)| t)
    };
    let (_, dd) = jvp(d2f, &x, &ones).unwrap();
    for (v, x) in dd.to_vec::<f32>().unwrap().iter().zip([0.5f32, 1.0, 2.0]) {
        let want = 2.0 * x.cos() - x * x.sin();
        assert!((v - want).abs() < 1e-5, "{v} vs {want}");
    }
    let avals: Vec<ShapedArray> = make_jaxpr(d2f, &x).unwrap().jaxpr().out_avals();
    assert_eq!(avals[0].to_string(), "f32[3]");
}

/// The custom-derivatives note: `f(x) = 2x` with a custom derivative of 3, through grad, jit
/// and their compositions; value-dependent control flow inside the function and its rule works
/// wherever primals are concrete, and is refused under jit.
#[test]
fn custom_jvp_rules_survive_every_composition() {
    use dtype_lattice_array::{CustomJvp, value_and_grad};
    let f = std::sync::Arc::new(CustomJvp::new(
        |x: Array| jnp::multiply(2.0, &x),
        |x: Array, t: Array| Ok((jnp::multiply(2.0, &x)?, jnp::multiply(3.0, &t)?)),
    ));
    let one = Array::scalar(1.0f32);
    let g = grad(|x: Array| f.call(&x), &one).unwrap();
    assert_eq!(g.to_vec::<f32>().unwrap(), [3.0]);
    // The function itself is 2x.
    assert_eq!(f.call(&one).unwrap().to_vec::<f32>().unwrap(), [2.0]);
    // grad of jit: the staged custom_jvp_call keeps the rule.
    let jf = {
        let f = f.clone();
        jit(move |x: Array| f.call(&x))
    };
    let g = grad(|x: Array| jf.call::<Array, Array>(&x), &one).unwrap();
    assert_eq!(g.to_vec::<f32>().unwrap(), [3.0]);
    let text = make_jaxpr(|x: Array| f.call(&x), &one).unwrap().to_string();
    assert!(text.contains("custom_jvp_call["), "{text}");
    // jit of grad.
    let jg = {
        let f = f.clone();
        jit(move |x: Array| grad(|x: Array| f.call(&x), &x))
    };
    assert_eq!(
        jg.call::<Array, Array>(&one)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        [3.0]
    );
    // Value-dependent control flow: |x| with a custom derivative sign(x)·2.
    let h = CustomJvp::new(
        |x: Array| {
            if x.to_vec::<f32>()?[0] > 0.0 {
                Ok(x)
            } else {
                jnp::negative(&x)
            }
        },
        |x: Array, t: Array| {
            let s = if x.to_vec::<f32>()?[0] > 0.0 {
                2.0
            } else {
                -2.0
            };
            Ok((jnp::abs(&x)?, jnp::multiply(s, &t)?))
        },
    );
    let (v, g) = value_and_grad(|x: Array| h.call(&x), &Array::scalar(-3.0f32)).unwrap();
    assert_eq!(
        (v.to_vec::<f32>().unwrap(), g.to_vec::<f32>().unwrap()),
        (vec![3.0], vec![-2.0])
    );
    let e = jit(|x: Array| h.call(&x))
        .call::<Array, Array>(&one)
        .unwrap_err();
    assert!(e.to_string().starts_with("ConcretizationTypeError"), "{e}");
}

/// custom_vjp: grad and vjp call the backward pass (also through jit); jvp is refused with
/// JAX's message; the note's clip_gradient.
#[test]
fn custom_vjp_backward_passes_run_under_grad_only() {
    use dtype_lattice_array::CustomVjp;
    // sin with a backward pass of 10·cos(x)·g (as in the generator's check of JAX: 5.403023).
    let f = std::sync::Arc::new(CustomVjp::new(
        |x: Array| jnp::sin(&x),
        |x: Array| Ok((jnp::sin(&x)?, jnp::cos(&x)?)),
        |c: Array, g: Array| jnp::multiply(jnp::multiply(&c, &g)?, 10.0),
    ));
    let one = Array::scalar(1.0f32);
    let g = grad(|x: Array| f.call(&x), &one).unwrap();
    assert!(
        (g.to_vec::<f32>().unwrap()[0] - 5.403023).abs() < 1e-6,
        "{g}"
    );
    let jf = {
        let f = f.clone();
        jit(move |x: Array| f.call(&x))
    };
    let g2 = grad(|x: Array| jf.call::<Array, Array>(&x), &one).unwrap();
    assert_eq!(g.as_bytes(), g2.as_bytes());
    let text = make_jaxpr(|x: Array| f.call(&x), &one).unwrap().to_string();
    assert!(text.contains("custom_vjp_call["), "{text}");
    let e = jvp(|x: Array| f.call(&x), &one, &one).unwrap_err();
    assert_eq!(
        e.to_string(),
        "TypeError: can't apply forward-mode autodiff (jvp) to a custom_vjp function."
    );
    // clip_gradient(x, bound = 1): the gradient of 5·clip(x) is clipped to 1.
    let bound = 1.0;
    let clip = CustomVjp::new(
        |x: Array| Ok(x),
        |x: Array| Ok((x, ())),
        move |_: (), g: Array| jnp::clip(&g, Some((-bound).into()), Some(bound.into())),
    );
    let g = grad(
        |x: Array| jnp::multiply(clip.call(&x)?, 5.0),
        &Array::scalar(2.0f32),
    )
    .unwrap();
    assert_eq!(g.to_vec::<f32>().unwrap(), [1.0]);
    // Evaluated, the function is the identity.
    assert_eq!(clip.call(&one).unwrap().to_vec::<f32>().unwrap(), [1.0]);
}

/// The custom-derivatives note's vmap/grad compositions: the custom derivative 3 in every
/// order (`vmap(custom_jvp_call(f, f_jvp)) == custom_jvp_call(vmap(f), vmap(f_jvp))`).
#[test]
fn custom_jvp_under_vmap_in_every_order() {
    use dtype_lattice_array::{CustomJvp, CustomVjp, vmap};
    let f = CustomJvp::new(
        |x: Array| jnp::multiply(2.0, &x),
        |x: Array, t: Array| Ok((jnp::multiply(2.0, &x)?, jnp::multiply(3.0, &t)?)),
    );
    let ones = jnp::ones(&[4], DType::Float32).unwrap();
    // vmap(grad(f))(ones(4))
    let a: Array = vmap(|x: Array| grad(|x: Array| f.call(&x), &x))
        .call(&ones)
        .unwrap();
    assert_eq!(a.to_vec::<f32>().unwrap(), [3.0; 4]);
    // grad(lambda x: vmap(f)(x).sum())(ones(4))
    let b = grad(
        |x: Array| {
            let y: Array = vmap(|x: Array| f.call(&x)).call(&x)?;
            jnp::sum(&y, Axes::All, false)
        },
        &ones,
    )
    .unwrap();
    assert_eq!(b.to_vec::<f32>().unwrap(), [3.0; 4]);
    // vmap of f itself is 2x.
    let c: Array = vmap(|x: Array| f.call(&x)).call(&ones).unwrap();
    assert_eq!(c.to_vec::<f32>().unwrap(), [2.0; 4]);
    // custom_vjp under vmap: the backward pass mapped, an unmapped input's cotangent summed.
    let scale = CustomVjp::new(
        |(x, w): (Array, Array)| jnp::multiply(&x, &w),
        |(x, w): (Array, Array)| Ok((jnp::multiply(&x, &w)?, (x, w))),
        |(x, w): (Array, Array), g: Array| Ok((jnp::multiply(&g, &w)?, jnp::multiply(&g, &x)?)),
    );
    let w = Array::scalar(5.0f32);
    let xs = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
    let (gx, gw) = grad(
        |(xs, w): (Array, Array)| {
            let y: Array = vmap(|(x, w): (Array, Array)| scale.call(&(x, w)))
                .in_axes([Some(0), None])
                .call(&(xs, w))?;
            jnp::sum(&y, Axes::All, false)
        },
        &(xs, w),
    )
    .unwrap();
    assert_eq!(gx.to_vec::<f32>().unwrap(), [5.0; 3]);
    assert_eq!(gw.to_vec::<f32>().unwrap(), [6.0]);
}

/// A jitted function is traced again under other rules, as JAX's jit cache keys on the
/// configuration (`jax_numpy_dtype_promotion`, `jax_enable_x64`, the default PRNG
/// implementation) as well as on the arguments' types: the same signature under strict
/// promotion raises JAX's error instead of reusing the standard trace, and back under the
/// standard rules the first trace serves again.
#[test]
fn a_jitted_function_is_traced_again_under_other_rules() {
    use dtype_lattice::Rules;
    use dtype_lattice_array::config::with_rules;
    let half = Array::from_vec(vec![0.5f32, 0.25]);
    let f = jit(|x: Array| jnp::add(&x, &half));
    let x = Array::from_vec(vec![1i32, 2]);
    let standard: Array = with_rules(Rules::jax(), || f.call(&x)).unwrap();
    assert_eq!(standard.to_vec::<f32>().unwrap(), [1.5, 2.25]);
    let strict: Result<Array, Error> = with_rules(Rules::jax().strict(true), || f.call(&x));
    let e = strict.expect_err("strict promotion refuses int32 + float32");
    assert_eq!(
        e.exception().map(|c| c.name()),
        Some("TypePromotionError"),
        "{e:?}"
    );
    let again: Array = with_rules(Rules::jax(), || f.call(&x)).unwrap();
    assert_eq!(again.as_bytes(), standard.as_bytes());
    assert_eq!(f.traces(), 1);
}
