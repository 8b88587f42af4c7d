//! One element of any dtype to any other: the reference every bulk path is tested against.

use dtype_lattice::{DType, Kind, Repr};

use super::ints;
use super::minifloat::Layout;

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

/// The standard IEEE formats, told by their fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Std {
    Half,
    BFloat,
    Single,
    Double,
    Other,
}

fn std_of(l: &Layout) -> Std {
    match (l.e, l.m) {
        (5, 10) => Std::Half,
        (8, 7) => Std::BFloat,
        (8, 23) => Std::Single,
        (11, 52) => Std::Double,
        _ => Std::Other,
    }
}

/// The NaN a NaN becomes, as NumPy + ml_dtypes convert it. Payloads survive only through
/// NumPy's own casts: float32/float64 → float16 keeps the top payload bits (at least one bit
/// set, not quieted); float16 → float32/float64 and bfloat16 → float32 shift the payload in
/// unchanged; float32 ↔ float64 shift it and set the quiet bit (the x86 instructions do). Every
/// other pair gives the target's canonical NaN with the source's sign ([`Layout::nan_code`]).
pub fn nan_to(src_raw: u64, src: &Layout, dst: &Layout) -> u64 {
    let neg = src.is_negative(src_raw);
    let frac = src_raw & ((1u64 << src.m) - 1);
    let sign = if neg { dst.sign_bit() } else { 0 };
    let inf = dst.inf_code();
    match (std_of(src), std_of(dst)) {
        (s, d) if s == d && s != Std::Other && src == dst => src_raw,
        (Std::Single, Std::Half) => sign | inf | (frac >> 13).max(1),
        (Std::Double, Std::Half) => sign | inf | (frac >> 42).max(1),
        (Std::Half, Std::Single) => sign | inf | (frac << 13),
        (Std::BFloat, Std::Single) => sign | inf | (frac << 16),
        (Std::Half, Std::Double) => sign | inf | (frac << 42),
        (Std::Double, Std::Single) => sign | inf | (1 << 22) | (frac >> 29),
        (Std::Single, Std::Double) => sign | inf | (1 << 51) | (frac << 29),
        (Std::BFloat, Std::Double) => sign | inf | (1 << 51) | (frac << 45),
        _ => dst.nan_code(neg),
    }
}

/// A float component converted to another float layout: exactly rounded once.
pub fn float_to_float(raw: u64, src: &Layout, dst: &Layout) -> u64 {
    if src.is_nan(raw) {
        return nan_to(raw, src, dst);
    }
    dst.encode_f64(src.decode(raw))
}

/// An integer converted to a float layout: exactly rounded once.
pub fn int_to_float(v: i128, dst: &Layout) -> u64 {
    let neg = v < 0;
    let mag = v.unsigned_abs();
    // Every integer dtype fits in 64 bits of magnitude.
    dst.encode_parts(neg, mag as u64, 0)
}

fn float_to_int(raw: u64, l: &Layout, min: i128, max: i128, bits: u32) -> u64 {
    ints::wrap(ints::saturate(l.decode(raw), min, max), bits)
}

fn complex_bits(re: u64, im: u64, l: &Layout) -> u128 {
    let half = 8 * (l.bits as usize).div_ceil(8);
    u128::from(re) | (u128::from(im) << half)
}

/// Converts one decoded element into `dst`'s stored form (little-endian number).
pub fn encode(v: Value, dst: &Class) -> u128 {
    match (v, *dst) {
        (Value::Int(i), Class::Bool) => u128::from(i != 0),
        (Value::Real(r, l), Class::Bool) => u128::from(l.decode(r) != 0.0),
        (Value::Complex(re, im, l), Class::Bool) => {
            u128::from(l.decode(re) != 0.0 || l.decode(im) != 0.0)
        }
        (Value::Int(i), Class::Int { bits, .. }) => u128::from(ints::wrap(i, bits)),
        (Value::Real(r, l) | Value::Complex(r, _, l), Class::Int { bits, min, max, .. }) => {
            u128::from(float_to_int(r, &l, min, max, bits))
        }
        (Value::Int(i), Class::Float(d)) => u128::from(int_to_float(i, &d)),
        (Value::Real(r, l) | Value::Complex(r, _, l), Class::Float(d)) => {
            u128::from(float_to_float(r, &l, &d))
        }
        (Value::Int(i), Class::Complex(d)) => complex_bits(int_to_float(i, &d), 0, &d),
        (Value::Real(r, l), Class::Complex(d)) => complex_bits(float_to_float(r, &l, &d), 0, &d),
        (Value::Complex(re, im, l), Class::Complex(d)) => {
            complex_bits(float_to_float(re, &l, &d), float_to_float(im, &l, &d), &d)
        }
    }
}
