//! `rng_bit_generator`: XLA's stateless `RngBitGenerator` (`jax.lax.rng_bit_generator`, JAX
//! 0.10.2's `rng_bit_generator_p`), as jaxlib 0.10.2's CPU backend computes it. One operand,
//! the key (`u32[4]`, as JAX passes it, or `u64[2]`), two results: the new key (the operand's
//! aval) and the bits (`dtype[*shape]`, never weak). Parameters `algorithm` (JAX's
//! [`RandomAlgorithm`], printed `RNG_DEFAULT`, `RNG_THREE_FRY`, `RNG_PHILOX`), `dtype`,
//! `out_sharding`, `shape`.
//!
//! **What XLA's CPU backend computes** (found by comparing candidates with jaxlib 0.10.2 on
//! every dtype, shapes up to rank 3 with odd, even, unit and zero dimensions, keys with high
//! words and counters about to wrap; details in [`crate::kernels::rng_bit`]): `RNG_DEFAULT` is
//! `RNG_PHILOX`, Philox-4x32-10. A `u32[4]` key `[k0, k1, k2, k3]` is bit-cast to the `u64[2]`
//! state `[s0, s1] = [k0 | k1 << 32, k2 | k3 << 32]`. The Philox key is `s0`, the 128-bit
//! counter of block `b` is `(s0 << 64 | s1) + b`; 32-bit output element `i` is word `i % 4` of
//! block `i / 4` (8 and 16 bits: its low bits), 64-bit element `i` the two words of half `i %
//! 2` of block `i / 2` (low word first). The new key is `[s0, s1 + blocks]`: the counter's low
//! 64 bits advanced by the blocks drawn (`⌈n / 4⌉`, 64 bits `⌈n / 2⌉`), with no carry into
//! `s0`. `RNG_THREE_FRY` is Threefry-2x32-20 keyed by `s0` at counters `s1 + j`, 32-bit
//! outputs drawn in halves of the shape (see the kernel).
//!
//! Dtypes: `jax.lax.rng_bit_generator` ([`rng_bit_generator`]) takes `uint8`, `uint16`,
//! `uint32` and `uint64` (after x64 canonicalisation: `uint64` is `uint32` with x64 off,
//! 32-bit draws) and refuses others with JAX's `TypeError`; the primitive bound directly
//! takes any numeric dtype, drawing `uint32` and converting as JAX's lowering does. A key that
//! is neither `u32[4]` nor `u64[2]` is staged (JAX's abstract evaluation does not look at it)
//! and refused when evaluated, as JAX's lowering asserts (`([2], IntegerType(ui32))`).
//!
//! Batching (JAX's `_rng_bit_generator_batching_rule`): not a loop over the keys. The first
//! key of the batch draws the bits of the whole batch, `(batch, *shape)`, and the new keys
//! are the batch with the first one replaced by its new key (an empty batch is refused with
//! JAX's `IndexError`). JAX stages the replacement as a `jit` of `dynamic_update_index_in_dim`;
//! this rule stages its body (a `broadcast_in_dim` and a `dynamic_update_slice`), as JAX's
//! text prints it under `jax.disable_jit()`.
//!
//! No JVP rule: JAX has none; a key and bits are integers, whose tangents are symbolic zeros.

use std::fmt;
use std::str::FromStr;

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind};

use super::structural::{BROADCAST_IN_DIM, SQUEEZE, check_alloc};
use super::{Avals, Outputs, Param, Params, Primitive, batching, bind, bind1};
use crate::array::{Array, ShapedArray, Storage, checked_size, py_shape};
use crate::core::BatchDims;
use crate::kernels::rng_bit::{self, Algorithm, State};

/// XLA's PRNG algorithms for `rng_bit_generator` (JAX's `lax.RandomAlgorithm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RandomAlgorithm {
    /// `RNG_DEFAULT`: the platform's default (Philox on CPU).
    RngDefault,
    /// `RNG_THREE_FRY`: Threefry-2x32.
    RngThreeFry,
    /// `RNG_PHILOX`: Philox-4x32.
    RngPhilox,
}

impl RandomAlgorithm {
    /// Every algorithm, in JAX's order (its integer value).
    pub const ALL: [RandomAlgorithm; 3] = [
        RandomAlgorithm::RngDefault,
        RandomAlgorithm::RngThreeFry,
        RandomAlgorithm::RngPhilox,
    ];

    /// The name JAX prints (`RNG_DEFAULT`).
    pub fn name(self) -> &'static str {
        match self {
            RandomAlgorithm::RngDefault => "RNG_DEFAULT",
            RandomAlgorithm::RngThreeFry => "RNG_THREE_FRY",
            RandomAlgorithm::RngPhilox => "RNG_PHILOX",
        }
    }

    /// The algorithm XLA's CPU backend runs for it.
    fn on_cpu(self) -> Algorithm {
        match self {
            RandomAlgorithm::RngThreeFry => Algorithm::ThreeFry,
            RandomAlgorithm::RngDefault | RandomAlgorithm::RngPhilox => Algorithm::Philox,
        }
    }

    /// The `algorithm` parameter: the name, or the integer JAX was given
    /// (`algorithm=1` binds and prints as such).
    fn of(prim: &str, params: &Params) -> Result<RandomAlgorithm, Error> {
        match params.require(prim, "algorithm")? {
            Param::Name(n) => n.parse(),
            Param::Int(i) => usize::try_from(*i)
                .ok()
                .and_then(|i| RandomAlgorithm::ALL.get(i).copied())
                .ok_or_else(|| {
                    Error::refused(
                        Exception::ValueError,
                        format!("{i} is not a valid RandomAlgorithm"),
                    )
                }),
            _ => Err(super::bad_param(prim, "algorithm", "not a RandomAlgorithm")),
        }
    }
}

impl fmt::Display for RandomAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RandomAlgorithm {
    type Err = Error;

    /// `RNG_DEFAULT` or `RandomAlgorithm.RNG_DEFAULT`.
    fn from_str(s: &str) -> Result<RandomAlgorithm, Error> {
        let name = s.strip_prefix("RandomAlgorithm.").unwrap_or(s);
        RandomAlgorithm::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| {
                Error::refused(
                    Exception::ValueError,
                    format!(
                        "{s} is not a RandomAlgorithm (RNG_DEFAULT, RNG_THREE_FRY, RNG_PHILOX)"
                    ),
                )
            })
    }
}

/// `jax.lax.rng_bit_generator(key, shape, dtype, algorithm)`: `(new_key, bits)`, as XLA's CPU
/// backend computes them. `RNG_DEFAULT` is `RNG_PHILOX` there: Philox-4x32-10 keyed by `s0`
/// at the 128-bit counters `(s0 << 64 | s1) + b` of the state `[s0, s1]` (the `u32[4]` key
/// bit-cast to `u64[2]`), 32-bit element `i` word `i % 4` of block `i / 4` (8 and 16 bits its
/// low bits, 64 bits two words of a block, low first); the new key is `[s0, s1 + blocks]`.
/// `RNG_THREE_FRY` is Threefry-2x32-20 keyed by `s0` at counters `s1 + j`. Under `vmap` the
/// batch's first key draws the whole batch's bits, as JAX's batching rule does.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, lax};
///
/// let key = Array::from_vec(vec![1u32, 2, 3, 4]);
/// let (new_key, bits) =
///     lax::rng_bit_generator(&key, &[9], DType::UInt32, lax::RandomAlgorithm::RngDefault)?;
/// // Nine 32-bit words are three Philox blocks: the counter's low word advanced by 3.
/// assert_eq!(new_key.to_vec::<u32>()?, [1, 2, 6, 4]);
/// assert_eq!(bits.to_vec::<u32>()?[..2], [0x1e8f_e864, 0x4d5e_0bd7]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `TypeError` for a dtype (after x64 canonicalisation in the rules in force) other
/// than `uint8`, `uint16`, `uint32`, `uint64` (`rng_bit_generator: unsupported dtype int8`);
/// when evaluated, a key other than `u32[4]` or `u64[2]` (JAX's lowering's assertion,
/// `([2], IntegerType(ui32))`).
pub fn rng_bit_generator(
    key: &Array,
    shape: &[usize],
    dtype: DType,
    algorithm: RandomAlgorithm,
) -> Result<(Array, Array), Error> {
    let dtype = dtype.canonicalize(crate::config::rules().options().x64);
    if !matches!(
        dtype,
        DType::UInt8 | DType::UInt16 | DType::UInt32 | DType::UInt64
    ) {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "rng_bit_generator: unsupported dtype {}",
                dtype.numpy_name()
            ),
        ));
    }
    let mut out = bind(&RNG_BIT_GENERATOR, &[key], &params(shape, dtype, algorithm))?;
    let bits = out.pop();
    match (out.pop(), bits) {
        (Some(k), Some(b)) => Ok((k, b)),
        _ => Err(crate::array::invalid("rng_bit_generator", "two results")),
    }
}

/// The primitive's parameters, in the order JAX prints them.
pub(crate) fn params(shape: &[usize], dtype: DType, algorithm: RandomAlgorithm) -> Params {
    Params::new()
        .with("algorithm", Param::Name(algorithm.name().into()))
        .with("dtype", Param::DType(dtype))
        .with("out_sharding", Param::None)
        .with("shape", super::ints(shape.iter().copied()))
}

fn dtype_param(prim: &str, params: &Params) -> Result<DType, Error> {
    match params.require(prim, "dtype")? {
        Param::DType(d) => Ok(*d),
        _ => Err(super::bad_param(prim, "dtype", "not a dtype")),
    }
}

fn shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let key = inputs[0];
    RandomAlgorithm::of(prim.name, params)?;
    let dtype = dtype_param(prim.name, params)?;
    if matches!(dtype.kind(), Kind::Extended | Kind::Void) {
        return Err(Error::refused(
            Exception::TypeError,
            format!("rng_bit_generator: unsupported dtype {dtype}"),
        ));
    }
    let shape = params.usizes(prim.name, "shape")?;
    if checked_size(&shape).is_none() {
        return Err(crate::array::invalid(
            "rng_bit_generator.shape",
            format!("{} has too many elements", py_shape(&shape)),
        ));
    }
    Ok(smallvec::smallvec![
        key.clone(),
        ShapedArray::new(&shape, dtype, false)
    ])
}

/// MLIR's name of an element type, as JAX's lowering's assertion prints it.
fn mlir_type(dtype: DType) -> String {
    let bits = dtype.bits();
    match dtype.kind() {
        Kind::Bool => "IntegerType(i1)".into(),
        Kind::SignedInt => format!("IntegerType(i{bits})"),
        Kind::UnsignedInt => format!("IntegerType(ui{bits})"),
        Kind::Float => match dtype {
            DType::Float16 => "F16Type(f16)".into(),
            DType::BFloat16 => "BF16Type(bf16)".into(),
            DType::Float32 => "F32Type(f32)".into(),
            DType::Float64 => "F64Type(f64)".into(),
            other => format!("FloatType({})", other.numpy_name()),
        },
        Kind::Complex => match dtype {
            DType::Complex64 => "ComplexType(complex<f32>)".into(),
            _ => "ComplexType(complex<f64>)".into(),
        },
        _ => dtype.to_string(),
    }
}

/// The key's generator state, and whether it is a `u64[2]` key; JAX's lowering's assertion
/// for any other key.
fn state_of(key: &Array) -> Result<(State, bool), Error> {
    match (key.dtype(), key.shape()) {
        (DType::UInt32, [4]) => {
            let k = key.to_vec::<u32>()?;
            let word = |i: usize| u64::from(k[i]) | u64::from(k[i + 1]) << 32;
            Ok(([word(0), word(2)], false))
        }
        (DType::UInt64, [2]) => {
            let k = key.to_vec::<u64>()?;
            Ok(([k[0], k[1]], true))
        }
        (dtype, shape) => {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            // JAX asserts.
            Err(Error::refused(
                Exception::AssertionError,
                format!("([{}], {})", dims.join(", "), mlir_type(dtype)),
            ))
        }
    }
}

/// The key holding `state`, in the operand's layout.
fn key_of(state: State, wide: bool, aval: &ShapedArray) -> Array {
    let storage = if wide {
        Storage::words::<u64>(2, |o| o.copy_from_slice(&state))
    } else {
        let w = |x: u64| [x as u32, (x >> 32) as u32];
        let [a, b] = w(state[0]);
        let [c, d] = w(state[1]);
        Storage::words::<u32>(4, |o| o.copy_from_slice(&[a, b, c, d]))
    };
    Array::from_parts(aval.clone(), storage)
}

/// The bits of `algorithm` from `state`: an output of `shape` and the unsigned `dtype`.
pub(crate) fn draw(
    algorithm: Algorithm,
    state: State,
    shape: &[usize],
    dtype: DType,
) -> Result<Array, Error> {
    let aval = ShapedArray::new(shape, dtype, false);
    check_alloc(&aval)?;
    let n = aval.size();
    fn narrow<W: Send>(
        algorithm: Algorithm,
        state: State,
        shape: &[usize],
        out: &mut [W],
        f: impl Fn(u32) -> W + Sync,
    ) {
        match algorithm {
            Algorithm::Philox => rng_bit::par_fill(out, |start, chunk| {
                rng_bit::philox32(state, start, chunk, &f)
            }),
            Algorithm::ThreeFry => rng_bit::threefry32(state, shape, out, f),
        }
    }
    let data = match dtype {
        DType::UInt8 => {
            Storage::words::<u8>(n, |o| narrow(algorithm, state, shape, o, |x| x as u8))
        }
        DType::UInt16 => {
            Storage::words::<u16>(n, |o| narrow(algorithm, state, shape, o, |x| x as u16))
        }
        DType::UInt32 => Storage::words::<u32>(n, |o| narrow(algorithm, state, shape, o, |x| x)),
        DType::UInt64 => Storage::words::<u64>(n, |o| {
            rng_bit::par_fill(o, |start, chunk| match algorithm {
                Algorithm::Philox => rng_bit::philox64(state, start, chunk),
                Algorithm::ThreeFry => rng_bit::threefry64(state, start, chunk),
            })
        }),
        other => {
            return Err(crate::array::invalid(
                "rng_bit_generator.dtype",
                format!("{other} is not an unsigned integer dtype"),
            ));
        }
    };
    Ok(Array::from_parts(aval, data))
}

/// One `RngBitGenerator` on key data: the new state and the bits (`dtype` any numeric dtype:
/// other than unsigned ones, `uint32` bits converted, as JAX lowers them).
pub(crate) fn generate(
    algorithm: RandomAlgorithm,
    state: State,
    shape: &[usize],
    dtype: DType,
) -> Result<(State, Array), Error> {
    let drawn = if dtype.kind() == Kind::UnsignedInt {
        dtype
    } else {
        DType::UInt32
    };
    let alg = algorithm.on_cpu();
    let bits = draw(alg, state, shape, drawn)?;
    let bits = if drawn == dtype {
        bits
    } else {
        bits.astype(dtype)?
    };
    let next = rng_bit::next_state(alg, state, shape, drawn == DType::UInt64);
    Ok((next, bits))
}

fn impl_rule(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Outputs, Error> {
    let key = inputs[0];
    let algorithm = RandomAlgorithm::of(prim.name, params)?;
    let (state, wide) = state_of(key)?;
    let (next, bits) = generate(algorithm, state, out[1].shape(), out[1].dtype())?;
    Ok(smallvec::smallvec![key_of(next, wide, &out[0]), bits])
}

/// JAX's `_rng_bit_generator_batching_rule`: the first key draws the whole batch's bits; the
/// new keys are the batch with its first key replaced.
fn batch_rule(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let Some(bd) = dims[0] else {
        return Ok((bind(prim, &[&args[0]], params)?, vec![None, None]));
    };
    let keys = batching::moveaxis(&args[0], bd, 0)?;
    let size = keys.shape()[0];
    if size == 0 {
        return Err(Error::refused(
            Exception::IndexError,
            "index is out of bounds for axis 0 with size 0",
        ));
    }
    // `keys[0]`: a slice and a squeeze, the slice left out when it is the whole batch.
    let key = if size == 1 {
        bind1(
            &SQUEEZE,
            &[&keys],
            &Params::new().with("dimensions", super::ints([0])),
        )?
    } else {
        batching::index_in_dim(&keys, 0, 0)?
    };
    let shape = params.usizes(prim.name, "shape")?;
    let mut batched = Params::new();
    for (name, value) in params.iter() {
        let value = if name == "shape" {
            super::ints(std::iter::once(size).chain(shape.iter().copied()))
        } else {
            value.clone()
        };
        batched = batched.with_named(name.to_string(), value);
    }
    let out = bind(prim, &[&key], &batched)?;
    // dynamic_update_index_in_dim(keys, new_key, 0, axis=0) with a concrete index.
    let mut row = vec![1];
    row.extend_from_slice(out[0].shape());
    let p = Params::new()
        .with("shape", super::ints(row.iter().copied()))
        .with("broadcast_dimensions", super::ints(1..row.len()))
        .with("sharding", Param::None);
    let update = bind1(&BROADCAST_IN_DIM, &[&out[0]], &p)?;
    let int = crate::config::default_int(&crate::config::rules());
    let zero = crate::array::scalar(0.0, int)?;
    let mut operands = vec![&keys, &update];
    operands.extend(std::iter::repeat_n(&zero, keys.ndim()));
    let new_keys = bind1(&super::DYNAMIC_UPDATE_SLICE, &operands, &Params::new())?;
    Ok((
        smallvec::smallvec![new_keys, out[1].clone()],
        vec![Some(0), Some(0)],
    ))
}

/// The `rng_bit_generator` primitive (`jax.lax.rng_bit_generator`).
pub static RNG_BIT_GENERATOR: Primitive =
    Primitive::new("rng_bit_generator", Some(1), shape_rule, impl_rule).batch(batch_rule);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithms_print_and_parse_as_jax_names_them() {
        for a in RandomAlgorithm::ALL {
            assert_eq!(a.to_string().parse::<RandomAlgorithm>().unwrap(), a);
            assert_eq!(
                format!("RandomAlgorithm.{a}")
                    .parse::<RandomAlgorithm>()
                    .unwrap(),
                a
            );
        }
        assert!("RNG_OTHER".parse::<RandomAlgorithm>().is_err());
        let p = params(&[2, 3], DType::UInt8, RandomAlgorithm::RngDefault);
        assert_eq!(
            p.to_string(),
            "[algorithm=RNG_DEFAULT dtype=uint8 out_sharding=None shape=(2, 3)]"
        );
        let by_int = Params::new().with("algorithm", Param::Int(1));
        assert_eq!(
            RandomAlgorithm::of("p", &by_int).unwrap(),
            RandomAlgorithm::RngThreeFry
        );
        let bad = Params::new().with("algorithm", Param::Int(3));
        assert!(RandomAlgorithm::of("p", &bad).is_err());
    }

    #[test]
    fn u64_keys_hold_the_same_state() {
        let k32 = Array::from_vec(vec![1u32, 2, 3, 4]);
        let k64 = Array::from_vec(vec![1u64 | 2 << 32, 3 | 4 << 32]);
        for a in RandomAlgorithm::ALL {
            let (n32, b32) = rng_bit_generator(&k32, &[5], DType::UInt32, a).unwrap();
            let (n64, b64) = rng_bit_generator(&k64, &[5], DType::UInt32, a).unwrap();
            assert_eq!(b32.as_bytes(), b64.as_bytes(), "{a}");
            assert_eq!(n32.as_bytes(), n64.as_bytes(), "{a}");
            assert_eq!(n64.aval().to_string(), "u64[2]");
        }
    }

    #[test]
    fn keys_of_other_shapes_and_dtypes_are_refused_when_evaluated() {
        let k = Array::from_vec(vec![1u32, 2]);
        let e =
            rng_bit_generator(&k, &[3], DType::UInt32, RandomAlgorithm::RngDefault).unwrap_err();
        assert_eq!(e.message(), "([2], IntegerType(ui32))");
        let k = Array::from_vec(vec![1.0f32; 4]);
        let e =
            rng_bit_generator(&k, &[3], DType::UInt32, RandomAlgorithm::RngDefault).unwrap_err();
        assert_eq!(e.message(), "([4], F32Type(f32))");
        let k = Array::from_vec(vec![1u32, 2, 3, 4]);
        let e = rng_bit_generator(&k, &[3], DType::Int8, RandomAlgorithm::RngDefault).unwrap_err();
        assert_eq!(
            e.to_string(),
            "TypeError: rng_bit_generator: unsupported dtype int8"
        );
    }
}
