//! Custom derivatives. `jax.custom_jvp` (JEP 2026): a function with its own JVP rule.
//! `jax.custom_vjp` (JEPs 2026 and 4008): a function with its own forward and backward passes.
//! Evaluation calls the function; a JVP trace calls the rule (or the forward pass and
//! `custom_lin`) with the primals as they are (concrete outside `jit`: value-dependent Rust
//! control flow works in both); staging records a `custom_jvp_call`/`custom_vjp_call` equation
//! that keeps the rules, so differentiating the staged jaxpr later still uses them; `vmap`
//! maps the function and its rules together; other transformations trace through the
//! function. Both kinds reach the traces as one [`Custom`].

use std::sync::{Arc, Mutex, OnceLock};

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::jvp::{has_tangent_space, tangent_aval, tangent_zeros};
use crate::array::{Array, ShapedArray};
use crate::core::Pytree;
use crate::core::jaxpr::ClosedJaxpr;
use crate::core::{
    Avals, Call, Custom, CustomJvpRule, CustomVjpRule, Outputs, Param, Params, Primitive, RuleRef,
    VjpRef,
};
use crate::core::{TraceTag, current};

impl Custom {
    /// The JVP: the rule on tangents with zeros instantiated (`float0` zeros for integer,
    /// bool and key inputs, as JAX's rules receive them), its output tangents checked against
    /// the outputs' tangent types; or the forward pass and `custom_lin` on the tangents
    /// (transposable into the backward pass, and nothing else).
    pub(crate) fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Option<Array>],
    ) -> Result<(Vec<Array>, Vec<Array>), Error> {
        let t = primals
            .iter()
            .zip(tangents)
            .map(|(p, t)| match t {
                Some(t) => Ok(t.clone()),
                None => tangent_zeros(p.aval()),
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let rule = match self {
            Custom::Jvp(r) => {
                let (outs, touts) = r.0.jvp(primals.to_vec(), t)?;
                check_rule_tangents(&outs, &touts)?;
                return Ok((outs, touts));
            }
            Custom::Vjp(r) => r,
        };
        let (outs, res) = rule.0.fwd(primals.to_vec())?;
        let params = Params::new()
            .with("bwd", Param::CustomVjp(rule.clone()))
            .with("num_res", Param::Int(res.len() as i64))
            .with(
                "out_avals",
                Param::Avals(outs.iter().map(|o| o.aval().clone()).collect()),
            );
        let inputs: Vec<&Array> = res.iter().chain(&t).collect();
        let touts = crate::core::bind(&CUSTOM_LIN, &inputs, &params)?.into_vec();
        Ok((outs, touts))
    }

    /// The function and its rules mapped over the leaves' axes `dims` (outputs along 0).
    pub(crate) fn batched(
        &self,
        dims: Vec<Option<usize>>,
        within: Option<(Arc<TraceTag>, usize)>,
    ) -> Custom {
        match self {
            Custom::Jvp(r) => Custom::Jvp(RuleRef(Arc::new(BatchedJvp {
                inner: r.clone(),
                dims,
                within,
            }))),
            Custom::Vjp(r) => Custom::Vjp(VjpRef(Arc::new(BatchedVjp {
                inner: r.clone(),
                dims,
                within,
            }))),
        }
    }

    /// The staged form: `custom_jvp_call[call_jaxpr={...} jvp=<rule> num_consts=0
    /// symbolic_zeros=False]`, or `custom_vjp_call[...fwd=<rule>...]`.
    pub(crate) fn stage(&self, args: &[Array]) -> Result<Vec<Array>, Error> {
        let f = |xs: Vec<Array>| self.call(&xs);
        let (prim, purpose, key, rule) = match self {
            Custom::Jvp(r) => (
                &CUSTOM_JVP_CALL,
                "custom_jvp",
                "jvp",
                Param::CustomJvp(r.clone()),
            ),
            Custom::Vjp(r) => (
                &CUSTOM_VJP_CALL,
                "custom_vjp",
                "fwd",
                Param::CustomVjp(r.clone()),
            ),
        };
        let (closed, _) = super::stage::trace(&f, &args.to_vec(), purpose)?;
        let mut params = Params::new();
        if let Custom::Jvp(r) = self
            && let Some(name) = r.0.names().0
        {
            params = params.with("name", Param::Name(name.into()));
        }
        let params = params
            .with("call_jaxpr", Param::Jaxpr(Arc::new(closed)))
            .with(key, rule)
            .with("num_consts", Param::Int(0))
            .with("symbolic_zeros", Param::Bool(false));
        let refs: Vec<&Array> = args.iter().collect();
        Ok(crate::core::bind(prim, &refs, &params)?.into_vec())
    }

    /// The rules of a staged call and how many leading operands are hoisted constants.
    fn of_params(params: &Params) -> Result<(Custom, usize), Error> {
        let n = match params.get("num_consts") {
            Some(Param::Int(n)) => *n as usize,
            _ => 0,
        };
        match (params.get("jvp"), params.get("fwd")) {
            (Some(Param::CustomJvp(r)), _) => Ok((Custom::Jvp(r.clone()), n)),
            (_, Some(Param::CustomVjp(r))) => Ok((Custom::Vjp(r.clone()), n)),
            _ => Err(Error::refused(
                Exception::TypeError,
                "a custom call needs call_jaxpr, its rules and num_consts",
            )),
        }
    }
}

/// JAX's check of a custom JVP rule's output tangents: each of its output's tangent type
/// (shape and tangent dtype, weak types aside), `float0` for an integer output.
fn check_rule_tangents(outs: &[Array], touts: &[Array]) -> Result<(), Error> {
    if outs.len() != touts.len() {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "Custom JVP rule must produce primal and tangent outputs with equal container \
                 (pytree) structures, but got {} and {} leaves respectively.",
                outs.len(),
                touts.len()
            ),
        ));
    }
    let expected: Vec<ShapedArray> = outs.iter().map(|o| tangent_aval(o.aval())).collect();
    let bad = |(e, t): (&ShapedArray, &Array)| e.dtype() != t.dtype() || e.shape() != t.shape();
    if !expected.iter().zip(touts).any(bad) {
        return Ok(());
    }
    let text = |a: &ShapedArray| a.long_text(false);
    let msg = if let ([o], [e], [t]) = (outs, expected.as_slice(), touts) {
        format!(
            "Custom JVP rule must produce primal and tangent outputs with corresponding shapes \
             and dtypes. Expected {} (tangent type of {}) but got {}.",
            text(e),
            text(o.aval()),
            text(t.aval())
        )
    } else {
        let lines: Vec<String> = outs
            .iter()
            .zip(&expected)
            .zip(touts)
            .filter(|((_, e), t)| bad((e, t)))
            .map(|((o, e), t)| {
                format!(
                    "  primal {} with tangent {}, expecting tangent {}",
                    text(o.aval()),
                    text(t.aval()),
                    text(e)
                )
            })
            .collect();
        format!(
            "Custom JVP rule must produce primal and tangent outputs with corresponding shapes \
             and dtypes, but got:\n{}",
            lines.join("\n")
        )
    };
    Err(Error::refused(Exception::TypeError, msg))
}

fn stored<T: Clone>(m: &Mutex<Option<T>>, what: &str) -> Result<T, Error> {
    m.lock().ok().and_then(|v| v.clone()).ok_or_else(|| {
        Error::refused(
            Exception::TypeError,
            format!("custom function: no {what} yet"),
        )
    })
}

fn store<T>(m: &Mutex<Option<T>>, v: T) {
    if let Ok(mut g) = m.lock() {
        *g = Some(v);
    }
}

type Fun<I, O> = dyn Fn(I) -> Result<O, Error> + Send + Sync;

/// What both kinds keep: the function, and the structures of the arguments and outputs of
/// the call in progress (or the last one), to rebuild pytrees from leaves.
struct Shapes<I, O> {
    f: Box<Fun<I, O>>,
    input: Mutex<Option<I>>,
    output: Mutex<Option<O>>,
}

impl<I: Pytree + Clone, O: Pytree + Clone> Shapes<I, O> {
    fn new(f: Box<Fun<I, O>>) -> Shapes<I, O> {
        Shapes {
            f,
            input: Mutex::new(None),
            output: Mutex::new(None),
        }
    }

    /// `args` (a pytree) through the traces as `custom`, or `f` itself when none is current.
    fn apply(&self, custom: impl FnOnce() -> Custom, args: &I) -> Result<O, Error> {
        if current().is_none() {
            return (self.f)(args.clone());
        }
        store(&self.input, args.clone());
        let outs = custom().dispatch(&args.leaves())?;
        stored(&self.output, "output")?.rebuild(&mut outs.into_iter())
    }

    fn args(&self, leaves: Vec<Array>) -> Result<I, Error> {
        stored(&self.input, "arguments")?.rebuild(&mut leaves.into_iter())
    }

    /// Leaves of `out`, kept as the outputs' structure.
    fn outputs(&self, out: O) -> Vec<Array> {
        let leaves = out.leaves();
        store(&self.output, out);
        leaves
    }

    fn call(&self, leaves: Vec<Array>) -> Result<Vec<Array>, Error> {
        let out = (self.f)(self.args(leaves)?)?;
        Ok(self.outputs(out))
    }
}

/// `jax.custom_jvp`: `f` with the JVP rule `rule(primals, tangents) -> (outputs, output
/// tangents)`, both over pytrees of `I` and `O`.
///
/// The rule receives `float0` zeros as the tangents of integer, bool and key inputs, and must
/// return tangents of its outputs' tangent types (`float0` for integer outputs: JAX's
/// `TypeError` otherwise, when the rule runs).
///
/// ```
/// use dtype_lattice_array::{Array, CustomJvp, grad, numpy as jnp};
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
    inner: Arc<JvpInner<I, O>>,
}

type Rule<I, O> = dyn Fn(I, I) -> Result<(O, O), Error> + Send + Sync;

struct JvpInner<I, O> {
    shapes: Shapes<I, O>,
    rule: Box<Rule<I, O>>,
    /// The names printed for the function and its rule ([`CustomJvp::name`],
    /// [`CustomJvp::jvp_name`]).
    name: OnceLock<String>,
    jvp_name: OnceLock<String>,
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
            inner: Arc::new(JvpInner {
                shapes: Shapes::new(Box::new(f)),
                rule: Box::new(rule),
                name: OnceLock::new(),
                jvp_name: OnceLock::new(),
            }),
        }
    }

    /// With JAX's name for the function (the decorated function's `__name__`), printed as
    /// the staged `custom_jvp_call`'s `name=` parameter. A name given before is kept.
    ///
    /// ```
    /// use dtype_lattice_array::{Array, CustomJvp, make_jaxpr};
    /// let f = CustomJvp::new(|x: Array| Ok(x), |x: Array, t: Array| Ok((x, t)))
    ///     .name("identity")
    ///     .jvp_name("identity_jvp");
    /// let text = make_jaxpr(|x: Array| f.call(&x), &Array::scalar(1.0f32))?.to_string();
    /// assert!(text.contains("name=identity") && text.contains("jvp=identity_jvp"));
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    #[must_use]
    pub fn name(self, name: &str) -> CustomJvp<I, O> {
        let _ = self.inner.name.set(name.to_string());
        self
    }

    /// With JAX's name for the rule (the `defjvp` function's `__name__`), printed as the
    /// staged call's `jvp=` parameter (else `<custom jvp rule>`). A name given before is
    /// kept.
    #[must_use]
    pub fn jvp_name(self, name: &str) -> CustomJvp<I, O> {
        let _ = self.inner.jvp_name.set(name.to_string());
        self
    }

    /// Applies the function (through whatever transformations are current).
    ///
    /// # Errors
    ///
    /// Whatever the function or its rule return.
    pub fn call(&self, args: &I) -> Result<O, Error> {
        let rule: Arc<dyn CustomJvpRule> = self.inner.clone();
        self.inner.shapes.apply(|| Custom::Jvp(RuleRef(rule)), args)
    }
}

impl<I, O> CustomJvpRule for JvpInner<I, O>
where
    I: Pytree + Clone + Send + Sync,
    O: Pytree + Clone + Send + Sync,
{
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        self.shapes.call(args)
    }

    fn jvp(
        &self,
        primals: Vec<Array>,
        tangents: Vec<Array>,
    ) -> Result<(Vec<Array>, Vec<Array>), Error> {
        let (p, t) = (self.shapes.args(primals)?, self.shapes.args(tangents)?);
        let (out, tout) = (self.rule)(p, t)?;
        Ok((self.shapes.outputs(out), tout.leaves()))
    }

    fn names(&self) -> (Option<&str>, Option<&str>) {
        (
            self.name.get().map(String::as_str),
            self.jvp_name.get().map(String::as_str),
        )
    }
}

/// `jax.custom_vjp`: `f` with a forward pass `fwd(x) -> (f(x), residuals)` and a backward pass
/// `bwd(residuals, output cotangent) -> input cotangent` (JEP 2026 and 4008). `grad` and `vjp`
/// call `bwd`; `jvp` is refused with JAX's `TypeError`. Arguments that must not be
/// differentiated (JAX's `nondiff_argnums`) are captured by the closures; `bwd` answers zero
/// for an input by returning zeros.
///
/// Integer, bool and key values have `float0` cotangents: `bwd` receives `float0` zeros for
/// such outputs, and whatever it returns for such an input is replaced by `float0` zeros (as
/// JAX replaces it, or its `None`). For a floating input, `bwd` must return a cotangent of
/// the input's shape (JAX's `ValueError` otherwise, naming the leaf as `output[i]`).
///
/// ```
/// use dtype_lattice_array::{Array, CustomVjp, grad, numpy as jnp};
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
    shapes: Shapes<I, O>,
    fwd: Box<Fwd<I, O, R>>,
    bwd: Box<Bwd<I, O, R>>,
    /// The residuals' structure from the last forward pass.
    residual: Mutex<Option<R>>,
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
                shapes: Shapes::new(Box::new(f)),
                fwd: Box::new(fwd),
                bwd: Box::new(bwd),
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
        let rule: Arc<dyn CustomVjpRule> = self.inner.clone();
        self.inner.shapes.apply(|| Custom::Vjp(VjpRef(rule)), args)
    }
}

impl<I, O, R> CustomVjpRule for VjpInner<I, O, R>
where
    I: Pytree + Clone + Send + Sync,
    O: Pytree + Clone + Send + Sync,
    R: Pytree + Clone + Send + Sync,
{
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        self.shapes.call(args)
    }

    fn fwd(&self, args: Vec<Array>) -> Result<(Vec<Array>, Vec<Array>), Error> {
        let (out, res) = (self.fwd)(self.shapes.args(args)?)?;
        let r = res.leaves();
        store(&self.residual, res);
        Ok((self.shapes.outputs(out), r))
    }

    fn bwd(&self, res: Vec<Array>, cts: Vec<Array>) -> Result<Vec<Array>, Error> {
        let res = stored(&self.residual, "residuals")?.rebuild(&mut res.into_iter())?;
        let cts = stored(&self.shapes.output, "output")?.rebuild(&mut cts.into_iter())?;
        Ok((self.bwd)(res, cts)?.leaves())
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
    super::stage::apply(call_jaxpr(params)?, inputs)
}

/// The JVP of a staged custom call: its rules, past the hoisted constants.
fn call_jvp_rule(
    _prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let (custom, n) = Custom::of_params(params)?;
    let (p, t) = custom.jvp(&primals[n..], &tangents[n..])?;
    Ok((p.into_iter().collect(), t.into_iter().map(Some).collect()))
}

/// The batching rule of a staged custom call (a custom function under `vmap`).
fn call_batch_rule(
    _prim: &'static Primitive,
    _size: usize,
    vals: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, crate::core::BatchDims), Error> {
    let (custom, n) = Custom::of_params(params)?;
    // A staged call's closed-over values are its explicit operands: no enclosing trace.
    let outs = custom
        .batched(dims[n..].to_vec(), None)
        .dispatch(&vals[n..])?;
    let k = outs.len();
    Ok((outs.into_iter().collect(), vec![Some(0); k]))
}

/// JAX's custom-call printers leave out `num_consts` when it is 0.
const NO_CONSTS: &[crate::core::Hidden] = &[("num_consts", Some(&Param::Int(0)))];

/// The `custom_jvp_call` primitive: applies `call_jaxpr`; its JVP applies the rule.
pub(crate) static CUSTOM_JVP_CALL: Primitive =
    Primitive::new("custom_jvp_call", None, call_shape_rule, call_impl_rule)
        .jvp(call_jvp_rule)
        .batch(call_batch_rule)
        .takes_float0()
        .hides(NO_CONSTS)
        .call(Call::Kept("call_jaxpr"));

/// The `custom_vjp_call` primitive: applies `call_jaxpr`; its JVP is the forward pass and
/// `custom_lin`.
pub(crate) static CUSTOM_VJP_CALL: Primitive =
    Primitive::new("custom_vjp_call", None, call_shape_rule, call_impl_rule)
        .jvp(call_jvp_rule)
        .batch(call_batch_rule)
        .takes_float0()
        .hides(NO_CONSTS)
        .call(Call::Kept("call_jaxpr"));

/// `custom_lin`: the linear stand-in for a custom-VJP function's tangent map. It has only a
/// transpose rule (the backward pass); evaluating it means forward-mode differentiation was
/// asked of a custom-VJP function, which JAX refuses.
pub(crate) static CUSTOM_LIN: Primitive =
    Primitive::new("custom_lin", None, lin_shape_rule, lin_impl_rule)
        // Only ever staged into a linear jaxpr and transposed (its backward pass traces under
        // any enclosing vmap): no batching rule.
        .transpose(lin_transpose_rule)
        .takes_float0();

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
    ins: &[crate::core::Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    use crate::core::Lin;
    let (rule, n, avals) = match (
        params.get("bwd"),
        params.get("num_res"),
        params.get("out_avals"),
    ) {
        (Some(Param::CustomVjp(r)), Some(Param::Int(n)), Some(Param::Avals(a))) => {
            (r, *n as usize, a)
        }
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
    let cts = cts
        .iter()
        .zip(avals)
        .map(|(c, a)| match c {
            Some(c) if has_tangent_space(a.dtype()) => Ok(c.clone()),
            _ => tangent_zeros(a),
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mut out: Vec<Option<Array>> = vec![None; n];
    let in_cts = rule.0.bwd(res, cts)?;
    let in_avals: Vec<ShapedArray> = ins[n..]
        .iter()
        .map(|l| match l {
            Lin::Known(x) => x.aval().clone(),
            Lin::Linear(a) => a.clone(),
        })
        .collect();
    if in_cts.len() != in_avals.len() {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "Custom VJP bwd rule must produce an output with the same container (pytree) \
                 structure as the args tuple of the primal function: got {} leaves for {}",
                in_cts.len(),
                in_avals.len()
            ),
        ));
    }
    for (i, (c, a)) in in_cts.into_iter().zip(&in_avals).enumerate() {
        // An integer input's (float0) cotangent is zero, whatever bwd returned.
        if !has_tangent_space(a.dtype()) {
            out.push(None);
            continue;
        }
        if c.shape() != a.shape() {
            let mut why = Vec::new();
            if c.dtype() != a.dtype() {
                why.push("the dtypes do not match");
            }
            why.push("the shapes do not match");
            return Err(Error::refused(
                Exception::ValueError,
                format!(
                    "Custom VJP bwd rule must produce an output with the same type as the args \
                     tuple of the primal function, but at output[{i}] the bwd rule produced an \
                     output of type {} corresponding to an input of type {}, so {}",
                    c.aval().long_text(false),
                    a.long_text(false),
                    why.join(", and ")
                ),
            ));
        }
        out.push(Some(c));
    }
    Ok(out)
}

/// `f` of the leaves mapped over `dims`, every output along axis 0; run as the `vmap` tagged
/// `within` if given (so that the tracers of that `vmap` that `f` closes over are mapped too:
/// JEP 4008's closures under non-differentiating transformations).
fn mapped<O: Pytree>(
    within: &Option<(Arc<TraceTag>, usize)>,
    dims: &[Option<usize>],
    f: impl Fn(Vec<Array>) -> Result<O, Error>,
    args: Vec<Array>,
) -> Result<O, Error> {
    super::vmap(f)
        .within(within.clone())
        .in_axes(super::MapAxes::Leaves(dims.to_vec()))
        .out_axes(super::MapAxes::All(Some(0)))
        .call(&args)
}

/// A custom-JVP function under `vmap`: the function and its rule mapped over `dims`.
struct BatchedJvp {
    inner: RuleRef,
    dims: Vec<Option<usize>>,
    within: Option<(Arc<TraceTag>, usize)>,
}

impl CustomJvpRule for BatchedJvp {
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        mapped(&self.within, &self.dims, |xs| self.inner.0.call(xs), args)
    }

    fn names(&self) -> (Option<&str>, Option<&str>) {
        self.inner.0.names()
    }

    fn jvp(
        &self,
        primals: Vec<Array>,
        tangents: Vec<Array>,
    ) -> Result<(Vec<Array>, Vec<Array>), Error> {
        let dims: Vec<Option<usize>> = self.dims.iter().chain(&self.dims).copied().collect();
        let k = primals.len();
        let mut both = primals;
        both.extend(tangents);
        mapped(
            &self.within,
            &dims,
            |mut xs| {
                let t = xs.split_off(k);
                self.inner.0.jvp(xs, t)
            },
            both,
        )
    }
}

/// A custom-VJP function under `vmap`: the function and both passes mapped; the backward
/// pass's cotangents summed over the batch for inputs that were not mapped, moved back to
/// their axis for the others.
struct BatchedVjp {
    inner: VjpRef,
    dims: Vec<Option<usize>>,
    /// The enclosing `vmap` for the function and the forward pass (the backward pass runs
    /// after it has finished, so on a map of its own).
    within: Option<(Arc<TraceTag>, usize)>,
}

impl CustomVjpRule for BatchedVjp {
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        mapped(&self.within, &self.dims, |xs| self.inner.0.call(xs), args)
    }

    fn fwd(&self, args: Vec<Array>) -> Result<(Vec<Array>, Vec<Array>), Error> {
        mapped(&self.within, &self.dims, |xs| self.inner.0.fwd(xs), args)
    }

    fn bwd(&self, res: Vec<Array>, cts: Vec<Array>) -> Result<Vec<Array>, Error> {
        let k = res.len();
        let mut both = res;
        both.extend(cts);
        let dims = vec![Some(0); both.len()];
        let cts_in: Vec<Array> = mapped(
            &None,
            &dims,
            |mut xs| {
                let c = xs.split_off(k);
                self.inner.0.bwd(xs, c)
            },
            both,
        )?;
        cts_in
            .into_iter()
            .zip(&self.dims)
            .map(|(c, d)| match d {
                // A float0 cotangent (of an integer input) sums to float0 zeros.
                None if c.dtype().is_float0() => super::jvp::zeros(&ShapedArray::new(
                    c.shape().get(1..).unwrap_or_default(),
                    c.dtype(),
                    false,
                )),
                None => crate::lax::batching::sum_axis(&c, 0),
                Some(0) => Ok(c),
                Some(d) => crate::lax::batching::moveaxis(&c, 0, *d),
            })
            .collect()
    }
}
