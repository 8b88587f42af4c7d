"""jax.numpy's searching, set and cumulative functions against JAX 0.10.2: `jnp.lexsort`,
`jnp.searchsorted` (every side and method, with and without `sorter`, Python-scalar queries),
`jnp.partition` and `jnp.argpartition` (negative `kth`, every axis; JAX's exact output order,
built on `lax.top_k`), `jnp.unique` (with and without `size` and `fill_value`, every
`return_*`, axes, `equal_nan`), `jnp.nonzero`, `jnp.argwhere`, `jnp.flatnonzero` (with `size`
smaller and larger than the count, `fill_value` scalar or per dimension), and the cumulative
functions `jnp.cumsum`, `cumprod`, `nancumsum`, `nancumprod`, `cumulative_sum`,
`cumulative_prod` (`axis`, `dtype`, `include_initial`), over NaNs of both signs, signed zeros,
ties, ints, unsigned ints, bool, float16, bfloat16, empty arrays, x64 on and off; JAX's errors
(class and message, the ConcretizationTypeError of the concrete-only paths under `jit`).

Each case is a described call that `crates/dtype-lattice-array/tests/it/jnp_sorting.rs` makes
through `dtype_lattice_array::numpy`:

    {"name", "fn", "kw": {keyword: value},   # the call's keywords as the Rust side reads them:
                                             # ints, bools, strings, null, dtype names, and
                                             # Python scalars as {"int"|"float"|"bool": v}
     "x64": bool,
     "args": [array...],                     # every array argument (all traced under jit)
     "eager": [array...] | {"error": {"kind", "message"}},
     "jit": ... ,                            # under jax.jit
     "text": str | {"error": ...},           # str(jax.make_jaxpr(f)(*args))
     "consts": [array...],                   # that closed jaxpr's constants
     "grad": [array...]}                     # float cumulative cases: jax.grad of
                                             # sum(sin(f(x))) in x, under jit

    tools/.venv-jax/bin/python tools/gen_jnp_sorting_fixtures.py \
        > tests/fixtures/indexing/jnp_sorting.json
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from gen_jaxpr_fixtures import attempt as attempt_first_line, enc, leaves

CASES = []


def attempt(fn):
    """`gen_jaxpr_fixtures.attempt` keeping the whole message."""
    return attempt_first_line(fn, whole=True)


def case(name, fn, args, x64=False, grad=False, **kw):
    CASES.append(dict(name=name, fn=fn, args=args, kw=kw, x64=x64, grad=grad))


def scalar(v):
    if isinstance(v, dict):
        (k, x), = v.items()
        return {"int": int, "float": float, "bool": bool}[k](x)
    if isinstance(v, list):
        return tuple(scalar(x) for x in v)
    return v


def program(c):
    fn, kw = c["fn"], dict(c["kw"])
    for k in ["fill_value", "v"]:
        if k in kw:
            kw[k] = scalar(kw[k])
    if "dtype" in kw and kw["dtype"] is not None:
        kw["dtype"] = jnp.dtype(kw["dtype"])

    def f(*args):
        if fn == "lexsort":
            return jnp.lexsort(args, axis=kw.get("axis", -1))
        if fn == "searchsorted":
            a, rest = args[0], list(args[1:])
            v = scalar(kw["v"]) if "v" in kw else rest.pop(0)
            sorter = rest.pop(0) if rest else None
            return jnp.searchsorted(a, v, side=kw.get("side", "left"), sorter=sorter,
                                    method=kw.get("method", "scan"))
        x = args[0]
        if fn in ("partition", "argpartition"):
            return getattr(jnp, fn)(x, kw["kth"], axis=kw.get("axis", -1))
        if fn == "unique":
            return jnp.unique(x, **kw)
        if fn in ("nonzero", "argwhere", "flatnonzero"):
            return getattr(jnp, fn)(x, **kw)
        return getattr(jnp, fn)(x, **kw)

    return f


def record(c):
    jax.config.update("jax_enable_x64", c["x64"])
    args = [jnp.asarray(np.asarray(a)) for a in c["args"]]
    f = program(c)
    out = {k: c[k] for k in ["name", "fn", "kw", "x64"]}
    out["args"] = [enc(a) for a in args]
    out["eager"] = attempt(lambda: leaves(f(*args)))
    out["jit"] = attempt(lambda: leaves(jax.jit(f)(*args)))
    out["text"] = attempt(lambda: str(jax.make_jaxpr(f)(*args)))
    if isinstance(out["text"], str):
        out["consts"] = [enc(k) for k in jax.make_jaxpr(f)(*args).consts]
    if c["grad"]:
        def loss(x, *rest):
            return jnp.sum(jnp.sin(f(x, *rest).astype(jnp.float32)))
        out["grad"] = attempt(lambda: leaves(jax.jit(jax.grad(loss))(*args)))
    return out


def arr(shape, dtype, seed=0, lo=-9, hi=9):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(lo, info.min), min(hi, info.max) + 1, shape).astype(dt)
    return (rng.integers(lo, hi + 1, shape) / 2).astype(dt)


I32, F32 = np.int32, np.float32
nan = np.float32(np.nan)
BF16 = ml_dtypes.bfloat16

# --- lexsort ---------------------------------------------------------------------------------
k1 = np.array([4, 2, 3, 2, 5, 2, 3], I32)
k2 = np.array([2, 1, 1, 2, 2, 1, 1], I32)
kf = np.array([1.0, nan, -0.0, 0.0, -nan, 1.0, np.inf], F32)
case("lexsort_one", "lexsort", [k1])
case("lexsort_two", "lexsort", [k1, k2])
case("lexsort_three", "lexsort", [k2, kf, k2[::-1].copy()])
case("lexsort_float_nan_zero", "lexsort", [np.arange(7, dtype=F32)[::-1].copy(), kf])
case("lexsort_2d", "lexsort", [arr((3, 5), I32, 1, 0, 2), arr((3, 5), I32, 2, 0, 2)])
case("lexsort_2d_axis0", "lexsort", [arr((4, 3), I32, 3, 0, 2), arr((4, 3), F32, 4, 0, 2)],
     axis=0)
case("lexsort_bool_uint8", "lexsort", [arr((9,), bool, 5), arr((9,), np.uint8, 6, 0, 3)])
case("lexsort_f16_bf16", "lexsort", [arr((8,), np.float16, 7, -2, 2), arr((8,), BF16, 8, -1, 1)])
case("lexsort_0d", "lexsort", [np.array(3, I32)])
case("lexsort_empty", "lexsort", [np.zeros((0,), F32), np.zeros((0,), I32)])
case("lexsort_shapes_differ", "lexsort", [k1, k1[:3].copy()])
case("lexsort_x64", "lexsort", [k1.astype(np.int64), kf.astype(np.float64)], x64=True)
case("lexsort_bad_axis", "lexsort", [k1], axis=2)

# --- searchsorted ----------------------------------------------------------------------------
srt = np.array([-np.inf, -2.0, -0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 3.5, np.inf, nan, nan], F32)
q = np.array([[-np.inf, -3.0, -2.0, 0.0], [-0.0, 1.0, 2.0, nan], [-nan, np.inf, 3.5, 9.0]], F32)
srt_i = np.array([-5, -1, 0, 0, 2, 2, 2, 7, 100], I32)
q_i = np.array([-6, -5, 0, 1, 2, 7, 8, 100, 101], I32)
unsorted = np.array([3.0, -1.0, 2.0, 2.0, 0.0, 7.0, nan, 1.0], F32)
q_u = np.array([-2.0, 0.0, 1.5, 2.0, 3.0, 8.0, nan], F32)
big = np.sort(arr((1000,), F32, 9, -300, 300))
q_big = arr((200,), F32, 10, -320, 320)
METHODS = ["scan", "scan_unrolled", "compare_all", "sort"]
for method in METHODS:
    for side in ["left", "right"]:
        tag = f"{method}_{side}"
        case(f"ss_float_{tag}", "searchsorted", [srt, q], side=side, method=method)
        case(f"ss_int_{tag}", "searchsorted", [srt_i, q_i], side=side, method=method)
        case(f"ss_unsorted_{tag}", "searchsorted", [unsorted, q_u], side=side, method=method)
        case(f"ss_sorter_{tag}", "searchsorted",
             [unsorted, q_u, np.argsort(unsorted, kind="stable").astype(I32)],
             side=side, method=method)
        case(f"ss_big_{tag}", "searchsorted", [big, q_big], side=side, method=method)
        case(f"ss_empty_a_{tag}", "searchsorted", [np.zeros((0,), F32), q], side=side,
             method=method)
        case(f"ss_empty_v_{tag}", "searchsorted", [srt, np.zeros((2, 0), F32)], side=side,
             method=method)
        case(f"ss_scalar_{tag}", "searchsorted", [srt_i], v={"float": 1.5}, side=side,
             method=method)
        case(f"ss_x64_{tag}", "searchsorted", [srt.astype(np.float64), q.astype(np.float64)],
             side=side, method=method, x64=True)
    case(f"ss_bool_{method}", "searchsorted", [np.array([False, False, True]),
                                               np.array([True, False])], method=method)
    case(f"ss_uint8_{method}", "searchsorted",
         [np.array([0, 3, 3, 250, 255], np.uint8), np.array([255, 0, 3, 251], np.uint8)],
         side="right", method=method)
    case(f"ss_f16_{method}", "searchsorted",
         [np.array([-1.0, -0.0, 0.5, 0.5, np.inf, np.nan], np.float16),
          np.array([0.0, 0.5, np.nan, -np.inf], np.float16)], method=method)
    case(f"ss_bf16_{method}", "searchsorted",
         [np.array([-1.0, 0.0, 0.5, 0.5, 2.0], BF16), np.array([0.5, -0.0, 3.0], BF16)],
         side="right", method=method)
case("ss_promote_int_float", "searchsorted", [srt_i, np.array([0.5, -1.0, 7.0], F32)])
case("ss_promote_int8_int16", "searchsorted", [np.array([-3, 0, 5], np.int8),
                                               np.array([[0, 5], [300, -300]], np.int16)],
     side="right")
case("ss_complex", "searchsorted", [np.array([1 - 1j, 1 + 0j, 1 + 2j, 3 + 0j], np.complex64),
                                    np.array([1 + 1j, 0 + 5j, 3 + 0j], np.complex64)])
case("ss_x64_int", "searchsorted", [np.array([1, 5, 9], np.int64), np.array([5, 10], np.int64)],
     side="right", x64=True)
case("ss_0d_query", "searchsorted", [srt, np.array(0.0, F32)], side="right")
case("ss_complex_sort", "searchsorted",
     [np.array([1 - 1j, 1 + 0j, 1 + 2j, 3 + 0j], np.complex64),
      np.array([1 + 1j, 0 + 5j, 3 + 0j, complex(np.nan, 0)], np.complex64)], method="sort")
case("ss_bad_side", "searchsorted", [srt, q], side="middle")
case("ss_bad_method", "searchsorted", [srt, q], method="bisect")
case("ss_2d_a", "searchsorted", [arr((2, 3), F32, 11), q])

# --- partition, argpartition -----------------------------------------------------------------
pf = np.array([6.0, 8.0, -0.0, 3.0, nan, 0.0, 3.0, -nan, -np.inf, 2.0, 3.0], F32)
pi = np.array([6, 8, 4, 3, 1, 9, 7, 5, 2, 3, 3], I32)
pu = np.array([6, 0, 255, 3, 0, 9, 7, 5, 2, 3], np.uint8)
p2 = arr((4, 6), I32, 12, -3, 3)
for fn in ["partition", "argpartition"]:
    for kth in [0, 4, -1, -3, 10]:
        case(f"{fn}_float_k{kth}", fn, [pf], kth=kth)
        case(f"{fn}_int_k{kth}", fn, [pi], kth=kth)
    case(f"{fn}_uint8_k2", fn, [pu], kth=2)
    case(f"{fn}_uint8_k0", fn, [pu], kth=0)
    case(f"{fn}_uint8_klast", fn, [pu], kth=-1)
    case(f"{fn}_int8_min", fn, [np.array([-128, 5, 127, -128, 0], np.int8)], kth=1)
    case(f"{fn}_2d_axis1", fn, [p2], kth=2)
    case(f"{fn}_2d_axis0", fn, [p2], kth=-2, axis=0)
    case(f"{fn}_3d_axis1", fn, [arr((2, 5, 3), F32, 13, -4, 4)], kth=3, axis=1)
    case(f"{fn}_f16", fn, [arr((7,), np.float16, 14, -3, 3)], kth=2)
    case(f"{fn}_bf16", fn, [arr((7,), BF16, 15, -3, 3)], kth=5)
    case(f"{fn}_bool", fn, [np.array([True, False, True])], kth=1)
    case(f"{fn}_complex", fn, [np.array([1 + 1j, 0j], np.complex64)], kth=0)
    case(f"{fn}_kth_out_of_range", fn, [pi], kth=11)
    case(f"{fn}_kth_neg_out_of_range", fn, [pi], kth=-12)
    case(f"{fn}_bad_axis", fn, [pi], kth=1, axis=1)
    case(f"{fn}_x64", fn, [pf.astype(np.float64)], kth=3, x64=True)
    case(f"{fn}_x64_int", fn, [pi.astype(np.int64)], kth=-4, x64=True)
    case(f"{fn}_single", fn, [np.array([2.5], F32)], kth=0)
    case(f"{fn}_0d", fn, [np.array(2.5, F32)], kth=0)
    # NumPy's sequence of kth: JAX's kth is static and must be hashable (the Rust `kth` is
    # one integer, so the test only checks that JAX refuses these).
    case(f"{fn}_kth_list", fn, [pi], kth=[1, 3])

# --- unique ----------------------------------------------------------------------------------
uf = np.array([3.0, nan, 1.0, -0.0, 3.0, 0.0, -nan, 1.0, 2.0, nan], F32)
ui = np.array([[3, 1, 3], [0, 1, 2], [3, 1, 3], [0, 1, 2]], I32)
RETURNS = [(False, False, False), (True, False, False), (False, True, False),
           (False, False, True), (True, True, True)]
for ri, rv, rc in RETURNS:
    tag = "".join(t for t, on in [("i", ri), ("v", rv), ("c", rc)] if on) or "plain"
    flags = dict(return_index=ri, return_inverse=rv, return_counts=rc)
    case(f"unique_float_{tag}", "unique", [uf], **flags)
    case(f"unique_float_no_equal_nan_{tag}", "unique", [uf], equal_nan=False, **flags)
    case(f"unique_2d_flat_{tag}", "unique", [ui], **flags)
    case(f"unique_2d_axis0_{tag}", "unique", [ui], axis=0, **flags)
    case(f"unique_2d_axis1_{tag}", "unique", [ui], axis=-1, **flags)
    case(f"unique_size_{tag}", "unique", [uf], size=3, **flags)
    case(f"unique_size_large_{tag}", "unique", [uf], size=8, **flags)
    case(f"unique_size_fill_{tag}", "unique", [uf], size=8, fill_value={"float": -7.5}, **flags)
    case(f"unique_size_axis0_fill_{tag}", "unique", [ui], size=4, axis=0,
         fill_value={"int": 9}, **flags)
    case(f"unique_empty_{tag}", "unique", [np.zeros((0,), F32)], **flags)
    case(f"unique_empty_size_fill_{tag}", "unique", [np.zeros((0,), F32)], size=2,
         fill_value={"float": 1.0}, **flags)
case("unique_bool", "unique", [np.array([True, False, True, True])], return_counts=True)
case("unique_uint8_size", "unique", [arr((12,), np.uint8, 16, 0, 5)], size=4,
     return_inverse=True)
case("unique_f16", "unique", [np.array([1.0, np.nan, -0.0, 0.0, 1.0, np.nan], np.float16)],
     return_counts=True)
case("unique_bf16_size_fill", "unique", [arr((9,), BF16, 17, -2, 2)], size=6,
     fill_value={"int": 100})
case("unique_x64", "unique", [uf.astype(np.float64)], return_index=True, return_inverse=True,
     return_counts=True, x64=True)
case("unique_x64_size", "unique", [np.array([5, 1, 5, 2], np.int64)], size=5,
     return_inverse=True, return_counts=True, x64=True)
case("unique_empty_size_no_fill", "unique", [np.zeros((0,), F32)], size=2)
case("unique_3d_axis1", "unique", [arr((2, 4, 2), I32, 18, 0, 1)], axis=1, return_inverse=True,
     return_counts=True)
case("unique_bad_axis", "unique", [ui], axis=2)
case("unique_complex", "unique", [np.array([1 + 1j, complex(np.nan, 1), 1 + 1j, 0j,
                                            complex(1, np.nan), -0.0 + 0j], np.complex64)],
     return_inverse=True, return_counts=True)
case("unique_complex_size", "unique", [np.array([2 + 1j, 1 + 1j, 2 + 1j], np.complex64)],
     size=3, fill_value={"float": 0.5}, return_index=True)
case("unique_0d", "unique", [np.array(4.0, F32)], return_inverse=True)

# --- nonzero, argwhere, flatnonzero ----------------------------------------------------------
nz2 = np.array([[0, 5, 0, -1], [6, 0, 8, 0], [0, 0, 0, 3]], I32)
nzf = np.array([0.0, -0.0, nan, 1.0, 0.0, -2.0], F32)
for fn in ["nonzero", "argwhere", "flatnonzero"]:
    case(f"{fn}_2d", fn, [nz2])
    case(f"{fn}_2d_size_small", fn, [nz2], size=3)
    case(f"{fn}_2d_size_large", fn, [nz2], size=9)
    case(f"{fn}_2d_size_fill", fn, [nz2], size=9, fill_value={"int": -1})
    case(f"{fn}_2d_size_zero", fn, [nz2], size=0)
    case(f"{fn}_float", fn, [nzf])
    case(f"{fn}_float_size_fill", fn, [nzf], size=5, fill_value={"int": 99})
    case(f"{fn}_bool", fn, [arr((3, 2, 2), bool, 19)])
    case(f"{fn}_bool_size", fn, [arr((3, 2, 2), bool, 19)], size=4)
    case(f"{fn}_empty", fn, [np.zeros((2, 0), F32)])
    case(f"{fn}_empty_size", fn, [np.zeros((0,), I32)], size=2, fill_value={"int": 7})
    case(f"{fn}_all_zero", fn, [np.zeros((4,), np.uint8)])
    case(f"{fn}_0d", fn, [np.array(3, I32)])
    case(f"{fn}_0d_zero", fn, [np.array(0.0, F32)])
    case(f"{fn}_bf16", fn, [np.array([0.0, 1.5, -0.0, 2.0], BF16)], size=3)
    case(f"{fn}_x64", fn, [nz2.astype(np.int64)], x64=True)
    case(f"{fn}_x64_size_fill", fn, [nz2.astype(np.float64)], size=8, fill_value={"int": -2},
         x64=True)
    case(f"{fn}_fill_float", fn, [nz2], size=8, fill_value={"float": 1.5})
case("nonzero_fill_tuple", "nonzero", [nz2], size=8, fill_value=[{"int": -1}, {"int": -2}])
case("nonzero_fill_tuple_short", "nonzero", [nz2], size=8, fill_value=[{"int": -1}])

# --- cumulative ------------------------------------------------------------------------------
c3 = arr((3, 4, 2), F32, 20, -4, 4)
cf = np.array([1.5, nan, -0.0, 2.0, -nan, 0.5, 3.0], F32)
ci8 = np.array([[100, 50, -7], [120, 3, 9]], np.int8)
cu8 = np.array([[200, 50, 7], [120, 3, 9]], np.uint8)
cb = np.array([[True, False, True], [True, True, False]])
c2f = arr((3, 4), F32, 21, -3, 3)
CUM = ["cumsum", "cumprod", "nancumsum", "nancumprod"]
for fn in CUM:
    case(f"{fn}_flat", fn, [c3], grad=fn in ("cumsum", "cumprod"))
    for ax in [0, 1, -1]:
        case(f"{fn}_axis{ax}", fn, [c3], axis=ax, grad=True)
    case(f"{fn}_nan", fn, [cf], grad=True)
    case(f"{fn}_int8", fn, [ci8], axis=1)
    case(f"{fn}_int8_flat", fn, [ci8])
    case(f"{fn}_uint8", fn, [cu8], axis=0)
    case(f"{fn}_bool", fn, [cb], axis=1)
    case(f"{fn}_bool_flat", fn, [cb])
    case(f"{fn}_dtype_f32", fn, [ci8], axis=0, dtype="float32")
    case(f"{fn}_dtype_int16", fn, [ci8], axis=1, dtype="int16")
    case(f"{fn}_dtype_bool", fn, [ci8], axis=1, dtype="bool")
    case(f"{fn}_dtype_int8_of_f32", fn, [c2f], axis=1, dtype="int8")
    case(f"{fn}_f16", fn, [arr((6,), np.float16, 22, -4, 4)], axis=0)
    case(f"{fn}_bf16", fn, [arr((2, 5), BF16, 23, -4, 4)], axis=1)
    case(f"{fn}_0d", fn, [np.array(2.5, F32)])
    case(f"{fn}_0d_axis0", fn, [np.array(2.5, F32)], axis=0)
    case(f"{fn}_empty", fn, [np.zeros((2, 0), F32)], axis=1)
    case(f"{fn}_bad_axis", fn, [c3], axis=3)
    case(f"{fn}_x64", fn, [c2f.astype(np.float64)], axis=1, x64=True)
    case(f"{fn}_x64_int8", fn, [ci8], axis=1, x64=True)
    case(f"{fn}_x64_bool", fn, [cb], x64=True)
    case(f"{fn}_x64_dtype_int64", fn, [ci8], axis=0, dtype="int64", x64=True)
    case(f"{fn}_complex", fn, [np.array([1 + 1j, 2 - 1j, np.nan + 0j], np.complex64)])
    case(f"{fn}_int_overflow", fn, [np.array([2 ** 20, 2 ** 12, 3], I32)])
    case(f"{fn}_dtype_complex", fn, [c2f], axis=0, dtype="complex64")
    case(f"{fn}_uint8_flat_wrap", fn, [cu8])
for fn in ["cumulative_sum", "cumulative_prod"]:
    for init in [False, True]:
        t = "_init" if init else ""
        case(f"{fn}_1d{t}", fn, [cf], include_initial=init, grad=True)
        case(f"{fn}_axis1{t}", fn, [c2f], axis=1, include_initial=init, grad=True)
        case(f"{fn}_axis0{t}", fn, [c2f], axis=0, include_initial=init)
        case(f"{fn}_int8{t}", fn, [ci8], axis=-1, include_initial=init)
        case(f"{fn}_uint8{t}", fn, [cu8], axis=0, include_initial=init)
        case(f"{fn}_bool{t}", fn, [cb], axis=1, include_initial=init)
        case(f"{fn}_dtype_int16{t}", fn, [ci8], axis=1, dtype="int16", include_initial=init)
        case(f"{fn}_dtype_bool{t}", fn, [ci8], axis=1, dtype="bool", include_initial=init)
        case(f"{fn}_empty{t}", fn, [np.zeros((0,), F32)], include_initial=init)
        case(f"{fn}_x64_int8{t}", fn, [ci8], axis=1, include_initial=init, x64=True)
        case(f"{fn}_x64_uint8{t}", fn, [cu8], axis=1, include_initial=init, x64=True)
    case(f"{fn}_2d_no_axis", fn, [c2f])
    case(f"{fn}_0d", fn, [np.array(1.0, F32)])
    case(f"{fn}_bad_axis", fn, [c2f], axis=-3)


def main():
    doc = {"generator": "tools/gen_jnp_sorting_fixtures.py",
           "versions": {"jax": jax.__version__, "numpy": np.__version__},
           "cases": [record(c) for c in CASES]}
    json.dump(doc, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
