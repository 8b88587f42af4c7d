#!/usr/bin/env python3
"""Generate tests/fixtures/numpy/dtype_codes.json: what `np.dtype(code)` gives for NumPy-style
type codes (a kind letter and a size), the bit-width spellings among them included (`f16`,
`c64`), so that the dtype parser's reading of codes is checked against NumPy's.

Usage:
    tools/.venv-numpy2/bin/python tools/gen_numpy_dtype_codes.py [--out PATH]

(tools/.venv-numpy2 is the venv `tools/gen_numpy_fixtures.sh numpy2` builds from
tools/requirements-numpy2.txt.)  Each case is {"code", "dtype"} with NumPy's dtype name, or
{"code", "error": {"kind", "message"}} when NumPy refuses the code.
"""

import argparse
import os
import platform

import numpy as np

from fixturelib import write_fixture

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = "biufc"
SIZES = [1, 2, 4, 8, 16, 32, 64, 128]
EXTRA = ["bf16", "bf", "b", "i", "u", "f", "c", "?", "half", "single", "double"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "tests", "fixtures", "numpy",
                                                  "dtype_codes.json"))
    args = ap.parse_args()
    cases = []
    for code in [f"{k}{n}" for k in KINDS for n in SIZES] + EXTRA:
        case = {"code": code}
        try:
            case["dtype"] = np.dtype(code).name
        except Exception as e:  # noqa: BLE001 - a refusal is a case
            case["error"] = {"kind": type(e).__name__, "message": str(e)}
        cases.append(case)
    header = {
        "generator": "tools/gen_numpy_dtype_codes.py",
        "versions": {"numpy": np.__version__, "python": platform.python_version(),
                     "machine": platform.machine()},
        "library": "numpy",
        "function": "np.dtype(code).name",
        "notes": {"codes": "every kind letter of 'biufc' with the sizes "
                           + " ".join(map(str, SIZES)) + ", then " + " ".join(EXTRA)},
    }
    write_fixture(args.out, header, cases)
    print(f"wrote {os.path.relpath(args.out, REPO_ROOT)}: {len(cases)} cases")


if __name__ == "__main__":
    main()
