//! Decimal digits of binary floating-point values, exactly (big integers, no rounding error).
//!
//! Two digit modes, the two that array printing needs:
//!
//! - [`Mode::Unique`]: the shortest digits that identify the value among its neighbours *in
//!   its own format* (Steele & White's free-format algorithm, "Dragon4"), as NumPy prints
//!   `float16`, `float32` and `float64` with `unique=True`. The rounding interval includes its
//!   ends when the value's mantissa is even (a decimal exactly halfway to a neighbour then
//!   reads back as the value, ties to even), and the last digit is the nearer one (ties to
//!   the even digit). An optional cutoff stops earlier
//!   and rounds there: NumPy's `precision` (8 fractional digits in positional notation, 9
//!   significant digits in scientific notation).
//! - [`Mode::Exact`]: the value correctly rounded to a number of significant digits, ties to
//!   even, as C's `printf("%g")` does (ml_dtypes prints its types through it).
//!
//! The value is given as an `f64` holding it exactly plus the [`FloatFormat`] it belongs to
//! (whose precision and exponent range set the neighbours).

use std::cmp::Ordering;

use dtype_lattice::FloatFormat;

/// Where digit generation stops at the latest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cutoff {
    /// No cutoff (only the uniqueness rule stops).
    #[cfg_attr(not(test), allow(dead_code))]
    None,
    /// The last digit is at most this many places after the decimal point.
    Fraction(u32),
    /// At most this many significant digits.
    Significant(u32),
}

/// How digits are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The shortest digits that round back to the value in its format, up to the cutoff.
    Unique(Cutoff),
    /// The value rounded at the cutoff (which must not be [`Cutoff::None`]).
    Exact(Cutoff),
}

/// Decimal digits of a finite non-negative value: `0.d1 d2 d3 … × 10^(exponent + 1)`, i.e.
/// the first digit's place is `10^exponent`. Zero is `digits == [0]`, `exponent == 0`.
/// No trailing zeros except for zero itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Digits {
    /// The digits, 0–9 each, the first non-zero (unless the value is zero).
    pub digits: Vec<u8>,
    /// The decimal exponent of the first digit.
    pub exponent: i32,
}

/// An unsigned big integer, little-endian base-2^32 limbs, without leading zero limbs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(x: u64) -> Big {
        let mut b = Big(vec![x as u32, (x >> 32) as u32]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let p = *limb as u64 * m as u64 + carry;
            *limb = p as u32;
            carry = p >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }

    fn mul_pow10(&mut self, mut k: u32) {
        while k >= 9 {
            self.mul_small(1_000_000_000);
            k -= 9;
        }
        self.mul_small(10u32.pow(k));
    }

    fn shl(&mut self, bits: u32) {
        if self.is_zero() {
            return;
        }
        let (limbs, rem) = ((bits / 32) as usize, bits % 32);
        if rem != 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let v = ((*limb as u64) << rem) | carry as u64;
                *limb = v as u32;
                carry = (v >> 32) as u32;
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, limbs));
    }

    fn add(&self, other: &Big) -> Big {
        let n = self.0.len().max(other.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u64;
        for i in 0..n {
            let s =
                *self.0.get(i).unwrap_or(&0) as u64 + *other.0.get(i).unwrap_or(&0) as u64 + carry;
            out.push(s as u32);
            carry = s >> 32;
        }
        if carry != 0 {
            out.push(carry as u32);
        }
        Big(out)
    }

    /// `self -= other`; `other <= self`.
    fn sub_assign(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let d = self.0[i] as i64 - *other.0.get(i).unwrap_or(&0) as i64 - borrow;
            self.0[i] = d.rem_euclid(1 << 32) as u32;
            borrow = (d < 0) as i64;
        }
        debug_assert_eq!(borrow, 0);
        self.trim();
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    /// `floor(self / d)` (at most 9 here), leaving the remainder in `self`.
    fn div_digit(&mut self, d: &Big) -> u8 {
        let mut q = 0;
        while self.cmp(d) != Ordering::Less {
            self.sub_assign(d);
            q += 1;
        }
        q
    }
}

/// `x = m · 2^e` with `m` a 53-bit-at-most integer (`x` finite, positive).
fn decompose(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), biased - 1075)
    }
}

/// The exponent `p` with `2^p <= x < 2^(p+1)` (`x` finite, positive).
fn binary_exponent(x: f64) -> i32 {
    let (m, e) = decompose(x);
    e + 63 - m.leading_zeros() as i32
}

/// The decimal digits of the finite value `x >= 0`, an element of `format`.
pub(crate) fn digits(x: f64, format: &FloatFormat, mode: Mode) -> Digits {
    debug_assert!(x.is_finite() && x >= 0.0);
    if x == 0.0 {
        return Digits {
            digits: vec![0],
            exponent: 0,
        };
    }
    // x = m · 2^e exactly, with 2^e the format's spacing (ulp) at x.
    let p = binary_exponent(x).max(format.min_exponent);
    let e = p - format.mantissa_bits as i32;
    let (fm, fe) = decompose(x);
    // fm · 2^fe = m · 2^e, with fe <= e or m having trailing zeros to give.
    let (m, e) = if fe >= e {
        (fm << (fe - e), e)
    } else {
        let shift = e - fe;
        debug_assert_eq!(
            fm & ((1u64 << shift.min(63)) - 1),
            0,
            "{x} is not in the format"
        );
        (fm >> shift, e)
    };
    // The gap below is half the gap above at a power of two (but the smallest normal).
    let unequal = m == 1 << format.mantissa_bits && p > format.min_exponent;
    // With an even mantissa, a decimal exactly halfway to a neighbour rounds (ties to even)
    // to the value, so it identifies it: the interval includes its ends.
    let even = m % 2 == 0;

    // value = r / s; mm and mp (over s) are half the gaps to the neighbours below and
    // above. Scaled by 4 so that all are integers: value·4 = m·2^e·4, gaps/2·4 = 2·2^e (or
    // 2^e below a power of two).
    let mut r = Big::from_u64(m << 2);
    let mut s = Big::from_u64(4);
    let mut mm = Big::from_u64(if unequal { 1 } else { 2 });
    let mut mp = Big::from_u64(2);
    if e >= 0 {
        r.shl(e as u32);
        mm.shl(e as u32);
        mp.shl(e as u32);
    } else {
        s.shl((-e) as u32);
    }
    // Scale to r/s in [0.1, 1): first digit at 10^k.
    let mut k = (x.log10().floor() as i32) + 1;
    if k > 0 {
        s.mul_pow10(k as u32);
    } else if k < 0 {
        r.mul_pow10((-k) as u32);
        mm.mul_pow10((-k) as u32);
        mp.mul_pow10((-k) as u32);
    }
    loop {
        if r.cmp(&s) != Ordering::Less {
            s.mul_small(10);
            k += 1;
        } else {
            let mut r10 = r.clone();
            r10.mul_small(10);
            if r10.cmp(&s) == Ordering::Less {
                r = r10;
                mm.mul_small(10);
                mp.mul_small(10);
                k -= 1;
            } else {
                break;
            }
        }
    }
    // The first digit's place is 10^(k-1).
    let first = k - 1;
    let (unique, cutoff) = match mode {
        Mode::Unique(c) => (true, c),
        Mode::Exact(c) => (false, c),
    };
    // The place of the last digit allowed.
    let last = match cutoff {
        Cutoff::None => i32::MIN,
        Cutoff::Fraction(n) => -(n as i32),
        Cutoff::Significant(n) => first - n as i32 + 1,
    };
    if first < last {
        // Every digit is past the cutoff: the value rounds to 0 or to one unit there.
        let mut unit = s.clone();
        unit.mul_pow10((last - first - 1) as u32);
        let mut r2 = r.clone();
        r2.shl(1);
        // r/s < 0.1·10^-(...): compare 2·value with one unit at `last`.
        let up = r2.cmp(&unit) == Ordering::Greater;
        return if up {
            Digits {
                digits: vec![1],
                exponent: last,
            }
        } else {
            Digits {
                digits: vec![0],
                exponent: 0,
            }
        };
    }
    let mut out = Vec::new();
    let mut place = first;
    let (low, high) = loop {
        r.mul_small(10);
        mm.mul_small(10);
        mp.mul_small(10);
        let d = r.div_digit(&s);
        out.push(d);
        let (low, high) = if unique {
            let below = r.cmp(&mm);
            let above = r.add(&mp).cmp(&s);
            if even {
                (below != Ordering::Greater, above != Ordering::Less)
            } else {
                (below == Ordering::Less, above == Ordering::Greater)
            }
        } else {
            (false, false)
        };
        if low || high || place == last || (!unique && r.is_zero()) {
            break (low, high);
        }
        place -= 1;
    };
    let round_up = if low != high {
        high
    } else {
        let mut r2 = r.clone();
        r2.shl(1);
        match r2.cmp(&s) {
            Ordering::Less => false,
            Ordering::Greater => true,
            Ordering::Equal => out.last().unwrap() % 2 == 1,
        }
    };
    let mut exponent = first;
    if round_up {
        while out.last() == Some(&9) {
            out.pop();
        }
        match out.last_mut() {
            Some(d) => *d += 1,
            None => {
                out.push(1);
                exponent += 1;
            }
        }
    }
    while out.len() > 1 && out.last() == Some(&0) {
        out.pop();
    }
    Digits {
        digits: out,
        exponent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtype_lattice::DType;

    fn f(dtype: DType) -> &'static FloatFormat {
        dtype.float_format().unwrap()
    }

    fn text(d: &Digits) -> String {
        let s: String = d.digits.iter().map(|d| char::from(b'0' + d)).collect();
        format!("{s}e{}", d.exponent)
    }

    #[test]
    fn shortest_agrees_with_rust_on_ordinary_values() {
        for x in [
            1.0,
            0.1,
            1.0 / 3.0,
            123456.789,
            1e300,
            5e-324,
            2f64.powi(-9),
            1e23,
        ] {
            let d = digits(x, f(DType::Float64), Mode::Unique(Cutoff::None));
            let rust = format!("{x:e}");
            let (m, e) = rust.split_once('e').unwrap();
            assert_eq!(text(&d), format!("{}e{e}", m.replace('.', "")), "{x}");
        }
        let d = digits(0.1f32 as f64, f(DType::Float32), Mode::Unique(Cutoff::None));
        assert_eq!(text(&d), "1e-1");
    }

    /// A fixed xorshift stream of bit patterns.
    fn patterns(n: usize, mut state: u64) -> impl Iterator<Item = u64> {
        (0..n).map(move |_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        })
    }

    /// Rust's shortest round-trip digits (`{:e}`): the same rule (shortest, nearest, interval
    /// ends included for even mantissas) in `f32` and `f64`.
    fn rust_shortest(e_text: String) -> String {
        let (m, e) = e_text.split_once('e').unwrap();
        format!("{}e{e}", m.replace('.', ""))
    }

    /// Our shortest digits of `x` against Rust's: equal, but where two shortest candidates
    /// are equally near (Rust takes the upper one, NumPy the even one). Returns whether it was
    /// such a tie.
    fn same_as_rust(x: f64, dtype: DType, rust: String) -> bool {
        let d = digits(x, f(dtype), Mode::Unique(Cutoff::None));
        let rust = rust_shortest(rust);
        if text(&d) == rust {
            return false;
        }
        // a tie: the exact value has one digit more, a 5, and ours ends in an even digit
        let n = d.digits.len() as u32;
        let exact = digits(x, f(dtype), Mode::Exact(Cutoff::Significant(n + 1)));
        let mut cut = exact.digits.clone();
        assert_eq!(
            (cut.pop(), cut.len()),
            (Some(5), d.digits.len()),
            "{x:e} in {dtype}: {rust}"
        );
        assert_eq!(
            (cut, exact.exponent),
            (d.digits.clone(), d.exponent),
            "{x:e}"
        );
        assert_eq!(d.digits.last().unwrap() % 2, 0, "{x:e}");
        true
    }

    #[test]
    fn shortest_agrees_with_rust_on_random_f32_and_f64_but_ties() {
        let mut ties = 0;
        for bits in patterns(4000, 0x9e3779b97f4a7c15) {
            let x = f64::from_bits(bits).abs();
            if x.is_finite() && x != 0.0 {
                ties += same_as_rust(x, DType::Float64, format!("{x:e}")) as usize;
            }
            let y = f32::from_bits(bits as u32).abs();
            if y.is_finite() && y != 0.0 {
                ties += same_as_rust(y as f64, DType::Float32, format!("{y:e}")) as usize;
            }
        }
        // NumPy prints float32(312985.125) as 312985.12, Rust as 312985.13
        assert!(same_as_rust(
            312985.125,
            DType::Float32,
            format!("{:e}", f32::from_bits(0x4898_d324))
        ));
        assert!(ties < 40, "{ties}");
    }

    #[test]
    fn exact_agrees_with_rust_on_every_bfloat16_and_float16() {
        for bits in 0..=u16::MAX {
            for (dtype, x) in [
                (DType::BFloat16, half::bf16::from_bits(bits).to_f64()),
                (DType::Float16, half::f16::from_bits(bits).to_f64()),
            ] {
                if !x.is_finite() || x <= 0.0 {
                    continue;
                }
                let d = digits(x, f(dtype), Mode::Exact(Cutoff::Significant(6)));
                let rust = rust_shortest(format!("{x:.5e}"));
                let (m, e) = rust.split_once('e').unwrap();
                assert_eq!(
                    text(&d),
                    format!("{}e{e}", m.trim_end_matches('0')),
                    "{dtype} {bits:#x}"
                );
            }
        }
    }

    /// The value `text` (digits and exponent) stands for, rounded into `dtype`.
    fn read_back(digits: &[u8], exponent: i32, dtype: DType) -> f64 {
        let s: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
        let x: f64 = format!("0.{s}e{}", exponent + 1).parse().unwrap();
        match dtype_lattice::Value::Float(x).cast(dtype).unwrap() {
            dtype_lattice::Value::Float(y) => y,
            _ => unreachable!(),
        }
    }

    #[test]
    fn every_float16_reads_back_from_its_shortest_digits_and_from_none_shorter() {
        for bits in 1..0x7c00u16 {
            let x = half::f16::from_bits(bits).to_f64();
            let d = digits(x, f(DType::Float16), Mode::Unique(Cutoff::None));
            assert_eq!(
                read_back(&d.digits, d.exponent, DType::Float16),
                x,
                "{bits:#x}"
            );
            if d.digits.len() > 1 {
                // one digit fewer, rounded down or up, is another value
                let mut shorter = d.digits[..d.digits.len() - 1].to_vec();
                assert_ne!(
                    read_back(&shorter, d.exponent, DType::Float16),
                    x,
                    "{bits:#x}"
                );
                let mut e = d.exponent;
                while shorter.last() == Some(&9) {
                    shorter.pop();
                }
                match shorter.last_mut() {
                    Some(last) => *last += 1,
                    None => {
                        shorter.push(1);
                        e += 1;
                    }
                }
                assert_ne!(read_back(&shorter, e, DType::Float16), x, "{bits:#x}");
            }
        }
    }

    #[test]
    fn cutoffs_round_to_nearest_even() {
        let d = digits(
            2f64.powi(-9),
            f(DType::Float64),
            Mode::Unique(Cutoff::Fraction(8)),
        );
        assert_eq!(text(&d), "195312e-3");
        let d = digits(
            2f64.powi(-10),
            f(DType::Float64),
            Mode::Exact(Cutoff::Significant(6)),
        );
        assert_eq!(text(&d), "976562e-4");
        let d = digits(
            0.999999999,
            f(DType::Float64),
            Mode::Unique(Cutoff::Fraction(8)),
        );
        assert_eq!(text(&d), "1e0");
    }
}
