//! [`Array`]: an n-dimensional, row-major, immutable array of any dtype (JAX's semantics),
//! cheap to clone (the elements are shared), and its abstract value [`ShapedArray`] (shape,
//! dtype, weak type: what a primitive's shape rule computes and, later, what a tracer
//! stands for).
//!
//! ```
//! use dtype_lattice::DType;
//! use dtype_lattice_array::Array;
//!
//! let x = Array::from_vec(vec![1.0f32, 2.0, 3.0]);
//! assert_eq!((x.shape(), x.dtype(), x.weak_type()), (&[3usize][..], DType::Float32, false));
//! let m = Array::from_shape_vec(&[2, 2], vec![1i32, 2, 3, 4])?;
//! assert_eq!(m.to_vec::<i32>()?, [1, 2, 3, 4]);
//! let y = m.clone(); // shares the elements
//! assert_eq!(y.ndim(), 2);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

mod element;
mod scalar;
pub(crate) mod storage;

use std::fmt;
use std::sync::Arc;

use dtype_lattice::error::Reason;
use dtype_lattice::{DType, Error};

pub use element::{Element, layout};
pub(crate) use element::{element_bytes, with_element};
pub(crate) use scalar::{encode_value, python_scalar_array, scalar, scalar_array};
pub(crate) use storage::Storage;
pub use storage::Word;
use storage::sealed::Words;

/// The abstract value of an array: its shape, dtype and weak type (JAX's `ShapedArray`).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::ShapedArray;
/// let a = ShapedArray::new(&[2, 3], DType::Int8, false);
/// assert_eq!(a.to_string(), "i8[2,3]");
/// assert_eq!(ShapedArray::new(&[], DType::Float32, true).to_string(), "f32[]");
/// assert_eq!(a.size(), 6);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ShapedArray {
    shape: Arc<[usize]>,
    dtype: DType,
    weak_type: bool,
}

impl ShapedArray {
    /// An abstract value.
    pub fn new(shape: &[usize], dtype: DType, weak_type: bool) -> ShapedArray {
        ShapedArray {
            shape: shape.into(),
            dtype,
            weak_type,
        }
    }

    /// The same, with another dtype.
    #[must_use]
    pub fn with_dtype(&self, dtype: DType) -> ShapedArray {
        ShapedArray {
            dtype,
            ..self.clone()
        }
    }

    /// The same, with another weak type.
    #[must_use]
    pub fn with_weak_type(&self, weak_type: bool) -> ShapedArray {
        ShapedArray {
            weak_type,
            ..self.clone()
        }
    }

    /// The same shape (shared), with this dtype and weak type.
    pub(crate) fn retyped(&self, dtype: DType, weak_type: bool) -> ShapedArray {
        ShapedArray {
            shape: self.shape.clone(),
            dtype,
            weak_type,
        }
    }

    /// The dimensions, row-major.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Whether the array is weakly typed (JAX's `weak_type`).
    pub fn weak_type(&self) -> bool {
        self.weak_type
    }

    /// The number of elements (0 when a dimension is 0, whatever the others; saturating at
    /// `usize::MAX` for shapes no memory holds).
    pub fn size(&self) -> usize {
        if self.shape.contains(&0) {
            return 0;
        }
        checked_size(&self.shape).unwrap_or(usize::MAX)
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
}

impl fmt::Display for ShapedArray {
    /// As jaxprs print avals: `f32[2,3]`, `i32[]`, `bf16[4]`, `key<fry>[]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        write!(f, "{}[{}]", jaxpr_dtype_name(self.dtype), dims.join(","))
    }
}

impl ShapedArray {
    /// As JAX's messages print an aval with `str(aval)`: long dtype names, `~` before a weak
    /// type (`float32[3]`, `~int32[]`, `float0[2]`, `key<fry>[]`; jaxprs print the short
    /// names of [`Display`](fmt::Display)).
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// use dtype_lattice_array::ShapedArray;
    /// assert_eq!(ShapedArray::new(&[3], DType::Float32, true).long_name(), "~float32[3]");
    /// assert_eq!(ShapedArray::new(&[2, 1], DType::Float0, false).long_name(), "float0[2,1]");
    /// ```
    pub fn long_name(&self) -> String {
        self.long_text(true)
    }

    /// `long_name`, with or without the weak type's `~` (without: JAX's `str_short()`).
    pub(crate) fn long_text(&self, weak: bool) -> String {
        let dims: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        let tilde = if weak && self.weak_type { "~" } else { "" };
        format!("{tilde}{}[{}]", self.dtype.name(), dims.join(","))
    }
}

/// Storage for elements: their words, none for `float0`.
fn words_of<T: Element>(values: Vec<T>) -> Storage {
    if T::DTYPE.is_float0() {
        return Storage::W8(Default::default());
    }
    T::Word::into_storage(values.into_iter().map(T::to_word).collect())
}

/// Whether two shapes are equal, compared inline (shapes are short; a `memcmp` call costs
/// more than the comparison in the binds of small arrays).
#[inline]
pub(crate) fn same_shape(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The short dtype names of jaxprs (`f32`, `i8`, `u4`, `bf16`, `c64`, `bool`, `f8_e4m3fn`,
/// `float0`).
pub fn jaxpr_dtype_name(dtype: DType) -> String {
    if dtype.is_extended() || dtype == DType::Bool || dtype.is_float0() {
        return dtype.name().to_string();
    }
    let name = dtype.name();
    let short = [
        ("bfloat", "bf"),
        ("float", "f"),
        ("uint", "u"),
        ("int", "i"),
        ("complex", "c"),
    ];
    for (long, s) in short {
        if let Some(rest) = name.strip_prefix(long) {
            return format!("{s}{rest}");
        }
    }
    name.to_string()
}

/// An n-dimensional array: row-major, immutable, cheap to clone.
#[derive(Clone)]
pub struct Array {
    aval: ShapedArray,
    data: Data,
}

/// What an array holds: its elements, or (inside a transformation) a tracer standing for them.
#[derive(Clone)]
enum Data {
    Concrete(Storage),
    Traced(crate::core::Tracer),
}

/// The storage of a traced array: none (kernels only ever see concrete arrays: every trace
/// but evaluation intercepts a primitive before its implementation runs).
fn no_storage() -> &'static Storage {
    static EMPTY: std::sync::LazyLock<Storage> =
        std::sync::LazyLock::new(|| Storage::W8(Default::default()));
    &EMPTY
}

/// Unusable input to an array function.
pub(crate) fn invalid(argument: &str, reason: impl Into<String>) -> Error {
    Reason::InvalidArgument {
        argument: argument.to_string(),
        reason: reason.into(),
    }
    .into()
}

/// A shape as Python prints a tuple, for messages: `(3,)`, `(2, 3)`, `()`.
pub(crate) fn py_shape(shape: &[usize]) -> String {
    match shape {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The most elements an array held in memory may have: 2^28 (at most 2 GiB of key data, 4 GiB
/// of complex128). Larger shapes are refused where an array is made from a shape alone
/// (`jnp.zeros`, `arange`, the PRNG's outputs); JAX's own `NotImplementedError` beyond 2^64
/// elements comes first for the PRNG, and
/// [`Random::bits_writer`](crate::random::Random::bits_writer) streams any size to a file.
pub const MAX_ELEMENTS: usize = 1 << 28;

/// The number of elements of a shape, if it fits in memory's indices.
pub(crate) fn checked_size(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

impl Array {
    /// An array from its abstract value and words (the caller checked the length).
    pub(crate) fn from_parts(aval: ShapedArray, data: Storage) -> Array {
        debug_assert_eq!(data.len(), aval.size() * layout(aval.dtype).1);
        Array {
            aval,
            data: Data::Concrete(data),
        }
    }

    /// A traced array: `tracer` standing for an array of `aval` inside a transformation.
    pub(crate) fn from_tracer(aval: ShapedArray, tracer: crate::core::Tracer) -> Array {
        Array {
            aval,
            data: Data::Traced(tracer),
        }
    }

    /// The identity of the data (equal for clones of one array).
    pub(crate) fn identity(&self) -> usize {
        match &self.data {
            Data::Concrete(s) => s.bytes().as_ptr() as usize,
            Data::Traced(t) => std::sync::Arc::as_ptr(&t.payload).cast::<()>() as usize,
        }
    }

    /// The tracer, if this array is one (inside `jit`, `jvp`, `grad`, `vmap`...).
    pub(crate) fn tracer(&self) -> Option<&crate::core::Tracer> {
        match &self.data {
            Data::Traced(t) => Some(t),
            Data::Concrete(_) => None,
        }
    }

    /// Whether the array holds its elements (not a tracer of a transformation).
    ///
    /// ```
    /// use dtype_lattice_array::Array;
    /// assert!(Array::scalar(1.0f32).is_concrete());
    /// ```
    pub fn is_concrete(&self) -> bool {
        matches!(self.data, Data::Concrete(_))
    }

    /// This array, or the concrete value a tracer knows (a `jvp` tracer's primal outside
    /// `jit`), else JAX's `ConcretizationTypeError`.
    pub(crate) fn concrete(&self) -> Result<std::borrow::Cow<'_, Array>, Error> {
        match &self.data {
            Data::Concrete(_) => Ok(std::borrow::Cow::Borrowed(self)),
            Data::Traced(t) => t.concrete(self).map(std::borrow::Cow::Owned),
        }
    }

    /// A one-dimensional array of the elements.
    pub fn from_vec<T: Element>(values: Vec<T>) -> Array {
        let n = values.len();
        Array::from_parts(ShapedArray::new(&[n], T::DTYPE, false), words_of(values))
    }

    /// An array of the given shape from its elements in row-major order.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when the number of elements is not the shape's size.
    pub fn from_shape_vec<T: Element>(shape: &[usize], values: Vec<T>) -> Result<Array, Error> {
        if checked_size(shape) != Some(values.len()) {
            return Err(invalid(
                "shape",
                format!("{} elements do not fill shape {shape:?}", values.len()),
            ));
        }
        Ok(Array::from_parts(
            ShapedArray::new(shape, T::DTYPE, false),
            words_of(values),
        ))
    }

    /// A zero-dimensional array holding `value`.
    pub fn scalar<T: Element>(value: T) -> Array {
        Array::from_parts(
            ShapedArray::new(&[], T::DTYPE, false),
            words_of(vec![value]),
        )
    }

    /// A concrete 0-d array's element repeated to `shape` (a constant filled in without any
    /// primitive, for the evaluation of rules below the primitives).
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a traced or non-0-d array, or a shape too large for memory.
    pub(crate) fn repeated(&self, shape: &[usize]) -> Result<Array, Error> {
        let (Data::Concrete(storage), 0) = (&self.data, self.ndim()) else {
            return Err(invalid("value", "only a concrete 0-d array is repeated"));
        };
        let aval = ShapedArray::new(shape, self.dtype(), self.weak_type());
        let (width, words) = layout(self.dtype());
        let one = storage.bytes();
        if words == 0 || one.is_empty() {
            return Ok(Array::float0(aval));
        }
        let n = checked_size(shape)
            .filter(|&n| n <= MAX_ELEMENTS)
            .ok_or_else(|| invalid("shape", format!("{} is too large", py_shape(shape))))?;
        let data = Storage::overwritten::<()>(width, n * words, |out| {
            for chunk in out.chunks_exact_mut(one.len()) {
                chunk.copy_from_slice(one);
            }
            Ok(())
        })
        .map_err(|()| invalid("shape", "no memory"))?;
        Ok(Array::from_parts(aval, data))
    }

    /// An array of `aval` holding no bytes: a `float0` array (JAX's tangent of integers,
    /// which has one value, so its arrays need no storage).
    pub(crate) fn float0(aval: ShapedArray) -> Array {
        debug_assert!(aval.dtype().is_float0());
        Array::from_parts(aval, Storage::W8(Default::default()))
    }

    /// An array of `dtype` and `shape` from its elements' little-endian bytes, as NumPy stores
    /// them (one byte per element for the 1- to 8-bit types; key data as `u32` words).
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when the bytes are not exactly the shape's elements.
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<Array, Error> {
        let (width, words) = layout(dtype);
        let want = checked_size(shape)
            .and_then(|n| n.checked_mul(width * words))
            .filter(|&n| n == bytes.len());
        if want.is_none() {
            return Err(invalid(
                "bytes",
                format!(
                    "{} bytes are not the elements of a {dtype} array of shape {shape:?}",
                    bytes.len()
                ),
            ));
        }
        Ok(Array::from_parts(
            ShapedArray::new(shape, dtype, false),
            Storage::from_bytes(width, bytes),
        ))
    }

    /// The same elements, weakly typed or not (JAX's `weak_type`; Python scalars make weak
    /// arrays).
    #[must_use]
    pub fn with_weak_type(&self, weak_type: bool) -> Array {
        Array {
            aval: self.aval.with_weak_type(weak_type),
            data: self.data.clone(),
        }
    }

    /// The abstract value.
    pub fn aval(&self) -> &ShapedArray {
        &self.aval
    }

    /// The dimensions, row-major.
    pub fn shape(&self) -> &[usize] {
        self.aval.shape()
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.aval.dtype
    }

    /// Whether the array is weakly typed.
    pub fn weak_type(&self) -> bool {
        self.aval.weak_type
    }

    /// The number of elements.
    pub fn size(&self) -> usize {
        self.aval.size()
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.aval.ndim()
    }

    /// The elements' little-endian bytes, row-major (NumPy's buffer layout); none for a
    /// tracer (inside a transformation: [`Array::to_vec`] says why instead).
    pub fn as_bytes(&self) -> &[u8] {
        self.storage().bytes()
    }

    /// The elements as a typed slice, when `T` is the array's element type.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when the array's dtype is not `T`'s; JAX's `ConcretizationTypeError`
    /// for a tracer.
    pub fn as_slice<T: Element + bytemuck::Pod>(&self) -> Result<&[T], Error>
    where
        T::Word: bytemuck::Pod,
    {
        self.check_element::<T>()?;
        if let Data::Traced(t) = &self.data {
            return Err(t.concretization_error(self));
        }
        if T::DTYPE.is_float0() {
            // `()` (float0's element) is zero-sized: its vector never allocates, so leaking
            // it leaks nothing.
            return Ok(vec![T::from_word(Default::default()); self.size()].leak());
        }
        let words =
            T::Word::view(self.storage()).ok_or_else(|| invalid("dtype", "storage width"))?;
        Ok(bytemuck::cast_slice(words))
    }

    /// The elements, row-major, when `T` is the array's element type.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when the array's dtype is not `T`'s (convert first with `astype`);
    /// JAX's `ConcretizationTypeError` for a tracer without a concrete value (inside `jit`).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, Error> {
        self.check_element::<T>()?;
        let this = self.concrete()?;
        if T::DTYPE.is_float0() {
            return Ok(vec![T::from_word(Default::default()); self.size()]);
        }
        let words =
            T::Word::view(this.storage()).ok_or_else(|| invalid("dtype", "storage width"))?;
        Ok(words.iter().map(|&w| T::from_word(w)).collect())
    }

    fn check_element<T: Element>(&self) -> Result<(), Error> {
        if T::DTYPE == self.dtype() {
            Ok(())
        } else {
            Err(invalid(
                "dtype",
                format!(
                    "the array is {}, not {} (convert it with astype first)",
                    self.dtype(),
                    T::DTYPE
                ),
            ))
        }
    }

    /// Its aval and storage, if the array is concrete (not a tracer).
    pub(crate) fn into_parts(self) -> Option<(ShapedArray, Storage)> {
        match self.data {
            Data::Concrete(s) => Some((self.aval, s)),
            Data::Traced(_) => None,
        }
    }

    /// The storage.
    pub(crate) fn storage(&self) -> &Storage {
        match &self.data {
            Data::Concrete(s) => s,
            Data::Traced(_) => no_storage(),
        }
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Array")
            .field("aval", &self.aval)
            .field("bytes", &self.as_bytes().len())
            .finish()
    }
}
