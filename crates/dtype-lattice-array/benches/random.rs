//! Criterion benches for the PRNG (`dtype_lattice_array::random`).
//!
//! - `random_bits_u32`: `jax.random.bits(key, (2**24,), uint32)` into a reused buffer, all
//!   threads, with the best SIMD backend of this CPU (`Random::bits_into`).
//! - `random_bits_u32_alloc`: the same into a fresh array (`Random::bits`): page faults of the
//!   new 64 MiB included.
//! - `random_bits_u32_1thread/<backend>`: the same on one thread per backend (AVX-512, AVX2,
//!   scalar), to see what the SIMD kernels and the second core each contribute.
//! - `random_uniform_f32`: `jax.random.uniform(key, (2**24,), float32)`.
//!
//! Issue 29's group `impls`, beside `tools/bench_prng_peers.py` (jitted JAX, same run):
//!
//! - `threefry_bits_u32_2e24`, `rbg_bits_u32_2e24`, `unsafe_rbg_bits_u32_2e24`:
//!   `jax.random.bits(jax.random.key(0, impl=...), (2**24,), uint32)` through the array API
//!   (targets: rbg at least JAX's speed; threefry ≥ 10× JAX's);
//! - `gamma_f32_2e20/alpha=A`: `jax.random.gamma(jax.random.key(0), A, (2**20,), float32)`,
//!   A in 0.5, 1, 4 (target: at least JAX's speed).
//!
//! Each prints a check (the sum of the output as float64) to compare with the peers'.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dtype_lattice::DType;
use dtype_lattice_array::random::Random;
use dtype_lattice_array::random::{Backend, fill_bits32_with};

const N: usize = 1 << 24;

fn benches(c: &mut Criterion) {
    let rng = Random::new();
    let key = rng.key(42).unwrap();

    let mut g = c.benchmark_group("random");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(20);
    let mut buf = vec![0u32; N];
    g.bench_function("random_bits_u32", |b| {
        b.iter(|| rng.bits_into(black_box(&key), 0, &mut buf))
    });
    g.bench_function("random_bits_u32_alloc", |b| {
        b.iter(|| rng.bits(black_box(&key), &[N], 32).unwrap())
    });
    g.bench_function("random_uniform_f32", |b| {
        b.iter(|| {
            rng.uniform(black_box(&key), &[N], DType::Float32, 0.0, 1.0)
                .unwrap()
        })
    });
    let mut out = vec![0u32; N];
    for backend in [Backend::Avx512, Backend::Avx2, Backend::Scalar] {
        g.bench_function(format!("random_bits_u32_1thread/{}", backend.name()), |b| {
            b.iter(|| fill_bits32_with(backend, black_box(&key), 0, &mut out))
        });
    }
    g.finish();
}

fn impls(c: &mut Criterion) {
    use dtype_lattice_array::{Array, random};
    let sum = |a: &Array| -> f64 {
        a.astype(DType::Float64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
            .iter()
            .sum()
    };
    let mut g = c.benchmark_group("impls");
    g.sample_size(10);
    for (name, impl_name) in [
        ("threefry", "threefry2x32"),
        ("rbg", "rbg"),
        ("unsafe_rbg", "unsafe_rbg"),
    ] {
        let key = random::key_with(0, impl_name).unwrap();
        let f = || random::bits_dtype(&key, &[1 << 24], DType::UInt32).unwrap();
        eprintln!("{name}_bits_u32_2e24 check {:.6e}", sum(&f()));
        g.bench_function(format!("{name}_bits_u32_2e24"), |b| {
            b.iter(|| black_box(f()))
        });
    }
    for alpha in [0.5, 1.0, 4.0] {
        let key = random::key(0).unwrap();
        let a = Array::python_scalar(alpha).unwrap();
        let f = || random::gamma(&key, &a, Some(&[1 << 20]), DType::Float32).unwrap();
        eprintln!("gamma_f32_2e20/alpha={alpha} check {:.6e}", sum(&f()));
        g.bench_function(format!("gamma_f32_2e20/alpha={alpha}"), |b| {
            b.iter(|| black_box(f()))
        });
    }
    g.finish();
}

criterion_group!(random, benches, impls);
criterion_main!(random);
