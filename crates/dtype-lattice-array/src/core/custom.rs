//! `jax.custom_jvp` (JEP 2026): a function with its own JVP rule. Evaluation calls the
//! function; a JVP trace calls the rule with the primals as they are (concrete outside `jit`:
//! value-dependent Rust control flow works in both); staging records a `custom_jvp_call`
//! equation that keeps the rule, so differentiating the staged jaxpr later still uses it;
//! other transformations trace through the function.

use std::fmt;
use std::sync::{Arc, Mutex};

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::current;
use super::jaxpr::ClosedJaxpr;
use super::jvp::zeros_like;
use super::pytree::Pytree;
use crate::array::{Array, ShapedArray};
use crate::prim::{Avals, Outputs, Param, Params, Primitive};

/// A function and its JVP rule over flattened leaves.
pub(crate) trait CustomJvpRule: Send + Sync {
    /// The function.
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error>;
    /// The rule: primal outputs and tangent outputs.
    fn jvp(
        &self,
        primals: Vec<Array>,
        tangents: Vec<Array>,
    ) -> Result<(Vec<Array>, Vec<Array>), Error>;
}

/// A [`CustomJvp`]'s rule as a primitive parameter (`jvp=<rule>`).
#[derive(Clone)]
pub struct RuleRef(pub(crate) Arc<dyn CustomJvpRule>);

impl fmt::Debug for RuleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<custom jvp rule>")
    }
}

impl PartialEq for RuleRef {
    fn eq(&self, other: &RuleRef) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// `jax.custom_jvp`: `f` with the JVP rule `rule(primals, tangents) -> (outputs, output
/// tangents)`, both over pytrees of `I` and `O`.
///
/// ```
/// use dtype_lattice_array::{Array, core::{CustomJvp, grad}, numpy as jnp};
/// // f(x) = 2x with a custom derivative of 3 (the custom-derivatives note's example).
/// let f = CustomJvp::new(
///     |x: Array| jnp::multiply(2.0, &x),
///     |x: Array, t: Array| Ok((jnp::multiply(2.0, &x)?, jnp::multiply(3.0, &t)?)),
/// );
/// let g = grad(|x: Array| f.call(&x), &Array::scalar(1.0f32))?;
/// assert_eq!(g.to_vec::<f32>()?, [3.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
pub struct CustomJvp<I, O> {
    inner: Arc<Inner<I, O>>,
}

type Fun<I, O> = dyn Fn(I) -> Result<O, Error> + Send + Sync;
type Rule<I, O> = dyn Fn(I, I) -> Result<(O, O), Error> + Send + Sync;

struct Inner<I, O> {
    f: Box<Fun<I, O>>,
    rule: Box<Rule<I, O>>,
    /// The structures of the arguments and outputs of the call in progress (or last).
    shapes: Mutex<Option<(I, O)>>,
    input: Mutex<Option<I>>,
}

impl<I, O> CustomJvp<I, O>
where
    I: Pytree + Clone + Send + Sync + 'static,
    O: Pytree + Clone + Send + Sync + 'static,
{
    /// `f` with the JVP rule `rule`.
    pub fn new(
        f: impl Fn(I) -> Result<O, Error> + Send + Sync + 'static,
        rule: impl Fn(I, I) -> Result<(O, O), Error> + Send + Sync + 'static,
    ) -> CustomJvp<I, O> {
        CustomJvp {
            inner: Arc::new(Inner {
                f: Box::new(f),
                rule: Box::new(rule),
                shapes: Mutex::new(None),
                input: Mutex::new(None),
            }),
        }
    }

    /// Applies the function (through whatever transformations are current).
    ///
    /// # Errors
    ///
    /// Whatever the function or its rule return.
    pub fn call(&self, args: &I) -> Result<O, Error> {
        if current().is_none() {
            return (self.inner.f)(args.clone());
        }
        if let Ok(mut i) = self.inner.input.lock() {
            *i = Some(args.clone());
        }
        let rule: Arc<dyn CustomJvpRule> = self.inner.clone();
        let outs = dispatch(&RuleRef(rule), &args.leaves())?;
        let template = self
            .inner
            .shapes
            .lock()
            .ok()
            .and_then(|s| s.as_ref().map(|(_, o)| o.clone()))
            .ok_or_else(|| {
                Error::refused(
                    Exception::TypeError,
                    "custom_jvp: the function returned nothing",
                )
            })?;
        template.rebuild(&mut outs.into_iter())
    }
}

impl<I, O> Inner<I, O>
where
    I: Pytree + Clone,
    O: Pytree + Clone,
{
    fn template(&self) -> Result<I, Error> {
        self.input
            .lock()
            .ok()
            .and_then(|i| i.clone())
            .ok_or_else(|| Error::refused(Exception::TypeError, "custom_jvp: no arguments"))
    }

    fn remember(&self, args: &I, out: &O) {
        if let Ok(mut s) = self.shapes.lock() {
            *s = Some((args.clone(), out.clone()));
        }
    }
}

impl<I, O> CustomJvpRule for Inner<I, O>
where
    I: Pytree + Clone + Send + Sync,
    O: Pytree + Clone + Send + Sync,
{
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        let args = self.template()?.rebuild(&mut args.into_iter())?;
        let out = (self.f)(args.clone())?;
        self.remember(&args, &out);
        Ok(out.leaves())
    }

    fn jvp(
        &self,
        primals: Vec<Array>,
        tangents: Vec<Array>,
    ) -> Result<(Vec<Array>, Vec<Array>), Error> {
        let template = self.template()?;
        let p = template.rebuild(&mut primals.into_iter())?;
        let t = template.rebuild(&mut tangents.into_iter())?;
        let (out, tout) = (self.rule)(p.clone(), t)?;
        self.remember(&p, &out);
        Ok((out.leaves(), tout.leaves()))
    }
}

/// Applies a custom-JVP function under the current trace.
pub(crate) fn dispatch(rule: &RuleRef, args: &[Array]) -> Result<Vec<Array>, Error> {
    match current() {
        None => rule.0.call(args.to_vec()),
        Some(trace) => trace.process_custom_jvp(rule, args),
    }
}

/// The staged form: `custom_jvp_call[call_jaxpr={...} jvp=<rule> num_consts=0
/// symbolic_zeros=False]`.
pub(crate) fn stage(rule: &RuleRef, args: &[Array]) -> Result<Vec<Array>, Error> {
    let f = |xs: Vec<Array>| rule.0.call(xs);
    let (closed, _) = super::stage::trace(&f, &args.to_vec(), "custom_jvp")?;
    let params = Params::new()
        .with("call_jaxpr", Param::Jaxpr(Arc::new(closed)))
        .with("jvp", Param::CustomJvp(rule.clone()))
        .with("num_consts", Param::Int(0))
        .with("symbolic_zeros", Param::Bool(false));
    let refs: Vec<&Array> = args.iter().collect();
    Ok(crate::prim::bind(&CUSTOM_JVP_CALL, &refs, &params)?.into_vec())
}

/// The JVP of a custom-JVP function: its rule, on tangents with zeros instantiated.
pub(crate) fn apply_rule(
    rule: &RuleRef,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Array>), Error> {
    let t = primals
        .iter()
        .zip(tangents)
        .map(|(p, t)| match t {
            Some(t) => Ok(t.clone()),
            None => zeros_like(p),
        })
        .collect::<Result<Vec<_>, Error>>()?;
    rule.0.jvp(primals.to_vec(), t)
}

/// The `custom_jvp_call` primitive: applies `call_jaxpr`; its JVP applies the rule.
pub(crate) static CUSTOM_JVP_CALL: Primitive = Primitive {
    name: "custom_jvp_call",
    arity: None,
    shape_rule: call_shape_rule,
    impl_rule: call_impl_rule,
    jvp: Some(call_jvp_rule),
    transpose: None,
};

fn parts(params: &Params) -> Result<(&Arc<ClosedJaxpr>, &RuleRef, usize), Error> {
    match (
        params.get("call_jaxpr"),
        params.get("jvp"),
        params.get("num_consts"),
    ) {
        (Some(Param::Jaxpr(j)), Some(Param::CustomJvp(r)), Some(Param::Int(n))) => {
            Ok((j, r, *n as usize))
        }
        _ => Err(Error::refused(
            Exception::TypeError,
            "custom_jvp_call() needs call_jaxpr, jvp and num_consts",
        )),
    }
}

fn call_shape_rule(
    _prim: &'static Primitive,
    _inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let (j, _, _) = parts(params)?;
    Ok(j.jaxpr.out_avals().into_iter().collect())
}

fn call_impl_rule(
    _prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    _out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let (j, _, _) = parts(params)?;
    let args: Vec<Array> = inputs.iter().map(|&x| x.clone()).collect();
    Ok(j.call(&args)?.into_iter().collect())
}

fn call_jvp_rule(
    _prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let (_, rule, n) = parts(params)?;
    let (p, t) = apply_rule(rule, &primals[n..], &tangents[n..])?;
    Ok((p.into_iter().collect(), t.into_iter().map(Some).collect()))
}
