#!/usr/bin/env python3
"""Generate the fixtures of NumPy 2 with ml_dtypes imported: promotion and ufunc loop selection
for ml_dtypes' types (bfloat16, float8_*, float6_*, float4_e2m1fn, int1/int2/int4 and their
unsigned forms, complex32, bcomplex32) among themselves, with NumPy's own dtypes and with
Python scalars.

Usage:
    tools/.venv-jax/bin/python tools/gen_numpy_ml_dtypes_fixtures.py [--out-dir DIR] [--seed N]

(any venv with numpy 2.4.6 and ml_dtypes 0.6.0: tools/.venv-jax, or tools/.venv-numpy2 from
requirements-numpy2.txt). About 20 seconds.

Output (relative to --out-dir, default <repo>/tests/fixtures):
    numpy/ml_dtypes_promote_types.json  np.promote_types(a, b), every ordered pair of the 34
                                        dtypes (NumPy's 14 numeric dtypes, ml_dtypes' 20)
    numpy/ml_dtypes_result_type.json    np.result_type(*args): every operand alone, every
                                        ordered pair with at least one ml_dtypes operand, and
                                        seeded random lists of 1 to 5 operands
    numpy/ml_dtypes_casts.json          np.can_cast(a, b, "safe") and np.zeros(2, a).astype(b),
                                        every ordered pair of the 34 dtypes
    numpy/ml_dtypes_ufunc_loops.json    ufunc.resolve_dtypes(...): the loop (input and output
                                        dtypes) NumPy picks for each ufunc eval uses, on every
                                        operand combination with an ml_dtypes operand; the
                                        reductions' loops (`add.reduce`, ...)

Operands follow tools/FIXTURES.md: DTYPE is np.zeros((2,), DTYPE), DTYPE(VALUE) a 0-d array,
int|float|complex the Python scalars 0, 0.0, 0j, other literals Python scalars. In the loop
file the Python scalars are passed to resolve_dtypes as the Python types int, float, complex
(NumPy's weak scalars). A loop case is {"ufunc", "operands", "loop"} or {"ufunc", "operands",
"error"}; every loop is also checked against a real call on zero-filled operands.

Before ml_dtypes is imported the script answers every one of these questions over NumPy's own
dtypes, and again after: the answers must be identical (the header's notes record how many
were compared), which is why `--rules numpy` is one rule set with or without ml_dtypes' types.
"""

import argparse
import os
import platform
import random
import warnings

from fixturelib import first_line, parse_literal, write_fixture

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_numpy_ml_dtypes_fixtures.py"

BUILTIN = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"]
ML = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
      "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float6_e2m3fn", "float6_e3m2fn",
      "float4_e2m1fn", "float8_e8m0fnu", "int1", "uint1", "int2", "uint2", "int4", "uint4",
      "bcomplex32", "complex32"]
DTYPES = BUILTIN + ML
PY_TYPES = ["int", "float", "complex"]
PY_VALUES = {"int": 0, "float": 0.0, "complex": 0j}

# 0-d operands of ml_dtypes' types, and literals, for the result_type pairs.
ZERO_D = ["bfloat16(2.5)", "float8_e4m3fn(-1.5)", "float4_e2m1fn(0.5)", "int4(-3)", "uint2(3)",
          "int8(3)", "float64(2.5)", "bool(True)"]
LITERALS = ["3", "-200", "300", "2.5", "1e+40", "1j", "True"]

# The ufuncs `dtype-lattice eval` uses (np.divide is np.true_divide; np.abs is np.absolute;
# np.round runs np.rint on these dtypes).
BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power",
          "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
          "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
          "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "arctan2", "matmul"]
UNARY = ["negative", "positive", "absolute", "sign", "floor", "ceil", "rint", "trunc", "sqrt",
         "square", "reciprocal", "exp", "exp2", "expm1", "log", "log2", "log1p", "sin", "cos",
         "tan", "tanh", "arcsin", "arctan", "sinh", "cosh", "isnan", "isinf", "isfinite",
         "logical_not", "invert"]
REDUCE = ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or"]

N_RANDOM = 2000


class Ctx:
    def __init__(self):
        import numpy as np
        self.np = np
        self.ml = None
        np.seterr(all="ignore")

    def import_ml_dtypes(self):
        import ml_dtypes
        self.ml = ml_dtypes

    def dtype(self, name):
        if name in BUILTIN:
            return self.np.dtype(name)
        return self.np.dtype(getattr(self.ml, name))

    def build(self, s):
        np = self.np
        if s in DTYPES:
            return np.zeros((2,), dtype=self.dtype(s))
        if s in PY_VALUES:
            return PY_VALUES[s]
        if "(" in s and s[0].isalpha():
            name, value = s[:-1].split("(", 1)
            arr = np.array(parse_literal(value), dtype=self.dtype(name))
            assert arr.shape == ()
            return arr
        return parse_literal(s)

    def weak(self, s):
        """An operand for resolve_dtypes: a dtype, or a Python scalar type."""
        return {"int": int, "float": float, "complex": complex}.get(s) or self.dtype(s)


def answer(fn):
    try:
        return {"dtype": fn(), "weak_type": False}
    except Exception as e:  # noqa: BLE001 - every failure is a fixture case
        return {"error": {"kind": type(e).__name__, "message": first_line(e)}}


def promote_types_cases(ctx, names):
    np = ctx.np
    return [dict({"operands": [a, b]},
                 **answer(lambda a=a, b=b: str(np.promote_types(ctx.dtype(a), ctx.dtype(b)))))
            for a in names for b in names]


def cast_cases(ctx, names):
    np = ctx.np
    cases = []
    for a in names:
        for b in names:
            case = {"operands": [a, b],
                    "safe": bool(np.can_cast(ctx.dtype(a), ctx.dtype(b), "safe"))}
            case.update(answer(lambda a=a, b=b: str(
                np.zeros((2,), dtype=ctx.dtype(a)).astype(ctx.dtype(b)).dtype)))
            cases.append(case)
    return cases


def result_type_case(ctx, ops):
    np = ctx.np
    return dict({"operands": list(ops)},
                **answer(lambda: str(np.result_type(*[ctx.build(o) for o in ops]))))


def loop_case(ctx, ufunc, ops, reduction=False):
    np = ctx.np
    u = getattr(np, ufunc)
    name = f"{ufunc}.reduce" if reduction else ufunc
    case = {"ufunc": name, "operands": list(ops)}
    try:
        if reduction:
            dts = (None, ctx.weak(ops[0]), None)
            loop = u.resolve_dtypes(dts, reduction=True)
        else:
            dts = tuple(ctx.weak(o) for o in ops) + (None,) * u.nout
            loop = u.resolve_dtypes(dts)
        case["loop"] = [str(d) for d in loop]
    except Exception as e:  # noqa: BLE001
        case["error"] = {"kind": type(e).__name__, "message": first_line(e)}
    return case


def check_call(ctx, case):
    """The loop's output dtype is the dtype a real call gives (an error where there is none)."""
    np = ctx.np
    if case["ufunc"].endswith(".reduce"):
        u = getattr(np, case["ufunc"].split(".")[0])
        run = lambda: u.reduce(ctx.build(case["operands"][0]))  # noqa: E731
    else:
        u = getattr(np, case["ufunc"])
        args = [ctx.build(o) for o in case["operands"]]
        if case["ufunc"] == "matmul":
            args = [a if isinstance(a, (int, float, complex)) else a.reshape(2, 1) if i == 0
                    else a.reshape(1, 2) for i, a in enumerate(args)]
        run = lambda: u(*args)  # noqa: E731
    try:
        got = str(np.asarray(run()).dtype)
    except Exception as e:  # noqa: BLE001
        got = "error " + type(e).__name__
    want = case["loop"][-1] if "loop" in case else "error " + case["error"]["kind"]
    if case["ufunc"] == "matmul" and any(o in PY_TYPES for o in case["operands"]):
        return  # matmul refuses 0-d operands whatever the loop
    assert got == want, (case, got)


def loop_operand_lists(names):
    out = []
    for u in UNARY:
        out += [(u, [a]) for a in names]
    for u in BINARY:
        ops = names + PY_TYPES
        out += [(u, [a, b]) for a in ops for b in ops if not (a in PY_TYPES and b in PY_TYPES)]
    return out


def has_ml(ops):
    return any(o.split("(")[0] in ML for o in ops)


def random_list(rng, n):
    pool_dtypes = DTYPES
    ops = [rng.choice(ML)]
    for _ in range(n - 1):
        r = rng.random()
        if r < 0.55:
            ops.append(rng.choice(pool_dtypes))
        elif r < 0.75:
            ops.append(rng.choice(ZERO_D))
        elif r < 0.9:
            ops.append(rng.choice(PY_TYPES))
        else:
            ops.append(rng.choice(LITERALS))
    rng.shuffle(ops)
    return ops


def builtin_answers(ctx):
    """Every question of the three files asked over NumPy's own dtypes only."""
    pairs = BUILTIN + PY_TYPES
    return {
        "promote_types": promote_types_cases(ctx, BUILTIN),
        "casts": cast_cases(ctx, BUILTIN),
        "result_type": [result_type_case(ctx, [a, b]) for a in pairs for b in pairs],
        "ufunc_loops": [loop_case(ctx, u, ops) for u, ops in loop_operand_lists(BUILTIN)]
        + [loop_case(ctx, u, [a], True) for u in REDUCE for a in BUILTIN],
    }


def versions(ctx):
    return {"python": platform.python_version(), "numpy": ctx.np.__version__,
            "ml_dtypes": ctx.ml.__version__}


def header(ctx, function, notes):
    return {"generator": GENERATOR, "versions": versions(ctx), "library": "numpy",
            "function": function, "op": None, "mode": {"ml_dtypes": True}, "notes": notes}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--seed", type=int, default=4001)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    ctx = Ctx()
    before = builtin_answers(ctx)
    ctx.import_ml_dtypes()
    after = builtin_answers(ctx)
    compared = {}
    for key in before:
        assert before[key] == after[key], f"importing ml_dtypes changed NumPy's {key} answers"
        compared[key] = len(before[key])
    unchanged = ("asked before and after `import ml_dtypes` over NumPy's own dtypes (and Python "
                 f"scalars), these answers were identical: {compared}")
    operands = {"DTYPE": "np.zeros((2,), dtype=DTYPE)",
                "DTYPE(VALUE)": "np.array(VALUE, dtype=DTYPE), 0-d",
                "int|float|complex": "the Python scalars 0, 0.0, 0j",
                "literals": "Python scalars written as repr() prints them",
                "ml_dtypes_unchanged_numpy": unchanged}
    out = os.path.join(args.out_dir, "numpy")

    cases = promote_types_cases(ctx, DTYPES)
    notes = dict(operands, cases=f"every ordered pair of the {len(DTYPES)} dtypes")
    write_fixture(os.path.join(out, "ml_dtypes_promote_types.json"),
                  header(ctx, "np.promote_types(a, b)", notes), cases)
    print(f"ml_dtypes_promote_types.json: {len(cases)} cases")

    cases = cast_cases(ctx, DTYPES)
    notes = dict(operands, cases=f"every ordered pair of the {len(DTYPES)} dtypes",
                 safe='np.can_cast(np.dtype(a), np.dtype(b), "safe")',
                 dtype="np.zeros((2,), dtype=a).astype(b).dtype, or the error astype raises")
    write_fixture(os.path.join(out, "ml_dtypes_casts.json"),
                  header(ctx, "np.can_cast(a, b, 'safe'); np.zeros(2, a).astype(b)", notes),
                  cases)
    print(f"ml_dtypes_casts.json: {len(cases)} cases")

    singles = DTYPES + ZERO_D + PY_TYPES + LITERALS
    cases = [result_type_case(ctx, [a]) for a in ML + [z for z in ZERO_D if has_ml([z])]]
    cases += [result_type_case(ctx, [a, b]) for a in singles for b in singles
              if has_ml([a, b])]
    n_pairs = len(cases)
    rng = random.Random(args.seed)
    cases += [result_type_case(ctx, random_list(rng, rng.randint(1, 5)))
              for _ in range(N_RANDOM)]
    notes = dict(operands, cases=(
        f"each ml_dtypes operand alone, every ordered pair of {' '.join(singles)} with at least "
        f"one ml_dtypes operand ({n_pairs} cases with the singles), then {N_RANDOM} seeded "
        f"random lists of 1 to 5 operands with at least one ml_dtypes dtype"))
    write_fixture(os.path.join(out, "ml_dtypes_result_type.json"),
                  header(ctx, "np.result_type(*args)", notes), cases)
    print(f"ml_dtypes_result_type.json: {len(cases)} cases")

    cases = [loop_case(ctx, u, ops) for u, ops in loop_operand_lists(DTYPES) if has_ml(ops)]
    cases += [loop_case(ctx, u, [a], True) for u in REDUCE for a in ML]
    for c in cases:
        check_call(ctx, c)
    notes = dict(operands, cases=(
        f"ufunc.resolve_dtypes(dtypes) for the unary ufuncs {' '.join(UNARY)} on each "
        f"ml_dtypes dtype, the binary ones {' '.join(BINARY)} on every ordered pair of the "
        f"{len(DTYPES)} dtypes and int, float, complex with an ml_dtypes operand, and "
        f"`ufunc.resolve_dtypes((None, T, None), reduction=True)` (case ufunc `NAME.reduce`) "
        f"of {' '.join(REDUCE)} on each ml_dtypes dtype"),
        loop="the loop's dtypes: inputs then outputs, as str(np.dtype)",
        checked=("every case was also called on zero-filled operands (matmul: shapes (2, 1) "
                 "and (1, 2); reductions: ufunc.reduce) and gave the loop's output dtype, or "
                 "raised where resolve_dtypes raised"))
    write_fixture(os.path.join(out, "ml_dtypes_ufunc_loops.json"),
                  header(ctx, "ufunc.resolve_dtypes(dtypes)", notes), cases)
    print(f"ml_dtypes_ufunc_loops.json: {len(cases)} cases")


if __name__ == "__main__":
    main()
