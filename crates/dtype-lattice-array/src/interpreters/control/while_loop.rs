//! `while`: applies `body_jaxpr` to its carry while `cond_jaxpr` of the carry is true;
//! `jax.lax.while_loop` binds it, and `fori_loop` with bounds that are not concrete.

use std::sync::Arc;

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Value};

use super::{Body, avals_of, check_carry_type, promote_weak_carry, str_short, trace_body};
use crate::array::{Array, ShapedArray};
use crate::core::jaxpr::ClosedJaxpr;
use crate::core::{Avals, Outputs, Param, Params, Primitive, Pytree};

/// The `while` primitive: `while[body_jaxpr=… body_nconsts=… cond_jaxpr=… cond_nconsts=…]
/// *cond_consts *body_consts *carry`.
pub static WHILE: Primitive = Primitive::new("while", None, while_shape_rule, while_impl)
    .jvp(while_jvp)
    .batch(while_batch)
    .partial_eval(while_partial_eval)
    .transpose(while_transpose)
    .takes_float0();

struct Parts<'p> {
    cond: &'p Arc<ClosedJaxpr>,
    body: &'p Arc<ClosedJaxpr>,
    cond_nconsts: usize,
    body_nconsts: usize,
}

fn parts(params: &Params) -> Result<Parts<'_>, Error> {
    Ok(Parts {
        cond: params.jaxpr("while", "cond_jaxpr")?,
        body: params.jaxpr("while", "body_jaxpr")?,
        cond_nconsts: params.count("while", "cond_nconsts")?,
        body_nconsts: params.count("while", "body_nconsts")?,
    })
}

fn mismatch(what: &str, want: &[ShapedArray], got: &[&ShapedArray]) -> Error {
    let want: Vec<String> = want.iter().map(str_short).collect();
    let got: Vec<String> = got.iter().map(|a| str_short(a)).collect();
    Error::refused(
        Exception::TypeError,
        format!(
            "while {what} takes ({}) but is given ({})",
            want.join(", "),
            got.join(", ")
        ),
    )
}

fn while_shape_rule(
    _: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let p = parts(params)?;
    if inputs.len() < p.cond_nconsts + p.body_nconsts {
        return Err(Error::refused(
            Exception::TypeError,
            "while has fewer operands than its constants",
        ));
    }
    let (cond_consts, rest) = inputs.split_at(p.cond_nconsts);
    let (body_consts, carry) = rest.split_at(p.body_nconsts);
    let same = |vars: &[crate::core::jaxpr::Var], avals: &[&ShapedArray]| {
        vars.len() == avals.len()
            && vars
                .iter()
                .zip(avals)
                .all(|(v, a)| super::typematch(v.aval(), a))
    };
    let cond_in: Vec<&ShapedArray> = cond_consts.iter().chain(carry).copied().collect();
    if !same(p.cond.jaxpr().invars(), &cond_in) {
        let want: Vec<ShapedArray> = p
            .cond
            .jaxpr()
            .invars()
            .iter()
            .map(|v| v.aval().clone())
            .collect();
        return Err(mismatch("cond_jaxpr", &want, &cond_in));
    }
    let body_in: Vec<&ShapedArray> = body_consts.iter().chain(carry).copied().collect();
    if !same(p.body.jaxpr().invars(), &body_in) {
        let want: Vec<ShapedArray> = p
            .body
            .jaxpr()
            .invars()
            .iter()
            .map(|v| v.aval().clone())
            .collect();
        return Err(mismatch("body_jaxpr", &want, &body_in));
    }
    let outs = p.body.jaxpr().out_avals();
    if outs.len() != carry.len() || outs.iter().zip(carry).any(|(o, c)| !super::typematch(o, c)) {
        return Err(mismatch("body_jaxpr's output", &outs, carry));
    }
    // A batched predicate (under vmap) leads the carries' shapes: each example loops until
    // its own predicate fails.
    let pred = p.cond.jaxpr().out_avals();
    if pred.len() != 1
        || pred[0].dtype() != DType::Bool
        || carry
            .iter()
            .any(|c| !c.shape().starts_with(pred[0].shape()))
    {
        return Err(Error::refused(
            Exception::TypeError,
            "while's cond_jaxpr must return a boolean scalar (or, batched, a boolean array \
             leading every carry's shape)",
        ));
    }
    Ok(outs.into_iter().collect())
}

fn while_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    _: &[ShapedArray],
) -> Result<Outputs, Error> {
    let p = parts(params)?;
    let cond_consts: Vec<Array> = inputs[..p.cond_nconsts]
        .iter()
        .map(|&x| x.clone())
        .collect();
    let body_consts: Vec<Array> = inputs[p.cond_nconsts..p.cond_nconsts + p.body_nconsts]
        .iter()
        .map(|&x| x.clone())
        .collect();
    let mut carry: Vec<Array> = inputs[p.cond_nconsts + p.body_nconsts..]
        .iter()
        .map(|&x| x.clone())
        .collect();
    loop {
        crate::config::check_deadline()?;
        let args: Vec<Array> = cond_consts.iter().chain(&carry).cloned().collect();
        let pred = p.cond.call(&args)?.remove(0);
        let go: Vec<bool> = pred.to_vec()?;
        if !go.contains(&true) {
            return Ok(carry.into_iter().collect());
        }
        let args: Vec<Array> = body_consts.iter().chain(&carry).cloned().collect();
        let next = p.body.call(&args)?;
        carry = if pred.ndim() == 0 {
            next
        } else {
            // The examples whose predicate failed keep their carry (XLA's lowering of a
            // batched predicate: `select`).
            next.iter()
                .zip(&carry)
                .map(|(n, o)| {
                    let which = super::broadcast_prefix(&pred, n)?;
                    crate::lax::ops::select_n(&which, &[o, n])
                })
                .collect::<Result<_, Error>>()?
        };
    }
}

/// JAX's `_while_loop_jvp`: the body differentiated, the carries with a tangent found by a
/// fixpoint, their tangents carried too (zeros where the initial tangent is symbolic); the
/// predicate ignores the tangents. One `while` of primals and tangents.
fn while_jvp(
    _: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let p = parts(params)?;
    let (cc, bc) = (p.cond_nconsts, p.body_nconsts);
    let fixed = cc + bc;
    let ncarry = primals.len() - fixed;
    let nz: Vec<bool> = tangents.iter().map(Option::is_some).collect();
    let (body, _, carry_nz) = super::carry_fixpoint(&nz[fixed..], |carry_nz| {
        let nzs: Vec<bool> = nz[cc..fixed].iter().chain(carry_nz).copied().collect();
        super::jvp_jaxpr(p.body, &nzs, carry_nz, &[bc, ncarry], &[ncarry])
    })?;
    let carry_dots = super::carry_tangents(&primals[fixed..], &tangents[fixed..], &carry_nz)?;
    // The predicate takes the tangents too, and ignores them.
    let cond_jaxpr = {
        let j = p.cond.jaxpr();
        let mut jaxpr = j.clone();
        for (id, t) in (j.max_var_id() + 1..).zip(carry_dots.iter().flatten()) {
            jaxpr.invars.push(crate::core::jaxpr::Var {
                id,
                aval: t.aval().clone(),
                dropped: false,
            });
        }
        Arc::new(ClosedJaxpr {
            jaxpr,
            consts: p.cond.consts().to_vec(),
        })
    };
    let mut inputs: Vec<&Array> = primals[..fixed].iter().collect();
    inputs.extend(tangents[cc..fixed].iter().flatten());
    inputs.extend(&primals[fixed..]);
    inputs.extend(carry_dots.iter().flatten());
    let n_const_dots = tangents[cc..fixed].iter().flatten().count();
    let params = Params::new()
        .with("body_jaxpr", Param::Jaxpr(body))
        .with("body_nconsts", Param::Int((bc + n_const_dots) as i64))
        .with("cond_jaxpr", Param::Jaxpr(cond_jaxpr))
        .with("cond_nconsts", Param::Int(cc as i64));
    let out = crate::core::bind(&WHILE, &inputs, &params)?;
    let (carry, dots) = out.split_at(ncarry);
    Ok((
        carry.iter().cloned().collect(),
        super::scatter_flagged(&carry_nz, dots),
    ))
}

/// JAX's `_while_partial_eval`: with the predicate known (it reads known carries only), a
/// `while` of the body's known part computes the known carries now; the unknown ones come
/// from the whole loop staged (recomputing the known part, as a checkpoint would). With the
/// predicate unknown, or every carry unknown, the whole loop is staged.
fn while_partial_eval(
    _: &'static Primitive,
    inputs: &[&Array],
    unknown: &[bool],
    params: &Params,
    pe: &dyn crate::core::PartialEval,
) -> Result<Outputs, Error> {
    use crate::interpreters::stage::partial_eval_jaxpr;
    let p = parts(params)?;
    let (cc, bc) = (p.cond_nconsts, p.body_nconsts);
    let fixed = cc + bc;
    let (body, _, carry_uk) = super::carry_fixpoint(&unknown[fixed..], |carry_uk| {
        let uks: Vec<bool> = unknown[cc..fixed].iter().chain(carry_uk).copied().collect();
        let split = partial_eval_jaxpr(p.body, &uks, carry_uk)?;
        let out = split.out_unknowns.clone();
        Ok((split, out))
    })?;
    let cond_uks: Vec<bool> = unknown[..cc].iter().chain(&carry_uk).copied().collect();
    let cond = partial_eval_jaxpr(p.cond, &cond_uks, &[false])?;
    if cond.out_unknowns[0] || carry_uk.iter().all(|&u| u) {
        return pe.stage(&WHILE, inputs, params);
    }
    let keep = |mut j: ClosedJaxpr, n: usize| {
        j.jaxpr.outvars.truncate(n);
        Param::Jaxpr(Arc::new(j))
    };
    let known_carries = carry_uk.iter().filter(|&&u| !u).count();
    let known: Vec<&Array> = (0..inputs.len())
        .filter(|&i| {
            if i < fixed {
                !unknown[i]
            } else {
                !carry_uk[i - fixed]
            }
        })
        .map(|i| inputs[i])
        .collect();
    let known_params = Params::new()
        .with("body_jaxpr", keep(body.known, known_carries))
        .with(
            "body_nconsts",
            Param::Int(unknown[cc..fixed].iter().filter(|&&u| !u).count() as i64),
        )
        .with("cond_jaxpr", keep(cond.known, 1))
        .with(
            "cond_nconsts",
            Param::Int(unknown[..cc].iter().filter(|&&u| !u).count() as i64),
        );
    let known_out = pe.known(&WHILE, &known, &known_params)?;
    let staged = pe.stage(&WHILE, inputs, params)?;
    let mut k = known_out.into_iter();
    staged
        .into_iter()
        .zip(&carry_uk)
        .map(|(s, &u)| if u { Some(s) } else { k.next() })
        .collect::<Option<Outputs>>()
        .ok_or_else(|| Error::refused(Exception::TypeError, "while partial eval lost a carry"))
}

/// JAX's `_while_transpose_error`: a `while` cannot be transposed (its trip count is not
/// known ahead, so its steps cannot be stored for the way back).
fn while_transpose(
    _: &'static Primitive,
    _: &[Option<Array>],
    _: &[crate::core::Lin],
    _: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    Err(Error::refused(
        Exception::ValueError,
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with \
         dynamic start/stop values. Try using lax.scan, or using fori_loop with static \
         start/stop.",
    ))
}

/// JAX's `_while_loop_batching_rule`: the body mapped, the batched carries found by a
/// fixpoint; if the predicate is then batched, every carry is batched and each example loops
/// until its own predicate fails (the primitive's batched-predicate form). Everything batched
/// at 0.
fn while_batch(
    _: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, crate::core::BatchDims), Error> {
    use crate::lax::batching::{broadcast_axis, moveaxis};
    let p = parts(params)?;
    let (cc, bc) = (p.cond_nconsts, p.body_nconsts);
    let fixed = cc + bc;
    let at0 = |b: &bool| b.then_some(0);
    let bat: Vec<bool> = dims.iter().map(Option::is_some).collect();
    let (_, _, mut carry_bat) = super::carry_fixpoint(&bat[fixed..], |carry_bat| {
        let in_dims: Vec<Option<usize>> = bat[cc..fixed].iter().chain(carry_bat).map(at0).collect();
        let out_dims: Vec<Option<usize>> = carry_bat.iter().map(at0).collect();
        super::batch_jaxpr(p.body, size, &in_dims, &out_dims)
    })?;
    let cond_in = |carry_bat: &[bool]| -> Vec<Option<usize>> {
        bat[..cc].iter().chain(carry_bat).map(at0).collect()
    };
    let (_, pred_bat) = super::batch_jaxpr(p.cond, size, &cond_in(&carry_bat), &[None])?;
    let pred_dim = if pred_bat[0] {
        carry_bat = vec![true; carry_bat.len()];
        Some(0)
    } else {
        None
    };
    let in_dims: Vec<Option<usize>> = bat[cc..fixed].iter().chain(&carry_bat).map(at0).collect();
    let carry_dims: Vec<Option<usize>> = carry_bat.iter().map(at0).collect();
    let (body, _) = super::batch_jaxpr(p.body, size, &in_dims, &carry_dims)?;
    let (cond, _) = super::batch_jaxpr(p.cond, size, &cond_in(&carry_bat), &[pred_dim])?;
    let inputs = args
        .iter()
        .zip(dims)
        .enumerate()
        .map(
            |(i, (x, d))| match (d, i >= fixed && carry_bat[i - fixed]) {
                (Some(d), _) => moveaxis(x, *d, 0),
                (None, true) => broadcast_axis(x, size, 0),
                (None, false) => Ok(x.clone()),
            },
        )
        .collect::<Result<Vec<_>, Error>>()?;
    let refs: Vec<&Array> = inputs.iter().collect();
    let params = params
        .clone()
        .set("body_jaxpr", Param::Jaxpr(body))
        .set("cond_jaxpr", Param::Jaxpr(cond));
    let out = crate::core::bind(&WHILE, &refs, &params)?;
    Ok((out, carry_dims))
}

/// Traces `cond_fun` and `body_fun` on `avals`.
fn trace_loop<C, P, B>(
    cond_fun: &P,
    body_fun: &B,
    template: &C,
    avals: &[ShapedArray],
) -> Result<(Body<Array>, Body<C>), Error>
where
    C: Pytree,
    P: Fn(C) -> Result<Array, Error>,
    B: Fn(C) -> Result<C, Error>,
{
    let cond = trace_body(|xs| cond_fun(template.rebuild(&mut xs.into_iter())?), avals)?;
    let body = trace_body(|xs| body_fun(template.rebuild(&mut xs.into_iter())?), avals)?;
    let pred = cond.out.aval();
    if !pred.shape().is_empty() || pred.dtype() != DType::Bool {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray({})].",
                str_short(pred)
            ),
        ));
    }
    Ok((cond, body))
}

/// `jax.lax.while_loop(cond_fun, body_fun, init_val)`: `body_fun` applied to the carry while
/// `cond_fun` of it is true, as one `while` equation (both functions traced once).
///
/// ```
/// use dtype_lattice_array::{Array, interpreters::control, numpy as jnp};
/// let n = control::while_loop(
///     |c: Array| jnp::less(&c, 10),
///     |c: Array| jnp::multiply(&c, 2),
///     &Array::scalar(1i32),
/// )?;
/// assert_eq!(n.to_vec::<i32>()?, [16]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `TypeError`s: `cond_fun` not returning a boolean scalar, `body_fun` changing the
/// carry's structure or types. Whatever the functions return.
pub fn while_loop<C, P, B>(cond_fun: P, body_fun: B, init: &C) -> Result<C, Error>
where
    C: Pytree,
    P: Fn(C) -> Result<Array, Error>,
    B: Fn(C) -> Result<C, Error>,
{
    let mut leaves = init.leaves();
    let mut avals = avals_of(&leaves);
    let (mut cond, mut body) = trace_loop(&cond_fun, &body_fun, init, &avals)?;
    let outs = body.jaxpr.jaxpr().out_avals();
    // JAX checks the types after promoting a weak initial carry; only the structure before.
    if avals.len() != outs.len() {
        check_carry_type("while_loop body", &avals, &outs)?;
    }
    let mut changed = false;
    for (x, o) in leaves.iter_mut().zip(&outs) {
        let (y, c) = promote_weak_carry(x, o)?;
        *x = y;
        changed |= c;
    }
    if changed {
        avals = avals_of(&leaves);
        (cond, body) = trace_loop(&cond_fun, &body_fun, init, &avals)?;
    }
    check_carry_type("while_loop body", &avals, &body.jaxpr.jaxpr().out_avals())?;
    let params = Params::new()
        .with("body_jaxpr", Param::Jaxpr(body.jaxpr))
        .with("body_nconsts", Param::Int(body.consts.len() as i64))
        .with("cond_jaxpr", Param::Jaxpr(cond.jaxpr))
        .with("cond_nconsts", Param::Int(cond.consts.len() as i64));
    let inputs: Vec<&Array> = cond
        .consts
        .iter()
        .chain(&body.consts)
        .chain(&leaves)
        .collect();
    let out = crate::core::bind(&WHILE, &inputs, &params)?;
    init.rebuild(&mut out.into_iter())
}

/// `jax.lax.fori_loop(lower, upper, body_fun, init_val)`: `body_fun(i, x)` for `i` from
/// `lower` to `upper`. With concrete bounds it is a `scan` of `max(upper - lower, 0)` steps
/// carrying `(i, x)` (so it is reverse-differentiable), else a `while` carrying `(i, upper,
/// x)`, as JAX chooses.
///
/// ```
/// use dtype_lattice_array::{Array, interpreters::control, numpy as jnp};
/// let x = control::fori_loop(
///     &Array::scalar(0i32),
///     &Array::scalar(4i32),
///     |i: Array, x: Array| jnp::add(&jnp::multiply(&x, 2.0)?, &i),
///     &Array::from_vec(vec![1.0f32]),
/// )?;
/// assert_eq!(x.to_vec::<f32>()?, [27.0]); // ((((1·2 + 0)·2 + 1)·2 + 2)·2 + 3)
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `TypeError` for bounds of different types; those of `scan` and `while_loop`.
pub fn fori_loop<C, B>(lower: &Array, upper: &Array, body_fun: B, init: &C) -> Result<C, Error>
where
    C: Pytree + Clone,
    B: Fn(Array, C) -> Result<C, Error>,
{
    let (ld, ud) = (lower.dtype(), upper.dtype());
    let dtype = if ld == ud {
        ld
    } else if ld.kind() == Kind::SignedInt
        && ud.kind() == Kind::SignedInt
        && lower.weak_type() != upper.weak_type()
    {
        if lower.weak_type() { ud } else { ld }
    } else {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "lower and upper arguments to fori_loop must have equal types, got {ld} and {ud}"
            ),
        ));
    };
    if lower.is_concrete() && upper.is_concrete() {
        let (lo, hi) = (super::concrete_int(lower)?, super::concrete_int(upper)?);
        let length = (hi - lo).max(0) as usize;
        // JAX carries `int(lower)`: a Python int, a weakly typed default integer.
        let i0 = crate::array::scalar_array(
            Value::Int(lo.into()),
            crate::config::default_int(&crate::config::rules()),
            true,
        )?;
        let ((_, result), ()) = super::scan(
            |(i, x): (Array, C), _: ()| {
                // `i + 1` in Python: a weakly typed one.
                let one = crate::array::scalar_array(Value::Int(1), i.dtype(), true)?;
                let next = crate::lax::ops::add(&i, &one)?;
                Ok(((next, body_fun(i, x)?), ()))
            },
            &(i0, init.clone()),
            &(),
            Some(length),
            false,
        )?;
        return Ok(result);
    }
    let bound = |x: &Array| {
        if x.dtype() == dtype {
            Ok(x.clone())
        } else {
            crate::lax::ops::convert(x, dtype, false)
        }
    };
    let (lower, upper) = (bound(lower)?, bound(upper)?);
    let (_, _, result) = while_loop(
        |(i, upper, _): (Array, Array, C)| {
            crate::core::bind1(&crate::lax::LT, &[&i, &upper], &Params::new())
        },
        |(i, upper, x): (Array, Array, C)| {
            let one = crate::lax::ops::konst(&i, 1.0)?;
            let next = crate::lax::ops::add(&i, &one)?;
            Ok((next, upper, body_fun(i, x)?))
        },
        &(lower, upper, init.clone()),
    )?;
    Ok(result)
}
