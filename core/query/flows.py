"""Flows as a view draws them: each edge from its source slice's end to its target's start."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proftui.core.model.index import TraceIndex


@dataclass(frozen=True)
class FlowWindow:
    """Edges in view: the `edges` (indices into `flows.*`) nearest a time, and how many edges
    in all overlap the window."""

    edges: np.ndarray
    total: int


class FlowEnds:
    """The edges of an index that join two slices, with where each is drawn: the source's end
    (`src_end`) and the target's start (`dst_start`), each less its track's shift (ranks
    aligned; `track_shift` None: every track on its own clock).

    Built once per index and alignment. The edges sorted by their midpoint, their earlier end
    and their later end answer "the N edges nearest a time" and "how many edges overlap a
    window" with binary searches, so that a frame costs the same on a trace of 10 edges and of
    10 M."""

    def __init__(self, index: TraceIndex, track_shift: np.ndarray | None = None) -> None:
        a = index.arrays
        src, dst = a["flows.src_slice"], a["flows.dst_slice"]
        self.edge = np.flatnonzero((src >= 0) & (dst >= 0))
        self.src = src[self.edge].astype(np.int64)
        self.dst = dst[self.edge].astype(np.int64)
        start, dur, track = a["slices.start"], a["slices.dur"], a["slices.track"]
        self.src_end = start[self.src] + dur[self.src]
        self.dst_start = start[self.dst].astype(np.int64)
        self.gap = self.dst_start - self.src_end  # the real delay, whatever the shifts
        if track_shift is not None and len(track_shift):
            self.src_end = self.src_end - track_shift[track[self.src]]
            self.dst_start = self.dst_start - track_shift[track[self.dst]]
        self._sorted: tuple[np.ndarray, ...] | None = None

    def __len__(self) -> int:
        return len(self.edge)

    def of_slice(self, i: int) -> np.ndarray:
        """Positions (into this object's columns) of the edges out of and into slice `i`."""
        return np.flatnonzero((self.src == i) | (self.dst == i))

    def _orders(self) -> tuple[np.ndarray, ...]:
        """(positions by midpoint, midpoints sorted, earlier ends sorted, later ends sorted),
        made on the first window asked for."""
        if self._sorted is None:
            lo = np.minimum(self.src_end, self.dst_start)
            hi = np.maximum(self.src_end, self.dst_start)
            mid = lo + (hi - lo) // 2
            by_mid = np.argsort(mid, kind="stable")
            self._sorted = (by_mid, mid[by_mid], np.sort(lo), np.sort(hi))
        return self._sorted

    def in_window(self, start_ns: int, end_ns: int, near_ns: int, n: int) -> FlowWindow:
        """The (at most) `n` edges overlapping [start_ns, end_ns) whose midpoints are nearest
        `near_ns`, nearest first, and the number of edges overlapping the window."""
        if not len(self):
            return FlowWindow(np.zeros(0, np.int64), 0)
        by_mid, mid, lo, hi = self._orders()
        before = int(np.searchsorted(hi, start_ns, side="left"))  # over before the start
        after = len(lo) - int(np.searchsorted(lo, end_ns, side="left"))  # begun at the end
        total = len(lo) - before - after
        # The n nearest midpoints lie within n places of the time on either side.
        at = int(np.searchsorted(mid, near_ns))
        around = by_mid[max(at - n, 0): at + n]
        lo_of = np.minimum(self.src_end[around], self.dst_start[around])
        hi_of = np.maximum(self.src_end[around], self.dst_start[around])
        around = around[(hi_of >= start_ns) & (lo_of < end_ns)]
        mids = (np.minimum(self.src_end[around], self.dst_start[around])
                + np.abs(self.src_end[around] - self.dst_start[around]) // 2)
        nearest = np.argsort(np.abs(mids - near_ns), kind="stable")[:n]
        return FlowWindow(around[nearest], total)
