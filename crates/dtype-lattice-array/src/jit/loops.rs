//! Loops in the plan: a `scan`, `while` or `cond` equation runs its bodies as sub-plans,
//! each compiled once with the plan (XLA compiles a loop's body with the program: fused,
//! folded, contracted), called on the carry each iteration without tracing, checking or
//! looking up anything again. A `scan` writes each step's outputs in place into its stacked
//! outputs, allocated once. A `while` whose predicate is batched (JAX's batched-predicate
//! form) keeps its primitive's implementation.

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error};
use smallvec::SmallVec;

use super::plan::{Buffer, Executable};
use super::tight::{Frame, Tight};
use crate::array::{Array, ShapedArray, Storage, layout};
use crate::core::Operand;
use crate::core::{Param, Params, Primitive};
use crate::interpreters::control::{COND, SCAN, WHILE};
use crate::kernels::flush::any_subnormal;

/// A loop equation's compiled bodies.
#[derive(Debug)]
pub(super) enum LoopPlan {
    Scan {
        body: Executable,
        /// The body on buffers, where it is a list of calls.
        tight: Option<Box<Tight>>,
        length: usize,
        num_consts: usize,
        num_carry: usize,
        reverse: bool,
    },
    While {
        cond: Executable,
        body: Executable,
        /// The predicate and the body on buffers, where both are lists of calls.
        tight: Option<Box<(Tight, Tight)>>,
        cond_nconsts: usize,
        body_nconsts: usize,
    },
    Cond {
        branches: Vec<Executable>,
    },
}

impl LoopPlan {
    /// The plan of an equation of `prim`, if it is a loop this module runs.
    ///
    /// # Errors
    ///
    /// A body's compilation error, or malformed parameters.
    pub(super) fn compile(
        prim: &'static Primitive,
        params: &Params,
    ) -> Result<Option<LoopPlan>, Error> {
        if std::ptr::eq(prim, &SCAN) {
            let body = Executable::compile(params.jaxpr("scan", "jaxpr")?)?;
            return Ok(Some(LoopPlan::Scan {
                tight: Tight::of(&body).map(Box::new),
                body,
                length: params.count("scan", "length")?,
                num_consts: params.count("scan", "num_consts")?,
                num_carry: params.count("scan", "num_carry")?,
                reverse: matches!(params.get("reverse"), Some(Param::Bool(true))),
            }));
        }
        if std::ptr::eq(prim, &WHILE) {
            let cond = params.jaxpr("while", "cond_jaxpr")?;
            if cond
                .jaxpr()
                .out_avals()
                .iter()
                .any(|a| !a.shape().is_empty())
            {
                return Ok(None);
            }
            let cond = Executable::compile(cond)?;
            let body = Executable::compile(params.jaxpr("while", "body_jaxpr")?)?;
            return Ok(Some(LoopPlan::While {
                tight: Tight::of(&cond).zip(Tight::of(&body)).map(Box::new),
                cond,
                body,
                cond_nconsts: params.count("while", "cond_nconsts")?,
                body_nconsts: params.count("while", "body_nconsts")?,
            }));
        }
        if std::ptr::eq(prim, &COND) {
            let Some(Param::Jaxprs(js)) = params.get("branches") else {
                return Ok(None);
            };
            let branches = js
                .iter()
                .map(|j| Executable::compile(j))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Some(LoopPlan::Cond { branches }));
        }
        Ok(None)
    }

    /// Runs the loop on `ins` (of the equation's input avals) to outputs of `avals`.
    ///
    /// # Errors
    ///
    /// A body's refusal.
    pub(super) fn run(&self, ins: &[&Array], avals: &[ShapedArray]) -> Result<Vec<Array>, Error> {
        match self {
            LoopPlan::Scan {
                body,
                tight,
                length,
                num_consts,
                num_carry,
                reverse,
            } => {
                if tight.is_some()
                    && let Some(outs) = self.run_on_buffers(ins, avals)?
                {
                    return Ok(outs);
                }
                scan(body, *length, *num_consts, *num_carry, *reverse, ins, avals)
            }
            LoopPlan::While {
                cond,
                body,
                tight,
                cond_nconsts,
                body_nconsts,
            } => {
                if tight.is_some()
                    && let Some(outs) = self.run_on_buffers(ins, avals)?
                {
                    return Ok(outs);
                }
                while_plain(cond, body, (*cond_nconsts, *body_nconsts), ins)
            }
            LoopPlan::Cond { branches } => {
                let index = ins
                    .first()
                    .and_then(|x| x.as_bytes().get(..4))
                    .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .ok_or_else(|| Error::refused(Exception::TypeError, "cond without an index"))?;
                // XLA's Conditional runs the last branch for an index out of range.
                let last = branches.len().saturating_sub(1);
                let i = usize::try_from(index).map_or(last, |i| i.min(last));
                branches
                    .get(i)
                    .ok_or_else(|| Error::refused(Exception::ValueError, "cond without branches"))?
                    .run(&ins[1..])
            }
        }
    }
}

impl LoopPlan {
    /// [`LoopPlan::run`] on its bodies' buffers ([`LoopPlan::run_into`]) into arrays made
    /// once; `None` where the loop does not run on buffers.
    fn run_on_buffers(
        &self,
        ins: &[&Array],
        avals: &[ShapedArray],
    ) -> Result<Option<Vec<Array>>, Error> {
        let bytes: SmallVec<[Bytes<'_>; 16]> = ins
            .iter()
            .map(|x| Bytes {
                bytes: x.as_bytes(),
                dtype: x.dtype(),
            })
            .collect();
        let mut bufs: Vec<Buffer> = avals
            .iter()
            .map(|a| {
                let (width, words) = layout(a.dtype());
                Buffer::new(width, a.size() * words)
            })
            .collect();
        let mut outs: SmallVec<[&mut [u8]; 16]> = bufs.iter_mut().map(Buffer::bytes_mut).collect();
        if !self.run_into(&bytes, &mut outs)? {
            return Ok(None);
        }
        drop(outs);
        Ok(Some(
            bufs.into_iter()
                .zip(avals)
                .map(|(b, a)| Array::from_parts(a.clone(), b.into_storage()))
                .collect(),
        ))
    }

    /// Runs a `scan` or `while` on its bodies' buffers ([`Tight`]) from operands' bytes,
    /// writing its results into `outs` (each of its result's size): a loop nested in a loop
    /// body runs so, no array made. False (nothing written) where it does not run on buffers
    /// (a `cond`, a body that is not a list of calls, operands of other sizes).
    ///
    /// # Errors
    ///
    /// A body's refusal.
    pub(super) fn run_into(
        &self,
        ins: &[Bytes<'_>],
        outs: &mut [&mut [u8]],
    ) -> Result<bool, Error> {
        match self {
            LoopPlan::Scan {
                tight: Some(t),
                length,
                num_consts,
                num_carry,
                reverse,
                ..
            } => scan_tight(t, (*length, *num_consts, *num_carry, *reverse), ins, outs),
            LoopPlan::While {
                tight: Some(pair),
                cond_nconsts,
                body_nconsts,
                ..
            } => {
                let (tc, tb) = &**pair;
                while_tight(tc, tb, (*cond_nconsts, *body_nconsts), ins, outs)
            }
            _ => Ok(false),
        }
    }
}

/// A `while` by its bodies' plans on arrays (the loop on buffers, [`while_tight`], computes
/// the same).
fn while_plain(
    cond: &Executable,
    body: &Executable,
    (cond_nconsts, body_nconsts): (usize, usize),
    ins: &[&Array],
) -> Result<Vec<Array>, Error> {
    let fixed = cond_nconsts + body_nconsts;
    let mut carry: Vec<Array> = ins[fixed..].iter().map(|&x| x.clone()).collect();
    loop {
        crate::config::check_deadline()?;
        let go = {
            let args: SmallVec<[&Array; 8]> = ins[..cond_nconsts]
                .iter()
                .copied()
                .chain(carry.iter())
                .collect();
            let pred = cond.run(&args)?;
            pred.first()
                .is_some_and(|p| p.as_bytes().first() == Some(&1))
        };
        if !go {
            return Ok(carry);
        }
        carry = {
            let args: SmallVec<[&Array; 8]> = ins[cond_nconsts..fixed]
                .iter()
                .copied()
                .chain(carry.iter())
                .collect();
            body.run(&args)?
        };
    }
}

/// Row `i` of `x` (its leading axis), an array of `aval`.
fn row(x: &Array, i: usize, n: usize, aval: &ShapedArray) -> Result<Array, Error> {
    let bytes = x.as_bytes();
    let size = bytes.len() / n.max(1);
    let (width, _) = layout(aval.dtype());
    let part = &bytes[i * size..(i + 1) * size];
    let storage = Storage::overwritten(width, size / width.max(1), |b: &mut [u8]| {
        b.copy_from_slice(part);
        Ok::<(), Error>(())
    })?;
    Ok(Array::from_parts(aval.clone(), storage))
}

fn scan(
    body: &Executable,
    length: usize,
    num_consts: usize,
    num_carry: usize,
    reverse: bool,
    ins: &[&Array],
    avals: &[ShapedArray],
) -> Result<Vec<Array>, Error> {
    let fixed = num_consts + num_carry;
    let mut carry: Vec<Array> = ins[num_consts..fixed].iter().map(|&x| x.clone()).collect();
    let xs = &ins[fixed..];
    let x_avals: Vec<ShapedArray> = xs
        .iter()
        .map(|x| ShapedArray::new(&x.shape()[1..], x.dtype(), x.weak_type()))
        .collect();
    // The stacked outputs, written row by row.
    let mut ys: Vec<(Buffer, usize)> = avals[num_carry..]
        .iter()
        .map(|a| {
            let (width, words) = layout(a.dtype());
            let total = a.size() * words;
            (Buffer::new(width, total), total * width / length.max(1))
        })
        .collect();
    for step in 0..length {
        crate::config::check_deadline()?;
        let i = if reverse { length - 1 - step } else { step };
        let rows: SmallVec<[Array; 4]> = xs
            .iter()
            .zip(&x_avals)
            .map(|(x, a)| row(x, i, length, a))
            .collect::<Result<_, _>>()?;
        let mut out = {
            let args: SmallVec<[&Array; 8]> = ins[..num_consts]
                .iter()
                .copied()
                .chain(carry.iter())
                .chain(rows.iter())
                .collect();
            body.run(&args)?
        };
        let y = out.split_off(num_carry);
        carry = out;
        for ((buf, size), y) in ys.iter_mut().zip(&y) {
            buf.bytes_mut()[i * *size..(i + 1) * *size].copy_from_slice(y.as_bytes());
        }
    }
    let mut outs = carry;
    for ((buf, _), aval) in ys.into_iter().zip(&avals[num_carry..]) {
        outs.push(Array::from_parts(aval.clone(), buf.into_storage()));
    }
    Ok(outs)
}

/// The first `n` bytes of a word buffer.
fn prefix(v: &[u64], n: usize) -> &[u8] {
    &bytemuck::cast_slice(v)[..n]
}

/// The operands as a body reads them: the loop's constants (checked for subnormals once),
/// the carries, then rows of the scanned arrays with whether their array holds no subnormal.
/// Inlined: built in the caller's frame, not returned by a copy of the whole vector (perf
/// showed the copy and the pushes behind it as a fifth of a scan's own time).
#[inline(always)]
fn operands<'a>(
    consts: &[(&'a [u8], bool)],
    carries: impl Iterator<Item = &'a [u8]>,
    rows: impl Iterator<Item = (&'a [u8], bool)>,
) -> SmallVec<[Operand<'a>; 24]> {
    // Pushed field by field, not collected from a chain of options (whose copies of the
    // operands' padding stall on the one-byte flag just stored).
    let mut ops = SmallVec::with_capacity(consts.len() + carries.size_hint().0);
    for &(bytes, clean) in consts {
        ops.push(Operand { bytes, clean });
    }
    for bytes in carries {
        ops.push(Operand {
            bytes,
            clean: false,
        });
    }
    for (bytes, clean) in rows {
        ops.push(Operand { bytes, clean });
    }
    ops
}

/// Which frame slot each carry takes at the end of an iteration: the slot of the call that
/// wrote it (its first carry output), where no earlier carry takes that slot; `None`: the
/// carry is copied. Worked out once a loop, not once an iteration.
fn swaps(t: &Tight, carries: usize) -> SmallVec<[Option<usize>; 16]> {
    let mut taken: SmallVec<[Option<usize>; 16]> = SmallVec::new();
    for k in 0..carries {
        let s = t.output_slot(k).filter(|s| !taken.contains(&Some(*s)));
        taken.push(s);
    }
    taken
}

/// The body's carries after an iteration into `next`: exchanged with the frame's buffer
/// where a call wrote the carry ([`swaps`]), else copied.
fn advance(
    frame: &mut Frame,
    next: &mut [Vec<u64>],
    sizes: &[usize],
    swaps: &[Option<usize>],
    copy_first: impl Fn(&Frame, usize, &mut [u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    // Copies first (they may read a slot another carry takes).
    for (k, buf) in next.iter_mut().enumerate() {
        if swaps.get(k).copied().flatten().is_none() {
            copy_first(
                frame,
                k,
                &mut bytemuck::cast_slice_mut::<u64, u8>(buf)[..sizes[k]],
            )?;
        }
    }
    for (k, buf) in next.iter_mut().enumerate() {
        if let Some(Some(s)) = swaps.get(k)
            && !frame.exchange(*s, buf)
        {
            copy_first(
                frame,
                k,
                &mut bytemuck::cast_slice_mut::<u64, u8>(buf)[..sizes[k]],
            )?;
        }
    }
    Ok(())
}

fn copy_into(dst: &mut [u8], src: &[u8]) -> Result<(), Error> {
    if dst.len() != src.len() {
        return Err(Error::refused(
            Exception::TypeError,
            "a compiled loop body gave a carry of another size",
        ));
    }
    dst.copy_from_slice(src);
    Ok(())
}

/// A loop operand as the loops on buffers read it: its bytes and its dtype.
#[derive(Clone, Copy)]
pub(super) struct Bytes<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) dtype: DType,
}

/// The loop's operands' bytes, each with whether it holds no subnormal (checked once a loop).
fn checked<'a>(xs: &[Bytes<'a>]) -> SmallVec<[(&'a [u8], bool); 16]> {
    xs.iter()
        .map(|x| (x.bytes, !any_subnormal(x.dtype, x.bytes)))
        .collect()
}

/// The loop's carries set to `init` in `frame`'s carry buffers (reused from the frame's last
/// loop where their sizes agree), and the buffers of the next carries beside them.
fn load_carries(frame: &mut Frame, init: &[Bytes<'_>]) {
    for v in [&mut frame.carry, &mut frame.next] {
        v.resize_with(init.len(), Vec::new);
        for (buf, x) in v.iter_mut().zip(init) {
            let n = x.bytes.len().div_ceil(8);
            if buf.len() != n {
                *buf = vec![0u64; n];
            }
        }
    }
    for (buf, x) in frame.carry.iter_mut().zip(init) {
        bytemuck::cast_slice_mut::<u64, u8>(buf)[..x.bytes.len()].copy_from_slice(x.bytes);
    }
}

/// The final carries into `outs`.
fn store_carries(carry: &[Vec<u64>], sizes: &[usize], outs: &mut [&mut [u8]]) -> Result<(), Error> {
    for ((c, &n), out) in carry.iter().zip(sizes).zip(outs.iter_mut()) {
        copy_into(out, prefix(c, n))?;
    }
    Ok(())
}

/// [`scan`] on the body's buffers ([`Tight`]), its results written into `outs` (the carries,
/// then the stacked outputs); false (nothing written) where the operands do not fit them.
fn scan_tight(
    t: &Tight,
    (length, num_consts, num_carry, reverse): (usize, usize, usize, bool),
    ins: &[Bytes<'_>],
    outs: &mut [&mut [u8]],
) -> Result<bool, Error> {
    let fixed = num_consts + num_carry;
    if length == 0 || ins.len() < fixed || outs.len() < num_carry {
        return Ok(false);
    }
    let xs = &ins[fixed..];
    let row_bytes: SmallVec<[usize; 8]> = xs.iter().map(|x| x.bytes.len() / length).collect();
    let probe: SmallVec<[&[u8]; 16]> = ins[..fixed]
        .iter()
        .map(|x| x.bytes)
        .chain(xs.iter().zip(&row_bytes).map(|(x, &n)| &x.bytes[..n]))
        .collect();
    let stacked_fit = outs[num_carry..].iter().all(|o| o.len() % length == 0);
    if !t.fits(&probe) || !stacked_fit {
        return Ok(false);
    }
    let consts = checked(&ins[..num_consts]);
    // The scanned arrays too are checked for subnormals once, not row by row.
    let xs_clean: SmallVec<[bool; 8]> = checked(xs).into_iter().map(|(_, clean)| clean).collect();
    let sizes: SmallVec<[usize; 16]> = ins[num_consts..fixed]
        .iter()
        .map(|x| x.bytes.len())
        .collect();
    let swaps = swaps(t, num_carry);
    let mut frame = t.frame();
    load_carries(&mut frame, &ins[num_consts..fixed]);
    let (mut carry, mut next) = (
        std::mem::take(&mut frame.carry),
        std::mem::take(&mut frame.next),
    );
    let (carry_outs, ys) = outs.split_at_mut(num_carry);
    let mut run = || -> Result<(), Error> {
        for step in 0..length {
            crate::config::check_deadline()?;
            let i = if reverse { length - 1 - step } else { step };
            let ops = operands(
                &consts,
                carry.iter().zip(&sizes).map(|(c, &n)| prefix(c, n)),
                xs.iter()
                    .zip(&row_bytes)
                    .zip(&xs_clean)
                    .map(|((x, &n), &clean)| (&x.bytes[i * n..(i + 1) * n], clean)),
            );
            t.run(&mut frame, &ops)?;
            for (j, y) in ys.iter_mut().enumerate() {
                let size = y.len() / length;
                copy_into(
                    &mut y[i * size..(i + 1) * size],
                    t.output(num_carry + j, &frame, &ops),
                )?;
            }
            advance(&mut frame, &mut next, &sizes, &swaps, |frame, k, dst| {
                copy_into(dst, t.output(k, frame, &ops))
            })?;
            drop(ops);
            std::mem::swap(&mut carry, &mut next);
        }
        store_carries(&carry, &sizes, carry_outs)
    };
    let done = run();
    (frame.carry, frame.next) = (carry, next);
    t.recycle(frame);
    done.map(|()| true)
}

/// The `while` loop on the predicate's and the body's buffers, the final carries written
/// into `outs`; false (nothing written) where the operands do not fit them.
fn while_tight(
    tc: &Tight,
    tb: &Tight,
    (cond_nconsts, body_nconsts): (usize, usize),
    ins: &[Bytes<'_>],
    outs: &mut [&mut [u8]],
) -> Result<bool, Error> {
    let fixed = cond_nconsts + body_nconsts;
    if ins.len() < fixed {
        return Ok(false);
    }
    let carried = &ins[fixed..];
    let cond_probe: SmallVec<[&[u8]; 16]> = ins[..cond_nconsts]
        .iter()
        .chain(carried)
        .map(|x| x.bytes)
        .collect();
    let body_probe: SmallVec<[&[u8]; 16]> = ins[cond_nconsts..].iter().map(|x| x.bytes).collect();
    let sizes: SmallVec<[usize; 16]> = carried.iter().map(|x| x.bytes.len()).collect();
    if !tc.fits(&cond_probe)
        || !tb.fits(&body_probe)
        || outs.len() != sizes.len()
        || outs.iter().zip(&sizes).any(|(o, &n)| o.len() != n)
    {
        return Ok(false);
    }
    let (cconsts, bconsts) = (
        checked(&ins[..cond_nconsts]),
        checked(&ins[cond_nconsts..fixed]),
    );
    let swaps = swaps(tb, carried.len());
    let (mut cframe, mut bframe) = (tc.frame(), tb.frame());
    load_carries(&mut bframe, carried);
    let (mut carry, mut next) = (
        std::mem::take(&mut bframe.carry),
        std::mem::take(&mut bframe.next),
    );
    let mut run = || -> Result<(), Error> {
        loop {
            crate::config::check_deadline()?;
            {
                let ops = operands(
                    &cconsts,
                    carry.iter().zip(&sizes).map(|(c, &n)| prefix(c, n)),
                    std::iter::empty(),
                );
                tc.run(&mut cframe, &ops)?;
                if tc.output(0, &cframe, &ops).first() != Some(&1) {
                    break;
                }
            }
            let ops = operands(
                &bconsts,
                carry.iter().zip(&sizes).map(|(c, &n)| prefix(c, n)),
                std::iter::empty(),
            );
            tb.run(&mut bframe, &ops)?;
            advance(&mut bframe, &mut next, &sizes, &swaps, |frame, k, dst| {
                copy_into(dst, tb.output(k, frame, &ops))
            })?;
            drop(ops);
            std::mem::swap(&mut carry, &mut next);
        }
        store_carries(&carry, &sizes, outs)
    };
    let done = run();
    (bframe.carry, bframe.next) = (carry, next);
    tc.recycle(cframe);
    tb.recycle(bframe);
    done.map(|()| true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interpreters::control;
    use crate::numpy as jnp;
    use dtype_lattice::DType;

    type R<T> = Result<T, Error>;

    fn bits(xs: &[Array]) -> Vec<Vec<u8>> {
        xs.iter().map(|x| x.as_bytes().to_vec()).collect()
    }

    /// The loop equations of `j`'s plan, with their operands: the first equation's operands
    /// are the jaxpr's inputs here.
    fn loop_of(j: &crate::core::ClosedJaxpr) -> (Executable, usize) {
        let exe = Executable::compile(j).unwrap();
        let at = exe
            .steps
            .iter()
            .position(|(s, _)| matches!(s, super::super::plan::Step::Loop(..)))
            .expect("a loop step");
        (exe, at)
    }

    /// The loop at step `at` of `exe`, a scan whose body runs on buffers: its body's calls as
    /// `Tight` lists them, and the scan on `ins` by the plan's own run and on buffers.
    fn scan_both_ways(
        exe: &Executable,
        at: usize,
        ins: &[&Array],
    ) -> (String, Vec<Array>, Vec<Array>) {
        let super::super::plan::Step::Loop(call, plan) = &exe.steps[at].0 else {
            unreachable!()
        };
        let LoopPlan::Scan {
            body,
            tight: Some(t),
            length,
            num_consts,
            num_carry,
            reverse,
        } = &**plan
        else {
            panic!("a scan on buffers: {plan:?}")
        };
        let plain = scan(
            body,
            *length,
            *num_consts,
            *num_carry,
            *reverse,
            ins,
            &call.avals,
        )
        .unwrap();
        let tight = plan
            .run_on_buffers(ins, &call.avals)
            .unwrap()
            .expect("the operands fit");
        (format!("{t:?}"), plain, tight)
    }

    /// A scan body with a prepared product (float32 `dot_general`), elementwise kernels (a
    /// literal operand among them), prepared reductions (`reduce_max`), a call only the
    /// implementation runs (`cumsum`), reshapes that run nothing (of an operand, and of a
    /// result), a nested loop (a `fori_loop`), exchanged carries, a carry output that is an
    /// input (copied) and a scanned output that is a carry: on buffers it computes what the
    /// plan's own run computes, bit for bit, including where a subnormal operand makes the
    /// product decline (step 3) and where a constant holds one (the second loop).
    #[test]
    fn a_scan_body_on_buffers_computes_what_its_plan_computes() {
        let body = |(h, s, t): (Array, Array, Array), x: Array, w: &Array| -> R<_> {
            let x = jnp::reshape(&jnp::reshape(&x, &[2, -1])?, &[-1])?;
            let pre = jnp::add(jnp::matmul(&h, w)?, &x)?;
            let pre = jnp::reshape(&jnp::reshape(&pre, &[-1, 2])?, &[-1])?;
            let h2 = jnp::tanh(&jnp::subtract(&pre, 0.25)?)?;
            let m = jnp::add(
                jnp::max(&h2, Default::default(), false)?,
                &jnp::max(&jnp::cumsum(&h2)?, Default::default(), false)?,
            )?;
            let m = control::fori_loop(
                &Array::scalar(0i32),
                &Array::scalar(2i32),
                |_, a: Array| jnp::add(jnp::multiply(&a, 0.5)?, &m),
                &m,
            )?;
            Ok(((h2.clone(), t, jnp::add(&s, &m)?), (h.clone(), m)))
        };
        let f = |(w, h0, xs): (Array, Array, Array)| -> R<_> {
            control::scan(
                |c, x| body(c, x, &w),
                &(h0.clone(), Array::scalar(0f32), Array::scalar(1f32)),
                &xs,
                None,
                false,
            )
        };
        let n: usize = 8;
        let w_v: Vec<f32> = (0..n * n).map(|i| 0.3 * (i as f32).cos()).collect();
        let w = Array::from_shape_vec(&[n, n], w_v).unwrap();
        let mut xs_v: Vec<f32> = (0..6 * n).map(|i| (i as f32 * 0.37).sin()).collect();
        xs_v[3 * n + 2] = f32::MIN_POSITIVE / 4.0;
        let xs = Array::from_shape_vec(&[6, n], xs_v).unwrap();
        let mut h0_v = vec![0.5f32; n];
        h0_v[1] = f32::MIN_POSITIVE / 8.0;
        let h0 = Array::from_vec(h0_v);
        let mut w_sub = w.to_vec::<f32>().unwrap();
        w_sub[5] = -f32::MIN_POSITIVE / 2.0;
        let w_sub = Array::from_shape_vec(&[n, n], w_sub).unwrap();
        for w in [w, w_sub] {
            let args = (w.clone(), h0.clone(), xs.clone());
            let j = crate::make_jaxpr(f, &args).unwrap();
            let (exe, at) = loop_of(&j);
            let ins = [&w, &h0, &Array::scalar(0f32), &Array::scalar(1f32), &xs];
            let (kinds, plain, tight) = scan_both_ways(&exe, at, &ins);
            for k in ["prepared", "kernel", "impl", "loop"] {
                assert!(kinds.contains(k), "{kinds}");
            }
            assert!(!kinds.contains("reshape"), "{kinds}");
            assert_eq!(bits(&plain), bits(&tight));
            for (p, q) in plain.iter().zip(&tight) {
                assert_eq!(p.aval(), q.aval());
            }
            // And the jitted function agrees with its eager evaluation (nothing here is
            // contracted by the plan).
            let jitted: ((Array, Array, Array), (Array, Array)) =
                crate::jit(f).call(&args).unwrap();
            let eager = f(args.clone()).unwrap();
            let flat =
                |((a, b, c), (d, e)): ((Array, Array, Array), (Array, Array))| vec![a, b, c, d, e];
            assert_eq!(bits(&flat(jitted)), bits(&flat(eager)));
        }
    }

    /// Runs of elementwise calls in a scan body run as blocks ([`super::super::block`]): float32
    /// and float64 arithmetic, comparisons, `and`, `select_n`, `neg`, `abs`, fused
    /// multiply-adds, integer arithmetic and `integer_pow`, one-element values computed in
    /// a block and spread over a longer one's elements, a block's value read in part by a
    /// slice (the run ends there), values read only inside a block (not written back) and
    /// carries; NaNs, infinities, signed zeros and subnormals among the operands. On buffers
    /// the body computes what its plan computes, bit for bit, under JAX's rules with and
    /// without x64 and under NumPy's (where float64 blocks decline and their calls run one
    /// by one).
    #[test]
    fn elementwise_runs_run_as_blocks() {
        use crate::core::{Params, bind1};
        use dtype_lattice::Rules;
        let select = |c: &Array, a: &Array, b: &Array| {
            bind1(&crate::lax::select::SELECT_N, &[c, a, b], &Params::new())
        };
        type Carry = (Array, Array, Array, Array);
        let body = |(v, s, k, d): Carry, x: Array| -> R<(Carry, (Array, Array))> {
            let t = jnp::add(&jnp::multiply(&v, &x)?, &s)?;
            let u = jnp::divide(&t, &jnp::add(&jnp::abs(&x)?, 0.5)?)?;
            let m = jnp::minimum(&jnp::maximum(&u, &jnp::negative(&t)?)?, 3.0)?;
            let c = jnp::logical_and(&jnp::less(&m, &s)?, &jnp::equal(&t, &t)?)?;
            let w = select(&c, &jnp::subtract(&t, 1.0)?, &m)?;
            let s2 = jnp::add(&jnp::multiply(&s, 0.5)?, 1.0)?;
            let v2 = jnp::multiply(&w, &s2)?;
            let head = jnp::index(
                &v2,
                &[super::super::super::numpy::Index::Slice(Some(1), None, 1)],
            )?;
            let p = jnp::add(
                &jnp::power(&head, 3)?,
                &jnp::astype(&jnp::greater(&head, 0.0)?, head.dtype())?,
            )?;
            let k2 = jnp::maximum(&jnp::add(&k, 1)?, &jnp::multiply(&k, 2)?)?;
            let d2 = jnp::subtract(&jnp::multiply(&d, 1.5)?, &jnp::abs(&d)?)?;
            let d2 = select(&jnp::less_equal(&d2, &d)?, &d, &d2)?;
            Ok(((v2, s2, k2, d2), (p, c)))
        };
        let x: Vec<f32> = vec![
            0.5,
            -0.0,
            2.0,
            f32::NAN,
            1e-40,
            -3.0,
            f32::INFINITY,
            0.25,
            -1e-39,
            7.0,
            -0.5,
            1.0,
        ];
        let xs = Array::from_shape_vec(&[4, 3], x).unwrap();
        let v0 = Array::from_vec(vec![1.0f32, -2.0, 1e-41]);
        let d0 = Array::from_vec(vec![1e-310f64, -2.5]);
        // Traced under JAX's rules, run under these (NumPy's: the float64 blocks decline).
        let cases = [
            (
                Rules::jax().x64(true),
                Rules::jax().x64(true),
                DType::Float64,
            ),
            (Rules::jax(), Rules::jax(), DType::Float32),
            (Rules::jax().x64(true), Rules::numpy(), DType::Float64),
        ];
        for (traced, rules, dd) in cases {
            let d0 = d0.astype(dd).unwrap();
            let f = |(v0, d0, xs): (Array, Array, Array)| {
                control::scan(
                    body,
                    &(v0, Array::scalar(0.75f32), Array::scalar(3i32), d0),
                    &xs,
                    None,
                    false,
                )
            };
            let args = (v0.clone(), d0.clone(), xs.clone());
            let j = crate::config::with_rules(traced, || crate::make_jaxpr(f, &args)).unwrap();
            let (exe, at) = loop_of(&j);
            let consts: Vec<Array> = j.consts.clone();
            let carry = [&v0, &Array::scalar(0.75f32), &Array::scalar(3i32), &d0];
            let mut ins: Vec<&Array> = consts.iter().collect();
            ins.extend(carry);
            ins.push(&xs);
            crate::config::with_rules(rules, || {
                let (kinds, plain, tight) = scan_both_ways(&exe, at, &ins);
                assert!(kinds.matches("block of").count() >= 2, "{kinds}");
                assert_eq!(bits(&plain), bits(&tight), "{rules:?}");
            });
        }
    }

    /// A `while` (a `fori_loop` with traced bounds) on buffers: the predicate and the body,
    /// the carries exchanged or copied, agree with the plan's own run.
    #[test]
    fn a_while_body_on_buffers_computes_what_its_plan_computes() {
        let f = |(n, x): (Array, Array)| -> R<(Array, Array)> {
            control::fori_loop(
                &Array::scalar(0i32),
                &n,
                |i, (a, b): (Array, Array)| {
                    let c = jnp::add(&jnp::multiply(&a, 0.5)?, &jnp::astype(&i, DType::Float32)?)?;
                    Ok((b, c))
                },
                &(x.clone(), jnp::negative(&x)?),
            )
        };
        let args = (
            Array::scalar(7i32),
            Array::from_vec(vec![1.0f32, -2.0, 3.5]),
        );
        let j = crate::make_jaxpr(f, &args).unwrap();
        let (exe, at) = loop_of(&j);
        let super::super::plan::Step::Loop(call, plan) = &exe.steps[at].0 else {
            unreachable!()
        };
        let LoopPlan::While {
            tight: Some(_),
            cond,
            body,
            cond_nconsts,
            body_nconsts,
        } = &**plan
        else {
            panic!("a while on buffers: {plan:?}")
        };
        let x = &args.1;
        let (neg, zero) = (jnp::negative(x).unwrap(), Array::scalar(0i32));
        // The loop's operands: its constants (the bound), then the carry (i, upper, a, b) as
        // `fori_loop` builds it.
        let consts: Vec<Array> = j.consts.clone();
        let mut ins: Vec<&Array> = consts.iter().collect();
        let carry = [&zero, &args.0, x, &neg];
        ins.extend(carry);
        assert_eq!(
            ins.len(),
            call.avals.len() + cond_nconsts + body_nconsts,
            "{j}"
        );
        let tight = plan
            .run_on_buffers(&ins, &call.avals)
            .unwrap()
            .expect("the operands fit");
        let plain = while_plain(cond, body, (*cond_nconsts, *body_nconsts), &ins).unwrap();
        assert_eq!(bits(&plain), bits(&tight));
        let jitted: (Array, Array) = crate::jit(f).call(&args).unwrap();
        let eager = f(args.clone()).unwrap();
        assert_eq!(bits(&[jitted.0, jitted.1]), bits(&[eager.0, eager.1]));
    }
}
