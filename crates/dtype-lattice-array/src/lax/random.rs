//! The PRNG primitives of `jax._src.random.prng` on typed key arrays (JEP 9263):
//! `random_seed[impl]`, `random_split[shape]`, `random_fold_in`, `random_bits[bit_width shape]`,
//! `random_wrap[impl]` and `random_unwrap`, with the names, parameters and output avals
//! `jax.make_jaxpr` prints in JAX 0.10.2.
//!
//! A key array is an [`Array`] of a key dtype (`key<fry>`): its shape excludes the key data's
//! trailing dimension and its storage holds `key_words` `u32` words per key. Every primitive
//! maps over the keys (JAX's `iterated_vmap_unary`): `random_split` and `random_bits` append
//! their `shape` to the keys' shape, `random_fold_in` broadcasts keys against messages of the
//! same rank. The implementations are the bit-exact kernels of [`crate::random`]
//! (threefry2x32, `jax_threefry_partitionable=True`); other key implementations are dtypes
//! only: `random_wrap`/`random_unwrap` accept them, the others refuse them.
//!
//! Non-key operands are refused with a `TypeError` worded as `jax.random`'s `random_unwrap`
//! words it (`random_split takes key array operand, got keys.dtype=dtype('uint32')`); JAX's
//! primitives themselves fail there with an internal `AttributeError`.
//!
//! As in JAX, some checks belong to the implementation rather than the shape rule:
//! `random_seed` stages any operand dtype and refuses a non-integer seed when evaluated
//! (`PRNG key seed must be an integer; got JitTracer(float32[])`). `random_bits` refuses a
//! `bit_width` other than 8, 16, 32 or 64 in its shape rule with the implementation's message
//! (`requires 8-, 16-, 32- or 64-bit field width.`; JAX's staging fails differently there).
//! Its output dtype for `bit_width=64` follows x64 in the rules in force
//! ([`crate::config::rules`]): `uint64`, or with x64 off `uint32` holding the low words (JAX's
//! canonicalisation, bit for bit).
//!
//! ```
//! use dtype_lattice_array::core::{bind, Param, Params};
//! use dtype_lattice_array::{Array, lax};
//! use dtype_lattice::key::THREEFRY2X32;
//!
//! let seed = Array::scalar(42i32);
//! let p = Params::new().with("impl", Param::KeyImpl(&THREEFRY2X32));
//! assert_eq!(p.to_string(), "[impl=fry]");
//! let key = bind(&lax::RANDOM_SEED, &[&seed], &p)?.remove(0);
//! assert_eq!(key.aval().to_string(), "key<fry>[]");
//! let data = bind(&lax::RANDOM_UNWRAP, &[&key], &Params::new())?;
//! assert_eq!(data[0].to_vec::<u32>()?, [0, 42]);
//! # Ok::<(), dtype_lattice::Error>(())
//! ```

use super::{ad, batching};
use crate::core::bind;

use super::{Avals, Outputs};
use crate::core::BatchDims;
use dtype_lattice::error::Exception;
use dtype_lattice::key::KeyImpl;
use dtype_lattice::{DType, Error};

use super::structural::strides;
use super::{Param, Params, Primitive};
use crate::array::storage::Word64;
use crate::array::storage::sealed::Words;
use crate::array::{Array, ShapedArray, Storage, py_shape};
use crate::prng::{Random, batch, output_size};

/// The implementation of a key operand, or JAX's `TypeError` for a non-key operand.
fn key_operand(prim: &str, x: &ShapedArray) -> Result<&'static KeyImpl, Error> {
    x.dtype().key_impl().ok_or_else(|| {
        Error::refused(
            Exception::TypeError,
            format!(
                "{prim} takes key array operand, got keys.dtype=dtype('{}')",
                x.dtype()
            ),
        )
    })
}

/// The `impl` parameter.
fn impl_param(prim: &str, params: &Params) -> Result<&'static KeyImpl, Error> {
    match params.require(prim, "impl")? {
        Param::KeyImpl(k) => Ok(k),
        _ => Err(super::bad_param(prim, "impl", "not a PRNG implementation")),
    }
}

/// A key array's words (`key_words` per key, row-major).
fn key_words(x: &Array) -> Result<&[u32], Error> {
    u32::view(x.storage()).ok_or_else(|| crate::array::invalid("keys", "storage width"))
}

/// A key array of `aval` from its words.
fn keys_array(aval: &ShapedArray, words: Vec<u32>) -> Array {
    Array::from_parts(aval.clone(), u32::into_storage(words))
}

/// The number of keys an output shape holds, within the in-memory limit (JAX's
/// `NotImplementedError` beyond 2^64).
fn output_keys(shape: &[usize]) -> Result<usize, Error> {
    output_size(shape)
}

// random_seed ------------------------------------------------------------------------------

fn seed_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let k = impl_param(prim.name, params)?;
    // JAX stages any operand dtype; the implementation checks it.
    Ok(smallvec::smallvec![ShapedArray::new(
        inputs[0].shape(),
        k.dtype(),
        false
    )])
}

fn seed_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let seeds = inputs[0];
    let k = impl_param(prim.name, params)?;
    let dtype = seeds.dtype();
    if !dtype.kind().is_integer() {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "PRNG key seed must be an integer; got JitTracer({}{dtype}[])",
                if seeds.weak_type() { "~" } else { "" }
            ),
        ));
    }
    if let Some(f) = super::prng_impl::functions(k)? {
        // One seed at a time, as JAX maps the implementation's `seed` over the seeds.
        let eb = crate::array::element_bytes(dtype);
        let mut words: Vec<u8> = Vec::new();
        for one in seeds.as_bytes().chunks_exact(eb.max(1)) {
            let seed = Array::from_bytes(dtype, &[], one)?;
            let data = super::prng_impl::call(k, "seed", &[k.key_words], &[DType::UInt32], || {
                f.seed(&seed)
            })?;
            words.extend_from_slice(data.as_bytes());
        }
        return Ok(smallvec::smallvec![Array::from_bytes(
            out[0].dtype(),
            out[0].shape(),
            &words
        )?]);
    }
    // threefry_seed: the high word is the seed shifted right by 32 (logically: nothing is left
    // of a narrower seed), the low word the seed's (sign-extended) low 32 bits.
    let values: Vec<u64> = if dtype == DType::UInt64 {
        seeds.to_vec::<u64>()?
    } else {
        seeds
            .astype(DType::Int64)?
            .to_vec::<i64>()?
            .into_iter()
            .map(|v| v as u64)
            .collect()
    };
    let wide = dtype.bits() == 64;
    let mut words = Vec::with_capacity(values.len() * 2);
    for v in values {
        words.push(if wide { (v >> 32) as u32 } else { 0 });
        words.push(v as u32);
    }
    Ok(smallvec::smallvec![keys_array(&out[0], words)])
}

/// `random_seed[impl]`: keys from integer seeds (`jax.random.key`), one per seed.
pub static RANDOM_SEED: Primitive =
    Primitive::new("random_seed", Some(1), seed_shape_rule, seed_impl)
        .jvp(ad::zero_jvp)
        .batch(batching::vectorized)
        .takes_float0();

// random_split -----------------------------------------------------------------------------

fn split_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let keys = inputs[0];
    key_operand(prim.name, keys)?;
    let shape = params.usizes(prim.name, "shape")?;
    let out: Vec<usize> = keys.shape().iter().chain(&shape).copied().collect();
    Ok(smallvec::smallvec![ShapedArray::new(
        &out,
        keys.dtype(),
        false
    )])
}

fn split_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let keys = inputs[0];
    let shape = params.usizes(prim.name, "shape")?;
    let k = key_operand(prim.name, keys.aval())?;
    if let Some(f) = super::prng_impl::functions(k)? {
        output_size(out[0].shape())?;
        let data = key_data(keys, k)?;
        let want: Vec<usize> = out[0]
            .shape()
            .iter()
            .copied()
            .chain([k.key_words])
            .collect();
        let split = super::prng_impl::call(k, "split", &want, &[DType::UInt32], || {
            f.split_batched(&data, &shape)
        })?;
        return Ok(smallvec::smallvec![Array::from_bytes(
            out[0].dtype(),
            out[0].shape(),
            split.as_bytes()
        )?]);
    }
    // Each key's split alone must be a valid one (JAX's 2^64 refusal, the memory limit).
    let per_key = output_size(&shape)?;
    let total = output_keys(out[0].shape())?;
    let words = key_words(keys)?;
    reserve::<u32>(2 * total, "keys")?;
    let data = Storage::words::<u32>(2 * total, |data| batch::split(words, per_key, data));
    Ok(smallvec::smallvec![Array::from_parts(out[0].clone(), data)])
}

/// A key array's data as a `uint32[*shape, key_words]` array (the same words).
fn key_data(keys: &Array, k: &KeyImpl) -> Result<Array, Error> {
    let shape: Vec<usize> = keys.shape().iter().copied().chain([k.key_words]).collect();
    Array::from_bytes(DType::UInt32, &shape, keys.as_bytes())
}

/// JAX's failure to allocate, as an error rather than an abort: `n` words of `W` are tried
/// first (for outputs of more than a mebibyte).
fn reserve<W>(n: usize, what: &str) -> Result<(), Error> {
    if n.saturating_mul(size_of::<W>()) > 1 << 20 {
        Vec::<W>::new()
            .try_reserve_exact(n)
            .map_err(|_| crate::array::invalid("shape", format!("cannot allocate the {what}")))?;
    }
    Ok(())
}

/// `random_split[shape]`: `shape` new keys under each key (`jax.random.split`).
pub static RANDOM_SPLIT: Primitive =
    Primitive::new("random_split", Some(1), split_shape_rule, split_impl)
        .jvp(ad::zero_jvp)
        .batch(batching::vectorized)
        .takes_float0();

// random_fold_in ---------------------------------------------------------------------------

fn fold_in_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    _: &Params,
) -> Result<Avals, Error> {
    let (keys, msgs) = (inputs[0], inputs[1]);
    key_operand(prim.name, keys)?;
    let shape = broadcasting_shape(prim.name, keys.shape(), msgs.shape())?;
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        keys.dtype(),
        false
    )])
}

/// `lax.broadcasting_shape_rule` for two operands: a 0-d operand broadcasts to any shape (the
/// rule leaves scalars out, so `vmap` of `fold_in(key, i)` folds one message into a batch of
/// keys); otherwise equal ranks, each dimension equal or 1.
pub(crate) fn broadcasting_shape(
    name: &str,
    a: &[usize],
    b: &[usize],
) -> Result<Vec<usize>, Error> {
    if a.is_empty() || b.is_empty() {
        return Ok(if a.is_empty() { b } else { a }.to_vec());
    }
    if a.len() != b.len() {
        let (lo, hi) = (a.len().min(b.len()), a.len().max(b.len()));
        return Err(Error::refused(
            Exception::TypeError,
            format!("{name}: arrays must have the same number of dimensions, got {{{lo}, {hi}}}"),
        ));
    }
    a.iter()
        .zip(b)
        .map(|(&x, &y)| match (x, y) {
            _ if x == y => Ok(x),
            (1, _) => Ok(y),
            (_, 1) => Ok(x),
            _ => Err(Error::refused(
                Exception::TypeError,
                format!(
                    "{name} got incompatible shapes for broadcasting: {}, {}.",
                    py_shape(a),
                    py_shape(b)
                ),
            )),
        })
        .collect()
}

/// The flat input index of each output index, for an operand broadcast to `out` (same rank).
pub(crate) fn broadcast_index(shape: &[usize], out: &[usize]) -> impl Fn(usize) -> usize {
    let out_strides = strides(out);
    let in_strides = strides(shape);
    let step: Vec<usize> = shape
        .iter()
        .zip(&in_strides)
        .map(|(&d, &s)| if d == 1 { 0 } else { s })
        .collect();
    move |mut i| {
        let mut j = 0;
        for (k, &s) in out_strides.iter().enumerate() {
            j += (i / s) * step[k];
            i %= s;
        }
        j
    }
}

fn fold_in_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let (keys, msgs) = (inputs[0], inputs[1]);
    let k = key_operand("random_fold_in", keys.aval())?;
    // threefry_fold_in: jnp.asarray(data, dtype='uint32'), then Threefry at (0, data).
    let msgs_u32 = msgs.astype(DType::UInt32)?;
    let msg = msgs_u32.as_slice::<u32>()?;
    let words = key_words(keys)?;
    let n = output_keys(out[0].shape())?;
    // Each operand as words with a step per output element: 1 when it has the output's
    // shape, 0 when it has one element, else gathered to the output's shape first.
    let shape = out[0].shape();
    let kw = k.key_words;
    let (keys_b, key_step) = stepped(words, kw, keys.shape(), shape);
    let (msgs_b, msg_step) = stepped(msg, 1, msgs.shape(), shape);
    if let Some(f) = super::prng_impl::functions(k)? {
        let data = key_data(keys, k)?;
        let want: Vec<usize> = shape.iter().copied().chain([kw]).collect();
        let folded = super::prng_impl::call(k, "fold_in", &want, &[DType::UInt32], || {
            f.fold_in_batched(&data, &msgs_u32)
        })?;
        return Ok(smallvec::smallvec![Array::from_bytes(
            out[0].dtype(),
            shape,
            folded.as_bytes()
        )?]);
    }
    let data = Storage::words::<u32>(2 * n, |data| {
        batch::fold_in(&keys_b, key_step, &msgs_b, msg_step, data)
    });
    Ok(smallvec::smallvec![Array::from_parts(out[0].clone(), data)])
}

/// An operand of `k` words per element broadcast to `out` (same rank), as words and a step
/// per output element: its own words with step 1 (of the output's shape) or 0 (one element),
/// else its words gathered to the output's shape.
fn stepped<'a>(
    words: &'a [u32],
    k: usize,
    shape: &[usize],
    out: &[usize],
) -> (std::borrow::Cow<'a, [u32]>, usize) {
    if shape == out {
        (words.into(), 1)
    } else if shape.iter().all(|&d| d == 1) {
        (words.into(), 0)
    } else {
        let at = broadcast_index(shape, out);
        let n: usize = out.iter().product();
        let gathered = (0..n).flat_map(|i| &words[k * at(i)..k * at(i) + k]);
        (gathered.copied().collect::<Vec<u32>>().into(), 1)
    }
}

/// `random_fold_in`: keys with messages folded in (`jax.random.fold_in`), broadcast.
pub static RANDOM_FOLD_IN: Primitive =
    Primitive::new("random_fold_in", Some(2), fold_in_shape_rule, fold_in_impl)
        .jvp(ad::zero_jvp)
        .batch(random_fold_in_batch)
        .takes_float0();

// random_bits ------------------------------------------------------------------------------

fn bit_width(prim: &str, params: &Params) -> Result<u32, Error> {
    match params.require(prim, "bit_width")? {
        Param::Int(w @ (8 | 16 | 32 | 64)) => Ok(*w as u32),
        Param::Int(_) => Err(Error::refused(
            Exception::TypeError,
            "requires 8-, 16-, 32- or 64-bit field width.",
        )),
        _ => Err(super::bad_param(prim, "bit_width", "not an integer")),
    }
}

fn bits_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let keys = inputs[0];
    key_operand(prim.name, keys)?;
    let width = bit_width(prim.name, params)?;
    let shape = params.usizes(prim.name, "shape")?;
    let dtype = match width {
        8 => DType::UInt8,
        16 => DType::UInt16,
        32 => DType::UInt32,
        // With x64 off JAX canonicalises uint64 to uint32 (the low words: `hi << 32` is 0).
        _ => DType::UInt64.canonicalize(crate::config::rules().options().x64),
    };
    let out: Vec<usize> = keys.shape().iter().chain(&shape).copied().collect();
    Ok(smallvec::smallvec![ShapedArray::new(&out, dtype, false)])
}

fn bits_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let keys = inputs[0];
    let width = bit_width(prim.name, params)?;
    let shape = params.usizes(prim.name, "shape")?;
    let k = key_operand(prim.name, keys.aval())?;
    if let Some(f) = super::prng_impl::functions(k)? {
        output_size(&shape)?;
        output_size(out[0].shape())?;
        let bits = |w: u32| match w {
            8 => DType::UInt8,
            16 => DType::UInt16,
            32 => DType::UInt32,
            _ => DType::UInt64,
        };
        // 64-bit bits may come canonicalised to uint32 (x64 off), as JAX's would.
        let dtypes = [bits(width), out[0].dtype()];
        let data = key_data(keys, k)?;
        let b = super::prng_impl::call(k, "random_bits", out[0].shape(), &dtypes, || {
            f.random_bits_batched(&data, width, &shape)
        })?;
        return Ok(smallvec::smallvec![b.astype(out[0].dtype())?]);
    }
    // Each key's bits alone must be a valid sampler output (JAX's 2^64 refusal), and all of
    // them must fit in memory.
    let per_key = output_size(&shape)?;
    let total = output_size(out[0].shape())?;
    let words = key_words(keys)?;
    let threads = Random::new().thread_count();
    // The width is explicit here: 64 stays 64 whatever x64 says; 64-bit bits in uint32 (x64
    // off) keep their low words.
    fn fill<W: Word64 + Send>(
        words: &[u32],
        per_key: usize,
        width: u32,
        threads: usize,
        total: usize,
    ) -> Result<Storage, Error> {
        reserve::<W>(total, "bits")?;
        Ok(Storage::words::<W>(total, |out| {
            batch::bits(words, per_key, width, threads, out)
        }))
    }
    let data = match crate::array::layout(out[0].dtype()).0 {
        1 => fill::<u8>(words, per_key, width, threads, total)?,
        2 => fill::<u16>(words, per_key, width, threads, total)?,
        4 => fill::<u32>(words, per_key, width, threads, total)?,
        _ => fill::<u64>(words, per_key, width, threads, total)?,
    };
    Ok(smallvec::smallvec![Array::from_parts(out[0].clone(), data)])
}

/// `random_bits[bit_width shape]`: unsigned bits under each key (`jax.random.bits`).
pub static RANDOM_BITS: Primitive =
    Primitive::new("random_bits", Some(1), bits_shape_rule, bits_impl)
        .jvp(ad::zero_jvp)
        .batch(batching::vectorized)
        .takes_float0();

// random_wrap / random_unwrap ------------------------------------------------------------

fn wrap_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let data = inputs[0];
    let k = impl_param(prim.name, params)?;
    let refuse = |why: String| {
        Err(Error::refused(
            Exception::TypeError,
            format!("JAX encountered invalid PRNG key data: {why}"),
        ))
    };
    let shape = data.shape();
    let Some((&last, lead)) = shape.split_last() else {
        return refuse("expected key_data.ndim >= 1; got ndim=0".into());
    };
    if last != k.key_words {
        // JAX goes on with ` for impl=PRNGImpl(...)`, function addresses included.
        return refuse(format!(
            "expected key_data.shape to end with ({},); got shape={}",
            k.key_words,
            py_shape(shape)
        ));
    }
    if data.dtype() != DType::UInt32 {
        return refuse(format!(
            "expected key_data.dtype = uint32; got dtype={}",
            data.dtype()
        ));
    }
    Ok(smallvec::smallvec![ShapedArray::new(
        lead,
        k.dtype(),
        false
    )])
}

fn share_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    // Key data and keys are the same u32 words.
    Ok(smallvec::smallvec![Array::from_parts(
        out[0].clone(),
        inputs[0].storage().clone(),
    )])
}

/// `random_wrap[impl]`: `uint32` key data (trailing dimension `key_words`) as keys
/// (`jax.random.wrap_key_data`).
pub static RANDOM_WRAP: Primitive =
    Primitive::new("random_wrap", Some(1), wrap_shape_rule, share_impl)
        .jvp(ad::zero_jvp)
        .batch(random_wrap_batch)
        .takes_float0();

fn unwrap_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    _: &Params,
) -> Result<Avals, Error> {
    let keys = inputs[0];
    let k = key_operand(prim.name, keys)?;
    let shape: Vec<usize> = keys.shape().iter().copied().chain([k.key_words]).collect();
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        DType::UInt32,
        false
    )])
}

/// `random_unwrap`: keys as their `uint32` key data (`jax.random.key_data`).
pub static RANDOM_UNWRAP: Primitive =
    Primitive::new("random_unwrap", Some(1), unwrap_shape_rule, share_impl)
        .jvp(ad::zero_jvp)
        .batch(batching::vectorized)
        .takes_float0();

// ---- batching rules

/// `random_wrap`: in place, unless the batch dimension is the last one (the key data's):
/// then moved to the front first.
fn random_wrap_batch(
    prim: &'static Primitive,
    size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    super::select::bitcast_batch(prim, size, args, dims, params)
}

/// `random_fold_in`: keys and messages broadcast against each other as lax's elementwise
/// primitives do: batches at the front, a unit leading dimension for an unbatched operand.
fn random_fold_in_batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let moved = args
        .iter()
        .zip(dims)
        .map(|(x, d)| batching::bdim_at_front(x, *d, 1))
        .collect::<Result<Vec<Array>, Error>>()?;
    Ok((bind(prim, &batching::refs(&moved), params)?, vec![Some(0)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lax::bind1;
    use dtype_lattice::key::THREEFRY2X32;

    fn fry() -> Params {
        Params::new().with("impl", Param::KeyImpl(&THREEFRY2X32))
    }

    #[test]
    fn seeds_take_the_high_word_only_from_64_bit_integers() {
        let s = Array::from_vec(vec![-1i64, 1 << 32]);
        let k = bind1(&RANDOM_SEED, &[&s], &fry()).unwrap();
        let d = bind1(&RANDOM_UNWRAP, &[&k], &Params::new()).unwrap();
        assert_eq!(d.to_vec::<u32>().unwrap(), [u32::MAX, u32::MAX, 1, 0]);
        let s = Array::from_vec(vec![-1i8]);
        let k = bind1(&RANDOM_SEED, &[&s], &fry()).unwrap();
        assert_eq!(k.as_bytes(), [0, 0, 0, 0, 255, 255, 255, 255]);
    }

    /// Key arrays of `shape` with distinct keys.
    fn key_batch(shape: &[usize]) -> Array {
        let n: usize = shape.iter().product();
        let words: Vec<u8> = (0..2 * n as u32)
            .flat_map(|i| (i.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995).to_le_bytes())
            .collect();
        Array::from_bytes(DType::KeyThreefry2x32, shape, &words).unwrap()
    }

    /// Key `i` of a key array, alone (shape `()`).
    fn key_alone(keys: &Array, i: usize) -> Array {
        Array::from_bytes(
            DType::KeyThreefry2x32,
            &[],
            &keys.as_bytes()[8 * i..8 * i + 8],
        )
        .unwrap()
    }

    #[test]
    fn bits_and_splits_of_a_key_batch_are_those_of_each_key() {
        let keys = key_batch(&[3, 4]);
        for shape in [vec![], vec![1], vec![2], vec![5], vec![2, 16], vec![100]] {
            let ints = Param::Ints(shape.iter().map(|&d| d as i64).collect());
            for width in [8, 16, 32, 64] {
                let p = Params::new()
                    .with("bit_width", Param::Int(width))
                    .with("shape", ints.clone());
                let all = bind1(&RANDOM_BITS, &[&keys], &p).unwrap();
                let mut each = Vec::new();
                for i in 0..keys.size() {
                    let one = bind1(&RANDOM_BITS, &[&key_alone(&keys, i)], &p).unwrap();
                    each.extend_from_slice(one.as_bytes());
                }
                assert_eq!(all.as_bytes(), each, "bits {width} of {shape:?}");
            }
            let p = Params::new().with("shape", ints.clone());
            let all = bind1(&RANDOM_SPLIT, &[&keys], &p).unwrap();
            let mut each = Vec::new();
            for i in 0..keys.size() {
                let one = bind1(&RANDOM_SPLIT, &[&key_alone(&keys, i)], &p).unwrap();
                each.extend_from_slice(one.as_bytes());
            }
            assert_eq!(all.as_bytes(), each, "split {shape:?}");
        }
    }

    #[test]
    fn fold_in_of_broadcast_keys_and_messages_is_each_fold_in() {
        let none = Params::new();
        for (ks, ms) in [
            (vec![6], vec![6]),
            (vec![6], vec![1]),
            (vec![1], vec![6]),
            (vec![2, 1], vec![1, 3]),
            (vec![2, 3], vec![2, 1]),
        ] {
            let keys = key_batch(&ks);
            let n: usize = ms.iter().product();
            let msgs =
                Array::from_shape_vec(&ms, (0..n as u32).map(|m| m * 77 + 1).collect()).unwrap();
            let all = bind1(&RANDOM_FOLD_IN, &[&keys, &msgs], &none).unwrap();
            let out = all.shape().to_vec();
            let (ki, mi) = (broadcast_index(&ks, &out), broadcast_index(&ms, &out));
            let msg = msgs.to_vec::<u32>().unwrap();
            for i in 0..all.size() {
                let one = bind1(
                    &RANDOM_FOLD_IN,
                    &[&key_alone(&keys, ki(i)), &Array::scalar(msg[mi(i)])],
                    &none,
                )
                .unwrap();
                assert_eq!(
                    &all.as_bytes()[8 * i..8 * i + 8],
                    one.as_bytes(),
                    "{ks:?} {ms:?} at {i}"
                );
            }
        }
    }

    #[test]
    fn fold_in_broadcasts_like_lax() {
        assert_eq!(broadcasting_shape("f", &[2, 1], &[1, 3]).unwrap(), [2, 3]);
        assert!(broadcasting_shape("f", &[2], &[1, 3]).is_err());
        assert!(broadcasting_shape("f", &[2], &[3]).is_err());
        assert_eq!(broadcasting_shape("f", &[256], &[]).unwrap(), [256]);
        assert_eq!(broadcasting_shape("f", &[], &[2, 3]).unwrap(), [2, 3]);
    }
}
