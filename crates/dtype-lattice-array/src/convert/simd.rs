//! The float32 encoder's loops ([`Encoder32`]) compiled again for AVX-512 (16 lanes of 32
//! bits) and for AVX2 (8 lanes), chosen at run time with `is_x86_feature_detected!`; other
//! CPUs run the same loops compiled for the baseline target (SSE2 on x86-64, 4 lanes), which
//! LLVM vectorises too.
//!
//! There are no intrinsics here: the loops are plain Rust ([`Encoder32::encode`] applied
//! element by element, branch-free, so that LLVM vectorises it); only the target differs.
//!
//! # Why this module may use `unsafe`
//!
//! It is the convert module's only module allowed to (`lib.rs` denies `unsafe_code`
//! everywhere else). Calling a `#[target_feature(enable = "avx2")]` (or AVX-512) function is
//! only sound on a CPU that has those features: each call sits right behind the
//! `is_x86_feature_detected!` test. The tests compare every lane of every path the CPU can run
//! with [`Encoder32::encode`] on odd lengths and offsets.

use super::fast::{Encoder32, encode_u8_loop, encode_u16_loop};

/// Encodes `src` (float32, little-endian) into one byte each with AVX2 if this CPU has it;
/// `false` (nothing written) if it does not.
pub(crate) fn encode_to_u8(e: &Encoder32, src: &[u8], dst: &mut [u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512 F, BW and VL (checked on the line above).
        unsafe { avx512::encode_to_u8(e, src, dst) };
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked on the line above).
        unsafe { avx2::encode_to_u8(e, src, dst) };
        return true;
    }
    let _ = (e, src, dst);
    false
}

/// Encodes `src` into two little-endian bytes each with AVX2 if this CPU has it; `false`
/// (nothing written) if it does not.
pub(crate) fn encode_to_u16(e: &Encoder32, src: &[u8], dst: &mut [u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512 F, BW and VL (checked on the line above).
        unsafe { avx512::encode_to_u16(e, src, dst) };
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked on the line above).
        unsafe { avx2::encode_to_u16(e, src, dst) };
        return true;
    }
    let _ = (e, src, dst);
    false
}

/// Whether this CPU has the AVX-512 subsets the 16-lane loops are compiled for.
#[cfg(target_arch = "x86_64")]
fn avx512() -> bool {
    std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vl")
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::*;

    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) fn encode_to_u8(e: &Encoder32, src: &[u8], dst: &mut [u8]) {
        encode_u8_loop(e, src, dst);
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) fn encode_to_u16(e: &Encoder32, src: &[u8], dst: &mut [u8]) {
        encode_u16_loop(e, src, dst);
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;

    #[target_feature(enable = "avx2")]
    pub(super) fn encode_to_u8(e: &Encoder32, src: &[u8], dst: &mut [u8]) {
        encode_u8_loop(e, src, dst);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn encode_to_u16(e: &Encoder32, src: &[u8], dst: &mut [u8]) {
        encode_u16_loop(e, src, dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::Semantics;
    use crate::convert::scalar::Class;
    use dtype_lattice::DType;

    type Path = fn(&Encoder32, &[u8], &mut [u8], usize);

    /// Every path this CPU can run: AVX-512 and AVX2 where it has them, the baseline loops.
    fn paths() -> Vec<Path> {
        let mut paths: Vec<Path> = vec![|e, s, d, w| {
            if w == 1 {
                encode_u8_loop(e, s, d)
            } else {
                encode_u16_loop(e, s, d)
            }
        }];
        #[cfg(target_arch = "x86_64")]
        {
            if avx512() {
                // SAFETY: the CPU has AVX-512 F, BW and VL (checked on the line above).
                paths.push(|e, s, d, w| unsafe {
                    if w == 1 {
                        avx512::encode_to_u8(e, s, d)
                    } else {
                        avx512::encode_to_u16(e, s, d)
                    }
                });
            }
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2 (checked on the line above).
                paths.push(|e, s, d, w| unsafe {
                    if w == 1 {
                        avx2::encode_to_u8(e, s, d)
                    } else {
                        avx2::encode_to_u16(e, s, d)
                    }
                });
            }
        }
        paths
    }

    /// Every lane of every path (AVX-512 and AVX2 where the CPU has them, and the baseline
    /// loops) against the scalar encoder, on odd lengths and at odd byte offsets of the
    /// buffers.
    #[test]
    fn lanes_match_the_scalar_encoder() {
        let xs: Vec<u32> = (0..1000u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 7))
            .chain([
                0,
                0x8000_0000,
                0x7f80_0000,
                0x7fc0_0001,
                0x0000_0001,
                0x4380_0000,
            ])
            .collect();
        let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
        for t in [
            DType::Float8E4M3Fn,
            DType::Float8E5M2,
            DType::BFloat16,
            DType::Float16,
        ] {
            let Some(Class::Float(l)) = Class::of(t) else {
                unreachable!()
            };
            for sem in [Semantics::Jax, Semantics::NumPy] {
                let e = Encoder32::new(&l, sem).unwrap();
                let w = Class::of(t).unwrap().size();
                for (off, len) in [(0, 1000), (1, 999), (3, 17), (5, 1), (7, 0), (2, 33)] {
                    let src = &bytes[off..off + 4 * len];
                    for path in paths() {
                        let mut a = vec![0u8; w * len + 3];
                        let da = &mut a[1..1 + w * len];
                        path(&e, src, da, w);
                        for (i, x) in src.chunks_exact(4).enumerate() {
                            let x = u32::from_le_bytes(x.try_into().unwrap());
                            let want = e.encode(x).to_le_bytes();
                            assert_eq!(&a[1 + w * i..1 + w * (i + 1)], &want[..w], "{t} {x:#x}");
                        }
                        assert_eq!((a[0], a[w * len + 1]), (0, 0));
                    }
                }
            }
        }
    }
}
