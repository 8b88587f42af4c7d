//! Loops in the plan: a `scan`, `while` or `cond` equation runs its bodies as sub-plans,
//! each compiled once with the plan (XLA compiles a loop's body with the program: fused,
//! folded, contracted), called on the carry each iteration without tracing, checking or
//! looking up anything again. A `scan` writes each step's outputs in place into its stacked
//! outputs, allocated once. A `while` whose predicate is batched (JAX's batched-predicate
//! form) keeps its primitive's implementation.

use dtype_lattice::Error;
use dtype_lattice::error::Exception;
use smallvec::SmallVec;

use super::plan::{Buffer, Executable};
use crate::array::{Array, ShapedArray, Storage, layout};
use crate::core::{Param, Params, Primitive};
use crate::interpreters::control::{COND, SCAN, WHILE};

/// A loop equation's compiled bodies.
#[derive(Debug)]
pub(super) enum LoopPlan {
    Scan {
        body: Executable,
        length: usize,
        num_consts: usize,
        num_carry: usize,
        reverse: bool,
    },
    While {
        cond: Executable,
        body: Executable,
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
            return Ok(Some(LoopPlan::Scan {
                body: Executable::compile(params.jaxpr("scan", "jaxpr")?)?,
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
            return Ok(Some(LoopPlan::While {
                cond: Executable::compile(cond)?,
                body: Executable::compile(params.jaxpr("while", "body_jaxpr")?)?,
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
                length,
                num_consts,
                num_carry,
                reverse,
            } => scan(body, *length, *num_consts, *num_carry, *reverse, ins, avals),
            LoopPlan::While {
                cond,
                body,
                cond_nconsts,
                body_nconsts,
            } => {
                let fixed = cond_nconsts + body_nconsts;
                let mut carry: Vec<Array> = ins[fixed..].iter().map(|&x| x.clone()).collect();
                loop {
                    crate::config::check_deadline()?;
                    let go = {
                        let args: SmallVec<[&Array; 8]> = ins[..*cond_nconsts]
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
                        let args: SmallVec<[&Array; 8]> = ins[*cond_nconsts..fixed]
                            .iter()
                            .copied()
                            .chain(carry.iter())
                            .collect();
                        body.run(&args)?
                    };
                }
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
