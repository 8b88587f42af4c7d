//! Hasse diagrams of promotion lattices: the `graph` command.
//!
//! [`Hasse::new`] keeps the cover edges of a lattice (no edge implied by two others), lays the
//! nodes out in layers by longest path from the bottom, left to right like the lattice figure
//! in JAX's documentation, and orders each layer to reduce crossings (barycentre sweeps).
//! It renders as SVG (made here, no external program), Graphviz DOT or Mermaid, optionally
//! highlighting the paths from two nodes up to their join.
//!
//! ```
//! use dtype_lattice::toolkit::graph::{Hasse, Highlight};
//! use dtype_lattice::toolkit::check::lattice_of;
//! let l = lattice_of(&[("int".into(), vec!["float".into()]), ("float".into(), vec!["complex".into()])]).unwrap();
//! let h = Hasse::new(&l, |n| n.clone());
//! assert_eq!(h.covers().len(), 2);
//! let svg = h.to_svg(None, "python");
//! assert!(svg.starts_with("<svg") && svg.contains(">complex</text>"));
//! let hl = Highlight::join(&l, 0, 1).unwrap();
//! assert!(h.to_dot(Some(&hl), "python").contains("\"int\" -> \"float\" [color=\"#d62728\""));
//! ```

use std::fmt::Write as _;
use std::hash::Hash;

use crate::dtype::Kind;
use crate::error::{Error, Reason};
use crate::lattice::{Lattice, Lub};
use crate::toolkit::check::{Meaning, meaning};

/// A laid-out Hasse diagram. Node indices are the lattice's.
#[derive(Clone, Debug, PartialEq)]
pub struct Hasse {
    names: Vec<String>,
    covers: Vec<(usize, usize)>,
    layer: Vec<usize>,
    /// Nodes of each layer, in drawing order (top to bottom).
    layers: Vec<Vec<usize>>,
}

/// The nodes and edges to mark: the paths from two nodes up to their join.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Highlight {
    /// The two nodes.
    pub from: [usize; 2],
    /// Their join.
    pub join: usize,
    /// Per node: on a path from one of them to the join.
    pub on_path: Vec<bool>,
}

impl Highlight {
    /// The paths from `a` and `b` (node indices) to their join: every node `x` with
    /// `a ≤ x ≤ a ∨ b` or `b ≤ x ≤ a ∨ b`. Refuses (exit 1) when there is no unique join.
    ///
    /// # Errors
    ///
    /// `NoJoin` when the two nodes have no common upper bound or no least one.
    pub fn join<N: Eq + Hash + std::fmt::Display>(
        l: &Lattice<N>,
        a: usize,
        b: usize,
    ) -> Result<Highlight, Error> {
        let join = match l.join_index(a, b) {
            Lub::Node(j) => j,
            Lub::Undefined => {
                return Err(Reason::NoJoin {
                    message: format!("{} and {} have no common upper bound", l.node(a), l.node(b)),
                }
                .into());
            }
            Lub::Ambiguous(v) => {
                let names: Vec<String> = v.iter().map(|&i| l.node(i).to_string()).collect();
                return Err(Reason::NoJoin {
                    message: format!(
                        "{} and {} have no least upper bound: {} are all minimal",
                        l.node(a),
                        l.node(b),
                        names.join(", ")
                    ),
                }
                .into());
            }
        };
        let on_path = (0..l.len())
            .map(|x| (l.leq(a, x) || l.leq(b, x)) && l.leq(x, join))
            .collect();
        Ok(Highlight {
            from: [a, b],
            join,
            on_path,
        })
    }

    fn edge(&self, (u, v): (usize, usize)) -> bool {
        self.on_path[u] && self.on_path[v]
    }
}

const RED: &str = "#d62728";

/// Diagrams with more cover edges than this are drawn without reducing edge crossings.
pub const MAX_LAYOUT_EDGES: usize = 2000;

/// Fill colour by what a node means: bool, unsigned, signed, float, complex, Python scalar
/// type (weak), abstract.
fn fill(name: &str) -> &'static str {
    match meaning(name.strip_prefix('~').unwrap_or(name)) {
        Some(Meaning::Python(_)) => "#ffffff",
        Some(Meaning::DType(d)) => match d.kind() {
            Kind::Bool => "#e0e0e0",
            Kind::UnsignedInt => "#fde2c4",
            Kind::SignedInt => "#cfe3f7",
            Kind::Float => "#d3f0d0",
            Kind::Complex => "#e6dbf5",
            Kind::Extended | Kind::Void => "#f2f2f2",
        },
        None if name.starts_with('~') => "#ffffff",
        None => "#f2f2f2",
    }
}

fn weak(name: &str) -> bool {
    name.starts_with('~') || matches!(meaning(name), Some(Meaning::Python(_)))
}

/// Escapes text for XML (`&`, `<`, `>`, `"`).
fn escape_xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl Hasse {
    /// The Hasse diagram of a lattice (or partial order), with `label` naming each node.
    pub fn new<N: Eq + Hash>(l: &Lattice<N>, label: impl Fn(&N) -> String) -> Hasse {
        let n = l.len();
        let names: Vec<String> = l.nodes().iter().map(label).collect();
        let mut covers = Vec::new();
        for i in 0..n {
            for c in l.covers(i) {
                covers.push((i, c));
            }
        }
        // Longest path from a minimal node; node indices are topological.
        let mut layer = vec![0usize; n];
        for &(u, v) in &covers {
            // covers are pushed in ascending u, and u < v, so layer[u] is final here.
            layer[v] = layer[v].max(layer[u] + 1);
        }
        let depth = layer.iter().copied().max().map_or(0, |m| m + 1);
        let mut layers: Vec<Vec<usize>> = vec![Vec::new(); depth];
        for i in 0..n {
            layers[layer[i]].push(i);
        }
        let mut h = Hasse {
            names,
            covers,
            layer,
            layers,
        };
        h.reduce_crossings();
        h
    }

    /// Node labels, by lattice index.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The cover edges `(lower, upper)`.
    pub fn covers(&self) -> &[(usize, usize)] {
        &self.covers
    }

    /// The number of layers (the longest chain's length).
    pub fn depth(&self) -> usize {
        self.layers.len()
    }

    /// Each node's layer (0: minimal nodes, drawn leftmost).
    pub fn layer(&self, i: usize) -> usize {
        self.layer[i]
    }

    /// Barycentre sweeps: each node moves to the mean relative position of its neighbours.
    /// Skipped above [`MAX_LAYOUT_EDGES`] cover edges (counting crossings is quadratic in
    /// them): such diagrams keep the topological order.
    fn reduce_crossings(&mut self) {
        if self.covers.len() > MAX_LAYOUT_EDGES {
            return;
        }
        let n = self.names.len();
        let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(u, v) in &self.covers {
            neighbours[u].push(v);
            neighbours[v].push(u);
        }
        let mut best = self.layers.clone();
        let mut best_crossings = self.crossings();
        for sweep in 0..12 {
            let mut rel = vec![0f64; n];
            for l in &self.layers {
                for (p, &i) in l.iter().enumerate() {
                    rel[i] = (p as f64 + 0.5) / l.len() as f64;
                }
            }
            let order: Vec<usize> = if sweep % 2 == 0 {
                (0..self.layers.len()).collect()
            } else {
                (0..self.layers.len()).rev().collect()
            };
            for k in order {
                let down = sweep % 2 == 0;
                let mut keyed: Vec<(f64, usize)> = self.layers[k]
                    .iter()
                    .map(|&i| {
                        let side: Vec<f64> = neighbours[i]
                            .iter()
                            .filter(|&&j| (self.layer[j] < k) == down)
                            .map(|&j| rel[j])
                            .collect();
                        let key = if side.is_empty() {
                            rel[i]
                        } else {
                            side.iter().sum::<f64>() / side.len() as f64
                        };
                        (key, i)
                    })
                    .collect();
                keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                self.layers[k] = keyed.into_iter().map(|(_, i)| i).collect();
                let len = self.layers[k].len();
                for (p, &i) in self.layers[k].iter().enumerate() {
                    rel[i] = (p as f64 + 0.5) / len as f64;
                }
            }
            let c = self.crossings();
            if c < best_crossings {
                best_crossings = c;
                best = self.layers.clone();
            }
        }
        self.layers = best;
    }

    /// Crossings of straight edges between the node positions (for choosing layouts).
    fn crossings(&self) -> usize {
        let pos = self.positions();
        let seg: Vec<((f64, f64), (f64, f64))> =
            self.covers.iter().map(|&(u, v)| (pos[u], pos[v])).collect();
        let mut count = 0;
        for i in 0..seg.len() {
            for j in i + 1..seg.len() {
                if intersect(seg[i], seg[j]) {
                    count += 1;
                }
            }
        }
        count
    }

    /// Relative coordinates: x the layer, y the centred position in it.
    fn positions(&self) -> Vec<(f64, f64)> {
        let mut pos = vec![(0.0, 0.0); self.names.len()];
        for (k, l) in self.layers.iter().enumerate() {
            for (p, &i) in l.iter().enumerate() {
                pos[i] = (k as f64, p as f64 - (l.len() as f64 - 1.0) / 2.0);
            }
        }
        pos
    }

    /// Graphviz DOT.
    pub fn to_dot(&self, hl: Option<&Highlight>, title: &str) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let mut out = String::new();
        let _ = writeln!(out, "digraph {} {{", q(title));
        let _ = writeln!(out, "  rankdir=LR;");
        let _ = writeln!(
            out,
            "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];"
        );
        for (i, name) in self.names.iter().enumerate() {
            let mut attrs = vec![format!("fillcolor=\"{}\"", fill(name))];
            if weak(name) {
                attrs.push("style=\"rounded,filled,dashed\"".into());
            }
            if let Some(h) = hl {
                if h.on_path[i] {
                    attrs.push(format!("color=\"{RED}\", penwidth=2"));
                }
                if h.join == i {
                    attrs.push("fillcolor=\"#ffd966\"".into());
                }
            }
            let _ = writeln!(out, "  {} [{}];", q(name), attrs.join(", "));
        }
        for &(u, v) in &self.covers {
            let style = match hl {
                Some(h) if h.edge((u, v)) => format!(" [color=\"{RED}\", penwidth=2.5]"),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "  {} -> {}{};",
                q(&self.names[u]),
                q(&self.names[v]),
                style
            );
        }
        out.push_str("}\n");
        out
    }

    /// Mermaid (`graph LR`).
    pub fn to_mermaid(&self, hl: Option<&Highlight>) -> String {
        let label = |s: &str| s.replace('"', "#quot;");
        let mut out = String::from("graph LR\n");
        for (i, name) in self.names.iter().enumerate() {
            let _ = writeln!(out, "  n{i}[\"{}\"]", label(name));
        }
        for &(u, v) in &self.covers {
            let _ = writeln!(out, "  n{u} --> n{v}");
        }
        for (i, name) in self.names.iter().enumerate() {
            let mut style = format!("fill:{}", fill(name));
            if weak(name) {
                style.push_str(",stroke-dasharray:4 3");
            }
            if let Some(h) = hl {
                if h.on_path[i] {
                    style.push_str(&format!(",stroke:{RED},stroke-width:2px"));
                }
                if h.join == i {
                    style = style.replacen(fill(name), "#ffd966", 1);
                }
            }
            let _ = writeln!(out, "  style n{i} {style}");
        }
        if let Some(h) = hl {
            for (k, &e) in self.covers.iter().enumerate() {
                if h.edge(e) {
                    let _ = writeln!(out, "  linkStyle {k} stroke:{RED},stroke-width:3px");
                }
            }
        }
        out
    }

    /// A standalone SVG document. `id` makes the markers' ids unique when several drawings
    /// share a page.
    pub fn to_svg(&self, hl: Option<&Highlight>, id: &str) -> String {
        let id: String = id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let char_w = 7.6;
        let box_h = 26.0;
        let widths: Vec<f64> = self
            .names
            .iter()
            .map(|s| s.chars().count() as f64 * char_w + 18.0)
            .collect();
        let col_w = widths.iter().copied().fold(40.0, f64::max) + 46.0;
        let row_h = 44.0;
        let rows = self.layers.iter().map(Vec::len).max().unwrap_or(1) as f64;
        let margin = 14.0;
        let width = self.layers.len().max(1) as f64 * col_w - 46.0 + 2.0 * margin;
        let height = rows * row_h - (row_h - box_h) + 2.0 * margin;
        let pos: Vec<(f64, f64)> = self
            .positions()
            .into_iter()
            .map(|(x, y)| {
                (
                    margin + x * col_w + (col_w - 46.0) / 2.0,
                    height / 2.0 + y * row_h,
                )
            })
            .collect();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"13\">"
        );
        let _ = writeln!(out, "<defs>");
        for (suffix, colour) in [("", "#555555"), ("-hl", RED)] {
            let _ = writeln!(
                out,
                "<marker id=\"{id}-arrow{suffix}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"9\" markerHeight=\"9\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{colour}\"/></marker>"
            );
        }
        let _ = writeln!(out, "</defs>");
        let _ = writeln!(
            out,
            "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>"
        );
        // Edges first (under the nodes); highlighted ones last, on top.
        let mut edges: Vec<(usize, usize)> = self.covers.clone();
        edges.sort_by_key(|&e| hl.is_some_and(|h| h.edge(e)));
        for (u, v) in edges {
            let (x1, y1) = (pos[u].0 + widths[u] / 2.0, pos[u].1);
            let (x2, y2) = (pos[v].0 - widths[v] / 2.0, pos[v].1);
            let dx = (x2 - x1) / 2.0;
            let marked = hl.is_some_and(|h| h.edge((u, v)));
            let (colour, w, marker) = if marked {
                (RED, 2.5, format!("{id}-arrow-hl"))
            } else {
                ("#555555", 1.2, format!("{id}-arrow"))
            };
            let _ = writeln!(
                out,
                "<path d=\"M{x1:.1},{y1:.1} C{:.1},{y1:.1} {:.1},{y2:.1} {x2:.1},{y2:.1}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"{w}\" marker-end=\"url(#{marker})\"/>",
                x1 + dx,
                x2 - dx
            );
        }
        for (i, name) in self.names.iter().enumerate() {
            let (x, y) = pos[i];
            let w = widths[i];
            let on = hl.is_some_and(|h| h.on_path[i]);
            let is_join = hl.is_some_and(|h| h.join == i);
            let fill = if is_join { "#ffd966" } else { fill(name) };
            let (stroke, sw) = if on { (RED, 2.2) } else { ("#666666", 1.0) };
            let dash = if weak(name) {
                " stroke-dasharray=\"4 3\""
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "<g><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{box_h}\" rx=\"7\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{sw}\"{dash}/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text></g>",
                escape_xml(name),
                x - w / 2.0,
                y - box_h / 2.0,
                y + 4.5,
                escape_xml(name)
            );
        }
        out.push_str("</svg>\n");
        out
    }
}

/// Whether two segments properly cross (shared endpoints do not count).
fn intersect(a: ((f64, f64), (f64, f64)), b: ((f64, f64), (f64, f64))) -> bool {
    let orient = |p: (f64, f64), q: (f64, f64), r: (f64, f64)| {
        let v = (q.0 - p.0) * (r.1 - p.1) - (q.1 - p.1) * (r.0 - p.0);
        if v.abs() < 1e-9 {
            0
        } else if v > 0.0 {
            1
        } else {
            -1
        }
    };
    let same = |p: (f64, f64), q: (f64, f64)| (p.0 - q.0).abs() < 1e-9 && (p.1 - q.1).abs() < 1e-9;
    if same(a.0, b.0) || same(a.0, b.1) || same(a.1, b.0) || same(a.1, b.1) {
        return false;
    }
    let (o1, o2) = (orient(a.0, a.1, b.0), orient(a.0, a.1, b.1));
    let (o3, o4) = (orient(b.0, b.1, a.0), orient(b.0, b.1, a.1));
    o1 * o2 < 0 && o3 * o4 < 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolkit::check::lattice_of;

    fn jax_doc() -> Lattice<String> {
        let e = |a: &str, b: &[&str]| (a.to_string(), b.iter().map(|s| s.to_string()).collect());
        lattice_of(&[
            e("bool", &["int"]),
            e("uint8", &["uint16", "int16"]),
            e("uint16", &["int32", "uint32"]),
            e("uint32", &["uint64", "int64"]),
            e("uint64", &["float"]),
            e("int", &["uint8", "int8"]),
            e("int8", &["int16"]),
            e("int16", &["int32"]),
            e("int32", &["int64"]),
            e("int64", &["float"]),
            e("float", &["complex", "float16", "bfloat16"]),
            e("bfloat16", &["float32"]),
            e("float16", &["float32"]),
            e("float32", &["complex64", "float64"]),
            e("float64", &["complex128"]),
            e("complex", &["complex64"]),
            e("complex64", &["complex128"]),
        ])
        .unwrap()
    }

    #[test]
    fn layers_follow_longest_paths_and_edges_go_right() {
        let l = jax_doc();
        let h = Hasse::new(&l, |n| n.clone());
        let at = |s: &str| h.layer(l.index_of(&s.to_string()).unwrap());
        assert_eq!(
            (at("bool"), at("int"), at("uint8"), at("int8")),
            (0, 1, 2, 2)
        );
        assert_eq!(at("complex128"), h.layers.len() - 1);
        for &(u, v) in h.covers() {
            assert!(h.layer(u) < h.layer(v));
        }
        assert_eq!(h.covers().len(), 24); // every given edge is a cover
    }

    #[test]
    fn highlight_marks_both_paths_to_the_join() {
        let l = jax_doc();
        let i = |s: &str| l.index_of(&s.to_string()).unwrap();
        let hl = Highlight::join(&l, i("int8"), i("uint8")).unwrap();
        assert_eq!(hl.join, i("int16"));
        let on: Vec<&str> = (0..l.len())
            .filter(|&x| hl.on_path[x])
            .map(|x| l.node(x).as_str())
            .collect();
        assert_eq!(on.len(), 3, "{on:?}");
        let err = Highlight::join(
            &lattice_of(&[("A".into(), vec!["B".into(), "C".into()])]).unwrap(),
            1,
            2,
        )
        .unwrap_err();
        assert!(err.is_refusal() && err.message().contains("no common upper bound"));
    }

    #[test]
    fn the_layout_of_jaxs_lattice_has_few_crossings() {
        let h = Hasse::new(&jax_doc(), |n| n.clone());
        assert!(h.crossings() <= 4, "{} crossings", h.crossings());
    }
}
