//! The generic lattice engine: a finite partial order given as "node → nodes directly above",
//! with its upper sets and its whole join table precomputed.
//!
//! Nodes are numbered in a topological order (every node before the nodes above it). Upper
//! sets are bitsets over those numbers, so the common upper bounds of any set of nodes are one
//! bitwise AND, and the least upper bound, if there is one, is the lowest-numbered common upper
//! bound (it lies below every other common upper bound, so it comes first in any topological
//! order); one subset test confirms it. This is JAX's `_least_upper_bound` definition
//! (`LUB(N) = {c ∈ CUB(N) | CUB(N) ⊆ UB(c)}`), computed without hashing.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

use crate::error::{Error, Reason};

/// The engine refuses lattices with more nodes than this (the join table is quadratic).
pub const MAX_NODES: usize = 4096;

const UNDEFINED: u32 = u32::MAX;
const AMBIGUOUS: u32 = u32::MAX - 1;

/// The least upper bound of a set of nodes, as node indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lub {
    /// The unique least upper bound.
    Node(usize),
    /// The nodes have no common upper bound.
    Undefined,
    /// Several minimal common upper bounds (the definition is not a lattice there).
    Ambiguous(Vec<usize>),
}

/// A finite partial order with precomputed upper sets and join table.
///
/// ```
/// use dtype_lattice::lattice::{Lattice, Lub};
/// // Python's numeric tower: int → float → complex.
/// let l = Lattice::from_edges([("int", vec!["float"]), ("float", vec!["complex"])]).unwrap();
/// assert_eq!(l.join(&"int", &"complex"), Some(Lub::Node(l.index_of(&"complex").unwrap())));
/// assert!(l.is_lattice());
/// ```
#[derive(Clone)]
pub struct Lattice<N> {
    nodes: Vec<N>,
    index: HashMap<N, usize>,
    above: Vec<Vec<usize>>,
    words: usize,
    upper: Vec<u64>,
    join: Vec<u32>,
    /// For ambiguous pairs resolved by [`Lattice::with_tie_break`]: the preferred bound.
    tie: HashMap<(usize, usize), usize>,
    /// The tie-break ranks by node index, when there is a tie-break.
    rank: Option<Vec<usize>>,
}

impl<N: fmt::Debug> fmt::Debug for Lattice<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lattice")
            .field("nodes", &self.nodes)
            .field("above", &self.above)
            .finish_non_exhaustive()
    }
}

impl<N: Clone + Eq + Hash + fmt::Display> Lattice<N> {
    /// Builds the order from "node → nodes directly above". Nodes that appear only as
    /// targets are added too. Fails on a cycle (naming it) or on more than [`MAX_NODES`] nodes.
    ///
    /// # Errors
    ///
    /// `Cycle` with one cycle's nodes when the edges are
    /// not acyclic; `LatticeTooLarge` above the engine's node limit.
    ///
    /// ```
    /// use dtype_lattice::lattice::Lattice;
    /// let err = Lattice::from_edges([("a", vec!["b"]), ("b", vec!["a"])]).unwrap_err();
    /// assert_eq!(err.to_string(), "the lattice has a cycle: a -> b -> a");
    /// ```
    pub fn from_edges<I, A>(edges: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = (N, A)>,
        A: IntoIterator<Item = N>,
    {
        // Collect nodes in first-appearance order and edges by those provisional numbers.
        let mut order: Vec<N> = Vec::new();
        let mut provisional: HashMap<N, usize> = HashMap::new();
        let mut out: Vec<Vec<usize>> = Vec::new();
        // Edges already given, so that repeated targets cost a hash lookup, not a scan.
        let mut given: std::collections::HashSet<(usize, usize)> = Default::default();
        let mut intern = |n: N, order: &mut Vec<N>, out: &mut Vec<Vec<usize>>| -> usize {
            *provisional.entry(n.clone()).or_insert_with(|| {
                order.push(n);
                out.push(Vec::new());
                order.len() - 1
            })
        };
        for (from, tos) in edges {
            let f = intern(from, &mut order, &mut out);
            for to in tos {
                let t = intern(to, &mut order, &mut out);
                if given.insert((f, t)) {
                    out[f].push(t);
                }
            }
            if order.len() > MAX_NODES {
                return Err(Reason::LatticeTooLarge {
                    nodes: order.len(),
                    limit: MAX_NODES,
                }
                .into());
            }
        }
        let topo = topological_order(&out).map_err(|cycle| {
            Error::from(Reason::Cycle {
                cycle: cycle.iter().map(|&i| order[i].to_string()).collect(),
            })
        })?;
        // Renumber in topological order.
        let mut rank = vec![0usize; order.len()];
        for (r, &i) in topo.iter().enumerate() {
            rank[i] = r;
        }
        let nodes: Vec<N> = topo.iter().map(|&i| order[i].clone()).collect();
        let above: Vec<Vec<usize>> = topo
            .iter()
            .map(|&i| out[i].iter().map(|&t| rank[t]).collect())
            .collect();
        Ok(Self::from_topological(nodes, above))
    }

    fn from_topological(nodes: Vec<N>, above: Vec<Vec<usize>>) -> Self {
        let n = nodes.len();
        let words = n.div_ceil(64).max(1);
        let mut upper = vec![0u64; n * words];
        for i in (0..n).rev() {
            upper[i * words + i / 64] |= 1 << (i % 64);
            for &a in &above[i] {
                for w in 0..words {
                    upper[i * words + w] |= upper[a * words + w];
                }
            }
        }
        let index = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        let mut lattice = Lattice {
            nodes,
            index,
            above,
            words,
            upper,
            join: Vec::new(),
            tie: HashMap::new(),
            rank: None,
        };
        let mut join = vec![UNDEFINED; n * n];
        let mut scratch = vec![0u64; words];
        for a in 0..n {
            for b in a..n {
                lattice.common_upper_bounds(&[a, b], &mut scratch);
                let code = match lattice.least_of(&scratch) {
                    Some(Ok(c)) => c as u32,
                    Some(Err(())) => AMBIGUOUS,
                    None => UNDEFINED,
                };
                join[a * n + b] = code;
                join[b * n + a] = code;
            }
        }
        lattice.join = join;
        lattice
    }
}

impl<N: Eq + Hash> Lattice<N> {
    /// Resolves ambiguity by a preference: among the minimal common upper bounds, the one
    /// with the lowest `rank` wins, as NumPy breaks ties by type number. The join is then no
    /// longer a lattice operation (it need not be associative): [`Lattice::join_index`] and
    /// [`Lattice::lub_index`] answer with the preferred minimal bound of the pair or the set,
    /// [`Lattice::fold_join`] folds pairwise, and [`Lattice::ambiguous_pairs`] still lists the
    /// pairs that needed the tie-break.
    ///
    /// ```
    /// use dtype_lattice::lattice::{Lattice, Lub};
    /// let l = Lattice::from_edges([("a", vec!["x", "y"]), ("b", vec!["x", "y"])]).unwrap();
    /// let l = l.with_tie_break(|n| if *n == "y" { 0 } else { 1 });
    /// let (a, b) = (l.index_of(&"a").unwrap(), l.index_of(&"b").unwrap());
    /// assert_eq!(l.join_index(a, b), Lub::Node(l.index_of(&"y").unwrap()));
    /// assert_eq!(l.ambiguous_pairs().len(), 1);
    /// ```
    #[must_use]
    pub fn with_tie_break(mut self, rank: impl Fn(&N) -> usize) -> Self {
        self.rank = Some(self.nodes.iter().map(&rank).collect());
        let mut cub = vec![0u64; self.words];
        for (a, b) in self.ambiguous_pairs() {
            self.common_upper_bounds(&[a, b], &mut cub);
            let best = self.preferred(&cub);
            self.tie.insert((a, b), best);
            self.tie.insert((b, a), best);
        }
        self
    }

    /// The preferred minimal element of a non-empty set (lowest rank, then lowest index).
    fn preferred(&self, set: &[u64]) -> usize {
        let rank = self.rank.as_ref().expect("a tie-break");
        self.minimal_elements(set)
            .into_iter()
            .min_by_key(|&c| (rank[c], c))
            .expect("a non-empty set has minimal elements")
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The nodes, in the engine's topological order (each before the nodes above it).
    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }

    /// The node with index `i`.
    pub fn node(&self, i: usize) -> &N {
        &self.nodes[i]
    }

    /// The index of a node.
    pub fn index_of(&self, node: &N) -> Option<usize> {
        self.index.get(node).copied()
    }

    /// Indices of the nodes directly above node `i`, as given.
    pub fn above(&self, i: usize) -> &[usize] {
        &self.above[i]
    }

    /// Whether `a ≤ b` (b is in a's upper set), by index.
    pub fn leq(&self, a: usize, b: usize) -> bool {
        self.upper[a * self.words + b / 64] & (1 << (b % 64)) != 0
    }

    /// Indices of the nodes that cover node `i` (directly above it in the Hasse diagram):
    /// the given edges out of `i` that no other given edge out of `i` implies.
    ///
    /// ```
    /// use dtype_lattice::lattice::Lattice;
    /// // a → c is implied by a → b → c.
    /// let l = Lattice::from_edges([("a", vec!["b", "c"]), ("b", vec!["c"])]).unwrap();
    /// let covers: Vec<&str> = l.covers(l.index_of(&"a").unwrap()).iter().map(|&i| *l.node(i)).collect();
    /// assert_eq!(covers, ["b"]);
    /// ```
    pub fn covers(&self, i: usize) -> Vec<usize> {
        let above = &self.above[i];
        if above.len() <= 16 {
            return above
                .iter()
                .copied()
                .filter(|&a| !above.iter().any(|&b| b != a && self.leq(b, a)))
                .collect();
        }
        // Many edges: a target is implied when it lies strictly above another target, so one
        // union of the targets' strict upper sets decides them all (linear, not quadratic).
        let mut implied = vec![0u64; self.words];
        for &b in above {
            let ub = &self.upper[b * self.words..(b + 1) * self.words];
            for (w, (o, u)) in implied.iter_mut().zip(ub).enumerate() {
                let own = if w == b / 64 { 1u64 << (b % 64) } else { 0 };
                *o |= u & !own;
            }
        }
        above
            .iter()
            .copied()
            .filter(|&a| implied[a / 64] & (1 << (a % 64)) == 0)
            .collect()
    }

    /// Indices of the upper set of node `i` (including `i`), ascending.
    pub fn upper_set(&self, i: usize) -> Vec<usize> {
        bits(&self.upper[i * self.words..(i + 1) * self.words]).collect()
    }

    /// The join of two nodes by index: a table lookup.
    #[inline]
    pub fn join_index(&self, a: usize, b: usize) -> Lub {
        match self.join[a * self.nodes.len() + b] {
            UNDEFINED => Lub::Undefined,
            AMBIGUOUS => match self.tie.get(&(a, b)) {
                Some(&c) => Lub::Node(c),
                None => self.lub_index(&[a, b]),
            },
            c => Lub::Node(c as usize),
        }
    }

    /// The join of two nodes by index when it is one node (or a tie-break picks one);
    /// `None` when undefined or ambiguous. A table lookup that never allocates.
    #[inline]
    pub fn join_node(&self, a: usize, b: usize) -> Option<usize> {
        match self.join[a * self.nodes.len() + b] {
            UNDEFINED => None,
            AMBIGUOUS => self.tie.get(&(a, b)).copied(),
            c => Some(c as usize),
        }
    }

    /// The join of two nodes by value; `None` when either is not a node.
    pub fn join(&self, a: &N, b: &N) -> Option<Lub> {
        Some(self.join_index(self.index_of(a)?, self.index_of(b)?))
    }

    /// Folds the binary join table over `nodes`. Exact whenever no step is ambiguous:
    /// where `a ∨ b` exists, the common upper bounds of `a` and `b` are exactly the upper set
    /// of `a ∨ b`. `None` means a step was ambiguous and [`Lattice::lub_index`] must decide.
    #[inline]
    pub fn fold_join(&self, nodes: impl IntoIterator<Item = usize>) -> Option<Lub> {
        let n = self.nodes.len();
        let mut it = nodes.into_iter();
        let mut acc = it.next()? as u32;
        for b in it {
            let a = acc as usize;
            acc = self.join[a * n + b];
            match acc {
                UNDEFINED => return Some(Lub::Undefined),
                AMBIGUOUS => match self.tie.get(&(a, b)) {
                    Some(&c) => acc = c as u32,
                    None => return None,
                },
                _ => {}
            }
        }
        Some(Lub::Node(acc as usize))
    }

    /// The least upper bound of a set of nodes by index, with JAX's semantics: no common
    /// upper bound gives [`Lub::Undefined`], several minimal ones give [`Lub::Ambiguous`]
    /// (listing them). An empty set is undefined.
    pub fn lub_index(&self, nodes: &[usize]) -> Lub {
        if nodes.is_empty() {
            return Lub::Undefined;
        }
        if self.rank.is_none()
            && let Some(lub) = self.fold_join(nodes.iter().copied())
        {
            return lub;
        }
        let mut cub = vec![0u64; self.words];
        self.common_upper_bounds(nodes, &mut cub);
        match self.least_of(&cub) {
            None => Lub::Undefined,
            Some(Ok(c)) => Lub::Node(c),
            Some(Err(())) if self.rank.is_some() => Lub::Node(self.preferred(&cub)),
            Some(Err(())) => Lub::Ambiguous(self.minimal_elements(&cub)),
        }
    }

    /// The least upper bound of a set of nodes by value; `None` when one is not a node.
    pub fn lub<'a>(&self, nodes: impl IntoIterator<Item = &'a N>) -> Option<Lub>
    where
        N: 'a,
    {
        let idx: Option<Vec<usize>> = nodes.into_iter().map(|n| self.index_of(n)).collect();
        Some(self.lub_index(&idx?))
    }

    /// Pairs `(a, b)`, `a < b` by index, with no common upper bound.
    pub fn undefined_pairs(&self) -> Vec<(usize, usize)> {
        self.pairs_with(UNDEFINED)
    }

    /// Pairs `(a, b)`, `a < b` by index, with several minimal common upper bounds.
    pub fn ambiguous_pairs(&self) -> Vec<(usize, usize)> {
        self.pairs_with(AMBIGUOUS)
    }

    /// Whether nodes `a` and `b` (by index) have no common upper bound: a table lookup.
    pub fn is_undefined_pair(&self, a: usize, b: usize) -> bool {
        self.join[a * self.nodes.len() + b] == UNDEFINED
    }

    /// Whether nodes `a` and `b` (by index) have several minimal common upper bounds (before
    /// any tie-break): a table lookup.
    pub fn is_ambiguous_pair(&self, a: usize, b: usize) -> bool {
        self.join[a * self.nodes.len() + b] == AMBIGUOUS
    }

    /// No pair is ambiguous (pairs may lack an upper bound).
    pub fn is_partial_lattice(&self) -> bool {
        !self.join.contains(&AMBIGUOUS)
    }

    /// Every pair has a unique least upper bound.
    pub fn is_lattice(&self) -> bool {
        !self.join.iter().any(|&c| c == AMBIGUOUS || c == UNDEFINED)
    }

    fn pairs_with(&self, code: u32) -> Vec<(usize, usize)> {
        let n = self.nodes.len();
        (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|&(a, b)| self.join[a * n + b] == code)
            .collect()
    }

    fn common_upper_bounds(&self, nodes: &[usize], out: &mut [u64]) {
        out.fill(u64::MAX);
        for &i in nodes {
            let ub = &self.upper[i * self.words..(i + 1) * self.words];
            for (o, u) in out.iter_mut().zip(ub) {
                *o &= u;
            }
        }
    }

    /// `None` if `set` is empty, `Some(Ok(least))` if it has a least element, else `Some(Err)`.
    fn least_of(&self, set: &[u64]) -> Option<Result<usize, ()>> {
        let first = bits(set).next()?;
        let ub = &self.upper[first * self.words..(first + 1) * self.words];
        let contained = set.iter().zip(ub).all(|(s, u)| s & !u == 0);
        Some(if contained { Ok(first) } else { Err(()) })
    }

    fn minimal_elements(&self, set: &[u64]) -> Vec<usize> {
        // Members in topological order: a member is minimal unless it lies above an earlier
        // one, and then it lies above an earlier minimal one, whose upper sets are collected.
        let mut above_minimal = vec![0u64; self.words];
        let mut out = Vec::new();
        for c in bits(set) {
            if above_minimal[c / 64] & (1 << (c % 64)) != 0 {
                continue;
            }
            out.push(c);
            let ub = &self.upper[c * self.words..(c + 1) * self.words];
            for (o, u) in above_minimal.iter_mut().zip(ub) {
                *o |= u;
            }
        }
        out
    }
}

fn bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(w, &word)| {
        let mut word = word;
        std::iter::from_fn(move || {
            if word == 0 {
                return None;
            }
            let b = word.trailing_zeros() as usize;
            word &= word - 1;
            Some(w * 64 + b)
        })
    })
}

/// Kahn's algorithm, stable in input order. On a cycle, returns one cycle (first node
/// repeated at the end).
fn topological_order(out: &[Vec<usize>]) -> Result<Vec<usize>, Vec<usize>> {
    let n = out.len();
    let mut indegree = vec![0usize; n];
    for tos in out {
        for &t in tos {
            indegree[t] += 1;
        }
    }
    let mut ready: std::collections::VecDeque<usize> =
        (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_front() {
        order.push(i);
        for &t in &out[i] {
            indegree[t] -= 1;
            if indegree[t] == 0 {
                ready.push_back(t);
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    // Every node left has a predecessor that is left too (its indegree counts only those),
    // so walking predecessors must revisit a node: that walk, reversed, is a cycle.
    let left: Vec<bool> = indegree.iter().map(|&d| d > 0).collect();
    let mut pred = vec![usize::MAX; n];
    for (from, tos) in out.iter().enumerate() {
        for &t in tos {
            if left[from] && left[t] && pred[t] == usize::MAX {
                pred[t] = from;
            }
        }
    }
    let start = (0..n).find(|&i| left[i]).expect("a node is left");
    let mut seen = vec![usize::MAX; n];
    let mut path = Vec::new();
    let mut cur = start;
    while seen[cur] == usize::MAX {
        seen[cur] = path.len();
        path.push(cur);
        cur = pred[cur];
    }
    let mut cycle = path.split_off(seen[cur]);
    cycle.reverse();
    // Start the cycle at its earliest-given node, for stable messages.
    let first = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
    cycle.rotate_left(first);
    cycle.push(cycle[0]);
    Err(cycle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn diamond_and_non_lattices() {
        // The design note's non-lattice on the right: A, B below both C and D.
        let l = Lattice::from_edges([("A", vec!["C", "D"]), ("B", vec!["C", "D"])]).unwrap();
        let (a, b) = (l.index_of(&"A").unwrap(), l.index_of(&"B").unwrap());
        let (c, d) = (l.index_of(&"C").unwrap(), l.index_of(&"D").unwrap());
        let mut both = vec![c, d];
        both.sort();
        assert_eq!(l.join_index(a, b), Lub::Ambiguous(both));
        assert_eq!(l.join_index(c, d), Lub::Undefined);
        assert!(!l.is_partial_lattice());
        // With a top, the pair A, B is still ambiguous, but {A, B, C} has a least bound.
        let l = Lattice::from_edges([
            ("A", vec!["C", "D"]),
            ("B", vec!["C", "D"]),
            ("C", vec!["T"]),
            ("D", vec!["T"]),
        ])
        .unwrap();
        let idx = |s| l.index_of(&s).unwrap();
        assert_eq!(
            l.lub_index(&[idx("A"), idx("B"), idx("C")]),
            Lub::Node(idx("C"))
        );
        assert_eq!(l.join_index(idx("C"), idx("D")), Lub::Node(idx("T")));
    }

    #[test]
    fn cycles_are_named() {
        let err = Lattice::from_edges([("x", vec!["a"]), ("a", vec!["b"]), ("b", vec!["c", "a"])])
            .unwrap_err();
        assert_eq!(err.to_string(), "the lattice has a cycle: a -> b -> a");
        let err = Lattice::from_edges([("s", vec!["s"])]).unwrap_err();
        assert_eq!(err.to_string(), "the lattice has a cycle: s -> s");
    }

    #[test]
    fn wide_lattices_use_several_words() {
        // A chain of 200 nodes under one top: joins are the larger node.
        let names: Vec<String> = (0..200).map(|i| format!("n{i}")).collect();
        let l = Lattice::from_edges(names.windows(2).map(|w| (w[0].clone(), vec![w[1].clone()])))
            .unwrap();
        let i = |k: usize| l.index_of(&names[k]).unwrap();
        assert_eq!(l.join_index(i(3), i(150)), Lub::Node(i(150)));
        assert_eq!(l.lub_index(&[i(70), i(199), i(5)]), Lub::Node(i(199)));
        assert!(l.is_lattice());
    }

    #[test]
    fn covers_and_minimal_bounds_of_wide_nodes_match_their_definitions() {
        // 120 nodes, each with up to 40 edges upward: the bitset paths (more than 16 targets,
        // many common upper bounds) against the quadratic definitions.
        let mut state = 12345u64;
        let mut next = |n: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            (state >> 33) as usize % n
        };
        let n = 120;
        let edges: Vec<(usize, Vec<usize>)> = (0..n)
            .map(|i| {
                let k = if i + 1 < n { next(41) } else { 0 };
                (i, (0..k).map(|_| i + 1 + next(n - i - 1)).collect())
            })
            .collect();
        let l = Lattice::from_edges(edges).unwrap();
        for i in 0..n {
            let above = l.above(i);
            let want: Vec<usize> = above
                .iter()
                .copied()
                .filter(|&a| !above.iter().any(|&b| b != a && l.leq(b, a)))
                .collect();
            assert_eq!(l.covers(i), want, "node {i}");
        }
        for (a, b) in l.ambiguous_pairs() {
            let common: Vec<usize> = (0..n).filter(|&c| l.leq(a, c) && l.leq(b, c)).collect();
            let want: Vec<usize> = common
                .iter()
                .copied()
                .filter(|&c| !common.iter().any(|&d| d != c && l.leq(d, c)))
                .collect();
            assert_eq!(l.lub_index(&[a, b]), Lub::Ambiguous(want));
        }
    }

    #[test]
    fn too_many_nodes_is_refused() {
        let err =
            Lattice::from_edges((0..MAX_NODES + 1).map(|i| (i.to_string(), vec![]))).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LatticeTooLarge);
    }
}
