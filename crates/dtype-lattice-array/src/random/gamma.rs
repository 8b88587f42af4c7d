//! `jax.random`'s gamma family (JAX 0.10.2's `random/core.py`): [`gamma`], [`loggamma`],
//! [`beta`], [`dirichlet`], [`chisquare`], [`f`], [`t`], [`generalized_normal`] and [`ball`].
//!
//! Every sampler is built from the functions of this module's parent that take a key
//! ([`super::split`], [`super::uniform`], [`super::normal`], [`super::bernoulli`]) and from
//! `lax` operations and control flow, never from a PRNG kernel, so that it runs on keys of any
//! implementation; and, as JAX's samplers are `@jit`-decorated, each runs through [`jit`]
//! (named as JAX's: `_gamma`, `_beta`…), so that the values are what XLA compiles (jit's plan
//! contracts a product into the addition that is its only use, as XLA's CPU backend does).
//!
//! `gamma` is JAX's `random_gamma` primitive ([`RANDOM_GAMMA`]): Marsaglia and Tsang's
//! rejection sampler (`_gamma_one`) in a `while_loop`, on one key split per element, `vmap`ped
//! over the elements for threefry keys and `lax.map`ped for the others (JAX's lowering); its
//! JVP is the implicit reparameterisation gradient, `tangent · ∂sample/∂a` with `∂sample/∂a`
//! from [`crate::lax::RANDOM_GAMMA_GRAD`] (`lax.map`ped over the elements, as JAX does on CPU);
//! its batching rule moves both batch dimensions to the front and binds it again. `beta`,
//! `dirichlet`, `chisquare`, `f`, `t`, `generalized_normal` and `ball` are JAX's compositions on
//! it, so they are differentiable with respect to their shape parameters too.
//!
//! A Python float parameter is a weakly typed 0-d array
//! (`Array::scalar(0.5f32).with_weak_type(true)`, float64 with x64), as JAX receives it.

use dtype_lattice::error::Exception;
use dtype_lattice::key::Algorithm;
use dtype_lattice::{DType, Error, Kind};

use crate::array::{Array, ShapedArray, py_shape};
use crate::core::{Avals, Outputs, Param, Params, Primitive};
use crate::interpreters::batching::vmap;
use crate::interpreters::control;
use crate::interpreters::custom::CustomJvp;
use crate::jit::jit;
use crate::lax::{self, ops};
use crate::numpy::{self as jnp, Index};

pub(super) use super::samplers::{
    broadcast_shape, check_shape, konst, safe_to_cast, single_key as check_key, x64,
};

// ---- shared helpers

/// The canonical float `dtype` of sampler `name`, with JAX's message.
pub(crate) fn float_dtype(name: &str, dtype: DType) -> Result<DType, Error> {
    super::samplers::float_dtype(name, "a float dtype", dtype)
}

/// `x` converted to `dtype` (`lax.convert_element_type`: strong).
pub(crate) fn convert(x: &Array, dtype: DType) -> Result<Array, Error> {
    ops::convert(x, dtype, false)
}

/// `lax.select(pred, on_true, on_false)`.
pub(crate) fn select(pred: &Array, on_true: &Array, on_false: &Array) -> Result<Array, Error> {
    let shape = pred.shape().to_vec();
    let t = ops::broadcast_to(on_true, &shape)?;
    let f = ops::broadcast_to(on_false, &shape)?;
    ops::select_n(pred, &[&f, &t])
}

/// `x / y` with NumPy's broadcasting (`jnp.divide` of operands of one dtype).
fn jdiv(x: &Array, y: &Array) -> Result<Array, Error> {
    let shape = jnp::broadcast_shapes(&[x.shape(), y.shape()])?;
    ops::div(
        &ops::broadcast_to(x, &shape)?,
        &ops::broadcast_to(y, &shape)?,
    )
}

/// The binary lax primitive `p`.
pub(crate) fn bin(p: &'static Primitive, x: &Array, y: &Array) -> Result<Array, Error> {
    lax::bind1(p, &[x, y], &Params::new())
}

/// `_split(key, num)`: `num` keys, as the `num` arrays JAX unpacks them into.
pub(crate) fn split_n(key: &Array, num: usize) -> Result<Vec<Array>, Error> {
    let keys = super::split(key, num)?;
    (0..num)
        .map(|i| jnp::index(&keys, &[Index::At(i as isize)]))
        .collect()
}

/// The product of a shape.
fn size(shape: &[usize]) -> usize {
    shape.iter().product()
}

// ---- the random_gamma primitive

/// The `random_gamma` primitive (`random_gamma[log_space=False]`): one gamma sample per
/// element of `a` (key array `key` of shape `a.shape[:key.ndim]`, each key split into one key
/// per element of the rest).
pub static RANDOM_GAMMA: Primitive =
    Primitive::new("random_gamma", Some(2), gamma_shape_rule, gamma_impl_rule)
        .jvp(gamma_jvp)
        .batch(gamma_batch)
        .takes_float0();

fn log_space(params: &Params) -> Result<bool, Error> {
    match params.get("log_space") {
        Some(Param::Bool(b)) => Ok(*b),
        None => Ok(false),
        Some(_) => Err(Error::refused(
            Exception::TypeError,
            "random_gamma: log_space must be a bool",
        )),
    }
}

fn gamma_shape_rule(
    _prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    log_space(params)?;
    let (key, a) = (inputs[0], inputs[1]);
    if key.dtype().key_impl().is_none() {
        return Err(Error::refused(
            Exception::TypeError,
            format!("random_gamma takes a key array, got {}", key.dtype()),
        ));
    }
    if a.dtype().kind() != Kind::Float || a.shape().get(..key.ndim()) != Some(key.shape()) {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "random_gamma: the key array's shape {} must lead the float parameter's {}",
                py_shape(key.shape()),
                py_shape(a.shape())
            ),
        ));
    }
    Ok(smallvec::smallvec![a.clone()])
}

fn gamma_impl_rule(
    _prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    _out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let log_space = log_space(params)?;
    let (key, a) = (inputs[0].clone(), inputs[1].clone());
    let out: Array = jit(move |(key, a): (Array, Array)| gamma_impl(&key, &a, log_space))
        .named("_gamma_impl")
        .call(&(key, a))?;
    Ok(smallvec::smallvec![out])
}

/// `_gamma_impl(key, a, log_space, use_vmap=True)`: the keys flattened, each split into one
/// key per element of the rest of `a`, `_gamma_one` on every (key, alpha), `vmap`ped for
/// threefry keys and `lax.map`ped for the others.
fn gamma_impl(key: &Array, a: &Array, log_space: bool) -> Result<Array, Error> {
    let a_shape = a.shape().to_vec();
    let count = size(&a_shape[key.ndim()..]);
    let n = size(key.shape());
    let keys = lax::ad::reshape(key, &[n])?;
    let keys: Array = vmap(move |k: Array| super::split(&k, count)).call(&keys)?;
    let keys = lax::ad::reshape(&keys, &[n * count])?;
    let alphas = lax::ad::reshape(a, &[n * count])?;
    let threefry = key
        .dtype()
        .key_impl()
        .is_some_and(|k| k.algorithm == Algorithm::Threefry2x32);
    let one = move |(k, al): (Array, Array)| gamma_one(&k, &al, log_space);
    let samples: Array = if n * count == 0 {
        alphas.clone()
    } else if threefry {
        vmap(one).call(&(keys, alphas))?
    } else {
        control::map(one, &(keys, alphas))?
    };
    lax::ad::reshape(&samples, &a_shape)
}

/// `_gamma_one(key, alpha, log_space)`: Marsaglia and Tsang's method for `alpha ≥ 1` (alpha
/// boosted by one below, the sample scaled by `u^(1/alpha)`, or in log space shifted by
/// `−exponential/alpha`).
fn gamma_one(key: &Array, alpha: &Array, log_space: bool) -> Result<Array, Error> {
    let dtype = alpha.dtype();
    let c = |v: f64| konst(v, dtype);
    let (zero, one, minus_one, two) = (c(0.0)?, c(1.0)?, c(-1.0)?, c(2.0)?);
    let (half, third, squeeze) = (c(0.5)?, c(1.0 / 3.0)?, c(0.0331)?);
    let boost_mask = bin(&lax::GE, alpha, &one)?;
    let alpha_orig = alpha.clone();
    let alpha = select(&boost_mask, alpha, &ops::add(alpha, &one)?)?;
    let d = ops::sub(&alpha, &third)?;
    let cc = ops::div(&third, &ops::unary(&lax::SQRT, &d)?)?;

    let cond = |(_, x, v, u): (Array, Array, Array, Array)| {
        let first = bin(
            &lax::GE,
            &u,
            &ops::sub(&one, &ops::mul(&squeeze, &ops::mul(&x, &x)?)?)?,
        )?;
        let log_v = ops::unary(&lax::LOG, &v)?;
        let rhs = ops::add(
            &ops::mul(&x, &half)?,
            &ops::mul(&d, &ops::add(&ops::sub(&one, &v)?, &log_v)?)?,
        )?;
        let second = bin(&lax::GE, &ops::unary(&lax::LOG, &u)?, &rhs)?;
        bin(&lax::AND, &first, &second)
    };
    let body = |(key, _, _, _): (Array, Array, Array, Array)| {
        let ks = split_n(&key, 3)?;
        let (key, x_key, u_key) = (ks[0].clone(), ks[1].clone(), ks[2].clone());
        let (_, x, v) = control::while_loop(
            |(_, _, v): (Array, Array, Array)| bin(&lax::LE, &v, &zero),
            |(k, _, _): (Array, Array, Array)| {
                let ks = split_n(&k, 2)?;
                let x = super::normal(&ks[1], &[], dtype)?;
                let v = ops::add(&one, &ops::mul(&x, &cc)?)?;
                Ok((ks[0].clone(), x, v))
            },
            &(x_key, zero.clone(), minus_one.clone()),
        )?;
        let xx = ops::mul(&x, &x)?;
        let vvv = ops::mul(&ops::mul(&v, &v)?, &v)?;
        let u = super::uniform(&u_key, &[], dtype, 0.0, 1.0)?;
        Ok((key, xx, vvv, u))
    };
    let ks = split_n(key, 2)?;
    let (key, subkey) = (ks[0].clone(), ks[1].clone());
    let (_, _, v, _) = control::while_loop(cond, body, &(key, zero.clone(), one.clone(), two))?;
    if log_space {
        let log_samples = ops::neg(&super::exponential(&subkey, &[], dtype)?)?;
        let is_zero = bin(&lax::EQ, &log_samples, &zero)?;
        let mask = bin(&lax::OR, &boost_mask, &is_zero)?;
        let log_boost = select(
            &mask,
            &zero,
            &ops::mul(&log_samples, &ops::div(&one, &alpha_orig)?)?,
        )?;
        ops::add(
            &ops::add(&ops::unary(&lax::LOG, &d)?, &ops::unary(&lax::LOG, &v)?)?,
            &log_boost,
        )
    } else {
        let samples = ops::sub(&one, &super::uniform(&subkey, &[], dtype, 0.0, 1.0)?)?;
        let boost = select(
            &boost_mask,
            &one,
            &bin(&lax::POW, &samples, &ops::div(&one, &alpha_orig)?)?,
        )?;
        ops::mul(&ops::mul(&d, &v)?, &boost)
    }
}

/// `ad.defjvp2(random_gamma_p, None, tangent · _gamma_grad(ans, a))`.
fn gamma_jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let refs: Vec<&Array> = primals.iter().collect();
    let out = crate::core::bind(prim, &refs, params)?;
    let t = match &tangents[1] {
        Some(t) => Some(ops::mul(
            t,
            &gamma_grad(&out[0], &primals[1], log_space(params)?)?,
        )?),
        None => None,
    };
    Ok((out, vec![t]))
}

/// `_gamma_grad(sample, a, log_space)`: `random_gamma_grad(alpha, sample)` (divided by the
/// sample, `exp` of the log-space one with a zero replaced by the smallest normal, in log
/// space) `lax.map`ped over the flattened elements, as JAX does on CPU.
fn gamma_grad(sample: &Array, a: &Array, log_space: bool) -> Result<Array, Error> {
    let n = size(a.shape());
    let samples = lax::ad::reshape(sample, &[n])?;
    let alphas = lax::ad::reshape(a, &[n])?;
    let samples = if log_space {
        let s = ops::unary(&lax::EXP, &samples)?;
        let tiny = match s.dtype() {
            DType::Float16 => f64::from(half::f16::MIN_POSITIVE),
            DType::BFloat16 => f64::from(half::bf16::MIN_POSITIVE),
            DType::Float64 => f64::MIN_POSITIVE,
            _ => f64::from(f32::MIN_POSITIVE),
        };
        let tiny = ops::broadcast_to(&konst(tiny, s.dtype())?, s.shape())?;
        let z = bin(&lax::EQ, &s, &konst(0.0, s.dtype())?)?;
        select(&z, &tiny, &s)?
    } else {
        samples
    };
    let grads: Array = if n == 0 {
        samples
    } else {
        control::map(
            move |(alpha, x): (Array, Array)| {
                let g = random_gamma_grad(&alpha, &x)?;
                if log_space { ops::div(&g, &x) } else { Ok(g) }
            },
            &(alphas, samples),
        )?
    };
    lax::ad::reshape(&grads, a.shape())
}

/// `lax.random_gamma_grad(a, x)` (`_up_and_broadcast`: float16 and bfloat16 computed in
/// float32).
fn random_gamma_grad(a: &Array, x: &Array) -> Result<Array, Error> {
    let dtype = a.dtype();
    let up = matches!(dtype, DType::Float16 | DType::BFloat16);
    let (a2, x2) = if up {
        (convert(a, DType::Float32)?, convert(x, DType::Float32)?)
    } else {
        (a.clone(), x.clone())
    };
    let g = bin(&lax::RANDOM_GAMMA_GRAD, &a2, &x2)?;
    if up { convert(&g, dtype) } else { Ok(g) }
}

/// JAX's `_gamma_batching_rule`: both batch dimensions at the front, bound again.
fn gamma_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<usize>>), Error> {
    let k = lax::batching::bdim_at_front(&args[0], dims[0], size)?;
    let a = lax::batching::bdim_at_front(&args[1], dims[1], size)?;
    let out = crate::core::bind(prim, &[&k, &a], params)?;
    Ok((out, vec![Some(0)]))
}

/// `_gamma(key, a, shape, dtype, log_space)`, jitted.
fn gamma_jitted(
    name: &str,
    key: &Array,
    a: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
    log_space: bool,
) -> Result<Array, Error> {
    let key = check_key(name, key)?;
    let dtype = float_dtype("gamma", dtype)?;
    let shape = shape.map(<[usize]>::to_vec);
    jit(move |(key, a): (Array, Array)| gamma_traced(&key, &a, shape.as_deref(), dtype, log_space))
        .named("_gamma")
        .call(&(key, a.clone()))
}

/// `_gamma`'s body: the shape checked, `a` converted and broadcast, `random_gamma` bound.
fn gamma_traced(
    key: &Array,
    a: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
    log_space: bool,
) -> Result<Array, Error> {
    let shape = match shape {
        None => a.shape().to_vec(),
        Some(s) => {
            check_shape("gamma", s, &[a.shape()])?;
            s.to_vec()
        }
    };
    let a = convert(a, dtype)?;
    let a = ops::broadcast_to(&a, &shape)?;
    let params = Params::new().with("log_space", Param::Bool(log_space));
    lax::bind1(&RANDOM_GAMMA, &[key, &a], &params)
}

/// `jax.random.gamma(key, a, shape, dtype)`: samples of the standard gamma distribution
/// `x^(a−1) e^(−x)/Γ(a)`, of shape `shape` (`a`'s when `None`) and float `dtype`, by JAX's
/// rejection sampler, bit for bit where JAX's arithmetic is exact (see the module doc).
/// Differentiable with respect to `a` (implicit reparameterisation).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let key = random::key(0)?;
/// let a = Array::from_vec(vec![0.5f32, 1.0, 4.0]);
/// let g = random::gamma(&key, &a, None, DType::Float32)?;
/// assert_eq!(g.shape(), &[3]);
/// assert!(g.to_vec::<f32>()?.iter().all(|&x| x > 0.0));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key, a dtype that is not a float dtype, or a `shape` that
/// `a`'s shape does not broadcast to; the `TypeError`s of [`super::wrap_key_data`] for raw
/// key data that is not valid.
pub fn gamma(
    key: &Array,
    a: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    gamma_jitted("gamma", key, a, shape, dtype, false)
}

/// `jax.random.loggamma(key, a, shape, dtype)`: the logarithms of gamma samples, computed in
/// log space (accurate for small `a`): `exp(loggamma(...))` is `gamma(...)` up to rounding.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let a = Array::scalar(1e-3f32).with_weak_type(true);
/// let lg = random::loggamma(&random::key(1)?, &a, Some(&[4]), DType::Float32)?;
/// assert_eq!(lg.shape(), &[4]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`gamma`] (JAX's message names `gamma` for the dtype).
pub fn loggamma(
    key: &Array,
    a: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    gamma_jitted("loggamma", key, a, shape, dtype, true)
}

/// `jax.random.beta(key, a, b, shape, dtype)`: Beta(a, b) samples as JAX computes them, from
/// two log-gamma draws (`exp(la − m)/(exp(la − m) + exp(lb − m))`, `m` their maximum).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let (a, b) = (Array::scalar(0.5f32), Array::scalar(2.0f32));
/// let x = random::beta(&random::key(0)?, &a, &b, Some(&[3]), DType::Float32)?;
/// assert!(x.to_vec::<f32>()?.iter().all(|&v| (0.0..=1.0).contains(&v)));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key, a non-float dtype or shapes that do not broadcast
/// to `shape`; its `TypePromotionError` for a parameter that does not cast
/// safely to `dtype`.
pub fn beta(
    key: &Array,
    a: &Array,
    b: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let key = check_key("beta", key)?;
    let dtype = float_dtype("beta", dtype)?;
    safe_to_cast("beta", dtype, &[a, b])?;
    let shape = broadcast_shape("beta", shape, &[a, b])?;
    jit(move |(key, a, b): (Array, Array, Array)| {
        let a = ops::broadcast_to(&convert(&a, dtype)?, &shape)?;
        let b = ops::broadcast_to(&convert(&b, dtype)?, &shape)?;
        let ks = split_n(&key, 2)?;
        let la = loggamma_traced(&ks[0], &a, &shape, dtype)?;
        let lb = loggamma_traced(&ks[1], &b, &shape, dtype)?;
        let m = bin(&lax::MAX, &la, &lb)?;
        let ea = ops::unary(&lax::EXP, &ops::sub(&la, &m)?)?;
        let eb = ops::unary(&lax::EXP, &ops::sub(&lb, &m)?)?;
        ops::div(&ea, &ops::add(&ea, &eb)?)
    })
    .named("_beta")
    .call(&(key, a.clone(), b.clone()))
}

/// `loggamma(key, a, shape, dtype)` called inside a jitted sampler: JAX's nested `_gamma`
/// call, traced into the caller's jaxpr (the nested `jit` is inlined by the plan).
fn loggamma_traced(key: &Array, a: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let shape = shape.to_vec();
    jit(move |(key, a): (Array, Array)| gamma_traced(&key, &a, Some(&shape), dtype, true))
        .named("_gamma")
        .call(&(key.clone(), a.clone()))
}

/// `gamma(key, a, shape, dtype)` called inside a jitted sampler.
fn gamma_in(key: &Array, a: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let shape = shape.to_vec();
    jit(move |(key, a): (Array, Array)| gamma_traced(&key, &a, Some(&shape), dtype, false))
        .named("_gamma")
        .call(&(key.clone(), a.clone()))
}

/// `jax.nn.softmax(x, axis=-1)` as JAX 0.10.2 computes it (`_softmax`: `exp(x − max)` over
/// its sum, with its custom JVP `y·(ẋ − Σ y·ẋ)`), for [`dirichlet`] (`nn` sits above this
/// module).
fn softmax_last(x: &Array) -> Result<Array, Error> {
    let f = CustomJvp::new(
        |x: Array| softmax_value(&x),
        |x: Array, t: Array| {
            let y = softmax_value(&x)?;
            let s = sum_last_keep(&ops::mul(&y, &t)?)?;
            let ty = ops::mul(&y, &ops::sub(&t, &s)?)?;
            Ok((y, ty))
        },
    )
    .name("_softmax")
    .jvp_name("_softmax_jvp");
    f.call(x)
}

fn softmax_value(x: &Array) -> Result<Array, Error> {
    let last = x.ndim() - 1;
    let p = Params::new()
        .with("axes", lax::ints([last]))
        .with("out_sharding", Param::None);
    let m = lax::bind1(&lax::REDUCE_MAX, &[x], &p)?;
    let m = bin(&lax::MAX, &m, &konst(f64::NEG_INFINITY, x.dtype())?)?;
    let m = keep_last(&m, x.shape())?;
    let u = ops::unary(&lax::EXP, &ops::sub(x, &m)?)?;
    ops::div(&u, &sum_last_keep(&u)?)
}

/// A reduction over the last axis given back its axis (size 1; `keepdims=True`).
fn keep_last(r: &Array, shape: &[usize]) -> Result<Array, Error> {
    let mut s = shape.to_vec();
    if let Some(l) = s.last_mut() {
        *l = 1;
    }
    lax::ad::reshape(r, &s)
}

fn sum_last_keep(x: &Array) -> Result<Array, Error> {
    let s = lax::ad::reduce_sum(x, &[x.ndim() - 1])?;
    keep_last(&s, x.shape())
}

/// `jax.random.dirichlet(key, alpha, shape, dtype)`: samples of shape `shape + (k,)` (`alpha`'s
/// shape when `shape` is `None`, `k = alpha.shape[-1]`), the softmax of log-gamma draws.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let alpha = Array::from_vec(vec![0.5f32, 1.0, 4.0]);
/// let x = random::dirichlet(&random::key(0)?, &alpha, Some(&[2]), DType::Float32)?;
/// assert_eq!(x.shape(), &[2, 3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key, a non-float dtype, a 0-d `alpha` ("dirichlet
/// requires alpha.ndim >= 1") or a `shape` that `alpha.shape[:-1]` does not broadcast to.
pub fn dirichlet(
    key: &Array,
    alpha: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let key = check_key("dirichlet", key)?;
    let dtype = float_dtype("dirichlet", dtype)?;
    let shape = shape.map(<[usize]>::to_vec);
    jit(move |(key, alpha): (Array, Array)| {
        if alpha.ndim() < 1 {
            return Err(Error::refused(
                Exception::ValueError,
                format!(
                    "dirichlet requires alpha.ndim >= 1, got alpha.ndim == {}",
                    alpha.ndim()
                ),
            ));
        }
        let batch = &alpha.shape()[..alpha.ndim() - 1];
        let shape = match &shape {
            None => batch.to_vec(),
            Some(s) => {
                check_shape("dirichlet", s, &[batch])?;
                s.clone()
            }
        };
        let alpha = convert(&alpha, dtype)?;
        let mut full = shape.clone();
        full.push(alpha.shape()[alpha.ndim() - 1]);
        let lg = loggamma_traced(&key, &alpha, &full, dtype)?;
        softmax_last(&lg)
    })
    .named("_dirichlet")
    .call(&(key, alpha.clone()))
}

/// `jax.random.chisquare(key, df, shape, dtype)`: `2·exp(loggamma(df/2))`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let df = Array::scalar(3.0f32).with_weak_type(true);
/// let x = random::chisquare(&random::key(0)?, &df, Some(&[3]), DType::Float32)?;
/// assert_eq!(x.shape(), &[3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`beta`].
pub fn chisquare(
    key: &Array,
    df: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let key = check_key("chisquare", key)?;
    let dtype = float_dtype("chisquare", dtype)?;
    let shape = broadcast_shape("chisquare", shape, &[df])?;
    safe_to_cast("chisquare", dtype, &[df])?;
    jit(move |(key, df): (Array, Array)| chisquare_traced(&key, &df, &shape, dtype))
        .named("_chisquare")
        .call(&(key, df.clone()))
}

fn chisquare_traced(
    key: &Array,
    df: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let df = convert(df, dtype)?;
    let two = konst(2.0, dtype)?;
    let half_df = ops::div(&df, &two)?;
    let lg = loggamma_traced(key, &half_df, shape, dtype)?;
    ops::mul(&ops::unary(&lax::EXP, &lg)?, &two)
}

/// `jax.random.f(key, dfnum, dfden, shape, dtype)`: the ratio of two chi-square draws over
/// their degrees of freedom.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let (n, d) = (Array::scalar(2.0f32), Array::scalar(5.0f32));
/// let x = random::f(&random::key(0)?, &n, &d, Some(&[3]), DType::Float32)?;
/// assert!(x.to_vec::<f32>()?.iter().all(|&v| v > 0.0));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`beta`].
pub fn f(
    key: &Array,
    dfnum: &Array,
    dfden: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let key = check_key("f", key)?;
    let dtype = float_dtype("f", dtype)?;
    let shape = broadcast_shape("f", shape, &[dfnum, dfden])?;
    safe_to_cast("f", dtype, &[dfnum, dfden])?;
    jit(move |(key, dfnum, dfden): (Array, Array, Array)| {
        let dfden = convert(&dfden, dtype)?;
        let dfnum = convert(&dfnum, dtype)?;
        let ks = split_n(&key, 2)?;
        let (key_dfd, key_dfn) = (&ks[0], &ks[1]);
        let chi_n = jit({
            let shape = shape.clone();
            move |(k, df): (Array, Array)| chisquare_traced(&k, &df, &shape, dtype)
        })
        .named("_chisquare")
        .call(&(key_dfn.clone(), dfnum.clone()))?;
        let chi_d = jit({
            let shape = shape.clone();
            move |(k, df): (Array, Array)| chisquare_traced(&k, &df, &shape, dtype)
        })
        .named("_chisquare")
        .call(&(key_dfd.clone(), dfden.clone()))?;
        let num = jdiv(&chi_n, &dfnum)?;
        let den = jdiv(&chi_d, &dfden)?;
        ops::div(&num, &den)
    })
    .named("_f")
    .call(&(key, dfnum.clone(), dfden.clone()))
}

/// `jax.random.t(key, df, shape, dtype)`: Student's t, `n·sqrt((df/2)/g)` for a normal draw
/// `n` and a gamma draw `g` of shape `df/2`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let df = Array::scalar(3.0f32).with_weak_type(true);
/// let x = random::t(&random::key(0)?, &df, Some(&[2, 2]), DType::Float32)?;
/// assert_eq!(x.shape(), &[2, 2]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`beta`].
pub fn t(key: &Array, df: &Array, shape: Option<&[usize]>, dtype: DType) -> Result<Array, Error> {
    let key = check_key("t", key)?;
    let dtype = float_dtype("t", dtype)?;
    let shape = broadcast_shape("t", shape, &[df])?;
    safe_to_cast("t", dtype, &[df])?;
    jit(move |(key, df): (Array, Array)| {
        let df = convert(&df, dtype)?;
        let ks = split_n(&key, 2)?;
        let n = super::normal(&ks[0], &shape, dtype)?;
        let two = konst(2.0, dtype)?;
        let half_df = ops::div(&df, &two)?;
        let g = gamma_in(&ks[1], &half_df, &shape, dtype)?;
        ops::mul(&n, &ops::unary(&lax::SQRT, &jdiv(&half_df, &g)?)?)
    })
    .named("_t")
    .call(&(key, df.clone()))
}

/// The weak scalar `1/p` of a Python float `p`, as `1 / p` traces.
fn reciprocal(p: &Array) -> Result<Array, Error> {
    let one = crate::array::scalar(1.0, p.dtype())?.with_weak_type(p.weak_type());
    ops::div(&one, p)
}

/// `x ** y` for a float `x` and a scalar `y` (`jnp.power`: `y` promoted to `x`'s dtype).
fn power(x: &Array, y: &Array) -> Result<Array, Error> {
    let y = ops::convert(y, x.dtype(), false)?;
    bin(&lax::POW, x, &y)
}

fn generalized_normal_traced(
    key: &Array,
    p: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let ks = split_n(key, 2)?;
    let inv = reciprocal(p)?;
    let g = gamma_in(&ks[0], &inv, shape, dtype)?;
    let r = jit({
        let shape = shape.to_vec();
        move |k: Array| super::rademacher(&k, &shape, dtype)
    })
    .named("_rademacher")
    .call(&ks[1])?;
    ops::mul(&r, &power(&g, &inv)?)
}

/// `jax.random.generalized_normal(key, p, shape, dtype)`: samples of the density
/// `∝ e^(−|x|^p)`, `r·g^(1/p)` for a Rademacher sign `r` and a gamma draw `g` of shape `1/p`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let p = Array::scalar(1.5f32).with_weak_type(true);
/// let x = random::generalized_normal(&random::key(0)?, &p, &[3], DType::Float32)?;
/// assert_eq!(x.shape(), &[3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key or a non-float dtype.
pub fn generalized_normal(
    key: &Array,
    p: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let key = check_key("generalized_normal", key)?;
    let dtype = float_dtype("gamma", dtype)?;
    let shape = shape.to_vec();
    jit(move |(key, p): (Array, Array)| generalized_normal_traced(&key, &p, &shape, dtype))
        .named("_generalized_normal")
        .call(&(key, p.clone()))
}

/// `jax.random.ball(key, d, p, shape, dtype)`: points uniform in the unit `p`-norm ball of
/// dimension `d`, shape `shape + (d,)`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let p = Array::scalar(2.0f32).with_weak_type(true);
/// let x = random::ball(&random::key(0)?, 3, &p, &[2], DType::Float32)?;
/// assert_eq!(x.shape(), &[2, 3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key or a non-float dtype.
pub fn ball(
    key: &Array,
    d: usize,
    p: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let key = check_key("ball", key)?;
    let dtype = float_dtype("gamma", dtype)?;
    let shape = shape.to_vec();
    jit(move |(key, p): (Array, Array)| {
        let ks = split_n(&key, 2)?;
        let mut full = shape.clone();
        full.push(d);
        let g = jit({
            let full = full.clone();
            move |(k, p): (Array, Array)| generalized_normal_traced(&k, &p, &full, dtype)
        })
        .named("_generalized_normal")
        .call(&(ks[0].clone(), p.clone()))?;
        let e = jit({
            let shape = shape.clone();
            move |k: Array| super::exponential(&k, &shape, dtype)
        })
        .named("_exponential")
        .call(&ks[1])?;
        let a = power(&ops::unary(&lax::ABS, &g)?, &p)?;
        let s = ops::add(&lax::ad::reduce_sum(&a, &[a.ndim() - 1])?, &e)?;
        let r = power(&s, &reciprocal(&p)?)?;
        let mut kept = r.shape().to_vec();
        kept.push(1);
        let r = lax::ad::reshape(&r, &kept)?;
        let r = ops::broadcast_to(&r, g.shape())?;
        ops::div(&g, &r)
    })
    .named("_ball")
    .call(&(key, p.clone()))
}
