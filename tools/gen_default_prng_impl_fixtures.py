"""`jax_default_prng_impl`: the implementation `jax.random.key(seed)` and the legacy raw keys
(`jax.random.PRNGKey(seed)`, uint32 key data) take when none is named (JAX 0.10.2, CPU).

For each implementation, with the configuration set to it: `key(seed)`'s key data,
`PRNGKey(seed)`, and the functions on raw keys (`split`, `fold_in`, `bits`, `uniform`,
`normal`, `randint`, `key_impl`, `wrap_key_data` without `impl`), and raw key data of
another implementation's shape refused (JAX's error). Read by
crates/dtype-lattice-array/tests/it/prng_impls.rs (`the_default_implementation_…`).

Run with tools/.venv-jax, from the repository's root:
    tools/.venv-jax/bin/python tools/gen_default_prng_impl_fixtures.py \
        > tests/fixtures/random_arrays/default_impl.json
"""

import json
import sys

import jax
import jax.numpy as jnp
import numpy as np

IMPLS = ["threefry2x32", "rbg", "unsafe_rbg", "threefry4x32", "philox2x32", "philox4x32"]


def enc(x):
    a = np.asarray(x)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "hex": a.tobytes().hex()}


def attempt(f):
    try:
        return f()
    except Exception as e:  # noqa: BLE001
        # JAX's message ends with the implementation's repr (function addresses): cut.
        message = str(e).split("\n")[0].split(" for impl=")[0]
        return {"error": {"kind": type(e).__name__, "message": message}}


def main():
    R = jax.random
    cases = []
    for impl in IMPLS:
        jax.config.update("jax_default_prng_impl", impl)
        raw = R.PRNGKey(7)
        case = {
            "impl": impl,
            "key_data": enc(R.key_data(R.key(0))),
            "key_dtype": str(R.key(0).dtype),
            "prng_key": enc(raw),
            "key_impl": str(R.key_impl(raw)),
            "split": enc(R.split(raw, 3)),
            "fold_in": enc(R.fold_in(raw, 3)),
            "bits": enc(R.bits(raw, (4,))),
            "uniform": enc(R.uniform(raw, (3,))),
            "normal": enc(R.normal(raw, (2,))),
            "randint": enc(R.randint(raw, (3,), 0, 10)),
            "wrap": str(R.wrap_key_data(raw).dtype),
        }
        other = np.zeros((2,) if raw.shape != (2,) else (4,), np.uint32)
        case["other_shape"] = enc(other)
        case["other_shape_uniform"] = attempt(lambda: enc(R.uniform(jnp.asarray(other), (2,))))
        cases.append(case)
    json.dump({"jax": jax.__version__, "cases": cases}, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
