"""How much memory a profile used, when, during which op, and which operators allocated most.

Peaks come from the allocator's counter series, whatever wrote them: torch_npu's
memory_record.csv and the SQLite export's MEMORY_RECORD (process ``Memory``, one series per
component: ``PTA`` the PyTorch caching allocator, ``GE`` the graph engine, ``PTA+GE`` both,
``WORKSPACE``), and PyTorch's ``[memory]`` events (one series per device: ``GPU 0``, ``CPU``).
Every such series is named ``{component} Total {Allocated|Reserved|Active}(MB)`` (see
:mod:`proftui.core.load.memory_csv` and :mod:`.kineto_memory`); CANN's per-module
reservations (``NPU Module Memory``) and the driver's ``NPU MEM`` are other questions and are
left out.

Per group (rank or device), component and measure (allocated, reserved) the peak is the
highest sample in the window (the first of equal ones), in bytes, with its time. The op
running then is, on the group's host threads, the innermost slice covering that time (the
covering slice that started last, as self time counts it), a torch op (``cpu_op``) before
another operator (a Python frame, a CANN call), and that before a marker
(``ProfilerStep#N``); where the sample came from an event on a thread (PyTorch's
``[memory]``), that thread is looked at first. The device op is the innermost operator
covering the time on the group's device tracks, if any ran. Times are absolute ns on the
trace's clock.

The top allocating operators come from operator_memory.csv (the SQLite export's OP_MEMORY):
per group and operator name, the allocations (rows with a positive size) whose allocation
time lies in the window, counted, their sizes summed (``total_bytes``) and the largest one
(``max_bytes``); ordered by total, largest first. A profile without these tables has none.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from proftui.core.analysis.summary import rows_table
from proftui.core.model.index import TraceIndex
from proftui.core.model.naming import natural_key
from proftui.core.model.table import BYTES_PER_UNIT, Table
from proftui.core.ops.roles import roles, track_groups
from proftui.core.query.rows import FENCE, RowIndex, rows_for

SERIES_NAME = re.compile(r"^(?P<component>.+) Total (?P<measure>Allocated|Reserved|Active)"
                         r"\(MB\)$")
MEASURES = ("allocated", "reserved")  # the peaks reported
_NOT_ALLOCATOR = frozenset({"NPU Module Memory"})  # CANN modules' reservations
_MB = 1024 * 1024
_TORCH_OP_CATEGORIES = ("cpu_op", "Operator")  # Kineto (and torch_npu); Kineto of 2021
_NO_TS = np.iinfo(np.int64).min


@dataclass(frozen=True)
class MemorySeries:
    """A counter series of an allocator: its id, where it is and what it measures."""

    series: int
    group: str
    process: str
    component: str
    measure: str  # "allocated", "reserved" or "active"


@dataclass(frozen=True)
class OpAt:
    """A slice running at a peak."""

    slice: int  # its index in the index (for the app)
    name: str
    start_ns: int
    dur_ns: int
    track: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "start_ns": self.start_ns, "dur_ns": self.dur_ns,
                "track": self.track}


@dataclass(frozen=True)
class Peak:
    """The highest sample of one series in the window, and what ran then."""

    group: str
    process: str
    component: str
    measure: str
    bytes: int
    at_ns: int
    samples: int  # samples of the series in the window
    series: int
    host_op: OpAt | None
    device_op: OpAt | None

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "process": self.process, "component": self.component,
                "measure": self.measure, "bytes": self.bytes, "at_ns": self.at_ns,
                "samples": self.samples,
                "host_op": None if self.host_op is None else self.host_op.to_json(),
                "device_op": None if self.device_op is None else self.device_op.to_json()}


@dataclass(frozen=True)
class TopOp:
    """One operator's allocations in the window (from operator_memory)."""

    group: str
    name: str
    count: int
    total_bytes: int
    max_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "name": self.name, "count": self.count,
                "total_bytes": self.total_bytes, "max_bytes": self.max_bytes}


@dataclass(frozen=True)
class MemoryReport:
    """The memory question answered for a window of a profile."""

    start_ns: int
    end_ns: int
    peaks: tuple[Peak, ...]
    top_ops: tuple[TopOp, ...]  # per group (natural order), largest total first
    op_tables: int  # operator_memory tables read
    without_data: tuple[str, ...] = ()  # ranks (groups) of the profile with no memory data

    @property
    def has_data(self) -> bool:
        """Whether the profile holds any memory data at all (series or tables)."""
        return bool(self.peaks or self.op_tables)

    def top(self, k: int | None) -> list[TopOp]:
        """The first `k` operators of each group (all with None)."""
        count: dict[str, int] = {}
        out = []
        for op in self.top_ops:
            count[op.group] = count.get(op.group, 0) + 1
            if k is None or count[op.group] <= k:
                out.append(op)
        return out

    def to_json(self, top: int | None = None) -> dict[str, Any]:
        return {"start_ns": self.start_ns, "end_ns": self.end_ns,
                "peaks": [p.to_json() for p in self.peaks],
                "top_ops": [op.to_json() for op in self.top(top)],
                "op_tables": self.op_tables, "ranks_without_data": list(self.without_data)}


# -- series --------------------------------------------------------------------------------------


def memory_series(index: TraceIndex) -> list[MemorySeries]:
    """The allocator series of `index` (see the module docstring), in series order."""
    a, s = index.arrays, index.strings
    process = a["tracks.process"][a["counters.series_track"]]
    out = []
    for sid, (name_id, p) in enumerate(zip(a["counters.series_name"].tolist(),
                                           process.tolist())):
        m = SERIES_NAME.match(s[name_id])
        if m is None:
            continue
        pname = s[a["processes.name"][p]] if p >= 0 else ""
        if pname in _NOT_ALLOCATOR:
            continue
        group = s[a["processes.group"][p]] if p >= 0 else ""
        out.append(MemorySeries(sid, group, pname, m.group("component"),
                                m.group("measure").lower()))
    return out


def _samples(index: TraceIndex, series: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(ts, values, position of the first) of one series' samples."""
    a = index.arrays
    first = a["counters.series_first"]
    lo = int(first[series])
    hi = int(first[series + 1]) if series + 1 < len(first) else len(a["counters.sample_ts"])
    return a["counters.sample_ts"][lo:hi], a["counters.sample_value"][lo:hi], lo


def series_peak(index: TraceIndex, series: int, start_ns: int | None = None,
                end_ns: int | None = None) -> tuple[int, float, int] | None:
    """(time ns, value, sample position) of the highest sample of a series within
    [start_ns, end_ns] (the whole series by default; the first of equal highs); None when
    the window holds no sample."""
    ts, values, base = _samples(index, series)
    lo = 0 if start_ns is None else int(np.searchsorted(ts, start_ns, side="left"))
    hi = len(ts) if end_ns is None else int(np.searchsorted(ts, end_ns, side="right"))
    part = values[lo:hi]
    if not len(part) or np.isnan(part).all():
        return None
    k = int(np.argmax(np.where(np.isnan(part), -np.inf, part)))
    return int(ts[lo + k]), float(part[k]), base + lo + k


# -- the question --------------------------------------------------------------------------------


def memory(index: TraceIndex, tables: Sequence[Table] = (), start_ns: int | None = None,
           end_ns: int | None = None,
           groups: Mapping[str, tuple[int, int]] | None = None) -> MemoryReport:
    """Peaks, what ran at them, and the top allocating operators, within [start_ns, end_ns]
    (the whole profile by default); with `groups`, each group (rank) named there within its
    own window and the others left out (a folder of ranks' iteration N)."""
    lo = index.start_ns if start_ns is None else start_ns
    hi = index.end_ns if end_ns is None else end_ns

    def window(group: str) -> tuple[int, int] | None:
        return (lo, hi) if groups is None else groups.get(group)

    finder = _OpFinder(index)
    peaks = []
    for ms in memory_series(index):
        mine = window(ms.group)
        if ms.measure not in MEASURES or mine is None:
            continue
        found = series_peak(index, ms.series, *mine)
        if found is None:
            continue
        at, value, position = found
        ts, _, _ = _samples(index, ms.series)
        n = int(np.searchsorted(ts, mine[1], "right") - np.searchsorted(ts, mine[0], "left"))
        thread = finder.thread_of(int(index.arrays["counters.sample_ref"][position]))
        peaks.append(Peak(ms.group, ms.process, ms.component, ms.measure,
                          int(round(value * _MB)), at, n, ms.series,
                          finder.host_op(ms.group, at, thread), finder.device_op(ms.group, at)))
    peaks.sort(key=lambda p: (natural_key(p.group), p.process, p.component,
                              MEASURES.index(p.measure)))
    op_tables = [t for t in tables if t.kind == "operator_memory"]
    top = [op for t in sorted(op_tables, key=lambda t: natural_key(t.group))
           if (mine := window(t.group)) is not None for op in _top_ops(t, *mine)]
    with_data = {p.group for p in peaks} | {t.group for t in op_tables}
    return MemoryReport(lo, hi, tuple(peaks), tuple(top), len(op_tables),
                        _without_data(index, with_data, groups))


def _without_data(index: TraceIndex, with_data: set[str],
                  groups: Mapping[str, tuple[int, int]] | None) -> tuple[str, ...]:
    """The ranks (groups) asked about that have no memory series nor operator_memory table, in
    natural order; none when the profile has one unnamed group or no group has data (the
    whole profile then says it has none)."""
    s = index.strings
    named = {s[g] for g in index.arrays["processes.group"].tolist() if g >= 0} - {""}
    if groups is not None:
        named &= set(groups)
    if not with_data:
        return ()
    return tuple(sorted(named - with_data, key=natural_key))


def _top_ops(table: Table, lo: int, hi: int) -> list[TopOp]:
    """Allocations per operator name of one operator_memory table, within [lo, hi]."""
    name, size, when = table.find("Name"), table.find("Size"), table.find("Allocation Time")
    if name is None or size is None or size.kind != "number":
        return []
    sizes = size.values * BYTES_PER_UNIT.get(size.unit, 1024)
    keep = np.isfinite(sizes) & (sizes > 0)
    if when is not None and when.kind == "timestamp":
        keep &= (when.values != _NO_TS) & (when.values >= lo) & (when.values <= hi)
    totals: dict[str, list[int]] = {}
    for n, b in zip(name.values[keep].tolist(), np.rint(sizes[keep]).astype(np.int64).tolist()):
        entry = totals.setdefault(str(n), [0, 0, 0])
        entry[0] += 1
        entry[1] += b
        entry[2] = max(entry[2], b)
    ops = [TopOp(table.group, n, c, t, m) for n, (c, t, m) in totals.items()]
    ops.sort(key=lambda op: (-op.total_bytes, op.name))
    return ops


class _OpFinder:
    """The innermost slices covering a time on a group's host or device tracks."""

    def __init__(self, index: TraceIndex) -> None:
        self.index = index
        self.rows: RowIndex | None = None  # built on first use
        s = index.strings
        self.track_group = np.array([s[g] if g >= 0 else ""
                                     for g in track_groups(index).tolist()], dtype=object)
        found = roles(index)
        self.device, self.op = found.device, found.op
        torch = np.zeros(len(s), bool)
        for text in _TORCH_OP_CATEGORIES:
            if (sid := s.find(text)) >= 0:
                torch[sid] = True
        self.torch_op = torch

    def thread_of(self, ref: int) -> int | None:
        """The thread track of the instant event numbered `ref`, if one is."""
        if ref < 0:
            return None
        hit = np.flatnonzero(self.index.arrays["instants.ref"] == ref)
        return int(self.index.arrays["instants.track"][hit[0]]) if len(hit) else None

    def host_op(self, group: str, at: int, thread: int | None) -> OpAt | None:
        """The op running on the host at `at` (see the module docstring)."""
        if thread is not None:
            found = self._innermost([thread], at, prefer=True)
            if found is not None:
                return found
        tracks = np.flatnonzero((self.track_group == group) & ~self.device)
        return self._innermost(tracks.tolist(), at, prefer=True)

    def device_op(self, group: str, at: int) -> OpAt | None:
        """The device operator running at `at` on the group's devices, if any."""
        tracks = np.flatnonzero((self.track_group == group) & self.device)
        return self._innermost(tracks.tolist(), at, prefer=False)

    def _innermost(self, tracks: list[int], at: int, prefer: bool) -> OpAt | None:
        covering = [s for t in tracks for s in self._covering(t, at)]
        if not covering:
            return None
        a = self.index.arrays
        cands = np.array(covering, np.int64)
        if prefer:  # a torch op, else another operator (a Python frame), else anything
            # (torch_npu files ProfilerStep#N as a cpu_op: markers are no operators)
            levels = [self.torch_op[a["slices.cat"][cands]] & self.op[cands], self.op[cands]]
        else:  # operators only on the device (not Plane copies, not Overlap Analysis)
            levels = [self.op[cands]]
            if not levels[0].any():
                return None
        for mask in levels:
            if mask.any():
                cands = cands[mask]
                break
        start, dur = a["slices.start"][cands], a["slices.dur"][cands]
        best = int(cands[np.lexsort((dur, -start))[0]])  # latest start, then shortest
        return OpAt(best, self.index.slice_name(best), int(a["slices.start"][best]),
                    int(a["slices.dur"][best]),
                    self.index.track_label(int(a["slices.track"][best])))

    def _covering(self, track: int, at: int) -> list[int]:
        """The slices of a track covering `at`, at most one per row."""
        if self.rows is None:
            self.rows = rows_for(self.index)
        rows = self.rows
        start, dur = self.index.arrays["slices.start"], self.index.arrays["slices.dur"]
        out = []
        for row in range(int(rows.track_first_row[track]), int(rows.track_first_row[track + 1])):
            f0, f1 = int(rows.fence_first[row]), int(rows.fence_first[row + 1])
            k = int(np.searchsorted(rows.fence_start[f0:f1], at, side="right")) - 1
            if k < 0:
                continue
            lo = int(rows.first[row]) + k * FENCE
            hi = min(lo + FENCE, int(rows.first[row] + rows.count[row]))
            seg = rows.order[lo:hi]
            j = int(np.searchsorted(start[seg], at, side="right")) - 1
            s = int(seg[j])
            if start[s] + dur[s] >= at:
                out.append(s)
        return out


# -- as tables -----------------------------------------------------------------------------------


def peak_table(report: MemoryReport, origin_ns: int) -> Table:
    """One row per peak: where, what, how much (MB), when (from `origin_ns`, the capture
    start; the header says so), the ops then."""
    rows = [(p.group or "(all)", p.component, p.measure, p.bytes / _MB, p.at_ns - origin_ns,
             p.host_op.name if p.host_op else "", p.device_op.name if p.device_op else "")
            for p in report.peaks]
    table = rows_table(["Group", "Component", "Measure", "Peak(MB)", "At (from capture start)",
                        "Host op",
                        "Device op"], ["text", "text", "text", "", "ns", "text", "text"], rows)
    return dataclasses.replace(table, additive=False)  # peaks at different times


def top_table(ops: Sequence[TopOp]) -> Table:
    """One row per operator: its group, allocations, their total and largest size (MB)."""
    rows = [(op.group or "(all)", op.name, op.count, op.total_bytes / _MB, op.max_bytes / _MB)
            for op in ops]
    return rows_table(["Group", "Operator", "Allocations", "Total(MB)", "Largest(MB)"],
                      ["text", "text", "", "", ""], rows)
