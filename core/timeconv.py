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
        ns, ok = _parse_aligned(raw)
        if ns is None:
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


def _parse_aligned(raw: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """Fast path: every string has the same length and the dot in the same column."""
    n, width = len(raw), raw.dtype.itemsize
    if n == 0 or width == 0 or width > 20:
        return None, np.zeros(0, bool)
    m = np.ascontiguousarray(raw).view(np.uint8).reshape(n, width)
    first_row = m[0]
    if (first_row == 0).any() or (m[:, -1] == 0).any():
        return None, np.zeros(0, bool)  # not all of full width
    dots = np.flatnonzero(first_row == _DOT)
    dot = int(dots[0]) if len(dots) == 1 else width
    digits = m.astype(np.int64) - _DIGIT0
    cols = np.arange(width)
    exp = np.where(cols < dot, dot - cols + 2, dot - cols + 3)
    digit_cols = (cols != dot)
    if dot < width and not (m[:, dot] == _DOT).all():
        return None, np.zeros(0, bool)
    check = digits[:, digit_cols]
    if (check < 0).any() or (check > 9).any() or (exp[digit_cols] > 18).any():
        return None, np.zeros(0, bool)
    weights = np.where(digit_cols & (exp >= 0), _POW10[np.clip(exp, 0, 18)], 0)
    value = digits @ weights
    rounding = digit_cols & (exp == -1)
    if rounding.any():
        value += digits[:, np.flatnonzero(rounding)[0]] >= 5
    return value, np.ones(n, bool)


def parse_decimal_us(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse an ``S`` array of plain decimal strings (µs) into int64 ns, vectorised."""
    n = len(raw)
    width = raw.dtype.itemsize
    if width == 0:
        return np.zeros(n, np.int64), np.zeros(n, bool)
    m = np.ascontiguousarray(raw).view(np.uint8).reshape(n, width)
    cols = np.arange(width)
    nonzero = m != 0
    length = nonzero.sum(axis=1)
    signed = (m[:, 0] == _MINUS) | (m[:, 0] == _PLUS)
    first = signed.astype(np.intp)
    is_dot = m == _DOT
    n_dots = is_dot.sum(axis=1)
    dot = np.where(n_dots > 0, is_dot.argmax(axis=1), length)
    is_digit = (m >= _DIGIT0) & (m <= _DIGIT0 + 9)
    inside = (cols >= first[:, None]) & (cols < length[:, None])
    n_digits = (is_digit & inside).sum(axis=1)
    ok = (
        (n_dots <= 1)
        & (n_digits > 0)
        & ~np.any(inside & ~(is_digit | is_dot), axis=1)
        # no interior NUL bytes: the used bytes are exactly the first `length`
        & ~np.any(~nonzero & (cols < length[:, None]), axis=1)
    )
    # Decimal exponent of each column in nanoseconds (µs * 1000).
    exp = np.where(cols < dot[:, None], dot[:, None] - cols + 2, dot[:, None] - cols + 3)
    digits = m.astype(np.int64) - _DIGIT0
    used = inside & is_digit
    big = used & (exp >= 18) & (digits > 0)
    ok &= ~np.any(big & ((exp > 18) | (digits > 8)), axis=1)
    take = used & (exp >= 0) & (exp <= 18)
    value = np.where(take, digits * _POW10[np.clip(exp, 0, 18)], 0).sum(axis=1)
    round_up = np.any(used & (exp == -1) & (digits >= 5), axis=1)
    value += round_up
    value = np.where(m[:, 0] == _MINUS, -value, value)
    value[~ok] = 0
    return value, ok


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
