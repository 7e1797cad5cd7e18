"""Iterations (training steps): their time windows and breakdowns, from whatever source exists.

Sources, in order: step annotations in the timeline (Kineto and torch_npu `ProfilerStep#N`,
Paddle `ProfileStep#N`), the msprof step trace (`Iteration N` with `FP_BP Time N` and
`Iteration Refresh N`), then, for a rank or device the timeline has none for, the step CSVs:
msprof `step_trace` (FP start, BP end, iteration end, ...) and MindSpore
`step_trace_raw_N_detail_time.csv`. torch_npu `step_trace_time.csv` and the cluster
`cluster_step_trace_time.csv` (computing, communication not overlapped, ...) join the
iterations of the same rank and number as their breakdown.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.model.naming import natural_key
from proftui.core.model.strings import StringTable
from proftui.core.model.table import Table
from proftui.core.model.words import plural
from proftui.core.ops.roles import track_groups

_STEP = re.compile(r"^Profil(?:er|e)Step#(\d+)")  # Kineto and torch_npu; Paddle
_ITERATION = re.compile(r"^Iteration (\d+)$")
_PARTS = {"FP_BP Time": "FP+BP", "Iteration Refresh": "iteration refresh"}
_STREAM_PART = re.compile(r"^stream_\d+_.*(?<!_start_point)(?<!_end_point)$")
# MindSpore step_trace_raw durations are in 10 ns units: its step trace parser says so ("The
# unit of duration is 10ns"; on Ascend they are system-counter ticks, 10 ns at the 100 MHz
# counter of the 910) and MindInsight divides them by 1e5 to show ms. A device whose counter
# runs at another rate would make these durations wrong by that ratio, as in MindInsight.
_MINDSPORE_TICK_NS = 10
_MINDSPORE_PARTS = {"iteration_interval": "iteration interval", "fp_and_bp": "FP+BP",
                    "tail": "tail"}
# step_trace_time.csv columns shown as the breakdown (µs), when present.
_TORCH_NPU_PARTS = ("Computing", "Communication(Not Overlapped)", "Overlapped", "Communication",
                    "Free", "Stage", "Bubble", "Preparing")
_MSPROF_PARTS = {"FP to BP Time": "FP+BP", "Iteration Refresh": "iteration refresh",
                 "Data Aug Bound": "data aug bound"}


# The first step of a group of three or more is its warm-up: left out of the group's medians,
# means, slowest step and the advisor's averages, in every command and pane.
WARMUP_STEPS = 1


def warmup(n_steps: int) -> int:
    """How many of a group's first `n_steps` steps are warm-up: WARMUP_STEPS when it has
    three steps or more, else none."""
    return WARMUP_STEPS if n_steps >= 3 else 0


@dataclass
class Iteration:
    """One iteration of one group (rank or device); times in ns, -1 where unknown."""

    group: str
    number: int
    start_ns: int = -1
    end_ns: int = -1
    parts: dict[str, float] = field(default_factory=dict)  # breakdown, ns
    length_ns: int = -1  # known length when the window is not (MindSpore raw step trace)
    parts_from: str = ""  # the table its parts were read from ("step_trace_time.csv" ...)

    @property
    def dur_ns(self) -> int:
        """The iteration's length in ns, -1 if unknown."""
        if self.start_ns >= 0 <= self.end_ns:
            return self.end_ns - self.start_ns
        return self.length_ns


@dataclass
class Iterations:
    """The iterations of a profile and where they came from."""

    source: str
    items: list[Iteration]
    notes: list[str] = field(default_factory=list)  # what a source held that is not here


def group_windows(items: Sequence[Iteration], number: int) -> dict[str, tuple[int, int]]:
    """Each group's (rank's or device's) own window [start_ns, end_ns) of iteration `number`,
    over its entries with a time window (their steps do not line up across ranks, nor, across
    hosts, their clocks); groups without one are absent."""
    found: dict[str, tuple[int, int]] = {}
    for it in items:
        if it.number == number and it.start_ns >= 0 <= it.end_ns:
            lo, hi = found.get(it.group, (it.start_ns, it.end_ns))
            found[it.group] = (min(lo, it.start_ns), max(hi, it.end_ns))
    return found


def steps_at(items: Sequence[Iteration], times_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per time, the step of `items` (one group's) it belongs to: its number (float, NaN
    where none) and its start (int64 ns, -1 where none).

    The one rule for which step a time is in, wherever a time or a slice is given a step (the
    advisor's evidence and the Insights pane, the ops' Iteration column, the export): the step
    whose own window [start, end) holds it, the latest to start where windows overlap, which
    is the ``#N`` the timeline's ruler marks last before it. A step's device work that runs on
    into the next step's window is, at those times, in the next step."""
    times_ns = np.asarray(times_ns, np.int64)
    numbers = np.full(len(times_ns), np.nan)
    starts = np.full(len(times_ns), -1, np.int64)
    timed = sorted((it for it in items if it.start_ns >= 0 <= it.end_ns),
                   key=lambda it: it.start_ns)
    if not timed or not len(times_ns):
        return numbers, starts
    w_start = np.array([it.start_ns for it in timed], np.int64)
    w_end = np.array([it.end_ns for it in timed], np.int64)
    k = np.searchsorted(w_start, times_ns, side="right") - 1
    inside = (k >= 0) & (times_ns < w_end[np.maximum(k, 0)])
    numbers[inside] = np.array([it.number for it in timed], np.float64)[k[inside]]
    starts[inside] = w_start[k[inside]]
    return numbers, starts


def step_at(items: Sequence[Iteration], t_ns: int, group: str | None = None) -> int | None:
    """The number of the step (of `group`, when given) that time `t_ns` is in, by
    :func:`steps_at`; None outside every step."""
    mine = [it for it in items if group is None or it.group == group]
    number = steps_at(mine, np.array([t_ns], np.int64))[0][0]
    return None if np.isnan(number) else int(number)


# The words every relative time is said in: its zero is capture_start_ns.
FROM_CAPTURE_START = "from the capture start"


def capture_start_ns(index: TraceIndex,
                     iterations: Iterations | Sequence[Iteration] = ()) -> int:
    """The start of the capture (absolute ns): the zero of every time proftui shows relative,
    in the app and in every command alike.

    It is the earliest timestamp of the profile's timelines (slices, instants, counter
    samples); a profile without a timeline has no time but its iterations', so there it is
    the earliest known iteration start; 0 when the profile knows no time at all.
    """
    has_events = any(len(index.arrays.get(name, ())) for name in
                     ("slices.start", "instants.ts", "counters.sample_ts"))
    if has_events:
        return index.start_ns
    items = iterations.items if isinstance(iterations, Iterations) else iterations
    return min((it.start_ns for it in items if it.start_ns >= 0), default=0)


def find_iterations(index: TraceIndex, tables: list[Table] = ()) -> Iterations:  # type: ignore[assignment]
    """Iterations of each group from its best source: step slices, else the step CSVs."""
    found = _from_slices(index, _STEP, "ProfilerStep#N annotations", prefer_cpu=True)
    msprof = _from_slices(index, _ITERATION, "msprof step trace", prefer_cpu=False)
    _add_slice_parts(index, msprof)
    _add_source(found, msprof)
    _add_overlap_parts(index, found)
    tables = [replace(t, group=_index_group(index, t.group)) for t in tables]
    for table in tables:  # a step CSV counts for a group the timeline has no steps for
        if table.kind == "step_trace":
            more = _from_msprof_csv(table, _start_info_offset(index, table.path))
        elif table.kind == "step_trace_raw_detail_time":
            more = _from_mindspore(table)
        else:
            continue
        _add_source(found, more)
    # msprof-analyze's cluster table first: a rank's own step_trace_time has the last word.
    for kind in ("cluster_step_trace_time", "step_trace_time"):
        for table in (t for t in tables if t.kind == kind):
            _join_torch_npu(found, table, lambda group: _index_group(index, group))
    found.items.sort(key=lambda it: (natural_key(it.group), it.number))
    return found


def _index_group(index: TraceIndex, group: str) -> str:
    """The index's name for a group of the profile layout.

    A profile whose timelines are all of one group does not prefix its tracks with it: the
    index calls that group "".
    """
    timelines = (index.meta.get("profile") or {}).get("timelines", [])
    return "" if {t["group"] for t in timelines} == {group} else group


def _add_source(found: Iterations, more: Iterations) -> None:
    """Add the iterations of `more` for the groups `found` has none for."""
    have = {it.group for it in found.items}
    more.items = [it for it in more.items if it.group not in have]
    if not more.items:
        return
    if not found.items:
        found.source = more.source
    elif more.source not in found.source:
        found.source += f", {more.source}"
    found.items += more.items


def _start_info_offset(index: TraceIndex, csv_path: str) -> int:
    """The monotonic-to-wall offset the timelines of an old-layout device got, else 0.

    Its step_trace CSV (in device_N/summary) counts in the same monotonic µs, so its windows
    move the same way.
    """
    device = os.path.dirname(os.path.dirname(csv_path))
    offsets = {s.get("offset_ns", 0) for s in index.meta.get("sources", [])
               if "start_info" in s.get("clock", "")
               and os.path.dirname(os.path.dirname(s["path"])) == device}
    return offsets.pop() if len(offsets) == 1 else 0


_NEEDLES = {_STEP.pattern: "Step#", _ITERATION.pattern: "Iteration "}


def _candidates(strings: StringTable, pattern: re.Pattern) -> list[int]:
    """Ids of strings that may match `pattern`: those holding its literal part."""
    needle = _NEEDLES.get(pattern.pattern)
    if needle is None:  # the breakdown names: both literals
        return strings.ids_containing("FP_BP Time") + strings.ids_containing("Iteration Refresh")
    return strings.ids_containing(needle)


def _groups_of_slices(index: TraceIndex, rows: np.ndarray) -> list[str]:
    groups = track_groups(index)[index.arrays["slices.track"][rows]]
    return [index.strings[g] if g >= 0 else "" for g in groups.tolist()]


def _from_slices(index: TraceIndex, pattern: re.Pattern, source: str,
                 prefer_cpu: bool) -> Iterations:
    s = index.strings
    ids = {i: int(m.group(1)) for i in _candidates(s, pattern)
           if (m := pattern.match(s[i]))}
    if not ids:
        return Iterations(source, [])
    names = index.arrays["slices.name"]
    rows = np.flatnonzero(np.isin(names, np.fromiter(ids, np.int64, len(ids))))
    groups = _groups_of_slices(index, rows)
    cats = [s[c] for c in index.arrays["slices.cat"][rows].tolist()]
    best: dict[tuple[str, int], tuple[tuple, int]] = {}
    for row, group, cat in zip(rows.tolist(), groups, cats):
        number = ids[int(names[row])]
        # A GPU mirror of the CPU step annotation exists in Kineto traces: keep the CPU one.
        rank = (cat.startswith("gpu_") if prefer_cpu else False,
                int(index.arrays["slices.start"][row]))
        key = (group, number)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, row)
    items = []
    for (group, number), (_, row) in best.items():
        start = int(index.arrays["slices.start"][row])
        items.append(Iteration(group, number, start, start + int(index.arrays["slices.dur"][row])))
    return Iterations(source, items)


def _add_slice_parts(index: TraceIndex, found: Iterations) -> None:
    """FP_BP Time N and Iteration Refresh N slices as the breakdown of iteration N."""
    if not found.items:
        return
    s = index.strings
    by_key = {(it.group, it.number): it for it in found.items}
    pattern = re.compile(r"^(" + "|".join(map(re.escape, _PARTS)) + r") (\d+)$")
    ids = {i: m for i in _candidates(s, pattern) if (m := pattern.match(s[i]))}
    if not ids:
        return
    names = index.arrays["slices.name"]
    rows = np.flatnonzero(np.isin(names, np.fromiter(ids, np.int64, len(ids))))
    for row, group in zip(rows.tolist(), _groups_of_slices(index, rows)):
        m = ids[int(names[row])]
        iteration = by_key.get((group, int(m.group(2))))
        if iteration is not None:
            iteration.parts[_PARTS[m.group(1)]] = float(index.arrays["slices.dur"][row])


def _join_torch_npu(found: Iterations, table: Table,
                    index_group: Callable[[str], str] = str) -> None:
    """step_trace_time.csv: a breakdown per Step; iterations it names are added if missing.

    The cluster variant (`Step,Type,Index,...`) has one row per rank ("rank", Index the rank
    id) and per pipeline stage ("stage": a maximum over a rank group, not an iteration of
    anyone, so left out); its Step is empty when the run was not divided into steps.
    """
    step = table.find("Step")
    if step is None or step.kind != "number":
        return
    kind, rank = table.find("Type"), table.find("Index")
    cluster = kind is not None and rank is not None and kind.kind == "text"
    by_key = {(it.group, it.number): it for it in found.items}
    source = table_source(table)
    no_step = 0
    for row in range(table.n_rows):
        if cluster:
            if str(kind.values[row]).strip().lower() != "rank":  # type: ignore[union-attr]
                continue
            rank_id = _whole(rank.values[row])  # type: ignore[union-attr]
            if rank_id is None:
                continue
            group = index_group(f"rank {rank_id}")
        else:
            group = table.group
        value = _whole(step.values[row])
        if value is None:
            no_step += 1
            continue
        iteration = by_key.get((group, value))
        if iteration is None:
            iteration = by_key[(group, value)] = Iteration(group, value)
            if not found.items:
                found.source = source
            elif source not in found.source:
                found.source += f", {source}"
            found.items.append(iteration)
        iteration.parts_from = source
        for name in _TORCH_NPU_PARTS:
            column = table.find(name)
            if column is not None and column.kind == "number" and math.isfinite(
                    column.values[row]):
                iteration.parts[name.lower()] = float(column.values[row]) * 1000.0
    if no_step:
        found.notes.append(f"{table.kind}.csv: {plural(no_step, 'row')} without a step number (the "
                           "whole collection), not taken as iterations")


def table_source(table: Table) -> str:
    """How a step table is named where its numbers are shown: "step_trace_time.csv",
    "cluster_step_trace_time.csv", or "analysis.db StepTraceTime" for the SQLite export's."""
    if table.path.endswith(".db"):
        return f"{os.path.basename(table.path)} StepTraceTime"
    return f"{table.kind}.csv"


def _from_msprof_csv(table: Table, offset_ns: int = 0) -> Iterations:
    """msprof step_trace CSV: windows from Iteration End and Iteration Time (µs).

    `offset_ns` moves monotonic-clock µs (old layout) to the timeline's clock; epoch
    timestamps are already there.
    """
    number, end, length = (table.find("Iteration ID"), table.find("Iteration End"),
                            table.find("Iteration Time"))
    found = Iterations("step_trace CSV", [])
    if number is None or end is None or length is None or number.kind != "number":
        return found
    missing = np.iinfo(np.int64).min  # how a timestamp column marks N/A
    for row in range(table.n_rows):
        n = _whole(number.values[row])
        if n is None:
            continue
        iteration = Iteration(table.group, n)
        span_us = float(length.values[row]) if length.kind == "number" else math.nan
        end_us = _whole(end.values[row] * 1000) if end.kind == "number" else None
        if end.kind == "timestamp" and end.values[row] != missing:
            stop = int(end.values[row])
        elif end_us is not None:
            stop = end_us + offset_ns
        else:
            stop = -1
        if stop >= 0 and _whole(span_us) is not None:
            iteration.start_ns, iteration.end_ns = stop - int(round(span_us * 1000)), stop
        for name, label in _MSPROF_PARTS.items():
            column = table.find(name)
            if column is not None and column.kind == "number" and not math.isnan(
                    column.values[row]):
                iteration.parts[label] = float(column.values[row]) * 1000.0
        found.items.append(iteration)
    return found


def _from_mindspore(table: Table) -> Iterations:
    """MindSpore step_trace_raw_N_detail_time.csv: lengths and breakdown, no windows.

    Its points are device counter ticks on no clock the timeline shares, so the windows stay
    unknown; the last row (step "-") is MindSpore's average and is left out.
    """
    found = Iterations("step_trace_raw CSV (MindSpore)", [])
    number, total = table.find("step_num"), table.find("total")
    if number is None or total is None or number.kind != "number" or total.kind != "number":
        return found
    streams = [c for c in table.columns if _STREAM_PART.match(c.header) and c.kind == "number"]
    for row in range(table.n_rows):
        n, ticks = _whole(number.values[row]), _whole(total.values[row])
        if n is None or ticks is None:
            continue
        iteration = Iteration(table.group, n, length_ns=ticks * _MINDSPORE_TICK_NS)
        for name, label in _MINDSPORE_PARTS.items():
            column = table.find(name)
            if column is not None and column.kind == "number" and not math.isnan(
                    column.values[row]):
                iteration.parts[label] = float(column.values[row]) * _MINDSPORE_TICK_NS
        for column in streams:
            if not math.isnan(column.values[row]):
                iteration.parts[column.header] = float(column.values[row]) * _MINDSPORE_TICK_NS
        found.items.append(iteration)
    return found


def _whole(value: float | str) -> int | None:
    """A CSV number as an int (rounded), or None if it is missing, not a number (a text cell
    such as a stage's "(0, 1, 2, 3)"), infinite or beyond what int64 nanoseconds can hold."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if not isinstance(value, (int, float, np.number)):
        return None
    return int(round(value)) if math.isfinite(value) and abs(value) < 2.0 ** 62 else None


_OVERLAP_PARTS = ("Computing", "Communication", "Communication(Not Overlapped)", "Free")


def _add_overlap_parts(index: TraceIndex, found: Iterations) -> None:
    """The breakdown msprof's "Overlap Analysis" track gives each iteration of its group, as
    torch_npu's step_trace_time.csv does: per part, the summed durations of the part's slices
    that start in the iteration; Overlapped = Communication - Communication(Not Overlapped).
    (A step CSV of the same iteration, joined later, has the last word.)"""
    a, s = index.arrays, index.strings
    names = a["processes.name"]
    overlap = [p for p in range(len(names)) if s[names[p]].strip().lower() == "overlap analysis"]
    if not overlap or not found.items:
        return
    rows = np.flatnonzero(np.isin(a["tracks.process"][a["slices.track"]], overlap))
    part_ids = [(s.find(n), n) for n in _OVERLAP_PARTS]
    groups = np.array(_groups_of_slices(index, rows), dtype=object)
    start, dur, name = a["slices.start"][rows], a["slices.dur"][rows], a["slices.name"][rows]
    for it in found.items:
        if it.start_ns < 0 or it.end_ns < 0:
            continue
        mine = (groups == it.group) & (start >= it.start_ns) & (start < it.end_ns)
        if not mine.any():
            continue
        for sid, part in part_ids:
            it.parts[part.lower()] = float(dur[mine & (name == sid)].sum()) if sid >= 0 else 0.0
        it.parts["overlapped"] = (it.parts["communication"]
                                  - it.parts["communication(not overlapped)"])
