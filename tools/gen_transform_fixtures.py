"""Fixtures for JAX's transformations (issue 11): a corpus of functions, each written once
here and once in crates/dtype-lattice-array/tests/transformations.rs under the same name, run
through real JAX 0.10 (x64 off): the text of `jax.make_jaxpr` and its equations (primitive and
output avals), the values of `jit` and of `jvp` along a tangent of ones.

Run with the venv of tools/requirements-jax.txt:
    tools/.venv-jax/bin/python tools/gen_transform_fixtures.py
Writes tests/fixtures/transformations/corpus.json.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

sys.path.insert(0, os.path.dirname(__file__))
from fixturelib import write_fixture  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..")


def select_tril(x):
    mask = jnp.arange(x.shape[0])[:, None] > jnp.arange(x.shape[1])
    return lax.select(mask, x, jnp.zeros_like(x))


# name -> (function, argument builders). Arguments: (dtype, shape) filled with a fixed
# pattern, or ("weak", value) for a Python scalar.
CORPUS = {
    "sin_mul_add": (lambda x: jnp.sin(x) * 2.0 + 1, [("float32", (3,))]),
    "omnistaging_add": (lambda x: x * lax.add(1, 1), [("int32", ())]),
    "select_tril": (select_tril, [("float32", (3, 3))]),
    "poly": (lambda x: x * x * x - 2 * x + 1, [("float32", (4,))]),
    "exp_log": (lambda x: jnp.log1p(jnp.exp(-jnp.abs(x))) + jnp.maximum(x, 0), [("float32", (5,))]),
    "tanh_logistic": (lambda x: jnp.tanh(x) * jax.nn.sigmoid(x), [("float32", (4,))]),
    "matmul_bias": (lambda x, w: jnp.tanh(x @ w + 1.0), [("float32", (2, 3)), ("float32", (3, 4))]),
    "sum_mean": (lambda x: jnp.sum(x * x) / x.size + jnp.mean(x), [("float32", (2, 3))]),
    "mixed_dtypes": (lambda x, y: x + y, [("float32", ()), ("bfloat16", (2,))]),
    "weak_scalar": (lambda x: x * 3 + 0.5, [("bfloat16", (3,))]),
    "sqrt_div": (lambda x, y: jnp.sqrt(x * x + 1.0) / (y * y + 2.0), [("float32", (3,)), ("float32", (3,))]),
    "reduce_max": (lambda x: jnp.max(x, axis=1), [("float32", (2, 3))]),
    "where_relu": (lambda x: jnp.where(x > 0, x, 0.1 * x), [("float32", (6,))]),
    "broadcast_add": (lambda x, y: x + y, [("float32", (2, 1)), ("float32", (3,))]),
    "cos_square": (lambda x: jnp.cos(x) ** 2 + jnp.square(jnp.sin(x)), [("float32", (3,))]),
    "sin_times_x": (lambda x: jnp.sin(x) * x, [("float32", ())]),
    "tanh_poly": (lambda x: jnp.tanh(x * x + 1.0) * 3.0, [("float32", ())]),
}


def arg(spec, i):
    kind, shape = spec
    if kind == "weak":
        return shape
    n = int(np.prod(shape)) if shape else 1
    vals = [((k * 7 + 3 * i) % 11) / 4.0 - 1.3 for k in range(n)]
    return jnp.asarray(np.array(vals, dtype=np.float64).reshape(shape), dtype=kind)


def out_record(x):
    if getattr(x, "dtype", None) == jax.dtypes.float0:
        return {"dtype": "float0", "shape": list(x.shape), "values": []}
    x = jnp.asarray(x)
    return {
        "dtype": str(x.dtype),
        "shape": list(x.shape),
        "values": [float(v) for v in np.asarray(x, dtype=np.float64).ravel()],
    }


def aval_text(v):
    return str(v.aval.str_short(short_dtypes=True))


def main():
    cases = []
    for name, (f, specs) in CORPUS.items():
        args = [arg(s, i) for i, s in enumerate(specs)]
        closed = jax.make_jaxpr(f)(*args)
        eqns = [
            {"primitive": e.primitive.name, "outputs": [aval_text(v) for v in e.outvars]}
            for e in closed.jaxpr.eqns
        ]
        out = jax.jit(f)(*args)
        tangents = [
            jnp.ones_like(a)
            if jnp.issubdtype(a.dtype, jnp.inexact)
            else np.zeros(a.shape, dtype=jax.dtypes.float0)
            for a in args
        ]
        jvp_primal, tangent = jax.jvp(f, tuple(args), tuple(tangents))
        # grad of the sum of the output (in float32) with respect to every inexact argument.
        diff = [i for i, a in enumerate(args) if jnp.issubdtype(a.dtype, jnp.inexact)]
        grads = []
        if diff and jnp.issubdtype(jnp.asarray(out).dtype, jnp.inexact):
            g = jax.grad(
                lambda *a: jnp.sum(f(*a)).astype(jnp.float32), argnums=tuple(diff)
            )(*args)
            grads = [out_record(x) for x in g]
        # The jaxpr of grad itself, for scalar functions of one scalar.
        grad_jaxpr = None
        if (
            len(args) == 1
            and args[0].shape == ()
            and jnp.issubdtype(args[0].dtype, jnp.inexact)
            and jnp.asarray(out).shape == ()
        ):
            grad_jaxpr = str(jax.make_jaxpr(jax.grad(f))(*args))
        # vjp with a cotangent of ones.
        primal, pullback = jax.vjp(f, *args)
        vjp_cts = pullback(jnp.ones_like(primal))
        cases.append(
            {
                "name": name,
                "args": [[s[0], list(s[1])] for s in specs],
                "jaxpr": str(closed),
                "eqns": eqns,
                "jit": out_record(out),
                "jvp": [out_record(jvp_primal), out_record(tangent)],
                "grad": grads,
                "grad_jaxpr": grad_jaxpr,
                "vjp": [out_record(c) for c in vjp_cts],
            }
        )
    header = {
        "generator": "tools/gen_transform_fixtures.py",
        "versions": {"jax": jax.__version__, "numpy": np.__version__},
        "notes": "arguments: element k of argument i is ((7k + 3i) mod 11) / 4 - 1.3, converted",
    }
    path = os.path.join(ROOT, "tests", "fixtures", "transformations", "corpus.json")
    write_fixture(path, header, cases)
    print(f"{path}: {len(cases)} functions")


if __name__ == "__main__":
    main()
