"""Natural order of names: rank 2 before rank 10, device_2 before device_10."""

from __future__ import annotations

import re

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[str | int, ...], str]:
    """A sort key comparing runs of digits as numbers ("rank 2" < "rank 10").

    The split alternates text and digits, so ints are only ever compared with ints. The text
    itself breaks ties between names that differ only in leading zeros ("rank 02", "rank 2").
    """
    # \d matches decimal digits only (not "²", which int() refuses).
    parts = _DIGITS.split(text)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), text
