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
    .partial_eval(scan_partial_eval)
    .transpose(scan_transpose)
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
        crate::config::check_deadline()?;
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

/// JAX's `_scan_partial_eval`: the body split (a fixpoint over the carries: a carry is
/// unknown if its initial value is or the body makes it so) into a known scan, run now, which
/// also returns the residuals the unknown part needs stacked as extra outputs, and an unknown
/// scan, staged, which takes them as scanned operands. Residuals that are the body's known
/// constants or scanned operands themselves are passed as they are (JAX's forwarding), not
/// stacked.
fn scan_partial_eval(
    _: &'static Primitive,
    inputs: &[&Array],
    unknown: &[bool],
    params: &Params,
    pe: &dyn crate::core::PartialEval,
) -> Result<Outputs, Error> {
    use crate::interpreters::stage::{Residual, partial_eval_jaxpr};
    let p = parts(params)?;
    let (nc, ncarry) = (p.num_consts, p.num_carry);
    let fixed = nc + ncarry;
    let nys = p.jaxpr.jaxpr().outvars().len() - ncarry;
    let flags = |carry_uk: &[bool]| -> Vec<bool> {
        unknown[..nc]
            .iter()
            .chain(carry_uk)
            .chain(&unknown[fixed..])
            .copied()
            .collect()
    };
    let (split, out_uk, carry_uk) = super::carry_fixpoint(&unknown[nc..fixed], |carry_uk| {
        let inst: Vec<bool> = carry_uk.iter().copied().chain(vec![false; nys]).collect();
        let split = partial_eval_jaxpr(p.jaxpr, &flags(carry_uk), &inst)?;
        let out = split.out_unknowns.clone();
        Ok((split, out))
    })?;
    let uks = flags(&carry_uk);
    let known_idx: Vec<usize> = (0..inputs.len()).filter(|&i| !uks[i]).collect();
    let unknown_idx: Vec<usize> = (0..inputs.len()).filter(|&i| uks[i]).collect();
    let count =
        |idx: &[usize], r: std::ops::Range<usize>| idx.iter().filter(|i| r.contains(i)).count();
    // The residuals: forwarded constants and scanned operands, or stacked outputs.
    let n_known_outs = out_uk.iter().filter(|&&u| !u).count();
    let mut known = split.known;
    let mut outvars = known.jaxpr.outvars[..n_known_outs].to_vec();
    let (mut res_consts, mut res_xs, mut res_stacked) = (vec![], vec![], vec![]);
    for (r, (kind, atom)) in split
        .residuals
        .iter()
        .zip(&known.jaxpr.outvars[n_known_outs..])
        .enumerate()
    {
        match kind {
            Residual::Forwarded(k) if known_idx[*k] < nc => res_consts.push((r, known_idx[*k])),
            Residual::Forwarded(k) if known_idx[*k] >= fixed => res_xs.push((r, known_idx[*k])),
            _ => {
                res_stacked.push((r, outvars.len()));
                outvars.push(atom.clone());
            }
        }
    }
    known.jaxpr.outvars = outvars;
    let known_inputs: Vec<&Array> = known_idx.iter().map(|&i| inputs[i]).collect();
    let known_params = params
        .clone()
        .set("jaxpr", Param::Jaxpr(Arc::new(known)))
        .set("num_consts", Param::Int(count(&known_idx, 0..nc) as i64))
        .set("num_carry", Param::Int(count(&known_idx, nc..fixed) as i64));
    let known_out = pe.known(&SCAN, &known_inputs, &known_params)?;
    // The unknown scan: [unknown consts, forwarded consts, unknown carries, unknown scanned
    // operands, forwarded scanned operands, stacked residuals].
    let mut unknown_jaxpr = split.unknown;
    let nres = split.residuals.len();
    let res_vars = unknown_jaxpr.jaxpr.invars[..nres].to_vec();
    let uk_vars = unknown_jaxpr.jaxpr.invars[nres..].to_vec();
    let mut invars = Vec::new();
    let mut ins: Vec<&Array> = Vec::new();
    let uk_in = |r: std::ops::Range<usize>| {
        unknown_idx
            .iter()
            .zip(&uk_vars)
            .filter(move |(i, _)| r.contains(i))
    };
    for (&i, v) in uk_in(0..nc) {
        invars.push(v.clone());
        ins.push(inputs[i]);
    }
    for &(r, i) in &res_consts {
        invars.push(res_vars[r].clone());
        ins.push(inputs[i]);
    }
    for (&i, v) in uk_in(nc..inputs.len()) {
        invars.push(v.clone());
        ins.push(inputs[i]);
    }
    for &(r, i) in &res_xs {
        invars.push(res_vars[r].clone());
        ins.push(inputs[i]);
    }
    for &(r, o) in &res_stacked {
        invars.push(res_vars[r].clone());
        ins.push(&known_out[o]);
    }
    unknown_jaxpr.jaxpr.invars = invars;
    let unknown_params = params
        .clone()
        .set("jaxpr", Param::Jaxpr(Arc::new(unknown_jaxpr)))
        .set(
            "num_consts",
            Param::Int((count(&unknown_idx, 0..nc) + res_consts.len()) as i64),
        )
        .set(
            "num_carry",
            Param::Int(count(&unknown_idx, nc..fixed) as i64),
        );
    let unknown_out = pe.stage(&SCAN, &ins, &unknown_params)?;
    super::merge_split(&out_uk, &known_out, &unknown_out, "scan")
}

/// JAX's `_scan_transpose`: the cotangents of a scan linear in its carries, some constants
/// and some scanned operands (the others known: residuals) are a scan the other way round,
/// whose carry is the carries' cotangents and the linear constants' cotangents summed over
/// the steps, and whose body is the body transposed (its cotangent outputs stacked are the
/// linear scanned operands' cotangents).
fn scan_transpose(
    _: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[crate::core::Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let p = parts(params)?;
    let (nc, ncarry) = (p.num_consts, p.num_carry);
    let fixed = nc + ncarry;
    let body = p.jaxpr.clone();
    let body_in: Vec<ShapedArray> = body
        .jaxpr()
        .invars()
        .iter()
        .map(|v| v.aval().clone())
        .collect();
    let body_out = body.jaxpr().out_avals();
    let zero = |a: &ShapedArray| crate::interpreters::jvp::tangent_zeros(a);
    // The carries are linear (a known one is an instantiated zero, as JAX lets it be).
    let linear: Vec<bool> = ins
        .iter()
        .enumerate()
        .map(|(i, l)| l.is_linear() || (nc..fixed).contains(&i))
        .collect();
    let lin_consts: Vec<usize> = (0..nc).filter(|&i| linear[i]).collect();
    let known_consts: Vec<usize> = (0..nc).filter(|&i| !linear[i]).collect();
    let lin_xs: Vec<usize> = (fixed..ins.len()).filter(|&i| linear[i]).collect();
    let known_xs: Vec<usize> = (fixed..ins.len()).filter(|&i| !linear[i]).collect();
    // Operands of the transposed scan: [known consts], carry [linear consts' cotangents,
    // carries' cotangents], scanned [outputs' cotangents, known scanned operands].
    let mut operands: Vec<Array> = known_consts
        .iter()
        .map(|&i| ins[i].known().cloned())
        .collect::<Result<_, _>>()?;
    for &i in &lin_consts {
        operands.push(zero(&body_in[i])?);
    }
    for (k, ct) in cts[..ncarry].iter().enumerate() {
        operands.push(match ct {
            Some(c) => c.clone(),
            None => zero(&body_out[k])?,
        });
    }
    for (k, ct) in cts[ncarry..].iter().enumerate() {
        operands.push(match ct {
            Some(c) => c.clone(),
            None => zero(&stacked(p.length, &body_out[ncarry + k]))?,
        });
    }
    for &i in &known_xs {
        operands.push(ins[i].known()?.clone());
    }
    let nys = body_out.len() - ncarry;
    let mut avals: Vec<ShapedArray> = operands[..known_consts.len() + lin_consts.len() + ncarry]
        .iter()
        .map(|x| x.aval().clone())
        .collect();
    avals.extend(body_out[ncarry..].iter().cloned());
    avals.extend(known_xs.iter().map(|&i| body_in[i].clone()));
    let (nkc, nlc) = (known_consts.len(), lin_consts.len());
    let body = trace_body(
        |leaves: Vec<Array>| -> Result<(Vec<Array>, ()), Error> {
            let (kc, rest) = leaves.split_at(nkc);
            let (acc, rest) = rest.split_at(nlc);
            let (ct_carry, rest) = rest.split_at(ncarry);
            let (ct_ys, kxs) = rest.split_at(nys);
            // The body with its known operands as constants, transposed: cotangents of
            // [linear consts, carries, linear xs].
            let known: Vec<Array> = kc.iter().chain(kxs).cloned().collect();
            let outs: Vec<Array> = ct_carry.iter().chain(ct_ys).cloned().collect();
            let mut cts = super::transpose_body(&body, &linear, &known, &outs)?;
            for (c, a) in cts.iter_mut().zip(acc) {
                *c = crate::lax::ops::add_any(a, c)?;
            }
            Ok((cts, ()))
        },
        &avals,
    )?;
    let mut all: Vec<&Array> = body.consts.iter().collect();
    all.extend(operands.iter());
    let t_params = params
        .clone()
        .set("jaxpr", Param::Jaxpr(body.jaxpr))
        .set("num_consts", Param::Int((body.consts.len() + nkc) as i64))
        .set("num_carry", Param::Int((nlc + ncarry) as i64))
        .set("reverse", Param::Bool(!p.reverse));
    let out = crate::core::bind(&SCAN, &all, &t_params)?;
    // Outputs: [linear consts' cotangents, carries' cotangents, linear xs' cotangents].
    let mut result: Vec<Option<Array>> = vec![None; ins.len()];
    let mut it = out.into_iter();
    for &i in lin_consts
        .iter()
        .chain(&(nc..fixed).collect::<Vec<_>>())
        .chain(&lin_xs)
    {
        result[i] = it.next().filter(|_| ins[i].is_linear());
    }
    Ok(result)
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
    let mut options = Scan::new().reverse(reverse);
    if let Some(n) = length {
        options = options.length(n);
    }
    options.call(f, init, xs)
}

/// How many steps a rolled iteration of the scan runs (`unroll`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unroll {
    Steps(usize),
    /// `unroll=True`: every step (`max(length, 1)`).
    All,
}

/// `jax.lax.scan` with its keyword arguments (`length`, `reverse`, `unroll`), builder-style;
/// [`scan`] is this with `unroll=1`. `unroll` is how many steps the compiled loop runs per
/// iteration: the scan computes the same values whatever it is, and prints it.
///
/// ```
/// use dtype_lattice_array::{Array, interpreters::control::Scan, make_jaxpr, numpy as jnp};
/// let step = |c: Array, x: Array| Ok((jnp::add(&c, &x)?, jnp::multiply(&c, &x)?));
/// let xs = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0]);
/// let (c, ys): (Array, Array) = Scan::new().unroll(2).call(step, &Array::scalar(1.0f32), &xs)?;
/// assert_eq!((c.to_vec::<f32>()?, ys.to_vec::<f32>()?), (vec![11.0], vec![1.0, 4.0, 12.0, 28.0]));
/// let j = make_jaxpr(|xs: Array| Scan::new().unroll_all().call(step, &Array::scalar(1.0f32), &xs), &xs)?;
/// assert!(j.to_string().contains("unroll=4"));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scan {
    length: Option<usize>,
    reverse: bool,
    unroll: Unroll,
}

impl Default for Scan {
    fn default() -> Scan {
        Scan::new()
    }
}

impl Scan {
    /// JAX's defaults: the length of `xs`, forwards, `unroll=1`.
    pub fn new() -> Scan {
        Scan {
            length: None,
            reverse: false,
            unroll: Unroll::Steps(1),
        }
    }

    /// `length`: the number of steps (required when `xs` has no leaves).
    #[must_use]
    pub fn length(self, length: usize) -> Scan {
        Scan {
            length: Some(length),
            ..self
        }
    }

    /// `reverse`: scan from the end of `xs` (the outputs stay in `xs`' order).
    #[must_use]
    pub fn reverse(self, reverse: bool) -> Scan {
        Scan { reverse, ..self }
    }

    /// `unroll=n`: `n` steps per iteration of the compiled loop.
    #[must_use]
    pub fn unroll(self, steps: usize) -> Scan {
        Scan {
            unroll: Unroll::Steps(steps),
            ..self
        }
    }

    /// `unroll=True`: the whole loop unrolled.
    #[must_use]
    pub fn unroll_all(self) -> Scan {
        Scan {
            unroll: Unroll::All,
            ..self
        }
    }

    /// `jax.lax.scan(f, init, xs, **options)`: as [`scan`].
    ///
    /// # Errors
    ///
    /// As [`scan`].
    pub fn call<C, X, Y, F>(&self, f: F, init: &C, xs: &X) -> Result<(C, Y), Error>
    where
        C: Pytree,
        X: Pytree,
        Y: Pytree,
        F: Fn(C, X) -> Result<(C, Y), Error>,
    {
        scan_impl_api(f, init, xs, self)
    }
}

fn scan_impl_api<C, X, Y, F>(f: F, init: &C, xs: &X, options: &Scan) -> Result<(C, Y), Error>
where
    C: Pytree,
    X: Pytree,
    Y: Pytree,
    F: Fn(C, X) -> Result<(C, Y), Error>,
{
    let (length, reverse) = (options.length, options.reverse);
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
    // JAX checks the types after promoting a weak initial carry (a `0.` carry the body makes
    // float32 is fine); only the structure before.
    if n_out_carry != n_carry {
        check_carry_type("scan body", &avals_of(&init_leaves), &outs[..n_out_carry])?;
    }
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
        .with(
            "unroll",
            Param::Int(match options.unroll {
                Unroll::Steps(n) => n as i64,
                Unroll::All => length.max(1) as i64,
            }),
        );
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
