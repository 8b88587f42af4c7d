"""Structural primitives, reductions, cumulative reductions, iota and dot_general, asked of
real JAX (CPU, x64 on): random cases over a spread of dtypes and shapes (size-0 dimensions and
0-d arrays included), random valid parameters, and refusals. Writes
tests/fixtures/lax_structural/<group>.json.

Run with the pinned JAX venv:

    tools/.venv-jax/bin/python tools/gen_lax_structural_fixtures.py [--out-dir tests/fixtures]

Each case: {"prim", "params": [[name, value], ...] in the order jaxprs print them,
"jaxpr": the equation's parameters as `jax.make_jaxpr` prints them ("" for none),
"inputs": [{"dtype", "shape", "weak", "hex"}], then "out": {"dtype", "shape", "weak_type",
"hex"} or "error": {"kind", "message"}}. Values are the elements' little-endian bytes as NumPy
stores them (one byte per element for int4 and float8). Parameter values: an int, a list of
ints (a tuple), null (None), a bool, {"dtype": name}, {"padding": [[lo, hi, interior], ...]},
{"dot": [lhs_contracting, rhs_contracting, lhs_batch, rhs_batch]}.

Values come from `prim.bind(*inputs, **params)` (eager: XLA's CPU backend); refusals from
`jax.make_jaxpr` of the same bind (the primitive's own shape and dtype rules), first line.
"""

import argparse
import os
import random
import re
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

DTYPES = ["bool", "int8", "uint32", "int4", "float16", "bfloat16", "float8_e4m3fn",
          "float32", "float64", "complex64", "int32", "int64"]
NUMERIC = [d for d in DTYPES if d != "bool"]
PRIMS = {p.name: p for p in [
    lax.transpose_p, lax.squeeze_p, lax.rev_p, lax.slice_p, lax.dynamic_slice_p,
    lax.dynamic_update_slice_p, lax.concatenate_p, lax.pad_p, lax.iota_p,
    lax.reduce_sum_p, lax.reduce_prod_p, lax.reduce_max_p, lax.reduce_min_p,
    lax.reduce_and_p, lax.reduce_or_p, lax.argmax_p, lax.argmin_p,
    lax.cumsum_p, lax.cumprod_p, lax.cummax_p, lax.cummin_p, lax.dot_general_p]}


def dt(name):
    return np.dtype(getattr(md, name)) if hasattr(md, name) else np.dtype(name)


def values(rng, name, shape, special=False):
    n = int(np.prod(shape, dtype=np.int64))
    d = dt(name)
    if name == "bool":
        v = rng.integers(0, 2, n).astype(bool)
    elif name == "int4":
        v = rng.integers(-8, 8, n).astype(d)
    elif d.kind in "iu":
        info = np.iinfo(d)
        small = rng.random() < 0.5
        lo, hi = (-5, 6) if small else (int(info.min), int(info.max) + 1)
        lo = max(lo, int(info.min))
        v = rng.integers(lo, hi, n, dtype=np.int64 if d.kind == "i" else np.uint64).astype(d)
    elif d.kind == "c":
        v = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(d)
    else:
        scale = 4.0 if name in ("float8_e4m3fn", "float16", "bfloat16") else 100.0
        f = rng.standard_normal(n) * scale
        if special and n:
            for _ in range(rng.integers(1, 3)):
                f[rng.integers(0, n)] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0])
        if name == "float8_e4m3fn":
            f = np.where(np.isinf(f), np.nan, f)
        v = f.astype(d)
    return v.reshape(shape)


def hexof(a):
    return np.ascontiguousarray(a).tobytes().hex()


def weak(x):
    return lax_internal._convert_element_type(x, x.dtype, weak_type=True)


def encode_param(v):
    if v is None or isinstance(v, (bool, int)):
        return v
    if isinstance(v, np.dtype):
        return {"dtype": str(v)}
    return list(v)


def jaxpr_params(prim, args, params):
    try:
        j = jax.make_jaxpr(lambda *a: prim.bind(*a, **params))(*args)
    except Exception:
        return None
    text = j.pretty_print(use_color=False, width=100000)
    m = re.search(r"= " + prim.name + r"(\[.*?\])? ", text)
    return m.group(1) or "" if m else None


def case(prim_name, inputs, params, order, special_params=None):
    """inputs: list of (numpy value, weak flag)."""
    prim = PRIMS[prim_name]
    args = []
    for v, w in inputs:
        a = jnp.asarray(v)
        args.append(weak(a) if w else a)
    enc = []
    for k in order:
        val = params[k]
        if special_params and k in special_params:
            enc.append([k, special_params[k]])
        else:
            enc.append([k, encode_param(val)])
    c = {"prim": prim_name, "params": enc,
         "inputs": [{"dtype": str(np.asarray(v).dtype), "shape": list(np.shape(v)), "weak": w,
                     "hex": hexof(np.asarray(v))} for v, w in inputs]}
    try:
        jax.make_jaxpr(lambda *a: prim.bind(*a, **params))(*args)
    except Exception as e:  # the rules' refusal
        c["error"] = {"kind": type(e).__name__, "message": fixturelib.first_line(e)}
        return c
    c["jaxpr"] = jaxpr_params(prim, args, params)
    try:
        out = prim.bind(*args, **params)
    except Exception as e:
        c["error"] = {"kind": type(e).__name__, "message": fixturelib.first_line(e),
                      "at": "lowering"}
        return c
    o = np.asarray(out)
    c["out"] = {"dtype": str(o.dtype), "shape": list(o.shape), "weak_type": bool(out.weak_type),
                "hex": hexof(o)}
    return c


def rand_shape(rng, ndim=None, maxd=4, zero=0.1):
    if ndim is None:
        ndim = int(rng.integers(0, 5))
    return tuple(0 if rng.random() < zero else int(rng.integers(1, maxd + 1))
                 for _ in range(ndim))


def pick_dtype(rng, pool=DTYPES):
    return pool[int(rng.integers(0, len(pool)))]


def gen_structural(rng):
    cases = []
    for _ in range(60):  # transpose
        s = rand_shape(rng); d = pick_dtype(rng)
        perm = list(rng.permutation(len(s)))
        if rng.random() < 0.1:
            perm = perm[:-1] if perm else [0]
        cases.append(case("transpose", [(values(rng, d, s), bool(rng.random() < 0.2))],
                          {"permutation": tuple(int(p) for p in perm)}, ["permutation"]))
    for _ in range(40):  # squeeze
        s = tuple(1 if rng.random() < 0.5 else int(rng.integers(0, 4))
                  for _ in range(int(rng.integers(0, 5))))
        d = pick_dtype(rng)
        dims = [i for i, n in enumerate(s) if n == 1 and rng.random() < 0.7]
        if rng.random() < 0.15:
            dims.append(int(rng.integers(-1, len(s) + 2)))
        cases.append(case("squeeze", [(values(rng, d, s), False)],
                          {"dimensions": tuple(dims)}, ["dimensions"]))
    for _ in range(40):  # rev
        s = rand_shape(rng); d = pick_dtype(rng)
        dims = [i for i in range(len(s)) if rng.random() < 0.5]
        if rng.random() < 0.15:
            dims.append(int(rng.integers(-1, len(s) + 2)))
        cases.append(case("rev", [(values(rng, d, s), False)],
                          {"dimensions": tuple(dims)}, ["dimensions"]))
    for _ in range(70):  # slice
        s = rand_shape(rng, maxd=6); d = pick_dtype(rng)
        start, limit, strides = [], [], []
        for n in s:
            a = int(rng.integers(0, n + 1)); b = int(rng.integers(a, n + 1))
            start.append(a); limit.append(b); strides.append(int(rng.integers(1, 4)))
        if rng.random() < 0.15 and s:
            k = int(rng.integers(0, len(s)))
            r = rng.integers(0, 3)
            if r == 0: limit[k] = s[k] + 1
            elif r == 1: start[k] = limit[k] + 1
            else: start[k] = -1
        st = None if rng.random() < 0.4 else tuple(strides)
        cases.append(case("slice", [(values(rng, d, s), bool(rng.random() < 0.2))],
                          {"start_indices": tuple(start), "limit_indices": tuple(limit),
                           "strides": st}, ["limit_indices", "start_indices", "strides"]))
    for _ in range(60):  # dynamic_slice
        s = rand_shape(rng, ndim=int(rng.integers(1, 4)), maxd=5); d = pick_dtype(rng)
        it = pick_dtype(rng, ["int8", "int32", "int64", "uint32"])
        sizes = [int(rng.integers(0, n + 1)) for n in s]
        idx = [np.array(int(rng.integers(-3, n + 4)), dt(it)) if it != "uint32" else
               np.array(int(rng.integers(0, n + 4)), dt(it)) for n in s]
        if rng.random() < 0.1:
            sizes[0] = s[0] + 1
        if rng.random() < 0.1:
            idx[0] = idx[0].astype(np.int16)
        cases.append(case("dynamic_slice", [(values(rng, d, s), False)] +
                          [(i, False) for i in idx], {"slice_sizes": tuple(sizes)},
                          ["slice_sizes"]))
    for _ in range(50):  # dynamic_update_slice
        s = rand_shape(rng, ndim=int(rng.integers(1, 4)), maxd=5); d = pick_dtype(rng)
        it = pick_dtype(rng, ["int8", "int32", "int64"])
        us = tuple(int(rng.integers(0, n + 1)) for n in s)
        ud = d
        if rng.random() < 0.1:
            us = us + (1,)
        if rng.random() < 0.1:
            ud = pick_dtype(rng)
        idx = [np.array(int(rng.integers(-3, n + 4)), dt(it)) for n in s]
        w = bool(rng.random() < 0.2)
        cases.append(case("dynamic_update_slice",
                          [(values(rng, d, s), w), (values(rng, ud, us), w)] +
                          [(i, False) for i in idx], {}, []))
    for _ in range(50):  # concatenate
        s = rand_shape(rng, ndim=int(rng.integers(1, 4)), maxd=4); d = pick_dtype(rng)
        dim = int(rng.integers(0, len(s)))
        ops = []
        for _ in range(int(rng.integers(1, 4))):
            t = list(s); t[dim] = int(rng.integers(0, 4))
            ops.append(values(rng, d, tuple(t)))
        if rng.random() < 0.1:
            dim = len(s)
        if rng.random() < 0.1:
            ops.append(values(rng, pick_dtype(rng), s))
        if rng.random() < 0.05:
            ops.append(values(rng, d, s + (1,)))
        cases.append(case("concatenate", [(o, False) for o in ops], {"dimension": dim},
                          ["dimension"]))
    for _ in range(60):  # pad
        s = rand_shape(rng, ndim=int(rng.integers(0, 4)), maxd=4); d = pick_dtype(rng)
        cfg = [(int(rng.integers(-2, 3)), int(rng.integers(-2, 3)), int(rng.integers(0, 3)))
               for _ in s]
        pv = values(rng, d, ())
        if rng.random() < 0.08:
            cfg = cfg[:-1]
        if rng.random() < 0.05 and cfg:
            cfg[0] = (0, 0, -1)
        if rng.random() < 0.05:
            pv = values(rng, pick_dtype(rng), ())
        x = values(rng, d, s)
        try:
            case_ = case("pad", [(x, False), (pv, False)],
                         {"padding_config": tuple(cfg)}, ["padding_config"],
                         {"padding_config": {"padding": [list(c) for c in cfg]}})
        except Exception as e:  # noqa: BLE001
            raise
        cases.append(case_)
    for _ in range(30):  # iota
        s = rand_shape(rng, ndim=int(rng.integers(1, 4)), maxd=5)
        d = pick_dtype(rng, DTYPES)
        dim = int(rng.integers(0, len(s) + (1 if rng.random() < 0.1 else 0)))
        cases.append(case("iota", [], {"dtype": dt(d), "shape": s, "dimension": dim,
                                       "sharding": None},
                          ["dimension", "dtype", "shape", "sharding"]))
    for _ in range(30):  # lax.expand_dims (a function binding broadcast_in_dim)
        s = rand_shape(rng, maxd=3); d = pick_dtype(rng)
        n_out = len(s) + int(rng.integers(0, 3))
        dims = [int(rng.integers(-n_out - 1, n_out + 1)) for _ in range(n_out - len(s))]
        cases.append(expand_dims_case(values(rng, d, s), tuple(dims)))
    return cases


def expand_dims_case(x, dims):
    """`lax.expand_dims(x, dims)`: the equation it stages, its output, or its refusal."""
    c = {"fn": "expand_dims", "dims": list(dims),
         "inputs": [{"dtype": str(x.dtype), "shape": list(x.shape), "weak": False,
                     "hex": hexof(x)}]}
    try:
        j = jax.make_jaxpr(lambda a: lax.expand_dims(a, dims))(jnp.asarray(x))
        out = lax.expand_dims(jnp.asarray(x), dims)
    except Exception as e:  # noqa: BLE001
        c["error"] = {"kind": type(e).__name__, "message": fixturelib.first_line(e)}
        return c
    eqns = [str(e.primitive) for e in j.eqns]
    text = j.pretty_print(use_color=False, width=100000)
    m = re.search(r"= (\w+)(\[.*?\])? ", text)
    c["staged"] = (m.group(1) + (m.group(2) or "")) if m else ""
    c["eqns"] = eqns
    o = np.asarray(out)
    c["out"] = {"dtype": str(o.dtype), "shape": list(o.shape), "weak_type": bool(out.weak_type),
                "hex": hexof(o)}
    return c


def gen_reduce(rng):
    cases = []
    specs = [("reduce_sum", ["out_sharding"]), ("reduce_prod", []), ("reduce_max", []),
             ("reduce_min", []), ("reduce_and", []), ("reduce_or", [])]
    for name, extra in specs:
        for _ in range(45):
            s = rand_shape(rng, maxd=5)
            pool = (["bool", "int8", "uint32", "int32", "int64", "int4"]
                    if name in ("reduce_and", "reduce_or") else DTYPES)
            if rng.random() < 0.05:
                pool = DTYPES
            d = pick_dtype(rng, pool)
            axes = [i for i in range(len(s)) if rng.random() < 0.5]
            rng.shuffle(axes)
            if rng.random() < 0.1 and name not in ("reduce_and", "reduce_or"):
                axes.append(int(rng.integers(0, len(s) + 2)) if axes or s else 0)
            params = {"axes": tuple(int(a) for a in axes)}
            for e in extra:
                params[e] = None
            cases.append(case(name, [(values(rng, d, s, special=rng.random() < 0.3),
                                      bool(rng.random() < 0.2))], params, ["axes"] + extra))
    # long float sums and products (the accumulation order)
    for name in ("reduce_sum", "reduce_prod", "reduce_max"):
        for d in ("float32", "float64", "float16", "bfloat16"):
            for n in (100, 1000):
                x = values(rng, d, (n,))
                if name == "reduce_prod":
                    x = (1 + values(rng, d, (n,)).astype(np.float64) / 2000).astype(dt(d))
                params = {"axes": (0,)}
                order = ["axes"]
                if name == "reduce_sum":
                    params["out_sharding"] = None
                    order.append("out_sharding")
                cases.append(case(name, [(x, False)], params, order))
    for name in ("argmax", "argmin"):
        for _ in range(45):
            s = rand_shape(rng, ndim=int(rng.integers(1, 4)), maxd=5, zero=0.05)
            d = pick_dtype(rng, [x for x in DTYPES if x != "complex64"] +
                           (["complex64"] if rng.random() < 0.1 else []))
            axis = int(rng.integers(0, len(s) + (1 if rng.random() < 0.1 else 0)))
            idt = pick_dtype(rng, ["int32", "int64", "int8", "uint32"] +
                             (["float32"] if rng.random() < 0.1 else []))
            x = values(rng, d, s, special=rng.random() < 0.5)
            if d.startswith("int") or d.startswith("uint"):
                x = (x % 3).astype(x.dtype) if d != "int4" else x
            cases.append(case(name, [(x, False)],
                              {"axes": (axis,), "index_dtype": dt(idt)}, ["axes", "index_dtype"]))
    for name in ("cumsum", "cumprod", "cummax", "cummin"):
        for _ in range(35):
            s = rand_shape(rng, ndim=int(rng.integers(1, 4)), maxd=6)
            d = pick_dtype(rng)
            axis = int(rng.integers(-1 if rng.random() < 0.05 else 0,
                                    len(s) + (1 if rng.random() < 0.08 else 0)))
            x = values(rng, d, s, special=rng.random() < 0.3)
            if name == "cumprod" and dt(d).kind == "f":
                x = (1 + x.astype(np.float64) / 200).astype(x.dtype)
            cases.append(case(name, [(x, bool(rng.random() < 0.2))],
                              {"axis": axis, "reverse": bool(rng.random() < 0.5)},
                              ["axis", "reverse"]))
    return cases


def gen_long(rng):
    cases = []
    # long scans (XLA's blocked rewrite beyond 16 elements, recursive beyond 256)
    for name in ("cumsum", "cumprod", "cummax"):
        for d in ("float32", "float64", "float16", "bfloat16"):
            for shape, axis in (((17,), 0), ((40,), 0), ((3, 300), 1), ((1000,), 0), ((5000,), 0)):
                if shape[-1] >= 1000 and (name != "cumsum" or shape[-1] == 5000 and
                                          d != "float32"):
                    continue
                x = values(rng, d, shape, special=name == "cummax")
                if name == "cumprod":
                    x = (1 + x.astype(np.float64) / 2000).astype(x.dtype)
                for rev in (False, True):
                    cases.append(case(name, [(x, False)], {"axis": axis, "reverse": rev},
                                      ["axis", "reverse"]))
    # long and multi-dimensional sums (XLA's tree rewrite; its library kernel from 4096
    # float32/float64 elements)
    for d in ("float32", "float64", "float16", "bfloat16", "complex64"):
        for shape, axes in (((2000,), (0,)), ((33, 70), (0,)), ((33, 70), (1,)),
                            ((40, 3, 50), (0, 2)), ((5000,), (0,)), ((70, 70), (0, 1)),
                            ((6, 7), (0, 1)), ((100, 3), (0,))):
            if d == "complex64" and len(shape) * shape[0] > 100:
                continue  # keeps the file small
            x = values(rng, d, shape)
            cases.append(case("reduce_sum", [(x, False)], {"axes": axes, "out_sharding": None},
                              ["axes", "out_sharding"]))
    return cases


def gen_dot(rng):
    cases = []
    for _ in range(120):
        nb, nc, nlf, nrf = (int(rng.integers(0, 2)), int(rng.integers(0, 3)),
                            int(rng.integers(0, 3)), int(rng.integers(0, 3)))
        bsz = [int(rng.integers(1, 4)) for _ in range(nb)]
        csz = [int(rng.integers(0 if rng.random() < 0.1 else 1, 5)) for _ in range(nc)]
        lf = [int(rng.integers(1, 5)) for _ in range(nlf)]
        rf = [int(rng.integers(1, 5)) for _ in range(nrf)]
        lroles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nlf)]
        rroles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nrf)]
        rng.shuffle(lroles); rng.shuffle(rroles)
        size = {"b": bsz, "c": csz}
        lshape = tuple(size[r][i] if r != "f" else lf[i] for r, i in lroles)
        rshape = tuple(size[r][i] if r != "f" else rf[i] for r, i in rroles)
        pos = lambda roles, kind: [roles.index((kind, i)) for i in range(nb if kind == "b" else nc)]
        lc, rc, lb, rb = pos(lroles, "c"), pos(rroles, "c"), pos(lroles, "b"), pos(rroles, "b")
        d = pick_dtype(rng, ["int8", "uint32", "int32", "float16", "bfloat16", "float32",
                             "float64", "complex64", "bool", "int64"])
        d2 = d
        if rng.random() < 0.1:
            d2 = pick_dtype(rng, ["int8", "int32", "float16", "float32", "float64"])
        pref = None
        if rng.random() < 0.15:
            pref = dt(pick_dtype(rng, ["int32", "int64", "float32", "float64", "float16",
                                       "bfloat16", "int8"]))
        if rng.random() < 0.1 and rc:
            rc = rc[:-1]
        if rng.random() < 0.05 and lc:
            lc[0] = len(lshape)
        dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
        params = {"dimension_numbers": dn, "precision": None,
                  "preferred_element_type": pref, "out_sharding": None}
        spec = {"dimension_numbers": {"dot": [lc, rc, lb, rb]}}
        cases.append(case("dot_general",
                          [(values(rng, d, lshape), bool(rng.random() < 0.1)),
                           (values(rng, d2, rshape), bool(rng.random() < 0.1))],
                          params, ["dimension_numbers", "out_sharding", "precision",
                                   "preferred_element_type"], spec))
    # the narrow dtypes: int4, float8
    for d in ("int4", "float8_e4m3fn", "int4", "float8_e4m3fn"):
        for (m, k, n) in ((3, 4, 2), (2, 40, 3)):
            params = {"dimension_numbers": (((1,), (0,)), ((), ())), "precision": None,
                      "preferred_element_type": None, "out_sharding": None}
            spec = {"dimension_numbers": {"dot": [[1], [0], [], []]}}
            cases.append(case("dot_general", [(values(rng, d, (m, k)), False),
                                              (values(rng, d, (k, n)), False)], params,
                              ["dimension_numbers", "out_sharding", "precision",
                               "preferred_element_type"], spec))
    # a few bigger float32/float64 products (the accumulation order)
    for d in ("float32", "float64", "float16", "bfloat16"):
        for (m, k, n) in ((8, 300, 5), (17, 64, 9)):
            lc, rc = [1], [0]
            params = {"dimension_numbers": (((1,), (0,)), ((), ())), "precision": None,
                      "preferred_element_type": None, "out_sharding": None}
            spec = {"dimension_numbers": {"dot": [lc, rc, [], []]}}
            cases.append(case("dot_general", [(values(rng, d, (m, k)), False),
                                              (values(rng, d, (k, n)), False)], params,
                              ["dimension_numbers", "out_sharding", "precision",
                               "preferred_element_type"], spec))
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(__file__), "..", "tests",
                                                      "fixtures"))
    args = ap.parse_args()
    header = {"generator": "tools/gen_lax_structural_fixtures.py",
              "versions": {"python": sys.version.split()[0], "jax": jax.__version__,
                           "numpy": np.__version__, "ml_dtypes": md.__version__},
              "mode": {"x64": True}}
    for group, gen, seed in (("structural", gen_structural, 1), ("reduce", gen_reduce, 2),
                             ("dot", gen_dot, 3), ("long", gen_long, 4)):
        rng = np.random.default_rng(seed)
        cases = gen(rng)
        path = os.path.join(args.out_dir, "lax_structural", f"{group}.json")
        fixturelib.write_fixture(path, dict(header, group=group), cases)
        errs = sum(1 for c in cases if "error" in c)
        print(f"{path}: {len(cases)} cases ({errs} refusals), {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
