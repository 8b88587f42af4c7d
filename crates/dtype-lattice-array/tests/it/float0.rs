//! JAX's `float0` tangents against JAX 0.10: the `FLOAT0` corpus of
//! tools/gen_transform_fixtures.py (tests/fixtures/transformations/float0.json), each case
//! written here a second time under the same name — jvp, linearize, vjp, grad with
//! `allow_int`, vmap and jit over integer, bool and key inputs and outputs, custom_jvp and
//! custom_vjp with integer arguments, the jaxprs, the errors with their exact messages, the
//! promotion of `float0` and the reprs of `float0` arrays — and the laws: an integer
//! function's tangent is `float0` whatever the function, jvp and vjp agree leaf by leaf.

use crate::transform_common as common;

use common::{dtype, fixture, shape_of};
use dtype_lattice::{DType, Error, Operand, Rules, Value as V};
use dtype_lattice_array::core::{self, Param, Params};
use dtype_lattice_array::numpy::{self as jnp, Axes};
use dtype_lattice_array::registry;
use dtype_lattice_array::repr::{Scalar, numpy_repr};
use dtype_lattice_array::{Array, random};
use dtype_lattice_array::{
    CustomJvp, CustomVjp, Grad, grad, jit, jvp, linearize, make_jaxpr, vjp, vmap,
};
use proptest::prelude::*;
use serde_json::Value;

type Case = fn(&[Array]) -> Result<Vec<Array>, Error>;

fn lax(name: &str, args: &[&Array], params: Params) -> Result<Array, Error> {
    let p = registry::by_name(name).expect("a primitive");
    Ok(core::bind(p, args, &params)?.remove(0))
}

fn inexact(x: &Array) -> bool {
    matches!(
        x.dtype().kind(),
        dtype_lattice::Kind::Float | dtype_lattice::Kind::Complex
    )
}

/// Ones of `x`'s shape and dtype, or float0 zeros for an integer, bool or key `x` (the
/// generator's tangents and cotangents).
fn ones_or_float0(x: &Array) -> Result<Array, Error> {
    if inexact(x) {
        jnp::ones(x.shape(), x.dtype())
    } else {
        jnp::zeros(x.shape(), DType::Float0)
    }
}

fn f0(shape: &[usize]) -> Array {
    jnp::zeros(shape, DType::Float0).unwrap()
}

/// The generator's `_jvp_ones`: the primal output leaves, then the tangent leaves.
fn jvp_ones(
    f: impl FnOnce(Vec<Array>) -> Result<Vec<Array>, Error>,
    args: &[Array],
) -> Result<Vec<Array>, Error> {
    let ts = args
        .iter()
        .map(ones_or_float0)
        .collect::<Result<Vec<_>, _>>()?;
    let (mut p, t) = jvp(f, &args.to_vec(), &ts)?;
    p.extend(t);
    Ok(p)
}

/// The generator's `_linearized`: the primal outputs, then `f_jvp` of ones (float0 zeros).
fn linearized(
    f: impl FnOnce(Vec<Array>) -> Result<Vec<Array>, Error>,
    args: &[Array],
) -> Result<Vec<Array>, Error> {
    let lin = linearize(f, &args.to_vec())?;
    let ts = args
        .iter()
        .map(ones_or_float0)
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = lin.primal().clone();
    out.extend(lin.jvp_leaves(&ts)?);
    Ok(out)
}

/// The generator's `_vjp_ones`: the outputs, then the cotangents of ones (float0 zeros).
fn vjp_ones(
    f: impl FnOnce(Vec<Array>) -> Result<Vec<Array>, Error>,
    args: &[Array],
) -> Result<Vec<Array>, Error> {
    let args = args.to_vec();
    let (y, pullback) = vjp(f, &args)?;
    let cts = y
        .iter()
        .map(ones_or_float0)
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = y;
    out.extend(pullback(&cts)?);
    Ok(out)
}

fn pair(x: Result<(Array, Array), Error>) -> Result<Vec<Array>, Error> {
    let (a, b) = x?;
    Ok(vec![a, b])
}

fn times(x: &Array, n: &Array) -> Result<Array, Error> {
    jnp::multiply(x, n)
}

fn sum(x: Result<Array, Error>) -> Result<Array, Error> {
    jnp::sum(x?, Axes::All, false)
}

/// The generator's `_cj`: `x * n` with a custom JVP rule of `tx * n * 10`, whose `n` tangent
/// must be float0.
fn cj() -> CustomJvp<(Array, Array), Array> {
    CustomJvp::new(
        |(x, n): (Array, Array)| times(&x, &n),
        |(x, n): (Array, Array), (tx, tn): (Array, Array)| {
            assert_eq!(tn.dtype(), DType::Float0, "the rule's int tangent");
            Ok((times(&x, &n)?, jnp::multiply(times(&tx, &n)?, 10.0)?))
        },
    )
}

/// The generator's `_cv`: `x * n` with a backward pass of `g * n * 10` (and anything for
/// `n`: its cotangent is float0 zeros).
fn cv() -> CustomVjp<(Array, Array), Array, (Array, Array)> {
    CustomVjp::new(
        |(x, n): (Array, Array)| times(&x, &n),
        |(x, n): (Array, Array)| Ok((times(&x, &n)?, (x, n))),
        |(_, n): (Array, Array), g: Array| Ok((jnp::multiply(times(&g, &n)?, 10.0)?, n)),
    )
}

/// The generator's `_cv_int_out`: `(x * 2, int32(x * 3))`, whose backward pass receives a
/// float0 cotangent for the integer output.
fn cv_int_out() -> CustomVjp<Array, (Array, Array), ()> {
    let f = |x: Array| -> Result<(Array, Array), Error> {
        Ok((
            jnp::multiply(&x, 2.0)?,
            jnp::multiply(&x, 3.0)?.astype(DType::Int32)?,
        ))
    };
    CustomVjp::new(
        f,
        move |x: Array| Ok((f(x)?, ())),
        |_: (), (gf, gi): (Array, Array)| {
            assert_eq!(gi.dtype(), DType::Float0, "bwd's int cotangent");
            jnp::multiply(&gf, 5.0)
        },
    )
}

fn grad_int(
    f: fn((Array, Array)) -> Result<Array, Error>,
    a: &[Array],
) -> Result<Vec<Array>, Error> {
    pair(
        Grad::new()
            .allow_int(true)
            .grad(f, &(a[0].clone(), a[1].clone())),
    )
}

/// The corpus by name (the generator's `FLOAT0`).
fn corpus(name: &str) -> Option<Case> {
    Some(match name {
        "jvp_int_mul" | "jvp_int_scalar" => |a| jvp_ones(|a| Ok(vec![jnp::multiply(&a[0], 2)?]), a),
        "jvp_float_to_int" => |a| {
            jvp_ones(
                |a| Ok(vec![jnp::multiply(&a[0], 2)?.astype(DType::Int32)?]),
                a,
            )
        },
        "jvp_float_to_bool" => |a| jvp_ones(|a| Ok(vec![jnp::greater(&a[0], 0)?]), a),
        "jvp_int_to_float" => |a| {
            jvp_ones(
                |a| Ok(vec![jnp::multiply(a[0].astype(DType::Float32)?, 2)?]),
                a,
            )
        },
        "jvp_mixed" => |a| jvp_ones(|a| Ok(vec![times(&a[0], &a[1])?, jnp::add(&a[1], 1)?]), a),
        "jvp_power_int_exponent" => |a| jvp_ones(|a| Ok(vec![jnp::power(&a[0], &a[1])?]), a),
        "jvp_bool_where" => |a| {
            jvp_ones(
                |a| Ok(vec![jnp::r#where(&a[0], &a[1], jnp::negative(&a[1])?)?]),
                a,
            )
        },
        "jvp_uint8" => |a| jvp_ones(Ok, a),
        "jvp_key" => |a| jvp_ones(|a| Ok(vec![random::key_data(&a[0])?]), a),
        "linearize_mixed" => |a| linearized(|a| Ok(vec![times(&a[0], &a[1])?]), a),
        "linearize_int_out" => |a| {
            linearized(
                |a| {
                    let y = jnp::multiply(&a[0], 2)?;
                    Ok(vec![y.clone(), y.astype(DType::Int32)?])
                },
                a,
            )
        },
        "vjp_mixed" => |a| vjp_ones(|a| Ok(vec![times(&a[0], &a[1])?]), a),
        "vjp_int_out" => |a| {
            vjp_ones(
                |a| {
                    Ok(vec![
                        jnp::multiply(&a[0], 2)?,
                        jnp::multiply(&a[0], 3)?.astype(DType::Int32)?,
                    ])
                },
                a,
            )
        },
        "vjp_int_to_int" => |a| vjp_ones(|a| Ok(vec![jnp::multiply(&a[0], 2)?]), a),
        "grad_allow_int" | "jit_grad_allow_int" => |a| {
            let g = |(x, n): (Array, Array)| sum(times(&x, &n));
            if a[0].size() == 3 && a.len() == 2 {
                // The jitted twin runs the same gradient through jit.
                let j =
                    jit(move |(x, n): (Array, Array)| Grad::new().allow_int(true).grad(g, &(x, n)));
                let direct = grad_int(g, a)?;
                let (gx, gn): (Array, Array) = j.call(&(a[0].clone(), a[1].clone()))?;
                assert_eq!(direct[0].as_bytes(), gx.as_bytes());
                assert_eq!(
                    (direct[1].dtype(), gn.dtype()),
                    (DType::Float0, DType::Float0)
                );
                return Ok(vec![gx, gn]);
            }
            grad_int(g, a)
        },
        "grad_allow_int_only" => |a| {
            let g = Grad::new().allow_int(true).grad(
                |n: Array| sum(jnp::multiply(n.astype(DType::Float32)?, 2.0)),
                &a[0],
            )?;
            Ok(vec![g])
        },
        "value_and_grad_allow_bool" => |a| {
            let (v, (gb, gx)) = Grad::new().allow_int(true).value_and_grad(
                |(b, x): (Array, Array)| sum(jnp::r#where(&b, &x, 0.0)),
                &(a[0].clone(), a[1].clone()),
            )?;
            Ok(vec![v, gb, gx])
        },
        "grad_allow_int_key" => |a| {
            grad_int(
                |(k, x): (Array, Array)| {
                    sum(jnp::multiply(random::normal(&k, &[3], DType::Float32)?, &x))
                },
                a,
            )
        },
        "vmap_grad_allow_int" => |a| {
            pair(
                vmap(|(x, n): (Array, Array)| {
                    Grad::new()
                        .allow_int(true)
                        .grad(|(x, n): (Array, Array)| times(&x, &n), &(x, n))
                })
                .call(&(a[0].clone(), a[1].clone())),
            )
        },
        "vmap_jvp_int" => |a| {
            pair(
                vmap(|n: Array| {
                    let t = f0(n.shape());
                    jvp(|n: Array| jnp::multiply(&n, 2), &n, &t)
                })
                .call(&a[0]),
            )
        },
        "vmap_jvp_out_axis1" => |a| {
            let t: Array = vmap(|n: Array| {
                let t = f0(n.shape());
                jvp(|n: Array| jnp::multiply(&n, 2), &n, &t).map(|(_, t)| t)
            })
            .out_axes(1)
            .call(&a[0])?;
            Ok(vec![t])
        },
        "jvp_vmap_int" => |a| {
            jvp_ones(
                |a| {
                    let y: Array = vmap(|n: Array| jnp::multiply(&n, 2)).call(&a[0])?;
                    Ok(vec![y])
                },
                a,
            )
        },
        "jit_jvp_int" => |a| {
            let j = jit(|a: Vec<Array>| {
                jvp_ones(
                    |a| Ok(vec![times(&a[0], &a[1])?, jnp::multiply(&a[1], 2)?]),
                    &a,
                )
            });
            j.call(&a.to_vec())
        },
        "custom_jvp_int_arg" => |a| {
            let f = cj();
            jvp_ones(move |a| Ok(vec![f.call(&(a[0].clone(), a[1].clone()))?]), a)
        },
        "custom_jvp_int_arg_grad" => |a| {
            let f = cj();
            pair(Grad::new().allow_int(true).grad(
                |xn: (Array, Array)| sum(f.call(&xn)),
                &(a[0].clone(), a[1].clone()),
            ))
        },
        "custom_vjp_int_arg_grad" => |a| {
            let f = cv();
            pair(Grad::new().allow_int(true).grad(
                |xn: (Array, Array)| sum(f.call(&xn)),
                &(a[0].clone(), a[1].clone()),
            ))
        },
        "custom_vjp_int_out" => |a| {
            let f = cv_int_out();
            vjp_ones(
                move |a| {
                    let (y, n) = f.call(&a[0])?;
                    Ok(vec![y, n])
                },
                a,
            )
        },
        _ => return None,
    })
}

/// The jaxprs by name (the generator's `FLOAT0_JAXPRS`).
fn jaxpr_of(name: &str, a: &[Array]) -> Option<Result<String, Error>> {
    let text = |j: Result<dtype_lattice_array::core::ClosedJaxpr, Error>| j.map(|j| j.to_string());
    Some(match name {
        "jaxpr_jvp_int_scalar" | "jaxpr_jvp_int" => {
            // The tangent is a NumPy constant in JAX: made outside the trace.
            let t = f0(a[0].shape());
            text(make_jaxpr(
                |n: Array| jvp(|n: Array| jnp::multiply(&n, 2), &n, &t),
                &a[0],
            ))
        }
        "jaxpr_jvp_float_to_int" => text(make_jaxpr(
            |x: Array| {
                let t = jnp::ones(x.shape(), x.dtype())?;
                jvp(
                    |z: Array| jnp::multiply(&z, 2)?.astype(DType::Int32),
                    &x,
                    &t,
                )
            },
            &a[0],
        )),
        "jaxpr_grad_allow_int" => text(make_jaxpr(
            |n: Array| {
                Grad::new()
                    .allow_int(true)
                    .grad(|n: Array| sum(jnp::multiply(&n, 2.0)), &n)
            },
            &a[0],
        )),
        "jaxpr_vmap_grad_allow_int" => text(make_jaxpr(
            |xn: (Array, Array)| {
                vmap(|(x, n): (Array, Array)| {
                    Grad::new()
                        .allow_int(true)
                        .grad(|(x, n): (Array, Array)| times(&x, &n), &(x, n))
                })
                .call(&xn)
                .map(|(a, b): (Array, Array)| (a, b))
            },
            &(a[0].clone(), a[1].clone()),
        )),
        "jaxpr_float0_arg" => text(make_jaxpr(
            |t: Array| {
                lax(
                    "broadcast_in_dim",
                    &[&t],
                    Params::new()
                        .with("shape", Param::Ints(vec![2, 3]))
                        .with("broadcast_dimensions", Param::Ints(vec![1]))
                        .with("sharding", Param::None),
                )
            },
            &a[0],
        )),
        "jaxpr_float0_convert" => text(make_jaxpr(|t: Array| t.astype(DType::Float32), &a[0])),
        "jaxpr_power_int_exponent" => text(make_jaxpr(
            |xn: (Array, Array)| jnp::power(&xn.0, &xn.1),
            &(a[0].clone(), a[1].clone()),
        )),
        "jaxpr_jvp_power_int_exponent" => {
            let tn = f0(a[1].shape());
            text(make_jaxpr(
                |(x, n): (Array, Array)| {
                    let tx = jnp::ones(x.shape(), x.dtype())?;
                    jvp(
                        |(x, n): (Array, Array)| jnp::power(&x, &n),
                        &(x, n),
                        &(tx, tn.clone()),
                    )
                },
                &(a[0].clone(), a[1].clone()),
            ))
        }
        _ => return None,
    })
}

/// The refusals by name (the generator's `FLOAT0_ERRORS`).
fn error_of(name: &str, a: &[Array]) -> Option<Error> {
    let int_f = |n: Array| jnp::multiply(&n, 2);
    let err = |r: Result<Vec<Array>, Error>| match r {
        Ok(v) => panic!("{name} did not fail: {v:?}"),
        Err(e) => e,
    };
    let x = a[0].clone();
    let shape = x.shape().to_vec();
    Some(err(match name {
        "jvp_int_tangent_int" => jvp(int_f, &x, &x).map(|(p, _)| vec![p]),
        "jvp_int_tangent_float" => {
            jvp(int_f, &x, &jnp::ones(&shape, DType::Float32).unwrap()).map(|(p, _)| vec![p])
        }
        "jvp_float_tangent_float0" => {
            jvp(|x: Array| jnp::multiply(&x, 2), &x, &f0(&shape)).map(|(p, _)| vec![p])
        }
        "jvp_float_tangent_f16" => jvp(
            |x: Array| jnp::multiply(&x, 2),
            &x,
            &x.astype(DType::Float16).unwrap(),
        )
        .map(|(p, _)| vec![p]),
        "jvp_bool_tangent_bool" => jvp(Ok, &x, &x).map(|(p, _)| vec![p]),
        "jvp_int_shape" => jvp(Ok, &x, &f0(&[2])).map(|(p, _)| vec![p]),
        "jvp_float_shape" => {
            jvp(Ok, &x, &jnp::ones(&[2], DType::Float32).unwrap()).map(|(p, _)| vec![p])
        }
        "grad_int" => grad(|n: Array| sum(jnp::multiply(&n, 2.0)), &x).map(|g| vec![g]),
        "grad_bool" => grad(|b: Array| sum(jnp::r#where(&b, 1.0, 0.0)), &x).map(|g| vec![g]),
        "grad_uint8_in_pytree" => pair(grad(
            |(x, n): (Array, Array)| sum(times(&x, &n)),
            &(x.clone(), a[1].clone()),
        )),
        "grad_key" => grad(|_: Array| Ok(Array::scalar(1.0f32)), &x).map(|g| vec![g]),
        "grad_float0_input" => Grad::new()
            .allow_int(true)
            .grad(|_: Array| Ok(Array::scalar(1.0f32)), &x)
            .map(|g| vec![g]),
        "grad_int_output" => Grad::new()
            .allow_int(true)
            .grad(|n: Array| sum(jnp::multiply(&n, 2)), &x)
            .map(|g| vec![g]),
        "grad_bool_output" => grad(|x: Array| jnp::greater(sum(Ok(x))?, 0), &x).map(|g| vec![g]),
        "grad_complex_output" => {
            grad(|x: Array| sum(x.astype(DType::Complex64)), &x).map(|g| vec![g])
        }
        "grad_not_scalar" => grad(|x: Array| jnp::multiply(&x, 2), &x).map(|g| vec![g]),
        "linearize_int_tangent_int" => linearize(int_f, &x)
            .and_then(|l| l.jvp_leaves(&[jnp::ones(&shape, DType::Int32).unwrap()])),
        "linearize_float_tangent_float0" => {
            linearize(|x: Array| jnp::multiply(&x, 2), &x).and_then(|l| l.jvp_leaves(&[f0(&shape)]))
        }
        "linearize_weak_tangent_shape" => linearize(|x: Array| jnp::multiply(&x, 2), &x)
            .and_then(|l| l.jvp_leaves(&[jnp::ones(&[2], DType::Float32).unwrap()])),
        "vjp_ct_shape" => vjp(
            |x: Array| {
                Ok((
                    jnp::multiply(&x, 2)?,
                    jnp::multiply(&x, 3)?.astype(DType::Int32)?,
                ))
            },
            &x,
        )
        .and_then(|(_, pb)| pb(&(jnp::ones(&[2], DType::Float32)?, f0(&[3]))))
        .map(|g| vec![g]),
        "vjp_ct_dtype" => vjp(|x: Array| jnp::multiply(&x, 2), &x)
            .and_then(|(_, pb)| pb(&jnp::ones(&[3], DType::Float16)?))
            .map(|g| vec![g]),
        "custom_jvp_int_tangent_for_int_out" => {
            let f = CustomJvp::new(
                |x: Array| jnp::multiply(&x, 2)?.astype(DType::Int32),
                |x: Array, _t: Array| {
                    let y = jnp::multiply(&x, 2)?.astype(DType::Int32)?;
                    let t = jnp::zeros(x.shape(), DType::Int32)?;
                    Ok((y, t))
                },
            );
            jvp(
                |x: Array| f.call(&x),
                &x,
                &jnp::ones(&shape, DType::Float32).unwrap(),
            )
            .map(|(p, _)| vec![p])
        }
        "custom_jvp_float0_tangent_for_float_out" => {
            let f = CustomJvp::new(
                |x: Array| jnp::multiply(&x, 2),
                |x: Array, _t: Array| Ok((jnp::multiply(&x, 2)?, f0(x.shape()))),
            );
            jvp(
                |x: Array| f.call(&x),
                &x,
                &jnp::ones(&shape, DType::Float32).unwrap(),
            )
            .map(|(p, _)| vec![p])
        }
        "custom_vjp_bwd_shape" => {
            let f: CustomVjp<(Array, Array), Array, ()> = CustomVjp::new(
                |(x, n): (Array, Array)| times(&x, &n),
                |(x, n): (Array, Array)| Ok((times(&x, &n)?, ())),
                |_: (), _g: Array| Ok((jnp::ones(&[2], DType::Float32)?, Array::scalar(0i32))),
            );
            let n = a[1].clone();
            grad(|x: Array| f.call(&(x, n)), &x).map(|g| vec![g])
        }
        "jnp_add_float0" => jnp::add(&x, &x).map(|y| vec![y]),
        "jnp_multiply_float0_float" => jnp::multiply(&x, 2.0).map(|y| vec![y]),
        "lax_add_float0" => lax("add", &[&x, &x], Params::new()).map(|y| vec![y]),
        "lax_mul_float_float0" => {
            let z = jnp::zeros(&[3], DType::Float32).unwrap();
            lax("mul", &[&z, &x], Params::new()).map(|y| vec![y])
        }
        "lax_neg_float0" => lax("neg", &[&x], Params::new()).map(|y| vec![y]),
        "lax_reduce_sum_float0" | "lax_reduce_max_float0" => {
            let p = Params::new()
                .with("axes", Param::Ints(vec![0]))
                .with("out_sharding", Param::None);
            let prim = if name.contains("sum") {
                "reduce_sum"
            } else {
                "reduce_max"
            };
            lax(prim, &[&x], p).map(|y| vec![y])
        }
        "lax_cumsum_float0" => lax(
            "cumsum",
            &[&x],
            Params::new()
                .with("axis", Param::Int(0))
                .with("reverse", Param::Bool(false)),
        )
        .map(|y| vec![y]),
        "lax_bitcast_float0" => lax(
            "bitcast_convert_type",
            &[&x],
            Params::new().with("new_dtype", Param::DType(DType::Float32)),
        )
        .map(|y| vec![y]),
        "convert_key_to_float0" => x.astype(DType::Float0).map(|y| vec![y]),
        _ => return None,
    }))
}

/// One output leaf against JAX's: dtype, shape, values (none for float0) and repr.
fn check(name: &str, what: &str, got: &Array, want: &Value) {
    if let Some(data) = want.get("key_data") {
        let d = random::key_data(got).unwrap();
        return check(name, &format!("{what} key_data"), &d, data);
    }
    if common::is_float0(name, what, got, want) {
        assert_eq!(
            got.to_vec::<()>().unwrap().len(),
            got.size(),
            "{name} {what}"
        );
    } else {
        let tol = if got.dtype().kind() == dtype_lattice::Kind::Float {
            1e-6
        } else {
            1e-12
        };
        common::close(name, what, got, want, tol);
    }
    // Every leaf prints as JAX printed it (float0 ones as its TypedNdArray).
    let repr = want["repr"].as_str().unwrap();
    if got.dtype().is_float0() || !got.weak_type() {
        assert_eq!(got.to_string(), repr, "{name} {what}");
    }
}

fn expect_error(name: &str, got: &Error, want: &Value) {
    assert_eq!(
        got.to_string(),
        format!(
            "{}: {}",
            want["exception"].as_str().unwrap(),
            want["message"].as_str().unwrap()
        ),
        "{name}"
    );
}

#[test]
fn the_float0_corpus_agrees_with_jax() {
    let fixture = fixture("float0.json");
    let cases = fixture["cases"].as_array().unwrap();
    let (mut values, mut jaxprs, mut errors, mut promotions, mut reprs) = (0, 0, 0, 0, 0);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let args: Vec<Array> = case
            .get("args")
            .and_then(Value::as_array)
            .map(|specs| {
                specs
                    .iter()
                    .enumerate()
                    .map(|(i, s)| common::argument(s, i))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(want) = case.get("outputs") {
            let f = corpus(name).unwrap_or_else(|| panic!("{name} is not in the Rust corpus"));
            let outs = f(&args).unwrap_or_else(|e| panic!("{name}: {e}"));
            let want = want.as_array().unwrap();
            assert_eq!(outs.len(), want.len(), "{name}");
            for (i, (o, w)) in outs.iter().zip(want).enumerate() {
                check(name, &format!("output {i}"), o, w);
            }
            values += 1;
        } else if let Some(want) = case.get("jaxpr") {
            let got = jaxpr_of(name, &args)
                .unwrap_or_else(|| panic!("{name} is not in the Rust corpus"))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            // Character for character as JAX prints it.
            assert_eq!(got, want.as_str().unwrap(), "{name}");
            jaxprs += 1;
        } else if let Some(want) = case.get("error") {
            let got =
                error_of(name, &args).unwrap_or_else(|| panic!("{name} is not in the Rust corpus"));
            expect_error(name, &got, want);
            errors += 1;
        } else if let Some(want) = case.get("promotion") {
            let got = promotion(name);
            match (got, want.get("dtype"), want.get("error")) {
                (Ok(d), Some(w), None) => assert_eq!(d.numpy_str(), w.as_str().unwrap(), "{name}"),
                (Err(e), None, Some(w)) => expect_error(name, &e, w),
                (got, ..) => panic!("{name}: {got:?} vs {want}"),
            }
            promotions += 1;
        } else if let Some(want) = case.get("repr") {
            let shape = shape_of(&case["shape"]);
            let z = jnp::zeros(&shape, DType::Float0).unwrap();
            assert_eq!(z.to_string(), want.as_str().unwrap(), "{name}");
            assert_eq!(
                numpy_repr(DType::Float0, &shape, &|_| Scalar::Float0),
                case["numpy_repr"].as_str().unwrap(),
                "{name}"
            );
            reprs += 1;
        } else {
            panic!("{name}: unknown case");
        }
    }
    assert_eq!(
        (values, jaxprs, errors, promotions, reprs),
        (29, 9, 34, 8, 8)
    );
}

/// `jnp.promote_types` / `jnp.result_type` of the generator's `FLOAT0_DTYPES`, by label.
fn promotion(label: &str) -> Result<DType, Error> {
    let words: Vec<&str> = label.split(' ').collect();
    let rules = Rules::jax();
    match words.as_slice() {
        ["promote_types", a, b] => rules.promote_types(dtype(a), dtype(b)),
        ["result_type", ops @ ..] => {
            let operands: Vec<Operand> = ops
                .iter()
                .map(|o| match *o {
                    "1.0" => Operand::Literal(V::Float(1.0)),
                    d => Operand::array(dtype(d)),
                })
                .collect();
            rules.result_type(&operands).map(|p| p.dtype)
        }
        _ => panic!("unknown promotion case {label}"),
    }
}

fn int_dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(vec![
        DType::Bool,
        DType::Int8,
        DType::UInt8,
        DType::Int16,
        DType::Int32,
        DType::UInt32,
        DType::Int4,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The JVP of a function of integers is float0, whatever the function: the primal is
    /// the function's value, the tangent float0 zeros of its shape.
    #[test]
    fn the_jvp_of_an_integer_function_is_float0(
        d in int_dtype(),
        n in 0usize..5,
        which in 0usize..4,
    ) {
        let x = Array::from_vec((0..n as i64).collect::<Vec<_>>()).astype(d).unwrap();
        let f = move |x: Array| -> Result<Array, Error> {
            match which {
                0 => Ok(x),
                1 => jnp::add(&x, &x),
                2 => jnp::multiply(&x, 3),
                _ => jnp::reshape(jnp::concatenate(&[(&x).into(), (&x).into()], 0)?, &[-1]),
            }
        };
        let want = f(x.clone());
        let (y, t) = jvp(f, &x, &f0(&[n])).unwrap();
        match want {
            Ok(w) => prop_assert_eq!(y.as_bytes(), w.as_bytes()),
            Err(_) => prop_assert!(false),
        }
        prop_assert_eq!(t.dtype(), DType::Float0);
        prop_assert_eq!(t.shape(), y.shape());
        // jvp under jit: the same.
        let (_, tj): (Array, Array) = jit(move |x: Array| jvp(f, &x, &f0(&[n]))).call(&x).unwrap();
        prop_assert_eq!(tj.dtype(), DType::Float0);
    }

    /// vjp and jvp agree leaf by leaf on mixed float/int pytrees: ⟨ct, J t⟩ = ⟨Jᵀ ct, t⟩
    /// over the float leaves; every integer leaf's tangent and cotangent is float0.
    #[test]
    fn vjp_and_jvp_agree_with_float0_leaves(
        xs in prop::collection::vec(-2.0f32..2.0, 3),
        ns in prop::collection::vec(-3i32..3, 3),
        ts in prop::collection::vec(-1.0f32..1.0, 3),
    ) {
        let x = Array::from_vec(xs);
        let n = Array::from_vec(ns);
        let f = |(x, n): (Array, Array)| -> Result<(Array, Array), Error> {
            Ok((jnp::multiply(jnp::sin(&x)?, &n)?, jnp::add(&n, 1)?))
        };
        let t = Array::from_vec(ts);
        let ((_, _), (jt, jn)) = jvp(f, &(x.clone(), n.clone()), &(t.clone(), f0(&[3]))).unwrap();
        prop_assert_eq!(jn.dtype(), DType::Float0);
        let xn = (x, n);
        let (_, pullback) = vjp(f, &xn).unwrap();
        let ct = jnp::ones(&[3], DType::Float32).unwrap();
        let (cx, cn) = pullback(&(ct.clone(), f0(&[3]))).unwrap();
        prop_assert_eq!(cn.dtype(), DType::Float0);
        let dot = |a: &Array, b: &Array| -> f32 {
            a.to_vec::<f32>().unwrap().iter().zip(b.to_vec::<f32>().unwrap()).map(|(p, q)| p * q).sum()
        };
        let (lhs, rhs) = (dot(&ct, &jt), dot(&cx, &t));
        prop_assert!((lhs - rhs).abs() <= 1e-4 * lhs.abs().max(1.0), "{} vs {}", lhs, rhs);
    }
}

/// float0 arrays take no bytes and compute nothing: the structural primitives move them,
/// conversion makes zeros, everything else refuses; a float0 value under every
/// transformation stays one.
#[test]
fn float0_arrays_hold_nothing_and_move_freely() {
    let t = f0(&[2, 3]);
    assert_eq!((t.as_bytes().len(), t.size()), (0, 6));
    assert_eq!(t.as_slice::<()>().unwrap().len(), 6);
    assert_eq!(t.element(0), Some(Scalar::Float0));
    let moved = jnp::transpose(&t, None).unwrap();
    assert_eq!(
        (moved.dtype(), moved.shape()),
        (DType::Float0, &[3usize, 2][..])
    );
    let both = jnp::concatenate(&[(&t).into(), (&t).into()], 0).unwrap();
    assert_eq!(both.shape(), [4, 3]);
    let picked = jnp::r#where(Array::scalar(true), &t, &t).unwrap();
    assert_eq!(picked.dtype(), DType::Float0);
    assert_eq!(
        t.astype(DType::Int32).unwrap().to_vec::<i32>().unwrap(),
        [0; 6]
    );
    // No arithmetic, and no numbers as float0 (NumPy's TypeError).
    assert!(jnp::sin(&t).is_err());
    let e = jnp::array(&[V::Int(1)], &[1], DType::Float0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "TypeError: a bytes-like object is required, not 'int'"
    );
    assert_eq!(
        jnp::array(&[], &[0, 2], DType::Float0).unwrap().shape(),
        [0, 2]
    );
    // jit of the identity on float0, and vmap over a float0 batch.
    let j: Array = jit(Ok).call(&t).unwrap();
    assert_eq!((j.dtype(), j.shape()), (DType::Float0, &[2usize, 3][..]));
    let v: Array = vmap(Ok).in_axes(1).call(&t).unwrap();
    assert_eq!(v.shape(), [3, 2]);
    // Large enough for jit's fused chunks: float0 calls run whole, conversions give zeros.
    let big = f0(&[1 << 16]);
    let chain = jit(|t: Array| {
        let picked = jnp::r#where(Array::scalar(true), &t, &t)?;
        jnp::add(picked.astype(DType::Float32)?, 1.0)
    });
    let y: Array = chain.call(&big).unwrap();
    assert!(y.to_vec::<f32>().unwrap().iter().all(|&v| v == 1.0));
    // Every dtype's tangent dtype: itself for the inexact ones, float0 for the rest.
    for &d in DType::ALL {
        let inexact = matches!(
            d.kind(),
            dtype_lattice::Kind::Float | dtype_lattice::Kind::Complex
        );
        let want = if inexact { d } else { DType::Float0 };
        assert_eq!(d.tangent_dtype(), want, "{d}");
    }
}
