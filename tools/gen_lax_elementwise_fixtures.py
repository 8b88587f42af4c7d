"""The elementwise primitives of jax.lax, asked of real JAX 0.10.2 on CPU (x64 on), every dtype
its CPU backend holds: writes tests/fixtures/lax_elementwise/<group>.json.

Run with the pinned JAX venv:

    tools/.venv-jax/bin/python tools/gen_lax_elementwise_fixtures.py [--out-dir tests/fixtures]

Each file's header holds `inputs`: per dtype and input profile (`x`, `y` for general values,
`shift` for shift amounts, `pred2`/`pred3` for `select_n` predicates) the hex of the input
elements' little-endian bytes (one element per byte for bool and the 8-bit-and-narrower dtypes,
as NumPy/ml_dtypes store them). Each case is one primitive applied with its parameters to one
dtype:

    {"prim": "exp", "params": [["accuracy", null]], "dtype": "float32",
     "args": ["x"], "out": {"dtype": "float32", "shape": [192], "weak_type": false,
     "hex": "..."}, "weak": {"dtype": "float32", "weak_type": true}}

`args` names input profiles of the case's dtype (`"x@int32"` names another dtype's input,
`"s:x"` a scalar: the first element of profile x). `out.hex` is the result's bytes as JAX
returned them, jitted (nothing computed here); `weak` is the output aval when every operand is
weakly typed (jax.make_jaxpr). A refusal is `"error": {"kind", "message"}` (exception class,
first line of the message), from tracing (lax's checks) or compiling (XLA).

Inputs: edge values of the dtype (NaN, +-inf, +-0, max, min normal, smallest subnormal, 1, -1,
halves for rounding) and fixed-seed random values (normals over many binades, random bit
patterns, integers near the bounds); the 8-bit float formats' unary inputs are every code.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixturelib  # noqa: E402

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["JAX_ENABLE_X64"] = "1"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes as md  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.lax import lax as lax_internal  # noqa: E402

import warnings  # noqa: E402

warnings.simplefilter("ignore")
jax.config.update("jax_enable_x64", True)

DTYPES = [
    "bool", "int2", "int4", "int8", "int16", "int32", "int64",
    "uint2", "uint4", "uint8", "uint16", "uint32", "uint64",
    "float4_e2m1fn", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
]
SUB_BITS = {"int2": 2, "int4": 4, "uint2": 2, "uint4": 4, "float4_e2m1fn": 4}
N = 192


def dt(name):
    return np.dtype(getattr(md, name)) if hasattr(md, name) else np.dtype(name)


def is_float(name):
    return name.startswith(("float", "bfloat"))


def uint_of(d):
    return {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[d.itemsize]


def float_values(name, rng, n):
    """Edge values first, then random ones, as the dtype (distinct codes)."""
    d = dt(name)
    if d.itemsize == 1:
        bits = SUB_BITS.get(name, 8)
        codes = np.arange(1 << bits, dtype=np.uint8).view(d)
        fin = codes[np.isfinite(codes.astype(np.float32))]
        with np.errstate(all="ignore"):
            vals = codes.astype(np.float32)
        order = np.argsort(np.abs(vals[np.isfinite(vals)]))
        edges = list(codes[~np.isfinite(vals)]) + list(fin[order][:6]) + list(fin[order][-6:])
        rest = rng.choice(codes, size=n, replace=True)
        return np.array(edges + list(rest), dtype=d)[:n]
    fi = np.finfo(d) if name not in ("bfloat16",) else md.finfo(md.bfloat16)
    edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5,
             float(fi.max), -float(fi.max), float(fi.tiny), -float(fi.tiny),
             float(fi.smallest_subnormal), -float(fi.smallest_subnormal), 2.0, 0.99, -0.99,
             1e-3, 10.0, -10.0, 100.0, 90.0, 3.0, 1e4, -1e4]
    e = np.array(edges, dtype=np.float64).astype(d)
    k = n - len(e)
    a = rng.standard_normal(k // 2) * np.exp2(rng.integers(-12, 12, k // 2))
    b = rng.uniform(-1.2, 1.2, k // 4)
    c = rng.integers(0, 1 << (8 * d.itemsize), size=k - k // 2 - k // 4,
                     dtype=np.uint64 if d.itemsize == 8 else np.int64).astype(uint_of(d)).view(d)
    with np.errstate(all="ignore"):
        r = np.concatenate([a.astype(d), b.astype(d), c])
    return np.concatenate([e, r]).astype(d)


def int_values(name, rng, n):
    d = dt(name)
    if name in SUB_BITS:
        bits = SUB_BITS[name]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if name.startswith("int") else (0, (1 << bits) - 1)
        vals = np.arange(lo, hi + 1)
        return rng.choice(vals, size=n).astype(np.int64).astype(d)
    info = np.iinfo(d)
    edges = [0, 1, -1, 2, -2, 3, 7, -7, info.min, info.max, info.min + 1, info.max - 1, 5, 100, -100]
    edges = [v for v in edges if info.min <= v <= info.max]
    k = n - len(edges)
    big = rng.integers(info.min, info.max, size=k // 2, dtype=d, endpoint=True)
    small = rng.integers(max(info.min, -20), 21, size=k - k // 2).astype(d)
    return np.concatenate([np.array(edges, dtype=d), big, small])


def values(name, rng, n=N):
    d = dt(name)
    if name == "bool":
        return rng.integers(0, 2, size=n).astype(bool)
    if is_float(name):
        return float_values(name, rng, n)
    if name.startswith("complex"):
        comp = "float32" if name == "complex64" else "float64"
        out = np.empty(n, dtype=d)
        out.real = float_values(comp, rng, n)
        out.imag = rng.permutation(float_values(comp, rng, n))
        return out
    return int_values(name, rng, n)


def shift_values(name, rng, n=N):
    d = dt(name)
    bits = SUB_BITS.get(name, d.itemsize * 8)
    signed = name.startswith("int")
    lo = -2 if signed else 0
    small = rng.integers(lo, bits + 3, size=n)
    if name in SUB_BITS:
        hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        small = np.clip(small, -(1 << (bits - 1)) if signed else 0, hi)
    v = small.astype(d)
    if name not in SUB_BITS:
        info = np.iinfo(d)
        v[:4] = [info.max, info.min, bits, bits - 1]
    return v


def profiles(name, rng):
    """Input profiles of a dtype: x and y general values, shift amounts."""
    d = dt(name)
    out = {}
    if d.itemsize == 1 and is_float(name):
        codes = np.arange(1 << SUB_BITS.get(name, 8), dtype=np.uint8)
        out["x"] = codes.view(d)
    else:
        out["x"] = values(name, rng)
    n = len(out["x"])
    out["y"] = values(name, rng, n)
    # Pairs of edges: y's first values against x's.
    k = min(16, n)
    out["y"][:k] = out["x"][:k][::-1]
    if name not in ("bool",) and not is_float(name) and not name.startswith("complex"):
        out["shift"] = shift_values(name, rng, n)
    out["pred2"] = rng.integers(0, 2, size=n).astype(bool)
    out["pred3"] = rng.integers(0, 3, size=n).astype(np.int32)
    out["lo"] = values(name, rng, n)
    out["hi"] = values(name, rng, n)
    return out


def to_hex(a):
    a = np.ascontiguousarray(a)
    if a.dtype == bool:
        return a.astype(np.uint8).tobytes().hex()
    return a.view(np.uint8).tobytes().hex()


def weakly(x):
    return lax_internal._convert_element_type(x, np.dtype(x.dtype), weak_type=True)


def error(e):
    return {"kind": type(e).__name__, "message": fixturelib.first_line(e)}


UNARY = ["neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "expm1", "log1p",
         "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
         "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "abs", "not", "population_count",
         "clz", "erf", "erfc", "erf_inv", "real", "imag", "conj", "square"]
BINARY = ["add", "sub", "mul", "div", "rem", "pow", "atan2", "max", "min", "nextafter",
          "and", "or", "xor", "eq", "ne", "lt", "le", "gt", "ge",
          "shift_left", "shift_right_arithmetic", "shift_right_logical"]
LAX_FN = {"not": lax.bitwise_not, "and": lax.bitwise_and, "or": lax.bitwise_or,
          "xor": lax.bitwise_xor}
GROUPS = {
    "arith": ["neg", "add", "sub", "mul", "div", "rem", "max", "min", "abs", "sign", "square",
              "integer_pow", "nextafter"],
    "compare": ["eq", "ne", "lt", "le", "gt", "ge", "is_finite"],
    "bits": ["not", "and", "or", "xor", "shift_left", "shift_right_arithmetic",
             "shift_right_logical", "population_count", "clz"],
    "rounding": ["floor", "ceil", "round", "real", "imag", "conj"],
    "exp_log": ["exp", "exp2", "log", "expm1", "log1p", "sqrt", "rsqrt", "cbrt", "pow"],
    "trig": ["sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
             "asinh", "acosh", "atanh", "logistic"],
    "special": ["erf", "erfc", "erf_inv"],
    "select": ["select_n", "clamp", "bitcast_convert_type"],
}


def prim_params(jaxpr):
    eqns = [e for e in jaxpr.jaxpr.eqns]
    e = eqns[-1]
    out = []
    for k, v in e.params.items():
        if v is None or isinstance(v, (bool, int)):
            out.append([k, v if not hasattr(v, "value") else int(v)])
        elif hasattr(v, "value"):
            out.append([k, int(v.value)])
        elif isinstance(v, np.dtype):
            out.append([k, np.dtype(v).name])
        else:
            out.append([k, str(v)])
    return e.primitive.name, out


def run(fn, arrays, weak_arrays=None):
    """The case's result: out aval + bytes, or an error; and the all-weak output aval."""
    case = {}
    try:
        jp = jax.make_jaxpr(fn)(*arrays)
        case["prim"], case["params"] = prim_params(jp)
        res = jax.jit(fn)(*arrays)
        r = np.asarray(res)
        case["out"] = {"dtype": r.dtype.name, "shape": list(r.shape),
                       "weak_type": bool(jp.out_avals[0].weak_type), "hex": to_hex(r)}
    except Exception as e:  # noqa: BLE001
        case["error"] = error(e)
        return case
    try:
        wj = jax.make_jaxpr(lambda *a: fn(*[weakly(x) for x in a]))(*arrays)
        a = wj.out_avals[0]
        case["weak"] = {"dtype": np.dtype(a.dtype).name, "weak_type": bool(a.weak_type)}
    except Exception as e:  # noqa: BLE001
        case["weak"] = {"error": error(e)}
    return case


def cases_for(prim, name, prof, allprof):
    """[(label params, args, fn)] for one primitive and dtype."""
    out = []
    if prim in UNARY:
        f = LAX_FN.get(prim) or getattr(lax, prim)
        out.append(({}, ["x"], f))
    elif prim in ("shift_left", "shift_right_arithmetic", "shift_right_logical"):
        f = getattr(lax, prim)
        out.append(({}, ["x", "shift" if "shift" in prof else "y"], f))
    elif prim in BINARY:
        f = LAX_FN.get(prim) or getattr(lax, prim)
        out.append(({}, ["x", "y"], f))
    elif prim == "round":
        for m in (0, 1):
            out.append(({"rounding_method": m}, ["x"],
                        lambda x, m=m: lax.round(x, lax.RoundingMethod(m))))
    elif prim == "integer_pow":
        for y in (0, 1, 2, 3, 5, -1, -2):
            out.append(({"y": y}, ["x"], lambda x, y=y: lax.integer_pow(x, y)))
    elif prim == "select_n":
        out.append(({}, ["pred2", "x", "y"], lambda p, a, b: lax.select_n(p, a, b)))
        out.append(({}, ["pred3", "x", "y", "lo"], lambda p, a, b, c: lax.select_n(p, a, b, c)))
        out.append(({}, ["s:pred2", "x", "y"], lambda p, a, b: lax.select_n(p, a, b)))
        out.append(({}, ["x", "x", "y"], lambda p, a, b: lax.select_n(p, a, b)))
    elif prim == "clamp":
        out.append(({}, ["lo", "x", "hi"], lax.clamp))
        out.append(({}, ["s:lo", "x", "s:hi"], lax.clamp))
        out.append(({}, ["s:lo", "x", "hi"], lax.clamp))
    elif prim == "bitcast_convert_type":
        for tgt in ("bool", "int8", "uint8", "int16", "float16", "bfloat16", "int32", "uint32",
                    "float32", "int64", "float64", "complex64", "float8_e4m3fn", "int4"):
            out.append(({"new_dtype": tgt}, ["x"],
                        lambda x, t=tgt: lax.bitcast_convert_type(x, dt(t))))
    return out


def build(arg, name, allprof):
    scalar = arg.startswith("s:")
    a = arg[2:] if scalar else arg
    if "@" in a:
        a, other = a.split("@")
        v = allprof[other][a]
    else:
        v = allprof[name][a]
    if scalar:
        v = v[:1].reshape(())
    return jnp.asarray(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(__file__), "..", "tests",
                                                      "fixtures"))
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    rng = np.random.default_rng(20261122)
    allprof = {n: profiles(n, rng) for n in DTYPES}
    versions = {"python": sys.version.split()[0], "jax": jax.__version__,
                "jaxlib": jax.lib.__version__ if hasattr(jax.lib, "__version__") else "",
                "numpy": np.__version__, "ml_dtypes": md.__version__}
    for group, prims in GROUPS.items():
        if args.only and group != args.only:
            continue
        cases = []
        used = set()
        for prim in prims:
            for name in DTYPES:
                for params, argnames, fn in cases_for(prim, name, allprof[name], allprof):
                    arrays = [build(a, name, allprof) for a in argnames]
                    c = {"prim": prim, "dtype": name, "args": argnames}
                    r = run(fn, arrays)
                    c.update(r)
                    if "params" not in c:
                        c["params"] = [[k, v] for k, v in params.items()]
                    c["prim"] = r.get("prim", prim)
                    for a in argnames:
                        used.add((name, a.split(":")[-1]))
                    cases.append(c)
        inputs = {}
        for name, a in sorted(used):
            inputs.setdefault(name, {})[a] = to_hex(allprof[name][a])
        header = {"generator": "tools/gen_lax_elementwise_fixtures.py", "versions": versions,
                  "library": "jax", "function": "jax.jit(lax.<prim>)(*args)",
                  "mode": {"x64": True, "platform": "cpu"}, "group": group,
                  "notes": {"hex": "little-endian bytes, one element per byte up to 8 bits",
                            "args": "input profile names; s: scalar of the first element"},
                  "inputs": inputs}
        path = os.path.join(args.out_dir, "lax_elementwise", f"{group}.json")
        fixturelib.write_fixture(path, header, cases)
        ok = sum(1 for c in cases if "out" in c)
        print(f"{path}: {len(cases)} cases, {ok} computed, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
