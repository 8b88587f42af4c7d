//! The jaxpr reader: the text `print(jax.make_jaxpr(f)(*args))` writes (JAX 0.10.2), read back
//! into a [`ClosedJaxpr`] that evaluates, and transforms, as any function of the crate does.
//!
//! ```
//! use dtype_lattice_array::{Array, core::ClosedJaxpr, grad};
//! let text = "{ lambda ; a:f32[]. let b:f32[] = mul a a; c:f32[] = sin b in (c,) }";
//! let f: ClosedJaxpr = text.parse().unwrap();
//! // Printing a jaxpr read gives the text back.
//! assert_eq!(f.to_string(), text);
//! let x = Array::scalar(0.5f32);
//! let y = f.call(&[x.clone()]).unwrap();
//! assert_eq!(y[0].to_string(), "Array(0.24740396, dtype=float32)");
//! // d/dx sin(x²) = 2x cos(x²)
//! let g = grad(|x: Array| Ok(f.call(&[x])?.remove(0)), &x).unwrap();
//! assert_eq!(g.to_string(), "Array(0.9689124, dtype=float32)");
//! ```
//!
//! The grammar is the printer's (`jax/_src/core.py`'s `pp_toplevel_jaxpr`, the primitives'
//! parameter printers): shared definitions `let NAME = { lambda … } in` first, then
//! `{ lambda CONSTVARS ; INVARS . let EQNS in (OUTS) }`; binders `a:f32[3,4]` (`_` for one
//! nothing reads), literals `1.0:f32[]`, parameters `prim[k=v …]` on one line or one per line.
//! Each equation's primitive is looked up by name ([`crate::registry::by_name`]), its
//! parameters typed by name (`axes=(0,)` a tuple of integers, `new_dtype=float32` a dtype,
//! `jaxpr={ … }` a jaxpr), and its output types checked against the primitive's shape rule:
//! a jaxpr read is well typed. Parameter values JAX prints in its own way
//! (`np.int64(2)`, `<lambda>`, `GatherScatterMode.CLIP`) are kept verbatim for printing.
//!
//! What the text does not hold: weak types (a literal or input is read strongly typed), the
//! values of constants (a ClosedJaxpr's `consts`: give them with [`ClosedJaxpr::with_consts`]),
//! and custom rules (`custom_jvp_call[jvp=<lambda>]` holds a Python function): a custom
//! function read evaluates its `call_jaxpr`, and differentiating it is an error naming it.
//!
//! Limits, so that no text exhausts time or memory: [`MAX_TEXT`] bytes, [`MAX_DEPTH`] nested
//! jaxprs or parameter brackets, [`MAX_EQNS`] equations in all and as evaluation runs them
//! (shared jaxprs' calls expanded), declared shapes of at most [`crate::array::MAX_ELEMENTS`]
//! elements and 64 dimensions.

mod params;
mod rules;

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use dtype_lattice::{DType, Value};

use crate::array::{MAX_ELEMENTS, ShapedArray};
use crate::core::jaxpr::{Atom, ClosedJaxpr, Eqn, Jaxpr, Var};

/// The longest text read (bytes).
pub const MAX_TEXT: usize = 64 << 20;
/// The deepest nesting of jaxprs and parameter brackets.
pub const MAX_DEPTH: usize = 64;
/// The most equations in one text, nested jaxprs included, and in one evaluation of it (its
/// calls of shared jaxprs expanded).
pub const MAX_EQNS: usize = 1 << 20;
/// The most dimensions of a declared type.
const MAX_NDIM: usize = 64;

/// Why a text is not a jaxpr this crate reads: where (1-based line and column, in characters)
/// and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ReadError {
    /// The line (from 1).
    pub line: usize,
    /// The column (from 1, in characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl FromStr for ClosedJaxpr {
    type Err = ReadError;

    /// Reads a jaxpr as JAX prints it; its constvars (if any) have no values yet
    /// ([`ClosedJaxpr::with_consts`]).
    ///
    /// # Errors
    ///
    /// [`ReadError`]: malformed text, an unknown primitive or parameter value, an equation
    /// whose declared types are not its primitive's, a limit exceeded.
    fn from_str(s: &str) -> Result<ClosedJaxpr, ReadError> {
        read(s)
    }
}

impl FromStr for Jaxpr {
    type Err = ReadError;

    /// [`ClosedJaxpr`]'s reading, without consts.
    ///
    /// # Errors
    ///
    /// As [`ClosedJaxpr::from_str`].
    fn from_str(s: &str) -> Result<Jaxpr, ReadError> {
        Ok(read(s)?.jaxpr)
    }
}

/// Reads a jaxpr as JAX prints it (also `str::parse`).
///
/// # Errors
///
/// As [`ClosedJaxpr::from_str`].
pub fn read(text: &str) -> Result<ClosedJaxpr, ReadError> {
    let mut r = Reader {
        src: text,
        pos: 0,
        depth: 0,
        eqns: 0,
        defs: HashMap::new(),
    };
    if text.len() > MAX_TEXT {
        return Err(r.error(format!(
            "the text is {} bytes; at most {MAX_TEXT} are read",
            text.len()
        )));
    }
    r.toplevel()
}

/// What a token is, for messages.
fn shown(s: &str) -> String {
    let t: String = s.chars().take(24).collect();
    if t.is_empty() {
        "the end of the text".to_string()
    } else if t.len() < s.len() {
        format!("`{t}…`")
    } else {
        format!("`{t}`")
    }
}

struct Reader<'t> {
    src: &'t str,
    pos: usize,
    depth: usize,
    eqns: usize,
    /// The `let NAME = { … } in` definitions.
    defs: HashMap<&'t str, Def>,
}

/// A shared definition: where its text starts, being read, or read.
enum Def {
    Text(usize),
    Reading,
    Read(Arc<ClosedJaxpr>),
}

/// One jaxpr's variables by name.
struct Scope<'t> {
    vars: HashMap<&'t str, Var>,
    next: u32,
}

impl<'t> Scope<'t> {
    fn new() -> Scope<'t> {
        Scope {
            vars: HashMap::new(),
            next: 0,
        }
    }

    /// A `_` binder: a variable printed `_`. JAX reads nothing from one, but it may print a
    /// name `_` that is read: a `jit`'s inner results take the names of the call's results,
    /// and an unused top-level result is `_` (`_:f32[] = mul a b` then `in (_,)`), so the
    /// latest `_` is bound under that name.
    fn dropped(&mut self, aval: ShapedArray) -> Var {
        let v = self.fresh(aval, true);
        self.vars.insert("_", v.clone());
        v
    }

    fn fresh(&mut self, aval: ShapedArray, dropped: bool) -> Var {
        self.next += 1;
        Var {
            id: self.next,
            aval,
            dropped,
        }
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'t> Reader<'t> {
    fn error_at(&self, pos: usize, message: impl Into<String>) -> ReadError {
        let before = &self.src[..pos.min(self.src.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ReadError {
            line,
            column,
            message: message.into(),
        }
    }

    fn error(&self, message: impl Into<String>) -> ReadError {
        self.error_at(self.pos, message)
    }

    fn rest(&self) -> &'t str {
        &self.src[self.pos..]
    }

    fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + k).copied()
    }

    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c == b' ' || c == b'\n' || c == b'\r' || c == b'\t' {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// Whether the text goes on with `s` (after whitespace); if so, past it.
    fn eat(&mut self, s: &str) -> bool {
        self.ws();
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, s: &str) -> Result<(), ReadError> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{s}`, found {}", shown(self.rest()))))
        }
    }

    /// The keyword `word` (not the start of a longer name), after whitespace.
    fn keyword(&mut self, word: &str) -> bool {
        self.ws();
        let r = self.rest().as_bytes();
        if r.starts_with(word.as_bytes()) && !r.get(word.len()).is_some_and(|&c| is_ident(c)) {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> Option<&'t str> {
        self.ws();
        let r = self.rest().as_bytes();
        if !r.first().is_some_and(|&c| is_ident_start(c)) {
            return None;
        }
        let n = r.iter().take_while(|&&c| is_ident(c)).count();
        let s = &self.src[self.pos..self.pos + n];
        self.pos += n;
        Some(s)
    }

    fn enter(&mut self) -> Result<(), ReadError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(format!("nested more than {MAX_DEPTH} deep")));
        }
        Ok(())
    }

    fn toplevel(&mut self) -> Result<ClosedJaxpr, ReadError> {
        // Shared definitions may name ones defined after them (JAX prints them in the order
        // it met them): find each one's text first, read them as they are named.
        while self.keyword("let") {
            self.ws();
            let at = self.pos;
            // The name is the function's, stripped of `<>`: any text up to ` = {` on its line
            // (`let unnamed wrapped function = { … }`).
            let line = self.rest().split('\n').next().unwrap_or_default();
            // (`<>` is a name too: JAX prints `let  = {`.)
            let found = if line.starts_with("= {") {
                Some(0)
            } else {
                line.find(" = {").filter(|&k| k > 0)
            };
            let Some(end) = found else {
                return Err(
                    self.error("expected the name of a shared jaxpr and ` = {` after `let`")
                );
            };
            let name = &self.src[self.pos..self.pos + end];
            self.pos += end;
            self.expect("=")?;
            self.ws();
            let start = self.pos;
            self.skip_braces()?;
            if !self.keyword("in") {
                return Err(self.error(format!(
                    "expected `in` after the definition of `{name}`, found {}",
                    shown(self.rest())
                )));
            }
            if self.defs.insert(name, Def::Text(start)).is_some() {
                return Err(self.error_at(at, format!("`{name}` is defined twice")));
            }
        }
        let j = self.jaxpr()?;
        self.ws();
        if self.pos < self.src.len() {
            return Err(self.error(format!(
                "expected the end of the text, found {}",
                shown(self.rest())
            )));
        }
        // Shared jaxprs calling each other twice over expand exponentially: bound the
        // equations one evaluation runs, as the text's size bounds the equations read.
        let mut sizes = HashMap::new();
        if expanded(&j.jaxpr, &mut sizes) > MAX_EQNS {
            return Err(self.error_at(
                0,
                format!(
                    "the jaxpr runs more than {MAX_EQNS} equations (its calls expanded): too \
                     large to evaluate"
                ),
            ));
        }
        Ok(j)
    }

    /// Past a `{ … }` with the braces inside it balanced.
    fn skip_braces(&mut self) -> Result<(), ReadError> {
        let start = self.pos;
        let mut open = 0usize;
        for (k, c) in self.rest().bytes().enumerate() {
            match c {
                b'{' => open += 1,
                b'}' if open > 0 => {
                    open -= 1;
                    if open == 0 {
                        self.pos += k + 1;
                        return Ok(());
                    }
                }
                _ if open == 0 => break,
                _ => {}
            }
        }
        Err(self.error_at(
            start,
            "expected a jaxpr `{ lambda … }` with its closing `}`",
        ))
    }

    /// A mention of a shared jaxpr (`jaxpr=_where`): the longest name defined that the text
    /// goes on with, followed by a space or `]` (names may hold either).
    fn shared_name(&mut self) -> Result<params::Printed<'t>, ReadError> {
        let rest = self.rest();
        let found = self
            .defs
            .keys()
            .filter(|n| {
                rest.strip_prefix(**n).is_some_and(|after| {
                    after.is_empty()
                        || after.starts_with(|c: char| c.is_ascii_whitespace() || c == ']')
                })
            })
            .max_by_key(|n| n.len())
            .copied();
        match found {
            Some(n) => {
                self.pos += n.len();
                Ok(params::Printed::Word(n))
            }
            None => params::name(self),
        }
    }

    /// The shared jaxpr `name` (`jaxpr=_where`), read at its first mention.
    pub(super) fn shared(&mut self, name: &str) -> Result<Arc<ClosedJaxpr>, String> {
        match self.defs.get(name) {
            None => Err(format!(
                "no jaxpr is defined as `{name}` (`let {name} = …`)"
            )),
            Some(Def::Reading) => Err(format!("the definition of `{name}` refers to itself")),
            Some(Def::Read(j)) => Ok(j.clone()),
            Some(&Def::Text(start)) => {
                let key = self
                    .defs
                    .get_key_value(name)
                    .map(|(k, _)| *k)
                    .unwrap_or_default();
                self.defs.insert(key, Def::Reading);
                let back = self.pos;
                self.pos = start;
                let j = self.jaxpr().map_err(|e| e.to_string()).map(Arc::new);
                self.pos = back;
                let j = j?;
                self.defs.insert(key, Def::Read(j.clone()));
                Ok(j)
            }
        }
    }

    /// `{ lambda CONSTVARS ; INVARS . let EQNS in (OUTS) }`
    fn jaxpr(&mut self) -> Result<ClosedJaxpr, ReadError> {
        self.enter()?;
        self.expect("{")?;
        if !self.keyword("lambda") {
            return Err(self.error(format!("expected `lambda`, found {}", shown(self.rest()))));
        }
        let mut scope = Scope::new();
        let mut constvars = Vec::new();
        while !self.eat(";") {
            constvars.push(self.binder(&mut scope)?);
        }
        let mut invars = Vec::new();
        while !self.eat(".") {
            invars.push(self.binder(&mut scope)?);
        }
        if !self.keyword("let") {
            return Err(self.error(format!("expected `let`, found {}", shown(self.rest()))));
        }
        let mut eqns = Vec::new();
        loop {
            self.ws();
            if self.at_in() {
                break;
            }
            eqns.push(self.eqn(&mut scope)?);
            self.eat(";");
        }
        self.keyword("in");
        self.expect("(")?;
        let mut outvars = Vec::new();
        loop {
            if self.eat(")") {
                break;
            }
            outvars.push(self.atom(&scope)?);
            if !self.eat(",") {
                self.expect(")")?;
                break;
            }
        }
        self.expect("}")?;
        self.depth -= 1;
        Ok(ClosedJaxpr {
            jaxpr: Jaxpr {
                constvars,
                invars,
                eqns,
                outvars,
            },
            consts: Vec::new(),
        })
    }

    /// Whether the text is at the keyword `in` before a jaxpr's outputs (a variable may be
    /// named `in` too: the keyword is followed by `(`, a variable by `:` or an operand).
    fn at_in(&self) -> bool {
        let r = self.rest().as_bytes();
        if !r.starts_with(b"in") || r.get(2).is_some_and(|&c| is_ident(c)) {
            return false;
        }
        let Some(open) = r[2..]
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .map(|k| 2 + k)
        else {
            return false;
        };
        if r[open] != b'(' {
            return false;
        }
        // `in (1+2j):c64[]` is a variable `in` and a complex literal.
        match r[open..].iter().position(|&c| c == b')') {
            Some(k) => r.get(open + k + 1) != Some(&b':'),
            None => true,
        }
    }

    /// `NAME:TYPE` or `_:TYPE`: a new variable of the scope.
    fn binder(&mut self, scope: &mut Scope<'t>) -> Result<Var, ReadError> {
        let at = self.pos;
        let name = self.ident().ok_or_else(|| {
            self.error(format!("expected a variable, found {}", shown(self.rest())))
        })?;
        if self.peek() != Some(b':') {
            return Err(self.error(format!(
                "expected `:` and the type of `{name}`, found {}",
                shown(self.rest())
            )));
        }
        self.pos += 1;
        let aval = self.aval()?;
        if name == "_" {
            return Ok(scope.dropped(aval));
        }
        let v = scope.fresh(aval, false);
        if scope.vars.insert(name, v.clone()).is_some() {
            return Err(self.error_at(at, format!("`{name}` is bound twice")));
        }
        Ok(v)
    }

    /// `f32[3,4]`, `key<fry>[]`, `bool[]`.
    fn aval(&mut self) -> Result<ShapedArray, ReadError> {
        let at = self.pos;
        let r = self.rest().as_bytes();
        let n = r
            .iter()
            .take_while(|&&c| is_ident(c) || c == b'<' || c == b'>')
            .count();
        let name = &self.src[self.pos..self.pos + n];
        let dtype = dtype_of_short_name(name).ok_or_else(|| {
            self.error_at(
                at,
                format!("unknown type `{name}`{}", suggest(name, short_names())),
            )
        })?;
        self.pos += n;
        if self.peek() != Some(b'[') {
            return Err(self.error(format!(
                "expected `[` and the shape after `{name}`, found {}",
                shown(self.rest())
            )));
        }
        self.pos += 1;
        let mut shape = Vec::new();
        let mut elements: usize = 1;
        loop {
            if self.peek() == Some(b']') {
                self.pos += 1;
                break;
            }
            if !shape.is_empty() {
                if self.peek() != Some(b',') {
                    return Err(self.error(format!(
                        "expected `,` or `]` in a shape, found {}",
                        shown(self.rest())
                    )));
                }
                self.pos += 1;
            }
            let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
            let d: usize = self.src[self.pos..self.pos + digits].parse().map_err(|_| {
                self.error(format!(
                    "expected a dimension, found {}",
                    shown(self.rest())
                ))
            })?;
            self.pos += digits;
            shape.push(d);
            elements = elements.saturating_mul(d);
            if shape.len() > MAX_NDIM || elements > MAX_ELEMENTS {
                return Err(self.error_at(
                    at,
                    format!(
                        "the type declares more than {MAX_NDIM} dimensions or {MAX_ELEMENTS} \
                         elements"
                    ),
                ));
            }
        }
        Ok(ShapedArray::new(&shape, dtype, false))
    }

    /// An operand: a variable of the scope or a literal `VALUE:TYPE`.
    fn atom(&mut self, scope: &Scope<'t>) -> Result<Atom, ReadError> {
        self.ws();
        let at = self.pos;
        if let Some(c) = self.peek()
            && is_ident_start(c)
        {
            let save = self.pos;
            let name = self.ident().unwrap_or_default();
            if self.peek() != Some(b':') {
                return scope.vars.get(name).cloned().map(Atom::Var).ok_or_else(|| {
                    self.error_at(
                        at,
                        format!("`{name}` is not bound (no equation before defines it)"),
                    )
                });
            }
            self.pos = save;
        }
        let start = self.pos;
        let value = self.literal_value()?;
        let text = &self.src[start..self.pos];
        if self.peek() != Some(b':') {
            return Err(self.error(format!(
                "expected `:` and the literal's type, found {}",
                shown(self.rest())
            )));
        }
        self.pos += 1;
        let aval = self.aval()?;
        if !aval.shape().is_empty() {
            return Err(self.error_at(at, "a literal of a non-scalar type"));
        }
        let x = crate::array::scalar_array(value, aval.dtype(), false).map_err(|e| {
            self.error_at(at, format!("the literal is not a {}: {e}", aval.dtype()))
        })?;
        let text = (crate::core::jaxpr::literal_text(&x) != text).then(|| text.into());
        Ok(Atom::Literal(x, text))
    }

    /// A literal's value as Python prints it: `1`, `-2.5`, `1e-05`, `nan`, `-inf`, `True`,
    /// `(1+2j)`, `2j`.
    fn literal_value(&mut self) -> Result<Value, ReadError> {
        let at = self.pos;
        let r = self.rest();
        if r.starts_with("[...]") {
            return Err(self.error(
                "an array literal: JAX prints `[...]` for its elements, so its value is not in \
                 the text",
            ));
        }
        if let Some(inner) = r.strip_prefix('(') {
            let end = inner
                .find(')')
                .ok_or_else(|| self.error("a complex literal without its `)`"))?;
            let v = complex_value(&inner[..end])
                .ok_or_else(|| self.error(format!("malformed literal {}", shown(r))))?;
            self.pos += end + 2;
            return Ok(v);
        }
        let n = r
            .bytes()
            .take_while(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+' | b'_'))
            .count();
        let tok = &r[..n];
        self.pos += n;
        let v = match tok {
            "True" => Some(Value::Bool(true)),
            "False" => Some(Value::Bool(false)),
            _ if tok.ends_with('j') => complex_value(tok),
            _ => number(tok),
        };
        v.ok_or_else(|| self.error_at(at, format!("expected an operand, found {}", shown(r))))
    }

    /// `OUTS = prim[PARAMS] OPERANDS`
    fn eqn(&mut self, scope: &mut Scope<'t>) -> Result<Eqn, ReadError> {
        self.eqns += 1;
        if self.eqns > MAX_EQNS {
            return Err(self.error(format!("more than {MAX_EQNS} equations")));
        }
        // The binders are read before they are bound (an equation's operands are the
        // variables before it): remember them, bind after.
        let mut declared: Vec<(&'t str, usize, ShapedArray)> = Vec::new();
        self.ws();
        let line_start = self.line_start(self.pos);
        loop {
            self.ws();
            if self.peek() == Some(b'=') {
                self.pos += 1;
                break;
            }
            let at = self.pos;
            let name = self.ident().ok_or_else(|| {
                self.error(format!(
                    "expected an equation, found {}",
                    shown(self.rest())
                ))
            })?;
            if self.peek() != Some(b':') {
                return Err(self.error_at(
                    at,
                    format!(
                        "expected an equation's outputs (`a:f32[] = …`), found {}",
                        shown(&self.src[at..])
                    ),
                ));
            }
            self.pos += 1;
            declared.push((name, at, self.aval()?));
        }
        self.ws();
        let at = self.pos;
        let n = self
            .rest()
            .bytes()
            .take_while(|&c| is_ident(c) || c == b'-')
            .count();
        let name = &self.src[self.pos..self.pos + n];
        self.pos += n;
        if name.is_empty() {
            return Err(self.error(format!(
                "expected a primitive, found {}",
                shown(self.rest())
            )));
        }
        let prim = rules::primitive(name).map_err(|m| self.error_at(at, m))?;
        let mut raw = Vec::new();
        if self.peek() == Some(b'[') {
            self.pos += 1;
            self.enter()?;
            loop {
                self.ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    break;
                }
                let key_at = self.pos;
                let key = self.ident().ok_or_else(|| {
                    self.error(format!(
                        "expected a parameter, found {}",
                        shown(self.rest())
                    ))
                })?;
                if self.peek() != Some(b'=') {
                    return Err(self.error(format!(
                        "expected `=` after the parameter `{key}`, found {}",
                        shown(self.rest())
                    )));
                }
                self.pos += 1;
                let start = self.pos;
                let value = match key {
                    "jaxpr" | "call_jaxpr" | "body_jaxpr" | "cond_jaxpr"
                        if self.peek() != Some(b'{') =>
                    {
                        self.shared_name()?
                    }
                    "name" => params::name(self)?,
                    _ => params::value(self)?,
                };
                raw.push((key, key_at, value, &self.src[start..self.pos]));
            }
            self.depth -= 1;
        }
        let mut params = params::typed(self, prim, raw)?;
        // What JAX's printer left out: a default, or the shape the binder's type gives.
        for &(hidden, when) in prim.hidden_params() {
            if params.get(hidden).is_none() {
                let value = match (when, declared.first()) {
                    (Some(v), _) => v.clone(),
                    (None, Some((_, _, aval))) => {
                        crate::core::Param::Ints(aval.shape().iter().map(|&d| d as i64).collect())
                    }
                    (None, None) => continue,
                };
                params = params.with(hidden, value);
            }
        }
        let mut inputs = Vec::new();
        loop {
            self.ws();
            if self.at_operands_end(line_start) {
                break;
            }
            inputs.push(self.atom(scope)?);
        }
        let avals: Vec<&ShapedArray> = inputs.iter().map(Atom::aval).collect();
        let out = prim
            .abstract_eval(&avals, &params)
            .map_err(|e| self.error_at(at, format!("{name}: {e}")))?;
        if out.len() != declared.len() {
            return Err(self.error_at(
                at,
                format!(
                    "{name} gives {} outputs; the equation binds {}",
                    out.len(),
                    declared.len()
                ),
            ));
        }
        let mut outputs = Vec::with_capacity(out.len());
        for ((vname, vat, want), got) in declared.into_iter().zip(out) {
            if want.shape() != got.shape() || want.dtype() != got.dtype() {
                return Err(self.error_at(
                    vat,
                    format!(
                        "`{vname}` is declared {want} but {name} of ({}) gives {got}",
                        avals
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            if vname == "_" {
                outputs.push(scope.dropped(got));
                continue;
            }
            let v = scope.fresh(got, false);
            if scope.vars.insert(vname, v.clone()).is_some() {
                return Err(self.error_at(vat, format!("`{vname}` is bound twice")));
            }
            outputs.push(v);
        }
        Ok(Eqn {
            prim,
            inputs,
            params,
            outputs,
        })
    }

    /// Whether an equation's operands end here: at `;`, the outputs' `in`, the end, or the
    /// next equation (binders `a:f32[] … =`). `True:bool[]` is always a literal; `nan:f32[]`
    /// and `inf:f32[]` are the next equation's binders (variables may be named so) only at
    /// the start of a line at the column where this equation started (`line_start`): JAX
    /// wraps long operand lists deeper.
    fn at_operands_end(&self, line_start: Option<usize>) -> bool {
        match self.peek() {
            None | Some(b';' | b'}') => return true,
            _ => {}
        }
        if self.at_in() {
            return true;
        }
        let r = self.rest().as_bytes();
        if !r.first().is_some_and(|&c| is_ident_start(c)) {
            return false;
        }
        let n = r.iter().take_while(|&&c| is_ident(c)).count();
        if r.get(n) != Some(&b':') {
            return false;
        }
        match &r[..n] {
            b"True" | b"False" => false,
            b"nan" | b"inf" => line_start.is_some() && self.line_start(self.pos) == line_start,
            _ => true,
        }
    }

    /// The column of `pos` if only spaces precede it on its line.
    fn line_start(&self, pos: usize) -> Option<usize> {
        let before = &self.src.as_bytes()[..pos];
        let start = before
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |k| k + 1);
        before[start..]
            .iter()
            .all(|&c| c == b' ')
            .then_some(pos - start)
    }
}

/// How many equations evaluating `j` runs, its calls expanded (saturating; each jaxpr's count
/// memoized by identity, so shared jaxprs are counted once each).
fn expanded(j: &Jaxpr, sizes: &mut HashMap<usize, usize>) -> usize {
    let key = std::ptr::from_ref(j) as usize;
    if let Some(&n) = sizes.get(&key) {
        return n;
    }
    let mut n: usize = 0;
    for e in &j.eqns {
        n = n.saturating_add(1);
        for (_, p) in e.params.iter() {
            match p.value() {
                crate::core::Param::Jaxpr(inner) => {
                    n = n.saturating_add(expanded(&inner.jaxpr, sizes));
                }
                crate::core::Param::Jaxprs(inner) => {
                    for j in inner {
                        n = n.saturating_add(expanded(&j.jaxpr, sizes));
                    }
                }
                _ => {}
            }
        }
    }
    sizes.insert(key, n);
    n
}

/// A float or integer as Python prints one (`1`, `-3`, `2.5`, `1e-05`, `nan`, `-inf`).
fn number(tok: &str) -> Option<Value> {
    match tok {
        "nan" => return Some(Value::Float(f64::NAN)),
        "-nan" => return Some(Value::Float(-f64::NAN)),
        "inf" => return Some(Value::Float(f64::INFINITY)),
        "-inf" => return Some(Value::Float(f64::NEG_INFINITY)),
        _ => {}
    }
    if !tok
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == b'-')
    {
        return None;
    }
    if tok.bytes().all(|c| c.is_ascii_digit() || c == b'-') {
        return tok.parse::<i128>().ok().map(Value::Int);
    }
    tok.parse::<f64>().ok().map(Value::Float)
}

/// A complex number as Python prints one (inside its parentheses): `1+2j`, `-0-1j`, `2j`,
/// `nan+infj`.
fn complex_value(s: &str) -> Option<Value> {
    let body = s.strip_suffix('j')?;
    // The imaginary part starts at the last sign that is not an exponent's.
    let b = body.as_bytes();
    let split = (1..b.len())
        .rev()
        .find(|&i| matches!(b[i], b'+' | b'-') && !matches!(b[i - 1], b'e' | b'E'));
    let (re, im) = match split {
        Some(i) => (&body[..i], &body[i..]),
        None => ("0", body),
    };
    let part = |t: &str| match number(t.strip_prefix('+').unwrap_or(t))? {
        Value::Int(i) => Some(i as f64),
        Value::Float(f) => Some(f),
        _ => None,
    };
    Some(Value::Complex(part(re)?, part(im)?))
}

/// Every dtype by the short name jaxprs print (`f32`, `bf16`, `key<fry>`).
fn short_names() -> &'static HashMap<String, DType> {
    static NAMES: OnceLock<HashMap<String, DType>> = OnceLock::new();
    NAMES.get_or_init(|| {
        DType::ALL
            .iter()
            .map(|&d| (crate::array::jaxpr_dtype_name(d), d))
            .collect()
    })
}

fn dtype_of_short_name(name: &str) -> Option<DType> {
    short_names().get(name).copied().or_else(|| {
        // A key dtype registered at run time (`key<TAG>`), after the table was made.
        dtype_lattice::key::registered()
            .into_iter()
            .find(|d| d.name() == name)
    })
}

/// ", did you mean `x`?" for the closest of `names`, if one is close.
fn suggest<V>(name: &str, names: &HashMap<String, V>) -> String {
    names
        .keys()
        .map(|k| (strsim::levenshtein(name, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min()
        .map(|(_, k)| format!("; did you mean `{k}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_jaxprs_calling_each_other_twice_over_are_refused() {
        // 40 definitions, each calling the one before twice: 2^40 equations to run.
        let mut text =
            String::from("let f0 = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in\n");
        for i in 1..40 {
            let p = i - 1;
            text.push_str(&format!(
                "let f{i} = {{ lambda ; a:f32[]. let\n    b:f32[] = jit[name=f{p} jaxpr=f{p}] a\n    \
                 c:f32[] = jit[name=f{p} jaxpr=f{p}] b\n  in (c,) }} in\n"
            ));
        }
        text.push_str("{ lambda ; a:f32[]. let b:f32[] = jit[name=f39 jaxpr=f39] a in (b,) }");
        let e = read(&text).unwrap_err();
        assert!(e.message.contains("runs more than"), "{e}");
    }

    #[test]
    fn shared_jaxprs_are_named_as_their_functions_are() {
        // A function's `__name__` need not be an identifier.
        let text = "let lam;bda = { lambda ; a:f32[5]. let\n    b:f32[5] = cos a\n    c:f32[5] = add b a\n  in (c,) } in\n{ lambda ; d:f32[5]. let\n    e:f32[5] = jit[name=<lam;bda> jaxpr=lam;bda] d\n    f:f32[5] = jit[name=<lambda> jaxpr=lam;bda] d\n    g:f32[5] = mul e f\n  in (g,) }";
        let j = read(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(j.to_string(), text);
    }

    #[test]
    fn shared_jaxprs_named_with_spaces_and_brackets_read() {
        for name in ["unnamed wrapped function", "]ambda", "a]b c", ""] {
            let text = format!(
                "let {name} = {{ lambda ; a:f32[5]. let\n    b:f32[5] = cos a\n    c:f32[5] = add b a\n  in (c,) }} in\n{{ lambda ; d:f32[5]. let\n    e:f32[5] = jit[name=<{name}> jaxpr={name}] d\n    f:f32[5] = jit[name=<{name}> jaxpr={name}] d\n    g:f32[5] = mul e f\n  in (g,) }}"
            );
            // Read, printed (laid out anew where a line is too long), read again: the same.
            let once = read(&text)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .to_string();
            let twice = read(&once).unwrap_or_else(|e| panic!("{name}: {e}\n{once}"));
            assert_eq!(twice.to_string(), once);
        }
    }

    #[test]
    fn a_jit_result_nothing_reads_names_its_inner_result_underscore() {
        // As JAX prints it: the call's result is `_`, and the jit's inner result takes its name.
        let text = "{ lambda ; a:f32[7]. let\n    _:f32[7] = jit[\n      name=silu\n      jaxpr={ lambda ; a:f32[7]. let\n          b:f32[7] = logistic a\n          _:f32[7] = mul a b\n        in (_,) }\n    ] a\n    c:f32[7] = sin a\n  in (c,) }";
        let j = read(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(j.to_string(), text);
    }

    #[test]
    fn a_variable_named_in_before_a_complex_literal_is_an_operand() {
        let mut text = String::from("{ lambda ; a:c64[]. let");
        let mut prev = "a".to_string();
        for i in 1..=221 {
            let v = crate::core::jaxpr::var_name_for_tests(i);
            text.push_str(&format!("\n    {v}:c64[] = neg {prev}"));
            prev = v;
        }
        assert_eq!(prev, "in");
        text.push_str("\n    io:c64[] = add in (1+2j):c64[]\n  in (io,) }");
        let j = read(&text).unwrap();
        assert_eq!(j.to_string(), text);
    }

    #[test]
    fn literals_named_like_variables_are_operands() {
        for text in [
            "{ lambda ; a:bool[]. let b:bool[] = ne a True:bool[]; c:bool[] = not b in (c,) }",
            "{ lambda ; a:bool[3]. let\n    _:bool[3] = ne a False:bool[]\n    b:bool[3] = not a\n  in (b,) }",
            "{ lambda ; a:f32[]. let\n    b:f32[] = add a nan:f32[]\n    c:f32[] = mul b inf:f32[]\n  in (c,) }",
        ] {
            let j = read(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(j.to_string(), text);
        }
    }

    #[test]
    fn python_numbers_read_as_python_prints_them() {
        assert_eq!(number("1"), Some(Value::Int(1)));
        assert_eq!(
            number("-0.9999999403953552"),
            Some(Value::Float(-0.9999999403953552))
        );
        assert_eq!(number("1e-05"), Some(Value::Float(1e-5)));
        assert_eq!(
            number("1.0000000200408773e+20"),
            Some(Value::Float(1.0000000200408773e20))
        );
        assert_eq!(complex_value("1+2j"), Some(Value::Complex(1.0, 2.0)));
        assert_eq!(complex_value("-0-1j"), Some(Value::Complex(-0.0, -1.0)));
        assert_eq!(complex_value("2j"), Some(Value::Complex(0.0, 2.0)));
        assert_eq!(
            complex_value("1e-05+1e+20j"),
            Some(Value::Complex(1e-5, 1e20))
        );
        assert_eq!(number("x"), None);
    }
}
