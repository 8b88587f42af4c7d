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
    batch: Some(jvp_call_batch_rule),
};

fn parts(params: &Params) -> Result<(&RuleRef, usize), Error> {
    match (params.get("jvp"), params.get("num_consts")) {
        (Some(Param::CustomJvp(r)), Some(Param::Int(n))) => Ok((r, *n as usize)),
        _ => Err(Error::refused(
            Exception::TypeError,
            "custom_jvp_call() needs call_jaxpr, jvp and num_consts",
        )),
    }
}

fn call_jaxpr(params: &Params) -> Result<&Arc<ClosedJaxpr>, Error> {
    match params.get("call_jaxpr") {
        Some(Param::Jaxpr(j)) => Ok(j),
        _ => Err(Error::refused(
            Exception::TypeError,
            "missing required keyword argument: 'call_jaxpr'",
        )),
    }
}

fn call_shape_rule(
    _prim: &'static Primitive,
    _inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let j = call_jaxpr(params)?;
    Ok(j.jaxpr.out_avals().into_iter().collect())
}

fn call_impl_rule(
    _prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    _out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let j = call_jaxpr(params)?;
    let args: Vec<Array> = inputs.iter().map(|&x| x.clone()).collect();
    Ok(j.call(&args)?.into_iter().collect())
}

fn call_jvp_rule(
    _prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let (rule, n) = parts(params)?;
    let (p, t) = apply_rule(rule, &primals[n..], &tangents[n..])?;
    Ok((p.into_iter().collect(), t.into_iter().map(Some).collect()))
}

/// A `custom_vjp` function over flattened leaves: the function, its forward pass (outputs
/// and residuals) and its backward pass (input cotangents from residuals and output
/// cotangents).
pub(crate) trait CustomVjpRule: Send + Sync {
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error>;
    fn fwd(&self, args: Vec<Array>) -> Result<(Vec<Array>, Vec<Array>), Error>;
    fn bwd(&self, res: Vec<Array>, cts: Vec<Array>) -> Result<Vec<Array>, Error>;
}

/// A [`CustomVjp`]'s passes as a primitive parameter (`fwd=... bwd=...`).
#[derive(Clone)]
pub struct VjpRef(pub(crate) Arc<dyn CustomVjpRule>);

impl fmt::Debug for VjpRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<custom vjp rule>")
    }
}

impl PartialEq for VjpRef {
    fn eq(&self, other: &VjpRef) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// `jax.custom_vjp`: `f` with a forward pass `fwd(x) -> (f(x), residuals)` and a backward pass
/// `bwd(residuals, output cotangent) -> input cotangent` (JEP 2026 and 4008). `grad` and `vjp`
/// call `bwd`; `jvp` is refused with JAX's `TypeError`. Arguments that must not be
/// differentiated (JAX's `nondiff_argnums`) are captured by the closures; `bwd` answers zero
/// for an input by returning zeros.
///
/// ```
/// use dtype_lattice_array::{Array, core::{CustomVjp, grad}, numpy as jnp};
/// // clip_gradient from the custom-derivatives note, with bound 1.
/// let clip = CustomVjp::new(
///     |x: Array| Ok(x),
///     |x: Array| Ok((x, ())),
///     |_: (), g: Array| jnp::clip(&g, Some((-1.0).into()), Some(1.0.into())),
/// );
/// let g = grad(|x: Array| jnp::multiply(clip.call(&x)?, 5.0), &Array::scalar(2.0f32))?;
/// assert_eq!(g.to_vec::<f32>()?, [1.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
pub struct CustomVjp<I, O, R> {
    inner: Arc<VjpInner<I, O, R>>,
}

type Fwd<I, O, R> = dyn Fn(I) -> Result<(O, R), Error> + Send + Sync;
type Bwd<I, O, R> = dyn Fn(R, O) -> Result<I, Error> + Send + Sync;

struct VjpInner<I, O, R> {
    f: Box<Fun<I, O>>,
    fwd: Box<Fwd<I, O, R>>,
    bwd: Box<Bwd<I, O, R>>,
    /// The structures of the last call: arguments, outputs, residuals.
    input: Mutex<Option<I>>,
    output: Mutex<Option<O>>,
    residual: Mutex<Option<R>>,
}

fn stored<T: Clone>(m: &Mutex<Option<T>>, what: &str) -> Result<T, Error> {
    m.lock()
        .ok()
        .and_then(|v| v.clone())
        .ok_or_else(|| Error::refused(Exception::TypeError, format!("custom_vjp: no {what} yet")))
}

fn store<T>(m: &Mutex<Option<T>>, v: T) {
    if let Ok(mut g) = m.lock() {
        *g = Some(v);
    }
}

impl<I, O, R> CustomVjp<I, O, R>
where
    I: Pytree + Clone + Send + Sync + 'static,
    O: Pytree + Clone + Send + Sync + 'static,
    R: Pytree + Clone + Send + Sync + 'static,
{
    /// `f` with the forward pass `fwd` and the backward pass `bwd`.
    pub fn new(
        f: impl Fn(I) -> Result<O, Error> + Send + Sync + 'static,
        fwd: impl Fn(I) -> Result<(O, R), Error> + Send + Sync + 'static,
        bwd: impl Fn(R, O) -> Result<I, Error> + Send + Sync + 'static,
    ) -> CustomVjp<I, O, R> {
        CustomVjp {
            inner: Arc::new(VjpInner {
                f: Box::new(f),
                fwd: Box::new(fwd),
                bwd: Box::new(bwd),
                input: Mutex::new(None),
                output: Mutex::new(None),
                residual: Mutex::new(None),
            }),
        }
    }

    /// Applies the function (through whatever transformations are current).
    ///
    /// # Errors
    ///
    /// Whatever the function or its passes return; JAX's `TypeError` under `jvp`.
    pub fn call(&self, args: &I) -> Result<O, Error> {
        if current().is_none() {
            return (self.inner.f)(args.clone());
        }
        store(&self.inner.input, args.clone());
        let rule: Arc<dyn CustomVjpRule> = self.inner.clone();
        let outs = dispatch_vjp(&VjpRef(rule), &args.leaves())?;
        stored(&self.inner.output, "output")?.rebuild(&mut outs.into_iter())
    }
}

impl<I, O, R> CustomVjpRule for VjpInner<I, O, R>
where
    I: Pytree + Clone + Send + Sync,
    O: Pytree + Clone + Send + Sync,
    R: Pytree + Clone + Send + Sync,
{
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        let args = stored(&self.input, "arguments")?.rebuild(&mut args.into_iter())?;
        let out = (self.f)(args)?;
        let leaves = out.leaves();
        store(&self.output, out);
        Ok(leaves)
    }

    fn fwd(&self, args: Vec<Array>) -> Result<(Vec<Array>, Vec<Array>), Error> {
        let args = stored(&self.input, "arguments")?.rebuild(&mut args.into_iter())?;
        let (out, res) = (self.fwd)(args)?;
        let (o, r) = (out.leaves(), res.leaves());
        store(&self.output, out);
        store(&self.residual, res);
        Ok((o, r))
    }

    fn bwd(&self, res: Vec<Array>, cts: Vec<Array>) -> Result<Vec<Array>, Error> {
        let res = stored(&self.residual, "residuals")?.rebuild(&mut res.into_iter())?;
        let cts = stored(&self.output, "output")?.rebuild(&mut cts.into_iter())?;
        Ok((self.bwd)(res, cts)?.leaves())
    }
}

/// Applies a custom-VJP function under the current trace.
pub(crate) fn dispatch_vjp(rule: &VjpRef, args: &[Array]) -> Result<Vec<Array>, Error> {
    match current() {
        None => rule.0.call(args.to_vec()),
        Some(trace) => trace.process_custom_vjp(rule, args),
    }
}

/// The staged form: `custom_vjp_call[bwd=... call_jaxpr={...} fwd=... num_consts=0
/// symbolic_zeros=False]`.
pub(crate) fn stage_vjp(rule: &VjpRef, args: &[Array]) -> Result<Vec<Array>, Error> {
    let f = |xs: Vec<Array>| rule.0.call(xs);
    let (closed, _) = super::stage::trace(&f, &args.to_vec(), "custom_vjp")?;
    let params = Params::new()
        .with("call_jaxpr", Param::Jaxpr(Arc::new(closed)))
        .with("fwd", Param::CustomVjp(rule.clone()))
        .with("num_consts", Param::Int(0))
        .with("symbolic_zeros", Param::Bool(false));
    let refs: Vec<&Array> = args.iter().collect();
    Ok(crate::prim::bind(&CUSTOM_VJP_CALL, &refs, &params)?.into_vec())
}

/// The JVP of a custom-VJP function: the forward pass on the primals, and `custom_lin` on the
/// tangents (transposable into the backward pass, and nothing else).
pub(crate) fn vjp_jvp(
    rule: &VjpRef,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Array>), Error> {
    let (outs, res) = rule.0.fwd(primals.to_vec())?;
    let t = primals
        .iter()
        .zip(tangents)
        .map(|(p, t)| match t {
            Some(t) => Ok(t.clone()),
            None => zeros_like(p),
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let params = Params::new()
        .with("bwd", Param::CustomVjp(rule.clone()))
        .with("num_res", Param::Int(res.len() as i64))
        .with(
            "out_avals",
            Param::Avals(outs.iter().map(|o| o.aval().clone()).collect()),
        );
    let inputs: Vec<&Array> = res.iter().chain(&t).collect();
    let touts = crate::prim::bind(&CUSTOM_LIN, &inputs, &params)?.into_vec();
    Ok((outs, touts))
}

/// The `custom_vjp_call` primitive: applies `call_jaxpr`; its JVP is the forward pass and
/// `custom_lin`.
pub(crate) static CUSTOM_VJP_CALL: Primitive = Primitive {
    name: "custom_vjp_call",
    arity: None,
    shape_rule: call_shape_rule,
    impl_rule: call_impl_rule,
    jvp: Some(vjp_call_jvp_rule),
    transpose: None,
    batch: Some(vjp_call_batch_rule),
};

fn vjp_call_jvp_rule(
    _prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let (rule, n) = match (params.get("fwd"), params.get("num_consts")) {
        (Some(Param::CustomVjp(r)), Some(Param::Int(n))) => (r, *n as usize),
        _ => {
            return Err(Error::refused(
                Exception::TypeError,
                "custom_vjp_call() needs fwd",
            ));
        }
    };
    let (p, t) = vjp_jvp(rule, &primals[n..], &tangents[n..])?;
    Ok((p.into_iter().collect(), t.into_iter().map(Some).collect()))
}

/// `custom_lin`: the linear stand-in for a custom-VJP function's tangent map. It has only a
/// transpose rule (the backward pass); evaluating it means forward-mode differentiation was
/// asked of a custom-VJP function, which JAX refuses.
pub(crate) static CUSTOM_LIN: Primitive = Primitive {
    name: "custom_lin",
    arity: None,
    shape_rule: lin_shape_rule,
    impl_rule: lin_impl_rule,
    jvp: None,
    transpose: Some(lin_transpose_rule),
    // Only ever staged into a linear jaxpr and transposed (its backward pass traces under
    // any enclosing vmap).
    batch: None,
};

fn lin_shape_rule(
    _prim: &'static Primitive,
    _inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    match params.get("out_avals") {
        Some(Param::Avals(a)) => Ok(a.iter().cloned().collect()),
        _ => Err(Error::refused(
            Exception::TypeError,
            "custom_lin() needs out_avals",
        )),
    }
}

fn lin_impl_rule(
    _prim: &'static Primitive,
    _inputs: &[&Array],
    _params: &Params,
    _out: &[ShapedArray],
) -> Result<Outputs, Error> {
    Err(Error::refused(
        Exception::TypeError,
        "can't apply forward-mode autodiff (jvp) to a custom_vjp function.",
    ))
}

fn lin_transpose_rule(
    _prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[crate::prim::transpose::Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    use crate::prim::transpose::Lin;
    let (rule, n) = match (
        params.get("bwd"),
        params.get("num_res"),
        params.get("out_avals"),
    ) {
        (Some(Param::CustomVjp(r)), Some(Param::Int(n)), Some(Param::Avals(_))) => (r, *n as usize),
        _ => {
            return Err(Error::refused(
                Exception::TypeError,
                "custom_lin() needs bwd",
            ));
        }
    };
    let res = ins[..n]
        .iter()
        .map(|l| match l {
            Lin::Known(x) => Ok(x.clone()),
            Lin::Linear(_) => Err(Error::refused(
                Exception::TypeError,
                "custom_vjp: a residual depends on the differentiated input",
            )),
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let avals = match params.get("out_avals") {
        Some(Param::Avals(a)) => a,
        _ => unreachable_avals()?,
    };
    let cts = cts
        .iter()
        .zip(avals)
        .map(|(c, a)| match c {
            Some(c) => Ok(c.clone()),
            None => super::jvp::zeros(a),
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mut out: Vec<Option<Array>> = vec![None; n];
    out.extend(rule.0.bwd(res, cts)?.into_iter().map(Some));
    Ok(out)
}

fn unreachable_avals() -> Result<&'static Vec<ShapedArray>, Error> {
    Err(Error::refused(
        Exception::TypeError,
        "custom_lin() needs out_avals",
    ))
}

/// Every leaf mapped along its axis, outputs along axis 0.
fn mapped(dims: &[Option<usize>]) -> super::MapAxes {
    super::MapAxes::Leaves(dims.to_vec())
}

/// A custom-JVP function under `vmap`: the function and its rule mapped over `dims`.
struct BatchedJvp {
    inner: RuleRef,
    dims: Vec<Option<usize>>,
}

impl CustomJvpRule for BatchedJvp {
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        super::vmap(|xs: Vec<Array>| self.inner.0.call(xs))
            .in_axes(mapped(&self.dims))
            .out_axes(super::MapAxes::All(Some(0)))
            .call(&args)
    }

    fn jvp(
        &self,
        primals: Vec<Array>,
        tangents: Vec<Array>,
    ) -> Result<(Vec<Array>, Vec<Array>), Error> {
        let dims: Vec<Option<usize>> = self.dims.iter().chain(&self.dims).copied().collect();
        super::vmap(|(p, t): (Vec<Array>, Vec<Array>)| self.inner.0.jvp(p, t))
            .in_axes(mapped(&dims))
            .out_axes(super::MapAxes::All(Some(0)))
            .call(&(primals, tangents))
    }
}

pub(crate) fn batched_jvp(rule: &RuleRef, dims: Vec<Option<usize>>) -> RuleRef {
    RuleRef(Arc::new(BatchedJvp {
        inner: rule.clone(),
        dims,
    }))
}

/// A custom-VJP function under `vmap`: the function and both passes mapped; the backward
/// pass's cotangents summed over the batch for inputs that were not mapped, moved back to
/// their axis for the others.
struct BatchedVjp {
    inner: VjpRef,
    dims: Vec<Option<usize>>,
    residuals: Mutex<usize>,
}

impl CustomVjpRule for BatchedVjp {
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        super::vmap(|xs: Vec<Array>| self.inner.0.call(xs))
            .in_axes(mapped(&self.dims))
            .out_axes(super::MapAxes::All(Some(0)))
            .call(&args)
    }

    fn fwd(&self, args: Vec<Array>) -> Result<(Vec<Array>, Vec<Array>), Error> {
        let (outs, res): (Vec<Array>, Vec<Array>) =
            super::vmap(|xs: Vec<Array>| self.inner.0.fwd(xs))
                .in_axes(mapped(&self.dims))
                .out_axes(super::MapAxes::All(Some(0)))
                .call(&args)?;
        if let Ok(mut n) = self.residuals.lock() {
            *n = res.len();
        }
        Ok((outs, res))
    }

    fn bwd(&self, res: Vec<Array>, cts: Vec<Array>) -> Result<Vec<Array>, Error> {
        let cts_in: Vec<Array> =
            super::vmap(|(r, c): (Vec<Array>, Vec<Array>)| self.inner.0.bwd(r, c))
                .in_axes(super::MapAxes::All(Some(0)))
                .out_axes(super::MapAxes::All(Some(0)))
                .call(&(res, cts))?;
        cts_in
            .into_iter()
            .zip(&self.dims)
            .map(|(c, d)| match d {
                None => crate::numpy::sum(&c, crate::numpy::Axes::Some(vec![0]), false),
                Some(0) => Ok(c),
                Some(d) => crate::prim::batching::moveaxis(&c, 0, *d),
            })
            .collect()
    }
}

pub(crate) fn batched_vjp(rule: &VjpRef, dims: Vec<Option<usize>>) -> VjpRef {
    VjpRef(Arc::new(BatchedVjp {
        inner: rule.clone(),
        dims,
        residuals: Mutex::new(0),
    }))
}

/// The batching rule of `custom_jvp_call` (a staged custom-JVP function under `vmap`).
fn jvp_call_batch_rule(
    _prim: &'static Primitive,
    _size: usize,
    vals: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, crate::prim::batching::BatchDims), Error> {
    let (rule, n) = parts(params)?;
    let batched = batched_jvp(rule, dims[n..].to_vec());
    let outs = dispatch(&batched, &vals[n..])?;
    let k = outs.len();
    Ok((
        outs.into_iter().collect(),
        vec![Some(0); k].into_iter().collect(),
    ))
}

/// The batching rule of `custom_vjp_call`.
fn vjp_call_batch_rule(
    _prim: &'static Primitive,
    _size: usize,
    vals: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, crate::prim::batching::BatchDims), Error> {
    let (rule, n) = match (params.get("fwd"), params.get("num_consts")) {
        (Some(Param::CustomVjp(r)), Some(Param::Int(n))) => (r, *n as usize),
        _ => {
            return Err(Error::refused(
                Exception::TypeError,
                "custom_vjp_call() needs fwd",
            ));
        }
    };
    let batched = batched_vjp(rule, dims[n..].to_vec());
    let outs = dispatch_vjp(&batched, &vals[n..])?;
    let k = outs.len();
    Ok((
        outs.into_iter().collect(),
        vec![Some(0); k].into_iter().collect(),
    ))
}
