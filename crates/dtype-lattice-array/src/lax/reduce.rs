//! Reductions (`reduce_sum`, `reduce_prod`, `reduce_max`, `reduce_min`, `reduce_and`,
//! `reduce_or`, `argmax`, `argmin`) and cumulative reductions (`cumsum`, `cumprod`, `cummax`,
//! `cummin`), one generic kernel each over the element types.
//!
//! Integers wrap (bit-exact in any order). Floats follow the order of XLA's CPU backend where
//! it is a fixed program, which makes them bit-exact there:
//!
//! - reductions: a reduction of unit dimensions is a reshape (`-0.0` stays); while a reduced
//!   dimension is longer than 32, XLA's tree rewrite (windows of 32 over the reduced
//!   dimensions, padded half low, half high), then a sequential loop in row-major order. This is
//!   XLA's order for every reduction over one dimension and for most others; where LLVM
//!   vectorises XLA's loop with reassociation (some reductions over several dimensions) and for
//!   float32/float64 sums of 4096 elements or more (XLA hands those to a library kernel), the
//!   results agree to rounding, not bit for bit.
//! - cumulative reductions: XLA's rewrite of the window reductions they lower to: up to 16
//!   elements each output is its own window summed forward (reversed too); longer scans are
//!   padded to blocks of 16, scanned per block, and the blocks' totals scanned recursively
//!   (exclusively) and added. Bit-exact at every length checked (up to 5000).
//!
//! float16 and bfloat16 compute each step in float32 and round it (XLA's CPU backend), so a
//! float16 sum rounds per addition. Under JAX's rules every float step runs with denormals
//! off, as XLA's CPU code does: subnormal operands read as zeros of their sign, subnormal
//! results flushed, `max`/`min` with LLVM's `+0 > -0`, `argmax`/`argmin` comparing so (a
//! subnormal ties with zero); a cumulative reduction over one element is the element itself
//! (XLA's simplifier removes it), but for float16/bfloat16, which it computes behind
//! conversions. `max`/`min` propagate NaN. `argmax`/`argmin` return the
//! first NaN's index if any, else the first extremum's (ties: the lowest index). The 1-, 2-
//! and 4-bit integers compute in 8 bits (the same modulo their width); the float8, float6
//! and float4 formats compute `max`/`min` and `argmax`/`argmin` in float32 (exact), and their
//! sums and products in float32 rounded back to the format at every step.

use super::{ad, batching};
use crate::core::bind1;

use super::ops;
use super::{Avals, Outputs};
use crate::core::Lin;
use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind};
use half::{bf16, f16};
use num_complex::Complex;

use super::accumulate::Accumulate;
use super::elementwise::lanes::{flush32, flush64};
use super::structural::{
    distinct, for_each_index, in_range, param_int, py_ints, strides, type_error, value_error,
};
use super::{Param, Params, Primitive};
use crate::array::storage::sealed::Words;
use crate::array::with_element;
use crate::array::{Array, Element, ShapedArray, Storage, py_shape};

/// Which reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Red {
    Sum,
    Prod,
    Max,
    Min,
    And,
    Or,
}

impl Red {
    pub(super) const fn of(code: u8) -> Red {
        const ALL: [Red; 6] = [Red::Sum, Red::Prod, Red::Max, Red::Min, Red::And, Red::Or];
        ALL[code as usize]
    }

    #[inline(always)]
    fn apply<T: Accumulate>(self, a: T, b: T) -> T {
        match self {
            Red::Sum => a.add(b),
            Red::Prod => a.mul(b),
            Red::Max => a.max(b),
            Red::Min => a.min(b),
            Red::And => a.and(b),
            Red::Or => a.or(b),
        }
    }
}

/// An element type as reductions see it: its identities, and the type a dot product
/// accumulates it in.
pub(crate) trait Reducible: Accumulate {
    /// The accumulator type of products (float32 for float16 and bfloat16, else the type).
    type Acc: Accumulate;
    fn widen(self) -> Self::Acc;
    fn narrow(a: Self::Acc) -> Self;
    /// The identity of a reduction, in the accumulator type.
    fn identity(op: Red) -> Self::Acc;
    fn is_nan(self) -> bool;
    /// The value as XLA's CPU code reads it (denormals off: a float32, bfloat16, float64 or
    /// complex subnormal is a zero of its sign; float16's subnormals are normal float32s).
    #[inline(always)]
    fn daz(self) -> Self {
        self
    }
    /// One step `a ⊕ b` as XLA's CPU code computes it: operands read by [`Reducible::daz`],
    /// a subnormal result flushed.
    #[inline(always)]
    fn step_xla(op: Red, a: Self, b: Self) -> Self {
        op.apply(a, b)
    }
}

macro_rules! int_reducible {
    ($($t:ty),*) => {$(
        impl Reducible for $t {
            type Acc = $t;
            #[inline(always)] fn widen(self) -> $t { self }
            #[inline(always)] fn narrow(a: $t) -> $t { a }
            fn identity(op: Red) -> $t {
                match op {
                    Red::Sum | Red::Or => 0,
                    Red::Prod => 1,
                    Red::Max => <$t>::MIN,
                    Red::Min => <$t>::MAX,
                    Red::And => !0,
                }
            }
            #[inline(always)] fn is_nan(self) -> bool { false }
        }
    )*};
}
int_reducible!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Reducible for bool {
    type Acc = bool;
    #[inline(always)]
    fn widen(self) -> bool {
        self
    }
    #[inline(always)]
    fn narrow(a: bool) -> bool {
        a
    }
    fn identity(op: Red) -> bool {
        matches!(op, Red::Prod | Red::Min | Red::And)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        false
    }
}

macro_rules! float_reducible {
    ($($t:ty, $flush:ident),*) => {$(
        impl Reducible for $t {
            type Acc = $t;
            #[inline(always)] fn widen(self) -> $t { self }
            #[inline(always)] fn narrow(a: $t) -> $t { a }
            #[inline(always)] fn daz(self) -> $t { $flush(self) }
            #[inline(always)] fn step_xla(op: Red, a: $t, b: $t) -> $t {
                let (a, b) = ($flush(a), $flush(b));
                let sign = (-0.0 as $t).to_bits();
                $flush(match op {
                    // XLA's `maximum`/`minimum` with a NaN: the left NaN as it is, else the
                    // right one with the sign of both signs' `and` (max) or `or` (min).
                    Red::Max | Red::Min if a.is_nan() => a,
                    Red::Max if b.is_nan() => <$t>::from_bits(b.to_bits() & (a.to_bits() | !sign)),
                    Red::Min if b.is_nan() => <$t>::from_bits(b.to_bits() | (a.to_bits() & sign)),
                    // LLVM's `maximum`/`minimum`: +0 above -0.
                    Red::Max if a == b => if a.is_sign_negative() { b } else { a },
                    Red::Min if a == b => if a.is_sign_negative() { a } else { b },
                    _ => op.apply(a, b),
                })
            }
            fn identity(op: Red) -> $t {
                match op {
                    Red::Sum | Red::Or | Red::And => 0.0,
                    Red::Prod => 1.0,
                    Red::Max => <$t>::NEG_INFINITY,
                    Red::Min => <$t>::INFINITY,
                }
            }
            #[inline(always)] fn is_nan(self) -> bool { <$t>::is_nan(self) }
        }
    )*};
}
float_reducible!(f32, flush32, f64, flush64);

macro_rules! half_reducible {
    ($($t:ty),*) => {$(
        impl Reducible for $t {
            type Acc = f32;
            #[inline(always)] fn widen(self) -> f32 { self.to_f32() }
            #[inline(always)] fn narrow(a: f32) -> $t { <$t>::from_f32(a) }
            fn identity(op: Red) -> f32 { <f32 as Reducible>::identity(op) }
            #[inline(always)] fn is_nan(self) -> bool { <$t>::is_nan(self) }
        }
    )*};
}
half_reducible!(f16);

/// bfloat16 steps in float32 with denormals off (float16's need none: its subnormals are
/// normal float32s, and results in its range are far from float32's subnormals).
impl Reducible for bf16 {
    type Acc = f32;
    #[inline(always)]
    fn widen(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn narrow(a: f32) -> bf16 {
        bf16::from_f32(a)
    }
    fn identity(op: Red) -> f32 {
        <f32 as Reducible>::identity(op)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        bf16::is_nan(self)
    }
    #[inline(always)]
    fn daz(self) -> bf16 {
        bf16::from_f32(flush32(self.to_f32()))
    }
    #[inline(always)]
    fn step_xla(op: Red, a: bf16, b: bf16) -> bf16 {
        let r = <f32 as Reducible>::step_xla(op, a.to_f32(), b.to_f32());
        bf16::from_f32(r)
    }
}

macro_rules! complex_reducible {
    ($($t:ty, $flush:ident),*) => {$(
        impl Reducible for Complex<$t> {
            type Acc = Complex<$t>;
            #[inline(always)] fn widen(self) -> Self { self }
            #[inline(always)] fn narrow(a: Self) -> Self { a }
            fn identity(op: Red) -> Self {
                Complex::new(<$t as Reducible>::identity(op), 0.0)
            }
            #[inline(always)] fn is_nan(self) -> bool { self.re.is_nan() || self.im.is_nan() }
            #[inline(always)] fn daz(self) -> Self { Complex::new($flush(self.re), $flush(self.im)) }
            #[inline(always)] fn step_xla(op: Red, a: Self, b: Self) -> Self {
                op.apply(a.daz(), b.daz()).daz()
            }
        }
    )*};
}
complex_reducible!(f32, flush32, f64, flush64);

/// The typed elements of an array (empty if `T` is not its element type).
pub(super) fn elems<T: Element>(x: &Array) -> impl Iterator<Item = T> + '_ {
    T::Word::view(x.storage())
        .unwrap_or(&[])
        .iter()
        .map(|&w| T::from_word(w))
}

pub(super) fn storage_of<T: Element>(v: impl Iterator<Item = T>) -> Storage {
    T::Word::into_storage(v.map(T::to_word).collect())
}

/// The float formats stored a byte per element (float8, float6, float4).
fn is_minifloat(d: DType) -> bool {
    d.kind() == Kind::Float && d.bits() <= 8
}

/// For a dtype without a Rust element type, the dtype that computes `op` on it exactly: the
/// 8-bit integer of the same signedness for the 1-, 2- and 4-bit integers (wrapping is the
/// same modulo their width), float32 for the small floats when `op` only compares (`max`,
/// `min`, `argmax`…: the result is one of the inputs). `None`: none (their sums and products
/// go through `minifloat_kernel`).
pub(super) fn stand_in(dtype: DType, compares: bool) -> Option<DType> {
    match dtype.kind() {
        Kind::SignedInt if dtype.bits() < 8 => Some(DType::Int8),
        Kind::UnsignedInt if dtype.bits() < 8 => Some(DType::UInt8),
        Kind::Float if compares && dtype.bits() < 16 => Some(DType::Float32),
        _ => None,
    }
}

/// Binds `prim` on `x` converted to its [`stand_in`], the result converted back to `out`'s
/// dtype.
fn via_stand_in(
    prim: &'static Primitive,
    x: &Array,
    params: &Params,
    out: &ShapedArray,
    compares: bool,
) -> Result<Outputs, Error> {
    let Some(wide) = stand_in(x.dtype(), compares) else {
        return Err(not_implemented(prim, x.dtype()));
    };
    if x.size() == 0 && out.size() > 0 && compares {
        // An empty `max`/`min`: the identity of the narrow dtype itself (JAX's
        // `_get_max_identity`: -inf, or the lowest finite value of a format without
        // infinities; the lowest integer), not the stand-in's.
        let max = prim.name == "reduce_max";
        let d = x.dtype();
        let v = match (d.float_format(), d.int_range()) {
            (Some(f), _) if f.has_inf => f64::INFINITY,
            (Some(f), _) => f.max,
            (None, Some((lo, hi))) => (if max { lo } else { hi }) as f64,
            (None, None) => 0.0,
        };
        let v = match (max, d.float_format()) {
            (true, Some(f)) if f.signed => -v,
            (true, Some(_)) => 0.0,
            _ => v,
        };
        let filled = Array::from_shape_vec(out.shape(), vec![v; out.size()])?;
        return Ok(smallvec::smallvec![
            filled.astype(out.dtype())?.with_weak_type(out.weak_type()),
        ]);
    }
    // JAX's identity for max, argmax and argmin (∓∞) is NaN in float8_e8m0fnu (no infinities,
    // no negative numbers). XLA's max propagates it, but for a reduction of unit dimensions
    // (a reshape, below); its argmax and argmin never replace it: index 0. (NumPy's loops
    // start from the first element.)
    let e8m0_identity = x.dtype() == DType::Float8E8M0Fnu
        && x.size() > 0
        && super::on_xla()
        && match prim.name {
            "reduce_max" => norm_axes(x, &axes_param(params, prim.name)?)
                .iter()
                .any(|&a| x.shape()[a] != 1),
            "argmax" | "argmin" => true,
            _ => false,
        };
    if e8m0_identity {
        let v = if prim.name == "reduce_max" {
            f64::NAN
        } else {
            0.0
        };
        let filled = Array::from_shape_vec(out.shape(), vec![v; out.size()])?;
        return Ok(smallvec::smallvec![
            filled.astype(out.dtype())?.with_weak_type(out.weak_type()),
        ]);
    }
    let y = super::bind1(
        prim,
        &[&x.astype(wide)?.with_weak_type(x.weak_type())],
        params,
    )?;
    let y = if y.dtype() == out.dtype() {
        y
    } else {
        y.astype(out.dtype())?
    };
    Ok(smallvec::smallvec![y.with_weak_type(out.weak_type())])
}

fn not_implemented(prim: &Primitive, dtype: DType) -> Error {
    Error::refused(
        Exception::NotImplementedError,
        format!("{} of {dtype} arrays is not implemented yet", prim.name),
    )
}

/// For each input element (row-major), the flat index of the output element it reduces into.
fn out_steps(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    let kept: Vec<usize> = (0..shape.len()).filter(|i| !axes.contains(i)).collect();
    let kept_shape: Vec<usize> = kept.iter().map(|&i| shape[i]).collect();
    let ks = strides(&kept_shape);
    let mut step = vec![0; shape.len()];
    for (k, &i) in kept.iter().enumerate() {
        step[i] = ks[k];
    }
    step
}

/// The window of XLA's CPU tree reduction rewriter.
const TREE_WINDOW: usize = 32;

/// `init ⊕ x₀ ⊕ x₁ ⊕ …` per output element, the reduced elements in row-major order (XLA's
/// loop for a reduce).
fn plain_reduce<T: Copy, F: Fn(T, T) -> T>(
    op: &F,
    xs: &[T],
    shape: &[usize],
    axes: &[usize],
    init: T,
) -> Vec<T> {
    let n_out = shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(i))
        .map(|(_, &d)| d)
        .product();
    let step = out_steps(shape, axes);
    // An empty operand reads nothing (and its other dimensions may be huge): no maps.
    let empty = shape.contains(&0);
    let maps: Vec<Vec<usize>> = shape
        .iter()
        .zip(&step)
        .map(|(&d, &s)| (0..if empty { 0 } else { d }).map(|q| q * s).collect())
        .collect();
    stream_reduce(op, xs, shape, &maps, vec![init; n_out])
}

/// `acc[o] = acc[o] ⊕ x` for every input element `x` in row-major order, `o` the sum over
/// dimensions `k` of `maps[k][q_k]` (`q` the element's multi-index). Every output element
/// therefore folds its inputs in row-major order: the order of [`plain_reduce`] and of each
/// window of [`tree_reduce`]. The last dimension runs as one loop over the row.
fn stream_reduce<T: Copy, F: Fn(T, T) -> T>(
    op: &F,
    xs: &[T],
    shape: &[usize],
    maps: &[Vec<usize>],
    mut acc: Vec<T>,
) -> Vec<T> {
    let Some((&inner, outer)) = shape.split_last() else {
        // A 0-d operand: one element into one output.
        if let (Some(a), Some(&x)) = (acc.first_mut(), xs.first()) {
            *a = op(*a, x);
        }
        return acc;
    };
    if shape.contains(&0) {
        return acc;
    }
    let inner_map = &maps[outer.len()];
    let mut idx = vec![0usize; outer.len()];
    let mut base: usize = (0..outer.len()).map(|k| maps[k][0]).sum();
    // The last dimension kept (its outputs contiguous: one vectorisable pass per row) or
    // reduced (one output folding the row): no per-element map then.
    let first = inner_map[0];
    let kept = inner_map.iter().enumerate().all(|(q, &m)| m == first + q);
    let reduced = inner_map.iter().all(|&m| m == first);
    for row in xs.chunks_exact(inner) {
        if kept {
            let o = base + first;
            for (a, &v) in acc[o..o + inner].iter_mut().zip(row) {
                *a = op(*a, v);
            }
        } else if reduced {
            let o = base + first;
            acc[o] = row.iter().fold(acc[o], |a, &v| op(a, v));
        } else {
            for (&v, &m) in row.iter().zip(inner_map) {
                let o = base + m;
                acc[o] = op(acc[o], v);
            }
        }
        // Odometer over the outer dimensions, keeping `base` their part of the output index.
        let mut k = outer.len();
        while k > 0 {
            k -= 1;
            base -= maps[k][idx[k]];
            idx[k] += 1;
            if idx[k] < outer[k] {
                base += maps[k][idx[k]];
                break;
            }
            idx[k] = 0;
            base += maps[k][0];
        }
    }
    acc
}

/// One `reduce-window` pass of [`tree_reduce`] over `shape`: its output shape (each reduced
/// dimension in windows of [`TREE_WINDOW`]) and each dimension's low padding (half the
/// padding to a whole number of windows, rounded down; 0 for the kept dimensions).
fn window_pass(shape: &[usize], axes: &[usize]) -> (Vec<usize>, Vec<usize>) {
    const W: usize = TREE_WINDOW;
    (0..shape.len())
        .map(|i| {
            if axes.contains(&i) {
                let windows = shape[i].div_ceil(W);
                (windows, (windows * W - shape[i]) / 2)
            } else {
                (shape[i], 0)
            }
        })
        .unzip()
}

/// A reduction in XLA's CPU order: while a reduced dimension is longer than 32, a
/// `reduce-window` of 32 (stride 32) over the reduced dimensions, padded to a multiple of 32
/// (half the padding low, the rest high; padding contributes nothing), each window in row-major
/// order from `init`; then [`plain_reduce`]. Each step rounds to `T` (float16 and bfloat16 add
/// in float32 and round per step, as XLA's CPU backend does).
fn tree_reduce<T: Copy, F: Fn(T, T) -> T>(
    op: &F,
    mut xs: Vec<T>,
    mut shape: Vec<usize>,
    axes: &[usize],
    init: T,
) -> Vec<T> {
    const W: usize = TREE_WINDOW;
    while axes.iter().any(|&a| shape[a] > W) {
        let reduced = |i: usize| axes.contains(&i);
        let (new_shape, lo) = window_pass(&shape, axes);
        // Each input element goes to its window's output element; padding contributes
        // nothing, so only real elements are visited.
        let out_st = strides(&new_shape);
        let empty = shape.contains(&0);
        let maps: Vec<Vec<usize>> = (0..shape.len())
            .map(|k| {
                (0..if empty { 0 } else { shape[k] })
                    .map(|q| {
                        if reduced(k) {
                            (q + lo[k]) / W * out_st[k]
                        } else {
                            q * out_st[k]
                        }
                    })
                    .collect()
            })
            .collect();
        let out = stream_reduce(
            op,
            &xs,
            &shape,
            &maps,
            vec![init; new_shape.iter().product()],
        );
        xs = out;
        shape = new_shape;
    }
    plain_reduce(op, &xs, &shape, axes, init)
}

/// The reduction `OP` (a [`Red`] code, a constant so that each element's step compiles to
/// one instruction and the kept-dimension loops vectorise).
fn reduce_kernel<T: Reducible, const OP: u8>(x: &Array, axes: &[usize]) -> Storage {
    let op = Red::of(OP);
    let xs: Vec<T> = elems::<T>(x).collect();
    if axes.iter().all(|&a| x.shape()[a] == 1) {
        // XLA simplifies a reduction of unit dimensions to a reshape: `-0.0` stays `-0.0`.
        return storage_of(xs.into_iter());
    }
    let init = T::narrow(T::identity(op));
    if super::on_xla() {
        // Denormals off (XLA's CPU code): `max(1e-40, -1.0)` is 0.
        let f = |a: T, b: T| T::step_xla(const { Red::of(OP) }, a, b);
        return storage_of(tree_reduce(&f, xs, x.shape().to_vec(), axes, init).into_iter());
    }
    // The closure captures nothing: the operation is a constant inside the loops.
    let f = |a: T, b: T| const { Red::of(OP) }.apply(a, b);
    storage_of(tree_reduce(&f, xs, x.shape().to_vec(), axes, init).into_iter())
}

/// `float32[2,3,4]`: an aval as `str(ShapedArray)` prints it in JAX's messages.
fn aval_str(x: &ShapedArray) -> String {
    let dims: Vec<String> = x.shape().iter().map(usize::to_string).collect();
    let weak = if x.weak_type() { "~" } else { "" };
    format!("{weak}{}[{}]", x.dtype(), dims.join(","))
}

fn axes_param(params: &Params, prim: &str) -> Result<Vec<i64>, Error> {
    super::structural::param_ints(params, prim, "axes")
}

fn number_check(name: &str, d: DType) -> Result<(), Error> {
    if matches!(
        d.kind(),
        Kind::SignedInt | Kind::UnsignedInt | Kind::Float | Kind::Complex
    ) {
        Ok(())
    } else {
        type_error(format!(
            "{name} does not accept dtype {d}. Accepted dtypes are subtypes of number."
        ))
    }
}

fn reduce_shape_rule<const OP: u8>(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let op = Red::of(OP);
    let x = inputs[0];
    let axes = axes_param(params, prim.name)?;
    let kept: Vec<usize>;
    let mut weak = x.weak_type();
    if matches!(op, Red::And | Red::Or) {
        // `np.delete(operand.shape, axes)`: negative axes count from the end.
        // NumPy's integer kinds: the sub-byte integers of ml_dtypes are not among them.
        if !(matches!(
            x.dtype().kind(),
            Kind::Bool | Kind::SignedInt | Kind::UnsignedInt
        ) && (x.dtype() == DType::Bool || x.dtype().bits() >= 8))
        {
            return type_error(format!(
                "logical reduction requires operand dtype bool or int, got {}.",
                x.dtype()
            ));
        }
        let n = x.ndim() as i64;
        let mut norm = Vec::with_capacity(axes.len());
        for &a in &axes {
            if a < -n || a >= n {
                return Err(crate::array::invalid(
                    &format!("{}.axes", prim.name),
                    format!("IndexError: index {a} is out of bounds for axis 0 with size {n}"),
                ));
            }
            norm.push(if a < 0 { (a + n) as usize } else { a as usize });
        }
        kept = (0..x.ndim()).filter(|i| !norm.contains(i)).collect();
        weak = false;
    } else {
        if !distinct(&axes) {
            return value_error(format!(
                "duplicate value in 'axes' of reduction: {}",
                py_ints(&axes)
            ));
        }
        let Some(ok) = in_range(&axes, x.ndim()) else {
            return value_error(format!(
                "reduction axes {} contains out-of-bounds indices for {}.",
                py_ints(&axes),
                aval_str(x)
            ));
        };
        if matches!(op, Red::Sum | Red::Prod) {
            number_check(prim.name, x.dtype())?;
        }
        kept = (0..x.ndim()).filter(|i| !ok.contains(i)).collect();
    }
    let shape: Vec<usize> = kept.iter().map(|&i| x.shape()[i]).collect();
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        x.dtype(),
        weak
    )])
}

/// The reduced axes, normalised (negative ones of `reduce_and`/`reduce_or` counted from the
/// end).
fn norm_axes(x: &Array, axes: &[i64]) -> Vec<usize> {
    let n = x.ndim() as i64;
    axes.iter()
        .map(|&a| if a < 0 { (a + n) as usize } else { a as usize })
        .collect()
}

fn reduce_impl<const OP: u8>(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let op = Red::of(OP);
    let x = inputs[0];
    let axes = norm_axes(x, &axes_param(params, prim.name)?);
    // An empty operand reduces to an output of identities, which may be large.
    super::structural::check_alloc(&out[0])?;
    let data = with_element!(x.dtype(), T => reduce_kernel::<T, OP>(x, &axes), {
        if is_minifloat(x.dtype()) && matches!(op, Red::Sum | Red::Prod) {
            return Ok(smallvec::smallvec![minifloat_kernel(op, x, &axes, None, &out[0])?]);
        }
        return via_stand_in(prim, x, params, &out[0], matches!(op, Red::Max | Red::Min));
    });
    Ok(smallvec::smallvec![Array::from_parts(out[0].clone(), data)])
}

/// lax's refusal of a `float0` operand by a reduction or scan (`OP`: sum and prod, and the
/// scans, name the accepted dtypes; max and min, as `argmax`/`argmin`, the unsupported one;
/// the logical ones the operand's).
fn float0_refusal<const OP: u8>(prim: &'static Primitive, _: &[&ShapedArray]) -> Error {
    let f0 = DType::Float0.numpy_str();
    match Red::of(OP) {
        Red::Max => float0_max(prim, &[]),
        Red::Min => float0_min(prim, &[]),
        Red::And | Red::Or => Error::refused(
            Exception::TypeError,
            format!("logical reduction requires operand dtype bool or int, got {f0}."),
        ),
        _ => Error::refused(
            Exception::TypeError,
            format!(
                "{} does not accept dtype void. Accepted dtypes are subtypes of number.",
                prim.name
            ),
        ),
    }
}

fn float0_max(_: &'static Primitive, _: &[&ShapedArray]) -> Error {
    Error::refused(
        Exception::ValueError,
        format!("Unsupported dtype for max: {}", DType::Float0.numpy_str()),
    )
}

fn float0_min(_: &'static Primitive, _: &[&ShapedArray]) -> Error {
    Error::refused(
        Exception::ValueError,
        format!("Unsupported dtype for min: {}", DType::Float0.numpy_str()),
    )
}

/// JAX's `_reduce_prod_jvp_rule`: the reduced axes moved to the front and flattened, then
/// multiplied pairwise, halves against halves (an odd half padded with one), differentiating
/// each product (`ṫ₁·x₂ + x₁·ṫ₂`); the primal is that tree's product too.
fn reduce_prod_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let Some(t) = tangents[0].clone() else {
        return Ok((ad::primal_out(prim, primals, params)?, vec![None]));
    };
    let x = &primals[0];
    let axes = params.usizes(prim.name, "axes")?;
    let rest: Vec<usize> = (0..x.ndim()).filter(|d| !axes.contains(d)).collect();
    let n: usize = axes.iter().map(|&a| x.shape()[a]).product();
    let perm: Vec<usize> = axes.iter().chain(&rest).copied().collect();
    let mut shape = vec![n];
    shape.extend(rest.iter().map(|&d| x.shape()[d]));
    let flat = |v: &Array| ad::reshape(&ad::transpose(v, &perm)?, &shape);
    let (mut xs, mut ts) = (flat(x)?, flat(&t)?);
    let half = |v: &Array, lo: usize, hi: usize| {
        let mut l = vec![0; v.ndim()];
        let mut h = v.shape().to_vec();
        l[0] = lo;
        h[0] = hi;
        ad::slice(v, &l, &h, None)
    };
    let pad_one = |v: &Array, value: f64| {
        let mut cfg = vec![(0, 0, 0); v.ndim()];
        cfg[0] = (0, 1, 0);
        bind1(
            &super::PAD,
            &[v, &ops::konst(v, value)?],
            &Params::new().with("padding_config", Param::Padding(cfg)),
        )
    };
    while xs.shape()[0] > 1 {
        let n = xs.shape()[0];
        let n1 = n.div_ceil(2);
        let (x1, mut x2) = (half(&xs, 0, n1)?, half(&xs, n1, n)?);
        let (t1, mut t2) = (half(&ts, 0, n1)?, half(&ts, n1, n)?);
        if n - n1 != n1 {
            x2 = pad_one(&x2, 1.0)?;
            t2 = pad_one(&t2, 0.0)?;
        }
        ts = ops::add(&ops::mul(&t1, &x2)?, &ops::mul(&x1, &t2)?)?;
        xs = ops::mul(&x1, &x2)?;
    }
    let out_shape = &shape[1..];
    if xs.shape()[0] == 0 {
        let one = ops::broadcast_to(&ops::konst(x, 1.0)?, out_shape)?;
        let zero = ops::broadcast_to(&ops::konst(x, 0.0)?, out_shape)?;
        return Ok((smallvec::smallvec![one], vec![Some(zero)]));
    }
    let squeeze = |v: &Array| ad::reshape(v, out_shape);
    Ok((
        smallvec::smallvec![squeeze(&xs)?],
        vec![Some(squeeze(&ts)?)],
    ))
}

/// A reduction's prepare rule (jit's loop bodies): a float32 or float64 `sum`, `prod`,
/// `max` or `min` to one element, whose reduced dimensions hold at most [`TREE_WINDOW`]
/// elements each, is XLA's loop alone: the operand folded in row-major order from the
/// identity, each step the implementation's (no buffers made). One element is the operand
/// itself (a reshape).
fn reduce_prepare<const OP: u8>(
    _: &'static Primitive,
    _: &Params,
    ins: &[ShapedArray],
    out: &ShapedArray,
) -> Option<crate::core::Prepared> {
    let [x] = ins else { return None };
    if out.size() != 1 || x.dtype() != out.dtype() || x.shape().iter().any(|&d| d > TREE_WINDOW) {
        return None;
    }
    if x.size() == 1 {
        return Some(crate::core::Prepared::Part { start: 0 });
    }
    let op = Red::of(OP);
    if matches!(op, Red::And | Red::Or) {
        return None;
    }
    let n = x.size();
    fn fold<T: Reducible<Acc = T> + bytemuck::Pod>(
        op: Red,
        n: usize,
    ) -> crate::core::PreparedKernel {
        Box::new(move |ops, out| {
            let [x] = ops else { return false };
            let (Ok(xs), Ok([o])) = (
                bytemuck::try_cast_slice::<u8, T>(x.bytes),
                bytemuck::try_cast_slice_mut::<u8, T>(out),
            ) else {
                return false;
            };
            if xs.len() != n {
                return false;
            }
            let init = T::identity(op);
            *o = if super::on_xla() {
                xs.iter().fold(init, |a, &b| T::step_xla(op, a, b))
            } else {
                xs.iter().fold(init, |a, &b| op.apply(a, b))
            };
            true
        })
    }
    Some(crate::core::Prepared::Kernel(match x.dtype() {
        DType::Float32 => fold::<f32>(op, n),
        DType::Float64 => fold::<f64>(op, n),
        _ => return None,
    }))
}

macro_rules! reductions {
    ($($c:ident = $name:literal, $op:ident $(=> { $($rules:tt)* })?;)*) => {$(
        #[doc = concat!("The `", $name, "` primitive.")]
        pub static $c: Primitive = Primitive::new($name, Some(1), reduce_shape_rule::<{ Red::$op as u8 }>, reduce_impl::<{ Red::$op as u8 }>)
    $($($rules)*)?
    .prepare(reduce_prepare::<{ Red::$op as u8 }>)
    .batch(batching::reducer)
    .refuses_float0(float0_refusal::<{ Red::$op as u8 }>);
    )*};
}

reductions! {
    REDUCE_SUM = "reduce_sum", Sum => { .jvp(ad::linear_jvp).transpose(reduce_sum_transpose) };
    REDUCE_PROD = "reduce_prod", Prod => { .jvp(reduce_prod_jvp) };
    REDUCE_MAX = "reduce_max", Max => { .jvp(chooser_jvp) };
    REDUCE_MIN = "reduce_min", Min => { .jvp(chooser_jvp) };
    REDUCE_AND = "reduce_and", And => { .jvp(ad::zero_jvp) };
    REDUCE_OR = "reduce_or", Or => { .jvp(ad::zero_jvp) };
}

fn argminmax_shape_rule<const MAX: bool>(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let axes = axes_param(params, prim.name)?;
    let axis = match axes.as_slice() {
        [a] => *a,
        [] => return value_error("not enough values to unpack (expected 1, got 0)".into()),
        _ => return value_error("too many values to unpack (expected 1)".into()),
    };
    let Some(ax) = usize::try_from(axis).ok().filter(|&a| a < x.ndim()) else {
        return value_error(format!(
            "Invalid axis {axis} for operand shape {}",
            py_shape(x.shape())
        ));
    };
    if x.shape()[ax] < 1 {
        return value_error(format!(
            "argmin and argmax require non-empty reduced dimension. operand.shape={} axis={ax}",
            py_shape(x.shape())
        ));
    }
    let index_dtype = match params.require(prim.name, "index_dtype")? {
        Param::DType(d) => *d,
        _ => return Err(crate::array::invalid("index_dtype", "not a dtype")),
    };
    if !matches!(index_dtype.kind(), Kind::SignedInt | Kind::UnsignedInt) {
        return type_error(format!(
            "index_dtype must be an integer type, but got {index_dtype}"
        ));
    }
    if !matches!(
        x.dtype().kind(),
        Kind::Bool | Kind::SignedInt | Kind::UnsignedInt | Kind::Float
    ) {
        // Raised by the lowering's comparison.
        let cmp = if MAX { "gt" } else { "lt" };
        return type_error(format!(
            "{cmp} does not accept dtype {} at position 0. Accepted dtypes at position 0 are \
             subtypes of integer, floating, bool.",
            x.dtype()
        ));
    }
    let mut shape = x.shape().to_vec();
    shape.remove(ax);
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        index_dtype,
        false
    )])
}

fn argminmax_kernel<T: Reducible>(max: bool, x: &Array, axis: usize, n_out: usize) -> Vec<i64> {
    let mut best: Vec<Option<(T, usize)>> = vec![None; n_out];
    let step = out_steps(x.shape(), &[axis]);
    let mut it = elems::<T>(x);
    // XLA compares with denormals off: a subnormal ties with the zeros.
    let daz = super::on_xla();
    for_each_index(x.shape(), |idx| {
        let o: usize = idx.iter().zip(&step).map(|(i, s)| i * s).sum();
        let Some(v) = it.next() else { return };
        let v = if daz { v.daz() } else { v };
        let take = match best[o] {
            None => true,
            Some((b, _)) if b.is_nan() => false,
            Some(_) if v.is_nan() => true,
            Some((b, _)) => {
                if max {
                    b.lt(v)
                } else {
                    v.lt(b)
                }
            }
        };
        if take {
            best[o] = Some((v, idx[axis]));
        }
    });
    best.into_iter()
        .map(|b| b.map_or(0, |(_, i)| i as i64))
        .collect()
}

fn argminmax_impl<const MAX: bool>(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let x = inputs[0];
    let axis = norm_axes(x, &axes_param(params, prim.name)?)[0];
    let n_out = out[0].size();
    // XLA's CPU backend (not NumPy's, under its rules) cannot compile the two-operand reduce
    // (value, index) on 2-bit integers; its simplifier only removes one of a single element.
    if matches!(x.dtype(), DType::Int2 | DType::UInt2)
        && x.shape()[axis] >= 2
        && n_out > 0
        && super::on_xla()
    {
        return Err(Error::refused(
            dtype_lattice::error::Exception::JaxRuntimeError,
            "INTERNAL: RET_CHECK failure (external/xla/xla/hlo/transforms/expanders/\
             reduce_decomposer.cc:95) reduce->inputs()[i]->shape().layout() == \
             reduce->inputs()[0]->shape().layout() ",
        ));
    }
    let idx = with_element!(x.dtype(), T => argminmax_kernel::<T>(MAX, x, axis, n_out), {
        return via_stand_in(prim, x, params, &out[0], true);
    });
    let a = Array::from_shape_vec(out[0].shape(), idx)?.astype(out[0].dtype())?;
    Ok(smallvec::smallvec![a])
}

/// The `argmax` primitive.
pub static ARGMAX: Primitive = Primitive::new(
    "argmax",
    Some(1),
    argminmax_shape_rule::<true>,
    argminmax_impl::<true>,
)
.jvp(ad::zero_jvp)
.batch(batching::reducer)
.refuses_float0(float0_max);

/// The `argmin` primitive.
pub static ARGMIN: Primitive = Primitive::new(
    "argmin",
    Some(1),
    argminmax_shape_rule::<false>,
    argminmax_impl::<false>,
)
.jvp(ad::zero_jvp)
.batch(batching::reducer)
.refuses_float0(float0_min);

fn cum_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let axis = param_int(params, prim.name, "axis")?;
    if axis < 0 {
        return value_error("XLA operations do not allow negative axes".into());
    }
    if axis as u64 >= x.ndim() as u64 {
        return value_error(format!(
            "axis {axis} is out of bounds for array of shape {}",
            py_shape(x.shape())
        ));
    }
    number_check(prim.name, x.dtype())?;
    Ok(smallvec::smallvec![(*x).clone()])
}

/// The block length of XLA's CPU rewrite of long cumulative reductions.
const SCAN_BASE: usize = 16;

/// `init ⊕ xs[lo] ⊕ … ⊕ xs[hi - 1]` over the part of `lo..hi` inside `xs`, in order.
fn window<T: Clone, E, F: Fn(&T, &T) -> Result<T, E>>(
    op: &F,
    xs: &[T],
    lo: isize,
    hi: isize,
    init: &T,
) -> Result<T, E> {
    let lo = lo.max(0) as usize;
    let hi = (hi.max(0) as usize).min(xs.len());
    xs.get(lo..hi)
        .unwrap_or(&[])
        .iter()
        .try_fold(init.clone(), |acc, v| op(&acc, v))
}

/// An inclusive scan in XLA's CPU order. Up to 16 elements, each output is its own window
/// summed forward from `init` (`x[0] ⊕ … ⊕ x[i]`, reversed: `x[i] ⊕ … ⊕ x[n-1]`). Longer:
/// padded with `init` to blocks of 16, each block scanned so, the blocks' totals scanned
/// (recursively, exclusive) and added to each block's elements. Generic over the values (a
/// number, or an array of every lane's element at one position, [`cumlogsumexp_impl`]) and
/// the operation's errors.
fn scan<T: Clone, E, F: Fn(&T, &T) -> Result<T, E>>(
    op: &F,
    x: &[T],
    reverse: bool,
    init: &T,
) -> Result<Vec<T>, E> {
    const B: usize = SCAN_BASE;
    let n = x.len();
    let direct = |xs: &[T], i: usize| -> Result<T, E> {
        let (i, n) = (i as isize, xs.len() as isize);
        if reverse {
            window(op, xs, i, n, init)
        } else {
            window(op, xs, 0, i + 1, init)
        }
    };
    if n <= B {
        return (0..n).map(|i| direct(x, i)).collect();
    }
    let m = n.div_ceil(B);
    let mut padded = x.to_vec();
    padded.resize(m * B, init.clone());
    let blocks: Vec<Vec<T>> = padded
        .chunks(B)
        .map(|b| (0..B).map(|i| direct(b, i)).collect())
        .collect::<Result<_, E>>()?;
    let totals: Vec<T> = blocks
        .iter()
        .map(|b| {
            if reverse {
                b[0].clone()
            } else {
                b[B - 1].clone()
            }
        })
        .collect();
    // The exclusive scan of the totals, m + 1 long.
    let excl: Vec<T> = if m <= B {
        let mi = m as isize;
        (0..=mi)
            .map(|k| {
                if reverse {
                    window(op, &totals, k, k + mi, init)
                } else {
                    window(op, &totals, k - mi, k, init)
                }
            })
            .collect::<Result<_, E>>()?
    } else if reverse {
        let mut t = totals;
        t.push(init.clone());
        scan(op, &t, true, init)?
    } else {
        let mut s = vec![init.clone()];
        s.extend(scan(op, &totals, false, init)?);
        s
    };
    let offsets = if reverse { &excl[1..] } else { &excl[..m] };
    let mut out = Vec::with_capacity(n);
    for (b, o) in blocks.iter().zip(offsets) {
        for v in b {
            if out.len() == n {
                break;
            }
            out.push(op(v, o)?);
        }
    }
    Ok(out)
}

/// The scans of every lane along `axis`.
fn cum_lanes<T: Copy, F: Fn(T, T) -> T>(
    xs: &[T],
    shape: &[usize],
    axis: usize,
    reverse: bool,
    f: &F,
    init: T,
) -> Vec<T> {
    if xs.is_empty() {
        return Vec::new();
    }
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = xs.to_vec();
    let mut lane = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            let at = |t: usize| (o * n + t) * inner + i;
            lane.clear();
            lane.extend((0..n).map(|t| xs[at(t)]));
            let op = |a: &T, b: &T| Ok::<T, std::convert::Infallible>(f(*a, *b));
            let Ok(scanned) = scan(&op, &lane, reverse, &init);
            for (t, v) in scanned.into_iter().enumerate() {
                out[at(t)] = v;
            }
        }
    }
    out
}

fn cum_kernel<T: Reducible>(op: Red, x: &Array, axis: usize, reverse: bool) -> Storage {
    let xs: Vec<T> = elems::<T>(x).collect();
    let init = T::narrow(T::identity(op));
    if super::on_xla() {
        // XLA's simplifier removes a reduce-window of one element (the operand as it is),
        // but not where float16 and bfloat16 compute in float32 behind conversions; other
        // windows add with denormals off.
        let widened = matches!(x.dtype(), DType::Float16 | DType::BFloat16);
        if x.shape()[axis] == 1 && !widened {
            return storage_of(xs.into_iter());
        }
        let f = |a: T, b: T| T::step_xla(op, a, b);
        return storage_of(cum_lanes(&xs, x.shape(), axis, reverse, &f, init).into_iter());
    }
    let f = |a: T, b: T| op.apply(a, b);
    storage_of(cum_lanes(&xs, x.shape(), axis, reverse, &f, init).into_iter())
}

/// Sums and products of the 4-, 6- and 8-bit floats (stored a byte per element): each step
/// decoded to float32, computed, and rounded back to the format as `convert_element_type`
/// rounds (XLA's CPU backend computes them so). `scan`: the axis and direction of a cumulative
/// reduction, else a reduction over `axes`.
fn minifloat_kernel(
    op: Red,
    x: &Array,
    axes: &[usize],
    scan_along: Option<(usize, bool)>,
    out: &ShapedArray,
) -> Result<Array, Error> {
    use crate::convert::{Semantics, decode_f32, encode_f32};
    let t = x.dtype();
    let enc = |v: f32| {
        let mut b = [0u8];
        let _ = encode_f32(Semantics::Jax, t, v, &mut b);
        b[0]
    };
    let dec = |b: u8| decode_f32(t, &[b]).unwrap_or(f32::NAN);
    let f = |a: u8, b: u8| {
        enc(match op {
            Red::Prod => dec(a) * dec(b),
            _ => dec(a) + dec(b),
        })
    };
    let init = enc(if op == Red::Prod { 1.0 } else { 0.0 });
    let xs = x.as_bytes();
    let bytes = match scan_along {
        Some((axis, reverse)) => cum_lanes(xs, x.shape(), axis, reverse, &f, init),
        None if axes.iter().all(|&a| x.shape()[a] == 1) => xs.to_vec(),
        None => tree_reduce(&f, xs.to_vec(), x.shape().to_vec(), axes, init),
    };
    Ok(Array::from_bytes(t, out.shape(), &bytes)?.with_weak_type(out.weak_type()))
}

fn cum_impl<const OP: u8>(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let op = Red::of(OP);
    let x = inputs[0];
    let axis = param_int(params, prim.name, "axis")? as usize;
    let reverse = matches!(params.get("reverse"), Some(Param::Bool(true)));
    let data = with_element!(x.dtype(), T => cum_kernel::<T>(op, x, axis, reverse), {
        if is_minifloat(x.dtype()) && matches!(op, Red::Sum | Red::Prod) {
            let y = minifloat_kernel(op, x, &[], Some((axis, reverse)), &out[0])?;
            return Ok(smallvec::smallvec![y]);
        }
        return via_stand_in(prim, x, params, &out[0], matches!(op, Red::Max | Red::Min));
    });
    Ok(smallvec::smallvec![Array::from_parts(out[0].clone(), data)])
}

macro_rules! cumulative {
    ($($c:ident = $name:literal, $op:ident $(=> { $($rules:tt)* })?;)*) => {$(
        #[doc = concat!("The `", $name, "` primitive.")]
        pub static $c: Primitive = Primitive::new($name, Some(1), cum_shape_rule, cum_impl::<{ Red::$op as u8 }>)
    $($($rules)*)?
    .batch(batching::scan)
    .refuses_float0(float0_refusal::<{ Red::Sum as u8 }>);
    )*};
}

cumulative! {
    CUMSUM = "cumsum", Sum => { .jvp(ad::linear_jvp).transpose(cumsum_transpose) };
    CUMPROD = "cumprod", Prod => { .jvp(cumprod_jvp) };
    CUMMAX = "cummax", Max => { .jvp(cummax_jvp) };
    CUMMIN = "cummin", Min => { .jvp(cummin_jvp) };
}

/// The `cumlogsumexp` primitive: the scan of `lax.logaddexp` in XLA's order (the same windows
/// and blocks as the other cumulative reductions), each step computed by the elementwise
/// primitives on every lane at once.
pub static CUMLOGSUMEXP: Primitive =
    Primitive::new("cumlogsumexp", Some(1), cum_shape_rule, cumlogsumexp_impl)
        .jvp(cumlogsumexp_jvp)
        .batch(batching::scan)
        .refuses_float0(float0_refusal::<{ Red::Sum as u8 }>);

fn cumlogsumexp_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    _out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let x = inputs[0];
    if x.dtype().kind() != Kind::Float {
        return value_error(format!(
            "logaddexp requires floating-point inputs; got {}",
            x.dtype().numpy_name()
        ));
    }
    let axis = param_int(params, prim.name, "axis")? as usize;
    let reverse = matches!(params.get("reverse"), Some(Param::Bool(true)));
    let n = x.shape()[axis];
    let widened = matches!(x.dtype(), DType::Float16 | DType::BFloat16);
    if x.size() == 0 || (n == 1 && super::on_xla() && !widened) {
        return Ok(smallvec::smallvec![x.clone()]);
    }
    // Each position along the axis as an array of every lane's element there.
    let cols: Vec<Array> = (0..n)
        .map(|t| batching::index_in_dim(x, t, axis))
        .collect::<Result<_, _>>()?;
    let init = ops::broadcast_to(&ops::konst(x, f64::NEG_INFINITY)?, cols[0].shape())?;
    let scanned = scan(&super::associative::logaddexp, &cols, reverse, &init)?;
    let p = Params::new().with("dimension", Param::Int(axis as i64));
    let parts: Vec<Array> = scanned
        .iter()
        .map(|c| super::expand_dims(c, &[axis as i64]))
        .collect::<Result<_, _>>()?;
    let refs: Vec<&Array> = parts.iter().collect();
    Ok(smallvec::smallvec![bind1(&super::CONCATENATE, &refs, &p)?])
}

/// `cumprod`'s, `cummax`'s, `cummin`'s and `cumlogsumexp`'s JVPs: JAX's, the JVP of
/// `associative_scan` with the combining function ([`super::associative`]).
fn cumprod_jvp(
    p: &'static Primitive,
    x: &[Array],
    t: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    super::associative::cumulative_jvp(p, Some(&super::MUL), x, t, params)
}

fn cummax_jvp(
    p: &'static Primitive,
    x: &[Array],
    t: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    super::associative::cumulative_jvp(p, Some(&super::MAX), x, t, params)
}

fn cummin_jvp(
    p: &'static Primitive,
    x: &[Array],
    t: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    super::associative::cumulative_jvp(p, Some(&super::MIN), x, t, params)
}

fn cumlogsumexp_jvp(
    p: &'static Primitive,
    x: &[Array],
    t: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    super::associative::cumulative_jvp(p, None, x, t, params)
}

// ---- JVP and transpose rules

/// `reduce_max`/`reduce_min`: each extremal element gets an equal share of the tangent (JAX's
/// chooser rule).
fn chooser_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = ad::primal_out(prim, primals, params)?;
    let Some(t) = tangents[0].clone() else {
        return Ok((out, vec![None]));
    };
    let x = &primals[0];
    // The result broadcast back over the reduced axes.
    let axes: Vec<usize> = match params.get("axes") {
        Some(Param::Ints(v)) => v.iter().map(|&a| a as usize).collect(),
        _ => return Err(ad::not_differentiable(prim)),
    };
    let kept: Vec<i64> = (0..x.ndim())
        .filter(|d| !axes.contains(d))
        .map(|d| d as i64)
        .collect();
    let bparams = Params::new()
        .with(
            "shape",
            Param::Ints(x.shape().iter().map(|&d| d as i64).collect()),
        )
        .with("broadcast_dimensions", Param::Ints(kept))
        .with("sharding", Param::None);
    let yb = bind1(&super::BROADCAST_IN_DIM, &[&out[0]], &bparams)?;
    let loc = ops::convert_like(&ops::eq(x, &yb)?, x)?;
    let sum = |v: &Array| -> Result<Array, Error> {
        let p = Params::new()
            .with(
                "axes",
                Param::Ints(axes.iter().map(|&a| a as i64).collect()),
            )
            .with("out_sharding", Param::None);
        bind1(&REDUCE_SUM, &[v], &p)
    };
    let counts = sum(&loc)?;
    let t = ops::div(&sum(&ops::mul(&t, &loc)?)?, &counts)?;
    Ok((out, vec![Some(t)]))
}

/// `reduce_sum` transposed: the cotangent broadcast back over the reduced axes.
fn reduce_sum_transpose(
    p: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    ad::transpose_first(cts, ins, |ct, a0| {
        let axes = params.usizes(p.name, "axes")?;
        let kept: Vec<usize> = (0..a0.ndim()).filter(|d| !axes.contains(d)).collect();
        let bp = Params::new()
            .with("shape", super::ints(a0.shape().iter().copied()))
            .with("broadcast_dimensions", super::ints(kept))
            .with("sharding", Param::None);
        bind1(&super::BROADCAST_IN_DIM, &[&ct], &bp)
    })
}

/// `cumsum` transposed: the cumulative sum in the other direction.
fn cumsum_transpose(
    p: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    ad::transpose_first(cts, ins, |ct, _| {
        let reverse = matches!(params.get("reverse"), Some(Param::Bool(true)));
        let q = Params::new()
            .with("axis", params.get("axis").cloned().unwrap_or(Param::Int(0)))
            .with("reverse", Param::Bool(!reverse));
        bind1(p, &[&ct], &q)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// XLA's reductions run with denormals off (tests/fixtures/eval): `prod
    /// float32[[1e-40,100.0,100.0],[0.17…,-2.09…,1e+40]]` is NaN (0·inf), `prod
    /// float64[-3.0,5e-324,-9.42]` is 0, `max bfloat16[[1e-40,9.18e-41,-1.0]]` is +0.
    #[test]
    fn reductions_flush_subnormals_as_xla_does() {
        let p = |x: &Array| {
            let axes = Params::new().with("axes", Param::Ints((0..x.ndim() as i64).collect()));
            super::super::bind1(&REDUCE_PROD, &[x], &axes.with("out_sharding", Param::None))
        };
        let x = Array::from_vec(vec![1e-40f32, 100.0, 100.0, 0.173, -2.09, f32::INFINITY]);
        assert!(p(&x).unwrap().to_vec::<f32>().unwrap()[0].is_nan());
        let x = Array::from_vec(vec![-3.0f64, f64::from_bits(1), -9.42]);
        assert_eq!(p(&x).unwrap().to_vec::<f64>().unwrap()[0].to_bits(), 0);
        let b = |v: f32| bf16::from_f32(v);
        let x = Array::from_vec(vec![b(1e-40), bf16::from_bits(1), b(-1.0)]);
        let axes = Params::new()
            .with("axes", Param::Ints(vec![0]))
            .with("out_sharding", Param::None);
        let m = super::super::bind1(&REDUCE_MAX, &[&x], &axes).unwrap();
        assert_eq!(m.to_vec::<bf16>().unwrap()[0].to_bits(), 0);
    }

    /// A loop body's prepared reduction (to one element, at most 32 per reduced dimension)
    /// writes what the implementation returns, bit for bit, under JAX's and NumPy's rules:
    /// float32 and float64 sums, products, maxima and minima over NaNs of both signs, signed
    /// zeros, subnormals and infinities; longer dimensions (XLA's tree) are not prepared.
    #[test]
    fn prepared_reductions_fold_what_the_implementations_return() {
        use crate::core::{Operand, Prepared};
        let vals = [
            1.5,
            -0.0,
            0.0,
            1e-40,
            -2.25,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            3.0e38,
            -1e-310,
            0.1,
            7.0,
        ];
        let mut ran = 0;
        for prim in [&REDUCE_SUM, &REDUCE_PROD, &REDUCE_MAX, &REDUCE_MIN] {
            for d in [DType::Float32, DType::Float64] {
                for (shape, axes) in [
                    (vec![2usize], vec![0i64]),
                    (vec![1], vec![0]),
                    (vec![3, 4], vec![0, 1]),
                    (vec![1, 5], vec![1]),
                    (vec![32], vec![0]),
                    (vec![33], vec![0]),
                    (vec![2, 3], vec![0]),
                ] {
                    for start in 0..vals.len() {
                        let n: usize = shape.iter().product();
                        // Without NaNs too (their order decides which one comes out).
                        let v: Vec<f64> = (0..n)
                            .map(|i| vals[(start + i * 5) % vals.len()])
                            .map(|v| if start % 2 == 1 && v.is_nan() { 2.0 } else { v })
                            .collect();
                        let x = Array::from_shape_vec(&shape, v).unwrap().astype(d).unwrap();
                        let params = Params::new()
                            .with("axes", Param::Ints(axes.clone()))
                            .with("out_sharding", Param::None);
                        let out = prim.abstract_eval(&[x.aval()], &params).unwrap().remove(0);
                        let rule = prim.prepare.expect("a prepare rule");
                        let prepared = rule(prim, &params, &[x.aval().clone()], &out);
                        let Some(k) = prepared else {
                            assert!(out.size() != 1 || n > 32, "{prim} {shape:?}");
                            continue;
                        };
                        assert!(matches!(k, Prepared::Kernel(_)) == (n > 1));
                        for rules in [dtype_lattice::Rules::jax(), dtype_lattice::Rules::numpy()] {
                            crate::config::with_rules(rules, || {
                                let want = crate::core::implement(
                                    prim,
                                    &[&x],
                                    &params,
                                    std::slice::from_ref(&out),
                                )
                                .unwrap();
                                let want = want[0].as_bytes();
                                let mut got = vec![0u64; 1];
                                let got = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut got)
                                    [..want.len()];
                                assert!(k.run(&[Operand::of(&x)], got));
                                assert_eq!(got, want, "{prim} {d} {shape:?} {x:?}");
                                ran += 1;
                            });
                        }
                    }
                }
            }
        }
        assert!(ran > 500, "{ran}");
    }

    /// The windows of XLA's tree reduction written out index by index (the reference the
    /// streaming passes replace).
    fn reference(
        xs: &[u64],
        shape: &[usize],
        axes: &[usize],
        op: &impl Fn(u64, u64) -> u64,
    ) -> Vec<u64> {
        const W: usize = TREE_WINDOW;
        let (mut xs, mut shape) = (xs.to_vec(), shape.to_vec());
        while axes.iter().any(|&a| shape[a] > W) {
            let red = |i: usize| axes.contains(&i);
            let (ns, lo) = window_pass(&shape, axes);
            let window: Vec<usize> = (0..shape.len())
                .map(|i| if red(i) { W } else { 1 })
                .collect();
            let st = strides(&shape);
            let mut out = Vec::new();
            for_each_index(&ns, |o| {
                let mut acc = 7;
                for_each_index(&window, |w| {
                    let mut j = 0;
                    for k in 0..shape.len() {
                        let p = o[k] * window[k] + w[k];
                        if p < lo[k] || p - lo[k] >= shape[k] {
                            return;
                        }
                        j += (p - lo[k]) * st[k];
                    }
                    acc = op(acc, xs[j]);
                });
                out.push(acc);
            });
            xs = out;
            shape = ns;
        }
        let kept: usize = (0..shape.len())
            .filter(|i| !axes.contains(i))
            .map(|i| shape[i])
            .product();
        let mut acc = vec![7; kept];
        let step = out_steps(&shape, axes);
        let mut it = xs.iter();
        for_each_index(&shape, |idx| {
            let o: usize = idx.iter().zip(&step).map(|(i, s)| i * s).sum();
            acc[o] = op(acc[o], *it.next().unwrap());
        });
        acc
    }

    /// With an operation that remembers the order of its operands, the streaming passes fold
    /// every output element's inputs in exactly the reference's order, over shapes with
    /// reduced dimensions below, at and above the window (padded unevenly), leading, inner and
    /// several at once.
    #[test]
    fn streaming_tree_reduction_keeps_xlas_order() {
        let op = |a: u64, b: u64| a.wrapping_mul(1_000_003).wrapping_add(b);
        let cases: &[(&[usize], &[usize])] = &[
            (&[256, 32], &[0]),
            (&[256, 32], &[1]),
            (&[3, 100, 5], &[1]),
            (&[70, 3, 45], &[0, 2]),
            (&[33], &[0]),
            (&[1000], &[0]),
            (&[5, 7], &[0, 1]),
            (&[4, 1, 65], &[2]),
            (&[0, 40], &[1]),
            (&[], &[]),
        ];
        for &(shape, axes) in cases {
            let n: usize = shape.iter().product();
            let xs: Vec<u64> = (0..n as u64).map(|i| i * 2_654_435_761 % 1009).collect();
            let got = tree_reduce(&op, xs.clone(), shape.to_vec(), axes, 7);
            assert_eq!(
                got,
                reference(&xs, shape, axes, &op),
                "{shape:?} over {axes:?}"
            );
        }
    }
}
