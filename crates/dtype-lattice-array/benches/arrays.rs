//! Array benchmarks, the six of issue 10 first (`add_f32_2e24`, `add_bf16_2e24`,
//! `add_f8e4m3fn_2e24`: two arrays of 2^24 elements into a new one through `jnp::add`;
//! `astype_f32_f8e4m3fn_2e24`; `add_f32_8`: an 8-element add; `matmul_f32_1024`), timed
//! beside tools/bench_arrays_peers.py. `astype_f32_f8e4m3fn_2e24`: 2^24 float32 → float8_e4m3fn into a new
//! buffer, the counterpart of `x.astype(ml_dtypes.float8_e4m3fn)` and jitted
//! `x.astype(jnp.float8_e4m3fn)` timed by tools/bench_convert_peers.py on the same input.
//! The `_2e15_in_cache` twins of the float8 add and cast: one thread on data in the caches,
//! the kernels' own throughput without the memory traffic.
//! `exp_f32_2e24`, `log1p_f32_2e24`, … and their `_256x32` twins: the float32 transcendentals
//! of `prim::vmath` through `core::bind`.

use criterion::{Criterion, criterion_group, criterion_main};
use dtype_lattice::DType;
use dtype_lattice_array::convert::{convert, convert_to_vec};
use dtype_lattice_array::{Array, core, numpy as jnp, registry};
use std::hint::black_box;

/// The peers' input: `np.random.default_rng(0).standard_normal(2**24, dtype=np.float32) * 100`
/// is not reproducible here, so a fixed-seed xorshift normal-ish spread of the same scale.
fn input(n: usize) -> Vec<u8> {
    input_seeded(n, 0x9e37_79b9_7f4a_7c15)
}

fn input_seeded(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed;
    let mut out = Vec::with_capacity(4 * n);
    for _ in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let u = (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        let x = u * 400.0 * (1.0 + (s & 0xff) as f32 / 64.0);
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

fn bench(c: &mut Criterion) {
    let src = input(1 << 24);
    let mut g = c.benchmark_group("arrays");
    g.sample_size(20);
    let a32 = Array::from_bytes(DType::Float32, &[1 << 24], &src).unwrap();
    let b32 = Array::from_bytes(DType::Float32, &[1 << 24], &input_seeded(1 << 24, 7)).unwrap();
    g.bench_function("add_f32_2e24", |b| {
        b.iter(|| jnp::add(black_box(&a32), &b32).unwrap())
    });
    for (name, dtype) in [
        ("add_bf16_2e24", DType::BFloat16),
        ("add_f8e4m3fn_2e24", DType::Float8E4M3Fn),
    ] {
        let (x, y) = (a32.astype(dtype).unwrap(), b32.astype(dtype).unwrap());
        g.bench_function(name, |b| b.iter(|| jnp::add(black_box(&x), &y).unwrap()));
    }
    // Beside `add_bf16_2e24`: the same traffic (two 2-byte operands read, a 2-byte
    // result streamed out, on all cores) with next to no arithmetic, through the generic staged
    // loop (which does not prefetch; the bfloat16 kernel does).
    let (x, y) = (
        a32.astype(DType::UInt16).unwrap(),
        b32.astype(DType::UInt16).unwrap(),
    );
    g.bench_function("or_u16_2e24", |b| {
        b.iter(|| jnp::bitwise_or(black_box(&x), &y).unwrap())
    });
    let (s, t) = (
        Array::from_vec(vec![1.5f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),
        Array::from_vec(vec![0.5f32; 8]),
    );
    g.bench_function("add_f32_8", |b| {
        b.iter(|| jnp::add(black_box(&s), &t).unwrap())
    });
    let m1 = Array::from_bytes(DType::Float32, &[1024, 1024], &src[..4 << 20]).unwrap();
    let m2 = Array::from_bytes(DType::Float32, &[1024, 1024], &src[4 << 20..8 << 20]).unwrap();
    g.bench_function("matmul_f32_1024", |b| {
        b.iter(|| jnp::matmul(black_box(&m1), &m2).unwrap())
    });
    g.bench_function("astype_f32_f8e4m3fn_2e24", |b| {
        b.iter(|| black_box(&a32).astype(DType::Float8E4M3Fn).unwrap())
    });
    g.bench_function("convert_to_vec_f32_f8e4m3fn_2e24", |b| {
        b.iter(|| convert_to_vec(DType::Float32, black_box(&src), DType::Float8E4M3Fn).unwrap())
    });
    g.bench_function("astype_f32_bf16_2e24", |b| {
        b.iter(|| convert_to_vec(DType::Float32, black_box(&src), DType::BFloat16).unwrap())
    });
    // In cache, one thread (below the parallel threshold): the float8 kernel's own
    // throughput, without the memory traffic of `add_f8e4m3fn_2e24`.
    let part = |v: &[u8]| {
        let a = Array::from_bytes(DType::Float32, &[1 << 15], &v[..4 << 15]).unwrap();
        a.astype(DType::Float8E4M3Fn).unwrap()
    };
    let (x, y) = (part(&src), part(&input_seeded(1 << 15, 7)));
    g.bench_function("add_f8e4m3fn_2e15_in_cache", |b| {
        b.iter(|| jnp::add(black_box(&x), &y).unwrap())
    });
    // In cache, one thread: the encoder's own throughput.
    let small = &src[..4 << 15];
    let mut out = vec![0u8; 1 << 15];
    g.bench_function("astype_f32_f8e4m3fn_2e15_in_cache", |b| {
        b.iter(|| {
            convert(
                DType::Float32,
                black_box(small),
                DType::Float8E4M3Fn,
                &mut out,
            )
            .unwrap()
        })
    });
    let f8 = convert_to_vec(DType::Float32, &src, DType::Float8E4M3Fn).unwrap();
    g.bench_function("astype_f8e4m3fn_f32_2e24", |b| {
        b.iter(|| convert_to_vec(DType::Float8E4M3Fn, black_box(&f8), DType::Float32).unwrap())
    });
    // Transcendentals (prim::vmath): float32 [256, 32] (one thread) and 2^24 elements of the
    // peers' spread (arguments to ±1600; log1p of their magnitudes).
    let small = Array::from_bytes(DType::Float32, &[256, 32], &src[..4 * 8192]).unwrap();
    let abs = registry::by_name("abs").unwrap();
    let none = core::Params::new();
    let abs32 = core::bind(abs, &[&a32], &none).unwrap().remove(0);
    let abs_small = core::bind(abs, &[&small], &none).unwrap().remove(0);
    for name in ["exp", "log1p", "logistic", "sin", "tanh"] {
        let p = registry::by_name(name).unwrap();
        let (x, xs) = if name == "log1p" {
            (&abs32, &abs_small)
        } else {
            (&a32, &small)
        };
        g.bench_function(format!("{name}_f32_2e24"), |b| {
            b.iter(|| core::bind(p, &[black_box(x)], &none).unwrap())
        });
        g.bench_function(format!("{name}_f32_256x32"), |b| {
            b.iter(|| core::bind(p, &[black_box(xs)], &none).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
