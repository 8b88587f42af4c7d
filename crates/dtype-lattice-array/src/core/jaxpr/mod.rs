//! Jaxprs: JAX's intermediate representation of a staged function. Variables, literals,
//! equations (a primitive, its parameters, input atoms and output variables), nested jaxprs as
//! parameters of call primitives (`jit`); a type checker ([`Jaxpr::typecheck`]), an evaluator
//! ([`ClosedJaxpr::call`], which binds each equation under whatever trace is current, so it
//! also inlines a jaxpr into an enclosing transformation) and a printer that prints as
//! `jax.make_jaxpr` does:
//!
//! ```text
//! { lambda ; a:i32[]. let
//!     b:i32[] = add 1:i32[] 1:i32[]
//!     c:i32[] = mul a b
//!   in (c,) }
//! ```

use std::collections::HashMap;
use std::fmt;

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::{Params, Primitive};
use crate::array::{Array, ShapedArray};

/// A variable of a jaxpr: an identity and an abstract value.
#[derive(Clone, Debug)]
pub struct Var {
    pub(crate) id: u32,
    pub(crate) aval: ShapedArray,
    /// A binder whose value nothing reads, printed `_` (JAX's `DropVar`).
    pub(crate) dropped: bool,
}

impl Var {
    /// Its abstract value.
    pub fn aval(&self) -> &ShapedArray {
        &self.aval
    }
}

impl PartialEq for Var {
    fn eq(&self, other: &Var) -> bool {
        self.id == other.id
    }
}

/// An equation's input: a variable or a literal (a 0-d constant, printed `2.0:f32[]`).
#[derive(Clone, Debug)]
pub enum Atom {
    /// A variable.
    Var(Var),
    /// A constant scalar, and its text where it was read from a jaxpr whose printer wrote it
    /// otherwise than its value prints (JAX prints a weakly typed literal's Python value:
    /// `0.7:f32[]` for the `float32` 0.699999988079071).
    Literal(Array, Option<std::sync::Arc<str>>),
}

impl Atom {
    /// Its abstract value.
    pub fn aval(&self) -> &ShapedArray {
        match self {
            Atom::Var(v) => &v.aval,
            Atom::Literal(a, _) => a.aval(),
        }
    }
}

/// One equation: `outputs = primitive[params] inputs`.
#[derive(Clone, Debug)]
pub struct Eqn {
    pub(crate) prim: &'static Primitive,
    pub(crate) inputs: Vec<Atom>,
    pub(crate) params: Params,
    pub(crate) outputs: Vec<Var>,
}

impl Eqn {
    /// The primitive.
    pub fn primitive(&self) -> &'static Primitive {
        self.prim
    }

    /// The inputs.
    pub fn inputs(&self) -> &[Atom] {
        &self.inputs
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The output variables.
    pub fn outputs(&self) -> &[Var] {
        &self.outputs
    }
}

/// A jaxpr: constant variables, input variables, equations and outputs.
#[derive(Clone, Debug, Default)]
pub struct Jaxpr {
    pub(crate) constvars: Vec<Var>,
    pub(crate) invars: Vec<Var>,
    pub(crate) eqns: Vec<Eqn>,
    pub(crate) outvars: Vec<Atom>,
}

impl Jaxpr {
    /// The constant variables (bound to [`ClosedJaxpr::consts`]).
    pub fn constvars(&self) -> &[Var] {
        &self.constvars
    }

    /// The input variables.
    pub fn invars(&self) -> &[Var] {
        &self.invars
    }

    /// The equations, in order.
    pub fn eqns(&self) -> &[Eqn] {
        &self.eqns
    }

    /// The outputs.
    pub fn outvars(&self) -> &[Atom] {
        &self.outvars
    }

    /// The largest variable id it binds, nested jaxprs aside (fresh variables are numbered
    /// after it).
    pub(crate) fn max_var_id(&self) -> u32 {
        let eqn_vars = self.eqns.iter().flat_map(|e| e.outputs.iter());
        self.constvars
            .iter()
            .chain(&self.invars)
            .chain(eqn_vars)
            .map(|v| v.id)
            .max()
            .unwrap_or(0)
    }

    /// The output abstract values.
    pub fn out_avals(&self) -> Vec<ShapedArray> {
        self.outvars.iter().map(|a| a.aval().clone()).collect()
    }

    /// Checks that every variable is bound before use and that every equation's outputs are
    /// what its primitive's shape rule gives for its inputs (JAX's `core.check_jaxpr`).
    ///
    /// # Errors
    ///
    /// `TypeError` naming the first ill-typed equation or unbound variable.
    pub fn typecheck(&self) -> Result<(), Error> {
        let mut bound: HashMap<u32, &ShapedArray> = HashMap::new();
        for v in self.constvars.iter().chain(&self.invars) {
            bound.insert(v.id, &v.aval);
        }
        let check = |a: &Atom, bound: &HashMap<u32, &ShapedArray>| match a {
            Atom::Var(v) if bound.get(&v.id) != Some(&&v.aval) => Err(Error::refused(
                Exception::TypeError,
                format!("Variable '{}' not defined", v.aval),
            )),
            _ => Ok(()),
        };
        for (i, eqn) in self.eqns.iter().enumerate() {
            for a in &eqn.inputs {
                check(a, &bound)?;
            }
            let avals: Vec<&ShapedArray> = eqn.inputs.iter().map(Atom::aval).collect();
            let out = eqn.prim.abstract_eval(&avals, &eqn.params)?;
            let want: Vec<&ShapedArray> = eqn.outputs.iter().map(|v| &v.aval).collect();
            if out.iter().collect::<Vec<_>>() != want {
                return Err(Error::refused(
                    Exception::TypeError,
                    format!(
                        "equation {i} ({}) gives {} but binds {}",
                        eqn.prim.name,
                        join(out.iter(), ", "),
                        join(want.iter(), ", ")
                    ),
                ));
            }
            for v in &eqn.outputs {
                bound.insert(v.id, &v.aval);
            }
        }
        self.outvars.iter().try_for_each(|a| check(a, &bound))
    }
}

fn join<T: fmt::Display>(items: impl Iterator<Item = T>, sep: &str) -> String {
    items.map(|x| x.to_string()).collect::<Vec<_>>().join(sep)
}

/// A jaxpr with values for its constant variables.
#[derive(Clone, Debug, Default)]
pub struct ClosedJaxpr {
    pub(crate) jaxpr: Jaxpr,
    pub(crate) consts: Vec<Array>,
}

impl PartialEq for ClosedJaxpr {
    /// The same text (jaxprs compare as JAX prints them; consts by abstract value).
    fn eq(&self, other: &ClosedJaxpr) -> bool {
        self.to_string() == other.to_string()
    }
}

impl ClosedJaxpr {
    /// The jaxpr.
    pub fn jaxpr(&self) -> &Jaxpr {
        &self.jaxpr
    }

    /// The values of its constant variables.
    pub fn consts(&self) -> &[Array] {
        &self.consts
    }

    /// The jaxpr with these values for its constant variables (a jaxpr read from text has
    /// none: JAX prints the constvars' types, not their values).
    ///
    /// # Errors
    ///
    /// `TypeError` naming the first value that is missing, extra, or of another shape or
    /// dtype than its constvar.
    pub fn with_consts(mut self, consts: Vec<Array>) -> Result<ClosedJaxpr, Error> {
        let vars = &self.jaxpr.constvars;
        if consts.len() != vars.len() {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "the jaxpr has {} constvars ({}) but {} values were given",
                    vars.len(),
                    join(vars.iter().map(|v| &v.aval), ", "),
                    consts.len()
                ),
            ));
        }
        for (i, (v, c)) in vars.iter().zip(&consts).enumerate() {
            if v.aval.shape() != c.shape() || v.aval.dtype() != c.dtype() {
                return Err(Error::refused(
                    Exception::TypeError,
                    format!("constvar {i} is {} but its value is {}", v.aval, c.aval()),
                ));
            }
        }
        self.consts = consts;
        Ok(self)
    }

    /// Evaluates the jaxpr on `args`, binding each equation under the current trace (so that
    /// inside a transformation the jaxpr is inlined into it).
    ///
    /// # Errors
    ///
    /// `TypeError` for arguments of other avals than the jaxpr's inputs; a primitive's own
    /// refusal.
    pub fn call(&self, args: &[Array]) -> Result<Vec<Array>, Error> {
        let j = &self.jaxpr;
        if args.len() != j.invars.len()
            || args
                .iter()
                .zip(&j.invars)
                .any(|(a, v)| a.shape() != v.aval.shape() || a.dtype() != v.aval.dtype())
        {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "the jaxpr takes ({}) but was called with ({})",
                    join(j.invars.iter().map(|v| &v.aval), ", "),
                    join(args.iter().map(Array::aval), ", ")
                ),
            ));
        }
        if self.consts.len() != j.constvars.len() {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "the jaxpr's {} constvars have no values (ClosedJaxpr::with_consts gives them)",
                    j.constvars.len()
                ),
            ));
        }
        self.eval(args)
    }

    /// JAX's `core.eval_jaxpr`: the jaxpr evaluated on `args` without checking their types
    /// against its inputs' (each primitive checks its own operands), binding each equation
    /// under the current trace.
    pub(crate) fn eval(&self, args: &[Array]) -> Result<Vec<Array>, Error> {
        let j = &self.jaxpr;
        if self.consts.len() != j.constvars.len() || args.len() != j.invars.len() {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "the jaxpr takes {} constants and {} arguments, {} and {} were given \
                     (ClosedJaxpr::with_consts gives the constants)",
                    j.constvars.len(),
                    j.invars.len(),
                    self.consts.len(),
                    args.len()
                ),
            ));
        }
        let mut env: HashMap<u32, Array> = HashMap::new();
        for (v, x) in j.constvars.iter().zip(&self.consts) {
            env.insert(v.id, x.clone());
        }
        for (v, x) in j.invars.iter().zip(args) {
            env.insert(v.id, x.clone());
        }
        let read = |a: &Atom, env: &HashMap<u32, Array>| -> Result<Array, Error> {
            match a {
                Atom::Literal(x, _) => Ok(x.clone()),
                Atom::Var(v) => env.get(&v.id).cloned().ok_or_else(|| {
                    Error::refused(
                        Exception::TypeError,
                        "a jaxpr variable used before its equation",
                    )
                }),
            }
        };
        for eqn in &j.eqns {
            let inputs = eqn
                .inputs
                .iter()
                .map(|a| read(a, &env))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&Array> = inputs.iter().collect();
            let outs = super::bind(eqn.prim, &refs, &eqn.params)?;
            for (v, x) in eqn.outputs.iter().zip(outs) {
                env.insert(v.id, x);
            }
        }
        j.outvars.iter().map(|a| read(a, &env)).collect()
    }
}

pub(crate) mod print;
pub(crate) use print::{eqn_text, literal_text};

/// JAX's name of the `n`-th variable (`a`, …, `z`, `ba`, …), for tests.
#[cfg(test)]
pub(crate) fn var_name_for_tests(n: usize) -> String {
    print::var_name(n)
}

impl fmt::Display for Jaxpr {
    /// As `print(jax.make_jaxpr(f)(x))` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print::toplevel(self))
    }
}

impl fmt::Display for ClosedJaxpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print::toplevel(&self.jaxpr))
    }
}
