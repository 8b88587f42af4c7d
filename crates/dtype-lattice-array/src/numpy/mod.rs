//! `jax.numpy`'s functions on [`Array`]s, built on the primitives: the operands are promoted
//! as the configured [`Rules`] say (JAX's standard promotion by default; strict mode and x64
//! honoured), Python scalars (Rust numbers) are weakly typed, shapes broadcast as NumPy's do,
//! and the `lax` primitive computes. Errors carry JAX's exception class and message.
//!
//! ```
//! use dtype_lattice::DType;
//! use dtype_lattice_array::{numpy as jnp, Array};
//! use half::bf16;
//!
//! let x = Array::from_vec(vec![bf16::from_f32(1.5), bf16::from_f32(2.0)]);
//! let y = jnp::multiply(&x, 2.0)?;                 // a Python float is weak: bfloat16 stays
//! assert_eq!(y.dtype(), DType::BFloat16);
//! let z = jnp::add(&Array::from_vec(vec![1i8, 2]), &Array::from_vec(vec![1u8]))?;
//! assert_eq!((z.dtype(), z.to_vec::<i16>()?), (DType::Int16, vec![2, 3])); // int8 + uint8, broadcast
//! let s = (&x + 1.0)?;                             // operators answer Results
//! assert_eq!(s.astype(DType::Float32)?.to_vec::<f32>()?, [2.5, 3.0]);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

mod creation;
mod dispatch;
mod functions;
mod ml;
mod npmath;
mod ops;
mod shape;
mod simplify;

use std::sync::RwLock;

use dtype_lattice::error::{Exception, Reason};
use dtype_lattice::{DType, Error, Kind, Operand, Rules, Value};
use num_complex::Complex;

use crate::array::{Array, ShapedArray, Storage, layout, py_shape};
use crate::prim::{self, Param, Params, Primitive};

pub use creation::*;
pub use dispatch::JitDispatch;
pub use functions::*;
pub use ops::*;
pub use shape::*;

/// The promotion rules `jax.numpy`'s functions follow (`jax_enable_x64`,
/// `jax_numpy_dtype_promotion`): JAX's standard rules, x64 off, unless set.
static CONFIG: RwLock<Option<Rules>> = RwLock::new(None);

/// Bumped by [`set_rules`] after each write of [`CONFIG`]: a thread's cached copy of the
/// rules is current while its generation is.
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How elements convert under the rules in force: NumPy's (`astype` with ml_dtypes) for the
/// NumPy rule sets, JAX's (XLA's CPU backend) otherwise.
pub fn semantics() -> crate::convert::Semantics {
    let set = rules().rule_set();
    if set == dtype_lattice::RuleSet::NUMPY || set == dtype_lattice::RuleSet::NUMPY_LEGACY {
        crate::convert::Semantics::NumPy
    } else {
        crate::convert::Semantics::Jax
    }
}

thread_local! {
    /// [`with_rules`]'s override on this thread (JAX's `jax.enable_x64()` context managers).
    static SCOPED: std::cell::Cell<Option<Rules>> = const { std::cell::Cell::new(None) };
    /// The rules [`rules`] last read from [`CONFIG`] on this thread, with their generation.
    static CACHED: std::cell::Cell<Option<(u64, Rules)>> = const { std::cell::Cell::new(None) };
}

/// The rules in force: [`with_rules`]'s on this thread, else [`set_rules`]'s, else JAX's
/// defaults (standard promotion, x64 off).
pub fn rules() -> Rules {
    if let Some(r) = SCOPED.with(std::cell::Cell::get) {
        return r;
    }
    // Each thread keeps the last rules it read with the generation they had: a relaxed load
    // instead of the lock's two atomic read-modify-writes on every call (an 8-element add
    // asks twice).
    let generation = GENERATION.load(std::sync::atomic::Ordering::Acquire);
    if let Some((g, r)) = CACHED.with(std::cell::Cell::get)
        && g == generation
    {
        return r;
    }
    let r = CONFIG
        .read()
        .map_or_else(|e| *e.into_inner(), |g| *g)
        .unwrap_or_else(Rules::jax);
    CACHED.with(|c| c.set(Some((generation, r))));
    r
}

/// Runs `f` with `rules` in force on this thread only (as JAX's configuration context
/// managers do), then restores the previous rules, also when `f` panics.
///
/// ```
/// use dtype_lattice::{DType, Rules};
/// use dtype_lattice_array::{numpy as jnp, Array};
/// let x = Array::from_vec(vec![1i32, 2]);
/// let y = jnp::with_rules(Rules::jax().x64(true), || jnp::add(&x, 2.5))?;
/// assert_eq!(y.dtype(), DType::Float64);
/// assert_eq!(jnp::add(&x, 2.5)?.dtype(), DType::Float32);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
pub fn with_rules<R>(rules: Rules, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Rules>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPED.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SCOPED.with(|s| s.replace(Some(rules))));
    f()
}

/// Sets the rules for every later call (`jax.config.update("jax_enable_x64", True)` is
/// `set_rules(Rules::jax().x64(true))`).
pub fn set_rules(rules: Rules) {
    match CONFIG.write() {
        Ok(mut g) => *g = Some(rules),
        Err(e) => *e.into_inner() = Some(rules),
    }
    // After the write: a thread that sees the new generation reads the new rules.
    GENERATION.fetch_add(1, std::sync::atomic::Ordering::Release);
}

/// An operand of a `jax.numpy` function: an array, or a Python scalar (a Rust number or bool:
/// weakly typed, as JAX treats Python scalars).
#[derive(Clone, Debug)]
pub enum ArrayLike<'a> {
    /// An array.
    Array(&'a Array),
    /// An owned array (the result of an earlier operation).
    Owned(Array),
    /// A Python scalar.
    Scalar(Value),
    /// An earlier step's error, carried to the next operation (see the operators).
    Failed(Box<Error>),
}

impl<'a> From<&'a Array> for ArrayLike<'a> {
    fn from(a: &'a Array) -> Self {
        ArrayLike::Array(a)
    }
}

impl From<Array> for ArrayLike<'_> {
    fn from(a: Array) -> Self {
        ArrayLike::Owned(a)
    }
}

macro_rules! scalar_like {
    ($($t:ty => |$v:ident| $e:expr;)*) => {$(
        impl From<$t> for ArrayLike<'_> {
            fn from($v: $t) -> Self {
                ArrayLike::Scalar($e)
            }
        }
    )*};
}

scalar_like! {
    f64 => |v| Value::Float(v);
    f32 => |v| Value::Float(f64::from(v));
    i64 => |v| Value::Int(i128::from(v));
    i32 => |v| Value::Int(i128::from(v));
    bool => |v| Value::Bool(v);
    Complex<f64> => |v| Value::Complex(v.re, v.im);
}

impl ArrayLike<'_> {
    /// What it contributes to promotion.
    fn operand(&self) -> Operand {
        match self {
            ArrayLike::Array(a) => Operand::Array {
                dtype: a.dtype(),
                weak: a.weak_type(),
            },
            ArrayLike::Owned(a) => Operand::Array {
                dtype: a.dtype(),
                weak: a.weak_type(),
            },
            ArrayLike::Scalar(v) => Operand::Literal(*v),
            // Never promoted: `promote_and_broadcast` returns the error first.
            ArrayLike::Failed(_) => Operand::PyType(dtype_lattice::PyType::Int),
        }
    }

    /// As an array of `dtype` (weak or not), shape unchanged.
    fn as_array(&self) -> Option<&Array> {
        match self {
            ArrayLike::Array(a) => Some(a),
            ArrayLike::Owned(a) => Some(a),
            _ => None,
        }
    }

    fn shape(&self) -> &[usize] {
        match self {
            ArrayLike::Array(a) => a.shape(),
            ArrayLike::Owned(a) => a.shape(),
            ArrayLike::Scalar(_) | ArrayLike::Failed(_) => &[],
        }
    }

    pub(crate) fn to_array(&self, dtype: DType, weak: bool) -> Result<Array, Error> {
        let a = match self {
            ArrayLike::Array(a) => (*a).clone(),
            ArrayLike::Owned(a) => a.clone(),
            ArrayLike::Scalar(v) => return python_scalar_array(*v, dtype, weak),
            ArrayLike::Failed(e) => return Err((**e).clone()),
        };
        if a.dtype() == dtype && a.weak_type() == weak {
            return Ok(a);
        }
        let params = Params::new()
            .with("new_dtype", Param::DType(dtype))
            .with("weak_type", Param::Bool(weak))
            .with("sharding", Param::None);
        prim::bind1(&prim::CONVERT_ELEMENT_TYPE, &[&a], &params)
    }
}

/// A Python scalar as a zero-dimensional array of `dtype`, as JAX converts it
/// (`lax._convert_element_type(x, dtype, weak_type)`).
pub(crate) fn scalar_array(v: Value, dtype: DType, weak: bool) -> Result<Array, Error> {
    if dtype.is_float0() {
        // lax.full((), 1, float0): whatever the value, float0's one element.
        return Ok(Array::float0(ShapedArray::new(&[], dtype, weak)));
    }
    let (width, words) = layout(dtype);
    let mut bytes = vec![0u8; width * words];
    encode_value(v, dtype, semantics(), &mut bytes).map_err(|e| match e.reason() {
        Reason::ValueOutOfRange { .. } => Error::refused(
            Exception::OverflowError,
            format!("Python int {v} too large to convert to {dtype}"),
        ),
        _ => e,
    })?;
    Ok(Array::from_parts(
        ShapedArray::new(&[], dtype, weak),
        Storage::from_bytes(width, &bytes),
    ))
}

/// A Python scalar operand of a `jax.numpy` function as a zero-dimensional array of `dtype`,
/// as JAX gets it there: a `bool`, `float` or `complex` becomes a jit argument of its Python
/// type's canonical dtype on the host (NumPy's conversion: `np.float32(1e-40)` keeps the
/// subnormal), and XLA's `convert` takes it to `dtype` if that differs (denormals off there);
/// an `int` converts to `dtype` at once, wrapping, as `lax._convert_element_type` does (the
/// jitted functions have refused ints out of range before). Under NumPy's rules,
/// [`scalar_array`].
pub(crate) fn python_scalar_array(v: Value, dtype: DType, weak: bool) -> Result<Array, Error> {
    let r = rules();
    let host = match v {
        _ if is_numpy(&r) || dtype.is_extended() => None,
        Value::Bool(_) => Some(DType::Bool),
        Value::Float(_) => Some(DType::Float64),
        Value::Complex(..) => Some(DType::Complex128),
        Value::Int(_) => None,
    };
    let Some(host) = host.map(|d| d.canonicalize(r.options().x64)) else {
        return scalar_array(v, dtype, weak);
    };
    let (hw, hn) = layout(host);
    let mut staged = vec![0u8; hw * hn];
    encode_value(v, host, crate::convert::Semantics::NumPy, &mut staged)?;
    let (width, words) = layout(dtype);
    let mut bytes = vec![0u8; width * words];
    crate::convert::convert_element(
        crate::convert::Semantics::Jax,
        host,
        &staged,
        dtype,
        &mut bytes,
    )
    .map_err(|e| {
        Error::from(Reason::InvalidArgument {
            argument: "value".into(),
            reason: e.to_string(),
        })
    })?;
    Ok(Array::from_parts(
        ShapedArray::new(&[], dtype, weak),
        Storage::from_bytes(width, &bytes),
    ))
}

/// Writes one element of `dtype` holding the Python value `v` (converted as `sem` converts
/// a float64; integers exactly) into `out`.
pub(crate) fn encode_value(
    v: Value,
    dtype: DType,
    sem: crate::convert::Semantics,
    out: &mut [u8],
) -> Result<(), Error> {
    let value = match (dtype.kind(), v) {
        // A Python int converted to a narrower integer dtype wraps (XLA's convert; the
        // promotion rules have already refused ints outside the default integer's range).
        (Kind::SignedInt | Kind::UnsignedInt, Value::Int(_)) => v,
        // Floats are rounded by the converter below (NaN to float4 included), not here.
        (Kind::Float, Value::Float(_)) => v,
        _ => v.cast(dtype)?,
    };
    let component = |x: f64, out: &mut [u8], t: DType| {
        crate::convert::encode_f64(sem, t, x, out).map_err(|e| {
            Error::from(Reason::InvalidArgument {
                argument: "value".into(),
                reason: e.to_string(),
            })
        })
    };
    match (dtype.kind(), value) {
        (Kind::Complex, Value::Complex(re, im)) => {
            let half = out.len() / 2;
            let (a, b) = out.split_at_mut(half);
            component(re, a, dtype.component())?;
            component(im, b, dtype.component())
        }
        (_, Value::Bool(b)) => component(f64::from(u8::from(b)), out, dtype),
        (_, Value::Float(x)) => component(x, out, dtype),
        (_, Value::Int(i)) => {
            // Integers are exact: their two's complement bytes, little-endian.
            let raw = crate::convert::ints::wrap(i, dtype.bits());
            let n = out.len();
            out.copy_from_slice(&raw.to_le_bytes()[..n]);
            Ok(())
        }
        (_, Value::Complex(re, _)) => component(re, out, dtype),
    }
}

/// NumPy's broadcasting of shapes (aligned at the right; 1 stretches).
///
/// # Errors
///
/// JAX's `ValueError` for incompatible shapes.
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Result<Vec<usize>, Error> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[rank - s.len() + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                let names: Vec<String> = shapes.iter().map(|s| py_shape(s)).collect();
                return Err(Error::refused(
                    Exception::ValueError,
                    format!(
                        "Incompatible shapes for broadcasting: shapes=[{}]",
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// `x` broadcast to `shape` (`jnp.broadcast_to` with NumPy's rank promotion).
pub(crate) fn broadcast_to(x: Array, shape: &[usize]) -> Result<Array, Error> {
    prim::lax::broadcast_to(&x, shape)
}

/// Which dtype family a function computes in after promotion (`jnp`'s `promote_args`,
/// `promote_args_inexact`, `promote_args_numeric`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// The promoted dtype itself.
    Any,
    /// Booleans and integers become the default float (NumPy: the smallest float its loops
    /// take).
    Inexact,
    /// Booleans become the default integer.
    Numeric,
}

/// `dtype` moved into `family` under `rules` (JAX's `to_inexact_dtype`/`to_numeric_dtype`;
/// NumPy's ufunc loop choice for the inexact family).
pub(crate) fn family_dtype(rules: &Rules, family: Family, dtype: DType) -> DType {
    let numpy = is_numpy(rules);
    let x64 = rules.options().x64 || numpy;
    match (family, dtype.kind()) {
        (Family::Inexact, Kind::Bool | Kind::SignedInt | Kind::UnsignedInt) if numpy => {
            match dtype.bits() {
                1 | 8 => DType::Float16,
                16 => DType::Float32,
                _ => DType::Float64,
            }
        }
        // JAX's to_inexact_dtype: 64-bit integers become float64 (with x64), the others
        // float32; int2 and uint2 stay as they are (and the primitive refuses them).
        (Family::Inexact, Kind::Bool | Kind::SignedInt | Kind::UnsignedInt) => match dtype.bits() {
            2 => dtype,
            64 if x64 => DType::Float64,
            _ => DType::Float32,
        },
        // to_numeric_dtype: bool becomes int32, with x64 too.
        (Family::Numeric, Kind::Bool) if !numpy => DType::Int32,
        _ => dtype,
    }
}

/// The comparison functions (bool results).
pub(crate) const COMPARISONS: &[&str] = &[
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
];

/// NumPy's float32 loop of the binary ufunc `name` on two float32 arrays, which keeps
/// subnormals (the primitives read them as zeros and flush results, as XLA does): `f` on the
/// values in float64, where float32's subnormals are normal numbers, rounded back once. Exact
/// for the comparisons, `maximum` and `minimum`; correctly rounded for `add`, `subtract`,
/// `multiply`, `true_divide` and `remainder` (one operation each: float64 holds 2·24 + 2
/// bits); `power` within an ulp of `powf`. `None` for other functions or operands, and
/// outside the NumPy rules.
pub(crate) fn float32_in_float64(
    name: &str,
    x: &ArrayLike<'_>,
    y: &ArrayLike<'_>,
    f: fn(ArrayLike<'static>, ArrayLike<'static>) -> Result<Array, Error>,
) -> Option<Result<Array, Error>> {
    const FLOAT: &[&str] = &[
        "maximum",
        "minimum",
        "add",
        "subtract",
        "multiply",
        "true_divide",
        "remainder",
        "power",
    ];
    let (a, b) = (x.as_array()?, y.as_array()?);
    if !(COMPARISONS.contains(&name) || FLOAT.contains(&name))
        || a.dtype() != DType::Float32
        || b.dtype() != DType::Float32
        || !is_numpy(&rules())
    {
        return None;
    }
    Some((|| {
        let r = f(
            ArrayLike::Owned(a.astype(DType::Float64)?),
            ArrayLike::Owned(b.astype(DType::Float64)?),
        )?;
        if FLOAT.contains(&name) {
            r.astype(DType::Float32)
        } else {
            Ok(r)
        }
    })())
}

/// Whether the rules are NumPy's (no weak types, NumPy's loops).
pub(crate) fn is_numpy(rules: &Rules) -> bool {
    let set = rules.rule_set();
    set == dtype_lattice::RuleSet::NUMPY || set == dtype_lattice::RuleSet::NUMPY_LEGACY
}

/// The default integer dtype (`int32`, `int64` with x64; NumPy's `int64`).
pub(crate) fn default_int(rules: &Rules) -> DType {
    if rules.options().x64 || is_numpy(rules) {
        DType::Int64
    } else {
        DType::Int32
    }
}

/// The operands promoted together (under `op`'s checks, e.g. JAX's `OverflowError` for a
/// Python int out of range) and broadcast to one shape.
fn promote_and_broadcast(
    op: dtype_lattice::Op,
    args: &[ArrayLike<'_>],
) -> Result<Vec<Array>, Error> {
    promote_family(Some(op), Family::Any, args)
}

/// The operands promoted together into `family` (with `op`'s checks) and broadcast.
pub(crate) fn promote_family(
    op: Option<dtype_lattice::Op>,
    family: Family,
    args: &[ArrayLike<'_>],
) -> Result<Vec<Array>, Error> {
    // jnp's promote_shapes comes first: operands of different ranks (0-d ones aside) must
    // broadcast (NumPy's ValueError), and get leading dimensions of size 1; the primitive
    // then broadcasts dimensions of size 1 itself (or refuses with lax's TypeError).
    let shapes: Vec<&[usize]> = args.iter().map(ArrayLike::shape).collect();
    if is_numpy(&rules()) && broadcast_shapes(&shapes).is_err() {
        // A ufunc broadcasts every dimension (NumPy's ValueError), not only ranks, after it
        // found its loop (a TypeError first) and converted Python ints (an OverflowError).
        if let Some(op) = op {
            let operands: Vec<Operand> = args.iter().map(ArrayLike::operand).collect();
            rules().op_result(op, &operands)?;
        }
        let names: Vec<String> = shapes.iter().map(|s| py_shape(s)).collect();
        return Err(Error::refused(
            Exception::ValueError,
            format!(
                "operands could not be broadcast together with shapes {}",
                names.join(" ")
            ),
        ));
    }
    let ranks: Vec<usize> = shapes
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| s.len())
        .collect();
    let rank_differ = ranks.windows(2).any(|w| w[0] != w[1]);
    let rank = if rank_differ {
        broadcast_shapes(&shapes)?.len()
    } else {
        0
    };
    let arrays = promote_only(op, family, args)?;
    if !rank_differ {
        return Ok(arrays);
    }
    arrays
        .into_iter()
        .map(|a| {
            if a.ndim() == rank {
                return Ok(a);
            }
            let mut shape = vec![1usize; rank - a.ndim()];
            shape.extend_from_slice(a.shape());
            broadcast_to(a, &shape)
        })
        .collect()
}

/// One operand promoted into `family` alone, without the checks of jitted functions (a
/// Python int out of the default integer's range wraps, as `lax.convert_element_type`
/// outside `jit` converts it).
pub(crate) fn promote_unchecked(family: Family, x: &ArrayLike<'_>) -> Result<Array, Error> {
    if let ArrayLike::Failed(e) = x {
        return Err((**e).clone());
    }
    let rules = rules();
    let p = rules.promoted(&[x.operand()])?;
    let dtype = family_dtype(&rules, family, p.dtype);
    x.to_array(dtype, p.weak_type && !is_numpy(&rules))
}

/// The operands promoted together into `family` (with `op`'s checks), shapes unchanged.
pub(crate) fn promote_only(
    op: Option<dtype_lattice::Op>,
    family: Family,
    args: &[ArrayLike<'_>],
) -> Result<Vec<Array>, Error> {
    if let Some(ArrayLike::Failed(e)) = args.iter().find(|a| matches!(a, ArrayLike::Failed(_))) {
        return Err((**e).clone());
    }
    let rules = rules();
    let operands: Vec<Operand> = args.iter().map(ArrayLike::operand).collect();
    // JAX checks Python ints as `add` does; NumPy converts them without checks where no ufunc
    // runs (`np.where` wraps them).
    // A function that is no operation (`where`, `concatenate`) takes float0 arrays, as jnp's.
    let float0 = operands
        .iter()
        .any(|o| o.dtype().is_some_and(DType::is_float0));
    if op.is_some() || !(is_numpy(&rules) || float0) {
        rules.op_result(op.unwrap_or(dtype_lattice::Op::Add), &operands)?;
    }
    let p = rules.promoted(&operands)?;
    let dtype = family_dtype(&rules, family, p.dtype);
    let weak = p.weak_type && !is_numpy(&rules);
    args.iter().map(|a| a.to_array(dtype, weak)).collect()
}

/// Two arrays of one dtype, weak type and shape, which promote to themselves under JAX's
/// rule sets and go straight to the primitive: not bool (`add` is `or` there), complex
/// (comparisons) or a key; not 64-bit where x64 is off (canonicalised). Never under NumPy's
/// rules, where each function runs NumPy's loop.
pub(crate) fn same_operands<'b>(
    x: &'b ArrayLike<'_>,
    y: &'b ArrayLike<'_>,
) -> Option<(&'b Array, &'b Array)> {
    let (a, b) = (x.as_array()?, y.as_array()?);
    let d = a.dtype();
    let plain = d == b.dtype()
        && a.weak_type() == b.weak_type()
        && crate::array::same_shape(a.shape(), b.shape())
        && !d.is_extended()
        && !d.is_float0()
        && d != DType::Bool
        && d.kind() != Kind::Complex;
    if !plain {
        return None;
    }
    let rules = rules();
    let canonical = d.bits() < 64 || rules.options().x64;
    (canonical && !is_numpy(&rules)).then_some((a, b))
}

/// A binary `jax.numpy` function: promotion by `op`'s rules, then the `lax` primitive
/// (`on_bool` for bool operands where jnp substitutes one: `add` is `or`, `multiply` `and`).
/// Its caller has tried [`same_operands`] first.
fn binary<'a>(
    op: dtype_lattice::Op,
    prim: &'static Primitive,
    on_bool: Option<&'static Primitive>,
    x: impl Into<ArrayLike<'a>>,
    y: impl Into<ArrayLike<'a>>,
) -> Result<Array, Error> {
    let (x, y) = (x.into(), y.into());
    let args = promote_and_broadcast(op, &[x, y])?;
    let prim = match on_bool {
        Some(p) if args[0].dtype() == DType::Bool => p,
        _ => prim,
    };
    if args[0].dtype().kind() == dtype_lattice::Kind::Complex
        && matches!(prim.name, "lt" | "le" | "gt" | "ge")
    {
        return prim::elementwise::complex_comparison(prim, &args[0], &args[1]);
    }
    prim::bind1(prim, &[&args[0], &args[1]], &Params::new())
}
