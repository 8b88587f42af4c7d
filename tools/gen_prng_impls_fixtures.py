#!/usr/bin/env python3
"""Generate the fixtures of JAX 0.10.2's PRNG implementations (JEP 9263, pluggable PRNGs):
every built-in implementation (`threefry2x32`, `rbg`, `unsafe_rbg`, `threefry4x32`,
`philox2x32`, `philox4x32`) through `jax.random`'s key functions and its first samplers, eagerly,
under `jax.jit`, under `jax.vmap` over a batch of keys, and as printed jaxprs.

Usage:
    tools/.venv-jax/bin/python tools/gen_prng_impls_fixtures.py [--out-dir DIR]

Re-runs itself once per mode (x64 off, on) in a fresh subprocess. Output (relative to
--out-dir, default <repo>/tests/fixtures):
    random_arrays/impls_x32.json, impls_x64.json

Arrays are encoded as in gen_random_arrays_fixtures.py: {"aval": "u32[2,3]", "hex":
little-endian bytes (key arrays: their key data), "repr" for key arrays}. A case is {"impl",
"fn", its arguments, "how": "eager" | "jit" | "vmap", "out"} or {..., "error": {"kind",
"message"}}; "vmap" cases map the function over "keys" (a batch of 3 keys). "text" cases hold
`str(jax.make_jaxpr(f)(seed))` of a program from an int32/int64 seed to samples ("program"
names it) and its "out", for the jaxpr reader.
"""

import argparse
import os
import sys
import warnings

from fixturelib import first_line, pin_xla_isa, run_children, write_fixture  # noqa: E402

pin_xla_isa()

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_prng_impls_fixtures.py"
IMPLS = ["threefry2x32", "rbg", "unsafe_rbg", "threefry4x32", "philox2x32", "philox4x32"]


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

    assert jax.config.jax_enable_x64 == args.x64
    suffix = "x64" if args.x64 else "x32"

    def aval(x):
        return jax.typeof(x).str_short(short_dtypes=True)

    def enc(x):
        if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            data = np.asarray(jax.random.key_data(x))
            return {"aval": aval(x), "hex": data.tobytes().hex(), "repr": repr(x)}
        return {"aval": aval(x), "hex": np.asarray(x).tobytes().hex()}

    def err(e):
        msg = first_line(e).split(" for impl=PRNGImpl(")[0]
        return {"kind": type(e).__name__, "message": msg}

    cases = []

    def record(case, f, *xs):
        """The case eagerly, under jit, and (for a key argument) under vmap over 3 keys."""
        for how in ["eager", "jit"]:
            c = dict(case, how=how)
            try:
                c["out"] = enc(f(*xs) if how == "eager" else jax.jit(f)(*xs))
            except Exception as e:  # noqa: BLE001 - recording JAX's refusals is the point
                c["error"] = err(e)
            cases.append(c)

    def record_vmap(case, f, keys):
        c = dict(case, how="vmap", keys=enc(keys))
        try:
            c["out"] = enc(jax.vmap(f)(keys))
        except Exception as e:  # noqa: BLE001
            c["error"] = err(e)
        cases.append(c)

    f32 = jnp.float32

    def samplers(k, kin):
        """Every sampler once on key `k` (the user-defined implementation's test: JAX's
        philox4x32). "args": Python floats and ints (weak), or lists (float32 arrays)."""
        def arg(v):
            return jnp.asarray(v, f32) if isinstance(v, list) else v
        calls = [
            ("exponential", [], {}), ("cauchy", [], {}), ("laplace", [], {}),
            ("logistic", [], {}), ("gumbel", [], {}), ("maxwell", [], {}),
            ("rademacher", [], {}), ("normal", [], {}),
            ("pareto", [2.0], {}), ("rayleigh", [1.5], {}), ("wald", [1.5], {}),
            ("lognormal", [0.5], {}), ("weibull_min", [1.0, 2.0], {}),
            ("double_sided_maxwell", [0.0, 1.0], {}), ("triangular", [0.0, 0.5, 1.0], {}),
            ("truncated_normal", [-1.0, 1.0], {}), ("geometric", [0.3], {}),
            ("bernoulli", [0.3], {}), ("categorical", [[0.1, 0.5, 0.2, 0.2]], {}),
            ("gamma", [2.0], {}), ("loggamma", [0.5], {}), ("beta", [2.0, 3.0], {}),
            ("chisquare", [3.0], {}), ("f", [3.0, 4.0], {}), ("t", [3.0], {}),
            ("generalized_normal", [1.5], {}), ("poisson", [3.0], {}),
            ("binomial", [10.0, 0.3], {}),
        ]
        for name, args, kw in calls:
            f = getattr(jax.random, name)
            c = {"impl": "philox4x32", "fn": "sampler", "sampler": name, "args": args,
                 "shape": [4], "key": kin, "how": "eager"}
            try:
                c["out"] = enc(f(k, *[arg(a) for a in args], shape=(4,)))
            except Exception as e:  # noqa: BLE001
                c["error"] = err(e)
            cases.append(c)
        others = [
            ("dirichlet", lambda: jax.random.dirichlet(k, jnp.asarray([1.0, 2.0, 3.0], f32),
                                                       (2,))),
            ("ball", lambda: jax.random.ball(k, 3, 2.0, (2,))),
            ("multinomial", lambda: jax.random.multinomial(
                k, 10.0, jnp.asarray([0.2, 0.3, 0.5], f32), shape=(2, 3))),
            ("choice", lambda: jax.random.choice(k, 10, (3,), replace=False)),
            ("choice_p", lambda: jax.random.choice(
                k, 5, (4,), p=jnp.asarray([0.1, 0.2, 0.3, 0.2, 0.2], f32))),
            ("permutation", lambda: jax.random.permutation(k, 6)),
        ]
        for name, f in others:
            c = {"impl": "philox4x32", "fn": "sampler", "sampler": name, "key": kin,
                 "how": "eager"}
            try:
                c["out"] = enc(f())
            except Exception as e:  # noqa: BLE001
                c["error"] = err(e)
            cases.append(c)

    seeds = ["0", "42", "-1", str(2**32 + 5), str(2**63 - 1)]
    for impl in IMPLS:
        for seed in seeds:
            c = {"impl": impl, "fn": "key", "seed": seed, "how": "eager"}
            try:
                c["out"] = enc(jax.random.key(int(seed), impl=impl))
            except Exception as e:  # noqa: BLE001
                c["error"] = err(e)
            cases.append(c)
        k = jax.random.key(7, impl=impl)
        kin = enc(k)
        keys = jax.random.split(jax.random.key(11, impl=impl), 3)
        for num in [[2], [3], [2, 3], [0]]:
            f = lambda k, num=tuple(num): jax.random.split(k, num)  # noqa: E731
            record({"impl": impl, "fn": "split", "key": kin, "shape": num}, f, k)
        record_vmap({"impl": impl, "fn": "split", "shape": [2]},
                    lambda k: jax.random.split(k, 2), keys)
        for data in ["0", "7", str(2**32 - 1)]:
            f = lambda k, d=int(data): jax.random.fold_in(k, d)  # noqa: E731
            record({"impl": impl, "fn": "fold_in", "key": kin, "data": data}, f, k)
        record_vmap({"impl": impl, "fn": "fold_in", "data": "5"},
                    lambda k: jax.random.fold_in(k, 5), keys)
        for shape, dtype in [([5], None), ([2, 3], "uint8"), ([4], "uint16"), ([3], "uint32"),
                             ([3], "uint64"), ([], None), ([0], None), ([7], "uint32")]:
            f = lambda k, s=tuple(shape), d=dtype: jax.random.bits(  # noqa: E731
                k, s, None if d is None else jnp.dtype(d))
            record({"impl": impl, "fn": "bits", "key": kin, "shape": shape, "dtype": dtype}, f, k)
        record_vmap({"impl": impl, "fn": "bits", "shape": [4], "dtype": None},
                    lambda k: jax.random.bits(k, (4,)), keys)
        for dtype, lo, hi in [("float32", "0.0", "1.0"), ("bfloat16", "-2.0", "3.0"),
                              ("float16", "0.0", "1.0"), ("float64", "-3.7", "11.1")]:
            f = lambda k, d=dtype, lo=float(lo), hi=float(hi): jax.random.uniform(  # noqa: E731
                k, (2, 3), jnp.dtype(d), lo, hi)
            record({"impl": impl, "fn": "uniform", "key": kin, "shape": [2, 3], "dtype": dtype,
                    "minval": lo, "maxval": hi}, f, k)
        record_vmap({"impl": impl, "fn": "uniform", "shape": [3], "dtype": "float32",
                     "minval": "0.0", "maxval": "1.0"},
                    lambda k: jax.random.uniform(k, (3,), jnp.float32), keys)
        for dtype in ["float32", "float64", "bfloat16"]:
            f = lambda k, d=dtype: jax.random.normal(k, (5,), jnp.dtype(d))  # noqa: E731
            record({"impl": impl, "fn": "normal", "key": kin, "shape": [5], "dtype": dtype}, f, k)
        f = lambda k: jax.random.bernoulli(k, 0.3, (6,))  # noqa: E731
        record({"impl": impl, "fn": "bernoulli", "key": kin, "shape": [6], "p": "0.3"}, f, k)
        for dtype, lo, hi in [("int32", "-5", "10"), ("uint8", "0", "200"), ("int64", "0", "7")]:
            f = lambda k, d=dtype, lo=int(lo), hi=int(hi): jax.random.randint(  # noqa: E731
                k, (6,), lo, hi, jnp.dtype(d))
            record({"impl": impl, "fn": "randint", "key": kin, "shape": [6], "dtype": dtype,
                    "minval": lo, "maxval": hi}, f, k)
        if impl == "philox4x32":
            samplers(k, kin)
        # Programs from a seed, as JAX prints them, for the jaxpr reader.
        seed = jnp.asarray(3, jnp.int64 if args.x64 else jnp.int32)
        programs = {
            "key_split_bits": lambda s: jax.random.bits(
                jax.random.split(jax.random.key(s, impl=impl), 2)[1], (4,)),
            "uniform_normal": lambda s: (
                jax.random.uniform(jax.random.key(s, impl=impl), (3,)),
                jax.random.normal(jax.random.fold_in(jax.random.key(s, impl=impl), 9), (2,))),
            "vmap_bits": lambda s: jax.vmap(lambda k: jax.random.bits(k, (2,)))(
                jax.random.split(jax.random.key(s, impl=impl), 3)),
        }
        for name, f in programs.items():
            c = {"impl": impl, "fn": "text", "program": name, "seed": enc(seed)}
            try:
                c["text"] = str(jax.make_jaxpr(f)(seed))
                out = f(seed)
                c["outs"] = [enc(o) for o in (out if isinstance(out, tuple) else (out,))]
            except Exception as e:  # noqa: BLE001
                c["error"] = err(e)
            cases.append(c)

    header = {
        "generator": GENERATOR,
        "versions": {"python": sys.version.split()[0], "jax": jax.__version__,
                     "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__},
        "library": "jax", "mode": {"x64": args.x64},
    }
    write_fixture(os.path.join(args.out_dir, "random_arrays", f"impls_{suffix}.json"), header,
                  cases)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--x64", action=argparse.BooleanOptionalAction, default=False,
                   help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
    else:
        parent(args)


if __name__ == "__main__":
    main()
