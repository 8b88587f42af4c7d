"""Sorting and cumulative-reduction conformance: JAX 0.10.2 programs that sort (`lax.sort` of
one and several operands with `num_keys`, stable and not, `jnp.sort`, `jnp.argsort`
ascending and descending, along every axis, NaNs of both signs, signed zeros, subnormals and
infinities, every dtype family), take the top k (`lax.top_k`, ties, NaNs, `k=0`), and
accumulate (`cumsum`, `cumprod`, `cummax`, `cummin`, `cumlogsumexp`, forward and reversed,
along every axis), recorded as the jaxpr JAX prints, the inputs and what `jax.jit` computes
(and `jax.grad` in the first input for `grad_…` programs). `tests/it/gather.rs` reads the
text and evaluates it eagerly, under jit, differentiated and batched.

    tools/.venv-jax/bin/python tools/gen_sort_fixtures.py > tests/fixtures/indexing/sort.json
"""

import json
import sys
import os

sys.path.insert(0, os.path.dirname(__file__))

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from gen_jaxpr_fixtures import enc, leaves, attempt
from gen_gather_fixtures import record

CASES = []


def case(name, *args, x64=False):
    def deco(f):
        CASES.append((name, f, args, x64))
        return f
    return deco


rng = np.random.default_rng(2828)
nan = np.float32(np.nan)
special = np.array([1.0, -0.0, 0.0, -nan, nan, -np.inf, np.inf, 1e-40, -1e-40, 0.0, -0.0,
                    2.0, -3.5, nan, 1.0], np.float32)
grid = rng.standard_normal((5, 7)).astype(np.float32)
grid[1, 3] = np.nan
grid[2, 2] = -0.0
grid[3, 0] = grid[3, 4]
big = rng.integers(-20, 20, 1000).astype(np.float32)
big[::97] = -0.0
big[5::101] = np.nan
wide = rng.standard_normal((3, 300)).astype(np.float32)

for name, x in [("special", special), ("big", big)]:
    @case(f"sort_{name}", x)
    def _(x):
        return jnp.sort(x)

    @case(f"argsort_{name}", x)
    def _(x):
        return jnp.argsort(x)

    @case(f"argsort_descending_{name}", x)
    def _(x):
        return jnp.argsort(x, descending=True)

    @case(f"sort_descending_{name}", x)
    def _(x):
        return jnp.sort(x, descending=True)


@case("sort_payload_pairs", special, np.arange(15, dtype=np.int32))
def _(x, v):
    return lax.sort((x, v), num_keys=1)


@case("sort_unstable_pairs", big, np.arange(1000, dtype=np.int32))
def _(x, v):
    return lax.sort((x, v), num_keys=1, is_stable=False)


zeros = np.where(rng.random(300) < 0.5, np.float32(0.0), np.float32(-0.0))
zeros[::7] = 1.0
zeros[::11] = -nan


@case("sort_unstable_signed_zeros", zeros)
def _(x):
    return jnp.sort(x, stable=False)


@case("argsort_unstable_grid_axis0", np.round(wide.T * 2))
def _(x):
    return jnp.argsort(x, axis=0, stable=False)


@case("sort_two_keys", rng.integers(0, 3, 40).astype(np.int8),
      rng.integers(0, 4, 40).astype(np.float32), np.arange(40, dtype=np.uint16))
def _(a, b, c):
    return lax.sort((a, b, c), num_keys=2)


for axis in (0, 1):
    @case(f"sort_grid_axis{axis}", grid)
    def _(x, axis=axis):
        return jnp.sort(x, axis=axis)

    @case(f"argsort_grid_axis{axis}", grid)
    def _(x, axis=axis):
        return jnp.argsort(x, axis=axis)

    @case(f"sort_wide_axis{axis}", wide)
    def _(x, axis=axis):
        return jnp.sort(x, axis=axis)


for dt in ["bfloat16", "float16", "int8", "uint8", "int32", "uint32", "bool"]:
    x = (special if dt in ("bfloat16", "float16") else
         rng.integers(-100 if dt.startswith("int") else 0, 100, 300)).astype(dt)

    @case(f"sort_{dt}", x)
    def _(x):
        return jnp.sort(x)

    @case(f"argsort_{dt}", x)
    def _(x):
        return jnp.argsort(x)


x_f64 = np.array([1.0, -0.0, 0.0, np.nan, -np.nan, 5e-324, -5e-324, -np.inf, 3.0, 0.0, 2.5,
                  -1.0], np.float64)


@case("sort_float64", x_f64, x64=True)
def _(x):
    return jnp.sort(x)


@case("argsort_float64", x_f64, x64=True)
def _(x):
    return jnp.argsort(x)


@case("sort_int64", rng.integers(-2**62, 2**62, 500), x64=True)
def _(x):
    return jnp.sort(x)


@case("sort_complex64", np.array([1 + 2j, 1 - 2j, -0.0 + 1j, 0.0 - 1j, np.nan + 0j, 1 + np.nan * 1j,
                                  -1 + 0j, 1 + 2j, 0j], np.complex64))
def _(x):
    return jnp.sort(x)


@case("argsort_complex64", np.array([1 + 2j, 1 - 2j, -0.0 + 1j, 0.0 - 1j, np.nan + 0j,
                                     1 + np.nan * 1j, -1 + 0j, 1 + 2j, 0j], np.complex64))
def _(x):
    return jnp.argsort(x)


@case("sort_empty", np.zeros((3, 0), np.float32))
def _(x):
    return jnp.sort(x)


for k in (0, 1, 5, 15):
    @case(f"top_k_special_{k}", special)
    def _(x, k=k):
        return lax.top_k(x, k)

for dt in ["bfloat16", "int8", "uint8", "int32"]:
    x = (special if dt == "bfloat16" else
         rng.integers(-100 if dt.startswith("int") else 0, 100, 50)).astype(dt)

    @case(f"top_k_{dt}", x)
    def _(x):
        return lax.top_k(x, 7)


@case("top_k_axis0", grid)
def _(x):
    return lax.top_k(x, 3, axis=0)


@case("top_k_wide", wide)
def _(x):
    return lax.top_k(x, 10)


@case("top_k_float64", x_f64, x64=True)
def _(x):
    return lax.top_k(x, 6)


for op in ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]:
    fn = getattr(lax, op)
    for axis in (0, 1):
        for rev in (False, True):
            @case(f"{op}_axis{axis}{'_reverse' if rev else ''}", grid * 0.5)
            def _(x, fn=fn, axis=axis, rev=rev):
                return fn(x, axis=axis, reverse=rev)
    long = rng.standard_normal(100).astype(np.float32) * 0.1 + 1

    @case(f"{op}_long", long)
    def _(x, fn=fn):
        return fn(x)

    @case(f"grad_{op}", long[:37], rng.standard_normal(37).astype(np.float32))
    def _(x, w, fn=fn):
        return jnp.sum(fn(x) * w)

    @case(f"grad_{op}_reverse_2d", grid * 0.5, rng.standard_normal((5, 7)).astype(np.float32))
    def _(x, w, fn=fn):
        return jnp.sum(fn(x, axis=1, reverse=True) * w)


@case("cumlogsumexp_special", np.array([-np.inf, -np.inf, 0.0, np.inf, 1.0, np.nan, 2.0], np.float32))
def _(x):
    return lax.cumlogsumexp(x)


@case("cumlogsumexp_float64", rng.standard_normal(40), x64=True)
def _(x):
    return lax.cumlogsumexp(x)


@case("cumsum_int_axis", rng.integers(-9, 9, (4, 6)).astype(np.int16))
def _(x):
    return jnp.cumsum(x, axis=1)


@case("grad_sort", special[np.isfinite(special)], rng.standard_normal(10).astype(np.float32))
def _(x, w):
    return jnp.sum(jnp.sort(x) * w)


@case("grad_sort_grid", grid, rng.standard_normal((5, 7)).astype(np.float32))
def _(x, w):
    return jnp.sum(jnp.sort(x, axis=0) * w)


@case("grad_top_k", big, rng.standard_normal(5).astype(np.float32))
def _(x, w):
    return jnp.sum(lax.top_k(x, 5)[0] * w)


@case("grad_take_along_argsort", grid)
def _(x):
    i = jnp.argsort(x, axis=1)
    return jnp.sum(jnp.take_along_axis(x, i, axis=1)[:, :3] ** 2)


@case("grad_sort_two_operands", special[np.isfinite(special)],
      rng.standard_normal(10).astype(np.float32))
def _(x, y):
    a, b = lax.sort((x, y), num_keys=1)
    return jnp.sum(a * b)


def main():
    doc = {"generator": "tools/gen_sort_fixtures.py",
           "versions": {"jax": jax.__version__, "numpy": np.__version__},
           "cases": [record(*c) for c in CASES]}
    json.dump(doc, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
