"""Associativity of promotion as users meet it, asked of the real libraries: for every ordered
triple of the 15 dtypes of JAX's tables (those the library has), the dtypes of (a + b) + c and
a + (b + c) on zero-dimensional arrays, where they differ. `audit` must find exactly these.

    tools/.venv-jax/bin/python tools/gen_audit_fixtures.py     # jax (x64) and numpy 2

Writes tests/fixtures/audit/{numpy,jax_x64}.json. Array arithmetic, not promote_types: JAX's
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


def main():
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
