//! Staging (JAX's `DynamicJaxprTrace`, with omnistaging): every primitive bound while the
//! staging trace is current becomes an equation, whether or not it depends on the
//! arguments; [`make_jaxpr`] returns the jaxpr, [`jit`] traces once per input signature and
//! calls the cached jaxpr through the `jit` call primitive.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dtype_lattice::Error;

use crate::array::{Array, ShapedArray};
use crate::core::Pytree;
use crate::core::jaxpr::{Atom, ClosedJaxpr, Eqn, Jaxpr, Var, eqn_text};
use crate::core::{Avals, Outputs, Param, Params, PartialEval, Primitive};
use crate::core::{Payload, Trace, TraceTag, Tracer, check_alive, with_trace};

/// A staged variable, and the equation that made it (for `ConcretizationTypeError`).
struct Staged {
    var: Var,
    origin: Option<Arc<Eqn>>,
}

impl Payload for Staged {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn origin(&self) -> Option<String> {
        self.origin.as_deref().map(eqn_text)
    }
}

#[derive(Default)]
struct Builder {
    next: u32,
    eqns: Vec<Eqn>,
    constvars: Vec<Var>,
    consts: Vec<Array>,
    /// Constants already captured, by the identity of their data and their aval (arrays
    /// may share data under other avals: a reshape, a weak-typed copy).
    captured: HashMap<(usize, ShapedArray), Var>,
}

impl Builder {
    fn var(&mut self, aval: ShapedArray) -> Var {
        self.next += 1;
        Var {
            id: self.next,
            aval,
            dropped: false,
        }
    }
}

pub(crate) struct Staging {
    tag: Arc<TraceTag>,
    state: Mutex<Builder>,
    /// Partial evaluation (JAX's `JaxprTrace`): primitives without an input of this trace run
    /// in this parent trace instead of being staged (`None` here: staged, as omnistaging
    /// stages everything).
    partial: Option<Option<Arc<dyn Trace>>>,
}

impl Staging {
    fn new(purpose: &'static str) -> Arc<Staging> {
        Arc::new(Staging {
            tag: TraceTag::new("DynamicJaxprTracer", purpose),
            state: Mutex::new(Builder::default()),
            partial: None,
        })
    }

    /// A partial evaluator: known values computed in `parent`, the rest staged.
    pub(crate) fn partial(parent: Option<Arc<dyn Trace>>) -> Arc<Staging> {
        Arc::new(Staging {
            tag: TraceTag::new("JaxprTracer", "linearize"),
            state: Mutex::new(Builder::default()),
            partial: Some(parent),
        })
    }

    pub(crate) fn tag(&self) -> &Arc<TraceTag> {
        &self.tag
    }

    /// A new input variable of `aval` and its tracer.
    pub(crate) fn input(&self, aval: ShapedArray) -> (Var, Array) {
        let v = self.lock().var(aval);
        let t = self.tracer(v.clone(), None);
        (v, t)
    }

    /// Whether `x` is one of this trace's tracers.
    pub(crate) fn owns(&self, x: &Array) -> bool {
        x.tracer()
            .and_then(|t| t.payload_of::<Staged>(&self.tag))
            .is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Builder> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn tracer(&self, var: Var, origin: Option<Arc<Eqn>>) -> Array {
        let aval = var.aval.clone();
        Array::from_tracer(aval, Tracer::new(&self.tag, Staged { var, origin }))
    }

    /// `x` as an atom of this jaxpr: its own variable, a literal (a concrete scalar), or a
    /// captured constant (any other array, including tracers of enclosing transformations).
    fn atom(&self, x: &Array) -> Atom {
        if let Some(s) = x.tracer().and_then(|t| t.payload_of::<Staged>(&self.tag)) {
            return Atom::Var(s.var.clone());
        }
        if x.is_concrete() && x.ndim() == 0 && !x.dtype().is_extended() {
            return Atom::Literal(x.clone(), None);
        }
        let mut b = self.lock();
        let key = (x.identity(), x.aval().clone());
        if let Some(v) = b.captured.get(&key) {
            return Atom::Var(v.clone());
        }
        let v = b.var(x.aval().clone());
        b.constvars.push(v.clone());
        b.consts.push(x.clone());
        b.captured.insert(key, v.clone());
        Atom::Var(v)
    }

    /// The closed jaxpr of `invars` to `outs`.
    pub(crate) fn finish(&self, invars: Vec<Var>, outs: &[Array]) -> ClosedJaxpr {
        let outvars: Vec<Atom> = outs.iter().map(|x| self.atom(x)).collect();
        let mut b = self.lock();
        ClosedJaxpr {
            jaxpr: Jaxpr {
                constvars: std::mem::take(&mut b.constvars),
                invars,
                eqns: std::mem::take(&mut b.eqns),
                outvars,
            },
            consts: std::mem::take(&mut b.consts),
        }
    }
}

impl Trace for Staging {
    fn stages(&self) -> bool {
        self.partial.is_none()
    }

    fn process_primitive(
        &self,
        prim: &'static Primitive,
        inputs: &[&Array],
        params: &Params,
    ) -> Result<Outputs, Error> {
        check_alive(inputs)?;
        if let Some(parent) = &self.partial
            && !inputs.iter().any(|x| self.owns(x))
        {
            return with_trace(parent.clone(), || crate::core::bind(prim, inputs, params));
        }
        if self.partial.is_some()
            && let Some(j) = inlined(prim, params)
        {
            // Inlined, so that the linear jaxpr holds transposable primitives only.
            return apply(&j, inputs);
        }
        if self.partial.is_some()
            && let Some(rule) = prim.partial_eval
        {
            let unknown: Vec<bool> = inputs.iter().map(|x| self.owns(x)).collect();
            return rule(prim, inputs, &unknown, params, self);
        }
        self.stage_eqn(prim, inputs, params)
    }
    fn process_custom(
        &self,
        rule: &crate::core::Custom,
        args: &[Array],
    ) -> Result<Vec<Array>, Error> {
        match &self.partial {
            Some(parent) if !args.iter().any(|x| self.owns(x)) => {
                with_trace(parent.clone(), || rule.dispatch(args))
            }
            Some(_) => rule.call(args),
            None => rule.stage(args),
        }
    }
}

impl Staging {
    /// Stages one equation of `prim` (JAX's `DynamicJaxprTrace.default_process_primitive`).
    fn stage_eqn(
        &self,
        prim: &'static Primitive,
        inputs: &[&Array],
        params: &Params,
    ) -> Result<Outputs, Error> {
        // A call whose jaxpr closes over traced values takes them as leading operands.
        let (params, hoisted) = closure_convert(params);
        let params = &params;
        let all: Vec<&Array> = hoisted.iter().chain(inputs.iter().copied()).collect();
        let inputs = all.as_slice();
        let atoms: Vec<Atom> = inputs.iter().map(|x| self.atom(x)).collect();
        let avals: Vec<&ShapedArray> = inputs.iter().map(|x| x.aval()).collect();
        let out: Avals = prim.abstract_eval(&avals, params)?;
        let mut b = self.lock();
        let outputs: Vec<Var> = out.into_iter().map(|a| b.var(a)).collect();
        let eqn = Eqn {
            prim,
            inputs: atoms,
            params: params.clone(),
            outputs: outputs.clone(),
        };
        let origin = Arc::new(eqn.clone());
        b.eqns.push(eqn);
        drop(b);
        Ok(outputs
            .into_iter()
            .map(|v| self.tracer(v, Some(origin.clone())))
            .collect())
    }
}

impl PartialEval for Staging {
    fn known(
        &self,
        prim: &'static Primitive,
        inputs: &[&Array],
        params: &Params,
    ) -> Result<Outputs, Error> {
        let parent = self.partial.clone().flatten();
        with_trace(parent, || crate::core::bind(prim, inputs, params))
    }

    fn stage(
        &self,
        prim: &'static Primitive,
        inputs: &[&Array],
        params: &Params,
    ) -> Result<Outputs, Error> {
        check_alive(inputs)?;
        self.stage_eqn(prim, inputs, params)
    }
}

/// `params` with any call jaxpr's traced constants turned into leading inputs (JAX's closure
/// conversion), and those constants; `num_consts` counts them.
fn closure_convert(params: &Params) -> (Params, Vec<Array>) {
    let Some(Param::Jaxpr(j)) = params.get("jaxpr").or_else(|| params.get("call_jaxpr")) else {
        return (params.clone(), Vec::new());
    };
    if j.consts.iter().all(Array::is_concrete) {
        return (params.clone(), Vec::new());
    }
    let mut jaxpr = j.jaxpr.clone();
    let (mut constvars, mut consts, mut invars, mut hoisted) = (vec![], vec![], vec![], vec![]);
    for (v, c) in jaxpr.constvars.iter().zip(&j.consts) {
        if c.is_concrete() {
            constvars.push(v.clone());
            consts.push(c.clone());
        } else {
            invars.push(v.clone());
            hoisted.push(c.clone());
        }
    }
    invars.extend(jaxpr.invars);
    jaxpr.constvars = constvars;
    jaxpr.invars = invars;
    let converted = Param::Jaxpr(Arc::new(ClosedJaxpr { jaxpr, consts }));
    let before = match params.get("num_consts") {
        Some(Param::Int(n)) => *n,
        _ => 0,
    };
    let mut out = Params::new();
    for (n, v) in params.iter() {
        match n {
            "jaxpr" | "call_jaxpr" => out = out.with_named(n.into(), converted.clone()),
            "num_consts" => out = out.with("num_consts", Param::Int(before + hoisted.len() as i64)),
            _ => out = out.with_named(n.into(), v.clone()),
        }
    }
    (out, hoisted)
}

/// Traces `f` on arguments of `args`' avals into a closed jaxpr, and the traced output
/// (whose structure rebuilds outputs).
pub(crate) fn trace<I, O, F>(
    f: &F,
    args: &I,
    purpose: &'static str,
) -> Result<(ClosedJaxpr, O), Error>
where
    I: Pytree,
    O: Pytree,
    F: Fn(I) -> Result<O, Error>,
{
    let avals: Vec<ShapedArray> = args.leaves().iter().map(|x| x.aval().clone()).collect();
    trace_avals(
        |tracers| f(args.rebuild(&mut tracers.into_iter())?),
        &avals,
        purpose,
    )
}

/// Traces `f` on tracers of `avals` into a closed jaxpr, and the traced output.
pub(crate) fn trace_avals<O, F>(
    f: F,
    avals: &[ShapedArray],
    purpose: &'static str,
) -> Result<(ClosedJaxpr, O), Error>
where
    O: Pytree,
    F: FnOnce(Vec<Array>) -> Result<O, Error>,
{
    let staging = Staging::new(purpose);
    let invars: Vec<Var> = {
        let mut b = staging.lock();
        avals.iter().map(|a| b.var(a.clone())).collect()
    };
    let tracers: Vec<Array> = invars
        .iter()
        .map(|v| staging.tracer(v.clone(), None))
        .collect();
    let trace: Arc<dyn Trace> = staging.clone();
    let out = with_trace(Some(trace), || f(tracers));
    let result = out.map(|out| {
        let closed = staging.finish(invars, &out.leaves());
        (closed, out)
    });
    staging.tag.kill();
    result
}

/// `jax.make_jaxpr(f)(*args)`: the jaxpr of `f` traced on arguments of `args`' shapes,
/// dtypes and weak types. Every primitive is staged, including those on constants
/// (omnistaging).
///
/// ```
/// use dtype_lattice_array::{Array, make_jaxpr, numpy as jnp};
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
/// let j = make_jaxpr(|x: Array| jnp::add(jnp::multiply(jnp::sin(&x)?, 2.0)?, 1), &x)?;
/// assert_eq!(
///     j.to_string(),
///     "{ lambda ; a:f32[3]. let\n    b:f32[3] = sin a\n    c:f32[3] = mul b 2.0:f32[]\n    \
///      d:f32[3] = add c 1.0:f32[]\n  in (d,) }"
/// );
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// Whatever `f` returns, and JAX's `ConcretizationTypeError` when `f` asks a traced value for
/// its elements.
pub fn make_jaxpr<I, O, F>(f: F, args: &I) -> Result<ClosedJaxpr, Error>
where
    I: Pytree,
    O: Pytree,
    F: Fn(I) -> Result<O, Error>,
{
    trace(&f, args, "make_jaxpr").map(|(j, _)| j)
}

/// The jaxpr the traces apply in place of `prim` (a call primitive they inline: `jit`), if
/// it is one.
pub(crate) fn inlined(prim: &'static Primitive, params: &Params) -> Option<Arc<ClosedJaxpr>> {
    match prim.call {
        crate::core::Call::Inlined(_) => prim.call_jaxpr(params),
        _ => None,
    }
}

/// `j` applied to `inputs` under the current trace.
pub(crate) fn apply(j: &ClosedJaxpr, inputs: &[&Array]) -> Result<Outputs, Error> {
    let args: Vec<Array> = inputs.iter().map(|&x| x.clone()).collect();
    Ok(j.call(&args)?.into_iter().collect())
}

/// Where a residual of [`partial_eval_jaxpr`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Residual {
    /// A known input of the jaxpr itself (its index among the known inputs), which the known
    /// jaxpr also returns; the caller may pass that input instead (JAX's residual forwarding).
    Forwarded(usize),
    /// Computed by the known jaxpr.
    Computed,
}

/// A jaxpr split by [`partial_eval_jaxpr`].
pub(crate) struct PartialJaxpr {
    /// The known inputs to the known outputs, then the residuals.
    pub(crate) known: ClosedJaxpr,
    /// The residuals, then the unknown inputs, to the unknown outputs.
    pub(crate) unknown: ClosedJaxpr,
    /// Which outputs are unknown.
    pub(crate) out_unknowns: Vec<bool>,
    /// Each residual's origin.
    pub(crate) residuals: Vec<Residual>,
}

/// JAX's `pe.partial_eval_jaxpr_nounits`: `j` split, for inputs of which `unknowns` are
/// unknown, into a known jaxpr (the known inputs to the known outputs and the residuals) and
/// an unknown one (the residuals and the unknown inputs to the unknown outputs); an output
/// is unknown if an unknown input reaches it or it is `instantiate`d. The split is the
/// partial evaluator's own: `j` runs on known tracers of one staging trace and unknown
/// tracers of a partial evaluator above it, so loops nested in `j` split by their own rules.
pub(crate) fn partial_eval_jaxpr(
    j: &ClosedJaxpr,
    unknowns: &[bool],
    instantiate: &[bool],
) -> Result<PartialJaxpr, Error> {
    let known_stage = Staging::new("partial_eval");
    let in_avals: Vec<ShapedArray> = j.jaxpr.invars.iter().map(|v| v.aval.clone()).collect();
    let mut known_invars = Vec::new();
    let mut known_tracers = Vec::new();
    for (a, _) in in_avals.iter().zip(unknowns).filter(|(_, u)| !**u) {
        let (v, t) = known_stage.input(a.clone());
        known_invars.push(v);
        known_tracers.push(t);
    }
    let parent: Arc<dyn Trace> = known_stage.clone();
    let pe = Staging::partial(Some(parent));
    let mut unknown_invars = Vec::new();
    let mut known_it = known_tracers.iter();
    let mut args = Vec::with_capacity(in_avals.len());
    for (a, &u) in in_avals.iter().zip(unknowns) {
        if u {
            let (v, t) = pe.input(a.clone());
            unknown_invars.push(v);
            args.push(t);
        } else if let Some(t) = known_it.next() {
            args.push(t.clone());
        }
    }
    let pe_trace: Arc<dyn Trace> = pe.clone();
    let outs = with_trace(Some(pe_trace), || j.call(&args));
    let result = outs.map(|outs| {
        let mut out_unknowns = Vec::with_capacity(outs.len());
        let (mut known_outs, mut unknown_outs) = (Vec::new(), Vec::new());
        for (k, x) in outs.iter().enumerate() {
            let u = pe.owns(x) || instantiate.get(k).copied().unwrap_or(false);
            out_unknowns.push(u);
            if u {
                unknown_outs.push(x.clone());
            } else {
                known_outs.push(x.clone());
            }
        }
        let mut unknown = pe.finish(unknown_invars, &unknown_outs);
        // The unknown jaxpr's captured known tracers are the residuals: they lead its inputs.
        let (mut constvars, mut consts, mut res_vars) = (vec![], vec![], vec![]);
        let mut residuals = Vec::new();
        for (v, c) in unknown
            .jaxpr
            .constvars
            .drain(..)
            .zip(unknown.consts.drain(..))
        {
            if known_stage.owns(&c) {
                let fwd = known_tracers
                    .iter()
                    .position(|t| t.identity() == c.identity());
                residuals.push(match fwd {
                    Some(i) => Residual::Forwarded(i),
                    None => Residual::Computed,
                });
                res_vars.push(v);
                known_outs.push(c);
            } else {
                constvars.push(v);
                consts.push(c);
            }
        }
        res_vars.append(&mut unknown.jaxpr.invars);
        unknown.jaxpr.invars = res_vars;
        unknown.jaxpr.constvars = constvars;
        unknown.consts = consts;
        let known = known_stage.finish(known_invars, &known_outs);
        PartialJaxpr {
            known,
            unknown,
            out_unknowns,
            residuals,
        }
    });
    pe.tag().kill();
    known_stage.tag().kill();
    result
}
