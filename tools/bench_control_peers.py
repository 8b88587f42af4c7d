"""Times JAX on the programs of `cargo bench -p dtype-lattice-array --bench control` (issue
27's targets), on this machine, in the same run:

    scan_rnn_h32_t10000        jitted lax.scan of h = tanh(h @ W + x_t @ U): h of 32, x_t of
                               8, 10,000 steps, float32; the final h
    scan_rnn_h32_t10000_grad   jitted value_and_grad of the final h's sum w.r.t. (W, U)

The inputs are those of benches/control.rs: W = 0.1 * cos(arange(1024)).reshape(32, 32),
U = 0.1 * sin(arange(256)).reshape(8, 32), xs = cos(0.01 * arange(80000)).reshape(10000, 8),
h0 = zeros(32). JAX runs on CPU, compiled before timing, `block_until_ready` after each call.
Prints the median of --runs runs (ms), and the load average.

    tools/.venv-jax/bin/python tools/bench_control_peers.py [--runs 15] [--json]
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


def inputs():
    w = 0.1 * jnp.cos(jnp.arange(1024, dtype=jnp.float32)).reshape(32, 32)
    u = 0.1 * jnp.sin(jnp.arange(256, dtype=jnp.float32)).reshape(8, 32)
    xs = jnp.cos(0.01 * jnp.arange(80000, dtype=jnp.float32)).reshape(10000, 8)
    h0 = jnp.zeros(32, jnp.float32)
    return w, u, xs, h0


def rnn(w, u, xs, h0):
    h, _ = jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x @ u), None), h0, xs)
    return h


def loss(wu, xs, h0):
    w, u = wu
    return jnp.sum(rnn(w, u, xs, h0))


def median_ms(fn, runs):
    jax.block_until_ready(fn())
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    w, u, xs, h0 = inputs()
    fwd = jax.jit(rnn)
    vg = jax.jit(jax.value_and_grad(loss))
    out = {
        "scan_rnn_h32_t10000": median_ms(lambda: fwd(w, u, xs, h0), a.runs),
        "scan_rnn_h32_t10000_grad": median_ms(lambda: vg((w, u), xs, h0), a.runs),
    }
    checks = {"final_h_sum": float(jnp.sum(fwd(w, u, xs, h0))),
              "grad_w_sum": float(jnp.sum(vg((w, u), xs, h0)[1][0]))}
    if a.json:
        print(json.dumps({"jax": jax.__version__, "ms": out, "checks": checks}))
        return
    print(f"jax {jax.__version__}, load average {os.getloadavg()[0]:.2f}")
    for k, v in out.items():
        print(f"{k:28s} {v:10.3f} ms")
    for k, v in checks.items():
        print(f"{k:28s} {v!r}")


if __name__ == "__main__":
    main()
