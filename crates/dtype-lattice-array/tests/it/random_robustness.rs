//! Bad input to the PRNG never panics: arbitrary seeds, data, shapes (overflowing ones
//! included), widths, dtypes, bounds and probabilities give a value or a clear error.

use dtype_lattice::DType;
use dtype_lattice_array::random::{Key, KeyArray, Random};
use proptest::prelude::*;

fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        prop::collection::vec(0usize..5, 0..4),
        // Sizes that overflow 2^64 or memory: refused before any allocation.
        prop::collection::vec(
            prop_oneof![Just(usize::MAX), Just(1usize << 40), 0usize..3],
            1..4
        ),
    ]
}

fn dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(DType::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn samplers_never_panic(
        seed in any::<i128>(),
        data in any::<i128>(),
        shape in shape(),
        width in prop_oneof![Just(8u32), Just(16), Just(32), Just(64), any::<u32>()],
        t in dtype(),
        lo in any::<i128>(),
        hi in any::<i128>(),
        (a, b, p) in (any::<f64>(), any::<f64>(), any::<f64>()),
        x64 in any::<bool>(),
    ) {
        let rng = Random::new().x64(x64).threads(2);
        let key = rng.key(seed).unwrap_or(Key::from_data([1, 2]));
        let _ = rng.fold_in(&key, data);
        let size = if shape.contains(&0) {
            Some(0)
        } else {
            shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
        };
        let small = size.is_some_and(|n| n < 1 << 12);
        let results = [
            rng.bits(&key, &shape, width).map(|s| s.values().len()),
            rng.uniform(&key, &shape, t, a, b).map(|s| s.values().len()),
            rng.normal(&key, &shape, t).map(|s| s.values().len()),
            rng.randint(&key, &shape, lo, hi, t).map(|s| s.values().len()),
            rng.bernoulli(&key, &shape, p).map(|s| s.values().len()),
            rng.split(&key, &shape).map(|k| k.len()),
        ];
        // Each sampler's documented domain: bits of 8, 16, 32 or 64 bits; uniform and normal
        // in float16, bfloat16, float32, float64; randint in the 8- to 64-bit integers (bounds
        // within the default int);
        // bernoulli and split take anything. Inside it and with a small shape, an answer of
        // the shape's size; outside, or with a shape too large, an error.
        let float = matches!(t, DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64);
        // randint's bounds are Python ints: within the default int (JAX's OverflowError).
        let (min, max) = if x64 { (i64::MIN.into(), i64::MAX.into()) } else { (i32::MIN.into(), i32::MAX.into()) };
        let bounds = [lo, hi].iter().all(|v| (min..=max).contains(v));
        let int = t.kind().is_integer() && (8..=64).contains(&t.bits()) && bounds;
        let valid = [[8, 16, 32, 64].contains(&width), float, float, int, true, true];
        for (i, (r, ok)) in results.into_iter().zip(valid).enumerate() {
            match r {
                Ok(n) => prop_assert!(ok && small && Some(n) == size, "sampler {i}: {n} values"),
                Err(e) => prop_assert!(!(ok && small), "sampler {i}: {e}"),
            }
        }
    }

    #[test]
    fn key_data_of_any_length_never_panics(data in prop::collection::vec(any::<u32>(), 0..7), i in 0usize..5) {
        for &t in DType::EXTENDED {
            // Key data of shape (n,) is one key exactly when n is the implementation's words.
            let words = t.key_impl().unwrap().key_words;
            match KeyArray::wrap_key_data(t, &[data.len()], data.clone()) {
                Ok(keys) => {
                    prop_assert_eq!(data.len(), words);
                    prop_assert_eq!(keys.len(), 1);
                    // Only threefry2x32 keys can be taken out as sampling keys.
                    prop_assert_eq!(keys.key(i).is_ok(), i == 0 && t == DType::KeyThreefry2x32);
                }
                Err(_) => prop_assert_ne!(data.len(), words),
            }
        }
        // A numeric dtype is not a key dtype.
        prop_assert!(KeyArray::wrap_key_data(DType::UInt32, &[data.len()], data.clone()).is_err());
    }
}
