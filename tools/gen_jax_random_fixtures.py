#!/usr/bin/env python3
"""Generate the jax.random fixtures (typed keys, threefry2x32) for the dtype-lattice Rust tests.

Usage:
    tools/gen_jax_random_fixtures.sh            (creates/uses tools/.venv-jax)
    tools/.venv-jax/bin/python tools/gen_jax_random_fixtures.py [--out-dir DIR]

The top-level invocation re-runs this script once per mode (x64 off, x64 on) in a fresh
subprocess with JAX_ENABLE_X64 / JAX_PLATFORMS=cpu set, because the flags are read when jax is
imported. JAX's defaults otherwise: jax_threefry_partitionable=True (asserted).

Output (relative to --out-dir, default <repo>/tests/fixtures):
    jax/random_x32.json, jax/random_x64.json    every op, errors included
    jax/random_promotion_x32.json, ..._x64.json what result_type / promote_types / jnp ops say
                                                about key<fry> operands

Case format (tools/FIXTURES.md, "jax.random"): {"op", inputs..., "out"} or {"op", inputs...,
"error": {"kind", "message"}}. Inputs mirror the CLI (`dtype-lattice random OP`): "seed"
(a Python int literal, as text), "key" (key data, two uint32), "shape", "data" (text),
"width", "dtype", "minval"/"maxval" (text), "p" (text). "out" is exactly the CLI's JSON:
keys {"dtype": "key<fry>", "shape", "data"} (key data flattened), values {"dtype", "shape",
"values"} plus "bits" (IEEE bit patterns as unsigned integers) for float dtypes. A "chain"
case starts from key(seed) and applies "steps": "split:SHAPE:INDEX" (split to SHAPE, take the
key at flat INDEX) or "fold_in:DATA". A "sample" case holds a large output only at "indices".
"""

import argparse
import json
import os
import subprocess
import sys
import warnings

from fixturelib import first_line, run_children, write_fixture

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_jax_random_fixtures.py"
MODES = (False, True)  # x64


def parent(args):
    children = []
    for x64 in MODES:
        env = dict(os.environ, JAX_ENABLE_X64="1" if x64 else "0", JAX_PLATFORMS="cpu")
        cmd = [sys.executable, os.path.abspath(__file__), "--child",
               "--x64" if x64 else "--no-x64", "--out-dir", args.out_dir]
        children.append((f"x64={x64}", cmd, env))
    run_children(children, jobs=2)


# ---------------------------------------------------------------------------
# Child process
# ---------------------------------------------------------------------------

def child(args):
    warnings.simplefilter("ignore")
    import jax
    import jax.numpy as jnp
    import numpy as np
    import ml_dtypes
    from jax import random as jr

    assert jax.config.jax_threefry_partitionable, "fixtures assume the default (partitionable)"
    assert jax.config.jax_enable_x64 == args.x64

    versions = {"jax": jax.__version__, "numpy": np.__version__,
                "ml_dtypes": ml_dtypes.__version__,
                "python": ".".join(map(str, sys.version_info[:3]))}
    mode = "x64" if args.x64 else "x32"

    def key_json(k):
        data = np.asarray(jr.key_data(k))
        return {"dtype": str(k.dtype), "shape": list(k.shape),
                "data": [int(x) for x in data.ravel()]}

    def values_json(a):
        a = np.asarray(a)
        out = {"dtype": str(a.dtype), "shape": list(a.shape)}
        flat = a.ravel()
        if a.dtype == np.bool_:
            out["values"] = [bool(x) for x in flat]
        elif a.dtype.kind in "ui":
            out["values"] = [int(x) for x in flat]
        else:
            uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
            out["values"] = [float(x) for x in flat]
            out["bits"] = [int(x) for x in flat.view(uint)]
        return out

    def wrap(data):
        return jr.wrap_key_data(jnp.asarray(np.array(data, dtype=np.uint32)))

    def lit(text):
        return eval(text, {"__builtins__": {}}, {"inf": float("inf"), "nan": float("nan")})

    cases = []

    def record(case, fn):
        try:
            case["out"] = fn()
        except Exception as e:  # noqa: BLE001 - the fixture records JAX's exception
            message = first_line(e)
            # JAX prints the PRNGImpl with function addresses: keep what is stable.
            message = message.split(" for impl=PRNGImpl(")[0]
            case["error"] = {"kind": type(e).__name__, "message": message}
        cases.append(case)

    # -- keys from seeds ------------------------------------------------------------------
    seeds = ["0", "1", "42", "-1", "-2", "2147483647", "-2147483648", "2147483648",
             "4294967295", "4294967296", "-4294967297", "9223372036854775807",
             "-9223372036854775808", "1311768467463790320", "18446744073709551615",
             "18446744073709551616", "123456789012345678901234567890"]
    for s in seeds:
        record({"op": "key", "seed": s}, lambda: key_json(jr.key(lit(s))))

    base_keys = [[0, 0], [0, 42], [4294967295, 4294967295], [305419896, 2596069104],
                 [1832780943, 270669613]]

    # -- split, fold_in ---------------------------------------------------------------------
    for kd in base_keys:
        for shape in [[2], [3], [1], [0], [5], [2, 3], [3, 1, 2], []]:
            record({"op": "split", "key": kd, "shape": shape},
                   lambda: key_json(jr.split(wrap(kd), tuple(shape))))
        for d in ["0", "1", "7", "-1", "4294967295", "2147483648", "123456"]:
            record({"op": "fold_in", "key": kd, "data": d},
                   lambda: key_json(jr.fold_in(wrap(kd), lit(d))))
    record({"op": "fold_in", "key": [0, 42], "data": "4294967296"},
           lambda: key_json(jr.fold_in(wrap([0, 42]), 4294967296)))
    record({"op": "split", "key": [0, 42], "shape": [-1]},
           lambda: key_json(jr.split(wrap([0, 42]), (-1,))))

    # -- key_data / wrap_key_data -----------------------------------------------------------
    for kd in [[1, 2], [1, 2, 3], [7], []]:
        record({"op": "wrap_key_data", "key": kd}, lambda: key_json(wrap(kd)))

    # -- bits -------------------------------------------------------------------------------
    for kd in base_keys:
        for width in [8, 16, 32, 64]:
            for shape in [[], [1], [7], [2, 3], [0], [33]]:
                dt = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
                record({"op": "bits", "key": kd, "shape": shape, "width": width},
                       lambda: values_json(jr.bits(wrap(kd), tuple(shape), dt)))

    # -- uniform, normal --------------------------------------------------------------------
    for kd in base_keys:
        for dt in ["float16", "bfloat16", "float32", "float64"]:
            for shape in [[], [9], [2, 4]]:
                record({"op": "uniform", "key": kd, "shape": shape, "dtype": dt},
                       lambda: values_json(jr.uniform(wrap(kd), tuple(shape), dt)))
                record({"op": "normal", "key": kd, "shape": shape, "dtype": dt},
                       lambda: values_json(jr.normal(wrap(kd), tuple(shape), dt)))
            for lo, hi in [("-3.5", "2.25"), ("10.0", "1000.0"), ("-1e-3", "1e-3"),
                           ("2.0", "2.0"), ("5.0", "-5.0"), ("0", "7")]:
                record({"op": "uniform", "key": kd, "shape": [6], "dtype": dt,
                        "minval": lo, "maxval": hi},
                       lambda: values_json(jr.uniform(wrap(kd), (6,), dt, lit(lo), lit(hi))))
    record({"op": "normal", "key": [0, 42], "shape": [4096], "dtype": "float32"},
           lambda: values_json(jr.normal(wrap([0, 42]), (4096,), "float32")))
    if args.x64:
        record({"op": "normal", "key": [0, 42], "shape": [4096], "dtype": "float64"},
               lambda: values_json(jr.normal(wrap([0, 42]), (4096,), "float64")))
    for dt in ["int32", "uint8", "bool", "complex64"]:
        record({"op": "uniform", "key": [0, 42], "shape": [3], "dtype": dt},
               lambda: values_json(jr.uniform(wrap([0, 42]), (3,), dt)))
        if dt != "complex64":  # complex normals are outside this crate's scope
            record({"op": "normal", "key": [0, 42], "shape": [3], "dtype": dt},
                   lambda: values_json(jr.normal(wrap([0, 42]), (3,), dt)))

    # -- randint ----------------------------------------------------------------------------
    ranges = [("0", "10"), ("-5", "7"), ("0", "1"), ("3", "3"), ("9", "2"), ("0", "256"),
              ("-128", "128"), ("0", "65536"), ("-2147483648", "2147483647"), ("0", "1000000007"),
              ("0", "4294967296"), ("-9223372036854775808", "9223372036854775807"),
              ("-1000", "100000")]
    for kd in base_keys[:3]:
        for dt in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]:
            for lo, hi in ranges:
                record({"op": "randint", "key": kd, "shape": [8], "dtype": dt,
                        "minval": lo, "maxval": hi},
                       lambda: values_json(jr.randint(wrap(kd), (8,), lit(lo), lit(hi), dt)))
    for dt in ["float32", "bool", "int4"]:
        record({"op": "randint", "key": [0, 42], "shape": [3], "dtype": dt,
                "minval": "0", "maxval": "10"},
               lambda: values_json(jr.randint(wrap([0, 42]), (3,), 0, 10, dt)))

    # -- bernoulli --------------------------------------------------------------------------
    for kd in base_keys:
        for p in ["0.5", "0.0", "1.0", "0.1", "0.999", "1.5", "-0.5", "nan", "1e-08"]:
            record({"op": "bernoulli", "key": kd, "shape": [16], "p": p},
                   lambda: values_json(jr.bernoulli(wrap(kd), lit(p), (16,))))
    record({"op": "bernoulli", "key": [0, 42], "shape": [], "p": "0.5"},
           lambda: values_json(jr.bernoulli(wrap([0, 42]), 0.5, ())))

    # -- shapes that do not fit -------------------------------------------------------------
    for shape in [[4294967296, 4294967296, 2], [-1], [3, -2]]:
        record({"op": "bits", "key": [0, 42], "shape": shape, "width": 32},
               lambda: values_json(jr.bits(wrap([0, 42]), tuple(shape), np.uint32)))

    # -- chained derivations ----------------------------------------------------------------
    def run_chain(seed, steps):
        k = jr.key(lit(seed))
        for step in steps:
            kind, *rest = step.split(":")
            if kind == "split":
                shape = tuple(int(x) for x in rest[0].split(",")) if rest[0] else ()
                k = jr.split(k, shape).ravel()[int(rest[1])]
            else:
                k = jr.fold_in(k, lit(rest[0]))
        return k

    chains = [
        ("0", ["split:2:0"]),
        ("0", ["split:2:1", "split:2:1", "split:2:1"]),
        ("42", ["fold_in:1", "fold_in:2", "split:3:2"]),
        ("7", ["split:4,5:13", "fold_in:99", "split:2:0", "fold_in:4294967295"]),
        ("-1", ["fold_in:0", "split:10:9"]),
        ("123456789", ["split:2:1"] * 10),
    ]
    for seed, steps in chains:
        record({"op": "chain", "seed": seed, "steps": steps},
               lambda: key_json(run_chain(seed, steps)))
        k = run_chain(seed, steps)
        kd = [int(x) for x in np.asarray(jr.key_data(k))]
        record({"op": "uniform", "key": kd, "shape": [5], "dtype": "float32"},
               lambda: values_json(jr.uniform(k, (5,), "float32")))

    # -- a 2^20-value bits array, sampled at its ends and middle ----------------------------
    n = 1 << 20
    big = np.asarray(jr.bits(wrap([0, 42]), (n,), np.uint32))
    idx = list(range(0, 8)) + list(range(n // 2 - 4, n // 2 + 4)) + list(range(n - 8, n))
    cases.append({"op": "sample", "key": [0, 42], "shape": [n], "width": 32,
                  "indices": idx, "values": [int(big[i]) for i in idx],
                  "xor_all": int(np.bitwise_xor.reduce(big))})

    header = {"generator": GENERATOR, "versions": versions, "library": "jax.random",
              "mode": {"x64": args.x64},
              "config": {"jax_threefry_partitionable": True, "jax_default_prng_impl": "threefry2x32"}}
    path = write_fixture(os.path.join(args.out_dir, "jax", f"random_{mode}.json"), header, cases)
    print(f"wrote {path}: {len(cases)} cases")

    # -- key dtypes in promotion ------------------------------------------------------------
    key = jr.key(0)
    kd = key.dtype
    rbg = jr.key(0, impl="rbg")
    operands = {
        "key<fry>": key, "key<rbg>": rbg, "int32": jnp.zeros((2,), jnp.int32),
        "float32": jnp.zeros((2,), jnp.float32), "uint32": jnp.zeros((2,), jnp.uint32),
        "bool": jnp.zeros((2,), jnp.bool_), "int": 1, "float": 1.0,
    }
    pcases = []

    def precord(function, names, fn):
        case = {"function": function, "operands": names}
        try:
            r = fn()
            if isinstance(r, tuple):
                case["dtype"], case["weak_type"] = str(r[0]), bool(r[1])
            else:
                case["dtype"] = str(r.dtype) if hasattr(r, "dtype") else str(r)
        except Exception as e:  # noqa: BLE001
            case["error"] = {"kind": type(e).__name__, "message": first_line(e)}
        pcases.append(case)

    pairs = [("key<fry>", "key<fry>"), ("key<fry>", "int32"), ("int32", "key<fry>"),
             ("key<fry>", "float32"), ("key<fry>", "uint32"), ("key<fry>", "bool"),
             ("key<fry>", "int"), ("key<fry>", "float"), ("key<fry>", "key<rbg>"),
             ("key<rbg>", "key<rbg>"), ("float", "key<fry>")]
    ops = ["add", "subtract", "multiply", "true_divide", "floor_divide", "power", "equal",
           "less", "logical_and", "bitwise_and"]
    for a, b in pairs:
        x, y = operands[a], operands[b]
        precord("result_type", [a, b],
                lambda: jax.dtypes.result_type(x, y, return_weak_type_flag=True))
        for op in ops:
            fn = getattr(jnp, op)
            precord(op, [a, b], lambda: jax.eval_shape(lambda: fn(x, y)))
    precord("result_type", ["key<fry>"], lambda: jax.dtypes.result_type(key, return_weak_type_flag=True))
    precord("promote_types", ["key<fry>", "int32"], lambda: jnp.promote_types(kd, jnp.int32))
    precord("promote_types", ["key<fry>", "key<fry>"], lambda: jnp.promote_types(kd, kd))
    issub = []
    for name, dt in [("key<fry>", kd), ("key<rbg>", rbg.dtype), ("int32", jnp.int32),
                     ("uint8", jnp.uint8), ("float32", jnp.float32), ("bfloat16", jnp.bfloat16),
                     ("complex64", jnp.complex64), ("bool", jnp.bool_)]:
        for cname, c in [("extended", jax.dtypes.extended), ("prng_key", jax.dtypes.prng_key),
                         ("number", np.number), ("integer", np.integer),
                         ("signedinteger", np.signedinteger), ("unsignedinteger", np.unsignedinteger),
                         ("inexact", np.inexact), ("floating", np.floating),
                         ("complexfloating", np.complexfloating), ("generic", np.generic)]:
            issub.append({"dtype": name, "class": cname, "issubdtype": bool(jnp.issubdtype(dt, c))})
    header = {"generator": GENERATOR, "versions": versions, "library": "jax",
              "mode": {"x64": args.x64},
              "notes": {"operands": "key<fry>: jax.random.key(0); key<rbg>: jax.random.key(0, impl='rbg'); "
                        "DTYPE: jnp.zeros((2,), DTYPE); int/float: the Python values 1, 1.0",
                        "functions": "result_type: jax.dtypes.result_type(a, b, return_weak_type_flag=True); "
                        "promote_types: jnp.promote_types(a.dtype, b.dtype); an op name: "
                        "jax.eval_shape(lambda: jnp.OP(a, b))"},
              "issubdtype": issub}
    path = write_fixture(os.path.join(args.out_dir, "jax", f"random_promotion_{mode}.json"),
                         header, pcases)
    print(f"wrote {path}: {len(pcases)} cases")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--x64", action=argparse.BooleanOptionalAction, default=False,
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.out_dir = os.path.abspath(args.out_dir)
    if args.child:
        child(args)
    else:
        parent(args)


if __name__ == "__main__":
    main()
