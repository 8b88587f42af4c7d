"""Fixtures for compositions of JAX's transformations (issue 11): each case written once here
and once in crates/dtype-lattice-array/tests/it/compositions.rs under the same name, run through
real JAX 0.10 (x64 off): higher-order derivatives (grad of grad, forward over reverse),
jit/grad/vmap/jvp/linearize in either order, value_and_grad with has_aux and argnums,
stop_gradient, pytrees of parameters, custom_jvp and custom_vjp functions (the issue's
softplus and clip_gradient) under every transformation, and the PRNG inside jit, vmap and
grad. Each case records the leaves of its output; cases marked with a jaxpr also record
`jax.make_jaxpr`'s text and its equations (primitive and output avals), nested `jit` calls
inlined.

Run with the venv of tools/requirements-jax.txt:
    tools/.venv-jax/bin/python tools/gen_composition_fixtures.py
Writes tests/fixtures/transformations/compositions.json.
"""

import os
import sys
from functools import partial

sys.path.insert(0, os.path.dirname(__file__))
from fixturelib import pin_xla_isa, write_fixture  # noqa: E402

pin_xla_isa()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from gen_train_mlp_fixtures import MODEL  # noqa: E402
from gen_transform_fixtures import aval_text, leaf_record, vmap_arg, vmap_spec_json  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..")


# The softplus (custom_jvp) and clip_gradient (custom_vjp), from the train_mlp program.
_MODEL = {"jax": jax, "jnp": jnp, "partial": partial}
exec(MODEL, _MODEL)
softplus, clip_gradient = _MODEL["softplus"], _MODEL["clip_gradient"]


def _cube_sum(x, y):
    return jnp.sum(x ** 3 * y)


def _loss_aux(w, x):
    pred = jnp.tanh(x @ w)
    loss = jnp.mean(pred ** 2)
    return loss, {"pred_sum": jnp.sum(pred), "w_norm": jnp.sum(w * w)}


def _mlp(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.sum((h @ params["w2"]) ** 2)


def _params(i):
    return {
        "w1": vmap_arg(("float32", (3, 4)), i),
        "b1": vmap_arg(("float32", (4,)), i + 1),
        "w2": vmap_arg(("float32", (4, 2)), i + 2),
    }


def _noisy(k, x):
    return x * jax.random.normal(k, x.shape, x.dtype)


def _dropout(k, x):
    mask = jax.random.bernoulli(k, 0.7, x.shape)
    return jnp.where(mask, x / 0.7, 0)


def _contractions(a, b, c, d):
    """Every form XLA's CPU backend contracts into a fused multiply-add, and two it does not
    (a product used twice; a product also returned)."""
    p = a * b
    return (a * b + c, c + a * b, a * b - c, c - a * b, -(a * b) + c, a ** 2 + c,
            jnp.square(b) - d, a * b + c * d, (a * b + c) * a + b, p + c, p, p * c + p)


def _shared_products(a, b, c, d):
    """A product read by several consumers: fused into each addition that is the product's
    only use in its fusion (separate outputs, beside `exp` or a product), not where two uses
    meet in one fusion or a reduction reads it."""
    p = a * b
    return (p + c, p - d, jnp.exp(a * c) + (a * c + b), (b * d + c) * (b * d),
            (c * d + a) + (c * d + b), a * d + b, jnp.sum(a * d), b * c + a, (b * c) * d)


# name -> (function of the arguments returning a pytree, argument specs, jaxpr?). Specs as
# gen_transform_fixtures.vmap_arg reads them; ("params", i) is _params(i).
CASES = {
    "jit_grad": (jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(x) * x))),
                 [("float32", (4,))], False),
    "grad_jit": (jax.grad(lambda x: jnp.sum(jax.jit(lambda y: jnp.tanh(y) * y)(x))),
                 [("float32", (4,))], False),
    "grad_grad": (jax.grad(jax.grad(lambda x: jnp.tanh(x * x + 1.0) * 3.0)),
                  [("float32", ())], True),
    "grad_grad_grad": (jax.grad(jax.grad(jax.grad(lambda x: jnp.sin(x) * x))),
                       [("float32", ())], False),
    "jit_grad_grad": (jax.jit(jax.grad(jax.grad(lambda x: jnp.exp(-x * x)))),
                      [("float32", ())], False),
    "hvp": (lambda x, y, v: jax.jvp(jax.grad(_cube_sum), (x, y), (v, jnp.zeros_like(y))),
            [("float32", (3,)), ("float32", (3,)), ("float32", (3,))], False),
    "grad_of_jvp": (jax.grad(lambda x: jnp.sum(jax.jvp(jnp.sin, (x,), (x,))[1])),
                    [("float32", (3,))], False),
    "linearize": (lambda x, t: (lambda y, f: (y, f(t)))(*jax.linearize(lambda z: jnp.sin(z) * jnp.cos(z), x)),
                  [("float32", (4,)), ("float32", (4,))], False),
    "value_and_grad_aux": (jax.value_and_grad(_loss_aux, has_aux=True),
                           [("float32", (3, 2)), ("float32", (4, 3))], False),
    "grad_argnums": (jax.grad(lambda a, b, c: jnp.sum(a * jnp.sin(b) * c ** 2), argnums=(0, 2)),
                     [("float32", (3,)), ("float32", (3,)), ("float32", (3,))], False),
    "grad_pytree": (jax.grad(_mlp), [("params", 0), ("float32", (5, 3))], False),
    "vjp_pytree": (lambda p, x: jax.vjp(_mlp, p, x)[1](jnp.float32(1.5)),
                   [("params", 1), ("float32", (2, 3))], False),
    "stop_gradient": (jax.grad(lambda x: jnp.sum(x * lax.stop_gradient(x) + x)),
                      [("float32", (3,))], True),
    "jit_vmap_grad": (jax.jit(jax.vmap(jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 2)))),
                      [("float32", (3, 4))], False),
    "vmap_jit_grad": (jax.vmap(jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 2)))),
                      [("float32", (3, 4))], False),
    "grad_vmap_jvp": (jax.grad(lambda x: jnp.sum(jax.vmap(lambda r: jax.jvp(jnp.tanh, (r,), (r,))[1])(x))),
                      [("float32", (2, 3))], False),
    "mixed_broadcast_grad": (jax.grad(lambda x, y: jnp.mean((x[:, None] - y) ** 2), argnums=(0, 1)),
                             [("float32", (3,)), ("bfloat16", (4,))], False),
    "softplus_jit": (jax.jit(softplus), [("float32", (5,))], True),
    "softplus_jvp": (lambda x: jax.jvp(softplus, (x,), (jnp.ones_like(x),)), [("float32", (5,))], False),
    "softplus_grad": (jax.grad(lambda x: jnp.sum(softplus(x))), [("float32", (5,))], False),
    "softplus_vmap_grad": (jax.vmap(jax.grad(softplus)), [("float32", (5,))], False),
    "softplus_grad_vmap": (jax.grad(lambda x: jnp.sum(jax.vmap(softplus)(x))), [("float32", (5,))], False),
    "softplus_grad_grad": (jax.grad(jax.grad(softplus)), [("float32", ())], False),
    "clip_grad": (jax.grad(lambda x: jnp.sum(clip_gradient(x * 3.0, 1.0) ** 2)), [("float32", (5,))], False),
    "clip_jit": (jax.jit(lambda x: clip_gradient(x * 3.0, 1.0)), [("float32", (5,))], True),
    "clip_vmap_grad": (jax.vmap(jax.grad(lambda x: clip_gradient(x * 3.0, 0.5) ** 2)),
                       [("float32", (5,))], False),
    "clip_jit_grad": (jax.jit(jax.grad(lambda x: jnp.sum(softplus(clip_gradient(x, 0.25) * 4.0)))),
                      [("float32", (5,))], False),
    "prng_jit": (jax.jit(_noisy), [("key", 3), ("float32", (2, 3))], True),
    "prng_vmap_jit": (jax.vmap(jax.jit(_noisy)), [("keys", 4, 3), ("float32", (3, 2))], False),
    "prng_grad": (jax.grad(lambda x, k: jnp.sum(_dropout(k, x) ** 2)), [("float32", (6,)), ("key", 5)],
                  False),
    "prng_grad_vmap": (jax.grad(lambda x, ks: jnp.sum(jax.vmap(_dropout)(ks, x))),
                       [("float32", (3, 4)), ("keys", 6, 3)], False),
    "contractions_jit": (jax.jit(_contractions), [("float32", (64,))] * 4, False),
    "contractions_jit_f16": (jax.jit(lambda *a: _contractions(*a)[:9]), [("float16", (64,))] * 4, False),
    "contractions_shared_jit": (jax.jit(_shared_products), [("float32", (64,))] * 4, False),
    "randint_jit": (jax.jit(lambda k: (jax.random.randint(k, (5,), 2, 9),
                                       jax.random.randint(k, (4,), -5, 300, jnp.uint8),
                                       jax.random.randint(k, (3,), -100, 100, jnp.int16),
                                       jax.random.randint(k, (3,), 7, 7),
                                       jax.random.randint(k, (2, 2), -2**31, 2**31 - 1))),
                    [("key", 8)], False),
    "randint_vmap": (jax.vmap(lambda k: jax.random.randint(k, (3,), 0, 10, jnp.uint16)),
                     [("keys", 9, 4)], False),
    "prng_jit_split": (jax.jit(lambda k: jax.random.uniform(jax.random.split(k, 3)[1], (4,))),
                       [("key", 7)], True),
}


def inlined(jaxpr):
    """The equations (primitive and output avals) with every `jit` equation replaced by its
    own, recursively: JAX wraps some jax.numpy and jax.random helpers (`_where`, `_uniform`,
    `_normal`) in jits of their own, which the Rust functions need not reproduce."""
    out = []
    for e in jaxpr.eqns:
        if e.primitive.name in ("jit", "pjit"):
            out.extend(inlined(e.params["jaxpr"].jaxpr))
            continue
        out.append({"primitive": e.primitive.name, "outputs": [aval_text(v) for v in e.outvars]})
    return out


def build(spec, i):
    if spec[0] == "params":
        return _params(spec[1])
    return vmap_arg(spec, i)


def spec_json(spec):
    if spec[0] == "params":
        return list(spec)
    return vmap_spec_json(spec)


def main():
    cases = []
    for name, (f, specs, with_jaxpr) in CASES.items():
        args = [build(s, i) for i, s in enumerate(specs)]
        out = f(*args)
        case = {
            "name": name,
            "args": [spec_json(s) for s in specs],
            "outputs": [leaf_record(x) for x in jax.tree_util.tree_leaves(out)],
        }
        if with_jaxpr:
            closed = jax.make_jaxpr(f)(*args)
            case["jaxpr"] = str(closed)
            case["eqns"] = inlined(closed.jaxpr)
        cases.append(case)
    header = {
        "generator": "tools/gen_composition_fixtures.py",
        "versions": {"jax": jax.__version__, "numpy": np.__version__},
        "notes": "arguments as in vmap.json: element k of argument i is ((7k + 3i) mod 11) / 4 "
                 "- 1.3, converted; [\"keys\", seed, n]: jax.random.split(jax.random.key(seed), "
                 "n); [\"key\", seed]: jax.random.key(seed); [\"params\", i]: {w1: f32[3,4] as "
                 "argument i, b1: f32[4] as argument i+1, w2: f32[4,2] as argument i+2}. "
                 "Outputs: the leaves of the output pytree (dicts in sorted key order).",
    }
    path = os.path.join(ROOT, "tests", "fixtures", "transformations", "compositions.json")
    write_fixture(path, header, cases)
    print(f"{path}: {len(cases)} cases")


if __name__ == "__main__":
    main()
