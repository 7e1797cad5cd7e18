"""Small array helpers shared by core and tui."""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-D array: `np.unique(values)` without its first call's
    import of numpy.ma (25 ms on the way to the first frame)."""
    ordered = np.sort(values, kind="stable")
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]
