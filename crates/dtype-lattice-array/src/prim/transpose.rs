//! The transpose rules of the linear primitives (JAX's `ad.primitive_transposes`), referenced
//! from their definitions: cotangents of the linear operands from the cotangents of the
//! outputs, the other operands known. Every operation is a bound primitive, so backward passes
//! stage and differentiate like anything else.

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::elementwise::Op;
use super::lax;
use super::{Param, Params, Primitive, bind1};
use crate::array::{Array, ShapedArray};

/// An operand of a linear equation: linear (of this aval) or known.
#[derive(Clone, Debug)]
pub enum Lin {
    /// A linear operand (a tangent or cotangent).
    Linear(ShapedArray),
    /// A known operand (a residual or a literal).
    Known(Array),
}

impl Lin {
    fn is_linear(&self) -> bool {
        matches!(self, Lin::Linear(_))
    }

    fn aval(&self) -> &ShapedArray {
        match self {
            Lin::Linear(a) => a,
            Lin::Known(x) => x.aval(),
        }
    }

    fn known(&self) -> Result<&Array, Error> {
        match self {
            Lin::Known(x) => Ok(x),
            Lin::Linear(_) => Err(nonlinear()),
        }
    }
}

/// A transpose rule: `(output cotangents, operands, params) -> operand cotangents`.
pub type TransposeRule =
    fn(&'static Primitive, &[Option<Array>], &[Lin], &Params) -> Result<Vec<Option<Array>>, Error>;

fn nonlinear() -> Error {
    Error::refused(
        Exception::NotImplementedError,
        "a primitive was transposed in an operand it is not linear in",
    )
}

fn prim(name: &str) -> Result<&'static Primitive, Error> {
    super::by_name(name).ok_or_else(|| {
        Error::refused(
            Exception::NotImplementedError,
            format!("no primitive {name}"),
        )
    })
}

fn ints(v: impl IntoIterator<Item = usize>) -> Param {
    Param::Ints(v.into_iter().map(|d| d as i64).collect())
}

fn reduce_sum(x: &Array, axes: &[usize]) -> Result<Array, Error> {
    if axes.is_empty() {
        return Ok(x.clone());
    }
    let p = Params::new()
        .with("axes", ints(axes.iter().copied()))
        .with("out_sharding", Param::None);
    bind1(prim("reduce_sum")?, &[x], &p)
}

fn reshape(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    let p = Params::new()
        .with("new_sizes", ints(shape.iter().copied()))
        .with("dimensions", Param::None)
        .with("sharding", Param::None);
    bind1(prim("reshape")?, &[x], &p)
}

fn transpose(x: &Array, perm: &[usize]) -> Result<Array, Error> {
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(x.clone());
    }
    bind1(
        prim("transpose")?,
        &[x],
        &Params::new().with("permutation", ints(perm.iter().copied())),
    )
}

/// The cotangent `ct` of a broadcast result summed back to `aval` (lax's implicit
/// broadcasting of 0-d operands and size-1 dimensions), in `aval`'s dtype.
fn unbroadcast(ct: &Array, aval: &ShapedArray) -> Result<Array, Error> {
    let ct = if ct.shape() == aval.shape() {
        ct.clone()
    } else if aval.ndim() == 0 {
        reduce_sum(ct, &(0..ct.ndim()).collect::<Vec<_>>())?
    } else {
        let axes: Vec<usize> = (0..ct.ndim())
            .filter(|&d| aval.shape()[d] == 1 && ct.shape()[d] != 1)
            .collect();
        reshape(&reduce_sum(ct, &axes)?, aval.shape())?
    };
    convert(&ct, aval)
}

fn convert(x: &Array, aval: &ShapedArray) -> Result<Array, Error> {
    if x.dtype() == aval.dtype() {
        return Ok(x.clone());
    }
    lax::convert(x, aval.dtype(), false)
}

/// The elementwise primitives linear in some operand: `add`, `sub`, `neg`, `mul` and `div`
/// (by a known operand).
pub(crate) fn elementwise_transpose<const OP: u8>(
    _prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    _params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let each = |f: &dyn Fn(usize, &ShapedArray) -> Result<Array, Error>| {
        ins.iter()
            .enumerate()
            .map(|(i, l)| match l {
                Lin::Linear(a) => f(i, a).map(Some),
                Lin::Known(_) => Ok(None),
            })
            .collect::<Result<Vec<_>, Error>>()
    };
    match Op::of(OP) {
        Op::Add | Op::AddAny => each(&|_, a| unbroadcast(&ct, a)),
        Op::Sub => each(&|i, a| {
            let c = if i == 0 { ct.clone() } else { lax::neg(&ct)? };
            unbroadcast(&c, a)
        }),
        Op::Neg => each(&|_, a| unbroadcast(&lax::neg(&ct)?, a)),
        // As JAX: `mul(ct, y)` for a linear first operand, `mul(x, ct)` for the second.
        Op::Mul => each(&|i, a| {
            let other = ins[1 - i].known()?;
            let c = if i == 0 {
                lax::mul(&ct, other)?
            } else {
                lax::mul(other, &ct)?
            };
            unbroadcast(&c, a)
        }),
        // As JAX: `real(ct)` for the real part, `imag(neg(ct))` for the imaginary one.
        Op::Complex => each(&|i, a| {
            let c = if i == 0 {
                lax::unary("real", &ct)?
            } else {
                lax::unary("imag", &lax::neg(&ct)?)?
            };
            unbroadcast(&c, a)
        }),
        Op::Div => each(&|i, a| {
            if i != 0 {
                return Err(nonlinear());
            }
            unbroadcast(&lax::div(&ct, ins[1].known()?)?, a)
        }),
        _ => Err(nonlinear()),
    }
}

/// `convert_element_type`: the cotangent converted back.
pub(crate) fn convert_transpose(
    _prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    _params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    cts[0]
        .as_ref()
        .map(|ct| convert(ct, ins[0].aval()))
        .transpose()
        .map(|c| vec![c])
}

fn usizes(params: &Params, prim: &str, name: &str) -> Result<Vec<usize>, Error> {
    params.usizes(prim, name)
}

/// The structural primitives, reductions and scans, and `select_n`, `concatenate`, `pad`,
/// `slice`, `dot_general`.
pub(crate) fn structural_transpose(
    p: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let a0 = ins[0].aval();
    let first = |c: Array| -> Vec<Option<Array>> {
        let mut v = vec![Some(c)];
        v.extend(std::iter::repeat_n(None, ins.len() - 1));
        v
    };
    Ok(match p.name {
        "reduce_sum" => {
            let axes = usizes(params, p.name, "axes")?;
            let kept: Vec<usize> = (0..a0.ndim()).filter(|d| !axes.contains(d)).collect();
            let bp = Params::new()
                .with("shape", ints(a0.shape().iter().copied()))
                .with("broadcast_dimensions", ints(kept))
                .with("sharding", Param::None);
            first(bind1(&super::BROADCAST_IN_DIM, &[&ct], &bp)?)
        }
        "broadcast_in_dim" => {
            let bd = usizes(params, p.name, "broadcast_dimensions")?;
            let sum: Vec<usize> = (0..ct.ndim())
                .filter(|d| match bd.iter().position(|b| b == d) {
                    None => true,
                    Some(i) => a0.shape()[i] == 1 && ct.shape()[*d] != 1,
                })
                .collect();
            first(reshape(&reduce_sum(&ct, &sum)?, a0.shape())?)
        }
        "reshape" | "squeeze" => first(reshape(&ct, a0.shape())?),
        "transpose" => {
            let perm = usizes(params, p.name, "permutation")?;
            let mut inv = vec![0; perm.len()];
            for (i, &q) in perm.iter().enumerate() {
                inv[q] = i;
            }
            first(transpose(&ct, &inv)?)
        }
        "rev" => first(bind1(p, &[&ct], params)?),
        "cumsum" => {
            let reverse = matches!(params.get("reverse"), Some(Param::Bool(true)));
            let q = Params::new()
                .with("axis", params.get("axis").cloned().unwrap_or(Param::Int(0)))
                .with("reverse", Param::Bool(!reverse));
            first(bind1(p, &[&ct], &q)?)
        }
        "select_n" => {
            let which = ins[0].known()?;
            let zeros = crate::core::jvp_zeros_like(&ct)?;
            let mut out = vec![None];
            for (i, l) in ins.iter().enumerate().skip(1) {
                out.push(if l.is_linear() {
                    let mut cases: Vec<&Array> = vec![&zeros; ins.len() - 1];
                    cases[i - 1] = &ct;
                    Some(lax::select_n(which, &cases)?)
                } else {
                    None
                });
            }
            out
        }
        "concatenate" => {
            let d = super::structural::param_int(params, p.name, "dimension")? as usize;
            let mut start = 0;
            let mut out = Vec::new();
            for l in ins {
                let n = l.aval().shape()[d];
                out.push(if l.is_linear() {
                    let mut lo = vec![0; ct.ndim()];
                    let mut hi = ct.shape().to_vec();
                    lo[d] = start;
                    hi[d] = start + n;
                    Some(slice(&ct, &lo, &hi, None)?)
                } else {
                    None
                });
                start += n;
            }
            out
        }
        "slice" => {
            let start = usizes(params, p.name, "start_indices")?;
            let strides = match params.get("strides") {
                Some(Param::Ints(_)) => usizes(params, p.name, "strides")?,
                _ => vec![1; start.len()],
            };
            let cfg: Vec<(i64, i64, i64)> = (0..a0.ndim())
                .map(|d| {
                    let n = ct.shape()[d];
                    let last = if n == 0 {
                        start[d]
                    } else {
                        start[d] + (n - 1) * strides[d] + 1
                    };
                    (
                        start[d] as i64,
                        (a0.shape()[d] - last.min(a0.shape()[d])) as i64,
                        if n == 0 { 0 } else { strides[d] as i64 - 1 },
                    )
                })
                .collect();
            first(pad(&ct, &cfg)?)
        }
        "pad" => {
            let cfg = match params.get("padding_config") {
                Some(Param::Padding(c)) => c.clone(),
                _ => return Err(nonlinear()),
            };
            let unpad: Vec<(i64, i64, i64)> = cfg.iter().map(|&(l, h, _)| (-l, -h, 0)).collect();
            let t = pad(&ct, &unpad)?;
            let t = if cfg.iter().any(|c| c.2 > 0) {
                let hi = t.shape().to_vec();
                let strides: Vec<usize> = cfg.iter().map(|c| c.2 as usize + 1).collect();
                slice(&t, &vec![0; t.ndim()], &hi, Some(&strides))?
            } else {
                t
            };
            // The padding value's cotangent (JAX's `_pad_transpose`): every element of the
            // cotangent that the operand's did not take.
            let value = match ins.get(1) {
                Some(v) if v.is_linear() => {
                    let all = |x: &Array| reduce_sum(x, &(0..x.ndim()).collect::<Vec<_>>());
                    let rest = lax::sub(&all(&ct)?, &all(&t)?)?;
                    Some(convert(&rest, v.aval())?)
                }
                _ => None,
            };
            vec![Some(t), value]
        }
        "dot_general" => dot_transpose(p, &ct, ins, params)?,
        _ => return Err(nonlinear()),
    })
}

fn slice(x: &Array, lo: &[usize], hi: &[usize], strides: Option<&[usize]>) -> Result<Array, Error> {
    let p = Params::new()
        .with("start_indices", ints(lo.iter().copied()))
        .with("limit_indices", ints(hi.iter().copied()))
        .with(
            "strides",
            strides.map_or(Param::None, |s| ints(s.iter().copied())),
        );
    bind1(prim("slice")?, &[x], &p)
}

fn pad(x: &Array, cfg: &[(i64, i64, i64)]) -> Result<Array, Error> {
    if cfg.iter().all(|&c| c == (0, 0, 0)) {
        return Ok(x.clone());
    }
    let zero = lax::konst(x, 0.0)?;
    bind1(
        prim("pad")?,
        &[x, &zero],
        &Params::new().with("padding_config", Param::Padding(cfg.to_vec())),
    )
}

/// `dot_general` transposed in its linear operand: the cotangent contracted with the known
/// operand over the other side's free dimensions, batch dimensions kept, then permuted into
/// the operand's dimension order.
fn dot_transpose(
    p: &'static Primitive,
    ct: &Array,
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let (lc, rc, lb, rb) = match params.get("dimension_numbers") {
        Some(Param::DotDimensionNumbers {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
        }) => {
            let u = |v: &[i64]| v.iter().map(|&d| d as usize).collect::<Vec<usize>>();
            (
                u(lhs_contracting),
                u(rhs_contracting),
                u(lhs_batch),
                u(rhs_batch),
            )
        }
        _ => return Err(nonlinear()),
    };
    let free = |nd: usize, b: &[usize], c: &[usize]| -> Vec<usize> {
        (0..nd)
            .filter(|d| !b.contains(d) && !c.contains(d))
            .collect()
    };
    let (l, r) = (ins[0].aval(), ins[1].aval());
    let (lf, rf) = (free(l.ndim(), &lb, &lc), free(r.ndim(), &rb, &rc));
    let nb = lb.len();
    // The cotangent's dimensions: batch, lhs free, rhs free.
    let ct_lf: Vec<usize> = (nb..nb + lf.len()).collect();
    let ct_rf: Vec<usize> = (nb + lf.len()..ct.ndim()).collect();
    let ct_b: Vec<usize> = (0..nb).collect();
    // One side: contract ct's `ct_other` dims with `known`'s `other_free` dims.
    let side = |known: &Array,
                aval: &ShapedArray,
                ct_other: &[usize],
                known_free: &[usize],
                known_batch: &[usize],
                my_batch: &[usize],
                my_free: &[usize],
                my_contract: &[usize],
                known_contract: &[usize]|
     -> Result<Array, Error> {
        let q = Params::new()
            .with(
                "dimension_numbers",
                Param::DotDimensionNumbers {
                    lhs_contracting: ct_other.iter().map(|&d| d as i64).collect(),
                    rhs_contracting: known_free.iter().map(|&d| d as i64).collect(),
                    lhs_batch: ct_b.iter().map(|&d| d as i64).collect(),
                    rhs_batch: known_batch.iter().map(|&d| d as i64).collect(),
                },
            )
            .with("out_sharding", Param::None)
            .with("precision", Param::None)
            .with("preferred_element_type", Param::None);
        let known = convert(known, ct.aval())?;
        let y = bind1(p, &[ct, &known], &q)?;
        // y's dims: batch, ct's kept free dims (mine), known's contracting dims ascending.
        let mut sorted: Vec<usize> = known_contract.to_vec();
        sorted.sort_unstable();
        let mut perm = vec![0usize; aval.ndim()];
        for (r, &d) in my_batch.iter().enumerate() {
            perm[d] = r;
        }
        for (i, &d) in my_free.iter().enumerate() {
            perm[d] = nb + i;
        }
        for (i, kc) in sorted.iter().enumerate() {
            let pos = known_contract.iter().position(|x| x == kc).unwrap_or(0);
            perm[my_contract[pos]] = nb + my_free.len() + i;
        }
        convert(&transpose(&y, &perm)?, aval)
    };
    let lhs_ct = match &ins[0] {
        Lin::Linear(a) => Some(side(
            ins[1].known()?,
            a,
            &ct_rf,
            &rf,
            &rb,
            &lb,
            &lf,
            &lc,
            &rc,
        )?),
        Lin::Known(_) => None,
    };
    let rhs_ct = match &ins[1] {
        Lin::Linear(a) => Some(side(
            ins[0].known()?,
            a,
            &ct_lf,
            &lf,
            &lb,
            &rb,
            &rf,
            &rc,
            &lc,
        )?),
        Lin::Known(_) => None,
    };
    Ok(vec![lhs_ct, rhs_ct])
}
