"""Times the peers of `cargo bench -p dtype-lattice-array --bench arrays` (issue 10's six
benchmarks), on the same shapes and dtypes:

    add_f32_2e24             np.add / jitted jnp.add of two float32 arrays of 2^24 into a new one
    add_bf16_2e24            the same in bfloat16 (NumPy + ml_dtypes; JAX)
    add_f8e4m3fn_2e24        the same in float8_e4m3fn
    astype_f32_f8e4m3fn_2e24 x.astype(float8_e4m3fn) of 2^24 float32
    add_f32_8                an 8-element float32 add (NumPy; eager JAX, as a user calls it)
    matmul_f32_1024          1024x1024 @ 1024x1024 float32 (NumPy; jitted JAX)

JAX runs on CPU with the inputs on the device and the functions compiled before timing,
`block_until_ready` after each call. Prints the median of --runs runs of each (ms, or µs for
the 8-element add) as a table, and the load average.

    tools/.venv-jax/bin/python tools/bench_arrays_peers.py [--runs 9] [--json]
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402


def median_s(fn, runs, inner=1):
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t) / inner)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    n = 1 << 24
    rng = np.random.default_rng(0)
    a32 = (rng.standard_normal(n, dtype=np.float32) * 100).astype(np.float32)
    b32 = (rng.standard_normal(n, dtype=np.float32) * 100).astype(np.float32)
    rows = []

    jadd = jax.jit(jnp.add)
    for name, dt in [("add_f32_2e24", np.float32), ("add_bf16_2e24", ml_dtypes.bfloat16),
                     ("add_f8e4m3fn_2e24", ml_dtypes.float8_e4m3fn)]:
        a, b = a32.astype(dt), b32.astype(dt)
        ja, jb = jax.device_put(a), jax.device_put(b)
        rows.append((name, "ms",
                     median_s(lambda: np.add(a, b), args.runs) * 1e3,
                     median_s(lambda: jadd(ja, jb).block_until_ready(), args.runs) * 1e3))

    cast = jax.jit(lambda x: x.astype(jnp.float8_e4m3fn))
    j32 = jax.device_put(a32)
    rows.append(("astype_f32_f8e4m3fn_2e24", "ms",
                 median_s(lambda: a32.astype(ml_dtypes.float8_e4m3fn), args.runs) * 1e3,
                 median_s(lambda: cast(j32).block_until_ready(), args.runs) * 1e3))

    s, t = a32[:8].copy(), b32[:8].copy()
    js, jt = jax.device_put(s), jax.device_put(t)
    rows.append(("add_f32_8", "µs",
                 median_s(lambda: np.add(s, t), args.runs, inner=10000) * 1e6,
                 median_s(lambda: jnp.add(js, jt).block_until_ready(), args.runs, inner=1000)
                 * 1e6))

    m1 = rng.standard_normal((1024, 1024), dtype=np.float32)
    m2 = rng.standard_normal((1024, 1024), dtype=np.float32)
    jm = jax.jit(jnp.matmul)
    j1, j2 = jax.device_put(m1), jax.device_put(m2)
    rows.append(("matmul_f32_1024", "ms",
                 median_s(lambda: m1 @ m2, args.runs) * 1e3,
                 median_s(lambda: jm(j1, j2).block_until_ready(), args.runs) * 1e3))

    load = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"load": load, "rows": [
            {"bench": r[0], "unit": r[1], "numpy": r[2], "jax": r[3]} for r in rows]}))
        return
    print(f"load average {load:.2f}; numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, "
          f"jax {jax.__version__}; median of {args.runs} runs")
    print(f"{'bench':<28} {'NumPy':>10} {'JAX':>10}")
    for name, unit, npv, jv in rows:
        print(f"{name:<28} {npv:>8.2f}{unit:>2} {jv:>8.2f}{unit:>2}")


if __name__ == "__main__":
    main()
