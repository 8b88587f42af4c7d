//! `check`, `audit` and `graph`: parsing their inputs and rendering their answers.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use dtype_lattice::error::Reason;
use dtype_lattice::lattice::Lattice;
use dtype_lattice::toolkit::audit::{Audit, COMPARE_DTYPES, Criteria, Summary};
use dtype_lattice::toolkit::check::{
    Definition, DefinitionFile, LatticeReport, Report, TableReport, check, file_order, lattice_of,
    table_of,
};
use dtype_lattice::toolkit::graph::{Hasse, Highlight};
use dtype_lattice::{DType, Error, Node, RuleSet};

use crate::{GraphFormat, Names, RuleArgs, render};

use render::fail;

/// A definition file with the label to show for it (its `name`, else the file stem).
pub(crate) fn load(path: &Path) -> Result<(String, DefinitionFile), Error> {
    let file = DefinitionFile::read(path)?;
    let label = file.name.clone().unwrap_or_else(|| {
        path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into(),
        )
    });
    Ok((label, file))
}

/// The lattice a definition defines: its edges, or the lattice a table is the join of.
pub(crate) fn lattice_of_definition(label: &str, d: &Definition) -> Result<Lattice<String>, Error> {
    match d {
        Definition::Lattice(edges) => lattice_of(edges),
        Definition::Table(rows) => match check(d)? {
            Report::Table(r) if r.edges.is_some() => {
                // Keep every type, also those no edge mentions.
                let mut all = r.edges.expect("checked").0;
                let named: std::collections::HashSet<String> = all
                    .iter()
                    .flat_map(|(a, b)| std::iter::once(a).chain(b))
                    .cloned()
                    .collect();
                for (row, _) in rows {
                    if !named.contains(row) {
                        all.push((row.clone(), Vec::new()));
                    }
                }
                lattice_of(&all)
            }
            _ => Err(Reason::NotALattice { message: format!(
                    "the table {label} is not the join of a lattice (run `dtype-lattice check` on it)"
                ) }.into()),
        },
    }
}

// ---------------------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------------------

pub(crate) fn check_cmd(path: &Path, json: bool, out: &mut impl Write) -> io::Result<i32> {
    let (label, file) = match load(path) {
        Ok(f) => f,
        Err(e) => return Ok(fail(out, &e, json)),
    };
    let report = match check(&file.definition) {
        Ok(r) => r,
        Err(e) => return Ok(fail(out, &e, json)),
    };
    if json {
        serde_json::to_writer(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        match &report {
            Report::Lattice(r) => write_lattice_report(out, &label, r)?,
            Report::Table(r) => write_table_report(out, &label, r)?,
        }
    }
    Ok(if report.is_lattice() { 0 } else { 1 })
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// Lists at most `max` of the first items of a list of `total`, then how many more.
fn some<T>(items: &[T], total: usize, max: usize, show: impl Fn(&T) -> String) -> String {
    listed(items, total, max, show).join("; ")
}

/// The first `max` items shown, then how many more of `total`.
fn listed<T>(items: &[T], total: usize, max: usize, show: impl Fn(&T) -> String) -> Vec<String> {
    let mut s: Vec<String> = items.iter().take(max).map(show).collect();
    if total > s.len() {
        s.push(format!("… {} more", total - s.len()));
    }
    s
}

fn write_lattice_report(out: &mut impl Write, label: &str, r: &LatticeReport) -> io::Result<()> {
    writeln!(out, "{label}: {} nodes", r.nodes)?;
    match &r.cycle {
        Some(c) => {
            let mut c = c.clone();
            c.push(c[0].clone());
            writeln!(out, "acyclic: no (cycle {})", c.join(" -> "))?;
        }
        None => writeln!(out, "acyclic: yes")?,
    }
    if r.acyclic {
        writeln!(
            out,
            "undefined pairs (no common upper bound): {}{}",
            r.undefined_pair_count,
            if r.undefined_pairs.is_empty() {
                String::new()
            } else {
                format!(
                    ": {}",
                    some(&r.undefined_pairs, r.undefined_pair_count, 8, |[a, b]| {
                        format!("{a}, {b}")
                    })
                )
            }
        )?;
        writeln!(
            out,
            "ambiguous pairs (several minimal upper bounds): {}{}",
            r.ambiguous_pair_count,
            if r.ambiguous_pairs.is_empty() {
                String::new()
            } else {
                format!(
                    ": {}",
                    some(&r.ambiguous_pairs, r.ambiguous_pair_count, 8, |p| format!(
                        "{}, {} -> {{{}}}",
                        p.pair[0],
                        p.pair[1],
                        listed(
                            &p.minimal_upper_bounds,
                            p.minimal_upper_bound_count,
                            8,
                            String::clone
                        )
                        .join(", ")
                    ))
                )
            }
        )?;
        if !r.redundant_edges.is_empty() {
            writeln!(
                out,
                "redundant edges (implied by others): {}",
                some(&r.redundant_edges, r.redundant_edge_count, 8, |[a, b]| {
                    format!("{a} -> {b}")
                })
            )?;
        }
    }
    writeln!(out, "partial lattice: {}", yes(r.is_partial_lattice))?;
    writeln!(out, "lattice: {}", yes(r.is_lattice))
}

fn opt(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("(none)")
}

fn write_table_report(out: &mut impl Write, label: &str, r: &TableReport) -> io::Result<()> {
    writeln!(out, "{label}: a promotion table of {} types", r.types)?;
    let line = |ok: bool, detail: Option<String>| match detail {
        Some(d) if !ok => format!("no ({d})"),
        _ => yes(ok).to_string(),
    };
    writeln!(
        out,
        "complete: {}",
        line(
            r.complete,
            r.missing
                .as_ref()
                .map(|[a, b]| format!("{a}, {b} has no result"))
        )
    )?;
    writeln!(
        out,
        "closed: {}",
        line(
            r.closed,
            r.not_closed.as_ref().map(|c| format!(
                "{} ∘ {} = {}, not a type of the table",
                c.pair[0],
                c.pair[1],
                opt(&c.result)
            ))
        )
    )?;
    writeln!(
        out,
        "idempotent: {}",
        line(
            r.idempotent,
            r.non_idempotent.as_ref().map(|c| format!(
                "{0} ∘ {0} = {1}",
                c.pair[0],
                opt(&c.result)
            ))
        )
    )?;
    writeln!(
        out,
        "commutative: {}",
        line(
            r.commutative,
            r.non_commutative.as_ref().map(|c| format!(
                "{a} ∘ {b} = {}, {b} ∘ {a} = {}",
                opt(&c.results[0]),
                opt(&c.results[1]),
                a = c.pair[0],
                b = c.pair[1]
            ))
        )
    )?;
    writeln!(
        out,
        "associative: {}",
        line(
            r.associative,
            r.non_associative.as_ref().map(|t| format!(
                "({a} ∘ {b}) ∘ {c} = {}, {a} ∘ ({b} ∘ {c}) = {}",
                opt(&t.results[0]),
                opt(&t.results[1]),
                a = t.types[0],
                b = t.types[1],
                c = t.types[2]
            ))
        )
    )?;
    writeln!(
        out,
        "representable as a partial lattice: {}",
        yes(r.representable_as_partial_lattice)
    )?;
    writeln!(
        out,
        "representable as a lattice: {}",
        yes(r.representable_as_lattice)
    )?;
    if let Some(edges) = &r.edges {
        writeln!(out, "lattice (node -> nodes directly above):")?;
        for (a, above) in &edges.0 {
            writeln!(out, "  {a} -> {}", above.join(", "))?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// audit
// ---------------------------------------------------------------------------------------

pub(crate) struct AuditArgs<'a> {
    pub rules: &'a RuleArgs,
    pub rules_given: bool,
    pub lattices: &'a [PathBuf],
    pub types: Option<Vec<DType>>,
    pub compare: bool,
    pub json: bool,
    pub markdown: bool,
}

/// The audit of a lattice file, on `types` (by name) when given.
pub(crate) fn audit_file(
    label: &str,
    file: &DefinitionFile,
    types: Option<&[DType]>,
) -> Result<Audit, Error> {
    let keep_names = |names: &[String]| -> Vec<usize> {
        match types {
            None => (0..names.len()).collect(),
            Some(t) => t
                .iter()
                .filter_map(|d| names.iter().position(|n| n == d.name()))
                .collect(),
        }
    };
    match &file.definition {
        Definition::Lattice(edges) => {
            let l = lattice_of(edges)?;
            // Audit in the file's order of first appearance.
            let (order, _) = file_order(edges);
            let keep: Vec<usize> = keep_names(&order)
                .into_iter()
                .map(|i| l.index_of(&order[i]).expect("a node"))
                .collect();
            Audit::of_lattice_on(label, &l, &keep)
        }
        Definition::Table(rows) => {
            let t = table_of(rows)?;
            let keep = keep_names(&t.names()[..t.rows()]);
            let t = t.restrict(&keep);
            Audit::of_table(label, &t, keep.len())
        }
    }
}

pub(crate) fn audit_cmd(a: AuditArgs<'_>, out: &mut impl Write) -> io::Result<i32> {
    if a.compare {
        let types = a.types.clone().unwrap_or_else(|| COMPARE_DTYPES.to_vec());
        let files: Result<Vec<(String, DefinitionFile)>, Error> =
            a.lattices.iter().map(|p| load(p)).collect();
        let rows = match files.and_then(|f| compare_rows(a.rules, &types, &f)) {
            Ok(r) => r,
            Err(e) => return Ok(fail(out, &e, a.json)),
        };
        let options = a.rules.rules().options();
        if a.json {
            serde_json::to_writer(&mut *out, &rows)?;
            writeln!(out)?;
        } else {
            let caption = format!(
                "Promotion on the types {} (those each rule set has), x64 {}{}: counts of pairs (triples for associativity)",
                types
                    .iter()
                    .map(|d| d.short_name())
                    .collect::<Vec<_>>()
                    .join(" "),
                if options.x64 { "on" } else { "off" },
                if options.strict { ", strict" } else { "" },
            );
            write_compare(out, &caption, &rows, a.markdown)?;
        }
        return Ok(0);
    }
    let usage = |reason: &str| -> Error {
        Reason::InvalidArgument {
            argument: "--lattice".into(),
            reason: reason.into(),
        }
        .into()
    };
    let audit = if let Some(path) = a.lattices.first() {
        if a.lattices.len() > 1 {
            Err(usage(
                "audit takes one --lattice FILE (several with --compare)",
            ))
        } else if a.rules_given {
            Err(usage(
                "give --rules or --lattice, not both (both with --compare)",
            ))
        } else {
            load(path).and_then(|(label, file)| audit_file(&label, &file, a.types.as_deref()))
        }
    } else {
        a.rules
            .check()
            .and_then(|()| Audit::of_rules(&a.rules.rules(), a.rules.op, a.types.as_deref()))
    };
    let audit = match audit {
        Ok(x) => x,
        Err(e) => return Ok(fail(out, &e, a.json)),
    };
    if a.json {
        serde_json::to_writer(&mut *out, &audit)?;
        writeln!(out)?;
    } else {
        write_audit(out, &audit)?;
    }
    Ok(0)
}

/// `audit --compare`'s rows: every rule set, then the lattice files.
pub(crate) fn compare_rows(
    rules: &RuleArgs,
    types: &[DType],
    files: &[(String, DefinitionFile)],
) -> Result<Vec<Summary>, Error> {
    let mut rows = Vec::new();
    for set in RuleSet::all() {
        let r = rules.rules_for(set);
        let has = r.dtypes();
        let t: Vec<DType> = types.iter().copied().filter(|d| has.contains(d)).collect();
        rows.push(Audit::of_rules(&r, rules.op, Some(&t))?.summary());
    }
    for (label, file) in files {
        rows.push(audit_file(&format!("{label} (lattice file)"), file, Some(types))?.summary());
    }
    Ok(rows)
}

pub(crate) const COMPARE_HEADER: [&str; 10] = [
    "",
    "types",
    "refused",
    "non-commutative",
    "non-associative",
    "component loss",
    "overflow",
    "magnitude loss",
    "precision loss",
    "widening",
];

pub(crate) fn compare_cells(s: &Summary) -> [String; 10] {
    [
        s.subject.clone(),
        s.types.to_string(),
        s.refused_pairs.to_string(),
        s.non_commutative_pairs.to_string(),
        s.non_associative_triples.to_string(),
        s.component_loss.to_string(),
        s.overflow.to_string(),
        s.magnitude_loss.to_string(),
        s.precision_loss.to_string(),
        s.widening.to_string(),
    ]
}

fn write_compare(
    out: &mut impl Write,
    caption: &str,
    rows: &[Summary],
    markdown: bool,
) -> io::Result<()> {
    let cells: Vec<[String; 10]> = rows.iter().map(compare_cells).collect();
    if markdown {
        writeln!(out, "*{caption}*\n")?;
        writeln!(out, "| {} |", COMPARE_HEADER.join(" | "))?;
        writeln!(out, "|---|{}", "---:|".repeat(9))?;
        for c in &cells {
            writeln!(out, "| {} |", c.join(" | "))?;
        }
        return Ok(());
    }
    writeln!(out, "# {caption}")?;
    let widths: Vec<usize> = (0..10)
        .map(|k| {
            cells
                .iter()
                .map(|c| c[k].chars().count())
                .chain([COMPARE_HEADER[k].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (k, h) in COMPARE_HEADER.iter().enumerate() {
        if k == 0 {
            write!(out, "{h:<w$}", w = widths[0])?;
        } else {
            write!(out, "  {h:>w$}", w = widths[k])?;
        }
    }
    writeln!(out)?;
    for c in &cells {
        for (k, v) in c.iter().enumerate() {
            if k == 0 {
                write!(out, "{v:<w$}", w = widths[0])?;
            } else {
                write!(out, "  {v:>w$}", w = widths[k])?;
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

fn write_audit(out: &mut impl Write, a: &Audit) -> io::Result<()> {
    write!(
        out,
        "audit: {} ({} types, {} pairs",
        a.subject,
        a.types.len(),
        a.pairs
    )?;
    if !a.closure.is_empty() {
        write!(out, "; their results add {}", a.closure.join(", "))?;
    }
    writeln!(out, ")")?;
    let o = |s: &Option<String>| s.clone().unwrap_or_else(|| "error".into());
    writeln!(
        out,
        "commutative: {}",
        if a.commutative {
            "yes".to_string()
        } else {
            format!(
                "no, {} pairs: {}",
                a.non_commutative_pair_count,
                some(
                    &a.non_commutative_pairs,
                    a.non_commutative_pair_count,
                    3,
                    |c| format!(
                        "{x} ∘ {y} = {}, {y} ∘ {x} = {}",
                        o(&c.results[0]),
                        o(&c.results[1]),
                        x = c.pair[0],
                        y = c.pair[1]
                    )
                )
            )
        }
    )?;
    writeln!(
        out,
        "associative: {}",
        if a.associative {
            "yes".to_string()
        } else {
            format!(
                "no, {} triples: {}",
                a.non_associative_triple_count,
                some(
                    &a.non_associative_triples,
                    a.non_associative_triple_count,
                    3,
                    |t| format!(
                        "({x} ∘ {y}) ∘ {z} = {}, {x} ∘ ({y} ∘ {z}) = {}",
                        o(&t.results[0]),
                        o(&t.results[1]),
                        x = t.types[0],
                        y = t.types[1],
                        z = t.types[2]
                    )
                )
            )
        }
    )?;
    writeln!(
        out,
        "refused pairs: {}{}",
        a.refused_pair_count,
        if a.refused_pairs.is_empty() {
            String::new()
        } else {
            format!(
                ": {}",
                some(&a.refused_pairs, a.refused_pair_count, 4, |[x, y]| {
                    format!("{x}, {y}")
                })
            )
        }
    )?;
    writeln!(out, "criteria (pairs that break them):")?;
    for (name, list) in Criteria::NAMES.iter().zip(a.criteria.lists()) {
        write!(out, "  {name:<15} {:>4}", list.len())?;
        if !list.is_empty() {
            write!(
                out,
                "  {}",
                some(list, list.len(), 3, |p| format!(
                    "{} + {} -> {}",
                    p.pair[0], p.pair[1], p.result
                ))
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// graph
// ---------------------------------------------------------------------------------------

/// The diagram of a rule set's lattice or a file's, with its highlight.
pub(crate) fn diagram(
    rules: &RuleArgs,
    lattice: Option<&Path>,
    names: Names,
    highlight: Option<&str>,
) -> Result<(String, Hasse, Option<Highlight>), Error> {
    let pick = |names: &[String], s: &str| -> Result<usize, Error> {
        names.iter().position(|n| n == s).ok_or_else(|| {
            Reason::MalformedOperand {
                operand: s.to_string(),
                reason: format!(
                    "not a node of the lattice (nodes: {})",
                    listed(names, names.len(), 20, String::clone).join(", ")
                ),
            }
            .into()
        })
    };
    let pair = |s: &str| -> Result<(String, String), Error> {
        match s.split(',').map(str::trim).collect::<Vec<_>>()[..] {
            [a, b] if !a.is_empty() && !b.is_empty() => Ok((a.to_string(), b.to_string())),
            _ => Err(Reason::MalformedOperand {
                operand: s.to_string(),
                reason: "--highlight takes two nodes: A,B".into(),
            }
            .into()),
        }
    };
    if let Some(path) = lattice {
        let (label, file) = load(path)?;
        let l = lattice_of_definition(&label, &file.definition)?;
        let h = Hasse::new(&l, |n| n.clone());
        let hl = match highlight {
            None => None,
            Some(s) => {
                let (a, b) = pair(s)?;
                let (a, b) = (pick(h.names(), &a)?, pick(h.names(), &b)?);
                Some(Highlight::join(&l, a, b)?)
            }
        };
        return Ok((label, h, hl));
    }
    let r = rules.rules();
    if let Some(l) = r.named_lattice() {
        return named_diagram(&r, l, names, highlight.map(pair).transpose()?);
    }
    let Some(l) = r.lattice() else {
        return Err(Reason::NotALattice { message: format!(
                "{} is not defined by a lattice (its promotion is a table or refuses mixed types); `dtype-lattice table --rules {}` shows it",
                r.rule_set(),
                r.rule_set()
            ) }.into());
    };
    let label = |n: &Node| match names {
        Names::Long => n.to_string(),
        Names::Short => n.short_name().to_string(),
    };
    let h = Hasse::new(l, label);
    let hl = match highlight {
        None => None,
        Some(s) => {
            let (a, b) = pair(s)?;
            let node = |s: &str| -> Result<usize, Error> {
                let n: Node = s.parse()?;
                l.index_of(&n).ok_or_else(|| {
                    Reason::MalformedOperand {
                        operand: s.to_string(),
                        reason: format!("not a node of {}'s lattice", r.rule_set()),
                    }
                    .into()
                })
            };
            Some(Highlight::join(l, node(&a)?, node(&b)?)?)
        }
    };
    Ok((r.to_string(), h, hl))
}

/// A lattice with named nodes whose names are dtypes, weak (`~int32`) or not: TensorFlow's.
fn named_diagram(
    r: &dtype_lattice::Rules,
    l: &Lattice<String>,
    names: Names,
    highlight: Option<(String, String)>,
) -> Result<(String, Hasse, Option<Highlight>), Error> {
    // `~int32` ↔ `~i4`: the dtype's name or short name, weak or not.
    let split = |s: &str| -> (bool, String) {
        match s.strip_prefix('~') {
            Some(rest) => (true, rest.to_string()),
            None => (false, s.to_string()),
        }
    };
    let label = |n: &String| match names {
        Names::Long => n.clone(),
        Names::Short => {
            let (weak, d) = split(n);
            let short = d.parse::<DType>().map_or(d, |d| d.short_name().to_string());
            format!("{}{short}", if weak { "~" } else { "" })
        }
    };
    let h = Hasse::new(l, label);
    let node = |s: &str| -> Result<usize, Error> {
        let (weak, d) = split(s);
        let name = match d.parse::<DType>() {
            Ok(d) => format!("{}{d}", if weak { "~" } else { "" }),
            Err(_) => s.to_string(),
        };
        l.index_of(&name).ok_or_else(|| {
            Reason::MalformedOperand {
                operand: s.to_string(),
                reason: format!(
                    "not a node of {}'s lattice (nodes: {})",
                    r.rule_set(),
                    l.nodes().join(", ")
                ),
            }
            .into()
        })
    };
    let hl = match highlight {
        None => None,
        Some((a, b)) => Some(Highlight::join(l, node(&a)?, node(&b)?)?),
    };
    Ok((r.to_string(), h, hl))
}

pub(crate) fn graph_cmd(
    rules: &RuleArgs,
    lattice: Option<&Path>,
    format: GraphFormat,
    names: Names,
    highlight: Option<&str>,
    output: Option<&Path>,
    out: &mut impl Write,
) -> io::Result<i32> {
    let (label, h, hl) = match diagram(rules, lattice, names, highlight) {
        Ok(x) => x,
        Err(e) => return Ok(fail(out, &e, false)),
    };
    let text = match format {
        GraphFormat::Svg => h.to_svg(hl.as_ref(), &label),
        GraphFormat::Dot => h.to_dot(hl.as_ref(), &label),
        GraphFormat::Mermaid => h.to_mermaid(hl.as_ref()),
    };
    match output {
        None => out.write_all(text.as_bytes())?,
        Some(p) => {
            if let Err(e) = std::fs::write(p, text) {
                eprintln!("error: cannot write {}: {e}", p.display());
                return Ok(2);
            }
        }
    }
    Ok(0)
}
