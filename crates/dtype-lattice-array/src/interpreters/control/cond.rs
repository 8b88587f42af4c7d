//! `cond`: applies one of its `branches` (closed jaxprs of the same type) to its operands,
//! chosen by an `int32` index (out of range: the last branch, as XLA's `Conditional`);
//! `jax.lax.cond` (a predicate) and `jax.lax.switch` (an index, clamped) bind it.

use std::collections::HashMap;
use std::sync::Arc;

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error};

use super::{Body, avals_of, concrete_int, str_short, trace_body, typematch};
use crate::array::{Array, ShapedArray};
use crate::core::jaxpr::{ClosedJaxpr, Jaxpr, Var};
use crate::core::{Avals, Outputs, Param, Params, Primitive, Pytree};

/// The `cond` primitive: `cond[branches=(…)] index *operands`.
pub static COND: Primitive = Primitive::new("cond", None, cond_shape_rule, cond_impl)
    .jvp(cond_jvp)
    .batch(cond_batch)
    .partial_eval(cond_partial_eval)
    .transpose(cond_transpose)
    .takes_float0();

fn branches(params: &Params) -> Result<&[Arc<ClosedJaxpr>], Error> {
    match params.get("branches") {
        Some(Param::Jaxprs(js)) if !js.is_empty() => Ok(js),
        _ => Err(crate::core::bad_param(
            "cond",
            "branches",
            "not a non-empty tuple of jaxprs",
        )),
    }
}

fn cond_shape_rule(
    _: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let branches = branches(params)?;
    let Some((index, ops)) = inputs.split_first() else {
        return Err(Error::refused(
            Exception::TypeError,
            "cond requires at least one argument (the index)",
        ));
    };
    if !index.shape().is_empty() || index.dtype() != DType::Int32 {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "cond called with index of type {} (expected int32[])",
                str_short(index)
            ),
        ));
    }
    for (i, b) in branches.iter().enumerate() {
        let ins = b.jaxpr().invars();
        if ins.len() != ops.len() || ins.iter().zip(ops).any(|(v, a)| !typematch(v.aval(), a)) {
            let want: Vec<String> = ins.iter().map(|v| str_short(v.aval())).collect();
            let got: Vec<String> = ops.iter().map(|a| str_short(a)).collect();
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "cond branch {i} takes input types ({}) but was called with ({})",
                    want.join(", "),
                    got.join(", ")
                ),
            ));
        }
        if i > 0 {
            let first = branches[0].jaxpr().out_avals();
            let outs = b.jaxpr().out_avals();
            if outs.len() != first.len() || outs.iter().zip(&first).any(|(a, b)| !typematch(a, b)) {
                return Err(Error::refused(
                    Exception::TypeError,
                    format!("cond branches 0 and {i} have different output types"),
                ));
            }
        }
    }
    Ok(branches[0].jaxpr().out_avals().into_iter().collect())
}

fn cond_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    _: &[ShapedArray],
) -> Result<Outputs, Error> {
    let branches = branches(params)?;
    let n = branches.len() as i64;
    let i = concrete_int(inputs[0])?;
    // XLA's Conditional runs the last branch for an index out of range.
    let i = if (0..n).contains(&i) { i } else { n - 1 } as usize;
    let ops: Vec<Array> = inputs[1..].iter().map(|&x| x.clone()).collect();
    Ok(branches[i].call(&ops)?.into_iter().collect())
}

/// JAX's `_cond_jvp`: each branch differentiated for the operands with tangents, the outputs
/// with a tangent in any branch instantiated in all; one `cond` over the primal operands and
/// their tangents.
fn cond_jvp(
    _: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let branches = branches(params)?;
    let ops_nz: Vec<bool> = tangents[1..].iter().map(Option::is_some).collect();
    let n_ops = ops_nz.len();
    let n_out = branches[0].jaxpr().outvars().len();
    let mut out_nz = vec![false; n_out];
    for b in branches {
        let (_, nz) = super::jvp_jaxpr(b, &ops_nz, &vec![false; n_out], &[n_ops], &[n_out])?;
        for (o, z) in out_nz.iter_mut().zip(nz) {
            *o |= z;
        }
    }
    let jvps = branches
        .iter()
        .map(|b| super::jvp_jaxpr(b, &ops_nz, &out_nz, &[n_ops], &[n_out]).map(|(j, _)| j))
        .collect::<Result<Vec<_>, _>>()?;
    let mut inputs: Vec<&Array> = primals.iter().collect();
    inputs.extend(tangents[1..].iter().flatten());
    let p = Params::new().with("branches", Param::Jaxprs(jvps));
    let out = crate::core::bind(&COND, &inputs, &p)?;
    let (primal_out, tangent_out) = out.split_at(n_out);
    let touts = super::scatter_flagged(&out_nz, tangent_out);
    Ok((primal_out.iter().cloned().collect(), touts))
}

/// JAX's `_cond_batching_rule`: with a batched index, every branch runs on the whole batch
/// (each on operands passed through `select(index == i, x, stop_gradient(x))`, as JAX does
/// for reverse mode's sake) and `select_n` picks per example; otherwise the branches are
/// mapped and one `cond` runs, outputs batched where any branch batches them.
fn cond_batch(
    _: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, crate::core::BatchDims), Error> {
    use crate::lax::batching::{bdim_at_front, moveaxis};
    let branches = branches(params)?;
    let n_out = branches[0].jaxpr().outvars().len();
    if dims[0].is_some() {
        let moved = args
            .iter()
            .zip(dims)
            .map(|(x, d)| bdim_at_front(x, *d, size))
            .collect::<Result<Vec<_>, Error>>()?;
        let (index, ops) = moved
            .split_first()
            .ok_or_else(|| Error::refused(Exception::TypeError, "cond without an index"))?;
        let all_in = vec![Some(0); ops.len()];
        let all_out = vec![Some(0); n_out];
        let mut outs: Vec<Vec<Array>> = Vec::new();
        for (i, b) in branches.iter().enumerate() {
            let (j, _) = super::batch_jaxpr(b, size, &all_in, &all_out)?;
            let i = crate::array::scalar_array(
                dtype_lattice::Value::Int(i as i128),
                DType::Int32,
                false,
            )?;
            let pred = crate::core::bind1(&crate::lax::EQ, &[index, &i], &Params::new())?;
            let ops_ = ops
                .iter()
                .map(|x| {
                    let stopped =
                        crate::core::bind1(&crate::lax::STOP_GRADIENT, &[x], &Params::new())?;
                    let p = super::broadcast_prefix(&pred, x)?;
                    crate::lax::ops::select_n(&p, &[&stopped, x])
                })
                .collect::<Result<Vec<_>, Error>>()?;
            outs.push(j.call(&ops_)?);
        }
        let out = (0..n_out)
            .map(|k| {
                let cases: Vec<&Array> = outs.iter().map(|o| &o[k]).collect();
                let which = super::broadcast_prefix(index, cases[0])?;
                crate::lax::ops::select_n(&which, &cases)
            })
            .collect::<Result<Outputs, Error>>()?;
        return Ok((out, vec![Some(0); n_out]));
    }
    let ops_dims: Vec<Option<usize>> = dims[1..].iter().map(|d| d.map(|_| 0)).collect();
    let mut out_bat = vec![false; n_out];
    for b in branches {
        let (_, bat) = super::batch_jaxpr(b, size, &ops_dims, &vec![None; n_out])?;
        for (o, z) in out_bat.iter_mut().zip(bat) {
            *o |= z;
        }
    }
    let out_dims: Vec<Option<usize>> = out_bat.iter().map(|&b| b.then_some(0)).collect();
    let batched = branches
        .iter()
        .map(|b| super::batch_jaxpr(b, size, &ops_dims, &out_dims).map(|(j, _)| j))
        .collect::<Result<Vec<_>, _>>()?;
    let mut inputs = vec![args[0].clone()];
    for (x, d) in args[1..].iter().zip(&dims[1..]) {
        inputs.push(match d {
            Some(d) => moveaxis(x, *d, 0)?,
            None => x.clone(),
        });
    }
    let refs: Vec<&Array> = inputs.iter().collect();
    let p = Params::new().with("branches", Param::Jaxprs(batched));
    let out = crate::core::bind(&COND, &refs, &p)?;
    Ok((out, out_dims))
}

/// JAX's `_cond_partial_eval`: each branch split for the unknown operands, the outputs
/// unknown in any branch made unknown in all; a known `cond` computes the known outputs and
/// every branch's residuals (each branch returning zeros for the others'), and an unknown
/// `cond`, staged, takes them all (each branch reading its own). An unknown index stages the
/// whole `cond`.
fn cond_partial_eval(
    _: &'static Primitive,
    inputs: &[&Array],
    unknown: &[bool],
    params: &Params,
    pe: &dyn crate::core::PartialEval,
) -> Result<Outputs, Error> {
    use crate::interpreters::stage::partial_eval_jaxpr;
    let branches = branches(params)?;
    if unknown[0] {
        return pe.stage(&COND, inputs, params);
    }
    let ops_uk = &unknown[1..];
    let n_out = branches[0].jaxpr().outvars().len();
    let mut out_uk = vec![false; n_out];
    for b in branches {
        let split = partial_eval_jaxpr(b, ops_uk, &vec![false; n_out])?;
        for (o, u) in out_uk.iter_mut().zip(split.out_unknowns) {
            *o |= u;
        }
    }
    let splits = branches
        .iter()
        .map(|b| partial_eval_jaxpr(b, ops_uk, &out_uk))
        .collect::<Result<Vec<_>, _>>()?;
    let n_known = out_uk.iter().filter(|&&u| !u).count();
    // Every branch's residuals, in branch order.
    let res_avals: Vec<Vec<ShapedArray>> = splits
        .iter()
        .map(|s| s.known.jaxpr().out_avals()[n_known..].to_vec())
        .collect();
    let known_avals: Vec<ShapedArray> = (1..inputs.len())
        .filter(|&i| !unknown[i])
        .map(|i| inputs[i].aval().clone())
        .collect();
    let known_branches = splits
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (j, _) = crate::interpreters::stage::trace_avals(
                |leaves: Vec<Array>| -> Result<(Vec<Array>, ()), Error> {
                    let outs = s.known.call(&leaves)?;
                    let mut result = outs[..n_known].to_vec();
                    for (k, avals) in res_avals.iter().enumerate() {
                        if k == i {
                            result.extend(outs[n_known..].iter().cloned());
                        } else {
                            for a in avals {
                                result.push(crate::lax::ops::zeros(a)?);
                            }
                        }
                    }
                    Ok((result, ()))
                },
                &known_avals,
                "partial_eval",
            )?;
            Ok(Arc::new(j))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mut known_in: Vec<&Array> = vec![inputs[0]];
    known_in.extend(
        (1..inputs.len())
            .filter(|&i| !unknown[i])
            .map(|i| inputs[i]),
    );
    let known_out = pe.known(
        &COND,
        &known_in,
        &Params::new().with("branches", Param::Jaxprs(known_branches)),
    )?;
    // The unknown branches take every branch's residuals, then the unknown operands.
    let unknown_branches: Vec<Arc<ClosedJaxpr>> = splits
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut j = s.unknown.clone();
            let own = res_avals[i].len();
            let mut next = j.jaxpr.max_var_id();
            let ops = j.jaxpr.invars.split_off(own);
            let mine = std::mem::take(&mut j.jaxpr.invars);
            let mut invars = Vec::new();
            for (k, avals) in res_avals.iter().enumerate() {
                if k == i {
                    invars.extend(mine.iter().cloned());
                } else {
                    for a in avals {
                        next += 1;
                        invars.push(Var {
                            id: next,
                            aval: a.clone(),
                            dropped: false,
                        });
                    }
                }
            }
            invars.extend(ops);
            j.jaxpr.invars = invars;
            Arc::new(j)
        })
        .collect();
    let mut unknown_in: Vec<&Array> = vec![inputs[0]];
    unknown_in.extend(known_out[n_known..].iter());
    unknown_in.extend((1..inputs.len()).filter(|&i| unknown[i]).map(|i| inputs[i]));
    let unknown_out = pe.stage(
        &COND,
        &unknown_in,
        &Params::new().with("branches", Param::Jaxprs(unknown_branches)),
    )?;
    super::merge_split(&out_uk, &known_out[..n_known], &unknown_out, "cond")
}

/// JAX's `_cond_transpose`: each branch transposed in the linear operands (the known ones,
/// residuals, are its constants), one `cond` on the same index from the known operands and
/// the outputs' cotangents (zeros for symbolic ones) to the linear operands' cotangents.
fn cond_transpose(
    _: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[crate::core::Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    use crate::core::Lin;
    let branches = branches(params)?;
    let index = ins[0].known()?;
    let ops = &ins[1..];
    let linear: Vec<bool> = ops.iter().map(Lin::is_linear).collect();
    let out_avals = branches[0].jaxpr().out_avals();
    let mut operands: Vec<Array> = ops
        .iter()
        .filter_map(|l| match l {
            Lin::Known(x) => Some(x.clone()),
            Lin::Linear(_) => None,
        })
        .collect();
    let n_known = operands.len();
    for (c, a) in cts.iter().zip(&out_avals) {
        operands.push(match c {
            Some(c) => c.clone(),
            None => crate::interpreters::jvp::tangent_zeros(a)?,
        });
    }
    let avals: Vec<ShapedArray> = operands.iter().map(|x| x.aval().clone()).collect();
    let transposed = branches
        .iter()
        .map(|b| {
            let (j, _) = crate::interpreters::stage::trace_avals(
                |leaves: Vec<Array>| -> Result<(Vec<Array>, ()), Error> {
                    let (known, cts) = leaves.split_at(n_known);
                    let result = super::transpose_body(b, &linear, known, cts)?;
                    Ok((result, ()))
                },
                &avals,
                "transpose",
            )?;
            Ok(Arc::new(j))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mut all: Vec<&Array> = vec![index];
    all.extend(operands.iter());
    let out = crate::core::bind(
        &COND,
        &all,
        &Params::new().with("branches", Param::Jaxprs(transposed)),
    )?;
    let mut it = out.into_iter();
    let mut result = vec![None];
    for &l in &linear {
        result.push(if l { it.next() } else { None });
    }
    Ok(result)
}

/// `jax.lax.cond(pred, true_fun, false_fun, *operands)`: `true_fun(operands)` if `pred`, else
/// `false_fun(operands)`, as one `cond` equation whose two branches are traced once (both,
/// whatever `pred`).
///
/// `pred` is a scalar: a bool, or a number compared with zero.
///
/// ```
/// use dtype_lattice_array::{Array, interpreters::control, numpy as jnp};
/// let x = Array::from_vec(vec![1.0f32, 2.0]);
/// let y = control::cond(&Array::scalar(true), |x: Array| jnp::sin(&x), |x: Array| Ok(x), &x)?;
/// assert_eq!(y.to_vec::<f32>()?, [1f32.sin(), 2f32.sin()]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `TypeError`s: a predicate that is not a scalar or not a bool or number; branches
/// whose outputs differ in structure or type. Whatever the branches return.
pub fn cond<I, O, T, F>(pred: &Array, true_fun: T, false_fun: F, operands: &I) -> Result<O, Error>
where
    I: Pytree,
    O: Pytree,
    T: FnOnce(I) -> Result<O, Error>,
    F: FnOnce(I) -> Result<O, Error>,
{
    if !pred.shape().is_empty() {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "Pred must be a scalar, got {pred} of shape {}.",
                shape_of(pred)
            ),
        ));
    }
    let pred = match pred.dtype() {
        DType::Bool => pred.clone(),
        d if d.kind().is_integer() || d.kind() == dtype_lattice::Kind::Float => {
            let zero = crate::lax::ops::zeros(pred.aval())?;
            crate::core::bind1(&crate::lax::NE, &[pred, &zero], &Params::new())?
        }
        d => {
            return Err(Error::refused(
                Exception::TypeError,
                format!("Pred type must be either boolean or number, got {d}."),
            ));
        }
    };
    let leaves = operands.leaves();
    let avals = avals_of(&leaves);
    let t = trace_body(
        |xs| true_fun(operands.rebuild(&mut xs.into_iter())?),
        &avals,
    )?;
    let f = trace_body(
        |xs| false_fun(operands.rebuild(&mut xs.into_iter())?),
        &avals,
    )?;
    check_branch_outputs("cond", "true_fun", "false_fun", &t, &f)?;
    let index = crate::lax::ops::convert(&pred, DType::Int32, false)?;
    let out = bind_cond(&index, vec![f, t], &leaves)?;
    let template = out.0;
    template.rebuild(&mut out.1.into_iter())
}

/// `jax.lax.switch(index, branches, *operands)`: `branches[clamp(0, index, n - 1)](operands)`.
///
/// # Errors
///
/// JAX's: an index that is not an integer scalar (`TypeError`), no branches (`ValueError`),
/// branches whose outputs differ (`TypeError`); whatever the branches return.
pub fn switch<I, O>(
    index: &Array,
    branches: &[&dyn Fn(I) -> Result<O, Error>],
    operands: &I,
) -> Result<O, Error>
where
    I: Pytree + Clone,
    O: Pytree,
{
    if !index.shape().is_empty() {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "Branch index must be scalar, got {index} of shape {}.",
                shape_of(index)
            ),
        ));
    }
    if !index.dtype().kind().is_integer() {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "Index type must be an integer, got {index} as {}",
                index.dtype()
            ),
        ));
    }
    match branches {
        [] => Err(Error::refused(
            Exception::ValueError,
            "Empty branch sequence",
        )),
        [only] => only(operands.clone()),
        _ => {
            let index = crate::lax::ops::convert(index, DType::Int32, false)?;
            let lo = Array::scalar(0i32);
            let hi = Array::scalar(branches.len() as i32 - 1);
            let index =
                crate::core::bind1(&crate::lax::CLAMP, &[&lo, &index, &hi], &Params::new())?;
            let leaves = operands.leaves();
            let avals = avals_of(&leaves);
            let bodies = branches
                .iter()
                .map(|b| trace_body(|xs| b(operands.rebuild(&mut xs.into_iter())?), &avals))
                .collect::<Result<Vec<_>, _>>()?;
            for (i, b) in bodies.iter().enumerate().skip(1) {
                check_branch_outputs("switch", "branch 0", &format!("branch{i}"), &bodies[0], b)?;
            }
            let (template, out) = bind_cond(&index, bodies, &leaves)?;
            template.rebuild(&mut out.into_iter())
        }
    }
}

/// `np.shape(x)` as Python prints it: `(2,)`, `(2, 3)`.
fn shape_of(x: &Array) -> String {
    let dims: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    crate::lax::structural::py_ints(&dims)
}

/// JAX's `_check_branch_outputs`.
fn check_branch_outputs<O: Pytree>(
    api: &str,
    name1: &str,
    name2: &str,
    a: &Body<O>,
    b: &Body<O>,
) -> Result<(), Error> {
    let (o1, o2) = (a.jaxpr.jaxpr().out_avals(), b.jaxpr.jaxpr().out_avals());
    if o1.len() != o2.len() {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "{api} branch outputs must have the same pytree structure, but they differ:\n\n\
                 {name1} output has {} leaves but {name2} output has {}.\n\nRevise {name1} \
                 and/or {name2} so that they have the same pytree structure.",
                o1.len(),
                o2.len()
            ),
        ));
    }
    let diffs: Vec<String> = o1
        .iter()
        .zip(&o2)
        .enumerate()
        .filter(|(_, (x, y))| !typematch(x, y))
        .map(|(i, (x, y))| {
            let at = if o1.len() > 1 {
                format!(" at path [{i}]")
            } else {
                String::new()
            };
            format!(
                "the output of {name1}{at} has type {} but the corresponding output of {name2} \
                 has type {}{}",
                str_short(x),
                str_short(y),
                super::mismatch_extra(x, y)
            )
        })
        .collect();
    let differences = match diffs.as_slice() {
        [] => return Ok(()),
        [one] => format!("{}.\n", super::capitalize(one)),
        [init @ .., last] => {
            let items: Vec<String> = init.iter().map(|d| format!("  * {d};")).collect();
            format!("{}\n  * {last}.\n", items.join("\n"))
        }
    };
    Err(Error::refused(
        Exception::TypeError,
        format!(
            "{api} branches must have equal output types but they differ.\n\n{differences}\n\
             Revise {name1} and/or {name2} so that all output types match."
        ),
    ))
}

/// Binds `cond` on `index`, the branches' merged constants and `operands`: each branch takes
/// every constant (JAX's `_merge_common_consts`), outputs every branch forwards from the
/// same input are taken from it (JAX's `in_fwd` pruning). The first branch's output value
/// (its structure) and the output leaves.
fn bind_cond<O: Pytree>(
    index: &Array,
    bodies: Vec<Body<O>>,
    operands: &[Array],
) -> Result<(O, Vec<Array>), Error> {
    // Merge constants by identity.
    let mut consts: Vec<Array> = Vec::new();
    let mut seen: HashMap<(usize, ShapedArray), usize> = HashMap::new();
    let mut maps: Vec<Vec<usize>> = Vec::new();
    for b in &bodies {
        maps.push(
            b.consts
                .iter()
                .map(|c| {
                    *seen
                        .entry((c.identity(), c.aval().clone()))
                        .or_insert_with(|| {
                            consts.push(c.clone());
                            consts.len() - 1
                        })
                })
                .collect(),
        );
    }
    let mut jaxprs: Vec<Jaxpr> = bodies
        .iter()
        .zip(&maps)
        .map(|(b, map)| with_all_consts(b.jaxpr.jaxpr(), map, &consts))
        .collect();
    // Outputs forwarded from one input by every branch.
    let fwd = |j: &Jaxpr| -> Vec<Option<usize>> {
        j.outvars()
            .iter()
            .map(|o| match o {
                crate::core::jaxpr::Atom::Var(v) => j.invars().iter().position(|i| i.id == v.id),
                _ => None,
            })
            .collect()
    };
    let fwds: Vec<Vec<Option<usize>>> = jaxprs.iter().map(fwd).collect();
    let in_fwd: Vec<Option<usize>> = (0..fwds[0].len())
        .map(|k| {
            let f = fwds[0][k];
            if f.is_some() && fwds.iter().all(|v| v[k] == f) {
                f
            } else {
                None
            }
        })
        .collect();
    for j in &mut jaxprs {
        let outs = std::mem::take(&mut j.outvars);
        j.outvars = outs
            .into_iter()
            .zip(&in_fwd)
            .filter(|(_, f)| f.is_none())
            .map(|(o, _)| o)
            .collect();
    }
    let branches: Vec<Arc<ClosedJaxpr>> = jaxprs
        .into_iter()
        .map(|jaxpr| {
            Arc::new(ClosedJaxpr {
                jaxpr,
                consts: Vec::new(),
            })
        })
        .collect();
    let all: Vec<Array> = consts.iter().chain(operands).cloned().collect();
    let mut inputs: Vec<&Array> = vec![index];
    inputs.extend(all.iter());
    let params = Params::new().with("branches", Param::Jaxprs(branches));
    let out = crate::core::bind(&COND, &inputs, &params)?;
    let mut out = out.into_iter();
    let leaves: Vec<Array> = in_fwd
        .iter()
        .map(|f| match f {
            Some(i) => Ok(all[*i].clone()),
            None => out.next().ok_or_else(|| {
                Error::refused(Exception::TypeError, "cond returned too few outputs")
            }),
        })
        .collect::<Result<_, Error>>()?;
    let template = bodies
        .into_iter()
        .next()
        .map(|b| b.out)
        .ok_or_else(|| Error::refused(Exception::ValueError, "Empty branch sequence"))?;
    Ok((template, leaves))
}

/// `j` (whose leading inputs are its own constants, `map[k]` the merged position of its
/// constant `k`) as a jaxpr taking every merged constant, then its operands.
fn with_all_consts(j: &Jaxpr, map: &[usize], consts: &[Array]) -> Jaxpr {
    let mut next = j.max_var_id();
    let (own, ops) = j.invars().split_at(map.len());
    let mut invars: Vec<Var> = consts
        .iter()
        .map(|c| {
            next += 1;
            Var {
                id: next,
                aval: c.aval().clone(),
                dropped: false,
            }
        })
        .collect();
    for (k, &m) in map.iter().enumerate() {
        invars[m] = own[k].clone();
    }
    invars.extend(ops.iter().cloned());
    Jaxpr {
        constvars: Vec::new(),
        invars,
        eqns: j.eqns().to_vec(),
        outvars: j.outvars().to_vec(),
    }
}
