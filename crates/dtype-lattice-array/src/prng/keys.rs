//! Keys: a single threefry2x32 [`Key`] and arrays of keys of any key dtype ([`KeyArray`]).

use dtype_lattice::error::Exception;
use dtype_lattice::key::{Algorithm, KeyImpl};
use dtype_lattice::{DType, Error};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::shape::*;
use super::{Shape, invalid};

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
    pub(crate) data: [u32; 2],
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
    pub(crate) dtype: DType,
    pub(crate) shape: Shape,
    pub(crate) data: Vec<u32>,
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
pub(crate) fn key_impl(dtype: DType) -> Result<&'static KeyImpl, Error> {
    dtype
        .key_impl()
        .ok_or_else(|| invalid("dtype", format!("{dtype} is not a PRNG key dtype")))
}

pub(crate) fn implemented(dtype: DType) -> Result<(), Error> {
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
