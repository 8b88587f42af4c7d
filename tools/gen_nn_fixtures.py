"""`jax.nn`, pooling and `jax.lax`'s convolution functions against JAX 0.10.2: the activations
(`relu` with its custom JVP, `sigmoid`, `silu`/`swish`, `softplus`, `gelu` in both forms),
`softmax` and `log_softmax` (axes, `where` masks), `logsumexp` (axes, `b` scales of either
sign and zero, `keepdims`, `return_sign`, `where`), `one_hot` (out-of-range and negative
labels, axes, dtypes), `standardize` (axes, given mean and variance, epsilon, `where`, both algorithms); pooling as
flax.linen builds it (`max_pool`, `avg_pool` with and without `count_include_pad`,
`min_pool`: `lax.reduce_window` with `-inf`/`0`/`inf` over `(1,) + window + (1,)`, flax is
not installed here, so `pool` below is its code's equivalent); and `lax.conv_general_dilated`,
`lax.conv`, `lax.conv_with_general_padding`, `lax.conv_transpose` with every padding kind
('SAME', 'SAME_LOWER', 'VALID', lowercase strings, pairs), dimension-number strings, groups,
dilations and `transpose_kernel` both ways. Inputs cover float32, float16, bfloat16 and
float64 (x64), infinities and NaNs.

Each case is a described call that `crates/dtype-lattice-array/tests/it/nn.rs` makes through
`dtype_lattice_array::nn` and `dtype_lattice_array::lax`:

    {"name", "fn", "kw": {...},       # the function and its keywords (below)
     "x64": bool, "args": [array...], # the positional arrays (x; lhs, rhs; labels ...)
     "eager": [array...] | {"error": {"kind", "message"}},   # the call outside any transformation
     "jit": ...,                      # under jax.jit (every array argument traced)
     "text": str | {"error": ...},    # str(jax.make_jaxpr(f)(*args))
     "consts": [array...],            # that closed jaxpr's constants
     "weights": array,                # float cases: w, of the result's shape and dtype
     "grad": [array...],              # jax.grad(lambda *a: sum(f(*a) * w), argnums)(*args)
     "grad_jit": [array...],          # the same under jax.jit
     "grad_op_by_op": [array...],     # the same under jax.disable_jit() (every primitive
                                      # alone, the jitted helpers too)
     "grad_args": [k...]}             # which arguments the gradient is in

Keywords: `axis` (null, an int or a list), `approximate`, `where` / `b` / `mean` /
`variance` (`{"arg": k}`: that argument), `keepdims`, `return_sign`, `epsilon`,
`num_classes`, `dtype` (a dtype name or null), `window_shape`, `strides`, `padding` (a
string or `[[lo, hi], ...]`), `count_include_pad`, and the convolutions' `window_strides`,
`lhs_dilation`, `rhs_dilation`, `dimension_numbers` (three strings or null),
`feature_group_count`, `batch_group_count`, `precision` (null or a name),
`preferred_element_type`, `transpose_kernel`.

    tools/.venv-jax/bin/python tools/gen_nn_fixtures.py > tests/fixtures/indexing/nn.json
"""

import json
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))

from fixturelib import pin_xla_isa

pin_xla_isa()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from gen_jaxpr_fixtures import attempt, enc, leaves  # noqa: E402

warnings.simplefilter("ignore")

CASES = []
rng = np.random.default_rng(20260)


def case(name, fn, args, x64=False, grad=None, **kw):
    CASES.append(dict(name=name, fn=fn, kw=kw, args=args, x64=x64, grad=grad))


# ---- flax.linen's pooling (flax/linen/pooling.py), written out: flax is not installed.

def pool(inputs, init, reduce_fn, window_shape, strides, padding):
    num_batch_dims = inputs.ndim - (len(window_shape) + 1)
    strides = strides or (1,) * len(window_shape)
    assert len(window_shape) == len(strides)
    strides = (1,) * num_batch_dims + strides + (1,)
    dims = (1,) * num_batch_dims + window_shape + (1,)
    is_single_input = False
    if num_batch_dims == 0:
        # A singleton batch dimension: lax.reduce_window needs one.
        inputs = inputs[None]
        strides = (1,) + strides
        dims = (1,) + dims
        is_single_input = True
    assert inputs.ndim == len(dims)
    if not isinstance(padding, str):
        padding = tuple(map(tuple, padding))
        assert len(padding) == len(window_shape)
        assert all([len(x) == 2 for x in padding])
        padding = ((0, 0),) + padding + ((0, 0),)
    y = lax.reduce_window(inputs, init, reduce_fn, dims, strides, padding)
    if is_single_input:
        y = jnp.squeeze(y, axis=0)
    return y


def avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True):
    y = pool(inputs, 0.0, lax.add, window_shape, strides, padding)
    if count_include_pad:
        y = y / np.prod(window_shape)
    else:
        div_shape = inputs.shape[:-1] + (1,)
        if len(div_shape) - 2 == len(window_shape):
            div_shape = (1,) + div_shape[1:]
        y = y / pool(jnp.ones(div_shape), 0.0, lax.add, window_shape, strides, padding)
    return y


def max_pool(inputs, window_shape, strides=None, padding="VALID"):
    return pool(inputs, -jnp.inf, lax.max, window_shape, strides, padding)


def min_pool(inputs, window_shape, strides=None, padding="VALID"):
    return pool(inputs, jnp.inf, lax.min, window_shape, strides, padding)


# ---- the described calls

def opt_arg(kw, key, args):
    v = kw.get(key)
    return args[v["arg"]] if isinstance(v, dict) else v


def axis_of(kw):
    a = kw.get("axis", -1)
    return tuple(a) if isinstance(a, list) else a


def padding_of(p):
    return p if isinstance(p, str) else [tuple(x) for x in p]


def tup(v):
    return None if v is None else tuple(v)


def program(c):
    fn, kw = c["fn"], c["kw"]

    def f(*args):
        x = args[0]
        if fn in ("relu", "sigmoid", "silu", "swish", "softplus"):
            return getattr(jax.nn, fn)(x)
        if fn == "gelu":
            return jax.nn.gelu(x, approximate=kw["approximate"])
        if fn in ("softmax", "log_softmax"):
            return getattr(jax.nn, fn)(x, axis=axis_of(kw), where=opt_arg(kw, "where", args))
        if fn == "logsumexp":
            return jax.nn.logsumexp(x, axis=axis_of(kw), b=opt_arg(kw, "b", args),
                                    keepdims=kw["keepdims"], return_sign=kw["return_sign"],
                                    where=opt_arg(kw, "where", args))
        if fn == "one_hot":
            return jax.nn.one_hot(x, kw["num_classes"], dtype=kw["dtype"], axis=kw["axis"])
        if fn == "standardize":
            return jax.nn.standardize(x, axis=axis_of(kw), mean=opt_arg(kw, "mean", args),
                                      variance=opt_arg(kw, "variance", args),
                                      epsilon=kw["epsilon"], where=opt_arg(kw, "where", args),
                                      algorithm=kw.get("algorithm", "fast"))
        if fn in ("max_pool", "min_pool"):
            return {"max_pool": max_pool, "min_pool": min_pool}[fn](
                x, tuple(kw["window_shape"]), tup(kw["strides"]), padding_of(kw["padding"]))
        if fn == "avg_pool":
            return avg_pool(x, tuple(kw["window_shape"]), tup(kw["strides"]),
                            padding_of(kw["padding"]), kw["count_include_pad"])
        w = args[1]
        pet = kw.get("preferred_element_type")
        if fn == "conv_general_dilated":
            return lax.conv_general_dilated(
                x, w, kw["window_strides"], padding_of(kw["padding"]),
                lhs_dilation=tup(kw["lhs_dilation"]), rhs_dilation=tup(kw["rhs_dilation"]),
                dimension_numbers=tup(kw["dimension_numbers"]),
                feature_group_count=kw["feature_group_count"],
                batch_group_count=kw["batch_group_count"], precision=kw["precision"],
                preferred_element_type=pet)
        if fn == "conv":
            return lax.conv(x, w, kw["window_strides"], kw["padding"], precision=kw["precision"],
                            preferred_element_type=pet)
        if fn == "conv_with_general_padding":
            return lax.conv_with_general_padding(
                x, w, kw["window_strides"], padding_of(kw["padding"]),
                tup(kw["lhs_dilation"]), tup(kw["rhs_dilation"]), precision=kw["precision"],
                preferred_element_type=pet)
        if fn == "conv_transpose":
            return lax.conv_transpose(
                x, w, kw["strides"], padding_of(kw["padding"]),
                rhs_dilation=tup(kw["rhs_dilation"]),
                dimension_numbers=tup(kw["dimension_numbers"]),
                transpose_kernel=kw["transpose_kernel"], precision=kw["precision"],
                preferred_element_type=pet,
                use_consistent_padding=kw.get("use_consistent_padding", False))
        raise ValueError(fn)

    return f


def record(c):
    jax.config.update("jax_enable_x64", c["x64"])
    args = [jnp.asarray(a) for a in c["args"]]
    f = program(c)
    out = {k: c[k] for k in ["name", "fn", "kw", "x64"]}
    out["args"] = [enc(a) for a in args]
    out["eager"] = attempt(lambda: leaves(f(*args)))
    out["jit"] = attempt(lambda: leaves(jax.jit(f)(*args)))
    out["text"] = attempt(lambda: str(jax.make_jaxpr(f)(*args)))
    if isinstance(out["text"], str):
        out["consts"] = [enc(k) for k in jax.make_jaxpr(f)(*args).consts]
    if c["grad"] is not None and "error" not in out["eager"]:
        y = f(*args)
        y = y[0] if isinstance(y, tuple) else y
        w = jnp.asarray(rng.standard_normal(y.shape), y.dtype)
        argnums = tuple(c["grad"])

        def loss(*a):
            r = f(*a)
            r = r[0] if isinstance(r, tuple) else r
            return jnp.sum(r * w)

        out["weights"] = enc(w)
        out["grad_args"] = list(argnums)
        out["grad"] = attempt(lambda: leaves(jax.grad(loss, argnums)(*args)))
        out["grad_jit"] = attempt(lambda: leaves(jax.jit(jax.grad(loss, argnums))(*args)))

        def op_by_op():
            with jax.disable_jit():
                return leaves(jax.grad(loss, argnums)(*args))

        out["grad_op_by_op"] = attempt(op_by_op)
    return out


# ---- inputs

def normal(*shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


SPECIAL = np.array([-3.5, -1.0, -0.0, 0.0, 0.25, 1.0, 2.5, 8.0, -20.0, 30.0, 100.0, -100.0,
                    np.inf, -np.inf, np.nan, 1e-3], np.float64)
FINITE = np.array([-3.5, -1.0, -0.0, 0.0, 0.25, 1.0, 2.5, 8.0, -20.0, 30.0, -6.0, 0.5],
                  np.float64)
FLOATS = [("float32", np.float32, False), ("float16", np.float16, False),
          ("bfloat16", ml_dtypes.bfloat16, False), ("float64", np.float64, True)]

# ---- activations

for fn in ["relu", "sigmoid", "silu", "swish", "softplus"]:
    for dname, dt, x64 in FLOATS:
        case(f"{fn}_{dname}", fn, [SPECIAL.astype(dt)], x64=x64)
        case(f"{fn}_{dname}_grad", fn, [FINITE.astype(dt).reshape(3, 4)], x64=x64, grad=[0])
    case(f"{fn}_matrix", fn, [normal(4, 5, scale=3)], grad=[0])
case("relu_int32", "relu", [np.array([-3, 0, 5, -2147483648, 7], np.int32)])
case("relu_uint8", "relu", [np.array([0, 3, 255], np.uint8)])
case("sigmoid_int32", "sigmoid", [np.array([-3, 0, 5], np.int32)])
case("softplus_int32", "softplus", [np.array([-3, 0, 5], np.int32)])

for approximate in [True, False]:
    a = "approx" if approximate else "exact"
    for dname, dt, x64 in FLOATS:
        case(f"gelu_{a}_{dname}", "gelu", [SPECIAL.astype(dt)], x64=x64, approximate=approximate)
        case(f"gelu_{a}_{dname}_grad", "gelu", [FINITE.astype(dt).reshape(3, 4)], x64=x64,
             grad=[0], approximate=approximate)
    case(f"gelu_{a}_int32", "gelu", [np.array([-3, 0, 2], np.int32)], approximate=approximate)

# ---- softmax, log_softmax

logits = normal(3, 5, scale=2)
special_rows = np.array([[1.0, 2.0, 3.0, -np.inf, 0.5],
                         [-np.inf, -np.inf, -np.inf, -np.inf, -np.inf],
                         [0.0, np.inf, 1.0, 2.0, 3.0],
                         [0.0, np.nan, 1.0, 2.0, 3.0],
                         [np.inf, np.inf, 0.0, -1.0, 1.0],
                         [-np.inf, 4.0, -np.inf, 4.0, 4.0]], np.float64)
mask = np.array([[True, True, False, True, True],
                 [False, True, True, True, False],
                 [False, False, False, False, False]])
cube = normal(2, 3, 4, scale=3)

for fn in ["softmax", "log_softmax"]:
    for dname, dt, x64 in FLOATS:
        case(f"{fn}_{dname}", fn, [logits.astype(dt)], x64=x64, grad=[0], axis=-1)
        case(f"{fn}_special_{dname}", fn, [special_rows.astype(dt)], x64=x64, axis=-1)
    for axis in [0, 1, -2, None, [0, 2], [2, 1]]:
        case(f"{fn}_axis_{axis}", fn, [cube], grad=[0], axis=axis)
    case(f"{fn}_special_axis0", fn, [special_rows.astype(np.float32)], axis=0)
    case(f"{fn}_where", fn, [logits, mask], grad=[0], axis=-1, where={"arg": 1})
    case(f"{fn}_where_axis0", fn, [logits, mask[:1]], grad=[0], axis=0, where={"arg": 1})
    case(f"{fn}_where_special", fn, [special_rows[:3].astype(np.float32), mask], axis=-1,
         where={"arg": 1})
    case(f"{fn}_int32", fn, [np.array([[1, 2, 3]], np.int32)], axis=-1)
    case(f"{fn}_scalar_axis_error", fn, [logits], axis=2)

# ---- logsumexp

LSE = dict(axis=None, keepdims=False, return_sign=False, b=None, where=None)


def lse_case(name, args, grad=None, x64=False, **kw):
    case(name, "logsumexp", args, x64=x64, grad=grad, **{**LSE, **kw})


for dname, dt, x64 in FLOATS:
    lse_case(f"logsumexp_{dname}", [logits.astype(dt)], x64=x64, grad=[0], axis=-1)
    lse_case(f"logsumexp_special_{dname}", [special_rows.astype(dt)], x64=x64, axis=1)
    lse_case(f"logsumexp_all_{dname}", [logits.astype(dt)], x64=x64, grad=[0])
for axis in [0, 1, -1, None, [0, 2], [2, 0]]:
    for keepdims in [False, True]:
        lse_case(f"logsumexp_axis_{axis}_keepdims_{keepdims}", [cube], grad=[0], axis=axis,
                 keepdims=keepdims)
b_scale = np.array([[1.0, 0.5, 0.0, 2.0, 1.0]], np.float32)
b_neg = np.array([[1.0, -2.0, 0.5, -1.0, 0.0], [-1.0, -1.0, -1.0, -1.0, -1.0],
                  [0.0, 0.0, 0.0, 0.0, 0.0]], np.float32)
lse_case("logsumexp_b", [logits, b_scale], grad=[0, 1], axis=-1, b={"arg": 1})
lse_case("logsumexp_b_negative", [logits, b_neg], axis=-1, b={"arg": 1})
lse_case("logsumexp_b_negative_sign", [logits, b_neg], axis=-1, b={"arg": 1}, return_sign=True)
lse_case("logsumexp_b_special", [special_rows[:3].astype(np.float32), b_neg], axis=-1,
         b={"arg": 1}, return_sign=True)
lse_case("logsumexp_b_keepdims", [logits, b_scale], grad=[0], axis=1, b={"arg": 1},
         keepdims=True)
lse_case("logsumexp_b_int", [logits, np.array([2, 0, 1, 3, 1], np.int32)], axis=-1,
         b={"arg": 1})
lse_case("logsumexp_return_sign", [logits], grad=[0], axis=0, return_sign=True)
lse_case("logsumexp_return_sign_special", [special_rows.astype(np.float32)], axis=1,
         return_sign=True)
lse_case("logsumexp_where", [logits, mask], grad=[0], axis=1, where={"arg": 1})
lse_case("logsumexp_where_keepdims", [logits, mask], axis=-1, where={"arg": 1}, keepdims=True)
lse_case("logsumexp_int32", [np.array([[1, 2, 3], [-1, 0, 40]], np.int32)], axis=1)
lse_case("logsumexp_int64_x64", [np.array([[1, 2, 3], [-1, 0, 40]], np.int64)], axis=1, x64=True)
lse_case("logsumexp_empty", [np.zeros((0, 3), np.float32)], axis=0)
lse_case("logsumexp_axis_error", [logits], axis=3)

# ---- one_hot

labels = np.array([0, 2, -1, 4, 5, 1, 100, -5], np.int32)
labels2 = np.array([[0, 3, -1], [2, 2, 7]], np.int32)
for dtype in [None, "int32", "bfloat16", "bool", "float16", "uint8"]:
    case(f"one_hot_{dtype}", "one_hot", [labels], num_classes=5, dtype=dtype, axis=-1)
for axis in [0, 1, -1, -2, 2]:
    case(f"one_hot_axis_{axis}", "one_hot", [labels2], num_classes=4, dtype=None, axis=axis)
case("one_hot_axis_error", "one_hot", [labels2], num_classes=4, dtype=None, axis=3)
case("one_hot_x64", "one_hot", [labels.astype(np.int64)], x64=True, num_classes=6, dtype=None,
     axis=-1)
case("one_hot_uint8", "one_hot", [np.array([0, 3, 255, 4], np.uint8)], num_classes=5,
     dtype=None, axis=-1)
case("one_hot_scalar", "one_hot", [np.array(3, np.int32)], num_classes=5, dtype=None, axis=-1)
case("one_hot_zero_classes", "one_hot", [labels], num_classes=0, dtype=None, axis=-1)
case("one_hot_float_labels", "one_hot", [np.array([0.0, 1.0, 2.5, -1.0], np.float32)],
     num_classes=3, dtype=None, axis=-1)

# ---- standardize

STD = dict(axis=-1, mean=None, variance=None, epsilon=1e-5)
acts = normal(4, 6, scale=2) + 1.5
for dname, dt, x64 in FLOATS:
    case(f"standardize_{dname}", "standardize", [acts.astype(dt)], x64=x64, grad=[0], **STD)
# (Axes of at least three elements: the standardized pair of two is ±1 whatever the inputs,
# and its gradient rounding noise.)
tall = normal(5, 3, 4, scale=3)
for axis in [0, -1, None, [0, 1]]:
    case(f"standardize_axis_{axis}", "standardize", [tall], grad=[0], **{**STD, "axis": axis})
case("standardize_constant_rows", "standardize",
     [np.array([[2.0, 2.0, 2.0], [1.0, -1.0, 3.0]], np.float32)], grad=[0], **STD)
case("standardize_mean_variance", "standardize",
     [acts, np.full((4, 1), 0.5, np.float32), np.array([[1.0], [2.0], [0.5], [4.0]], np.float32)],
     grad=[0], **{**STD, "mean": {"arg": 1}, "variance": {"arg": 2}})
case("standardize_mean_only", "standardize", [acts, acts.mean(0, keepdims=True)], grad=[0],
     **{**STD, "axis": 0, "mean": {"arg": 1}})
case("standardize_epsilon", "standardize", [acts], grad=[0], **{**STD, "epsilon": 0.5})
case("standardize_int32", "standardize", [np.array([[1, 2, 3], [4, 4, 4]], np.int32)], **STD)

# ---- pooling (flax.linen)

img = np.round(normal(2, 6, 7, 3) * 4) / 4  # ties
img[0, 1, 1, 0] = np.nan
img[1, 2, 3, 1] = -np.inf
img[1, 4, 4, 2] = np.inf
img_finite = np.round(normal(2, 6, 7, 2) * 4) / 4
POOLS = {
    # name: (window, strides, padding)
    "2x2": ((2, 2), None, "VALID"),
    "2x2_s2": ((2, 2), (2, 2), "VALID"),
    "3x3_s2_same": ((3, 3), (2, 2), "SAME"),
    "3x2_s12_same": ((3, 2), (1, 2), "SAME"),
    "2x3_explicit": ((2, 3), (1, 1), [[1, 0], [0, 2]]),
    "3x3_explicit_s2": ((3, 3), (2, 2), [[1, 1], [1, 1]]),
    "same_lower": ((2, 2), (1, 1), "SAME_LOWER"),
}
for fn in ["max_pool", "avg_pool", "min_pool"]:
    extra = {"count_include_pad": True} if fn == "avg_pool" else {}
    for pname, (win, st, pad) in POOLS.items():
        case(f"{fn}_{pname}", fn, [img], window_shape=win, strides=st, padding=pad, **extra)
        case(f"{fn}_{pname}_grad", fn, [img_finite], grad=[0], window_shape=win, strides=st,
             padding=pad, **extra)
    case(f"{fn}_single_input", fn, [img[0]], grad=[0], window_shape=(2, 2), strides=(1, 2),
         padding="SAME", **extra)
    case(f"{fn}_1d", fn, [normal(2, 9, 3)], grad=[0], window_shape=(3,), strides=(2,),
         padding="SAME", **extra)
    case(f"{fn}_two_batch_dims", fn, [normal(2, 3, 5, 4, 2)], window_shape=(2, 2),
         strides=(1, 1), padding="VALID", **extra)
    for dname, dt, x64 in FLOATS[1:]:
        case(f"{fn}_{dname}", fn, [img.astype(dt)], x64=x64, grad=[0], window_shape=(3, 3),
             strides=(2, 2), padding="SAME", **extra)
    case(f"{fn}_int32", fn, [rng.integers(-50, 50, (1, 5, 5, 2)).astype(np.int32)],
         window_shape=(2, 2), strides=(2, 2), padding="SAME", **extra)
for pname, (win, st, pad) in POOLS.items():
    case(f"avg_pool_{pname}_exclude_pad", "avg_pool", [img_finite], grad=[0], window_shape=win,
         strides=st, padding=pad, count_include_pad=False)
case("avg_pool_single_input_exclude_pad", "avg_pool", [img_finite[0]], window_shape=(3, 3),
     strides=(2, 2), padding="SAME", count_include_pad=False)
case("avg_pool_1d_exclude_pad", "avg_pool", [normal(2, 9, 3)], window_shape=(3,), strides=(2,),
     padding="SAME", count_include_pad=False)
case("max_pool_bad_padding", "max_pool", [img], window_shape=(2, 2), strides=None,
     padding="FULL")

# ---- convolutions

CONV = dict(window_strides=None, padding="VALID", lhs_dilation=None, rhs_dilation=None,
            dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None,
            preferred_element_type=None)
x_nchw = normal(2, 3, 7, 6)
w_oihw = normal(4, 3, 3, 2)
x_nhwc = normal(2, 6, 5, 3)
w_hwio = normal(3, 3, 3, 4)
NHWC = ["NHWC", "HWIO", "NHWC"]


def conv_case(name, args, grad=None, x64=False, fn="conv_general_dilated", **kw):
    case(name, fn, args, x64=x64, grad=grad, **{**CONV, **kw})


for pad in ["SAME", "VALID", "SAME_LOWER", "same", [[1, 0], [2, 1]], [[-1, 2], [1, -2]]]:
    label = pad if isinstance(pad, str) else "pairs" if pad[0][0] >= 0 else "negative_pairs"
    conv_case(f"conv_general_nchw_{label}", [x_nchw, w_oihw], grad=[0, 1], window_strides=(1, 2),
              padding=pad)
    conv_case(f"conv_general_nhwc_{label}", [x_nhwc, w_hwio], window_strides=(2, 2), padding=pad,
              dimension_numbers=NHWC)
conv_case("conv_general_rhs_dilation_same", [x_nchw, w_oihw], grad=[0, 1],
          window_strides=(1, 1), padding="SAME", rhs_dilation=(2, 2))
conv_case("conv_general_lhs_dilation_pairs", [x_nchw, w_oihw], window_strides=(1, 1),
          padding=[[2, 2], [1, 1]], lhs_dilation=(2, 3))
conv_case("conv_general_lhs_dilation_string", [x_nchw, w_oihw], window_strides=(1, 1),
          padding="SAME", lhs_dilation=(2, 1))
conv_case("conv_general_lhs_dilation_ones_string", [x_nchw, w_oihw], window_strides=(1, 1),
          padding="SAME", lhs_dilation=(1, 1))
conv_case("conv_general_bad_padding", [x_nchw, w_oihw], window_strides=(1, 1), padding="FULL")
conv_case("conv_general_feature_groups", [normal(2, 6, 5, 5), normal(4, 3, 3, 3)], grad=[0, 1],
          window_strides=(1, 1), padding="SAME", feature_group_count=2)
conv_case("conv_general_depthwise_nhwc", [normal(2, 6, 6, 4), normal(3, 3, 1, 8)],
          window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC, feature_group_count=4)
conv_case("conv_general_batch_groups", [normal(4, 3, 5, 5), normal(6, 3, 2, 2)],
          window_strides=(1, 1), padding="VALID", batch_group_count=2)
conv_case("conv_general_1d_nwc", [normal(2, 9, 3), normal(3, 3, 5)], grad=[0],
          window_strides=(2,), padding="SAME", dimension_numbers=["NWC", "WIO", "NWC"])
conv_case("conv_general_3d", [normal(1, 4, 5, 4, 2), normal(2, 3, 2, 2, 3)],
          window_strides=(1, 2, 1), padding="SAME",
          dimension_numbers=["NDHWC", "DHWIO", "NDHWC"])
conv_case("conv_general_odd_layout", [normal(5, 6, 3, 2), normal(2, 4, 3, 3)],
          window_strides=(1, 2), padding=[[1, 1], [0, 2]],
          dimension_numbers=["HWCN", "OHIW", "WCNH"])
conv_case("conv_general_out_layout", [x_nhwc, w_hwio], window_strides=(1, 1), padding="VALID",
          dimension_numbers=["NHWC", "HWIO", "NCHW"])
conv_case("conv_general_precision_highest", [x_nchw, w_oihw], window_strides=(1, 1),
          padding="SAME", precision="highest")
conv_case("conv_general_preferred_int8_int32",
          [rng.integers(-128, 128, (2, 5, 6)).astype(np.int8),
           rng.integers(-128, 128, (3, 5, 3)).astype(np.int8)],
          window_strides=(1,), padding="SAME", preferred_element_type="int32")
conv_case("conv_general_preferred_bf16_f32",
          [normal(2, 4, 6, dtype=ml_dtypes.bfloat16), normal(3, 4, 3, dtype=ml_dtypes.bfloat16)],
          window_strides=(1,), padding="VALID", preferred_element_type="float32")
conv_case("conv_general_int32", [rng.integers(-20, 20, (2, 3, 7)).astype(np.int32),
                                 rng.integers(-5, 5, (4, 3, 3)).astype(np.int32)],
          window_strides=(2,), padding="SAME_LOWER")
for dname, dt, x64 in FLOATS[1:]:
    conv_case(f"conv_general_{dname}", [x_nhwc.astype(dt), w_hwio.astype(dt)], x64=x64,
              grad=[0, 1], window_strides=(1, 2), padding="SAME", dimension_numbers=NHWC)
conv_case("conv_general_bad_dimension_numbers", [x_nhwc, w_hwio], window_strides=(1, 1),
          padding="SAME", dimension_numbers=["NHWC", "HWIO", "NHXC"])
conv_case("conv_general_dimension_numbers_duplicate", [x_nhwc, w_hwio], window_strides=(1, 1),
          padding="SAME", dimension_numbers=["NHHC", "HWIO", "NHWC"])
conv_case("conv_general_dimension_numbers_length", [x_nhwc, w_hwio], window_strides=(1, 1),
          padding="SAME", dimension_numbers=["NHC", "HWIO", "NHWC"])

for pad in ["SAME", "VALID"]:
    conv_case(f"lax_conv_{pad}", [x_nchw, w_oihw], grad=[0, 1], fn="conv",
              window_strides=(1, 2), padding=pad)
conv_case("lax_conv_preferred", [rng.integers(-9, 9, (2, 3, 6, 5)).astype(np.int16),
                                 rng.integers(-9, 9, (4, 3, 3, 3)).astype(np.int16)],
          fn="conv", window_strides=(1, 1), padding="SAME", preferred_element_type="int32")
for pad in ["SAME", "VALID", "SAME_LOWER", [[1, 0], [0, 1]]]:
    label = pad if isinstance(pad, str) else "pairs"
    conv_case(f"conv_with_general_padding_{label}", [x_nchw, w_oihw], grad=[0, 1],
              fn="conv_with_general_padding", window_strides=(2, 1), padding=pad,
              lhs_dilation=None, rhs_dilation=(1, 2))
conv_case("conv_with_general_padding_lhs_dilation", [x_nchw, w_oihw],
          fn="conv_with_general_padding", window_strides=(1, 1), padding=[[1, 0], [0, 1]],
          lhs_dilation=(2, 1), rhs_dilation=(1, 2))

CT = dict(precision=None, preferred_element_type=None, rhs_dilation=None,
          dimension_numbers=None, transpose_kernel=False)


def ct_case(name, args, grad=None, x64=False, **kw):
    case(name, "conv_transpose", args, x64=x64, grad=grad, **{**CT, **kw})


for tk in [False, True]:
    for pad in ["SAME", "VALID", [[2, 1], [0, 1]], [[0, 0], [1, 2]]]:
        label = pad if isinstance(pad, str) else f"pairs{pad[0][0]}"
        w = normal(3, 3, 3, 5) if not tk else normal(3, 3, 5, 3)
        ct_case(f"conv_transpose_{label}_tk_{tk}", [x_nhwc, w], grad=[0, 1], strides=(2, 2),
                padding=pad, transpose_kernel=tk)
    ct_case(f"conv_transpose_1d_tk_{tk}", [normal(2, 7, 3), normal(4, 3, 2) if not tk
                                           else normal(4, 2, 3)],
            grad=[0], strides=(3,), padding="SAME", rhs_dilation=(2,), transpose_kernel=tk)
    ct_case(f"conv_transpose_nchw_tk_{tk}", [x_nchw, normal(4, 3, 3, 2) if not tk
                                             else normal(3, 4, 3, 2)],
            strides=(2, 1), padding="VALID", dimension_numbers=["NCHW", "OIHW", "NCHW"],
            transpose_kernel=tk)
    ct_case(f"conv_transpose_3d_tk_{tk}", [normal(1, 3, 4, 3, 2), normal(2, 2, 2, 2, 3)
                                           if not tk else normal(2, 2, 2, 3, 2)],
            strides=(2, 1, 2), padding="SAME", transpose_kernel=tk)
ct_case("conv_transpose_features_error", [normal(1, 3, 4, 3, 2), normal(2, 2, 2, 2, 3)],
        strides=(2, 1, 2), padding="SAME", transpose_kernel=True)
ct_case("conv_transpose_lowercase_same_unit_strides", [x_nhwc, normal(3, 2, 3, 2)],
        strides=(1, 1), padding="same")
ct_case("conv_transpose_stride_smaller_than_kernel", [x_nhwc, normal(4, 4, 3, 2)],
        strides=(2, 3), padding="SAME")
ct_case("conv_transpose_rhs_dilation_valid", [x_nhwc, normal(2, 3, 3, 2)], strides=(2, 2),
        padding="VALID", rhs_dilation=(2, 1))
ct_case("conv_transpose_float64", [x_nhwc.astype(np.float64), normal(3, 3, 3, 2, dtype=np.float64)],
        x64=True, grad=[0, 1], strides=(2, 2), padding="SAME")
ct_case("conv_transpose_6d_error", [normal(1, 2, 2, 2, 2, 1), normal(1, 1, 1, 1, 1, 1)],
        strides=(1, 1, 1, 1), padding="SAME")
ct_case("conv_transpose_same_lower_error", [x_nhwc, normal(3, 3, 3, 5)], strides=(2, 2),
        padding="SAME_LOWER")

# use_consistent_padding (added later: its own generator, so that the draws of the cases
# above stay as they were).
_w_consistent = np.random.default_rng(7).standard_normal((3, 3, 3, 5)).astype(np.float32)
for pad in [[[2, 1], [0, 1]], [[0, 0], [1, 2]], "SAME", "VALID", "SAME_LOWER"]:
    label = pad if isinstance(pad, str) else f"pairs{pad[0][0]}{pad[0][1]}"
    ct_case(f"conv_transpose_consistent_{label}", [x_nhwc, _w_consistent], grad=[0, 1],
            strides=(2, 2), padding=pad, rhs_dilation=(1, 2), use_consistent_padding=True)


# ---- standardize's `where` and algorithm (last: the weights of the cases above are drawn first)

# `where` (the mean's count is the mask's sum; a row with two elements kept; a mask broadcast
# along the axis) and the "stable" algorithm; an unknown algorithm is JAX's ValueError.
std_mask = np.array([[True, True, False, True, True, False], [True, False, False, True, False, False],
                     [True, True, True, True, True, True], [False, True, True, False, True, True]])
for dname, dt, x64 in FLOATS:
    case(f"standardize_where_{dname}", "standardize", [acts.astype(dt), std_mask], x64=x64,
         grad=[0], **{**STD, "where": {"arg": 1}})
case("standardize_where_axis0", "standardize", [acts, std_mask], grad=[0],
     **{**STD, "axis": 0, "where": {"arg": 1}})
case("standardize_where_broadcast", "standardize", [acts, std_mask[:1]], grad=[0],
     **{**STD, "where": {"arg": 1}})
case("standardize_stable", "standardize", [acts], grad=[0], **{**STD, "algorithm": "stable"})
case("standardize_stable_where", "standardize", [acts, std_mask], grad=[0],
     **{**STD, "algorithm": "stable", "where": {"arg": 1}})
case("standardize_stable_axes", "standardize", [tall], grad=[0],
     **{**STD, "algorithm": "stable", "axis": [0, 1]})
case("standardize_stable_mean", "standardize", [acts, acts.mean(0, keepdims=True)], grad=[0],
     **{**STD, "axis": 0, "mean": {"arg": 1}, "algorithm": "stable"})
case("standardize_unknown_algorithm", "standardize", [acts], **{**STD, "algorithm": "exact"})


def main():
    doc = {"generator": "tools/gen_nn_fixtures.py",
           "versions": {"jax": jax.__version__, "numpy": np.__version__},
           "cases": [record(c) for c in CASES]}
    json.dump(doc, sys.stdout, indent=0, allow_nan=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
