"""Gather and scatter conformance: JAX 0.10.2 programs that gather (NumPy indexing, `take`,
`take_along_axis`, `lax.gather` with every mode, windows, operand batching dimensions,
out-of-range and negative indices, wide and unsigned indices), recorded as the jaxpr JAX
prints, the inputs and what `jax.jit` computes (and `jax.grad` in the first input, for
programs of a float scalar); programs that scatter (`.at[]` with `set`, `add`, `multiply`,
`min`, `max`, duplicate and out-of-range indices, windows partly outside the operand, every
mode, batching dimensions). The test reads the text and evaluates it eagerly, under jit,
and differentiated (`tests/it/gather.rs`).

    tools/.venv-jax/bin/python tools/gen_gather_fixtures.py > tests/fixtures/indexing/gather.json
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

GDN = lax.GatherDimensionNumbers
CASES = []


def case(name, *args, x64=False):
    def deco(f):
        CASES.append((name, f, args, x64))
        return f
    return deco


rng = np.random.default_rng(28)
x64 = rng.standard_normal((6, 4)).astype(np.float32)
x64[1, 2] = np.nan
x64[2, 0] = -0.0
idx = np.array([0, 5, -1, 7, -9, 2], np.int32)


@case("rows", x64, idx)
def _(x, i):
    return x[i]


@case("columns", x64, np.array([[3, -2], [0, 9]], np.int32))
def _(x, i):
    return x[:, i]


@case("two_arrays", x64, np.array([1, -1, 6], np.int32), np.array([[0], [3], [-5]], np.int16))
def _(x, i, j):
    return x[i, j]


for mode in ["clip", "fill", "wrap"]:
    @case(f"take_{mode}", x64, np.array([[0, 4], [-1, 2], [3, 100]], np.int32))
    def _(x, i, mode=mode):
        return jnp.take(x, i, axis=1, mode=mode)


@case("take_fill_value", rng.integers(-50, 50, (5, 3)).astype(np.int8),
      np.array([4, 5, -1, 0], np.int32))
def _(x, i):
    return jnp.take(x, i, axis=0, mode="fill", fill_value=-7)


@case("take_fill_default_int", rng.integers(-50, 50, (5, 3)).astype(np.int8),
      np.array([4, 5, 255, 0], np.uint8))
def _(x, i):
    return jnp.take(x, i, axis=0, mode="fill")


@case("take_fill_default_uint", rng.integers(0, 200, (5,)).astype(np.uint16),
      np.array([4, 5, 200, 0], np.uint8))
def _(x, i):
    return jnp.take(x, i, mode="fill")


@case("take_fill_default_bool", np.array([True, False, False, True]),
      np.array([3, 4, -1], np.int32))
def _(x, i):
    return jnp.take(x, i, mode="fill")


@case("take_along_axis", x64, np.array([[0, 3], [1, 1], [2, -1], [3, 0], [9, 1], [0, 0]], np.int32))
def _(x, i):
    return jnp.take_along_axis(x, i, axis=1)


windows = rng.standard_normal((6, 7)).astype(np.float32)
starts = np.array([[0, 0], [5, 6], [-2, 3], [2, 100]], np.int32)
for mode in [lax.GatherScatterMode.CLIP, lax.GatherScatterMode.FILL_OR_DROP,
             lax.GatherScatterMode.PROMISE_IN_BOUNDS]:
    @case(f"windows_{mode.name.lower()}", windows, starts)
    def _(x, s, mode=mode):
        return lax.gather(x, s, GDN(offset_dims=(1, 2), collapsed_slice_dims=(),
                                    start_index_map=(0, 1)), slice_sizes=(2, 3), mode=mode)

    @case(f"windows_fill_value_{mode.name.lower()}", windows, starts)
    def _(x, s, mode=mode):
        return lax.gather(x, s, GDN(offset_dims=(0,), collapsed_slice_dims=(1,),
                                    start_index_map=(1, 0)), slice_sizes=(3, 1), mode=mode,
                          fill_value=2.5)


batched = rng.standard_normal((3, 5, 4)).astype(np.float32)
bidx = np.array([[[1], [4]], [[0], [7]], [[-1], [2]]], np.int32)
for mode in ["clip", "fill"]:
    @case(f"operand_batching_{mode}", batched, bidx)
    def _(x, i, mode=mode):
        return lax.gather(x, i, GDN(offset_dims=(2,), collapsed_slice_dims=(1,),
                                    start_index_map=(1,), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,)),
                          slice_sizes=(1, 1, 4), mode=mode)


@case("batching_in_the_middle", np.transpose(batched, (1, 0, 2)).copy(),
      np.transpose(bidx, (1, 0, 2)).copy())
def _(x, i):
    return lax.gather(x, i, GDN(offset_dims=(2,), collapsed_slice_dims=(0,),
                                start_index_map=(0,), operand_batching_dims=(1,),
                                start_indices_batching_dims=(1,)),
                      slice_sizes=(1, 1, 4), mode="clip")


@case("wide_indices_fill", np.arange(10, dtype=np.float64),
      np.array([[3], [2**32 + 1], [-(2**32) + 2], [9]], np.int64), x64=True)
def _(x, i):
    return lax.gather(x, i, GDN(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)),
                      slice_sizes=(1,), mode="fill")


@case("unsigned_clip", np.arange(10, dtype=np.int32),
      np.array([[3], [250], [9]], np.uint8))
def _(x, i):
    return lax.gather(x, i, GDN(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)),
                      slice_sizes=(1,), mode="clip")


@case("empty_indices", x64, np.zeros((0,), np.int32))
def _(x, i):
    return x[i]


@case("scalar_index_vector", x64, np.array([2, 1], np.int32))
def _(x, i):
    return lax.gather(x, i, GDN(offset_dims=(0, 1), collapsed_slice_dims=(),
                                start_index_map=(0, 1)), slice_sizes=(3, 2), mode="clip")


upd = rng.standard_normal((5, 4)).astype(np.float32)
dup = np.array([1, 3, 1, 9, -1], np.int32)
for op in ["set", "add", "multiply", "min", "max"]:
    for mode in [None, "clip", "drop", "promise_in_bounds"]:
        @case(f"at_{op}_{mode}", x64, dup, upd)
        def _(x, i, u, op=op, mode=mode):
            return getattr(x.at[i], op)(u, mode=mode)


@case("at_add_int", rng.integers(-9, 9, (6, 4)).astype(np.int32), dup,
      rng.integers(-9, 9, (5, 4)).astype(np.int32))
def _(x, i, u):
    return x.at[i].add(u)


@case("at_max_uint8", rng.integers(0, 200, (6,)).astype(np.uint8), dup,
      rng.integers(0, 255, (5,)).astype(np.uint8))
def _(x, i, u):
    return x.at[i].max(u)


@case("at_set_bool", np.zeros(6, bool), dup, np.array([True, True, False, True, True]))
def _(x, i, u):
    return x.at[i].set(u)


for mode in [lax.GatherScatterMode.CLIP, lax.GatherScatterMode.FILL_OR_DROP]:
    @case(f"scatter_windows_{mode.name.lower()}", windows, starts,
          rng.standard_normal((4, 2, 3)).astype(np.float32))
    def _(x, s, u, mode=mode):
        return lax.scatter_add(x, s, u, lax.ScatterDimensionNumbers(
            update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0, 1)),
            mode=mode)


@case("scatter_operand_batching", batched, bidx, rng.standard_normal((3, 2, 4)).astype(np.float32))
def _(x, i, u):
    return lax.scatter_add(x, i, u, lax.ScatterDimensionNumbers(
        update_window_dims=(2,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
        operand_batching_dims=(0,), scatter_indices_batching_dims=(0,)), mode="clip")


# Gradients: gather's transpose is a scatter-add, scatter-add's a gather.
@case("grad_rows", x64, idx)
def _(x, i):
    return jnp.sum(jnp.sin(x[i]) * jnp.arange(4.0))


@case("grad_take_fill", x64, np.array([[0, 4], [-1, 2], [3, 100]], np.int32))
def _(x, i):
    return jnp.sum(jnp.take(x, i, axis=1, mode="fill", fill_value=0.0) ** 2)


@case("grad_at_add", upd, x64, dup)
def _(u, x, i):
    return jnp.sum(jnp.cos(x.at[i].add(u)))


@case("grad_windows", windows, starts)
def _(x, s):
    return jnp.sum(lax.gather(x, s, GDN(offset_dims=(1, 2), collapsed_slice_dims=(),
                                        start_index_map=(0, 1)), slice_sizes=(2, 3),
                              mode="clip") ** 3)


for mode in [None, "clip"]:
    @case(f"grad_at_set_{mode}", upd, x64, dup)
    def _(u, x, i, mode=mode):
        return jnp.sum(jnp.sin(x.at[i].set(u, mode=mode)) * jnp.arange(4.0))

    @case(f"grad_at_set_operand_{mode}", x64, upd, dup)
    def _(x, u, i, mode=mode):
        return jnp.sum(jnp.sin(x.at[i].set(u, mode=mode)) * jnp.arange(4.0))


@case("grad_at_multiply_operand", x64, upd, dup)
def _(x, u, i):
    return jnp.sum(jnp.sin(x.at[i].multiply(u)))


@case("grad_at_multiply_unique", upd, x64, np.array([4, 0, 2, 9, 1], np.int32))
def _(u, x, i):
    return jnp.sum(jnp.sin(x.at[i].multiply(u, unique_indices=True)))


ties = np.array([[0.5, 1.0, -2.0, 0.0], [3.0, 3.0, 3.0, 3.0], [0.5, 2.0, -2.0, 1.0],
                 [1.0, 1.0, 1.0, 1.0], [0.5, 1.0, -3.0, 0.0]], np.float32)
for op in ["max", "min"]:
    @case(f"grad_at_{op}_updates", ties, x64, np.array([1, 3, 1, 9, 1], np.int32))
    def _(u, x, i, op=op):
        return jnp.sum(jnp.sin(getattr(x.at[i], op)(u)) * jnp.arange(1.0, 5.0))

    @case(f"grad_at_{op}_operand", x64, ties, np.array([1, 3, 1, 9, 1], np.int32))
    def _(x, u, i, op=op):
        return jnp.sum(jnp.sin(getattr(x.at[i], op)(u, mode="clip")) * jnp.arange(1.0, 5.0))


def record(name, f, args, x64):
    jax.config.update("jax_enable_x64", x64)
    args = [jnp.asarray(a) for a in args]
    closed = jax.make_jaxpr(f)(*args)
    return {"name": name, "x64": x64, "text": str(closed),
            "consts": [enc(c) for c in closed.consts], "args": [enc(a) for a in args],
            "jit": attempt(lambda: leaves(jax.jit(f)(*args))),
            # The printed jaxpr evaluated equation by equation (`jax.core.eval_jaxpr`: each
            # primitive compiled alone), which differs from jit where XLA rewrites a whole
            # program (a division by a constant becomes a multiplication by its reciprocal).
            "eager": attempt(lambda: leaves(
                jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *args))),
            **({"grad": attempt(lambda: leaves(jax.jit(jax.grad(f))(*args))),
                "grad_text": str(jax.make_jaxpr(jax.grad(f))(*args))}
               if name.startswith("grad_") else {})}


def main():
    doc = {"generator": "tools/gen_gather_fixtures.py",
           "versions": {"jax": jax.__version__, "numpy": np.__version__},
           "cases": [record(*c) for c in CASES]}
    json.dump(doc, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
