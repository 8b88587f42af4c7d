//! The primitives' JVP rules (JAX's `ad.defjvp`, `ad.deflinear` and friends), referenced from
//! each primitive's definition. A rule gets the primals and the tangents (`None`: a symbolic
//! zero), runs in the parent of the JVP trace, and returns the primal outputs and their
//! tangents; every operation in it is a bound primitive, so rules compose with staging.

use dtype_lattice::error::Exception;
use dtype_lattice::{Error, Kind};

use super::elementwise::Op;
use super::lax::{self, konst};
use super::{Outputs, Param, Params, Primitive, bind};
use crate::array::Array;

/// A JVP rule: `(primals, tangents, params) -> (primal outputs, output tangents)`.
pub type JvpRule = fn(
    &'static Primitive,
    &[Array],
    &[Option<Array>],
    &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error>;

fn primal_out(
    prim: &'static Primitive,
    primals: &[Array],
    params: &Params,
) -> Result<Outputs, Error> {
    let refs: Vec<&Array> = primals.iter().collect();
    bind(prim, &refs, params)
}

/// `t` summed with `u` (either may be zero).
fn plus(t: Option<Array>, u: Option<Array>) -> Result<Option<Array>, Error> {
    Ok(match (t, u) {
        (Some(a), Some(b)) => Some(lax::add_any(&a, &b)?),
        (a, None) => a,
        (None, b) => b,
    })
}

/// A tangent of `out`'s shape (a 0-d operand's tangent broadcast, as lax broadcasts it).
fn fit(t: Option<Array>, out: &Array) -> Result<Option<Array>, Error> {
    t.map(|t| {
        let t = lax::broadcast_to(&t, out.shape())?;
        lax::convert_like(&t, out)
    })
    .transpose()
}

fn scale(
    t: &Option<Array>,
    by: impl FnOnce() -> Result<Array, Error>,
) -> Result<Option<Array>, Error> {
    t.as_ref().map(|t| lax::mul(t, &by()?)).transpose()
}

fn not_differentiable(prim: &Primitive) -> Error {
    Error::refused(
        Exception::NotImplementedError,
        format!("Differentiation rule for '{}' not implemented", prim.name),
    )
}

/// `mul(g, _balanced_eq(x, z, y))`: 1 where `x` is the result alone, ½ on ties.
fn balanced(x: &Array, z: &Array, y: &Array) -> Result<Array, Error> {
    let full = |v: f64| lax::broadcast_to(&konst(x, v)?, z.shape());
    let (one, half, zero) = (full(1.0)?, full(0.5)?, full(0.0)?);
    let when_y = lax::select_n(&lax::eq(y, z)?, &[&one, &half])?;
    lax::select_n(&lax::eq(x, z)?, &[&zero, &when_y])
}

/// The JVP rule of every elementwise primitive (the operation is the const parameter).
pub(crate) fn elementwise_jvp<const OP: u8>(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let op = Op::of(OP);
    let out = primal_out(prim, primals, params)?;
    let y = &out[0];
    let x = &primals[0];
    let t0 = tangents.first().cloned().flatten();
    let t1 = tangents.get(1).cloned().flatten();
    let x1 = primals.get(1);
    let second = || {
        x1.ok_or_else(|| Error::refused(Exception::TypeError, "a binary operation lost an operand"))
    };
    // Zero tangents: integer and boolean results, piecewise-constant functions.
    if matches!(
        y.dtype().kind(),
        Kind::Bool | Kind::SignedInt | Kind::UnsignedInt
    ) {
        return Ok((out, vec![None]));
    }
    let t = match op {
        Op::Add | Op::AddAny => plus(t0, t1)?,
        Op::Sub => plus(t0, t1.map(|t| lax::neg(&t)).transpose()?)?,
        Op::Mul => {
            // As JAX: mul(xdot, y) + mul(x, ydot).
            let x1 = second()?;
            let a = scale(&t0, || Ok(x1.clone()))?;
            let b = t1.map(|t| lax::mul(x, &t)).transpose()?;
            plus(a, b)?
        }
        Op::Div => {
            let x1 = second()?;
            let a = t0.map(|t| lax::div(&t, x1)).transpose()?;
            let b = scale(&t1, || lax::mul(&lax::neg(x)?, &lax::integer_pow(x1, -2)?))?;
            plus(a, b)?
        }
        Op::Max | Op::Min => {
            let x1 = second()?;
            plus(
                scale(&t0, || balanced(x, y, x1))?,
                scale(&t1, || balanced(x1, y, x))?,
            )?
        }
        Op::Neg => t0.map(|t| lax::neg(&t)).transpose()?,
        // Linear in both parts: `complex(ṙ, i̇)`, a missing tangent a zero.
        Op::Complex if t0.is_some() || t1.is_some() => {
            let x1 = second()?;
            let re = match t0 {
                Some(t) => t,
                None => crate::core::jvp_zeros_like(x)?,
            };
            let im = match t1 {
                Some(t) => t,
                None => crate::core::jvp_zeros_like(x1)?,
            };
            Some(bind(prim, &[&re, &im], params)?[0].clone())
        }
        Op::Complex => None,
        Op::Exp => scale(&t0, || Ok(y.clone()))?,
        Op::Exp2 => scale(&t0, || lax::mul(y, &konst(x, std::f64::consts::LN_2)?))?,
        Op::Expm1 => scale(&t0, || lax::add(y, &konst(x, 1.0)?))?,
        Op::Log => t0.map(|t| lax::div(&t, x)).transpose()?,
        Op::Log1p => t0
            .map(|t| lax::div(&t, &lax::add(x, &konst(x, 1.0)?)?))
            .transpose()?,
        Op::Sin => scale(&t0, || lax::unary("cos", x))?,
        Op::Cos => scale(&t0, || lax::neg(&lax::unary("sin", x)?))?,
        Op::Tan => scale(&t0, || lax::add(&konst(x, 1.0)?, &lax::mul(y, y)?))?,
        Op::Tanh => t0
            .map(|g| {
                lax::mul(
                    &lax::add(&g, &lax::mul(&g, y)?)?,
                    &lax::sub(&konst(x, 1.0)?, y)?,
                )
            })
            .transpose()?,
        Op::Logistic => scale(&t0, || lax::mul(y, &lax::sub(&konst(x, 1.0)?, y)?))?,
        Op::Sqrt => scale(&t0, || lax::div(&konst(x, 0.5)?, y))?,
        Op::Rsqrt => scale(&t0, || lax::mul(&konst(x, -0.5)?, &lax::div(y, x)?))?,
        Op::Cbrt => scale(&t0, || {
            lax::mul(&konst(x, 1.0 / 3.0)?, &lax::integer_pow(y, -2)?)
        })?,
        Op::Sinh => scale(&t0, || lax::unary("cosh", x))?,
        Op::Cosh => scale(&t0, || lax::unary("sinh", x))?,
        Op::Asin => scale(&t0, || {
            lax::unary("rsqrt", &lax::sub(&konst(x, 1.0)?, &lax::mul(x, x)?)?)
        })?,
        Op::Acos => scale(&t0, || {
            lax::neg(&lax::unary(
                "rsqrt",
                &lax::sub(&konst(x, 1.0)?, &lax::mul(x, x)?)?,
            )?)
        })?,
        Op::Atan => t0
            .map(|t| lax::div(&t, &lax::add(&konst(x, 1.0)?, &lax::mul(x, x)?)?))
            .transpose()?,
        Op::Asinh => scale(&t0, || {
            lax::unary("rsqrt", &lax::add(&lax::mul(x, x)?, &konst(x, 1.0)?)?)
        })?,
        Op::Acosh => scale(&t0, || {
            let xm = lax::sub(x, &konst(x, 1.0)?)?;
            let xp = lax::add(x, &konst(x, 1.0)?)?;
            lax::unary("rsqrt", &lax::mul(&xm, &xp)?)
        })?,
        Op::Atanh => t0
            .map(|t| lax::div(&t, &lax::sub(&konst(x, 1.0)?, &lax::mul(x, x)?)?))
            .transpose()?,
        Op::Erf => scale(&t0, || {
            let c = konst(x, 2.0 / std::f64::consts::PI.sqrt())?;
            lax::mul(&c, &lax::unary("exp", &lax::neg(&lax::mul(x, x)?)?)?)
        })?,
        Op::Erfc => scale(&t0, || {
            let c = konst(x, -2.0 / std::f64::consts::PI.sqrt())?;
            lax::mul(&c, &lax::unary("exp", &lax::neg(&lax::mul(x, x)?)?)?)
        })?,
        Op::ErfInv => scale(&t0, || {
            let c = konst(x, std::f64::consts::PI.sqrt() / 2.0)?;
            lax::mul(&c, &lax::unary("exp", &lax::mul(y, y)?)?)
        })?,
        Op::Square => scale(&t0, || lax::mul(&konst(x, 2.0)?, x))?,
        Op::IntegerPow => {
            let n = match params.get("y") {
                Some(Param::Int(n)) => *n,
                _ => return Err(not_differentiable(prim)),
            };
            if n == 0 {
                None
            } else {
                scale(&t0, || {
                    let base = if n == 2 {
                        x.clone()
                    } else {
                        lax::integer_pow(x, n - 1)?
                    };
                    lax::mul(&konst(x, n as f64)?, &base)
                })?
            }
        }
        Op::Pow if second()?.dtype().kind().is_integer() => {
            scale(&t0, || pow_jac_of_int(prim, x, second()?))?
        }
        Op::Pow => {
            let x1 = second()?;
            let a = scale(&t0, || {
                let ym1 = lax::sub(x1, &konst(x1, 1.0)?)?;
                let p = bind(prim, &[x, &ym1], &Params::new())?;
                lax::mul(&lax::convert_like(x1, x)?, &p[0])
            })?;
            let b = scale(&t1, || lax::mul(y, &lax::unary("log", x)?))?;
            plus(a, b)?
        }
        Op::Atan2 => {
            let x1 = second()?;
            let denom = lax::add(&lax::mul(x, x)?, &lax::mul(x1, x1)?)?;
            plus(
                scale(&t0, || lax::div(x1, &denom))?,
                scale(&t1, || lax::div(&lax::neg(x)?, &denom))?,
            )?
        }
        Op::Abs if x.dtype().kind() != Kind::Complex => scale(&t0, || lax::unary("sign", x))?,
        Op::Sign | Op::Floor | Op::Ceil | Op::Round | Op::IsFinite | Op::Nextafter => None,
        Op::Real | Op::Imag | Op::Conj => t0
            .map(|t| bind(prim, &[&t], params).map(|o| o[0].clone()))
            .transpose()?,
        _ => return Err(not_differentiable(prim)),
    };
    let t = fit(t, y)?;
    Ok((out, vec![t]))
}

/// `∂pow(x, y)/∂x` for an integer exponent `y`, as JAX's `_pow_jvp_lhs` computes it: `y`
/// converted to `x`'s dtype, both broadcast to one shape (`_maybe_broadcast`), then
/// `select(y == 0, 0, y' · pow(x, y − 1))` with `y'` the exponent where a zero is replaced by
/// one; every step in `x`'s dtype (a zero exponent gives 0, even where `pow(x, −1)` is
/// infinite).
fn pow_jac_of_int(prim: &'static Primitive, x: &Array, y: &Array) -> Result<Array, Error> {
    let x = lax::convert(x, x.dtype(), false)?;
    let y = lax::convert(y, x.dtype(), false)?;
    let (x, y) = if x.shape() == y.shape() {
        (x, y)
    } else {
        let shape = super::elementwise::broadcasting_shape(prim.name, &[x.aval(), y.aval()])?;
        (maybe_broadcast(&x, &shape)?, maybe_broadcast(&y, &shape)?)
    };
    let full = |v: f64| lax::broadcast_to(&konst(&y, v)?, y.shape());
    let is_zero = lax::eq(&y, &konst(&y, 0.0)?)?;
    let zeros = full(0.0)?;
    let replaced = lax::select_n(&lax::eq(&y, &konst(&y, 0.0)?)?, &[&y, &full(1.0)?])?;
    let ym1 = lax::sub(&y, &full(1.0)?)?;
    let p = bind(prim, &[&x, &ym1], &Params::new())?;
    let jac = lax::mul(&replaced, &p[0])?;
    lax::select_n(&is_zero, &[&jac, &zeros])
}

/// `x` broadcast to `shape` of the same rank as `_maybe_broadcast` does it: a 0-d `x`
/// directly, another reshaped to its dimensions that keep their size first.
fn maybe_broadcast(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    if x.ndim() == 0 {
        return lax::broadcast_to(x, shape);
    }
    let dims: Vec<usize> = (0..x.ndim())
        .filter(|&i| x.shape()[i] == shape[i])
        .collect();
    let squeezed: Vec<i64> = dims.iter().map(|&i| x.shape()[i] as i64).collect();
    let x = if squeezed.len() == x.ndim() {
        x.clone()
    } else {
        let params = Params::new()
            .with("dimensions", Param::None)
            .with("new_sizes", Param::Ints(squeezed))
            .with("sharding", Param::None);
        bind(&super::structural::RESHAPE, &[x], &params)?[0].clone()
    };
    let params = Params::new()
        .with(
            "shape",
            Param::Ints(shape.iter().map(|&d| d as i64).collect()),
        )
        .with(
            "broadcast_dimensions",
            Param::Ints(dims.iter().map(|&d| d as i64).collect()),
        )
        .with("sharding", Param::None);
    Ok(bind(&super::BROADCAST_IN_DIM, &[&x], &params)?[0].clone())
}

/// A primitive linear in its first operand (the others constant: indices, padding value):
/// the tangent is the primitive applied to the tangent.
pub(crate) fn linear_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = primal_out(prim, primals, params)?;
    let t = match tangents.first().cloned().flatten() {
        None => None,
        Some(t) => {
            let mut ins: Vec<Array> = vec![t];
            for (p, _) in primals.iter().zip(tangents).skip(1) {
                // pad's padding value: its tangent enters as zero.
                if p.dtype().kind() == Kind::Float && prim.name == "pad" {
                    ins.push(konst(p, 0.0)?);
                } else {
                    ins.push(p.clone());
                }
            }
            let refs: Vec<&Array> = ins.iter().collect();
            Some(bind(prim, &refs, params)?[0].clone())
        }
    };
    if tangents.iter().skip(1).any(Option::is_some) && prim.name != "dynamic_slice" {
        return Err(not_differentiable(prim));
    }
    Ok((out, vec![t]))
}

/// A primitive linear in every operand jointly (`concatenate`, `select_n`'s cases): the
/// tangent is the primitive applied to the tangents, zeros instantiated.
pub(crate) fn multilinear_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = primal_out(prim, primals, params)?;
    let first = usize::from(prim.name == "select_n");
    let mut ins: Vec<Array> = primals[..first].to_vec();
    for (p, t) in primals.iter().zip(tangents).skip(first) {
        ins.push(match t {
            Some(t) => t.clone(),
            None => crate::core::jvp_zeros_like(p)?,
        });
    }
    let refs: Vec<&Array> = ins.iter().collect();
    let t = bind(prim, &refs, params)?[0].clone();
    Ok((out, vec![Some(t)]))
}

/// `dot_general`: bilinear.
pub(crate) fn dot_general_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = primal_out(prim, primals, params)?;
    let (l, r) = (&primals[0], &primals[1]);
    let a = match &tangents[0] {
        Some(t) => Some(bind(prim, &[t, r], params)?[0].clone()),
        None => None,
    };
    let b = match tangents.get(1).cloned().flatten() {
        Some(t) => Some(bind(prim, &[l, &t], params)?[0].clone()),
        None => None,
    };
    let t = fit(plus(a, b)?, &out[0])?;
    Ok((out, vec![t]))
}

/// `convert_element_type`: linear between inexact dtypes, zero into or out of integers.
pub(crate) fn convert_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = primal_out(prim, primals, params)?;
    let inexact = |k: Kind| matches!(k, Kind::Float | Kind::Complex);
    if !inexact(out[0].dtype().kind()) || !inexact(primals[0].dtype().kind()) {
        return Ok((out, vec![None]));
    }
    linear_jvp(prim, primals, tangents, params)
}

/// `reduce_max`/`reduce_min` and other primitives whose tangent is zero (comparisons,
/// integer results, argmax, iota, the PRNG).
pub(crate) fn zero_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    _tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = primal_out(prim, primals, params)?;
    let n = out.len();
    Ok((out, vec![None; n]))
}

/// The reductions and scans: `reduce_sum` and `cumsum` are linear; `reduce_max`/`reduce_min`
/// give each extremal element an equal share of the tangent (JAX's chooser rule); the logical
/// reductions have zero tangents.
pub(crate) fn reduce_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    match prim.name {
        "reduce_sum" | "cumsum" => linear_jvp(prim, primals, tangents, params),
        "reduce_and" | "reduce_or" | "reduce_xor" => zero_jvp(prim, primals, tangents, params),
        "reduce_max" | "reduce_min" => {
            let out = primal_out(prim, primals, params)?;
            let Some(t) = tangents[0].clone() else {
                return Ok((out, vec![None]));
            };
            let x = &primals[0];
            // The result broadcast back over the reduced axes.
            let axes: Vec<usize> = match params.get("axes") {
                Some(Param::Ints(v)) => v.iter().map(|&a| a as usize).collect(),
                _ => return Err(not_differentiable(prim)),
            };
            let kept: Vec<i64> = (0..x.ndim())
                .filter(|d| !axes.contains(d))
                .map(|d| d as i64)
                .collect();
            let bparams = Params::new()
                .with(
                    "shape",
                    Param::Ints(x.shape().iter().map(|&d| d as i64).collect()),
                )
                .with("broadcast_dimensions", Param::Ints(kept))
                .with("sharding", Param::None);
            let yb = super::bind1(&super::BROADCAST_IN_DIM, &[&out[0]], &bparams)?;
            let loc = lax::convert_like(&lax::eq(x, &yb)?, x)?;
            let sum = |v: &Array| -> Result<Array, Error> {
                let p = Params::new()
                    .with(
                        "axes",
                        Param::Ints(axes.iter().map(|&a| a as i64).collect()),
                    )
                    .with("out_sharding", Param::None);
                super::bind1(by_name("reduce_sum")?, &[v], &p)
            };
            let counts = sum(&loc)?;
            let t = lax::div(&sum(&lax::mul(&t, &loc)?)?, &counts)?;
            Ok((out, vec![Some(t)]))
        }
        _ => Err(not_differentiable(prim)),
    }
}

fn by_name(name: &str) -> Result<&'static Primitive, Error> {
    super::by_name(name).ok_or_else(|| {
        Error::refused(
            Exception::NotImplementedError,
            format!("no primitive {name}"),
        )
    })
}
