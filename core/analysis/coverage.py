"""Which of several sets of intervals cover each instant, and for how long within any window.

The breakdown asks many questions of the same few sets (device compute, communication, host
busy ...): how long was communication not covered by compute between t0 and t1? A
:class:`Coverage` cuts the time axis once at every boundary of every set into elementary
segments, each with a bit per set that covers it. A question is a predicate on those bits;
its answer for any window is a difference of two cumulative sums, so that a thousand steps or
the thousand buckets of the utilisation view cost a binary search each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

Predicate = Callable[[Mapping[str, np.ndarray]], np.ndarray]


def merge(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals [start, end) as sorted, disjoint intervals (empty ones gone)."""
    keep = end > start
    start, end = start[keep], end[keep]
    if not len(start):
        return start.astype(np.int64), end.astype(np.int64)
    order = np.argsort(start, kind="stable")
    s, e = start[order].astype(np.int64), end[order].astype(np.int64)
    reach = np.maximum.accumulate(e)
    begins = np.flatnonzero(np.concatenate([[True], s[1:] > reach[:-1]]))
    ends = reach[np.concatenate([begins[1:] - 1, [len(s) - 1]])]
    return s[begins], ends


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (a sort and a compare: faster than np.unique's hashing on
    millions of int64)."""
    values = np.sort(values)
    return values[np.concatenate([[True], values[1:] != values[:-1]])] if len(values) else values


def covered(points: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per point, whether one of the disjoint sorted intervals [starts, ends) holds it."""
    if not len(starts):
        return np.zeros(len(points), bool)
    at = np.searchsorted(starts, points, side="right") - 1
    return (at >= 0) & (ends[np.maximum(at, 0)] > points)


class Coverage:
    """Named sets of intervals over one time axis, cut into elementary segments.

    `sets` maps a name to (start, end) arrays of int64 ns; the intervals of one set may
    overlap. :meth:`measure` answers how long a predicate over the sets holds in windows.
    """

    def __init__(self, sets: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> None:
        merged = {name: merge(np.asarray(s), np.asarray(e)) for name, (s, e) in sets.items()}
        cuts = [x for s, e in merged.values() for x in (s, e)]
        self.bounds = _distinct(np.concatenate(cuts)) if cuts else np.zeros(0, np.int64)
        seg_start = self.bounds[:-1]
        self.lengths = np.diff(self.bounds)
        self.bits = {name: covered(seg_start, s, e) for name, (s, e) in merged.items()}
        self._sums: dict[str, np.ndarray] = {}

    def define(self, name: str, predicate: Predicate) -> None:
        """Name a predicate over the sets' bits (``lambda b: b["comm"] & ~b["compute"]``)."""
        held = np.asarray(predicate(self.bits), bool)
        self._sums[name] = np.concatenate([[0], np.cumsum(self.lengths * held)])
        self.bits[name] = held

    def measure(self, name: str, lo: np.ndarray | int, hi: np.ndarray | int) -> np.ndarray:
        """How long `name` (a set or a defined predicate) holds in each window [lo, hi), ns."""
        if name not in self._sums:
            held = self.bits[name]
            self._sums[name] = np.concatenate([[0], np.cumsum(self.lengths * held)])
        return self._at(name, np.asarray(hi)) - self._at(name, np.asarray(lo))

    def stretches(self, name: str, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """The maximal stretches [start, end) within [lo, hi) where `name` holds."""
        self.measure(name, lo, lo)  # makes sure `name` has its bits
        held = self.bits[name]
        seg_lo, seg_hi = self.bounds[:-1], self.bounds[1:]
        keep = held & (seg_hi > lo) & (seg_lo < hi)
        starts, ends = merge(np.maximum(seg_lo[keep], lo), np.minimum(seg_hi[keep], hi))
        return starts, ends

    def _at(self, name: str, t: np.ndarray) -> np.ndarray:
        """How long `name` held from the first boundary up to each time t."""
        sums, bounds = self._sums[name], self.bounds
        if len(bounds) < 2:
            return np.zeros(np.shape(t), np.int64)
        t = np.clip(t, bounds[0], bounds[-1])
        seg = np.clip(np.searchsorted(bounds, t, side="right") - 1, 0, len(bounds) - 2)
        partial = np.where(self.bits[name][seg], t - bounds[seg], 0)
        return sums[seg] + partial
