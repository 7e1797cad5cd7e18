"""Where each step's time goes, on the device and on the host, for every profile.

Computed from the tracks themselves (so it works where the profiler wrote no summary), in one
vocabulary for every vendor. Per group (rank or device) and window:

Device, over the step's *device window*: from the first to the last device operator the step
launched (by the host-to-device flows where the profile has them, else the operators that
start inside the step), widened to the end of every operator starting in it; this is the
window torch_npu's step_trace_time.csv and HTA's temporal breakdown use.
- ``compute_ns``: union of compute work (matrix, vector, AI CPU, other; each kind's own union
  in ``compute_<kind>_ns``, which may overlap one another on several streams);
- ``comm_ns``: union of collectives; ``comm_exposed_ns``: communication with no compute at the
  same time; ``overlapped_ns``: communication under compute;
- ``memcpy_ns``: union of memcpy and memset; ``memcpy_exposed_ns``: copies with neither compute
  nor communication at the same time;
- ``busy_ns``: union of all of it; ``idle_ns``: the rest of the window, split into
  ``host_bound_ns`` (the host is busy, and not waiting), ``wait_ns`` (the host waits: a device
  synchronisation, or the data loader) and ``idle_other_ns`` (nothing recorded on the host);
- ``free_ns``: the window less compute and exposed communication (msprof's Free: idle time plus
  exposed copies); ``prepare_ns``: from the step's start to its device window's
  (torch_npu's Preparing).
Host, over the step itself: ``busy_ns`` (union of host operators), ``dataloader_ns``,
``forward_ns``, ``backward_ns``, ``optimizer_ns`` (None where the profile does not mark
them), ``dataloader_exposed_ns`` (data loading while the device does nothing),
``sync_ns`` and ``sync_count`` (stretches of synchronisation), ``gc_ns`` and ``gc_count``,
``launch_count`` (device operators launched from the step), ``launch_ns`` (union of the
launching host slices) and the launch-to-start latency percentiles (from the end of the
launching host slice to the start of the device operator).

A rank the profile has no timeline for (a copy of ASCEND_PROFILER_OUTPUT without
trace_view.json, a capture with data simplification, only msprof-analyze's
cluster_analysis_output) is broken down from its step table instead, the rows the iterations
read (:data:`~proftui.core.analysis.step_parts.STEP_TRACE_DEVICE` maps the columns); its steps
have no window (``start_ns`` -1), their length is the sum of their disjoint parts, the parts
the table does not split (idle, copies, the host) are None, and ``source`` names the table.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np

from proftui.core.analysis import activity as act
from proftui.core.analysis.coverage import Coverage, merge, merge_slices
from proftui.core.analysis.step_parts import step_parts, step_trace_device
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.ops.iterations import Iteration, Iterations
from proftui.core.ops.roles import roles

SMALL_KERNEL_NS = 10_000  # a device operator shorter than this is "small" (launch-bound work)
DEVICE_FIELDS = (
    "start_ns", "end_ns", "span_ns", "prepare_ns", "busy_ns", "compute_ns", "compute_matrix_ns",
    "compute_vector_ns", "compute_ai_cpu_ns", "compute_other_ns", "comm_ns", "comm_exposed_ns",
    "overlapped_ns", "memcpy_ns", "memcpy_exposed_ns", "idle_ns", "host_bound_ns", "wait_ns",
    "idle_other_ns", "free_ns", "ops", "small_ops")
HOST_FIELDS = (
    "busy_ns", "dataloader_ns", "forward_ns", "backward_ns", "optimizer_ns",
    "dataloader_exposed_ns", "sync_ns",
    "sync_count", "gc_ns", "gc_count", "launch_count", "launch_ns", "launch_latency_p50_ns",
    "launch_latency_p95_ns")
_KIND_SETS = {act.MATRIX: "matrix", act.VECTOR: "vector", act.AI_CPU: "ai_cpu",
              act.OTHER: "other", act.COMM: "comm", act.MEMORY: "memory"}

TIMELINE = "timeline"  # the source of a breakdown computed from the tracks
_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # index -> (memo, lock)
_memo_lock = threading.Lock()


@dataclass(frozen=True)
class StepBreakdown:
    """The breakdown of one group's step (`iteration` its number) or window (None).

    `device` is None where the group ran nothing on a device in the window. `source` says
    where the numbers come from: TIMELINE, or the step table of a rank without one
    ("step_trace_time.csv", "analysis.db StepTraceTime" ...), whose step has no window
    (`start_ns` and `end_ns` -1, `length_ns` its length) and whose unknown parts are None."""

    group: str
    iteration: int | None
    start_ns: int
    end_ns: int
    device: dict[str, int | None] | None
    host: dict[str, Any]
    source: str = TIMELINE
    length_ns: int = -1

    @property
    def step_ns(self) -> int:
        return self.end_ns - self.start_ns if self.timed else max(self.length_ns, 0)

    @property
    def timed(self) -> bool:
        """Whether the step has a window on the profile's clock (a timeline's steps do)."""
        return self.start_ns >= 0

    def device_window(self) -> tuple[int, int]:
        """[start, end) of the step's device window, else of the step itself."""
        if self.device is None or self.device["start_ns"] is None:
            return self.start_ns, self.end_ns
        return self.device["start_ns"], self.device["end_ns"]

    def extent(self) -> tuple[int, int]:
        """[start, end) of the step and its device window together."""
        lo, hi = self.device_window()
        return min(lo, self.start_ns), max(hi, self.end_ns)

    def shares(self) -> dict[str, float]:
        """Each part as a fraction: device parts of the device span, host parts of the
        step."""
        out: dict[str, float] = {}
        span = (self.device["span_ns"] or 0) if self.device else 0
        if self.device and span > 0:
            for part in ("compute", "comm_exposed", "overlapped", "memcpy_exposed", "idle",
                         "host_bound", "wait", "free"):
                value = self.device[f"{part}_ns"]
                if value is not None:
                    out[part] = value / span
        if self.step_ns > 0:
            for part in ("busy", "dataloader", "forward", "backward", "optimizer", "sync",
                         "gc", "launch"):
                value = self.host.get(f"{part}_ns")
                if value is not None:
                    out[f"host_{part}"] = value / self.step_ns
        return out

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "iteration": self.iteration,
                "start_ns": self.start_ns if self.timed else None, "step_ns": self.step_ns,
                "source": self.source, "device": self.device, "host": self.host,
                "shares": self.shares()}


@dataclass
class _Group:
    """What the breakdown needs of one group, computed once."""

    name: str
    coverage: Coverage
    dev_start: np.ndarray  # compute and communication operators of the group, by start
    dev_end: np.ndarray
    dev_kind: np.ndarray
    launch_src_start: np.ndarray  # launches, by host start
    launch_dst_start: np.ndarray
    launch_dst_end: np.ndarray
    latency: np.ndarray
    sync: tuple[np.ndarray, np.ndarray] = field(default=(np.zeros(0, np.int64),) * 2)
    gc: tuple[np.ndarray, np.ndarray] = field(default=(np.zeros(0, np.int64),) * 2)
    phases: frozenset[str] = frozenset()
    has_device: bool = True  # the group ran something on a device


@dataclass(frozen=True)
class Breakdown:
    """The breakdown of a profile: per step (or the one window asked for) and in total per
    group (from its first step's start to its last step's end, else the whole capture)."""

    steps: list[StepBreakdown]
    total: list[StepBreakdown]

    def to_json(self) -> dict[str, Any]:
        return {"iterations": [b.to_json() for b in self.steps],
                "total": [b.to_json() for b in self.total]}


def breakdown(index: TraceIndex, iterations: Iterations | Sequence[Iteration],
              tables: Sequence[Table] = (), *, number: int | None = None,
              window: tuple[int, int] | None = None) -> Breakdown:
    """The breakdown of every step (or of step `number` only, or of the `window` [t0, t1)
    alone), and the totals."""
    if window is not None:
        found = window_breakdowns(index, window[0], window[1], tables)
        return Breakdown(found, found)
    items = iterations.items if isinstance(iterations, Iterations) else list(iterations)
    if number is not None:
        items = [it for it in items if it.number == number]
    groups = _groups(index, tables)
    asks = _step_asks(items, groups)
    for name in sorted(groups):  # each group's total, measured with its steps
        mine = [a for a in asks if isinstance(a, tuple) and a[0] == name]
        lo, hi = ((mine[0][2], max(a[3] for a in mine)) if mine
                  else (index.start_ns, index.end_ns))
        asks.append((name, None, lo, hi, bool(mine)))
    found = _breakdowns(groups, asks)
    steps, total = found[:len(found) - len(groups)], found[len(found) - len(groups):]
    untimed = [b for b in steps if not b.timed]
    total += [_table_total([b for b in untimed if b.group == name])
              for name in sorted(dict.fromkeys(b.group for b in untimed))]
    return Breakdown(steps, total)


def step_breakdowns(index: TraceIndex, iterations: Iterations | Sequence[Iteration],
                    tables: Sequence[Table] = ()) -> list[StepBreakdown]:
    """The breakdown of every iteration that has a window, and of those of a group without a
    timeline that its step table breaks down, in the order given."""
    items = iterations.items if isinstance(iterations, Iterations) else list(iterations)
    groups = _groups(index, tables)
    return _breakdowns(groups, _step_asks(items, groups))


# A window to break down: (group, iteration number or None, start, end, whether the device
# window follows the launches), or a step known by its step table alone, already made.
_Ask: TypeAlias = "tuple[str, int | None, int, int, bool] | StepBreakdown"


def _step_asks(items: Sequence[Iteration], groups: dict[str, _Group]) -> list[_Ask]:
    """The windows of the iterations that have one, and the steps of those of a group
    without a timeline that its step table breaks down, in the order given."""
    out: list[_Ask] = []
    for it in items:
        if it.start_ns < 0 or it.end_ns < it.start_ns:
            if it.group not in groups and (step := table_step(it)) is not None:
                out.append(step)
            continue
        out.append((it.group, it.number, it.start_ns, it.end_ns, True))
    return out


def _breakdowns(groups: dict[str, _Group], asks: Sequence[_Ask]) -> list[StepBreakdown]:
    """The breakdowns asked for, in order; each group's windows measured together (its
    coverage holds the stretches of a name or two at a time: see :class:`Coverage`)."""
    out: list[StepBreakdown | None] = [a if isinstance(a, StepBreakdown) else None for a in asks]
    for name in dict.fromkeys(a[0] for a in asks if isinstance(a, tuple)):
        at = [k for k, a in enumerate(asks) if isinstance(a, tuple) and a[0] == name]
        mine = [asks[k] for k in at]
        for k, b in zip(at, _windows(groups.get(name), name, mine)):  # type: ignore[arg-type]
            out[k] = b
    return out  # type: ignore[return-value]


def table_step(it: Iteration) -> StepBreakdown | None:
    """The breakdown of a step known only by its step table's row (no window), or None when
    its parts are not a step_trace_time row's."""
    known = step_trace_device(it)
    parts = step_parts(it)
    if known is None or parts is None:
        return None
    device = {**dict.fromkeys(DEVICE_FIELDS), **known}
    return StepBreakdown(it.group, it.number, -1, -1, device, dict.fromkeys(HOST_FIELDS),
                         it.parts_from or "step table", parts.step_ns)


def _table_total(steps: list[StepBreakdown]) -> StepBreakdown:
    """A group's steps from its step table, summed: its total (no window either)."""
    device: dict[str, int | None] = {}
    for key in DEVICE_FIELDS:
        values = [b.device[key] for b in steps if b.device]
        device[key] = (None if not values or any(v is None for v in values)
                       else sum(v for v in values if v is not None))
    return StepBreakdown(steps[0].group, None, -1, -1, device, dict.fromkeys(HOST_FIELDS),
                         steps[0].source, sum(b.step_ns for b in steps))


def window_breakdowns(index: TraceIndex, start_ns: int, end_ns: int,
                      tables: Sequence[Table] = ()) -> list[StepBreakdown]:
    """The breakdown of the window [start_ns, end_ns) for each group, device time counted
    inside the window itself."""
    groups = _groups(index, tables)
    return _breakdowns(groups, [(name, None, start_ns, end_ns, False) for name in sorted(groups)])


def _windows(g: _Group | None, name: str,
             asks: Sequence[tuple[str, int | None, int, int, bool]]) -> list[StepBreakdown]:
    """The breakdowns of windows of one group: (group, number, lo, hi, follow_launches)."""
    if g is None:
        return [StepBreakdown(name, number, lo, hi, None, _empty_host())
                for _, number, lo, hi, _ in asks]
    host = _Measures(g.coverage, [(lo, hi) for _, _, lo, hi, _ in asks])
    if not g.has_device:
        return [StepBreakdown(name, number, lo, hi, None, _host(g, lo, hi, host.at(k)))
                for k, (_, number, lo, hi, _) in enumerate(asks)]
    windows = [_device_window(g, lo, hi) if follow else (lo, hi)
               for _, _, lo, hi, follow in asks]
    device = _Measures(g.coverage, [w for w in windows if w is not None])
    out, j = [], 0
    for k, ((_, number, lo, hi, _), window) in enumerate(zip(asks, windows)):
        part = None
        if window is not None:
            part, j = _device(g, window, lo, device.at(j)), j + 1
        out.append(StepBreakdown(name, number, lo, hi, part, _host(g, lo, hi, host.at(k))))
    return out


class _Measures:
    """How long each name of a coverage holds in each of some windows, a name measured in
    all of them at once when first asked."""

    def __init__(self, coverage: Coverage, windows: Sequence[tuple[int, int]]) -> None:
        self.coverage = coverage
        self.lo = np.array([w[0] for w in windows], np.int64)
        self.hi = np.array([w[1] for w in windows], np.int64)
        self.found: dict[str, np.ndarray] = {}

    def at(self, k: int) -> Callable[[str], int]:
        """The measure of a name in window `k`."""
        def m(name: str) -> int:
            if name not in self.found:
                self.found[name] = self.coverage.measure(name, self.lo, self.hi)
            return int(self.found[name][k])
        return m


def _device_window(g: _Group, lo: int, hi: int) -> tuple[int, int] | None:
    """The step's device window (see the module docstring)."""
    if len(g.launch_src_start):
        a, b = np.searchsorted(g.launch_src_start, [lo, hi])
        if b > a:
            d_lo = int(g.launch_dst_start[a:b].min())
            d_hi = int(g.launch_dst_end[a:b].max())
        else:
            return None
    else:
        a, b = np.searchsorted(g.dev_start, [lo, hi])
        if b <= a:
            return None
        d_lo, d_hi = int(g.dev_start[a]), int(g.dev_end[a:b].max())
    a, b = np.searchsorted(g.dev_start, [d_lo, d_hi])
    if b > a:
        d_hi = max(d_hi, int(g.dev_end[a:b].max()))
    return d_lo, d_hi


def _device(g: _Group, window: tuple[int, int], step_start: int,
            m: Callable[[str], int]) -> dict[str, int]:
    """The device parts of a window, `m` measuring a name in it."""
    lo, hi = window
    span = hi - lo
    busy, compute, comm_exposed = m("busy"), m("compute"), m("comm_exposed")
    idle = span - busy
    host_bound, wait = m("host_bound"), m("wait")
    a, b = np.searchsorted(g.dev_start, [lo, hi])
    kinds = g.dev_kind[a:b]
    compute_ops = np.isin(kinds, act.COMPUTE_KINDS)
    durations = (g.dev_end[a:b] - g.dev_start[a:b])[compute_ops]
    return {
        "start_ns": lo, "end_ns": hi, "span_ns": span, "prepare_ns": lo - step_start,
        "busy_ns": busy, "compute_ns": compute,
        "compute_matrix_ns": m("matrix"), "compute_vector_ns": m("vector"),
        "compute_ai_cpu_ns": m("ai_cpu"), "compute_other_ns": m("other"),
        "comm_ns": m("comm"), "comm_exposed_ns": comm_exposed, "overlapped_ns": m("overlapped"),
        "memcpy_ns": m("memory"), "memcpy_exposed_ns": m("memcpy_exposed"),
        "idle_ns": idle, "host_bound_ns": host_bound, "wait_ns": wait,
        "idle_other_ns": idle - host_bound - wait, "free_ns": span - compute - comm_exposed,
        "ops": int(compute_ops.sum()), "small_ops": int((durations < SMALL_KERNEL_NS).sum())}


def _host(g: _Group, lo: int, hi: int, m: Callable[[str], int]) -> dict[str, Any]:
    """The host parts of the window [lo, hi), `m` measuring a name in it."""
    a, b = np.searchsorted(g.launch_src_start, [lo, hi])
    latency = g.latency[a:b]
    p50, p95 = (np.percentile(latency, [50, 95]).round().astype(np.int64).tolist()
                if len(latency) else (None, None))
    return {
        "busy_ns": m("host"),
        **{f"{p}_ns": (m(p) if p in g.phases else None) for p in act.HOST_PHASES[1:]},
        "dataloader_exposed_ns": (m("dataloader_exposed") if "dataloader" in g.phases
                                  else None),
        "sync_ns": m("sync"), "sync_count": _count(g.sync, lo, hi),
        "gc_ns": m("gc"), "gc_count": _count(g.gc, lo, hi),
        "launch_count": int(b - a), "launch_ns": m("launch"),
        "launch_latency_p50_ns": p50, "launch_latency_p95_ns": p95}


def _empty_host() -> dict[str, Any]:
    return {k: (None if k.endswith(("p50_ns", "p95_ns")) or k.split("_")[0]
                in act.HOST_PHASES else 0) for k in HOST_FIELDS}


def _count(stretches: tuple[np.ndarray, np.ndarray], lo: int, hi: int) -> int:
    """How many of the disjoint sorted stretches start in [lo, hi)."""
    a, b = np.searchsorted(stretches[0], [lo, hi])
    return int(b - a)


# -- per group ---------------------------------------------------------------------------------


def group_coverage(index: TraceIndex, tables: Sequence[Table] = ()) -> dict[str, Coverage]:
    """Per group, the :class:`Coverage` of its interval sets: the device kinds ("matrix",
    "vector", "ai_cpu", "other", "comm", "memory"), "host", the host phases, "sync", "gc",
    "launch", and the defined "compute", "busy", "comm_exposed", "overlapped",
    "memcpy_exposed", "wait", "host_bound", "dataloader_exposed", "sync_idle"."""
    return {name: g.coverage for name, g in _groups(index, tables).items()}


def _groups(index: TraceIndex, tables: Sequence[Table]) -> dict[str, _Group]:
    key = tuple(t.path for t in tables)
    with _memo_lock:  # one lock per index: the app's workers ask at once; diff's sides apart
        memo, lock = _memo.setdefault(index, ({}, threading.Lock()))
    with lock:
        if key not in memo:
            memo[key] = _build_groups(index, tables)
        return memo[key]


def _build_groups(index: TraceIndex, tables: Sequence[Table]) -> dict[str, _Group]:
    a, s = index.arrays, index.strings
    found = act.activity(index, tables)
    r = roles(index)
    start, dur = a["slices.start"], a["slices.dur"]
    kind = found.device_kind
    host_op = ~found.device & r.op
    launch_src, launch_dst = _launches(index, found.device_kind)
    out = {}
    track_groups = found.track_group[index.col("tracks.slice_count") > 0]

    def span(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The starts and ends of the slices `rows` (a mask or indices)."""
        at = start[rows]
        return at, at + dur[rows]

    def merged(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The union of the slices in the mask `rows`, a chunk of slices at a time."""
        return merge_slices(start, dur, rows)

    for gid in np.unique(track_groups).tolist():  # per track: the groups in use, cheaply
        mine = found.in_group(gid)
        # Each set merged as it is made: the slices' copies never live all at once.
        sets: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for code, set_name in _KIND_SETS.items():
            sets[set_name] = merged(mine & (kind == code))
        sets["host"] = merged(mine & host_op)
        phases = set()
        for code, phase in enumerate(act.HOST_PHASES[1:], 1):
            rows = mine & (found.host_phase == code)
            phases |= {phase} if rows.any() else set()
            sets[phase] = merged(rows)
        sets["sync"] = merged(mine & found.sync)
        sets["gc"] = merged(mine & found.gc)
        sets["waiting"] = merged(mine & (found.sync | (found.host_phase == 1)))
        in_group = mine[launch_src]
        src, dst = launch_src[in_group], launch_dst[in_group]
        sets["launch"] = merge(*span(src))
        coverage = Coverage(sets, merged=True)
        coverage.define("compute", lambda b: b["matrix"] | b["vector"] | b["ai_cpu"]
                        | b["other"])
        coverage.define("busy", lambda b: b["compute"] | b["comm"] | b["memory"])
        coverage.define("comm_exposed", lambda b: b["comm"] & ~b["compute"])
        coverage.define("overlapped", lambda b: b["comm"] & b["compute"])
        coverage.define("memcpy_exposed", lambda b: b["memory"] & ~b["compute"] & ~b["comm"])
        coverage.define("wait", lambda b: ~b["busy"] & b["waiting"])
        coverage.define("dataloader_exposed", lambda b: ~b["busy"] & b["dataloader"])
        coverage.define("sync_idle", lambda b: ~b["busy"] & b["sync"])
        coverage.define("host_bound", lambda b: ~b["busy"] & b["host"] & ~b["waiting"])
        # Compute and communication bound the device window (copies and waits do not:
        # msprof's Overlap Analysis spans the same operators).
        dev_rows = np.flatnonzero(mine & np.isin(kind, act.COMPUTE_KINDS + (act.COMM,)))
        dev_rows = dev_rows[np.argsort(start[dev_rows], kind="stable")]
        order = np.argsort(start[src], kind="stable")
        src, dst = src[order], dst[order]
        dev_start, dev_end = span(dev_rows)
        dst_start, dst_end = span(dst)
        out[s[gid]] = _Group(
            name=s[gid], coverage=coverage, dev_start=dev_start, dev_end=dev_end,
            dev_kind=kind[dev_rows], launch_src_start=start[src], launch_dst_start=dst_start,
            launch_dst_end=dst_end, latency=dst_start - span(src)[1],
            sync=sets["sync"], gc=sets["gc"], phases=frozenset(phases),
            has_device=bool((mine & (kind != act.NONE)).any()))
    return out


def _launches(index: TraceIndex, kind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Host -> device flow edges as (launching host slice, device operator) pairs, one per
    device operator: of several flows into one operator (torch_npu draws one from the torch
    op and one from the CANN launch), the launcher that started last, the closest."""
    a = index.arrays
    src, dst = a["flows.src_slice"].astype(np.int64), a["flows.dst_slice"].astype(np.int64)
    ok = (src >= 0) & (dst >= 0)
    src, dst = src[ok], dst[ok]
    device = roles(index).device[a["slices.track"]]
    ok = ~device[src] & np.isin(kind[dst], act.COMPUTE_KINDS + (act.COMM,))
    src, dst = src[ok], dst[ok]
    if not len(dst):
        return src, dst
    order = np.lexsort((a["slices.start"][src], dst))
    src, dst = src[order], dst[order]
    last = np.concatenate([dst[1:] != dst[:-1], [True]])
    return src[last], dst[last]


# -- as a table ---------------------------------------------------------------------------------

# (header, side, key); durations in ns, counts as they are
TABLE_COLUMNS = (
    ("Compute", "device", "compute_ns"), ("Comm exposed", "device", "comm_exposed_ns"),
    ("Overlapped", "device", "overlapped_ns"), ("Memcpy exposed", "device", "memcpy_exposed_ns"),
    ("Idle", "device", "idle_ns"), ("Host-bound", "device", "host_bound_ns"),
    ("Wait", "device", "wait_ns"), ("Free", "device", "free_ns"),
    ("Device span", "device", "span_ns"), ("Prepare", "device", "prepare_ns"),
    ("Dataloader", "host", "dataloader_ns"), ("Syncs", "host", "sync_count"),
    ("Launches", "host", "launch_count"))


def breakdown_table(steps: Sequence[StepBreakdown]) -> Table:
    """One row per step (kind "breakdown"): Group, Iteration, Step and the parts of
    TABLE_COLUMNS (NaN where unknown)."""
    from proftui.core.model.table import Column, text_column

    def values(side: str, key: str) -> np.ndarray:
        out = []
        for b in steps:
            part = getattr(b, side)
            value = part.get(key) if part else None
            out.append(np.nan if value is None else float(value))
        return np.array(out, np.float64)

    columns = [
        text_column("Group", [b.group for b in steps]),
        Column("Iteration", "Iteration", "", "number", np.array(
            [np.nan if b.iteration is None else b.iteration for b in steps], np.float64)),
        Column("Step", "Step", "ns", "number", np.array([b.step_ns for b in steps],
                                                        np.float64))]
    for header, side, key in TABLE_COLUMNS:
        unit = "ns" if key.endswith("_ns") else ""
        columns.append(Column(header, header, unit, "number", values(side, key)))
    return Table("breakdown", "", columns, len(steps))
