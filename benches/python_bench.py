"""The Python package against the Rust benchmark of the same scan, and the
Python anchors (cuDF, KvikIO) where installed. Run by benches/python_gpu.sh:

    python3 benches/python_bench.py --data DIR --rust decode.json [--iterations 5]

DIR is a `gdscan tpch gen --tables lineitem` folder; decode.json is
`gdscan bench decode --data DIR --cases all --json decode.json`'s report (the
Rust decode of every lineitem file, all columns). Timed here, one warm-up
then medians: `for t in gdscan.scan(files, device=0)` over the same list of
files (one decode pipeline over all of them, batches dropped as they come, as
the Rust benchmark does), `gdscan.read_parquet(files)` (every batch kept),
`gdscan.CuFile.pread` of each whole file into CuPy, and, when importable,
`kvikio.CuFile.pread` and cuDF's reader (`pylibcudf.io.parquet.read_parquet`
of the list, all columns, into GPU columns).
"""

import argparse
import glob
import json
import os
import statistics
import time


def timed(fn, iterations):
    fn()  # warm-up
    runs = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs), min(runs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--rust", required=True, help="gdscan bench decode --json output")
    parser.add_argument("--iterations", type=int, default=5)
    args = parser.parse_args()

    import cupy as cp

    import gdscan

    files = sorted(glob.glob(os.path.join(args.data, "lineitem", "*.parquet"))) or sorted(
        glob.glob(os.path.join(args.data, "**", "*.parquet"), recursive=True)
    )
    assert files, f"no Parquet files under {args.data}"
    total_bytes = sum(os.path.getsize(f) for f in files)
    rust = json.load(open(args.rust))
    rust_all = next(c for c in rust["cases"] if c["case"] == "all")
    results = {"files": len(files), "file_bytes": total_bytes, "rust_decode_seconds": rust_all["decode_seconds"]}

    def scan_all():
        rows = 0
        for part in gdscan.scan(files, device=0):
            rows += part.num_rows
        assert rows == rust_all["rows"], (rows, rust_all["rows"])

    def read_all():
        table = gdscan.read_parquet(files, device=0)
        assert table.num_rows == rust_all["rows"]

    buffers = [cp.empty(os.path.getsize(f), dtype=cp.uint8) for f in files]

    def pread_gdscan():
        handles = [gdscan.CuFile(f) for f in files]
        futures = [h.pread(b) for h, b in zip(handles, buffers)]
        assert sum(fu.get() for fu in futures) == total_bytes
        for h in handles:
            h.close()

    for name, fn in [("gdscan.scan", scan_all), ("gdscan.read_parquet", read_all),
                     ("gdscan.CuFile.pread", pread_gdscan)]:
        median, best = timed(fn, args.iterations)
        results[name] = {"median_seconds": median, "best_seconds": best}

    try:
        import kvikio

        def pread_kvikio():
            handles = [kvikio.CuFile(f, "r") for f in files]
            futures = [h.pread(b) for h, b in zip(handles, buffers)]
            assert sum(fu.get() for fu in futures) == total_bytes
            for h in handles:
                h.close()

        median, best = timed(pread_kvikio, args.iterations)
        results["kvikio.CuFile.pread"] = {"median_seconds": median, "best_seconds": best,
                                          "version": kvikio.__version__}
    except ImportError as e:
        results["kvikio.CuFile.pread"] = {"skipped": str(e)}
    try:
        import pylibcudf as plc

        def read_cudf():
            options = plc.io.parquet.ParquetReaderOptions.builder(
                plc.io.types.SourceInfo(files)).build()
            table = plc.io.parquet.read_parquet(options)
            assert table.tbl.num_rows() == rust_all["rows"]

        median, best = timed(read_cudf, args.iterations)
        results["pylibcudf.io.parquet.read_parquet"] = {
            "median_seconds": median, "best_seconds": best, "version": __import__("importlib.metadata").metadata.version("pylibcudf-cu13"),
            "over_gdscan_scan": median / results["gdscan.scan"]["median_seconds"]}
    except ImportError as e:
        results["pylibcudf.io.parquet.read_parquet"] = {"skipped": str(e)}

    over = results["gdscan.scan"]["median_seconds"] / rust_all["decode_seconds"] - 1
    results["python_over_rust"] = over
    print(json.dumps(results, indent=2))
    print(f"gdscan.scan from Python: {results['gdscan.scan']['median_seconds']:.3f} s, "
          f"Rust bench decode: {rust_all['decode_seconds']:.3f} s: {over * 100:+.1f} % "
          f"({'within' if over <= 0.05 else 'OVER'} the 5 % budget)")


if __name__ == "__main__":
    main()
