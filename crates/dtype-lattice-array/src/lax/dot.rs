//! `dot_general`: contractions over `dimension_numbers` (batch dimensions first in the result,
//! then the left operand's free dimensions, then the right's), with `jax.lax`'s shape rule,
//! its dtype rule (XLA's "higher precision type" of mixed operands; `preferred_element_type`
//! sets the result) and its refusals. Parameters, in the order jaxprs print them:
//! `dimension_numbers`, `out_sharding`, `precision`, `preferred_element_type` (jaxprs omit the
//! last three when `None`); only `precision=None` is modelled (XLA's CPU backend computes
//! float32 at full precision whatever it asks).
//!
//! The operands are converted to the result dtype (as JAX's CPU lowering does for mixed
//! dtypes; a float product asked for as integers or as a narrower float is computed in the
//! operands' float dtype and converted once),
//! transposed to `[batch, free, contract]` and `[batch, contract, free]` (float32 and float64
//! operands stored with free and contracting dimensions swapped are read through transposed
//! views instead of copied), and multiplied as
//! batched 2-D products: float32 and float64 through the `gemm` crate (AVX-512, AVX2 or SSE
//! kernels chosen at run time, on rayon's pool; `kernels::gemm`), every other dtype through one generic loop
//! (integers wrap; float16 and bfloat16 accumulate in float32 with fused multiply-adds, in
//! order, and round once, bit-exact with XLA's CPU backend in the fixtures: a product beyond
//! float32's range is not infinite on its own). A contraction of one element is the product
//! alone (XLA's multiply: `-0.0` stays). Float32 and float64 products of at most 2¹²
//! multiply-adds are summed in XLA's order (`kernels::gemm`: in order of the contracted
//! index, or XLA's eight lanes for float32 matrix-vector products of rows a multiple of 8
//! long, in a multiple of 8); larger ones and complex products are summed in another order
//! than XLA's and agree with it to rounding; complex matrix products with
//! infinite or NaN parts may differ in which parts are NaN (XLA's kernels are not modelled).

use super::{ad, batching};
use crate::core::{bind, bind1};

use super::{Avals, Outputs};
use crate::core::{BatchDims, Lin};
use dtype_lattice::{DType, Error, Kind};

use super::accumulate::Accumulate;
use super::reduce::{Red, Reducible};
use super::structural::{TRANSPOSE, distinct, type_error};
use super::{Param, Params, Primitive};
use crate::array::with_element;
use crate::array::{Array, Element, ShapedArray, Storage};
use crate::core::Hidden;
use crate::kernels::flush::any_subnormal;
use dtype_lattice::error::Exception;

/// The four lists of `dimension_numbers`.
struct Dims {
    lc: Vec<i64>,
    rc: Vec<i64>,
    lb: Vec<i64>,
    rb: Vec<i64>,
}

fn dims(params: &Params, prim: &str) -> Result<Dims, Error> {
    match params.require(prim, "dimension_numbers")? {
        Param::DotDimensionNumbers {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
        } => Ok(Dims {
            lc: lhs_contracting.clone(),
            rc: rhs_contracting.clone(),
            lb: lhs_batch.clone(),
            rb: rhs_batch.clone(),
        }),
        _ => Err(crate::array::invalid(
            "dot_general.dimension_numbers",
            "not dimension numbers",
        )),
    }
}

/// The dimensions of an operand of rank `nd` neither batch (`b`) nor contracting (`c`), in
/// order.
fn free_dims(nd: usize, b: &[usize], c: &[usize]) -> Vec<usize> {
    (0..nd)
        .filter(|i| !b.contains(i) && !c.contains(i))
        .collect()
}

/// A Python tuple of integers (`(2,)`, `()`).
fn tup(v: &[i64]) -> String {
    super::structural::py_ints(v)
}

/// XLA's ordering of dtypes for mixed operands: (complex, maxexp, nmant, bits, signed).
fn type_properties(d: DType) -> (bool, i32, i32, u32, bool) {
    let complex = d.kind() == Kind::Complex;
    let c = if complex { d.component() } else { d };
    let (maxexp, nmant) = match c.float_format() {
        Some(f) => (f.max.log2().floor() as i32 + 1, f.mantissa_bits as i32),
        None => (-1, -1),
    };
    (
        complex,
        maxexp,
        nmant,
        c.bits(),
        c.kind() != Kind::UnsignedInt,
    )
}

fn shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let (l, r) = (inputs[0], inputs[1]);
    let Dims { lc, rc, lb, rb } = dims(params, prim.name)?;
    let ok = |v: &[i64], n: usize| v.iter().all(|&d| d >= 0 && (d as u64) < n as u64);
    if !ok(&lc, l.ndim()) || !ok(&lb, l.ndim()) {
        return type_error(format!(
            "dot_general requires lhs dimension numbers to be nonnegative and less than the \
             number of axes of the lhs value, got lhs_batch of {} and lhs_contracting of {} \
             for lhs of rank {}",
            tup(&lb),
            tup(&lc),
            l.ndim()
        ));
    }
    if !ok(&rc, r.ndim()) || !ok(&rb, r.ndim()) {
        return type_error(format!(
            "dot_general requires rhs dimension numbers to be nonnegative and less than the \
             number of axes of the rhs value, got rhs_batch of {} and rhs_contracting of {} \
             for rhs of rank {}",
            tup(&rb),
            tup(&rc),
            r.ndim()
        ));
    }
    if lb.len() != rb.len() {
        return type_error(format!(
            "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got \
             lhs_batch {} and rhs_batch {}.",
            tup(&lb),
            tup(&rb)
        ));
    }
    for (side, what, v) in [
        ("lhs", "batch", &lb),
        ("rhs", "batch", &rb),
        ("lhs", "contracting", &lc),
        ("rhs", "contracting", &rc),
    ] {
        if !distinct(v) {
            let key = if what == "batch" {
                "batch"
            } else {
                "contracting"
            };
            return type_error(format!(
                "dot_general requires {side} {what} dimensions to be distinct, got {side}_{key} \
                 {}.",
                tup(v)
            ));
        }
    }
    for (side, b, c) in [("lhs", &lb, &lc), ("rhs", &rb, &rc)] {
        if b.iter().any(|d| c.contains(d)) {
            return type_error(format!(
                "dot_general requires {side} batch dimensions to be disjoint from contracting \
                 dimensions, got {side}_batch {} and {side}_contracting {}.",
                tup(b),
                tup(c)
            ));
        }
    }
    let sizes = |a: &ShapedArray, v: &[i64]| -> Vec<i64> {
        v.iter().map(|&d| a.shape()[d as usize] as i64).collect()
    };
    let (lbs, rbs) = (sizes(l, &lb), sizes(r, &rb));
    if lbs != rbs {
        return type_error(format!(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the \
             same shape, got {} and {}.",
            tup(&lbs),
            tup(&rbs)
        ));
    }
    let (lcs, rcs) = (sizes(l, &lc), sizes(r, &rc));
    if lcs != rcs {
        return type_error(format!(
            "dot_general requires contracting dimensions to have the same shape, got {} and \
             {}.",
            tup(&lcs),
            tup(&rcs)
        ));
    }
    let mut shape: Vec<usize> = lbs.iter().map(|&d| d as usize).collect();
    let free = |a: &ShapedArray, b: &[i64], c: &[i64]| -> Vec<usize> {
        (0..a.ndim())
            .filter(|&i| !b.contains(&(i as i64)) && !c.contains(&(i as i64)))
            .collect()
    };
    shape.extend(free(l, &lb, &lc).iter().map(|&i| l.shape()[i]));
    shape.extend(free(r, &rb, &rc).iter().map(|&i| r.shape()[i]));
    if crate::array::checked_size(&shape).is_none() {
        return Err(crate::array::invalid("dot_general", "size overflow"));
    }
    // The dtype rule.
    let (lp, rp) = (type_properties(l.dtype()), type_properties(r.dtype()));
    let result = if lp > rp {
        l.dtype()
    } else if rp > lp {
        r.dtype()
    } else if l.dtype() != r.dtype() {
        return type_error(format!(
            "lax.dot_general argument type error: {}, {}",
            l.dtype(),
            r.dtype()
        ));
    } else {
        l.dtype()
    };
    let out = match params.get("preferred_element_type") {
        Some(Param::DType(p)) if *p != result => {
            // `finfo(complex64).bits` is its component's.
            let bits = |d: DType| {
                if d.kind() == Kind::Complex {
                    d.component().bits()
                } else {
                    d.bits()
                }
            };
            if result.kind() != Kind::Float && bits(*p) < bits(result) {
                return type_error(format!(
                    "`preferred_element_type` must not be narrower than the original type, got \
                     preferred_element_type of {p} for result type of {result}."
                ));
            }
            *p
        }
        _ => result,
    };
    if l.dtype().is_extended() || r.dtype().is_extended() {
        return type_error(format!(
            "dot_general does not accept dtype {}",
            if l.dtype().is_extended() {
                l.dtype()
            } else {
                r.dtype()
            }
        ));
    }
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        out,
        l.weak_type() && r.weak_type(),
    )])
}

/// The dtype a product of `natural` operands (the dtype rule's result before
/// `preferred_element_type`) is computed in when `out` is asked for: `out`, unless that would
/// lose what XLA keeps (a float or complex product asked for as integers, a float product
/// asked for as a narrower float, a complex one asked for as real): then `natural`, converted
/// once at the end.
fn compute_dtype(natural: DType, out: DType) -> DType {
    let (nk, ok) = (natural.kind(), out.kind());
    let inexact = |k: Kind| matches!(k, Kind::Float | Kind::Complex);
    let narrower_float = nk == Kind::Float && ok == Kind::Float && out.bits() < natural.bits();
    if (inexact(nk) && !inexact(ok)) || narrower_float || (nk == Kind::Complex && ok != nk) {
        natural
    } else {
        out
    }
}

/// `x` with its dimensions in the order `perm` (no copy when already in order).
fn permuted(x: &Array, perm: &[usize]) -> Result<Array, Error> {
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(x.clone());
    }
    let p = Params::new().with(
        "permutation",
        Param::Ints(perm.iter().map(|&d| d as i64).collect()),
    );
    bind1(&TRANSPOSE, &[x], &p)
}

/// `c[b] = a[b] · b[b]` for `bs` batches of `m×k` and `k×n` row-major matrices, accumulating
/// in `T::Acc`.
/// `xla`: XLA's accumulation (fused multiply-adds, a one-element contraction as the product
/// alone); otherwise products added to a zero, as NumPy's loops do.
fn generic_kernel<T: Reducible + Element>(
    a: &[T],
    b: &[T],
    (bs, m, k, n): (usize, usize, usize, usize),
    xla: bool,
) -> Vec<T> {
    let mut out = Vec::with_capacity(bs * m * n);
    let mut acc = vec![T::identity(Red::Sum); n];
    for batch in 0..bs {
        let (a, b) = (&a[batch * m * k..], &b[batch * k * n..]);
        for i in 0..m {
            if k == 1 && xla {
                // XLA's simplifier turns a dot contracting one element into a multiply: the
                // product alone, not added to a zero (`-0.0 * 1` stays `-0.0`).
                let x = a[i].widen();
                out.extend(b[..n].iter().map(|&y| T::narrow(x.mul(y.widen()))));
                continue;
            }
            acc.fill(T::identity(Red::Sum));
            for kk in 0..k {
                let x = a[i * k + kk].widen();
                for (j, c) in acc.iter_mut().enumerate() {
                    let y = b[kk * n + j].widen();
                    *c = if xla {
                        x.mul_acc(y, *c)
                    } else {
                        c.add(x.mul(y))
                    };
                }
            }
            out.extend(acc.iter().map(|&c| T::narrow(c)));
        }
    }
    out
}

/// float32/float64 products through the `gemm` crate ([`crate::kernels::gemm`]), into a pooled buffer
/// (a fresh one of megabytes would cost a page fault per 4 KiB). An operand stored transposed
/// (`[batch, contract, free]` on the left, `[batch, free, contract]` on the right) is read
/// in place through its strides instead of being copied.
fn fast_kernel<T>(
    shape: &[usize],
    (a, a_t): (&[T], bool),
    (b, b_t): (&[T], bool),
    (bs, m, k, n): (usize, usize, usize, usize),
) -> Result<Array, Error>
where
    T: crate::kernels::gemm::GemmScalar + Element + bytemuck::Pod,
{
    if a.len() < bs * m * k || b.len() < bs * k * n {
        return Err(crate::array::invalid("dot_general", "operands do not fit"));
    }
    // The product overwrites every element: the buffer is not cleared first.
    let data = Storage::overwritten(size_of::<T>(), bs * m * n, |bytes| {
        let out: &mut [T] = bytemuck::cast_slice_mut(bytes);
        for batch in 0..bs {
            crate::kernels::gemm::matmul::<T>(
                (&a[batch * m * k..(batch + 1) * m * k], a_t),
                (&b[batch * k * n..(batch + 1) * k * n], b_t),
                (m, k, n),
                &mut out[batch * m * n..(batch + 1) * m * n],
            );
        }
        Ok::<(), Error>(())
    })?;
    Ok(Array::from_parts(
        ShapedArray::new(shape, T::DTYPE, false),
        data,
    ))
}

/// A product of a dtype without a Rust element type, its operands already in
/// `[batch, free, contract]`/`[batch, contract, free]` order: the 1-, 2- and 4-bit integers in
/// 8 bits (the same modulo their width), the 4-, 6- and 8-bit floats in float32 (the result
/// rounded once by the caller's conversion).
fn narrow_dot(
    l: &Array,
    r: &Array,
    (bs, m, k, n): (usize, usize, usize, usize),
    shape: &[usize],
) -> Result<Array, Error> {
    let dt = l.dtype();
    let wide = match dt.kind() {
        Kind::SignedInt => DType::Int8,
        Kind::UnsignedInt => DType::UInt8,
        Kind::Float => DType::Float32,
        _ => {
            return Err(Error::refused(
                dtype_lattice::error::Exception::NotImplementedError,
                format!("dot_general of {dt} arrays is not implemented yet"),
            ));
        }
    };
    let as3 = |x: &Array, s: [usize; 3]| -> Result<Array, Error> {
        Array::from_bytes(x.dtype(), &s, x.as_bytes())?.astype(wide)
    };
    let (lw, rw) = (as3(l, [bs, m, k])?, as3(r, [bs, k, n])?);
    let p = Params::new()
        .with(
            "dimension_numbers",
            Param::DotDimensionNumbers {
                lhs_contracting: vec![2],
                rhs_contracting: vec![1],
                lhs_batch: vec![0],
                rhs_batch: vec![0],
            },
        )
        .with("out_sharding", Param::None)
        .with("precision", Param::None)
        .with("preferred_element_type", Param::None);
    let y = bind1(&DOT_GENERAL, &[&lw, &rw], &p)?;
    Array::from_bytes(wide, shape, y.as_bytes())
}

fn impl_rule(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let aval = &out[0];
    super::structural::check_alloc(aval)?;
    if aval.shape().contains(&0) {
        // No element to compute (the contraction may still be huge).
        let empty = Array::from_bytes(aval.dtype(), aval.shape(), &[])?;
        return Ok(smallvec::smallvec![empty.with_weak_type(aval.weak_type())]);
    }
    let natural = if type_properties(inputs[0].dtype()) >= type_properties(inputs[1].dtype()) {
        inputs[0].dtype()
    } else {
        inputs[1].dtype()
    };
    let dt = compute_dtype(natural, aval.dtype());
    let conv = |x: &Array| {
        if x.dtype() == dt {
            Ok(x.clone())
        } else {
            x.astype(dt)
        }
    };
    let (l, r) = (conv(inputs[0])?, conv(inputs[1])?);
    // XLA's CPU backend computes with denormals off: float32, float64 and bfloat16 operands
    // are read with their subnormals as zeros (float8_e8m0fnu's 2⁻¹²⁷ among them, in
    // float32), and the result is written flushed (below).
    let xla = super::on_xla();
    let (l, r) = if xla {
        (flushed(&l)?, flushed(&r)?)
    } else {
        (l, r)
    };
    let Dims { lc, rc, lb, rb } = dims(params, prim.name)?;
    let u = |v: &[i64]| v.iter().map(|&d| d as usize).collect::<Vec<_>>();
    let (lc, rc, lb, rb) = (u(&lc), u(&rc), u(&lb), u(&rb));
    let (lf, rf) = (free_dims(l.ndim(), &lb, &lc), free_dims(r.ndim(), &rb, &rc));
    // Saturating: an empty operand may have dimensions whose product overflows (then no
    // element is read).
    let size = |x: &Array, v: &[usize]| {
        v.iter()
            .fold(1usize, |n, &d| n.saturating_mul(x.shape()[d]))
    };
    let dims4 = (size(&l, &lb), size(&l, &lf), size(&l, &lc), size(&r, &rf));
    // XLA's CPU backend (not NumPy, under its rules) has no dot on 2-bit integers; its simplifier only removes a dot that
    // contracts at most one element (into a multiply or zeros) before it would be compiled.
    if matches!(dt, DType::Int2 | DType::UInt2) && dims4.2 >= 2 && super::on_xla() {
        let hlo = if dt == DType::Int2 { "S2" } else { "U2" };
        return Err(Error::refused(
            dtype_lattice::error::Exception::JaxRuntimeError,
            format!("UNIMPLEMENTED: unsupported operand type {hlo} in op dot"),
        ));
    }
    let lp: Vec<usize> = lb.iter().chain(&lf).chain(&lc).copied().collect();
    let rp: Vec<usize> = rb.iter().chain(&rc).chain(&rf).copied().collect();
    let shape = aval.shape();
    let result = if matches!(dt, DType::Float32 | DType::Float64) && (dims4.2 != 1 || !xla) {
        // An operand whose dimensions are in order but for free and contracting swapped is
        // read transposed in place.
        let placed = |x: &Array, b: &[usize], first: &[usize], second: &[usize], p: Vec<usize>| {
            let swapped: Vec<usize> = b.iter().chain(second).chain(first).copied().collect();
            if swapped.iter().enumerate().all(|(i, &d)| i == d) && p != swapped {
                Ok((x.clone(), true))
            } else {
                permuted(x, &p).map(|y| (y, false))
            }
        };
        let (l, lt) = placed(&l, &lb, &lf, &lc, lp)?;
        let (r, rt) = placed(&r, &rb, &rc, &rf, rp)?;
        if dt == DType::Float32 {
            fast_kernel(
                shape,
                (l.as_slice::<f32>()?, lt),
                (r.as_slice::<f32>()?, rt),
                dims4,
            )?
        } else {
            fast_kernel(
                shape,
                (l.as_slice::<f64>()?, lt),
                (r.as_slice::<f64>()?, rt),
                dims4,
            )?
        }
    } else {
        let (l, r) = (permuted(&l, &lp)?, permuted(&r, &rp)?);
        with_element!(dt, T => Array::from_shape_vec(
            shape,
            generic_kernel::<T>(&l.to_vec::<T>()?, &r.to_vec::<T>()?, dims4, xla),
        )?, narrow_dot(&l, &r, dims4, shape)?)
    };
    let result = if xla { flushed(&result)? } else { result };
    let result = if result.dtype() == aval.dtype() {
        result
    } else {
        result.astype(aval.dtype())?
    };
    Ok(smallvec::smallvec![result.with_weak_type(aval.weak_type())])
}

/// `x` with its subnormal elements as zeros of their sign (float32, float64, bfloat16; other
/// dtypes unchanged), as XLA's CPU code reads and writes them.
fn flushed(x: &Array) -> Result<Array, Error> {
    use super::elementwise::lanes::{flush32, flush64};
    if !any_subnormal(x.dtype(), x.as_bytes()) {
        return Ok(x.clone());
    }
    Ok(match x.dtype() {
        DType::Float32 => {
            let v = x.as_slice::<f32>()?;
            Array::from_shape_vec(x.shape(), v.iter().map(|&e| flush32(e)).collect())?
        }
        DType::Float64 => {
            let v = x.as_slice::<f64>()?;
            Array::from_shape_vec(x.shape(), v.iter().map(|&e| flush64(e)).collect())?
        }
        DType::BFloat16 => {
            let v = x.as_slice::<half::bf16>()?;
            let f = |e: &half::bf16| half::bf16::from_f32(flush32(e.to_f32()));
            Array::from_shape_vec(x.shape(), v.iter().map(f).collect())?
        }
        _ => x.clone(),
    }
    .with_weak_type(x.weak_type()))
}

/// `dot_general`'s prepare rule: a float32 or float64 product of operands of the result's
/// dtype stored as `[batch, free, contract]` or `[batch, contract, free]` (left) and
/// `[batch, contract, free]` or `[batch, free, contract]` (right), under JAX's rules, as
/// [`impl_rule`] computes it: the same kernels on the operands in place (the layout and sizes
/// worked out here, once). It declines an operand holding a subnormal (the implementation
/// flushes a copy) and NumPy's rules.
fn prepare(
    _: &'static Primitive,
    params: &Params,
    ins: &[ShapedArray],
    out: &ShapedArray,
) -> Option<crate::core::Prepared> {
    let dt = out.dtype();
    let [l, r] = ins else { return None };
    if !matches!(dt, DType::Float32 | DType::Float64)
        || l.dtype() != dt
        || r.dtype() != dt
        || out.size() == 0
    {
        return None;
    }
    let Dims { lc, rc, lb, rb } = dims(params, "dot_general").ok()?;
    let u =
        |v: &[i64]| -> Option<Vec<usize>> { v.iter().map(|&d| usize::try_from(d).ok()).collect() };
    let (lc, rc, lb, rb) = (u(&lc)?, u(&rc)?, u(&lb)?, u(&rb)?);
    let (lf, rf) = (free_dims(l.ndim(), &lb, &lc), free_dims(r.ndim(), &rb, &rc));
    let in_order = |v: Vec<usize>| v.iter().enumerate().all(|(i, &d)| i == d);
    let cat = |a: &[usize], b: &[usize], c: &[usize]| [a, b, c].concat();
    // Read as stored (false) or transposed in place (true); any other layout is permuted by
    // the implementation.
    let a_t = if in_order(cat(&lb, &lf, &lc)) {
        false
    } else if in_order(cat(&lb, &lc, &lf)) {
        true
    } else {
        return None;
    };
    let b_t = if in_order(cat(&rb, &rc, &rf)) {
        false
    } else if in_order(cat(&rb, &rf, &rc)) {
        true
    } else {
        return None;
    };
    let size = |x: &ShapedArray, v: &[usize]| -> Option<usize> {
        v.iter()
            .try_fold(1usize, |n, &d| n.checked_mul(*x.shape().get(d)?))
    };
    let dims4 = (size(l, &lb)?, size(l, &lf)?, size(l, &lc)?, size(r, &rf)?);
    Some(crate::core::Prepared::Kernel(match dt {
        DType::Float32 => Box::new(move |ops, out| prepared::<f32>(ops, out, dims4, a_t, b_t)),
        _ => Box::new(move |ops, out| prepared::<f64>(ops, out, dims4, a_t, b_t)),
    }))
}

/// A prepared product (see [`prepare`]); false where it declines.
fn prepared<T>(
    ops: &[crate::core::Operand<'_>],
    out: &mut [u8],
    (bs, m, k, n): (usize, usize, usize, usize),
    a_t: bool,
    b_t: bool,
) -> bool
where
    T: crate::kernels::gemm::GemmScalar + Element + bytemuck::Pod + std::ops::Mul<Output = T>,
{
    let [l, r] = ops else { return false };
    let (Ok(a), Ok(b), Ok(out)) = (
        bytemuck::try_cast_slice::<u8, T>(l.bytes),
        bytemuck::try_cast_slice::<u8, T>(r.bytes),
        bytemuck::try_cast_slice_mut::<u8, T>(out),
    ) else {
        return false;
    };
    if !super::on_xla()
        || a.len() != bs * m * k
        || b.len() != bs * k * n
        || out.len() != bs * m * n
        || (!l.clean && any_subnormal(T::DTYPE, l.bytes))
        || (!r.clean && any_subnormal(T::DTYPE, r.bytes))
    {
        return false;
    }
    for batch in 0..bs {
        let (a, b) = (
            &a[batch * m * k..(batch + 1) * m * k],
            &b[batch * k * n..(batch + 1) * k * n],
        );
        let c = &mut out[batch * m * n..(batch + 1) * m * n];
        if k == 1 {
            // XLA's multiply for a one-element contraction (see `generic_kernel`).
            crate::kernels::gemm::outer_ftz(a, b, c);
        } else {
            crate::kernels::gemm::matmul_ftz::<T>((a, a_t), (b, b_t), (m, k, n), c);
        }
    }
    true
}

/// `dot_general` of `a` and `b` with no contracting and no batch dimensions (an outer
/// product, as JAX's `jnp.outer` binds it before reshaping), for tests of jit's passes.
#[cfg(test)]
pub(crate) fn outer_product(a: &Array, b: &Array) -> Result<Array, Error> {
    let p = Params::new()
        .with(
            "dimension_numbers",
            Param::DotDimensionNumbers {
                lhs_contracting: vec![],
                rhs_contracting: vec![],
                lhs_batch: vec![],
                rhs_batch: vec![],
            },
        )
        .with("out_sharding", Param::None)
        .with("precision", Param::None)
        .with("preferred_element_type", Param::DType(a.dtype()));
    bind1(&DOT_GENERAL, &[a, b], &p)
}

/// Parameters jaxprs leave out when `None`.
const DOT_HIDDEN: &[Hidden] = &[
    ("precision", Some(&Param::None)),
    ("out_sharding", Some(&Param::None)),
];

/// The `dot_general` primitive.
pub static DOT_GENERAL: Primitive = Primitive::new("dot_general", Some(2), shape_rule, impl_rule)
    .jvp(jvp)
    .transpose(transpose)
    .batch(dot_general_batch)
    .prepare(prepare)
    .hides(DOT_HIDDEN)
    // JAX fails an assertion.
    .refuses_float0(|_, _| {
        Error::refused(
            Exception::TypeError,
            "dot_general does not accept float0 operands",
        )
    });

// ---- JVP and transpose rules

/// `dot_general`: bilinear.
fn jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = ad::primal_out(prim, primals, params)?;
    let (l, r) = (&primals[0], &primals[1]);
    let a = match &tangents[0] {
        Some(t) => Some(bind(prim, &[t, r], params)?[0].clone()),
        None => None,
    };
    let b = match tangents.get(1).cloned().flatten() {
        Some(t) => Some(bind(prim, &[l, &t], params)?[0].clone()),
        None => None,
    };
    let t = ad::fit(ad::plus(a, b)?, &out[0])?;
    Ok((out, vec![t]))
}

/// `dot_general` transposed in its linear operand(s).
fn transpose(
    p: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    dot_transpose(p, &ct, ins, params)
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
        _ => return Err(crate::core::nonlinear()),
    };
    let (l, r) = (ins[0].aval(), ins[1].aval());
    let (lf, rf) = (free_dims(l.ndim(), &lb, &lc), free_dims(r.ndim(), &rb, &rc));
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
            // As JAX's transpose rules: the equation's own preferred_element_type.
            .with(
                "preferred_element_type",
                params
                    .get("preferred_element_type")
                    .cloned()
                    .unwrap_or(Param::None),
            );
        let known = ad::convert_to(known, ct.aval())?;
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
        ad::convert_to(&ad::transpose(&y, &perm)?, aval)
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

// ---- batching rules

/// `dot_general` (JAX's `_dot_general_batch_dim_nums`): two batched operands gain a leading
/// batch dimension of the product; one batched operand's batch dimension becomes one of its
/// free dimensions, and the result's batch dimension is where that lands.
fn dot_general_batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let (l, r) = (&args[0], &args[1]);
    let Param::DotDimensionNumbers {
        lhs_contracting: lc,
        rhs_contracting: rc,
        lhs_batch: lb,
        rhs_batch: rb,
    } = params.require(prim.name, "dimension_numbers")?
    else {
        return Err(batching::internal("dot_general's dimension_numbers"));
    };
    let bump = |v: &[i64], b: usize| -> Vec<i64> {
        v.iter()
            .map(|&d| if d >= b as i64 { d + 1 } else { d })
            .collect()
    };
    let free_before = |ndim: usize, batch: &[i64], contract: &[i64], b: usize| {
        (0..ndim)
            .filter(|&d| !batch.contains(&(d as i64)) && !contract.contains(&(d as i64)))
            .filter(|&d| d < b)
            .count()
    };
    let (nlc, nrc, nlb, nrb, out) = match (dims[0], dims[1]) {
        (Some(lbd), Some(rbd)) => {
            let nlb: Vec<i64> = std::iter::once(lbd as i64).chain(bump(lb, lbd)).collect();
            let nrb: Vec<i64> = std::iter::once(rbd as i64).chain(bump(rb, rbd)).collect();
            (bump(lc, lbd), bump(rc, rbd), nlb, nrb, 0)
        }
        (Some(lbd), None) => {
            let out = lb.len() + free_before(l.ndim() - 1, lb, lc, lbd);
            (bump(lc, lbd), rc.clone(), bump(lb, lbd), rb.clone(), out)
        }
        (None, Some(rbd)) => {
            let out = l.ndim() - lc.len() + free_before(r.ndim() - 1, rb, rc, rbd);
            (lc.clone(), bump(rc, rbd), lb.clone(), bump(rb, rbd), out)
        }
        (None, None) => return Err(batching::internal("no batched operand")),
    };
    let params = params.clone().set(
        "dimension_numbers",
        Param::DotDimensionNumbers {
            lhs_contracting: nlc,
            rhs_contracting: nrc,
            lhs_batch: nlb,
            rhs_batch: nrb,
        },
    );
    Ok((
        bind(&super::DOT_GENERAL, &[l, r], &params)?,
        vec![Some(out)],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every placement of the contracting dimension of both operands (read in place transposed
    /// or not, with and without a batch dimension) gives the generic kernel's products: integer
    /// values in float32 and float64 against the same values in int32.
    #[test]
    fn transposed_operands_read_in_place_agree_with_the_generic_kernel() {
        let vals = |n: usize, seed: i32| -> Vec<i32> {
            (0..n as i32).map(|i| (i * 7 + seed * 3) % 11 - 5).collect()
        };
        let dot = |l: &Array, r: &Array, lc: i64, rc: i64, batch: bool| {
            let (lb, rb) = if batch {
                (vec![0], vec![0])
            } else {
                (vec![], vec![])
            };
            let p = Params::new().with(
                "dimension_numbers",
                Param::DotDimensionNumbers {
                    lhs_contracting: vec![lc],
                    rhs_contracting: vec![rc],
                    lhs_batch: lb,
                    rhs_batch: rb,
                },
            );
            bind1(&DOT_GENERAL, &[l, r], &p).unwrap()
        };
        for batch in [false, true] {
            let off = i64::from(batch);
            for (lc, rc) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                // Contracting size 5, free sizes 3 (left) and 4 (right), batch 2.
                let lshape: Vec<usize> = if lc == 0 { vec![5, 3] } else { vec![3, 5] };
                let rshape: Vec<usize> = if rc == 0 { vec![5, 4] } else { vec![4, 5] };
                let with_batch = |s: &[usize]| -> Vec<usize> {
                    if batch {
                        [&[2], s].concat()
                    } else {
                        s.to_vec()
                    }
                };
                let (ls, rs) = (with_batch(&lshape), with_batch(&rshape));
                let li = Array::from_shape_vec(&ls, vals(ls.iter().product(), 1)).unwrap();
                let ri = Array::from_shape_vec(&rs, vals(rs.iter().product(), 2)).unwrap();
                let want = dot(&li, &ri, lc + off, rc + off, batch);
                for dt in [DType::Float32, DType::Float64] {
                    let (lf, rf) = (li.astype(dt).unwrap(), ri.astype(dt).unwrap());
                    let got = dot(&lf, &rf, lc + off, rc + off, batch);
                    assert_eq!(got.shape(), want.shape());
                    assert_eq!(
                        got.astype(DType::Int32).unwrap().to_vec::<i32>().unwrap(),
                        want.to_vec::<i32>().unwrap(),
                        "{dt} lc={lc} rc={rc} batch={batch}"
                    );
                }
            }
        }
    }
}
