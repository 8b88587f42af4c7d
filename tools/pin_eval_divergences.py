#!/usr/bin/env python3
"""Writes tests/fixtures/eval/known_divergences.txt from a divergence dump of
tests/eval_conformance.rs (run it with EVAL_DIVERGENCES=FILE): each disagreeing case,
classified by cause. A case no class explains stops the script: fix it instead of pinning it.
NumPy-mode cases with an ml_dtypes operand (bfloat16, float8/6/4, int2/int4, ...) are only
explained by ML_CLASSES, which are narrow; the generic classes never pin them.

    EVAL_DIVERGENCES=/tmp/div.txt cargo test -p dtype-lattice-cli --test eval_conformance
    python3 tools/pin_eval_divergences.py /tmp/div.txt
"""
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ml_dtypes' types in an eval line (NumPy mode: NumPy 2 with ml_dtypes).
ML_DTYPES = re.compile(r"bfloat16|float8_|float6_|float4_|u?int[124]\b|u?int[124][\[(]")
# Literals and values that are float32 subnormals (or below): 1e-40, 9.18e-41, 5.9e-39.
F32_SUBNORMAL = re.compile(r"e-4[0-9]|e-39")
# A Python float operand.
PY_FLOAT = re.compile(r"-?([0-9.]+(e[-+][0-9]+)?|inf)|nan")


def ml(line):
    return ML_DTYPES.search(line) is not None


# NumPy-mode cases with an ml_dtypes operand are explained by these classes only (the
# generic ones below, `numpy` above all, do not apply to them).
ML_CLASSES = [
    ("ml-f32-subnormal",
     lambda f, l, w: f.startswith("numpy") and ml(l) and F32_SUBNORMAL.search(l)
     and re.match(r"(divide|true_divide|remainder|power|minimum|maximum) ", l)
     and any(PY_FLOAT.fullmatch(op) for op in l.split()[1:]),
     "NumPy runs its float32 loop for an ml_dtypes float with a Python float, keeping float32 "
     "subnormals (a 1e-40 literal, bfloat16's and float8_e8m0fnu's tiniest values); our float32 "
     "primitives flush them to zero (XLA's CPU semantics, prim/lanes.rs). ml_dtypes' own loops "
     "are computed in float64 and agree"),
]

CLASSES = [
    ("complex", lambda f, l, w: not f.startswith("numpy") and re.search(r"complex|j\)|j,|j\]", l),
     "complex arithmetic and transcendentals: XLA's formulas (overflow, signed zeros, FMA) "
     "differ from num_complex beyond 2 ULP"),
    ("xla-cannot", lambda f, l, w: "JaxRuntimeError" in w,
     "XLA's CPU backend cannot compile this op on int2/uint2 (JaxRuntimeError); we compute a "
     "value"),
    ("e8m0", lambda f, l, w: "float8_e8m0fnu" in l,
     "float8_e8m0fnu corner: JAX's exp2 of 2^-127 is 1, where the product log(2) * x rounded "
     "to the format (2^-128, below its range) is NaN here"),
    ("subnormal", lambda f, l, w: re.search(r"e-4[0-9]|e-3[89]|e-32[0-9]|e-308", l),
     "subnormals: XLA flushes denormals per operation (some transcendentals, rem and pow keep "
     "them); our flushing differs here"),
    ("numpy-ctanh", lambda f, l, w: f.startswith("numpy") and l.split()[0] == "tanh"
     and "complex" in l,
     "NumPy's complex tanh is the C library's ctanh (exactly 1 for a large real part, other "
     "roundings); num_complex's formula overflows to NaN or differs by a few ULP"),
    ("narrow-shift", lambda f, l, w: l.split()[0] in ("left_shift", "right_shift")
     and re.search(r"uint?[24]", l),
     "XLA shifts int2/int4 values by out-of-range amounts as LLVM's narrow integers do "
     "(undefined)"),
    ("bool-arith", lambda f, l, w: not f.startswith("numpy")
     and re.match(r"(true_divide|multiply) bool", l),
     "XLA rewrites float32/float64 arithmetic on booleans converted to float as selects "
     "(False * inf, False / a broadcast False are 0); not modelled"),
    ("jit-overflow", lambda f, l, w: l.startswith("isfinite 2147483648"),
     "jnp.isfinite takes a Python int beyond int32 without jit's OverflowError"),
    ("numpy", lambda f, l, w: f.startswith("numpy"),
     "numpy: NumPy 2 ufunc loop selection, casting and denormal corners not modelled"),
]


def main():
    rows, unexplained = [], []
    for raw in open(sys.argv[1], encoding="utf-8"):
        f, line, why = raw.rstrip("\n").split("\t", 2)
        classes = ML_CLASSES if f.startswith("numpy") and ml(line) else CLASSES
        for name, test, reason in classes:
            if test(f, line, why):
                rows.append(f"{f}\t{line}\t{name}: {reason}")
                break
        else:
            unexplained.append(raw)
    if unexplained:
        sys.exit("unexplained divergences:\n" + "".join(unexplained[:20]))
    out = os.path.join(REPO, "tests", "fixtures", "eval", "known_divergences.txt")
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("# eval cases that do not agree with JAX/NumPy yet: FILE<TAB>LINE<TAB>CLASS: "
                 "REASON\n# written by tools/pin_eval_divergences.py; the test fails when one "
                 "starts agreeing\n")
        fh.write("\n".join(sorted(rows)) + "\n")
    print(f"pinned {len(rows)} cases in {os.path.relpath(out, REPO)}")


if __name__ == "__main__":
    main()
