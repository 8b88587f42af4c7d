#!/usr/bin/env python3
"""Generate TensorFlow dtype-promotion fixtures for the dtype-lattice Rust tests.

Usage:
    python tools/gen_tensorflow_fixtures.py [--out-dir DIR] [--jobs N]

Run with a Python that has tensorflow-cpu installed (see
tools/gen_tensorflow_fixtures.sh, which sets up a pinned venv).  The top-level
invocation re-runs this script once per mode in a fresh subprocess, because
TensorFlow's NumPy behaviour / dtype conversion mode is global state:

    all     tf.experimental.numpy.experimental_enable_numpy_behavior(dtype_conversion_mode="all")
    safe    tf.experimental.numpy.experimental_enable_numpy_behavior(dtype_conversion_mode="safe")
    legacy  plain TensorFlow (NumPy behaviour not enabled)

Output (relative to --out-dir, default <repo>/tests/fixtures), see tools/tensorflow.md:
    tensorflow/result_type_{all,safe,legacy}.json
    tensorflow/op_<op>_{all,safe,legacy}.json   for the 10 ops of tools/FIXTURES.md

Operand grammar (tools/FIXTURES.md):
    DTYPE          tf.constant(np.ones((2,), DTYPE))                  strong 1-D tensor
    ~DTYPE         WeakTensor.from_tensor(tf.constant(np.ones((2,), DTYPE)))
                   (only int32, int64, float32, float64, complex128 can be weak)
    DTYPE(VALUE)   tf.constant(np.array(VALUE, DTYPE))                 strong 0-d tensor
    int|float|complex   the Python scalars 0, 0.0, 0j
    Python literal as printed by repr(): 3, -200, 2.5, 1e+40, inf, nan, 1j, (1e+40+1j), True
"""

import argparse
import functools
import os
import platform
import random
import re
import sys
import warnings
from fixturelib import run_children, parse_literal, first_line, write_fixture, pick

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_tensorflow_fixtures.py"
MODES = ("all", "safe", "legacy")

DTYPE_NAMES = [
    "bool", "uint8", "uint16", "uint32", "uint64",
    "int8", "int16", "int32", "int64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
]
DTYPE_SET = frozenset(DTYPE_NAMES)
NUMERIC_DTYPES = [d for d in DTYPE_NAMES if d != "bool"]
PY_TYPES = ["int", "float", "complex"]
PY_TYPE_VALUES = {"int": 0, "float": 0.0, "complex": 0j}
DOC18 = DTYPE_NAMES + PY_TYPES

# The pair operands of the result_type files besides DOC18 and the weak tensors.
PAIR_VALUE_OPERANDS = ["bool(True)", "uint8(255)", "int8(-128)", "int32(3)",
                       "uint64(18446744073709551615)", "bfloat16(2.5)", "float16(inf)",
                       "float64(nan)", "complex64(1j)"]
PAIR_LITERALS = ["3", "-200", "300", "2.5", "1e+40", "1j", "True"]

# Literals for random lists (all printed exactly as repr() prints them).
INT_LITERALS = ["0", "1", "3", "-2", "-200", "255", "300", "70000", "2147483647",
                "-2147483648", "2147483648", "9223372036854775807",
                "18446744073709551615"]
FLOAT_LITERALS = ["2.5", "-0.5", "1e+40", "inf", "-inf", "nan"]
COMPLEX_LITERALS = ["1j", "(1+2j)", "(1e+40+1j)"]
BOOL_LITERALS = ["True", "False"]

# Values for DTYPE(VALUE) operands (filtered to the dtype's range for integer dtypes).
INT_VALUES = [0, 1, -1, 3, -2, 7, -8, 100, -128, 127, 255, 1000, -200, 65535,
              2**31 - 1, -2**31, 2**32 - 1, 2**63 - 1, -2**63, 2**64 - 1]
FLOAT_VALUES = [0.0, 1.0, -2.0, 2.5, 0.5, 1e+40, float("inf"), float("-inf"), float("nan")]
COMPLEX_VALUES = [1j, 2.5, complex(1, 2), complex(1e+40, 1)]

OPS = {
    # fixture op name -> TensorFlow function (attribute path under `tf`)
    "add": "math.add",
    "subtract": "math.subtract",
    "multiply": "math.multiply",
    "true_divide": "math.truediv",
    "floor_divide": "math.floordiv",
    "power": "math.pow",
    "equal": "math.equal",
    "less": "math.less",
    "logical_and": "math.logical_and",
    "bitwise_and": "bitwise.bitwise_and",
}

SEEDS = {"all": 3001, "safe": 3002, "legacy": 3003}
N_RANDOM_RESULT_TYPE = 2000
N_RANDOM_LEGACY = 1000


# ---------------------------------------------------------------------------
# Orchestration (parent process; does not import tensorflow)
# ---------------------------------------------------------------------------

def run_modes(out_dir, jobs):
    env = dict(os.environ)
    env.update({
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "TF_ENABLE_ONEDNN_OPTS": "0",
        "CUDA_VISIBLE_DEVICES": "",
        "PYTHONHASHSEED": "0",
        "PYTHONWARNINGS": "ignore",
    })
    run_children([
        (f"mode {mode}",
         [sys.executable, os.path.abspath(__file__), "--child", mode, "--out-dir", out_dir],
         env)
        for mode in MODES
    ], jobs)

# ---------------------------------------------------------------------------
# Child process (imports tensorflow)
# ---------------------------------------------------------------------------

def error_of(exc):
    return {"kind": type(exc).__name__, "message": first_line(exc)}


class Ctx:
    def __init__(self, mode):
        warnings.simplefilter("ignore")
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import logging
        import numpy as np
        import ml_dtypes
        import tensorflow as tf
        tf.get_logger().setLevel(logging.ERROR)
        try:
            from absl import logging as absl_logging
            absl_logging.set_verbosity(absl_logging.ERROR)
        except ImportError:
            pass
        self.mode = mode
        if mode in ("all", "safe"):
            tf.experimental.numpy.experimental_enable_numpy_behavior(dtype_conversion_mode=mode)
        from tensorflow.python.framework import flexible_dtypes, ops as tf_ops
        from tensorflow.python.framework.weak_tensor import WeakTensor
        self.np, self.ml_dtypes, self.tf = np, ml_dtypes, tf
        self.flexible_dtypes, self.WeakTensor = flexible_dtypes, WeakTensor
        self.promo_mode = str(tf_ops.get_dtype_conversion_mode())
        expected = {"all": "PromoMode.ALL", "safe": "PromoMode.SAFE", "legacy": "PromoMode.OFF"}
        if self.promo_mode != expected[mode]:
            raise SystemExit(f"dtype conversion mode is {self.promo_mode}, expected {expected[mode]}")
        if tf_ops.is_auto_dtype_conversion_enabled() != (mode != "legacy"):
            raise SystemExit("auto dtype conversion flag does not match the mode")
        self.ops = {name: functools.reduce(getattr, path.split("."), tf)
                    for name, path in OPS.items()}
        self._strong = {n: self._make_strong(n) for n in DTYPE_NAMES}
        self._weak = {}
        self.weak_skipped = {}
        for n in DTYPE_NAMES:
            try:
                w = WeakTensor.from_tensor(tf.constant(np.ones((2,), dtype=self.np_dtype(n))))
                if not isinstance(w, WeakTensor) or self.name_of(w.dtype) != n:
                    raise TypeError(f"got {type(w).__name__} of {w.dtype}")
                self._weak[n] = w
            except Exception as e:  # noqa: BLE001 - recorded in the notes
                self.weak_skipped[n] = f"{type(e).__name__}: {first_line(e)}"

    # -- dtypes ---------------------------------------------------------------

    def np_dtype(self, name):
        return self.np.dtype(getattr(self.ml_dtypes, name)) if name == "bfloat16" \
            else self.np.dtype(name)

    def name_of(self, tf_dtype):
        return str(self.np.dtype(self.tf.as_dtype(tf_dtype).as_numpy_dtype))

    def _make_strong(self, name):
        t = self.tf.constant(self.np.ones((2,), dtype=self.np_dtype(name)))
        assert not isinstance(t, self.WeakTensor) and self.name_of(t.dtype) == name, (name, t)
        return t

    def versions(self):
        from importlib import metadata
        v = {"python": platform.python_version(), "tensorflow": self.tf.__version__}
        for dist in ("tensorflow-cpu", "numpy", "ml_dtypes"):
            try:
                v[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                pass
        return v

    def weak_names(self):
        return [n for n in DTYPE_NAMES if n in self._weak]

    # -- operand grammar ------------------------------------------------------

    def build(self, s):
        """Build the operand denoted by the fixture string s."""
        if s in DTYPE_SET:
            return self._strong[s]
        if s.startswith("~"):
            return self._weak[s[1:]]
        if s in PY_TYPE_VALUES:
            return PY_TYPE_VALUES[s]
        m = re.fullmatch(r"([a-z0-9_]+)\((.*)\)", s)
        if m and m.group(1) in DTYPE_SET:
            name = m.group(1)
            v = parse_literal(m.group(2))
            # Through NumPy: under auto dtype conversion the patched tf.constant runs
            # result_type on a Python int and refuses ints beyond int32 (OverflowError),
            # e.g. tf.constant(2**64 - 1, tf.uint64).
            t = self.tf.constant(self.np.array(v, dtype=self.np_dtype(name)))
            assert t.shape == () and self.name_of(t.dtype) == name, (s, t)
            assert not isinstance(t, self.WeakTensor), s
            if isinstance(v, int) and not isinstance(v, bool):
                assert int(t.numpy()) == v, f"{s}: value out of range"
            return t
        return parse_literal(s)

    def value_operands(self, name):
        """All DTYPE(VALUE) strings for a dtype."""
        if name == "bool":
            vals = [True, False]
        elif name.startswith(("int", "uint")):
            ii = self.np.iinfo(self.np_dtype(name))
            vals = [v for v in INT_VALUES if ii.min <= v <= ii.max]
        elif name.startswith("complex"):
            vals = COMPLEX_VALUES
        else:
            vals = FLOAT_VALUES
        return [f"{name}({v!r})" for v in vals]

    # -- outcomes -------------------------------------------------------------

    def describe(self, out):
        """(dtype name, weak flag) of an op's result."""
        if isinstance(out, (bool, int, float, complex)):
            # A Python scalar result: NumPy's default dtype for its type.
            return str(self.np.result_type(type(out))), False
        return self.name_of(out.dtype), isinstance(out, self.WeakTensor)


def outcome(ctx, operands, fn):
    case = {"operands": list(operands)}
    try:
        args = [ctx.build(s) for s in operands]
        dt, weak = fn(args)
        case["dtype"] = dt
        case["weak_type"] = bool(weak)
    except Exception as e:  # noqa: BLE001 - every failure is a fixture case
        case["error"] = error_of(e)
    return case


def base_header(ctx, function, op):
    return {
        "generator": GENERATOR,
        "versions": ctx.versions(),
        "library": "tensorflow",
        "function": function,
        "op": op,
        "mode": {"dtype_conversion_mode": ctx.mode, "numpy_behavior": ctx.mode != "legacy"},
    }


def common_notes(ctx):
    notes = {
        "promo_mode": f"tensorflow.python.framework.ops.get_dtype_conversion_mode() == {ctx.promo_mode}",
        "operands": ("DTYPE = tf.constant(np.ones((2,), DTYPE)); DTYPE(VALUE) = "
                     "tf.constant(np.array(VALUE, DTYPE)) (0-d; integer values in range); "
                     "int/float/complex = the Python "
                     "scalars 0, 0.0, 0j; other literals are Python scalars"),
    }
    if ctx.mode != "legacy":
        notes["weak_operands"] = ("~DTYPE = tensorflow.python.framework.weak_tensor.WeakTensor"
                                  ".from_tensor(tf.constant(np.ones((2,), DTYPE)))")
        notes["weak_operands_omitted"] = sorted(ctx.weak_skipped, key=DTYPE_NAMES.index)
        if ctx.weak_skipped:
            notes["weak_operands_omitted_reason"] = next(iter(ctx.weak_skipped.values()))
    notes["error_message"] = "first line of str(exc), trailing whitespace stripped"
    return notes


# -- random operand lists ------------------------------------------------------

def random_general_operand(ctx, rng, numeric_only=False):
    dtypes = NUMERIC_DTYPES if numeric_only else DTYPE_NAMES
    weak = [n for n in ctx.weak_names() if n in dtypes] if ctx.mode != "legacy" else []
    return pick(rng, [
        (30, dtypes), (12 if weak else 0, lambda: "~" + rng.choice(weak)),
        (12, lambda: rng.choice(ctx.value_operands(rng.choice(dtypes)))), (8, PY_TYPES),
        (7, INT_LITERALS), (4, FLOAT_LITERALS), (2, COMPLEX_LITERALS),
        (0 if numeric_only else 2, BOOL_LITERALS),
    ])


def _same_or_lower_kind_scalars(dt):
    """Python scalars of the same or a lower kind than dt."""
    if dt == "bool":
        return [], BOOL_LITERALS
    if dt.startswith(("int", "uint")):
        return ["int"], INT_LITERALS[:7]
    if dt.startswith("complex"):
        return PY_TYPES, INT_LITERALS[:3] + FLOAT_LITERALS + COMPLEX_LITERALS
    return ["int", "float"], INT_LITERALS[:3] + FLOAT_LITERALS


def random_themed_operand(ctx, rng, dt, numeric_only=False):
    """An operand likely to promote with dtype dt (plus some noise)."""
    weak_ok = ctx.mode != "legacy"
    cands = [n for n in ctx.weak_names()
             if n == dt or n.rstrip("0123456789") == dt.rstrip("0123456789")] if weak_ok else []
    pytypes, lits = _same_or_lower_kind_scalars(dt)
    return pick(rng, [
        (10, lambda: dt),
        (5 if weak_ok else 0, lambda: "~" + rng.choice(cands) if cands else dt),
        (5, ctx.value_operands(dt)),
        (4, lambda: rng.choice(pytypes) if pytypes else dt),
        (4, lits),
        (2, lambda: random_general_operand(ctx, rng, numeric_only)),
    ])


def random_lists(ctx, rng, n, min_len, max_len, themed_fraction, numeric_only=False):
    pool = NUMERIC_DTYPES if numeric_only else DTYPE_NAMES
    out = []
    for _ in range(n):
        length = rng.randint(min_len, max_len)
        if rng.random() < themed_fraction:
            dt = rng.choice(pool)
            ops = [random_themed_operand(ctx, rng, dt, numeric_only) for _ in range(length)]
        else:
            ops = [random_general_operand(ctx, rng, numeric_only) for _ in range(length)]
        out.append(ops)
    return out


# -- tasks ---------------------------------------------------------------------

def pair_operands(ctx):
    weak = ["~" + n for n in ctx.weak_names()] if ctx.mode != "legacy" else []
    return DTYPE_NAMES + weak + PY_TYPES + PAIR_VALUE_OPERANDS + PAIR_LITERALS


def op_operands(ctx):
    weak = ["~" + n for n in ctx.weak_names()] if ctx.mode != "legacy" else []
    return DTYPE_NAMES + weak + PY_TYPES


def _same_outcome(a, b):
    if "error" in a or "error" in b:
        return "error" in a and "error" in b
    return (a["dtype"], a["weak_type"]) == (b["dtype"], b["weak_type"])


def task_result_type(ctx, out_dir):
    fd = ctx.flexible_dtypes

    def rt(args):
        dt, weak = fd.result_type(*args)
        return ctx.name_of(dt), weak

    def add(args):
        return ctx.describe(ctx.ops["add"](*args))

    ops = pair_operands(ctx)
    cases = [outcome(ctx, [a], rt) for a in ops]
    pairs = [[a, b] for a in ops for b in ops]
    pair_cases = [outcome(ctx, p, rt) for p in pairs]
    cases += pair_cases
    rng = random.Random(SEEDS[ctx.mode])
    for lst in random_lists(ctx, rng, N_RANDOM_RESULT_TYPE, 1, 5,
                            themed_fraction=0.6 if ctx.mode == "safe" else 0.4):
        cases.append(outcome(ctx, lst, rt))

    # Check that this is the function tf.math.add uses: compare on every pair.
    add_cases = [outcome(ctx, p, add) for p in pairs]
    differ = []
    n_same = 0
    for r, a in zip(pair_cases, add_cases):
        if _same_outcome(r, a):
            n_same += 1
        else:
            differ.append({"operands": r["operands"],
                           "result_type": r.get("error", {}).get("kind") or
                           f"{r['dtype']}{' (weak)' if r['weak_type'] else ''}",
                           "tf.math.add": a.get("error", {}).get("kind") or
                           f"{a['dtype']}{' (weak)' if a['weak_type'] else ''}"})
    header = base_header(ctx, "tensorflow.python.framework.flexible_dtypes.result_type(*args) "
                         "-> (dtype, is_weak)", None)
    notes = common_notes(ctx)
    notes["cases"] = ("each pair operand alone, all ordered pairs of them, then "
                      f"{N_RANDOM_RESULT_TYPE} seeded random lists of 1 to 5 operands")
    notes["fold"] = ("result_type folds left to right with the binary table "
                     "flexible_dtypes._BINARY_DTYPE_RES_FULL; the first refused step raises")
    notes["check_against_tf.math.add"] = {
        "what": ("tf.math.add(a, b) on every ordered pair above, compared with "
                 "result_type(a, b): same dtype and weak flag, or both raise"),
        "pairs": len(pairs),
        "same": n_same,
        "differ": differ,
    }
    header["notes"] = notes
    path = os.path.join(out_dir, "tensorflow", f"result_type_{ctx.mode}.json")
    return write_fixture(path, header, cases), cases


def task_result_type_legacy(ctx, out_dir):
    add = ctx.ops["add"]

    def fold(args):
        return ctx.describe(functools.reduce(add, args))

    ops = pair_operands(ctx)
    cases = [outcome(ctx, [a, b], fold) for a in ops for b in ops]
    rng = random.Random(SEEDS["legacy"])
    for lst in random_lists(ctx, rng, N_RANDOM_LEGACY, 2, 4, themed_fraction=0.8,
                            numeric_only=True):
        cases.append(outcome(ctx, lst, fold))
    header = base_header(ctx, "tf.math.add(a, b) for the pairs; functools.reduce(tf.math.add, "
                         "args) (a left fold) for the random lists", None)
    notes = common_notes(ctx)
    notes["cases"] = ("all ordered pairs of the pair operands, then "
                      f"{N_RANDOM_LEGACY} seeded random lists of 2 to 4 numeric (no bool) "
                      "operands, most of them built around one dtype")
    notes["no_result_type"] = ("TensorFlow without NumPy behaviour has no result_type "
                               "function and does no implicit promotion: the result is what "
                               "tf.math.add returns")
    header["notes"] = notes
    path = os.path.join(out_dir, "tensorflow", "result_type_legacy.json")
    return write_fixture(path, header, cases), cases


def task_op(ctx, out_dir, op):
    tf = ctx.tf
    fn = ctx.ops[op]
    traced = []

    def run(args):
        try:
            return ctx.describe(fn(*args))
        except tf.errors.InvalidArgumentError as e:
            if "Integer division by zero" not in str(e):
                raise
            # The value 0 (the Python scalar `int`) divides by zero at run time. The dtype
            # is still defined: trace the same call without running it.
            cf = tf.function(lambda: fn(*args), autograph=False).get_concrete_function()
            out = cf.structured_outputs
            traced.append(True)
            return ctx.name_of(out.dtype), isinstance(out, ctx.WeakTensor)

    ops = op_operands(ctx)
    cases = []
    traced_pairs = []
    for a in ops:
        for b in ops:
            traced.clear()
            cases.append(outcome(ctx, [a, b], run))
            if traced:
                traced_pairs.append([a, b])
    path_name = f"tf.{OPS[op]}"
    header = base_header(ctx, f"{path_name}(a, b)", op)
    notes = common_notes(ctx)
    notes["cases"] = "all ordered pairs of the operands (DOC18" + \
        (" and the weak tensors)" if ctx.mode != "legacy" else ")")
    notes["weak_type"] = "true when the result is a tf.WeakTensor"
    if traced_pairs:
        notes["traced"] = {
            "why": ("with the Python scalar 0 as divisor, the integer FloorDiv kernel raises "
                    "InvalidArgumentError 'Integer division by zero' at run time; for these "
                    "pairs the dtype and weak flag come from tracing the same call with "
                    "tf.function(..., autograph=False).get_concrete_function() instead"),
            "pairs": traced_pairs,
        }
    header["notes"] = notes
    path = os.path.join(out_dir, "tensorflow", f"op_{op}_{ctx.mode}.json")
    return write_fixture(path, header, cases), cases


def child_main(mode, out_dir):
    ctx = Ctx(mode)
    results = []
    if mode == "legacy":
        results.append(task_result_type_legacy(ctx, out_dir))
    else:
        results.append(task_result_type(ctx, out_dir))
    for op in OPS:
        results.append(task_op(ctx, out_dir, op))
    for path, cases in results:
        n_err = sum(1 for c in cases if "error" in c)
        print(f"wrote {os.path.relpath(path, REPO_ROOT)}: {len(cases)} cases ({n_err} errors)",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description="Generate TensorFlow dtype-promotion fixtures.")
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--jobs", type=int, default=min(3, os.cpu_count() or 1))
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    if args.child:
        child_main(args.child, out_dir)
    else:
        run_modes(out_dir, max(1, args.jobs))


if __name__ == "__main__":
    main()
