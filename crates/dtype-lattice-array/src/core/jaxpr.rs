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
use std::fmt::{self, Write as _};

use dtype_lattice::error::Exception;
use dtype_lattice::{Error, Value};

use super::{Param, Params, Primitive};
use crate::array::{Array, ShapedArray};
use crate::repr::Scalar;

/// A variable of a jaxpr: an identity and an abstract value.
#[derive(Clone, Debug)]
pub struct Var {
    pub(crate) id: u32,
    pub(crate) aval: ShapedArray,
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
    /// A constant scalar.
    Literal(Array),
}

impl Atom {
    /// Its abstract value.
    pub fn aval(&self) -> &ShapedArray {
        match self {
            Atom::Var(v) => &v.aval,
            Atom::Literal(a) => a.aval(),
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
        let mut env: HashMap<u32, Array> = HashMap::new();
        for (v, x) in j.constvars.iter().zip(&self.consts) {
            env.insert(v.id, x.clone());
        }
        for (v, x) in j.invars.iter().zip(args) {
            env.insert(v.id, x.clone());
        }
        let read = |a: &Atom, env: &HashMap<u32, Array>| -> Result<Array, Error> {
            match a {
                Atom::Literal(x) => Ok(x.clone()),
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

/// `a`, …, `z`, `ba`, `bb`, …: JAX's variable names.
fn var_name(n: usize) -> String {
    let mut n = n;
    let mut s = Vec::new();
    loop {
        s.push(b'a' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

/// The printer's names of one jaxpr's variables, in order of appearance.
#[derive(Default)]
struct Names(HashMap<u32, String>);

impl Names {
    fn of(&mut self, v: &Var) -> String {
        let n = self.0.len();
        self.0.entry(v.id).or_insert_with(|| var_name(n)).clone()
    }

    fn binder(&mut self, v: &Var) -> String {
        format!("{}:{}", self.of(v), v.aval)
    }

    fn atom(&mut self, a: &Atom) -> String {
        match a {
            Atom::Var(v) => self.of(v),
            Atom::Literal(x) => format!("{}:{}", literal_text(x), x.aval()),
        }
    }
}

/// A literal's value as Python prints the scalar (`1`, `2.0`, `True`, `-0.9999999403953552`).
fn literal_text(x: &Array) -> String {
    match x.element(0) {
        Some(Scalar::Bool(b)) => Value::Bool(b).to_string(),
        Some(Scalar::Int(i)) => i.to_string(),
        Some(Scalar::Float(f)) => Value::Float(f).to_string(),
        Some(Scalar::Complex(re, im)) => Value::Complex(re, im).to_string(),
        Some(Scalar::Float0) => "(b'',)".to_string(),
        _ => "?".to_string(),
    }
}

/// The width JAX's pretty printer fits lines into.
const WIDTH: usize = 80;

/// A parameter's text at `indent` (nested jaxprs print on their own lines).
fn param_text(value: &Param, indent: usize) -> String {
    match value {
        Param::Jaxpr(j) => pp_closed(j, indent),
        other => other.to_string(),
    }
}

fn pp_eqn(
    eqn: &Eqn,
    names: &mut Names,
    indent: usize,
    used: Option<&std::collections::HashSet<u32>>,
) -> String {
    // Outputs nothing reads print as `_` (JAX's drop variables).
    let outs = join(
        eqn.outputs.iter().map(|v| match used {
            Some(u) if !u.contains(&v.id) => format!("_:{}", v.aval),
            _ => names.binder(v),
        }),
        " ",
    );
    let args = join(eqn.inputs.iter().map(|a| names.atom(a)), " ");
    // Sorted by name, as JAX prints them (a call's name first).
    let mut params: Vec<(String, &Param)> = eqn
        .params
        .iter()
        .filter(|(n, v)| eqn.prim.shows_param(n, v))
        .map(|(n, v)| (n.to_string(), v))
        .collect();
    params.sort_by_key(|(n, _)| (n != "name", n.clone()));
    let lhs = format!("{outs} = {}", eqn.prim.name);
    let flat_params = if params.is_empty() {
        String::new()
    } else {
        format!(
            "[{}]",
            join(
                params
                    .iter()
                    .map(|(n, v)| format!("{n}={}", param_text(v, 0))),
                " "
            )
        )
    };
    let flat = format!("{lhs}{flat_params} {args}");
    if indent + flat.len() <= WIDTH && !flat.contains('\n') || params.is_empty() {
        return flat;
    }
    let pad = " ".repeat(indent + 2);
    let mut s = format!("{lhs}[\n");
    for (n, v) in &params {
        let _ = writeln!(s, "{pad}{n}={}", param_text(v, indent + 2));
    }
    let _ = write!(s, "{}] {args}", " ".repeat(indent));
    s
}

fn pp_closed(j: &ClosedJaxpr, indent: usize) -> String {
    pp_jaxpr(&j.jaxpr, indent)
}

fn pp_jaxpr(j: &Jaxpr, indent: usize) -> String {
    let mut names = Names::default();
    let consts = join(j.constvars.iter().map(|v| names.binder(v)), " ");
    let ins = join(j.invars.iter().map(|v| names.binder(v)), " ");
    let head = format!("{{ lambda {consts}; {ins}. let");
    let mut used = std::collections::HashSet::new();
    for a in j.eqns.iter().flat_map(|e| &e.inputs).chain(&j.outvars) {
        if let Atom::Var(v) = a {
            used.insert(v.id);
        }
    }
    let eqns: Vec<String> = j
        .eqns
        .iter()
        .map(|e| pp_eqn(e, &mut names, indent + 4, Some(&used)))
        .collect();
    let outs: Vec<String> = j.outvars.iter().map(|a| names.atom(a)).collect();
    let outs = match outs.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", outs.join(", ")),
    };
    if eqns.is_empty() {
        return format!("{head}  in {outs} }}");
    }
    // One line, equations separated by `; `, when it fits.
    let flat = format!("{head} {} in {outs} }}", eqns.join("; "));
    if indent + flat.len() <= WIDTH && !flat.contains('\n') {
        return flat;
    }
    let mut s = head;
    for e in &eqns {
        let _ = write!(s, "\n{}{e}", " ".repeat(indent + 4));
    }
    let _ = write!(s, "\n{}in {outs} }}", " ".repeat(indent + 2));
    s
}

impl fmt::Display for Jaxpr {
    /// As `print(jax.make_jaxpr(f)(x))` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&pp_jaxpr(self, 0))
    }
}

impl fmt::Display for ClosedJaxpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&pp_jaxpr(&self.jaxpr, 0))
    }
}

/// One equation as JAX's error messages print it, its own variables named afresh
/// (`a:i32[] = reduce_prod[axes=(0,)] b`).
pub(crate) fn eqn_text(eqn: &Eqn) -> String {
    let mut names = Names::default();
    for v in &eqn.outputs {
        names.of(v);
    }
    pp_eqn(eqn, &mut names, 0, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_count_as_jax_names_them() {
        let names: Vec<String> = [0, 1, 25, 26, 27, 51, 52, 675, 676]
            .iter()
            .map(|&n| var_name(n))
            .collect();
        assert_eq!(names, ["a", "b", "z", "ba", "bb", "bz", "ca", "zz", "baa"]);
    }
}
