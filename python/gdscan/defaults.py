"""The engine's settings under KvikIO's names (``kvikio.defaults``).

Read first from the ``KVIKIO_*`` environment variables; ``set`` changes them
for files opened afterwards (``CuFile``, and ``read_parquet`` of local
paths); it also works as a context manager that restores the old values::

    gdscan.defaults.set("num_threads", 16)
    with gdscan.defaults.set({"task_size": 1 << 20, "compat_mode": "ON"}):
        ...
"""

from __future__ import annotations

from ._gdscan import SETTINGS as _NAMES
from ._gdscan import get as _get
from ._gdscan import set_one as _set_one

__all__ = ["get", "set", "compat_mode", "num_threads", "task_size", "gds_threshold",
           "bounce_buffer_size", "auto_direct_io_read", "auto_direct_io_write"]


def get(name: str):
    """The value of setting ``name`` (``compat_mode`` is ``"ON"``, ``"OFF"``
    or ``"AUTO"``)."""
    return _get(name)


class _Restore:
    def __init__(self, old):
        self._old = old

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for name, value in self._old.items():
            _set_one(name, value)
        return False


def set(*args):
    """``set(name, value)`` or ``set({name: value, ...})``. A bad value raises
    ``gdscan.ConfigError`` and changes nothing. Returns a context manager
    that restores the previous values on exit."""
    if len(args) == 2:
        changes = {args[0]: args[1]}
    elif len(args) == 1 and isinstance(args[0], dict):
        changes = dict(args[0])
    else:
        raise TypeError("set(name, value) or set({name: value, ...})")
    old = {name: _get(name) for name in changes}
    done = {}
    try:
        for name, value in changes.items():
            _set_one(name, value)
            done[name] = old[name]
    except BaseException:
        for name, value in done.items():
            _set_one(name, value)
        raise
    return _Restore(old)


def compat_mode():
    return _get("compat_mode")


def num_threads():
    return _get("num_threads")


def task_size():
    return _get("task_size")


def gds_threshold():
    return _get("gds_threshold")


def bounce_buffer_size():
    return _get("bounce_buffer_size")


def auto_direct_io_read():
    return _get("auto_direct_io_read")


def auto_direct_io_write():
    return _get("auto_direct_io_write")


def names():
    """Every setting's name."""
    return list(_NAMES)
