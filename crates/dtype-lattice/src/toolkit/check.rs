//! Checking promotion lattices and promotion tables given as data: the `check` command.
//!
//! A definition is a lattice (`{"edges": {"node": ["nodes directly above", ...]}}`) or a
//! promotion table (`{"table": {"a": {"b": "result", ...}}}`), in JSON or in TOML (an
//! `[edges]` or `[table]` table of the same form). Node names are free strings; the ones
//! that name a dtype (`int8`, `bfloat16`) or a Python scalar type (`int`, `float`,
//! `complex`) have a numeric meaning that [`crate::toolkit::audit`] uses, the others are abstract, like
//! the design note's `A`, `B`, `C`, `D`.
//!
//! [`check_lattice`] reports whether the graph is acyclic, the pairs with no common upper
//! bound, the pairs with several minimal ones, and whether it is a (partial) lattice.
//! [`check_table`] decides whether a table is commutative, associative and the join of a
//! lattice, with the smallest counterexamples, and recovers the lattice when there is one.
//!
//! ```
//! use dtype_lattice::toolkit::check::{check, DefinitionFile, Report};
//! let file: DefinitionFile = r#"{"edges": {"A": ["C", "D"], "B": ["C", "D"]}}"#.parse().unwrap();
//! let Report::Lattice(r) = check(&file.definition).unwrap() else { unreachable!() };
//! assert!(!r.is_partial_lattice && !r.is_lattice);
//! assert_eq!(r.undefined_pairs, vec![["C".to_string(), "D".to_string()]]);
//! assert_eq!(r.ambiguous_pairs[0].minimal_upper_bounds, ["C", "D"]);
//! ```

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::dtype::DType;
use crate::error::{Error, Reason};
use crate::lattice::{Lattice, Lub, MAX_NODES};
use crate::operand::PyType;

/// The largest definition file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// The most types a promotion table may have (checking associativity is cubic in them).
pub const MAX_TABLE_TYPES: usize = 512;

/// Lattice edges: each node with the nodes directly above it, in the file's order.
pub type Edges = Vec<(String, Vec<String>)>;

/// A promotion table: each row with its cells (`None`: no result), in the file's order.
pub type TableRows = Vec<(String, Vec<(String, Option<String>)>)>;

/// What a definition file defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Definition {
    /// A lattice as "node → nodes directly above".
    Lattice(Edges),
    /// A binary promotion table.
    Table(TableRows),
}

/// A parsed definition file: the definition, with the optional `name` and `description`.
///
/// JSON when the text starts with `{`, TOML otherwise.
///
/// ```
/// use dtype_lattice::toolkit::check::{Definition, DefinitionFile};
/// let toml = "name = \"python\"\n[edges]\nint = [\"float\"]\nfloat = [\"complex\"]\n";
/// let file: DefinitionFile = toml.parse().unwrap();
/// assert_eq!(file.name.as_deref(), Some("python"));
/// assert!(matches!(&file.definition, Definition::Lattice(e) if e.len() == 2));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefinitionFile {
    /// A short name (`name`), if given.
    pub name: Option<String>,
    /// A description (`description`), if given.
    pub description: Option<String>,
    /// The lattice or table.
    pub definition: Definition,
}

/// A map read in document order, refusing duplicate keys (serde's maps would sort or merge).
struct OrderedMap<V>(Vec<(String, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V2<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for V2<V> {
            type Value = OrderedMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, V)> = Vec::new();
                let mut seen = std::collections::HashSet::new();
                while let Some((k, v)) = m.next_entry::<String, V>()? {
                    if !seen.insert(k.clone()) {
                        return Err(de::Error::custom(format!("duplicate key {k:?}")));
                    }
                    out.push((k, v));
                }
                Ok(OrderedMap(out))
            }
        }
        d.deserialize_map(V2(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRepr {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    edges: Option<OrderedMap<Vec<String>>>,
    #[serde(default)]
    table: Option<OrderedMap<OrderedMap<Option<String>>>>,
}

fn invalid(reason: impl Into<String>) -> Error {
    Reason::InvalidDefinition {
        reason: reason.into(),
    }
    .into()
}

impl FromStr for DefinitionFile {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let repr: FileRepr = if text.trim_start().starts_with('{') {
            serde_json::from_str(text).map_err(|e| invalid(format!("not valid JSON: {e}")))?
        } else {
            toml::from_str(text).map_err(|e| {
                invalid(format!(
                    "not valid TOML (nor JSON, which starts with '{{'): {}",
                    e.to_string().trim_end()
                ))
            })?
        };
        let definition = match (repr.edges, repr.table) {
            (Some(_), Some(_)) => {
                return Err(invalid("give either \"edges\" or \"table\", not both"));
            }
            (None, None) => {
                return Err(invalid(
                    "no \"edges\" (a lattice: {\"edges\": {\"node\": [\"nodes above\"]}}) or \"table\" (a promotion table: {\"table\": {\"a\": {\"b\": \"result\"}}})",
                ));
            }
            (Some(edges), None) => Definition::Lattice(edges.0),
            (None, Some(table)) => {
                Definition::Table(table.0.into_iter().map(|(k, v)| (k, v.0)).collect())
            }
        };
        let names: Vec<&String> = match &definition {
            Definition::Lattice(e) => e
                .iter()
                .flat_map(|(a, b)| std::iter::once(a).chain(b))
                .collect(),
            Definition::Table(t) => t
                .iter()
                .flat_map(|(a, row)| {
                    std::iter::once(a)
                        .chain(row.iter().flat_map(|(b, r)| std::iter::once(b).chain(r)))
                })
                .collect(),
        };
        if let Some(bad) = names.iter().find(|n| n.trim().is_empty() || n.len() > 256) {
            return Err(invalid(format!(
                "node name {bad:?}: names must be non-blank and at most 256 bytes"
            )));
        }
        Ok(DefinitionFile {
            name: repr.name,
            description: repr.description,
            definition,
        })
    }
}

impl DefinitionFile {
    /// Parses bytes, refusing invalid UTF-8.
    ///
    /// # Errors
    ///
    /// `InvalidDefinition` for input that is not UTF-8, not JSON or TOML, not of the documented
    /// form (edges or a table), has duplicate keys or blank names, or exceeds the documented
    /// size limits.
    ///
    /// ```
    /// use dtype_lattice::toolkit::check::DefinitionFile;
    /// let err = DefinitionFile::from_bytes(b"{\"edges\": {\"\xff\": []}}").unwrap_err();
    /// assert_eq!(err.kind(), dtype_lattice::error::ErrorKind::InvalidDefinition);
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let text =
            std::str::from_utf8(bytes).map_err(|e| invalid(format!("invalid UTF-8 ({e})")))?;
        text.parse()
    }

    /// Reads and parses a file of at most [`MAX_FILE_BYTES`].
    ///
    /// # Errors
    ///
    /// `InvalidDefinition` when the file cannot be read or is larger than the limit, and
    /// everything [`DefinitionFile::from_bytes`] refuses.
    ///
    /// ```
    /// use dtype_lattice::toolkit::check::DefinitionFile;
    /// let err = DefinitionFile::read(std::path::Path::new("/no/such/file.json")).unwrap_err();
    /// assert!(err.to_string().contains("cannot read"));
    /// ```
    pub fn read(path: &Path) -> Result<Self, Error> {
        use std::io::Read;
        let label = path.display();
        let file =
            std::fs::File::open(path).map_err(|e| invalid(format!("cannot read {label}: {e}")))?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| invalid(format!("cannot read {label}: {e}")))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(invalid(format!(
                "{label} is larger than {} MiB",
                MAX_FILE_BYTES >> 20
            )));
        }
        Self::from_bytes(&bytes)
    }
}

/// The numeric meaning of a node name: a dtype by its canonical name (`int8`, `bfloat16`),
/// a Python scalar type (`int`, `float`, `complex`), or `None` for an abstract node.
///
/// ```
/// use dtype_lattice::toolkit::check::{meaning, Meaning};
/// use dtype_lattice::{DType, PyType};
/// assert_eq!(meaning("int8"), Some(Meaning::DType(DType::Int8)));
/// assert_eq!(meaning("float"), Some(Meaning::Python(PyType::Float)));
/// assert_eq!(meaning("A"), None);
/// assert_eq!(meaning("i8"), None); // codes are ambiguous (NumPy's u8 is uint64): names only
/// ```
pub fn meaning(name: &str) -> Option<Meaning> {
    if let Some(t) = PyType::ALL.iter().find(|t| t.name() == name) {
        return Some(Meaning::Python(*t));
    }
    DType::NUMERIC
        .iter()
        .find(|d| d.name() == name)
        .map(|&d| Meaning::DType(d))
}

/// What a node name means numerically; see [`meaning`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Meaning {
    /// A dtype.
    DType(DType),
    /// A Python scalar type (a weak type).
    Python(PyType),
}

/// The most items any list of a report holds (pairs, edges, bounds, triples): the first ones
/// in file order; the exact total is always counted beside it. Keeps every answer small
/// however large the input.
pub const MAX_LISTED: usize = 100;

/// A pair of nodes with several minimal common upper bounds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AmbiguousPair {
    /// The two nodes.
    pub pair: [String; 2],
    /// Their minimal common upper bounds (at least two; the first [`MAX_LISTED`] in file
    /// order).
    pub minimal_upper_bounds: Vec<String>,
    /// How many minimal common upper bounds there are.
    pub minimal_upper_bound_count: usize,
}

/// The verdict on a lattice definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LatticeReport {
    /// Number of nodes.
    pub nodes: usize,
    /// Whether the graph has no cycle.
    pub acyclic: bool,
    /// One cycle, as its nodes in order, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle: Option<Vec<String>>,
    /// Pairs with no common upper bound (the first [`MAX_LISTED`] in file order).
    pub undefined_pairs: Vec<[String; 2]>,
    /// How many pairs have no common upper bound.
    pub undefined_pair_count: usize,
    /// Pairs with several minimal common upper bounds (the first [`MAX_LISTED`] in file
    /// order).
    pub ambiguous_pairs: Vec<AmbiguousPair>,
    /// How many pairs have several minimal common upper bounds.
    pub ambiguous_pair_count: usize,
    /// Acyclic and no pair ambiguous.
    pub is_partial_lattice: bool,
    /// Also no pair undefined: every pair has a unique join.
    pub is_lattice: bool,
    /// Edges implied by the others (`a → c` when `a → b → c` is given too): harmless, but
    /// not part of the Hasse diagram. The first [`MAX_LISTED`] in file order.
    pub redundant_edges: Vec<[String; 2]>,
    /// How many edges are redundant.
    pub redundant_edge_count: usize,
    /// Nodes without a numeric meaning (see [`meaning`]).
    pub abstract_nodes: Vec<String>,
}

/// Node names in first-appearance order, and each name's position.
///
/// ```
/// use dtype_lattice::toolkit::check::file_order;
/// let e = vec![("b".to_string(), vec!["c".to_string()]), ("a".to_string(), vec!["b".to_string()])];
/// assert_eq!(file_order(&e).0, ["b", "c", "a"]);
/// ```
pub fn file_order(edges: &Edges) -> (Vec<String>, HashMap<&str, usize>) {
    let mut names = Vec::new();
    let mut pos: HashMap<&str, usize> = HashMap::new();
    for (from, tos) in edges {
        for n in std::iter::once(from).chain(tos) {
            if !pos.contains_key(n.as_str()) {
                pos.insert(n, names.len());
                names.push(n.clone());
            }
        }
    }
    (names, pos)
}

/// Builds the engine's lattice over node names.
///
/// # Errors
///
/// `Cycle` when the edges have a cycle; `LatticeTooLarge` above the node limit.
///
/// ```
/// use dtype_lattice::toolkit::check::lattice_of;
/// let l = lattice_of(&[("int".into(), vec!["float".into()])]).unwrap();
/// assert!(l.is_lattice());
/// ```
pub fn lattice_of(edges: &[(String, Vec<String>)]) -> Result<Lattice<String>, Error> {
    Lattice::from_edges(edges.iter().map(|(a, b)| (a.clone(), b.iter().cloned())))
}

/// Checks a lattice definition. Fails only when it has more than [`MAX_NODES`] nodes; a
/// cycle is a verdict (`acyclic: false`), not an error.
///
/// # Errors
///
/// `LatticeTooLarge` above the node limit (a cycle is a finding of the report, not an error).
///
/// ```
/// use dtype_lattice::toolkit::check::check_lattice;
/// let edges = vec![("a".to_string(), vec!["b".to_string()]), ("b".to_string(), vec!["a".to_string()])];
/// let r = check_lattice(&edges).unwrap();
/// assert!(!r.acyclic && !r.is_lattice);
/// assert_eq!(r.cycle.unwrap(), ["a", "b"]);
/// ```
pub fn check_lattice(edges: &Edges) -> Result<LatticeReport, Error> {
    let (names, pos) = file_order(edges);
    if names.len() > MAX_NODES {
        return Err(Reason::LatticeTooLarge {
            nodes: names.len(),
            limit: MAX_NODES,
        }
        .into());
    }
    let abstract_nodes = names
        .iter()
        .filter(|n| meaning(n).is_none())
        .cloned()
        .collect();
    let l = match lattice_of(edges) {
        Ok(l) => l,
        Err(e) => match e.reason() {
            Reason::Cycle { cycle } => {
                let mut cycle = cycle.clone();
                cycle.pop();
                return Ok(LatticeReport {
                    nodes: names.len(),
                    acyclic: false,
                    cycle: Some(cycle),
                    undefined_pairs: Vec::new(),
                    undefined_pair_count: 0,
                    ambiguous_pairs: Vec::new(),
                    ambiguous_pair_count: 0,
                    is_partial_lattice: false,
                    is_lattice: false,
                    redundant_edges: Vec::new(),
                    redundant_edge_count: 0,
                    abstract_nodes,
                });
            }
            _ => return Err(e),
        },
    };
    // Engine index → file position; engine index by file position.
    let at: Vec<usize> = l.nodes().iter().map(|n| pos[n.as_str()]).collect();
    let engine: Vec<usize> = names
        .iter()
        .map(|n| l.index_of(n).expect("a node"))
        .collect();
    let name = |i: usize| l.node(i).clone();
    // Pairs in file order, counted exactly, the first MAX_LISTED of each kind kept.
    let (mut undefined, mut undefined_count) = (Vec::new(), 0usize);
    let (mut ambiguous, mut ambiguous_count) = (Vec::new(), 0usize);
    for (p, &a) in engine.iter().enumerate() {
        for &b in &engine[p + 1..] {
            if l.is_undefined_pair(a, b) {
                undefined_count += 1;
                if undefined.len() < MAX_LISTED {
                    undefined.push([name(a), name(b)]);
                }
            } else if l.is_ambiguous_pair(a, b) {
                ambiguous_count += 1;
                if ambiguous.len() < MAX_LISTED {
                    ambiguous.push((a, b));
                }
            }
        }
    }
    let ambiguous_pairs = ambiguous
        .into_iter()
        .map(|(a, b)| {
            let mut bounds = match l.lub_index(&[a, b]) {
                Lub::Ambiguous(v) => v,
                other => unreachable!("an ambiguous pair has several bounds, not {other:?}"),
            };
            bounds.sort_by_key(|&c| at[c]);
            let count = bounds.len();
            AmbiguousPair {
                pair: [name(a), name(b)],
                minimal_upper_bounds: bounds.into_iter().take(MAX_LISTED).map(name).collect(),
                minimal_upper_bound_count: count,
            }
        })
        .collect();
    let mut redundant = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (from, tos) in edges {
        let f = l.index_of(from).expect("a node");
        let covers: std::collections::HashSet<usize> = l.covers(f).into_iter().collect();
        for to in tos {
            let t = l.index_of(to).expect("a node");
            if !covers.contains(&t) && seen.insert((f, t)) && redundant.len() < MAX_LISTED {
                redundant.push([from.clone(), to.clone()]);
            }
        }
    }
    Ok(LatticeReport {
        nodes: names.len(),
        acyclic: true,
        cycle: None,
        undefined_pairs: undefined,
        undefined_pair_count: undefined_count,
        ambiguous_pairs,
        ambiguous_pair_count: ambiguous_count,
        is_partial_lattice: l.is_partial_lattice(),
        is_lattice: l.is_lattice(),
        redundant_edges: redundant,
        redundant_edge_count: seen.len(),
        abstract_nodes,
    })
}

/// A binary operation over named elements, given as its table: the common form of a table
/// file, a lattice's join and a rule set's promotion, which [`check_table`] and
/// [`crate::toolkit::audit`] analyse.
///
/// The first `rows` names are the operands; further names appear only as results.
///
/// ```
/// use dtype_lattice::toolkit::check::OpTable;
/// // max on {0, 1, 2}: a chain.
/// let t = OpTable::from_fn(vec!["0".into(), "1".into(), "2".into()], 3, |a, b| Some(a.max(b)));
/// assert!(t.non_commutative().is_empty());
/// assert!(t.first_non_associative().is_none());
/// assert_eq!(t.as_lattice().unwrap(), [("0".to_string(), vec!["1".to_string()]), ("1".to_string(), vec!["2".to_string()])]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpTable {
    names: Vec<String>,
    rows: usize,
    cells: Vec<u32>,
}

const NONE: u32 = u32::MAX;

/// A triple `(a, b, c)` where `(a ∘ b) ∘ c` and `a ∘ (b ∘ c)` differ (`None`: no result).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Triple {
    /// The three operands, by index.
    pub types: [usize; 3],
    /// `(a ∘ b) ∘ c`.
    pub left: Option<usize>,
    /// `a ∘ (b ∘ c)`.
    pub right: Option<usize>,
}

impl OpTable {
    /// Builds a table from `f(a, b)` over the first `rows` names (indices into `names`).
    pub fn from_fn(
        names: Vec<String>,
        rows: usize,
        f: impl Fn(usize, usize) -> Option<usize>,
    ) -> Self {
        assert!(rows <= names.len() && names.len() < NONE as usize);
        let mut cells = Vec::with_capacity(rows * rows);
        for a in 0..rows {
            for b in 0..rows {
                cells.push(f(a, b).map_or(NONE, |r| {
                    assert!(r < names.len(), "result index out of range");
                    r as u32
                }));
            }
        }
        OpTable { names, rows, cells }
    }

    /// The join of a lattice (undefined and ambiguous joins have no result).
    ///
    /// ```
    /// use dtype_lattice::toolkit::check::{lattice_of, OpTable};
    /// let l = lattice_of(&[("A".into(), vec!["C".into(), "D".into()]), ("B".into(), vec!["C".into(), "D".into()])]).unwrap();
    /// let t = OpTable::from_lattice(&l);
    /// assert_eq!(t.get(0, 1), None); // A ∨ B is ambiguous
    /// ```
    pub fn from_lattice<N: Clone + Eq + std::hash::Hash + fmt::Display>(l: &Lattice<N>) -> Self {
        let names = l.nodes().iter().map(|n| n.to_string()).collect();
        Self::from_fn(names, l.len(), |a, b| l.join_node(a, b))
    }

    /// All names: the operands, then any names that are only results.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The number of operands.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// `a ∘ b`, or `None` when there is no result (or `a`, `b` are not operands).
    #[inline]
    pub fn get(&self, a: usize, b: usize) -> Option<usize> {
        if a >= self.rows || b >= self.rows {
            return None;
        }
        match self.cells[a * self.rows + b] {
            NONE => None,
            c => Some(c as usize),
        }
    }

    /// The table on `keep` and every operand their results lead to (the smallest set
    /// containing `keep` closed under the operation), in that order; results that are not
    /// operands stay results only.
    ///
    /// ```
    /// use dtype_lattice::toolkit::check::OpTable;
    /// let t = OpTable::from_fn(vec!["0".into(), "1".into(), "2".into()], 3, |a, b| Some(a.max(b)));
    /// let r = t.restrict(&[2, 0]);
    /// assert_eq!(r.names(), ["2", "0"]);
    /// assert_eq!(r.get(1, 0), Some(0)); // 0 ∘ 2 = 2
    /// ```
    #[must_use]
    pub fn restrict(&self, keep: &[usize]) -> OpTable {
        let mut set: Vec<usize> = Vec::new();
        let mut member = vec![false; self.rows];
        for &k in keep {
            if k < self.rows && !member[k] {
                member[k] = true;
                set.push(k);
            }
        }
        let mut done = 0;
        while done < set.len() {
            let n = set.len();
            for i in 0..n {
                for j in 0..n {
                    if i < done && j < done {
                        continue;
                    }
                    if let Some(r) = self.get(set[i], set[j])
                        && r < self.rows
                        && !member[r]
                    {
                        member[r] = true;
                        set.push(r);
                    }
                }
            }
            done = n;
        }
        let rows = set.len();
        let mut names: Vec<String> = set.iter().map(|&i| self.names[i].clone()).collect();
        // Old index → new index (NONE: not yet named).
        let mut position = vec![NONE; self.names.len()];
        for (p, &i) in set.iter().enumerate() {
            position[i] = p as u32;
        }
        let mut cells = Vec::with_capacity(rows * rows);
        for &a in &set {
            for &b in &set {
                cells.push(self.get(a, b).map_or(NONE, |r| {
                    if position[r] == NONE {
                        position[r] = names.len() as u32;
                        names.push(self.names[r].clone());
                    }
                    position[r]
                }));
            }
        }
        OpTable { names, rows, cells }
    }

    /// Operand pairs `(a, b)` without a result, `a <= b`, in order.
    pub fn missing(&self) -> Vec<(usize, usize)> {
        self.pairs()
            .filter(|&(a, b)| self.get(a, b).is_none() || self.get(b, a).is_none())
            .collect()
    }

    /// Cells `(a, b)` whose result is not an operand (the table is not closed there).
    pub fn not_closed(&self) -> Vec<(usize, usize)> {
        (0..self.rows)
            .flat_map(|a| (0..self.rows).map(move |b| (a, b)))
            .filter(|&(a, b)| self.get(a, b).is_some_and(|r| r >= self.rows))
            .collect()
    }

    /// Operands with `a ∘ a != a`.
    pub fn non_idempotent(&self) -> Vec<usize> {
        (0..self.rows)
            .filter(|&a| self.get(a, a) != Some(a))
            .collect()
    }

    /// Pairs `a < b` with `a ∘ b != b ∘ a`.
    pub fn non_commutative(&self) -> Vec<(usize, usize)> {
        self.pairs()
            .filter(|&(a, b)| a < b && self.get(a, b) != self.get(b, a))
            .collect()
    }

    fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.rows).flat_map(move |a| (a..self.rows).map(move |b| (a, b)))
    }

    /// Both bracketings of `a ∘ b ∘ c`; `None` when an intermediate result is not an
    /// operand, so the table cannot tell.
    #[inline]
    fn brackets(&self, a: usize, b: usize, c: usize) -> Option<(Option<usize>, Option<usize>)> {
        let step = |x: Option<usize>, y: usize, x_left: bool| -> Option<Option<usize>> {
            match x {
                None => Some(None),
                Some(x) if x >= self.rows => None,
                Some(x) if x_left => Some(self.get(x, y)),
                Some(x) => Some(self.get(y, x)),
            }
        };
        let left = step(self.get(a, b), c, true)?;
        let right = step(self.get(b, c), a, false)?;
        Some((left, right))
    }

    fn triple(&self, a: usize, b: usize, c: usize) -> Option<Triple> {
        match self.brackets(a, b, c) {
            Some((left, right)) if left != right => Some(Triple {
                types: [a, b, c],
                left,
                right,
            }),
            _ => None,
        }
    }

    /// Every ordered triple whose two bracketings differ, the ones with fewer distinct
    /// operands first, then in order. Triples whose intermediate result is not an operand are
    /// skipped (see [`OpTable::not_closed`]).
    pub fn non_associative(&self) -> Vec<Triple> {
        self.non_associative_capped(self.rows, usize::MAX).1
    }

    /// The non-associative triples among the first `given` operands: how many there are, and
    /// the first `max` in [`OpTable::non_associative`]'s order, in one pass with memory for
    /// `max` triples only (the count is cubic in the operands).
    pub fn non_associative_capped(&self, given: usize, max: usize) -> (usize, Vec<Triple>) {
        let n = given.min(self.rows);
        let mut count = 0;
        // By number of distinct operands; each bucket fills in lexicographic order.
        let mut buckets: [Vec<Triple>; 3] = Default::default();
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    if let Some(t) = self.triple(a, b, c) {
                        count += 1;
                        let bucket = &mut buckets[distinct(t.types) - 1];
                        if bucket.len() < max {
                            bucket.push(t);
                        }
                    }
                }
            }
        }
        let mut out: Vec<Triple> = buckets.into_iter().flatten().collect();
        out.truncate(max);
        (count, out)
    }

    /// The smallest non-associative triple (fewest distinct operands, then first in order),
    /// searched with an early exit; `None` when the table is associative.
    pub fn first_non_associative(&self) -> Option<Triple> {
        let n = self.rows;
        if let Some(t) = (0..n).find_map(|a| self.triple(a, a, a)) {
            return Some(t);
        }
        let mut two = (0..n)
            .flat_map(|x| (0..n).map(move |y| (x, y)))
            .filter(|&(x, y)| x != y)
            .flat_map(|(x, y)| [[x, x, y], [x, y, x], [y, x, x]])
            .filter_map(|[a, b, c]| self.triple(a, b, c))
            .min_by_key(|t| t.types);
        if two.is_some() {
            return two.take();
        }
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    if a != b
                        && b != c
                        && a != c
                        && let Some(t) = self.triple(a, b, c)
                    {
                        return Some(t);
                    }
                }
            }
        }
        None
    }

    /// The lattice whose join this table is, as its Hasse diagram ("node → nodes directly
    /// above", in operand order), when there is one: a partial lattice when some pairs have
    /// no result. `None` when the table is not a (partial) join.
    ///
    /// The order is `a ≤ b ⇔ a ∘ b = b`; the table is that order's join exactly when every
    /// cell agrees with the join the engine computes from it, which takes quadratic time
    /// where checking associativity directly is cubic.
    pub fn as_lattice(&self) -> Option<Edges> {
        if !self.not_closed().is_empty() {
            return None;
        }
        let n = self.rows;
        let edges: Vec<(usize, Vec<usize>)> = (0..n)
            .map(|a| {
                let mut above: Vec<usize> = (0..n)
                    .filter_map(|b| self.get(a, b))
                    .filter(|&r| r != a)
                    .collect();
                above.sort_unstable();
                above.dedup();
                (a, above)
            })
            .collect();
        let l = Lattice::from_edges(edges).ok()?;
        let idx: Vec<usize> = (0..n).map(|a| l.index_of(&a).expect("a node")).collect();
        for a in 0..n {
            for b in 0..n {
                let expected = match l.join_index(idx[a], idx[b]) {
                    Lub::Node(c) => Some(*l.node(c)),
                    Lub::Undefined => None,
                    Lub::Ambiguous(_) => return None,
                };
                if self.get(a, b) != expected {
                    return None;
                }
            }
        }
        Some(
            (0..n)
                .filter_map(|a| {
                    let mut covers: Vec<usize> =
                        l.covers(idx[a]).iter().map(|&c| *l.node(c)).collect();
                    covers.sort_unstable();
                    (!covers.is_empty()).then(|| {
                        (
                            self.names[a].clone(),
                            covers.into_iter().map(|c| self.names[c].clone()).collect(),
                        )
                    })
                })
                .collect(),
        )
    }
}

fn distinct([a, b, c]: [usize; 3]) -> usize {
    1 + usize::from(b != a) + usize::from(c != a && c != b)
}

/// A cell of a table: a pair and its result (`None`: no result).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// The operands.
    pub pair: [String; 2],
    /// The result.
    pub result: Option<String>,
}

/// A pair whose two orders give different results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NonCommutative {
    /// `[a, b]`.
    pub pair: [String; 2],
    /// `[a ∘ b, b ∘ a]`.
    pub results: [Option<String>; 2],
}

/// A triple whose two bracketings give different results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NonAssociative {
    /// `[a, b, c]`.
    pub types: [String; 3],
    /// `[(a ∘ b) ∘ c, a ∘ (b ∘ c)]`.
    pub results: [Option<String>; 2],
}

impl NonAssociative {
    /// Names a [`Triple`] of a table.
    pub fn of(t: &OpTable, x: &Triple) -> Self {
        let name = |i: usize| t.names()[i].clone();
        NonAssociative {
            types: x.types.map(name),
            results: [x.left.map(name), x.right.map(name)],
        }
    }
}

/// Edges serialised as a JSON object in their order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeMap(pub Edges);

impl Serialize for EdgeMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The verdict on a promotion table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableReport {
    /// Number of row (and column) types.
    pub types: usize,
    /// Every cell has a result.
    pub complete: bool,
    /// The first pair without a result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<[String; 2]>,
    /// Every result is one of the types.
    pub closed: bool,
    /// The first cell whose result is not one of the types.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_closed: Option<Cell>,
    /// `a ∘ a = a` for every type.
    pub idempotent: bool,
    /// The first type with `a ∘ a != a`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non_idempotent: Option<Cell>,
    /// `a ∘ b = b ∘ a` for every pair.
    pub commutative: bool,
    /// The first pair where it fails.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non_commutative: Option<NonCommutative>,
    /// `(a ∘ b) ∘ c = a ∘ (b ∘ c)` for every triple (no result counts as a value); triples
    /// through a result that is not one of the types cannot be checked and are skipped.
    pub associative: bool,
    /// The smallest triple where it fails (fewest distinct types, then first in order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non_associative: Option<NonAssociative>,
    /// The table is the join of a partial lattice (pairs without a result have no common
    /// upper bound).
    pub representable_as_partial_lattice: bool,
    /// The table is the join of a lattice.
    pub representable_as_lattice: bool,
    /// That lattice, as "node → nodes directly above", when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edges: Option<EdgeMap>,
}

/// Builds an [`OpTable`] from a table definition. Columns must be rows (a promotion table
/// is square); results may be anything.
///
/// # Errors
///
/// `InvalidDefinition` for a table of more than [`MAX_TABLE_TYPES`] types, or whose columns are
/// not its rows.
pub fn table_of(rows: &TableRows) -> Result<OpTable, Error> {
    if rows.len() > MAX_TABLE_TYPES {
        return Err(invalid(format!(
            "the table has {} types; at most {MAX_TABLE_TYPES} are checked",
            rows.len()
        )));
    }
    let mut names: Vec<String> = rows.iter().map(|(r, _)| r.clone()).collect();
    let mut index: HashMap<String, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect();
    let n = rows.len();
    let mut cells = vec![None; n * n];
    for (a, (row, cols)) in rows.iter().enumerate() {
        for (col, result) in cols {
            // Results seen so far are in `index` too, past the rows.
            let b = *index.get(col).filter(|&&b| b < n).ok_or_else(|| {
                invalid(format!(
                    "column {col:?} of row {row:?} is not a row; a promotion table is square"
                ))
            })?;
            cells[a * n + b] = result.as_ref().map(|r| {
                let next = names.len();
                *index.entry(r.clone()).or_insert_with(|| {
                    names.push(r.clone());
                    next
                })
            });
        }
    }
    Ok(OpTable::from_fn(names, n, |a, b| cells[a * n + b]))
}

/// Checks a promotion table: complete, closed, idempotent, commutative, associative, and
/// representable as a (partial) lattice, with the smallest counterexamples.
///
/// # Errors
///
/// As [`table_of`].
///
/// ```
/// use dtype_lattice::toolkit::check::{check_table, DefinitionFile, Definition};
/// let file: DefinitionFile = r#"{"table": {
///     "a": {"a": "a", "b": "c", "c": "c"},
///     "b": {"a": "c", "b": "b", "c": "c"},
///     "c": {"a": "c", "b": "c", "c": "c"}}}"#.parse().unwrap();
/// let Definition::Table(rows) = &file.definition else { unreachable!() };
/// let r = check_table(rows).unwrap();
/// assert!(r.representable_as_lattice);
/// assert_eq!(r.edges.unwrap().0, [("a".to_string(), vec!["c".to_string()]), ("b".to_string(), vec!["c".to_string()])]);
/// ```
pub fn check_table(rows: &TableRows) -> Result<TableReport, Error> {
    let t = table_of(rows)?;
    let name = |i: usize| t.names()[i].clone();
    let cell = |a: usize, b: usize| Cell {
        pair: [name(a), name(b)],
        result: t.get(a, b).map(name),
    };
    let missing = t.missing().first().map(|&(a, b)| [name(a), name(b)]);
    let not_closed = t.not_closed().first().map(|&(a, b)| cell(a, b));
    let non_idempotent = t.non_idempotent().first().map(|&a| cell(a, a));
    let non_commutative = t.non_commutative().first().map(|&(a, b)| NonCommutative {
        pair: [name(a), name(b)],
        results: [t.get(a, b).map(name), t.get(b, a).map(name)],
    });
    let lattice = t.as_lattice();
    // A join is associative: only search for a counterexample when it is not one.
    let non_associative = match lattice {
        Some(_) => None,
        None => t
            .first_non_associative()
            .map(|x| NonAssociative::of(&t, &x)),
    };
    let complete = missing.is_none();
    Ok(TableReport {
        types: t.rows(),
        complete,
        missing,
        closed: not_closed.is_none(),
        not_closed,
        idempotent: non_idempotent.is_none(),
        non_idempotent,
        commutative: non_commutative.is_none(),
        non_commutative,
        associative: non_associative.is_none(),
        non_associative,
        representable_as_partial_lattice: lattice.is_some(),
        representable_as_lattice: lattice.is_some() && complete,
        edges: lattice.map(EdgeMap),
    })
}

/// The verdict on a definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Report {
    /// For a lattice definition.
    Lattice(LatticeReport),
    /// For a table definition.
    Table(Box<TableReport>),
}

impl Report {
    /// Whether the definition is a lattice (or a table representable as one): the `check`
    /// command's exit code 0.
    pub fn is_lattice(&self) -> bool {
        match self {
            Report::Lattice(r) => r.is_lattice,
            Report::Table(r) => r.representable_as_lattice,
        }
    }
}

/// Checks a definition of either kind.
///
/// # Errors
///
/// As [`check_lattice`] or [`check_table`].
pub fn check(definition: &Definition) -> Result<Report, Error> {
    match definition {
        Definition::Lattice(e) => check_lattice(e).map(Report::Lattice),
        Definition::Table(t) => check_table(t).map(|r| Report::Table(Box::new(r))),
    }
}
