"""Shared fixtures. GPU tests carry the `gpu` marker: skipped (visibly)
without a GPU; with GDSCAN_REQUIRE_GPU=1 a missing GPU, or a missing CuPy or
PyTorch, fails the run instead."""

import importlib
import os

import pytest

import gdscan

REQUIRE_GPU = os.environ.get("GDSCAN_REQUIRE_GPU") == "1"
HAS_GPU = gdscan.cuda_available()


def pytest_configure(config):
    if REQUIRE_GPU and not HAS_GPU:
        raise pytest.UsageError(
            "GDSCAN_REQUIRE_GPU=1 but gdscan finds no CUDA GPU (driver missing or no device)"
        )


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="no CUDA GPU (GDSCAN_REQUIRE_GPU=1 makes this a failure)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def need(module: str):
    """Imports `module`; skips without it, fails under GDSCAN_REQUIRE_GPU=1."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if REQUIRE_GPU:
            pytest.fail(f"GDSCAN_REQUIRE_GPU=1 and {module} cannot be imported: {e}")
        pytest.skip(f"{module} is not installed")


@pytest.fixture
def file_bytes(tmp_path):
    """A 9 MiB + 123 byte file of seeded random bytes (more than two 4 MiB
    tasks, not a multiple of any block size) and its path."""
    import numpy as np

    data = np.random.default_rng(7).integers(0, 256, size=(9 << 20) + 123, dtype=np.uint8).tobytes()
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    return path, data


def parquet_test_data():
    """apache/parquet-testing's data/ folder, or None."""
    path = os.environ.get("PARQUET_TEST_DATA")
    return path if path and os.path.isdir(path) else None
