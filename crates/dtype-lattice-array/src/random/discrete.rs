//! `jax.random`'s discrete samplers (JAX 0.10.2's `jax/_src/random/core.py`):
//! [`bernoulli_array`] (an array `p`, `shape=None`, modes `low` and `high`), [`rademacher`],
//! [`geometric`], [`categorical`] (the Gumbel-max trick with replacement, Gumbel-top-k
//! without), [`choice`] (with and without replacement, with `p`, along an axis) and
//! [`permutation`] (JAX's `_shuffle`: rounds of a stable sort by fresh random 32-bit keys).
//!
//! As in `samplers.rs`: built from the key functions ([`super::bits_dtype`],
//! [`super::split`], [`super::randint`]) and `lax`/`jax.numpy` operations, JAX's jitted
//! helpers jitted here too, the rest (`categorical`, `choice`) run operation by operation as
//! JAX runs them.

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Value};

use super::samplers::{
    bind, broadcast_shape, canonical_axis, check_shape, convert_const, default_float, default_int,
    finfo, jitted, py, reshape_dims, single_key, split2, uniform01, unpack, where_,
};
use crate::array::{Array, py_shape};
use crate::core::{Param, Params};
use crate::lax::{self, ops};
use crate::numpy::{self as jnp, Index, SearchMethod, Side};

/// `promote_dtypes_inexact(x)` of one array: booleans and integers as the default float
/// (64-bit integers as float64 with x64), weak type kept.
fn promote_inexact(x: &Array) -> Result<Array, Error> {
    if matches!(x.dtype().kind(), Kind::Float | Kind::Complex) {
        return Ok(x.clone());
    }
    let rules = crate::config::rules();
    let d = crate::numpy::family_dtype(&rules, crate::numpy::Family::Inexact, x.dtype());
    ops::convert(x, d, x.weak_type())
}

fn value_error<T>(msg: String) -> Result<T, Error> {
    Err(Error::refused(Exception::ValueError, msg))
}

/// `jax.random.bernoulli(key, p, shape, mode)` with an array `p` (or a Python float:
/// [`Array::python_scalar`]): `uniform < p` in `p`'s dtype; `shape` defaults to `p`'s.
/// `mode="high"` compares with the difference of `p` and one uniform draw a second one
/// scaled below its resolution, for probabilities below float32's (`"low"`: one draw).
///
/// ```
/// use dtype_lattice_array::{Array, random};
/// let p = Array::from_vec(vec![0.0f32, 1.0, 0.5]);
/// let b = random::bernoulli_array(&random::key(0)?, &p, None, "low")?;
/// assert_eq!(b.to_vec::<bool>()?[..2], [false, true]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a mode other than `"low"` and `"high"`, a batched key or a shape
/// `p` does not broadcast to; its `TypeError` for a `p` that is not floating.
pub fn bernoulli_array(
    key: &Array,
    p: &Array,
    shape: Option<&[usize]>,
    mode: &str,
) -> Result<Array, Error> {
    if !matches!(mode, "high" | "low") {
        return value_error(format!("got mode='{mode}', expected 'high' or 'low'"));
    }
    let key = single_key("bernoulli", key)?;
    let dtype = p.dtype();
    if dtype.kind() != Kind::Float {
        return Err(Error::refused(
            Exception::TypeError,
            format!("bernoulli probability `p` must have a floating dtype, got {dtype}."),
        ));
    }
    let p = convert_const(p, dtype)?;
    bernoulli_jit(&key, &p, shape, mode)
}

/// JAX's `_bernoulli(key, p, shape, mode)`.
fn bernoulli_jit(
    key: &Array,
    p: &Array,
    shape: Option<&[usize]>,
    mode: &str,
) -> Result<Array, Error> {
    let shape = shape.map(<[usize]>::to_vec);
    jitted(
        "_bernoulli",
        &(key.clone(), p.clone()),
        |(k, p): (Array, Array)| {
            let shape = match &shape {
                None => p.shape().to_vec(),
                Some(s) => {
                    check_shape("bernoulli", s, &[p.shape()])?;
                    s.clone()
                }
            };
            let dtype = p.dtype();
            if mode == "high" {
                let mut two = vec![2];
                two.extend_from_slice(&shape);
                let u = uniform01(&k, &two, dtype)?;
                let (u1, u2) = (unpack(&u, 0)?, unpack(&u, 1)?);
                let (nmant, _, _, _) = finfo(dtype);
                let u2 = jnp::multiply(&u2, f64::powi(2.0, -(nmant as i32)))?;
                jnp::less(&u2, jnp::subtract(&p, &u1)?)
            } else {
                jnp::less(&uniform01(&k, &shape, dtype)?, &p)
            }
        },
    )
}

/// `jax.random.rademacher(key, shape, dtype)`: `-1` or `1` with equal probability, as
/// `2 * bernoulli(0.5) - 1` in `dtype` (JAX's default: the default integer dtype; any dtype
/// is taken).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::random;
/// let r = random::rademacher(&random::key(0)?, &[4], DType::Int32)?;
/// assert!(r.to_vec::<i32>()?.iter().all(|&v| v == 1 || v == -1));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key.
pub fn rademacher(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let key = single_key("rademacher", key)?;
    let dtype = dtype.canonicalize(super::samplers::x64());
    jitted("_rademacher", &key, |k: Array| {
        let half = convert_const(&py(0.5)?, default_float())?;
        let b = jnp::astype(bernoulli_jit(&k, &half, Some(shape), "low")?, dtype)?;
        jnp::astype(jnp::subtract(jnp::multiply(2, &b)?, 1)?, dtype)
    })
}

/// `jax.random.geometric(key, p, shape, dtype)`: `floor(log(u) / log1p(-p)) + 1` in the
/// integer `dtype` (JAX's default: the default integer dtype), `u` uniform in `p`'s
/// inexact dtype (`0` taken as `1`); `shape` defaults to `p`'s.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let p = Array::python_scalar(0.3)?;
/// let g = random::geometric(&random::key(0)?, &p, Some(&[3]), DType::Int32)?;
/// assert!(g.to_vec::<i32>()?.iter().all(|&v| v >= 1));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key, a dtype that is not an integer dtype or a shape `p`
/// does not broadcast to.
pub fn geometric(
    key: &Array,
    p: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let key = single_key("geometric", key)?;
    let dtype = dtype.canonicalize(super::samplers::x64());
    if !matches!(dtype.kind(), Kind::SignedInt | Kind::UnsignedInt) {
        return value_error(format!(
            "dtype argument to `geometric` must be an int dtype, got {dtype}"
        ));
    }
    let shape = broadcast_shape("geometric", shape, &[p])?;
    jitted("_geometric", &(key, p.clone()), |(k, p): (Array, Array)| {
        let p = promote_inexact(&p)?;
        let u = uniform01(&k, &shape, p.dtype())?;
        let u = where_(&jnp::equal(&u, 0.0)?, &py(1)?, &u)?;
        let log_u = ops::unary(&lax::LOG, &u)?;
        let l = ops::unary(&lax::LOG1P, &jnp::negative(&p)?)?;
        let l = ops::broadcast_to(&l, &shape)?;
        let g = ops::unary(&lax::FLOOR, &bind(&lax::DIV, &[&log_u, &l])?)?;
        jnp::astype(jnp::add(&g, 1)?, dtype)
    })
}

/// `jax.random.categorical(key, logits, axis, shape, replace, mode)`: indices along `axis`
/// of `logits` (unnormalised log probabilities), by the Gumbel-max trick (`argmax` of
/// `logits` plus Gumbel noise; with `replace=false` the Gumbel-top-k trick, `top_k`'s int32
/// indices). `shape` defaults to `logits`' shape without `axis`; a longer `shape` draws more
/// samples in front. `mode` is [`super::gumbel`]'s.
///
/// ```
/// use dtype_lattice_array::{Array, random};
/// let logits = Array::from_shape_vec(&[2, 3], vec![0.0f32, -50.0, -50.0, -50.0, -50.0, 0.0])?;
/// let c = random::categorical(&random::key(0)?, &logits, -1, None, true, None)?;
/// assert_eq!(c.to_vec::<i32>()?, [0, 2]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key, a shape the batch shape does not broadcast to, or
/// more samples without replacement than categories; its `IndexError` for an axis out of
/// range; [`super::gumbel`]'s for integer logits or a bad mode.
pub fn categorical(
    key: &Array,
    logits: &Array,
    axis: isize,
    shape: Option<&[usize]>,
    replace: bool,
    mode: Option<&str>,
) -> Result<Array, Error> {
    let key = single_key("categorical", key)?;
    let ndim = logits.ndim();
    let n = ndim as isize;
    // np.delete(logits.shape, axis)
    if axis < -n || axis >= n {
        return Err(Error::refused(
            Exception::IndexError,
            format!("index {axis} is out of bounds for axis 0 with size {ndim}"),
        ));
    }
    let ax = if axis < 0 { axis + n } else { axis } as usize;
    let mut batch: Vec<usize> = logits.shape().to_vec();
    batch.remove(ax);
    let shape = match shape {
        None => batch.clone(),
        Some(s) => {
            categorical_shape(s, &batch)?;
            s.to_vec()
        }
    };
    let prefix = &shape[..shape.len() - batch.len()];
    let dtype = logits.dtype();
    let noise = |s: &[usize]| super::gumbel(&key, s, dtype, mode);
    if replace {
        let mut draw: Vec<usize> = prefix.to_vec();
        let mut tail = shape[shape.len() - batch.len()..].to_vec();
        tail.insert(ax, logits.shape()[ax]);
        draw.extend_from_slice(&tail);
        let dims: Vec<i64> = (0..prefix.len() as i64).collect();
        let x = jnp::add(noise(&draw)?, lax::expand_dims(logits, &dims)?)?;
        let params = Params::new()
            .with("axes", Param::Ints(vec![(draw.len() - ndim + ax) as i64]))
            .with("index_dtype", Param::DType(default_int()));
        return lax::bind1(&lax::ARGMAX, &[&x], &params);
    }
    let x = jnp::add(logits, noise(logits.shape())?)?;
    let k: usize = prefix.iter().product();
    if k > logits.shape()[ax] {
        return value_error(format!(
            "Number of samples without replacement ({k}) cannot exceed number of categories \
             ({}).",
            logits.shape()[ax]
        ));
    }
    // jnp.moveaxis(x, axis, -1)
    let moved = if ax + 1 == ndim {
        x
    } else {
        let mut perm: Vec<i64> = (0..n as i64).filter(|&d| d != ax as i64).collect();
        perm.push(ax as i64);
        lax::bind1(
            &lax::TRANSPOSE,
            &[&x],
            &Params::new().with("permutation", Param::Ints(perm)),
        )?
    };
    let indices = top_k(&moved, k)?;
    // lax.reshape(indices, shape, dimensions=(last, 0, 1, ...)): the samples first.
    let r = indices.ndim();
    let mut dims = vec![r - 1];
    dims.extend(0..r - 1);
    reshape_dims(&indices, &shape, Some(&dims))
}

/// `_check_shape("categorical", shape, batch_shape)`, whose batch shape comes from
/// `np.delete` (NumPy integers, which JAX's messages print as `np.int64(2)`): `shape` and
/// the batch shape broadcast (`lax.broadcast_shapes`: the longer shape if the other matches
/// its end, else dimension by dimension) to `shape` itself.
fn categorical_shape(shape: &[usize], batch: &[usize]) -> Result<(), Error> {
    // (size, whether it is a NumPy integer)
    let show = |s: &[(usize, bool)]| -> String {
        let items: Vec<String> = s
            .iter()
            .map(|&(d, np)| {
                if np {
                    format!("np.int64({d})")
                } else {
                    d.to_string()
                }
            })
            .collect();
        match items.as_slice() {
            [one] => format!("({one},)"),
            _ => format!("({})", items.join(", ")),
        }
    };
    let plain: Vec<(usize, bool)> = shape.iter().map(|&d| (d, false)).collect();
    let marked: Vec<(usize, bool)> = batch.iter().map(|&d| (d, true)).collect();
    let longest = if shape.len() >= batch.len() {
        &plain
    } else {
        &marked
    };
    let ndim = longest.len();
    let ends = |s: &[(usize, bool)]| {
        longest[ndim - s.len()..]
            .iter()
            .zip(s)
            .all(|(a, b)| a.0 == b.0)
    };
    let result = if ndim == 0 || (ends(&plain) && ends(&marked)) {
        longest.clone()
    } else {
        let pad = |s: &[(usize, bool)]| {
            let mut p = vec![(1, false); ndim - s.len()];
            p.extend_from_slice(s);
            p
        };
        let (a, b) = (pad(&plain), pad(&marked));
        let mut out = Vec::with_capacity(ndim);
        for (x, y) in a.into_iter().zip(b) {
            out.push(match (x.0, y.0) {
                (1, 1) => (1, false),
                (1, _) => y,
                (_, 1) => x,
                (p, q) if p == q => x,
                _ => {
                    return value_error(format!(
                        "Incompatible shapes for broadcasting: shapes=[{}, {}]",
                        show(&plain),
                        show(&marked)
                    ));
                }
            });
        }
        out
    };
    if result.iter().map(|r| r.0).ne(shape.iter().copied()) {
        return value_error(format!(
            "categorical parameter shapes must be broadcast-compatible with shape argument, \
             and the result of broadcasting the shapes must equal the shape argument, but got \
             result {} for shape argument {}.",
            show(&result),
            py_shape(shape)
        ));
    }
    Ok(())
}

/// `lax.top_k(x, k)[1]`: the int32 indices of the `k` largest along the last axis.
fn top_k(x: &Array, k: usize) -> Result<Array, Error> {
    let params = Params::new()
        .with("k", Param::Int(k as i64))
        .with("axis", Param::Int(x.ndim() as i64 - 1));
    let mut outs = lax::bind(&lax::TOP_K, &[x], &params)?.into_vec();
    Ok(outs.remove(1))
}

/// `jax.random.choice(key, a, shape, replace, p, axis, mode)`: a sample of `shape` from the
/// elements of `a` along `axis`, or from `arange(a)` for a 0-d `a` (an integer, as
/// [`Array::python_scalar`]): uniform indices ([`super::randint`]) with replacement; a
/// [`permutation`]'s first elements without; with probabilities `p`, a search in their
/// cumulative sum with replacement and the Gumbel-top-k trick without. The result has
/// `a.shape[:axis] + shape + a.shape[axis+1:]`.
///
/// ```
/// use dtype_lattice_array::{Array, random};
/// let c = random::choice(&random::key(0)?, &Array::python_scalar(5)?, &[5], false, None, 0,
///                        None)?;
/// let mut v = c.to_vec::<i32>()?;
/// v.sort();
/// assert_eq!(v, [0, 1, 2, 3, 4]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError`s: a batched key, an empty population with samples to take, more
/// samples than the population without replacement, a `p` that is not a vector of the
/// population's size, an axis out of range; `ConcretizationTypeError` for a traced 0-d `a`.
pub fn choice(
    key: &Array,
    a: &Array,
    shape: &[usize],
    replace: bool,
    p: Option<&Array>,
    axis: isize,
    mode: Option<&str>,
) -> Result<Array, Error> {
    let key = single_key("choice", key)?;
    let scalar = a.ndim() == 0;
    let (n_inputs, axis) = if scalar {
        (
            concrete_int(a, "The error occurred in jax.random.choice()")?,
            0,
        )
    } else {
        let axis = canonical_axis(axis, a.ndim())?;
        (a.shape()[axis] as i128, axis)
    };
    let n_draws: usize = shape.iter().product();
    if n_draws == 0 {
        return jnp::zeros(shape, a.dtype());
    }
    if n_inputs <= 0 {
        return value_error("a must be greater than 0 unless no samples are taken".into());
    }
    if !replace && n_draws as i128 > n_inputs {
        return value_error(format!(
            "Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) \
             when 'replace=False'"
        ));
    }
    let take = |ind: Array| -> Result<Array, Error> {
        if scalar {
            Ok(ind)
        } else {
            jnp::take(a, &ind, Some(axis as isize), None, None)
        }
    };
    let result = match p {
        None if replace => take(super::randint(&key, shape, 0, n_inputs, default_int())?)?,
        None => {
            let x = if scalar {
                Array::python_scalar(Value::Int(n_inputs))?
            } else {
                a.clone()
            };
            let perm = permutation(&key, &x, axis as isize, false)?;
            let mut index = vec![Index::Slice(None, None, 1); axis];
            index.push(Index::Slice(None, Some(n_draws as isize), 1));
            jnp::index(&perm, &index)?
        }
        Some(p) => {
            let p = promote_inexact(p)?;
            if p.shape() != [n_inputs as usize] {
                return value_error(format!(
                    "p must be None or a 1D vector with the same size as a.shape[axis]. p has \
                     shape {} and a.shape[axis] is {n_inputs}.",
                    py_shape(p.shape())
                ));
            }
            let ind = if replace {
                let p_cuml = jnp::cumsum(&p)?;
                let u = uniform01(&key, shape, p_cuml.dtype())?;
                let last = jnp::index(&p_cuml, &[Index::At(-1)])?;
                let r = jnp::multiply(&last, jnp::subtract(1, &u)?)?;
                let i = jnp::searchsorted(&p_cuml, &r, Side::Left, None, SearchMethod::Scan)?;
                jnp::astype(&i, default_int())?
            } else {
                let g = super::gumbel(&key, &[n_inputs as usize], p.dtype(), mode)?;
                let g = jnp::add(&g, jnp::log(&p)?)?;
                jnp::astype(top_k(&g, n_draws)?, default_int())?
            };
            take(ind)?
        }
    };
    let out_shape: Vec<isize> = if scalar {
        shape.iter().map(|&d| d as isize).collect()
    } else {
        let s = a.shape();
        s[..axis]
            .iter()
            .chain(shape)
            .chain(&s[axis + 1..])
            .map(|&d| d as isize)
            .collect()
    };
    jnp::reshape(&result, &out_shape)
}

/// `core.concrete_or_error(int, x, context)`: a concrete 0-d array as a Python int
/// (floats truncated, as `int()` does).
fn concrete_int(x: &Array, context: &str) -> Result<i128, Error> {
    if !x.is_concrete() {
        return Err(Error::refused(
            Exception::ConcretizationTypeError,
            format!(
                "Abstract tracer value encountered where concrete value is expected: traced \
                 array with shape {}\n{context}",
                x.aval()
            ),
        ));
    }
    use crate::repr::Scalar;
    match x.element(0) {
        Some(Scalar::Int(i)) => Ok(i),
        Some(Scalar::Bool(b)) => Ok(i128::from(b)),
        Some(Scalar::Float(f)) if f.is_finite() => Ok(f.trunc() as i128),
        Some(Scalar::Float(f)) => Err(Error::refused(
            if f.is_nan() {
                Exception::ValueError
            } else {
                Exception::OverflowError
            },
            if f.is_nan() {
                "cannot convert float NaN to integer"
            } else {
                "cannot convert float infinity to integer"
            },
        )),
        _ => Err(Error::refused(
            Exception::TypeError,
            format!("int() argument must be a real number, not {}", x.dtype()),
        )),
    }
}

/// `jax.random.permutation(key, x, axis, independent)`: for a 0-d integer `x` (a Python int:
/// [`Array::python_scalar`]), a shuffled `arange(x)`; for an array, `x` shuffled along
/// `axis`: its slices along `axis` as wholes, or (`independent`) each vector along `axis`
/// on its own. JAX's `_shuffle`: `ceil(3 ln(n) / ln(2^32 - 1))` rounds of a stable sort by
/// fresh random 32-bit keys (one round up to 1,625 elements).
///
/// ```
/// use dtype_lattice_array::{Array, random};
/// let p = random::permutation(&random::key(0)?, &Array::python_scalar(5)?, 0, false)?;
/// let mut v = p.to_vec::<i32>()?;
/// v.sort();
/// assert_eq!(v, [0, 1, 2, 3, 4]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key or an axis out of range; its `TypeError` for a 0-d
/// `x` that is not an integer; `ConcretizationTypeError` for a traced 0-d `x`.
pub fn permutation(key: &Array, x: &Array, axis: isize, independent: bool) -> Result<Array, Error> {
    let key = single_key("permutation", key)?;
    let axis = canonical_axis(axis, x.ndim().max(1))?;
    if x.ndim() == 0 {
        if !matches!(x.dtype().kind(), Kind::SignedInt | Kind::UnsignedInt) {
            return Err(Error::refused(
                Exception::TypeError,
                "x must be an integer or at least 1-dimensional",
            ));
        }
        let r = concrete_int(x, "argument x of jax.random.permutation()")?;
        let range = jnp::arange(0.0, r as f64, 1.0, default_int())?;
        return shuffle(&key, &range, axis);
    }
    if independent || x.ndim() == 1 {
        return shuffle(&key, x, axis);
    }
    let range = jnp::arange(0.0, x.shape()[axis] as f64, 1.0, default_int())?;
    let ind = shuffle(&key, &range, 0)?;
    crate::numpy::indexing::take_unique(x, &ind, axis as isize)
}

/// JAX's `_shuffle(key, x, axis)`: rounds of `sort_key_val` by `random_bits` of a fresh
/// subkey each.
fn shuffle(key: &Array, x: &Array, axis: usize) -> Result<Array, Error> {
    let size = x.size().max(1) as f64;
    let rounds = (3.0 * size.ln() / f64::from(u32::MAX).ln()).ceil() as usize;
    jitted(
        "_shuffle",
        &(key.clone(), x.clone()),
        |(mut k, mut x): (Array, Array)| {
            for _ in 0..rounds {
                let (next, sub) = split2(&k)?;
                k = next;
                let sort_keys = super::bits_dtype(&sub, x.shape(), DType::UInt32)?;
                let params = Params::new()
                    .with("dimension", Param::Int(axis as i64))
                    .with("is_stable", Param::Bool(true))
                    .with("num_keys", Param::Int(1));
                let mut outs = lax::bind(&lax::SORT, &[&sort_keys, &x], &params)?.into_vec();
                x = outs.remove(1);
            }
            Ok(x)
        },
    )
}
