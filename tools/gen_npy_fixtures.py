#!/usr/bin/env python3
"""Generate the .npy/.npz fixtures of the array crate's `npy` module with NumPy + ml_dtypes.

Usage:
    tools/.venv-jax/bin/python tools/gen_npy_fixtures.py [--out-dir DIR]
    tools/.venv-jax/bin/python tools/gen_npy_fixtures.py --check DIR   (load what Rust wrote)

Writes (relative to --out-dir, default <repo>/tests/fixtures/npy):
    <name>.npy     np.save of a small array per dtype: NumPy's dtypes, every ml_dtypes type
                   (np.save writes them as raw '<V1' / '<V2' bytes, float8_e5m2 as '<f1'),
                   big-endian and Fortran-order arrays (with dimensions of 1, up to 64
                   dimensions), format versions 2.0 and 3.0 (np.lib.format.write_array),
                   a 0-d and an empty array,
                   refused_<kind>.npy: dtypes the Rust reader refuses (strings, bytes,
                   datetime64, object, structured, longdouble; "refused": true, only the
                   descr recorded), and
                   named_<type>.npy: np.save(a.view([(TYPE, 'V<n>')])), the named encoding
                   (one raw field named after the ml_dtypes type: Rust's Encoding::Named)
    savez.npz, savez_compressed.npz   np.savez / np.savez_compressed of a few named arrays
    index.json     per file: "descr" (as np.save wrote it), "dtype" (the array's dtype name),
                   "shape", "hex" (its elements' bytes, little-endian, C order: what the Rust
                   array holds), "npy_hex" (the whole file, for the C-order little-endian
                   version 1.0 files whose bytes the Rust writer must reproduce); per .npz, "members"

--check DIR loads every DIR/*.npy and DIR/*.npz written by the Rust round-trip test
(`NPY_CHECK_DIR=DIR cargo test -p dtype-lattice-array --test it npy_files`) with np.load and
compares them with DIR/expected.json, viewing raw void data as the recorded ml_dtypes type.
"""

import argparse
import io
import json
import os
import sys

from fixturelib import write_fixture

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "tools/gen_npy_fixtures.py"

ML_DTYPES = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
             "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu",
             "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "int4", "uint4", "int2",
             "uint2"]


def sample(np, ml_dtypes, name):
    dt = np.dtype(getattr(ml_dtypes, name, None) or name)
    if dt.kind == "b":
        vals = [True, False, True, True, False, False]
    elif name in ("int4", "int2", "uint4", "uint2") or dt.kind in "iu":
        info = ml_dtypes.iinfo(dt) if name in ("int4", "int2", "uint4", "uint2") else np.iinfo(dt)
        vals = [0, 1, int(info.max), int(info.min), int(info.max) - 1, int(info.min) + 1]
    elif dt.kind == "c":
        vals = [0, 1 + 2j, -1.5 - 0.25j, np.inf, complex(np.nan, 1), 3e-3j]
    else:
        if name == "float8_e8m0fnu":
            vals = [1.0, 2.0, 0.5, 4.0, 1024.0, 2.0 ** -20]
        else:
            vals = [0.0, 1.5, -2.0, 0.25, -0.0, 3.0]
    return np.array(vals, dtype=dt).reshape(2, 3)


def generate(args):
    import numpy as np
    import ml_dtypes

    os.makedirs(args.out_dir, exist_ok=True)
    cases = []

    def save(fname, a, logical_dtype, version=None):
        buf = io.BytesIO()
        if version is None:
            np.save(buf, a)
        else:
            np.lib.format.write_array(buf, a, version=version)
        raw = buf.getvalue()
        with open(os.path.join(args.out_dir, fname), "wb") as f:
            f.write(raw)
        if raw[6] == 1:
            hlen, start = raw[8] | raw[9] << 8, 10
        else:
            hlen, start = int.from_bytes(raw[8:12], "little"), 12
        header = raw[start:start + hlen].decode("latin1" if raw[6] < 3 else "utf8")
        descr = eval(header)["descr"]  # noqa: S307 - np.save's own dictionary literal
        c = np.ascontiguousarray(a)
        data = c.astype(c.dtype.newbyteorder("<")) if c.dtype.byteorder == ">" else c
        if c.dtype.names:
            descr = str(descr)
        case = {"file": fname, "descr": descr, "dtype": logical_dtype, "shape": list(a.shape),
                "hex": data.tobytes().hex()}
        if a.flags.c_contiguous and a.dtype.byteorder != ">" and raw[6] == 1:
            case["npy_hex"] = raw.hex()
        cases.append(case)

    def refused(fname, a):
        # A file of a dtype the Rust reader refuses: only its descr is recorded.
        buf = io.BytesIO()
        np.save(buf, a, allow_pickle=True)
        raw = buf.getvalue()
        with open(os.path.join(args.out_dir, fname), "wb") as f:
            f.write(raw)
        hlen = raw[8] | raw[9] << 8
        descr = eval(raw[10:10 + hlen].decode("latin1"))["descr"]  # noqa: S307 - as above
        cases.append({"file": fname, "descr": str(descr), "refused": True})

    for name in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64", "complex64", "complex128"]:
        save(f"{name}.npy", sample(np, ml_dtypes, name), name)
    for name in ML_DTYPES:
        save(f"{name}.npy", sample(np, ml_dtypes, name), name)
    for name, be in [("float32", ">f4"), ("int64", ">i8"), ("uint16", ">u2"),
                     ("complex128", ">c16")]:
        save(f"big_{name}.npy", sample(np, ml_dtypes, name).astype(be), name)
    save("fortran_float32.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
         "float32")
    save("fortran_int16_3d.npy",
         np.asfortranarray(np.arange(24, dtype=np.int16).reshape(2, 3, 4)), "int16")
    # Fortran order with dimensions of 1 among the others, up to NumPy's 64 dimensions.
    save("fortran_uint8_unit_dims.npy",
         np.asfortranarray(np.arange(24, dtype=np.uint8).reshape(1, 2, 1, 3, 4, 1)), "uint8")
    save("fortran_float64_64d.npy",
         np.asfortranarray(np.arange(24, dtype=np.float64)
                           .reshape((1,) * 30 + (2,) + (1,) * 30 + (3, 4, 1))), "float64")
    # Format versions 2.0 and 3.0 (np.save picks them only for huge or non-latin-1 headers).
    save("version2_int32.npy", sample(np, ml_dtypes, "int32"), "int32", version=(2, 0))
    save("version3_float32.npy", sample(np, ml_dtypes, "float32"), "float32", version=(3, 0))
    # The named encoding (Encoding::Named in Rust): one raw field named after the dtype.
    for name in ["bfloat16", "float8_e5m2", "int4", "float4_e2m1fn"]:
        a = sample(np, ml_dtypes, name)
        width = a.dtype.itemsize
        save(f"named_{name}.npy", a.view([(name, f"V{width}")]), name)
    # Dtypes NumPy writes that the Rust reader refuses, naming the descr.
    refused("refused_str.npy", np.array(["ab", "c"]))
    refused("refused_bytes.npy", np.array([b"ab", b"c"]))
    refused("refused_datetime.npy", np.array(["2020-01-01"], "datetime64[D]"))
    refused("refused_object.npy", np.array([1, "a"], dtype=object))
    refused("refused_structured.npy", np.zeros(2, [("a", "<f4"), ("b", "<i4")]))
    refused("refused_longdouble.npy", np.zeros(2, np.longdouble))
    save("scalar_float64.npy", np.array(2.5), "float64")
    save("empty_int32.npy", np.zeros((0, 3), np.int32), "int32")

    members = {"a": np.arange(5, dtype=np.int32), "b": np.array([[1.5, -2.0]], np.float32),
               "flags": np.array([True, False]),
               "bf": np.array([1.5, -3.0], ml_dtypes.bfloat16)}
    for fname, f in [("savez.npz", np.savez), ("savez_compressed.npz", np.savez_compressed)]:
        f(os.path.join(args.out_dir, fname), **members)
        cases.append({"file": fname, "members": [
            {"name": k, "dtype": v.dtype.name, "shape": list(v.shape),
             "hex": v.tobytes().hex()} for k, v in members.items()]})

    header = {"generator": GENERATOR,
              "versions": {"python": sys.version.split()[0], "numpy": np.__version__,
                           "ml_dtypes": ml_dtypes.__version__},
              "library": "numpy", "function": "np.save / np.savez / np.savez_compressed"}
    write_fixture(os.path.join(args.out_dir, "index.json"), header, cases)
    print(f"{len(cases)} files")


def check(args):
    import numpy as np
    import ml_dtypes

    with open(os.path.join(args.check, "expected.json")) as f:
        expected = json.load(f)
    bad = 0
    for e in expected:
        path = os.path.join(args.check, e["file"])
        loaded = np.load(path)
        items = ([(m, loaded[m["name"]]) for m in e["members"]] if "members" in e
                 else [(e, loaded)])
        for m, a in items:
            dt = np.dtype(getattr(ml_dtypes, m["dtype"], None) or m["dtype"])
            if a.dtype.kind == "V":
                a = a.view(dt)
            ok = (a.dtype == dt and list(a.shape) == m["shape"]
                  and np.ascontiguousarray(a).tobytes().hex() == m["hex"])
            bad += not ok
            print(("ok  " if ok else "BAD ") + e["file"], m.get("name", ""), a.dtype, a.shape)
    print(f"{len(expected)} files checked, {bad} bad")
    sys.exit(1 if bad else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.join(REPO_ROOT, "tests", "fixtures", "npy"))
    ap.add_argument("--check", metavar="DIR")
    args = ap.parse_args()
    if args.check:
        check(args)
    else:
        generate(args)


if __name__ == "__main__":
    main()
