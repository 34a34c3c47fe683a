#!/usr/bin/env python3
"""Lists the functions of Rust files longer than a limit (lines from the
`fn` line to its closing brace), test functions (`#[test]`, or inside a
`#[cfg(test)]` module) marked as such.

Usage: scripts/fn_lengths.py [--limit N] [DIR...]   (default: 150, src/decode)
Exits 1 when a non-test function is over the limit.
"""
import os
import re
import sys

FN = re.compile(r"^(\s*)(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"C\"\s+)?fn\s+(\w+)")


def strip(line):
    """The line without its string, char and line-comment contents."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def functions(path):
    # A file of tests (`#[cfg(test)] mod tests;` or `mod …_tests;` beside it).
    name = os.path.basename(path)
    test_file = name == "tests.rs" or name.endswith("_tests.rs")
    lines = open(path, encoding="utf-8").read().split("\n")
    test_mod_depth = None
    depth = 0
    pending_test = False
    i = 0
    out = []
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith("#[cfg(test)]"):
            pending_test = True
        elif s.startswith("#[test]"):
            pending_test = True
        m = FN.match(line)
        if m and not s.startswith("//"):
            # Find the body's end by counting braces from this line.
            d = 0
            opened = False
            j = i
            while j < len(lines):
                t = strip(lines[j])
                if not opened and ";" in t and "{" not in t:
                    break  # a declaration without a body
                d += t.count("{") - t.count("}")
                opened = opened or "{" in t
                if opened and d <= 0:
                    break
                j += 1
            if opened:
                is_test = pending_test or test_mod_depth is not None or test_file
                out.append((m.group(8), i + 1, j - i + 1, is_test))
            pending_test = False
        elif s.startswith("mod ") or re.match(r"^\s*(pub(\([^)]*\))?\s+)?mod\s", line):
            if pending_test and test_mod_depth is None:
                test_mod_depth = depth
            pending_test = False
        t = strip(line)
        depth += t.count("{") - t.count("}")
        if test_mod_depth is not None and depth <= test_mod_depth and "}" in t:
            test_mod_depth = None
        i += 1
    return out


def main():
    args = sys.argv[1:]
    limit = 150
    if args[:1] == ["--limit"]:
        limit = int(args[1])
        args = args[2:]
    roots = args or ["src/decode"]
    over = 0
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for f in sorted(files):
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(dirpath, f)
                for name, line, n, is_test in functions(path):
                    if n > limit:
                        print(f"{path}:{line} {name} {n} lines{' (test)' if is_test else ''}")
                        over += not is_test
    if over:
        print(f"{over} non-test function(s) over {limit} lines")
        return 1
    print(f"no non-test function over {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
