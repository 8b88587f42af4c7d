//! JAX's PRNG key dtypes as data: each [`KeyImpl`] row of [`KEY_IMPLS`] is an extended dtype
//! (`key<fry>`, `key<rbg>`, …). Promotion must know them (a key promotes only with itself), so
//! they live here; sampling with them lives in the `dtype-lattice-array` crate.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Reason};

/// How a key implementation derives keys and bits. Only `Threefry2x32` is implemented here;
/// the others are known as dtypes (they promote, print and parse) but refuse to sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Threefry-2x32-20, JAX's default.
    Threefry2x32,
    /// An implementation this crate knows only as a dtype.
    NotImplemented,
}

/// One PRNG implementation of JAX: a row of [`KEY_IMPLS`].
///
/// ```
/// use dtype_lattice::key::KeyImpl;
/// let fry = KeyImpl::by_name("threefry2x32").unwrap();
/// assert_eq!((fry.tag, fry.key_words), ("fry", 2));
/// assert_eq!(fry.dtype_name(), "key<fry>");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyImpl {
    /// The implementation's name (`jax.random.key(0, impl=NAME)`).
    pub name: &'static str,
    /// The tag its dtype prints (`key<TAG>`).
    pub tag: &'static str,
    /// Number of `uint32` words of key data per key (`PRNGImpl.key_shape`).
    pub key_words: usize,
    /// How keys and bits are derived.
    pub algorithm: Algorithm,
}

/// The PRNG implementations JAX 0.10 registers, as data.
pub const KEY_IMPLS: &[KeyImpl] = &[
    KeyImpl {
        name: "threefry2x32",
        tag: "fry",
        key_words: 2,
        algorithm: Algorithm::Threefry2x32,
    },
    KeyImpl {
        name: "rbg",
        tag: "rbg",
        key_words: 4,
        algorithm: Algorithm::NotImplemented,
    },
    KeyImpl {
        name: "unsafe_rbg",
        tag: "urbg",
        key_words: 4,
        algorithm: Algorithm::NotImplemented,
    },
    KeyImpl {
        name: "threefry4x32",
        tag: "fry4",
        key_words: 4,
        algorithm: Algorithm::NotImplemented,
    },
    KeyImpl {
        name: "philox2x32",
        tag: "phx2",
        key_words: 1,
        algorithm: Algorithm::NotImplemented,
    },
    KeyImpl {
        name: "philox4x32",
        tag: "phx4",
        key_words: 2,
        algorithm: Algorithm::NotImplemented,
    },
];

impl KeyImpl {
    /// The implementation with this name (`threefry2x32`) or dtype tag (`fry`).
    pub fn by_name(name: &str) -> Option<&'static KeyImpl> {
        KEY_IMPLS.iter().find(|k| k.name == name || k.tag == name)
    }

    /// The name of its dtype: `key<fry>`.
    pub fn dtype_name(&self) -> String {
        format!("key<{}>", self.tag)
    }
}

/// A key dtype (`key<fry>`): an extended dtype naming a [`KeyImpl`].
///
/// ```
/// use dtype_lattice::key::KeyDType;
/// let t: KeyDType = "key<fry>".parse().unwrap();
/// assert_eq!(t, KeyDType::THREEFRY2X32);
/// assert_eq!(t.to_string(), "key<fry>");
/// assert_eq!(t.key_impl().name, "threefry2x32");
/// assert!("key<nope>".parse::<KeyDType>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyDType(u8);

impl KeyDType {
    /// `key<fry>`, JAX's default.
    pub const THREEFRY2X32: KeyDType = KeyDType(0);

    /// Every key dtype, in the order of [`KEY_IMPLS`].
    pub fn all() -> impl Iterator<Item = KeyDType> {
        (0..KEY_IMPLS.len() as u8).map(KeyDType)
    }

    /// The implementation.
    pub fn key_impl(self) -> &'static KeyImpl {
        &KEY_IMPLS[self.0 as usize]
    }

    /// The dtype of an implementation given by name (`threefry2x32`) or tag (`fry`).
    pub fn of_impl(name: &str) -> Option<KeyDType> {
        KEY_IMPLS
            .iter()
            .position(|k| k.name == name || k.tag == name)
            .map(|i| KeyDType(i as u8))
    }
}

impl FromStr for KeyDType {
    type Err = Error;

    /// Parses `key<TAG>` (`key<fry>`, `key<rbg>`, …).
    fn from_str(s: &str) -> Result<Self, Error> {
        let tag = s
            .strip_prefix("key<")
            .and_then(|r| r.strip_suffix('>'))
            .ok_or_else(|| invalid("dtype", format!("{s:?} is not a key dtype (key<TAG>)")))?;
        KEY_IMPLS
            .iter()
            .position(|k| k.tag == tag)
            .map(|i| KeyDType(i as u8))
            .ok_or_else(|| {
                let valid: Vec<String> = KEY_IMPLS.iter().map(KeyImpl::dtype_name).collect();
                invalid(
                    "dtype",
                    format!(
                        "unknown key dtype {s:?}; valid key dtypes: {}",
                        valid.join(", ")
                    ),
                )
            })
    }
}

impl fmt::Display for KeyDType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "key<{}>", self.key_impl().tag)
    }
}

impl Serialize for KeyDType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for KeyDType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Unusable input naming a key dtype.
fn invalid(argument: &str, reason: impl Into<String>) -> Error {
    Reason::InvalidArgument {
        argument: argument.to_string(),
        reason: reason.into(),
    }
    .into()
}
