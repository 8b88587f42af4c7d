//! Criterion benches for the PRNG (`dtype_lattice_array::random`).
//!
//! - `random_bits_u32`: `jax.random.bits(key, (2**24,), uint32)` into a reused buffer, all
//!   threads, with the best SIMD backend of this CPU (`Random::bits_into`).
//! - `random_bits_u32_alloc`: the same into a fresh array (`Random::bits`): page faults of the
//!   new 64 MiB included.
//! - `random_bits_u32_1thread/<backend>`: the same on one thread per backend (AVX-512, AVX2,
//!   scalar), to see what the SIMD kernels and the second core each contribute.
//! - `random_uniform_f32`: `jax.random.uniform(key, (2**24,), float32)`.

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

criterion_group!(random, benches);
criterion_main!(random);
