"""jax.experimental.ode.odeint run by real JAX 0.10 on the configurations of
crates/dtype-lattice-array/tests/it/odeint.rs: the program below (examples/odeint.rs is its
Rust twin) for each system in float64 with x64 and in float32, at a few tolerances and numbers
of points, and the library-only options (`hmax`, `mxstep`, a pytree state). Writes
tests/fixtures/odeint/cases.json: per case its command line, the solution's rows and both
gradients (Python's repr(float(v)) of each element, exact), the program's stdout verbatim; and
the errors JAX raises for bad inputs; a second derivative (grad of grad).

    tools/.venv-jax/bin/python tools/gen_odeint_fixtures.py
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from fixturelib import jax_child_env, pin_xla_isa, write_fixture  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..")

# The example's program: its command line, with three flags of the library only (--hmax H,
# --mxstep M, --tree: the pendulum's state as the pytree (theta, omega) of two scalars).
PROGRAM = r'''
import sys
import jax, jax.numpy as jnp
from jax.experimental.ode import odeint

def lotka(y, t, a, b, c, d):
    return jnp.stack([a * y[0] - b * y[0] * y[1], c * y[0] * y[1] - d * y[1]])
def pendulum(y, t, g, l):
    return jnp.stack([y[1], -(g / l) * jnp.sin(y[0])])
def pendulum_tree(y, t, g, l):
    theta, omega = y
    return (omega, -(g / l) * jnp.sin(theta))
def decay(y, t, k):
    return -k * y * (1 + jnp.sin(t))

argv = sys.argv[1:]
opts = {"--dtype": "float32", "--repeat": "1"}
x64 = tree = False
while argv:
    flag = argv.pop(0)
    if flag == "--x64":
        x64 = True
    elif flag == "--tree":
        tree = True
    else:
        opts[flag] = argv.pop(0)
jax.config.update("jax_enable_x64", x64)
dtype = jnp.dtype(opts["--dtype"])
system = opts["--system"]
f = {"lotka": lotka, "pendulum": pendulum_tree if tree else pendulum, "decay": decay}[system]
y0 = jnp.asarray([float(v) for v in opts["--y0"].split(",")], dtype)
if tree:
    y0 = (y0[0], y0[1])
params = tuple(jnp.asarray(float(p), dtype) for p in opts["--params"].split(","))
ts = jnp.linspace(0., float(opts["--t1"]), int(opts["--points"]), dtype=dtype)
kw = dict(rtol=float(opts["--rtol"]), atol=float(opts["--atol"]))
if "--hmax" in opts:
    kw["hmax"] = float(opts["--hmax"])
if "--mxstep" in opts:
    kw["mxstep"] = int(opts["--mxstep"])

def solve(y0, params):
    return odeint(f, y0, ts, *params, **kw)

@jax.jit
def run(y0, params):
    ys, pullback = jax.vjp(solve, y0, params)
    return ys, pullback(jax.grad(lambda ys: sum(jnp.sum(y ** 2) for y in jax.tree.leaves(ys)))(ys))

for _ in range(int(opts["--repeat"])):
    ys, (gy0, gp) = jax.block_until_ready(run(y0, params))
if tree:
    ys, gy0 = jnp.stack(ys, axis=1), jnp.stack(gy0)
line = lambda xs: " ".join(repr(float(v)) for v in xs)
for row in ys:
    print(line(row))
print(line(gy0))
print(line(gp))
'''

# (name, the example's command line, flags of the library only).
CASES = [
    ("lotka_f64", "--system lotka --y0 10,5 --params 1.5,1,3,1 --t1 10 --points 50 --rtol 1e-6 --atol 1e-6 --dtype float64 --x64", ""),
    ("lotka_f32", "--system lotka --y0 10,5 --params 1.5,1,3,1 --t1 10 --points 50 --rtol 1e-6 --atol 1e-6 --dtype float32", ""),
    ("lotka_f64_default_tol", "--system lotka --y0 1,1 --params 0.5,0.1,0.1,0.3 --t1 5 --points 11 --rtol 1.4e-8 --atol 1.4e-8 --dtype float64 --x64", ""),
    ("pendulum_f64", "--system pendulum --y0 2.5,0 --params 9.81,1 --t1 4 --points 21 --rtol 1e-8 --atol 1e-10 --dtype float64 --x64", ""),
    ("pendulum_f32", "--system pendulum --y0 2.5,0 --params 9.81,1 --t1 4 --points 21 --rtol 1e-5 --atol 1e-6 --dtype float32", ""),
    ("decay_f64", "--system decay --y0 1,2,3 --params 0.7 --t1 3 --points 7 --rtol 1e-7 --atol 1e-9 --dtype float64 --x64", ""),
    ("decay_f32", "--system decay --y0 1,2 --params 0.5 --t1 2 --points 4 --rtol 1e-6 --atol 1e-6 --dtype float32", ""),
    ("decay_f32_x64", "--system decay --y0 1.5 --params 1.25 --t1 1 --points 3 --rtol 1e-5 --atol 1e-7 --dtype float32 --x64", ""),
    ("lotka_f64_hmax", "--system lotka --y0 10,5 --params 1.5,1,3,1 --t1 3 --points 7 --rtol 1e-6 --atol 1e-6 --dtype float64 --x64", "--hmax 0.05"),
    ("decay_f64_mxstep", "--system decay --y0 1,2 --params 0.7 --t1 3 --points 4 --rtol 1e-8 --atol 1e-10 --dtype float64 --x64", "--mxstep 5"),
    ("pendulum_f64_tree", "--system pendulum --y0 2.5,0 --params 9.81,1 --t1 2 --points 6 --rtol 1e-8 --atol 1e-10 --dtype float64 --x64", "--tree"),
    ("pendulum_f32_tree_hmax", "--system pendulum --y0 1,0.5 --params 9.81,2 --t1 2 --points 5 --rtol 1e-6 --atol 1e-6 --dtype float32", "--tree --hmax 0.1"),
]

# JAX's refusals: (name, expression, x64). `f` is decay with a parameter.
ERRORS = [
    ("int_ts", "odeint(f, jnp.ones(2), jnp.arange(3), 1.0)"),
    ("complex_ts", "odeint(f, jnp.ones(2), jnp.linspace(0., 1., 3).astype(jnp.complex64), 1.0)"),
    ("zero_dim_ts", "odeint(f, jnp.ones(2), jnp.float32(1.0), 1.0)"),
    ("int_y0", "odeint(f, jnp.ones(2, jnp.int32), jnp.linspace(0., 1., 3), 1.0)"),
    ("jvp", "jax.jvp(lambda y: odeint(f, y, jnp.linspace(0., 1., 3), 1.0), (jnp.ones(2),), (jnp.ones(2),))"),
]

ERROR_PROGRAM = r'''
import json, sys
import jax, jax.numpy as jnp
from jax.experimental.ode import odeint
f = lambda y, t, k: -k * y
try:
    eval(sys.argv[1])
    print(json.dumps(None))
except Exception as e:
    text = str(e).strip()
    print(json.dumps({"kind": type(e).__name__, "message": text.splitlines()[0].rstrip()}))
'''


# grad of grad (x64): JAX's _odeint_fwd calls the custom-VJP function itself, so the outer
# derivative of the residuals is the adjoint solve again, never the solver's loops.
SECOND_ORDER = r'''
import json
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
from jax.experimental.ode import odeint
def decay(y, t, k):
    return -k * y * (1 + jnp.sin(t))
ts = jnp.linspace(0., 1., 3)
y0 = jnp.asarray([1.0, -0.5])
def g(k):
    return jax.grad(lambda k: jnp.sum(odeint(decay, y0, ts, k, rtol=1e-10, atol=1e-12) ** 2))(k)
print(json.dumps({"k": "0.8", "value": repr(float(jax.grad(g)(jnp.float64(0.8))))}))
'''


def run(args, x64):
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args], env=jax_child_env(x64), capture_output=True,
        text=True, check=True).stdout
    return out


def main():
    pin_xla_isa()
    import jax

    cases = []
    for name, cli, extra in CASES:
        args = cli.split() + extra.split()
        x64 = "--x64" in args
        stdout = run(args, x64)
        lines = [l.split() for l in stdout.splitlines()]
        case = {"name": name, "args": cli.split(), "library": extra.split(),
                "ys": lines[:-2], "grad_y0": lines[-2], "grad_params": lines[-1],
                "stdout": stdout}
        cases.append(case)
        print(name, lines[-3], lines[-1])
    errors = []
    for name, expr in ERRORS:
        out = subprocess.run(
            [sys.executable, "-c", ERROR_PROGRAM, expr], env=jax_child_env(False),
            capture_output=True, text=True, check=True).stdout
        e = json.loads(out)
        assert e is not None, name
        errors.append({"name": name, "expr": expr, "error": e})
        print(name, e)
    second = json.loads(subprocess.run(
        [sys.executable, "-c", SECOND_ORDER], env=jax_child_env(True), capture_output=True,
        text=True, check=True).stdout)
    second["program"] = SECOND_ORDER
    print("second order", second["value"])
    path = os.path.join(ROOT, "tests", "fixtures", "odeint", "cases.json")
    header = {"generator": "tools/gen_odeint_fixtures.py",
              "versions": {"python": sys.version.split()[0], "jax": jax.__version__},
              "library": "jax", "function": "jax.experimental.ode.odeint",
              "notes": {"program": PROGRAM, "errors": errors, "second_order": second,
                        "xla_flags": os.environ.get("XLA_FLAGS", "")}}
    write_fixture(path, header, cases)


if __name__ == "__main__":
    main()
