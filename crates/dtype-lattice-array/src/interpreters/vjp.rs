//! Reverse mode as JAX builds it: `linearize` runs the JVP with the tangents unknown to a
//! partial evaluator, so the primal computation runs (in the enclosing trace) while the
//! tangent computation is staged into a linear jaxpr; `vjp` transposes that jaxpr (each linear
//! primitive's transpose rule, equations in reverse); `grad` is the VJP of a scalar with
//! cotangent 1.
//!
//! Integer, boolean and key inputs have `float0` tangents and cotangents: no tangent flows
//! from them (the linear jaxpr takes a `float0` input for each, unused), and their
//! cotangents are `float0` zeros. `grad` refuses them unless [`Grad::allow_int`].

use std::collections::HashMap;
use std::sync::Arc;

use dtype_lattice::error::Exception;
use dtype_lattice::{Error, Kind};

use super::jvp::{JvpTrace, run_jvp, tangent_aval, tangent_zeros, zeros};
use super::stage::Staging;
use crate::array::{Array, ShapedArray};
use crate::core::Lin;
use crate::core::Pytree;
use crate::core::jaxpr::{Atom, ClosedJaxpr};
use crate::core::{Trace, current};

/// A linearized function: the primal outputs' structure and the linear jaxpr from input
/// tangents to output tangents (`None` outputs: zero).
pub struct Linearized<O> {
    out: O,
    /// The inputs' primal avals.
    primal_avals: Vec<ShapedArray>,
    /// The inputs' tangent avals (`float0` for integers, bools and keys).
    in_avals: Vec<ShapedArray>,
    jaxpr: ClosedJaxpr,
    /// Which outputs of the jaxpr each output leaf is (`None`: its tangent is zero).
    out_index: Vec<Option<usize>>,
    out_avals: Vec<ShapedArray>,
}

impl<O: Pytree> Linearized<O> {
    /// The primal outputs.
    pub fn primal(&self) -> &O {
        &self.out
    }

    /// The linear jaxpr (input tangents to the output tangents that are not zero; an integer,
    /// bool or key input is a `float0` input nothing reads).
    pub fn jaxpr(&self) -> &ClosedJaxpr {
        &self.jaxpr
    }

    /// The output tangents' leaves for the input tangents' leaves `tangents` (JAX's `f_jvp`
    /// returned by `jax.linearize`, over leaves): `float0` tangents for integer, bool and key
    /// inputs; `float0` zeros for integer, bool and key outputs.
    ///
    /// # Errors
    ///
    /// JAX's `ValueError` for a tangent whose aval is not its primal's tangent aval (another
    /// shape or dtype, an integer tangent for an integer primal), `TypeError` for another
    /// number of leaves.
    pub fn jvp_leaves(&self, tangents: &[Array]) -> Result<Vec<Array>, Error> {
        if tangents.len() != self.in_avals.len() {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "expected {} tangent leaves, got {}",
                    self.in_avals.len(),
                    tangents.len()
                ),
            ));
        }
        for ((t, want), primal) in tangents.iter().zip(&self.in_avals).zip(&self.primal_avals) {
            if t.dtype() != want.dtype() || t.shape() != want.shape() {
                return Err(Error::refused(
                    Exception::ValueError,
                    format!(
                        "linearized function called on tangent values inconsistent with the \
                         original primal values:\nGot tangent aval {} for primal aval {} but \
                         expected {}.",
                        t.aval().long_name(),
                        primal.long_name(),
                        want.long_name()
                    ),
                ));
            }
        }
        let outs = self.jaxpr.call(tangents)?;
        self.out_index
            .iter()
            .zip(&self.out_avals)
            .map(|(i, aval)| match i {
                Some(i) => outs.get(*i).cloned().ok_or_else(|| {
                    Error::refused(Exception::TypeError, "the linear jaxpr lost an output")
                }),
                None => tangent_zeros(aval),
            })
            .collect()
    }

    /// [`Linearized::jvp_leaves`] over pytrees: the output tangents (of the outputs'
    /// structure) for input tangents (of the inputs' structure), as `f_jvp(*tangents)`.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// use dtype_lattice_array::{Array, linearize, numpy as jnp};
    /// // f(x, n) = x * n with n an integer: n's tangent is float0.
    /// let args = (Array::from_vec(vec![1.0f32, 2.0]), Array::from_vec(vec![3i32, 4]));
    /// let lin = linearize(|(x, n): (Array, Array)| jnp::multiply(&x, &n), &args)?;
    /// let tangents = (jnp::ones(&[2], DType::Float32)?, jnp::zeros(&[2], DType::Float0)?);
    /// let t: Array = lin.jvp(&tangents)?;
    /// assert_eq!(t.to_vec::<f32>()?, [3.0, 4.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Linearized::jvp_leaves`].
    pub fn jvp<I: Pytree>(&self, tangents: &I) -> Result<O, Error> {
        let leaves = self.jvp_leaves(&tangents.leaves())?;
        self.out.rebuild(&mut leaves.into_iter())
    }

    /// Cotangents of the inputs' leaves for cotangents `cts` of the output leaves (`float0`
    /// zeros for integer, bool and key inputs).
    ///
    /// # Errors
    ///
    /// JAX's `ValueError` for a cotangent of another shape than its output, or of another
    /// dtype than a floating or complex output's (an integer, bool or key output takes any
    /// cotangent of its shape: it is ignored); `TypeError` for another number of leaves;
    /// `NotImplementedError` for a primitive without a transpose rule.
    pub fn transpose_leaves(&self, cts: &[Array]) -> Result<Vec<Array>, Error> {
        if cts.len() != self.out_avals.len() {
            return Err(Error::refused(
                Exception::TypeError,
                "vjp: cotangents must have the structure and shapes of the outputs",
            ));
        }
        for (c, aval) in cts.iter().zip(&self.out_avals) {
            let want = tangent_aval(aval);
            let ok = c.shape() == want.shape()
                && (c.dtype() == want.dtype() || want.dtype().is_float0());
            if !ok {
                return Err(Error::refused(
                    Exception::ValueError,
                    format!(
                        "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: \
                         got {}, but expected {} because the corresponding output of the \
                         differentiated function had JAX type {}",
                        c.aval().long_text(false),
                        want.long_text(false),
                        aval.long_text(false)
                    ),
                ));
            }
        }
        self.transpose_some(cts.iter().cloned().map(Some))
    }

    /// [`Linearized::transpose_leaves`] without the checks, `None` for an output leaf without
    /// a cotangent (a zero one: `has_aux`'s auxiliary outputs).
    fn transpose_some(
        &self,
        cts: impl Iterator<Item = Option<Array>>,
    ) -> Result<Vec<Array>, Error> {
        let mut out_cts: Vec<Option<Array>> = vec![None; self.jaxpr.jaxpr.outvars.len()];
        for (i, c) in self.out_index.iter().zip(cts) {
            if let (Some(i), Some(c)) = (i, c) {
                out_cts[*i] = Some(c);
            }
        }
        let ins = backward_pass(&self.jaxpr, out_cts)?;
        ins.into_iter()
            .zip(&self.in_avals)
            .map(|(c, aval)| match c {
                Some(c) if !aval.dtype().is_float0() => Ok(c),
                _ => zeros(aval),
            })
            .collect()
    }
}

/// `jax.linearize`: `f`'s outputs at `primals` and its linear map, as a jaxpr
/// ([`Linearized::jvp`] applies it, as JAX's `f_jvp`).
///
/// # Errors
///
/// Whatever `f` returns; `NotImplementedError` for a primitive without a JVP rule.
pub fn linearize<I, O, F>(f: F, primals: &I) -> Result<Linearized<O>, Error>
where
    I: Pytree,
    O: Pytree,
    F: FnOnce(I) -> Result<O, Error>,
{
    let parent = current();
    let pe = Staging::partial(parent.clone());
    let ps = primals.leaves();
    let primal_avals: Vec<ShapedArray> = ps.iter().map(|x| x.aval().clone()).collect();
    let in_avals: Vec<ShapedArray> = ps.iter().map(|x| tangent_aval(x.aval())).collect();
    let (invars, tangents): (Vec<_>, Vec<Array>) =
        in_avals.iter().map(|a| pe.input(a.clone())).unzip();
    let pe_trace: Arc<dyn Trace> = pe.clone();
    let jvp = Arc::new(JvpTrace::new(Some(pe_trace)));
    // An integer's (bool's, key's) float0 tangent is a symbolic zero: its input is unused.
    let result = run_jvp(&jvp, f, primals, tangents);
    let (out, p, t) = match result {
        Ok(r) => r,
        Err(e) => {
            pe.tag().kill();
            return Err(e);
        }
    };
    // Output tangents that the tangent inputs reach are staged; others are zero (or, for a
    // tangent known without them, a constant of the linear map: zero in a linear function).
    let mut outs: Vec<Array> = Vec::new();
    let mut out_index = Vec::new();
    for tan in &t {
        match tan {
            Some(x) if pe.owns(x) => {
                out_index.push(Some(outs.len()));
                outs.push(x.clone());
            }
            _ => out_index.push(None),
        }
    }
    let jaxpr = pe.finish(invars, &outs);
    pe.tag().kill();
    let out_avals = p.iter().map(|x| x.aval().clone()).collect();
    let primal = out.rebuild(&mut p.into_iter())?;
    Ok(Linearized {
        out: primal,
        primal_avals,
        in_avals,
        jaxpr,
        out_index,
        out_avals,
    })
}

/// `jax.vjp`: `f`'s outputs at `primals` and a function from output cotangents to input
/// cotangents.
///
/// ```
/// use dtype_lattice_array::{Array, vjp, numpy as jnp};
/// let x = Array::from_vec(vec![1.0f32, 2.0]);
/// let (y, pullback) = vjp(|x: Array| jnp::multiply(&x, &x), &x)?;
/// let ct: Array = pullback(&Array::from_vec(vec![1.0f32, 1.0]))?;
/// assert_eq!(ct.to_vec::<f32>()?, [2.0, 4.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`linearize`].
#[allow(clippy::type_complexity)]
pub fn vjp<I, O, F>(
    f: F,
    primals: &I,
) -> Result<(O, impl Fn(&O) -> Result<I, Error> + use<I, O, F>), Error>
where
    I: Pytree + Clone,
    O: Pytree + Clone,
    F: FnOnce(I) -> Result<O, Error>,
{
    let lin = linearize(f, primals)?;
    let template = primals.clone();
    let out = lin.primal().clone();
    let pullback = move |cts: &O| {
        let leaves = lin.transpose_leaves(&cts.leaves())?;
        template.rebuild(&mut leaves.into_iter())
    };
    Ok((out, pullback))
}

/// `jax.value_and_grad(f)(x)`: the scalar `f(x)` and its gradient (a pytree of `x`'s
/// structure). As [`Grad::value_and_grad`] with JAX's defaults.
///
/// ```
/// use dtype_lattice_array::{Array, value_and_grad, numpy as jnp};
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
/// let (v, g) = value_and_grad(|x: Array| jnp::sum(jnp::multiply(&x, &x)?, Default::default(), false), &x)?;
/// assert_eq!(v.to_vec::<f32>()?, [14.0]);
/// assert_eq!(g.to_vec::<f32>()?, [2.0, 4.0, 6.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`Grad::value_and_grad`]: JAX's `TypeError` for an integer, bool or key input (see
/// [`Grad::allow_int`]), an output that is not a scalar or not real floating point.
pub fn value_and_grad<I, F>(f: F, x: &I) -> Result<(Array, I), Error>
where
    I: Pytree + Clone,
    F: FnOnce(I) -> Result<Array, Error>,
{
    Grad::new().value_and_grad(f, x)
}

/// `jax.grad(f)(x)`: the gradient of the scalar `f` at `x`. As [`Grad::grad`] with JAX's
/// defaults.
///
/// # Errors
///
/// As [`value_and_grad`].
pub fn grad<I, F>(f: F, x: &I) -> Result<I, Error>
where
    I: Pytree + Clone,
    F: FnOnce(I) -> Result<Array, Error>,
{
    Grad::new().grad(f, x)
}

/// `jax.grad` and `jax.value_and_grad` with options, builder-style (JAX's keyword
/// arguments); [`grad`] and [`value_and_grad`] are these with the defaults.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, Grad, numpy as jnp};
/// // jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
/// let f = |(x, n): (Array, Array)| jnp::multiply(&x, &n);
/// let args = (Array::scalar(2.0f32), Array::scalar(3i32));
/// let (gx, gn) = Grad::new().allow_int(true).grad(f, &args)?;
/// assert_eq!(gx.to_vec::<f32>()?, [3.0]);
/// assert_eq!(gn.dtype(), DType::Float0);
/// // Without allow_int: JAX's TypeError.
/// let e = Grad::new().grad(f, &args).unwrap_err();
/// assert_eq!(e.message(), "grad requires real- or complex-valued inputs (input dtype that is a \
///     sub-dtype of np.inexact), but got int32. If you want to use Boolean- or integer-valued \
///     inputs, use vjp or set allow_int to True.");
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Grad {
    allow_int: bool,
}

impl Grad {
    /// JAX's defaults (`allow_int=False`).
    pub fn new() -> Grad {
        Grad::default()
    }

    /// `allow_int`: whether integer, bool and key inputs are allowed; their gradients are
    /// `float0` zeros (JAX's trivial vector space).
    #[must_use]
    pub fn allow_int(self, allow: bool) -> Grad {
        Grad { allow_int: allow }
    }

    /// `jax.value_and_grad(f, allow_int=...)(x)`: the scalar `f(x)` and its gradient (a
    /// pytree of `x`'s structure).
    ///
    /// # Errors
    ///
    /// JAX's `TypeError`s, before `f` runs: an integer, bool or key input without
    /// [`Grad::allow_int`] (`grad requires real- or complex-valued inputs ...`), a `float0`
    /// input (`grad requires numerical-valued inputs ...`); after it: an output that is not a
    /// scalar (`Gradient only defined for scalar-output functions ...`) or not real floating
    /// point (`grad requires real-valued outputs ...`). As [`linearize`] otherwise.
    pub fn value_and_grad<I, F>(&self, f: F, x: &I) -> Result<(Array, I), Error>
    where
        I: Pytree + Clone,
        F: FnOnce(I) -> Result<Array, Error>,
    {
        let ((y, ()), g) = self.value_and_grad_with_aux(|x| Ok((f(x)?, ())), x)?;
        Ok((y, g))
    }

    /// `jax.value_and_grad(f, has_aux=True, allow_int=...)(x)`: `f` returns the scalar to
    /// differentiate and an auxiliary pytree `aux`, which is returned as computed, not
    /// differentiated: `((f(x), aux), gradient)`.
    ///
    /// ```
    /// use dtype_lattice_array::{Array, Grad, numpy as jnp};
    /// let x = Array::from_vec(vec![1.0f32, 2.0]);
    /// let f = |x: Array| {
    ///     let sq = jnp::multiply(&x, &x)?;
    ///     Ok((jnp::sum(&sq, Default::default(), false)?, sq)) // (loss, aux)
    /// };
    /// let ((loss, aux), g) = Grad::new().value_and_grad_with_aux(f, &x)?;
    /// assert_eq!((loss.to_vec::<f32>()?, aux.to_vec::<f32>()?), (vec![5.0], vec![1.0, 4.0]));
    /// assert_eq!(g.to_vec::<f32>()?, [2.0, 4.0]);
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Grad::value_and_grad`] (the checks apply to the scalar, not to `aux`).
    pub fn value_and_grad_with_aux<I, A, F>(&self, f: F, x: &I) -> Result<((Array, A), I), Error>
    where
        I: Pytree + Clone,
        A: Pytree,
        F: FnOnce(I) -> Result<(Array, A), Error>,
    {
        for leaf in x.leaves() {
            check_input_dtype(self.allow_int, leaf.dtype())?;
        }
        let lin = linearize(f, x)?;
        let y = lin.primal().0.clone();
        if y.ndim() != 0 {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "Gradient only defined for scalar-output functions. Output had shape: {}.",
                    crate::array::py_shape(y.shape())
                ),
            ));
        }
        check_output_dtype(y.dtype())?;
        // The scalar is the first output leaf; `aux`'s leaves take no cotangent.
        let one = crate::array::scalar(1.0, y.dtype())?;
        let leaves = lin.transpose_some(std::iter::once(Some(one)))?;
        let Linearized { out: (y, aux), .. } = lin;
        Ok(((y, aux), x.rebuild(&mut leaves.into_iter())?))
    }

    /// `jax.grad(f, has_aux=True, allow_int=...)(x)`: the gradient of `f`'s scalar and `f`'s
    /// auxiliary pytree, `(gradient, aux)`.
    ///
    /// # Errors
    ///
    /// As [`Grad::value_and_grad_with_aux`].
    pub fn grad_with_aux<I, A, F>(&self, f: F, x: &I) -> Result<(I, A), Error>
    where
        I: Pytree + Clone,
        A: Pytree,
        F: FnOnce(I) -> Result<(Array, A), Error>,
    {
        self.value_and_grad_with_aux(f, x)
            .map(|((_, aux), g)| (g, aux))
    }

    /// `jax.grad(f, allow_int=...)(x)`: the gradient of the scalar `f` at `x`.
    ///
    /// # Errors
    ///
    /// As [`Grad::value_and_grad`].
    pub fn grad<I, F>(&self, f: F, x: &I) -> Result<I, Error>
    where
        I: Pytree + Clone,
        F: FnOnce(I) -> Result<Array, Error>,
    {
        self.value_and_grad(f, x).map(|(_, g)| g)
    }
}

/// JAX's `_check_input_dtype_revderiv` for `grad` (not holomorphic).
fn check_input_dtype(allow_int: bool, dtype: dtype_lattice::DType) -> Result<(), Error> {
    match dtype.kind() {
        Kind::Float | Kind::Complex => Ok(()),
        Kind::Bool | Kind::SignedInt | Kind::UnsignedInt | Kind::Extended => {
            if allow_int {
                Ok(())
            } else {
                Err(Error::refused(
                    Exception::TypeError,
                    format!(
                        "grad requires real- or complex-valued inputs (input dtype that is a \
                         sub-dtype of np.inexact), but got {}. If you want to use Boolean- or \
                         integer-valued inputs, use vjp or set allow_int to True.",
                        dtype.numpy_name()
                    ),
                ))
            }
        }
        _ => Err(Error::refused(
            Exception::TypeError,
            format!(
                "grad requires numerical-valued inputs (input dtype that is a sub-dtype of \
                 np.bool_ or np.number), but got {}.",
                dtype.numpy_name()
            ),
        )),
    }
}

/// JAX's `_check_output_dtype_revderiv` for `grad` (not holomorphic).
fn check_output_dtype(dtype: dtype_lattice::DType) -> Result<(), Error> {
    let msg = match dtype.kind() {
        Kind::Float => return Ok(()),
        Kind::Extended => format!("grad with output element type {dtype}"),
        Kind::Complex => format!(
            "grad requires real-valued outputs (output dtype that is a sub-dtype of \
             np.floating), but got {dtype}. For holomorphic differentiation, pass \
             holomorphic=True. For differentiation of non-holomorphic functions involving \
             complex outputs, use jax.vjp directly."
        ),
        _ => format!(
            "grad requires real-valued outputs (output dtype that is a sub-dtype of \
             np.floating), but got {}. For differentiation of functions with integer \
             outputs, use jax.vjp directly.",
            dtype.numpy_name()
        ),
    };
    Err(Error::refused(Exception::TypeError, msg))
}

/// The transpose of a linear jaxpr: cotangents of its inputs (`None`: zero) from cotangents of
/// its outputs, the equations taken in reverse, each primitive's transpose rule bound under the
/// current trace (so a backward pass can itself be staged or differentiated).
pub(crate) fn backward_pass(
    closed: &ClosedJaxpr,
    out_cts: Vec<Option<Array>>,
) -> Result<Vec<Option<Array>>, Error> {
    let j = &closed.jaxpr;
    let consts: HashMap<u32, &Array> = j
        .constvars
        .iter()
        .map(|v| v.id)
        .zip(&closed.consts)
        .collect();
    let mut cts: HashMap<u32, Array> = HashMap::new();
    let add = |cts: &mut HashMap<u32, Array>, id: u32, c: Array| -> Result<(), Error> {
        let sum = match cts.remove(&id) {
            Some(prev) => crate::lax::ops::add_any(&prev, &c)?,
            None => c,
        };
        cts.insert(id, sum);
        Ok(())
    };
    for (a, c) in j.outvars.iter().zip(out_cts) {
        if let (Atom::Var(v), Some(c)) = (a, c)
            && !consts.contains_key(&v.id)
        {
            add(&mut cts, v.id, c)?;
        }
    }
    for eqn in j.eqns.iter().rev() {
        let outs: Vec<Option<Array>> = eqn.outputs.iter().map(|v| cts.remove(&v.id)).collect();
        if outs.iter().all(Option::is_none) {
            continue;
        }
        let ins: Vec<Lin> = eqn
            .inputs
            .iter()
            .map(|a| match a {
                Atom::Literal(x, _) => Lin::Known(x.clone()),
                Atom::Var(v) => match consts.get(&v.id) {
                    Some(x) => Lin::Known((*x).clone()),
                    None => Lin::Linear(v.aval.clone()),
                },
            })
            .collect();
        let rule = eqn.prim.transpose.ok_or_else(|| {
            Error::refused(
                Exception::NotImplementedError,
                format!(
                    "Transpose rule (for reverse-mode differentiation) for '{}' not implemented",
                    eqn.prim.name
                ),
            )
        })?;
        let in_cts = rule(eqn.prim, &outs, &ins, &eqn.params)?;
        for ((a, lin), c) in eqn.inputs.iter().zip(&ins).zip(in_cts) {
            if let (Atom::Var(v), Lin::Linear(_), Some(c)) = (a, lin, c) {
                add(&mut cts, v.id, c)?;
            }
        }
    }
    Ok(j.invars.iter().map(|v| cts.remove(&v.id)).collect())
}
