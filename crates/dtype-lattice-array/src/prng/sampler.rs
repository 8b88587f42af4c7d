//! [`Random`]: JAX's samplers (`key`, `split`, `fold_in`, `bits`, `uniform`, `normal`,
//! `randint`, `bernoulli`).

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Kind};
use half::{bf16, f16};

use super::fill::*;
use super::floats::*;
use super::keys::*;
use super::shape::*;
use super::values::*;
use super::{invalid, threefry2x32};
use crate::kernels::{erfinv, threefry_simd as simd};

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
    pub(crate) x64: bool,
    pub(crate) threads: usize,
}

impl Default for Random {
    fn default() -> Self {
        Random::new()
    }
}

impl Random {
    /// x64 off (JAX's default), as many threads as the machine has.
    pub fn new() -> Random {
        // Asked once: on Linux the answer reads the cgroup files, tens of microseconds, and
        // every sampler and PRNG primitive makes a `Random`.
        static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        Random {
            x64: false,
            threads: *THREADS
                .get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
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
                    map_bits(k, 8, s, c, |b| b as u8)
                });
                Values::U8(v)
            }
            16 => {
                let mut v = alloc::<u16>(n)?;
                par_fill(&mut v, self.threads, |s, c| {
                    map_bits(k, 16, s, c, |b| b as u16)
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
                par_fill(&mut v, self.threads, |s, c| map_bits(k, 64, s, c, |b| b));
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
    /// first, as JAX passes Python floats (a default float, then XLA's convert: two roundings
    /// for the 16-bit floats); `minval >= maxval` gives `minval` everywhere, as in JAX.
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
            DType::Float16 => self.uniform_as::<f16>(key, n, dtype, minval, maxval)?,
            DType::BFloat16 => self.uniform_as::<bf16>(key, n, dtype, minval, maxval)?,
            DType::Float32 => self.uniform_as::<f32>(key, n, dtype, minval, maxval)?,
            _ => self.uniform_as::<f64>(key, n, dtype, minval, maxval)?,
        };
        Ok(Sample {
            shape: shape.to_vec(),
            values,
        })
    }

    pub(crate) fn float_dtype(&self, fun: &str, what: &str, dtype: DType) -> Result<DType, Error> {
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
            map_bits(k, rng_bits, s, c, |b| {
                uniform_of_bits(b, rng_bits, minval, span)
            })
        });
        Ok(v)
    }

    fn uniform_as<T: UniformFloat>(
        &self,
        key: &Key,
        n: usize,
        dtype: DType,
        minval: f64,
        maxval: f64,
    ) -> Result<Values, Error> {
        let v = self.uniform_vec(
            key,
            n,
            self.python_float(minval, dtype)?,
            self.python_float(maxval, dtype)?,
        )?;
        Ok(T::wrap(v))
    }

    /// A Python float bound as JAX passes it: a weakly typed default float (float32 with x64
    /// off), then XLA's `convert` to `dtype`. So `-877.9999900875047` is `-878.0` in float32,
    /// a tie that bfloat16 rounds to `-880` (one rounding would give `-876`); XLA converts a
    /// float64 to bfloat16 through float32 too.
    fn python_float<T: UniformFloat>(&self, v: f64, dtype: DType) -> Result<T, Error> {
        let (host, bytes) = if self.x64 {
            (DType::Float64, v.to_le_bytes().to_vec())
        } else {
            (DType::Float32, (v as f32).to_le_bytes().to_vec())
        };
        let mut out = [0u8; 8];
        let width = (T::NBITS / 8) as usize;
        crate::convert::convert_element(
            crate::convert::Semantics::Jax,
            host,
            &bytes,
            dtype,
            &mut out[..width],
        )
        .map_err(|e| invalid("minval", e.to_string()))?;
        Ok(T::from_bits_u64(u64::from_le_bytes(out)))
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
        let values = match dtype {
            DType::Float16 => f16::wrap(self.normal_vec::<f16>(key, n)?),
            DType::BFloat16 => bf16::wrap(self.normal_vec::<bf16>(key, n)?),
            DType::Float32 => f32::wrap(self.normal_vec::<f32>(key, n)?),
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

    /// `sqrt(2) * erf_inv(u)` of `uniform(key, n, nextafter(-1, 0), 1)` in `T`, a float32 or
    /// narrower format (`erf_inv` computed in float32 and rounded to `T`, as XLA does), block
    /// by block.
    fn normal_vec<T: UniformFloat>(&self, key: &Key, n: usize) -> Result<Vec<T>, Error> {
        const BLOCK: usize = 256;
        let rng_bits = if T::NMANT < 8 { 8 } else { T::NBITS };
        let (lo, sqrt2) = (
            T::next_above_minus_one(),
            T::from_f64(std::f64::consts::SQRT_2),
        );
        let span = T::one().sub(lo);
        let mut v = alloc::<T>(n)?;
        let k = key.data;
        par_fill(&mut v, self.threads, |s, c| {
            map_bits(k, rng_bits, s, c, |b| {
                uniform_of_bits(b, rng_bits, lo, span)
            });
            let mut e = [0f32; BLOCK];
            for block in c.chunks_mut(BLOCK) {
                let e = &mut e[..block.len()];
                e.iter_mut()
                    .zip(block.iter())
                    .for_each(|(e, u)| *e = u.to_f32());
                erfinv::erf_inv_f32_slice(e);
                for (x, &e) in block.iter_mut().zip(e.iter()) {
                    *x = sqrt2.mul(T::from_f32(e));
                }
            }
        });
        Ok(v)
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
            par_fill(&mut out, self.threads, |s, c| {
                map_bits(k, 64, s, c, |b| uniform_of_bits(b, 64, 0.0f64, 1.0) < p)
            });
        } else {
            let p = p as f32;
            par_fill(&mut out, self.threads, |s, c| {
                map_bits(k, 32, s, c, |b| uniform_of_bits(b, 32, 0.0f32, 1.0) < p)
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
        let (sample_dtype, minval, maxval) = self.randint_bounds(dtype, minval, maxval)?;
        let (d_min, d_max) = self.default_int_range();
        let n = output_size(shape)?;
        let offsets = self.randint_offsets(key, n, sample_dtype, (d_min, d_max), minval, maxval)?;
        let values = convert_ints(offsets, dtype)?;
        Ok(Sample {
            shape: shape.to_vec(),
            values,
        })
    }

    /// The range of JAX's default integer (int32, or int64 with x64): the Python ints
    /// `randint` takes become arrays of it.
    pub(crate) fn default_int_range(&self) -> (i128, i128) {
        if self.x64 {
            (i64::MIN as i128, i64::MAX as i128)
        } else {
            (i32::MIN as i128, i32::MAX as i128)
        }
    }

    /// `randint`'s checks and the bounds `_randint` receives: the dtype it samples in (int32
    /// for narrower dtypes, which get `jnp.asarray(v).astype('int32').clip(min, max [+ 1])`)
    /// and the bounds in the default integer type.
    ///
    /// # Errors
    ///
    /// JAX's `TypeError` for a dtype that is not an 8- to 64-bit integer, `OverflowError` for
    /// a bound the default integer cannot hold.
    pub(crate) fn randint_bounds(
        &self,
        dtype: DType,
        minval: i128,
        maxval: i128,
    ) -> Result<(DType, i128, i128), Error> {
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
        let (d_min, d_max) = self.default_int_range();
        Ok(if dtype.bits() < 32 {
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

/// An nbits-bit pattern as a signed or unsigned integer.
pub(crate) fn to_signed(bits: u128, nbits: u32, signed: bool) -> i128 {
    if signed && bits >> (nbits - 1) & 1 == 1 {
        bits as i128 - (1i128 << nbits)
    } else {
        bits as i128
    }
}

/// Values (already in range of `sampled`, or of int32 for small dtypes) converted to `dtype`
/// with NumPy's wrapping `astype`.
pub(crate) fn convert_ints(v: Vec<i128>, dtype: DType) -> Result<Values, Error> {
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
