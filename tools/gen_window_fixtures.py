"""Windowed-reduction conformance: JAX 0.10.2 programs that pool (`lax.reduce_window` with
`max`, `min` and `add`: strides, SAME/VALID and explicit (negative too) padding, base and
window dilation, ties, NaNs, signed zeros and infinities, every dtype family), their JVPs
(`select_and_gather_add`) and gradients (`select_and_scatter_add`, the padded and strided
cotangent of a sum), recorded as the jaxpr JAX prints, the inputs and what `jax.jit` computes
(and `jax.grad` in the first input for `grad_…` programs). `tests/it/gather.rs` reads the
text and evaluates it eagerly, under jit, differentiated and batched.

    tools/.venv-jax/bin/python tools/gen_window_fixtures.py > tests/fixtures/indexing/window.json
"""

import sys
import os

sys.path.insert(0, os.path.dirname(__file__))

import json
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from gen_gather_fixtures import record

CASES = []


def case(name, *args, x64=False):
    def deco(f):
        CASES.append((name, f, args, x64))
        return f
    return deco


rng = np.random.default_rng(2829)
act = np.round(rng.standard_normal((2, 6, 7, 3)) * 4).astype(np.float32) / 4  # many ties
act[0, 1, 1, 0] = np.nan
act[1, 2, 3, 1] = -0.0
act[1, 4, 4, 2] = -np.inf
act[0, 5, 6, :] = -np.inf
sig = rng.standard_normal((9, 11)).astype(np.float32)


def pool(x, op, init, dims, strides, padding, **kw):
    return lax.reduce_window(x, init, op, dims, strides, padding, **kw)


def maxpool(x, padding="VALID", dims=(1, 2, 2, 1), strides=(1, 2, 2, 1), **kw):
    return pool(x, lax.max, -jnp.inf, dims, strides, padding, **kw)


for pad in ["VALID", "SAME"]:
    @case(f"max_pool_{pad}", act)
    def _(x, pad=pad):
        return maxpool(x, pad)

    @case(f"max_pool_3x3_s2_{pad}", act)
    def _(x, pad=pad):
        return maxpool(x, pad, (1, 3, 3, 1), (1, 2, 2, 1))

    @case(f"min_pool_{pad}", act)
    def _(x, pad=pad):
        return pool(x, lax.min, jnp.inf, (1, 2, 3, 1), (1, 1, 2, 1), pad)

    @case(f"avg_pool_{pad}", act)
    def _(x, pad=pad):
        return pool(x, lax.add, 0.0, (1, 3, 3, 1), (1, 1, 1, 1), pad) / 9

    @case(f"grad_max_pool_{pad}", act[:, :, :, :2].copy())
    def _(x, pad=pad):
        return jnp.sum(maxpool(x, pad, (1, 3, 3, 1), (1, 2, 2, 1)) ** 2)

    @case(f"grad_avg_pool_{pad}", act[:, :, :, :2].copy())
    def _(x, pad=pad):
        return jnp.sum(pool(x, lax.add, 0.0, (1, 3, 2, 1), (1, 2, 1, 1), pad) ** 2)


explicit = ((0, 0), (2, -1), (1, 1), (0, 0))


@case("sum_explicit_padding", act)
def _(x):
    return pool(x, lax.add, 0.0, (1, 2, 2, 1), (1, 1, 2, 1), explicit)


@case("max_dilations", sig)
def _(x):
    return pool(x, lax.max, -jnp.inf, (3, 2), (1, 2), ((1, 2), (0, 1)),
                base_dilation=(2, 1), window_dilation=(1, 3))


@case("sum_dilations", sig)
def _(x):
    return pool(x, lax.add, 0.0, (2, 3), (2, 1), ((0, 0), (2, 2)),
                base_dilation=(1, 2), window_dilation=(2, 1))


@case("min_window_of_one", act)
def _(x):
    return pool(x, lax.min, jnp.inf, (1, 1, 1, 1), (1, 2, 1, 1), ((0, 0), (1, 0), (0, 0), (0, 0)))


@case("sum_window_of_one", act)
def _(x):
    return pool(x, lax.add, 0.0, (1, 1, 1, 1), (1, 1, 1, 1), "VALID")


for dt in ["int32", "uint8", "int8", "bfloat16", "float16"]:
    x = (rng.integers(-50 if dt.startswith("int") else 0, 50, (4, 9)).astype(dt)
         if "int" in dt else sig.astype(dt))

    @case(f"max_pool_{dt}", x)
    def _(x):
        return pool(x, lax.max, np.array(-np.inf if jnp.issubdtype(x.dtype, jnp.floating)
                                         else jnp.iinfo(x.dtype).min, x.dtype),
                    (2, 3), (1, 2), "SAME")

    @case(f"sum_pool_{dt}", x)
    def _(x):
        return pool(x, lax.add, np.array(0, x.dtype), (3, 3), (1, 1), "SAME")


@case("product_pool", sig)
def _(x):
    return pool(x, lax.mul, 1.0, (2, 2), (1, 1), "SAME")


@case("generic_pool_init_2", rng.integers(-9, 9, (5, 6)).astype(np.int32))
def _(x):
    return pool(x, lax.max, jnp.int32(2), (2, 3), (2, 1), "VALID")


@case("max_pool_float64", sig.astype(np.float64), x64=True)
def _(x):
    return pool(x, lax.max, -jnp.inf, (2, 2), (1, 1), "SAME")


@case("grad_max_pool_float64", sig.astype(np.float64), x64=True)
def _(x):
    return jnp.sum(pool(x, lax.max, -jnp.inf, (2, 3), (2, 1), "SAME") ** 2)


@case("grad_max_pool_ties", np.round(sig * 2) / 2)
def _(x):
    return jnp.sum(pool(x, lax.max, -jnp.inf, (3, 3), (1, 1), "SAME") * 1.5)


@case("grad_min_pool", sig)
def _(x):
    return jnp.sum(jnp.sin(pool(x, lax.min, jnp.inf, (2, 2), (1, 3), ((1, 0), (0, 2)))))


@case("grad_sum_dilations", sig)
def _(x):
    return jnp.sum(pool(x, lax.add, 0.0, (2, 3), (2, 1), ((1, 0), (2, 2)),
                        base_dilation=(1, 2), window_dilation=(2, 1)) ** 2)


# Untied operands: in padded windows XLA's loop order (which picks among ties) is not
# row-major (see lax/windowed.rs).
untied = rng.standard_normal(act.shape).astype(np.float32)


@case("jvp_max_pool", untied, rng.standard_normal(act.shape).astype(np.float32))
def _(x, t):
    return jax.jvp(lambda x: maxpool(x, "SAME", (1, 3, 2, 1), (1, 2, 1, 1)), (x,), (t,))[1]


@case("jvp_max_dilations", sig, rng.standard_normal(sig.shape).astype(np.float32))
def _(x, t):
    return jax.jvp(lambda x: pool(x, lax.max, -jnp.inf, (3, 2), (1, 2), ((1, 2), (0, 1)),
                                  base_dilation=(2, 1), window_dilation=(1, 3)), (x,), (t,))[1]


@case("jvp_max_pool_valid_ties", act, rng.standard_normal(act.shape).astype(np.float32))
def _(x, t):
    return jax.jvp(lambda x: maxpool(x, "VALID", (1, 3, 2, 1), (1, 2, 1, 1)), (x,), (t,))[1]


@case("grad_jvp_max_pool", rng.standard_normal(act.shape).astype(np.float32), untied)
def _(t, x):
    y = jax.jvp(lambda x: maxpool(x, "SAME", (1, 3, 2, 1), (1, 2, 1, 1)), (x,), (t,))[1]
    return jnp.sum(y * y)


@case("grad_jvp_base_dilation", rng.standard_normal(sig.shape).astype(np.float32), sig)
def _(t, x):
    y = jax.jvp(lambda x: pool(x, lax.max, -jnp.inf, (3, 2), (1, 2), ((1, 2), (0, 1)),
                               base_dilation=(2, 1)), (x,), (t,))[1]
    return jnp.sum(y * y)


def main():
    doc = {"generator": "tools/gen_window_fixtures.py",
           "versions": {"jax": jax.__version__, "numpy": np.__version__},
           "cases": [record(*c) for c in CASES]}
    json.dump(doc, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
