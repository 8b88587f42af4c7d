//! JAX's control flow (`jax/_src/lax/control_flow/`): `cond` (and `switch` on it), `while`
//! (and `while_loop`, `fori_loop` with dynamic bounds) and `scan` (and `fori_loop` with
//! concrete bounds, `map`). They are *initial-style* primitives: each body is traced once to
//! a closed jaxpr held in the equation's parameters (`branches`, `cond_jaxpr`/`body_jaxpr`,
//! `jaxpr`), its captured values (constants, and tracers of enclosing transformations) hoisted
//! as leading operands, as JAX's `separate_consts` does. Nothing in a body is evaluated at
//! trace time (omnistaging): a Rust branch on a traced value inside a body is JAX's
//! `ConcretizationTypeError`.
//!
//! Each primitive is one definition in its file (`cond.rs`, `while_loop.rs`, `scan.rs`),
//! with its shape rule, implementation, JVP, partial-evaluation, transpose and batching rules
//! beside the user function that binds it.
//!
//! ```
//! use dtype_lattice::DType;
//! use dtype_lattice_array::{Array, grad, jit, make_jaxpr, vmap, numpy as jnp};
//! use dtype_lattice_array::interpreters::control;
//! type R<T> = Result<T, dtype_lattice::Error>;
//! // h = tanh(h * w + x) over the xs: the final h.
//! let rnn = |w: Array, xs: Array| -> R<Array> {
//!     let step = |h: Array, x: Array| Ok((jnp::tanh(jnp::add(jnp::multiply(&h, &w)?, &x)?)?, ()));
//!     let (h, ()) = control::scan(step, &Array::scalar(0.0f32), &xs, None, false)?;
//!     Ok(h)
//! };
//! let xs = Array::from_vec(vec![0.5f32, -1.0, 2.0]);
//! let w = Array::scalar(0.8f32);
//! assert_eq!(
//!     make_jaxpr(|(w, xs)| rnn(w, xs), &(w.clone(), xs.clone()))?.to_string(),
//!     "{ lambda ; a:f32[] b:f32[3]. let
//!     c:f32[] = scan[
//!       jaxpr={ lambda ; d:f32[] e:f32[] f:f32[]. let
//!           g:f32[] = mul e d
//!           h:f32[] = add g f
//!           i:f32[] = tanh h
//!         in (i,) }
//!       length=3
//!       num_carry=1
//!       num_consts=1
//!       reverse=False
//!       unroll=1
//!     ] a 0.0:f32[] b
//!   in (c,) }"
//! );
//! // Reverse mode: a known scan saves the residuals, the transposed scan runs backwards.
//! let dw = grad(|w: Array| rnn(w, xs.clone()), &w)?;
//! let dw_jit: Array = jit(|w: Array| grad(|w: Array| rnn(w, xs.clone()), &w)).call(&w)?;
//! // JAX's jax.grad(rnn): -0.04981411. Eager evaluation rounds every product, where jit
//! // (and XLA) contract products into additions: the two differ in the last bits.
//! for g in [dw, dw_jit] {
//!     assert!((g.to_vec::<f32>()?[0] - -0.04981411f32).abs() < 1e-8);
//! }
//! // vmap over w: the carry becomes batched (a fixpoint), one scan runs.
//! let ws = Array::from_vec(vec![0.8f32, 0.5]);
//! let hs: Array = vmap(|w: Array| rnn(w, xs.clone())).call(&ws)?;
//! assert_eq!(hs.shape(), [2]);
//! // A while loop and a cond: Newton's iteration for sqrt(2), and its sign.
//! let root = control::while_loop(
//!     |x: Array| jnp::greater(jnp::abs(jnp::subtract(jnp::multiply(&x, &x)?, 2.0)?)?, 1e-6),
//!     |x: Array| jnp::multiply(0.5, jnp::add(&x, jnp::divide(2.0, &x)?)?),
//!     &Array::scalar(1.0f32),
//! )?;
//! let sign = control::cond(&jnp::greater(&root, 0.0)?, |_: ()| Ok(Array::scalar(1i32)),
//!     |_: ()| Ok(Array::scalar(-1i32)), &())?;
//! assert_eq!((root.to_vec::<f32>()?, sign.to_vec::<i32>()?), (vec![2f32.sqrt()], vec![1]));
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

mod cond;
mod scan;
mod while_loop;

use std::sync::Arc;

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::stage::trace_avals;
use crate::array::{Array, ShapedArray};
use crate::core::Pytree;
use crate::core::jaxpr::{ClosedJaxpr, Jaxpr};
use crate::core::{Param, Params};

pub use cond::{COND, cond, switch};
pub use scan::{SCAN, Scan, map, scan};
pub use while_loop::{WHILE, fori_loop, while_loop};

/// A body traced on `avals`: its jaxpr without constants (they lead its inputs), the values
/// of those constants (the operands the equation passes first), and `f`'s output.
pub(crate) struct Body<O> {
    pub(crate) jaxpr: Arc<ClosedJaxpr>,
    pub(crate) consts: Vec<Array>,
    pub(crate) out: O,
}

/// Traces `f` on tracers of `avals` (`what` names the body for errors), separating the
/// constants it captured into leading inputs (JAX's `pe.separate_consts`).
pub(crate) fn trace_body<O, F>(f: F, avals: &[ShapedArray]) -> Result<Body<O>, Error>
where
    O: Pytree,
    F: FnOnce(Vec<Array>) -> Result<O, Error>,
{
    let (closed, out) = trace_avals(f, avals, "control flow")?;
    let ClosedJaxpr { jaxpr, consts } = closed;
    let mut invars = jaxpr.constvars;
    invars.extend(jaxpr.invars);
    let jaxpr = Jaxpr {
        constvars: Vec::new(),
        invars,
        eqns: jaxpr.eqns,
        outvars: jaxpr.outvars,
    };
    Ok(Body {
        jaxpr: Arc::new(ClosedJaxpr {
            jaxpr,
            consts: Vec::new(),
        }),
        consts,
        out,
    })
}

/// The abstract values of an input's leaves.
pub(crate) fn avals_of(leaves: &[Array]) -> Vec<ShapedArray> {
    leaves.iter().map(|x| x.aval().clone()).collect()
}

/// JAX's `core.typematch`: same shape and dtype (weak types aside).
pub(crate) fn typematch(a: &ShapedArray, b: &ShapedArray) -> bool {
    a.shape() == b.shape() && a.dtype() == b.dtype()
}

/// JAX's short form of an aval in control-flow messages: `float32[3]`, `int32[]`.
pub(crate) fn str_short(a: &ShapedArray) -> String {
    let dims: Vec<String> = a.shape().iter().map(ToString::to_string).collect();
    format!("{}[{}]", a.dtype(), dims.join(","))
}

/// The leaf `i` of a carry as JAX's messages name it (`the input carry` for a single leaf,
/// else by its path).
fn component(i: usize, n: usize) -> String {
    if n == 1 {
        "the input carry".to_string()
    } else {
        format!("the input carry at path [{i}]")
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// JAX's `_check_carry_type`: the carry out of a body has the carry in's structure (number of
/// leaves) and types, else its `TypeError`.
pub(crate) fn check_carry_type(
    name: &str,
    ins: &[ShapedArray],
    outs: &[ShapedArray],
) -> Result<(), Error> {
    if ins.len() != outs.len() {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "{name} function carry input and carry output must have the same pytree \
                 structure, but they differ:\n\nThe input carry has {} leaves but the carry \
                 output has {}.\n\nRevise the function so that the carry output has the same \
                 pytree structure as the carry input.",
                ins.len(),
                outs.len()
            ),
        ));
    }
    let diffs: Vec<String> = ins
        .iter()
        .zip(outs)
        .enumerate()
        .filter(|(_, (a, b))| !typematch(a, b))
        .map(|(i, (a, b))| {
            format!(
                "{} has type {} but the corresponding output carry component has type {}{}",
                component(i, ins.len()),
                str_short(a),
                str_short(b),
                mismatch_extra(a, b)
            )
        })
        .collect();
    let differences = match diffs.as_slice() {
        [] => return Ok(()),
        [one] => format!("{}.\n", capitalize(one)),
        [init @ .., last] => {
            let mut s: String = init.iter().map(|d| format!("  * {d};\n")).collect();
            s.push_str(&format!("  * {last}.\n"));
            s
        }
    };
    Err(Error::refused(
        Exception::TypeError,
        format!(
            "{name} function carry input and carry output must have equal types, but they \
             differ:\n\n{differences}\nRevise the function so that all output types match the \
             corresponding input types."
        ),
    ))
}

/// JAX's `core.aval_mismatch_extra`: what differs.
fn mismatch_extra(a: &ShapedArray, b: &ShapedArray) -> String {
    let mut m = Vec::new();
    if a.dtype() != b.dtype() {
        m.push("the dtypes do not match");
    }
    if a.shape() != b.shape() {
        m.push("the shapes do not match");
    }
    match m.as_slice() {
        [] => String::new(),
        [one] => format!(", so {one}"),
        [init @ .., last] => format!(", so {}, and {last}", init.join(", ")),
    }
}

/// JAX's `_promote_weak_typed_input`: a weakly typed initial carry whose type the body
/// changes is converted to the dtype promotion gives it with the body's output (`true` if it
/// changed).
pub(crate) fn promote_weak_carry(init: &Array, out: &ShapedArray) -> Result<(Array, bool), Error> {
    if !init.weak_type() || typematch(init.aval(), out) {
        return Ok((init.clone(), false));
    }
    let rules = crate::config::rules();
    let operand = |a: &ShapedArray| {
        if a.weak_type() {
            dtype_lattice::Operand::weak_array(a.dtype())
        } else {
            dtype_lattice::Operand::array(a.dtype())
        }
    };
    let operands = [operand(init.aval()), operand(out)];
    let promoted = rules.result_type(&operands)?;
    let converted = crate::lax::ops::convert(init, promoted.dtype, false)?;
    Ok((converted, true))
}

/// A concrete scalar's value as an `i64` (a cond index, a loop bound: Python's `int(x)`), read
/// from its elements (nothing is bound, so nothing is staged).
pub(crate) fn concrete_int(x: &Array) -> Result<i64, Error> {
    use crate::repr::Scalar;
    let v = match x.element(0) {
        Some(Scalar::Int(i)) => i64::try_from(i).ok(),
        Some(Scalar::Bool(b)) => Some(i64::from(b)),
        Some(Scalar::Float(f)) if f.is_finite() => Some(f.trunc() as i64),
        _ => None,
    };
    v.ok_or_else(|| {
        Error::refused(
            Exception::TypeError,
            format!(
                "expected a concrete integer scalar, got {}",
                str_short(x.aval())
            ),
        )
    })
}

/// JAX's `ad.jvp_jaxpr`: `j` differentiated, as a jaxpr whose inputs and outputs come in
/// groups (`in_groups`/`out_groups` consecutive counts: a loop's constants, carry, scanned
/// operands), each group's primals followed by the tangents of its members that have one
/// (`nonzeros` for inputs; for outputs those with a tangent, or `instantiate`d, of a dtype
/// with a tangent space). Also which outputs have a tangent.
pub(crate) fn jvp_jaxpr(
    j: &ClosedJaxpr,
    nonzeros: &[bool],
    instantiate: &[bool],
    in_groups: &[usize],
    out_groups: &[usize],
) -> Result<(Arc<ClosedJaxpr>, Vec<bool>), Error> {
    use super::jvp::{JvpTrace, has_tangent_space, tangent_aval, tangent_zeros};
    let in_avals: Vec<ShapedArray> = j
        .jaxpr()
        .invars()
        .iter()
        .map(|v| v.aval().clone())
        .collect();
    // Binders: per group, primals then the nonzero tangents.
    let mut avals = Vec::new();
    let mut slots = Vec::new(); // (input index, is tangent)
    let mut start = 0;
    for &n in in_groups {
        let group = start..start + n;
        for (i, a) in in_avals
            .iter()
            .enumerate()
            .take(group.end)
            .skip(group.start)
        {
            avals.push(a.clone());
            slots.push((i, false));
        }
        for (i, a) in in_avals
            .iter()
            .enumerate()
            .take(group.end)
            .skip(group.start)
        {
            if nonzeros[i] {
                avals.push(tangent_aval(a));
                slots.push((i, true));
            }
        }
        start += n;
    }
    let out_nz = std::cell::RefCell::new(Vec::new());
    let (closed, _) = trace_avals(
        |leaves: Vec<Array>| -> Result<(Vec<Array>, ()), Error> {
            let mut primals: Vec<Option<Array>> = vec![None; in_avals.len()];
            let mut tangents: Vec<Option<Array>> = vec![None; in_avals.len()];
            for ((i, t), x) in slots.iter().zip(leaves) {
                if *t {
                    tangents[*i] = Some(x);
                } else {
                    primals[*i] = Some(x);
                }
            }
            let trace = Arc::new(JvpTrace::new(crate::core::current()));
            let inputs: Vec<Array> = primals
                .into_iter()
                .zip(tangents)
                .map(|(p, t)| {
                    p.map(|p| trace.pack(p, t)).ok_or_else(|| {
                        Error::refused(
                            Exception::TypeError,
                            "jvp_jaxpr: the groups do not cover every input",
                        )
                    })
                })
                .collect::<Result<_, Error>>()?;
            let as_trace: Arc<dyn crate::core::Trace> = trace.clone();
            let outs = crate::core::with_trace(Some(as_trace), || j.call(&inputs));
            let outs = outs.map(|outs| {
                outs.iter()
                    .map(|x| {
                        let (p, t) = trace.unpack(x);
                        (p.clone(), t.filter(|_| has_tangent_space(p.dtype())))
                    })
                    .collect::<Vec<_>>()
            });
            trace.kill();
            let outs = outs?;
            let mut nz = Vec::with_capacity(outs.len());
            let mut result = Vec::new();
            let mut start = 0;
            for &n in out_groups {
                let group = &outs[start..start + n];
                result.extend(group.iter().map(|(p, _)| p.clone()));
                for (k, (p, t)) in group.iter().enumerate() {
                    let inst = instantiate[start + k] && has_tangent_space(p.dtype());
                    match t {
                        Some(t) => result.push(t.clone()),
                        None if inst => result.push(tangent_zeros(p.aval())?),
                        None => {}
                    }
                }
                start += n;
            }
            for (k, (p, t)) in outs.iter().enumerate() {
                nz.push(t.is_some() || (instantiate[k] && has_tangent_space(p.dtype())));
            }
            *out_nz.borrow_mut() = nz;
            Ok((result, ()))
        },
        &avals,
        "jvp",
    )?;
    Ok((Arc::new(closed), out_nz.into_inner()))
}

/// JAX's `batching.batch_jaxpr_axes`: `j` mapped over `size` examples, each input batched
/// along `in_dims` (`None`: the same for every example), each output at `out_dims` (an
/// output the body leaves unbatched is broadcast there; `None`: it must be unbatched, else
/// it is batched at 0). The jaxpr, and which outputs are batched.
pub(crate) fn batch_jaxpr(
    j: &ClosedJaxpr,
    size: usize,
    in_dims: &[Option<usize>],
    out_dims: &[Option<usize>],
) -> Result<(Arc<ClosedJaxpr>, Vec<bool>), Error> {
    use super::batching::BatchTrace;
    use crate::lax::batching::{broadcast_axis, moveaxis};
    let avals: Vec<ShapedArray> = j
        .jaxpr()
        .invars()
        .iter()
        .zip(in_dims)
        .map(|(v, d)| match d {
            None => v.aval().clone(),
            Some(d) => {
                let mut shape = v.aval().shape().to_vec();
                shape.insert(*d, size);
                ShapedArray::new(&shape, v.aval().dtype(), v.aval().weak_type())
            }
        })
        .collect();
    let batched = std::cell::RefCell::new(Vec::new());
    let (closed, _) = trace_avals(
        |leaves: Vec<Array>| -> Result<(Vec<Array>, ()), Error> {
            let trace = Arc::new(BatchTrace::new(crate::core::current(), size));
            let inputs: Vec<Array> = leaves
                .into_iter()
                .zip(in_dims)
                .map(|(x, d)| trace.pack(x, *d))
                .collect();
            let as_trace: Arc<dyn crate::core::Trace> = trace.clone();
            let outs = crate::core::with_trace(Some(as_trace), || j.call(&inputs));
            let outs = outs.map(|o| o.iter().map(|x| trace.unpack(x)).collect::<Vec<_>>());
            trace.kill();
            let mut flags = Vec::new();
            let result = outs?
                .into_iter()
                .zip(out_dims)
                .map(|((x, src), dst)| {
                    flags.push(src.is_some() || dst.is_some());
                    match (src, dst) {
                        (None, None) => Ok(x),
                        (None, Some(d)) => broadcast_axis(&x, size, *d),
                        (Some(s), Some(d)) => moveaxis(&x, s, *d),
                        (Some(s), None) => moveaxis(&x, s, 0),
                    }
                })
                .collect::<Result<Vec<_>, Error>>()?;
            *batched.borrow_mut() = flags;
            Ok((result, ()))
        },
        &avals,
        "vmap",
    )?;
    Ok((Arc::new(closed), batched.into_inner()))
}

/// JAX's `_bcast_select_n` predicate: `pred` (batched at the front) broadcast to `x`'s shape
/// along its leading dimensions.
pub(crate) fn broadcast_prefix(pred: &Array, x: &Array) -> Result<Array, Error> {
    if pred.shape() == x.shape() {
        return Ok(pred.clone());
    }
    let dims: Vec<i64> = (0..pred.ndim() as i64).collect();
    let shape: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    crate::core::bind1(
        &crate::lax::BROADCAST_IN_DIM,
        &[pred],
        &Params::new()
            .with("shape", Param::Ints(shape))
            .with("broadcast_dimensions", Param::Ints(dims))
            .with("sharding", Param::None),
    )
}

/// JAX's carry fixpoint (of `_scan_jvp`, `_while_loop_jvp` and their batching rules): from
/// the initial carries' flags (has a tangent, is batched), `step` transforms the body for
/// the current flags and reports the output carries' flags; a carry is flagged once its
/// initial value or the body flags it. At most one step more than there are carries.
pub(crate) fn carry_fixpoint<T>(
    init: &[bool],
    mut step: impl FnMut(&[bool]) -> Result<(T, Vec<bool>), Error>,
) -> Result<(T, Vec<bool>, Vec<bool>), Error> {
    let mut carry = init.to_vec();
    loop {
        let (t, out) = step(&carry)?;
        if out[..carry.len()] == carry[..] {
            return Ok((t, out, carry));
        }
        for (c, o) in carry.iter_mut().zip(&out) {
            *c |= *o;
        }
    }
}

/// The carries' tangents for a loop's JVP: given ones, zeros for those the fixpoint gives a
/// tangent but whose initial tangent is symbolic, none for the others.
pub(crate) fn carry_tangents(
    primals: &[Array],
    tangents: &[Option<Array>],
    flags: &[bool],
) -> Result<Vec<Option<Array>>, Error> {
    primals
        .iter()
        .zip(tangents)
        .zip(flags)
        .map(|((p, t), &f)| match (t, f) {
            (None, true) => super::jvp::tangent_zeros(p.aval()).map(Some),
            (t, true) => Ok(t.clone()),
            _ => Ok(None),
        })
        .collect()
}

/// `values` handed out in order to the positions `flags` marks (`None` elsewhere).
pub(crate) fn scatter_flagged(flags: &[bool], values: &[Array]) -> Vec<Option<Array>> {
    let mut it = values.iter();
    flags
        .iter()
        .map(|&f| if f { it.next().cloned() } else { None })
        .collect()
}

/// The outputs of a split loop in order: the unknown part's where `unknown` is set, the known
/// part's elsewhere.
pub(crate) fn merge_split(
    unknown: &[bool],
    known_out: &[Array],
    unknown_out: &[Array],
    what: &str,
) -> Result<crate::core::Outputs, Error> {
    let (mut k, mut u) = (known_out.iter(), unknown_out.iter());
    unknown
        .iter()
        .map(|&is_uk| if is_uk { u.next() } else { k.next() })
        .map(|x| {
            x.cloned().ok_or_else(|| {
                Error::refused(
                    Exception::TypeError,
                    format!("{what} partial eval lost an output"),
                )
            })
        })
        .collect()
}

/// A body transposed (the transpose rules' common step): `j` with its inputs where `linear`
/// is unset fixed to `known` (in order) as constants, run backwards from the outputs'
/// cotangents `cts`; the linear inputs' cotangents, zeros where none reaches them.
pub(crate) fn transpose_body(
    j: &ClosedJaxpr,
    linear: &[bool],
    known: &[Array],
    cts: &[Array],
) -> Result<Vec<Array>, Error> {
    let mut jaxpr = j.jaxpr.clone();
    let mut consts = j.consts.clone();
    let mut known = known.iter();
    let mut lin_vars = Vec::new();
    let mut lin_avals = Vec::new();
    for (v, &l) in jaxpr.invars.iter().zip(linear) {
        if l {
            lin_vars.push(v.clone());
            lin_avals.push(v.aval().clone());
        } else if let Some(x) = known.next() {
            jaxpr.constvars.push(v.clone());
            consts.push(x.clone());
        }
    }
    jaxpr.invars = lin_vars;
    let closed = ClosedJaxpr { jaxpr, consts };
    let in_cts = super::vjp::backward_pass(&closed, cts.iter().cloned().map(Some).collect())?;
    in_cts
        .into_iter()
        .zip(&lin_avals)
        .map(|(c, a)| match c {
            Some(c) => Ok(c),
            None => super::jvp::tangent_zeros(a),
        })
        .collect()
}
