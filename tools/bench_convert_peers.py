"""Times the peers of `cargo bench --bench arrays`'s astype_f32_f8e4m3fn_2e24,
astype_f8e4m3fn_f32_2e24 and astype_f32_bf16_2e24: 2^24 elements float32 -> float8_e4m3fn,
float8_e4m3fn -> float32 and float32 -> bfloat16 with NumPy + ml_dtypes (`x.astype(t)`) and with
JAX on CPU (`jax.jit(lambda x: x.astype(t))`, compiled and the input on the device before timing,
`block_until_ready`). Prints the median of --runs runs (ms) of each, and the load average.

    tools/.venv-jax/bin/python tools/bench_convert_peers.py [--n 16777216] [--runs 9]
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402


def median_ms(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(args.n, dtype=np.float32) * 100).astype(np.float32)
    f8 = x.astype(ml_dtypes.float8_e4m3fn)
    print(f"n={args.n}, median of {args.runs}; load average {os.getloadavg()}")
    print(f"numpy {np.__version__} + ml_dtypes {ml_dtypes.__version__}, jax {jax.__version__} (jit, cpu)")
    for name, src, dst in [("f32 -> float8_e4m3fn", x, jnp.float8_e4m3fn),
                           ("float8_e4m3fn -> f32", f8, jnp.float32),
                           ("f32 -> bfloat16", x, jnp.bfloat16)]:
        ml = median_ms(lambda: src.astype(dst), args.runs)
        f = jax.jit(lambda v: v.astype(dst))
        xd = jax.device_put(src)
        jx = median_ms(lambda: f(xd).block_until_ready(), args.runs)
        print(f"{name}: numpy {ml:.2f} ms, jax {jx:.2f} ms")


if __name__ == "__main__":
    main()
