#!/usr/bin/env python3
"""JAX's side of `cargo bench -p dtype-lattice-array --bench random -- impls` (issue 29's
targets), on this machine, in the same run:

    threefry_bits_u32_2e24    jax.random.bits(key(0), (2**24,), uint32), threefry2x32
    rbg_bits_u32_2e24         the same with impl='rbg' (XLA's RngBitGenerator)
    unsafe_rbg_bits_u32_2e24  the same with impl='unsafe_rbg'
    gamma_f32_2e20/alpha=A    jax.random.gamma(key(0), A, (2**20,), float32), A in 0.5, 1, 4

Each is jitted and compiled before timing, `block_until_ready` after each call. Prints the
median of --runs runs (ms) and each output's check (the sum of its values as float64, which
the bench prints too).

    tools/.venv-jax/bin/python tools/bench_prng_peers.py [--runs 10] [--json]
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def median_ms(fn, runs):
    out = fn()
    jax.block_until_ready(out)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        jax.block_until_ready(fn())
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    progs = {}
    for impl, name in [("threefry2x32", "threefry"), ("rbg", "rbg"),
                       ("unsafe_rbg", "unsafe_rbg")]:
        key = jax.random.key(0, impl=impl)
        progs[f"{name}_bits_u32_2e24"] = (
            jax.jit(lambda k: jax.random.bits(k, (1 << 24,), jnp.uint32)), key)
    for alpha in [0.5, 1.0, 4.0]:
        progs[f"gamma_f32_2e20/alpha={alpha:g}"] = (
            jax.jit(lambda k, a=alpha: jax.random.gamma(k, a, (1 << 20,), jnp.float32)),
            jax.random.key(0))
    ms, checks = {}, {}
    for name, (f, key) in progs.items():
        ms[name], out = median_ms(lambda: f(key), a.runs)
        checks[name] = float(np.asarray(out, np.float64).sum())
    load = os.getloadavg()[0]
    if a.json:
        print(json.dumps({"jax": jax.__version__, "load": load, "ms": ms, "checks": checks}))
        return
    print(f"jax {jax.__version__}, load average {load:.2f}, median of {a.runs} runs")
    for name in progs:
        print(f"{name:32} {ms[name]:9.2f} ms   check {checks[name]:.6g}")


if __name__ == "__main__":
    main()
