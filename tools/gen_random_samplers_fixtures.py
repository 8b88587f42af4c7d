#!/usr/bin/env python3
"""Generate the fixtures of jax.random's samplers, part 1 (JAX 0.10.2): the transforms of
uniform and normal draws and the discrete samplers, for every key implementation JAX ships
(threefry2x32, rbg, unsafe_rbg).

Samplers: bits, uniform (Python-float and array bounds), normal, exponential, cauchy, gumbel
(modes low, high, highest), laplace, logistic, maxwell, rademacher, pareto, rayleigh, wald,
lognormal, geometric, weibull_min, double_sided_maxwell, triangular, truncated_normal,
bernoulli (array p, shape=None, modes low and high), categorical (axis, shape, replace,
mode), choice (ints and arrays, with and without replacement, with p, axis), permutation
(ints and arrays, axis, independent). Each over the float dtypes JAX allows (float16,
bfloat16, float32; float64 with x64), the shapes (), (0,), (3,), (2, 3), scalar and array
parameters (broadcasting), shape=None, and JAX's refusals.

Usage:
    tools/.venv-jax/bin/python tools/gen_random_samplers_fixtures.py [--out-dir DIR]

Re-runs itself once per mode (x64 off, on) in a fresh subprocess (JAX_ENABLE_X64 is read at
import). Output (relative to --out-dir, default <repo>/tests/fixtures):
    random_arrays/samplers_x32.json, samplers_x64.json

Each case is a described call that crates/dtype-lattice-array/tests/it/random_samplers.rs
makes through `dtype_lattice_array::random`:

    {"name",                       # unique, readable
     "fn",                         # the jax.random function (Rust: random::<fn>, see below)
     "impl",                       # the key's implementation
     "x64": bool,
     "key": array,                 # the key (key<fry>, key<rbg>, key<urbg>; or raw uint32 data,
                                   # or a batch of keys for the refusal)
     "kw": {...},                  # the call's parameters (below)
     "args": [array...],           # the array parameters ({"arg": i} in kw)
     "eager": [array...] | {"error": {"kind", "message"}},  # outside any transformation
     "jit": ...,                   # jax.jit(lambda key, *args: f(...))(key, *args)
     "vmap": ...,                  # jax.vmap(lambda key: f(...))(keys), keys = "keys"
     "keys": array,                # jax.random.split(key, 2)
     "text": str,                  # (some cases) str(jax.make_jaxpr(that jitted lambda)(key, *args))
     "consts": [array...],         # that closed jaxpr's constants
     "grad": [array...],           # (some cases) jax.grad(lambda *a: jnp.sum(f(key, *a) * w),
                                   # argnums=all)(*args), w = "weights"
     "weights": array}

Arrays are {"dtype", "shape", "hex"} (gen_jaxpr_fixtures.enc: little-endian element bytes; key
arrays: their uint32 key data). kw values: a parameter is {"float": v} (a Python float),
{"int": v} (a Python int), {"arg": i} (args[i]) or null (JAX's default); "shape" a list or
null; "dtype" a dtype name or null (JAX's default); "mode", "axis", "replace",
"independent" as JAX takes them. Errors keep the first line of the message.
"""

import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixturelib import pin_xla_isa, run_children, write_fixture  # noqa: E402

pin_xla_isa()

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_random_samplers_fixtures.py"
IMPLS = ["threefry2x32", "rbg", "unsafe_rbg"]
SHAPES = [[], [0], [3], [2, 3]]


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
    import ml_dtypes
    import numpy as np
    from jax import random as R

    from gen_jaxpr_fixtures import attempt, enc, leaves

    assert jax.config.jax_enable_x64 == args.x64
    x64 = args.x64
    suffix = "x64" if x64 else "x32"
    float_dtypes = (["float64"] if x64 else []) + ["float32", "float16", "bfloat16"]

    def param(kw, name, a):
        v = kw.get(name)
        if isinstance(v, dict):
            if "arg" in v:
                return a[v["arg"]]
            if "float" in v:
                return float(v["float"])
            if "int" in v:
                return int(v["int"])
        return v

    def call(fn, key, kw, a):
        """The described call; `a` are the array arguments (traced or not)."""
        shape = None if kw.get("shape") is None else tuple(kw["shape"])
        dt = kw.get("dtype")
        dtype = None if dt is None else jnp.dtype(dt)
        p = lambda name: param(kw, name, a)  # noqa: E731
        simple = {"exponential": R.exponential, "cauchy": R.cauchy, "laplace": R.laplace,
                  "logistic": R.logistic, "maxwell": R.maxwell, "normal": R.normal,
                  "rademacher": R.rademacher}
        if fn in simple:
            return simple[fn](key, shape, dtype)
        if fn == "bits":
            return R.bits(key, shape, dtype)
        if fn == "uniform":
            return R.uniform(key, shape, dtype, p("minval"), p("maxval"))
        if fn == "gumbel":
            return R.gumbel(key, shape, dtype, mode=kw.get("mode"))
        one = {"pareto": (R.pareto, "b"), "rayleigh": (R.rayleigh, "scale"),
               "wald": (R.wald, "mean"), "lognormal": (R.lognormal, "sigma"),
               "geometric": (R.geometric, "p")}
        if fn in one:
            f, name = one[fn]
            return f(key, p(name), shape, dtype)
        if fn == "weibull_min":
            return R.weibull_min(key, p("scale"), p("concentration"), shape, dtype)
        if fn == "double_sided_maxwell":
            return R.double_sided_maxwell(key, p("loc"), p("scale"), shape, dtype)
        if fn == "triangular":
            return R.triangular(key, p("left"), p("mode"), p("right"), shape, dtype)
        if fn == "truncated_normal":
            return R.truncated_normal(key, p("lower"), p("upper"), shape, dtype)
        if fn == "bernoulli":
            return R.bernoulli(key, p("p"), shape, kw.get("mode", "low"))
        if fn == "categorical":
            return R.categorical(key, p("logits"), kw.get("axis", -1), shape,
                                 kw.get("replace", True), kw.get("mode"))
        if fn == "choice":
            return R.choice(key, p("a"), shape, kw.get("replace", True), p("p"),
                            kw.get("axis", 0), kw.get("mode"))
        if fn == "permutation":
            return R.permutation(key, p("x"), kw.get("axis", 0), kw.get("independent", False))
        raise ValueError(fn)

    cases = []
    names = set()
    counter = [0]

    def add(name, fn, kw, args=(), impl="threefry2x32", key=None, text=False, grad=False,
            vmap=True):
        assert name not in names, name
        names.add(name)
        counter[0] += 1
        if key is None:
            key = R.key(counter[0], impl=impl)
        args = [jnp.asarray(x) for x in args]
        case = {"name": name, "fn": fn, "impl": impl, "x64": x64, "key": enc(key), "kw": kw,
                "args": [enc(x) for x in args]}
        case["eager"] = attempt(lambda: leaves(call(fn, key, kw, args)))
        jitted = jax.jit(lambda k, *xs: call(fn, k, kw, xs))
        case["jit"] = attempt(lambda: leaves(jitted(key, *args)))
        if vmap and key.ndim == 0 and jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
            keys = R.split(key, 2)
            case["keys"] = enc(keys)
            case["vmap"] = attempt(lambda: leaves(jax.vmap(lambda k: call(fn, k, kw, args))(keys)))
        if text:
            closed = jax.make_jaxpr(lambda k, *xs: call(fn, k, kw, xs))(key, *args)
            case["text"] = str(closed)
            case["consts"] = [enc(c) for c in closed.consts]
        if grad:
            out = call(fn, key, kw, args)
            rng = np.random.default_rng(len(cases))
            w = jnp.asarray(rng.uniform(-1, 1, out.shape).astype(out.dtype))
            case["weights"] = enc(w)

            def loss(*xs):
                return jnp.sum(call(fn, key, kw, xs) * w)
            argnums = tuple(range(len(args)))
            case["grad"] = attempt(lambda: leaves(jax.grad(loss, argnums)(*args)))
        cases.append(case)

    F = lambda v: {"float": v}  # noqa: E731
    A = lambda i: {"arg": i}  # noqa: E731
    I = lambda v: {"int": v}  # noqa: E731

    def sh(s):
        return "x".join(map(str, s)) if s else "scalar"

    def np_(values, dtype):
        return np.asarray(values, dtype=ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)

    # --- every implementation: values --------------------------------------------------------
    for impl in IMPLS:
        tf = impl == "threefry2x32"
        for dt in ["uint8", "uint16", "uint32", "uint64", None]:
            for s in SHAPES:
                add(f"bits_{impl}_{dt}_{sh(s)}", "bits", {"shape": s, "dtype": dt}, impl=impl)
        for fn in ["exponential", "cauchy", "laplace", "logistic", "maxwell", "normal"]:
            for dt in float_dtypes:
                for s in SHAPES:
                    add(f"{fn}_{impl}_{dt}_{sh(s)}", fn, {"shape": s, "dtype": dt}, impl=impl,
                        text=tf and dt == "float32" and s == [3])
        for mode in [None, "low", "high", "highest"]:
            for dt in float_dtypes:
                for s in SHAPES:
                    add(f"gumbel_{impl}_{mode}_{dt}_{sh(s)}", "gumbel",
                        {"shape": s, "dtype": dt, "mode": mode}, impl=impl,
                        text=dt == "float32" and s == [3] and (tf or mode == "highest"))
        for dt in ["int32", "int8", "uint8", "float32", None]:
            for s in SHAPES:
                add(f"rademacher_{impl}_{dt}_{sh(s)}", "rademacher", {"shape": s, "dtype": dt},
                    impl=impl, text=tf and dt is None and s == [3])
        for dt in float_dtypes:
            for lo, hi, s in [(0.0, 1.0, []), (-3.7, 11.1, [2, 3]), (2.0, -1.0, [3]),
                              (0.0, 1.0, [0])]:
                add(f"uniform_{impl}_{dt}_{lo}_{hi}_{sh(s)}", "uniform",
                    {"shape": s, "dtype": dt, "minval": F(lo), "maxval": F(hi)}, impl=impl)
            # Array bounds, broadcast against the shape.
            add(f"uniform_{impl}_{dt}_arrays", "uniform",
                {"shape": [2, 3], "dtype": dt, "minval": A(0), "maxval": A(1)},
                [np_([-1.0, 0.0, 2.5], dt), np_([[1.0], [10.0]], dt)], impl=impl,
                text=tf and dt == "float32", grad=tf)

        # One-parameter samplers: scalar and array parameters, shape None or given.
        one = [("pareto", "b", [3.0, 0.5, 1.0, 7.5, 2.0, 1.5]),
               ("rayleigh", "scale", [2.0, 0.5, 1.0, 3.0, 0.25, 1.5]),
               ("wald", "mean", [1.5, 0.5, 1.0, 3.0, 0.25, 2.0]),
               ("lognormal", "sigma", [0.5, 0.25, 1.0, 2.0, 0.1, 1.5]),
               ("geometric", "p", [0.3, 0.1, 0.5, 0.9, 0.05, 0.7])]
        for fn, name, vals in one:
            dts = [None, "int8", "int32"] if fn == "geometric" else float_dtypes
            pdts = float_dtypes if fn == "geometric" else [None]
            for dt in dts:
                for pdt in pdts:
                    pd = pdt or dt
                    tag = f"{fn}_{impl}_{dt}" + (f"_p{pdt}" if pdt else "")
                    scalar_ok = pdt in (None, float_dtypes[0])
                    if scalar_ok:
                        for s in [None, [], [3], [2, 3], [0]]:
                            add(f"{tag}_float_{sh(s) if s is not None else 'none'}", fn,
                                {name: F(vals[0]), "shape": s, "dtype": dt}, impl=impl,
                                text=tf and dt in ("float32", None) and s == [3])
                    add(f"{tag}_array_none", fn, {name: A(0), "shape": None, "dtype": dt},
                        [np_(vals[:3], pd)], impl=impl, grad=tf and fn != "geometric")
                    add(f"{tag}_array_2x3", fn, {name: A(0), "shape": [2, 3], "dtype": dt},
                        [np_(vals[3:6], pd)], impl=impl,
                        text=tf and dt in ("float32", None) and pdt in (None, "float32"))
        # weibull_min and double_sided_maxwell: shape () by default, parameters broadcast.
        for dt in float_dtypes:
            for s, sc, c in [([3], F(2.0), F(1.5)), ([], F(0.5), F(3.0)), ([2, 3], F(1.0), A(0)),
                             ([], A(0), A(1)), ([0], F(1.0), F(1.0))]:
                arrs = [np_([0.5, 1.0, 2.5], dt), np_([1.5, 0.7, 4.0], dt)][:sum(
                    isinstance(v, dict) and "arg" in v for v in (sc, c))]
                add(f"weibull_min_{impl}_{dt}_{sh(s)}_{len(arrs)}", "weibull_min",
                    {"scale": sc, "concentration": c, "shape": s, "dtype": dt}, arrs, impl=impl,
                    text=tf and dt == "float32" and s == [3], grad=tf and bool(arrs))
            for s, loc, scale in [([3], F(0.5), F(2.0)), ([], F(-1.0), F(0.5)),
                                  ([2], A(0), F(1.0)), ([], A(0), A(1)), ([0], F(0.0), F(1.0))]:
                arrs = [np_([0.5, -1.0, 2.5], dt), np_([1.5, 0.7, 4.0], dt)][:sum(
                    isinstance(v, dict) and "arg" in v for v in (loc, scale))]
                add(f"double_sided_maxwell_{impl}_{dt}_{sh(s)}_{len(arrs)}",
                    "double_sided_maxwell",
                    {"loc": loc, "scale": scale, "shape": s, "dtype": dt}, arrs, impl=impl,
                    text=tf and dt == "float32" and s == [3], grad=tf and bool(arrs))
            # triangular
            for s, ps, arrs in [([3], (F(0.0), F(0.3), F(1.0)), []),
                                (None, (F(-1.0), F(0.5), F(2.0)), []),
                                ([2, 3], (A(0), F(0.5), A(1)), [[-1.0, 0.0, 0.25],
                                                                 [1.0, 2.0, 0.75]]),
                                (None, (A(0), A(1), A(2)), [[0.0, -2.0, 1.0], [0.5, 0.0, 1.5],
                                                            [1.0, 3.0, 2.0]]),
                                ([0], (F(0.0), F(0.5), F(1.0)), [])]:
                add(f"triangular_{impl}_{dt}_{sh(s) if s is not None else 'none'}_{len(arrs)}",
                    "triangular", {"left": ps[0], "mode": ps[1], "right": ps[2], "shape": s,
                                   "dtype": dt}, [np_(a, dt) for a in arrs], impl=impl,
                    text=tf and dt == "float32" and s == [3], grad=tf and bool(arrs))
            # truncated_normal
            for s, lo, hi, arrs in [([3], F(-1.0), F(2.0), []), (None, F(0.5), F(0.75), []),
                                    ([2, 3], A(0), F(1.0), [[-2.0, 0.0, 0.9]]),
                                    (None, A(0), A(1), [[-1.0, -3.0, 0.0], [1.0, -2.0, 5.0]]),
                                    ([0], F(-1.0), F(1.0), [])]:
                add(f"truncated_normal_{impl}_{dt}_{sh(s) if s is not None else 'none'}_"
                    f"{len(arrs)}", "truncated_normal",
                    {"lower": lo, "upper": hi, "shape": s, "dtype": dt},
                    [np_(a, dt) for a in arrs], impl=impl,
                    text=tf and dt == "float32" and s == [3], grad=tf and bool(arrs))
            # bernoulli with array p
            for mode in ["low", "high"]:
                for s, pa in [(None, [0.2, 0.5, 0.7]), ([2, 3], [0.1, 0.5, 0.9]), ([0], [0.5]),
                              (None, 0.3)]:
                    add(f"bernoulli_{impl}_{dt}_{mode}_{sh(s) if s is not None else 'none'}_"
                        f"{np.ndim(pa)}", "bernoulli",
                        {"p": A(0), "shape": s, "mode": mode}, [np_(pa, dt)], impl=impl,
                        text=tf and dt == "float32" and mode == "low" and s is None)
        for mode in ["low", "high"]:
            for s in [None, [3]]:
                add(f"bernoulli_{impl}_pyfloat_{mode}_{sh(s) if s is not None else 'none'}",
                    "bernoulli", {"p": F(0.25), "shape": s, "mode": mode}, impl=impl)

        # categorical
        logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]]))
        for dt in float_dtypes:
            lg = np_(logits, dt)
            for axis, s, replace, mode in [(-1, None, True, None), (0, None, True, None),
                                           (-1, [3, 2], True, None), (1, [5, 2], True, "high"),
                                           (-1, None, False, None), (-1, [3, 2], False, None),
                                           (0, [2, 4], False, "high"), (-1, [0, 2], True, None)]:
                add(f"categorical_{impl}_{dt}_{axis}_{sh(s) if s is not None else 'none'}_"
                    f"{replace}_{mode}", "categorical",
                    {"logits": A(0), "axis": axis, "shape": s, "replace": replace,
                     "mode": mode}, [lg], impl=impl,
                    text=tf and dt == "float32" and s is None and axis == -1)
        # choice
        arr = np.arange(12, dtype=np.int32).reshape(3, 4) * 3
        p4 = np.array([0.1, 0.4, 0.2, 0.3], np.float32)
        p3 = np.array([0.5, 0.25, 0.25], np.float32)
        for label, kw, a in [
            ("int", {"a": I(5), "shape": [3]}, []),
            ("int_2x2", {"a": I(7), "shape": [2, 2]}, []),
            ("int_scalar", {"a": I(5), "shape": []}, []),
            ("int_noreplace", {"a": I(5), "shape": [3], "replace": False}, []),
            ("int_noreplace_all", {"a": I(5), "shape": [5], "replace": False}, []),
            ("int_p", {"a": I(4), "shape": [6], "p": A(0)}, [p4]),
            ("int_p_noreplace", {"a": I(4), "shape": [3], "p": A(0), "replace": False}, [p4]),
            ("int_p_noreplace_high", {"a": I(4), "shape": [2], "p": A(0), "replace": False,
                                      "mode": "high"}, [p4]),
            ("array", {"a": A(0), "shape": [4]}, [arr]),
            ("array_axis1", {"a": A(0), "shape": [2], "axis": 1}, [arr]),
            ("array_axis1_noreplace", {"a": A(0), "shape": [3], "axis": 1, "replace": False},
             [arr]),
            ("array_p", {"a": A(0), "shape": [2, 2], "p": A(1)}, [arr, p3]),
            ("array_p_axis1_noreplace", {"a": A(0), "shape": [2], "axis": 1, "p": A(1),
                                         "replace": False}, [arr, p4]),
            ("array_1d", {"a": A(0), "shape": [2, 3]}, [np.array([1.5, -2.0, 3.25], np.float32)]),
            ("empty", {"a": I(5), "shape": [0]}, []),
            ("empty_array", {"a": A(0), "shape": [0, 2]}, [arr]),
        ]:
            add(f"choice_{impl}_{label}", "choice", kw, a, impl=impl,
                text=tf and label in ("int", "int_p", "array_p_axis1_noreplace",
                                      "int_noreplace"))
        # permutation
        for label, kw, a in [
            ("int", {"x": I(5)}, []),
            ("int_1", {"x": I(1)}, []),
            ("int_0", {"x": I(0)}, []),
            ("array", {"x": A(0)}, [np.arange(6, dtype=np.float32) * 1.5]),
            ("array_2d", {"x": A(0)}, [arr]),
            ("array_2d_axis1", {"x": A(0), "axis": 1}, [arr]),
            ("array_2d_independent", {"x": A(0), "independent": True}, [arr]),
            ("array_2d_axis1_independent", {"x": A(0), "axis": -1, "independent": True},
             [arr]),
            ("array_empty", {"x": A(0)}, [np.zeros((0, 2), np.int32)]),
        ]:
            add(f"permutation_{impl}_{label}", "permutation", kw, a, impl=impl,
                text=tf and label in ("int", "array_2d", "array_2d_independent"))

    # --- raw uint32 keys (legacy): wrapped as threefry2x32 -----------------------------------
    raw = jnp.array([0, 42], jnp.uint32)
    for fn, kw, a in [("exponential", {"shape": [3], "dtype": None}, []),
                      ("pareto", {"b": F(2.0), "shape": None, "dtype": None}, []),
                      ("permutation", {"x": I(4)}, []),
                      ("choice", {"a": I(5), "shape": [2], "replace": False}, []),
                      ("categorical", {"logits": A(0), "axis": -1, "shape": None},
                       [np.zeros((3,), np.float32)])]:
        add(f"raw_{fn}", fn, kw, a, key=raw, vmap=False)

    # --- refusals ---------------------------------------------------------------------------
    batch = R.split(R.key(0), 2)
    for fn, kw in [("exponential", {"shape": [3], "dtype": None}),
                   ("gumbel", {"shape": [3], "dtype": None}),
                   ("pareto", {"b": F(2.0), "shape": None, "dtype": None}),
                   ("permutation", {"x": I(4)}),
                   ("choice", {"a": I(4), "shape": [2]}),
                   ("bernoulli", {"p": F(0.5), "shape": None})]:
        add(f"error_batched_key_{fn}", fn, kw, key=batch, vmap=False)
    not_float = "int32"
    for fn in ["exponential", "cauchy", "laplace", "logistic", "maxwell", "gumbel",
               "normal", "uniform"]:
        kw = {"shape": [3], "dtype": not_float}
        if fn == "uniform":
            kw.update(minval=F(0.0), maxval=F(1.0))
        add(f"error_dtype_{fn}", fn, kw, vmap=False)
    for fn, kw in [("pareto", {"b": F(2.0)}), ("rayleigh", {"scale": F(1.0)}),
                   ("wald", {"mean": F(1.0)}), ("lognormal", {"sigma": F(1.0)}),
                   ("weibull_min", {"scale": F(1.0), "concentration": F(1.0)}),
                   ("double_sided_maxwell", {"loc": F(0.0), "scale": F(1.0)}),
                   ("triangular", {"left": F(0.0), "mode": F(0.5), "right": F(1.0)}),
                   ("truncated_normal", {"lower": F(0.0), "upper": F(1.0)})]:
        add(f"error_dtype_{fn}", fn, dict(kw, shape=[3], dtype="int32"), vmap=False)
    add("error_dtype_geometric", "geometric", {"p": F(0.5), "shape": [3], "dtype": "float32"},
        vmap=False)
    add("error_dtype_bits_int", "bits", {"shape": [3], "dtype": "int32"}, vmap=False)
    add("error_dtype_bits_float", "bits", {"shape": [3], "dtype": "float32"}, vmap=False)
    # Shapes that parameters do not broadcast to.
    p3 = np.array([1.0, 2.0, 3.0], np.float32)
    for fn, kw in [("pareto", {"b": A(0)}), ("rayleigh", {"scale": A(0)}),
                   ("wald", {"mean": A(0)}), ("lognormal", {"sigma": A(0)}),
                   ("geometric", {"p": A(0)}),
                   ("triangular", {"left": A(0), "mode": F(2.0), "right": F(5.0)}),
                   ("truncated_normal", {"lower": A(0), "upper": F(5.0)}),
                   ("bernoulli", {"p": A(0)})]:
        for s in [[2], [3, 1], [4, 3]] if fn == "pareto" else [[2]]:
            add(f"error_shape_{fn}_{sh(s)}", fn, dict(kw, shape=s),
                [p3 / 4 if fn in ("geometric", "bernoulli") else p3], vmap=False)
    # Parameters that do not cast safely to the dtype.
    for fn, name in [("pareto", "b"), ("rayleigh", "scale"), ("wald", "mean"),
                     ("lognormal", "sigma")]:
        add(f"error_cast_{fn}", fn, {name: A(0), "shape": None, "dtype": "bfloat16"},
            [np.array([1.0, 2.0], np.float32)], vmap=False)
        add(f"cast_int_{fn}", fn, {name: A(0), "shape": None, "dtype": "float16"},
            [np.array([1, 2], np.int32)], vmap=False)
    add("error_cast_triangular", "triangular",
        {"left": F(0.0), "mode": A(0), "right": F(1.0), "shape": None, "dtype": "float16"},
        [np.array([0.5], np.float32)], vmap=False)
    add("error_bernoulli_int_p", "bernoulli", {"p": A(0), "shape": None},
        [np.array([1, 0], np.int32)], vmap=False)
    add("error_bernoulli_mode", "bernoulli", {"p": F(0.5), "shape": None, "mode": "mid"},
        vmap=False)
    add("error_gumbel_mode", "gumbel", {"shape": [3], "dtype": None, "mode": "medium"},
        vmap=False)
    add("error_categorical_noreplace", "categorical",
        {"logits": A(0), "axis": -1, "shape": [5, 2], "replace": False},
        [np.zeros((2, 4), np.float32)], vmap=False)
    add("error_categorical_shape", "categorical",
        {"logits": A(0), "axis": -1, "shape": [3]}, [np.zeros((2, 4), np.float32)], vmap=False)
    add("error_categorical_axis", "categorical",
        {"logits": A(0), "axis": 2, "shape": None}, [np.zeros((2, 4), np.float32)], vmap=False)
    for label, kw, a in [
        ("noreplace_too_many", {"a": I(3), "shape": [4], "replace": False}, []),
        ("a_zero", {"a": I(0), "shape": [2]}, []),
        ("a_negative", {"a": I(-3), "shape": [2]}, []),
        ("p_shape", {"a": I(4), "shape": [2], "p": A(0)}, [np.ones(3, np.float32) / 3]),
        ("p_2d", {"a": I(4), "shape": [2], "p": A(0)}, [np.ones((2, 2), np.float32) / 4]),
        ("axis", {"a": A(0), "shape": [2], "axis": 2}, [np.zeros((3, 4), np.int32)]),
        ("array_noreplace_too_many", {"a": A(0), "shape": [5], "replace": False},
         [np.zeros((3, 4), np.int32)]),
        ("float_scalar", {"a": F(4.0), "shape": [2]}, []),
    ]:
        add(f"error_choice_{label}", "choice", kw, a, vmap=False)
    for label, kw, a in [
        ("float", {"x": F(4.0)}, []),
        ("axis", {"x": A(0), "axis": 2}, [np.zeros((3, 4), np.int32)]),
        ("negative", {"x": I(-2)}, []),
    ]:
        add(f"error_permutation_{label}", "permutation", kw, a, vmap=False)

    header = {
        "generator": GENERATOR,
        "versions": {"python": sys.version.split()[0], "jax": jax.__version__,
                     "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__},
        "library": "jax", "mode": {"x64": x64}, "function": "jax.random samplers",
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }
    path = write_fixture(os.path.join(args.out_dir, "random_arrays", f"samplers_{suffix}.json"),
                         header, cases)
    print(f"x64={x64}: {len(cases)} cases, {os.path.getsize(path)} bytes")


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
