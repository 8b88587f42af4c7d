//! `scan`: applies its `jaxpr` `length` times to a carry and one slice of each scanned
//! operand (along the leading axis; backwards with `reverse`), stacking the per-step outputs;
//! `jax.lax.scan` binds it, and `fori_loop` with concrete bounds and `map`.

use std::sync::Arc;

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::{avals_of, check_carry_type, promote_weak_carry, str_short, trace_body, typematch};
use crate::array::{Array, ShapedArray};
use crate::core::jaxpr::ClosedJaxpr;
use crate::core::{Avals, Outputs, Param, Params, Primitive, Pytree};

/// The `scan` primitive: `scan[jaxpr=… length=… num_carry=… num_consts=… reverse=…
/// unroll=…] *consts *init *xs`.
pub static SCAN: Primitive = Primitive::new("scan", None, scan_shape_rule, scan_impl)
    .jvp(scan_jvp)
    .batch(scan_batch)
    .takes_float0();

struct Parts<'p> {
    jaxpr: &'p Arc<ClosedJaxpr>,
    length: usize,
    num_consts: usize,
    num_carry: usize,
    reverse: bool,
}

fn parts(params: &Params) -> Result<Parts<'_>, Error> {
    Ok(Parts {
        jaxpr: params.jaxpr("scan", "jaxpr")?,
        length: params.count("scan", "length")?,
        num_consts: params.count("scan", "num_consts")?,
        num_carry: params.count("scan", "num_carry")?,
        reverse: match params.get("reverse") {
            Some(Param::Bool(b)) => *b,
            None => false,
            _ => return Err(crate::core::bad_param("scan", "reverse", "not a bool")),
        },
    })
}

/// `aval` with a leading axis of `n`.
fn stacked(n: usize, aval: &ShapedArray) -> ShapedArray {
    let mut shape = vec![n];
    shape.extend_from_slice(aval.shape());
    ShapedArray::new(&shape, aval.dtype(), aval.weak_type())
}

fn scan_shape_rule(
    _: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let p = parts(params)?;
    let invars = p.jaxpr.jaxpr().invars();
    let fixed = p.num_consts + p.num_carry;
    let fits = invars.len() == inputs.len()
        && inputs.len() >= fixed
        && invars.iter().zip(inputs).enumerate().all(|(i, (v, a))| {
            if i < fixed {
                typematch(v.aval(), a)
            } else {
                typematch(&stacked(p.length, v.aval()), a)
            }
        });
    if !fits {
        let want: Vec<String> = invars
            .iter()
            .enumerate()
            .map(|(i, v)| {
                if i < fixed {
                    str_short(v.aval())
                } else {
                    str_short(&stacked(p.length, v.aval()))
                }
            })
            .collect();
        let got: Vec<String> = inputs.iter().map(|a| str_short(a)).collect();
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "scan's jaxpr takes ({}) but the scan is given ({})",
                want.join(", "),
                got.join(", ")
            ),
        ));
    }
    let outs = p.jaxpr.jaxpr().out_avals();
    if outs.len() < p.num_carry {
        return Err(Error::refused(
            Exception::TypeError,
            "scan's jaxpr returns fewer outputs than its carry",
        ));
    }
    let carry_in = &inputs[p.num_consts..fixed];
    if outs[..p.num_carry]
        .iter()
        .zip(carry_in)
        .any(|(o, c)| !typematch(o, c))
    {
        return Err(Error::refused(
            Exception::TypeError,
            "scan's carry output types differ from its carry input types",
        ));
    }
    Ok(outs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if i < p.num_carry {
                a.clone()
            } else {
                stacked(p.length, a)
            }
        })
        .collect())
}

fn scan_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    avals: &[ShapedArray],
) -> Result<Outputs, Error> {
    let p = parts(params)?;
    let fixed = p.num_consts + p.num_carry;
    let consts: Vec<Array> = inputs[..p.num_consts].iter().map(|&x| x.clone()).collect();
    let mut carry: Vec<Array> = inputs[p.num_consts..fixed]
        .iter()
        .map(|&x| x.clone())
        .collect();
    // Each scanned operand's slices, once.
    let slices: Vec<Vec<Array>> = if p.length == 0 {
        Vec::new()
    } else {
        inputs[fixed..]
            .iter()
            .map(|&x| {
                let parts = crate::core::bind(
                    &crate::lax::UNSTACK,
                    &[x],
                    &Params::new().with("axis", Param::Int(0)),
                )?;
                Ok(parts.into_iter().collect())
            })
            .collect::<Result<_, Error>>()?
    };
    let num_ys = avals.len() - p.num_carry;
    let mut ys: Vec<Vec<Array>> = vec![Vec::with_capacity(p.length); num_ys];
    for step in 0..p.length {
        let i = if p.reverse { p.length - 1 - step } else { step };
        let mut args = consts.clone();
        args.append(&mut carry);
        args.extend(slices.iter().map(|s| s[i].clone()));
        let mut out = p.jaxpr.call(&args)?;
        let y = out.split_off(p.num_carry);
        carry = out;
        for (acc, v) in ys.iter_mut().zip(y) {
            acc.push(v);
        }
    }
    let mut outs: Outputs = carry.into_iter().collect();
    for (mut acc, aval) in ys.into_iter().zip(&avals[p.num_carry..]) {
        if acc.is_empty() {
            outs.push(crate::lax::ops::zeros(aval)?);
            continue;
        }
        if p.reverse {
            acc.reverse();
        }
        let refs: Vec<&Array> = acc.iter().collect();
        outs.push(crate::core::bind1(
            &crate::lax::STACK,
            &refs,
            &Params::new().with("axis", Param::Int(0)),
        )?);
    }
    Ok(outs)
}

/// JAX's `_scan_jvp`: the body differentiated, the carries with a tangent found by a fixpoint
/// (a carry has one if its initial value does or the body gives it one), those carries'
/// tangents carried too (zeros where the initial tangent is symbolic); one `scan` of primals
/// and tangents.
fn scan_jvp(
    _: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let p = parts(params)?;
    let (nc, ncarry) = (p.num_consts, p.num_carry);
    let fixed = nc + ncarry;
    let nxs = primals.len() - fixed;
    let nys = p.jaxpr.jaxpr().outvars().len() - ncarry;
    let nz: Vec<bool> = tangents.iter().map(Option::is_some).collect();
    let (jaxpr, out_nz, carry_nz) = super::carry_fixpoint(&nz[nc..fixed], |carry_nz| {
        let nzs: Vec<bool> = nz[..nc]
            .iter()
            .chain(carry_nz)
            .chain(&nz[fixed..])
            .copied()
            .collect();
        let inst: Vec<bool> = carry_nz.iter().copied().chain(vec![false; nys]).collect();
        super::jvp_jaxpr(p.jaxpr, &nzs, &inst, &[nc, ncarry, nxs], &[ncarry, nys])
    })?;
    let zeros = super::carry_tangents(&primals[nc..fixed], &tangents[nc..fixed], &carry_nz)?;
    let mut inputs: Vec<&Array> = primals[..nc].iter().collect();
    inputs.extend(tangents[..nc].iter().flatten());
    inputs.extend(&primals[nc..fixed]);
    inputs.extend(zeros.iter().flatten());
    inputs.extend(&primals[fixed..]);
    inputs.extend(tangents[fixed..].iter().flatten());
    let n_const_dots = tangents[..nc].iter().flatten().count();
    let n_carry_dots = carry_nz.iter().filter(|&&c| c).count();
    let params = params
        .clone()
        .set("jaxpr", Param::Jaxpr(jaxpr))
        .set("num_consts", Param::Int((nc + n_const_dots) as i64))
        .set("num_carry", Param::Int((ncarry + n_carry_dots) as i64));
    let out = crate::core::bind(&SCAN, &inputs, &params)?;
    let (carry, rest) = out.split_at(ncarry);
    let (carry_dot, rest) = rest.split_at(n_carry_dots);
    let (ys, ys_dot) = rest.split_at(nys);
    let mut touts = super::scatter_flagged(&out_nz[..ncarry], carry_dot);
    touts.extend(super::scatter_flagged(&out_nz[ncarry..], ys_dot));
    Ok((carry.iter().chain(ys).cloned().collect(), touts))
}

/// JAX's `_scan_batching_rule`: the body mapped, the batched carries found by a fixpoint;
/// constants and carries batched at 0, scanned operands and outputs at 1 (their 0 is the
/// scanned axis).
fn scan_batch(
    _: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, crate::core::BatchDims), Error> {
    use crate::lax::batching::{broadcast_axis, moveaxis};
    let p = parts(params)?;
    let (nc, ncarry) = (p.num_consts, p.num_carry);
    let fixed = nc + ncarry;
    let nys = p.jaxpr.jaxpr().outvars().len() - ncarry;
    let bat: Vec<bool> = dims.iter().map(Option::is_some).collect();
    let (jaxpr, out_bat, carry_bat) = super::carry_fixpoint(&bat[nc..fixed], |carry_bat| {
        let in_dims: Vec<Option<usize>> = bat[..nc]
            .iter()
            .chain(carry_bat)
            .chain(&bat[fixed..])
            .map(|&b| b.then_some(0))
            .collect();
        let out_dims: Vec<Option<usize>> = carry_bat
            .iter()
            .map(|&b| b.then_some(0))
            .chain(vec![None; nys])
            .collect();
        super::batch_jaxpr(p.jaxpr, size, &in_dims, &out_dims)
    })?;
    let inputs = args
        .iter()
        .zip(dims)
        .enumerate()
        .map(|(i, (x, d))| match (i < nc, i < fixed, d) {
            (true, _, Some(d)) => moveaxis(x, *d, 0),
            (false, true, Some(d)) => moveaxis(x, *d, 0),
            (false, true, None) if carry_bat[i - nc] => broadcast_axis(x, size, 0),
            (false, false, Some(d)) => moveaxis(x, *d, 1),
            _ => Ok(x.clone()),
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let refs: Vec<&Array> = inputs.iter().collect();
    let params = params.clone().set("jaxpr", Param::Jaxpr(jaxpr));
    let out = crate::core::bind(&SCAN, &refs, &params)?;
    let out_dims = out_bat
        .iter()
        .enumerate()
        .map(|(k, &b)| b.then_some(if k < ncarry { 0 } else { 1 }))
        .collect();
    Ok((out, out_dims))
}

/// JAX's `_infer_scan_length`.
fn scan_length(xs: &[Array], length: Option<usize>) -> Result<usize, Error> {
    let value_error = |m: String| Error::refused(Exception::ValueError, m);
    if let Some(x) = xs.iter().find(|x| x.ndim() == 0) {
        return Err(value_error(format!(
            "scan got value with no leading axis to scan over: {x}."
        )));
    }
    let lengths: Vec<usize> = xs.iter().map(|x| x.shape()[0]).collect();
    match length {
        Some(n) if lengths.iter().any(|&l| l != n) => {
            let items: Vec<String> = lengths.iter().map(ToString::to_string).collect();
            Err(value_error(format!(
                "scan got `length` argument of {n} which disagrees with leading axis sizes [{}].",
                items.join(", ")
            )))
        }
        Some(n) => Ok(n),
        None => match lengths.first() {
            None => Err(value_error(
                "scan got no values to scan over and `length` not provided.".to_string(),
            )),
            Some(&n) if lengths.iter().any(|&l| l != n) => {
                let items: Vec<String> = lengths.iter().map(ToString::to_string).collect();
                Err(value_error(format!(
                    "scan got values with different leading axis sizes: {}.",
                    items.join(", ")
                )))
            }
            Some(&n) => Ok(n),
        },
    }
}

/// `jax.lax.scan(f, init, xs, length, reverse)`: `f(carry, x) -> (carry, y)` over the leading
/// axis of `xs` (a pytree; `()` with `length` scans over nothing), returning the final carry
/// and the `y`s stacked, as one `scan` equation (`f` traced once).
///
/// ```
/// use dtype_lattice_array::{Array, interpreters::control, numpy as jnp};
/// let xs = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
/// let (total, partial): (Array, Array) = control::scan(
///     |c: Array, x: Array| {
///         let c = jnp::add(&c, &x)?;
///         Ok((c.clone(), c))
///     },
///     &Array::scalar(0.0f32),
///     &xs,
///     None,
///     false,
/// )?;
/// assert_eq!((total.to_vec::<f32>()?, partial.to_vec::<f32>()?), (vec![6.0], vec![1.0, 3.0, 6.0]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's: `ValueError` for `xs` without a common leading axis or `length` disagreeing with
/// it; `TypeError` for a body changing the carry's structure or types. Whatever `f` returns.
pub fn scan<C, X, Y, F>(
    f: F,
    init: &C,
    xs: &X,
    length: Option<usize>,
    reverse: bool,
) -> Result<(C, Y), Error>
where
    C: Pytree,
    X: Pytree,
    Y: Pytree,
    F: Fn(C, X) -> Result<(C, Y), Error>,
{
    let xs_leaves = xs.leaves();
    let length = scan_length(&xs_leaves, length)?;
    let x_avals: Vec<ShapedArray> = xs_leaves
        .iter()
        .map(|x| ShapedArray::new(&x.shape()[1..], x.dtype(), x.weak_type()))
        .collect();
    let mut init_leaves = init.leaves();
    let n_carry = init_leaves.len();
    let trace = |carry_avals: &[ShapedArray]| {
        let avals: Vec<ShapedArray> = carry_avals.iter().chain(&x_avals).cloned().collect();
        trace_body(
            |leaves| {
                let mut it = leaves.into_iter();
                let c = init.rebuild(&mut it)?;
                let x = xs.rebuild(&mut it)?;
                let (c, y) = f(c, x)?;
                Ok(((c, y), ()))
            },
            &avals,
        )
    };
    let mut body = trace(&avals_of(&init_leaves))?;
    let outs = body.jaxpr.jaxpr().out_avals();
    let n_out_carry = body.out.0.0.leaves().len();
    check_carry_type("scan body", &avals_of(&init_leaves), &outs[..n_out_carry])?;
    let mut changed = false;
    for (x, o) in init_leaves.iter_mut().zip(&outs) {
        let (y, c) = promote_weak_carry(x, o)?;
        *x = y;
        changed |= c;
    }
    if changed {
        body = trace(&avals_of(&init_leaves))?;
    }
    let outs = body.jaxpr.jaxpr().out_avals();
    check_carry_type("scan body", &avals_of(&init_leaves), &outs[..n_carry])?;
    let params = Params::new()
        .with("jaxpr", Param::Jaxpr(body.jaxpr))
        .with("length", Param::Int(length as i64))
        .with("num_carry", Param::Int(n_carry as i64))
        .with("num_consts", Param::Int(body.consts.len() as i64))
        .with("reverse", Param::Bool(reverse))
        .with("unroll", Param::Int(1));
    let inputs: Vec<&Array> = body
        .consts
        .iter()
        .chain(&init_leaves)
        .chain(&xs_leaves)
        .collect();
    let out = crate::core::bind(&SCAN, &inputs, &params)?;
    let ((c_template, y_template), ()) = body.out;
    let mut it = out.into_iter();
    let c = c_template.rebuild(&mut it)?;
    let y = y_template.rebuild(&mut it)?;
    Ok((c, y))
}

/// `jax.lax.map(f, xs)`: `f` over the leading axis of `xs`, as a `scan` without carry.
///
/// # Errors
///
/// Those of [`scan`].
pub fn map<X, Y, F>(f: F, xs: &X) -> Result<Y, Error>
where
    X: Pytree,
    Y: Pytree,
    F: Fn(X) -> Result<Y, Error>,
{
    let ((), ys) = scan(|(), x| Ok(((), f(x)?)), &(), xs, None, false)?;
    Ok(ys)
}
