//! [`BitsWriter`]: random bits streamed to a file (or a pipe) without holding the array.

use std::io;

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error};

use super::fill::*;
use super::invalid;
use super::keys::*;
use super::sampler::*;
use super::shape::*;
use crate::kernels::threefry_simd as simd;

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
    pub(crate) key: Key,
    pub(crate) len: u64,
    pub(crate) width: u32,
    pub(crate) threads: usize,
}

/// Values per chunk of [`BitsWriter`]: small enough that a thread's buffer stays in its L2
/// cache between the SIMD fill and the kernel's copy into the page cache (measured: 2^14 to
/// 2^16 values write 2^27 uint32 in half the time of 2^18 or more).
pub(crate) const WRITE_CHUNK: u64 = 1 << 15;

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
