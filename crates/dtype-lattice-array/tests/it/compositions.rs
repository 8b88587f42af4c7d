//! Compositions of the transformations against JAX 0.10: the cases of
//! tools/gen_composition_fixtures.py, each written here a second time under the same name:
//! higher-order derivatives (grad of grad, forward over reverse), jit/grad/vmap/jvp/linearize
//! in either order, value_and_grad with has_aux and with argnums (Rust: the arguments
//! differentiated are the ones passed, the others captured), stop_gradient, pytrees of
//! parameters, the softplus (custom_jvp) and clip_gradient (custom_vjp) under every
//! transformation, and the PRNG inside jit, vmap and grad. The jaxprs recorded for some cases
//! are compared equation by equation, nested `jit` calls inlined (JAX wraps `jnp` helpers
//! such as `_uniform` in jits of their own).

use crate::transform_common as common;

use std::collections::BTreeMap;

use common::fixture;
use dtype_lattice::{DType, Error};
use dtype_lattice_array::numpy::{self as jnp, Axes, Index};
use dtype_lattice_array::{Array, core, random, registry};
use dtype_lattice_array::{
    CustomJvp, CustomVjp, Grad, core::ClosedJaxpr, grad, jit, jvp, linearize, make_jaxpr,
    stop_gradient, vjp, vmap,
};
use serde_json::Value;

type Case = fn(&[Arg]) -> Result<Vec<Array>, Error>;

/// An argument: an array (keys included) or the generator's parameter dict.
#[derive(Clone)]
enum Arg {
    A(Array),
    Params(BTreeMap<String, Array>),
}

impl Arg {
    fn a(&self) -> Array {
        match self {
            Arg::A(x) => x.clone(),
            Arg::Params(_) => panic!("not an array"),
        }
    }
    fn p(&self) -> BTreeMap<String, Array> {
        match self {
            Arg::Params(p) => p.clone(),
            Arg::A(_) => panic!("not parameters"),
        }
    }
}

fn lax(name: &str, x: &Array) -> Result<Array, Error> {
    let p = registry::by_name(name).expect("a primitive");
    Ok(core::bind(p, &[x], &core::Params::new())?.remove(0))
}

fn sum(x: &Array) -> Result<Array, Error> {
    jnp::sum(x, Axes::All, false)
}

fn one(x: Result<Array, Error>) -> Result<Vec<Array>, Error> {
    Ok(vec![x?])
}

fn softplus_body(x: &Array) -> Result<Array, Error> {
    jnp::add(
        jnp::maximum(x, 0)?,
        jnp::log1p(jnp::exp(jnp::negative(jnp::abs(x)?)?)?)?,
    )
}

/// The issue's `softplus`, a custom_jvp function (its rule's primal output computed by the
/// body, as JAX's `softplus(x)` there computes it).
fn softplus() -> CustomJvp<Array, Array> {
    CustomJvp::new(
        |x: Array| softplus_body(&x),
        |x: Array, t: Array| Ok((softplus_body(&x)?, jnp::multiply(&t, lax("logistic", &x)?)?)),
    )
}

/// The issue's `clip_gradient(x, bound)`, a custom_vjp function (`bound` not differentiated).
fn clip_gradient(bound: f64) -> CustomVjp<Array, Array, ()> {
    CustomVjp::new(
        |x: Array| Ok(x),
        |x: Array| Ok((x, ())),
        move |_: (), g: Array| jnp::clip(&g, Some((-bound).into()), Some(bound.into())),
    )
}

fn cube_sum(x: &Array, y: &Array) -> Result<Array, Error> {
    sum(&jnp::multiply(jnp::power(x, 3)?, y)?)
}

fn mlp(p: &BTreeMap<String, Array>, x: &Array) -> Result<Array, Error> {
    let h = jnp::tanh(jnp::add(jnp::matmul(x, &p["w1"])?, &p["b1"])?)?;
    sum(&jnp::power(jnp::matmul(&h, &p["w2"])?, 2)?)
}

fn noisy(k: &Array, x: &Array) -> Result<Array, Error> {
    jnp::multiply(x, random::normal(k, x.shape(), x.dtype())?)
}

fn dropout(k: &Array, x: &Array) -> Result<Array, Error> {
    let mask = random::bernoulli(k, 0.7, x.shape())?;
    jnp::r#where(&mask, jnp::true_divide(x, 0.7)?, 0)
}

fn sin_sq_sum(x: Array) -> Result<Array, Error> {
    sum(&jnp::power(jnp::sin(&x)?, 2)?)
}

/// The generator's `_contractions`: every form XLA contracts into a fused multiply-add, and
/// two it does not.
fn contractions(a: &Array, b: &Array, c: &Array, d: &Array) -> Result<Vec<Array>, Error> {
    let ab = || jnp::multiply(a, b);
    let p = ab()?;
    Ok(vec![
        jnp::add(ab()?, c)?,
        jnp::add(c, ab()?)?,
        jnp::subtract(ab()?, c)?,
        jnp::subtract(c, ab()?)?,
        jnp::add(jnp::negative(ab()?)?, c)?,
        jnp::add(jnp::power(a, 2)?, c)?,
        jnp::subtract(jnp::square(b)?, d)?,
        jnp::add(ab()?, jnp::multiply(c, d)?)?,
        jnp::add(jnp::multiply(jnp::add(ab()?, c)?, a)?, b)?,
        jnp::add(&p, c)?,
        p.clone(),
        jnp::add(jnp::multiply(&p, c)?, &p)?,
    ])
}

/// The generator's `_shared_products`: products read by several consumers.
fn shared_products(a: &Array, b: &Array, c: &Array, d: &Array) -> Result<Vec<Array>, Error> {
    let m = |x: &Array, y: &Array| jnp::multiply(x, y);
    let p = m(a, b)?;
    Ok(vec![
        jnp::add(&p, c)?,
        jnp::subtract(&p, d)?,
        jnp::add(jnp::exp(m(a, c)?)?, jnp::add(m(a, c)?, b)?)?,
        jnp::multiply(jnp::add(m(b, d)?, c)?, m(b, d)?)?,
        jnp::add(jnp::add(m(c, d)?, a)?, jnp::add(m(c, d)?, b)?)?,
        jnp::add(m(a, d)?, b)?,
        sum(&m(a, d)?)?,
        jnp::add(m(b, c)?, a)?,
        jnp::multiply(m(b, c)?, d)?,
    ])
}

/// The cases, by name (the generator's `CASES`).
fn case(name: &str) -> Option<Case> {
    Some(match name {
        "jit_grad" => |a| {
            let f = jit(|x: Array| grad(|x: Array| sum(&jnp::multiply(jnp::sin(&x)?, &x)?), &x));
            one(f.call(&a[0].a()))
        },
        "grad_jit" => |a| {
            let inner = jit(|y: Array| jnp::multiply(jnp::tanh(&y)?, &y));
            one(grad(|x: Array| sum(&inner.call(&x)?), &a[0].a()))
        },
        "grad_grad" => |a| {
            let f =
                |x: Array| jnp::multiply(jnp::tanh(jnp::add(jnp::multiply(&x, &x)?, 1.0)?)?, 3.0);
            one(grad(|x: Array| grad(f, &x), &a[0].a()))
        },
        "grad_grad_grad" => |a| {
            let f = |x: Array| jnp::multiply(jnp::sin(&x)?, &x);
            one(grad(|x: Array| grad(|y: Array| grad(f, &y), &x), &a[0].a()))
        },
        "jit_grad_grad" => |a| {
            let f = |x: Array| jnp::exp(jnp::multiply(jnp::negative(&x)?, &x)?);
            one(jit(|x: Array| grad(|y: Array| grad(f, &y), &x)).call(&a[0].a()))
        },
        "hvp" => |a| {
            let (x, y, v) = (a[0].a(), a[1].a(), a[2].a());
            let zeros = jnp::zeros(y.shape(), y.dtype())?;
            let g = |(x, y): (Array, Array)| grad(|x: Array| cube_sum(&x, &y), &x);
            let (p, t) = jvp(g, &(x, y), &(v, zeros))?;
            Ok(vec![p, t])
        },
        "grad_of_jvp" => |a| {
            one(grad(
                |x: Array| sum(&jvp(|y: Array| jnp::sin(&y), &x, &x)?.1),
                &a[0].a(),
            ))
        },
        "linearize" => |a| {
            let lin = linearize(
                |z: Array| jnp::multiply(jnp::sin(&z)?, jnp::cos(&z)?),
                &a[0].a(),
            )?;
            let t: Array = lin.jvp(&a[1].a())?;
            Ok(vec![lin.primal().clone(), t])
        },
        "value_and_grad_aux" => |a| {
            let x = a[1].a();
            let ((loss, aux), g) = Grad::new().value_and_grad_with_aux(
                |w: Array| {
                    let pred = jnp::tanh(jnp::matmul(&x, &w)?)?;
                    let loss = jnp::mean(&jnp::power(&pred, 2)?, Axes::All, false)?;
                    let mut aux = BTreeMap::new();
                    aux.insert("pred_sum", sum(&pred)?);
                    aux.insert("w_norm", sum(&jnp::multiply(&w, &w)?)?);
                    Ok((loss, aux))
                },
                &a[0].a(),
            )?;
            Ok(vec![
                loss,
                aux["pred_sum"].clone(),
                aux["w_norm"].clone(),
                g,
            ])
        },
        "grad_argnums" => |a| {
            // jax.grad(f, argnums=(0, 2))(a, b, c): a and c differentiated, b captured.
            let b = a[1].a();
            let (ga, gc) = grad(
                |(x, z): (Array, Array)| {
                    sum(&jnp::multiply(
                        jnp::multiply(&x, jnp::sin(&b)?)?,
                        jnp::power(&z, 2)?,
                    )?)
                },
                &(a[0].a(), a[2].a()),
            )?;
            Ok(vec![ga, gc])
        },
        "grad_pytree" => |a| {
            let x = a[1].a();
            let g = grad(|p: BTreeMap<String, Array>| mlp(&p, &x), &a[0].p())?;
            Ok(g.into_values().collect())
        },
        "vjp_pytree" => |a| {
            let (out, pullback) = vjp(
                |(p, x): (BTreeMap<String, Array>, Array)| mlp(&p, &x),
                &(a[0].p(), a[1].a()),
            )?;
            let ct = jnp::full_like(&out, 1.5)?;
            let (gp, gx) = pullback(&ct)?;
            let mut leaves: Vec<Array> = gp.into_values().collect();
            leaves.push(gx);
            Ok(leaves)
        },
        "stop_gradient" => |a| {
            one(grad(
                |x: Array| sum(&jnp::add(jnp::multiply(&x, stop_gradient(&x)?)?, &x)?),
                &a[0].a(),
            ))
        },
        "jit_vmap_grad" => |a| {
            let f = jit(|xs: Array| vmap(|x: Array| grad(sin_sq_sum, &x)).call(&xs));
            one(f.call(&a[0].a()))
        },
        "vmap_jit_grad" => |a| {
            let g = jit(|x: Array| grad(sin_sq_sum, &x));
            one(vmap(|x: Array| g.call(&x)).call(&a[0].a()))
        },
        "grad_vmap_jvp" => |a| {
            one(grad(
                |x: Array| {
                    let per: Array =
                        vmap(|r: Array| Ok(jvp(|y: Array| jnp::tanh(&y), &r, &r)?.1)).call(&x)?;
                    sum(&per)
                },
                &a[0].a(),
            ))
        },
        "mixed_broadcast_grad" => |a| {
            let (gx, gy) = grad(
                |(x, y): (Array, Array)| {
                    let col = jnp::index(&x, &[Index::ALL, Index::NewAxis])?;
                    jnp::mean(&jnp::power(jnp::subtract(col, &y)?, 2)?, Axes::All, false)
                },
                &(a[0].a(), a[1].a()),
            )?;
            Ok(vec![gx, gy])
        },
        "softplus_jit" => |a| {
            let sp = softplus();
            one(jit(move |x: Array| sp.call(&x)).call(&a[0].a()))
        },
        "softplus_jvp" => |a| {
            let x = a[0].a();
            let (p, t) = jvp(|x: Array| softplus().call(&x), &x, &jnp::ones_like(&x)?)?;
            Ok(vec![p, t])
        },
        "softplus_grad" => |a| one(grad(|x: Array| sum(&softplus().call(&x)?), &a[0].a())),
        "softplus_vmap_grad" => {
            |a| one(vmap(|x: Array| grad(|y: Array| softplus().call(&y), &x)).call(&a[0].a()))
        }
        "softplus_grad_vmap" => |a| {
            one(grad(
                |x: Array| sum(&vmap(|y: Array| softplus().call(&y)).call(&x)?),
                &a[0].a(),
            ))
        },
        "softplus_grad_grad" => |a| {
            one(grad(
                |x: Array| grad(|y: Array| softplus().call(&y), &x),
                &a[0].a(),
            ))
        },
        "clip_grad" => |a| {
            one(grad(
                |x: Array| {
                    sum(&jnp::power(
                        clip_gradient(1.0).call(&jnp::multiply(&x, 3.0)?)?,
                        2,
                    )?)
                },
                &a[0].a(),
            ))
        },
        "clip_jit" => |a| {
            one(jit(|x: Array| clip_gradient(1.0).call(&jnp::multiply(&x, 3.0)?)).call(&a[0].a()))
        },
        "clip_vmap_grad" => |a| {
            let g = |x: Array| {
                grad(
                    |y: Array| jnp::power(clip_gradient(0.5).call(&jnp::multiply(&y, 3.0)?)?, 2),
                    &x,
                )
            };
            one(vmap(g).call(&a[0].a()))
        },
        "clip_jit_grad" => |a| {
            let f = jit(|x: Array| {
                grad(
                    |y: Array| {
                        let c = clip_gradient(0.25).call(&y)?;
                        sum(&softplus().call(&jnp::multiply(c, 4.0)?)?)
                    },
                    &x,
                )
            });
            one(f.call(&a[0].a()))
        },
        "prng_jit" => {
            |a| one(jit(|(k, x): (Array, Array)| noisy(&k, &x)).call(&(a[0].a(), a[1].a())))
        }
        "prng_vmap_jit" => |a| {
            let f = jit(|(k, x): (Array, Array)| noisy(&k, &x));
            one(vmap(|kx: (Array, Array)| f.call(&kx)).call(&(a[0].a(), a[1].a())))
        },
        "prng_grad" => |a| {
            let k = a[1].a();
            one(grad(
                |x: Array| sum(&jnp::power(dropout(&k, &x)?, 2)?),
                &a[0].a(),
            ))
        },
        "prng_grad_vmap" => |a| {
            let ks = a[1].a();
            one(grad(
                |x: Array| {
                    let per: Array =
                        vmap(|(k, r): (Array, Array)| dropout(&k, &r)).call(&(ks.clone(), x))?;
                    sum(&per)
                },
                &a[0].a(),
            ))
        },
        "contractions_jit" => {
            |a| {
                jit(|(a, b, c, d): (Array, Array, Array, Array)| contractions(&a, &b, &c, &d))
                    .call(&(a[0].a(), a[1].a(), a[2].a(), a[3].a()))
            }
        }
        "contractions_jit_f16" => |a| {
            let f = jit(|(a, b, c, d): (Array, Array, Array, Array)| {
                Ok(contractions(&a, &b, &c, &d)?[..9].to_vec())
            });
            f.call(&(a[0].a(), a[1].a(), a[2].a(), a[3].a()))
        },
        "contractions_shared_jit" => |a| {
            jit(|(a, b, c, d): (Array, Array, Array, Array)| shared_products(&a, &b, &c, &d))
                .call(&(a[0].a(), a[1].a(), a[2].a(), a[3].a()))
        },
        "randint_jit" => |a| {
            let f = jit(|k: Array| {
                Ok(vec![
                    random::randint(&k, &[5], 2, 9, DType::Int32)?,
                    random::randint(&k, &[4], -5, 300, DType::UInt8)?,
                    random::randint(&k, &[3], -100, 100, DType::Int16)?,
                    random::randint(&k, &[3], 7, 7, DType::Int32)?,
                    random::randint(&k, &[2, 2], -(1 << 31), (1 << 31) - 1, DType::Int32)?,
                ])
            });
            f.call(&a[0].a())
        },
        "randint_vmap" => |a| {
            let f = vmap(|k: Array| random::randint(&k, &[3], 0, 10, DType::UInt16));
            one(f.call(&a[0].a()))
        },
        "prng_jit_split" => |a| {
            let f = jit(|k: Array| {
                let ks = random::split(&k, 3)?;
                let k1 = jnp::index(&ks, &[Index::At(1)])?;
                random::uniform(&k1, &[4], DType::Float32, 0.0, 1.0)
            });
            one(f.call(&a[0].a()))
        },
        _ => return None,
    })
}

/// The case's function as `make_jaxpr` stages it, for the cases with a recorded jaxpr.
fn staged(name: &str, args: &[Arg]) -> Result<ClosedJaxpr, Error> {
    let x = args[0].a();
    match name {
        "grad_grad" => make_jaxpr(
            |x: Array| {
                grad(
                    |x: Array| {
                        grad(
                            |x: Array| {
                                jnp::multiply(
                                    jnp::tanh(jnp::add(jnp::multiply(&x, &x)?, 1.0)?)?,
                                    3.0,
                                )
                            },
                            &x,
                        )
                    },
                    &x,
                )
            },
            &x,
        ),
        "stop_gradient" => make_jaxpr(
            |x: Array| {
                grad(
                    |x: Array| sum(&jnp::add(jnp::multiply(&x, stop_gradient(&x)?)?, &x)?),
                    &x,
                )
            },
            &x,
        ),
        "softplus_jit" => {
            let sp = softplus();
            make_jaxpr(
                |x: Array| jit(|x: Array| sp.call(&x)).named("softplus").call(&x),
                &x,
            )
        }
        "clip_jit" => make_jaxpr(
            |x: Array| {
                jit(|x: Array| clip_gradient(1.0).call(&jnp::multiply(&x, 3.0)?))
                    .named("<lambda>")
                    .call(&x)
            },
            &x,
        ),
        "prng_jit" => make_jaxpr(
            |(k, x): (Array, Array)| {
                jit(|(k, x): (Array, Array)| noisy(&k, &x))
                    .named("_noisy")
                    .call(&(k, x))
            },
            &(x, args[1].a()),
        ),
        "prng_jit_split" => make_jaxpr(
            |k: Array| {
                jit(|k: Array| {
                    let ks = random::split(&k, 3)?;
                    let k1 = jnp::index(&ks, &[Index::At(1)])?;
                    random::uniform(&k1, &[4], DType::Float32, 0.0, 1.0)
                })
                .named("<lambda>")
                .call(&k)
            },
            &x,
        ),
        other => panic!("no staged form of {other}"),
    }
}

fn argument(spec: &Value, i: usize) -> Arg {
    let s = spec.as_array().unwrap();
    match s[0].as_str().unwrap() {
        "params" => {
            let i = s[1].as_u64().unwrap() as usize;
            let f32 = |shape: &[usize], j: usize| common::pattern(DType::Float32, shape, j);
            Arg::Params(BTreeMap::from([
                ("w1".to_string(), f32(&[3, 4], i)),
                ("b1".to_string(), f32(&[4], i + 1)),
                ("w2".to_string(), f32(&[4, 2], i + 2)),
            ]))
        }
        _ => Arg::A(common::argument(spec, i)),
    }
}

/// The equations of a jaxpr with every `jit` equation replaced by its own (JAX wraps some
/// `jax.numpy` and `jax.random` helpers in jits of their own): (primitive, output avals).
fn inlined(j: &dtype_lattice_array::core::Jaxpr) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for e in j.eqns() {
        if e.primitive().name == "jit"
            && let Some(core::Param::Jaxpr(inner)) = e.params().get("jaxpr")
        {
            out.extend(inlined(inner.jaxpr()));
            continue;
        }
        out.push((
            e.primitive().name.to_string(),
            e.outputs().iter().map(|v| v.aval().to_string()).collect(),
        ));
    }
    out
}

/// The fixture's equations (inlined by the generator likewise).
fn recorded(eqns: &Value) -> Vec<(String, Vec<String>)> {
    eqns.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["primitive"].as_str().unwrap().to_string(),
                e["outputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn compositions_agree_with_jax() {
    let fixture = fixture("compositions.json");
    let cases = fixture["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 37);
    let (mut leaves, mut jaxprs) = (0, 0);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let f = case(name).unwrap_or_else(|| panic!("{name} is not in the Rust cases"));
        let args: Vec<Arg> = c["args"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, s)| argument(s, i))
            .collect();
        let got = f(&args).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = c["outputs"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{name}: leaves");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            // XLA's contraction of products into additions, and integers, bit for bit
            // (serde_json parses decimals to within an ulp of float64, far below float16's
            // and float32's).
            let tol = match g.dtype() {
                _ if name.starts_with("contractions") => 1e-12,
                DType::BFloat16 | DType::Float16 => 1e-2,
                d if d.kind() != dtype_lattice::Kind::Float => 0.0,
                _ => 2e-5,
            };
            common::close(name, &format!("leaf {i}"), g, w, tol);
            leaves += 1;
        }
        if let Some(text) = c.get("jaxpr").and_then(Value::as_str) {
            let j = staged(name, &args).unwrap_or_else(|e| panic!("{name} staged: {e}"));
            assert_eq!(
                inlined(j.jaxpr()),
                recorded(&c["eqns"]),
                "{name}: equations\nours:\n{j}\nJAX's:\n{text}"
            );
            jaxprs += 1;
        }
    }
    assert_eq!((leaves, jaxprs), (81, 6));
}
