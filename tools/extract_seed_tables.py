#!/usr/bin/env python3
"""Extract the reference promotion tables from the seed documents as JSON data.

Usage:
    python3 tools/extract_seed_tables.py [SEEDS_DIR] [--out OUT_DIR]

SEEDS_DIR defaults to ``../shared/seeds`` relative to the repository root
(the parent directory of ``tools/``); OUT_DIR defaults to
``tests/fixtures/seed_tables`` in the repository.

Writes:
  jax_doc_x64.json            the 18x18 binary promotion table of JAX's
                              "Type promotion semantics" page (seed 001), whose
                              HTML cells were flattened into runs like
                              ``b1u1u2u4...``.
  appendix_numpy.json         the five 18x18 tables in the appendix of the
  appendix_tensorflow.json    "Design of Type Promotion Semantics for JAX"
  appendix_torch.json         design note (seed 000); "-" means "no implicit
  appendix_jax_numpy.json     promotion defined".
  appendix_jax_lax.json

Each file: {"source": SEED_FILE_NAME, "types": [18 names],
            "cells": [[18 strings] x 18]}; cells[i][j] is the promotion of
types[i] (row) with types[j] (column).

Only the standard library is used.
"""

import argparse
import json
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DOC_SEED = "001_097fcb803873dc1c.txt"
APPENDIX_SEED = "000_99afad3e16a2abb3.txt"

# The only 18 tokens of the flattened documentation table.
DOC_TYPES = ["b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8",
             "bf", "f2", "f4", "f8", "c8", "c16", "i*", "f*", "c*"]

APPENDIX_TYPES = ["b", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64",
                  "bf16", "f16", "f32", "f64", "c64", "c128", "i*", "f*", "c*"]

# (output name, keyword that must appear in the table's heading line), in the
# order the tables appear in the appendix.
APPENDIX_TABLES = [
    ("numpy", "NumPy"),
    ("tensorflow", "TensorFlow"),
    ("torch", "PyTorch"),
    ("jax_numpy", "jax.numpy"),
    ("jax_lax", "jax.lax"),
]


def fail(msg):
    sys.exit(f"extract_seed_tables: {msg}")


def tokenize_flat(line, vocab):
    """Split a run of concatenated tokens, trying longer tokens first.

    Only ``c16`` is three characters long and ``c1`` is not a token, so the
    split is unambiguous; any leftover character is an error."""
    by_len = sorted(vocab, key=len, reverse=True)
    out, i = [], 0
    while i < len(line):
        for tok in by_len:
            if line.startswith(tok, i):
                out.append(tok)
                i += len(tok)
                break
        else:
            raise ValueError(f"cannot tokenize {line!r} at offset {i}: {line[i:]!r}")
    return out


def check_table(name, types, cells, expected_types):
    if types != expected_types:
        fail(f"{name}: header {types} != {expected_types}")
    if len(cells) != 18 or any(len(r) != 18 for r in cells):
        fail(f"{name}: table is not 18x18")


def extract_doc_table(seeds_dir):
    with open(os.path.join(seeds_dir, DOC_SEED), encoding="utf-8") as f:
        lines = f.read().splitlines()
    vocab = set(DOC_TYPES)
    header_idx = None
    for i, line in enumerate(lines):
        s = line.strip()
        if s and s.startswith("b1u1"):
            try:
                if tokenize_flat(s, vocab) == DOC_TYPES:
                    header_idx = i
                    break
            except ValueError:
                continue
    if header_idx is None:
        fail(f"{DOC_SEED}: header row of the binary promotion table not found")
    cells = []
    for k, t in enumerate(DOC_TYPES):
        line = lines[header_idx + 1 + k].strip()
        toks = tokenize_flat(line, vocab)
        if len(toks) != 19 or toks[0] != t:
            fail(f"{DOC_SEED}: row {k} ({t}) tokenized to {toks}")
        cells.append(toks[1:])
    check_table("jax_doc_x64", DOC_TYPES, cells, DOC_TYPES)
    for i, t in enumerate(DOC_TYPES):
        if cells[i][i] != t:
            fail(f"jax_doc_x64: diagonal cell ({t},{t}) is {cells[i][i]}")
    return {"source": DOC_SEED, "types": list(DOC_TYPES), "cells": cells}


HEADING_RE = re.compile(r"类型提升(#|:)")


def split_row(line):
    parts = [p.strip() for p in line.strip().split("|")]
    # Rows end with a trailing "|" (and the header with an empty corner cell).
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def extract_appendix_tables(seeds_dir):
    with open(os.path.join(seeds_dir, APPENDIX_SEED), encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("附录")), None)
    if start is None:
        fail(f"{APPENDIX_SEED}: appendix heading not found")
    tables = []
    heading = None
    i = start
    while i < len(lines):
        line = lines[i]
        if HEADING_RE.search(line):
            heading = line
        if split_row(line) == APPENDIX_TYPES:
            sep = lines[i + 1].strip()
            if not re.fullmatch(r"(-+\|)+", sep):
                fail(f"{APPENDIX_SEED}:{i + 2}: expected a separator row, got {sep!r}")
            cells = []
            for k, t in enumerate(APPENDIX_TYPES):
                row = split_row(lines[i + 2 + k])
                if len(row) != 19 or row[0] != t:
                    fail(f"{APPENDIX_SEED}:{i + 3 + k}: bad row for {t}: {row}")
                cells.append(row[1:])
            tables.append((heading, cells))
            i += 2 + len(APPENDIX_TYPES)
            continue
        i += 1
    if len(tables) != len(APPENDIX_TABLES):
        fail(f"{APPENDIX_SEED}: found {len(tables)} appendix tables, expected {len(APPENDIX_TABLES)}")
    out = {}
    allowed = set(APPENDIX_TYPES) | {"-"}
    for (name, keyword), (heading, cells) in zip(APPENDIX_TABLES, tables):
        if heading is None or keyword not in heading:
            fail(f"appendix table {name}: heading {heading!r} does not mention {keyword!r}")
        check_table(f"appendix_{name}", APPENDIX_TYPES, cells, APPENDIX_TYPES)
        bad = {c for row in cells for c in row} - allowed
        if bad:
            fail(f"appendix table {name}: unexpected cell values {sorted(bad)}")
        out[name] = {"source": APPENDIX_SEED, "types": list(APPENDIX_TYPES), "cells": cells}
    return out


def write_table(path, table):
    # One row per line for readable diffs.
    with open(path, "w", encoding="utf-8") as f:
        f.write("{")
        f.write(f'"source": {json.dumps(table["source"])},\n')
        f.write(f' "types": {json.dumps(table["types"])},\n')
        f.write(' "cells": [\n')
        rows = [json.dumps(r) for r in table["cells"]]
        f.write(",\n".join("  " + r for r in rows))
        f.write("\n ]}\n")
    with open(path, encoding="utf-8") as f:
        assert json.load(f) == table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seeds_dir", nargs="?",
                    default=os.path.join(REPO_ROOT, "..", "shared", "seeds"))
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "tests", "fixtures", "seed_tables"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    written = []
    path = os.path.join(args.out, "jax_doc_x64.json")
    write_table(path, extract_doc_table(args.seeds_dir))
    written.append(path)
    for name, table in extract_appendix_tables(args.seeds_dir).items():
        path = os.path.join(args.out, f"appendix_{name}.json")
        write_table(path, table)
        written.append(path)
    for p in written:
        print(f"wrote {os.path.relpath(p, REPO_ROOT)}")


if __name__ == "__main__":
    main()
