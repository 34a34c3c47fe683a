#!/usr/bin/env python3
"""Layer check: fails when the modules of a crate import each other in a cycle.

Checks every crate of the workspace that is present: the library (`src/`),
the command-line crate (`cli/src/`) and the Python package (`python/src/`).
A crate's root file (`lib.rs`, `main.rs`, `bin/*.rs`) is the only exempt file.

The model:

- a node per file; a `mod.rs` (or `a.rs` beside `a/`) that only declares
  modules and re-exports counts as its folder's interface, not as a file;
- an edge a -> b when code in file a names an item of b: `crate::x::y`,
  `super::x`, `self::x`, a child module's name, in `use` lines (groups such as
  `use crate::{a, b::{c, d}}` across lines included) and in paths written
  inline in code. Comments and string literals are ignored. A `pub use`
  re-export is not an edge: paths through it are followed to the item's
  file;
- the same edges seen at every folder: inside folder F, child c -> child d
  (a subfolder or a file of F) when a file under c names an item under d.

Every strongly connected component of more than one node is printed, at
every folder level and at the file level, with a shortest cycle through each
of its nodes and one example import (file:line) per edge of each cycle: the
places to change to break it. The script exits 1 when there is any.

    python3 scripts/layer_check.py            # check the workspace
    python3 scripts/layer_check.py --graph    # also print each crate's top-level edges
    python3 scripts/layer_check.py --self-test
"""

import re
import sys
import tempfile
from collections import defaultdict, deque
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CRATES = ("src", "cli/src", "python/src")
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
DEFINES = r"\b(?:fn|struct|enum|union|trait|type|const|static|mod|macro_rules!)\s+{}\b"


# ---------------------------------------------------------------- source text


def strip(text):
    """The text with comments, string and char literals blanked out (newlines
    kept, so that offsets still give line numbers)."""
    out, i, n = [], 0, len(text)

    def blank(s):
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(text, i)) and (i == 0 or not re.match(r"\w", text[i - 1])):
            end = text.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(blank(text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(blank(text[i : j + 1]))
            i = j + 1
        elif c == "'":
            m = re.compile(r"'(?:\\(?:x..|u\{[0-9a-fA-F]*\}|.)|[^\\'])'").match(text, i)
            if m:
                out.append(blank(m.group(0)))
                i = m.end()
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def inline_mods(code):
    """(start, end, name) of every inline `mod name { ... }` block."""
    spans = []
    for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{", code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        spans.append((m.start(), j, m.group(1)))
    return spans


def use_tree(tree, prefix=()):
    """Leaves of a `use` tree: (segments, alias, offset in tree)."""
    tree_s = tree

    def parse(i, prefix):
        leaves = []
        segs = list(prefix)
        while i < len(tree_s):
            m = re.compile(r"\s*(::)?\s*").match(tree_s, i)
            i = m.end()
            if i >= len(tree_s):
                break
            if tree_s[i] == "{":
                i += 1
                while True:
                    sub, i = parse(i, segs)
                    leaves += sub
                    m = re.compile(r"\s*([,}])").match(tree_s, i)
                    if not m:
                        return leaves, len(tree_s)
                    i = m.end()
                    if m.group(1) == "}":
                        return leaves, i
                    if re.compile(r"\s*\}").match(tree_s, i):
                        i = re.compile(r"\s*\}").match(tree_s, i).end()
                        return leaves, i
            m = re.compile(r"(" + IDENT + r"|\*)").match(tree_s, i)
            if not m:
                return leaves, i
            start = m.start()
            segs.append(m.group(1))
            i = m.end()
            if re.compile(r"\s*::").match(tree_s, i):
                continue
            alias = None
            a = re.compile(r"\s+as\s+(" + IDENT + r")").match(tree_s, i)
            if a:
                alias, i = a.group(1), a.end()
            leaves.append((segs, alias, start))
            return leaves, i
        return leaves, i

    return parse(0, prefix)[0]


class Crate:
    """The modules of one crate: module path (tuple) -> file, and each file's
    parsed references."""

    def __init__(self, root):
        self.root = root
        self.files = {}  # module path -> Path
        self.roots = set()  # root files (exempt)
        for f in sorted(root.rglob("*.rs")):
            rel = f.relative_to(root)
            if rel.parts[0] == "bin" or (len(rel.parts) == 1 and rel.stem in ("lib", "main")):
                self.roots.add(f)
                continue
            parts = rel.with_suffix("").parts
            mod = parts[:-1] if parts[-1] == "mod" else parts
            self.files[mod] = f
        self.files[()] = (root / "lib.rs") if (root / "lib.rs").exists() else root / "main.rs"
        self.code = {f: strip(f.read_text()) for f in set(self.files.values()) | self.roots if f.exists()}
        self.module_of = {f: m for m, f in self.files.items()}
        self.reexports = {}  # module -> {name: (absolute segments)}
        self.globs = defaultdict(list)  # module -> [absolute module segments]
        self.refs = {}  # file -> [(absolute segments, line)]
        for f, code in self.code.items():
            self._parse(f, code)

    def children(self, mod):
        return {m[-1] for m in self.files if len(m) == len(mod) + 1 and m[: len(mod)] == mod}

    def is_interface(self, f):
        """A file that only declares modules and re-exports."""
        if f in self.roots or f.name != "mod.rs" and not (f.parent / f.stem).is_dir():
            return False
        code = re.sub(r"#!?\[[^\]]*\]", " ", self.code[f])
        code = re.sub(r"\b(pub(\s*\([^)]*\))?\s+)?(mod\s+" + IDENT + r"\s*;|use\s[^;]*;)", " ", code)
        return not code.strip()

    def _absolute(self, segs, mod):
        """Resolve a path's leading `crate`, `super`, `self` or child module
        against module `mod`; None for a path into another crate."""
        segs = list(segs)
        if segs[0] == "crate":
            base, segs = [], segs[1:]
        elif segs[0] in ("self", "super"):
            base = list(mod)
            if segs[0] == "self":
                segs = segs[1:]
            while segs and segs[0] == "super":
                base, segs = base[:-1], segs[1:]
        elif segs[0] in self.children(tuple(mod)):
            base = list(mod)
        else:
            return None
        return tuple(base + [s for s in segs if s != "self"])

    def _parse(self, f, code):
        file_mod = self.module_of.get(f, ())
        spans = inline_mods(code)
        line_at = [0]
        for i, c in enumerate(code):
            if c == "\n":
                line_at.append(i + 1)

        def line(pos):
            lo, hi = 0, len(line_at) - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if line_at[mid] <= pos:
                    lo = mid
                else:
                    hi = mid - 1
            return lo + 1

        def mod_at(pos):
            inner = [s for s in spans if s[0] < pos < s[1]]
            return file_mod + tuple(name for _, _, name in sorted(inner))

        refs, taken = [], []
        for m in re.finditer(r"\b(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]*);", code):
            taken.append((m.start(), m.end()))
            here = mod_at(m.start())
            for segs, alias, off in use_tree(m.group(2)):
                if segs[0] == "*" or segs == ["self"]:
                    continue
                absolute = self._absolute(segs, here)
                if absolute is None:
                    continue
                if m.group(1):  # a re-export: an alias, not an edge
                    if segs[-1] == "*":
                        self.globs[here].append(absolute[:-1])
                    else:
                        name = alias or (segs[-1] if segs[-1] != "self" else segs[-2])
                        self.reexports.setdefault(here, {})[name] = absolute
                else:
                    refs.append((absolute, line(m.start(2) + off)))
        path = re.compile(r"(?<![\w:$])(" + IDENT + r")((?:\s*::\s*" + IDENT + r")+)")
        for m in path.finditer(code):
            if any(a <= m.start() < b for a, b in taken):
                continue
            segs = [m.group(1)] + [s.strip() for s in m.group(2).split("::")[1:]]
            absolute = self._absolute(segs, mod_at(m.start()))
            if absolute is not None:
                refs.append((absolute, line(m.start())))
        self.refs[f] = refs

    def target(self, segs, depth=0):
        """The file (or, for an item of an interface that cannot be followed,
        the folder's module path) that defines what path `segs` names."""
        segs = tuple(segs)
        k = len(segs)
        while k and segs[:k] not in self.files:
            k -= 1
        mod, rest = segs[:k], segs[k:]
        if rest and depth < 20:
            name = rest[0]
            if name in self.reexports.get(mod, {}):
                return self.target(self.reexports[mod][name] + rest[1:], depth + 1)
            for glob in self.globs.get(mod, ()):
                inner = self.target(glob + rest, depth + 1)
                if inner is not None and (not isinstance(inner, Path) or re.search(DEFINES.format(name), self.code[inner])):
                    return inner
        f = self.files.get(mod)
        if f is None or f in self.roots or mod == ():
            return None
        return mod if self.is_interface(f) else f

    def edges(self):
        """(source file, target file or interface module, line) for every
        reference between two different nodes."""
        for f, refs in self.refs.items():
            if f in self.roots:
                continue
            for segs, ln in refs:
                t = self.target(segs)
                if t is not None and t != f:
                    yield f, t, ln


# ---------------------------------------------------------------- graphs


def sccs(graph):
    """Strongly connected components of more than one node (iterative Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    nodes = sorted(set(graph) | {w for ws in graph.values() for w in ws})
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return out


def shortest_cycle(graph, start, inside):
    """A shortest cycle start -> ... -> start within the nodes `inside`."""
    prev, queue = {}, deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph.get(v, ())):
            if w not in inside:
                continue
            if w == start:
                cycle = [v]
                while cycle[-1] != start:
                    cycle.append(prev[cycle[-1]])
                return list(reversed(cycle))
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return [start]


def rel_parts(crate, node):
    """Path components of a node below the crate root: a file's, or an
    interface module's folder."""
    if isinstance(node, Path):
        return node.relative_to(crate.root).parts
    return node


def check(crate_dir, label, graph_out=None):
    """The cycles of one crate, as printable lines."""
    crate = Crate(crate_dir)
    examples = defaultdict(dict)  # level -> {(a, b): (file, line, count)}
    graphs = defaultdict(lambda: defaultdict(set))

    def note(level, a, b, f, ln):
        graphs[level][a].add(b)
        old = examples[level].get((a, b))
        where = f"{label}{f.relative_to(crate.root)}:{ln}"
        examples[level][(a, b)] = (old[0] if old else where, (old[1] if old else 0) + 1)

    for f, t, ln in crate.edges():
        src, dst = rel_parts(crate, f), rel_parts(crate, t)
        if isinstance(t, Path):
            note(None, "/".join(src), "/".join(dst), f, ln)
        # Folder levels: below every common folder, the two children.
        k = 0
        while k < len(src) - 1 and k < len(dst) - 1 and src[k] == dst[k]:
            k += 1
        if k < len(src) and k < len(dst) and src[k] != dst[k]:
            folder = "/".join(src[:k])
            a = src[k] + ("/" if len(src) > k + 1 else "")
            b = dst[k] + ("/" if len(dst) > k + 1 or not isinstance(t, Path) else "")
            note(folder, a, b, f, ln)

    if graph_out is not None:
        for a in sorted(graphs[""]):
            graph_out.append(f"{label}  {a} -> {', '.join(sorted(graphs[''][a]))}")

    lines, folder_cycles = [], set()
    levels = sorted((lv for lv in graphs if lv is not None), key=lambda lv: (lv.count("/"), lv))
    for level in levels + [None]:
        g = graphs[level]
        for comp in sccs(g):
            if level is None:
                folders = {n.rsplit("/", 1)[0] if "/" in n else "" for n in comp}
                if len(folders) == 1:
                    folder = folders.pop()
                    named = frozenset(n.rsplit("/", 1)[-1] for n in comp)
                    if (folder, named) in folder_cycles:
                        continue  # the same cycle as the folder level's
                where = f"files of {label}"
            else:
                folder_cycles.add((level, frozenset(comp)))
                where = f"folder {label}{level + '/' if level else ''}"
            lines.append(f"cycle in {where}: {len(comp)} nodes: {', '.join(comp)}")
            seen = set()
            for node in comp:
                cycle = shortest_cycle(g, node, set(comp))
                edges = frozenset(zip(cycle, cycle[1:] + cycle[:1]))
                if edges in seen:
                    continue
                seen.add(edges)
                lines.append("  " + " -> ".join(cycle + cycle[:1]))
                for a, b in zip(cycle, cycle[1:] + cycle[:1]):
                    where_, count = examples[level][(a, b)]
                    lines.append(f"      {a} -> {b}: {where_}" + (f" (and {count - 1} more)" if count > 1 else ""))
    return lines, len(crate.code)


def run(repo, graph=False):
    lines, graph_lines, files, crates = [], [], 0, 0
    for sub in CRATES:
        d = repo / sub
        if not d.is_dir():
            continue
        crates += 1
        out, n = check(d, sub + "/", graph_lines if graph else None)
        lines += out
        files += n
    for line in graph_lines:
        print(line)
    for line in lines:
        print(line)
    cycles = sum(line.startswith("cycle in") for line in lines)
    if cycles:
        print(f"layer check: {cycles} cycle(s)")
        return 1
    print(f"layer check: no cycles ({files} files in {crates} crate(s))")
    return 0


# ---------------------------------------------------------------- self-test


FIXTURES = {
    "two folders deep": (
        {
            "src/lib.rs": "pub mod a;\npub mod b;\npub use a::Thing;\n",
            "src/a/mod.rs": "//! A.\nmod x;\npub use x::deep::Thing;\n",
            "src/a/x/mod.rs": "pub mod deep;\n",
            "src/a/x/deep.rs": "pub struct Thing;\nfn f() { crate::b::y::z::call(); }\n",
            "src/b/mod.rs": "pub mod y;\n",
            "src/b/y/mod.rs": "pub mod z;\n",
            "src/b/y/z.rs": "// crate::b is fine in a comment\npub fn call() -> crate::Thing { crate::Thing }\n",
        },
        ["cycle in folder src/: 2 nodes: a/, b/", "src/a/x/deep.rs:2", "src/b/y/z.rs:2", "cycle in files of src/"],
    ),
    "use group across lines": (
        {
            "src/lib.rs": "pub mod k;\n",
            "src/k/mod.rs": "pub mod launch;\npub mod task;\n",
            "src/k/launch.rs": "use super::{\n    task::{\n        Task,\n        Kind as K,\n    },\n};\npub fn go() {}\n",
            "src/k/task.rs": 'pub struct Task;\npub enum Kind {}\nconst S: &str = "super::launch::go";\n'
            "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn t() { crate::k::launch::go(); }\n}\n",
        },
        ["cycle in folder src/k/: 2 nodes: launch.rs, task.rs", "src/k/launch.rs:3", "src/k/task.rs:8"],
    ),
    "clean tree": (
        {
            "src/lib.rs": "pub mod low;\npub mod high;\npub use high::Api;\n",
            "src/low/mod.rs": "mod inner;\npub use inner::Base;\n",
            "src/low/inner.rs": "pub struct Base;\n#[cfg(test)]\nmod tests { use super::*; fn f() -> Base { Base } }\n",
            "src/high/mod.rs": "use crate::low::Base;\npub struct Api(Base);\npub mod part;\n",
            "src/high/part.rs": "use super::Api;\nuse crate::low::{self, Base};\nfn f(_: Api, _: low::Base, _: Base) {}\n",
            "cli/src/main.rs": "mod cmd;\nfn main() {}\n",
            "cli/src/cmd.rs": "use gdscan::high::Api;\n",
        },
        None,
    ),
}


def self_test():
    import contextlib
    import io

    failures = 0
    for name, (tree, expected) in FIXTURES.items():
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for rel, text in tree.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                status = run(root)
            out = buf.getvalue()
            ok = status == (0 if expected is None else 1) and all(e in out for e in expected or ())
            print(f"self-test {name}: {'ok' if ok else 'FAILED'}")
            if not ok:
                failures += 1
                print("  expected " + ("no cycle" if expected is None else repr(expected)))
                print("  " + out.replace("\n", "\n  "))
    return 1 if failures else 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    return run(REPO, graph="--graph" in sys.argv)


if __name__ == "__main__":
    sys.exit(main())
