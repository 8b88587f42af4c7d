//! Prepare rules ([`crate::core::Prepared`]) of the primitives that only move elements:
//! `reshape`, `squeeze`, `broadcast_in_dim`, `transpose`, `rev`, `slice`, `pad` and
//! `concatenate` (a table of sources, worked out once), and `dynamic_slice` and
//! `dynamic_update_slice` (a table of offsets from the start, the start read and clamped
//! each call).
//!
//! The static table is the primitive's own implementation run once on operands of int32
//! codes (operand `k`'s element `i` holds `k·2²⁴ + i`): each output element's code names
//! where it comes from, so the prepared copy moves exactly what the implementation moves,
//! with no index arithmetic written twice. A loop body then moves a few bytes per element
//! instead of building arrays.

use dtype_lattice::DType;

use super::structural::{flat, strides};
use crate::array::{Array, ShapedArray, element_bytes};
use crate::core::{Operand, Params, Prepared, Primitive};

/// The largest result a table is made for, in elements.
const MAX: usize = 1 << 16;

/// Bytes per element (`None` for `float0`, whose arrays hold none).
fn width(a: &ShapedArray) -> Option<usize> {
    Some(element_bytes(a.dtype())).filter(|&e| e > 0)
}

/// Copies element `from` of `src` to element `to` of `dst`, elements of `e` bytes.
#[inline(always)]
fn put(dst: &mut [u8], to: usize, src: &[u8], from: usize, e: usize) -> Option<()> {
    dst.get_mut(to * e..(to + 1) * e)?
        .copy_from_slice(src.get(from * e..(from + 1) * e)?);
    Some(())
}

/// A stretch of the result: `len` elements from operand `k`, the `t`th from element
/// `start + t·step` (`step` 1: a copy, 0: one element repeated, else strided).
#[derive(Clone, Copy, Debug)]
struct Run {
    k: usize,
    start: usize,
    len: usize,
    step: isize,
}

/// The table of `(operand, element)` sources as runs, each as long as its sources keep one
/// operand and one step.
fn runs(table: &[(usize, usize)]) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    for &(k, i) in table {
        if let Some(r) = out.last_mut()
            && r.k == k
        {
            let next = |step: isize| r.start as isize + step * r.len as isize;
            if r.len == 1 {
                r.step = i as isize - r.start as isize;
                r.len = 2;
                continue;
            }
            if next(r.step) == i as isize {
                r.len += 1;
                continue;
            }
        }
        out.push(Run {
            k,
            start: i,
            len: 1,
            step: 1,
        });
    }
    out
}

/// Copies the runs' elements (of `e` bytes) from the operands into `out`.
fn gather(ops: &[Operand<'_>], runs: &[Run], e: usize, out: &mut [u8]) -> Option<()> {
    macro_rules! typed {
        ($t:ty) => {{
            let dst: &mut [$t] = bytemuck::try_cast_slice_mut(out).ok()?;
            let mut at = 0;
            for r in runs {
                // Each run's operand cast where it is read (no container of them: a call
                // of a loop body allocates nothing).
                let src: &[$t] = bytemuck::try_cast_slice(ops.get(r.k)?.bytes).ok()?;
                let dst = dst.get_mut(at..at + r.len)?;
                match r.step {
                    1 => dst.copy_from_slice(src.get(r.start..r.start + r.len)?),
                    0 => dst.fill(*src.get(r.start)?),
                    step => {
                        for (t, d) in dst.iter_mut().enumerate() {
                            let i = r.start as isize + step * t as isize;
                            *d = *src.get(usize::try_from(i).ok()?)?;
                        }
                    }
                }
                at += r.len;
            }
            Some(())
        }};
    }
    match e {
        1 => typed!(u8),
        2 => typed!(u16),
        4 => typed!(u32),
        8 => typed!(u64),
        16 => typed!([u64; 2]),
        _ => None,
    }
}

/// The prepare rule of a primitive that moves its operands' elements (see the module
/// documentation): its implementation run on codes gives the table.
pub(crate) fn prepare(
    prim: &'static Primitive,
    params: &Params,
    ins: &[ShapedArray],
    out: &ShapedArray,
) -> Option<Prepared> {
    let e = width(out)?;
    if out.size() > MAX || ins.is_empty() || ins.len() > 64 {
        return None;
    }
    let mut codes = Vec::with_capacity(ins.len());
    for (k, a) in ins.iter().enumerate() {
        if width(a)? != e || a.size() >= 1 << 24 {
            return None;
        }
        let base = i32::try_from(k).ok()? << 24;
        let v: Vec<i32> = (0..a.size()).map(|i| base | i as i32).collect();
        codes.push(Array::from_shape_vec(a.shape(), v).ok()?);
    }
    let refs: Vec<&Array> = codes.iter().collect();
    let aval = ShapedArray::new(out.shape(), DType::Int32, false);
    let moved = (prim.impl_rule)(prim, &refs, params, std::slice::from_ref(&aval)).ok()?;
    let table: Vec<(usize, usize)> = moved
        .first()?
        .to_vec::<i32>()
        .ok()?
        .into_iter()
        .map(|c| {
            let (k, i) = ((c >> 24) as usize, (c & 0xff_ffff) as usize);
            (i < ins.get(k)?.size()).then_some((k, i))
        })
        .collect::<Option<_>>()?;
    if table.len() != out.size() {
        return None;
    }
    let n = table.len();
    if let ([_], Some(&(_, first))) = (ins, table.first())
        && table.iter().enumerate().all(|(j, &(_, i))| i == first + j)
    {
        // The result is a stretch of the operand as it lies (a reshape, a squeeze, a
        // contiguous slice, a broadcast that only adds dimensions of one).
        return Some(Prepared::Part { start: first * e });
    }
    let runs = runs(&table);
    let sizes: Vec<usize> = ins.iter().map(|a| a.size() * e).collect();
    Some(Prepared::Kernel(Box::new(move |ops, out| {
        ops.len() == sizes.len()
            && ops.iter().zip(&sizes).all(|(o, &n)| o.bytes.len() == n)
            && out.len() == n * e
            && gather(ops, &runs, e, out).is_some()
    })))
}

/// An integer index operand's value (`None` for another dtype).
fn index(dtype: DType, b: &[u8]) -> Option<i128> {
    Some(match dtype {
        DType::Int8 => i128::from(i8::from_le_bytes(b.try_into().ok()?)),
        DType::Int16 => i128::from(i16::from_le_bytes(b.try_into().ok()?)),
        DType::Int32 => i128::from(i32::from_le_bytes(b.try_into().ok()?)),
        DType::Int64 => i128::from(i64::from_le_bytes(b.try_into().ok()?)),
        DType::UInt8 => i128::from(u8::from_le_bytes(b.try_into().ok()?)),
        DType::UInt16 => i128::from(u16::from_le_bytes(b.try_into().ok()?)),
        DType::UInt32 => i128::from(u32::from_le_bytes(b.try_into().ok()?)),
        DType::UInt64 => i128::from(u64::from_le_bytes(b.try_into().ok()?)),
        _ => return None,
    })
}

/// A window of an operand at dynamic start indices: its elements' offsets from the start,
/// worked out once, and how to read the start.
struct Window {
    dims: Vec<usize>,
    sizes: Vec<usize>,
    strides: Vec<usize>,
    /// Each window element's offset in the operand from the window's start.
    offsets: Vec<usize>,
    /// The index operands' dtypes.
    types: Vec<DType>,
}

impl Window {
    /// The window of `window`'s shape in `x` at the scalar index operands `idx` (one per
    /// dimension), if small enough for a table.
    fn of(x: &ShapedArray, window: &ShapedArray, idx: &[ShapedArray]) -> Option<Window> {
        if idx.len() != x.ndim() || window.size() > MAX || idx.iter().any(|a| a.size() != 1) {
            return None;
        }
        let (xs, ws) = (strides(x.shape()), strides(window.shape()));
        let shape = window.shape();
        let offsets = (0..window.size())
            .map(|j| flat(ws.iter().zip(shape).map(|(&w, &n)| (j / w) % n.max(1)), &xs))
            .collect();
        Some(Window {
            dims: x.shape().to_vec(),
            sizes: window.shape().to_vec(),
            strides: xs,
            offsets,
            types: idx.iter().map(ShapedArray::dtype).collect(),
        })
    }

    /// The flat offset of the window's start: each index operand clamped into
    /// `0..=dim - size` (XLA's semantics).
    fn start(&self, idx: &[Operand<'_>]) -> Option<usize> {
        let mut at = 0;
        for (i, o) in idx.iter().enumerate() {
            let (d, s) = (self.dims[i], self.sizes[i]);
            let hi = i128::try_from(d.checked_sub(s)?).ok()?;
            at += usize::try_from(index(*self.types.get(i)?, o.bytes)?.clamp(0, hi)).ok()?
                * self.strides[i];
        }
        Some(at)
    }
}

/// `dynamic_slice`'s prepare rule: the window's offsets, once.
pub(crate) fn prepare_dynamic_slice(
    _: &'static Primitive,
    _: &Params,
    ins: &[ShapedArray],
    out: &ShapedArray,
) -> Option<Prepared> {
    let (x, idx) = ins.split_first()?;
    let e = width(out)?;
    if width(x)? != e {
        return None;
    }
    let w = Window::of(x, out, idx)?;
    let n = x.size() * e;
    Some(Prepared::Kernel(Box::new(move |ops, out| {
        let Some((x, idx)) = ops.split_first() else {
            return false;
        };
        if x.bytes.len() != n || out.len() != w.offsets.len() * e {
            return false;
        }
        let Some(base) = w.start(idx) else {
            return false;
        };
        w.offsets
            .iter()
            .enumerate()
            .try_for_each(|(j, &r)| put(out, j, x.bytes, base + r, e))
            .is_some()
    })))
}

/// `dynamic_update_slice`'s prepare rule: the update's offsets in the operand, once.
pub(crate) fn prepare_dynamic_update_slice(
    _: &'static Primitive,
    _: &Params,
    ins: &[ShapedArray],
    out: &ShapedArray,
) -> Option<Prepared> {
    let [x, u, idx @ ..] = ins else { return None };
    let e = width(out)?;
    if x.dtype() != u.dtype() || width(x)? != e {
        return None;
    }
    let w = Window::of(x, u, idx)?;
    let (n, m) = (x.size() * e, u.size() * e);
    Some(Prepared::Kernel(Box::new(move |ops, out| {
        let [x, u, idx @ ..] = ops else { return false };
        if x.bytes.len() != n || u.bytes.len() != m || out.len() != n {
            return false;
        }
        let Some(base) = w.start(idx) else {
            return false;
        };
        out.copy_from_slice(x.bytes);
        w.offsets
            .iter()
            .enumerate()
            .try_for_each(|(j, &r)| put(out, base + r, u.bytes, j, e))
            .is_some()
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Param;
    use crate::lax::{
        BROADCAST_IN_DIM, CONCATENATE, DYNAMIC_SLICE, DYNAMIC_UPDATE_SLICE, PAD, RESHAPE, REV,
        SLICE, SQUEEZE, TRANSPOSE,
    };

    /// An array of `shape` and `dtype` with distinct elements.
    fn ramp(shape: &[usize], dtype: DType, seed: i32) -> Array {
        let n: usize = shape.iter().product();
        let v: Vec<i32> = (0..n as i32).map(|i| i * 7 + seed).collect();
        Array::from_shape_vec(shape, v)
            .unwrap()
            .astype(dtype)
            .unwrap()
    }

    /// The prepared copy of `prim` writes what its implementation returns, bit for bit.
    fn agrees(prim: &'static Primitive, params: &Params, ins: &[Array]) {
        let refs: Vec<&Array> = ins.iter().collect();
        let avals: Vec<&ShapedArray> = ins.iter().map(Array::aval).collect();
        let out = prim.abstract_eval(&avals, params).unwrap().remove(0);
        let want = (prim.impl_rule)(prim, &refs, params, std::slice::from_ref(&out)).unwrap();
        let owned: Vec<ShapedArray> = avals.into_iter().cloned().collect();
        let rule = prim.prepare.expect("a prepare rule");
        let kernel = rule(prim, params, &owned, &out).expect("prepared");
        let ops: Vec<Operand<'_>> = ins.iter().map(Operand::of).collect();
        let mut got = vec![0u64; want[0].as_bytes().len().div_ceil(8)];
        let got = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut got)[..want[0].as_bytes().len()];
        assert!(kernel.run(&ops, got), "{prim} {params:?}");
        assert_eq!(got, want[0].as_bytes(), "{prim} {params:?}");
    }

    #[test]
    fn prepared_moves_copy_what_the_implementations_return() {
        let ints = |v: &[i64]| Param::Ints(v.to_vec());
        for dtype in [
            DType::Float32,
            DType::Float16,
            DType::Int8,
            DType::Complex64,
            DType::Complex128,
        ] {
            let x = ramp(&[3, 4], dtype, 1);
            let y = ramp(&[2, 4], dtype, 5);
            agrees(
                &RESHAPE,
                &Params::new()
                    .with("new_sizes", ints(&[4, 3]))
                    .with("dimensions", Param::None)
                    .with("sharding", Param::None),
                std::slice::from_ref(&x),
            );
            agrees(
                &TRANSPOSE,
                &Params::new().with("permutation", ints(&[1, 0])),
                std::slice::from_ref(&x),
            );
            agrees(
                &REV,
                &Params::new().with("dimensions", ints(&[0, 1])),
                std::slice::from_ref(&x),
            );
            agrees(
                &BROADCAST_IN_DIM,
                &Params::new()
                    .with("shape", ints(&[2, 3, 4]))
                    .with("broadcast_dimensions", ints(&[1, 2]))
                    .with("sharding", Param::None),
                std::slice::from_ref(&x),
            );
            agrees(
                &SQUEEZE,
                &Params::new().with("dimensions", ints(&[0])),
                &[ramp(&[1, 5], dtype, 2)],
            );
            agrees(
                &SLICE,
                &Params::new()
                    .with("start_indices", ints(&[1, 0]))
                    .with("limit_indices", ints(&[3, 4]))
                    .with("strides", ints(&[1, 2])),
                std::slice::from_ref(&x),
            );
            agrees(
                &CONCATENATE,
                &Params::new().with("dimension", Param::Int(0)),
                &[x.clone(), y.clone()],
            );
            agrees(
                &PAD,
                &Params::new().with(
                    "padding_config",
                    Param::Padding(vec![(1, -1, 1), (0, 2, 0)]),
                ),
                &[x.clone(), ramp(&[], dtype, 99)],
            );
            // Start indices in and out of range, of signed and unsigned types: clamped.
            for (i, j) in [(0i64, 1i64), (-3, 9), (1, 2), (7, -1)] {
                for it in [DType::Int32, DType::Int64, DType::UInt8, DType::Int16] {
                    let at = |v: i64| Array::scalar(v as i32).astype(it).unwrap();
                    agrees(
                        &DYNAMIC_SLICE,
                        &Params::new().with("slice_sizes", ints(&[2, 3])),
                        &[x.clone(), at(i), at(j)],
                    );
                    agrees(
                        &DYNAMIC_UPDATE_SLICE,
                        &Params::new(),
                        &[x.clone(), ramp(&[2, 3], dtype, 50), at(i), at(j)],
                    );
                }
            }
        }
    }
}
