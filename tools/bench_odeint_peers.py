"""Times JAX on the program of examples/odeint.rs (the jitted solve of
jax.experimental.ode.odeint and its vjp: the gradient of sum(ys ** 2) w.r.t. y0 and the
parameters), on this machine, to compare with

    cargo run --release -p dtype-lattice-array --example odeint -- ARGS --repeat K

Takes the example's command line (the same flags; --repeat is the number of timed calls) and
prints, in ms: the first call (tracing, compiling and running: a fresh process's first call
of the jitted function), the median of the steady calls after it, and the load average. JAX on
CPU, `block_until_ready` after each call.

    tools/.venv-jax/bin/python tools/bench_odeint_peers.py --system lotka --y0 10,5 \\
        --params 1.5,1,3,1 --t1 10 --points 50 --rtol 1e-6 --atol 1e-6 [--dtype float64 --x64] \\
        [--repeat 1000] [--json]
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system", required=True, choices=["lotka", "pendulum", "decay"])
    ap.add_argument("--y0", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--t1", type=float, required=True)
    ap.add_argument("--points", type=int, required=True)
    ap.add_argument("--rtol", type=float, required=True)
    ap.add_argument("--atol", type=float, required=True)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--x64", action="store_true")
    ap.add_argument("--repeat", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    import jax
    jax.config.update("jax_enable_x64", a.x64)
    import jax.numpy as jnp
    from jax.experimental.ode import odeint

    def lotka(y, t, a_, b, c, d):
        return jnp.stack([a_ * y[0] - b * y[0] * y[1], c * y[0] * y[1] - d * y[1]])

    def pendulum(y, t, g, l):
        return jnp.stack([y[1], -(g / l) * jnp.sin(y[0])])

    def decay(y, t, k):
        return -k * y * (1 + jnp.sin(t))

    f = {"lotka": lotka, "pendulum": pendulum, "decay": decay}[a.system]
    dtype = jnp.dtype(a.dtype)
    y0 = jnp.asarray([float(v) for v in a.y0.split(",")], dtype)
    params = tuple(jnp.asarray(float(p), dtype) for p in a.params.split(","))
    ts = jnp.linspace(0., a.t1, a.points, dtype=dtype)

    def solve(y0, params):
        return odeint(f, y0, ts, *params, rtol=a.rtol, atol=a.atol)

    @jax.jit
    def run(y0, params):
        ys, pullback = jax.vjp(solve, y0, params)
        return ys, pullback(jax.grad(lambda ys: jnp.sum(ys ** 2))(ys))

    t = time.perf_counter()
    jax.block_until_ready(run(y0, params))
    first = (time.perf_counter() - t) * 1e3
    times = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        jax.block_until_ready(run(y0, params))
        times.append(time.perf_counter() - t)
    steady = statistics.median(times) * 1e3
    load = os.getloadavg()
    if a.json:
        print(json.dumps({"jax": jax.__version__, "first_call_ms": first,
                          "steady_median_ms": steady, "calls": a.repeat,
                          "loadavg": load}))
    else:
        print(f"jax {jax.__version__}: first call {first:.1f} ms, steady median "
              f"{steady:.4f} ms over {a.repeat} calls (load average {load[0]:.2f})")


if __name__ == "__main__":
    main()
