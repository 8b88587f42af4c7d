"""Conformance corpus of the jaxpr reader: JAX programs, written once, in Python.

Each program is traced with `jax.make_jaxpr`; the fixture records the text JAX prints, the
closed jaxpr's consts, the inputs, and what JAX computes: the outputs of `jit(f)`, and where
they apply `grad` (a scalar float output; argnums 0), `jvp` (tangents for every input: float
inputs get values, integer and bool inputs float0), `vmap` (every input batched at axis 0 over
3 examples), `vmap(grad)` and `grad(grad)` (scalar functions of one scalar), with the text of
`make_jaxpr` of each transformed function. An error JAX raises is recorded as
`{"error": {"kind", "message"}}`.

Arrays are `{"dtype", "shape", "hex"}`: the little-endian bytes of the elements as NumPy holds
them (one byte per element for ml_dtypes' 1- to 8-bit types; keys as their uint32 key data).

Run with tools/.venv-jax (tools/requirements-jax.txt), from the repository's root:
    tools/.venv-jax/bin/python tools/gen_jaxpr_fixtures.py > tests/fixtures/jaxpr/corpus.json
    tools/.venv-jax/bin/python tools/gen_jaxpr_fixtures.py --train-mlp \
        > tests/fixtures/jaxpr/train_mlp_step.json
"""

import json
import sys
from functools import partial

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

FLOATS = {"float16", "float32", "float64", "bfloat16"}


def arg(i, dtype, shape, mod=11):
    """Element k of argument i: ((7k + 3i) mod 11) / 4 - 1.3 (floats), (7k + 3i) mod m - m // 2
    (signed ints), (7k + 3i) mod m (unsigned), (7k + 3i) mod 3 == 0 (bool)."""
    n = int(np.prod(shape, dtype=np.int64))
    k = np.arange(n)
    raw = (7 * k + 3 * i) % mod
    dt = np.dtype(dtype) if not isinstance(dtype, np.dtype) else dtype
    if dt == np.bool_:
        v = raw % 3 == 0
    elif np.issubdtype(dt, np.complexfloating):
        v = (raw / 4 - 1.3) + 1j * (((5 * k + i) % 7) / 3 - 1)
    elif dt.kind == "f" or dt.kind == "V" or "float" in dt.name:
        v = raw / 4 - 1.3
    elif np.issubdtype(dt, np.unsignedinteger) or dt.name.startswith("uint"):
        v = raw
    else:
        v = raw - mod // 2
    return np.asarray(v).astype(dt).reshape(shape)


def enc(x):
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        data = np.asarray(jax.random.key_data(x))
        name = str(x.dtype)
        return {"dtype": name, "shape": list(x.shape), "hex": data.astype("<u4").tobytes().hex()}
    a = np.asarray(x)
    if a.dtype == jax.dtypes.float0:
        return {"dtype": "float0", "shape": list(a.shape), "hex": ""}
    return {"dtype": str(a.dtype), "shape": list(a.shape), "hex": a.tobytes().hex()}


def leaves(out):
    return [enc(x) for x in jax.tree_util.tree_leaves(out)]


def err(e, whole=False):
    """The exception as a fixture: its class and its message (the first line, or `whole`)."""
    message = str(e) if whole else str(e).split("\n")[0]
    return {"error": {"kind": type(e).__name__, "message": message}}


def attempt(fn, whole=False):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the class and message are the fixture
        return err(e, whole)


CASES = []


def case(name, *specs, x64=False, keys=()):
    """Registers f under `name` with arguments (dtype, shape[, mod]) or ("key", seed)."""

    def deco(f):
        CASES.append((name, f, specs, x64))
        return f

    return deco


def make_args(specs, batch=None):
    out = []
    for i, s in enumerate(specs):
        if s[0] == "key":
            if batch is None:
                out.append(jax.random.key(s[1]))
            else:
                out.append(jax.random.split(jax.random.key(s[1]), batch))
            continue
        dtype, shape = s[0], tuple(s[1])
        mod = s[2] if len(s) > 2 else 11
        dt = jnp.dtype(dtype)
        if batch is not None:
            out.append(arg(i + 5, dt, (batch,) + shape, mod))
        else:
            out.append(arg(i, dt, shape, mod))
    return out


def tangent_of(x, i):
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) or not jnp.issubdtype(x.dtype, jnp.inexact):
        return np.zeros(x.shape, jax.dtypes.float0)
    return arg(i + 20, x.dtype, x.shape)


# ---- the corpus -------------------------------------------------------------------------

@case("mlp_layer", ("float32", [4, 3]), ("float32", [3, 5]), ("float32", [5]))
def _(x, w, b):
    return jnp.sum(jnp.tanh(x @ w + b) ** 2)


@case("mlp_two_layers_relu", ("float32", [3]), ("float32", [3, 4]), ("float32", [4, 2]))
def _(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    return jnp.sum(jax.nn.sigmoid(h @ w2))


@case("cross_entropy", ("float32", [4, 5]), ("float32", [4, 5]))
def _(logits, onehot):
    return -jnp.mean(jnp.sum(onehot * jax.nn.log_softmax(logits, axis=-1), axis=-1))


@case("attention", ("float32", [4, 8]), ("float32", [4, 8]), ("float32", [4, 8]))
def _(q, k, v):
    s = q @ k.T / jnp.sqrt(8.0)
    return jax.nn.softmax(s, axis=-1) @ v


@case("layer_norm", ("float32", [3, 6]), ("float32", [6]), ("float32", [6]))
def _(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.var(x, axis=-1, keepdims=True)
    return jnp.sum((x - m) / jnp.sqrt(v + 1e-5) * g + b)


@case("activations", ("float32", [7]))
def _(x):
    return (jax.nn.gelu(x), jax.nn.gelu(x, approximate=False), jax.nn.silu(x),
            jax.nn.softplus(x), jax.nn.elu(x), jax.nn.leaky_relu(x), jnp.tanh(x))


@case("softplus_sum", ("float32", [6]))
def _(x):
    return jnp.sum(jnp.logaddexp(x, 0.0))


@case("integer_arithmetic", ("int32", [6], 23), ("int32", [6], 7))
def _(a, b):
    b = jnp.where(b == 0, 3, b)
    return (a * b + 7) // b, (a * 5) % b, a << 2, a >> 1, -a, jnp.abs(a), jnp.sign(a)


@case("bitwise", ("uint8", [6], 256), ("uint8", [6], 256))
def _(a, b):
    return (a & b) | (a ^ ~b), jax.lax.population_count(a), jax.lax.clz(b), a >> 3


@case("mixed_promotion", ("int8", [4], 20), ("float16", [4]), ("uint8", [4], 200), ("bool", [4]))
def _(i8, f16, u8, m):
    return i8 + f16, u8 * 2, m + i8, f16 * 3.5, i8 * 2.0, u8.astype(jnp.bfloat16) * f16


@case("bfloat16_ops", ("bfloat16", [5]), ("bfloat16", [5]))
def _(a, b):
    return a * b + 1.5, jnp.exp(a), jnp.maximum(a, b), (a / b).astype(jnp.float32)


@case("float16_ops", ("float16", [5]), ("float16", [5]))
def _(a, b):
    return a * b - 0.1, jnp.sqrt(jnp.abs(a)), jnp.log1p(jnp.abs(b)), a @ b


@case("float8_ops", ("float32", [6]))
def _(x):
    outs = []
    for d in (jnp.float8_e4m3fn, jnp.float8_e5m2, jnp.float8_e4m3fnuz, jnp.float8_e5m2fnuz,
              jnp.float8_e4m3b11fnuz):
        y = x.astype(d)
        outs.append(y * y + y)
    return tuple(outs)


@case("narrow_ints", ("int8", [6], 15))
def _(x):
    a = x.astype(jnp.int4)
    b = x.astype(jnp.uint4)
    return a + a, b * 3, a.astype(jnp.int32), (b >> 1).astype(jnp.uint8)


@case("consts_from_closure", ("float32", [3]))
def _(x):
    c = np.array([1.5, -2.0, 0.25], np.float32)
    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    return (x * c + 1.0) @ w


@case("nested_jit", ("float32", [4]))
def _(x):
    @jax.jit
    def inner(y):
        return jnp.sin(y) * 2.0

    @jax.jit
    def outer(y):
        return inner(y) + inner(y + 1.0)

    return outer(x) * x


@case("shared_jaxpr", ("float32", [5]))
def _(x):
    f = jax.jit(lambda y: jnp.cos(y) + y)
    return f(x) * f(x)


@case("where_clip", ("float32", [6]))
def _(x):
    return jnp.sum(jnp.where(x > 0, x * 2.0, jnp.clip(x, -0.5, 0.5)))


@case("prng_normal", ("key", 0), ("float32", [3]))
def _(k, x):
    return x + jax.random.normal(k, (3,))


@case("prng_split_uniform", ("key", 1))
def _(k):
    k1, k2 = jax.random.split(k)
    return (jax.random.uniform(k1, (2, 3)), jax.random.bits(k2, (4,)),
            jax.random.randint(jax.random.fold_in(k2, 7), (3,), 0, 10))


@case("reductions", ("float32", [3, 4]))
def _(x):
    return (jnp.max(x, axis=0), jnp.min(x, axis=1), jnp.argmax(x, axis=1), jnp.prod(x, axis=0),
            jnp.cumsum(x, axis=1), jnp.std(x), jnp.any(x > 1), jnp.all(x > -2))


@case("structural", ("float32", [2, 3]), ("float32", [3]))
def _(x, y):
    a = jnp.concatenate([x, y[None, :]], axis=0)
    b = jnp.pad(x, ((1, 0), (0, 2)))
    c = jnp.transpose(a)[::-1, 1:]
    d = jnp.reshape(x, (3, 2)).squeeze() if False else jnp.reshape(x, (3, 2))
    return a, b, c, d, jnp.stack([y, y * 2]), jnp.expand_dims(y, 1), jnp.flip(x, 1)


@case("compare_select", ("float32", [5]), ("float32", [5]))
def _(a, b):
    return jnp.sum(jnp.where(a < b, a * b, a - b) + jnp.maximum(a, 0.0))


@case("einsum_batched", ("float32", [2, 3, 4]), ("float32", [2, 4, 5]))
def _(a, b):
    return jnp.einsum("bij,bjk->bik", a, b)


@case("complex_ops", ("complex64", [4]), ("complex64", [4]))
def _(a, b):
    return a * b + 1j, jnp.abs(a), jnp.conj(b), jnp.real(a * b), jnp.imag(a), jnp.exp(a)


@case("elementwise_math", ("float32", [6]), ("float32", [6]))
def _(a, b):
    return (a ** 3, jnp.power(jnp.abs(a) + 0.5, b), jnp.exp2(a), jnp.expm1(a), jnp.arctan2(a, b),
            jnp.fmod(a, 0.7), jnp.floor(a), jnp.ceil(b), jnp.round(a), jnp.sinh(a), jnp.arcsinh(b),
            jax.scipy.special.erf(a), jnp.cbrt(b))


NARROW = ["int2", "uint2", "int4", "uint4", "int8", "uint8", "int16", "uint16",
          "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
          "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
          "bfloat16", "float16"]


def narrow(name):
    # One program per dtype: XLA's CPU backend does not compile one program mixing every
    # narrow type. float6_e2m3fn and float6_e3m2fn are left out: it does not compile a program
    # converting to them and back either (a RET_CHECK failure translating the fusion to LLVM).
    def f(x):
        y = (x * 3).astype(name)
        return (y * y + y).astype(jnp.float32)
    return f


for _name in NARROW:
    case(f"narrow_{_name}", ("float32", [6]))(narrow(_name))


@case("every_wide_dtype_x64", ("float64", [4]), x64=True)
def _(x):
    outs = []
    for name in ["int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "complex64",
                 "complex128"]:
        y = (x * 7).astype(name)
        outs.append(y * y + y)
    return tuple(outs)


@case("copy_and_iota", ("float32", [4]))
def _(x):
    return jnp.copy(x) + jnp.arange(4)


@case("mlp_x64", ("float64", [3, 2]), ("float64", [2, 2]), x64=True)
def _(x, w):
    return jnp.sum(jnp.tanh(x @ w))


@case("integers_x64", ("int64", [5], 1000), ("uint32", [5], 100), x64=True)
def _(a, b):
    return a * 3 + b, (a // 7).astype(jnp.float64), b.astype(jnp.int64) << 33


@case("scalar_sin_square", ("float32", []))
def _(x):
    return jnp.sin(x * x)


@case("custom_jvp_softplus", ("float32", [3]))
def _(x):
    @jax.custom_jvp
    def softplus(y):
        return jnp.log1p(jnp.exp(y))

    @softplus.defjvp
    def _jvp(p, t):
        return softplus(p[0]), t[0] * jax.nn.sigmoid(p[0])

    return jnp.sum(softplus(x))


# Control flow (issue 27): cond, switch, while, scan and the loops on them.
@case("cond_sum_sign", ("float32", [3]), ("float32", [3]))
def _(x, y):
    return jax.lax.cond(x.sum() > 0, lambda a, b: a * b, lambda a, b: a - b, x, y)


@case("switch_three", ("int32", [], 5), ("float32", [3]))
def _(i, x):
    return jax.lax.switch(i, [lambda a: a, lambda a: a + 1, jnp.sin], x)


@case("while_doubling", ("float32", [3]))
def _(x):
    return jax.lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * x), (0, x))[1]


@case("scan_cumulative", ("float32", [3]), ("float32", [5, 3]))
def _(c, xs):
    return jax.lax.scan(lambda c, x: (c + x, c * x), c, xs)


@case("scan_reverse_tanh", ("float32", [2]), ("float32", [4, 2]))
def _(h, xs):
    return jax.lax.scan(lambda h, x: (jnp.tanh(h + x), h.sum()), h, xs, reverse=True)


@case("fori_static", ("float32", [3]))
def _(x):
    return jax.lax.fori_loop(0, 4, lambda i, c: c * 2 + i, x)


@case("fori_dynamic", ("float32", [3]), ("int32", [], 5))
def _(x, n):
    return jax.lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, x)


@case("map_sin", ("float32", [4, 2]))
def _(xs):
    return jax.lax.map(jnp.sin, xs)


@case("nested_scan_cond", ("float32", [3]), ("float32", [4, 3]))
def _(c, xs):
    def body(c, x):
        c = jax.lax.cond(x.sum() > 0, lambda: c + x, lambda: c * x)
        return c, jax.lax.fori_loop(0, 2, lambda i, v: v * c, x)
    return jax.lax.scan(body, c, xs)


@case("total_order_comparisons", ("float32", [7]), ("float16", [7]), ("int32", [4]))
def _(x, h, n):
    # XLA's TOTALORDER comparisons (jnp.searchsorted's comparator binds them):
    # -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
    from jax._src.lax import lax as lax_internal
    lt, le, eq = lax_internal.lt_to_p.bind, lax_internal.le_to_p.bind, lax_internal.eq_to_p.bind
    specials = np.array([-np.nan, -np.inf, -0.0, 0.0, np.inf, np.nan, 1.0], np.float32)
    a = jnp.concatenate([x, jnp.asarray(specials)])
    b = jnp.concatenate([jnp.asarray(specials), x[::-1]])
    ah, bh = a.astype(h.dtype), b.astype(h.dtype)
    return (lt(a, b), le(a, b), eq(a, b), lt(a, a[::-1]), eq(a, a), lt(ah, bh), le(ah, bh),
            lt(n, n[::-1]), le(n, n[::-1]), eq(n, n[::-1]))


def record(name, f, specs, x64):
    jax.config.update("jax_enable_x64", x64)
    args = make_args(specs)
    closed = jax.make_jaxpr(f)(*args)
    out = {"name": name, "x64": x64, "text": str(closed),
           "consts": [enc(c) for c in closed.consts], "args": [enc(a) for a in args]}
    out["jit"] = attempt(lambda: leaves(jax.jit(f)(*args)))
    flat_out = jax.eval_shape(f, *args)
    scalar = (not isinstance(flat_out, (tuple, list)) and flat_out.shape == ()
              and jnp.issubdtype(flat_out.dtype, jnp.floating))
    float0 = (not jax.dtypes.issubdtype(args[0].dtype, jax.dtypes.prng_key)
              and jnp.issubdtype(args[0].dtype, jnp.floating))
    if scalar and float0:
        out["grad"] = attempt(lambda: leaves(jax.jit(jax.grad(f))(*args)))
        out["grad_text"] = attempt(lambda: str(jax.make_jaxpr(jax.grad(f))(*args)))
    tangents = [tangent_of(a, i) for i, a in enumerate(args)]
    out["jvp_tangents"] = [enc(t) for t in tangents]
    out["jvp"] = attempt(lambda: leaves(
        jax.jit(lambda a, t: jax.jvp(f, tuple(a), tuple(t)))(args, tangents)))
    batched = make_args(specs, batch=3)
    out["vmap_args"] = [enc(a) for a in batched]
    out["vmap"] = attempt(lambda: leaves(jax.jit(jax.vmap(f))(*batched)))
    if scalar and float0 and len(args) == 1 and args[0].shape == ():
        out["grad_grad"] = attempt(lambda: leaves(jax.jit(jax.grad(jax.grad(f)))(*args)))
        out["vmap_grad"] = attempt(lambda: leaves(jax.jit(jax.vmap(jax.grad(f)))(*batched)))
    return out


def train_mlp_step(steps=10):
    """The train_mlp program's jitted `step` (tests/fixtures/transformations/train_mlp.json's
    program, defaults: seed 0, n 256, d 2, hidden 32, lr 0.1, keep 0.9, float32) as JAX prints
    it, its inputs, each step's key data and loss."""
    program = json.load(open("tests/fixtures/transformations/train_mlp.json"))["program"]
    env = {}
    argv = sys.argv
    sys.argv = ["train_mlp", "0", "0", "256", "2", "32", "0.1", "0.9", "float32", "0"]
    try:
        exec(program, env)
    finally:
        sys.argv = argv
    step, params, x, y, kt = env["step"], env["params"], env["x"], env["y"], env["kt"]
    key0 = jax.random.fold_in(kt, 0)
    closed = jax.make_jaxpr(step)(params, x, y, key0, 0.1, 0.9)
    flat = jax.tree_util.tree_leaves(params)
    keys, losses = [], []
    for i in range(steps):
        k = jax.random.fold_in(kt, i)
        keys.append(enc(k))
        params, l = step(params, x, y, k, 0.1, 0.9)
        losses.append(float(l))
    return {"generator": "tools/gen_jaxpr_fixtures.py --train-mlp",
            "versions": {"jax": jax.__version__},
            "text": str(closed), "consts": [enc(c) for c in closed.consts],
            "params": [enc(p) for p in flat], "x": enc(x), "y": enc(y),
            "lr": 0.1, "keep": 0.9, "keys": keys, "losses": losses}


# Reverse mode through the loops (scalar outputs: grad, grad_grad and vmap_grad recorded).
@case("scan_rnn_loss", ("float32", [3, 3]), ("float32", [3]), ("float32", [5, 3]))
def _(w, h, xs):
    h, ys = jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x), h.sum()), h, xs)
    return jnp.sum(h ** 2) + jnp.sum(ys)


# XLA's orders, bit for bit (the corpus test's EXACT list): matrix-vector products whose rows
# run along the contraction (8 lanes, summed pairwise), batched or not; and the gradient of
# an RNN through a scan, whose transposed step XLA contracts (outer products into their
# sums, tanh's derivative) and whose `W @ ct` is such a product.
@case("matvec_rows", ("float32", [32, 64]), ("float32", [64]), ("float32", [3, 16, 24]),
      ("float32", [3, 24]))
def _(w, v, ws, vs):
    return (w @ v, jax.lax.dot_general(v, w, (([0], [1]), ([], []))),
            jax.lax.dot_general(ws, vs, (([2], [1]), ([0], [0]))))


@case("scan_rnn_h32_grad", ("float32", [32, 32]), ("float32", [8, 32]), ("float32", [50, 8]))
def _(w, u, xs):
    w, u = w * 0.05, u * 0.1
    h, _ = jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x @ u), None), jnp.zeros(32, w.dtype), xs)
    return jnp.sum(h)


# A transposed outer product added to another product: XLA computes it as the outer product of
# the operands exchanged and contracts it, not the other product, into the sum.
@case("transposed_outer_fma", ("float32", [16, 8]), ("float32", [8]), ("float32", [16]),
      ("float32", [16, 8]))
def _(a, b, c, d):
    e = 0.75 - d
    outer = jax.lax.dot_general(b, c, (((), ()), ((), ())))
    return outer.T - (a / (e * e + 1.0)) * (2.0 * e)


# Indexing: an embedding lookup (gather; its gradient a scatter-add) and updates through
# `.at[]` (scatter, scatter-add, scatter-max), with duplicate, negative and out-of-range
# indices.
@case("embedding_lookup", ("float32", [6, 4]), ("int32", [5], 9))
def _(table, ids):
    return jnp.sum(jnp.tanh(table[ids - 4]) ** 2)


@case("at_updates", ("float32", [6, 3]), ("float32", [4, 3]), ("int32", [4], 7))
def _(x, u, i):
    y = x.at[i].set(u * 2.0).at[i - 3].add(u).at[i].max(u + 1.0, mode="clip")
    return jnp.sum(jnp.sin(y))


@case("cond_scalar_grad", ("float32", []))
def _(x):
    return jax.lax.cond(x > 0, jnp.sin, lambda v: v * v * v, x)


@case("switch_grad", ("float32", [3]), ("int32", [], 5))
def _(x, i):
    return jax.lax.switch(i, [jnp.sum, lambda a: jnp.sum(jnp.exp(a)), lambda a: a[0] * a[1]], x)


@case("fori_static_grad", ("float32", []))
def _(x):
    return jax.lax.fori_loop(0, 3, lambda i, c: c * jnp.sin(c) + i, x)


@case("while_grad_refused", ("float32", []))
def _(x):
    return jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, x))[1]


@case("scan_consts_reverse_grad", ("float32", [4]), ("float32", [4, 4]))
def _(x, m):
    def body(c, _):
        return jnp.cos(m @ c) * x, jnp.dot(c, x)
    c, ys = jax.lax.scan(body, x, None, length=3, reverse=True)
    return jnp.sum(c) * jnp.sum(ys)


@case("nested_scan_grad", ("float32", [2, 3]))
def _(xs):
    def outer(c, row):
        inner, _ = jax.lax.scan(lambda a, v: (a * jnp.cos(v) + v, None), c, row)
        return inner, inner * c
    c, ys = jax.lax.scan(outer, jnp.float32(1.0), xs)
    return c + jnp.sum(ys)


@case("scan_int_and_bf16_carry", ("bfloat16", [3]), ("int32", [], 7))
def _(x, n):
    def body(c, _):
        i, v = c
        return (i + n, v * jnp.bfloat16(0.75) + (i % 3).astype(jnp.bfloat16)), v.sum()
    (i, v), ys = jax.lax.scan(body, (jnp.int32(0), x), None, length=4)
    return i, v, ys


@case("scan_grad_x64", ("float64", [3]), ("float64", [4, 3]), x64=True)
def _(c, xs):
    c, ys = jax.lax.scan(lambda c, x: (jnp.sin(c) * x + c, jnp.log1p(c * c)), c, xs)
    return jnp.sum(c) + jnp.sum(ys)


@case("cond_inside_scan_grad", ("float32", [3]))
def _(x):
    def body(c, i):
        return jax.lax.cond(i % 2 == 0, lambda: c * jnp.tanh(c), lambda: c + 1.0), c.sum()
    c, ys = jax.lax.scan(body, x, jnp.arange(4))
    return jnp.sum(c) + jnp.sum(ys)


@case("while_inside_jit_linearize", ("float32", [2]), ("float32", [2]))
def _(x, y):
    return jax.lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * y + x), (0, x))[1]


def main():
    if sys.argv[1:] == ["--train-mlp"]:
        json.dump(train_mlp_step(), sys.stdout, indent=0)
        sys.stdout.write("\n")
        return
    cases = [record(*c) for c in CASES]
    doc = {"generator": "tools/gen_jaxpr_fixtures.py",
           "versions": {"jax": jax.__version__, "numpy": np.__version__,
                        "ml_dtypes": ml_dtypes.__version__},
           "cases": cases}
    json.dump(doc, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
