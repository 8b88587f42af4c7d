//! Forward-mode differentiation (JAX's `JVPTrace`): each tracer carries a primal and a
//! tangent (`None`: a symbolic zero); a primitive's JVP rule, bound in the parent trace,
//! computes both.
//!
//! Integer, boolean and key values have `float0` tangents (JAX's trivial vector space): a
//! symbolic zero inside the trace whatever the rules compute, `float0` zeros when
//! instantiated (an output tangent, a custom rule's input tangent).

use std::any::Any;
use std::sync::Arc;

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::stage::{apply, inlined};
use crate::array::Array;
use crate::core::Pytree;
use crate::core::{Outputs, Params, Primitive};
use crate::core::{Payload, Trace, TraceTag, Tracer, check_alive, current, with_trace};

/// A JVP tracer's primal and tangent (`None`: zero).
pub(crate) struct Dual {
    primal: Array,
    tangent: Option<Array>,
}

impl Payload for Dual {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn concrete(&self) -> Option<Array> {
        Some(self.primal.clone())
    }
}

pub(crate) struct JvpTrace {
    tag: Arc<TraceTag>,
    parent: Option<Arc<dyn Trace>>,
}

impl JvpTrace {
    pub(crate) fn new(parent: Option<Arc<dyn Trace>>) -> JvpTrace {
        JvpTrace {
            tag: TraceTag::new("JVPTracer", "jvp"),
            parent,
        }
    }

    /// Ends the transformation.
    pub(crate) fn kill(&self) {
        self.tag.kill();
    }

    pub(crate) fn unpack(&self, x: &Array) -> (Array, Option<Array>) {
        match x.tracer().and_then(|t| t.payload_of::<Dual>(&self.tag)) {
            Some(d) => (d.primal.clone(), d.tangent.clone()),
            None => (x.clone(), None),
        }
    }

    pub(crate) fn pack(&self, primal: Array, tangent: Option<Array>) -> Array {
        match tangent {
            None => primal,
            Some(t) => {
                let aval = primal.aval().clone();
                Array::from_tracer(
                    aval,
                    Tracer::new(
                        &self.tag,
                        Dual {
                            primal,
                            tangent: Some(t),
                        },
                    ),
                )
            }
        }
    }
}

impl Trace for JvpTrace {
    fn process_primitive(
        &self,
        prim: &'static Primitive,
        inputs: &[&Array],
        params: &Params,
    ) -> Result<Outputs, Error> {
        check_alive(inputs)?;
        if let Some(j) = inlined(prim, params) {
            return apply(&j, inputs);
        }
        let (primals, tangents): (Vec<Array>, Vec<Option<Array>>) =
            inputs.iter().map(|x| self.unpack(x)).unzip();
        if tangents.iter().all(Option::is_none) {
            let refs: Vec<&Array> = primals.iter().collect();
            return with_trace(self.parent.clone(), || {
                crate::core::bind(prim, &refs, params)
            });
        }
        let rule = prim.jvp.ok_or_else(|| {
            Error::refused(
                Exception::NotImplementedError,
                format!("Differentiation rule for '{}' not implemented", prim.name),
            )
        })?;
        let (outs, touts) = with_trace(self.parent.clone(), || {
            rule(prim, &primals, &tangents, params)
        })?;
        Ok(outs
            .into_iter()
            .zip(touts.into_iter().chain(std::iter::repeat(None)))
            .map(|(o, t)| {
                // An integer (or bool, key) result's tangent is float0: zero.
                let t = t.filter(|_| has_tangent_space(o.dtype()));
                self.pack(o, t)
            })
            .collect())
    }

    fn process_custom(
        &self,
        rule: &crate::core::Custom,
        args: &[Array],
    ) -> Result<Vec<Array>, Error> {
        let refs: Vec<&Array> = args.iter().collect();
        check_alive(&refs)?;
        let (primals, tangents): (Vec<Array>, Vec<Option<Array>>) =
            args.iter().map(|x| self.unpack(x)).unzip();
        if tangents.iter().all(Option::is_none) {
            return with_trace(self.parent.clone(), || rule.dispatch(&primals));
        }
        let (outs, touts) = with_trace(self.parent.clone(), || rule.jvp(&primals, &tangents))?;
        Ok(outs
            .into_iter()
            .zip(touts)
            .map(|(o, t)| {
                let t = Some(t).filter(|_| has_tangent_space(o.dtype()));
                self.pack(o, t)
            })
            .collect())
    }
}

/// Output tangents (`None`: zero).
pub(crate) type Tangents = Vec<Option<Array>>;

/// Whether values of `dtype` have tangents of their own dtype (floating and complex dtypes);
/// the others' tangents are `float0`, always zero.
pub(crate) fn has_tangent_space(dtype: dtype_lattice::DType) -> bool {
    dtype.tangent_dtype() == dtype && !dtype.is_float0()
}

/// JAX's checks of `jax.jvp`'s tangents against the primals, leaf by leaf: the dtype (the
/// primal's tangent dtype: `float0` for integers, bools and keys) first, then the shape.
pub(crate) fn check_tangents(primals: &[Array], tangents: &[Array]) -> Result<(), Error> {
    if primals.len() != tangents.len() {
        return Err(Error::refused(
            Exception::TypeError,
            "primal and tangent arguments to jax.jvp must have the same tree structure",
        ));
    }
    for (p, t) in primals.iter().zip(tangents) {
        let want = p.dtype().tangent_dtype();
        if t.dtype() != want {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "primal and tangent arguments to jax.jvp do not match; dtypes must be \
                     equal, or in case of int/bool primal dtype the tangent dtype must be \
                     float0.Got primal dtype {} and so expected tangent dtype {}, but got \
                     tangent dtype {} instead.",
                    p.dtype().numpy_str(),
                    want.numpy_str(),
                    t.dtype().numpy_str()
                ),
            ));
        }
        if p.shape() != t.shape() {
            return Err(Error::refused(
                Exception::ValueError,
                format!(
                    "jvp called with different primal and tangent shapes;Got primal shape {} \
                     and tangent shape as {}",
                    crate::array::py_shape(p.shape()),
                    crate::array::py_shape(t.shape())
                ),
            ));
        }
    }
    Ok(())
}

/// Runs `f` on JVP tracers of `primals` and `tangents` (flattened leaves), returning the
/// output leaves' primals and tangents (`None`: zero).
fn jvp_leaves<I, O, F>(f: F, primals: &I, tangents: &I) -> Result<(O, Vec<Array>, Tangents), Error>
where
    I: Pytree,
    O: Pytree,
    F: FnOnce(I) -> Result<O, Error>,
{
    let ts = tangents.leaves();
    check_tangents(&primals.leaves(), &ts)?;
    run_jvp(&Arc::new(JvpTrace::new(current())), f, primals, ts)
}

/// Runs `f` under `trace` on its tracers of `primals`' leaves with `tangents` (one per leaf),
/// then kills the trace: `f`'s output, and its leaves' primals and tangents (`None`: zero).
/// A float0 tangent (of an integer, bool or key) is a symbolic zero, in and out.
pub(crate) fn run_jvp<I, O, F>(
    trace: &Arc<JvpTrace>,
    f: F,
    primals: &I,
    tangents: Vec<Array>,
) -> Result<(O, Vec<Array>, Tangents), Error>
where
    I: Pytree,
    O: Pytree,
    F: FnOnce(I) -> Result<O, Error>,
{
    let inputs: Vec<Array> = primals
        .leaves()
        .into_iter()
        .zip(tangents)
        .map(|(p, t)| {
            let t = Some(t).filter(|_| has_tangent_space(p.dtype()));
            trace.pack(p, t)
        })
        .collect();
    let input = primals.rebuild(&mut inputs.into_iter())?;
    let as_trace: Arc<dyn Trace> = trace.clone();
    let out = with_trace(Some(as_trace), || f(input));
    let result = out.map(|out| {
        let (p, t): (Vec<Array>, Vec<Option<Array>>) = out
            .leaves()
            .iter()
            .map(|x| {
                let (p, t) = trace.unpack(x);
                let t = t.filter(|_| has_tangent_space(p.dtype()));
                (p, t)
            })
            .unzip();
        (out, p, t)
    });
    trace.kill();
    result
}

/// `jax.jvp(f, primals, tangents)`: `f`'s outputs and their directional derivatives along
/// `tangents` (a pytree of `primals`' structure and shapes, each leaf of the primal's
/// tangent dtype: its own for floating and complex primals, `float0` for integers, bools and
/// keys).
///
/// An integer (bool, key) output's tangent is `float0` zeros, whatever `f`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, jvp, numpy as jnp};
/// let x = Array::scalar(2.0f32);
/// let (y, dy) = jvp(|x: Array| jnp::multiply(&x, &x), &x, &Array::scalar(1.0f32))?;
/// assert_eq!((y.to_vec::<f32>()?, dy.to_vec::<f32>()?), (vec![4.0], vec![4.0]));
///
/// // An integer primal takes a float0 tangent; its outputs' tangents are float0 too.
/// let n = Array::from_vec(vec![1i32, 2]);
/// let t0 = jnp::zeros(&[2], DType::Float0)?;
/// let (m, dm) = jvp(|n: Array| jnp::multiply(&n, 3), &n, &t0)?;
/// assert_eq!((m.to_vec::<i32>()?, dm.dtype()), (vec![3, 6], DType::Float0));
/// assert_eq!(dm.to_string(), "TypedNdArray([(b'',), (b'',)], dtype=void)");
/// // An integer tangent is JAX's TypeError.
/// let e = jvp(|n: Array| Ok(n), &Array::scalar(1i32), &Array::scalar(1i32)).unwrap_err();
/// assert!(e.message().ends_with(
///     "Got primal dtype int32 and so expected tangent dtype [('float0', 'V')], but got \
///      tangent dtype int32 instead."));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `TypeError` for tangents of another dtype than the primals' tangent dtypes (or
/// another structure), its `ValueError` for tangents of other shapes; `NotImplementedError`
/// for a primitive without a JVP rule; whatever `f` returns.
pub fn jvp<I, O, F>(f: F, primals: &I, tangents: &I) -> Result<(O, O), Error>
where
    I: Pytree,
    O: Pytree,
    F: FnOnce(I) -> Result<O, Error>,
{
    let (out, p, t) = jvp_leaves(f, primals, tangents)?;
    let t: Vec<Array> = p
        .iter()
        .zip(t)
        .map(|(p, t)| match t {
            Some(t) => Ok(t),
            None => tangent_zeros(p.aval()),
        })
        .collect::<Result<_, Error>>()?;
    Ok((
        out.rebuild(&mut p.into_iter())?,
        out.rebuild(&mut t.into_iter())?,
    ))
}

/// The tangent leaves of `f` at `primals` along `tangents`, `None` where the output does not
/// depend on the inputs (for transformations built on JVP).
///
/// # Errors
///
/// As [`jvp`].
pub fn linearize_jvp<I, O, F>(
    f: F,
    primals: &I,
    tangents: &I,
) -> Result<(Vec<Array>, Vec<Option<Array>>), Error>
where
    I: Pytree,
    O: Pytree,
    F: FnOnce(I) -> Result<O, Error>,
{
    jvp_leaves(f, primals, tangents).map(|(_, p, t)| (p, t))
}

/// The tangent aval of a primal aval (JAX's `to_tangent_aval`): its shape and weak type, its
/// tangent dtype (`float0` for integers, bools and keys).
pub(crate) fn tangent_aval(a: &crate::array::ShapedArray) -> crate::array::ShapedArray {
    a.with_dtype(a.dtype().tangent_dtype())
}

/// Zero tangents of a primal of `aval` (strong), under the current trace: zeros of its dtype,
/// or `float0` zeros for an integer, bool or key primal (JAX's instantiated symbolic zero).
pub(crate) fn tangent_zeros(aval: &crate::array::ShapedArray) -> Result<Array, Error> {
    zeros(&tangent_aval(aval))
}

pub(crate) use crate::lax::ops::zeros;

/// `jax.lax.stop_gradient(x)`: `x` unchanged, but a constant to every differentiation around
/// it (its tangent is zero, so no cotangent flows back through it). Applied to each leaf of a
/// pytree as the `stop_gradient` primitive; key arrays are returned as they are (JAX skips
/// extended dtypes).
///
/// ```
/// use dtype_lattice_array::{Array, grad, stop_gradient, numpy as jnp};
/// // d/dx (x * stop_gradient(x)) = stop_gradient(x) = 3.
/// let g = grad(|x: Array| jnp::multiply(&x, stop_gradient(&x)?), &Array::scalar(3.0f32))?;
/// assert_eq!(g.to_vec::<f32>()?, [3.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// An escaped tracer among the leaves (`UnexpectedTracerError`).
pub fn stop_gradient<T: Pytree>(x: &T) -> Result<T, Error> {
    let leaves = x
        .leaves()
        .into_iter()
        .map(|leaf| {
            if leaf.dtype().is_extended() {
                Ok(leaf)
            } else {
                crate::core::bind1(
                    &crate::lax::structural::STOP_GRADIENT,
                    &[&leaf],
                    &Default::default(),
                )
            }
        })
        .collect::<Result<Vec<_>, Error>>()?;
    x.rebuild(&mut leaves.into_iter())
}
