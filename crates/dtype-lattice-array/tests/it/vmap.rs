//! `vmap` against JAX 0.10: the cases of tools/gen_transform_fixtures.py's `VMAP` corpus
//! (each written here a second time under the same name: in_axes/out_axes with `None` and
//! axis 1, pytree outputs, nested vmap, vmap composed with grad, jvp and jit, the structural,
//! slicing, reduction and PRNG primitives), vmap's `ValueError`s, and the law that mapping
//! `f` over a batch is stacking `f` of each example.

use crate::transform_common as common;

use common::fixture;
use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error};
use dtype_lattice_array::core::{self, Param, Params};
use dtype_lattice_array::lax;
use dtype_lattice_array::numpy::{self as jnp, Axes, Index};
use dtype_lattice_array::registry;
use dtype_lattice_array::{Array, random};
use dtype_lattice_array::{CustomJvp, CustomVjp, grad, jit, jvp, make_jaxpr, vmap};
use proptest::prelude::*;
use serde_json::Value;

type Case = fn(&[Array]) -> Result<Vec<Array>, Error>;

/// `lax.<name>` through the primitive of that name.
fn lax(name: &str, args: &[&Array], params: Params) -> Result<Array, Error> {
    let p = registry::by_name(name).expect("a primitive");
    Ok(core::bind(p, args, &params)?.remove(0))
}

fn ints(v: &[i64]) -> Param {
    Param::Ints(v.to_vec())
}

fn one(x: Result<Array, Error>) -> Result<Vec<Array>, Error> {
    Ok(vec![x?])
}

fn two(x: Result<(Array, Array), Error>) -> Result<Vec<Array>, Error> {
    let (a, b) = x?;
    Ok(vec![a, b])
}

/// The generator's `_closing_vjp`: a custom_vjp function closing over `c`.
fn closing_vjp(c: &Array, x: &Array) -> Result<Array, Error> {
    let (c1, c2, c3) = (c.clone(), c.clone(), c.clone());
    let f: CustomVjp<Array, Array, Array> = CustomVjp::new(
        move |x: Array| jnp::multiply(jnp::sin(&x)?, &c1),
        move |x: Array| Ok((jnp::multiply(jnp::sin(&x)?, &c2)?, jnp::cos(&x)?)),
        move |cos_x: Array, g: Array| jnp::multiply(jnp::multiply(&g, &cos_x)?, &c3),
    );
    f.call(x)
}

/// The generator's `_closing_jvp`: a custom_jvp function closing over `c`.
fn closing_jvp(c: &Array, x: &Array) -> Result<Array, Error> {
    let (c1, c2, c3) = (c.clone(), c.clone(), c.clone());
    let f: CustomJvp<Array, Array> = CustomJvp::new(
        move |x: Array| jnp::add(jnp::multiply(&x, &c1)?, 1.0),
        move |x: Array, t: Array| {
            Ok((
                jnp::add(jnp::multiply(&x, &c2)?, 1.0)?,
                jnp::multiply(jnp::multiply(&t, &c3)?, 3.0)?,
            ))
        },
    );
    f.call(x)
}

fn softmax(z: Array) -> Result<Array, Error> {
    let e = jnp::exp(&z)?;
    jnp::divide(&e, jnp::sum(&e, Axes::All, false)?)
}

fn structural(x: Array) -> Result<Array, Error> {
    let flat = jnp::reshape(jnp::transpose(&x, None)?, &[-1])?;
    let rev = lax("rev", &[&x], Params::new().with("dimensions", ints(&[0])))?;
    jnp::concatenate(&[jnp::reshape(rev, &[-1])?.into(), flat.into()], 0)
}

fn pad(x: &Array, v: &Array, config: Vec<(i64, i64, i64)>) -> Result<Array, Error> {
    lax(
        "pad",
        &[x, v],
        Params::new().with("padding_config", Param::Padding(config)),
    )
}

fn dynamic_slice(x: &Array, idx: &[&Array], sizes: &[i64]) -> Result<Array, Error> {
    let mut args = vec![x];
    args.extend_from_slice(idx);
    lax(
        "dynamic_slice",
        &args,
        Params::new().with("slice_sizes", ints(sizes)),
    )
}

fn dynamic_update_slice(x: &Array, u: &Array, idx: &[&Array]) -> Result<Array, Error> {
    let mut args = vec![x, u];
    args.extend_from_slice(idx);
    lax("dynamic_update_slice", &args, Params::new())
}

fn bitcast(x: &Array, dtype: DType) -> Result<Array, Error> {
    lax(
        "bitcast_convert_type",
        &[x],
        Params::new().with("new_dtype", Param::DType(dtype)),
    )
}

/// The corpus, by name (the same functions as the generator's `VMAP`).
fn corpus(name: &str) -> Option<Case> {
    Some(match name {
        "vmap_sin_mul_add" => {
            |a| one(vmap(|x: Array| jnp::add(jnp::multiply(jnp::sin(&x)?, 2.0)?, 1)).call(&a[0]))
        }
        "vmap_in_axis1" => |a| {
            one(
                vmap(|x: Array| jnp::sum(jnp::multiply(&x, &x)?, Axes::All, false))
                    .in_axes(1)
                    .call(&a[0]),
            )
        },
        "vmap_out_axis1" => |a| {
            one(vmap(|x: Array| jnp::multiply(jnp::cumsum(&x)?, 2))
                .out_axes(1)
                .call(&a[0]))
        },
        "vmap_shared_matmul" => |a| {
            one(vmap(|v: Vec<Array>| jnp::matmul(&v[0], &v[1]))
                .in_axes([Some(0), None])
                .call(&a.to_vec()))
        },
        "vmap_matmul_both" => {
            |a| one(vmap(|v: Vec<Array>| jnp::matmul(&v[0], &v[1])).call(&a.to_vec()))
        }
        "vmap_matmul_axes" => |a| {
            one(vmap(|v: Vec<Array>| jnp::matmul(&v[0], &v[1]))
                .in_axes([Some(1), Some(1)])
                .call(&a.to_vec()))
        },
        "vmap_out_none" => |a| {
            two(
                vmap(|v: Vec<Array>| Ok((jnp::add(&v[0], 1)?, jnp::multiply(&v[1], 2)?)))
                    .in_axes([Some(0), None])
                    .out_axes([Some(0), None])
                    .call(&a.to_vec()),
            )
        },
        "vmap_broadcast_out" => |a| {
            two(vmap(|v: Vec<Array>| {
                Ok((
                    jnp::sum(&v[0], Axes::All, false)?,
                    jnp::multiply(&v[1], 2.0)?,
                ))
            })
            .in_axes([Some(0), None])
            .out_axes([Some(0), Some(1)])
            .call(&a.to_vec()))
        },
        "vmap_nested" => |a| {
            let inner = |w: Vec<Array>| {
                let (x, y) = (&w[0], &w[1]);
                jnp::add(jnp::multiply(x, y)?, jnp::max(x, Axes::All, false)?)
            };
            one(vmap(|v: Vec<Array>| {
                vmap(inner)
                    .in_axes([Some(0), None])
                    .call::<Vec<Array>, Array>(&v)
            })
            .in_axes([None, Some(0)])
            .call(&a.to_vec()))
        },
        "vmap_grad" => |a| {
            one(vmap(|x: Array| {
                grad(
                    |x: Array| jnp::sum(jnp::power(jnp::tanh(&x)?, 2)?, Axes::All, false),
                    &x,
                )
            })
            .call(&a[0]))
        },
        "grad_vmap" => |a| {
            one(grad(
                |x: Array| {
                    let per_row = vmap(|r: Array| {
                        let s = jnp::sum(jnp::multiply(&r, &r)?, Axes::All, false)?;
                        jnp::multiply(jnp::sin(&r)?, s)
                    });
                    jnp::sum(per_row.call::<Array, Array>(&x)?, Axes::All, false)
                },
                &a[0],
            ))
        },
        "vmap_jvp" => |a| {
            one(vmap(|x: Array| {
                let ones = jnp::ones(x.shape(), DType::Float32)?;
                jvp(|z: Array| jnp::multiply(jnp::sin(&z)?, &z), &x, &ones).map(|(_, t)| t)
            })
            .call(&a[0]))
        },
        "jvp_vmap" => |a| {
            let ones = jnp::ones(a[0].shape(), DType::Float32)?;
            two(jvp(
                |x: Array| {
                    vmap(|z: Array| jnp::multiply(jnp::sin(&z)?, jnp::sum(&z, Axes::All, false)?))
                        .call(&x)
                },
                &a[0],
                &ones,
            ))
        },
        "vmap_jit" => |a| {
            let f = jit(softmax);
            one(vmap(|x: Array| f.call::<Array, Array>(&x)).call(&a[0]))
        },
        "jit_vmap" => |a| one(jit(|x: Array| vmap(softmax).call(&x)).call(&a[0])),
        "vmap_where" => |a| {
            one(
                vmap(|v: Vec<Array>| jnp::r#where(jnp::greater(&v[0], 0)?, &v[0], &v[1]))
                    .in_axes([Some(0), None])
                    .call(&a.to_vec()),
            )
        },
        "vmap_structural" => |a| one(vmap(structural).in_axes(1).call(&a[0])),
        "vmap_pad_value" => {
            |a| one(vmap(|v: Vec<Array>| pad(&v[0], &v[1], vec![(1, 2, 1)])).call(&a.to_vec()))
        }
        "vmap_pad" => |a| {
            one(
                vmap(|v: Vec<Array>| pad(&v[0], &v[1], vec![(2, 0, 1), (-1, 1, 0)]))
                    .in_axes([Some(2), None])
                    .call(&a.to_vec()),
            )
        },
        "vmap_dynamic_slice" => {
            |a| one(vmap(|v: Vec<Array>| dynamic_slice(&v[0], &[&v[1]], &[2])).call(&a.to_vec()))
        }
        "vmap_dynamic_update_slice" => |a| {
            one(
                vmap(|v: Vec<Array>| dynamic_update_slice(&v[0], &v[1], &[&v[2]]))
                    .call(&a.to_vec()),
            )
        },
        "vmap_dynamic_slice_shared" => |a| {
            one(vmap(|x: Array| {
                dynamic_slice(&x, &[&Array::scalar(1i32), &Array::scalar(0i32)], &[2, 2])
            })
            .in_axes(1)
            .call(&a[0]))
        },
        "vmap_dus_shared" => |a| {
            one(
                vmap(|v: Vec<Array>| dynamic_update_slice(&v[0], &v[1], &[&Array::scalar(1i32)]))
                    .in_axes([Some(0), None])
                    .call(&a.to_vec()),
            )
        },
        "vmap_clamp" => |a| {
            one(vmap(|v: Vec<Array>| {
                lax(
                    "clamp",
                    &[&v[0], &v[1], &Array::scalar(1.0f32)],
                    Params::new(),
                )
            })
            .call(&a.to_vec()))
        },
        "vmap_argmax_cumsum" => |a| {
            two(vmap(|x: Array| {
                let am = lax(
                    "argmax",
                    &[&x],
                    Params::new()
                        .with("axes", ints(&[1]))
                        .with("index_dtype", Param::DType(DType::Int32)),
                )?;
                let cs = lax(
                    "cumsum",
                    &[&x],
                    Params::new()
                        .with("axis", Param::Int(0))
                        .with("reverse", Param::Bool(false)),
                )?;
                Ok((am, cs))
            })
            .in_axes(1)
            .call(&a[0]))
        },
        "vmap_reduce_out1" => |a| {
            one(vmap(|x: Array| jnp::max(&x, Axes::Some(vec![0]), false))
                .in_axes(1)
                .out_axes(1)
                .call(&a[0]))
        },
        "vmap_iota_add" => |a| {
            one(
                vmap(|x: Array| jnp::add(&x, jnp::arange(0.0, 3.0, 1.0, DType::Float32)?))
                    .call(&a[0]),
            )
        },
        "vmap_bitcast" => |a| {
            one(vmap(|x: Array| {
                jnp::add(bitcast(&x, DType::Int32)?, jnp::astype(&x, DType::Int32)?)
            })
            .call(&a[0]))
        },
        "vmap_bitcast_last" => |a| {
            one(vmap(|x: Array| bitcast(&x, DType::UInt16))
                .in_axes(1)
                .call(&a[0]))
        },
        "vmap_concatenate" => |a| {
            one(vmap(|v: Vec<Array>| {
                jnp::concatenate(&[(&v[0]).into(), (&v[1]).into(), (&v[0]).into()], 0)
            })
            .in_axes([Some(0), None])
            .call(&a.to_vec()))
        },
        "vmap_dot_vec" => |a| {
            one(vmap(|v: Vec<Array>| jnp::dot(&v[0], &v[1]))
                .in_axes([Some(1), Some(0)])
                .call(&a.to_vec()))
        },
        "vmap_select_scalar_which" => |a| {
            one(vmap(|v: Vec<Array>| {
                let c = jnp::greater(&v[0], 0)?;
                lax(
                    "select_n",
                    &[&c, &jnp::negative(&v[1])?, &v[1]],
                    Params::new(),
                )
            })
            .call(&a.to_vec()))
        },
        "vmap_reshape_squeeze" => |a| {
            one(vmap(|x: Array| {
                let r = jnp::reshape(&x, &[1, 6])?;
                let e = lax::expand_dims(&r, &[2])?;
                let s = lax(
                    "squeeze",
                    &[&e],
                    Params::new().with("dimensions", ints(&[0, 2])),
                )?;
                jnp::add(s, 1)
            })
            .in_axes(2)
            .call(&a[0]))
        },
        "vmap_broadcast_in_dim" => |a| {
            one(vmap(|x: Array| {
                lax(
                    "broadcast_in_dim",
                    &[&x],
                    Params::new()
                        .with("shape", ints(&[2, 3]))
                        .with("broadcast_dimensions", ints(&[1]))
                        .with("sharding", Param::None),
                )
            })
            .call(&a[0]))
        },
        "vmap_strided_slice" => {
            |a| one(vmap(|x: Array| jnp::index(&x, &[Index::Slice(Some(1), None, 2)])).call(&a[0]))
        }
        "vmap_all" => |a| {
            one(
                vmap(|x: Array| jnp::all(jnp::greater(&x, 0)?, Axes::Some(vec![1]), false))
                    .in_axes(2)
                    .call(&a[0]),
            )
        },
        "vmap_keys_bits" => |a| one(vmap(|k: Array| random::bits(&k, &[3])).call(&a[0])),
        "vmap_keys_normal" => {
            |a| one(vmap(|k: Array| random::normal(&k, &[2, 3], DType::Float32)).call(&a[0]))
        }
        "vmap_keys_uniform" => |a| {
            one(vmap(|k: Array| random::uniform(&k, &[5], DType::Float32, -2.0, 2.0)).call(&a[0]))
        },
        "vmap_keys_split_fold" => {
            |a| one(vmap(|k: Array| random::split(&random::fold_in(&k, 7)?, 2)).call(&a[0]))
        }
        "vmap_keys_bernoulli" => {
            |a| one(vmap(|k: Array| random::bernoulli(&k, 0.3, &[4])).call(&a[0]))
        }
        "vmap_fold_in_data" => |a| {
            one(
                vmap(|v: Vec<Array>| random::key_data(&random::fold_in_array(&v[0], &v[1])?))
                    .in_axes([None, Some(0)])
                    .call(&a.to_vec()),
            )
        },
        "jit_vmap_keys_normal" => |a| {
            one(
                jit(|k: Array| vmap(|k: Array| random::normal(&k, &[3], DType::Float32)).call(&k))
                    .call(&a[0]),
            )
        },
        "vmap_custom_vjp_closure" => {
            |a| one(vmap(|c: Array| closing_vjp(&c, &Array::scalar(2.0f32))).call(&a[0]))
        }
        "vmap_custom_jvp_closure" => |a| {
            one(vmap(|v: Vec<Array>| closing_jvp(&v[0], &v[1]))
                .in_axes([Some(0), None])
                .call(&a.to_vec()))
        },
        "jit_custom_vjp_closure" => {
            |a| one(jit(|v: Vec<Array>| closing_vjp(&v[0], &v[1])).call(&a.to_vec()))
        }
        "grad_custom_vjp_closure_arg" => |a| {
            let c = a[1].clone();
            one(grad(
                |x: Array| jnp::sum(closing_vjp(&c, &x)?, Axes::All, false),
                &a[0],
            ))
        },
        _ => return None,
    })
}

fn check(name: &str, what: &str, got: &Array, want: &Value) {
    if let Some(data) = want.get("key_data") {
        let d = random::key_data(got).unwrap();
        return check(name, &format!("{what} key_data"), &d, data);
    }
    // The PRNG's values and every integer or boolean are exact; other floats to rounding
    // (normal too: XLA's float32 `erf_inv` agrees to 1e-6, as in random_conformance.rs).
    let exact = (name.contains("keys") && !name.contains("normal"))
        || got.dtype().kind() != dtype_lattice::Kind::Float;
    // (serde_json parses decimals to within an ulp of float64, far below float32's.)
    let tol = if exact { 1e-12 } else { 1e-6 };
    common::close(name, what, got, want, tol);
}

#[test]
fn the_vmap_corpus_agrees_with_jax() {
    let fixture = fixture("vmap.json");
    let cases = fixture["cases"].as_array().unwrap();
    let mut values = 0;
    let mut errors = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let args: Vec<Array> = case["args"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, s)| common::argument(s, i))
            .collect();
        if let Some(err) = case.get("error")
            && err["exception"] == "UnexpectedTracerError"
        {
            // JAX names the tracer type of its own implementation (LinearizeTracer, JVPTracer)
            // and adds advice about its debugging flags: the class and the first sentence
            // are compared.
            let got = tracer_error(name, &args);
            let first = |m: &str| m.split(". ").next().unwrap_or_default().to_string();
            assert_eq!(
                got.exception(),
                Some(Exception::UnexpectedTracerError),
                "{name}: {got}"
            );
            let message = got.to_string();
            let message = message.trim_start_matches("UnexpectedTracerError: ");
            assert_eq!(
                first(message),
                first(err["message"].as_str().unwrap()),
                "{name}"
            );
            errors += 1;
            continue;
        }
        if let Some(err) = case.get("error") {
            let got = vmap_error(name, &args);
            assert_eq!(
                got.to_string(),
                format!(
                    "{}: {}",
                    err["exception"].as_str().unwrap(),
                    err["message"].as_str().unwrap()
                ),
                "{name}"
            );
            errors += 1;
            continue;
        }
        let f = corpus(name).unwrap_or_else(|| panic!("{name} is not in the Rust corpus"));
        let outs = f(&args).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = case["outputs"].as_array().unwrap();
        assert_eq!(outs.len(), want.len(), "{name}");
        for (i, (o, w)) in outs.iter().zip(want).enumerate() {
            check(name, &format!("output {i}"), o, w);
        }
        values += 1;
    }
    assert_eq!((values, errors), (47, 8));
}

/// The Rust twins of the generator's `TRACER_ERRORS`: differentiating with respect to a value
/// a custom_vjp function closes over.
fn tracer_error(name: &str, args: &[Array]) -> Error {
    let c = &args[0];
    let two = Array::scalar(2.0f32);
    let r: Result<Array, Error> = match name {
        "grad_custom_vjp_closed_over" => grad(
            |c: Array| jnp::sum(closing_vjp(&c, &two)?, Axes::All, false),
            c,
        ),
        "jvp_custom_vjp_closed_over" => jvp(
            |c: Array| closing_vjp(&c, &two),
            c,
            &jnp::ones(c.shape(), c.dtype()).unwrap(),
        )
        .map(|(_, t)| t),
        _ => panic!("{name} is not in the Rust error corpus"),
    };
    r.expect_err(name)
}

/// The Rust twins of the generator's `VMAP_ERRORS`.
fn vmap_error(name: &str, args: &[Array]) -> Error {
    let args = args.to_vec();
    let first = |v: Vec<Array>| Ok(v[0].clone());
    let r: Result<Array, Error> = match name {
        "inconsistent_sizes" => vmap(|v: Vec<Array>| jnp::add(&v[0], &v[1])).call(&args),
        "inconsistent_most" => {
            vmap(|v: Vec<Array>| jnp::add(jnp::add(&v[0], &v[1])?, &v[2])).call(&args)
        }
        "rank_too_small" => vmap(first).in_axes(1).call(&args),
        "no_mapped_axis" => vmap(first).in_axes(None).call(&args),
        "out_axes_none" => vmap(first).out_axes(None).call(&args),
        "out_axis_out_of_range" => vmap(first).out_axes(2).call(&args),
        _ => panic!("{name} is not in the Rust error corpus"),
    };
    r.expect_err(name)
}

/// Under `jit`, a vmapped function is staged: its batched program typechecks, and the
/// jaxpr's output is the whole batch.
#[test]
fn vmap_stages_under_make_jaxpr() {
    let xs = jnp::ones(&[4, 3], DType::Float32).unwrap();
    let w = jnp::ones(&[3, 2], DType::Float32).unwrap();
    let f = |v: Vec<Array>| {
        vmap(|u: Vec<Array>| jnp::tanh(jnp::matmul(&u[0], &u[1])?))
            .in_axes([Some(0), None])
            .call::<Vec<Array>, Array>(&v)
    };
    let j = make_jaxpr(f, &vec![xs, w]).unwrap();
    j.jaxpr().typecheck().unwrap();
    assert_eq!(j.jaxpr().out_avals()[0].to_string(), "f32[4,2]");
    let text = j.to_string();
    assert!(text.contains("dot_general"), "{text}");
}

/// A batch tracer kept past its vmap is refused when used.
#[test]
fn an_escaped_batch_tracer_is_refused() {
    let leaked = std::sync::Mutex::new(None);
    let f = |x: Array| -> Result<Array, Error> {
        *leaked.lock().unwrap() = Some(jnp::multiply(&x, 2.0)?);
        Ok(x)
    };
    let _: Array = vmap(f)
        .call(&jnp::ones(&[3], DType::Float32).unwrap())
        .unwrap();
    let t = leaked.lock().unwrap().clone().unwrap();
    let e = jnp::add(&t, 1.0).unwrap_err().to_string();
    assert!(e.starts_with("UnexpectedTracerError"), "{e}");
    assert!(e.contains("wrapped in a BatchTracer"), "{e}");
    // Asking a batched value for its elements is a concretization error.
    let e = vmap(|x: Array| -> Result<Array, Error> {
        x.to_vec::<f32>()?;
        Ok(x)
    })
    .call::<Array, Array>(&jnp::ones(&[3], DType::Float32).unwrap())
    .unwrap_err();
    assert!(e.to_string().starts_with("ConcretizationTypeError"), "{e}");
}

/// Axis size 0, pytrees of other shapes, axes lists of the wrong length.
#[test]
fn edge_cases_of_the_axes() {
    let empty = Array::from_shape_vec(&[0, 3], Vec::<f32>::new()).unwrap();
    let y: Array = vmap(|x: Array| jnp::sin(&x)).call(&empty).unwrap();
    assert_eq!(y.shape(), [0, 3]);
    let idx = Array::from_vec(Vec::<i32>::new());
    let y: Array = vmap(|v: Vec<Array>| dynamic_slice(&v[0], &[&v[1]], &[2]))
        .call(&vec![empty.clone(), idx])
        .unwrap();
    assert_eq!(y.shape(), [0, 2]);
    let e = vmap(|v: Vec<Array>| Ok(v[0].clone()))
        .in_axes([Some(0)])
        .call::<Vec<Array>, Array>(&vec![empty.clone(), empty])
        .unwrap_err();
    assert!(e.to_string().starts_with("ValueError: vmap in_axes"), "{e}");
    let e = vmap(|v: Vec<Array>| Ok(v))
        .call::<Vec<Array>, Vec<Array>>(&vec![])
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("ValueError: vmap wrapped function"),
        "{e}"
    );
}

/// Batched keys along axis 1 and a shared key: the PRNG primitives map over keys.
#[test]
fn keys_batched_along_any_axis() {
    let keys = random::split_shape(&random::key(0).unwrap(), &[2, 3]).unwrap();
    let bits = |k: Array| random::bits(&k, &[2]);
    let rows = |k: Array| vmap(bits).call::<Array, Array>(&k);
    let by_col: Array = vmap(rows).in_axes(1).call(&keys).unwrap();
    assert_eq!(by_col.shape(), [3, 2, 2]);
    let all: Array = vmap(rows).call(&keys).unwrap();
    assert_eq!(all.shape(), [2, 3, 2]);
    // Row r, column c: the same key either way.
    let (a, b) = (
        by_col.to_vec::<u32>().unwrap(),
        all.to_vec::<u32>().unwrap(),
    );
    for r in 0..2 {
        for c in 0..3 {
            assert_eq!(a[(c * 2 + r) * 2..][..2], b[(r * 3 + c) * 2..][..2]);
        }
    }
    // randint maps too: each row is the eager sampler's on its key.
    let ks = random::split(&random::key(0).unwrap(), 3).unwrap();
    let got: Array = vmap(|k: Array| random::randint(&k, &[2], -3, 500, DType::UInt8))
        .call(&ks)
        .unwrap();
    assert_eq!(got.shape(), [3, 2]);
    for i in 0..3 {
        let k = jnp::index(&ks, &[jnp::Index::At(i as isize)]).unwrap();
        let want = random::randint(&k, &[2], -3, 500, DType::UInt8).unwrap();
        assert_eq!(&got.as_bytes()[2 * i..2 * i + 2], want.as_bytes());
    }
}

type Sampler = fn(&Array, DType) -> Result<Array, Error>;

/// A traced key takes the primitives' route (`random_bits` and lax): the eager kernels'
/// values, bit for bit, for every float dtype, x64 off and on.
#[test]
fn traced_samplers_agree_with_the_eager_kernels() {
    for x64 in [false, true] {
        jnp::with_rules(dtype_lattice::Rules::jax().x64(x64), || {
            let keys = random::split(&random::key(7).unwrap(), 3).unwrap();
            let mut dtypes = vec![DType::Float16, DType::BFloat16, DType::Float32];
            if x64 {
                dtypes.push(DType::Float64);
            }
            let samplers: [(&str, Sampler); 4] = [
                ("normal", |k, d| random::normal(k, &[4, 5], d)),
                ("uniform", |k, d| random::uniform(k, &[4, 5], d, 0.0, 1.0)),
                ("uniform(-2, 2)", |k, d| {
                    random::uniform(k, &[4, 5], d, -2.0, 2.0)
                }),
                ("bernoulli", |k, _| random::bernoulli(k, 0.3, &[4, 5])),
            ];
            for d in dtypes {
                for (name, f) in samplers {
                    let traced: Array = vmap(|k: Array| f(&k, d)).call(&keys).unwrap();
                    let eager: Vec<Array> = (0..3)
                        .map(|i| f(&example(&keys, i, 0), d).unwrap())
                        .collect();
                    let eager =
                        jnp::stack(&eager.iter().map(Into::into).collect::<Vec<_>>(), 0).unwrap();
                    assert_eq!(traced.dtype(), eager.dtype(), "{name} {d} x64={x64}");
                    assert_eq!(traced.as_bytes(), eager.as_bytes(), "{name} {d} x64={x64}");
                }
            }
        });
    }
}

/// An example of `xs` along `axis` (eagerly).
fn example(xs: &Array, i: usize, axis: usize) -> Array {
    let mut idx = vec![Index::Slice(None, None, 1); axis];
    idx.push(Index::At(i as isize));
    jnp::index(xs, &idx).unwrap()
}

type Unary = fn(&Array) -> Result<Array, Error>;

/// Functions of one example of shape (2, 3) (and a shared (3,) operand for the binary ones).
const FUNCTIONS: &[(&str, Unary)] = &[
    ("sin", |x| jnp::sin(x)),
    ("poly", |x| {
        jnp::add(jnp::multiply(x, x)?, jnp::multiply(3, x)?)
    }),
    ("shared", |x| {
        jnp::subtract(x, Array::from_vec(vec![0.5f32, -1.0, 2.0]))
    }),
    ("max_rows", |x| jnp::max(x, Axes::Some(vec![1]), false)),
    ("sum_all", |x| jnp::sum(x, Axes::All, false)),
    ("transpose", |x| jnp::transpose(x, None)),
    ("reshape", |x| jnp::reshape(x, &[3, 2])),
    ("rev_slice", |x| {
        jnp::index(
            x,
            &[Index::Slice(None, None, -1), Index::Slice(Some(1), None, 1)],
        )
    }),
    ("pad", |x| {
        pad(x, &Array::scalar(7.0f32), vec![(1, 0, 1), (0, 2, 0)])
    }),
    ("concat", |x| jnp::concatenate(&[x.into(), x.into()], 1)),
    ("cumsum", |x| {
        lax(
            "cumsum",
            &[x],
            Params::new()
                .with("axis", Param::Int(1))
                .with("reverse", Param::Bool(true)),
        )
    }),
    ("matmul", |x| jnp::matmul(x, jnp::transpose(x, None)?)),
    ("where", |x| {
        jnp::r#where(jnp::greater(x, 0)?, x, jnp::negative(x)?)
    }),
    ("expand", |x| lax::expand_dims(x, &[0, -1])),
    ("matmul_shared_rhs", |x| {
        jnp::matmul(
            x,
            jnp::reshape(jnp::arange(0.0, 12.0, 1.0, DType::Float32)?, &[3, 4])?,
        )
    }),
    ("matmul_shared_lhs", |x| {
        jnp::matmul(
            jnp::reshape(jnp::arange(0.0, 8.0, 1.0, DType::Float32)?, &[4, 2])?,
            x,
        )
    }),
    ("batched_matmul", |x| {
        let x3 = jnp::reshape(x, &[1, 2, 3])?;
        jnp::matmul(&x3, jnp::transpose(&x3, Some(&[0, 2, 1]))?)
    }),
    ("where_shared_mask", |x| {
        let mask = Array::from_shape_vec(&[2, 3], vec![true, false, true, true, false, false])?;
        jnp::r#where(mask, x, 0.5f32)
    }),
    ("clamp_shared_bounds", |x| {
        let lo = Array::from_shape_vec(&[2, 3], vec![-1.0f32, 0.0, -2.0, 0.5, -3.0, 1.0])?;
        lax("clamp", &[&lo, x, &Array::scalar(2.0f32)], Params::new())
    }),
    ("dynamic_slice", |x| {
        dynamic_slice(x, &[&Array::scalar(1i32), &Array::scalar(1i32)], &[1, 2])
    }),
    ("dynamic_update_slice", |x| {
        let u = Array::from_shape_vec(&[1, 2], vec![9.0f32, 8.0])?;
        dynamic_update_slice(x, &u, &[&Array::scalar(0i32), &Array::scalar(2i32)])
    }),
    ("argmin_cummax", |x| {
        let am = lax(
            "argmin",
            &[x],
            Params::new()
                .with("axes", ints(&[0]))
                .with("index_dtype", Param::DType(DType::Int32)),
        )?;
        let cm = lax(
            "cummax",
            &[x],
            Params::new()
                .with("axis", Param::Int(0))
                .with("reverse", Param::Bool(false)),
        )?;
        jnp::add(cm, jnp::astype(am, DType::Float32)?)
    }),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// `vmap(f)(xs)` is `f` of each example, stacked (along the out axis).
    #[test]
    fn vmap_is_stacking_the_examples(
        which in 0..FUNCTIONS.len(),
        batch in 1usize..4,
        in_axis in 0usize..3,
        out_axis in 0usize..2,
        data in proptest::collection::vec(-4.0f32..4.0, 18),
    ) {
        let (name, f) = FUNCTIONS[which];
        // The examples are (2, 3); the batch goes in at in_axis.
        let mut shape = vec![2usize, 3];
        shape.insert(in_axis, batch);
        let n: usize = shape.iter().product();
        let xs = Array::from_shape_vec(&shape, data[..n].to_vec()).unwrap();
        let ys: Vec<Array> = (0..batch).map(|i| f(&example(&xs, i, in_axis)).unwrap()).collect();
        let out_axis = out_axis.min(ys[0].ndim());
        let stacked = jnp::stack(&ys.iter().map(Into::into).collect::<Vec<_>>(), out_axis as isize)
            .unwrap();
        let got: Array = vmap(|x: Array| f(&x)).in_axes(in_axis).out_axes(out_axis).call(&xs).unwrap();
        prop_assert_eq!(got.shape(), stacked.shape(), "{}", name);
        prop_assert_eq!(got.dtype(), stacked.dtype(), "{}", name);
        let (g, s) = (got.to_vec::<f32>().unwrap(), stacked.to_vec::<f32>().unwrap());
        for (a, b) in g.iter().zip(&s) {
            prop_assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{}: {} vs {}", name, a, b);
        }
    }
}
