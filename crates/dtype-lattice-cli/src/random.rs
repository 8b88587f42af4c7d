//! `dtype-lattice random OP`: parsing and rendering only; the PRNG lives in
//! `dtype_lattice_array::random`.

use dtype_lattice::error::Exception;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::Instant;

use clap::{Args, ValueEnum};
use dtype_lattice::error::Reason;
use dtype_lattice::key::{Algorithm, KeyImpl};
use dtype_lattice::{DType, Error};
use dtype_lattice_array::random::{self as jr, Key, KeyArray, Random, Sample, Values};
use dtype_lattice_array::{Array, config};
use serde::Serialize;

use crate::{render, unprotect};

/// The operations of `random`, named as the CLI spells them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum RandomOp {
    /// `jax.random.key(seed)` (or, with --key, `wrap_key_data`).
    Key,
    /// `jax.random.split(key, num or shape)`.
    Split,
    /// `jax.random.fold_in(key, data)`.
    FoldIn,
    /// `jax.random.bits(key, shape, uint<width>)`.
    Bits,
    /// `jax.random.uniform(key, shape, dtype, minval, maxval)`.
    Uniform,
    /// `jax.random.normal(key, shape, dtype)`.
    Normal,
    /// `jax.random.randint(key, shape, minval, maxval, dtype)`.
    Randint,
    /// `jax.random.bernoulli(key, p, shape)`.
    Bernoulli,
    /// `jax.random.exponential(key, shape, dtype)`.
    Exponential,
    /// `jax.random.cauchy(key, shape, dtype)`.
    Cauchy,
    /// `jax.random.laplace(key, shape, dtype)`.
    Laplace,
    /// `jax.random.logistic(key, shape, dtype)`.
    Logistic,
    /// `jax.random.gumbel(key, shape, dtype, mode)`.
    Gumbel,
    /// `jax.random.maxwell(key, shape, dtype)`.
    Maxwell,
    /// `jax.random.rademacher(key, shape, dtype)`.
    Rademacher,
    /// `jax.random.pareto(key, b, shape, dtype)`.
    Pareto,
    /// `jax.random.rayleigh(key, scale, shape, dtype)`.
    Rayleigh,
    /// `jax.random.wald(key, mean, shape, dtype)`.
    Wald,
    /// `jax.random.lognormal(key, sigma, shape, dtype)`.
    Lognormal,
    /// `jax.random.weibull_min(key, scale, concentration, shape, dtype)`.
    WeibullMin,
    /// `jax.random.double_sided_maxwell(key, loc, scale, shape, dtype)`.
    DoubleSidedMaxwell,
    /// `jax.random.triangular(key, left, mode, right, shape, dtype)`.
    Triangular,
    /// `jax.random.truncated_normal(key, lower, upper, shape, dtype)`.
    TruncatedNormal,
    /// `jax.random.geometric(key, p, shape, dtype)`.
    Geometric,
    /// `jax.random.categorical(key, logits, axis, shape, replace)`.
    Categorical,
    /// `jax.random.choice(key, a, shape, replace, p, axis)`.
    Choice,
    /// `jax.random.permutation(key, x, axis, independent)`.
    Permutation,
    /// `jax.random.gamma(key, a, shape, dtype)`.
    Gamma,
    /// `jax.random.loggamma(key, a, shape, dtype)`.
    Loggamma,
    /// `jax.random.beta(key, a, b, shape, dtype)`.
    Beta,
    /// `jax.random.dirichlet(key, alpha, shape, dtype)`.
    Dirichlet,
    /// `jax.random.chisquare(key, df, shape, dtype)`.
    Chisquare,
    /// `jax.random.f(key, dfnum, dfden, shape, dtype)`.
    F,
    /// `jax.random.t(key, df, shape, dtype)`.
    T,
    /// `jax.random.generalized_normal(key, p, shape, dtype)`.
    GeneralizedNormal,
    /// `jax.random.ball(key, d, p, shape, dtype)`.
    Ball,
    /// `jax.random.poisson(key, lam, shape, dtype)` (threefry2x32 keys only, as JAX).
    Poisson,
    /// `jax.random.binomial(key, n, p, shape, dtype)`.
    Binomial,
    /// `jax.random.multinomial(key, n, p, shape, dtype)`.
    Multinomial,
}

/// The samplers' parameters, as options: a number (a Python float: weakly typed) or a
/// comma-separated list (an array of the default float dtype).
#[derive(Args, Debug, Default)]
pub(crate) struct SamplerArgs {
    /// gamma, loggamma, beta: the shape `a`; choice: the population (an integer n for
    /// arange(n), or values).
    #[arg(long, value_name = "A", allow_hyphen_values = true)]
    a: Option<String>,
    /// pareto, beta: `b`.
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    b: Option<String>,
    /// rayleigh, weibull-min, double-sided-maxwell: `scale`.
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    scale: Option<String>,
    /// weibull-min: `concentration`.
    #[arg(long, value_name = "C", allow_hyphen_values = true)]
    concentration: Option<String>,
    /// double-sided-maxwell: `loc`.
    #[arg(long, value_name = "L", allow_hyphen_values = true)]
    loc: Option<String>,
    /// wald: `mean`.
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    mean: Option<String>,
    /// lognormal: `sigma`.
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    sigma: Option<String>,
    /// triangular: `left`.
    #[arg(long, value_name = "L", allow_hyphen_values = true)]
    left: Option<String>,
    /// triangular: `mode` (a number); gumbel, categorical, choice: `low` or `high`.
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    mode: Option<String>,
    /// triangular: `right`.
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    right: Option<String>,
    /// truncated-normal: `lower`.
    #[arg(long, value_name = "L", allow_hyphen_values = true)]
    lower: Option<String>,
    /// truncated-normal: `upper`.
    #[arg(long, value_name = "U", allow_hyphen_values = true)]
    upper: Option<String>,
    /// poisson: the rate `lam`.
    #[arg(long, value_name = "LAM", allow_hyphen_values = true)]
    lam: Option<String>,
    /// binomial, multinomial: the number of trials `n`.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    n: Option<String>,
    /// chisquare, t: degrees of freedom `df`.
    #[arg(long, value_name = "DF", allow_hyphen_values = true)]
    df: Option<String>,
    /// f: `dfnum`.
    #[arg(long, value_name = "DF", allow_hyphen_values = true)]
    dfnum: Option<String>,
    /// f: `dfden`.
    #[arg(long, value_name = "DF", allow_hyphen_values = true)]
    dfden: Option<String>,
    /// dirichlet: the concentrations `alpha` (a list).
    #[arg(long, value_name = "A1,A2,...", allow_hyphen_values = true)]
    alpha: Option<String>,
    /// categorical: the unnormalised log probabilities (a list).
    #[arg(long, value_name = "L1,L2,...", allow_hyphen_values = true)]
    logits: Option<String>,
    /// ball: the dimension `d`.
    #[arg(long, value_name = "D")]
    d: Option<String>,
    /// categorical, choice, permutation: the axis [default: -1 categorical, 0 others].
    #[arg(long, value_name = "AXIS", allow_hyphen_values = true)]
    axis: Option<String>,
    /// categorical, choice: sample with replacement [default: true].
    #[arg(long, value_name = "BOOL")]
    replace: Option<String>,
    /// permutation: shuffle each slice independently.
    #[arg(long)]
    independent: bool,
}

/// Arguments of `random`.
#[derive(Args, Debug)]
pub(crate) struct RandomArgs {
    /// The operation.
    #[arg(value_enum)]
    op: RandomOp,
    /// Integer seed of the key (a Python int: negative and 64-bit seeds as JAX treats them).
    #[arg(
        long,
        value_name = "S",
        allow_hyphen_values = true,
        conflicts_with = "key"
    )]
    seed: Option<String>,
    /// The key as its key data, the implementation's number of uint32 words: K0,K1 (four
    /// for rbg and unsafe_rbg).
    #[arg(long, value_name = "K0,K1,...")]
    key: Option<String>,
    /// The PRNG implementation: threefry2x32 (default), rbg, unsafe_rbg, threefry4x32,
    /// philox2x32, philox4x32.
    #[arg(long = "impl", value_name = "NAME")]
    impl_name: Option<String>,
    /// Number of keys or values (a shape of one dimension).
    #[arg(
        long,
        value_name = "N",
        allow_hyphen_values = true,
        conflicts_with = "shape"
    )]
    num: Option<String>,
    /// Shape of the output: D1,D2,... (empty for a scalar).
    #[arg(long, value_name = "D1,D2,...", allow_hyphen_values = true)]
    shape: Option<String>,
    /// The data to fold in (fold-in): an integer in [0, 2^32).
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    data: Option<String>,
    /// Bit width of `bits`: 8, 16, 32 or 64 [default: 32, or 64 with --x64].
    #[arg(long, value_name = "W")]
    width: Option<String>,
    /// Output dtype [default: float32/int32, float64/int64 with --x64].
    #[arg(long, value_name = "T")]
    dtype: Option<String>,
    /// Lower bound (inclusive) [uniform default: 0.0; required by randint].
    #[arg(long, value_name = "A", allow_hyphen_values = true)]
    minval: Option<String>,
    /// Upper bound (exclusive) [uniform default: 1.0; required by randint].
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    maxval: Option<String>,
    /// Probability of True (bernoulli) [default: 0.5]; geometric, binomial: the success
    /// probability; multinomial, choice: probabilities (a list); generalized-normal, ball:
    /// the exponent `p`.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    p: Option<String>,
    #[command(flatten)]
    sampler: SamplerArgs,
    /// 64-bit mode (jax_enable_x64=True).
    #[arg(long)]
    x64: bool,
    /// Print JSON: keys {"dtype", "shape", "data"}, values {"dtype", "shape", "values"} (plus
    /// "bits" for floats), errors {"error": {"kind", "message"}}.
    #[arg(long)]
    json: bool,
    /// Write the raw little-endian values (key data for keys) to FILE, as NumPy's tofile, and
    /// print only a summary to stderr.
    #[arg(long, value_name = "FILE", conflicts_with = "json")]
    out: Option<std::path::PathBuf>,
}

fn invalid(argument: &str, reason: impl Into<String>) -> Error {
    Reason::InvalidArgument {
        argument: argument.to_string(),
        reason: reason.into(),
    }
    .into()
}

fn text(s: &Option<String>) -> Option<String> {
    s.as_deref().map(|v| unprotect(v).trim().to_string())
}

fn int(name: &str, s: &str) -> Result<i128, Error> {
    s.replace('_', "")
        .parse()
        .map_err(|_| invalid(name, format!("{s:?} is not an integer")))
}

fn float(name: &str, s: &str) -> Result<f64, Error> {
    match s {
        "inf" => Ok(f64::INFINITY),
        "-inf" => Ok(f64::NEG_INFINITY),
        "nan" => Ok(f64::NAN),
        _ => s
            .parse()
            .map_err(|_| invalid(name, format!("{s:?} is not a number"))),
    }
}

/// The comma-separated components of `s`: none for an empty `s`, and one trailing comma
/// allowed (Python's `(3,)`); an empty component elsewhere (`3,,2`) is refused.
fn components<'a>(s: &'a str, name: &str) -> Result<Vec<&'a str>, Error> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let body = s.strip_suffix(',').unwrap_or(s);
    let parts: Vec<&str> = body.split(',').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(invalid(
            name,
            format!("{s:?} has an empty component (write D1,D2,...)"),
        ));
    }
    Ok(parts)
}

/// The most elements (keys or values) printed to stdout, as text or JSON: 2^24. Larger
/// outputs go to a file with `--out`, up to the library's in-memory limit
/// ([`dtype_lattice_array::random::MAX_ELEMENTS`], 2^28; `bits --out` streams any size).
pub const MAX_PRINTED: u128 = 1 << 24;

fn shape(args: &RandomArgs, default: &[usize]) -> Result<Vec<usize>, Error> {
    let s = dims_of(args, default)?;
    let size = s
        .iter()
        .try_fold(1u128, |acc, &d| acc.checked_mul(d as u128))
        .unwrap_or(u128::MAX);
    // Beyond 2^64 elements JAX's NotImplementedError answers (from the library).
    if args.out.is_none() && size > MAX_PRINTED && size <= 1 << 64 {
        return Err(invalid(
            "shape",
            format!(
                "{size} elements; at most 2^24 ({MAX_PRINTED}) are printed (write them to a file \
                 with --out FILE)"
            ),
        ));
    }
    Ok(s)
}

fn dims_of(args: &RandomArgs, default: &[usize]) -> Result<Vec<usize>, Error> {
    let dims = |s: &str, name: &str| -> Result<Vec<usize>, Error> {
        components(s, name)?
            .into_iter()
            .map(|d| {
                d.parse::<usize>().map_err(|_| {
                    invalid(
                        name,
                        format!("{d:?} is not a dimension (a non-negative integer)"),
                    )
                })
            })
            .collect()
    };
    match (text(&args.num), text(&args.shape)) {
        (Some(n), _) => {
            let d = dims(&n, "num")?;
            if d.len() != 1 {
                return Err(invalid("num", format!("{n:?} is not one count")));
            }
            Ok(d)
        }
        (None, Some(s)) => dims(&s, "shape"),
        (None, None) => Ok(default.to_vec()),
    }
}

fn key(args: &RandomArgs, rng: &Random) -> Result<Key, Error> {
    match (text(&args.seed), text(&args.key)) {
        (Some(s), _) => rng.key(int("seed", &s)?),
        (None, Some(k)) => key_array(&k)?.key(0),
        (None, None) => Err(invalid("key", "give the key with --seed S or --key K0,K1")),
    }
}

fn key_words(k: &str) -> Result<Vec<u32>, Error> {
    components(k, "key")?
        .into_iter()
        .map(|w| {
            w.parse::<u32>()
                .map_err(|_| invalid("key", format!("{w:?} is not a uint32")))
        })
        .collect()
}

fn key_array(k: &str) -> Result<KeyArray, Error> {
    let data = key_words(k)?;
    KeyArray::wrap_key_data(DType::KeyThreefry2x32, &[data.len()], data)
}

/// `--key`'s words as a `uint32` vector.
fn key_data(k: &str) -> Result<Array, Error> {
    Ok(Array::from_vec(key_words(k)?))
}

fn dtype(args: &RandomArgs, default: DType) -> Result<DType, Error> {
    match text(&args.dtype) {
        Some(t) => t.parse(),
        None => Ok(default),
    }
}

/// What an operation produced.
enum Output {
    Keys(KeyArray),
    Values(Sample),
}

/// The implementation `--impl` names, if it is not threefry2x32 (whose operations run on the
/// struct API's kernels).
fn other_impl(args: &RandomArgs) -> Result<Option<&'static KeyImpl>, Error> {
    let Some(name) = text(&args.impl_name) else {
        return Ok(None);
    };
    let k = jr::resolve_impl(&name)?;
    Ok((k.algorithm != Algorithm::Threefry2x32).then_some(k))
}

/// The key of `--seed` or `--key` as a key array of implementation `k`.
fn key_of(args: &RandomArgs, k: &KeyImpl) -> Result<Array, Error> {
    match (text(&args.seed), text(&args.key)) {
        (Some(s), _) => jr::key_with(int("seed", &s)?, k.name),
        (None, Some(data)) => jr::wrap_key_data(&key_data(&data)?, k.dtype()),
        (None, None) => Err(invalid(
            "key",
            "give the key with --seed S or --key K0,K1,...",
        )),
    }
}

/// An operation on keys of another implementation than threefry2x32, through `random`'s
/// array API (the rules in force set to JAX's with `--x64` or not).
fn compute_with(args: &RandomArgs, k: &'static KeyImpl) -> Result<Output, Error> {
    let rules = dtype_lattice::Rules::jax().x64(args.x64);
    config::with_rules(rules, || {
        let rng = Random::new().x64(args.x64);
        let keys = |a: Array| -> Result<Output, Error> {
            let data = jr::key_data(&a)?;
            Ok(Output::Keys(KeyArray::wrap_key_data(
                a.dtype(),
                data.shape(),
                data.to_vec::<u32>()?,
            )?))
        };
        let values = |a: Array| Ok(Output::Values(Sample::from_array(&a)?));
        let key = || key_of(args, k);
        match args.op {
            RandomOp::Key => keys(key()?),
            RandomOp::Split => keys(jr::split_shape(&key()?, &shape(args, &[2])?)?),
            RandomOp::FoldIn => {
                let d =
                    text(&args.data).ok_or_else(|| invalid("data", "fold-in needs --data D"))?;
                keys(jr::fold_in(&key()?, int("data", &d)?)?)
            }
            RandomOp::Bits => {
                let w = width(args, &rng)?;
                let t = match w {
                    8 => DType::UInt8,
                    16 => DType::UInt16,
                    32 => DType::UInt32,
                    _ => DType::UInt64,
                };
                values(jr::bits_dtype(&key()?, &shape(args, &[])?, t)?)
            }
            RandomOp::Uniform => {
                let lo = text(&args.minval).map_or(Ok(0.0), |s| float("minval", &s))?;
                let hi = text(&args.maxval).map_or(Ok(1.0), |s| float("maxval", &s))?;
                let t = dtype(args, rng.default_float())?;
                values(jr::uniform(&key()?, &shape(args, &[])?, t, lo, hi)?)
            }
            RandomOp::Normal => {
                let t = dtype(args, rng.default_float())?;
                values(jr::normal(&key()?, &shape(args, &[])?, t)?)
            }
            RandomOp::Randint => {
                let (lo, hi) = randint_bounds(args)?;
                let t = dtype(args, rng.default_int())?;
                values(jr::randint(&key()?, &shape(args, &[])?, lo, hi, t)?)
            }
            RandomOp::Bernoulli => {
                let p = text(&args.p).map_or(Ok(0.5), |s| float("p", &s))?;
                values(jr::bernoulli(&key()?, p, &shape(args, &[])?)?)
            }
            _ => values(sample(args, &key()?, &rng)?),
        }
    })
}

fn randint_bounds(args: &RandomArgs) -> Result<(i128, i128), Error> {
    let bound = |v: &Option<String>, name: &str| {
        text(v)
            .ok_or_else(|| invalid(name, format!("randint needs --{name}")))
            .and_then(|s| int(name, &s))
    };
    Ok((
        bound(&args.minval, "minval")?,
        bound(&args.maxval, "maxval")?,
    ))
}

/// A parameter option: a number (a Python float, weakly typed) or a comma-separated list (an
/// array of the default float dtype).
fn param(name: &str, v: &Option<String>, x64: bool) -> Result<Option<Array>, Error> {
    let Some(t) = text(v) else {
        return Ok(None);
    };
    let parts = components(&t, name)?;
    let values = parts
        .iter()
        .map(|p| float(name, p))
        .collect::<Result<Vec<f64>, Error>>()?;
    Ok(Some(match values.as_slice() {
        [one] if !t.contains(',') => Array::python_scalar(*one)?,
        _ if x64 => Array::from_vec(values),
        _ => Array::from_vec(values.iter().map(|&v| v as f32).collect::<Vec<f32>>()),
    }))
}

/// A parameter the sampler needs.
fn required(op: RandomOp, name: &str, v: &Option<String>, x64: bool) -> Result<Array, Error> {
    param(name, v, x64)?.ok_or_else(|| invalid(name, format!("{} needs --{name}", op_name(op))))
}

/// The samplers beyond the first four, on `key`.
fn sample(args: &RandomArgs, key: &Array, rng: &Random) -> Result<Array, Error> {
    use RandomOp::*;
    let op = args.op;
    let x64 = args.x64;
    let sa = &args.sampler;
    let need = |name: &str, v: &Option<String>| required(op, name, v, x64);
    let given = || -> Result<Option<Vec<usize>>, Error> {
        Ok(if args.num.is_some() || args.shape.is_some() {
            Some(shape(args, &[])?)
        } else {
            None
        })
    };
    let sh = || shape(args, &[]);
    let fl = || dtype(args, rng.default_float());
    let int = || dtype(args, rng.default_int());
    let opt_shape = given()?;
    let s = opt_shape.as_deref();
    let mode = text(&sa.mode);
    let axis = |default: isize| -> Result<isize, Error> {
        text(&sa.axis).map_or(Ok(default), |a| {
            a.parse()
                .map_err(|_| invalid("axis", format!("{a:?} is not an integer")))
        })
    };
    let replace = || -> Result<bool, Error> {
        match text(&sa.replace).as_deref() {
            None | Some("true" | "True" | "1") => Ok(true),
            Some("false" | "False" | "0") => Ok(false),
            Some(o) => Err(invalid("replace", format!("{o:?} is not true or false"))),
        }
    };
    match op {
        Exponential => jr::exponential(key, &sh()?, fl()?),
        Cauchy => jr::cauchy(key, &sh()?, fl()?),
        Laplace => jr::laplace(key, &sh()?, fl()?),
        Logistic => jr::logistic(key, &sh()?, fl()?),
        Gumbel => jr::gumbel(key, &sh()?, fl()?, mode.as_deref()),
        Maxwell => jr::maxwell(key, &sh()?, fl()?),
        Rademacher => jr::rademacher(key, &sh()?, int()?),
        Pareto => jr::pareto(key, &need("b", &sa.b)?, s, fl()?),
        Rayleigh => jr::rayleigh(key, &need("scale", &sa.scale)?, s, fl()?),
        Wald => jr::wald(key, &need("mean", &sa.mean)?, s, fl()?),
        Lognormal => {
            let sigma =
                param("sigma", &sa.sigma, x64)?.map_or_else(|| Array::python_scalar(1.0), Ok)?;
            jr::lognormal(key, &sigma, s, fl()?)
        }
        WeibullMin => jr::weibull_min(
            key,
            &need("scale", &sa.scale)?,
            &need("concentration", &sa.concentration)?,
            &sh()?,
            fl()?,
        ),
        DoubleSidedMaxwell => jr::double_sided_maxwell(
            key,
            &need("loc", &sa.loc)?,
            &need("scale", &sa.scale)?,
            &sh()?,
            fl()?,
        ),
        Triangular => jr::triangular(
            key,
            &need("left", &sa.left)?,
            &need("mode", &sa.mode)?,
            &need("right", &sa.right)?,
            s,
            fl()?,
        ),
        TruncatedNormal => jr::truncated_normal(
            key,
            &need("lower", &sa.lower)?,
            &need("upper", &sa.upper)?,
            s,
            fl()?,
        ),
        Geometric => jr::geometric(key, &need("p", &args.p)?, s, int()?),
        Categorical => jr::categorical(
            key,
            &need("logits", &sa.logits)?,
            axis(-1)?,
            s,
            replace()?,
            mode.as_deref(),
        ),
        Choice => {
            let a = population(op, &sa.a)?;
            let p = param("p", &args.p, x64)?;
            jr::choice(
                key,
                &a,
                &sh()?,
                replace()?,
                p.as_ref(),
                axis(0)?,
                mode.as_deref(),
            )
        }
        Permutation => {
            let x = population(op, &sa.a)?;
            jr::permutation(key, &x, axis(0)?, sa.independent)
        }
        Gamma => jr::gamma(key, &need("a", &sa.a)?, s, fl()?),
        Loggamma => jr::loggamma(key, &need("a", &sa.a)?, s, fl()?),
        Beta => jr::beta(key, &need("a", &sa.a)?, &need("b", &sa.b)?, s, fl()?),
        Dirichlet => jr::dirichlet(key, &need("alpha", &sa.alpha)?, s, fl()?),
        Chisquare => jr::chisquare(key, &need("df", &sa.df)?, s, fl()?),
        F => jr::f(
            key,
            &need("dfnum", &sa.dfnum)?,
            &need("dfden", &sa.dfden)?,
            s,
            fl()?,
        ),
        T => jr::t(key, &need("df", &sa.df)?, s, fl()?),
        GeneralizedNormal => jr::generalized_normal(key, &need("p", &args.p)?, &sh()?, fl()?),
        Ball => {
            let d = text(&sa.d)
                .ok_or_else(|| invalid("d", "ball needs --d"))?
                .parse::<usize>()
                .map_err(|_| invalid("d", "not a dimension (a non-negative integer)"))?;
            let p = param("p", &args.p, x64)?.map_or_else(|| Array::python_scalar(2.0), Ok)?;
            jr::ball(key, d, &p, &sh()?, fl()?)
        }
        Poisson => jr::poisson(key, &need("lam", &sa.lam)?, s, int()?),
        Binomial => jr::binomial(key, &need("n", &sa.n)?, &need("p", &args.p)?, s, fl()?),
        Multinomial => jr::multinomial(key, &need("n", &sa.n)?, &need("p", &args.p)?, s, fl()?),
        Key | Split | FoldIn | Bits | Uniform | Normal | Randint | Bernoulli => {
            Err(invalid("op", "not a sampler"))
        }
    }
}

/// `choice`'s and `permutation`'s `a`/`x`: one integer n (a Python int: `arange(n)`), or a
/// list of values.
fn population(op: RandomOp, v: &Option<String>) -> Result<Array, Error> {
    let t = text(v).ok_or_else(|| invalid("a", format!("{} needs --a", op_name(op))))?;
    if !t.contains(',')
        && let Ok(n) = t.parse::<i128>()
    {
        return Array::python_scalar(dtype_lattice::Value::Int(n));
    }
    let values = components(&t, "a")?
        .iter()
        .map(|p| float("a", p))
        .collect::<Result<Vec<f64>, Error>>()?;
    Ok(Array::from_vec(
        values.iter().map(|&v| v as f32).collect::<Vec<f32>>(),
    ))
}

fn compute(args: &RandomArgs, rng: &Random) -> Result<Output, Error> {
    if let Some(k) = other_impl(args)? {
        return compute_with(args, k);
    }
    let rng = *rng;
    Ok(match args.op {
        RandomOp::Key => match (text(&args.seed), text(&args.key)) {
            (None, Some(k)) => Output::Keys(key_array(&k)?),
            _ => Output::Keys(key(args, &rng)?.to_array()),
        },
        RandomOp::Split => Output::Keys(rng.split(&key(args, &rng)?, &shape(args, &[2])?)?),
        RandomOp::FoldIn => {
            let d = text(&args.data).ok_or_else(|| invalid("data", "fold-in needs --data D"))?;
            Output::Keys(rng.fold_in(&key(args, &rng)?, int("data", &d)?)?.to_array())
        }
        RandomOp::Bits => {
            let w = width(args, &rng)?;
            Output::Values(rng.bits(&key(args, &rng)?, &shape(args, &[])?, w)?)
        }
        RandomOp::Uniform => {
            let lo = text(&args.minval).map_or(Ok(0.0), |s| float("minval", &s))?;
            let hi = text(&args.maxval).map_or(Ok(1.0), |s| float("maxval", &s))?;
            let t = dtype(args, rng.default_float())?;
            Output::Values(rng.uniform(&key(args, &rng)?, &shape(args, &[])?, t, lo, hi)?)
        }
        RandomOp::Normal => {
            let t = dtype(args, rng.default_float())?;
            Output::Values(rng.normal(&key(args, &rng)?, &shape(args, &[])?, t)?)
        }
        RandomOp::Randint => {
            let (lo, hi) = randint_bounds(args)?;
            let t = dtype(args, rng.default_int())?;
            Output::Values(rng.randint(&key(args, &rng)?, &shape(args, &[])?, lo, hi, t)?)
        }
        RandomOp::Bernoulli => {
            let p = text(&args.p).map_or(Ok(0.5), |s| float("p", &s))?;
            Output::Values(rng.bernoulli(&key(args, &rng)?, &shape(args, &[])?, p)?)
        }
        // Sent to the array API above.
        _ => return compute_with(args, &dtype_lattice::key::THREEFRY2X32),
    })
}

fn width(args: &RandomArgs, rng: &Random) -> Result<u32, Error> {
    let requested = match (text(&args.width), text(&args.dtype)) {
        (Some(w), _) => w
            .parse::<u32>()
            .map_err(|_| invalid("width", format!("{w:?} is not a bit width")))?,
        (None, Some(t)) => {
            let t: DType = t.parse()?;
            if t.kind() != dtype_lattice::Kind::UnsignedInt {
                return Err(Error::refused(
                    Exception::ValueError,
                    format!(
                        "dtype argument to `bits` must be an unsigned int dtype, got {}",
                        rng.canonical(t)
                    ),
                ));
            }
            t.bits()
        }
        (None, None) => {
            if rng.is_x64() {
                64
            } else {
                32
            }
        }
    };
    if requested == 64 && !rng.is_x64() {
        eprintln!(
            "warning: with x64 off JAX truncates uint64 to uint32 (pass --x64 for 64-bit bits)"
        );
    }
    rng.bits_width(requested)
}

fn write_error(out: &mut impl Write, e: &Error, json: bool) -> io::Result<()> {
    if json {
        #[derive(Serialize)]
        struct Wrapped {
            error: render::ErrorJson,
        }
        serde_json::to_writer(
            &mut *out,
            &Wrapped {
                error: render::ErrorJson::of(e),
            },
        )?;
        out.write_all(b"\n")
    } else {
        eprintln!("error: {}", render::error_line(e));
        Ok(())
    }
}

fn write_text(out: &mut impl Write, o: &Output) -> io::Result<()> {
    match o {
        Output::Keys(k) => {
            for pair in k
                .key_data()
                .chunks(k.dtype().key_impl().map_or(1, |i| i.key_words))
            {
                let words: Vec<String> = pair.iter().map(u32::to_string).collect();
                writeln!(out, "{}", words.join(" "))?;
            }
        }
        Output::Values(s) => {
            // One JSON number per line, as the JSON output's "values" (floats as the f64
            // they convert to exactly), streamed; JSON has no inf or NaN: those print as
            // Python's repr does.
            fn lines<T: Serialize>(
                out: &mut impl Write,
                v: impl IntoIterator<Item = T>,
            ) -> io::Result<()> {
                for x in v {
                    serde_json::to_writer(&mut *out, &x).map_err(io::Error::other)?;
                    out.write_all(b"\n")?;
                }
                Ok(())
            }
            fn floats(out: &mut impl Write, v: impl IntoIterator<Item = f64>) -> io::Result<()> {
                for x in v {
                    match x {
                        x if x.is_nan() => out.write_all(b"nan")?,
                        f64::INFINITY => out.write_all(b"inf")?,
                        f64::NEG_INFINITY => out.write_all(b"-inf")?,
                        x => serde_json::to_writer(&mut *out, &x).map_err(io::Error::other)?,
                    }
                    out.write_all(b"\n")?;
                }
                Ok(())
            }
            match s.values() {
                Values::Bool(v) => lines(out, v)?,
                Values::U8(v) => lines(out, v)?,
                Values::U16(v) => lines(out, v)?,
                Values::U32(v) => lines(out, v)?,
                Values::U64(v) => lines(out, v)?,
                Values::I8(v) => lines(out, v)?,
                Values::I16(v) => lines(out, v)?,
                Values::I32(v) => lines(out, v)?,
                Values::I64(v) => lines(out, v)?,
                Values::F16(v) => floats(out, v.iter().map(|x| x.to_f64()))?,
                Values::BF16(v) => floats(out, v.iter().map(|x| x.to_f64()))?,
                Values::F32(v) => floats(out, v.iter().map(|&x| f64::from(x)))?,
                Values::F64(v) => floats(out, v.iter().copied())?,
                // A kind of values this CLI predates: as the JSON output writes them.
                _ => {
                    let json = serde_json::to_value(s).map_err(io::Error::other)?;
                    lines(out, json["values"].as_array().into_iter().flatten())?
                }
            }
        }
    }
    Ok(())
}

fn summary(what: &str, dtype: &str, n: u64, bytes: u64, path: &std::path::Path, t: Instant) {
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "wrote {n} {what} ({dtype}, {bytes} bytes) to {} in {secs:.3} s ({:.0} M values/s)",
        path.display(),
        n as f64 / secs.max(1e-9) / 1e6
    );
}

/// Why `--out` failed: the operation's error, or the file's.
enum Failure {
    Op(Error),
    Io(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Op(e)
    }
}

fn write_file(args: &RandomArgs, rng: &Random, path: &std::path::Path) -> Result<(), Failure> {
    let t = Instant::now();
    let io_err = |e: io::Error| Failure::Io(format!("cannot write {}: {e}", path.display()));
    // bits: streamed, never held in memory.
    if args.op == RandomOp::Bits && other_impl(args)?.is_none() {
        let prepared = width(args, rng).and_then(|w| {
            let k = key(args, rng)?;
            rng.bits_writer(&k, &shape(args, &[])?, w)
        });
        let writer = prepared?;
        // Opened without truncation and cut to size afterwards: rewriting a file in place
        // reuses its cached pages instead of freeing and reallocating them.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io_err)?;
        let is_file = file.metadata().map_err(io_err)?.is_file();
        let bytes = if is_file {
            // The final size up front: every chunk then lands inside the file.
            file.set_len(writer.len() * u64::from(writer.dtype().bits() / 8))
                .map_err(io_err)?;
            let bytes = writer.write_to(&file).map_err(io_err)?;
            file.set_len(bytes).map_err(io_err)?;
            bytes
        } else {
            // A pipe, a terminal, /dev/stdout: no positional writes, so in order.
            writer.write_sequential(&mut &file).map_err(io_err)?
        };
        summary(
            "values",
            writer.dtype().name(),
            writer.len(),
            bytes,
            path,
            t,
        );
        return Ok(());
    }
    let output = compute(args, rng)?;
    let file = File::create(path).map_err(io_err)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let (what, dtype, n, bytes) = match &output {
        Output::Keys(k) => {
            for x in k.key_data() {
                w.write_all(&x.to_le_bytes()).map_err(io_err)?;
            }
            let n = k.key_data().len() as u64;
            ("keys", k.dtype().to_string(), k.len() as u64, 4 * n)
        }
        Output::Values(s) => {
            s.values().write_le(&mut w).map_err(io_err)?;
            let n = s.values().len() as u64;
            let per = match s.values() {
                Values::Bool(_) => 1,
                v => u64::from(v.dtype().bits() / 8),
            };
            ("values", s.dtype().name().to_string(), n, n * per)
        }
    };
    w.flush().map_err(io_err)?;
    summary(what, &dtype, n, bytes, path, t);
    Ok(())
}

/// The options each operation takes (beside `--seed`/`--key`, `--impl`, `--x64`, `--json`,
/// `--out`).
fn accepts(op: RandomOp) -> &'static [&'static str] {
    use RandomOp::*;
    const SHAPED: &[&str] = &["num", "shape", "dtype"];
    match op {
        Key => &[],
        Split => &["num", "shape"],
        FoldIn => &["data"],
        Bits => &["num", "shape", "width", "dtype"],
        Uniform | Randint => &["num", "shape", "dtype", "minval", "maxval"],
        Normal | Exponential | Cauchy | Laplace | Logistic | Maxwell | Rademacher => SHAPED,
        Bernoulli => &["num", "shape", "p"],
        Gumbel => &["num", "shape", "dtype", "mode"],
        Pareto => &["num", "shape", "dtype", "b"],
        Rayleigh => &["num", "shape", "dtype", "scale"],
        Wald => &["num", "shape", "dtype", "mean"],
        Lognormal => &["num", "shape", "dtype", "sigma"],
        WeibullMin => &["num", "shape", "dtype", "scale", "concentration"],
        DoubleSidedMaxwell => &["num", "shape", "dtype", "loc", "scale"],
        Triangular => &["num", "shape", "dtype", "left", "mode", "right"],
        TruncatedNormal => &["num", "shape", "dtype", "lower", "upper"],
        Geometric | GeneralizedNormal => &["num", "shape", "dtype", "p"],
        Categorical => &["num", "shape", "logits", "axis", "replace", "mode"],
        Choice => &["num", "shape", "a", "p", "axis", "replace", "mode"],
        Permutation => &["a", "axis", "independent"],
        Gamma | Loggamma => &["num", "shape", "dtype", "a"],
        Beta => &["num", "shape", "dtype", "a", "b"],
        Dirichlet => &["num", "shape", "dtype", "alpha"],
        Chisquare | T => &["num", "shape", "dtype", "df"],
        F => &["num", "shape", "dtype", "dfnum", "dfden"],
        Ball => &["num", "shape", "dtype", "d", "p"],
        Poisson => &["num", "shape", "dtype", "lam"],
        Binomial | Multinomial => &["num", "shape", "dtype", "n", "p"],
    }
}

/// Refuses an option the operation does not take (`bits --minval`): unusable input.
fn check_options(args: &RandomArgs) -> Result<(), Error> {
    let op = args.op;
    let sa = &args.sampler;
    let options: [(&str, bool); 29] = [
        ("num", args.num.is_some()),
        ("shape", args.shape.is_some()),
        ("data", args.data.is_some()),
        ("width", args.width.is_some()),
        ("dtype", args.dtype.is_some()),
        ("minval", args.minval.is_some()),
        ("maxval", args.maxval.is_some()),
        ("p", args.p.is_some()),
        ("a", sa.a.is_some()),
        ("b", sa.b.is_some()),
        ("scale", sa.scale.is_some()),
        ("concentration", sa.concentration.is_some()),
        ("loc", sa.loc.is_some()),
        ("mean", sa.mean.is_some()),
        ("sigma", sa.sigma.is_some()),
        ("left", sa.left.is_some()),
        ("mode", sa.mode.is_some()),
        ("right", sa.right.is_some()),
        ("lower", sa.lower.is_some()),
        ("upper", sa.upper.is_some()),
        ("lam", sa.lam.is_some()),
        ("n", sa.n.is_some()),
        ("df", sa.df.is_some()),
        ("dfnum", sa.dfnum.is_some()),
        ("dfden", sa.dfden.is_some()),
        ("alpha", sa.alpha.is_some()),
        ("logits", sa.logits.is_some()),
        ("d", sa.d.is_some()),
        ("axis", sa.axis.is_some()),
    ];
    let flags = [
        ("replace", sa.replace.is_some()),
        ("independent", sa.independent),
    ];
    for (name, given) in options.into_iter().chain(flags) {
        if given && !accepts(op).contains(&name) {
            let takes: Vec<String> = RandomOp::value_variants()
                .iter()
                .filter(|o| accepts(**o).contains(&name))
                .map(|o| op_name(*o))
                .collect();
            // The first few, when many operations take it.
            let list = match takes.as_slice() {
                [one] => format!("{one} does"),
                [first @ .., _] if takes.len() > 6 => {
                    format!("{} and {} more do", first[..5].join(", "), takes.len() - 5)
                }
                [rest @ .., last] => format!("{} and {last} do", rest.join(", ")),
                [] => "no operation does".to_string(),
            };
            return Err(invalid(
                &format!("--{name}"),
                format!("{} takes no --{name} ({list})", op_name(op)),
            ));
        }
    }
    Ok(())
}

/// The operation's name as the CLI spells it.
fn op_name(op: RandomOp) -> String {
    op.to_possible_value()
        .map_or_else(|| format!("{op:?}"), |v| v.get_name().to_string())
}

/// Runs `random`; returns the exit code.
pub(crate) fn run(args: &RandomArgs, out: &mut impl Write) -> i32 {
    if let Err(e) = check_options(args) {
        return crate::render::fail(out, &e, args.json);
    }
    let rng = Random::new().x64(args.x64);
    if let Some(path) = &args.out {
        return match write_file(args, &rng, path) {
            Ok(()) => 0,
            Err(Failure::Op(e)) => {
                let _ = write_error(out, &e, args.json);
                render::exit_code(&e)
            }
            Err(Failure::Io(message)) => {
                eprintln!("error: {message}");
                2
            }
        };
    }
    let result = compute(args, &rng);
    let written = match &result {
        Err(e) => write_error(out, e, args.json),
        Ok(o) if args.json => match o {
            Output::Keys(k) => serde_json::to_writer(&mut *out, k),
            Output::Values(s) => serde_json::to_writer(&mut *out, s),
        }
        .map_err(io::Error::other)
        .and_then(|()| out.write_all(b"\n")),
        Ok(o) => write_text(out, o),
    };
    if let Err(e) = written
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("error: cannot write output: {e}");
        return 2;
    }
    result.map_or_else(|e| render::exit_code(&e), |_| 0)
}
