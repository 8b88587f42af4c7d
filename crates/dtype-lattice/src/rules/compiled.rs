//! A rule set's lattice compiled for queries: the generic engine's joins copied into byte
//! tables indexed by [`Node::index`], so that a promotion is a few array lookups.

use crate::dtype::DType;
use crate::lattice::{Lattice, Lub};
use crate::operand::{Node, PyType};

/// The node a weakly typed value of `dtype` joins as: its Python scalar type (JAX's
/// `_jax_type`), except bool, which stays itself.
pub(crate) fn weak_node_of(dtype: DType) -> Node {
    match PyType::of_kind(dtype.kind()) {
        Some(t) => Node::Weak(t),
        None => Node::Dtype(dtype),
    }
}

/// A lattice ready for queries: the engine's lattice plus its joins re-indexed by
/// [`Node::index`] as byte tables, so that a query is a few array lookups.
pub(crate) struct Compiled {
    pub(crate) lattice: Lattice<Node>,
    /// `join[a][b]`: the [`Node::index`] of `a ∨ b`, or [`NO_JOIN`] when it is undefined or
    /// ambiguous (the slow path tells which) or a node is not in the lattice. Row and column
    /// [`NO_JOIN`] are all [`NO_JOIN`], so folds need no branch.
    pub(crate) join: [[u8; NO_JOIN as usize + 1]; NO_JOIN as usize + 1],
    /// `promote[a][b]`: `jnp.promote_types`' result as a [`DType::index`] (a weak join is
    /// reported as the Python type's 64-bit dtype), or [`NO_JOIN`].
    pub(crate) promote: [[u8; Node::COUNT]; Node::COUNT],
    /// `_jax_type(dtype, weak=True)` as a [`Node::index`], by [`DType::index`].
    pub(crate) weak_node: [u8; DType::COUNT],
}

pub(crate) const NO_JOIN: u8 = Node::COUNT as u8;

impl Compiled {
    /// Compiles a rule set's lattice definition (which must be acyclic: rule sets are
    /// constants, checked by the tests).
    pub(crate) fn new(edges: impl IntoIterator<Item = (Node, Vec<Node>)>) -> Self {
        Self::from_lattice(Lattice::from_edges(edges).expect("rule set lattices are acyclic"))
    }

    /// Compiles an already built lattice (e.g. one with a tie-break).
    pub(crate) fn from_lattice(lattice: Lattice<Node>) -> Self {
        let mut join = [[NO_JOIN; NO_JOIN as usize + 1]; NO_JOIN as usize + 1];
        let mut promote = [[NO_JOIN; Node::COUNT]; Node::COUNT];
        for (i, a) in lattice.nodes().iter().enumerate() {
            for (j, b) in lattice.nodes().iter().enumerate() {
                if let Lub::Node(c) = lattice.join_index(i, j) {
                    let r = *lattice.node(c);
                    join[a.index()][b.index()] = r.index() as u8;
                    let dtype = match r {
                        Node::Dtype(t) => t,
                        Node::Weak(t) => t.default_dtype(),
                    };
                    promote[a.index()][b.index()] = dtype.index() as u8;
                }
            }
        }
        let weak_node = std::array::from_fn(|i| weak_node_of(DType::ALL[i]).index() as u8);
        Compiled {
            lattice,
            join,
            promote,
            weak_node,
        }
    }

    /// One step of a join fold over node indices.
    #[inline(always)]
    pub(crate) fn step(&self, acc: u8, node: usize) -> u8 {
        self.join[acc as usize][node]
    }

    /// The node index of `(dtype, weak)`: a weak value joins as its Python scalar type
    /// (JAX's `_jax_type`), except bool.
    #[inline(always)]
    pub(crate) fn jax_type_index(&self, dtype: DType, weak: bool) -> usize {
        if weak {
            self.weak_node[dtype.index()] as usize
        } else {
            dtype.index()
        }
    }
}

/// A lattice definition with some nodes' edges replaced (`patch`), as owned edges.
pub(crate) fn edges(base: &[(Node, &[Node])], patch: &[(Node, &[Node])]) -> Vec<(Node, Vec<Node>)> {
    base.iter()
        .map(|&(n, above)| {
            let above = patch
                .iter()
                .find(|(p, _)| *p == n)
                .map_or(above, |(_, a)| a);
            (n, above.to_vec())
        })
        .collect()
}
