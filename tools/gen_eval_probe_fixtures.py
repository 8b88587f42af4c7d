#!/usr/bin/env python3
"""Generate tests/fixtures/eval/{jax_x32,jax_x64,numpy}_probes.json: chosen `eval` lines
that pin down how XLA's CPU backend and NumPy's loops compute where the random cases of
gen_eval_fixtures.py only brushed it (per-operation subnormal handling, the algebraic
simplifier's rewrites, narrow shifts, jit's argument parsing, `power` with an integer exponent
array, `matmul`'s accumulation; NumPy's divmod, signed zeros, complex division, subnormals,
float -> integer casts out of range). Same format, header and comparison as the other eval
fixtures, so tests/it/eval_conformance.rs checks them too (the NumPy file compares NUMPY_EXACT's
functions bit for bit); the lines are data below, grouped by what they probe, and are
evaluated in order in one process per mode (jit's caches carry over from line to line, as in
gen_eval_fixtures.py).

Usage (tools/.venv-jax: jax 0.10.2, numpy 2.4.6, ml_dtypes 0.6.0):
    tools/.venv-jax/bin/python tools/gen_eval_probe_fixtures.py [--out-dir DIR] [--only MODE...]
"""

import argparse
import os
import sys
import warnings

from fixturelib import jax_child_env, run_children, write_fixture

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_eval_fixtures as gen  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_eval_probe_fixtures.py"

# XLA's algebraic simplifier: convert(p) * a => select(p, a, 0); convert(p) / broadcast(b) =>
# select(p, broadcast(1/b), 0), where the conversion is a direct operand.
BOOL_ARITH = """
multiply bool[False,False,False,False,False,False] float16[-1.0,inf,nan,-0.0,1e-40,-3.5]
multiply float32[-1.0,inf,nan,-0.0,1e-40,-3.5] bool[False,False,False,False,False,False]
multiply bool[False,False,False,False,False,False] float64[-1.0,inf,nan,-0.0,1e-40,-3.5]
multiply bool[False,False,False,False,False,False] bfloat16[-1.0,inf,nan,-0.0,1e-40,-3.5]
multiply bool[False,False,False,False,False,False] float8_e4m3fn[-1.0,inf,nan,-0.0,1e-40,-3.5]
multiply bool(False) float32[-1.0,inf,nan,-0.0,1e-40,-3.5]
multiply False float32[-1.0,inf,nan,-0.0,1e-40,-3.5]
multiply bool[False,False] complex64[(-1-1j),(1e+300+1j)]
multiply complex64[(-1-1j),(1e+300+1j)] bool[False,False]
multiply bool[False,False] complex128[(-1-1j),(1e+300+1j)]
multiply bool[False,True] complex64(1e+300j)
multiply bool[[False],[True]] float32[[inf,-1.0]]
multiply bool[[False,True]] float32[[inf],[-1.0]]
multiply bool[False] float32[inf,-1.0]
multiply bool[False,True] float32[inf]
multiply bool(False) float32(inf)
multiply False float32(inf)
multiply False inf
multiply bool[False,True] inf
multiply bool[False,False] float32(-1.0)
multiply bool[False,False] -1.0
multiply bool[False,False] int8[-1,3]
multiply bool[False,False] ~float32[-1.0,inf]
multiply bool[False,True] float32[[inf,1.0]]
multiply bool[False,True] float32[[inf,1.0],[inf,2.0]]
multiply bool[[False,True]] float32[inf,1.0]
multiply bool[[False,True],[False,True]] float32[inf,1.0]
multiply bool[[False,True],[False,True]] float32[[inf],[1.0]]
multiply bool[[False],[True]] float32[[inf],[1.0]]
multiply float32(inf) bool[False,True]
multiply bool[False,True] float32[[inf]]
multiply bool[[False,True]] float32[[inf]]
multiply bool[False,True] float32(inf)
multiply bool[False] float32[[inf]]
multiply bool[False] inf
multiply bool[[False]] float32[inf]
multiply bool[[False,True,False],[True,False,True]] float32[[inf],[nan]]
multiply bool[[False,True,False],[True,False,True]] float32[[inf,nan,inf]]
multiply bool[False,True] 1e-40
multiply True 5e-324
true_divide bool[False,True] complex64(0j)
true_divide bool[False,True] float32(0.0)
true_divide bool[False,True] 0.0
true_divide bool[False,True] float16(-0.0)
true_divide bool[False,True] bfloat16(0.0)
true_divide bool[False,True] float64(nan)
true_divide bool[[False],[True]] float32[[0.0,1.0]]
true_divide bool[[False,True]] float32[[0.0],[1.0]]
true_divide bool[False,True] float32[0.0]
true_divide bool(False) float32(0.0)
true_divide bool(False) 0.0
true_divide bool[False,False] bool[False,False]
true_divide bool[False,True] bool(False)
true_divide bool[False,True] False
true_divide float32[inf,1.0] bool(False)
true_divide bool[[False,True],[False,True]] float32[[0.0]]
true_divide bool[[False,True],[False,True]] float32[0.0]
true_divide bool[[False,True],[False,True]] float32[[0.0],[1.0]]
true_divide bool[[False,True],[False,True]] float32[0.0,1.0]
true_divide bool[False,True] float32[[0.0]]
true_divide bool[False,True] float32[[0.0],[1.0]]
true_divide bool[False] float32(0.0)
true_divide bool(False) float32[0.0]
true_divide bool[[False,True],[False,True]] float32(0.0)
true_divide bool[False,True] float16[0.0]
true_divide bool[False,True] complex128[0j]
true_divide bool[[False,True]] float32[0.0,1.0]
true_divide bool[[[False,True]]] float32[[0.0]]
true_divide bool[[False,True],[True,False]] float32[[[0.0]]]
true_divide bool[False] 0.0
true_divide bool[[False]] float32[0.0]
true_divide bool[[False,True,False],[True,False,True]] float32[[0.0,nan,0.0]]
true_divide bool[[False,True,False],[True,False,True]] float64(0.0)
true_divide bool[[False,True,False],[True,False,True]] ~float32[0.0]
true_divide bool[[False,True,False],[True,False,True]] bool[[False],[True]]
true_divide bool[False,True] 1e-40
divide bool[False,True] float32(0.0)
floor_divide bool[False,True] float32(0.0)
remainder bool[False,True] float32(0.0)
"""

# Subnormal operands (XLA's CPU code runs with denormals off, but not every operation
# flushes: bit operations, selects, glibc's functions and some of XLA's own keep them), for
# each dtype whose subnormals are float32's or float64's.
SUBNORMALS = {"float32": ["1e-40", "-1e-40", "1.401298464324817e-45", "-5.877471754111438e-39"],
              "bfloat16": ["1e-40", "-1e-40", "1.401298464324817e-45", "-5.877471754111438e-39"],
              "float64": ["5e-324", "-5e-324", "1e-310", "-2.2250738585072e-308"]}
UNARY = ["exp", "exp2", "expm1", "log", "log2", "log1p", "sin", "cos", "tan", "tanh", "arcsin",
         "arctan", "sinh", "cosh", "sqrt", "reciprocal", "square", "sign", "floor", "ceil",
         "round", "trunc", "abs", "negative", "positive"]
BINARY = ["add", "subtract", "multiply", "true_divide", "remainder", "power", "arctan2",
          "maximum", "minimum", "floor_divide"]
REDUCE = ["sum", "prod", "max", "min", "mean", "cumsum", "argmax", "argmin", "all", "any"]


def subnormal_lines(x64):
    dtypes = ["float32", "bfloat16"] + (["float64"] if x64 else [])
    out = []
    for dt in dtypes:
        subs = SUBNORMALS[dt]
        for f in UNARY:
            # Sizes: XLA's vector loop (8 lanes) and its rest of 1, 3 or 6 lanes; 2-D; 0-d.
            for n in [1, 3, 4, 6, 8]:
                out.append(f"{f} {dt}[{','.join((subs * 2)[:n])}]")
            out.append(f"{f} {dt}[[{subs[0]},{subs[1]}],[{subs[2]},{subs[3]}]]")
            out.append(f"{f} {dt}({subs[0]})")
        for f in BINARY:
            for n in [1, 3]:
                vals = f"{dt}[{','.join(subs[:n])}]"
                for other in ["2.5", "-2.5", "0.0", "1.0", "-1.0", f"{dt}({subs[0]})"]:
                    out.append(f"{f} {vals} {other}")
                    out.append(f"{f} {other} {vals}")
        for f in REDUCE:
            s = subs[0]
            big = "1e308" if dt == "float64" else "1e+40"
            for vals in [[s, s, "-1.0"], [s, "100.0", "100.0"], [s], ["-" + s, s],
                         [s, big, big], [s] * 5, ["-1.0", s, "-" + s]]:
                out.append(f"{f} {dt}[{','.join(vals)}]")
            out.append(f"{f} {dt}[[{s},{s},-1.0],[{s},2.0,{s}]]")
            out.append(f"{f} {dt}({s})")
    # Truth of a subnormal: bfloat16 against a constant zero is a test of its bits.
    for dt in dtypes + ["complex64"]:
        v = "[(1e-40+0j),1e-40j,0j,(1+0j)]" if dt == "complex64" else \
            f"[{SUBNORMALS[dt][0]},{SUBNORMALS[dt][1]},0.0,1.0]"
        out += [f"logical_and {dt}{v} True", f"logical_not {dt}{v}", f"where {dt}{v} 1.0 2.0",
                f"not_equal {dt}{v} 0.0", f"astype:bool {dt}{v}"]
    return out


# float8_e8m0fnu's 2^-127 is a float32 subnormal, and a constant of XLA's conversion: LLVM
# folds operations with constants on it (exp2's product by log 2), glibc reads its bits.
E8M0 = [f"{f} float8_e8m0fnu[1e-40,5.877471754111438e-39,1.1754943508222875e-38,0.5,1.0]"
        for f in ["exp2", "exp", "expm1", "sin", "log", "sqrt", "square", "reciprocal", "sign",
                  "floor", "ceil", "tanh", "arctan", "arcsin", "cosh", "log1p"]] + [
    "exp2 float8_e8m0fnu[1e-40,2.0,1e+30]",
    "multiply float8_e8m0fnu[1e-40,5.877471754111438e-39,1.1754943508222875e-38] 2.0",
    "true_divide float8_e8m0fnu[1e-40,5.877471754111438e-39,1.1754943508222875e-38] 0.5",
    "power float8_e8m0fnu[1e-40,5.877471754111438e-39,1.1754943508222875e-38] 0.5",
    "remainder float8_e8m0fnu[1e-40,5.877471754111438e-39,1.1754943508222875e-38] 2.0",
    "max float8_e8m0fnu[1e-40,5.877471754111438e-39]",
    "sum float8_e8m0fnu[1e-40,5.877471754111438e-39]",
]

# jit's dispatch: after a successful first call of a signature, C++'s fast path parses only
# the arguments the computation keeps (isfinite and isinf drop an integer operand).
JIT = """
isfinite 0
isfinite 2147483648
isfinite -1099511627776
isinf 2147483648
isinf 300
isinf 2147483648
isnan 300
isnan 2147483648
negative 2
negative 2147483648
"""

def complex_lines():
    """Complex pow, tanh, tan and expm1 (XLA's formulas on its own real functions) and their
    neighbours, on seeded random operands."""
    import random
    rng = random.Random(5)
    vals = ["0.5", "-1.0", "2.5", "-3.0", "0.001", "100.0", "1.0", "0.0", "-0.0", "-2.6", "3.579",
            "1.147", "-1.043"]

    def c():
        return f"({rng.choice(vals)}{rng.choice('+-')}{rng.choice(vals).lstrip('-')}j)"

    def arr(dt):
        return f"{dt}[{','.join(c() for _ in range(5))}]"

    out = []
    for dt in ["complex64", "complex128"]:
        for f in ["tanh", "tan", "expm1", "exp", "log", "sqrt", "sin", "cos"]:
            out += [f"{f} {arr(dt)}" for _ in range(6)]
        out += [f"power {arr(dt)} {arr(dt)}" for _ in range(12)]
        out.append(f"power {dt}[(0.0+0j),(0.0+0j),(1.0+0j),(1e+300+0j),(1e+300+0j)] "
                   f"{dt}[(2.0+0j),(0.0+0j),(3.0+1j),(2.0+0j),(-2.0+0j)]")
    return out


def pow_int_lines():
    """`power` of a float or complex base and an integer exponent array: lax.pow with the
    exponent converted to the base's dtype (an odd exponent that rounds to an even one in a
    narrow dtype gives (-1)**n = 1, a huge one inf), zero and non-finite bases, negative
    exponents, every integer exponent dtype, ranks promoted, Python scalar and weak bases."""
    bases = "[-1.0,-1.0,-1.0,0.0,-0.0,-0.0,0.0,2.0,0.5,-2.0,nan,inf,-inf,1.0,3.0,-0.5]"
    exps = "[2049,2047,257,-1,-1,-3,0,-25,70000,-70000,0,-1,3,-2147483648,16777217,16777215]"
    floats = ["float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
              "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e4m3",
              "float8_e3m4", "float4_e2m1fn", "float8_e8m0fnu"]
    out = [f"power {dt}{bases} int32{exps}" for dt in floats]
    out += [f"power complex64[(1+1j),(0+0j),(-1-0j),(2+0j),(0.5-2j)] int32[3,-1,2049,-2,16777217]",
            f"power complex128[(1+1j),(0+0j),(-1-0j),(2+0j),(0.5-2j)] int32[3,-1,2049,-2,16777217]"]
    for it, vals in [("int8", "[-128,127,0,-1,3]"), ("int16", "[-32768,2049,0,-1,3]"),
                     ("int64", "[-9223372036854775808,9007199254740993,0,-1,3]"),
                     ("uint8", "[255,0,1,2,3]"), ("uint16", "[65535,2049,0,1,3]"),
                     ("uint32", "[4294967295,2049,0,1,3]"),
                     ("uint64", "[18446744073709551615,9007199254740993,0,1,3]")]:
        for dt in ["float16", "float32", "bfloat16"]:
            out.append(f"power {dt}[-1.0,-1.0,2.0,0.0,-0.5] {it}{vals}")
    out += ["power float32[2.0,3.0] int32[3,-1]",
            "power 2.5 int32[3,-1]",
            "power -0.0 int32[3,-1,-2,0]",
            "power (1+1j) int32[3,-1]",
            "power float32(2.0) int32[3,-1]",
            "power float16(-1.0) int32[2049,2047]",
            "power float16[[2.0],[-1.0]] int32[3,-1,2049]",
            "power float32[[2.0,3.0]] int32[[3],[-1]]",
            "power float32[2.0,3.0] int32[[3],[-1]]",
            "power ~float32[2.0,-1.0] int32[3,16777217]",
            "power ~float32[2.0,-1.0] uint8[3,255]",
            "power float32[2.0,3.0,4.0] int32[3,-1]",
            "power float32[2.0,3.0] int32[]",
            "power float32[] int32[]",
            "power float32[2.0,3.0] int4[3,-1]",
            "power float32[2.0,3.0] uint2[3,1]",
            "power float32[2.0,3.0] bool[True,False]"]
    return out


def matmul_lines():
    """`matmul` whose products overflow or hold infinities, NaN, signed zeros and subnormals:
    XLA's CPU dot accumulates float16/bfloat16/float8 products in float32 with fused
    multiply-adds (a product beyond float32's range is not infinite on its own), reads
    subnormals as zero, and a contraction of one element is a multiply; complex operands
    holding infinities (some of these disagree: see known_divergences.txt)."""
    import random
    rng = random.Random(11)
    vals = ["3e+38", "-3e+38", "1e+38", "inf", "-inf", "nan", "0.0", "-0.0", "1.0", "-1.5",
            "255.0", "60000.0", "-60000.0", "2.5", "1e-40", "448.0"]

    def arr(r, c, d):
        if d.startswith(("uint", "int")):
            pool = [0, 1, 255 if d == "uint8" else 100, 3, -1 if d.startswith("int") else 2]
            vs = [str(rng.choice(pool)) for _ in range(r * c)]
        else:
            vs = [rng.choice(vals) for _ in range(r * c)]
        return d + "[" + ",".join("[" + ",".join(vs[i * c:(i + 1) * c]) + "]"
                                  for i in range(r)) + "]"

    out = ["matmul bfloat16[[3e+38,-3e+38]] uint8[[255],[255]]",
           "matmul bfloat16[[1e+38,1e+38,1e+38,1e+38,-3e+38]] uint8[[2],[2],[2],[2],[255]]",
           "matmul bfloat16[[-3e+38,3e+38,3e+38]] uint8[[255],[255],[255]]",
           "matmul float16[[60000,-60000]] uint8[[255],[255]]",
           "matmul float32[-0.0] float32[[1.0,-1.0]]",
           "matmul float32[-0.0,-0.0] float32[1.0,1.0]",
           "matmul float64[[-0.0],[2.0]] float64[[1.0,-0.0]]"]
    for dt, other in [("bfloat16", "uint8"), ("bfloat16", "bfloat16"), ("float16", "float16"),
                      ("float16", "uint8"), ("float8_e4m3fn", "float8_e4m3fn"),
                      ("float8_e5m2", "int8"), ("float32", "float32"), ("float32", "uint8"),
                      ("bfloat16", "int32"), ("float8_e8m0fnu", "float8_e8m0fnu"),
                      ("float64", "float64")]:
        for _ in range(25):
            m, k, n = rng.randint(1, 3), rng.randint(1, 4), rng.randint(1, 3)
            out.append(f"matmul {arr(m, k, dt)} {arr(k, n, other)}")
    cvals = ["(1+1j)", "(1e999+0j)", "(0+1e999j)", "(-1.5+0j)", "0j", "(-0-0j)", "(2+3j)"]
    for dt, other in [("complex64", "float32"), ("complex64", "float16"),
                      ("complex64", "complex64"), ("complex128", "float64")]:
        for _ in range(12):
            m, k, n = rng.choice([(1, 1, 2), (2, 1, 2), (1, 3, 1), (1, 2, 1), (1, 2, 2),
                                  (2, 2, 2), (2, 2, 1), (3, 2, 2)])
            a = dt + "[" + ",".join("[" + ",".join(rng.choice(cvals) for _ in range(k)) + "]"
                                    for _ in range(m)) + "]"
            if other.startswith("complex"):
                b = other + "[" + ",".join("[" + ",".join(rng.choice(cvals) for _ in range(n))
                                           + "]" for _ in range(k)) + "]"
            else:
                fv = ["1e999", "-1e999", "nan", "1.0", "0.0", "-0.0", "2.5"]
                b = other + "[" + ",".join("[" + ",".join(rng.choice(fv) for _ in range(n))
                                           + "]" for _ in range(k)) + "]"
            out.append(f"matmul {a} {b}")
    return out


# NumPy's float dtypes and ml_dtypes' (whose loops compute in float32).
NP_FLOATS = ["float16", "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2",
             "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e4m3",
             "float8_e3m4", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
# Edge values (each dtype's array rounds them as np.array does: overflow, underflow, NaN).
EDGES = ["-0.0", "0.0", "1.0", "-1.0", "0.5", "-2.5", "3.0", "-7.0", "5.0e-324", "1e-40",
         "-1e-40", "6e-08", "448.0", "-57344.0", "65504.0", "3.4e+38", "-3.4e+38", "1e+305",
         "-1e+305", "inf", "-inf", "nan"]


def grid(dt, vals):
    """An outer grid of vals: a column and a row of dtype dt."""
    return f"{dt}[{','.join(f'[{v}]' for v in vals)}]", f"{dt}[{','.join(vals)}]"


def numpy_signed_zero_lines():
    """NumPy's floor_divide, remainder (npy_divmod), sign, maximum/minimum and reductions
    where signed zeros, infinities, NaN, subnormals and huge operands decide the result, for
    every float dtype (ml_dtypes' through their own float32 loops), mixed with integers,
    booleans and Python scalars."""
    out = []
    for dt in NP_FLOATS:
        col, row = grid(dt, EDGES)
        out += [f"floor_divide {col} {row}", f"remainder {col} {row}",
                f"sign {row}", f"maximum {col} {row}", f"minimum {col} {row}"]
    for a, b in [("float16", "int32"), ("float32", "int8"), ("float64", "uint64"),
                 ("float16", "float32"), ("bfloat16", "float16"), ("float8_e4m3fn", "int8")]:
        col, _ = grid(a, ["-0.0", "0.0", "-1.0", "1.0", "nan", "-inf", "65504.0"])
        _, row = grid(b, ["0", "1", "-1", "3", "-128", "127"] if b.startswith(("int", "uint"))
                      and b != "uint64" else ["0", "1", "3", "18446744073709551615"]
                      if b == "uint64" else ["-0.0", "0.0", "-3.0", "nan", "inf"])
        out += [f"{f} {col} {row}" for f in ["floor_divide", "remainder", "minimum", "maximum"]]
    out += [
        "floor_divide float64(-0.0) 1e+305",
        "floor_divide float32(-1.0) float32(-3.4e+38)",
        "floor_divide -1 float32(-3.4e+38)",
        "floor_divide -0.0 1.7976931348623157e+308",
        "floor_divide float8_e4m3fn(-0.5706769374731202) -3.0",
        "remainder float32[1.0,-1.0,0.0,-0.0,nan,inf] bool(False)",
        "remainder float32[1.0,-1.0,0.0,-0.0,nan,inf] False",
        "floor_divide float32[1.0,-1.0,0.0,-0.0,nan,inf] bool[False,True,False,True,False,True]",
        "remainder 100.0 float8_e3m4[[-0.786,-3.0,0.5]]",
        "remainder 2.2250738585072014e-308 float6_e3m2fn[[-1.12,4.91,0.25]]",
        "remainder -0.93 bfloat16(9.183549615799121e-41)",
        "remainder float16[[-0.0],[0.0]] float16[-1.0]",
        "remainder float32[1.0,-1.0,-0.0,1e+30] float32[1e+38,-1e+38,1e+38,-1e-30]",
        "remainder float64[-inf,inf,-inf,1.0,-1.0,-1e+300] float64[1.0,2.0,-inf,-inf,inf,1e-300]",
        "remainder int32[-7,7,0] float6_e2m3fn[-0.5,7.5,-1.0]",
        "floor_divide int8[-7,7,0] float4_e2m1fn[-0.5,6.0,-1.0]",
        "sign float16(-0.0)",
        "sign -0.0",
        "sign complex64[(-0-0j),(0+0j),(-1-0j)]",
        "minimum float16[-0.0,0.0,-0.0,0.0] int32[0,0,0,0]",
        "maximum float16[-0.0,0.0,-0.0,0.0] int32[0,0,0,0]",
        "minimum float16(-0.0) 0.0",
        "minimum -0.0 float16[0.0,-0.0]",
    ]
    for dt in NP_FLOATS + ["complex64", "complex128"]:
        zeros = "[(-0-0j),(-0-0j),(-0-0j)]" if dt.startswith("complex") else "[-0.0,-0.0,-0.0]"
        out += [f"sum {dt}{zeros}", f"mean {dt}{zeros}", f"cumsum {dt}{zeros}",
                f"prod {dt}{zeros}"]
        if not dt.startswith("complex"):
            out += [f"cumsum {dt}[-0.0,1.0,-1.0,-0.0]", f"sum {dt}[[-0.0,0.0],[-0.0,-0.0]]",
                    f"min {dt}[0.0,-0.0,inf]", f"min {dt}[-0.0,0.0,inf]",
                    f"max {dt}[0.0,-0.0,-inf]", f"max {dt}[-0.0,0.0,-inf]",
                    f"min {dt}[[0.0,-0.0],[-0.0,0.0]]", f"max {dt}[nan,0.0,-0.0]",
                    f"max {dt}[-0.0,nan,0.0]"]
    return out


def numpy_complex_division_lines():
    """NumPy's complex division (Smith's algorithm) and reciprocal, by real arrays of every
    float dtype holding huge, tiny and non-finite values (subnormal results kept), and
    log1p of subnormals."""
    num = "complex64[(1+1j),(1+1j),(1e999+1j),(1+0j),(0+0j),(1+0j),(1e+30+1e+30j),(-0-0j),(1e-30-1e-30j)]"
    den = {"bfloat16": "[3e+38,-3e+38,1e999,nan,0.0,1.0,1e-40,-0.0,3e+38]",
           "float8_e4m3fn": "[448,-448,nan,nan,0.0,1.0,0.001953125,-0.0,448]",
           "float8_e5m2": "[57344,-57344,1e999,nan,0.0,-1e999,1.52587890625e-05,-0.0,57344]",
           "float8_e8m0fnu": "[1.7014118346046923e+38,5.877471754111438e-39,nan,1.0,2.0,0.5,"
                             "1e-40,1.0,1.7014118346046923e+38]",
           "float16": "[65504,-65504,1e999,nan,0.0,1.0,6e-08,-0.0,65504]",
           "float32": "[3.4e+38,-3.4e+38,1e999,nan,0.0,1.0,1e-45,-0.0,3.4e+38]",
           "float64": "[1e+308,-1e+308,1e999,nan,0.0,1.0,5e-324,-0.0,1e+308]"}
    out = []
    for dt, vals in den.items():
        out += [f"true_divide {num} {dt}{vals}", f"true_divide {dt}{vals} {num}"]
        out.append(f"true_divide {num.replace('complex64', 'complex128')} {dt}{vals}")
    cz = ["(1+1j)", "(-0-0j)", "(0+0j)", "(1e999+1j)", "(1+1e999j)", "(1e-40+0j)", "(3+4j)",
          "(1e+38+1e+38j)", "(1e-30+1e+30j)", "(-1e999-0j)"]
    col = "[" + ",".join(f"[{z}]" for z in cz) + "]"
    row = "[" + ",".join(cz) + "]"
    for dt in ["complex64", "complex128"]:
        out += [f"true_divide {dt}{col} {dt}{row}", f"reciprocal {dt}{row}"]
    out += ["true_divide 0j complex64[(0.001-3j)]", "reciprocal (100-0j)",
            "reciprocal (1e-310+1e-310j)", "reciprocal complex128[(1e-310+0j),(0+1e-310j)]",
            "multiply complex64[(1e-20+1e-20j)] complex64[(1e-20+0j)]",
            "multiply complex128[(1e-160+1e-160j)] complex128[(1e-160+0j)]",
            "add complex64[(1e-40+1e-40j)] complex64[(1e-40+0j)]",
            "multiply float64[1e-160,-1e-160] float64[1e-160,1e-160]",
            "add float64[5e-324] float64[5e-324]",
            "true_divide float64[1e-300,-1e-300] float64[1e+10,1e+10]"]
    for dt, subs in [("float32", "[1e-40,-1e-40,1.401298464324817e-45,-5.877471754111438e-39,"
                                 "1e-30,0.5,-0.5,1e-08]"),
                     ("float64", "[5e-324,-1e-310,2.2250738585072014e-308,1e-300,0.5,-0.5]"),
                     ("float16", "[6e-08,-6e-08,6.1e-05,0.5,-0.5]"),
                     ("bfloat16", "[1e-40,-1e-40,0.5,-0.5]")]:
        out += [f"log1p {dt}{subs}", f"log1p {dt}({subs[1:].split(',')[0]})"]
    return out


def numpy_cast_lines():
    """`astype` of floats out of an integer's range, NaN and infinities (undefined in C) as
    NumPy's x86-64 build converts them: every float and complex source, every integer
    target, arrays of 1 to 34 elements (its vectorised float -> uint32 loop converts the
    leading blocks of 4 or 8, the scalar loop the rest)."""
    srcs = ["float16", "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2",
            "float8_e4m3", "float8_e3m4", "float8_e4m3fnuz", "float8_e5m2fnuz",
            "float8_e4m3b11fnuz", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn",
            "float6_e3m2fn", "complex64", "complex128"]
    dsts = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "int4",
            "uint4", "int2", "uint2"]
    vals = ["nan", "inf", "-inf", "1e+20", "-1e+20", "3000000000.0", "-3000000000.0",
            "5000000000.0", "2147483648.0", "-2147483648.0", "-2147484160.0", "4294967296.0",
            "9.223372036854776e+18", "-9.223372036854776e+18", "1.8446744073709552e+19",
            "1e+19", "-1.0", "-0.5", "300.0", "-300.0", "70000.0", "-70000.0", "40000.0",
            "65504.0", "448.0", "57344.0", "-3e+38", "3e+38", "2.5", "-2.5", "127.9",
            "-128.9", "255.9", "1.5"]
    cvals = {"nan": "(0.5+1e999j)", "inf": "(1e999+0j)", "-inf": "(-1e999+0j)"}
    out = []
    for s in srcs:
        vs = [cvals.get(v, f"({v}+1j)") for v in vals] if s.startswith("complex") else vals
        for d in dsts:
            lengths = [1, 3, 4, 5, 6, 8, 9, 13, 17, 34] if d == "uint32" else [1, 9, 34]
            for n in lengths:
                sel = [vs[(i * 7 + n) % len(vs)] for i in range(n)]
                out.append(f"astype:{d} {s}[{','.join(sel)}]")
            out.append(f"astype:{d} {s}({vs[0]})")
    return out


PROBES = {
    "jax_x32": [BOOL_ARITH, subnormal_lines(False), E8M0, JIT, complex_lines(), pow_int_lines(),
                matmul_lines()],
    "jax_x64": [BOOL_ARITH, subnormal_lines(True), complex_lines(), pow_int_lines(),
                matmul_lines()],
    "numpy": [numpy_signed_zero_lines(), numpy_complex_division_lines(), numpy_cast_lines()],
}
# NumPy's functions compared bit for bit in numpy_probes.json (IEEE operations and NumPy's own
# formulas): gen_eval_fixtures' approximate list less these.
NUMPY_EXACT = ["true_divide", "divide", "floor_divide", "remainder", "reciprocal"]


def lines_of(blocks):
    lines = []
    for b in blocks:
        lines += b if isinstance(b, list) else b.strip().splitlines()
    return [l.strip() for l in lines if l.strip()]


def child_main(mode, out_dir):
    warnings.simplefilter("ignore")
    c = gen.Child(mode, 0)
    cases = [c.evaluate(line) for line in lines_of(PROBES[mode])]
    numpy = mode == "numpy"
    header = {
        "generator": GENERATOR,
        "versions": c.versions(),
        "mode": {"rules": "numpy" if numpy else "jax", "x64": mode != "jax_x32"},
        "approximate": [f for f in gen.APPROXIMATE if not numpy or f not in NUMPY_EXACT],
        "notes": ("chosen `eval --batch` lines (see the generator) and the JSON object eval "
                  "writes for each; as in gen_eval_fixtures.py"),
    }
    path = os.path.join(out_dir, "eval", f"{mode}_probes.json")
    write_fixture(path, header, cases)
    print(f"wrote {os.path.relpath(path, REPO_ROOT)}: {len(cases)} cases", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--only", nargs="+", choices=sorted(PROBES), help="the modes to write")
    ap.add_argument("--child", choices=sorted(PROBES), help=argparse.SUPPRESS)
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    if args.child:
        child_main(args.child, out_dir)
        return
    children = []
    for mode in args.only or sorted(PROBES):
        env = jax_child_env(mode == "jax_x64")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, "--out-dir", out_dir]
        children.append((mode, cmd, env))
    run_children(children, 1)


if __name__ == "__main__":
    main()
