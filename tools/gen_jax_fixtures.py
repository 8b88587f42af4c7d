#!/usr/bin/env python3
"""Generate JAX dtype-promotion fixtures for the dtype-lattice Rust tests.

Usage:
    python tools/gen_jax_fixtures.py [--out-dir DIR] [--jobs N]

Run with a Python that has jax/jaxlib/numpy/ml_dtypes installed (see
tools/gen_jax_fixtures.sh, which sets up a pinned venv).  The top-level
invocation re-runs this script once per task in a fresh subprocess with
JAX_ENABLE_X64 / JAX_NUMPY_DTYPE_PROMOTION / JAX_PLATFORMS=cpu set in the
environment, because those flags are read when jax is imported.

Output (relative to --out-dir, default <repo>/tests/fixtures):
    jax/result_type_{standard,strict}_{x32,x64}.json
    jax/promote_types_{standard,strict}_{x32,x64}.json
    jax/lax_{x32,x64}.json
    dtypes.json

Operand grammar used in the fixtures (see tools/README.md):
    DTYPE          np.zeros((2,), dtype=DTYPE)            (strong array)
    ~DTYPE         weakly typed jax.Array of DTYPE        (weak array)
    DTYPE(VALUE)   np.array(VALUE, dtype=DTYPE), 0-d      (strong array)
    int|float|complex   the Python type objects
    Python literal as printed by repr(): 3, -200, 2.5, 1e+40, inf, nan, -inf,
                   1j, (1e+40+1j), True, False
"""

import argparse
import functools
import json
import os
import platform
import random
import re
import sys
import warnings
from fixturelib import jax_child_env, run_children, parse_literal, write_fixture, pick

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_jax_fixtures.py"

# The 32 dtypes of jax._src.dtypes._jax_types, in that order (checked at run
# time against the installed jax).
DTYPE_NAMES = [
    "bool",
    "uint1", "uint2", "uint4", "uint8", "uint16", "uint32", "uint64",
    "int1", "int2", "int4", "int8", "int16", "int32", "int64",
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
    "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "bfloat16", "float16", "float32", "float64",
    "complex64", "complex128",
]
DTYPE_SET = frozenset(DTYPE_NAMES)

COMMON_DTYPES = [
    "bool", "uint8", "uint16", "uint32", "uint64",
    "int8", "int16", "int32", "int64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
]
EXOTIC_DTYPES = [d for d in DTYPE_NAMES if d not in COMMON_DTYPES]

PY_TYPES = ["int", "float", "complex"]
PAIR_LITERALS = ["True", "3", "2.5", "1j"]
# Literals for random lists (all printed exactly as repr() prints them).
INT_LITERALS = ["0", "1", "3", "-2", "-200", "255", "70000", "2147483648",
                "9223372036854775807", "9223372036854775808",
                "18446744073709551615", "-9223372036854775809"]
FLOAT_LITERALS = ["2.5", "-0.5", "1e+40", "inf", "-inf", "nan"]
COMPLEX_LITERALS = ["1j", "(1+2j)", "(1e+40+1j)"]
BOOL_LITERALS = ["True", "False"]

# Values used for DTYPE(VALUE) operands (filtered to the dtype's range for
# integer dtypes).
INT_VALUES = [0, 1, -1, 3, -2, 7, -8, 100, -128, 127, 255, 1000, -200, 65535,
              2**31 - 1, -2**31, 2**32 - 1, 2**63 - 1, -2**63, 2**64 - 1]
FLOAT_VALUES = [0.0, 1.0, -2.0, 2.5, 0.5, 1e+40, float("inf"), float("-inf"), float("nan")]
COMPLEX_VALUES = [1j, 2.5, complex(1, 2), complex(1e+40, 1)]

# Dtypes that cannot be materialized as (weak) jax Arrays on the CPU backend;
# filled in at run time by probing, reported in the output.
SKIPPED_WEAK_NOTE = ("weak arrays of these dtypes cannot be created on the CPU backend, so "
                     "'~DTYPE' operands for them are not generated")

# Per-file seeds for the random cases (fixed; any change alters the fixtures).
SEEDS = {
    ("result_type", "standard", False): 1001,
    ("result_type", "standard", True): 1002,
    ("result_type", "strict", False): 1003,
    ("result_type", "strict", True): 1004,
    ("lax", None, False): 2001,
    ("lax", None, True): 2002,
}
N_RANDOM_RESULT_TYPE = 3000
N_RANDOM_LAX = 1000


# ---------------------------------------------------------------------------
# Orchestration (parent process; does not import jax)
# ---------------------------------------------------------------------------

def task_list():
    tasks = []
    for x64 in (False, True):
        for promo in ("standard", "strict"):
            tasks.append(("result_type", promo, x64))
            tasks.append(("promote_types", promo, x64))
        tasks.append(("lax", "standard", x64))
    tasks.append(("dtypes", "standard", True))
    return tasks


def run_tasks(out_dir, jobs):
    def child(task):
        kind, promo, x64 = task
        env = jax_child_env(x64, promo)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", kind,
               "--out-dir", out_dir]
        return f"task {task}", cmd, env

    run_children([child(t) for t in task_list()], jobs)

# ---------------------------------------------------------------------------
# Child process helpers (import jax)
# ---------------------------------------------------------------------------

def _import_jax():
    warnings.simplefilter("ignore")
    import numpy as np
    import ml_dtypes
    import jax
    import jax.numpy as jnp
    import jaxlib
    from jax._src import dtypes as jdtypes
    from jax._src.lax import lax as jlax
    return np, ml_dtypes, jax, jnp, jaxlib, jdtypes, jlax


class Ctx:
    def __init__(self):
        (self.np, self.ml_dtypes, self.jax, self.jnp, self.jaxlib,
         self.jdtypes, self.jlax) = _import_jax()
        np, jax = self.np, self.jax
        names = [str(np.dtype(t)) for t in self.jdtypes._jax_types]
        if names != DTYPE_NAMES:
            raise SystemExit(f"jax._src.dtypes._jax_types changed: {names}")
        self.x64 = os.environ["JAX_ENABLE_X64"] == "1"
        self.promotion = os.environ["JAX_NUMPY_DTYPE_PROMOTION"]
        if bool(jax.config.jax_enable_x64) != self.x64:
            raise SystemExit("JAX_ENABLE_X64 was not honoured")
        if str(jax.config.jax_numpy_dtype_promotion) != self.promotion:
            raise SystemExit("JAX_NUMPY_DTYPE_PROMOTION was not honoured")
        if jax.default_backend() != "cpu":
            raise SystemExit("expected the cpu backend")
        self._weak = {}
        self.weak_skipped = {}
        for name in DTYPE_NAMES:
            self._make_weak(name)

    def versions(self):
        jaxlib_version = getattr(self.jaxlib, "__version__", None)
        if jaxlib_version is None:
            from jaxlib import version as jv
            jaxlib_version = jv.__version__
        return {
            "jax": self.jax.__version__,
            "jaxlib": jaxlib_version,
            "numpy": self.np.__version__,
            "ml_dtypes": self.ml_dtypes.__version__,
            "python": platform.python_version(),
        }

    def _make_weak(self, name):
        np, jnp = self.np, self.jnp
        # A weak array is made the way JAX makes one: from the canonical dtype, so that with
        # x64 off `~int64` is a weak int32 array (as every JAX-created weak array is).
        dt = self.jdtypes.canonicalize_dtype(np.dtype(name))
        try:
            x = self.jlax._convert_element_type(jnp.zeros((2,), dt), dt, weak_type=True)
            x.block_until_ready()
            if x.dtype != dt:
                raise TypeError(f"got dtype {x.dtype}")
            if not self.jdtypes.is_weakly_typed(x):
                raise TypeError("array is not weakly typed")
            self._weak[name] = x
        except Exception as e:  # noqa: BLE001 - recorded and reported
            msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
            self.weak_skipped[name] = f"{type(e).__name__}: {msg}"[:200]

    def weak_names(self):
        return [n for n in DTYPE_NAMES if n in self._weak]

    # -- operand grammar ----------------------------------------------------

    def build(self, s):
        """Build the Python operand denoted by the fixture string s."""
        np = self.np
        if s in DTYPE_SET:
            return np.zeros((2,), dtype=np.dtype(s))
        if s.startswith("~"):
            return self._weak[s[1:]]
        if s == "int":
            return int
        if s == "float":
            return float
        if s == "complex":
            return complex
        m = re.fullmatch(r"([a-z0-9_]+)\((.*)\)", s)
        if m and m.group(1) in DTYPE_SET:
            dt = np.dtype(m.group(1))
            v = parse_literal(m.group(2))
            arr = np.array(v, dtype=dt)
            assert arr.shape == () and arr.dtype == dt
            if isinstance(v, int) and not isinstance(v, bool):
                assert int(arr) == v, f"{s}: value out of range"
            return arr
        return parse_literal(s)

    def value_operands(self, name):
        """All DTYPE(VALUE) strings allowed for a dtype."""
        np, ml = self.np, self.ml_dtypes
        dt = np.dtype(name)
        if name == "bool":
            vals = [True, False]
        elif name.startswith(("int", "uint")):
            ii = ml.iinfo(dt)
            vals = [v for v in INT_VALUES if ii.min <= v <= ii.max]
        elif name.startswith("complex"):
            vals = COMPLEX_VALUES
        else:
            vals = FLOAT_VALUES
        return [f"{name}({v!r})" for v in vals]


def dtype_result(ctx, operands, fn):
    """Run fn(*built operands) -> (dtype, weak) and make a case dict."""
    case = {"operands": list(operands)}
    try:
        args = [ctx.build(s) for s in operands]
        dt, weak = fn(args)
        case["dtype"] = str(ctx.np.dtype(dt))
        case["weak_type"] = bool(weak)
    except Exception as e:  # noqa: BLE001 - every failure is a fixture case
        case["error"] = {"kind": type(e).__name__, "message": str(e)}
    return case


def base_header(ctx):
    return {"generator": GENERATOR, "versions": ctx.versions()}


def mode_tag(ctx):
    return f"{ctx.promotion}_{'x64' if ctx.x64 else 'x32'}"


def pair_operand_list(ctx):
    return (list(DTYPE_NAMES) + ["~" + n for n in ctx.weak_names()]
            + PY_TYPES + PAIR_LITERALS)


def skipped_note(ctx):
    return {"weak_operands_skipped": sorted(ctx.weak_skipped, key=DTYPE_NAMES.index),
            "weak_operands_skipped_reason": SKIPPED_WEAK_NOTE}


# -- random operand lists ----------------------------------------------------

def random_general_operand(ctx, rng):
    weak_common = [n for n in COMMON_DTYPES if n in ctx._weak]
    weak_exotic = [n for n in EXOTIC_DTYPES if n in ctx._weak]
    return pick(rng, [
        (30, COMMON_DTYPES),
        (12, lambda: "~" + rng.choice(weak_common)),
        (12, lambda: rng.choice(ctx.value_operands(rng.choice(COMMON_DTYPES)))),
        (8, PY_TYPES), (7, INT_LITERALS), (4, FLOAT_LITERALS), (2, COMPLEX_LITERALS),
        (2, BOOL_LITERALS), (2, EXOTIC_DTYPES),
        (1, lambda: "~" + rng.choice(weak_exotic)),
        (1, lambda: rng.choice(ctx.value_operands(rng.choice(EXOTIC_DTYPES)))),
    ])


def random_themed_operand(ctx, rng, dt):
    """An operand likely to promote with dtype dt (plus some noise)."""
    pytypes, lits = _same_or_lower_kind_scalars(dt)
    return pick(rng, [
        (10, lambda: dt),
        (5, lambda: ("~" + dt) if dt in ctx._weak else dt),
        (5, ctx.value_operands(dt)),
        (4, lambda: rng.choice(pytypes) if pytypes else dt),
        (4, lits),
        (1, lambda: random_general_operand(ctx, rng)),
    ])


def _same_or_lower_kind_scalars(dt):
    """Python types and literals of the same or a lower kind than dt (so the
    promotion is also allowed in strict mode for the common dtypes)."""
    if dt == "bool":
        return [], BOOL_LITERALS
    if dt.startswith(("int", "uint")):
        return ["int"], INT_LITERALS[:6]
    if dt.startswith("complex"):
        return PY_TYPES, INT_LITERALS[:3] + FLOAT_LITERALS + COMPLEX_LITERALS
    return ["int", "float"], INT_LITERALS[:3] + FLOAT_LITERALS


def lax_themed_operand(ctx, rng, dt):
    """An operand that jax.lax accepts together with dtype dt (lax does no
    promotion, so only same-dtype arrays and Python scalars whose default
    dtype is dt fit), plus some noise."""
    default = {
        "int": "int64" if ctx.x64 else "int32",
        "float": "float64" if ctx.x64 else "float32",
        "complex": "complex128" if ctx.x64 else "complex64",
    }
    lits = []
    if dt == "bool":
        lits = BOOL_LITERALS
    elif dt == default["int"]:
        lits = INT_LITERALS[:6]
    elif dt == default["float"]:
        lits = FLOAT_LITERALS
    elif dt == default["complex"]:
        lits = COMPLEX_LITERALS
    return pick(rng, [
        (10, lambda: dt),
        (6, lambda: ("~" + dt) if dt in ctx._weak else dt),
        (6, ctx.value_operands(dt)),
        (6 if lits else 0, lits),
        (2, lambda: random_general_operand(ctx, rng)),
    ])


def random_lists(ctx, rng, n, min_len, max_len, themed_fraction, themed=random_themed_operand):
    out = []
    for _ in range(n):
        length = rng.randint(min_len, max_len)
        if rng.random() < themed_fraction:
            # Half the themes are exotic dtypes, so those get exercised with
            # operands they can actually promote with.
            pool = EXOTIC_DTYPES if rng.random() < 0.5 else COMMON_DTYPES
            dt = rng.choice(pool)
            ops = [themed(ctx, rng, dt) for _ in range(length)]
        else:
            ops = [random_general_operand(ctx, rng) for _ in range(length)]
        out.append(ops)
    return out


# -- tasks -------------------------------------------------------------------

def task_result_type(ctx, out_dir):
    jdtypes = ctx.jdtypes
    fn = lambda args: jdtypes.result_type(*args, return_weak_type_flag=True)  # noqa: E731
    ops = pair_operand_list(ctx)
    cases = [dtype_result(ctx, [a], fn) for a in ops]
    cases += [dtype_result(ctx, [a, b], fn) for a in ops for b in ops]
    rng = random.Random(SEEDS[("result_type", ctx.promotion, ctx.x64)])
    for lst in random_lists(ctx, rng, N_RANDOM_RESULT_TYPE, 1, 6,
                            themed_fraction=0.6 if ctx.promotion == "strict" else 0.25):
        cases.append(dtype_result(ctx, lst, fn))
    header = base_header(ctx)
    header["function"] = "jax.dtypes.result_type(*args, return_weak_type_flag=True)"
    header["mode"] = {"strict": ctx.promotion == "strict", "x64": ctx.x64}
    header["notes"] = skipped_note(ctx)
    path = os.path.join(out_dir, "jax", f"result_type_{mode_tag(ctx)}.json")
    return write_fixture(path, header, cases), cases


def task_promote_types(ctx, out_dir):
    np, jnp = ctx.np, ctx.jnp
    ops = list(DTYPE_NAMES) + PY_TYPES

    def fn(args):
        return jnp.promote_types(*args), False

    def build(s):
        return {"int": int, "float": float, "complex": complex}.get(s) or np.dtype(s)

    cases = []
    for a in ops:
        for b in ops:
            case = {"operands": [a, b]}
            try:
                dt = jnp.promote_types(build(a), build(b))
                case["dtype"] = str(np.dtype(dt))
                case["weak_type"] = False
            except Exception as e:  # noqa: BLE001
                case["error"] = {"kind": type(e).__name__, "message": str(e)}
            cases.append(case)
    header = base_header(ctx)
    header["function"] = "jax.numpy.promote_types(a, b)"
    header["mode"] = {"strict": ctx.promotion == "strict", "x64": ctx.x64}
    path = os.path.join(out_dir, "jax", f"promote_types_{mode_tag(ctx)}.json")
    return write_fixture(path, header, cases), cases


def task_lax(ctx, out_dir):
    jax = ctx.jax

    # lax takes values, not types: the Python types stand for a value of that type.
    type_values = {int: 1, float: 1.0, complex: 1j}

    def fn(args):
        args = [type_values.get(a, a) if isinstance(a, type) else a for a in args]
        out = jax.eval_shape(lambda: functools.reduce(jax.lax.max, args))
        return out.dtype, out.weak_type

    ops = pair_operand_list(ctx)
    cases = [dtype_result(ctx, [a, b], fn) for a in ops for b in ops]
    rng = random.Random(SEEDS[("lax", None, ctx.x64)])
    for lst in random_lists(ctx, rng, N_RANDOM_LAX, 2, 4, themed_fraction=0.8,
                            themed=lax_themed_operand):
        cases.append(dtype_result(ctx, lst, fn))
    for c in cases:
        if "error" in c:
            c["error"]["message"] = c["error"]["message"].split(" (Tip:")[0]
    header = base_header(ctx)
    header["function"] = "jax.eval_shape(lambda: functools.reduce(jax.lax.max, args))"
    header["operand_notes"] = ("`int`, `float`, `complex` stand for the values 1, 1.0, 1j; "
                               "the ' (Tip: ...)' suffix of lax's message is dropped")
    header["mode"] = {"x64": ctx.x64}
    header["notes"] = skipped_note(ctx)
    path = os.path.join(out_dir, "jax", f"lax_{'x64' if ctx.x64 else 'x32'}.json")
    return write_fixture(path, header, cases), cases


def task_dtypes(ctx, out_dir):
    np, ml, jnp, jdtypes = ctx.np, ctx.ml_dtypes, ctx.jnp, ctx.jdtypes
    entries = []
    for name in DTYPE_NAMES:
        dt = np.dtype(name)
        if dt == np.dtype(bool):
            category = "bool"
        elif jnp.issubdtype(dt, np.unsignedinteger):
            category = "uint"
        elif jnp.issubdtype(dt, np.signedinteger):
            category = "int"
        elif jnp.issubdtype(dt, np.floating):
            category = "float"
        elif jnp.issubdtype(dt, np.complexfloating):
            category = "complex"
        else:
            raise SystemExit(f"unknown category for {name}")
        iinfo = None
        finfo = None
        has_inf = has_nan = False
        if category in ("uint", "int"):
            ii = ml.iinfo(dt)
            iinfo = {"min": int(ii.min), "max": int(ii.max)}
        if category in ("float", "complex"):
            fi = ml.finfo(dt)
            finfo = {
                "bits": int(fi.bits), "nmant": int(fi.nmant), "nexp": int(fi.nexp),
                "max": float(fi.max), "min": float(fi.min),
                "smallest_normal": float(fi.smallest_normal),
                "smallest_subnormal": float(fi.smallest_subnormal),
                "eps": float(fi.eps),
            }
            wide = np.complex128 if category == "complex" else np.float64
            inf = np.array(float("inf")).astype(dt).astype(wide)
            nan = np.array(float("nan")).astype(dt).astype(wide)
            has_inf = bool(np.isinf(inf))
            has_nan = bool(np.isnan(nan))
        entries.append({
            "name": str(dt),
            "kind": dt.kind,
            "category": category,
            "itemsize": int(dt.itemsize),
            "bits": int(jdtypes.itemsize_bits(dt)),
            "iinfo": iinfo,
            "finfo": finfo,
            "has_inf": has_inf,
            "has_nan": has_nan,
        })
    header = base_header(ctx)
    header["notes"] = {
        "kind": "numpy dtype.kind as-is ('V' for most ml_dtypes types)",
        "category": "bool/uint/int/float/complex via jnp.issubdtype (extra field)",
        "bits": "jax._src.dtypes.itemsize_bits (8 for bool: JAX's physical layout)",
        "finfo": "ml_dtypes.finfo; for complex dtypes the finfo of the component",
    }
    path = os.path.join(out_dir, "dtypes.json")
    os.makedirs(out_dir, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        head = json.dumps(header, allow_nan=False)
        f.write(head[:-1] + ', "dtypes": [\n')
        f.write(",\n".join(json.dumps(e, allow_nan=False) for e in entries))
        f.write("\n]}\n")
    with open(path, encoding="utf-8") as f:
        assert json.load(f)["dtypes"] == entries
    return path, entries


TASKS = {
    "result_type": task_result_type,
    "promote_types": task_promote_types,
    "lax": task_lax,
    "dtypes": task_dtypes,
}


def child_main(kind, out_dir):
    ctx = Ctx()
    path, items = TASKS[kind](ctx, out_dir)
    n_err = sum(1 for c in items if isinstance(c, dict) and "error" in c)
    extra = f" ({n_err} errors)" if kind != "dtypes" else ""
    skipped = f"; weak skipped: {','.join(ctx.weak_skipped)}" if kind in ("result_type", "lax") else ""
    print(f"wrote {os.path.relpath(path, REPO_ROOT)}: {len(items)} entries{extra}{skipped}",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description="Generate JAX dtype-promotion fixtures.")
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--child", choices=sorted(TASKS), help=argparse.SUPPRESS)
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    if args.child:
        child_main(args.child, out_dir)
    else:
        run_tasks(out_dir, max(1, args.jobs))


if __name__ == "__main__":
    main()
