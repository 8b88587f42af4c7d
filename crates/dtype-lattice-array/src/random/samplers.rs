//! `jax.random`'s samplers that transform uniform and normal draws (JAX 0.10.2's
//! `jax/_src/random/core.py`): [`uniform_array`] (array bounds), [`exponential`], [`cauchy`],
//! [`gumbel`] (modes `low`, `high`, `highest`), [`laplace`], [`logistic`], [`pareto`],
//! [`rayleigh`], [`weibull_min`], [`triangular`], [`maxwell`], [`double_sided_maxwell`],
//! [`lognormal`], [`truncated_normal`], [`wald`]; the discrete ones are in `discrete.rs`.
//!
//! Each is written as JAX writes it, from the key functions every key implementation provides
//! ([`super::bits_dtype`], [`super::split`], which bind `random_bits` and `random_split`) and
//! `lax`/`jax.numpy` operations on their results, never from a key implementation's kernels,
//! so that a key of any implementation samples through the same code. JAX's samplers are
//! jitted helpers (`_uniform`, `_normal`, `_exponential`, ...), so that the numbers JAX gives
//! are XLA's compiled numbers; each helper here is a [`crate::jit`] of the same name, nested
//! as JAX nests them (a helper JAX marks `inline=True` is a jit only when called outside any
//! transformation), so that the jit plan's contractions (a product feeding an addition
//! becomes one fused multiply-add, as XLA's CPU backend computes it) apply where XLA's do
//! and `make_jaxpr` prints JAX's program.
//!
//! Parameters JAX takes as arrays or Python scalars are [`Array`]s: a Python float is
//! [`Array::python_scalar`] (weakly typed), an array keeps its dtype, and both broadcast
//! against `shape` as JAX's checks say. Shapes JAX defaults to `None` are `Option<&[usize]>`.
//! Dtypes are canonicalised (x64 off: `float64` is `float32`); the float samplers take
//! float16, bfloat16, float32 and float64 (JAX's 8-bit floats are refused).

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Operand};

use crate::array::{Array, py_shape};
use crate::core::{Param, Params, Pytree};
use crate::jit::jit;
use crate::lax::{self, Primitive, ops};
use crate::numpy::{self as jnp, Axes, Index};

// ---------------------------------------------------------------------------------------
// Shared pieces (also used by `discrete.rs`)
// ---------------------------------------------------------------------------------------

pub(super) fn x64() -> bool {
    crate::config::rules().options().x64
}

/// The default float dtype (`float32`; `float64` with x64).
pub(super) fn default_float() -> DType {
    DType::Float64.canonicalize(x64())
}

/// The default integer dtype (`int32`; `int64` with x64).
pub(super) fn default_int() -> DType {
    crate::config::default_int(&crate::config::rules())
}

/// A Python float or int as JAX passes it to a jitted helper: a weakly typed 0-d array of
/// the default dtype of its kind.
pub(super) fn py(v: impl Into<dtype_lattice::Value>) -> Result<Array, Error> {
    Array::python_scalar(v)
}

/// A constant of `dtype` (a NumPy scalar or `np.array(v, dtype)`: strongly typed).
pub(super) fn konst(v: f64, dtype: DType) -> Result<Array, Error> {
    crate::array::scalar(v, dtype)
}

/// JAX's jitted helper `name` (`@jit def name(...)`) applied to `args`.
pub(super) fn jitted<I, O>(
    name: &str,
    args: &I,
    body: impl Fn(I) -> Result<O, Error>,
) -> Result<O, Error>
where
    I: Pytree,
    O: Pytree + Send + Sync + 'static,
{
    jit(body).named(name).call(args)
}

/// A helper JAX jits with `inline=True`: compiled when called outside any transformation,
/// its operations inlined into an enclosing trace otherwise.
pub(super) fn inline_jitted<I, O>(
    name: &str,
    args: &I,
    body: impl Fn(I) -> Result<O, Error>,
) -> Result<O, Error>
where
    I: Pytree + Clone,
    O: Pytree + Send + Sync + 'static,
{
    if crate::core::current().is_none() {
        jitted(name, args, body)
    } else {
        body(args.clone())
    }
}

/// `_check_prng_key(name, key)`: a typed key as it is, raw `uint32` key data wrapped as a
/// threefry2x32 key; a key array of any other shape than `()` refused.
pub(super) fn single_key(name: &str, key: &Array) -> Result<Array, Error> {
    super::arrays::check_key(name, key, false).map(|(keys, _)| keys)
}

/// The canonical float `dtype` of sampler `name` (`what`: JAX's words for the kinds it takes).
pub(super) fn float_dtype(name: &str, what: &str, dtype: DType) -> Result<DType, Error> {
    let d = dtype.canonicalize(x64());
    if d.kind() != Kind::Float {
        return Err(Error::refused(
            Exception::ValueError,
            format!("dtype argument to `{name}` must be {what}, got {d}"),
        ));
    }
    if !matches!(
        d,
        DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64
    ) {
        return Err(crate::array::invalid(
            "dtype",
            format!("{name} supports float16, bfloat16, float32 and float64; got {d}"),
        ));
    }
    Ok(d)
}

/// `float_dtype` with JAX's usual words.
fn float(name: &str, dtype: DType) -> Result<DType, Error> {
    float_dtype(name, "a float dtype", dtype)
}

/// `_check_shape(name, shape, *param_shapes)`: the parameters' shapes broadcast with `shape`
/// to `shape` itself.
pub(super) fn check_shape(name: &str, shape: &[usize], params: &[&[usize]]) -> Result<(), Error> {
    if params.is_empty() {
        return Ok(());
    }
    let mut all = vec![shape];
    all.extend_from_slice(params);
    let b = jnp::broadcast_shapes(&all)?;
    if b != shape {
        return Err(Error::refused(
            Exception::ValueError,
            format!(
                "{name} parameter shapes must be broadcast-compatible with shape argument, and \
                 the result of broadcasting the shapes must equal the shape argument, but got \
                 result {} for shape argument {}.",
                py_shape(&b),
                py_shape(shape)
            ),
        ));
    }
    Ok(())
}

/// `_check_broadcast_shapes(name, shape, *args)`: `shape`, checked, or the parameters'
/// shapes broadcast together when it is `None`.
pub(super) fn broadcast_shape(
    name: &str,
    shape: Option<&[usize]>,
    args: &[&Array],
) -> Result<Vec<usize>, Error> {
    let shapes: Vec<&[usize]> = args.iter().map(|a| a.shape()).collect();
    match shape {
        None => jnp::broadcast_shapes(&shapes),
        Some(s) => {
            check_shape(name, s, &shapes)?;
            Ok(s.to_vec())
        }
    }
}

/// `_check_all_safe_to_cast(name, dtype, *args)`: every parameter promotes with `dtype` to
/// `dtype` itself.
pub(super) fn safe_to_cast(name: &str, dtype: DType, args: &[&Array]) -> Result<(), Error> {
    for a in args {
        if a.dtype() == dtype {
            continue;
        }
        let operands = [
            Operand::Array {
                dtype: a.dtype(),
                weak: a.weak_type(),
            },
            Operand::array(dtype),
        ];
        if crate::config::rules()
            .result_type(&operands)?
            .dtype
            .canonicalize(x64())
            != dtype
        {
            return Err(Error::refused(
                Exception::TypePromotionError,
                format!(
                    "In arguments to {name}, cannot safely cast argument of type {} to {dtype}",
                    a.dtype()
                ),
            ));
        }
    }
    Ok(())
}

/// `util.canonicalize_axis(axis, ndim)`.
pub(super) fn canonical_axis(axis: isize, ndim: usize) -> Result<usize, Error> {
    let n = ndim as isize;
    if axis < -n || axis >= n {
        return Err(Error::refused(
            Exception::ValueError,
            format!("axis {axis} is out of bounds for array of dimension {ndim}"),
        ));
    }
    Ok(if axis < 0 { axis + n } else { axis } as usize)
}

pub(super) fn bind(p: &'static Primitive, inputs: &[&Array]) -> Result<Array, Error> {
    lax::bind1(p, inputs, &Params::new())
}

/// The unary lax primitive `p`.
pub(super) fn un(p: &'static Primitive, x: &Array) -> Result<Array, Error> {
    ops::unary(p, x)
}

/// `lax.broadcast_to_rank(x, rank)`: leading dimensions of size 1 up to `rank`.
fn to_rank(x: &Array, rank: usize) -> Result<Array, Error> {
    if x.ndim() >= rank {
        return Ok(x.clone());
    }
    let mut shape = vec![1; rank - x.ndim()];
    shape.extend_from_slice(x.shape());
    ops::broadcast_to(x, &shape)
}

/// `lax.reshape(x, shape, dimensions)`: nothing staged when the shape is already `shape`
/// (and `x` has dimensions: JAX reshapes a 0-d array to `()` all the same) and no
/// `dimensions` reorder it.
pub(super) fn reshape_dims(
    x: &Array,
    shape: &[usize],
    dimensions: Option<&[usize]>,
) -> Result<Array, Error> {
    let identity = dimensions.is_none_or(|d| d.iter().enumerate().all(|(i, &k)| i == k));
    if x.shape() == shape && x.ndim() > 0 && identity {
        return Ok(x.clone());
    }
    let dims = match dimensions {
        Some(d) if !identity => lax::ints(d.iter().copied()),
        _ => Param::None,
    };
    let params = Params::new()
        .with("new_sizes", lax::ints(shape.iter().copied()))
        .with("dimensions", dims)
        .with("sharding", Param::None);
    lax::bind1(&lax::RESHAPE, &[x], &params)
}

/// `lax.reshape(x, shape)`.
pub(super) fn reshape(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    reshape_dims(x, shape, None)
}

/// `x[i]` for a static `i` (`jnp`'s indexing: a `slice` and a `squeeze`).
pub(super) fn row(x: &Array, i: isize) -> Result<Array, Error> {
    jnp::index(x, &[Index::At(i)])
}

/// Row `i` of `x` as Python's unpacking (`a, b = x`, iterating an array) takes it: a
/// `slice` with unit strides and a `squeeze`.
pub(super) fn unpack(x: &Array, i: usize) -> Result<Array, Error> {
    let mut start = vec![0; x.ndim()];
    let mut limit = x.shape().to_vec();
    start[0] = i;
    limit[0] = i + 1;
    let params = Params::new()
        .with("start_indices", lax::ints(start))
        .with("limit_indices", lax::ints(limit))
        .with("strides", lax::ints(vec![1; x.ndim()]));
    let s = lax::bind1(&lax::SLICE, &[x], &params)?;
    lax::bind1(
        &lax::SQUEEZE,
        &[&s],
        &Params::new().with("dimensions", Param::Ints(vec![0])),
    )
}

/// `_split(key)`, unpacked: two keys.
pub(super) fn split2(key: &Array) -> Result<(Array, Array), Error> {
    let two = super::split(key, 2)?;
    Ok((unpack(&two, 0)?, unpack(&two, 1)?))
}

/// `jnp.where(c, x, y)`, JAX's jitted `util._where`.
pub(super) fn where_(c: &Array, x: &Array, y: &Array) -> Result<Array, Error> {
    jnp::where_jitted(c, x, y)
}

/// `jnp.clip(x, lo, hi)`, JAX's jitted `clip`.
pub(super) fn clip(x: &Array, lo: &Array, hi: &Array) -> Result<Array, Error> {
    jnp::clip(x, Some(lo.into()), Some(hi.into()))
}

/// `lax.convert_element_type(x, dtype)`, folded when `x` is a known scalar (a Python scalar
/// or a constant: JAX's staging folds the conversion of a literal instead of staging it).
pub(super) fn convert_const(x: &Array, dtype: DType) -> Result<Array, Error> {
    if x.is_concrete() && x.ndim() == 0 && crate::core::current().is_some() {
        return crate::core::with_trace(None, || ops::convert(x, dtype, false));
    }
    ops::convert(x, dtype, false)
}

/// `dtypes.finfo(dtype)`'s `(nmant, eps, epsneg, tiny)`.
pub(super) fn finfo(dtype: DType) -> (u32, f64, f64, f64) {
    let (nmant, minexp) = match dtype {
        DType::Float16 => (10, -14),
        DType::BFloat16 => (7, -126),
        DType::Float32 => (23, -126),
        _ => (52, -1022),
    };
    let eps = f64::powi(2.0, -(nmant as i32));
    (nmant, eps, eps / 2.0, f64::powi(2.0, minexp))
}

// ---------------------------------------------------------------------------------------
// _uniform and _normal
// ---------------------------------------------------------------------------------------

/// JAX's `_uniform(key, minval, maxval, shape, dtype)`, jitted as JAX jits it. `keywords`:
/// called with the bounds as keywords (`_uniform(key, minval=..., maxval=...)`, as `_gumbel`
/// calls it), which `jit` passes sorted: `maxval` first.
pub(super) fn uniform_jit(
    key: &Array,
    minval: &Array,
    maxval: &Array,
    shape: &[usize],
    dtype: DType,
    keywords: bool,
) -> Result<Array, Error> {
    let shape = shape.to_vec();
    let body = move |(k, a, b): (Array, Array, Array)| {
        let (lo, hi) = if keywords { (b, a) } else { (a, b) };
        uniform_body(&k, &lo, &hi, &shape, dtype)
    };
    let args = if keywords {
        (key.clone(), maxval.clone(), minval.clone())
    } else {
        (key.clone(), minval.clone(), maxval.clone())
    };
    jitted("_uniform", &args, body)
}

/// `jax.random.uniform(key, shape, dtype)` with JAX's default bounds (Python floats 0 and 1).
pub(super) fn uniform01(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    uniform_jit(key, &py(0.0)?, &py(1.0)?, shape, dtype, false)
}

/// `_uniform`'s body: the bounds converted to `dtype` and broadcast to the rank of `shape`;
/// `random_bits` of the key (8 bits for bfloat16, converted), the top mantissa bits under the
/// exponent of 1.0, minus 1, scaled and shifted into `[minval, maxval)`, then
/// `max(minval, ·)`.
pub(super) fn uniform_body(
    key: &Array,
    minval: &Array,
    maxval: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let (lo, hi) = (
        ops::convert(minval, dtype, false)?,
        ops::convert(maxval, dtype, false)?,
    );
    let (lo, hi) = (to_rank(&lo, shape.len())?, to_rank(&hi, shape.len())?);
    let (uint, nmant) = match dtype {
        DType::Float16 => (DType::UInt16, 10),
        DType::BFloat16 => (DType::UInt16, 7),
        DType::Float32 => (DType::UInt32, 23),
        _ => (DType::UInt64, 52),
    };
    let nbits = uint.bits();
    let rng_bits = if nmant < 8 { 8 } else { nbits };
    let mut bits = super::bits_dtype(key, shape, unsigned(rng_bits))?;
    if rng_bits != nbits {
        bits = ops::convert(&bits, uint, false)?;
    }
    let uconst =
        |v: u64| crate::array::scalar_array(dtype_lattice::Value::Int(v.into()), uint, false);
    let shifted = bind(
        &lax::SHIFT_RIGHT_LOGICAL,
        &[&bits, &uconst(u64::from(rng_bits - nmant))?],
    )?;
    let one_bits = ((1u64 << (nbits - nmant - 2)) - 1) << nmant;
    let float_bits = bind(&lax::OR, &[&shifted, &uconst(one_bits)?])?;
    let floats = lax::bind1(
        &lax::BITCAST_CONVERT_TYPE,
        &[&float_bits],
        &Params::new().with("new_dtype", Param::DType(dtype)),
    )?;
    let floats = jnp::subtract(&floats, &konst(1.0, dtype)?)?;
    let scaled = jnp::add(jnp::multiply(&floats, jnp::subtract(&hi, &lo)?)?, &lo)?;
    bind(&lax::MAX, &[&lo, &reshape(&scaled, shape)?])
}

/// The unsigned dtype of `bits` bits.
pub(super) fn unsigned(bits: u32) -> DType {
    match bits {
        8 => DType::UInt8,
        16 => DType::UInt16,
        32 => DType::UInt32,
        _ => DType::UInt64,
    }
}

/// JAX's `_normal(key, shape, dtype)` for a real dtype: `_normal_real` inside it, a uniform
/// draw on `(nextafter(-1, 0), 1)` through `erf_inv`, times `sqrt(2)`.
pub(super) fn normal_jit(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let shape = shape.to_vec();
    jitted("_normal", key, |k: Array| {
        jitted("_normal_real", &k, |k: Array| {
            // np.nextafter(-1, 0) of the dtype: -1 + epsneg.
            let (_, _, epsneg, _) = finfo(dtype);
            let lo = konst(-1.0 + epsneg, dtype)?;
            let u = uniform_jit(&k, &lo, &konst(1.0, dtype)?, &shape, dtype, false)?;
            let e = un(&lax::ERF_INV, &u)?;
            bind(&lax::MUL, &[&konst(std::f64::consts::SQRT_2, dtype)?, &e])
        })
    })
}

// ---------------------------------------------------------------------------------------
// uniform with array bounds
// ---------------------------------------------------------------------------------------

/// `jax.random.uniform(key, shape, dtype, minval, maxval)` with bounds given as arrays (or
/// as Python scalars: [`Array::python_scalar`]): values in `[minval, maxval)`, the bounds
/// converted to `dtype` and broadcast against `shape` (as `uniform` broadcasts them: by rank,
/// then size-1 dimensions).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let lo = Array::from_vec(vec![0.0f32, 10.0, 20.0]);
/// let hi = Array::python_scalar(30.0)?;
/// let u = random::uniform_array(&random::key(0)?, &[2, 3], DType::Float32, &lo, &hi)?;
/// assert_eq!(u.aval().to_string(), "f32[2,3]");
/// assert!(u.to_vec::<f32>()?.iter().all(|&v| (0.0..30.0).contains(&v)));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key or a dtype that is not a float dtype; the primitives'
/// errors for bounds that do not broadcast to `shape`; `InvalidArgument` for 8-bit floats.
pub fn uniform_array(
    key: &Array,
    shape: &[usize],
    dtype: DType,
    minval: &Array,
    maxval: &Array,
) -> Result<Array, Error> {
    let key = single_key("uniform", key)?;
    let dtype = float("uniform", dtype)?;
    uniform_jit(&key, minval, maxval, shape, dtype, false)
}

// ---------------------------------------------------------------------------------------
// Transforms of one uniform draw
// ---------------------------------------------------------------------------------------

/// `jax.random.exponential(key, shape, dtype)`: `-log1p(-u)` of a uniform draw `u` on
/// `[0, 1)`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::random;
/// let e = random::exponential(&random::key(0)?, &[3], DType::Float32)?;
/// assert!(e.to_vec::<f32>()?.iter().all(|&v| v >= 0.0));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key or a dtype that is not a float dtype;
/// `InvalidArgument` for 8-bit floats.
pub fn exponential(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let key = single_key("exponential", key)?;
    let dtype = float("exponential", dtype)?;
    exponential_jit(&key, shape, dtype)
}

fn exponential_jit(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    jitted("_exponential", key, |k: Array| {
        let u = uniform01(&k, shape, dtype)?;
        ops::neg(&un(&lax::LOG1P, &ops::neg(&u)?)?)
    })
}

/// `jax.random.cauchy(key, shape, dtype)`: `tan(pi * (u - 0.5))` of a uniform draw on
/// `[eps, 1)`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::random;
/// let c = random::cauchy(&random::key(0)?, &[3], DType::Float32)?;
/// assert_eq!(c.shape(), &[3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`exponential`].
pub fn cauchy(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let key = single_key("cauchy", key)?;
    let dtype = float("cauchy", dtype)?;
    jitted("_cauchy", &key, |k: Array| {
        let (_, eps, _, _) = finfo(dtype);
        let u = uniform_jit(&k, &konst(eps, dtype)?, &py(1.0)?, shape, dtype, false)?;
        let centred = bind(&lax::SUB, &[&u, &konst(0.5, dtype)?])?;
        let x = bind(&lax::MUL, &[&konst(std::f64::consts::PI, dtype)?, &centred])?;
        un(&lax::TAN, &x)
    })
}

/// `jax.random.laplace(key, shape, dtype)`: `sign(u) * log1p(-|u|)` of a uniform draw on
/// `[-1 + epsneg, 1)`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::random;
/// let l = random::laplace(&random::key(0)?, &[2, 2], DType::Float32)?;
/// assert_eq!(l.shape(), &[2, 2]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`exponential`].
pub fn laplace(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let key = single_key("laplace", key)?;
    let dtype = float("laplace", dtype)?;
    jitted("_laplace", &key, |k: Array| {
        let (_, _, epsneg, _) = finfo(dtype);
        let lo = konst(-1.0 + epsneg, dtype)?;
        let u = uniform_jit(&k, &lo, &py(1.0)?, shape, dtype, false)?;
        let sign = un(&lax::SIGN, &u)?;
        let l = un(&lax::LOG1P, &ops::neg(&un(&lax::ABS, &u)?)?)?;
        bind(&lax::MUL, &[&sign, &l])
    })
}

/// `jax.random.logistic(key, shape, dtype)`: `log(x) - log1p(-x)` of a uniform draw on
/// `[tiny, 1)`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::random;
/// let l = random::logistic(&random::key(0)?, &[3], DType::Float32)?;
/// assert_eq!(l.shape(), &[3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`exponential`].
pub fn logistic(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let key = single_key("logistic", key)?;
    let dtype = float("logistic", dtype)?;
    jitted("_logistic", &key, |k: Array| {
        let (_, _, _, tiny) = finfo(dtype);
        let x = uniform_jit(&k, &konst(tiny, dtype)?, &py(1.0)?, shape, dtype, false)?;
        let a = un(&lax::LOG, &x)?;
        let b = un(&lax::LOG1P, &ops::neg(&x)?)?;
        bind(&lax::SUB, &[&a, &b])
    })
}

/// `jax.random.gumbel(key, shape, dtype, mode)`: `-log(-log(u))`. `mode` (JAX's default,
/// `None`, is `"low"`, as `jax_use_high_dynamic_range_gumbel` is off): `"low"` draws `u` on
/// `[tiny, 1)`; `"high"` draws two uniforms and adds the second below the first's resolution
/// (`-log(-log1p(-x))`); `"highest"` (float32 only; otherwise `"high"`) builds `u` from 64
/// random bits in fixed point, taking `log1p` below one half and `log` above.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::random;
/// let g = random::gumbel(&random::key(0)?, &[3], DType::Float32, Some("high"))?;
/// assert_eq!(g.shape(), &[3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`exponential`]; JAX's `ValueError` for a mode other than `"low"`, `"high"` and
/// `"highest"`.
pub fn gumbel(
    key: &Array,
    shape: &[usize],
    dtype: DType,
    mode: Option<&str>,
) -> Result<Array, Error> {
    let key = single_key("gumbel", key)?;
    let dtype = float("gumbel", dtype)?;
    let mode = mode.unwrap_or("low");
    if !matches!(mode, "highest" | "high" | "low") {
        return Err(Error::refused(
            Exception::ValueError,
            format!("Must provide valid mode for gumbel got: {mode}"),
        ));
    }
    gumbel_jit(&key, shape, dtype, mode)
}

/// JAX's `_gumbel(key, shape, dtype, mode)`.
fn gumbel_jit(key: &Array, shape: &[usize], dtype: DType, mode: &str) -> Result<Array, Error> {
    let (nmant, _, _, tiny) = finfo(dtype);
    jitted("_gumbel", key, |k: Array| {
        let neg_log = |x: &Array| jnp::negative(jnp::log(x)?);
        if dtype == DType::Float32 && mode == "highest" {
            return gumbel_highest(&k, shape);
        }
        if mode == "low" {
            let u = uniform_jit(&k, &konst(tiny, dtype)?, &py(1.0)?, shape, dtype, true)?;
            return neg_log(&jnp::negative(jnp::log(&u)?)?);
        }
        let mut two = vec![2];
        two.extend_from_slice(shape);
        let hl = uniform_jit(&k, &py(0.0)?, &py(1.0)?, &two, dtype, true)?;
        let (high, low) = (unpack(&hl, 0)?, unpack(&hl, 1)?);
        let above = jnp::greater_equal(&high, 0.5)?;
        let fine = jnp::multiply(f64::powi(2.0, -(nmant as i32)), &low)?;
        let up = jnp::add(jnp::add(&high, &fine)?, &konst(tiny, dtype)?)?;
        let x = where_(&above, &high, &up)?;
        neg_log(&jnp::negative(jnp::log1p(jnp::negative(&x)?)?)?)
    })
}

/// `_gumbel`'s `"highest"` mode on float32: 64 random bits as a fixed-point number `u`
/// (or `1 - u` in two's complement when its top bit is set) made a float exactly by
/// `_safe_int_to_float`, `-log(-log1p(-x))` below one half and `-log(-log(x))` above.
fn gumbel_highest(key: &Array, shape: &[usize]) -> Result<Array, Error> {
    let u32c = |v: u32| Array::scalar(v);
    let mut two = vec![2];
    two.extend_from_slice(shape);
    let bits = super::bits_dtype(key, &two, DType::UInt32)?;
    let neg = un(&lax::NOT, &bits)?;
    let lo_bits = row(&neg, 1)?;
    // 1 - bits in u64 fixed point: the low word plus one, the carry into the high word
    // (`jnp.array([lo_bits == 2**32 - 1, jnp.ones_like(lo_bits)], dtype=uint32)`).
    let carry = jnp::equal(&lo_bits, u32c(u32::MAX))?;
    let ones = jnp::ones_like(&lo_bits)?;
    let mut rows = Vec::new();
    for r in [ops::convert(&carry, DType::UInt32, false)?, ones] {
        let mut s1 = vec![1];
        s1.extend_from_slice(r.shape());
        rows.push(ops::broadcast_to(&r, &s1)?);
    }
    let inc = lax::bind1(
        &lax::CONCATENATE,
        &[&rows[0], &rows[1]],
        &Params::new().with("dimension", Param::Int(0)),
    )?;
    let neg = jnp::add(&neg, &inc)?;
    let flip = jnp::less(&row(&bits, 0)?, u32c(1 << 31))?;
    let x = safe_int_to_float(&where_(&flip, &bits, &neg)?)?;
    let small = jnp::negative(jnp::log(jnp::negative(jnp::log1p(jnp::negative(&x)?)?)?)?)?;
    let large = jnp::negative(jnp::log(jnp::negative(jnp::log(&x)?)?)?)?;
    where_(&flip, &small, &large)
}

/// JAX's `_safe_int_to_float(bits)`: `u32[2, ...]` bits (high word first) as the float32 of
/// the fixed-point fraction they hold, in `(0, 1)`, rounded down to 24 significant bits.
fn safe_int_to_float(bits: &Array) -> Result<Array, Error> {
    let u32c = |v: u32| Array::scalar(v);
    let clz = un(&lax::CLZ, bits)?;
    let (hiclz, loclz) = (unpack(&clz, 0)?, unpack(&clz, 1)?);
    let (hi, lo) = (unpack(bits, 0)?, unpack(bits, 1)?);
    let top = bind(&lax::SHIFT_LEFT, &[&hi, &hiclz])?;
    let all_hi = jnp::equal(&hiclz, 32)?;
    let from_lo = bind(&lax::SHIFT_LEFT, &[&lo, &loclz])?;
    let rest = bind(
        &lax::SHIFT_RIGHT_LOGICAL,
        &[&lo, &jnp::subtract(32, &hiclz)?],
    )?;
    let mantissa = bind(&lax::OR, &[&top, &where_(&all_hi, &from_lo, &rest)?])?;
    let mantissa = bind(&lax::SHIFT_RIGHT_LOGICAL, &[&mantissa, &u32c(32 - 23 - 1)])?;
    let mantissa = bind(&lax::AND, &[&mantissa, &u32c((1 << 23) - 1)])?;
    let all_hi = jnp::equal(&hiclz, 32)?;
    let lead = where_(&all_hi, &jnp::add(32, &loclz)?, &hiclz)?;
    let exp = bind(&lax::SHIFT_LEFT, &[&jnp::subtract(126, &lead)?, &u32c(23)])?;
    let exp = bind(&lax::AND, &[&exp, &u32c((1 << 30) - (1 << 22))])?;
    let bits = bind(&lax::OR, &[&exp, &mantissa])?;
    lax::bind1(
        &lax::BITCAST_CONVERT_TYPE,
        &[&bits],
        &Params::new().with("new_dtype", Param::DType(DType::Float32)),
    )
}

// ---------------------------------------------------------------------------------------
// One-parameter samplers
// ---------------------------------------------------------------------------------------

/// The checks of `pareto`, `rayleigh`, `wald` and `lognormal`: key, dtype, the shape
/// broadcast with the parameter, the parameter cast safely to the dtype.
fn one_param(
    name: &str,
    what: &str,
    key: &Array,
    param: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<(Array, Vec<usize>, DType), Error> {
    let key = single_key(name, key)?;
    let dtype = float_dtype(name, what, dtype)?;
    let shape = broadcast_shape(name, shape, &[param])?;
    safe_to_cast(name, dtype, &[param])?;
    Ok((key, shape, dtype))
}

/// `jax.random.pareto(key, b, shape, dtype)`: `exp(e / b)` of an exponential draw `e`;
/// `shape` defaults to `b`'s.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let b = Array::python_scalar(3.0)?;
/// let p = random::pareto(&random::key(0)?, &b, Some(&[3]), DType::Float32)?;
/// assert!(p.to_vec::<f32>()?.iter().all(|&v| v >= 1.0));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key, a dtype that is not a float dtype or a shape `b`
/// does not broadcast to; its `TypePromotionError` for a `b` that does not cast safely to
/// `dtype`.
pub fn pareto(
    key: &Array,
    b: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let (key, shape, dtype) = one_param("pareto", "a float dtype", key, b, shape, dtype)?;
    jitted("_pareto", &(key, b.clone()), |(k, b): (Array, Array)| {
        let b = ops::convert(&b, dtype, false)?;
        let e = exponential(&k, &shape, dtype)?;
        un(&lax::EXP, &jnp::true_divide(&e, &b)?)
    })
}

/// `jax.random.rayleigh(key, scale, shape, dtype)`: `scale * sqrt(-2 log(u))`; `shape`
/// defaults to `scale`'s.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let s = Array::from_vec(vec![1.0f32, 2.0]);
/// let r = random::rayleigh(&random::key(0)?, &s, None, DType::Float32)?;
/// assert_eq!(r.shape(), &[2]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`pareto`].
pub fn rayleigh(
    key: &Array,
    scale: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let (key, shape, dtype) = one_param("rayleigh", "a float dtype", key, scale, shape, dtype)?;
    jitted(
        "_rayleigh",
        &(key, scale.clone()),
        |(k, scale): (Array, Array)| {
            let u = uniform01(&k, &shape, dtype)?;
            let scale = jnp::astype(&scale, dtype)?;
            let scale = ops::broadcast_to(&scale, &shape)?;
            let log_u = un(&lax::LOG, &u)?;
            let two = bind(&lax::MUL, &[&log_u, &konst(-2.0, dtype)?])?;
            bind(&lax::MUL, &[&scale, &un(&lax::SQRT, &two)?])
        },
    )
}

/// `jax.random.wald(key, mean, shape, dtype)`: the inverse Gaussian by Michael, Schucany and
/// Haas's transformation of a normal and a uniform draw (from the key split in two); `shape`
/// defaults to `mean`'s.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let m = Array::python_scalar(1.5)?;
/// let w = random::wald(&random::key(0)?, &m, Some(&[4]), DType::Float32)?;
/// assert!(w.to_vec::<f32>()?.iter().all(|&v| v > 0.0));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`pareto`].
pub fn wald(
    key: &Array,
    mean: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let (key, shape, dtype) = one_param("wald", "a float dtype", key, mean, shape, dtype)?;
    jitted(
        "_wald",
        &(key, mean.clone()),
        |(k, mean): (Array, Array)| {
            let (k1, k2) = split2(&k)?;
            let mean = jnp::astype(&mean, dtype)?;
            let mean = ops::broadcast_to(&mean, &shape)?;
            let v = normal_jit(&k1, &shape, dtype)?;
            let z = uniform01(&k2, &shape, dtype)?;
            let y = ops::integer_pow(&v, 2)?;
            let y_sq = ops::integer_pow(&y, 2)?;
            let mean_sq = ops::integer_pow(&mean, 2)?;
            let t = jnp::add(
                jnp::multiply(jnp::multiply(4, &mean)?, &y)?,
                jnp::multiply(&mean_sq, &y_sq)?,
            )?;
            let sqrt_term = un(&lax::SQRT, &t)?;
            let x = jnp::subtract(
                jnp::add(&mean, jnp::true_divide(jnp::multiply(&mean_sq, &y)?, 2)?)?,
                jnp::multiply(jnp::true_divide(&mean, 2)?, &sqrt_term)?,
            )?;
            let bound = jnp::true_divide(&mean, jnp::add(&mean, &x)?)?;
            let take_x = bind(&lax::LE, &[&z, &bound])?;
            let other = jnp::true_divide(&mean_sq, &x)?;
            ops::select_n(&take_x, &[&other, &x])
        },
    )
}

/// `jax.random.lognormal(key, sigma, shape, dtype)`: `exp(sigma * n)` of a normal draw `n`;
/// `shape` defaults to `sigma`'s. (JAX's default `sigma`, `np.float32(1)`, is
/// `Array::scalar(1.0f32)`; complex dtypes, which JAX takes, are refused here.)
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let s = Array::python_scalar(0.5)?;
/// let l = random::lognormal(&random::key(0)?, &s, Some(&[3]), DType::Float32)?;
/// assert!(l.to_vec::<f32>()?.iter().all(|&v| v > 0.0));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`pareto`] (a non-float dtype is refused with "must be a float or complex dtype");
/// `InvalidArgument` for complex dtypes.
pub fn lognormal(
    key: &Array,
    sigma: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let name = "lognormal";
    let key = single_key(name, key)?;
    let d = dtype.canonicalize(x64());
    let dtype = if d.kind() == Kind::Complex {
        return Err(crate::array::invalid(
            "dtype",
            format!("complex dtypes ({d}) are not supported by lognormal here"),
        ));
    } else {
        float_dtype(name, "a float or complex dtype", d)?
    };
    let shape = broadcast_shape(name, shape, &[sigma])?;
    safe_to_cast(name, dtype, &[sigma])?;
    inline_jitted(
        "_lognormal",
        &(key, sigma.clone()),
        |(k, sigma): (Array, Array)| {
            let sigma = convert_const(&sigma, dtype)?;
            let n = jnp::multiply(&normal_jit(&k, &shape, dtype)?, &sigma)?;
            un(&lax::EXP, &n)
        },
    )
}

// ---------------------------------------------------------------------------------------
// Several parameters
// ---------------------------------------------------------------------------------------

/// `jax.random.weibull_min(key, scale, concentration, shape, dtype)`: the inverse of the
/// Weibull CDF, `(-log1p(-u)) ** (1 / concentration) * scale`; the parameters broadcast
/// with `shape` (JAX checks nothing: the result has their broadcast shape).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let (s, c) = (Array::python_scalar(2.0)?, Array::python_scalar(1.5)?);
/// let w = random::weibull_min(&random::key(0)?, &s, &c, &[3], DType::Float32)?;
/// assert!(w.to_vec::<f32>()?.iter().all(|&v| v >= 0.0));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key or a dtype that is not a float dtype; `jax.numpy`'s
/// for parameters that do not broadcast.
pub fn weibull_min(
    key: &Array,
    scale: &Array,
    concentration: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let key = single_key("weibull_min", key)?;
    let dtype = float("weibull_min", dtype)?;
    jitted(
        "_weibull_min",
        &(key, scale.clone(), concentration.clone()),
        |(k, scale, c): (Array, Array, Array)| {
            let u = uniform_jit(&k, &py(0)?, &py(1)?, shape, dtype, false)?;
            let e = jnp::negative(jnp::log1p(jnp::negative(&u)?)?)?;
            let p = jnp::power(&e, jnp::true_divide(1.0, &c)?)?;
            jnp::multiply(&p, &scale)
        },
    )
}

/// `jax.random.double_sided_maxwell(key, loc, scale, shape, dtype)`: a Maxwell draw with a
/// random sign, `sign * m * scale + loc`. The result's shape is `shape` followed by the
/// parameters' broadcast shape (`shape` taken as that shape when empty, so that `()` with
/// parameters of shape `(3,)` gives `(3, 3)`, as in JAX).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let (loc, scale) = (Array::python_scalar(0.5)?, Array::python_scalar(2.0)?);
/// let d = random::double_sided_maxwell(&random::key(0)?, &loc, &scale, &[3], DType::Float32)?;
/// assert_eq!(d.shape(), &[3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`weibull_min`].
pub fn double_sided_maxwell(
    key: &Array,
    loc: &Array,
    scale: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let key = single_key("double_sided_maxwell", key)?;
    let dtype = float_dtype("double_sided_maxwell", "a float dtype", dtype)?;
    jitted(
        "_double_sided_maxwell",
        &(key, loc.clone(), scale.clone()),
        |(k, loc, scale): (Array, Array, Array)| {
            let params = jnp::broadcast_shapes(&[loc.shape(), scale.shape()])?;
            let mut full = if shape.is_empty() {
                params.clone()
            } else {
                shape.to_vec()
            };
            full.extend_from_slice(&params);
            let (mk, rk) = split2(&k)?;
            let m = maxwell(&mk, &full, dtype)?;
            let sign = super::rademacher(&rk, &full, dtype)?;
            let x = jnp::multiply(jnp::multiply(&sign, &m)?, &scale)?;
            jnp::add(&x, &loc)
        },
    )
}

/// `jax.random.maxwell(key, shape, dtype)`: the norm of three normal draws (`shape + (3,)`,
/// `jnp.linalg.norm` along the last axis).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::random;
/// let m = random::maxwell(&random::key(0)?, &[3], DType::Float32)?;
/// assert!(m.to_vec::<f32>()?.iter().all(|&v| v >= 0.0));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`exponential`].
pub fn maxwell(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let key = single_key("maxwell", key)?;
    let dtype = float("maxwell", dtype)?;
    jitted("_maxwell", &key, |k: Array| {
        let mut full = shape.to_vec();
        full.push(3);
        let n = normal_jit(&k, &full, dtype)?;
        jitted("norm", &n, |x: Array| {
            let sq = jnp::multiply(&x, &x)?;
            jnp::sqrt(jnp::sum(&sq, Axes::Some(vec![-1]), false)?)
        })
    })
}

/// `jax.random.triangular(key, left, mode, right, shape, dtype)`: the inverse of the
/// triangular CDF on `[left, right]` peaking at `mode`; `shape` defaults to the parameters'
/// broadcast shape.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let p = |v: f64| Array::python_scalar(v);
/// let t = random::triangular(&random::key(0)?, &p(0.0)?, &p(0.3)?, &p(1.0)?, Some(&[3]),
///                            DType::Float32)?;
/// assert!(t.to_vec::<f32>()?.iter().all(|&v| (0.0..=1.0).contains(&v)));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`pareto`], for the three parameters.
pub fn triangular(
    key: &Array,
    left: &Array,
    mode: &Array,
    right: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let name = "triangular";
    let key = single_key(name, key)?;
    let dtype = float(name, dtype)?;
    let shape = broadcast_shape(name, shape, &[left, mode, right])?;
    safe_to_cast(name, dtype, &[left, mode, right])?;
    inline_jitted(
        "_triangular",
        &(key, left.clone(), mode.clone(), right.clone()),
        |(k, left, mode, right): (Array, Array, Array, Array)| {
            let conv = |x: &Array| ops::broadcast_to(&convert_const(x, dtype)?, &shape);
            let (left, right, mode) = (conv(&left)?, conv(&right)?, conv(&mode)?);
            let fc = jnp::true_divide(jnp::subtract(&mode, &left)?, jnp::subtract(&right, &left)?)?;
            let u = uniform01(&k, &shape, dtype)?;
            let a = jnp::multiply(
                jnp::multiply(&u, jnp::subtract(&right, &left)?)?,
                jnp::subtract(&mode, &left)?,
            )?;
            let out1 = jnp::add(&left, un(&lax::SQRT, &a)?)?;
            let b = jnp::multiply(
                jnp::multiply(jnp::subtract(1, &u)?, jnp::subtract(&right, &left)?)?,
                jnp::subtract(&right, &mode)?,
            )?;
            let out2 = jnp::subtract(&right, un(&lax::SQRT, &b)?)?;
            let below = bind(&lax::LT, &[&u, &fc])?;
            ops::select_n(&below, &[&out2, &out1])
        },
    )
}

/// `jax.random.truncated_normal(key, lower, upper, shape, dtype)`: a uniform draw between
/// `erf(lower / sqrt 2)` and `erf(upper / sqrt 2)` through `sqrt(2) erf_inv`, clipped into
/// the open interval `(lower, upper)`; `shape` defaults to the bounds' broadcast shape.
/// Differentiable in the bounds.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let (lo, hi) = (Array::python_scalar(-1.0)?, Array::python_scalar(2.0)?);
/// let t = random::truncated_normal(&random::key(0)?, &lo, &hi, Some(&[3]), DType::Float32)?;
/// assert!(t.to_vec::<f32>()?.iter().all(|&v| -1.0 < v && v < 2.0));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key, a dtype that is not a float dtype, or a `shape`
/// the bounds do not broadcast to.
pub fn truncated_normal(
    key: &Array,
    lower: &Array,
    upper: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let key = single_key("truncated_normal", key)?;
    let dtype = float("truncated_normal", dtype)?;
    let shape = shape.map(<[usize]>::to_vec);
    jitted(
        "_truncated_normal",
        &(key, lower.clone(), upper.clone()),
        |(k, lower, upper): (Array, Array, Array)| {
            let shape = match &shape {
                None => jnp::broadcast_shapes(&[lower.shape(), upper.shape()])?,
                Some(s) => {
                    check_shape("truncated_normal", s, &[lower.shape(), upper.shape()])?;
                    s.clone()
                }
            };
            let sqrt2 = konst(std::f64::consts::SQRT_2, dtype)?;
            let lower = ops::convert(&lower, dtype, false)?;
            let upper = ops::convert(&upper, dtype, false)?;
            let a = un(&lax::ERF, &jnp::true_divide(&lower, &sqrt2)?)?;
            let b = un(&lax::ERF, &jnp::true_divide(&upper, &sqrt2)?)?;
            let u = uniform_jit(&k, &a, &b, &shape, dtype, false)?;
            let out = jnp::multiply(&sqrt2, un(&lax::ERF_INV, &u)?)?;
            let lo = bind(
                &lax::NEXTAFTER,
                &[
                    &crate::interpreters::stop_gradient(&lower)?,
                    &konst(f64::INFINITY, dtype)?,
                ],
            )?;
            let hi = bind(
                &lax::NEXTAFTER,
                &[
                    &crate::interpreters::stop_gradient(&upper)?,
                    &konst(f64::NEG_INFINITY, dtype)?,
                ],
            )?;
            clip(&out, &lo, &hi)
        },
    )
}
