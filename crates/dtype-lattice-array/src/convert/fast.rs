//! float32 → narrow float (every format of at most 16 bits: float8/6/4, e8m0fnu, bfloat16,
//! float16) with branch-free integer code that LLVM vectorises (no intrinsics; `kernels::encode_simd`
//! compiles the loops a second time for AVX2):
//! one [`Encoder32`] per target format, built from its [`Layout`], the same for every format.
//!
//! Normal values round to nearest even by adding `2^(s-1) - 1` plus the last kept bit and
//! shifting right by `s = 23 - m`, then re-biasing the exponent; below the smallest normal the
//! value is added to `2^(min_exp - m + 23)` in float32 arithmetic, whose rounding is exactly the
//! target's subnormal rounding, and the magic constant's bits are subtracted again. Overflow,
//! NaN, sign and the formats' special codes are selects on loop-invariant constants.
//! [`Encoder32::encode`] is tested against the per-element `scalar` module on every kind of input.

use super::Semantics;
use super::minifloat::{Layout, Specials};
use super::scalar::{self, NanRule};
pub use crate::kernels::encode::Encoder32;

impl Encoder32 {
    /// The encoder for `l` under `sem`, if it is a format of at most 16 bits with at most
    /// float32's range and precision that `sem` reaches from float32 by one plain rounding.
    pub fn new(l: &Layout, sem: Semantics) -> Option<Encoder32> {
        if l.bits > 16 || l.m > 23 || l.min_exp < -127 || (l.m > 0 && l.min_exp < -126) {
            return None;
        }
        let f32l = Layout::new(dtype_lattice::DType::Float32.float_format()?);
        if scalar::route(sem, &f32l, l) != scalar::Route::default() {
            return None;
        }
        let (nan_pos, nan_neg, payload, min1, quiet) = match scalar::nan_rule(sem, &f32l, l) {
            NanRule::Canonical => (l.nan_code(false), l.nan_code(true), false, false, false),
            NanRule::Fixed(c) => (c, c, false, false, false),
            NanRule::Payload { quiet, min1 } => (0, 0, true, min1, quiet),
            NanRule::Same | NanRule::CanonicalPositive => return None,
        };
        let shift = 23 - l.m;
        let bias = if l.m == 0 { -l.min_exp } else { 1 - l.min_exp };
        let magic_exp = l.min_exp - l.m as i32 + 23;
        let magic = f32::from_bits(((magic_exp + 127) as u32) << 23);
        Some(Encoder32 {
            shift,
            half_m1: (1u32 << (shift - 1)) - 1,
            lsb_mask: if l.m == 0 { 0 } else { 1 },
            tie_up: u32::from(l.m == 0),
            rebias: ((127 - bias) as u32) << l.m,
            // A format without subnormals (e8m0fnu) takes the normal path for every value above
            // its smallest one: float32 subnormals there round up, as ml_dtypes and XLA.
            min_normal: if l.m == 0 {
                (1u32 << (l.min_exp + 149)) + 1
            } else {
                ((l.min_exp + 127) as u32) << 23
            },
            magic,
            magic_bits: magic.to_bits(),
            sub_mask: if l.m == 0 { 0 } else { u32::MAX },
            max_code: l.max_code as u32,
            overflow: l.overflow_code() as u32,
            sign_shift: if l.signed { l.bits - 1 } else { 0 },
            sign_mask: if l.signed { 1 } else { 0 },
            fnuz: l.specials == Specials::NanNegZero,
            unsigned_nan: if l.signed { 0 } else { u32::MAX },
            nan_pos: nan_pos as u32,
            nan_neg: nan_neg as u32,
            // float32 → float16 keeps the top payload bits of a NaN (NumPy: at least one set,
            // JAX: quieted).
            payload: payload && l.m > 0,
            payload_min1: u32::from(min1),
            payload_base: (l.inf_code() | if quiet { 1 << (l.m - 1) } else { 0 }) as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::scalar::{self, Class};
    use dtype_lattice::DType;

    /// Every lane of the vector code against the scalar reference: edges of every format and a
    /// spread of all float32 bit patterns.
    #[test]
    fn encoder_matches_scalar() {
        let f32l = Layout::new(DType::Float32.float_format().unwrap());
        let mut inputs: Vec<u32> = (0..=u32::MAX).step_by(65_521).collect();
        for t in DType::NUMERIC {
            if let Some(Class::Float(l)) = Class::of(*t)
                && l.bits <= 16
            {
                for c in 0..(1u64 << l.bits) {
                    let v = l.decode(c) as f32;
                    let b = v.to_bits();
                    inputs.extend([b, b.wrapping_add(1), b.wrapping_sub(1)]);
                    let next = l.decode(c + 1);
                    if next.is_finite() && v.is_finite() {
                        let mid = ((f64::from(v) + next) / 2.0) as f32;
                        inputs.extend([mid.to_bits(), mid.to_bits() + 1, mid.to_bits() - 1]);
                    }
                }
            }
        }
        let (mut checked, mut plain) = (0, 0);
        for t in DType::NUMERIC {
            let Some(Class::Float(l)) = Class::of(*t) else {
                continue;
            };
            for sem in [Semantics::Jax, Semantics::NumPy] {
                let Some(enc) = Encoder32::new(&l, sem) else {
                    assert!(l.bits > 16);
                    continue;
                };
                for &x in &inputs {
                    for x in [x, x ^ 0x8000_0000] {
                        let want = scalar::float_to_float(sem, u64::from(x), &f32l, &l);
                        assert_eq!(u64::from(enc.encode(x)), want, "{sem:?} {t} {x:#010x}");
                        if enc.plain() {
                            let got = enc.encode_as::<false>(x);
                            assert_eq!(u64::from(got), want, "plain {sem:?} {t} {x:#010x}");
                            plain += 1;
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1_000_000 && plain > 100_000, "{checked} {plain}");
    }
}
