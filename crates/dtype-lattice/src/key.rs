//! JAX's PRNG key dtypes as data: each [`KeyImpl`] row of [`KEY_IMPLS`] is an extended dtype
//! (`key<fry>`, `key<rbg>`, …). Promotion must know them (a key promotes only with itself), so
//! they live here; sampling with them lives in the `dtype-lattice-array` crate.

use crate::dtype::DType;

/// How a key implementation derives keys and bits. Only `Threefry2x32` is implemented here;
/// the others are known as dtypes (they promote, print and parse) but refuse to sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
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

/// `threefry2x32`, JAX's default: dtype `key<fry>`.
pub const THREEFRY2X32: KeyImpl = KeyImpl {
    name: "threefry2x32",
    tag: "fry",
    key_words: 2,
    algorithm: Algorithm::Threefry2x32,
};
/// `rbg`: dtype `key<rbg>` (known as a dtype only).
pub const RBG: KeyImpl = KeyImpl {
    name: "rbg",
    tag: "rbg",
    key_words: 4,
    algorithm: Algorithm::NotImplemented,
};
/// `unsafe_rbg`: dtype `key<urbg>` (known as a dtype only).
pub const UNSAFE_RBG: KeyImpl = KeyImpl {
    name: "unsafe_rbg",
    tag: "urbg",
    key_words: 4,
    algorithm: Algorithm::NotImplemented,
};
/// `threefry4x32`: dtype `key<fry4>` (known as a dtype only).
pub const THREEFRY4X32: KeyImpl = KeyImpl {
    name: "threefry4x32",
    tag: "fry4",
    key_words: 4,
    algorithm: Algorithm::NotImplemented,
};
/// `philox2x32`: dtype `key<phx2>` (known as a dtype only).
pub const PHILOX2X32: KeyImpl = KeyImpl {
    name: "philox2x32",
    tag: "phx2",
    key_words: 1,
    algorithm: Algorithm::NotImplemented,
};
/// `philox4x32`: dtype `key<phx4>` (known as a dtype only).
pub const PHILOX4X32: KeyImpl = KeyImpl {
    name: "philox4x32",
    tag: "phx4",
    key_words: 2,
    algorithm: Algorithm::NotImplemented,
};

/// The PRNG implementations JAX 0.10 registers, as data; each is the [`Repr::Key`](crate::dtype::Repr::Key) of one
/// extended [`DType`].
pub const KEY_IMPLS: &[KeyImpl] = &[
    THREEFRY2X32,
    RBG,
    UNSAFE_RBG,
    THREEFRY4X32,
    PHILOX2X32,
    PHILOX4X32,
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

    /// Its dtype.
    ///
    /// ```
    /// use dtype_lattice::{key::THREEFRY2X32, DType};
    /// assert_eq!(THREEFRY2X32.dtype(), DType::KeyThreefry2x32);
    /// ```
    pub fn dtype(&self) -> DType {
        DType::EXTENDED
            .iter()
            .copied()
            .find(|d| d.key_impl() == Some(self))
            .unwrap_or(DType::KeyThreefry2x32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_dtypes_are_data() {
        for &t in DType::EXTENDED {
            assert_eq!(t.to_string().parse::<DType>().unwrap(), t);
            let k = t
                .key_impl()
                .expect("an extended dtype names its implementation");
            assert_eq!(k.dtype(), t);
            assert_eq!(KeyImpl::by_name(k.name).map(KeyImpl::dtype), Some(t));
            assert_eq!(t.to_string(), k.dtype_name());
            assert_eq!(t.bits() as usize, 32 * k.key_words);
        }
        assert_eq!(DType::EXTENDED.len(), KEY_IMPLS.len());
    }
}
