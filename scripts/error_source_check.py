#!/usr/bin/env python3
"""Error-source check: fails where library code turns an error into its text
while wrapping it, which ends the error's chain of sources.

Flagged, in the Rust files under the given folders (default: src), outside
tests (files named tests.rs, `#[cfg(test)]` modules, and the files a
`#[cfg(test)] mod name;` declaration names):

- `.map_err(|e| e.to_string())` and `.map_err(ToString::to_string)`
  (also `String::from`, `|e| e.to_owned()`);
- `.map_err(|e| format!(.. e ..))`: the error formatted into a message.

Wrap the error in a typed variant that keeps it as its source instead
(thiserror's `#[source]` or `#[from]`). Where a place really needs the text
(an exception crossing into Python, a value parser that must return a
string), say so with the marker `// error-source: <why>` on the line or in
the three lines above; a marker without a reason does not count.

    python3 scripts/error_source_check.py              # check src/
    python3 scripts/error_source_check.py src cli/src  # other folders
    python3 scripts/error_source_check.py --self-test

Exits 1 when anything is flagged.
"""

import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fn_lengths  # noqa: E402  (its reading of test modules)
MARKER = re.compile(r"//\s*error-source:\s*\S")
# `map_err(` followed by what turns its error into text.
TO_TEXT = re.compile(
    r"map_err\(\s*(?:"
    r"(?:ToString::to_string|String::from|ToOwned::to_owned)\s*\)"
    r"|\|\s*(?P<v>[A-Za-z_][A-Za-z0-9_]*)\s*(?::[^|]*)?\|\s*(?:\{\s*)?"
    r"(?:(?P=v)\s*\.\s*(?:to_string|to_owned)\s*\(\s*\)"
    r"|format!\s*\((?P<args>[^;]*))"
    r")"
)


def code_of(line):
    """The line without its line comment (string contents kept: format!
    strings name the error as `{e}`)."""
    out, in_str, i = [], False, 0
    while i < len(line):
        c = line[i]
        if in_str:
            if c == "\\":
                out.append(line[i : i + 2])
                i += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif line.startswith("//", i):
            break
        out.append(c)
        i += 1
    return "".join(out)


def braces(code):
    """The change in brace depth over a line of code (strings ignored)."""
    code = re.sub(r'"(\\.|[^"\\])*"', '""', code)
    code = re.sub(r"'(\\.|[^'\\])'", "''", code)
    return code.count("{") - code.count("}")


def names_error(args, var):
    """Whether format!'s arguments use the error `var` (as `{var}`,
    `{var:?}`, or an argument)."""
    return re.search(r"\{%s(?::[^}]*)?\}|\b%s\b" % (var, var), args) is not None


def findings(path, text):
    """(line number, line) of each conversion in `text`, tests excepted."""
    if Path(path).name == "tests.rs":
        return []
    lines = text.split("\n")
    out = []
    test_depth = None  # brace depth at which a #[cfg(test)] module opened
    depth = 0
    pending_test = False
    for n, raw in enumerate(lines, 1):
        code = code_of(raw)
        stripped = code.strip()
        if test_depth is None:
            if stripped.startswith("#[cfg(test)]"):
                pending_test = True
            elif pending_test and re.match(r"(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", stripped):
                test_depth = depth
                pending_test = False
            elif stripped and not stripped.startswith("#["):
                pending_test = False
        if test_depth is None:
            # A call may continue on the next line: look at two together.
            window = code + " " + code_of(lines[n]) if n < len(lines) else code
            m = TO_TEXT.search(code) or (
                TO_TEXT.search(window) if "map_err" in code else None
            )
            if m and (m.group("args") is None or names_error(m.group("args"), m.group("v"))):
                marked = any(MARKER.search(l) for l in lines[max(0, n - 4) : n])
                if not marked:
                    out.append((n, raw.strip()))
        depth += braces(code)
        if test_depth is not None and depth <= test_depth:
            test_depth = None
    return out


def test_files(paths):
    """The files that `#[cfg(test)] mod name;` declarations make test
    modules (fn_lengths.py's reading of them), and everything under the
    folders they name."""
    named = [Path(p) for path in paths for p in fn_lengths.test_module_paths(str(path))]
    files = {p for p in named if p.suffix == ".rs"}
    folders = [p for p in named if p.suffix != ".rs"]
    return {
        path
        for path in paths
        if path in files or any(folder in path.parents for folder in folders)
    }


def check(roots):
    flagged = []
    for root in roots:
        paths = sorted(Path(root).rglob("*.rs"))
        tests = test_files(paths)
        for path in paths:
            if path in tests:
                continue
            text = path.read_text(encoding="utf-8")
            for n, line in findings(path, text):
                try:
                    shown = path.relative_to(REPO)
                except ValueError:
                    shown = path
                flagged.append(f"{shown}:{n}: {line}")
    return flagged


SELF_TEST = {
    # name: (source, lines flagged)
    "to_string": ('fn f() -> Result<(), String> { g().map_err(|e| e.to_string()) }\n', [1]),
    "path form": ("fn f() { g().map_err(ToString::to_string)?; }\n", [1]),
    "typed": ("fn f() { g().map_err(|e| Error::Read { source: e })?; }\n", []),
    "typed box": ("fn f() { g().map_err(|e| Error::Other(Box::new(e)))?; }\n", []),
    "format with the error": (
        'fn f() { g().map_err(|err| format!("cannot read {path}: {err}"))?; }\n',
        [1],
    ),
    "format as argument": (
        'fn f() { g().map_err(|e| format!("{}: {}", path, e))?; }\n',
        [1],
    ),
    "format without the error": (
        'fn f() { g().map_err(|_e| format!("no column {name}"))?; }\n',
        [],
    ),
    "next line": (
        "fn f() {\n    g()\n        .map_err(|e|\n            e.to_string())?;\n}\n",
        [3],
    ),
    "marked on the line": (
        "fn f() { g().map_err(|e| e.to_string())?; } // error-source: Python wants text\n",
        [],
    ),
    "marked above": (
        "// error-source: clap's value parsers return text\nfn f() { g().map_err(|e| e.to_string()) }\n",
        [],
    ),
    "marked a statement above": (
        "// error-source: cached as text\nlet x = unsafe { g() }\n    .map_err(|e| e.to_string());\n",
        [],
    ),
    "marker too far above": (
        "// error-source: cached as text\n\n\n\nfn f() { g().map_err(|e| e.to_string()) }\n",
        [5],
    ),
    "marker without a reason": (
        "// error-source:\nfn f() { g().map_err(|e| e.to_string()) }\n",
        [2],
    ),
    "in a comment": ("// g().map_err(|e| e.to_string())\nfn f() {}\n", []),
    "test module": (
        "fn f() {}\n#[cfg(test)]\nmod tests {\n    fn t() { g().map_err(|e| e.to_string()); }\n}\n"
        "fn h() { g().map_err(|e| e.to_string()); }\n",
        [6],
    ),
}


def self_test():
    failed = 0
    for name, (source, want) in SELF_TEST.items():
        got = [n for n, _ in findings("x.rs", source)]
        if got != want:
            print(f"self-test {name}: flagged {got}, want {want}")
            failed += 1
    got = findings("tests.rs", 'fn f() { g().map_err(|e| e.to_string()); }\n')
    if got:
        print(f"self-test tests.rs: flagged {got}, want none")
        failed += 1
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "a.rs").write_text(SELF_TEST["to_string"][0])
        if len(check([d])) != 1:
            print("self-test check(): the planted file is not flagged")
            failed += 1
    print(f"error_source_check self-test: {len(SELF_TEST) + 2 - failed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    roots = [REPO / r for r in (argv[1:] or ["src"])]
    flagged = check(roots)
    for line in flagged:
        print(line)
    if flagged:
        print(
            f"{len(flagged)} place(s) turn an error into text where they wrap it: keep it as a "
            "typed source, or mark a place that must be text with `// error-source: <why>`",
            file=sys.stderr,
        )
        return 1
    print("error_source_check: no error turned into text in " + ", ".join(argv[1:] or ["src"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
