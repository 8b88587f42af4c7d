//! `jax.experimental.ode.odeint`: ordinary differential equations integrated with the
//! Dormand–Prince method (the 5th-order Runge–Kutta step with its embedded 4th-order error
//! estimate, "dopri5") at an adaptive step size, its solution read at the requested times
//! through the 4th-order polynomial each step fits, and differentiated by the adjoint method:
//! the reverse pass integrates the augmented system (the state, its cotangent, the time's and
//! the arguments' cotangents) backward in time between the requested times.
//!
//! The algorithm is JAX 0.10's, step for step: Hairer, Nørsett and Wanner's initial step size,
//! the root-mean-square error ratio, the step-size controller (safety 0.9, growth at most 10,
//! shrinking at least to 0.2 after a rejected step), a [`while_loop`] of steps per requested
//! time inside a [`scan`] over the times (the six stages of a step unrolled: JAX's `fori_loop`
//! of six iterations, the same operations on the same values), and a [`CustomVjp`] whose
//! backward pass is a `scan` over the times in reverse with a solve of the augmented system
//! in each step. Float64 solutions and gradients agree with JAX's to about 1e-14 relative
//! (XLA's fusions aside, the same operations in the same order); float32 ones to about 1e-5,
//! as much as XLA's compiled float32 differs from JAX's own op-by-op evaluation.

use std::sync::Arc;

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Value};

use crate::array::{Array, ShapedArray};
use crate::core::jaxpr::{ClosedJaxpr, Jaxpr};
use crate::core::{Param, Params, Pytree, bind1};
use crate::interpreters::control::{scan, while_loop};
use crate::interpreters::stage::trace_avals;
use crate::interpreters::{CustomVjp, vjp};
use crate::numpy::{self as jnp, ArrayLike, Axes, Family, Index};

/// The tolerances and limits of a solve ([`odeint`]'s keyword arguments in JAX): fields, and
/// builder methods of the same names.
///
/// ```
/// use dtype_lattice_array::ode::Options;
/// let o = Options::new().rtol(1e-6).atol(1e-9).mxstep(500).hmax(0.1);
/// assert_eq!((o.rtol, o.atol, o.mxstep, o.hmax), (1e-6, 1e-9, Some(500), 0.1));
/// let jax = Options::default(); // rtol=1.4e-8, atol=1.4e-8, mxstep=inf, hmax=inf
/// assert_eq!((jax.rtol, jax.mxstep, jax.hmax), (1.4e-8, None, f64::INFINITY));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// The relative local error tolerance.
    pub rtol: f64,
    /// The absolute local error tolerance.
    pub atol: f64,
    /// The largest number of steps (accepted or rejected) taken towards each requested time
    /// (`None`: unlimited, JAX's `inf`); past it the solution is read from the last step's
    /// polynomial, as JAX's is.
    pub mxstep: Option<i64>,
    /// The largest step size (infinite by default).
    pub hmax: f64,
}

impl Default for Options {
    /// JAX's defaults: `rtol=1.4e-8, atol=1.4e-8, mxstep=inf, hmax=inf`.
    fn default() -> Options {
        Options {
            rtol: 1.4e-8,
            atol: 1.4e-8,
            mxstep: None,
            hmax: f64::INFINITY,
        }
    }
}

impl Options {
    /// JAX's defaults (see [`Options::default`]).
    pub fn new() -> Options {
        Options::default()
    }

    /// With the relative tolerance `rtol`.
    #[must_use]
    pub fn rtol(mut self, rtol: f64) -> Options {
        self.rtol = rtol;
        self
    }

    /// With the absolute tolerance `atol`.
    #[must_use]
    pub fn atol(mut self, atol: f64) -> Options {
        self.atol = atol;
        self
    }

    /// With at most `mxstep` steps per requested time.
    #[must_use]
    pub fn mxstep(mut self, mxstep: i64) -> Options {
        self.mxstep = Some(mxstep);
        self
    }

    /// With steps of at most `hmax`.
    #[must_use]
    pub fn hmax(mut self, hmax: f64) -> Options {
        self.hmax = hmax;
        self
    }

    /// `mxstep` as the Python value JAX compares the step count with.
    fn mxstep_value(&self) -> Value {
        match self.mxstep {
            Some(n) => Value::Int(i128::from(n)),
            None => Value::Float(f64::INFINITY),
        }
    }
}

/// `jax.experimental.ode.odeint(func, y0, t, *args, rtol, atol, mxstep, hmax)`: the solution
/// of `dy/dt = func(y, t, args)` with `y(t[0]) = y0` at each time of `ts` (strictly
/// increasing), as a pytree of `y0`'s structure whose leaves have a new leading axis of
/// `ts`' length.
///
/// `y0` and the result of `func` are flattened into one vector (JAX's `ravel_pytree`: leaves
/// of different dtypes promoted to a common one); `args` holds the values the dynamics depend
/// on that are to be differentiated. The solve is a `scan` of `while_loop`s (so it runs under
/// [`jit`](crate::jit()) and [`vmap`](crate::vmap)), and a custom-VJP function of `(y0, ts,
/// args)`: [`grad`](crate::grad) and [`vjp`] integrate the adjoint system
/// backward; forward-mode differentiation ([`jvp`](crate::jvp)) is refused, as JAX refuses
/// it. `func` is traced once into a jaxpr (JAX's `closure_convert`): the values of an
/// enclosing transformation it captures are differentiated too, as if they were in `args`.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, grad, numpy as jnp};
/// use dtype_lattice_array::ode::{Options, odeint};
/// // dy/dt = -k y: y(t) = exp(-k t).
/// let decay = |y: &Array, _t: &Array, k: &Array| jnp::negative(jnp::multiply(k, y)?);
/// let ts = jnp::linspace(0.0, 1.0, 3, DType::Float32)?;
/// let k = Array::scalar(2.0f32);
/// let y0 = Array::from_vec(vec![1.0f32]);
/// let ys = odeint(decay, &y0, &ts, &k, Options::new())?;
/// assert_eq!(ys.shape(), [3, 1]);
/// let y1 = ys.to_vec::<f32>()?[2];
/// assert!((y1 - (-2.0f32).exp()).abs() < 1e-6);
/// // d y(1) / dk = -t exp(-k t) at t = 1.
/// let dk = grad(|k: Array| {
///     let ys = odeint(decay, &y0, &ts, &k, Options::new())?;
///     jnp::sum(ys, Default::default(), false)
/// }, &k)?;
/// let want = -(0.5 * (-1.0f32).exp()) - (-2.0f32).exp();
/// assert!((dk.to_vec::<f32>()?[0] - want).abs() < 1e-5);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `TypeError` when `ts` is not an array of floats (`t must be an array of floats, but
/// got [0 1 2].`), and its `IndexError` when `ts` is 0-dimensional (`Too many indices: array is
/// 0-dimensional, but 1 were indexed`). The control-flow primitives' `TypeError`s when `func`
/// changes the state's shape or dtype (an integer `y0`, say). Whatever `func` returns.
pub fn odeint<Y, A, F>(func: F, y0: &Y, ts: &Array, args: &A, options: Options) -> Result<Y, Error>
where
    Y: Pytree + Clone,
    A: Pytree + Clone,
    F: Fn(&Y, &Array, &A) -> Result<Y, Error>,
{
    if ts.dtype().kind() != Kind::Float {
        return Err(Error::refused(
            Exception::TypeError,
            format!("t must be an array of floats, but got {}.", ts.str()),
        ));
    }
    if ts.ndim() == 0 {
        return Err(Error::refused(
            Exception::IndexError,
            "Too many indices: array is 0-dimensional, but 1 were indexed",
        ));
    }
    let (func, hoisted) = closure_convert(&func, y0, ts, args)?;
    let (y0_flat, unravel) = Ravel::of(y0)?;
    let (_, state) = Ravel::of(&y0.leaves())?;
    let flat: FlatFn = Arc::new(move |y: &Array, t: &Array, a: &[Array]| {
        let mut inputs = state.unravel(y)?;
        inputs.push(t.clone());
        inputs.extend_from_slice(a);
        Ok(Ravel::of(&func.eval(&inputs)?)?.0)
    });
    let mut operands = args.leaves();
    operands.extend(hoisted);
    let ys = odeint_flat(flat, options, &y0_flat, ts, operands)?;
    unravel.unravel_stacked(&ys)
}

/// JAX's `closure_convert(func, y0, t[0], *args)`: `func` traced once into a jaxpr of the
/// leaves of `(y, t, args)`, the floating-point tracers it captured (values of an enclosing
/// transformation, which the derivatives must reach) moved from its constants to trailing
/// inputs and returned, to be passed after the arguments' leaves.
fn closure_convert<Y, A, F>(
    func: &F,
    y0: &Y,
    ts: &Array,
    args: &A,
) -> Result<(Arc<ClosedJaxpr>, Vec<Array>), Error>
where
    Y: Pytree,
    A: Pytree,
    F: Fn(&Y, &Array, &A) -> Result<Y, Error>,
{
    let mut avals: Vec<ShapedArray> = y0.leaves().iter().map(|l| l.aval().clone()).collect();
    let n_y = avals.len();
    avals.push(ShapedArray::new(&[], ts.dtype(), ts.weak_type()));
    avals.extend(args.leaves().iter().map(|l| l.aval().clone()));
    let (closed, _) = trace_avals(
        |leaves: Vec<Array>| {
            let mut it = leaves.into_iter();
            let y = y0.rebuild(&mut it.by_ref().take(n_y))?;
            let t = it.next().expect("t");
            let a = args.rebuild(&mut it)?;
            Ok(func(&y, &t, &a)?.leaves())
        },
        &avals,
        "odeint",
    )?;
    let ClosedJaxpr { jaxpr, consts } = closed;
    let Jaxpr {
        constvars,
        mut invars,
        eqns,
        outvars,
    } = jaxpr;
    let (mut kept_vars, mut kept, mut hoisted) = (Vec::new(), Vec::new(), Vec::new());
    for (v, c) in constvars.into_iter().zip(consts) {
        let inexact = matches!(c.dtype().kind(), Kind::Float | Kind::Complex);
        if c.tracer().is_some() && inexact {
            invars.push(v);
            hoisted.push(c);
        } else {
            kept_vars.push(v);
            kept.push(c);
        }
    }
    let jaxpr = Jaxpr {
        constvars: kept_vars,
        invars,
        eqns,
        outvars,
    };
    Ok((
        Arc::new(ClosedJaxpr {
            jaxpr,
            consts: kept,
        }),
        hoisted,
    ))
}

/// The dynamics on the flattened state: `func(y, t, args)`.
type FlatFn = Arc<dyn Fn(&Array, &Array, &[Array]) -> Result<Array, Error> + Send + Sync>;

/// JAX's `ravel_pytree`: how a pytree's leaves were flattened into one vector (each leaf
/// raveled, converted to the leaves' common dtype when they differ, concatenated), to rebuild
/// it.
#[derive(Clone)]
struct Ravel<Y> {
    template: Y,
    shapes: Vec<Vec<usize>>,
    /// The leaves' dtypes, when they differ from one another (converted back on the way out).
    dtypes: Option<Vec<DType>>,
}

impl<Y: Pytree> Ravel<Y> {
    fn of(y: &Y) -> Result<(Array, Ravel<Y>), Error>
    where
        Y: Clone,
    {
        let leaves = y.leaves();
        let shapes: Vec<Vec<usize>> = leaves.iter().map(|l| l.shape().to_vec()).collect();
        let from: Vec<DType> = leaves.iter().map(Array::dtype).collect();
        let to = match from.split_first() {
            None => {
                let empty = jnp::zeros(&[0], DType::Float32)?;
                let r = Ravel {
                    template: y.clone(),
                    shapes,
                    dtypes: None,
                };
                return Ok((empty, r));
            }
            Some((first, rest)) => rest
                .iter()
                .try_fold(*first, |a, b| jnp::rules().promote_types(a, *b))?,
        };
        let single = from.iter().all(|&d| d == to);
        let flat = leaves
            .iter()
            .map(|l| {
                let l = if single {
                    l.clone()
                } else {
                    crate::lax::ops::convert(l, to, false)?
                };
                reshape(&l, &[l.shape().iter().product()])
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let flat = match flat.as_slice() {
            [one] => one.clone(),
            _ => {
                let refs: Vec<&Array> = flat.iter().collect();
                bind1(
                    &crate::lax::CONCATENATE,
                    &refs,
                    &Params::new().with("dimension", Param::Int(0)),
                )?
            }
        };
        let r = Ravel {
            template: y.clone(),
            shapes,
            dtypes: (!single).then_some(from),
        };
        Ok((flat, r))
    }

    /// The pytree of the flat vector `v`.
    fn unravel(&self, v: &Array) -> Result<Y, Error> {
        self.split(v, &[])
    }

    /// The pytree whose leaves are the columns of `m` (one row per time), each reshaped to a
    /// leading axis and the leaf's shape (JAX's `vmap(unravel)`).
    fn unravel_stacked(&self, m: &Array) -> Result<Y, Error> {
        self.split(m, &m.shape()[..1])
    }

    fn split(&self, v: &Array, lead: &[usize]) -> Result<Y, Error> {
        let mut start = 0usize;
        let mut leaves = Vec::with_capacity(self.shapes.len());
        for (i, shape) in self.shapes.iter().enumerate() {
            let n: usize = shape.iter().product();
            let mut ix = vec![Index::ALL; lead.len()];
            ix.push(Index::Slice(
                Some(start as isize),
                Some((start + n) as isize),
                1,
            ));
            let chunk = jnp::index(v, &ix)?;
            let mut full = lead.to_vec();
            full.extend_from_slice(shape);
            let mut leaf = reshape(&chunk, &full)?;
            if let Some(d) = &self.dtypes {
                leaf = crate::lax::ops::convert(&leaf, d[i], false)?;
            }
            leaves.push(leaf);
            start += n;
        }
        self.template.rebuild(&mut leaves.into_iter())
    }
}

/// `x` reshaped (nothing staged when the shape is already `shape`).
fn reshape(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    let s: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    jnp::reshape(x, &s)
}

/// `_odeint`: the custom-VJP function of `(y0, ts, args)` on the flattened state.
fn odeint_flat(
    func: FlatFn,
    options: Options,
    y0: &Array,
    ts: &Array,
    args: Vec<Array>,
) -> Result<Array, Error> {
    let (f, fwd, bwd) = (func.clone(), func.clone(), func);
    let custom = CustomVjp::new(
        move |(y0, ts, args): (Array, Array, Vec<Array>)| solve(&f, options, &y0, &ts, &args),
        // As JAX's `_odeint_fwd`, the forward pass calls the custom-VJP function itself: under
        // an enclosing differentiation (`grad` of `grad`) the solution is differentiated by
        // this rule again, not through the solver's loops.
        move |(y0, ts, args): (Array, Array, Vec<Array>)| {
            let ys = odeint_flat(fwd.clone(), options, &y0, &ts, args.clone())?;
            Ok((ys.clone(), (ys, ts, args)))
        },
        move |(ys, ts, args): (Array, Array, Vec<Array>), g: Array| {
            backward(&bwd, options, &ys, &ts, &args, &g)
        },
    );
    custom.call(&(y0.clone(), ts.clone(), args))
}

/// A Python float operand (weakly typed).
fn py(v: f64) -> ArrayLike<'static> {
    ArrayLike::Scalar(Value::Float(v))
}

/// `x.astype(dtype)`.
fn astype(x: &Array, dtype: DType) -> Result<Array, Error> {
    jnp::astype(x, dtype)
}

/// `x.real` (the identity on real arrays).
fn real(x: Array) -> Result<Array, Error> {
    if x.dtype().kind() == Kind::Complex {
        bind1(&crate::lax::REAL, &[&x], &Params::new())
    } else {
        Ok(x)
    }
}

/// `jnp.linalg.norm(x)`: `sqrt(sum(real(x * conj(x))))`.
fn norm(x: &Array) -> Result<Array, Error> {
    let c = if x.dtype().kind() == Kind::Complex {
        bind1(&crate::lax::CONJ, &[x], &Params::new())?
    } else {
        x.clone()
    };
    let sq = real(jnp::multiply(x, &c)?)?;
    jnp::sqrt(jnp::sum(&sq, Axes::All, false)?)
}

/// `abs2(x)`: `x.real ** 2 + x.imag ** 2`, or `x ** 2`.
fn abs2(x: &Array) -> Result<Array, Error> {
    if x.dtype().kind() == Kind::Complex {
        let re = bind1(&crate::lax::REAL, &[x], &Params::new())?;
        let im = bind1(&crate::lax::IMAG, &[x], &Params::new())?;
        jnp::add(jnp::power(&re, 2)?, jnp::power(&im, 2)?)
    } else {
        jnp::power(x, 2)
    }
}

/// `x[i]` for a static `i` (negative from the end).
fn row(x: &Array, i: isize) -> Result<Array, Error> {
    jnp::index(x, &[Index::At(i)])
}

/// `x[i]` for an integer scalar `i` that may be traced (`dynamic_slice` on the leading axis).
fn take(x: &Array, i: &Array) -> Result<Array, Error> {
    let zero = crate::array::scalar_array(Value::Int(0), i.dtype(), i.weak_type())?;
    let mut idx: Vec<&Array> = vec![x, i];
    idx.extend(std::iter::repeat_n(&zero, x.ndim() - 1));
    let mut sizes = vec![1i64];
    sizes.extend(x.shape()[1..].iter().map(|&d| d as i64));
    let s = bind1(
        &crate::lax::DYNAMIC_SLICE,
        &idx,
        &Params::new().with("slice_sizes", Param::Ints(sizes)),
    )?;
    reshape(&s, &x.shape()[1..])
}

/// `k.at[i].set(v)` for an integer scalar `i`.
fn set_row(k: &Array, i: &Array, v: &Array) -> Result<Array, Error> {
    let v = if v.dtype() == k.dtype() {
        v.clone()
    } else {
        crate::lax::ops::convert(v, k.dtype(), false)?
    };
    let mut shape = vec![1usize];
    shape.extend_from_slice(v.shape());
    let v = reshape(&v, &shape)?;
    let zero = crate::array::scalar_array(Value::Int(0), i.dtype(), i.weak_type())?;
    let mut ops: Vec<&Array> = vec![k, &v, i];
    ops.extend(std::iter::repeat_n(&zero, k.ndim() - 1));
    bind1(&crate::lax::DYNAMIC_UPDATE_SLICE, &ops, &Params::new())
}

/// A constant vector of `dtype` from float64 values (`jnp.array([...], dtype=dtype)`).
fn constants(values: &[f64], shape: &[usize], dtype: DType) -> Result<Array, Error> {
    let v: Vec<Value> = values.iter().map(|&x| Value::Float(x)).collect();
    jnp::array(&v, shape, dtype)
}

/// `jnp.clip(x, min=0., max=hmax)`.
fn clip_step(x: &Array, hmax: f64) -> Result<Array, Error> {
    jnp::clip(x, Some(py(0.0)), Some(py(hmax)))
}

/// The dynamics at one state and time.
type Dynamics<'a> = dyn Fn(&Array, &Array) -> Result<Array, Error> + 'a;

/// `initial_step_size`: Hairer, Nørsett and Wanner's starting step (Solving ODEs I, II.4).
#[allow(clippy::too_many_arguments)]
fn initial_step_size(
    fun: &Dynamics<'_>,
    t0: &Array,
    y0: &Array,
    order: f64,
    rtol: f64,
    atol: f64,
    f0: &Array,
) -> Result<Array, Error> {
    let mut both = crate::numpy::promote_only(None, Family::Inexact, &[y0.into(), f0.into()])?;
    let f0 = both.pop().expect("two");
    let y0 = both.pop().expect("two");
    let dtype = y0.dtype();
    let scale = astype(
        &jnp::add(py(atol), jnp::multiply(jnp::abs(&y0)?, py(rtol))?)?,
        dtype,
    )?;
    let d0 = norm(&jnp::true_divide(&y0, &scale)?)?;
    let d1 = norm(&jnp::true_divide(&f0, &scale)?)?;
    let small = jnp::bitwise_or(jnp::less(&d0, py(1e-5))?, jnp::less(&d1, py(1e-5))?)?;
    let h0 = jnp::r#where(
        small,
        py(1e-6),
        jnp::true_divide(jnp::multiply(py(0.01), &d0)?, &d1)?,
    )?;
    let y1 = jnp::add(&y0, jnp::multiply(astype(&h0, dtype)?, &f0)?)?;
    let f1 = fun(&y1, &jnp::add(t0, &h0)?)?;
    let d2 = jnp::true_divide(
        norm(&jnp::true_divide(jnp::subtract(&f1, &f0)?, &scale)?)?,
        &h0,
    )?;
    let tiny = jnp::bitwise_and(
        jnp::less_equal(&d1, py(1e-15))?,
        jnp::less_equal(&d2, py(1e-15))?,
    )?;
    let h1 = jnp::r#where(
        tiny,
        jnp::maximum(py(1e-6), jnp::multiply(&h0, py(1e-3))?)?,
        jnp::power(
            jnp::true_divide(py(0.01), jnp::maximum(&d1, &d2)?)?,
            py(1.0 / (order + 1.0)),
        )?,
    )?;
    jnp::minimum(jnp::multiply(py(100.0), &h0)?, h1)
}

/// The Dormand–Prince tableau: the stages' times (`alpha`), their weights (`beta`), the
/// solution's weights and the error estimate's.
const ALPHA: [f64; 7] = [1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0, 0.0];

#[rustfmt::skip]
const BETA: [f64; 42] = [
    1.0 / 5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0, 0.0,
    19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0, 0.0, 0.0, 0.0,
    9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0, 0.0, 0.0,
    35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0.0,
];

const C_SOL: [f64; 7] = [
    35.0 / 384.0,
    0.0,
    500.0 / 1113.0,
    125.0 / 192.0,
    -2187.0 / 6784.0,
    11.0 / 84.0,
    0.0,
];

const C_ERROR: [f64; 7] = [
    35.0 / 384.0 - 1951.0 / 21600.0,
    0.0,
    500.0 / 1113.0 - 22642.0 / 50085.0,
    125.0 / 192.0 - 451.0 / 720.0,
    -2187.0 / 6784.0 - -12231.0 / 42400.0,
    11.0 / 84.0 - 649.0 / 6300.0,
    -1.0 / 60.0,
];

/// The midpoint weights of the dense output (Shampine's), halved.
const C_MID: [f64; 7] = [
    6025192743.0 / 30085553152.0 / 2.0,
    0.0,
    51252292925.0 / 65400821598.0 / 2.0,
    -2691868925.0 / 45128329728.0 / 2.0,
    187940372067.0 / 1594534317056.0 / 2.0,
    -1776094331.0 / 19743644256.0 / 2.0,
    11237099.0 / 235043384.0 / 2.0,
];

/// One Dormand–Prince step from `(t0, y0)` of size `dt` (`f0` the dynamics at the start):
/// the new state, the dynamics there, the error estimate and the seven stages.
fn runge_kutta_step(
    func: &Dynamics<'_>,
    y0: &Array,
    f0: &Array,
    t0: &Array,
    dt: &Array,
) -> Result<(Array, Array, Array, Array), Error> {
    let fd = f0.dtype();
    let alpha = constants(&ALPHA, &[7], dt.dtype())?;
    let beta = constants(&BETA, &[6, 7], fd)?;
    let c_sol = constants(&C_SOL, &[7], fd)?;
    let c_error = constants(&C_ERROR, &[7], fd)?;
    let n = f0.shape().first().copied().unwrap_or(1);
    let index = |i: i128| crate::array::scalar_array(Value::Int(i), DType::Int32, false);
    let mut k = set_row(&jnp::zeros(&[7, n], fd)?, &index(0)?, f0)?;
    // JAX's `fori_loop(1, 7, body_fun, k)` (a scan of six steps) unrolled: the same operations
    // on the same values, the tableau's rows static (folded by jit) instead of sliced at run
    // time.
    for i in 1..7isize {
        let ti = jnp::add(t0, jnp::multiply(dt, row(&alpha, i - 1)?)?)?;
        let yi = jnp::add(
            y0,
            jnp::multiply(astype(dt, fd)?, jnp::dot(row(&beta, i - 1)?, &k)?)?,
        )?;
        let ft = func(&yi, &ti)?;
        k = set_row(&k, &index(i as i128)?, &ft)?;
    }
    let dtf = astype(dt, fd)?;
    let y1 = jnp::add(jnp::multiply(&dtf, jnp::dot(&c_sol, &k)?)?, y0)?;
    let y1_error = jnp::multiply(&dtf, jnp::dot(&c_error, &k)?)?;
    let f1 = row(&k, -1)?;
    Ok((y1, f1, y1_error, k))
}

/// `mean_error_ratio`: the root mean square of the error estimate over the tolerance.
fn mean_error_ratio(
    error: &Array,
    rtol: f64,
    atol: f64,
    y0: &Array,
    y1: &Array,
) -> Result<Array, Error> {
    let tol = jnp::add(
        py(atol),
        jnp::multiply(py(rtol), jnp::maximum(jnp::abs(y0)?, jnp::abs(y1)?)?)?,
    )?;
    let ratio = jnp::true_divide(error, astype(&tol, error.dtype())?)?;
    jnp::sqrt(jnp::mean(abs2(&ratio)?, Axes::All, false)?)
}

/// `optimal_step_size` with JAX's safety 0.9, growth factor 10, shrink factor 0.2 and order 5.
fn optimal_step_size(last_step: &Array, ratio: &Array) -> Result<Array, Error> {
    let (safety, ifactor, dfactor, order) = (0.9, 10.0, 0.2, 5.0);
    let dfactor = jnp::r#where(jnp::less(ratio, py(1.0))?, py(1.0), py(dfactor))?;
    let factor = jnp::minimum(
        py(ifactor),
        jnp::maximum(
            jnp::multiply(jnp::power(ratio, py(-1.0 / order))?, py(safety))?,
            dfactor,
        )?,
    )?;
    jnp::r#where(
        jnp::equal(ratio, py(0.0))?,
        jnp::multiply(last_step, py(ifactor))?,
        jnp::multiply(last_step, factor)?,
    )
}

/// `interp_fit_dopri`: the coefficients of the 4th-order polynomial through the step (its
/// ends, their derivatives and the midpoint), highest power first.
fn interp_fit_dopri(y0: &Array, y1: &Array, k: &Array, dt: &Array) -> Result<Array, Error> {
    let c_mid = constants(&C_MID, &[7], y0.dtype())?;
    let y_mid = jnp::add(
        y0,
        jnp::multiply(astype(dt, y0.dtype())?, jnp::dot(&c_mid, k)?)?,
    )?;
    let (dy0, dy1) = (row(k, 0)?, row(k, -1)?);
    let dt = astype(dt, y0.dtype())?;
    // c1·dt·dy0 + c2·dt·dy1 + c3·y0 + c4·y1 + c5·y_mid, left to right as Python adds.
    let term = |c: f64, x: &Array| jnp::multiply(py(c), x);
    let dtx = |c: f64, x: &Array| jnp::multiply(jnp::multiply(py(c), &dt)?, x);
    let a = jnp::add(
        jnp::subtract(
            jnp::subtract(jnp::add(dtx(-2.0, &dy0)?, dtx(2.0, &dy1)?)?, term(8.0, y0)?)?,
            term(8.0, y1)?,
        )?,
        term(16.0, &y_mid)?,
    )?;
    let b = jnp::subtract(
        jnp::add(
            jnp::add(
                jnp::subtract(dtx(5.0, &dy0)?, dtx(3.0, &dy1)?)?,
                term(18.0, y0)?,
            )?,
            term(14.0, y1)?,
        )?,
        term(32.0, &y_mid)?,
    )?;
    let c = jnp::add(
        jnp::subtract(
            jnp::subtract(
                jnp::add(dtx(-4.0, &dy0)?, jnp::multiply(&dt, &dy1)?)?,
                term(11.0, y0)?,
            )?,
            term(5.0, y1)?,
        )?,
        term(16.0, &y_mid)?,
    )?;
    let d = jnp::multiply(&dt, &dy0)?;
    jnp::stack(&[a.into(), b.into(), c.into(), d.into(), y0.into()], 0)
}

/// `jnp.polyval(p, x)`: Horner's rule over `p`'s rows from zeros.
fn polyval(p: &Array, x: &Array) -> Result<Array, Error> {
    let shape = jnp::broadcast_shapes(&[&p.shape()[1..], x.shape()])?;
    let mut y = crate::lax::ops::broadcast_to(
        &crate::array::scalar_array(Value::Int(0), x.dtype(), x.weak_type())?,
        &shape,
    )?;
    for i in 0..p.shape()[0] {
        y = jnp::add(jnp::multiply(&y, x)?, row(p, i as isize)?)?;
    }
    Ok(y)
}

/// The forward solve (`_odeint`'s body): the solution at each time of `ts`, one row each.
fn solve(
    func: &FlatFn,
    o: Options,
    y0: &Array,
    ts: &Array,
    args: &[Array],
) -> Result<Array, Error> {
    let f = |y: &Array, t: &Array| func(y, t, args);
    let t0 = row(ts, 0)?;
    let f0 = f(y0, &t0)?;
    let dt = clip_step(
        &initial_step_size(&f, &t0, y0, 4.0, o.rtol, o.atol, &f0)?,
        o.hmax,
    )?;
    let interp = jnp::stack(&vec![ArrayLike::from(y0); 5], 0)?;
    let init = vec![y0.clone(), f0, t0.clone(), dt, t0, interp];
    let targets = jnp::index(ts, &[Index::Slice(Some(1), None, 1)])?;
    let mxstep = o.mxstep_value();
    let (_, ys): (Vec<Array>, Array) = scan(
        |carry: Vec<Array>, target: Array| {
            let mut state = vec![Array::python_scalar(0)?];
            state.extend(carry);
            let out = while_loop(
                |s: Vec<Array>| {
                    let (i, t, dt) = (&s[0], &s[3], &s[4]);
                    jnp::bitwise_and(
                        jnp::bitwise_and(
                            jnp::less(t, &target)?,
                            jnp::less(i, ArrayLike::Scalar(mxstep))?,
                        )?,
                        jnp::greater(dt, 0)?,
                    )
                },
                |s: Vec<Array>| {
                    let [i, y, fy, t, dt, last_t, interp] = <[Array; 7]>::try_from(s)
                        .map_err(|_| Error::refused(Exception::TypeError, "odeint state"))?;
                    let (next_y, next_f, error, k) = runge_kutta_step(&f, &y, &fy, &t, &dt)?;
                    let next_t = jnp::add(&t, &dt)?;
                    let ratio = mean_error_ratio(&error, o.rtol, o.atol, &y, &next_y)?;
                    let new_interp = interp_fit_dopri(&y, &next_y, &k, &dt)?;
                    let dt = clip_step(&optimal_step_size(&dt, &ratio)?, o.hmax)?;
                    let i = jnp::add(&i, 1)?;
                    let accept = jnp::less_equal(&ratio, py(1.0))?;
                    let new = [&i, &next_y, &next_f, &next_t, &dt, &t, &new_interp];
                    let old = [&i, &y, &fy, &t, &dt, &last_t, &interp];
                    new.iter()
                        .zip(old)
                        .map(|(n, o)| jnp::r#where(&accept, *n, o))
                        .collect()
                },
                &state,
            )?;
            let (t, last_t, interp) = (&out[3], &out[5], &out[6]);
            let rel = jnp::true_divide(jnp::subtract(&target, last_t)?, jnp::subtract(t, last_t)?)?;
            let y = polyval(interp, &astype(&rel, interp.dtype())?)?;
            Ok((out[1..].to_vec(), y))
        },
        &init,
        &targets,
        None,
        false,
    )?;
    let first = crate::lax::expand_dims(y0, &[0])?;
    jnp::concatenate(&[first.into(), ys.into()], 0)
}

/// The state of the augmented (adjoint) system: the state, its cotangent, the cotangent of
/// the first time, the arguments' cotangents.
type Augmented = (Array, Array, Array, Vec<Array>);

/// `_odeint_rev`: the cotangents of `(y0, ts, args)` from those of the solution, `g`, by the
/// adjoint system integrated backward from each time to the one before.
fn backward(
    func: &FlatFn,
    o: Options,
    ys: &Array,
    ts: &Array,
    args: &[Array],
    g: &Array,
) -> Result<(Array, Array, Vec<Array>), Error> {
    // The original system with the cotangents' dynamics, in negated time.
    let aug = |state: &Augmented, t: &Array, args: &Vec<Array>| -> Result<Augmented, Error> {
        let (y, y_bar) = (&state.0, &state.1);
        let (y_dot, pullback) = vjp(
            |(y, t, a): (Array, Array, Vec<Array>)| func(&y, &t, &a),
            &(y.clone(), jnp::negative(t)?, args.clone()),
        )?;
        let (yb, tb, ab) = pullback(y_bar)?;
        Ok((jnp::negative(&y_dot)?, yb, tb, ab))
    };
    let n = ts.shape()[0];
    let idx = jnp::arange(
        n as f64 - 1.0,
        0.0,
        -1.0,
        crate::config::default_int(&jnp::rules()),
    )?;
    let zeros = args
        .iter()
        .map(jnp::zeros_like)
        .collect::<Result<Vec<_>, Error>>()?;
    // JAX's initial `0.` (a weakly typed Python float), as its scan promotes it to the dtype
    // of the time's cotangent (`t0_bar - t_bar`: the real dtype of the state's): converted
    // here, since `control::scan` checks the carry's types before promoting weak ones.
    let real_dtype = real(jnp::zeros(&[], g.dtype())?)?.dtype();
    let t0_bar = crate::lax::ops::convert(&Array::python_scalar(0.0)?, real_dtype, false)?;
    let init = (row(g, -1)?, t0_bar, zeros);
    let args_v = args.to_vec();
    let ((y_bar, t0_bar, args_bar), rev_ts_bar): ((Array, Array, Vec<Array>), Array) = scan(
        |(y_bar, t0_bar, args_bar): (Array, Array, Vec<Array>), i: Array| {
            let y_i = take(ys, &i)?;
            let t_i = take(ts, &i)?;
            let g_i = take(g, &i)?;
            let prev = jnp::subtract(&i, 1)?;
            // The effect of moving the measurement time.
            let t_bar = real(jnp::dot(func(&y_i, &t_i, &args_v)?, &g_i)?)?;
            let t0_bar = jnp::subtract(&t0_bar, &t_bar)?;
            let span = jnp::stack(
                &[
                    jnp::negative(&t_i)?.into(),
                    jnp::negative(take(ts, &prev)?)?.into(),
                ],
                0,
            )?;
            // Run the augmented system backward to the previous time.
            let (_, y_bar, t0_bar, args_bar): Augmented =
                odeint(aug, &(y_i, y_bar, t0_bar, args_bar), &span, &args_v, o)?;
            // Add the cotangent of the previous output.
            let y_bar = jnp::add(row(&y_bar, 1)?, take(g, &prev)?)?;
            let t0_bar = row(&t0_bar, 1)?;
            let args_bar = args_bar
                .iter()
                .map(|a| row(a, 1))
                .collect::<Result<Vec<_>, Error>>()?;
            Ok(((y_bar, t0_bar, args_bar), t_bar))
        },
        &init,
        &idx,
        None,
        false,
    )?;
    let first = jnp::stack(&[t0_bar.into()], 0)?;
    let rest = jnp::index(&rev_ts_bar, &[Index::Slice(None, None, -1)])?;
    let ts_bar = jnp::concatenate(&[first.into(), rest.into()], 0)?;
    Ok((y_bar, ts_bar, args_bar))
}
