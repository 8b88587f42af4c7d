//! Criterion benches for the lattice toolkit.
//!
//! - `check_lattice_1000`: `check` of a 1,000-node lattice (a 40 × 25 grid), from edges to
//!   verdict (engine build, join table, pair lists, redundant edges).
//! - `check_table_100`: `check` of the 100-type promotion table of a 10 × 10 grid lattice
//!   (the quadratic lattice recovery, no cubic search).
//! - `audit_numpy`: `audit --rules numpy` (all 14 dtypes, every triple).
//! - `audit_compare`: `audit --compare --x64` (every rule set on the 15 dtypes).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dtype_lattice::lattice::Lattice;
use dtype_lattice::toolkit::audit::{Audit, COMPARE_DTYPES};
use dtype_lattice::toolkit::check::{Edges, OpTable, TableRows, check_lattice, check_table};
use dtype_lattice::{RuleSet, Rules};

fn grid(w: usize, h: usize) -> Edges {
    (0..w * h)
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
        .collect()
}

fn benches(c: &mut Criterion) {
    let e = grid(40, 25);
    c.bench_function("check_lattice_1000", |b| {
        b.iter(|| check_lattice(black_box(&e)).unwrap())
    });
    let l = Lattice::from_edges(grid(10, 10)).unwrap();
    let t = OpTable::from_lattice(&l);
    let rows: TableRows = (0..t.rows())
        .map(|a| {
            let cells = (0..t.rows())
                .map(|b| {
                    (
                        t.names()[b].clone(),
                        t.get(a, b).map(|r| t.names()[r].clone()),
                    )
                })
                .collect();
            (t.names()[a].clone(), cells)
        })
        .collect();
    c.bench_function("check_table_100", |b| {
        b.iter(|| check_table(black_box(&rows)).unwrap())
    });
    c.bench_function("audit_numpy", |b| {
        b.iter(|| Audit::of_rules(black_box(&Rules::numpy()), None, None).unwrap())
    });
    c.bench_function("audit_compare", |b| {
        b.iter(|| {
            for set in RuleSet::all() {
                let r = Rules::new(set).x64(true);
                let has = r.dtypes();
                let t: Vec<_> = COMPARE_DTYPES
                    .iter()
                    .copied()
                    .filter(|d| has.contains(d))
                    .collect();
                black_box(Audit::of_rules(&r, None, Some(&t)).unwrap());
            }
        })
    });
}

criterion_group! {
    name = toolkit;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(toolkit);
