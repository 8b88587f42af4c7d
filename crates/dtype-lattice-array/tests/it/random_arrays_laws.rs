//! Laws of the PRNG primitives on key arrays (proptest): they map over batched keys exactly
//! as `jax.vmap` of the single-key functions would (`random_split`, `random_bits`,
//! `random_fold_in` on a batch equal the per-key results, stacked), `random_fold_in`
//! broadcasts, `random_wrap`/`random_unwrap` are inverse, and the array API agrees with the
//! struct API ([`random::Random`]) for every seed.

use dtype_lattice::key::THREEFRY2X32;
use dtype_lattice::{DType, Error};
use dtype_lattice_array::core::{self, Param, Params};
use dtype_lattice_array::registry;
use dtype_lattice_array::{Array, random};
use proptest::prelude::*;

fn bind(name: &str, inputs: &[&Array], params: &Params) -> Result<Array, Error> {
    core::bind(registry::by_name(name).unwrap(), inputs, params).map(|mut v| v.remove(0))
}

fn ints(v: &[usize]) -> Param {
    Param::Ints(v.iter().map(|&d| d as i64).collect())
}

/// Key `i` of a key array, as a scalar key array.
fn key_at(keys: &Array, i: usize) -> Array {
    let b = &keys.as_bytes()[8 * i..8 * i + 8];
    Array::from_bytes(DType::KeyThreefry2x32, &[], b).unwrap()
}

fn keys_from(data: &[u32], shape: &[usize]) -> Array {
    let mut s = shape.to_vec();
    s.push(2);
    let d = Array::from_shape_vec(&s, data.to_vec()).unwrap();
    random::wrap_key_data(&d, DType::KeyThreefry2x32).unwrap()
}

fn batch() -> impl Strategy<Value = (Vec<usize>, Vec<u32>)> {
    proptest::collection::vec(1usize..4, 0..3).prop_flat_map(|shape| {
        let n: usize = shape.iter().product();
        (
            Just(shape),
            proptest::collection::vec(any::<u32>(), 2 * n..=2 * n),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn batched_primitives_are_the_per_key_results_stacked(
        (shape, data) in batch(),
        out in proptest::collection::vec(0usize..3, 0..3),
        width in prop::sample::select(vec![8i64, 16, 32, 64]),
    ) {
        let keys = keys_from(&data, &shape);
        let n = keys.size();
        let split = Params::new().with("shape", ints(&out));
        let bits = Params::new().with("bit_width", Param::Int(width)).with("shape", ints(&out));
        let all_keys = bind("random_split", &[&keys], &split).unwrap();
        let all_bits = bind("random_bits", &[&keys], &bits).unwrap();
        let full: Vec<usize> = shape.iter().chain(&out).copied().collect();
        prop_assert_eq!(all_keys.shape(), &full[..]);
        prop_assert_eq!(all_bits.shape(), &full[..]);
        let (kb, bb) = (all_keys.as_bytes(), all_bits.as_bytes());
        let (kstep, bstep) = (kb.len() / n.max(1), bb.len() / n.max(1));
        for i in 0..n {
            let one = key_at(&keys, i);
            let k = bind("random_split", &[&one], &split).unwrap();
            let b = bind("random_bits", &[&one], &bits).unwrap();
            prop_assert_eq!(k.as_bytes(), &kb[i * kstep..(i + 1) * kstep]);
            prop_assert_eq!(b.as_bytes(), &bb[i * bstep..(i + 1) * bstep]);
        }
    }

    #[test]
    fn fold_in_broadcasts_messages_over_keys((shape, data) in batch(), m in any::<u32>()) {
        let keys = keys_from(&data, &shape);
        // Messages of the keys' rank, every dimension 1: one message for every key.
        let ones = vec![1usize; shape.len()];
        let msgs = Array::from_shape_vec(&ones, vec![m]).unwrap();
        let folded = bind("random_fold_in", &[&keys, &msgs], &Params::new()).unwrap();
        prop_assert_eq!(folded.shape(), keys.shape());
        for i in 0..keys.size() {
            let one = random::fold_in(&key_at(&keys, i), i128::from(m)).unwrap();
            prop_assert_eq!(one.as_bytes(), &folded.as_bytes()[8 * i..8 * i + 8]);
        }
    }

    #[test]
    fn wrap_and_unwrap_are_inverse((shape, data) in batch()) {
        let keys = keys_from(&data, &shape);
        let d = bind("random_unwrap", &[&keys], &Params::new()).unwrap();
        prop_assert_eq!(d.to_vec::<u32>().unwrap(), data);
        let p = Params::new().with("impl", Param::KeyImpl(&THREEFRY2X32));
        let again = bind("random_wrap", &[&d], &p).unwrap();
        prop_assert_eq!(again.as_bytes(), keys.as_bytes());
        prop_assert_eq!(again.aval(), keys.aval());
    }

    #[test]
    fn the_array_api_is_the_struct_api(seed in any::<i32>(), data in any::<u32>()) {
        let rng = random::Random::new();
        let k = rng.fold_in(&rng.key(i128::from(seed)).unwrap(), i128::from(data)).unwrap();
        let key = random::fold_in(&random::key(i128::from(seed)).unwrap(), i128::from(data))
            .unwrap();
        prop_assert_eq!(random::key_data(&key).unwrap().to_vec::<u32>().unwrap(), k.data());
        let want = rng.bits(&k, &[5], 32).unwrap();
        let got = random::bits(&key, &[5]).unwrap();
        prop_assert_eq!(
            random::Values::U32(got.to_vec::<u32>().unwrap()),
            want.values().clone()
        );
    }

    /// The staged samplers (under `jit`: `random_bits` and lax primitives, as JAX stages
    /// them) compute the fused kernels' bits: `randint` over every integer width and bounds
    /// anywhere in the default integer's range (empty and reversed ranges, bounds beyond the
    /// dtype), `uniform` with any bounds, `normal` and `bernoulli`, with x64 off and on.
    #[test]
    fn staged_samplers_are_the_eager_ones(
        seed in any::<i32>(),
        lo in any::<i32>(),
        hi in any::<i32>(),
        width in 0usize..8,
        fl in -1e3f64..1e3,
        fh in -1e3f64..1e3,
        x64 in any::<bool>(),
    ) {
        use dtype_lattice_array::{jit, numpy as jnp};
        let ints = [
            DType::Int8, DType::UInt8, DType::Int16, DType::UInt16,
            DType::Int32, DType::UInt32, DType::Int64, DType::UInt64,
        ];
        let dtype = ints[width];
        let (lo, hi) = (i128::from(lo), i128::from(hi));
        let run = || -> Result<(), TestCaseError> {
            let key = random::key(i128::from(seed)).unwrap();
            let eager = random::randint(&key, &[7], lo, hi, dtype);
            let staged = jit(|k: Array| random::randint(&k, &[7], lo, hi, dtype)).call(&key);
            match (eager, staged) {
                (Ok(e), Ok(s)) => {
                    prop_assert_eq!(e.aval(), s.aval());
                    prop_assert_eq!(e.as_bytes(), s.as_bytes());
                }
                (Err(e), Err(s)) => prop_assert_eq!(e.to_string(), s.to_string()),
                (e, s) => prop_assert!(false, "{:?} vs {:?}", e.map(|a| a.to_string()), s.map(|a| a.to_string())),
            }
            for dt in [DType::Float32, DType::BFloat16, DType::Float16] {
                let e = random::uniform(&key, &[5], dt, fl, fh).unwrap();
                let s = jit(|k: Array| random::uniform(&k, &[5], dt, fl, fh)).call(&key).unwrap();
                prop_assert_eq!(e.as_bytes(), s.as_bytes(), "uniform {} {} {}", dt, fl, fh);
                let e = random::normal(&key, &[5], dt).unwrap();
                let s = jit(|k: Array| random::normal(&k, &[5], dt)).call(&key).unwrap();
                prop_assert_eq!(e.as_bytes(), s.as_bytes(), "normal {}", dt);
            }
            let p = (fl.abs() / 1e3).min(1.0);
            let e = random::bernoulli(&key, p, &[9]).unwrap();
            let s = jit(|k: Array| random::bernoulli(&k, p, &[9])).call(&key).unwrap();
            prop_assert_eq!(e.as_bytes(), s.as_bytes(), "bernoulli {}", p);
            Ok(())
        };
        if x64 {
            jnp::with_rules(dtype_lattice::Rules::jax().x64(true), run)?;
        } else {
            run()?;
        }
    }
}
