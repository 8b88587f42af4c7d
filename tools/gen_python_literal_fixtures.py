#!/usr/bin/env python3
"""Generate tests/fixtures/python_literals.json: how Python evaluates the scalar literals of
the operand grammar (what `ast.literal_eval`, the eval fixtures' reader, and `jnp.array([...])`
receive). A complex literal is arithmetic in Python: `(-1-0j)` is `-1 - 0j`, whose imaginary
part is `0.0 - 0.0 = +0.0`, although `repr(complex(-1, -0.0))` writes `(-1-0j)`.

Usage (any Python 3.11; the fixtures' versions record which):
    tools/.venv-jax/bin/python tools/gen_python_literal_fixtures.py [--out-dir DIR]

Each case: {"literal": TEXT, "type": "int" | "float" | "complex", "value": ...}: an int as its
decimal string, a float as its IEEE-754 binary64 bits, a complex as [real bits, imag bits].
"""

import argparse
import ast
import itertools
import os
import platform
import struct

from fixturelib import write_fixture

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def literals():
    reals = ["0", "-0", "1", "-1", "0.0", "-0.0", "2.5", "-2.5", "1e-40", "-1e+40", "100",
             "5e-324", "-5e-324", ".5", "-3."]
    imags = ["0", "0.0", "1", "2.5", "1e-40", "1e+40", "5e-324"]
    out = []
    out += reals
    for im in imags:
        out += [f"{im}j", f"-{im}j", f"+{im}j"]
    for re, op, im in itertools.product(reals, "+-", imags):
        out.append(f"({re}{op}{im}j)")
    return out


def case(text):
    v = ast.literal_eval(text)
    if isinstance(v, complex):
        return {"literal": text, "type": "complex", "value": [bits(v.real), bits(v.imag)]}
    if isinstance(v, float):
        return {"literal": text, "type": "float", "value": bits(v)}
    assert isinstance(v, int) and not isinstance(v, bool)
    return {"literal": text, "type": "int", "value": str(v)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    args = ap.parse_args()
    header = {
        "generator": "tools/gen_python_literal_fixtures.py",
        "versions": {"python": platform.python_version()},
        "function": "ast.literal_eval(literal)",
        "notes": "float values are binary64 bits; complex values [real bits, imag bits]",
    }
    cases = [case(t) for t in literals()]
    path = write_fixture(os.path.join(args.out_dir, "python_literals.json"), header, cases)
    print(f"wrote {os.path.relpath(path, REPO_ROOT)}: {len(cases)} cases")


if __name__ == "__main__":
    main()
