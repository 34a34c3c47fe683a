#!/usr/bin/env python3
"""Name check: fails when a file name is used twice under src/decode.

Every file under the decoder (Rust, CUDA C, anything tracked or not, but
`mod.rs`, which only names its folder) must have a name of its own, so that
a name in a doc, a log line or a review says which file without its folder.
The name is the whole file name, extension included (`nest.cu` and
`nest.rs` are two names).

    python3 scripts/name_check.py              # check src/decode
    python3 scripts/name_check.py DIR...       # check other folders
    python3 scripts/name_check.py --self-test

Prints each repeated name with its paths and exits 1 when there is any.
"""

import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOTS = ("src/decode",)
EXEMPT = {"mod.rs"}


def repeats(root):
    """{name: [paths relative to root's parent]} for each file name used more
    than once under `root` (exempt names and hidden entries aside)."""
    seen = defaultdict(list)
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or any(p.startswith(".") for p in rel.parts):
            continue
        if path.name not in EXEMPT:
            seen[path.name].append(path)
    return {name: paths for name, paths in seen.items() if len(paths) > 1}


def run(repo, roots=ROOTS):
    failed = 0
    files = 0
    for r in roots:
        root = repo / r
        if not root.is_dir():
            print(f"name check: {r} is not a folder")
            return 1
        files += sum(1 for p in root.rglob("*") if p.is_file())
        for name, paths in sorted(repeats(root).items()):
            failed += 1
            where = ", ".join(str(p.relative_to(repo)) for p in paths)
            print(f"{name} is used {len(paths)} times: {where}")
    if failed:
        print(f"name check: {failed} name(s) used more than once (mod.rs aside)")
        return 1
    print(f"name check: every file name used once ({files} files under {', '.join(roots)})")
    return 0


# ---------------------------------------------------------------- self-test


FIXTURES = {
    "a name in two folders": (
        ["src/decode/scan/mod.rs", "src/decode/scan/nest.rs", "src/decode/kernels/nest.rs"],
        ["nest.rs is used 2 times", "src/decode/kernels/nest.rs", "src/decode/scan/nest.rs"],
    ),
    "three deep": (
        ["src/decode/page/tests.rs", "src/decode/page/nesting/tests.rs", "src/decode/ffi/tests.rs"],
        ["tests.rs is used 3 times"],
    ),
    "mod.rs, extensions and names outside the root": (
        [
            "src/decode/mod.rs",
            "src/decode/page/mod.rs",
            "src/decode/kernels/nest.rs",
            "src/decode/kernels/cuda/nest.cu",
            "src/decode/page/plan.rs",
            "src/parquet/plan.rs",
        ],
        None,
    ),
}


def self_test():
    import contextlib
    import io

    failures = 0
    for name, (files, expected) in FIXTURES.items():
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for rel in files:
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text("")
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                status = run(root)
            out = buf.getvalue()
            ok = status == (0 if expected is None else 1) and all(e in out for e in expected or ())
            print(f"self-test {name}: {'ok' if ok else 'FAILED'}")
            if not ok:
                failures += 1
                print("  expected " + ("no repeat" if expected is None else repr(expected)))
                print("  " + out.replace("\n", "\n  "))
    return 1 if failures else 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    roots = [a for a in sys.argv[1:] if not a.startswith("-")]
    return run(REPO, tuple(roots) or ROOTS)


if __name__ == "__main__":
    sys.exit(main())
