//! JAX's counter-based, splittable PRNG with typed keys (`key<fry>`), bit for bit.
//!
//! JAX represents a PRNG key as a scalar of an *extended dtype* such as `key<fry>`, whose
//! implementation (here: [`KeyImpl`], one row of a table) says how many `uint32` words of key
//! data a key holds and how keys are seeded, split, folded and turned into bits. This module
//! reproduces JAX 0.10's default, `threefry2x32` with `jax_threefry_partitionable=True`:
//!
//! - `key(seed)`: the seed's two 32-bit halves (with x64 off, JAX first converts the seed to
//!   int32, so the high word is 0);
//! - output element `i` of any sampler, or split key `i`, is Threefry-2x32 of the key at the
//!   counter `(i >> 32, i & 0xffffffff)` ([`threefry2x32`]); 32-bit bits are the two output
//!   words XORed, 64-bit bits are `hi << 32 | lo`, 8- and 16-bit bits truncate the 32-bit ones;
//! - `fold_in(key, d)` is Threefry-2x32 of the key at the counter `(0, d)`;
//! - `uniform`, `normal`, `randint` and `bernoulli` turn those bits into values exactly as
//!   `jax.random` does (mantissa bits under an exponent of 1, XLA's `erf_inv` approximation,
//!   a double-width modulus, a comparison with a uniform sample).
//!
//! Every element depends only on its index, so any slice of an output can be computed on its
//! own ([`fill_bits32`]); large outputs are filled with SIMD (AVX-512 or AVX2, chosen at run time: [`Backend`]) on all cores.
//!
//! ```
//! use dtype_lattice_array::random::{Random, Shape};
//! use dtype_lattice::DType;
//!
//! let rng = Random::new();                          // x64 off, like JAX's default
//! let key = rng.key(42)?;                           // jax.random.key(42)
//! assert_eq!(key.data(), [0, 42]);                  // jax.random.key_data(key)
//! let keys = rng.split(&key, &[3])?;                // jax.random.split(key, 3)
//! assert_eq!((keys.shape(), keys.key_data().len()), (&[3usize][..], 6));
//! let sub = rng.fold_in(&key, 7)?;                  // jax.random.fold_in(key, 7)
//! let u = rng.uniform(&sub, &[4], DType::Float32, 0.0, 1.0)?;
//! assert_eq!(u.dtype(), DType::Float32);
//! let n = rng.normal(&keys.key(1)?, &Shape::from([2, 2]), DType::Float32)?;
//! assert_eq!(n.shape(), &[2, 2]);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

mod erfinv;
#[allow(unsafe_code)]
mod simd;
mod threefry;

use dtype_lattice::error::Exception;
use std::io::{self, Write};

use half::{bf16, f16};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use dtype_lattice::Error;
use dtype_lattice::error::Reason;
use dtype_lattice::key::{Algorithm, KeyImpl};
use dtype_lattice::{DType, Kind};

pub use simd::Backend;
pub use threefry::threefry2x32;

/// A shape: the dimensions of an array, row-major.
pub type Shape = Vec<usize>;

/// Unusable input to a random function (exit code 2 in the CLI).
fn invalid(argument: &str, reason: impl Into<String>) -> Error {
    Reason::InvalidArgument {
        argument: argument.to_string(),
        reason: reason.into(),
    }
    .into()
}

/// A single `key<fry>` key: two words of key data.
///
/// ```
/// use dtype_lattice_array::random::{Key, Random};
/// let key = Random::new().key(0).unwrap();
/// assert_eq!(key, Key::from_data([0, 0]));
/// assert_eq!(key.dtype().to_string(), "key<fry>");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    data: [u32; 2],
}

impl Key {
    /// `jax.random.wrap_key_data(data)` for a single threefry2x32 key.
    pub fn from_data(data: [u32; 2]) -> Key {
        Key { data }
    }

    /// `jax.random.key_data(key)`.
    pub fn data(&self) -> [u32; 2] {
        self.data
    }

    /// Its dtype, `key<fry>`.
    pub fn dtype(&self) -> DType {
        DType::KeyThreefry2x32
    }

    /// As a scalar [`KeyArray`].
    pub fn to_array(&self) -> KeyArray {
        KeyArray {
            dtype: self.dtype(),
            shape: Vec::new(),
            data: self.data.to_vec(),
        }
    }
}

/// An array of keys of one key dtype: JAX's typed key array. Its shape excludes the key data's
/// trailing dimension, as in JAX.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::random::KeyArray;
/// let keys = KeyArray::wrap_key_data(DType::KeyThreefry2x32, &[2, 2], vec![1, 2, 3, 4]).unwrap();
/// assert_eq!(keys.shape(), &[2]);
/// assert_eq!(keys.key(1).unwrap().data(), [3, 4]);
/// // Key data whose last dimension is not the implementation's key size is refused.
/// assert!(KeyArray::wrap_key_data(DType::KeyThreefry2x32, &[3], vec![1, 2, 3]).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyArray {
    dtype: DType,
    shape: Shape,
    data: Vec<u32>,
}

impl KeyArray {
    /// `jax.random.wrap_key_data(data, impl=...)`: `data_shape` is the key data's shape, whose
    /// last dimension must be the implementation's number of key words.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when `dtype` is not a key dtype or `data` does not hold `data_shape`'s
    /// values; JAX's `TypeError` when the last dimension is not the implementation's number of
    /// key words.
    pub fn wrap_key_data(
        dtype: DType,
        data_shape: &[usize],
        data: Vec<u32>,
    ) -> Result<KeyArray, Error> {
        let words = key_impl(dtype)?.key_words;
        let size = checked_size(data_shape).filter(|&n| n == data.len() as u128);
        if size.is_none() {
            return Err(invalid(
                "key",
                format!(
                    "key data of shape {} does not hold {} values",
                    py_shape(data_shape),
                    data.len()
                ),
            ));
        }
        if data_shape.last() != Some(&words) {
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "JAX encountered invalid PRNG key data: expected key_data.shape to end with \
                     ({words},); got shape={}",
                    py_shape(data_shape)
                ),
            ));
        }
        Ok(KeyArray {
            dtype,
            shape: data_shape[..data_shape.len() - 1].to_vec(),
            data,
        })
    }

    /// The key dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape (without the key data's dimension).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.data.len() / key_impl(self.dtype).map_or(1, |k| k.key_words)
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// `jax.random.key_data(keys)`, flattened (row-major, key words last).
    pub fn key_data(&self) -> &[u32] {
        &self.data
    }

    /// The key at flat index `i`, for sampling; implementations other than threefry2x32 are
    /// known as dtypes only and refuse.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when `i` is out of range or the keys are not threefry2x32 keys.
    pub fn key(&self, i: usize) -> Result<Key, Error> {
        implemented(self.dtype)?;
        match self.data.get(2 * i..2 * i + 2) {
            Some(&[a, b]) => Ok(Key::from_data([a, b])),
            _ => Err(invalid(
                "index",
                format!("index {i} is out of range for {} keys", self.len()),
            )),
        }
    }
}

impl Serialize for KeyArray {
    /// `{"dtype": "key<fry>", "shape": [...], "data": [u32, ...]}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("dtype", &self.dtype)?;
        m.serialize_entry("shape", &self.shape)?;
        m.serialize_entry("data", &self.data)?;
        m.end()
    }
}

/// The PRNG implementation of a key dtype; a numeric dtype is not one.
fn key_impl(dtype: DType) -> Result<&'static KeyImpl, Error> {
    dtype
        .key_impl()
        .ok_or_else(|| invalid("dtype", format!("{dtype} is not a PRNG key dtype")))
}

fn implemented(dtype: DType) -> Result<(), Error> {
    let k = key_impl(dtype)?;
    match k.algorithm {
        Algorithm::Threefry2x32 => Ok(()),
        _ => Err(invalid(
            "key",
            format!(
                "{dtype} ({}) is known as a dtype only; this crate implements the threefry2x32 \
                 PRNG",
                k.name
            ),
        )),
    }
}

/// The values of a sample, by dtype.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
#[non_exhaustive]
pub enum Values {
    Bool(Vec<bool>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

macro_rules! each_values {
    ($v:expr, $x:ident => $body:expr) => {
        match $v {
            Values::Bool($x) => $body,
            Values::U8($x) => $body,
            Values::U16($x) => $body,
            Values::U32($x) => $body,
            Values::U64($x) => $body,
            Values::I8($x) => $body,
            Values::I16($x) => $body,
            Values::I32($x) => $body,
            Values::I64($x) => $body,
            Values::F16($x) => $body,
            Values::BF16($x) => $body,
            Values::F32($x) => $body,
            Values::F64($x) => $body,
        }
    };
}

impl Values {
    /// The dtype of the values.
    pub fn dtype(&self) -> DType {
        match self {
            Values::Bool(_) => DType::Bool,
            Values::U8(_) => DType::UInt8,
            Values::U16(_) => DType::UInt16,
            Values::U32(_) => DType::UInt32,
            Values::U64(_) => DType::UInt64,
            Values::I8(_) => DType::Int8,
            Values::I16(_) => DType::Int16,
            Values::I32(_) => DType::Int32,
            Values::I64(_) => DType::Int64,
            Values::F16(_) => DType::Float16,
            Values::BF16(_) => DType::BFloat16,
            Values::F32(_) => DType::Float32,
            Values::F64(_) => DType::Float64,
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        each_values!(self, v => v.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i` as an `f64` (exact for every dtype but 64-bit integers beyond 2^53).
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        Some(match self {
            Values::Bool(v) => f64::from(u8::from(*v.get(i)?)),
            Values::U8(v) => f64::from(*v.get(i)?),
            Values::U16(v) => f64::from(*v.get(i)?),
            Values::U32(v) => f64::from(*v.get(i)?),
            Values::U64(v) => *v.get(i)? as f64,
            Values::I8(v) => f64::from(*v.get(i)?),
            Values::I16(v) => f64::from(*v.get(i)?),
            Values::I32(v) => f64::from(*v.get(i)?),
            Values::I64(v) => *v.get(i)? as f64,
            Values::F16(v) => v.get(i)?.to_f64(),
            Values::BF16(v) => v.get(i)?.to_f64(),
            Values::F32(v) => f64::from(*v.get(i)?),
            Values::F64(v) => *v.get(i)?,
        })
    }

    /// For float dtypes, the IEEE bit pattern of value `i`; `None` otherwise.
    pub fn float_bits(&self, i: usize) -> Option<u64> {
        Some(match self {
            Values::F16(v) => u64::from(v.get(i)?.to_bits()),
            Values::BF16(v) => u64::from(v.get(i)?.to_bits()),
            Values::F32(v) => u64::from(v.get(i)?.to_bits()),
            Values::F64(v) => v.get(i)?.to_bits(),
            _ => return None,
        })
    }

    /// Writes the values little-endian, as NumPy's `tofile` would (bool as one byte).
    ///
    /// # Errors
    ///
    /// Any I/O error of the writer.
    pub fn write_le(&self, w: &mut impl Write) -> io::Result<()> {
        const CHUNK: usize = 1 << 14;
        macro_rules! put {
            ($v:expr, $f:expr) => {{
                let mut buf = Vec::with_capacity(CHUNK * 8);
                for part in $v.chunks(CHUNK) {
                    buf.clear();
                    for x in part {
                        buf.extend_from_slice(&$f(x));
                    }
                    w.write_all(&buf)?;
                }
                Ok(())
            }};
        }
        match self {
            Values::Bool(v) => put!(v, |x: &bool| [u8::from(*x)]),
            Values::U8(v) => w.write_all(v),
            Values::U16(v) => put!(v, |x: &u16| x.to_le_bytes()),
            Values::U32(v) => put!(v, |x: &u32| x.to_le_bytes()),
            Values::U64(v) => put!(v, |x: &u64| x.to_le_bytes()),
            Values::I8(v) => put!(v, |x: &i8| x.to_le_bytes()),
            Values::I16(v) => put!(v, |x: &i16| x.to_le_bytes()),
            Values::I32(v) => put!(v, |x: &i32| x.to_le_bytes()),
            Values::I64(v) => put!(v, |x: &i64| x.to_le_bytes()),
            Values::F16(v) => put!(v, |x: &f16| x.to_le_bytes()),
            Values::BF16(v) => put!(v, |x: &bf16| x.to_le_bytes()),
            Values::F32(v) => put!(v, |x: &f32| x.to_le_bytes()),
            Values::F64(v) => put!(v, |x: &f64| x.to_le_bytes()),
        }
    }
}

/// A sampled array: its shape and values (row-major).
///
/// Serialises as the CLI prints it: `{"dtype", "shape", "values"}`, plus `"bits"` (the IEEE
/// bit patterns as unsigned integers) for float dtypes.
///
/// ```
/// use dtype_lattice_array::random::Random;
/// let rng = Random::new();
/// let s = rng.uniform(&rng.key(0).unwrap(), &[2], dtype_lattice::DType::Float16, 0.0, 1.0).unwrap();
/// let json = serde_json::to_value(&s).unwrap();
/// assert_eq!(json["dtype"], "float16");
/// assert_eq!(json["bits"].as_array().unwrap().len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    shape: Shape,
    values: Values,
}

impl Sample {
    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.values.dtype()
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The values, row-major.
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// Consumes the sample, giving its values.
    pub fn into_values(self) -> Values {
        self.values
    }
}

struct JsonValues<'a>(&'a Values);

impl Serialize for JsonValues<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            // Floats print as the f64 they convert to exactly, as Python's float(x) does.
            Values::F16(v) => s.collect_seq(v.iter().map(|x| x.to_f64())),
            Values::BF16(v) => s.collect_seq(v.iter().map(|x| x.to_f64())),
            Values::F32(v) => s.collect_seq(v.iter().map(|&x| f64::from(x))),
            Values::F64(v) => v.serialize(s),
            Values::Bool(v) => v.serialize(s),
            Values::U8(v) => v.serialize(s),
            Values::U16(v) => v.serialize(s),
            Values::U32(v) => v.serialize(s),
            Values::U64(v) => v.serialize(s),
            Values::I8(v) => v.serialize(s),
            Values::I16(v) => v.serialize(s),
            Values::I32(v) => v.serialize(s),
            Values::I64(v) => v.serialize(s),
        }
    }
}

struct JsonBits<'a>(&'a Values);

impl Serialize for JsonBits<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = self.0.len();
        s.collect_seq((0..n).filter_map(|i| self.0.float_bits(i)))
    }
}

impl Serialize for Sample {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let is_float = self.dtype().kind() == Kind::Float;
        let mut m = s.serialize_map(Some(if is_float { 4 } else { 3 }))?;
        m.serialize_entry("dtype", &self.dtype())?;
        m.serialize_entry("shape", &self.shape)?;
        m.serialize_entry("values", &JsonValues(&self.values))?;
        if is_float {
            m.serialize_entry("bits", &JsonBits(&self.values))?;
        }
        m.end()
    }
}

/// `(3, 4)` / `(3,)` / `()`: a shape as Python prints a tuple.
fn py_shape(shape: &[usize]) -> String {
    match shape {
        [] => "()".into(),
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

/// The number of elements, or `None` if it overflows 128 bits.
fn checked_size(shape: &[usize]) -> Option<u128> {
    shape
        .iter()
        .try_fold(1u128, |acc, &d| acc.checked_mul(d as u128))
}

/// The most elements an output held in memory may have (keys or values): 2^28, at most
/// 2 GiB of key data. Larger shapes are refused (JAX's own `NotImplementedError` beyond
/// 2^64 elements comes first); [`Random::bits_writer`] streams any size to a file.
pub const MAX_ELEMENTS: usize = 1 << 28;

/// The size of a sampler's output: JAX refuses more than 2^64 elements; beyond that, the
/// output must have at most [`MAX_ELEMENTS`] elements.
fn output_size(shape: &[usize]) -> Result<usize, Error> {
    let size = checked_size(shape).unwrap_or(u128::MAX);
    if size > 1u128 << 64 {
        return Err(Error::refused(
            Exception::NotImplementedError,
            "random bits array of size exceeding 2 ** 64",
        ));
    }
    usize::try_from(size)
        .ok()
        .filter(|&n| n <= MAX_ELEMENTS)
        .ok_or_else(|| {
            invalid(
                "shape",
                format!(
                    "shape {} has {size} elements; an array held in memory has at most 2^28 \
                     ({MAX_ELEMENTS})",
                    py_shape(shape)
                ),
            )
        })
}

/// A zero-filled vector of `n` elements, or a clear error when memory is short.
///
/// The reservation is tried first (so that a shape too large for memory is an error, not an
/// abort); the vector itself comes from `vec!`, which for zero-valued integers, floats and
/// bools asks the allocator for zeroed memory: fresh pages, first touched by the parallel fill
/// rather than zeroed here on one thread.
fn alloc<T: Clone + Default>(n: usize) -> Result<Vec<T>, Error> {
    let mut probe: Vec<T> = Vec::new();
    probe.try_reserve_exact(n).map_err(|_| {
        invalid(
            "shape",
            format!(
                "cannot allocate {n} values of {} bytes",
                std::mem::size_of::<T>()
            ),
        )
    })?;
    drop(probe);
    Ok(vec![T::default(); n])
}

/// Elements per thread below which a fill stays on the calling thread.
const PARALLEL_MIN: usize = 1 << 16;

/// Fills `out` by calling `f(start, chunk)` on contiguous chunks, `start` being the chunk's
/// first flat index, on up to `threads` threads (`std::thread::scope`).
fn par_fill<T: Send>(out: &mut [T], threads: usize, f: impl Fn(u64, &mut [T]) + Sync) {
    let n = out.len();
    let threads = threads.clamp(1, (n / PARALLEL_MIN).max(1));
    if threads == 1 {
        f(0, out);
        return;
    }
    let per = n.div_ceil(threads);
    std::thread::scope(|s| {
        let f = &f;
        for (t, chunk) in out.chunks_mut(per).enumerate() {
            s.spawn(move || f((t * per) as u64, chunk));
        }
    });
}

/// The 32-bit random bits of elements `start..start + out.len()` of any output drawn from
/// `key` (JAX's `random_bits(key, 32, shape)` at those flat indices): any slice computable on
/// its own, on one thread, with SIMD.
///
/// ```
/// use dtype_lattice_array::random::{fill_bits32, Random};
/// let rng = Random::new();
/// let key = rng.key(1).unwrap();
/// let all = rng.bits(&key, &[100], 32).unwrap();
/// let mut part = [0u32; 10];
/// fill_bits32(&key, 50, &mut part);
/// let dtype_lattice_array::random::Values::U32(all) = all.into_values() else { unreachable!() };
/// assert_eq!(&part[..], &all[50..60]);
/// ```
pub fn fill_bits32(key: &Key, start: u64, out: &mut [u32]) {
    simd::xor_range(key.data, start, out)
}

/// [`fill_bits32`] on one core with a chosen SIMD backend (a backend the CPU lacks falls back
/// to scalar), for benchmarks and for checking the backends against each other.
///
/// ```
/// use dtype_lattice_array::random::{Backend, Key, fill_bits32, fill_bits32_with};
/// let key = Key::from_data([0, 7]);
/// let (mut a, mut b) = ([0u32; 37], [0u32; 37]);
/// fill_bits32(&key, 5, &mut a);
/// fill_bits32_with(Backend::Scalar, &key, 5, &mut b);
/// assert_eq!(a, b);
/// ```
pub fn fill_bits32_with(backend: Backend, key: &Key, start: u64, out: &mut [u32]) {
    simd::xor_range_with(backend, key.data, start, out)
}

/// Scratch block for conversions from bits.
const BLOCK: usize = 2048;

/// Calls `sink(j, bits)` for the `n` elements from `start`, with `width`-bit random bits
/// (8, 16, 32 or 64) as a `u64`.
fn for_each_bits(
    key: [u32; 2],
    width: u32,
    start: u64,
    n: usize,
    mut sink: impl FnMut(usize, u64),
) {
    let mut a = [0u32; BLOCK];
    let mut b = [0u32; BLOCK];
    let mut done = 0;
    while done < n {
        let m = (n - done).min(BLOCK);
        let at = start + done as u64;
        if width == 64 {
            simd::pair_range(key, at, &mut a[..m], &mut b[..m]);
            for j in 0..m {
                sink(done + j, (u64::from(a[j]) << 32) | u64::from(b[j]));
            }
        } else {
            simd::xor_range(key, at, &mut a[..m]);
            let mask = if width == 32 {
                u32::MAX
            } else {
                (1u32 << width) - 1
            };
            for (j, &x) in a[..m].iter().enumerate() {
                sink(done + j, u64::from(x & mask));
            }
        }
        done += m;
    }
}

/// A float format `uniform` can produce, with its arithmetic at the format's precision.
trait UniformFloat: Copy + Send + Sync + Default + PartialOrd {
    /// Total bits and explicit mantissa bits.
    const NBITS: u32;
    const NMANT: u32;
    fn from_bits_u64(b: u64) -> Self;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    fn one() -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn add(self, o: Self) -> Self;
    /// `self * a + b` as XLA's CPU backend computes `x * a + b` (fused for float32/64).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// `nextafter(-1, 0)`.
    fn next_above_minus_one() -> Self;
    fn wrap(v: Vec<Self>) -> Values;
}

macro_rules! small_float {
    ($t:ty, $nbits:expr, $nmant:expr, $variant:ident) => {
        impl UniformFloat for $t {
            const NBITS: u32 = $nbits;
            const NMANT: u32 = $nmant;
            fn from_bits_u64(b: u64) -> Self {
                <$t>::from_bits(b as u16)
            }
            fn from_f64(x: f64) -> Self {
                <$t>::from_f64(x)
            }
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
            fn one() -> Self {
                <$t>::ONE
            }
            // XLA computes 16-bit float arithmetic in f32 and rounds each result.
            fn sub(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() - o.to_f32())
            }
            fn mul(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() * o.to_f32())
            }
            fn add(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() + o.to_f32())
            }
            fn mul_add(self, a: Self, b: Self) -> Self {
                UniformFloat::add(UniformFloat::mul(self, a), b)
            }
            fn next_above_minus_one() -> Self {
                <$t>::from_bits(<$t>::NEG_ONE.to_bits() - 1)
            }
            fn wrap(v: Vec<Self>) -> Values {
                Values::$variant(v)
            }
        }
    };
}

small_float!(f16, 16, 10, F16);
small_float!(bf16, 16, 7, BF16);

macro_rules! ieee_float {
    ($t:ty, $nbits:expr, $nmant:expr, $variant:ident, $ut:ty) => {
        impl UniformFloat for $t {
            const NBITS: u32 = $nbits;
            const NMANT: u32 = $nmant;
            fn from_bits_u64(b: u64) -> Self {
                <$t>::from_bits(b as $ut)
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn one() -> Self {
                1.0
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
            fn next_above_minus_one() -> Self {
                <$t>::from_bits((-1.0 as $t).to_bits() - 1)
            }
            fn wrap(v: Vec<Self>) -> Values {
                Values::$variant(v)
            }
        }
    };
}

ieee_float!(f32, 32, 23, F32, u32);
ieee_float!(f64, 64, 52, F64, u64);

/// `lax.max(minval, x)`: XLA's max propagates NaN.
fn xla_max<T: UniformFloat>(a: T, b: T) -> T {
    if a.to_f64().is_nan() || b.to_f64().is_nan() {
        T::from_f64(f64::NAN)
    } else if b > a {
        b
    } else {
        a
    }
}

/// JAX's `_uniform` of one element from its random bits.
#[inline(always)]
fn uniform_of_bits<T: UniformFloat>(bits: u64, rng_bits: u32, minval: T, span: T) -> T {
    let one = T::one();
    let f = T::from_bits_u64((bits >> (rng_bits - T::NMANT)) | one_pattern::<T>()).sub(one);
    xla_max(minval, f.mul_add(span, minval))
}

/// The bit pattern of 1.0 in `T`: the exponent bias under a zero mantissa.
#[inline(always)]
fn one_pattern<T: UniformFloat>() -> u64 {
    let exponent_bits = T::NBITS - T::NMANT - 1;
    ((1u64 << (exponent_bits - 1)) - 1) << T::NMANT
}

/// Configuration of the PRNG functions: JAX's `jax_enable_x64` and the number of threads for
/// large outputs. Builder-style, like [`dtype_lattice::Rules`].
///
/// ```
/// use dtype_lattice_array::random::Random;
/// let rng = Random::new().x64(true).threads(1);
/// assert_eq!(rng.key(-1).unwrap().data(), [u32::MAX, u32::MAX]);
/// assert_eq!(Random::new().key(-1).unwrap().data(), [0, u32::MAX]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Random {
    x64: bool,
    threads: usize,
}

impl Default for Random {
    fn default() -> Self {
        Random::new()
    }
}

impl Random {
    /// x64 off (JAX's default), as many threads as the machine has.
    pub fn new() -> Random {
        Random {
            x64: false,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }

    /// `jax_enable_x64`: 64-bit seeds, dtypes and bits.
    #[must_use]
    pub fn x64(mut self, x64: bool) -> Random {
        self.x64 = x64;
        self
    }

    /// Threads used to fill large outputs (at least 1).
    #[must_use]
    pub fn threads(mut self, threads: usize) -> Random {
        self.threads = threads.max(1);
        self
    }

    /// Whether x64 is on.
    pub fn is_x64(&self) -> bool {
        self.x64
    }

    /// The number of threads for large outputs.
    pub fn thread_count(&self) -> usize {
        self.threads
    }

    /// A dtype as JAX canonicalises a requested dtype: with x64 off, 64-bit types become
    /// their 32-bit counterparts.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// use dtype_lattice_array::random::Random;
    /// assert_eq!(Random::new().canonical(DType::Float64), DType::Float32);
    /// assert_eq!(Random::new().x64(true).canonical(DType::UInt64), DType::UInt64);
    /// ```
    pub fn canonical(&self, dtype: DType) -> DType {
        dtype.canonicalize(self.x64)
    }

    /// JAX's default float dtype (float32, or float64 with x64).
    pub fn default_float(&self) -> DType {
        if self.x64 {
            DType::Float64
        } else {
            DType::Float32
        }
    }

    /// JAX's default integer dtype (int32, or int64 with x64).
    pub fn default_int(&self) -> DType {
        if self.x64 { DType::Int64 } else { DType::Int32 }
    }

    /// `jax.random.key(seed)`: a Python int seed becomes an int64 (beyond it: JAX's
    /// `OverflowError`); with x64 off it is then converted to int32, so only its low word
    /// survives.
    ///
    /// # Errors
    ///
    /// Python's `OverflowError` for a seed outside the 64-bit signed range, as `jax.random.key`
    /// raises it.
    ///
    /// ```
    /// use dtype_lattice_array::random::Random;
    /// assert_eq!(Random::new().x64(true).key(1 << 32).unwrap().data(), [1, 0]);
    /// assert_eq!(Random::new().key(1 << 32).unwrap().data(), [0, 0]);
    /// assert_eq!(Random::new().key(1 << 64).unwrap_err().exception(), Some(dtype_lattice::error::Exception::OverflowError));
    /// ```
    pub fn key(&self, seed: i128) -> Result<Key, Error> {
        let seed = i64::try_from(seed).map_err(|_| {
            Error::refused(
                Exception::OverflowError,
                "Python int too large to convert to C long",
            )
        })?;
        let hi = if self.x64 { (seed >> 32) as u32 } else { 0 };
        Ok(Key::from_data([hi, seed as u32]))
    }

    /// `jax.random.split(key, shape)`: key `i` (row-major) is Threefry-2x32 of `key` at the
    /// counter of `i`.
    ///
    /// # Errors
    ///
    /// JAX's `NotImplementedError` for 2^32 or more keys; `InvalidArgument` for a shape too
    /// large to hold.
    ///
    /// ```
    /// use dtype_lattice_array::random::{Key, Random};
    /// let keys = Random::new().split(&Key::from_data([0, 0]), &[2]).unwrap();
    /// assert_eq!(keys.key(0).unwrap().data(), [0x6b20_0159, 0x99ba_4efe]);
    /// ```
    pub fn split(&self, key: &Key, shape: &[usize]) -> Result<KeyArray, Error> {
        let n = output_size(shape)?;
        let mut data = alloc::<u32>(2 * n)?;
        // In chunks, so that the halves need no memory beside the output.
        const CHUNK: usize = 1 << 14;
        let (mut hi, mut lo) = (vec![0u32; CHUNK.min(n)], vec![0u32; CHUNK.min(n)]);
        for (c, out) in data.chunks_mut(2 * CHUNK).enumerate() {
            let m = out.len() / 2;
            simd::pair_range(key.data, (c * CHUNK) as u64, &mut hi[..m], &mut lo[..m]);
            for (i, d) in out.chunks_exact_mut(2).enumerate() {
                d[0] = hi[i];
                d[1] = lo[i];
            }
        }
        Ok(KeyArray {
            dtype: key.dtype(),
            shape: shape.to_vec(),
            data,
        })
    }

    /// `jax.random.fold_in(key, data)`: `data` must fit `uint32` (else JAX's
    /// `OverflowError`).
    ///
    /// # Errors
    ///
    /// Python's `OverflowError` for data outside what JAX converts (the 64-bit range with x64,
    /// 32-bit without).
    ///
    /// ```
    /// use dtype_lattice_array::random::Random;
    /// let rng = Random::new();
    /// assert!(rng.fold_in(&rng.key(0).unwrap(), -1).is_err());
    /// ```
    pub fn fold_in(&self, key: &Key, data: i128) -> Result<Key, Error> {
        let d = u32::try_from(data).map_err(|_| {
            Error::refused(
                Exception::OverflowError,
                format!("Python integer {data} out of bounds for uint32"),
            )
        })?;
        Ok(Key::from_data(threefry2x32(key.data, [0, d])))
    }

    /// `jax.random.bits(key, shape, uintW)` for `width` 8, 16, 32 or 64; with x64 off JAX
    /// canonicalises uint64 to uint32, and so does this.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a bit width other than 8, 16, 32 or 64 or a shape too large to
    /// hold; JAX's `NotImplementedError` for 2^32 or more elements.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// use dtype_lattice_array::random::Random;
    /// let rng = Random::new();
    /// let b = rng.bits(&rng.key(0).unwrap(), &[3], 64).unwrap();
    /// assert_eq!(b.dtype(), DType::UInt32);
    /// assert!(rng.bits(&rng.key(0).unwrap(), &[3], 12).is_err());
    /// ```
    pub fn bits(&self, key: &Key, shape: &[usize], width: u32) -> Result<Sample, Error> {
        let width = self.bits_width(width)?;
        let n = output_size(shape)?;
        let k = key.data;
        let values = match width {
            8 => {
                let mut v = alloc::<u8>(n)?;
                par_fill(&mut v, self.threads, |s, c| {
                    for_each_bits(k, 8, s, c.len(), |j, b| c[j] = b as u8)
                });
                Values::U8(v)
            }
            16 => {
                let mut v = alloc::<u16>(n)?;
                par_fill(&mut v, self.threads, |s, c| {
                    for_each_bits(k, 16, s, c.len(), |j, b| c[j] = b as u16)
                });
                Values::U16(v)
            }
            32 => {
                let mut v = alloc::<u32>(n)?;
                par_fill(&mut v, self.threads, |s, c| simd::xor_range(k, s, c));
                Values::U32(v)
            }
            _ => {
                let mut v = alloc::<u64>(n)?;
                par_fill(&mut v, self.threads, |s, c| {
                    for_each_bits(k, 64, s, c.len(), |j, b| c[j] = b)
                });
                Values::U64(v)
            }
        };
        Ok(Sample {
            shape: shape.to_vec(),
            values,
        })
    }

    /// `jax.random.bits(key, ..., uint32)` at flat indices `start..start + out.len()`, into a
    /// caller's buffer, on all threads: what [`Random::bits`] computes, without allocating.
    ///
    /// ```
    /// use dtype_lattice_array::random::{Random, Values};
    /// let rng = Random::new();
    /// let key = rng.key(7).unwrap();
    /// let mut buf = vec![0u32; 1000];
    /// rng.bits_into(&key, 0, &mut buf);
    /// assert_eq!(Values::U32(buf), rng.bits(&key, &[1000], 32).unwrap().into_values());
    /// ```
    pub fn bits_into(&self, key: &Key, start: u64, out: &mut [u32]) {
        let k = key.data;
        par_fill(out, self.threads, |s, c| simd::xor_range(k, start + s, c));
    }

    /// The width `bits` uses for a requested width: 8, 16, 32 or 64, and 64 → 32 with x64 off.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a width other than 8, 16, 32 or 64.
    pub fn bits_width(&self, width: u32) -> Result<u32, Error> {
        match width {
            8 | 16 | 32 => Ok(width),
            64 => Ok(if self.x64 { 64 } else { 32 }),
            _ => Err(invalid(
                "width",
                format!("{width} is not a bit width of jax.random.bits (8, 16, 32 or 64)"),
            )),
        }
    }

    /// `jax.random.uniform(key, shape, dtype, minval, maxval)` for float16, bfloat16, float32
    /// and float64 (float32 with x64 off). `minval` and `maxval` are converted to the dtype
    /// first; `minval >= maxval` gives `minval` everywhere, as in JAX.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a dtype that is not a float dtype `jax.random.uniform` supports
    /// here or a shape too large to hold; JAX's `NotImplementedError` for 2^32 or more
    /// elements.
    pub fn uniform(
        &self,
        key: &Key,
        shape: &[usize],
        dtype: DType,
        minval: f64,
        maxval: f64,
    ) -> Result<Sample, Error> {
        let dtype = self.float_dtype("uniform", "a float dtype", dtype)?;
        let n = output_size(shape)?;
        let values = match dtype {
            DType::Float16 => self.uniform_as::<f16>(key, n, minval, maxval)?,
            DType::BFloat16 => self.uniform_as::<bf16>(key, n, minval, maxval)?,
            DType::Float32 => self.uniform_as::<f32>(key, n, minval, maxval)?,
            _ => self.uniform_as::<f64>(key, n, minval, maxval)?,
        };
        Ok(Sample {
            shape: shape.to_vec(),
            values,
        })
    }

    fn float_dtype(&self, fun: &str, what: &str, dtype: DType) -> Result<DType, Error> {
        let dtype = self.canonical(dtype);
        match dtype.kind() {
            Kind::Float => {}
            Kind::Complex if fun == "normal" => {
                return Err(invalid(
                    "dtype",
                    format!("complex dtypes ({dtype}) are not supported by normal here"),
                ));
            }
            _ => {
                return Err(Error::refused(
                    Exception::ValueError,
                    format!("dtype argument to `{fun}` must be {what}, got {dtype}"),
                ));
            }
        }
        if !matches!(
            dtype,
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64
        ) {
            return Err(invalid(
                "dtype",
                format!("{fun} supports float16, bfloat16, float32 and float64; got {dtype}"),
            ));
        }
        Ok(dtype)
    }

    fn uniform_vec<T: UniformFloat>(
        &self,
        key: &Key,
        n: usize,
        minval: T,
        maxval: T,
    ) -> Result<Vec<T>, Error> {
        let rng_bits = if T::NMANT < 8 { 8 } else { T::NBITS };
        let span = maxval.sub(minval);
        let mut v = alloc::<T>(n)?;
        let k = key.data;
        par_fill(&mut v, self.threads, |s, c| {
            for_each_bits(k, rng_bits, s, c.len(), |j, b| {
                c[j] = uniform_of_bits(b, rng_bits, minval, span)
            })
        });
        Ok(v)
    }

    fn uniform_as<T: UniformFloat>(
        &self,
        key: &Key,
        n: usize,
        minval: f64,
        maxval: f64,
    ) -> Result<Values, Error> {
        let v = self.uniform_vec(key, n, T::from_f64(minval), T::from_f64(maxval))?;
        Ok(T::wrap(v))
    }

    /// `jax.random.normal(key, shape, dtype)`: `sqrt(2) * erf_inv(u)` of a uniform sample on
    /// `(-1, 1)`, with XLA's `erf_inv` approximation for float32 and the 16-bit floats (computed
    /// in float32, as XLA does) and an accurate `erf_inv` for float64.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a dtype that is not a float dtype `jax.random.normal` supports
    /// here, or a key of an implementation other than threefry2x32; JAX's `NotImplementedError`
    /// for a shape of 2^32 or more elements (or one larger than memory allows).
    pub fn normal(&self, key: &Key, shape: &[usize], dtype: DType) -> Result<Sample, Error> {
        let dtype = self.float_dtype("normal", "a float or complex dtype", dtype)?;
        let n = output_size(shape)?;
        let threads = self.threads;
        macro_rules! small {
            ($t:ty) => {{
                let mut v =
                    self.uniform_vec::<$t>(key, n, <$t>::next_above_minus_one(), <$t>::ONE)?;
                let sqrt2 = <$t>::from_f64(std::f64::consts::SQRT_2);
                par_fill(&mut v, threads, |_, c| {
                    for x in c {
                        let e = <$t>::from_f32(erfinv::erf_inv_f32(x.to_f32()));
                        *x = UniformFloat::mul(sqrt2, e);
                    }
                });
                <$t as UniformFloat>::wrap(v)
            }};
        }
        let values = match dtype {
            DType::Float16 => small!(f16),
            DType::BFloat16 => small!(bf16),
            DType::Float32 => {
                let mut v = self.uniform_vec::<f32>(key, n, f32::next_above_minus_one(), 1.0)?;
                let sqrt2 = std::f32::consts::SQRT_2;
                par_fill(&mut v, threads, |_, c| {
                    for x in c {
                        *x = sqrt2 * erfinv::erf_inv_f32(*x);
                    }
                });
                Values::F32(v)
            }
            _ => {
                let mut v = self.uniform_vec::<f64>(key, n, f64::next_above_minus_one(), 1.0)?;
                let sqrt2 = std::f64::consts::SQRT_2;
                par_fill(&mut v, threads, |_, c| {
                    for x in c {
                        *x = sqrt2 * erfinv::erf_inv_f64(*x);
                    }
                });
                Values::F64(v)
            }
        };
        Ok(Sample {
            shape: shape.to_vec(),
            values,
        })
    }

    /// `jax.random.bernoulli(key, p, shape)` with a Python float `p`: `uniform < p` in JAX's
    /// default float dtype. Like JAX, `p` outside `[0, 1]` gives all `True` (above) or all
    /// `False` (below), and NaN all `False`.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a shape too large to hold; JAX's `NotImplementedError` for 2^32 or
    /// more elements.
    pub fn bernoulli(&self, key: &Key, shape: &[usize], p: f64) -> Result<Sample, Error> {
        let n = output_size(shape)?;
        let k = key.data;
        let mut out = alloc::<bool>(n)?;
        if self.x64 {
            let span = 1.0f64;
            par_fill(&mut out, self.threads, |s, c| {
                for_each_bits(k, 64, s, c.len(), |j, b| {
                    c[j] = uniform_of_bits(b, 64, 0.0f64, span) < p
                })
            });
        } else {
            let p = p as f32;
            par_fill(&mut out, self.threads, |s, c| {
                for_each_bits(k, 32, s, c.len(), |j, b| {
                    c[j] = uniform_of_bits(b, 32, 0.0f32, 1.0f32) < p
                })
            });
        }
        Ok(Sample {
            shape: shape.to_vec(),
            values: Values::Bool(out),
        })
    }

    /// `jax.random.randint(key, shape, minval, maxval, dtype)` with Python int bounds: JAX's
    /// double-width modulus, its clipping of the bounds to the dtype, its sampling of 8- and
    /// 16-bit dtypes at 32 bits, and its `OverflowError`s for bounds outside the default
    /// integer type. `minval >= maxval` gives `minval` everywhere, as in JAX.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a dtype that is not an integer dtype, or a shape too large to
    /// hold; JAX's `NotImplementedError` for 2^32 or more elements.
    ///
    /// ```
    /// use dtype_lattice::DType;
    /// use dtype_lattice_array::random::Random;
    /// let rng = Random::new();
    /// let s = rng.randint(&rng.key(0).unwrap(), &[1000], -3, 4, DType::Int8).unwrap();
    /// assert!((0..1000).all(|i| (-3.0..4.0).contains(&s.values().get_f64(i).unwrap())));
    /// ```
    pub fn randint(
        &self,
        key: &Key,
        shape: &[usize],
        minval: i128,
        maxval: i128,
        dtype: DType,
    ) -> Result<Sample, Error> {
        let dtype = self.canonical(dtype);
        if !dtype.kind().is_integer() {
            return Err(Error::refused(
                Exception::TypeError,
                format!("randint only accepts integer dtypes, got {dtype}"),
            ));
        }
        if dtype.bits() < 8 {
            return Err(Error::refused(
                Exception::TypeError,
                format!("randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}"),
            ));
        }
        let (dmin, dmax) = dtype.int_range().expect("integer dtypes have a range");
        // The Python ints become arrays of the default int type D.
        let (d_min, d_max) = if self.x64 {
            (i64::MIN as i128, i64::MAX as i128)
        } else {
            (i32::MIN as i128, i32::MAX as i128)
        };
        let (sample_dtype, minval, maxval) = if dtype.bits() < 32 {
            // Sampled in int32: jnp.asarray(v).astype('int32').clip(min, max [+ 1]).
            let as_d = |v: i128| -> Result<i128, Error> {
                if v < d_min || v > d_max {
                    Err(Error::refused(
                        Exception::OverflowError,
                        format!(
                            "Python int {v} too large to convert to int{}",
                            if self.x64 { 64 } else { 32 }
                        ),
                    ))
                } else {
                    Ok(i128::from(v as i32))
                }
            };
            let lo = as_d(minval)?.clamp(dmin, dmax);
            let hi = as_d(maxval)?.clamp(dmin, dmax + 1);
            (DType::Int32, lo, hi)
        } else {
            for (name, v) in [("minval", minval), ("maxval", maxval)] {
                if v < d_min || v > d_max {
                    return Err(Error::refused(
                        Exception::OverflowError,
                        format!(
                            "An overflow was encountered while parsing an argument to a jitted \
                             computation, whose argument path is {name}. Got <class 'int'> with \
                             value {v}"
                        ),
                    ));
                }
            }
            (dtype, minval, maxval)
        };
        let n = output_size(shape)?;
        let offsets = self.randint_offsets(key, n, sample_dtype, (d_min, d_max), minval, maxval)?;
        let values = convert_ints(offsets, dtype)?;
        Ok(Sample {
            shape: shape.to_vec(),
            values,
        })
    }

    /// JAX's `_randint` in `dtype` (8 to 64 bits) for bounds already in the default int type
    /// with range `d`: the results as i128.
    fn randint_offsets(
        &self,
        key: &Key,
        n: usize,
        dtype: DType,
        d: (i128, i128),
        minval: i128,
        maxval: i128,
    ) -> Result<Vec<i128>, Error> {
        let (tmin, tmax) = dtype.int_range().expect("integer dtype");
        let nbits = dtype.bits();
        let mask: u128 = if nbits == 64 {
            u64::MAX as u128
        } else {
            (1u128 << nbits) - 1
        };
        let out_of_range = maxval > tmax.min(d.1);
        let clip = |v: i128| v.clamp(tmin.max(d.0), tmax.min(d.1));
        let (lo, hi) = (clip(minval), clip(maxval));
        // Unsigned arithmetic of nbits, with XLA's x % 0 == x.
        let urem = |a: u128, b: u128| if b == 0 { a } else { a % b };
        let mut span = ((hi - lo) as u128) & mask;
        if hi <= lo {
            span = 1;
        }
        if out_of_range && hi > lo {
            span = (span + 1) & mask;
        }
        let multiplier = urem(1u128 << (nbits / 2), span);
        let multiplier = urem((multiplier * multiplier) & mask, span);
        let keys = self.split(key, &[2])?;
        let (k1, k2) = (keys.key(0)?, keys.key(1)?);
        let width = nbits.max(8);
        let higher = self.bits(&k1, &[n], width)?.into_values();
        let lower = self.bits(&k2, &[n], width)?.into_values();
        let bits_at = |v: &Values, i: usize| -> u128 {
            match v {
                Values::U8(x) => u128::from(x[i]),
                Values::U16(x) => u128::from(x[i]),
                Values::U32(x) => u128::from(x[i]),
                Values::U64(x) => u128::from(x[i]),
                _ => 0,
            }
        };
        let mut out = alloc::<i128>(n)?;
        for (i, o) in out.iter_mut().enumerate() {
            let (h, l) = (bits_at(&higher, i), bits_at(&lower, i));
            let off = (urem(h, span) * multiplier + urem(l, span)) & mask;
            let off = urem(off, span);
            // minval + convert(offset, dtype), wrapping in dtype.
            let sum = (lo as u128).wrapping_add(off) & mask;
            *o = to_signed(sum, nbits, tmin < 0);
        }
        Ok(out)
    }
}

/// Streams `jax.random.bits(key, shape, uintW)` to a file as raw little-endian values (NumPy's
/// `tofile` layout) in chunks of 2^15 values computed on all threads, never holding the whole
/// array: made by [`Random::bits_writer`].
///
/// ```
/// use dtype_lattice_array::random::Random;
/// let rng = Random::new();
/// let key = rng.key(0).unwrap();
/// let path = std::env::temp_dir().join(format!("bits-doctest-{}", std::process::id()));
/// let file = std::fs::File::create(&path).unwrap();
/// let bytes = rng.bits_writer(&key, &[10], 16).unwrap().write_to(&file).unwrap();
/// assert_eq!(bytes, 20);
/// let raw = std::fs::read(&path).unwrap();
/// let dtype_lattice_array::random::Values::U16(v) = rng.bits(&key, &[10], 16).unwrap().into_values()
/// else { unreachable!() };
/// assert_eq!(raw[..2], v[0].to_le_bytes());
/// # std::fs::remove_file(&path).unwrap();
/// ```
#[derive(Clone, Copy, Debug)]
pub struct BitsWriter {
    key: Key,
    len: u64,
    width: u32,
    threads: usize,
}

/// Values per chunk of [`BitsWriter`]: small enough that a thread's buffer stays in its L2
/// cache between the SIMD fill and the kernel's copy into the page cache (measured: 2^14 to
/// 2^16 values write 2^27 uint32 in half the time of 2^18 or more).
const WRITE_CHUNK: u64 = 1 << 15;

impl BitsWriter {
    /// Number of values.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The values' dtype (`uint8` … `uint64`).
    pub fn dtype(&self) -> DType {
        match self.width {
            8 => DType::UInt8,
            16 => DType::UInt16,
            32 => DType::UInt32,
            _ => DType::UInt64,
        }
    }

    fn fill(&self, start: u64, buf: &mut [u8]) {
        let k = self.key.data;
        match self.width {
            32 => simd::xor_range_le(k, start, buf),
            w => {
                let b = (w / 8) as usize;
                for_each_bits(k, w, start, buf.len() / b, |j, v| {
                    buf[j * b..(j + 1) * b].copy_from_slice(&v.to_le_bytes()[..b])
                })
            }
        }
    }

    /// Writes the values at the start of `file` (which should be empty); returns the number
    /// of bytes written.
    ///
    /// # Errors
    ///
    /// Any I/O error of writing the file.
    pub fn write_to(&self, file: &std::fs::File) -> io::Result<u64> {
        let per = u64::from(self.width / 8);
        let chunks = self.len.div_ceil(WRITE_CHUNK);
        let chunk_bytes = |c: u64| (WRITE_CHUNK.min(self.len - c * WRITE_CHUNK) * per) as usize;
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            use std::sync::atomic::{AtomicU64, Ordering};
            let next = AtomicU64::new(0);
            let threads = self.threads.clamp(1, chunks.max(1) as usize);
            let results: Vec<io::Result<()>> = std::thread::scope(|s| {
                let workers: Vec<_> = (0..threads)
                    .map(|_| {
                        s.spawn(|| -> io::Result<()> {
                            let mut buf = vec![0u8; (WRITE_CHUNK * per) as usize];
                            loop {
                                let c = next.fetch_add(1, Ordering::Relaxed);
                                if c >= chunks {
                                    return Ok(());
                                }
                                let part = &mut buf[..chunk_bytes(c)];
                                self.fill(c * WRITE_CHUNK, part);
                                file.write_all_at(part, c * WRITE_CHUNK * per)?;
                            }
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .map(|w| {
                        w.join()
                            .unwrap_or_else(|_| Err(io::Error::other("writer thread panicked")))
                    })
                    .collect()
            });
            results.into_iter().collect::<io::Result<()>>()?;
        }
        #[cfg(not(unix))]
        {
            self.write_sequential(&mut &*file)?;
        }
        Ok(self.len * per)
    }

    /// Writes the values in order to `w` (a pipe, a terminal: anything that cannot seek), one
    /// chunk at a time on the calling thread; returns the number of bytes written.
    ///
    /// # Errors
    ///
    /// Any I/O error of the writer.
    pub fn write_sequential(&self, w: &mut impl io::Write) -> io::Result<u64> {
        let per = u64::from(self.width / 8);
        let chunks = self.len.div_ceil(WRITE_CHUNK);
        let mut buf = vec![0u8; (WRITE_CHUNK.min(self.len) * per) as usize];
        for c in 0..chunks {
            let part = &mut buf[..(WRITE_CHUNK.min(self.len - c * WRITE_CHUNK) * per) as usize];
            self.fill(c * WRITE_CHUNK, part);
            w.write_all(part)?;
        }
        w.flush()?;
        Ok(self.len * per)
    }
}

impl Random {
    /// A [`BitsWriter`] for `jax.random.bits(key, shape, uintW)`: checks the width and shape as
    /// [`Random::bits`] does, but needs no memory for the output.
    ///
    /// # Errors
    ///
    /// As [`Random::bits`]: a bit width other than 8, 16, 32 or 64, or a shape of 2^32 or more
    /// elements.
    pub fn bits_writer(&self, key: &Key, shape: &[usize], width: u32) -> Result<BitsWriter, Error> {
        let width = self.bits_width(width)?;
        let size = checked_size(shape).unwrap_or(u128::MAX);
        if size > 1u128 << 64 {
            return Err(Error::refused(
                Exception::NotImplementedError,
                "random bits array of size exceeding 2 ** 64",
            ));
        }
        let len = u64::try_from(size)
            .ok()
            .filter(|&n| n <= u64::MAX / 8)
            .ok_or_else(|| {
                invalid(
                    "shape",
                    format!("shape {} is too large to write", py_shape(shape)),
                )
            })?;
        Ok(BitsWriter {
            key: *key,
            len,
            width,
            threads: self.threads,
        })
    }
}

/// An nbits-bit pattern as a signed or unsigned integer.
fn to_signed(bits: u128, nbits: u32, signed: bool) -> i128 {
    if signed && bits >> (nbits - 1) & 1 == 1 {
        bits as i128 - (1i128 << nbits)
    } else {
        bits as i128
    }
}

/// Values (already in range of `sampled`, or of int32 for small dtypes) converted to `dtype`
/// with NumPy's wrapping `astype`.
fn convert_ints(v: Vec<i128>, dtype: DType) -> Result<Values, Error> {
    Ok(match dtype {
        DType::UInt8 => Values::U8(v.into_iter().map(|x| x as u8).collect()),
        DType::UInt16 => Values::U16(v.into_iter().map(|x| x as u16).collect()),
        DType::UInt32 => Values::U32(v.into_iter().map(|x| x as u32).collect()),
        DType::UInt64 => Values::U64(v.into_iter().map(|x| x as u64).collect()),
        DType::Int8 => Values::I8(v.into_iter().map(|x| x as i8).collect()),
        DType::Int16 => Values::I16(v.into_iter().map(|x| x as i16).collect()),
        DType::Int32 => Values::I32(v.into_iter().map(|x| x as i32).collect()),
        DType::Int64 => Values::I64(v.into_iter().map(|x| x as i64).collect()),
        other => return Err(invalid("dtype", format!("randint cannot produce {other}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_fill_equals_serial() {
        let key = Key::from_data([5, 6]);
        let one = Random::new().threads(1);
        let two = Random::new().threads(2);
        for n in [0usize, 1, PARALLEL_MIN * 2 + 3] {
            for w in [8, 16, 32, 64] {
                assert_eq!(
                    one.x64(true).bits(&key, &[n], w).unwrap(),
                    two.x64(true).bits(&key, &[n], w).unwrap()
                );
            }
            assert_eq!(
                one.uniform(&key, &[n], DType::BFloat16, -1.0, 2.0).unwrap(),
                two.uniform(&key, &[n], DType::BFloat16, -1.0, 2.0).unwrap()
            );
        }
    }

    #[test]
    fn split_in_chunks_is_split_at_once() {
        // More keys than one chunk: the same words as one call over the whole range.
        let key = Key::from_data([7, 11]);
        let n = 40_000;
        let keys = Random::new().split(&key, &[n]).unwrap();
        let (mut hi, mut lo) = (vec![0u32; n], vec![0u32; n]);
        simd::pair_range(key.data, 0, &mut hi, &mut lo);
        let want: Vec<u32> = hi.iter().zip(&lo).flat_map(|(&h, &l)| [h, l]).collect();
        assert_eq!(keys.key_data(), &want[..]);
    }

    #[test]
    fn shapes_over_the_memory_limit_are_refused() {
        let rng = Random::new();
        let key = rng.key(1).unwrap();
        let e = rng.split(&key, &[MAX_ELEMENTS + 1]).unwrap_err();
        assert_eq!(e.kind(), dtype_lattice::error::ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("at most 2^28"), "{e}");
        let e = rng.bits(&key, &[1 << 16, 1 << 16], 8).unwrap_err();
        assert_eq!(e.kind(), dtype_lattice::error::ErrorKind::InvalidArgument);
        // Past 2^64 elements JAX's NotImplementedError comes first.
        let e = rng.bits(&key, &[1 << 32, 1 << 32, 2], 8).unwrap_err();
        assert_eq!(e.exception(), Some(Exception::NotImplementedError));
    }

    #[test]
    fn oversized_shapes_are_errors() {
        let rng = Random::new();
        let key = rng.key(0).unwrap();
        let e = rng.bits(&key, &[1 << 32, 1 << 32, 2], 32).unwrap_err();
        assert_eq!(e.exception(), Some(Exception::NotImplementedError));
        let e = rng.bits(&key, &[usize::MAX, usize::MAX], 8).unwrap_err();
        assert_eq!(e.exception(), Some(Exception::NotImplementedError));
        assert!(rng.split(&key, &[1 << 62, 4]).is_err());
    }
}
