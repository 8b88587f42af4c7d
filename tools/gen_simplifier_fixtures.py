"""Conformance of XLA's algebraic simplifier as JAX 0.10.2's CPU backend applies it.

Each program is written once, here, in Python: the fixture records the text JAX prints for it
(`jax.make_jaxpr`), its inputs, what `jax.jit` computes (XLA simplifies the whole program:
`a / jnp.sqrt(b)` is computed as `a * rsqrt(b)`), and what the program's primitives compute one
at a time (`jax.disable_jit`, each primitive compiled alone: nothing to simplify). The test
(`crates/dtype-lattice-array/tests/it/simplifier.rs`) reads the text, runs it under the
crate's `jit` and compares bit for bit with JAX's jit, and runs it equation by equation and
compares with JAX's primitives one at a time; the programs were chosen so that the two differ.

`eager` records `jnp` functions called outside `jit` whose own program XLA simplifies
(`jnp.divide(x, s)` with a 0-d `s` divides by a broadcast: `x * broadcast(1 / s)`).

Run with tools/.venv-jax (tools/requirements-jax.txt), from the repository's root:
    tools/.venv-jax/bin/python tools/gen_simplifier_fixtures.py \
        > tests/fixtures/jaxpr/simplifier.json
"""

import json
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

N = 512
REAL = ["float16", "float32", "float64"]
# bfloat16: no rewrite (XLA computes it in float32 behind conversions).
FLOATS = REAL + ["bfloat16"]
# complex64: the rewrites that keep to products and quotients.
ALL = FLOATS + ["complex64"]


def enc(x):
    a = np.asarray(x)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "hex": a.tobytes().hex()}


def values(seed, dtype, lo, hi, shape=(N,)):
    rng = np.random.default_rng(seed)
    v = rng.uniform(lo, hi, shape)
    if dtype.startswith("complex"):
        v = v + 1j * rng.uniform(lo / 4, hi / 4, shape)
    return np.asarray(v).astype(jnp.dtype(dtype))


# name: (function, dtypes, argument ranges (lo, hi) or (lo, hi, shape))
PROGRAMS = {
    "exp_over_exp": (lambda a, b: jnp.exp(a) / jnp.exp(b), REAL, [(0.1, 3), (0.1, 3)]),
    "over_exp": (lambda a, b: a / jnp.exp(b), FLOATS, [(0.1, 3), (0.1, 3)]),
    "over_pow": (lambda a, b: a / lax.pow(b, a), FLOATS, [(0.1, 3), (0.1, 3)]),
    "over_sqrt": (lambda a, b: a / jnp.sqrt(b), FLOATS, [(0.1, 3), (0.1, 3)]),
    "over_sqrt_used_twice": (lambda a, b: (a / jnp.sqrt(b), jnp.sqrt(b)), REAL,
                             [(0.1, 3), (0.1, 3)]),
    "over_rsqrt": (lambda a, b: a / lax.rsqrt(b), FLOATS, [(0.1, 3), (0.1, 3)]),
    "over_scalar_array": (lambda a, b: a / b, ALL, [(0.1, 3), (0.5, 3, ())]),
    "over_constant": (lambda a: a / jnp.asarray(np.linspace(1.5, 7.0, N), a.dtype), ALL,
                      [(0.1, 3)]),
    "over_literal": (lambda a: a / jnp.asarray(3.0, a.dtype), ALL, [(0.1, 3)]),
    # A 0-d divisor read elsewhere too keeps the division; a column's (reshaped first) not.
    "over_scalar_used_again": (lambda a, b: (a / b, b + 1), REAL, [(0.1, 3), (0.5, 3, ())]),
    "over_column_used_again": (lambda a, b: (a / b, b * 2), REAL,
                               [(0.1, 3, (16, 32)), (0.5, 3, (16, 1))]),
    # A row (a divisor with dimensions) is replaced whatever else reads it, also where two
    # quotients share its broadcast (the product by the reciprocal then contracts into the
    # sum).
    "over_row_used_again": (lambda a, b: (a / b, b * 2), REAL,
                            [(0.1, 3, (16, 32)), (0.5, 3, (32,))]),
    "over_row_twice": (lambda a, c, b: (lambda n: (c / n, a / n + c, n * n))(
                           lax.broadcast_in_dim(b * b + 1, (1, 32), (1,))), REAL,
                       [(0.1, 3, (16, 32)), (0.1, 3, (16, 32)), (0.5, 3, (32,))]),
    "over_sum": (lambda a, b: a / jnp.sum(b), REAL, [(0.1, 3), (0.1, 3)]),
    "softmax_rows": (lambda a: jnp.exp(a) / jnp.sum(jnp.exp(a), axis=1, keepdims=True), REAL,
                     [(-2, 2, (16, 32))]),
    "quotient_over_quotient": (lambda a, b: (a / b) / ((a + b) / (a - b)), ALL,
                               [(0.1, 3), (3.5, 6)]),
    "quotient_over": (lambda a, b: (a / b) / (a + b), ALL, [(0.1, 3), (0.1, 3)]),
    "over_quotient": (lambda a, b: a / (b / (a + b)), ALL, [(0.1, 3), (0.1, 3)]),
    "exp_times_exp": (lambda a, b: jnp.exp(a) * jnp.exp(b), REAL, [(0.1, 3), (0.1, 3)]),
    "log_exp": (lambda a: jnp.log(jnp.exp(a)), REAL, [(0.1, 3)]),
    "log_pow": (lambda a, b: jnp.log(lax.pow(a, b)), REAL, [(0.1, 3), (0.1, 3)]),
    "log_sqrt": (lambda a: jnp.log(jnp.sqrt(a)), REAL, [(0.1, 3)]),
    "log_rsqrt": (lambda a: jnp.log(lax.rsqrt(a)), REAL, [(0.1, 3)]),
    "pow_exp": (lambda a, b: lax.pow(jnp.exp(a), b), REAL, [(0.1, 3), (0.1, 3)]),
    "pow_two": (lambda a: lax.pow(a, jnp.asarray(2.0, a.dtype)), ALL, [(0.1, 3)]),
    "pow_three": (lambda a: lax.pow(a, jnp.asarray(3.0, a.dtype)), FLOATS, [(0.1, 3)]),
    "pow_minus_one": (lambda a: lax.pow(a, jnp.asarray(-1.0, a.dtype)), ALL, [(0.1, 3)]),
    "pow_half": (lambda a: lax.pow(a, jnp.asarray(0.5, a.dtype)), REAL, [(-1, 3)]),
    "sqrt_square": (lambda a: jnp.sqrt(a * a), REAL, [(-3, 3)]),
    # A gamma sampler's step: c = (1/3) / sqrt(d), v = 1 + x * c.
    "gamma_step": (lambda x, d: 1 + x * ((1 / 3) / jnp.sqrt(d - 1 / 3)), REAL,
                   [(-3, 3), (1, 4)]),
}

SPECIALS = {
    # -0, -inf, inf, nan and the like for the rules that must keep IEEE's special cases.
    "pow_half": [-0.0, 0.0, -np.inf, np.inf, np.nan, -1.0, 1e-30],
    "sqrt_square": [-0.0, 0.0, -np.inf, np.inf, np.nan, 1e30, 1e-30],
    "log_exp": [-0.0, 0.0, -np.inf, np.inf, np.nan, 100.0, -100.0],
}


def args_for(name, dtype, ranges):
    out = []
    for i, r in enumerate(ranges):
        shape = r[2] if len(r) > 2 else (N,)
        v = values(1000 * i + len(name), dtype, r[0], r[1], shape)
        if i == 0 and name in SPECIALS and shape == (N,):
            s = np.asarray(SPECIALS[name]).astype(v.dtype)
            v[: len(s)] = s
        out.append(v)
    return out


def leaves(out):
    return [enc(x) for x in jax.tree_util.tree_leaves(out)]


def program_cases():
    cases = []
    for name, (f, dtypes, ranges) in PROGRAMS.items():
        for dtype in dtypes:
            x64 = dtype in ("float64", "complex128")
            jax.config.update("jax_enable_x64", x64)
            args = [jnp.asarray(a) for a in args_for(name, dtype, ranges)]
            closed = jax.make_jaxpr(f)(*args)
            jitted = jax.jit(f)(*args)
            with jax.disable_jit():
                eager = f(*args)
            j, e = leaves(jitted), leaves(eager)
            cases.append({
                "name": f"{name}_{dtype}", "x64": x64, "text": str(closed),
                "consts": [enc(c) for c in closed.consts], "args": [enc(a) for a in args],
                "jit": j, "eager": e,
                "differs": any(a["hex"] != b["hex"] for a, b in zip(j, e)),
            })
    return cases


def eager_cases():
    """`jnp.divide` outside jit: XLA simplifies the function's own program."""
    cases = []
    for dtype in ALL:
        x64 = dtype == "float64"
        jax.config.update("jax_enable_x64", x64)
        for shapes in [((N,), ()), ((16, 32), (16, 1)), ((N,), (N,))]:
            a = jnp.asarray(values(7, dtype, 0.1, 3, shapes[0]))
            b = jnp.asarray(values(8, dtype, 0.5, 3, shapes[1]))
            out = jnp.divide(a, b)
            exact = np.asarray(lax.div(a, jnp.broadcast_to(b, a.shape)))
            cases.append({
                "name": f"divide_{dtype}_{'x'.join(map(str, shapes[1])) or 'scalar'}",
                "x64": x64, "function": "divide", "args": [enc(a), enc(b)],
                "out": enc(out),
                "differs": bool((np.asarray(out) != exact).any()),
            })
    return cases


def main():
    json.dump({"jax": jax.__version__, "programs": program_cases(), "eager": eager_cases()},
              sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
