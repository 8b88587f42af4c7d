//! Loop bodies on buffers: a `scan` or `while` body whose plan is a list of primitive calls
//! runs each iteration on buffers allocated once per loop, as XLA runs a loop's compiled
//! body, instead of building an array per result.
//!
//! Each call was given, when the plan was compiled, the fastest way it has:
//!
//! - its primitive's prepare rule ([`crate::core::Prepared`]: `dot_general` of float32 and
//!   float64, `convert_element_type`, the primitives that move elements), a kernel set up once
//!   for the call's types and sizes;
//! - else its elementwise slice kernel ([`super::chunk::Kernel`], the fused chains' kernels)
//!   over the whole result;
//! - else its implementation, on arrays made from the buffers.
//!
//! A kernel that does not cover a case it meets (a subnormal operand of a product, another
//! rule set) declines and the implementation runs, so a body computes exactly what its plan
//! computes through [`Executable::run`]. The loop's constants are checked once for
//! subnormals. A carry written by the body is passed to the next iteration by exchanging
//! buffers, not copied.

use std::fmt;

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error};
use smallvec::SmallVec;

use super::chunk::{Arg, Kernel};
use super::plan::{Executable, Src, Step};
use crate::array::{Array, ShapedArray, element_bytes};
use crate::core::{Operand, Params, Prepared, Primitive};
use crate::kernels::flush::any_subnormal;

/// The most operands a call passes its kernel from the stack (more: the implementation).
const MAX_OPERANDS: usize = 8;

/// A placeholder operand.
const NO_OPERAND: Operand<'static> = Operand {
    bytes: &[],
    clean: false,
};

/// A value a call reads.
#[derive(Clone, Debug)]
enum Source {
    /// The body's `k`th operand.
    Input(usize),
    /// A call's result, in the frame.
    Slot(usize),
    /// A constant, and whether it holds no subnormal float.
    Const(Array, bool),
}

/// How a call runs.
enum How {
    Prepared(Prepared),
    Kernel(Kernel),
    Impl,
}

struct Call {
    prim: &'static Primitive,
    params: Params,
    inputs: SmallVec<[Source; 4]>,
    in_avals: SmallVec<[ShapedArray; 4]>,
    outs: SmallVec<[usize; 1]>,
    avals: SmallVec<[ShapedArray; 1]>,
    /// The result's elements, and for each operand whether it is one element standing for
    /// all (a 0-d operand of an elementwise kernel).
    n: usize,
    scalar: SmallVec<[bool; 4]>,
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
            How::Prepared(_) => "prepared",
            How::Kernel(_) => "kernel",
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
    /// The body `exe` on buffers, if its plan is a list of primitive calls on byte-sized
    /// dtypes (a fused chain or a nested loop keeps the plan's own run).
    pub(super) fn of(exe: &Executable) -> Option<Tight> {
        let mut sizes = vec![0usize; exe.slots];
        let mut input_of = vec![None; exe.slots];
        let mut in_sizes = Vec::with_capacity(exe.inputs.len());
        for (k, &s) in exe.inputs.iter().enumerate() {
            input_of[s] = Some(k);
            in_sizes.push(bytes_of(exe.avals.get(s)?.as_ref()?)?);
        }
        let from = |s: &Src| -> Option<Source> {
            Some(match s {
                Src::Slot(k) => match input_of.get(*k)? {
                    Some(i) => Source::Input(*i),
                    None => Source::Slot(*k),
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
            let Step::Call(c) = step else { return None };
            for (&o, a) in c.outs.iter().zip(&c.avals) {
                *sizes.get_mut(o)? = bytes_of(a)?;
            }
            let inputs: SmallVec<[Source; 4]> = c.inputs.iter().map(from).collect::<Option<_>>()?;
            let in_avals: SmallVec<[ShapedArray; 4]> =
                c.inputs.iter().map(aval_of).collect::<Option<_>>()?;
            let how = match c.avals.as_slice() {
                [out] => {
                    let prepared = c
                        .prim
                        .prepare
                        .and_then(|rule| rule(c.prim, &c.params, &in_avals, out));
                    let whole = in_avals
                        .iter()
                        .all(|a| a.shape() == out.shape() || a.shape().is_empty());
                    match (prepared, Kernel::of(c.prim)) {
                        (Some(p), _) => How::Prepared(p),
                        (None, Some(k)) if whole => How::Kernel(k),
                        _ => How::Impl,
                    }
                }
                _ => How::Impl,
            };
            let n = c.avals.first().map_or(0, ShapedArray::size);
            let scalar = in_avals.iter().map(|a| a.size() != n).collect();
            calls.push(Call {
                prim: c.prim,
                params: c.params.clone(),
                inputs,
                n,
                scalar,
                in_avals,
                outs: c.outs.clone(),
                avals: c.avals.iter().cloned().collect(),
                how,
            });
        }
        let outputs = exe.outputs.iter().map(from).collect::<Option<_>>()?;
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
            Source::Input(k) => ins[*k],
            Source::Slot(k) => Operand {
                bytes: &bytemuck::cast_slice(&frame.bufs[*k])[..self.sizes[*k]],
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
            if let [o] = c.outs[..] {
                let mut buf = std::mem::take(&mut frame.bufs[o]);
                let done = c.inputs.len() <= MAX_OPERANDS && {
                    let out = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut buf)[..self.sizes[o]];
                    // The operands in a fixed array on the stack (no container built or moved
                    // per call).
                    let mut ops = [NO_OPERAND; MAX_OPERANDS];
                    for (op, s) in ops.iter_mut().zip(&c.inputs) {
                        *op = self.read(s, frame, ins);
                    }
                    let ops = &ops[..c.inputs.len()];
                    match &c.how {
                        How::Prepared(p) => p(ops, out),
                        How::Kernel(k) => {
                            let mut args = [(Arg::Scalar(&[]), DType::Bool); MAX_OPERANDS];
                            for (((arg, op), a), &one) in
                                args.iter_mut().zip(ops).zip(&c.in_avals).zip(&c.scalar)
                            {
                                let bytes = op.bytes;
                                *arg = (
                                    if one {
                                        Arg::Scalar(bytes)
                                    } else {
                                        Arg::Block(bytes)
                                    },
                                    a.dtype(),
                                );
                            }
                            k.run(&c.params, &args[..ops.len()], c.avals[0].dtype(), c.n, out)
                        }
                        How::Impl => false,
                    }
                };
                frame.bufs[o] = buf;
                if done {
                    continue;
                }
            }
            self.implement(c, frame, ins)?;
        }
        Ok(())
    }

    /// `c` by its primitive's implementation, on arrays of the buffers.
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
        let outs = crate::core::implement(c.prim, &refs, &c.params, &c.avals)?;
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
            Some(Source::Input(i)) => ins[*i].bytes,
            Some(Source::Slot(s)) => &bytemuck::cast_slice(&frame.bufs[*s])[..self.sizes[*s]],
            Some(Source::Const(x, _)) => x.as_bytes(),
            None => &[],
        }
    }

    /// The frame slot holding the body's `k`th result, if a call writes it.
    pub(super) fn output_slot(&self, k: usize) -> Option<usize> {
        match self.outputs.get(k) {
            Some(Source::Slot(s)) => Some(*s),
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
