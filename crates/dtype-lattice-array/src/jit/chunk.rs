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
use crate::kernels::fast::{self, Side};
use crate::lax::elementwise::fast::{bin_op, bit_op, cmp_op};
use crate::lax::elementwise::{self, Op};

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
        match self {
            Kernel::Elementwise(op) => elementwise_into(op, args, out_dtype, n, out).is_some(),
            Kernel::Select => select_into(args, out_dtype, n, out).is_some(),
            Kernel::Fma => fma_into(params, args, out_dtype, n, out).is_some(),
        }
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

/// The output bytes as `n` words.
fn words_mut<W: bytemuck::Pod>(out: &mut [u8], n: usize) -> Option<&mut [W]> {
    let w: &mut [W] = bytemuck::try_cast_slice_mut(out).ok()?;
    (w.len() == n).then_some(w)
}

/// The operands as sides of one dtype `d` (all of it), or `None`.
fn sides_of<'a, W: bytemuck::Pod>(
    args: &[(Arg<'a>, DType)],
    d: DType,
    n: usize,
) -> Option<SmallVec<[Side<'a, W>; 3]>> {
    args.iter()
        .map(|&(a, ad)| if ad == d { side::<W>(a, n) } else { None })
        .collect()
}

fn elementwise_into(
    op: Op,
    args: &[(Arg<'_>, DType)],
    out_dtype: DType,
    n: usize,
    out: &mut [u8],
) -> Option<()> {
    let d = args.first()?.1;
    match (op, args.len()) {
        (Op::Add | Op::AddAny | Op::Sub | Op::Mul | Op::Div | Op::Max | Op::Min, 2)
            if d == DType::Float32 && out_dtype == d =>
        {
            let s = sides_of::<u32>(args, d, n)?;
            fast::f32_into(bin_op(op)?, s[0], s[1], words_mut(out, n)?);
        }
        (Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge, 2)
            if d == DType::Float32 && out_dtype == DType::Bool =>
        {
            let s = sides_of::<u32>(args, d, n)?;
            fast::compare_into(cmp_op(op)?, s[0], s[1], words_mut(out, n)?);
        }
        (Op::And | Op::Or | Op::Xor | Op::ShiftLeft | Op::ShiftRightLogical, 2) => {
            let shift = matches!(op, Op::ShiftLeft | Op::ShiftRightLogical);
            let kind_ok = match d.kind() {
                Kind::SignedInt | Kind::UnsignedInt => true,
                Kind::Bool => !shift,
                _ => false,
            };
            let width = layout(d).0;
            if !kind_ok || out_dtype != d || d.bits() as usize != 8 * width {
                return None;
            }
            match width {
                1 => bits_into::<u8>(op, args, d, n, out)?,
                2 => bits_into::<u16>(op, args, d, n, out)?,
                4 => bits_into::<u32>(op, args, d, n, out)?,
                _ => bits_into::<u64>(op, args, d, n, out)?,
            }
        }
        (Op::Neg | Op::Abs, 1) if d == DType::Float32 && out_dtype == d => {
            let Side::Words(x) = side::<u32>(args[0].0, n)? else {
                return None;
            };
            fast::sign_into(op == Op::Neg, x, words_mut(out, n)?);
        }
        (_, 1) if d == DType::Float32 && out_dtype == d => {
            let f = op.fn1()?;
            let Side::Words(x) = side::<u32>(args[0].0, n)? else {
                return None;
            };
            let block = ShapedArray::new(&[n], d, false);
            if elementwise::subnormal_rules_differ(op, &block) && elementwise::has_subnormal32(x) {
                return None;
            }
            fast::f32_fn_into(f, x, words_mut(out, n)?).then_some(())?;
        }
        _ => return None,
    }
    Some(())
}

fn bits_into<W: fast::Bits>(
    op: Op,
    args: &[(Arg<'_>, DType)],
    d: DType,
    n: usize,
    out: &mut [u8],
) -> Option<()> {
    let s = sides_of::<W>(args, d, n)?;
    fast::bits_into(bit_op(op)?, s[0], s[1], words_mut(out, n)?);
    Some(())
}

/// `select_n(which, a, b)` of a bool `which`: `b` where it is true.
fn select_into(
    args: &[(Arg<'_>, DType)],
    out_dtype: DType,
    n: usize,
    out: &mut [u8],
) -> Option<()> {
    let [(which, DType::Bool), (a, da), (b, db)] = args else {
        return None;
    };
    let (width, words) = layout(out_dtype);
    if *da != out_dtype || *db != out_dtype || words != 1 {
        return None;
    }
    let p = side::<u8>(*which, n)?;
    fn pick<W: bytemuck::Pod>(
        p: Side<'_, u8>,
        a: Arg<'_>,
        b: Arg<'_>,
        n: usize,
        out: &mut [u8],
    ) -> Option<()> {
        let (a, b) = (side::<W>(a, n)?, side::<W>(b, n)?);
        crate::kernels::simd::zip3_sides(p, a, b, words_mut::<W>(out, n)?, |p, a, b| {
            if p != 0 { b } else { a }
        });
        Some(())
    }
    match width {
        1 => pick::<u8>(p, *a, *b, n, out),
        2 => pick::<u16>(p, *a, *b, n, out),
        4 => pick::<u32>(p, *a, *b, n, out),
        8 => pick::<u64>(p, *a, *b, n, out),
        _ => None,
    }
}

fn fma_into(
    params: &Params,
    args: &[(Arg<'_>, DType)],
    out_dtype: DType,
    n: usize,
    out: &mut [u8],
) -> Option<()> {
    if args.len() != 3 {
        return None;
    }
    match out_dtype {
        DType::Float32 => {
            let s = sides_of::<u32>(args, out_dtype, n)?;
            super::fma::fma32_into(params, s[0], s[1], s[2], words_mut(out, n)?);
        }
        DType::Float64 => {
            let s = sides_of::<u64>(args, out_dtype, n)?;
            super::fma::fma64_into(params, s[0], s[1], s[2], words_mut(out, n)?);
        }
        _ => return None,
    }
    Some(())
}
