//! Unit tests of the PRNG's internals.

use dtype_lattice::DType;
use dtype_lattice::error::Exception;

use super::fill::*;
use super::keys::*;
use super::sampler::*;
use super::shape::*;
use crate::kernels::threefry_simd as simd;

#[test]
fn parallel_fill_equals_serial() {
    let key = Key::from_data([5, 6]);
    let one = Random::new().threads(1);
    let two = Random::new().threads(2);
    for n in [0usize, 1, PARALLEL_MIN * 2 + 3] {
        for w in [8, 16, 32, 64] {
            assert_eq!(
                one.x64(true).bits(&key, &[n], w).unwrap(),
                two.x64(true).bits(&key, &[n], w).unwrap()
            );
        }
        assert_eq!(
            one.uniform(&key, &[n], DType::BFloat16, -1.0, 2.0).unwrap(),
            two.uniform(&key, &[n], DType::BFloat16, -1.0, 2.0).unwrap()
        );
    }
}

#[test]
fn split_in_chunks_is_split_at_once() {
    // More keys than one chunk: the same words as one call over the whole range.
    let key = Key::from_data([7, 11]);
    let n = 40_000;
    let keys = Random::new().split(&key, &[n]).unwrap();
    let (mut hi, mut lo) = (vec![0u32; n], vec![0u32; n]);
    simd::pair_range(key.data, 0, &mut hi, &mut lo);
    let want: Vec<u32> = hi.iter().zip(&lo).flat_map(|(&h, &l)| [h, l]).collect();
    assert_eq!(keys.key_data(), &want[..]);
}

#[test]
fn shapes_over_the_memory_limit_are_refused() {
    let rng = Random::new();
    let key = rng.key(1).unwrap();
    let e = rng.split(&key, &[MAX_ELEMENTS + 1]).unwrap_err();
    assert_eq!(e.kind(), dtype_lattice::error::ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("at most 2^28"), "{e}");
    let e = rng.bits(&key, &[1 << 16, 1 << 16], 8).unwrap_err();
    assert_eq!(e.kind(), dtype_lattice::error::ErrorKind::InvalidArgument);
    // Past 2^64 elements JAX's NotImplementedError comes first.
    let e = rng.bits(&key, &[1 << 32, 1 << 32, 2], 8).unwrap_err();
    assert_eq!(e.exception(), Some(Exception::NotImplementedError));
}

#[test]
fn oversized_shapes_are_errors() {
    let rng = Random::new();
    let key = rng.key(0).unwrap();
    let e = rng.bits(&key, &[1 << 32, 1 << 32, 2], 32).unwrap_err();
    assert_eq!(e.exception(), Some(Exception::NotImplementedError));
    let e = rng.bits(&key, &[usize::MAX, usize::MAX], 8).unwrap_err();
    assert_eq!(e.exception(), Some(Exception::NotImplementedError));
    assert!(rng.split(&key, &[1 << 62, 4]).is_err());
}

/// The element-by-element samplers the block loops replaced: `width`-bit bits one at a time
/// (`for_each_bits`), then each value on its own (scalar `mul_add`, `erf_inv_f32`).
mod element_by_element {
    use super::*;
    use crate::kernels::erfinv::erf_inv_f32;
    use crate::prng::floats::{UniformFloat, uniform_of_bits};
    use crate::prng::values::Values;

    fn bits64(key: &Key, n: usize, width: u32) -> Vec<u64> {
        let mut v = vec![0u64; n];
        for_each_bits(key.data, width, 0, n, |j, b| v[j] = b);
        v
    }

    fn uniform<T: UniformFloat>(key: &Key, n: usize, lo: T, hi: T) -> Vec<T> {
        let rng_bits = if T::NMANT < 8 { 8 } else { T::NBITS };
        let span = hi.sub(lo);
        bits64(key, n, rng_bits)
            .into_iter()
            .map(|b| uniform_of_bits(b, rng_bits, lo, span))
            .collect()
    }

    fn normal<T: UniformFloat>(key: &Key, n: usize) -> Vec<T> {
        let sqrt2 = T::from_f64(std::f64::consts::SQRT_2);
        uniform(key, n, T::next_above_minus_one(), T::one())
            .into_iter()
            .map(|u| sqrt2.mul(T::from_f32(erf_inv_f32(u.to_f32()))))
            .collect()
    }

    const SIZES: [usize; 5] = [1, 7, 513, 3000, 2 * PARALLEL_MIN + 5];

    #[test]
    fn bits_uniform_normal_and_bernoulli_match() {
        let rng = Random::new().x64(true);
        for (s, &n) in SIZES.iter().enumerate() {
            let key = Key::from_data([s as u32, 0x1234_5678]);
            for w in [8, 16, 64] {
                let got: Vec<u64> = match rng.bits(&key, &[n], w).unwrap().into_values() {
                    Values::U8(v) => v.into_iter().map(u64::from).collect(),
                    Values::U16(v) => v.into_iter().map(u64::from).collect(),
                    Values::U64(v) => v,
                    _ => unreachable!(),
                };
                assert_eq!(got, bits64(&key, n, w), "bits {w} of {n}");
            }
            let f32s = |v: Values| match v {
                Values::F32(v) => v.into_iter().map(f32::to_bits).collect::<Vec<_>>(),
                _ => unreachable!(),
            };
            let (lo, hi) = (-3.0f32, 7.5f32);
            let u = rng.uniform(&key, &[n], DType::Float32, -3.0, 7.5).unwrap();
            let want: Vec<u32> = uniform(&key, n, lo, hi)
                .into_iter()
                .map(f32::to_bits)
                .collect();
            assert_eq!(f32s(u.into_values()), want, "uniform f32 of {n}");
            let u = rng.uniform(&key, &[n], DType::Float64, -1.0, 0.1).unwrap();
            let Values::F64(u) = u.into_values() else {
                unreachable!()
            };
            assert_eq!(u, uniform(&key, n, -1.0f64, 0.1), "uniform f64 of {n}");
            let z = rng.normal(&key, &[n], DType::Float32).unwrap();
            let want: Vec<u32> = normal::<f32>(&key, n)
                .into_iter()
                .map(f32::to_bits)
                .collect();
            assert_eq!(f32s(z.into_values()), want, "normal f32 of {n}");
            let z = rng.normal(&key, &[n], DType::BFloat16).unwrap();
            let Values::BF16(z) = z.into_values() else {
                unreachable!()
            };
            assert_eq!(z, normal::<half::bf16>(&key, n), "normal bf16 of {n}");
            let z = rng.normal(&key, &[n], DType::Float16).unwrap();
            let Values::F16(z) = z.into_values() else {
                unreachable!()
            };
            assert_eq!(z, normal::<half::f16>(&key, n), "normal f16 of {n}");
            for (x64, p) in [(false, 0.9), (true, 0.9), (false, 0.25)] {
                let b = Random::new().x64(x64).bernoulli(&key, &[n], p).unwrap();
                let Values::Bool(b) = b.into_values() else {
                    unreachable!()
                };
                let want: Vec<bool> = if x64 {
                    uniform(&key, n, 0.0f64, 1.0)
                        .into_iter()
                        .map(|u| u < p)
                        .collect()
                } else {
                    let p = p as f32;
                    uniform(&key, n, 0.0f32, 1.0)
                        .into_iter()
                        .map(|u| u < p)
                        .collect()
                };
                assert_eq!(b, want, "bernoulli {p} x64 {x64} of {n}");
            }
        }
    }
}
