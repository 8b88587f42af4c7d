//! `dtype-lattice eval FUNCTION OPERAND...`: parsing and rendering only; the functions live
//! in `dtype_lattice_array::numpy`.
//!
//! Operands: `DTYPE[v,...]` (nested brackets for more dimensions, `DTYPE[]` empty),
//! `~DTYPE[...]` weakly typed, `DTYPE(v)` 0-d, or a Python scalar literal (weak).

use std::io::{self, BufRead, Write};

use clap::{Args, ValueEnum};
use dtype_lattice::error::{Exception, Reason};
use dtype_lattice::{DType, Error, Kind, Rules, Value};
use dtype_lattice_array::Array;
use dtype_lattice_array::numpy::{self as jnp, ArrayLike};
use dtype_lattice_array::repr::Scalar;
use serde::Serialize;
use serde_json::{Number, Value as Json, json};

use crate::{next_line, render};

/// Which library's functions `eval` computes as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EvalRules {
    /// `jax.numpy` (JAX 0.10 on CPU).
    Jax,
    /// NumPy 2 with ml_dtypes.
    Numpy,
}

/// Arguments of `eval`.
#[derive(Args, Debug)]
pub(crate) struct EvalArgs {
    /// Whose functions: jax (jax.numpy) or numpy (NumPy 2 with ml_dtypes).
    #[arg(long, value_enum, default_value_t = EvalRules::Jax)]
    rules: EvalRules,
    /// 64-bit mode (jax_enable_x64=True).
    #[arg(long)]
    x64: bool,
    /// Strict promotion (jax_numpy_dtype_promotion='strict').
    #[arg(long)]
    strict: bool,
    /// Print one JSON object: {"dtype", "weak_type", "shape", "values", "bits"} or
    /// {"error": {"kind", "message"}}.
    #[arg(long)]
    json: bool,
    /// Read lines `FUNCTION OPERAND...` from stdin; write one JSON object per line, in order.
    #[arg(long, conflicts_with = "function")]
    batch: bool,
    /// A jax.numpy function name (add, sin, sum, where, matmul, astype:DTYPE, ...), keyword
    /// arguments after a colon: sort:axis=0,descending=True, cumsum:axis=1, take:mode=clip.
    #[arg(value_name = "FUNCTION", allow_hyphen_values = true)]
    function: Option<String>,
    /// The operands.
    #[arg(value_name = "OPERAND", allow_hyphen_values = true)]
    operands: Vec<String>,
}

fn invalid(argument: &str, reason: impl Into<String>) -> Error {
    Reason::InvalidArgument {
        argument: argument.into(),
        reason: reason.into(),
    }
    .into()
}

impl EvalArgs {
    fn rules(&self) -> Result<Rules, Error> {
        match self.rules {
            EvalRules::Jax => Ok(Rules::jax().x64(self.x64).strict(self.strict)),
            EvalRules::Numpy if self.x64 || self.strict => Err(invalid(
                if self.x64 { "--x64" } else { "--strict" },
                "NumPy has no such mode (it is always 64-bit and has no strict promotion)",
            )),
            EvalRules::Numpy => Ok(Rules::numpy()),
        }
    }
}

/// Runs `eval`; returns the exit code.
pub(crate) fn run(args: &EvalArgs, input: &mut dyn BufRead, out: &mut impl Write) -> i32 {
    let rules = match args.rules() {
        Ok(r) => r,
        Err(e) => return render::fail(out, &e, args.json || args.batch),
    };
    let numpy = args.rules == EvalRules::Numpy;
    if args.batch {
        return batch(rules, numpy, input, out);
    }
    let Some(function) = args.function.as_deref() else {
        let e = invalid("FUNCTION", "give a function and its operands, or --batch");
        return render::fail(out, &e, args.json);
    };
    let result = jnp::with_rules(rules, || {
        let operands: Vec<&str> = args.operands.iter().map(String::as_str).collect();
        evaluate(function, &operands, numpy, &mut jnp::JitDispatch::new())
    });
    let written = match &result {
        Ok(a) if args.json => writeln!(out, "{}", to_json(a)),
        Ok(a) if numpy => writeln!(out, "{}", numpy_repr(a)),
        Ok(a) => writeln!(out, "{a}"),
        Err(e) => return render::fail(out, e, args.json),
    };
    if let Err(e) = written
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("error: cannot write output: {e}");
        return 2;
    }
    0
}

fn batch(rules: Rules, numpy: bool, input: &mut dyn BufRead, out: &mut impl Write) -> i32 {
    let mut worst = 0;
    // One batch is one JAX process: jit's dispatch state carries from line to line.
    let mut dispatch = jnp::JitDispatch::new();
    let mut raw = Vec::new();
    loop {
        let fits = match next_line(input, &mut raw) {
            Ok(Some(fits)) => fits,
            Ok(None) => break,
            Err(e) => {
                eprintln!("error: cannot read stdin: {e}");
                return 2;
            }
        };
        let line = raw.strip_suffix(b"\r").unwrap_or(&raw);
        let result = if !fits {
            Err(invalid("line", "longer than --batch accepts (1 MiB)"))
        } else {
            match std::str::from_utf8(line) {
                Err(e) => Err(Reason::MalformedOperand {
                    operand: String::from_utf8_lossy(line).into_owned(),
                    reason: format!("invalid UTF-8 ({e})"),
                }
                .into()),
                Ok(line) => jnp::with_rules(rules, || {
                    let parts = split_operands(line)?;
                    let (f, ops) = parts
                        .split_first()
                        .ok_or_else(|| invalid("line", "empty: give FUNCTION OPERAND..."))?;
                    evaluate(f, ops, numpy, &mut dispatch)
                }),
            }
        };
        let json = match &result {
            Ok(a) => to_json(a),
            Err(e) => {
                worst = worst.max(render::exit_code(e));
                json!({ "error": render::ErrorJson::of(e) }).to_string()
            }
        };
        if let Err(e) = writeln!(out, "{json}") {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return worst;
            }
            eprintln!("error: cannot write output: {e}");
            return 2;
        }
    }
    worst
}

/// Splits a line at whitespace outside brackets and parentheses.
pub(crate) fn split_operands(line: &str) -> Result<Vec<&str>, Error> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, None);
    for (i, ch) in line.char_indices() {
        match ch {
            '[' | '(' => depth += 1,
            ']' | ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| malformed(line, "unbalanced brackets"))?;
            }
            _ => {}
        }
        if ch.is_whitespace() && depth == 0 {
            if let Some(s) = start.take() {
                parts.push(&line[s..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if depth != 0 {
        return Err(malformed(line, "unbalanced brackets"));
    }
    if let Some(s) = start {
        parts.push(&line[s..]);
    }
    Ok(parts)
}

fn malformed(operand: &str, reason: &str) -> Error {
    Reason::MalformedOperand {
        operand: operand.chars().take(200).collect(),
        reason: reason.into(),
    }
    .into()
}

/// Calls `function` on the parsed operands under the rules in force, as `dispatch` (jit's
/// state in this run) dispatches it.
fn evaluate(
    function: &str,
    operands: &[&str],
    numpy: bool,
    dispatch: &mut jnp::JitDispatch,
) -> Result<Array, Error> {
    let args = operands
        .iter()
        .map(|o| parse_operand(o, numpy))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(dtype) = function.strip_prefix("astype:") {
        let dtype: DType = dtype.parse()?;
        let mut args = args.into_iter();
        return match (args.next(), args.next()) {
            (Some(x), None) => jnp::astype(x, dtype),
            _ => Err(Error::refused(
                Exception::TypeError,
                format!("astype() takes 1 operand but {} were given", operands.len()),
            )),
        };
    }
    // `NAME:KEY=VALUE,...`: keyword arguments after the name.
    let (name, keywords) = match function.split_once(':') {
        Some((name, kw)) => (name, kw.parse::<jnp::Keywords>()?),
        None => (function, jnp::Keywords::new()),
    };
    let f = jnp::function(name).ok_or_else(|| jnp::unknown_function(name))?;
    dispatch.call_with(&f, args, &keywords)
}

/// The most elements one literal array may have (a line holds at most 1 MiB anyway).
const MAX_LITERAL_ELEMENTS: usize = 1 << 20;

/// Parses one operand.
fn parse_operand(text: &str, numpy: bool) -> Result<ArrayLike<'static>, Error> {
    let (weak, body) = match text.strip_prefix('~') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let open = body.find(['[', '(']);
    let is_array = open.is_some_and(|i| {
        i > 0
            && body[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    if !is_array {
        if weak {
            return Err(malformed(text, "`~` marks an array: ~DTYPE[v,...]"));
        }
        return Ok(ArrayLike::Scalar(body.parse::<Value>()?));
    }
    if weak && numpy {
        return Err(invalid(
            "operand",
            format!("{text}: NumPy has no weakly typed arrays"),
        ));
    }
    let i = open.unwrap_or(0);
    let dtype: DType = body[..i].parse()?;
    let rest = &body[i..];
    let (values, shape) = if let Some(inner) = rest.strip_prefix('(') {
        let inner = inner
            .strip_suffix(')')
            .ok_or_else(|| malformed(text, "a 0-d array is DTYPE(v)"))?;
        (vec![inner.trim().parse::<Value>()?], Vec::new())
    } else {
        parse_nested(rest).map_err(|why| malformed(text, &why))?
    };
    let a = jnp::array(&values, &shape, dtype)?;
    Ok(ArrayLike::Owned(if weak {
        a.with_weak_type(true)
    } else {
        a
    }))
}

/// Parses `[v, [v, v], ...]` into row-major values and a shape (rectangular only).
fn parse_nested(text: &str) -> Result<(Vec<Value>, Vec<usize>), String> {
    #[derive(Debug)]
    enum Node {
        List(Vec<Node>),
        Leaf(Value),
    }
    fn parse(s: &[u8], text: &str, pos: &mut usize, depth: usize) -> Result<Node, String> {
        if depth > 32 {
            return Err("more than 32 dimensions".into());
        }
        if s.get(*pos) == Some(&b'[') {
            *pos += 1;
            let mut items = Vec::new();
            loop {
                while s.get(*pos).is_some_and(u8::is_ascii_whitespace) {
                    *pos += 1;
                }
                match s.get(*pos) {
                    Some(b']') if items.is_empty() => {
                        *pos += 1;
                        return Ok(Node::List(items));
                    }
                    None => return Err("unbalanced brackets".into()),
                    _ => {}
                }
                items.push(parse(s, text, pos, depth + 1)?);
                while s.get(*pos).is_some_and(u8::is_ascii_whitespace) {
                    *pos += 1;
                }
                match s.get(*pos) {
                    Some(b',') => *pos += 1,
                    Some(b']') => {
                        *pos += 1;
                        return Ok(Node::List(items));
                    }
                    _ => return Err("expected `,` or `]`".into()),
                }
            }
        }
        let start = *pos;
        let mut paren = 0usize;
        while let Some(&c) = s.get(*pos) {
            match c {
                b'(' => paren += 1,
                b')' => paren = paren.saturating_sub(1),
                b',' | b']' if paren == 0 => break,
                b'[' => return Err("`[` inside a value".into()),
                _ => {}
            }
            *pos += 1;
        }
        let lit = text[start..*pos].trim();
        lit.parse::<Value>()
            .map(Node::Leaf)
            .map_err(|e| e.to_string())
    }
    fn shape_of(n: &Node, out: &mut Vec<usize>) {
        if let Node::List(items) = n {
            out.push(items.len());
            if let Some(first) = items.first() {
                shape_of(first, out);
            }
        }
    }
    fn flatten(n: &Node, shape: &[usize], out: &mut Vec<Value>) -> Result<(), String> {
        match (n, shape.split_first()) {
            (Node::Leaf(v), None) => {
                if out.len() >= MAX_LITERAL_ELEMENTS {
                    return Err(format!("more than {MAX_LITERAL_ELEMENTS} elements"));
                }
                out.push(*v);
                Ok(())
            }
            (Node::List(items), Some((&n, rest))) if items.len() == n => {
                items.iter().try_for_each(|i| flatten(i, rest, out))
            }
            _ => Err(
                "setting an array element with a sequence: the nested lists have an \
                      inhomogeneous shape"
                    .into(),
            ),
        }
    }
    let s = text.as_bytes();
    let mut pos = 0;
    let root = parse(s, text, &mut pos, 0)?;
    if pos != s.len() {
        return Err("text after the closing `]`".into());
    }
    let mut shape = Vec::new();
    shape_of(&root, &mut shape);
    let mut values = Vec::new();
    flatten(&root, &shape, &mut values)?;
    Ok((values, shape))
}

/// A float for JSON: a number, or `"nan"`, `"inf"`, `"-inf"`.
fn json_float(x: f64) -> Json {
    Number::from_f64(x).map_or_else(
        || {
            Json::String(
                if x.is_nan() {
                    "nan"
                } else if x > 0.0 {
                    "inf"
                } else {
                    "-inf"
                }
                .into(),
            )
        },
        Json::Number,
    )
}

/// The bits of one float element (`width` bytes, little-endian).
fn bits(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    let n = bytes.len().min(8);
    raw[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(raw)
}

/// `eval --json`'s object for an array.
pub(crate) fn to_json(a: &Array) -> String {
    let dtype = a.dtype();
    let n = a.size();
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        values.push(match a.element(i) {
            Some(Scalar::Bool(b)) => Json::Bool(b),
            Some(Scalar::Int(v)) => i64::try_from(v)
                .map(Json::from)
                .or_else(|_| u64::try_from(v).map(Json::from))
                .unwrap_or_else(|_| Json::String(v.to_string())),
            Some(Scalar::Float(x)) => json_float(x),
            Some(Scalar::Complex(re, im)) => json!([json_float(re), json_float(im)]),
            Some(Scalar::KeyData(words)) => json!(words),
            Some(Scalar::Float0) | None => Json::Null,
        });
    }
    let bits = matches!(dtype.kind(), Kind::Float | Kind::Complex).then(|| {
        let bytes = a.as_bytes();
        let width = bytes.len().checked_div(n).unwrap_or(1).max(1);
        bytes
            .chunks_exact(width)
            .map(|e| {
                if dtype.kind() == Kind::Complex {
                    let (re, im) = e.split_at(width / 2);
                    json!([bits(re), bits(im)])
                } else {
                    json!(bits(e))
                }
            })
            .collect()
    });
    let out = ArrayJson {
        dtype: dtype.to_string(),
        weak_type: a.weak_type(),
        shape: a.shape(),
        values,
        bits,
    };
    serde_json::to_string(&out).unwrap_or_default()
}

/// The fields of [`to_json`]'s object, in the documented order.
#[derive(Serialize)]
struct ArrayJson<'a> {
    dtype: String,
    weak_type: bool,
    shape: &'a [usize],
    values: Vec<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bits: Option<Vec<Json>>,
}

/// NumPy's repr of an array (`--rules numpy` without `--json`).
fn numpy_repr(a: &Array) -> String {
    dtype_lattice_array::repr::numpy_repr(a.dtype(), a.shape(), &|i| {
        a.element(i).unwrap_or(Scalar::Bool(false))
    })
}
