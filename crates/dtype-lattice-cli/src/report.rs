//! `report`: one self-contained HTML page (no network, no script but a layout self-check):
//! the design note's lattices checked and drawn, the audit comparison, the rule sets'
//! lattices, and every rule set's promotion table against a base.

use std::fmt::Write as _;
use std::path::Path;

use dtype_lattice::table::{JAX_DOC_TYPES, Table};
use dtype_lattice::toolkit::audit::COMPARE_DTYPES;
use dtype_lattice::toolkit::check::{DefinitionFile, Report, check};
use dtype_lattice::toolkit::graph::Hasse;
use dtype_lattice::{Error, Node, RuleSet};

use crate::toolkit::{COMPARE_HEADER, compare_cells, compare_rows, lattice_of_definition};
use crate::{Format, Names, RuleArgs, render};

/// The shipped example lattices (`examples/lattices/`), in the order the page shows them.
pub(crate) const EXAMPLES: &[(&str, &str)] = &[
    (
        "python.toml",
        include_str!("../../../examples/lattices/python.toml"),
    ),
    (
        "non-lattice-left.json",
        include_str!("../../../examples/lattices/non-lattice-left.json"),
    ),
    (
        "non-lattice-right.json",
        include_str!("../../../examples/lattices/non-lattice-right.json"),
    ),
    (
        "option0.json",
        include_str!("../../../examples/lattices/option0.json"),
    ),
    (
        "numpy-doubling.json",
        include_str!("../../../examples/lattices/numpy-doubling.json"),
    ),
    (
        "option1.json",
        include_str!("../../../examples/lattices/option1.json"),
    ),
    (
        "option2.json",
        include_str!("../../../examples/lattices/option2.json"),
    ),
    (
        "option3.json",
        include_str!("../../../examples/lattices/option3.json"),
    ),
    (
        "jax.json",
        include_str!("../../../examples/lattices/jax.json"),
    ),
    (
        "megengine.json",
        include_str!("../../../examples/lattices/megengine.json"),
    ),
    (
        "mine.toml",
        include_str!("../../../examples/lattices/mine.toml"),
    ),
];

const CSS: &str = r#"
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #f6f8fa; --accent: #0969da;
        --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --diff: #c8f0c8; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 "DejaVu Sans", Helvetica, Arial, sans-serif; color: var(--ink); background: #fff; }
header { background: #0d1117; color: #f0f6fc; padding: 28px 40px 20px; }
header h1 { margin: 0 0 6px; font-size: 28px; }
header p { margin: 0; color: #b6c2cf; max-width: 980px; }
nav { margin-top: 14px; display: flex; gap: 18px; flex-wrap: wrap; }
nav a { color: #7ab7ff; text-decoration: none; font-weight: 600; }
main { padding: 8px 40px 40px; max-width: 1900px; }
h2 { margin: 34px 0 6px; font-size: 22px; border-bottom: 1px solid var(--line); padding-bottom: 6px; }
h3 { margin: 0 0 4px; font-size: 16px; }
p.lead { color: var(--muted); margin: 4px 0 16px; max-width: 1100px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 18px; }
.card { border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; background: #fff; box-shadow: 0 1px 2px rgba(31,35,40,.06); min-width: 0; }
.card.wide { grid-column: 1 / -1; }
.card p { margin: 2px 0 8px; color: var(--muted); font-size: 13.5px; }
.badge { display: inline-block; font-size: 12px; font-weight: 700; padding: 1px 9px; border-radius: 20px; margin-left: 8px; vertical-align: 2px; }
.badge.ok { background: #dafbe1; color: var(--ok); }
.badge.partial { background: #fff8c5; color: var(--warn); }
.badge.bad { background: #ffebe9; color: var(--bad); }
.facts { font-size: 13px; margin: 4px 0 10px; padding-left: 18px; }
.drawing { overflow-x: auto; border-top: 1px dashed var(--line); padding-top: 8px; }
.drawing svg { max-width: 100%; height: auto; display: block; margin: 0 auto; }
table { border-collapse: collapse; font-size: 12.5px; }
table.audit { font-size: 13.5px; margin: 6px 0 8px; }
table.audit th, table.audit td { border: 1px solid var(--line); padding: 5px 10px; text-align: right; }
table.audit th:first-child, table.audit td:first-child { text-align: left; white-space: nowrap; }
table.audit thead th { background: var(--bg); font-weight: 600; }
table.audit td.zero { color: #8c959f; }
table.audit td.some { background: #fff8c5; }
table.audit tr.file td:first-child { font-style: italic; }
table.promotion { margin: 6px 0 4px; font-family: "DejaVu Sans Mono", Menlo, monospace; }
table.promotion caption { caption-side: top; text-align: left; font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; color: var(--muted); font-size: 13px; padding-bottom: 4px; }
table.promotion th, table.promotion td { border: 1px solid var(--line); padding: 2px 3px; text-align: center; min-width: 29px; }
.tables .card { overflow-x: auto; }
table.promotion th { background: var(--bg); }
table.promotion td.d { background: var(--diff); font-weight: 700; }
.tables { display: grid; grid-template-columns: repeat(auto-fill, minmax(600px, 1fr)); gap: 18px; }
.legend span { display: inline-block; padding: 0 8px; margin-right: 8px; border: 1px solid var(--line); border-radius: 6px; font-size: 12.5px; }
footer { color: var(--muted); font-size: 12.5px; padding: 20px 40px 30px; border-top: 1px solid var(--line); }
code { background: var(--bg); padding: 1px 5px; border-radius: 5px; font-size: 13px; }
"#;

/// Self-check for headless tests: counts what actually laid out with a non-zero size.
const SCRIPT: &str = r#"
window.addEventListener('load', function () {
  var sized = function (sel) {
    return Array.prototype.filter.call(document.querySelectorAll(sel), function (e) {
      var r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0;
    }).length;
  };
  document.body.setAttribute('data-svgs', sized('svg'));
  document.body.setAttribute('data-tables', sized('table'));
  document.body.setAttribute('data-overflow', document.documentElement.scrollWidth > document.documentElement.clientWidth + 1 ? 'yes' : 'no');
});
"#;

use crate::render::escape_html as esc;

pub(crate) fn write(path: &Path, base: RuleSet, x64: bool) -> i32 {
    match page(base, x64) {
        Ok(html) => match std::fs::write(path, html) {
            Ok(()) => {
                eprintln!("wrote {}", path.display());
                0
            }
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                2
            }
        },
        Err(e) => crate::render::fail(&mut std::io::sink(), &e, false),
    }
}

fn rule_args(x64: bool) -> RuleArgs {
    RuleArgs {
        rules: RuleSet::JAX,
        strict: false,
        x64,
        default_float: None,
        op: None,
    }
}

/// The whole page.
pub(crate) fn page(base: RuleSet, x64: bool) -> Result<String, Error> {
    let args = rule_args(x64);
    let examples: Vec<(String, DefinitionFile)> = EXAMPLES
        .iter()
        .map(|(file, text)| {
            let f: DefinitionFile = text.parse()?;
            Ok((f.name.clone().unwrap_or_else(|| file.to_string()), f))
        })
        .collect::<Result<_, Error>>()?;
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>dtype-lattice report</title>\n<style>{CSS}</style>\n</head>\n<body>"
    );
    let _ = writeln!(
        h,
        "<header><h1>What dtype does <code style=\"background:#21262d;color:#f0f6fc\">a + b</code> produce?</h1>\
<p>Type promotion in JAX, NumPy, PyTorch, TensorFlow, the array API standard and MegEngine, side by side; the lattices of JAX's design note checked and drawn; and the note's design criteria measured for every rule set. Generated by dtype-lattice {} (x64 {}).</p>\
<nav><a href=\"#design\">Design note lattices</a><a href=\"#audit\">Criteria, measured</a><a href=\"#lattices\">Rule-set lattices</a><a href=\"#tables\">Promotion tables</a></nav></header>\n<main>",
        env!("CARGO_PKG_VERSION"),
        if x64 { "on" } else { "off" }
    );

    // The design note's lattices.
    let _ = writeln!(
        h,
        "<section id=\"design\"><h2>The design note's lattices, checked</h2>\
<p class=\"lead\">Each graph is a definition file of <code>examples/lattices/</code>, checked by <code>dtype-lattice check</code>: a <em>lattice</em> gives every pair a unique least upper bound (its join, the promotion); a <em>partial lattice</em> leaves some pairs without any upper bound (an error) but never with two minimal ones. Dashed boxes are Python scalar types (weak types).</p>\n<div class=\"grid\">"
    );
    for (i, (name, file)) in examples.iter().enumerate() {
        let report = check(&file.definition)?;
        let Report::Lattice(r) = report else {
            continue;
        };
        let (class, verdict) = if r.is_lattice {
            ("ok", "lattice")
        } else if r.is_partial_lattice {
            ("partial", "partial lattice")
        } else {
            ("bad", "not a lattice")
        };
        let l = lattice_of_definition(name, &file.definition)?;
        let g = Hasse::new(&l, |n| n.clone());
        let _ = write!(
            h,
            "<div class=\"card{}\"><h3>{}<span class=\"badge {class}\">{verdict}</span></h3><p>{}</p><ul class=\"facts\">",
            if g.depth() >= 8 { " wide" } else { "" },
            esc(name),
            esc(file.description.as_deref().unwrap_or(""))
        );
        let _ = write!(
            h,
            "<li>{} nodes; {} without an upper bound{}</li>",
            r.nodes,
            match r.undefined_pair_count {
                1 => "1 pair".to_string(),
                n => format!("{n} pairs"),
            },
            if r.undefined_pairs.is_empty() {
                String::new()
            } else {
                format!(
                    " (e.g. {})",
                    esc(&r
                        .undefined_pairs
                        .iter()
                        .take(3)
                        .map(|[a, b]| format!("{a} ∨ {b}"))
                        .collect::<Vec<_>>()
                        .join(", "))
                )
            }
        );
        for p in &r.ambiguous_pairs {
            let _ = write!(
                h,
                "<li>{} ∨ {}: ambiguous, minimal upper bounds {}</li>",
                esc(&p.pair[0]),
                esc(&p.pair[1]),
                esc(&p.minimal_upper_bounds.join(", "))
            );
        }
        let _ = write!(h, "</ul>");
        let _ = writeln!(
            h,
            "<div class=\"drawing\">{}</div></div>",
            g.to_svg(None, &format!("ex{i}"))
        );
    }
    let _ = writeln!(h, "</div></section>");

    // The audit comparison.
    let design: Vec<(String, DefinitionFile)> = examples
        .iter()
        .filter(|(n, _)| ["option1", "option2", "option3", "jax", "mine"].contains(&n.as_str()))
        .cloned()
        .collect();
    let rows = compare_rows(&args, &COMPARE_DTYPES, &design)?;
    let _ = write!(
        h,
        "<section id=\"audit\"><h2>The design criteria, measured</h2>\
<p class=\"lead\"><code>dtype-lattice audit --compare{}</code> over the 15 dtypes of the note's tables (those each rule set has): every pair of arrays promoted, and each result checked against the note's criteria. <b>Non-associative</b> counts ordered triples whose two bracketings differ (a refusal counts as a result); <b>component loss</b>: a complex input, a real result; <b>overflow</b>: an integer input whose range the integer result lacks; <b>magnitude loss</b>: an input larger than the result's largest finite value; <b>precision loss</b>: an input whose values the result cannot all hold; <b>widening</b>: a result wider than both inputs. Rows in italics are lattice files.</p>\n<table class=\"audit\"><thead><tr>",
        if x64 { " --x64" } else { "" }
    );
    for c in COMPARE_HEADER {
        let _ = write!(
            h,
            "<th>{}</th>",
            esc(if c.is_empty() { "rule set" } else { c })
        );
    }
    let _ = writeln!(h, "</tr></thead><tbody>");
    for s in &rows {
        let file = s.subject.ends_with("(lattice file)");
        let _ = write!(h, "<tr{}>", if file { " class=\"file\"" } else { "" });
        for (k, c) in compare_cells(s).iter().enumerate() {
            let class = match k {
                0 | 1 => "",
                _ if c == "0" => " class=\"zero\"",
                _ => " class=\"some\"",
            };
            let _ = write!(h, "<td{class}>{}</td>", esc(c));
        }
        let _ = writeln!(h, "</tr>");
    }
    let _ = writeln!(
        h,
        "</tbody></table>\n<p class=\"lead\">The note's claims, with numbers: NumPy is not associative (its smallest counterexample is the note's own, (int8 + uint8) + float16 = float32 but int8 + (uint8 + float16) = float16); JAX is, with no component loss and no overflow, at the price of precision and magnitude losses (int64 + float16 → float16). <code>mine</code> keeps JAX's lattice properties and removes every magnitude loss (see <code>examples/lattices/mine.md</code>).</p></section>"
    );

    // The rule sets' lattices.
    let _ = writeln!(
        h,
        "<section id=\"lattices\"><h2>The rule sets' lattices</h2><p class=\"lead\">Hasse diagrams (cover edges only) of the rule sets defined by a lattice, drawn by <code>dtype-lattice graph</code>. NumPy's is its safe-casting order, which is not a lattice: NumPy breaks the ties by type number. TensorFlow's has weak int32, int64, float32, float64 and complex128 nodes (<code>~</code>). jax-lax, tensorflow-safe (whose refusals depend on the operands' order), tensorflow-legacy and MegEngine promote by other means (no promotion, or by category).</p>\n<div class=\"grid\">"
    );
    let mut drawn: Vec<(*const dtype_lattice::lattice::Lattice<Node>, String)> = Vec::new();
    for set in RuleSet::all() {
        let rules = args.rules_for(set);
        if let Some(l) = rules.named_lattice() {
            // TensorFlow's: weak dtypes `Node` cannot express, so named nodes.
            let g = Hasse::new(l, String::clone);
            let _ = writeln!(
                h,
                "<div class=\"card wide\"><h3>{}<span class=\"badge ok\">lattice</span></h3><p>{} nodes, {} cover edges (<code>~</code>: weak).</p><div class=\"drawing\">{}</div></div>",
                esc(&rules.to_string()),
                l.len(),
                g.covers().len(),
                g.to_svg(None, &format!("rules-{set}"))
            );
            continue;
        }
        let Some(l) = rules.lattice() else { continue };
        if let Some((_, first)) = drawn.iter().find(|(p, _)| std::ptr::eq(*p, l)) {
            let _ = writeln!(
                h,
                "<div class=\"card wide\"><h3>{}</h3><p>The same lattice as {}.</p></div>",
                esc(&rules.to_string()),
                esc(first)
            );
            continue;
        }
        drawn.push((l as *const _, rules.to_string()));
        let g = Hasse::new(l, |n: &Node| n.to_string());
        let verdict = if l.is_lattice() {
            ("ok", "lattice")
        } else if l.is_partial_lattice() {
            ("partial", "partial lattice")
        } else {
            ("bad", "not a lattice")
        };
        let _ = writeln!(
            h,
            "<div class=\"card wide\"><h3>{}<span class=\"badge {}\">{}</span></h3><p>{} nodes, {} cover edges.</p><div class=\"drawing\">{}</div></div>",
            esc(&rules.to_string()),
            verdict.0,
            verdict.1,
            l.len(),
            g.covers().len(),
            g.to_svg(None, &format!("rules-{set}"))
        );
    }
    let _ = writeln!(h, "</div></section>");

    // Every rule set's table against the base.
    let base_rules = args.rules_for(base);
    let base_table = Table::compute(base_rules, None, &JAX_DOC_TYPES);
    let _ = writeln!(
        h,
        "<section id=\"tables\"><h2>Promotion tables</h2><p class=\"lead\">Row type promoted with column type, as <code>dtype-lattice table --rules R --diff {base}</code> prints them. <span class=\"legend\"><span style=\"background:var(--diff)\">highlighted</span></span> cells differ from {base}; <code>-</code> is a refusal; <code>i*</code>, <code>f*</code>, <code>c*</code> are Python int, float and complex (weak types), and a trailing <code>*</code> marks a weakly typed result.</p>\n<div class=\"tables\">"
    );
    for set in RuleSet::all() {
        let t = Table::compute(args.rules_for(set), None, &JAX_DOC_TYPES);
        let differing: usize = t.diff(&base_table).iter().flatten().filter(|&&d| d).count();
        let mut buf = Vec::new();
        let b = (set != base).then_some(&base_table);
        // Writing into a Vec<u8> cannot fail.
        let _ = render::table(&mut buf, &t, b, Format::Html, Names::Short);
        let _ = writeln!(
            h,
            "<div class=\"card\"><h3>{}</h3><p>{} of {} cells differ from {base}.</p>{}</div>",
            esc(&t.rules.to_string()),
            differing,
            t.types.len() * t.types.len(),
            String::from_utf8_lossy(&buf)
        );
    }
    let _ = writeln!(
        h,
        "</div></section>\n</main>\n<footer>dtype-lattice {} · one self-contained page: no network, no external files. Regenerate with <code>dtype-lattice report -o report.html{}</code>.</footer>\n<script>{SCRIPT}</script>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION"),
        if x64 { " --x64" } else { "" }
    );
    Ok(h)
}
