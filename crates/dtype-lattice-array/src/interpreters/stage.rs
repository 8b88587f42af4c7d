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
use crate::core::{Avals, Outputs, Param, Params, Primitive};
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
