//! Unit tests of the PRNG's internals.

use dtype_lattice::DType;
use dtype_lattice::error::Exception;

use super::fill::*;
use super::keys::*;
use super::sampler::*;
use super::shape::*;
use super::simd;

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
