//! One element of any dtype to any other: the reference every bulk path is tested against.

use dtype_lattice::{DType, Kind, Repr};

use super::Semantics;
use super::ints;
use super::minifloat::{Layout, Specials};

/// What a dtype's elements are, for conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// bool: one byte, 0 or 1 (any non-zero byte reads as true).
    Bool,
    /// An integer of `bits` bits.
    Int {
        /// Width.
        bits: u32,
        /// Signedness.
        signed: bool,
        /// Smallest value.
        min: i128,
        /// Largest value.
        max: i128,
    },
    /// A real float.
    Float(Layout),
    /// A complex number: two components of this layout, real first.
    Complex(Layout),
}

impl Class {
    /// The class of a numeric dtype (`None` for the key dtypes).
    pub fn of(t: DType) -> Option<Class> {
        let info = t.info();
        Some(match info.repr {
            Repr::Bool => Class::Bool,
            Repr::Int { min, max } => Class::Int {
                bits: info.bits,
                signed: min < 0,
                min,
                max,
            },
            Repr::Float(f) if info.kind == Kind::Complex => Class::Complex(Layout::new(&f)),
            Repr::Float(f) => Class::Float(Layout::new(&f)),
            _ => return None,
        })
    }

    /// Bytes of one stored element.
    pub fn size(&self) -> usize {
        match self {
            Class::Bool => 1,
            Class::Int { bits, .. } => (*bits as usize).div_ceil(8),
            Class::Float(l) => (l.bits as usize).div_ceil(8),
            Class::Complex(l) => 2 * (l.bits as usize).div_ceil(8),
        }
    }
}

/// A decoded element.
#[derive(Clone, Copy, Debug)]
pub enum Value {
    /// bool or integer, exactly.
    Int(i128),
    /// A float component: its raw code and layout.
    Real(u64, Layout),
    /// Real and imaginary components.
    Complex(u64, u64, Layout),
}

/// Reads `bytes` (little-endian, `size` of them) as an unsigned number.
pub fn load(bytes: &[u8]) -> u128 {
    let mut v = 0u128;
    for (i, b) in bytes.iter().enumerate() {
        v |= u128::from(*b) << (8 * i);
    }
    v
}

/// Writes the low `out.len()` bytes of `v`, little-endian.
pub fn store(v: u128, out: &mut [u8]) {
    for (i, b) in out.iter_mut().enumerate() {
        *b = (v >> (8 * i)) as u8;
    }
}

/// Decodes a stored element (`raw`: its bytes as a little-endian number).
pub fn decode(c: &Class, raw: u128) -> Value {
    match *c {
        Class::Bool => Value::Int(i128::from(raw as u8 != 0)),
        Class::Int { bits, signed, .. } => Value::Int(ints::decode(raw as u64, bits, signed)),
        Class::Float(l) => Value::Real(raw as u64, l),
        Class::Complex(l) => {
            let half = 8 * (l.bits as usize).div_ceil(8);
            let mask = if half == 64 {
                u64::MAX as u128
            } else {
                (1u128 << half) - 1
            };
            Value::Complex((raw & mask) as u64, (raw >> half) as u64, l)
        }
    }
}

/// The formats a rule names, told by their fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Std {
    /// float16.
    Half,
    /// bfloat16.
    BFloat,
    /// float32.
    Single,
    /// float64.
    Double,
    /// float8_e5m2 (XLA's NaN there is `0x7f` from the narrow formats).
    E5M2,
    /// float8_e8m0fnu.
    E8M0,
    /// float4_e2m1fn and the float6 formats (no inf, no NaN).
    NoNan,
    /// Every other float8.
    Other,
}

pub(crate) fn std_of(l: &Layout) -> Std {
    match (l.e, l.m, l.specials) {
        (5, 10, _) => Std::Half,
        (8, 7, _) => Std::BFloat,
        (8, 23, _) => Std::Single,
        (11, 52, _) => Std::Double,
        (5, 2, Specials::Ieee) => Std::E5M2,
        (8, 0, _) => Std::E8M0,
        (_, _, Specials::Finite) => Std::NoNan,
        _ => Std::Other,
    }
}

/// Whether ml_dtypes (not NumPy itself) implements the format: its casts from float64 go
/// through float32.
fn ml_dtypes_format(l: &Layout) -> bool {
    !matches!(std_of(l), Std::Half | Std::Single | Std::Double)
}

/// How a NaN is converted (one rule per semantics and pair of formats, [`nan_rule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NanRule {
    /// The same bits (same format).
    Same,
    /// The target's canonical NaN with the source's sign ([`Layout::nan_code`]).
    Canonical,
    /// The target's canonical NaN, positive.
    CanonicalPositive,
    /// This code, whatever the sign.
    Fixed(u64),
    /// IEEE to IEEE: sign, payload shifted to the target's width, and the quiet bit if `quiet`;
    /// `min1`: a payload that shifts to 0 becomes 1 (still a NaN, not inf).
    Payload {
        /// Set the quiet bit.
        quiet: bool,
        /// Keep at least one payload bit.
        min1: bool,
    },
}

/// The NaN rule of a pair of float formats.
///
/// - NumPy + ml_dtypes: payloads survive only through NumPy's own casts: float32/float64 →
///   float16 keep the top payload bits (at least one bit set, not quieted), float16 →
///   float32/float64 and bfloat16 → float32 shift the payload in unchanged, float32 ↔ float64
///   and bfloat16 → float64 shift it and set the quiet bit (the x86 instructions do). Every
///   other pair gives the target's canonical NaN with the source's sign (for float4/float6,
///   which have no NaN, ml_dtypes' zero of the opposite sign).
/// - JAX (XLA CPU): float16 → float32/float64, bfloat16 → float16/float64, float32 →
///   float16/float64 and float64 → float32 keep the payload and set the quiet bit; bfloat16 →
///   float32 shifts the bits unchanged; NaN → float4_e2m1fn is `0x8` (-0) whatever the sign;
///   float16, bfloat16 and the 8-bit formats give float8_e5m2's `0x7f` whatever the sign; the
///   single NaN of the `fnuz` formats converts as a positive NaN; every other pair gives the
///   canonical NaN with the sign (float64 → float16/bfloat16 and float32 → bfloat16 included).
pub(crate) fn nan_rule(sem: Semantics, src: &Layout, dst: &Layout) -> NanRule {
    use Std::*;
    if src == dst {
        return NanRule::Same;
    }
    let (s, d) = (std_of(src), std_of(dst));
    match sem {
        Semantics::NumPy => match (s, d) {
            (Single | Double, Half) => NanRule::Payload {
                quiet: false,
                min1: true,
            },
            (Half, Single | Double) | (BFloat, Single) => NanRule::Payload {
                quiet: false,
                min1: false,
            },
            (Double, Single) | (Single, Double) | (BFloat, Double) => NanRule::Payload {
                quiet: true,
                min1: false,
            },
            _ => NanRule::Canonical,
        },
        Semantics::Jax => match (s, d) {
            (_, NoNan) => NanRule::Fixed(dst.sign_bit()),
            (Half | BFloat | E5M2 | E8M0 | Other | NoNan, E5M2) => NanRule::Fixed(0x7f),
            (BFloat, Single) => NanRule::Payload {
                quiet: false,
                min1: false,
            },
            (Half, Single | Double)
            | (BFloat, Half | Double)
            | (Single, Half | Double)
            | (Double, Single) => NanRule::Payload {
                quiet: true,
                min1: false,
            },
            _ if src.specials == Specials::NanNegZero => NanRule::CanonicalPositive,
            _ => NanRule::Canonical,
        },
    }
}

/// The NaN a NaN becomes (`nan_rule`).
pub fn nan_to(sem: Semantics, src_raw: u64, src: &Layout, dst: &Layout) -> u64 {
    let neg = src.is_negative(src_raw);
    match nan_rule(sem, src, dst) {
        NanRule::Same => src_raw,
        NanRule::Canonical => dst.nan_code(neg),
        NanRule::CanonicalPositive => dst.nan_code(false),
        NanRule::Fixed(c) => c,
        NanRule::Payload { quiet, min1 } => {
            let frac = src_raw & ((1u64 << src.m) - 1);
            let mut p = if dst.m >= src.m {
                frac << (dst.m - src.m)
            } else {
                frac >> (src.m - dst.m)
            };
            if min1 {
                p = p.max(1);
            }
            if quiet {
                p |= 1u64 << (dst.m - 1);
            }
            let sign = if neg { dst.sign_bit() } else { 0 };
            sign | dst.inf_code() | p
        }
    }
}

/// How a float → float conversion rounds, besides once to nearest even: the pair's row of
/// [`route`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Route {
    /// Subnormal inputs read as zero (XLA CPU runs with x86's DAZ).
    pub daz: bool,
    /// Rounded to float32 first (a second rounding).
    pub via_f32: bool,
    /// That float32 is flushed to zero if subnormal (XLA CPU runs with x86's FTZ).
    pub ftz_f32: bool,
    /// Values below the target's smallest value are zero (for float8_e8m0fnu, which has no
    /// zero: NaN) instead of rounding to it.
    pub underflow_zero: bool,
}

/// The rounding route of a float → float pair under `sem`:
///
/// - NumPy + ml_dtypes: float64 → every ml_dtypes format (bfloat16, float8/6/4, e8m0fnu) goes
///   through float32 (ml_dtypes converts a float64 to float32 first); everything else rounds
///   once.
/// - JAX: float64 → float32/float16/bfloat16 goes through float32 with subnormal float32
///   results flushed to zero; float32 → float64 and bfloat16 → float64 read float32/bfloat16
///   subnormals as zero; float64 → float8_e8m0fnu rounds once but takes values below its
///   smallest, 2^-127, as zero (its NaN); everything else (float64 → float8/float4 included)
///   rounds once.
pub(crate) fn route(sem: Semantics, src: &Layout, dst: &Layout) -> Route {
    use Std::*;
    let (s, d) = (std_of(src), std_of(dst));
    match sem {
        Semantics::NumPy => Route {
            via_f32: s == Double && ml_dtypes_format(dst),
            ..Route::default()
        },
        Semantics::Jax => match (s, d) {
            (Double, Single | Half | BFloat) => Route {
                via_f32: true,
                ftz_f32: true,
                ..Route::default()
            },
            (Double, E8M0) => Route {
                underflow_zero: true,
                ..Route::default()
            },
            (Single | BFloat, Double) => Route {
                daz: true,
                ..Route::default()
            },
            _ => Route::default(),
        },
    }
}

/// Whether `raw` is a subnormal of an IEEE layout.
fn is_subnormal(l: &Layout, raw: u64) -> bool {
    let mag = raw & l.mag_mask();
    l.m > 0 && mag != 0 && mag >> l.m == 0
}

/// A float component converted to another float layout under `sem` (`route`, [`nan_to`]).
pub fn float_to_float(sem: Semantics, raw: u64, src: &Layout, dst: &Layout) -> u64 {
    if src.is_nan(raw) {
        return nan_to(sem, raw, src, dst);
    }
    let r = route(sem, src, dst);
    let raw = if r.daz && is_subnormal(src, raw) {
        raw & src.sign_bit()
    } else {
        raw
    };
    let x = src.decode(raw);
    if r.underflow_zero && x.abs() < dst.magnitude(0) {
        return dst.zero_code(x.is_sign_negative());
    }
    if r.via_f32 {
        let f = f32_layout();
        let mut y = f.encode_f64(x);
        if r.ftz_f32 && is_subnormal(&f, y) {
            y &= f.sign_bit();
        }
        return dst.encode_f64(f.decode(y));
    }
    dst.encode_f64(x)
}

fn f32_layout() -> Layout {
    Layout::new(DType::Float32.float_format().expect("float32 is a float"))
}

/// An integer of `src_bits` bits converted to a float layout: rounded once, except that
/// 32- and 64-bit integers go to bfloat16 and float8_e8m0fnu through float32 in both libraries.
pub fn int_to_float(sem: Semantics, v: i128, src_bits: u32, dst: &Layout) -> u64 {
    let _ = sem;
    let neg = v < 0;
    let mag = v.unsigned_abs() as u64;
    if src_bits >= 32 && matches!(std_of(dst), Std::BFloat | Std::E8M0) {
        let f = f32_layout();
        return dst.encode_f64(f.decode(f.encode_parts(neg, mag, 0)));
    }
    // Every integer dtype fits in 64 bits of magnitude.
    dst.encode_parts(neg, mag, 0)
}

/// A float converted to an integer of `bits` bits in `min..=max`:
///
/// - JAX: saturating ([`ints::saturate`]); XLA reads float4_e2m1fn's largest magnitude (6.0) as
///   infinite here, so ±6.0 become the bounds.
/// - NumPy: C's cast as NumPy's and ml_dtypes' x86-64 builds compute it ([`x86_cast`]):
///   truncation toward zero where the value fits, x86's "integer indefinite" otherwise.
///   ml_dtypes' float8/float6/float4 types first take NaN to 0 and ±inf to the destination's
///   bounds (int32's, wrapped, for the sub-byte integers). Into ml_dtypes' sub-byte integers
///   the cast is ml_dtypes' own: NaN, ±inf and values outside int32's range are 0, the others
///   truncated and wrapped. This is NumPy's scalar loop; its vectorised float → uint32 loop
///   differs ([`numpy_uint32_vector`]).
fn float_to_int(sem: Semantics, raw: u64, l: &Layout, min: i128, max: i128, bits: u32) -> u64 {
    let x = l.decode(raw);
    match sem {
        Semantics::Jax => {
            let x = if std_of(l) == Std::NoNan && l.bits == 4 && raw & l.mag_mask() == l.max_code {
                x * f64::INFINITY
            } else {
                x
            };
            ints::wrap(ints::saturate(x, min, max), bits)
        }
        Semantics::NumPy => {
            let narrow_float = matches!(std_of(l), Std::E5M2 | Std::E8M0 | Std::NoNan | Std::Other);
            if narrow_float && !x.is_finite() {
                let bound = match (x.is_nan(), bits < 8) {
                    (true, _) => 0,
                    (false, true) if x > 0.0 => i128::from(i32::MAX),
                    (false, true) => i128::from(i32::MIN),
                    (false, false) if x > 0.0 => max,
                    (false, false) => min,
                };
                return ints::wrap(bound, bits);
            }
            if bits < 8 {
                return if x.is_finite() && (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&x)
                {
                    ints::wrap(x as i128, bits)
                } else {
                    0
                };
            }
            x86_cast(x, bits, min < 0)
        }
    }
}

/// x86-64's truncating conversion to a `width`-bit signed integer (`cvttss2si`/`cvttsd2si`):
/// the truncated value where it fits, else the "integer indefinite" value `-2^(width-1)`
/// (NaN and ±inf included).
fn cvtt(x: f64, width: u32) -> i128 {
    let limit = (width as f64 - 1.0).exp2();
    let t = x.trunc();
    if t >= -limit && t < limit {
        t as i128
    } else {
        -(1i128 << (width - 1))
    }
}

/// C's cast of a float to an integer of `bits` (8, 16, 32 or 64) bits as GCC compiles it for
/// x86-64 (NumPy's casting loops, ml_dtypes' `static_cast`): into int64 `cvttsd2si` at 64 bits;
/// into uint32 the same, keeping the low 32 bits; into uint64 that of `x` below 2^63 (NaN
/// included), else that of `x − 2^63` with the top bit flipped; into the others `cvttsd2si`
/// at 32 bits, keeping the low bits. Out-of-range values thus give `INT_MIN`, `0x8000…` and
/// their low bits (0 in int8/int16/uint8/uint16, and in uint32 for most).
fn x86_cast(x: f64, bits: u32, signed: bool) -> u64 {
    match (bits, signed) {
        (64, true) => ints::wrap(cvtt(x, 64), 64),
        (64, false) if x >= 9_223_372_036_854_775_808.0 => {
            ints::wrap(cvtt(x - 9_223_372_036_854_775_808.0, 64), 64) ^ (1 << 63)
        }
        (64, false) => ints::wrap(cvtt(x, 64), 64),
        (32, false) => ints::wrap(cvtt(x, 64), 32),
        _ => ints::wrap(cvtt(x, 32), bits),
    }
}

/// NumPy's vectorised float → uint32 cast (the elements its SIMD loop converts, see
/// [`numpy_uint32_vector_len`]): `x ≥ 2^31` converted as `x − 2^31` at 32 bits with the top
/// bit flipped, the others at 32 bits (`cvttps2dq`), so NaN, negative values below `−2^31` and
/// `x ≥ 2^32` give `0x8000_0000` or 0 where the scalar loop keeps low bits. `raw` is the
/// element as stored (a complex number's real part is converted).
pub fn numpy_uint32_vector(src: &Class, raw: u128) -> u32 {
    let x = match decode(src, raw) {
        Value::Int(i) => return ints::wrap(i, 32) as u32,
        Value::Real(r, l) | Value::Complex(r, _, l) => l.decode(r),
    };
    if x >= 2_147_483_648.0 {
        (ints::wrap(cvtt(x - 2_147_483_648.0, 32), 32) as u32) ^ 0x8000_0000
    } else {
        ints::wrap(cvtt(x, 32), 32) as u32
    }
}

/// How many leading elements of an `n`-element float → uint32 cast NumPy converts with its
/// vectorised loop ([`numpy_uint32_vector`]; the rest with the scalar one): float32 and float64
/// in blocks of 4; bfloat16 (ml_dtypes' loop, called on buffers of 8192) in blocks of 8;
/// complex64 and complex128 in blocks of 4 with at least one element left to the scalar loop,
/// from 5 and 6 elements on. float16 and the narrower formats are not vectorised.
pub fn numpy_uint32_vector_len(src: DType, n: usize) -> usize {
    match src {
        DType::Float32 | DType::Float64 => n / 4 * 4,
        DType::BFloat16 => n / 8192 * 8192 + n % 8192 / 8 * 8,
        DType::Complex64 if n >= 5 => (n - 1) / 4 * 4,
        DType::Complex128 if n >= 6 => (n - 1) / 4 * 4,
        _ => 0,
    }
}

/// `x != 0` (into bool, or JAX's int1 with `int1`), with subnormals read as zero where JAX
/// does: XLA compares float32/float64 with zero under x86's DAZ, so their subnormals are false;
/// into int1 it also reads float8_e8m0fnu's smallest value, 2^-127 (a float32 subnormal), as 0.
fn nonzero(sem: Semantics, raw: u64, l: &Layout, int1: bool) -> bool {
    if sem == Semantics::Jax {
        let s = std_of(l);
        if matches!(s, Std::Single | Std::Double) && is_subnormal(l, raw) {
            return false;
        }
        if int1 && s == Std::E8M0 && l.decode(raw).abs() < f64::from(f32::MIN_POSITIVE) {
            return false;
        }
    }
    l.decode(raw) != 0.0
}

fn complex_bits(re: u64, im: u64, l: &Layout) -> u128 {
    let half = 8 * (l.bits as usize).div_ceil(8);
    u128::from(re) | (u128::from(im) << half)
}

/// Whether `sem` treats `dst` as a predicate: JAX (XLA) converts into int1 as into bool (any
/// non-zero value is `1`).
fn as_predicate(sem: Semantics, dst: &Class) -> bool {
    sem == Semantics::Jax
        && matches!(
            dst,
            Class::Int {
                bits: 1,
                signed: true,
                ..
            }
        )
}

/// Converts one stored element of `src` (`raw`: its bytes as a little-endian number) into
/// `dst`'s stored form under `sem`.
pub fn convert(sem: Semantics, src: &Class, raw: u128, dst: &Class) -> u128 {
    if as_predicate(sem, dst) && !matches!(src, Class::Int { bits: 1, .. }) {
        // JAX's int1: `x != 0` of the value (a complex number's real part).
        return u128::from(match decode(src, raw) {
            Value::Int(i) => i != 0,
            Value::Real(r, l) | Value::Complex(r, _, l) => nonzero(sem, r, &l, true),
        });
    }
    let src_bits = match src {
        Class::Int { bits, .. } => *bits,
        _ => 0,
    };
    match (decode(src, raw), *dst) {
        (Value::Int(i), Class::Bool) => u128::from(i != 0),
        (Value::Real(r, l), Class::Bool) => u128::from(nonzero(sem, r, &l, false)),
        (Value::Complex(re, im, l), Class::Bool) => {
            u128::from(nonzero(sem, re, &l, false) || nonzero(sem, im, &l, false))
        }
        (Value::Int(i), Class::Int { bits, .. }) => u128::from(ints::wrap(i, bits)),
        (Value::Real(r, l) | Value::Complex(r, _, l), Class::Int { bits, min, max, .. }) => {
            u128::from(float_to_int(sem, r, &l, min, max, bits))
        }
        (Value::Int(i), Class::Float(d)) => u128::from(int_to_float(sem, i, src_bits, &d)),
        (Value::Real(r, l) | Value::Complex(r, _, l), Class::Float(d)) => {
            u128::from(float_to_float(sem, r, &l, &d))
        }
        (Value::Int(i), Class::Complex(d)) => {
            complex_bits(int_to_float(sem, i, src_bits, &d), 0, &d)
        }
        (Value::Real(r, l), Class::Complex(d)) => {
            complex_bits(float_to_float(sem, r, &l, &d), 0, &d)
        }
        (Value::Complex(re, im, l), Class::Complex(d)) => complex_bits(
            float_to_float(sem, re, &l, &d),
            float_to_float(sem, im, &l, &d),
            &d,
        ),
    }
}
