//! The generic kernel of every elementwise operation, on the dtype's compute lane, and the
//! policy of XLA's CPU backend it applies: denormals off (subnormal operands read as zero,
//! results flushed) except where XLA's code does otherwise (the sign and bit operations, the
//! functions that return a tiny argument as it is, glibc's functions reading their operands'
//! bits), the fast paths tried first.

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error};

use super::Params;
use super::lanes::Lane;
use crate::array::{Array, ShapedArray, Storage};
use crate::kernels::math::Fn1;

#[allow(unused_imports)]
use super::*;

/// `f` of every pair of elements.
pub(super) fn zip<T: Copy, U>(x: &[T], y: &[T], f: impl Fn(T, T) -> U) -> Vec<U> {
    x.iter().zip(y).map(|(&a, &b)| f(a, b)).collect()
}

/// `f` of every element.
pub(super) fn map<T: Copy, U>(x: &[T], f: impl Fn(T) -> U) -> Vec<U> {
    x.iter().map(|&a| f(a)).collect()
}

/// `x ** y` by JAX's square-and-multiply (`_integer_pow`): every product and the reciprocal
/// are primitives of their own, each result rounded to the dtype by `round`; `div` divides
/// one by the product for a negative power, `mul` multiplies.
pub(super) fn integer_pow_vec<T: Arith>(
    x: Vec<T>,
    y: i64,
    round: impl Fn(Vec<T>) -> Vec<T>,
    mul: fn(T, T) -> T,
    div: fn(T, T) -> T,
) -> Vec<T> {
    if y == 0 {
        return vec![T::one(); x.len()];
    }
    let acc = crate::kernels::math::square_and_multiply(x, y, |a: &Vec<T>, b: &Vec<T>| {
        round(zip(a, b, mul))
    })
    .unwrap_or_default();
    if y < 0 {
        map(&acc, |a| div(T::one(), a))
    } else {
        acc
    }
}

/// A shift of the `bits`-wide pattern `p` by the amount pattern `s`, as XLA shifts: amounts of
/// `bits` or more (negative amounts read as unsigned) shift everything out.
pub(super) fn shift(op: Op, p: u64, s: u64, bits: u32) -> u64 {
    let mask = if bits >= 64 { !0 } else { (1u64 << bits) - 1 };
    let (p, s) = (p & mask, s & mask);
    let big = s >= u64::from(bits);
    match op {
        Op::ShiftLeft if big => 0,
        Op::ShiftLeft => (p << s) & mask,
        Op::ShiftRightLogical if big => 0,
        Op::ShiftRightLogical => p >> s,
        _ => {
            let sx = ((p << (64 - bits)) as i64) >> (64 - bits);
            let r = if big { sx >> 63 } else { sx >> s };
            (r as u64) & mask
        }
    }
}

/// `clz` of a `bits`-wide pattern.
pub(super) fn clz(p: u64, bits: u32) -> u64 {
    let mask = if bits >= 64 { !0 } else { (1u64 << bits) - 1 };
    u64::from((p & mask).leading_zeros() - (64 - bits))
}

/// Whether `op` on `x` must go to the generic kernel for its subnormal elements: the fast
/// paths flush every subnormal but for float32 `sin` and `tanh`, where [`keeps_tiny`] or
/// [`glibc_elements`] say XLA's code keeps one.
pub(super) fn needs_subnormal_rules(op: Op, x: &Array, out: &ShapedArray) -> bool {
    subnormal_rules_differ(op, out.dtype(), out.shape())
        && match x.storage() {
            Storage::W32(v) => has_subnormal32(v),
            Storage::W16(v) if x.dtype() == DType::BFloat16 => {
                v.iter().any(|&w| w & 0x7f80 == 0 && w & 0x7fff != 0)
            }
            _ => false,
        }
}

/// Whether XLA's rules for subnormal arguments of the unary `op` ([`keeps_tiny`],
/// [`glibc_elements`]) differ from the fast paths' for an output of `d` and `shape`, under
/// JAX's rules: then an operand with a subnormal element takes the generic kernel.
pub(crate) fn subnormal_rules_differ(op: Op, d: DType, shape: &[usize]) -> bool {
    let Some(f) = op.fn1() else { return false };
    let n: usize = shape.iter().product();
    // The fast paths' own rule: float32 sin and tanh keep subnormals, the rest flush.
    let fast_keeps = d == DType::Float32 && matches!(f, Fn1::Sin | Fn1::Tanh);
    let special = keeps_tiny(f, d, n) && !fast_keeps || !glibc_elements(f, d, shape).is_empty();
    special && crate::kernels::vmath::fast(f) && super::super::on_xla()
}

/// Whether float32 words hold a subnormal.
pub(crate) fn has_subnormal32(v: &[u32]) -> bool {
    v.iter()
        .any(|&w| w & 0x7f80_0000 == 0 && w & 0x7fff_ffff != 0)
}

/// Whether XLA's CPU code returns a tiny argument of the unary function `f` as it is, a
/// subnormal one unflushed (a select on `|x|`, or glibc's fast path for tiny arguments), in
/// an output of `dtype` and `n` elements: float32 and bfloat16 (computed in float32) `sin`,
/// `tan`, `atan`, `tanh` and `expm1`; float64 `sin`, `tan` and `expm1`, and `atan` but for a
/// single element (glibc's `atan2(x, 1)`, which reads a subnormal `x` as zero); and on
/// float8_e8m0fnu's 2⁻¹²⁷ (a float32 subnormal). The other functions flush (DAZ/FTZ).
pub(super) fn keeps_tiny(f: Fn1, dtype: DType, n: usize) -> bool {
    use Fn1::{Atan, Expm1, Sin, Tan, Tanh};
    match dtype {
        DType::Float32 | DType::BFloat16 | DType::Float8E8M0Fnu => {
            matches!(f, Sin | Tan | Atan | Tanh | Expm1)
        }
        DType::Float64 => matches!(f, Sin | Tan | Expm1) || f == Atan && n != 1,
        _ => false,
    }
}

thread_local! {
    /// Whether the elementwise primitive now evaluated is a program of its own ([`alone`]).
    static ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Evaluates `f`, one elementwise primitive that is the whole program XLA compiles (a
/// `jax.numpy` function that is that primitive on an operand of its dtype, such as
/// `jnp.log` of a float32 array): XLA emits a lone operation with its vectorising loop
/// emitter, a fusion of several with another, which [`glibc_elements`] tells apart.
pub(crate) fn alone<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ALONE.with(|a| a.set(self.0));
        }
    }
    let _restore = Restore(ALONE.with(|a| a.replace(true)));
    f()
}

/// The elements of an output of `dtype` and `shape` that XLA's CPU code computes with
/// glibc's function rather than its own approximation of `f`: a lone float32 `log`
/// ([`alone`]) over a rank-1 array of at most 16 elements computes in vectors of 8 then one
/// vector of the rest, and LLVM expands a vector of 3, 5, 6 or 7 lanes into calls of glibc's
/// `logf` (a `logf` of a subnormal is `-150·ln 2`, see [`crate::kernels::glibc::log`]; XLA's
/// approximation reads it as zero). Longer and multidimensional arrays, and fusions of
/// several operations, are computed by XLA's code throughout.
pub(super) fn glibc_elements(f: Fn1, dtype: DType, shape: &[usize]) -> std::ops::Range<usize> {
    const VECTOR: usize = 8;
    let &[n] = shape else { return 0..0 };
    let rest = n % VECTOR;
    if f == Fn1::Log
        && dtype == DType::Float32
        && n <= 2 * VECTOR
        && matches!(rest, 3 | 5..=7)
        && ALONE.with(std::cell::Cell::get)
    {
        n - rest..n
    } else {
        0..0
    }
}

pub(super) fn kernel<T: Arith>(
    op: Op,
    inputs: &[&Array],
    params: &Params,
    out: &ShapedArray,
) -> Result<Storage, Error> {
    // float8_e8m0fnu's smallest value, 2⁻¹²⁷, is a float32 subnormal: loaded, it is flushed to
    // zero as XLA's float32 arithmetic does. But XLA converts the format to float32 with a
    // select of that constant, and LLVM folds an operation with constants applied to it at
    // IEEE precision: sign, ceil, integer_pow and exp2's product by log 2 see it as it is
    // (JAX's results); glibc's functions (pow, rem) read its bits.
    let e8m0 = inputs[0].dtype() == DType::Float8E8M0Fnu;
    let e8m0_raw = e8m0 && matches!(op, Op::Sign | Op::Ceil | Op::IntegerPow | Op::Exp2);
    // NumPy's loops run without flushing subnormals: under its rules operands are read and
    // results written as they are.
    let unflushed = !super::super::on_xla();
    let load = |a: &Array| {
        if e8m0_raw || unflushed {
            T::load_raw(a)
        } else {
            T::load(a)
        }
    };
    let x = load(inputs[0]);
    let od = out.dtype();
    let bits = inputs[0].dtype().bits();
    // population_count of int4/uint4 counts in their 8-bit container (as JAX answers; int2's
    // counts in its own 2 bits).
    let container = if bits == 4 { 8 } else { bits };
    let same = |v: Vec<T>| {
        if unflushed {
            T::store_raw(od, v)
        } else {
            T::store(od, v)
        }
    };
    // A primitive's result rounded to the output dtype and read back (for the lowerings
    // that are several primitives in JAX).
    let round = |v: Vec<T>| {
        let aval = ShapedArray::new(&[v.len()], od, false);
        T::load(&Array::from_parts(aval, T::store(od, v)))
    };
    // XLA's complex formulas where NumPy's loops compute otherwise (read once per call).
    let xla = is_complex(od) && super::super::on_xla();
    if op == Op::Exp2 && !matches!(od, DType::Float32 | DType::Float64) {
        // JAX lowers exp2 as exp(log(2) * x), the constant and product in the dtype.
        let ln2 = round(vec![T::ln2()])
            .first()
            .copied()
            .unwrap_or_else(T::ln2);
        let p = if e8m0 {
            // The product of the constant 2⁻¹²⁷ is folded (2⁻¹²⁸, unflushed, which rounds
            // back to 2⁻¹²⁷); the others are computed, a subnormal product flushed.
            let p = map(&x, |a| {
                let r = a.mul(ln2);
                if a == a.ftz_lane() { r.ftz_lane() } else { r }
            });
            let aval = ShapedArray::new(&[p.len()], od, false);
            T::load(&Array::from_parts(aval, T::store_raw(od, p)))
        } else {
            round(map(&x, |a| a.mul(ln2)))
        };
        return Ok(same(T::f1_all(p, Fn1::Exp)));
    }
    let on_xla = super::super::on_xla();
    if op == Op::Asin && is_float(od) && on_xla {
        // XLA's decomposition (chlo.asin): `a + a` with `a = atan2(x, 1 + √((1 − x)(1 + x)))`,
        // each step an operation of the dtype (float16, bfloat16 and the narrow formats round
        // every step to it; atan2 reads `x` unflushed, as glibc's function does).
        let raw = T::load_raw(inputs[0]);
        let one = T::one();
        let a = round(map(&x, |v| one.sub(v)));
        let b = round(map(&x, |v| v.add(one)));
        let p = round(zip(&a, &b, T::mul));
        let r = round(map(&p, |v| v.f1(Fn1::Sqrt)));
        let d = round(map(&r, |v| v.add(one)));
        let t = round(zip(&raw, &d, T::atan2_xla));
        return Ok(same(map(&t, |v| v.add(v))));
    }
    if let Some(f) = op.fn1() {
        let n = out.size();
        if on_xla && keeps_tiny(f, od, n) {
            // A tiny argument returned as it is (subnormals kept in and out).
            let x = T::load_raw(inputs[0]);
            return Ok(T::store_raw(od, T::f1_all(x, f)));
        }
        let tail = if on_xla {
            glibc_elements(f, od, out.shape())
        } else {
            0..0
        };
        if !tail.is_empty() {
            // XLA's own approximation up to the tail, glibc's function on it (see
            // `glibc_elements`): glibc reads a subnormal operand's bits.
            let raw = T::load_raw(inputs[0]);
            let mut v = T::f1_all(x, f);
            for i in tail {
                v[i] = raw[i].f1_glibc(f);
            }
            return Ok(T::store_raw(od, v.into_iter().map(T::ftz_lane).collect()));
        }
        if xla {
            return Ok(same(map(&x, |a| a.f1_xla(f))));
        }
        return Ok(same(T::f1_all(x, f)));
    }
    if matches!(op, Op::Neg | Op::Abs | Op::Real | Op::Imag | Op::Conj) {
        // Sign and bit operations: no flushing of subnormals.
        let x = T::load_raw(inputs[0]);
        return Ok(match op {
            Op::Neg => T::store_raw(od, map(&x, T::neg)),
            Op::Abs if !is_complex(inputs[0].dtype()) => T::Real::store_raw(od, map(&x, T::abs)),
            Op::Abs => T::Real::store(od, map(&x, T::abs)),
            Op::Real => T::Real::store_raw(od, map(&x, T::real)),
            Op::Imag => T::Real::store_raw(od, map(&x, T::imag)),
            _ => T::Cplx::store_raw(od, map(&x, T::conj)),
        });
    }
    if op.is_unary() {
        return Ok(match op {
            Op::Not => same(map(&x, T::not)),
            Op::Sign if xla => same(map(&x, T::sign_xla)),
            Op::Sign => same(map(&x, T::sign)),
            Op::Floor => same(map(&x, T::floor)),
            Op::Ceil => same(map(&x, T::ceil)),
            Op::Round if rounding_method(params)? == 1 => same(map(&x, T::round_even)),
            Op::Round => same(map(&x, T::round_away)),
            Op::IsFinite => bool::store(od, map(&x, T::is_finite)),
            Op::Abs => T::Real::store(od, map(&x, T::abs)),
            Op::Real => T::Real::store(od, map(&x, T::real)),
            Op::Imag => T::Real::store(od, map(&x, T::imag)),
            Op::Conj => T::Cplx::store(od, map(&x, T::conj)),
            Op::Square if xla => same(map(&x, T::square_xla)),
            Op::Square => same(map(&x, |a| a.mul(a))),
            Op::IntegerPow => {
                let y = integer_pow_y("integer_pow", params)?;
                // Each product is its own primitive, rounded to the dtype.
                // A negative power divides one by the product (XLA's complex division).
                let (mul, div) = if xla {
                    (T::mul_xla as fn(T, T) -> T, T::div_xla as fn(T, T) -> T)
                } else {
                    (T::mul as fn(T, T) -> T, T::div as fn(T, T) -> T)
                };
                same(integer_pow_vec(x, y, round, mul, div))
            }
            Op::PopulationCount => same(map(&x, |a| {
                T::of_pattern(u64::from((a.pattern() & mask(container)).count_ones()))
            })),
            Op::Clz => same(map(&x, |a| T::of_pattern(clz(a.pattern(), bits)))),
            _ => return Err(not_implemented(op, inputs[0].dtype())),
        });
    }
    if op == Op::Atan2 && is_complex(od) && !xla {
        return Err(not_implemented(op, od));
    }
    if on_xla && matches!(op, Op::Rem | Op::Pow | Op::Atan2) && is_float(od) {
        // glibc's functions, on the operands as they are (they read the bits; see
        // `crate::kernels::glibc`; their results come flushed where the hardware flushes them).
        let (x, y) = (T::load_raw(inputs[0]), T::load_raw(inputs[1]));
        let f: fn(T, T) -> T = match op {
            Op::Rem => T::rem_xla,
            Op::Pow => T::pow_xla,
            _ => T::atan2_xla,
        };
        return Ok(T::store_raw(od, zip(&x, &y, f)));
    }
    if matches!(op, Op::EqTo | Op::LtTo | Op::LeTo) {
        // XLA's TOTALORDER comparisons compare bits as integers: nothing is flushed.
        let (x, y) = (T::load_raw(inputs[0]), T::load_raw(inputs[1]));
        let f: fn(T, T) -> bool = match op {
            Op::EqTo => T::total_eq,
            Op::LtTo => T::total_lt,
            _ => |a, b| a.total_lt(b) || a.total_eq(b),
        };
        return Ok(bool::store(od, zip(&x, &y, f)));
    }
    if op == Op::Complex {
        // A composition of the parts, no arithmetic: no flushing.
        let (re, im) = (T::load_raw(inputs[0]), T::load_raw(inputs[1]));
        return Ok(T::Cplx::store_raw(od, zip(&re, &im, T::compose)));
    }
    let y = load(inputs[1]);
    Ok(match op {
        Op::Add | Op::AddAny => same(zip(&x, &y, T::add)),
        Op::Sub => same(zip(&x, &y, T::sub)),
        Op::Mul if xla => same(zip(&x, &y, T::mul_xla)),
        Op::Mul => same(zip(&x, &y, T::mul)),
        Op::Div if xla => same(zip(&x, &y, T::div_xla)),
        Op::Div => same(zip(&x, &y, T::div)),
        Op::Rem => same(zip(&x, &y, T::rem)),
        Op::Pow if xla => same(zip(&x, &y, T::pow_xla)),
        Op::Pow => same(zip(&x, &y, T::pow)),
        Op::Atan2 if xla => same(zip(&x, &y, T::atan2_xla)),
        Op::Atan2 => same(zip(&x, &y, T::atan2)),
        // Complex max/min select an operand: no flushing.
        Op::Max if is_complex(od) => T::store_raw(od, zip(&x, &y, T::max)),
        Op::Min if is_complex(od) => T::store_raw(od, zip(&x, &y, T::min)),
        Op::Max => same(zip(&x, &y, T::max)),
        Op::Min => same(zip(&x, &y, T::min)),
        Op::And => same(zip(&x, &y, T::and)),
        Op::Or => same(zip(&x, &y, T::or)),
        Op::Xor => same(zip(&x, &y, T::xor)),
        Op::ShiftLeft | Op::ShiftRightArithmetic | Op::ShiftRightLogical => {
            same(zip(&x, &y, |a, b| {
                T::of_pattern(shift(op, a.pattern(), b.pattern(), bits))
            }))
        }
        Op::Eq if on_xla => bool::store(od, zip(&x, &y, T::equal_xla)),
        Op::Ne if on_xla => bool::store(od, zip(&x, &y, |a, b| !a.equal_xla(b))),
        Op::Eq => bool::store(od, zip(&x, &y, T::equal)),
        Op::Ne => bool::store(od, zip(&x, &y, |a, b| !a.equal(b))),
        Op::Lt => bool::store(od, zip(&x, &y, T::lt)),
        Op::Le => bool::store(od, zip(&x, &y, |a, b| a.lt(b) || a.equal(b))),
        Op::Gt => bool::store(od, zip(&x, &y, |a, b| b.lt(a))),
        Op::Ge => bool::store(od, zip(&x, &y, |a, b| b.lt(a) || a.equal(b))),
        _ => return Err(not_implemented(op, inputs[0].dtype())),
    })
}

pub(super) fn mask(bits: u32) -> u64 {
    if bits >= 64 { !0 } else { (1u64 << bits) - 1 }
}

pub(super) fn not_implemented(op: Op, d: DType) -> Error {
    Error::refused(
        Exception::NotImplementedError,
        format!("{op:?} of {d} arrays is not implemented"),
    )
}

/// `nextafter` on the stored codes of any float format: the neighbouring code towards `y`.
pub(super) fn nextafter(x: &Array, y: &Array) -> Result<Storage, Error> {
    let d = x.dtype();
    let fmt = d
        .float_format()
        .ok_or_else(|| not_implemented(Op::Nextafter, d))?;
    let l = crate::convert::minifloat::Layout::new(fmt);
    let (width, _) = crate::array::layout(d);
    let xb = x.as_bytes();
    let yb = y.as_bytes();
    let word = |b: &[u8], i: usize| -> u64 {
        let mut raw = [0u8; 8];
        raw[..width].copy_from_slice(&b[i * width..(i + 1) * width]);
        u64::from_le_bytes(raw)
    };
    let n = x.size();
    Storage::filled(width, n, |out| {
        for i in 0..n {
            let (a, b) = (
                word(xb, i) & l.mag_mask() | word(xb, i) & l.sign_bit(),
                word(yb, i),
            );
            let (va, vb) = (l.decode(a), l.decode(b));
            let r = if va.is_nan() || vb.is_nan() {
                l.nan_code(false)
            } else if va == vb {
                b
            } else if va == 0.0 {
                l.with_sign(vb < 0.0, 1)
            } else if (va < vb) == (va > 0.0) {
                a + 1
            } else {
                a - 1
            };
            out[i * width..(i + 1) * width].copy_from_slice(&r.to_le_bytes()[..width]);
        }
        Ok::<(), Error>(())
    })
}
