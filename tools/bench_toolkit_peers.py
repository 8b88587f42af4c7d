"""Peer figures for the toolkit benches (same machine, same day): checking associativity
of promote_types over every ordered triple, in Python, with NumPy's and JAX's own functions.

    tools/.venv-jax/bin/python tools/bench_toolkit_peers.py

Compare with `cargo bench --bench toolkit` (audit_numpy does this and the five criteria).
"""
import itertools
import timeit

import numpy as np

NP = [np.dtype(t) for t in "? u1 u2 u4 u8 i1 i2 i4 i8 f2 f4 f8 c8 c16".split()]


def triples(promote, types):
    bad = 0
    for a, b, c in itertools.product(types, repeat=3):
        try:
            left = promote(promote(a, b), c)
        except Exception:
            left = None
        try:
            right = promote(a, promote(b, c))
        except Exception:
            right = None
        bad += left != right
    return bad


def median(fn, n=7):
    return sorted(timeit.repeat(fn, number=1, repeat=n))[n // 2]


bad = triples(np.promote_types, NP)
t = median(lambda: triples(np.promote_types, NP))
print(f"numpy {np.__version__}: {len(NP)} dtypes, {bad} non-associative triples, {t * 1e3:.2f} ms")

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    JX = [jnp.dtype(t) for t in "bool uint8 uint16 uint32 uint64 int8 int16 int32 int64 bfloat16 float16 float32 float64 complex64 complex128".split()]
    bad = triples(jnp.promote_types, JX)
    t = median(lambda: triples(jnp.promote_types, JX), n=3)
    print(f"jax {jax.__version__}: {len(JX)} dtypes, {bad} non-associative triples (jnp.promote_types makes u64+i8 a strong float64), {t * 1e3:.1f} ms")
except ImportError:
    pass
