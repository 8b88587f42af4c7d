//! The printer: a jaxpr laid out as JAX 0.10.2's `pp_toplevel_jaxpr` lays it out, so that the
//! text is JAX's to the character.
//!
//! Two parts. A document algebra with Lindig's "strictly pretty" layout (text, concatenation,
//! breaks, groups, nesting; a group prints flat when it fits in the rest of its line, else its
//! breaks become newlines), as jaxlib's `_pretty_printer` implements it: the fit is checked for
//! the group alone, not the text after it. No crate implements this variant (the `pretty`
//! crate's groups check what follows them too, which breaks other lines than JAX breaks), so
//! it is written here; it is 80 lines.
//!
//! Then JAX's document for a jaxpr: one naming context for the whole text (nested jaxprs go on
//! counting `a`, `b`, … where the enclosing one stopped, skipping the names of shared jaxprs),
//! `_` for top-level outputs nothing reads and for dropped binders, a `jit`'s inner variables
//! named after its operands and results, jaxprs used more than once (or nested ones of more
//! than ten equations) printed first as `let NAME = { lambda … } in` and referred to by name,
//! parameters sorted by name with a call's `name` first.

use std::collections::{HashMap, HashSet, VecDeque};

use super::{Atom, Eqn, Jaxpr, Var};
use crate::core::{Call, Param};
use crate::repr::Scalar;
use dtype_lattice::Value;

/// The width JAX's pretty printer fits lines into.
const WIDTH: isize = 80;

/// A document.
enum Doc {
    Nil,
    Text(String),
    Concat(Vec<Doc>),
    /// A break: its text when its group is flat, else a newline and the indentation.
    Brk(&'static str),
    Group(Box<Doc>),
    Nest(usize, Box<Doc>),
}

fn text(s: impl Into<String>) -> Doc {
    Doc::Text(s.into())
}

fn group(d: Doc) -> Doc {
    Doc::Group(Box::new(d))
}

fn nest(n: usize, d: Doc) -> Doc {
    Doc::Nest(n, Box::new(d))
}

/// `docs` with `sep()` between each two.
fn join(docs: Vec<Doc>, sep: impl Fn() -> Doc) -> Doc {
    let mut out = Vec::with_capacity(docs.len() * 2);
    for (i, d) in docs.into_iter().enumerate() {
        if i > 0 {
            out.push(sep());
        }
        out.push(d);
    }
    match out.len() {
        0 => Doc::Nil,
        1 => out.pop().unwrap_or(Doc::Nil),
        _ => Doc::Concat(out),
    }
}

fn width_of(s: &str) -> isize {
    s.chars().count() as isize
}

/// Whether `doc` printed flat fits in `width` columns.
fn fits(doc: &Doc, mut width: isize) -> bool {
    let mut stack = vec![doc];
    while width >= 0 {
        let Some(d) = stack.pop() else { break };
        match d {
            Doc::Nil => {}
            Doc::Text(s) => width -= width_of(s),
            Doc::Brk(s) => width -= width_of(s),
            Doc::Concat(children) => stack.extend(children.iter().rev()),
            Doc::Group(c) | Doc::Nest(_, c) => stack.push(c),
        }
    }
    width >= 0
}

/// The text of `doc` laid out in `width` columns.
fn format(doc: &Doc, width: isize) -> String {
    let mut out = String::new();
    let mut column: isize = 0;
    // (indentation, flat, document)
    let mut agenda: Vec<(usize, bool, &Doc)> = vec![(0, false, doc)];
    while let Some((indent, flat, d)) = agenda.pop() {
        match d {
            Doc::Nil => {}
            Doc::Text(s) => {
                out.push_str(s);
                column += width_of(s);
            }
            Doc::Brk(s) if flat => {
                out.push_str(s);
                column += width_of(s);
            }
            Doc::Brk(_) => {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', indent));
                column = indent as isize;
            }
            Doc::Concat(children) => {
                agenda.extend(children.iter().rev().map(|c| (indent, flat, c)))
            }
            Doc::Nest(n, c) => agenda.push((indent + n, flat, c)),
            Doc::Group(c) => agenda.push((indent, fits(c, width - column), c)),
        }
    }
    out
}

/// `a`, …, `z`, `ba`, `bb`, …: JAX's variable names.
pub(super) fn var_name(n: usize) -> String {
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

/// A jaxpr's identity (variables are numbered per jaxpr, so a variable is its jaxpr's
/// identity and its number).
fn key(j: &Jaxpr) -> usize {
    std::ptr::from_ref(j) as usize
}

/// JAX's `JaxprPpContext`: every variable's name, given at first print, and the shared jaxprs.
#[derive(Default)]
struct Context {
    names: HashMap<(usize, u32), String>,
    next: usize,
    shared_names: HashSet<String>,
    shared: HashMap<usize, String>,
}

impl Context {
    fn fresh(&mut self) -> String {
        loop {
            let name = var_name(self.next);
            self.next += 1;
            if !self.shared_names.contains(&name) {
                return name;
            }
        }
    }

    fn name(&mut self, j: &Jaxpr, v: &Var) -> String {
        if v.dropped {
            return "_".to_string();
        }
        if let Some(n) = self.names.get(&(key(j), v.id)) {
            return n.clone();
        }
        let n = self.fresh();
        self.names.insert((key(j), v.id), n.clone());
        n
    }

    /// JAX's `suggest_same_var_names`: `inner`'s variables (of the called jaxpr) take the
    /// names of the `outer` atoms they stand for, where those are variables, each once.
    fn suggest<'a>(
        &mut self,
        inner: &Jaxpr,
        for_vars: impl ExactSizeIterator<Item = Option<&'a Var>>,
        outer: &Jaxpr,
        like: impl ExactSizeIterator<Item = Option<&'a Var>>,
    ) {
        if for_vars.len() != like.len() {
            return;
        }
        let mut used = HashSet::new();
        for (f, l) in for_vars.zip(like) {
            let (Some(f), Some(l)) = (f, l) else { continue };
            if used.contains(&l.id) || self.names.contains_key(&(key(inner), f.id)) {
                continue;
            }
            used.insert(l.id);
            let n = self.name(outer, l);
            self.names.insert((key(inner), f.id), n);
        }
    }
}

fn atom_var(a: &Atom) -> Option<&Var> {
    match a {
        Atom::Var(v) => Some(v),
        Atom::Literal(..) => None,
    }
}

/// A literal's value as Python prints the scalar (`1`, `2.0`, `True`, `-0.9999999403953552`,
/// `(1+2j)`). A weakly typed float literal stands for the Python float it was made from,
/// which JAX keeps and prints (`1e-05:f32[]`, `1.7:f32[]`) where a NumPy scalar's value is
/// printed as the float64 it converts to (`-0.9999999403953552:f32[]`): it is written as the
/// shortest decimal that rounds to the same float16, bfloat16 or float32 (the Python float
/// it came from, unless that had more digits than the format holds).
pub(crate) fn literal_text(x: &crate::array::Array) -> String {
    use dtype_lattice::DType;
    match x.element(0) {
        Some(Scalar::Bool(b)) => Value::Bool(b).to_string(),
        Some(Scalar::Int(i)) => i.to_string(),
        Some(Scalar::Float(f)) if x.weak_type() && f.is_finite() => {
            let same: fn(f64, f64) -> bool = match x.dtype() {
                DType::Float32 => |a, b| (a as f32).to_bits() == (b as f32).to_bits(),
                DType::Float16 => {
                    |a, b| half::f16::from_f64(a).to_bits() == half::f16::from_f64(b).to_bits()
                }
                DType::BFloat16 => {
                    |a, b| half::bf16::from_f64(a).to_bits() == half::bf16::from_f64(b).to_bits()
                }
                _ => |a, b| a.to_bits() == b.to_bits(),
            };
            Value::Float(shortest(f, same)).to_string()
        }
        Some(Scalar::Float(f)) => Value::Float(f).to_string(),
        Some(Scalar::Complex(re, im)) => Value::Complex(re, im).to_string(),
        Some(Scalar::Float0) => "(b'',)".to_string(),
        _ => "?".to_string(),
    }
}

/// The float64 of fewest significant decimal digits that `same` takes for `x` (`x` itself
/// at most).
fn shortest(x: f64, same: fn(f64, f64) -> bool) -> f64 {
    (1..17)
        .filter_map(|digits| format!("{x:.*e}", digits - 1).parse::<f64>().ok())
        .find(|&v| same(v, x))
        .unwrap_or(x)
}

/// The jaxprs a parameter holds.
fn jaxprs_in(p: &Param) -> Vec<&Jaxpr> {
    match p.value() {
        Param::Jaxpr(j) => vec![&j.jaxpr],
        Param::Jaxprs(js) => js.iter().map(|j| &j.jaxpr).collect(),
        _ => Vec::new(),
    }
}

/// JAX's choice of shared jaxprs: those met more than once walking the text breadth first
/// (a nested one of more than ten equations counts twice), named by the `name` parameter of
/// the first equation met holding them (else `jaxpr`), made unique with a counter.
fn shared_jaxprs(top: &Jaxpr) -> Vec<(String, &Jaxpr)> {
    let mut order: Vec<(&Jaxpr, usize)> = Vec::new();
    let mut index: HashMap<usize, usize> = HashMap::new();
    let mut names: HashMap<usize, String> = HashMap::new();
    let mut expanded: HashMap<usize, u8> = HashMap::new();
    let mut queue = VecDeque::from([top]);
    while let Some(j) = queue.pop_front() {
        let i = *index.entry(key(j)).or_insert_with(|| {
            order.push((j, 0));
            order.len() - 1
        });
        order[i].1 += if !std::ptr::eq(j, top) && j.eqns.len() > 10 {
            2
        } else {
            1
        };
        // A jaxpr met twice has had its nested jaxprs met twice: counting further meetings
        // changes nothing (JAX walks them all; this bounds the walk).
        let seen = expanded.entry(key(j)).or_insert(0);
        if *seen >= 2 {
            continue;
        }
        *seen += 1;
        for eqn in &j.eqns {
            let name = match eqn.params.get("name") {
                Some(Param::Name(n)) => Some(n.trim_matches(['<', '>']).to_string()),
                _ => None,
            };
            for (_, p) in eqn.params.iter() {
                for sub in jaxprs_in(p) {
                    queue.push_back(sub);
                    if let Some(n) = &name {
                        names.entry(key(sub)).or_insert_with(|| n.clone());
                    }
                }
            }
        }
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut shared = Vec::new();
    for (j, c) in order {
        if c == 1 {
            continue;
        }
        let mut name = names
            .get(&key(j))
            .cloned()
            .unwrap_or_else(|| "jaxpr".to_string());
        let count = counts.entry(name.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            name = format!("{name}{}", *count - 1);
            *counts.entry(name.clone()).or_insert(0) += 1;
        }
        shared.push((name, j));
    }
    shared
}

/// Binders with their types: `a:f32[3] b:i32[]`.
fn binders(ctx: &mut Context, j: &Jaxpr, vars: &[Var]) -> Doc {
    let docs = vars
        .iter()
        .map(|v| text(format!("{}:{}", ctx.name(j, v), v.aval)))
        .collect();
    nest(2, group(join(docs, || group(Doc::Brk(" ")))))
}

fn atom_text(ctx: &mut Context, j: &Jaxpr, a: &Atom) -> String {
    match a {
        Atom::Var(v) => ctx.name(j, v),
        Atom::Literal(x, Some(text)) => format!("{text}:{}", x.aval()),
        Atom::Literal(x, None) => format!("{}:{}", literal_text(x), x.aval()),
    }
}

fn atoms(ctx: &mut Context, j: &Jaxpr, atoms: &[Atom], comma: bool) -> Doc {
    let docs = atoms.iter().map(|a| text(atom_text(ctx, j, a))).collect();
    let sep = || {
        if comma {
            Doc::Concat(vec![text(","), group(Doc::Brk(" "))])
        } else {
            group(Doc::Brk(" "))
        }
    };
    nest(2, group(join(docs, sep)))
}

fn eqn_doc(ctx: &mut Context, j: &Jaxpr, eqn: &Eqn) -> Doc {
    if let Call::Inlined(param) = eqn.prim.call
        && let Some(Param::Jaxpr(inner)) = eqn.params.get(param)
        && !ctx.shared.contains_key(&key(&inner.jaxpr))
    {
        let inner = &inner.jaxpr;
        ctx.suggest(
            inner,
            inner.invars.iter().map(Some),
            j,
            eqn.inputs.iter().map(atom_var),
        );
        ctx.suggest(
            inner,
            inner.outvars.iter().map(atom_var),
            j,
            eqn.outputs.iter().map(Some),
        );
    }
    let lhs = binders(ctx, j, &eqn.outputs);
    let mut params: Vec<(&str, &Param)> = eqn
        .params
        .iter()
        .filter(|(n, v)| eqn.prim.shows_param(n, v))
        .collect();
    params.sort_by_key(|(n, _)| (*n != "name", *n));
    let params = if params.is_empty() {
        Doc::Nil
    } else {
        let pairs = params
            .into_iter()
            .map(|(n, v)| {
                let value = match v.value() {
                    Param::Jaxpr(inner) => jaxpr_doc(ctx, &inner.jaxpr),
                    // JAX's `pp_jaxprs`: `(`, the jaxprs one per line when they do not fit, `)`.
                    Param::Jaxprs(js) => {
                        let docs = js.iter().map(|j| jaxpr_doc(ctx, &j.jaxpr)).collect();
                        group(Doc::Concat(vec![
                            nest(
                                2,
                                Doc::Concat(vec![
                                    text("("),
                                    Doc::Brk(""),
                                    join(docs, || Doc::Brk(" ")),
                                ]),
                            ),
                            Doc::Brk(""),
                            text(")"),
                        ]))
                    }
                    _ => text(v.to_string()),
                };
                Doc::Concat(vec![text(format!("{n}=")), value])
            })
            .collect();
        group(Doc::Concat(vec![
            nest(
                2,
                Doc::Concat(vec![text("["), Doc::Brk(""), join(pairs, || Doc::Brk(" "))]),
            ),
            Doc::Brk(""),
            text("]"),
        ]))
    };
    let args = Doc::Concat(vec![text(" "), atoms(ctx, j, &eqn.inputs, false)]);
    let rhs = [text(eqn.prim.name), params, args];
    if eqn.outputs.is_empty() {
        Doc::Concat(rhs.into())
    } else {
        let mut all = vec![lhs, text(" = ")];
        all.extend(rhs);
        Doc::Concat(all)
    }
}

fn jaxpr_doc(ctx: &mut Context, j: &Jaxpr) -> Doc {
    if let Some(name) = ctx.shared.get(&key(j)) {
        return text(name.clone());
    }
    skeleton(ctx, j)
}

fn skeleton(ctx: &mut Context, j: &Jaxpr) -> Doc {
    let constvars = binders(ctx, j, &j.constvars);
    let invars = binders(ctx, j, &j.invars);
    let eqns: Vec<Doc> = j.eqns.iter().map(|e| eqn_doc(ctx, j, e)).collect();
    let eqns = join(eqns, || Doc::Brk("; "));
    let outs = Doc::Concat(vec![
        text("("),
        atoms(ctx, j, &j.outvars, true),
        text(if j.outvars.len() == 1 { ",)" } else { ")" }),
    ]);
    // JAX's group holds the closing ` }` too: a jaxpr fits flat only with it.
    group(Doc::Concat(vec![
        nest(
            2,
            Doc::Concat(vec![
                text("{ lambda "),
                constvars,
                text("; "),
                invars,
                text(". let"),
                nest(2, Doc::Concat(vec![Doc::Brk(" "), eqns])),
                Doc::Brk(" "),
                text("in "),
                outs,
            ]),
        ),
        text(" }"),
    ]))
}

/// The text of a top-level jaxpr.
pub(super) fn toplevel(top: &Jaxpr) -> String {
    let mut ctx = Context::default();
    // JAX's `_dropvars`: the top level's outputs nothing reads print as `_`.
    let mut used: HashSet<u32> = top
        .outvars
        .iter()
        .filter_map(atom_var)
        .map(|v| v.id)
        .collect();
    for eqn in top.eqns.iter().rev() {
        for v in &eqn.outputs {
            if !used.contains(&v.id) {
                ctx.names.insert((key(top), v.id), "_".to_string());
            }
        }
        used.extend(eqn.inputs.iter().filter_map(atom_var).map(|v| v.id));
    }
    let shared = shared_jaxprs(top);
    for (name, j) in &shared {
        ctx.shared_names.insert(name.clone());
        ctx.shared.insert(key(j), name.clone());
    }
    let mut docs = Vec::new();
    for (name, j) in &shared {
        docs.push(text(format!("let {name} = ")));
        docs.push(skeleton(&mut ctx, j));
        docs.push(text(" in"));
        docs.push(Doc::Brk(" "));
    }
    docs.push(jaxpr_doc(&mut ctx, top));
    format(&Doc::Concat(docs), WIDTH)
}

/// One equation as JAX's error messages print it, its own variables named afresh
/// (`a:i32[] = reduce_prod[axes=(0,)] b`).
pub(crate) fn eqn_text(eqn: &Eqn) -> String {
    let mut ctx = Context::default();
    let scratch = Jaxpr::default();
    for v in &eqn.outputs {
        ctx.name(&scratch, v);
    }
    format(&eqn_doc(&mut ctx, &scratch, eqn), WIDTH)
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

    #[test]
    fn groups_break_when_they_do_not_fit_alone() {
        let doc = |n: usize| {
            group(nest(
                2,
                Doc::Concat(vec![
                    text("["),
                    Doc::Brk(""),
                    join((0..n).map(|i| text(format!("p{i}=1"))).collect(), || {
                        Doc::Brk(" ")
                    }),
                    Doc::Brk(""),
                    text("]"),
                ]),
            ))
        };
        assert_eq!(format(&doc(2), 80), "[p0=1 p1=1]");
        // Flat it takes 16 columns: in 10 it breaks, every break of the group at once.
        assert_eq!(format(&doc(3), 10), "[\n  p0=1\n  p1=1\n  p2=1\n  ]");
    }
}

#[cfg(test)]
mod literal_tests {
    use super::literal_text;
    use crate::array::scalar_array;
    use dtype_lattice::{DType, Value};

    #[test]
    fn weak_floats_print_as_the_python_float_they_stand_for() {
        let text = |x: f64, dtype, weak| {
            literal_text(&scalar_array(Value::Float(x), dtype, weak).unwrap())
        };
        assert_eq!(text(1.7, DType::Float32, true), "1.7");
        assert_eq!(text(1e-5, DType::Float32, true), "1e-05");
        assert_eq!(text(0.1, DType::BFloat16, true), "0.1");
        assert_eq!(text(1.7, DType::Float16, true), "1.7");
        assert_eq!(text(-2.0, DType::Float16, true), "-2.0");
        assert_eq!(text(f64::NAN, DType::Float32, true), "nan");
        // A strongly typed literal (a NumPy scalar in JAX) prints its float64 value.
        assert_eq!(text(1.7, DType::Float32, false), "1.7000000476837158");
        assert_eq!(text(0.1, DType::Float64, true), "0.1");
    }
}
