"""Summary tables of the Ascend SQLite exports, made into the CSV each stands for.

A text export writes step_trace_time.csv, kernel_details.csv, operator_memory.csv,
memory_record.csv and npu_module_mem.csv; the SQLite export holds the same rows in tables
(analysis.db ``StepTraceTime``; ``TASK`` joined with ``COMPUTE_TASK_INFO``; ``OP_MEMORY``,
``MEMORY_RECORD``, ``NPU_MODULE_MEM``). Each is read here into a
:class:`~proftui.core.model.table.Table` with the CSV's kind, headers and units, so
the iterations, op types, diff and the tables pane use them as they use the CSV.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.errors import NotATraceError, ProftuiError
from proftui.core.model.table import Column, Table, split_unit
from proftui.core.source.dbfile import DbFile, exact_int, open_db

_MISSING_TS = np.iinfo(np.int64).min  # how a timestamp column marks an empty cell
_MB = 1024.0 * 1024.0
_NA = 4294967295  # msprof's "no value" for a 32-bit id (model id, context id)
# analysis.db StepTraceTime column -> step_trace_time.csv header (µs)
_STEP_TRACE = {
    "step": "Step", "computing": "Computing",
    "communication_not_overlapped": "Communication(Not Overlapped)", "overlapped": "Overlapped",
    "communication": "Communication", "free": "Free", "stage": "Stage", "bubble": "Bubble",
    "communication_not_overlapped_and_exclude_receive":
        "Communication(Not Overlapped and Exclude Receive)", "preparing": "Preparing"}
_ANALYSIS_NOT_READ = {
    "CommAnalyzerTime": "communication analysis by operator (not a table; proftui comm "
                        "reads it)",
    "CommAnalyzerBandwidth": "communication bandwidth analysis (not a table; proftui comm "
                             "reads it)",
    "CommAnalyzerMatrix": "communication matrix (not a table; proftui comm reads it)",
}


@dataclass(frozen=True)
class _Spec:
    """How one kind of table is read from a timeline database."""

    kind: str
    needs: tuple[str, ...]  # tables it reads
    read: Callable[[DbFile, _Labels], list[Column]]


def tables_of(path: str) -> list[tuple[str, str]]:
    """(kind, source) of each summary table a timeline database stands in for."""
    try:
        with open_db(path) as db:
            return [(spec.kind, "+".join(spec.needs)) for spec in _SPECS
                    if all(db.has(t) for t in spec.needs)]
    except NotATraceError:
        return []


def analysis_tables(path: str) -> list[tuple[str, str, str]]:
    """(kind, table, why not read) of analysis.db's tables ("" why when it is read)."""
    try:
        with open_db(path) as db:
            names = sorted(db.tables)
    except NotATraceError as exc:
        return [("", "", str(exc))]
    out = []
    for name in names:
        if name == "StepTraceTime":
            out.append(("step_trace_time", name, ""))
        else:
            out.append(("", name, _ANALYSIS_NOT_READ.get(
                name, "a table proftui does not know (not read)")))
    return out


def read_db_table(path: str, kind: str, source: str, group: str = "") -> Table:
    """Read one summary table of a SQLite export; raises ProftuiError if it cannot be read."""
    try:
        with open_db(path) as db:
            labels = _Labels(db)
            if source == "StepTraceTime":
                columns = _step_trace_time(db)
            else:
                spec = next((s for s in _SPECS if s.kind == kind
                             and "+".join(s.needs) == source), None)
                if spec is None:
                    raise ProftuiError(f"{os.path.basename(path)}: no table {source} of kind "
                                       f"{kind}.")
                columns = spec.read(db, labels)
    except NotATraceError as exc:
        raise ProftuiError(str(exc)) from None
    n_rows = len(columns[0].values) if columns else 0
    diagnostics = Diagnostics()
    if labels.unknown:
        diagnostics.add("db_unknown_string", labels.unknown)
    return Table(kind, path, columns, n_rows, diagnostics, group)


class _Labels:
    """STRING_IDS and the ENUM_ tables, as text."""

    def __init__(self, db: DbFile) -> None:
        self.strings = dict(db.fetch("SELECT id, value FROM STRING_IDS")) if db.has(
            "STRING_IDS", "id", "value") else {}
        self.modules = dict(db.fetch("SELECT id, name FROM ENUM_MODULE")) if db.has(
            "ENUM_MODULE", "id", "name") else {}
        self.unknown = 0

    def text(self, sid: object) -> str:
        if sid is None:
            return ""
        value = self.strings.get(sid)
        if value is None:
            self.unknown += 1
            return str(sid)
        return str(value)


# -- columns ------------------------------------------------------------------------------------


def _column(header: str, values: list, kind: str) -> Column:
    """A column as read_table makes it: "text", "number" (float, NaN missing) or
    "timestamp" (exact int64 ns, empty cells the int64 minimum)."""
    name, unit = split_unit(header)
    if kind == "text":
        array = np.empty(len(values), dtype=object)
        array[:] = ["" if v is None else str(v) for v in values]
        return Column(header, name, unit, "text", array)
    if kind == "timestamp":
        ns = [exact_int(v) for v in values]
        return Column(header, name, "ns", "timestamp",
                      np.array([_MISSING_TS if v is None else v for v in ns], np.int64))
    return Column(header, name, unit, "number", np.array([_number(v) for v in values],
                                                        np.float64))


def _number(value: object) -> float:
    if isinstance(value, bool) or value is None:
        return math.nan
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return math.nan


def _scaled(values: list, divisor: float) -> list:
    return [None if v is None else _number(v) / divisor for v in values]


def _select(db: DbFile, table: str, columns: list[str], order: str = "") -> dict[str, list]:
    """Columns of a table (absent ones as None), as lists."""
    have = [c for c in columns if db.has(table, c)]
    quoted = ", ".join(f'"{c}"' for c in have)
    rows = db.fetch(f'SELECT {quoted} FROM "{table}"{order}') if have else []
    out = {c: [r[k] for r in rows] for k, c in enumerate(have)}
    n = len(rows)
    return {c: out.get(c, [None] * n) for c in columns}


def _device_type(values: list) -> list:
    return [None if v is None else f"NPU:{v}" for v in values]


def _step_trace_time(db: DbFile) -> list[Column]:
    names = db.tables["StepTraceTime"]
    cols = _select(db, "StepTraceTime", names)
    out = []
    for name in names:
        values = cols[name]
        numeric = all(v is None or not math.isnan(_number(v)) for v in values)
        out.append(_column(_STEP_TRACE.get(name, name), values,
                           "number" if numeric else "text"))
    return out


def _kernel_details(db: DbFile, labels: _Labels) -> list[Column]:
    task_cols = ["startNs", "endNs", "modelId", "taskId", "streamId", "contextId"]
    info_cols = ["name", "opType", "opState", "taskType", "blockDim", "blockNum",
                 "mixBlockDim", "mixBlockNum", "hf32Eligible", "inputShapes", "inputDataTypes",
                 "inputFormats", "outputShapes", "outputDataTypes", "outputFormats", "waitNs"]
    have_t = [c for c in task_cols if db.has("TASK", c)]
    have_i = [c for c in info_cols if db.has("COMPUTE_TASK_INFO", c)]
    select = [f't."{c}"' for c in have_t] + [f'c."{c}"' for c in have_i]
    rows = db.fetch(f"SELECT {', '.join(select)} FROM TASK t JOIN COMPUTE_TASK_INFO c "
                    "ON t.globalTaskId = c.globalTaskId ORDER BY t.startNs")
    got = {c: [r[k] for r in rows] for k, c in enumerate(have_t + have_i)}
    n = len(rows)

    def col(name: str) -> list:
        return got.get(name, [None] * n)

    def text(name: str) -> list:
        return [labels.text(v) if v is not None else None for v in col(name)]

    start = [exact_int(v) for v in col("startNs")]
    end = [exact_int(v) for v in col("endNs")]
    _add_collectives(db, got, start, end)
    n = len(start)
    steps = _step_of(db, start)
    out = [_column("Step Id", steps, "number")] if any(s is not None for s in steps) else []
    out += [_column("Model ID", col("modelId"), "number"),
            _column("Task ID", col("taskId"), "number"),
            _column("Stream ID", col("streamId"), "number"),
            _column("Name", text("name"), "text"), _column("Type", text("opType"), "text")]
    if "opState" in got:
        out.append(_column("OP State", text("opState"), "text"))
    core = [c if c is not None else t for c, t in zip(got.get("_core", [None] * n),
                                                       text("taskType"))]
    out += [_column("Accelerator Core", core, "text"),
            _column("Start Time(us)", start, "timestamp"),
            _column("Duration(us)", [None if a is None or b is None else (b - a) / 1000.0
                                     for a, b in zip(start, end)], "number")]
    if "waitNs" in got:
        out.append(_column("Wait Time(us)", _scaled(col("waitNs"), 1000.0), "number"))
    out += [_column("Block Dim", col("blockDim") if "blockDim" in got else col("blockNum"),
                    "number"),
            _column("Mix Block Dim", col("mixBlockDim") if "mixBlockDim" in got
                    else col("mixBlockNum"), "number")]
    if "hf32Eligible" in got:
        out.append(_column("HF32 Eligible", text("hf32Eligible"), "text"))
    for header, name in (("Input Shapes", "inputShapes"), ("Input Data Types", "inputDataTypes"),
                         ("Input Formats", "inputFormats"), ("Output Shapes", "outputShapes"),
                         ("Output Data Types", "outputDataTypes"),
                         ("Output Formats", "outputFormats")):
        out.append(_column(header, text(name), "text"))
    out.append(_column("Context ID", [None if v == _NA else v for v in col("contextId")],
                       "number"))
    return out


def _add_collectives(db: DbFile, got: dict[str, list], start: list, end: list) -> None:
    """COMMUNICATION_OP's collectives as kernel_details rows (torch_npu lists them there:
    Accelerator Core HCCL, no task or stream id), all rows then ordered by start."""
    if not db.has("COMMUNICATION_OP", "opName", "startNs", "endNs"):
        return
    extra = ["opType", "waitNs"]
    have = [c for c in extra if db.has("COMMUNICATION_OP", c)]
    rows = db.fetch("SELECT opName, startNs, endNs" + "".join(f', "{c}"' for c in have)
                    + " FROM COMMUNICATION_OP")
    if not rows:
        return
    n_old = len(start)
    start += [exact_int(r[1]) for r in rows]
    end += [exact_int(r[2]) for r in rows]
    values = {"name": [r[0] for r in rows], "modelId": [_NA] * len(rows),
              "taskType": [None] * len(rows), "blockDim": [0] * len(rows)}
    for k, c in enumerate(have):
        values[c] = [r[3 + k] for r in rows]
    for column in list(got):
        got[column] += values.get(column, [None] * len(rows))
    for column in ("name", "modelId", "taskType", "blockDim", *have):
        if column not in got:
            got[column] = [None] * n_old + values[column]
    got["_core"] = [None] * n_old + ["HCCL"] * len(rows)
    order = sorted(range(len(start)), key=lambda i: (start[i] is None, start[i] or 0))
    for column in got:
        got[column] = [got[column][i] for i in order]
    start[:] = [start[i] for i in order]
    end[:] = [end[i] for i in order]


def _step_of(db: DbFile, starts: list) -> list:
    """The STEP_TIME step each start falls in (None outside every step)."""
    if not db.has("STEP_TIME", "id", "startNs", "endNs"):
        return [None] * len(starts)
    steps = sorted((a, b, i) for i, a, b in ((exact_int(i), exact_int(a), exact_int(b))
                                             for i, a, b in db.fetch(
                                                 "SELECT id, startNs, endNs FROM STEP_TIME"))
                   if None not in (i, a, b))
    if not steps:
        return [None] * len(starts)
    lo = np.array([s[0] for s in steps], np.int64)
    hi = np.array([s[1] for s in steps], np.int64)
    t = np.array([_MISSING_TS if v is None else v for v in starts], np.int64)
    k = np.searchsorted(lo, t, side="right") - 1
    inside = (k >= 0) & (t <= hi[np.maximum(k, 0)]) & (t != _MISSING_TS)
    ids = [s[2] for s in steps]
    return [ids[j] if ok else None for j, ok in zip(k.tolist(), inside.tolist())]


def _operator_memory(db: DbFile, labels: _Labels) -> list[Column]:
    c = _select(db, "OP_MEMORY", [
        "name", "size", "allocationTime", "releaseTime", "activeReleaseTime", "duration",
        "activeDuration", "allocationTotalAllocated", "allocationTotalReserved",
        "allocationTotalActive", "releaseTotalAllocated", "releaseTotalReserved",
        "releaseTotalActive", "streamPtr", "deviceId"], " ORDER BY rowid")
    out = [_column("Name", [labels.text(v) for v in c["name"]], "text"),
           _column("Size(KB)", _scaled(c["size"], 1024.0), "number")]
    for header, name in (("Allocation Time(us)", "allocationTime"),
                         ("Release Time(us)", "releaseTime"),
                         ("Active Release Time(us)", "activeReleaseTime")):
        out.append(_column(header, c[name], "timestamp"))
    out += [_column("Duration(us)", _scaled(c["duration"], 1000.0), "number"),
            _column("Active Duration(us)", _scaled(c["activeDuration"], 1000.0), "number")]
    for header, name in (
            ("Allocation Total Allocated(MB)", "allocationTotalAllocated"),
            ("Allocation Total Reserved(MB)", "allocationTotalReserved"),
            ("Allocation Total Active(MB)", "allocationTotalActive"),
            ("Release Total Allocated(MB)", "releaseTotalAllocated"),
            ("Release Total Reserved(MB)", "releaseTotalReserved"),
            ("Release Total Active(MB)", "releaseTotalActive")):
        out.append(_column(header, _scaled(c[name], _MB), "number"))
    out += [_column("Stream Ptr", c["streamPtr"], "number"),
            _column("Device Type", _device_type(c["deviceId"]), "text")]
    return out


def _memory_record(db: DbFile, labels: _Labels) -> list[Column]:
    c = _select(db, "MEMORY_RECORD", ["component", "timestamp", "totalAllocated",
                                      "totalReserved", "totalActive", "streamPtr",
                                      "deviceId"], " ORDER BY rowid")
    return [_column("Component", [labels.text(v) for v in c["component"]], "text"),
            _column("Timestamp(us)", c["timestamp"], "timestamp"),
            _column("Total Allocated(MB)", _scaled(c["totalAllocated"], _MB), "number"),
            _column("Total Reserved(MB)", _scaled(c["totalReserved"], _MB), "number"),
            _column("Total Active(MB)", _scaled(c["totalActive"], _MB), "number"),
            _column("Stream Ptr", c["streamPtr"], "number"),
            _column("Device Type", _device_type(c["deviceId"]), "text")]


def _npu_module_mem(db: DbFile, labels: _Labels) -> list[Column]:
    c = _select(db, "NPU_MODULE_MEM", ["moduleId", "timestampNs", "totalReserved",
                                       "deviceId"], " ORDER BY rowid")
    return [_column("Component", [labels.modules.get(v, v) for v in c["moduleId"]], "text"),
            _column("Timestamp(us)", c["timestampNs"], "timestamp"),
            _column("Total Reserved(MB)", _scaled(c["totalReserved"], _MB), "number"),
            _column("Device", _device_type(c["deviceId"]), "text")]


_SPECS = (
    _Spec("kernel_details", ("TASK", "COMPUTE_TASK_INFO"), _kernel_details),
    _Spec("operator_memory", ("OP_MEMORY",), _operator_memory),
    _Spec("memory_record", ("MEMORY_RECORD",), _memory_record),
    _Spec("npu_module_mem", ("NPU_MODULE_MEM",), _npu_module_mem),
)
