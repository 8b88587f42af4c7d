"""Fixtures of XLA's RngBitGenerator and of the key implementations JAX 0.10.2 registers besides
threefry2x32 (rbg, unsafe_rbg, threefry4x32, philox4x32, philox2x32), on CPU, x64 off and on.

Usage (from the repository's root):
    tools/.venv-jax/bin/python tools/gen_rbg_fixtures.py > tests/fixtures/random_arrays/rbg.json

Read by crates/dtype-lattice-array/tests/it/rbg.rs. Arrays are {"dtype", "shape", "hex"} as
gen_jaxpr_fixtures.py writes them (key arrays: their uint32 key data); an error JAX raises is
{"error": {"kind", "message"}} (its first line). Every case has "kind" and "x64":

  "rng"      lax.rng_bit_generator(key, shape, dtype, algorithm) (or, with "bind": true,
             rng_bit_generator_p bound directly, for dtypes the function refuses):
             {"key", "shape", "dtype", "algorithm", "eager": [new_key, bits] | error,
              "jit_same": whether jax.jit's outputs are the eager ones bit for bit,
              "text": str(jax.make_jaxpr(f)(key)) | error} ("text" on the first key of each
             shape, dtype and algorithm, and on every error case).
  "vmap"     jax.vmap(f, in_axes)(keys) of the same f on a batch of keys: {"keys", "in_axes",
             "shape", "dtype", "algorithm", "eager", "jit_same", "text" (make_jaxpr of the
             vmap; JAX stages a jit of dynamic_update_index_in_dim), "text_nojit" (the same
             under jax.disable_jit(): that jit's body inlined)}.
  "seed"     impl.seed(seed) of the PRNGImpl `impl` (prng.prngs[impl]): {"impl", "seed": the 0-d
             array random_seed hands it (jnp.asarray(np.int64(int)) or a typed scalar), "py"
             (the Python int, when the seed is one), "out" | error, "api": key_data of
             jax.random.key(py, impl=impl) when "py"}.
  "split"    impl.split(key_data, shape): {"impl", "key", "shape", "out"}.
  "fold_in"  impl.fold_in(key_data, data): {"impl", "key", "data", "out"}.
  "bits"     impl.random_bits(key_data, bit_width, shape): {"impl", "key", "bit_width",
             "shape", "out"}.
  "api"      jax.random on one key of `impl` made by jax.random.key(seed, impl=impl):
             {"impl", "seed", "fn": "split" (num) | "fold_in" (data) | "bits" (shape, default
             dtype) | "uniform" (shape), "out": key_data or values}; the issue's example is
             {"impl": "rbg", "seed": 0, "fn": "uniform", "shape": [3]}.
  "batched"  the prng primitives on a key array (prng.random_bits / random_split /
             random_fold_in), as their impl maps them with vmap: {"impl", "prim", "keys"
             (key data), "bit_width", "shape", "msgs", "out" | error}.
"""

import json
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))

from fixturelib import pin_xla_isa  # noqa: E402

pin_xla_isa()

import jax  # noqa: E402
import jaxlib  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.random import prng  # noqa: E402

from gen_jaxpr_fixtures import attempt, enc, err, leaves  # noqa: E402

warnings.simplefilter("ignore")

M = 0xFFFFFFFF
KEYS = [[0, 0, 0, 0], [1, 2, 3, 4], [M] * 4, [0x80000000, 0xDEADBEEF, 0xFFFFFFFE, M], [5, 6, M, M]]
SHAPES = [(), (0,), (1,), (3,), (7,), (2, 3), (3, 5), (5, 3), (4, 1, 3), (2, 0, 3)]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
ALGS = [lax.RandomAlgorithm.RNG_DEFAULT, lax.RandomAlgorithm.RNG_THREE_FRY,
        lax.RandomAlgorithm.RNG_PHILOX]
IMPLS = ["rbg", "unsafe_rbg", "threefry4x32", "philox4x32", "philox2x32"]

CASES = []


def key_data(k):
    return jax.random.key_data(k) if jnp.issubdtype(k.dtype, jax.dtypes.prng_key) else k


def same(a, b):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(
        x.dtype == y.dtype and x.shape == y.shape
        and np.asarray(x).tobytes() == np.asarray(y).tobytes() for x, y in zip(la, lb))


def outcome(f):
    """leaves(f()) and the value itself, or the error (and None)."""
    try:
        v = f()
    except Exception as e:  # noqa: BLE001 - the class and message are the fixture
        return err(e), None
    return leaves(v), v


def record(case, f, args, text=True):
    case["eager"], value = outcome(lambda: f(*args))
    if value is not None:
        j = attempt(lambda: jax.jit(f)(*args))
        case["jit_same"] = not isinstance(j, dict) and same(value, j)
    if text or value is None:
        case["text"] = attempt(lambda: str(jax.make_jaxpr(f)(*args)))
    CASES.append(case)


def rng_cases(x64):
    for alg in ALGS:
        for dtype in UNSIGNED:
            for shape in SHAPES + [(1000,)]:
                keys = KEYS[1:2] if shape == (1000,) else KEYS
                for i, key in enumerate(keys):
                    k = jnp.array(key, jnp.uint32)
                    f = (lambda s, d, a: lambda k: lax.rng_bit_generator(k, s, d, a))(
                        shape, dtype, alg)
                    case = {"kind": "rng", "x64": x64, "key": enc(k), "shape": list(shape),
                            "dtype": dtype, "algorithm": alg.name}
                    record(case, f, (k,), text=i == 0)
    # dtypes lax.rng_bit_generator refuses; the primitive bound directly takes them.
    k = jnp.array(KEYS[1], jnp.uint32)
    for dtype in ["int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                  "bool", "uint64"]:
        f = (lambda d: lambda k: lax.rng_bit_generator(k, (7,), d))(dtype)
        record({"kind": "rng", "x64": x64, "key": enc(k), "shape": [7], "dtype": dtype,
                "algorithm": "RNG_DEFAULT"}, f, (k,))
        dt = jnp.dtype(dtype)
        for alg in ALGS[:2]:
            g = (lambda d, a: lambda k: tuple(lax.rng_bit_generator_p.bind(
                k, shape=(7,), dtype=d, algorithm=a, out_sharding=None)))(dt, alg)
            record({"kind": "rng", "bind": True, "x64": x64, "key": enc(k), "shape": [7],
                    "dtype": dtype, "algorithm": alg.name}, g, (k,))
    # Keys JAX's lowering does not take (make_jaxpr does).
    bad = [np.array([1, 2], np.uint32), np.array([1, 2, 3], np.uint32),
           np.ones((2, 4), np.uint32), np.array([1, 2, 3, 4], np.int32),
           np.ones(4, np.float32), np.ones(4, np.uint8), np.ones(4, np.bool_),
           np.ones(4, np.float16), np.ones((), np.uint32)]
    if x64:
        bad += [np.array([1, 2, 3, 4], np.uint64), np.array([1, 2], np.int64)]
    for key in bad:
        k = jnp.asarray(key)
        f = lambda k: lax.rng_bit_generator(k, (3,))  # noqa: E731
        record({"kind": "rng", "x64": x64, "key": enc(k), "shape": [3], "dtype": "uint32",
                "algorithm": "RNG_DEFAULT"}, f, (k,))
    # u64[2] keys (x64 on only: with x64 off a uint64 array is a uint32 one).
    if x64:
        for key in [[1, 2], [2**64 - 1, 2**64 - 1], [2**63, 5]]:
            k = jnp.array(key, jnp.uint64)
            for alg in ALGS:
                for dtype in ["uint32", "uint64", "uint8"]:
                    for shape in [(3,), (2, 3)]:
                        f = (lambda s, d, a: lambda k: lax.rng_bit_generator(k, s, d, a))(
                            shape, dtype, alg)
                        record({"kind": "rng", "x64": x64, "key": enc(k), "shape": list(shape),
                                "dtype": dtype, "algorithm": alg.name}, f, (k,), text=False)


def vmap_cases(x64):
    rng = np.random.default_rng(29)
    for b in [1, 3]:
        keys = rng.integers(0, 2**32, size=(b, 4), dtype=np.uint64).astype(np.uint32)
        keys[0] = [M, M, 0xFFFFFFF0, M]
        for alg in ALGS[:2]:
            for dtype, shape in [("uint32", ()), ("uint32", (3,)), ("uint8", (2, 3)),
                                 ("uint64", (3,))]:
                f = (lambda s, d, a: lambda k: lax.rng_bit_generator(k, s, d, a))(
                    shape, dtype, alg)
                for in_axes, ks in [(0, keys), (1, keys.T.copy())]:
                    ks = jnp.asarray(ks)
                    g = jax.vmap(f, in_axes=in_axes)
                    case = {"kind": "vmap", "x64": x64, "keys": enc(ks), "in_axes": in_axes,
                            "shape": list(shape), "dtype": dtype, "algorithm": alg.name}
                    with jax.disable_jit():
                        case["text_nojit"] = attempt(lambda: str(jax.make_jaxpr(g)(ks)))
                    record(case, g, (ks,))
    empty = jnp.zeros((0, 4), jnp.uint32)
    g = jax.vmap(lambda k: lax.rng_bit_generator(k, (3,)))
    record({"kind": "vmap", "x64": x64, "keys": enc(empty), "in_axes": 0, "shape": [3],
            "dtype": "uint32", "algorithm": "RNG_DEFAULT"}, g, (empty,))


SPECIAL_KEYS = {
    "rbg": [[M, M, M, M], [0x80000000, 1, 2, 0xFFFFFFFE]],
    "unsafe_rbg": [[M, M, M, M], [0x80000000, 1, 2, 0xFFFFFFFE]],
    "threefry4x32": [[M, M, M, M], [0x80000000, 1, 2, 0xFFFFFFFE]],
    "philox4x32": [[M, M], [0x80000000, 0xFFFFFFFE]],
    "philox2x32": [[M], [0x80000000]],
}


def impl_cases(x64):
    ints = [0, 1, -1, 42, 2**31 - 1, -2**31, 2**32 + 5, -2**40, 2**63 - 1]
    typed = [np.int8(-3), np.uint8(200), np.int16(-300), np.uint16(60000), np.int32(-7),
             np.uint32(4000000000), np.int64(-2**40), np.uint64(2**64 - 1), np.bool_(True),
             np.float32(1.5)]
    for name in IMPLS:
        impl = prng.prngs[name]
        for s in ints + typed:
            case = {"kind": "seed", "impl": name, "x64": x64}
            if isinstance(s, int):
                case["py"] = str(s)
                arr = attempt(lambda: jnp.asarray(np.int64(s)))
                case["api"] = attempt(lambda: enc(jax.random.key_data(
                    jax.random.key(s, impl=name))))
            else:
                arr = attempt(lambda: jnp.asarray(s))
            if isinstance(arr, dict):
                case["seed"] = arr
            else:
                case["seed"] = enc(arr)
                case["out"] = attempt(lambda: enc(impl.seed(arr)))
            CASES.append(case)
        keys = [key_data(jax.random.key(7, impl=name)), key_data(jax.random.key(-12345,
                                                                                 impl=name))]
        keys += [jnp.array(k, jnp.uint32) for k in SPECIAL_KEYS[name]]
        for k in keys:
            for shape in [(), (0,), (1,), (3,), (2, 3), (2, 0)]:
                CASES.append({"kind": "split", "impl": name, "x64": x64, "key": enc(k),
                              "shape": list(shape),
                              "out": attempt(lambda: enc(impl.split(k, shape)))})
            datas = [np.uint32(0), np.uint32(1), np.uint32(5), np.uint32(M),
                     np.uint32(123456789), np.int32(-1), np.int64(2**32 + 1)]
            for d in datas:
                d = jnp.asarray(d)
                CASES.append({"kind": "fold_in", "impl": name, "x64": x64, "key": enc(k),
                              "data": enc(d),
                              "out": attempt(lambda: enc(impl.fold_in(k, d)))})
            for bw in [8, 16, 32, 64]:
                for shape in [(), (0,), (3,), (2, 3), (7,), (100,)]:
                    CASES.append({"kind": "bits", "impl": name, "x64": x64, "key": enc(k),
                                  "bit_width": bw, "shape": list(shape),
                                  "out": attempt(lambda: enc(impl.random_bits(k, bw, shape)))})
        # jax.random's API on single keys (the same functions through the primitives).
        for seed in [0, 7]:
            key = jax.random.key(seed, impl=name)
            for fn, arg, f in [
                ("split", 2, lambda: key_data(jax.random.split(key, 2))),
                ("split", 3, lambda: key_data(jax.random.split(key, 3))),
                ("fold_in", 5, lambda: key_data(jax.random.fold_in(key, 5))),
                ("bits", [3], lambda: jax.random.bits(key, (3,))),
                ("bits", [2, 3], lambda: jax.random.bits(key, (2, 3))),
                ("uniform", [3], lambda: jax.random.uniform(key, (3,))),
            ]:
                CASES.append({"kind": "api", "impl": name, "x64": x64, "seed": seed, "fn": fn,
                              "arg": arg, "out": attempt(lambda: enc(f()))})
        # The primitives on key arrays: JAX maps the implementation with vmap.
        base = jax.random.key(3, impl=name)
        k3, k22 = jax.random.split(base, 3), jax.random.split(base, (2, 2))
        for keys in [k3, k22, jax.random.split(base, 0)]:
            for bw, shape in [(32, (2,)), (8, (3,)), (64, ())]:
                CASES.append({"kind": "batched", "impl": name, "x64": x64, "prim": "bits",
                              "keys": enc(key_data(keys)), "bit_width": bw, "shape": list(shape),
                              "out": attempt(lambda: enc(prng.random_bits(
                                  keys, bit_width=bw, shape=shape)))})
            CASES.append({"kind": "batched", "impl": name, "x64": x64, "prim": "split",
                          "keys": enc(key_data(keys)), "shape": [2],
                          "out": attempt(lambda: enc(key_data(prng.random_split(keys, (2,)))))})
        u = lambda *s: jnp.arange(int(np.prod(s)), dtype=jnp.uint32).reshape(s) * 7 + 1  # noqa
        for keys, msgs in [(k3, u(3)), (k3, jnp.uint32(5)), (base, u(3)), (base, u(2, 3)),
                           (jax.random.split(base, (2, 1)), u(1, 3)),
                           (jax.random.split(base, (1, 3)), u(2, 1)),
                           (k22, u(2, 1)), (k22, u(1, 2)), (k22, u(2, 2)),
                           (base, u(0)), (jax.random.split(base, 0), jnp.uint32(5)),
                           (jax.random.split(base, (3, 1)), u(3, 0))]:
            CASES.append({"kind": "batched", "impl": name, "x64": x64, "prim": "fold_in",
                          "keys": enc(key_data(keys)), "msgs": enc(msgs),
                          "out": attempt(lambda: enc(key_data(prng.random_fold_in(keys, msgs))))})


def main():
    assert jax.config.jax_threefry_partitionable
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        rng_cases(x64)
        vmap_cases(x64)
        impl_cases(x64)
    header = {"generator": "tools/gen_rbg_fixtures.py",
              "versions": {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                           "numpy": np.__version__},
              "notes": "XLA CPU's RngBitGenerator (RNG_DEFAULT is Philox) and JAX's key "
                       "implementations other than threefry2x32; see the docstring"}
    head = json.dumps(header)
    lines = [json.dumps(c, separators=(",", ":")) for c in CASES]
    sys.stdout.write(head[:-1] + ', "cases": [\n' + ",\n".join(lines) + "\n]}\n")


if __name__ == "__main__":
    main()
