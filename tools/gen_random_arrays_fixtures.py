#!/usr/bin/env python3
"""Generate the fixtures of the PRNG on arrays: `jax.random`'s array API and the PRNG
primitives of jax._src.random.prng on typed key arrays (JAX 0.10.2).

Usage:
    tools/.venv-jax/bin/python tools/gen_random_arrays_fixtures.py [--out-dir DIR]

Re-runs itself once per mode (x64 off, on) in a fresh subprocess (JAX_ENABLE_X64 is read at
import). Output (relative to --out-dir, default <repo>/tests/fixtures):
    random_arrays/api_x32.json, api_x64.json     jax.random functions on key arrays
    random_arrays/prims_x32.json, prims_x64.json the primitives bound directly (batched keys,
                                                 broadcasting fold_in, seeds of every int dtype)

Arrays are {"aval": "u32[2,3]", "hex": little-endian bytes (np.asarray(x).tobytes(), key arrays:
their key data)} and, for key arrays, "repr" (repr(x)). Inputs use the same form. A case is
{"fn" or "prim", inputs..., "out"} or {..., "error": {"kind", "message"}} (first line;
" for impl=PRNGImpl(...)" with its function addresses cut). Primitive cases also hold "eqn":
the equation's name and parameters as jax.make_jaxpr prints them ("random_bits[bit_width=8
shape=(3,)]"). "numpy" cases record what jax.numpy says to arithmetic on keys.
"""

import argparse
import os
import re
import sys
import warnings

from fixturelib import first_line, pin_xla_isa, run_children, write_fixture  # noqa: E402

pin_xla_isa()

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_random_arrays_fixtures.py"


def parent(args):
    children = []
    for x64 in (False, True):
        env = dict(os.environ, JAX_ENABLE_X64="1" if x64 else "0", JAX_PLATFORMS="cpu")
        cmd = [sys.executable, os.path.abspath(__file__), "--child",
               "--x64" if x64 else "--no-x64", "--out-dir", args.out_dir]
        children.append((f"x64={x64}", cmd, env))
    run_children(children, jobs=1)


def child(args):
    warnings.simplefilter("ignore")
    import jax
    import jax.numpy as jnp
    import numpy as np
    import ml_dtypes
    from jax._src.random import prng

    assert jax.config.jax_enable_x64 == args.x64
    assert jax.config.jax_threefry_partitionable
    fry = prng.prngs["threefry2x32"]
    suffix = "x64" if args.x64 else "x32"

    def aval(x):
        return jax.typeof(x).str_short(short_dtypes=True)

    def enc(x):
        if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            data = np.asarray(jax.random.key_data(x))
            return {"aval": aval(x), "hex": data.tobytes().hex(), "repr": repr(x)}
        return {"aval": aval(x), "hex": np.asarray(x).tobytes().hex()}

    def err(e):
        msg = first_line(e)
        msg = msg.split(" for impl=PRNGImpl(")[0]
        return {"kind": type(e).__name__, "message": msg}

    def run(case, f):
        try:
            case["out"] = enc(f())
        except Exception as e:  # noqa: BLE001 - recording JAX's refusals is the point
            case["error"] = err(e)
        return case

    def keys_of(shape, seed=0):
        k = jax.random.key(seed)
        return jax.random.split(k, shape) if shape else k

    def eqn(f, *xs):
        text = str(jax.make_jaxpr(f)(*xs))
        m = re.search(r"= (random_\w+(\[[^\]]*\])?)", text)
        return m.group(1) if m else None

    header = {
        "generator": GENERATOR,
        "versions": {"python": sys.version.split()[0], "jax": jax.__version__,
                     "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__},
        "library": "jax", "mode": {"x64": args.x64},
    }

    # --- the array API --------------------------------------------------------------------
    api = []
    for seed in ["0", "42", "-1", str(2**32 + 5), str(-(2**40) - 3), str(2**63 - 1),
                 str(2**63), str(-(2**63) - 1)]:
        api.append(run({"fn": "key", "seed": seed}, lambda: jax.random.key(int(seed))))
    for kshape in [[], [3], [2, 3]]:
        k = keys_of(tuple(kshape), 7)
        kin = enc(k)
        for num in [[2], [3], [2, 3], [0]]:
            api.append(run({"fn": "split", "key": kin, "shape": num},
                           lambda: jax.random.split(k, tuple(num))))
        for data in ["0", "7", str(2**32 - 1), "-1", str(2**32)]:
            api.append(run({"fn": "fold_in", "key": kin, "data": data},
                           lambda: jax.random.fold_in(k, int(data))))
        for shape, dtype in [([5], None), ([2, 3], "uint8"), ([4], "uint16"),
                             ([3], "uint64"), ([2], "int32"), ([], None)]:
            api.append(run({"fn": "bits", "key": kin, "shape": shape, "dtype": dtype},
                           lambda: jax.random.bits(k, tuple(shape),
                                                   None if dtype is None else jnp.dtype(dtype))))
        # Bounds whose product and sum round (XLA fuses the multiply and add of float16,
        # float32 and float64, not of bfloat16).
        for dtype, lo, hi in [("float32", "0.0", "1.0"), ("bfloat16", "-2.0", "3.0"),
                              ("float16", "0.0", "1.0"), ("float64", "-1.0", "1.0"),
                              ("int32", "0.0", "1.0"), ("float16", "-693.0214232569983",
                                                        "371.194119328328"),
                              ("float32", "-3.7", "11.1"), ("bfloat16", "-3.7", "11.1"),
                              ("float64", "-3.7", "11.1"),
                              # float32 first (a weak Python float), then bfloat16: -878.0,
                              # a tie, to -880 (one rounding would give -876).
                              ("bfloat16", "-877.9999900875047", "0.0")]:
            api.append(run({"fn": "uniform", "key": kin, "shape": [2, 3], "dtype": dtype,
                            "minval": lo, "maxval": hi},
                           lambda: jax.random.uniform(k, (2, 3), jnp.dtype(dtype),
                                                      float(lo), float(hi))))
        for dtype in ["float32", "bfloat16", "float64", "float16"]:
            api.append(run({"fn": "normal", "key": kin, "shape": [5], "dtype": dtype},
                           lambda: jax.random.normal(k, (5,), jnp.dtype(dtype))))
        for p in ["0.5", "0.1"]:
            api.append(run({"fn": "bernoulli", "key": kin, "shape": [6], "p": p},
                           lambda: jax.random.bernoulli(k, float(p), (6,))))
        for dtype, lo, hi in [("int32", "-5", "10"), ("uint8", "0", "200"), ("int64", "0", "7")]:
            api.append(run({"fn": "randint", "key": kin, "shape": [6], "dtype": dtype,
                            "minval": lo, "maxval": hi},
                           lambda: jax.random.randint(k, (6,), int(lo), int(hi),
                                                      jnp.dtype(dtype))))
        api.append(run({"fn": "key_data", "key": kin}, lambda: jax.random.key_data(k)))
    # fold_in with array data (any dtype, converted to uint32; a scalar only).
    k = jax.random.key(3)
    for arr in [np.array(-1, np.int32), np.array(200, np.uint8), np.array(3.7, np.float32),
                np.array(2**40 + 9, np.int64), np.array([1, 2], np.int32)]:
        d = jnp.asarray(arr)
        api.append(run({"fn": "fold_in_array", "key": enc(k), "data": enc(d)},
                       lambda: jax.random.fold_in(k, d)))
    # Raw (legacy) uint32 keys and what is not a key.
    for arr in [np.array([0, 42], np.uint32), np.array([[1, 2], [3, 4]], np.uint32),
                np.array([1, 2, 3], np.uint32), np.array([1.0, 2.0], np.float32),
                np.array(5, np.uint32)]:
        a = jnp.asarray(arr)
        ain = enc(a)
        api.append(run({"fn": "split", "key": ain, "shape": [2]},
                       lambda: jax.random.split(a, 2)))
        api.append(run({"fn": "fold_in", "key": ain, "data": "3"},
                       lambda: jax.random.fold_in(a, 3)))
        api.append(run({"fn": "bits", "key": ain, "shape": [3], "dtype": None},
                       lambda: jax.random.bits(a, (3,))))
        api.append(run({"fn": "key_data", "key": ain}, lambda: jax.random.key_data(a)))
        api.append(run({"fn": "wrap_key_data", "data": ain},
                       lambda: jax.random.wrap_key_data(a)))
    api.append(run({"fn": "wrap_key_data", "data": enc(jnp.zeros((2, 3, 2), jnp.uint32))},
                   lambda: jax.random.wrap_key_data(jnp.zeros((2, 3, 2), jnp.uint32))))
    write_fixture(os.path.join(args.out_dir, "random_arrays", f"api_{suffix}.json"),
                  dict(header, function="jax.random.*"), api)

    # --- the primitives -------------------------------------------------------------------
    prims = []
    seed_dtypes = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                   "bool", "float32"]
    for dt in seed_dtypes:
        vals = {"bool": [True, False], "float32": [1.5, -2.0]}.get(dt)
        if vals is None:
            info = np.iinfo(dt)
            vals = [0, 1, int(info.max), int(info.min)] + ([-1] if info.min < 0 else [])
        arr = np.array(vals, dtype=dt).reshape(1, -1)
        s = jnp.asarray(arr)
        case = {"prim": "random_seed", "operands": [enc(s)]}
        case["eqn"] = eqn(lambda s: prng.random_seed_p.bind(s, impl=fry), s)
        prims.append(run(case, lambda: prng.random_seed_p.bind(s, impl=fry)))
    for kshape, shape in [((), (3,)), ((2, 3), (2,)), ((2,), (2, 2)), ((3,), ()), ((2,), (0,))]:
        k = keys_of(kshape, 11)
        case = {"prim": "random_split", "operands": [enc(k)], "shape": list(shape)}
        case["eqn"] = eqn(lambda k: prng.random_split_p.bind(k, shape=shape), k)
        prims.append(run(case, lambda: prng.random_split_p.bind(k, shape=shape)))
    for kshape, width, shape in [((), 8, (3,)), ((2, 3), 32, (2,)), ((2,), 16, (2, 2)),
                                 ((3,), 64, (2,)), ((2, 2), 8, ()), ((), 7, (2,)),
                                 ((), 128, (2,))]:
        k = keys_of(kshape, 13)
        case = {"prim": "random_bits", "operands": [enc(k)], "bit_width": width,
                "shape": list(shape)}
        try:
            case["eqn"] = eqn(lambda k: prng.random_bits_p.bind(k, bit_width=width,
                                                                shape=shape), k)
        except Exception:  # noqa: BLE001 - staging refuses bad widths differently
            case["eqn"] = None
        prims.append(run(case, lambda: prng.random_bits_p.bind(k, bit_width=width,
                                                                shape=shape)))
    for kshape, msgs in [((), np.uint32(9)), ((2, 3), np.arange(6, dtype=np.uint32).reshape(2, 3)),
                         ((2, 3), np.array([[1, 2, 3]], np.uint32)),
                         ((2, 1), np.array([[5, 6, 7]], np.int32) * -1),
                         ((), np.array(3.7, np.float32)), ((2, 3), np.arange(3, dtype=np.uint32)),
                         ((2, 3), np.zeros((2, 2), np.uint32))]:
        k = keys_of(kshape, 17)
        m = jnp.asarray(msgs)
        case = {"prim": "random_fold_in", "operands": [enc(k), enc(m)]}
        try:
            case["eqn"] = eqn(lambda k, m: prng.random_fold_in_p.bind(k, m), k, m)
        except Exception:  # noqa: BLE001
            case["eqn"] = None

        def fold():
            # Staging first: the abstract rule's refusal, as bind's evaluation would hit an
            # internal assertion instead.
            jax.make_jaxpr(lambda k, m: prng.random_fold_in_p.bind(k, m))(k, m)
            return prng.random_fold_in_p.bind(k, m)
        prims.append(run(case, fold))
    for arr in [np.arange(12, dtype=np.uint32).reshape(2, 3, 2), np.array([1, 2, 3], np.uint32),
                np.array(4, np.uint32), np.array([1, 2], np.int32)]:
        a = jnp.asarray(arr)
        case = {"prim": "random_wrap", "operands": [enc(a)], "impl": "fry"}
        try:
            case["eqn"] = eqn(lambda a: prng.random_wrap(a, impl=fry), a)
        except Exception:  # noqa: BLE001
            case["eqn"] = None
        prims.append(run(case, lambda: prng.random_wrap(a, impl=fry)))
    for x in [keys_of((2, 3), 19), keys_of((), 19), jnp.zeros(2, jnp.uint32)]:
        case = {"prim": "random_unwrap", "operands": [enc(x)]}
        try:
            case["eqn"] = eqn(lambda x: prng.random_unwrap(x), x)
        except Exception:  # noqa: BLE001
            case["eqn"] = None
        prims.append(run(case, lambda: prng.random_unwrap(x)))
    write_fixture(os.path.join(args.out_dir, "random_arrays", f"prims_{suffix}.json"),
                  dict(header, function="jax._src.random.prng.random_*_p.bind"), prims)

    # --- arithmetic on keys (jax.numpy's refusals, for the numpy module) --------------------
    k = jax.random.key(0)
    numpy_cases = []
    for name, f in [("key + 1", lambda: k + 1), ("1 + key", lambda: 1 + k),
                    ("key + 1.0", lambda: k + 1.0), ("key + key", lambda: k + k),
                    ("key - key", lambda: k - k), ("key * key", lambda: k * k),
                    ("-key", lambda: -k), ("key < key", lambda: k < k),
                    ("key & key", lambda: k & k), ("jnp.sin(key)", lambda: jnp.sin(k)),
                    ("jnp.add(key, 1)", lambda: jnp.add(k, 1)),
                    ("key.astype(float32)", lambda: jnp.asarray(k, jnp.float32)),
                    ("key == key", lambda: k == k)]:
        numpy_cases.append(run({"expr": name}, f))
    write_fixture(os.path.join(args.out_dir, "random_arrays", f"numpy_refusals_{suffix}.json"),
                  dict(header, function="jax.numpy on key<fry> operands"), numpy_cases)
    print(f"x64={args.x64}: {len(api)} api, {len(prims)} primitive, "
          f"{len(numpy_cases)} numpy cases")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--x64", dest="x64", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-x64", dest="x64", action="store_false", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
    else:
        parent(args)


if __name__ == "__main__":
    main()
