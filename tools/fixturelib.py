"""Helpers shared by the fixture generators in tools/ (standard library only, so that every
generator's venv, whatever library it pins, can import it). See FIXTURES.md for the format."""

import ast
import json
import os
import subprocess
import sys


def parse_literal(text):
    """A Python literal written as repr() prints it (inf, -inf and nan included)."""
    if text in ("inf", "-inf", "nan"):
        return float(text)
    v = ast.literal_eval(text)
    assert repr(v) == text, (text, repr(v))
    return v


def first_line(exc):
    """The first line of str(exc), as fixtures record messages."""
    text = str(exc).strip()
    return text.splitlines()[0].rstrip() if text else ""


def write_fixture(path, header, cases):
    """Writes one fixture file: the header object with "cases" appended, one case per line,
    and checks that it reads back. Returns the path."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    head = json.dumps(header, sort_keys=False, allow_nan=False)
    assert head.endswith("}")
    lines = [json.dumps(c, separators=(",", ":"), allow_nan=False) for c in cases]
    with open(path, "w", encoding="utf-8") as f:
        f.write(head[:-1] + ', "cases": [\n')
        f.write(",\n".join(lines))
        f.write("\n]}\n")
    with open(path, encoding="utf-8") as f:
        assert json.load(f)["cases"] == cases
    return path


def choice_weighted(rng, items):
    """Picks one item of [(weight, item), ...] with rng."""
    total = sum(w for w, _ in items)
    r = rng.random() * total
    for w, item in items:
        r -= w
        if r < 0:
            return item
    return items[-1][1]


def pick(rng, options):
    """Picks one of [(weight, pool), ...] by weight, then an item of it: rng.choice(pool) for
    a list, pool() for a callable (for pools that draw from rng themselves)."""
    chosen = choice_weighted(rng, options)
    return chosen() if callable(chosen) else rng.choice(chosen)


def run_children(children, jobs):
    """Runs child processes [(label, cmd, env), ...], at most `jobs` at a time, relaying their
    stdout in order; exits with an error listing the children that failed."""
    pending = list(children)
    running = []
    failed = []
    while pending or running:
        while pending and len(running) < jobs:
            label, cmd, env = pending.pop(0)
            running.append((label, subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        label, p = running.pop(0)
        out, err = p.communicate()
        sys.stdout.write(out)
        if p.returncode != 0:
            failed.append(label)
            sys.stderr.write(f"{label} failed (exit {p.returncode}):\n{err}\n")
    if failed:
        sys.exit(f"{len(failed)} child process(es) failed: {', '.join(map(str, failed))}")


# The CPU XLA compiles for, as the project models it: x86-64 with AVX2 and FMA. XLA's output
# depends on the host's instruction sets (on a CPU with AVX512-FP16 it fuses float16 multiplies
# and adds into float16 FMA instructions, elsewhere it rounds after each), so the generators
# whose cases run compiled JAX code pin it; set XLA_FLAGS yourself to override.
XLA_ISA = "--xla_cpu_max_isa=AVX2"


def pin_xla_isa():
    """Pins XLA's CPU instruction sets (XLA_ISA) for this process and its children: call it
    before importing jax."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_max_isa" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " " + XLA_ISA).strip()


def jax_child_env(x64, promotion="standard"):
    """The environment of a child process that imports JAX in one mode: x64 on or off, the
    given dtype promotion, CPU only, reproducible hashing, quiet."""
    env = dict(os.environ)
    env.update({
        "JAX_ENABLE_X64": "1" if x64 else "0",
        "JAX_NUMPY_DTYPE_PROMOTION": promotion,
        "JAX_PLATFORMS": "cpu",
        "PYTHONHASHSEED": "0",
        "PYTHONWARNINGS": "ignore",
        "TF_CPP_MIN_LOG_LEVEL": "3",
    })
    return env
