//! The key implementations JAX 0.10.2 registers besides `threefry2x32`, as the four functions
//! of JAX's `PRNGImpl` on the key data of ONE key (a concrete `uint32` array of the key shape):
//! `seed`, `split`, `fold_in` and `random_bits`, bit for bit on CPU.
//!
//! | impl | key | seed | split / fold_in | random_bits |
//! |---|---|---|---|---|
//! | `rbg` (`key<rbg>`) | `u32[4]` | `threefry_seed` twice: `[hi, lo, hi, lo]` | threefry2x32 on each half: `threefry_split` (partitionable) at counters `(i >> 32, i)`, `threefry_fold_in` at `threefry_seed(data)` | `lax.rng_bit_generator(key, shape, uint{w})` (Philox on CPU, [`super::rng`]) |
//! | `unsafe_rbg` (`key<urbg>`) | `u32[4]` | as `rbg` | rows `0, 10, 20…` of `rng_bit_generator(key, (10 n, 4))`; `key ^ row 9` of `rng_bit_generator(rbg_seed(data), (10, 4))` | as `rbg` |
//! | `threefry4x32` (`key<fry4>`) | `u32[4]` | Threefry-4x32 of key `(hi, lo, 0, 0)` at 0 | counter `(0, 0, i >> 32, i)`; `(0, 0, 0, data)` | counter `(i >> 32, i, 0, 0)`: `o0 ^ o1 ^ o2 ^ o3`, 64 bits `(o0 ^ o2) << 32 \| (o1 ^ o3)` |
//! | `philox4x32` (`key<phx4>`) | `u32[2]` | Philox-4x32 of counter `(hi, lo, 0, 0)` under key 0: `o0, o1` | counter `(0, 0, i >> 32, i)`; `(0, 0, 0, data)`: `o0, o1` | counter `(i >> 32, i, 0, 0)`: the XOR of the four, 64 bits `o0 << 32 \| o1` |
//! | `philox2x32` (`key<phx2>`) | `u32[1]` | Philox-2x32 of counter `(hi, lo)` under key 0: `o0` | counter `(i >> 32, i)`; `(0, data)`: `o0` | `o0 ^ o1`, 64 bits `o0 << 32 \| o1` |
//!
//! `hi`/`lo` are `threefry_seed`'s words of an integer seed: the seed shifted right by 32
//! (logically; nothing is left of a seed narrower than 64 bits) and its low 32 bits (sign
//! extended). 8- and 16-bit draws truncate the 32-bit ones. With x64 off a 64-bit draw is a
//! `uint32` array, as JAX computes it: `rbg`'s `rng_bit_generator` is asked for `uint64`,
//! canonicalised to `uint32` (a 32-bit draw); the lax implementations' `hi << 32` is 0 in
//! `uint32`, which leaves the low word.
//!
//! **Batches of keys.** JAX maps these functions over a key array with `vmap`, which for the
//! three functions that call `rng_bit_generator` is not "each key alone": its batching rule
//! draws the whole batch from the batch's first key ([`super::rng`]). So, on key data with
//! leading batch dimensions, [`rbg_random_bits_batched`] (rbg's and unsafe_rbg's bits),
//! [`unsafe_rbg_split_batched`] and [`unsafe_rbg_fold_in_batched`] compute what JAX's
//! `random_bits`, `random_split` and `random_fold_in` primitives compute; the other
//! functions are each key's alone.
//!
//! `threefry_partitionable` is JAX's default (`True`), as everywhere in this crate.

use dtype_lattice::error::Exception;
use dtype_lattice::key::{self, KeyImpl};
use dtype_lattice::{DType, Error, Kind};

use super::rng::RandomAlgorithm;
use crate::array::{Array, ShapedArray, Storage, py_shape};
use crate::kernels::philox::{philox2x32, philox4x32};
use crate::kernels::rng_bit::{self, State};
use crate::kernels::threefry::{counter, threefry2x32};
use crate::kernels::threefry4x32::threefry4x32;
use crate::prng::output_size;

/// A seed function: a 0-d integer seed to the key data of one key.
pub(crate) type SeedFn = fn(&Array) -> Result<Array, Error>;
/// A split function: one key's data to `(*shape, *key_shape)` key data.
pub(crate) type SplitFn = fn(&Array, &[usize]) -> Result<Array, Error>;
/// A fold-in function: one key's data and a 0-d message to one key's data.
pub(crate) type FoldInFn = fn(&Array, &Array) -> Result<Array, Error>;
/// A random-bits function: one key's data, a bit width (8, 16, 32, 64) and a shape to
/// `uint{width}[*shape]` (x64 canonicalised).
pub(crate) type RandomBitsFn = fn(&Array, u32, &[usize]) -> Result<Array, Error>;

/// One built-in key implementation's functions (JAX's `PRNGImpl`).
pub(crate) struct BuiltinImpl {
    /// The implementation (name, tag, key words).
    pub(crate) key: &'static KeyImpl,
    /// `seed(seed)`.
    pub(crate) seed: SeedFn,
    /// `split(key, shape)`.
    pub(crate) split: SplitFn,
    /// `fold_in(key, data)`.
    pub(crate) fold_in: FoldInFn,
    /// `random_bits(key, bit_width, shape)`.
    pub(crate) random_bits: RandomBitsFn,
}

/// `rbg`.
pub(crate) static RBG_FNS: BuiltinImpl = BuiltinImpl {
    key: &key::RBG,
    seed: rbg_seed,
    split: rbg_split,
    fold_in: rbg_fold_in,
    random_bits: rbg_random_bits,
};

/// `unsafe_rbg`.
pub(crate) static UNSAFE_RBG_FNS: BuiltinImpl = BuiltinImpl {
    key: &key::UNSAFE_RBG,
    seed: rbg_seed,
    split: unsafe_rbg_split,
    fold_in: unsafe_rbg_fold_in,
    random_bits: rbg_random_bits,
};

/// `threefry4x32`.
pub(crate) static THREEFRY4X32_FNS: BuiltinImpl = BuiltinImpl {
    key: &key::THREEFRY4X32,
    seed: threefry4x32_seed,
    split: threefry4x32_split,
    fold_in: threefry4x32_fold_in,
    random_bits: threefry4x32_random_bits,
};

/// `philox4x32`.
pub(crate) static PHILOX4X32_FNS: BuiltinImpl = BuiltinImpl {
    key: &key::PHILOX4X32,
    seed: philox4x32_seed,
    split: philox4x32_split,
    fold_in: philox4x32_fold_in,
    random_bits: philox4x32_random_bits,
};

/// `philox2x32`.
pub(crate) static PHILOX2X32_FNS: BuiltinImpl = BuiltinImpl {
    key: &key::PHILOX2X32,
    seed: philox2x32_seed,
    split: philox2x32_split,
    fold_in: philox2x32_fold_in,
    random_bits: philox2x32_random_bits,
};

/// The functions of a built-in implementation other than threefry2x32, by its name.
pub(crate) fn builtin(k: &KeyImpl) -> Option<&'static BuiltinImpl> {
    [
        &RBG_FNS,
        &UNSAFE_RBG_FNS,
        &THREEFRY4X32_FNS,
        &PHILOX4X32_FNS,
        &PHILOX2X32_FNS,
    ]
    .into_iter()
    .find(|f| f.key.name == k.name)
}

// ---- shared pieces

fn type_error(msg: impl Into<String>) -> Error {
    Error::refused(Exception::TypeError, msg)
}

/// JAX asserts (`assert not seed.shape`): an `AssertionError`.
fn assertion(what: &str) -> Error {
    Error::refused(
        Exception::AssertionError,
        format!("assertion failed: {what}"),
    )
}

/// The words of one key's data: `uint32[words]`.
fn key_words<const N: usize>(key: &Array, name: &str) -> Result<[u32; N], Error> {
    if key.dtype() != DType::UInt32 || key.shape() != [N] {
        return Err(type_error(format!(
            "{name} got invalid prng key: expected uint32[{N}] key data, got {}",
            key.aval().long_name()
        )));
    }
    key.to_vec::<u32>()?
        .try_into()
        .map_err(|_| crate::array::invalid("key", "key data"))
}

/// `threefry_seed`'s words `[hi, lo]` of a 0-d integer (a seed, or `rbg`'s fold-in data):
/// the value shifted right logically by 32 (0 for narrower dtypes) and its low 32 bits.
fn seed_words(seed: &Array) -> Result<[u32; 2], Error> {
    let tracer = || format!("JitTracer({})", seed.aval().long_name());
    if seed.ndim() != 0 {
        return Err(type_error(format!(
            "PRNG key seed must be a scalar; got {}.",
            tracer()
        )));
    }
    let dtype = seed.dtype();
    if !dtype.kind().is_integer() {
        return Err(type_error(format!(
            "PRNG key seed must be an integer; got {}",
            tracer()
        )));
    }
    let v: u64 = if dtype == DType::UInt64 {
        seed.to_vec::<u64>()?[0]
    } else {
        seed.astype(DType::Int64)?.to_vec::<i64>()?[0] as u64
    };
    let hi = if dtype.bits() == 64 {
        (v >> 32) as u32
    } else {
        0
    };
    Ok([hi, v as u32])
}

/// A 0-d message as `uint32` (`jnp.asarray(data, dtype='uint32')`).
fn message(data: &Array) -> Result<u32, Error> {
    if data.ndim() != 0 {
        return Err(assertion("not data.shape"));
    }
    if !matches!(
        data.dtype().kind(),
        Kind::SignedInt | Kind::UnsignedInt | Kind::Bool
    ) {
        return Err(type_error(format!(
            "fold_in data must be an integer; got {}",
            data.aval().long_name()
        )));
    }
    Ok(data.astype(DType::UInt32)?.to_vec::<u32>()?[0])
}

/// An array of `u32` words of `shape`.
fn u32_array(shape: &[usize], words: Vec<u32>) -> Result<Array, Error> {
    Array::from_shape_vec(shape, words)
}

/// `shape` with `last` appended.
fn with_last(shape: &[usize], last: usize) -> Vec<usize> {
    shape.iter().copied().chain([last]).collect()
}

/// The dtype of `bit_width`-bit bits in the rules in force (`uint64` is `uint32` with x64
/// off), or JAX's `TypeError` for another width.
fn bits_dtype(bit_width: u32) -> Result<DType, Error> {
    let dtype = match bit_width {
        8 => DType::UInt8,
        16 => DType::UInt16,
        32 => DType::UInt32,
        64 => DType::UInt64,
        _ => return Err(type_error("requires 8-, 16-, 32- or 64-bit field width.")),
    };
    Ok(dtype.canonicalize(crate::config::rules().options().x64))
}

/// Bits from the output words of a counter-based cipher at each flat index of `shape`:
/// `word32(o)` for 32 bits and narrower (truncated), `word64(o)` for 64 (its low word with
/// x64 off, where `hi << 32` vanishes in `uint32`).
fn counter_bits<const N: usize>(
    bit_width: u32,
    shape: &[usize],
    block: impl Fn(u64) -> [u32; N],
    word32: impl Fn([u32; N]) -> u32,
    word64: impl Fn([u32; N]) -> u64,
) -> Result<Array, Error> {
    let dtype = bits_dtype(bit_width)?;
    let n = output_size(shape)?;
    let aval = ShapedArray::new(shape, dtype, false);
    super::structural::check_alloc(&aval)?;
    let data = match (bit_width, dtype) {
        (64, DType::UInt64) => Storage::words::<u64>(n, |o| {
            for (i, w) in o.iter_mut().enumerate() {
                *w = word64(block(i as u64));
            }
        }),
        (64, _) => Storage::words::<u32>(n, |o| {
            for (i, w) in o.iter_mut().enumerate() {
                *w = word64(block(i as u64)) as u32;
            }
        }),
        (8, _) => Storage::words::<u8>(n, |o| {
            for (i, w) in o.iter_mut().enumerate() {
                *w = word32(block(i as u64)) as u8;
            }
        }),
        (16, _) => Storage::words::<u16>(n, |o| {
            for (i, w) in o.iter_mut().enumerate() {
                *w = word32(block(i as u64)) as u16;
            }
        }),
        _ => Storage::words::<u32>(n, |o| {
            for (i, w) in o.iter_mut().enumerate() {
                *w = word32(block(i as u64));
            }
        }),
    };
    Ok(Array::from_parts(aval, data))
}

/// Split keys: key `i` of `(*shape, words)` is `f(counter(i))`.
fn split_keys<const W: usize>(
    shape: &[usize],
    f: impl Fn([u32; 2]) -> [u32; W],
) -> Result<Array, Error> {
    let n = output_size(shape)?;
    let words: Vec<u32> = (0..n as u64).flat_map(|i| f(counter(i))).collect();
    u32_array(&with_last(shape, W), words)
}

// ---- rbg

/// `rbg`'s seed: `threefry_seed(seed)` twice.
///
/// # Errors
///
/// JAX's: an assertion for a seed that is not 0-d, `TypeError` for a non-integer seed.
pub(crate) fn rbg_seed(seed: &Array) -> Result<Array, Error> {
    if seed.ndim() != 0 {
        return Err(assertion("not seed.shape"));
    }
    let [hi, lo] = seed_words(seed)?;
    u32_array(&[4], vec![hi, lo, hi, lo])
}

/// `rbg`'s split: each half split by threefry (`_threefry_split_foldlike`), key `i` the two
/// halves' key `i`.
///
/// # Errors
///
/// A key that is not `uint32[4]`; a shape of more elements than an array may hold.
pub(crate) fn rbg_split(key: &Array, shape: &[usize]) -> Result<Array, Error> {
    let [a, b, c, d] = key_words::<4>(key, "_rbg_split")?;
    split_keys(shape, |ctr| {
        let [x0, x1] = threefry2x32([a, b], ctr);
        let [y0, y1] = threefry2x32([c, d], ctr);
        [x0, x1, y0, y1]
    })
}

/// `rbg`'s fold-in: each half folded by threefry at `threefry_seed(data)` (`data` keeps its
/// dtype: an `int64` message has a high word).
///
/// # Errors
///
/// A key that is not `uint32[4]`; an assertion for non-0-d data; `TypeError` for non-integer
/// data.
pub(crate) fn rbg_fold_in(key: &Array, data: &Array) -> Result<Array, Error> {
    let [a, b, c, d] = key_words::<4>(key, "_rbg_fold_in")?;
    if data.ndim() != 0 {
        return Err(assertion("not data.shape"));
    }
    let ctr = seed_words(data)?;
    let [x0, x1] = threefry2x32([a, b], ctr);
    let [y0, y1] = threefry2x32([c, d], ctr);
    u32_array(&[4], vec![x0, x1, y0, y1])
}

/// The generator state of an `rbg` key (`u32[4]` bit-cast to `u64[2]`).
fn rbg_state(words: [u32; 4]) -> State {
    let w = |i: usize| u64::from(words[i]) | u64::from(words[i + 1]) << 32;
    [w(0), w(2)]
}

/// `rbg`'s (and `unsafe_rbg`'s) random bits: `lax.rng_bit_generator(key, shape,
/// uint{bit_width})` with the default algorithm.
///
/// # Errors
///
/// JAX's `TypeError`s: `_rbg_random_bits got invalid prng key.` for `uint32` key data of
/// another shape, `requires 8-, 16-, 32- or 64-bit field width.`; a key of another dtype as
/// `rng_bit_generator` refuses it.
pub(crate) fn rbg_random_bits(
    key: &Array,
    bit_width: u32,
    shape: &[usize],
) -> Result<Array, Error> {
    if key.shape() != [4] && key.dtype() == DType::UInt32 {
        return Err(type_error("_rbg_random_bits got invalid prng key."));
    }
    let dtype = bits_dtype(bit_width)?;
    let (_, bits) = super::rng::rng_bit_generator(key, shape, dtype, RandomAlgorithm::RngDefault)?;
    Ok(bits)
}

/// [`rbg_random_bits`] on key data with leading batch dimensions (`u32[*batch, 4]`), as JAX's
/// `random_bits` primitive computes it under its `vmap`: the first key draws `(*batch,
/// *shape)` (`rng_bit_generator`'s batching rule).
///
/// # Errors
///
/// As [`rbg_random_bits`]; JAX's `IndexError` for an empty batch.
pub(crate) fn rbg_random_bits_batched(
    keys: &Array,
    bit_width: u32,
    shape: &[usize],
) -> Result<Array, Error> {
    let Some((_, batch)) = keys.shape().split_last() else {
        return rbg_random_bits(keys, bit_width, shape);
    };
    if batch.is_empty() {
        return rbg_random_bits(keys, bit_width, shape);
    }
    let first = first_key(keys)?;
    let full: Vec<usize> = batch.iter().chain(shape).copied().collect();
    rbg_random_bits(&first, bit_width, &full)
}

/// The first key of key data with batch dimensions; JAX's `IndexError` for an empty batch.
fn first_key(keys: &Array) -> Result<Array, Error> {
    let Some((&words, batch)) = keys.shape().split_last() else {
        return Ok(keys.clone());
    };
    if batch.contains(&0) {
        return Err(empty_batch());
    }
    let w = crate::array::layout(keys.dtype()).0;
    Array::from_bytes(keys.dtype(), &[words], &keys.as_bytes()[..words * w])
}

/// `keys[0]` of an empty batch, as JAX refuses it.
fn empty_batch() -> Error {
    Error::refused(
        Exception::IndexError,
        "index is out of bounds for axis 0 with size 0",
    )
}

// ---- unsafe_rbg

/// Philox block `b` of an `rbg` state: the four words XLA draws as 32-bit elements `4b..4b +
/// 4`.
fn block(state: State, b: u64) -> [u32; 4] {
    let mut o = [0u32; 4];
    rng_bit::philox32(state, 4 * b as usize, &mut o, |x| x);
    o
}

/// `unsafe_rbg`'s split: rows `0, 10, 20, …` of `rng_bit_generator(key, (10 n, 4))` (row
/// `r` is Philox block `r`).
///
/// # Errors
///
/// A key that is not `uint32[4]`; a shape of more elements than an array may hold.
pub(crate) fn unsafe_rbg_split(key: &Array, shape: &[usize]) -> Result<Array, Error> {
    let state = rbg_state(key_words::<4>(key, "_unsafe_rbg_split")?);
    let n = output_size(shape)?;
    let words: Vec<u32> = (0..n as u64).flat_map(|i| block(state, 10 * i)).collect();
    u32_array(&with_last(shape, 4), words)
}

/// [`unsafe_rbg_split`] on key data with leading batch dimensions, as JAX's `random_split`
/// primitive computes it: the first key draws every example's rows, so the result is the
/// first key's split into `(*batch, *shape)` keys.
///
/// # Errors
///
/// As [`unsafe_rbg_split`]; JAX's `IndexError` for an empty batch.
pub(crate) fn unsafe_rbg_split_batched(keys: &Array, shape: &[usize]) -> Result<Array, Error> {
    let first = first_key(keys)?;
    let batch = &keys.shape()[..keys.ndim().saturating_sub(1)];
    let full: Vec<usize> = batch.iter().chain(shape).copied().collect();
    unsafe_rbg_split(&first, &full)
}

/// The state of `rbg_seed(data)`.
fn data_state(data: &Array) -> Result<State, Error> {
    if data.ndim() != 0 {
        return Err(assertion("not data.shape"));
    }
    let [hi, lo] = seed_words(data)?;
    Ok(rbg_state([hi, lo, hi, lo]))
}

/// `unsafe_rbg`'s fold-in: the key XORed with the last row of `rng_bit_generator(
/// rbg_seed(data), (10, 4))` (Philox block 9).
///
/// # Errors
///
/// A key that is not `uint32[4]`; an assertion for non-0-d data; `TypeError` for non-integer
/// data.
pub(crate) fn unsafe_rbg_fold_in(key: &Array, data: &Array) -> Result<Array, Error> {
    let k = key_words::<4>(key, "_unsafe_rbg_fold_in")?;
    let row = block(data_state(data)?, 9);
    u32_array(&[4], (0..4).map(|i| k[i] ^ row[i]).collect())
}

/// [`unsafe_rbg_fold_in`] of key data `keys` (`u32[*kshape, 4]`) and messages `msgs` (of the
/// same rank, or either 0-d), broadcast as JAX's `random_fold_in` primitive maps it
/// (`iterated_vmap_binary_bcast`): where the messages are batched, `rng_bit_generator`'s
/// batching rule draws from the seed of the first message, and an output key takes row 9 of
/// its example's rows: Philox block `10 j + 9`, `j` its flat index over the dimensions along
/// which the messages are mapped.
///
/// # Errors
///
/// As [`unsafe_rbg_fold_in`]; `TypeError` for ranks or shapes that do not broadcast; JAX's
/// `IndexError` when a dimension the messages are mapped along is empty.
pub(crate) fn unsafe_rbg_fold_in_batched(keys: &Array, msgs: &Array) -> Result<Array, Error> {
    let Some((&four, kshape)) = keys.shape().split_last() else {
        return Err(type_error(
            "unsafe_rbg keys must be uint32[..., 4] key data",
        ));
    };
    let mshape = msgs.shape();
    if four != 4 || keys.dtype() != DType::UInt32 {
        return Err(type_error(format!(
            "unsafe_rbg keys must be uint32[..., 4] key data, got {}",
            keys.aval().long_name()
        )));
    }
    // The output's shape and, per dimension, whether the messages are mapped along it.
    let (out, mapped): (Vec<usize>, Vec<bool>) = if mshape.is_empty() {
        (kshape.to_vec(), vec![false; kshape.len()])
    } else if kshape.is_empty() {
        (mshape.to_vec(), vec![true; mshape.len()])
    } else if kshape.len() == mshape.len() {
        kshape
            .iter()
            .zip(mshape)
            .map(|(&k, &m)| match (k, m) {
                _ if k == m => Ok((k, true)),
                (1, _) => Ok((m, true)),
                (_, 1) => Ok((k, false)),
                _ => Err(type_error(format!(
                    "random_fold_in got incompatible shapes for broadcasting: {}, {}.",
                    py_shape(kshape),
                    py_shape(mshape)
                ))),
            })
            .collect::<Result<Vec<_>, Error>>()?
            .into_iter()
            .unzip()
    } else {
        return Err(type_error(format!(
            "random_fold_in: arrays must have the same number of dimensions, got {{{}, {}}}",
            kshape.len().min(mshape.len()),
            kshape.len().max(mshape.len())
        )));
    };
    if (0..out.len()).any(|d| mapped[d] && out[d] == 0) {
        return Err(empty_batch());
    }
    let n = output_size(&out)?;
    let key_words = keys.to_vec::<u32>()?;
    // The seed: the first message (its dtype kept, as `rbg_seed` takes it).
    let first = if n == 0 {
        None
    } else {
        let w = crate::array::layout(msgs.dtype()).0;
        Some(Array::from_bytes(msgs.dtype(), &[], &msgs.as_bytes()[..w])?)
    };
    let state = match &first {
        Some(m) => Some(data_state(m)?),
        None => None,
    };
    let strides = |shape: &[usize]| -> Vec<usize> {
        let mut s = vec![1; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            s[d] = s[d + 1] * shape[d + 1];
        }
        s
    };
    let (out_strides, key_strides) = (strides(&out), strides(kshape));
    // The dimensions the messages are mapped along, and their strides among themselves.
    let mapped_dims: Vec<usize> = (0..out.len()).filter(|&d| mapped[d]).collect();
    let mapped_shape: Vec<usize> = mapped_dims.iter().map(|&d| out[d]).collect();
    let mapped_strides = strides(&mapped_shape);
    let mut words = Vec::with_capacity(4 * n);
    for i in 0..n {
        let (mut k, mut j, mut rest) = (0usize, 0usize, i);
        for d in 0..out.len() {
            let at = rest / out_strides[d];
            rest %= out_strides[d];
            if !kshape.is_empty() && kshape[d] != 1 {
                k += at * key_strides[d];
            }
            if let Some(p) = mapped_dims.iter().position(|&m| m == d) {
                j += at * mapped_strides[p];
            }
        }
        let row = match state {
            Some(s) => block(s, 10 * j as u64 + 9),
            None => [0; 4],
        };
        words.extend((0..4).map(|w| key_words[4 * k + w] ^ row[w]));
    }
    u32_array(&with_last(&out, 4), words)
}

// ---- threefry4x32

/// `threefry4x32`'s seed: Threefry-4x32 of the key `(hi, lo, 0, 0)` at counter 0.
///
/// # Errors
///
/// JAX's `TypeError`s for a seed that is not a 0-d integer.
pub(crate) fn threefry4x32_seed(seed: &Array) -> Result<Array, Error> {
    let [hi, lo] = seed_words(seed)?;
    u32_array(&[4], threefry4x32([hi, lo, 0, 0], [0; 4]).to_vec())
}

/// `threefry4x32`'s split: key `i` is Threefry-4x32 at counter `(0, 0, i >> 32, i)`.
///
/// # Errors
///
/// A key that is not `uint32[4]`; a shape of more elements than an array may hold.
pub(crate) fn threefry4x32_split(key: &Array, shape: &[usize]) -> Result<Array, Error> {
    let k = key_words::<4>(key, "threefry4x32_split")?;
    split_keys(shape, |[hi, lo]| threefry4x32(k, [0, 0, hi, lo]))
}

/// `threefry4x32`'s fold-in: Threefry-4x32 at counter `(0, 0, 0, data)`.
///
/// # Errors
///
/// A key that is not `uint32[4]`; data that is not a 0-d integer.
pub(crate) fn threefry4x32_fold_in(key: &Array, data: &Array) -> Result<Array, Error> {
    let k = key_words::<4>(key, "threefry4x32_fold_in")?;
    // JAX hands the data to its threefry4x32 primitive as it is: only uint32 goes.
    if data.dtype() != DType::UInt32 {
        let weak = if data.weak_type() {
            ", weak_type=True"
        } else {
            ""
        };
        let data_aval = format!("ShapedArray({}{weak})", data.aval().long_text(false));
        let args: Vec<String> = std::iter::repeat_n("ShapedArray(uint32[])".to_string(), 7)
            .chain([data_aval])
            .collect();
        return Err(type_error(format!(
            "Arguments to threefry4x32 must have uint32 type, got ({})",
            args.join(", ")
        )));
    }
    u32_array(&[4], threefry4x32(k, [0, 0, 0, message(data)?]).to_vec())
}

/// `threefry4x32`'s random bits: counter `(i >> 32, i, 0, 0)`; the XOR of the four words, 64
/// bits `(o0 ^ o2) << 32 | (o1 ^ o3)`.
///
/// # Errors
///
/// JAX's `TypeError`s for a key that is not `uint32[4]` (`threefry4x32_random_bits got
/// invalid prng key.`) and a bit width other than 8, 16, 32, 64.
pub(crate) fn threefry4x32_random_bits(
    key: &Array,
    bit_width: u32,
    shape: &[usize],
) -> Result<Array, Error> {
    let k = key_words::<4>(key, "threefry4x32_random_bits")
        .map_err(|_| type_error("threefry4x32_random_bits got invalid prng key."))?;
    counter_bits(
        bit_width,
        shape,
        |i| {
            let [hi, lo] = counter(i);
            threefry4x32(k, [hi, lo, 0, 0])
        },
        |o| o[0] ^ o[1] ^ o[2] ^ o[3],
        |o| u64::from(o[0] ^ o[2]) << 32 | u64::from(o[1] ^ o[3]),
    )
}

// ---- philox4x32

/// `philox4x32`'s seed: Philox-4x32 of counter `(hi, lo, 0, 0)` under key 0, its first two
/// words.
///
/// # Errors
///
/// JAX's `TypeError`s for a seed that is not a 0-d integer.
pub(crate) fn philox4x32_seed(seed: &Array) -> Result<Array, Error> {
    let [hi, lo] = seed_words(seed)?;
    let o = philox4x32([hi, lo, 0, 0], [0, 0]);
    u32_array(&[2], vec![o[0], o[1]])
}

/// `philox4x32`'s split: key `i` is the first two words at counter `(0, 0, i >> 32, i)`.
///
/// # Errors
///
/// A key that is not `uint32[2]`; a shape of more elements than an array may hold.
pub(crate) fn philox4x32_split(key: &Array, shape: &[usize]) -> Result<Array, Error> {
    let k = key_words::<2>(key, "philox4x32_split")?;
    split_keys(shape, |[hi, lo]| {
        let o = philox4x32([0, 0, hi, lo], k);
        [o[0], o[1]]
    })
}

/// `philox4x32`'s fold-in: the first two words at counter `(0, 0, 0, data)`.
///
/// # Errors
///
/// A key that is not `uint32[2]`; data that is not a 0-d integer.
pub(crate) fn philox4x32_fold_in(key: &Array, data: &Array) -> Result<Array, Error> {
    let k = key_words::<2>(key, "philox4x32_fold_in")?;
    let o = philox4x32([0, 0, 0, message(data)?], k);
    u32_array(&[2], vec![o[0], o[1]])
}

/// `philox4x32`'s random bits: counter `(i >> 32, i, 0, 0)`; the XOR of the four words, 64
/// bits `o0 << 32 | o1`.
///
/// # Errors
///
/// JAX's `TypeError`s for a key that is not `uint32[2]` and a bit width other than 8, 16,
/// 32, 64.
pub(crate) fn philox4x32_random_bits(
    key: &Array,
    bit_width: u32,
    shape: &[usize],
) -> Result<Array, Error> {
    let k = key_words::<2>(key, "philox4x32_random_bits")
        .map_err(|_| type_error("philox4x32_random_bits got invalid prng key."))?;
    counter_bits(
        bit_width,
        shape,
        |i| {
            let [hi, lo] = counter(i);
            philox4x32([hi, lo, 0, 0], k)
        },
        |o| o[0] ^ o[1] ^ o[2] ^ o[3],
        |o| u64::from(o[0]) << 32 | u64::from(o[1]),
    )
}

// ---- philox2x32

/// `philox2x32`'s seed: Philox-2x32 of counter `(hi, lo)` under key 0, its first word.
///
/// # Errors
///
/// JAX's `TypeError`s for a seed that is not a 0-d integer.
pub(crate) fn philox2x32_seed(seed: &Array) -> Result<Array, Error> {
    let [hi, lo] = seed_words(seed)?;
    u32_array(&[1], vec![philox2x32([hi, lo], 0)[0]])
}

/// `philox2x32`'s split: key `i` is the first word at counter `(i >> 32, i)`.
///
/// # Errors
///
/// A key that is not `uint32[1]`; a shape of more elements than an array may hold.
pub(crate) fn philox2x32_split(key: &Array, shape: &[usize]) -> Result<Array, Error> {
    let [k] = key_words::<1>(key, "philox2x32_split")?;
    split_keys(shape, |ctr| [philox2x32(ctr, k)[0]])
}

/// `philox2x32`'s fold-in: the first word at counter `(0, data)`.
///
/// # Errors
///
/// A key that is not `uint32[1]`; data that is not a 0-d integer.
pub(crate) fn philox2x32_fold_in(key: &Array, data: &Array) -> Result<Array, Error> {
    let [k] = key_words::<1>(key, "philox2x32_fold_in")?;
    u32_array(&[1], vec![philox2x32([0, message(data)?], k)[0]])
}

/// `philox2x32`'s random bits: counter `(i >> 32, i)`; `o0 ^ o1`, 64 bits `o0 << 32 | o1`.
///
/// # Errors
///
/// JAX's `TypeError`s for a key that is not `uint32[1]` and a bit width other than 8, 16,
/// 32, 64.
pub(crate) fn philox2x32_random_bits(
    key: &Array,
    bit_width: u32,
    shape: &[usize],
) -> Result<Array, Error> {
    let [k] = key_words::<1>(key, "philox2x32_random_bits")
        .map_err(|_| type_error("philox2x32_random_bits got invalid prng key."))?;
    counter_bits(
        bit_width,
        shape,
        |i| philox2x32(counter(i), k),
        |o| o[0] ^ o[1],
        |o| u64::from(o[0]) << 32 | u64::from(o[1]),
    )
}

/// The test hook: the built-in functions by implementation name, for the integration tests.
#[doc(hidden)]
pub mod test_hook {
    use super::*;

    fn fns(name: &str) -> Result<&'static BuiltinImpl, Error> {
        KeyImpl::by_name(name)
            .and_then(builtin)
            .ok_or_else(|| crate::array::invalid("impl", format!("no built-in {name}")))
    }

    /// `seed` of implementation `name`.
    ///
    /// # Errors
    ///
    /// The implementation's.
    pub fn seed(name: &str, seed: &Array) -> Result<Array, Error> {
        (fns(name)?.seed)(seed)
    }

    /// `split` of implementation `name`.
    ///
    /// # Errors
    ///
    /// The implementation's.
    pub fn split(name: &str, key: &Array, shape: &[usize]) -> Result<Array, Error> {
        (fns(name)?.split)(key, shape)
    }

    /// `fold_in` of implementation `name`.
    ///
    /// # Errors
    ///
    /// The implementation's.
    pub fn fold_in(name: &str, key: &Array, data: &Array) -> Result<Array, Error> {
        (fns(name)?.fold_in)(key, data)
    }

    /// `random_bits` of implementation `name`.
    ///
    /// # Errors
    ///
    /// The implementation's.
    pub fn random_bits(
        name: &str,
        key: &Array,
        bit_width: u32,
        shape: &[usize],
    ) -> Result<Array, Error> {
        (fns(name)?.random_bits)(key, bit_width, shape)
    }

    /// `random_bits` on a batch of key data, as JAX's primitive computes it (rbg and
    /// unsafe_rbg: from the first key; the others key by key).
    ///
    /// # Errors
    ///
    /// The implementation's.
    pub fn random_bits_batched(
        name: &str,
        keys: &Array,
        bit_width: u32,
        shape: &[usize],
    ) -> Result<Array, Error> {
        match name {
            "rbg" | "unsafe_rbg" => rbg_random_bits_batched(keys, bit_width, shape),
            _ => Err(crate::array::invalid(
                "impl",
                format!("{name} maps key by key"),
            )),
        }
    }

    /// `unsafe_rbg`'s split of a batch of key data, as JAX's primitive computes it.
    ///
    /// # Errors
    ///
    /// The implementation's.
    pub fn unsafe_rbg_split_batched(keys: &Array, shape: &[usize]) -> Result<Array, Error> {
        super::unsafe_rbg_split_batched(keys, shape)
    }

    /// `unsafe_rbg`'s fold-in of key data and messages broadcast, as JAX's primitive computes
    /// it.
    ///
    /// # Errors
    ///
    /// The implementation's.
    pub fn unsafe_rbg_fold_in_batched(keys: &Array, msgs: &Array) -> Result<Array, Error> {
        super::unsafe_rbg_fold_in_batched(keys, msgs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_key_and_bits() {
        // jax.random.key(0, impl='rbg'): [0 0 0 0]; jax.random.bits(key, (3,)) of it.
        let key = rbg_seed(&Array::scalar(0i32)).unwrap();
        assert_eq!(key.to_vec::<u32>().unwrap(), [0, 0, 0, 0]);
        let bits = rbg_random_bits(&key, 32, &[3]).unwrap();
        assert_eq!(
            bits.to_vec::<u32>().unwrap(),
            [1_713_891_541, 3_781_805_453, 3_159_862_348]
        );
    }

    #[test]
    fn every_builtin_is_found_by_its_implementation() {
        for k in [
            &key::RBG,
            &key::UNSAFE_RBG,
            &key::THREEFRY4X32,
            &key::PHILOX4X32,
            &key::PHILOX2X32,
        ] {
            let f = builtin(k).unwrap();
            assert_eq!(f.key.name, k.name);
            let seed = (f.seed)(&Array::scalar(5u32)).unwrap();
            assert_eq!(seed.shape(), [k.key_words]);
            let keys = (f.split)(&seed, &[2, 3]).unwrap();
            assert_eq!(keys.shape(), [2, 3, k.key_words]);
            let folded = (f.fold_in)(&seed, &Array::scalar(7u32)).unwrap();
            assert_eq!(folded.shape(), [k.key_words]);
            let bits = (f.random_bits)(&seed, 16, &[4]).unwrap();
            assert_eq!(bits.aval().to_string(), "u16[4]");
        }
        assert!(builtin(&key::THREEFRY2X32).is_none());
    }
}
