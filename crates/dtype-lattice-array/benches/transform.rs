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
//!   the defaults (the target: the gradient at most 3 times the loss);
//! - `jaxpr_parse_10k`: reading a printed jaxpr of 10,000 equations (the target: 20 ms);
//! - `jaxpr_train_mlp_step_default`: the same `step` as `train_mlp_step_default`, read from the
//!   jaxpr JAX prints for it (tests/fixtures/jaxpr/train_mlp_step.json) and jitted (the target:
//!   within 10 % of the hand-written step).

#[allow(dead_code)]
#[path = "../examples/train_mlp.rs"]
mod train_mlp;

#[allow(dead_code)]
#[path = "../../../tests/common/arrays.rs"]
mod fixture_arrays;

use criterion::{Criterion, criterion_group, criterion_main};
use dtype_lattice_array::core::ClosedJaxpr;
use dtype_lattice_array::jit;
use dtype_lattice_array::{Array, numpy as jnp};
use std::hint::black_box;
use train_mlp::{Args, Params, StepArgs};

fn step_args(a: &Args) -> StepArgs {
    let (x, y, params, kt) = train_mlp::setup(a).unwrap();
    train_mlp::step_args(params, &x, &y, &kt, 0).unwrap()
}

/// A printed jaxpr of `n` elementwise equations over `f32[8]` (a chain of `sin`, `mul` by a
/// literal and `add` of the two previous values), as JAX lays one out.
fn long_jaxpr(n: usize) -> String {
    let name = |mut i: usize| {
        let mut s = Vec::new();
        loop {
            s.push(b'a' + (i % 26) as u8);
            i /= 26;
            if i == 0 {
                break;
            }
        }
        s.reverse();
        String::from_utf8(s).unwrap()
    };
    let mut t = String::from("{ lambda ; a:f32[8]. let");
    for i in 1..=n {
        let (v, p) = (name(i), name(i - 1));
        let rhs = match i % 3 {
            0 => format!("sin {p}"),
            1 => format!("mul {p} 0.5:f32[]"),
            _ => format!("add {p} {}", name(i.saturating_sub(2))),
        };
        t.push_str(&format!("\n    {v}:f32[8] = {rhs}"));
    }
    t.push_str(&format!("\n  in ({},) }}", name(n)));
    t
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
    let text = long_jaxpr(10_000);
    g.bench_function("jaxpr_parse_10k", |b| {
        b.iter(|| black_box(&text).parse::<ClosedJaxpr>().unwrap())
    });
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/jaxpr/train_mlp_step.json"
    );
    let fx: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let consts = fx["consts"]
        .as_array()
        .unwrap()
        .iter()
        .map(fixture_arrays::array);
    let step: ClosedJaxpr = fx["text"].as_str().unwrap().parse().unwrap();
    let step = step.with_consts(consts.collect()).unwrap();
    let mut args: Vec<Array> = fx["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(fixture_arrays::array)
        .collect();
    args.extend([
        fixture_arrays::array(&fx["x"]),
        fixture_arrays::array(&fx["y"]),
        fixture_arrays::array(&fx["keys"][0]),
        Array::scalar(0.1f32),
        Array::scalar(0.9f32),
    ]);
    let jitted = jit(|a: Vec<Array>| step.call(&a));
    g.bench_function("jaxpr_train_mlp_step_default", |b| {
        b.iter(|| jitted.call::<_, Vec<Array>>(black_box(&args)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
