#!/usr/bin/env python3
"""Generate the conformance fixtures of `dtype-lattice eval`: jax.numpy functions (JAX 0.10,
x64 off and on) and NumPy 2 + ml_dtypes functions (`--rules numpy`), evaluated on random
operands written in eval's operand grammar.

Usage:
    tools/gen_eval_fixtures.sh [--out-dir DIR] [--seed N]

The top-level invocation runs one child process per mode (jax with x64 off, jax with x64 on,
numpy), because JAX reads JAX_ENABLE_X64 when it is imported.

Output (relative to --out-dir, default <repo>/tests/fixtures):
    eval/<mode>_<group>.json   mode: jax_x32, jax_x64, numpy; group: binary, unary, reduce, other

Each case is one `eval --batch` line and what the command must write for it: the result
({"dtype", "weak_type", "shape", "values", "bits"}) or the error ({"kind", "message"}).
Operand grammar (see README "Arrays"):
    DTYPE[v,...]    jnp.array([v, ...], dtype=DTYPE)   (nested brackets: more dimensions)
    ~DTYPE[v,...]   the same, weakly typed (lax's _convert_element_type(..., weak_type=True))
    DTYPE(v)        jnp.array(v, dtype=DTYPE), a 0-d array
    v               a Python scalar (weakly typed in JAX)
Under numpy, np.array replaces jnp.array and there are no weak arrays.
"""

import argparse
import math
import os
import random
import sys
import warnings

from fixturelib import jax_child_env, run_children, write_fixture

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_eval_fixtures.py"

BINARY = ["add", "subtract", "multiply", "true_divide", "divide", "floor_divide", "remainder",
          "power", "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
          "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
          "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "arctan2"]
UNARY = ["negative", "positive", "abs", "sign", "floor", "ceil", "round", "trunc", "sqrt",
         "square", "reciprocal", "exp", "exp2", "expm1", "log", "log2", "log1p", "sin", "cos",
         "tan", "tanh", "arcsin", "arctan", "sinh", "cosh", "isnan", "isinf", "isfinite",
         "logical_not", "invert"]
REDUCE = ["sum", "prod", "max", "min", "mean", "argmax", "argmin", "all", "any", "cumsum"]
OTHER = ["where", "matmul", "astype"]
# Functions with keyword arguments (`sort:axis=0,descending=True`); last, so that adding it
# left the other groups' random streams (and files) as they were.
INDEXING = ["sort", "argsort", "cumsum", "take"]
GROUPS = {"binary": BINARY, "unary": UNARY, "reduce": REDUCE, "other": OTHER,
          "indexing": INDEXING}

# Functions whose float results are compared within 2 ULP (XLA's approximations), the rest
# bit for bit (tests/it/eval_conformance.rs reads this list from the fixture header).
APPROXIMATE = ["power", "arctan2", "exp", "exp2", "expm1", "log", "log2", "log1p", "sin", "cos",
               "tan", "tanh", "arcsin", "arctan", "sinh", "cosh", "true_divide", "divide",
               "floor_divide", "remainder", "reciprocal", "sum", "prod", "mean", "cumsum",
               "matmul"]

INTS = ["int2", "int4", "int8", "int16", "int32", "int64"]
UINTS = ["uint2", "uint4", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float4_e2m1fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
          "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float16",
          "bfloat16", "float32", "float64"]
FLOAT6 = ["float6_e2m3fn", "float6_e3m2fn"]
COMPLEX = ["complex64", "complex128"]
JAX_DTYPES = ["bool"] + INTS + UINTS + FLOATS + COMPLEX
NUMPY_DTYPES = JAX_DTYPES + FLOAT6
COMMON = ["bool", "int8", "int32", "uint8", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "float8_e4m3fn", "int4"]
SHAPES = [(), (1,), (3,), (2, 3), (1, 3), (2, 1), (0,)]

STANDARD = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "complex64", "complex128"}

MODES = ["jax_x32", "jax_x64", "numpy"]
CASES_PER = {"jax_x32": 5, "jax_x64": 3, "numpy": 3}


# ---------------------------------------------------------------------------
# Parent process
# ---------------------------------------------------------------------------

def run_modes(out_dir, seed, only=None):
    children = []
    for mode in MODES:
        env = jax_child_env(mode == "jax_x64")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, "--out-dir", out_dir,
               "--seed", str(seed)] + [a for g in (only or []) for a in ("--only", g)]
        children.append((mode, cmd, env))
    run_children(children, 1)


# ---------------------------------------------------------------------------
# Child process
# ---------------------------------------------------------------------------

def clean_message(exc):
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return first.split(" (Tip:")[0]


def public_class(exc):
    """The exception's class, or its nearest public base (NumPy raises private subclasses
    such as _UFuncNoLoopError of TypeError)."""
    for cls in type(exc).__mro__:
        if not cls.__name__.startswith("_"):
            return cls.__name__
    return type(exc).__name__


class Child:
    def __init__(self, mode, seed):
        import ml_dtypes
        import numpy as np
        self.mode = mode
        self.np = np
        self.ml = ml_dtypes
        self.rng = random.Random(f"{seed}-{mode}")
        if mode.startswith("jax"):
            import jax
            import jax.numpy as jnp
            from jax._src.lax import lax as lax_internal
            self.jax, self.jnp, self.lax_internal = jax, jnp, lax_internal
            self.x64 = bool(jax.config.jax_enable_x64)
            assert self.x64 == (mode == "jax_x64")
            self.dtypes = [d for d in JAX_DTYPES if hasattr(jnp, d)]
            self.weak = (["int64", "float64", "complex128"] if self.x64
                         else ["int32", "float32", "complex64"])
        else:
            self.dtypes = NUMPY_DTYPES
            self.weak = []

    def versions(self):
        import platform
        v = {"numpy": self.np.__version__, "ml_dtypes": self.ml.__version__,
             "python": platform.python_version()}
        if self.mode.startswith("jax"):
            import jaxlib
            v["jax"] = self.jax.__version__
            v["jaxlib"] = jaxlib.__version__
        return v

    def npdtype(self, name):
        if name in STANDARD:
            return self.np.dtype(name)
        return self.np.dtype(getattr(self.ml, name))

    # -- values -------------------------------------------------------------

    def value(self, dt):
        """A random Python literal (text) for an element of dtype dt."""
        rng = self.rng
        if dt == "bool":
            return rng.choice(["True", "False"])
        if dt in INTS or dt in UINTS:
            info = self.ml.iinfo(self.npdtype(dt))
            lo, hi = int(info.min), int(info.max)
            r = rng.random()
            if r < 0.25:
                v = rng.choice([lo, hi, 0, 1, min(hi, 2), max(lo, -1)])
            elif r < 0.27:
                v = rng.choice([hi + 1, lo - 1])  # out of range: an error case
            else:
                span = min(hi, 100) - max(lo, -100)
                v = max(lo, -100) + rng.randint(0, span)
            return str(v)
        if dt in COMPLEX:
            return repr(complex(self.finite_float(), self.finite_float()))
        return self.float_text(dt)

    def finite_float(self):
        rng = self.rng
        return rng.choice([0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.0, 1e-3, 100.0,
                           round(rng.uniform(-4, 4), 3), round(rng.uniform(-4, 4), 3)])

    def float_text(self, dt):
        rng = self.rng
        r = rng.random()
        if r < 0.3:
            fi = self.ml.finfo(self.npdtype(dt))
            special = [float(fi.max), -float(fi.max), float(fi.smallest_normal),
                       float(fi.smallest_subnormal), math.inf, -math.inf, math.nan, 0.0, -0.0,
                       1e40, -1e40, 1e-40]
            v = rng.choice(special)
        else:
            v = self.finite_float() if rng.random() < 0.5 else rng.uniform(-10, 10)
            if rng.random() < 0.5:
                v = round(v, 2)
        return float_literal(v)

    # -- operands -----------------------------------------------------------

    def array_text(self, dt, shape, values=None):
        def nest(dims):
            if not dims:
                return self.value(dt) if values is None else values()
            return "[" + ",".join(nest(dims[1:]) for _ in range(dims[0])) + "]"
        if shape == ():
            return f"{dt}({nest(())})"
        return dt + nest(list(shape))

    def operand(self, dt, shape, kind=None):
        """Operand text: an array of dt (strong, weak or 0-d) or a Python scalar."""
        rng = self.rng
        kind = kind or rng.choices(["array", "weak", "scalar"], [70, 10, 20])[0]
        if kind == "scalar":
            pk = "bool" if dt == "bool" else "int64" if dt in INTS + UINTS else \
                "complex128" if dt in COMPLEX else "float64"
            if pk == "int64":
                return str(rng.choice([0, 1, 2, -3, 7, 300, 2**31, -(2**40)]))
            return self.value(pk)
        if kind == "weak" and self.weak:
            kinds = {"int": self.weak[0], "float": self.weak[1], "complex": self.weak[2]}
            wk = "int" if dt in INTS + UINTS + ["bool"] else "complex" if dt in COMPLEX \
                else "float"
            return "~" + self.array_text(kinds[wk], shape) if shape != () else \
                "~" + self.array_text(kinds[wk], (1,))
        return self.array_text(dt, shape)

    def build(self, text):
        np = self.np
        if text.startswith("~"):
            x = self.build(text[1:])
            return self.lax_internal._convert_element_type(x, x.dtype, weak_type=True)
        if text[0].isalpha() and ("[" in text or "(" in text) and text not in ("nan", "inf"):
            i = min(k for k in (text.find("["), text.find("(")) if k >= 0)
            dt, rest = text[:i], text[i:]
            if rest.startswith("("):
                val = parse_value(rest[1:-1])
            else:
                val = parse_nested(rest)
            if self.mode.startswith("jax"):
                return self.jnp.array(val, dtype=self.npdtype(dt))
            return np.array(val, dtype=self.npdtype(dt))
        return parse_value(text)

    # -- functions ----------------------------------------------------------

    def function(self, name):
        if ":" in name and not name.startswith("astype:"):
            base, kw = name.split(":", 1)
            f = self.function(base)
            kwargs = {}
            for pair in kw.split(","):
                key, value = pair.split("=", 1)
                kwargs[key] = self.keyword_value(key, value)
            return lambda *a: f(*a, **kwargs)
        if self.mode.startswith("jax"):
            m = self.jnp
            if name.startswith("astype:"):
                dt = self.npdtype(name.split(":", 1)[1])
                return lambda x: m.astype(x, dt)
            return getattr(m, name)
        np = self.np
        if name.startswith("astype:"):
            dt = self.npdtype(name.split(":", 1)[1])
            return lambda x: np.asarray(x).astype(dt)
        return getattr(np, name)

    def keyword_value(self, key, value):
        """A keyword argument written as eval reads it: a Python literal, a dtype name or a
        bare string."""
        if key == "dtype" and value != "None":
            return self.npdtype(value)
        try:
            return parse_value(value)
        except (ValueError, SyntaxError):
            return value

    def indexing_line(self, fname, dt):
        """One line of the keyword group: ties, NaNs and signed zeros come from value()."""
        rng = self.rng
        numpy = self.mode == "numpy"
        shape = rng.choice([(5,), (2, 3), (3, 2), (0,), (2, 2, 2), (1,), ()])
        x = self.array_text(dt, shape)
        if numpy and fname in ("sort", "argsort") and dt not in STANDARD and dt in FLOATS:
            # ml_dtypes' comparison holds NaN equal to every number (no strict weak order),
            # so NumPy's stable sort leaves an order that depends on its merge steps: the
            # NumPy lines sort numbers only (e8m0fnu has no negative ones).
            # Numbers every format holds (e8m0fnu: powers of two only).
            values = [0.5, 1.0, 2.0, 0.25, 4.0] if dt == "float8_e8m0fnu" else \
                [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.0, 0.25, -2.0, 1.5]
            x = self.array_text(dt, shape, lambda: float_literal(rng.choice(values)))
        axis = rng.choices([None, "absent", -1, 0, 1, 3], [2, 3, 2, 2, 2, 1])[0]
        kw = [] if axis == "absent" else [f"axis={axis}"]
        if fname in ("sort", "argsort"):
            # NumPy's default kind is an unstable introsort: its lines ask for stable.
            stable = "True" if numpy else rng.choice(["absent", "True", "False"])
            if stable != "absent":
                kw.append(f"stable={stable}")
            if rng.random() < (0.1 if numpy else 0.4):
                kw.append("descending=True")
        elif fname == "cumsum":
            if rng.random() < 0.3:
                kw.append(f"dtype={rng.choice(['int8', 'int32', 'float32', 'bool', 'uint16'])}")
        elif fname == "take":
            modes = ["raise", "wrap", "clip"] if numpy else ["fill", "clip", "wrap", "fill",
                                                            "clip", "wrap", "drop"]
            if rng.random() < 0.8:
                kw.append(f"mode={rng.choice(modes)}")
            n = max(1, max(shape, default=1))
            ishape = rng.choice([(3,), (2, 2), (), (0,)])
            values = lambda: str(rng.choice([0, 1, -1, n - 1, n, -n, -n - 1, 2 * n]))
            idt = rng.choice(["int32", "int64", "uint8", "int8"]) if rng.random() < 0.9 \
                else "float32"
            if idt.startswith("u"):
                values = lambda: str(rng.choice([0, 1, n - 1, n, 2 * n]))
            if idt == "float32":
                values = lambda: "1.0"
            x = f"{x} {self.array_text(idt, ishape, values)}"
        name = fname + (":" + ",".join(kw) if kw else "")
        return f"{name} {x}"

    def evaluate(self, line):
        parts = split_line(line)
        f = self.function(parts[0])
        try:
            args = [self.build(p) for p in parts[1:]]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = f(*args)
                if self.mode.startswith("jax"):
                    out.block_until_ready()
            return {"line": line, "out": self.encode(out)}
        except Exception as e:  # noqa: BLE001 - every failure is a fixture case
            return {"line": line, "error": {"kind": public_class(e),
                                            "message": clean_message(e)}}

    def encode(self, out):
        np = self.np
        weak = False
        if self.mode.startswith("jax"):
            weak = bool(self.jax._src.dtypes.is_weakly_typed(out))
        a = np.asarray(out)
        name = str(a.dtype)
        flat = a.reshape(-1)
        res = {"dtype": name, "weak_type": weak, "shape": list(a.shape)}
        if a.dtype.kind == "c":
            res["values"] = [[json_float(float(z.real)), json_float(float(z.imag))] for z in flat]
            width = a.dtype.itemsize // 2
            ut = {4: np.uint32, 8: np.uint64}[width]
            parts = flat.view(ut).reshape(-1, 2) if flat.size else []
            res["bits"] = [[int(p[0]), int(p[1])] for p in parts]
        elif a.dtype.kind == "b":
            res["values"] = [bool(v) for v in flat]
        elif a.dtype.kind in "iu" or name in ("int2", "int4", "uint2", "uint4"):
            res["values"] = [int(v) for v in flat]
        else:
            res["values"] = [json_float(float(v)) for v in flat]
            ut = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
            res["bits"] = [int(b) for b in flat.view(ut)]
        return res

    # -- cases --------------------------------------------------------------

    def lines_for(self, fname, n):
        rng = self.rng
        lines = []
        for dt in self.dtypes:
            for _ in range(n):
                lines.append(self.line(fname, dt))
        # A few cases mixing every pair of common dtypes for the binary functions.
        if fname in ("add", "multiply", "true_divide", "maximum", "equal", "where"):
            for _ in range(n * 4):
                a, b = rng.choice(COMMON), rng.choice(COMMON)
                lines.append(self.line(fname, a, other=b))
        return lines

    def line(self, fname, dt, other=None):
        rng = self.rng
        if fname in INDEXING and self.group == "indexing":
            return self.indexing_line(fname, dt)
        shape = rng.choice(SHAPES)
        if fname in BINARY:
            s2 = rng.choice([shape, shape[-1:], (), (2, 1) if shape == (1, 3) else shape])
            if rng.random() < 0.05:
                s2 = (4,)  # does not broadcast with most
            ops = [self.operand(dt, shape), self.operand(other or dt, s2)]
            if rng.random() < 0.5:
                ops.reverse()
            return " ".join([fname] + ops)
        if fname in UNARY or fname in REDUCE:
            return f"{fname} {self.operand(dt, shape, rng.choices(['array', 'scalar'], [9, 1])[0])}"
        if fname == "where":
            c = self.operand("bool", rng.choice([shape, ()]), "array")
            return f"where {c} {self.operand(dt, shape)} {self.operand(other or dt, shape[-1:])}"
        if fname == "matmul":
            n, k, m = rng.randint(1, 3), rng.randint(0, 3), rng.randint(1, 3)
            sa = rng.choice([(n, k), (k,), (2, n, k)])
            sb = rng.choice([(k, m), (k,), (k + (rng.random() < 0.1), m)])
            return f"matmul {self.array_text(dt, sa)} {self.array_text(other or dt, sb)}"
        if fname == "astype":
            target = rng.choice(self.dtypes)
            return f"astype:{target} {self.operand(dt, shape, rng.choices(['array', 'scalar'], [9, 1])[0])}"
        raise ValueError(fname)


def float_literal(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


def json_float(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def parse_value(text):
    if text in ("nan", "inf", "-inf"):
        return float(text)
    import ast
    return ast.literal_eval(text)


def parse_nested(text):
    """[1,[2,nan]] -> nested lists of Python values."""
    import re
    tokens = re.findall(r"\[|\]|,|[^\[\],]+", text)
    stack = [[]]
    for t in tokens:
        if t == "[":
            stack.append([])
        elif t == "]":
            done = stack.pop()
            stack[-1].append(done)
        elif t != ",":
            stack[-1].append(parse_value(t))
    return stack[0][0]


def split_line(line):
    """Whitespace outside brackets and parentheses separates operands."""
    parts, depth, cur = [], 0, ""
    for ch in line:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch.isspace() and depth == 0:
            if cur:
                parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        parts.append(cur)
    return parts


def child_main(mode, out_dir, seed, only=None):
    warnings.simplefilter("ignore")
    c = Child(mode, seed)
    n = CASES_PER[mode]
    for group, fnames in GROUPS.items():
        c.group = group
        cases = []
        for fname in fnames:
            for line in c.lines_for(fname, n):
                if not only or group in only:
                    cases.append(c.evaluate(line))
        if only and group not in only:
            continue
        header = {
            "generator": GENERATOR,
            "versions": c.versions(),
            "mode": {"rules": "numpy" if mode == "numpy" else "jax",
                     "x64": mode == "jax_x64" or mode == "numpy"},
            "approximate": APPROXIMATE,
            "notes": ("one `eval --batch` line per case and the JSON object eval writes for it; "
                      "error.kind is the exception's class (its nearest public base class for "
                      "NumPy's private ones), error.message the first line of str(exc) without "
                      "lax's ' (Tip: ...)' suffix"),
        }
        path = os.path.join(out_dir, "eval", f"{mode}_{group}.json")
        write_fixture(path, header, cases)
        n_err = sum(1 for x in cases if "error" in x)
        print(f"wrote {os.path.relpath(path, REPO_ROOT)}: {len(cases)} cases ({n_err} errors)",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description="Generate eval's conformance fixtures.")
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--only", action="append", choices=list(GROUPS),
                    help="write only these groups (the others' lines are still drawn, so "
                         "that every group's random stream is as in a full run)")
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    if args.child:
        child_main(args.child, out_dir, args.seed, args.only)
    else:
        run_modes(out_dir, args.seed, args.only)


if __name__ == "__main__":
    main()
