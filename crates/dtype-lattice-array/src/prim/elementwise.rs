//! Elementwise primitives: `add`, `sub`, `mul`, `max`, `min`, `neg` and the comparisons, with
//! `jax.lax`'s rules (operands of one dtype and one shape; the result is weak when every
//! operand is) and one generic kernel per operation, instantiated per element type by a single
//! dispatch ([`with_element!`]). Integers wrap; float16 and bfloat16 compute in float32 and
//! round to nearest even once per primitive (as XLA's CPU backend does); `max`/`min`
//! propagate NaN.

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind};
use half::{bf16, f16};
use num_complex::Complex;

use super::{Params, Primitive};
use crate::array::storage::sealed::Words;
use crate::array::{Array, Element, ShapedArray, py_shape};

/// Calls `$body` with `$t` the Rust element type of `$dtype` (the dtypes with one), or
/// evaluates `$other`.
macro_rules! with_element {
    ($dtype:expr, $t:ident => $body:expr, $other:expr) => {
        match $dtype {
            DType::Bool => {
                type $t = bool;
                $body
            }
            DType::Int8 => {
                type $t = i8;
                $body
            }
            DType::Int16 => {
                type $t = i16;
                $body
            }
            DType::Int32 => {
                type $t = i32;
                $body
            }
            DType::Int64 => {
                type $t = i64;
                $body
            }
            DType::UInt8 => {
                type $t = u8;
                $body
            }
            DType::UInt16 => {
                type $t = u16;
                $body
            }
            DType::UInt32 => {
                type $t = u32;
                $body
            }
            DType::UInt64 => {
                type $t = u64;
                $body
            }
            DType::Float16 => {
                type $t = f16;
                $body
            }
            DType::BFloat16 => {
                type $t = bf16;
                $body
            }
            DType::Float32 => {
                type $t = f32;
                $body
            }
            DType::Float64 => {
                type $t = f64;
                $body
            }
            DType::Complex64 => {
                type $t = Complex<f32>;
                $body
            }
            DType::Complex128 => {
                type $t = Complex<f64>;
                $body
            }
            _ => $other,
        }
    };
}

#[allow(unused_imports)] // used by the other primitive modules as they grow
pub(crate) use with_element;

/// The arithmetic of an element type as XLA's CPU backend computes it.
pub(crate) trait Arith: Element {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn neg(self) -> Self;
    /// `<` and `==` as XLA compares (NaN unordered; complex: lexicographic for `<`).
    fn lt(self, o: Self) -> bool;
    fn equal(self, o: Self) -> bool;
    /// Bitwise `and`, `or`, `xor` (logical for bool); never called for floats (the shape rule
    /// refuses them).
    fn and(self, o: Self) -> Self {
        let _ = o;
        self
    }
    fn or(self, o: Self) -> Self {
        let _ = o;
        self
    }
    fn xor(self, o: Self) -> Self {
        let _ = o;
        self
    }
}

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)] fn max(self, o: Self) -> Self { Ord::max(self, o) }
            #[inline(always)] fn min(self, o: Self) -> Self { Ord::min(self, o) }
            #[inline(always)] fn neg(self) -> Self { self.wrapping_neg() }
            #[inline(always)] fn lt(self, o: Self) -> bool { self < o }
            #[inline(always)] fn equal(self, o: Self) -> bool { self == o }
            #[inline(always)] fn and(self, o: Self) -> Self { self & o }
            #[inline(always)] fn or(self, o: Self) -> Self { self | o }
            #[inline(always)] fn xor(self, o: Self) -> Self { self ^ o }
        }
    )*};
}
int_arith!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Arith for bool {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn neg(self) -> Self {
        self
    }
    #[inline(always)]
    fn lt(self, o: Self) -> bool {
        !self & o
    }
    #[inline(always)]
    fn equal(self, o: Self) -> bool {
        self == o
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        self ^ o
    }
}

/// IEEE arithmetic at the type's precision; `max`/`min` propagate NaN (XLA's semantics).
macro_rules! float_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn max(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() { self + o } else if self > o { self } else { o }
            }
            #[inline(always)] fn min(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() { self + o } else if self < o { self } else { o }
            }
            #[inline(always)] fn neg(self) -> Self { -self }
            #[inline(always)] fn lt(self, o: Self) -> bool { self < o }
            #[inline(always)] fn equal(self, o: Self) -> bool { self == o }
        }
    )*};
}
float_arith!(f32, f64);

/// float16 and bfloat16: computed in float32, rounded once (`half` rounds to nearest even).
macro_rules! half_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() + o.to_f32()) }
            #[inline(always)] fn sub(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() - o.to_f32()) }
            #[inline(always)] fn mul(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() * o.to_f32()) }
            #[inline(always)] fn max(self, o: Self) -> Self { <$t>::from_f32(Arith::max(self.to_f32(), o.to_f32())) }
            #[inline(always)] fn min(self, o: Self) -> Self { <$t>::from_f32(Arith::min(self.to_f32(), o.to_f32())) }
            #[inline(always)] fn neg(self) -> Self { -self }
            #[inline(always)] fn lt(self, o: Self) -> bool { self.to_f32() < o.to_f32() }
            #[inline(always)] fn equal(self, o: Self) -> bool { self.to_f32() == o.to_f32() }
        }
    )*};
}
half_arith!(f16, bf16);

macro_rules! complex_arith {
    ($($t:ty),*) => {$(
        impl Arith for Complex<$t> {
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn max(self, o: Self) -> Self { if Arith::lt(self, o) { o } else { self } }
            #[inline(always)] fn min(self, o: Self) -> Self { if Arith::lt(o, self) { o } else { self } }
            #[inline(always)] fn neg(self) -> Self { -self }
            #[inline(always)] fn lt(self, o: Self) -> bool {
                self.re < o.re || (self.re == o.re && self.im < o.im)
            }
            #[inline(always)] fn equal(self, o: Self) -> bool { self == o }
        }
    )*};
}
complex_arith!(f32, f64);

/// Which operation a binary or unary primitive computes (the rules are instantiated per
/// operation with its discriminant as a const parameter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Max,
    Min,
    Neg,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
}

impl Op {
    fn is_comparison(self) -> bool {
        matches!(self, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }

    /// The kinds `jax.lax` accepts for this operation.
    fn accepts(self, kind: Kind) -> bool {
        match self {
            Op::Add | Op::Sub | Op::Mul | Op::Neg => {
                matches!(
                    kind,
                    Kind::SignedInt | Kind::UnsignedInt | Kind::Float | Kind::Complex
                )
            }
            Op::Max | Op::Min | Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
                kind != Kind::Extended
            }
            Op::And | Op::Or | Op::Xor => {
                matches!(kind, Kind::Bool | Kind::SignedInt | Kind::UnsignedInt)
            }
        }
    }

    /// The operation of a const-generic rule's discriminant.
    const fn of(code: u8) -> Op {
        const ALL: [Op; 15] = [
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::Max,
            Op::Min,
            Op::Neg,
            Op::Eq,
            Op::Ne,
            Op::Lt,
            Op::Le,
            Op::Gt,
            Op::Ge,
            Op::And,
            Op::Or,
            Op::Xor,
        ];
        ALL[code as usize]
    }
}

/// `lax`'s shape rule for n-ary elementwise primitives: one dtype, one shape; weak when every
/// operand is; comparisons give bool.
fn shape_rule<const OP: u8>(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    _: &Params,
) -> Result<Vec<ShapedArray>, Error> {
    let op = Op::of(OP);
    let first = inputs[0];
    for (i, a) in inputs.iter().enumerate() {
        if !op.accepts(a.dtype().kind()) || a.dtype().is_extended() {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "{} does not accept dtype {} at position {i}.",
                    prim.name,
                    a.dtype()
                ),
            ));
        }
    }
    if inputs.iter().any(|a| a.dtype() != first.dtype()) {
        let names: Vec<String> = inputs.iter().map(|a| a.dtype().to_string()).collect();
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "{} requires arguments to have the same dtypes, got {}.",
                prim.name,
                names.join(", ")
            ),
        ));
    }
    if inputs.iter().any(|a| a.shape() != first.shape()) {
        let shapes: Vec<String> = inputs.iter().map(|a| py_shape(a.shape())).collect();
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "{} got incompatible shapes for broadcasting: {}.",
                prim.name,
                shapes.join(", ")
            ),
        ));
    }
    let weak = inputs.iter().all(|a| a.weak_type());
    let dtype = if op.is_comparison() {
        DType::Bool
    } else {
        first.dtype()
    };
    Ok(vec![ShapedArray::new(
        first.shape(),
        dtype,
        weak && !op.is_comparison(),
    )])
}

/// Applies `f` to every element of `x` (and `y`), writing an output of `U`.
fn map2<T: Element, U: Element>(x: &Array, y: &Array, f: impl Fn(T, T) -> U) -> Vec<U::Word> {
    let xs = T::Word::view(x.storage()).unwrap_or(&[]);
    let ys = T::Word::view(y.storage()).unwrap_or(&[]);
    xs.iter()
        .zip(ys)
        .map(|(&a, &b)| f(T::from_word(a), T::from_word(b)).to_word())
        .collect()
}

fn kernel<T: Arith>(op: Op, x: &Array, y: &Array) -> crate::array::Storage {
    match op {
        Op::Add => Words::into_storage(map2::<T, T>(x, y, T::add)),
        Op::Sub => Words::into_storage(map2::<T, T>(x, y, T::sub)),
        Op::Mul => Words::into_storage(map2::<T, T>(x, y, T::mul)),
        Op::Max => Words::into_storage(map2::<T, T>(x, y, T::max)),
        Op::Min => Words::into_storage(map2::<T, T>(x, y, T::min)),
        Op::Neg => Words::into_storage(map2::<T, T>(x, y, |a, _| a.neg())),
        Op::Eq => Words::into_storage(map2::<T, bool>(x, y, T::equal)),
        Op::Ne => Words::into_storage(map2::<T, bool>(x, y, |a, b| !a.equal(b))),
        Op::Lt => Words::into_storage(map2::<T, bool>(x, y, T::lt)),
        Op::Le => Words::into_storage(map2::<T, bool>(x, y, |a, b| a.lt(b) || a.equal(b))),
        Op::Gt => Words::into_storage(map2::<T, bool>(x, y, |a, b| b.lt(a))),
        Op::Ge => Words::into_storage(map2::<T, bool>(x, y, |a, b| b.lt(a) || a.equal(b))),
        Op::And => Words::into_storage(map2::<T, T>(x, y, T::and)),
        Op::Or => Words::into_storage(map2::<T, T>(x, y, T::or)),
        Op::Xor => Words::into_storage(map2::<T, T>(x, y, T::xor)),
    }
}

fn impl_rule<const OP: u8>(
    prim: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    out: &[ShapedArray],
) -> Result<Vec<Array>, Error> {
    let op = Op::of(OP);
    let x = inputs[0];
    let y = inputs.get(1).copied().unwrap_or(x);
    let data = with_element!(x.dtype(), T => kernel::<T>(op, x, y), {
        return Err(Error::refused(
            Exception::NotImplementedError,
            format!("{} of {} arrays is not implemented yet", prim.name, x.dtype()),
        ));
    });
    Ok(vec![Array::from_parts(out[0].clone(), data)])
}

macro_rules! elementwise {
    ($($c:ident = $name:literal, $arity:literal, $op:ident;)*) => {$(
        pub(crate) static $c: Primitive = Primitive {
            name: $name,
            arity: Some($arity),
            shape_rule: shape_rule::<{ Op::$op as u8 }>,
            impl_rule: impl_rule::<{ Op::$op as u8 }>,
        };
    )*};
}

elementwise! {
    ADD = "add", 2, Add;
    SUB = "sub", 2, Sub;
    MUL = "mul", 2, Mul;
    MAX = "max", 2, Max;
    MIN = "min", 2, Min;
    NEG = "neg", 1, Neg;
    EQ = "eq", 2, Eq;
    NE = "ne", 2, Ne;
    LT = "lt", 2, Lt;
    LE = "le", 2, Le;
    GT = "gt", 2, Gt;
    GE = "ge", 2, Ge;
    AND = "and", 2, And;
    OR = "or", 2, Or;
    XOR = "xor", 2, Xor;
}
