"""Ascend's per-task rows (kernel_details.csv, op_summary, the SQLite export's TASK joined with
COMPUTE_TASK_INFO) matched to the device slices of the timeline.

A row names its task by stream, start and task id. A slice of `Ascend Hardware` is on the
thread of its stream (the thread's tid is the `Physic Stream Id` its args carry) and starts at
the row's start to the ns (both read exactly). One stream runs one task at a time, so the
stream and the start single a task out; the task id (in the slice's args) is read only where
they do not, and for the one slice the details pane asks about. The SQLite export needs no
matching: each slice is a TASK row (its ordinal says which), joined to COMPUTE_TASK_INFO by
globalTaskId and to TASK_PMU_INFO's counters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Column, Table
from proftui.core.ops.roles import roles
from proftui.core.perf.shapes import Shape, ascend_list, ascend_shapes

TABLE_KINDS = ("kernel_details", "op_summary")  # the first a group has is read
HARDWARE = "Ascend Hardware"
_MISSING_TS = np.iinfo(np.int64).min
# Numeric columns that are no counter: ids and times.
_NOT_COUNTERS = {"step id", "model id", "task id", "stream id", "start time", "task start time",
                 "duration", "task duration", "wait time", "task wait time", "context id",
                 "device_id", "infer id"}


@dataclass
class Rows:
    """Matched rows of one source: per row its cells as shapes, dtypes and counters, and the
    slice it is (-1: not on the timeline); `text(k)` gives row k as the file has it."""

    source: str
    names: list[str]
    op_types: list[str]
    groups: list[str]
    start_ns: np.ndarray
    dur_ns: np.ndarray
    inputs: list[list[Shape | None]]
    outputs: list[list[Shape | None]]
    dtypes: list[list[str]]
    counters: list[dict[str, float]]
    slice_rows: np.ndarray
    task_ids: np.ndarray  # -1 where unknown
    text: Callable[[int], dict[str, str]]
    concrete: list[list[str]] = field(default_factory=list)  # Kineto's Concrete Inputs


# -- the text tables ----------------------------------------------------------------------------


def group_offsets(index: TraceIndex) -> dict[str, int]:
    """Each group's clock offset (ns added to its timeline's own times), as the loader
    applied it; the tables share their timeline's clock."""
    found: dict[str, int] = {}
    for entry in index.meta.get("sources", []):
        found.setdefault(str(entry.get("group", "")), int(entry.get("offset_ns", 0) or 0))
    return found


def table_rows(index: TraceIndex, table: Table) -> Rows:
    """The rows of one kernel_details / op_summary table, matched to the timeline."""
    col = table.find
    name, kind = col("Name", "Op Name"), col("Type", "OP Type")
    start, dur = col("Start Time", "Task Start Time"), col("Duration", "Task Duration")
    stream, task = col("Stream ID"), col("Task ID")
    if name is None or start is None or stream is None:
        raise ProftuiError(f"{table.path}: no Name, Start Time or Stream ID column.")
    n = table.n_rows
    start_ns = _times_ns(start) + group_offsets(index).get(table.group, 0)
    dur_ns = _times_ns(dur) if dur is not None else np.zeros(n, np.int64)
    task_ids = _ids(task, n)
    slices = match_rows(index, table.group, _ids(stream, n), start_ns, task_ids)
    counters = _counter_columns(table)
    shapes = _Memo(ascend_shapes)
    lists = _Memo(ascend_list)
    in_s, out_s, in_t = (col("Input Shapes"), col("Output Shapes"), col("Input Data Types"))
    return Rows(
        source=_file_name(table), names=_texts(name, n), op_types=_texts(kind, n),
        groups=[table.group] * n, start_ns=start_ns, dur_ns=np.maximum(dur_ns, 0),
        inputs=[shapes(t) for t in _texts(in_s, n)],
        outputs=[shapes(t) for t in _texts(out_s, n)],
        dtypes=[lists(t) for t in _texts(in_t, n)],
        counters=[{c.header: float(c.values[k]) for c in counters
                   if not math.isnan(float(c.values[k]))} for k in range(n)],
        slice_rows=slices, task_ids=task_ids,
        text=lambda k: {c.header: cell_text(c, k) for c in table.columns})


def _file_name(table: Table) -> str:
    import os

    base = os.path.basename(table.path)
    return "op_summary.csv" if table.kind == "op_summary" else base or f"{table.kind}.csv"


class _Memo(dict):
    """A parser of repeated texts, each parsed once."""

    def __init__(self, parse: Callable) -> None:
        super().__init__()
        self.parse = parse

    def __call__(self, text: str):
        if text not in self:
            self[text] = self.parse(text)
        return list(self[text])

    def __missing__(self, text: str):
        raise KeyError(text)


def _texts(column: Column | None, n: int) -> list[str]:
    if column is None:
        return [""] * n
    return ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
            for v in column.values.tolist()]


def _ids(column: Column | None, n: int) -> np.ndarray:
    if column is None or column.kind != "number":
        return np.full(n, -1, np.int64)
    values = np.asarray(column.values, np.float64)
    return np.where(np.isfinite(values), values, -1).astype(np.int64)


def _times_ns(column: Column) -> np.ndarray:
    """A time column as int64 ns: a timestamp column is exact already; µs numbers below
    2^53 ns are exact once scaled and rounded."""
    if column.kind == "timestamp":
        return np.asarray(column.values, np.int64)
    scale = {"ns": 1, "us": 1000, "µs": 1000, "ms": 1_000_000, "s": 1_000_000_000}.get(
        column.unit, 1000)
    values = np.asarray(column.values, np.float64) * scale
    return np.where(np.isfinite(values), np.rint(values), _MISSING_TS).astype(np.int64)


def _counter_columns(table: Table) -> list[Column]:
    return [c for c in table.columns if c.kind == "number"
            and c.name.strip().lower() not in _NOT_COUNTERS]


def cell_text(column: Column, k: int) -> str:
    """Cell `k` as text: a timestamp as µs with 3 decimals (as msprof writes it), a number
    as written without trailing zeros, a missing one as N/A."""
    value = column.values[k]
    if column.kind == "text":
        return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(
            value)
    if column.kind == "timestamp":
        ns = int(value)
        return "N/A" if ns == _MISSING_TS else f"{ns // 1000}.{ns % 1000:03d}"
    number = float(value)
    if math.isnan(number):
        return "N/A"
    return np.format_float_positional(number, trim="-")


# -- matching -----------------------------------------------------------------------------------


def hardware_slices(index: TraceIndex, group: str) -> tuple[np.ndarray, np.ndarray]:
    """The slices of `group`'s Ascend Hardware streams and each one's stream (its thread's
    tid), by (stream, start)."""
    a, s = index.arrays, index.strings
    hw = np.array([s[n] == HARDWARE for n in a["processes.name"].tolist()], bool)
    tracks = np.flatnonzero((a["tracks.process"] >= 0) & hw[np.maximum(a["tracks.process"], 0)]
                            & roles(index).device)
    gid = s.find(group)
    chosen, streams = [], []
    for t in tracks.tolist():
        p = int(a["tracks.process"][t])
        tid = s[a["tracks.tid"][t]]
        if int(a["processes.group"][p]) != gid or not tid.lstrip("-").isdigit():
            continue
        first, count = int(a["tracks.first_slice"][t]), int(a["tracks.slice_count"][t])
        chosen.append(np.arange(first, first + count, dtype=np.int64))
        streams.append(np.full(count, int(tid), np.int64))
    if not chosen:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    slices, stream = np.concatenate(chosen), np.concatenate(streams)
    order = np.lexsort((a["slices.start"][slices], stream))
    return slices[order], stream[order]


def match_rows(index: TraceIndex, group: str, streams: np.ndarray, start_ns: np.ndarray,
               task_ids: np.ndarray) -> np.ndarray:
    """Per row, the slice of `group` on the row's stream starting at its start to the ns
    (-1: none); where several slices or rows share a stream and start, the task id (from
    the slices' args) decides, and what it cannot tell apart is left unmatched."""
    slices, stream = hardware_slices(index, group)
    out = np.full(len(streams), -1, np.int64)
    if not len(slices):
        return out
    starts = index.arrays["slices.start"][slices]
    lo = np.zeros(len(streams), np.int64)
    hi = np.zeros(len(streams), np.int64)
    for st in np.unique(streams).tolist():
        rows = np.flatnonzero(streams == st)
        a, b = np.searchsorted(stream, st, "left"), np.searchsorted(stream, st, "right")
        lo[rows] = a + np.searchsorted(starts[a:b], start_ns[rows], "left")
        hi[rows] = a + np.searchsorted(starts[a:b], start_ns[rows], "right")
    one = (hi - lo == 1) & (start_ns != _MISSING_TS) & (streams >= 0)
    out[one] = slices[lo[one]]
    # A slice two rows claim, or rows with several candidates: the task id decides.
    taken, counts = np.unique(out[one], return_counts=True)
    shared = np.isin(out, taken[counts > 1]) & one
    unclear = np.flatnonzero(((hi - lo > 1) & (streams >= 0)) | shared)
    out[shared] = -1
    if len(unclear):
        _by_task_id(index, unclear, slices, lo, hi, task_ids, out)
    return out


def _by_task_id(index: TraceIndex, rows: np.ndarray, slices: np.ndarray, lo: np.ndarray,
                hi: np.ndarray, task_ids: np.ndarray, out: np.ndarray) -> None:
    from proftui.core.query.args import read_args

    candidates = np.unique(np.concatenate([slices[lo[r]:hi[r]] for r in rows.tolist()]))
    ids = dict(zip(candidates.tolist(), (slice_task_id(x) for x in read_args(
        index, index.arrays["slices.ref"][candidates]))))
    used: set[int] = set()
    for r in rows.tolist():
        fit = [int(x) for x in slices[lo[r]:hi[r]].tolist()
               if ids.get(int(x)) == int(task_ids[r]) and task_ids[r] >= 0]
        if len(fit) == 1 and fit[0] not in used:
            out[r] = fit[0]
            used.add(fit[0])


def slice_task_id(args: object) -> int | None:
    """The task id a device slice's args carry (`Task Id`; the SQLite export's `taskId`)."""
    if not isinstance(args, dict):
        return None
    value = args.get("Task Id", args.get("taskId"))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# -- the SQLite export --------------------------------------------------------------------------

_DB_INFO = ("name", "opType", "taskType", "blockDim", "mixBlockDim", "inputShapes",
            "inputDataTypes", "inputFormats", "outputShapes", "outputDataTypes",
            "outputFormats", "hf32Eligible", "opState", "waitNs")
_DB_STRINGS = {"name", "opType", "taskType", "inputShapes", "inputDataTypes", "inputFormats",
               "outputShapes", "outputDataTypes", "outputFormats", "hf32Eligible", "opState"}
_DB_COUNTERS = {"blockDim": "Block Dim", "mixBlockDim": "Mix Block Dim"}


def db_rows(index: TraceIndex, source: dict) -> Rows | None:
    """The compute tasks of one SQLite export: TASK rows joined to COMPUTE_TASK_INFO by
    globalTaskId, with their TASK_PMU_INFO counters, each the slice its TASK row is."""
    from proftui.core.source.dbfile import exact_int, open_db

    task = next((e for e in source["sqlite"].get("refs", []) if e[0] == "TASK"), None)
    if task is None or task[3] is None:
        return None
    first_ref, count, first_rowid = int(task[1]), int(task[2]), int(task[3])
    with open_db(source["path"]) as db:
        if not db.has("COMPUTE_TASK_INFO", "globalTaskId") or not db.has("TASK", "globalTaskId"):
            return None
        info = [c for c in _DB_INFO if db.has("COMPUTE_TASK_INFO", c)]
        task_cols = [c for c in ("startNs", "endNs", "streamId", "taskId")
                     if db.has("TASK", c)]
        rows = db.fetch(
            "SELECT t.rowid, t.globalTaskId, " + ", ".join(f't."{c}"' for c in task_cols)
            + "".join(f', c."{c}"' for c in info) + " FROM TASK t JOIN COMPUTE_TASK_INFO c "
            "ON t.globalTaskId = c.globalTaskId ORDER BY t.rowid")
        strings = dict(db.fetch("SELECT id, value FROM STRING_IDS")) if db.has(
            "STRING_IDS", "id", "value") else {}
        pmu: dict[int, dict[str, float]] = {}
        if db.has("TASK_PMU_INFO", "globalTaskId", "name", "value"):
            for gid, name, value in db.fetch("SELECT globalTaskId, name, value "
                                             "FROM TASK_PMU_INFO"):
                if isinstance(value, (int, float)):
                    pmu.setdefault(gid, {})[str(strings.get(name, name))] = float(value)
    headers = ["globalTaskId", *task_cols, *info]
    cells = [dict(zip(headers, r[1:])) for r in rows]
    for c in cells:
        for key in _DB_STRINGS & c.keys():
            if c[key] is not None:
                c[key] = str(strings.get(c[key], c[key]))
    refs = np.array([first_ref + (int(r[0]) - first_rowid) for r in rows], np.int64)
    refs = np.where((refs >= first_ref) & (refs < first_ref + count), refs, -1)
    n = len(cells)
    start = np.array([exact_int(c.get("startNs")) or 0 for c in cells], np.int64)
    end = np.array([exact_int(c.get("endNs")) or 0 for c in cells], np.int64)
    shapes, lists = _Memo(ascend_shapes), _Memo(ascend_list)
    group = str(source.get("group", ""))

    def counters(c: dict) -> dict[str, float]:
        out = {label: float(c[k]) for k, label in _DB_COUNTERS.items()
               if isinstance(c.get(k), (int, float))}
        out.update(pmu.get(c["globalTaskId"], {}))
        return out

    def text(k: int) -> dict[str, str]:
        row = {key: "" if v is None else str(v) for key, v in cells[k].items()}
        row.update({name: np.format_float_positional(v, trim="-")
                    for name, v in pmu.get(cells[k]["globalTaskId"], {}).items()})
        return row

    return Rows(
        source="COMPUTE_TASK_INFO", names=[str(c.get("name") or "") for c in cells],
        op_types=[str(c.get("opType") or "") for c in cells], groups=[group] * n,
        start_ns=start, dur_ns=np.maximum(end - start, 0),
        inputs=[shapes(str(c.get("inputShapes") or "")) for c in cells],
        outputs=[shapes(str(c.get("outputShapes") or "")) for c in cells],
        dtypes=[lists(str(c.get("inputDataTypes") or "")) for c in cells],
        counters=[counters(c) for c in cells],
        slice_rows=_slices_of_refs(index, refs),
        task_ids=np.array([c["taskId"] if isinstance(c.get("taskId"), int) else -1
                           for c in cells], np.int64),
        text=text)


def _slices_of_refs(index: TraceIndex, refs: np.ndarray) -> np.ndarray:
    """Per event ordinal, the slice it is (-1: none)."""
    slice_refs = index.arrays["slices.ref"].astype(np.int64)
    order = np.argsort(slice_refs, kind="stable")
    at = np.searchsorted(slice_refs[order], refs)
    at = np.minimum(at, max(len(order) - 1, 0))
    found = (len(order) > 0) & (refs >= 0)
    found = found & (slice_refs[order[at]] == refs) if len(order) else np.zeros(len(refs), bool)
    return np.where(found, order[at] if len(order) else -1, -1).astype(np.int64)


def ascend_rows(index: TraceIndex, tables: Sequence[Table]) -> list[Rows]:
    """Every group's task rows: from its SQLite export, else from its kernel_details (or
    op_summary) table."""
    found: list[Rows] = []
    db_groups = set()
    for entry in index.meta.get("sources", []):
        if entry.get("sqlite"):
            rows = db_rows(index, entry)
            if rows is not None:
                found.append(rows)
                db_groups.add(str(entry.get("group", "")))
    for group in dict.fromkeys(t.group for t in tables):
        if group in db_groups:
            continue
        for kind in TABLE_KINDS:  # every file of the first kind (old layouts: one a step)
            mine = [t for t in tables if t.kind == kind and t.group == group
                    and t.path.endswith(".csv")]
            if mine:
                found.extend(table_rows(index, t) for t in mine)
                break
    return found
