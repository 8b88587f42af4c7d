//! `jnp.sort`, `jnp.argsort`, `jnp.lexsort`, `jnp.searchsorted`, `jnp.partition`,
//! `jnp.argpartition`, `jnp.unique`, `jnp.nonzero`, `jnp.argwhere` and `jnp.flatnonzero`, as
//! `jax/_src/numpy/sorting.py`, `setops.py` and `lax_numpy.py` build them on `lax.sort`,
//! `lax.top_k`, gathers and scatters:
//!
//! - `sort`/`argsort`: the flattened array for `axis=None`; descending by reversing the
//!   ascending result (and, for a stable descending `argsort`, the keys and the iota before
//!   it, so that equal keys keep their order); `argsort`'s indices in the default integer.
//! - `lexsort`: one stable sort of the keys (the last primary) and an iota.
//! - `searchsorted`: JAX's four methods, each computing what JAX's computes (also on an
//!   unsorted `a`): the binary search of `'scan'`/`'scan_unrolled'` (every query at once,
//!   one level a step), `'compare_all'`'s count, `'sort'`'s ranks; JAX's sort order (NaNs
//!   last, `-0.0 == 0.0`); int32 indices (int64 past 2^31 elements, with x64).
//! - `partition`/`argpartition`: two `top_k`s (the `kth + 1` smallest, largest first as
//!   `top_k` of the negation leaves them, then the rest, largest first; `argpartition`'s
//!   rest in index order), so that the output order is JAX's, not only a partition.
//! - `unique`: a lexicographic sort of the rows along the axis and a mask of first
//!   occurrences; without `size` it needs concrete input, with `size` it works under `jit`.
//! - `nonzero`: JAX's `bincount`/`cumsum` construction; without `size` it needs a concrete
//!   count. The concrete-only paths on a tracer raise JAX's `ConcretizationTypeError`.

use std::str::FromStr;

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Value};

use super::functions::{arraylike, ravel, to_bool};
use super::indexing::{At, Index, IndexMode};
use super::shape::axis as canonical_axis;
use super::{ArrayLike, Axes, Family, promote_only};
use crate::array::Array;
use crate::config::{default_int, rules};
use crate::core::{Param, Params, bind};
use crate::lax;

fn rev(x: &Array, dim: usize) -> Result<Array, Error> {
    Ok(bind(
        &lax::REV,
        &[x],
        &Params::new().with("dimensions", Param::Ints(vec![dim as i64])),
    )?
    .remove(0))
}

/// The array to sort and the dimension: flattened for `None`, else the axis made positive.
fn prepared(x: &Array, axis: Option<isize>) -> Result<(Array, usize), Error> {
    match axis {
        None => Ok((ravel(x)?, 0)),
        Some(a) => Ok((x.clone(), canonical_axis(a, x.ndim())?)),
    }
}

fn sort_params(dim: usize, stable: bool) -> Params {
    Params::new()
        .with("dimension", Param::Int(dim as i64))
        .with("is_stable", Param::Bool(stable))
        .with("num_keys", Param::Int(1))
}

/// `jnp.sort(a, axis, stable=stable, descending=descending)`: NaNs last (first when
/// descending), `-0.0` and `+0.0` equal.
///
/// ```
/// use dtype_lattice_array::{Array, numpy as jnp};
/// let x = Array::from_vec(vec![3.0f32, f32::NAN, -1.0, 2.0]);
/// let y = jnp::sort(&x, Some(-1), true, false)?;
/// assert_eq!(&y.to_vec::<f32>()?[..3], [-1.0, 2.0, 3.0]);
/// assert!(y.to_vec::<f32>()?[3].is_nan());
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// NumPy's `ValueError` for an axis out of range; key arrays.
pub fn sort<'a>(
    a: impl Into<super::ArrayLike<'a>>,
    axis: Option<isize>,
    stable: bool,
    descending: bool,
) -> Result<Array, Error> {
    let x = arraylike(a)?;
    let (x, dim) = prepared(&x, axis)?;
    if x.ndim() == 0 {
        return Ok(x);
    }
    let y = bind(&lax::SORT, &[&x], &sort_params(dim, stable))?.remove(0);
    if descending { rev(&y, dim) } else { Ok(y) }
}

/// `jnp.argsort(a, axis, stable=stable, descending=descending)`: the indices that sort `a`
/// along `axis` (the default integer type; ties in order when `stable`, also descending).
///
/// ```
/// use dtype_lattice_array::{Array, numpy as jnp};
/// let x = Array::from_vec(vec![2.0f32, 1.0, 2.0, 0.0]);
/// assert_eq!(jnp::argsort(&x, Some(0), true, false)?.to_vec::<i32>()?, [3, 1, 0, 2]);
/// assert_eq!(jnp::argsort(&x, Some(0), true, true)?.to_vec::<i32>()?, [0, 2, 1, 3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// NumPy's `ValueError` for an axis out of range; key arrays.
pub fn argsort<'a>(
    a: impl Into<super::ArrayLike<'a>>,
    axis: Option<isize>,
    stable: bool,
    descending: bool,
) -> Result<Array, Error> {
    let x = arraylike(a)?;
    let (x, dim) = prepared(&x, axis)?;
    let x = if x.ndim() == 0 { ravel(&x)? } else { x };
    // JAX: int32 where the dimension fits, then the default integer (int64 under x64).
    let idx_dtype = if x.shape()[dim] as u64 > i32::MAX as u64 {
        dtype_lattice::DType::Int64
    } else {
        default_int(&rules())
    };
    let iota = bind(
        &lax::IOTA,
        &[],
        &Params::new()
            .with("dimension", Param::Int(dim as i64))
            .with("dtype", Param::DType(idx_dtype))
            .with(
                "shape",
                Param::Ints(x.shape().iter().map(|&d| d as i64).collect()),
            )
            .with("sharding", Param::None),
    )?
    .remove(0);
    let (x, iota) = if descending && stable {
        (rev(&x, dim)?, rev(&iota, dim)?)
    } else {
        (x, iota)
    };
    let mut out = bind(&lax::SORT, &[&x, &iota], &sort_params(dim, stable))?;
    let idx = out.pop().expect("sort returns its operands");
    if descending { rev(&idx, dim) } else { Ok(idx) }
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn value_error(msg: impl Into<String>) -> Error {
    Error::refused(Exception::ValueError, msg)
}

fn ints(v: &[usize]) -> Param {
    Param::Ints(v.iter().map(|&d| d as i64).collect())
}

fn bind1(p: &'static crate::core::Primitive, x: &[&Array], params: Params) -> Result<Array, Error> {
    lax::bind1(p, x, &params)
}

fn iota(dtype: DType, shape: &[usize], dim: usize) -> Result<Array, Error> {
    bind1(
        &lax::IOTA,
        &[],
        Params::new()
            .with("dimension", Param::Int(dim as i64))
            .with("dtype", Param::DType(dtype))
            .with("shape", ints(shape))
            .with("sharding", Param::None),
    )
}

fn reshape(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    bind1(
        &lax::RESHAPE,
        &[x],
        Params::new()
            .with("dimensions", Param::None)
            .with("new_sizes", ints(shape))
            .with("sharding", Param::None),
    )
}

fn transpose(x: &Array, perm: &[usize]) -> Result<Array, Error> {
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(x.clone());
    }
    bind1(
        &lax::TRANSPOSE,
        &[x],
        Params::new().with("permutation", ints(perm)),
    )
}

/// `jnp.moveaxis(x, src, dst)` (both positive).
fn moveaxis(x: &Array, src: usize, dst: usize) -> Result<Array, Error> {
    let mut perm: Vec<usize> = (0..x.ndim()).filter(|&d| d != src).collect();
    perm.insert(dst, src);
    transpose(x, &perm)
}

/// `jnp.swapaxes(x, a, b)`.
fn swapaxes(x: &Array, a: usize, b: usize) -> Result<Array, Error> {
    let mut perm: Vec<usize> = (0..x.ndim()).collect();
    perm.swap(a, b);
    transpose(x, &perm)
}

fn concatenate(xs: &[&Array], dim: usize) -> Result<Array, Error> {
    if xs.len() == 1 {
        return Ok(xs[0].clone());
    }
    bind1(
        &lax::CONCATENATE,
        xs,
        Params::new().with("dimension", Param::Int(dim as i64)),
    )
}

fn convert(x: &Array, dtype: DType) -> Result<Array, Error> {
    if x.dtype() == dtype && !x.weak_type() {
        return Ok(x.clone());
    }
    lax::ops::convert(x, dtype, false)
}

/// A strongly typed constant of `dtype` broadcast to `shape`.
fn full(shape: &[usize], v: Value, dtype: DType) -> Result<Array, Error> {
    let c = crate::array::scalar_array(v, dtype, false)?;
    lax::ops::broadcast_to(&c, shape)
}

/// Host integers as an array of `dtype`.
fn host_ints(values: Vec<i64>, dtype: DType) -> Result<Array, Error> {
    convert(&Array::from_vec(values), dtype)
}

/// `x[lo:hi]` along the first axis.
fn rows(x: &Array, lo: Option<isize>, hi: Option<isize>) -> Result<Array, Error> {
    super::index(x, &[Index::Slice(lo, hi, 1)])
}

/// `core.concrete_or_error(None, x, context)`: `x`'s concrete value, or JAX's
/// `ConcretizationTypeError` naming `context` (the crate's message with its second line,
/// which names the operation, replaced by JAX's context for the function).
fn concrete_or_error(x: &Array, context: &str) -> Result<Array, Error> {
    match x.concrete() {
        Ok(c) => Ok(c.into_owned()),
        Err(e) if e.exception() == Some(Exception::ConcretizationTypeError) => {
            let message = e.message();
            let mut lines: Vec<&str> = message.lines().collect();
            if lines.len() > 1 {
                lines[1] = context;
            } else {
                lines.push(context);
            }
            Err(Error::refused(
                Exception::ConcretizationTypeError,
                lines.join("\n"),
            ))
        }
        Err(e) => Err(e),
    }
}

/// `lax_utils.int_dtype_for_dim(n, signed=True)`: int32 where `n` fits, else int64.
fn index_dtype_for(n: usize) -> DType {
    if n as u64 > i32::MAX as u64 {
        DType::Int64
    } else {
        DType::Int32
    }
}

// ---------------------------------------------------------------------------------------
// lexsort
// ---------------------------------------------------------------------------------------

/// `jnp.lexsort(keys, axis)`: the indices that sort the keys lexicographically along `axis`,
/// the last key primary (one stable `lax.sort` of the reversed keys and an iota; NaNs last,
/// `-0.0` equal to `0.0`), in the default integer type.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let k1 = Array::from_vec(vec![4i32, 2, 3, 2, 5]);
/// let k2 = Array::from_vec(vec![2i32, 1, 1, 2, 2]);
/// let idx = jnp::lexsort(&[(&k1).into(), (&k2).into()], -1)?;
/// assert_eq!(idx.to_vec::<i32>()?, [1, 2, 3, 0, 4]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `TypeError` for no keys, `ValueError` for keys of different shapes or an axis out
/// of range.
pub fn lexsort(keys: &[ArrayLike<'_>], axis: isize) -> Result<Array, Error> {
    let keys: Vec<Array> = keys
        .iter()
        .map(|k| arraylike(k.clone()))
        .collect::<Result<_, _>>()?;
    if keys.is_empty() {
        return Err(Error::refused(
            Exception::TypeError,
            "need sequence of keys with len > 0 in lexsort",
        ));
    }
    if super::is_numpy(&rules()) {
        return lexsort_traced(&keys, axis);
    }
    // JAX's `lexsort` is a jitted function (`axis` static).
    crate::jit::jit(move |keys: Vec<Array>| lexsort_traced(&keys, axis))
        .named("lexsort")
        .call(&keys)
}

fn lexsort_traced(keys: &[Array], axis: isize) -> Result<Array, Error> {
    let Some(first) = keys.first() else {
        return Err(Error::refused(
            Exception::TypeError,
            "need sequence of keys with len > 0 in lexsort",
        ));
    };
    if keys.iter().any(|k| k.shape() != first.shape()) {
        return Err(value_error("all keys need to be the same shape"));
    }
    let int = default_int(&rules());
    if first.ndim() == 0 {
        return full(&[], Value::Int(0), int);
    }
    let dim = canonical_axis(axis, first.ndim())?;
    let idx_dtype = match index_dtype_for(first.shape()[dim]) {
        DType::Int32 => int,
        d => d,
    };
    let iota = iota(idx_dtype, first.shape(), dim)?;
    let mut operands: Vec<&Array> = keys.iter().rev().collect();
    operands.push(&iota);
    let params = Params::new()
        .with("dimension", Param::Int(dim as i64))
        .with("is_stable", Param::Bool(true))
        .with("num_keys", Param::Int(keys.len() as i64));
    let mut out = bind(&lax::SORT, &operands, &params)?;
    Ok(out.pop().expect("sort returns its operands"))
}

// ---------------------------------------------------------------------------------------
// searchsorted
// ---------------------------------------------------------------------------------------

/// Which insertion point `searchsorted` answers for a value equal to elements of `a`.
///
/// ```
/// use dtype_lattice_array::numpy::Side;
/// assert_eq!("right".parse::<Side>()?, Side::Right);
/// let e = "middle".parse::<Side>().unwrap_err();
/// assert_eq!(e.message(), "invalid argument side='middle', expected 'left' or 'right'");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Side {
    /// Before the equal elements (`side='left'`).
    #[default]
    Left,
    /// After them (`side='right'`).
    Right,
}

impl FromStr for Side {
    type Err = Error;

    /// `"left"` or `"right"`.
    ///
    /// # Errors
    ///
    /// JAX's `ValueError` for another name.
    fn from_str(s: &str) -> Result<Side, Error> {
        match s {
            "left" => Ok(Side::Left),
            "right" => Ok(Side::Right),
            _ => Err(value_error(format!(
                "invalid argument side='{s}', expected 'left' or 'right'"
            ))),
        }
    }
}

/// How `searchsorted` searches (JAX's `method`); on a sorted `a` all agree.
///
/// ```
/// use dtype_lattice_array::numpy::SearchMethod;
/// assert_eq!("compare_all".parse::<SearchMethod>()?, SearchMethod::CompareAll);
/// assert!("bisect".parse::<SearchMethod>().is_err());
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchMethod {
    /// A binary search, one level a step (`'scan'`, JAX's default).
    #[default]
    Scan,
    /// The same search unrolled (`'scan_unrolled'`).
    ScanUnrolled,
    /// The count of the elements before each query (`'compare_all'`).
    CompareAll,
    /// Ranks in a sort of `a` and the queries together (`'sort'`).
    Sort,
}

impl FromStr for SearchMethod {
    type Err = Error;

    /// `"scan"`, `"scan_unrolled"`, `"compare_all"` or `"sort"`.
    ///
    /// # Errors
    ///
    /// JAX's `ValueError` for another name.
    fn from_str(s: &str) -> Result<SearchMethod, Error> {
        match s {
            "scan" => Ok(SearchMethod::Scan),
            "scan_unrolled" => Ok(SearchMethod::ScanUnrolled),
            "compare_all" => Ok(SearchMethod::CompareAll),
            "sort" => Ok(SearchMethod::Sort),
            _ => Err(value_error(format!(
                "invalid argument method='{s}', expected one of ['compare_all', 'scan', \
                 'scan_unrolled', 'sort']"
            ))),
        }
    }
}

fn cmp(p: &'static crate::core::Primitive, x: &Array, y: &Array) -> Result<Array, Error> {
    bind1(p, &[x, y], Params::new())
}

fn isnan(x: &Array) -> Result<Array, Error> {
    cmp(&lax::NE, x, x)
}

/// JAX's sort comparator on two operands of one dtype and shape (`_sort_lt_comparator`,
/// `or_equal`: `_sort_le_comparator`): floats in the total order `-inf < … < inf < NaN` with
/// `-0.0 == 0.0` and every NaN equal, complex numbers by real then imaginary part.
fn sort_less(x: &Array, y: &Array, or_equal: bool) -> Result<Array, Error> {
    match x.dtype().kind() {
        Kind::Float => float_less(x, y, or_equal),
        Kind::Complex => {
            let re = |a: &Array| bind1(&lax::REAL, &[a], Params::new());
            let im = |a: &Array| bind1(&lax::IMAG, &[a], Params::new());
            let (xr, yr, xi, yi) = (re(x)?, re(y)?, im(x)?, im(y)?);
            let lt = float_less(&xr, &yr, false)?;
            let eq = cmp(
                &lax::OR,
                &cmp(&lax::EQ, &xr, &yr)?,
                &cmp(&lax::AND, &isnan(&xr)?, &isnan(&yr)?)?,
            )?;
            let rest = cmp(&lax::AND, &eq, &float_less(&xi, &yi, or_equal)?)?;
            cmp(&lax::OR, &lt, &rest)
        }
        _ => cmp(if or_equal { &lax::LE } else { &lax::LT }, x, y),
    }
}

fn float_less(x: &Array, y: &Array, or_equal: bool) -> Result<Array, Error> {
    if or_equal {
        // x <= y, or y is NaN.
        cmp(&lax::OR, &cmp(&lax::LE, x, y)?, &isnan(y)?)
    } else {
        // x < y, or y is NaN and x is not.
        let nan_after = cmp(
            &lax::AND,
            &isnan(y)?,
            &bind1(&lax::NOT, &[&isnan(x)?], Params::new())?,
        )?;
        cmp(&lax::OR, &cmp(&lax::LT, x, y)?, &nan_after)
    }
}

/// `jnp.searchsorted(a, v, side, sorter, method=method)`: where each value of `v` would be
/// inserted into the sorted one-dimensional `a` (`a[sorter]` when `sorter` is given) to keep
/// it sorted, in JAX's sort order (NaNs last); int32 indices (int64 for more than 2^31
/// elements under x64). `a` and `v` are promoted together first.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// use dtype_lattice_array::numpy::{SearchMethod, Side};
/// let a = Array::from_vec(vec![1i32, 2, 2, 3, 4, 5, 5]);
/// let v = Array::from_vec(vec![0.0f32, 3.0, 8.0, 1.5, 2.0]);
/// let i = jnp::searchsorted(&a, &v, Side::Left, None, SearchMethod::Scan)?;
/// assert_eq!(i.to_vec::<i32>()?, [0, 3, 7, 1, 1]);
/// let r = jnp::searchsorted(&a, 2, Side::Right, None, SearchMethod::Sort)?;
/// assert_eq!(r.to_vec::<i32>()?, [3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` when `a` is not one-dimensional; promotion refusals; `sorter`'s
/// indexing errors.
pub fn searchsorted<'a, 'v>(
    a: impl Into<ArrayLike<'a>>,
    v: impl Into<ArrayLike<'v>>,
    side: Side,
    sorter: Option<&Array>,
    method: SearchMethod,
) -> Result<Array, Error> {
    let (a, v) = (a.into(), v.into());
    if arraylike(a.clone())?.ndim() != 1 {
        return Err(value_error("a should be 1-dimensional"));
    }
    let mut promoted = promote_only(None, Family::Any, &[a, v])?;
    let v = promoted.pop().expect("two operands");
    let mut a = promoted.pop().expect("two operands");
    if let Some(s) = sorter {
        a = super::index(&a, &[Index::Array(s.clone())])?;
    }
    let n = a.shape()[0];
    let dtype = index_dtype_for(n).canonicalize(rules().options().x64);
    if n == 0 {
        return full(v.shape(), Value::Int(0), dtype);
    }
    let (a, v) = (a.with_weak_type(false), v.with_weak_type(false));
    match method {
        SearchMethod::Scan | SearchMethod::ScanUnrolled => search_scan(&a, &v, side, dtype),
        SearchMethod::CompareAll => search_compare_all(&a, &v, side, dtype),
        SearchMethod::Sort => search_sort(&a, &v, side, dtype),
    }
}

/// `_searchsorted_scan_impl`: `ceil(log2(n + 1))` halvings of `[low, high)` from `[0, n)`,
/// going left where the query is before `a[mid]` (`<=` for `'left'`, `<` for `'right'`).
fn search_scan(a: &Array, v: &Array, side: Side, dtype: DType) -> Result<Array, Error> {
    let n = a.shape()[0];
    let unsigned = if dtype.bits() == 64 {
        DType::UInt64
    } else {
        DType::UInt32
    };
    let levels = usize::BITS - n.leading_zeros();
    let mut low = full(v.shape(), Value::Int(0), unsigned)?;
    let mut high = full(v.shape(), Value::Int(n as i128), unsigned)?;
    let two = full(v.shape(), Value::Int(2), unsigned)?;
    for _ in 0..levels {
        let half = cmp(&lax::DIV, &cmp(&lax::SUB, &high, &low)?, &two)?;
        let mid = cmp(&lax::ADD, &low, &half)?;
        let at = a
            .at(&[Index::Array(mid.clone())])
            .get(Some(IndexMode::Clip), None)?;
        let left = sort_less(v, &at, side == Side::Left)?;
        let new_low = lax::ops::select_n(&left, &[&mid, &low])?;
        high = lax::ops::select_n(&left, &[&high, &mid])?;
        low = new_low;
    }
    convert(&high, dtype)
}

/// `_searchsorted_compare_all_impl`: the count of the elements of `a` before each query
/// (`a[i] < v` for `'left'`, `<=` for `'right'`).
fn search_compare_all(a: &Array, v: &Array, side: Side, dtype: DType) -> Result<Array, Error> {
    let n = a.shape()[0];
    let mut shape = vec![n];
    shape.extend_from_slice(v.shape());
    let dims: Vec<usize> = (1..shape.len()).collect();
    let bcast = |x: &Array, dims: &[usize]| {
        bind1(
            &lax::BROADCAST_IN_DIM,
            &[x],
            Params::new()
                .with("shape", ints(&shape))
                .with("broadcast_dimensions", ints(dims))
                .with("sharding", Param::None),
        )
    };
    let aa = bcast(a, &[0])?;
    let vv = bcast(v, &dims)?;
    let before = sort_less(&aa, &vv, side == Side::Right)?;
    let counts = convert(&before, dtype)?;
    bind1(
        &lax::REDUCE_SUM,
        &[&counts],
        Params::new()
            .with("axes", Param::Ints(vec![0]))
            .with("out_sharding", Param::None),
    )
}

/// The rank of each element of the one-dimensional `x` in its stable sort (int32).
fn rank(x: &Array) -> Result<Array, Error> {
    let idx = iota(DType::Int32, x.shape(), 0)?;
    let params = Params::new()
        .with("dimension", Param::Int(0))
        .with("is_stable", Param::Bool(true))
        .with("num_keys", Param::Int(1));
    let perm = bind(&lax::SORT, &[x, &idx], &params)?.pop().expect("two");
    // The inverse of the permutation: sorting it carries the positions along.
    Ok(bind(&lax::SORT, &[&perm, &idx], &params)?
        .pop()
        .expect("two"))
}

/// `_searchsorted_sort_impl`: the queries' ranks among `a` and the queries (queries first
/// for `'left'`, last for `'right'`) less their ranks among themselves.
fn search_sort(a: &Array, v: &Array, side: Side, dtype: DType) -> Result<Array, Error> {
    let q = reshape(v, &[v.size()])?;
    let (n, m) = (a.shape()[0], q.shape()[0]);
    let index = match side {
        Side::Left => {
            let r = rank(&concatenate(&[&q, a], 0)?)?;
            rows(&r, None, Some(m as isize))?
        }
        Side::Right => {
            let r = rank(&concatenate(&[a, &q], 0)?)?;
            rows(&r, Some(n as isize), None)?
        }
    };
    let out = cmp(&lax::SUB, &index, &rank(&q)?)?;
    convert(&reshape(&out, v.shape())?, dtype)
}

// ---------------------------------------------------------------------------------------
// partition, argpartition
// ---------------------------------------------------------------------------------------

fn top_k(x: &Array, k: usize) -> Result<(Array, Array), Error> {
    let params = Params::new()
        .with("axis", Param::Int(x.ndim() as i64 - 1))
        .with("k", Param::Int(k as i64));
    let mut out = bind(&lax::TOP_K, &[x], &params)?;
    let idx = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), idx))
}

/// The operand along the last axis, `kth` made positive, and what `top_k` takes for the
/// smallest `kth + 1` (`-x`; unsigned: `-(x + 1)`, so that 0 comes last).
fn partition_setup(
    name: &str,
    a: ArrayLike<'_>,
    kth: isize,
    axis: isize,
) -> Result<(Array, usize, usize, Array), Error> {
    let arr = arraylike(a)?;
    if arr.dtype().kind() == Kind::Complex {
        return Err(Error::refused(
            Exception::NotImplementedError,
            format!("jnp.{name} for complex dtype is not implemented."),
        ));
    }
    let axis = canonical_axis(axis, arr.ndim())?;
    let kth = canonical_axis(kth, arr.shape()[axis])?;
    let last = arr.ndim() - 1;
    let arr = swapaxes(&arr, axis, last)?;
    let negated = if arr.dtype().kind() == Kind::UnsignedInt {
        super::negative(super::add(&arr, 1)?)?
    } else {
        super::negative(&arr)?
    };
    Ok((arr, axis, kth, negated))
}

/// `jnp.partition(a, kth, axis)`: `a` partially sorted along `axis` as JAX orders it: the
/// `kth + 1` smallest values first, largest of them last (so the `kth` value is in place),
/// then the others from the largest down (two `lax.top_k`s; NaNs largest, those with the
/// sign bit smallest).
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_vec(vec![6i32, 8, 4, 3, 1, 9, 7, 5, 2, 3]);
/// let p = jnp::partition(&x, 4, -1)?;
/// assert_eq!(p.to_vec::<i32>()?, [1, 2, 3, 3, 4, 9, 8, 7, 6, 5]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `NotImplementedError` for complex arrays, `ValueError` for an axis or `kth` out
/// of range, `TypeError` for booleans (which `neg` refuses).
pub fn partition<'a>(a: impl Into<ArrayLike<'a>>, kth: isize, axis: isize) -> Result<Array, Error> {
    let a = arraylike(a)?;
    if super::is_numpy(&rules()) {
        return partition_traced(&a, kth, axis);
    }
    // JAX's `partition` is a jitted function (`kth` and `axis` static).
    crate::jit::jit(move |a: Array| partition_traced(&a, kth, axis))
        .named("partition")
        .call(&a)
}

fn partition_traced(a: &Array, kth: isize, axis: isize) -> Result<Array, Error> {
    let (arr, axis, kth, negated) = partition_setup("partition", a.into(), kth, axis)?;
    let n = arr.shape()[arr.ndim() - 1];
    let (low, _) = top_k(&negated, kth + 1)?;
    let bottom = if arr.dtype().kind() == Kind::UnsignedInt {
        super::subtract(super::negative(&low)?, 1)?
    } else {
        super::negative(&low)?
    };
    let (top, _) = top_k(&arr, n - kth - 1)?;
    let out = concatenate(&[&bottom, &top], arr.ndim() - 1)?;
    swapaxes(&out, arr.ndim() - 1, axis)
}

/// `jnp.argpartition(a, kth, axis)`: the indices of [`partition`]'s values in JAX's order:
/// those of the `kth + 1` smallest (the `kth` last), then the others in increasing index
/// order (int32, as `lax.top_k` gives them).
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_vec(vec![6i32, 8, 4, 3, 1, 9, 7, 5, 2, 3]);
/// let i = jnp::argpartition(&x, 4, -1)?;
/// assert_eq!(i.to_vec::<i32>()?, [4, 8, 3, 9, 2, 0, 1, 5, 6, 7]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`partition`].
pub fn argpartition<'a>(
    a: impl Into<ArrayLike<'a>>,
    kth: isize,
    axis: isize,
) -> Result<Array, Error> {
    let a = arraylike(a)?;
    if super::is_numpy(&rules()) {
        return argpartition_traced(&a, kth, axis);
    }
    // JAX's `argpartition` is a jitted function (`kth` and `axis` static).
    crate::jit::jit(move |a: Array| argpartition_traced(&a, kth, axis))
        .named("argpartition")
        .call(&a)
}

/// `argpartition` as JAX builds it: the proxy's zeros set by `a.at[i].set(0)` under one
/// `vmap` per batch dimension.
fn argpartition_traced(a: &Array, kth: isize, axis: isize) -> Result<Array, Error> {
    fn set_to_zero(depth: usize, proxy: Array, i: Array) -> Result<Array, Error> {
        if depth == 0 {
            return proxy.at(&[Index::Array(i)]).set(0, None);
        }
        crate::interpreters::vmap(move |(p, i): (Array, Array)| set_to_zero(depth - 1, p, i))
            .call(&(proxy, i))
    }
    let (arr, axis, kth, negated) = partition_setup("argpartition", a.into(), kth, axis)?;
    let last = arr.ndim() - 1;
    let n = arr.shape()[last];
    let (_, bottom) = top_k(&negated, kth + 1)?;
    // `jnp.ones(shape)`: the default float.
    let float = if rules().options().x64 {
        DType::Float64
    } else {
        DType::Float32
    };
    let ones = super::ones(arr.shape(), float)?;
    let proxy = set_to_zero(last, ones, bottom.clone())?;
    let (_, top) = top_k(&proxy, n - kth - 1)?;
    let out = concatenate(&[&bottom, &top], last)?;
    swapaxes(&out, last, axis)
}

// ---------------------------------------------------------------------------------------
// unique
// ---------------------------------------------------------------------------------------

const UNIQUE_SIZE_HINT: &str = "To make jnp.unique() compatible with JIT and other \
    transforms, you can specify a concrete value for the size argument, which will \
    determine the output size.";

/// The keyword arguments of [`unique`] (`jnp.unique`'s defaults: no extra outputs, the
/// flattened array, no `size`, `equal_nan=True`).
///
/// ```
/// use dtype_lattice_array::numpy::UniqueOptions;
/// let opts = UniqueOptions { axis: Some(0), return_inverse: true, ..UniqueOptions::default() };
/// assert!(opts.equal_nan && opts.size.is_none());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct UniqueOptions {
    /// Also return the index of each unique value's first occurrence (`return_index`).
    pub return_index: bool,
    /// Also return, for each element, the index of its unique value (`return_inverse`).
    pub return_inverse: bool,
    /// Also return how often each unique value occurs (`return_counts`).
    pub return_counts: bool,
    /// The axis whose slices are compared (`None`: the flattened array's elements).
    pub axis: Option<isize>,
    /// A static output length (padded or truncated); without it the input must be concrete.
    pub size: Option<usize>,
    /// What pads the values past the number of unique ones when `size` is given (else the
    /// smallest value).
    pub fill_value: Option<Value>,
    /// Whether NaNs count as one value.
    pub equal_nan: bool,
}

impl Default for UniqueOptions {
    fn default() -> UniqueOptions {
        UniqueOptions {
            return_index: false,
            return_inverse: false,
            return_counts: false,
            axis: None,
            size: None,
            fill_value: None,
            equal_nan: true,
        }
    }
}

/// What [`unique`] returns: the values and the outputs its options asked for.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// use dtype_lattice_array::numpy::UniqueOptions;
/// let x = Array::from_vec(vec![2.0f32, f32::NAN, 2.0]);
/// let opts = UniqueOptions { return_index: true, ..UniqueOptions::default() };
/// let u = jnp::unique(&x, &opts)?;
/// assert_eq!(u.indices.unwrap().to_vec::<i32>()?, [0, 1]); // NaN sorts last
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Unique {
    /// The sorted unique values (slices along the axis).
    pub values: Array,
    /// The index of each one's first occurrence (`return_index`).
    pub indices: Option<Array>,
    /// For each element (slice), the index of its unique value (`return_inverse`).
    pub inverse: Option<Array>,
    /// How often each one occurs (`return_counts`).
    pub counts: Option<Array>,
}

impl Unique {
    /// The outputs in `jnp.unique`'s tuple order: values, then those asked for.
    ///
    /// ```
    /// use dtype_lattice_array::{numpy as jnp, Array};
    /// use dtype_lattice_array::numpy::UniqueOptions;
    /// let x = Array::from_vec(vec![3i32, 3, 1]);
    /// let opts = UniqueOptions { return_counts: true, ..UniqueOptions::default() };
    /// let out = jnp::unique(&x, &opts)?.into_vec();
    /// assert_eq!(out[1].to_vec::<i32>()?, [1, 2]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    pub fn into_vec(self) -> Vec<Array> {
        std::iter::once(self.values)
            .chain(self.indices)
            .chain(self.inverse)
            .chain(self.counts)
            .collect()
    }
}

/// `_unique_sorted_mask`: the slices along `axis` sorted lexicographically (moved to the
/// front), the mask of first occurrences, and the permutation.
fn unique_sorted_mask(
    ar: &Array,
    axis: usize,
    equal_nan: bool,
) -> Result<(Array, Array, Array), Error> {
    let mut aux = moveaxis(ar, axis, 0)?;
    let int = default_int(&rules());
    if aux.dtype().kind() == Kind::Complex {
        let nan = crate::array::scalar_array(Value::Float(f64::NAN), aux.dtype(), false)?;
        let nan = lax::ops::broadcast_to(&nan, aux.shape())?;
        aux = lax::ops::select_n(&isnan(&aux)?, &[&aux, &nan])?;
    }
    let mut size = aux.shape()[0];
    let rest: usize = aux.shape()[1..].iter().product();
    let perm = if rest == 0 {
        size = 1;
        full(&[1], Value::Int(0), int)?
    } else {
        // lexsort of the columns reversed: the first column is the primary key.
        let cols = transpose(&reshape(&aux, &[size, rest])?, &[1, 0])?;
        let keys: Vec<ArrayLike<'_>> = (0..rest)
            .rev()
            .map(|c| super::index(&cols, &[Index::At(c as isize)]).map(ArrayLike::Owned))
            .collect::<Result<_, _>>()?;
        lexsort(&keys, -1)?
    };
    let aux = super::index(&aux, &[Index::Array(perm.clone())])?;
    let mask = if aux.size() > 0 {
        let (x, y) = (rows(&aux, Some(1), None)?, rows(&aux, None, Some(-1))?);
        let mut neq = cmp(&lax::NE, &x, &y)?;
        if equal_nan && matches!(aux.dtype().kind(), Kind::Float | Kind::Complex) {
            let both = cmp(&lax::AND, &isnan(&x)?, &isnan(&y)?)?;
            let not_both = bind1(&lax::NOT, &[&both], Params::new())?;
            neq = cmp(&lax::AND, &neq, &not_both)?;
        }
        let axes: Vec<isize> = (1..neq.ndim() as isize).collect();
        let any = if axes.is_empty() {
            neq
        } else {
            super::any(&neq, Axes::Some(axes), false)?
        };
        concatenate(&[&full(&[1], Value::Bool(true), DType::Bool)?, &any], 0)?
    } else {
        full(&[size], Value::Bool(false), DType::Bool)?
    };
    Ok((aux, mask, perm))
}

/// `jnp.unique(ar, return_index, return_inverse, return_counts, axis, equal_nan=…, size=…,
/// fill_value=…)`: the sorted unique elements (slices along `axis`), NaNs one value when
/// `equal_nan`, `-0.0` and `0.0` one value (the first in sorted order kept). Without `size`
/// the input must be concrete (outside `jit`); with `size` the outputs have that length,
/// padded with `fill_value` (the values; by default the smallest) and the first index.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// use dtype_lattice_array::numpy::UniqueOptions;
/// let x = Array::from_vec(vec![3i32, 1, 3, 2, 1]);
/// let opts = UniqueOptions { return_counts: true, ..UniqueOptions::default() };
/// let u = jnp::unique(&x, &opts)?;
/// assert_eq!(u.values.to_vec::<i32>()?, [1, 2, 3]);
/// assert_eq!(u.counts.unwrap().to_vec::<i32>()?, [2, 1, 2]);
/// let opts = UniqueOptions { size: Some(5), fill_value: Some(0.into()), ..UniqueOptions::default() };
/// assert_eq!(jnp::unique(&x, &opts)?.values.to_vec::<i32>()?, [1, 2, 3, 0, 0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ConcretizationTypeError` without `size` on a traced array; `ValueError` for an
/// axis out of range, or an empty input with a nonzero `size` and no `fill_value`.
pub fn unique<'a>(ar: impl Into<ArrayLike<'a>>, options: &UniqueOptions) -> Result<Unique, Error> {
    let mut arr = arraylike(ar)?;
    if options.size.is_none() {
        arr = concrete_or_error(
            &arr,
            &format!("The error arose for the first argument of jnp.unique(). {UNIQUE_SIZE_HINT}"),
        )?;
    }
    let arr_shape = arr.shape().to_vec();
    let (arr, axis) = match options.axis {
        None => (reshape(&arr, &[arr.size()])?, 0),
        Some(a) => {
            let d = canonical_axis(a, arr.ndim())?;
            (arr, d)
        }
    };
    let mut out = unique_along(&arr, axis, options)?;
    if let (Some(inv), None) = (&out.inverse, options.axis) {
        out.inverse = Some(reshape(inv, &arr_shape)?);
    }
    Ok(out)
}

/// `_unique(ar, axis, …)`.
fn unique_along(ar: &Array, axis: usize, options: &UniqueOptions) -> Result<Unique, Error> {
    let int = default_int(&rules());
    let n = ar.shape()[axis];
    if n == 0 && options.size.is_some_and(|s| s > 0) && options.fill_value.is_none() {
        return Err(value_error(
            "jnp.unique: for zero-sized input with nonzero size argument, fill_value must be \
             specified",
        ));
    }
    let (aux, mask, perm) = unique_sorted_mask(ar, axis, options.equal_nan)?;
    let ind = match options.size {
        None => {
            let m: Vec<bool> = concrete_or_error(
                &mask,
                &format!("The error arose in jnp.unique(). {UNIQUE_SIZE_HINT}"),
            )?
            .to_vec()?;
            let hits: Vec<i64> = (0..m.len() as i64).filter(|&i| m[i as usize]).collect();
            host_ints(hits, int)?
        }
        Some(size) => nonzero(&mask, Some(size), &NonzeroFill::Zero)?.remove(0),
    };
    let mut result = if aux.size() > 0 {
        super::index(&aux, &[Index::Array(ind.clone())])?
    } else {
        aux.clone()
    };
    if let (Some(size), Some(fill)) = (options.size, options.fill_value) {
        let fill = super::astype(ArrayLike::Scalar(fill), result.dtype())?;
        if result.shape()[0] > 0 {
            let count = super::sum(&mask, Axes::All, false)?;
            let valid = cmp(
                &lax::LT,
                &iota(count.dtype(), &[size], 0)?,
                &lax::ops::broadcast_to(&count, &[size])?,
            )?;
            let mut shape = vec![size];
            shape.extend(std::iter::repeat_n(1, result.ndim() - 1));
            let valid = reshape(&valid, &shape)?;
            result = super::r#where(&valid, &result, &fill)?;
        } else {
            let mut shape = result.shape().to_vec();
            shape[0] = size;
            result = lax::ops::broadcast_to(&fill, &shape)?;
        }
    }
    let values = moveaxis(&result, 0, axis)?;
    let indices = options
        .return_index
        .then(|| {
            if aux.size() > 0 {
                super::index(&perm, &[Index::Array(ind.clone())])
            } else {
                Ok(perm.clone())
            }
        })
        .transpose()?;
    let inverse = options
        .return_inverse
        .then(|| -> Result<Array, Error> {
            if aux.size() > 0 {
                let running = super::cumsum_axis(&mask, None, None)?;
                let imask = super::subtract(&running, 1)?;
                let zeros = full(mask.shape(), Value::Int(0), int)?;
                zeros.at(&[Index::Array(perm.clone())]).set(&imask, None)
            } else {
                full(&[n], Value::Int(0), int)
            }
        })
        .transpose()?;
    let counts = options
        .return_counts
        .then(|| -> Result<Array, Error> {
            if aux.size() > 0 {
                let size_all = mask.size() as i128;
                let idx = match options.size {
                    None => {
                        let first = nonzero(&mask, None, &NonzeroFill::Zero)?.remove(0);
                        let end = full(&[1], Value::Int(size_all), first.dtype())?;
                        concatenate(&[&first, &end], 0)?
                    }
                    Some(size) => {
                        let idx = nonzero(&mask, Some(size + 1), &NonzeroFill::Zero)?.remove(0);
                        let tail = rows(&idx, Some(1), None)?;
                        let end = full(tail.shape(), Value::Int(size_all), idx.dtype())?;
                        let nz = to_bool(&tail)?;
                        let tail = lax::ops::select_n(&nz, &[&end, &tail])?;
                        concatenate(&[&rows(&idx, None, Some(1))?, &tail], 0)?
                    }
                };
                cmp(
                    &lax::SUB,
                    &rows(&idx, Some(1), None)?,
                    &rows(&idx, None, Some(-1))?,
                )
            } else if n > 0 {
                full(&[1], Value::Int(n as i128), int)
            } else {
                full(&[0], Value::Int(0), int)
            }
        })
        .transpose()?;
    Ok(Unique {
        values,
        indices,
        inverse,
        counts,
    })
}

// ---------------------------------------------------------------------------------------
// nonzero, argwhere, flatnonzero
// ---------------------------------------------------------------------------------------

/// What pads [`nonzero`]'s outputs past the count of nonzero elements when `size` is larger
/// (`fill_value`).
///
/// ```
/// use dtype_lattice::Value;
/// use dtype_lattice_array::{numpy as jnp, Array};
/// use dtype_lattice_array::numpy::NonzeroFill;
/// let x = Array::from_shape_vec(&[1, 2], vec![0i32, 4])?;
/// let fill = NonzeroFill::PerAxis(vec![Value::Int(-1), Value::Int(-2)]);
/// let ij = jnp::nonzero(&x, Some(2), &fill)?;
/// assert_eq!((ij[0].to_vec::<i32>()?, ij[1].to_vec::<i32>()?), (vec![0, -1], vec![1, -2]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub enum NonzeroFill {
    /// Zeros (`fill_value=None`).
    #[default]
    Zero,
    /// One value for every dimension (a scalar `fill_value`).
    All(Value),
    /// One value per dimension (a tuple `fill_value`).
    PerAxis(Vec<Value>),
}

/// `jnp.nonzero(a, size=size, fill_value=fill_value)`: for each dimension, the indices of
/// the nonzero elements in row-major order (the default integer type). Without `size` the
/// count must be concrete (outside `jit`); with it the outputs have that length, cut short
/// or padded with `fill_value`.
///
/// ```
/// use dtype_lattice::Value;
/// use dtype_lattice_array::{numpy as jnp, Array};
/// use dtype_lattice_array::numpy::NonzeroFill;
/// let x = Array::from_shape_vec(&[2, 3], vec![0i32, 5, 0, 6, 0, 8])?;
/// let ij = jnp::nonzero(&x, None, &NonzeroFill::Zero)?;
/// assert_eq!(ij[0].to_vec::<i32>()?, [0, 1, 1]);
/// assert_eq!(ij[1].to_vec::<i32>()?, [1, 0, 2]);
/// let ij = jnp::nonzero(&x, Some(4), &NonzeroFill::All(Value::Int(-1)))?;
/// assert_eq!(ij[1].to_vec::<i32>()?, [1, 0, 2, -1]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a 0-d array or a `fill_value` tuple of the wrong length;
/// `ConcretizationTypeError` without `size` on a traced array.
pub fn nonzero<'a>(
    a: impl Into<ArrayLike<'a>>,
    size: Option<usize>,
    fill_value: &NonzeroFill,
) -> Result<Vec<Array>, Error> {
    let arr = arraylike(a)?;
    if arr.ndim() == 0 {
        return Err(value_error(
            "Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() \
             instead.",
        ));
    }
    let int = default_int(&rules());
    let mask = to_bool(&arr)?;
    // `mask.sum()`, computed where JAX computes it (without `size`, and for the fill).
    let count = || super::sum(&mask, Axes::All, false);
    let size = match size {
        Some(s) => s,
        None => {
            let c = concrete_or_error(
                &count()?,
                "The size argument of jnp.nonzero must be statically specified to use \
                 jnp.nonzero within JAX transformations.",
            )?;
            let c = convert(&c, DType::Int64)?.to_vec::<i64>()?[0];
            c.max(0) as usize
        }
    };
    if arr.size() == 0 || size == 0 {
        return (0..arr.ndim())
            .map(|_| full(&[size], Value::Int(0), int))
            .collect();
    }
    // bincount(cumsum(mask), length=size): how many nonzeros end at each running count.
    let running = super::cumsum_axis(&mask, None, None)?;
    // `zeros(length).at[clip(x, 0)].add(1, mode='drop')`, in Python's order.
    let zeros = full(&[size], Value::Int(0), int)?;
    let zero = crate::array::python_scalar_array(Value::Int(0), int, true)?;
    let clipped = super::clip(&running, Some((&zero).into()), None)?;
    let ones = full(&[], Value::Int(1), int)?;
    let bins = zeros
        .at(&[Index::Array(clipped)])
        .add(&ones, Some(IndexMode::Drop))?;
    let flat = super::cumsum_axis(&bins, None, None)?;
    let shape = arr.shape();
    let mut out = Vec::with_capacity(shape.len());
    for (d, &dim) in shape.iter().enumerate() {
        let stride: usize = shape[d + 1..].iter().product();
        let q = super::floor_divide(&flat, &full(&[], Value::Int(stride as i128), flat.dtype())?)?;
        // `% size`, the size a Python int.
        out.push(super::remainder(
            &q,
            ArrayLike::Scalar(Value::Int(dim as i128)),
        )?);
    }
    let fills: Vec<Value> = match fill_value {
        NonzeroFill::Zero => return Ok(out),
        NonzeroFill::All(v) => vec![*v; shape.len()],
        NonzeroFill::PerAxis(v) if v.len() != shape.len() => {
            return Err(value_error(format!(
                "safe_zip() argument 1 has length {} but argument 0 has length {}. All \
                 lengths: ({}, {})",
                shape.len(),
                v.len(),
                v.len(),
                shape.len()
            )));
        }
        NonzeroFill::PerAxis(v) => v.clone(),
    };
    // `arange(size) >= mask.sum()`, then `jnp.where(fill_mask, fill, entry)` (JAX's jitted
    // `_where`, the fill a Python scalar).
    let positions = iota(int, &[size], 0)?;
    let fill_mask = super::greater_equal(&positions, &count()?)?;
    out.iter()
        .zip(fills)
        .map(|(entry, f)| {
            let f = arraylike(ArrayLike::Scalar(f))?;
            super::where_jitted(&fill_mask, &f, entry)
        })
        .collect()
}

/// `jnp.argwhere(a, size=size, fill_value=fill_value)`: the indices of the nonzero
/// elements, one row each (`(count, a.ndim)`; a 0-d `a` gives `(count, 0)`), as
/// [`nonzero`] computes them.
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// use dtype_lattice_array::numpy::NonzeroFill;
/// let x = Array::from_shape_vec(&[2, 2], vec![0i32, 5, 6, 0])?;
/// let w = jnp::argwhere(&x, None, &NonzeroFill::Zero)?;
/// assert_eq!((w.shape(), w.to_vec::<i32>()?), (&[2usize, 2][..], vec![0, 1, 1, 0]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`nonzero`].
pub fn argwhere<'a>(
    a: impl Into<ArrayLike<'a>>,
    size: Option<usize>,
    fill_value: &NonzeroFill,
) -> Result<Array, Error> {
    let arr = arraylike(a)?;
    if arr.ndim() == 0 {
        let flat = reshape(&arr, &[1])?;
        let idx = nonzero(&flat, size, fill_value)?.remove(0);
        let count = idx.shape()[0];
        return full(&[count, 0], Value::Int(0), idx.dtype());
    }
    if super::is_numpy(&rules()) {
        let parts: Vec<ArrayLike<'_>> = nonzero(&arr, size, fill_value)?
            .into_iter()
            .map(ArrayLike::Owned)
            .collect();
        return super::stack(&parts, 1);
    }
    // `transpose(vstack(nonzero(atleast_1d(a), ...)))`, JAX's `atleast_1d` and `atleast_2d`
    // jitted functions (the latter one cache, shared by the rows).
    type Body = fn(Array) -> Result<Array, Error>;
    let atleast_2d = shared_jit!("atleast_2d", Body, |row| {
        let n = row.shape()[0];
        bind1(
            &lax::BROADCAST_IN_DIM,
            &[&row],
            Params::new()
                .with("shape", ints(&[1, n]))
                .with("broadcast_dimensions", ints(&[1]))
                .with("sharding", Param::None),
        )
    });
    let arr = crate::jit::jit(|x: Array| Ok::<_, Error>(x))
        .named("atleast_1d")
        .call(&arr)?;
    let rows: Vec<Array> = nonzero(&arr, size, fill_value)?
        .iter()
        .map(|row| atleast_2d.call(row))
        .collect::<Result<_, _>>()?;
    let rows: Vec<&Array> = rows.iter().collect();
    transpose(&concatenate(&rows, 0)?, &[1, 0])
}

/// `jnp.flatnonzero(a, size=size, fill_value=fill_value)`: the indices of the nonzero
/// elements of the flattened `a` ([`nonzero`] of `ravel(a)`).
///
/// ```
/// use dtype_lattice_array::{numpy as jnp, Array};
/// use dtype_lattice_array::numpy::NonzeroFill;
/// let x = Array::from_shape_vec(&[2, 3], vec![0i32, 5, 0, 6, 0, 8])?;
/// let i = jnp::flatnonzero(&x, None, &NonzeroFill::Zero)?;
/// assert_eq!(i.to_vec::<i32>()?, [1, 3, 5]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`nonzero`] (a 0-d `a` is one element).
pub fn flatnonzero<'a>(
    a: impl Into<ArrayLike<'a>>,
    size: Option<usize>,
    fill_value: &NonzeroFill,
) -> Result<Array, Error> {
    let arr = arraylike(a)?;
    let flat = reshape(&arr, &[arr.size()])?;
    Ok(nonzero(&flat, size, fill_value)?.remove(0))
}
