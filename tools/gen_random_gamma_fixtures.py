#!/usr/bin/env python3
"""Generate the fixtures of jax.random's samplers, part 2 (JAX 0.10.2): the gamma family and
the count samplers, and the special functions they need.

Samplers: gamma, loggamma, beta, dirichlet, chisquare, f, t, generalized_normal, ball,
poisson, binomial, multinomial; for every key implementation JAX ships (threefry2x32, rbg,
unsafe_rbg), the float dtypes JAX allows (float16, bfloat16 and float32 with x64 off; float64
and float32 with x64 on), shapes (), (0,), (3,), (2, 3), shape=None, scalar (Python float) and array parameters
(broadcasting), alpha 0.5, 1, 4, tiny (1e-3) and large (1e3), grads with respect to the
shape parameters, and JAX's refusals. Special functions: lax.lgamma, digamma, igamma,
igammac, igamma_grad_a, random_gamma_grad on grids with edge cases (0, negative integers, NaN,
±inf, tiny, huge), their JVPs, and lax's refusals.

Usage:
    tools/.venv-jax/bin/python tools/gen_random_gamma_fixtures.py [--out-dir DIR]

Re-runs itself once per mode (x64 off, on) in a fresh subprocess (JAX_ENABLE_X64 is read at
import). Output (relative to --out-dir, default <repo>/tests/fixtures):
    random_arrays/gamma_x32.json, gamma_x64.json       the samplers
    random_arrays/special_x32.json, special_x64.json   the special functions

Sampler cases (the format of gen_random_samplers_fixtures.py), read by
crates/dtype-lattice-array/tests/it/random_gamma.rs:

    {"name", "fn", "impl", "x64", "key": array, "kw": {...}, "args": [array...],
     "eager": [array...] | {"error": {"kind", "message"}},   # outside any transformation
     "jit": ...,                    # jax.jit(lambda key, *args: f(...))(key, *args)
     "vmap": ..., "keys": array,    # jax.vmap over keys = jax.random.split(key, 2)
     "text": str, "consts": [...],  # (some cases) str(jax.make_jaxpr(...)(key, *args))
     "grad": ..., "weights": array} # (some cases) jax.grad(sum(f(key, *args) * weights))

kw values: {"float": v} (a Python float), {"int": v} (a Python int), {"arg": i} (args[i]),
null (JAX's default); "shape" a list or null; "dtype" a dtype name or null; "d" (ball) an
int. Special-function cases: {"prim", "x64", "args": [array...], "out": array | error,
"jvp": [array...] (some: jax.jvp with unit tangents for every operand, one JVP per operand in
order)}. Arrays are gen_jaxpr_fixtures.enc's {"dtype", "shape", "hex"}.
"""

import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixturelib import pin_xla_isa, run_children, write_fixture  # noqa: E402

pin_xla_isa()

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_random_gamma_fixtures.py"
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


def special_cases(x64):
    import jax
    import jax.numpy as jnp
    import ml_dtypes
    import numpy as np
    from jax import lax

    from gen_jaxpr_fixtures import attempt, enc, leaves

    dts = (["float64"] if x64 else []) + ["float32", "float16", "bfloat16"]

    def arr(values, dt):
        return jnp.asarray(np.asarray(values, dtype=np.float64).astype(
            ml_dtypes.bfloat16 if dt == "bfloat16" else dt))

    edge = [0.0, -0.0, 1.0, 2.0, 3.0, -1.0, -2.0, -10.0, 0.5, -0.5, 1e-30, -1e-30, 1e-40,
            1e30, 1e38, -1e6, 3.4e38, float("inf"), float("-inf"), float("nan")]
    grid = list(np.linspace(-10, 10, 161)) + list(np.geomspace(1e-6, 1e6, 49)) + edge
    alphas = [0.0, 1e-30, 1e-3, 0.1, 0.5, 1.0, 1.5, 2.0, 4.0, 10.0, 100.0, 1e3, -1.0,
              float("inf"), float("nan")]
    xs = [0.0, 1e-30, 1e-3, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 50.0, 200.0, 1e3,
          -1.0, float("inf"), float("nan")]
    a2 = [a for a in alphas for _ in xs]
    x2 = [x for _ in alphas for x in xs]
    cases = []
    unary = {"lgamma": lax.lgamma, "digamma": lax.digamma}
    binary = {"igamma": lax.igamma, "igammac": lax.igammac, "igamma_grad_a": lax.igamma_grad_a,
              "random_gamma_grad": lax.random_gamma_grad}
    for dt in dts:
        for name, f in unary.items():
            x = arr(grid, dt)
            case = {"prim": name, "x64": x64, "args": [enc(x)]}
            case["out"] = attempt(lambda: enc(f(x)))
            if name == "lgamma":
                t = jnp.ones_like(x)
                case["jvp"] = attempt(lambda: leaves(jax.jvp(f, (x,), (t,))[1]))
            cases.append(case)
        for name, f in binary.items():
            a, x = arr(a2, dt), arr(x2, dt)
            case = {"prim": name, "x64": x64, "args": [enc(a), enc(x)]}
            case["out"] = attempt(lambda: enc(f(a, x)))
            if name in ("igamma", "igammac"):
                t = jnp.ones_like(a)
                z = jnp.zeros_like(a)
                case["jvp"] = attempt(lambda: leaves([jax.jvp(f, (a, x), (t, z))[1],
                                                     jax.jvp(f, (a, x), (z, t))[1]]))
            cases.append(case)
    # Broadcasting (a 0-d operand, size-1 dimensions) and the refusals.
    f32 = "float32"
    a = arr([[0.5], [2.0]], f32)
    x = arr([0.25, 1.0, 4.0], f32)
    cases.append({"prim": "igamma", "x64": x64, "args": [enc(a), enc(x)],
                  "out": attempt(lambda: enc(lax.igamma(a, x)))})
    s = arr(3.0, f32)
    cases.append({"prim": "random_gamma_grad", "x64": x64, "args": [enc(s), enc(x)],
                  "out": attempt(lambda: enc(lax.random_gamma_grad(s, x)))})
    i = jnp.asarray([1, 2], dtype=jnp.int32)
    cases.append({"prim": "lgamma", "x64": x64, "args": [enc(i)],
                  "out": attempt(lambda: enc(lax.lgamma(i)))})
    cases.append({"prim": "digamma", "x64": x64, "args": [enc(i)],
                  "out": attempt(lambda: enc(lax.digamma(i)))})
    cases.append({"prim": "igamma", "x64": x64, "args": [enc(i), enc(i)],
                  "out": attempt(lambda: enc(lax.igamma(i, i)))})
    h = arr([1.0, 2.0], "float16")
    g = arr([1.0, 2.0], f32)
    cases.append({"prim": "igammac", "x64": x64, "args": [enc(g), enc(h)],
                  "out": attempt(lambda: enc(lax.igammac(g, h)))})
    return cases


def sampler_cases(x64):
    import jax
    import jax.numpy as jnp
    import ml_dtypes
    import numpy as np
    from jax import random as R

    from gen_jaxpr_fixtures import attempt, enc, leaves

    # With x64 the narrow dtypes are covered by the x32 file already: float64 and float32 only
    # (and fewer shapes), so that the file stays small and quick to generate.
    float_dtypes = ["float64", "float32"] if x64 else ["float32", "float16", "bfloat16"]
    shapes = [[], [0], [2, 3]] if x64 else SHAPES

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
        shape = None if kw.get("shape") is None else tuple(kw["shape"])
        dt = kw.get("dtype")
        dtype = None if dt is None else jnp.dtype(dt)
        p = lambda name: param(kw, name, a)  # noqa: E731
        one = {"gamma": (R.gamma, "a"), "loggamma": (R.loggamma, "a"),
               "chisquare": (R.chisquare, "df"), "t": (R.t, "df"),
               "dirichlet": (R.dirichlet, "alpha"), "poisson": (R.poisson, "lam")}
        if fn in one:
            f, name = one[fn]
            return f(key, p(name), shape, dtype)
        if fn == "beta":
            return R.beta(key, p("a"), p("b"), shape, dtype)
        if fn == "f":
            return R.f(key, p("dfnum"), p("dfden"), shape, dtype)
        if fn == "generalized_normal":
            return R.generalized_normal(key, p("p"), () if shape is None else shape, dtype)
        if fn == "ball":
            return R.ball(key, kw["d"], p("p"), () if shape is None else shape, dtype)
        if fn == "binomial":
            return R.binomial(key, p("n"), p("p"), shape, dtype)
        if fn == "multinomial":
            return R.multinomial(key, p("n"), p("p"), shape=shape, dtype=dtype)
        raise ValueError(fn)

    cases = []
    names = set()
    counter = [0]

    def add(name, fn, kw, args=(), impl="threefry2x32", key=None, text=False, grad=False,
            vmap=True, jit=True):
        assert name not in names, name
        names.add(name)
        counter[0] += 1
        print(f"{counter[0]} {name}", file=sys.stderr, flush=True)  # progress
        if key is None:
            key = R.key(counter[0], impl=impl)
        args = [jnp.asarray(x) for x in args]
        case = {"name": name, "fn": fn, "impl": impl, "x64": x64, "key": enc(key), "kw": kw,
                "args": [enc(x) for x in args]}
        case["eager"] = attempt(lambda: leaves(call(fn, key, kw, args)))
        if jit:
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

    alphas = [("half", 0.5), ("one", 1.0), ("four", 4.0), ("tiny", 1e-3), ("large", 1e3)]
    for impl in IMPLS:
        tf = impl == "threefry2x32"
        # gamma and loggamma: every alpha, dtype and shape (threefry), fewer for the others.
        for fn in ["gamma", "loggamma"]:
            for an, av in alphas:
                for dt in float_dtypes:
                    for s in shapes if tf else [[3]]:
                        add(f"{fn}_{impl}_{an}_{dt}_{sh(s)}", fn,
                            {"a": F(av), "shape": s, "dtype": dt}, impl=impl)
            arr = np_([[0.5, 1.0, 4.0], [1e-3, 2.5, 1e3]], "float32")
            add(f"{fn}_{impl}_array_none", fn, {"a": A(0), "shape": None, "dtype": None},
                [arr], impl=impl, grad=True, text=tf and fn == "gamma")
            add(f"{fn}_{impl}_broadcast", fn, {"a": A(0), "shape": [4, 3], "dtype": None},
                [np_([0.5, 1.0, 4.0], "float32")], impl=impl, grad=tf)
        for dt in float_dtypes if tf else ["float32"]:
            add(f"beta_{impl}_{dt}", "beta", {"a": F(0.5), "b": F(2.0), "shape": [3],
                                              "dtype": dt}, impl=impl)
            add(f"dirichlet_{impl}_{dt}", "dirichlet", {"alpha": A(0), "shape": None,
                                                        "dtype": dt},
                [np_([0.5, 1.0, 4.0], "float32")], impl=impl)
            add(f"chisquare_{impl}_{dt}", "chisquare", {"df": F(3.0), "shape": [3], "dtype": dt},
                impl=impl)
            add(f"f_{impl}_{dt}", "f", {"dfnum": F(2.0), "dfden": F(5.0), "shape": [3],
                                        "dtype": dt}, impl=impl)
            add(f"t_{impl}_{dt}", "t", {"df": F(3.0), "shape": [3], "dtype": dt}, impl=impl)
            add(f"generalized_normal_{impl}_{dt}", "generalized_normal",
                {"p": F(1.5), "shape": [3], "dtype": dt}, impl=impl)
            add(f"ball_{impl}_{dt}", "ball", {"d": 3, "p": F(2.0), "shape": [2], "dtype": dt},
                impl=impl)
        add(f"beta_{impl}_arrays", "beta", {"a": A(0), "b": A(1), "shape": None, "dtype": None},
            [np_([0.5, 1.0, 4.0], "float32"), np_([[2.0], [0.25]], "float32")], impl=impl,
            grad=tf)
        add(f"dirichlet_{impl}_batch", "dirichlet", {"alpha": A(0), "shape": [2], "dtype": None},
            [np_([0.3, 1.0, 2.0, 5.0], "float32")], impl=impl, grad=tf)
        add(f"chisquare_{impl}_array", "chisquare", {"df": A(0), "shape": None, "dtype": None},
            [np_([1.0, 2.5, 10.0], "float32")], impl=impl, grad=tf)
        add(f"f_{impl}_arrays", "f", {"dfnum": A(0), "dfden": A(1), "shape": None,
                                      "dtype": None},
            [np_([1.0, 3.0], "float32"), np_([4.0, 8.0], "float32")], impl=impl)
        add(f"t_{impl}_array", "t", {"df": A(0), "shape": [2, 3], "dtype": None},
            [np_([1.0, 3.0, 30.0], "float32")], impl=impl)
        for pv in [0.5, 1.0, 2.0, 4.0]:
            add(f"generalized_normal_{impl}_p{pv}", "generalized_normal",
                {"p": F(pv), "shape": [2, 3], "dtype": None}, impl=impl)
            add(f"ball_{impl}_p{pv}", "ball", {"d": 2, "p": F(pv), "shape": [3], "dtype": None},
                impl=impl)
        # poisson: refused for rbg and unsafe_rbg keys.
        for lam_name, lam in [("small", 3.0), ("large", 50.0), ("zero", 0.0)]:
            add(f"poisson_{impl}_{lam_name}", "poisson", {"lam": F(lam), "shape": [2, 3],
                                                        "dtype": None}, impl=impl)
        add(f"poisson_{impl}_array", "poisson", {"lam": A(0), "shape": None, "dtype": None},
            [np_([0.0, 1.0, 9.9, 10.0, 25.0, 1e4], "float32")], impl=impl, text=tf)
        for dt in ["int32", "int16", "uint8"] + (["int64"] if x64 else []):
            add(f"poisson_{impl}_{dt}", "poisson", {"lam": F(4.0), "shape": [3], "dtype": dt},
                impl=impl)
        # binomial: inversion (n·p <= 10) and BTRS.
        add(f"binomial_{impl}_arrays", "binomial", {"n": A(0), "p": A(1), "shape": None,
                                                    "dtype": None},
            [np_([5.0, 20.0, 100.0, 1000.0], "float32"), np_([0.3, 0.6, 0.1, 0.9], "float32")],
            impl=impl, text=tf)
        add(f"binomial_{impl}_edges", "binomial", {"n": A(0), "p": A(1), "shape": None,
                                                   "dtype": None},
            [np_([0.0, -1.0, float("nan"), float("inf"), 10.0, 10.0, 7.5], "float32"),
             np_([0.5, 0.5, 0.5, 0.5, float("nan"), -0.1, 0.4], "float32")], impl=impl,
            # JAX 0.10.2 does not return from this vmap over unsafe_rbg keys (its loop never
            # ends), so there is no value to record.
            vmap=impl != "unsafe_rbg")
        for dt in float_dtypes if tf else ["float32"]:
            add(f"binomial_{impl}_{dt}", "binomial", {"n": F(30.0), "p": F(0.4), "shape": [3],
                                                      "dtype": dt}, impl=impl)
        add(f"multinomial_{impl}", "multinomial", {"n": A(0), "p": A(1), "shape": None,
                                                   "dtype": None},
            [np_(20.0, "float32"), np_([0.2, 0.5, 0.3], "float32")], impl=impl)
        add(f"multinomial_{impl}_batch", "multinomial", {"n": A(0), "p": A(1),
                                                         "shape": [2, 3], "dtype": None},
            [np_([10.0, 50.0], "float32"), np_([0.1, 0.0, 0.9], "float32")], impl=impl)

    # --- refusals (threefry keys) -------------------------------------------------------------
    k = "threefry2x32"
    add("gamma_int_dtype", "gamma", {"a": F(1.0), "shape": [2], "dtype": "int32"}, impl=k)
    add("loggamma_int_dtype", "loggamma", {"a": F(1.0), "shape": [2], "dtype": "int32"}, impl=k)
    add("gamma_bad_shape", "gamma", {"a": A(0), "shape": [2], "dtype": None},
        [np_([1.0, 2.0, 3.0], "float32")], impl=k)
    add("beta_int_dtype", "beta", {"a": F(1.0), "b": F(1.0), "shape": None, "dtype": "int32"},
        impl=k)
    add("beta_bad_shape", "beta", {"a": A(0), "b": F(1.0), "shape": [2], "dtype": None},
        [np_([1.0, 2.0, 3.0], "float32")], impl=k)
    add("dirichlet_scalar_alpha", "dirichlet", {"alpha": F(1.0), "shape": None, "dtype": None},
        impl=k)
    add("dirichlet_int_dtype", "dirichlet", {"alpha": A(0), "shape": None, "dtype": "int32"},
        [np_([1.0, 2.0], "float32")], impl=k)
    add("chisquare_int_dtype", "chisquare", {"df": F(1.0), "shape": None, "dtype": "int32"},
        impl=k)
    add("t_bad_shape", "t", {"df": A(0), "shape": [2], "dtype": None},
        [np_([1.0, 2.0, 3.0], "float32")], impl=k)
    add("f_int_dtype", "f", {"dfnum": F(1.0), "dfden": F(1.0), "shape": None, "dtype": "int32"},
        impl=k)
    add("binomial_int_dtype", "binomial", {"n": F(1.0), "p": F(0.5), "shape": None,
                                           "dtype": "int32"}, impl=k)
    add("gamma_batched_key", "gamma", {"a": F(1.0), "shape": None, "dtype": None},
        key=R.split(R.key(0), 2), impl=k)
    if not x64:
        add("gamma_f64_arg_x32", "gamma", {"a": A(0), "shape": None, "dtype": "float16"},
            [np_([1.0, 2.0], "float32")], impl=k)
    else:
        add("t_unsafe_cast", "t", {"df": A(0), "shape": None, "dtype": "float32"},
            [np_([1.0, 2.0], "float64")], impl=k)
        add("gamma_f64_arg_to_f32", "gamma", {"a": A(0), "shape": None, "dtype": "float32"},
            [np_([1.0, 2.0], "float64")], impl=k)
    return cases


def child(args):
    warnings.simplefilter("ignore")
    import jax

    assert jax.config.jax_enable_x64 == args.x64
    suffix = "x64" if args.x64 else "x32"
    header = {"generator": GENERATOR, "jax": jax.__version__, "x64": args.x64}
    out = os.path.join(args.out_dir, "random_arrays")
    s = special_cases(args.x64)
    p = write_fixture(os.path.join(out, f"special_{suffix}.json"), header, s)
    print(f"{p}: {len(s)} cases")
    g = sampler_cases(args.x64)
    p = write_fixture(os.path.join(out, f"gamma_{suffix}.json"), header, g)
    print(f"{p}: {len(g)} cases")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--x64", dest="x64", action="store_true")
    ap.add_argument("--no-x64", dest="x64", action="store_false")
    args = ap.parse_args()
    if args.child:
        child(args)
    else:
        parent(args)


if __name__ == "__main__":
    main()
