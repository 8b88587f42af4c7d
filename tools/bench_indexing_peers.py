"""Times JAX (jitted, CPU) and NumPy on the programs of `cargo bench -p dtype-lattice-array
--bench indexing` (issue 28's targets), on this machine, in the same run:

    gather_rows_f32_1m        table[idx]: 1,048,576 random rows of 64 float32 from 65,536×64
    scatter_add_rows_f32_1m   zeros((65536, 64)).at[idx].add(updates)  (its transpose)
    sort_f32_2e20             jnp.sort of 2^20 float32      (NumPy: np.sort)
    argsort_f32_2e20          jnp.argsort of 2^20 float32   (NumPy: np.argsort, stable)
    conv2d_nhwc_3x3           3×3 SAME conv, (32, 32, 32, 64) NHWC by (3, 3, 64, 64) HWIO
    conv2d_nhwc_3x3_grad_*    the gradient of its sum in the input / in the kernel
    max_pool_2x2_grad         grad of sum(max_pool 2×2 stride 2) of (32, 32, 32, 64) float32

Inputs as benches/indexing.rs: h(k) = (k * 2654435761 mod 2^32) / 2^32 - 0.5 as float32 over
the flat index, rows (i * 2246822519 mod 2^32) >> 16. JAX compiled before timing,
`block_until_ready` after each call. Prints medians of --runs runs (ms), the load average,
and each program's check (the sum of its output, as the bench prints it).

    tools/.venv-jax/bin/python tools/bench_indexing_peers.py [--runs 10] [--json]
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
from jax import lax  # noqa: E402


def floats(shape):
    k = np.arange(int(np.prod(shape)), dtype=np.uint64)
    h = (k * np.uint64(2654435761)) % np.uint64(1 << 32)
    return (h.astype(np.float32) / np.float32(4294967296.0) - np.float32(0.5)).reshape(shape)


def rows(n):
    i = np.arange(n, dtype=np.uint64)
    return (((i * np.uint64(2246822519)) % np.uint64(1 << 32)) >> np.uint64(16)).astype(np.int32)


def median_ms(fn, runs):
    out = fn()
    jax.block_until_ready(out)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3, out


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    table, idx = jnp.asarray(floats((65536, 64))), jnp.asarray(rows(1 << 20))
    upd = jnp.asarray(floats((1 << 20, 64)))
    x_np = floats((1 << 20,))
    x = jnp.asarray(x_np)
    act = jnp.asarray(floats((32, 32, 32, 64)))
    kernel = jnp.asarray(floats((3, 3, 64, 64)))
    progs = {
        "gather_rows_f32_1m": (jax.jit(lambda t, i: t[i]), (table, idx)),
        "scatter_add_rows_f32_1m": (
            jax.jit(lambda u, i: jnp.zeros((65536, 64), jnp.float32).at[i].add(u)), (upd, idx)),
        "sort_f32_2e20": (jax.jit(jnp.sort), (x,)),
        "argsort_f32_2e20": (jax.jit(jnp.argsort), (x,)),
        "conv2d_nhwc_3x3": (jax.jit(conv), (act, kernel)),
        "conv2d_nhwc_3x3_grad_input": (
            jax.jit(jax.grad(lambda x, w: jnp.sum(conv(x, w)), argnums=0)), (act, kernel)),
        "conv2d_nhwc_3x3_grad_kernel": (
            jax.jit(jax.grad(lambda x, w: jnp.sum(conv(x, w)), argnums=1)), (act, kernel)),
        "max_pool_2x2_grad": (jax.jit(jax.grad(lambda a: jnp.sum(max_pool(a)))), (act,)),
    }
    ms, checks = {}, {}
    for name, (f, args) in progs.items():
        ms[name], out = median_ms(lambda: f(*args), a.runs)
        checks[name] = float(np.asarray(out, np.float64).sum())
    numpy_ms = {}
    for name, f in [("sort_f32_2e20", lambda: np.sort(x_np)),
                    ("argsort_f32_2e20", lambda: np.argsort(x_np, kind="stable"))]:
        times = []
        f()
        for _ in range(a.runs):
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
        numpy_ms[name] = statistics.median(times) * 1e3
    if a.json:
        print(json.dumps({"jax": jax.__version__, "numpy": np.__version__, "ms": ms,
                          "numpy_ms": numpy_ms, "checks": checks}))
        return
    print(f"jax {jax.__version__}, numpy {np.__version__}, "
          f"load average {os.getloadavg()[0]:.2f}")
    for k, v in ms.items():
        extra = f"   numpy {numpy_ms[k]:8.3f} ms" if k in numpy_ms else ""
        print(f"{k:26s} jax {v:9.3f} ms{extra}   check {checks[k]!r}")


if __name__ == "__main__":
    main()
