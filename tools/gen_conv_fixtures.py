"""Convolution conformance: JAX 0.10.2 programs that convolve (`lax.conv_general_dilated` in
every dimension-numbers layout, 1-D, 2-D and 3-D, window strides, explicit padding negative
too, SAME and VALID, lhs dilation (transposed convolutions) and rhs dilation (atrous),
feature groups (grouped and depthwise), batch groups, `preferred_element_type`, float, int,
bool and complex dtypes with x64 on and off; `lax.conv`, `lax.conv_transpose` and
`lax.conv_with_general_padding`), recorded as the jaxpr JAX prints, the inputs and what
`jax.jit` computes, and for `grad_…` programs (a weighted sum of a convolution) the gradient
in the first input: the input for `grad_lhs_…`, the kernel for `grad_rhs_…` (whose first
argument is the kernel). `tests/it/conv.rs` reads the text and evaluates it eagerly, under
jit, differentiated and batched.

    tools/.venv-jax/bin/python tools/gen_conv_fixtures.py > tests/fixtures/indexing/conv.json
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from gen_gather_fixtures import record

CASES = []


def case(name, *args, x64=False):
    def deco(f):
        CASES.append((name, f, args, x64))
        return f
    return deco


rng = np.random.default_rng(4242)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def ints(lo, hi, *shape, dtype=np.int32):
    return rng.integers(lo, hi, shape).astype(dtype)


def conv(x, w, strides, padding, dn=None, **kw):
    return lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=dn, **kw)


# ---- layouts, strides, padding, dilations

x_nchw = normal(2, 3, 7, 6)
w_oihw = normal(4, 3, 3, 2)
x_nhwc = normal(2, 6, 5, 3)
w_hwio = normal(3, 3, 3, 4)
NHWC = ("NHWC", "HWIO", "NHWC")

FORWARD = {
    # name: (x, w, strides, padding, dimension numbers, extra keywords)
    "nchw_valid": (x_nchw, w_oihw, (1, 1), "VALID", None, {}),
    "nchw_same": (x_nchw, w_oihw, (1, 1), "SAME", None, {}),
    "nchw_strided": (x_nchw, w_oihw, (2, 3), [(1, 0), (2, 1)], None, {}),
    "nhwc_same": (x_nhwc, w_hwio, (1, 1), "SAME", NHWC, {}),
    "nhwc_strided_same": (x_nhwc, w_hwio, (2, 2), "SAME", NHWC, {}),
    "nhwc_same_lower": (x_nhwc, w_hwio, (2, 1), "SAME_LOWER", NHWC, {}),
    "conv1d_ncw": (normal(2, 3, 9), normal(5, 3, 3), (2,), [(1, 2)], None, {}),
    "conv1d_nwc": (normal(2, 9, 3), normal(3, 3, 5), (1,), "SAME", ("NWC", "WIO", "NWC"), {}),
    "conv3d_ndhwc": (normal(1, 4, 5, 4, 2), normal(2, 3, 2, 2, 3), (1, 2, 1), "SAME",
                     ("NDHWC", "DHWIO", "NDHWC"), {}),
    "conv3d_ncdhw": (normal(2, 2, 3, 4, 5), normal(3, 2, 2, 2, 3), (1, 1, 2), "VALID", None, {}),
    "odd_layout": (normal(5, 6, 3, 2), normal(2, 4, 3, 3), (1, 2), [(1, 1), (0, 2)],
                   ("HWCN", "OHIW", "WCNH"), {}),
    "output_layout_differs": (x_nhwc, w_hwio, (1, 1), "VALID", ("NHWC", "HWIO", "NCHW"), {}),
    "negative_padding": (x_nchw, w_oihw, (1, 1), [(-1, 2), (1, -2)], None, {}),
    "lhs_dilation": (x_nchw, w_oihw, (1, 1), [(2, 2), (1, 1)], None, {"lhs_dilation": (2, 3)}),
    "rhs_dilation": (x_nchw, w_oihw, (1, 1), [(1, 1), (0, 0)], None, {"rhs_dilation": (2, 3)}),
    "all_dilations_strided": (x_nhwc, w_hwio, (2, 1), [(1, 2), (2, 0)], NHWC,
                              {"lhs_dilation": (2, 1), "rhs_dilation": (1, 2)}),
    "feature_groups": (normal(2, 6, 5, 5), normal(4, 3, 3, 3), (1, 1), "SAME", None,
                       {"feature_group_count": 2}),
    "depthwise_nhwc": (normal(2, 6, 6, 4), normal(3, 3, 1, 8), (1, 1), "SAME", NHWC,
                       {"feature_group_count": 4}),
    "batch_groups": (normal(4, 3, 5, 5), normal(6, 3, 2, 2), (1, 1), "VALID", None,
                     {"batch_group_count": 2}),
    "batch_groups_nhwc": (normal(6, 4, 4, 2), normal(2, 2, 2, 6), (1, 2), "SAME", NHWC,
                          {"batch_group_count": 3}),
    "batch_innermost": (normal(5, 4, 3, 16), normal(4, 3, 3, 2), (1, 2), [(1, 1), (0, 1)],
                        ("HWCN", "OIHW", "NCHW"), {}),
    "batch_innermost_batch_groups": (normal(5, 4, 3, 32), normal(4, 3, 3, 2), (1, 1), "SAME",
                                     ("HWCN", "OIHW", "NHWC"), {"batch_group_count": 2}),
    "no_spatial_dims": (normal(3, 5), normal(4, 5), (), [], None, {}),
    "kernel_larger_than_input": (normal(2, 3, 4), normal(2, 3, 6), (1,), "VALID", None, {}),
    "no_input_features": (normal(2, 0, 5), normal(3, 0, 2), (1,), "VALID", None, {}),
    "long_contraction": (normal(1, 48, 20, 20), normal(8, 48, 9, 11), (1, 1), "VALID", None, {}),
}

for name, (x, w, s, p, dn, kw) in FORWARD.items():
    @case(name, x, w)
    def _(x, w, s=s, p=p, dn=dn, kw=kw):
        return conv(x, w, s, p, dn, **kw)

# ---- dtypes and preferred_element_type

DTYPES = {
    # name: (x, w, x64, extra keywords)
    "float16": (normal(2, 3, 6, 5, dtype=np.float16), normal(4, 3, 3, 3, dtype=np.float16),
                False, {}),
    "bfloat16": (normal(2, 3, 6, 5, dtype=ml_dtypes.bfloat16),
                 normal(4, 3, 3, 3, dtype=ml_dtypes.bfloat16), False, {}),
    "float16_long": (normal(1, 64, 4, dtype=np.float16), normal(2, 64, 3, dtype=np.float16),
                     False, {}),
    "float8_e4m3fn": (normal(1, 8, 6, dtype=ml_dtypes.float8_e4m3fn),
                      normal(2, 8, 3, dtype=ml_dtypes.float8_e4m3fn), False, {}),
    "float64": (normal(2, 3, 6, 5, dtype=np.float64), normal(4, 3, 3, 3, dtype=np.float64),
                True, {}),
    "int32": (ints(-50, 50, 2, 3, 6, 5), ints(-5, 5, 4, 3, 3, 3), False, {}),
    "int8_wraps": (ints(-128, 128, 2, 5, 6, dtype=np.int8), ints(-128, 128, 3, 5, 3, dtype=np.int8),
                   False, {}),
    "uint8_wraps": (ints(0, 256, 2, 5, 6, dtype=np.uint8), ints(0, 256, 3, 5, 3, dtype=np.uint8),
                    False, {}),
    "int16": (ints(-300, 300, 2, 4, 6, dtype=np.int16), ints(-300, 300, 3, 4, 2, dtype=np.int16),
              False, {}),
    "int64": (ints(-10**6, 10**6, 2, 3, 6, dtype=np.int64),
              ints(-10**6, 10**6, 4, 3, 2, dtype=np.int64), True, {}),
    "uint32": (ints(0, 2**32, 2, 3, 6, dtype=np.uint32), ints(0, 2**32, 4, 3, 2, dtype=np.uint32),
               False, {}),
    "int4": (ints(-8, 8, 2, 3, 6, dtype=ml_dtypes.int4), ints(-8, 8, 4, 3, 2, dtype=ml_dtypes.int4),
             False, {}),
    "bool": (rng.integers(0, 2, (2, 3, 6)) > 0, rng.integers(0, 4, (4, 3, 2)) == 0, False, {}),
    "complex64": ((normal(2, 3, 6) + 1j * normal(2, 3, 6)).astype(np.complex64),
                  (normal(4, 3, 2) + 1j * normal(4, 3, 2)).astype(np.complex64), False, {}),
    "complex128": ((normal(2, 3, 6) + 1j * normal(2, 3, 6)).astype(np.complex128),
                   (normal(4, 3, 2) + 1j * normal(4, 3, 2)).astype(np.complex128), True, {}),
    "preferred_int8_int32": (ints(-128, 128, 2, 5, 6, dtype=np.int8),
                             ints(-128, 128, 3, 5, 3, dtype=np.int8), False,
                             {"preferred_element_type": jnp.int32}),
    "preferred_uint8_int16": (ints(0, 256, 2, 5, 6, dtype=np.uint8),
                              ints(0, 256, 3, 5, 3, dtype=np.uint8), False,
                              {"preferred_element_type": jnp.int16}),
    "preferred_int8_float32": (ints(-128, 128, 2, 5, 6, dtype=np.int8),
                               ints(-128, 128, 3, 5, 3, dtype=np.int8), False,
                               {"preferred_element_type": jnp.float32}),
    "preferred_float16_float32": (normal(2, 8, 6, dtype=np.float16),
                                  normal(3, 8, 3, dtype=np.float16), False,
                                  {"preferred_element_type": jnp.float32}),
    "preferred_bfloat16_float32": (normal(2, 8, 6, dtype=ml_dtypes.bfloat16),
                                   normal(3, 8, 3, dtype=ml_dtypes.bfloat16), False,
                                   {"preferred_element_type": jnp.float32}),
    "preferred_float32_float64": (normal(2, 8, 6), normal(3, 8, 3), True,
                                  {"preferred_element_type": jnp.float64}),
    "preferred_bool_int32": (rng.integers(0, 2, (2, 3, 6)) > 0, rng.integers(0, 2, (4, 3, 2)) > 0,
                             False, {"preferred_element_type": jnp.int32}),
    "precision_highest": (normal(2, 3, 6), normal(4, 3, 2), False, {"precision": "highest"}),
}

for name, (x, w, x64, kw) in DTYPES.items():
    @case(name, x, w, x64=x64)
    def _(x, w, kw=kw):
        return conv(x, w, (1,) * (x.ndim - 2), [(1, 0)] * (x.ndim - 2), **kw)

# Subnormal operands (XLA's CPU backend reads them as zeros) and infinities.
special = normal(1, 2, 5)
special[0, 0, 1] = 1e-40
special[0, 1, 3] = np.inf
special_w = normal(2, 2, 2)
special_w[1, 0, 0] = -2e-39


@case("subnormals_and_infinities", special, special_w)
def _(x, w):
    return conv(x, w, (1,), "VALID")


# ---- the convenience wrappers

@case("lax_conv", x_nchw, w_oihw)
def _(x, w):
    return lax.conv(x, w, (1, 2), "SAME")


@case("lax_conv_with_general_padding", x_nchw, w_oihw)
def _(x, w):
    return lax.conv_with_general_padding(x, w, (2, 1), ((1, 0), (0, 1)), (2, 1), (1, 2))


@case("conv_transpose_same", x_nhwc, normal(3, 3, 3, 5))
def _(x, w):
    return lax.conv_transpose(x, w, (2, 2), "SAME")


@case("conv_transpose_valid_kernel", x_nhwc, normal(2, 3, 5, 3))
def _(x, w):
    return lax.conv_transpose(x, w, (2, 1), "VALID", transpose_kernel=True)


@case("conv_transpose_1d_explicit", normal(2, 7, 3), normal(4, 3, 2))
def _(x, w):
    return lax.conv_transpose(x, w, (3,), [(2, 1)], rhs_dilation=(2,))


# ---- gradients in the input (grad_lhs_…) and in the kernel (grad_rhs_…)

GRADS = {
    # name: (x, w, strides, padding, dimension numbers, extra keywords)
    "nchw": (x_nchw, w_oihw, (1, 1), "SAME", None, {}),
    "nhwc_strided": (x_nhwc, w_hwio, (2, 2), "SAME", NHWC, {}),
    "strided_valid": (normal(2, 3, 8, 7), normal(2, 3, 3, 2), (3, 2), "VALID", None, {}),
    "negative_padding": (x_nchw, w_oihw, (1, 2), [(-1, 2), (1, -2)], None, {}),
    "dilations": (x_nchw, w_oihw, (2, 1), [(1, 1), (2, 0)], None,
                  {"lhs_dilation": (1, 2), "rhs_dilation": (2, 1)}),
    "feature_groups": (normal(2, 6, 5, 5), normal(4, 3, 3, 3), (1, 1), "SAME", None,
                       {"feature_group_count": 2}),
    "depthwise": (normal(2, 6, 6, 4), normal(3, 3, 1, 8), (2, 1), "SAME", NHWC,
                  {"feature_group_count": 4}),
    "batch_groups": (normal(4, 3, 5, 5), normal(6, 3, 2, 2), (1, 1), "VALID", None,
                     {"batch_group_count": 2}),
    "conv1d": (normal(2, 9, 3), normal(3, 3, 5), (2,), [(1, 2)], ("NWC", "WIO", "NWC"), {}),
    "conv3d": (normal(1, 4, 5, 4, 2), normal(2, 3, 2, 2, 3), (1, 2, 1), "SAME",
               ("NDHWC", "DHWIO", "NDHWC"), {}),
    "odd_layout": (normal(5, 6, 3, 2), normal(2, 4, 3, 3), (1, 2), [(1, 1), (0, 2)],
                   ("HWCN", "OHIW", "WCNH"), {}),
    "float64": (normal(2, 3, 6, 5, dtype=np.float64), normal(4, 3, 3, 3, dtype=np.float64),
                (1, 1), "SAME", None, {}),
    # Kernel gradients whose transposed convolution has its batch (the input's features)
    # innermost.
    "nhwc_wide": (normal(2, 6, 5, 16), normal(3, 3, 16, 4), (1, 2), "SAME", NHWC, {}),
    "nhwc_wide_groups": (normal(2, 5, 5, 32), normal(3, 2, 16, 4), (1, 1), [(1, 1), (0, 1)], NHWC,
                         {"feature_group_count": 2}),
    "nhwc_wide_dilated": (normal(3, 7, 6, 16), normal(2, 3, 16, 5), (2, 1), [(0, 0), (1, 0)], NHWC,
                          {"rhs_dilation": (2, 1), "lhs_dilation": (1, 2)}),
}

for name, (x, w, s, p, dn, kw) in GRADS.items():
    x64 = x.dtype == np.float64
    out = jax.eval_shape(lambda x, w, s=s, p=p, dn=dn, kw=kw: conv(x, w, s, p, dn, **kw), x, w)
    weights = normal(*out.shape, dtype=x.dtype)

    @case(f"grad_lhs_{name}", x, w, x64=x64)
    def _(x, w, s=s, p=p, dn=dn, kw=kw, c=weights):
        return jnp.sum(conv(x, w, s, p, dn, **kw) * c)

    @case(f"grad_rhs_{name}", w, x, x64=x64)
    def _(w, x, s=s, p=p, dn=dn, kw=kw, c=weights):
        return jnp.sum(conv(x, w, s, p, dn, **kw) * c)


def main():
    doc = {"generator": "tools/gen_conv_fixtures.py",
           "versions": {"jax": jax.__version__, "numpy": np.__version__},
           "cases": [record(*c) for c in CASES]}
    json.dump(doc, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
