#!/usr/bin/env python3
"""Generate JAX per-op dtype fixtures (jnp.* and jax.lax.*) for the dtype-lattice Rust tests.

Usage:
    tools/.venv-jax/bin/python tools/gen_jax_op_fixtures.py [--out-dir DIR]

The top-level invocation re-runs this script once per mode (x64 off, x64 on) in a fresh
subprocess with JAX_ENABLE_X64 / JAX_NUMPY_DTYPE_PROMOTION=standard / JAX_PLATFORMS=cpu set,
because those flags are read when jax is imported.  See tools/jax_ops.md.

Output (relative to --out-dir, default <repo>/tests/fixtures):
    jax/op_<op>_jnp_{x32,x64}.json   for the 10 ops of tools/FIXTURES.md
    jax/op_<op>_lax_{x32,x64}.json   for the 9 ops lax has (no floor_divide)

Each case is jax.eval_shape(lambda: f(a, b)) for one ordered pair of operands; the result's
dtype and weak_type come from the output aval.  Operands are built with the operand grammar
of tools/gen_jax_fixtures.py (its Ctx.build), except that `int`, `float`, `complex` stand
for the values 0, 0.0, 0j (FIXTURES.md's op convention).
"""

import argparse
import os
import sys
import warnings

from fixturelib import jax_child_env, run_children

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_jax_op_fixtures.py"

DOC18 = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
         "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
         "int", "float", "complex"]
WEAK = ["~int32", "~float32", "~complex64", "~int64", "~float64"]
EXOTIC = ["int4", "float8_e4m3fn", "float8_e5m2"]
OPERANDS = DOC18 + WEAK + EXOTIC
# Python ints at the edges of int32 and int64 and beyond: jnp's ops raise OverflowError for a
# Python int outside the default int dtype (int32 with x64 off, int64 with x64 on).
BIG_INTS = ["2147483647", "2147483648", "-2147483648", "-2147483649", "9223372036854775807",
            "9223372036854775808", "-9223372036854775809", "18446744073709551616"]
# All ordered pairs over OPERANDS, then every pair with a BIG_INTS member, in both orders.
PAIRS = ([(a, b) for a in OPERANDS for b in OPERANDS]
         + [(a, b) for a in OPERANDS + BIG_INTS for b in BIG_INTS]
         + [(b, a) for b in BIG_INTS for a in OPERANDS])

PY_VALUES = {"int": 0, "float": 0.0, "complex": 0j}

# (fixture op name, jnp expression, lax expression or None)
OPS = [
    ("add", "jnp.add", "lax.add"),
    ("subtract", "jnp.subtract", "lax.sub"),
    ("multiply", "jnp.multiply", "lax.mul"),
    ("true_divide", "jnp.true_divide", "lax.div"),
    ("floor_divide", "jnp.floor_divide", None),
    ("power", "jnp.power", "lax.pow"),
    ("equal", "jnp.equal", "lax.eq"),
    ("less", "jnp.less", "lax.lt"),
    ("logical_and", "jnp.logical_and", "lax.bitwise_and"),
    ("bitwise_and", "jnp.bitwise_and", "lax.bitwise_and"),
]

MODES = (False, True)  # x64


# ---------------------------------------------------------------------------
# Parent process (does not import jax)
# ---------------------------------------------------------------------------

def run_modes(out_dir):
    children = []
    for x64 in MODES:
        env = jax_child_env(x64)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--out-dir", out_dir]
        children.append((f"mode x64={x64}", cmd, env))
    run_children(children, len(children))

# ---------------------------------------------------------------------------
# Child process (imports jax)
# ---------------------------------------------------------------------------

def clean_message(exc):
    """First line of str(exc), without lax's ' (Tip: ...)' suffix."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return first.split(" (Tip:")[0]


def child_main(out_dir):
    warnings.simplefilter("ignore")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_jax_fixtures as g  # Ctx (operand grammar, mode checks), write_fixture

    ctx = g.Ctx()
    if ctx.promotion != "standard":
        raise SystemExit("expected JAX_NUMPY_DTYPE_PROMOTION=standard")
    jax, jnp, np = ctx.jax, ctx.jnp, ctx.np
    lax = jax.lax
    missing = [o[1:] for o in WEAK if o[1:] not in ctx._weak]
    if missing:
        raise SystemExit(f"cannot build weak operands: {missing}")
    namespace = {"jnp": jnp, "lax": lax}
    tag = "x64" if ctx.x64 else "x32"

    def build(s):
        if s in PY_VALUES:
            return PY_VALUES[s]
        return ctx.build(s)

    def case_for(f, a, b):
        case = {"operands": [a, b]}
        try:
            x, y = build(a), build(b)
            out = jax.eval_shape(lambda: f(x, y))
            case["dtype"] = str(np.dtype(out.dtype))
            case["weak_type"] = bool(out.weak_type)
        except Exception as e:  # noqa: BLE001 - every failure is a fixture case
            case["error"] = {"kind": type(e).__name__, "message": clean_message(e)}
        return case

    for op, jnp_name, lax_name in OPS:
        for lib, expr in (("jnp", jnp_name), ("lax", lax_name)):
            if expr is None:
                continue
            f = eval(expr, namespace)  # noqa: S307 - fixed table above
            cases = [case_for(f, a, b) for a, b in PAIRS]
            header = {
                "generator": GENERATOR,
                "versions": ctx.versions(),
                "library": "jax",
                "function": f"jax.eval_shape(lambda: {expr}(a, b))",
                "op": op,
                "mode": {"x64": ctx.x64, "strict": False},
                "notes": {
                    "operands": ("DTYPE: np.zeros((2,), DTYPE); ~DTYPE: weakly typed jax.Array "
                                 "of the canonical dtype (with x64 off ~int64 is a weak int32 "
                                 "array and ~float64 a weak float32 array); int/float/complex: "
                                 "the Python values 0, 0.0, 0j"),
                    "operand_list": ("all ordered pairs over DOC18 + " + " ".join(WEAK + EXOTIC)
                                     + "; then every pair with a Python int of "
                                     + " ".join(BIG_INTS) + ", in both orders"),
                    "messages": ("error.message is the first line of str(exc), with lax's "
                                 "' (Tip: ...)' suffix dropped"),
                    "result": ("dtype and weak_type of the output aval; every result is a "
                               "jax array (also when both operands are Python scalars)"),
                },
            }
            if lib == "lax" and op == "logical_and":
                header["notes"]["lax_logical_and"] = ("lax has no logical_and; lax.bitwise_and "
                                                      "is the logical and on bool operands")
            path = os.path.join(out_dir, "jax", f"op_{op}_{lib}_{tag}.json")
            g.write_fixture(path, header, cases)
            n_err = sum(1 for c in cases if "error" in c)
            print(f"wrote {os.path.relpath(path, REPO_ROOT)}: {len(cases)} cases "
                  f"({n_err} errors)", flush=True)


def main():
    ap = argparse.ArgumentParser(description="Generate JAX per-op dtype fixtures.")
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    if args.child:
        child_main(out_dir)
    else:
        run_modes(out_dir)


if __name__ == "__main__":
    main()
