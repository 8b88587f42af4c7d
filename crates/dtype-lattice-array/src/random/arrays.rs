//! `jax.random` on [`Array`]s: keys are arrays of a key dtype (`key<fry>`), built and
//! transformed by the PRNG primitives ([`crate::lax`]: `random_seed`, `random_split`,
//! `random_fold_in`, `random_bits`, `random_wrap`, `random_unwrap`); the samplers turn a key
//! array into an [`Array`] of values with the bit-exact kernels of [`Random`].
//!
//! x64 follows the rules in force ([`crate::config::rules`], JAX's `jax_enable_x64`): it decides
//! the seed's width (`key`), the default `bits` width and the canonical sample dtypes.
//!
//! As in `jax.random`, every function but [`key_data`] takes a single key (shape `()`;
//! batched keys are refused with JAX's `ValueError`: [`crate::vmap`] over them instead),
//! and a `uint32` array of key data is accepted as a legacy (raw) key, wrapped as threefry2x32
//! and, for [`split`] and [`fold_in`], returned as raw key data again.
//!
//! Every function traces: under a transformation (`jit`, `vmap`, ...) the key is a tracer and
//! `uniform`, `normal` and `bernoulli` bind `random_bits` and the `lax` primitives JAX stages
//! for them (`shift_right_logical`, `or`, `bitcast_convert_type`, `sub`, `mul`, `add`, `max`,
//! `erf_inv`, `lt`), which compute the same values as the eager kernels, bit for bit but for
//! one case: XLA fuses `floats * (maxval - minval) + minval` into one rounding where the
//! primitives round twice, so a traced `uniform` over a span that is not a power of two may
//! differ from the eager one in the last place. `randint` needs a concrete key.

use dtype_lattice::error::Exception;
use dtype_lattice::key::KeyImpl;
use dtype_lattice::{DType, Error};

use super::{Key, Random, Sample, Values};
use crate::array::{Array, py_shape};
use crate::lax::random::{
    RANDOM_BITS, RANDOM_FOLD_IN, RANDOM_SEED, RANDOM_SPLIT, RANDOM_UNWRAP, RANDOM_WRAP,
};
use crate::lax::{self, Param, Params, Primitive};

fn bind(prim: &'static Primitive, inputs: &[&Array], params: &Params) -> Result<Array, Error> {
    lax::bind1(prim, inputs, params)
}

fn x64() -> bool {
    crate::config::rules().options().x64
}

fn rng() -> Random {
    Random::new().x64(x64())
}

/// `_check_prng_key`: a typed key array as it is, or raw `uint32` key data wrapped as
/// threefry2x32 keys (then `true`); a batched key is refused unless `allow_batched`.
pub(super) fn check_key(
    name: &str,
    key: &Array,
    allow_batched: bool,
) -> Result<(Array, bool), Error> {
    let (keys, wrapped) = if key.dtype().is_extended() {
        (key.clone(), false)
    } else {
        (
            wrap_key_data(key, crate::config::default_prng_impl().dtype())?,
            true,
        )
    };
    if !allow_batched && keys.ndim() != 0 {
        return Err(Error::refused(
            Exception::ValueError,
            format!(
                "{name} accepts a single key, but was given a key array of shape {} != (). Use \
                 jax.vmap for batching.",
                py_shape(key.shape())
            ),
        ));
    }
    Ok((keys, wrapped))
}

/// A single key for the samplers (threefry2x32 only).
fn single_key(name: &str, key: &Array) -> Result<Key, Error> {
    let (keys, _) = check_key(name, key, false)?;
    if !keys.is_concrete() {
        return Err(Error::refused(
            Exception::NotImplementedError,
            format!("{name} of a traced key (under jit, vmap, grad...) is not implemented"),
        ));
    }
    super::implemented(keys.dtype())?;
    match keys.as_bytes() {
        &[a0, a1, a2, a3, b0, b1, b2, b3] => Ok(Key::from_data([
            u32::from_le_bytes([a0, a1, a2, a3]),
            u32::from_le_bytes([b0, b1, b2, b3]),
        ])),
        _ => Err(crate::array::invalid(
            "key",
            "not a single threefry2x32 key",
        )),
    }
}

/// Whether a sampler runs as JAX stages it (through `random_bits` and the lax primitives
/// below) rather than through the fused kernels: for a traced key, and for any key while
/// `jit` or `make_jaxpr` is staging (omnistaging stages PRNG calls on constant keys too). A
/// constant key under `grad` or `vmap` alone samples through the kernels: the same bits as
/// JAX, whose `_uniform` is compiled (XLA fuses its multiply and add, as jit's plan does; a
/// primitive at a time would round twice).
fn staged(key: &Array) -> bool {
    // Raw key data is of the default implementation.
    let k = key
        .dtype()
        .key_impl()
        .unwrap_or_else(crate::config::default_prng_impl);
    !key.is_concrete()
        || crate::core::staging()
        || k.algorithm != dtype_lattice::key::Algorithm::Threefry2x32
}

/// A sampler's staged computation run as JAX runs its jitted samplers: under `jit` when the
/// key is concrete and nothing stages (a key of an implementation other than threefry2x32,
/// evaluated eagerly), so that XLA's fusions apply (`uniform`'s multiply-add, one rounding);
/// as it is under a transformation.
fn as_jitted(key: &Array, f: impl Fn(&Array) -> Result<Array, Error>) -> Result<Array, Error> {
    if key.is_concrete() && !crate::core::staging() {
        crate::jit::jit(|k: Array| f(&k)).call(key)
    } else {
        f(key)
    }
}

/// `lax.broadcast_to_rank(x, rank)`: leading dimensions of size 1 up to `rank`.
fn to_rank(x: &Array, rank: usize) -> Result<Array, Error> {
    if x.ndim() >= rank {
        return Ok(x.clone());
    }
    let mut shape = vec![1; rank - x.ndim()];
    shape.extend_from_slice(x.shape());
    lax::ops::broadcast_to(x, &shape)
}

/// `random_bits[bit_width, shape]` of `keys` (their data checked already).
fn random_bits(keys: &Array, bit_width: u32, shape: &[usize]) -> Result<Array, Error> {
    let params = Params::new()
        .with("bit_width", Param::Int(i64::from(bit_width)))
        .with(
            "shape",
            Param::Ints(shape.iter().map(|&d| d as i64).collect()),
        );
    bind(&RANDOM_BITS, &[keys], &params)
}

/// The binary lax primitive `p` on `x` and `y`.
fn lax2(p: &'static Primitive, x: &Array, y: &Array) -> Result<Array, Error> {
    bind(p, &[x, y], &Params::new())
}

/// `uniform`'s values as JAX stages them (`_uniform(key, minval, maxval, shape, dtype)`):
/// the bounds converted to `dtype` (a weak Python float is converted, a strong bound of
/// `dtype` is not) and broadcast to the rank of `shape`, `random_bits` of the key, the top
/// mantissa bits under the exponent of 1.0, minus 1, scaled and shifted into `[minval,
/// maxval)`, then `max(minval, ·)`.
fn traced_uniform(
    name: &str,
    key: &Array,
    shape: &[usize],
    dtype: DType,
    minval: &Array,
    maxval: &Array,
) -> Result<Array, Error> {
    let (keys, _) = check_key(name, key, false)?;
    super::output_size(shape)?;
    super::samplers::uniform_body(&keys, minval, maxval, shape, dtype)
}

/// A Python float bound (weakly typed, in the default float dtype, as JAX passes
/// `minval=0.0` into `_uniform`), for [`traced_uniform`].
fn weak_bound(v: f64) -> Result<Array, Error> {
    let dtype = if x64() {
        DType::Float64
    } else {
        DType::Float32
    };
    Ok(crate::array::scalar(v, dtype)?.with_weak_type(true))
}

fn no_lt() -> Error {
    Error::refused(Exception::NotImplementedError, "a lax primitive is missing")
}

/// The result of a key function, unwrapped again when the key came in raw.
fn returned(keys: Array, wrapped: bool) -> Result<Array, Error> {
    if wrapped { key_data(&keys) } else { Ok(keys) }
}

/// A sampler's output as an array.
fn sample_array(s: Sample) -> Result<Array, Error> {
    let shape = s.shape().to_vec();
    match s.into_values() {
        Values::Bool(v) => Array::from_shape_vec(&shape, v),
        Values::U8(v) => Array::from_shape_vec(&shape, v),
        Values::U16(v) => Array::from_shape_vec(&shape, v),
        Values::U32(v) => Array::from_shape_vec(&shape, v),
        Values::U64(v) => Array::from_shape_vec(&shape, v),
        Values::I8(v) => Array::from_shape_vec(&shape, v),
        Values::I16(v) => Array::from_shape_vec(&shape, v),
        Values::I32(v) => Array::from_shape_vec(&shape, v),
        Values::I64(v) => Array::from_shape_vec(&shape, v),
        Values::F16(v) => Array::from_shape_vec(&shape, v),
        Values::BF16(v) => Array::from_shape_vec(&shape, v),
        Values::F32(v) => Array::from_shape_vec(&shape, v),
        Values::F64(v) => Array::from_shape_vec(&shape, v),
    }
}

/// `jax.random.key(seed)`: a scalar key of the default implementation (`key<fry>`, unless
/// [`set_default_impl`] or [`crate::config::with_default_prng_impl`] says otherwise). The seed
/// is a Python int: beyond the 64-bit signed range JAX raises `OverflowError`; with x64 off it
/// becomes an int32 (its low word), with x64 an int64 (both words).
///
/// ```
/// use dtype_lattice_array::random;
/// let k = random::key(42)?;
/// assert_eq!(k.to_string(), "Array((), dtype=key<fry>) overlaying:\n[ 0 42]");
/// assert_eq!(random::key_data(&k)?.to_vec::<u32>()?, [0, 42]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// Python's `OverflowError` for a seed outside the 64-bit signed range.
pub fn key(seed: i128) -> Result<Array, Error> {
    seeded(seed, crate::config::default_prng_impl())
}

/// `jax.config.update("jax_default_prng_impl", name)`: the implementation [`key`],
/// [`prng_key`] and raw key data take from now on, on every thread (for one thread and one
/// call, [`crate::config::with_default_prng_impl`]).
///
/// # Errors
///
/// JAX's `ValueError` for an unknown implementation ([`resolve_impl`]).
pub fn set_default_impl(name: &str) -> Result<(), Error> {
    crate::config::set_default_prng_impl(resolve_impl(name)?);
    Ok(())
}

/// `jax.random.key(seed, impl=NAME)`: a scalar key of the implementation named `impl_name`
/// (`threefry2x32`, `rbg`, `unsafe_rbg`, `threefry4x32`, `philox2x32`, `philox4x32`, or one
/// registered with [`define_prng_impl`]).
///
/// ```
/// use dtype_lattice_array::random;
/// let k = random::key_with(0, "rbg")?;
/// assert_eq!(k.to_string(), "Array((), dtype=key<rbg>) overlaying:\n[0 0 0 0]");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for an unknown implementation (with the known names); as [`key`]
/// otherwise.
pub fn key_with(seed: i128, impl_name: &str) -> Result<Array, Error> {
    seeded(seed, resolve_impl(impl_name)?)
}

/// JAX's `resolve_prng_impl` for a name: the implementation named `name`, built in or
/// registered ([`define_prng_impl`]).
///
/// ```
/// use dtype_lattice_array::random;
/// assert_eq!(random::resolve_impl("unsafe_rbg")?.tag, "urbg");
/// // Names only, as JAX: not the dtype tags.
/// let e = random::resolve_impl("urbg").unwrap_err();
/// assert!(e.to_string().starts_with("ValueError: unrecognized PRNG implementation \"urbg\"."));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for an unknown name, listing the known ones in JAX's order.
pub fn resolve_impl(name: &str) -> Result<&'static KeyImpl, Error> {
    let known = || -> Vec<&'static KeyImpl> {
        // The order in which JAX 0.10.2's modules register them, then the registered ones.
        let builtin = [
            "philox2x32",
            "philox4x32",
            "threefry2x32",
            "rbg",
            "unsafe_rbg",
            "threefry4x32",
        ];
        let extended = DType::extended();
        let impls = extended.iter().filter_map(|d| d.key_impl());
        let mut all: Vec<&'static KeyImpl> = builtin
            .iter()
            .filter_map(|n| impls.clone().find(|k| k.name == *n))
            .collect();
        all.extend(impls.filter(|k| !builtin.contains(&k.name)));
        all
    };
    let all = known();
    all.iter().find(|k| k.name == name).copied().ok_or_else(|| {
        let names: Vec<String> = all.iter().map(|k| format!("\"{}\"", k.name)).collect();
        Error::refused(
            Exception::ValueError,
            format!(
                "unrecognized PRNG implementation \"{name}\". Did you mean one of: {}?",
                names.join(", ")
            ),
        )
    })
}

/// `jax.random.PRNGKey(seed)`: a legacy raw key, the `uint32` key data of [`key`] (shape
/// `(2,)` for threefry2x32, the default implementation's key shape otherwise).
///
/// ```
/// use dtype_lattice_array::random;
/// assert_eq!(random::prng_key(42)?.to_vec::<u32>()?, [0, 42]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`key`].
pub fn prng_key(seed: i128) -> Result<Array, Error> {
    key_data(&key(seed)?)
}

/// `jax.random.key_impl(keys)`: the implementation of a key array (the default
/// implementation for raw key data).
///
/// ```
/// use dtype_lattice_array::random;
/// assert_eq!(random::key_impl(&random::key_with(0, "unsafe_rbg")?)?.tag, "urbg");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// The `TypeError`s of [`wrap_key_data`] for an array that is neither keys nor valid raw key
/// data.
pub fn key_impl(keys: &Array) -> Result<&'static KeyImpl, Error> {
    let (keys, _) = check_key("key_impl", keys, true)?;
    keys.dtype()
        .key_impl()
        .ok_or_else(|| crate::array::invalid("keys", "not a key array"))
}

/// `jax.extend.random.define_prng_impl` and `register_prng`: registers `functions` as the
/// PRNG implementation `name`, whose keys hold `key_words` `uint32` words and whose dtype is
/// `key<TAG>`; returns that dtype. Every function of this module takes its keys
/// ([`key_with`]`(seed, name)`, [`wrap_key_data`]), under every transformation.
///
/// See [`PrngImpl`](super::PrngImpl) for an example.
///
/// # Errors
///
/// JAX's `ValueError` for a name already registered, and for a tag already used or not
/// printable as `key<TAG>`, or when no slot is left
/// ([`MAX_REGISTERED`](dtype_lattice::key::MAX_REGISTERED)).
pub fn define_prng_impl(
    name: &str,
    tag: &str,
    key_words: usize,
    functions: impl super::PrngImpl + 'static,
) -> Result<DType, Error> {
    crate::lax::prng_impl::register(name, tag, key_words, std::sync::Arc::new(functions))
}

fn seeded(seed: i128, k: &'static KeyImpl) -> Result<Array, Error> {
    let seed = i64::try_from(seed).map_err(|_| {
        Error::refused(
            Exception::OverflowError,
            "Python int too large to convert to C long",
        )
    })?;
    let seeds = if x64() {
        Array::scalar(seed)
    } else {
        Array::scalar(seed as i32)
    };
    let params = Params::new().with("impl", Param::KeyImpl(k));
    bind(&RANDOM_SEED, &[&seeds], &params)
}

/// `jax.random.split(key, num)`: `num` keys, shape `(num,)`.
///
/// ```
/// use dtype_lattice_array::random;
/// let keys = random::split(&random::key(0)?, 3)?;
/// assert_eq!(keys.aval().to_string(), "key<fry>[3]");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// See [`split_shape`].
pub fn split(key: &Array, num: usize) -> Result<Array, Error> {
    split_shape(key, &[num])
}

/// `jax.random.split(key, shape)`: keys of any shape.
///
/// # Errors
///
/// JAX's `ValueError` for a batched key; the `TypeError`s of [`wrap_key_data`] for raw key
/// data that is not valid; `InvalidArgument` for more keys than memory holds (or a key
/// implementation other than threefry2x32).
pub fn split_shape(key: &Array, shape: &[usize]) -> Result<Array, Error> {
    let (keys, wrapped) = check_key("split", key, false)?;
    let shape = shape.iter().map(|&d| d as i64).collect();
    let params = Params::new().with("shape", Param::Ints(shape));
    returned(bind(&RANDOM_SPLIT, &[&keys], &params)?, wrapped)
}

/// `jax.random.fold_in(key, data)`: `data` is a Python int converted to `uint32`.
///
/// # Errors
///
/// JAX's `ValueError` for a batched key; Python's `OverflowError` for data outside `uint32`.
pub fn fold_in(key: &Array, data: i128) -> Result<Array, Error> {
    let (keys, wrapped) = check_key("fold_in", key, false)?;
    let d = u32::try_from(data).map_err(|_| {
        Error::refused(
            Exception::OverflowError,
            format!("Python integer {data} out of bounds for uint32"),
        )
    })?;
    let msgs = Array::scalar(d);
    returned(
        bind(&RANDOM_FOLD_IN, &[&keys, &msgs], &Params::new())?,
        wrapped,
    )
}

/// `jax.random.fold_in(key, data)` with an array `data`: a scalar of any dtype, converted to
/// `uint32` as `jnp.asarray(data, dtype='uint32')` converts it (integers wrap).
///
/// # Errors
///
/// JAX's `ValueError` for a batched key, its `TypeError` for non-scalar data, and
/// `convert_element_type`'s for key data.
pub fn fold_in_array(key: &Array, data: &Array) -> Result<Array, Error> {
    let (keys, wrapped) = check_key("fold_in", key, false)?;
    if data.ndim() != 0 {
        // JAX's message, its missing space included.
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "fold_in accepts a scalar, but was given an array ofshape {} != (). Use \
                 jax.vmap for batching.",
                py_shape(data.shape())
            ),
        ));
    }
    let msgs = data.astype(DType::UInt32)?;
    returned(
        bind(&RANDOM_FOLD_IN, &[&keys, &msgs], &Params::new())?,
        wrapped,
    )
}

/// `jax.random.bits(key, shape)`: `uint32` bits (`uint64` with x64).
///
/// # Errors
///
/// See [`bits_dtype`].
pub fn bits(key: &Array, shape: &[usize]) -> Result<Array, Error> {
    bits_dtype(
        key,
        shape,
        if x64() { DType::UInt64 } else { DType::UInt32 },
    )
}

/// `jax.random.bits(key, shape, dtype)` for an unsigned integer dtype (uint64 is uint32 with
/// x64 off).
///
/// # Errors
///
/// JAX's `ValueError` for a batched key or a dtype that is not an unsigned integer dtype;
/// JAX's `NotImplementedError` beyond 2^64 elements; `InvalidArgument` beyond memory.
pub fn bits_dtype(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let (keys, _) = check_key("bits", key, false)?;
    let dtype = dtype.canonicalize(x64());
    if dtype.kind() != dtype_lattice::Kind::UnsignedInt {
        return Err(Error::refused(
            Exception::ValueError,
            format!("dtype argument to `bits` must be an unsigned int dtype, got {dtype}"),
        ));
    }
    random_bits(&keys, dtype.bits(), shape)
}

/// `jax.random.uniform(key, shape, dtype, minval, maxval)`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::random;
/// let u = random::uniform(&random::key(0)?, &[2, 3], DType::Float32, 0.0, 1.0)?;
/// assert_eq!(u.aval().to_string(), "f32[2,3]");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key or a dtype that is not a float dtype; the errors of
/// [`Random::uniform`].
pub fn uniform(
    key: &Array,
    shape: &[usize],
    dtype: DType,
    minval: f64,
    maxval: f64,
) -> Result<Array, Error> {
    if staged(key) {
        let dtype = rng().float_dtype("uniform", "a float dtype", dtype)?;
        let (lo, hi) = (weak_bound(minval)?, weak_bound(maxval)?);
        return as_jitted(key, |k| {
            traced_uniform("uniform", k, shape, dtype, &lo, &hi)
        });
    }
    let k = single_key("uniform", key)?;
    sample_array(rng().uniform(&k, shape, dtype, minval, maxval)?)
}

/// `jax.random.normal(key, shape, dtype)`.
///
/// # Errors
///
/// JAX's `ValueError` for a batched key or a dtype that is not a float dtype; the errors of
/// [`Random::normal`].
pub fn normal(key: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    if staged(key) {
        let dtype = rng().float_dtype("normal", "a float or complex dtype", dtype)?;
        if matches!(
            dtype,
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64
        ) {
            // JAX's jitted `_normal` around `_normal_real` around `_uniform`.
            let (keys, _) = check_key("normal", key, false)?;
            return super::samplers::normal_jit(&keys, shape, dtype);
        }
        // np.nextafter(-1, 0) and 1 of `dtype` (strong: no conversion is staged).
        let lo = match dtype {
            DType::Float16 => half::f16::from_bits(half::f16::NEG_ONE.to_bits() - 1).to_f64(),
            DType::BFloat16 => half::bf16::from_bits(half::bf16::NEG_ONE.to_bits() - 1).to_f64(),
            DType::Float32 => f64::from(f32::from_bits((-1.0f32).to_bits() - 1)),
            _ => f64::from_bits((-1.0f64).to_bits() - 1),
        };
        let konst = |v: f64| crate::array::scalar(v, dtype);
        let (lo, one) = (konst(lo)?, konst(1.0)?);
        return as_jitted(key, |k| {
            let u = traced_uniform("normal", k, shape, dtype, &lo, &one)?;
            let e = lax::ops::unary(&lax::ERF_INV, &u)?;
            let sqrt2 = crate::array::scalar(std::f64::consts::SQRT_2, dtype)?;
            lax::ops::mul(&sqrt2, &e)
        });
    }
    let k = single_key("normal", key)?;
    sample_array(rng().normal(&k, shape, dtype)?)
}

/// `jax.random.bernoulli(key, p, shape)` with a Python float `p`.
///
/// # Errors
///
/// JAX's `ValueError` for a batched key; the errors of [`Random::bernoulli`].
pub fn bernoulli(key: &Array, p: f64, shape: &[usize]) -> Result<Array, Error> {
    if staged(key) {
        let dtype = if x64() {
            DType::Float64
        } else {
            DType::Float32
        };
        let (lo, hi) = (weak_bound(0.0)?, weak_bound(1.0)?);
        let p = crate::array::scalar(p, dtype)?;
        return as_jitted(key, |k| {
            let u = traced_uniform("bernoulli", k, shape, dtype, &lo, &hi)?;
            bind(&lax::LT, &[&u, &p], &Params::new())
        });
    }
    let k = single_key("bernoulli", key)?;
    sample_array(rng().bernoulli(&k, shape, p)?)
}

/// `jax.random.randint(key, shape, minval, maxval, dtype)` with Python int bounds.
///
/// # Errors
///
/// JAX's `ValueError` for a batched key; the errors of [`Random::randint`].
pub fn randint(
    key: &Array,
    shape: &[usize],
    minval: i128,
    maxval: i128,
    dtype: DType,
) -> Result<Array, Error> {
    if staged(key) {
        // JAX's checks on the Python ints first (its OverflowError, TypeError).
        rng().randint_bounds(rng().canonical(dtype), minval, maxval)?;
        super::output_size(shape)?;
        let (keys, _) = check_key("randint", key, false)?;
        return jax_randint(&keys, shape, minval, maxval, rng().canonical(dtype));
    }
    let k = single_key("randint", key)?;
    sample_array(rng().randint(&k, shape, minval, maxval, dtype)?)
}

/// A constant of `like`'s dtype and weak type (`lax._const`).
fn const_like(like: &Array, v: i128) -> Result<Array, Error> {
    crate::array::scalar_array(dtype_lattice::Value::Int(v), like.dtype(), like.weak_type())
}

/// `x.astype(dtype)`: `convert_element_type` unless `x` is already a strong `dtype`.
fn astype(x: &Array, dtype: DType) -> Result<Array, Error> {
    if x.dtype() == dtype && !x.weak_type() {
        Ok(x.clone())
    } else {
        lax::ops::convert(x, dtype, false)
    }
}

/// `_convert_and_clip_integer(val, dtype)`: `val` clipped to what both dtypes hold, converted.
fn convert_and_clip(val: &Array, dtype: DType) -> Result<Array, Error> {
    let (a, b) = (
        dtype.int_range().ok_or_else(no_lt)?,
        val.dtype().int_range().ok_or_else(no_lt)?,
    );
    let lo = const_like(val, a.0.max(b.0))?;
    let hi = const_like(val, a.1.min(b.1))?;
    astype(&super::samplers::clip(val, &lo, &hi)?, dtype)
}

/// `jax.random.randint` as JAX 0.10.2 stages it: narrow dtypes sampled in int32 (the bounds
/// converted and clipped outside), `_randint` jitted on the key and the bounds (Python ints:
/// weak arrays of the default int).
fn jax_randint(
    keys: &Array,
    shape: &[usize],
    minval: i128,
    maxval: i128,
    dtype: DType,
) -> Result<Array, Error> {
    let py = |v: i128| Array::python_scalar(dtype_lattice::Value::Int(v));
    let (mut lo, mut hi) = (py(minval)?, py(maxval)?);
    let mut sampling = dtype;
    if dtype.bits() < 32 {
        sampling = DType::Int32;
        let (dmin, dmax) = dtype.int_range().ok_or_else(no_lt)?;
        let int32 = |x: &Array| astype(x, DType::Int32);
        let konst =
            |v: i128| crate::array::scalar_array(dtype_lattice::Value::Int(v), DType::Int32, true);
        lo = super::samplers::clip(&int32(&lo)?, &konst(dmin)?, &konst(dmax)?)?;
        hi = super::samplers::clip(&int32(&hi)?, &konst(dmin)?, &konst(dmax + 1)?)?;
    }
    let shape = shape.to_vec();
    let out = super::samplers::jitted(
        "_randint",
        &(keys.clone(), lo, hi),
        move |(key, minval, maxval): (Array, Array, Array)| {
            randint_body(&key, &minval, &maxval, &shape, sampling)
        },
    )?;
    astype(&out, dtype)
}

/// `_randint(key, minval, maxval, shape, dtype)`'s body, equation for equation.
fn randint_body(
    key: &Array,
    minval: &Array,
    maxval: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let (_, tmax) = dtype.int_range().ok_or_else(no_lt)?;
    let top = crate::array::scalar_array(dtype_lattice::Value::Int(tmax), dtype, false)?;
    let out_of_range = lax2(&lax::GT, maxval, &convert_and_clip(&top, maxval.dtype())?)?;
    let (lo, hi) = (
        convert_and_clip(minval, dtype)?,
        convert_and_clip(maxval, dtype)?,
    );
    let (lo, hi) = (to_rank(&lo, shape.len())?, to_rank(&hi, shape.len())?);
    let nbits = dtype.bits();
    let (k1, k2) = super::samplers::split2(key)?;
    let higher = random_bits(&k1, nbits, shape)?;
    let lower = random_bits(&k2, nbits, shape)?;
    let unsigned = match nbits {
        8 => DType::UInt8,
        16 => DType::UInt16,
        32 => DType::UInt32,
        _ => DType::UInt64,
    };
    let konst = |v: i128| crate::array::scalar_array(dtype_lattice::Value::Int(v), unsigned, false);
    let span = lax::ops::convert(&lax::ops::sub(&hi, &lo)?, unsigned, false)?;
    let empty = lax2(&lax::LE, &hi, &lo)?;
    let ones = lax::ops::broadcast_to(&konst(1)?, span.shape())?;
    let span = lax::ops::select_n(&empty, &[&span, &ones])?;
    let wider = lax2(&lax::AND, &out_of_range, &lax2(&lax::GT, &hi, &lo)?)?;
    let span = lax::ops::select_n(&wider, &[&span, &lax::ops::add(&span, &konst(1)?)?])?;
    let multiplier = lax2(&lax::REM, &konst(1 << (nbits / 2))?, &span)?;
    let multiplier = lax2(&lax::REM, &lax::ops::mul(&multiplier, &multiplier)?, &span)?;
    let offset = lax::ops::add(
        &lax::ops::mul(&lax2(&lax::REM, &higher, &span)?, &multiplier)?,
        &lax2(&lax::REM, &lower, &span)?,
    )?;
    let offset = lax2(&lax::REM, &offset, &span)?;
    lax::ops::add(&lo, &lax::ops::convert(&offset, dtype, false)?)
}

/// `jax.random.key_data(keys)`: the `uint32` key data of keys of any shape (shape + `(2,)`
/// for `key<fry>`); raw key data is checked and given back.
///
/// # Errors
///
/// The `TypeError`s of [`wrap_key_data`] for an array that is neither keys nor valid raw key
/// data.
pub fn key_data(keys: &Array) -> Result<Array, Error> {
    let (keys, _) = check_key("key_data", keys, true)?;
    bind(&RANDOM_UNWRAP, &[&keys], &Params::new())
}

/// `jax.random.wrap_key_data(data, impl=...)`: `uint32` key data whose last dimension is the
/// implementation's number of key words, as keys of the key dtype `impl_`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{random, Array};
/// let k = random::wrap_key_data(&Array::from_vec(vec![0u32, 42]), DType::KeyThreefry2x32)?;
/// assert_eq!(k.aval().to_string(), "key<fry>[]");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `TypeError` for data of another dtype, of rank 0 or whose last dimension is not the
/// key size; `InvalidArgument` when `impl_` is not a key dtype.
pub fn wrap_key_data(data: &Array, impl_: DType) -> Result<Array, Error> {
    let k = impl_
        .key_impl()
        .ok_or_else(|| crate::array::invalid("impl", format!("{impl_} is not a PRNG key dtype")))?;
    let params = Params::new().with("impl", Param::KeyImpl(k));
    bind(&RANDOM_WRAP, &[data], &params)
}
