#!/usr/bin/env python3
"""Lists the functions of Rust files longer than a limit (lines from the
`fn` line to its closing brace); test functions are marked as such and do
not count against the limit.

A function is a test when it carries `#[test]` (or `#[tokio::test]` and
the like), when it stands inside an item under `#[cfg(test)]` (a
`mod tests { .. }`, an `impl` block), or when its file is a test module: a
file named `tests.rs`, or the file (or folder) of a `#[cfg(test)] mod
name;` declaration.

Usage: scripts/fn_lengths.py [--limit N] [DIR...]
       scripts/fn_lengths.py --self-test
Defaults: 120 lines over src, cli/src and python/src (the library, the
command line and the Python package), taken from the repository root.
Exits 1 when a non-test function is over the limit.
"""
import os
import re
import sys
import tempfile

FN = re.compile(r"^(\s*)(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"C\"\s+)?fn\s+(\w+)")
MOD_DECL = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?mod\s+(\w+)\s*;")
CFG = re.compile(r"^#\[cfg\((.*)\)\]")
TEST_ATTR = re.compile(r"^#\[(\w+::)*test\b")

LIMIT = 120
ROOTS = ["src", "cli/src", "python/src"]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def strip(line):
    """The line without its string, char and line-comment contents."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def is_test_attr(s):
    """Whether the attribute line `s` makes the next item test-only:
    `#[test]`, `#[tokio::test]`, `#[cfg(test)]`, `#[cfg(all(test, ..))]`."""
    if TEST_ATTR.match(s):
        return True
    m = CFG.match(s)
    if not m:
        return False
    expr = m.group(1).replace(" ", "")
    if expr == "test":
        return True
    if expr.startswith("all("):
        # `test` as one of all(..)'s own terms, not inside a not(..).
        inner = re.sub(r"not\([^()]*\)", "", expr[4:-1])
        return "test" in inner.split(",")
    return False


def test_module_paths(path):
    """The files and folders that a file's `#[cfg(test)] mod name;`
    declarations name (`name.rs` or `name/` beside a mod.rs, lib.rs or
    main.rs; under the file's own folder otherwise)."""
    base = os.path.basename(path)
    folder = os.path.dirname(path)
    if base not in ("mod.rs", "lib.rs", "main.rs"):
        folder = os.path.join(folder, base[: -len(".rs")])
    out = []
    pending = False
    for line in open(path, encoding="utf-8"):
        s = line.strip()
        if s.startswith("#["):
            pending = pending or is_test_attr(s)
            continue
        if not s or s.startswith("//"):
            continue
        m = MOD_DECL.match(line)
        if m and pending:
            name = m.group(3)
            out.append(os.path.join(folder, name + ".rs"))
            out.append(os.path.join(folder, name) + os.sep)
        pending = False
    return out


def body_end(lines, i):
    """The index of the line that closes the function opened at line i,
    or None for a declaration without a body."""
    d = 0
    opened = False
    j = i
    while j < len(lines):
        t = strip(lines[j])
        if not opened and ";" in t and "{" not in t:
            return None
        d += t.count("{") - t.count("}")
        opened = opened or "{" in t
        if opened and d <= 0:
            return j
        j += 1
    return j - 1 if opened else None


def functions(path, test_file=False):
    """(name, first line, length, is_test) for each function of a file;
    `test_file` marks every function of the file as a test."""
    test_file = test_file or os.path.basename(path) == "tests.rs"
    lines = open(path, encoding="utf-8").read().split("\n")
    test_depth = None  # the depth at which a #[cfg(test)] block opened
    depth = 0
    pending_test = False
    out = []
    for i, line in enumerate(lines):
        s = line.strip()
        t = strip(line)
        if s.startswith("#["):
            pending_test = pending_test or is_test_attr(s)
        elif s and not s.startswith("//"):
            m = FN.match(line)
            if m:
                j = body_end(lines, i)
                if j is not None:
                    is_test = pending_test or test_depth is not None or test_file
                    out.append((m.group(8), i + 1, j - i + 1, is_test))
            elif pending_test and "{" in t and test_depth is None:
                # A test-only block: `mod tests {`, `impl X {` and the like.
                test_depth = depth
            pending_test = False
        depth += t.count("{") - t.count("}")
        if test_depth is not None and depth <= test_depth:
            test_depth = None
    return out


def rust_files(roots):
    for root in roots:
        for dirpath, dirs, files in os.walk(root):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(".rs"):
                    yield os.path.join(dirpath, f)


def over_limit(roots, limit):
    """(report lines, number of non-test functions over the limit)."""
    files = list(rust_files(roots))
    test_paths = [p for f in files for p in test_module_paths(f)]
    report = []
    over = 0
    for path in files:
        in_test = any(path == p or (p.endswith(os.sep) and path.startswith(p)) for p in test_paths)
        for name, line, n, is_test in functions(path, in_test):
            if n > limit:
                report.append(f"{path}:{line} {name} {n} lines{' (test)' if is_test else ''}")
                over += not is_test
    return report, over


def long_fn(name, n, indent=""):
    body = [f"{indent}    let x{k} = {k};" for k in range(n)]
    return [f"{indent}fn {name}() {{"] + body + [f"{indent}}}"]


def self_test():
    """Plants long functions, test and not, in a temporary crate and checks
    that exactly the non-test ones are reported."""
    files = {
        "lib.rs": ["#[cfg(test)]", "mod tests;", "#[cfg(test)]", "mod helpers;", ""]
        + ["#[cfg(test)]", "use std::fmt;", ""]
        + long_fn("after_cfg_test_use", 130)
        + ["/// A doc comment.", "#[inline]"]
        + long_fn("planted", 130)
        + ["#[test]"]
        + long_fn("top_level_test", 130)
        + ["#[cfg(all(test, feature = \"x\"))]", "mod inline {"]
        + long_fn("in_test_mod", 130, "    ")
        + ["}", "#[cfg(test)]", "impl Foo {"]
        + long_fn("in_test_impl", 130, "    ")
        + ["}", "#[cfg(not(test))]"]
        + long_fn("not_test", 130)
        + long_fn("short", 10),
        "tests.rs": long_fn("in_tests_rs", 130),
        "helpers/mod.rs": long_fn("in_test_helpers", 130),
        "other.rs": ["#[tokio::test]"] + long_fn("tokio_test", 130) + long_fn("other_long", 121),
    }
    with tempfile.TemporaryDirectory() as root:
        for name, lines in files.items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
        report, over = over_limit([root], LIMIT)
    found = {}
    for r in report:
        name = r.split(" ")[1]
        found[name] = r.endswith("(test)")
    want = {
        "after_cfg_test_use": False,
        "planted": False,
        "not_test": False,
        "other_long": False,
        "top_level_test": True,
        "in_test_mod": True,
        "in_test_impl": True,
        "in_tests_rs": True,
        "in_test_helpers": True,
        "tokio_test": True,
    }
    if found != want or over != 4:
        print(f"self-test failed: found {found}, {over} over; wanted {want}, 4 over")
        return 1
    print("self-test passed: the long functions are caught, the long tests are not")
    return 0


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        return self_test()
    limit = LIMIT
    if args[:1] == ["--limit"]:
        limit = int(args[1])
        args = args[2:]
    roots = args
    if not roots:
        os.chdir(REPO)
        roots = ROOTS
    report, over = over_limit(roots, limit)
    for r in report:
        print(r)
    if over:
        print(f"{over} non-test function(s) over {limit} lines")
        return 1
    print(f"no non-test function over {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
