//! Loop bodies on buffers: a `scan` or `while` body whose plan is a list of primitive calls
//! runs each iteration on buffers allocated once per loop, as XLA runs a loop's compiled
//! body, instead of building an array per result.
//!
//! Each call was given, when the plan was compiled, the fastest way it has:
//!
//! - its primitive's prepare rule ([`crate::core::Prepared`]: `dot_general` of float32 and
//!   float64, `convert_element_type`, the primitives that move elements), a kernel set up once
//!   for the call's types and sizes; a call whose result is a stretch of its operand's bytes
//!   (a `reshape`, a `squeeze`, a contiguous `slice`, a conversion to the same dtype,
//!   [`Prepared::Part`]) runs nothing: its readers read the operand where it lies;
//! - else its elementwise kernel ([`super::chunk::Elementwise`], the fused chains' kernels)
//!   over the whole result, its operation and operands' layout chosen once;
//! - a run of two or more elementwise calls of at most 16 elements whose kernels have block
//!   instructions (float arithmetic and comparisons, `select_n`, `neg`, `abs`, fused
//!   multiply-adds, integer arithmetic, `and`/`or`/`xor`, `integer_pow`) runs as one
//!   program ([`super::block`]) on a register file kept with the frame (the constants
//!   loaded once per frame); where it declines (float64 under NumPy's rules) its calls run
//!   one by one;
//! - a nested loop runs its own compiled plan on buffers ([`LoopPlan::run_into`]): its
//!   operands read where they lie, its results written into their slots;
//! - else its implementation, on arrays made from the buffers.
//!
//! The run reads a compact table ([`Hot`]: each call's kernel, result slot and operand
//! locations), kept apart from the primitives, parameters and types that only the
//! implementation reads: a few words a call (measured on odeint's bodies of some 260 calls:
//! 15 % faster than reading the calls themselves).
//!
//! A kernel that does not cover a case it meets (a subnormal operand of a product, another
//! rule set) declines and the implementation runs, so a body computes exactly what its plan
//! computes through [`Executable::run`]. The loop's constants are checked once for
//! subnormals. A carry written by the body is passed to the next iteration by exchanging
//! buffers, not copied.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use dtype_lattice::Error;
use dtype_lattice::error::Exception;
use smallvec::SmallVec;

use super::block::{Builder, MAX_REGISTERS, Program, Reg};
use super::chunk::{Elementwise, Kernel};
use super::loops::{Bytes, LoopPlan};
use super::plan::{Executable, Src, Step};
use crate::array::{Array, ShapedArray, element_bytes};
use crate::core::{Operand, Params, Prepared, PreparedKernel, Primitive};
use crate::kernels::flush::any_subnormal;

/// The most operands a call passes its kernel from the stack (more: the implementation).
const MAX_OPERANDS: usize = 8;

/// A placeholder operand.
const NO_OPERAND: Operand<'static> = Operand {
    bytes: &[],
    clean: false,
};

/// A value a call reads: an operand's or a slot's bytes (all of them, or the stretch a
/// `reshape` or a contiguous `slice` reads, [`Prepared::Part`]), or a constant.
#[derive(Clone, Debug)]
enum Source {
    /// The body's `k`th operand, these of its bytes.
    Input(usize, Range<usize>),
    /// A call's result in the frame, these of its bytes.
    Slot(usize, Range<usize>),
    /// A constant, and whether it holds no subnormal float.
    Const(Array, bool),
}

impl Source {
    /// The part `start..start + len` of this value's bytes, as a source.
    fn part(&self, start: usize, len: usize, aval: &ShapedArray) -> Option<Source> {
        let sub = |r: &Range<usize>| {
            let s = r.start.checked_add(start)?;
            let e = s.checked_add(len)?;
            (e <= r.end).then_some(s..e)
        };
        Some(match self {
            Source::Input(k, r) => Source::Input(*k, sub(r)?),
            Source::Slot(k, r) => Source::Slot(*k, sub(r)?),
            Source::Const(x, clean) => {
                let bytes = x.as_bytes().get(start..start.checked_add(len)?)?;
                let part = Array::from_bytes(aval.dtype(), aval.shape(), bytes).ok()?;
                Source::Const(part.with_weak_type(aval.weak_type()), *clean)
            }
        })
    }
}

/// How a call runs when it has no kernel ([`Fast::Slow`]) or its kernel declines.
enum How {
    /// A loop's compiled plan, on the buffers ([`super::loops::LoopPlan::run_into`]) or on
    /// arrays of them.
    Loop(Arc<LoopPlan>),
    Impl,
}

/// Where a call's operand lies, as the run reads it: the body's `k`th operand or slot `k`,
/// bytes `start..end` of it, or constant `k` (and whether it holds no subnormal float).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loc {
    Input { k: u32, start: u32, end: u32 },
    Slot { k: u32, start: u32, end: u32 },
    Const { k: u32, clean: bool },
}

/// A call's kernel, as the run calls it.
enum Fast {
    Elementwise(Elementwise),
    Prepared(PreparedKernel),
    /// The calls after this entry, as one program ([`Fused`]); where it declines, the calls
    /// run one by one.
    Block(Box<Fused>),
    /// A nested loop or the implementation ([`Call`]'s way).
    Slow,
}

/// A call as the run reads it, a few words apart from the primitive, its parameters and its
/// types (which only the implementation and nested loops read).
struct Hot {
    fast: Fast,
    /// The call's index in [`Tight::calls`] (a block: its first member's).
    call: u32,
    /// The result's slot and its bytes (single-result calls; else unused).
    out: u32,
    out_len: u32,
    /// The operands: `locs[ins.0..ins.1]`.
    ins: (u32, u32),
}

struct Call {
    prim: &'static Primitive,
    params: Params,
    inputs: SmallVec<[Source; 4]>,
    in_avals: SmallVec<[ShapedArray; 4]>,
    outs: SmallVec<[usize; 1]>,
    avals: SmallVec<[ShapedArray; 1]>,
    how: How,
}

/// A run of elementwise calls as one program ([`super::block`]).
struct Fused {
    prog: Program,
    /// The operands each load reads, but constants (`(load, location)`).
    loads: Vec<(usize, Loc)>,
    /// The constants' loads, made once per frame.
    fixed: Vec<(usize, Loc)>,
    /// Its registers in the frame's file.
    regs: Range<usize>,
    /// The calls it stands for (the entries after it).
    members: usize,
}

/// A loop body's calls on buffers (see the module documentation).
pub(super) struct Tight {
    /// The calls as the run reads them (one per call of `calls`).
    hot: Vec<Hot>,
    locs: Vec<Loc>,
    /// The constants' words and bytes.
    consts: Vec<(Vec<u64>, usize)>,
    /// Bytes of each slot's value (0 for the slots no call writes).
    sizes: Vec<usize>,
    /// Bytes of each operand.
    in_sizes: Vec<usize>,
    calls: Vec<Call>,
    outputs: Vec<Source>,
    /// Lanes of the blocks' register file.
    lanes: usize,
    /// Frames of finished loops, for the next (a loop run many times, as a `while` inside a
    /// `scan`, allocates its buffers once).
    spare: std::sync::Mutex<Vec<Frame>>,
}

/// The buffers of one loop's iterations: one per call result, reused.
pub(super) struct Frame {
    bufs: Vec<Vec<u64>>,
    /// The blocks' registers (their constants loaded when the frame is made).
    regs: Vec<u64>,
    /// The carries of the loop running this body, and the next iteration's ([`super::loops`]
    /// fills them: kept with the frame so that a loop run many times allocates them once).
    pub(super) carry: Vec<Vec<u64>>,
    pub(super) next: Vec<Vec<u64>>,
}

impl fmt::Debug for Tight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entry = |h: &Hot| {
            let c = self.calls.get(h.call as usize);
            let kind = match (&h.fast, c.map(|c| &c.how)) {
                (Fast::Block(b), _) => return format!("block of {}", b.members),
                (Fast::Prepared(_), _) => "prepared",
                (Fast::Elementwise(_), _) => "kernel",
                (Fast::Slow, Some(How::Loop(_))) => "loop",
                (Fast::Slow, _) => "impl",
            };
            format!("{} {kind}", c.map_or("?", |c| c.prim.name))
        };
        f.debug_list().entries(self.hot.iter().map(entry)).finish()
    }
}

/// Bytes of an array of `aval` (`None` for a dtype whose elements are not whole bytes in
/// storage, or `float0`).
fn bytes_of(aval: &ShapedArray) -> Option<usize> {
    if aval.dtype().is_float0() {
        return None;
    }
    aval.size().checked_mul(element_bytes(aval.dtype()))
}

fn broken() -> Error {
    Error::refused(
        Exception::TypeError,
        "a compiled loop body read a value of another size",
    )
}

impl Tight {
    /// The body `exe` on buffers, if its plan is a list of primitive calls and loops on
    /// byte-sized dtypes (a fused chain keeps the plan's own run).
    pub(super) fn of(exe: &Executable) -> Option<Tight> {
        let mut sizes = vec![0usize; exe.slots];
        let mut input_of = vec![None; exe.slots];
        let mut in_sizes = Vec::with_capacity(exe.inputs.len());
        for (k, &s) in exe.inputs.iter().enumerate() {
            input_of[s] = Some(k);
            in_sizes.push(bytes_of(exe.avals.get(s)?.as_ref()?)?);
        }
        // A result that is part of its operand's bytes, unchanged (a reshape, a contiguous
        // slice) is read where the operand is: the slot's source.
        let mut alias: Vec<Option<Source>> = vec![None; exe.slots];
        let from = |s: &Src, alias: &[Option<Source>], sizes: &[usize]| -> Option<Source> {
            Some(match s {
                Src::Slot(k) => match (input_of.get(*k)?, alias.get(*k)?) {
                    (Some(i), _) => Source::Input(*i, 0..*in_sizes.get(*i)?),
                    (None, Some(a)) => a.clone(),
                    (None, None) => Source::Slot(*k, 0..*sizes.get(*k)?),
                },
                Src::Const(x) => {
                    bytes_of(x.aval())?;
                    Source::Const(x.clone(), !any_subnormal(x.dtype(), x.as_bytes()))
                }
            })
        };
        let aval_of = |s: &Src| -> Option<ShapedArray> {
            match s {
                Src::Slot(k) => exe.avals.get(*k)?.clone(),
                Src::Const(x) => Some(x.aval().clone()),
            }
        };
        let mut calls = Vec::with_capacity(exe.steps.len());
        let mut hot = Vec::with_capacity(exe.steps.len());
        let (mut locs, mut consts) = (Vec::new(), Vec::new());
        for (step, _) in &exe.steps {
            let (c, nested) = match step {
                Step::Call(c) => (c, None),
                Step::Loop(c, plan) => (c, Some(plan)),
                Step::Fused(_) => return None,
            };
            let inputs: SmallVec<[Source; 4]> = c
                .inputs
                .iter()
                .map(|s| from(s, &alias, &sizes))
                .collect::<Option<_>>()?;
            let in_avals: SmallVec<[ShapedArray; 4]> =
                c.inputs.iter().map(aval_of).collect::<Option<_>>()?;
            for a in &c.avals {
                bytes_of(a)?;
            }
            let mut fast = Fast::Slow;
            let how = match (c.avals.as_slice(), nested) {
                (_, Some(plan)) => How::Loop(Arc::clone(plan)),
                ([out], None) => match c
                    .prim
                    .prepare
                    .and_then(|rule| rule(c.prim, &c.params, &in_avals, out))
                {
                    Some(Prepared::Part { start }) => {
                        let (Some(&o), Some(x)) = (c.outs.first(), inputs.first()) else {
                            return None;
                        };
                        *alias.get_mut(o)? = Some(x.part(start, bytes_of(out)?, out)?);
                        continue;
                    }
                    Some(Prepared::Kernel(k)) => {
                        fast = Fast::Prepared(k);
                        How::Impl
                    }
                    None => {
                        let k = Kernel::of(c.prim);
                        if let Some(k) = k.and_then(|k| k.prepare(&c.params, &in_avals, out)) {
                            fast = Fast::Elementwise(k);
                        }
                        How::Impl
                    }
                },
                _ => How::Impl,
            };
            for (&o, a) in c.outs.iter().zip(&c.avals) {
                *sizes.get_mut(o)? = bytes_of(a)?;
            }
            let first = u32::try_from(locs.len()).ok()?;
            for x in &inputs {
                let u = |n: usize| u32::try_from(n).ok();
                locs.push(match x {
                    Source::Input(k, r) => Loc::Input {
                        k: u(*k)?,
                        start: u(r.start)?,
                        end: u(r.end)?,
                    },
                    Source::Slot(k, r) => Loc::Slot {
                        k: u(*k)?,
                        start: u(r.start)?,
                        end: u(r.end)?,
                    },
                    Source::Const(x, clean) => {
                        let bytes = x.as_bytes();
                        let mut words = vec![0u64; bytes.len().div_ceil(8)];
                        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()]
                            .copy_from_slice(bytes);
                        consts.push((words, bytes.len()));
                        Loc::Const {
                            k: u(consts.len() - 1)?,
                            clean: *clean,
                        }
                    }
                });
            }
            let out = c.outs.first().copied().unwrap_or(0);
            hot.push(Hot {
                fast,
                call: u32::try_from(calls.len()).ok()?,
                out: u32::try_from(out).ok()?,
                out_len: u32::try_from(*sizes.get(out)?).ok()?,
                ins: (first, u32::try_from(locs.len()).ok()?),
            });
            calls.push(Call {
                prim: c.prim,
                params: c.params.clone(),
                inputs,
                in_avals,
                outs: c.outs.clone(),
                avals: c.avals.iter().cloned().collect(),
                how,
            });
        }
        let outputs: Vec<Source> = exe
            .outputs
            .iter()
            .map(|s| from(s, &alias, &sizes))
            .collect::<Option<_>>()?;
        let (hot, lanes) = fuse(hot, &calls, &locs, &outputs, sizes.len())?;
        Some(Tight {
            hot,
            locs,
            consts,
            sizes,
            in_sizes,
            calls,
            outputs,
            lanes,
            spare: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// A frame for one loop's iterations (a spare one if there is one).
    pub(super) fn frame(&self) -> Frame {
        let spare = self.spare.lock().ok().and_then(|mut v| v.pop());
        spare.unwrap_or_else(|| {
            let mut frame = Frame {
                bufs: self
                    .sizes
                    .iter()
                    .map(|&n| vec![0u64; n.div_ceil(8)])
                    .collect(),
                regs: vec![0u64; self.lanes],
                carry: Vec::new(),
                next: Vec::new(),
            };
            // The blocks' constants, loaded once per frame (where one does not load, the
            // register file is emptied: every block then declines and its calls run).
            for h in &self.hot {
                if let Fast::Block(b) = &h.fast {
                    for &(k, l) in &b.fixed {
                        let (bytes, _) = self.fetch(l, usize::MAX - 1, &[], &[], &[]);
                        let regs = frame.regs.get_mut(b.regs.clone()).unwrap_or_default();
                        if !b.prog.load(regs, k, bytes) {
                            frame.regs.clear();
                        }
                    }
                }
            }
            frame
        })
    }

    /// Keeps a finished loop's frame for the next loop (a few per body).
    pub(super) fn recycle(&self, frame: Frame) {
        if let Ok(mut v) = self.spare.lock()
            && v.len() < 4
        {
            v.push(frame);
        }
    }

    /// Whether `ins` are operands of this body's sizes.
    pub(super) fn fits(&self, ins: &[&[u8]]) -> bool {
        ins.len() == self.in_sizes.len()
            && ins.iter().zip(&self.in_sizes).all(|(b, &n)| b.len() == n)
    }

    #[inline(always)]
    fn read<'a>(&self, s: &'a Source, frame: &'a Frame, ins: &[Operand<'a>]) -> Operand<'a> {
        match s {
            Source::Input(k, r) => Operand {
                bytes: ins[*k].bytes.get(r.clone()).unwrap_or_default(),
                clean: ins[*k].clean,
            },
            Source::Slot(k, r) => Operand {
                bytes: bytemuck::cast_slice(&frame.bufs[*k])
                    .get(r.clone())
                    .unwrap_or_default(),
                clean: false,
            },
            Source::Const(x, clean) => Operand {
                bytes: x.as_bytes(),
                clean: *clean,
            },
        }
    }

    /// Runs the body's calls on `ins` (the operands, of [`Tight::fits`]'s sizes) into `frame`.
    ///
    /// # Errors
    ///
    /// A primitive's refusal.
    pub(super) fn run(&self, frame: &mut Frame, ins: &[Operand<'_>]) -> Result<(), Error> {
        let mut at = 0;
        while let Some(h) = self.hot.get(at) {
            at += 1;
            if let Fast::Block(b) = &h.fast {
                if self.block(b, frame, ins) {
                    at += b.members;
                }
                continue;
            }
            let c = self.calls.get(h.call as usize).ok_or_else(broken)?;
            if !matches!(h.fast, Fast::Slow) {
                // The output's buffer beside the others (a call never reads its own result):
                // the frame split at it, not the buffer taken out and put back.
                let o = h.out as usize;
                let (lo, rest) = frame.bufs.split_at_mut(o);
                let Some((buf, hi)) = rest.split_first_mut() else {
                    return Err(broken());
                };
                let out = bytemuck::cast_slice_mut::<u64, u8>(buf)
                    .get_mut(..h.out_len as usize)
                    .unwrap_or_default();
                let locs = self
                    .locs
                    .get(h.ins.0 as usize..h.ins.1 as usize)
                    .unwrap_or_default();
                let done = match &h.fast {
                    Fast::Elementwise(k) => {
                        let mut ops: [&[u8]; 3] = [&[]; 3];
                        for (op, l) in ops.iter_mut().zip(locs) {
                            *op = self.fetch(*l, o, lo, hi, ins).0;
                        }
                        k.run(&ops, out)
                    }
                    Fast::Prepared(p) if locs.len() <= MAX_OPERANDS => {
                        // The operands in a fixed array on the stack (no container built or
                        // moved per call), field by field: copying a whole operand copies its
                        // padding, which stalls the store after its one-byte flag (measured:
                        // a fifth of the body's time).
                        let mut ops = [NO_OPERAND; MAX_OPERANDS];
                        for (op, l) in ops.iter_mut().zip(locs) {
                            let (bytes, clean) = self.fetch(*l, o, lo, hi, ins);
                            op.bytes = bytes;
                            op.clean = clean;
                        }
                        p(&ops[..locs.len()], out)
                    }
                    _ => false,
                };
                if done {
                    continue;
                }
            }
            if let How::Loop(plan) = &c.how
                && self.nested(plan, c, frame, ins)?
            {
                continue;
            }
            self.implement(c, frame, ins)?;
        }
        Ok(())
    }

    /// Runs block `b` (false, nothing written, where it declines: its calls then run one by
    /// one).
    fn block(&self, b: &Fused, frame: &mut Frame, ins: &[Operand<'_>]) -> bool {
        if b.prog.xla_only() && !crate::lax::on_xla() {
            return false;
        }
        let Frame { bufs, regs, .. } = frame;
        let Some(regs) = regs.get_mut(b.regs.clone()) else {
            return false;
        };
        for &(k, l) in &b.loads {
            let (bytes, _) = self.fetch(l, bufs.len(), bufs, &[], ins);
            if !b.prog.load(regs, k, bytes) {
                return false;
            }
        }
        b.prog.exec(regs);
        for s in b.prog.stores() {
            let out = bufs
                .get_mut(s.slot as usize)
                .map(|b| bytemuck::cast_slice_mut::<u64, u8>(b));
            let n = self.sizes.get(s.slot as usize).copied().unwrap_or(0);
            let Some(out) = out.and_then(|o| o.get_mut(..n)) else {
                return false;
            };
            if !b.prog.store(regs, s, out) {
                return false;
            }
        }
        true
    }

    /// The bytes `l` names, and whether they hold no subnormal float, for a call writing
    /// slot `o` (the frame split at it: `lo` the slots before, `hi` those after).
    #[inline(always)]
    fn fetch<'a>(
        &'a self,
        l: Loc,
        o: usize,
        lo: &'a [Vec<u64>],
        hi: &'a [Vec<u64>],
        ins: &[Operand<'a>],
    ) -> (&'a [u8], bool) {
        match l {
            Loc::Input { k, start, end } => match ins.get(k as usize) {
                Some(x) => (
                    x.bytes
                        .get(start as usize..end as usize)
                        .unwrap_or_default(),
                    x.clean,
                ),
                None => (&[], false),
            },
            Loc::Slot { k, start, end } => {
                let k = k as usize;
                let b = match k.checked_sub(o + 1) {
                    Some(j) => hi.get(j),
                    None => lo.get(k),
                };
                let b = b.map_or(&[][..], |b| bytemuck::cast_slice(b));
                (
                    b.get(start as usize..end as usize).unwrap_or_default(),
                    false,
                )
            }
            Loc::Const { k, clean } => match self.consts.get(k as usize) {
                Some((w, n)) => (
                    bytemuck::cast_slice::<u64, u8>(w)
                        .get(..*n)
                        .unwrap_or_default(),
                    clean,
                ),
                None => (&[], false),
            },
        }
    }

    /// A nested loop's call run on buffers: its operands read where they lie, its results
    /// written into their slots (taken out of the frame meanwhile: a call never reads its own
    /// results). False (nothing written) where the loop does not run on buffers.
    fn nested(
        &self,
        plan: &LoopPlan,
        c: &Call,
        frame: &mut Frame,
        ins: &[Operand<'_>],
    ) -> Result<bool, Error> {
        let mut taken: SmallVec<[Vec<u64>; 8]> = c
            .outs
            .iter()
            .map(|&o| {
                frame
                    .bufs
                    .get_mut(o)
                    .map(std::mem::take)
                    .unwrap_or_default()
            })
            .collect();
        let done = {
            let args: SmallVec<[Bytes<'_>; 16]> = c
                .inputs
                .iter()
                .zip(&c.in_avals)
                .map(|(s, a)| Bytes {
                    bytes: self.read(s, frame, ins).bytes,
                    dtype: a.dtype(),
                })
                .collect();
            let mut outs: SmallVec<[&mut [u8]; 8]> = taken
                .iter_mut()
                .zip(&c.outs)
                .map(|(b, &o)| {
                    let b = bytemuck::cast_slice_mut::<u64, u8>(b);
                    let n = self.sizes.get(o).copied().unwrap_or(0).min(b.len());
                    &mut b[..n]
                })
                .collect();
            plan.run_into(&args, &mut outs)
        };
        for (&o, b) in c.outs.iter().zip(taken) {
            if let Some(slot) = frame.bufs.get_mut(o) {
                *slot = b;
            }
        }
        done
    }

    /// `c` by its primitive's implementation (a loop: its plan), on arrays of the buffers.
    fn implement(&self, c: &Call, frame: &mut Frame, ins: &[Operand<'_>]) -> Result<(), Error> {
        let arrays: SmallVec<[Array; 4]> = c
            .inputs
            .iter()
            .zip(&c.in_avals)
            .map(|(s, a)| match s {
                Source::Const(x, _) => Ok(x.clone()),
                _ => Ok(
                    Array::from_bytes(a.dtype(), a.shape(), self.read(s, frame, ins).bytes)?
                        .with_weak_type(a.weak_type()),
                ),
            })
            .collect::<Result<_, Error>>()?;
        let refs: SmallVec<[&Array; 4]> = arrays.iter().collect();
        let outs = match &c.how {
            How::Loop(plan) => SmallVec::<[Array; 1]>::from_vec(plan.run(&refs, &c.avals)?),
            _ => crate::core::implement(c.prim, &refs, &c.params, &c.avals)?,
        };
        for (&o, x) in c.outs.iter().zip(&outs) {
            let src = x.as_bytes();
            let dst = bytemuck::cast_slice_mut::<u64, u8>(&mut frame.bufs[o])
                .get_mut(..self.sizes[o])
                .filter(|d| d.len() == src.len())
                .ok_or_else(broken)?;
            dst.copy_from_slice(src);
        }
        Ok(())
    }

    /// The bytes of the body's `k`th result after [`Tight::run`] (empty past the last).
    pub(super) fn output<'a>(
        &'a self,
        k: usize,
        frame: &'a Frame,
        ins: &[Operand<'a>],
    ) -> &'a [u8] {
        match self.outputs.get(k) {
            Some(Source::Input(i, r)) => ins[*i].bytes.get(r.clone()).unwrap_or_default(),
            Some(Source::Slot(s, r)) => bytemuck::cast_slice(&frame.bufs[*s])
                .get(r.clone())
                .unwrap_or_default(),
            Some(Source::Const(x, _)) => x.as_bytes(),
            None => &[],
        }
    }

    /// The frame slot holding the body's `k`th result, if a call writes it.
    pub(super) fn output_slot(&self, k: usize) -> Option<usize> {
        match self.outputs.get(k) {
            Some(Source::Slot(s, r)) if r.start == 0 && r.end == self.sizes[*s] => Some(*s),
            _ => None,
        }
    }
}

/// A slot's readers: the entries reading it, and whether it is a result of the body.
struct Readers {
    by: Vec<SmallVec<[u32; 4]>>,
    output: Vec<bool>,
}

impl Readers {
    /// Whether slot `k` is read apart from the entries `within`.
    fn outside(&self, k: usize, within: Range<usize>) -> bool {
        self.output.get(k).copied().unwrap_or(true)
            || self
                .by
                .get(k)
                .is_none_or(|r| r.iter().any(|&i| !within.contains(&(i as usize))))
    }
}

/// A value a block computed: its slot, register, element bytes and bytes.
struct Made {
    slot: usize,
    reg: Reg,
    width: usize,
    bytes: usize,
}

/// The block of the longest run of elementwise calls from entry `s` that block instructions
/// cover ([`super::block`]), and the entry after it; `None` for a run of fewer than two.
fn block_at(
    s: usize,
    hot: &[Hot],
    calls: &[Call],
    locs: &[Loc],
    readers: &Readers,
) -> Option<(Fused, usize)> {
    let mut b = Builder::new();
    let mut loaded: Vec<(Loc, Reg, usize)> = Vec::new();
    let mut made: Vec<Made> = Vec::new();
    let mut end = s;
    for h in hot.get(s..)? {
        let Fast::Elementwise(k) = &h.fast else { break };
        let Some((code, n, one)) = k.element() else {
            break;
        };
        let Some(c) = calls.get(h.call as usize) else {
            break;
        };
        let ls = locs
            .get(h.ins.0 as usize..h.ins.1 as usize)
            .unwrap_or_default();
        let ([out], [slot]) = (c.avals.as_slice(), c.outs.as_slice()) else {
            break;
        };
        if ls.len() != one.len()
            || ls.len() != c.in_avals.len()
            || b.registers() + 2 * ls.len() + 1 > MAX_REGISTERS
        {
            break;
        }
        let mut args: SmallVec<[(Reg, bool); 3]> = SmallVec::new();
        for ((l, a), &one) in ls.iter().zip(&c.in_avals).zip(one) {
            let w = element_bytes(a.dtype());
            let inside = match l {
                Loc::Slot { k, start, end } => made
                    .iter()
                    .find(|m| m.slot == *k as usize)
                    .map(|m| (m, *start as usize, *end as usize)),
                _ => None,
            };
            let reg = match inside {
                // A value of the block, read whole as it was made (else the run ends here).
                Some((m, 0, e)) if e == m.bytes && m.width == w => Some(m.reg),
                Some(_) => None,
                None => match loaded.iter().find(|(x, _, lw)| x == l && *lw == w) {
                    Some(&(_, r, _)) => Some(r),
                    None => b.load(w, a.size()).inspect(|&r| loaded.push((*l, r, w))),
                },
            };
            match reg {
                Some(r) => args.push((r, one)),
                None => break,
            }
        }
        if args.len() != ls.len() {
            break;
        }
        let Some(reg) = b.op(code, n, &args) else {
            break;
        };
        made.push(Made {
            slot: *slot,
            reg,
            width: element_bytes(out.dtype()),
            bytes: h.out_len as usize,
        });
        end += 1;
    }
    if end < s + 2 {
        return None;
    }
    for m in &made {
        if readers.outside(m.slot, s..end) {
            b.store(m.reg, m.width, m.slot)?;
        }
    }
    let (mut loads, mut fixed) = (Vec::new(), Vec::new());
    for (k, &(l, _, _)) in loaded.iter().enumerate() {
        match l {
            Loc::Const { .. } => fixed.push((k, l)),
            _ => loads.push((k, l)),
        }
    }
    let prog = b.finish();
    Some((
        Fused {
            regs: 0..prog.lanes(),
            prog,
            loads,
            fixed,
            members: end - s,
        },
        end,
    ))
}

/// The entries with each run of elementwise calls that block instructions cover preceded by
/// its block ([`block_at`]), and the lanes of the blocks' register file.
fn fuse(
    hot: Vec<Hot>,
    calls: &[Call],
    locs: &[Loc],
    outputs: &[Source],
    slots: usize,
) -> Option<(Vec<Hot>, usize)> {
    let mut readers = Readers {
        by: vec![SmallVec::new(); slots],
        output: vec![false; slots],
    };
    for (i, h) in hot.iter().enumerate() {
        for l in locs.get(h.ins.0 as usize..h.ins.1 as usize)? {
            if let Loc::Slot { k, .. } = l {
                readers
                    .by
                    .get_mut(*k as usize)?
                    .push(u32::try_from(i).ok()?);
            }
        }
    }
    for s in outputs {
        if let Source::Slot(k, _) = s {
            *readers.output.get_mut(*k)? = true;
        }
    }
    let mut blocks = Vec::new();
    let mut at = 0;
    while at < hot.len() {
        match block_at(at, &hot, calls, locs, &readers) {
            Some((b, end)) => {
                blocks.push((at, b));
                at = end;
            }
            None => at += 1,
        }
    }
    let mut lanes = 0;
    let mut out = Vec::with_capacity(hot.len() + blocks.len());
    let mut blocks = blocks.into_iter().peekable();
    for (i, h) in hot.into_iter().enumerate() {
        if let Some((_, mut b)) = blocks.next_if(|(s, _)| *s == i) {
            let n = b.regs.len();
            b.regs = lanes..lanes + n;
            lanes += n;
            out.push(Hot {
                fast: Fast::Block(Box::new(b)),
                call: h.call,
                out: 0,
                out_len: 0,
                ins: (0, 0),
            });
        }
        out.push(h);
    }
    Some((out, lanes))
}

impl Frame {
    /// Exchanges the buffer of `slot` with `buf` (of the same size: a carry's), so that a
    /// result becomes the next iteration's operand without a copy.
    /// False (nothing exchanged) for buffers of different sizes.
    pub(super) fn exchange(&mut self, slot: usize, buf: &mut Vec<u64>) -> bool {
        match self.bufs.get_mut(slot) {
            Some(b) if b.len() == buf.len() => {
                std::mem::swap(b, buf);
                true
            }
            _ => false,
        }
    }
}
