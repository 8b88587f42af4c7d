//! Threefry-2x32 on 16 (AVX-512) or 8 (AVX2) counters of one key at a time, chosen at run time
//! with `is_x86_feature_detected!`, and on 8 blocks with their own keys and counters at a time
//! ([`lanes`], AVX2: the PRNG primitives on batches of keys, [`super::batch`]); everything else
//! (other CPUs, the ragged ends of a range, a block whose counters cross a multiple of 2^32)
//! goes to the scalar reference ([`crate::kernels::threefry2x32`]).
//!
//! # Why this module may use `unsafe`
//!
//! It is in `kernels`, the one layer allowed to (`lib.rs` denies `unsafe_code` everywhere else).
//! Two things need it, both local and checked here:
//!
//! - calling a `#[target_feature(enable = ...)]` function, which is only sound on a CPU that
//!   has the feature: every such call sits right behind the matching
//!   `is_x86_feature_detected!` test;
//! - unaligned vector loads and stores (`_mm256_loadu_si256`, `_mm512_storeu_si512`,
//!   `_mm256_storeu_si256`) of slices whose length is checked to hold a whole vector first.
//!
//! The tests compare every lane against the scalar reference, on odd lengths and offsets and
//! across a 2^32 counter boundary.

use super::threefry::{pair_range_scalar, xor_range_scalar};

/// Which SIMD implementation fills random bits ([`Backend::detect`]: the best this CPU has).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// 16 lanes of 32 bits (AVX-512F).
    Avx512,
    /// 8 lanes of 32 bits (AVX2).
    Avx2,
    /// One block at a time.
    Scalar,
}

impl Backend {
    /// The best backend this CPU supports.
    ///
    /// ```
    /// let b = dtype_lattice_array::random::Backend::detect();
    /// assert!(b.lanes() >= 1);
    /// ```
    pub fn detect() -> Backend {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                return Backend::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") {
                return Backend::Avx2;
            }
        }
        Backend::Scalar
    }

    /// Counters per vector.
    pub fn lanes(self) -> usize {
        match self {
            Backend::Avx512 => 16,
            Backend::Avx2 => 8,
            Backend::Scalar => 1,
        }
    }

    /// The backend's name, for benchmarks and summaries.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Avx512 => "avx512",
            Backend::Avx2 => "avx2",
            Backend::Scalar => "scalar",
        }
    }
}

/// `out[j] = o0 ^ o1` of Threefry-2x32 at counter `start + j` (JAX's 32-bit random bits),
/// with the best backend.
pub fn xor_range(key: [u32; 2], start: u64, out: &mut [u32]) {
    xor_range_with(Backend::detect(), key, start, out)
}

/// Both output words of Threefry-2x32 at counters `start + j` (split keys, 64-bit bits),
/// with the best backend. `out0` and `out1` must have the same length.
pub fn pair_range(key: [u32; 2], start: u64, out0: &mut [u32], out1: &mut [u32]) {
    pair_range_with(Backend::detect(), key, start, out0, out1)
}

/// [`xor_range`] with a given backend; a backend the CPU lacks falls back to scalar.
pub fn xor_range_with(backend: Backend, key: [u32; 2], start: u64, out: &mut [u32]) {
    let done = xor_prefix(backend, key, start, out);
    xor_range_scalar(key, start + done as u64, &mut out[done..]);
}

/// [`xor_range`] into a byte buffer, each value little-endian (as NumPy's `tofile` writes
/// uint32): the `out.len() / 4` values from counter `start`; trailing bytes are left alone.
/// This is what `random bits --out` streams to disk, without a copy.
pub fn xor_range_le(key: [u32; 2], start: u64, out: &mut [u8]) {
    let n = out.len() / 4;
    let out = &mut out[..4 * n];
    let done = xor_prefix_le(Backend::detect(), key, start, out);
    for (j, b) in out[4 * done..].chunks_exact_mut(4).enumerate() {
        let [x, y] =
            super::threefry::threefry2x32(key, super::threefry::counter(start + (done + j) as u64));
        b.copy_from_slice(&(x ^ y).to_le_bytes());
    }
}

/// The vector part of [`xor_range_le`]: whole vectors, returns the number of values.
#[cfg(target_arch = "x86_64")]
fn xor_prefix_le(backend: Backend, key: [u32; 2], start: u64, out: &mut [u8]) -> usize {
    match backend {
        Backend::Avx512 if std::is_x86_feature_detected!("avx512f") => {
            // SAFETY: the CPU supports AVX-512F (checked on the line above).
            unsafe { x86::xor_avx512(key, start, out) }
        }
        Backend::Avx2 if std::is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU supports AVX2 (checked on the line above).
            unsafe { x86::xor_avx2(key, start, out) }
        }
        _ => 0,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn xor_prefix_le(_: Backend, _: [u32; 2], _: u64, _: &mut [u8]) -> usize {
    0
}

/// [`pair_range`] with a given backend; a backend the CPU lacks falls back to scalar.
pub fn pair_range_with(
    backend: Backend,
    key: [u32; 2],
    start: u64,
    out0: &mut [u32],
    out1: &mut [u32],
) {
    let n = out0.len().min(out1.len());
    let (out0, out1) = (&mut out0[..n], &mut out1[..n]);
    let done = pair_prefix(backend, key, start, out0, out1);
    pair_range_scalar(
        key,
        start + done as u64,
        &mut out0[done..],
        &mut out1[done..],
    );
}

/// Threefry-2x32 of blocks that each have their own key and counter:
/// `[out0[j], out1[j]] = threefry2x32([k0[j], k1[j]], [c0[j], c1[j]])` over the shortest
/// slice, with the best backend (split keys, folded keys and the bits of many keys at once,
/// where the blocks of one key are too few to fill a vector).
pub fn lanes(k0: &[u32], k1: &[u32], c0: &[u32], c1: &[u32], out0: &mut [u32], out1: &mut [u32]) {
    lanes_with(Backend::detect(), k0, k1, c0, c1, out0, out1)
}

/// [`lanes`] with a given backend; a backend the CPU lacks falls back to scalar. AVX-512 runs
/// the AVX2 kernel (8 lanes).
pub fn lanes_with(
    backend: Backend,
    k0: &[u32],
    k1: &[u32],
    c0: &[u32],
    c1: &[u32],
    out0: &mut [u32],
    out1: &mut [u32],
) {
    let n = [
        k0.len(),
        k1.len(),
        c0.len(),
        c1.len(),
        out0.len(),
        out1.len(),
    ]
    .into_iter()
    .min()
    .unwrap_or(0);
    let done = lanes_prefix(backend, k0, k1, c0, c1, out0, out1);
    for j in done..n {
        [out0[j], out1[j]] = super::threefry::threefry2x32([k0[j], k1[j]], [c0[j], c1[j]]);
    }
}

/// The vector part of [`lanes_with`]: whole vectors, returns their length.
#[cfg(target_arch = "x86_64")]
fn lanes_prefix(
    backend: Backend,
    k0: &[u32],
    k1: &[u32],
    c0: &[u32],
    c1: &[u32],
    out0: &mut [u32],
    out1: &mut [u32],
) -> usize {
    match backend {
        Backend::Avx512 | Backend::Avx2 if std::is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU supports AVX2 (checked on the line above).
            unsafe { x86::lanes_avx2(k0, k1, c0, c1, out0, out1) }
        }
        _ => 0,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn lanes_prefix(
    _: Backend,
    _: &[u32],
    _: &[u32],
    _: &[u32],
    _: &[u32],
    _: &mut [u32],
    _: &mut [u32],
) -> usize {
    0
}

/// The vector part of [`xor_range_with`]: fills a prefix of whole vectors, returns its length.
#[cfg(target_arch = "x86_64")]
fn xor_prefix(backend: Backend, key: [u32; 2], start: u64, out: &mut [u32]) -> usize {
    // SAFETY: a `[u32]` of n elements is 4n initialised bytes at the same address, and every
    // byte pattern is a valid u32; the byte view borrows `out` mutably for its lifetime.
    // x86_64 is little-endian, so bytes stored as little-endian u32 read back as those u32.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), out.len() * 4) };
    xor_prefix_le(backend, key, start, bytes)
}

#[cfg(not(target_arch = "x86_64"))]
fn xor_prefix(_: Backend, _: [u32; 2], _: u64, _: &mut [u32]) -> usize {
    0
}

/// The vector part of [`pair_range_with`].
#[cfg(target_arch = "x86_64")]
fn pair_prefix(
    backend: Backend,
    key: [u32; 2],
    start: u64,
    out0: &mut [u32],
    out1: &mut [u32],
) -> usize {
    match backend {
        Backend::Avx512 if std::is_x86_feature_detected!("avx512f") => {
            // SAFETY: the CPU supports AVX-512F (checked on the line above).
            unsafe { x86::pair_avx512(key, start, out0, out1) }
        }
        Backend::Avx2 if std::is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU supports AVX2 (checked on the line above).
            unsafe { x86::pair_avx2(key, start, out0, out1) }
        }
        _ => 0,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn pair_prefix(_: Backend, _: [u32; 2], _: u64, _: &mut [u32], _: &mut [u32]) -> usize {
    0
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use crate::kernels::threefry::schedule;

    /// Whether the `lanes` counters from `start` share their high word (the low word does not
    /// wrap inside the vector), so that the high word is one broadcast value.
    #[inline(always)]
    fn same_high_word(start: u64, lanes: u64) -> bool {
        (start as u32).checked_add(lanes as u32 - 1).is_some()
    }

    macro_rules! threefry_rounds {
        ($add:ident, $xor:ident, $set1:ident, $rotl:ident, $ks:expr, $x0:ident, $x1:ident) => {{
            let ks = $ks;
            $x0 = $add($x0, ks[0]);
            $x1 = $add($x1, ks[1]);
            threefry_rounds!(@four $add, $xor, $rotl, $x0, $x1, 13, 15, 26, 6);
            $x0 = $add($x0, ks[1]);
            $x1 = $add($add($x1, ks[2]), $set1(1));
            threefry_rounds!(@four $add, $xor, $rotl, $x0, $x1, 17, 29, 16, 24);
            $x0 = $add($x0, ks[2]);
            $x1 = $add($add($x1, ks[0]), $set1(2));
            threefry_rounds!(@four $add, $xor, $rotl, $x0, $x1, 13, 15, 26, 6);
            $x0 = $add($x0, ks[0]);
            $x1 = $add($add($x1, ks[1]), $set1(3));
            threefry_rounds!(@four $add, $xor, $rotl, $x0, $x1, 17, 29, 16, 24);
            $x0 = $add($x0, ks[1]);
            $x1 = $add($add($x1, ks[2]), $set1(4));
            threefry_rounds!(@four $add, $xor, $rotl, $x0, $x1, 13, 15, 26, 6);
            $x0 = $add($x0, ks[2]);
            $x1 = $add($add($x1, ks[0]), $set1(5));
        }};
        (@four $add:ident, $xor:ident, $rotl:ident, $x0:ident, $x1:ident, $a:literal, $b:literal, $c:literal, $d:literal) => {
            $x0 = $add($x0, $x1);
            $x1 = $xor($rotl!($x1, $a), $x0);
            $x0 = $add($x0, $x1);
            $x1 = $xor($rotl!($x1, $b), $x0);
            $x0 = $add($x0, $x1);
            $x1 = $xor($rotl!($x1, $c), $x0);
            $x0 = $add($x0, $x1);
            $x1 = $xor($rotl!($x1, $d), $x0);
        };
    }

    macro_rules! rotl512 {
        ($x:expr, $r:literal) => {
            _mm512_rol_epi32::<$r>($x)
        };
    }

    macro_rules! rotl256 {
        ($x:expr, $r:literal) => {
            _mm256_or_si256(
                _mm256_slli_epi32::<$r>($x),
                _mm256_srli_epi32::<{ 32 - $r }>($x),
            )
        };
    }

    /// Four independent vectors per step keep the 20 dependent rounds of each in flight.
    const UNROLL: usize = 4;

    /// 16 counters from `start` (same high word): the two output vectors.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn block512(ks: [u32; 3], start: u64) -> (__m512i, __m512i) {
        let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let mut x0 = _mm512_set1_epi32((start >> 32) as i32);
        let mut x1 = _mm512_add_epi32(_mm512_set1_epi32(start as u32 as i32), iota);
        let ks = ks.map(|k| _mm512_set1_epi32(k as i32));
        threefry_rounds!(
            _mm512_add_epi32,
            _mm512_xor_si512,
            _mm512_set1_epi32,
            rotl512,
            ks,
            x0,
            x1
        );
        (x0, x1)
    }

    /// 8 counters from `start` (same high word): the two output vectors.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn block256(ks: [u32; 3], start: u64) -> (__m256i, __m256i) {
        let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let mut x0 = _mm256_set1_epi32((start >> 32) as i32);
        let mut x1 = _mm256_add_epi32(_mm256_set1_epi32(start as u32 as i32), iota);
        let ks = ks.map(|k| _mm256_set1_epi32(k as i32));
        threefry_rounds!(
            _mm256_add_epi32,
            _mm256_xor_si256,
            _mm256_set1_epi32,
            rotl256,
            ks,
            x0,
            x1
        );
        (x0, x1)
    }

    /// 8 blocks, each with its own key and counter, from `at` in the slices.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn lanes256(k0: &[u32], k1: &[u32], c0: &[u32], c1: &[u32], at: usize) -> (__m256i, __m256i) {
        const L: usize = 8;
        let load = |v: &[u32]| {
            let v = &v[at..at + L];
            // SAFETY: `v` is exactly 8 u32 (32 bytes); the load is unaligned.
            unsafe { _mm256_loadu_si256(v.as_ptr().cast()) }
        };
        let (a, b) = (load(k0), load(k1));
        let parity = _mm256_set1_epi32(crate::kernels::threefry::PARITY as i32);
        let ks = [a, b, _mm256_xor_si256(_mm256_xor_si256(a, b), parity)];
        let (mut x0, mut x1) = (load(c0), load(c1));
        threefry_rounds!(
            _mm256_add_epi32,
            _mm256_xor_si256,
            _mm256_set1_epi32,
            rotl256,
            ks,
            x0,
            x1
        );
        (x0, x1)
    }

    /// Threefry-2x32 of blocks with their own keys and counters: whole vectors of the
    /// shortest slice; returns their length.
    #[target_feature(enable = "avx2")]
    pub(crate) fn lanes_avx2(
        k0: &[u32],
        k1: &[u32],
        c0: &[u32],
        c1: &[u32],
        out0: &mut [u32],
        out1: &mut [u32],
    ) -> usize {
        const L: usize = 8;
        let n = [
            k0.len(),
            k1.len(),
            c0.len(),
            c1.len(),
            out0.len(),
            out1.len(),
        ]
        .into_iter()
        .min()
        .unwrap_or(0);
        let mut done = 0;
        while n - done >= L * UNROLL {
            let v: [(__m256i, __m256i); UNROLL] =
                std::array::from_fn(|u| lanes256(k0, k1, c0, c1, done + u * L));
            for (u, (x0, x1)) in v.into_iter().enumerate() {
                let at = done + u * L;
                let (d0, d1) = (&mut out0[at..at + L], &mut out1[at..at + L]);
                // SAFETY: `d0` and `d1` each hold exactly 8 u32 (32 bytes); unaligned stores.
                unsafe {
                    _mm256_storeu_si256(d0.as_mut_ptr().cast(), x0);
                    _mm256_storeu_si256(d1.as_mut_ptr().cast(), x1);
                }
            }
            done += L * UNROLL;
        }
        while n - done >= L {
            let (x0, x1) = lanes256(k0, k1, c0, c1, done);
            let (d0, d1) = (&mut out0[done..done + L], &mut out1[done..done + L]);
            // SAFETY: `d0` and `d1` each hold exactly 8 u32 (32 bytes); unaligned stores.
            unsafe {
                _mm256_storeu_si256(d0.as_mut_ptr().cast(), x0);
                _mm256_storeu_si256(d1.as_mut_ptr().cast(), x1);
            }
            done += L;
        }
        done
    }

    /// Fills the longest prefix of `out` (little-endian u32 values) made of whole vectors
    /// whose counters share a high word; returns its length in values.
    #[target_feature(enable = "avx512f")]
    pub(crate) fn xor_avx512(key: [u32; 2], start: u64, out: &mut [u8]) -> usize {
        const L: usize = 16;
        let n = out.len() / 4;
        let ks = schedule(key);
        let mut done = 0;
        while n - done >= L * UNROLL && same_high_word(start + done as u64, (L * UNROLL) as u64) {
            let base = start + done as u64;
            let v: [(__m512i, __m512i); UNROLL] =
                std::array::from_fn(|u| block512(ks, base + (u * L) as u64));
            for (u, (x0, x1)) in v.into_iter().enumerate() {
                let dst = &mut out[4 * (done + u * L)..4 * (done + (u + 1) * L)];
                // SAFETY: `dst` is exactly 64 bytes; the store is unaligned.
                unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), _mm512_xor_si512(x0, x1)) };
            }
            done += L * UNROLL;
        }
        while n - done >= L && same_high_word(start + done as u64, L as u64) {
            let (x0, x1) = block512(ks, start + done as u64);
            let dst = &mut out[4 * done..4 * (done + L)];
            // SAFETY: `dst` is exactly 64 bytes; the store is unaligned.
            unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), _mm512_xor_si512(x0, x1)) };
            done += L;
        }
        done
    }

    /// As [`xor_avx512`], with 8 lanes.
    #[target_feature(enable = "avx2")]
    pub(crate) fn xor_avx2(key: [u32; 2], start: u64, out: &mut [u8]) -> usize {
        const L: usize = 8;
        let n = out.len() / 4;
        let ks = schedule(key);
        let mut done = 0;
        while n - done >= L * UNROLL && same_high_word(start + done as u64, (L * UNROLL) as u64) {
            let base = start + done as u64;
            let v: [(__m256i, __m256i); UNROLL] =
                std::array::from_fn(|u| block256(ks, base + (u * L) as u64));
            for (u, (x0, x1)) in v.into_iter().enumerate() {
                let dst = &mut out[4 * (done + u * L)..4 * (done + (u + 1) * L)];
                // SAFETY: `dst` is exactly 32 bytes; the store is unaligned.
                unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), _mm256_xor_si256(x0, x1)) };
            }
            done += L * UNROLL;
        }
        while n - done >= L && same_high_word(start + done as u64, L as u64) {
            let (x0, x1) = block256(ks, start + done as u64);
            let dst = &mut out[4 * done..4 * (done + L)];
            // SAFETY: `dst` is exactly 32 bytes; the store is unaligned.
            unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), _mm256_xor_si256(x0, x1)) };
            done += L;
        }
        done
    }

    /// Both words of the blocks; returns the length filled (whole vectors only).
    #[target_feature(enable = "avx512f")]
    pub(crate) fn pair_avx512(
        key: [u32; 2],
        start: u64,
        out0: &mut [u32],
        out1: &mut [u32],
    ) -> usize {
        const L: usize = 16;
        let ks = schedule(key);
        let n = out0.len().min(out1.len());
        let mut done = 0;
        while n - done >= L && same_high_word(start + done as u64, L as u64) {
            let (x0, x1) = block512(ks, start + done as u64);
            let (d0, d1) = (&mut out0[done..done + L], &mut out1[done..done + L]);
            // SAFETY: `d0` and `d1` each hold exactly 16 u32 (64 bytes); unaligned stores.
            unsafe {
                _mm512_storeu_si512(d0.as_mut_ptr().cast(), x0);
                _mm512_storeu_si512(d1.as_mut_ptr().cast(), x1);
            }
            done += L;
        }
        done
    }

    /// As [`pair_avx512`], with 8 lanes.
    #[target_feature(enable = "avx2")]
    pub(crate) fn pair_avx2(
        key: [u32; 2],
        start: u64,
        out0: &mut [u32],
        out1: &mut [u32],
    ) -> usize {
        const L: usize = 8;
        let ks = schedule(key);
        let n = out0.len().min(out1.len());
        let mut done = 0;
        while n - done >= L && same_high_word(start + done as u64, L as u64) {
            let (x0, x1) = block256(ks, start + done as u64);
            let (d0, d1) = (&mut out0[done..done + L], &mut out1[done..done + L]);
            // SAFETY: `d0` and `d1` each hold exactly 8 u32 (32 bytes); unaligned stores.
            unsafe {
                _mm256_storeu_si256(d0.as_mut_ptr().cast(), x0);
                _mm256_storeu_si256(d1.as_mut_ptr().cast(), x1);
            }
            done += L;
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::threefry::{counter, threefry2x32};

    const BACKENDS: [Backend; 3] = [Backend::Avx512, Backend::Avx2, Backend::Scalar];

    fn reference(key: [u32; 2], start: u64, n: usize) -> (Vec<u32>, Vec<u32>) {
        (0..n as u64)
            .map(|j| {
                let [a, b] = threefry2x32(key, counter(start + j));
                (a, b)
            })
            .unzip()
    }

    #[test]
    fn every_lane_matches_the_scalar_reference() {
        let starts = [
            0u64,
            1,
            7,
            13,
            1000,
            u32::MAX as u64 - 70,
            u32::MAX as u64 - 3,
            (5u64 << 32) - 9,
            u64::MAX - 300,
        ];
        let keys = [
            [0, 0],
            [0, 42],
            [u32::MAX, u32::MAX],
            [0x1234_5678, 0x9abc_def0],
        ];
        for backend in BACKENDS {
            for key in keys {
                for &start in &starts {
                    for n in [0usize, 1, 5, 8, 15, 16, 17, 31, 63, 64, 65, 129, 200] {
                        let (e0, e1) = reference(key, start, n);
                        let expected: Vec<u32> = e0.iter().zip(&e1).map(|(a, b)| a ^ b).collect();
                        let mut got = vec![0; n];
                        xor_range_with(backend, key, start, &mut got);
                        assert_eq!(got, expected, "{backend:?} key {key:?} start {start} n {n}");
                        let (mut g0, mut g1) = (vec![0; n], vec![0; n]);
                        pair_range_with(backend, key, start, &mut g0, &mut g1);
                        assert_eq!((g0, g1), (e0, e1), "{backend:?} pair start {start} n {n}");
                    }
                }
            }
        }
    }

    #[test]
    fn blocks_with_their_own_keys_match_the_scalar_reference() {
        let word = |i: u32, salt: u32| i.wrapping_mul(0x9e37_79b9).rotate_left(salt) ^ salt;
        for backend in BACKENDS {
            for n in [0usize, 1, 7, 8, 9, 31, 32, 33, 64, 100, 257] {
                let col = |salt: u32| (0..n as u32).map(|i| word(i, salt)).collect::<Vec<_>>();
                let (k0, k1, c0, c1) = (col(3), col(11), col(17), col(29));
                let (mut o0, mut o1) = (vec![0; n], vec![0; n]);
                lanes_with(backend, &k0, &k1, &c0, &c1, &mut o0, &mut o1);
                for j in 0..n {
                    let want = threefry2x32([k0[j], k1[j]], [c0[j], c1[j]]);
                    assert_eq!([o0[j], o1[j]], want, "{backend:?} lane {j} of {n}");
                }
            }
        }
    }

    #[test]
    fn little_endian_bytes_match() {
        for (start, n) in [(0u64, 100usize), (u32::MAX as u64 - 20, 77), (3, 5)] {
            let mut words = vec![0u32; n];
            xor_range([9, 8], start, &mut words);
            let mut bytes = vec![0u8; 4 * n + 3];
            xor_range_le([9, 8], start, &mut bytes);
            let expected: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            assert_eq!(&bytes[..4 * n], &expected[..]);
            assert_eq!(&bytes[4 * n..], &[0, 0, 0]);
        }
    }

    #[test]
    fn subslices_are_computable_on_their_own() {
        let key = [3, 4];
        let mut whole = vec![0; 1000];
        xor_range(key, 0, &mut whole);
        for (offset, len) in [(0, 1), (3, 97), (511, 489), (999, 1)] {
            let mut part = vec![0; len];
            xor_range(key, offset as u64, &mut part);
            assert_eq!(part, whole[offset..offset + len]);
        }
    }
}
