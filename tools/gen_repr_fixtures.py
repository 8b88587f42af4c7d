#!/usr/bin/env python3
"""Generate the array-printing fixtures: what `repr(jax.Array)` and `repr(np.ndarray)` print.

Usage:
    tools/gen_repr_fixtures.sh                 (creates/uses tools/.venv-jax)
    tools/.venv-jax/bin/python tools/gen_repr_fixtures.py [--out-dir DIR] [--scale N] [--seed S]

--scale and --seed draw more or other random cases (a differential run against the Rust side:
write to another directory, copy over tests/fixtures/repr/, run the conformance test, restore).

The top-level invocation re-runs this script once per mode (x64 off, x64 on) in a fresh
subprocess with JAX_ENABLE_X64 / JAX_PLATFORMS=cpu set (the flags are read when jax is
imported). NumPy's default print options throughout (linewidth 75, threshold 1000,
edgeitems 3, precision 8).

Output (relative to --out-dir, default <repo>/tests/fixtures):
    repr/jax_x32.json   repr(jax.Array) with x64 off: every dtype the CPU backend holds
    repr/jax_x64.json   repr(jax.Array) with x64 on: the 64-bit dtypes (and some others)
    repr/numpy.json     repr(np.ndarray) (NumPy + ml_dtypes), every dtype NumPy holds

A case is {"dtype", "shape", "bits", "weak_type", "repr"}: "dtype" is the dtype's name
(`key<fry>` etc. for key arrays), "shape" the array's shape (for keys: the key array's shape),
"bits" the elements' bit patterns in row-major order as lower-case hex words separated by
spaces, each as wide as the element (sub-byte types: the low bits of ml_dtypes' byte;
bool: 0/1; complex: two words per element, real then imaginary; keys: the key data,
key_words uint32 words per key), "weak_type" JAX's flag, "repr" the text. Each case also
has "label" saying how its values were drawn.

The arrays are built from bit patterns (so NaN payloads, -0.0 and subnormals are exact) and
the bits recorded are read back from the array JAX holds.
"""

import argparse
import math
import os
import random
import sys
import warnings

from fixturelib import run_children, write_fixture

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_repr_fixtures.py"
MODES = (False, True)  # x64

# Shapes: weights favour small arrays; the large ones cross the wrap width (75) and the
# summarisation threshold (1000 elements).
SHAPES = [
    (6, [(), (1,), (3,), (2, 3), (1, 1, 1), (4,), (2, 2), (5,)]),
    (2, [(0,), (0, 3), (2, 0, 3), (3, 0)]),
    (3, [(8,), (12,), (20,), (2, 3, 4), (3, 1, 2), (4, 7), (1, 9), (6, 1)]),
    (1, [(30,), (50,), (6, 12), (3, 2, 2, 2), (10, 10)]),
]
LARGE_SHAPES = [(1001,), (1, 1001), (40, 26), (3, 340), (340, 3), (10, 10, 11), (2, 501),
                (7, 2, 72)]


def child(args):
    warnings.simplefilter("ignore")
    import jax
    import jax.numpy as jnp
    import ml_dtypes
    import numpy as np
    from jax import lax

    assert jax.config.jax_enable_x64 == args.x64
    versions = {"jax": jax.__version__, "jaxlib": jax.lib.__version__ if hasattr(jax.lib, "__version__") else jax.__version__,
                "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
                "python": ".".join(map(str, sys.version_info[:3]))}
    opts = np.get_printoptions()
    assert (opts["linewidth"], opts["threshold"], opts["edgeitems"], opts["precision"]) == (75, 1000, 3, 8)

    all_names = [str(np.dtype(t)) for t in jax._src.dtypes._jax_types]
    # What the CPU backend cannot hold (checked below): uint1/int1 (XLA rejects the buffers),
    # float6_* (no F6 support on CPU).
    cpu_missing = {"uint1", "int1", "float6_e2m3fn", "float6_e3m2fn"}
    x64_names = {"int64", "uint64", "float64", "complex128"}
    if args.x64:
        jax_names = [n for n in all_names if n in x64_names or n in ("float32", "int32", "bfloat16", "bool")]
    else:
        jax_names = [n for n in all_names if n not in cpu_missing and n not in x64_names]

    rng = random.Random(20240 + args.x64 + 1000 * args.seed)
    nprng = np.random.default_rng(7 + args.x64 + 1000 * args.seed)

    def storage(dt):
        """(unsigned storage dtype, significant bits) of one element (one component)."""
        dt = np.dtype(dt)
        if dt.kind == "c":
            return storage(np.dtype(f"f{dt.itemsize // 2}"))
        bits = {"uint1": 1, "int1": 1, "uint2": 2, "int2": 2, "uint4": 4, "int4": 4,
                "float4_e2m1fn": 4, "float6_e2m3fn": 6, "float6_e3m2fn": 6}.get(dt.name, dt.itemsize * 8)
        return np.dtype(f"u{dt.itemsize}"), bits

    def to_bits(arr):
        """The hex words of a NumPy array's elements (see the module docstring)."""
        arr = np.ascontiguousarray(arr)
        dt = arr.dtype
        if dt == np.bool_:
            return " ".join("1" if b else "0" for b in arr.reshape(-1))
        if dt.kind == "c":
            comp = np.dtype(f"f{dt.itemsize // 2}")
            arr = arr.reshape(-1).view(comp)
        u, bits = storage(arr.dtype)
        words = arr.reshape(-1).view(u).astype(np.uint64) & np.uint64((1 << bits) - 1)
        width = (bits + 3) // 4
        return " ".join(format(int(w), f"0{width}x") for w in words)

    def from_bits(dt, words):
        """A NumPy array of dtype dt from element bit patterns (ints; complex: pairs flat)."""
        dt = np.dtype(dt)
        if dt == np.bool_:
            return np.array([bool(w) for w in words], dtype=np.bool_)
        if dt.kind == "c":
            comp = np.dtype(f"f{dt.itemsize // 2}")
            return from_bits(comp, words).view(dt)
        u, bits = storage(dt)
        if dt.kind in "iu" or dt.name in ("int4", "uint4", "int2", "uint2", "int1", "uint1"):
            signed = ml_dtypes.iinfo(dt).min < 0
            ints = [w - (1 << bits) if signed and w >= (1 << (bits - 1)) else w for w in words]
            return np.array(ints, dtype=np.int64 if signed else np.uint64).astype(dt)
        return np.array([w & ((1 << bits) - 1) for w in words], dtype=u).view(dt)

    def round_to(dt, xs):
        """Bit patterns of float64 values xs converted to the real dtype dt."""
        a = np.array(xs, dtype=np.float64).astype(dt)
        u, bits = storage(dt)
        return [int(w) & ((1 << bits) - 1) for w in a.view(u)]

    # -- values -----------------------------------------------------------------------------

    def finfo_edges(dt):
        fi = ml_dtypes.finfo(dt)
        vals = [0.0, -0.0, 1.0, -1.0, float(fi.max), float(fi.min), float(fi.smallest_normal),
                float(fi.smallest_subnormal), -float(fi.smallest_subnormal), float(fi.eps),
                1e16, 1e-5, 1e8, 1e7, 99999999.0, 1e-4, -1e-4, 0.0001, 0.5, 0.1, 1 / 3, 2 ** -9,
                1000.0, 0.001, 1e3 + 0.5, 123456.789, 1e300, 1e-300, math.pi, 1e15, 1e17,
                float("nan"), float("inf"), float("-inf"), 65504.0, 3e38,
                # where scientific notation takes over: 10^min(8, finfo.precision), 1e-4
                1e6, 999999.94, 999.5, 11264.0, 7352.0, 2 ** -10, 0.00012207031, 1.00001e-4,
                # halfway cases of the shortest digits and of %g's six digits
                1.0000005, 2.5e-5, 0.0009765625, 1.5 * 2 ** -14, 1234567.5,
                # two shortest candidates equally near: the even one (float32, float16)
                312985.125, 312985.375, 200.25, 200.75]
        return vals

    def float_values(dt, n, label):
        """n bit patterns of the real float dtype dt drawn by `label`."""
        _, bits = storage(dt)
        if label == "bits":
            return [rng.getrandbits(bits) for _ in range(n)]
        if label == "small_ints":
            return round_to(dt, [rng.randint(-12, 12) for _ in range(n)])
        if label == "fractions":
            d = rng.choice([2, 4, 8, 10, 16])
            return round_to(dt, [rng.randint(-40, 40) / d for _ in range(n)])
        if label == "magnitude":
            k = rng.randint(-12, 20)
            return round_to(dt, [rng.uniform(-1, 1) * 10.0 ** k for _ in range(n)])
        if label == "mixed":
            return round_to(dt, [rng.uniform(-1, 1) * 10.0 ** rng.randint(-9, 18) for _ in range(n)])
        if label == "positive":
            k = rng.randint(-5, 9)
            return round_to(dt, [rng.uniform(0, 1) * 10.0 ** k for _ in range(n)])
        if label == "edges":
            edges = finfo_edges(dt)
            return round_to(dt, [rng.choice(edges) for _ in range(n)])
        if label == "edges_mixed":
            edges = finfo_edges(dt)
            vals = [rng.gauss(0, 3) for _ in range(n)]
            for _ in range(n and max(1, n // 4)):
                vals[rng.randrange(n)] = rng.choice(edges)
            return round_to(dt, vals)
        if label == "ratio":
            # around the max/min > 1000 and min < 1e-4 switches
            base = rng.choice([1.0, 0.1, 1e-4, 3.0, 7e-5, 0.25])
            f = rng.choice([999.0, 1000.0, 1000.5, 1001.0, 1000.0001, 999.9999])
            vals = [base, base * f] + [base * rng.uniform(1, f) for _ in range(max(0, n - 2))]
            rng.shuffle(vals)
            return round_to(dt, vals[:n])
        if label == "same":
            v = rng.choice(finfo_edges(dt) + [rng.uniform(-100, 100)])
            return round_to(dt, [v] * n)
        if label == "digits":
            k = rng.randint(-4, 8)
            return round_to(dt, [rng.randint(1, 10 ** 9) / 3.0 * 10.0 ** k / 1e9 for _ in range(n)])
        if label == "ramp":
            start, step = rng.uniform(-10, 10), rng.choice([0.1, 0.5, 1.0, 0.01, 7.0, 1e-3])
            return round_to(dt, [start + i * step for i in range(n)])
        raise ValueError(label)

    FLOAT_LABELS = [(4, "bits"), (3, "small_ints"), (3, "fractions"), (4, "magnitude"),
                    (3, "mixed"), (2, "positive"), (3, "edges"), (4, "edges_mixed"),
                    (2, "ratio"), (1, "same"), (3, "digits"), (1, "ramp")]

    def int_values(dt, n, label):
        info = ml_dtypes.iinfo(dt)
        lo, hi = int(info.min), int(info.max)
        _, bits = storage(dt)
        mask = (1 << bits) - 1
        if label == "uniform":
            vals = [rng.randint(lo, hi) for _ in range(n)]
        elif label == "small":
            vals = [max(lo, min(hi, rng.randint(-20, 20))) for _ in range(n)]
        elif label == "edges":
            edges = [lo, hi, 0, max(lo, -1), 1, lo + 1, hi - 1]
            vals = [rng.choice(edges) for _ in range(n)]
        elif label == "widths":
            vals = [max(lo, min(hi, rng.choice([1, -1]) * rng.randint(0, 10 ** rng.randint(0, 19))))
                    for _ in range(n)]
        elif label == "ramp":
            start = rng.randint(lo, hi)
            vals = [lo + (start - lo + i) % (hi - lo + 1) for i in range(n)]
        else:
            raise ValueError(label)
        return [v & mask for v in vals]

    INT_LABELS = [(3, "uniform"), (3, "small"), (2, "edges"), (3, "widths"), (1, "ramp")]

    def values(dt, n):
        """(label, bit patterns) of n elements of dt (complex: 2n patterns)."""
        dt = np.dtype(dt)
        if dt == np.bool_:
            p = rng.choice([0.0, 0.5, 1.0, 0.9])
            return f"bool_p{p}", [int(rng.random() < p) for _ in range(n)]
        if dt.kind in "iu" or dt.name in ("int4", "uint4", "int2", "uint2", "int1", "uint1"):
            label = pick_label(INT_LABELS)
            return label, int_values(dt, n, label)
        if dt.kind == "c":
            comp = np.dtype(f"f{dt.itemsize // 2}")
            lr, li = pick_label(FLOAT_LABELS), pick_label(FLOAT_LABELS)
            if rng.random() < 0.3:
                li = lr
            re, im = float_values(comp, n, lr), float_values(comp, n, li)
            if rng.random() < 0.15:
                im = round_to(comp, [0.0] * n)
            return f"{lr}+{li}j", [w for pair in zip(re, im) for w in pair]
        label = pick_label(FLOAT_LABELS)
        return label, float_values(dt, n, label)

    def pick_label(weighted):
        total = sum(w for w, _ in weighted)
        r = rng.random() * total
        for w, item in weighted:
            r -= w
            if r < 0:
                return item
        return weighted[-1][1]

    def pick_shape(large_ok):
        if large_ok and rng.random() < 0.03:
            return rng.choice(LARGE_SHAPES)
        return rng.choice(pick_label(SHAPES))

    # -- JAX --------------------------------------------------------------------------------

    def jax_case(dt, shape, label, words, weak):
        host = from_bits(dt, words).reshape(shape)
        arr = jax.device_put(host)
        assert arr.dtype == np.dtype(dt), (arr.dtype, dt)
        if weak:
            arr = lax_internal._convert_element_type(arr, arr.dtype, weak_type=True)
            assert arr.weak_type
        back = np.asarray(arr)
        return {"dtype": str(arr.dtype), "shape": list(arr.shape), "bits": to_bits(back),
                "weak_type": bool(arr.weak_type), "label": label, "repr": repr(arr)}

    from jax._src.lax import lax as lax_internal

    cases = []
    per_dtype = 110 if not args.x64 else 120
    for name in jax_names:
        dt = np.dtype(name)
        if args.x64 and name not in x64_names:
            count = 15
        else:
            count = per_dtype
        count *= args.scale
        for i in range(count):
            shape = pick_shape(large_ok=True)
            n = math.prod(shape)
            label, words = values(dt, n)
            weak = rng.random() < 0.15
            cases.append(jax_case(dt, shape, label, words, weak))

    # Ties: two shortest candidates equally near (NumPy takes the even digit), and values
    # whose 9th fractional digit is a final 5 (cut at precision 8, to the even digit).
    tie_sets = [[200.25, 200.75, 201.5, 150.25], [312985.125, 312985.375, 262144.625, 400000.875],
                [0.001953125, 0.005859375, 1.5], [2 ** -9, -2 ** -9, 3 * 2 ** -9]]
    for name in ("float16", "float32", "float64", "complex64", "complex128"):
        if name not in jax_names:
            continue
        dt = np.dtype(name)
        comp = np.dtype(f"f{dt.itemsize // 2}") if dt.kind == "c" else dt
        for ties in tie_sets:
            words = round_to(comp, ties)
            if dt.kind == "c":
                words = [w for pair in zip(words, reversed(words)) for w in pair]
            cases.append(jax_case(dt, (len(ties),), "ties", words, False))

    # Weak-typed arrays as JAX makes them: Python scalars and lax results.
    for v in [2.0, 3, 1j, -0.0, 1e16, 1e-5, float("nan"), float("inf"), 0.1, 2 ** 31 - 1,
              -(2 ** 31), True, 1 + 2j, 123456789.0, 1e-4]:
        for make in ("asarray", "lax_add", "full"):
            if make == "asarray":
                arr = jnp.asarray(v)
            elif make == "lax_add":
                arr = lax.add(jnp.asarray(v), v) if not isinstance(v, bool) else jnp.asarray(v)
            else:
                arr = lax.broadcast(jnp.asarray(v), (rng.choice([2, 3, 30]),))
            back = np.asarray(arr)
            cases.append({"dtype": str(arr.dtype), "shape": list(arr.shape), "bits": to_bits(back),
                          "weak_type": bool(arr.weak_type), "label": f"python_{make}:{v!r}",
                          "repr": repr(arr)})

    # Key arrays: every PRNG implementation, keys from seeds, splits and wrapped random data.
    impls = ["threefry2x32", "rbg", "unsafe_rbg", "threefry4x32", "philox2x32", "philox4x32"]
    key_shapes = [(), (1,), (3,), (2, 3), (0,), (2, 0), (1, 1, 1), (4, 2), (600,), (20, 30), (2, 2, 2)]
    for impl in impls:
        for shape in key_shapes:
            for how in ("split", "wrap"):
                if how == "split":
                    seed = rng.randint(0, 2 ** 32 - 1)
                    base = jax.random.key(seed, impl=impl)
                    keys = base if shape == () else jax.random.split(base, shape)
                else:
                    words_per_key = jax.random.key_data(jax.random.key(0, impl=impl)).shape[-1]
                    width = rng.choice([32, 32, 16, 4, 1])
                    data = nprng.integers(0, 2 ** width, size=shape + (words_per_key,), dtype=np.uint64)
                    keys = jax.random.wrap_key_data(data.astype(np.uint32), impl=impl)
                kd = np.asarray(jax.random.key_data(keys))
                cases.append({"dtype": str(keys.dtype), "shape": list(keys.shape),
                              "bits": " ".join(format(int(w), "08x") for w in kd.reshape(-1)),
                              "weak_type": False, "label": f"key_{how}", "repr": repr(keys)})

    mode = "x64" if args.x64 else "x32"
    header = {"generator": GENERATOR, "versions": versions, "library": "jax",
              "function": "repr(jax.Array)", "mode": {"x64": args.x64},
              "notes": {"dtypes": "every dtype of jax._src.dtypes._jax_types the CPU backend holds "
                        "(not uint1, int1, float6_e2m3fn, float6_e3m2fn)" if not args.x64 else
                        "the 64-bit dtypes, and a few others to check that x64 does not change them",
                        "print_options": "NumPy's defaults"}}
    path = write_fixture(os.path.join(args.out_dir, "repr", f"jax_{mode}.json"), header, cases)
    print(f"wrote {path}: {len(cases)} cases")

    if not args.x64:
        return
    # -- NumPy ------------------------------------------------------------------------------
    ncases = []
    for name in all_names + ["float64", "int64", "uint64", "complex128"]:
        dt = np.dtype(name)
        for i in range(28 * args.scale):
            shape = pick_shape(large_ok=True)
            n = math.prod(shape)
            label, words = values(dt, n)
            arr = from_bits(dt, words).reshape(shape)
            ncases.append({"dtype": str(arr.dtype), "shape": list(arr.shape), "bits": to_bits(arr),
                           "weak_type": False, "label": label, "repr": repr(arr)})
    header = {"generator": GENERATOR, "versions": versions, "library": "numpy",
              "function": "repr(np.ndarray)", "mode": {},
              "notes": {"dtypes": "every dtype of jax._src.dtypes._jax_types (NumPy and ml_dtypes)",
                        "print_options": "NumPy's defaults"}}
    path = write_fixture(os.path.join(args.out_dir, "repr", "numpy.json"), header, ncases)
    print(f"wrote {path}: {len(ncases)} cases")


def parent(args):
    children = []
    for x64 in MODES:
        env = dict(os.environ, JAX_ENABLE_X64="1" if x64 else "0", JAX_PLATFORMS="cpu")
        cmd = [sys.executable, os.path.abspath(__file__), "--child",
               "--x64" if x64 else "--no-x64", "--out-dir", args.out_dir,
               "--scale", str(args.scale), "--seed", str(args.seed)]
        children.append((f"x64={x64}", cmd, env))
    run_children(children, jobs=args.jobs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures"))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--scale", type=int, default=1,
                    help="random cases per dtype times this (for differential runs; the committed fixtures use 1)")
    ap.add_argument("--seed", type=int, default=0,
                    help="another random stream (the committed fixtures use 0)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--x64", action=argparse.BooleanOptionalAction, default=False,
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
    else:
        parent(args)


if __name__ == "__main__":
    main()
