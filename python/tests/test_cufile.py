"""CuFile on host memory (NumPy, bytearray, bytes) against the file's own
bytes, KvikIO's documented calls with gdscan in place of kvikio, and the
error paths."""

import threading

import numpy as np
import pytest

import gdscan


def test_read_into_numpy_equals_the_file(file_bytes):
    path, data = file_bytes
    buf = np.empty(len(data), dtype=np.uint8)
    with gdscan.CuFile(path, "r") as f:
        assert f.read(buf) == len(data)
    assert buf.tobytes() == data


@pytest.mark.parametrize("size,offset", [(1, 0), (4096, 1), ((4 << 20) + 7, 3), (100, (9 << 20) + 23)])
def test_read_ranges(file_bytes, size, offset):
    path, data = file_bytes
    buf = np.zeros(size, dtype=np.uint8)
    with gdscan.CuFile(path) as f:
        n = f.read(buf, size, offset)
    expected = data[offset:offset + size]
    assert n == len(expected)
    assert buf[:n].tobytes() == expected


def test_read_past_the_end_is_short(file_bytes):
    path, data = file_bytes
    buf = np.zeros(1000, dtype=np.uint8)
    with gdscan.CuFile(path) as f:
        n = f.read(buf, file_offset=len(data) - 10)
    assert n == 10
    assert buf[:10].tobytes() == data[-10:]


def test_pread_returns_a_future(file_bytes):
    path, data = file_bytes
    buf = np.empty(len(data), dtype=np.uint8)
    f = gdscan.CuFile(path, "r")
    future = f.pread(buf)
    assert isinstance(future, gdscan.IOFuture)
    assert future.get() == len(data)
    assert future.done()
    assert future.get() == len(data)  # again: the same result
    f.close()
    assert f.closed
    assert buf.tobytes() == data


def test_typed_buffers_read_their_bytes(file_bytes):
    path, data = file_bytes
    floats = np.empty(1000, dtype=np.float64)
    with gdscan.CuFile(path) as f:
        assert f.read(floats) == 8000
    assert floats.tobytes() == data[:8000]
    ba = bytearray(333)
    with gdscan.CuFile(path) as f:
        assert f.read(ba, file_offset=5) == 333
    assert bytes(ba) == data[5:338]


def test_kvikio_documented_calls(tmp_path):
    # KvikIO's getting-started example, with NumPy in place of CuPy.
    a = np.arange(100)
    f = gdscan.CuFile(tmp_path / "test-file", "w")
    f.write(a)
    f.close()
    assert (tmp_path / "test-file").read_bytes() == a.tobytes()

    b = np.empty_like(a)
    with gdscan.CuFile(tmp_path / "test-file", "r") as f:
        future = f.pread(b)
        assert future.get() == b.nbytes
    assert (a == b).all()

    # Several non-blocking reads into parts of one array.
    c = np.empty_like(a)
    with gdscan.CuFile(tmp_path / "test-file", "r") as f:
        futures = [
            f.pread(c[:50], file_offset=0),
            f.pread(c[50:], file_offset=50 * a.itemsize),
        ]
        assert sum(fut.get() for fut in futures) == a.nbytes
    assert (a == c).all()


def test_pwrite_then_read_back(tmp_path):
    data = np.random.default_rng(3).integers(0, 256, size=(5 << 20) + 1, dtype=np.uint8)
    path = tmp_path / "out.bin"
    with gdscan.CuFile(path, "w") as f:
        assert f.pwrite(data).get() == data.nbytes
        assert f.write(b"tail", file_offset=data.nbytes) == 4
    assert path.read_bytes() == data.tobytes() + b"tail"


def test_threads_read_in_parallel(file_bytes):
    path, data = file_bytes
    f = gdscan.CuFile(path)
    parts = 8
    step = len(data) // parts
    bufs = [np.empty(step, dtype=np.uint8) for _ in range(parts)]
    errors = []

    def work(i):
        try:
            assert f.read(bufs[i], file_offset=i * step) == step
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(parts):
        assert bufs[i].tobytes() == data[i * step:(i + 1) * step]


def test_stats_is_the_path_report(file_bytes):
    path, data = file_bytes
    buf = np.empty(len(data), dtype=np.uint8)
    with gdscan.CuFile(path) as f:
        f.read(buf)
        stats = f.stats()
    assert isinstance(stats, dict)
    host = [c for c in stats["counters"] if c["path"] == "posix-host"]
    assert host and host[0]["bytes"] == len(data)
    assert "verdict" in stats and "compat_mode" in stats


def test_errors(tmp_path, file_bytes):
    path, data = file_bytes
    with pytest.raises(gdscan.IoError, match="missing.bin"):
        gdscan.CuFile(tmp_path / "missing.bin", "r")
    with pytest.raises(gdscan.GdscanError):
        gdscan.CuFile(path, "rw+x")
    with pytest.raises(gdscan.IoError):
        gdscan.CuFile(tmp_path, "r")  # a directory
    f = gdscan.CuFile(path)
    with pytest.raises(TypeError, match="writable"):
        f.read(b"read-only bytes")
    with pytest.raises(TypeError):
        f.read(12345)
    with pytest.raises(ValueError, match="larger than the buffer"):
        f.read(np.empty(10, dtype=np.uint8), 11)
    with pytest.raises(NotImplementedError):
        f.read(np.empty(10, dtype=np.uint8), task_size=4096)
    with pytest.raises(ValueError, match="device memory"):
        f.raw_read(np.empty(10, dtype=np.uint8))
    with pytest.raises(gdscan.IoError):
        f.write(b"x")  # opened for reading
    with pytest.raises(TypeError, match="C-contiguous"):
        f.read(np.empty((10, 10), dtype=np.uint8)[:, ::2])
    f.close()
    with pytest.raises(ValueError, match="closed"):
        f.read(np.empty(10, dtype=np.uint8))


def test_defaults():
    names = gdscan.defaults.names()
    for name in ["compat_mode", "num_threads", "task_size", "gds_threshold",
                 "bounce_buffer_size", "auto_direct_io_read", "auto_direct_io_write"]:
        assert name in names
        gdscan.defaults.get(name)
    before = gdscan.defaults.num_threads()
    with gdscan.defaults.set({"num_threads": 3, "task_size": 1 << 20}):
        assert gdscan.defaults.get("num_threads") == 3
        assert gdscan.defaults.task_size() == 1 << 20
    assert gdscan.defaults.num_threads() == before
    with gdscan.defaults.set("compat_mode", "ON"):
        assert gdscan.defaults.compat_mode() == "ON"
    with pytest.raises(gdscan.ConfigError, match="num_threads"):
        gdscan.defaults.set("num_threads", 0)
    assert gdscan.defaults.num_threads() == before
    with pytest.raises(gdscan.ConfigError):
        gdscan.defaults.set("compat_mode", "sometimes")
    with pytest.raises(KeyError):
        gdscan.defaults.get("no_such_setting")


def test_small_task_size_reads_the_same_bytes(file_bytes):
    path, data = file_bytes
    buf = np.empty(len(data), dtype=np.uint8)
    with gdscan.defaults.set({"task_size": 64 << 10, "num_threads": 4}):
        with gdscan.CuFile(path) as f:
            assert f.read(buf) == len(data)
    assert buf.tobytes() == data
