#!/usr/bin/env python3
"""Throughput of the peers of `dtype-lattice random bits --width 32 --shape 134217728 --out FILE`
on this machine: jitted `jax.random.bits` (threefry2x32, partitionable, like the CLI) and NumPy's
Philox `Generator.integers` for 2^27 uint32 values, in memory (no file). Median of 5 runs after
a warm-up (JAX's compilation is not timed).

Run with the fixture venv:  tools/.venv-jax/bin/python tools/bench_random_peers.py [--n 134217728]
Time the CLI side by side with hyperfine (tools/README.md, "bench_random_peers.py").
"""
import argparse
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def median_seconds(fn, repeat=5):
    fn()  # warm-up: compilation, page faults
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 27)
    n = ap.parse_args().n

    key = jax.random.key(0)
    bits = jax.jit(lambda k: jax.random.bits(k, (n,), jnp.uint32))
    t_jax = median_seconds(lambda: bits(key).block_until_ready())

    gen = np.random.Generator(np.random.Philox(0))
    t_np = median_seconds(lambda: gen.integers(0, 2**32, size=n, dtype=np.uint32))

    print(f"jax {jax.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs, n = {n}")
    print(f"jax.jit(jax.random.bits) uint32:      {t_jax:.3f} s  {n / t_jax / 1e6:8.1f} M values/s")
    print(f"numpy Philox Generator.integers u32:  {t_np:.3f} s  {n / t_np / 1e6:8.1f} M values/s")


if __name__ == "__main__":
    main()
