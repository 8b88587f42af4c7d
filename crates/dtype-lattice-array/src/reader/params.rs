//! Parameter values as jaxprs print them (Python's `str` of each value: integers, tuples,
//! lists, `None`, `True`, dtype names, enums, dataclass-like calls, `<lambda>`, jaxprs), read
//! into a small tree, then typed by the parameter's name into a [`Param`].

use std::sync::Arc;

use dtype_lattice::DType;

use super::{ReadError, Reader, is_ident, is_ident_start, shown};
use crate::core::jaxpr::ClosedJaxpr;
use crate::core::{Param, Params, Primitive};

/// A value as printed, before typing.
#[derive(Debug)]
pub(super) enum Printed<'t> {
    Int(i128),
    /// A float (its text is kept for printing).
    Float,
    /// A name: `True`, `None`, `float32`, `GatherScatterMode.CLIP`, `key<fry>`, `fry`.
    Word(&'t str),
    /// `<lambda>`, `<function f at 0xXXXX>`.
    Angle,
    /// A quoted string.
    Str,
    Tuple(Vec<Printed<'t>>),
    List(Vec<Printed<'t>>),
    /// `np.int64(2)`, `GatherDimensionNumbers(offset_dims=(), …)`: the callee and the
    /// arguments (keywords dropped).
    Call(&'t str, Vec<Printed<'t>>),
    Jaxpr(Arc<ClosedJaxpr>),
}

impl Printed<'_> {
    /// The integer it is (`3`, `np.int64(3)`).
    fn int(&self) -> Option<i64> {
        match self {
            Printed::Int(i) => i64::try_from(*i).ok(),
            Printed::Call(f, args) if f.starts_with("np.") && args.len() == 1 => args[0].int(),
            _ => None,
        }
    }

    fn ints(&self) -> Option<Vec<i64>> {
        match self {
            Printed::Tuple(items) | Printed::List(items) => {
                items.iter().map(Printed::int).collect()
            }
            _ => None,
        }
    }
}

/// One value, from the reader's position.
pub(super) fn value<'t>(r: &mut Reader<'t>) -> Result<Printed<'t>, ReadError> {
    r.enter()?;
    let v = match r.peek() {
        Some(b'{') => Printed::Jaxpr(Arc::new(r.jaxpr()?)),
        Some(b'(') => {
            r.pos += 1;
            Printed::Tuple(items(r, b')')?)
        }
        Some(b'[') => {
            r.pos += 1;
            Printed::List(items(r, b']')?)
        }
        Some(b'<') => {
            angle(r)?;
            Printed::Angle
        }
        Some(q @ (b'\'' | b'"')) => {
            r.pos += 1;
            loop {
                match r.peek() {
                    None => return Err(r.error("a string without its closing quote")),
                    Some(b'\\') => r.pos += 2,
                    Some(c) if c == q => {
                        r.pos += 1;
                        break;
                    }
                    Some(_) => r.pos += 1,
                }
            }
            Printed::Str
        }
        Some(c) if c.is_ascii_digit() || c == b'-' || c == b'.' => {
            let n = r
                .rest()
                .bytes()
                .take_while(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+'))
                .count();
            let tok = &r.src[r.pos..r.pos + n];
            let v = if let Ok(i) = tok.parse::<i128>() {
                Printed::Int(i)
            } else if tok.parse::<f64>().is_ok() || tok == "-inf" || tok == "-nan" {
                Printed::Float
            } else {
                return Err(r.error(format!("malformed number {}", shown(tok))));
            };
            r.pos += n;
            v
        }
        Some(c) if is_ident_start(c) => {
            let start = r.pos;
            loop {
                while r.peek().is_some_and(is_ident) {
                    r.pos += 1;
                }
                if r.peek() == Some(b'<') {
                    angle(r)?;
                }
                if r.peek() == Some(b'.') && r.peek_at(1).is_some_and(is_ident_start) {
                    r.pos += 1;
                    continue;
                }
                break;
            }
            let word = &r.src[start..r.pos];
            if r.peek() == Some(b'(') {
                r.pos += 1;
                Printed::Call(word, items(r, b')')?)
            } else {
                Printed::Word(word)
            }
        }
        _ => {
            return Err(r.error(format!(
                "expected a parameter value, found {}",
                shown(r.rest())
            )));
        }
    };
    r.depth -= 1;
    Ok(v)
}

/// A name as printed (`name=f`, `jaxpr=_where`, `name=<lambda>`): JAX prints a Python
/// function's `__name__`, which need not be an identifier, so it runs to the next whitespace or
/// `]` (or is a balanced `<…>`).
pub(super) fn name<'t>(r: &mut Reader<'t>) -> Result<Printed<'t>, ReadError> {
    let start = r.pos;
    if r.peek() == Some(b'<') {
        angle(r)?;
    }
    while r
        .peek()
        .is_some_and(|c| !c.is_ascii_whitespace() && c != b']')
    {
        r.pos += 1;
    }
    // Back to a character boundary (a name may hold any UTF-8).
    while !r.src.is_char_boundary(r.pos) {
        r.pos += 1;
    }
    if r.pos == start {
        return Err(r.error("expected a name"));
    }
    Ok(Printed::Word(&r.src[start..r.pos]))
}

/// `<…>`, nested brackets balanced.
fn angle(r: &mut Reader<'_>) -> Result<(), ReadError> {
    let start = r.pos;
    let mut open = 0usize;
    while let Some(c) = r.peek() {
        r.pos += 1;
        match c {
            b'<' => open += 1,
            b'>' => {
                open -= 1;
                if open == 0 {
                    return Ok(());
                }
            }
            b'\n' => break,
            _ => {}
        }
    }
    Err(r.error_at(start, "a `<` without its `>`"))
}

/// The items of a tuple, list or call up to `close` (`k=v` items keep their values): comma
/// separated, or whitespace separated jaxprs (`branches=(\n { … }\n { … }\n)`).
fn items<'t>(r: &mut Reader<'t>, close: u8) -> Result<Vec<Printed<'t>>, ReadError> {
    let mut out = Vec::new();
    loop {
        r.ws();
        if r.peek() == Some(close) {
            r.pos += 1;
            return Ok(out);
        }
        // A keyword argument: `offset_dims=(…)`.
        let save = r.pos;
        if r.ident().is_some() && r.peek() == Some(b'=') {
            r.pos += 1;
        } else {
            r.pos = save;
        }
        out.push(value(r)?);
        r.ws();
        match r.peek() {
            Some(b',') => r.pos += 1,
            Some(c) if c == close => {}
            Some(b'{') => {}
            _ => {
                return Err(r.error(format!(
                    "expected `,` or `{}`, found {}",
                    close as char,
                    shown(r.rest())
                )));
            }
        }
    }
}

/// The parameters of an equation of `prim`: each value typed by its name, kept verbatim where
/// JAX's text of it is not the typed value's.
pub(super) fn typed(
    r: &mut Reader<'_>,
    prim: &'static Primitive,
    raw: Vec<(&str, usize, Printed<'_>, &str)>,
) -> Result<Params, ReadError> {
    let mut params = Params::new();
    for (key, at, v, text) in raw {
        if params.get(key).is_some() {
            return Err(r.error_at(at, format!("the parameter `{key}` is given twice")));
        }
        let p = typed_one(r, prim, key, v, text).map_err(|m| r.error_at(at, m))?;
        let p = if matches!(p, Param::Jaxpr(_) | Param::Jaxprs(_)) || p.to_string() == text {
            p
        } else {
            Param::Verbatim {
                value: Box::new(p),
                text: text.into(),
            }
        };
        params = params.with_named(key.to_string(), p);
    }
    super::rules::custom_rules(prim, params).map_err(|m| r.error(m))
}

fn typed_one(
    r: &mut Reader<'_>,
    prim: &'static Primitive,
    key: &str,
    v: Printed<'_>,
    text: &str,
) -> Result<Param, String> {
    let opaque = || Param::Name(text.to_string());
    Ok(match (key, v) {
        (_, Printed::Jaxpr(j)) => Param::Jaxpr(j),
        ("jaxpr" | "call_jaxpr" | "body_jaxpr" | "cond_jaxpr", Printed::Word(name)) => {
            Param::Jaxpr(r.shared(name)?)
        }
        // `branches=(…)`: jaxprs, or names of shared ones.
        ("branches", Printed::Tuple(items)) => Param::Jaxprs(
            items
                .into_iter()
                .map(|item| match item {
                    Printed::Jaxpr(j) => Ok(j),
                    Printed::Word(name) => r.shared(name),
                    _ => Err(format!("branches must be jaxprs, not {text}")),
                })
                .collect::<Result<_, _>>()?,
        ),
        ("name", _) => opaque(),
        ("dimension_numbers", Printed::Tuple(v)) if prim.name == "dot_general" => {
            dot_dimension_numbers(&v).ok_or_else(|| {
                format!("dot_general's dimension_numbers must be ((lc, rc), (lb, rb)), not {text}")
            })?
        }
        ("dimension_numbers", Printed::Call("ConvDimensionNumbers", v))
            if prim.name == "conv_general_dilated" =>
        {
            let specs: Option<[Vec<i64>; 3]> = v
                .iter()
                .map(Printed::ints)
                .collect::<Option<Vec<_>>>()
                .and_then(|v| v.try_into().ok());
            let [lhs_spec, rhs_spec, out_spec] = specs.ok_or_else(|| {
                format!(
                    "conv_general_dilated's dimension_numbers must be ConvDimensionNumbers of \
                     three tuples, not {text}"
                )
            })?;
            Param::ConvDimensionNumbers {
                lhs_spec,
                rhs_spec,
                out_spec,
            }
        }
        ("dimension_numbers", Printed::Call(name @ "GatherDimensionNumbers", v))
            if prim.name == "gather" =>
        {
            let [a, b, c, d, e] = five_tuples(&v).ok_or_else(|| not_five(prim, name, text))?;
            Param::GatherDimensionNumbers(crate::core::GatherDimensionNumbers {
                offset_dims: a,
                collapsed_slice_dims: b,
                start_index_map: c,
                operand_batching_dims: d,
                start_indices_batching_dims: e,
            })
        }
        ("dimension_numbers", Printed::Call(name @ "ScatterDimensionNumbers", v))
            if prim.name.starts_with("scatter") =>
        {
            let [a, b, c, d, e] = five_tuples(&v).ok_or_else(|| not_five(prim, name, text))?;
            Param::ScatterDimensionNumbers(crate::core::ScatterDimensionNumbers {
                update_window_dims: a,
                inserted_window_dims: b,
                scatter_dims_to_operand_dims: c,
                operand_batching_dims: d,
                scatter_indices_batching_dims: e,
            })
        }
        // A Python number (int, float, bool).
        ("fill_value", v @ (Printed::Int(_) | Printed::Float | Printed::Word(_)))
            if !matches!(v, Printed::Word("None")) =>
        {
            use crate::core::PyNumber;
            let t = text.trim();
            match v {
                Printed::Word("True") => Param::Number(PyNumber::Bool(true)),
                Printed::Word("False") => Param::Number(PyNumber::Bool(false)),
                Printed::Int(i) => match (i64::try_from(i), u64::try_from(i)) {
                    (Ok(i), _) => Param::Number(PyNumber::Int(i)),
                    (_, Ok(u)) => Param::Number(PyNumber::UInt(u)),
                    _ => return Err(format!("fill_value {text} is out of range")),
                },
                _ => match t.parse::<f64>() {
                    Ok(f) => Param::Number(PyNumber::Float(f)),
                    Err(_) => return Err(format!("fill_value must be a number, not {text}")),
                },
            }
        }
        ("padding_config", Printed::Tuple(v)) => Param::Padding(
            v.iter()
                .map(|d| match d.ints().as_deref() {
                    Some(&[lo, hi, interior]) => Some((lo, hi, interior)),
                    _ => None,
                })
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    format!(
                        "padding_config must be (low, high, interior) per dimension, not {text}"
                    )
                })?,
        ),
        // The windowed primitives' and convolutions' `padding`: `(low, high)` per dimension.
        ("padding", Printed::Tuple(v))
            if v.iter()
                .all(|d| matches!(d.ints().as_deref(), Some([_, _]))) =>
        {
            Param::Pairs(
                v.iter()
                    .filter_map(|d| match d.ints().as_deref() {
                        Some(&[lo, hi]) => Some((lo, hi)),
                        _ => None,
                    })
                    .collect(),
            )
        }
        ("impl", Printed::Word(tag)) => {
            match format!("key<{tag}>")
                .parse::<DType>()
                .ok()
                .and_then(DType::key_impl)
            {
                Some(k) => Param::KeyImpl(k),
                None => return Err(format!("unknown PRNG implementation `{tag}`")),
            }
        }
        (_, Printed::Word("True")) => Param::Bool(true),
        (_, Printed::Word("False")) => Param::Bool(false),
        (_, Printed::Word("None")) => Param::None,
        (_, v @ (Printed::Int(_) | Printed::Call(..))) if v.int().is_some() => {
            Param::Int(v.int().unwrap_or_default())
        }
        (_, v @ Printed::Tuple(_)) if v.ints().is_some() => {
            Param::Ints(v.ints().unwrap_or_default())
        }
        (_, Printed::Word(w)) => match w.parse::<DType>() {
            Ok(d) if d.name() == w => Param::DType(d),
            _ => opaque(),
        },
        _ => opaque(),
    })
}

/// The five tuples of integers of a `GatherDimensionNumbers(…)` or `ScatterDimensionNumbers(…)`.
fn five_tuples(v: &[Printed<'_>]) -> Option<[Vec<i64>; 5]> {
    v.iter()
        .map(Printed::ints)
        .collect::<Option<Vec<_>>>()?
        .try_into()
        .ok()
}

fn not_five(prim: &Primitive, name: &str, text: &str) -> String {
    format!(
        "{}'s dimension_numbers must be {name} of five tuples, not {text}",
        prim.name
    )
}

fn dot_dimension_numbers(v: &[Printed<'_>]) -> Option<Param> {
    let [Printed::Tuple(c), Printed::Tuple(b)] = v else {
        return None;
    };
    let [lc, rc] = c.as_slice() else { return None };
    let [lb, rb] = b.as_slice() else { return None };
    Some(Param::DotDimensionNumbers {
        lhs_contracting: lc.ints()?,
        rhs_contracting: rc.ints()?,
        lhs_batch: lb.ints()?,
        rhs_batch: rb.ints()?,
    })
}
