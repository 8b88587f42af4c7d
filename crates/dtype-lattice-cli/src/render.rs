//! Rendering: promote's JSON objects and the table formats.

use std::io::{self, Write};

use serde::Serialize;

use dtype_lattice::error::ErrorKind;
use dtype_lattice::table::Table;
use dtype_lattice::{Error, Kind, Operand, Promotion};

use crate::{Format, Names};

/// promote's JSON schema: the promotion, or `{"error": {...}}`.
#[derive(Serialize)]
#[serde(untagged)]
enum Answer<'a> {
    Ok(&'a Promotion),
    Err { error: ErrorJson },
}

fn to_answer(result: &Result<Promotion, Error>) -> Answer<'_> {
    match result {
        Ok(p) => Answer::Ok(p),
        Err(e) => Answer::Err {
            error: ErrorJson::of(e),
        },
    }
}

pub(crate) fn write_json_line(
    out: &mut impl Write,
    result: &Result<Promotion, Error>,
) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &to_answer(result))?;
    out.write_all(b"\n")
}

/// The JSON form of an error: `{"kind": ..., "message": ...}`, the kind being the Python
/// exception class for a refusal the real library raises, else the error's kind.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorJson {
    kind: &'static str,
    message: String,
}

impl ErrorJson {
    pub(crate) fn of(e: &Error) -> ErrorJson {
        ErrorJson {
            kind: e.exception().map_or(e.kind().name(), |x| x.name()),
            message: e.message(),
        }
    }
}

/// Escapes text for HTML (`&`, `<`, `>`, `"`).
pub(crate) fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The exit code of an error: 1 for a refusal (the rules say no), 2 for unusable input.
pub(crate) fn exit_code(e: &Error) -> i32 {
    if e.is_refusal() { 1 } else { 2 }
}

/// An error as one line: `Class: message` for a refusal the library raises (and for the
/// toolkit's `NoJoin`/`NotALattice`), else the error's own sentence.
pub(crate) fn error_line(e: &Error) -> String {
    match e.kind() {
        ErrorKind::NoJoin | ErrorKind::NotALattice => format!("{}: {}", e.kind(), e.message()),
        _ => e.to_string(),
    }
}

/// Reports an error the one way every command does: with JSON output asked for, the JSON
/// object `{"error": {"kind", "message"}}` on stdout; otherwise `error: ...` on stderr.
/// Returns the exit code (1 a refusal, 2 unusable input).
pub(crate) fn fail(out: &mut impl Write, e: &Error, json: bool) -> i32 {
    if json {
        let written = serde_json::to_writer(
            &mut *out,
            &Answer::Err {
                error: ErrorJson::of(e),
            },
        )
        .map_err(io::Error::other)
        .and_then(|()| out.write_all(b"\n"));
        if let Err(w) = written
            && w.kind() != io::ErrorKind::BrokenPipe
        {
            eprintln!("error: cannot write output: {w}");
            return 2;
        }
    } else {
        eprintln!("error: {}", error_line(e));
    }
    exit_code(e)
}

fn label(op: &Operand, names: Names) -> String {
    match names {
        Names::Short => op.short_label(),
        Names::Long => op.to_string(),
    }
}

/// A cell as JAX's documentation prints it: weak results by their Python type (`i*`), a
/// refusal as `-`.
fn cell(result: &Result<Promotion, Error>, names: Names) -> String {
    let p = match result {
        Err(_) => return "-".to_string(),
        Ok(p) => p,
    };
    if p.weak_type {
        let (short, long) = match p.dtype.kind() {
            Kind::Float => ("f*", "float"),
            Kind::Complex => ("c*", "complex"),
            _ => ("i*", "int"),
        };
        return match names {
            Names::Short => short,
            Names::Long => long,
        }
        .to_string();
    }
    match names {
        Names::Short => p.dtype.short_name().to_string(),
        Names::Long => p.dtype.name().to_string(),
    }
}

fn caption(t: &Table, base: Option<&Table>, mark: &str) -> String {
    let options = t.rules.options_label();
    let what = match t.op {
        Some(op) => format!("{op} table"),
        None => "promotion table".to_string(),
    };
    let mut c = format!(
        "{} {what}{}; rows promote with columns; `-`: refused",
        t.rules.rule_set(),
        if options.is_empty() {
            String::new()
        } else {
            format!(" ({options})")
        }
    );
    if let Some(b) = base {
        c.push_str(&format!("; {mark}: differs from {}", b.rules.rule_set()));
    }
    c
}

#[derive(Serialize)]
struct TableJson<'a> {
    rules: &'a str,
    options: dtype_lattice::Options,
    op: Option<dtype_lattice::Op>,
    types: &'a [Operand],
    cells: Vec<Vec<Answer<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<DiffJson<'a>>,
}

#[derive(Serialize)]
struct DiffJson<'a> {
    rules: &'a str,
    cells: Vec<Vec<bool>>,
}

/// How each format marks a cell that differs from the base table.
fn marked(format: Format, c: &str) -> String {
    match format {
        Format::Markdown => format!("**{c}**"),
        Format::Html => c.to_string(),
        _ => format!("[{c}]"),
    }
}

pub(crate) fn table(
    out: &mut impl Write,
    t: &Table,
    base: Option<&Table>,
    format: Format,
    names: Names,
) -> io::Result<()> {
    let labels: Vec<String> = t.types.iter().map(|o| label(o, names)).collect();
    let diff: Vec<Vec<bool>> = match base {
        Some(b) => t.diff(b),
        None => vec![vec![false; t.types.len()]; t.types.len()],
    };
    let grid: Vec<Vec<String>> = t
        .cells
        .iter()
        .zip(&diff)
        .map(|(row, d)| {
            row.iter()
                .zip(d)
                .map(|(c, &differs)| {
                    let c = cell(c, names);
                    if differs { marked(format, &c) } else { c }
                })
                .collect()
        })
        .collect();
    let mark = match format {
        Format::Markdown => "bold",
        Format::Html => "highlighted",
        _ => "[bracketed]",
    };
    let caption = caption(t, base, mark);
    match format {
        Format::Json => {
            let j = TableJson {
                rules: t.rules.rule_set().name(),
                options: t.rules.options(),
                op: t.op,
                diff: base.map(|b| DiffJson {
                    rules: b.rules.rule_set().name(),
                    cells: diff.clone(),
                }),
                types: &t.types,
                cells: t
                    .cells
                    .iter()
                    .map(|row| row.iter().map(to_answer).collect())
                    .collect(),
            };
            serde_json::to_writer(&mut *out, &j)?;
            writeln!(out)
        }
        Format::Text => {
            let width = labels
                .iter()
                .chain(grid.iter().flatten())
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(1);
            writeln!(out, "# {caption}")?;
            write!(out, "{:width$}", "")?;
            for l in &labels {
                write!(out, " {l:>width$}")?;
            }
            writeln!(out)?;
            for (l, row) in labels.iter().zip(&grid) {
                write!(out, "{l:width$}")?;
                for c in row {
                    write!(out, " {c:>width$}")?;
                }
                writeln!(out)?;
            }
            Ok(())
        }
        Format::Markdown => {
            writeln!(out, "*{caption}*\n")?;
            let md = |s: &str| {
                match s.strip_prefix("**").and_then(|s| s.strip_suffix("**")) {
                    Some(inner) => format!("**{}**", inner.replace('*', "\\*")),
                    None => s.replace('*', "\\*"),
                }
                .replace('|', "\\|")
            };
            write!(out, "| |")?;
            for l in &labels {
                write!(out, " {} |", md(l))?;
            }
            writeln!(out)?;
            writeln!(out, "|---|{}", "---|".repeat(labels.len()))?;
            for (l, row) in labels.iter().zip(&grid) {
                write!(out, "| **{}** |", md(l))?;
                for c in row {
                    write!(out, " {} |", md(c))?;
                }
                writeln!(out)?;
            }
            Ok(())
        }
        Format::Csv => {
            let csv = |s: &str| {
                if s.contains([',', '"', '\n']) {
                    format!("\"{}\"", s.replace('"', "\"\""))
                } else {
                    s.to_string()
                }
            };
            let header: Vec<String> = std::iter::once(String::new())
                .chain(labels.iter().map(|l| csv(l)))
                .collect();
            writeln!(out, "{}", header.join(","))?;
            for (l, row) in labels.iter().zip(&grid) {
                let cells: Vec<String> = row.iter().map(|c| csv(c)).collect();
                writeln!(out, "{},{}", csv(l), cells.join(","))?;
            }
            Ok(())
        }
        Format::Html => {
            writeln!(out, "<table class=\"promotion\">")?;
            writeln!(out, "<caption>{}</caption>", escape_html(&caption))?;
            write!(out, "<tr><th></th>")?;
            for l in &labels {
                write!(out, "<th>{}</th>", escape_html(l))?;
            }
            writeln!(out, "</tr>")?;
            for ((l, row), d) in labels.iter().zip(&grid).zip(&diff) {
                write!(out, "<tr><th>{}</th>", escape_html(l))?;
                for (c, &differs) in row.iter().zip(d) {
                    if differs {
                        write!(
                            out,
                            "<td class=\"d\" style=\"background:#c8f0c8\">{}</td>",
                            escape_html(c)
                        )?;
                    } else {
                        write!(out, "<td>{}</td>", escape_html(c))?;
                    }
                }
                writeln!(out, "</tr>")?;
            }
            writeln!(out, "</table>")
        }
    }
}
