"""Associativity of promotion as users meet it, asked of the real libraries: for every ordered
triple of the 15 dtypes of JAX's tables (those the library has), the dtypes of (a + b) + c and
a + (b + c) on zero-dimensional arrays, where they differ. `audit` must find exactly these.

    tools/.venv-jax/bin/python tools/gen_audit_fixtures.py          # jax (x64) and numpy 2
    tools/.venv-torch/bin/python tools/gen_audit_fixtures.py torch
    tools/.venv-tensorflow/bin/python tools/gen_audit_fixtures.py tensorflow

Writes tests/fixtures/audit/{numpy,jax_x64,torch,tensorflow}.json. Array arithmetic, not promote_types: JAX's
uint64 + int8 is a weakly typed float64 array, which then promotes as f* does.
"""
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from fixturelib import write_fixture  # noqa: E402

import numpy as np  # noqa: E402

TYPES = "bool uint8 uint16 uint32 uint64 int8 int16 int32 int64 bfloat16 float16 float32 float64 complex64 complex128".split()
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "audit")


def dtype_name(x):
    return str(x.dtype)


def triples(zero, add, names):
    cases = []
    for a, b, c in itertools.product(names, repeat=3):
        def res(f):
            try:
                return dtype_name(f())
            except Exception:
                return None
        left = res(lambda: add(add(zero(a), zero(b)), zero(c)))
        right = res(lambda: add(zero(a), add(zero(b), zero(c))))
        if left != right:
            cases.append({"types": [a, b, c], "results": [left, right]})
    return cases


def torch_fixture():
    import torch
    names = [t for t in TYPES]
    zero = lambda t: torch.zeros((), dtype=getattr(torch, t))
    cases = triples(zero, torch.add, names)
    for c in cases:
        c["results"] = [r and r.removeprefix("torch.") for r in c["results"]]
    write_fixture(os.path.join(OUT, "torch.json"),
                  {"library": f"torch {torch.__version__}", "rules": "torch", "x64": False, "types": names},
                  cases)
    print(f"torch: {len(cases)} non-associative triples")


def tensorflow_fixture():
    import tensorflow as tf
    tf.experimental.numpy.experimental_enable_numpy_behavior(dtype_conversion_mode="all")
    zero = lambda t: tf.zeros((), dtype=getattr(tf, t))
    cases = triples(zero, tf.math.add, TYPES)
    for c in cases:
        c["results"] = [r and r.removeprefix("<dtype: '").removesuffix("'>") for r in c["results"]]
    write_fixture(os.path.join(OUT, "tensorflow.json"),
                  {"library": f"tensorflow {tf.__version__}", "rules": "tensorflow", "x64": False, "types": TYPES},
                  cases)
    print(f"tensorflow: {len(cases)} non-associative triples")


def main():
    if sys.argv[1:] == ["torch"]:
        return torch_fixture()
    if sys.argv[1:] == ["tensorflow"]:
        return tensorflow_fixture()
    names = [t for t in TYPES if t != "bfloat16"]
    cases = triples(lambda t: np.zeros((), dtype=t), np.add, names)
    write_fixture(os.path.join(OUT, "numpy.json"),
                  {"library": f"numpy {np.__version__}", "rules": "numpy", "x64": False, "types": names},
                  cases)
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    cases = triples(lambda t: jnp.zeros((), dtype=t), jnp.add, TYPES)
    write_fixture(os.path.join(OUT, "jax_x64.json"),
                  {"library": f"jax {jax.__version__}", "rules": "jax", "x64": True, "types": TYPES},
                  cases)
    print(f"numpy: {len(names)} types; jax: {len(TYPES)} types, {len(cases)} non-associative triples")


if __name__ == "__main__":
    main()
