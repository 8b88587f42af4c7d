//! `jax.jit`'s dispatch of `jax.numpy`'s jitted functions, where it shows in results.
//!
//! The first call of a jitted function with a given argument signature (each argument's
//! dtype, weak type and shape; a Python scalar's type) goes through Python, which
//! abstractifies every argument: a Python int beyond the default integer's range raises
//! `OverflowError` there. A first call that succeeds leaves an entry for C++'s fast path,
//! which later calls with that signature take; it converts only the arguments the compiled
//! computation keeps (`jit` prunes the unused ones, `keep_unused=False`), so an unused
//! argument is never parsed and any Python int passes. A first call that fails leaves the
//! signature to Python for good. So `jnp.isfinite(2**31)` raises in a fresh process, but
//! not after `jnp.isfinite(0)` (whose computation, `full_like(x, True)` for an integer
//! operand, does not use `x`) — the eval fixtures' `isfinite 2147483648`, which JAX
//! evaluated after `isfinite 0`.
//!
//! [`JitDispatch`] keeps that state for a run of calls (one `eval --batch`, as one JAX
//! process): the outcome of each first call per function and signature.

use std::collections::HashMap;

use dtype_lattice::{Error, Value};

use super::{ArrayLike, Function, Keywords, is_numpy, rules};
use crate::array::Array;

/// The functions whose computation drops an operand that is not a float (an integer or
/// bool one): `isfinite` and `isinf` are `full_like` of it.
const DROPS_NON_FLOAT_OPERANDS: &[&str] = &["isfinite", "isinf"];

/// What `jit`'s signature records of one argument.
fn signature(x: &ArrayLike<'_>) -> String {
    match x {
        ArrayLike::Scalar(Value::Bool(_)) => "bool".into(),
        ArrayLike::Scalar(Value::Int(_)) => "int".into(),
        ArrayLike::Scalar(Value::Float(_)) => "float".into(),
        ArrayLike::Scalar(Value::Complex(..)) => "complex".into(),
        ArrayLike::Array(a) => format!("{}", a.aval()),
        ArrayLike::Owned(a) => format!("{}", a.aval()),
        ArrayLike::Failed(_) => "?".into(),
    }
}

/// The dispatch state of a run of `jax.numpy` calls (see the module doc).
#[derive(Debug, Default)]
pub struct JitDispatch {
    /// Per function, rules and argument signature: whether its first call succeeded.
    first_calls: HashMap<(&'static str, String, Vec<String>), bool>,
}

impl JitDispatch {
    /// A fresh state (a new process: every signature's first call is ahead).
    pub fn new() -> JitDispatch {
        JitDispatch::default()
    }

    /// Calls `f` on `args` as `jax.jit` dispatches it (under NumPy's rules, simply calls it).
    ///
    /// # Errors
    ///
    /// As [`Function::call`].
    pub fn call(&mut self, f: &Function, args: Vec<ArrayLike<'_>>) -> Result<Array, Error> {
        self.call_with(f, args, &Keywords::new())
    }

    /// [`JitDispatch::call`] with keyword arguments (static arguments of the jitted function:
    /// part of its signature).
    ///
    /// # Errors
    ///
    /// As [`Function::call_with`].
    pub fn call_with(
        &mut self,
        f: &Function,
        args: Vec<ArrayLike<'_>>,
        keywords: &Keywords,
    ) -> Result<Array, Error> {
        let r = rules();
        if is_numpy(&r) {
            return f.call_with(args, keywords);
        }
        let key = (
            f.name,
            format!("{:?} {keywords}", r.options()),
            args.iter().map(signature).collect::<Vec<_>>(),
        );
        match self.first_calls.get(&key) {
            Some(true) if DROPS_NON_FLOAT_OPERANDS.contains(&f.name) => {
                // C++'s fast path: the dropped Python ints are never parsed (any value
                // computes the same result).
                let args = args
                    .into_iter()
                    .map(|a| match a {
                        ArrayLike::Scalar(Value::Int(_)) => ArrayLike::Scalar(Value::Int(0)),
                        other => other,
                    })
                    .collect();
                f.call_with(args, keywords)
            }
            Some(_) => f.call_with(args, keywords),
            None => {
                let out = f.call_with(args, keywords);
                self.first_calls.insert(key, out.is_ok());
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numpy::function;

    /// The unary fixture's order (tests/fixtures/eval/jax_x32_unary.json): `isfinite 0`, then
    /// `isfinite 2147483648` gives `True`; `isinf 2147483648` first raises, and keeps raising
    /// after `isinf 300` succeeds.
    #[test]
    fn a_dropped_python_int_passes_after_a_successful_first_call() {
        let int = |v: i128| vec![ArrayLike::Scalar(Value::Int(v))];
        let mut d = JitDispatch::new();
        let isfinite = &function("isfinite").unwrap();
        assert!(d.call(isfinite, int(2_147_483_648)).is_err());
        let mut d = JitDispatch::new();
        assert!(d.call(isfinite, int(0)).is_ok());
        let r = d.call(isfinite, int(2_147_483_648)).unwrap();
        assert_eq!(r.to_vec::<bool>().unwrap(), [true]);
        let isinf = &function("isinf").unwrap();
        assert!(d.call(isinf, int(2_147_483_648)).is_err());
        assert!(d.call(isinf, int(300)).is_ok());
        assert!(d.call(isinf, int(2_147_483_648)).is_err());
        // A function whose computation uses its operand parses it: `negative 2`, then
        // `negative 2147483648` raises (the fixture's order too).
        let negative = &function("negative").unwrap();
        assert!(d.call(negative, int(2)).is_ok());
        assert!(d.call(negative, int(2_147_483_648)).is_err());
    }
}
