//! Issue 27's control-flow benchmarks, timed beside tools/bench_control_peers.py (JAX on the
//! same programs and inputs):
//!
//! - `scan_rnn_h32_t10000`: a jitted `lax.scan` of `h = tanh(h @ W + x_t @ U)`, h of 32, x_t
//!   of 8, 10,000 steps, float32 (the target: within 2× of JAX);
//! - `scan_rnn_h32_t10000_grad`: the jitted `value_and_grad` of the final h's sum with
//!   respect to `(W, U)` (the target: at most JAX's time).

use criterion::{Criterion, criterion_group, criterion_main};
use dtype_lattice::DType;
use dtype_lattice_array::interpreters::control;
use dtype_lattice_array::{Array, jit, numpy as jnp, value_and_grad};
use std::hint::black_box;

type R<T> = Result<T, dtype_lattice::Error>;

/// The peers script's inputs: W, U, xs, h0.
fn inputs() -> R<(Array, Array, Array, Array)> {
    let range = |n: usize| jnp::arange(0.0, n as f64, 1.0, DType::Float32);
    let w = jnp::reshape(&jnp::multiply(0.1, jnp::cos(&range(1024)?)?)?, &[32, 32])?;
    let u = jnp::reshape(&jnp::multiply(0.1, jnp::sin(&range(256)?)?)?, &[8, 32])?;
    let xs = jnp::reshape(
        &jnp::cos(&jnp::multiply(0.01, range(80000)?)?)?,
        &[10000, 8],
    )?;
    let h0 = jnp::zeros(&[32], DType::Float32)?;
    Ok((w, u, xs, h0))
}

/// The final h of the RNN.
fn rnn(w: &Array, u: &Array, xs: &Array, h0: &Array) -> R<Array> {
    let (h, ()) = control::scan(
        |h: Array, x: Array| {
            let pre = jnp::add(jnp::matmul(&h, w)?, jnp::matmul(&x, u)?)?;
            Ok((jnp::tanh(&pre)?, ()))
        },
        h0,
        xs,
        None,
        false,
    )?;
    Ok(h)
}

fn control_flow(c: &mut Criterion) {
    let (w, u, xs, h0) = inputs().unwrap();
    let fwd = jit(|(w, u, xs, h0): (Array, Array, Array, Array)| rnn(&w, &u, &xs, &h0));
    let args = (w.clone(), u.clone(), xs.clone(), h0.clone());
    let h: Array = fwd.call(&args).unwrap();
    println!(
        "final_h_sum {:?}",
        jnp::sum(&h, Default::default(), false)
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    );
    c.bench_function("scan_rnn_h32_t10000", |b| {
        b.iter(|| black_box(fwd.call(&args).unwrap()))
    });
    let vg = jit(|((w, u), xs, h0): ((Array, Array), Array, Array)| {
        value_and_grad(
            |(w, u): (Array, Array)| jnp::sum(rnn(&w, &u, &xs, &h0)?, Default::default(), false),
            &(w, u),
        )
    });
    let gargs = ((w, u), xs, h0);
    let (_, (gw, _)): (Array, (Array, Array)) = vg.call(&gargs).unwrap();
    println!(
        "grad_w_sum {:?}",
        jnp::sum(&gw, Default::default(), false)
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    );
    c.bench_function("scan_rnn_h32_t10000_grad", |b| {
        b.iter(|| black_box(vg.call(&gargs).unwrap()))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = control_flow
}
criterion_main!(benches);
