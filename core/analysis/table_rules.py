"""What the advisor's rules read where a rank has no timeline: the profiler's own tables.

A copy of ASCEND_PROFILER_OUTPUT without trace_view.json, or a capture with data
simplification, still has kernel_details.csv (one row a device task: its core, start and
duration), op_statistic.csv (one row an op type and core: count, total, max) and HCCL's
communication.json (one entry an op and step: its elapse). These give the ai_cpu and
small_collectives rules their ops, and kernel_details' first to last task a capture window
where no step table says how long a step is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from proftui.core.model.table import Column, Table
from proftui.core.tables.query import TIME_UNITS

AI_CPU_CORE = "AI_CPU"  # kernel_details' Accelerator Core, op_statistic's Core Type
_MISSING_TS = np.iinfo(np.int64).min


@dataclass(frozen=True)
class TableOps:
    """Device ops of one rank read from a table: per row (a task, or an op type) its name,
    count, total and longest time (ns), and its start (ns, -1 where the table has none)."""

    source: str  # "kernel_details.csv", "op_statistic.csv"
    names: list[str]
    counts: np.ndarray
    total_ns: np.ndarray
    max_ns: np.ndarray
    start_ns: np.ndarray
    all_ns: float  # every row's time, whatever its core: the device time the rows hold


def _ns(column: Column | None) -> np.ndarray | None:
    """A duration column in ns (NaN where missing), or None without a time unit."""
    if column is None or column.kind != "number" or column.unit not in TIME_UNITS:
        return None
    return column.values.astype(np.float64) * TIME_UNITS[column.unit]


def _text(column: Column | None, n: int) -> list[str]:
    return [str(v).strip() for v in column.values] if column is not None else [""] * n


def _of(tables: Sequence[Table], kind: str, group: str) -> list[Table]:
    return [t for t in tables if t.kind == kind and t.group == group]


def ai_cpu_ops(tables: Sequence[Table], group: str,
               steps: set[int] | None = None) -> TableOps | None:
    """The AI CPU ops of `group`: kernel_details' tasks (those of `steps` only, where given
    and the table has a Step Id), else op_statistic's op types; None without either table."""
    tasks = kernel_rows(tables, group, steps)
    if tasks is not None:
        mine = np.flatnonzero(np.array(tasks.cores, dtype=object) == AI_CPU_CORE)
        return TableOps("kernel_details.csv", [tasks.names[r] for r in mine],
                        np.ones(len(mine), np.int64), tasks.dur_ns[mine], tasks.dur_ns[mine],
                        tasks.start_ns[mine], tasks.all_ns)
    for table in _of(tables, "op_statistic", group):
        total, longest = _ns(table.find("Total Time")), _ns(table.find("Max Time"))
        count = table.find("Count")
        if total is None or longest is None or count is None:
            continue
        core = np.array(_text(table.find("Core Type"), table.n_rows), dtype=object)
        rows = np.flatnonzero((core == AI_CPU_CORE) & np.isfinite(total))
        names = _text(table.find("OP Type"), table.n_rows)
        return TableOps("op_statistic.csv", [names[r] for r in rows],
                        np.nan_to_num(count.values[rows]).astype(np.int64), total[rows],
                        np.nan_to_num(longest[rows]), np.full(len(rows), -1, np.int64),
                        float(np.nansum(total)))
    return None


def capture_window(tables: Sequence[Table], group: str) -> tuple[int, int, str] | None:
    """(first task start, last task end, source) of `group`'s kernel_details, or None."""
    for table in _of(tables, "kernel_details", group):
        start, dur = table.find("Start Time"), _ns(table.find("Duration"))
        if start is None or start.kind != "timestamp" or dur is None:
            continue
        ok = (start.values != _MISSING_TS) & np.isfinite(dur)
        if ok.any():
            begin = start.values[ok].astype(np.int64)
            end = begin + np.round(dur[ok]).astype(np.int64)
            return int(begin.min()), int(end.max()), "kernel_details.csv"
    return None


def table_groups(tables: Sequence[Table]) -> list[str]:
    """The ranks the tables the advisor reads belong to."""
    kinds = ("kernel_details", "op_statistic")
    return list(dict.fromkeys(t.group for t in tables if t.kind in kinds))


def collective_elapses(entries: list[dict], group: str,
                       steps: set[int] | None = None) -> tuple[list[tuple[str, int]], str]:
    """(name, elapse ns) of `group`'s collectives in HCCL's summaries (those of `steps`
    only, where given and the summary is split by step), and the file they came from; ([],
    "") without summaries for the rank."""
    from proftui.core.load.comm_sources import read_sources

    found, _ = read_sources([e for e in entries if str(e.get("group", "")) == group])
    for data in found:
        if data.error or not data.collectives:
            continue
        ops = [(c.name, c.elapse_ns) for c in data.collectives
               if c.elapse_ns is not None and not math.isnan(c.elapse_ns)
               and (steps is None or c.step is None or c.step in steps)]
        return ops, data.source
    return [], ""


@dataclass(frozen=True)
class KernelRows:
    """kernel_details' tasks of one rank (those of the steps asked for, where the table has
    a Step Id): per task its name, op type, OP State, core, start (ns, -1 where missing),
    duration (ns), step (NaN where missing) and its input shapes, dtypes and formats as the
    table writes them; its counters by :meth:`counter`."""

    table: Table
    rows: np.ndarray  # the tasks' rows in `table`
    names: list[str]
    types: list[str]
    states: list[str]
    cores: list[str]
    start_ns: np.ndarray
    dur_ns: np.ndarray
    steps: np.ndarray
    shapes: list[str]
    dtypes: list[str]
    formats: list[str]
    all_ns: float  # every task's time: the device time the rows hold

    def counter(self, name: str) -> np.ndarray | None:
        """A counter column (aiv_vec_ratio ...) of the tasks, NaN where missing; None when
        the table has no such column."""
        column = self.table.find(name)
        if column is None or column.kind != "number":
            return None
        return column.values[self.rows].astype(np.float64)


_KERNEL_TEXTS = ("Name", "Type", "OP State", "Accelerator Core")
_KERNEL_INPUTS = ("Input Shapes", "Input Data Types", "Input Formats")


def _picked(table: Table, name: str, rows: np.ndarray) -> list[str]:
    cells = _text(table.find(name), table.n_rows)
    return [cells[r] for r in rows.tolist()]


def kernel_rows(tables: Sequence[Table], group: str,
                steps: set[int] | None = None) -> KernelRows | None:
    """The tasks of `group`'s kernel_details (see :class:`KernelRows`), None without one."""
    for table in _of(tables, "kernel_details", group):
        dur = _ns(table.find("Duration"))
        if dur is None:
            continue
        keep = np.isfinite(dur)
        step = table.find("Step Id")
        step_values = (step.values.astype(np.float64) if step is not None
                       and step.kind == "number" else np.full(table.n_rows, np.nan))
        if steps is not None and step is not None and step.kind == "number":
            keep &= np.isin(step_values, list(steps))
        rows = np.flatnonzero(keep)
        start = table.find("Start Time")
        starts = (start.values.astype(np.int64) if start is not None
                  and start.kind == "timestamp" else np.full(table.n_rows, -1, np.int64))
        starts = np.where(starts == _MISSING_TS, -1, starts)
        cells = {name: _picked(table, name, rows) for name in _KERNEL_TEXTS}
        return KernelRows(table, rows, *cells.values(), starts[rows], dur[rows],
                          step_values[rows], *(_picked(table, n, rows) for n in _KERNEL_INPUTS),
                          float(dur[rows].sum()))
    return None


def api_calls(tables: Sequence[Table], group: str, name: str) -> tuple[int, float] | None:
    """(count, total ns) of the API `name` in `group`'s api_statistic, None where the table
    or the API is not there."""
    for table in _of(tables, "api_statistic", group):
        names, count = _text(table.find("API Name"), table.n_rows), table.find("Count")
        total = _ns(table.find("Time"))
        if count is None or total is None:
            continue
        for row, api in enumerate(names):
            if api == name:
                return int(np.nan_to_num(count.values[row])), float(np.nan_to_num(total[row]))
    return None
