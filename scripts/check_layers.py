#!/usr/bin/env python3
"""Checks that every #include of a product file runs down the layers of docs/architecture.md:
a file may include files of its own layer and of the layers below it, never above.

    python3 scripts/check_layers.py            # exit 1 naming each include that runs up
    python3 scripts/check_layers.py --table    # the layer table, top first, as docs/architecture.md has it
    python3 scripts/check_layers.py --doc docs/architecture.md   # also: the doc's table is this one

A file's layer is that of the longest folder prefix of its path in LAYERS. Quoted includes
are resolved the way the build resolves them (the including file's folder, the repository
root, src/, include/); system and third-party headers (<...>) are not looked at. Tests and
benchmarks stand outside the layers (they may use anything) and are not checked.
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom first. Each layer: its name, what it holds, its folders.
LAYERS = [
    ("public headers", "HCCL's and ACL's C API, hostccl's C and C++ API", ["include"]),
    ("common and runtime", "errors, logging, env registry, reductions, sockets, traces; ACL streams, events, memory",
     ["common", "runtime"]),
    ("transports", "links: shared memory, TCP, RDMA verbs", ["transports"]),
    ("algorithms", "collectives over links, the selector and cost model", ["algorithms"]),
    ("core", "communicators, bootstrap, topology, health, their measurements", ["src/core"]),
    ("monitor", "live monitoring: diagnosis, the endpoint, dashboard, job view", ["monitor"]),
    ("api", "the C and C++ entry points", ["src/api"]),
    ("training and python", "libhostccl_training; the torch backend", ["training", "python"]),
    ("simulator", "the simulated platform and what runs collectives on it", ["sim"]),
    ("planner", "hostccl-plan's library", ["planner"]),
    ("tools", "command lines", ["tools"]),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".h", ".hpp", ".cc", ".cpp")
SEARCH = ["", "src", "include"]


def layer_of(path):
    best, level = -1, None
    for i, (_, _, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (path == p or path.startswith(p + "/")) and len(p) > best:
                best, level = len(p), i
    return level


def resolve(including, name):
    for base in [os.path.dirname(including)] + SEARCH:
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(ROOT, candidate)):
            return candidate
    return None


def product_files():
    for top in ["include", "common", "runtime", "src", "transports", "algorithms", "training", "python/csrc", "sim", "planner", "tools"]:
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith(SOURCES):
                    yield os.path.relpath(os.path.join(folder, f), ROOT)


def upward_includes():
    for path in sorted(product_files()):
        mine = layer_of(path)
        if mine is None:
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                target = resolve(path, m.group(1)) if m else None
                theirs = layer_of(target) if target else None
                if theirs is not None and theirs > mine:
                    yield path, number, target, mine, theirs


DOC_START = "<!-- layers: made by scripts/check_layers.py --table -->"
DOC_END = "<!-- end of layers -->"


def table():
    """The layers as a markdown table, the top first, as a reader meets them."""
    rows = ["| layer | holds | folders |", "|---|---|---|"]
    for name, holds, prefixes in reversed(LAYERS):
        rows.append("| %s | %s | %s |" % (name, holds, ", ".join("`%s`" % p for p in prefixes)))
    return "\n".join(rows)


def doc_matches(path):
    text = open(os.path.join(ROOT, path), encoding="utf-8").read()
    start, end = text.find(DOC_START), text.find(DOC_END)
    if start < 0 or end < start:
        print("%s: no layer table between %s and %s" % (path, DOC_START, DOC_END))
        return False
    if text[start + len(DOC_START):end].strip() != table():
        print("%s: its layer table is not scripts/check_layers.py's; paste `--table`'s output" % path)
        return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="store_true", help="print the layer table (markdown, the top first)")
    parser.add_argument("--doc", metavar="FILE", help="also check that FILE holds the same table")
    args = parser.parse_args()
    if args.table:
        print(table())
        return 0
    doc_ok = not args.doc or doc_matches(args.doc)
    bad = 0
    for path, number, target, mine, theirs in upward_includes():
        print("%s:%d: includes %s, which runs up from %s to %s" %
              (path, number, target, LAYERS[mine][0], LAYERS[theirs][0]))
        bad += 1
    if bad:
        print("%d includes run up the layers (scripts/check_layers.py, docs/architecture.md)" % bad)
        return 1
    print("every include runs down the layers")
    return 0 if doc_ok else 1


if __name__ == "__main__":
    sys.exit(main())
