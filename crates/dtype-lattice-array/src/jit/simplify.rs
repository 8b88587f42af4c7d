//! XLA's algebraic simplifier: the rewrites of JAX 0.10.2's CPU backend that change values,
//! applied to the plan's calls as XLA applies them to a jitted computation.
//!
//! XLA rewrites a compiled program before it computes it, and some rewrites change the last
//! bits: `a / sqrt(b)` is computed as `a * rsqrt(b)`, `a / exp(b)` as `a * exp(-b)`. Each rule
//! below was measured against `jax.jit` on the CPU backend (`tools/gen_simplifier_fixtures.py`
//! records, for every rule and dtype, a program whose jitted result differs from its
//! primitives' one at a time, and `tests/it/simplifier.rs` reads JAX's printed program and
//! checks that the plan computes JAX's bits). The rules, in the order XLA tries them:
//!
//! | pattern | becomes | dtypes | condition |
//! |---|---|---|---|
//! | `exp(A) / exp(B)` | `exp(A − B)` | real | |
//! | `A / exp(B)` | `A · exp(−B)` | real | |
//! | `A / pow(B, C)` | `A · pow(B, −C)` | real, complex | |
//! | `A / sqrt(B)` | `A · rsqrt(B)` | real | (whatever else reads the `sqrt`) |
//! | `A / rsqrt(B)` | `A · sqrt(B)` | real | |
//! | `A / c` (constant) | `A · (1/c)` | real, complex | (in lowering: `plan::by_reciprocal`) |
//! | `A / broadcast(B)` | `A · broadcast(1/B)` | real | `B` has dimensions, or no other use (also a 0-d `B` lax broadcasts) |
//! | `(A/B) / (C/D)` | `(A·D) / (B·C)` | real, complex | |
//! | `(A/B) / C` | `A / (B·C)` | real, complex | |
//! | `A / (B/C)` | `(A·C) / B` | real, complex | |
//! | `exp(A) · exp(B)` | `exp(A + B)` | real | |
//! | `log(exp(A))` | `A` | real | |
//! | `log(pow(A, B))` | `select(B = 0, 0, B · log(abs(A)))` | real | |
//! | `log(sqrt(A))`, `log(rsqrt(A))` | `0.5 · log(A)`, `−0.5 · log(A)` | real | |
//! | `pow(exp(A), B)` | `exp(A · B)` | real | |
//! | `pow(A, 2)`, `pow(A, 3)`, `pow(A, −1)` | `A·A`, `(A·A)·A`, `1/A` | real, complex | exponent a constant |
//! | `pow(A, 0.5)` | `select(A = −inf, inf, abs(sqrt(A)))` | real | exponent a constant (LLVM's rewrite) |
//! | `sqrt(A · A)` | `abs(A)` | real | |
//!
//! "Real" is float16, float32 and float64: bfloat16 and the 8-bit formats are computed in
//! float32 behind conversions, which hide the patterns from the simplifier; complex numbers
//! are split into their parts first for the transcendental functions. Rewrites repeat until
//! none applies (a rewrite's new calls are simplified in turn), as XLA runs its simplifier to
//! a fixed point; a call no longer read is left for dead code elimination. Under NumPy's
//! rules nothing is rewritten.

use std::collections::HashMap;

use dtype_lattice::DType;
use smallvec::SmallVec;

use super::plan::{Call, Src, by_reciprocal, fold};
use crate::array::{Array, ShapedArray};
use crate::core::{Params, Primitive};
use crate::lax::{self, BROADCAST_IN_DIM, SELECT_N};

/// The plan's calls with XLA's simplifications applied (see the module documentation).
/// `avals` holds every slot's aval and gains the new slots'; `slots` counts the slots.
pub(super) fn simplify(
    calls: Vec<Call>,
    outputs: &mut [Src],
    slots: &mut usize,
    avals: &mut HashMap<usize, ShapedArray>,
) -> Vec<Call> {
    if !crate::config::on_xla() {
        return calls;
    }
    // Each slot's readers among the live calls (XLA removes dead code first).
    let mut uses = vec![0usize; *slots];
    let mut live = vec![false; *slots];
    for s in outputs.iter() {
        if let Src::Slot(k) = s {
            uses[*k] += 1;
            live[*k] = true;
        }
    }
    for c in calls.iter().rev() {
        if c.outs.iter().any(|&o| live[o]) {
            for s in &c.inputs {
                if let Src::Slot(k) = s {
                    uses[*k] += 1;
                    live[*k] = true;
                }
            }
        }
    }
    let mut g = Graph {
        out: Vec::with_capacity(calls.len()),
        producer: HashMap::new(),
        uses,
        live,
        alias: HashMap::new(),
        slots,
        avals,
    };
    for mut c in calls {
        for s in c.inputs.iter_mut() {
            g.resolve(s);
        }
        g.add(c);
    }
    for s in outputs.iter_mut() {
        g.resolve(s);
    }
    g.out
}

/// What a rule makes of a call.
enum Rewrite {
    /// Another call with the same outputs.
    Call(Box<Call>),
    /// The call's (single) output is this operand.
    Alias(Src),
}

struct Graph<'a> {
    out: Vec<Call>,
    /// The call (index in `out`) writing each slot.
    producer: HashMap<usize, usize>,
    /// How many operands of live calls (and outputs) read each slot.
    uses: Vec<usize>,
    /// Whether a slot reaches the outputs (a dead call is left as it is, for dead code
    /// elimination).
    live: Vec<bool>,
    /// Slots whose value is another operand's (`log(exp(A))` is `A`).
    alias: HashMap<usize, Src>,
    slots: &'a mut usize,
    avals: &'a mut HashMap<usize, ShapedArray>,
}

fn is(p: &'static Primitive, q: &'static Primitive) -> bool {
    std::ptr::eq(p, q)
}

fn real(d: DType) -> bool {
    matches!(d, DType::Float16 | DType::Float32 | DType::Float64)
}

fn complex(d: DType) -> bool {
    matches!(d, DType::Complex64 | DType::Complex128)
}

impl Graph<'_> {
    fn resolve(&self, s: &mut Src) {
        while let Src::Slot(k) = s {
            match self.alias.get(k) {
                Some(a) => *s = a.clone(),
                None => break,
            }
        }
    }

    fn aval(&self, s: &Src) -> Option<ShapedArray> {
        match s {
            Src::Const(x) => Some(x.aval().clone()),
            Src::Slot(k) => self.avals.get(k).cloned(),
        }
    }

    /// The call computing `s`, if `s` is a slot an earlier call writes with `prim`.
    fn def(&self, s: &Src, prim: &'static Primitive) -> Option<&Call> {
        let Src::Slot(k) = s else { return None };
        let c = &self.out[*self.producer.get(k)?];
        (is(c.prim, prim) && c.outs.len() == 1).then_some(c)
    }

    /// `s`'s only reader is the call being simplified.
    fn single_use(&self, s: &Src) -> bool {
        matches!(s, Src::Slot(k) if self.uses.get(*k) == Some(&1))
    }

    fn count(&mut self, inputs: &[Src], delta: isize) {
        for s in inputs {
            if let Src::Slot(k) = s {
                if *k >= self.uses.len() {
                    self.uses.resize(*k + 1, 0);
                }
                self.uses[*k] = self.uses[*k].saturating_add_signed(delta);
            }
        }
    }

    /// Simplifies `c` until no rule applies, then appends it.
    fn add(&mut self, mut c: Call) {
        let dead = c
            .outs
            .iter()
            .all(|&o| !self.live.get(o).copied().unwrap_or(true));
        while !dead && let Some(r) = rewrite(self, &c) {
            match r {
                Rewrite::Call(n) => {
                    self.count(&n.inputs, 1);
                    self.count(&c.inputs, -1);
                    c = *n;
                }
                Rewrite::Alias(src) => {
                    self.count(&c.inputs, -1);
                    let o = c.outs[0];
                    // The aliased slot's readers now read `src`.
                    let n = self.uses.get(o).copied().unwrap_or(0);
                    if let Src::Slot(k) = &src {
                        self.count(&[Src::Slot(*k)], n as isize);
                    }
                    self.alias.insert(o, src);
                    return;
                }
            }
        }
        let i = self.out.len();
        for (&o, a) in c.outs.iter().zip(&c.avals) {
            self.producer.insert(o, i);
            self.avals.insert(o, a.clone());
        }
        self.out.push(c);
    }

    /// A new call of `prim` on `inputs` with result `aval` (simplified in its turn, folded
    /// when every operand is a constant): its result.
    fn emit(
        &mut self,
        prim: &'static Primitive,
        params: Params,
        inputs: SmallVec<[Src; 4]>,
        aval: ShapedArray,
    ) -> Src {
        if let Some(mut v) = fold(prim, &params, &inputs, std::slice::from_ref(&aval)) {
            return Src::Const(v.remove(0));
        }
        let slot = *self.slots;
        *self.slots += 1;
        if self.uses.len() < *self.slots {
            self.uses.resize(*self.slots, 0);
        }
        self.count(&inputs, 1);
        self.add(Call {
            prim,
            params,
            inputs,
            outs: smallvec::smallvec![slot],
            avals: smallvec::smallvec![aval],
        });
        let mut s = Src::Slot(slot);
        self.resolve(&mut s);
        s
    }

    /// An elementwise call on `inputs` whose result has `like`'s shape and dtype.
    fn ew(&mut self, prim: &'static Primitive, inputs: &[Src], like: &ShapedArray) -> Src {
        let aval = ShapedArray::new(like.shape(), like.dtype(), false);
        self.emit(prim, Params::new(), inputs.iter().cloned().collect(), aval)
    }

    fn unary(&mut self, prim: &'static Primitive, x: &Src) -> Option<Src> {
        let a = self.aval(x)?;
        Some(self.ew(prim, std::slice::from_ref(x), &a))
    }
}

/// A scalar constant of `dtype`.
fn konst(v: f64, dtype: DType) -> Option<Src> {
    crate::array::scalar(v, dtype).ok().map(Src::Const)
}

/// A constant of `shape` every element of which is `v`.
fn filled(v: f64, shape: &[usize], dtype: DType) -> Option<Src> {
    let one = crate::array::scalar(v, dtype).ok()?;
    let n: usize = shape.iter().product();
    let bytes = one.as_bytes().repeat(n);
    Array::from_bytes(dtype, shape, &bytes).ok().map(Src::Const)
}

/// Whether `s` is a constant whose every element is `v`.
fn all(s: &Src, v: f64) -> bool {
    let Src::Const(x) = s else { return false };
    let Ok(one) = crate::array::scalar(v, x.dtype()) else {
        return false;
    };
    let (b, w) = (x.as_bytes(), one.as_bytes());
    x.is_concrete() && !b.is_empty() && !w.is_empty() && b.chunks(w.len()).all(|e| e == w)
}

fn call(c: &Call, prim: &'static Primitive, inputs: SmallVec<[Src; 4]>) -> Rewrite {
    Rewrite::Call(Box::new(Call {
        prim,
        params: Params::new(),
        inputs,
        outs: c.outs.clone(),
        avals: c.avals.clone(),
    }))
}

/// The first rule that applies to `c`, if any.
fn rewrite(g: &mut Graph<'_>, c: &Call) -> Option<Rewrite> {
    if c.outs.len() != 1 || c.avals.len() != 1 {
        return None;
    }
    let out = c.avals[0].clone();
    let d = out.dtype();
    if !(real(d) || complex(d)) {
        return None;
    }
    let p = c.prim;
    if is(p, &lax::DIV) && c.inputs.len() == 2 {
        divide(g, c, &out)
    } else if is(p, &lax::MUL) && c.inputs.len() == 2 && real(d) {
        let (a, b) = (&c.inputs[0], &c.inputs[1]);
        let x = g.def(a, &lax::EXP)?.inputs[0].clone();
        let y = g.def(b, &lax::EXP)?.inputs[0].clone();
        let s = g.ew(&lax::ADD, &[x, y], &out);
        Some(call(c, &lax::EXP, smallvec::smallvec![s]))
    } else if is(p, &lax::LOG) && real(d) {
        log(g, c, &out)
    } else if is(p, &lax::POW) && c.inputs.len() == 2 {
        power(g, c, &out)
    } else if is(p, &lax::SQRT) && real(d) {
        let m = g.def(&c.inputs[0], &lax::MUL)?;
        let x = m.inputs[0].clone();
        let same = matches!((&m.inputs[0], &m.inputs[1]), (Src::Slot(i), Src::Slot(j)) if i == j);
        same.then(|| call(c, &lax::ABS, smallvec::smallvec![x]))
    } else {
        None
    }
}

fn divide(g: &mut Graph<'_>, c: &Call, out: &ShapedArray) -> Option<Rewrite> {
    let d = out.dtype();
    let (a, b) = (c.inputs[0].clone(), c.inputs[1].clone());
    if real(d) {
        if let (Some(x), Some(y)) = (g.def(&a, &lax::EXP), g.def(&b, &lax::EXP)) {
            let (x, y) = (x.inputs[0].clone(), y.inputs[0].clone());
            let s = g.ew(&lax::SUB, &[x, y], out);
            return Some(call(c, &lax::EXP, smallvec::smallvec![s]));
        }
        if let Some(e) = g.def(&b, &lax::EXP) {
            let y = e.inputs[0].clone();
            let n = g.unary(&lax::NEG, &y)?;
            let e = g.unary(&lax::EXP, &n)?;
            return Some(call(c, &lax::MUL, smallvec::smallvec![a, e]));
        }
    }
    if let Some(pw) = g.def(&b, &lax::POW) {
        let (x, y) = (pw.inputs[0].clone(), pw.inputs[1].clone());
        let n = g.unary(&lax::NEG, &y)?;
        let pa = g.aval(&b)?;
        let pw = g.ew(&lax::POW, &[x, n], &pa);
        return Some(call(c, &lax::MUL, smallvec::smallvec![a, pw]));
    }
    if real(d) {
        for (inner, by) in [(&lax::SQRT, &lax::RSQRT), (&lax::RSQRT, &lax::SQRT)] {
            if let Some(s) = g.def(&b, inner) {
                let y = s.inputs[0].clone();
                let r = g.unary(by, &y)?;
                return Some(call(c, &lax::MUL, smallvec::smallvec![a, r]));
            }
        }
    }
    // A division by a constant (a new one, from the rules below) by its reciprocal.
    if matches!(b, Src::Const(_)) && matches!(a, Src::Slot(_)) {
        let (prim, inputs) = by_reciprocal(c.prim, c.inputs.clone(), out.weak_type());
        if !is(prim, c.prim) {
            return Some(call(c, prim, inputs));
        }
        return None;
    }
    if real(d) {
        match reciprocal_of_broadcast(g, &b, out) {
            Some(Ok(r)) => return Some(call(c, &lax::MUL, smallvec::smallvec![a, r])),
            Some(Err(full)) => return Some(call(c, &lax::DIV, smallvec::smallvec![a, full])),
            None => {}
        }
    }
    let da = g
        .def(&a, &lax::DIV)
        .map(|x| (x.inputs[0].clone(), x.inputs[1].clone()));
    let db = g
        .def(&b, &lax::DIV)
        .map(|x| (x.inputs[0].clone(), x.inputs[1].clone()));
    match (da, db) {
        (Some((a1, b1)), Some((c1, d1))) => {
            let num = g.ew(&lax::MUL, &[a1, d1], out);
            let den = g.ew(&lax::MUL, &[b1, c1], out);
            Some(call(c, &lax::DIV, smallvec::smallvec![num, den]))
        }
        (Some((a1, b1)), None) => {
            let den = g.ew(&lax::MUL, &[b1, b], out);
            Some(call(c, &lax::DIV, smallvec::smallvec![a1, den]))
        }
        (None, Some((b1, c1))) => {
            let num = g.ew(&lax::MUL, &[a, c1], out);
            Some(call(c, &lax::DIV, smallvec::smallvec![num, b1]))
        }
        (None, None) => None,
    }
}

/// `A / broadcast(B)` ⇒ `A · broadcast(1/B)`, where `B` has dimensions or no other use: the reciprocal of
/// the divisor `b` if it is broadcast — by a `broadcast_in_dim` of an operand with fewer
/// elements than the result, or implicitly (lax broadcasts a smaller operand: JAX's lowering
/// broadcasts a 0-d operand as it is, so it must have no other use, and an operand with
/// size-1 dimensions after a reshape of its own, which has none). `Err` with the divisor
/// broadcast explicitly where a 0-d divisor has other uses: XLA divides, and the division of
/// equal shapes does too (`lax::DIV` alone takes the reciprocal of a broadcast divisor, as
/// XLA compiles the primitive alone).
fn reciprocal_of_broadcast(
    g: &mut Graph<'_>,
    b: &Src,
    out: &ShapedArray,
) -> Option<Result<Src, Src>> {
    let one = konst(1.0, out.dtype())?;
    if let Some(bc) = g.def(b, &BROADCAST_IN_DIM)
        && let [inner] = bc.inputs.as_slice()
    {
        let (inner, params, aval) = (inner.clone(), bc.params.clone(), bc.avals[0].clone());
        let ia = g.aval(&inner)?;
        // A 0-d operand read elsewhere too keeps the division (as an implicitly broadcast
        // one below); an operand with dimensions is replaced whatever else reads it.
        if !((ia.ndim() > 0 || g.single_use(&inner)) && ia.size() < out.size()) {
            return None;
        }
        let r = g.ew(&lax::DIV, &[one, inner], &ia);
        return Some(Ok(g.emit(
            &BROADCAST_IN_DIM,
            params,
            smallvec::smallvec![r],
            aval,
        )));
    }
    let ba = g.aval(b)?;
    if ba.size() >= out.size() || !matches!(b, Src::Slot(_)) {
        return None;
    }
    if ba.ndim() > 0 || g.single_use(b) {
        return Some(Ok(g.ew(&lax::DIV, &[one, b.clone()], &ba)));
    }
    let params = Params::new()
        .with(
            "shape",
            crate::core::Param::Ints(out.shape().iter().map(|&d| d as i64).collect()),
        )
        .with("broadcast_dimensions", crate::core::Param::Ints(vec![]))
        .with("sharding", crate::core::Param::None);
    let full = ShapedArray::new(out.shape(), ba.dtype(), ba.weak_type());
    Some(Err(g.emit(
        &BROADCAST_IN_DIM,
        params,
        smallvec::smallvec![b.clone()],
        full,
    )))
}

fn log(g: &mut Graph<'_>, c: &Call, out: &ShapedArray) -> Option<Rewrite> {
    let x = c.inputs[0].clone();
    if let Some(e) = g.def(&x, &lax::EXP) {
        return Some(Rewrite::Alias(e.inputs[0].clone()));
    }
    if let Some(pw) = g.def(&x, &lax::POW) {
        let (a, b) = (pw.inputs[0].clone(), pw.inputs[1].clone());
        let ba = g.aval(&b)?;
        let zero = konst(0.0, out.dtype())?;
        let is_zero = g.emit(
            &lax::EQ,
            Params::new(),
            smallvec::smallvec![b.clone(), zero.clone()],
            ShapedArray::new(ba.shape(), DType::Bool, false),
        );
        let abs = g.unary(&lax::ABS, &a)?;
        let l = g.unary(&lax::LOG, &abs)?;
        let m = g.ew(&lax::MUL, &[b, l], out);
        let zeros = filled(0.0, out.shape(), out.dtype())?;
        return Some(Rewrite::Call(Box::new(Call {
            prim: &SELECT_N,
            params: Params::new(),
            inputs: smallvec::smallvec![is_zero, m, zeros],
            outs: c.outs.clone(),
            avals: c.avals.clone(),
        })));
    }
    for (inner, k) in [(&lax::SQRT, 0.5), (&lax::RSQRT, -0.5)] {
        if let Some(s) = g.def(&x, inner) {
            let y = s.inputs[0].clone();
            let l = g.unary(&lax::LOG, &y)?;
            let k = konst(k, out.dtype())?;
            return Some(call(c, &lax::MUL, smallvec::smallvec![k, l]));
        }
    }
    None
}

fn power(g: &mut Graph<'_>, c: &Call, out: &ShapedArray) -> Option<Rewrite> {
    let (a, b) = (c.inputs[0].clone(), c.inputs[1].clone());
    let d = out.dtype();
    if real(d)
        && let Some(e) = g.def(&a, &lax::EXP)
    {
        let x = e.inputs[0].clone();
        let m = g.ew(&lax::MUL, &[x, b], out);
        return Some(call(c, &lax::EXP, smallvec::smallvec![m]));
    }
    if g.aval(&a)?.shape() != out.shape() {
        return None;
    }
    if all(&b, 2.0) {
        return Some(call(c, &lax::MUL, smallvec::smallvec![a.clone(), a]));
    }
    if all(&b, 3.0) {
        let sq = g.ew(&lax::MUL, &[a.clone(), a.clone()], out);
        return Some(call(c, &lax::MUL, smallvec::smallvec![sq, a]));
    }
    if all(&b, -1.0) {
        let one = konst(1.0, d)?;
        return Some(call(c, &lax::DIV, smallvec::smallvec![one, a]));
    }
    if real(d) && all(&b, 0.5) {
        // LLVM's `pow(x, 0.5)`: `x == -inf ? inf : fabs(sqrt(x))` (−0 → +0, −inf → +inf).
        let s = g.unary(&lax::SQRT, &a)?;
        let s = g.unary(&lax::ABS, &s)?;
        let minus_inf = konst(f64::NEG_INFINITY, d)?;
        let is_minus_inf = g.emit(
            &lax::EQ,
            Params::new(),
            smallvec::smallvec![a, minus_inf],
            ShapedArray::new(out.shape(), DType::Bool, false),
        );
        let inf = filled(f64::INFINITY, out.shape(), d)?;
        return Some(Rewrite::Call(Box::new(Call {
            prim: &SELECT_N,
            params: Params::new(),
            inputs: smallvec::smallvec![is_minus_inf, s, inf],
            outs: c.outs.clone(),
            avals: c.avals.clone(),
        })));
    }
    None
}
