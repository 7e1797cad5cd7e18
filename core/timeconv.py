"""Exact conversion of Trace Event Format times to int64 nanoseconds.

Trace times are microseconds written as JSON integers, decimal floats or numeric strings
("1780676244313289.000"). A float64 holds epoch microseconds only to 0.25 us, so decimals are
converted from their text: the JSON decoder hands float literals over as strings, and they are
parsed here, vectorised, into integer nanoseconds (rounded half away from zero past 1 ns).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

_POW10 = 10 ** np.arange(19, dtype=np.int64)
_MAX_US = 9_000_000_000_000_000  # µs; its ns stay inside int64
_DIGIT0, _DOT, _MINUS, _PLUS = 48, 46, 45, 43


def us_to_ns(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Convert JSON time values in microseconds to int64 nanoseconds.

    Returns ``(ns, ok)``; where ``ok`` is False the value was missing or unusable and its
    ``ns`` is 0.
    """
    n = len(values)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, bool)
    try:
        arr = np.array(values)
    except (OverflowError, ValueError, TypeError):
        return _slow(values)
    kind = arr.dtype.kind
    if kind in "iu" and arr.ndim == 1:
        ok = (arr >= -_MAX_US) & (arr <= _MAX_US)
        ns = np.where(ok, arr, 0).astype(np.int64) * 1000
        return ns, ok
    if kind == "U" and arr.ndim == 1:
        try:
            raw = arr.astype("S")
        except UnicodeEncodeError:
            return _slow(values)
        ns, ok = parse_decimal_us(raw)
        if not ok.all():
            # Exponents, whitespace and the like: give each failure the exact slow path.
            for i in np.flatnonzero(~ok).tolist():
                v = _one(values[i])
                if v is not None:
                    ns[i] = v
                    ok[i] = True
        return ns, ok
    if kind == "f" and arr.ndim == 1:
        ok = np.isfinite(arr) & (np.abs(arr) <= _MAX_US)
        ns = np.rint(np.where(ok, arr, 0.0) * 1000.0).astype(np.int64)
        return ns, ok
    return _slow(values)


def parse_decimal_us(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse an ``S`` array of unsigned decimal strings (µs) into int64 ns, vectorised.

    Rows are grouped by (length, position of the dot); each group is one matrix product of
    its digits with the powers of ten of their columns. Rows that are not plain unsigned
    decimals (signs, exponents, spaces) come back with ``ok`` False.
    """
    n, width = len(raw), raw.dtype.itemsize
    ns = np.zeros(n, np.int64)
    ok = np.zeros(n, bool)
    if n == 0 or width == 0:
        return ns, ok
    m = np.ascontiguousarray(raw).view(np.uint8).reshape(n, width)
    length = np.count_nonzero(m, axis=1)
    is_dot = m == _DOT
    dot = np.where(is_dot.any(axis=1), is_dot.argmax(axis=1), length)
    key = length * (width + 1) + dot
    digits = m.astype(np.int64) - _DIGIT0
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    bounds = np.flatnonzero(np.diff(sorted_key)) + 1
    for rows in np.split(order, bounds):
        size, dot_col = divmod(int(key[rows[0]]), width + 1)
        if size == 0:
            continue
        cols = np.arange(size)
        exp = np.where(cols < dot_col, dot_col - cols + 2, dot_col - cols + 3)
        is_digit_col = cols != dot_col
        if exp[is_digit_col].max(initial=0) > 18:
            continue  # beyond int64 ns: leave to the exact slow path
        sub = digits[rows, :size]
        digit_part = sub[:, is_digit_col]
        valid = ((digit_part >= 0) & (digit_part <= 9)).all(axis=1)
        if dot_col < size:
            valid &= sub[:, dot_col] == _DOT - _DIGIT0
        if not is_digit_col.any():
            continue
        if exp.max(initial=0) == 18:
            valid &= sub[:, 0] <= 8  # keeps the sum inside int64
        weights = np.where(is_digit_col & (exp >= 0), _POW10[np.clip(exp, 0, 18)], 0)
        value = sub @ weights
        round_col = np.flatnonzero(is_digit_col & (exp == -1))
        if len(round_col):
            value += sub[:, round_col[0]] >= 5
        ns[rows] = np.where(valid, value, 0)
        ok[rows] = valid
    return ns, ok


def _one(value: Any) -> int | None:
    """Exact ns of one JSON time value, or None if it is unusable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value * 1000 if -_MAX_US <= value <= _MAX_US else None
    if isinstance(value, float):
        if value != value or abs(value) > _MAX_US:
            return None
        return round(value * 1000)
    if isinstance(value, str):
        try:
            d = Decimal(value.strip())
        except (InvalidOperation, ValueError):
            return None
        if not d.is_finite() or abs(d) > _MAX_US:
            return None
        return int((d * 1000).to_integral_value(rounding="ROUND_HALF_UP"))
    return None


def _slow(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    n = len(values)
    ns = np.zeros(n, np.int64)
    ok = np.zeros(n, bool)
    for i, v in enumerate(values):
        r = _one(v)
        if r is not None:
            ns[i] = r
            ok[i] = True
    return ns, ok


def one_us_to_ns(value: Any) -> int | None:
    """Exact ns of a single JSON time value in µs, or None if unusable."""
    return _one(value)
