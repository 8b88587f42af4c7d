//! The configuration in force: the promotion rules `jax.numpy`'s functions follow (JAX's
//! `jax_enable_x64` and `jax_numpy_dtype_promotion` flags, or another library's rules) and
//! the element semantics they imply (XLA's CPU backend under JAX's rules, NumPy's loops under
//! NumPy's). Everything that reads the configuration (the primitives' implementations, the
//! transformations, `jax.numpy`, `jax.random`) sits above this module.

use std::sync::RwLock;

use dtype_lattice::key::KeyImpl;
use dtype_lattice::{DType, Rules};

/// The promotion rules `jax.numpy`'s functions follow (`jax_enable_x64`,
/// `jax_numpy_dtype_promotion`): JAX's standard rules, x64 off, unless set.
static CONFIG: RwLock<Option<Rules>> = RwLock::new(None);

/// Bumped by [`set_rules`] after each write of [`CONFIG`]: a thread's cached copy of the
/// rules is current while its generation is.
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How elements convert under the rules in force: NumPy's (`astype` with ml_dtypes) for the
/// NumPy rule sets, JAX's (XLA's CPU backend) otherwise.
pub fn semantics() -> crate::convert::Semantics {
    let set = rules().rule_set();
    if set == dtype_lattice::RuleSet::NUMPY || set == dtype_lattice::RuleSet::NUMPY_LEGACY {
        crate::convert::Semantics::NumPy
    } else {
        crate::convert::Semantics::Jax
    }
}

thread_local! {
    /// [`with_deadline`]'s deadline on this thread.
    static DEADLINE: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
    /// [`with_rules`]'s override on this thread (JAX's `jax.enable_x64()` context managers).
    static SCOPED: std::cell::Cell<Option<Rules>> = const { std::cell::Cell::new(None) };
    /// The rules [`rules`] last read from [`CONFIG`] on this thread, with their generation.
    static CACHED: std::cell::Cell<Option<(u64, Rules)>> = const { std::cell::Cell::new(None) };
}

/// The rules in force: [`with_rules`]'s on this thread, else [`set_rules`]'s, else JAX's
/// defaults (standard promotion, x64 off).
pub fn rules() -> Rules {
    if let Some(r) = SCOPED.with(std::cell::Cell::get) {
        return r;
    }
    // Each thread keeps the last rules it read with the generation they had: a relaxed load
    // instead of the lock's two atomic read-modify-writes on every call (an 8-element add
    // asks twice).
    let generation = GENERATION.load(std::sync::atomic::Ordering::Acquire);
    if let Some((g, r)) = CACHED.with(std::cell::Cell::get)
        && g == generation
    {
        return r;
    }
    let r = CONFIG
        .read()
        .map_or_else(|e| *e.into_inner(), |g| *g)
        .unwrap_or_else(Rules::jax);
    CACHED.with(|c| c.set(Some((generation, r))));
    r
}

/// Runs `f` with `rules` in force on this thread only (as JAX's configuration context
/// managers do), then restores the previous rules, also when `f` panics.
///
/// ```
/// use dtype_lattice::{DType, Rules};
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_vec(vec![1i32, 2]);
/// let y = jnp::with_rules(Rules::jax().x64(true), || jnp::add(&x, 2.5))?;
/// assert_eq!(y.dtype(), DType::Float64);
/// assert_eq!(jnp::add(&x, 2.5)?.dtype(), DType::Float32);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
pub fn with_rules<R>(rules: Rules, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Rules>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPED.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SCOPED.with(|s| s.replace(Some(rules))));
    f()
}

/// Sets the rules for every later call (`jax.config.update("jax_enable_x64", True)` is
/// `set_rules(Rules::jax().x64(true))`).
pub fn set_rules(rules: Rules) {
    match CONFIG.write() {
        Ok(mut g) => *g = Some(rules),
        Err(e) => *e.into_inner() = Some(rules),
    }
    // After the write: a thread that sees the new generation reads the new rules.
    GENERATION.fetch_add(1, std::sync::atomic::Ordering::Release);
}

/// [`set_default_prng_impl`]'s implementation (`None`: threefry2x32, JAX's default).
static DEFAULT_PRNG_IMPL: RwLock<Option<&'static KeyImpl>> = RwLock::new(None);

thread_local! {
    /// [`with_default_prng_impl`]'s override on this thread.
    static SCOPED_PRNG_IMPL: std::cell::Cell<Option<&'static KeyImpl>> = const { std::cell::Cell::new(None) };
}

/// `jax_default_prng_impl`: the PRNG implementation of keys made without one
/// (`random::key(seed)`) and of raw key data (`random::prng_key`, a `uint32` array given
/// where a key is expected): [`with_default_prng_impl`]'s on this thread, else
/// [`set_default_prng_impl`]'s, else threefry2x32.
pub fn default_prng_impl() -> &'static KeyImpl {
    if let Some(k) = SCOPED_PRNG_IMPL.with(std::cell::Cell::get) {
        return k;
    }
    DEFAULT_PRNG_IMPL
        .read()
        .map_or_else(|e| *e.into_inner(), |g| *g)
        .unwrap_or(&dtype_lattice::key::THREEFRY2X32)
}

/// Sets [`default_prng_impl`] for every later call
/// (`jax.config.update("jax_default_prng_impl", "rbg")`; by name: `random::set_default_impl`).
pub fn set_default_prng_impl(k: &'static KeyImpl) {
    match DEFAULT_PRNG_IMPL.write() {
        Ok(mut g) => *g = Some(k),
        Err(e) => *e.into_inner() = Some(k),
    }
}

/// Runs `f` with `k` as [`default_prng_impl`] on this thread only, then restores the previous
/// one, also when `f` panics.
///
/// ```
/// use dtype_lattice::key::RBG;
/// use dtype_lattice_array::{config, random};
/// let k = config::with_default_prng_impl(&RBG, || random::key(0))?;
/// assert_eq!(k.dtype().to_string(), "key<rbg>");
/// assert_eq!(random::key(0)?.dtype().to_string(), "key<fry>");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
pub fn with_default_prng_impl<R>(k: &'static KeyImpl, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<&'static KeyImpl>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPED_PRNG_IMPL.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SCOPED_PRNG_IMPL.with(|s| s.replace(Some(k))));
    f()
}

/// Whether the rules are NumPy's (no weak types, NumPy's loops).
pub(crate) fn is_numpy(rules: &Rules) -> bool {
    let set = rules.rule_set();
    set == dtype_lattice::RuleSet::NUMPY || set == dtype_lattice::RuleSet::NUMPY_LEGACY
}

/// The default integer dtype (`int32`, `int64` with x64; NumPy's `int64`).
pub(crate) fn default_int(rules: &Rules) -> DType {
    if rules.options().x64 || is_numpy(rules) {
        DType::Int64
    } else {
        DType::Int32
    }
}

/// Whether the primitives compute as XLA's CPU backend does (JAX's rules), not as NumPy's
/// loops (the NumPy rules in force on this thread, [`semantics`]).
pub(crate) fn on_xla() -> bool {
    semantics() == crate::convert::Semantics::Jax
}

/// Runs `f` with a deadline on this thread: a loop (`while`, `scan`, `fori_loop`) still
/// iterating after `deadline` stops with an error instead of running on (a `while` whose
/// predicate never fails would run forever, as it does in JAX). Nested calls keep the
/// earlier deadline.
///
/// ```
/// use std::time::{Duration, Instant};
/// use dtype_lattice_array::{Array, config, interpreters::control, numpy as jnp};
/// let forever = || control::while_loop(|x: Array| jnp::greater(&x, -1), |x: Array| jnp::add(&x, 1), &Array::scalar(0i32));
/// let e = config::with_deadline(Instant::now() + Duration::from_millis(20), forever).unwrap_err();
/// assert!(e.message().starts_with("the computation ran past its deadline"));
/// ```
pub fn with_deadline<R>(deadline: std::time::Instant, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<std::time::Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let previous = DEADLINE.with(std::cell::Cell::get);
    let _restore = Restore(previous);
    let deadline = previous.map_or(deadline, |p| p.min(deadline));
    DEADLINE.with(|d| d.set(Some(deadline)));
    f()
}

/// `Err` once [`with_deadline`]'s deadline has passed (the loops call it each iteration).
///
/// # Errors
///
/// A `RuntimeError` saying so.
pub(crate) fn check_deadline() -> Result<(), dtype_lattice::Error> {
    match DEADLINE.with(std::cell::Cell::get) {
        Some(d) if std::time::Instant::now() > d => Err(dtype_lattice::Error::refused(
            dtype_lattice::error::Exception::RuntimeError,
            "the computation ran past its deadline (a loop that does not end?)",
        )),
        _ => Ok(()),
    }
}
