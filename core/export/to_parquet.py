"""The index as Parquet, partitioned by rank, for engines that answer cluster-wide questions.

A job of a thousand ranks does not fit one terminal session; written as Parquet, DuckDB on one
machine (or Spark, Trino on many) reads it. Two datasets under the directory asked for:

- ``slices/rank=R/part-0.parquet``: one row per slice: group (the full rank or device label),
  process, track, name, category, start_ns (absolute, the trace's clock), dur_ns, depth,
  iteration (the step of its rank whose window holds its start; null for none), side
  ("device" or "host") and is_op (whether proftui counts it as an operator: see
  :mod:`proftui.core.ops.roles`).
- ``steps/rank=R/part-0.parquet``: one row per rank and step: group, iteration, start_ns,
  end_ns, step_ns, the device breakdown's fields (null where the step ran nothing on a
  device) and the host's as ``host_*`` (see :mod:`proftui.core.analysis.breakdown`).

R is the rank's number for "rank N" groups, else the group's label (quoted for a path; "all"
for a profile of one group), in Hive's key=value form that engines read as a column. Strings
are dictionary-encoded from the index's string table: no Python object per row. pyarrow is an
optional extra (``pip install 'proftui[parquet]'``), imported only here.

The directory is written beside its destination under a temporary name and renamed into place:
a failed export leaves nothing, and an existing directory is replaced (with `overwrite`) only
when it holds nothing but an earlier export's datasets.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import numpy as np

from proftui.core.analysis.breakdown import StepBreakdown
from proftui.core.export.to_csv import ExportError, ExportExists, window_events
from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.ops.aggregate import GroupWindows
from proftui.core.ops.instances import iteration_of
from proftui.core.ops.iterations import Iteration
from proftui.core.ops.roles import roles, slice_groups, track_groups

DATASETS = ("slices", "steps")
_RANK = re.compile(r"^rank (\d+)$")


@dataclass(frozen=True)
class ParquetResult:
    """Where the datasets went and how many rows each holds."""

    path: str
    slices: int
    steps: int
    partitions: int  # ranks written, of slices or of steps


def require_pyarrow() -> tuple[Any, Any]:
    """pyarrow and its parquet module; a readable error when the extra is not installed."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ProftuiError("Parquet export needs pyarrow: pip install 'proftui[parquet]'."
                           ) from None
    return pa, pq


def partition(group: str) -> str:
    """The Hive partition directory of a group: rank=3 for "rank 3"."""
    m = _RANK.match(group)
    return f"rank={m.group(1)}" if m else f"rank={quote(group or 'all', safe='')}"


def export_parquet(index: TraceIndex, directory: str, *, iterations: Sequence[Iteration],
                   steps: Sequence[StepBreakdown], start_ns: int | None = None,
                   end_ns: int | None = None, tracks: Sequence[int] | np.ndarray | None = None,
                   groups: GroupWindows | None = None, overwrite: bool = False
                   ) -> ParquetResult:
    """Write the slices of a window (as :func:`~proftui.core.export.to_csv.export_events` chooses
    them; None bounds: all) and the `steps` as Parquet under `directory`."""
    pa, pq = require_pyarrow()
    target = os.path.abspath(directory)
    _check_target(target, overwrite)
    parent = os.path.dirname(target)
    try:
        work = tempfile.mkdtemp(prefix=".proftui-parquet-", dir=parent)
    except OSError as exc:
        raise ExportError(f"Cannot write in {parent}: {exc.strerror}.") from exc
    try:
        rows, _ = window_events(index, start_ns, end_ns, tracks, False, groups)
        groups = slice_groups(index)[rows]
        ranks: set[str] = set()  # the rank partitions written, of slices or of steps
        for gid in np.unique(groups).tolist():
            mine = rows[groups == gid]
            table = _slice_table(pa, index, mine, iterations)
            where = os.path.join(work, "slices", partition(index.strings[gid]))
            os.makedirs(where)
            pq.write_table(table, os.path.join(where, "part-0.parquet"))
            ranks.add(partition(index.strings[gid]))
        by_group: dict[str, list[StepBreakdown]] = {}
        for step in steps:
            by_group.setdefault(step.group, []).append(step)
        for group, mine_steps in by_group.items():
            where = os.path.join(work, "steps", partition(group))
            os.makedirs(where)
            pq.write_table(_step_table(pa, mine_steps), os.path.join(where, "part-0.parquet"))
            ranks.add(partition(group))
        if os.path.exists(target):
            shutil.rmtree(target)  # checked above: an earlier export, and overwrite asked
        os.rename(work, target)
    except OSError as exc:
        shutil.rmtree(work, ignore_errors=True)
        raise ExportError(f"Cannot write {target}: {exc.strerror or exc}.") from exc
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return ParquetResult(target, len(rows), len(steps), len(ranks))


def _check_target(target: str, overwrite: bool) -> None:
    if not os.path.lexists(target):
        return
    if not os.path.isdir(target):
        raise ExportError(f"{target} exists and is not a directory.")
    if not overwrite:
        raise ExportExists(f"{target} already exists.")
    foreign = [n for n in os.listdir(target) if n not in DATASETS]
    if foreign:
        raise ExportError(f"{target} holds more than an earlier export ({foreign[0]} ...); "
                          "it is left as it is: choose another directory.")


def _strings(pa: Any, index: TraceIndex, ids: np.ndarray) -> Any:
    """A dictionary-encoded column of the strings `ids` (string-table ids)."""
    unique, codes = np.unique(ids, return_inverse=True)
    texts = [index.strings[int(i)] for i in unique.tolist()]
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)),
                                          pa.array(texts, pa.string()))


def _labels(pa: Any, labels: list[str], per_row: np.ndarray) -> Any:
    """A dictionary-encoded column of `labels[per_row]`."""
    return pa.DictionaryArray.from_arrays(pa.array(per_row.astype(np.int32)),
                                          pa.array(labels, pa.string()))


def _slice_table(pa: Any, index: TraceIndex, rows: np.ndarray,
                 iterations: Sequence[Iteration]) -> Any:
    track = index.col("slices.track")[rows].astype(np.int64)
    process = index.col("tracks.process").astype(np.int64)
    tracks = np.unique(track)
    track_labels = [index.track_label(int(t)) for t in tracks.tolist()]
    process_labels = [index.process_label(int(p)) if p >= 0 else ""
                      for p in process[tracks].tolist()]
    group_labels = [index.strings[g] if g >= 0 else ""
                    for g in track_groups(index)[tracks].tolist()]
    at = np.searchsorted(tracks, track)
    iteration = iteration_of(index, rows, iterations)
    known = ~np.isnan(iteration)
    device = roles(index).device[track]
    return pa.table({
        "group": _labels(pa, group_labels, at),
        "process": _labels(pa, process_labels, at),
        "track": _labels(pa, track_labels, at),
        "name": _strings(pa, index, index.col("slices.name")[rows]),
        "category": _strings(pa, index, index.col("slices.cat")[rows]),
        "start_ns": pa.array(index.col("slices.start")[rows].astype(np.int64)),
        "dur_ns": pa.array(index.col("slices.dur")[rows].astype(np.int64)),
        "depth": pa.array(index.col("slices.depth")[rows].astype(np.int16)),
        "iteration": pa.array(np.where(known, iteration, 0).astype(np.int64), mask=~known),
        "side": _labels(pa, ["host", "device"], device.astype(np.int64)),
        "is_op": pa.array(roles(index).op[rows]),
    })


def _step_table(pa: Any, steps: list[StepBreakdown]) -> Any:
    device_keys = sorted({k for s in steps if s.device for k in s.device}
                         - {"start_ns", "end_ns"})
    host_keys = sorted({k for s in steps for k in s.host})
    columns: dict[str, Any] = {
        "group": pa.array([s.group for s in steps], pa.string()),
        "iteration": pa.array([s.iteration for s in steps], pa.int64()),
        # null for a step known only by its step table (no window), as in --json
        "start_ns": pa.array([s.start_ns if s.timed else None for s in steps], pa.int64()),
        "end_ns": pa.array([s.end_ns if s.timed else None for s in steps], pa.int64()),
        "step_ns": pa.array([s.step_ns for s in steps], pa.int64()),
        "device_start_ns": pa.array([s.device["start_ns"] if s.device else None
                                     for s in steps], pa.int64()),
        "device_end_ns": pa.array([s.device["end_ns"] if s.device else None
                                   for s in steps], pa.int64()),
    }
    for key in device_keys:
        columns[key] = pa.array([s.device.get(key) if s.device else None for s in steps],
                                pa.int64())
    for key in host_keys:
        columns[f"host_{key}"] = pa.array([s.host.get(key) for s in steps], pa.int64())
    return pa.table(columns)
