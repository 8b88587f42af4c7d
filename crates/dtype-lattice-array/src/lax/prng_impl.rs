//! Pluggable PRNG implementations (JEP 9263): the four functions behind a key dtype, and the
//! table the `random_*` primitives dispatch on.
//!
//! A key dtype's implementation is JAX's `PRNGImpl`: how a seed becomes key data, how key data
//! splits, folds a message in and turns into bits. `threefry2x32` runs on the crate's SIMD
//! kernels (in [`super::random`] itself); every other implementation is a [`PrngImpl`] — the
//! built-in ones JAX 0.10.2 registers (`rbg`, `unsafe_rbg`, written with XLA's
//! `rng_bit_generator`; `threefry4x32`, `philox2x32`, `philox4x32`) and those registered at run
//! time ([`register`], JAX's `jax.extend.random.define_prng_impl`).
//!
//! As in JAX (`iterated_vmap_unary`), each function sees ONE key's data — a `uint32` array of
//! shape `(key_words,)` — and the primitives map it over the key array's elements; their
//! outputs are checked against the shapes and dtypes the primitives promise. The functions run
//! eagerly on concrete arrays whatever transformation is in progress (the primitives stage,
//! batch and differentiate as primitives; only their evaluation calls here).

use std::sync::{Arc, RwLock};

use dtype_lattice::error::Exception;
use dtype_lattice::key::{Algorithm, KeyImpl};
use dtype_lattice::{DType, Error};

use super::key_impls::BuiltinImpl;
use crate::array::{Array, py_shape};

/// A PRNG implementation: JAX's `PRNGImpl` functions on one key's data.
///
/// Each function is called with concrete arrays and must return concrete arrays of exactly the
/// promised shape and dtype (checked: a mismatch is a `TypeError` naming the function).
///
/// ```
/// use dtype_lattice::{DType, Error};
/// use dtype_lattice_array::{Array, random};
/// use dtype_lattice_array::random::PrngImpl;
///
/// /// A toy implementation: one word of key data, bits counted up from the key.
/// struct Counter;
/// impl PrngImpl for Counter {
///     fn seed(&self, seed: &Array) -> Result<Array, Error> {
///         Array::from_shape_vec(&[1], seed.astype(DType::UInt32)?.to_vec::<u32>()?)
///     }
///     fn split(&self, key: &Array, shape: &[usize]) -> Result<Array, Error> {
///         let k = key.to_vec::<u32>()?[0];
///         let n: usize = shape.iter().product();
///         let words: Vec<u32> = (1..=n as u32).map(|i| k.wrapping_mul(31).wrapping_add(i)).collect();
///         let mut full = shape.to_vec();
///         full.push(1);
///         Array::from_shape_vec(&full, words)
///     }
///     fn fold_in(&self, key: &Array, data: &Array) -> Result<Array, Error> {
///         let (k, d) = (key.to_vec::<u32>()?[0], data.to_vec::<u32>()?[0]);
///         Array::from_shape_vec(&[1], vec![k ^ d.rotate_left(7)])
///     }
///     fn random_bits(&self, key: &Array, bit_width: u32, shape: &[usize]) -> Result<Array, Error> {
///         let k = key.to_vec::<u32>()?[0];
///         let n: usize = shape.iter().product();
///         let words: Vec<u32> = (0..n as u32).map(|i| k.wrapping_add(i)).collect();
///         let dtype = match bit_width {
///             8 => DType::UInt8,
///             16 => DType::UInt16,
///             32 => DType::UInt32,
///             _ => DType::UInt64,
///         };
///         Array::from_shape_vec(shape, words)?.astype(dtype)
///     }
/// }
///
/// let dtype = random::define_prng_impl("counter_doc", "ctr", 1, Counter)?;
/// assert_eq!(dtype.to_string(), "key<ctr>");
/// let key = random::key_with(5, "counter_doc")?;
/// assert_eq!(random::key_data(&key)?.to_vec::<u32>()?, [5]);
/// assert_eq!(random::bits(&key, &[3])?.to_vec::<u32>()?, [5, 6, 7]);
/// # Ok::<(), Error>(())
/// ```
pub trait PrngImpl: Send + Sync {
    /// `seed(seed)`: a 0-d integer array to one key's data, `uint32[key_words]`.
    ///
    /// # Errors
    ///
    /// Whatever the implementation refuses.
    fn seed(&self, seed: &Array) -> Result<Array, Error>;

    /// `split(key, shape)`: `uint32[*shape, key_words]`.
    ///
    /// # Errors
    ///
    /// Whatever the implementation refuses.
    fn split(&self, key: &Array, shape: &[usize]) -> Result<Array, Error>;

    /// `fold_in(key, data)`: the key with a 0-d `uint32` message folded in,
    /// `uint32[key_words]`.
    ///
    /// # Errors
    ///
    /// Whatever the implementation refuses.
    fn fold_in(&self, key: &Array, data: &Array) -> Result<Array, Error>;

    /// `random_bits(key, bit_width, shape)`: unsigned bits of `bit_width` (8, 16, 32, 64)
    /// bits, shape `shape` (`uint64` bits may come as `uint32` with x64 off, as JAX
    /// canonicalises them).
    ///
    /// # Errors
    ///
    /// Whatever the implementation refuses.
    fn random_bits(&self, key: &Array, bit_width: u32, shape: &[usize]) -> Result<Array, Error>;

    /// `split` over key data with leading batch dimensions (`uint32[*batch, key_words]` to
    /// `uint32[*batch, *shape, key_words]`), as JAX's `random_split` maps the implementation
    /// (`vmap`). The default splits each key alone; an implementation whose functions batch
    /// otherwise under `vmap` (`rbg`'s `rng_bit_generator`) says so here.
    ///
    /// # Errors
    ///
    /// Whatever [`PrngImpl::split`] refuses.
    fn split_batched(&self, keys: &Array, shape: &[usize]) -> Result<Array, Error> {
        let words = keys.to_vec::<u32>()?;
        let kw = keys.shape().last().copied().unwrap_or(1).max(1);
        let mut out: Vec<u8> = Vec::new();
        let want: Vec<usize> = shape.iter().chain([&kw]).copied().collect();
        for key in words.chunks_exact(kw) {
            let keys = checked(
                "split",
                self.split(&Array::from_vec(key.to_vec()), shape)?,
                &want,
            )?;
            out.extend_from_slice(keys.as_bytes());
        }
        let batch = &keys.shape()[..keys.ndim().saturating_sub(1)];
        let full: Vec<usize> = batch.iter().chain(shape).chain([&kw]).copied().collect();
        Array::from_bytes(DType::UInt32, &full, &out)
    }

    /// `fold_in` of key data `keys` (`uint32[*kshape, key_words]`) and `uint32` messages
    /// `msgs` broadcast against `kshape` (same rank, each dimension equal or 1, or either
    /// 0-d), as JAX's `random_fold_in` maps the implementation. The default folds each
    /// broadcast pair alone.
    ///
    /// # Errors
    ///
    /// Whatever [`PrngImpl::fold_in`] refuses; a `TypeError` for shapes that do not
    /// broadcast.
    fn fold_in_batched(&self, keys: &Array, msgs: &Array) -> Result<Array, Error> {
        let kw = keys.shape().last().copied().unwrap_or(1).max(1);
        let kshape = &keys.shape()[..keys.ndim().saturating_sub(1)];
        let out = super::random::broadcasting_shape("random_fold_in", kshape, msgs.shape())?;
        let n: usize = out.iter().product();
        // Each output element's position in an operand broadcast to it.
        let at = |shape: &[usize]| -> Vec<usize> {
            if shape.is_empty() {
                vec![0; n]
            } else {
                (0..n)
                    .map(super::random::broadcast_index(shape, &out))
                    .collect()
            }
        };
        let (ki, mi) = (at(kshape), at(msgs.shape()));
        let (words, m) = (keys.to_vec::<u32>()?, msgs.to_vec::<u32>()?);
        let mut data: Vec<u8> = Vec::with_capacity(4 * kw * n);
        for i in 0..n {
            let key = Array::from_vec(words[ki[i] * kw..][..kw].to_vec());
            let folded = self.fold_in(&key, &Array::scalar(m[mi[i]]))?;
            data.extend_from_slice(checked("fold_in", folded, &[kw])?.as_bytes());
        }
        let full: Vec<usize> = out.iter().chain([&kw]).copied().collect();
        Array::from_bytes(DType::UInt32, &full, &data)
    }

    /// `random_bits` over key data with leading batch dimensions (`uint32[*batch,
    /// key_words]` to `uint{bit_width}[*batch, *shape]`), as JAX's `random_bits` maps the
    /// implementation. The default draws from each key alone.
    ///
    /// # Errors
    ///
    /// Whatever [`PrngImpl::random_bits`] refuses.
    fn random_bits_batched(
        &self,
        keys: &Array,
        bit_width: u32,
        shape: &[usize],
    ) -> Result<Array, Error> {
        let words = keys.to_vec::<u32>()?;
        let kw = keys.shape().last().copied().unwrap_or(1).max(1);
        let mut out: Vec<u8> = Vec::new();
        let mut dtype = None;
        for key in words.chunks_exact(kw) {
            let b = self.random_bits(&Array::from_vec(key.to_vec()), bit_width, shape)?;
            let b = checked("random_bits", b, shape)?;
            if dtype.is_some_and(|d| d != b.dtype()) {
                return Err(mismatch("random_bits", &b, shape));
            }
            dtype = Some(b.dtype());
            out.extend_from_slice(b.as_bytes());
        }
        let batch = &keys.shape()[..keys.ndim().saturating_sub(1)];
        let full: Vec<usize> = batch.iter().chain(shape).copied().collect();
        let dtype = dtype.unwrap_or(match bit_width {
            8 => DType::UInt8,
            16 => DType::UInt16,
            32 => DType::UInt32,
            _ => DType::UInt64,
        });
        Array::from_bytes(dtype, &full, &out)
    }
}

/// A function's output for one key, refused unless concrete, `uint32` for keys, of `shape`.
fn checked(function: &str, out: Array, shape: &[usize]) -> Result<Array, Error> {
    let keys = function != "random_bits";
    if !out.is_concrete()
        || out.shape() != shape
        || (keys && out.dtype() != DType::UInt32)
        || (!keys && out.dtype().kind() != dtype_lattice::Kind::UnsignedInt)
    {
        return Err(mismatch(function, &out, shape));
    }
    Ok(out)
}

fn mismatch(function: &str, out: &Array, shape: &[usize]) -> Error {
    Error::refused(
        Exception::TypeError,
        format!(
            "the {function} function of a PRNG implementation returned {}{} for one key, \
             expected shape {}",
            out.dtype(),
            py_shape(out.shape()),
            py_shape(shape)
        ),
    )
}

/// The implementations registered at run time, by dtype.
static REGISTERED: RwLock<Vec<(DType, Arc<dyn PrngImpl>)>> = RwLock::new(Vec::new());

/// Registers `functions` as the implementation `name` with dtype `key<TAG>` and keys of
/// `key_words` words (JAX's `define_prng_impl` then `register_prng`); returns the dtype.
///
/// # Errors
///
/// [`dtype_lattice::key::register`]'s `ValueError`s (a name or tag already used, a bad tag,
/// no slot left).
pub fn register(
    name: &str,
    tag: &str,
    key_words: usize,
    functions: Arc<dyn PrngImpl>,
) -> Result<DType, Error> {
    let mut reg = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    let dtype = dtype_lattice::key::register(name, tag, key_words)?;
    reg.push((dtype, functions));
    Ok(dtype)
}

/// The functions of a key dtype's implementation other than `threefry2x32` (`None` for
/// threefry2x32, which the primitives compute on their own kernels).
///
/// # Errors
///
/// A `NotImplementedError` for a built-in implementation this crate does not compute.
pub(crate) fn functions(k: &KeyImpl) -> Result<Option<Arc<dyn PrngImpl>>, Error> {
    let builtin: Option<&'static BuiltinImpl> = match k.algorithm {
        Algorithm::Threefry2x32 => return Ok(None),
        Algorithm::Registered => {
            let reg = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
            let dtype = k.dtype();
            return reg
                .iter()
                .find(|(d, _)| *d == dtype)
                .map(|(_, f)| Some(f.clone()))
                .ok_or_else(|| not_implemented(k));
        }
        _ => super::key_impls::builtin(k),
    };
    match builtin {
        Some(b) => Ok(Some(Arc::new(BuiltinRef(b)))),
        None => Err(not_implemented(k)),
    }
}

/// A built-in implementation (four plain functions, [`super::key_impls`]) behind the trait.
struct BuiltinRef(&'static BuiltinImpl);

impl PrngImpl for BuiltinRef {
    fn seed(&self, seed: &Array) -> Result<Array, Error> {
        (self.0.seed)(seed)
    }
    fn split(&self, key: &Array, shape: &[usize]) -> Result<Array, Error> {
        (self.0.split)(key, shape)
    }
    fn fold_in(&self, key: &Array, data: &Array) -> Result<Array, Error> {
        (self.0.fold_in)(key, data)
    }
    fn random_bits(&self, key: &Array, bit_width: u32, shape: &[usize]) -> Result<Array, Error> {
        (self.0.random_bits)(key, bit_width, shape)
    }
    // rbg and unsafe_rbg call `rng_bit_generator`, whose batching rule draws a whole batch
    // from its first key: JAX's primitives on key arrays compute that.
    fn split_batched(&self, keys: &Array, shape: &[usize]) -> Result<Array, Error> {
        match self.0.key.algorithm {
            Algorithm::UnsafeRbg => super::key_impls::unsafe_rbg_split_batched(keys, shape),
            _ => PerKey(self).split_batched(keys, shape),
        }
    }
    fn fold_in_batched(&self, keys: &Array, msgs: &Array) -> Result<Array, Error> {
        match self.0.key.algorithm {
            Algorithm::UnsafeRbg => super::key_impls::unsafe_rbg_fold_in_batched(keys, msgs),
            _ => PerKey(self).fold_in_batched(keys, msgs),
        }
    }
    fn random_bits_batched(
        &self,
        keys: &Array,
        bit_width: u32,
        shape: &[usize],
    ) -> Result<Array, Error> {
        match self.0.key.algorithm {
            Algorithm::Rbg | Algorithm::UnsafeRbg => {
                super::key_impls::rbg_random_bits_batched(keys, bit_width, shape)
            }
            _ => PerKey(self).random_bits_batched(keys, bit_width, shape),
        }
    }
}

/// An implementation with the default (key by key) batched functions.
struct PerKey<'a, P: PrngImpl>(&'a P);

impl<P: PrngImpl> PrngImpl for PerKey<'_, P> {
    fn seed(&self, seed: &Array) -> Result<Array, Error> {
        self.0.seed(seed)
    }
    fn split(&self, key: &Array, shape: &[usize]) -> Result<Array, Error> {
        self.0.split(key, shape)
    }
    fn fold_in(&self, key: &Array, data: &Array) -> Result<Array, Error> {
        self.0.fold_in(key, data)
    }
    fn random_bits(&self, key: &Array, bit_width: u32, shape: &[usize]) -> Result<Array, Error> {
        self.0.random_bits(key, bit_width, shape)
    }
}

fn not_implemented(k: &KeyImpl) -> Error {
    Error::refused(
        Exception::NotImplementedError,
        format!(
            "the PRNG implementation {} ({}) has no functions in this crate",
            k.name,
            k.dtype_name()
        ),
    )
}

/// Runs an implementation's function eagerly (whatever trace is current: the primitives'
/// evaluation calls here) and checks what it returns.
pub(crate) fn call(
    k: &KeyImpl,
    function: &str,
    want_shape: &[usize],
    want_dtype: &[DType],
    f: impl FnOnce() -> Result<Array, Error>,
) -> Result<Array, Error> {
    let out = crate::core::with_trace(None, f)?;
    if !out.is_concrete() || out.shape() != want_shape || !want_dtype.contains(&out.dtype()) {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "the {function} function of the PRNG implementation {} returned {}{}, \
                 expected {}{}",
                k.name,
                out.dtype(),
                py_shape(out.shape()),
                want_dtype
                    .iter()
                    .map(DType::to_string)
                    .collect::<Vec<_>>()
                    .join(" or "),
                py_shape(want_shape)
            ),
        ));
    }
    Ok(out)
}
