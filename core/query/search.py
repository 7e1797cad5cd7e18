"""Finding slices by name: substring (case-insensitive) or regular expression."""

from __future__ import annotations

import re

import numpy as np

from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex


def compile_pattern(text: str, regex: bool = False) -> re.Pattern[str]:
    """A case-insensitive pattern: `text` as a substring, or as a regular expression.

    Raises ProftuiError with a readable message for an invalid expression.
    """
    if not regex:
        return re.compile(re.escape(text), re.IGNORECASE)
    try:
        return re.compile(text, re.IGNORECASE)
    except re.error as exc:
        raise ProftuiError(f"not a valid regular expression: {exc}") from None


def pattern_of(text: str) -> re.Pattern[str]:
    """What a person typed as a pattern: `/regex/` a regular expression, anything else a
    substring; case-insensitive either way (see :func:`compile_pattern`)."""
    regex = len(text) > 2 and text.startswith("/") and text.endswith("/")
    return compile_pattern(text[1:-1] if regex else text, regex)


def find_slices(index: TraceIndex, pattern: re.Pattern[str]) -> np.ndarray:
    """Indices of the slices whose name matches, ordered by start time (then track).

    Names are matched once each in the string table, not once per slice.
    """
    names = index.col("slices.name")
    if len(names) == 0:
        return np.zeros(0, np.int64)
    used = np.flatnonzero(np.bincount(names))
    strings = index.strings
    wanted = np.zeros(len(used) and int(used[-1]) + 1, bool)
    for i in used.tolist():
        if pattern.search(strings[i]):
            wanted[i] = True
    found = np.flatnonzero(wanted[names])
    return found[np.argsort(index.col("slices.start")[found], kind="stable")]
