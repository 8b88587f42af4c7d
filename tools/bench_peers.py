#!/usr/bin/env python3
"""Time the peers of `benches/promotion.rs` from Python: np.promote_types, jnp.promote_types
and jnp.result_type of four operands (int8, uint8, float16 arrays and a Python float).

Run with the fixture venv:  tools/.venv-jax/bin/python tools/bench_peers.py
Prints the median over 7 repeats, in microseconds per call.
"""
import timeit

import jax
import jax.numpy as jnp
import numpy as np

SETUP = (
    "import numpy as np, jax.numpy as jnp; a = np.dtype('int8'); b = np.dtype('uint8'); "
    "x = np.zeros(2, 'int8'); y = np.zeros(2, 'uint8'); z = np.zeros(2, 'float16')"
)


def median_us(stmt, number):
    runs = sorted(t / number for t in timeit.repeat(stmt, setup=SETUP, number=number, repeat=7))
    return runs[len(runs) // 2] * 1e6


print(f"numpy {np.__version__}, jax {jax.__version__}")
print(f"np.promote_types(int8, uint8):      {median_us('np.promote_types(a, b)', 200000):.3f} us")
print(f"jnp.promote_types(int8, uint8):     {median_us('jnp.promote_types(a, b)', 100000):.3f} us")
print(f"jnp.result_type(i8, u8, f16, 2.5):  {median_us('jnp.result_type(x, y, z, 2.5)', 20000):.3f} us")
