//! How one element prints: the formatters NumPy chooses per dtype, each set up from the
//! elements that will be shown (so that they align).
//!
//! - `bool`: `True`/`False`, `True` padded to five characters but in a 0-d array.
//! - NumPy's integers: right-aligned to the widest of the shown maximum and minimum.
//! - `float16`, `float32`, `float64` (and complex components): NumPy's floating format, see
//!   [`FloatLayout`].
//! - The ml_dtypes types NumPy does not know as numbers (`bfloat16`, the float8/6/4 types,
//!   `int4`, `uint4`, `int2`, `uint2`, `int1`, `uint1`): their scalar `repr()`, unpadded. For
//!   the floats that is C's `%g` of the value (6 significant digits), `nan` without sign.

use dtype_lattice::{DType, FloatFormat, Kind, Value};

use super::Scalar;
use super::digits::{Cutoff, Digits, Mode, digits};

/// NumPy's default `precision` print option.
const PRECISION: u32 = 8;

/// A formatter for the elements of one array.
#[derive(Clone, Debug)]
pub(crate) enum Element {
    /// `bool`: the text of `True` (`" True"` but in 0-d arrays).
    Bool(&'static str),
    /// NumPy's integer types, right-aligned to `width`.
    Int(usize),
    /// `float16`, `float32`, `float64`.
    Float(FloatLayout),
    /// `complex64`, `complex128`: the real and the imaginary parts' layouts.
    Complex(FloatLayout, FloatLayout),
    /// ml_dtypes' integer types: the plain integer.
    PlainInt,
    /// ml_dtypes' float types: C's `%g`.
    G(DType),
    /// `float0` (a structured void dtype of one empty field): `(b'',)`.
    Void,
}

/// Whether NumPy prints the dtype with its own formatters (bool, its integers and floats);
/// the ml_dtypes types print with their scalars' `repr()`.
pub(crate) fn numpy_native(dtype: DType) -> bool {
    match dtype.kind() {
        Kind::Bool => true,
        Kind::UnsignedInt | Kind::SignedInt => !dtype.is_sub_byte_int(),
        Kind::Float => matches!(dtype, DType::Float16 | DType::Float32 | DType::Float64),
        Kind::Complex => matches!(dtype, DType::Complex64 | DType::Complex128),
        _ => false,
    }
}

impl Element {
    /// The formatter for `dtype` given the elements that will be shown; `zero_d` for a 0-d
    /// array.
    pub(crate) fn new(dtype: DType, shown: &[Scalar], zero_d: bool) -> Element {
        match dtype.kind() {
            Kind::Bool => Element::Bool(if zero_d { "True" } else { " True" }),
            Kind::UnsignedInt | Kind::SignedInt if numpy_native(dtype) => {
                let ints = shown.iter().map(as_int);
                let (min, max) =
                    ints.fold((i128::MAX, i128::MIN), |(lo, hi), i| (lo.min(i), hi.max(i)));
                let width = if shown.is_empty() {
                    0
                } else {
                    min.to_string().len().max(max.to_string().len())
                };
                Element::Int(width)
            }
            Kind::UnsignedInt | Kind::SignedInt => Element::PlainInt,
            Kind::Float if numpy_native(dtype) => {
                let xs: Vec<f64> = shown.iter().map(as_float).collect();
                Element::Float(FloatLayout::new(dtype, &xs, false))
            }
            Kind::Complex => {
                let c = dtype.component();
                let (re, im): (Vec<f64>, Vec<f64>) = shown.iter().map(as_complex).unzip();
                Element::Complex(
                    FloatLayout::new(c, &re, false),
                    FloatLayout::new(c, &im, true),
                )
            }
            Kind::Float => Element::G(dtype),
            Kind::Void => Element::Void,
            _ => panic!("{dtype} elements are printed as their key data"),
        }
    }

    /// The text of one element.
    pub(crate) fn format(&self, s: &Scalar) -> String {
        match self {
            Element::Bool(t) => {
                if as_int(s) != 0 {
                    t.to_string()
                } else {
                    "False".to_string()
                }
            }
            Element::Int(width) => format!("{:>width$}", as_int(s)),
            Element::PlainInt => as_int(s).to_string(),
            Element::Float(layout) => layout.format(as_float(s)),
            Element::Complex(re, im) => {
                let (x, y) = as_complex(s);
                let r = re.format(x);
                let i = im.format(y);
                let end = i.trim_end().len();
                format!("{r}{}j{}", &i[..end], &i[end..])
            }
            Element::G(dtype) => g_format(held(*dtype, as_float(s)), *dtype),
            Element::Void => "(b'',)".to_string(),
        }
    }
}

fn as_int(s: &Scalar) -> i128 {
    match *s {
        Scalar::Bool(b) => b as i128,
        Scalar::Int(i) => i,
        _ => panic!("an integer or bool element expected, got {s:?}"),
    }
}

fn as_float(s: &Scalar) -> f64 {
    match *s {
        Scalar::Float(x) => x,
        Scalar::Int(i) => i as f64,
        Scalar::Bool(b) => b as u8 as f64,
        _ => panic!("a real element expected, got {s:?}"),
    }
}

fn as_complex(s: &Scalar) -> (f64, f64) {
    match *s {
        Scalar::Complex(re, im) => (re, im),
        _ => (as_float(s), 0.0),
    }
}

/// `x` rounded into the real float `dtype` (NumPy compares and divides in the array's dtype).
fn in_dtype(dtype: DType, x: f64) -> f64 {
    match Value::Float(x).cast(dtype) {
        Ok(Value::Float(y)) => y,
        _ => unreachable!("a float cast to a float dtype"),
    }
}

/// The value a real float `dtype` holds for `x`: `x` itself when it is one of the dtype's
/// values (as [`Scalar::Float`] asks), else `x` rounded to nearest, ties to even; non-finite
/// values unchanged.
fn held(dtype: DType, x: f64) -> f64 {
    if x.is_finite() && dtype != DType::Float64 {
        in_dtype(dtype, x)
    } else {
        x
    }
}

/// NumPy's floating-point layout of a set of values (`FloatingFormat` with the default
/// options: `floatmode='maxprec'`, precision 8, `suppress=False`, sign `'-'`, or `'+'` for
/// the imaginary parts of complex numbers).
///
/// Scientific notation is chosen when a non-zero finite magnitude is `>= 1e8` or `< 1e-4`,
/// or the largest is more than 1000 times the smallest (compared in the values' dtype).
/// Positional: each value's shortest unique digits up to 8 fractional digits, aligned on the
/// decimal point (integer parts padded left, fractions padded right with spaces).
/// Scientific: every value with as many digits as the longest needs (zeros appended), the
/// exponents as wide as the widest (two digits at least).
#[derive(Clone, Debug)]
pub(crate) struct FloatLayout {
    dtype: DType,
    format: &'static FloatFormat,
    plus: bool,
    scientific: bool,
    /// Fractional digits: the cutoff (positional) or the digits every value gets (scientific).
    precision: u32,
    pad_left: usize,
    pad_right: usize,
    exp_digits: usize,
}

/// A value's sign as NumPy writes it: `-` for a set sign bit (so `-0.`), `+` when asked for.
fn sign(x: f64, plus: bool) -> &'static str {
    if x.is_sign_negative() {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    }
}

/// Positional notation: (integer part with sign, fractional digits).
fn positional_parts(x: f64, format: &FloatFormat, plus: bool) -> (String, String) {
    let d = digits(x.abs(), format, Mode::Unique(Cutoff::Fraction(PRECISION)));
    let (int, frac) = split_positional(&d);
    (format!("{}{int}", sign(x, plus)), frac)
}

/// The digits written positionally: the integer part (`0` if none) and the fraction.
fn split_positional(d: &Digits) -> (String, String) {
    let digit = |i: i32| -> char {
        // the digit at place 10^i
        let k = d.exponent - i;
        if k >= 0 && (k as usize) < d.digits.len() {
            char::from(b'0' + d.digits[k as usize])
        } else {
            '0'
        }
    };
    let last = d.exponent - d.digits.len() as i32 + 1;
    let int: String = if d.exponent >= 0 {
        (0..=d.exponent).rev().map(digit).collect()
    } else {
        "0".to_string()
    };
    let frac: String = if last < 0 {
        (last..=-1).rev().map(digit).collect()
    } else {
        String::new()
    };
    (int, frac)
}

/// Scientific notation: (sign and first digit, further digits, exponent) with `significant`
/// digits at most: the shortest unique ones, or with `exact` the value rounded to that many.
fn scientific_parts(
    x: f64,
    format: &FloatFormat,
    plus: bool,
    significant: u32,
    exact: bool,
) -> (String, String, i32) {
    let cutoff = Cutoff::Significant(significant);
    let mode = if exact {
        Mode::Exact(cutoff)
    } else {
        Mode::Unique(cutoff)
    };
    let d = digits(x.abs(), format, mode);
    let first = char::from(b'0' + d.digits[0]);
    let rest: String = d.digits[1..]
        .iter()
        .map(|&c| char::from(b'0' + c))
        .collect();
    (
        format!("{}{first}", sign(x, plus)),
        rest,
        if x == 0.0 { 0 } else { d.exponent },
    )
}

fn exponent_text(e: i32, width: usize) -> String {
    format!(
        "{}{:0width$}",
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    )
}

impl FloatLayout {
    /// The layout of `values` (of the real float `dtype`); `plus` writes `+` on non-negative
    /// values (the imaginary parts).
    pub(crate) fn new(dtype: DType, values: &[f64], plus: bool) -> FloatLayout {
        let format = dtype.float_format().expect("float dtype");
        let values: Vec<f64> = values.iter().map(|&x| held(dtype, x)).collect();
        let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let magnitudes = finite.iter().filter(|&&x| x != 0.0).map(|x| x.abs());
        let (min, max) = magnitudes.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
        // NumPy's decimal precision of the dtype (`finfo.precision`: 3, 6, 15) caps the
        // magnitude printed positionally at 10^precision (1e8 at most).
        let decimal_precision = (-format.eps().log10()).floor().min(8.0) as i32;
        let scientific = max >= min
            && (max >= in_dtype(dtype, 10f64.powi(decimal_precision))
                || min < in_dtype(dtype, 1e-4)
                || in_dtype(dtype, max / min) > 1000.0);
        let mut layout = FloatLayout {
            dtype,
            format,
            plus,
            scientific,
            precision: PRECISION,
            pad_left: 0,
            pad_right: 0,
            exp_digits: 0,
        };
        if finite.is_empty() {
            // only nan and inf: nothing to align but them
        } else if scientific {
            let parts: Vec<_> = finite
                .iter()
                .map(|&x| scientific_parts(x, format, plus, PRECISION + 1, false))
                .collect();
            layout.exp_digits = parts
                .iter()
                .map(|(_, _, e)| e.unsigned_abs().to_string().len().max(2))
                .max()
                .unwrap_or(2);
            layout.precision = parts
                .iter()
                .map(|(_, rest, _)| rest.len())
                .max()
                .unwrap_or(0) as u32;
            layout.pad_left = parts
                .iter()
                .map(|(lead, _, _)| lead.len())
                .max()
                .unwrap_or(0);
            layout.pad_right = layout.exp_digits + 2 + layout.precision as usize;
        } else {
            for &x in &finite {
                let (int, frac) = positional_parts(x, format, plus);
                layout.pad_left = layout.pad_left.max(int.len());
                layout.pad_right = layout.pad_right.max(frac.len());
            }
        }
        if finite.len() != values.len() {
            let neg_inf = plus || values.contains(&f64::NEG_INFINITY);
            let offset = layout.pad_right as isize + 1;
            let need = (3 + neg_inf as isize - offset).max(3 - offset).max(0) as usize;
            layout.pad_left = layout.pad_left.max(need);
        }
        layout
    }

    /// The text of one value, padded to the layout.
    pub(crate) fn format(&self, x: f64) -> String {
        let x = held(self.dtype, x);
        if !x.is_finite() {
            let text = if x.is_nan() {
                format!("{}nan", if self.plus { "+" } else { "" })
            } else {
                format!("{}inf", sign(x, self.plus))
            };
            let width = self.pad_left + self.pad_right + 1;
            return format!("{text:>width$}");
        }
        let width = self.pad_left;
        if self.scientific {
            // Every value gets `precision` fractional digits: its own shortest ones continued
            // by the exact value's further digits, rounded at the last.
            let (lead, mut rest, e) =
                scientific_parts(x, self.format, self.plus, self.precision + 1, true);
            while rest.len() < self.precision as usize {
                rest.push('0');
            }
            format!(
                "{lead:>width$}.{rest}e{}",
                exponent_text(e, self.exp_digits)
            )
        } else {
            let (int, frac) = positional_parts(x, self.format, self.plus);
            format!("{int:>width$}.{frac:<pad$}", pad = self.pad_right)
        }
    }
}

/// C's `printf("%g", x)` (6 significant digits, trailing zeros dropped, scientific notation
/// below 1e-4 and from 1e6 on), with `nan` unsigned: how ml_dtypes' float scalars print.
pub(crate) fn g_format(x: f64, dtype: DType) -> String {
    let format = dtype.float_format().expect("float dtype");
    if x.is_nan() {
        return "nan".to_string();
    }
    let s = sign(x, false);
    if x.is_infinite() {
        return format!("{s}inf");
    }
    let d = digits(x.abs(), format, Mode::Exact(Cutoff::Significant(6)));
    let e = if x == 0.0 { 0 } else { d.exponent };
    if (-4..6).contains(&e) {
        let (int, frac) = split_positional(&d);
        if frac.is_empty() {
            format!("{s}{int}")
        } else {
            format!("{s}{int}.{frac}")
        }
    } else {
        let first = char::from(b'0' + d.digits[0]);
        let rest: String = d.digits[1..]
            .iter()
            .map(|&c| char::from(b'0' + c))
            .collect();
        let dot = if rest.is_empty() { "" } else { "." };
        format!("{s}{first}{dot}{rest}e{}", exponent_text(e, 2))
    }
}
