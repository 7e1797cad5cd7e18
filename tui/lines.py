"""The timeline's lines: process headers, slice rows, counters and instants, in display order.

Built once per change of the view's layout (a group collapsed, a track pinned or hidden), not
per frame. Pinned tracks come first, then each process (rank or device group first, as the
index orders them) with its tracks; hidden tracks are left out; a collapsed process keeps its
header line only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proftui.core.index import TraceIndex
from proftui.core.rows import RowIndex

PROCESS, SLICES, COUNTER, INSTANTS = "process", "slices", "counter", "instants"


@dataclass(frozen=True)
class Line:
    """One line of the timeline. `item` is the row id (slices), the counter series id
    (counter) or the track id (instants); -1 for a process header."""

    kind: str
    process: int
    track: int
    item: int
    label: str


@dataclass
class LayoutState:
    """What the user changed about the layout."""

    collapsed: set[int]
    pinned: list[int]
    hidden: set[int]

    @classmethod
    def empty(cls) -> LayoutState:
        return cls(set(), [], set())


def build_lines(index: TraceIndex, rows: RowIndex, state: LayoutState) -> list[Line]:
    """All lines of the timeline for this layout state."""
    a = index.arrays
    track_process = a["tracks.process"]
    series_of_track = _group(a["counters.series_track"], index.n_tracks)
    instant_counts = np.bincount(a["instants.track"], minlength=index.n_tracks)
    lines: list[Line] = []

    def track_lines(t: int, process: int) -> None:
        label = index.track_label(t)
        n_rows = int(rows.track_first_row[t + 1] - rows.track_first_row[t])
        for depth in range(n_rows):
            lines.append(Line(SLICES, process, t, int(rows.track_first_row[t]) + depth,
                              label if depth == 0 else ""))
        if instant_counts[t]:
            lines.append(Line(INSTANTS, process, t, t, label if n_rows == 0 else "  instants"))
        for series in series_of_track.get(t, ()):
            lines.append(Line(COUNTER, process, t, series,
                              index.strings[a["counters.series_name"][series]]))

    for t in state.pinned:
        if t not in state.hidden:
            track_lines(t, int(track_process[t]))
    pinned = set(state.pinned)
    by_process = _group(track_process, len(a["processes.pid"]))
    for p in range(len(a["processes.pid"])):
        tracks = [t for t in by_process.get(p, ()) if t not in state.hidden and t not in pinned]
        if not tracks:
            continue
        lines.append(Line(PROCESS, p, -1, -1, index.process_label(p)))
        if p in state.collapsed:
            continue
        for t in tracks:
            track_lines(t, p)
    for t in np.flatnonzero(track_process < 0).tolist():
        if t not in state.hidden and t not in pinned:
            track_lines(t, -1)
    return lines


def _group(keys: np.ndarray, n: int) -> dict[int, list[int]]:
    """Positions of `keys` grouped by key value (in order)."""
    out: dict[int, list[int]] = {}
    for i, k in enumerate(keys.tolist()):
        out.setdefault(k, []).append(i)
    return out
