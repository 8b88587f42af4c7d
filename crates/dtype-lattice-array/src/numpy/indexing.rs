//! NumPy indexing as `jax.numpy` builds it on the primitives (JAX 0.10.2,
//! `jax/_src/numpy/indexing.py` and `jax/_src/ops/scatter.py`): `x[idx]` ([`index`]), the
//! `.at[idx]` updates ([`At`], [`IndexUpdate`]), [`take`] and [`take_along_axis`].
//!
//! `x[idx]` tries what JAX tries, in JAX's order: static slicing (`slice`, `rev`, `squeeze`,
//! `broadcast_in_dim`) when every index is a static integer in bounds, a slice, `None` or an
//! ellipsis; then `dynamic_slice` when the integers are scalars (static ones out of bounds, or
//! 0-d arrays: clamped, as XLA clamps) and the slices' steps are ±1; else one `gather`, with
//! the dimension numbers JAX's `_index_to_gather` computes (integer arrays broadcast
//! together; adjacent advanced indices keep their place, separated ones go first; boolean
//! masks become the integer arrays of their nonzero elements, which needs a concrete mask:
//! JAX's `NonConcreteBooleanIndexError` under `jit`/`make_jaxpr`). Negative indices wrap
//! (`select_n(i < 0, i, i + n)`); a gather's default mode is `PROMISE_IN_BOUNDS` (XLA clamps),
//! an update's `FILL_OR_DROP` (out-of-bound updates dropped).

use std::str::FromStr;

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Value};

use super::{ArrayLike, broadcast_shapes};
use crate::array::{Array, py_shape, scalar_array};
use crate::config::{default_int, rules};
use crate::core::{GatherDimensionNumbers, Param, Params, PyNumber, ScatterDimensionNumbers};
use crate::lax::{self, bind1};

/// One index of [`index`] and [`At::at`]: as in `x[i, 1:3, None, ..., mask]`.
///
/// Integer arrays index together (broadcast against each other, as NumPy's advanced
/// indexing), a boolean array selects its nonzero elements (it must be concrete), a 0-d
/// boolean array adds an axis of size 1 (`True`) or 0 (`False`).
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, numpy::Index, Array};
/// let x = Array::from_shape_vec(&[2, 3], vec![0i32, 1, 2, 3, 4, 5])?;
/// let rows = Array::from_vec(vec![1i32, 0]);
/// let cols = Array::from_shape_vec(&[2, 1], vec![2i32, 0])?;
/// // x[rows, cols]: the index arrays broadcast to shape (2, 2).
/// let y = jnp::index(&x, &[rows.into(), cols.into()])?;
/// assert_eq!((y.shape(), y.to_vec::<i32>()?), (&[2usize, 2][..], vec![5, 2, 3, 0]));
/// // x[None, ..., ::2]
/// let z = jnp::index(&x, &[Index::NewAxis, Index::Ellipsis, Index::Slice(None, None, 2)])?;
/// assert_eq!(z.shape(), &[1, 2, 2]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Index {
    /// `x[i]`, a Python integer (negative counts from the end): the axis goes away.
    At(isize),
    /// `x[start:stop:step]` (Python's slice semantics; `None` is the default).
    Slice(Option<isize>, Option<isize>, isize),
    /// `x[None]`, `x[:, jnp.newaxis]`: a new axis of size 1 at this place of the result.
    NewAxis,
    /// `x[...]`: as many whole axes as the other indices leave.
    Ellipsis,
    /// An integer array (advanced indexing; a 0-d one indexes as an integer that may be
    /// traced) or a boolean array (a mask).
    Array(Array),
}

impl Index {
    /// `:`, the whole axis.
    pub const ALL: Index = Index::Slice(None, None, 1);
}

impl From<Array> for Index {
    fn from(a: Array) -> Index {
        Index::Array(a)
    }
}

impl From<&Array> for Index {
    fn from(a: &Array) -> Index {
        Index::Array(a.clone())
    }
}

impl From<isize> for Index {
    fn from(i: isize) -> Index {
        Index::At(i)
    }
}

/// How indices out of bounds are handled (JAX's `mode` strings, `GatherScatterMode`).
///
/// ```
/// use dtype_lattice_array::numpy::IndexMode;
/// assert_eq!("clip".parse::<IndexMode>()?, IndexMode::Clip);
/// assert!("nearest".parse::<IndexMode>().is_err());
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IndexMode {
    /// `"clip"`: indices clamped so that the slice lies in bounds.
    Clip,
    /// `"fill"`: a gather gives `fill_value` for out-of-bound indices (an update drops them).
    Fill,
    /// `"drop"`: the same as `"fill"`.
    Drop,
    /// `"promise_in_bounds"`: the caller promises indices in bounds (XLA clamps a gather and
    /// drops an update).
    PromiseInBounds,
    /// `"wrap"` (`take` only): indices taken modulo the axis size.
    Wrap,
    /// `"raise"` (`take` only, which JAX does not support).
    Raise,
}

impl IndexMode {
    /// The mode as JAX spells it.
    ///
    /// ```
    /// use dtype_lattice_array::numpy::IndexMode;
    /// assert_eq!(IndexMode::PromiseInBounds.name(), "promise_in_bounds");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            IndexMode::Clip => "clip",
            IndexMode::Fill => "fill",
            IndexMode::Drop => "drop",
            IndexMode::PromiseInBounds => "promise_in_bounds",
            IndexMode::Wrap => "wrap",
            IndexMode::Raise => "raise",
        }
    }
}

impl std::fmt::Display for IndexMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for IndexMode {
    type Err = Error;

    /// # Errors
    ///
    /// JAX's `ValueError` (`Unknown gather mode "…"`) for another name.
    fn from_str(s: &str) -> Result<IndexMode, Error> {
        Ok(match s {
            "clip" => IndexMode::Clip,
            "fill" => IndexMode::Fill,
            "drop" => IndexMode::Drop,
            "promise_in_bounds" => IndexMode::PromiseInBounds,
            "wrap" => IndexMode::Wrap,
            "raise" => IndexMode::Raise,
            _ => return Err(unknown_mode(s)),
        })
    }
}

fn unknown_mode(s: &str) -> Error {
    Error::refused(
        Exception::ValueError,
        format!("Unknown gather mode \"{s}\""),
    )
}

/// The primitive's mode (`GatherScatterMode.from_any`); `None` is `default`.
fn gs_mode(
    mode: Option<IndexMode>,
    default: lax::gather::Mode,
) -> Result<lax::gather::Mode, Error> {
    use lax::gather::Mode;
    match mode {
        None => Ok(default),
        Some(IndexMode::Clip) => Ok(Mode::Clip),
        Some(IndexMode::Fill | IndexMode::Drop) => Ok(Mode::FillOrDrop),
        Some(IndexMode::PromiseInBounds) => Ok(Mode::PromiseInBounds),
        Some(m) => Err(unknown_mode(m.name())),
    }
}

fn index_error(msg: impl Into<String>) -> Error {
    Error::refused(Exception::IndexError, msg)
}

fn type_error(msg: impl Into<String>) -> Error {
    Error::refused(Exception::TypeError, msg)
}

fn value_error(msg: impl Into<String>) -> Error {
    Error::refused(Exception::ValueError, msg)
}

fn ints(v: &[usize]) -> Param {
    Param::Ints(v.iter().map(|&d| d as i64).collect())
}

fn is_int(d: DType) -> bool {
    matches!(d.kind(), Kind::SignedInt | Kind::UnsignedInt)
}

// ---------------------------------------------------------------------------------------
// Parsing (`_parse_indices`, `expand_bool_indices`, `expand_ellipses`).

/// An index as JAX's `IndexType` classifies it.
#[derive(Clone, Debug)]
enum Ix {
    NewAxis,
    Ellipsis,
    Slice(Option<isize>, Option<isize>, isize),
    /// A Python integer.
    Int(i64),
    /// A boolean array (0-d included), before expansion.
    Bool(Array),
    /// A 0-d boolean after expansion (a concrete value).
    ScalarBool(bool),
    /// An integer array; `host`: a NumPy array JAX made (a mask's nonzero indices), whose
    /// comparisons JAX computes on the host rather than staging them.
    Arr {
        a: Array,
        host: bool,
    },
}

#[derive(Clone, Debug)]
struct Parsed {
    ix: Ix,
    axes: Vec<usize>,
}

fn parse(indices: &[Index], shape: &[usize]) -> Result<Vec<Parsed>, Error> {
    let mut kinds = Vec::with_capacity(indices.len());
    let mut consumed = Vec::with_capacity(indices.len());
    let mut ellipses = Vec::new();
    for (i, idx) in indices.iter().enumerate() {
        let (ix, n) = match idx {
            Index::NewAxis => (Ix::NewAxis, 0),
            Index::Ellipsis => {
                ellipses.push(i);
                (Ix::Ellipsis, 0)
            }
            Index::Slice(a, b, s) => (Ix::Slice(*a, *b, *s), 1),
            Index::At(v) => (Ix::Int(*v as i64), 1),
            Index::Array(a) if a.dtype() == DType::Bool => (Ix::Bool(a.clone()), a.ndim()),
            Index::Array(a) if is_int(a.dtype()) => (
                Ix::Arr {
                    a: a.clone(),
                    host: false,
                },
                1,
            ),
            Index::Array(a) => {
                return Err(type_error(format!(
                    "Indexer must have integer or boolean type, got indexer with type {}",
                    a.dtype()
                )));
            }
        };
        kinds.push(ix);
        consumed.push(n);
    }
    if ellipses.len() > 1 {
        return Err(index_error(
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let total: usize = consumed.iter().sum();
    if total > shape.len() {
        return Err(index_error(format!(
            "Too many indices: array is {}-dimensional, but {total} were indexed",
            shape.len()
        )));
    }
    if let Some(&e) = ellipses.first() {
        consumed[e] = shape.len() - total;
    }
    let mut current = 0;
    Ok(kinds
        .into_iter()
        .zip(consumed)
        .map(|(ix, n)| {
            let axes = (current..current + n).collect();
            current += n;
            Parsed { ix, axes }
        })
        .collect())
}

/// An integer array NumPy made on the host (int64, canonicalised as JAX passes it on).
fn host_ints(values: Vec<i64>, shape: &[usize]) -> Result<Array, Error> {
    let a = Array::from_shape_vec(shape, values)?;
    now(|| convert(&a, default_int(&rules())))
}

/// `f` computed now, outside any trace (what JAX computes on the host or folds).
fn now<R>(f: impl FnOnce() -> R) -> R {
    crate::core::with_trace(None, f)
}

/// `lax.convert_element_type(x, dtype)` with `weak_type`: staged for a traced `x`, computed
/// now for a concrete one (JAX folds those).
fn convert_to(x: &Array, dtype: DType, weak: bool) -> Result<Array, Error> {
    if x.is_concrete() {
        now(|| lax::ops::convert(x, dtype, weak))
    } else {
        lax::ops::convert(x, dtype, weak)
    }
}

/// JAX's `NonConcreteBooleanIndexError` for a traced mask.
fn non_concrete(mask: &Array) -> Error {
    let dims: Vec<String> = mask.shape().iter().map(usize::to_string).collect();
    Error::refused(
        Exception::NonConcreteBooleanIndexError,
        format!(
            "Array boolean indices must be concrete; got bool[{}]\n\nSee \
             https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError",
            dims.join(",")
        ),
    )
}

/// Boolean masks replaced by the integer arrays of their nonzero elements (`np.where`), 0-d
/// ones by their value.
fn expand_bool(parsed: Vec<Parsed>, shape: &[usize]) -> Result<Vec<Parsed>, Error> {
    let mut out = Vec::with_capacity(parsed.len());
    for (position, p) in parsed.into_iter().enumerate() {
        let Ix::Bool(mask) = &p.ix else {
            out.push(p);
            continue;
        };
        let concrete = match mask.concrete() {
            Ok(c) => c.into_owned(),
            Err(_) => return Err(non_concrete(mask)),
        };
        let values: Vec<bool> = concrete.to_vec()?;
        if mask.ndim() == 0 {
            out.push(Parsed {
                ix: Ix::ScalarBool(values[0]),
                axes: Vec::new(),
            });
            continue;
        }
        let expected: Vec<usize> = p.axes.iter().map(|&a| shape[a]).collect();
        if !mask
            .shape()
            .iter()
            .zip(&expected)
            .all(|(&s1, &s2)| s1 == 0 || s1 == s2)
        {
            let exp: Vec<String> = expected.iter().map(usize::to_string).collect();
            return Err(index_error(format!(
                "boolean index did not match shape of indexed array in index {position}: got \
                 {}, expected [{}]",
                py_shape(mask.shape()),
                exp.join(", ")
            )));
        }
        // np.where: the coordinates of the nonzero elements, one array per axis.
        let nd = mask.ndim();
        let strides = row_strides(mask.shape());
        let hits: Vec<usize> = values
            .iter()
            .enumerate()
            .filter(|(_, v)| **v)
            .map(|(k, _)| k)
            .collect();
        for (d, &axis) in p.axes.iter().enumerate().take(nd) {
            let coords: Vec<i64> = hits
                .iter()
                .map(|&k| ((k / strides[d]) % mask.shape()[d]) as i64)
                .collect();
            out.push(Parsed {
                ix: Ix::Arr {
                    a: host_ints(coords, &[hits.len()])?,
                    host: true,
                },
                axes: vec![axis],
            });
        }
    }
    Ok(out)
}

fn row_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Ellipses and the implicit trailing axes as whole slices.
fn expand_ellipses(parsed: Vec<Parsed>, ndim: usize) -> Vec<Parsed> {
    let mut out = Vec::with_capacity(ndim);
    let mut consumed = 0;
    for p in parsed {
        consumed += p.axes.len();
        if matches!(p.ix, Ix::Ellipsis) {
            out.extend(p.axes.iter().map(|&a| Parsed {
                ix: Ix::Slice(None, None, 1),
                axes: vec![a],
            }));
        } else {
            out.push(p);
        }
    }
    out.extend((consumed..ndim).map(|a| Parsed {
        ix: Ix::Slice(None, None, 1),
        axes: vec![a],
    }));
    out
}

/// Python's `slice(start, stop, step).indices(n)`.
fn slice_indices(
    start: Option<isize>,
    stop: Option<isize>,
    step: isize,
    n: usize,
) -> Result<(i64, i64, i64), Error> {
    if step == 0 {
        return Err(value_error("slice step cannot be zero"));
    }
    let n = n as i64;
    let step = step as i64;
    let (lower, upper) = if step < 0 { (-1, n - 1) } else { (0, n) };
    let fix = |v: Option<isize>, default: i64| match v {
        None => default,
        Some(v) => {
            let v = v as i64;
            if v < 0 {
                (v + n).max(lower)
            } else {
                v.min(upper)
            }
        }
    };
    let start = fix(start, if step < 0 { upper } else { lower });
    let stop = fix(stop, if step < 0 { lower } else { upper });
    Ok((start, stop, step))
}

/// `core.canonicalize_slice`: start, step and size.
fn canonicalize_slice(
    start: Option<isize>,
    stop: Option<isize>,
    step: isize,
    n: usize,
) -> Result<(i64, i64, usize), Error> {
    let (s, e, step) = slice_indices(start, stop, step, n)?;
    let gap = step.abs();
    let distance = if step > 0 { e - s } else { s - e };
    Ok((s, step, ((distance + gap - 1).max(0) / gap) as usize))
}

// ---------------------------------------------------------------------------------------
// Small binds.

fn bind(p: &'static crate::core::Primitive, x: &[&Array], params: Params) -> Result<Array, Error> {
    bind1(p, x, &params)
}

fn lit(v: i64, dtype: DType) -> Result<Array, Error> {
    scalar_array(Value::Int(i128::from(v)), dtype, false)
}

fn convert(x: &Array, dtype: DType) -> Result<Array, Error> {
    convert_to(x, dtype, false)
}

fn broadcast_in_dim(x: &Array, shape: &[usize], dims: &[usize]) -> Result<Array, Error> {
    bind(
        &lax::BROADCAST_IN_DIM,
        &[x],
        Params::new()
            .with("shape", ints(shape))
            .with("broadcast_dimensions", ints(dims))
            .with("sharding", Param::None),
    )
}

fn rev(x: &Array, dims: &[usize]) -> Result<Array, Error> {
    bind(
        &lax::REV,
        &[x],
        Params::new().with("dimensions", ints(dims)),
    )
}

fn squeeze(x: &Array, dims: &[usize]) -> Result<Array, Error> {
    if dims.is_empty() {
        return Ok(x.clone());
    }
    bind(
        &lax::SQUEEZE,
        &[x],
        Params::new().with("dimensions", ints(dims)),
    )
}

fn expand_dims(x: &Array, dims: &[usize]) -> Result<Array, Error> {
    let d: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    lax::expand_dims(x, &d)
}

/// `lax.broadcast_to`, with its messages.
fn broadcast_to(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    let tuple = |s: &[usize]| py_shape(s);
    if shape.len() < x.ndim() {
        return Err(value_error(format!(
            "Cannot broadcast to shape with fewer dimensions: arr_shape={} shape={}",
            tuple(x.shape()),
            tuple(shape)
        )));
    }
    let lead = shape.len() - x.ndim();
    if !x
        .shape()
        .iter()
        .zip(&shape[lead..])
        .all(|(&a, &s)| a == 1 || a == s)
    {
        let dims = |s: &[usize]| s.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        return Err(value_error(format!(
            "Incompatible types for broadcasting: input type={}[{}] and requested type={}[{}]",
            x.dtype(),
            dims(x.shape()),
            x.dtype(),
            dims(shape)
        )));
    }
    let dims: Vec<usize> = (lead..shape.len()).collect();
    broadcast_in_dim(x, shape, &dims)
}

/// `jnp.where(i < 0, i + n, i)` as `_normalize_index` and `normalize_indices` stage it
/// (`host`: the comparison computed now, as NumPy does for JAX's own index arrays).
fn normalize(i: &Array, n: usize, host: bool) -> Result<Array, Error> {
    if i.dtype().kind() == Kind::UnsignedInt {
        return Ok(i.clone());
    }
    let size = scalar_array(Value::Int(n as i128), i.dtype(), false)?;
    let negative = if host {
        let c = i.concrete()?;
        let v: Vec<i64> = now(|| c.astype(DType::Int64))?.to_vec()?;
        Array::from_shape_vec(i.shape(), v.iter().map(|&x| x < 0).collect())?
    } else {
        let zero = scalar_array(Value::Int(0), i.dtype(), i.weak_type())?;
        bind(&lax::LT, &[i, &zero], Params::new())?
    };
    let size = if i.weak_type() {
        size.with_weak_type(true)
    } else {
        size
    };
    let wrapped = bind(&lax::ADD, &[i, &size], Params::new())?;
    lax::ops::select_n(&negative, &[i, &wrapped])
}

/// `int_dtype_for_shape(shape, signed=True)`.
fn index_dtype(shape: &[usize]) -> DType {
    if shape.iter().any(|&d| d > i32::MAX as usize) {
        DType::Int64
    } else {
        DType::Int32
    }
}

// ---------------------------------------------------------------------------------------
// `x[idx]`.

/// `x[indices]`: NumPy's indexing as `jnp` stages it (JAX's `rewriting_take`). Integers,
/// slices, new axes, an ellipsis, integer arrays (advanced indexing) and boolean masks.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, numpy::Index, Array};
/// let m = Array::from_shape_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6])?;
/// let v = jnp::index(&m, &[Index::At(1), Index::Slice(None, None, -1)])?;
/// assert_eq!(v.to_vec::<i32>()?, [6, 5, 4]);
/// let c = jnp::index(&v, &[Index::ALL, Index::NewAxis])?; // v[:, None]
/// assert_eq!(c.shape(), &[3, 1]);
/// let i = Array::from_vec(vec![2i32, -1, 0]);
/// let g = jnp::index(&m, &[Index::Ellipsis, Index::Array(i)])?; // m[..., i]
/// assert_eq!(g.to_vec::<i32>()?, [3, 3, 1, 6, 6, 4]);
/// let mask = Array::from_vec(vec![false, true]);
/// assert_eq!(jnp::index(&m, &[mask.into()])?.shape(), &[1, 3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's: `IndexError` for too many indices, two ellipses, a mask of the wrong shape, an
/// integer into an axis of size 0; `TypeError` for an index array neither integer nor
/// boolean; `NonConcreteBooleanIndexError` for a traced mask; `ValueError` for a zero step;
/// index arrays that do not broadcast together.
pub fn index(x: &Array, indices: &[Index]) -> Result<Array, Error> {
    rewriting_take(x, indices, None, None)
}

fn rewriting_take(
    x: &Array,
    indices: &[Index],
    mode: Option<IndexMode>,
    fill_value: Option<Value>,
) -> Result<Array, Error> {
    let parsed = parse(indices, x.shape())?;
    let sliceable = matches!(
        mode,
        None | Some(IndexMode::PromiseInBounds | IndexMode::Clip)
    );
    if sliceable {
        if let Some(s) = to_static_slice(&parsed, x.shape(), mode)? {
            return static_slice(x, &s);
        }
        if let Some(d) = to_dynamic_slice(&parsed, x.shape())? {
            return dynamic_slice(x, d);
        }
    }
    let parsed = expand_bool(parsed, x.shape())?;
    gather(x, parsed, mode, fill_value)
}

struct StaticSlice {
    start: Vec<usize>,
    limit: Vec<usize>,
    strides: Option<Vec<usize>>,
    rev: Vec<usize>,
    squeeze: Vec<usize>,
    newaxis: Vec<usize>,
}

/// `NDIndexer.to_static_slice`; `None` where JAX's attempt raises (and it moves on).
fn to_static_slice(
    parsed: &[Parsed],
    shape: &[usize],
    mode: Option<IndexMode>,
) -> Result<Option<StaticSlice>, Error> {
    let promise = !matches!(mode, Some(IndexMode::Clip));
    for p in parsed {
        match &p.ix {
            Ix::Int(i) if promise => {
                let n = shape[p.axes[0]] as i64;
                let j = if *i < 0 { i + n } else { *i };
                if !(0..n).contains(&j) {
                    return Ok(None);
                }
            }
            Ix::Int(_) | Ix::Ellipsis | Ix::NewAxis | Ix::Slice(..) => {}
            _ => return Ok(None),
        }
    }
    let mut s = StaticSlice {
        start: Vec::new(),
        limit: Vec::new(),
        strides: None,
        rev: Vec::new(),
        squeeze: Vec::new(),
        newaxis: Vec::new(),
    };
    let mut strides = Vec::new();
    for p in expand_ellipses(parsed.to_vec(), shape.len()) {
        match p.ix {
            Ix::NewAxis => s
                .newaxis
                .push(s.start.len() - s.squeeze.len() + s.newaxis.len()),
            Ix::Int(i) => {
                let axis = p.axes[0];
                let n = shape[axis] as i64;
                if n == 0 {
                    return Ok(None);
                }
                let j = if i < 0 { i + n } else { i }.clamp(0, n - 1) as usize;
                s.start.push(j);
                s.limit.push(j + 1);
                strides.push(1);
                s.squeeze.push(axis);
            }
            Ix::Slice(a, b, step) => {
                let axis = p.axes[0];
                let size = shape[axis] as i64;
                let Ok((start, stop, stride)) = slice_indices(a, b, step, shape[axis]) else {
                    return Ok(None);
                };
                if stride < 0 {
                    let new_start = size.min(stop + 1 + (start - stop - 1).abs() % stride.abs());
                    s.start.push(new_start as usize);
                    s.limit.push(new_start.max(start + 1) as usize);
                    strides.push(stride.unsigned_abs() as usize);
                    s.rev.push(axis);
                } else {
                    s.start.push(start as usize);
                    s.limit.push(start.max(stop) as usize);
                    strides.push(stride as usize);
                }
            }
            _ => return Ok(None),
        }
    }
    if strides.iter().any(|&d| d != 1) {
        s.strides = Some(strides);
    }
    Ok(Some(s))
}

fn static_slice(x: &Array, s: &StaticSlice) -> Result<Array, Error> {
    let trivial = s.strides.is_none()
        && s.start.len() == x.ndim()
        && s.start
            .iter()
            .zip(&s.limit)
            .zip(x.shape())
            .all(|((&a, &b), &n)| a == 0 && b == n);
    let mut out = x.clone();
    if !trivial {
        out = bind(
            &lax::SLICE,
            &[&out],
            Params::new()
                .with("start_indices", ints(&s.start))
                .with("limit_indices", ints(&s.limit))
                .with("strides", s.strides.as_deref().map_or(Param::None, ints)),
        )?;
    }
    if !s.rev.is_empty() {
        out = rev(&out, &s.rev)?;
    }
    out = squeeze(&out, &s.squeeze)?;
    expand_dims(&out, &s.newaxis)
}

/// A start index of a dynamic slice: a Python integer or an array.
enum Start {
    Py(i64),
    Arr(Array),
}

struct DynamicSlice {
    starts: Vec<Start>,
    sizes: Vec<usize>,
    rev: Vec<usize>,
    squeeze: Vec<usize>,
    newaxis: Vec<usize>,
    trivial: bool,
}

/// `NDIndexer.to_dynamic_slice`; `None` where JAX's attempt raises.
fn to_dynamic_slice(parsed: &[Parsed], shape: &[usize]) -> Result<Option<DynamicSlice>, Error> {
    for p in parsed {
        match &p.ix {
            Ix::Int(_) | Ix::Ellipsis | Ix::NewAxis => {}
            Ix::Slice(_, _, step) if step.abs() == 1 => {}
            Ix::Arr { a, .. } if a.ndim() == 0 => {}
            _ => return Ok(None),
        }
    }
    let mut d = DynamicSlice {
        starts: Vec::new(),
        sizes: Vec::new(),
        rev: Vec::new(),
        squeeze: Vec::new(),
        newaxis: Vec::new(),
        trivial: true,
    };
    for p in expand_ellipses(parsed.to_vec(), shape.len()) {
        match p.ix {
            Ix::NewAxis => d
                .newaxis
                .push(d.starts.len() - d.squeeze.len() + d.newaxis.len()),
            Ix::Int(_) | Ix::Arr { .. } => {
                d.trivial = false;
                let axis = p.axes[0];
                if shape[axis] == 0 {
                    return Ok(None);
                }
                d.starts.push(match p.ix {
                    Ix::Int(i) => Start::Arr(lit(i, default_int(&rules()))?),
                    Ix::Arr { a, .. } => Start::Arr(a),
                    _ => unreachable!("matched above"),
                });
                d.sizes.push(1);
                d.squeeze.push(axis);
            }
            Ix::Slice(a, b, step) => {
                if a.is_some() || b.is_some() || step != 1 {
                    d.trivial = false;
                }
                let axis = p.axes[0];
                let (start, stop, stride) = slice_indices(a, b, step, shape[axis])?;
                if stride < 0 {
                    let new_start = stop + 1;
                    d.starts.push(Start::Py(new_start));
                    d.sizes.push((start + 1 - new_start).max(0) as usize);
                    d.rev.push(axis);
                } else {
                    d.starts.push(Start::Py(start));
                    d.sizes.push((stop - start).max(0) as usize);
                }
            }
            _ => return Ok(None),
        }
    }
    if d.starts.len() > 1 {
        let dt = index_dtype(shape);
        d.starts = d
            .starts
            .into_iter()
            .map(|s| match s {
                Start::Py(i) => lit(i, dt).map(Start::Arr),
                Start::Arr(a) => convert(&a, dt).map(Start::Arr),
            })
            .collect::<Result<_, Error>>()?;
    }
    Ok(Some(d))
}

fn dynamic_slice(x: &Array, d: DynamicSlice) -> Result<Array, Error> {
    let mut out = x.clone();
    if !d.trivial {
        // `_dynamic_slice_indices` with negative indices allowed.
        let default = default_int(&rules());
        let starts = d
            .starts
            .iter()
            .zip(x.shape())
            .map(|(s, &n)| match s {
                Start::Py(i) => lit(if *i < 0 { i + n as i64 } else { *i }, default),
                Start::Arr(a) => normalize(a, n, false),
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let mut inputs = vec![x];
        inputs.extend(starts.iter());
        out = bind(
            &lax::DYNAMIC_SLICE,
            &inputs,
            Params::new().with("slice_sizes", ints(&d.sizes)),
        )?;
    }
    if !d.rev.is_empty() {
        out = rev(&out, &d.rev)?;
    }
    out = squeeze(&out, &d.squeeze)?;
    expand_dims(&out, &d.newaxis)
}

/// What `_index_to_gather` computes.
struct GatherIndexer {
    slice_shape: Vec<usize>,
    gather_slice_shape: Vec<usize>,
    indices: Array,
    dnums: GatherDimensionNumbers,
    unique: bool,
    reversed: Vec<usize>,
    newaxis: Vec<usize>,
    scalar_bool: Vec<usize>,
}

fn index_to_gather(shape: &[usize], parsed: Vec<Parsed>) -> Result<GatherIndexer, Error> {
    // Adjacency of the advanced indices, before the ellipsis is expanded.
    let advanced: Vec<usize> = parsed
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p.ix, Ix::Arr { .. } | Ix::Int(_)))
        .map(|(i, _)| i)
        .collect();
    let contiguous = advanced.windows(2).all(|w| w[1] - w[0] == 1);
    let parsed = expand_ellipses(parsed, shape.len());
    let scalar_bool: Vec<usize> = parsed
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p.ix, Ix::ScalarBool(_)))
        .map(|(i, _)| i)
        .collect();
    // expand_scalar_bool_indices: a 0-d boolean becomes arange(int(b)) into a new axis of 1.
    let mut new_shape = shape.to_vec();
    let mut current = 0;
    let mut indexer = Vec::with_capacity(parsed.len());
    for (i, p) in parsed.into_iter().enumerate() {
        if let Ix::ScalarBool(b) = p.ix {
            new_shape.insert(i.min(new_shape.len()), 1);
            let a = host_ints(if b { vec![0] } else { vec![] }, &[usize::from(b)])?;
            indexer.push(Parsed {
                ix: Ix::Arr { a, host: true },
                axes: vec![current],
            });
            current += 1;
        } else {
            let n = p.axes.len();
            indexer.push(Parsed {
                ix: p.ix,
                axes: (current..current + n).collect(),
            });
            current += n;
        }
    }
    let shape = new_shape;
    // normalize_indices.
    for p in &mut indexer {
        match &mut p.ix {
            Ix::Int(i) if *i < 0 => *i += shape[p.axes[0]] as i64,
            Ix::Arr { a, host } => *a = normalize(a, shape[p.axes[0]], *host)?,
            _ => {}
        }
    }
    let index_dtype = index_dtype(&shape);
    let is_advanced = indexer
        .iter()
        .any(|p| matches!(&p.ix, Ix::Arr { a, .. } if a.ndim() > 0));
    // (array, position in the index list, axis of x)
    let mut adv: Vec<(Array, usize, usize)> = Vec::new();
    if is_advanced {
        let default = default_int(&rules());
        for (j, (i, p)) in indexer
            .iter()
            .enumerate()
            .filter(|(_, p)| !matches!(p.ix, Ix::NewAxis))
            .enumerate()
        {
            match &p.ix {
                Ix::Arr { a, .. } => adv.push((a.clone(), i, j)),
                Ix::Int(v) => adv.push((
                    scalar_array(Value::Int(i128::from(*v)), default, true)?,
                    i,
                    j,
                )),
                _ => {}
            }
        }
    }
    let (mut x_axis, mut y_axis, mut collapsed_y_axis) = (0usize, 0usize, 0usize);
    let mut offset_dims = Vec::new();
    let mut collapsed = Vec::new();
    let mut start_index_map = Vec::new();
    let mut gather_indices: Vec<(Array, usize)> = Vec::new();
    let mut gather_indices_shape: Vec<usize> = Vec::new();
    let mut slice_shape = Vec::new();
    let mut newaxis = Vec::new();
    let mut reversed = Vec::new();
    let mut gather_slice_shape = Vec::new();
    for (pos, p) in indexer.iter().enumerate() {
        if !adv.is_empty() && ((contiguous && pos == adv[0].1) || (!contiguous && pos == 0)) {
            let shapes: Vec<&[usize]> = adv.iter().map(|(a, _, _)| a.shape()).collect();
            let bshape = broadcast_shapes(&shapes)?;
            let start_dim = gather_indices_shape.len();
            for (a, _, _) in &adv {
                let b = if a.shape() == bshape.as_slice() {
                    a.clone()
                } else {
                    broadcast_to(a, &bshape)?
                };
                gather_indices.push((convert(&b, index_dtype)?, start_dim));
            }
            gather_indices_shape.extend_from_slice(&bshape);
            for (_, _, j) in &adv {
                start_index_map.push(*j);
                collapsed.push(*j);
            }
            slice_shape.extend_from_slice(&bshape);
            y_axis += bshape.len();
            collapsed_y_axis += bshape.len();
        }
        if adv.iter().any(|(_, i, _)| *i == pos) {
            x_axis += 1;
            gather_slice_shape.push(1);
            continue;
        }
        match &p.ix {
            Ix::Int(_) | Ix::Arr { .. } => {
                if shape[x_axis] == 0 {
                    return Err(index_error(format!(
                        "index is out of bounds for axis {x_axis} with size 0"
                    )));
                }
                let i = match &p.ix {
                    Ix::Int(v) => lit(*v, index_dtype)?,
                    Ix::Arr { a, .. } => convert(a, index_dtype)?,
                    _ => unreachable!("matched above"),
                };
                gather_indices.push((i, gather_indices_shape.len()));
                collapsed.push(x_axis);
                gather_slice_shape.push(1);
                start_index_map.push(x_axis);
                x_axis += 1;
            }
            Ix::NewAxis => {
                slice_shape.push(1);
                newaxis.push(y_axis);
                y_axis += 1;
            }
            Ix::Slice(a, b, step) => {
                let n = shape[x_axis];
                let (start, step, size) = canonicalize_slice(*a, *b, *step, n)?;
                slice_shape.push(size);
                if step == 1 {
                    if size != n {
                        gather_indices.push((lit(start, index_dtype)?, gather_indices_shape.len()));
                        start_index_map.push(x_axis);
                    }
                    gather_slice_shape.push(size);
                    offset_dims.push(collapsed_y_axis);
                } else {
                    let iota = bind(
                        &lax::IOTA,
                        &[],
                        Params::new()
                            .with("dtype", Param::DType(index_dtype))
                            .with("shape", ints(&[size]))
                            .with("dimension", Param::Int(0))
                            .with("sharding", Param::None),
                    )?;
                    let scaled =
                        bind(&lax::MUL, &[&lit(step, index_dtype)?, &iota], Params::new())?;
                    let mut idx = bind(
                        &lax::ADD,
                        &[&lit(start, index_dtype)?, &scaled],
                        Params::new(),
                    )?;
                    if step < 0 {
                        reversed.push(collapsed_y_axis);
                        idx = rev(&idx, &[0])?;
                    }
                    gather_slice_shape.push(1);
                    gather_indices.push((idx, gather_indices_shape.len()));
                    start_index_map.push(x_axis);
                    gather_indices_shape.push(size);
                    collapsed.push(x_axis);
                }
                collapsed_y_axis += 1;
                y_axis += 1;
                x_axis += 1;
            }
            other => {
                return Err(index_error(format!(
                    "Got unsupported indexer at position {pos}: {other:?}"
                )));
            }
        }
    }
    let indices = match gather_indices.len() {
        0 => Array::from_bytes(index_dtype, &[0], &[])?,
        1 => {
            let g = &gather_indices[0].0;
            expand_dims(g, &[g.ndim()])?
        }
        _ => {
            let last = gather_indices_shape.len();
            gather_indices_shape.push(1);
            let parts = gather_indices
                .iter()
                .map(|(g, i)| {
                    let dims: Vec<usize> = (*i..i + g.ndim()).collect();
                    broadcast_in_dim(g, &gather_indices_shape, &dims)
                })
                .collect::<Result<Vec<_>, Error>>()?;
            let refs: Vec<&Array> = parts.iter().collect();
            bind(
                &lax::CONCATENATE,
                &refs,
                Params::new().with("dimension", Param::Int(last as i64)),
            )?
        }
    };
    collapsed.sort_unstable();
    let i64s = |v: &[usize]| v.iter().map(|&d| d as i64).collect::<Vec<_>>();
    Ok(GatherIndexer {
        slice_shape,
        gather_slice_shape,
        indices,
        dnums: GatherDimensionNumbers {
            offset_dims: i64s(&offset_dims),
            collapsed_slice_dims: i64s(&collapsed),
            start_index_map: i64s(&start_index_map),
            operand_batching_dims: Vec::new(),
            start_indices_batching_dims: Vec::new(),
        },
        unique: adv.is_empty(),
        reversed,
        newaxis,
        scalar_bool,
    })
}

/// The `fill_value` parameter of a `FILL_OR_DROP` gather: the given one, else JAX's default
/// for the dtype (NaN, the least signed or greatest unsigned integer, `True`).
fn fill_param(dtype: DType, fill_value: Option<Value>) -> Result<Param, Error> {
    let number = match fill_value {
        Some(Value::Int(i)) => match i64::try_from(i) {
            Ok(i) => PyNumber::Int(i),
            Err(_) => PyNumber::UInt(u64::try_from(i).map_err(|_| {
                Error::refused(
                    Exception::OverflowError,
                    format!("Python int {i} too large to convert to {dtype}"),
                )
            })?),
        },
        Some(Value::Float(f)) => PyNumber::Float(f),
        Some(Value::Bool(b)) => PyNumber::Bool(b),
        Some(Value::Complex(..)) => {
            return Err(type_error(
                "a complex fill_value is not supported by this indexed get()",
            ));
        }
        None => {
            let bits = dtype.bits().clamp(1, 64);
            match dtype.kind() {
                Kind::Float | Kind::Complex => PyNumber::Float(f64::NAN),
                Kind::SignedInt => PyNumber::Int((-(1i128 << (bits - 1))) as i64),
                Kind::UnsignedInt if bits == 64 => PyNumber::UInt(u64::MAX),
                Kind::UnsignedInt => PyNumber::Int(((1i128 << bits) - 1) as i64),
                Kind::Bool => PyNumber::Bool(true),
                _ => {
                    return Err(value_error(format!(
                        "Unsupported dtype for gather fill_value {dtype}"
                    )));
                }
            }
        }
    };
    Ok(Param::Number(number))
}

/// `lax.full_like(y, 0, shape=shape)`: zeros of `y`'s dtype and weak type.
fn zeros_of(y: &Array, shape: &[usize]) -> Result<Array, Error> {
    let zero = scalar_array(Value::Int(0), y.dtype(), y.weak_type())?;
    lax::ops::broadcast_to(&zero, shape)
}

/// Binds `gather` as `lax.gather` does.
fn bind_gather(
    x: &Array,
    indices: &Array,
    dnums: GatherDimensionNumbers,
    slice_sizes: &[usize],
    mode: lax::gather::Mode,
    fill_value: Option<Value>,
    (sorted, unique): (bool, bool),
) -> Result<Array, Error> {
    let fill = if mode == lax::gather::Mode::FillOrDrop {
        fill_param(x.dtype(), fill_value)?
    } else {
        Param::None
    };
    bind(
        &lax::GATHER,
        &[x, indices],
        Params::new()
            .with("dimension_numbers", Param::GatherDimensionNumbers(dnums))
            .with("fill_value", fill)
            .with("indices_are_sorted", Param::Bool(sorted))
            .with("mode", mode.param())
            .with("slice_sizes", ints(slice_sizes))
            .with("unique_indices", Param::Bool(unique)),
    )
}

/// JAX's `_gather`.
fn gather(
    x: &Array,
    parsed: Vec<Parsed>,
    mode: Option<IndexMode>,
    fill_value: Option<Value>,
) -> Result<Array, Error> {
    let g = index_to_gather(x.shape(), parsed)?;
    let mut y = x.clone();
    if !g.scalar_bool.is_empty() {
        y = expand_dims(&y, &g.scalar_bool)?;
    }
    if g.slice_shape.contains(&0) {
        return zeros_of(&y, &g.slice_shape);
    }
    if !g.indices.shape().contains(&0) {
        let mode = gs_mode(mode, lax::gather::Mode::PromiseInBounds)?;
        y = bind_gather(
            &y,
            &g.indices,
            g.dnums,
            &g.gather_slice_shape,
            mode,
            fill_value,
            (g.unique, g.unique),
        )?;
    }
    if !g.reversed.is_empty() {
        y = rev(&y, &g.reversed)?;
    }
    expand_dims(&y, &g.newaxis)
}

// ---------------------------------------------------------------------------------------
// `.at[]`.

/// `x.at[idx]`: JAX's indexed updates on an [`Array`] (`jax.numpy.ndarray.at`), each
/// returning a new array.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, numpy::{At, Index}, Array};
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
/// let i = Array::from_vec(vec![0i32, 0, 5]);
/// // Duplicates accumulate; the out-of-bound update is dropped (mode "fill"/"drop").
/// let y = x.at(&[Index::Array(i)]).add(10.0, None)?;
/// assert_eq!(y.to_vec::<f32>()?, [21.0, 2.0, 3.0]);
/// assert_eq!(x.at(&[Index::At(-1)]).set(0.5, None)?.to_vec::<f32>()?, [1.0, 2.0, 0.5]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
pub trait At {
    /// The indexed-update helper for `self[indices]`.
    fn at(&self, indices: &[Index]) -> IndexUpdate<'_>;
}

impl At for Array {
    fn at(&self, indices: &[Index]) -> IndexUpdate<'_> {
        IndexUpdate {
            array: self,
            indices: indices.to_vec(),
        }
    }
}

/// `x.at[idx]` ([`At::at`]): `get`, `set`, `add`, `multiply`, `divide`, `power`, `min`, `max`,
/// `apply`, each with a `mode` (`None`: a gather promises indices in bounds, an update drops
/// those out of bounds).
///
/// An update's values are promoted with the array (a Python int the array's integer dtype
/// holds takes that dtype; other Python scalars are weakly typed), broadcast to `x[idx]`'s
/// shape, scattered, and the result converted back to the array's dtype and weak type.
///
/// ```
/// use dtype_lattice_array::{numpy::{At, Index, IndexMode}, Array};
/// let x = Array::from_vec(vec![1i8, 2, 3]);
/// let at = x.at(&[Index::Slice(Some(1), None, 1)]);
/// assert_eq!(at.set(9, None)?.to_vec::<i8>()?, [1, 9, 9]);
/// assert_eq!(at.add(1.7, None)?.to_vec::<i8>()?, [1, 3, 4]); // computed in float32
/// let i = Index::Array(Array::from_vec(vec![5i32]));
/// assert_eq!(x.at(&[i]).max(7, Some(IndexMode::Clip))?.to_vec::<i8>()?, [1, 2, 7]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct IndexUpdate<'x> {
    array: &'x Array,
    indices: Vec<Index>,
}

/// Which scatter an update binds.
#[derive(Clone, Debug, PartialEq)]
enum Op {
    Set,
    Add,
    Sub,
    Mul,
    Min,
    Max,
    /// `lax.scatter_apply` with this `update_jaxpr`.
    Apply(Param),
}

impl IndexUpdate<'_> {
    /// `x.at[idx].get(mode=..., fill_value=...)`: `x[idx]`, out-of-bound indices handled as
    /// `mode` says (`"fill"`: `fill_value`, by default NaN, the least signed integer, the
    /// greatest unsigned one, or `True`).
    ///
    /// ```
    /// use dtype_lattice::Value;
    /// use dtype_lattice_array::{numpy::{At, Index, IndexMode}, Array};
    /// let x = Array::from_vec(vec![1i32, 2, 3]);
    /// let i = Index::Array(Array::from_vec(vec![2i32, 7]));
    /// let y = x.at(&[i]).get(Some(IndexMode::Fill), Some(Value::Int(-1)))?;
    /// assert_eq!(y.to_vec::<i32>()?, [3, -1]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`index`]; `ValueError` for a mode a gather does not take (`"wrap"`).
    pub fn get(&self, mode: Option<IndexMode>, fill_value: Option<Value>) -> Result<Array, Error> {
        rewriting_take(self.array, &self.indices, mode, fill_value)
    }

    /// `x.at[idx].set(values)`: `x[idx] = values` (with duplicates, the last update wins).
    ///
    /// ```
    /// use dtype_lattice_array::{numpy::{At, Index}, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
    /// let i = Index::Array(Array::from_vec(vec![0i32, 0])); // index 0, twice
    /// let y = x.at(&[i]).set(Array::from_vec(vec![5.0f32, 6.0]), None)?;
    /// assert_eq!(y.to_vec::<f32>()?, [6.0, 2.0, 3.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`index`]; JAX's `ValueError` for values that do not broadcast to `x[idx]`'s shape.
    pub fn set<'v>(
        &self,
        values: impl Into<ArrayLike<'v>>,
        mode: Option<IndexMode>,
    ) -> Result<Array, Error> {
        scatter_update(self.array, &self.indices, values.into(), Op::Set, mode)
    }

    /// `x.at[idx].add(values)`: `x[idx] += values`, duplicates accumulating.
    ///
    /// ```
    /// use dtype_lattice_array::{numpy::{At, Index}, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
    /// let i = Index::Array(Array::from_vec(vec![0i32, 0])); // index 0, twice
    /// let y = x.at(&[i]).add(Array::from_vec(vec![5.0f32, 6.0]), None)?;
    /// assert_eq!(y.to_vec::<f32>()?, [12.0, 2.0, 3.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`IndexUpdate::set`]; lax's `TypeError` for booleans.
    pub fn add<'v>(
        &self,
        values: impl Into<ArrayLike<'v>>,
        mode: Option<IndexMode>,
    ) -> Result<Array, Error> {
        scatter_update(self.array, &self.indices, values.into(), Op::Add, mode)
    }

    /// `x.at[idx].subtract(values)`: `x[idx] -= values` (`scatter-sub`; duplicates subtract
    /// in turn).
    ///
    /// ```
    /// use dtype_lattice_array::{numpy::{At, Index}, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
    /// let i = Index::Array(Array::from_vec(vec![2i32, 2]));
    /// let y = x.at(&[i]).subtract(Array::from_vec(vec![5.0f32, 6.0]), None)?;
    /// assert_eq!(y.to_vec::<f32>()?, [1.0, 2.0, -8.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`IndexUpdate::set`]; lax's `TypeError` for booleans.
    pub fn subtract<'v>(
        &self,
        values: impl Into<ArrayLike<'v>>,
        mode: Option<IndexMode>,
    ) -> Result<Array, Error> {
        scatter_update(self.array, &self.indices, values.into(), Op::Sub, mode)
    }

    /// `x.at[idx].multiply(values)`: `x[idx] *= values`.
    ///
    /// ```
    /// use dtype_lattice_array::{numpy::{At, Index}, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
    /// let i = Index::Array(Array::from_vec(vec![0i32, 0])); // index 0, twice
    /// let y = x.at(&[i]).multiply(2.0, None)?;
    /// assert_eq!(y.to_vec::<f32>()?, [4.0, 2.0, 3.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`IndexUpdate::add`].
    pub fn multiply<'v>(
        &self,
        values: impl Into<ArrayLike<'v>>,
        mode: Option<IndexMode>,
    ) -> Result<Array, Error> {
        scatter_update(self.array, &self.indices, values.into(), Op::Mul, mode)
    }

    /// `x.at[idx].divide(values)`: `x / ones.at[idx].multiply(values)` (as JAX computes it;
    /// true division: integers become the default float).
    ///
    /// ```
    /// use dtype_lattice_array::{numpy::{At, Index}, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
    /// let i = Index::Array(Array::from_vec(vec![0i32, 0])); // index 0, twice
    /// let y = x.at(&[i]).divide(2.0, None)?;
    /// assert_eq!(y.to_vec::<f32>()?, [0.25, 2.0, 3.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`IndexUpdate::add`].
    pub fn divide<'v>(
        &self,
        values: impl Into<ArrayLike<'v>>,
        mode: Option<IndexMode>,
    ) -> Result<Array, Error> {
        let ones = super::ones_like(self.array)?;
        let d = scatter_update(&ones, &self.indices, values.into(), Op::Mul, mode)?;
        super::divide(self.array, &d)
    }

    /// `x.at[idx].power(values)`: `x ** ones.at[idx].multiply(values)`.
    ///
    /// ```
    /// use dtype_lattice_array::{numpy::{At, Index}, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
    /// let i = Index::Array(Array::from_vec(vec![0i32, 0])); // index 0, twice
    /// let y = x.at(&[i]).power(2.0, None)?;
    /// assert_eq!(y.to_vec::<f32>()?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`IndexUpdate::add`].
    pub fn power<'v>(
        &self,
        values: impl Into<ArrayLike<'v>>,
        mode: Option<IndexMode>,
    ) -> Result<Array, Error> {
        let ones = super::ones_like(self.array)?;
        let p = scatter_update(&ones, &self.indices, values.into(), Op::Mul, mode)?;
        super::power(self.array, &p)
    }

    /// `x.at[idx].min(values)`: `x[idx] = minimum(x[idx], values)`.
    ///
    /// ```
    /// use dtype_lattice_array::{numpy::{At, Index}, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
    /// let i = Index::Array(Array::from_vec(vec![0i32, 0])); // index 0, twice
    /// let y = x.at(&[i]).min(Array::from_vec(vec![5.0f32, -6.0]), None)?;
    /// assert_eq!(y.to_vec::<f32>()?, [-6.0, 2.0, 3.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`IndexUpdate::set`].
    pub fn min<'v>(
        &self,
        values: impl Into<ArrayLike<'v>>,
        mode: Option<IndexMode>,
    ) -> Result<Array, Error> {
        scatter_update(self.array, &self.indices, values.into(), Op::Min, mode)
    }

    /// `x.at[idx].max(values)`: `x[idx] = maximum(x[idx], values)`.
    ///
    /// ```
    /// use dtype_lattice_array::{numpy::{At, Index}, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
    /// let i = Index::Array(Array::from_vec(vec![0i32, 0])); // index 0, twice
    /// let y = x.at(&[i]).max(Array::from_vec(vec![5.0f32, -6.0]), None)?;
    /// assert_eq!(y.to_vec::<f32>()?, [5.0, 2.0, 3.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`IndexUpdate::set`].
    pub fn max<'v>(
        &self,
        values: impl Into<ArrayLike<'v>>,
        mode: Option<IndexMode>,
    ) -> Result<Array, Error> {
        scatter_update(self.array, &self.indices, values.into(), Op::Max, mode)
    }

    /// `x.at[idx].apply(f)`: `f` applied to each indexed element, once per time it is
    /// indexed (`f` must act elementwise), as JAX's `lax.scatter_apply` binds it: a `scatter`
    /// whose `update_jaxpr` is `f` traced on a 0-d element (`{ lambda ; i:f32[] j:f32[]. let
    /// k:f32[] = sin i in (k,) }`), with zeros for updates.
    ///
    /// ```
    /// use dtype_lattice_array::{numpy as jnp, numpy::{At, Index}, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
    /// let i = Index::Array(Array::from_vec(vec![0i32, 0, 2]));
    /// let y = x.at(&[i]).apply(|v| jnp::multiply(v, 2.0), None)?;
    /// assert_eq!(y.to_vec::<f32>()?, [4.0, 2.0, 6.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`IndexUpdate::set`]; whatever `f` returns.
    pub fn apply<F>(&self, f: F, mode: Option<IndexMode>) -> Result<Array, Error>
    where
        F: Fn(&Array) -> Result<Array, Error>,
    {
        let x = self.array;
        // `lax._zero(x)`: the updates `_scatter_update` broadcasts (and `scatter_apply` reads
        // only the shape of).
        // `f` is traced on that element type.
        let zero = scalar_array(Value::Int(0), x.dtype(), false)?;
        let j = crate::interpreters::make_jaxpr(
            |(a, _): (Array, Array)| f(&a),
            &(zero.clone(), zero.clone()),
        )?;
        let jaxpr = Param::Jaxpr(std::sync::Arc::new(j));
        scatter_update(
            x,
            &self.indices,
            ArrayLike::Owned(zero),
            Op::Apply(jaxpr),
            mode,
        )
    }
}

/// `jnp.asarray(y)` as `_scatter_update` makes it: a Python int that `x`'s integer dtype
/// holds becomes that dtype; other Python scalars are weakly typed.
fn update_values(x: &Array, y: ArrayLike<'_>) -> Result<Array, Error> {
    let r = rules();
    match y {
        ArrayLike::Array(a) => Ok(a.clone()),
        ArrayLike::Owned(a) => Ok(a),
        ArrayLike::Failed(e) => Err(*e),
        ArrayLike::Scalar(v) => {
            if let Value::Int(i) = v
                && is_int(x.dtype())
                && x.dtype()
                    .int_range()
                    .is_some_and(|(lo, hi)| lo <= i && i <= hi)
            {
                return scalar_array(v, x.dtype(), false);
            }
            let x64 = r.options().x64;
            if let Value::Int(i) = v
                && default_int(&r)
                    .int_range()
                    .is_some_and(|(lo, hi)| i < lo || i > hi)
            {
                return Err(Error::refused(
                    Exception::OverflowError,
                    format!("Python int {i} too large to convert to {}", default_int(&r)),
                ));
            }
            let dtype = match v {
                Value::Bool(_) => DType::Bool,
                Value::Int(_) => default_int(&r),
                Value::Float(_) if x64 => DType::Float64,
                Value::Float(_) => DType::Float32,
                Value::Complex(..) if x64 => DType::Complex128,
                Value::Complex(..) => DType::Complex64,
            };
            crate::array::python_scalar_array(v, dtype, true)
        }
    }
}

/// The `update_jaxpr` JAX gives a scatter of `op` on `dtype`.
fn update_jaxpr(op: &Op, dtype: DType) -> Result<Param, Error> {
    let prim: &'static crate::core::Primitive = match op {
        Op::Set => return Ok(Param::None),
        Op::Apply(j) => return Ok(j.clone()),
        Op::Add => &lax::ADD,
        Op::Sub => &lax::SUB,
        Op::Mul => &lax::MUL,
        Op::Min => &lax::MIN,
        Op::Max => &lax::MAX,
    };
    let zero = crate::array::ShapedArray::new(&[], dtype, false);
    let z = lax::ops::zeros(&zero)?;
    let j = crate::interpreters::make_jaxpr(
        |(a, b): (Array, Array)| bind(prim, &[&a, &b], Params::new()),
        &(z.clone(), z),
    )?;
    Ok(Param::Jaxpr(std::sync::Arc::new(j)))
}

/// JAX's `_scatter_update`.
fn scatter_update(
    x: &Array,
    indices: &[Index],
    y: ArrayLike<'_>,
    op: Op,
    mode: Option<IndexMode>,
) -> Result<Array, Error> {
    let y = update_values(x, y)?;
    let parsed = expand_bool(parse(indices, x.shape())?, x.shape())?;
    let (dtype, weak) = (x.dtype(), x.weak_type());
    let g = index_to_gather(x.shape(), parsed)?;
    if g.slice_shape.contains(&0) {
        return Ok(x.clone());
    }
    // promote_dtypes: the result type, each operand converted (a concrete one now).
    let p = rules().promoted(&[ArrayLike::from(x).operand(), ArrayLike::from(&y).operand()])?;
    let mut x = convert_to(x, p.dtype, p.weak_type)?;
    let y = convert_to(&y, p.dtype, p.weak_type)?;
    let mut y = broadcast_to(&y, &g.slice_shape)?;
    y = squeeze(&y, &g.newaxis)?;
    if !g.reversed.is_empty() {
        y = rev(&y, &g.reversed)?;
    }
    if !g.scalar_bool.is_empty() {
        x = expand_dims(&x, &g.scalar_bool)?;
    }
    if matches!(op, Op::Apply(_)) {
        // `scatter_apply`'s `lax.full(update_shape, 0, operand.dtype)`.
        let zero = scalar_array(Value::Int(0), x.dtype(), false)?;
        y = broadcast_to(&zero, y.shape())?;
    }
    let prim = match op {
        Op::Set | Op::Apply(_) => &lax::SCATTER,
        Op::Add => &lax::SCATTER_ADD,
        Op::Sub => &lax::SCATTER_SUB,
        Op::Mul => &lax::SCATTER_MUL,
        Op::Min => &lax::SCATTER_MIN,
        Op::Max => &lax::SCATTER_MAX,
    };
    let d = g.dnums;
    let dnums = ScatterDimensionNumbers {
        update_window_dims: d.offset_dims,
        inserted_window_dims: d.collapsed_slice_dims,
        scatter_dims_to_operand_dims: d.start_index_map,
        operand_batching_dims: d.operand_batching_dims,
        scatter_indices_batching_dims: d.start_indices_batching_dims,
    };
    let mode = gs_mode(mode, lax::gather::Mode::FillOrDrop)?;
    let params = Params::new()
        .with("dimension_numbers", Param::ScatterDimensionNumbers(dnums))
        .with("indices_are_sorted", Param::Bool(g.unique))
        .with("mode", mode.param())
        .with("unique_indices", Param::Bool(g.unique))
        .with("update_consts", Param::Ints(Vec::new()))
        .with("update_jaxpr", update_jaxpr(&op, x.dtype())?);
    let mut out = bind(prim, &[&x, &g.indices, &y], params)?;
    out = squeeze(&out, &g.scalar_bool)?;
    lax::ops::convert(&out, dtype, weak)
}

// ---------------------------------------------------------------------------------------
// `take`, `take_along_axis`.

fn canonical_axis(axis: isize, ndim: usize) -> Result<usize, Error> {
    super::shape::axis(axis, ndim)
}

/// `jnp.take(a, indices, axis, mode=mode, fill_value=fill_value)`: the elements of `a` at
/// `indices` along `axis` (`None`: of the flattened array). Modes: `None`/`"fill"` (negative
/// indices wrap once, out-of-bound ones give `fill_value`), `"clip"`, `"wrap"`.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, numpy::IndexMode, Array};
/// let x = Array::from_shape_vec(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let i = Array::from_vec(vec![2i32, -1, 5]);
/// let t = jnp::take(&x, &i, Some(1), None, None)?;
/// assert_eq!(t.shape(), &[2, 3]);
/// assert!(t.to_vec::<f32>()?[2].is_nan()); // out of bounds: NaN
/// let c = jnp::take(&x, &i, None, Some(IndexMode::Clip), None)?;
/// assert_eq!(c.to_vec::<f32>()?, [3.0, 1.0, 6.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's: `ValueError` for an axis out of range, a mode `take` does not know (`"drop"`,
/// `"promise_in_bounds"`) and non-integer indices; `NotImplementedError` for `"raise"`;
/// `IndexError` for a non-empty take from an empty axis.
pub fn take<'a, 'b>(
    a: impl Into<ArrayLike<'a>>,
    indices: impl Into<ArrayLike<'b>>,
    axis: Option<isize>,
    mode: Option<IndexMode>,
    fill_value: Option<Value>,
) -> Result<Array, Error> {
    let a = super::functions::arraylike(a)?;
    let indices = super::functions::arraylike(indices)?;
    crate::jit::jit(move |(a, indices): (Array, Array)| {
        take_traced(&a, &indices, axis, mode, fill_value, false)
    })
    .named("_take")
    .call(&(a, indices))
}

/// `jnp.take(a, indices, axis, unique_indices=True)` (what `random.permutation` of an array
/// along an axis calls): [`take`], its `gather` told the indices are unique.
pub(crate) fn take_unique(a: &Array, indices: &Array, axis: isize) -> Result<Array, Error> {
    crate::jit::jit(move |(a, indices): (Array, Array)| {
        take_traced(&a, &indices, Some(axis), None, None, true)
    })
    .named("_take")
    .call(&(a.clone(), indices.clone()))
}

fn take_traced(
    a: &Array,
    indices: &Array,
    axis: Option<isize>,
    mode: Option<IndexMode>,
    fill_value: Option<Value>,
    unique: bool,
) -> Result<Array, Error> {
    let (a, axis) = match axis {
        None => (super::functions::ravel(a)?, 0),
        Some(ax) => (a.clone(), canonical_axis(ax, a.ndim())?),
    };
    let n = a.shape()[axis];
    let (indices, gmode) = match mode {
        None | Some(IndexMode::Fill) => {
            (where_negative(indices, n)?, lax::gather::Mode::FillOrDrop)
        }
        Some(IndexMode::Raise) => {
            return Err(Error::refused(
                Exception::NotImplementedError,
                "The 'raise' mode to jnp.take is not supported.",
            ));
        }
        Some(IndexMode::Wrap) => {
            let size = scalar_array(Value::Int(n as i128), indices.dtype(), false)?;
            (
                super::remainder(indices, &size)?,
                lax::gather::Mode::PromiseInBounds,
            )
        }
        Some(IndexMode::Clip) => (indices.clone(), lax::gather::Mode::Clip),
        Some(m) => {
            return Err(value_error(format!("Invalid mode '{m}' for np.take")));
        }
    };
    let index_dims = indices.ndim();
    let mut slice_sizes = a.shape().to_vec();
    if n == 0 {
        if indices.size() != 0 {
            return Err(index_error(
                "Cannot do a non-empty jnp.take() from an empty axis.",
            ));
        }
        return Ok(a);
    }
    if indices.size() == 0 {
        let mut out = slice_sizes[..axis].to_vec();
        out.extend_from_slice(indices.shape());
        out.extend_from_slice(&slice_sizes[axis + 1..]);
        return zeros_of(&a, &out);
    }
    slice_sizes[axis] = 1;
    let offset: Vec<i64> = (0..axis)
        .chain(axis + index_dims..a.ndim() + index_dims - 1)
        .map(|d| d as i64)
        .collect();
    let dnums = GatherDimensionNumbers {
        offset_dims: offset,
        collapsed_slice_dims: vec![axis as i64],
        start_index_map: vec![axis as i64],
        operand_batching_dims: Vec::new(),
        start_indices_batching_dims: Vec::new(),
    };
    let idx = index(&indices, &[Index::Ellipsis, Index::NewAxis])?;
    let fill = if gmode == lax::gather::Mode::FillOrDrop {
        fill_value
    } else {
        None
    };
    bind_gather(&a, &idx, dnums, &slice_sizes, gmode, fill, (false, unique))
}

/// `jnp.where(i < 0, i + n, i)` as `jnp.take` stages it (`util._where`, a jitted function).
fn where_negative(i: &Array, n: usize) -> Result<Array, Error> {
    let zero = scalar_array(Value::Int(0), i.dtype(), i.weak_type())?;
    let negative = bind(&lax::LT, &[i, &zero], Params::new())?;
    let size = scalar_array(Value::Int(n as i128), i.dtype(), i.weak_type())?;
    let wrapped = bind(&lax::ADD, &[i, &size], Params::new())?;
    crate::jit::jit(|(c, x, y): (Array, Array, Array)| {
        // An empty result selects nothing (`util._where` returns `x` as it is).
        if x.shape().contains(&0) {
            return Ok(x);
        }
        lax::ops::select_n(&c, &[&y, &x])
    })
    .named("_where")
    .call(&(negative, wrapped, i.clone()))
}

/// `jnp.take_along_axis(arr, indices, axis, mode=mode, fill_value=fill_value)`: the elements
/// of `arr` at `indices` along `axis` (`None`: of the flattened array), the other axes
/// matched (broadcast where `indices` has size 1). `None` mode fills as `"fill"` does;
/// negative indices wrap once unless the mode is `"promise_in_bounds"`.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_shape_vec(&[2, 3], vec![5i32, 3, 4, 2, 7, 6])?;
/// let i = Array::from_shape_vec(&[2, 1], vec![1i32, 0])?;
/// let t = jnp::take_along_axis(&x, &i, Some(1), None, None)?;
/// assert_eq!(t.to_vec::<i32>()?, [3, 2]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's: `TypeError` for non-integer indices; `ValueError` for ranks that differ, indices
/// not 1-D with `axis=None`, shapes that do not broadcast, an axis out of range.
pub fn take_along_axis<'a, 'b>(
    arr: impl Into<ArrayLike<'a>>,
    indices: impl Into<ArrayLike<'b>>,
    axis: Option<isize>,
    mode: Option<IndexMode>,
    fill_value: Option<Value>,
) -> Result<Array, Error> {
    let a = super::functions::arraylike(arr)?;
    let indices = super::functions::arraylike(indices)?;
    crate::jit::jit(move |(a, indices): (Array, Array)| {
        take_along_axis_traced(&a, &indices, axis, mode, fill_value)
    })
    .named("take_along_axis")
    .call(&(a, indices))
}

fn take_along_axis_traced(
    a: &Array,
    indices: &Array,
    axis: Option<isize>,
    mode: Option<IndexMode>,
    fill_value: Option<Value>,
) -> Result<Array, Error> {
    if !is_int(indices.dtype()) {
        return Err(type_error(format!(
            "take_along_axis indices must be of integer type, got {}",
            indices.dtype()
        )));
    }
    let (a, axis) = match axis {
        None => {
            if indices.ndim() != 1 {
                return Err(value_error(format!(
                    "take_along_axis indices must be 1D if axis=None, got shape {}",
                    py_shape(indices.shape())
                )));
            }
            (super::functions::ravel(a)?, 0isize)
        }
        Some(ax) => (a.clone(), ax),
    };
    let rank = a.ndim();
    if rank != indices.ndim() {
        return Err(value_error(format!(
            "indices and arr must have the same number of dimensions; {} vs. {}",
            indices.ndim(),
            rank
        )));
    }
    let axis = canonical_axis(axis, rank)?;
    let idx_shape = indices.shape().to_vec();
    let mut arr_shape = a.shape().to_vec();
    let axis_size = arr_shape[axis];
    arr_shape[axis] = 1;
    let out_shape = broadcast_shapes(&[&idx_shape, &arr_shape])?;
    if axis_size == 0 {
        let zero = scalar_array(Value::Int(0), a.dtype(), false)?;
        return lax::ops::broadcast_to(&zero, &out_shape);
    }
    // index_dtype_for_axis_size: wide enough to wrap negative indices (else unchanged).
    let wrap = mode != Some(IndexMode::PromiseInBounds);
    let dt = match wrap {
        false => indices.dtype(),
        true if axis_size > i32::MAX as usize => DType::Int64,
        true => DType::Int32,
    };
    let mut indices = convert(indices, dt)?;
    if wrap {
        indices = normalize(&indices, axis_size, false)?;
    }
    let index_dims: Vec<usize> = (0..rank)
        .filter(|&i| i == axis || idx_shape[i] != 1)
        .collect();
    let mut gather_shape: Vec<usize> = index_dims.iter().map(|&i| out_shape[i]).collect();
    gather_shape.push(1);
    let gather_indices = if indices.shape() == gather_shape.as_slice() {
        indices.clone()
    } else {
        bind(
            &lax::RESHAPE,
            &[&indices],
            Params::new()
                .with("dimensions", Param::None)
                .with("new_sizes", ints(&gather_shape))
                .with("sharding", Param::None),
        )?
    };
    let (mut slice_sizes, mut offset_dims, mut start_index_map, mut collapsed) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut operand_batching, mut indices_batching, mut squeezed) =
        (Vec::new(), Vec::new(), Vec::new());
    let (mut new_i, mut j) = (0i64, 0i64);
    for i in 0..rank {
        if i == axis {
            slice_sizes.push(1);
            start_index_map.push(new_i);
            collapsed.push(new_i);
            new_i += 1;
            j += 1;
        } else if idx_shape[i] == 1 {
            offset_dims.push(i as i64);
            slice_sizes.push(arr_shape[i]);
            new_i += 1;
        } else if arr_shape[i] == 1 {
            squeezed.push(i);
            j += 1;
        } else {
            slice_sizes.push(usize::from(arr_shape[i] != 0));
            operand_batching.push(new_i);
            indices_batching.push(j);
            new_i += 1;
            j += 1;
        }
    }
    let a = if squeezed.is_empty() {
        a
    } else {
        squeeze(&a, &squeezed)?
    };
    let dnums = GatherDimensionNumbers {
        offset_dims,
        collapsed_slice_dims: collapsed,
        start_index_map,
        operand_batching_dims: operand_batching,
        start_indices_batching_dims: indices_batching,
    };
    let gmode = gs_mode(
        Some(mode.unwrap_or(IndexMode::Fill)),
        lax::gather::Mode::FillOrDrop,
    )?;
    let fill = if gmode == lax::gather::Mode::FillOrDrop {
        fill_value
    } else {
        None
    };
    bind_gather(
        &a,
        &gather_indices,
        dnums,
        &slice_sizes,
        gmode,
        fill,
        (false, false),
    )
}
