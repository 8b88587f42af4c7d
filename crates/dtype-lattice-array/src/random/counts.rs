//! `jax.random`'s count samplers (JAX 0.10.2's `random/core.py`): [`poisson`] (Knuth's
//! algorithm below a rate of 10, Hörmann's transformed rejection above, each a `while_loop`
//! over the whole array, chosen per element), [`binomial`] (the inversion algorithm while
//! `n·min(p, 1 − p) ≤ 10`, BTRS above) and [`multinomial`] (a `scan` of binomial draws over
//! the outcomes).
//!
//! As the gamma family ([`super::gamma`]), they are built from the key functions and `lax`
//! operations only, jitted where JAX jits (`_poisson`, `_binomial`; `multinomial` runs its
//! steps eagerly, as JAX does). `poisson` refuses keys other than threefry2x32 as JAX does.

use dtype_lattice::error::Exception;
use dtype_lattice::key::Algorithm;
use dtype_lattice::{DType, Error, Kind};

use super::gamma::{bin, check_key, check_shape, convert, konst, select, split_n, x64};
use crate::array::Array;
use crate::core::{Param, Params};
use crate::interpreters::control;
use crate::jit::jit;
use crate::lax::{self, ops};
use crate::numpy::{self as jnp, Index};

/// `x` broadcast to `shape` (`lax.full_like(x, v, dtype, shape)`'s shape), of `dtype`.
fn full(v: f64, dtype: DType, shape: &[usize]) -> Result<Array, Error> {
    let c = if dtype == DType::Bool {
        Array::scalar(v != 0.0)
    } else {
        konst(v, dtype)?
    };
    ops::broadcast_to(&c, shape)
}

/// `x.any()`: `reduce_or` over every axis.
fn any(x: &Array) -> Result<Array, Error> {
    if x.ndim() == 0 {
        return Ok(x.clone());
    }
    let p = Params::new()
        .with("axes", lax::ints(0..x.ndim()))
        .with("out_sharding", Param::None);
    lax::bind1(&lax::REDUCE_OR, &[x], &p)
}

fn not(x: &Array) -> Result<Array, Error> {
    ops::unary(&lax::NOT, x)
}

/// The loop counter `i` (a Python int: weak int32, int64 with x64) compared with `max_iters`
/// of `dtype` (`i < max_iters`, promoted to `dtype`).
fn below(i: &Array, max_iters: &Array) -> Result<Array, Error> {
    let i = ops::convert(i, max_iters.dtype(), false)?;
    bin(&lax::LT, &i, max_iters)
}

fn counter() -> Array {
    if x64() {
        Array::scalar(0i64).with_weak_type(true)
    } else {
        Array::scalar(0i32).with_weak_type(true)
    }
}

fn plus_one(i: &Array) -> Result<Array, Error> {
    let one = crate::array::scalar(1.0, i.dtype())?.with_weak_type(i.weak_type());
    ops::add(i, &one)
}

/// `dtype.type(dtypes.iinfo(dtype).max)` (or `finfo`'s for a float dtype).
/// The end of a transformed-rejection iteration (poisson's and binomial's, as JAX writes
/// both): `accept = accept1 | (~reject & accept2)`, the draw kept where accepted, and the
/// lanes accepted so far.
fn step(
    accept1: &Array,
    reject: &Array,
    accept2: &Array,
    k: &Array,
    k_out: &Array,
    accepted: &Array,
) -> Result<(Array, Array), Error> {
    let accept = bin(&lax::OR, accept1, &bin(&lax::AND, &not(reject)?, accept2)?)?;
    let k_out = select(&accept, k, k_out)?;
    Ok((k_out, bin(&lax::OR, accepted, &accept)?))
}

fn max_iters(dtype: DType) -> Result<Array, Error> {
    if let Some((_, hi)) = dtype.int_range() {
        crate::array::scalar_array(dtype_lattice::Value::Int(hi), dtype, false)
    } else {
        konst(dtype.max_value(), dtype)
    }
}

// ---- poisson

/// `_poisson_knuth`: counts of uniform draws until their product falls below `e^(−lam)`,
/// for every element at once.
fn poisson_knuth(key: &Array, lam: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let limit = max_iters(dtype)?;
    let neg_lam = ops::neg(lam)?;
    let init = (
        counter(),
        full(0.0, dtype, shape)?,
        key.clone(),
        full(0.0, DType::Float32, shape)?,
    );
    let shape = shape.to_vec();
    let (_, k, _, _) = control::while_loop(
        |(i, _, _, log_prod): (Array, Array, Array, Array)| {
            let going = any(&bin(&lax::GT, &log_prod, &neg_lam)?)?;
            bin(&lax::AND, &going, &below(&i, &limit)?)
        },
        |(i, k, rng, log_prod): (Array, Array, Array, Array)| {
            let ks = split_n(&rng, 2)?;
            let more = bin(&lax::GT, &log_prod, &neg_lam)?;
            let k = select(&more, &ops::add(&k, &konst(1.0, dtype)?)?, &k)?;
            let u = super::uniform(&ks[1], &shape, DType::Float32, 0.0, 1.0)?;
            let log_prod = ops::add(&log_prod, &ops::unary(&lax::LOG, &u)?)?;
            Ok((plus_one(&i)?, k, ks[0].clone(), log_prod))
        },
        &init,
    )?;
    ops::sub(&k, &konst(1.0, dtype)?)
}

/// `_poisson_rejection`: Hörmann's transformed rejection (PTRS), every element until it is
/// accepted.
fn poisson_rejection(
    key: &Array,
    lam: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let limit = max_iters(dtype)?;
    let f = lam.dtype();
    let c = |v: f64| konst(v, f);
    let log_lam = ops::unary(&lax::LOG, lam)?;
    let b = ops::add(
        &c(0.931)?,
        &ops::mul(&c(2.53)?, &ops::unary(&lax::SQRT, lam)?)?,
    )?;
    let a = ops::add(&c(-0.059)?, &ops::mul(&c(0.02483)?, &b)?)?;
    let inv_alpha = ops::add(
        &c(1.1239)?,
        &ops::div(&c(1.1328)?, &ops::sub(&b, &c(3.4)?)?)?,
    )?;
    let v_r = ops::sub(
        &c(0.9277)?,
        &ops::div(&c(3.6224)?, &ops::sub(&b, &c(2.0)?)?)?,
    )?;
    let init = (
        counter(),
        full(-1.0, f, shape)?,
        full(0.0, DType::Bool, shape)?,
        key.clone(),
    );
    let shape = shape.to_vec();
    let (_, k, _, _) = control::while_loop(
        |(i, _, accepted, _): (Array, Array, Array, Array)| {
            bin(&lax::AND, &any(&not(&accepted)?)?, &below(&i, &limit)?)
        },
        |(i, k_out, accepted, key): (Array, Array, Array, Array)| {
            let ks = split_n(&key, 3)?;
            let u = ops::sub(&super::uniform(&ks[1], &shape, f, 0.0, 1.0)?, &c(0.5)?)?;
            let v = super::uniform(&ks[2], &shape, f, 0.0, 1.0)?;
            let us = ops::sub(&c(0.5)?, &ops::unary(&lax::ABS, &u)?)?;
            let k = ops::add(
                &ops::add(
                    &ops::mul(
                        &ops::add(&ops::div(&ops::mul(&c(2.0)?, &a)?, &us)?, &b)?,
                        &u,
                    )?,
                    lam,
                )?,
                &c(0.43)?,
            )?;
            let k = ops::unary(&lax::FLOOR, &k)?;
            let s = ops::unary(
                &lax::LOG,
                &ops::div(
                    &ops::mul(&v, &inv_alpha)?,
                    &ops::add(&ops::div(&a, &ops::mul(&us, &us)?)?, &b)?,
                )?,
            )?;
            let t = ops::sub(
                &ops::add(&ops::neg(lam)?, &ops::mul(&k, &log_lam)?)?,
                &ops::unary(&lax::LGAMMA, &ops::add(&k, &c(1.0)?)?)?,
            )?;
            let accept1 = bin(
                &lax::AND,
                &bin(&lax::GE, &us, &c(0.07)?)?,
                &bin(&lax::LE, &v, &v_r)?,
            )?;
            let reject = bin(
                &lax::OR,
                &bin(&lax::LT, &k, &c(0.0)?)?,
                &bin(
                    &lax::AND,
                    &bin(&lax::LT, &us, &c(0.013)?)?,
                    &bin(&lax::GT, &v, &us)?,
                )?,
            )?;
            let accept2 = bin(&lax::LE, &s, &t)?;
            let (k_out, accepted) = step(&accept1, &reject, &accept2, &k, &k_out, &accepted)?;
            Ok((plus_one(&i)?, k_out, accepted, ks[0].clone()))
        },
        &init,
    )?;
    convert(&k, dtype)
}

/// `_poisson(key, lam, shape, dtype)`.
fn poisson_traced(key: &Array, lam: &Array, shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let f = lam.dtype();
    let is_nan = bin(&lax::NE, lam, lam)?;
    let use_knuth = bin(&lax::OR, &is_nan, &bin(&lax::LT, lam, &konst(10.0, f)?)?)?;
    let lam_knuth = select(&use_knuth, lam, &full(0.0, f, shape)?)?;
    let lam_rejection = select(&use_knuth, &full(1e5, f, shape)?, lam)?;
    let knuth = jit({
        let shape = shape.to_vec();
        move |(k, l): (Array, Array)| poisson_knuth(&k, &l, &shape, dtype)
    })
    .named("_poisson_knuth")
    .call(&(key.clone(), lam_knuth))?;
    let rejection = jit({
        let shape = shape.to_vec();
        move |(k, l): (Array, Array)| poisson_rejection(&k, &l, &shape, dtype)
    })
    .named("_poisson_rejection")
    .call(&(key.clone(), lam_rejection))?;
    let result = select(&use_knuth, &knuth, &rejection)?;
    let zero = bin(&lax::EQ, lam, &konst(0.0, f)?)?;
    select(&zero, &full(0.0, dtype, shape)?, &result)
}

/// `jax.random.poisson(key, lam, shape, dtype)`: Poisson counts of rate `lam` (broadcast to
/// `shape`, `lam`'s shape when `None`), of integer `dtype`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let lam = Array::from_vec(vec![0.0f32, 3.0, 50.0]);
/// let k = random::poisson(&random::key(0)?, &lam, None, DType::Int32)?;
/// assert_eq!(k.to_vec::<i32>()?[0], 0);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `NotImplementedError` for a key of another implementation than threefry2x32; its
/// `ValueError` for a batched key, a dtype that is not an integer dtype, or a `lam` that does
/// not broadcast to `shape`.
pub fn poisson(
    key: &Array,
    lam: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let key = check_key("poisson", key)?;
    let dtype = dtype.canonicalize(x64());
    let k = key
        .dtype()
        .key_impl()
        .ok_or_else(|| crate::array::invalid("key", "not a key array"))?;
    if k.algorithm != Algorithm::Threefry2x32 {
        return Err(Error::refused(
            Exception::NotImplementedError,
            format!(
                "`poisson` is only implemented for the threefry2x32 RNG, not {}",
                k.tag
            ),
        ));
    }
    if !matches!(dtype.kind(), Kind::SignedInt | Kind::UnsignedInt) {
        return Err(Error::refused(
            Exception::ValueError,
            format!("Invalid integer data type '{}'.", dtype_char(dtype)),
        ));
    }
    let shape = shape.map_or_else(|| lam.shape().to_vec(), <[usize]>::to_vec);
    let lam = ops::broadcast_to(lam, &shape)?;
    let lam = convert(&lam, DType::Float32)?;
    jit(move |(key, lam): (Array, Array)| poisson_traced(&key, &lam, &shape, dtype))
        .named("_poisson")
        .call(&(key, lam))
}

/// NumPy's type character of a dtype (`iinfo`'s message).
fn dtype_char(d: DType) -> char {
    match d {
        DType::Float16 => 'e',
        DType::Float32 => 'f',
        DType::Float64 => 'd',
        DType::Bool => '?',
        _ => 'V',
    }
}

// ---- binomial

/// `_stirling_approx_tail(k)`: the tail of Stirling's series of `log k!`, tabulated for
/// `k ≤ 9` (the approximation computed on `k` clamped to `[0, 9]`, as JAX does).
fn stirling_tail(k: &Array) -> Result<Array, Error> {
    const TAIL: [f64; 10] = [
        0.081_061_466_795_327_2,
        0.041_340_695_955_409_2,
        0.027_677_925_684_998_3,
        0.020_790_672_103_765_09,
        0.016_644_691_189_821_1,
        0.013_876_128_823_070_7,
        0.011_896_709_945_891_7,
        0.010_411_265_261_972_0,
        0.009_255_462_182_712_73,
        0.008_330_563_433_362_87,
    ];
    let d = k.dtype();
    let table = convert(&Array::from_vec(TAIL.to_vec()), d)?;
    let use_tail = bin(&lax::LE, k, &konst(9.0, d)?)?;
    let clamped = lax::bind1(
        &lax::CLAMP,
        &[&konst(0.0, d)?, k, &konst(9.0, d)?],
        &Params::new(),
    )?;
    let one = konst(1.0, d)?;
    let kp1 = ops::add(&clamped, &one)?;
    let kp1sq = ops::mul(&kp1, &kp1)?;
    let inner = ops::div(
        &ops::sub(
            &konst(1.0 / 360.0, d)?,
            &ops::div(&konst(1.0 / 1260.0, d)?, &kp1sq)?,
        )?,
        &kp1sq,
    )?;
    let approx = ops::div(&ops::sub(&konst(1.0 / 12.0, d)?, &inner)?, &kp1)?;
    let idx = convert(&ops::unary(&lax::FLOOR, &clamped)?, DType::Int32)?;
    let tail = jnp::index(&table, &[Index::Array(idx)])?;
    select(&use_tail, &tail, &approx)
}

/// `_binomial_inversion`: geometric waiting times summed until they pass `count`.
fn binomial_inversion(
    key: &Array,
    count: &Array,
    prob: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let f = prob.dtype();
    let limit = max_iters(dtype)?;
    let log1m = ops::unary(&lax::LOG1P, &ops::neg(prob)?)?;
    let init = (
        counter(),
        full(0.0, f, shape)?,
        full(0.0, f, shape)?,
        key.clone(),
    );
    let shape = shape.to_vec();
    let (_, k, _, _) = control::while_loop(
        |(i, _, geom_sum, _): (Array, Array, Array, Array)| {
            let going = any(&bin(&lax::LE, &geom_sum, count)?)?;
            bin(&lax::AND, &going, &below(&i, &limit)?)
        },
        |(i, num_geom, geom_sum, key): (Array, Array, Array, Array)| {
            let ks = split_n(&key, 2)?;
            let (subkey, key) = (&ks[0], &ks[1]);
            let more = bin(&lax::LE, &geom_sum, count)?;
            let num_geom = select(&more, &ops::add(&num_geom, &konst(1.0, f)?)?, &num_geom)?;
            let u = super::uniform(subkey, &shape, f, 0.0, 1.0)?;
            let geom = ops::unary(&lax::CEIL, &ops::div(&ops::unary(&lax::LOG, &u)?, &log1m)?)?;
            let geom_sum = ops::add(&geom_sum, &geom)?;
            Ok((plus_one(&i)?, num_geom, geom_sum, key.clone()))
        },
        &init,
    )?;
    convert(&ops::sub(&k, &konst(1.0, f)?)?, dtype)
}

/// `_btrs`: Hörmann's transformed rejection with squeeze for the binomial.
fn btrs(
    key: &Array,
    count: &Array,
    prob: &Array,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let f = prob.dtype();
    let c = |v: f64| konst(v, f);
    let limit = max_iters(dtype)?;
    let one_m_p = ops::sub(&c(1.0)?, prob)?;
    let stddev = ops::unary(&lax::SQRT, &ops::mul(&ops::mul(count, prob)?, &one_m_p)?)?;
    let b = ops::add(&c(1.15)?, &ops::mul(&c(2.53)?, &stddev)?)?;
    let a = ops::add(
        &ops::add(&c(-0.0873)?, &ops::mul(&c(0.0248)?, &b)?)?,
        &ops::mul(&c(0.01)?, prob)?,
    )?;
    let cc = ops::add(&ops::mul(count, prob)?, &c(0.5)?)?;
    let v_r = ops::sub(&c(0.92)?, &ops::div(&c(4.2)?, &b)?)?;
    let r = ops::div(prob, &one_m_p)?;
    let alpha = ops::mul(&ops::add(&c(2.83)?, &ops::div(&c(5.1)?, &b)?)?, &stddev)?;
    let m = ops::unary(&lax::FLOOR, &ops::mul(&ops::add(count, &c(1.0)?)?, prob)?)?;
    let init = (
        counter(),
        full(-1.0, f, shape)?,
        full(0.0, DType::Bool, shape)?,
        key.clone(),
    );
    let shape = shape.to_vec();
    let log = |x: &Array| ops::unary(&lax::LOG, x);
    let (_, k, _, _) = control::while_loop(
        |(i, _, accepted, _): (Array, Array, Array, Array)| {
            bin(&lax::AND, &any(&not(&accepted)?)?, &below(&i, &limit)?)
        },
        |(i, k_out, accepted, key): (Array, Array, Array, Array)| {
            let ks = split_n(&key, 3)?;
            let u = super::uniform(&ks[1], &shape, f, 0.0, 1.0)?;
            let v = super::uniform(&ks[2], &shape, f, 0.0, 1.0)?;
            let u = ops::sub(&u, &c(0.5)?)?;
            let us = ops::sub(&c(0.5)?, &ops::unary(&lax::ABS, &u)?)?;
            let accept1 = bin(
                &lax::AND,
                &bin(&lax::GE, &us, &c(0.07)?)?,
                &bin(&lax::LE, &v, &v_r)?,
            )?;
            let k = ops::unary(
                &lax::FLOOR,
                &ops::add(
                    &ops::mul(
                        &ops::add(&ops::div(&ops::mul(&c(2.0)?, &a)?, &us)?, &b)?,
                        &u,
                    )?,
                    &cc,
                )?,
            )?;
            let reject = bin(
                &lax::OR,
                &bin(&lax::LT, &k, &c(0.0)?)?,
                &bin(&lax::GT, &k, count)?,
            )?;
            let v = log(&ops::div(
                &ops::mul(&v, &alpha)?,
                &ops::add(&ops::div(&a, &ops::mul(&us, &us)?)?, &b)?,
            )?)?;
            let n_m_1 = ops::add(&ops::sub(count, &m)?, &c(1.0)?)?;
            let n_k_1 = ops::add(&ops::sub(count, &k)?, &c(1.0)?)?;
            let t1 = ops::mul(
                &ops::add(&m, &c(0.5)?)?,
                &log(&ops::div(&ops::add(&m, &c(1.0)?)?, &ops::mul(&r, &n_m_1)?)?)?,
            )?;
            let t2 = ops::mul(
                &ops::add(count, &c(1.0)?)?,
                &log(&ops::div(&n_m_1, &n_k_1)?)?,
            )?;
            let t3 = ops::mul(
                &ops::add(&k, &c(0.5)?)?,
                &log(&ops::div(&ops::mul(&r, &n_k_1)?, &ops::add(&k, &c(1.0)?)?)?)?,
            )?;
            let ub = ops::add(&ops::add(&t1, &t2)?, &t3)?;
            let ub = ops::add(&ub, &stirling_tail(&m)?)?;
            let ub = ops::add(&ub, &stirling_tail(&ops::sub(count, &m)?)?)?;
            let ub = ops::sub(&ub, &stirling_tail(&k)?)?;
            let ub = ops::sub(&ub, &stirling_tail(&ops::sub(count, &k)?)?)?;
            let accept2 = bin(&lax::LE, &v, &ub)?;
            let (k_out, accepted) = step(&accept1, &reject, &accept2, &k, &k_out, &accepted)?;
            Ok((plus_one(&i)?, k_out, accepted, ks[0].clone()))
        },
        &init,
    )?;
    convert(&k, dtype)
}

/// `_binomial(key, count, prob, shape, dtype)`.
fn binomial_traced(
    key: &Array,
    count: &Array,
    prob: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let shape = match shape {
        None => jnp::broadcast_shapes(&[count.shape(), prob.shape()])?,
        Some(s) => {
            check_shape("binomial", s, &[count.shape(), prob.shape()])?;
            s.to_vec()
        }
    };
    let prob = inexact(prob)?;
    let f = prob.dtype();
    let c = |v: f64| konst(v, f);
    let count = convert(count, f)?;
    let count = ops::broadcast_to(&count, &shape)?;
    let prob = ops::broadcast_to(&prob, &shape)?;
    let p_lt_half = bin(&lax::LT, &prob, &c(0.5)?)?;
    let q = select(&p_lt_half, &prob, &ops::sub(&c(1.0)?, &prob)?)?;
    let count_nan_or_neg = bin(
        &lax::OR,
        &bin(&lax::NE, &count, &count)?,
        &bin(&lax::LT, &count, &c(0.0)?)?,
    )?;
    let count_inf = bin(
        &lax::EQ,
        &ops::unary(&lax::ABS, &count)?,
        &c(f64::INFINITY)?,
    )?;
    let q_is_nan = bin(&lax::NE, &q, &q)?;
    let q_l_0 = bin(&lax::LT, &q, &c(0.0)?)?;
    let q = select(
        &bin(&lax::OR, &q_is_nan, &q_l_0)?,
        &full(0.01, f, &shape)?,
        &q,
    )?;
    let use_inversion = bin(
        &lax::OR,
        &count_nan_or_neg,
        &bin(&lax::LE, &ops::mul(&count, &q)?, &c(10.0)?)?,
    )?;
    let count = ops::unary(&lax::FLOOR, &count)?;
    let count_inv = select(&use_inversion, &count, &full(0.0, f, &shape)?)?;
    let count_btrs = select(&use_inversion, &full(1e4, f, &shape)?, &count)?;
    let q_btrs = select(&use_inversion, &full(0.5, f, &shape)?, &q)?;
    let inv = binomial_inversion(key, &count_inv, &q, &shape, dtype)?;
    let bt = btrs(key, &count_btrs, &q_btrs, &shape, dtype)?;
    let samples = select(&use_inversion, &inv, &bt)?;
    let invalid = bin(
        &lax::OR,
        &bin(&lax::OR, &q_l_0, &q_is_nan)?,
        &count_nan_or_neg,
    )?;
    let samples = select(&invalid, &full(f64::NAN, dtype, &shape)?, &samples)?;
    let samples = select(
        &bin(&lax::AND, &count_inf, &not(&invalid)?)?,
        &full(f64::INFINITY, dtype, &shape)?,
        &samples,
    )?;
    let keep = bin(
        &lax::OR,
        &bin(
            &lax::OR,
            &bin(&lax::OR, &p_lt_half, &count_nan_or_neg)?,
            &q_is_nan,
        )?,
        &count_inf,
    )?;
    select(
        &keep,
        &samples,
        &ops::sub(&convert(&count, dtype)?, &samples)?,
    )
}

/// `promote_dtypes_inexact(x)` of one operand: integers and bools to the default float, weak
/// type kept.
fn inexact(x: &Array) -> Result<Array, Error> {
    match x.dtype().kind() {
        Kind::Float | Kind::Complex => Ok(x.clone()),
        _ => {
            let d = if x64() {
                DType::Float64
            } else {
                DType::Float32
            };
            ops::convert(x, d, x.weak_type())
        }
    }
}

/// `jax.random.binomial(key, n, p, shape, dtype)`: binomial counts of `n` trials of success
/// probability `p` (broadcast together, or to `shape`), as floats of `dtype`; NaN for a NaN
/// or negative `n` or an invalid `p`, infinity for an infinite `n`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let (n, p) = (Array::from_vec(vec![5.0f32, 1000.0]), Array::from_vec(vec![0.3f32, 0.9]));
/// let k = random::binomial(&random::key(0)?, &n, &p, None, DType::Float32)?;
/// let k = k.to_vec::<f32>()?;
/// assert!(k[0] <= 5.0 && k[1] <= 1000.0);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key, a non-float dtype or shapes that do not broadcast
/// to `shape`.
pub fn binomial(
    key: &Array,
    n: &Array,
    p: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let key = check_key("binomial", key)?;
    let dtype = super::gamma::float_dtype("binomial", dtype)?;
    let shape = shape.map(<[usize]>::to_vec);
    jit(move |(key, n, p): (Array, Array, Array)| {
        binomial_traced(&key, &n, &p, shape.as_deref(), dtype)
    })
    .named("_binomial")
    .call(&(key, n.clone(), p.clone()))
}

/// `jax.random.multinomial(key, n, p, shape=shape, dtype=dtype)`: counts of `n` trials over
/// the outcomes of the last axis of `p` (`shape`, when given, is the result's whole shape),
/// as JAX computes them: the probabilities over the remaining mass, and a `scan` of binomial
/// draws over the outcomes, one split key each.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, random};
/// let (n, p) = (Array::scalar(20.0f32), Array::from_vec(vec![0.2f32, 0.5, 0.3]));
/// let c = random::multinomial(&random::key(0)?, &n, &p, None, DType::Float32)?;
/// assert_eq!(c.to_vec::<f32>()?.iter().sum::<f32>(), 20.0);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for a batched key, shapes that do not broadcast; those of [`binomial`].
pub fn multinomial(
    key: &Array,
    n: &Array,
    p: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Result<Array, Error> {
    let key = check_key("multinomial", key)?;
    let dtype = super::gamma::float_dtype("multinomial", dtype)?;
    let (n, p) = promote_inexact_pair(n, p)?;
    let shape = shape.map_or_else(|| p.shape().to_vec(), <[usize]>::to_vec);
    if shape.is_empty() {
        return Err(Error::refused(
            Exception::ValueError,
            "multinomial requires p.ndim >= 1",
        ));
    }
    let n = ops::broadcast_to(&n, &shape[..shape.len() - 1])?;
    let p = ops::broadcast_to(&p, &shape)?;
    let last = p.ndim() - 1;
    let mut perm = vec![last];
    perm.extend(0..last);
    let p = lax::ad::transpose(&p, &perm)?;
    let params = Params::new()
        .with("axis", Param::Int(0))
        .with("reverse", Param::Bool(true));
    let remaining = lax::bind1(&lax::CUMSUM, &[&p], &params)?;
    let f = p.dtype();
    let is_zero = bin(&lax::EQ, &remaining, &konst(0.0, f)?)?;
    let denom = select(&is_zero, &konst(1.0, f)?, &remaining)?;
    let ratios = ops::div(&p, &denom)?;
    let keys = super::split(&key, ratios.shape()[0])?;
    let (_, counts): (Array, Array) = control::scan(
        |remainder: Array, (ratio, key): (Array, Array)| {
            let clipped = lax::bind1(
                &lax::CLAMP,
                &[&konst(0.0, f)?, &ratio, &konst(1.0, f)?],
                &Params::new(),
            )?;
            let count = binomial(&key, &remainder, &clipped, None, remainder.dtype())?;
            Ok((ops::sub(&remainder, &count)?, count))
        },
        &n,
        &(ratios, keys),
        None,
        false,
    )?;
    let mut back: Vec<usize> = (1..counts.ndim()).collect();
    back.push(0);
    let counts = lax::ad::transpose(&counts, &back)?;
    convert(&counts, dtype)
}

/// `promote_dtypes_inexact(n, p)`: both to their common inexact dtype.
fn promote_inexact_pair(n: &Array, p: &Array) -> Result<(Array, Array), Error> {
    let out =
        crate::numpy::promote_family(None, crate::numpy::Family::Inexact, &[n.into(), p.into()]);
    match out {
        Ok(v) if v.len() == 2 => {
            let (n2, p2) = (v[0].clone(), v[1].clone());
            // promote_family broadcasts ranks; keep the shapes as they were.
            let n2 = if n2.shape() == n.shape() {
                n2
            } else {
                ops::convert(n, p2.dtype(), n2.weak_type())?
            };
            let p2 = if p2.shape() == p.shape() {
                p2
            } else {
                ops::convert(p, n2.dtype(), p2.weak_type())?
            };
            Ok((n2, p2))
        }
        Ok(_) => Err(crate::array::invalid(
            "multinomial",
            "promotion lost an operand",
        )),
        Err(e) => Err(e),
    }
}
