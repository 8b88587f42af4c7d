//! NumPy's own loops where they compute otherwise than the `lax` primitives (which follow
//! XLA's CPU backend): under the NumPy rules these kernels run element by element on the host,
//! as NumPy's loops do with the C library's functions, and keep subnormals (NumPy runs without
//! flushing them).
//!
//! - `exp2` is the C library's `exp2` (XLA's is `exp(x·ln 2)`); float16 computes in float32
//!   and rounds, as NumPy's half loops do. `log2` of real floats is the C library's `log2`.
//! - complex `exp2` is `exp` of `z·ln 2`, `log2` is `log` with both parts times `log2(e)`,
//!   `expm1` is `(expm1(x)·cos y − 2 sin²(y/2), eˣ·sin y)`, `power` multiplies out integer
//!   exponents below 100 (a negative one divides 1 by the result) and is `exp(b·log a)`
//!   otherwise, as NumPy's complex loops compute them; `exp`, `log`, `sqrt`, `tan`, `tanh`,
//!   `arcsin` and `arctan` of complex numbers follow the algorithms of the C library's
//!   (glibc's) `cexp`, `clog`, `csqrt`, `ctan`, `ctanh`, `casin` and `catan`, which NumPy
//!   calls (complex64 computes in float64 and rounds, but `sqrt`, computed in float32 as
//!   `csqrtf` does, and `expm1`).
//! - `rint` of complex numbers rounds both parts half to even; integer `reciprocal` is
//!   `1.0 / x` converted back to the integer as x86-64's C conversion does (0 for 0 but in
//!   int32 and int64, which get their smallest value); `argmax`/`argmin` of complex numbers
//!   order them by real, then imaginary part, a NaN first.
//! - `floor_divide` and `remainder` of real floats are `npy_divmod`'s (ml_dtypes' floats its
//!   `divmod_impl` in float32, the same but for a zero divisor): the signs of zero quotients
//!   and remainders follow `a / b` and the divisor; `sign` gives `+0.0` for either zero;
//!   `maximum`/`minimum` give the second of equal operands (x86's `maxsd`), float16's the
//!   first.
//! - complex `reciprocal` is NumPy's own loop (`-r/d` keeps the sign of a zero part);
//!   `log1p` of real floats is the C library's (a subnormal argument returned as it is).

use dtype_lattice::{DType, Error, Kind};
use num_complex::Complex;

use crate::array::Array;

/// `f` of every element of a real float array: float64 and float32 as they are, float16 (and
/// any narrower float) in float32, rounded back once.
fn map_real(
    x: &Array,
    f64_fn: impl Fn(f64) -> f64,
    f32_fn: impl Fn(f32) -> f32,
) -> Result<Array, Error> {
    match x.dtype() {
        DType::Float64 => {
            let v: Vec<f64> = x.to_vec::<f64>()?.into_iter().map(f64_fn).collect();
            Array::from_shape_vec(x.shape(), v)
        }
        DType::Float32 => {
            let v: Vec<f32> = x.to_vec::<f32>()?.into_iter().map(f32_fn).collect();
            Array::from_shape_vec(x.shape(), v)
        }
        t => map_real(&x.astype(DType::Float32)?, f64_fn, f32_fn)?.astype(t),
    }
}

/// `f` of every element of a complex array (complex64 through `f32_fn`).
fn map_complex(
    x: &Array,
    f64_fn: impl Fn(Complex<f64>) -> Complex<f64>,
    f32_fn: impl Fn(Complex<f32>) -> Complex<f32>,
) -> Result<Array, Error> {
    match x.dtype() {
        DType::Complex128 => {
            let v: Vec<_> = x
                .to_vec::<Complex<f64>>()?
                .into_iter()
                .map(f64_fn)
                .collect();
            Array::from_shape_vec(x.shape(), v)
        }
        _ => {
            let v: Vec<_> = x
                .to_vec::<Complex<f32>>()?
                .into_iter()
                .map(f32_fn)
                .collect();
            Array::from_shape_vec(x.shape(), v)
        }
    }
}

/// A complex64 function computed in float64 and rounded once per part.
fn widened(f: impl Fn(Complex<f64>) -> Complex<f64>) -> impl Fn(Complex<f32>) -> Complex<f32> {
    move |z| {
        let r = f(Complex::new(f64::from(z.re), f64::from(z.im)));
        Complex::new(r.re as f32, r.im as f32)
    }
}

/// NumPy's kernel of the unary ufunc `name` for `x` (already of the loop's dtype), where it
/// differs from the `lax` primitive's; `None` where the primitive computes what NumPy does.
pub(super) fn unary(name: &str, x: &Array) -> Option<Result<Array, Error>> {
    let kind = x.dtype().kind();
    let complex =
        kind == Kind::Complex && matches!(x.dtype(), DType::Complex64 | DType::Complex128);
    let real = matches!(x.dtype(), DType::Float16 | DType::Float32 | DType::Float64);
    Some(match name {
        "exp2" if real => map_real(x, f64::exp2, f32::exp2),
        "exp2" if complex => map_complex(x, cexp2, |z| {
            // NumPy multiplies by ln 2 in float32, then calls cexpf.
            let ln2 = std::f32::consts::LN_2;
            widened(cexp)(Complex::new(z.re * ln2, z.im * ln2))
        }),
        "log2" if real => map_real(x, f64::log2, f32::log2),
        "log2" if complex => map_complex(
            x,
            |z| clog(z) * std::f64::consts::LOG2_E,
            |z| widened(clog)(z) * std::f32::consts::LOG2_E,
        ),
        "log" if complex => map_complex(x, clog, widened(clog)),
        "exp" if complex => map_complex(x, cexp, widened(cexp)),
        "expm1" if complex => map_complex(x, cexpm1_f64, cexpm1_f32),
        "tan" if complex => map_complex(x, ctan, widened(ctan)),
        "tanh" if complex => map_complex(x, ctanh, widened(ctanh)),
        "arcsin" if complex => map_complex(x, casin, widened(casin)),
        "arctan" if complex => map_complex(x, catan, widened(catan)),
        "sqrt" if complex => map_complex(x, csqrt_f64, csqrt_f32),
        "sqrt" if real => map_real(x, f64::sqrt, f32::sqrt),
        "ceil" if real => map_real(x, f64::ceil, f32::ceil),
        "reciprocal" if real => map_real(x, |v| 1.0 / v, |v| 1.0 / v),
        "reciprocal" if complex => map_complex(x, creciprocal_f64, creciprocal_f32),
        "floor" if real => map_real(x, f64::floor, f32::floor),
        "log1p" if real => map_real(x, f64::ln_1p, f32::ln_1p),
        "sign" if real => map_real(x, sign, sign),
        "rint" if complex => map_complex(
            x,
            |z| Complex::new(z.re.round_ties_even(), z.im.round_ties_even()),
            |z| Complex::new(z.re.round_ties_even(), z.im.round_ties_even()),
        ),
        _ => return None,
    })
}

/// A binary function of one float type.
type Binary<T> = fn(T, T) -> T;

/// NumPy's loop of the binary ufunc `name` on two real float arrays of one of its dtypes
/// (float16, float32, float64), broadcast together, where it computes otherwise than the `lax`
/// primitives: `floor_divide` and `remainder` are `npy_floor_divide` and `npy_remainder`
/// ([`divmod_f64`], float16 through [`divmod_f32`] and rounded once, as its half loops do);
/// `maximum` and `minimum` are `isnan(a) || a > b ? a : b` (x86's `maxsd` with NaN
/// propagation: equal operands, `-0.0` and `+0.0`, give the second), float16's
/// `isnan(a) || a >= b ? a : b` (the first). `None` for other functions and operands.
pub(super) fn binary(name: &str, x: &Array, y: &Array) -> Option<Result<Array, Error>> {
    let t = x.dtype();
    if y.dtype() != t || !matches!(t, DType::Float16 | DType::Float32 | DType::Float64) {
        return None;
    }
    let half = t == DType::Float16;
    let (f64_fn, f32_fn): (Binary<f64>, Binary<f32>) = match name {
        "floor_divide" => (
            |a, b| floor_divide(a, b, divmod_f64),
            |a, b| floor_divide(a, b, divmod_f32),
        ),
        "remainder" => (
            |a, b| remainder(a, b, divmod_f64),
            |a, b| remainder(a, b, divmod_f32),
        ),
        "maximum" if half => (
            |_, _| f64::NAN,
            |a, b| if a.is_nan() || a >= b { a } else { b },
        ),
        "minimum" if half => (
            |_, _| f64::NAN,
            |a, b| if a.is_nan() || a <= b { a } else { b },
        ),
        "maximum" => (
            |a, b| if a.is_nan() || a > b { a } else { b },
            |a, b| if a.is_nan() || a > b { a } else { b },
        ),
        "minimum" => (
            |a, b| if a.is_nan() || a < b { a } else { b },
            |a, b| if a.is_nan() || a < b { a } else { b },
        ),
        _ => return None,
    };
    Some((|| {
        let shape = super::broadcast_shapes(&[x.shape(), y.shape()])?;
        let (x, y) = (
            super::broadcast_to(x.clone(), &shape)?,
            super::broadcast_to(y.clone(), &shape)?,
        );
        let pairs = |x: &Array, y: &Array| -> Result<Array, Error> {
            if x.dtype() == DType::Float64 {
                let (a, b) = (x.to_vec::<f64>()?, y.to_vec::<f64>()?);
                let v: Vec<f64> = a.iter().zip(&b).map(|(&a, &b)| f64_fn(a, b)).collect();
                Array::from_shape_vec(&shape, v)
            } else {
                let (a, b) = (x.to_vec::<f32>()?, y.to_vec::<f32>()?);
                let v: Vec<f32> = a.iter().zip(&b).map(|(&a, &b)| f32_fn(a, b)).collect();
                Array::from_shape_vec(&shape, v)
            }
        };
        if half {
            let f32 = DType::Float32;
            pairs(&x.astype(f32)?, &y.astype(f32)?)?.astype(t)
        } else {
            pairs(&x, &y)
        }
    })())
}

/// `npy_floor_divide`: `a / b` for a zero divisor, else the quotient of `divmod`.
fn floor_divide<T: PartialEq + Default + std::ops::Div<Output = T>>(
    a: T,
    b: T,
    divmod: fn(T, T) -> (T, T),
) -> T {
    if b == T::default() {
        a / b
    } else {
        divmod(a, b).0
    }
}

/// `npy_remainder`: `fmod(a, b)` for a zero divisor, else the modulus of `divmod`.
fn remainder<T: PartialEq + Default + std::ops::Rem<Output = T>>(
    a: T,
    b: T,
    divmod: fn(T, T) -> (T, T),
) -> T {
    if b == T::default() {
        a % b
    } else {
        divmod(a, b).1
    }
}

macro_rules! divmod {
    ($name:ident, $t:ty) => {
        /// `npy_divmod` (NumPy's `npy_math_internal.h.src`, after CPython's float divmod; also
        /// ml_dtypes' `divmod_impl` in float32, which differs only where `b` is 0): the
        /// floored quotient, snapped to the nearest integer, and the remainder with the
        /// divisor's sign; a zero quotient takes the sign of `a / b`, a zero remainder `b`'s.
        pub(super) fn $name(a: $t, b: $t) -> ($t, $t) {
            // Rust's `%` of floats is C's `fmod` (exact).
            let mut m = a % b;
            if b == 0.0 {
                return (a / b, m);
            }
            let mut div = (a - m) / b;
            if m != 0.0 {
                if (b < 0.0) != (m < 0.0) {
                    m += b;
                    div -= 1.0;
                }
            } else {
                m = (0.0 as $t).copysign(b);
            }
            let q = if div != 0.0 {
                let f = div.floor();
                if div - f > 0.5 { f + 1.0 } else { f }
            } else {
                (0.0 as $t).copysign(a / b)
            };
            (q, m)
        }
    };
}
divmod!(divmod_f64, f64);
divmod!(divmod_f32, f32);

/// ml_dtypes' `floor_divide` (`first`) or `remainder` of two float64 arrays holding values of
/// one of its float types: `divmod_impl` in float32 (exact there; a float64 array of the
/// float32 results, which the loop rounds to the type). A zero divisor gives a positive NaN,
/// or the quotient an infinity of its sign.
pub(super) fn ml_divmod(x: &Array, y: &Array, first: bool) -> Result<Array, Error> {
    let shape = super::broadcast_shapes(&[x.shape(), y.shape()])?;
    let (x, y) = (
        super::broadcast_to(x.astype(DType::Float32)?, &shape)?,
        super::broadcast_to(y.astype(DType::Float32)?, &shape)?,
    );
    let (a, b) = (x.to_vec::<f32>()?, y.to_vec::<f32>()?);
    let v: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(&a, &b)| {
            let (q, m) = if b == 0.0 {
                // ml_dtypes' own case: a positive NaN, or an infinity of the quotient's sign.
                let q = if a.is_nan() || a == 0.0 {
                    f32::NAN
                } else if a.is_sign_negative() == b.is_sign_negative() {
                    f32::INFINITY
                } else {
                    f32::NEG_INFINITY
                };
                (q, f32::NAN)
            } else {
                divmod_f32(a, b)
            };
            f64::from(if first { q } else { m })
        })
        .collect();
    Array::from_shape_vec(&shape, v)
}

/// NumPy's `sign` of float16, float32 and float64: `x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : x`,
/// `+0.0` for either zero, a NaN as it is.
fn sign<T: Copy + PartialOrd + From<i8>>(x: T) -> T {
    let zero = T::from(0);
    if x > zero {
        T::from(1)
    } else if x < zero {
        T::from(-1)
    } else if x == zero {
        zero
    } else {
        x
    }
}

macro_rules! creciprocal {
    ($name:ident, $t:ty) => {
        /// NumPy's complex `reciprocal` (its own loop, not `1 / z`): with `r` the ratio of the
        /// smaller part to the larger, `(1/d, -r/d)` or `(r/d, -1/d)` where `d` is the larger
        /// part plus the smaller times `r`.
        fn $name(z: Complex<$t>) -> Complex<$t> {
            let (re, im) = (z.re, z.im);
            if im.abs() <= re.abs() {
                let r = im / re;
                let d = re + im * r;
                Complex::new(1.0 / d, -r / d)
            } else {
                let r = re / im;
                let d = re * r + im;
                Complex::new(r / d, -1.0 / d)
            }
        }
    };
}
creciprocal!(creciprocal_f64, f64);
creciprocal!(creciprocal_f32, f32);

/// NumPy's `power` of two complex arrays of one dtype and shape.
pub(super) fn complex_power(a: &Array, b: &Array) -> Result<Array, Error> {
    let pairs = |x: Vec<Complex<f64>>,
                 y: Vec<Complex<f64>>,
                 f: &dyn Fn(Complex<f64>, Complex<f64>) -> Complex<f64>| {
        x.into_iter()
            .zip(y)
            .map(|(p, q)| f(p, q))
            .collect::<Vec<_>>()
    };
    if a.dtype() == DType::Complex128 {
        let v = pairs(a.to_vec()?, b.to_vec()?, &cpow::<false>);
        return Array::from_shape_vec(a.shape(), v);
    }
    let wide = |x: &Array| -> Result<Vec<Complex<f64>>, Error> {
        Ok(x.to_vec::<Complex<f32>>()?
            .into_iter()
            .map(|z| Complex::new(f64::from(z.re), f64::from(z.im)))
            .collect())
    };
    let v: Vec<Complex<f32>> = pairs(wide(a)?, wide(b)?, &cpow::<true>)
        .into_iter()
        .map(|z| Complex::new(z.re as f32, z.im as f32))
        .collect();
    Array::from_shape_vec(a.shape(), v)
}

/// `a ** b` as NumPy's complex loop computes it; `SINGLE`: the products and quotients of the
/// integer powers are rounded to float32 (complex64's loop computes them in float32).
fn cpow<const SINGLE: bool>(a: Complex<f64>, b: Complex<f64>) -> Complex<f64> {
    let round = |z: Complex<f64>| {
        if SINGLE {
            Complex::new(f64::from(z.re as f32), f64::from(z.im as f32))
        } else {
            z
        }
    };
    let mul = |p: Complex<f64>, q: Complex<f64>| {
        // Each product and sum rounded as the loop's own type computes it.
        let r = |v: f64| if SINGLE { f64::from(v as f32) } else { v };
        Complex::new(
            r(r(p.re * q.re) - r(p.im * q.im)),
            r(r(p.re * q.im) + r(p.im * q.re)),
        )
    };
    if b.re == 0.0 && b.im == 0.0 {
        return Complex::new(1.0, 0.0);
    }
    if a.re == 0.0 && a.im == 0.0 {
        return if b.re > 0.0 && b.im == 0.0 {
            Complex::new(0.0, 0.0)
        } else {
            Complex::new(f64::NAN, f64::NAN)
        };
    }
    if b.im == 0.0 && b.re.fract() == 0.0 && b.re.abs() < 100.0 {
        // Exponents 1, 2 and 3 are multiplied out directly; any other integer below 100 in
        // magnitude by squaring, lowest bit first, and a negative one divides 1 by that.
        match b.re {
            1.0 => return a,
            2.0 => return mul(a, a),
            3.0 => return mul(mul(a, a), a),
            _ => {}
        }
        let mut k = b.re.abs() as u32;
        let (mut acc, mut p) = (Complex::new(1.0, 0.0), a);
        loop {
            if k & 1 == 1 {
                acc = mul(acc, p);
            }
            k >>= 1;
            if k == 0 {
                break;
            }
            p = mul(p, p);
        }
        return if b.re < 0.0 {
            round(smith_divide(Complex::new(1.0, 0.0), acc, SINGLE))
        } else {
            acc
        };
    }
    if SINGLE {
        // cpowf: clogf's float32 result, the product in float32, then cexpf.
        let l = round(clog(a));
        return round(cexp(mul(b, l)));
    }
    cexp(b * clog(a))
}

/// `p / q` by Smith's algorithm (NumPy's complex division); `SINGLE` rounds each step to
/// float32.
fn smith_divide(p: Complex<f64>, q: Complex<f64>, single: bool) -> Complex<f64> {
    let r = |v: f64| if single { f64::from(v as f32) } else { v };
    let (qr, qi) = (q.re, q.im);
    if qr.abs() >= qi.abs() {
        if qr == 0.0 && qi == 0.0 {
            return Complex::new(r(p.re / qr.abs()), r(p.im / qr.abs()));
        }
        let rat = r(qi / qr);
        let scl = r(1.0 / r(qr + r(qi * rat)));
        Complex::new(
            r(r(p.re + r(p.im * rat)) * scl),
            r(r(p.im - r(p.re * rat)) * scl),
        )
    } else {
        let rat = r(qr / qi);
        let scl = r(1.0 / r(qi + r(qr * rat)));
        Complex::new(
            r(r(r(p.re * rat) + p.im) * scl),
            r(r(r(p.im * rat) - p.re) * scl),
        )
    }
}

/// `exp(z·ln 2)` (NumPy's complex `exp2`, the product in float64).
fn cexp2(z: Complex<f64>) -> Complex<f64> {
    let ln2 = std::f64::consts::LN_2;
    cexp(Complex::new(z.re * ln2, z.im * ln2))
}

/// glibc's `cexp`: `eˣ·(cos y, sin y)`, with an exact zero imaginary part kept and `eˣ`
/// applied in steps where it alone would overflow.
fn cexp(z: Complex<f64>) -> Complex<f64> {
    let (x, y) = (z.re, z.im);
    if !x.is_finite() || !y.is_finite() {
        if y == 0.0 {
            return Complex::new(x.exp(), y);
        }
        return z.exp();
    }
    if y == 0.0 {
        return Complex::new(x.exp(), y);
    }
    // The largest x whose eˣ is finite, as glibc takes it: (DBL_MAX_EXP − 1)·ln 2.
    let t = 1023.0 * std::f64::consts::LN_2;
    let (mut s, mut c) = if y.abs() > f64::MIN_POSITIVE {
        y.sin_cos()
    } else {
        (y, 1.0)
    };
    let mut x = x;
    if x > t {
        let et = t.exp();
        x -= t;
        s *= et;
        c *= et;
        if x > t {
            x -= t;
            s *= et;
            c *= et;
        }
    }
    if x > t {
        Complex::new(f64::MAX * c, f64::MAX * s)
    } else {
        let e = x.exp();
        Complex::new(e * c, e * s)
    }
}

/// `a·b` as a high and a low part (exact).
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let h = a * b;
    (h, a.mul_add(b, -h))
}

/// `a + b` as a high and a low part (exact).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `x² + y² − 1` without cancellation (`x`, `y` below 1).
fn x2y2m1(x: f64, y: f64) -> f64 {
    let (hx, lx) = two_prod(x, x);
    let (hy, ly) = two_prod(y, y);
    let (s1, e1) = two_sum(hx, -1.0);
    let (s2, e2) = two_sum(s1, hy);
    s2 + (e1 + e2 + lx + ly)
}

/// glibc's `clog`: `log|z|` through `log1p` where |z| is near 1, `arg z` by `atan2`.
fn clog(z: Complex<f64>) -> Complex<f64> {
    let (re, im) = (z.re, z.im);
    if !re.is_finite() || !im.is_finite() || (re == 0.0 && im == 0.0) {
        return z.ln();
    }
    let (mut ax, mut ay) = (re.abs(), im.abs());
    if ax < ay {
        std::mem::swap(&mut ax, &mut ay);
    }
    let eps = f64::EPSILON;
    let real = if ax > f64::MAX / 2.0 || (ax < f64::MIN_POSITIVE && ay < f64::MIN_POSITIVE) {
        // Scaled so that the squares neither overflow nor underflow.
        let k: i32 = if ax > 1.0 { -1 } else { 53 };
        let s = 2f64.powi(k);
        (ax * s).hypot(ay * s).ln() - f64::from(k) * std::f64::consts::LN_2
    } else if ax == 1.0 {
        (ay * ay).ln_1p() / 2.0
    } else if ax > 1.0 && ax < 2.0 && ay < 1.0 {
        let mut d2m1 = (ax - 1.0) * (ax + 1.0);
        if ay >= eps {
            d2m1 += ay * ay;
        }
        d2m1.ln_1p() / 2.0
    } else if (0.5..1.0).contains(&ax) && ay < eps / 2.0 {
        ((ax - 1.0) * (ax + 1.0)).ln_1p() / 2.0
    } else if (0.5..1.0).contains(&ax) && ax * ax + ay * ay >= 0.5 {
        x2y2m1(ax, ay).ln_1p() / 2.0
    } else {
        ax.hypot(ay).ln()
    };
    Complex::new(real, im.atan2(re))
}

macro_rules! cexpm1 {
    ($name:ident, $t:ty) => {
        /// NumPy's complex `expm1` in the type's own precision: `(expm1(x)·cos y −
        /// 2·sin²(y/2), eˣ·sin y)`.
        fn $name(z: Complex<$t>) -> Complex<$t> {
            let h = (z.im / 2.0).sin();
            Complex::new(
                z.re.exp_m1() * z.im.cos() - 2.0 * h * h,
                z.re.exp() * z.im.sin(),
            )
        }
    };
}

cexpm1!(cexpm1_f64, f64);
cexpm1!(cexpm1_f32, f32);

/// glibc's `ctan`: `(sin x·cos x, sinh y·cosh y) / (cos² x + sinh² y)`, and for a large
/// |y| (where cosh² overflows) `(4 sin x·cos x·e^(−2|y|), ±1)`.
fn ctan(z: Complex<f64>) -> Complex<f64> {
    let (x, y) = (z.re, z.im);
    if !x.is_finite() || !y.is_finite() {
        if y.is_infinite() {
            let re = if x.is_finite() && x.abs() > 1.0 {
                0.0f64.copysign(x.sin() * x.cos())
            } else {
                0.0f64.copysign(x)
            };
            return Complex::new(re, 1.0f64.copysign(y));
        }
        if y == 0.0 {
            return Complex::new(f64::NAN, y);
        }
        return Complex::new(f64::NAN, f64::NAN);
    }
    // (DBL_MAX_EXP − 1)·ln 2 / 2.
    let t = (1023.0 * std::f64::consts::LN_2 / 2.0).floor();
    let (sx, cx) = if x.abs() > f64::MIN_POSITIVE {
        x.sin_cos()
    } else {
        (x, 1.0)
    };
    if y.abs() > t {
        let exp_2t = (2.0 * t).exp();
        let mut ay = y.abs() - t;
        let mut re = 4.0 * sx * cx / exp_2t;
        if ay > t {
            re /= exp_2t;
            ay -= t;
            let _ = ay;
        } else {
            re /= (2.0 * ay).exp();
        }
        return Complex::new(re, 1.0f64.copysign(y));
    }
    let (sh, ch) = if y.abs() > f64::MIN_POSITIVE {
        (y.sinh(), y.cosh())
    } else {
        (y, 1.0)
    };
    let den = if sh.abs() > cx.abs() * f64::EPSILON {
        cx * cx + sh * sh
    } else {
        cx * cx
    };
    Complex::new(sx * cx / den, sh * ch / den)
}

/// `arcsin z` without the cancellations of `−i·log(iz + √(1 − z²))` (Hull, Fairgrieve and
/// Tang's algorithm: the real part from `asin`/`atan`, the imaginary one through `log1p` near
/// the branch points), as accurate as the C library's `casin`.
fn casin(z: Complex<f64>) -> Complex<f64> {
    if !z.re.is_finite() || !z.im.is_finite() {
        return z.asin();
    }
    let (x, y) = (z.re.abs(), z.im.abs());
    let (xp1, xm1) = (x + 1.0, x - 1.0);
    let r = xp1.hypot(y);
    let s = xm1.hypot(y);
    let a = 0.5 * (r + s);
    let b = x / a;
    let yy = y * y;
    let re = if b <= 0.6417 {
        b.asin()
    } else {
        let apx = a + x;
        if x <= 1.0 {
            (x / (0.5 * apx * (yy / (r + xp1) + (s - xm1))).sqrt()).atan()
        } else {
            (x / (y * (0.5 * (apx / (r + xp1) + apx / (s + xm1))).sqrt())).atan()
        }
    };
    let im = if a <= 1.5 {
        let am1 = if x < 1.0 {
            0.5 * (yy / (r + xp1) + yy / (s - xm1))
        } else {
            0.5 * (yy / (r + xp1) + (s + xm1))
        };
        if am1 == 0.0 && y != 0.0 && x < 1.0 {
            // y² underflowed: arcsin's imaginary part is y/√(1 − x²) there.
            y / ((1.0 - x) * (1.0 + x)).sqrt()
        } else {
            (am1 + (am1 * (a + 1.0)).sqrt()).ln_1p()
        }
    } else if a > 1e150 {
        a.ln() + std::f64::consts::LN_2
    } else {
        (a + (a * a - 1.0).sqrt()).ln()
    };
    Complex::new(re.copysign(z.re), im.copysign(z.im))
}

/// `arctan z` as the C library's `catan` computes it: the real part `atan2(2x, 1 − x² − y²)
/// / 2` (`1 − x² − y²` without cancellation), the imaginary part `log1p(4y / (x² + (y −
/// 1)²)) / 4` (or `log` of the quotient of `x² + (y ± 1)²` where that is below 1/2), and
/// their limits for huge arguments.
fn catan(z: Complex<f64>) -> Complex<f64> {
    let (x, y) = (z.re, z.im);
    if !x.is_finite() || !y.is_finite() {
        return z.atan();
    }
    let eps = f64::EPSILON;
    if x.abs() >= 16.0 / eps || y.abs() >= 16.0 / eps {
        let re = std::f64::consts::FRAC_PI_2.copysign(x);
        let im = if x.abs() <= 1.0 {
            1.0 / y
        } else if y.abs() <= 1.0 {
            y / x / x
        } else {
            let h = (x / 2.0).hypot(y / 2.0);
            y / h / h / 4.0
        };
        return Complex::new(re, im);
    }
    let (mut ax, mut ay) = (x.abs(), y.abs());
    if ax < ay {
        std::mem::swap(&mut ax, &mut ay);
    }
    let den = if ay < eps / 2.0 {
        // (A zero of either sign is +0 here.)
        (1.0 - ax) * (1.0 + ax) + 0.0
    } else if ax >= 1.0 {
        (1.0 - ax) * (1.0 + ax) - ay * ay
    } else if ax >= 0.75 || ay >= 0.5 {
        -x2y2m1(ax, ay)
    } else {
        (1.0 - ax) * (1.0 + ax) - ay * ay
    };
    let re = 0.5 * (2.0 * x).atan2(den);
    let im = if y.abs() == 1.0 && x.abs() < eps * eps {
        0.5f64.copysign(y) * (std::f64::consts::LN_2 - x.abs().ln())
    } else {
        let r2 = if x.abs() >= eps * eps { x * x } else { 0.0 };
        let num = r2 + (y + 1.0) * (y + 1.0);
        let den2 = r2 + (y - 1.0) * (y - 1.0);
        let f = num / den2;
        if f < 0.5 {
            0.25 * f.ln()
        } else {
            0.25 * (4.0 * y / den2).ln_1p()
        }
    };
    Complex::new(re, im)
}

/// glibc's `ctanh`, `−i·tan(iz)` ([`ctan`]'s formulas with the parts exchanged).
fn ctanh(z: Complex<f64>) -> Complex<f64> {
    let t = ctan(Complex::new(-z.im, z.re));
    Complex::new(t.im, -t.re)
}

macro_rules! csqrt {
    ($name:ident, $t:ty, $mant:expr) => {
        /// glibc's `csqrt` in the type's own precision: `r = √((|z| + x)/2)`, `s = y/(2r)`
        /// (or the mirror for x ≤ 0), scaled near the ends of the range.
        fn $name(z: Complex<$t>) -> Complex<$t> {
            let (mut x, mut y) = (z.re, z.im);
            if !x.is_finite() || !y.is_finite() {
                if y.is_infinite() {
                    return Complex::new(<$t>::INFINITY, y);
                }
                if x == <$t>::NEG_INFINITY {
                    let re = if y.is_nan() { <$t>::NAN } else { 0.0 };
                    return Complex::new(re, <$t>::INFINITY.copysign(y));
                }
                if x == <$t>::INFINITY {
                    let im = if y.is_nan() {
                        <$t>::NAN
                    } else {
                        (0.0 as $t).copysign(y)
                    };
                    return Complex::new(x, im);
                }
                return Complex::new(<$t>::NAN, <$t>::NAN);
            }
            if y == 0.0 {
                return if x < 0.0 {
                    Complex::new(0.0, (-x).sqrt().copysign(y))
                } else {
                    Complex::new(x.sqrt().abs(), (0.0 as $t).copysign(y))
                };
            }
            if x == 0.0 {
                let r = if y.abs() >= 2.0 * <$t>::MIN_POSITIVE {
                    (0.5 * y.abs()).sqrt()
                } else {
                    0.5 * (2.0 * y.abs()).sqrt()
                };
                return Complex::new(r, r.copysign(y));
            }
            let pow2 = |k: i32| (2.0 as $t).powi(k);
            let mut scale: i32 = 0;
            if x.abs() > <$t>::MAX / 4.0 {
                scale = 1;
                x *= 0.25;
                y *= 0.25;
            }
            if y.abs() > <$t>::MAX / 4.0 {
                scale = 1;
                x = if x.abs() >= 4.0 * <$t>::MIN_POSITIVE {
                    x * 0.25
                } else {
                    0.0
                };
                y *= 0.25;
            } else if x.abs() < 2.0 * <$t>::MIN_POSITIVE && y.abs() < 2.0 * <$t>::MIN_POSITIVE {
                scale = -(($mant + 1) / 2);
                x *= pow2(-2 * scale);
                y *= pow2(-2 * scale);
            }
            let d = x.hypot(y);
            let (mut r, mut s);
            if x > 0.0 {
                r = (0.5 * (d + x)).sqrt();
                if scale == 1 && y.abs() < 1.0 {
                    s = y / r;
                    r *= pow2(scale);
                    scale = 0;
                } else {
                    s = 0.5 * (y / r);
                }
            } else {
                s = (0.5 * (d - x)).sqrt();
                if scale == 1 && y.abs() < 1.0 {
                    r = (y / s).abs();
                    s *= pow2(scale);
                    scale = 0;
                } else {
                    r = (0.5 * (y / s)).abs();
                }
            }
            if scale != 0 {
                r *= pow2(scale);
                s *= pow2(scale);
            }
            Complex::new(r, s.copysign(y))
        }
    };
}

csqrt!(csqrt_f64, f64, 53);
csqrt!(csqrt_f32, f32, 24);

/// NumPy's integer `reciprocal`: `1.0 / x` converted back to the integer dtype `t` as x86-64's
/// C conversion does (1 and −1 stay, other values give 0; 0 gives inf, whose conversion is 0
/// in the narrower types and the smallest value in int32 and int64).
pub(super) fn integer_reciprocal(x: &Array) -> Result<Array, Error> {
    let t = x.dtype();
    let zero_gives: i128 = match t {
        DType::Int32 => i128::from(i32::MIN),
        DType::Int64 => i128::from(i64::MIN),
        _ => 0,
    };
    let width = (t.bits() / 8) as usize;
    let mut bytes = Vec::with_capacity(x.size() * width);
    for i in 0..x.size() {
        let v = match x.element(i) {
            Some(crate::repr::Scalar::Int(v)) => v,
            _ => 0,
        };
        let r = match v {
            0 => zero_gives,
            1 | -1 => v,
            _ => 0,
        };
        bytes.extend_from_slice(&r.to_le_bytes()[..width]);
    }
    Array::from_bytes(t, x.shape(), &bytes)
}

/// NumPy's `argmax` (`max: true`) or `argmin` of a non-empty complex array, flattened: the
/// first index of the largest (smallest) element by real, then imaginary part; a NaN in
/// either part wins at once.
pub(super) fn complex_arg_extremum(x: &Array, max: bool) -> Result<usize, Error> {
    let v: Vec<Complex<f64>> = if x.dtype() == DType::Complex128 {
        x.to_vec()?
    } else {
        x.astype(DType::Complex128)?.to_vec()?
    };
    let nan = |z: &Complex<f64>| z.re.is_nan() || z.im.is_nan();
    let beyond = |a: &Complex<f64>, b: &Complex<f64>| {
        if max {
            a.re > b.re || (a.re == b.re && a.im > b.im)
        } else {
            a.re < b.re || (a.re == b.re && a.im < b.im)
        }
    };
    let mut best = 0;
    for (i, z) in v.iter().enumerate() {
        if nan(z) {
            return Ok(i);
        }
        if beyond(z, &v[best]) {
            best = i;
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Complex numbers over a grid of parts from tiny to large, both signs.
    fn grid() -> Vec<Complex<f64>> {
        let parts = [
            0.0, 1e-300, 1e-9, 0.001, 0.3, 0.5, 0.75, 0.999, 1.0, 1.001, 1.5, 2.5, 7.0, 100.0, 1e10,
        ];
        let mut out = Vec::new();
        for &a in &parts {
            for &b in &parts {
                for (sa, sb) in [(1.0, 1.0), (-1.0, 1.0), (1.0, -1.0), (-1.0, -1.0)] {
                    out.push(Complex::new(sa * a, sb * b));
                }
            }
        }
        out
    }

    fn close(a: Complex<f64>, b: Complex<f64>, rel: f64) -> bool {
        (a - b).norm() <= rel * a.norm().max(b.norm()).max(f64::MIN_POSITIVE)
    }

    #[test]
    fn csqrt_squares_back_and_takes_exact_roots() {
        for z in grid() {
            let r = csqrt_f64(z);
            assert!(
                r.re >= 0.0 && r.im.is_sign_negative() == z.im.is_sign_negative(),
                "{z}"
            );
            assert!(close(r * r, z, 1e-15), "csqrt({z}) = {r}");
        }
        // (a + bi)² has the root a + bi exactly (a > 0), in either precision.
        for a in 1..12 {
            for b in -12..12 {
                let w = Complex::new(f64::from(a), f64::from(b));
                assert_eq!(csqrt_f64(w * w), w);
                let w32 = Complex::new(a as f32, b as f32);
                assert_eq!(csqrt_f32(w32 * w32), w32);
            }
        }
        assert_eq!(csqrt_f64(Complex::new(-4.0, -0.0)), Complex::new(0.0, -2.0));
    }

    #[test]
    fn casin_and_catan_invert_sin_and_tan() {
        for z in grid().into_iter().filter(|z| z.norm() < 1e5) {
            let w = casin(z);
            assert!(
                w.re.abs() <= std::f64::consts::FRAC_PI_2,
                "casin({z}) = {w}"
            );
            assert!(close(w.sin(), z, 1e-12), "sin(casin({z})) = {}", w.sin());
            // catan's poles are ±i.
            if (z - Complex::i()).norm() > 1e-3 && (z + Complex::i()).norm() > 1e-3 {
                let t = catan(z);
                assert!(close(t.tan(), z, 1e-12), "tan(catan({z})) = {}", t.tan());
            }
        }
        // On the axes they are the real functions, as accurate as libm's.
        for y in [1e-9, 0.001, 0.3, 0.999, 2.5, 100.0] {
            let w = casin(Complex::new(0.0, y));
            assert!(
                (w.im - y.asinh()).abs() <= f64::EPSILON * w.im,
                "casin(i{y})"
            );
            let t = catan(Complex::new(y, 0.0));
            assert!((t.re - y.atan()).abs() <= f64::EPSILON * t.re, "catan({y})");
        }
        for y in [1e-9, 0.001, 0.3, 0.999] {
            let t = catan(Complex::new(0.0, y));
            assert!(
                (t.im - y.atanh()).abs() <= 2.0 * f64::EPSILON * t.im,
                "catan(i{y})"
            );
        }
    }

    #[test]
    fn clog_and_cexp_invert_each_other() {
        for z in grid().into_iter().filter(|z| z.norm() > 0.0) {
            let l = clog(z);
            assert!(close(cexp(l), z, 1e-12), "exp(log({z})) = {}", cexp(l));
            assert_eq!(l.im, z.im.atan2(z.re));
        }
        // On the unit circle's tangent at i, log|z| is log1p(x²)/2 with no cancellation.
        for x in [1e-9, 1e-3, 0.01] {
            assert_eq!(clog(Complex::new(x, 1.0)).re, (x * x).ln_1p() / 2.0);
        }
        // e^710 alone overflows; times cos 0.785 and sin 0.785 (below 0.71) it does not.
        let big = cexp(Complex::new(710.0, 0.785));
        let half = 355f64.exp();
        let want = Complex::new(half * 0.785f64.cos() * half, half * 0.785f64.sin() * half);
        assert!(big.re.is_finite() && close(big, want, 1e-14), "{big}");
    }

    #[test]
    fn ctanh_is_minus_i_ctan_of_iz_and_saturates() {
        for z in grid().into_iter().filter(|z| z.norm() < 100.0) {
            let t = ctanh(z);
            assert!(close(t, z.tanh(), 1e-12), "ctanh({z}) = {t}, {}", z.tanh());
        }
        let t = ctanh(Complex::new(100.0, 2.5));
        assert_eq!(t.re, 1.0);
        assert!(t.im.abs() < 1e-80);
    }

    #[test]
    fn complex_powers_of_integers_multiply_out() {
        for z in grid()
            .into_iter()
            .filter(|z| z.norm() > 1e-3 && z.norm() < 1e3)
        {
            let mut want = Complex::new(1.0, 0.0);
            for n in 1..=7 {
                want *= z;
                let got = cpow::<false>(z, Complex::new(f64::from(n), 0.0));
                assert!(close(got, want, 1e-14), "{z}^{n} = {got}, want {want}");
                let inv = cpow::<false>(z, Complex::new(-f64::from(n), 0.0));
                assert!(close(inv * want, Complex::new(1.0, 0.0), 1e-13), "{z}^-{n}");
            }
            assert_eq!(
                cpow::<false>(z, Complex::new(0.0, 0.0)),
                Complex::new(1.0, 0.0)
            );
            let general = cpow::<false>(z, Complex::new(0.5, 0.25));
            let reference = (Complex::new(0.5, 0.25) * z.ln()).exp();
            assert!(close(general, reference, 1e-12), "{z}^(0.5+0.25i)");
        }
        let zero = Complex::new(0.0, 0.0);
        assert_eq!(cpow::<false>(zero, Complex::new(2.0, 0.0)), zero);
        assert!(cpow::<false>(zero, Complex::new(-1.0, 0.0)).re.is_nan());
    }

    #[test]
    fn smith_division_divides() {
        for p in grid() {
            for q in grid().into_iter().filter(|q| q.norm() > 1e-200) {
                let got = smith_divide(p, q, false);
                if p.norm() < 1e200 && (p / q).norm().is_finite() && (p / q).norm() > 1e-200 {
                    assert!(close(got, p / q, 1e-14), "{p} / {q} = {got}");
                }
            }
        }
    }

    #[test]
    fn integer_reciprocal_keeps_units_and_truncates_the_rest() {
        let x = Array::from_vec(vec![1i16, -1, 2, -3, 32767, -32768]);
        let r = integer_reciprocal(&x).unwrap();
        assert_eq!(r.to_vec::<i16>().unwrap(), [1, -1, 0, 0, 0, 0]);
        let x = Array::from_vec(vec![1u64, 7, u64::MAX]);
        assert_eq!(
            integer_reciprocal(&x).unwrap().to_vec::<u64>().unwrap(),
            [1, 0, 0]
        );
    }

    #[test]
    fn complex_argmax_orders_by_real_then_imaginary_part() {
        let parts = [-2.0, -0.5, 0.0, 0.5, 2.0];
        let mut v = Vec::new();
        for (i, &a) in parts.iter().enumerate() {
            for &b in parts.iter().cycle().skip(i * 2).take(5) {
                v.push(Complex::new(a, b));
            }
        }
        let x = Array::from_vec(v.clone());
        let key = |z: &Complex<f64>| (z.re, z.im);
        let by = |a: &Complex<f64>, b: &Complex<f64>| key(a).partial_cmp(&key(b)).unwrap();
        let max = v.iter().max_by(|a, b| by(a, b)).unwrap();
        let min = v.iter().min_by(|a, b| by(a, b)).unwrap();
        let first = |m: &Complex<f64>| v.iter().position(|z| z == m).unwrap();
        assert_eq!(complex_arg_extremum(&x, true).unwrap(), first(max));
        assert_eq!(complex_arg_extremum(&x, false).unwrap(), first(min));
        v[7] = Complex::new(0.0, f64::NAN);
        let x = Array::from_vec(v);
        assert_eq!(complex_arg_extremum(&x, true).unwrap(), 7);
        assert_eq!(complex_arg_extremum(&x, false).unwrap(), 7);
    }
}
