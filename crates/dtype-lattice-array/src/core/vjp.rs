//! Reverse mode as JAX builds it: `linearize` runs the JVP with the tangents unknown to a
//! partial evaluator, so the primal computation runs (in the enclosing trace) while the
//! tangent computation is staged into a linear jaxpr; `vjp` transposes that jaxpr (each linear
//! primitive's transpose rule, equations in reverse); `grad` is the VJP of a scalar with
//! cotangent 1.

use std::collections::HashMap;
use std::sync::Arc;

use dtype_lattice::error::Exception;
use dtype_lattice::{Error, Kind};

use super::jaxpr::{Atom, ClosedJaxpr};
use super::jvp::{JvpTrace, zeros};
use super::pytree::Pytree;
use super::stage::Staging;
use super::{Trace, current, with_trace};
use crate::array::{Array, ShapedArray};
use crate::prim::transpose::Lin;

/// A linearized function: the primal outputs' structure and the linear jaxpr from input
/// tangents to output tangents (`None` outputs: zero).
pub struct Linearized<O> {
    out: O,
    in_avals: Vec<ShapedArray>,
    jaxpr: ClosedJaxpr,
    /// Which outputs of the jaxpr each output leaf is (`None`: its tangent is zero).
    out_index: Vec<Option<usize>>,
    out_avals: Vec<ShapedArray>,
}

impl<O: Pytree> Linearized<O> {
    /// The primal outputs.
    pub fn primal(&self) -> &O {
        &self.out
    }

    /// The linear jaxpr (input tangents to the output tangents that are not zero).
    pub fn jaxpr(&self) -> &ClosedJaxpr {
        &self.jaxpr
    }

    /// Cotangents of the inputs' leaves for cotangents `cts` of the output leaves.
    ///
    /// # Errors
    ///
    /// `TypeError` for cotangents of other avals than the outputs; `NotImplementedError` for
    /// a primitive without a transpose rule.
    pub fn transpose_leaves(&self, cts: &[Array]) -> Result<Vec<Array>, Error> {
        if cts.len() != self.out_avals.len()
            || cts
                .iter()
                .zip(&self.out_avals)
                .any(|(c, a)| c.shape() != a.shape())
        {
            return Err(Error::refused(
                Exception::TypeError,
                "vjp: cotangents must have the structure and shapes of the outputs",
            ));
        }
        let mut out_cts: Vec<Option<Array>> = vec![None; self.jaxpr.jaxpr.outvars.len()];
        for (i, c) in self.out_index.iter().zip(cts) {
            if let Some(i) = i {
                out_cts[*i] = Some(c.clone());
            }
        }
        let ins = backward_pass(&self.jaxpr, out_cts)?;
        ins.into_iter()
            .zip(&self.in_avals)
            .map(|(c, aval)| match c {
                Some(c) => Ok(c),
                None => zeros(aval),
            })
            .collect()
    }
}

/// `jax.linearize`: `f`'s outputs at `primals` and its linear map, as a jaxpr.
///
/// # Errors
///
/// Whatever `f` returns; `NotImplementedError` for a primitive without a JVP rule.
pub fn linearize<I, O, F>(f: F, primals: &I) -> Result<Linearized<O>, Error>
where
    I: Pytree,
    O: Pytree,
    F: FnOnce(I) -> Result<O, Error>,
{
    let parent = current();
    let pe = Staging::partial(parent.clone());
    let ps = primals.leaves();
    let in_avals: Vec<ShapedArray> = ps.iter().map(|x| tangent_aval(x.aval())).collect();
    let (invars, tangents): (Vec<_>, Vec<Array>) =
        in_avals.iter().map(|a| pe.input(a.clone())).unzip();
    let pe_trace: Arc<dyn Trace> = pe.clone();
    let jvp = Arc::new(JvpTrace::new(Some(pe_trace)));
    let inputs: Vec<Array> = ps
        .into_iter()
        .zip(tangents)
        .map(|(p, t)| jvp.pack(p, Some(t)))
        .collect();
    let input = primals.rebuild(&mut inputs.into_iter())?;
    let jvp_trace: Arc<dyn Trace> = jvp.clone();
    let result = with_trace(Some(jvp_trace), || f(input)).map(|out| {
        let (p, t): (Vec<Array>, Vec<Option<Array>>) =
            out.leaves().iter().map(|x| jvp.unpack(x)).unzip();
        (out, p, t)
    });
    jvp.kill();
    let (out, p, t) = match result {
        Ok(r) => r,
        Err(e) => {
            pe.tag().kill();
            return Err(e);
        }
    };
    // Output tangents that the tangent inputs reach are staged; others are zero (or, for a
    // tangent known without them, a constant of the linear map: zero in a linear function).
    let mut outs: Vec<Array> = Vec::new();
    let mut out_index = Vec::new();
    for tan in &t {
        match tan {
            Some(x) if pe.owns(x) => {
                out_index.push(Some(outs.len()));
                outs.push(x.clone());
            }
            _ => out_index.push(None),
        }
    }
    let jaxpr = pe.finish(invars, &outs);
    pe.tag().kill();
    let out_avals = p.iter().map(|x| x.aval().clone()).collect();
    let primal = out.rebuild(&mut p.into_iter())?;
    Ok(Linearized {
        out: primal,
        in_avals,
        jaxpr,
        out_index,
        out_avals,
    })
}

/// The tangent aval of a primal's (strong; integers keep their dtype for zeros).
fn tangent_aval(a: &ShapedArray) -> ShapedArray {
    a.with_weak_type(a.weak_type())
}

/// `jax.vjp`: `f`'s outputs at `primals` and a function from output cotangents to input
/// cotangents.
///
/// ```
/// use dtype_lattice_array::{Array, core::vjp, numpy as jnp};
/// let x = Array::from_vec(vec![1.0f32, 2.0]);
/// let (y, pullback) = vjp(|x: Array| jnp::multiply(&x, &x), &x)?;
/// let ct: Array = pullback(&Array::from_vec(vec![1.0f32, 1.0]))?;
/// assert_eq!(ct.to_vec::<f32>()?, [2.0, 4.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`linearize`].
#[allow(clippy::type_complexity)]
pub fn vjp<I, O, F>(f: F, primals: &I) -> Result<(O, impl Fn(&O) -> Result<I, Error>), Error>
where
    I: Pytree + Clone,
    O: Pytree + Clone,
    F: FnOnce(I) -> Result<O, Error>,
{
    let lin = linearize(f, primals)?;
    let template = primals.clone();
    let out = lin.primal().clone();
    let pullback = move |cts: &O| {
        let leaves = lin.transpose_leaves(&cts.leaves())?;
        template.rebuild(&mut leaves.into_iter())
    };
    Ok((out, pullback))
}

/// `jax.value_and_grad(f)(x)`: the scalar `f(x)` and its gradient (a pytree of `x`'s
/// structure).
///
/// ```
/// use dtype_lattice_array::{Array, core::value_and_grad, numpy as jnp};
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
/// let (v, g) = value_and_grad(|x: Array| jnp::sum(jnp::multiply(&x, &x)?, Default::default(), false), &x)?;
/// assert_eq!(v.to_vec::<f32>()?, [14.0]);
/// assert_eq!(g.to_vec::<f32>()?, [2.0, 4.0, 6.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `TypeError` when `f`'s output is not a scalar or not a float; as [`linearize`].
pub fn value_and_grad<I, F>(f: F, x: &I) -> Result<(Array, I), Error>
where
    I: Pytree + Clone,
    F: FnOnce(I) -> Result<Array, Error>,
{
    let lin = linearize(f, x)?;
    let y = lin.primal().clone();
    if y.ndim() != 0 {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "Gradient only defined for scalar-output functions. Output had shape: {}.",
                crate::array::py_shape(y.shape())
            ),
        ));
    }
    if !matches!(y.dtype().kind(), Kind::Float | Kind::Complex) {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "grad requires real- or complex-valued outputs (input dtype that is a \
                 sub-dtype of np.inexact), but got {}. For holomorphic differentiation, pass \
                 holomorphic=True. For differentiation of non-holomorphic functions involving \
                 complex outputs, use jax.vjp directly.",
                y.dtype()
            ),
        ));
    }
    let one = super::jaxpr::scalar(1.0, y.dtype())?;
    let leaves = lin.transpose_leaves(&[one])?;
    Ok((y, x.rebuild(&mut leaves.into_iter())?))
}

/// `jax.grad(f)(x)`: the gradient of the scalar `f` at `x`.
///
/// # Errors
///
/// As [`value_and_grad`].
pub fn grad<I, F>(f: F, x: &I) -> Result<I, Error>
where
    I: Pytree + Clone,
    F: FnOnce(I) -> Result<Array, Error>,
{
    value_and_grad(f, x).map(|(_, g)| g)
}

/// The transpose of a linear jaxpr: cotangents of its inputs (`None`: zero) from cotangents of
/// its outputs, the equations taken in reverse, each primitive's transpose rule bound under the
/// current trace (so a backward pass can itself be staged or differentiated).
pub(crate) fn backward_pass(
    closed: &ClosedJaxpr,
    out_cts: Vec<Option<Array>>,
) -> Result<Vec<Option<Array>>, Error> {
    let j = &closed.jaxpr;
    let consts: HashMap<u32, &Array> = j
        .constvars
        .iter()
        .map(|v| v.id)
        .zip(&closed.consts)
        .collect();
    let mut cts: HashMap<u32, Array> = HashMap::new();
    let add = |cts: &mut HashMap<u32, Array>, id: u32, c: Array| -> Result<(), Error> {
        let sum = match cts.remove(&id) {
            Some(prev) => crate::prim::lax::add_any(&prev, &c)?,
            None => c,
        };
        cts.insert(id, sum);
        Ok(())
    };
    for (a, c) in j.outvars.iter().zip(out_cts) {
        if let (Atom::Var(v), Some(c)) = (a, c)
            && !consts.contains_key(&v.id)
        {
            add(&mut cts, v.id, c)?;
        }
    }
    for eqn in j.eqns.iter().rev() {
        let outs: Vec<Option<Array>> = eqn.outputs.iter().map(|v| cts.remove(&v.id)).collect();
        if outs.iter().all(Option::is_none) {
            continue;
        }
        let ins: Vec<Lin> = eqn
            .inputs
            .iter()
            .map(|a| match a {
                Atom::Literal(x) => Lin::Known(x.clone()),
                Atom::Var(v) => match consts.get(&v.id) {
                    Some(x) => Lin::Known((*x).clone()),
                    None => Lin::Linear(v.aval.clone()),
                },
            })
            .collect();
        let rule = eqn.prim.transpose.ok_or_else(|| {
            Error::refused(
                Exception::NotImplementedError,
                format!(
                    "Transpose rule (for reverse-mode differentiation) for '{}' not implemented",
                    eqn.prim.name
                ),
            )
        })?;
        let in_cts = rule(eqn.prim, &outs, &ins, &eqn.params)?;
        for ((a, lin), c) in eqn.inputs.iter().zip(&ins).zip(in_cts) {
            if let (Atom::Var(v), Lin::Linear(_), Some(c)) = (a, lin, c) {
                add(&mut cts, v.id, c)?;
            }
        }
    }
    Ok(j.invars.iter().map(|v| cts.remove(&v.id)).collect())
}
