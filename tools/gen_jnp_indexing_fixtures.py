"""jax.numpy's indexing layer against JAX 0.10.2: `x[idx]` with every kind of index (integers,
slices, None, Ellipsis, integer arrays adjacent and separated, broadcasting, negative and
out-of-range indices, boolean masks, 0-d masks, empty results), `x.at[idx]`'s `get`, `set`,
`add`, `subtract`, `multiply`, `divide`, `power`, `min`, `max`, `apply` in each mode with duplicate and
out-of-range indices, `jnp.take` and `jnp.take_along_axis` in each mode, over int, uint8,
bool, float16, bfloat16 and float32 arrays, weak scalar updates, x64 on and off; and JAX's
errors for bad indices (class and message).

Each case is a described call that `crates/dtype-lattice-array/tests/it/jnp_indexing.rs`
parses and makes through `dtype_lattice_array::numpy`:

    {"name", "fn": "index" | "get" | "set" | "add" | "subtract" | "multiply" | "divide" | "power" | "min" |
     "max" | "apply_sin" | "take" | "take_along_axis",
     "index": [item...],   # int, "None", "...", {"slice": [start, stop, step]},
                           # {"arg": k} (a traced argument), {"const": k} (closed over)
     "value": {"arg": k} | {"int": v} | {"float": v} | {"bool": v}   # updates
     "mode": null | "clip" | ..., "fill_value": null | {"int"|"float"|"bool": v},
     "axis": null | int, "x64": bool,
     "args": [array...],   # args[0] is x
     "eager": [array] | {"error": {"kind", "message"}},   # the call outside any transformation
     "jit": ... ,          # under jax.jit (every argument traced but the "const" ones)
     "text": str | {"error": ...},   # str(jax.make_jaxpr(f)(*traced args))
     "consts": [array...],  # that closed jaxpr's constants (for reading the text back)
     "grad": [array]}      # float cases: jax.grad(lambda x: sum(sin(f(x))))(x), under jit

    tools/.venv-jax/bin/python tools/gen_jnp_indexing_fixtures.py \
        > tests/fixtures/indexing/jnp_indexing.json
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


def case(name, fn, args, index=None, value=None, mode=None, fill_value=None, axis=None,
         x64=False, grad=None):
    CASES.append(dict(name=name, fn=fn, args=args, index=index, value=value, mode=mode,
                      fill_value=fill_value, axis=axis, x64=x64, grad=grad))


def build_index(spec, traced, consts):
    out = []
    for item in spec:
        if item == "None":
            out.append(None)
        elif item == "...":
            out.append(Ellipsis)
        elif isinstance(item, int):
            out.append(item)
        elif "slice" in item:
            out.append(slice(*item["slice"]))
        elif "arg" in item:
            out.append(traced[item["arg"]])
        elif "const" in item:
            out.append(consts[item["const"]])
        else:
            raise ValueError(item)
    return tuple(out)


def scalar(v):
    if v is None:
        return None
    (k, x), = v.items()
    return {"int": int, "float": float, "bool": bool}[k](x)


def program(c, consts):
    """The case as a function of its traced arguments (all but the "const" ones)."""
    fn, mode, fill = c["fn"], c["mode"], scalar(c["fill_value"])

    def f(*traced):
        args = list(traced)
        x = args[0]
        if fn == "take":
            return jnp.take(x, args[1], axis=c["axis"], mode=mode, fill_value=fill)
        if fn == "take_along_axis":
            return jnp.take_along_axis(x, args[1], axis=c["axis"], mode=mode,
                                       fill_value=fill)
        idx = build_index(c["index"], args, consts)
        if fn == "index":
            return x[idx]
        if fn == "get":
            return x.at[idx].get(mode=mode, fill_value=fill)
        if fn == "apply_sin":
            return x.at[idx].apply(jnp.sin, mode=mode)
        v = c["value"]
        value = args[v["arg"]] if "arg" in v else scalar(v)
        return getattr(x.at[idx], fn)(value, mode=mode)

    return f


def record(c):
    jax.config.update("jax_enable_x64", c["x64"])
    raw = [np.asarray(a) for a in c["args"]]
    const_ids = {item["const"] for item in (c["index"] or []) if isinstance(item, dict)
                 and "const" in item}
    consts = {k: raw[k] for k in const_ids}
    # Every argument is a JAX array (canonicalised: int64 becomes int32 without x64).
    args = [jnp.asarray(a) for a in raw]
    traced_args = [a for k, a in enumerate(args)]
    f = program(c, {k: args[k] for k in const_ids})
    out = {k: c[k] for k in ["name", "fn", "index", "value", "mode", "fill_value", "axis",
                             "x64"]}
    out["args"] = [enc(a) for a in args]
    out["eager"] = attempt(lambda: leaves(f(*traced_args)))
    out["jit"] = attempt(lambda: leaves(jax.jit(f)(*traced_args)))
    out["text"] = attempt(lambda: str(jax.make_jaxpr(f)(*traced_args)))
    if isinstance(out["text"], str):
        out["consts"] = [enc(k) for k in jax.make_jaxpr(f)(*traced_args).consts]
    if c["grad"]:
        def loss(x, *rest):
            return jnp.sum(jnp.sin(f(x, *rest).astype(jnp.float32)))
        out["grad"] = attempt(lambda: leaves(jax.jit(jax.grad(loss))(*traced_args)))
    return out


def arr(shape, dtype, seed=0, lo=-9, hi=9):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(lo, info.min), min(hi, info.max) + 1, shape).astype(dt)
    return (rng.standard_normal(shape) * 3).astype(dt)


I32 = np.int32
x3 = arr((4, 5, 6), np.float32, 1)
x2 = arr((5, 4), np.float32, 2)
x1 = np.arange(7, dtype=np.float32) * 1.5 - 2
i_a = np.array([0, 3, -1, 2], I32)
i_b = np.array([[1], [-2], [4]], I32)
i_c = np.array([5, -1, 0], I32)

# --- x[idx]: static, dynamic and gather paths -------------------------------------------
basic = {
    "int": [1], "neg_int": [-1], "two_ints": [2, -3], "three_ints": [0, 4, 5],
    "slice": [{"slice": [1, 3, None]}], "slice_step": [{"slice": [None, None, 2]}],
    "slice_neg_step": [{"slice": [None, None, -1]}],
    "slice_neg_step2": [{"slice": [3, 0, -2]}],
    "slice_stop_4": [{"slice": [0, 4, 2]}], "slice_empty": [{"slice": [3, 1, None]}],
    "slice_empty_neg": [{"slice": [0, 3, -1]}], "slice_past_end": [{"slice": [2, 100, None]}],
    "slice_neg_bounds": [{"slice": [-3, -1, None]}],
    "newaxis": ["None"], "newaxis_mid": [1, "None", {"slice": [None, None, 2]}],
    "ellipsis": ["..."], "ellipsis_int": ["...", 2], "int_ellipsis_int": [1, "...", -1],
    "ellipsis_none": ["...", "None"], "none_ellipsis_none": ["None", "...", "None", 0],
    "empty_tuple": [], "all_slices": [{"slice": [None, None, None]}] * 3,
    "oob_int": [7], "oob_neg_int": [-9], "oob_ints": [1, 9, -20],
    "oob_int_slice": [{"slice": [None, None, -1]}, 10],
    "too_many": [0, 0, 0, 0], "two_ellipses": ["...", 1, "..."],
    "slice_zero_step": [{"slice": [None, None, 0]}],
}
for name, idx in basic.items():
    case(f"index_{name}", "index", [x3], index=idx, grad=name in {"int", "slice_neg_step2"})

case("index_scalar_array", "index", [x3, np.array(2, I32)], index=[{"arg": 1}], grad=True)
case("index_scalar_array_neg", "index", [x3, np.array(-1, I32)], index=[{"arg": 1}])
case("index_scalar_array_oob", "index", [x3, np.array(17, I32)], index=[{"arg": 1}])
case("index_scalar_arrays_slices", "index", [x3, np.array(-2, I32), np.array(3, np.uint8)],
     index=[{"arg": 1}, {"slice": [1, None, -1]}, {"arg": 2}])
case("index_scalar_array_1d", "index", [x1, np.array(-3, np.int16)], index=[{"arg": 1}])
case("index_scalar_array_uint", "index", [x1, np.array(200, np.uint8)], index=[{"arg": 1}])
case("index_1d_oob_int", "index", [x1], index=[9])

adv = {
    "rows": ([x2, i_a], [{"arg": 1}]),
    "cols": ([x2, i_c], [{"slice": [None]}, {"arg": 1}]),
    "adjacent": ([x3, i_a, i_b], [{"slice": [None]}, {"arg": 1}, {"arg": 2}]),
    "adjacent_front": ([x3, i_a, i_b], [{"arg": 1}, {"arg": 2}]),
    "separated": ([x3, i_a, i_b], [{"arg": 1}, {"slice": [None]}, {"arg": 2}]),
    "separated_int": ([x3, i_b], [{"arg": 1}, {"slice": [1, 4]}, 2]),
    "adjacent_int": ([x3, i_b], [{"slice": [None]}, {"arg": 1}, -1]),
    "int_first_adjacent": ([x3, i_b], [1, {"arg": 1}]),
    "none_between": ([x3, i_a, i_b], [{"arg": 1}, "None", {"arg": 2}]),
    "none_before": ([x3, i_a], ["None", {"arg": 1}, 2]),
    "ellipsis_between": ([x3, i_a, i_b], [{"arg": 1}, "...", {"arg": 2}]),
    "ellipsis_last": ([x3, i_a], ["...", {"arg": 1}]),
    "strided_with_array": ([x3, i_a], [{"arg": 1}, {"slice": [None, None, -2]}]),
    "strided_pos_with_array": ([x3, i_b], [{"slice": [1, None, 2]}, {"arg": 1}]),
    "slice_with_array": ([x3, i_a], [{"arg": 1}, {"slice": [1, 3]}]),
    "newaxis_slices_array": ([x3, i_c], ["None", {"slice": [None, None, 2]}, "None",
                                         {"arg": 1}]),
    "broadcast_2d": ([x2, np.array([[0, 1, 2]], I32), np.array([[3], [-1]], I32)],
                     [{"arg": 1}, {"arg": 2}]),
    "index_2d": ([x2, np.array([[0, 4], [-5, 1]], I32)], [{"arg": 1}]),
    "oob_array": ([x2, np.array([7, -9, 2], I32)], [{"arg": 1}]),
    "uint8_indices": ([x2, np.array([4, 250, 0], np.uint8)], [{"arg": 1}]),
    "int16_indices": ([x2, np.array([4, -1, 0], np.int16)], [{"arg": 1}]),
    "int8_cols": ([x2, np.array([-4, 3], np.int8)], [{"slice": [None]}, {"arg": 1}]),
    "empty_array": ([x2, np.zeros((0,), I32)], [{"arg": 1}]),
    "empty_array_cols": ([x2, np.zeros((2, 0), I32)], [{"slice": [None]}, {"arg": 1}]),
    "empty_slice_array": ([x3, i_a], [{"slice": [2, 2]}, {"arg": 1}]),
    "scalar_and_array": ([x3, np.array(1, I32), i_c], [{"arg": 1}, {"slice": [None]},
                                                        {"arg": 2}]),
    "not_broadcastable": ([x3, i_a, i_c], [{"arg": 1}, {"arg": 2}]),
    "float_index": ([x2, np.array([1.0, 2.0], np.float32)], [{"arg": 1}]),
    "float_scalar_index": ([x2, np.array(1.0, np.float32)], [{"arg": 1}]),
    "too_many_arrays": ([x1, i_a, i_a], [{"arg": 1}, {"arg": 2}]),
}
for name, (args, idx) in adv.items():
    case(f"index_{name}", "index", args, index=idx,
         grad=name in {"rows", "separated", "broadcast_2d", "strided_with_array", "oob_array"})

# x64: indices of int64, arrays of float64.
x64a = np.arange(12, dtype=np.float64).reshape(3, 4) / 3
case("x64_rows", "index", [x64a, np.array([2, -1, 0], np.int64)], index=[{"arg": 1}], x64=True)
case("x64_int_and_array", "index", [x64a, np.array([3, -4], np.int64)],
     index=[1, {"arg": 1}], x64=True)
case("x64_scalar_array", "index", [x64a, np.array(-1, np.int64)], index=[{"arg": 1}],
     x64=True)
case("x64_mask", "index", [x64a, np.array([True, False, True])], index=[{"arg": 1}],
     x64=True)
case("x64_oob_int", "index", [x64a], index=[5, 1], x64=True)

# Boolean masks: concrete outside jit; traced under jit/make_jaxpr (JAX's error); a
# closed-over mask is concrete under jit too.
m2 = np.array([[True, False, True, False], [False, False, False, False],
               [True, True, False, False], [False, True, False, True],
               [False, False, True, False]])
masks = {
    "full": ([x2, m2], [{"arg": 1}]),
    "rows": ([x2, np.array([True, False, False, True, True])], [{"arg": 1}]),
    "cols": ([x2, np.array([False, True, True, False])], [{"slice": [None]}, {"arg": 1}]),
    "none_true": ([x2, np.zeros(5, bool)], [{"arg": 1}]),
    "scalar_true": ([x2, np.array(True)], [{"arg": 1}]),
    "scalar_false": ([x2, np.array(False)], [{"arg": 1}]),
    "scalar_with_ints": ([x2, np.array(True)], [1, {"arg": 1}]),
    "scalar_ellipsis": ([x2, np.array(True)], ["...", {"arg": 1}]),
    "with_array": ([x3, np.array([True, False, True, True]), i_c],
                   [{"arg": 1}, {"slice": [None]}, {"arg": 2}]),
    "wrong_shape": ([x2, np.array([True, False, True])], [{"arg": 1}]),
    "empty_mask": ([x2, np.zeros((0,), bool)], [{"slice": [None]}, {"arg": 1}]),
    "3d_partial": ([x3, arr((4, 5), bool, 5)], [{"arg": 1}]),
    "3d_last": ([x3, arr((5, 6), bool, 6)], ["...", {"arg": 1}]),
}
for name, (args, idx) in masks.items():
    case(f"mask_{name}", "index", args, index=idx)
    closed = [{"const": k["arg"]} if isinstance(k, dict) and "arg" in k else k for k in idx]
    case(f"mask_{name}_closed", "index", args, index=closed, grad=name == "full")

# Dtypes.
for dt, seed in [(np.int32, 3), (np.uint8, 4), (np.bool_, 5), (np.float16, 6),
                 (ml_dtypes.bfloat16, 7), (np.int8, 8)]:
    x = arr((5, 4), dt, seed, lo=0 if dt == np.uint8 else -9)
    name = np.dtype(dt).name
    case(f"dtype_{name}_rows", "index", [x, np.array([4, -1, 9], I32)], index=[{"arg": 1}])
    case(f"dtype_{name}_fill", "get", [x, np.array([4, -1, 9, -7], I32)],
         index=[{"arg": 1}, 2], mode="fill")
    case(f"dtype_{name}_static", "index", [x], index=[{"slice": [None, None, -2]}, 1])

# --- .at[idx].get ---------------------------------------------------------------------------
dup = np.array([1, 3, 1, 9, -1, -8], I32)
for mode in [None, "clip", "fill", "drop", "promise_in_bounds"]:
    case(f"get_rows_{mode}", "get", [x2, dup], index=[{"arg": 1}], mode=mode,
         grad=mode in {None, "fill"})
    case(f"get_int_{mode}", "get", [x2], index=[7, 1], mode=mode)
    case(f"get_scalar_array_{mode}", "get", [x2, np.array(-7, I32)], index=[{"arg": 1}],
         mode=mode)
    case(f"get_static_{mode}", "get", [x3], index=[1, "None", {"slice": [None, None, -2]}],
         mode=mode)
case("get_fill_value_float", "get", [x2, dup], index=[{"arg": 1}], mode="fill",
     fill_value={"float": -0.5})
case("get_fill_value_int", "get", [arr((5, 4), np.int32, 3), dup], index=[{"arg": 1}],
     mode="fill", fill_value={"int": 77})
case("get_fill_value_uint8", "get", [arr((6,), np.uint8, 3, lo=0), dup], index=[{"arg": 1}],
     mode="fill", fill_value={"int": 300})
case("get_fill_value_bool", "get", [arr((6,), bool, 3), dup], index=[{"arg": 1}],
     mode="fill", fill_value={"bool": False})
case("get_fill_value_clip_ignored", "get", [x2, dup], index=[{"arg": 1}], mode="clip",
     fill_value={"float": 3.0})
case("get_wrap_mode", "get", [x2, dup], index=[{"arg": 1}], mode="wrap")
case("get_mask_fill", "get", [x2, np.array([True, False, False, True, True])],
     index=[{"const": 1}], mode="fill")

# --- .at[idx] updates -----------------------------------------------------------------------
upd_rows = arr((6, 4), np.float32, 9)
OPS = ["set", "add", "subtract", "multiply", "divide", "power", "min", "max"]
for op in OPS:
    for mode in [None, "clip", "drop", "fill", "promise_in_bounds"]:
        case(f"at_{op}_{mode}", op, [x2, dup, upd_rows], index=[{"arg": 1}],
             value={"arg": 2}, mode=mode,
             grad=op in {"set", "add", "subtract"} and mode in {None, "clip"})
    case(f"at_{op}_scalar_float", op, [x2, dup], index=[{"arg": 1}, 2], value={"float": 1.5})
    case(f"at_{op}_static", op, [x3, arr((5, 2), np.float32, 10)],
         index=[1, {"slice": [None, None, -1]}, {"slice": [1, 5, 2]}], value={"arg": 1},
         grad=op == "set")
    case(f"at_{op}_oob_int", op, [x2, arr((4,), np.float32, 11)], index=[-7],
         value={"arg": 1})
for mode in [None, "clip", "drop", "promise_in_bounds"]:
    case(f"at_apply_sin_{mode}", "apply_sin", [x2, dup], index=[{"arg": 1}], mode=mode)
case("at_apply_sin_static", "apply_sin", [x3], index=[{"slice": [None, 2]}, 1])

ints = arr((5, 4), np.int32, 12)
case("at_add_int_dup", "add", [ints, dup, arr((6, 4), np.int32, 13)], index=[{"arg": 1}],
     value={"arg": 2})
case("at_subtract_int_dup", "subtract", [ints, dup, arr((6, 4), np.int32, 13)],
     index=[{"arg": 1}], value={"arg": 2})
case("at_set_int_scalar", "set", [ints, dup], index=[{"arg": 1}], value={"int": -3})
case("at_add_int_weak_float", "add", [ints, dup], index=[{"arg": 1}], value={"float": 1.7})
case("at_multiply_int_weak_float", "multiply", [ints, dup], index=[{"arg": 1}],
     value={"float": 2.5})
case("at_divide_int", "divide", [ints, dup], index=[{"arg": 1}], value={"int": 2})
case("at_power_int", "power", [ints, dup], index=[{"arg": 1}], value={"int": 2})
case("at_set_int_big", "set", [ints], index=[0], value={"int": 2 ** 40})
u8 = arr((6,), np.uint8, 14, lo=0, hi=250)
case("at_add_uint8_neg", "add", [u8, dup], index=[{"arg": 1}], value={"int": -1})
case("at_add_uint8_wrap", "add", [u8, dup], index=[{"arg": 1}], value={"int": 200})
case("at_max_uint8", "max", [u8, dup, arr((6,), np.uint8, 15, lo=0, hi=255)],
     index=[{"arg": 1}], value={"arg": 2})
case("at_set_uint8_float32", "set", [u8, dup, np.float32(3.9)], index=[{"arg": 1}],
     value={"arg": 2})
case("at_add_int8_overflow", "add", [arr((6,), np.int8, 16), dup], index=[{"arg": 1}],
     value={"int": 1000})
bools = arr((6,), bool, 17)
case("at_set_bool", "set", [bools, dup, np.array([True, False, True, True, False, True])],
     index=[{"arg": 1}], value={"arg": 2})
case("at_add_bool", "add", [bools, dup], index=[{"arg": 1}], value={"bool": True})
case("at_add_bool_int", "add", [bools, dup], index=[{"arg": 1}], value={"int": 2})
case("at_max_bool", "max", [bools, dup], index=[{"arg": 1}], value={"bool": True})
case("at_min_bool", "min", [bools, dup], index=[{"arg": 1}], value={"bool": False})
f16 = arr((6,), np.float16, 18)
bf = arr((6,), ml_dtypes.bfloat16, 19)
for name, x in [("float16", f16), ("bfloat16", bf)]:
    for op in ["set", "add", "multiply", "min", "max", "divide", "power"]:
        case(f"at_{op}_{name}_weak", op, [x, dup], index=[{"arg": 1}], value={"float": 2.5})
    case(f"at_add_{name}_f32", "add", [x, dup, arr((6,), np.float32, 20)], index=[{"arg": 1}],
         value={"arg": 2})
case("at_set_mask", "set", [x2, m2], index=[{"const": 1}], value={"float": 0.0})
case("at_set_mask_traced", "set", [x2, m2], index=[{"arg": 1}], value={"float": 0.0})
case("at_add_mask_rows", "add", [x2, np.array([True, False, True, False, True]),
                                 arr((3, 4), np.float32, 21)],
     index=[{"const": 1}], value={"arg": 2})
case("at_set_scalar_mask", "set", [x2, np.array(True)], index=[{"const": 1}, 1],
     value={"float": 9.0})
case("at_set_newaxis", "set", [x2, arr((4,), np.float32, 22)], index=[2, "None"],
     value={"arg": 1})
case("at_add_separated", "add", [x3, i_a, i_b, arr((3, 4, 5), np.float32, 23)],
     index=[{"arg": 1}, {"slice": [None]}, {"arg": 2}], value={"arg": 3})
case("at_add_adjacent", "add", [x3, i_a, i_b, arr((4, 3, 4), np.float32, 24)],
     index=[{"slice": [None]}, {"arg": 1}, {"arg": 2}], value={"arg": 3})
case("at_set_ellipsis", "set", [x3, i_c], index=["...", {"arg": 1}], value={"float": -1.0})
case("at_set_bad_shape", "set", [x2, arr((2,), np.float32, 25)], index=[0],
     value={"arg": 1})
case("at_set_fewer_dims", "set", [x2, arr((1, 1, 4), np.float32, 26)], index=[0],
     value={"arg": 1})
case("at_set_too_many", "set", [x1], index=[0, 1], value={"float": 1.0})
case("at_set_empty", "set", [x2, np.zeros((0,), I32)], index=[{"arg": 1}],
     value={"float": 1.0})
case("at_set_wrap_mode", "set", [x2, dup], index=[{"arg": 1}], value={"float": 1.0},
     mode="wrap")
case("at_set_x64", "set", [x64a, np.array([0, -1, 5], np.int64), np.float64(2.5)],
     index=[{"arg": 1}], value={"arg": 2}, x64=True)
case("at_add_x64_int", "add", [np.arange(6, dtype=np.int64), np.array([0, 0, 9], np.int64)],
     index=[{"arg": 1}], value={"int": 2 ** 40}, x64=True)
case("at_add_x64_weak_float_into_f32", "add", [x1, np.array([1, -1], np.int64)],
     index=[{"arg": 1}], value={"float": 0.1}, x64=True)

# --- take, take_along_axis ----------------------------------------------------------------------
ti = np.array([[0, 4], [-1, 2], [3, 100]], I32)
for mode in [None, "fill", "clip", "wrap", "raise", "drop", "promise_in_bounds"]:
    case(f"take_axis1_{mode}", "take", [x2, ti], axis=1, mode=mode,
         grad=mode in {None, "clip"})
    case(f"take_flat_{mode}", "take", [x2, np.array([19, -20, 20, 7], I32)], mode=mode)
case("take_fill_value", "take", [arr((5, 3), np.int8, 27), np.array([4, 5, -1, 0], I32)],
     axis=0, mode="fill", fill_value={"int": -7})
case("take_uint8_indices", "take", [x1, np.array([3, 250], np.uint8)])
case("take_uint_operand", "take", [arr((5,), np.uint16, 28, lo=0, hi=999), np.array([7], I32)])
case("take_bool", "take", [arr((5,), bool, 29), np.array([3, 9, -1], I32)])
case("take_bfloat16", "take", [arr((5,), ml_dtypes.bfloat16, 30), np.array([3, 9, -1], I32)],
     mode="clip")
case("take_neg_axis", "take", [x3, np.array([1, -1], I32)], axis=-2)
case("take_bad_axis", "take", [x1, np.array([1], I32)], axis=3)
case("take_float_indices", "take", [x1, np.array([1.5], np.float32)])
case("take_empty_indices", "take", [x2, np.zeros((0, 2), I32)], axis=1)
case("take_empty_axis", "take", [np.zeros((0, 3), np.float32), np.array([0], I32)], axis=0)
case("take_scalar_index", "take", [x2, np.array(3, I32)], axis=1)
case("take_x64", "take", [x64a, np.array([2, -5], np.int64)], axis=1, x64=True)

ta = np.array([[0, 3], [1, 1], [2, -1], [3, 0], [9, 1]], I32)
for mode in [None, "fill", "clip", "promise_in_bounds", "wrap"]:
    case(f"take_along_axis1_{mode}", "take_along_axis", [x2, ta], axis=1, mode=mode,
         grad=mode in {None, "clip"})
case("take_along_axis0", "take_along_axis", [x2, np.array([[4, 0, -1, 7]], I32)], axis=0)
case("take_along_axis_none", "take_along_axis", [x2, np.array([19, -1, 3], I32)])
case("take_along_axis_broadcast", "take_along_axis",
     [x3, np.array([[[1]], [[0]], [[-1]], [[2]]], I32)], axis=0)
case("take_along_axis_3d", "take_along_axis", [x3, arr((4, 1, 3), np.int32, 31, lo=-6, hi=5)],
     axis=2)
case("take_along_axis_fill_value", "take_along_axis",
     [arr((3, 4), np.int16, 32), np.array([[0], [5], [-2]], I32)], axis=1,
     fill_value={"int": 11})
case("take_along_axis_rank", "take_along_axis", [x2, np.array([1], I32)], axis=1)
case("take_along_axis_float", "take_along_axis", [x2, np.array([[1.0]], np.float32)], axis=1)
case("take_along_axis_none_2d", "take_along_axis", [x2, ta])
case("take_along_axis_uint8", "take_along_axis", [x2, np.array([[3], [250], [0], [1], [2]], np.uint8)],
     axis=1)
case("take_along_axis_empty_axis", "take_along_axis",
     [np.zeros((2, 0), np.float32), np.zeros((2, 3), I32)], axis=1)


def main():
    doc = {"generator": "tools/gen_jnp_indexing_fixtures.py",
           "versions": {"jax": jax.__version__, "numpy": np.__version__},
           "cases": [record(c) for c in CASES]}
    json.dump(doc, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
