#!/usr/bin/env python3
"""Generate tests/fixtures/eval/jax_{x32,x64}_probes.json: chosen `eval` lines that pin down
how XLA's CPU backend computes where the random cases of gen_eval_fixtures.py only brushed
it (per-operation subnormal handling, the algebraic simplifier's rewrites, narrow shifts,
jit's argument parsing). Same format, header and comparison as the other eval fixtures, so
tests/eval_conformance.rs checks them too; the lines are data below, grouped by what they
probe, and are evaluated in order in one process per mode (jit's caches carry over from line
to line, as in gen_eval_fixtures.py).

Usage (tools/.venv-jax: jax 0.10.2, numpy 2.4.6, ml_dtypes 0.6.0):
    tools/.venv-jax/bin/python tools/gen_eval_probe_fixtures.py [--out-dir DIR]
"""

import argparse
import os
import sys
import warnings

from fixturelib import run_children, write_fixture

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

PROBES = {
    "jax_x32": [BOOL_ARITH],
    "jax_x64": [BOOL_ARITH],
}


def lines_of(blocks):
    return [l.strip() for b in blocks for l in b.strip().splitlines() if l.strip()]


def child_main(mode, out_dir):
    warnings.simplefilter("ignore")
    c = gen.Child(mode, 0)
    cases = [c.evaluate(line) for line in lines_of(PROBES[mode])]
    header = {
        "generator": GENERATOR,
        "versions": c.versions(),
        "mode": {"rules": "jax", "x64": mode == "jax_x64"},
        "approximate": gen.APPROXIMATE,
        "notes": ("chosen `eval --batch` lines (see the generator) and the JSON object eval "
                  "writes for each; as in gen_eval_fixtures.py"),
    }
    path = os.path.join(out_dir, "eval", f"{mode}_probes.json")
    write_fixture(path, header, cases)
    print(f"wrote {os.path.relpath(path, REPO_ROOT)}: {len(cases)} cases", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--child", choices=sorted(PROBES), help=argparse.SUPPRESS)
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    if args.child:
        child_main(args.child, out_dir)
        return
    children = []
    for mode in sorted(PROBES):
        env = dict(os.environ)
        env.update({
            "JAX_ENABLE_X64": "1" if mode == "jax_x64" else "0",
            "JAX_NUMPY_DTYPE_PROMOTION": "standard",
            "JAX_PLATFORMS": "cpu",
            "PYTHONHASHSEED": "0",
            "PYTHONWARNINGS": "ignore",
            "TF_CPP_MIN_LOG_LEVEL": "3",
        })
        cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, "--out-dir", out_dir]
        children.append((mode, cmd, env))
    run_children(children, 1)


if __name__ == "__main__":
    main()
