"""gdscan from Python: a KvikIO-shaped file API on gdscan's I/O engine, and
a Parquet reader that decodes on the GPU and hands the columns to cuDF,
CuPy, PyTorch or pyarrow without a copy.

    import gdscan
    with gdscan.CuFile("data.bin", "r") as f:
        future = f.pread(cupy_array)      # like kvikio.CuFile
        n = future.get()
    table = gdscan.read_parquet("lineitem.parquet", columns=["l_orderkey"])
    cupy.asarray(table.column("l_orderkey"))   # same device memory
    table.to_arrow()                           # a pyarrow.Table, copied back
"""

from __future__ import annotations

import os
import warnings
from typing import Iterator, Optional, Sequence

from . import defaults
from ._gdscan import (
    Column,
    ConfigError,
    CudaError,
    CuFile,
    CuFileError,
    DecodeError,
    GdscanError,
    IOFuture,
    IoError,
    ParquetError,
    Scanner,
    StoreError,
    Table,
    cuda_available,
)
from ._gdscan import _read_parquet, _scan
from ._filters import encode as _encode_filters

__all__ = [
    "Column",
    "ConfigError",
    "CudaError",
    "CuFile",
    "CuFileError",
    "DecodeError",
    "GdscanError",
    "IOFuture",
    "IoError",
    "ParquetError",
    "Scanner",
    "StoreError",
    "Table",
    "cuda_available",
    "defaults",
    "read_parquet",
    "scan",
]

_DEFAULT = object()


def _device(device) -> Optional[int]:
    """The device to decode on: the default (0) falls back to host memory,
    with a warning, where there is no GPU; an explicit device does not."""
    if device is _DEFAULT:
        if cuda_available():
            return 0
        warnings.warn(
            "gdscan: no CUDA GPU found; decoding on the CPU into host memory (device=None)",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    return device


def _locations(path_or_url):
    """One location, or a list of them (read as one table, in order)."""
    if isinstance(path_or_url, (str, bytes)) or hasattr(path_or_url, "__fspath__"):
        return [os.fsdecode(path_or_url)]
    locations = [os.fsdecode(p) for p in path_or_url]
    if not locations:
        raise ValueError("no file to read: the list of locations is empty")
    return locations


def _columns(columns: Optional[Sequence[str]]):
    if columns is None:
        return None
    if isinstance(columns, str):
        raise TypeError("columns takes a list of names, not a string")
    return list(columns)


def _filters(filter, filters):
    """``filters`` tagged for the extension (a TypeError with ``filter``)."""
    if filters is None:
        return None
    if filter is not None:
        raise TypeError(
            "pass filter= (gdscan's predicate text) or filters= (pyarrow's DNF), not both")
    return _encode_filters(filters)


def read_parquet(path_or_url, columns: Optional[Sequence[str]] = None,
                 filter: Optional[str] = None, device=_DEFAULT, filters=None) -> Table:
    """Reads a Parquet file (a path or an s3://, gs://, az://, http(s)://,
    file:// URL), or a list of them with one schema, into a :class:`Table`
    (the files' row groups in order; on the GPU one decode pipeline runs
    over all of them, as ``cudf.read_parquet`` does for a list).

    ``columns``: the columns to read (default all), in that order.
    ``filter``: gdscan's predicate (``"l_shipdate >= DATE '1994-01-01' AND
    l_discount < 0.05"``); ``filters``: the same in pyarrow's and cuDF's
    form, a list of ``(column, op, value)`` tuples that must all hold, or a
    list of such lists of which one must hold (ops ``=``, ``==``, ``!=``,
    ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in``, ``is``, ``is not``;
    values int, float, str, bytes, bool, ``decimal.Decimal``,
    ``datetime.date``, ``datetime.datetime`` (naive ones are UTC), numpy
    scalars, and ``None`` with ``is`` / ``is not``). Give one or the other.
    Row groups and pages whose statistics rule the filter out are skipped,
    and the table holds exactly the rows where it is true; its columns are
    ``columns`` (a filter column not among them is read for the filter
    only). Filters follow SQL: a comparison with a null is not true, so
    ``!=`` and ``not in`` keep no null (pyarrow's ``not in`` keeps them).
    ``device``: the CUDA ordinal to decode on (default 0); ``None`` decodes on
    the CPU (arrow-rs) into host memory. Without a GPU the default call
    decodes on the CPU and warns.
    """
    return _read_parquet(_locations(path_or_url), _columns(columns), filter, _device(device),
                         _filters(filter, filters))


def scan(path_or_url, columns: Optional[Sequence[str]] = None,
         filter: Optional[str] = None, device=_DEFAULT, filters=None) -> Iterator[Table]:
    """As :func:`read_parquet`, one row group at a time: yields one-batch
    tables, so memory holds only the batches the caller keeps (a row group
    that keeps no row of the filter yields no table)."""
    return _scan(_locations(path_or_url), _columns(columns), filter, _device(device),
                 _filters(filter, filters))
