"""Element conversions (`astype`) between every pair of JAX's dtypes, asked of the real
libraries: NumPy 2 + ml_dtypes (`x.astype(dst)`) and JAX on CPU (`jax.jit(lambda x:
x.astype(dst))`, x64 on). Writes tests/fixtures/convert/<src>.json, one file per source dtype.

Run with the pinned JAX venv (it holds jax, numpy 2.4.6 and ml_dtypes 0.6.0):

    tools/.venv-jax/bin/python tools/gen_convert_fixtures.py [--out-dir tests/fixtures]

Inputs, in the storage convention of the Rust side (each element in its own little-endian
bytes, as NumPy stores them): every byte 0..=255 for the 8-bit-storage dtypes (the non-canonical
bytes of the sub-byte dtypes included: ml_dtypes reads them), every 16-bit pattern for the 16-bit
dtypes, and a fixed-seed sample with every edge for the wider ones (see `float_sample`).

For each (src, dst) pair a case records the results of

- `ml`: NumPy + ml_dtypes,
- `jax`: JAX (XLA CPU) where it differs from `ml` (`null` where JAX cannot convert the pair;
  where ml_dtypes refuses the pair, `ml_error` holds its exception and `jax` the full result;
  for sub-byte sources only the canonical inputs 0..2^bits are given to JAX),
- `exact`: where it differs from `ml`, the correctly rounded result for sources wider than
  float32 (float64, complex128, int/uint 32/64): ml_dtypes and XLA convert some of these through
  float32 and so round twice. It is still made by the libraries: the source value is first
  rounded to odd at float32 precision (float64 for integers), which with >= 2p+2 bits loses
  nothing for a p-bit target, then converted by ml_dtypes.

A result is a hex string of the destination bytes when short, else
{"crc32", "bytes", "sample": [[index, hex], ...]}. Differing results add "diff": the number of
differing elements and "first": up to 8 [index, ml hex, other hex].
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


def compare(ml, other, itemsize):
    """`other` encoded with "diff"/"first" against ml, or "same"."""
    if ml == other:
        return "same"
    n = min(len(ml), len(other)) // itemsize
    a = np.frombuffer(ml[: n * itemsize], np.uint8).reshape(n, itemsize)
    b = np.frombuffer(other[: n * itemsize], np.uint8).reshape(n, itemsize)
    diff = np.nonzero((a != b).any(axis=1))[0]
    enc = encode(other, itemsize)
    if not isinstance(enc, dict):
        enc = {"hex": enc}
    enc["diff"] = int(len(diff))
    enc["first"] = [[int(i), ml[i * itemsize:(i + 1) * itemsize].hex(),
                     other[i * itemsize:(i + 1) * itemsize].hex()] for i in diff[:8]]
    return enc


def round_to_odd(x, ft):
    """x (float64 array, or Python ints) rounded to odd at ft precision (float32 or float64):
    exact values stay, inexact ones take the neighbour with an odd last bit."""
    ut = np.uint32 if ft is np.float32 else np.uint64
    if isinstance(x, list):  # Python ints -> float64
        r = np.array([float(v) for v in x], dtype=np.float64)
        exact = np.array([int(f) == v for f, v in zip(r.tolist(), x)])
        up = np.array([v > int(f) for f, v in zip(r.tolist(), x)])
    else:
        with np.errstate(over="ignore"):
            r = x.astype(ft)
        info = np.finfo(ft)
        r = np.where(np.isinf(r) & np.isfinite(x), np.copysign(info.max, x).astype(ft), r)
        exact = (r.astype(np.float64) == x) | np.isnan(x)
        up = x > r.astype(np.float64)
    odd = (r.view(ut) & ut(1)) == 1
    fix = ~exact & ~odd
    toward = np.where(up, np.inf, -np.inf).astype(r.dtype)
    r = np.where(fix, np.nextafter(r, toward), r)
    return r


def exact_inputs(name, x):
    """The source converted so that ml_dtypes' next (float32-or-wider) rounding is exact,
    or None where ml_dtypes rounds once already."""
    if name in ("float64", "complex128"):
        if name == "complex128":
            out = np.empty(len(x), np.complex64)
            out.real = round_to_odd(x.real.copy(), np.float32)
            out.imag = round_to_odd(x.imag.copy(), np.float32)
            return out, {"f32": out, "f64": x}
        return round_to_odd(x, np.float32), {"f32": None, "f64": x}
    if name in ("int32", "uint32", "int64", "uint64"):
        f64 = round_to_odd([int(v) for v in x], np.float64)
        return round_to_odd(f64, np.float32), {"f32": None, "f64": f64, "ints": x}
    return None, None


def ml_convert(x, dst):
    try:
        return as_bytes(x.astype(dt(dst))), None
    except Exception as e:  # noqa: BLE001
        return None, f"{type(e).__name__}: {fixturelib.first_line(e)}"


def exact_convert(src, x, rto32, extra, dst):
    """The correctly rounded conversion of x to a float dst, made by the libraries."""
    if not dst.startswith(("float", "bfloat", "complex", "bcomplex")):
        return None
    if dst in ("float64", "complex128"):
        if extra.get("ints") is None:
            return None
        rne = np.array([float(int(v)) for v in extra["ints"]], dtype=np.float64)  # rounds once
        return as_bytes(rne.astype(dt(dst)))
    if dst in ("float32", "complex64"):
        if extra.get("ints") is not None:
            return as_bytes(extra["f64"].astype(np.float32).astype(dt(dst)))
        if src == "float64":
            return as_bytes(x.astype(np.float32).astype(dt(dst)))
        return None
    return as_bytes(rto32.astype(dt(dst)))


def jax_convert(x, src, dst):
    if src in NO_JAX or dst in NO_JAX:
        return None
    if src in SUB_BITS:
        x = x[: 1 << SUB_BITS[src]]
    if src == "bool":
        pass
    try:
        f = jax.jit(lambda v: v.astype(dt(dst)))
        return as_bytes(np.asarray(f(jnp.asarray(x))))
    except Exception:  # noqa: BLE001
        return None


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
        rto32, extra = exact_inputs(src, x)
        cases = []
        for dst in NAMES:
            size = dt(dst).itemsize
            ml, err = ml_convert(x, dst)
            case = {"dst": dst}
            if err is not None:
                case["ml_error"] = err
                j = jax_convert(x, src, dst)
                case["jax"] = None if j is None else encode(j, size)
                cases.append(case)
                continue
            case["ml"] = encode(ml, size)
            j = jax_convert(x, src, dst)
            case["jax"] = None if j is None else compare(ml[: len(j)], j, size)
            if rto32 is not None:
                e = exact_convert(src, x, rto32, extra, dst)
                if e is not None and src in ("float64", "complex128"):
                    # NaN: no rounding involved; keep ml_dtypes' own NaN (payload rules).
                    nan = np.isnan(x.real) if src == "float64" else (np.isnan(x.real) | np.isnan(x.imag))
                    a = np.frombuffer(e, np.uint8).reshape(len(x), size).copy()
                    a[nan] = np.frombuffer(ml, np.uint8).reshape(len(x), size)[nan]
                    e = a.tobytes()
                if e is not None:
                    c = compare(ml, e, size)
                    if c != "same":
                        case["exact"] = c
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
