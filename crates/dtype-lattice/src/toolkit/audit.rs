//! Auditing a promotion system against the design note's criteria: the `audit` command.
//!
//! JAX's design note weighs candidate lattices by hand against five criteria. This module
//! measures them, for any rule set or lattice, over every pair of types:
//!
//! - **commutativity and associativity** of the promotion (with every non-associative triple);
//! - **component loss**: a complex input, a real result;
//! - **overflow**: an integer input whose range the integer result does not contain
//!   (uint32 → int32);
//! - **magnitude loss**: an input whose largest value exceeds the result's largest finite value
//!   (int64 → float16);
//! - **precision loss**: an input whose values (within the result's range) the result cannot
//!   all hold exactly (int32 → float32, float16 → bfloat16, bfloat16's tiny values → float16);
//! - **widening**: a result wider than both inputs (int32 + float32 → float64 in NumPy).
//!
//! ```
//! use dtype_lattice::toolkit::audit::Audit;
//! use dtype_lattice::Rules;
//! // NumPy's own dtypes (those ml_dtypes adds only promote through their registered casts).
//! let own: Vec<_> = Rules::numpy().dtypes().into_iter()
//!     .filter(|&d| !dtype_lattice::ufunc::is_ml_dtype(d)).collect();
//! let np = Audit::of_rules(&Rules::numpy(), None, Some(&own)).unwrap();
//! assert!(!np.associative);
//! // The design note's counterexample: (i8 + u8) + f16 is float32, i8 + (u8 + f16) float16.
//! let t = np.non_associative_triples.iter().find(|t| t.types == ["int8", "uint8", "float16"]).unwrap();
//! assert_eq!(t.results, [Some("float32".to_string()), Some("float16".to_string())]);
//! let jax = Audit::of_rules(&Rules::jax().x64(true), None, None).unwrap();
//! assert!(jax.associative && jax.commutative);
//! ```

use serde::Serialize;

use crate::dtype::{DType, Kind, Repr};
use crate::error::{Error, Reason};
use crate::lattice::Lattice;
use crate::operand::Operand;
use crate::ops::Op;
use crate::rules::Rules;
use crate::toolkit::check::{
    MAX_LISTED, MAX_TABLE_TYPES, Meaning, NonAssociative, NonCommutative, OpTable, meaning,
};

/// The most types whose ordered triples an audit checks for associativity (the check is
/// cubic): [`MAX_TABLE_TYPES`]. A lattice file's join is audited at any size when it is a
/// partial lattice, as such a join is associative; otherwise its types (with their joins'
/// closure) must be at most this many.
pub const MAX_AUDIT_TYPES: usize = MAX_TABLE_TYPES;

/// The dtypes `audit --compare` measures every rule set on by default: the 15 dtypes of the
/// tables in JAX's design note and documentation (bool, the 8 integers, bfloat16, the IEEE
/// floats and the 2 complex types), those a rule set has.
pub const COMPARE_DTYPES: [DType; 15] = [
    DType::Bool,
    DType::UInt8,
    DType::UInt16,
    DType::UInt32,
    DType::UInt64,
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
    DType::BFloat16,
    DType::Float16,
    DType::Float32,
    DType::Float64,
    DType::Complex64,
    DType::Complex128,
];

/// A pair of types and what they promote to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PairResult {
    /// The two types.
    pub pair: [String; 2],
    /// The result.
    pub result: String,
}

/// The pairs that break each design criterion.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Criteria {
    /// A complex input, a real result.
    pub component_loss: Vec<PairResult>,
    /// An integer input whose range the integer result does not contain.
    pub overflow: Vec<PairResult>,
    /// An input whose largest value exceeds the result's largest finite value.
    pub magnitude_loss: Vec<PairResult>,
    /// An input whose values within the result's range the result cannot all hold exactly.
    pub precision_loss: Vec<PairResult>,
    /// A result wider (in bits) than both inputs.
    pub widening: Vec<PairResult>,
}

impl Criteria {
    /// The names of the five criteria, in order.
    pub const NAMES: [&'static str; 5] = [
        "component_loss",
        "overflow",
        "magnitude_loss",
        "precision_loss",
        "widening",
    ];

    /// The lists in [`Criteria::NAMES`] order.
    pub fn lists(&self) -> [&[PairResult]; 5] {
        [
            &self.component_loss,
            &self.overflow,
            &self.magnitude_loss,
            &self.precision_loss,
            &self.widening,
        ]
    }
}

/// One rule set's (or lattice's) audit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Audit {
    /// What was audited: a rule set with its options, or a lattice file's name.
    pub subject: String,
    /// The types asked about, in order.
    pub types: Vec<String>,
    /// The further types their results lead to (a NumPy float64 among float16 and int32, a
    /// JAX `~float64`), which the bracketings of triples of the types pass through.
    pub closure: Vec<String>,
    /// Unordered pairs of types (each type with itself included).
    pub pairs: usize,
    /// Pairs without a result (the rules refuse, or the lattice has no join): the first
    /// [`MAX_LISTED`] in type order.
    pub refused_pairs: Vec<[String; 2]>,
    /// How many pairs have no result.
    pub refused_pair_count: usize,
    /// Whether `a ∘ b = b ∘ a` for all pairs.
    pub commutative: bool,
    /// The pairs where it fails (the first [`MAX_LISTED`]).
    pub non_commutative_pairs: Vec<NonCommutative>,
    /// How many pairs are not commutative.
    pub non_commutative_pair_count: usize,
    /// Whether `(a ∘ b) ∘ c = a ∘ (b ∘ c)` for all ordered triples of the types asked about
    /// (the intermediate results may be any type of the closure).
    pub associative: bool,
    /// The ordered triples where it fails, fewest distinct types first (the first
    /// [`MAX_LISTED`]).
    pub non_associative_triples: Vec<NonAssociative>,
    /// How many ordered triples are not associative.
    pub non_associative_triple_count: usize,
    /// The five criteria, each the pairs (`a` before `b` in type order) that break it.
    pub criteria: Criteria,
}

/// The dtype a node name stands for in the criteria: a dtype (`~float64`, a weakly typed
/// array, counts as its dtype), or for a Python scalar type its 64-bit default (JAX resolves
/// `u64 ∨ i64 = f*` to float64 with x64, as NumPy does).
fn numeric(name: &str) -> Option<DType> {
    match meaning(name.strip_prefix('~').unwrap_or(name))? {
        Meaning::DType(d) => Some(d),
        Meaning::Python(t) => Some(t.default_dtype()),
    }
}

/// `x → r` overflows: x is an integer whose range the integer r does not contain.
pub fn overflows(x: DType, r: DType) -> bool {
    match (x.info().repr, r.info().repr) {
        (Repr::Int { min, max }, Repr::Int { min: lo, max: hi }) => min < lo || max > hi,
        _ => false,
    }
}

/// `x → r` loses magnitude: x's largest value exceeds r's largest finite value (integer
/// pairs are [`overflows`]' business; bool loses nothing).
pub fn loses_magnitude(x: DType, r: DType) -> bool {
    let (kx, kr) = (x.kind(), r.kind());
    if kx == Kind::Bool || kr == Kind::Bool || (kx.is_integer() && kr.is_integer()) {
        return false;
    }
    x.max_value() > r.max_value()
}

/// `x → r` loses precision: some value of x within r's finite range is not exactly a value
/// of r (a fraction in an integer, an integer beyond 2^p in a p-bit significand, a bit of
/// significand or a tiny subnormal between floats, a negative value in an unsigned format).
pub fn loses_precision(x: DType, r: DType) -> bool {
    match (x.info().repr, r.info().repr) {
        (Repr::Bool, _) | (_, Repr::Bool) | (Repr::Int { .. }, Repr::Int { .. }) => false,
        (Repr::Key(_) | Repr::Void, _) | (_, Repr::Key(_) | Repr::Void) => false,
        (Repr::Float(_), Repr::Int { .. }) => true,
        (Repr::Int { min, max }, Repr::Float(f)) => {
            if min < 0 && !f.signed {
                return true;
            }
            let bound = min.unsigned_abs().max(max.unsigned_abs()) as f64;
            let exact = 2f64.powi(f.precision_bits() as i32);
            bound.min(f.max) > exact
        }
        (Repr::Float(a), Repr::Float(b)) => {
            a.precision_bits() > b.precision_bits()
                || a.smallest_subnormal() < b.smallest_subnormal()
                || (a.signed && !b.signed)
        }
    }
}

/// Checks the five criteria for one pair and its result, pushing the pair where broken.
fn judge(c: &mut Criteria, a: DType, b: DType, r: DType, pr: PairResult) {
    let complex = |d: DType| d.kind() == Kind::Complex;
    let either = |f: fn(DType, DType) -> bool| f(a, r) || f(b, r);
    if (complex(a) || complex(b)) && !complex(r) {
        c.component_loss.push(pr.clone());
    }
    if either(overflows) {
        c.overflow.push(pr.clone());
    }
    if either(loses_magnitude) {
        c.magnitude_loss.push(pr.clone());
    }
    if either(loses_precision) {
        c.precision_loss.push(pr.clone());
    }
    if r.bits() > a.bits().max(b.bits()) {
        c.widening.push(pr);
    }
}

impl Audit {
    /// Audits a promotion table: the laws over all its operands; pairs, refusals and the
    /// criteria over the first `given` operands (the ones asked about; the rest are results
    /// they lead to), for pairs whose operands and result have a numeric meaning (see
    /// [`crate::toolkit::check::meaning`]; a weakly typed `~float64` counts as float64).
    ///
    /// # Errors
    ///
    /// `InvalidDefinition` when more than [`MAX_AUDIT_TYPES`] operands are asked about (the
    /// associativity search is cubic).
    pub fn of_table(subject: impl Into<String>, t: &OpTable, given: usize) -> Result<Audit, Error> {
        Self::of_table_known(subject, t, given, false)
    }

    /// [`Audit::of_table`], skipping the cubic associativity search when the operation is
    /// known to be associative (a partial lattice's join); refuses more than
    /// [`MAX_AUDIT_TYPES`] operands otherwise.
    fn of_table_known(
        subject: impl Into<String>,
        t: &OpTable,
        given: usize,
        associative: bool,
    ) -> Result<Audit, Error> {
        let n = given.min(t.rows());
        if !associative && n > MAX_AUDIT_TYPES {
            return Err(Reason::InvalidDefinition {
                reason: format!(
                    "auditing associativity over {n} types (a join with ambiguous pairs) takes \
                     {n}³ steps; at most {MAX_AUDIT_TYPES} types are audited (give --types)"
                ),
            }
            .into());
        }
        let name = |i: usize| t.names()[i].clone();
        let numbers: Vec<Option<DType>> = t.names().iter().map(|s| numeric(s)).collect();
        let mut refused = Vec::new();
        let mut refused_count = 0;
        let mut criteria = Criteria::default();
        for a in 0..n {
            for b in a..n {
                let Some(r) = t.get(a, b) else {
                    refused_count += 1;
                    if refused.len() < MAX_LISTED {
                        refused.push([name(a), name(b)]);
                    }
                    continue;
                };
                if let (Some(x), Some(y), Some(z)) = (numbers[a], numbers[b], numbers[r]) {
                    let pr = PairResult {
                        pair: [name(a), name(b)],
                        result: name(r),
                    };
                    judge(&mut criteria, x, y, z, pr);
                }
            }
        }
        let non_commutative = t.non_commutative();
        let non_commutative_pair_count = non_commutative.len();
        let non_commutative_pairs: Vec<NonCommutative> = non_commutative
            .into_iter()
            .take(MAX_LISTED)
            .map(|(a, b)| NonCommutative {
                pair: [name(a), name(b)],
                results: [t.get(a, b).map(name), t.get(b, a).map(name)],
            })
            .collect();
        let (non_associative_triple_count, triples) = if associative {
            (0, Vec::new())
        } else {
            t.non_associative_capped(n, MAX_LISTED)
        };
        let non_associative_triples: Vec<NonAssociative> =
            triples.iter().map(|x| NonAssociative::of(t, x)).collect();
        Ok(Audit {
            subject: subject.into(),
            types: (0..n).map(name).collect(),
            closure: (n..t.rows()).map(name).collect(),
            pairs: n * (n + 1) / 2,
            refused_pairs: refused,
            refused_pair_count: refused_count,
            commutative: non_commutative_pair_count == 0,
            non_commutative_pairs,
            non_commutative_pair_count,
            associative: non_associative_triple_count == 0,
            non_associative_triples,
            non_associative_triple_count,
            criteria,
        })
    }

    /// Audits a rule set (with its options) on arrays of `types` (default: all the dtypes
    /// it has), under `op` (default: plain promotion). Results join the types when they are
    /// new (a NumPy float64, or JAX's weakly typed `~float64` for uint64 + int8, which
    /// promotes as `f*`), so that associativity is decided on what the library computes.
    ///
    /// # Errors
    ///
    /// The rule set's error for a dtype of `types` it does not have (`UnsupportedOperand`, as
    /// promoting that dtype alone gives); refusals between known dtypes are recorded as refused
    /// cells, not returned.
    ///
    /// ```
    /// use dtype_lattice::toolkit::audit::Audit;
    /// use dtype_lattice::{DType, Rules};
    /// let a = Audit::of_rules(&Rules::numpy(), None, Some(&[DType::Int32, DType::Float32])).unwrap();
    /// // int32 + float32 → float64: wider than both, and float64 joins the types.
    /// assert_eq!(a.types, ["int32", "float32"]);
    /// assert_eq!(a.closure, ["float64"]);
    /// assert_eq!(a.criteria.widening[0].pair, ["int32", "float32"]);
    /// ```
    pub fn of_rules(
        rules: &Rules,
        op: Option<Op>,
        types: Option<&[DType]>,
    ) -> Result<Audit, Error> {
        let (t, given) = Self::table_of_rules(rules, op, types)?;
        let mut subject = rules.to_string();
        if let Some(op) = op {
            subject.push_str(&format!(", {op}"));
        }
        Audit::of_table(subject, &t, given)
    }

    /// The table [`Audit::of_rules`] audits: the arrays of `types` (default: all the rule
    /// set's dtypes) and the results they lead to, under `op`; with the number of operands
    /// asked about (they come first). Its [`OpTable::non_associative`] lists every triple an
    /// audit counts.
    ///
    /// # Errors
    ///
    /// As [`Audit::of_rules`]: the rule set's error for a dtype of `types` it does not have.
    pub fn table_of_rules(
        rules: &Rules,
        op: Option<Op>,
        types: Option<&[DType]>,
    ) -> Result<(OpTable, usize), Error> {
        let mut elems: Vec<Operand> = Vec::new();
        for d in types.map_or_else(|| rules.dtypes(), <[DType]>::to_vec) {
            // A dtype the rule set does not have is an error, not a column of refusals.
            rules.evaluate(None, &[Operand::array(d)])?;
            if !elems.contains(&Operand::array(d)) {
                elems.push(Operand::array(d));
            }
        }
        let first_round = elems.len();
        let mut cells: Vec<Vec<Option<Operand>>> = Vec::new();
        let mut done = 0;
        while done < elems.len() {
            // Extend the table by the rows and columns of the elements added last round.
            let n = elems.len();
            for row in cells.iter_mut() {
                row.resize(n, None);
            }
            cells.resize(n, vec![None; n]);
            for a in 0..n {
                for b in 0..n {
                    if a < done && b < done {
                        continue;
                    }
                    cells[a][b] = match rules.evaluate(op, &[elems[a], elems[b]]) {
                        Ok(p) => Some(Operand::Array {
                            dtype: p.dtype,
                            weak: p.weak_type,
                        }),
                        Err(e) if e.is_refusal() => None,
                        Err(e) => return Err(e),
                    };
                }
            }
            done = n;
            for r in cells.iter().flatten().flatten() {
                if !elems.contains(r) {
                    elems.push(*r);
                }
            }
        }
        let given = first_round;
        let n = elems.len();
        let names: Vec<String> = elems.iter().map(|e| e.to_string()).collect();
        let t = OpTable::from_fn(names, n, |a, b| {
            cells[a][b].map(|r| elems.iter().position(|&e| e == r).expect("closed"))
        });
        Ok((t, given))
    }

    /// Audits a lattice's join over all its nodes.
    ///
    /// # Errors
    ///
    /// As [`Audit::of_lattice_on`].
    ///
    /// ```
    /// use dtype_lattice::toolkit::{audit::Audit, check::lattice_of};
    /// let l = lattice_of(&[("int32".into(), vec!["float32".into()])]).unwrap();
    /// let a = Audit::of_lattice("mine", &l).unwrap();
    /// assert_eq!(a.criteria.precision_loss.len(), 1); // int32 → float32
    /// ```
    pub fn of_lattice(subject: impl Into<String>, l: &Lattice<String>) -> Result<Audit, Error> {
        let all: Vec<usize> = (0..l.len()).collect();
        Audit::of_lattice_on(subject, l, &all)
    }

    /// Audits a lattice's join on some of its nodes (`keep`, by index); associativity is
    /// decided over them and every node their joins lead to.
    ///
    /// # Errors
    ///
    /// `InvalidDefinition` for more than [`MAX_AUDIT_TYPES`] nodes when the lattice is not a
    /// partial lattice (its join is then not known to be associative, and the search is cubic).
    ///
    /// ```
    /// use dtype_lattice::toolkit::{audit::Audit, check::lattice_of};
    /// let l = lattice_of(&[("int".into(), vec!["int8".into(), "uint8".into()]), ("int8".into(), vec!["int16".into()]), ("uint8".into(), vec!["int16".into()])]).unwrap();
    /// let keep: Vec<usize> = ["int8", "uint8"].iter().map(|n| l.index_of(&n.to_string()).unwrap()).collect();
    /// let a = Audit::of_lattice_on("mine", &l, &keep).unwrap();
    /// assert_eq!((a.types.len(), a.closure.len(), a.pairs), (2, 1, 3));
    /// ```
    pub fn of_lattice_on(
        subject: impl Into<String>,
        l: &Lattice<String>,
        keep: &[usize],
    ) -> Result<Audit, Error> {
        let t = OpTable::from_lattice(l).restrict(keep);
        let given = keep.len().min(t.rows());
        // A partial lattice's join is associative: with (a ∨ b) ∨ c and a ∨ (b ∨ c) both
        // the least upper bound of {a, b, c}, or both undefined when there is none.
        Audit::of_table_known(subject, &t, given, l.is_partial_lattice())
    }

    /// The counts `audit --compare` prints.
    pub fn summary(&self) -> Summary {
        let c = &self.criteria;
        Summary {
            subject: self.subject.clone(),
            types: self.types.len(),
            pairs: self.pairs,
            refused_pairs: self.refused_pair_count,
            non_commutative_pairs: self.non_commutative_pair_count,
            non_associative_triples: self.non_associative_triple_count,
            component_loss: c.component_loss.len(),
            overflow: c.overflow.len(),
            magnitude_loss: c.magnitude_loss.len(),
            precision_loss: c.precision_loss.len(),
            widening: c.widening.len(),
        }
    }
}

/// One row of `audit --compare`: an audit's counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// What was audited.
    pub subject: String,
    /// Number of types.
    pub types: usize,
    /// Number of unordered pairs.
    pub pairs: usize,
    /// Pairs without a result.
    pub refused_pairs: usize,
    /// Pairs whose two orders differ.
    pub non_commutative_pairs: usize,
    /// Ordered triples whose bracketings differ.
    pub non_associative_triples: usize,
    /// Pairs with component loss.
    pub component_loss: usize,
    /// Pairs with overflow.
    pub overflow: usize,
    /// Pairs with magnitude loss.
    pub magnitude_loss: usize,
    /// Pairs with precision loss.
    pub precision_loss: usize,
    /// Pairs whose result is wider than both.
    pub widening: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn the_notes_examples_of_each_criterion() {
        assert!(overflows(UInt32, Int32) && !overflows(UInt32, Int64));
        assert!(loses_magnitude(Int64, Float16) && !loses_magnitude(Int64, Float64));
        assert!(loses_magnitude(Float32, BFloat16)); // 3.4028e38 > 3.3895e38
        assert!(loses_precision(Int32, Float32) && loses_precision(Int64, Float64));
        assert!(!loses_precision(Int16, Float32) && !loses_precision(UInt8, Float16));
        assert!(loses_precision(Int16, Float16)); // 2049 is not a float16
        assert!(loses_precision(Float16, BFloat16) && loses_precision(BFloat16, Float16));
        assert!(!loses_precision(BFloat16, Float32) && !loses_precision(Float16, Float32));
        assert!(loses_precision(Float32, Int64) && !loses_precision(Bool, Float8E4M3Fn));
        assert!(loses_precision(Int8, Float8E4M3Fn)); // 17 is not a float8_e4m3fn
    }
}
