#!/usr/bin/env python3
"""Generate NumPy / array-api-strict dtype-promotion fixtures for the dtype-lattice Rust tests.

Usage:
    python3 tools/gen_numpy_fixtures.py [--python LIB=PYTHON ...] [--only LIB ...]
                                        [--out-dir DIR] [--jobs N]

LIB is one of `numpy2`, `numpy1`, `array-api`; each needs its own interpreter
(see tools/gen_numpy_fixtures.sh, which sets up the pinned venvs
tools/.venv-numpy2, tools/.venv-numpy1 and tools/.venv-array-api, the
defaults for --python).  The top-level invocation imports no array library:
it re-runs this script once per (library, task) in a fresh subprocess with
that library's interpreter, with NPY_* and ARRAY_API_STRICT_* variables
removed from the environment so that every library runs with its defaults.

Output (relative to --out-dir, default <repo>/tests/fixtures):
    numpy/result_type.json, numpy/op_<op>.json                numpy 2.x (NEP 50) with ml_dtypes
    numpy-legacy/result_type.json, numpy-legacy/op_<op>.json  numpy 1.26 (value-based casting)
    numpy/min_scalar_type.json                                numpy 1.26 np.min_scalar_type
    array-api/result_type.json, array-api/op_<op>.json        array-api-strict

Fixture format and operand grammar: tools/FIXTURES.md.  Operands here:
    DTYPE          1-D array of shape (2,): np.zeros((2,), DTYPE) /
                   xp.zeros((2,), dtype=xp.DTYPE)
    DTYPE(VALUE)   0-d array: np.array(VALUE, dtype=DTYPE) / xp.asarray(VALUE, dtype=xp.DTYPE)
    int|float|complex   the Python scalars 0, 0.0, 0j
    Python literal as printed by repr(): 3, -200, 2.5, 1e+40, inf, nan, -inf,
                   1j, (1e+40+1j), True, False
"""

import argparse
import itertools
import os
import platform
import random
import re
import warnings
from fixturelib import run_children, parse_literal, first_line, write_fixture, pick

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = "tools/gen_numpy_fixtures.py"

LIBRARIES = ("numpy2", "numpy1", "array-api")
OUT_SUBDIR = {"numpy2": "numpy", "numpy1": "numpy-legacy", "array-api": "array-api"}
DEFAULT_VENV = {"numpy2": ".venv-numpy2", "numpy1": ".venv-numpy1", "array-api": ".venv-array-api"}
TASKS = (
    ("numpy2", "result_type"),
    ("numpy2", "ops"),
    ("numpy1", "result_type"),
    ("numpy1", "ops"),
    ("numpy1", "min_scalar_type"),
    ("array-api", "result_type"),
    ("array-api", "ops"),
)

DTYPE_NAMES = [
    "bool", "uint8", "uint16", "uint32", "uint64",
    "int8", "int16", "int32", "int64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
]
DTYPE_SET = frozenset(DTYPE_NAMES)
PY_TYPES = ["int", "float", "complex"]
PY_TYPE_VALUES = {"int": 0, "float": 0.0, "complex": 0j}
DOC18 = DTYPE_NAMES + PY_TYPES

OPS = ["add", "subtract", "multiply", "true_divide", "floor_divide", "power",
       "equal", "less", "logical_and", "bitwise_and"]
NP_OP_FUNCS = {op: op for op in OPS}
XP_OP_FUNCS = dict(NP_OP_FUNCS, true_divide="divide", power="pow")

# Extra operands of the plain-promotion pair list.
PAIR_ZERO_D = ["int8(3)", "int8(-100)", "uint8(200)", "int64(300)", "int64(70000)",
               "float64(2.5)", "float64(1e+40)", "float32(2.5)", "complex128(1j)", "bool(True)"]
PAIR_LITERALS = ["3", "-200", "300", "70000", "2.5", "1e+40", "1j", "(1e+40+1j)", "True"]

# Literals for the random lists (all printed exactly as repr() prints them).  They are
# chosen around the thresholds of np.min_scalar_type (integer ranges; |x| < 65000 for
# float16 and |x| < 3.4e+38 for float32, see min_scalar_type.json).
INT_LITERALS = ["0", "1", "3", "-1", "-2", "100", "127", "128", "-128", "-129", "200", "255",
                "256", "-200", "300", "1000", "32767", "32768", "-32769", "65535", "65536",
                "70000", "-40000", "2147483647", "2147483648", "-2147483649", "4294967295",
                "4294967296", "9223372036854775807", "9223372036854775808",
                "18446744073709551615", "18446744073709551616", "-9223372036854775808",
                "-9223372036854775809"]
FLOAT_LITERALS = ["0.0", "-0.0", "0.5", "2.5", "-2.5", "1.5e-08", "100.0", "64999.0",
                  "65000.0", "65504.0", "65520.0", "70000.0", "-70000.0", "100000.0", "1e+38",
                  "3.4e+38", "3.5e+38", "1e+39", "1e+40", "-1e+40", "1e+300", "inf", "-inf",
                  "nan"]
COMPLEX_LITERALS = ["0j", "1j", "(1+2j)", "(2.5+0j)", "(70000+0j)", "(1e+39+0j)", "(3+1e+39j)",
                    "(1e+40+1j)"]
BOOL_LITERALS = ["True", "False"]

# Values for DTYPE(VALUE) operands, filtered per dtype (integers to the dtype's range,
# floats to finite values within the dtype's range, plus inf/nan).
INT_VALUES = [0, 1, -1, 3, -2, 100, 127, -128, 128, 200, 255, 256, -129, 300, 1000, 32767,
              -32768, 32768, 65535, 65536, 70000, -40000, 2**31 - 1, -2**31, 2**31, 2**32 - 1,
              2**32, 2**63 - 1, -2**63, 2**64 - 1]
FLOAT_VALUES = [0.0, -0.0, 0.5, 2.5, -2.5, 1.5e-08, 100.0, 64999.0, 65000.0, 65504.0, 70000.0,
                1e+38, 3.4e+38, 1e+39, 1e+300, float("inf"), float("-inf"), float("nan")]
COMPLEX_VALUES = [0j, 1j, complex(1, 2), complex(2.5, 0), complex(70000, 0), complex(1e+39, 0),
                  complex(3, 1e+39), complex(1e+40, 1)]

# np.min_scalar_type probes: Python scalars, then 0-d arrays of these dtypes.
MST_VALUES = [
    0, 1, -1, 3, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65535, 65536,
    -65536, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1, 2**32, 2**63 - 1, 2**63, -2**63,
    -2**63 - 1, 2**64 - 1, 2**64,
    0.0, -0.0, 0.5, 2.5, -2.5, 1.5e-08, 1e-300, 100.0, 64999.0, 65000.0, -65000.0, 65504.0,
    65520.0, 100000.0, 3.3e+38, 3.4e+38, -3.4e+38, 3.5e+38, 1e+39, 1e+40, 1e+300,
    float("inf"), float("-inf"), float("nan"),
    0j, 1j, complex(1, 2), complex(64999, 0), complex(65000, 0), complex(1e+39, 0),
    complex(3, 1e+39), complex(1e+40, 1),
    True, False,
]
MST_ZERO_D_DTYPES = ["int64", "uint64", "float32", "float64", "complex128"]

# Operand sets whose every permutation goes into the NumPy result_type files: n-ary
# promotion is order-independent in NumPy 2 (the least dtype all operands cast to
# safely) but the value-based path of NumPy 1.x folds promote_types left to right.
ORDER_SETS = [
    ["uint8", "int8", "float16"],
    ["uint16", "int16", "float16"],
    ["uint16", "int8", "complex64"],
    ["uint8", "int8", "float16", "3"],
    ["uint16", "int8", "float16", "2.5"],
    ["uint16", "int8", "float16", "300"],
    ["uint32", "int8", "float32", "2.5"],
    ["uint64", "int8", "float16", "2.5"],
    ["uint8", "int8(3)", "float16"],
    ["uint8", "int8", "float16(2.5)"],
    ["uint16", "int8", "complex64", "1j"],
    ["int8", "uint8(200)", "float16", "-1"],
]

SEEDS = {
    ("numpy2", "result_type"): 3001,
    ("numpy1", "result_type"): 3002,
    ("array-api", "result_type"): 3003,
}
N_RANDOM = 2000
MAX_FILE_BYTES = 1_500_000


# ---------------------------------------------------------------------------
# Orchestration (parent process; imports no array library)
# ---------------------------------------------------------------------------

def run_tasks(out_dir, pythons, libs, jobs):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NPY_", "NUMPY_", "ARRAY_API_STRICT_"))}
    env.update({"PYTHONHASHSEED": "0", "PYTHONWARNINGS": "ignore"})
    run_children([
        (f"task {(lib, kind)}",
         [pythons[lib], os.path.abspath(__file__), "--child", lib, kind, "--out-dir", out_dir],
         env)
        for lib, kind in TASKS if lib in libs
    ], jobs)

# ---------------------------------------------------------------------------
# Child process helpers
# ---------------------------------------------------------------------------

class NumpyCtx:
    """numpy2 / numpy1: operands are NumPy arrays and Python scalars."""

    def __init__(self, lib):
        warnings.simplefilter("ignore")
        import numpy as np
        self.np = np
        self.lib = lib
        np.seterr(all="ignore")
        major = int(np.__version__.split(".")[0])
        if (lib == "numpy2") != (major >= 2):
            raise SystemExit(f"{lib}: got numpy {np.__version__}")
        self.mode = {}
        self.ml_dtypes = None
        if lib == "numpy2":
            # NumPy 2 with ml_dtypes imported (`--rules numpy` models both): bfloat16 is
            # ml_dtypes' type. Importing it changes no answer among NumPy's own dtypes
            # (tools/gen_numpy_ml_dtypes_fixtures.py checks that).
            import ml_dtypes
            self.ml_dtypes = ml_dtypes
            self.mode = {"ml_dtypes": True}
        if lib == "numpy1":
            state = np._get_promotion_state()
            if state != "legacy":
                raise SystemExit(f"numpy 1.x promotion state is {state!r}, expected 'legacy'")
            self.mode = {"promotion_state": state}

    def versions(self):
        v = {"python": platform.python_version(), "numpy": self.np.__version__}
        if self.ml_dtypes is not None:
            v["ml_dtypes"] = self.ml_dtypes.__version__
        return v

    def dtype(self, name):
        return self.np.dtype(name)

    def build(self, s):
        np = self.np
        if s in DTYPE_SET:
            return np.zeros((2,), dtype=np.dtype(s))
        if s in PY_TYPE_VALUES:
            return PY_TYPE_VALUES[s]
        m = re.fullmatch(r"([a-z0-9_]+)\((.*)\)", s)
        if m and m.group(1) in DTYPE_SET:
            dt = np.dtype(m.group(1))
            v = parse_literal(m.group(2))
            arr = np.array(v, dtype=dt)
            assert arr.shape == () and arr.dtype == dt
            if _category(m.group(1)) in ("int", "uint"):
                assert isinstance(v, int) and int(arr) == v, f"{s}: value not in range"
            return arr
        return parse_literal(s)

    def dtype_name(self, x):
        return str(self.np.dtype(x))

    def result_type(self, args):
        return self.dtype_name(self.np.result_type(*args))

    def op_func(self, op):
        return getattr(self.np, NP_OP_FUNCS[op])

    def op_func_name(self, op):
        return f"np.{NP_OP_FUNCS[op]}(a, b)"

    def op_result(self, out):
        if hasattr(out, "dtype"):
            return self.dtype_name(out.dtype)
        # A Python scalar result (does not happen with these operands: NumPy returns
        # NumPy scalars).
        return self.dtype_name(type(out))

    def iinfo(self, name):
        ii = self.np.iinfo(self.np.dtype(name))
        return int(ii.min), int(ii.max)

    def fmax(self, name):
        return float(self.np.finfo(self.np.dtype(name)).max)


class ArrayApiCtx:
    """array-api: operands are array_api_strict arrays and Python scalars."""

    def __init__(self, lib):
        warnings.simplefilter("ignore")
        import numpy as np
        import array_api_strict as xp
        np.seterr(all="ignore")
        self.np, self.xp, self.lib = np, xp, lib
        self.names = {}
        for name in DTYPE_NAMES:
            dt = getattr(xp, name, None)
            if dt is not None:
                self.names[dt] = name
        self.mode = {"api_version": xp.__array_api_version__}

    def versions(self):
        import array_api_strict
        return {"python": platform.python_version(), "array_api_strict": array_api_strict.__version__,
                "numpy": self.np.__version__, "array_api_version": self.xp.__array_api_version__}

    def dtype(self, name):
        return getattr(self.xp, name)

    def build(self, s):
        xp = self.xp
        if s in DTYPE_SET:
            return xp.zeros((2,), dtype=self.dtype(s))
        if s in PY_TYPE_VALUES:
            return PY_TYPE_VALUES[s]
        m = re.fullmatch(r"([a-z0-9_]+)\((.*)\)", s)
        if m and m.group(1) in DTYPE_SET:
            dt = self.dtype(m.group(1))
            v = parse_literal(m.group(2))
            arr = xp.asarray(v, dtype=dt)
            assert arr.shape == () and arr.dtype == dt
            if _category(m.group(1)) in ("int", "uint"):
                assert isinstance(v, int) and int(arr) == v, f"{s}: value not in range"
            return arr
        return parse_literal(s)

    def dtype_name(self, dt):
        return self.names[dt]

    def result_type(self, args):
        return self.dtype_name(self.xp.result_type(*args))

    def op_func(self, op):
        return getattr(self.xp, XP_OP_FUNCS[op])

    def op_func_name(self, op):
        return f"xp.{XP_OP_FUNCS[op]}(a, b)"

    def op_result(self, out):
        return self.dtype_name(out.dtype)

    def iinfo(self, name):
        ii = self.np.iinfo(self.np.dtype(name))
        return int(ii.min), int(ii.max)

    def fmax(self, name):
        return float(self.np.finfo(self.np.dtype(name)).max)


def make_ctx(lib):
    return ArrayApiCtx(lib) if lib == "array-api" else NumpyCtx(lib)


def run_case(ctx, operands, fn):
    case = {"operands": list(operands)}
    try:
        args = [ctx.build(s) for s in operands]
        case["dtype"] = fn(args)
        case["weak_type"] = False
    except Exception as e:  # noqa: BLE001 - every failure is a fixture case
        case["error"] = {"kind": type(e).__name__, "message": first_line(e)}
    return case


def header(ctx, library, function, op, notes):
    return {"generator": GENERATOR, "versions": ctx.versions(), "library": library,
            "function": function, "op": op, "mode": ctx.mode, "notes": notes}


def operand_notes(ctx):
    if ctx.lib == "array-api":
        n = {
            "DTYPE": "xp.zeros((2,), dtype=xp.DTYPE)",
            "DTYPE(VALUE)": "xp.asarray(VALUE, dtype=xp.DTYPE), 0-d",
            "unavailable_dtypes": ("float16 and bfloat16 are not array-api-strict dtypes: "
                                   "operands using them are error cases with what "
                                   "getattr(xp, name) raises"),
        }
    else:
        n = {
            "DTYPE": "np.zeros((2,), dtype=DTYPE)",
            "DTYPE(VALUE)": "np.array(VALUE, dtype=DTYPE), 0-d",
            "unavailable_dtypes": ("bfloat16 is not a NumPy dtype: operands using it are error "
                                   "cases with what np.dtype('bfloat16') raises"
                                   if ctx.lib == "numpy1" else
                                   "none: ml_dtypes is imported, bfloat16 is its type"),
            "extra_dtypes": ("NumPy's longdouble/clongdouble, object, string and datetime "
                             "dtypes are not used"),
        }
    n["int|float|complex"] = "the Python scalars 0, 0.0, 0j"
    n["literals"] = "Python scalars written as repr() prints them"
    n["errors"] = "error.message is the first line of str(exc)"
    return n


def pair_operand_list():
    return DOC18 + PAIR_ZERO_D + PAIR_LITERALS


# -- random operand lists ----------------------------------------------------

def _category(name):
    if name == "bool":
        return "bool"
    if name.startswith("uint"):
        return "uint"
    if name.startswith("int"):
        return "int"
    if name.startswith("complex"):
        return "complex"
    return "float"


def value_operands(ctx, name):
    """All DTYPE(VALUE) strings used for a dtype."""
    cat = _category(name)
    if name == "bfloat16":
        return ["bfloat16(2.5)", "bfloat16(1e+40)"]
    if cat == "bool":
        vals = [True, False]
    elif cat in ("uint", "int"):
        lo, hi = ctx.iinfo(name)
        vals = [v for v in INT_VALUES if lo <= v <= hi]
    elif cat == "float":
        fmax = ctx.fmax(name)
        vals = [v for v in FLOAT_VALUES if v != v or abs(v) == float("inf") or abs(v) <= fmax]
    else:
        fmax = ctx.fmax(name)
        vals = [v for v in COMPLEX_VALUES if abs(v.real) <= fmax and abs(v.imag) <= fmax]
    return [f"{name}({v!r})" for v in vals]


def literals_for(cat):
    """Python literals of the same or a lower kind than category cat."""
    if cat == "bool":
        return BOOL_LITERALS
    if cat in ("uint", "int"):
        return BOOL_LITERALS[:1] + INT_LITERALS
    if cat == "float":
        return INT_LITERALS[:12] + FLOAT_LITERALS
    return INT_LITERALS[:8] + FLOAT_LITERALS + COMPLEX_LITERALS


def random_general_operand(ctx, rng, dtypes):
    return pick(rng, [
        (26, dtypes), (24, lambda: rng.choice(value_operands(ctx, rng.choice(dtypes)))),
        (16, INT_LITERALS), (10, FLOAT_LITERALS), (4, COMPLEX_LITERALS), (3, BOOL_LITERALS),
        (3, PY_TYPES), (1, ["bfloat16", "bfloat16(2.5)"]),
    ])


def random_themed_list(ctx, rng, dtypes, length):
    """One array of a theme dtype plus operands that can promote with it: for NumPy,
    operands of the same or a lower kind (where value-based casting in NumPy 1.x
    matters most); for the array API, arrays of the same kind group (bool; integer;
    real/complex floating) and the Python scalars it allows with that group."""
    theme = rng.choice(dtypes)
    cat = _category(theme)
    if ctx.lib == "array-api":
        group = {"bool": ["bool"], "uint": ["uint", "int"], "int": ["uint", "int"],
                 "float": ["float", "complex"], "complex": ["float", "complex"]}[cat]
        same_cat = [d for d in dtypes if _category(d) in group]
        lower_dtypes = same_cat
        lits = {"bool": BOOL_LITERALS, "uint": INT_LITERALS[:16], "int": INT_LITERALS[:16],
                "float": INT_LITERALS[:8] + FLOAT_LITERALS + COMPLEX_LITERALS,
                "complex": INT_LITERALS[:8] + FLOAT_LITERALS + COMPLEX_LITERALS}[cat]
        pytypes = {"bool": [], "uint": ["int"], "int": ["int"]}.get(cat, PY_TYPES)
    else:
        same_cat = [d for d in dtypes if _category(d) == cat]
        lower = {"bool": ["bool"], "uint": ["bool", "uint"], "int": ["bool", "uint", "int"],
                 "float": ["bool", "uint", "int", "float"],
                 "complex": ["bool", "uint", "int", "float", "complex"]}[cat]
        lower_dtypes = [d for d in dtypes if _category(d) in lower]
        lits = literals_for(cat)
        pytypes = PY_TYPES
    ops = [theme]
    for _ in range(length - 1):
        ops.append(pick(rng, [
            (6, same_cat),
            (10, lambda: rng.choice(value_operands(ctx, rng.choice(same_cat)))),
            (6, lambda: rng.choice(value_operands(ctx, rng.choice(lower_dtypes)))),
            (12, lits),
            (2 if pytypes else 0, pytypes),
            (2, lambda: random_general_operand(ctx, rng, dtypes)),
        ]))
    rng.shuffle(ops)
    return ops


def random_lists(ctx, rng, n):
    if ctx.lib == "array-api":
        dtypes = [d for d in DTYPE_NAMES if d not in ("bfloat16", "float16")]
        themed_fraction = 0.8
    else:
        dtypes = [d for d in DTYPE_NAMES if d != "bfloat16"]
        themed_fraction = 0.45
    out = []
    for _ in range(n):
        length = rng.randint(1, 5)
        if length > 1 and rng.random() < themed_fraction:
            out.append(random_themed_list(ctx, rng, dtypes, length))
        else:
            out.append([random_general_operand(ctx, rng, dtypes) for _ in range(length)])
    return out


# -- tasks -------------------------------------------------------------------

def task_result_type(ctx, out_dir):
    fn = ctx.result_type
    ops = pair_operand_list()
    rng = random.Random(SEEDS[(ctx.lib, "result_type")])
    cases = [run_case(ctx, [a], fn) for a in ops]
    cases += [run_case(ctx, [a, b], fn) for a in ops for b in ops]
    n_order = 0
    if ctx.lib != "array-api":
        for base in ORDER_SETS:
            for perm in itertools.permutations(base):
                cases.append(run_case(ctx, perm, fn))
                n_order += 1
    cases += [run_case(ctx, lst, fn) for lst in random_lists(ctx, rng, N_RANDOM)]
    if ctx.lib == "array-api":
        function = "xp.result_type(*args)"
    else:
        function = "np.result_type(*args)"
    notes = operand_notes(ctx)
    order = (f"then all permutations of {len(ORDER_SETS)} operand sets ({n_order} cases, "
             f"probing order dependence), " if n_order else "")
    notes["cases"] = (f"each of the {len(ops)} pair operands alone, all ordered pairs of them, "
                      f"{order}then {N_RANDOM} seeded random lists of 1 to 5 operands")
    path = os.path.join(out_dir, OUT_SUBDIR[ctx.lib], "result_type.json")
    path = write_fixture(path, header(ctx, OUT_SUBDIR[ctx.lib], function, None, notes), cases)
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        raise SystemExit(f"{path}: {size} bytes, over {MAX_FILE_BYTES}")
    return [(path, size, cases)]


def task_ops(ctx, out_dir):
    results = []
    for op in OPS:
        f = ctx.op_func(op)

        def fn(args, f=f):
            return ctx.op_result(f(*args))

        cases = [run_case(ctx, [a, b], fn) for a in DOC18 for b in DOC18]
        n_doc18 = len(cases)
        arrays = op_value_array_dtypes(ctx)
        for a in arrays:
            for v in PAIR_ZERO_D + PAIR_LITERALS:
                cases.append(run_case(ctx, [a, v], fn))
                cases.append(run_case(ctx, [v, a], fn))
        notes = operand_notes(ctx)
        notes["cases"] = (
            f"first {n_doc18} cases: all ordered pairs over DOC18 (arrays zero-filled; int, "
            f"float, complex are 0, 0.0, 0j); then each of the arrays {' '.join(arrays)} with "
            f"each of the value operands {' '.join(PAIR_ZERO_D + PAIR_LITERALS)}, "
            f"as (array, value) then (value, array)")
        notes["value_dependent_errors"] = (
            "some errors in the second block depend on values, not dtypes: e.g. NumPy's "
            "'Integers to negative integer powers are not allowed.' (power with a negative "
            "integer exponent) and NumPy 2's / array-api-strict's out-of-bounds Python int "
            "OverflowError")
        if ctx.lib != "array-api":
            notes["python_scalar_results"] = (
                "with two Python-scalar operands NumPy returns a NumPy scalar; its dtype is "
                "recorded like an array's")
        path = os.path.join(out_dir, OUT_SUBDIR[ctx.lib], f"op_{op}.json")
        path = write_fixture(
            path, header(ctx, OUT_SUBDIR[ctx.lib], ctx.op_func_name(op), op, notes), cases)
        size = os.path.getsize(path)
        results.append((path, size, cases))
    return results


def op_value_array_dtypes(ctx):
    """Array dtypes paired with the value operands in the op files (the ones the
    library can build)."""
    skip = ("bfloat16", "float16") if ctx.lib == "array-api" else ("bfloat16",)
    return [d for d in DTYPE_NAMES if d not in skip]


def task_min_scalar_type(ctx, out_dir):
    np = ctx.np

    def fn(args):
        return ctx.dtype_name(np.min_scalar_type(*args))

    cases = [run_case(ctx, [repr(v)], fn) for v in MST_VALUES]
    for name in MST_ZERO_D_DTYPES:
        cat = _category(name)
        for v in MST_VALUES:
            if isinstance(v, bool):
                continue
            if cat in ("int", "uint"):
                lo, hi = ctx.iinfo(name)
                if not isinstance(v, int) or not lo <= v <= hi:
                    continue
            elif cat == "float":
                if isinstance(v, complex):
                    continue
                if isinstance(v, float) and v == v and abs(v) != float("inf") \
                        and abs(v) > ctx.fmax(name):
                    continue
            cases.append(run_case(ctx, [f"{name}({v!r})"], fn))
    notes = operand_notes(ctx)
    for key in ("DTYPE", "unavailable_dtypes", "extra_dtypes", "int|float|complex"):
        del notes[key]
    notes["cases"] = ("np.min_scalar_type of Python scalars, then of 0-d arrays of "
                      + ", ".join(MST_ZERO_D_DTYPES)
                      + " (integer values in range; finite float values within range)")
    notes["numpy_version"] = "generated with NumPy 1.26 (the value-based-casting helper)"
    path = os.path.join(out_dir, "numpy", "min_scalar_type.json")
    head = header(ctx, "numpy", "np.min_scalar_type(v)", None, notes)
    head["mode"] = {}  # np.min_scalar_type does not depend on the promotion state
    path = write_fixture(path, head, cases)
    size = os.path.getsize(path)
    return [(path, size, cases)]


TASK_FUNCS = {"result_type": task_result_type, "ops": task_ops,
              "min_scalar_type": task_min_scalar_type}


def child_main(lib, kind, out_dir):
    ctx = make_ctx(lib)
    for path, size, cases in TASK_FUNCS[kind](ctx, out_dir):
        n_err = sum(1 for c in cases if "error" in c)
        print(f"wrote {os.path.relpath(path, REPO_ROOT)}: {len(cases)} cases ({n_err} errors), "
              f"{size} bytes", flush=True)


def main():
    ap = argparse.ArgumentParser(description="Generate NumPy / array-api dtype-promotion fixtures.")
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--python", action="append", default=[], metavar="LIB=PYTHON",
                    help="interpreter for LIB (default tools/.venv-LIB/bin/python)")
    ap.add_argument("--only", action="append", choices=LIBRARIES,
                    help="generate only these libraries' fixtures")
    ap.add_argument("--child", nargs=2, metavar=("LIB", "TASK"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    if args.child:
        child_main(args.child[0], args.child[1], out_dir)
        return
    libs = args.only or list(LIBRARIES)
    pythons = {lib: os.path.join(HERE, DEFAULT_VENV[lib], "bin", "python") for lib in LIBRARIES}
    for spec in args.python:
        lib, sep, py = spec.partition("=")
        if not sep or lib not in LIBRARIES:
            ap.error(f"--python expects LIB=PYTHON with LIB in {LIBRARIES}, got {spec!r}")
        pythons[lib] = py
    for lib in libs:
        if not os.path.exists(pythons[lib]):
            ap.error(f"no interpreter for {lib}: {pythons[lib]} (run tools/gen_numpy_fixtures.sh)")
    run_tasks(out_dir, pythons, libs, max(1, args.jobs))


if __name__ == "__main__":
    main()
