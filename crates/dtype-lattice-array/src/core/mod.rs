//! JAX's core (`jax/_src/core.py`): primitives ([`Primitive`], [`Params`], [`bind`]), traces
//! and tracers, jaxprs ([`ClosedJaxpr`]: type checker, evaluator, printer), pytrees, and the
//! custom-rule objects the traces see. The transformations themselves are interpreters above
//! it ([`crate::interpreters`]), the primitives' definitions the families of [`crate::lax`].
//!
//! The design is JAX's "stackless" core: one *current trace* per thread (none: evaluation).
//! [`bind`] hands every primitive application to the current trace; a transformation makes a
//! new trace whose parent is the one it was called under, runs the function with its tracers
//! as arguments, and binds the primitives' rules in the parent. A tracer is an [`Array`] whose
//! data is a tracer: the `jax.numpy` functions of [`crate::numpy`] therefore work on traced
//! arrays unchanged, promotion and weak types included, as JAX's do.
//!
//! Invariants:
//! - a primitive's implementation only ever sees concrete arrays (evaluation refuses a tracer
//!   with JAX's `UnexpectedTracerError`);
//! - a trace handles its own tracers; any other array reaching it (a concrete one, or a tracer
//!   of an enclosing transformation) is a constant to it;
//! - a transformation's tracers die with it: used afterwards they raise
//!   `UnexpectedTracerError`, never a wrong value;
//! - only floating and complex values have tangents of their own dtype: an integer, bool or
//!   key value's tangent (and cotangent) is JAX's `float0` ([`DType::Float0`](dtype_lattice::DType::Float0)),
//!   a symbolic zero inside the transformations and `float0` zeros where one is made (`jvp`'s
//!   output tangents, `vjp`'s and `Grad::allow_int`'s cotangents, a custom rule's inputs).

use std::any::Any;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use crate::array::Array;

mod custom;
pub mod jaxpr;
mod primitive;
pub mod pytree;

pub(crate) use custom::{Custom, CustomJvpRule, CustomVjpRule};
pub use custom::{RuleRef, VjpRef};
pub use jaxpr::{Atom, ClosedJaxpr, Eqn, Jaxpr, Var};
pub use primitive::{
    Avals, BatchDims, BatchRule, Call, Float0, Float0Refusal, GatherDimensionNumbers, ImplRule,
    JvpRule, Lin, Outputs, Param, Params, PartialEval, PartialEvalRule, Primitive, PyNumber,
    ScatterDimensionNumbers, ShapeRule, TransposeRule, bind,
};
pub(crate) use primitive::{
    Hidden, Operand, Prepared, PreparedKernel, bad_param, bind1, float0_refusal_named, implement,
    implement_owned, nonlinear,
};
pub use pytree::Pytree;

/// The identity of one trace (one application of a transformation), shared by its tracers.
pub(crate) struct TraceTag {
    id: u64,
    /// JAX's tracer class name, for messages (`DynamicJaxprTracer`, `JVPTracer`).
    tracer_name: &'static str,
    /// What the transformation is, for messages (`jit`, `jvp`).
    purpose: &'static str,
    alive: AtomicBool,
}

impl TraceTag {
    pub(crate) fn new(tracer_name: &'static str, purpose: &'static str) -> Arc<TraceTag> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Arc::new(TraceTag {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            tracer_name,
            purpose,
            alive: AtomicBool::new(true),
        })
    }

    /// Ends the transformation: its tracers are dead from now on.
    pub(crate) fn kill(&self) {
        self.alive.store(false, Ordering::Release);
    }

    fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }
}

/// What a trace keeps in its tracers.
pub(crate) trait Payload: Send + Sync + 'static {
    fn as_any(&self) -> &dyn Any;
    /// The concrete value behind the tracer, if the trace knows one (a JVP tracer's primal
    /// when it is concrete).
    fn concrete(&self) -> Option<Array> {
        None
    }
    /// The equation that made this value a tracer (staging), as JAX's messages print it.
    fn origin(&self) -> Option<String> {
        None
    }
}

/// The data of a traced array: which trace it belongs to and what that trace keeps.
#[derive(Clone)]
pub(crate) struct Tracer {
    pub(crate) tag: Arc<TraceTag>,
    pub(crate) payload: Arc<dyn Payload>,
}

impl Tracer {
    pub(crate) fn new(tag: &Arc<TraceTag>, payload: impl Payload) -> Tracer {
        Tracer {
            tag: tag.clone(),
            payload: Arc::new(payload),
        }
    }

    /// JAX's class name of the tracer (`DynamicJaxprTracer`, `JVPTracer`).
    pub(crate) fn trace_name(&self) -> &'static str {
        self.tag.tracer_name
    }

    /// The payload, if this tracer belongs to the trace `tag` and keeps a `P`.
    pub(crate) fn payload_of<P: 'static>(&self, tag: &TraceTag) -> Option<&P> {
        (self.tag.id == tag.id)
            .then(|| self.payload.as_any().downcast_ref::<P>())
            .flatten()
    }

    /// The concrete value of `x` (this tracer's array), or JAX's `ConcretizationTypeError`.
    pub(crate) fn concrete(&self, x: &Array) -> Result<Array, Error> {
        if !self.tag.is_alive() {
            return Err(unexpected_tracer(x));
        }
        match self.payload.concrete() {
            Some(c) if c.is_concrete() => Ok(c),
            Some(c) => c.concrete().map(|c| c.into_owned()),
            None => Err(self.concretization_error(x)),
        }
    }

    /// JAX's `ConcretizationTypeError` for asking `x` (this tracer's array) for its elements.
    pub(crate) fn concretization_error(&self, x: &Array) -> Error {
        let mut msg = format!(
            "Abstract tracer value encountered where concrete value is expected: traced array \
             with shape {}\nThe problem arose with the `to_vec` function.\n",
            shape_text(x)
        );
        match self.payload.origin() {
            Some(eqn) => msg.push_str(&format!(
                "The error occurred while tracing a function for {}. This value became a \
                 tracer due to JAX operations on these lines:\n\n  operation {eqn}\n",
                self.tag.purpose
            )),
            None => msg.push_str(&format!(
                "The error occurred while tracing a function for {}. This concrete value was \
                 not available because it depends on the value of an argument.\n",
                self.tag.purpose
            )),
        }
        Error::refused(Exception::ConcretizationTypeError, msg.trim_end())
    }
}

/// `int32[]`, `float32[2,3]`: an aval as JAX's messages print it.
fn shape_text(x: &Array) -> String {
    let dims: Vec<String> = x.shape().iter().map(usize::to_string).collect();
    format!("{}[{}]", x.dtype(), dims.join(","))
}

/// JAX's `UnexpectedTracerError` for a tracer used outside its transformation.
pub(crate) fn unexpected_tracer(x: &Array) -> Error {
    let (class, purpose) = x.tracer().map_or(("Tracer", "a transformation"), |t| {
        (t.tag.tracer_name, t.tag.purpose)
    });
    Error::refused(
        Exception::UnexpectedTracerError,
        format!(
            "Encountered an unexpected tracer. A function transformed by JAX had a side \
             effect, allowing for a reference to an intermediate value with type {} wrapped in \
             a {class} to escape the scope of the transformation.\nJAX transformations require \
             that functions explicitly return their outputs, and disallow saving intermediate \
             values to global state.\nThe function being traced when the value leaked was \
             traced for {purpose}.",
            shape_text(x)
        ),
    )
}

/// An interpreter of primitives: evaluation is the absence of one.
pub(crate) trait Trace: Send + Sync {
    /// Applies `prim` to `inputs` (its own tracers, constants, or tracers of enclosing traces).
    fn process_primitive(
        &self,
        prim: &'static Primitive,
        inputs: &[&Array],
        params: &Params,
    ) -> Result<Outputs, Error>;

    /// Applies a custom-derivative function (default: traced through, its rules unused).
    fn process_custom(&self, rule: &Custom, args: &[Array]) -> Result<Vec<Array>, Error> {
        rule.call(args)
    }

    /// Whether this trace stages every primitive into a jaxpr (`make_jaxpr`, `jit`'s
    /// tracing: omnistaging), rather than evaluating, differentiating or batching them.
    fn stages(&self) -> bool {
        false
    }
}

/// Whether the current trace stages every primitive (see [`Trace::stages`]).
pub(crate) fn staging() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(|t| t.stages()))
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<dyn Trace>>> = const { RefCell::new(None) };
}

/// The current trace of this thread (`None`: evaluation).
pub(crate) fn current() -> Option<Arc<dyn Trace>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Runs `f` with `trace` current on this thread, then restores the previous one (also when
/// `f` panics).
pub(crate) fn with_trace<R>(trace: Option<Arc<dyn Trace>>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<dyn Trace>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), trace));
    let _restore = Restore(previous);
    f()
}

/// Refuses a tracer reaching evaluation (its transformation is over, or it was smuggled out).
pub(crate) fn check_concrete(inputs: &[&Array]) -> Result<(), Error> {
    match inputs.iter().find(|x| !x.is_concrete()) {
        Some(x) => Err(unexpected_tracer(x)),
        None => Ok(()),
    }
}

/// Refuses a dead tracer reaching a trace (it escaped an earlier transformation).
pub(crate) fn check_alive(inputs: &[&Array]) -> Result<(), Error> {
    match inputs
        .iter()
        .find(|x| x.tracer().is_some_and(|t| !t.tag.is_alive()))
    {
        Some(x) => Err(unexpected_tracer(x)),
        None => Ok(()),
    }
}
