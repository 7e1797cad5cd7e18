"""Slices listed with the iteration and the track each falls in: an op's instances as a
table and a histogram of their durations, and the per-iteration table."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.model.stats import median_ns
from proftui.core.model.table import Column, Table
from proftui.core.ops.iterations import (
    Iteration,
    Iterations,
    capture_start_ns,
    steps_at,
    warmup,
)
from proftui.core.ops.roles import track_groups

OUTLIER_RATIO = 1.2  # an iteration longer than this times its group's median is an outlier


def _iteration_list(iterations: Iterations | Sequence[Iteration] | None) -> list[Iteration]:
    if iterations is None:
        return []
    return list(iterations.items if isinstance(iterations, Iterations) else iterations)


def iteration_of(index: TraceIndex, slices: np.ndarray,
                 iterations: Iterations | Sequence[Iteration] | None) -> np.ndarray:
    """Per slice, the number of the iteration of its group whose window holds its start
    (NaN when none does). When the iterations are all of one group, they apply to every
    slice whatever its group."""
    return iteration_at(index, slices, iterations)[0]


def iteration_at(index: TraceIndex, slices: np.ndarray,
                 iterations: Iterations | Sequence[Iteration] | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per slice, as :func:`iteration_of`: the iteration's number (NaN when none) and its
    start (int64 ns; -1 when none)."""
    slices = np.asarray(slices, np.int64)
    out = np.full(len(slices), np.nan)
    starts = np.full(len(slices), -1, np.int64)
    items = [it for it in _iteration_list(iterations) if it.start_ns >= 0 <= it.end_ns]
    if not items or not len(slices):
        return out, starts
    start = index.col("slices.start")[slices]
    groups = {it.group for it in items}
    if len(groups) == 1:
        slice_group = np.zeros(len(slices), np.int64)
        group_ids = {next(iter(groups)): 0}
    else:
        slice_group = track_groups(index)[index.col("slices.track")[slices]]
        group_ids = {g: index.strings.find(g) for g in groups}
    for group, gid in group_ids.items():
        at = np.flatnonzero(slice_group == gid)
        out[at], starts[at] = steps_at([it for it in items if it.group == group], start[at])
    return out, starts


def track_titles(index: TraceIndex, tracks: np.ndarray) -> np.ndarray:
    """Per track id, "process: track" text (object array), each title made once."""
    tracks = np.asarray(tracks, np.int64)
    unique, inverse = np.unique(tracks, return_inverse=True)
    s = index.strings
    titles = []
    for t in unique.tolist():
        p = int(index.col("tracks.process")[t])
        label = index.track_label(t)
        if p >= 0:
            group = s[index.col("processes.group")[p]]
            pid = s[index.col("processes.pid")[p]]
            name = s[index.col("processes.name")[p]] or f"Process {pid}"
            label = f"{group + ': ' if group else ''}{name}: {label}"
        titles.append(label)
    out = np.empty(len(unique), dtype=object)
    out[:] = titles
    return out[inverse.reshape(-1)] if len(tracks) else np.empty(0, dtype=object)


def instances_table(index: TraceIndex, slices: np.ndarray,
                    iterations: Iterations | Sequence[Iteration] | None = None) -> Table:
    """The given slices as a table (kind "instances"), in the given order: Start (ns from the
    capture start, :func:`~proftui.core.ops.iterations.capture_start_ns`), Duration (ns), Track
    ("process: track"), Iteration (its number, NaN outside every iteration) and Slice (the
    slice index, to jump to it)."""
    slices = np.asarray(slices, np.int64)
    start = index.col("slices.start")[slices]
    dur = index.col("slices.dur")[slices]
    columns = [
        Column("Start (from capture start)", "Start", "ns", "number",
               (start - capture_start_ns(index)).astype(np.float64)),
        Column("Duration", "Duration", "ns", "number", dur.astype(np.float64)),
        Column("Track", "Track", "", "text",
               track_titles(index, index.col("slices.track")[slices])),
        Column("Iteration", "Iteration", "", "number", iteration_of(index, slices, iterations)),
        Column("Slice", "Slice", "", "number", slices.astype(np.float64)),
    ]
    return Table("instances", "", columns, len(slices))


def duration_histogram(durations_ns: np.ndarray, bins: int = 20
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Counts and `bins + 1` edges (ns, float64) of a histogram of durations.

    Edges are log-spaced when the durations span more than two decades (max > 100 x min,
    min > 0), else linear; equal durations make one bin of width 1 ns around them. An empty
    input gives zero counts over [0, 1].
    """
    values = np.asarray(durations_ns, np.float64)
    bins = max(int(bins), 1)
    if not len(values):
        return np.zeros(bins, np.int64), np.linspace(0.0, 1.0, bins + 1)
    low, high = float(values.min()), float(values.max())
    if low > 0 and high > 100 * low:
        edges = np.geomspace(low, high, bins + 1)
    elif high > low:
        edges = np.linspace(low, high, bins + 1)
    else:
        edges = np.linspace(low - 0.5, low + 0.5, bins + 1)
    edges[0], edges[-1] = min(edges[0], low), max(edges[-1], high)
    counts, _ = np.histogram(values, edges)
    return counts.astype(np.int64), edges


# -- iterations ---------------------------------------------------------------------------------


# The iterations table's two starts, headers saying their unit and clock.
ABSOLUTE_START = "Start (us, profiler clock)"
RELATIVE_START = "Start (ms, capture)"


def iterations_table(iterations: Iterations | Sequence[Iteration], origin_ns: int) -> Table:
    """One row per iteration, in the order given (kind "iterations").

    Columns: Group, Iteration, Start (absolute int64 ns on the profiler's clock, a timestamp;
    its header says "us, profiler clock", as it is shown), Start from capture (ms from
    `origin_ns`, the capture start: :func:`~proftui.core.ops.iterations.capture_start_ns`; its
    header says so), Duration (ns), one
    column (ns) per breakdown part in order of first appearance, vs median (%) = how much
    longer (+) or shorter (-) than the median of its group, and Mark: "warm-up" for a group's
    warm-up step (:func:`~proftui.core.ops.iterations.warmup`: left out of its median and of
    the marks), "slowest" for the longest other iteration of a group of two or more,
    "outlier" for one longer than 1.2 x its group's median, "slowest, outlier" for both.
    Unknown values are NaN (missing Start is the int64 minimum, as in summary tables).
    """
    items = _iteration_list(iterations)
    n = len(items)
    missing = np.iinfo(np.int64).min
    start = np.array([it.start_ns if it.start_ns >= 0 else missing for it in items], np.int64)
    known = start != missing
    # ms, so that the header can say its unit and an exported pane writes what it says
    relative = np.where(known, (start - origin_ns) / 1e6, np.nan)
    dur = np.array([it.dur_ns if it.dur_ns >= 0 else np.nan for it in items], np.float64)
    groups = np.empty(n, dtype=object)
    groups[:] = [it.group for it in items]
    parts: list[str] = []
    for it in items:
        parts += [p for p in it.parts if p not in parts]
    vs_median = np.full(n, np.nan)
    marks = np.full(n, "", dtype=object)
    for group in dict.fromkeys(it.group for it in items):
        mine = np.flatnonzero((groups == group) & ~np.isnan(dur))
        warm = mine[:warmup(len(mine))]  # its warm-up: marked, and left out of the figures
        marks[warm] = "warm-up"
        mine = mine[len(warm):]
        if not len(mine):
            continue
        median = median_ns(dur[mine].astype(np.int64).tolist())
        vs_median[warm] = (dur[warm] / median - 1.0) * 100.0 if median > 0 else np.nan
        if median > 0:
            vs_median[mine] = (dur[mine] / median - 1.0) * 100.0
            for i in mine[dur[mine] > OUTLIER_RATIO * median].tolist():
                marks[i] = "outlier"
        if len(mine) >= 2:
            slowest = int(mine[np.argmax(dur[mine])])
            marks[slowest] = "slowest, outlier" if marks[slowest] else "slowest"
    columns = [
        Column("Group", "Group", "", "text", groups),
        Column("Iteration", "Iteration", "", "number",
               np.array([it.number for it in items], np.float64)),
        Column(ABSOLUTE_START, "Start", "ns", "timestamp", start),
        Column(RELATIVE_START, "Start from capture", "ms", "number", relative, fixed=True),
        Column("Duration", "Duration", "ns", "number", dur),
    ]
    for part in parts:
        columns.append(Column(part, part, "ns", "number", np.array(
            [float(it.parts[part]) if part in it.parts else np.nan for it in items],
            np.float64)))
    columns += [Column("vs median(%)", "vs median", "%", "number", vs_median),
                Column("Mark", "Mark", "", "text", marks)]
    return Table("iterations", "", columns, n)
