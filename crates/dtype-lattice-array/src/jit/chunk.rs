//! The kernels of jit's fused blocks on slices: a compiled plan (`jit::plan`) runs a
//! chain of elementwise primitives a block of a few thousand elements at a time, and a member
//! whose primitive has a kernel here reads its operands where they are (a stretch of an input
//! array, of another member's block, of an output buffer, or one element standing for all) and
//! writes its block in place, instead of building arrays of the block and calling the
//! primitive's impl on them.
//!
//! Each kernel is the loop the primitive's impl runs on whole arrays (`kernels::fast`'s float32
//! arithmetic, comparisons, bit operations, `neg`, `abs` and vectorised functions,
//! [`super::fma`]'s fused multiply-add, and `select_n` of a bool predicate), called on the
//! block's slices: the same bits by construction. Where a case is not covered (another dtype,
//! an operand not aligned to its words, XLA's subnormal rules for a function whose block holds
//! a subnormal) [`Kernel::run`] declines and the plan calls the impl.

use dtype_lattice::{DType, Kind};
use smallvec::SmallVec;

use crate::array::{ShapedArray, layout};
use crate::core::{Params, Primitive};
use crate::kernels::fast::{self, BinOp, BitOp, Cmp, Side};
use crate::lax::elementwise::fast::{bin_op, bit_op, cmp_op};
use crate::lax::elementwise::{self, Op};

use super::block::Code;

/// An operand of a [`Kernel`] over a block of `n` elements: the bytes of its `n` elements, or
/// of one element standing for each of them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg<'a> {
    /// `n` elements, row-major, little-endian words.
    Block(&'a [u8]),
    /// One element, broadcast.
    Scalar(&'a [u8]),
}

/// The slice kernel of a fused primitive, chosen when a plan is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// A primitive of [`elementwise`]'s table.
    Elementwise(Op),
    /// `select_n` with two cases.
    Select,
    /// The plan's fused multiply-add ([`super::fma::FMA`]).
    Fma,
}

impl Kernel {
    /// The kernel of `prim`, if it may have one.
    pub(crate) fn of(prim: &'static Primitive) -> Option<Kernel> {
        if std::ptr::eq(prim, &crate::lax::select::SELECT_N) {
            Some(Kernel::Select)
        } else if std::ptr::eq(prim, &super::fma::FMA) {
            Some(Kernel::Fma)
        } else {
            elementwise::op_of(prim).map(Kernel::Elementwise)
        }
    }

    /// Writes the primitive's result on a block of `n` elements of `out_dtype` into `out`
    /// (`n` elements' bytes) from `args` (each with its dtype), exactly as its impl computes
    /// it on arrays of the block; false where this kernel does not cover the case (then `out`
    /// holds nothing meaningful and the caller runs the impl).
    pub(crate) fn run(
        self,
        params: &Params,
        args: &[(Arg<'_>, DType)],
        out_dtype: DType,
        n: usize,
        out: &mut [u8],
    ) -> bool {
        let mut dtypes = [DType::Bool; 3];
        if args.len() > dtypes.len() {
            return false;
        }
        for (d, (_, ad)) in dtypes.iter_mut().zip(args) {
            *d = *ad;
        }
        let mut sides = [Arg::Scalar(&[]); 3];
        for (s, (a, _)) in sides.iter_mut().zip(args) {
            *s = *a;
        }
        Resolved::of(self, params, &dtypes[..args.len()], out_dtype)
            .and_then(|r| r.run(&sides[..args.len()], n, out))
            .is_some()
    }

    /// This kernel set up once for a call of operands of `ins` (each of the result's shape or
    /// of one element) and a result of `out` (a loop body's call, [`super::tight`]): the
    /// operation and its operands' layout are chosen here, not on every run.
    pub(crate) fn prepare(
        self,
        params: &Params,
        ins: &[ShapedArray],
        out: &ShapedArray,
    ) -> Option<Elementwise> {
        let dtypes: SmallVec<[DType; 3]> = ins.iter().map(ShapedArray::dtype).collect();
        let r = Resolved::of(self, params, &dtypes, out.dtype())?;
        let n = out.size();
        if ins.len() > 3 || ins.iter().any(|a| a.size() != n && a.size() != 1) {
            return None;
        }
        let mut one = [false; 3];
        for (o, a) in one.iter_mut().zip(ins) {
            *o = a.size() != n;
        }
        let direct = (n <= crate::kernels::simd::FEW)
            .then(|| direct(r, one))
            .flatten();
        Some(Elementwise {
            r,
            n,
            one,
            arity: ins.len(),
            direct,
        })
    }
}

/// An elementwise kernel set up for a call's types and sizes ([`Kernel::prepare`]): a value,
/// called with its operands' bytes, no closure or container between the call and its loop.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Elementwise {
    r: Resolved,
    /// Elements of the result.
    n: usize,
    /// Which operands are one element standing for all.
    one: [bool; 3],
    arity: usize,
    /// The call's own loop ([`direct`]), where it has one.
    direct: Option<Direct>,
}

impl Elementwise {
    /// Writes the result into `out` from the operands' bytes (`ops[..arity]`), exactly as the
    /// primitive's implementation computes it; false where the kernel does not cover the
    /// case (nothing meaningful written: the caller runs the implementation).
    #[inline]
    pub(crate) fn run(&self, ops: &[&[u8]; 3], out: &mut [u8]) -> bool {
        if let Some(f) = self.direct {
            return f(ops, out);
        }
        let mut sides = [Arg::Scalar(&[]); 3];
        for ((s, &op), &one) in sides.iter_mut().zip(ops).zip(&self.one) {
            *s = if one { Arg::Scalar(op) } else { Arg::Block(op) };
        }
        if self.n <= crate::kernels::simd::FEW {
            return self.r.run_few(&sides[..self.arity], self.n, out).is_some();
        }
        self.r.run(&sides[..self.arity], self.n, out).is_some()
    }

    /// This kernel as one instruction of a block program ([`super::block`]), where it has
    /// one: its operation, the elements of its result, and which operands are one element
    /// standing for all.
    pub(super) fn element(&self) -> Option<(Code, usize, &[bool])> {
        let code = match self.r {
            Resolved::F32(op) => Code::F32(op),
            Resolved::F64(op) => Code::F64(op),
            Resolved::Cmp32(c) => Code::Cmp32(c),
            Resolved::Cmp64(c) => Code::Cmp64(c),
            Resolved::Sign32(neg) => Code::Sign32(neg),
            Resolved::Sign64(neg) => Code::Sign64(neg),
            Resolved::Select(1 | 2 | 4 | 8) => Code::Select,
            Resolved::Fma32((p, z)) => Code::Fma32(p < 0.0, z < 0.0),
            Resolved::Fma64((p, z)) => Code::Fma64(p < 0.0, z < 0.0),
            Resolved::Int(op, width, signed) if op != BinOp::Div => Code::Int(op, width, signed),
            Resolved::Bits(op @ (BitOp::And | BitOp::Or | BitOp::Xor), _) => Code::Bits(op),
            Resolved::IntPow(true, y) => Code::IntPow32(y),
            Resolved::IntPow(false, y) => Code::IntPow64(y),
            _ => return None,
        };
        Some((code, self.n, self.one.get(..self.arity)?))
    }
}

/// A loop of a few elements specialised for one operation on one layout of its operands
/// (words or one element each): a call runs its loop through one pointer, not through the
/// choices of [`Resolved::run_few`] (each a branch the processor mispredicts when a body's
/// calls alternate between operations).
type Direct = fn(&[&[u8]; 3], &mut [u8]) -> bool;

/// A float word and its arithmetic and comparisons as XLA's CPU code computes them.
pub(super) trait FloatWord: bytemuck::Pod {
    /// Whether the kernel covers only JAX's rules (float64: NumPy's loops do not flush).
    const XLA_ONLY: bool;
    fn op<const OP: u8>(a: Self, b: Self) -> Self;
    fn compare<const C: u8>(a: Self, b: Self) -> bool;
}

impl FloatWord for u32 {
    const XLA_ONLY: bool = false;
    #[inline(always)]
    fn op<const OP: u8>(a: u32, b: u32) -> u32 {
        fast::f32_op::<OP>(a, b)
    }
    #[inline(always)]
    fn compare<const C: u8>(a: u32, b: u32) -> bool {
        use crate::kernels::flush::flush32 as f;
        fast::compared::<C, f32>(f(f32::from_bits(a)), f(f32::from_bits(b)))
    }
}

impl FloatWord for u64 {
    const XLA_ONLY: bool = true;
    #[inline(always)]
    fn op<const OP: u8>(a: u64, b: u64) -> u64 {
        fast::f64_op::<OP>(a, b)
    }
    #[inline(always)]
    fn compare<const C: u8>(a: u64, b: u64) -> bool {
        use crate::kernels::flush::flush64 as f;
        fast::compared::<C, f64>(f(f64::from_bits(a)), f(f64::from_bits(b)))
    }
}

/// An operand's words: all of them (`ONE` false, as many as `n`) or its first standing for
/// each.
#[inline(always)]
fn operand<W: bytemuck::Pod, const ONE: bool>(b: &[u8], n: usize) -> Option<Side<'_, W>> {
    if ONE {
        side(Arg::Scalar(b), n)
    } else {
        side(Arg::Block(b), n)
    }
}

/// `OP` of two float operands of layouts `A` and `B` (one element each where true).
fn direct_bin<W: FloatWord, const OP: u8, const A: bool, const B: bool>(
    ops: &[&[u8]; 3],
    out: &mut [u8],
) -> bool {
    if W::XLA_ONLY && !crate::lax::on_xla() {
        return false;
    }
    let Ok(out) = bytemuck::try_cast_slice_mut::<u8, W>(out) else {
        return false;
    };
    let n = out.len();
    let (Some(a), Some(b)) = (operand::<W, A>(ops[0], n), operand::<W, B>(ops[1], n)) else {
        return false;
    };
    crate::kernels::simd::few_sides(a, b, out, W::op::<OP>);
    true
}

/// Comparison `C` of two float operands of layouts `A` and `B`, into bools.
fn direct_cmp<W: FloatWord, const C: u8, const A: bool, const B: bool>(
    ops: &[&[u8]; 3],
    out: &mut [u8],
) -> bool {
    if W::XLA_ONLY && !crate::lax::on_xla() {
        return false;
    }
    let n = out.len();
    let (Some(a), Some(b)) = (operand::<W, A>(ops[0], n), operand::<W, B>(ops[1], n)) else {
        return false;
    };
    crate::kernels::simd::few_sides(a, b, out, |a, b| u8::from(W::compare::<C>(a, b)));
    true
}

/// The [`Direct`] loop of `r` on operands laid out as `one` says, where it has one (float32
/// and float64 arithmetic and comparisons).
fn direct(r: Resolved, one: [bool; 3]) -> Option<Direct> {
    macro_rules! layouts {
        ($f:ident, $w:ty, $code:expr) => {
            match (one[0], one[1]) {
                (false, false) => $f::<$w, { $code }, false, false> as Direct,
                (false, true) => $f::<$w, { $code }, false, true>,
                (true, false) => $f::<$w, { $code }, true, false>,
                (true, true) => $f::<$w, { $code }, true, true>,
            }
        };
    }
    macro_rules! bin {
        ($w:ty, $op:expr) => {
            match $op {
                BinOp::Add => layouts!(direct_bin, $w, BinOp::ADD),
                BinOp::Sub => layouts!(direct_bin, $w, BinOp::SUB),
                BinOp::Mul => layouts!(direct_bin, $w, BinOp::MUL),
                BinOp::Div => layouts!(direct_bin, $w, BinOp::DIV),
                BinOp::Max => layouts!(direct_bin, $w, BinOp::MAX),
                BinOp::Min => layouts!(direct_bin, $w, BinOp::MIN),
            }
        };
    }
    macro_rules! cmp {
        ($w:ty, $c:expr) => {
            match $c {
                Cmp::Eq => layouts!(direct_cmp, $w, Cmp::code(Cmp::Eq)),
                Cmp::Ne => layouts!(direct_cmp, $w, Cmp::code(Cmp::Ne)),
                Cmp::Lt => layouts!(direct_cmp, $w, Cmp::code(Cmp::Lt)),
                Cmp::Le => layouts!(direct_cmp, $w, Cmp::code(Cmp::Le)),
                Cmp::Gt => layouts!(direct_cmp, $w, Cmp::code(Cmp::Gt)),
                Cmp::Ge => layouts!(direct_cmp, $w, Cmp::code(Cmp::Ge)),
            }
        };
    }
    Some(match r {
        Resolved::F32(op) => bin!(u32, op),
        Resolved::F64(op) => bin!(u64, op),
        Resolved::Cmp32(c) => cmp!(u32, c),
        Resolved::Cmp64(c) => cmp!(u64, c),
        _ => return None,
    })
}

/// A kernel resolved for its operands' and result's dtypes: the loop it runs.
#[derive(Clone, Copy, Debug)]
enum Resolved {
    /// float32 arithmetic.
    F32(BinOp),
    /// float64 arithmetic (under JAX's rules only: XLA's flushing).
    F64(BinOp),
    Cmp32(Cmp),
    /// float64 comparisons (under JAX's rules only).
    Cmp64(Cmp),
    /// A bit operation on words of this many bytes.
    Bits(BitOp, usize),
    /// Integer `add`, `sub`, `mul` (wrapping), `max` or `min` on words of this many bytes,
    /// signed (true) or not.
    Int(BinOp, usize, bool),
    /// float32 (true) or float64 `integer_pow` by this power: JAX's square-and-multiply,
    /// each product flushed (under JAX's rules only).
    IntPow(bool, i64),
    /// float32 (true) or float64 `pow`: glibc's function on the operands as they are
    /// (under JAX's rules only).
    Pow(bool),
    /// float32 `neg` (true) or `abs`.
    Sign32(bool),
    /// float64 `neg` (true) or `abs`.
    Sign64(bool),
    /// A float32 function of [`crate::kernels::vmath`] (which one `op` is depends on the
    /// rules in force when it runs: `tanh` is XLA's or libm's).
    Fn32(Op),
    /// `select_n` of words of this many bytes.
    Select(usize),
    /// The fused multiply-add's signs (product, addend).
    Fma32((f64, f64)),
    Fma64((f64, f64)),
}

impl Resolved {
    /// The loop of `kernel` for operands of `dtypes` and a result of `out`, if it has one.
    fn of(kernel: Kernel, params: &Params, dtypes: &[DType], out: DType) -> Option<Resolved> {
        let &d = dtypes.first()?;
        let same = dtypes.iter().all(|&a| a == d);
        Some(match kernel {
            Kernel::Elementwise(op) => match (op, dtypes.len()) {
                (_, 2) if same && bin_op(op).is_some() && out == d => match d {
                    DType::Float32 => Resolved::F32(bin_op(op)?),
                    DType::Float64 => Resolved::F64(bin_op(op)?),
                    _ if op != Op::Div => {
                        let width = layout(d).0;
                        let signed = match d.kind() {
                            Kind::SignedInt => true,
                            Kind::UnsignedInt => false,
                            _ => return None,
                        };
                        if d.bits() as usize != 8 * width {
                            return None;
                        }
                        Resolved::Int(bin_op(op)?, width, signed)
                    }
                    _ => return None,
                },
                (_, 2) if same && cmp_op(op).is_some() && out == DType::Bool => match d {
                    DType::Float32 => Resolved::Cmp32(cmp_op(op)?),
                    DType::Float64 => Resolved::Cmp64(cmp_op(op)?),
                    _ => return None,
                },
                (Op::Pow, 2) if same && out == d => match d {
                    DType::Float32 => Resolved::Pow(true),
                    DType::Float64 => Resolved::Pow(false),
                    _ => return None,
                },
                (Op::IntegerPow, 1) if out == d => {
                    let Some(crate::core::Param::Int(y)) = params.get("y") else {
                        return None;
                    };
                    match d {
                        DType::Float32 => Resolved::IntPow(true, *y),
                        DType::Float64 => Resolved::IntPow(false, *y),
                        _ => return None,
                    }
                }
                (_, 2) if same && bit_op(op).is_some() => {
                    let shift = matches!(op, Op::ShiftLeft | Op::ShiftRightLogical);
                    let kind_ok = match d.kind() {
                        Kind::SignedInt | Kind::UnsignedInt => true,
                        Kind::Bool => !shift,
                        _ => false,
                    };
                    let width = layout(d).0;
                    if !kind_ok || out != d || d.bits() as usize != 8 * width {
                        return None;
                    }
                    Resolved::Bits(bit_op(op)?, width)
                }
                (Op::Neg | Op::Abs, 1) if out == d => match d {
                    DType::Float32 => Resolved::Sign32(op == Op::Neg),
                    DType::Float64 => Resolved::Sign64(op == Op::Neg),
                    _ => return None,
                },
                (_, 1) if d == DType::Float32 && out == d && op.fn1().is_some() => {
                    Resolved::Fn32(op)
                }
                _ => return None,
            },
            Kernel::Select => {
                let [DType::Bool, a, b] = dtypes else {
                    return None;
                };
                let (width, words) = layout(out);
                if *a != out || *b != out || words != 1 {
                    return None;
                }
                Resolved::Select(width)
            }
            Kernel::Fma if dtypes.len() == 3 && same && out == d => match d {
                DType::Float32 => Resolved::Fma32(super::fma::signs(params)),
                DType::Float64 => Resolved::Fma64(super::fma::signs(params)),
                _ => return None,
            },
            Kernel::Fma => return None,
        })
    }

    /// [`Resolved::run`] on a few elements ([`crate::kernels::simd::FEW`] or fewer):
    /// selections and boolean `and`/`or` in plain loops inlined here (float arithmetic and
    /// comparisons have their [`Direct`] loops), the others as `run` does.
    #[inline]
    fn run_few(self, args: &[Arg<'_>], n: usize, out: &mut [u8]) -> Option<()> {
        use crate::kernels::simd::few_sides;
        match self {
            Resolved::Select(width @ (1 | 4 | 8)) => {
                let [which, a, b] = args else { return None };
                let p = side::<u8>(*which, n)?;
                macro_rules! pick {
                    ($w:ty) => {
                        few_pick(
                            p,
                            side::<$w>(*a, n)?,
                            side::<$w>(*b, n)?,
                            words_mut(out, n)?,
                        )
                    };
                }
                match width {
                    1 => pick!(u8),
                    4 => pick!(u32),
                    _ => pick!(u64),
                }
            }
            Resolved::Bits(BitOp::And, 1) | Resolved::Bits(BitOp::Or, 1) => {
                let [a, b] = args else { return None };
                let (a, b, out) = (
                    side::<u8>(*a, n)?,
                    side::<u8>(*b, n)?,
                    words_mut::<u8>(out, n)?,
                );
                if matches!(self, Resolved::Bits(BitOp::And, _)) {
                    few_sides(a, b, out, |a, b| a & b);
                } else {
                    few_sides(a, b, out, |a, b| a | b);
                }
            }
            _ => return self.run(args, n, out),
        }
        Some(())
    }

    /// Writes the result on a block of `n` elements into `out` from `args` (of the dtypes
    /// this was resolved for); `None` where the case is not covered.
    fn run(self, args: &[Arg<'_>], n: usize, out: &mut [u8]) -> Option<()> {
        match self {
            Resolved::F32(op) => {
                let [a, b] = args else { return None };
                fast::f32_into(op, side(*a, n)?, side(*b, n)?, words_mut(out, n)?);
            }
            Resolved::F64(op) => {
                let [a, b] = args else { return None };
                if !crate::lax::on_xla() {
                    return None;
                }
                fast::f64_into(op, side(*a, n)?, side(*b, n)?, words_mut(out, n)?);
            }
            Resolved::Cmp32(op) => {
                let [a, b] = args else { return None };
                fast::compare_into(op, side(*a, n)?, side(*b, n)?, words_mut(out, n)?);
            }
            Resolved::Cmp64(op) => {
                let [a, b] = args else { return None };
                if !crate::lax::on_xla() {
                    return None;
                }
                fast::compare64_into(op, side(*a, n)?, side(*b, n)?, words_mut(out, n)?);
            }
            Resolved::Bits(op, width) => {
                let [a, b] = args else { return None };
                match width {
                    1 => bits_into::<u8>(op, *a, *b, n, out)?,
                    2 => bits_into::<u16>(op, *a, *b, n, out)?,
                    4 => bits_into::<u32>(op, *a, *b, n, out)?,
                    _ => bits_into::<u64>(op, *a, *b, n, out)?,
                }
            }
            Resolved::Int(op, width, signed) => {
                let [a, b] = args else { return None };
                match (width, signed) {
                    (1, true) => int_into::<i8>(op, *a, *b, n, out)?,
                    (1, false) => int_into::<u8>(op, *a, *b, n, out)?,
                    (2, true) => int_into::<i16>(op, *a, *b, n, out)?,
                    (2, false) => int_into::<u16>(op, *a, *b, n, out)?,
                    (4, true) => int_into::<i32>(op, *a, *b, n, out)?,
                    (4, false) => int_into::<u32>(op, *a, *b, n, out)?,
                    (8, true) => int_into::<i64>(op, *a, *b, n, out)?,
                    (8, false) => int_into::<u64>(op, *a, *b, n, out)?,
                    _ => return None,
                }
            }
            Resolved::IntPow(single, y) => {
                let [Arg::Block(x)] = args else { return None };
                if !crate::lax::on_xla() {
                    return None;
                }
                if single {
                    let x = words::<u32>(x, n)?;
                    fast::integer_pow32(x, y, words_mut(out, n)?);
                } else {
                    let x = words::<u64>(x, n)?;
                    fast::integer_pow64(x, y, words_mut(out, n)?);
                }
            }
            Resolved::Pow(single) => {
                use crate::lax::elementwise::Arith;
                let [a, b] = args else { return None };
                if !crate::lax::on_xla() {
                    return None;
                }
                if single {
                    let f = |a: u32, b: u32| {
                        Arith::pow_xla(f32::from_bits(a), f32::from_bits(b)).to_bits()
                    };
                    crate::kernels::simd::zip_sides(
                        side(*a, n)?,
                        side(*b, n)?,
                        words_mut(out, n)?,
                        f,
                    );
                } else {
                    let f = |a: u64, b: u64| {
                        Arith::pow_xla(f64::from_bits(a), f64::from_bits(b)).to_bits()
                    };
                    crate::kernels::simd::zip_sides(
                        side(*a, n)?,
                        side(*b, n)?,
                        words_mut(out, n)?,
                        f,
                    );
                }
            }
            Resolved::Sign32(neg) => {
                let [Arg::Block(x)] = args else { return None };
                let Side::Words(x) = side::<u32>(Arg::Block(x), n)? else {
                    return None;
                };
                fast::sign_into(neg, x, words_mut(out, n)?);
            }
            Resolved::Sign64(neg) => {
                let [Arg::Block(x)] = args else { return None };
                let Side::Words(x) = side::<u64>(Arg::Block(x), n)? else {
                    return None;
                };
                fast::sign64_into(neg, x, words_mut(out, n)?);
            }
            Resolved::Fn32(op) => {
                let [Arg::Block(x)] = args else { return None };
                let f = op.fn1()?;
                let Side::Words(x) = side::<u32>(Arg::Block(x), n)? else {
                    return None;
                };
                if elementwise::subnormal_rules_differ(op, DType::Float32, &[n])
                    && elementwise::has_subnormal32(x)
                {
                    return None;
                }
                fast::f32_fn_into(f, x, words_mut(out, n)?).then_some(())?;
            }
            Resolved::Select(width) => {
                let [which, a, b] = args else { return None };
                let p = side::<u8>(*which, n)?;
                match width {
                    1 => pick::<u8>(p, *a, *b, n, out)?,
                    2 => pick::<u16>(p, *a, *b, n, out)?,
                    4 => pick::<u32>(p, *a, *b, n, out)?,
                    8 => pick::<u64>(p, *a, *b, n, out)?,
                    _ => return None,
                }
            }
            Resolved::Fma32(signs) => {
                let [a, b, c] = args else { return None };
                let (a, b, c) = (side(*a, n)?, side(*b, n)?, side(*c, n)?);
                super::fma::fma32_into(signs, a, b, c, words_mut(out, n)?);
            }
            Resolved::Fma64(signs) => {
                let [a, b, c] = args else { return None };
                let (a, b, c) = (side(*a, n)?, side(*b, n)?, side(*c, n)?);
                super::fma::fma64_into(signs, a, b, c, words_mut(out, n)?);
            }
        }
        Some(())
    }
}

/// The words of an operand: all `n` of them, or its one.
fn side<W: bytemuck::Pod>(a: Arg<'_>, n: usize) -> Option<Side<'_, W>> {
    match a {
        Arg::Block(b) => {
            let w: &[W] = bytemuck::try_cast_slice(b).ok()?;
            (w.len() == n).then_some(Side::Words(w))
        }
        Arg::Scalar(b) => {
            let b = b.get(..std::mem::size_of::<W>())?;
            bytemuck::try_pod_read_unaligned(b).ok().map(Side::Scalar)
        }
    }
}

/// The `n` words of an operand's bytes.
fn words<W: bytemuck::Pod>(b: &[u8], n: usize) -> Option<&[W]> {
    let w: &[W] = bytemuck::try_cast_slice(b).ok()?;
    (w.len() == n).then_some(w)
}

/// A word of an integer dtype stored a whole word per element.
trait IntWord: bytemuck::Pod + Ord {
    fn wrapping_add(self, o: Self) -> Self;
    fn wrapping_sub(self, o: Self) -> Self;
    fn wrapping_mul(self, o: Self) -> Self;
}

macro_rules! int_word {
    ($($t:ty),*) => {$(
        impl IntWord for $t {
            #[inline(always)]
            fn wrapping_add(self, o: Self) -> Self { <$t>::wrapping_add(self, o) }
            #[inline(always)]
            fn wrapping_sub(self, o: Self) -> Self { <$t>::wrapping_sub(self, o) }
            #[inline(always)]
            fn wrapping_mul(self, o: Self) -> Self { <$t>::wrapping_mul(self, o) }
        }
    )*};
}
int_word!(i8, u8, i16, u16, i32, u32, i64, u64);

/// Integer `op` (not `div`) of two sides into `out`, wrapping as XLA's integers do.
fn int_into<W: IntWord>(op: BinOp, a: Arg<'_>, b: Arg<'_>, n: usize, out: &mut [u8]) -> Option<()> {
    use crate::kernels::simd::zip_sides as zip;
    let (a, b, out) = (side::<W>(a, n)?, side::<W>(b, n)?, words_mut::<W>(out, n)?);
    match op {
        BinOp::Add => zip(a, b, out, W::wrapping_add),
        BinOp::Sub => zip(a, b, out, W::wrapping_sub),
        BinOp::Mul => zip(a, b, out, W::wrapping_mul),
        BinOp::Max => zip(a, b, out, Ord::max),
        BinOp::Min => zip(a, b, out, Ord::min),
        BinOp::Div => return None,
    }
    Some(())
}

/// The output bytes as `n` words.
fn words_mut<W: bytemuck::Pod>(out: &mut [u8], n: usize) -> Option<&mut [W]> {
    let w: &mut [W] = bytemuck::try_cast_slice_mut(out).ok()?;
    (w.len() == n).then_some(w)
}

fn bits_into<W: fast::Bits>(
    op: BitOp,
    a: Arg<'_>,
    b: Arg<'_>,
    n: usize,
    out: &mut [u8],
) -> Option<()> {
    fast::bits_into(op, side::<W>(a, n)?, side::<W>(b, n)?, words_mut(out, n)?);
    Some(())
}

/// [`pick`] on a few elements, in a plain loop.
#[inline(always)]
fn few_pick<W: Copy>(p: Side<'_, u8>, a: Side<'_, W>, b: Side<'_, W>, out: &mut [W]) {
    let at = |s: &Side<'_, W>, i: usize| match s {
        Side::Words(w) => w.get(i).copied(),
        Side::Scalar(x) => Some(*x),
    };
    for (i, o) in out.iter_mut().enumerate() {
        let p = match p {
            Side::Words(w) => w.get(i).copied(),
            Side::Scalar(x) => Some(x),
        };
        if let (Some(p), Some(a), Some(b)) = (p, at(&a, i), at(&b, i)) {
            *o = if p != 0 { b } else { a };
        }
    }
}

/// `select_n(which, a, b)` of a bool `which`: `b` where it is true.
fn pick<W: bytemuck::Pod>(
    p: Side<'_, u8>,
    a: Arg<'_>,
    b: Arg<'_>,
    n: usize,
    out: &mut [u8],
) -> Option<()> {
    let (a, b) = (side::<W>(a, n)?, side::<W>(b, n)?);
    crate::kernels::simd::zip3_sides(
        p,
        a,
        b,
        words_mut::<W>(out, n)?,
        |p, a, b| {
            if p != 0 { b } else { a }
        },
    );
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Array;
    use crate::core::Param;
    use dtype_lattice::Rules;

    /// Twelve elements of `d`: signed zeros, subnormals, infinities, NaNs of both signs and
    /// ordinary values (integers and bools: a spread of their range).
    fn values(d: DType) -> Array {
        let f = [
            0.0,
            -0.0,
            1.5,
            -2.25,
            1e-40,
            -1e-310,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            3e38,
            0.7,
        ];
        match d {
            DType::Float32 => {
                let mut v: Vec<f32> = f.iter().map(|&x| x as f32).collect();
                v[5] = -1e-41;
                Array::from_vec(v)
            }
            DType::Float64 => {
                let mut v = f.to_vec();
                v[4] = 1e-310;
                Array::from_vec(v)
            }
            DType::Bool => Array::from_vec((0..12).map(|i| i % 3 == 0).collect::<Vec<_>>()),
            _ => Array::from_vec(vec![
                0i32,
                -1,
                5,
                i32::MIN,
                i32::MAX,
                7,
                31,
                2,
                -9,
                1,
                40,
                3,
            ])
            .astype(d)
            .unwrap(),
        }
    }

    /// The operands of a call of `arity`: rotations of [`values`] (so that pairs differ),
    /// each of the twelve elements or 0-d (where bit `k` of `zero_d` is set), the first of
    /// `select_n` a bool.
    /// With `tiles` above one, each array operand is its twelve elements repeated `tiles`
    /// times (longer than [`crate::kernels::simd::FEW`]: the kernels' vector loops).
    fn operands(select: bool, d: DType, arity: usize, zero_d: usize, tiles: usize) -> Vec<Array> {
        (0..arity)
            .map(|k| {
                let dk = if select && k == 0 { DType::Bool } else { d };
                let v = values(dk);
                let bytes = v.as_bytes();
                let w = bytes.len() / 12;
                let mut rot = bytes[k * 5 * w % bytes.len()..].to_vec();
                rot.extend_from_slice(&bytes[..k * 5 * w % bytes.len()]);
                if zero_d >> k & 1 == 1 {
                    let at = (3 * k + 4) % 12;
                    Array::from_bytes(dk, &[], &rot[at * w..(at + 1) * w]).unwrap()
                } else {
                    Array::from_bytes(dk, &[12 * tiles], &rot.repeat(tiles)).unwrap()
                }
            })
            .collect()
    }

    /// Every elementwise kernel a loop body prepares computes what the primitive's
    /// implementation computes, bit for bit: each primitive of the table, `select_n` and the
    /// fused multiply-add (both signs), on float32, float64, int32, uint8 and bool, with 0-d
    /// operands in every position, on a few elements (the plain loops) and on more (the
    /// vector loops), under JAX's and NumPy's rules (where a kernel declines,
    /// the implementation runs).
    #[test]
    fn prepared_kernels_compute_what_the_implementations_compute() {
        let fma = &super::super::fma::FMA;
        let prims = elementwise::primitives()
            .iter()
            .copied()
            .chain([&crate::lax::select::SELECT_N, fma]);
        let (mut ran, mut in_blocks) = (0, 0);
        for prim in prims {
            let Some(kernel) = Kernel::of(prim) else {
                continue;
            };
            let arity = prim.arity.unwrap_or(3);
            let select = std::ptr::eq(prim, &crate::lax::select::SELECT_N);
            let params: Vec<Params> = if std::ptr::eq(prim, fma) {
                [(false, false), (true, false), (false, true), (true, true)]
                    .iter()
                    .map(|&(p, a)| {
                        Params::new()
                            .with(super::super::fma::NEG_PRODUCT, Param::Bool(p))
                            .with(super::super::fma::NEG_ADDEND, Param::Bool(a))
                    })
                    .collect()
            } else if prim.name == "integer_pow" {
                [0, 1, 2, 3, 5, -1, -2, -3]
                    .iter()
                    .map(|&y| Params::new().with("y", Param::Int(y)))
                    .collect()
            } else {
                vec![Params::new()]
            };
            for rules in [Rules::jax(), Rules::numpy()] {
                for d in [
                    DType::Float32,
                    DType::Float64,
                    DType::Int32,
                    DType::UInt8,
                    DType::Bool,
                ] {
                    for (zero_d, tiles) in (0..(1usize << arity) - 1).flat_map(|z| [(z, 1), (z, 3)])
                    {
                        for p in &params {
                            let ins = operands(select, d, arity, zero_d, tiles);
                            let avals: Vec<&ShapedArray> = ins.iter().map(Array::aval).collect();
                            let Ok(out) = prim.abstract_eval(&avals, p) else {
                                continue;
                            };
                            let owned: Vec<ShapedArray> = avals.into_iter().cloned().collect();
                            let Some(k) = kernel.prepare(p, &owned, &out[0]) else {
                                continue;
                            };
                            let refs: Vec<&Array> = ins.iter().collect();
                            let mut ops: [&[u8]; 3] = [&[]; 3];
                            for (o, x) in ops.iter_mut().zip(&ins) {
                                *o = x.as_bytes();
                            }
                            crate::config::with_rules(rules, || {
                                let want = crate::core::implement(prim, &refs, p, &out).unwrap();
                                let want = want[0].as_bytes();
                                let mut got = vec![0u64; want.len().div_ceil(8)];
                                let got = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut got)
                                    [..want.len()];
                                let ok = k.run(&ops, got);
                                if ok {
                                    assert_eq!(got, want, "{prim} {d} {zero_d:b} {p:?}");
                                    ran += 1;
                                }
                                if let Some(n) = blocks_agree(&k, &ins, want, ok) {
                                    assert!(n >= 1 || !ok, "{prim} {d} {zero_d:b} {p:?}");
                                    in_blocks += n;
                                }
                            });
                        }
                    }
                }
            }
        }
        // add, sub, mul, div, max, min, the six comparisons, neg, abs, the bit operations,
        // the float32 functions, select_n and fma, in most layouts.
        assert!(ran > 600, "{ran} kernels compared");
        // The float arithmetic and comparisons, neg, abs, and, or, xor, integer arithmetic,
        // integer_pow, select_n and fma: as instructions, on operands loaded and made.
        assert!(in_blocks > 400, "{in_blocks} block instructions compared");
    }

    /// `k` as a block instruction ([`super::super::block`]) computes `want` (what its kernel
    /// and the implementation computed, where `ran`), on its operands loaded into registers
    /// and on the 0-d ones made by an instruction first (`select_n` of a true predicate: its
    /// register spread over the lanes by the block), and declines where the kernel declined.
    /// The programs run (`None`: `k` is not an instruction or its result too long).
    fn blocks_agree(k: &Elementwise, ins: &[Array], want: &[u8], ran: bool) -> Option<usize> {
        use super::super::block::{Builder, LANES};
        let (code, n, one) = k.element()?;
        if n > LANES {
            return None;
        }
        let mut runs = 0;
        for made in [false, true] {
            let mut b = Builder::new();
            let mut bytes: Vec<&[u8]> = Vec::new();
            let mut args = Vec::new();
            for (x, &one) in ins.iter().zip(one) {
                let w = crate::array::element_bytes(x.dtype());
                let r = b.load(w, x.size())?;
                bytes.push(x.as_bytes());
                let r = if made && one {
                    let p = b.load(1, 1)?;
                    bytes.push(&[1]);
                    b.op(Code::Select, 1, &[(p, false), (r, false), (r, false)])?
                } else {
                    r
                };
                args.push((r, one));
            }
            let r = b.op(code, n, &args).expect("an instruction");
            b.store(r, want.len() / n, 0)?;
            let prog = b.finish();
            if prog.xla_only() && !crate::lax::on_xla() {
                // The block declines: so did the kernel.
                assert!(!ran);
                continue;
            }
            assert!(ran, "a block ran where its kernel declined: {code:?}");
            let mut regs = vec![0u64; prog.lanes()];
            for (j, x) in bytes.iter().enumerate() {
                assert!(prog.load(&mut regs, j, x));
            }
            prog.exec(&mut regs);
            let mut got = vec![0u8; want.len()];
            assert!(prog.store(&regs, &prog.stores()[0], &mut got));
            assert_eq!(got, want, "{code:?} made {made}");
            runs += 1;
        }
        Some(runs)
    }
}
