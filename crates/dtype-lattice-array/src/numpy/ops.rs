//! The elementwise functions and the operators on [`Array`]: each a row of a table (the
//! `jax.numpy` name, the promotion rule it follows, the `lax` primitive it binds).

use dtype_lattice::{Error, Op, Value};

use super::{ArrayLike, binary, ml};
use crate::array::Array;
use crate::lax::elementwise as E;
use crate::lax::{self, Params};

macro_rules! binary_functions {
    ($($(#[$doc:meta])* $name:ident => $op:ident, $prim:ident, $bool:expr;)*) => {$(
        $(#[$doc])*
        ///
        /// # Errors
        ///
        /// JAX's refusals: a promotion the rules refuse (`TypePromotionError` in strict mode),
        /// a Python int out of range (`OverflowError`), shapes that do not broadcast
        /// (`ValueError`), a dtype the primitive does not accept (`TypeError`).
        pub fn $name<'a>(x: impl Into<ArrayLike<'a>>, y: impl Into<ArrayLike<'a>>) -> Result<Array, Error> {
            let (x, y) = (x.into(), y.into());
            if let Some((a, b)) = super::same_operands(&x, &y) {
                return lax::bind_same_aval(&crate::lax::elementwise::$prim, a, b);
            }
            if let Some(r) = beyond_integers(stringify!($name), &x, &y) {
                return r;
            }
            if let Some(r) = ml::through_loop(stringify!($name), &[x.clone(), y.clone()], |v, l| {
                let (a, b) = ml::two(v);
                match stringify!($name) {
                    "maximum" | "minimum" if l.ml_dtypes => ml_extremum(stringify!($name), a, b),
                    _ => $name(a, b),
                }
            }) {
                return r;
            }
            if let Some(r) = super::functions::numpy_binary(stringify!($name), &x, &y) {
                return r;
            }
            if let Some(r) = super::float32_in_float64(stringify!($name), &x, &y, $name) {
                return r;
            }
            if let Some(r) = super::simplify::bool_select(stringify!($name), &x, &y) {
                return r;
            }
            binary(Op::$op, &crate::lax::elementwise::$prim, $bool, x, y)
        }
    )*};
}

/// NumPy's comparison of an array of its integers with a Python int beyond their range: the
/// same answer for every element (the int compares exactly, as its sign decides). `None`
/// for anything else, and outside the NumPy rules.
fn beyond_integers(
    name: &str,
    x: &ArrayLike<'_>,
    y: &ArrayLike<'_>,
) -> Option<Result<Array, Error>> {
    if !super::COMPARISONS.contains(&name) {
        return None;
    }
    fn flip(n: &str) -> &str {
        match n {
            "less" => "greater",
            "less_equal" => "greater_equal",
            "greater" => "less",
            "greater_equal" => "less_equal",
            other => other,
        }
    }
    // `array OP int`, the int's operand flipped to the right.
    let (a, v, name) = match (x, y) {
        (a, ArrayLike::Scalar(Value::Int(v))) => (a.as_array()?, *v, name),
        (ArrayLike::Scalar(Value::Int(v)), a) => (a.as_array()?, *v, flip(name)),
        _ => return None,
    };
    let t = a.dtype();
    if !super::is_numpy(&super::rules()) || !t.kind().is_integer() || ml::is_ml(t) {
        return None;
    }
    let (min, max) = t.int_range()?;
    if (min..=max).contains(&v) {
        return None;
    }
    // Every element is below the int (it is above the range) or above it.
    let below = v > max;
    let answer = match name {
        "equal" => false,
        "not_equal" => true,
        "less" | "less_equal" => below,
        "greater" | "greater_equal" => !below,
        _ => return None,
    };
    Some(super::full(
        a.shape(),
        Value::Bool(answer),
        dtype_lattice::DType::Bool,
    ))
}

/// ml_dtypes' `maximum`/`minimum` (`isnan(a) || a > b ? a : b`) on its float32 values.
fn ml_extremum(name: &str, a: ArrayLike<'_>, b: ArrayLike<'_>) -> Result<Array, Error> {
    let (a, b) = (
        super::functions::arraylike(a)?,
        super::functions::arraylike(b)?,
    );
    let beyond = if name == "maximum" {
        greater(&a, &b)?
    } else {
        less(&a, &b)?
    };
    let take = super::functions::logical_or(super::functions::isnan(&a)?, beyond)?;
    super::functions::r#where(take, &a, &b)
}

binary_functions! {
    /// `jnp.add(x, y)`, `x + y`.
    add => Add, ADD, Some(&E::OR);
    /// `jnp.subtract(x, y)`, `x - y`.
    subtract => Subtract, SUB, None;
    /// `jnp.multiply(x, y)`, `x * y`.
    multiply => Multiply, MUL, Some(&E::AND);
    /// `jnp.maximum(x, y)` (NaN propagates).
    maximum => Add, MAX, None;
    /// `jnp.minimum(x, y)` (NaN propagates).
    minimum => Add, MIN, None;
    /// `jnp.equal(x, y)`, `x == y`.
    equal => Equal, EQ, None;
    /// `jnp.not_equal(x, y)`, `x != y`.
    not_equal => Equal, NE, None;
    /// `jnp.less(x, y)`, `x < y`.
    less => Less, LT, None;
    /// `jnp.less_equal(x, y)`, `x <= y`.
    less_equal => Less, LE, None;
    /// `jnp.greater(x, y)`, `x > y`.
    greater => Less, GT, None;
    /// `jnp.greater_equal(x, y)`, `x >= y`.
    greater_equal => Less, GE, None;
}

/// `jnp.negative(x)`, `-x`.
///
/// # Errors
///
/// JAX's `TypeError` for a dtype `neg` does not accept (bool, keys).
pub fn negative<'a>(x: impl Into<ArrayLike<'a>>) -> Result<Array, Error> {
    let x = x.into();
    if let Some(r) = ml::through_loop("negative", std::slice::from_ref(&x), |v, _| {
        negative(ml::one(v))
    }) {
        return r;
    }
    let x = super::promote_and_broadcast(Op::Add, &[x])?;
    lax::bind1(&crate::lax::elementwise::NEG, &[&x[0]], &Params::new())
}

/// The operators: `&x + &y`, `&x * 2.0`, `2.0 * &x`, `-&x`, and chains on results
/// (`(&x * 2.0) + &b`; a Rust number after a result needs `?`: `(&x * 2.0)? + 1.0`): each
/// answers a `Result`, so that JAX's refusals are values, not panics.
macro_rules! operators {
    (@result $trait:ident $method:ident $f:ident; $($rhs:ty),*) => {$(
        impl<'a> std::ops::$trait<$rhs> for Result<Array, Error> {
            type Output = Result<Array, Error>;
            fn $method(self, rhs: $rhs) -> Result<Array, Error> {
                $f(self?, rhs)
            }
        }
    )*};
    ($($trait:ident $method:ident => $f:ident;)*) => {$(
        impl<'a, R: Into<ArrayLike<'a>>> std::ops::$trait<R> for &'a Array {
            type Output = Result<Array, Error>;
            fn $method(self, rhs: R) -> Result<Array, Error> {
                $f(self, rhs)
            }
        }
        impl<'a, R: Into<ArrayLike<'a>>> std::ops::$trait<R> for Array {
            type Output = Result<Array, Error>;
            fn $method(self, rhs: R) -> Result<Array, Error> {
                $f(self, rhs)
            }
        }
        operators!(@result $trait $method $f; &'a Array, Array);
        impl<'a> std::ops::$trait<&'a Array> for f64 {
            type Output = Result<Array, Error>;
            fn $method(self, rhs: &'a Array) -> Result<Array, Error> {
                $f(self, rhs)
            }
        }
        impl<'a> std::ops::$trait<&'a Array> for i32 {
            type Output = Result<Array, Error>;
            fn $method(self, rhs: &'a Array) -> Result<Array, Error> {
                $f(self, rhs)
            }
        }
    )*};
}

operators! {
    Add add => add;
    Sub sub => subtract;
    Mul mul => multiply;
}

impl From<Result<Array, Error>> for ArrayLike<'_> {
    /// A result as an operand, so that chains need no `?` between steps (an error stays an
    /// error: it is turned into an operand that fails promotion with the same error).
    fn from(r: Result<Array, Error>) -> Self {
        match r {
            Ok(a) => ArrayLike::Owned(a),
            Err(e) => ArrayLike::Failed(Box::new(e)),
        }
    }
}

impl std::ops::Neg for &Array {
    type Output = Result<Array, Error>;
    fn neg(self) -> Result<Array, Error> {
        negative(self)
    }
}

impl std::ops::Neg for Array {
    type Output = Result<Array, Error>;
    fn neg(self) -> Result<Array, Error> {
        negative(self)
    }
}
