//! jit's executable: a closed jaxpr compiled once into a plan that evaluates it without a
//! trace, as XLA compiles a jitted function.
//!
//! Compilation ([`Executable::compile`]):
//!
//! 1. **Inlining.** Nested call primitives (`jit`, `custom_jvp_call`, `custom_vjp_call`, whose
//!    implementations apply their jaxpr) are flattened into one list of primitive calls over
//!    numbered slots.
//! 2. **Constant folding.** A call whose operands are all literals or constants (an `iota`, a
//!    `broadcast_in_dim` of a literal, arithmetic on literals: everything omnistaging stages
//!    that does not depend on the arguments) is evaluated once, here; its result becomes a
//!    constant. A call that fails is kept, so that it fails when run, as it would unfolded.
//! 3. **XLA's algebraic simplifications** that change values ([`super::simplify`]: `a /
//!    sqrt(b)` as `a · rsqrt(b)`, `(a/b)/c` as `a/(b·c)`, `log(exp(a))` as `a`, …, and a
//!    division by a constant as a product by its reciprocal, in lowering), as XLA rewrites a
//!    jitted computation before computing it.
//! 4. **Dead code elimination.** Calls none of whose outputs reach the result are dropped.
//! 5. **Fusion.** Chains of elementwise primitives over one large shape (operands of that
//!    shape or 0-d) become one group that runs chunk by chunk: each chunk of every operand
//!    goes through the whole chain while it is in cache, the chunks spread over the cores
//!    (rayon), and only the values used outside the chain are written out whole.
//! 6. **Liveness.** Each slot is released right after its last use, so its buffer goes back
//!    to the pool for a later result.
//!
//! Every primitive still computes what its own implementation computes: a fused chunk runs a
//! member's slice kernel ([`crate::lax::chunk`]: the impl's own loop, reading its operands'
//! stretches where they lie and writing an output's stretch in place) or else the impl on
//! arrays of the chunk, so a compiled jaxpr computes bit for bit what the jaxpr's interpreter
//! ([`ClosedJaxpr::call`]) computes, but for XLA's simplifications and its contraction of
//! products into additions (both as XLA's CPU backend applies them); otherwise only the order
//! of independent work and where buffers live change.

use std::collections::HashMap;
use std::sync::Arc;

use dtype_lattice::Error;
use dtype_lattice::error::Exception;
use rayon::prelude::*;
use smallvec::SmallVec;

use super::chunk::{Arg, Kernel};
use super::fma;
use super::loops::LoopPlan;
use crate::array::{Array, ShapedArray, Storage, layout};
use crate::core::jaxpr::{Atom, ClosedJaxpr};
use crate::core::{Avals, Outputs, Param, Params, Primitive};

/// Elements per chunk of a fused chain: 16 Ki elements (64 KiB of float32 per operand), so a
/// chain's operands and intermediates stay in the second-level cache.
const CHUNK: usize = 1 << 14;

/// The smallest shape a chain is fused over (smaller ones run a primitive at a time, where a
/// chunk's bookkeeping would cost more than the cache saves).
const FUSE_MIN: usize = 2 * CHUNK;

/// Constants are folded up to this many elements (a larger one is computed when run rather
/// than kept in the executable).
const FOLD_MAX: usize = 1 << 20;

/// An operand: a slot, or a constant (a literal, a closed-over value or a folded result).
#[derive(Clone, Debug)]
pub(super) enum Src {
    Slot(usize),
    Const(Array),
}

/// One primitive application.
#[derive(Clone, Debug)]
pub(super) struct Call {
    pub(super) prim: &'static Primitive,
    pub(super) params: Params,
    pub(super) inputs: SmallVec<[Src; 4]>,
    pub(super) outs: SmallVec<[usize; 1]>,
    pub(super) avals: Avals,
}

/// An operand of a fused member.
#[derive(Clone, Debug)]
enum Local {
    /// The chunk of the group's `k`th chunked input.
    Chunked(usize),
    /// A 0-d value (a constant or a slot), passed whole.
    Whole(Src),
    /// The chunk computed by the group's `j`th member.
    Member(usize),
}

#[derive(Clone, Debug)]
struct Member {
    prim: &'static Primitive,
    params: Params,
    inputs: SmallVec<[Local; 3]>,
    aval: ShapedArray,
    /// Its kernel on slices, if it may have one (else, or where the kernel declines, its impl
    /// runs on arrays of the chunk).
    kernel: Option<Kernel>,
}

/// A chain of elementwise primitives over `n` elements run chunk by chunk.
#[derive(Clone, Debug)]
pub(super) struct Fused {
    n: usize,
    /// The operands of the group's shape (chunked), or tiling it (see [`tiles`]).
    inputs: Vec<Src>,
    members: Vec<Member>,
    /// (member, slot) for the members whose values are used outside the group.
    outs: Vec<(usize, usize)>,
}

#[derive(Debug)]
pub(super) enum Step {
    Call(Box<Call>),
    Fused(Fused),
    /// A loop equation whose bodies run as sub-plans (`loops`).
    Loop(Box<Call>, std::sync::Arc<LoopPlan>),
}

/// A compiled jaxpr (see the module documentation).
#[derive(Debug)]
pub(crate) struct Executable {
    pub(super) slots: usize,
    pub(super) inputs: Vec<usize>,
    /// Each slot's aval (`None`: a slot no step writes).
    pub(super) avals: Vec<Option<ShapedArray>>,
    /// Each step and the slots released after it.
    pub(super) steps: Vec<(Step, Vec<usize>)>,
    pub(super) outputs: Vec<Src>,
}

/// Whether `prim` computes each output element from the same element of its operands (or a
/// 0-d operand), so that it can run on any slice of them.
fn is_elementwise(prim: &'static Primitive) -> bool {
    crate::lax::elementwise::is_elementwise(prim) || std::ptr::eq(prim, &fma::FMA)
}

/// A call's operand as a key for common subexpression elimination: a slot, or a constant by
/// its value (small) or the identity of its data with its aval (arrays share data under
/// other shapes: a reshape).
#[derive(Clone, PartialEq, Eq, Hash)]
enum SrcKey {
    Slot(usize),
    Value(dtype_lattice::DType, Vec<usize>, Vec<u8>),
    Data(usize, ShapedArray),
}

fn src_key(s: &Src) -> SrcKey {
    match s {
        Src::Slot(k) => SrcKey::Slot(*k),
        Src::Const(x) if x.size() <= 16 && x.is_concrete() => {
            SrcKey::Value(x.dtype(), x.shape().to_vec(), x.as_bytes().to_vec())
        }
        Src::Const(x) => SrcKey::Data(x.identity(), x.aval().clone()),
    }
}

/// XLA's common subexpression elimination, for the calls that matter to what XLA fuses and
/// contracts: an elementwise call or broadcast equal to an earlier one (same primitive,
/// parameters, operands and result) is dropped, its uses reading the earlier result.
fn eliminate_common(calls: Vec<Call>, outputs: &mut [Src]) -> Vec<Call> {
    let mut rename: HashMap<usize, usize> = HashMap::new();
    let mut table: HashMap<(usize, Vec<SrcKey>), Vec<usize>> = HashMap::new();
    let mut kept: Vec<Call> = Vec::with_capacity(calls.len());
    let renamed = |s: &mut Src, rename: &HashMap<usize, usize>| {
        if let Src::Slot(k) = s
            && let Some(&r) = rename.get(k)
        {
            *k = r;
        }
    };
    for mut c in calls {
        for s in c.inputs.iter_mut() {
            renamed(s, &rename);
        }
        let eligible = c.outs.len() == 1
            && (is_elementwise(c.prim) || std::ptr::eq(c.prim, &crate::lax::BROADCAST_IN_DIM));
        if eligible {
            let key = (
                c.prim as *const Primitive as usize,
                c.inputs.iter().map(src_key).collect::<Vec<_>>(),
            );
            let earlier = table.get(&key).and_then(|list| {
                list.iter()
                    .copied()
                    .find(|&j| kept[j].params == c.params && kept[j].avals == c.avals)
            });
            if let Some(j) = earlier {
                rename.insert(c.outs[0], kept[j].outs[0]);
                continue;
            }
            table.entry(key).or_default().push(kept.len());
        }
        kept.push(c);
    }
    for s in outputs.iter_mut() {
        renamed(s, &rename);
    }
    kept
}

/// XLA's simplification of a transposed product: a `transpose` exchanging a `dot_general`'s
/// left and right free dimensions (no batch dimensions), the product's only use, becomes the
/// product of the operands exchanged. Each element is the same sum of the same products, in
/// the same order, so the result is the same bit for bit; applied where the product is a
/// product of single elements or small enough for the kernels' in-order sums (never through
/// `gemm`'s blocked sums, whose order may depend on the layout).
fn transposed_dots(
    mut calls: Vec<Call>,
    outputs: &[Src],
    avals: &HashMap<usize, ShapedArray>,
) -> Vec<Call> {
    use crate::lax::{DOT_GENERAL, TRANSPOSE};
    let mut uses: HashMap<usize, usize> = HashMap::new();
    let mut producer: HashMap<usize, usize> = HashMap::new();
    for (i, c) in calls.iter().enumerate() {
        for s in &c.inputs {
            if let Src::Slot(k) = s {
                *uses.entry(*k).or_default() += 1;
            }
        }
        if std::ptr::eq(c.prim, &DOT_GENERAL) && c.outs.len() == 1 {
            producer.insert(c.outs[0], i);
        }
    }
    for s in outputs {
        if let Src::Slot(k) = s {
            *uses.entry(*k).or_default() += 1;
        }
    }
    let shape = |s: &Src| -> Option<Vec<usize>> {
        match s {
            Src::Const(x) => Some(x.shape().to_vec()),
            Src::Slot(k) => avals.get(k).map(|a| a.shape().to_vec()),
        }
    };
    let mut dropped = vec![false; calls.len()];
    for t in 0..calls.len() {
        let c = &calls[t];
        if !std::ptr::eq(c.prim, &TRANSPOSE) || c.inputs.len() != 1 || c.outs.len() != 1 {
            continue;
        }
        let Src::Slot(k) = c.inputs[0] else { continue };
        let Some(&d) = producer.get(&k) else { continue };
        let Some(Param::Ints(perm)) = c.params.get("permutation") else {
            continue;
        };
        let dot = &calls[d];
        let Some(Param::DotDimensionNumbers {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
        }) = dot.params.get("dimension_numbers")
        else {
            continue;
        };
        let (Some(ls), Some(rs)) = (shape(&dot.inputs[0]), shape(&dot.inputs[1])) else {
            continue;
        };
        if uses.get(&k) != Some(&1)
            || d > t
            || !lhs_batch.is_empty()
            || !rhs_batch.is_empty()
            || lhs_contracting.len() != rhs_contracting.len()
            || lhs_contracting.len() > ls.len()
            || rhs_contracting.len() > rs.len()
        {
            continue;
        }
        let (nl, nr) = (
            ls.len() - lhs_contracting.len(),
            rs.len() - rhs_contracting.len(),
        );
        let swapped: Vec<i64> = (nl..nl + nr).chain(0..nl).map(|d| d as i64).collect();
        if *perm != swapped {
            continue;
        }
        let (out, contracted): (usize, usize) = (
            dot.avals[0].size(),
            lhs_contracting
                .iter()
                .map(|&i| {
                    usize::try_from(i)
                        .ok()
                        .and_then(|i| ls.get(i).copied())
                        .unwrap_or(0)
                })
                .product(),
        );
        if contracted != 1 && out.saturating_mul(contracted) > crate::kernels::gemm::SEQUENTIAL_MAX
        {
            continue;
        }
        let params = dot.params.clone().set(
            "dimension_numbers",
            Param::DotDimensionNumbers {
                lhs_contracting: rhs_contracting.clone(),
                rhs_contracting: lhs_contracting.clone(),
                lhs_batch: Vec::new(),
                rhs_batch: Vec::new(),
            },
        );
        let inputs: SmallVec<[Src; 4]> =
            smallvec::smallvec![dot.inputs[1].clone(), dot.inputs[0].clone()];
        let (outs, avals) = (c.outs.clone(), c.avals.clone());
        calls[t] = Call {
            prim: &DOT_GENERAL,
            params,
            inputs,
            outs,
            avals,
        };
        dropped[d] = true;
    }
    calls
        .into_iter()
        .zip(dropped)
        .filter(|(_, gone)| !gone)
        .map(|(c, _)| c)
        .collect()
}

/// XLA's simplification of a product that contracts nothing (an outer product): a
/// `multiply` of the two operands broadcast to the result, which its fusions then contract
/// into an addition like any product (the gradient of `h @ W` accumulated in a loop). Under
/// JAX's rules, for float32/float64 operands of the result's dtype; each element is the one
/// product it was.
fn outer_products(
    calls: Vec<Call>,
    slots: &mut usize,
    avals: &HashMap<usize, ShapedArray>,
) -> Vec<Call> {
    use crate::lax::{BROADCAST_IN_DIM, DOT_GENERAL, elementwise::MUL};
    if !crate::lax::on_xla() {
        return calls;
    }
    let aval = |s: &Src| match s {
        Src::Const(x) => Some(x.aval().clone()),
        Src::Slot(k) => avals.get(k).cloned(),
    };
    let mut out = Vec::with_capacity(calls.len());
    for c in calls {
        let outer = std::ptr::eq(c.prim, &DOT_GENERAL)
            && c.inputs.len() == 2
            && c.outs.len() == 1
            && fma::contracts(c.avals[0].dtype())
            && matches!(
                c.params.get("dimension_numbers"),
                Some(Param::DotDimensionNumbers { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch })
                    if lhs_contracting.is_empty() && rhs_contracting.is_empty()
                        && lhs_batch.is_empty() && rhs_batch.is_empty()
            );
        let operands = if outer {
            (aval(&c.inputs[0]), aval(&c.inputs[1]))
        } else {
            (None, None)
        };
        let (Some(l), Some(r)) = operands else {
            out.push(c);
            continue;
        };
        let result = &c.avals[0];
        if l.dtype() != result.dtype()
            || r.dtype() != result.dtype()
            || l.ndim() + r.ndim() != result.ndim()
        {
            out.push(c);
            continue;
        }
        let shape = Param::Ints(result.shape().iter().map(|&d| d as i64).collect());
        let dims =
            |from: usize, n: usize| Param::Ints((from..from + n).map(|d| d as i64).collect());
        let mut broadcast = |x: &Src, dims: Param| {
            let slot = *slots;
            *slots += 1;
            out.push(Call {
                prim: &BROADCAST_IN_DIM,
                params: Params::new()
                    .with("shape", shape.clone())
                    .with("broadcast_dimensions", dims)
                    .with("sharding", Param::None),
                inputs: smallvec::smallvec![x.clone()],
                outs: smallvec::smallvec![slot],
                avals: smallvec::smallvec![ShapedArray::new(result.shape(), result.dtype(), false)],
            });
            Src::Slot(slot)
        };
        let a = broadcast(&c.inputs[0], dims(0, l.ndim()));
        let b = broadcast(&c.inputs[1], dims(l.ndim(), r.ndim()));
        out.push(Call {
            prim: &MUL,
            params: Params::new(),
            inputs: smallvec::smallvec![a, b],
            outs: c.outs,
            avals: c.avals,
        });
    }
    out
}

/// XLA's fusion of a rank-one update: an [`fma::FMA`] whose product is of two broadcasts, the
/// first placing its operand's dimensions first and the second its operand's after them (an
/// outer product, as [`outer_products`] writes one), becomes [`fma::OUTER_FMA`] of the
/// broadcasts' operands, which reads them where they are (the broadcasts, if nothing else
/// reads them, are then dead). The same elements in the same operations.
fn rank_one_updates(mut calls: Vec<Call>, avals: &HashMap<usize, ShapedArray>) -> Vec<Call> {
    use crate::lax::BROADCAST_IN_DIM;
    let mut avals = avals.clone();
    // Each broadcast's operand and dimensions, by its slot.
    let mut broadcasts: HashMap<usize, (Src, Vec<i64>)> = HashMap::new();
    for c in &calls {
        for (&o, a) in c.outs.iter().zip(&c.avals) {
            avals.insert(o, a.clone());
        }
        if std::ptr::eq(c.prim, &BROADCAST_IN_DIM)
            && let ([x], [o]) = (&c.inputs[..], &c.outs[..])
            && let Some(Param::Ints(dims)) = c.params.get("broadcast_dimensions")
        {
            broadcasts.insert(*o, (x.clone(), dims.clone()));
        }
    }
    let aval = |s: &Src| match s {
        Src::Const(x) => Some(x.aval().clone()),
        Src::Slot(k) => avals.get(k).cloned(),
    };
    let from = |s: &Src, first: usize| -> Option<(Src, ShapedArray)> {
        let Src::Slot(k) = s else { return None };
        let (x, dims) = broadcasts.get(k)?;
        let xa = aval(x)?;
        let in_order = dims.len() == xa.ndim()
            && dims
                .iter()
                .enumerate()
                .all(|(i, &d)| d == (first + i) as i64);
        in_order.then(|| (x.clone(), xa))
    };
    for c in calls.iter_mut() {
        if !std::ptr::eq(c.prim, &fma::FMA) || c.inputs.len() != 3 || c.avals.len() != 1 {
            continue;
        }
        let Some((a, aa)) = from(&c.inputs[0], 0) else {
            continue;
        };
        let Some((b, ba)) = from(&c.inputs[1], aa.ndim()) else {
            continue;
        };
        let Some(za) = aval(&c.inputs[2]) else {
            continue;
        };
        let refs = [&aa, &ba, &za];
        if aa.ndim() == 0
            || ba.ndim() == 0
            || za.shape() != c.avals[0].shape()
            || fma::OUTER_FMA
                .abstract_eval(&refs, &c.params)
                .ok()
                .as_deref()
                != Some(&c.avals[..])
        {
            continue;
        }
        c.prim = &fma::OUTER_FMA;
        c.inputs = smallvec::smallvec![a, b, c.inputs[2].clone()];
    }
    calls
}

/// XLA's contraction of products into additions (see [`crate::lax::fma`]), under JAX's
/// rules: an `add`, `add_any` or `sub` of float16/float32/float64 whose first operand (else
/// its second) is a product (`mul`, `square`, `integer_pow[y=2]`, or the `neg` of one) becomes
/// one `fma` call, the product's calls dropped where nothing else reads them. As XLA fuses:
/// a product feeds each elementwise consumer's fusion (duplicated), so it is contracted into
/// an addition unless it is also an output of the jaxpr, has a consumer that is not
/// elementwise (a reduction: then it is computed once, in memory), or another use in the same
/// fusion (an elementwise path from both uses to one value that leaves the chain).
fn contract(calls: Vec<Call>, outputs: &[Src], slots: usize) -> Vec<Call> {
    use crate::lax::elementwise as ew;
    if !crate::lax::on_xla() {
        return calls;
    }
    let n = calls.len();
    let mut producer: Vec<Option<usize>> = vec![None; slots];
    // Each slot's readers (a call once per operand it reads it as).
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); slots];
    for (i, c) in calls.iter().enumerate() {
        for &o in &c.outs {
            producer[o] = Some(i);
        }
        for s in &c.inputs {
            if let Src::Slot(k) = s {
                readers[*k].push(i);
            }
        }
    }
    let mut is_output = vec![false; slots];
    for s in outputs {
        if let Src::Slot(k) = s {
            is_output[*k] = true;
        }
    }
    // The fusion roots each elementwise call's value reaches along elementwise readers (a
    // root: a value returned, or read by a call that is not elementwise).
    let mut roots: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in (0..n).rev() {
        let c = &calls[i];
        if !is_elementwise(c.prim) || c.outs.len() != 1 {
            continue;
        }
        let o = c.outs[0];
        let mut r: Vec<usize> = Vec::new();
        if is_output[o] || readers[o].iter().any(|&j| !is_elementwise(calls[j].prim)) {
            r.push(i);
        }
        for &j in &readers[o] {
            if is_elementwise(calls[j].prim) {
                r.extend(roots[j].iter().copied());
            }
        }
        r.sort_unstable();
        r.dedup();
        roots[i] = r;
    }
    let shares = |a: usize, b: usize| roots[a].iter().any(|r| roots[b].binary_search(r).is_ok());
    let is = |p: &'static Primitive, q: &'static Primitive| std::ptr::eq(p, q);
    // Whether the value in slot `k` reaches the addition `a` inside a fusion where it has no
    // other use.
    let fusable_into = |k: usize, a: usize| -> bool {
        !is_output[k]
            && readers[k].iter().filter(|&&j| j == a).count() == 1
            && readers[k].iter().all(|&j| is_elementwise(calls[j].prim))
            && readers[k].iter().all(|&j| j == a || !shares(j, a))
    };
    // `s` as a product contracted into the addition `a`: its factors and whether it is
    // negated.
    let product = |s: &Src, a: usize| -> Option<(Src, Src, bool)> {
        let Src::Slot(k) = s else { return None };
        if !fusable_into(*k, a) {
            return None;
        }
        let mut p = producer[*k]?;
        let mut neg = false;
        if is(calls[p].prim, &ew::NEG) {
            let Src::Slot(k2) = &calls[p].inputs[0] else {
                return None;
            };
            if !fusable_into(*k2, p) {
                return None;
            }
            neg = true;
            p = producer[*k2]?;
        }
        let c = &calls[p];
        let (x, y) = if is(c.prim, &ew::MUL) {
            (c.inputs[0].clone(), c.inputs[1].clone())
        } else if is(c.prim, &ew::SQUARE)
            || (is(c.prim, &ew::INTEGER_POW)
                && matches!(c.params.get("y"), Some(crate::lax::Param::Int(2))))
        {
            (c.inputs[0].clone(), c.inputs[0].clone())
        } else {
            return None;
        };
        Some((x, y, neg))
    };
    let mut rewrites: Vec<(usize, Params, SmallVec<[Src; 4]>)> = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let (add, sub) = (
            is(c.prim, &ew::ADD) || is(c.prim, &ew::ADD_ANY),
            is(c.prim, &ew::SUB),
        );
        if !(add || sub) || c.inputs.len() != 2 || !fma::contracts(c.avals[0].dtype()) {
            continue;
        }
        // x*y ± z, or z ± x*y (the first operand's product first, as LLVM combines).
        let (x, y, neg_p, z, neg_z) = if let Some((x, y, neg)) = product(&c.inputs[0], i) {
            (x, y, neg, c.inputs[1].clone(), sub)
        } else if let Some((x, y, neg)) = product(&c.inputs[1], i) {
            (x, y, neg ^ sub, c.inputs[0].clone(), false)
        } else {
            continue;
        };
        if [&x, &y, &z].iter().any(|s| match s {
            Src::Const(v) => v.dtype() != c.avals[0].dtype(),
            Src::Slot(_) => false,
        }) {
            continue;
        }
        let params = Params::new()
            .with(fma::NEG_PRODUCT, crate::lax::Param::Bool(neg_p))
            .with(fma::NEG_ADDEND, crate::lax::Param::Bool(neg_z));
        rewrites.push((i, params, smallvec::smallvec![x, y, z]));
    }
    let mut calls = calls;
    for (i, params, inputs) in rewrites {
        let c = &mut calls[i];
        c.prim = &fma::FMA;
        c.params = params;
        c.inputs = inputs;
    }
    // The products (and negations) nothing reads any more go with the dead code.
    calls
}

/// The jaxpr a call primitive applies to its operands (`jit`'s, a custom call's), if `prim`
/// is one: the plan inlines both.
fn inlined(prim: &'static Primitive, params: &Params) -> Option<Arc<ClosedJaxpr>> {
    prim.call_jaxpr(params)
}

struct Lowering {
    calls: Vec<Call>,
    slots: usize,
}

impl Lowering {
    fn slot(&mut self) -> usize {
        self.slots += 1;
        self.slots - 1
    }

    /// Appends `j` applied to `args`, returning its outputs.
    fn lower(&mut self, j: &ClosedJaxpr, args: Vec<Src>) -> Result<Vec<Src>, Error> {
        let jx = &j.jaxpr;
        let mut env: HashMap<u32, Src> = HashMap::new();
        for (v, c) in jx.constvars.iter().zip(&j.consts) {
            env.insert(v.id, Src::Const(c.clone()));
        }
        for (v, a) in jx.invars.iter().zip(args) {
            env.insert(v.id, a);
        }
        let read = |a: &Atom, env: &HashMap<u32, Src>| -> Result<Src, Error> {
            match a {
                Atom::Literal(x, _) => Ok(Src::Const(x.clone())),
                Atom::Var(v) => env.get(&v.id).cloned().ok_or_else(|| {
                    Error::refused(
                        Exception::TypeError,
                        "a jaxpr variable used before its equation",
                    )
                }),
            }
        };
        for eqn in &jx.eqns {
            let inputs: SmallVec<[Src; 4]> = eqn
                .inputs
                .iter()
                .map(|a| read(a, &env))
                .collect::<Result<_, _>>()?;
            if let Some(inner) = inlined(eqn.prim, &eqn.params) {
                let outs = self.lower(&inner, inputs.into_vec())?;
                for (v, s) in eqn.outputs.iter().zip(outs) {
                    env.insert(v.id, s);
                }
                continue;
            }
            let avals: Avals = eqn.outputs.iter().map(|v| v.aval.clone()).collect();
            if let Some(folded) = fold(eqn.prim, &eqn.params, &inputs, &avals) {
                for (v, x) in eqn.outputs.iter().zip(folded) {
                    env.insert(v.id, Src::Const(x));
                }
                continue;
            }
            let outs: SmallVec<[usize; 1]> = eqn.outputs.iter().map(|_| self.slot()).collect();
            for (v, &s) in eqn.outputs.iter().zip(&outs) {
                env.insert(v.id, Src::Slot(s));
            }
            let (prim, inputs) = by_reciprocal(eqn.prim, inputs, avals[0].weak_type());
            self.calls.push(Call {
                prim,
                params: eqn.params.clone(),
                inputs,
                outs,
                avals,
            });
        }
        jx.outvars.iter().map(|a| read(a, &env)).collect()
    }
}

/// A division by a float constant as XLA's algebraic simplifier rewrites it: a
/// multiplication by the constant's reciprocal, computed once in the constant's dtype (with
/// denormals off, so a reciprocal below the normal range is 0). `x / 9.0` under `jax.jit` is
/// `x * (1/9)`, which differs from the quotient in the last bit for some `x` (float16,
/// float32 and float64, checked against JAX by `tests/it/simplifier.rs`; bfloat16, which XLA
/// computes behind conversions, keeps the division). Under NumPy's rules, and for integers
/// and complex numbers, the division stays.
pub(super) fn by_reciprocal(
    prim: &'static Primitive,
    inputs: SmallVec<[Src; 4]>,
    weak: bool,
) -> (&'static Primitive, SmallVec<[Src; 4]>) {
    if !std::ptr::eq(prim, &crate::lax::DIV) || !crate::config::on_xla() {
        return (prim, inputs);
    }
    let [x @ Src::Slot(_), Src::Const(c)] = inputs.as_slice() else {
        return (prim, inputs);
    };
    if !matches!(
        c.dtype(),
        dtype_lattice::DType::Float16
            | dtype_lattice::DType::Float32
            | dtype_lattice::DType::Float64
            | dtype_lattice::DType::Complex64
            | dtype_lattice::DType::Complex128
    ) {
        return (prim, inputs);
    }
    let one = crate::array::scalar(1.0, c.dtype()).and_then(|one| {
        crate::lax::implement(
            &crate::lax::DIV,
            &[&one, c],
            &Params::new(),
            &[c.aval().clone()],
        )
    });
    match one {
        Ok(mut r) => {
            // Weak as the quotient is, so that the product's type is the quotient's (the
            // dividend is weak only when the quotient is).
            let r = r.remove(0).with_weak_type(weak);
            (
                &crate::lax::MUL,
                smallvec::smallvec![x.clone(), Src::Const(r)],
            )
        }
        Err(_) => (prim, inputs),
    }
}

/// The call's results now, if every operand is a constant, the results are small enough to
/// keep, and the primitive succeeds.
pub(super) fn fold(
    prim: &'static Primitive,
    params: &Params,
    inputs: &[Src],
    avals: &[ShapedArray],
) -> Option<Outputs> {
    if avals.iter().any(|a| a.size() > FOLD_MAX) {
        return None;
    }
    let consts: Vec<&Array> = inputs
        .iter()
        .map(|s| match s {
            Src::Const(x) => Some(x),
            Src::Slot(_) => None,
        })
        .collect::<Option<_>>()?;
    crate::lax::implement(prim, &consts, params, avals).ok()
}

/// Drops the calls none of whose outputs is used.
fn eliminate_dead(calls: Vec<Call>, outputs: &[Src], slots: usize) -> Vec<Call> {
    let mut live = vec![false; slots];
    for s in outputs {
        if let Src::Slot(i) = s {
            live[*i] = true;
        }
    }
    let mut kept: Vec<Call> = Vec::with_capacity(calls.len());
    for c in calls.into_iter().rev() {
        if c.outs.iter().any(|&o| live[o]) {
            for s in &c.inputs {
                if let Src::Slot(i) = s {
                    live[*i] = true;
                }
            }
            kept.push(c);
        }
    }
    kept.reverse();
    kept
}

/// Whether `c` can join a chain over `shape`: elementwise, one output of that shape, every
/// operand of that shape, 0-d, or tiling it.
fn fusible(c: &Call, shape: &[usize], in_shape: impl Fn(&Src) -> Vec<usize>) -> bool {
    is_elementwise(c.prim)
        && c.outs.len() == 1
        && c.avals[0].shape() == shape
        && c.avals[0].dtype().key_impl().is_none()
        && c.inputs.iter().all(|s| {
            let sh = in_shape(s);
            sh.is_empty() || sh == shape || tiles(&sh, shape)
        })
}

/// Whether an operand of shape `sh` broadcasts to `shape` by repeating its elements whole
/// (`sh` is `shape` with leading dimensions set to 1, as a bias `[1, 256]` against
/// `[4096, 256]`): the operand's row-major elements then repeat with its size as the period,
/// and a block of the chain reads them cyclically.
fn tiles(sh: &[usize], shape: &[usize]) -> bool {
    if sh.len() != shape.len() || sh == shape || sh.contains(&0) {
        return false;
    }
    let lead = sh.iter().take_while(|&&d| d == 1).count();
    sh[lead..] == shape[lead..]
}

/// Groups chains of elementwise calls over large shapes (see the module documentation).
fn fuse(
    calls: Vec<Call>,
    outputs: &[Src],
    shape_of: &[Vec<usize>],
    float0_slot: &[bool],
) -> Vec<Step> {
    let slots = shape_of.len();
    // Uses of each slot by calls (and the jaxpr's outputs), to find what a group must write.
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); slots];
    for (i, c) in calls.iter().enumerate() {
        for s in &c.inputs {
            if let Src::Slot(k) = s {
                users[*k].push(i);
            }
        }
    }
    let mut is_output = vec![false; slots];
    for s in outputs {
        if let Src::Slot(k) = s {
            is_output[*k] = true;
        }
    }
    let in_shape = |s: &Src, shape_of: &[Vec<usize>]| match s {
        Src::Const(x) => x.shape().to_vec(),
        Src::Slot(k) => shape_of[*k].clone(),
    };
    let mut steps: Vec<Step> = Vec::new();
    // The open chain: its shape, its calls' indices and the slots its members produce.
    let mut open: Option<(Vec<usize>, Vec<usize>)> = None;
    let mut produced: HashMap<usize, usize> = HashMap::new();
    let close = |open: &mut Option<(Vec<usize>, Vec<usize>)>,
                 produced: &mut HashMap<usize, usize>,
                 steps: &mut Vec<Step>| {
        if let Some((shape, members)) = open.take() {
            let g = Group {
                users: &users,
                is_output: &is_output,
                shape_of,
                produced,
            };
            steps.push(Step::Fused(g.build(&calls, &members, &shape)));
            produced.clear();
        }
    };
    for (i, c) in calls.iter().enumerate() {
        let size: usize = c.avals.first().map_or(0, ShapedArray::size);
        // float0 values hold no bytes to chunk: their (moving, converting) calls run whole.
        let float0 = c.avals.iter().any(|a| a.dtype().is_float0())
            || c.inputs.iter().any(|s| match s {
                Src::Const(x) => x.dtype().is_float0(),
                Src::Slot(k) => float0_slot[*k],
            });
        let join = c.avals.len() == 1
            && !float0
            && size >= FUSE_MIN
            && fusible(c, c.avals[0].shape(), |s| in_shape(s, shape_of));
        if join {
            let same = open
                .as_ref()
                .is_some_and(|(shape, _)| shape.as_slice() == c.avals[0].shape());
            if !same {
                close(&mut open, &mut produced, &mut steps);
                open = Some((c.avals[0].shape().to_vec(), Vec::new()));
            }
            if let Some((_, members)) = open.as_mut() {
                produced.insert(c.outs[0], members.len());
                members.push(i);
            }
            continue;
        }
        // A call reading a value of the open chain runs after it.
        let reads_chain = c
            .inputs
            .iter()
            .any(|s| matches!(s, Src::Slot(k) if produced.contains_key(k)));
        if reads_chain {
            close(&mut open, &mut produced, &mut steps);
        }
        steps.push(Step::Call(Box::new(c.clone())));
    }
    close(&mut open, &mut produced, &mut steps);
    steps
}

/// What building a fused group needs to know about the slots.
struct Group<'a> {
    users: &'a [Vec<usize>],
    is_output: &'a [bool],
    shape_of: &'a [Vec<usize>],
    /// The slots the group's members produce, with the member producing each.
    produced: &'a HashMap<usize, usize>,
}

impl Group<'_> {
    fn build(&self, calls: &[Call], members: &[usize], shape: &[usize]) -> Fused {
        let mut inputs: Vec<Src> = Vec::new();
        let mut chunked: HashMap<usize, usize> = HashMap::new();
        let mut outs = Vec::new();
        let in_group: std::collections::HashSet<usize> = members.iter().copied().collect();
        let ms = members
            .iter()
            .map(|&i| {
                let c = &calls[i];
                let locals = c
                    .inputs
                    .iter()
                    .map(|s| match s {
                        Src::Slot(k) if self.produced.contains_key(k) => {
                            Local::Member(self.produced[k])
                        }
                        Src::Slot(k) if self.shape_of[*k] == shape => {
                            let next = inputs.len();
                            let idx = *chunked.entry(*k).or_insert(next);
                            if idx == next {
                                inputs.push(s.clone());
                            }
                            Local::Chunked(idx)
                        }
                        Src::Slot(k) if tiles(&self.shape_of[*k], shape) => {
                            let next = inputs.len();
                            let idx = *chunked.entry(*k).or_insert(next);
                            if idx == next {
                                inputs.push(s.clone());
                            }
                            Local::Chunked(idx)
                        }
                        Src::Const(x) if x.shape() == shape || tiles(x.shape(), shape) => {
                            inputs.push(s.clone());
                            Local::Chunked(inputs.len() - 1)
                        }
                        _ => Local::Whole(s.clone()),
                    })
                    .collect();
                let o = c.outs[0];
                if self.is_output[o] || self.users[o].iter().any(|u| !in_group.contains(u)) {
                    outs.push((self.produced[&o], o));
                }
                Member {
                    prim: c.prim,
                    params: c.params.clone(),
                    inputs: locals,
                    aval: c.avals[0].clone(),
                    kernel: Kernel::of(c.prim),
                }
            })
            .collect();
        Fused {
            n: shape.iter().product(),
            inputs,
            members: ms,
            outs,
        }
    }
}

impl Executable {
    /// Compiles `j` (see the module documentation).
    ///
    /// # Errors
    ///
    /// `TypeError` for a malformed jaxpr (a variable used before its equation).
    pub(crate) fn compile(j: &ClosedJaxpr) -> Result<Executable, Error> {
        Executable::compile_with(j, true)
    }

    /// [`Executable::compile`], with XLA's contraction of products into additions or
    /// (`contracting` false, for tests against the interpreter) without.
    fn compile_with(j: &ClosedJaxpr, contracting: bool) -> Result<Executable, Error> {
        let mut low = Lowering {
            calls: Vec::new(),
            slots: 0,
        };
        let inputs: Vec<usize> = j.jaxpr.invars.iter().map(|_| low.slot()).collect();
        let outputs = low.lower(j, inputs.iter().map(|&s| Src::Slot(s)).collect())?;
        let mut outputs = outputs;
        let calls = eliminate_common(low.calls, &mut outputs);
        // Each slot's aval, for the simplifications (neither changes an existing slot's).
        let mut slot_avals: HashMap<usize, ShapedArray> = inputs
            .iter()
            .zip(&j.jaxpr.invars)
            .map(|(&s, v)| (s, v.aval.clone()))
            .collect();
        for c in &calls {
            for (&o, a) in c.outs.iter().zip(&c.avals) {
                slot_avals.insert(o, a.clone());
            }
        }
        // XLA's algebraic simplifier.
        let calls = super::simplify::simplify(calls, &mut outputs, &mut low.slots, &mut slot_avals);
        let calls = transposed_dots(calls, &outputs, &slot_avals);
        let calls = outer_products(calls, &mut low.slots, &slot_avals);
        let calls = if contracting {
            rank_one_updates(contract(calls, &outputs, low.slots), &slot_avals)
        } else {
            calls
        };
        let calls = eliminate_dead(calls, &outputs, low.slots);
        let mut shape_of: Vec<Vec<usize>> = vec![Vec::new(); low.slots];
        let mut float0_slot = vec![false; low.slots];
        let mut avals: Vec<Option<ShapedArray>> = vec![None; low.slots];
        for (&s, v) in inputs.iter().zip(&j.jaxpr.invars) {
            shape_of[s] = v.aval.shape().to_vec();
            float0_slot[s] = v.aval.dtype().is_float0();
            avals[s] = Some(v.aval.clone());
        }
        for c in &calls {
            for (&o, a) in c.outs.iter().zip(&c.avals) {
                shape_of[o] = a.shape().to_vec();
                float0_slot[o] = a.dtype().is_float0();
                avals[o] = Some(a.clone());
            }
        }
        let steps = fuse(calls, &outputs, &shape_of, &float0_slot)
            .into_iter()
            .map(|st| match st {
                Step::Call(c) => match LoopPlan::compile(c.prim, &c.params)? {
                    Some(plan) => Ok(Step::Loop(c, std::sync::Arc::new(plan))),
                    None => Ok(Step::Call(c)),
                },
                other => Ok(other),
            })
            .collect::<Result<Vec<_>, Error>>()?;
        // Liveness: the last step reading each slot releases it (outputs are never released).
        let mut last: Vec<Option<usize>> = vec![None; low.slots];
        for (i, st) in steps.iter().enumerate() {
            let reads: Vec<&Src> = match st {
                Step::Call(c) | Step::Loop(c, _) => c.inputs.iter().collect(),
                Step::Fused(f) => f
                    .inputs
                    .iter()
                    .chain(f.members.iter().flat_map(|m| {
                        m.inputs.iter().filter_map(|l| match l {
                            Local::Whole(s) => Some(s),
                            _ => None,
                        })
                    }))
                    .collect(),
            };
            for s in reads {
                if let Src::Slot(k) = s {
                    last[*k] = Some(i);
                }
            }
        }
        for s in &outputs {
            if let Src::Slot(k) = s {
                last[*k] = None;
            }
        }
        let mut frees: Vec<Vec<usize>> = vec![Vec::new(); steps.len()];
        for (k, l) in last.iter().enumerate() {
            if let Some(i) = l {
                frees[*i].push(k);
            }
        }
        Ok(Executable {
            slots: low.slots,
            inputs,
            avals,
            steps: steps.into_iter().zip(frees).collect(),
            outputs,
        })
    }

    /// How many steps the plan has (primitive calls and fused chains).
    #[cfg(test)]
    pub(crate) fn steps(&self) -> (usize, usize) {
        let fused = self
            .steps
            .iter()
            .filter(|(s, _)| matches!(s, Step::Fused(_)))
            .count();
        (self.steps.len() - fused, fused)
    }

    /// Runs the plan on `args` (of the jaxpr's input avals, which the caller has checked).
    ///
    /// # Errors
    ///
    /// A primitive's refusal (as the interpreter would raise it).
    pub(crate) fn run(&self, args: &[&Array]) -> Result<Vec<Array>, Error> {
        let mut env: Vec<Option<Array>> = vec![None; self.slots];
        for (&s, &x) in self.inputs.iter().zip(args) {
            env[s] = Some(x.clone());
        }
        for (step, frees) in &self.steps {
            match step {
                Step::Call(c) => {
                    // The first operand at its last use is handed over whole: the primitive
                    // may write its result into the operand's buffer.
                    let first = donated(c, frees, &mut env);
                    let outs = {
                        let rest: SmallVec<[&Array; 4]> = c.inputs[usize::from(first.is_some())..]
                            .iter()
                            .map(|s| read(s, &env))
                            .collect::<Result<_, _>>()?;
                        match first {
                            Some(first) => crate::core::implement_owned(
                                c.prim, first, &rest, &c.params, &c.avals,
                            )?,
                            None => crate::lax::implement(c.prim, &rest, &c.params, &c.avals)?,
                        }
                    };
                    for (&o, x) in c.outs.iter().zip(outs) {
                        env[o] = Some(x);
                    }
                }
                Step::Fused(f) => {
                    for (slot, x) in f.run(&env)? {
                        env[slot] = Some(x);
                    }
                }
                Step::Loop(c, plan) => {
                    let outs = {
                        let ins: SmallVec<[&Array; 8]> = c
                            .inputs
                            .iter()
                            .map(|s| read(s, &env))
                            .collect::<Result<_, _>>()?;
                        plan.run(&ins, &c.avals)?
                    };
                    for (&o, x) in c.outs.iter().zip(outs) {
                        env[o] = Some(x);
                    }
                }
            }
            for &k in frees {
                env[k] = None;
            }
        }
        self.outputs
            .iter()
            .map(|s| read(s, &env).cloned())
            .collect()
    }
}

/// The first operand of `c`, taken out of `env`, when `c`'s primitive can reuse it
/// (an in-place implementation) and this step is its last use (its slot is among `frees`
/// and no other operand reads it).
fn donated(c: &Call, frees: &[usize], env: &mut [Option<Array>]) -> Option<Array> {
    c.prim.in_place?;
    let Some(Src::Slot(k)) = c.inputs.first() else {
        return None;
    };
    let again = c.inputs[1..]
        .iter()
        .any(|s| matches!(s, Src::Slot(j) if j == k));
    if again || !frees.contains(k) {
        return None;
    }
    env.get_mut(*k)?.take()
}

fn read<'a>(s: &'a Src, env: &'a [Option<Array>]) -> Result<&'a Array, Error> {
    match s {
        Src::Const(x) => Ok(x),
        Src::Slot(k) => env.get(*k).and_then(Option::as_ref).ok_or_else(|| {
            Error::refused(
                Exception::TypeError,
                "a compiled jaxpr read a value before computing it",
            )
        }),
    }
}

/// A whole output buffer of one word width, written chunk by chunk.
pub(super) enum Buffer {
    W8(Vec<u8>),
    W16(Vec<u16>),
    W32(Vec<u32>),
    W64(Vec<u64>),
    W128(Vec<u128>),
}

impl Buffer {
    pub(super) fn new(width: usize, words: usize) -> Buffer {
        use crate::array::storage::pool::reused;
        match width {
            1 => Buffer::W8(reused(words)),
            2 => Buffer::W16(reused(words)),
            4 => Buffer::W32(reused(words)),
            8 => Buffer::W64(reused(words)),
            _ => Buffer::W128(reused(words)),
        }
    }

    pub(super) fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Buffer::W8(v) => v,
            Buffer::W16(v) => bytemuck::cast_slice_mut(v),
            Buffer::W32(v) => bytemuck::cast_slice_mut(v),
            Buffer::W64(v) => bytemuck::cast_slice_mut(v),
            Buffer::W128(v) => bytemuck::cast_slice_mut(v),
        }
    }

    pub(super) fn into_storage(self) -> Storage {
        fn wrap<W: crate::array::Word>(v: Vec<W>) -> Storage {
            W::into_storage(v)
        }
        match self {
            Buffer::W8(v) => wrap(v),
            Buffer::W16(v) => wrap(v),
            Buffer::W32(v) => wrap(v),
            Buffer::W64(v) => wrap(v),
            Buffer::W128(v) => wrap(v),
        }
    }
}

/// Bytes per element of an aval's storage.
fn elem_bytes(a: &ShapedArray) -> usize {
    crate::array::element_bytes(a.dtype())
}

impl Fused {
    /// The chain over every chunk; the values used outside it, whole.
    fn run(&self, env: &[Option<Array>]) -> Result<Vec<(usize, Array)>, Error> {
        let ins: Vec<&Array> = self
            .inputs
            .iter()
            .map(|s| read(s, env))
            .collect::<Result<_, _>>()?;
        let whole: Vec<Vec<Option<&Array>>> = self
            .members
            .iter()
            .map(|m| {
                m.inputs
                    .iter()
                    .map(|l| match l {
                        Local::Whole(s) => read(s, env).map(Some),
                        _ => Ok(None),
                    })
                    .collect::<Result<_, _>>()
            })
            .collect::<Result<_, _>>()?;
        let mut bufs: Vec<(Buffer, usize)> = self
            .outs
            .iter()
            .map(|&(m, _)| {
                let a = &self.members[m].aval;
                let (width, words) = layout(a.dtype());
                (Buffer::new(width, self.n * words), elem_bytes(a))
            })
            .collect();
        // Per chunk, the slice of every output buffer it writes.
        let chunks = self.n.div_ceil(CHUNK);
        let mut slices: Vec<Vec<&mut [u8]>> = (0..chunks).map(|_| Vec::new()).collect();
        for (buf, eb) in &mut bufs {
            for (c, s) in buf.bytes_mut().chunks_mut(CHUNK * *eb).enumerate() {
                slices[c].push(s);
            }
        }
        // The caller's rules (thread-scoped by `with_rules`) hold on the pool's threads too:
        // they choose a primitive's semantics (NumPy's libm sinh or XLA's, conversions).
        let rules = crate::config::rules();
        slices
            .into_par_iter()
            .enumerate()
            .try_for_each(|(c, mut outs)| {
                crate::config::with_rules(rules, || self.chunk(c, &ins, &whole, &mut outs))
            })?;
        Ok(bufs
            .into_iter()
            .zip(&self.outs)
            .map(|((buf, _), &(m, slot))| {
                let aval = &self.members[m].aval;
                (slot, Array::from_parts(aval.clone(), buf.into_storage()))
            })
            .collect())
    }

    /// Chunk `c` through the chain, its outputs written into `outs`.
    fn chunk(
        &self,
        c: usize,
        ins: &[&Array],
        whole: &[Vec<Option<&Array>>],
        outs: &mut [&mut [u8]],
    ) -> Result<(), Error> {
        let start = c * CHUNK;
        let len = CHUNK.min(self.n - start);
        // The chunk of each operand: its stretch, its one element, or its elements tiled.
        let parts: Vec<Val<'_>> = ins
            .iter()
            .map(|x| {
                let eb = elem_bytes(x.aval());
                Ok(match x.size() {
                    p if p == self.n => Val::Block(
                        x.as_bytes()
                            .get(start * eb..(start + len) * eb)
                            .ok_or_else(missing)?,
                    ),
                    1 => Val::Tile(x),
                    _ => Val::Array(tiled(x, start, len)?),
                })
            })
            .collect::<Result<_, Error>>()?;
        let mut dsts: Vec<Option<&mut [u8]>> =
            outs.iter_mut().map(|o| Some(std::mem::take(o))).collect();
        let mut vals: Vec<Val<'_>> = Vec::with_capacity(self.members.len());
        let result = (|| {
            for (i, (m, ws)) in self.members.iter().zip(whole).enumerate() {
                let ops: SmallVec<[(View<'_>, &ShapedArray); 3]> = m
                    .inputs
                    .iter()
                    .zip(ws)
                    .map(|(l, w)| match (l, w) {
                        (Local::Chunked(k), _) => {
                            Some((parts.get(*k)?.view(), ins.get(*k)?.aval()))
                        }
                        (Local::Member(j), _) => {
                            Some((vals.get(*j)?.view(), &self.members.get(*j)?.aval))
                        }
                        (Local::Whole(_), Some(w)) => Some((View::Whole(w), w.aval())),
                        (Local::Whole(_), None) => None,
                    })
                    .collect::<Option<_>>()
                    .ok_or_else(missing)?;
                let bytes = len * elem_bytes(&m.aval);
                let out = self.outs.iter().position(|&(j, _)| j == i);
                let val = match out.and_then(|k| dsts.get_mut(k)?.take()) {
                    Some(dst) => {
                        member(m, &ops, len, dst)?;
                        Val::Block(dst)
                    }
                    None => {
                        let mut v = scratch(bytes);
                        member(m, &ops, len, &mut bytemuck::cast_slice_mut(&mut v)[..bytes])?;
                        Val::Owned(v, bytes)
                    }
                };
                drop(ops);
                vals.push(val);
            }
            Ok(())
        })();
        for v in vals {
            if let Val::Owned(v, _) = v {
                recycle(v);
            }
        }
        result
    }
}

fn missing() -> Error {
    Error::refused(Exception::TypeError, "a fused operand is missing")
}

/// A value of a fused chunk.
enum Val<'a> {
    /// `len` elements' bytes: a stretch of an operand or of an output buffer.
    Block(&'a [u8]),
    /// An operand of one element standing for each of the chunk's.
    Tile(&'a Array),
    /// An operand's elements tiled over the chunk.
    Array(Array),
    /// `len` elements in a scratch buffer (its first `.1` bytes).
    Owned(Vec<u64>, usize),
}

/// An operand of a member: a chunk's bytes, one element standing for each of them (a tiled
/// operand of one element), or a 0-d operand passed whole.
#[derive(Clone, Copy)]
enum View<'a> {
    Block(&'a [u8]),
    Tile(&'a Array),
    Whole(&'a Array),
}

impl Val<'_> {
    fn view(&self) -> View<'_> {
        match self {
            Val::Block(b) => View::Block(b),
            Val::Tile(x) => View::Tile(x),
            Val::Array(x) => View::Block(x.as_bytes()),
            Val::Owned(v, n) => View::Block(&bytemuck::cast_slice(v)[..*n]),
        }
    }
}

/// Member `m` on a chunk of `len` elements, into `dst` (its bytes): its kernel where it has
/// one that covers the operands, else its impl on arrays of the chunk.
fn member(
    m: &Member,
    ops: &[(View<'_>, &ShapedArray)],
    len: usize,
    dst: &mut [u8],
) -> Result<(), Error> {
    if let Some(k) = m.kernel {
        let args: SmallVec<[(Arg<'_>, dtype_lattice::DType); 3]> = ops
            .iter()
            .map(|(v, a)| {
                let arg = match v {
                    View::Block(b) => Arg::Block(b),
                    View::Tile(x) | View::Whole(x) => Arg::Scalar(x.as_bytes()),
                };
                (arg, a.dtype())
            })
            .collect();
        if k.run(&m.params, &args, m.aval.dtype(), len, dst) {
            #[cfg(test)]
            tests::KERNEL_RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Ok(());
        }
    }
    #[cfg(test)]
    tests::IMPL_RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let arrays: SmallVec<[Array; 3]> = ops
        .iter()
        .map(|(v, a)| match v {
            View::Block(b) => {
                let aval = ShapedArray::new(&[len], a.dtype(), a.weak_type());
                Ok(Array::from_parts(
                    aval,
                    Storage::from_bytes(layout(a.dtype()).0, b),
                ))
            }
            View::Tile(x) => tiled(x, 0, len),
            View::Whole(x) => Ok((*x).clone()),
        })
        .collect::<Result<_, Error>>()?;
    let args: SmallVec<[&Array; 3]> = arrays.iter().collect();
    let aval = ShapedArray::new(&[len], m.aval.dtype(), m.aval.weak_type());
    let out = (m.prim.impl_rule)(m.prim, &args, &m.params, std::slice::from_ref(&aval))?;
    let x = out
        .into_iter()
        .next()
        .ok_or_else(|| Error::refused(Exception::TypeError, "a fused primitive gave no result"))?;
    let bytes = x.as_bytes();
    if bytes.len() != dst.len() {
        return Err(Error::refused(
            Exception::TypeError,
            "a fused primitive gave a result of another size",
        ));
    }
    dst.copy_from_slice(bytes);
    Ok(())
}

/// `len` elements of `x` from `start` on, read cyclically (`x` tiles the group's shape with
/// its size as the period), as an array of shape `[len]`.
fn tiled(x: &Array, start: usize, len: usize) -> Result<Array, Error> {
    let eb = elem_bytes(x.aval());
    let (width, words) = layout(x.dtype());
    let bytes = x.as_bytes();
    let period = x.size().max(1);
    let data = Storage::overwritten(width, len * words, |b| {
        let mut at = start % period;
        let mut done = 0;
        while done < len {
            let take = (period - at).min(len - done);
            let src = bytes.get(at * eb..(at + take) * eb).ok_or_else(missing)?;
            b[done * eb..(done + take) * eb].copy_from_slice(src);
            done += take;
            at = 0;
        }
        Ok::<(), Error>(())
    })?;
    Ok(Array::from_parts(
        ShapedArray::new(&[len], x.dtype(), x.weak_type()),
        data,
    ))
}

thread_local! {
    /// Scratch buffers of this thread's fused chunks, kept between chunks.
    static SCRATCH: std::cell::RefCell<Vec<Vec<u64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A scratch buffer of at least `bytes` bytes (contents unspecified).
fn scratch(bytes: usize) -> Vec<u64> {
    let mut v = SCRATCH.with(|s| s.borrow_mut().pop()).unwrap_or_default();
    v.resize(bytes.div_ceil(8), 0);
    v
}

/// Returns a scratch buffer for a later chunk.
fn recycle(v: Vec<u64>) {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < 64 {
            s.push(v);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numpy as jnp;
    use crate::{grad, make_jaxpr};
    use dtype_lattice::DType;

    /// Member chunks computed by a slice kernel, and by an impl (all tests together: each
    /// test looks at how much they grow while it runs).
    pub(super) static KERNEL_RUNS: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);
    pub(super) static IMPL_RUNS: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    fn bits(xs: &[Array]) -> Vec<Vec<u8>> {
        xs.iter().map(|x| x.as_bytes().to_vec()).collect()
    }

    /// The plan's results without XLA's contraction, bit for bit the interpreter's.
    fn same_as_interpreter(j: &ClosedJaxpr, args: &[Array]) -> Executable {
        let exe = Executable::compile_with(j, false).unwrap();
        let refs: Vec<&Array> = args.iter().collect();
        let got = exe.run(&refs).unwrap();
        let want = j.call(args).unwrap();
        assert_eq!(bits(&got), bits(&want));
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.aval(), w.aval());
        }
        exe
    }

    fn ramp(n: usize, dtype: DType) -> Array {
        let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
        Array::from_vec(v).astype(dtype).unwrap()
    }

    /// A chain over more elements than a chunk (and not a multiple of it) runs as one fused
    /// group, its intermediate used outside the chain written out too, in every float dtype.
    #[test]
    fn fused_chains_compute_what_the_interpreter_computes() {
        for dt in [
            DType::Float32,
            DType::BFloat16,
            DType::Float16,
            DType::Float64,
        ] {
            let x = ramp(3 * CHUNK + 123, dt);
            let j = make_jaxpr(
                |x: Array| {
                    let s = jnp::sin(&x)?;
                    let y = jnp::add(jnp::multiply(&s, 2.0)?, 1.0)?;
                    let m = jnp::maximum(&y, &x)?;
                    Ok((jnp::sum(&s, jnp::Axes::All, false)?, m))
                },
                &x,
            )
            .unwrap();
            let exe = same_as_interpreter(&j, &[x]);
            // One chain (sin, mul, add, max and, for 16-bit floats, the widening for the
            // sum), the reduction, and for 16-bit floats the narrowing of the 0-d sum.
            let calls = if dt.bits() == 16 { 2 } else { 1 };
            assert_eq!(exe.steps(), (calls, 1), "{dt}: {j}");
        }
    }

    /// An operand broadcast along leading dimensions (a bias row) joins the chain, read
    /// cyclically; its period (257) does not divide the block, so blocks start mid-row.
    #[test]
    fn a_tiling_operand_joins_the_chain() {
        let rows = 3 * CHUNK / 257 + 5;
        let x = jnp::reshape(ramp(rows * 257, DType::Float32), &[rows as isize, 257]).unwrap();
        let b = ramp(257, DType::Float32);
        let j = make_jaxpr(
            |(x, b): (Array, Array)| {
                let y = jnp::add(&x, &b)?;
                jnp::tanh(jnp::multiply(&y, &b)?)
            },
            &(x.clone(), b.clone()),
        )
        .unwrap();
        let exe = same_as_interpreter(&j, &[x, b]);
        // The bias's two broadcasts to [1, 257] are one (common subexpression elimination)
        // and run alone; add, mul and tanh are one chain.
        assert_eq!(exe.steps(), (1, 1), "{j}");
        assert!(tiles(&[1, 257], &[rows, 257]) && tiles(&[1, 1, 4], &[5, 1, 4]));
        assert!(!tiles(&[2, 1], &[2, 3]) && !tiles(&[3], &[2, 3]) && !tiles(&[0, 3], &[0, 3]));
    }

    /// The slice kernels (float32 arithmetic with a weak scalar, comparisons, `select_n`,
    /// bit operations and shifts of uint32, `neg`, `abs`, the vectorised functions, operands
    /// of one element and tiled ones) compute what the interpreter computes; a block of
    /// `expm1` holding subnormals (XLA keeps them) and the members without a kernel
    /// (`floor`, float16) run their impls on arrays of the block.
    #[test]
    fn slice_kernels_compute_what_the_interpreter_computes() {
        use std::sync::atomic::Ordering::Relaxed;
        let n = 3 * CHUNK + 123;
        let mut v = ramp(n, DType::Float32).to_vec::<f32>().unwrap();
        for (i, t) in [1e-40f32, -3e-39, 1e-45].into_iter().enumerate() {
            v[CHUNK + 7 + 100 * i] = t;
        }
        let x = jnp::reshape(Array::from_vec(v), &[(n / 3) as isize, 3]).unwrap();
        let u = jnp::reshape(
            Array::from_vec((0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect()),
            &[(n / 3) as isize, 3],
        )
        .unwrap();
        let one = jnp::reshape(Array::from_vec(vec![0.25f32]), &[1, 1]).unwrap();
        let row = jnp::reshape(Array::from_vec(vec![0.5f32, -1.0, 2.0]), &[1, 3]).unwrap();
        let f = |(x, u): (Array, Array)| {
            let a = jnp::add(jnp::multiply(&x, 2.0)?, &one)?;
            let b = jnp::subtract(jnp::divide(&a, &row)?, jnp::exp(&x)?)?;
            let c = jnp::maximum(jnp::negative(&b)?, jnp::abs(&x)?)?;
            let d = jnp::r#where(&jnp::less(&c, &x)?, &c, jnp::log1p(&a)?)?;
            let e = jnp::add(jnp::expm1(&x)?, jnp::sin(&d)?)?;
            let g = jnp::floor(&e)?;
            let h = jnp::astype(jnp::minimum(&g, &e)?, DType::Float16)?;
            let bits = jnp::bitwise_or(jnp::right_shift(&u, 9)?, 0x3f80_0000)?;
            let k = jnp::bitwise_xor(jnp::left_shift(&bits, 1)?, &u)?;
            Ok((e, h, bits, k))
        };
        let j = make_jaxpr(f, &(x.clone(), u.clone())).unwrap();
        let (kernels, impls) = (KERNEL_RUNS.load(Relaxed), IMPL_RUNS.load(Relaxed));
        let exe = same_as_interpreter(&j, &[x, u]);
        assert!(exe.steps().1 >= 1, "{j}");
        let chunks = n.div_ceil(CHUNK);
        // At least a dozen kernel members per block; floor, the float16 conversion and the
        // subnormal block of expm1 by impls.
        assert!(KERNEL_RUNS.load(Relaxed) - kernels >= 12 * chunks, "{j}");
        assert!(IMPL_RUNS.load(Relaxed) - impls > 2 * chunks, "{j}");
    }

    /// A chain's blocks run on the pool's threads under the caller's thread-scoped rules:
    /// NumPy's `sinh`, `cosh` and `tanh` (libm) are not XLA's.
    #[test]
    fn chunks_run_under_the_callers_rules() {
        let x = jnp::multiply(ramp(8 * CHUNK + 3, DType::Float32), 3.0).unwrap();
        let f = |x: Array| {
            let y = jnp::add(jnp::sinh(&x)?, jnp::cosh(&x)?)?;
            jnp::add(&y, jnp::tanh(&x)?)
        };
        let numpy = || {
            let j = make_jaxpr(f, &x).unwrap();
            let got = Executable::compile(&j).unwrap().run(&[&x]).unwrap();
            (bits(&got), bits(&[f(x.clone()).unwrap()]))
        };
        let (jitted, eager) = jnp::with_rules(dtype_lattice::Rules::numpy(), numpy);
        assert_eq!(jitted, eager);
        // The two rule sets differ here, so the test sees which one a block ran under.
        let (xla, _) = numpy();
        assert_ne!(xla, jitted);
    }

    /// Complex chains (XLA's fused products, Smith's division, StableHLO's square and square
    /// root, the `complex` primitive of `round`) run fused bit for bit as they run eagerly,
    /// under either rule set.
    #[test]
    fn fused_complex_chains_agree_with_eager_ones() {
        let re = ramp(2 * CHUNK + 5, DType::Float32);
        let im = jnp::multiply(&re, 0.7).unwrap();
        let none = crate::lax::Params::new();
        let z = crate::lax::bind1(&crate::lax::elementwise::COMPLEX, &[&re, &im], &none).unwrap();
        let f = |z: Array| {
            let p = jnp::multiply(&z, jnp::square(&z)?)?;
            let q = jnp::divide(&p, jnp::add(&z, jnp::sqrt(&z)?)?)?;
            jnp::round(jnp::add(jnp::sqrt(&q)?, jnp::sign(&z)?)?)
        };
        // NumPy's rules: the products and the division (their sqrt and rint are NumPy's
        // host loops, not traceable).
        let g = |z: Array| jnp::divide(jnp::multiply(&z, jnp::square(&z)?)?, jnp::add(&z, 1.5)?);
        let jitted_and_eager = |f: &dyn Fn(Array) -> Result<Array, Error>| {
            let j = make_jaxpr(f, &z).unwrap();
            let exe = Executable::compile(&j).unwrap();
            assert!(exe.steps().1 >= 1, "a fused chain: {j}");
            let got = exe.run(&[&z]).unwrap();
            (bits(&got), bits(&[f(z.clone()).unwrap()]))
        };
        let (jitted, eager) = jitted_and_eager(&f);
        assert_eq!(jitted, eager);
        let (jitted, eager) =
            jnp::with_rules(dtype_lattice::Rules::numpy(), || jitted_and_eager(&g));
        assert_eq!(jitted, eager);
        // The two rule sets differ on these products, so each block ran under its caller's.
        assert_ne!(jitted_and_eager(&g).0, jitted);
    }

    /// Constants are folded (omnistaging stages `add 1 1`; the plan multiplies by 2), dead
    /// equations dropped, small arrays run a primitive at a time.
    #[test]
    fn constants_fold_and_dead_code_goes() {
        let x = Array::from_vec(vec![1i32, 2, 3]);
        let j = make_jaxpr(
            |x: Array| {
                let _unused = jnp::exp(jnp::astype(&x, DType::Float32)?)?;
                jnp::multiply(&x, jnp::add(1, 1)?)
            },
            &x,
        )
        .unwrap();
        assert_eq!(j.jaxpr().eqns().len(), 5, "{j}");
        let exe = same_as_interpreter(&j, &[x]);
        assert_eq!(exe.steps(), (1, 0));
    }

    /// A transposed product (an outer product, a matrix product) is computed as the product
    /// of the exchanged operands: no transpose is left, and each element is the interpreter's
    /// bit for bit (the same sum of the same products in the same order). A product used
    /// elsewhere too keeps its transpose. An outer product becomes a multiply.
    #[test]
    fn transposed_products_exchange_their_operands() {
        let a = Array::from_vec(vec![0.3f32, -1.7, 2.5]);
        let b = Array::from_vec(vec![1.1f32, -0.2, 0.7, 9.0]);
        let c = jnp::reshape(ramp(15, DType::Float32), &[3, 5]).unwrap();
        let d = jnp::reshape(jnp::sin(ramp(20, DType::Float32)).unwrap(), &[5, 4]).unwrap();
        let args = (a, b, c, d);
        let f = |(a, b, c, d): (Array, Array, Array, Array)| {
            let outer = crate::lax::outer_product(&a, &b)?;
            let cd = jnp::matmul(&c, &d)?;
            let shared = jnp::matmul(&c, jnp::multiply(&d, 2.0)?)?;
            Ok((
                jnp::transpose(&outer, None)?,
                jnp::transpose(&cd, None)?,
                jnp::transpose(&shared, None)?,
                shared,
            ))
        };
        let j = make_jaxpr(f, &args).unwrap();
        let exe = same_as_interpreter(&j, &[args.0, args.1, args.2, args.3]);
        let count = |prim: &'static Primitive| {
            exe.steps
                .iter()
                .filter(|(s, _)| matches!(s, Step::Call(c) if std::ptr::eq(c.prim, prim)))
                .count()
        };
        // Only the shared product's transpose is left, and the outer product is a multiply
        // of broadcasts (XLA's simplification).
        assert_eq!(count(&crate::lax::TRANSPOSE), 1, "{j}");
        assert_eq!(count(&crate::lax::DOT_GENERAL), 2, "{j}");
        // (`d * 2` and the outer product.)
        assert_eq!(count(&crate::lax::elementwise::MUL), 2, "{j}");
        assert_eq!(count(&crate::lax::BROADCAST_IN_DIM), 2, "{j}");
    }

    /// A gradient over large shapes: fused chains interleaved with reductions and
    /// broadcasts, values read by later chains and calls.
    #[test]
    fn large_gradients_agree() {
        let x = jnp::reshape(ramp(40_000, DType::Float32), &[200, 200]).unwrap();
        let f = |x: Array| {
            let h = jnp::tanh(jnp::multiply(&x, 0.5)?)?;
            let r = jnp::sum(&h, jnp::Axes::Some(vec![1]), true)?;
            let z = jnp::subtract(jnp::exp(&h)?, &r)?;
            jnp::sum(jnp::multiply(&z, &z)?, jnp::Axes::All, false)
        };
        let j = make_jaxpr(|x: Array| grad(f, &x), &x).unwrap();
        let exe = same_as_interpreter(&j, &[x]);
        assert!(exe.steps().1 >= 2, "{j}");
    }
}
