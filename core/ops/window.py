"""Small questions to the index: which slices lie in a time window (an iteration, a range)."""

from __future__ import annotations

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.ops.iterations import Iteration


def slices_in_window(index: TraceIndex, start_ns: int, end_ns: int,
                     tracks: np.ndarray | None = None, whole: bool = False) -> np.ndarray:
    """Indices of the slices overlapping [start_ns, end_ns) (with `whole`, inside it).

    `tracks`, when given, keeps only slices of those tracks.
    """
    start = index.col("slices.start")
    end = start + index.col("slices.dur")
    lo, hi = np.int64(start_ns), np.int64(end_ns)
    inside = (start >= lo) & (start < hi)
    mask = inside & (end <= hi) if whole else (start < hi) & ((end > lo) | inside)
    if tracks is not None:
        mask &= np.isin(index.col("slices.track"), tracks)
    return np.flatnonzero(mask)


def slices_of_iteration(index: TraceIndex, iteration: Iteration) -> np.ndarray:
    """The slices of an iteration's group that overlap its window."""
    if iteration.start_ns < 0:
        return np.zeros(0, np.int64)
    groups = index.col("processes.group")
    wanted = index.strings.find(iteration.group)
    processes = np.flatnonzero(groups == wanted)
    tracks = np.flatnonzero(np.isin(index.col("tracks.process"), processes))
    return slices_in_window(index, iteration.start_ns, iteration.end_ns, tracks)
