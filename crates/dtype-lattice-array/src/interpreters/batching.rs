//! Batching (JAX's `BatchTrace` and `jax.vmap`): each tracer carries the whole batch of a
//! value and its batch dimension; a primitive's batching rule ([`crate::lax::batching`]),
//! bound in the parent trace, computes the batched outputs and where their batch dimensions
//! are. A value the same for every example is not a tracer at all (batch dimension `None`).

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::stage::{apply, inlined};
use crate::array::{Array, py_shape};
use crate::core::Pytree;
use crate::core::{Outputs, Params, Primitive};
use crate::core::{Payload, Trace, TraceTag, Tracer, check_alive, current, with_trace};
use crate::lax::batching::{broadcast_axis, example_aval, moveaxis};

/// A batched value: the whole batch and the dimension the examples are stacked along.
struct Batched {
    val: Array,
    bdim: usize,
}

impl Payload for Batched {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

pub(crate) struct BatchTrace {
    tag: Arc<TraceTag>,
    parent: Option<Arc<dyn Trace>>,
    /// The axis size: how many examples.
    size: usize,
}

impl BatchTrace {
    /// Ends the transformation.
    pub(crate) fn kill(&self) {
        self.tag.kill();
    }

    pub(crate) fn new(parent: Option<Arc<dyn Trace>>, size: usize) -> BatchTrace {
        BatchTrace {
            tag: TraceTag::new("BatchTracer", "vmap"),
            parent,
            size,
        }
    }

    /// The batch behind `x` and its batch dimension; any other array (concrete, or a tracer
    /// of another trace) is the same for every example.
    pub(crate) fn unpack(&self, x: &Array) -> (Array, Option<usize>) {
        match x.tracer().and_then(|t| t.payload_of::<Batched>(&self.tag)) {
            Some(b) => (b.val.clone(), Some(b.bdim)),
            None => (x.clone(), None),
        }
    }

    /// A tracer of the batch `val` batched along `bdim` (`None`: `val` itself).
    pub(crate) fn pack(&self, val: Array, bdim: Option<usize>) -> Array {
        match bdim {
            None => val,
            Some(bdim) => {
                let aval = example_aval(val.aval(), Some(bdim));
                Array::from_tracer(aval, Tracer::new(&self.tag, Batched { val, bdim }))
            }
        }
    }
}

impl Trace for BatchTrace {
    fn process_primitive(
        &self,
        prim: &'static Primitive,
        inputs: &[&Array],
        params: &Params,
    ) -> Result<Outputs, Error> {
        check_alive(inputs)?;
        if let Some(j) = inlined(prim, params) {
            return apply(&j, inputs);
        }
        let (vals, dims): (Vec<Array>, Vec<Option<usize>>) =
            inputs.iter().map(|x| self.unpack(x)).unzip();
        if dims.iter().all(Option::is_none) {
            let refs: Vec<&Array> = vals.iter().collect();
            return with_trace(self.parent.clone(), || {
                crate::core::bind(prim, &refs, params)
            });
        }
        // The examples' avals first: a primitive refuses a batch exactly as it refuses one
        // example (JAX's shape rules run on the examples' avals too).
        let avals: Vec<&crate::array::ShapedArray> = inputs.iter().map(|x| x.aval()).collect();
        prim.abstract_eval(&avals, params)?;
        let rule = prim.batch.ok_or_else(|| {
            Error::refused(
                Exception::NotImplementedError,
                format!("Batching rule for '{}' not implemented", prim.name),
            )
        })?;
        let (outs, out_dims) = with_trace(self.parent.clone(), || {
            rule(prim, self.size, &vals, &dims, params)
        })?;
        Ok(outs
            .into_iter()
            .zip(out_dims.into_iter().chain(std::iter::repeat(None)))
            .map(|(o, d)| self.pack(o, d))
            .collect())
    }

    /// `vmap(custom_jvp_call(f, f_jvp))` is `custom_jvp_call(vmap(f), vmap(f_jvp))` (and
    /// likewise for `custom_vjp`): the function and its rules mapped, handed to the parent.
    fn process_custom(
        &self,
        rule: &crate::core::Custom,
        args: &[Array],
    ) -> Result<Vec<Array>, Error> {
        let refs: Vec<&Array> = args.iter().collect();
        check_alive(&refs)?;
        let (vals, dims): (Vec<Array>, Vec<Option<usize>>) =
            args.iter().map(|x| self.unpack(x)).unzip();
        // Even with no mapped operand the function is mapped: it may close over this trace's
        // tracers (JEP 4008), which the map, run as this trace, sees as batches.
        let batched = rule.batched(dims, Some((self.tag.clone(), self.size)));
        let outs = with_trace(self.parent.clone(), || batched.dispatch(&vals))?;
        Ok(outs.into_iter().map(|o| self.pack(o, Some(0))).collect())
    }
}

/// Which dimension of each leaf is mapped (`None`: the leaf is the same for every example):
/// one for every leaf, or one per leaf in order.
///
/// ```
/// use dtype_lattice_array::MapAxes;
/// assert_eq!(MapAxes::from(0), MapAxes::All(Some(0)));
/// assert_eq!(MapAxes::from([Some(1), None]), MapAxes::Leaves(vec![Some(1), None]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapAxes {
    /// The same for every leaf (JAX's `in_axes=0`, `out_axes=None`).
    All(Option<usize>),
    /// One per leaf, in the pytree's leaf order (JAX's tuple of axes, flattened).
    Leaves(Vec<Option<usize>>),
}

impl Default for MapAxes {
    /// Axis 0 everywhere, as JAX's defaults.
    fn default() -> MapAxes {
        MapAxes::All(Some(0))
    }
}

impl From<usize> for MapAxes {
    fn from(axis: usize) -> MapAxes {
        MapAxes::All(Some(axis))
    }
}

impl From<Option<usize>> for MapAxes {
    fn from(axis: Option<usize>) -> MapAxes {
        MapAxes::All(axis)
    }
}

impl From<Vec<Option<usize>>> for MapAxes {
    fn from(axes: Vec<Option<usize>>) -> MapAxes {
        MapAxes::Leaves(axes)
    }
}

impl From<&[Option<usize>]> for MapAxes {
    fn from(axes: &[Option<usize>]) -> MapAxes {
        MapAxes::Leaves(axes.to_vec())
    }
}

impl<const N: usize> From<[Option<usize>; N]> for MapAxes {
    fn from(axes: [Option<usize>; N]) -> MapAxes {
        MapAxes::Leaves(axes.to_vec())
    }
}

impl MapAxes {
    /// One axis per leaf of `n`, or JAX's `ValueError` for a list of another length.
    fn per_leaf(&self, what: &str, n: usize) -> Result<Vec<Option<usize>>, Error> {
        match self {
            MapAxes::All(a) => Ok(vec![*a; n]),
            MapAxes::Leaves(v) if v.len() == n => Ok(v.clone()),
            MapAxes::Leaves(v) => Err(Error::refused(
                Exception::ValueError,
                format!(
                    "vmap {what} specification must be a tree prefix of the corresponding \
                     value: got {} axes for {n} leaves",
                    v.len()
                ),
            )),
        }
    }
}

/// A function mapped over a leading (or any) axis of its inputs ([`vmap`]).
pub struct Vmap<F> {
    f: F,
    in_axes: MapAxes,
    out_axes: MapAxes,
    /// The tag of an enclosing `vmap` whose tracers `f` may close over (a custom function's
    /// rule mapped by that `vmap`'s own trace, as JAX's `batch_subtrace` does).
    within: Option<(Arc<TraceTag>, usize)>,
}

/// `jax.vmap(f)`: `f` applied to every example of a batch at once, as one program on the whole
/// batch: each primitive `f` applies runs its batching rule instead of looping over the
/// examples. By default every input leaf is mapped along axis 0 and every output leaf gets
/// the examples along axis 0; [`Vmap::in_axes`] and [`Vmap::out_axes`] choose other axes, or
/// `None` for an input shared by every example (an output the same for every example is
/// broadcast to the batch unless its out axis is `None` too).
///
/// ```
/// use dtype_lattice_array::{Array, vmap, numpy as jnp};
/// let xs = Array::from_shape_vec(&[3, 2], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let w = Array::from_vec(vec![10.0f32, 100.0]);
/// // One dot product per row of xs; w shared.
/// let dots = vmap(|(x, w): (Array, Array)| jnp::dot(&x, &w)).in_axes([Some(0), None]);
/// let y: Array = dots.call(&(xs.clone(), w))?;
/// assert_eq!(y.to_vec::<f32>()?, [210.0, 430.0, 650.0]);
/// // Columns instead of rows, results along axis 1 of a (1, 2) array.
/// let sums = vmap(|x: Array| jnp::sum(&x, Default::default(), true)).in_axes(1).out_axes(1);
/// let s: Array = sums.call(&xs)?;
/// assert_eq!((s.shape(), s.to_vec::<f32>()?), (&[1usize, 2][..], vec![9.0, 12.0]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
pub fn vmap<F>(f: F) -> Vmap<F> {
    Vmap {
        f,
        in_axes: MapAxes::default(),
        out_axes: MapAxes::default(),
        within: None,
    }
}

impl<F> Vmap<F> {
    /// The same map run as the trace tagged `tag` (an enclosing `vmap` that is still
    /// running): tracers of that trace closed over by `f` are its batches, not escaped values.
    pub(crate) fn within(mut self, tag: Option<(Arc<TraceTag>, usize)>) -> Vmap<F> {
        self.within = tag;
        self
    }

    /// The mapped axis of every input leaf (`in_axes=`): one for all, or one per leaf.
    #[must_use]
    pub fn in_axes(mut self, axes: impl Into<MapAxes>) -> Vmap<F> {
        self.in_axes = axes.into();
        self
    }

    /// Where every output leaf gets its examples (`out_axes=`): one for all, or one per leaf;
    /// `None` for an output the same for every example.
    #[must_use]
    pub fn out_axes(mut self, axes: impl Into<MapAxes>) -> Vmap<F> {
        self.out_axes = axes.into();
        self
    }

    /// Applies the mapped function to a batch.
    ///
    /// # Errors
    ///
    /// JAX's `ValueError`s: an in axis beyond a leaf's rank (`vmap was requested to map its
    /// argument along axis 1, which implies that its rank should be at least 2, but is only 1
    /// (its shape is (3,))`), mapped axes of different sizes (`vmap got inconsistent sizes
    /// for array axes to be mapped: ...`; leaves are named `args[i]` by their index), no
    /// mapped input, an out axis beyond an output's rank or `None` for a batched output, axes
    /// lists of the wrong length; `NotImplementedError` for a primitive without a batching
    /// rule; whatever `f` returns.
    pub fn call<I, O>(&self, args: &I) -> Result<O, Error>
    where
        I: Pytree,
        O: Pytree,
        F: Fn(I) -> Result<O, Error>,
    {
        let leaves = args.leaves();
        let in_axes = self.in_axes.per_leaf("in_axes", leaves.len())?;
        let size = match &self.within {
            Some((_, size)) => *size,
            None => axis_size(&leaves, &in_axes)?,
        };
        let mut trace = BatchTrace::new(current(), size);
        if let Some((tag, _)) = &self.within {
            trace.tag = tag.clone();
        }
        let trace = Arc::new(trace);
        let inputs: Vec<Array> = leaves
            .into_iter()
            .zip(&in_axes)
            .map(|(x, a)| trace.pack(x, *a))
            .collect();
        let input = args.rebuild(&mut inputs.into_iter())?;
        let as_trace: Arc<dyn Trace> = trace.clone();
        let result = with_trace(Some(as_trace), || (self.f)(input)).and_then(|out| {
            let outs = out.leaves();
            let out_axes = self.out_axes.per_leaf("out_axes", outs.len())?;
            let n = outs.len();
            let moved = outs
                .iter()
                .zip(&out_axes)
                .enumerate()
                .map(|(i, (x, dst))| {
                    let (val, src) = trace.unpack(x);
                    let path = if n == 1 {
                        String::new()
                    } else {
                        format!("[{i}]")
                    };
                    match_axis(size, src, *dst, &val, &path)
                })
                .collect::<Result<Vec<Array>, Error>>()?;
            out.rebuild(&mut moved.into_iter())
        });
        if self.within.is_none() {
            trace.tag.kill();
        }
        result
    }
}

/// The axis size of the mapped leaves, with JAX's `ValueError`s.
fn axis_size(leaves: &[Array], in_axes: &[Option<usize>]) -> Result<usize, Error> {
    let refuse = |msg: String| Err(Error::refused(Exception::ValueError, msg));
    if leaves.is_empty() {
        return refuse(
            "vmap wrapped function must be passed at least one argument containing an array or \
             axis_size must be specified, got empty *args=() and **kwargs={}"
                .into(),
        );
    }
    let mut sizes: Vec<Option<usize>> = Vec::with_capacity(leaves.len());
    for (x, a) in leaves.iter().zip(in_axes) {
        match *a {
            Some(axis) if axis >= x.ndim() => {
                return refuse(format!(
                    "vmap was requested to map its argument along axis {axis}, which implies \
                     that its rank should be at least {}, but is only {} (its shape is {})",
                    axis + 1,
                    x.ndim(),
                    py_shape(x.shape())
                ));
            }
            Some(axis) => sizes.push(Some(x.shape()[axis])),
            None => sizes.push(None),
        }
    }
    // Sizes by how many axes have them (most first, ties in order of appearance).
    let mut counts: Vec<(usize, usize)> = Vec::new();
    for s in sizes.iter().flatten() {
        match counts.iter_mut().find(|(size, _)| size == s) {
            Some((_, n)) => *n += 1,
            None => counts.push((*s, 1)),
        }
    }
    match counts.as_slice() {
        [] => refuse(
            "vmap must have at least one non-None value in in_axes or axis_size must be \
             specified"
                .into(),
        ),
        [(size, _)] => Ok(*size),
        _ => {
            counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
            let first: HashMap<usize, usize> = counts
                .iter()
                .map(|&(s, _)| (s, sizes.iter().position(|&x| x == Some(s)).unwrap_or(0)))
                .collect();
            let mut msg =
                String::from("vmap got inconsistent sizes for array axes to be mapped:\n");
            for (k, &(s, n)) in counts.iter().enumerate() {
                let i = first[&s];
                let x = &leaves[i];
                let example = format!(
                    "axis {} of args[{i}] of type {}[{}]",
                    in_axes[i].unwrap_or(0),
                    x.dtype(),
                    x.shape()
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                );
                msg.push_str(&match (k, n) {
                    (_, 1) => format!("  * one axis had size {s}: {example};\n"),
                    (0, _) => {
                        format!("  * most axes ({n} of them) had size {s}, e.g. {example};\n")
                    }
                    _ => format!("  * some axes ({n} of them) had size {s}, e.g. {example};\n"),
                });
            }
            msg.truncate(msg.len() - 2);
            refuse(msg)
        }
    }
}

/// JAX's `matchaxis`: the batch `val` (batched along `src`) with its examples along `dst`.
fn match_axis(
    size: usize,
    src: Option<usize>,
    dst: Option<usize>,
    val: &Array,
    path: &str,
) -> Result<Array, Error> {
    let out_of_range = |axis: usize, ndim: usize| {
        Err(Error::refused(
            Exception::ValueError,
            format!("axis {axis} is out of bounds for array of dimension {ndim}"),
        ))
    };
    match (src, dst) {
        (None, None) => Ok(val.clone()),
        (Some(s), None) => Err(Error::refused(
            Exception::ValueError,
            format!(
                "at vmap out_axes{path}, got axis spec None but output was batched on axis {s}"
            ),
        )),
        (Some(_), Some(d)) if d >= val.ndim() => out_of_range(d, val.ndim()),
        (Some(s), Some(d)) => moveaxis(val, s, d),
        (None, Some(d)) if d > val.ndim() => out_of_range(d, val.ndim() + 1),
        (None, Some(d)) => broadcast_axis(val, size, d),
    }
}
