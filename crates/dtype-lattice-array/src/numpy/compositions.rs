//! The compositions of `jax.numpy`'s elementwise functions: what `jnp` computes for each
//! (promotion, then the `lax` primitives), given its row of [`super::ufuncs`], which
//! dispatches to them under either semantics.

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind, Op, Value};

use super::functions::{
    arraylike, const_like, exponent_bits, float_power_of_int, floor_divide_promoted, full_bool,
    int_scalar, is_integral_or_bool, jnp_where, lax, lax1, lax2, negative_power, one, pow_int_int,
    select, strong_const, to_bool, two,
};
use super::ufuncs::Ufunc;
use super::{ArrayLike, Family, broadcast_shapes, broadcast_to, is_numpy, ml, rules};
use crate::array::Array;
use crate::lax::{Param, Params};

/// The binary functions that promote together and bind their primitive (`add`, `maximum`,
/// the comparisons…): promotion by the row's operation's rules, then the primitive (the
/// row's `on_bool` for bool operands where jnp substitutes one: `add` is `or`, `multiply`
/// `and`); complex `lt`/`le`/`gt`/`ge` compare lexicographically.
pub(super) fn binary<'a>(
    u: &'static Ufunc,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    let args = super::promote_family(u.op, Family::Any, &[x, y])?;
    let prim = match u.on_bool {
        Some(p) if args[0].dtype() == DType::Bool => p,
        _ => u.primitive()?,
    };
    let ordered = [
        &crate::lax::LT,
        &crate::lax::LE,
        &crate::lax::GT,
        &crate::lax::GE,
    ];
    if args[0].dtype().kind() == Kind::Complex && ordered.iter().any(|&p| std::ptr::eq(p, prim)) {
        return crate::lax::elementwise::complex_comparison(prim, &args[0], &args[1]);
    }
    crate::lax::bind1(prim, &[&args[0], &args[1]], &Params::new())
}

/// `jnp.negative(x)`: the operand promoted, `neg`.
pub(super) fn negative<'a>(u: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    let x = super::promote_family(Some(Op::Add), Family::Any, &[x])?;
    crate::lax::bind1(u.primitive()?, &[&x[0]], &Params::new())
}

/// The unary functions that compute in the inexact family and bind their primitive
/// (`sqrt`, `exp`, `sin`, …): integers and booleans compute in the default float
/// (`promote_args_inexact`).
pub(super) fn inexact<'a>(u: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    // An array of the function's dtype: the primitive is the whole program.
    let of_dtype = x.as_array().map(Array::dtype);
    let x = one(x, Family::Inexact)?;
    let p = u.primitive()?;
    if of_dtype == Some(x.dtype()) {
        return crate::lax::elementwise::alone(|| lax1(p, &x));
    }
    lax1(p, &x)
}

/// `jnp.log2(x)`: `log(x) / log(2)` in the promoted float dtype.
pub(super) fn log2<'a>(_: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    let x = one(x, Family::Inexact)?;
    // log(x) / log(2), the 2 in x's dtype (complex ones too).
    let log_x = lax1(&crate::lax::LOG, &x)?;
    let two = strong_const(&x, Value::Float(2.0))?;
    lax2(&crate::lax::DIV, &log_x, &lax1(&crate::lax::LOG, &two)?)
}

/// `jnp.true_divide(x, y)`: integers divide as the default float.
pub(super) fn true_divide<'a>(
    _: &'static Ufunc,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    let (x, y) = two(Some(Op::TrueDivide), Family::Inexact, x, y)?;
    lax2(&crate::lax::DIV, &x, &y)
}

/// A jitted function of two arrays.
type Binary = fn((Array, Array)) -> Result<Array, Error>;

/// A binary function JAX defines jitted (`jit[name=…]` in a program): `of` inside `jitted`
/// under JAX's rules, the operands as arrays (a Python scalar weakly typed, as jit takes
/// it); `of` alone under NumPy's.
fn jnp_binary<'a>(
    jitted: &crate::jit::Jit<Binary>,
    of: fn(ArrayLike<'_>, ArrayLike<'_>) -> Result<Array, Error>,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    if is_numpy(&rules()) {
        return of(x, y);
    }
    jitted.call(&(arraylike(x)?, arraylike(y)?))
}

/// `jnp.floor_divide(x, y)`: rounds toward negative infinity (NumPy's integer loops give 0
/// for a zero divisor). JAX's is a jitted function (`jit[name=floor_divide]`, a signed
/// quotient corrected through the jitted `_where`).
pub(super) fn floor_divide<'a>(
    _: &'static Ufunc,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    let jitted = shared_jit!("floor_divide", Binary, |(x, y)| floor_divide_of(
        (&x).into(),
        (&y).into()
    ));
    jnp_binary(jitted, floor_divide_of, x, y)
}

/// [`floor_divide`]'s composition.
fn floor_divide_of(x: ArrayLike<'_>, y: ArrayLike<'_>) -> Result<Array, Error> {
    let (x, y) = two(Some(Op::FloorDivide), Family::Numeric, x, y)?;
    let integer = matches!(x.dtype().kind(), Kind::SignedInt | Kind::UnsignedInt);
    let q = floor_divide_promoted(&x, &y)?;
    if integer && is_numpy(&rules()) {
        // NumPy's integer loops give 0 for a zero divisor (with a warning).
        let zero = const_like(&y, Value::Int(0))?;
        let zeros = const_like(&q, Value::Int(0))?;
        return select(&lax2(&crate::lax::EQ, &y, &zero)?, &zeros, &q);
    }
    Ok(q)
}

/// `jnp.remainder(x, y)`: the remainder with the divisor's sign. JAX's is a jitted function
/// (`jit[name=remainder]` in a program; the integer divisor's zeros replaced through the
/// jitted `_where`); NumPy's loops are not.
pub(super) fn remainder<'a>(
    _: &'static Ufunc,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    let jitted = shared_jit!("remainder", Binary, |(x, y)| remainder_of(
        (&x).into(),
        (&y).into()
    ));
    jnp_binary(jitted, remainder_of, x, y)
}

/// [`remainder`]'s composition.
fn remainder_of(x: ArrayLike<'_>, y: ArrayLike<'_>) -> Result<Array, Error> {
    let (x, mut y) = two(Some(Op::FloorDivide), Family::Numeric, x, y)?;
    let zero = strong_const(&x, Value::Int(0))?;
    if matches!(y.dtype().kind(), Kind::SignedInt | Kind::UnsignedInt) {
        let ones = const_like(&y, Value::Int(1))?;
        y = jnp_where(&lax2(&crate::lax::EQ, &y, &zero)?, &ones, &y)?;
    }
    let m = lax2(&crate::lax::REM, &x, &y)?;
    let m_nonzero = lax2(&crate::lax::NE, &m, &zero)?;
    let do_plus = lax2(
        &crate::lax::AND,
        &lax2(
            &crate::lax::NE,
            &lax2(&crate::lax::LT, &m, &zero)?,
            &lax2(&crate::lax::LT, &y, &zero)?,
        )?,
        &m_nonzero,
    )?;
    select(&do_plus, &lax2(&crate::lax::ADD, &m, &y)?, &m)
}

/// `jnp.power(x, y)`: an integer exponent known now (a Python int, or a 0-d integer array) is
/// `integer_pow`; integers raise by repeated squaring; floats use `pow`.
pub(super) fn power<'a>(
    _: &'static Ufunc,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    let exponent = match &y {
        ArrayLike::Scalar(Value::Int(i)) => Some(*i),
        ArrayLike::Scalar(Value::Bool(b)) => Some(i128::from(*b)),
        ArrayLike::Array(a) if a.ndim() == 0 => int_scalar(a),
        ArrayLike::Owned(a) if a.ndim() == 0 => int_scalar(a),
        _ => None,
    };
    if let Some(n) = exponent.and_then(|n| i64::try_from(n).ok()) {
        // Not jitted: a Python int base converts by wrapping, without jit's OverflowError.
        let x = super::promote_unchecked(Family::Numeric, &x)?;
        if n < 0 && is_numpy(&rules()) && x.dtype().kind().is_integer() {
            return Err(negative_power());
        }
        return lax(
            &crate::lax::INTEGER_POW,
            &[&x],
            Params::new().with("y", Param::Int(n)),
        );
    }
    let inexact_base = match &x {
        ArrayLike::Scalar(v) => matches!(v, Value::Float(_) | Value::Complex(..)),
        x => x
            .as_array()
            .is_some_and(|a| matches!(a.dtype().kind(), Kind::Float | Kind::Complex)),
    };
    let int_exponent = y
        .as_array()
        .is_some_and(|a| matches!(a.dtype().kind(), Kind::SignedInt | Kind::UnsignedInt));
    if inexact_base && int_exponent && !is_numpy(&rules()) {
        return float_power_of_int(x, y);
    }
    let (a, b) = two(Some(Op::Power), Family::Numeric, x, y)?;
    if is_numpy(&rules())
        && a.dtype().kind() == Kind::SignedInt
        && b.astype(DType::Int64)?
            .to_vec::<i64>()?
            .iter()
            .any(|&e| e < 0)
    {
        // NumPy's integer loops refuse any negative exponent.
        return Err(negative_power());
    }
    if matches!(
        a.dtype().kind(),
        Kind::SignedInt | Kind::UnsignedInt | Kind::Bool
    ) {
        // jnp squares six times (exponents below 64); NumPy's loops use every bit.
        let rounds = if is_numpy(&rules()) {
            exponent_bits(&b)?
        } else {
            6
        };
        return pow_int_int(a, b, rounds);
    }
    if is_numpy(&rules()) && a.dtype().kind() == Kind::Complex {
        let shape = broadcast_shapes(&[a.shape(), b.shape()])?;
        return super::npmath::complex_power(&broadcast_to(a, &shape)?, &broadcast_to(b, &shape)?);
    }
    lax2(&crate::lax::POW, &a, &b)
}

/// `jnp.arctan2(x, y)`.
pub(super) fn arctan2<'a>(
    u: &'static Ufunc,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    let (x, y) = two(None, Family::Inexact, x, y)?;
    lax2(u.primitive()?, &x, &y)
}

/// `bitwise_and`, `bitwise_or`, `bitwise_xor`: the operands promoted together, the primitive.
pub(super) fn bitwise<'a>(
    u: &'static Ufunc,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    let (x, y) = two(u.op, Family::Any, x, y)?;
    lax2(u.primitive()?, &x, &y)
}

/// `left_shift`: booleans shift as the default integer.
pub(super) fn left_shift<'a>(
    u: &'static Ufunc,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    let (x, y) = two(u.op, Family::Numeric, x, y)?;
    lax2(u.primitive()?, &x, &y)
}

/// `right_shift`: logical for NumPy's unsigned integers, arithmetic otherwise.
pub(super) fn right_shift<'a>(
    u: &'static Ufunc,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    let (x, y) = two(u.op, Family::Numeric, x, y)?;
    let np_unsigned = x.dtype().kind() == Kind::UnsignedInt && !x.dtype().is_sub_byte_int();
    let p = if np_unsigned {
        &crate::lax::SHIFT_RIGHT_LOGICAL
    } else {
        &crate::lax::SHIFT_RIGHT_ARITHMETIC
    };
    lax2(p, &x, &y)
}

/// `logical_and`, `logical_or`, `logical_xor`: the operands as bools; the result weak only
/// when both operands are Python scalars (as JAX answers).
pub(super) fn logical<'a>(
    u: &'static Ufunc,
    x: ArrayLike<'a>,
    y: ArrayLike<'a>,
) -> Result<Array, Error> {
    // Python bools are never weak.
    let weak =
        |a: &ArrayLike<'_>| matches!(a, ArrayLike::Scalar(v) if !matches!(v, Value::Bool(_)));
    let scalars = weak(&x) && weak(&y);
    let (x, y) = two(Some(Op::LogicalAnd), Family::Any, x, y)?;
    let r = lax2(u.primitive()?, &to_bool(&x)?, &to_bool(&y)?)?;
    Ok(if r.weak_type() == scalars {
        r
    } else {
        r.with_weak_type(scalars)
    })
}

/// `jnp.positive(x)`: `x` promoted.
pub(super) fn positive<'a>(_: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    one(x, Family::Any)
}

/// `jnp.abs(x)`: booleans and unsigned integers unchanged; complex gives its float.
pub(super) fn abs<'a>(u: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    let x = arraylike(x)?;
    if matches!(x.dtype().kind(), Kind::Bool | Kind::UnsignedInt) {
        return Ok(x);
    }
    lax1(u.primitive()?, &x)
}

/// `jnp.sign(x)`.
pub(super) fn sign<'a>(u: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    lax1(u.primitive()?, &one(x, Family::Any)?)
}

/// `floor`, `ceil` of inexact `x`; integers and booleans unchanged.
pub(super) fn integers_kept<'a>(u: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    let x = arraylike(x)?;
    if is_integral_or_bool(x.dtype()) {
        return Ok(x);
    }
    let x = one(x, Family::Inexact)?;
    lax1(u.primitive()?, &x)
}

/// Whether `round` keeps `x` as it is: NumPy's round keeps its own integers (and Python
/// ints); booleans and ml_dtypes' integers, which it does not count as integers, go through
/// `rint`.
pub(super) fn builtin_int(x: &ArrayLike<'_>) -> bool {
    match x {
        ArrayLike::Scalar(Value::Int(_)) => true,
        other => other
            .as_array()
            .is_some_and(|a| a.dtype().kind().is_integer() && !ml::is_ml(a.dtype())),
    }
}

/// `jnp.round(x)`: half to even; integers unchanged; complex rounds both parts.
pub(super) fn round<'a>(_: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    if builtin_int(&x) {
        return arraylike(x);
    }
    let x = arraylike(x)?;
    if x.dtype() == DType::Bool && !is_numpy(&rules()) {
        // jnp.round asks finfo(bool) for its largest value.
        return Err(Error::refused(
            Exception::ValueError,
            "data type <class 'numpy.bool'> not inexact",
        ));
    }
    if matches!(x.dtype().kind(), Kind::SignedInt | Kind::UnsignedInt) {
        return Ok(x);
    }
    if x.dtype().kind() == Kind::Complex {
        let re = lax1(&crate::lax::REAL, &x)?;
        let im = lax1(&crate::lax::IMAG, &x)?;
        let p = || Params::new().with("rounding_method", Param::Int(1));
        return lax(
            &crate::lax::COMPLEX,
            &[
                &lax(&crate::lax::ROUND, &[&re], p())?,
                &lax(&crate::lax::ROUND, &[&im], p())?,
            ],
            Params::new(),
        );
    }
    lax(
        &crate::lax::ROUND,
        &[&x],
        Params::new().with("rounding_method", Param::Int(1)),
    )
}

/// `jnp.trunc(x)`: toward zero; integers and booleans unchanged.
pub(super) fn trunc<'a>(_: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    let x = arraylike(x)?;
    if is_integral_or_bool(x.dtype()) {
        return Ok(x);
    }
    let neg = lax2(&crate::lax::LT, &x, &const_like(&x, Value::Int(0))?)?;
    select(&neg, &super::ceil(&x)?, &super::floor(&x)?)
}

/// `jnp.square(x)`: booleans square as the default integer.
pub(super) fn square<'a>(u: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    lax1(u.primitive()?, &one(x, Family::Numeric)?)
}

/// `jnp.reciprocal(x)`: `integer_pow(x, -1)` in the promoted float dtype.
pub(super) fn reciprocal<'a>(_: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    let x = one(x, Family::Inexact)?;
    lax(
        &crate::lax::INTEGER_POW,
        &[&x],
        Params::new().with("y", Param::Int(-1)),
    )
}

/// `jnp.isnan(x)`: `x != x`.
pub(super) fn isnan<'a>(_: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    let x = arraylike(x)?;
    lax2(&crate::lax::NE, &x, &x)
}

/// `jnp.isinf(x)`.
pub(super) fn isinf<'a>(_: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    let x = arraylike(x)?;
    match x.dtype().kind() {
        Kind::Float => {
            let inf = strong_const(&x, Value::Float(f64::INFINITY))?;
            lax2(&crate::lax::EQ, &lax1(&crate::lax::ABS, &x)?, &inf)
        }
        Kind::Complex => {
            let re = lax1(&crate::lax::REAL, &x)?;
            let im = lax1(&crate::lax::IMAG, &x)?;
            let inf = strong_const(&re, Value::Float(f64::INFINITY))?;
            lax2(
                &crate::lax::OR,
                &lax2(&crate::lax::EQ, &lax1(&crate::lax::ABS, &re)?, &inf)?,
                &lax2(&crate::lax::EQ, &lax1(&crate::lax::ABS, &im)?, &inf)?,
            )
        }
        _ => full_bool(&x, false),
    }
}

/// `jnp.isfinite(x)`.
pub(super) fn isfinite<'a>(_: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    let x = arraylike(x)?;
    match x.dtype().kind() {
        Kind::Float => lax1(&crate::lax::IS_FINITE, &x),
        Kind::Complex => lax2(
            &crate::lax::AND,
            &lax1(&crate::lax::IS_FINITE, &lax1(&crate::lax::REAL, &x)?)?,
            &lax1(&crate::lax::IS_FINITE, &lax1(&crate::lax::IMAG, &x)?)?,
        ),
        _ => full_bool(&x, true),
    }
}

/// `jnp.logical_not(x)`.
pub(super) fn logical_not<'a>(_: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    lax1(&crate::lax::NOT, &to_bool(&one(x, Family::Any)?)?)
}

/// `jnp.invert(x)`: bitwise not.
pub(super) fn invert<'a>(u: &'static Ufunc, x: ArrayLike<'a>) -> Result<Array, Error> {
    lax1(u.primitive()?, &one(x, Family::Any)?)
}
