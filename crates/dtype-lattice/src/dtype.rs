//! The dtype model: every dtype JAX 0.10 knows, plus PyTorch's `complex32` and `bcomplex32`.
//!
//! Each [`DType`] knows its name (as NumPy / ml_dtypes print it), its [`Kind`], its bit width,
//! its integer range or its floating-point format ([`FloatFormat`]). All of it lives in one
//! table, [`DType::info`]; the rest of this module only reads that table.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Reason};
use crate::key::{self, KeyImpl};

/// The kind of a dtype, as NumPy's `dtype.kind` letters name them (`b`, `u`, `i`, `f`, `c`,
/// and `V` for JAX's extended dtypes and for `float0`).
///
/// ```
/// use dtype_lattice::{DType, Kind};
/// assert_eq!(DType::Int4.kind(), Kind::SignedInt);
/// assert_eq!(Kind::Float.code(), 'f');
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Kind {
    /// `bool`.
    Bool,
    /// Unsigned integers (`u`).
    UnsignedInt,
    /// Signed integers (`i`).
    SignedInt,
    /// Real floating point, including bfloat16 and the 4/6/8-bit formats (`f`).
    Float,
    /// Complex floating point (`c`).
    Complex,
    /// JAX's extended dtypes, such as the PRNG key dtype `key<fry>` (`V`, as JAX reports).
    Extended,
    /// NumPy's void kind (`V`) of JAX's `float0`: the dtype of the tangents and cotangents of
    /// integer, boolean and key values, which holds no numbers.
    Void,
}

impl Kind {
    /// NumPy's one-letter kind code.
    ///
    /// ```
    /// assert_eq!(dtype_lattice::Kind::UnsignedInt.code(), 'u');
    /// ```
    pub const fn code(self) -> char {
        match self {
            Kind::Bool => 'b',
            Kind::UnsignedInt => 'u',
            Kind::SignedInt => 'i',
            Kind::Float => 'f',
            Kind::Complex => 'c',
            Kind::Extended | Kind::Void => 'V',
        }
    }

    /// Whether values of this kind are integers (signed or unsigned).
    ///
    /// ```
    /// assert!(dtype_lattice::Kind::SignedInt.is_integer());
    /// assert!(!dtype_lattice::Kind::Bool.is_integer());
    /// ```
    pub const fn is_integer(self) -> bool {
        matches!(self, Kind::UnsignedInt | Kind::SignedInt)
    }
}

/// The format of a floating-point dtype (of each component, for complex dtypes).
///
/// Fields follow `ml_dtypes.finfo`: `mantissa_bits` is `nmant` (explicit fraction bits),
/// `exponent_bits` is `nexp`, `min_exponent` is `minexp` (the exponent of the smallest normal).
///
/// ```
/// use dtype_lattice::DType;
/// let f = DType::Float8E4M3Fn.float_format().unwrap();
/// assert_eq!((f.mantissa_bits, f.exponent_bits, f.max), (3, 4, 448.0));
/// assert!(!f.has_inf && f.has_nan);
/// assert_eq!(f.smallest_normal(), 0.015625);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FloatFormat {
    /// Explicitly stored fraction bits (`nmant`).
    pub mantissa_bits: u32,
    /// Exponent bits (`nexp`).
    pub exponent_bits: u32,
    /// Exponent of the smallest positive normal number (`minexp`).
    pub min_exponent: i32,
    /// The largest finite value.
    pub max: f64,
    /// Whether the format has a sign bit (all but float8_e8m0fnu).
    pub signed: bool,
    /// Whether the format can represent infinity.
    pub has_inf: bool,
    /// Whether the format can represent NaN.
    pub has_nan: bool,
}

/// `2^e` exactly, for `-1074 <= e <= 1023` (`powi` underflows on the way to subnormals).
fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

impl FloatFormat {
    /// The smallest positive normal number, `2^min_exponent`.
    pub fn smallest_normal(&self) -> f64 {
        pow2(self.min_exponent)
    }

    /// The smallest positive subnormal number (the smallest normal when there are none).
    pub fn smallest_subnormal(&self) -> f64 {
        pow2(self.min_exponent - self.mantissa_bits as i32)
    }

    /// Machine epsilon, `2^-mantissa_bits`.
    pub fn eps(&self) -> f64 {
        pow2(-(self.mantissa_bits as i32))
    }

    /// The smallest finite value (`-max`, or the smallest normal for unsigned formats).
    pub fn min(&self) -> f64 {
        if self.signed {
            -self.max
        } else {
            self.smallest_normal()
        }
    }

    /// Number of bits of precision including the implicit leading bit; an integer of at most
    /// this many bits converts exactly.
    pub fn precision_bits(&self) -> u32 {
        self.mantissa_bits + 1
    }
}

/// What a dtype's values are: an integer range, a float format, bool, or PRNG keys.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Repr {
    /// `False`/`True`.
    Bool,
    /// Integers in `min..=max`.
    Int {
        /// Smallest value.
        min: i128,
        /// Largest value.
        max: i128,
    },
    /// Floating point (for complex dtypes: each component).
    Float(FloatFormat),
    /// PRNG keys of one implementation (an extended dtype).
    Key(&'static KeyImpl),
    /// No values: JAX's `float0`, the trivial vector space (NumPy's void dtype of itemsize 0).
    Void,
}

/// Everything the model knows about one dtype: one row of [`DType::info`]'s table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DTypeInfo {
    /// Name as NumPy / ml_dtypes print it (`str(np.dtype(...))`).
    pub name: &'static str,
    /// NumPy's type code (`i1`, `f4`, `c16`, …) or JAX's documentation's (`bf`), if it has one.
    pub code: Option<&'static str>,
    /// The kind.
    pub kind: Kind,
    /// Bit width of one element (both components for complex; 8 for bool, as JAX's
    /// `itemsize_bits`; 0 for `float0`).
    pub bits: u32,
    /// The value representation.
    pub repr: Repr,
    /// The dtype it is with x64 off (`jax.dtypes.canonicalize_dtype`): the 64-bit dtypes'
    /// 32-bit counterparts, every other dtype itself.
    pub x32: DType,
}

macro_rules! dtypes {
    (slots { $( $slot:ident ),* $(,)? }
     $( $variant:ident = $name:literal, $code:expr, $kind:ident, $bits:literal, $repr:expr $(, x32 $x32:ident)?; )*) => {
        /// A dtype: every dtype of JAX 0.10 plus `complex32` and `bcomplex32`, JAX's
        /// extended PRNG key dtypes (`key<fry>`, …; [`Kind::Extended`]) and JAX's `float0`
        /// (the dtype of the tangents of integers; [`Kind::Void`]).
        ///
        /// Parse with [`FromStr`] (NumPy/ml_dtypes names, NumPy codes such as `i4` and `c8`, and
        /// the short names of JAX's documentation such as `bf`); print with [`Display`](fmt::Display).
        ///
        /// ```
        /// use dtype_lattice::DType;
        /// let t: DType = "f2".parse().unwrap();
        /// assert_eq!(t, DType::Float16);
        /// assert_eq!(t.to_string(), "float16");
        /// assert_eq!("bf".parse::<DType>().unwrap(), DType::BFloat16);
        /// assert_eq!(DType::Complex64.bits(), 64);
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        #[non_exhaustive]
        pub enum DType {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
            $(
                /// A slot for a key implementation registered at run time
                /// ([`key::register`]): its name is `key<TAG>`.
                #[doc(hidden)]
                $slot,
            )*
        }

        /// The slots of registered key dtypes, in the order they are handed out.
        pub(crate) const SLOTS: &[DType] = &[ $( DType::$slot, )* ];

        const INFO: &[DTypeInfo] = &[
            $( DTypeInfo {
                name: $name,
                code: $code,
                kind: Kind::$kind,
                bits: $bits,
                repr: $repr,
                x32: { let _d = DType::$variant; $( let _d = DType::$x32; )? _d },
            }, )*
        ];

        impl DType {
            /// Every dtype: the numeric ones in the order of JAX's `_jax_types` (complex32,
            /// bcomplex32 before complex64), then the key dtypes in the order of
            /// [`KEY_IMPLS`](crate::key::KEY_IMPLS), then `float0`. Iterate
            /// [`DType::NUMERIC`] for the dtypes that promote, [`DType::EXTENDED`] for the keys.
            pub const ALL: &'static [DType] = &[ $( DType::$variant, )* ];
        }
    };
}

const fn int(min: i128, max: i128) -> Repr {
    Repr::Int { min, max }
}

const fn uint(bits: u32) -> Repr {
    Repr::Int {
        min: 0,
        max: (1i128 << bits) - 1,
    }
}

const fn sint(bits: u32) -> Repr {
    int(-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
}

const fn float(
    mantissa_bits: u32,
    exponent_bits: u32,
    min_exponent: i32,
    max: f64,
    has_inf: bool,
    has_nan: bool,
) -> Repr {
    Repr::Float(FloatFormat {
        mantissa_bits,
        exponent_bits,
        min_exponent,
        max,
        signed: true,
        has_inf,
        has_nan,
    })
}

const IEEE_HALF: Repr = float(10, 5, -14, 65504.0, true, true);
const BFLOAT: Repr = float(7, 8, -126, 3.3895313892515355e38, true, true);
const IEEE_SINGLE: Repr = float(23, 8, -126, 3.4028234663852886e38, true, true);
const IEEE_DOUBLE: Repr = float(52, 11, -1022, f64::MAX, true, true);

dtypes! {
    slots {
        KeyRegistered0, KeyRegistered1, KeyRegistered2, KeyRegistered3,
        KeyRegistered4, KeyRegistered5, KeyRegistered6, KeyRegistered7,
        KeyRegistered8, KeyRegistered9, KeyRegistered10, KeyRegistered11,
        KeyRegistered12, KeyRegistered13, KeyRegistered14, KeyRegistered15,
    }
    Bool = "bool", Some("b1"), Bool, 8, Repr::Bool;
    UInt1 = "uint1", None, UnsignedInt, 1, uint(1);
    UInt2 = "uint2", None, UnsignedInt, 2, uint(2);
    UInt4 = "uint4", None, UnsignedInt, 4, uint(4);
    UInt8 = "uint8", Some("u1"), UnsignedInt, 8, uint(8);
    UInt16 = "uint16", Some("u2"), UnsignedInt, 16, uint(16);
    UInt32 = "uint32", Some("u4"), UnsignedInt, 32, uint(32);
    UInt64 = "uint64", Some("u8"), UnsignedInt, 64, uint(64), x32 UInt32;
    Int1 = "int1", None, SignedInt, 1, sint(1);
    Int2 = "int2", None, SignedInt, 2, sint(2);
    Int4 = "int4", None, SignedInt, 4, sint(4);
    Int8 = "int8", Some("i1"), SignedInt, 8, sint(8);
    Int16 = "int16", Some("i2"), SignedInt, 16, sint(16);
    Int32 = "int32", Some("i4"), SignedInt, 32, sint(32);
    Int64 = "int64", Some("i8"), SignedInt, 64, sint(64), x32 Int32;
    Float4E2M1Fn = "float4_e2m1fn", None, Float, 4, float(1, 2, 0, 6.0, false, false);
    Float6E2M3Fn = "float6_e2m3fn", None, Float, 6, float(3, 2, 0, 7.5, false, false);
    Float6E3M2Fn = "float6_e3m2fn", None, Float, 6, float(2, 3, -2, 28.0, false, false);
    Float8E3M4 = "float8_e3m4", None, Float, 8, float(4, 3, -2, 15.5, true, true);
    Float8E4M3 = "float8_e4m3", None, Float, 8, float(3, 4, -6, 240.0, true, true);
    Float8E8M0Fnu = "float8_e8m0fnu", None, Float, 8, Repr::Float(FloatFormat {
        mantissa_bits: 0, exponent_bits: 8, min_exponent: -127, max: 1.7014118346046923e38,
        signed: false, has_inf: false, has_nan: true,
    });
    Float8E4M3B11Fnuz = "float8_e4m3b11fnuz", None, Float, 8, float(3, 4, -10, 30.0, false, true);
    Float8E4M3Fn = "float8_e4m3fn", None, Float, 8, float(3, 4, -6, 448.0, false, true);
    Float8E4M3Fnuz = "float8_e4m3fnuz", None, Float, 8, float(3, 4, -7, 240.0, false, true);
    Float8E5M2 = "float8_e5m2", None, Float, 8, float(2, 5, -14, 57344.0, true, true);
    Float8E5M2Fnuz = "float8_e5m2fnuz", None, Float, 8, float(2, 5, -15, 57344.0, false, true);
    BFloat16 = "bfloat16", Some("bf"), Float, 16, BFLOAT;
    Float16 = "float16", Some("f2"), Float, 16, IEEE_HALF;
    Float32 = "float32", Some("f4"), Float, 32, IEEE_SINGLE;
    Float64 = "float64", Some("f8"), Float, 64, IEEE_DOUBLE, x32 Float32;
    Complex32 = "complex32", Some("c4"), Complex, 32, IEEE_HALF;
    BComplex32 = "bcomplex32", Some("bc"), Complex, 32, BFLOAT;
    Complex64 = "complex64", Some("c8"), Complex, 64, IEEE_SINGLE;
    Complex128 = "complex128", Some("c16"), Complex, 128, IEEE_DOUBLE, x32 Complex64;
    KeyThreefry2x32 = "key<fry>", None, Extended, 64, Repr::Key(&key::THREEFRY2X32);
    KeyRbg = "key<rbg>", None, Extended, 128, Repr::Key(&key::RBG);
    KeyUnsafeRbg = "key<urbg>", None, Extended, 128, Repr::Key(&key::UNSAFE_RBG);
    KeyThreefry4x32 = "key<fry4>", None, Extended, 128, Repr::Key(&key::THREEFRY4X32);
    KeyPhilox2x32 = "key<phx2>", None, Extended, 32, Repr::Key(&key::PHILOX2X32);
    KeyPhilox4x32 = "key<phx4>", None, Extended, 64, Repr::Key(&key::PHILOX4X32);
    Float0 = "float0", None, Void, 0, Repr::Void;
}

impl DType {
    /// The numeric (and bool) dtypes: [`DType::ALL`] without the extended ones.
    pub const NUMERIC: &'static [DType] = DType::ALL.split_at(DType::KeyThreefry2x32 as usize).0;

    /// The extended (PRNG key) dtypes.
    pub const EXTENDED: &'static [DType] = DType::ALL
        .split_at(DType::Float0 as usize)
        .0
        .split_at(DType::KeyThreefry2x32 as usize)
        .1;

    /// The key dtypes now: [`DType::EXTENDED`], then those registered at run time
    /// ([`key::register`]) in the order of registration.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(&DType::extended()[..6], DType::EXTENDED);
    /// ```
    pub fn extended() -> Vec<DType> {
        let mut all = DType::EXTENDED.to_vec();
        all.extend(key::registered());
        all
    }
}

/// Extra spellings accepted by [`DType::from_str`] besides names and codes.
const ALIASES: &[(&str, DType)] = &[
    ("bool_", DType::Bool),
    ("?", DType::Bool),
    ("half", DType::Float16),
    ("single", DType::Float32),
    ("double", DType::Float64),
    ("float", DType::Float64),
    ("bf16", DType::BFloat16),
    ("chalf", DType::Complex32),
    ("cfloat", DType::Complex64),
    ("cdouble", DType::Complex128),
];

/// Spellings that read as bit widths but are NumPy-style codes, which count bytes: NumPy reads
/// `f16` as float128 and does not understand the others (`tests/fixtures/numpy/dtype_codes.json`),
/// so they are refused with what they were likely meant as.
const BIT_WIDTH_CODES: &[(&str, &str, [&str; 2])] = &[
    ("f16", "NumPy's float128", ["float16", "f2"]),
    ("f32", "not a NumPy dtype", ["float32", "f4"]),
    ("f64", "not a NumPy dtype", ["float64", "f8"]),
    ("c64", "not a NumPy dtype", ["complex64", "c8"]),
    ("c128", "not a NumPy dtype", ["complex128", "c16"]),
];

impl DType {
    /// Number of dtypes in the model.
    pub const COUNT: usize = INFO.len();

    /// The model's row for this dtype.
    ///
    /// ```
    /// use dtype_lattice::{DType, Repr};
    /// assert_eq!(DType::Int8.info().repr, Repr::Int { min: -128, max: 127 });
    /// ```
    #[inline]
    pub fn info(self) -> &'static DTypeInfo {
        match INFO.get(self as usize) {
            Some(info) => info,
            None => key::registered_info(self),
        }
    }

    /// `jax.dtypes.canonicalize_dtype`: with x64 off (`jax_enable_x64=False`), 64-bit dtypes
    /// become their 32-bit counterparts; with x64 on, every dtype is its own.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(DType::Float64.canonicalize(false), DType::Float32);
    /// assert_eq!(DType::UInt64.canonicalize(true), DType::UInt64);
    /// assert_eq!(DType::Int8.canonicalize(false), DType::Int8);
    /// ```
    #[must_use]
    pub fn canonicalize(self, x64: bool) -> DType {
        if x64 { self } else { self.info().x32 }
    }

    /// A dense index in `0..DType::COUNT`, the position in [`DType::ALL`] (for the dtypes of
    /// `ALL`; a registered key dtype's index is `COUNT` or more: it is in no table).
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(DType::ALL[DType::Int8.index()], DType::Int8);
    /// ```
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The name as NumPy / ml_dtypes print it.
    ///
    /// ```
    /// assert_eq!(dtype_lattice::DType::Float8E4M3Fn.name(), "float8_e4m3fn");
    /// ```
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The short name used in JAX's documentation table: NumPy's code (`i4`, `c8`), `bf` for
    /// bfloat16, and the full name for dtypes that have no code (`int4`, `float8_e5m2`).
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(DType::Int32.short_name(), "i4");
    /// assert_eq!(DType::Int4.short_name(), "int4");
    /// ```
    pub fn short_name(self) -> &'static str {
        self.info().code.unwrap_or(self.info().name)
    }

    /// The kind.
    #[inline]
    pub fn kind(self) -> Kind {
        self.info().kind
    }

    /// Bits per element (8 for bool, both components for complex).
    #[inline]
    pub fn bits(self) -> u32 {
        self.info().bits
    }

    /// The integer range `(min, max)`, for integer dtypes (and `(0, 1)` for bool).
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(DType::UInt4.int_range(), Some((0, 15)));
    /// assert_eq!(DType::Float32.int_range(), None);
    /// ```
    pub fn int_range(self) -> Option<(i128, i128)> {
        match self.info().repr {
            Repr::Int { min, max } => Some((min, max)),
            Repr::Bool => Some((0, 1)),
            Repr::Float(_) | Repr::Key(_) | Repr::Void => None,
        }
    }

    /// The float format (of each component, for complex dtypes).
    pub fn float_format(self) -> Option<&'static FloatFormat> {
        match &self.info().repr {
            Repr::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The largest finite value as an `f64` (1 for bool, NaN for key dtypes and `float0`,
    /// which hold no numbers).
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(DType::Float16.max_value(), 65504.0);
    /// assert_eq!(DType::UInt8.max_value(), 255.0);
    /// ```
    pub fn max_value(self) -> f64 {
        match self.info().repr {
            Repr::Bool => 1.0,
            Repr::Int { max, .. } => max as f64,
            Repr::Float(f) => f.max,
            Repr::Key(_) | Repr::Void => f64::NAN,
        }
    }

    /// Whether this is an extended dtype (a PRNG key dtype), which promotes only with itself.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert!(DType::KeyThreefry2x32.is_extended());
    /// assert!(!DType::Float32.is_extended());
    /// ```
    #[inline]
    pub const fn is_extended(self) -> bool {
        // The extended dtypes are the variants before `float0` (checked in the tests), and the
        // slots of registered key dtypes after it.
        (self as u8 >= DType::KeyThreefry2x32 as u8 && (self as u8) < DType::Float0 as u8)
            || self as u8 > DType::Float0 as u8
    }

    /// Whether this is JAX's `float0` (`jax.dtypes.float0`, NumPy's `[('float0', 'V')]`):
    /// the dtype of the tangents and cotangents of integer, boolean and key values, a NumPy
    /// void dtype of itemsize 0 whose arrays hold no numbers and take no bytes. It is in no
    /// promotion lattice: JAX refuses it in `promote_types` and in every arithmetic operation.
    ///
    /// ```
    /// use dtype_lattice::{DType, Kind, Rules};
    /// assert!(DType::Float0.is_float0() && !DType::Float0.is_extended());
    /// assert_eq!((DType::Float0.kind(), DType::Float0.bits()), (Kind::Void, 0));
    /// assert!(!DType::NUMERIC.contains(&DType::Float0));
    /// let e = Rules::jax().promote_types(DType::Float0, DType::Float32).unwrap_err();
    /// assert_eq!(
    ///     e.to_string(),
    ///     "ValueError: dtype=dtype([('float0', 'V')]) is not a valid dtype for JAX type promotion."
    /// );
    /// ```
    #[inline]
    pub const fn is_float0(self) -> bool {
        self as u8 == DType::Float0 as u8
    }

    /// The dtype of the tangents of values of this dtype (JAX's
    /// `core.primal_dtype_to_tangent_dtype`): the dtype itself for floating and complex
    /// dtypes, `float0` for every other (bool, integers, PRNG keys, `float0`).
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(DType::BFloat16.tangent_dtype(), DType::BFloat16);
    /// assert_eq!(DType::Int32.tangent_dtype(), DType::Float0);
    /// assert_eq!(DType::KeyThreefry2x32.tangent_dtype(), DType::Float0);
    /// ```
    #[must_use]
    pub fn tangent_dtype(self) -> DType {
        match self.kind() {
            Kind::Float | Kind::Complex => self,
            _ => DType::Float0,
        }
    }

    /// `str(np.dtype(d))`, as NumPy and JAX's messages print a dtype: the name, but
    /// `[('float0', 'V')]` for `float0` (a structured void dtype).
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(DType::Int32.numpy_str(), "int32");
    /// assert_eq!(DType::Float0.numpy_str(), "[('float0', 'V')]");
    /// ```
    pub fn numpy_str(self) -> &'static str {
        if self.is_float0() {
            "[('float0', 'V')]"
        } else {
            self.name()
        }
    }

    /// `np.dtype(d).name`, as JAX's messages that print `dtype.name` show a dtype: the name,
    /// but `void` for `float0`.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(DType::UInt8.numpy_name(), "uint8");
    /// assert_eq!(DType::Float0.numpy_name(), "void");
    /// ```
    pub fn numpy_name(self) -> &'static str {
        if self.is_float0() {
            "void"
        } else {
            self.name()
        }
    }

    /// The PRNG implementation of a key dtype.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(DType::KeyThreefry2x32.key_impl().unwrap().name, "threefry2x32");
    /// assert!(DType::UInt32.key_impl().is_none());
    /// ```
    pub fn key_impl(self) -> Option<&'static KeyImpl> {
        match self.info().repr {
            Repr::Key(k) => Some(k),
            _ => None,
        }
    }

    /// The real dtype of one component of a complex dtype (`complex64` → `float32`), or the
    /// dtype itself.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// assert_eq!(DType::Complex64.component(), DType::Float32);
    /// ```
    #[must_use]
    pub fn component(self) -> DType {
        match self {
            DType::Complex32 => DType::Float16,
            DType::BComplex32 => DType::BFloat16,
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            other => other,
        }
    }

    /// Whether this is one of the sub-byte or 8-bit float formats of ml_dtypes (everything
    /// real and floating except bfloat16, float16, float32 and float64).
    pub fn is_small_float(self) -> bool {
        self.kind() == Kind::Float && self.bits() <= 8
    }

    /// Whether this is one of the 1-, 2- and 4-bit integers of ml_dtypes.
    pub fn is_sub_byte_int(self) -> bool {
        self.kind().is_integer() && self.bits() < 8
    }

    /// Valid names closest to `input`, best first, for "did you mean" messages.
    ///
    /// ```
    /// let s = dtype_lattice::DType::suggestions("flaot32");
    /// assert_eq!(s[0], "float32");
    /// ```
    pub fn suggestions(input: &str) -> Vec<&'static str> {
        let input = input.to_ascii_lowercase();
        let mut scored: Vec<(f64, &'static str)> = INFO
            .iter()
            .map(|i| i.name)
            .chain(INFO.iter().filter_map(|i| i.code))
            .map(|name| (strsim::jaro_winkler(&input, name), name))
            .filter(|(score, _)| *score > 0.75)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        let mut out: Vec<&'static str> = Vec::new();
        for (_, name) in scored {
            let canonical = name.parse::<DType>().map(DType::name).unwrap_or(name);
            if !out.contains(&canonical) {
                out.push(canonical);
            }
            if out.len() == 3 {
                break;
            }
        }
        out
    }
}

impl FromStr for DType {
    type Err = Error;

    /// Parses a NumPy/ml_dtypes name (`float8_e4m3fn`), a NumPy code (`f4`, `c16`, `b1`) or a
    /// short name of JAX's documentation (`bf`). Unknown names get the closest valid names.
    fn from_str(s: &str) -> Result<Self, Error> {
        if let Some(i) = INFO.iter().position(|i| i.name == s || i.code == Some(s)) {
            return Ok(DType::ALL[i]);
        }
        if let Some((_, d)) = ALIASES.iter().find(|(a, _)| *a == s) {
            return Ok(*d);
        }
        if let Some(d) = key::registered().into_iter().find(|d| d.name() == s) {
            return Ok(d);
        }
        if let Some((code, numpy, [name, short])) = BIT_WIDTH_CODES.iter().find(|(c, ..)| *c == s) {
            return Err(Reason::InvalidArgument {
                argument: format!("dtype {code:?}"),
                reason: format!(
                    "{code} is {numpy} (NumPy's codes count bytes); did you mean {name} or {short}?"
                ),
            }
            .into());
        }
        Err(Reason::UnknownDtype {
            name: s.to_string(),
            suggestions: DType::suggestions(s),
        }
        .into())
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for DType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for DType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

// ---------------------------------------------------------------------------------------------
// The class hierarchy
// ---------------------------------------------------------------------------------------------

/// The abstract dtype classes of NumPy (`np.number`, `np.integer`, …) and JAX
/// (`jax.dtypes.extended`, `jax.dtypes.prng_key`), for [`issubdtype`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DTypeClass {
    /// `np.generic`: everything.
    Generic,
    /// `np.number`.
    Number,
    /// `np.integer`.
    Integer,
    /// `np.signedinteger`.
    SignedInteger,
    /// `np.unsignedinteger`.
    UnsignedInteger,
    /// `np.inexact`.
    Inexact,
    /// `np.floating`.
    Floating,
    /// `np.complexfloating`.
    ComplexFloating,
    /// `np.bool_`.
    Bool,
    /// `np.void` (JAX's `float0`).
    Void,
    /// `jax.dtypes.extended`.
    Extended,
    /// `jax.dtypes.prng_key`.
    PrngKey,
}

/// The class hierarchy as data: each class, its name, and the class directly above it.
const CLASSES: &[(DTypeClass, &str, Option<DTypeClass>)] = &[
    (DTypeClass::Generic, "generic", None),
    (DTypeClass::Number, "number", Some(DTypeClass::Generic)),
    (DTypeClass::Integer, "integer", Some(DTypeClass::Number)),
    (
        DTypeClass::SignedInteger,
        "signedinteger",
        Some(DTypeClass::Integer),
    ),
    (
        DTypeClass::UnsignedInteger,
        "unsignedinteger",
        Some(DTypeClass::Integer),
    ),
    (DTypeClass::Inexact, "inexact", Some(DTypeClass::Number)),
    (DTypeClass::Floating, "floating", Some(DTypeClass::Inexact)),
    (
        DTypeClass::ComplexFloating,
        "complexfloating",
        Some(DTypeClass::Inexact),
    ),
    (DTypeClass::Bool, "bool", Some(DTypeClass::Generic)),
    (DTypeClass::Void, "void", Some(DTypeClass::Generic)),
    (DTypeClass::Extended, "extended", Some(DTypeClass::Generic)),
    (DTypeClass::PrngKey, "prng_key", Some(DTypeClass::Extended)),
];

impl DTypeClass {
    /// The class's name (`signedinteger`, `prng_key`).
    pub fn name(self) -> &'static str {
        CLASSES
            .iter()
            .find(|(c, _, _)| *c == self)
            .map_or("generic", |(_, n, _)| n)
    }

    /// The class directly above (`None` for `generic`).
    pub fn parent(self) -> Option<DTypeClass> {
        CLASSES
            .iter()
            .find(|(c, _, _)| *c == self)
            .and_then(|(_, _, p)| *p)
    }

    /// The most specific class of a dtype: its kind's class, `prng_key` for key dtypes, `void`
    /// for `float0`.
    pub fn of(dtype: DType) -> DTypeClass {
        match dtype.kind() {
            Kind::Bool => DTypeClass::Bool,
            Kind::UnsignedInt => DTypeClass::UnsignedInteger,
            Kind::SignedInt => DTypeClass::SignedInteger,
            Kind::Float => DTypeClass::Floating,
            Kind::Complex => DTypeClass::ComplexFloating,
            Kind::Extended => DTypeClass::PrngKey,
            Kind::Void => DTypeClass::Void,
        }
    }
}

impl FromStr for DTypeClass {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        CLASSES
            .iter()
            .find(|(_, n, _)| *n == s)
            .map(|(c, _, _)| *c)
            .ok_or_else(|| {
                Reason::InvalidArgument {
                    argument: "class".into(),
                    reason: format!(
                        "unknown dtype class {s:?}; valid: {}",
                        CLASSES.iter().map(|c| c.1).collect::<Vec<_>>().join(", ")
                    ),
                }
                .into()
            })
    }
}

impl fmt::Display for DTypeClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `jnp.issubdtype(dtype, class)`: whether the dtype lies under the class.
///
/// ```
/// use dtype_lattice::dtype::{issubdtype, DTypeClass};
/// use dtype_lattice::DType;
/// let key = DType::KeyThreefry2x32;
/// assert!(issubdtype(key, DTypeClass::PrngKey) && issubdtype(key, DTypeClass::Extended));
/// assert!(!issubdtype(key, DTypeClass::Number));
/// assert!(issubdtype("bfloat16".parse().unwrap(), DTypeClass::Floating));
/// assert!(!issubdtype("bool".parse().unwrap(), DTypeClass::Number));
/// // jnp.issubdtype(jax.dtypes.float0, np.void), and not np.number nor extended.
/// assert!(issubdtype(DType::Float0, DTypeClass::Void));
/// assert!(!issubdtype(DType::Float0, DTypeClass::Number));
/// assert!(!issubdtype(DType::Float0, DTypeClass::Extended));
/// ```
pub fn issubdtype(dtype: DType, class: DTypeClass) -> bool {
    let mut c = Some(DTypeClass::of(dtype));
    while let Some(x) = c {
        if x == class {
            return true;
        }
        c = x.parent();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_round_trip() {
        for &d in DType::ALL {
            assert_eq!(d.name().parse::<DType>().unwrap(), d);
            assert_eq!(d.short_name().parse::<DType>().unwrap(), d);
            assert_eq!(DType::ALL[d.index()], d);
        }
        // float0 is last: in ALL, in neither NUMERIC nor EXTENDED.
        assert_eq!(
            (DType::COUNT, DType::NUMERIC.len(), DType::EXTENDED.len()),
            (41, 34, 6)
        );
        assert_eq!(DType::ALL.last(), Some(&DType::Float0));
        assert!(
            DType::NUMERIC
                .iter()
                .all(|d| !d.is_extended() && !d.is_float0())
        );
        assert!(
            DType::EXTENDED
                .iter()
                .all(|d| d.is_extended() && !d.is_float0())
        );
        assert_eq!(
            DType::ALL.iter().filter(|d| d.is_extended()).count(),
            DType::EXTENDED.len()
        );
    }

    #[test]
    fn bit_width_codes_are_refused_with_a_suggestion() {
        let e = "f16".parse::<DType>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid dtype \"f16\": f16 is NumPy's float128 (NumPy's codes count bytes); did you mean float16 or f2?"
        );
        assert!(!e.is_refusal());
        for (code, ..) in BIT_WIDTH_CODES {
            assert!(code.parse::<DType>().is_err(), "{code}");
        }
    }

    #[test]
    fn unknown_names_suggest_neighbours() {
        let suggestions = |name: &str| match name.parse::<DType>().unwrap_err().reason() {
            Reason::UnknownDtype { suggestions, .. } => suggestions.clone(),
            other => panic!("{other:?}"),
        };
        assert!(suggestions("int33").contains(&"int32"));
        assert_eq!(suggestions("bfloat61")[0], "bfloat16");
    }
}
