//! JAX's PRNG key dtypes as data: each [`KeyImpl`] row of [`KEY_IMPLS`] is an extended dtype
//! (`key<fry>`, `key<rbg>`, …). Promotion must know them (a key promotes only with itself), so
//! they live here; sampling with them lives in the `dtype-lattice-array` crate.
//!
//! Implementations can also be registered at run time ([`register`], the dtype half of JAX's
//! `jax.extend.random.define_prng_impl`): each takes one of the [`DType`]'s spare slots and
//! becomes the dtype `key<TAG>`, which parses, prints and promotes as the built-in key dtypes
//! do.
//!
//! ```
//! use dtype_lattice::{key, DType, Operand, Rules};
//! let d = key::register("doc_example_impl", "docex", 3)?;
//! assert_eq!(d.to_string(), "key<docex>");
//! assert_eq!("key<docex>".parse::<DType>()?, d);
//! assert_eq!((d.bits(), d.key_impl().unwrap().key_words), (96, 3));
//! // A key promotes only with itself.
//! let keys = [Operand::array(d); 2];
//! assert_eq!(Rules::jax().result_type(&keys)?.dtype, d);
//! assert!(Rules::jax().result_type(&[Operand::array(d), Operand::array(DType::Int32)]).is_err());
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

use std::sync::RwLock;

use crate::dtype::{DType, DTypeInfo, Kind, Repr, SLOTS};
use crate::error::{Error, Exception};

/// Which algorithm derives a key implementation's keys and bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// Threefry-2x32-20, JAX's default.
    Threefry2x32,
    /// XLA's `RngBitGenerator` for bits, threefry on the key's halves for keys (`rbg`).
    Rbg,
    /// XLA's `RngBitGenerator` for everything (`unsafe_rbg`).
    UnsafeRbg,
    /// One of JAX's other built-in implementations, written in lax operations
    /// (`threefry4x32`, `philox2x32`, `philox4x32`).
    Lax,
    /// An implementation registered at run time ([`register`]).
    Registered,
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
/// `rbg`: dtype `key<rbg>`.
pub const RBG: KeyImpl = KeyImpl {
    name: "rbg",
    tag: "rbg",
    key_words: 4,
    algorithm: Algorithm::Rbg,
};
/// `unsafe_rbg`: dtype `key<urbg>`.
pub const UNSAFE_RBG: KeyImpl = KeyImpl {
    name: "unsafe_rbg",
    tag: "urbg",
    key_words: 4,
    algorithm: Algorithm::UnsafeRbg,
};
/// `threefry4x32`: dtype `key<fry4>`.
pub const THREEFRY4X32: KeyImpl = KeyImpl {
    name: "threefry4x32",
    tag: "fry4",
    key_words: 4,
    algorithm: Algorithm::Lax,
};
/// `philox2x32`: dtype `key<phx2>`.
pub const PHILOX2X32: KeyImpl = KeyImpl {
    name: "philox2x32",
    tag: "phx2",
    key_words: 1,
    algorithm: Algorithm::Lax,
};
/// `philox4x32`: dtype `key<phx4>`.
pub const PHILOX4X32: KeyImpl = KeyImpl {
    name: "philox4x32",
    tag: "phx4",
    key_words: 2,
    algorithm: Algorithm::Lax,
};

/// The PRNG implementations JAX 0.10 registers, as data; each is the [`Repr::Key`] of one
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
    /// The implementation with this name (`threefry2x32`) or dtype tag (`fry`), built in or
    /// [registered](register).
    pub fn by_name(name: &str) -> Option<&'static KeyImpl> {
        KEY_IMPLS
            .iter()
            .find(|k| k.name == name || k.tag == name)
            .or_else(|| {
                read()
                    .iter()
                    .map(|r| r.key)
                    .find(|k| k.name == name || k.tag == name)
            })
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
        DType::extended()
            .into_iter()
            .find(|d| d.key_impl() == Some(self))
            .unwrap_or(DType::KeyThreefry2x32)
    }
}

/// One registered implementation: its row, its dtype's row, its slot.
struct Registered {
    key: &'static KeyImpl,
    info: &'static DTypeInfo,
    dtype: DType,
}

static REGISTRY: RwLock<Vec<Registered>> = RwLock::new(Vec::new());

fn read() -> std::sync::RwLockReadGuard<'static, Vec<Registered>> {
    // A panic while holding the lock cannot leave the vector half-written (pushes are whole).
    REGISTRY.read().unwrap_or_else(|e| e.into_inner())
}

/// The row of a slot nothing is registered in.
static UNREGISTERED: KeyImpl = KeyImpl {
    name: "unregistered",
    tag: "unregistered",
    key_words: 1,
    algorithm: Algorithm::Registered,
};
static UNREGISTERED_INFO: DTypeInfo = DTypeInfo {
    name: "key<unregistered>",
    code: None,
    kind: Kind::Extended,
    bits: 32,
    repr: Repr::Key(&UNREGISTERED),
    x32: DType::KeyRegistered0,
};

/// The model's row of a registered key dtype (a slot nothing is registered in has a row of
/// its own: `key<unregistered>`).
pub(crate) fn registered_info(dtype: DType) -> &'static DTypeInfo {
    read()
        .iter()
        .find(|r| r.dtype == dtype)
        .map_or(&UNREGISTERED_INFO, |r| r.info)
}

/// The key dtypes registered so far, in order.
pub fn registered() -> Vec<DType> {
    read().iter().map(|r| r.dtype).collect()
}

/// The most implementations [`register`] takes (the dtype's spare slots).
pub const MAX_REGISTERED: usize = 16;

/// Registers a PRNG implementation under `name` whose keys hold `key_words` `uint32` words
/// and whose dtype is `key<TAG>` (JAX's `register_prng`, called by
/// `jax.extend.random.define_prng_impl`). Returns the new dtype; how its keys are seeded,
/// split, folded and turned into bits is the array crate's business
/// (`dtype_lattice_array::random::define_prng_impl`).
///
/// # Errors
///
/// JAX's `ValueError` for a name already registered (built in or not) — `PRNG with name
/// NAME already registered` — and for a tag already used, a tag that would not parse back as
/// `key<TAG>` (empty, or holding `<`, `>`, `,`, `[`, `]` or whitespace), `key_words` of 0
/// or more than 1024, or when all [`MAX_REGISTERED`] slots are taken.
pub fn register(name: &str, tag: &str, key_words: usize) -> Result<DType, Error> {
    let refuse = |msg: String| Error::refused(Exception::ValueError, msg);
    let mut reg = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    let known = || {
        KEY_IMPLS
            .iter()
            .chain(reg.iter().map(|r| r.key))
            .copied()
            .collect::<Vec<KeyImpl>>()
    };
    if let Some(k) = known().iter().find(|k| k.name == name) {
        return Err(refuse(format!(
            "PRNG with name {name} already registered: {}",
            k.dtype_name()
        )));
    }
    if let Some(k) = known().iter().find(|k| k.tag == tag) {
        return Err(refuse(format!(
            "PRNG tag {tag} is already the tag of {}",
            k.name
        )));
    }
    let bad = |c: char| c.is_whitespace() || "<>,[]()".contains(c);
    if tag.is_empty() || tag.chars().any(bad) {
        return Err(refuse(format!(
            "PRNG tag {tag:?} is not a tag: it must be non-empty, without whitespace or any of              <>,[]()"
        )));
    }
    if name.is_empty() {
        return Err(refuse("PRNG name must be non-empty".into()));
    }
    if !(1..=1024).contains(&key_words) {
        return Err(refuse(format!(
            "a key of {key_words} uint32 words: key data must hold 1 to 1024 words"
        )));
    }
    let Some(&dtype) = SLOTS.get(reg.len()) else {
        return Err(refuse(format!(
            "cannot register {name}: all {MAX_REGISTERED} slots for registered PRNG              implementations are taken"
        )));
    };
    // Registered once and kept for the process, as JAX's registry keeps them: leaked.
    let key: &'static KeyImpl = Box::leak(Box::new(KeyImpl {
        name: Box::leak(name.into()),
        tag: Box::leak(tag.into()),
        key_words,
        algorithm: Algorithm::Registered,
    }));
    let info: &'static DTypeInfo = Box::leak(Box::new(DTypeInfo {
        name: Box::leak(key.dtype_name().into_boxed_str()),
        code: None,
        kind: Kind::Extended,
        bits: 32 * key_words as u32,
        repr: Repr::Key(key),
        x32: dtype,
    }));
    reg.push(Registered { key, info, dtype });
    Ok(dtype)
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
        assert_eq!(SLOTS.len(), MAX_REGISTERED);
    }

    #[test]
    fn registered_dtypes_parse_print_and_refuse_duplicates() {
        let d = register("unit_test_impl", "utest", 5).unwrap();
        assert!(d.is_extended() && !d.is_float0());
        assert_eq!(d.to_string(), "key<utest>");
        assert_eq!("key<utest>".parse::<DType>().unwrap(), d);
        assert_eq!(d.bits(), 160);
        assert_eq!(d.canonicalize(false), d);
        let k = d.key_impl().unwrap();
        assert_eq!((k.name, k.tag, k.key_words), ("unit_test_impl", "utest", 5));
        assert_eq!(k.dtype(), d);
        assert_eq!(KeyImpl::by_name("utest"), Some(k));
        assert!(registered().contains(&d) && DType::extended().contains(&d));
        let e = register("unit_test_impl", "other", 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ValueError: PRNG with name unit_test_impl already registered: key<utest>"
        );
        assert!(register("rbg", "x", 2).is_err());
        assert!(register("x_impl", "fry", 2).is_err());
        for tag in ["", "a b", "a<b", "x]"] {
            assert!(register("tag_test", tag, 2).is_err(), "{tag:?}");
        }
        assert!(register("words_test", "wt", 0).is_err());
        assert!(register("words_test", "wt", 1025).is_err());
        // An unregistered slot has a row of its own rather than none.
        let last = *SLOTS.last().unwrap();
        if !registered().contains(&last) {
            assert_eq!(last.to_string(), "key<unregistered>");
        }
    }
}
