"""Iterations (training steps): their time windows and breakdowns, from whatever source exists.

Sources, in order: step annotations in the timeline (Kineto and torch_npu `ProfilerStep#N`,
Paddle `ProfileStep#N`), the msprof step trace (`Iteration N` with `FP_BP Time N` and
`Iteration Refresh N`), then the step CSVs: msprof `step_trace` (FP start, BP end, iteration
end, ...) and torch_npu `step_trace_time.csv` (computing, communication not overlapped, ...),
whose columns join the iterations of the same number as their breakdown.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from proftui.core.importers.csv_summary import Table
from proftui.core.index import TraceIndex
from proftui.core.strings import StringTable

_STEP = re.compile(r"^Profil(?:er|e)Step#(\d+)")  # Kineto and torch_npu; Paddle
_ITERATION = re.compile(r"^Iteration (\d+)$")
_PARTS = {"FP_BP Time": "FP+BP", "Iteration Refresh": "iteration refresh"}
# step_trace_time.csv columns shown as the breakdown (µs), when present.
_TORCH_NPU_PARTS = ("Computing", "Communication(Not Overlapped)", "Overlapped", "Communication",
                    "Free", "Stage", "Bubble", "Preparing")
_MSPROF_PARTS = {"FP to BP Time": "FP+BP", "Iteration Refresh": "iteration refresh",
                 "Data Aug Bound": "data aug bound"}


@dataclass
class Iteration:
    """One iteration of one group (rank or device); times in ns, -1 where unknown."""

    group: str
    number: int
    start_ns: int = -1
    end_ns: int = -1
    parts: dict[str, float] = field(default_factory=dict)  # breakdown, ns

    @property
    def dur_ns(self) -> int:
        return self.end_ns - self.start_ns if self.start_ns >= 0 <= self.end_ns else -1


@dataclass
class Iterations:
    """The iterations of a profile and where they came from."""

    source: str
    items: list[Iteration]


def find_iterations(index: TraceIndex, tables: list[Table] = ()) -> Iterations:  # type: ignore[assignment]
    """Iterations from the timeline's step slices, else from the step CSVs."""
    found = _from_slices(index, _STEP, "ProfilerStep#N annotations", prefer_cpu=True)
    if not found.items:
        found = _from_slices(index, _ITERATION, "msprof step trace", prefer_cpu=False)
        _add_slice_parts(index, found)
    for table in tables:
        if table.kind == "step_trace_time":
            _join_torch_npu(found, table)
        elif table.kind == "step_trace" and not found.items:
            found = _from_msprof_csv(table)
    found.items.sort(key=lambda it: (it.group, it.number))
    return found


_NEEDLES = {_STEP.pattern: "Step#", _ITERATION.pattern: "Iteration "}


def _candidates(strings: StringTable, pattern: re.Pattern) -> list[int]:
    """Ids of strings that may match `pattern`: those holding its literal part."""
    needle = _NEEDLES.get(pattern.pattern)
    if needle is None:  # the breakdown names: both literals
        return strings.ids_containing("FP_BP Time") + strings.ids_containing("Iteration Refresh")
    return strings.ids_containing(needle)


def _groups_of_slices(index: TraceIndex, rows: np.ndarray) -> list[str]:
    a, s = index.arrays, index.strings
    process = a["tracks.process"][a["slices.track"][rows]]
    groups = a["processes.group"]
    return [s[groups[p]] if p >= 0 else "" for p in process.tolist()]


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


def _join_torch_npu(found: Iterations, table: Table) -> None:
    """step_trace_time.csv: a breakdown per Step; iterations it names are added if missing."""
    step = table.find("Step")
    if step is None:
        return
    by_number = {it.number: it for it in found.items}
    if not found.items:
        found.source = "step_trace_time.csv"
    for row in range(table.n_rows):
        value = step.values[row]
        if not isinstance(value, (float, np.floating)) or math.isnan(value):
            continue  # cluster files give the step per rank/stage row, or none
        iteration = by_number.get(int(value))
        if iteration is None:
            iteration = by_number[int(value)] = Iteration("", int(value))
            found.items.append(iteration)
        for name in _TORCH_NPU_PARTS:
            column = table.find(name)
            if column is not None and column.kind == "number":
                iteration.parts[name.lower()] = float(column.values[row]) * 1000.0


def _from_msprof_csv(table: Table) -> Iterations:
    """msprof step_trace CSV: windows from Iteration End and Iteration Time (µs)."""
    number, end, length = (table.find("Iteration ID"), table.find("Iteration End"),
                            table.find("Iteration Time"))
    found = Iterations("step_trace CSV", [])
    if number is None or end is None or length is None:
        return found
    end_ns = (end.values if end.kind == "timestamp" else np.rint(end.values * 1000))
    for row in range(table.n_rows):
        if math.isnan(float(number.values[row])):
            continue
        stop = int(end_ns[row])
        iteration = Iteration("", int(number.values[row]),
                              stop - int(round(float(length.values[row]) * 1000)), stop)
        for name, label in _MSPROF_PARTS.items():
            column = table.find(name)
            if column is not None and not math.isnan(float(column.values[row])):
                iteration.parts[label] = float(column.values[row]) * 1000.0
        found.items.append(iteration)
    return found
