//! One generic binary floating-point codec for every float format, driven by the format's
//! [`FloatFormat`] row (ml_dtypes' `finfo`): the ≤8-bit formats (float8/6/4, e8m0fnu) and also
//! float16, bfloat16, float32 and float64, which are the same construction with wider fields.
//!
//! Written by hand (no crate gets these right; see the module doc of [`super`]): a value is
//! encoded from an exact `sig × 2^exp` with one round-to-nearest-even, so nothing rounds twice.
//!
//! The layout of the special values is derived from the row, not listed per format:
//! `has_inf` → IEEE (an all-ones exponent is inf/NaN); neither inf nor NaN → every code is
//! finite; NaN without inf → either the all-ones magnitude is NaN (`fn`, float8_e4m3fn and
//! float8_e8m0fnu) or the negative zero is (`fnuz`), told apart by which of the two reproduces
//! the row's `max`. A format with no stored mantissa bits (float8_e8m0fnu) has no subnormals:
//! its code 0 is the smallest normal, `2^min_exponent`, and it has no zero.

use dtype_lattice::FloatFormat;

/// Where a format keeps its special values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Specials {
    /// IEEE 754: the all-ones exponent holds inf (mantissa 0) and NaNs.
    Ieee,
    /// `fn`: no inf; the all-ones magnitude is NaN (both signs where there is a sign).
    NanAllOnes,
    /// `fnuz`: no inf, no negative zero; its code (sign bit alone) is the only NaN.
    NanNegZero,
    /// `fn` without NaN (float4/float6): every code is a finite number.
    Finite,
}

/// A float format's bit layout, derived from its [`FloatFormat`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Stored mantissa (fraction) bits.
    pub m: u32,
    /// Exponent bits.
    pub e: u32,
    /// Bits of a code: sign (if any) + exponent + mantissa.
    pub bits: u32,
    /// Exponent of the smallest normal value.
    pub min_exp: i32,
    /// Whether there is a sign bit.
    pub signed: bool,
    /// Where the special values are.
    pub specials: Specials,
    /// The magnitude code of the largest finite value.
    pub max_code: u64,
}

/// `2^e` exactly, for `-1074 <= e <= 1023`.
fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

impl Layout {
    /// The layout of `f`.
    ///
    /// # Panics
    ///
    /// If `f` describes no layout this codec knows (none of the model's formats).
    pub fn new(f: &FloatFormat) -> Layout {
        let (m, e) = (f.mantissa_bits, f.exponent_bits);
        let all = (1u64 << (e + m)) - 1;
        let mut lay = Layout {
            m,
            e,
            bits: e + m + u32::from(f.signed),
            min_exp: f.min_exponent,
            signed: f.signed,
            specials: Specials::Finite,
            max_code: all,
        };
        if f.has_inf {
            lay.specials = Specials::Ieee;
            lay.max_code = all - (1u64 << m);
        } else if f.has_nan {
            lay.specials = Specials::NanAllOnes;
            lay.max_code = all - 1;
            if lay.magnitude(lay.max_code) != f.max {
                lay.specials = Specials::NanNegZero;
                lay.max_code = all;
            }
        }
        assert_eq!(
            lay.magnitude(lay.max_code),
            f.max,
            "unknown float layout {f:?}"
        );
        lay
    }

    /// Mask of the magnitude bits (all but the sign).
    pub fn mag_mask(&self) -> u64 {
        (1u64 << (self.e + self.m)) - 1
    }

    /// The sign bit.
    pub fn sign_bit(&self) -> u64 {
        if self.signed {
            1u64 << (self.bits - 1)
        } else {
            0
        }
    }

    /// The magnitude code of infinity (IEEE formats).
    pub fn inf_code(&self) -> u64 {
        ((1u64 << self.e) - 1) << self.m
    }

    /// The value of a finite magnitude code.
    pub fn magnitude(&self, c: u64) -> f64 {
        let m = self.m as i32;
        if m == 0 {
            return pow2(c as i32 + self.min_exp);
        }
        let (ef, mf) = (c >> self.m, c & ((1u64 << self.m) - 1));
        if ef == 0 {
            mf as f64 * pow2(self.min_exp - m)
        } else {
            (mf + (1u64 << self.m)) as f64 * pow2(ef as i32 - 1 + self.min_exp - m)
        }
    }

    /// Whether a stored element is negative. For the sub-byte formats (stored one per byte) the
    /// sign is read as ml_dtypes reads it: any bit above the magnitude makes the value negative.
    pub fn is_negative(&self, raw: u64) -> bool {
        self.signed && (raw >> (self.bits - 1)) != 0
    }

    /// Whether a stored element is NaN.
    pub fn is_nan(&self, raw: u64) -> bool {
        let mag = raw & self.mag_mask();
        match self.specials {
            Specials::Ieee => mag > self.inf_code(),
            Specials::NanAllOnes => mag == self.mag_mask(),
            Specials::NanNegZero => mag == 0 && self.is_negative(raw),
            Specials::Finite => false,
        }
    }

    /// The value of a stored element (exact: every format's values are float64 values).
    pub fn decode(&self, raw: u64) -> f64 {
        let neg = self.is_negative(raw);
        let mag = raw & self.mag_mask();
        let v = if self.is_nan(raw) {
            f64::NAN
        } else if self.specials == Specials::Ieee && mag == self.inf_code() {
            f64::INFINITY
        } else {
            self.magnitude(mag)
        };
        if neg { -v } else { v }
    }

    /// ml_dtypes' NaN of this format for a NaN of sign `neg`: the quiet NaN (IEEE formats: the
    /// all-ones exponent with the top mantissa bit) with that sign, the all-ones code (`fn`), the
    /// negative-zero code (`fnuz`). Formats without NaN (float4/float6) get what ml_dtypes gives:
    /// a zero of the *opposite* sign.
    pub fn nan_code(&self, neg: bool) -> u64 {
        let sign = if neg { self.sign_bit() } else { 0 };
        match self.specials {
            Specials::Ieee => sign | self.inf_code() | (1u64 << (self.m - 1)),
            Specials::NanAllOnes => sign | self.mag_mask(),
            Specials::NanNegZero => self.sign_bit(),
            Specials::Finite => {
                if neg {
                    0
                } else {
                    self.sign_bit()
                }
            }
        }
    }

    /// The magnitude code a value too large for the format becomes: inf, else NaN (no
    /// saturation), else (float4/float6, which have neither) the largest value, as ml_dtypes.
    pub fn overflow_code(&self) -> u64 {
        match self.specials {
            Specials::Ieee => self.inf_code(),
            Specials::NanAllOnes => self.mag_mask(),
            Specials::NanNegZero => self.sign_bit(),
            Specials::Finite => self.max_code,
        }
    }

    /// Applies the sign to a magnitude code: none for `fnuz` zeros (there is no negative zero),
    /// NaN for a negative value of an unsigned format (float8_e8m0fnu).
    pub fn with_sign(&self, neg: bool, mag: u64) -> u64 {
        if !neg {
            return mag;
        }
        if !self.signed {
            return self.nan_code(false);
        }
        if self.specials == Specials::NanNegZero && (mag == 0 || mag == self.sign_bit()) {
            return mag;
        }
        mag | self.sign_bit()
    }

    /// The code of `±0`: a signed zero, `+0` for `fnuz`, and NaN for a format without zero
    /// (float8_e8m0fnu, as ml_dtypes).
    pub fn zero_code(&self, neg: bool) -> u64 {
        if self.m == 0 {
            self.nan_code(neg)
        } else {
            self.with_sign(neg, 0)
        }
    }

    /// The code of `(-1)^neg × sig × 2^exp`, rounded to nearest, ties to even, once.
    /// Values too small for a format without zero become its smallest value (ml_dtypes).
    pub fn encode_parts(&self, neg: bool, sig: u64, exp: i32) -> u64 {
        if sig == 0 {
            return self.zero_code(neg);
        }
        let log2 = 63 - sig.leading_zeros() as i32 + exp;
        // Far above the largest binade: overflow (also keeps the shifts below in range).
        if log2 > self.min_exp + (1i32 << self.e) + 1 {
            return self.with_sign(neg, self.overflow_code());
        }
        let te = log2.max(self.min_exp);
        let qe = te - self.m as i32;
        let q = round_shift(sig, qe - exp);
        let offset = ((te - self.min_exp) as u64) << self.m;
        let code = if self.m == 0 {
            // ml_dtypes and XLA round every value strictly between the smallest normal and
            // twice it *up* (what their bit arithmetic does for float32 subnormal inputs);
            // followed so that results agree bit for bit.
            let above_min = te == self.min_exp && (log2 == self.min_exp) && q == 1 && {
                let shift = self.min_exp - exp;
                shift > 0 && shift < 64 && sig & ((1u64 << shift) - 1) != 0
            };
            (q + offset + u64::from(above_min)).saturating_sub(1)
        } else {
            q + offset
        };
        let mag = if code > self.max_code {
            self.overflow_code()
        } else {
            code
        };
        self.with_sign(neg, mag)
    }

    /// The code of a float64 (NaN: [`Layout::nan_code`]; ±inf: overflow), rounded once.
    pub fn encode_f64(&self, x: f64) -> u64 {
        let b = x.to_bits();
        let neg = b >> 63 != 0;
        if x.is_nan() {
            return self.nan_code(neg);
        }
        if x.is_infinite() {
            return self.with_sign(neg, self.overflow_code());
        }
        let (sig, exp) = split_f64(b);
        self.encode_parts(neg, sig, exp)
    }
}

/// A finite float64's magnitude as `sig × 2^exp`.
pub fn split_f64(bits: u64) -> (u64, i32) {
    let ef = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if ef == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), ef - 1075)
    }
}

/// `sig × 2^-shift` rounded to nearest, ties to even (a left shift for negative `shift`).
fn round_shift(sig: u64, shift: i32) -> u64 {
    if shift <= 0 {
        return sig << (-shift) as u32;
    }
    if shift > 64 {
        return 0;
    }
    let s = shift as u32;
    let wide = u128::from(sig);
    let q = (wide >> s) as u64;
    let rem = wide & ((1u128 << s) - 1);
    let half = 1u128 << (s - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtype_lattice::DType;

    fn lay(t: DType) -> Layout {
        Layout::new(t.float_format().unwrap())
    }

    #[test]
    fn layouts_from_the_model() {
        assert_eq!(lay(DType::Float8E4M3Fn).specials, Specials::NanAllOnes);
        assert_eq!(lay(DType::Float8E4M3Fnuz).specials, Specials::NanNegZero);
        assert_eq!(lay(DType::Float8E4M3B11Fnuz).specials, Specials::NanNegZero);
        assert_eq!(lay(DType::Float8E8M0Fnu).specials, Specials::NanAllOnes);
        assert_eq!(lay(DType::Float4E2M1Fn).specials, Specials::Finite);
        assert_eq!(lay(DType::Float64).specials, Specials::Ieee);
        assert_eq!(lay(DType::Float8E4M3Fn).max_code, 0x7e);
        assert_eq!(lay(DType::Float8E5M2Fnuz).max_code, 0x7f);
    }

    #[test]
    fn wide_formats_agree_with_the_hardware() {
        let f32l = lay(DType::Float32);
        let f64l = lay(DType::Float64);
        for b in [
            0u32,
            1,
            0x007f_ffff,
            0x0080_0000,
            0x3f80_0000,
            0x7f7f_ffff,
            0x8000_0001,
        ] {
            let x = f32::from_bits(b);
            assert_eq!(f32l.decode(u64::from(b)), f64::from(x));
            assert_eq!(f32l.encode_f64(f64::from(x)), u64::from(b));
        }
        for x in [
            1e-310,
            1.0 + f64::EPSILON,
            3.4028235677973366e38,
            1e-45,
            7.0e-46,
        ] {
            assert_eq!(f32l.encode_f64(x), u64::from((x as f32).to_bits()), "{x}");
            assert_eq!(f64l.encode_f64(x), x.to_bits());
        }
    }
}
