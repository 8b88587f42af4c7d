#!/usr/bin/env python3
"""Writes tests/fixtures/eval/known_divergences.txt from a divergence dump of
tests/it/eval_conformance.rs (run it with EVAL_DIVERGENCES=FILE): each disagreeing case,
classified by cause. A case no class explains stops the script: fix it instead of pinning it.
NumPy-mode cases with an ml_dtypes operand (bfloat16, float8/6/4, int2/int4, ...) are only
explained by ML_CLASSES, which are narrow; the generic classes never pin them.

    EVAL_DIVERGENCES=/tmp/div.txt cargo test -p dtype-lattice-cli --test it eval_conformance
    python3 tools/pin_eval_divergences.py /tmp/div.txt
"""
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ml_dtypes' types in an eval line (NumPy mode: NumPy 2 with ml_dtypes).
ML_DTYPES = re.compile(r"bfloat16|float8_|float6_|float4_|u?int[124]\b|u?int[124][\[(]")


def ml(line):
    return ML_DTYPES.search(line) is not None


# NumPy-mode cases with an ml_dtypes operand are explained by these classes only (the
# generic ones below do not apply to them); none is left: every such case agrees.
ML_CLASSES = []

# Only the sign of a zero differs (the test compares signs since zeros' signs were checked).
ZERO_SIGN = re.compile(r"expected -?0 \(bits \d+\), got -?0 \(bits \d+\)$")


def complex_matmul_nonfinite(f, line, why):
    return (f.startswith("jax") and line.startswith("matmul complex")
            and any(t in line for t in ("1e999", "inf", "nan")))


def xla_complex_asin_atan_zero(f, line, why):
    return (f.startswith("jax") and line.split()[0] in ("arcsin", "arctan")
            and " complex" in line and ZERO_SIGN.search(why) is not None)


def xla_sort_two_bit(f, line, why):
    name = line.split()[0].split(":")[0]
    return (f.startswith("jax") and name in ("sort", "argsort")
            and re.search(r" u?int2[\[(]", line) is not None)


# The generic classes (name, test(file, line, why), reason). A new divergence is fixed, or
# pinned under a class stating its precise cause.
CLASSES = [
    ("complex-matmul-nonfinite", complex_matmul_nonfinite,
     "a complex matrix product (a matrix operand, more than one element contracted) with "
     "infinite or NaN parts: XLA's CPU kernels decide which parts come out NaN in a way none "
     "of the formulas tried reproduces (naive, 4 real dots, Gauss/3M per element and per "
     "matrix); one-element contractions and vector.vector products agree"),
    ("xla-complex-asin-atan-zero-sign", xla_complex_asin_atan_zero,
     "the sign of a zero part of XLA's complex asin/atan (its CHLO decompositions) differs; "
     "the values agree"),
    ("xla-sort-two-bit", xla_sort_two_bit,
     "XLA's CPU sort of int2/uint2 (jaxlib 0.10.2) returns values that are not a permutation "
     "of its operand (int2 compared as unsigned, uint2 values changed: lax.sort of uint2 "
     "[3,2,1,0] gives [1,1,0,0]); eval sorts them"),
]


def main():
    rows, unexplained = [], []
    # The test writes the dump only when some case disagrees: no file, nothing to pin.
    dump = open(sys.argv[1], encoding="utf-8").readlines() if os.path.exists(sys.argv[1]) else []
    for raw in dump:
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
        fh.write("".join(r + "\n" for r in sorted(rows)))
    print(f"pinned {len(rows)} cases in {os.path.relpath(out, REPO)}")


if __name__ == "__main__":
    main()
