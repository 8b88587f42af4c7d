//! Custom derivatives as the traces see them: a `custom_jvp` function with its JVP rule, or a
//! `custom_vjp` function with its forward and backward passes, over flattened leaves
//! ([`Custom`]); [`RuleRef`] and [`VjpRef`] carry them in primitives' parameters. The user
//! API and the rules' interpretation are `crate::interpreters::custom`.

use std::fmt;
use std::sync::Arc;

use dtype_lattice::Error;

use super::current;
use crate::array::Array;

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
    /// The names JAX prints for the function (`name=`) and for its rule (`jvp=`), if given.
    fn names(&self) -> (Option<&str>, Option<&str>) {
        (None, None)
    }
}

/// A `custom_vjp` function over flattened leaves: the function, its forward pass (outputs
/// and residuals) and its backward pass (input cotangents from residuals and output
/// cotangents).
pub(crate) trait CustomVjpRule: Send + Sync {
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error>;
    fn fwd(&self, args: Vec<Array>) -> Result<(Vec<Array>, Vec<Array>), Error>;
    fn bwd(&self, res: Vec<Array>, cts: Vec<Array>) -> Result<Vec<Array>, Error>;
}

macro_rules! rule_ref {
    ($(#[$doc:meta])* $name:ident, $rule:ident, $text:literal) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name(pub(crate) Arc<dyn $rule>);

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str($text)
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &$name) -> bool {
                Arc::ptr_eq(&self.0, &other.0)
            }
        }
    };
}

rule_ref!(
    /// A [`CustomJvp`](crate::CustomJvp)'s rule as a primitive parameter (`jvp=<rule>`).
    RuleRef,
    CustomJvpRule,
    "<custom jvp rule>"
);
rule_ref!(
    /// A [`CustomVjp`](crate::CustomVjp)'s passes as a primitive parameter (`fwd=... bwd=...`).
    VjpRef,
    CustomVjpRule,
    "<custom vjp rule>"
);

/// A custom-derivative function as the traces see it.
#[derive(Clone)]
pub(crate) enum Custom {
    Jvp(RuleRef),
    Vjp(VjpRef),
}

impl Custom {
    /// The function itself, traced through.
    pub(crate) fn call(&self, args: &[Array]) -> Result<Vec<Array>, Error> {
        match self {
            Custom::Jvp(r) => r.0.call(args.to_vec()),
            Custom::Vjp(r) => r.0.call(args.to_vec()),
        }
    }

    /// Applied under the current trace.
    pub(crate) fn dispatch(&self, args: &[Array]) -> Result<Vec<Array>, Error> {
        match current() {
            None => self.call(args),
            Some(trace) => trace.process_custom(self, args),
        }
    }
}
