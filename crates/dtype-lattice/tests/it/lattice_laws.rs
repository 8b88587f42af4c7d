//! Property tests: the lattice laws on every JAX lattice, and the engine against a brute-force
//! reference on random DAGs.

use std::collections::BTreeSet;

use dtype_lattice::lattice::{Lattice, Lub};
use dtype_lattice::{DType, Operand, PyType, Rules, Value};
use proptest::prelude::*;

fn jax_modes() -> Vec<Rules> {
    vec![
        Rules::jax(),
        Rules::jax().x64(true),
        Rules::jax().strict(true),
    ]
}

fn join(l: &Lattice<dtype_lattice::Node>, a: usize, b: usize) -> Option<usize> {
    match l.join_index(a, b) {
        Lub::Node(c) => Some(c),
        Lub::Undefined => None,
        Lub::Ambiguous(opts) => panic!("JAX lattice ambiguous at ({a}, {b}): {opts:?}"),
    }
}

#[test]
fn jax_lattices_are_partial_lattices_and_total_on_the_documented_types() {
    for rules in jax_modes() {
        let l = rules.lattice().unwrap();
        assert!(l.is_partial_lattice(), "{rules}");
        // 8/6/4-bit floats and 1/2/4-bit integers join with nothing else, by design.
        assert!(!l.is_lattice(), "{rules}");
    }
    for rules in [Rules::jax(), Rules::jax().x64(true)] {
        let l = rules.lattice().unwrap();
        let doc: Vec<usize> = dtype_lattice::table::JAX_DOC_TYPES
            .iter()
            .map(|op| {
                let node = match *op {
                    Operand::Array { dtype, .. } => dtype_lattice::Node::Dtype(dtype),
                    Operand::PyType(t) => dtype_lattice::Node::Weak(t),
                    _ => unreachable!(),
                };
                l.index_of(&node).unwrap()
            })
            .collect();
        for &a in &doc {
            for &b in &doc {
                assert!(join(l, a, b).is_some(), "{rules}: {a} {b}");
            }
        }
    }
}

proptest! {
    #[test]
    fn join_is_commutative_associative_idempotent(a in 0usize..35, b in 0usize..35, c in 0usize..35) {
        for rules in jax_modes() {
            let l = rules.lattice().unwrap();
            prop_assert_eq!(join(l, a, b), join(l, b, a));
            prop_assert_eq!(join(l, a, a), Some(a));
            let left = join(l, a, b).and_then(|ab| join(l, ab, c));
            let right = join(l, b, c).and_then(|bc| join(l, a, bc));
            prop_assert_eq!(left, right, "{}: ({}, {}, {})", rules, a, b, c);
        }
    }

    #[test]
    fn nary_join_is_the_folded_binary_join(nodes in prop::collection::vec(0usize..35, 1..7)) {
        for rules in jax_modes() {
            let l = rules.lattice().unwrap();
            let folded = nodes[1..].iter().try_fold(nodes[0], |acc, &n| join(l, acc, n));
            let nary = match l.lub_index(&nodes) {
                Lub::Node(c) => Some(c),
                _ => None,
            };
            prop_assert_eq!(folded, nary);
        }
    }
}

fn operand() -> impl Strategy<Value = Operand> {
    let dtype = prop::sample::select(
        DType::ALL
            .iter()
            .copied()
            .filter(|d| !matches!(d, DType::Complex32 | DType::BComplex32))
            .collect::<Vec<_>>(),
    );
    prop_oneof![
        dtype.clone().prop_map(Operand::array),
        dtype.prop_map(Operand::weak_array),
        prop::sample::select(PyType::ALL.to_vec()).prop_map(Operand::PyType),
        any::<bool>().prop_map(|b| Operand::Literal(Value::Bool(b))),
        (-1000i128..1000).prop_map(|i| Operand::Literal(Value::Int(i))),
    ]
}

proptest! {
    /// JAX joins a *set*: the result does not depend on the order of the operands.
    #[test]
    fn result_type_ignores_operand_order(mut ops in prop::collection::vec(operand(), 1..6), seed in any::<u64>()) {
        for rules in jax_modes() {
            let before = rules.result_type(&ops).map_err(|e| e.kind());
            let n = ops.len();
            ops.rotate_left((seed as usize) % n);
            ops.swap(0, (seed as usize / 7) % n);
            let after = rules.result_type(&ops).map_err(|e| e.kind());
            prop_assert_eq!(before, after);
        }
    }
}

/// A random DAG on `n` nodes: edges only go from a lower to a higher number.
fn dag() -> impl Strategy<Value = (usize, Vec<(usize, usize)>)> {
    (2usize..14).prop_flat_map(|n| {
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect();
        (
            Just(n),
            prop::sample::subsequence(pairs.clone(), 0..=pairs.len()),
        )
    })
}

/// Brute force: upper sets by search, least upper bound by definition.
struct Reference {
    upper: Vec<BTreeSet<usize>>,
}

impl Reference {
    fn new(n: usize, edges: &[(usize, usize)]) -> Self {
        let mut upper: Vec<BTreeSet<usize>> = (0..n).map(|i| BTreeSet::from([i])).collect();
        loop {
            let mut changed = false;
            for &(a, b) in edges {
                let ub = upper[b].clone();
                for x in ub {
                    changed |= upper[a].insert(x);
                }
            }
            if !changed {
                break;
            }
        }
        Reference { upper }
    }

    fn lub(&self, nodes: &[usize]) -> Result<usize, usize> {
        let mut cub = self.upper[nodes[0]].clone();
        for &n in &nodes[1..] {
            cub = cub.intersection(&self.upper[n]).copied().collect();
        }
        let least: Vec<usize> = cub
            .iter()
            .copied()
            .filter(|&c| cub.is_subset(&self.upper[c]))
            .collect();
        match least.as_slice() {
            [c] => Ok(*c),
            _ => Err(if cub.is_empty() { 0 } else { 1 }),
        }
    }
}

fn engine(n: usize, edges: &[(usize, usize)]) -> Lattice<String> {
    Lattice::from_edges((0..n).map(|a| {
        let above: Vec<String> = edges
            .iter()
            .filter(|e| e.0 == a)
            .map(|e| format!("n{}", e.1))
            .collect();
        (format!("n{a}"), above)
    }))
    .unwrap()
}

fn as_ref(l: &Lattice<String>, lub: Lub) -> Result<usize, usize> {
    match lub {
        Lub::Node(i) => Ok(l.node(i)[1..].parse().unwrap()),
        Lub::Undefined => Err(0),
        Lub::Ambiguous(_) => Err(1),
    }
}

proptest! {
    #[test]
    fn engine_agrees_with_brute_force((n, edges) in dag(), subset in prop::collection::vec(0usize..14, 1..5)) {
        let reference = Reference::new(n, &edges);
        let l = engine(n, &edges);
        let idx = |a: usize| l.index_of(&format!("n{a}")).unwrap();
        for a in 0..n {
            for b in 0..n {
                prop_assert_eq!(as_ref(&l, l.join_index(idx(a), idx(b))), reference.lub(&[a, b]));
                prop_assert_eq!(l.leq(idx(a), idx(b)), reference.upper[a].contains(&b));
            }
        }
        let subset: Vec<usize> = subset.into_iter().map(|s| s % n).collect();
        let indices: Vec<usize> = subset.iter().map(|&a| idx(a)).collect();
        prop_assert_eq!(as_ref(&l, l.lub_index(&indices)), reference.lub(&subset));
        let any_ambiguous = (0..n).any(|a| (0..n).any(|b| reference.lub(&[a, b]) == Err(1)));
        prop_assert_eq!(l.is_partial_lattice(), !any_ambiguous);
    }
}
