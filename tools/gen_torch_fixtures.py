#!/usr/bin/env python3
"""Generate PyTorch dtype-promotion fixtures for the dtype-lattice Rust tests.

Usage:
    python tools/gen_torch_fixtures.py [--out-dir DIR] [--jobs N]

Run with a Python that has torch installed (see tools/gen_torch_fixtures.sh,
which sets up a pinned venv).  The top-level invocation re-runs this script
once per task in a fresh subprocess (CPU only, warnings silenced), so that
`torch.set_default_dtype(torch.float64)` for one file cannot leak into another.

Output (relative to --out-dir, default <repo>/tests/fixtures), see tools/torch.md:
    torch/promote_types.json
    torch/result_type.json                   (default dtype float32)
    torch/result_type_default_float64.json   (torch.set_default_dtype(torch.float64))
    torch/op_<op>.json                       (the 10 ops of tools/FIXTURES.md)

Operand grammar (tools/FIXTURES.md, PyTorch column):
    DTYPE          torch.ones((2,), dtype=DTYPE)       1-D tensor, shape (2,)
    DTYPE(VALUE)   torch.tensor(VALUE, dtype=DTYPE)    zero-dim tensor
    int|float|complex   the Python numbers 0, 0.0, 0j (wrapped numbers)
    Python literal as printed by repr(): 3, -200, 2.5, 1e+40, inf, nan,
                   1j, (1e+40+1j), True, False        (wrapped numbers)
"""

import argparse
import os
import platform
import random
import re
import sys
import warnings
from fixturelib import run_children, parse_literal, first_line, write_fixture, pick

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_torch_fixtures.py"

# The 15 named dtypes of DOC18 (tools/FIXTURES.md), then torch's extra dtypes
# that have a NumPy/ml_dtypes-style name.  float8_e8m0fnu is dropped (and
# said so in the notes) when the installed torch lacks it.
DOC18_DTYPES = [
    "bool", "uint8", "uint16", "uint32", "uint64",
    "int8", "int16", "int32", "int64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
]
EXTRA_DTYPES = [
    "complex32",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "float8_e8m0fnu",
]
ALL_DTYPES = DOC18_DTYPES + EXTRA_DTYPES
PY_TYPES = ["int", "float", "complex"]
PY_TYPE_VALUES = {"int": 0, "float": 0.0, "complex": 0j}

# Zero-dim operands of the pair list: one per DOC18 dtype.
PAIR_ZERO_DIM = [
    "bool(True)", "uint8(200)", "uint16(3)", "uint32(3)", "uint64(3)",
    "int8(3)", "int16(3)", "int32(3)", "int64(300)",
    "bfloat16(1.0)", "float16(1.0)", "float32(2.5)", "float64(2.5)",
    "complex64(1j)", "complex128(1j)",
]
PAIR_LITERALS = ["3", "-200", "300", "2.5", "1e+40", "1j", "True"]

# Literals for the random lists (each exactly as repr() prints it).
INT_LITERALS = ["0", "1", "3", "-2", "-200", "300", "255", "70000", "2147483648",
                "9223372036854775807"]
FLOAT_LITERALS = ["2.5", "-0.5", "1e+40", "inf", "-inf", "nan"]
COMPLEX_LITERALS = ["1j", "(1+2j)", "(1e+40+1j)"]
BOOL_LITERALS = ["True", "False"]

# Values of DTYPE(VALUE) operands in the random lists (integers filtered to the dtype's range).
INT_VALUES = [0, 1, -1, 3, -2, 100, -128, 127, 200, 255, 300, -200, 65535,
              2**31 - 1, -2**31, 2**32 - 1, 2**63 - 1, -2**63]
FLOAT_VALUES = [0.0, 1.0, -2.0, 2.5, 0.5, 1e+40, float("inf"), float("-inf"), float("nan")]
COMPLEX_VALUES = [1j, 2.5, complex(1, 2), complex(1e+40, 1)]

OPS = ["add", "sub", "mul", "true_divide", "floor_divide", "pow", "eq", "lt",
       "logical_and", "bitwise_and"]

SEEDS = {"float32": 3001, "float64": 3002}
N_RANDOM = 2000


# ---------------------------------------------------------------------------
# Orchestration (parent process; does not import torch)
# ---------------------------------------------------------------------------

def task_list():
    return ([("promote_types", "float32"), ("result_type", "float32"),
             ("result_type", "float64")] + [("op_" + op, "float32") for op in OPS])


def run_tasks(out_dir, jobs):
    env = dict(os.environ)
    env.update({
        "PYTHONHASHSEED": "0",
        "PYTHONWARNINGS": "ignore",
        "CUDA_VISIBLE_DEVICES": "",
        "OMP_NUM_THREADS": "1",
    })
    run_children([
        (f"task {(kind, default)}",
         [sys.executable, os.path.abspath(__file__), "--child", kind,
          "--default-dtype", default, "--out-dir", out_dir],
         env)
        for kind, default in task_list()
    ], jobs)

# ---------------------------------------------------------------------------
# Child process (imports torch)
# ---------------------------------------------------------------------------

def error_of(e):
    return {"kind": type(e).__name__, "message": first_line(e)}


class Ctx:
    def __init__(self, default_dtype):
        warnings.simplefilter("ignore")
        import torch
        import torch._prims_common as prims_common
        self.torch = torch
        self.prims_common = prims_common
        torch.set_default_dtype(getattr(torch, default_dtype))
        assert str(torch.get_default_dtype()) == "torch." + default_dtype
        self.default_dtype = default_dtype
        self.dtypes = [n for n in ALL_DTYPES if isinstance(getattr(torch, n, None), torch.dtype)]
        self.missing = [n for n in ALL_DTYPES if n not in self.dtypes]
        self.extra = [n for n in EXTRA_DTYPES if n in self.dtypes]
        self.dtype_set = frozenset(self.dtypes)

    def versions(self):
        v = {"python": platform.python_version(), "torch": self.torch.__version__}
        try:
            import numpy
            v["numpy"] = numpy.__version__
        except ImportError:
            pass
        return v

    def dtype_name(self, dt):
        name = str(dt)
        return name[len("torch."):] if name.startswith("torch.") else name

    def tdtype(self, name):
        dt = getattr(self.torch, name)
        assert isinstance(dt, self.torch.dtype) and self.dtype_name(dt) == name, name
        return dt

    # -- operand grammar ----------------------------------------------------

    def build(self, s):
        torch = self.torch
        if s in self.dtype_set:
            t = torch.ones((2,), dtype=self.tdtype(s))
            assert t.dtype == self.tdtype(s) and t.shape == (2,)
            return t
        if s in PY_TYPE_VALUES:
            return PY_TYPE_VALUES[s]
        m = re.fullmatch(r"([a-z0-9_]+)\((.*)\)", s)
        if m and m.group(1) in self.dtype_set:
            dt = self.tdtype(m.group(1))
            v = parse_literal(m.group(2))
            t = torch.tensor(v, dtype=dt)
            assert t.dim() == 0 and t.dtype == dt, s
            if isinstance(v, int) and not isinstance(v, bool) and not dt.is_floating_point \
                    and not dt.is_complex:
                assert int(t) == v, f"{s}: value out of range"
            return t
        return parse_literal(s)

    def value_operands(self, name):
        torch = self.torch
        dt = self.tdtype(name)
        if name == "bool":
            vals = [True, False]
        elif dt.is_complex:
            vals = COMPLEX_VALUES
        elif dt.is_floating_point:
            vals = FLOAT_VALUES
        else:
            ii = torch.iinfo(dt)
            vals = [v for v in INT_VALUES if ii.min <= v <= ii.max]
        return [f"{name}({v!r})" for v in vals]

    # -- promotion functions --------------------------------------------------

    def result_type(self, args):
        return self.torch.result_type(*args)

    def elementwise_dtypes(self, args):
        pc = self.prims_common
        return pc.elementwise_dtypes(
            *args, type_promotion_kind=pc.ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)[1]


def outcome(ctx, operands, fn):
    """{"dtype": ..., "weak_type": false} or {"error": ...} for fn(*built operands)."""
    try:
        args = [ctx.build(s) for s in operands]
        dt = fn(args)
        if not isinstance(dt, ctx.torch.dtype):
            raise AssertionError(f"not a dtype: {dt!r}")
        return {"dtype": ctx.dtype_name(dt), "weak_type": False}
    except Exception as e:  # noqa: BLE001 - every failure is a fixture case
        return {"error": error_of(e)}


KNOWN_RESULT_NAMES = frozenset(ALL_DTYPES)


def outside_grammar_note(ctx, header, cases):
    """Say so in the notes when a result dtype has no DTYPE name in tools/FIXTURES.md."""
    seen = set()
    for c in cases:
        for d in (c.get("dtype"), (c.get("promoted") or {}).get("dtype")):
            if d is not None and d not in KNOWN_RESULT_NAMES:
                seen.add(d)
    if seen:
        header["notes"]["result_dtypes_outside_operand_list"] = sorted(seen)
        header["notes"]["result_dtypes_outside_operand_list_reason"] = (
            "torch names these result dtypes (str(dtype) without 'torch.'); they are not "
            "operands here. bcomplex32 (complex of two bfloat16) is what this torch "
            "promotes bfloat16 with a complex zero-dim tensor or Python complex to")


def base_header(ctx, function, op):
    notes = {}
    if ctx.missing:
        notes["dtypes_missing"] = ctx.missing
    return {"generator": GENERATOR, "versions": ctx.versions(), "library": "torch",
            "function": function, "op": op,
            "mode": {"default_dtype": ctx.default_dtype}, "notes": notes}


BUILD_NOTE = ("DTYPE is torch.ones((2,), dtype=DTYPE) (ones, not zeros, so that integer "
              "division by a tensor operand cannot fail); DTYPE(VALUE) is "
              "torch.tensor(VALUE, dtype=DTYPE) (zero-dim); int/float/complex are the "
              "Python numbers 0, 0.0, 0j; other literals are Python numbers as repr() "
              "prints them. All tensors are on the CPU. error.message is the first line "
              "of str(exc).")


# -- promote_types -------------------------------------------------------------

def task_promote_types(ctx, out_dir):
    torch = ctx.torch
    cases = []
    for a in ctx.dtypes:
        for b in ctx.dtypes:
            case = {"operands": [a, b]}
            try:
                case.update({"dtype": ctx.dtype_name(
                    torch.promote_types(ctx.tdtype(a), ctx.tdtype(b))), "weak_type": False})
            except Exception as e:  # noqa: BLE001
                case["error"] = error_of(e)
            cases.append(case)
    header = base_header(ctx, "torch.promote_types(a, b)", None)
    header["notes"]["operands"] = "dtype names, passed as torch.dtype objects"
    path = os.path.join(out_dir, "torch", "promote_types.json")
    return write_fixture(path, header, cases), cases


# -- result_type -------------------------------------------------------------

CATEGORIES = ["bool", "int", "float", "complex"]


def category_of(name):
    if name == "bool":
        return "bool"
    if name.startswith(("int", "uint")):
        return "int"
    if name.startswith(("float", "bfloat")):
        return "float"
    return "complex"


def random_operand(ctx, rng, cats):
    """A random operand string whose category is in cats."""
    common = [d for d in DOC18_DTYPES if category_of(d) in cats]
    extra = [d for d in ctx.extra if category_of(d) in cats]
    lits = []
    if "bool" in cats:
        lits += BOOL_LITERALS
    if "int" in cats:
        lits += INT_LITERALS
    if "float" in cats:
        lits += FLOAT_LITERALS
    if "complex" in cats:
        lits += COMPLEX_LITERALS
    pytypes = [t for t in PY_TYPES if t in cats]
    return pick(rng, [
        (30, common), (4 if extra else 0, extra),
        (20, lambda: rng.choice(ctx.value_operands(rng.choice(common)))),
        (3 if extra else 0, lambda: rng.choice(ctx.value_operands(rng.choice(extra)))),
        (6 if pytypes else 0, pytypes), (14, lits),
    ])


def random_lists(ctx, rng, n):
    out = []
    for _ in range(n):
        length = rng.randint(1, 5)
        if rng.random() < 0.5:
            cats = CATEGORIES
        else:
            # Themed: operands of one or two categories, so that the lower
            # categories' dtypes decide the result more often.
            k = rng.randint(1, 2)
            cats = rng.sample(CATEGORIES, k)
        out.append([random_operand(ctx, rng, cats) for _ in range(length)])
    return out


def pair_operand_list(ctx):
    return list(ctx.dtypes) + PAIR_ZERO_DIM + PAIR_LITERALS + PY_TYPES


def task_result_type(ctx, out_dir):
    ops = pair_operand_list(ctx)
    cases = []
    for a in ops:
        cases.append({"operands": [a], "fn": "elementwise_dtypes",
                      **outcome(ctx, [a], ctx.elementwise_dtypes)})
    disagreements = []
    for a in ops:
        for b in ops:
            rt = outcome(ctx, [a, b], ctx.result_type)
            ew = outcome(ctx, [a, b], ctx.elementwise_dtypes)
            if rt.get("dtype") != ew.get("dtype"):
                def show(o):
                    return o.get("dtype") or f"{o['error']['kind']}: {o['error']['message']}"
                disagreements.append(f"{a}, {b}: result_type -> {show(rt)}; "
                                     f"elementwise_dtypes -> {show(ew)}")
            cases.append({"operands": [a, b], "fn": "result_type", **rt})
    rng = random.Random(SEEDS[ctx.default_dtype])
    for lst in random_lists(ctx, rng, N_RANDOM):
        cases.append({"operands": lst, "fn": "elementwise_dtypes",
                      **outcome(ctx, lst, ctx.elementwise_dtypes)})
    header = base_header(
        ctx,
        "fn=result_type: torch.result_type(a, b); fn=elementwise_dtypes: "
        "torch._prims_common.elementwise_dtypes(*args, type_promotion_kind="
        "ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)[1]",
        None)
    header["notes"].update({
        "operands": BUILD_NOTE,
        "fn": ("each case says which function computed it: every operand alone and the "
               f"{N_RANDOM} seeded random lists of 1-5 operands use elementwise_dtypes "
               "(its result dtype, the second element); all ordered pairs use "
               "torch.result_type"),
        "elementwise_dtypes_vs_result_type": (
            "on every ordered pair of the pair operand list the two functions were compared; "
            "these pairs give a different dtype or one of them fails (both failing counts "
            "as agreement)"),
        "elementwise_dtypes_disagreements": disagreements,
        "elementwise_dtypes_caveat": (
            "elementwise_dtypes is torch's Python reference (PrimTorch) promotion: it never "
            "refuses uint16/uint32/uint64 or float8 mixes (it answers by a fixed ordering "
            "where torch.result_type raises), and fails with Python artifacts (RuntimeError "
            "'Unexpected termination!', KeyError 'torch.float8_...') on a few lists; its "
            "answers otherwise agree with torch.result_type on every pair"),
    })
    outside_grammar_note(ctx, header, cases)
    name = "result_type.json" if ctx.default_dtype == "float32" else \
        f"result_type_default_{ctx.default_dtype}.json"
    path = os.path.join(out_dir, "torch", name)
    return write_fixture(path, header, cases), cases


# -- ops ------------------------------------------------------------------------

def op_operand_list(ctx):
    return DOC18_DTYPES + ctx.extra + PY_TYPES


def task_op(ctx, out_dir, op):
    torch = ctx.torch
    fn = getattr(torch, op)
    ops = op_operand_list(ctx)
    cases = []
    scalar_results = []
    for a in ops:
        for b in ops:
            case = {"operands": [a, b]}
            try:
                x, y = ctx.build(a), ctx.build(b)
                out = fn(x, y)
                if isinstance(out, torch.Tensor):
                    case.update({"dtype": ctx.dtype_name(out.dtype), "weak_type": False})
                else:
                    # A Python scalar result: its NumPy default dtype name.
                    scalar_results.append(f"{a}, {b}")
                    case.update({"dtype": {"bool": "bool", "int": "int64",
                                           "float": "float64",
                                           "complex": "complex128"}[type(out).__name__],
                                 "weak_type": False})
            except Exception as e:  # noqa: BLE001
                case["error"] = error_of(e)
            pr = outcome(ctx, [a, b], ctx.result_type)
            case["promoted"] = {"dtype": pr["dtype"]} if "dtype" in pr else pr
            cases.append(case)
    header = base_header(ctx, f"torch.{op}(a, b)", op)
    header["notes"].update({
        "operands": BUILD_NOTE,
        "promoted": ("torch.result_type(a, b) on the same operands: {\"dtype\": name} or "
                     "{\"error\": {kind, message}}; tells a promotion refusal from a kernel "
                     "missing on the CPU"),
        "python_scalar_results": (scalar_results or
                                  "none: every call returned a tensor or raised"),
    })
    if op == "floor_divide":
        header["notes"]["zero_divisor"] = (
            "`int` is the Python number 0, so floor_divide by it with an integer (or bool) "
            "result dtype raises RuntimeError('ZeroDivisionError'); `promoted` still has "
            "the dtype")
    outside_grammar_note(ctx, header, cases)
    path = os.path.join(out_dir, "torch", f"op_{op}.json")
    return write_fixture(path, header, cases), cases


def child_main(kind, default_dtype, out_dir):
    ctx = Ctx(default_dtype)
    if kind == "promote_types":
        path, cases = task_promote_types(ctx, out_dir)
    elif kind == "result_type":
        path, cases = task_result_type(ctx, out_dir)
    else:
        path, cases = task_op(ctx, out_dir, kind[len("op_"):])
    n_err = sum(1 for c in cases if "error" in c)
    print(f"wrote {os.path.relpath(path, REPO_ROOT)}: {len(cases)} cases ({n_err} errors)",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description="Generate PyTorch dtype-promotion fixtures.")
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--default-dtype", default="float32", choices=["float32", "float64"],
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    if args.child:
        child_main(args.child, args.default_dtype, out_dir)
    else:
        run_tasks(out_dir, max(1, args.jobs))


if __name__ == "__main__":
    main()
