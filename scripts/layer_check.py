#!/usr/bin/env python3
"""Layer check: fails when modules of src/ import each other in a cycle.

Reads every `crate::` path in code (not comments) of src/**/*.rs and builds two
graphs:

- between the top-level modules of src/ (a folder such as `engine/`, or a
  file such as `report.rs`): an edge a -> b when code in a names `crate::b`;
- between the files of one folder: an edge f -> g when f names
  `super::g`, `self::g` (from mod.rs) or `crate::<folder>::g` (a file's
  module; `mod.rs` itself, which only declares and re-exports, is left out).

`error` (the crate's `Error`, which wraps every layer's error type and which
every layer returns) counts as the crate root, as `lib.rs` does: edges to and
from it are left out.

Any cycle (a strongly connected component of more than one module) is
printed and the script exits 1. `--graph` prints the top-level edges.
"""

import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = {"error", "lib"}
SRC = Path(__file__).resolve().parent.parent / "src"
PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{[^}]*\})")


def code_lines(text):
    """The file's lines without comments (line and doc comments)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        yield line.split("//")[0] if "\"" not in line else line


def names(text):
    """(root, first segment, second segment) of every path in the code, with
    `use crate::{a, b::c}` groups expanded."""
    for line in code_lines(text):
        for m in PATH.finditer(line):
            root, rest = m.group(1), m.group(2)
            if rest.startswith("::{"):
                for part in rest[3:-1].split(","):
                    segs = [s for s in part.strip().split("::") if s]
                    if segs:
                        yield root, segs[0], segs[1] if len(segs) > 1 else None
            else:
                segs = rest.split("::")[1:]
                yield root, segs[0], segs[1] if len(segs) > 1 else None


def top_module(path):
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".rs") if len(rel.parts) > 1 else rel.stem


def tarjan(graph):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    files = sorted(SRC.rglob("*.rs"))
    tops = {top_module(f) for f in files}
    top = defaultdict(set)
    inner = defaultdict(lambda: defaultdict(set))
    for f in files:
        rel = f.relative_to(SRC)
        if rel.parts[0] == "bin":
            continue
        me = top_module(f)
        folder = rel.parts[0] if len(rel.parts) > 1 else None
        siblings = set()
        if folder:
            siblings = {
                p.stem if p.is_file() else p.name
                for p in (SRC / folder).iterdir()
                if p.name != "mod.rs"
            }
        # A file's own module name inside its folder (a/b/c.rs -> b).
        mine = rel.parts[1].removesuffix(".rs") if folder and len(rel.parts) > 1 else None
        in_sub = folder and len(rel.parts) > 2  # e.g. parquet/predicate/x.rs
        for root, first, second in names(f.read_text()):
            if root == "crate":
                if first in tops and first != me and not {first, me} & ROOT:
                    top[me].add(first)
                if folder and first == folder and second in siblings and mine not in (None, "mod"):
                    if second != mine:
                        inner[folder][mine].add(second)
            elif folder and mine not in (None, "mod") and not in_sub:
                # super:: from a file of the folder, self:: is the file itself.
                if root == "super" and first in siblings and first != mine:
                    inner[folder][mine].add(first)
    if "--graph" in sys.argv:
        for a in sorted(top):
            print(f"{a} -> {', '.join(sorted(top[a]))}")
    cycles = [("src/", c) for c in tarjan(top)]
    for folder in sorted(inner):
        cycles += [(f"src/{folder}/", c) for c in tarjan(inner[folder])]
    for where, comp in cycles:
        print(f"cycle in {where}: {' <-> '.join(comp)}")
    if cycles:
        print(f"layer check: {len(cycles)} cycle(s)")
        return 1
    print(f"layer check: no cycles ({len(files)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
