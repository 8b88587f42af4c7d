"""Fixtures for JAX's transformations (issue 11): a corpus of functions, each written once
here and once in crates/dtype-lattice-array/tests/it/transformations.rs under the same name, run
through real JAX 0.10 (x64 off): the text of `jax.make_jaxpr` and its equations (primitive and
output avals), the values of `jit` and of `jvp` along a tangent of ones.

A second corpus, VMAP, exercises jax.vmap (each case also written in the same test file):
in_axes/out_axes including None and axis 1, pytree outputs, nested vmap, vmap composed with
grad, jvp and jit, the structural, slicing, reduction and PRNG primitives under vmap, and
vmap's ValueErrors (VMAP_ERRORS).

A third corpus, FLOAT0, exercises JAX's float0 tangents of integer, boolean and key values
(each case also written in the same test file): jvp, linearize, vjp, grad with allow_int, vmap
and jit over integer inputs and outputs, mixed integer/float argument pytrees, custom_jvp and
custom_vjp with integer arguments, the jaxprs JAX prints for them, the reprs of float0 arrays,
and the TypeErrors/ValueErrors of every check (FLOAT0_ERRORS), with their exact messages.

Run with the venv of tools/requirements-jax.txt:
    tools/.venv-jax/bin/python tools/gen_transform_fixtures.py
Writes tests/fixtures/transformations/corpus.json, tests/fixtures/transformations/vmap.json and
tests/fixtures/transformations/float0.json.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from fixturelib import pin_xla_isa, write_fixture  # noqa: E402

pin_xla_isa()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..")


def select_tril(x):
    mask = jnp.arange(x.shape[0])[:, None] > jnp.arange(x.shape[1])
    return lax.select(mask, x, jnp.zeros_like(x))


# name -> (function, argument builders). Arguments: (dtype, shape) filled with a fixed
# pattern, or ("weak", value) for a Python scalar.
CORPUS = {
    "sin_mul_add": (lambda x: jnp.sin(x) * 2.0 + 1, [("float32", (3,))]),
    "omnistaging_add": (lambda x: x * lax.add(1, 1), [("int32", ())]),
    "select_tril": (select_tril, [("float32", (3, 3))]),
    "poly": (lambda x: x * x * x - 2 * x + 1, [("float32", (4,))]),
    "exp_log": (lambda x: jnp.log1p(jnp.exp(-jnp.abs(x))) + jnp.maximum(x, 0), [("float32", (5,))]),
    "tanh_logistic": (lambda x: jnp.tanh(x) * jax.nn.sigmoid(x), [("float32", (4,))]),
    "matmul_bias": (lambda x, w: jnp.tanh(x @ w + 1.0), [("float32", (2, 3)), ("float32", (3, 4))]),
    "sum_mean": (lambda x: jnp.sum(x * x) / x.size + jnp.mean(x), [("float32", (2, 3))]),
    "mixed_dtypes": (lambda x, y: x + y, [("float32", ()), ("bfloat16", (2,))]),
    "weak_scalar": (lambda x: x * 3 + 0.5, [("bfloat16", (3,))]),
    "sqrt_div": (lambda x, y: jnp.sqrt(x * x + 1.0) / (y * y + 2.0), [("float32", (3,)), ("float32", (3,))]),
    "reduce_max": (lambda x: jnp.max(x, axis=1), [("float32", (2, 3))]),
    "where_relu": (lambda x: jnp.where(x > 0, x, 0.1 * x), [("float32", (6,))]),
    "broadcast_add": (lambda x, y: x + y, [("float32", (2, 1)), ("float32", (3,))]),
    "cos_square": (lambda x: jnp.cos(x) ** 2 + jnp.square(jnp.sin(x)), [("float32", (3,))]),
    "sin_times_x": (lambda x: jnp.sin(x) * x, [("float32", ())]),
    "tanh_poly": (lambda x: jnp.tanh(x * x + 1.0) * 3.0, [("float32", ())]),
}


def arg(spec, i):
    kind, shape = spec
    if kind == "weak":
        return shape
    n = int(np.prod(shape)) if shape else 1
    vals = [((k * 7 + 3 * i) % 11) / 4.0 - 1.3 for k in range(n)]
    return jnp.asarray(np.array(vals, dtype=np.float64).reshape(shape), dtype=kind)


def out_record(x):
    if getattr(x, "dtype", None) == jax.dtypes.float0:
        return {"dtype": "float0", "shape": list(x.shape), "values": []}
    x = jnp.asarray(x)
    return {
        "dtype": str(x.dtype),
        "shape": list(x.shape),
        "values": [float(v) for v in np.asarray(x, dtype=np.float64).ravel()],
    }


def aval_text(v):
    return str(v.aval.str_short(short_dtypes=True))


def vmap_arg(spec, i):
    """A vmap case's argument: ("keys", seed, n) is jax.random.split(jax.random.key(seed), n);
    ("mod", dtype, shape, m) has element k = (7k + 3i) mod m; else as arg()."""
    if spec[0] == "keys":
        return jax.random.split(jax.random.key(spec[1]), spec[2])
    if spec[0] == "key":
        return jax.random.key(spec[1])
    if spec[0] == "mod":
        _, dtype, shape, m = spec
        n = int(np.prod(shape)) if shape else 1
        vals = [(k * 7 + 3 * i) % m for k in range(n)]
        return jnp.asarray(np.array(vals).reshape(shape), dtype=dtype)
    return arg(spec, i)


def vmap_spec_json(spec):
    if spec[0] in ("keys", "key"):
        return list(spec)
    if spec[0] == "mod":
        return ["mod", spec[1], list(spec[2]), spec[3]]
    return [spec[0], list(spec[1])]


def leaf_record(x):
    if jnp.issubdtype(getattr(x, "dtype", np.float32), jax.dtypes.prng_key):
        return {"key_data": out_record(jax.random.key_data(x))}
    if jnp.asarray(x).dtype == jnp.bool_:
        x = jnp.asarray(x)
        return {"dtype": "bool", "shape": list(x.shape),
                "values": [float(v) for v in np.asarray(x, dtype=np.float64).ravel()]}
    return out_record(x)


def _softmax(z):
    e = jnp.exp(z)
    return e / jnp.sum(e)


def _structural(x):
    flat = jnp.transpose(x).reshape(-1)
    return jnp.concatenate([lax.rev(x, (0,)).reshape(-1), flat])


# name -> (function of the arguments, argument specs). The function applies jax.vmap itself
# (with in_axes/out_axes, nested, composed); the Rust twin in tests/it/transformations.rs does the
# same with core::vmap. Outputs are pytrees; their leaves are recorded in order.
VMAP = {
    "vmap_sin_mul_add": (jax.vmap(lambda x: jnp.sin(x) * 2.0 + 1), [("float32", (4, 3))]),
    "vmap_in_axis1": (jax.vmap(lambda x: jnp.sum(x * x), in_axes=1), [("float32", (2, 5))]),
    "vmap_out_axis1": (jax.vmap(lambda x: jnp.cumsum(x) * 2, out_axes=1), [("float32", (3, 4))]),
    "vmap_shared_matmul": (jax.vmap(lambda x, w: x @ w, in_axes=(0, None)),
                           [("float32", (5, 3)), ("float32", (3, 2))]),
    "vmap_matmul_both": (jax.vmap(lambda a, b: a @ b),
                         [("float32", (4, 2, 3)), ("float32", (4, 3, 5))]),
    "vmap_matmul_axes": (jax.vmap(lambda a, b: a @ b, in_axes=(1, 1)),
                         [("float32", (2, 4, 3)), ("float32", (3, 4))]),
    "vmap_out_none": (jax.vmap(lambda x, y: (x + 1, y * 2), in_axes=(0, None), out_axes=(0, None)),
                      [("float32", (3, 2)), ("float32", (2,))]),
    "vmap_broadcast_out": (jax.vmap(lambda x, y: (jnp.sum(x), y * 2.0), in_axes=(0, None),
                                    out_axes=(0, 1)),
                           [("float32", (3, 2)), ("float32", (2,))]),
    "vmap_nested": (jax.vmap(jax.vmap(lambda x, y: x * y + jnp.max(x), in_axes=(0, None)),
                             in_axes=(None, 0)),
                    [("float32", (3, 5)), ("float32", (4, 5))]),
    "vmap_grad": (jax.vmap(jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2))), [("float32", (4, 3))]),
    "grad_vmap": (jax.grad(lambda x: jnp.sum(jax.vmap(lambda r: jnp.sin(r) * jnp.sum(r * r))(x))),
                  [("float32", (3, 4))]),
    "vmap_jvp": (jax.vmap(lambda x: jax.jvp(lambda z: jnp.sin(z) * z, (x,), (jnp.ones_like(x),))[1]),
                 [("float32", (3, 4))]),
    "jvp_vmap": (lambda x: jax.jvp(jax.vmap(lambda z: jnp.sin(z) * jnp.sum(z)), (x,),
                                   (jnp.ones_like(x),)),
                 [("float32", (3, 4))]),
    "vmap_jit": (jax.vmap(jax.jit(_softmax)), [("float32", (3, 4))]),
    "jit_vmap": (jax.jit(jax.vmap(_softmax)), [("float32", (3, 4))]),
    "vmap_where": (jax.vmap(lambda x, y: jnp.where(x > 0, x, y), in_axes=(0, None)),
                   [("float32", (4, 3)), ("float32", (3,))]),
    "vmap_structural": (jax.vmap(_structural, in_axes=1), [("float32", (2, 5, 3))]),
    "vmap_pad_value": (jax.vmap(lambda x, v: lax.pad(x, v, [(1, 2, 1)])),
                       [("float32", (3, 4)), ("float32", (3,))]),
    "vmap_pad": (jax.vmap(lambda x, v: lax.pad(x, v, [(2, 0, 1), (-1, 1, 0)]), in_axes=(2, None)),
                 [("float32", (3, 4, 2)), ("float32", ())]),
    "vmap_dynamic_slice": (jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,))),
                           [("float32", (4, 6)), ("mod", "int32", (4,), 6)]),
    "vmap_dynamic_update_slice": (jax.vmap(lambda x, u, i: lax.dynamic_update_slice(x, u, (i,))),
                                  [("float32", (4, 6)), ("float32", (4, 2)),
                                   ("mod", "int32", (4,), 6)]),
    "vmap_dynamic_slice_shared": (jax.vmap(lambda x: lax.dynamic_slice(x, (1, 0), (2, 2)),
                                           in_axes=1),
                                  [("float32", (3, 4, 2))]),
    "vmap_dus_shared": (jax.vmap(lambda x, u: lax.dynamic_update_slice(x, u, (1,)),
                                 in_axes=(0, None)),
                        [("float32", (3, 5)), ("float32", (2,))]),
    "vmap_clamp": (jax.vmap(lambda lo, x: lax.clamp(lo, x, np.float32(1.0))),
                   [("float32", (4,)), ("float32", (4, 3))]),
    "vmap_argmax_cumsum": (jax.vmap(lambda x: (lax.argmax(x, 1, jnp.int32), lax.cumsum(x, 0)),
                                    in_axes=1),
                           [("float32", (3, 4, 5))]),
    "vmap_reduce_out1": (jax.vmap(lambda x: jnp.max(x, axis=0), in_axes=1, out_axes=1),
                         [("float32", (4, 3, 2))]),
    "vmap_iota_add": (jax.vmap(lambda x: x + jnp.arange(3.0, dtype=jnp.float32)),
                      [("float32", (2, 3))]),
    "vmap_bitcast": (jax.vmap(lambda x: lax.bitcast_convert_type(x, jnp.int32) + x.astype(jnp.int32)),
                     [("float32", (3, 2))]),
    "vmap_bitcast_last": (jax.vmap(lambda x: lax.bitcast_convert_type(x, jnp.uint16), in_axes=1),
                          [("float32", (2, 3))]),
    "vmap_concatenate": (jax.vmap(lambda x, y: jnp.concatenate([x, y, x]), in_axes=(0, None)),
                         [("float32", (3, 2)), ("float32", (4,))]),
    "vmap_dot_vec": (jax.vmap(lambda x, y: jnp.dot(x, y), in_axes=(1, 0)),
                     [("float32", (3, 4)), ("float32", (4, 3))]),
    "vmap_select_scalar_which": (jax.vmap(lambda c, x: lax.select_n(c > 0, -x, x)),
                                 [("float32", (4,)), ("float32", (4, 3))]),
    "vmap_reshape_squeeze": (jax.vmap(lambda x: lax.squeeze(lax.expand_dims(jnp.reshape(x, (1, 6)), (2,)),
                                                            (0, 2)) + 1, in_axes=2),
                             [("float32", (2, 3, 4))]),
    "vmap_broadcast_in_dim": (jax.vmap(lambda x: lax.broadcast_in_dim(x, (2, 3), (1,))),
                              [("float32", (4, 3))]),
    "vmap_strided_slice": (jax.vmap(lambda x: x[1::2]), [("float32", (3, 6))]),
    "vmap_all": (jax.vmap(lambda x: jnp.all(x > 0, axis=1), in_axes=2), [("float32", (2, 3, 4))]),
    "vmap_keys_bits": (jax.vmap(lambda k: jax.random.bits(k, (3,))), [("keys", 0, 4)]),
    "vmap_keys_normal": (jax.vmap(lambda k: jax.random.normal(k, (2, 3))), [("keys", 1, 3)]),
    "vmap_keys_uniform": (jax.vmap(lambda k: jax.random.uniform(k, (5,), minval=-2.0, maxval=2.0)),
                          [("keys", 2, 3)]),
    "vmap_keys_split_fold": (jax.vmap(lambda k: jax.random.split(jax.random.fold_in(k, 7), 2)),
                             [("keys", 3, 3)]),
    "vmap_keys_bernoulli": (jax.vmap(lambda k: jax.random.bernoulli(k, 0.3, (4,))), [("keys", 4, 3)]),
    "vmap_fold_in_data": (jax.vmap(lambda k, d: jax.random.key_data(jax.random.fold_in(k, d)),
                                   in_axes=(None, 0)),
                          [("key", 5), ("mod", "uint32", (4,), 1000)]),
    "jit_vmap_keys_normal": (jax.jit(jax.vmap(lambda k: jax.random.normal(k, (3,)))),
                             [("keys", 6, 2)]),
}


def _closing_vjp(c, x):
    """A custom_vjp function closing over `c` (JEP 4008: allowed under vmap and jit)."""
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x) * c

    def fwd(x):
        return f(x), jnp.cos(x)

    def bwd(cos_x, g):
        return (g * cos_x * c,)

    f.defvjp(fwd, bwd)
    return f(x)


def _closing_jvp(c, x):
    """A custom_jvp function closing over `c`."""
    @jax.custom_jvp
    def f(x):
        return x * c + 1.0

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), t * c * 3.0

    return f(x)


VMAP.update({
    # The custom function's operand is not mapped: only the closed-over value is.
    "vmap_custom_vjp_closure": (jax.vmap(lambda c: _closing_vjp(c, jnp.float32(2.0))),
                                [("float32", (4,))]),
    "vmap_custom_jvp_closure": (jax.vmap(_closing_jvp, in_axes=(0, None)),
                                [("float32", (4,)), ("float32", (3,))]),
    "jit_custom_vjp_closure": (jax.jit(lambda c, x: _closing_vjp(c, x)),
                               [("float32", (3,)), ("float32", (3,))]),
    "grad_custom_vjp_closure_arg": (jax.grad(lambda x, c: jnp.sum(_closing_vjp(c, x))),
                                    [("float32", (3,)), ("float32", (3,))]),
})

# name -> (function, argument specs): differentiating with respect to a value a custom_vjp
# function closes over (JEP 4008): JAX's UnexpectedTracerError.
TRACER_ERRORS = {
    "grad_custom_vjp_closed_over": (jax.grad(lambda c: jnp.sum(_closing_vjp(c, jnp.float32(2.0)))),
                                    [("float32", (3,))]),
    "jvp_custom_vjp_closed_over": (lambda c: jax.jvp(lambda c: _closing_vjp(c, jnp.float32(2.0)),
                                                     (c,), (jnp.ones_like(c),)),
                                   [("float32", (3,))]),
}


class Anon:
    """A function JAX reads no signature from: it names the arguments args[i] in its messages,
    as the Rust messages name the leaves."""

    __signature__ = "unknown"

    def __init__(self, f):
        self.f = f

    def __call__(self, *a):
        return self.f(*a)


# name -> (function, argument specs): vmap's ValueErrors.
VMAP_ERRORS = {
    "inconsistent_sizes": (jax.vmap(Anon(lambda x, y: x + y)),
                           [("float32", (3,)), ("float32", (4,))]),
    "inconsistent_most": (jax.vmap(Anon(lambda x, y, z: x + y + z)),
                          [("float32", (3,)), ("float32", (3,)), ("float32", (4, 2))]),
    "rank_too_small": (jax.vmap(Anon(lambda x: x), in_axes=1), [("float32", (3,))]),
    "no_mapped_axis": (jax.vmap(Anon(lambda x: x), in_axes=None), [("float32", (3,))]),
    "out_axes_none": (jax.vmap(Anon(lambda x: x), out_axes=None), [("float32", (3,))]),
    "out_axis_out_of_range": (jax.vmap(Anon(lambda x: x), out_axes=2), [("float32", (3,))]),
}


def vmap_cases():
    cases = []
    for name, (f, specs) in VMAP.items():
        args = [vmap_arg(s, i) for i, s in enumerate(specs)]
        out = f(*args)
        cases.append({
            "name": name,
            "args": [vmap_spec_json(s) for s in specs],
            "outputs": [leaf_record(x) for x in jax.tree_util.tree_leaves(out)],
        })
    for name, (f, specs) in VMAP_ERRORS.items():
        args = [vmap_arg(s, i) for i, s in enumerate(specs)]
        try:
            f(*args)
        except ValueError as e:
            cases.append({
                "name": name,
                "args": [vmap_spec_json(s) for s in specs],
                "error": {"exception": "ValueError", "message": str(e)},
            })
        else:
            raise AssertionError(f"{name} did not fail")
    for name, (f, specs) in TRACER_ERRORS.items():
        args = [vmap_arg(s, i) for i, s in enumerate(specs)]
        try:
            f(*args)
        except jax.errors.UnexpectedTracerError as e:
            cases.append({
                "name": name,
                "args": [vmap_spec_json(s) for s in specs],
                "error": {"exception": "UnexpectedTracerError", "message": str(e)},
            })
        else:
            raise AssertionError(f"{name} did not fail")
    return cases


F0 = jax.dtypes.float0


def f0(shape):
    """float0 zeros of a shape (what jax.jvp takes as an integer's tangent)."""
    return np.zeros(shape, dtype=F0)


def float0_leaf(x):
    """One output leaf: dtype, shape, values (none for float0) and JAX's repr."""
    rec = leaf_record(x)
    rec["repr"] = repr(x)
    return rec


@jax.custom_jvp
def _cj(x, n):
    return x * n


@_cj.defjvp
def _cj_jvp(primals, tangents):
    (x, n), (tx, tn) = primals, tangents
    assert tn.dtype == F0, tn.dtype  # the rule receives float0 for the int argument
    return x * n, tx * n * 10.0


@jax.custom_vjp
def _cv(x, n):
    return x * n


def _cv_fwd(x, n):
    return x * n, (x, n)


def _cv_bwd(res, g):
    x, n = res
    return g * n * 10.0, None


_cv.defvjp(_cv_fwd, _cv_bwd)


@jax.custom_vjp
def _cv_int_out(x):
    return x * 2.0, (x * 3.0).astype(jnp.int32)


def _cv_int_out_fwd(x):
    return _cv_int_out(x), None


def _cv_int_out_bwd(_, g):
    g_float, g_int = g
    assert g_int.dtype == F0, g_int.dtype  # bwd receives float0 for the int output
    return (g_float * 5.0,)


_cv_int_out.defvjp(_cv_int_out_fwd, _cv_int_out_bwd)


def _linearized(f, n_args):
    """linearize f at the arguments, then apply f_jvp to tangents of ones (float0 zeros for
    integer arguments): (primal outputs, output tangents)."""
    def run(*args):
        y, f_jvp = jax.linearize(f, *args)
        ts = [jnp.ones_like(a) if jnp.issubdtype(a.dtype, jnp.inexact) else f0(a.shape)
              for a in args[:n_args]]
        return y, f_jvp(*ts)
    return run


def _vjp_ones(f):
    """vjp of f at the arguments with cotangents of ones (float0 zeros for integer outputs)."""
    def run(*args):
        y, pullback = jax.vjp(f, *args)
        cts = jax.tree_util.tree_map(
            lambda o: jnp.ones_like(o) if jnp.issubdtype(o.dtype, jnp.inexact) else f0(o.shape),
            y)
        return y, pullback(cts)
    return run


def _jvp_ones(f):
    """jvp of f at the arguments along ones (float0 zeros for integer arguments)."""
    def run(*args):
        ts = tuple(jnp.ones_like(a) if jnp.issubdtype(a.dtype, jnp.inexact) else f0(a.shape)
                   for a in args)
        return jax.jvp(f, args, ts)
    return run


# name -> (function of the arguments, argument specs). Outputs: the leaves of the result.
# Argument specs as VMAP's, plus ("bool", shape): element k is (7k + 3i) mod 3 == 0.
FLOAT0 = {
    "jvp_int_mul": (_jvp_ones(lambda n: n * 2), [("mod", "int32", (3,), 5)]),
    "jvp_int_scalar": (_jvp_ones(lambda n: n * 2), [("mod", "int32", (), 5)]),
    "jvp_float_to_int": (_jvp_ones(lambda x: (x * 2).astype(jnp.int32)), [("float32", (3,))]),
    "jvp_float_to_bool": (_jvp_ones(lambda x: x > 0), [("float32", (3,))]),
    "jvp_int_to_float": (_jvp_ones(lambda n: n.astype(jnp.float32) * 2), [("mod", "int32", (2,), 5)]),
    "jvp_mixed": (_jvp_ones(lambda x, n: (x * n, n + 1)),
                  [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "jvp_bool_where": (_jvp_ones(lambda b, x: jnp.where(b, x, -x)),
                       [("bool", (3,)), ("float32", (3,))]),
    "jvp_uint8": (_jvp_ones(lambda n: n), [("mod", "uint8", (2, 2), 200)]),
    "jvp_key": (_jvp_ones(lambda k: jax.random.key_data(k)), [("key", 0)]),
    "linearize_mixed": (_linearized(lambda x, n: x * n, 2),
                        [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "linearize_int_out": (_linearized(lambda x: (x * 2, (x * 2).astype(jnp.int32)), 1),
                          [("float32", (3,))]),
    "vjp_mixed": (_vjp_ones(lambda x, n: x * n), [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "vjp_int_out": (_vjp_ones(lambda x: (x * 2, (x * 3).astype(jnp.int32))), [("float32", (3,))]),
    "vjp_int_to_int": (_vjp_ones(lambda n: n * 2), [("mod", "int32", (3,), 5)]),
    "grad_allow_int": (jax.grad(lambda x, n: jnp.sum(x * n), argnums=(0, 1), allow_int=True),
                       [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "grad_allow_int_only": (jax.grad(lambda n: jnp.sum(n.astype(jnp.float32) * 2.0),
                                     allow_int=True),
                            [("mod", "int32", (3,), 5)]),
    "value_and_grad_allow_bool": (jax.value_and_grad(
        lambda b, x: jnp.sum(jnp.where(b, x, 0.0)), argnums=(0, 1), allow_int=True),
        [("bool", (3,)), ("float32", (3,))]),
    "grad_allow_int_key": (jax.grad(lambda k, x: jnp.sum(jax.random.normal(k, (3,)) * x),
                                    argnums=(0, 1), allow_int=True),
                           [("key", 1), ("float32", (3,))]),
    "vmap_grad_allow_int": (jax.vmap(jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)),
                            [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "vmap_jvp_int": (jax.vmap(_jvp_ones(lambda n: n * 2)), [("mod", "int32", (3,), 5)]),
    "vmap_jvp_out_axis1": (jax.vmap(lambda n: _jvp_ones(lambda n: n * 2)(n)[1], out_axes=1),
                           [("mod", "int32", (3, 2), 5)]),
    "jvp_vmap_int": (_jvp_ones(jax.vmap(lambda n: n * 2)), [("mod", "int32", (3,), 5)]),
    "jit_jvp_int": (jax.jit(_jvp_ones(lambda x, n: (x * n, n * 2))),
                    [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "jit_grad_allow_int": (jax.jit(jax.grad(lambda x, n: jnp.sum(x * n), argnums=(0, 1),
                                            allow_int=True)),
                           [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "custom_jvp_int_arg": (_jvp_ones(_cj), [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "custom_jvp_int_arg_grad": (jax.grad(lambda x, n: jnp.sum(_cj(x, n)), argnums=(0, 1),
                                         allow_int=True),
                                [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "custom_vjp_int_arg_grad": (jax.grad(lambda x, n: jnp.sum(_cv(x, n)), argnums=(0, 1),
                                         allow_int=True),
                                [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "custom_vjp_int_out": (_vjp_ones(_cv_int_out), [("float32", (3,))]),
    # lax.pow with an integer exponent (jnp.power's third case): d/dx is 0 where the exponent
    # is 0, n * x^(n-1) (in x's dtype) elsewhere.
    "jvp_power_int_exponent": (_jvp_ones(jnp.power),
                               [("float32", (5,)), ("mod", "int32", (5,), 5)]),
}

# name -> (function, argument specs): the jaxprs JAX prints for float0 tangents.
FLOAT0_JAXPRS = {
    "jaxpr_jvp_int_scalar": (lambda n: jax.jvp(lambda n: n * 2, (n,), (f0(()),)),
                             [("mod", "int32", (), 5)]),
    "jaxpr_jvp_int": (lambda n: jax.jvp(lambda n: n * 2, (n,), (f0((3,)),)),
                      [("mod", "int32", (3,), 5)]),
    "jaxpr_jvp_float_to_int": (lambda x: jax.jvp(lambda z: (z * 2).astype(jnp.int32), (x,),
                                                 (jnp.ones_like(x),)),
                               [("float32", ())]),
    "jaxpr_grad_allow_int": (jax.grad(lambda n: jnp.sum(n * 2.0), allow_int=True),
                             [("mod", "int32", (3,), 5)]),
    "jaxpr_vmap_grad_allow_int": (jax.vmap(jax.grad(lambda x, n: x * n, argnums=(0, 1),
                                                    allow_int=True)),
                                  [("float32", (3,)), ("mod", "int32", (3,), 5)]),
    "jaxpr_float0_arg": (lambda t: lax.broadcast_in_dim(t, (2, 3), (1,)), [("float0", (3,))]),
    "jaxpr_float0_convert": (lambda t: lax.convert_element_type(t, jnp.float32),
                             [("float0", (3,))]),
    # jnp.power of a float and an integer array: ranks promoted, an unused promotion, then
    # pow of the operands as they are; its jvp broadcasts both (reshape, broadcast_in_dim).
    "jaxpr_power_int_exponent": (jnp.power, [("float32", (2, 1)), ("mod", "int32", (3,), 5)]),
    "jaxpr_jvp_power_int_exponent": (
        lambda x, n: jax.jvp(jnp.power, (x, n), (jnp.ones_like(x), f0(n.shape))),
        [("float32", (2, 1)), ("mod", "int32", (1, 3), 5)]),
}


@jax.custom_jvp
def _cj_bad_int(x):
    return (x * 2).astype(jnp.int32)


@_cj_bad_int.defjvp
def _cj_bad_int_jvp(p, t):
    return _cj_bad_int(p[0]), jnp.zeros(p[0].shape, jnp.int32)


@jax.custom_jvp
def _cj_bad_f0(x):
    return x * 2


@_cj_bad_f0.defjvp
def _cj_bad_f0_jvp(p, t):
    return _cj_bad_f0(p[0]), f0(p[0].shape)


@jax.custom_vjp
def _cv_bad_shape(x, n):
    return x * n


_cv_bad_shape.defvjp(lambda x, n: (x * n, (x, n)), lambda res, g: (jnp.ones(2), None))


def _lin_apply(f, tangent):
    def run(*args):
        _, f_jvp = jax.linearize(f, *args)
        return f_jvp(tangent(args[0]))
    return run


def _vjp_apply(f, ct):
    def run(*args):
        y, pullback = jax.vjp(f, *args)
        return pullback(ct(y))
    return run


# name -> (function, argument specs): JAX's refusals around float0, with exception class and
# message.
FLOAT0_ERRORS = {
    "jvp_int_tangent_int": (lambda n: jax.jvp(lambda n: n * 2, (n,), (n,)), [("mod", "int32", (), 5)]),
    "jvp_int_tangent_float": (lambda n: jax.jvp(lambda n: n * 2, (n,), (jnp.ones(n.shape),)),
                              [("mod", "int32", (3,), 5)]),
    "jvp_float_tangent_float0": (lambda x: jax.jvp(lambda x: x * 2, (x,), (f0(x.shape),)),
                                 [("float32", (3,))]),
    "jvp_float_tangent_f16": (lambda x: jax.jvp(lambda x: x * 2, (x,), (x.astype(jnp.float16),)),
                              [("float32", (3,))]),
    "jvp_bool_tangent_bool": (lambda b: jax.jvp(lambda b: b, (b,), (b,)), [("bool", (3,))]),
    "jvp_int_shape": (lambda n: jax.jvp(lambda n: n, (n,), (f0((2,)),)), [("mod", "int32", (3,), 5)]),
    "jvp_float_shape": (lambda x: jax.jvp(lambda x: x, (x,), (jnp.ones(2),)), [("float32", (3,))]),
    "grad_int": (jax.grad(lambda n: jnp.sum(n * 2.0)), [("mod", "int32", (3,), 5)]),
    "grad_bool": (jax.grad(lambda b: jnp.sum(jnp.where(b, 1.0, 0.0))), [("bool", (3,))]),
    "grad_uint8_in_pytree": (jax.grad(lambda x, n: jnp.sum(x * n), argnums=(0, 1)),
                             [("float32", (3,)), ("mod", "uint8", (3,), 5)]),
    "grad_key": (jax.grad(lambda k: 1.0), [("key", 0)]),
    "grad_float0_input": (jax.grad(lambda t: 1.0, allow_int=True), [("float0", ())]),
    "grad_int_output": (jax.grad(lambda n: jnp.sum(n * 2), allow_int=True),
                        [("mod", "int32", (3,), 5)]),
    "grad_bool_output": (jax.grad(lambda x: jnp.sum(x) > 0), [("float32", (3,))]),
    "grad_complex_output": (jax.grad(lambda x: jnp.sum(x.astype(jnp.complex64))),
                            [("float32", (3,))]),
    "grad_not_scalar": (jax.grad(lambda x: x * 2), [("float32", (3,))]),
    "linearize_int_tangent_int": (_lin_apply(lambda n: n * 2, lambda n: jnp.ones(n.shape, jnp.int32)),
                                  [("mod", "int32", (3,), 5)]),
    "linearize_float_tangent_float0": (_lin_apply(lambda x: x * 2, lambda x: f0(x.shape)),
                                       [("float32", (3,))]),
    "linearize_weak_tangent_shape": (_lin_apply(lambda x: x * 2, lambda x: jnp.ones(2)),
                                     [("float32", (3,))]),
    "vjp_ct_shape": (_vjp_apply(lambda x: (x * 2, (x * 3).astype(jnp.int32)),
                                lambda y: (jnp.ones(2), f0((3,)))),
                     [("float32", (3,))]),
    "vjp_ct_dtype": (_vjp_apply(lambda x: x * 2, lambda y: jnp.ones(3, jnp.float16)),
                     [("float32", (3,))]),
    "custom_jvp_int_tangent_for_int_out": (lambda x: jax.jvp(_cj_bad_int, (x,), (jnp.ones_like(x),)),
                                           [("float32", (3,))]),
    "custom_jvp_float0_tangent_for_float_out": (lambda x: jax.jvp(_cj_bad_f0, (x,), (jnp.ones_like(x),)),
                                                [("float32", ())]),
    "custom_vjp_bwd_shape": (jax.grad(lambda x, n: _cv_bad_shape(x, n)),
                             [("float32", ()), ("mod", "int32", (), 5)]),
    "jnp_add_float0": (lambda t: jnp.add(t, t), [("float0", (3,))]),
    "jnp_multiply_float0_float": (lambda t: jnp.multiply(t, 2.0), [("float0", (3,))]),
    "lax_add_float0": (lambda t: lax.add(t, t), [("float0", (3,))]),
    "lax_mul_float_float0": (lambda t: lax.mul(jnp.zeros(3), t), [("float0", (3,))]),
    "lax_neg_float0": (lambda t: lax.neg(t), [("float0", (3,))]),
    "lax_reduce_sum_float0": (lambda t: lax.reduce_sum(t, (0,)), [("float0", (3,))]),
    "lax_reduce_max_float0": (lambda t: lax.reduce_max(t, (0,)), [("float0", (3,))]),
    "lax_cumsum_float0": (lambda t: lax.cumsum(t, 0), [("float0", (3,))]),
    "lax_bitcast_float0": (lambda t: lax.bitcast_convert_type(t, jnp.float32), [("float0", (3,))]),
    "convert_key_to_float0": (lambda k: lax.convert_element_type(k, F0), [("key", 0)]),
}

# Type promotion of float0: (label, thunk) -> the result's dtype or the error.
FLOAT0_DTYPES = [
    ("promote_types float0 float0", lambda: jnp.promote_types(F0, F0)),
    ("promote_types float0 float32", lambda: jnp.promote_types(F0, jnp.float32)),
    ("promote_types int32 float0", lambda: jnp.promote_types(jnp.int32, F0)),
    ("promote_types bool float0", lambda: jnp.promote_types(jnp.bool_, F0)),
    ("result_type float0", lambda: jnp.result_type(F0)),
    ("result_type float0 float0", lambda: jnp.result_type(F0, F0)),
    ("result_type float0 float32", lambda: jnp.result_type(F0, jnp.float32)),
    ("result_type float0 1.0", lambda: jnp.result_type(F0, 1.0)),
]


def float0_arg(spec, i):
    if spec[0] == "float0":
        return f0(spec[1])
    if spec[0] == "bool":
        n = int(np.prod(spec[1])) if spec[1] else 1
        vals = [(k * 7 + 3 * i) % 3 == 0 for k in range(n)]
        return jnp.asarray(np.array(vals).reshape(spec[1]))
    return vmap_arg(spec, i)


def float0_spec_json(spec):
    if spec[0] in ("float0", "bool"):
        return [spec[0], list(spec[1])]
    return vmap_spec_json(spec)


def float0_cases():
    cases = []
    for name, (f, specs) in FLOAT0.items():
        args = [float0_arg(s, i) for i, s in enumerate(specs)]
        out = f(*args)
        cases.append({
            "name": name,
            "args": [float0_spec_json(s) for s in specs],
            "outputs": [float0_leaf(x) for x in jax.tree_util.tree_leaves(out)],
        })
    for name, (f, specs) in FLOAT0_JAXPRS.items():
        args = [float0_arg(s, i) for i, s in enumerate(specs)]
        cases.append({
            "name": name,
            "args": [float0_spec_json(s) for s in specs],
            "jaxpr": str(jax.make_jaxpr(f)(*args)),
        })
    for name, (f, specs) in FLOAT0_ERRORS.items():
        args = [float0_arg(s, i) for i, s in enumerate(specs)]
        try:
            f(*args)
        except (TypeError, ValueError) as e:
            cases.append({
                "name": name,
                "args": [float0_spec_json(s) for s in specs],
                "error": {"exception": type(e).__name__, "message": str(e)},
            })
        else:
            raise AssertionError(f"{name} did not fail")
    for label, thunk in FLOAT0_DTYPES:
        try:
            result = {"dtype": str(thunk())}
        except (TypeError, ValueError) as e:
            result = {"error": {"exception": type(e).__name__, "message": str(e)}}
        cases.append({"name": label, "promotion": result})
    for shape in [(), (3,), (2, 3), (0,), (2, 0), (30,), (2, 2, 2), (1001,)]:
        cases.append({
            "name": f"repr {list(shape)}",
            "shape": list(shape),
            "repr": repr(jnp.zeros(shape, F0)),
            "numpy_repr": repr(np.zeros(shape, F0)),
        })
    return cases


def main():
    vcases = vmap_cases()
    header = {
        "generator": "tools/gen_transform_fixtures.py",
        "versions": {"jax": jax.__version__, "numpy": np.__version__},
        "notes": "arguments: element k of argument i is ((7k + 3i) mod 11) / 4 - 1.3, converted; "
                 "[\"mod\", dtype, shape, m]: (7k + 3i) mod m; [\"keys\", seed, n]: "
                 "jax.random.split(jax.random.key(seed), n); [\"key\", seed]: jax.random.key(seed). "
                 "Outputs: the leaves of the output pytree (keys as their key_data).",
    }
    path = os.path.join(ROOT, "tests", "fixtures", "transformations", "vmap.json")
    write_fixture(path, header, vcases)
    print(f"{path}: {len(vcases)} cases")
    cases = []
    for name, (f, specs) in CORPUS.items():
        args = [arg(s, i) for i, s in enumerate(specs)]
        closed = jax.make_jaxpr(f)(*args)
        eqns = [
            {"primitive": e.primitive.name, "outputs": [aval_text(v) for v in e.outvars]}
            for e in closed.jaxpr.eqns
        ]
        out = jax.jit(f)(*args)
        tangents = [
            jnp.ones_like(a)
            if jnp.issubdtype(a.dtype, jnp.inexact)
            else np.zeros(a.shape, dtype=jax.dtypes.float0)
            for a in args
        ]
        jvp_primal, tangent = jax.jvp(f, tuple(args), tuple(tangents))
        # grad of the sum of the output (in float32) with respect to every inexact argument.
        diff = [i for i, a in enumerate(args) if jnp.issubdtype(a.dtype, jnp.inexact)]
        grads = []
        if diff and jnp.issubdtype(jnp.asarray(out).dtype, jnp.inexact):
            g = jax.grad(
                lambda *a: jnp.sum(f(*a)).astype(jnp.float32), argnums=tuple(diff)
            )(*args)
            grads = [out_record(x) for x in g]
        # The jaxpr of grad itself, for scalar functions of one scalar.
        grad_jaxpr = None
        if (
            len(args) == 1
            and args[0].shape == ()
            and jnp.issubdtype(args[0].dtype, jnp.inexact)
            and jnp.asarray(out).shape == ()
        ):
            grad_jaxpr = str(jax.make_jaxpr(jax.grad(f))(*args))
        # vjp with a cotangent of ones.
        primal, pullback = jax.vjp(f, *args)
        vjp_cts = pullback(jnp.ones_like(primal))
        cases.append(
            {
                "name": name,
                "args": [[s[0], list(s[1])] for s in specs],
                "jaxpr": str(closed),
                "eqns": eqns,
                "jit": out_record(out),
                "jvp": [out_record(jvp_primal), out_record(tangent)],
                "grad": grads,
                "grad_jaxpr": grad_jaxpr,
                "vjp": [out_record(c) for c in vjp_cts],
            }
        )
    header = {
        "generator": "tools/gen_transform_fixtures.py",
        "versions": {"jax": jax.__version__, "numpy": np.__version__},
        "notes": "arguments: element k of argument i is ((7k + 3i) mod 11) / 4 - 1.3, converted",
    }
    path = os.path.join(ROOT, "tests", "fixtures", "transformations", "corpus.json")
    write_fixture(path, header, cases)
    print(f"{path}: {len(cases)} functions")
    fcases = float0_cases()
    header = {
        "generator": "tools/gen_transform_fixtures.py",
        "versions": {"jax": jax.__version__, "numpy": np.__version__},
        "notes": "float0 tangents and cotangents of integer, bool and key values. Arguments as "
                 "vmap.json's, plus [\"bool\", shape]: element k of argument i is "
                 "(7k + 3i) mod 3 == 0, and [\"float0\", shape]: float0 zeros. Outputs: the "
                 "leaves of the result (float0 ones without values), with JAX's repr. Errors: "
                 "the exception class and message. Promotion cases: jnp.promote_types / "
                 "jnp.result_type. repr cases: repr(jnp.zeros(shape, float0)) (a TypedNdArray) "
                 "and repr(np.zeros(shape, float0)).",
    }
    path = os.path.join(ROOT, "tests", "fixtures", "transformations", "float0.json")
    write_fixture(path, header, fcases)
    print(f"{path}: {len(fcases)} cases")


if __name__ == "__main__":
    main()
