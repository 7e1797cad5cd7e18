"""Which of several sets of intervals cover each instant, and for how long within any window.

The breakdown asks many questions of the same few sets (device compute, communication, host
busy ...): how long was communication not covered by compute between t0 and t1? A
:class:`Coverage` cuts the time axis once at every boundary of every set into elementary
segments, each with a bit per set that covers it. A question is a predicate on those bits;
its answer for any window is a difference of two cumulative sums, so that a thousand steps or
the thousand buckets of the utilisation view cost a binary search each.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import numpy as np

Predicate = Callable[[Mapping[str, np.ndarray]], np.ndarray]


def merge(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals [start, end) as sorted, disjoint intervals (empty ones gone)."""
    keep = end > start
    if not keep.all():
        start, end = start[keep], end[keep]
    del keep
    if not len(start):
        return start.astype(np.int64), end.astype(np.int64)
    # Sorted by start already where the set lies on one track: then no sort, and no copy.
    if not (start[1:] >= start[:-1]).all():
        order = np.argsort(start, kind="stable")
        start, end = start[order], end[order]
        del order
    s = start.astype(np.int64, copy=False)
    reach = np.maximum.accumulate(end.astype(np.int64))  # a copy: `end` may be the caller's
    begins = np.flatnonzero(np.concatenate([[True], s[1:] > reach[:-1]]))
    ends = reach[np.concatenate([begins[1:] - 1, [len(s) - 1]])]
    return s[begins], ends


# Slices taken at a time by merge_slices: its temporaries stay a few MB however many slices
# the trace holds (all at once, ~8 arrays of 8 bytes a slice: 120 MB at 2 M host ops).
MERGE_CHUNK = 1 << 18


def merge_slices(start: np.ndarray, dur: np.ndarray, mask: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`merge` of the slices in `mask` (a bool per slice; `start` and `dur` the index's
    columns), MERGE_CHUNK slices at a time: each chunk's union, then the union of those
    (nested slices on a track make a chunk's union much shorter than the chunk)."""
    starts, ends = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for a in range(0, len(mask), MERGE_CHUNK):
        rows = np.flatnonzero(mask[a: a + MERGE_CHUNK]) + a
        if len(rows):
            at = start[rows]
            lo, hi = merge(at, at + dur[rows])
            starts.append(lo)
            ends.append(hi)
    if len(starts) == 2:  # one chunk: its union is the union
        return starts[1], ends[1]
    return merge(np.concatenate(starts), np.concatenate(ends))


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (a sort and a compare: faster than np.unique's hashing on
    millions of int64). `values` is sorted in place."""
    values.sort()
    return values[np.concatenate([[True], values[1:] != values[:-1]])] if len(values) else values


def _segments_held(bounds: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per elementary segment between consecutive `bounds`, whether one of the disjoint,
    separated intervals [starts, ends) (whose ends are all among the bounds) covers it: +1
    where an interval starts, -1 where it ends, and a running sum."""
    n = max(len(bounds) - 1, 0)
    if not len(starts) or not n:
        return np.zeros(n, bool)
    step = np.zeros(n + 1, np.int8)
    step[np.searchsorted(bounds, starts)] = 1
    step[np.searchsorted(bounds, ends)] = -1
    return np.cumsum(step[:-1], dtype=np.int8).astype(bool)


class Coverage:
    """Named sets of intervals over one time axis, cut into elementary segments.

    `sets` maps a name to (start, end) arrays of int64 ns; the intervals of one set may
    overlap. :meth:`define` names a predicate over the sets; :meth:`measure` answers how long
    a set or predicate holds in windows. Each answer comes from the stretches where the name
    holds and their running total (built on first use, as long as the stretches are few).

    The bits of each name are kept packed, eight segments a byte (a profile's coverage lives
    as long as its index, with a name for every set and predicate); predicates combine them
    packed (``&``, ``|``, ``~`` act on the bytes as on the bits). The stretches are kept for
    the HELD names asked last only (24 bytes a stretch, up to a million of them a name): ask
    for many windows of one name at once, not for many names one window at a time.
    """

    HELD = 2

    def __init__(self, sets: Mapping[str, tuple[np.ndarray, np.ndarray]],
                 merged: bool = False) -> None:
        """`merged`: each set is already :func:`merge`'s disjoint sorted intervals."""
        if not merged:
            sets = {name: merge(np.asarray(s), np.asarray(e)) for name, (s, e) in sets.items()}
        cuts = [x for s, e in sets.values() for x in (s, e)]
        self.bounds = _distinct(np.concatenate(cuts)) if cuts else np.zeros(0, np.int64)
        del cuts
        self.n_segments = max(len(self.bounds) - 1, 0)
        self.bits = {name: np.packbits(_segments_held(self.bounds, s, e))
                     for name, (s, e) in sets.items()}
        self._held: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()

    def define(self, name: str, predicate: Predicate) -> None:
        """Name a predicate over the sets' packed bits (``lambda b: b["comm"] &
        ~b["compute"]``: bitwise operators only)."""
        self.bits[name] = np.asarray(predicate(self.bits), np.uint8)

    def measure(self, name: str, lo: np.ndarray | int, hi: np.ndarray | int) -> np.ndarray:
        """How long `name` (a set or a defined predicate) holds in each window [lo, hi), ns."""
        return self._at(name, np.asarray(hi)) - self._at(name, np.asarray(lo))

    def stretches(self, name: str, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """The maximal stretches [start, end) within [lo, hi) where `name` holds."""
        starts, ends, _ = self._stretches(name)
        a = np.searchsorted(ends, lo, side="right")
        b = np.searchsorted(starts, hi, side="left")
        return np.maximum(starts[a:b], lo), np.minimum(ends[a:b], hi)

    def _stretches(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where `name` holds, as disjoint sorted stretches, and the total held before each."""
        with self._lock:
            found = self._held.pop(name, None)
        if found is None:
            held = np.unpackbits(self.bits[name], count=self.n_segments)
            edge = np.diff(np.concatenate([[False], held, [False]]).astype(np.int8))
            del held
            starts = self.bounds[np.flatnonzero(edge == 1)]
            ends = self.bounds[np.flatnonzero(edge == -1)]
            del edge
            before = np.concatenate([[0], np.cumsum(ends - starts)])
            found = (starts, ends, before)
        with self._lock:  # the app's workers ask at once
            while len(self._held) >= self.HELD:  # the name asked longest ago goes
                self._held.pop(next(iter(self._held)))
            self._held[name] = found  # the last asked: the dict's end
        return found

    def _at(self, name: str, t: np.ndarray) -> np.ndarray:
        """How long `name` held before each time t."""
        starts, ends, before = self._stretches(name)
        if not len(starts):
            return np.zeros(np.shape(t), np.int64)
        k = np.searchsorted(starts, t, side="right") - 1
        at = np.maximum(k, 0)
        held = before[at] + np.minimum(t, ends[at]) - starts[at]
        return np.where(k >= 0, held, 0)
