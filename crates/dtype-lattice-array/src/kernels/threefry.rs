//! The Threefry-2x32 block cipher with 20 rounds (Salmon, Moraes, Dror, Shaw: *Parallel
//! random numbers: as easy as 1, 2, 3*, SC'11), written from the paper's description: two
//! 32-bit words of key, two of counter, rotations `13 15 26 6 / 17 29 16 24`, a key injection
//! every four rounds with the parity constant `0x1BD11BDA`.
//!
//! This is the scalar reference; [`super::threefry_simd`] computes the same function on 8 or 16
//! counters at a time and is tested against it.

/// The rotation constants of Threefry-2x32, rounds 1–4 and 5–8 (repeating).
pub(crate) const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];

/// Threefish's key-schedule parity constant.
pub(crate) const PARITY: u32 = 0x1BD1_1BDA;

/// The three words of the key schedule: the key and its parity word.
#[inline(always)]
pub(crate) fn schedule(key: [u32; 2]) -> [u32; 3] {
    [key[0], key[1], key[0] ^ key[1] ^ PARITY]
}

/// Threefry-2x32-20 of one counter block: `threefry2x32(key, (x0, x1))`.
///
/// ```
/// use dtype_lattice_array::random::threefry2x32;
/// // The first known-answer vector of Random123 (kat_vectors, threefry2x32_20).
/// assert_eq!(threefry2x32([0, 0], [0, 0]), [0x6b20_0159, 0x99ba_4efe]);
/// ```
#[inline]
pub fn threefry2x32(key: [u32; 2], counter: [u32; 2]) -> [u32; 2] {
    let ks = schedule(key);
    let mut x0 = counter[0].wrapping_add(ks[0]);
    let mut x1 = counter[1].wrapping_add(ks[1]);
    for i in 0..5u32 {
        for &r in &ROTATIONS[(i % 2) as usize] {
            x0 = x0.wrapping_add(x1);
            x1 = x1.rotate_left(r) ^ x0;
        }
        x0 = x0.wrapping_add(ks[((i + 1) % 3) as usize]);
        x1 = x1
            .wrapping_add(ks[((i + 2) % 3) as usize])
            .wrapping_add(i + 1);
    }
    [x0, x1]
}

/// The counter block of flat output index `i`: JAX's `iota_2x32_shape`, the 64-bit index
/// split into its high and low words.
#[inline(always)]
pub(crate) fn counter(i: u64) -> [u32; 2] {
    [(i >> 32) as u32, i as u32]
}

/// Scalar fill: `out[j] = o0 ^ o1` of the block at counter `start + j`.
pub(crate) fn xor_range_scalar(key: [u32; 2], start: u64, out: &mut [u32]) {
    for (j, o) in out.iter_mut().enumerate() {
        let [a, b] = threefry2x32(key, counter(start + j as u64));
        *o = a ^ b;
    }
}

/// Scalar fill: both output words of the blocks at counters `start..`.
pub(crate) fn pair_range_scalar(key: [u32; 2], start: u64, out0: &mut [u32], out1: &mut [u32]) {
    for (j, (a, b)) in out0.iter_mut().zip(out1.iter_mut()).enumerate() {
        [*a, *b] = threefry2x32(key, counter(start + j as u64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors for threefry2x32 with 20 rounds
    /// (`kat_vectors`: counter, key, expected output).
    const KAT: [([u32; 2], [u32; 2], [u32; 2]); 3] = [
        ([0, 0], [0, 0], [0x6b20_0159, 0x99ba_4efe]),
        (
            [0xffff_ffff, 0xffff_ffff],
            [0xffff_ffff, 0xffff_ffff],
            [0x1cb9_96fc, 0xbb00_2be7],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3],
            [0x1319_8a2e, 0x0370_7344],
            [0xc492_3a9c, 0x483d_f7a0],
        ),
    ];

    #[test]
    fn random123_known_answers() {
        for (ctr, key, expected) in KAT {
            assert_eq!(
                threefry2x32(key, ctr),
                expected,
                "counter {ctr:x?} key {key:x?}"
            );
        }
    }

    #[test]
    fn counters_split_the_64_bit_index() {
        assert_eq!(counter(0), [0, 0]);
        assert_eq!(counter(0x1_0000_0002), [1, 2]);
        let mut a = [0u32; 4];
        xor_range_scalar([1, 2], u32::MAX as u64 - 1, &mut a);
        let expected: Vec<u32> = (0..4u64)
            .map(|j| {
                let [x, y] = threefry2x32([1, 2], counter(u32::MAX as u64 - 1 + j));
                x ^ y
            })
            .collect();
        assert_eq!(a.to_vec(), expected);
    }
}
