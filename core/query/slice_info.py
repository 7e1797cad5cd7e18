"""What the details pane says of one slice: names, times, self time, parents and flows."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.query.rows import FENCE, RowIndex
from proftui.core.query.self_time import self_times

MAX_FLOWS = 50  # partners listed per direction; the count says how many there are


@dataclass
class SliceInfo:
    """One slice, described. Times in ns; `start_ns` is absolute (the trace's clock)."""

    slice: int
    name: str
    category: str
    process: str
    track: str
    start_ns: int
    dur_ns: int
    self_ns: int
    depth: int
    parents: list[int] = field(default_factory=list)  # innermost first
    flows_out: list[int] = field(default_factory=list)  # slices this one's flows lead to
    flows_in: list[int] = field(default_factory=list)  # slices whose flows lead here
    n_flows_out: int = 0
    n_flows_in: int = 0


def row_of(rows: RowIndex, index: TraceIndex, i: int) -> int:
    """The row id of slice `i`."""
    a = index.arrays
    return int(rows.track_first_row[int(a["slices.track"][i])] + int(a["slices.depth"][i]))


def slice_at(index: TraceIndex, rows: RowIndex, row: int, t_ns: int) -> int:
    """The slice of `row` running at `t_ns` (start <= t < end, or a zero-length one at t),
    else -1."""
    p = _last_started(index, rows, row, t_ns)
    if p < 0:
        return -1
    i = int(rows.order[p])
    start, dur = int(index.arrays["slices.start"][i]), int(index.arrays["slices.dur"][i])
    return i if t_ns < start + dur or (dur == 0 and start == t_ns) else -1


def nearest_slice(index: TraceIndex, rows: RowIndex, row: int, t_ns: int) -> int:
    """The slice of `row` running at `t_ns`, else the one closest to it in time; -1 if the row
    is empty."""
    lo = int(rows.first[row])
    hi = lo + int(rows.count[row])
    if lo == hi:
        return -1
    p = _last_started(index, rows, row, t_ns)
    candidates = [q for q in (p, p + 1) if lo <= q < hi] or [lo]
    start = index.arrays["slices.start"]
    dur = index.arrays["slices.dur"]

    def distance(q: int) -> int:
        i = int(rows.order[q])
        s, e = int(start[i]), int(start[i]) + int(dur[i])
        return 0 if s <= t_ns < e else min(abs(s - t_ns), abs(e - t_ns))

    return int(rows.order[min(candidates, key=distance)])


def _last_started(index: TraceIndex, rows: RowIndex, row: int, t_ns: int) -> int:
    """Position (in rows.order) of the last slice of `row` starting at or before t, or -1."""
    lo = int(rows.first[row])
    hi = lo + int(rows.count[row])
    # The fence posts (every FENCE-th start of the row) narrow the search to FENCE slices.
    fences = rows.fence_start[rows.fence_first[row]: rows.fence_first[row + 1]]
    j = int(np.searchsorted(fences, np.int64(t_ns), side="right"))
    if j == 0:
        return -1
    a = lo + (j - 1) * FENCE
    b = min(a + FENCE, hi)
    starts = index.arrays["slices.start"][rows.order[a:b]]
    return a + int(np.searchsorted(starts, np.int64(t_ns), side="right")) - 1


def neighbour(rows: RowIndex, index: TraceIndex, i: int, step: int) -> int:
    """The slice `step` places after (or before) slice `i` in its row, or -1."""
    row = row_of(rows, index, i)
    lo = int(rows.first[row])
    hi = lo + int(rows.count[row])
    p = _last_started(index, rows, row, int(index.arrays["slices.start"][i]))
    while p >= lo and int(rows.order[p]) != i:  # equal starts: find `i` itself
        p -= 1
    q = p + step
    return int(rows.order[q]) if lo <= q < hi and p >= lo else -1


def describe_slice(index: TraceIndex, rows: RowIndex, i: int) -> SliceInfo:
    """Everything the details pane shows of slice `i`, except its args (read lazily)."""
    a, s = index.arrays, index.strings
    track = int(a["slices.track"][i])
    start, dur = int(a["slices.start"][i]), int(a["slices.dur"][i])
    depth = int(a["slices.depth"][i])
    process = int(a["tracks.process"][track])
    info = SliceInfo(
        slice=i, name=s[a["slices.name"][i]], category=s[a["slices.cat"][i]],
        process=index.process_label(process) if process >= 0 else "",
        track=index.track_label(track), start_ns=start, dur_ns=dur,
        self_ns=int(self_times(index)[i]),
        depth=depth)
    parent = i
    for d in range(depth - 1, -1, -1):
        row = int(rows.track_first_row[track]) + d
        parent = slice_at(index, rows, row, start)
        if parent < 0 or int(a["slices.start"][parent]) + int(a["slices.dur"][parent]) < (
                start + dur):
            break  # an extra lane of overlapping slices: no enclosing slice above
        info.parents.append(parent)
    out = np.flatnonzero(a["flows.src_slice"] == i)
    inn = np.flatnonzero(a["flows.dst_slice"] == i)
    info.n_flows_out, info.n_flows_in = len(out), len(inn)
    info.flows_out = [int(x) for x in a["flows.dst_slice"][out[:MAX_FLOWS]] if x >= 0]
    info.flows_in = [int(x) for x in a["flows.src_slice"][inn[:MAX_FLOWS]] if x >= 0]
    return info
