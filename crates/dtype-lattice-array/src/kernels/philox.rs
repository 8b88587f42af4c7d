//! The Philox block ciphers with 10 rounds (Salmon, Moraes, Dror, Shaw: *Parallel random
//! numbers: as easy as 1, 2, 3*, SC'11), written from the paper's description: Philox-4x32
//! (four words of counter, two of key, multipliers `0xD2511F53`/`0xCD9E8D57`, Weyl key bumps
//! `0x9E3779B9`/`0xBB67AE85`) and Philox-2x32 (two words of counter, one of key, multiplier
//! `0xD256D193`). XLA's `RngBitGenerator` (PHILOX, the CPU backend's default) and JAX's
//! `philox4x32`/`philox2x32` key implementations compute them.
//!
//! One block at a time (`kernels::rng_bit` splits long outputs over threads).

/// Philox-4x32's multipliers.
const M4X32: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];
/// Philox-2x32's multiplier.
const M2X32: u32 = 0xD256_D193;
/// The Weyl sequence's increments of the key words (the golden ratio and √3 − 1).
const W32: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];
/// Rounds of both ciphers.
const ROUNDS: usize = 10;

/// The high and low words of a 32 × 32-bit product.
#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = u64::from(a) * u64::from(b);
    ((p >> 32) as u32, p as u32)
}

/// Philox-4x32-10 of one counter block: `philox4x32(counter, key)`.
#[inline]
pub(crate) fn philox4x32(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let [mut x0, mut x1, mut x2, mut x3] = counter;
    let [mut k0, mut k1] = key;
    for _ in 0..ROUNDS {
        let (hi0, lo0) = mulhilo(M4X32[0], x0);
        let (hi1, lo1) = mulhilo(M4X32[1], x2);
        [x0, x1, x2, x3] = [hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0];
        k0 = k0.wrapping_add(W32[0]);
        k1 = k1.wrapping_add(W32[1]);
    }
    [x0, x1, x2, x3]
}

/// Philox-2x32-10 of one counter block: `philox2x32(counter, key)`.
#[inline]
pub(crate) fn philox2x32(counter: [u32; 2], key: u32) -> [u32; 2] {
    let [mut x0, mut x1] = counter;
    let mut k = key;
    for _ in 0..ROUNDS {
        let (hi, lo) = mulhilo(M2X32, x0);
        [x0, x1] = [hi ^ x1 ^ k, lo];
        k = k.wrapping_add(W32[0]);
    }
    [x0, x1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors for philox4x32 with 10 rounds (`kat_vectors`:
    /// counter, key, expected output).
    const KAT4: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        (
            [0, 0, 0, 0],
            [0, 0],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [u32::MAX; 4],
            [u32::MAX; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];

    /// Random123's known-answer vectors for philox2x32 with 10 rounds.
    const KAT2: [([u32; 2], u32, [u32; 2]); 3] = [
        ([0, 0], 0, [0xff1d_ae59, 0x6cd1_0df2]),
        ([u32::MAX; 2], u32::MAX, [0x2c3f_628b, 0xab4f_d7ad]),
        (
            [0x243f_6a88, 0x85a3_08d3],
            0x1319_8a2e,
            [0xdd7c_e038, 0xf62a_4c12],
        ),
    ];

    #[test]
    fn random123_known_answers() {
        for (ctr, key, expected) in KAT4 {
            assert_eq!(philox4x32(ctr, key), expected, "4x32 {ctr:x?} {key:x?}");
        }
        for (ctr, key, expected) in KAT2 {
            assert_eq!(philox2x32(ctr, key), expected, "2x32 {ctr:x?} {key:x}");
        }
    }
}
