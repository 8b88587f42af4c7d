//! Rust element types and the dtypes they are: `bool`, the integers, `half::f16`/`bf16`,
//! `f32`, `f64`, `Complex<f32>`, `Complex<f64>`, and `()` for `float0` (its one value). The 1-, 2- and 4-bit integers and the 4-, 6-
//! and 8-bit floats have no Rust type: arrays of them are made with `astype`.

use dtype_lattice::DType;
use half::{bf16, f16};
use num_complex::Complex;

use super::storage::Word;

/// A Rust type that is the element type of a dtype.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::Element;
/// assert_eq!(<half::bf16 as Element>::DTYPE, DType::BFloat16);
/// assert_eq!(<u8 as Element>::DTYPE, DType::UInt8);
/// ```
pub trait Element: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// The dtype of arrays of this type.
    const DTYPE: DType;
    /// The storage word of the dtype.
    #[doc(hidden)]
    type Word: Word;
    /// The element as its storage word.
    #[doc(hidden)]
    fn to_word(self) -> Self::Word;
    /// The element a storage word holds.
    #[doc(hidden)]
    fn from_word(w: Self::Word) -> Self;
}

macro_rules! pod_elements {
    ($($t:ty => $dtype:ident, $w:ty;)*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$dtype;
            type Word = $w;
            #[inline(always)]
            fn to_word(self) -> $w {
                bytemuck::cast(self)
            }
            #[inline(always)]
            fn from_word(w: $w) -> Self {
                bytemuck::cast(w)
            }
        }
    )*};
}

pod_elements! {
    u8 => UInt8, u8;
    i8 => Int8, u8;
    u16 => UInt16, u16;
    i16 => Int16, u16;
    u32 => UInt32, u32;
    i32 => Int32, u32;
    u64 => UInt64, u64;
    i64 => Int64, u64;
    f16 => Float16, u16;
    bf16 => BFloat16, u16;
    f32 => Float32, u32;
    f64 => Float64, u64;
    Complex<f32> => Complex64, u64;
    Complex<f64> => Complex128, u128;
}

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    type Word = u8;
    #[inline(always)]
    fn to_word(self) -> u8 {
        u8::from(self)
    }
    #[inline(always)]
    fn from_word(w: u8) -> Self {
        w != 0
    }
}

/// `float0`'s element: `()`, the one value of the trivial vector space (NumPy's `(b'',)`).
/// Its arrays take no storage.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::Array;
/// let t = Array::from_vec(vec![(); 3]);
/// assert_eq!((t.dtype(), t.shape(), t.as_bytes().len()), (DType::Float0, &[3usize][..], 0));
/// assert_eq!(t.to_vec::<()>()?, [(), (), ()]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
impl Element for () {
    const DTYPE: DType = DType::Float0;
    type Word = u8;
    #[inline(always)]
    fn to_word(self) -> u8 {
        0
    }
    #[inline(always)]
    fn from_word(_: u8) {}
}

/// The storage word width of a dtype in bytes, and the words per element (more than one only
/// for key dtypes: their key data; none for `float0`, whose arrays take no bytes).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::array::layout;
/// assert_eq!(layout(DType::Float8E4M3Fn), (1, 1));
/// assert_eq!(layout(DType::Complex128), (16, 1));
/// assert_eq!(layout(DType::KeyThreefry2x32), (4, 2));
/// assert_eq!(layout(DType::Float0), (1, 0));
/// ```
pub fn layout(dtype: DType) -> (usize, usize) {
    if let Some(k) = dtype.key_impl() {
        return (4, k.key_words);
    }
    if dtype.is_float0() {
        return (1, 0);
    }
    let bits = dtype.bits() as usize;
    ((bits.div_ceil(8)).next_power_of_two().max(1), 1)
}

/// Bytes one stored element of a dtype takes ([`layout`]'s width times its words; none for
/// `float0`).
pub(crate) fn element_bytes(dtype: DType) -> usize {
    let (width, words) = layout(dtype);
    width * words
}

/// Calls `$body` with `$t` the Rust element type of `$dtype` (the dtypes with one), or
/// evaluates `$other`.
macro_rules! with_element {
    ($dtype:expr, $t:ident => $body:expr, $other:expr) => {
        match $dtype {
            DType::Bool => {
                type $t = bool;
                $body
            }
            DType::Int8 => {
                type $t = i8;
                $body
            }
            DType::Int16 => {
                type $t = i16;
                $body
            }
            DType::Int32 => {
                type $t = i32;
                $body
            }
            DType::Int64 => {
                type $t = i64;
                $body
            }
            DType::UInt8 => {
                type $t = u8;
                $body
            }
            DType::UInt16 => {
                type $t = u16;
                $body
            }
            DType::UInt32 => {
                type $t = u32;
                $body
            }
            DType::UInt64 => {
                type $t = u64;
                $body
            }
            DType::Float16 => {
                type $t = half::f16;
                $body
            }
            DType::BFloat16 => {
                type $t = half::bf16;
                $body
            }
            DType::Float32 => {
                type $t = f32;
                $body
            }
            DType::Float64 => {
                type $t = f64;
                $body
            }
            DType::Complex64 => {
                type $t = num_complex::Complex<f32>;
                $body
            }
            DType::Complex128 => {
                type $t = num_complex::Complex<f64>;
                $body
            }
            _ => $other,
        }
    };
}

pub(crate) use with_element;
