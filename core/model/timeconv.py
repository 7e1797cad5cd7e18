"""Exact conversion of Trace Event Format times to int64 nanoseconds.

Trace times are microseconds written as JSON integers, decimal floats or numeric strings
("1780676244313289.000"). A float64 holds epoch microseconds only to 0.25 us, so decimals are
converted from their text: the JSON decoder hands float literals over as strings, and they are
parsed here, vectorised, into integer nanoseconds (rounded half away from zero past 1 ns).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np

_POW10 = 10 ** np.arange(19, dtype=np.int64)
_MAX_US = 9_000_000_000_000_000  # µs; its ns stay inside int64
# The longest slice taken as written, 26 days: longer is damage (no profiler captures that
# long; thousands of such slices could otherwise sum past int64).
MAX_SLICE_US = 2.25e12
MAX_SLICE_NS = 2_250_000_000_000_000
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
        return _text_to_ns(values)  # the usual case: all decimal text
    except (TypeError, UnicodeEncodeError):
        pass
    if None in values:  # missing times (metadata events): convert the others as a whole
        present = [i for i, v in enumerate(values) if v is not None]
        ns = np.zeros(n, np.int64)
        ok = np.zeros(n, bool)
        if present:
            ns[present], ok[present] = us_to_ns([values[i] for i in present])
        return ns, ok
    try:
        arr = np.array(values)
    except (OverflowError, ValueError, TypeError):
        return _slow(values)
    kind = arr.dtype.kind
    if kind in "iu" and arr.ndim == 1:
        ok = (arr >= -_MAX_US) & (arr <= _MAX_US)
        ns = np.where(ok, arr, 0).astype(np.int64) * 1000
        return ns, ok
    if kind == "U" and arr.ndim == 1 and _all_text_or_int(values):  # numbers mixed with text
        try:
            return _text_to_ns([v if isinstance(v, str) else str(v) for v in values])
        except UnicodeEncodeError:
            pass
    if kind == "f" and arr.ndim == 1:
        ok = np.isfinite(arr) & (np.abs(arr) <= _MAX_US)
        ns = np.rint(np.where(ok, arr, 0.0) * 1000.0).astype(np.int64)
        return ns, ok
    return _slow(values)


def _text_to_ns(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised parse of a list of strings; raises TypeError if one is not a string."""
    joined = "".join(values).encode("ascii")
    lengths = np.fromiter(map(len, values), np.int64, len(values))
    return _finish_text(parse_decimal_us(_char_matrix(joined, lengths), lengths), values)


def _all_text_or_int(values: list[Any]) -> bool:
    return all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values)


def _finish_text(parsed: tuple[np.ndarray, np.ndarray], values: list[Any],
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Give each string the vectorised parser refused (exponents, signs) the exact slow path."""
    ns, ok = parsed
    if not ok.all():
        for i in np.flatnonzero(~ok).tolist():
            v = _one(values[i])
            if v is not None:
                ns[i] = v
                ok[i] = True
    return ns, ok


def _char_matrix(joined: bytes, lengths: np.ndarray) -> np.ndarray:
    """The concatenated strings as an (n, longest) uint8 matrix, zero padded: one gather of
    every row's `longest` bytes from its start, then the bytes past its end zeroed (a
    scatter by row and column indices costs several times more)."""
    n = len(lengths)
    width = int(lengths.max()) if n else 0
    flat = np.frombuffer(joined, np.uint8)
    if n and int(lengths.min()) == width:
        return flat.reshape(n, width)
    cols = np.arange(width)
    index = (np.cumsum(lengths) - lengths)[:, None] + cols
    np.minimum(index, len(flat) - 1, out=index)  # the last row's padding reads past the end
    m = flat[index]
    m[cols >= lengths[:, None]] = 0
    return m


def parse_decimal_us(m: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse unsigned decimal strings (µs), as a zero-padded uint8 matrix, into int64 ns.

    Rows are grouped by (length, position of the dot); each group is one matrix product of
    its digits with the powers of ten of their columns. Rows that are not plain unsigned
    decimals (signs, exponents, spaces) come back with ``ok`` False.
    """
    n, width = m.shape
    ns = np.zeros(n, np.int64)
    ok = np.zeros(n, bool)
    if n == 0 or width == 0:
        return ns, ok
    is_dot = m == _DOT
    dot = is_dot.argmax(axis=1)
    dot = np.where(m[np.arange(n), dot] == _DOT, dot, length)
    is_digit = (m >= _DIGIT0) & (m <= _DIGIT0 + 9)
    key = length * (width + 1) + dot
    k0 = int(key[0])
    groups = [np.arange(n)] if (key == k0).all() else None
    if groups is None:
        order = np.argsort(key, kind="stable")
        groups = np.split(order, np.flatnonzero(np.diff(key[order])) + 1)
    for rows in groups:
        size, dot_col = divmod(int(key[rows[0]]), width + 1)
        cols = np.arange(size)
        exp = np.where(cols < dot_col, dot_col - cols + 2, dot_col - cols + 3)
        is_digit_col = cols != dot_col
        if size == 0 or not is_digit_col.any() or exp[is_digit_col].max() > 18:
            continue  # empty, a lone dot, or beyond int64 ns: the exact slow path decides
        whole = len(rows) == n
        chars = m[:, :size] if whole else m[rows, :size]
        digit_ok = is_digit[:, :size] if whole else is_digit[rows, :size]
        valid = digit_ok[:, is_digit_col].all(axis=1)
        if exp.max() == 18:
            valid &= chars[:, 0] <= _DIGIT0 + 8  # keeps the sum inside int64
        decimals = size - dot_col - 1
        if _double_text(dot_col, decimals):
            digits = chars.astype(np.int64) - _DIGIT0
            whole = digits[:, :dot_col] @ _POW10[dot_col - 1::-1]
            fraction = digits[:, dot_col + 1:] @ _POW10[decimals - 1::-1]
            value = _double_ns(whole, fraction, decimals)
        else:
            weights = np.where(is_digit_col & (exp >= 0), _POW10[np.clip(exp, 0, 18)], 0)
            digits = chars.astype(np.int64) - _DIGIT0
            value = digits @ weights
            round_col = np.flatnonzero(is_digit_col & (exp == -1))
            if len(round_col):
                value += digits[:, round_col[0]] >= 5
        ns[rows] = np.where(valid, value, 0)
        ok[rows] = valid
    return ns, ok


# From 13 integer digits on (>= 2^53 ns), a float64 cannot hold a µs time to the ns, so a
# writer that printed a double's shortest text there ("1698316426434084.2", meaning the
# double ...084.25) is read back as that double. A double's shortest text has at most 17
# significant digits: a text with more ("1700000000000000.1234567") is no double's, and is
# read exactly, as are texts with exactly three decimals (the exact ns format of Kineto,
# msprof and torch_npu). Exact reading rounds half away from zero at the ns.
_DOUBLE_DIGITS = 13
_DOUBLE_SIGNIFICANT = 17


def _double_text(integer_digits: int, decimals: int) -> bool:
    """Whether a µs text of this shape is read as the double it may be the shortest text of."""
    return (integer_digits >= _DOUBLE_DIGITS and decimals not in (-1, 0, 3)
            and integer_digits + decimals <= _DOUBLE_SIGNIFICANT)


def _double_ns(whole: np.ndarray, fraction: np.ndarray, decimals: int) -> np.ndarray:
    """ns of the float64 nearest to whole.fraction µs (the double a writer printed).

    The integer part is exact in a double; adding the fraction rounds once to the double's
    grid; what lies above the integer part is then exact and scaled to ns.
    """
    whole_f = whole.astype(np.float64)
    us = whole_f + fraction / float(10 ** decimals)
    return whole * 1000 + np.rint((us - whole_f) * 1000.0).astype(np.int64)


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
        if not value.isascii():  # Decimal would take other scripts' digits
            return None
        try:
            d = Decimal(value.strip())
            if not d.is_finite() or abs(d) > _MAX_US:  # abs() overflows past 1e999999
                return None
        except (ArithmeticError, ValueError):  # decimal's InvalidOperation and Overflow
            return None
        whole, dot, decimals = value.strip().partition(".")
        if (dot and whole.isdigit() and decimals.isdigit()
                and _double_text(len(whole), len(decimals))):
            # a double's shortest text: read as that double
            return int(_double_ns(np.array([int(whole)]), np.array([int(decimals)]),
                                  len(decimals))[0])
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
