//! `jax.jit`: [`jit`] stages a function once per input signature and runs the staged jaxpr,
//! as the `jit` call primitive under a transformation, or outside any as a compiled plan
//! (`plan`: XLA's passes that change bits — common subexpression elimination, the
//! contraction of products into additions (`fma`) — constant folding, dead code elimination,
//! fused elementwise chains run chunk by chunk (`chunk`)).

mod block;
pub(crate) mod chunk;
pub(crate) mod fma;
mod loops;
mod plan;
mod simplify;
mod tight;

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, Weak};

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use crate::array::{Array, ShapedArray};
use crate::core::{Avals, Call, ClosedJaxpr, Outputs, Param, Params, Primitive, Pytree};
use crate::interpreters::stage::{apply, trace};
use plan::Executable;

/// The `jit` call primitive: applies the closed jaxpr of its `jaxpr` parameter.
// A call primitive: every trace that transforms it (JVP, batching, partial evaluation)
// inlines its jaxpr instead.
pub(crate) static JIT: Primitive = Primitive::new("jit", None, jit_shape_rule, jit_impl_rule)
    .takes_float0()
    .call(Call::Inlined("jaxpr"));

fn closed_param<'a>(prim: &str, params: &'a Params) -> Result<&'a Arc<ClosedJaxpr>, Error> {
    match params.get("jaxpr") {
        Some(Param::Jaxpr(j)) => Ok(j),
        _ => Err(Error::refused(
            Exception::TypeError,
            format!("{prim}() missing required keyword argument: 'jaxpr'"),
        )),
    }
}

fn jit_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let j = closed_param(prim.name, params)?;
    let ins = &j.jaxpr.invars;
    if inputs.len() != ins.len()
        || inputs
            .iter()
            .zip(ins)
            .any(|(a, v)| a.shape() != v.aval.shape() || a.dtype() != v.aval.dtype())
    {
        return Err(Error::refused(
            Exception::TypeError,
            "jit: arguments do not match the jaxpr's inputs",
        ));
    }
    Ok(j.jaxpr.out_avals().into_iter().collect())
}

fn jit_impl_rule(
    _prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    _out: &[ShapedArray],
) -> Result<Outputs, Error> {
    // Evaluated outside any trace (a jaxpr's `jit` equation run on values), the program is
    // compiled, as JAX compiles a `jit` equation it evaluates: XLA's simplifications and
    // contractions apply to it as to a jitted call.
    let j = closed_param("jit", params)?;
    match compiled(j).as_ref() {
        Ok(exe) => Ok(exe.run(inputs)?.into_iter().collect()),
        Err(_) => apply(j, inputs),
    }
}

/// The plans of the `jit` equations evaluated on values, by jaxpr: the `Arc`'s address,
/// with a weak reference that tells a live jaxpr from a freed one at the same address, and
/// the configuration the plan was compiled under (XLA's rewrites apply under JAX's rules).
type Compiled = HashMap<usize, (Weak<ClosedJaxpr>, Context, Arc<Result<Executable, Error>>)>;

/// The most plans [`compiled`] keeps (those of freed jaxprs leave first, then all).
const COMPILED_MAX: usize = 256;

/// `j`'s plan, compiled once (a loop evaluated on values calls its body's `jit` equations
/// every iteration).
fn compiled(j: &Arc<ClosedJaxpr>) -> Arc<Result<Executable, Error>> {
    static CACHE: LazyLock<Mutex<Compiled>> = LazyLock::new(Mutex::default);
    let key = Arc::as_ptr(j) as usize;
    let context = Context::now();
    if let Ok(cache) = CACHE.lock()
        && let Some((weak, was, exe)) = cache.get(&key)
        && *was == context
        && weak.upgrade().is_some_and(|k| Arc::ptr_eq(&k, j))
    {
        return exe.clone();
    }
    let exe = Arc::new(Executable::compile(j));
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= COMPILED_MAX {
            cache.retain(|_, (weak, _, _)| weak.strong_count() > 0);
            if cache.len() >= COMPILED_MAX {
                cache.clear();
            }
        }
        cache.insert(key, (Arc::downgrade(j), context, exe.clone()));
    }
    exe
}

/// One traced signature: its jaxpr, the output's pytree template and, once run outside any
/// transformation, the compiled plan.
#[derive(Clone)]
struct Entry {
    jaxpr: Arc<ClosedJaxpr>,
    template: Arc<dyn Any + Send + Sync>,
    plan: Arc<std::sync::OnceLock<Result<Executable, Error>>>,
}

/// The traces by signature, each with the configuration it was traced under.
type Cache = HashMap<Vec<ShapedArray>, Vec<(Context, Entry)>>;

/// What a trace depends on beyond the arguments' types, as JAX's jit cache keys on its
/// configuration: the rules in force (x64, strict promotion, the rule set) and the default
/// PRNG implementation (by address: implementations are statics).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Context {
    rules: dtype_lattice::Rules,
    prng: usize,
}

impl Context {
    fn now() -> Context {
        Context {
            rules: crate::config::rules(),
            prng: std::ptr::from_ref(crate::config::default_prng_impl()) as usize,
        }
    }
}

/// A jitted function ([`jit`]): traced once per input signature (shapes, dtypes and weak
/// types of the arguments' leaves) and configuration (the rules in force and the default
/// PRNG implementation, on which JAX's cache keys too), the jaxpr cached and applied through
/// the `jit` call primitive.
pub struct Jit<F> {
    f: F,
    name: String,
    cache: Mutex<Cache>,
}

/// `jax.jit(f)`: `f` staged once per input signature and applied as a jaxpr.
///
/// ```
/// use dtype_lattice_array::{Array, jit, numpy as jnp};
/// let f = jit(|x: Array| jnp::multiply(&x, jnp::add(1, 1)?));
/// let y: Array = f.call(&Array::scalar(3i32))?;
/// assert_eq!(y.to_vec::<i32>()?, [6]);
/// assert_eq!(f.traces(), 1);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
pub fn jit<F>(f: F) -> Jit<F> {
    Jit {
        f,
        name: "<lambda>".to_string(),
        cache: Mutex::new(HashMap::new()),
    }
}

impl<F> Jit<F> {
    /// The same function under another name (printed in `jit[name=...]`).
    #[must_use]
    pub fn named(mut self, name: &str) -> Jit<F> {
        self.name = name.to_string();
        self
    }

    /// How many signatures have been traced (a signature traced under other rules counts
    /// again).
    pub fn traces(&self) -> usize {
        self.cache
            .lock()
            .map_or(0, |c| c.values().map(Vec::len).sum())
    }

    /// The closed jaxpr for these arguments (traced now if not cached).
    ///
    /// # Errors
    ///
    /// As [`Jit::call`].
    pub fn lower<I, O>(&self, args: &I) -> Result<Arc<ClosedJaxpr>, Error>
    where
        I: Pytree,
        O: Pytree + Send + Sync + 'static,
        F: Fn(I) -> Result<O, Error>,
    {
        self.entry::<I, O>(args).map(|e| e.jaxpr)
    }

    /// Traces (if not cached) and compiles the function for these arguments, as
    /// `jax.jit(f).lower(*args).compile()` does, without running it: the plan the next
    /// [`Jit::call`] with this signature runs outside any transformation.
    ///
    /// ```
    /// use dtype_lattice_array::{Array, jit, numpy as jnp};
    /// let f = jit(|x: Array| jnp::sin(&x));
    /// f.compile::<Array, Array>(&Array::from_vec(vec![0.5f32; 4]))?;
    /// assert_eq!(f.traces(), 1);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Jit::call`] when tracing fails.
    pub fn compile<I, O>(&self, args: &I) -> Result<(), Error>
    where
        I: Pytree,
        O: Pytree + Send + Sync + 'static,
        F: Fn(I) -> Result<O, Error>,
    {
        let entry = self.entry::<I, O>(args)?;
        match entry.plan.get_or_init(|| Executable::compile(&entry.jaxpr)) {
            Ok(_) => Ok(()),
            Err(e) => Err(e.clone()),
        }
    }

    fn entry<I, O>(&self, args: &I) -> Result<Entry, Error>
    where
        I: Pytree,
        O: Pytree + Send + Sync + 'static,
        F: Fn(I) -> Result<O, Error>,
    {
        let key: Vec<ShapedArray> = args.leaves().iter().map(|x| x.aval().clone()).collect();
        let context = Context::now();
        let hit = self.cache.lock().ok().and_then(|c| {
            c.get(&key)?
                .iter()
                .find(|(k, _)| *k == context)
                .map(|(_, e)| e.clone())
        });
        if let Some(hit) = hit {
            return Ok(hit);
        }
        let (closed, template) = trace(&self.f, args, "jit")?;
        let entry = Entry {
            jaxpr: Arc::new(closed),
            template: Arc::new(template),
            plan: Arc::default(),
        };
        if let Ok(mut c) = self.cache.lock() {
            c.entry(key).or_default().push((context, entry.clone()));
        }
        Ok(entry)
    }

    /// Applies the function: traced on the first call with this signature, then the cached
    /// jaxpr applied (under an enclosing transformation, through it).
    ///
    /// # Errors
    ///
    /// Whatever `f` returns when traced; JAX's `ConcretizationTypeError` when it asks a traced
    /// value for its elements.
    pub fn call<I, O>(&self, args: &I) -> Result<O, Error>
    where
        I: Pytree,
        O: Pytree + Send + Sync + 'static,
        F: Fn(I) -> Result<O, Error>,
    {
        let Entry {
            jaxpr,
            template,
            plan,
        } = self.entry::<I, O>(args)?;
        let leaves = args.leaves();
        let refs: Vec<&Array> = leaves.iter().collect();
        let outs: Vec<Array> = if crate::core::current().is_none() {
            // Outside any transformation: the compiled plan (checking first, as binding does,
            // that no argument is a tracer).
            crate::core::check_concrete(&refs)?;
            match plan.get_or_init(|| Executable::compile(&jaxpr)) {
                Ok(exe) => exe.run(&refs)?,
                Err(e) => return Err(e.clone()),
            }
        } else {
            let params = Params::new()
                .with("name", Param::Name(self.name.clone()))
                .with("jaxpr", Param::Jaxpr(jaxpr));
            crate::core::bind(&JIT, &refs, &params)?.into_vec()
        };
        let template = template.downcast_ref::<O>().ok_or_else(|| {
            Error::refused(
                Exception::TypeError,
                "jit: the output type changed between calls",
            )
        })?;
        template.rebuild(&mut outs.into_iter())
    }
}
