//! The lattice toolkit: `check` against a brute-force reference on generated graphs and
//! tables, the shipped example lattices, and `audit` reproducing the design note's claims.

use std::collections::BTreeSet;

use dtype_lattice::error::ErrorKind;
use dtype_lattice::table::JAX_DOC_TYPES;
use dtype_lattice::toolkit::audit::{Audit, COMPARE_DTYPES};
use dtype_lattice::toolkit::check::{
    Definition, DefinitionFile, Edges, MAX_LISTED, NonAssociative, OpTable, TableRows,
    check_lattice, check_table, lattice_of,
};
use dtype_lattice::{DType, Operand, PyType, RuleSet, Rules};
use proptest::prelude::*;

fn example(name: &str) -> DefinitionFile {
    let path = format!(
        "{}/../../examples/lattices/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    DefinitionFile::read(std::path::Path::new(&path)).unwrap()
}

fn edges(f: &DefinitionFile) -> &Edges {
    match &f.definition {
        Definition::Lattice(e) => e,
        _ => panic!("a lattice file"),
    }
}

fn pair(a: &str, b: &str) -> [String; 2] {
    [a.to_string(), b.to_string()]
}

// ---------------------------------------------------------------------------------------
// The brute-force reference: reachability by search, bounds by enumeration.
// ---------------------------------------------------------------------------------------

struct Reference {
    names: Vec<String>,
    /// reach[a][b]: a ≤ b.
    reach: Vec<Vec<bool>>,
    cyclic: bool,
}

impl Reference {
    fn new(e: &Edges) -> Reference {
        let mut names: Vec<String> = Vec::new();
        for (a, bs) in e {
            for n in std::iter::once(a).chain(bs) {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        let n = names.len();
        let idx = |s: &String| names.iter().position(|x| x == s).unwrap();
        let mut adj = vec![Vec::new(); n];
        for (a, bs) in e {
            for b in bs {
                adj[idx(a)].push(idx(b));
            }
        }
        let mut reach = vec![vec![false; n]; n];
        let mut cyclic = false;
        for (s, row) in reach.iter_mut().enumerate() {
            let mut stack = vec![s];
            row[s] = true;
            let mut seen = vec![false; n];
            while let Some(x) = stack.pop() {
                for &y in &adj[x] {
                    if y == s {
                        cyclic = true;
                    }
                    if !seen[y] {
                        seen[y] = true;
                        row[y] = true;
                        stack.push(y);
                    }
                }
            }
        }
        Reference {
            names,
            reach,
            cyclic,
        }
    }

    fn minimal_upper_bounds(&self, a: usize, b: usize) -> Vec<usize> {
        let n = self.names.len();
        let common: Vec<usize> = (0..n)
            .filter(|&c| self.reach[a][c] && self.reach[b][c])
            .collect();
        common
            .iter()
            .copied()
            .filter(|&c| !common.iter().any(|&d| d != c && self.reach[d][c]))
            .collect()
    }
}

/// Random graphs over up to 9 nodes, some with cycles.
fn graphs() -> impl Strategy<Value = Edges> {
    (2usize..9)
        .prop_flat_map(|n| {
            (
                Just(n),
                proptest::collection::vec((0..n, 0..n), 0..(n * 2)),
                any::<bool>(),
            )
        })
        .prop_map(|(n, pairs, allow_cycles)| {
            let mut e: Edges = (0..n).map(|i| (format!("n{i}"), Vec::new())).collect();
            for (a, b) in pairs {
                // Without cycles, edges only go up in index.
                let (a, b) = if allow_cycles || a < b {
                    (a, b)
                } else if a > b {
                    (b, a)
                } else {
                    continue;
                };
                if !e[a].1.contains(&format!("n{b}")) {
                    e[a].1.push(format!("n{b}"));
                }
            }
            e
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn check_agrees_with_the_brute_force_reference(e in graphs()) {
        let r = check_lattice(&e).unwrap();
        let reference = Reference::new(&e);
        prop_assert_eq!(r.acyclic, !reference.cyclic);
        if reference.cyclic {
            // The witness is a real cycle of given edges.
            let c = r.cycle.clone().unwrap();
            for k in 0..c.len() {
                let (a, b) = (&c[k], &c[(k + 1) % c.len()]);
                prop_assert!(e.iter().any(|(x, ys)| x == a && ys.contains(b)), "{:?}", c);
            }
            prop_assert!(!r.is_partial_lattice && !r.is_lattice);
            return Ok(());
        }
        let n = reference.names.len();
        let name = |i: usize| reference.names[i].clone();
        let mut undefined = BTreeSet::new();
        let mut ambiguous = BTreeSet::new();
        for a in 0..n {
            for b in a + 1..n {
                let mut m: Vec<String> = reference.minimal_upper_bounds(a, b).into_iter().map(name).collect();
                m.sort();
                match m.len() {
                    0 => { undefined.insert([name(a), name(b)]); }
                    1 => {}
                    _ => { ambiguous.insert(([name(a), name(b)], m)); }
                }
            }
        }
        let sorted = |[a, b]: [String; 2]| if a <= b { [a, b] } else { [b, a] };
        let got_undefined: BTreeSet<[String; 2]> = r.undefined_pairs.iter().cloned().map(sorted).collect();
        let want_undefined: BTreeSet<[String; 2]> = undefined.into_iter().map(sorted).collect();
        prop_assert_eq!(got_undefined, want_undefined);
        let got_ambiguous: BTreeSet<([String; 2], Vec<String>)> = r
            .ambiguous_pairs
            .iter()
            .map(|p| {
                let mut m = p.minimal_upper_bounds.clone();
                m.sort();
                (sorted(p.pair.clone()), m)
            })
            .collect();
        let want_ambiguous: BTreeSet<([String; 2], Vec<String>)> =
            ambiguous.into_iter().map(|(p, m)| (sorted(p), m)).collect();
        prop_assert_eq!(&got_ambiguous, &want_ambiguous);
        prop_assert_eq!(r.is_partial_lattice, want_ambiguous.is_empty());
        prop_assert_eq!(r.is_lattice, want_ambiguous.is_empty() && r.undefined_pairs.is_empty());
        // Redundant edges are exactly those implied by a path through another node.
        for (a, bs) in &e {
            let ia = reference.names.iter().position(|x| x == a).unwrap();
            for b in bs {
                let ib = reference.names.iter().position(|x| x == b).unwrap();
                let implied = (0..n).any(|c| c != ia && c != ib && reference.reach[ia][c] && reference.reach[c][ib]);
                prop_assert_eq!(r.redundant_edges.contains(&[a.clone(), b.clone()]), implied);
            }
        }
    }

    /// A lattice's join, written out as a table, is recognised, and the recovered lattice
    /// has the same join; a table with one cell changed is checked against brute force.
    #[test]
    fn tables_agree_with_the_brute_force_laws(e in graphs(), cell in (0usize..9, 0usize..9, 0usize..10)) {
        let Ok(l) = lattice_of(&e) else { return Ok(()) };
        let t = OpTable::from_lattice(&l);
        let n = t.rows();
        let mut rows: TableRows = (0..n)
            .map(|a| {
                let cells = (0..n).map(|b| (t.names()[b].clone(), t.get(a, b).map(|r| t.names()[r].clone()))).collect();
                (t.names()[a].clone(), cells)
            })
            .collect();
        let r = check_table(&rows).unwrap();
        prop_assert_eq!(r.representable_as_partial_lattice, l.is_partial_lattice());
        prop_assert_eq!(r.representable_as_lattice, l.is_lattice());
        if let Some(recovered) = &r.edges {
            let l2 = lattice_of(&recovered.0).unwrap();
            for a in t.names() {
                for b in t.names() {
                    if let (Some(x), Some(y)) = (l.join(a, b), l2.join(a, b)) {
                        let name = |l: &dtype_lattice::lattice::Lattice<String>, j| match j {
                            dtype_lattice::lattice::Lub::Node(i) => Some(l.node(i).clone()),
                            _ => None,
                        };
                        prop_assert_eq!(name(&l, x), name(&l2, y));
                    }
                }
            }
        }
        // Change one cell and compare every verdict with brute force.
        let (a, b, k) = (cell.0 % n, cell.1 % n, cell.2);
        rows[a].1[b].1 = if k == n { None } else { Some(t.names()[k % n].clone()) };
        let changed = dtype_lattice::toolkit::check::table_of(&rows).unwrap();
        let r = check_table(&rows).unwrap();
        let get = |x: usize, y: usize| changed.get(x, y);
        let commutative = (0..n).all(|x| (0..n).all(|y| get(x, y) == get(y, x)));
        let idempotent = (0..n).all(|x| get(x, x) == Some(x));
        let mut all = Vec::new();
        for x in 0..n { for y in 0..n { for z in 0..n {
            let left = get(x, y).and_then(|v| get(v, z));
            let right = get(y, z).and_then(|v| get(x, v));
            if left != right { all.push([x, y, z]); }
        }}}
        prop_assert_eq!(r.commutative, commutative);
        prop_assert_eq!(r.idempotent, idempotent);
        prop_assert_eq!(r.associative, all.is_empty());
        let representable = commutative && idempotent && all.is_empty();
        prop_assert_eq!(r.representable_as_partial_lattice, representable);
        if !representable && !all.is_empty() {
            // The counterexample is the smallest: fewest distinct types, then first.
            let key = |t: &[usize; 3]| (BTreeSet::from(*t).len(), *t);
            let want = all.iter().min_by_key(|t| key(t)).unwrap();
            let got = r.non_associative.as_ref().unwrap();
            let names: Vec<String> = want.iter().map(|&i| changed.names()[i].clone()).collect();
            prop_assert_eq!(got.types.to_vec(), names);
        }
    }
}

#[test]
fn the_design_notes_examples_get_the_right_verdicts() {
    let verdict = |f: &str| {
        let r = check_lattice(edges(&example(f))).unwrap();
        (r.is_partial_lattice, r.is_lattice)
    };
    for f in ["python.toml", "jax.json", "megengine.json", "mine.toml"] {
        assert_eq!(verdict(f), (true, true), "{f}");
    }
    for f in [
        "non-lattice-left.json",
        "option0.json",
        "option1.json",
        "option2.json",
        "option3.json",
    ] {
        assert_eq!(verdict(f), (true, false), "{f}");
    }
    for f in ["non-lattice-right.json", "numpy-doubling.json"] {
        assert_eq!(verdict(f), (false, false), "{f}");
    }
    // The witnesses the note names.
    let left = check_lattice(edges(&example("non-lattice-left.json"))).unwrap();
    assert_eq!(left.undefined_pairs, [pair("B", "C")]);
    let right = check_lattice(edges(&example("non-lattice-right.json"))).unwrap();
    assert_eq!(right.undefined_pairs, [pair("C", "D")]);
    assert_eq!(right.ambiguous_pairs[0].pair, pair("A", "B"));
    assert_eq!(right.ambiguous_pairs[0].minimal_upper_bounds, ["C", "D"]);
    let np = check_lattice(edges(&example("numpy-doubling.json"))).unwrap();
    let i8u8 = np
        .ambiguous_pairs
        .iter()
        .find(|p| p.pair == pair("uint8", "int8"))
        .unwrap();
    assert_eq!(i8u8.minimal_upper_bounds, ["float16", "int16"]); // in the file's order
    // Options 2 and 3 leave uint64 alone with floats; JAX closes it with uint64 -> f*.
    let o3 = check_lattice(edges(&example("option3.json"))).unwrap();
    assert!(o3.undefined_pairs.contains(&pair("float", "uint64")));
}

/// The name of a promotion as a node of the JAX lattice file: weak types are `int`,
/// `float`, `complex`.
fn jax_node(p: dtype_lattice::Promotion) -> String {
    if p.weak_type {
        PyType::of_kind(p.dtype.kind()).unwrap().name().to_string()
    } else {
        p.dtype.name().to_string()
    }
}

#[test]
fn jax_json_is_the_jax_rule_set_with_x64() {
    let l = lattice_of(edges(&example("jax.json"))).unwrap();
    let rules = Rules::jax().x64(true);
    let name = |o: &Operand| match o {
        Operand::PyType(t) => t.name().to_string(),
        o => o.to_string(),
    };
    for a in &JAX_DOC_TYPES {
        for b in &JAX_DOC_TYPES {
            let want = jax_node(rules.result_type(&[*a, *b]).unwrap());
            let got = match l.join(&name(a), &name(b)).unwrap() {
                dtype_lattice::lattice::Lub::Node(i) => l.node(i).clone(),
                other => panic!("{other:?}"),
            };
            assert_eq!(got, want, "{a} ∨ {b}");
        }
    }
}

#[test]
fn megengine_json_is_megengines_promotion_of_tensors() {
    let l = lattice_of(edges(&example("megengine.json"))).unwrap();
    let rules = Rules::new(RuleSet::MEGENGINE);
    let dtypes = rules.dtypes();
    assert_eq!(dtypes.len(), l.len());
    for &a in &dtypes {
        for &b in &dtypes {
            let want = rules
                .result_type(&[Operand::array(a), Operand::array(b)])
                .unwrap()
                .dtype;
            let got = l
                .join(&a.name().to_string(), &b.name().to_string())
                .unwrap();
            assert_eq!(
                got,
                dtype_lattice::lattice::Lub::Node(l.index_of(&want.name().to_string()).unwrap()),
                "{a} + {b}"
            );
        }
    }
}

#[test]
fn a_thousand_node_lattice_is_checked() {
    // A 40 × 25 grid (each node below its right and upper neighbours) is a lattice.
    let (w, h) = (40, 25);
    let e: Edges = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let mut up = Vec::new();
            if x + 1 < w {
                up.push(format!("g{}", i + 1));
            }
            if y + 1 < h {
                up.push(format!("g{}", i + w));
            }
            (format!("g{i}"), up)
        })
        .collect();
    let r = check_lattice(&e).unwrap();
    assert_eq!(r.nodes, 1000);
    assert!(r.is_lattice);
}

#[test]
fn audit_reproduces_the_design_notes_claims() {
    // The note's claims are about NumPy's own dtypes (not those ml_dtypes adds).
    let own: Vec<DType> = Rules::numpy()
        .dtypes()
        .into_iter()
        .filter(|&d| !dtype_lattice::ufunc::is_ml_dtype(d))
        .collect();
    assert_eq!(own.len(), 14);
    let np = Audit::of_rules(&Rules::numpy(), None, Some(&own)).unwrap();
    assert!(np.commutative && !np.associative);
    let t = np
        .non_associative_triples
        .iter()
        .find(|t| t.types == ["int8", "uint8", "float16"])
        .expect("the note's counterexample");
    assert_eq!(
        t.results,
        [Some("float32".to_string()), Some("float16".to_string())]
    );
    // NumPy widens int32 + float32 to float64 and never overflows.
    let has = |list: &[dtype_lattice::toolkit::audit::PairResult], a: &str, b: &str, r: &str| {
        list.iter().any(|p| p.pair == pair(a, b) && p.result == r)
    };
    assert!(has(&np.criteria.widening, "int32", "float32", "float64"));
    assert!(np.criteria.overflow.is_empty() && np.criteria.component_loss.is_empty());

    for x64 in [false, true] {
        let jax = Audit::of_rules(&Rules::jax().x64(x64), None, None).unwrap();
        assert!(jax.commutative && jax.associative, "x64 {x64}");
        assert!(jax.criteria.component_loss.is_empty());
    }
    let jax = Audit::of_rules(&Rules::jax().x64(true), None, Some(&COMPARE_DTYPES)).unwrap();
    assert!(jax.criteria.overflow.is_empty());
    assert!(has(
        &jax.criteria.magnitude_loss,
        "int64",
        "float16",
        "float16"
    ));
    assert!(has(
        &jax.criteria.precision_loss,
        "int32",
        "float32",
        "float32"
    ));
    // uint64 + int8 is JAX's weakly typed float64: it joins the types as ~float64.
    assert_eq!(jax.closure, ["~float64"]);

    // The lattice file of JAX audits exactly as the rule set does.
    let file = Audit::of_lattice_on(
        "jax.json",
        &lattice_of(edges(&example("jax.json"))).unwrap(),
        &{
            let l = lattice_of(edges(&example("jax.json"))).unwrap();
            COMPARE_DTYPES
                .iter()
                .map(|d| l.index_of(&d.name().to_string()).unwrap())
                .collect::<Vec<_>>()
        },
    )
    .unwrap();
    let (mut a, mut b) = (file.summary(), jax.summary());
    a.subject.clear();
    b.subject.clear();
    assert_eq!(a, b);

    // Mine: still a lattice, fewer losses than JAX, no magnitude loss at all.
    let mine_l = lattice_of(edges(&example("mine.toml"))).unwrap();
    let keep: Vec<usize> = COMPARE_DTYPES
        .iter()
        .map(|d| mine_l.index_of(&d.name().to_string()).unwrap())
        .collect();
    let mine = Audit::of_lattice_on("mine", &mine_l, &keep)
        .unwrap()
        .summary();
    assert!(mine.magnitude_loss == 0 && mine.overflow == 0 && mine.component_loss == 0);
    assert!(mine.precision_loss + mine.magnitude_loss < b.precision_loss + b.magnitude_loss);
}

#[test]
fn component_loss_and_overflow_are_found() {
    let e: Edges = vec![
        ("complex64".into(), vec!["float32".into()]),
        ("uint32".into(), vec!["int32".into()]),
    ];
    let a = Audit::of_lattice("bad", &lattice_of(&e).unwrap()).unwrap();
    assert_eq!(a.criteria.component_loss.len(), 1);
    assert_eq!(a.criteria.overflow[0].pair, pair("uint32", "int32"));
    // Unsupported dtypes are an error, not a column of refusals.
    let legacy = Rules::new(RuleSet::NUMPY_LEGACY);
    let err = Audit::of_rules(&legacy, None, Some(&[DType::BFloat16])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnsupportedOperand);
}

/// Every non-associative triple the real libraries show with array addition
/// (`tools/gen_audit_fixtures.py`): 28 for NumPy 2, none for JAX with x64 (where uint64 + int8
/// is a weakly typed float64), and PyTorch's and TensorFlow's, which add's kernels shape.
#[test]
fn audit_finds_exactly_the_libraries_non_associative_triples() {
    for (file, rules) in [
        ("numpy.json", Rules::numpy()),
        ("jax_x64.json", Rules::jax().x64(true)),
        ("torch.json", Rules::new(RuleSet::TORCH)),
        ("tensorflow.json", Rules::new(RuleSet::TENSORFLOW)),
    ] {
        let path = format!(
            "{}/../../tests/fixtures/audit/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let types: Vec<DType> = v["types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().parse().unwrap())
            .collect();
        let want: BTreeSet<(Vec<String>, Vec<Option<String>>)> = v["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| serde_json::from_value(serde_json::json!([c["types"], c["results"]])).unwrap())
            .collect();
        let add = Some(dtype_lattice::Op::Add);
        let audit = Audit::of_rules(&rules, add, Some(&types)).unwrap();
        let named = |t: &NonAssociative| (t.types.to_vec(), t.results.to_vec());
        // The audit lists the first MAX_LISTED and counts them all; its table lists all.
        let listed: BTreeSet<_> = audit.non_associative_triples.iter().map(named).collect();
        assert_eq!(audit.non_associative_triple_count, want.len(), "{file}");
        assert_eq!(listed.len(), want.len().min(MAX_LISTED), "{file}");
        assert!(listed.is_subset(&want), "{file}");
        let (table, given) = Audit::table_of_rules(&rules, add, Some(&types)).unwrap();
        let got: BTreeSet<_> = table
            .non_associative_capped(given, usize::MAX)
            .1
            .iter()
            .map(|x| named(&NonAssociative::of(&table, x)))
            .collect();
        assert_eq!(got, want, "{file}");
    }
}
