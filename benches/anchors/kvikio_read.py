#!/usr/bin/env python3
"""KvikIO read anchor: how fast does KvikIO move whole files into GPU memory?

A reference point for gdscan's Rust benchmark. For every FILE and every thread
count it:

  1. configures KvikIO through ``kvikio.defaults.set({...})``: ``num_threads``,
     ``compat_mode`` and, if given, ``task_size`` / ``bounce_buffer_size``;
  2. allocates one CuPy ``uint8`` device array of the file's size (once per
     file, reused for every thread count);
  3. warms the page cache with a plain, chunked Python read of the file (the
     data is thrown away), so the numbers are for a hot cache, as in the Rust
     benchmark;
  4. times ``--repeats`` runs of
         with kvikio.CuFile(path, "r") as f: f.pread(buf).get()
         cupy.cuda.runtime.deviceSynchronize()
     (file open and close are inside the clock; the buffer is zeroed before
     each run, outside the clock);
  5. copies the device bytes back in 256 MiB chunks and takes their zlib.crc32,
     so the caller can check the data against the file on disk.

CPU cost: the process's user + system CPU seconds (resource.getrusage
RUSAGE_SELF, every thread, KvikIO's pool included) are summed over the timed
reads only, and reported per GB moved ("cpu_s_per_gb"), as gdscan's
``bench read`` does.

Several GPUs (``--devices 0,1``): the file is cut into one equal part per GPU
(2 MiB boundaries), each part has its own CuPy buffer on its GPU, and the
timed run submits every part's ``f.pread(buf, size, file_offset)`` at once
(KvikIO's futures, one thread pool) before waiting for all; the CRC is taken
over the parts in order. Without --devices, --device picks the one GPU.

It prints one JSON object to stdout:

  {"tool": "kvikio", "version": ..., "compat_mode": ..., ...,
   "results": [{"file", "bytes", "threads", "devices", "best_s", "median_s",
                "best_gbps", "median_gbps", "cpu_s_per_gb", "crc32"}, ...]}

GB/s means 1e9 bytes per second. A run that fails puts an "error" string in
its result and makes the exit status 1. Progress notes go to stderr.

Running it on the GPU machine (Python 3.12, CUDA 13, cupy and numpy already
installed, no network), from the repository root, with the wheels that were
downloaded into .whl/:

  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \\
      --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
  python3 benches/anchors/kvikio_read.py /data/a.bin /data/b.bin \\
      --threads 1,8,16 --repeats 3 --compat on > kvikio.json

libkvikio needs libcufile.so.0 at import time even in compatibility mode. The
nvidia-cufile wheel puts it in /tmp/site/nvidia/cu13/lib, a place
cuda-pathfinder does not search when the wheels are only on PYTHONPATH, so
this script loads it from sys.path itself before importing kvikio (setting
LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib works as well).

Exit status: 0 all good, 1 some run failed, 2 kvikio/cupy cannot be imported
or bad arguments.
"""

import argparse
import json
import os
import re
import resource
import statistics
import sys
import time
import zlib

CHUNK = 256 << 20  # bytes per host read (cache warm-up) and per device->host copy
COMPAT_CHOICES = ("on", "off", "auto")


def parse_size(text):
    """'4194304', '4M', '4MiB', '512k' -> bytes (binary suffixes)."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:([kmgt])(?:i?b)?|b)?\s*", text, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError("not a size in bytes: %r" % text)
    value = int(m.group(1))
    if m.group(2):
        value <<= 10 * ("kmgt".index(m.group(2).lower()) + 1)
    if value <= 0:
        raise argparse.ArgumentTypeError("size must be positive: %r" % text)
    return value


def parse_threads(text):
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            n = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError("not a thread count: %r" % part)
        if n <= 0:
            raise argparse.ArgumentTypeError("thread count must be positive: %r" % part)
        out.append(n)
    if not out:
        raise argparse.ArgumentTypeError("no thread counts in %r" % text)
    return out


def parse_devices(text):
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            n = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError("not a device ordinal: %r" % part)
        if n < 0:
            raise argparse.ArgumentTypeError("device ordinal must not be negative: %r" % part)
        out.append(n)
    if not out:
        raise argparse.ArgumentTypeError("no device ordinals in %r" % text)
    return out


def parts_of(size, n):
    """The file cut into n parts on 2 MiB boundaries: [(offset, length)]."""
    align = 2 << 20
    step = -(-(size // n) // align) * align
    out = []
    for i in range(n):
        start = min(i * step, size)
        end = size if i + 1 == n else min((i + 1) * step, size)
        out.append((start, end - start))
    return out


def cpu_seconds():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="kvikio_read.py",
        description="Time KvikIO CuFile.pread of whole files into a CuPy device "
        "buffer (hot page cache) and print JSON results to stdout.",
        epilog="Set up on the GPU machine: python3 -m pip install -q --no-index "
        "--no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "
        ".whl/*.whl && export PYTHONPATH=/tmp/site",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="files to read")
    p.add_argument("--threads", type=parse_threads, default=[1, 8, 16],
                   help="comma-separated KvikIO thread-pool sizes (default: 1,8,16)")
    p.add_argument("--repeats", type=int, default=3,
                   help="timed reads per file and thread count (default: 3)")
    p.add_argument("--task-size", type=parse_size, default=None, metavar="BYTES",
                   help="KvikIO task_size, e.g. 4194304 or 4M (default: KvikIO's, 4 MiB)")
    p.add_argument("--bounce-buffer-size", type=parse_size, default=None, metavar="BYTES",
                   help="KvikIO bounce_buffer_size for the POSIX path (default: KvikIO's, 16 MiB)")
    p.add_argument("--compat", choices=COMPAT_CHOICES, default="auto",
                   help="KvikIO compat_mode: on = POSIX reads through pinned bounce "
                   "buffers, off = cuFile/GDS only, auto = cuFile if usable (default: auto)")
    p.add_argument("--warmup", type=int, default=0,
                   help="untimed KvikIO reads before the timed ones, per file and "
                   "thread count (default: 0)")
    p.add_argument("--device", type=int, default=0, help="CUDA device ordinal (default: 0)")
    p.add_argument("--devices", type=parse_devices, default=None,
                   help="comma-separated CUDA ordinals to read into at once, one "
                   "equal part of the file each (default: --device alone)")
    args = p.parse_args(argv)
    if args.devices is None:
        args.devices = [args.device]
    if len(set(args.devices)) != len(args.devices):
        p.error("--devices lists a GPU twice")
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    if args.warmup < 0:
        p.error("--warmup must not be negative")
    for f in args.files:
        if not os.path.isfile(f):
            p.error("not a regular file: %s" % f)
    return args


def die(msg):
    sys.stderr.write("kvikio_read.py: error: %s\n" % msg)
    sys.exit(2)


def note(msg):
    sys.stderr.write("kvikio_read.py: %s\n" % msg)
    sys.stderr.flush()


def preload_cufile():
    """Load libcufile.so.0 from an nvidia-cufile wheel found on sys.path.

    libkvikio's loader asks cuda-pathfinder for libcufile, and pathfinder only
    looks in the real site-packages (not PYTHONPATH/--target dirs), then the
    system. A library that is already loaded is accepted, so load it first.
    Returns the path loaded, or None (then the system copy, if any, is used).
    """
    import ctypes

    for base in sys.path:
        for sub in ("nvidia/cu13/lib", "nvidia/cufile/lib"):
            path = os.path.join(base or os.curdir, sub, "libcufile.so.0")
            if os.path.isfile(path):
                try:
                    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                except OSError as e:
                    note("could not load %s: %s" % (path, e))
                    continue
                return os.path.abspath(path)
    return None


def import_gpu_modules():
    """Import cupy and kvikio or exit 2 with a one-line reason."""
    hint = ("install the wheels: python3 -m pip install -q --no-index --no-deps "
            "--no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl "
            "&& export PYTHONPATH=/tmp/site")
    try:
        import cupy
    except Exception as e:  # ImportError, or a CUDA library failing to load
        die("cannot import cupy: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    cufile_path = None
    try:
        cufile_path = preload_cufile()
    except Exception as e:
        note("libcufile preload skipped: %s" % e)
    try:
        import kvikio
        import kvikio.defaults
    except Exception as e:  # ImportError, OSError, cuda.pathfinder's not-found error
        first = str(e).splitlines()[0] if str(e) else ""
        die("cannot import kvikio: %s: %s (%s)" % (type(e).__name__, first, hint))
    return cupy, kvikio, cufile_path


def compat_value(kvikio, name):
    enum = getattr(kvikio, "CompatMode", None)
    if enum is not None and hasattr(enum, name.upper()):
        return getattr(enum, name.upper())
    # Values of kvikio::CompatMode (compat_mode.hpp): OFF=0, ON=1, AUTO=2.
    return {"off": 0, "on": 1, "auto": 2}[name]


def enum_name(value):
    name = getattr(value, "name", None)
    if name is not None:
        return str(name).lower()
    return {0: "off", 1: "on", 2: "auto"}.get(value, str(value))


def warm_page_cache(path):
    buf = bytearray(min(CHUNK, 64 << 20))
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(view):
            pass


def device_crc32(cupy, arr, crc=0):
    n = arr.size
    for off in range(0, n, CHUNK):
        host = cupy.asnumpy(arr[off:min(off + CHUNK, n)])
        crc = zlib.crc32(host, crc)
        del host
    return crc & 0xFFFFFFFF


def sync_all(cupy, devices):
    for d in devices:
        with cupy.cuda.Device(d):
            cupy.cuda.runtime.deviceSynchronize()


def timed_read(cupy, kvikio, path, bufs, parts, devices):
    """One read of every part into its GPU's buffer: (seconds, CPU seconds)."""
    c0 = cpu_seconds()
    t0 = time.perf_counter()
    with kvikio.CuFile(path, "r") as f:
        futures = [f.pread(buf, size=length, file_offset=off)
                   for buf, (off, length) in zip(bufs, parts)]
        got = [fut.get() for fut in futures]
    sync_all(cupy, devices)
    t1 = time.perf_counter()
    c1 = cpu_seconds()
    for g, (off, length) in zip(got, parts):
        if g != length:
            raise RuntimeError("short read at %d: %d of %d bytes" % (off, g, length))
    return t1 - t0, c1 - c0


def bench_one(cupy, kvikio, path, size, bufs, parts, threads, args):
    cfg = {"num_threads": threads, "compat_mode": compat_value(kvikio, args.compat)}
    if args.task_size is not None:
        cfg["task_size"] = args.task_size
    if args.bounce_buffer_size is not None:
        cfg["bounce_buffer_size"] = args.bounce_buffer_size
    kvikio.defaults.set(cfg)

    warm_page_cache(path)
    for _ in range(args.warmup):
        timed_read(cupy, kvikio, path, bufs, parts, args.devices)

    times = []
    cpu = 0.0
    for _ in range(args.repeats):
        for d, buf in zip(args.devices, bufs):
            with cupy.cuda.Device(d):
                buf.fill(0)
        sync_all(cupy, args.devices)
        t, c = timed_read(cupy, kvikio, path, bufs, parts, args.devices)
        times.append(t)
        cpu += c

    best = min(times)
    med = statistics.median(times)
    crc = 0
    for d, buf in zip(args.devices, bufs):
        with cupy.cuda.Device(d):
            crc = device_crc32(cupy, buf, crc)
    return {
        "file": path,
        "bytes": size,
        "threads": threads,
        "devices": args.devices,
        "cpu_s_per_gb": cpu / (size * len(times) / 1e9),
        "best_s": best,
        "median_s": med,
        "best_gbps": size / best / 1e9 if best > 0 else None,
        "median_gbps": size / med / 1e9 if med > 0 else None,
        "times_s": times,
        "crc32": crc,
    }


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cupy, kvikio, cufile_path = import_gpu_modules()

    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        die("cannot count CUDA devices: %s" % e)
    for d in args.devices:
        if d >= count:
            die("CUDA device %d does not exist (%d device(s))" % (d, count))
    try:
        cupy.cuda.Device(args.devices[0]).use()
    except Exception as e:
        die("cannot use CUDA device %d: %s" % (args.devices[0], e))

    results = []
    failed = False
    for path in args.files:
        size = os.path.getsize(path)
        if size == 0:
            results.append({"file": path, "bytes": 0, "error": "empty file"})
            failed = True
            continue
        parts = parts_of(size, len(args.devices))
        try:
            bufs = []
            for d, (_, length) in zip(args.devices, parts):
                with cupy.cuda.Device(d):
                    bufs.append(cupy.empty(max(length, 1), dtype=cupy.uint8))
        except Exception as e:
            for t in args.threads:
                results.append({"file": path, "bytes": size, "threads": t,
                                "error": "device allocation failed: %s" % e})
            failed = True
            continue
        for t in args.threads:
            note("%s: %d bytes, %d threads, compat %s, GPUs %s"
                 % (path, size, t, args.compat, ",".join(map(str, args.devices))))
            try:
                r = bench_one(cupy, kvikio, path, size, bufs, parts, t, args)
                note("  best %.4f s (%.2f GB/s), median %.4f s, %.3f CPU s/GB"
                     % (r["best_s"], r["best_gbps"], r["median_s"], r["cpu_s_per_gb"]))
            except Exception as e:
                r = {"file": path, "bytes": size, "threads": t,
                     "error": "%s: %s" % (type(e).__name__, e)}
                note("  failed: %s" % r["error"])
                failed = True
            results.append(r)
        del bufs
        for d in args.devices:
            with cupy.cuda.Device(d):
                cupy.get_default_memory_pool().free_all_blocks()

    def safe_get(key):
        try:
            return kvikio.defaults.get(key)
        except Exception:
            return None

    try:
        preferred = bool(kvikio.defaults.is_compat_mode_preferred())
    except Exception:
        preferred = None
    out = {
        "tool": "kvikio",
        "version": getattr(kvikio, "__version__", None),
        "compat_mode": args.compat,
        "compat_mode_set": enum_name(safe_get("compat_mode")),
        "compat_mode_preferred": preferred,  # True: AUTO resolves to POSIX reads
        "task_size": safe_get("task_size"),
        "bounce_buffer_size": safe_get("bounce_buffer_size"),
        "auto_direct_io_read": safe_get("auto_direct_io_read"),
        "repeats": args.repeats,
        "warmup": args.warmup,
        "cupy_version": getattr(cupy, "__version__", None),
        "libcufile": cufile_path,
        "results": results,
    }
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
