"""Times JAX on the programs of `cargo bench -p dtype-lattice-array --bench transform`
(issue 11's targets), on this machine, in the same run:

    train_mlp_step_default      one call of train_mlp's jitted `step` at the defaults
    train_mlp_step_n4096_h256   the same at --n 4096 --hidden 256
    trace_compile_step          jax.jit(step).lower(...).compile() of a fresh `step`
    loss_default                the jitted loss at the defaults
    grad_default                the jitted jax.grad of the loss at the defaults
    jit_sin_mul_add_2e24        jitted sin(x) * 2 + 1 over 2^24 float32

The model is tools/gen_train_mlp_fixtures.py's program (examples/train_mlp.rs is its Rust
twin). JAX runs on CPU, everything compiled before timing, `block_until_ready` after each
call. Prints the median of --runs runs (ms) as a table, and the load average.

    tools/.venv-jax/bin/python tools/bench_transform_peers.py [--runs 9] [--json]
"""

import argparse
import json
import os
import statistics
import sys
import time
from functools import partial

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


sys.path.insert(0, os.path.dirname(__file__))
from gen_train_mlp_fixtures import MODEL  # noqa: E402

# The fixture program's model (softplus, clip_gradient, init_params, make_data, example_loss,
# loss), defined here from the same text.
exec(compile(MODEL, "gen_train_mlp_fixtures.MODEL", "exec"))


def make_step():
    """A fresh `step` function (so that jax.jit caches nothing between compilations)."""
    def step(params, x, y, key, lr, keep):
        l, g = jax.value_and_grad(loss)(params, x, y, key, keep)
        return jax.tree.map(lambda p, gp: p - lr * gp, params, g), l
    return step


def setup(n=256, d=2, hidden=32, seed=0, dtype=jnp.float32):
    kd, kp, kt = jax.random.split(jax.random.key(seed), 3)
    x, y = make_data(kd, n, d, dtype)
    params = init_params(kp, [d, hidden, hidden, 1], dtype)
    return params, x, y, jax.random.fold_in(kt, 0)


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
    lr, keep = 0.1, 0.9
    rows = []
    for name, kw, inner in [("train_mlp_step_default", {}, 50),
                            ("train_mlp_step_n4096_h256", {"n": 4096, "hidden": 256}, 3)]:
        params, x, y, key = setup(**kw)
        step = jax.jit(make_step())
        call = lambda: jax.block_until_ready(step(params, x, y, key, lr, keep))  # noqa: E731
        rows.append((name, median_s(call, args.runs, inner) * 1e3))
    params, x, y, key = setup()
    compile_step = lambda: jax.jit(make_step()).lower(params, x, y, key, lr, keep).compile()  # noqa: E731
    rows.append(("trace_compile_step", median_s(compile_step, args.runs) * 1e3))
    jl = jax.jit(partial(loss, keep=keep))
    jg = jax.jit(jax.grad(partial(loss, keep=keep)))
    rows.append(("loss_default",
                 median_s(lambda: jax.block_until_ready(jl(params, x, y, key)), args.runs, 50) * 1e3))
    rows.append(("grad_default",
                 median_s(lambda: jax.block_until_ready(jg(params, x, y, key)), args.runs, 50) * 1e3))
    xs = jax.device_put((np.sin(np.arange(1 << 24, dtype=np.float32) * 1e-3) * 10).astype(np.float32))
    f = jax.jit(lambda x: jnp.sin(x) * 2 + 1)
    rows.append(("jit_sin_mul_add_2e24",
                 median_s(lambda: jax.block_until_ready(f(xs)), args.runs) * 1e3))
    load = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"jax": jax.__version__, "load": load,
                          "rows": [{"name": n, "ms": v} for n, v in rows]}))
        return
    print(f"JAX {jax.__version__} (CPU), median of {args.runs} runs, load average {load:.2f}")
    for n, v in rows:
        print(f"{n:28} {v:10.3f} ms")


if __name__ == "__main__":
    main()
