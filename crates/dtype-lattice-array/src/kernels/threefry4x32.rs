//! The Threefry-4x32 block cipher with 20 rounds (Salmon, Moraes, Dror, Shaw: *Parallel random
//! numbers: as easy as 1, 2, 3*, SC'11), written from the paper's description: four words of
//! key and of counter, the eight rotation pairs of Threefish-256 for 32-bit words, a key
//! injection every four rounds from the five-word schedule (the key and its parity word
//! with `0x1BD11BDA`). JAX's `threefry4x32` key implementation computes it.

/// The rotation pairs of rounds `r % 8`.
const ROTATIONS: [[u32; 2]; 8] = [
    [10, 26],
    [11, 21],
    [13, 27],
    [23, 5],
    [6, 20],
    [17, 11],
    [25, 10],
    [18, 20],
];

/// Threefish's key-schedule parity constant.
const PARITY: u32 = 0x1BD1_1BDA;

/// Threefry-4x32-20 of one counter block: `threefry4x32(key, counter)`.
pub(crate) fn threefry4x32(key: [u32; 4], counter: [u32; 4]) -> [u32; 4] {
    let ks = [
        key[0],
        key[1],
        key[2],
        key[3],
        key[0] ^ key[1] ^ key[2] ^ key[3] ^ PARITY,
    ];
    let mut x = [0u32; 4];
    for i in 0..4 {
        x[i] = counter[i].wrapping_add(ks[i]);
    }
    for round in 0..20 {
        let [r0, r1] = ROTATIONS[round % 8];
        // Even rounds mix (0, 1) and (2, 3); odd rounds (0, 3) and (2, 1).
        let (a, b) = if round % 2 == 0 { (1, 3) } else { (3, 1) };
        x[0] = x[0].wrapping_add(x[a]);
        x[a] = x[a].rotate_left(r0) ^ x[0];
        x[2] = x[2].wrapping_add(x[b]);
        x[b] = x[b].rotate_left(r1) ^ x[2];
        if round % 4 == 3 {
            let s = round / 4 + 1;
            for (j, w) in x.iter_mut().enumerate() {
                *w = w.wrapping_add(ks[(s + j) % 5]);
            }
            x[3] = x[3].wrapping_add(s as u32);
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors for threefry4x32 with 20 rounds (`kat_vectors`:
    /// counter, key, expected output).
    const KAT: [([u32; 4], [u32; 4], [u32; 4]); 3] = [
        (
            [0; 4],
            [0; 4],
            [0x9c6c_a96a, 0xe17e_ae66, 0xfc10_ecd4, 0x5256_a7d8],
        ),
        (
            [u32::MAX; 4],
            [u32::MAX; 4],
            [0x2a88_1696, 0x5701_2287, 0xf6c7_446e, 0xa16a_6732],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0, 0x082e_fa98, 0xec4e_6c89],
            [0x59cd_1dbb, 0xb887_9579, 0x86b5_d00c, 0xac8b_6d84],
        ),
    ];

    #[test]
    fn random123_known_answers() {
        for (ctr, key, expected) in KAT {
            assert_eq!(threefry4x32(key, ctr), expected, "{ctr:x?} {key:x?}");
        }
    }
}
