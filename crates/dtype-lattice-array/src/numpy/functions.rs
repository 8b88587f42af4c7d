//! `jax.numpy`'s functions beyond the operators, each composed of `lax` primitives exactly as
//! `jax.numpy` composes them (so that results agree bit for bit and staged programs read like
//! JAX's), and the registry [`FUNCTIONS`] by which the `eval` command finds them by name.

use dtype_lattice::error::{Exception, Reason};
use dtype_lattice::{DType, Error, Kind, Op, Value};

use super::keywords::Keywords;
use super::ufuncs::Ufunc;
use super::{
    ArrayLike, Family, broadcast_shapes, broadcast_to, default_int, is_numpy, ml, promote_family,
    promote_only, rules, scalar_array,
};
use crate::array::Array;
use crate::core::Primitive;
use crate::lax::{self, Param, Params};

/// Binds the primitive of a `lax` name (one output).
pub(super) fn lax(
    p: &'static Primitive,
    inputs: &[&Array],
    params: Params,
) -> Result<Array, Error> {
    lax::bind1(p, inputs, &params)
}

pub(super) fn lax1(p: &'static Primitive, x: &Array) -> Result<Array, Error> {
    lax(p, &[x], Params::new())
}

pub(super) fn lax2(p: &'static Primitive, x: &Array, y: &Array) -> Result<Array, Error> {
    lax(p, &[x, y], Params::new())
}

/// `_constant_like(x, v)`: a 0-d constant of `x`'s dtype, strongly typed (a NumPy scalar).
pub(super) fn strong_const(x: &Array, v: Value) -> Result<Array, Error> {
    scalar_array(v, x.dtype(), false)
}

/// `lax._const(x, v)`, or a Python scalar meeting `x` in `jnp`'s promotion: a 0-d constant of
/// `x`'s dtype, weak when `x` is.
pub(super) fn const_like(x: &Array, v: Value) -> Result<Array, Error> {
    scalar_array(v, x.dtype(), x.weak_type())
}

/// `lax.convert_element_type(x, dtype)` (strong), or `x` itself when nothing changes.
fn convert(x: &Array, dtype: DType) -> Result<Array, Error> {
    if x.dtype() == dtype && !x.weak_type() {
        return Ok(x.clone());
    }
    let params = Params::new()
        .with("new_dtype", Param::DType(dtype))
        .with("weak_type", Param::Bool(false))
        .with("sharding", Param::None);
    lax::bind1(&lax::CONVERT_ELEMENT_TYPE, &[x], &params)
}

/// `select_n(which, *cases)`: `cases[which]` elementwise (`jnp.where(c, x, y)` is
/// `select_n(c, y, x)`).
pub(super) fn select(c: &Array, on_true: &Array, on_false: &Array) -> Result<Array, Error> {
    // `jnp`'s `_where` broadcasts the three first (select_n wants one shape).
    let shape = broadcast_shapes(&[c.shape(), on_true.shape(), on_false.shape()])?;
    let c = broadcast_to(c.clone(), &shape)?;
    let t = broadcast_to(on_true.clone(), &shape)?;
    let f = broadcast_to(on_false.clone(), &shape)?;
    lax(&lax::SELECT_N, &[&c, &f, &t], Params::new())
}

/// `x != 0` as bool (`jnp`'s `_to_bool`), `x` itself when already bool.
///
/// Computed, a bfloat16 `x` compared with the constant zero is a test of its bits: LLVM
/// folds XLA's `fpext(x) != 0.0` into one (IEEE's subnormals are nonzero), where the
/// float32 comparison of other dtypes runs with denormals off. So a bfloat16 subnormal is
/// true (`logical_and bfloat16[1e-40] True` is `True` in JAX), a float32 one false. The
/// jaxpr keeps JAX's `ne`.
pub(super) fn to_bool(x: &Array) -> Result<Array, Error> {
    if x.dtype() == DType::Bool {
        return Ok(x.clone());
    }
    if x.dtype() == DType::BFloat16
        && lax::on_xla()
        && crate::core::current().is_none()
        && x.is_concrete()
        && let Ok(v) = x.to_vec::<half::bf16>()
    {
        let nonzero: Vec<bool> = v.iter().map(|b| b.to_bits() & 0x7fff != 0).collect();
        return Ok(Array::from_shape_vec(x.shape(), nonzero)?.with_weak_type(x.weak_type()));
    }
    lax2(&lax::NE, x, &const_like(x, Value::Int(0))?)
}

pub(super) fn one<'a>(x: impl Into<ArrayLike<'a>>, family: Family) -> Result<Array, Error> {
    let v = promote_family(None, family, &[x.into()])?;
    Ok(v.into_iter().next().expect("one operand"))
}

pub(super) fn two<'a>(
    op: Option<Op>,
    family: Family,
    x: impl Into<ArrayLike<'a>>,
    y: impl Into<ArrayLike<'a>>,
) -> Result<(Array, Array), Error> {
    let mut v = promote_family(op, family, &[x.into(), y.into()])?;
    let y = v.pop().expect("two operands");
    let x = v.pop().expect("two operands");
    Ok((x, y))
}

/// `x` as an array without promotion (`ensure_arraylike`): Python scalars become weak arrays.
pub(super) fn arraylike<'a>(x: impl Into<ArrayLike<'a>>) -> Result<Array, Error> {
    one(x, Family::Any)
}

pub(super) fn is_integral_or_bool(d: DType) -> bool {
    matches!(d.kind(), Kind::Bool | Kind::SignedInt | Kind::UnsignedInt)
}

/// `floor_divide` of two operands of one dtype.
pub(super) fn floor_divide_promoted(x: &Array, y: &Array) -> Result<Array, Error> {
    let (x, y) = (x.clone(), y.clone());
    match x.dtype().kind() {
        Kind::UnsignedInt => lax2(&lax::DIV, &x, &y),
        Kind::SignedInt => {
            let q = lax2(&lax::DIV, &x, &y)?;
            let signs_differ = lax2(&lax::NE, &lax1(&lax::SIGN, &x)?, &lax1(&lax::SIGN, &y)?)?;
            let rem_nonzero = lax2(
                &lax::NE,
                &lax2(&lax::REM, &x, &y)?,
                &const_like(&x, Value::Int(0))?,
            )?;
            let fix = lax2(&lax::AND, &signs_differ, &rem_nonzero)?;
            let q1 = lax2(&lax::SUB, &q, &const_like(&q, Value::Int(1))?)?;
            jnp_where(&fix, &q1, &q)
        }
        Kind::Complex => Err(Error::refused(
            Exception::TypeError,
            "floor_divide does not support complex-valued inputs",
        )),
        _ => Ok(float_divmod(&x, &y)?.0),
    }
}

/// `jnp`'s `_float_divmod`: the floored quotient and the remainder with the divisor's sign.
fn float_divmod(x: &Array, y: &Array) -> Result<(Array, Array), Error> {
    let zero = const_like(x, Value::Float(0.0))?;
    let m = lax2(&lax::REM, x, y)?;
    let y_zero = lax2(&lax::EQ, y, &zero)?;
    let corrected = select(&y_zero, x, &lax2(&lax::SUB, x, &m)?)?;
    let div = lax2(&lax::DIV, &corrected, y)?;
    let ind = lax2(
        &lax::AND,
        &lax2(&lax::NE, &m, &zero)?,
        &lax2(&lax::NE, &lax1(&lax::SIGN, y)?, &lax1(&lax::SIGN, &m)?)?,
    )?;
    let m = select(&ind, &lax2(&lax::ADD, &m, y)?, &m)?;
    let one = const_like(&div, Value::Float(1.0))?;
    let div = select(&ind, &lax2(&lax::SUB, &div, &one)?, &div)?;
    let rounded = lax(
        &lax::ROUND,
        &[&div],
        Params::new().with("rounding_method", Param::Int(1)),
    )?;
    Ok((rounded, m))
}

/// `jnp.power` of a float or complex array `x` and an integer array `y` (`_power`'s third
/// case): `lax.pow` of the operands as they are, their ranks promoted, which converts the
/// exponent to the base's dtype; the promotion of both (`promote_args_numeric`) is computed
/// first, as `_power` does, and its results go unused.
pub(super) fn float_power_of_int(x: ArrayLike<'_>, y: ArrayLike<'_>) -> Result<Array, Error> {
    let (x, y) = (arraylike(x)?, arraylike(y)?);
    let rank = x.ndim().max(y.ndim());
    let ranked = |a: Array| {
        if a.ndim() == rank || a.ndim() == 0 {
            return Ok(a);
        }
        let mut shape = vec![1usize; rank - a.ndim()];
        shape.extend_from_slice(a.shape());
        broadcast_to(a, &shape)
    };
    let (x, y) = (ranked(x)?, ranked(y)?);
    promote_only(
        Some(Op::Power),
        Family::Numeric,
        &[ArrayLike::Array(&x), ArrayLike::Array(&y)],
    )?;
    lax2(&lax::POW, &x, &y)
}

/// NumPy's refusal of a negative exponent in an integer loop.
pub(super) fn negative_power() -> Error {
    Error::refused(
        Exception::ValueError,
        "Integers to negative integer powers are not allowed.",
    )
}

/// The value of a 0-d integer array (`operator.index`).
pub(super) fn int_scalar(a: &Array) -> Option<i128> {
    // operator.index refuses ml_dtypes' narrow integers too.
    if !matches!(a.dtype().kind(), Kind::SignedInt | Kind::UnsignedInt) || a.dtype().bits() < 8 {
        return None;
    }
    let v = a.astype(DType::Int64).ok()?.to_vec::<i64>().ok()?;
    let i = i128::from(*v.first()?);
    if a.dtype().kind() == Kind::UnsignedInt && a.dtype().bits() == 64 {
        let u = a.to_vec::<u64>().ok()?;
        return Some(i128::from(*u.first()?));
    }
    Some(i)
}

/// How many bits the largest of the (non-negative) integer exponents `y` has.
pub(super) fn exponent_bits(y: &Array) -> Result<usize, Error> {
    let v = y.astype(DType::UInt64)?.to_vec::<u64>()?;
    let max = v.into_iter().max().unwrap_or(0);
    Ok((u64::BITS - max.leading_zeros()) as usize)
}

/// `jnp`'s `_pow_int_int`: `rounds` rounds of square-and-multiply (six in `jnp`).
pub(super) fn pow_int_int(mut x: Array, mut y: Array, rounds: usize) -> Result<Array, Error> {
    promote_integer(x.dtype())?;
    let zero = strong_const(&y, Value::Int(0))?;
    let one = strong_const(&y, Value::Int(1))?;
    let zero_x = strong_const(&x, Value::Int(0))?;
    let one_x = strong_const(&x, Value::Int(1))?;
    let base_zero = lax2(
        &lax::AND,
        &lax2(&lax::EQ, &x, &zero_x)?,
        &lax2(&lax::NE, &y, &zero)?,
    )?;
    // jnp selects through its jitted `_where`, given the exponent's bit as an integer.
    let mut acc = jnp_where(&base_zero, &zero_x, &one_x)?;
    for _ in 0..rounds {
        let bit = lax2(&lax::AND, &y, &one)?;
        let product = lax2(&lax::MUL, &acc, &x)?;
        acc = jnp_where(&bit, &product, &acc)?;
        x = lax2(&lax::MUL, &x, &x)?;
        y = lax2(&lax::SHIFT_RIGHT_LOGICAL, &y, &one)?;
    }
    Ok(acc)
}

/// The selection `jnp`'s compositions make (`c` bool or integer, `x`, `y` of one shape):
/// JAX's jitted `_where` under JAX's rules, whose programs print it; `select` of `c != 0`
/// under NumPy's, which have no program to print.
pub(super) fn jnp_where(c: &Array, x: &Array, y: &Array) -> Result<Array, Error> {
    if is_numpy(&rules()) {
        select(&to_bool(c)?, x, y)
    } else {
        where_jitted(c, x, y)
    }
}

/// `util._where(condition, x, y)`: [`r#where`] as `jnp`'s helpers call it, a jitted function
/// named `_where` (one cache for the crate, so that equal calls print as one shared jaxpr, as
/// JAX prints them).
pub(crate) fn where_jitted(c: &Array, x: &Array, y: &Array) -> Result<Array, Error> {
    type Body = fn((Array, Array, Array)) -> Result<Array, Error>;
    shared_jit!("_where", Body, |(c, x, y)| r#where(&c, &x, &y)).call(&(
        c.clone(),
        x.clone(),
        y.clone(),
    ))
}

/// A bool array of `x`'s shape filled with `v` (`lax.full_like(x, v, dtype=bool)`).
pub(super) fn full_bool(x: &Array, v: bool) -> Result<Array, Error> {
    broadcast_to(scalar_array(Value::Bool(v), DType::Bool, false)?, x.shape())
}

/// `jnp.where(condition, x, y)`: `x` where the condition holds, else `y` (promoted together,
/// all three broadcast).
///
/// # Errors
///
/// Promotion refusals, shapes that do not broadcast.
pub fn r#where<'a>(
    condition: impl Into<ArrayLike<'a>>,
    x: impl Into<ArrayLike<'a>>,
    y: impl Into<ArrayLike<'a>>,
) -> Result<Array, Error> {
    let c = arraylike(condition)?;
    let xy = promote_only(None, Family::Any, &[x.into(), y.into()])?;
    let c = to_bool(&c)?;
    let shape = broadcast_shapes(&[c.shape(), xy[0].shape(), xy[1].shape()])?;
    let c = broadcast_to(c, &shape)?;
    let x = broadcast_to(xy[0].clone(), &shape)?;
    if shape.contains(&0) {
        // An empty result selects nothing: JAX's `_where` returns `x` as broadcast.
        return Ok(x);
    }
    let y = broadcast_to(xy[1].clone(), &shape)?;
    select(&c, &x, &y)
}

/// `jnp.astype(x, dtype)`: the dtype canonicalised (x64 off: 64-bit types are 32-bit);
/// complex to bool is `x != 0`.
///
/// # Errors
///
/// Key dtypes, or a conversion the rules do not have.
pub fn astype<'a>(x: impl Into<ArrayLike<'a>>, dtype: DType) -> Result<Array, Error> {
    let rules = rules();
    let dtype = if is_numpy(&rules) {
        dtype
    } else {
        dtype.canonicalize(rules.options().x64)
    };
    let mut x = arraylike(x)?;
    if is_numpy(&rules) && rules.rule_set() == dtype_lattice::RuleSet::NUMPY {
        // ml_dtypes registers no cast between some of its types.
        dtype_lattice::ufunc::astype(x.dtype(), dtype)?;
    }
    if x.dtype().kind() == Kind::Complex && dtype == DType::Bool {
        x = lax2(&lax::NE, &x, &const_like(&x, Value::Int(0))?)?;
    }
    convert(&x, dtype)
}

// ---------------------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------------------

/// Which axes a reduction runs over: all (`axis=None`) or some (negative counts from the
/// end, as in NumPy).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Axes {
    /// Every axis (`axis=None`).
    #[default]
    All,
    /// These axes.
    Some(Vec<isize>),
}

impl From<isize> for Axes {
    fn from(a: isize) -> Axes {
        Axes::Some(vec![a])
    }
}

/// The positive axes of `axes` for an array of rank `ndim` (JAX's `AxisError` messages).
fn reduction_axes(axes: &Axes, ndim: usize) -> Result<Vec<usize>, Error> {
    match axes {
        Axes::All => Ok((0..ndim).collect()),
        Axes::Some(v) => {
            let mut out = Vec::with_capacity(v.len());
            for &a in v {
                let n = ndim as isize;
                if a < -n || a >= n {
                    return Err(Error::refused(
                        Exception::ValueError,
                        format!("axis {a} is out of bounds for array of dimension {ndim}"),
                    ));
                }
                let p = if a < 0 { a + n } else { a } as usize;
                if out.contains(&p) {
                    return Err(Error::refused(
                        Exception::ValueError,
                        "duplicate value in 'axis'",
                    ));
                }
                out.push(p);
            }
            out.sort_unstable();
            Ok(out)
        }
    }
}

fn axes_param(axes: &[usize]) -> Param {
    Param::Ints(axes.iter().map(|&a| a as i64).collect())
}

/// `jnp`'s `_promote_integer_dtype`: booleans and narrow integers sum as the default
/// integer (unsigned: the default unsigned).
pub(super) fn promote_integer(d: DType) -> Result<DType, Error> {
    if matches!(d.kind(), Kind::SignedInt | Kind::UnsignedInt) && d.bits() < 8 {
        // np.iinfo does not know ml_dtypes' narrow integers.
        return Err(Error::refused(
            Exception::ValueError,
            "Invalid integer data type 'V'.",
        ));
    }
    let rules = rules();
    let int = default_int(&rules);
    Ok(match d.kind() {
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
    })
}

/// Float16 and bfloat16 reductions accumulate in float32 (`_upcast_f16`).
fn upcast_f16(d: DType) -> DType {
    if matches!(d, DType::Float16 | DType::BFloat16) {
        DType::Float32
    } else {
        d
    }
}

/// Re-inserts reduced axes as size 1 (`keepdims=True`).
fn keep_dims(r: Array, axes: &[usize], ndim: usize) -> Result<Array, Error> {
    let shape: Vec<usize> = {
        let mut it = r.shape().iter();
        (0..ndim)
            .map(|d| {
                if axes.contains(&d) {
                    1
                } else {
                    *it.next().unwrap_or(&1)
                }
            })
            .collect()
    };
    let params = Params::new()
        .with(
            "new_sizes",
            Param::Ints(shape.iter().map(|&d| d as i64).collect()),
        )
        .with("dimensions", Param::None)
        .with("sharding", Param::None);
    lax(&lax::RESHAPE, &[&r], params)
}

/// How `jnp`'s `_reduction` runs one reduction: one row per function.
struct Reduction {
    /// The `jnp` name (for messages).
    name: &'static str,
    /// The primitive, and the one for booleans.
    prims: (&'static Primitive, &'static Primitive),
    /// Whether an empty reduction has a value.
    has_identity: bool,
    /// sum/prod's dtype rules (narrow integers widened, float16/bfloat16 accumulated in
    /// float32), or the operand's dtype kept.
    promote: bool,
    /// Whether the primitive takes `out_sharding`.
    sharding: bool,
    /// The ufunc reduction NumPy runs for ml_dtypes' types (under the NumPy rules), if any.
    fold: Option<ml::Fold>,
}

const SUM: Reduction = Reduction {
    name: "sum",
    prims: (&lax::REDUCE_SUM, &lax::REDUCE_OR),
    has_identity: true,
    promote: true,
    sharding: true,
    fold: Some(ml::Fold::Sum),
};
const PROD: Reduction = Reduction {
    name: "prod",
    prims: (&lax::REDUCE_PROD, &lax::REDUCE_AND),
    has_identity: true,
    promote: true,
    sharding: false,
    fold: Some(ml::Fold::Prod),
};
const MAX: Reduction = Reduction {
    name: "max",
    prims: (&lax::REDUCE_MAX, &lax::REDUCE_MAX),
    has_identity: false,
    promote: false,
    sharding: false,
    fold: Some(ml::Fold::Max),
};
const MIN: Reduction = Reduction {
    name: "min",
    prims: (&lax::REDUCE_MIN, &lax::REDUCE_MIN),
    has_identity: false,
    promote: false,
    sharding: false,
    fold: Some(ml::Fold::Min),
};
const ALL: Reduction = Reduction {
    name: "all",
    prims: (&lax::REDUCE_AND, &lax::REDUCE_AND),
    has_identity: true,
    promote: false,
    sharding: false,
    fold: None,
};
const ANY: Reduction = Reduction {
    name: "any",
    prims: (&lax::REDUCE_OR, &lax::REDUCE_OR),
    has_identity: true,
    promote: false,
    sharding: false,
    fold: None,
};

/// The refusal of an empty reduction without an identity (`max`, `min`).
fn check_identity(r: &Reduction, x: &Array, dims: &[usize]) -> Result<(), Error> {
    if !r.has_identity && dims.iter().any(|&d| x.shape()[d] == 0) {
        return Err(Error::refused(
            Exception::ValueError,
            format!(
                "zero-size array to reduction operation {} which has no identity",
                r.name
            ),
        ));
    }
    Ok(())
}

/// `r` of `x` with its row's dtype rules.
fn reduce(r: &Reduction, x: Array, axes: &Axes, keepdims: bool) -> Result<Array, Error> {
    if let Some(op) = r.fold
        && ml::is_ml(x.dtype())
    {
        let dims = reduction_axes(axes, x.ndim())?;
        check_identity(r, &x, &dims)?;
        let out = ml::reduce(op, &x, &dims, |c| reduce(r, c, axes, false))?;
        return if keepdims {
            keep_dims(out, &dims, x.ndim())
        } else {
            Ok(out)
        };
    }
    if let Some(op @ (ml::Fold::Max | ml::Fold::Min)) = r.fold
        && x.dtype() == DType::Float16
        && is_numpy(&rules())
    {
        // NumPy's float16 loop, element after element (the first of equal elements kept).
        let dims = reduction_axes(axes, x.ndim())?;
        check_identity(r, &x, &dims)?;
        let out = ml::half_extremum(op, &x, &dims)?;
        return if keepdims {
            keep_dims(out, &dims, x.ndim())
        } else {
            Ok(out)
        };
    }
    let (result, computation) = if r.promote {
        let result = promote_integer(x.dtype())?;
        (result, upcast_f16(result))
    } else {
        (x.dtype(), x.dtype())
    };
    reduction(r, x, axes, keepdims, result, computation)
}

/// A reduction as `jnp`'s `_reduction` runs it, into `result_dtype`, accumulating in
/// `computation`.
fn reduction(
    r: &Reduction,
    x: Array,
    axes: &Axes,
    keepdims: bool,
    result_dtype: DType,
    computation: DType,
) -> Result<Array, Error> {
    let Reduction {
        prims: (prim, bool_prim),
        sharding: with_sharding,
        ..
    } = *r;
    let dims = reduction_axes(axes, x.ndim())?;
    check_identity(r, &x, &dims)?;
    let a = convert(&x, computation)?;
    let prim = if computation == DType::Bool {
        bool_prim
    } else {
        prim
    };
    let mut params = Params::new().with("axes", axes_param(&dims));
    if with_sharding {
        params = params.with("out_sharding", Param::None);
    }
    let mut r = lax(prim, &[&a], params)?;
    if keepdims {
        r = keep_dims(r, &dims, x.ndim())?;
    }
    if matches!(r.dtype().kind(), Kind::Float | Kind::Complex)
        && std::ptr::eq(prim, &lax::REDUCE_SUM)
        && is_numpy(&rules())
    {
        // NumPy's sums start from their identity, +0.0: a sum of -0.0 is +0.0.
        r = lax2(&lax::ADD, &r, &const_like(&r, Value::Float(0.0))?)?;
    }
    convert(&r, result_dtype)
}

/// `jnp.sum(x, axis, keepdims=...)`: booleans and narrow integers sum as the default integer;
/// float16 and bfloat16 accumulate in float32.
///
/// # Errors
///
/// Axes out of range (`ValueError`), key arrays (`TypeError`).
pub fn sum<'a>(x: impl Into<ArrayLike<'a>>, axes: Axes, keepdims: bool) -> Result<Array, Error> {
    reduce(&SUM, one(x, Family::Numeric)?, &axes, keepdims)
}

/// `jnp.prod(x, axis, keepdims=...)`, with [`sum`]'s dtype rules.
///
/// # Errors
///
/// As [`sum`].
pub fn prod<'a>(x: impl Into<ArrayLike<'a>>, axes: Axes, keepdims: bool) -> Result<Array, Error> {
    reduce(&PROD, one(x, Family::Numeric)?, &axes, keepdims)
}

/// `jnp.max(x, axis, keepdims=...)` (NaN propagates).
///
/// # Errors
///
/// `ValueError` for an empty reduction (no identity), axes out of range.
pub fn max<'a>(x: impl Into<ArrayLike<'a>>, axes: Axes, keepdims: bool) -> Result<Array, Error> {
    reduce(&MAX, arraylike(x)?, &axes, keepdims)
}

/// `jnp.min(x, axis, keepdims=...)` (NaN propagates).
///
/// # Errors
///
/// As [`max`].
pub fn min<'a>(x: impl Into<ArrayLike<'a>>, axes: Axes, keepdims: bool) -> Result<Array, Error> {
    reduce(&MIN, arraylike(x)?, &axes, keepdims)
}

/// `jnp.all(x, axis, keepdims=...)`.
///
/// # Errors
///
/// Axes out of range.
pub fn all<'a>(x: impl Into<ArrayLike<'a>>, axes: Axes, keepdims: bool) -> Result<Array, Error> {
    reduce(&ALL, to_bool_cast(&arraylike(x)?)?, &axes, keepdims)
}

/// `jnp.any(x, axis, keepdims=...)`.
///
/// # Errors
///
/// Axes out of range.
pub fn any<'a>(x: impl Into<ArrayLike<'a>>, axes: Axes, keepdims: bool) -> Result<Array, Error> {
    reduce(&ANY, to_bool_cast(&arraylike(x)?)?, &axes, keepdims)
}

/// `jnp`'s `_cast_to_bool`: `convert_element_type(x, bool)`, which for complex numbers reads
/// the real part alone (lax discards the imaginary part, with a `ComplexWarning`); NumPy's
/// truth of a complex number is `x != 0`.
fn to_bool_cast(x: &Array) -> Result<Array, Error> {
    if x.dtype().kind() == Kind::Complex && !is_numpy(&rules()) {
        return convert(&lax1(&lax::REAL, x)?, DType::Bool);
    }
    // (NumPy's cast of ml_dtypes' complex32/bcomplex32, whose `ne` has no kernel, is the same.)
    if x.dtype().kind() == Kind::Complex && !ml::is_ml(x.dtype()) {
        return to_bool(x);
    }
    convert(x, DType::Bool)
}

/// `jnp.mean(x, axis, keepdims=...)`: integers average as the default float (NumPy: float64);
/// float16 and bfloat16 accumulate in float32.
///
/// # Errors
///
/// As [`sum`].
pub fn mean<'a>(x: impl Into<ArrayLike<'a>>, axes: Axes, keepdims: bool) -> Result<Array, Error> {
    let x = arraylike(x)?;
    if ml::is_ml(x.dtype()) {
        // NumPy's `_mean`: the sum in the type, then `sum.dtype.type(sum / count)`.
        let dims = reduction_axes(&axes, x.ndim())?;
        let count: usize = dims.iter().map(|&d| x.shape()[d]).product();
        let t = x.dtype();
        let mut total = ml::reduce(ml::Fold::Sum, &x, &dims, |c| reduce(&SUM, c, &axes, false))?;
        if keepdims {
            total = keep_dims(total, &dims, x.ndim())?;
        }
        return ml::mean(total, count, t);
    }
    let rules = rules();
    let result = if is_numpy(&rules) && is_integral_or_bool(x.dtype()) {
        // NumPy's `_mean` sums booleans and integers as float64.
        DType::Float64
    } else {
        super::family_dtype(&rules, Family::Inexact, x.dtype())
    };
    let comp = upcast_f16(result);
    let dims = reduction_axes(&axes, x.ndim())?;
    let count: usize = dims.iter().map(|&d| x.shape()[d]).product();
    let total = reduction(&SUM, x, &axes, keepdims, comp, comp)?;
    // The count in the computation dtype (an int2 mean divides by a wrapped count, as JAX).
    let elements = count;
    let count = if matches!(comp.kind(), Kind::SignedInt | Kind::UnsignedInt) {
        Value::Int(count as i128)
    } else {
        Value::Float(count as f64)
    };
    let n = strong_const(&total, count)?;
    if matches!(comp.kind(), Kind::Float | Kind::Complex)
        && lax::on_xla()
        && crate::core::current().is_none()
        && total.is_concrete()
    {
        // Computed, the quotient by the constant count is XLA's rewrite of it: `A / 1` is
        // `A` (a mean of one element keeps a subnormal), `A / c` is `A * (1 / c)`, the
        // reciprocal folded in the dtype. The jaxpr keeps JAX's `div`.
        let q = if elements == 1 {
            total
        } else {
            let r = lax2(&lax::DIV, &strong_const(&total, Value::Int(1))?, &n)?;
            lax2(&lax::MUL, &total, &r)?
        };
        return convert(&q, result);
    }
    convert(&lax2(&lax::DIV, &total, &n)?, result)
}

/// The flattened array (`jnp.ravel`).
pub(super) fn ravel(x: &Array) -> Result<Array, Error> {
    if x.ndim() == 1 {
        return Ok(x.clone());
    }
    let params = Params::new()
        .with("dimensions", Param::None)
        .with("new_sizes", Param::Ints(vec![x.size() as i64]))
        .with("sharding", Param::None);
    lax(&lax::RESHAPE, &[x], params)
}

fn arg_reduce<'a>(
    name: &str,
    prim: &'static Primitive,
    x: impl Into<ArrayLike<'a>>,
) -> Result<Array, Error> {
    let x = ravel(&arraylike(x)?)?;
    if x.size() == 0 {
        return Err(Error::refused(
            Exception::ValueError,
            format!("attempt to get {name} of an empty sequence"),
        ));
    }
    if is_numpy(&rules()) && matches!(x.dtype(), DType::Complex64 | DType::Complex128) {
        // NumPy orders complex numbers (lax's argmax refuses them).
        let i = super::npmath::complex_arg_extremum(&x, std::ptr::eq(prim, &lax::ARGMAX))?;
        return scalar_array(Value::Int(i as i128), DType::Int64, false);
    }
    let params = Params::new()
        .with("axes", Param::Ints(vec![0]))
        .with("index_dtype", Param::DType(default_int(&rules())));
    lax(prim, &[&x], params)
}

/// `jnp.argmax(x)` over the flattened array: the first index of the maximum (of the first NaN;
/// under the NumPy rules complex numbers order by real, then imaginary part).
///
/// # Errors
///
/// `ValueError` for an empty array.
pub fn argmax<'a>(x: impl Into<ArrayLike<'a>>) -> Result<Array, Error> {
    arg_reduce("argmax", &lax::ARGMAX, x)
}

/// `jnp.argmin(x)` over the flattened array.
///
/// # Errors
///
/// `ValueError` for an empty array.
pub fn argmin<'a>(x: impl Into<ArrayLike<'a>>) -> Result<Array, Error> {
    arg_reduce("argmin", &lax::ARGMIN, x)
}

/// `jnp.cumsum(x)` over the flattened array: booleans count as the default integer (under the
/// NumPy rules narrower integers too).
///
/// # Errors
///
/// Key arrays.
pub fn cumsum<'a>(x: impl Into<ArrayLike<'a>>) -> Result<Array, Error> {
    let x = arraylike(x)?;
    let x = if x.ndim() == 0 {
        let params = Params::new()
            .with("dimensions", Param::None)
            .with("new_sizes", Param::Ints(vec![1]))
            .with("sharding", Param::None);
        lax(&lax::RESHAPE, &[&x], params)?
    } else {
        ravel(&x)?
    };
    if ml::is_ml(x.dtype()) {
        return ml::cumsum(&x);
    }
    if is_numpy(&rules()) && matches!(x.dtype().kind(), Kind::Float | Kind::Complex) {
        // NumPy's `add.accumulate`: the first element as it is, then each partial sum.
        return ml::accumulate_float(&x);
    }
    let result = if x.dtype() == DType::Bool || is_numpy(&rules()) {
        // NumPy's `add.accumulate` (as its `add.reduce`) widens booleans and narrower
        // integers to the default (unsigned) integer.
        promote_integer(x.dtype())?
    } else {
        x.dtype()
    };
    let a = convert(&x, result)?;
    let params = Params::new()
        .with("axis", Param::Int(0))
        .with("reverse", Param::Bool(false));
    lax(&lax::CUMSUM, &[&a], params)
}

// ---------------------------------------------------------------------------------------
// Linear algebra
// ---------------------------------------------------------------------------------------

/// `jnp.matmul(a, b)` (`@`): 1-D operands are vectors; leading dimensions broadcast.
///
/// # Errors
///
/// `ValueError` for 0-d operands or mismatched core dimensions, promotion refusals.
pub fn matmul<'a>(
    a: impl Into<ArrayLike<'a>>,
    b: impl Into<ArrayLike<'a>>,
) -> Result<Array, Error> {
    let (a, b) = (a.into(), b.into());
    if let Some(r) = ml::through_loop("matmul", &[a.clone(), b.clone()], |v, _| {
        let (a, b) = ml::two(v);
        matmul(a, b)
    }) {
        return r;
    }
    let mut v = promote_only(None, Family::Any, &[a, b])?;
    let b = v.pop().expect("two");
    let a = v.pop().expect("two");
    for (i, x) in [&a, &b].into_iter().enumerate() {
        if x.ndim() == 0 {
            return Err(Error::refused(
                Exception::ValueError,
                format!(
                    "matmul: Input operand {i} does not have enough dimensions (has 0, gufunc \
                     core with signature (n?,k),(k,m?)->(n?,m?) requires 1)"
                ),
            ));
        }
    }
    let (a_vec, b_vec) = (a.ndim() == 1, b.ndim() == 1);
    let (ak, bk) = (
        a.shape()[a.ndim() - 1],
        b.shape()[if b_vec { 0 } else { b.ndim() - 2 }],
    );
    if ak != bk && is_numpy(&rules()) {
        return Err(Error::refused(
            Exception::ValueError,
            format!(
                "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc \
                 signature (n?,k),(k,m?)->(n?,m?) (size {bk} is different from {ak})"
            ),
        ));
    }
    if a.ndim() <= 2 && b.ndim() <= 2 {
        // No batch dimensions: one dot_general contracting a's last dimension with b's
        // first (vector) or next to last, as JAX's matmul binds it (no reshapes).
        let bc = if b_vec { 0 } else { b.ndim() as i64 - 2 };
        let params = dot_params(&[a.ndim() as i64 - 1], &[bc], &[], &[], a.dtype())?;
        return lax(&lax::DOT_GENERAL, &[&a, &b], params);
    }
    let a2 = if a_vec {
        reshape(&a, &[1, a.shape()[0]])?
    } else {
        a.clone()
    };
    let b2 = if b_vec {
        reshape(&b, &[b.shape()[0], 1])?
    } else {
        b.clone()
    };
    // Broadcast the batch dimensions.
    let batch_a = &a2.shape()[..a2.ndim() - 2];
    let batch_b = &b2.shape()[..b2.ndim() - 2];
    let batch = broadcast_shapes(&[batch_a, batch_b])?;
    let full = |x: &Array, batch: &[usize]| -> Result<Array, Error> {
        let mut shape = batch.to_vec();
        shape.extend_from_slice(&x.shape()[x.ndim() - 2..]);
        broadcast_to(x.clone(), &shape)
    };
    let a3 = full(&a2, &batch)?;
    let b3 = full(&b2, &batch)?;
    let nb = batch.len() as i64;
    let batch_dims: Vec<i64> = (0..nb).collect();
    let params = dot_params(&[nb + 1], &[nb], &batch_dims, &batch_dims, a3.dtype())?;
    let r = lax(&lax::DOT_GENERAL, &[&a3, &b3], params)?;
    // Drop the vector dimensions again.
    let mut shape = batch.clone();
    if !a_vec {
        shape.push(a2.shape()[a2.ndim() - 2]);
    }
    if !b_vec {
        shape.push(b2.shape()[b2.ndim() - 1]);
    }
    if shape.as_slice() == r.shape() {
        Ok(r)
    } else {
        reshape(&r, &shape)
    }
}

/// `dot_general`'s parameters: contracting and batch dimensions, the output dtype.
pub(super) fn dot_params(
    lhs_contract: &[i64],
    rhs_contract: &[i64],
    lhs_batch: &[i64],
    rhs_batch: &[i64],
    dtype: DType,
) -> Result<Params, Error> {
    let dn = Param::DotDimensionNumbers {
        lhs_contracting: lhs_contract.to_vec(),
        rhs_contracting: rhs_contract.to_vec(),
        lhs_batch: lhs_batch.to_vec(),
        rhs_batch: rhs_batch.to_vec(),
    };
    Ok(Params::new()
        .with("dimension_numbers", dn)
        .with("out_sharding", Param::None)
        .with("precision", Param::None)
        .with("preferred_element_type", Param::DType(dtype)))
}

/// `lax.reshape(x, shape)`.
fn reshape(x: &Array, shape: &[usize]) -> Result<Array, Error> {
    let params = Params::new()
        .with("dimensions", Param::None)
        .with(
            "new_sizes",
            Param::Ints(shape.iter().map(|&d| d as i64).collect()),
        )
        .with("sharding", Param::None);
    lax(&lax::RESHAPE, &[x], params)
}

// ---------------------------------------------------------------------------------------
// The registry
// ---------------------------------------------------------------------------------------

/// How a registered function is called.
#[derive(Clone, Copy)]
enum Call {
    Elementwise(&'static Ufunc),
    Unary(for<'a> fn(ArrayLike<'a>) -> Result<Array, Error>),
    Binary(for<'a> fn(ArrayLike<'a>, ArrayLike<'a>) -> Result<Array, Error>),
    Ternary(for<'a> fn(ArrayLike<'a>, ArrayLike<'a>, ArrayLike<'a>) -> Result<Array, Error>),
    Reduce(for<'a> fn(ArrayLike<'a>, Axes, bool) -> Result<Array, Error>),
    /// A function of `arity` operands and keyword arguments (Python's `TypeError` for a
    /// keyword it does not take).
    Keyed(
        usize,
        for<'a> fn(Vec<ArrayLike<'a>>, &Keywords) -> Result<Array, Error>,
    ),
}

/// One `jax.numpy` function the registry knows: its name and how many operands it takes.
#[derive(Clone, Copy)]
pub struct Function {
    /// The `jax.numpy` name.
    pub name: &'static str,
    call: Call,
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Function({})", self.name)
    }
}

impl Function {
    /// How many operands it takes.
    pub fn arity(&self) -> usize {
        match self.call {
            Call::Elementwise(u) => u.arity(),
            Call::Unary(_) | Call::Reduce(_) => 1,
            Call::Ternary(_) => 3,
            Call::Binary(_) => 2,
            Call::Keyed(n, _) => n,
        }
    }

    /// Calls it (reductions over every axis).
    ///
    /// # Errors
    ///
    /// `TypeError` for the wrong number of operands (Python's message), and the function's
    /// own refusals.
    pub fn call(&self, args: Vec<ArrayLike<'_>>) -> Result<Array, Error> {
        self.call_with(args, &Keywords::new())
    }

    /// Calls it with keyword arguments (`sort` with `axis=0, descending=True`, ...).
    ///
    /// ```
    /// use dtype_lattice_array::{Array, numpy::function};
    /// let sort = function("sort").unwrap();
    /// let x = Array::from_vec(vec![2i32, 3, 1]);
    /// let y = sort.call_with(vec![(&x).into()], &"descending=True".parse()?)?;
    /// assert_eq!(y.to_vec::<i32>()?, [3, 2, 1]);
    /// assert!(sort.call_with(vec![(&x).into()], &"reverse=True".parse()?).is_err());
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Function::call`]; Python's `TypeError` for a keyword the function does not take.
    pub fn call_with(&self, args: Vec<ArrayLike<'_>>, keywords: &Keywords) -> Result<Array, Error> {
        if !matches!(self.call, Call::Keyed(..)) {
            keywords.allow(self.name, &[])?;
        }
        if args.len() != self.arity() {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "{}() takes {} positional argument{} but {} were given",
                    self.name,
                    self.arity(),
                    if self.arity() == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        let mut it = args.into_iter();
        let mut next = || it.next().expect("arity checked");
        match self.call {
            Call::Elementwise(u) => u.call(it.collect()),
            Call::Unary(f) => f(next()),
            Call::Binary(f) => {
                let (a, b) = (next(), next());
                f(a, b)
            }
            Call::Ternary(f) => {
                let (a, b, c) = (next(), next(), next());
                f(a, b, c)
            }
            Call::Reduce(f) => f(next(), Axes::All, false),
            Call::Keyed(_, f) => f(it.collect(), keywords),
        }
    }
}

macro_rules! registry {
    ($($name:literal => $kind:ident($($f:expr),+),)*) => {
        /// The functions `eval` knows beside the elementwise ones ([`super::UFUNCS`]), by
        /// `jax.numpy` name (`astype:DTYPE` is handled by the caller through [`astype`]).
        pub static FUNCTIONS: &[Function] = &[
            $(Function { name: $name, call: Call::$kind($($f),+) },)*
        ];
    };
}

registry! {
    "sum" => Reduce(|x, a, k| sum(x, a, k)),
    "prod" => Reduce(|x, a, k| prod(x, a, k)),
    "max" => Reduce(|x, a, k| max(x, a, k)),
    "min" => Reduce(|x, a, k| min(x, a, k)),
    "mean" => Reduce(|x, a, k| mean(x, a, k)),
    "argmax" => Unary(|x| argmax(x)),
    "argmin" => Unary(|x| argmin(x)),
    "all" => Reduce(|x, a, k| all(x, a, k)),
    "any" => Reduce(|x, a, k| any(x, a, k)),
    "cumsum" => Keyed(1, cumsum_call),
    "where" => Ternary(|c, x, y| r#where(c, x, y)),
    "matmul" => Binary(|x, y| matmul(x, y)),
    "sort" => Keyed(1, |args, kw| sort_call("sort", args, kw)),
    "argsort" => Keyed(1, |args, kw| sort_call("argsort", args, kw)),
    "take" => Keyed(2, take_call),
}

/// `jnp.cumsum(a, axis=None, dtype=None)` (and NumPy's) by keywords.
fn cumsum_call(args: Vec<ArrayLike<'_>>, kw: &Keywords) -> Result<Array, Error> {
    kw.allow("cumsum", &["axis", "dtype"])?;
    let x = args.into_iter().next().expect("arity checked");
    if kw.is_empty() {
        return cumsum(x);
    }
    let mut x = arraylike(x)?;
    if is_numpy(&rules()) && x.ndim() == 0 {
        // NumPy accumulates a 0-d array as one of shape (1,).
        x = ravel(&x)?;
    }
    let mut dtype = kw.dtype("dtype")?;
    if is_numpy(&rules())
        && dtype.is_none()
        && (x.dtype() == DType::Bool || (is_integral_or_bool(x.dtype()) && !ml::is_ml(x.dtype())))
    {
        // NumPy's `add.accumulate` widens booleans and narrower integers to the default
        // (unsigned) integer, along an axis as over the flattened array.
        dtype = Some(promote_integer(x.dtype())?);
    }
    let axis = kw.int_or_none("cumsum", "axis", None)?;
    let r = super::cumulative::cumsum_axis(&x, axis, dtype)?;
    if !is_numpy(&rules()) || !matches!(r.dtype().kind(), Kind::Float | Kind::Complex) {
        return Ok(r);
    }
    // NumPy's `add.accumulate` starts from the first element itself, not `0 + x[0]` (which
    // turns a `-0.0` into `+0.0`): the first slice along the axis is the operand's.
    let (x, ax) = match axis {
        None => (ravel(&x)?, 0),
        Some(a) => (x.clone(), super::shape::axis(a, x.ndim())?),
    };
    let iota = lax(
        &lax::IOTA,
        &[],
        Params::new()
            .with("dimension", Param::Int(ax as i64))
            .with("dtype", Param::DType(DType::Int32))
            .with(
                "shape",
                Param::Ints(x.shape().iter().map(|&d| d as i64).collect()),
            )
            .with("sharding", Param::None),
    )?;
    let first = super::ufuncs::equal(&iota, 0)?;
    r#where(&first, &x.astype(r.dtype())?, &r)
}

/// `jnp.take(a, indices, axis=None, mode=None, fill_value=None)` by keywords; NumPy's
/// `np.take(a, indices, axis=None, mode='raise')`.
fn take_call(args: Vec<ArrayLike<'_>>, kw: &Keywords) -> Result<Array, Error> {
    let mut args = args.into_iter();
    let (a, indices) = match (args.next(), args.next()) {
        (Some(a), Some(i)) => (arraylike(a)?, arraylike(i)?),
        _ => unreachable!("arity checked"),
    };
    let axis = kw.int_or_none("take", "axis", None)?;
    if !is_numpy(&rules()) {
        kw.allow(
            "take",
            &[
                "axis",
                "mode",
                "fill_value",
                "unique_indices",
                "indices_are_sorted",
            ],
        )?;
        let mode = kw
            .string("mode")
            .map(|m| {
                m.parse().map_err(|_| {
                    Error::refused(
                        Exception::ValueError,
                        format!("Invalid mode '{m}' for np.take"),
                    )
                })
            })
            .transpose()?;
        return super::indexing::take(&a, &indices, axis, mode, kw.value("fill_value")?);
    }
    kw.allow("take", &["axis", "mode"])?;
    numpy_take(
        &a,
        &indices,
        axis,
        kw.string("mode").as_deref().unwrap_or("raise"),
    )
}

/// NumPy's `np.take`: the indices cast to `intp` ('safe': bool and integers but uint64),
/// then `raise` (out of `[-n, n)`: `IndexError`), `wrap` (modulo `n`) or `clip` (into
/// `[0, n)`, negative ones too) before the take.
fn numpy_take(a: &Array, indices: &Array, axis: Option<isize>, mode: &str) -> Result<Array, Error> {
    if !matches!(mode, "raise" | "wrap" | "clip") {
        return Err(Error::refused(
            Exception::ValueError,
            "clipmode must be one of 'clip', 'raise', or 'wrap'",
        ));
    }
    let (a, axis) = match axis {
        // A 0-d array is taken from as one of shape (1,).
        _ if a.ndim() == 0 => (ravel(a)?, super::shape::axis(axis.unwrap_or(0), 1)?),
        None => (ravel(a)?, 0),
        Some(ax) => (a.clone(), super::shape::axis(ax, a.ndim())?),
    };
    if !is_integral_or_bool(indices.dtype()) || indices.dtype() == DType::UInt64 {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "Cannot cast {} from dtype('{}') to dtype('int64') according to the rule 'safe'",
                if indices.ndim() == 0 {
                    "scalar"
                } else {
                    "array data"
                },
                indices.dtype()
            ),
        ));
    }
    let n = a.shape()[axis] as i64;
    let raw = indices.astype(DType::Int64)?.to_vec::<i64>()?;
    if n == 0 && !raw.is_empty() {
        return Err(Error::refused(
            Exception::IndexError,
            "cannot do a non-empty take from an empty axes.",
        ));
    }
    let normalised = raw
        .iter()
        .map(|&i| match mode {
            "wrap" => Ok(i.rem_euclid(n.max(1))),
            "clip" => Ok(i.clamp(0, (n - 1).max(0))),
            _ if i < -n || i >= n => Err(Error::refused(
                Exception::IndexError,
                format!("index {i} is out of bounds for axis {axis} with size {n}"),
            )),
            _ => Ok(if i < 0 { i + n } else { i }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let idx = Array::from_shape_vec(indices.shape(), normalised)?;
    super::indexing::take(
        &a,
        &idx,
        Some(axis as isize),
        // In bounds by now: `clip` changes nothing.
        Some(super::IndexMode::Clip),
        None,
    )
}

/// `jnp.sort(a, axis=-1, stable=True, descending=False)` and `jnp.argsort` by keywords;
/// NumPy's `np.sort(a, axis=-1, stable=None)` (no `descending`; a stable sort, which is
/// NumPy's `kind='stable'`).
fn sort_call(name: &str, args: Vec<ArrayLike<'_>>, kw: &Keywords) -> Result<Array, Error> {
    let numpy = is_numpy(&rules());
    kw.allow(
        name,
        if numpy {
            &["axis", "kind", "stable"]
        } else {
            &["axis", "kind", "stable", "descending"]
        },
    )?;
    let axis = kw.int_or_none(name, "axis", Some(-1))?;
    let stable = kw.bool(name, "stable", true)?;
    let descending = kw.bool(name, "descending", false)?;
    let mut x = arraylike(args.into_iter().next().expect("arity checked"))?;
    if numpy && name == "argsort" && x.ndim() == 0 {
        // NumPy's `argsort` of a 0-d array sorts it as one of shape (1,).
        x = ravel(&x)?;
    }
    if name == "sort" {
        super::sorting::sort(x, axis, stable, descending)
    } else {
        super::sorting::argsort(x, axis, stable, descending)
    }
}

/// The function of a `jax.numpy` name.
///
/// ```
/// use dtype_lattice_array::numpy::function;
/// assert_eq!(function("arctan2").unwrap().arity(), 2);
/// assert!(function("arctam2").is_none());
/// ```
pub fn function(name: &str) -> Option<Function> {
    if let Some(u) = super::ufuncs::ufunc(name) {
        return Some(Function {
            name: u.name,
            call: Call::Elementwise(u),
        });
    }
    FUNCTIONS.iter().find(|f| f.name == name).copied()
}

/// A refusal for an unknown function name, suggesting the closest known one.
///
/// ```
/// let e = dtype_lattice_array::numpy::unknown_function("arctam2");
/// assert!(e.to_string().contains("did you mean \"arctan2\""));
/// ```
pub fn unknown_function(name: &str) -> Error {
    let hint = closest(name).map_or_else(String::new, |c| format!("; did you mean {c:?}?"));
    Reason::InvalidArgument {
        argument: "function".into(),
        reason: format!("unknown function {name:?}{hint}"),
    }
    .into()
}

fn closest(name: &str) -> Option<String> {
    let names = super::UFUNCS.iter().map(|u| u.name);
    names
        .chain(FUNCTIONS.iter().map(|f| f.name))
        .map(|n| (levenshtein(name, n), n))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, n)| n.to_string())
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
