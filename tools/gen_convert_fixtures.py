"""Element conversions (`astype`) between every pair of JAX's dtypes, asked of the real
libraries: NumPy 2 + ml_dtypes (`x.astype(dst)`) and JAX on CPU (`jax.jit(lambda x:
x.astype(dst))`, x64 on). Writes tests/fixtures/convert/<src>.json, one file per source dtype.

Run with the pinned JAX venv (it holds jax, numpy 2.4.6 and ml_dtypes 0.6.0):

    tools/.venv-jax/bin/python tools/gen_convert_fixtures.py [--out-dir tests/fixtures]

Inputs, in the storage convention of the Rust side (each element in its own little-endian
bytes, as NumPy stores them): every byte 0..=255 for the 8-bit-storage dtypes (the non-canonical
bytes of the sub-byte dtypes included: ml_dtypes reads them), every 16-bit pattern for the 16-bit
dtypes, and a fixed-seed sample with every edge for the wider ones (see `float_sample`).

For each (src, dst) pair a case records the results of both semantics, each exactly as its
library produced it (nothing is computed here):

- `numpy`: NumPy + ml_dtypes' `x.astype(dst)`, every element as NumPy's x86-64 build computes
  it (C leaves a float -> integer cast of NaN or of a value out of range undefined; NumPy's
  compiled loops give x86's "integer indefinite" and its low bits, and its vectorised
  float -> uint32 loop differs from its scalar one: the whole array is converted at once, as
  here); `null` with `numpy_error` where ml_dtypes refuses the pair.
- `jax`: JAX on CPU, x64 on, `x.astype(dst)` jitted and eagerly (asserted equal); `null` with
  `jax_error` where XLA's CPU backend cannot hold the pair (uint1, float6, complex32/bcomplex32,
  int1 sources). For sub-byte sources JAX is given only the canonical inputs 0..2^bits. Stored
  as `"same"` (equal to NumPy's), `{"patch": [[index, hex], ...]}` (every element that differs
  from NumPy's result, when at most PATCH_LIMIT do), or in full; `jax_diff` counts the
  elements that differ from NumPy's result. Where NumPy's result is missing, JAX's is stored in
  full.

A result is a hex string of the destination bytes when short, else
{"crc32", "bytes", "sample": [[index, hex], ...]} (the CRC-32 of all of it).
"""

import argparse
import json
import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixturelib  # noqa: E402

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["JAX_ENABLE_X64"] = "1"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes as md  # noqa: E402

import warnings  # noqa: E402

warnings.simplefilter("ignore")

NAMES = [
    "bool", "uint1", "uint2", "uint4", "uint8", "uint16", "uint32", "uint64",
    "int1", "int2", "int4", "int8", "int16", "int32", "int64",
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e8m0fnu", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "bfloat16", "float16", "float32", "float64",
    "complex32", "bcomplex32", "complex64", "complex128",
]
SUB_BITS = {"uint1": 1, "uint2": 2, "uint4": 4, "int1": 1, "int2": 2, "int4": 4,
            "float4_e2m1fn": 4, "float6_e2m3fn": 6, "float6_e3m2fn": 6}
# Dtypes XLA's CPU backend cannot convert (or JAX does not have).
NO_JAX = {"uint1", "float6_e2m3fn", "float6_e3m2fn", "complex32", "bcomplex32"}
HEX_LIMIT = 4096  # destination bytes up to which a result is stored in full
SAMPLE = 64
PATCH_LIMIT = 64  # differing elements up to which a JAX result is stored as a patch


def dt(name):
    return np.dtype(getattr(md, name)) if hasattr(md, name) else np.dtype(name)


def float_names():
    return [n for n in NAMES if n.startswith(("float", "bfloat"))]


def finite_values(name):
    """All finite non-negative values of a <=16-bit float dtype, as float64 (ml_dtypes decodes)."""
    d = dt(name)
    bits = SUB_BITS.get(name, d.itemsize * 8)
    codes = np.arange(1 << bits, dtype=np.uint16 if d.itemsize == 2 else np.uint8)
    v = codes.view(d).astype(np.float64)
    v = v[np.isfinite(v)]
    return np.unique(np.abs(v))


def float_sample(width, rng):
    """float32 or float64 inputs: every edge of every float format (values, midpoints between
    consecutive values - the ties - and their neighbours one ulp of the source either side, the
    overflow threshold, max, min normal, subnormals), +-0, +-inf, NaN payloads, integers near the
    integer dtypes' bounds, then random bit patterns."""
    ft = np.float32 if width == 32 else np.float64
    ut = np.uint32 if width == 32 else np.uint64
    vals = []
    for name in float_names():
        if name in ("float32", "float64"):
            continue
        v = finite_values(name)
        if len(v) > 600:  # 16-bit formats: a spread of their values, all binade edges kept
            v = np.unique(np.concatenate([v[:80], v[-80:], v[:: len(v) // 300]]))
        mids = (v[1:] + v[:-1]) / 2
        top = v[-1]
        ulp_top = top - v[-2]
        extra = np.array([top + ulp_top / 2, top + ulp_top, top * 2, v[1] / 2, v[1] / 4, v[1] * 0.75])
        vals += [v, mids, extra]
    base = np.unique(np.concatenate(vals)).astype(ft)
    with np.errstate(over="ignore"):
        near = np.concatenate([base, np.nextafter(base, ft(np.inf)), np.nextafter(base, ft(0))])
    info = np.finfo(ft)
    specials = [0.0, np.inf, info.max, info.tiny, info.smallest_subnormal, info.tiny / 2,
                1.0, 0.5, 0.49999997, 0.5000001, 1.5, 2.5, 3.5, 127.5, 128.0, 255.5, 256.0,
                2.0**7, 2.0**8, 2.0**15, 2.0**16, 2.0**31, 2.0**32, 2.0**63, 2.0**64, 1e10, 1e30,
                -0.9999, 0.9999, 7.5, 8.0, 15.5, 16.0, 1.9, 2.0, 3.0, 4.0]
    sp = np.array(specials, dtype=ft)
    with np.errstate(over="ignore"):
        sp = np.concatenate([sp, np.nextafter(sp, ft(np.inf)), np.nextafter(sp, ft(0))])
    mags = np.unique(np.abs(np.concatenate([near, sp])))
    pos = np.concatenate([mags, -mags])
    nbits = width
    nan_bits = [ (ut(0x7FC00000) if width == 32 else ut(0x7FF8000000000000)),
                 (ut(0x7F800001) if width == 32 else ut(0x7FF0000000000001)),
                 (ut(0x7FA00000) if width == 32 else ut(0x7FF4000000000000)),
                 (ut(0x7FFFFFFF) if width == 32 else ut(0x7FFFFFFFFFFFFFFF)),
                 (ut(0x7FD55555) if width == 32 else ut(0x7FFD555555555555)),
                 (ut(0x7F8000FF) if width == 32 else ut(0x7FF00000000000FF))]
    nans = np.array(nan_bits, dtype=ut)
    nans = np.concatenate([nans, nans | ut(1 << (nbits - 1))]).view(ft)
    rand = rng.integers(0, 1 << nbits, size=2000, dtype=ut, endpoint=False).view(ft)
    # Random values in the minifloats' range, where most results are not saturated.
    rmid = (rng.standard_normal(2000) * np.exp2(rng.integers(-20, 20, 2000))).astype(ft)
    out = np.concatenate([pos, nans, rand, rmid]).astype(ft)
    # Unique by bits, keeping order.
    _, idx = np.unique(out.view(ut), return_index=True)
    return out[np.sort(idx)]


def int_sample(name, rng):
    d = np.dtype(name)
    info = np.iinfo(d)
    vals = set()
    for k in range(0, d.itemsize * 8 + 1):
        for base in (1 << k, -(1 << k), 3 << k, -(3 << k)):
            for off in (-2, -1, 0, 1, 2):
                vals.add(base + off)
    # ties for every float format: 2^k * (1 + (2j+1)/2^(m+1)) and neighbours
    for m in (0, 1, 2, 3, 4, 7, 10, 23):
        for k in range(m + 1, d.itemsize * 8):
            step = 1 << (k - m - 1)
            for j in (1, 3):
                t = (1 << k) + j * step
                for off in (-1, 0, 1):
                    vals.add(t + off)
                    vals.add(-(t + off))
    vals |= {info.min, info.max, info.min + 1, info.max - 1}
    vals = [v for v in vals if info.min <= v <= info.max]
    vals.sort()
    rnd = rng.integers(info.min, info.max, size=1500, dtype=d, endpoint=True)
    return np.concatenate([np.array(vals, dtype=d), rnd])


def complex_sample(name, rng):
    comp = {"complex32": "float16", "bcomplex32": "bfloat16", "complex64": "float32",
            "complex128": "float64"}[name]
    width = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}[comp]
    if width == 16:
        bits = np.arange(1 << 16, dtype=np.uint16)
        re = rng.permutation(bits)[:3000]
        im = rng.permutation(bits)[:3000]
        im[::2] = 0
        v = np.empty(6000, dtype=np.uint16)
        v[0::2], v[1::2] = re, im
        return v.view(dt(name))
    f = float_sample(width, rng)
    f = f[rng.permutation(len(f))[:3000]]
    g = f[rng.permutation(len(f))]
    g[::2] = 0
    out = np.empty(len(f), dtype=dt(name))
    out.real, out.imag = f, g
    return out


def inputs(name, rng):
    d = dt(name)
    if name == "bool":
        return np.array([0, 1], dtype=np.uint8).view(d), "exhaustive"
    if d.itemsize == 1:
        return np.arange(256, dtype=np.uint8).view(d), "exhaustive"
    if d.itemsize == 2 and name not in ("complex32", "bcomplex32"):
        return np.arange(1 << 16, dtype=np.uint16).view(d), "exhaustive"
    if name in ("float32", "float64"):
        return float_sample(d.itemsize * 8, rng), "sample"
    if name.startswith(("complex", "bcomplex")):
        return complex_sample(name, rng), "sample"
    return int_sample(name, rng), "sample"


def as_bytes(a):
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def encode(raw, itemsize):
    if len(raw) <= HEX_LIMIT:
        return raw.hex()
    n = len(raw) // itemsize
    step = max(1, n // SAMPLE)
    sample = [[i, raw[i * itemsize:(i + 1) * itemsize].hex()] for i in range(0, n, step)]
    return {"crc32": zlib.crc32(raw), "bytes": len(raw), "sample": sample}


def ml_convert(x, dst):
    try:
        return as_bytes(x.astype(dt(dst))), None
    except Exception as e:  # noqa: BLE001
        return None, f"{type(e).__name__}: {fixturelib.first_line(e)}"


def jax_convert(x, src, dst):
    """JAX's result (jitted and eager, which must agree), or (None, reason)."""
    if src in NO_JAX or dst in NO_JAX:
        return None, "no such dtype on XLA's CPU backend"
    if src in SUB_BITS:
        x = x[: 1 << SUB_BITS[src]]
    try:
        f = jax.jit(lambda v: v.astype(dt(dst)))
        jit = as_bytes(np.asarray(f(jnp.asarray(x))))
        eager = as_bytes(np.asarray(jnp.asarray(x).astype(dt(dst))))
    except Exception as e:  # noqa: BLE001
        return None, f"{type(e).__name__}: {fixturelib.first_line(e)}"
    assert jit == eager, (src, dst)
    return jit, None


def patch(ml, other, itemsize):
    """`other` against `ml` (the prefix of the same length): "same", the list of differing
    elements when there are at most PATCH_LIMIT, else `other` in full."""
    n = len(other) // itemsize
    a = np.frombuffer(ml[: n * itemsize], np.uint8).reshape(n, itemsize)
    b = np.frombuffer(other, np.uint8).reshape(n, itemsize)
    diff = np.nonzero((a != b).any(axis=1))[0]
    if len(diff) == 0:
        return "same", 0
    if len(diff) <= PATCH_LIMIT:
        return {"patch": [[int(i), other[i * itemsize:(i + 1) * itemsize].hex()] for i in diff]}, len(diff)
    enc = encode(other, itemsize)
    if not isinstance(enc, dict):
        enc = {"hex": enc}
    return enc, len(diff)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures"))
    ap.add_argument("--only", nargs="*", help="source dtypes to write (default: all)")
    args = ap.parse_args()
    versions = {"numpy": np.__version__, "ml_dtypes": md.__version__, "jax": jax.__version__,
                "jaxlib": jax.lib.__version__ if hasattr(jax.lib, "__version__") else None,
                "python": sys.version.split()[0]}
    assert jax.config.jax_enable_x64
    total = 0
    for si, src in enumerate(NAMES):
        if args.only and src not in args.only:
            continue
        rng = np.random.default_rng(20260 + si)
        x, kind = inputs(src, rng)
        cases = []
        for dst in NAMES:
            size = dt(dst).itemsize
            ml, err = ml_convert(x, dst)
            j, jerr = jax_convert(x, src, dst)
            case = {"dst": dst}
            if err is not None:
                case["numpy"] = None
                case["numpy_error"] = err
            else:
                case["numpy"] = encode(ml, size)
            if j is None:
                case["jax"] = None
                case["jax_error"] = jerr
            elif err is not None:
                case["jax"] = encode(j, size)
                if err is None:
                    case["jax_diff"] = patch(ml, j, size)[1]
            else:
                case["jax"], case["jax_diff"] = patch(ml, j, size)
            cases.append(case)
            total += len(x)
        header = {
            "generator": "tools/gen_convert_fixtures.py",
            "versions": versions,
            "src": src,
            "inputs_kind": kind,
            "count": len(x),
            "inputs": as_bytes(x).hex(),
        }
        path = os.path.join(args.out_dir, "convert", f"{src}.json")
        fixturelib.write_fixture(path, header, cases)
        print(f"{src}: {len(x)} inputs x {len(cases)} dsts -> {path} ({os.path.getsize(path)} bytes)")
    print(f"{total} conversions")


if __name__ == "__main__":
    main()
