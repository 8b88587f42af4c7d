//! NumPy with ml_dtypes: a function runs the loop NumPy picks for its ufunc
//! ([`dtype_lattice::ufunc::Ufunc::loop_for`]), not a promotion: NumPy's own loops are the
//! function on their dtype (`uint2 + 0` is int8's `add`, `int8 / int8` float64's
//! `true_divide`, `reciprocal` of bool int8's); ml_dtypes' loops compute each element in
//! float32 (its floats and complex32/bcomplex32) or in its integer and round once to their
//! type ([`compute_dtype`]), and its reductions accumulate in the type itself, element after
//! element.

use dtype_lattice::error::Exception;
use dtype_lattice::ufunc::{Loop, is_ml_dtype, numpy_ufunc};
use dtype_lattice::{DType, Error, Kind, Operand, RuleSet, Value};
use num_complex::Complex;

use super::{ArrayLike, rules};
use crate::array::Array;
use crate::convert::{Semantics, decode_f32, element_size, encode_f32};

/// Whether the NumPy rules (with ml_dtypes) are in force.
fn numpy_with_ml_dtypes() -> bool {
    rules().rule_set() == RuleSet::NUMPY
}

/// Whether `dtype` is one of ml_dtypes' types under the NumPy rules.
pub(crate) fn is_ml(dtype: DType) -> bool {
    numpy_with_ml_dtypes() && is_ml_dtype(dtype)
}

/// The loop NumPy runs `ufunc` with on `args` when the NumPy rules are in force
/// ([`dtype_lattice::ufunc::Ufunc::loop_for`]): with an operand of one of ml_dtypes' types
/// always; with NumPy's own dtypes only when some operand is not already an array of its
/// loop's input dtype (`None` otherwise: the function computes on the operands as they are).
fn ufunc_loop(ufunc: &str, args: &[ArrayLike<'_>]) -> Result<Option<Loop>, Error> {
    if !numpy_with_ml_dtypes() {
        return Ok(None);
    }
    if let Some(ArrayLike::Failed(e)) = args.iter().find(|a| matches!(a, ArrayLike::Failed(_))) {
        return Err((**e).clone());
    }
    let operands: Vec<Operand> = args.iter().map(ArrayLike::operand).collect();
    let l = numpy_ufunc(ufunc)
        .expect("a NumPy ufunc of the table")
        .loop_for(&operands)?;
    let as_they_are = !l.ml_dtypes
        && args
            .iter()
            .zip(&l.inputs)
            .all(|(a, &t)| a.as_array().is_some_and(|a| a.dtype() == t));
    Ok((!as_they_are).then_some(l))
}

/// The dtype an ml_dtypes loop of `t` is computed in here: its integers in int8 (wrapped
/// back once); its floats in float64 and complex numbers in complex128, whose results rounded
/// to float32 (then to the type) are ml_dtypes' float32 results for the arithmetic (float64
/// holds the exact product of two float32 values, and rounding a float64 sum or quotient to
/// float32 is correct rounding, as 53 ≥ 2·24 + 2), without the float32 primitives' flushing
/// of subnormals, which bfloat16 and float8_e8m0fnu reach.
pub(crate) fn compute_dtype(t: DType) -> DType {
    match t.kind() {
        Kind::Complex => DType::Complex128,
        Kind::SignedInt | Kind::UnsignedInt => DType::Int8,
        _ => DType::Float64,
    }
}

/// `x` converted to `dtype` (NumPy's casts under these rules), unchanged if it has it.
fn cast(x: &Array, dtype: DType) -> Result<Array, Error> {
    if x.dtype() == dtype {
        Ok(x.clone())
    } else {
        x.astype(dtype)
    }
}

/// `f` run through the loop NumPy picks for `ufunc` on `args` (see the module doc): the
/// operands are cast to the loop's inputs (Python scalars converted to them), to the
/// computation dtype of an ml_dtypes loop, `f` computes (it is told the loop), and its result
/// is rounded to the loop's output. `None` when the NumPy rules are not in force, or every
/// operand is already an array of its loop's dtype of NumPy's own (the caller then computes
/// on them: for NumPy's dtypes `f` is the function itself, called again on the cast
/// operands).
pub(crate) fn through_loop(
    ufunc: &str,
    args: &[ArrayLike<'_>],
    f: impl FnOnce(Vec<ArrayLike<'static>>, &Loop) -> Result<Array, Error>,
) -> Option<Result<Array, Error>> {
    let l = match ufunc_loop(ufunc, args) {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    Some((|| {
        let mut inputs = Vec::with_capacity(args.len());
        for (a, &t) in args.iter().zip(&l.inputs) {
            let x = match a {
                // Only the logical functions' bool loop takes a Python complex into a real
                // loop: NumPy casts it (x != 0).
                ArrayLike::Scalar(v @ Value::Complex(..)) if t.kind() != Kind::Complex => cast(
                    &crate::array::scalar_array(*v, DType::Complex128, false)?,
                    t,
                )?,
                _ => a.to_array(t, false)?,
            };
            let x = if l.ml_dtypes {
                cast(&x, compute_dtype(t))?
            } else {
                x
            };
            inputs.push(ArrayLike::Owned(x));
        }
        let r = f(inputs, &l)?;
        if l.ml_dtypes && matches!(r.dtype(), DType::Float64 | DType::Complex128) {
            // ml_dtypes' float32 result, then its type (NumPy's float64 → type cast rounds
            // through float32 too).
            let single = if r.dtype() == DType::Float64 {
                DType::Float32
            } else {
                DType::Complex64
            };
            return cast(&cast(&r, single)?, l.output);
        }
        cast(&r, l.output)
    })())
}

/// Two operands of a binary function's closure.
pub(crate) fn two(mut v: Vec<ArrayLike<'static>>) -> (ArrayLike<'static>, ArrayLike<'static>) {
    let y = v.pop().expect("two operands");
    let x = v.pop().expect("two operands");
    (x, y)
}

/// The operand of a unary function's closure.
pub(crate) fn one(mut v: Vec<ArrayLike<'static>>) -> ArrayLike<'static> {
    v.pop().expect("one operand")
}

/// `v` rounded to ml_dtypes' float `t` (NumPy's cast of a float32) and read back.
fn round_f32(t: DType, v: f32) -> f32 {
    let mut buf = [0u8; 4];
    let n = element_size(t).unwrap_or(4);
    if encode_f32(Semantics::NumPy, t, v, &mut buf[..n]).is_err() {
        return v;
    }
    decode_f32(t, &buf[..n]).unwrap_or(v)
}

/// The positive axes of `dims` (already checked) and the C strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Folds `values` (row-major, of `shape`) over the axes `dims`, element after element in
/// row-major order of the reduced axes, from `init` (or the first element); the result's
/// shape drops the reduced axes.
fn fold<E: Copy>(
    values: &[E],
    shape: &[usize],
    dims: &[usize],
    init: Option<E>,
    step: impl Fn(E, E) -> E,
) -> (Vec<E>, Vec<usize>) {
    let st = strides(shape);
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !dims.contains(d)).collect();
    let out_shape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    let out_size: usize = out_shape.iter().product();
    let red_size: usize = dims.iter().map(|&d| shape[d]).product();
    let index = |axes: &[usize], mut i: usize| -> usize {
        let mut flat = 0;
        for &d in axes.iter().rev() {
            flat += (i % shape[d]) * st[d];
            i /= shape[d];
        }
        flat
    };
    let mut out = Vec::with_capacity(out_size);
    for o in 0..out_size {
        let base = index(&kept, o);
        let mut acc = init;
        for r in 0..red_size {
            let v = values[base + index(dims, r)];
            acc = Some(match acc {
                None => v,
                Some(a) => step(a, v),
            });
        }
        if let Some(a) = acc {
            out.push(a);
        }
    }
    (out, out_shape)
}

/// What a sequential reduction of ml_dtypes' type computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fold {
    /// `add.reduce` (from 0).
    Sum,
    /// `multiply.reduce` (from 1).
    Prod,
    /// `maximum.reduce` (ml_dtypes' `isnan(a) || a > b ? a : b`).
    Max,
    /// `minimum.reduce`.
    Min,
}

/// ml_dtypes' maximum of two float32 values of its type: `a` if it is NaN or larger, else `b`.
pub(crate) fn ml_max(a: f32, b: f32) -> f32 {
    if a.is_nan() || a > b { a } else { b }
}

/// ml_dtypes' minimum.
pub(crate) fn ml_min(a: f32, b: f32) -> f32 {
    if a.is_nan() || a < b { a } else { b }
}

/// `op.reduce(x, axis=dims)` for `x` of one of ml_dtypes' types as NumPy runs it: the loop
/// [`dtype_lattice::ufunc::Ufunc::resolve_reduce`] picks; ml_dtypes' loops accumulate in the
/// type, rounding after every element (its integers wrap); NumPy's loops (`maximum` of int4
/// runs int8's) reduce the cast array with `builtin`. The reduced axes are dropped.
pub(crate) fn reduce(
    op: Fold,
    x: &Array,
    dims: &[usize],
    builtin: impl FnOnce(Array) -> Result<Array, Error>,
) -> Result<Array, Error> {
    let name = match op {
        Fold::Sum => "add",
        Fold::Prod => "multiply",
        Fold::Max => "maximum",
        Fold::Min => "minimum",
    };
    let l = numpy_ufunc(name)
        .expect("a NumPy ufunc")
        .resolve_reduce(x.dtype())?
        .expect("an ml_dtypes dtype");
    if !l.ml_dtypes {
        return builtin(cast(x, l.inputs[0])?);
    }
    let t = x.dtype();
    // The identity, as the type holds it (float8_e8m0fnu has no zero: its sums start at NaN).
    fn init<E>(op: Fold, zero: E, one: E) -> Option<E> {
        match op {
            Fold::Sum => Some(zero),
            Fold::Prod => Some(one),
            _ => None,
        }
    }
    match t.kind() {
        Kind::SignedInt | Kind::UnsignedInt => {
            // Wrapping arithmetic: the exact result, wrapped once at the end.
            let v = cast(x, DType::Int64)?.to_vec::<i64>()?;
            let (out, shape) = fold(&v, x.shape(), dims, init(op, 0, 1), |a, b| match op {
                Fold::Sum => a.wrapping_add(b),
                Fold::Prod => a.wrapping_mul(b),
                Fold::Max => a.max(b),
                Fold::Min => a.min(b),
            });
            cast(&Array::from_shape_vec(&shape, out)?, t)
        }
        Kind::Complex => {
            let c = t.component();
            let r = |z: Complex<f32>| Complex::new(round_f32(c, z.re), round_f32(c, z.im));
            let v = cast(x, DType::Complex64)?.to_vec::<Complex<f32>>()?;
            let zero = Complex::new(round_f32(c, 0.0), round_f32(c, 0.0));
            let one = Complex::new(round_f32(c, 1.0), round_f32(c, 0.0));
            let (out, shape) = fold(&v, x.shape(), dims, init(op, zero, one), |a, b| match op {
                Fold::Prod => r(a * b),
                _ => r(a + b),
            });
            cast(&Array::from_shape_vec(&shape, out)?, t)
        }
        _ => {
            let v = cast(x, DType::Float32)?.to_vec::<f32>()?;
            let (zero, one) = (round_f32(t, 0.0), round_f32(t, 1.0));
            let (out, shape) = fold(&v, x.shape(), dims, init(op, zero, one), |a, b| match op {
                Fold::Sum => round_f32(t, a + b),
                Fold::Prod => round_f32(t, a * b),
                Fold::Max => ml_max(a, b),
                Fold::Min => ml_min(a, b),
            });
            cast(&Array::from_shape_vec(&shape, out)?, t)
        }
    }
}

/// `add.accumulate` of the flattened `x` of one of ml_dtypes' types (`np.cumsum`): ml_dtypes'
/// `add` loop, each partial sum rounded to the type (its integers wrap).
pub(crate) fn cumsum(x: &Array) -> Result<Array, Error> {
    let t = x.dtype();
    let n = x.size();
    match t.kind() {
        Kind::SignedInt | Kind::UnsignedInt => {
            let v = cast(x, DType::Int64)?.to_vec::<i64>()?;
            let out: Vec<i64> = v
                .iter()
                .scan(0i64, |s, &e| {
                    *s = s.wrapping_add(e);
                    Some(*s)
                })
                .collect();
            cast(&Array::from_shape_vec(&[n], out)?, t)
        }
        Kind::Complex => {
            let c = t.component();
            let v = cast(x, DType::Complex64)?.to_vec::<Complex<f32>>()?;
            let out = accumulate(&v, |a, b| {
                let z = a + b;
                Complex::new(round_f32(c, z.re), round_f32(c, z.im))
            });
            cast(&Array::from_shape_vec(&[n], out)?, t)
        }
        _ => {
            let v = cast(x, DType::Float32)?.to_vec::<f32>()?;
            let out = accumulate(&v, |a, b| round_f32(t, a + b));
            cast(&Array::from_shape_vec(&[n], out)?, t)
        }
    }
}

/// The partial sums of `v` by `add`, as `add.accumulate` computes them: the first element as
/// it is (a `-0.0` stays), then each sum of the previous one and the next element.
fn accumulate<E: Copy>(v: &[E], add: impl Fn(E, E) -> E) -> Vec<E> {
    v.iter()
        .scan(None, |s: &mut Option<E>, &e| {
            let next = s.map_or(e, |p| add(p, e));
            *s = Some(next);
            Some(next)
        })
        .collect()
}

/// `add.accumulate` of the flattened float or complex `x` of NumPy's own dtypes (`np.cumsum`
/// under the NumPy rules): float16 rounds each partial sum (computed in float32) to float16,
/// as its half loop does; the others add in their dtype.
pub(crate) fn accumulate_float(x: &Array) -> Result<Array, Error> {
    let n = x.size();
    match x.dtype() {
        DType::Float64 => {
            let out = accumulate(&x.to_vec::<f64>()?, |a, b| a + b);
            Array::from_shape_vec(&[n], out)
        }
        DType::Complex128 => {
            let out = accumulate(&x.to_vec::<Complex<f64>>()?, |a, b| a + b);
            Array::from_shape_vec(&[n], out)
        }
        DType::Complex64 => {
            let out = accumulate(&x.to_vec::<Complex<f32>>()?, |a, b| a + b);
            Array::from_shape_vec(&[n], out)
        }
        t => {
            let v = cast(x, DType::Float32)?.to_vec::<f32>()?;
            let out = accumulate(&v, |a, b| {
                if t == DType::Float32 {
                    a + b
                } else {
                    round_f32(t, a + b)
                }
            });
            cast(&Array::from_shape_vec(&[n], out)?, t)
        }
    }
}

/// `maximum.reduce` or `minimum.reduce` (`op`) of NumPy's float16 `x` over `dims`, as its
/// half loop runs them: element after element from the first, `isnan(a) || a >= b ? a : b`
/// (`<=` for the minimum), so the first of equal elements (`+0.0`, `-0.0`) is kept.
pub(crate) fn half_extremum(op: Fold, x: &Array, dims: &[usize]) -> Result<Array, Error> {
    let v = cast(x, DType::Float32)?.to_vec::<f32>()?;
    let (out, shape) = fold(&v, x.shape(), dims, None, |a, b| {
        let keep = match op {
            Fold::Min => a <= b,
            _ => a >= b,
        };
        if a.is_nan() || keep { a } else { b }
    });
    cast(&Array::from_shape_vec(&shape, out)?, x.dtype())
}

/// `np.mean` of `sum` (the `add.reduce` of `count` elements of ml_dtypes' type `t`):
/// `sum.dtype.type(sum / count)`, the division running the loop NumPy picks for the type and
/// a Python int (ml_dtypes' own for its floats, where the count is rounded to the type first;
/// float16's for its integers, whose quotient is then truncated).
pub(crate) fn mean(sum: Array, count: usize, t: DType) -> Result<Array, Error> {
    let q = super::true_divide(&sum, ArrayLike::Scalar(Value::Int(count as i128)))?;
    if q.dtype() == t {
        return Ok(q);
    }
    if count == 0 {
        return Err(Error::refused(
            Exception::ValueError,
            "cannot convert float NaN to integer",
        ));
    }
    cast(&q, t)
}
