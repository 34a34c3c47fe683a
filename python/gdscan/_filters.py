"""``filters=`` in pyarrow's and cuDF's disjunctive normal form: a list of
``(column, op, value)`` tuples (all must hold), or a list of such lists
(any of them must hold). Checks each term's shape and tags its value with
the literal kind the extension reads (see python/src/dnf.rs)."""

from __future__ import annotations

import datetime
import decimal

_COMPARE = {"=", "==", "!=", "<", "<=", ">", ">="}
_LIST = {"in", "not in"}
_NULL = {"is", "is not"}
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_DAY = datetime.date(1970, 1, 1)
_I128 = (-(1 << 127), (1 << 127) - 1)


def _numpy_literal(value):
    """A numpy scalar's (kind, payload), or None for anything else."""
    numpy = type(value).__module__ == "numpy"
    if not numpy:
        return None
    import numpy as np

    if isinstance(value, np.bool_):
        return ("bool", bool(value))
    if isinstance(value, np.integer):
        return _literal(int(value))
    if isinstance(value, np.floating):
        return ("float", float(value))
    if isinstance(value, np.datetime64):
        if np.isnat(value):
            raise ValueError("NaT is not a value: use ('column', 'is', None)")
        unit, _ = np.datetime_data(value.dtype)
        if unit in ("Y", "M", "W", "D"):
            return ("date", int(value.astype("datetime64[D]").astype(np.int64)))
        return ("timestamp", int(value.astype("datetime64[ns]").astype(np.int64)))
    return None


def _decimal(value: decimal.Decimal):
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise ValueError(f"{value} is not a finite decimal")
    unscaled = int("".join(map(str, digits)) or "0")
    if exponent > 0:
        unscaled, exponent = unscaled * 10**exponent, 0
    if -exponent > 255:
        raise ValueError(f"{value} has more than 255 digits after the point")
    unscaled = -unscaled if sign else unscaled
    if not _I128[0] <= unscaled <= _I128[1]:
        raise ValueError(f"{value} has more digits than a 128-bit integer holds")
    return ("decimal", (unscaled, -exponent))


def _timestamp(value: datetime.datetime):
    """Nanoseconds since the epoch, UTC (a naive datetime is taken as UTC)."""
    if value.tzinfo is not None and value.utcoffset() is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    else:
        value = value.replace(tzinfo=None)
    delta = value - _EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return ("timestamp", micros * 1000)


def _literal(value):
    """The (kind, payload) of one Python value."""
    # bool before int, datetime before date: subclasses first.
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        if not _I128[0] <= value <= _I128[1]:
            raise ValueError(f"{value} does not fit a 128-bit integer")
        return ("int", value)
    if isinstance(value, float):
        return ("float", value)
    if isinstance(value, str):
        return ("str", str(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("bytes", bytes(value))
    if isinstance(value, decimal.Decimal):
        return _decimal(value)
    if isinstance(value, datetime.datetime):
        return _timestamp(value)
    if isinstance(value, datetime.date):
        return ("date", (value - _EPOCH_DAY).days)
    tagged = _numpy_literal(value)
    if tagged is not None:
        return tagged
    raise ValueError(f"values of type {type(value).__name__} are not supported")


def _term(term):
    """One (column, op, value) tuple, tagged."""
    if not isinstance(term, (tuple, list)) or len(term) != 3:
        raise ValueError(f"filters term {term!r}: expected a (column, op, value) tuple")
    column, op, value = term
    if not isinstance(column, str) or not isinstance(op, str):
        raise ValueError(f"filters term {term!r}: column and op must be strings")
    norm = " ".join(op.lower().split())
    try:
        if norm in _NULL:
            if value is not None:
                raise ValueError(f"'{op}' takes None")
            return (column, norm, None)
        if norm in _LIST:
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise ValueError(f"'{op}' takes a list of values")
            values = list(value)
            if not values:
                raise ValueError(f"'{op}' takes a non-empty list")
            if any(v is None for v in values):
                raise ValueError("None in a list never matches: use ('column', 'is', None)")
            return (column, norm, [_literal(v) for v in values])
        if norm in _COMPARE:
            if value is None:
                raise ValueError("compare with None through 'is' or 'is not'")
            return (column, norm, _literal(value))
        raise ValueError(
            f"unknown operator {op!r} (expected =, ==, !=, <, <=, >, >=, in, not in, is, is not)")
    except ValueError as e:
        raise ValueError(f"filters term {term!r}: {e}") from None


def encode(filters):
    """The tagged OR of ANDs of ``filters`` (flat list: one AND)."""
    if isinstance(filters, (str, bytes)) or not isinstance(filters, (list, tuple)):
        raise ValueError(
            f"filters takes a list of (column, op, value) tuples or a list of such lists, "
            f"not {type(filters).__name__}")
    if not filters:
        raise ValueError("filters is empty")
    # pyarrow's rule: a list of lists when the first item's first item is a term.
    first = filters[0]
    nested = isinstance(first, (list, tuple)) and len(first) > 0 and isinstance(
        first[0], (list, tuple))
    disjuncts = filters if nested else [filters]
    out = []
    for i, conjunction in enumerate(disjuncts):
        if not isinstance(conjunction, (list, tuple)) or not conjunction:
            raise ValueError(f"filters conjunction {i} is empty or not a list")
        out.append([_term(t) for t in conjunction])
    return out
