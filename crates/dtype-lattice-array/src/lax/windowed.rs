//! Windowed reductions and pooling's gradients, as JAX 0.10.2 defines, prints and computes
//! them on CPU: `reduce_window_sum`, `reduce_window_max`, `reduce_window_min` (windows with
//! strides, `(low, high)` padding, base and window dilation), `select_and_gather_add` (the
//! tangent at each window's selected element: max pooling's JVP) and `select_and_scatter_add`
//! (each window's source value added at its selected element: max pooling's gradient).
//!
//! Order of operations, as XLA's CPU code computes them (so results are bit-exact): a window
//! folds from the reduction's identity over the operand elements it covers in row-major
//! window order, skipping padding and the holes of base dilation (`acc = acc ⊕ x`, XLA's
//! `add`/`max`/`min` with denormals off). `select_and_gather_add` folds pairs `(operand,
//! tangent)` from `(∓inf, 0)`, keeping the accumulator where `ge` (`le`) holds, else taking
//! the element (JAX's variadic reduce-window lowering); `select_and_scatter_add` pads the
//! operand with the identity (JAX's CPU lowering), selects in each window the first element,
//! replaced by a later one wherever `ge` (`le`) of the selected and the later fails, and adds
//! the source values in row-major order into zeros.
//!
//! Rules: JAX's shape rules and messages; `reduce_window_sum` linear (its transpose pads the
//! cotangent and sums windows again), `reduce_window_max`/`min`'s JVP a
//! `select_and_gather_add` of the tangent, the two selecting primitives linear in their first
//! operand and each other's transpose, and the batching rules (a window of one over the
//! batch).

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind};

use super::reduce::{Red, Reducible, elems, stand_in, storage_of};
use super::structural::{param_ints, py_ints, type_error};
use super::{Avals, Outputs, Param, Params, Primitive, bind, bind1};
use crate::array::{Array, ShapedArray, py_shape, with_element};
use crate::core::{BatchDims, Lin};

/// The `reduce_window_sum` primitive (sum and average pooling).
pub static REDUCE_WINDOW_SUM: Primitive = Primitive::new(
    "reduce_window_sum",
    Some(1),
    window_shape_rule::<{ Red::Sum as u8 }>,
    window_impl::<{ Red::Sum as u8 }>,
)
.jvp(super::ad::linear_jvp)
.transpose(sum_transpose)
.batch(window_batch);

/// The `reduce_window_max` primitive (max pooling).
pub static REDUCE_WINDOW_MAX: Primitive = Primitive::new(
    "reduce_window_max",
    Some(1),
    window_shape_rule::<{ Red::Max as u8 }>,
    window_impl::<{ Red::Max as u8 }>,
)
.jvp(chooser_jvp)
.batch(window_batch);

/// The `reduce_window_min` primitive.
pub static REDUCE_WINDOW_MIN: Primitive = Primitive::new(
    "reduce_window_min",
    Some(1),
    window_shape_rule::<{ Red::Min as u8 }>,
    window_impl::<{ Red::Min as u8 }>,
)
.jvp(chooser_jvp)
.batch(window_batch);

/// The `select_and_scatter_add` primitive (`source`, `operand`): max pooling's gradient.
pub static SELECT_AND_SCATTER_ADD: Primitive = Primitive::new(
    "select_and_scatter_add",
    Some(2),
    scatter_shape_rule,
    scatter_impl,
)
.jvp(selecting_jvp)
.transpose(scatter_transpose)
.batch(selecting_batch);

/// The `select_and_gather_add` primitive (`tangents`, `operand`): max pooling's JVP.
pub static SELECT_AND_GATHER_ADD: Primitive = Primitive::new(
    "select_and_gather_add",
    Some(2),
    gather_shape_rule,
    gather_impl,
)
.jvp(selecting_jvp)
.transpose(gather_transpose)
.batch(selecting_batch);

/// A window's geometry: its dimensions, strides, padding and dilations, one entry a
/// dimension of the operand.
#[derive(Clone, Debug, PartialEq)]
struct Geometry {
    dims: Vec<i64>,
    strides: Vec<i64>,
    padding: Vec<(i64, i64)>,
    base: Vec<i64>,
    wdil: Vec<i64>,
}

impl Geometry {
    /// The geometry in `params` (`dilations`: the primitive has dilation parameters).
    fn of(prim: &Primitive, params: &Params, dilations: bool) -> Result<Geometry, Error> {
        let dims = param_ints(params, prim.name, "window_dimensions")?;
        let strides = param_ints(params, prim.name, "window_strides")?;
        let padding = match params.require(prim.name, "padding")? {
            Param::Pairs(p) => p.clone(),
            Param::Ints(v) if v.is_empty() => Vec::new(),
            _ => {
                return Err(super::bad_param(
                    prim.name,
                    "padding",
                    "not (low, high) pairs",
                ));
            }
        };
        let ones = vec![1; dims.len()];
        let (base, wdil) = if dilations {
            (
                param_ints(params, prim.name, "base_dilation")?,
                param_ints(params, prim.name, "window_dilation")?,
            )
        } else {
            (ones.clone(), ones)
        };
        Ok(Geometry {
            dims,
            strides,
            padding,
            base,
            wdil,
        })
    }

    /// The parameters of a primitive of this geometry (`dilations`: with its dilations).
    fn params(&self, dilations: bool) -> Params {
        let p = Params::new()
            .with("window_dimensions", Param::Ints(self.dims.clone()))
            .with("window_strides", Param::Ints(self.strides.clone()))
            .with("padding", Param::Pairs(self.padding.clone()));
        if dilations {
            p.with("base_dilation", Param::Ints(self.base.clone()))
                .with("window_dilation", Param::Ints(self.wdil.clone()))
        } else {
            p
        }
    }

    /// The geometry with a window of one over a new dimension at `at`.
    fn with_batch(&self, at: usize) -> Geometry {
        let ins = |v: &[i64], x: i64| {
            let mut v = v.to_vec();
            v.insert(at.min(v.len()), x);
            v
        };
        let mut padding = self.padding.clone();
        padding.insert(at.min(padding.len()), (0, 0));
        Geometry {
            dims: ins(&self.dims, 1),
            strides: ins(&self.strides, 1),
            padding,
            base: ins(&self.base, 1),
            wdil: ins(&self.wdil, 1),
        }
    }

    /// JAX's checks of the geometry against an operand of rank `ndim` (`what`: the name in
    /// the messages).
    fn check(&self, what: &str, shape: &[usize]) -> Result<(), Error> {
        let shapelike = |name: &str, v: &[i64], positive: bool| -> Result<(), Error> {
            if v.iter().any(|&d| d < 0 || (positive && d == 0)) {
                let what_kind = if positive { "positive" } else { "nonnegative" };
                return type_error(format!(
                    "{what} {name} must have every element be {what_kind}, got {}.",
                    py_ints(v)
                ));
            }
            Ok(())
        };
        shapelike("window_dimensions", &self.dims, true)?;
        shapelike("window_strides", &self.strides, true)?;
        shapelike("base_dilation", &self.base, true)?;
        shapelike("window_dilation", &self.wdil, true)?;
        let wd = py_ints(&self.dims);
        if shape.len() != self.dims.len() {
            return type_error(format!(
                "{what} got the wrong number of window_dimensions for operand: got operand \
                 shape {} with window_dimensions {wd}.",
                py_shape(shape)
            ));
        }
        for (name, v) in [
            ("window_strides", &self.strides),
            ("base_dilation", &self.base),
            ("window_dilation", &self.wdil),
        ] {
            if v.len() != self.dims.len() {
                return type_error(format!(
                    "{what} got inconsistent {name} and window_dimensions: got {name} {} and \
                     window_dimensions {wd}.",
                    py_ints(v)
                ));
            }
        }
        if self.padding.len() != self.dims.len() {
            return type_error(format!(
                "{what} got a padding of {} pairs for window_dimensions {wd}.",
                self.padding.len()
            ));
        }
        Ok(())
    }

    /// The result's shape over an operand of `shape` (JAX's `reduce_window_shape_tuple`).
    fn out_shape(&self, shape: &[usize]) -> Result<Vec<usize>, Error> {
        let dilate = |d: i64, k: i64| if d == 0 { 0 } else { 1 + k * (d - 1) };
        shape
            .iter()
            .enumerate()
            .map(|(d, &n)| {
                let padded = dilate(n as i64, self.base[d])
                    .checked_add(self.padding[d].0)
                    .and_then(|p| p.checked_add(self.padding[d].1))
                    .ok_or_else(|| crate::array::invalid("padding", "too large"))?;
                let w = dilate(self.dims[d], self.wdil[d]);
                Ok(if padded < w {
                    0
                } else {
                    ((padded - w) / self.strides[d] + 1) as usize
                })
            })
            .collect()
    }
}

/// Calls `f(o, window)` for every result position `o` (row-major), `window` the flat indices
/// of the operand elements its window covers, in row-major window order (padding and the holes of base dilation
/// left out).
fn for_each_window(
    g: &Geometry,
    in_shape: &[usize],
    out_shape: &[usize],
    mut f: impl FnMut(usize, &[usize]),
) {
    let nd = in_shape.len();
    let mut in_strides = vec![1usize; nd];
    for d in (0..nd.saturating_sub(1)).rev() {
        in_strides[d] = in_strides[d + 1] * in_shape[d + 1];
    }
    let dims: Vec<usize> = g.dims.iter().map(|&w| w as usize).collect();
    // For each dimension, result coordinate and window offset: the element's flat
    // contribution, or none.
    let table: Vec<Vec<Option<usize>>> = (0..nd)
        .map(|d| {
            let dilated = if in_shape[d] == 0 {
                0
            } else {
                1 + g.base[d] * (in_shape[d] as i64 - 1)
            };
            let mut v = Vec::with_capacity(out_shape[d] * dims[d]);
            for o in 0..out_shape[d] as i64 {
                for k in 0..g.dims[d] {
                    let p = o * g.strides[d] + k * g.wdil[d] - g.padding[d].0;
                    v.push(
                        (p >= 0 && p < dilated && p % g.base[d] == 0)
                            .then(|| (p / g.base[d]) as usize * in_strides[d]),
                    );
                }
            }
            v
        })
        .collect();
    let total: usize = out_shape.iter().product();
    let wsize: usize = dims.iter().product();
    if total == 0 {
        return;
    }
    // No padding and no dilation: every window lies inside, at a fixed pattern of offsets
    // from its first element.
    if g.padding.iter().all(|&p| p == (0, 0))
        && g.base.iter().all(|&b| b == 1)
        && g.wdil.iter().all(|&w| w == 1)
    {
        let mut deltas = Vec::with_capacity(wsize);
        let mut kc = vec![0usize; nd];
        for _ in 0..wsize {
            deltas.push(
                kc.iter()
                    .zip(&in_strides)
                    .map(|(k, s)| k * s)
                    .sum::<usize>(),
            );
            odometer(&mut kc, &dims);
        }
        let steps: Vec<usize> = (0..nd)
            .map(|d| g.strides[d] as usize * in_strides[d])
            .collect();
        let mut oc = vec![0usize; nd];
        let mut base = 0usize;
        let mut window = vec![0usize; wsize];
        for o in 0..total {
            for (w, &dl) in window.iter_mut().zip(&deltas) {
                *w = base + dl;
            }
            f(o, &window);
            // Advance the result's multi-index and the window's first element with it.
            for d in (0..nd).rev() {
                oc[d] += 1;
                base += steps[d];
                if oc[d] < out_shape[d] {
                    break;
                }
                base -= steps[d] * oc[d];
                oc[d] = 0;
            }
        }
        return;
    }
    let mut oc = vec![0usize; nd];
    let mut kc = vec![0usize; nd];
    let mut window = Vec::with_capacity(wsize);
    for o in 0..total {
        window.clear();
        kc.iter_mut().for_each(|k| *k = 0);
        for _ in 0..wsize {
            let mut flat = 0;
            let mut inside = true;
            for d in 0..nd {
                match table[d][oc[d] * dims[d] + kc[d]] {
                    Some(c) => flat += c,
                    None => {
                        inside = false;
                        break;
                    }
                }
            }
            if inside {
                window.push(flat);
            }
            odometer(&mut kc, &dims);
        }
        f(o, &window);
        odometer(&mut oc, out_shape);
    }
}

/// Advances a row-major multi-index.
fn odometer(c: &mut [usize], shape: &[usize]) {
    for d in (0..c.len()).rev() {
        c[d] += 1;
        if c[d] < shape[d] {
            return;
        }
        c[d] = 0;
    }
}

fn window_shape_rule<const OP: u8>(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let x = inputs[0];
    let d = x.dtype();
    let ok = match Red::of(OP) {
        Red::Sum => matches!(
            d.kind(),
            Kind::SignedInt | Kind::UnsignedInt | Kind::Float | Kind::Complex
        ),
        _ => !matches!(d.kind(), Kind::Extended | Kind::Void),
    };
    if !ok {
        return type_error(format!(
            "operand to {} must have a number dtype, got {}",
            prim.name,
            d.numpy_name()
        ));
    }
    let g = Geometry::of(prim, params, true)?;
    g.check("reduce_window", x.shape())?;
    let shape = g.out_shape(x.shape())?;
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        d,
        x.weak_type()
    )])
}

/// Every window folded by `op` from its identity, as XLA's CPU code folds it.
fn fold_kernel<T: Reducible>(
    op: Red,
    x: &Array,
    g: &Geometry,
    out: &[usize],
) -> crate::array::Storage {
    let xs: Vec<T> = elems::<T>(x).collect();
    let init = T::narrow(T::identity(op));
    let xla = super::on_xla();
    let mut res = vec![init; out.iter().product()];
    // XLA's simplifier removes a reduction over windows of one element: each result is the
    // element itself (a -0.0 stays), or the identity where the window lies in padding.
    let single = xla && g.dims.iter().all(|&d| d == 1);
    for_each_window(g, x.shape(), out, |o, w| {
        if single {
            if let Some(&i) = w.first() {
                res[o] = xs[i];
            }
            return;
        }
        let mut acc = init;
        for &i in w {
            acc = if xla {
                T::step_xla(op, acc, xs[i])
            } else {
                op_apply(op, acc, xs[i])
            };
        }
        res[o] = acc;
    });
    storage_of(res.into_iter())
}

fn op_apply<T: Reducible>(op: Red, a: T, b: T) -> T {
    match op {
        Red::Sum => a.add(b),
        Red::Max => a.max(b),
        _ => a.min(b),
    }
}

fn not_implemented(prim: &Primitive, d: DType) -> Error {
    Error::refused(
        Exception::NotImplementedError,
        format!("{} is not implemented for dtype {d}", prim.name),
    )
}

fn window_impl<const OP: u8>(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let op = Red::of(OP);
    let x = inputs[0];
    let g = Geometry::of(prim, params, true)?;
    let shape = out[0].shape();
    let data = with_element!(x.dtype(), T => fold_kernel::<T>(op, x, &g, shape), {
        // The narrow floats compare exactly in float32; the narrow integers wrap as 8-bit.
        let Some(wide) = stand_in(x.dtype(), op != Red::Sum) else {
            return Err(not_implemented(prim, x.dtype()));
        };
        let y = bind1(prim, &[&x.astype(wide)?], params)?;
        return Ok(smallvec::smallvec![y.astype(out[0].dtype())?.with_weak_type(out[0].weak_type())]);
    });
    Ok(smallvec::smallvec![Array::from_parts(out[0].clone(), data)])
}

/// `reduce_window_sum` transposed (JAX's `_reduce_window_sum_transpose_rule`): the cotangent
/// padded (between its elements by the stride, at its ends by the convolution transpose's
/// padding) and summed over windows of the same size, strided by the base dilation.
fn sum_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    super::ad::transpose_first(cts, ins, |ct, aval| {
        let g = Geometry::of(prim, params, true)?;
        let dilate = |d: i64, k: i64| if d == 0 { 0 } else { 1 + k * (d - 1) };
        let cfg: Vec<(i64, i64, i64)> = (0..aval.ndim())
            .map(|d| {
                let lhs = dilate(aval.shape()[d] as i64, g.base[d]);
                let rhs = dilate(g.dims[d], g.wdil[d]);
                let out = dilate(ct.shape()[d] as i64, g.strides[d]);
                let before = rhs - g.padding[d].0 - 1;
                let after = lhs + rhs - 1 - out - before;
                (before, after, g.strides[d] - 1)
            })
            .collect();
        let zero = super::ops::konst(&ct, 0.0)?;
        let padded = bind1(
            &super::PAD,
            &[&ct, &zero],
            &Params::new().with("padding_config", Param::Padding(cfg)),
        )?;
        let ones = vec![1; aval.ndim()];
        let again = Geometry {
            dims: g.dims.clone(),
            strides: g.base.clone(),
            padding: vec![(0, 0); aval.ndim()],
            base: ones,
            wdil: g.wdil.clone(),
        };
        bind1(prim, &[&padded], &again.params(true))
    })
}

/// `reduce_window_max`'s and `reduce_window_min`'s JVP (JAX's chooser rule): the tangent at
/// each window's selected element, `select_and_gather_add` with `ge` (`le`).
fn chooser_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = super::ad::primal_out(prim, primals, params)?;
    let Some(t) = tangents[0].as_ref() else {
        return Ok((out, vec![None]));
    };
    let select = if prim.name == "reduce_window_max" {
        "ge"
    } else {
        "le"
    };
    let g = Geometry::of(prim, params, true)?;
    let p = g
        .params(true)
        .with("select_prim", Param::Name(select.into()));
    let t = bind1(&SELECT_AND_GATHER_ADD, &[t, &primals[0]], &p)?;
    Ok((out, vec![Some(t)]))
}

/// The windowed reductions' batching rule: a window of one over the batch dimension.
fn window_batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let b = super::batching::first_bdim(dims)?;
    let g = Geometry::of(prim, params, true)?.with_batch(b);
    Ok((bind(prim, &[&args[0]], &g.params(true))?, vec![Some(b)]))
}

// ---- select_and_scatter_add and select_and_gather_add

/// `select_prim` (`ge` or `le`).
fn select_is_ge(prim: &Primitive, params: &Params) -> Result<bool, Error> {
    match params.require(prim.name, "select_prim")? {
        Param::Name(n) if n == "ge" => Ok(true),
        Param::Name(n) if n == "le" => Ok(false),
        _ => Err(super::bad_param(prim.name, "select_prim", "not ge or le")),
    }
}

/// The selecting primitives' refusal of a first operand (`what`) of another dtype than the
/// operand's.
fn one_dtype(prim: &Primitive, what: &str, a: &Array, x: &Array) -> Result<(), Error> {
    if a.dtype() == x.dtype() {
        return Ok(());
    }
    type_error(format!(
        "{} takes {what} and operand of one dtype, got {} and {}",
        prim.name,
        a.dtype(),
        x.dtype()
    ))
}

/// `ge(a, b)` (`le`) as XLA's CPU code compares: denormals off, false with a NaN.
#[inline]
fn selects<T: Reducible>(ge: bool, a: T, b: T, xla: bool) -> bool {
    let (a, b) = if xla { (a.daz(), b.daz()) } else { (a, b) };
    if a.is_nan() || b.is_nan() {
        return false;
    }
    if ge { !a.lt(b) } else { !b.lt(a) }
}

fn gather_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let (t, x) = (inputs[0], inputs[1]);
    if t.shape() != x.shape() {
        return type_error(format!(
            "select_and_gather_add tangents and operand shapes must match, got {} and {}.",
            py_shape(t.shape()),
            py_shape(x.shape())
        ));
    }
    select_is_ge(prim, params)?;
    let g = Geometry::of(prim, params, true)?;
    g.check("reduce_window", x.shape())?;
    let shape = g.out_shape(x.shape())?;
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        t.dtype(),
        t.weak_type()
    )])
}

fn gather_kernel<T: Reducible>(
    ge: bool,
    t: &Array,
    x: &Array,
    g: &Geometry,
    out: &[usize],
) -> crate::array::Storage {
    let ts: Vec<T> = elems::<T>(t).collect();
    let xs: Vec<T> = elems::<T>(x).collect();
    let init_k = T::narrow(T::identity(if ge { Red::Max } else { Red::Min }));
    let zero = T::narrow(T::identity(Red::Sum));
    let xla = super::on_xla();
    let mut res = vec![zero; out.iter().product()];
    for_each_window(g, x.shape(), out, |o, w| {
        let (mut k, mut v) = (init_k, zero);
        for &i in w {
            if !selects(ge, k, xs[i], xla) {
                (k, v) = (xs[i], ts[i]);
            }
        }
        res[o] = v;
    });
    storage_of(res.into_iter())
}

fn gather_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let (t, x) = (inputs[0], inputs[1]);
    one_dtype(prim, "tangents", t, x)?;
    let ge = select_is_ge(prim, params)?;
    let g = Geometry::of(prim, params, true)?;
    let shape = out[0].shape();
    let data = with_element!(x.dtype(), T => gather_kernel::<T>(ge, t, x, &g, shape), {
        return Err(not_implemented(prim, x.dtype()));
    });
    Ok(smallvec::smallvec![Array::from_parts(out[0].clone(), data)])
}

fn scatter_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let (s, x) = (inputs[0], inputs[1]);
    select_is_ge(prim, params)?;
    let g = Geometry::of(prim, params, false)?;
    g.check("select_and_scatter", x.shape())?;
    let want = g.out_shape(x.shape())?;
    if s.shape() != want.as_slice() {
        return type_error(format!(
            "select_and_scatter_add source shape {} does not match the windows' shape {} \
             of operand shape {}",
            py_shape(s.shape()),
            py_shape(&want),
            py_shape(x.shape())
        ));
    }
    Ok(smallvec::smallvec![ShapedArray::new(
        x.shape(),
        s.dtype(),
        s.weak_type()
    )])
}

fn scatter_kernel<T: Reducible>(
    ge: bool,
    s: &Array,
    x: &Array,
    g: &Geometry,
) -> crate::array::Storage {
    let ss: Vec<T> = elems::<T>(s).collect();
    let xs: Vec<T> = elems::<T>(x).collect();
    let xla = super::on_xla();
    let shape = x.shape();
    let nd = shape.len();
    // The operand padded with the selection's identity (JAX's CPU lowering).
    let fill = T::narrow(T::identity(if ge { Red::Max } else { Red::Min }));
    let pshape: Vec<usize> = (0..nd)
        .map(|d| (shape[d] as i64 + g.padding[d].0 + g.padding[d].1).max(0) as usize)
        .collect();
    let ptotal: usize = pshape.iter().product();
    let unpadded = g.padding.iter().all(|&p| p == (0, 0));
    let mut padded = if unpadded {
        xs.clone()
    } else {
        vec![fill; ptotal]
    };
    let mut c = vec![0usize; nd];
    let inside = |c: &[usize]| -> Option<usize> {
        let mut flat = 0usize;
        for d in 0..nd {
            let i = c[d] as i64 - g.padding[d].0;
            if i < 0 || i >= shape[d] as i64 {
                return None;
            }
            flat = flat * shape[d] + i as usize;
        }
        Some(flat)
    };
    for p in padded.iter_mut().filter(|_| !unpadded) {
        if let Some(i) = inside(&c) {
            *p = xs[i];
        }
        odometer(&mut c, &pshape);
    }
    let flat_geometry = Geometry {
        padding: vec![(0, 0); nd],
        ..g.clone()
    };
    let zero = T::narrow(T::identity(Red::Sum));
    let mut acc = vec![zero; ptotal];
    let src_shape = s.shape().to_vec();
    for_each_window(&flat_geometry, &pshape, &src_shape, |o, w| {
        let Some((&first, rest)) = w.split_first() else {
            return;
        };
        let mut sel = first;
        for &i in rest {
            if !selects(ge, padded[sel], padded[i], xla) {
                sel = i;
            }
        }
        acc[sel] = if xla {
            T::step_xla(Red::Sum, acc[sel], ss[o])
        } else {
            acc[sel].add(ss[o])
        };
    });
    // The operand's part of the padded result.
    if unpadded {
        return storage_of(acc.into_iter());
    }
    let mut res = vec![zero; xs.len()];
    let mut c = vec![0usize; nd];
    for r in res.iter_mut() {
        let mut flat = 0usize;
        let mut ok = true;
        for d in 0..nd {
            let p = c[d] as i64 + g.padding[d].0;
            if p < 0 || p >= pshape[d] as i64 {
                ok = false;
                break;
            }
            flat = flat * pshape[d] + p as usize;
        }
        if ok {
            *r = acc[flat];
        }
        odometer(&mut c, shape);
    }
    storage_of(res.into_iter())
}

fn scatter_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let (s, x) = (inputs[0], inputs[1]);
    one_dtype(prim, "source", s, x)?;
    let ge = select_is_ge(prim, params)?;
    let g = Geometry::of(prim, params, false)?;
    let data = with_element!(x.dtype(), T => scatter_kernel::<T>(ge, s, x, &g), {
        return Err(not_implemented(prim, x.dtype()));
    });
    Ok(smallvec::smallvec![Array::from_parts(out[0].clone(), data)])
}

/// The selecting primitives are linear in their first operand: the JVP is the primitive on
/// its tangent.
fn selecting_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = super::ad::primal_out(prim, primals, params)?;
    let t = match &tangents[0] {
        Some(t) => Some(bind1(prim, &[t, &primals[1]], params)?),
        None => None,
    };
    Ok((out, vec![t]))
}

/// The operand of a selecting primitive's transpose (known), or JAX's error.
fn known_operand<'a>(prim: &Primitive, ins: &'a [Lin]) -> Result<&'a Array, Error> {
    match ins.get(1) {
        Some(Lin::Known(x)) => Ok(x),
        _ => Err(Error::refused(
            Exception::NotImplementedError,
            format!("{}'s transpose needs a known operand", prim.name),
        )),
    }
}

/// `select_and_scatter_add` transposed in its source: `select_and_gather_add` of the
/// cotangent.
fn scatter_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts[0].as_ref() else {
        return Ok(vec![None, None]);
    };
    let x = known_operand(prim, ins)?;
    let g = Geometry::of(prim, params, false)?;
    let p = g.params(true).with(
        "select_prim",
        params.require(prim.name, "select_prim")?.clone(),
    );
    Ok(vec![
        Some(bind1(&SELECT_AND_GATHER_ADD, &[ct, x], &p)?),
        None,
    ])
}

/// `select_and_gather_add` transposed in its tangents (JAX's rule): `select_and_scatter_add`
/// of the cotangent, over the operand dilated by the base dilation (filled with the
/// selection's identity) and strided back; window dilation is JAX's `NotImplementedError`.
fn gather_transpose(
    prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts[0].as_ref() else {
        return Ok(vec![None, None]);
    };
    let x = known_operand(prim, ins)?;
    let g = Geometry::of(prim, params, true)?;
    if g.wdil.iter().any(|&d| d != 1) {
        return Err(Error::refused(
            Exception::NotImplementedError,
            format!(
                "VJP not implemented for select_and_gather (MaxPool) with window dilation, \
                 got window_dilation={}.",
                py_ints(&g.wdil)
            ),
        ));
    }
    let ge = select_is_ge(prim, params)?;
    let dilated = g.base.iter().any(|&d| d != 1);
    let operand = if dilated {
        let fill = identity_of(x, ge)?;
        let cfg: Vec<(i64, i64, i64)> = g.base.iter().map(|&d| (0, 0, d - 1)).collect();
        bind1(
            &super::PAD,
            &[x, &fill],
            &Params::new().with("padding_config", Param::Padding(cfg)),
        )?
    } else {
        x.clone()
    };
    let p = g.params(false).with(
        "select_prim",
        params.require(prim.name, "select_prim")?.clone(),
    );
    let r = bind1(&SELECT_AND_SCATTER_ADD, &[ct, &operand], &p)?;
    let r = if dilated {
        let lo = vec![0; r.ndim()];
        let st: Vec<usize> = g.base.iter().map(|&d| d as usize).collect();
        super::ad::slice(&r, &lo, r.shape(), Some(&st))?
    } else {
        r
    };
    Ok(vec![Some(r), None])
}

/// The identity of `max` (`ge`) or `min` as a scalar of `x`'s dtype (JAX's
/// `_get_max_identity`: `-inf`, the lowest finite value of formats without infinities, the
/// lowest integer).
fn identity_of(x: &Array, ge: bool) -> Result<Array, Error> {
    let d = x.dtype();
    let v = match (d.float_format(), d.int_range()) {
        (Some(f), _) if f.has_inf => f64::INFINITY,
        (Some(f), _) => f.max,
        (None, Some((lo, hi))) => {
            if ge {
                -(lo as f64)
            } else {
                hi as f64
            }
        }
        (None, None) => 0.0,
    };
    crate::array::scalar(if ge { -v } else { v }, d)
}

/// The selecting primitives' batching rule (JAX's): both operands batched at the front, a
/// window of one over the batch.
fn selecting_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    use super::batching::bdim_at_front;
    let a = bdim_at_front(&args[0], dims[0], size)?;
    let x = bdim_at_front(&args[1], dims[1], size)?;
    let dilations = prim.name == "select_and_gather_add";
    let g = Geometry::of(prim, params, dilations)?.with_batch(0);
    let p = g.params(dilations).with(
        "select_prim",
        params.require(prim.name, "select_prim")?.clone(),
    );
    Ok((bind(prim, &[&a, &x], &p)?, vec![Some(0)]))
}

// ---- reduce_window (a jaxpr's reduction)

/// The generic `reduce_window` primitive (`lax.reduce_window` with a computation other than
/// `add`, `max` and `min` from their identities): `n` operands and `n` scalar initial values,
/// each window folded by the closed jaxpr `jaxpr` (`(acc…, x…) -> acc…`) from the initial
/// values in row-major window order, as XLA's CPU code folds it. Not differentiable here.
pub static REDUCE_WINDOW: Primitive =
    Primitive::new("reduce_window", None, generic_shape_rule, generic_impl).batch(generic_batch);

fn generic_jaxpr(
    prim: &Primitive,
    params: &Params,
) -> Result<std::sync::Arc<crate::core::ClosedJaxpr>, Error> {
    match params.require(prim.name, "jaxpr")? {
        Param::Jaxpr(j) => Ok(j.clone()),
        _ => Err(super::bad_param(prim.name, "jaxpr", "not a jaxpr")),
    }
}

fn generic_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let n = inputs.len() / 2;
    if n == 0 || !inputs.len().is_multiple_of(2) {
        return type_error("reduce_window takes operands and as many init_values".into());
    }
    let (ops, inits) = inputs.split_at(n);
    if ops.iter().zip(inits).any(|(o, i)| o.dtype() != i.dtype()) {
        let names = |v: &[&ShapedArray]| {
            let d: Vec<String> = v
                .iter()
                .map(|a| format!("dtype('{}')", a.dtype()))
                .collect();
            format!("[{}]", d.join(", "))
        };
        return type_error(format!(
            "reduce_window got inconsistent dtypes for operands and init_values: got operand \
             dtypes {} and init_value dtypes {}.",
            names(ops),
            names(inits)
        ));
    }
    if inits.iter().any(|i| i.ndim() != 0) {
        let shapes: Vec<String> = inits.iter().map(|i| py_shape(i.shape())).collect();
        return type_error(format!(
            "reduce_window expected init_values to be scalars but init_values have shapes [{}].",
            shapes.join(", ")
        ));
    }
    if ops.iter().any(|o| o.shape() != ops[0].shape()) {
        return type_error("reduce_window operands must have one shape".into());
    }
    generic_jaxpr(prim, params)?;
    let g = Geometry::of(prim, params, true)?;
    g.check("reduce_window", ops[0].shape())?;
    let shape = g.out_shape(ops[0].shape())?;
    Ok(ops
        .iter()
        .map(|o| ShapedArray::new(&shape, o.dtype(), o.weak_type()))
        .collect())
}

fn generic_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let n = inputs.len() / 2;
    let (ops, inits) = inputs.split_at(n);
    let f = generic_jaxpr(prim, params)?;
    let g = Geometry::of(prim, params, true)?;
    let widths: Vec<usize> = ops
        .iter()
        .map(|o| crate::array::element_bytes(o.dtype()))
        .collect();
    let mut bytes: Vec<Vec<u8>> = out
        .iter()
        .zip(&widths)
        .map(|(a, w)| Vec::with_capacity(a.size() * w))
        .collect();
    let mut failure = None;
    for_each_window(&g, ops[0].shape(), out[0].shape(), |_, w| {
        if failure.is_some() {
            return;
        }
        let mut acc: Vec<Array> = inits.iter().map(|&i| i.clone()).collect();
        for &i in w {
            let mut args = acc.clone();
            for (o, &wd) in ops.iter().zip(&widths) {
                let b = &o.as_bytes()[i * wd..(i + 1) * wd];
                match Array::from_bytes(o.dtype(), &[], b) {
                    Ok(x) => args.push(x),
                    Err(e) => {
                        failure = Some(e);
                        return;
                    }
                }
            }
            match f.call(&args) {
                Ok(next) if next.len() == n => acc = next,
                Ok(_) => {
                    failure = Some(Error::refused(
                        Exception::TypeError,
                        "reduce_window's jaxpr returns the wrong number of values",
                    ));
                    return;
                }
                Err(e) => {
                    failure = Some(e);
                    return;
                }
            }
        }
        for (b, a) in bytes.iter_mut().zip(&acc) {
            b.extend_from_slice(a.as_bytes());
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    out.iter()
        .zip(&bytes)
        .map(|(a, b)| Ok(Array::from_bytes(a.dtype(), a.shape(), b)?.with_weak_type(a.weak_type())))
        .collect()
}

/// JAX's `_generic_reduce_window_batch_rule`: operands batched at the front, a window of one
/// over the batch (batched initial values are JAX's `NotImplementedError`).
fn generic_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let n = args.len() / 2;
    if dims[n..].iter().any(Option::is_some) {
        return Err(Error::refused(
            Exception::NotImplementedError,
            "reduce_window batching is not implemented for initial values",
        ));
    }
    let mut moved = Vec::with_capacity(args.len());
    for (a, d) in args[..n].iter().zip(dims) {
        moved.push(super::batching::bdim_at_front(a, *d, size)?);
    }
    moved.extend(args[n..].iter().cloned());
    let g = Geometry::of(prim, params, true)?.with_batch(0);
    let mut p = g.params(true);
    for key in ["jaxpr", "consts"] {
        if let Some(v) = params.get(key) {
            p = p.with(key, v.clone());
        }
    }
    let refs: Vec<&Array> = moved.iter().collect();
    Ok((bind(prim, &refs, &p)?, vec![Some(0); n]))
}
