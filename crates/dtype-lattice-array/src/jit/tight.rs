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
//! - else its elementwise slice kernel ([`super::chunk::Kernel`], the fused chains' kernels)
//!   over the whole result, its operation and operands' layout chosen once;
//! - a nested loop runs its own compiled plan ([`super::loops`]) on arrays of the buffers;
//! - else its implementation, on arrays made from the buffers.
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

use super::chunk::Kernel;
use super::loops::LoopPlan;
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

/// How a call runs.
enum How {
    /// Its prepare rule's kernel (`"prepared"`), or its elementwise kernel set up for its
    /// types (`"kernel"`).
    Prepared(PreparedKernel, &'static str),
    /// A loop's compiled plan, on arrays of the buffers.
    Loop(Arc<LoopPlan>),
    Impl,
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

/// A loop body's calls on buffers (see the module documentation).
pub(super) struct Tight {
    /// Bytes of each slot's value (0 for the slots no call writes).
    sizes: Vec<usize>,
    /// Bytes of each operand.
    in_sizes: Vec<usize>,
    calls: Vec<Call>,
    outputs: Vec<Source>,
    /// Frames of finished loops, for the next (a loop run many times, as a `while` inside a
    /// `scan`, allocates its buffers once).
    spare: std::sync::Mutex<Vec<Frame>>,
}

/// The buffers of one loop's iterations: one per call result, reused.
pub(super) struct Frame {
    bufs: Vec<Vec<u64>>,
}

impl fmt::Debug for Tight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = |c: &Call| match c.how {
            How::Prepared(_, what) => what,
            How::Loop(_) => "loop",
            How::Impl => "impl",
        };
        f.debug_list()
            .entries(self.calls.iter().map(|c| (c.prim.name, how(c))))
            .finish()
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
            let prepared = match c.avals.as_slice() {
                _ if nested.is_some() => None,
                [out] => c
                    .prim
                    .prepare
                    .and_then(|rule| rule(c.prim, &c.params, &in_avals, out))
                    .map(|p| (p, "prepared"))
                    .or_else(|| {
                        let k = Kernel::of(c.prim)?.prepare(&c.params, &in_avals, out)?;
                        Some((Prepared::Kernel(k), "kernel"))
                    }),
                _ => None,
            };
            let how = match (prepared, nested) {
                (_, Some(plan)) => How::Loop(Arc::clone(plan)),
                (Some((Prepared::Part { start }, _)), _) => {
                    let (Some(&o), Some(x), [out]) = (c.outs.first(), inputs.first(), &c.avals[..])
                    else {
                        return None;
                    };
                    *alias.get_mut(o)? = Some(x.part(start, bytes_of(out)?, out)?);
                    continue;
                }
                (Some((Prepared::Kernel(k), what)), _) => How::Prepared(k, what),
                (None, _) => How::Impl,
            };
            for (&o, a) in c.outs.iter().zip(&c.avals) {
                *sizes.get_mut(o)? = bytes_of(a)?;
            }
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
        let outputs = exe
            .outputs
            .iter()
            .map(|s| from(s, &alias, &sizes))
            .collect::<Option<_>>()?;
        Some(Tight {
            sizes,
            in_sizes,
            calls,
            outputs,
            spare: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// A frame for one loop's iterations (a spare one if there is one).
    pub(super) fn frame(&self) -> Frame {
        let spare = self.spare.lock().ok().and_then(|mut v| v.pop());
        spare.unwrap_or_else(|| Frame {
            bufs: self
                .sizes
                .iter()
                .map(|&n| vec![0u64; n.div_ceil(8)])
                .collect(),
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
        for c in &self.calls {
            if let [o] = c.outs[..]
                && let How::Prepared(p, _) = &c.how
            {
                // The output's buffer beside the others (a call never reads its own result):
                // the frame split at it, not the buffer taken out and put back.
                let (lo, rest) = frame.bufs.split_at_mut(o);
                let done = match rest.split_first_mut() {
                    Some((buf, hi)) if c.inputs.len() <= MAX_OPERANDS => {
                        let out = bytemuck::cast_slice_mut::<u64, u8>(buf)
                            .get_mut(..self.sizes[o])
                            .unwrap_or_default();
                        // The operands in a fixed array on the stack (no container built or
                        // moved per call), field by field: copying a whole operand copies its
                        // padding, which stalls the store after its one-byte flag (measured: a
                        // fifth of the body's time).
                        let mut ops = [NO_OPERAND; MAX_OPERANDS];
                        for (op, s) in ops.iter_mut().zip(&c.inputs) {
                            let (bytes, clean) = match s {
                                Source::Input(k, r) => (
                                    ins[*k].bytes.get(r.clone()).unwrap_or_default(),
                                    ins[*k].clean,
                                ),
                                Source::Slot(k, r) => {
                                    let b = match k.checked_sub(o + 1) {
                                        Some(j) => hi.get(j),
                                        None => lo.get(*k),
                                    };
                                    let b = b.map_or(&[][..], |b| bytemuck::cast_slice(b));
                                    (b.get(r.clone()).unwrap_or_default(), false)
                                }
                                Source::Const(x, clean) => (x.as_bytes(), *clean),
                            };
                            op.bytes = bytes;
                            op.clean = clean;
                        }
                        p(&ops[..c.inputs.len()], out)
                    }
                    _ => false,
                };
                if done {
                    continue;
                }
            }
            self.implement(c, frame, ins)?;
        }
        Ok(())
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
