//! Integers and bool: each element in its own little-endian bytes; the sub-byte integers
//! (int4/int2/int1, uint4/uint2/uint1) in one byte, their value in the low bits (ml_dtypes
//! stores `-1` of int4 as `0x0f` and reads only the low bits back).
//!
//! - int → int wraps modulo `2^bits` (NumPy, ml_dtypes and JAX agree), into the narrow range
//!   with sign extension for the signed sub-byte types;
//! - float → int truncates toward zero for in-range values (all agree). Out of range, NumPy
//!   gives what the C cast gives on x86 (INT_MIN for int32/int64, wrapped bits for narrower
//!   types, 0 for NaN or ±inf to uint8, and so on, with a RuntimeWarning); ml_dtypes wraps into
//!   the sub-byte types. **JAX (XLA CPU) saturates**: NaN → 0, values beyond the range → the
//!   nearest bound (±inf included), for every integer width, sub-byte ones too ([`saturate`]).
//!   [`super::Semantics`] chooses; the rules are in [`super::scalar`].

/// The low `bits` bits of `v`: the stored form of `v` wrapped into a `bits`-bit integer.
pub fn wrap(v: i128, bits: u32) -> u64 {
    if bits >= 64 {
        v as u64
    } else {
        (v as u64) & ((1u64 << bits) - 1)
    }
}

/// The value of a stored integer: its low `bits` bits, sign-extended if `signed`.
pub fn decode(raw: u64, bits: u32, signed: bool) -> i128 {
    let low = if bits >= 64 {
        raw
    } else {
        raw & ((1u64 << bits) - 1)
    };
    if signed {
        let shift = 64 - bits;
        i128::from(((low << shift) as i64) >> shift)
    } else {
        i128::from(low)
    }
}

/// JAX's float → int: NaN → 0, truncation toward zero, saturated to `min..=max`.
pub fn saturate(x: f64, min: i128, max: i128) -> i128 {
    // `as` saturates (±inf included) and maps NaN to 0.
    (x as i128).clamp(min, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_and_decode() {
        assert_eq!(wrap(-1, 4), 0x0f);
        assert_eq!(decode(0x0f, 4, true), -1);
        assert_eq!(decode(0x1f, 4, true), -1);
        assert_eq!(decode(0x10, 4, true), 0);
        assert_eq!(decode(0xff, 8, false), 255);
        assert_eq!(decode(u64::MAX, 64, true), -1);
        assert_eq!(wrap(300, 8), 44);
        assert_eq!(decode(wrap(-3, 2), 2, true), 1);
    }

    #[test]
    fn saturating_float_to_int() {
        assert_eq!(saturate(f64::NAN, -128, 127), 0);
        assert_eq!(saturate(f64::INFINITY, -128, 127), 127);
        assert_eq!(saturate(-1e300, 0, 255), 0);
        assert_eq!(saturate(-3.9, -8, 7), -3);
        assert_eq!(saturate(464.0, 0, 255), 255);
    }
}
