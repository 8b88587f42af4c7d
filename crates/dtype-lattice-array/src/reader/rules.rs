//! What the reader knows of primitives beyond the registry: JAX's older name for `jit`, the
//! families of later work refused by name, and the custom-derivative calls, whose rules the
//! text does not hold (but for JAX's own library functions, whose rules are known:
//! [`LIBRARY`]).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use crate::array::Array;
use crate::core::jaxpr::ClosedJaxpr;
use crate::core::{CustomJvpRule, CustomVjpRule, RuleRef, VjpRef};
use crate::core::{Param, Params, Primitive};
use crate::registry::{PRIMITIVES, by_name};

/// Primitives JAX prints that this crate does not implement yet, by family.
/// (None today: every primitive JAX 0.10.2 prints for issue 28's families is implemented.)
const LATER: &[(&str, &[&str])] = &[];

/// The primitive a jaxpr names.
pub(super) fn primitive(name: &str) -> Result<&'static Primitive, String> {
    if let Some(p) = by_name(name) {
        return Ok(p);
    }
    if name == "pjit" {
        return Ok(&crate::jit::JIT);
    }
    if let Some((family, _)) = LATER.iter().find(|(_, names)| names.contains(&name)) {
        return Err(format!(
            "`{name}` is {family}, which this crate does not implement yet"
        ));
    }
    static NAMES: OnceLock<HashMap<String, ()>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        PRIMITIVES
            .iter()
            .map(|p| (p.name.to_string(), ()))
            .collect()
    });
    Err(format!(
        "unknown primitive `{name}`{}",
        super::suggest(name, names)
    ))
}

/// A custom function read from text: its `call_jaxpr`, and no rule.
struct TextRule {
    /// The custom function's name (`name=g`).
    name: String,
    /// Which rule the text names and how (`jvp=<lambda>`).
    rule: String,
    jaxpr: Arc<ClosedJaxpr>,
}

impl TextRule {
    fn refusal(&self) -> Error {
        Error::refused(
            Exception::NotImplementedError,
            format!(
                "cannot differentiate the custom function `{}` read from a jaxpr's text: its \
                 rule ({}) is a Python function, which the text does not hold (differentiating \
                 `{}` itself would not give JAX's derivative)",
                self.name, self.rule, self.name
            ),
        )
    }
}

impl CustomJvpRule for TextRule {
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        self.jaxpr.call(&args)
    }

    fn jvp(&self, _: Vec<Array>, _: Vec<Array>) -> Result<(Vec<Array>, Vec<Array>), Error> {
        Err(self.refusal())
    }
}

impl CustomVjpRule for TextRule {
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        self.jaxpr.call(&args)
    }

    fn fwd(&self, _: Vec<Array>) -> Result<(Vec<Array>, Vec<Array>), Error> {
        Err(self.refusal())
    }

    fn bwd(&self, _: Vec<Array>, _: Vec<Array>) -> Result<Vec<Array>, Error> {
        Err(self.refusal())
    }
}

/// JAX's own custom-JVP functions whose rules are known: the function's name, its rule's name
/// as printed, the primitives of its `call_jaxpr` (nested calls flattened), so that a user's
/// function of the same name is not taken for it.
const LIBRARY: &[(&str, &str, &[&str], Library)] = &[
    ("relu", "jvp", &["jit", "max"], Library::Relu),
    (
        "logaddexp",
        "_logaddexp_jvp",
        &[
            "max", "sub", "ne", "add", "abs", "neg", "exp", "log1p", "add", "select_n",
        ],
        Library::LogAddExp,
    ),
];

/// A rule of [`LIBRARY`].
#[derive(Clone, Copy, Debug)]
enum Library {
    /// `jax.nn.relu`: `select(x > 0, g, 0)`.
    Relu,
    /// `jnp.logaddexp` (`lax.logaddexp`'s `_logaddexp_jvp`): `t1·exp(x1' − y') + t2·exp(x2' −
    /// y')`, where `v'` is `v` with `+inf` replaced by 0.
    LogAddExp,
}

/// The primitives of a jaxpr in order, nested call jaxprs flattened after their call.
fn fingerprint(j: &ClosedJaxpr, out: &mut Vec<&'static str>) {
    for e in j.jaxpr().eqns() {
        out.push(e.primitive().name);
        if let Some(inner) = e.primitive().call_jaxpr(e.params()) {
            fingerprint(&inner, out);
        }
    }
}

/// A JAX library function read from text, whose rule this crate knows.
struct LibraryRule {
    jaxpr: Arc<ClosedJaxpr>,
    kind: Library,
}

impl CustomJvpRule for LibraryRule {
    fn call(&self, args: Vec<Array>) -> Result<Vec<Array>, Error> {
        self.jaxpr.call(&args)
    }

    fn jvp(
        &self,
        primals: Vec<Array>,
        tangents: Vec<Array>,
    ) -> Result<(Vec<Array>, Vec<Array>), Error> {
        use crate::lax::ops;
        let out = self.jaxpr.call(&primals)?;
        let y = &out[0];
        let t = match (self.kind, primals.as_slice(), tangents.as_slice()) {
            (Library::Relu, [x], [g]) => {
                let zero = ops::konst(x, 0.0)?;
                let positive = crate::core::bind1(&crate::lax::GT, &[x, &zero], &Params::new())?;
                ops::select_n(&positive, &[&ops::zeros_like(g)?, g])?
            }
            (Library::LogAddExp, [x1, x2], [t1, t2]) => {
                let finite = |v: &Array| -> Result<Array, Error> {
                    let inf = ops::eq(v, &ops::konst(v, f64::INFINITY)?)?;
                    ops::select_n(&inf, &[v, &ops::zeros_like(v)?])
                };
                let part = |t: &Array, x: &Array| -> Result<Array, Error> {
                    let d = ops::sub(&finite(x)?, &finite(y)?)?;
                    ops::mul(t, &ops::unary(&crate::lax::EXP, &d)?)
                };
                ops::add(&part(t1, x1)?, &part(t2, x2)?)?
            }
            _ => {
                return Err(Error::refused(
                    Exception::TypeError,
                    format!("{:?}'s rule takes other operands", self.kind),
                ));
            }
        };
        Ok((out, vec![t]))
    }
}

/// A custom call's parameters with its rule parameter (`jvp=…`, `fwd=…`) standing for a rule
/// that refuses differentiation, printed as it was written.
pub(super) fn custom_rules(prim: &'static Primitive, params: Params) -> Result<Params, String> {
    let key = match prim.name {
        "custom_jvp_call" => "jvp",
        "custom_vjp_call" => "fwd",
        _ => return Ok(params),
    };
    let Some(Param::Jaxpr(jaxpr)) = params.get("call_jaxpr") else {
        return Err(format!("{} without its call_jaxpr", prim.name));
    };
    let text = params
        .iter()
        .find(|(n, _)| *n == key)
        .map(|(_, v)| v.to_string())
        .ok_or_else(|| format!("{} without its {key} parameter", prim.name))?;
    let name = match params.get("name") {
        Some(Param::Name(n)) => n.clone(),
        _ => "?".to_string(),
    };
    if key == "jvp" {
        let mut prims = Vec::new();
        fingerprint(jaxpr, &mut prims);
        if let Some(&(.., kind)) = LIBRARY
            .iter()
            .find(|(n, rule, fp, _)| *n == name && *rule == text && *fp == prims.as_slice())
        {
            let rule = Arc::new(LibraryRule {
                jaxpr: jaxpr.clone(),
                kind,
            });
            return Ok(params.set(
                key,
                Param::Verbatim {
                    value: Box::new(Param::CustomJvp(RuleRef(rule))),
                    text: text.into(),
                },
            ));
        }
    }
    let rule = Arc::new(TextRule {
        name,
        rule: format!("{key}={text}"),
        jaxpr: jaxpr.clone(),
    });
    let value = if key == "jvp" {
        Param::CustomJvp(RuleRef(rule))
    } else {
        Param::CustomVjp(VjpRef(rule))
    };
    Ok(params.set(
        key,
        Param::Verbatim {
            value: Box::new(value),
            text: text.into(),
        },
    ))
}
