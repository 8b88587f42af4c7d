"""The train_mlp trajectory of issue 11, run by real JAX 0.10: the program below, line for line
(examples/train_mlp.rs is its Rust twin), at the defaults in float32, bfloat16 and float16 and
with x64 in float64. Writes tests/fixtures/transformations/train_mlp.json: the printed losses
(repr(float(loss))) per step.

    tools/.venv-jax/bin/python tools/gen_train_mlp_fixtures.py
"""

import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..")

# The program in three parts: its command line, the model (which tools/bench_transform_peers.py
# times too) and the training loop.
PRELUDE = r'''
import sys
from functools import partial
import jax, jax.numpy as jnp
seed, steps, n, d, hidden, lr, keep, T, x64 = sys.argv[1:]
jax.config.update("jax_enable_x64", x64 == "1")
seed, steps, n, d, hidden = int(seed), int(steps), int(n), int(d), int(hidden)
lr, keep = float(lr), float(keep)

'''

MODEL = r'''@jax.custom_jvp
def softplus(x):
    return jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x)))
@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t * jax.nn.sigmoid(x)
@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_gradient(x, bound):
    return x
def _clip_fwd(x, bound):
    return x, None
def _clip_bwd(bound, _, g):
    return (jnp.clip(g, -bound, bound),)
clip_gradient.defvjp(_clip_fwd, _clip_bwd)
def init_params(key, sizes, dtype):
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n), dtype) * (1.0 / m) ** 0.5, jnp.zeros(n, dtype))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]
def make_data(key, n, d, dtype):
    kx, ky = jax.random.split(key)
    x = jax.random.uniform(kx, (n, d), dtype, minval=-2.0, maxval=2.0)
    y = jnp.sin(x.sum(axis=1)) + 0.1 * jax.random.normal(ky, (n,), dtype)
    return x, y
def example_loss(params, x, y, key, keep):
    h = x
    for i, (w, b) in enumerate(params[:-1]):
        h = softplus(h @ w + b)
        mask = jax.random.bernoulli(jax.random.fold_in(key, i), keep, h.shape)
        h = clip_gradient(jnp.where(mask, h / keep, 0), 1.0)
    w, b = params[-1]
    return ((h @ w + b)[0] - y) ** 2
def loss(params, x, y, key, keep):
    keys = jax.random.split(key, x.shape[0])
    per = jax.vmap(example_loss, in_axes=(None, 0, 0, 0, None))(params, x, y, keys, keep)
    return jnp.mean(per.astype(jnp.float32))
'''

MAIN = r'''@jax.jit
def step(params, x, y, key, lr, keep):
    l, g = jax.value_and_grad(loss)(params, x, y, key, keep)
    return jax.tree.map(lambda p, gp: p - lr * gp, params, g), l
dtype = jnp.dtype(T)
kd, kp, kt = jax.random.split(jax.random.key(seed), 3)
x, y = make_data(kd, n, d, dtype)
params = init_params(kp, [d, hidden, hidden, 1], dtype)
for i in range(steps):
    params, l = step(params, x, y, jax.random.fold_in(kt, i), lr, keep)
    print(repr(float(l)))
'''

PROGRAM = PRELUDE + MODEL + MAIN

RUNS = [
    ("float32", False),
    ("bfloat16", False),
    ("float16", False),
    ("float64", True),
]


def main():
    import jax

    cases = []
    for dtype, x64 in RUNS:
        args = ["0", "100", "256", "2", "32", "0.1", "0.9", dtype, "1" if x64 else "0"]
        out = subprocess.run(
            [sys.executable, "-c", PROGRAM, *args], capture_output=True, text=True, check=True
        ).stdout.split()
        cases.append({"dtype": dtype, "x64": x64, "args": args[:7], "losses": out})
        print(dtype, x64, out[:3], out[-1])
    path = os.path.join(ROOT, "tests", "fixtures", "transformations", "train_mlp.json")
    with open(path, "w") as f:
        json.dump(
            {"generator": "tools/gen_train_mlp_fixtures.py", "versions": {"jax": jax.__version__},
             "program": PROGRAM, "cases": cases},
            f,
            indent=1,
        )
        f.write("\n")


if __name__ == "__main__":
    main()
