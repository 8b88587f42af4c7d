//! Issue 11's transformation benchmarks, timed beside tools/bench_transform_peers.py (JAX on
//! the same programs):
//!
//! - `train_mlp_step_default` and `train_mlp_step_n4096_h256`: one call of the train_mlp
//!   example's jitted `step` (value_and_grad of the loss and the update), at the defaults and
//!   at `--n 4096 --hidden 256`;
//! - `trace_compile_step`: a fresh jitted `step` traced and compiled (`jax.jit(step)
//!   .lower(...).compile()`), not run;
//! - `jit_sin_mul_add_2e24`: jitted `sin(x) * 2 + 1` over 2^24 float32;
//! - `loss_default` and `grad_default`: the jitted loss and the jitted gradient of the loss at
//!   the defaults (the target: the gradient at most 3 times the loss).

#[allow(dead_code)]
#[path = "../examples/train_mlp.rs"]
mod train_mlp;

use criterion::{Criterion, criterion_group, criterion_main};
use dtype_lattice_array::jit;
use dtype_lattice_array::{Array, numpy as jnp};
use std::hint::black_box;
use train_mlp::{Args, Params, StepArgs};

fn step_args(a: &Args) -> StepArgs {
    let (x, y, params, kt) = train_mlp::setup(a).unwrap();
    train_mlp::step_args(params, &x, &y, &kt, 0).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("transform");
    g.sample_size(20);
    for (name, a) in [
        ("train_mlp_step_default", Args::default()),
        (
            "train_mlp_step_n4096_h256",
            Args {
                n: 4096,
                hidden: 256,
                ..Args::default()
            },
        ),
    ] {
        let step = train_mlp::step(&train_mlp::model(a.keep), a.lr);
        let args = step_args(&a);
        g.bench_function(name, |b| {
            b.iter(|| step.call::<_, (Params, Array)>(black_box(&args)).unwrap())
        });
    }
    let a = Args::default();
    let model = train_mlp::model(a.keep);
    let args = step_args(&a);
    g.bench_function("trace_compile_step", |b| {
        b.iter(|| {
            let step = train_mlp::step(&model, a.lr);
            step.compile::<_, (Params, Array)>(black_box(&args))
                .unwrap();
        })
    });
    let loss = train_mlp::loss(&model);
    g.bench_function("loss_default", |b| {
        b.iter(|| loss.call::<_, Array>(black_box(&args)).unwrap())
    });
    let grad = train_mlp::grad(&model);
    g.bench_function("grad_default", |b| {
        b.iter(|| grad.call::<_, Params>(black_box(&args)).unwrap())
    });
    let x: Vec<f32> = (0..1u32 << 24)
        .map(|i| (i as f32 * 1e-3).sin() * 10.0)
        .collect();
    let x = Array::from_vec(x);
    let f = jit(|x: Array| jnp::add(jnp::multiply(jnp::sin(&x)?, 2.0)?, 1.0));
    g.bench_function("jit_sin_mul_add_2e24", |b| {
        b.iter(|| f.call::<_, Array>(black_box(&x)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
