//! The operators on [`Array`] (`+`, `-`, `*`, unary `-`), and the compositions of the
//! binary functions that bind one primitive (their rows: [`super::ufuncs`]).

use dtype_lattice::Error;

use super::ArrayLike;
use super::ufuncs::{add, multiply, negative as neg, subtract};
use crate::array::Array;

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
        neg(self)
    }
}

impl std::ops::Neg for Array {
    type Output = Result<Array, Error>;
    fn neg(self) -> Result<Array, Error> {
        neg(self)
    }
}
