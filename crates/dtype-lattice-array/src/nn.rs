//! `jax.nn`'s functions and pooling, as JAX 0.10.2 builds them (`jax/_src/nn/functions.py`,
//! `jax/_src/ops/special.py`) and as flax.linen pools (`flax/linen/pooling.py`): the same
//! primitives in the same order, JAX's jitted helpers jitted here too (`jit[name=softplus]`,
//! `_one_hot`, `log_softmax`, `standardize`, `_where`, `clip`), and `custom_jvp` where JAX
//! defines a derivative of its own ([`relu`]'s is 0 at 0; `logaddexp`'s inside [`softplus`]),
//! so that values, printed jaxprs and gradients are JAX's.
//!
//! - Activations: [`relu`], [`sigmoid`], [`silu`] (= [`swish`]), [`softplus`], [`gelu`] (the
//!   tanh approximation or the exact `erfc` form).
//! - Normalisations over axes: [`softmax`] and [`log_softmax`] (JAX 0.10.2's default
//!   `softmax` is its `_softmax_deprecated`: the maximum subtracted under `stop_gradient`,
//!   no custom JVP, as `jax_softmax_custom_jvp` is off), [`logsumexp`] (`jax.nn.logsumexp` =
//!   `jax.scipy.special.logsumexp`: scales `b`, `keepdims`, `return_sign`, `where`;
//!   infinities handled as JAX's), [`standardize`].
//! - [`one_hot`].
//! - Pooling over `(batch…, spatial…, features)` arrays: [`max_pool`], [`min_pool`],
//!   [`avg_pool`] (`lax.reduce_window` with `-inf`/`inf`/`0` over `(1,)·batch + window + (1,)`,
//!   a single example getting a batch dimension of one; average pooling divides by the
//!   window's size, or with `count_include_pad = false` by each window's count of real
//!   elements).
//!
//! ```
//! use dtype_lattice_array::{Array, grad, nn, numpy as jnp};
//! let x = Array::from_vec(vec![-1.0f32, 0.0, 2.0]);
//! assert_eq!(nn::relu(&x)?.to_vec::<f32>()?, [0.0, 0.0, 2.0]);
//! // relu's gradient at 0 is 0 (JAX's custom JVP).
//! let g = grad(|x: Array| jnp::sum(nn::relu(&x)?, jnp::Axes::All, false), &x)?;
//! assert_eq!(g.to_vec::<f32>()?, [0.0, 0.0, 1.0]);
//! let p = nn::softmax(&x, -1, None)?;
//! assert!((p.to_vec::<f32>()?.iter().sum::<f32>() - 1.0).abs() < 1e-6);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Value};

use crate::array::{Array, python_scalar_array, scalar_array};
use crate::core::{Param, Params, bind1};
use crate::interpreters::{CustomJvp, stop_gradient};
use crate::jit::jit;
use crate::lax::{self, Padding, ops};
use crate::numpy::{self as jnp, Axes, Family, promote_family};

// ---------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------

fn value_error<T>(msg: String) -> Result<T, Error> {
    Err(Error::refused(Exception::ValueError, msg))
}

/// The rules' default float (`float32`; `float64` with x64).
fn default_float() -> DType {
    DType::Float64.canonicalize(crate::config::rules().options().x64)
}

/// A Python float as JAX passes it to a jitted function: a weakly typed default float.
fn weak_float(v: f64) -> Result<Array, Error> {
    python_scalar_array(Value::Float(v), default_float(), true)
}

/// A Python int as JAX passes it to a jitted function: a weakly typed default int.
fn weak_int(v: i128) -> Result<Array, Error> {
    let int = crate::config::default_int(&crate::config::rules());
    scalar_array(Value::Int(v), int, true)
}

/// `util.canonicalize_axis(axis, ndim)`.
fn canonical_axis(axis: isize, ndim: usize) -> Result<usize, Error> {
    let n = ndim as isize;
    if axis < -n || axis >= n {
        return value_error(format!(
            "axis {axis} is out of bounds for array of dimension {ndim}"
        ));
    }
    Ok(if axis < 0 { axis + n } else { axis } as usize)
}

/// `_reduction_dims(a, axis)`: the axes, canonical, in the order given.
fn reduction_dims(axes: &Axes, ndim: usize) -> Result<Vec<usize>, Error> {
    let Axes::Some(v) = axes else {
        return Ok((0..ndim).collect());
    };
    let dims = v
        .iter()
        .map(|&a| canonical_axis(a, ndim))
        .collect::<Result<Vec<_>, _>>()?;
    let mut seen = dims.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != dims.len() {
        let items: Vec<String> = v.iter().map(isize::to_string).collect();
        let shown = match items.as_slice() {
            [one] => format!("({one},)"),
            _ => format!("({})", items.join(", ")),
        };
        return value_error(format!("duplicate value in 'axis': {shown}"));
    }
    Ok(dims)
}

fn as_i64(dims: &[usize]) -> Vec<i64> {
    dims.iter().map(|&d| d as i64).collect()
}

/// `jnp.where` as `jnp`'s reductions and `jax.nn` call it: `util._where`, a jitted function.
fn where_(condition: &Array, x: &Array, y: &Array) -> Result<Array, Error> {
    jnp::where_jitted(condition, x, y)
}

/// A reduction of [`reduction`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reduce {
    Max,
    Sum,
}

/// The identity of `op` in `dtype` (`_reduction_init_val`): `-inf` (an integer's minimum,
/// `False`) for `max`, 0 for `sum`; strongly typed.
fn identity(op: Reduce, dtype: DType) -> Result<Array, Error> {
    let v = match (op, dtype.kind()) {
        (Reduce::Sum, _) => Value::Int(0),
        (Reduce::Max, Kind::Bool) => Value::Bool(false),
        (Reduce::Max, Kind::SignedInt | Kind::UnsignedInt) => {
            let (min, _) = dtype.int_range().unwrap_or((0, 0));
            Value::Int(min)
        }
        (Reduce::Max, _) => Value::Float(f64::NEG_INFINITY),
    };
    scalar_array(v, dtype, false)
}

/// `jnp`'s `_reduction` of `max` or `sum` over `dims` (in the order given), with `where` (the
/// masked elements replaced by the identity through `_where`), `initial` (combined after the
/// reduction: `max(initial, r)`), `keepdims` (`lax.expand_dims`) and `dtype`. Sums of
/// float16 and bfloat16 accumulate in float32; sums of narrow integers and booleans in the
/// default integer.
fn reduction(
    a: &Array,
    op: Reduce,
    dims: &[usize],
    where_mask: Option<&Array>,
    initial: Option<f64>,
    keepdims: bool,
    dtype: Option<DType>,
) -> Result<Array, Error> {
    if initial.is_none() && op == Reduce::Max {
        if where_mask.is_some() {
            return value_error(
                "reduction operation max does not have an identity, so to use a where mask one \
                 has to specify 'initial'"
                    .into(),
            );
        }
        if dims.iter().any(|&d| a.shape().get(d) == Some(&0)) {
            return value_error(
                "zero-size array to reduction operation max which has no identity".into(),
            );
        }
    }
    let result_dtype = match (dtype, op) {
        (Some(d), _) => d,
        (None, Reduce::Max) => a.dtype(),
        (None, Reduce::Sum) => {
            // `_promote_integer_dtype`: booleans and narrow integers sum as the default
            // integer (unsigned ones as the unsigned integer of its width).
            let int = crate::config::default_int(&crate::config::rules());
            let d = a.dtype();
            match d.kind() {
                Kind::Bool => int,
                Kind::SignedInt if d.bits() < int.bits() => int,
                Kind::UnsignedInt if d.bits() < int.bits() => {
                    if int.bits() == 64 {
                        DType::UInt64
                    } else {
                        DType::UInt32
                    }
                }
                _ => d,
            }
        }
    };
    let computation =
        if op == Reduce::Sum && matches!(result_dtype, DType::Float16 | DType::BFloat16) {
            DType::Float32
        } else {
            result_dtype
        };
    let mut a = ops::convert(a, computation, false)?;
    let prim = match (op, computation) {
        (Reduce::Sum, DType::Bool) => &lax::REDUCE_OR,
        (Reduce::Sum, _) => &lax::REDUCE_SUM,
        (Reduce::Max, _) => &lax::REDUCE_MAX,
    };
    if let Some(w) = where_mask {
        a = where_(w, &a, &identity(op, computation)?)?;
    }
    let mut params = Params::new().with("axes", Param::Ints(as_i64(dims)));
    if std::ptr::eq(prim, &lax::REDUCE_SUM) {
        params = params.with("out_sharding", Param::None);
    }
    let mut r = bind1(prim, &[&a], &params)?;
    if let Some(v) = initial {
        // `lax.convert_element_type(initial, a.dtype)`: a constant (an integer's -inf is its
        // minimum).
        let init = if v == f64::NEG_INFINITY {
            identity(Reduce::Max, computation)?
        } else {
            scalar_array(Value::Float(v), computation, false)?
        };
        r = bind1(&lax::MAX, &[&init, &r], &Params::new())?;
    }
    if keepdims {
        r = lax::expand_dims(&r, &as_i64(dims))?;
    }
    ops::convert(&r, dtype.unwrap_or(result_dtype), false)
}

/// `jnp.mean(x, axis, keepdims=True)` as `jnp` computes it: the sum in the computation dtype
/// (float16 and bfloat16 in float32), divided by the count, then cast back.
fn mean_keepdims(x: &Array, dims: &[usize], where_mask: Option<&Array>) -> Result<Array, Error> {
    let dtype = crate::numpy::family_dtype(&crate::config::rules(), Family::Inexact, x.dtype());
    let comp = if matches!(dtype, DType::Float16 | DType::BFloat16) {
        DType::Float32
    } else {
        dtype
    };
    let n = match where_mask {
        // `_count`: `sum(broadcast_to(where, x.shape), dtype=comp)`, the mask made numeric
        // first (`_cast_to_numeric`: a boolean is an int32, with x64 too).
        Some(w) => {
            let w = crate::numpy::broadcast_to(w.clone(), x.shape())?;
            let w = ops::convert(&w, DType::Int32, false)?;
            reduction(&w, Reduce::Sum, dims, None, None, true, Some(comp))?
        }
        None => {
            let count: usize = dims.iter().map(|&d| x.shape()[d]).product();
            scalar_array(Value::Float(count as f64), comp, false)?
        }
    };
    let total = reduction(x, Reduce::Sum, dims, where_mask, None, true, Some(comp))?;
    let q = bind1(&lax::DIV, &[&total, &n], &Params::new())?;
    ops::convert(&q, dtype, false)
}

// ---------------------------------------------------------------------------------------
// Activations
// ---------------------------------------------------------------------------------------

/// `jax.nn.relu(x)`: `max(x, 0)`, a `custom_jvp` whose derivative is 0 at 0 (`select(x > 0,
/// g, 0)`), the function itself jitted (`custom_jvp_call[name=relu]` of `jit[name=relu]`).
///
/// ```
/// use dtype_lattice_array::{Array, grad, nn};
/// let g = grad(|x: Array| nn::relu(&x), &Array::scalar(0.0f32))?;
/// assert_eq!(g.to_vec::<f32>()?, [0.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// Key arrays and other operands `max` refuses (JAX's `TypeError`).
pub fn relu(x: &Array) -> Result<Array, Error> {
    fn body(x: &Array) -> Result<Array, Error> {
        jit(|x: Array| jnp::maximum(&x, 0)).named("relu").call(x)
    }
    let f = CustomJvp::new(
        |x: Array| body(&x),
        |x: Array, g: Array| {
            let y = body(&x)?;
            let positive = jnp::greater(&x, 0)?;
            let zeros = ops::zeros_like(&g)?;
            Ok((y, ops::select_n(&positive, &[&zeros, &g])?))
        },
    )
    .name("relu")
    .jvp_name("jvp");
    f.call(x)
}

/// `jax.nn.sigmoid(x)`: `lax.logistic(x)`.
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// assert_eq!(nn::sigmoid(&Array::scalar(0.0f32))?.to_vec::<f32>()?, [0.5]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `TypeError` for operands that are not floating or complex.
pub fn sigmoid(x: &Array) -> Result<Array, Error> {
    ops::unary(&lax::LOGISTIC, x)
}

/// `jax.nn.silu(x)` (`swish`): `x * sigmoid(x)`, jitted (`jit[name=silu]`).
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// assert_eq!(nn::silu(&Array::scalar(0.0f32))?.to_vec::<f32>()?, [0.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`sigmoid`].
pub fn silu(x: &Array) -> Result<Array, Error> {
    jit(|x: Array| jnp::multiply(&x, sigmoid(&x)?))
        .named("silu")
        .call(x)
}

/// `jax.nn.swish`, the same function as [`silu`].
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// let x = Array::from_vec(vec![-1.0f32, 2.0]);
/// assert_eq!(nn::swish(&x)?.as_bytes(), nn::silu(&x)?.as_bytes());
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`silu`].
pub fn swish(x: &Array) -> Result<Array, Error> {
    silu(x)
}

/// `lax.logaddexp` of two real floats of one dtype: `max + log1p(exp(-|x1 - x2|))`, or `x1 +
/// x2` where the difference is NaN.
fn logaddexp_body(x1: &Array, x2: &Array) -> Result<Array, Error> {
    let none = Params::new();
    let amax = bind1(&lax::MAX, &[x1, x2], &none)?;
    let delta = ops::sub(x1, x2)?;
    let isnan = bind1(&lax::NE, &[&delta, &delta], &none)?;
    let sum = ops::add(x1, x2)?;
    let e = ops::unary(&lax::EXP, &ops::neg(&ops::unary(&lax::ABS, &delta)?)?)?;
    let y = ops::add(&amax, &ops::unary(&lax::LOG1P, &e)?)?;
    ops::select_n(&isnan, &[&y, &sum])
}

/// `jnp.logaddexp(x1, x2)`: the operands promoted to an inexact dtype, then `lax.logaddexp`,
/// a `custom_jvp` (`_logaddexp_jvp`: `t1·exp(x1' − y') + t2·exp(x2' − y')`, `v'` being `v`
/// with `+inf` replaced by 0).
fn logaddexp<'a>(
    x1: impl Into<jnp::ArrayLike<'a>>,
    x2: impl Into<jnp::ArrayLike<'a>>,
) -> Result<Array, Error> {
    let v = promote_family(None, Family::Inexact, &[x1.into(), x2.into()])?;
    if v[0].dtype().kind() != Kind::Float {
        return value_error(format!(
            "logaddexp requires floating-point or complex inputs; got {}",
            v[0].dtype()
        ));
    }
    let f = CustomJvp::new(
        |(a, b): (Array, Array)| logaddexp_body(&a, &b),
        |(a, b): (Array, Array), (ta, tb): (Array, Array)| {
            let y = logaddexp_body(&a, &b)?;
            let replace_inf = |v: &Array| -> Result<Array, Error> {
                let inf = ops::eq(v, &ops::konst(v, f64::INFINITY)?)?;
                ops::select_n(&inf, &[v, &ops::zeros_like(v)?])
            };
            let part = |t: &Array, x: &Array| -> Result<Array, Error> {
                let d = ops::sub(&replace_inf(x)?, &replace_inf(&y)?)?;
                ops::mul(t, &ops::unary(&lax::EXP, &d)?)
            };
            let t = ops::add(&part(&ta, &a)?, &part(&tb, &b)?)?;
            Ok((y, t))
        },
    )
    .name("logaddexp")
    .jvp_name("_logaddexp_jvp");
    f.call(&(v[0].clone(), v[1].clone()))
}

/// `jax.nn.softplus(x)`: `jnp.logaddexp(x, 0)` (`log(1 + exp(x))` without overflow), jitted
/// (`jit[name=softplus]`), its derivative `logaddexp`'s own.
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// let y = nn::softplus(&Array::from_vec(vec![0.0f32, 100.0]))?;
/// assert_eq!(y.to_vec::<f32>()?, [std::f32::consts::LN_2, 100.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// Operands that are not numbers (integers and booleans are promoted to the default float).
pub fn softplus(x: &Array) -> Result<Array, Error> {
    jit(|x: Array| logaddexp(&x, 0)).named("softplus").call(x)
}

/// `jax.nn.gelu(x, approximate)`: with `approximate`, `x · 0.5 · (1 + tanh(√(2/π) · (x +
/// 0.044715 x³)))`; otherwise `0.5 x · erfc(-x / √2)` (then copied, as `jnp.array` does), the
/// constants `np.sqrt(2 / np.pi)` and `np.sqrt(0.5)` rounded to `x`'s dtype. Integers are
/// promoted to the default float first.
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// let x = Array::from_vec(vec![0.0f32, 3.0]);
/// let y = nn::gelu(&x, false)?.to_vec::<f32>()?;
/// assert_eq!(y[0], 0.0);
/// assert!((y[1] - 2.99595).abs() < 1e-5);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// Operands that are not numbers.
pub fn gelu(x: &Array, approximate: bool) -> Result<Array, Error> {
    let x = promote_family(None, Family::Inexact, &[x.into()])?.remove(0);
    let dt = x.dtype();
    if approximate {
        let sqrt_2_over_pi =
            scalar_array(Value::Float((2.0 / std::f64::consts::PI).sqrt()), dt, false)?;
        let cube = jnp::power(&x, 3)?;
        let inner = jnp::add(&x, jnp::multiply(0.044715, &cube)?)?;
        let t = jnp::tanh(jnp::multiply(&sqrt_2_over_pi, &inner)?)?;
        let cdf = jnp::multiply(0.5, jnp::add(1.0, &t)?)?;
        jnp::multiply(&x, &cdf)
    } else {
        let sqrt_half = scalar_array(Value::Float(0.5f64.sqrt()), dt, false)?;
        let half_x = jnp::multiply(0.5, &x)?;
        let e = ops::unary(&lax::ERFC, &jnp::multiply(jnp::negative(&x)?, &sqrt_half)?)?;
        let y = jnp::multiply(&half_x, &e)?;
        bind1(&lax::COPY, &[&y], &Params::new())
    }
}

// ---------------------------------------------------------------------------------------
// softmax, log_softmax, logsumexp, standardize
// ---------------------------------------------------------------------------------------

/// `jax.nn.softmax(x, axis, where)`: `exp(x - max) / sum(exp(x - max))` over `axis` (an
/// axis, several, or [`Axes::All`]), the maximum (from `-inf`) under `stop_gradient`, as JAX
/// 0.10.2 computes it by default (`jax_softmax_custom_jvp` off: no custom JVP; gradients
/// differentiate the formula). With `where`, masked elements are left out of the maximum and
/// the sum and come out 0.
///
/// A row holding `+inf` gives NaNs; a row of `-inf` gives NaNs (`0 / 0`), as JAX's.
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// let x = Array::from_vec(vec![0.0f32, 0.0, f32::NEG_INFINITY]);
/// assert_eq!(nn::softmax(&x, -1, None)?.to_vec::<f32>()?, [0.5, 0.5, 0.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for an axis out of range or repeated; shapes of `where` that do not
/// broadcast.
pub fn softmax(
    x: &Array,
    axis: impl Into<Axes>,
    where_mask: Option<&Array>,
) -> Result<Array, Error> {
    let dims = reduction_dims(&axis.into(), x.ndim())?;
    let x_max = reduction(
        x,
        Reduce::Max,
        &dims,
        where_mask,
        Some(f64::NEG_INFINITY),
        true,
        None,
    )?;
    let x_safe = match where_mask {
        None => x.clone(),
        Some(w) => where_(w, x, &weak_float(f64::NEG_INFINITY)?)?,
    };
    let unnormalized = jnp::exp(jnp::subtract(&x_safe, &stop_gradient(&x_max)?)?)?;
    let total = reduction(
        &unnormalized,
        Reduce::Sum,
        &dims,
        where_mask,
        None,
        true,
        None,
    )?;
    let result = jnp::true_divide(&unnormalized, &total)?;
    match where_mask {
        None => Ok(result),
        Some(w) => where_(w, &result, &weak_int(0)?),
    }
}

/// `jax.nn.log_softmax(x, axis, where)`: `shifted - log(sum(exp(shifted)))` where `shifted =
/// x - stop_gradient(max(x))`, jitted (`jit[name=log_softmax]`); masked elements (`where`)
/// come out `-inf`.
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// let x = Array::from_vec(vec![1.0f32, 1.0]);
/// assert_eq!(nn::log_softmax(&x, -1, None)?.to_vec::<f32>()?, [-std::f32::consts::LN_2; 2]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`softmax`].
pub fn log_softmax(
    x: &Array,
    axis: impl Into<Axes>,
    where_mask: Option<&Array>,
) -> Result<Array, Error> {
    let axes = axis.into();
    jit(move |(x, w): (Array, Option<Array>)| {
        let w = w.as_ref();
        let dims = reduction_dims(&axes, x.ndim())?;
        let x_max = reduction(
            &x,
            Reduce::Max,
            &dims,
            w,
            Some(f64::NEG_INFINITY),
            true,
            None,
        )?;
        let x_safe = match w {
            None => x.clone(),
            Some(w) => where_(w, &x, &weak_float(f64::NEG_INFINITY)?)?,
        };
        let shifted = jnp::subtract(&x_safe, &stop_gradient(&x_max)?)?;
        let e = jnp::exp(&shifted)?;
        let lse = jnp::log(reduction(&e, Reduce::Sum, &dims, w, None, true, None)?)?;
        let result = jnp::subtract(&shifted, &lse)?;
        match w {
            None => Ok(result),
            Some(w) => where_(w, &result, &weak_float(f64::NEG_INFINITY)?),
        }
    })
    .named("log_softmax")
    .call(&(x.clone(), where_mask.cloned()))
}

/// The options of [`logsumexp`] beyond the array and the axes (`jax.nn.logsumexp`'s keyword
/// arguments), a builder.
///
/// ```
/// use dtype_lattice_array::{Array, nn::LogSumExp};
/// let a = Array::from_vec(vec![0.0f32, 0.0]);
/// let b = Array::from_vec(vec![1.0f32, -3.0]);
/// let (out, sign) = LogSumExp::new().b(&b).apply_with_sign(&a, -1)?;
/// assert_eq!(out.to_vec::<f32>()?, [std::f32::consts::LN_2]);
/// assert_eq!(sign.to_vec::<f32>()?, [-1.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct LogSumExp {
    b: Option<Array>,
    keepdims: bool,
    where_mask: Option<Array>,
}

impl LogSumExp {
    /// No scales, no mask, reduced axes dropped.
    pub fn new() -> LogSumExp {
        LogSumExp::default()
    }

    /// `b`: scales of the exponentials (broadcast against the array; 0 leaves an element out,
    /// a negative scale can make a sum negative: NaN, or its sign with
    /// [`LogSumExp::apply_with_sign`]).
    #[must_use]
    pub fn b(mut self, b: &Array) -> LogSumExp {
        self.b = Some(b.clone());
        self
    }

    /// `keepdims`: the reduced axes kept, of size 1.
    #[must_use]
    pub fn keepdims(mut self, keep: bool) -> LogSumExp {
        self.keepdims = keep;
        self
    }

    /// `where`: the elements to include.
    #[must_use]
    pub fn where_mask(mut self, mask: &Array) -> LogSumExp {
        self.where_mask = Some(mask.clone());
        self
    }

    /// `logsumexp(a, axis, ...)` (`return_sign=False`).
    ///
    /// # Errors
    ///
    /// As [`logsumexp`].
    pub fn apply(&self, a: &Array, axis: impl Into<Axes>) -> Result<Array, Error> {
        self.run(a, &axis.into(), false).map(|(out, _)| out)
    }

    /// `logsumexp(a, axis, ..., return_sign=True)`: the logarithm of the sums' magnitudes
    /// and their signs.
    ///
    /// # Errors
    ///
    /// As [`logsumexp`].
    pub fn apply_with_sign(
        &self,
        a: &Array,
        axis: impl Into<Axes>,
    ) -> Result<(Array, Array), Error> {
        self.run(a, &axis.into(), true)
    }

    fn run(&self, a: &Array, axis: &Axes, return_sign: bool) -> Result<(Array, Array), Error> {
        let where_mask = self.where_mask.as_ref();
        let mut a = a.clone();
        if let Some(w) = where_mask {
            a = where_(w, &a, &weak_int(0)?)?;
        }
        let (a, b) = match &self.b {
            Some(b) => {
                let mut v = promote_family(None, Family::Inexact, &[(&a).into(), b.into()])?;
                let b = v.pop().expect("two");
                let a = v.pop().expect("two");
                let nonzero = jnp::not_equal(&b, 0)?;
                (
                    where_(&nonzero, &a, &weak_float(f64::NEG_INFINITY)?)?,
                    Some(b),
                )
            }
            None => (
                promote_family(None, Family::Inexact, &[(&a).into()])?.remove(0),
                None,
            ),
        };
        let complex = a.dtype().kind() == Kind::Complex;
        let dims = reduction_dims(axis, a.ndim())?;
        let real = if complex {
            ops::unary(&lax::REAL, &a)?
        } else {
            a.clone()
        };
        let amax = reduction(
            &real,
            Reduce::Max,
            &dims,
            where_mask,
            Some(f64::NEG_INFINITY),
            self.keepdims,
            None,
        )?;
        let finite = ops::unary(&lax::IS_FINITE, &amax)?;
        let zeros = full_like_zero(&amax)?;
        let amax = stop_gradient(&ops::select_n(&finite, &[&zeros, &amax])?)?;
        let with_dims = if self.keepdims {
            amax.clone()
        } else {
            lax::expand_dims(&amax, &as_i64(&dims))?
        };
        let with_dims = ops::convert(&with_dims, a.dtype(), false)?;
        let mut exp_a = ops::unary(&lax::EXP, &ops::sub(&a, &with_dims)?)?;
        if let Some(b) = &b {
            exp_a = ops::mul(&exp_a, b)?;
        }
        let mut sumexp = reduction(
            &exp_a,
            Reduce::Sum,
            &dims,
            where_mask,
            None,
            self.keepdims,
            None,
        )?;
        let sign = ops::unary(&lax::SIGN, &sumexp)?;
        if return_sign || !complex {
            sumexp = jnp::abs(&sumexp)?;
        }
        let amax = ops::convert(&amax, sumexp.dtype(), false)?;
        let mut out = ops::add(&ops::unary(&lax::LOG, &sumexp)?, &amax)?;
        if return_sign {
            return Ok((out, sign));
        }
        if b.is_some() && !complex {
            let negative = jnp::less(&sign, 0)?;
            let nan = scalar_array(Value::Float(f64::NAN), out.dtype(), false)?;
            out = where_(&negative, &nan, &out)?;
        }
        Ok((out, sign))
    }
}

/// `lax.full_like(x, 0)`: zeros of `x`'s shape and dtype (weak if `x` is), a literal for a
/// 0-d `x`.
fn full_like_zero(x: &Array) -> Result<Array, Error> {
    let zero = scalar_array(Value::Int(0), x.dtype(), x.weak_type())?;
    if x.ndim() == 0 {
        return Ok(zero);
    }
    let params = Params::new()
        .with("shape", lax::ints(x.shape().iter().copied()))
        .with("broadcast_dimensions", Param::Ints(Vec::new()))
        .with("sharding", Param::None);
    bind1(&lax::BROADCAST_IN_DIM, &[&zero], &params)
}

/// `jax.nn.logsumexp(a, axis)` (`jax.scipy.special.logsumexp`): `log(sum(exp(a)))` over
/// `axis` computed as `log(sum(exp(a - amax))) + amax`, `amax` the maximum where it is finite
/// (else 0) under `stop_gradient`; `-inf` for a row of `-inf`, `inf` with an `inf`, NaN with
/// a NaN. Integers are promoted to the default float. [`LogSumExp`] adds scales `b`,
/// `keepdims`, `where` and `return_sign`.
///
/// ```
/// use dtype_lattice_array::{Array, nn, numpy::Axes};
/// let x = Array::from_vec(vec![f32::NEG_INFINITY, f32::NEG_INFINITY]);
/// assert_eq!(nn::logsumexp(&x, Axes::All)?.to_vec::<f32>()?, [f32::NEG_INFINITY]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for an axis out of range or repeated; operands that are not numbers.
pub fn logsumexp(a: &Array, axis: impl Into<Axes>) -> Result<Array, Error> {
    LogSumExp::new().apply(a, axis)
}

/// `jax.nn.standardize(x, axis, mean, variance, epsilon)`: `(x - mean) · rsqrt(variance +
/// epsilon)`, the mean `jnp.mean(x, axis, keepdims=True)` and the variance `mean(x²) -
/// mean²` clipped at 0 (JAX's default "fast" algorithm) unless given; jitted
/// (`jit[name=standardize]`, `epsilon` traced). [`Standardize`] adds `where` and the
/// algorithm.
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// let x = Array::from_vec(vec![1.0f32, 3.0]);
/// let y = nn::standardize(&x, -1, None, None, 0.0)?;
/// assert_eq!(y.to_vec::<f32>()?, [-1.0, 1.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for an axis out of range or repeated; shapes that do not broadcast.
pub fn standardize(
    x: &Array,
    axis: impl Into<Axes>,
    mean: Option<&Array>,
    variance: Option<&Array>,
    epsilon: f64,
) -> Result<Array, Error> {
    let mut s = Standardize::new().epsilon(epsilon);
    if let Some(m) = mean {
        s = s.mean(m);
    }
    if let Some(v) = variance {
        s = s.variance(v);
    }
    s.apply(x, axis)
}

/// How [`Standardize`] computes a variance it is not given (`algorithm=`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum VarianceAlgorithm {
    /// `"fast"` (JAX's default): `mean(x²) - mean(x)²`, clipped at 0.
    #[default]
    Fast,
    /// `"stable"`: the two-pass `mean((x - mean(x))²)`.
    Stable,
}

impl std::str::FromStr for VarianceAlgorithm {
    type Err = Error;

    /// `"fast"` or `"stable"`; anything else is JAX's `ValueError`.
    fn from_str(s: &str) -> Result<VarianceAlgorithm, Error> {
        match s {
            "fast" => Ok(VarianceAlgorithm::Fast),
            "stable" => Ok(VarianceAlgorithm::Stable),
            _ => value_error(format!(
                "Unknown algorithm '{s}'. Expected 'fast' or 'stable'."
            )),
        }
    }
}

impl std::fmt::Display for VarianceAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            VarianceAlgorithm::Fast => "fast",
            VarianceAlgorithm::Stable => "stable",
        })
    }
}

/// `jax.nn.standardize` with every argument: a given `mean` and `variance`, `epsilon`
/// (default `1e-5`), a `where` mask (the elements the mean and variance count:
/// `jnp.mean(x, where=where)`, whose count is the mask's sum) and the variance's
/// `algorithm`.
///
/// ```
/// use dtype_lattice_array::{Array, nn::{Standardize, VarianceAlgorithm}};
/// let x = Array::from_vec(vec![1.0f32, 3.0, 100.0]);
/// let mask = Array::from_vec(vec![true, true, false]);
/// let y = Standardize::new()
///     .epsilon(0.0)
///     .where_mask(&mask)
///     .algorithm(VarianceAlgorithm::Stable)
///     .apply(&x, -1)?;
/// assert_eq!(y.to_vec::<f32>()?, [-1.0, 1.0, 98.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Standardize {
    mean: Option<Array>,
    variance: Option<Array>,
    epsilon: f64,
    where_mask: Option<Array>,
    algorithm: VarianceAlgorithm,
}

impl Default for Standardize {
    fn default() -> Standardize {
        Standardize {
            mean: None,
            variance: None,
            epsilon: 1e-5,
            where_mask: None,
            algorithm: VarianceAlgorithm::Fast,
        }
    }
}

impl Standardize {
    /// JAX's defaults: mean and variance computed, `epsilon=1e-5`, no mask, "fast".
    pub fn new() -> Standardize {
        Standardize::default()
    }

    /// The mean to subtract (broadcast against the array).
    #[must_use]
    pub fn mean(mut self, mean: &Array) -> Standardize {
        self.mean = Some(mean.clone());
        self
    }

    /// The variance to divide by (its square root).
    #[must_use]
    pub fn variance(mut self, variance: &Array) -> Standardize {
        self.variance = Some(variance.clone());
        self
    }

    /// `epsilon`, added to the variance.
    #[must_use]
    pub fn epsilon(mut self, epsilon: f64) -> Standardize {
        self.epsilon = epsilon;
        self
    }

    /// `where`: the elements the mean and variance are computed over.
    #[must_use]
    pub fn where_mask(mut self, mask: &Array) -> Standardize {
        self.where_mask = Some(mask.clone());
        self
    }

    /// `algorithm`: how a variance not given is computed.
    #[must_use]
    pub fn algorithm(mut self, algorithm: VarianceAlgorithm) -> Standardize {
        self.algorithm = algorithm;
        self
    }

    /// `standardize(x, axis, ...)`.
    ///
    /// # Errors
    ///
    /// As [`standardize`].
    pub fn apply(&self, x: &Array, axis: impl Into<Axes>) -> Result<Array, Error> {
        let axes = axis.into();
        let algorithm = self.algorithm;
        let eps = weak_float(self.epsilon)?;
        // JAX's jit flattens the keyword arguments by name: epsilon, mean, variance, where.
        type Args = (Array, Array, Option<Array>, Option<Array>, Option<Array>);
        jit(move |(x, eps, mean, variance, mask): Args| {
            let dims = reduction_dims(&axes, x.ndim())?;
            let mask = mask.as_ref();
            let mean = match mean {
                Some(m) => m,
                None => mean_keepdims(&x, &dims, mask)?,
            };
            let variance = match (variance, algorithm) {
                (Some(v), _) => v,
                (None, VarianceAlgorithm::Fast) => {
                    let m2 = mean_keepdims(&jnp::square(&x)?, &dims, mask)?;
                    let v = jnp::subtract(&m2, jnp::square(&mean)?)?;
                    clip_low(&v, &weak_int(0)?)?
                }
                (None, VarianceAlgorithm::Stable) => {
                    let d = jnp::square(&jnp::subtract(&x, &mean)?)?;
                    mean_keepdims(&d, &dims, mask)?
                }
            };
            let centred = jnp::subtract(&x, &mean)?;
            let scale = ops::unary(&lax::RSQRT, &jnp::add(&variance, &eps)?)?;
            jnp::multiply(&centred, &scale)
        })
        .named("standardize")
        .call(&(
            x.clone(),
            eps,
            self.mean.clone(),
            self.variance.clone(),
            self.where_mask.clone(),
        ))
    }
}

/// `jnp.clip(x, lo)`: `maximum(lo, x)`, jitted (`jit[name=clip]`).
fn clip_low(x: &Array, lo: &Array) -> Result<Array, Error> {
    jnp::clip(x, Some(lo.into()), None)
}

// ---------------------------------------------------------------------------------------
// one_hot
// ---------------------------------------------------------------------------------------

/// `jax.nn.one_hot(x, num_classes, dtype, axis)`: `x == iota` along a new axis `axis` of
/// `num_classes` (negative counts from the end of the result), cast to `dtype` (default: the
/// default float); labels outside `[0, num_classes)` (negative ones too) give rows of
/// zeros. Jitted (`jit[name=_one_hot]`).
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// let y = nn::one_hot(&Array::from_vec(vec![1i32, -1, 3]), 3, None, -1)?;
/// assert_eq!(y.to_vec::<f32>()?, [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `ValueError` for an axis out of range of the result's rank.
pub fn one_hot(
    x: &Array,
    num_classes: usize,
    dtype: Option<DType>,
    axis: isize,
) -> Result<Array, Error> {
    let dtype = dtype
        .unwrap_or_else(default_float)
        .canonicalize(crate::config::rules().options().x64);
    jit(move |x: Array| {
        let pos = canonical_axis(axis, x.ndim() + 1)?;
        let lhs = lax::expand_dims(&x, &[axis as i64])?;
        let mut shape = vec![1i64; x.ndim()];
        shape.insert(pos, num_classes as i64);
        let rhs = bind1(
            &lax::IOTA,
            &[],
            &Params::new()
                .with("dimension", Param::Int(pos as i64))
                .with("dtype", Param::DType(x.dtype()))
                .with("shape", Param::Ints(shape))
                .with("sharding", Param::None),
        )?;
        jnp::astype(jnp::equal(&lhs, &rhs)?, dtype)
    })
    .named("_one_hot")
    .call(x)
}

// ---------------------------------------------------------------------------------------
// Pooling (flax.linen.pooling)
// ---------------------------------------------------------------------------------------

/// Which monoid a pool folds.
#[derive(Clone, Copy)]
enum Pool {
    Max,
    Min,
    Sum,
}

/// flax's `pool(inputs, init, reduce_fn, window_shape, strides, padding)`: `lax.reduce_window`
/// over `(1,)·batch + window + (1,)` (a single example, with no batch dimension, gets one of
/// size 1 and loses it after), the padding resolved by `lax.padtype_to_pads` over the whole
/// shape, or explicit pairs with `(0, 0)` for the batch and feature dimensions; the monoid's
/// primitive (`reduce_window_max`, `_min`, `_sum`).
fn pool(
    x: &Array,
    kind: Pool,
    window_shape: &[usize],
    strides: Option<&[usize]>,
    padding: &Padding,
) -> Result<Array, Error> {
    let n = window_shape.len();
    let strides: Vec<usize> = strides.map_or_else(|| vec![1; n], <[usize]>::to_vec);
    if strides.len() != n {
        return value_error(format!(
            "len({}) must equal len({})",
            crate::array::py_shape(window_shape),
            crate::array::py_shape(&strides)
        ));
    }
    if x.ndim() < n + 1 {
        return value_error(format!(
            "pooling needs an input of rank at least {} for a window of rank {n}, got shape {}",
            n + 1,
            crate::array::py_shape(x.shape())
        ));
    }
    let batch = x.ndim() - (n + 1);
    let mut dims: Vec<usize> = vec![1; batch];
    dims.extend_from_slice(window_shape);
    dims.push(1);
    let mut st: Vec<usize> = vec![1; batch];
    st.extend_from_slice(&strides);
    st.push(1);
    let single = batch == 0;
    let input = if single {
        dims.insert(0, 1);
        st.insert(0, 1);
        jnp::index(x, &[jnp::Index::NewAxis])?
    } else {
        x.clone()
    };
    let pads = match padding {
        Padding::Explicit(p) => {
            if p.len() != n {
                return value_error(format!(
                    "padding {} must specify pads for same number of dims as window_shape {}",
                    Param::Pairs(p.clone()),
                    crate::array::py_shape(window_shape)
                ));
            }
            let lead = input.ndim() - n - 1;
            let mut all = vec![(0, 0); lead];
            all.extend_from_slice(p);
            all.push((0, 0));
            all
        }
        other => lax::padtype_to_pads(input.shape(), &dims, &as_i64(&st), other)?,
    };
    let prim = match kind {
        Pool::Max => &lax::REDUCE_WINDOW_MAX,
        Pool::Min => &lax::REDUCE_WINDOW_MIN,
        Pool::Sum => &lax::REDUCE_WINDOW_SUM,
    };
    let ones = Param::Ints(vec![1; dims.len()]);
    let params = Params::new()
        .with("base_dilation", ones.clone())
        .with("padding", Param::Pairs(pads))
        .with("window_dilation", ones)
        .with("window_dimensions", Param::Ints(as_i64(&dims)))
        .with("window_strides", Param::Ints(as_i64(&st)));
    let y = bind1(prim, &[&input], &params)?;
    if single {
        bind1(
            &lax::SQUEEZE,
            &[&y],
            &Params::new().with("dimensions", Param::Ints(vec![0])),
        )
    } else {
        Ok(y)
    }
}

/// `flax.linen.max_pool(x, window_shape, strides, padding)`: the maximum of each window over
/// an input of shape `(batch…, spatial…, features)` (or `(spatial…, features)`, a single
/// example); `strides` default to ones; padding `'SAME'`, `'SAME_LOWER'`, `'VALID'` or pairs
/// per spatial dimension (padded elements never win: `reduce_window_max` pads with `-inf`).
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// let x = Array::from_shape_vec(&[1, 2, 2, 1], vec![1.0f32, 4.0, 3.0, 2.0])?;
/// let y = nn::max_pool(&x, &[2, 2], None, "VALID")?;
/// assert_eq!(y.to_vec::<f32>()?, [4.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// `ValueError` where flax asserts (strides of another rank than the window, an input of too
/// small a rank, explicit padding of another rank); JAX's `RuntimeError` for an unknown
/// padding string; the primitive's refusals.
pub fn max_pool(
    x: &Array,
    window_shape: &[usize],
    strides: Option<&[usize]>,
    padding: impl Into<Padding>,
) -> Result<Array, Error> {
    pool(x, Pool::Max, window_shape, strides, &padding.into())
}

/// `flax.linen.min_pool(x, window_shape, strides, padding)`: as [`max_pool`], the minimum.
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// let x = Array::from_shape_vec(&[1, 2, 2, 1], vec![1.0f32, 4.0, 3.0, 2.0])?;
/// assert_eq!(nn::min_pool(&x, &[2, 2], None, "VALID")?.to_vec::<f32>()?, [1.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`max_pool`].
pub fn min_pool(
    x: &Array,
    window_shape: &[usize],
    strides: Option<&[usize]>,
    padding: impl Into<Padding>,
) -> Result<Array, Error> {
    pool(x, Pool::Min, window_shape, strides, &padding.into())
}

/// `flax.linen.avg_pool(x, window_shape, strides, padding, count_include_pad)`: each
/// window's sum (`reduce_window_sum`) divided by the window's size (`count_include_pad`:
/// padding counts; NumPy's int64 size, so integers average as floats), or by the number of
/// real elements in it (a pool of ones of the default float dtype, broadcast over the
/// features).
///
/// ```
/// use dtype_lattice_array::{Array, nn};
/// let x = Array::from_shape_vec(&[1, 1, 3, 1], vec![2.0f32, 4.0, 6.0])?;
/// let all = nn::avg_pool(&x, &[1, 2], None, "SAME", true)?;
/// assert_eq!(all.to_vec::<f32>()?, [3.0, 5.0, 3.0]);
/// let real = nn::avg_pool(&x, &[1, 2], None, "SAME", false)?;
/// assert_eq!(real.to_vec::<f32>()?, [3.0, 5.0, 6.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`max_pool`].
pub fn avg_pool(
    x: &Array,
    window_shape: &[usize],
    strides: Option<&[usize]>,
    padding: impl Into<Padding>,
    count_include_pad: bool,
) -> Result<Array, Error> {
    let padding = padding.into();
    let y = pool(x, Pool::Sum, window_shape, strides, &padding)?;
    if count_include_pad {
        // `y / np.prod(window_shape)`: a NumPy int64 (strongly typed), promoted with `y`
        // into an inexact dtype, converted while tracing (a constant).
        let size: usize = window_shape.iter().product();
        let rules = crate::config::rules();
        let int = DType::Int64.canonicalize(rules.options().x64);
        let operands = [
            dtype_lattice::Operand::Array {
                dtype: y.dtype(),
                weak: y.weak_type(),
            },
            dtype_lattice::Operand::Array {
                dtype: int,
                weak: false,
            },
        ];
        let p = rules.promoted(&operands)?;
        let dt = crate::numpy::family_dtype(&rules, Family::Inexact, p.dtype);
        let y = ops::convert(&y, dt, false)?;
        let n = scalar_array(Value::Int(size as i128), dt, false)?;
        return jnp::true_divide(&y, &n);
    }
    let mut div_shape: Vec<usize> = x.shape()[..x.ndim() - 1].to_vec();
    div_shape.push(1);
    if div_shape.len() >= 2 && div_shape.len() - 2 == window_shape.len() {
        div_shape[0] = 1;
    }
    let ones = jnp::ones(&div_shape, default_float())?;
    let counts = pool(&ones, Pool::Sum, window_shape, strides, &padding)?;
    jnp::true_divide(&y, &counts)
}
