"""Ascend SQLite exports read into the builder: torch_npu's `ascend_pytorch_profiler_N.db`,
MindSpore's `ascend_mindspore_profiler_N.db` and msprof's `msprof_*.db`.

They open into the tracks their text export (trace_view.json, msprof_*.json) has, named as it
names them, so that every question asked of a profile gets the same answer from either:

- ``TASK`` -> ``Ascend Hardware`` / ``Stream N``: compute tasks named by ``COMPUTE_TASK_INFO``,
  the others (communication tasks included, as the text export shows them there) by their
  task type;
- ``COMMUNICATION_TASK_INFO`` -> ``HCCL`` / ``Plane N`` (copies of those tasks, named by their
  HCCL task type) and ``COMMUNICATION_OP`` -> ``HCCL`` / ``Group N Communication``;
- ``PYTORCH_API`` -> ``Python`` (torch ops, task queue, Python calls) and ``CANN_API`` ->
  ``CANN`` (``AscendCL@...``, ``Node@launch`` ...), on their threads;
- ``CONNECTION_IDS`` and the connection ids -> flows: ``HostToDevice`` (CANN to device),
  ``async_npu`` (torch op to device), ``async_task_queue`` (enqueue to dequeue),
  ``fwdbwd`` (forward to backward op), ``MsTx`` (range to device);
- ``MSTX_EVENTS`` -> user ranges; ``OVERLAP_ANALYSIS`` -> ``Overlap Analysis``;
  ``STEP_TIME`` -> ``ProfilerStep#N`` where the torch ops lack them;
- ``NPU_MEM``, ``AICORE_FREQ``, ``HBM``, ``LLC``, ``MEMORY_RECORD``, ``NPU_MODULE_MEM`` ->
  counters.

Times are integer ns in the database and stay so (TEXT timestamps are read exactly). A table
or column this module does not read is listed, with the reason, by :func:`schema_notes`; a
missing one is counted as a diagnostic and what it would have shown is left out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from proftui.core.build.builder import TraceBuilder, distinct_rows
from proftui.core.importers.ascend_db.counters import read_counters
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.errors import Cancelled, NotATraceError
from proftui.core.runtime.cores import usable_cores
from proftui.core.source.dbfile import NULL, Columns, DbFile, Prefetch, open_db, read_ints

# File names of the exports (the rank, when there is one, is the number).
TIMELINE_DB = re.compile(r"^(ascend_pytorch_profiler|ascend_mindspore_profiler)(_\d+)?\.db$")
MSPROF_DB = re.compile(r"^msprof(_\d+)+\.db$")

# Tables read, with the columns read: integers (exact), those marked "?" may be absent (read
# as NULL), those marked "~" are counter values (floats, may be absent).
READ: dict[str, tuple[str, ...]] = {
    "STRING_IDS": ("id", "value"),
    "TASK": ("startNs", "endNs", "globalTaskId", "?deviceId", "?connectionId", "?taskType",
             "?streamId"),
    "COMPUTE_TASK_INFO": ("globalTaskId", "name"),
    "COMMUNICATION_TASK_INFO": ("globalTaskId", "?taskType", "?planeId", "?groupName"),
    "COMMUNICATION_OP": ("startNs", "endNs", "opName", "?connectionId", "?groupName",
                         "?deviceId"),
    "PYTORCH_API": ("startNs", "endNs", "globalTid", "name", "?connectionId", "?type"),
    "CANN_API": ("startNs", "endNs", "globalTid", "name", "?connectionId", "?type"),
    "CONNECTION_IDS": ("id", "connectionId"),
    "MSTX_EVENTS": ("startNs", "endNs", "globalTid", "?message", "?eventType",
                    "?connectionId"),
    "OVERLAP_ANALYSIS": ("startNs", "endNs", "type", "?deviceId"),
    "STEP_TIME": ("id", "startNs", "endNs"),
    "NPU_MEM": ("timestampNs", "?type", "~ddr", "~hbm", "?deviceId"),
    "AICORE_FREQ": ("timestampNs", "~freq", "?deviceId"),
    "HBM": ("timestampNs", "~bandwidth", "?hbmId", "?type", "?deviceId"),
    "LLC": ("timestampNs", "?llcId", "?mode", "~hitRate", "~throughput", "?deviceId"),
    "MEMORY_RECORD": ("timestamp", "?component", "~totalAllocated", "~totalReserved",
                      "~totalActive", "?deviceId"),
    "NPU_MODULE_MEM": ("timestampNs", "moduleId", "~totalReserved", "?deviceId"),
    "ENUM_API_TYPE": ("id", "name"),
    "ENUM_MODULE": ("id", "name"),
    "NPU_INFO": ("id", "?name"),
    "RANK_DEVICE_MAP": ("rankId", "deviceId"),
    "SESSION_TIME_INFO": ("startTimeNs", "?endTimeNs"),
    "META_DATA": ("name", "value"),
    "HOST_INFO": ("?hostUid", "hostName"),
}
# Columns read apart from the bulk read: the capture's pid; TASK's ids when there are FFTS+
# subtasks.
_ALSO_READ = {"TASK": ("taskId", "contextId", "globalPid")}
_ARGS_ONLY = "columns not used for the timeline (shown in an event's details, its args)"
# Tables known and not read into the timeline, and why.
NOT_READ: dict[str, str] = {
    "OP_MEMORY": "read as the operator_memory table",
    "TASK_PMU_INFO": "per-task PMU metrics (not a timeline)",
    "NPU_OP_MEM": "CANN operator memory events (not shown)",
    "PYTORCH_CALLCHAINS": "call stacks (not shown)",
    "ACC_PMU": "accelerator PMU levels (not shown)",
    "SOC_BANDWIDTH_LEVEL": "SoC bandwidth levels (not shown)",
    "QOS": "QoS bandwidth (not shown)",
    "DDR": "DDR bandwidth (not shown)",
    "HCCS": "HCCS bandwidth (not shown)", "PCIE": "PCIe bandwidth (not shown)",
    "NIC": "NIC bandwidth (not shown)", "ROCE": "RoCE bandwidth (not shown)",
    "NETDEV_STATS": "network device counters (not shown)",
    "SAMPLE_PMU_TIMELINE": "sampled PMU (not shown)", "SAMPLE_PMU_SUMMARY": "PMU summary",
    "CPU_USAGE": "host CPU usage (not shown)", "HOST_MEM_USAGE": "host memory (not shown)",
    "HOST_DISK_USAGE": "host disk (not shown)", "HOST_NETWORK_USAGE": "host network",
    "OSRT_API": "OS runtime calls (not shown)", "MEMCPY_INFO": "memcpy sizes (not shown)",
    "COMMUNICATION_SCHEDULE_TASK_INFO": "AI CPU communication scheduling (not shown)",
    "GC_RECORD": "Python GC records (not shown)",
    "sqlite_sequence": "SQLite bookkeeping", "status_info": "MindStudio Insight bookkeeping",
    "connectionCats": "MindStudio Insight's flow categories (derived again here)",
}
_ENUMS = re.compile(r"^ENUM_")
# Process names, sort indexes (the text export's, so that tracks agree) and labels.
PYTHON, CANN, HARDWARE, HCCL, OVERLAP = ("Python", "CANN", "Ascend Hardware", "HCCL",
                                         "Overlap Analysis")
_SORT = {PYTHON: 0, CANN: 7, HARDWARE: 13, "AI Core Freq": 14, HCCL: 15, "HBM": 17,
         "LLC": 18, "NPU MEM": 19, OVERLAP: 23, "MSTX": 8, "Memory": 24, "NPU Module Memory": 25}
_API_LEVELS = {"acl": "AscendCL", "node": "Node", "runtime": "Runtime", "model": "Model",
               "hccl": "Hccl", "communication": "Hccl", "op": "Op"}
_PYTORCH_CATS = {50001: "cpu_op", 50002: "enqueue", 50003: "python_function",
                 50004: "user_annotation"}
_OVERLAP_THREADS = ("Computing", "Communication", "Communication(Not Overlapped)", "Free")
_STEP = re.compile(r"^ProfilerStep#\d+")


@dataclass
class DbRead:
    """What reading one database gave: ordinals used, rows read per table, where each
    table's ordinals start (to read one row's cells again), and how it was opened."""

    n_refs: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    refs: list[list] = field(default_factory=list)  # [table, first_ref, count, first rowid]
    opened: str = ""
    facts: dict[str, Any] = field(default_factory=dict)  # chip, host, schema version ...


def import_db(path: str, builder: TraceBuilder, diagnostics: Diagnostics, *,
              progress: Callable[[int, int, int], None] | None = None,
              cancelled: Callable[[], bool] | None = None) -> DbRead:
    """Read one Ascend database into `builder` (its group and ordinal base already set)."""
    with open_db(path) as db:
        if not any(db.has(t) for t in ("TASK", "PYTORCH_API", "CANN_API", "COMMUNICATION_OP",
                                       "MSTX_EVENTS")):
            raise NotATraceError(f"{os.path.basename(path)} holds none of the timeline tables "
                                 "of an Ascend export (TASK, PYTORCH_API, CANN_API, ...).")
        reader = _Reader(db, builder, diagnostics, progress, cancelled)
        try:
            reader.prefetch = _prefetch(reader)
            reader.run()
        finally:
            if reader.prefetch is not None:
                reader.prefetch.close()
        reader.done.opened = db.how
        return reader.done


# The host tables a second process reads while this one reads the device tables, in a
# database of at least this many rows in them (below, starting a second interpreter costs
# more than it saves).
_PREFETCHED = ("PYTORCH_API", "CANN_API", "CONNECTION_IDS")
PREFETCH_MIN_ROWS = 400_000


def _ffts_query(db: DbFile) -> str:
    """The rowids of the FFTS+ parent tasks (see _Reader._ffts_parents)."""
    keys = ", ".join(("deviceId", "streamId", "taskId") if db.has("TASK", "deviceId")
                     else ("streamId", "taskId"))
    return (f"SELECT rowid FROM TASK WHERE contextId = {_NO_CONTEXT} AND ({keys}) IN "
            f"(SELECT {keys} FROM TASK WHERE contextId != {_NO_CONTEXT})")


def _prefetch(reader: _Reader) -> Prefetch | None:
    db = reader.db
    if usable_cores() < 2 or db.how != "immutable":
        return None
    wanted = {t: reader.present(t) for t in _PREFETCHED if reader.present(t)}
    rows = sum(db.count(t) for t in wanted)
    if rows < PREFETCH_MIN_ROWS or not db.has("TASK"):
        return None
    return Prefetch(db, wanted)


def schema_notes(path: str) -> list[tuple[str, str]]:
    """(what, why) for every table and column of the database that is not read into the
    timeline; [] when it cannot be opened (loading says why)."""
    try:
        with open_db(path) as db:
            tables = dict(db.tables)
    except NotATraceError:
        return []
    notes = []
    for table, columns in sorted(tables.items()):
        if table in READ:
            wanted = {c.lstrip("?~") for c in READ[table]} | set(_ALSO_READ.get(table, ()))
            extra = [c for c in columns if c not in wanted]
            if extra and table not in ("ENUM_API_TYPE", "ENUM_MODULE"):
                notes.append((f"{table}: {', '.join(extra)}", _ARGS_ONLY))
        elif _ENUMS.match(table):
            continue  # labels: read where a table refers to them
        elif table in NOT_READ:
            notes.append((table, NOT_READ[table]))
        else:
            notes.append((table, "a table proftui does not know (not read)"))
    return notes


def first_ns(path: str) -> int | None:
    """The capture's first time (ns): the session start, else the first task; None when the
    database cannot be read."""
    try:
        with open_db(path) as db:
            for table, column in (("SESSION_TIME_INFO", "startTimeNs"), ("TASK", "startNs"),
                                  ("PYTORCH_API", "startNs"), ("CANN_API", "startNs")):
                if db.has(table, column):
                    value = db.scalar(f'SELECT min(CAST("{column}" AS INTEGER)) FROM "{table}"')
                    if isinstance(value, int) and value > 0:
                        return value
    except NotATraceError:
        return None
    return None


# -- reading ------------------------------------------------------------------------------------


class _Reader:
    """One database read into the builder, table by table."""

    def __init__(self, db: DbFile, builder: TraceBuilder, diagnostics: Diagnostics,
                 progress: Callable[[int, int, int], None] | None,
                 cancelled: Callable[[], bool] | None) -> None:
        self.db, self.b, self.diagnostics = db, builder, diagnostics
        self.progress, self.cancelled = progress, cancelled
        self.done = DbRead()
        self.strings = _Strings(self)
        self.devices: list[int] = []
        self.host_pid = 0
        self.device_refs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # conn, ref, ok
        self.total_rows = sum(db.count(t) for t in ("TASK", "PYTORCH_API", "CANN_API")
                              if db.has(t))
        self.prefetch: Prefetch | None = None

    # -- plumbing -------------------------------------------------------------------------------

    def table(self, name: str) -> Columns | None:
        """The columns READ names of a table (absent optional ones as NULL), or None when the
        table or a needed column is missing (counted)."""
        if self.cancelled is not None and self.cancelled():
            raise Cancelled("Indexing was cancelled.")
        wanted = [c for c in READ[name] if not c.startswith("~")]
        if not self.db.has(name):
            return None
        have = self.db.tables[name]
        needed = [c for c in wanted if not c.startswith("?")]
        lacking = [c for c in needed if c not in have]
        if lacking:
            self.diagnostics.add("db_missing_column", 1, None, f"{name} lacks {', '.join(lacking)}")
            return None
        present = self.present(name)
        cols = self.prefetch.get(name, present) if self.prefetch is not None else None
        if cols is None:
            cols = read_ints(self.db, name, present)
        if cols.inexact:
            self.diagnostics.add("db_inexact_value", cols.inexact, None, name)
        for c in wanted:
            if c.lstrip("?") not in have:
                cols.values[c.lstrip("?")] = np.full(cols.n_rows, NULL, np.int64)
        base = self.b.ref_base + self.done.n_refs
        self.done.refs.append([name, base, cols.n_rows, cols.rowid_first])
        self.done.n_refs += cols.n_rows
        self.done.rows[name] = cols.n_rows
        cols.values["_ref"] = base + np.arange(cols.n_rows, dtype=np.int64)
        if self.progress is not None and name in ("TASK", "PYTORCH_API", "CANN_API"):
            read = sum(self.done.rows.get(t, 0) for t in ("TASK", "PYTORCH_API", "CANN_API"))
            self.progress(read, max(self.total_rows, 1), self.done.n_refs)
        return cols

    def present(self, table: str) -> list[str]:
        """The integer columns READ names of a table that it has (none if it lacks a needed
        one)."""
        have = self.db.tables.get(table, [])
        wanted = [c for c in READ[table] if not c.startswith("~")]
        if any(c not in have for c in wanted if not c.startswith("?")):
            return []
        return [c.lstrip("?") for c in wanted if c.lstrip("?") in have]

    @staticmethod
    def columns(table: str) -> tuple[str, ...]:
        """The columns READ names of a table."""
        return READ[table]

    def missing(self, name: str, what: str) -> None:
        self.diagnostics.add("db_missing_table", 1, None, f"{name} ({what})")

    def run(self) -> None:
        self._facts()
        tasks = self._device_tasks()
        self._communication(tasks)
        torch = self._pytorch()
        cann = self._cann()
        mstx = self._mstx()
        self._flows(tasks, torch, cann, mstx)
        self._overlap()
        self._steps(torch)
        read_counters(self)

    # -- facts ----------------------------------------------------------------------------------

    def _facts(self) -> None:
        db, facts = self.db, self.done.facts
        if db.has("NPU_INFO", "id"):
            rows = db.fetch("SELECT id, name FROM NPU_INFO" if db.has("NPU_INFO", "name")
                            else "SELECT id, NULL FROM NPU_INFO")
            self.devices = sorted({int(r[0]) for r in rows if isinstance(r[0], int) and r[0] >= 0})
            chips = sorted({str(r[1]) for r in rows if r[1]})
            if chips:
                facts["chip"] = ", ".join(chips)
        if not self.devices and db.has("TASK", "deviceId"):
            self.devices = [int(r[0]) for r in db.fetch(
                "SELECT DISTINCT deviceId FROM TASK WHERE deviceId >= 0 LIMIT 64")]
        if db.has("RANK_DEVICE_MAP", "rankId"):
            ranks = [r[0] for r in db.fetch("SELECT rankId FROM RANK_DEVICE_MAP")
                     if isinstance(r[0], int) and r[0] >= 0]
            if ranks:
                facts["rank"] = ranks[0]
        if db.has("HOST_INFO", "hostName"):
            names = [r[0] for r in db.fetch("SELECT hostName FROM HOST_INFO") if r[0]]
            if names:
                facts["host"] = str(names[0])
        if db.has("META_DATA", "name", "value"):
            meta = dict(db.fetch("SELECT name, value FROM META_DATA"))
            if "SCHEMA_VERSION" in meta:
                facts["schema_version"] = str(meta["SCHEMA_VERSION"])
        if db.has("SESSION_TIME_INFO", "startTimeNs"):
            row = db.fetch("SELECT startTimeNs, endTimeNs FROM SESSION_TIME_INFO" if db.has(
                "SESSION_TIME_INFO", "endTimeNs") else "SELECT startTimeNs, NULL FROM "
                "SESSION_TIME_INFO")
            if row:
                facts["session_ns"] = [row[0][0], row[0][1]]
        for table, column in (("TASK", "globalPid"), ("PYTORCH_API", "globalTid"),
                              ("CANN_API", "globalTid")):
            if db.has(table, column):
                value = db.scalar(f'SELECT "{column}" FROM "{table}" WHERE "{column}" > 0 '
                                  "LIMIT 1")
                if isinstance(value, int):
                    self.host_pid = value if column == "globalPid" else value >> 32
                    break
        if not self.devices:
            self.devices = [0]

    def packed_pid(self, process: str, device: int | None = None) -> int:
        """The pid the text export gives a process: (pid << 10) | (sort << 5) | device."""
        device = self.devices[0] if device is None else device
        return (self.host_pid << 10) | (_SORT[process] << 5) | (device & 31)

    def process(self, process: str, device: int | None = None, labels: str = "NPU") -> int:
        pid = self.packed_pid(process, device)
        several = len(self.devices) > 1 and labels == "NPU"
        self.b.declare_process(pid, process, f"NPU {device}" if several and device is not None
                               else labels, _SORT[process])
        return pid

    # -- device ---------------------------------------------------------------------------------

    def _device_tasks(self) -> _Tasks | None:
        task = self.table("TASK")
        if task is None:
            self.missing("TASK", "device tasks")
            return None
        compute = self.table("COMPUTE_TASK_INFO")
        comm = self.table("COMMUNICATION_TASK_INFO")
        gid = task["globalTaskId"]
        name = task["taskType"].copy()  # the task type, unless an info table names it
        is_comm = np.zeros(task.n_rows, bool)
        if compute is not None:
            at, found = _lookup(compute["globalTaskId"], gid)
            name[found] = compute["name"][at[found]]
        elif not self.db.has("COMPUTE_TASK_INFO"):
            self.missing("COMPUTE_TASK_INFO", "names of compute tasks")
        if comm is not None:
            at, found = _lookup(comm["globalTaskId"], gid)
            is_comm = found
            no_type = found & (name == NULL)
            name[no_type] = comm["taskType"][at[no_type]]
        device = np.where(task["deviceId"] == NULL, self.devices[0], task["deviceId"])
        stream = np.where(task["streamId"] == NULL, 0, task["streamId"])
        shown = _times_ok(self, task, "TASK") & ~self._ffts_parents(task, device, stream)
        pids = np.zeros(task.n_rows, np.int64)
        for d in np.unique(device).tolist():
            pid = self.process(HARDWARE, int(d))
            pids[device == d] = pid
            for s in np.unique(stream[device == d]).tolist():
                self.b.declare_thread(pid, int(s), f"Stream {s}", int(s))
        tracks = self.b.thread_track_ids(pids, stream)
        names = self.strings.interned(name)
        ok = shown
        self.b.add_slice_columns(task["startNs"][ok], task["endNs"][ok], tracks[ok],
                                 names[ok], np.zeros(int(ok.sum()), np.int32), task["_ref"][ok])
        return _Tasks(task, ok, is_comm, device, comm)

    def _ffts_parents(self, task: Columns, device: np.ndarray,
                      stream: np.ndarray) -> np.ndarray:
        """Tasks whose FFTS+ subtasks (same device, stream and task id, a context id) are
        there too: msprof shows the subtasks only (its timeline drops such a parent, which
        spans them all, e.g. an HCCL collective's whole run on its stream). SQLite finds the
        few parents; the ids are read in bulk only when the rowids have gaps."""
        hidden = np.zeros(task.n_rows, bool)
        if not self.db.has("TASK", "taskId", "contextId"):
            return hidden
        if task.rowid_first is not None:
            rows = self.db.fetch(_ffts_query(self.db))
            at = np.array([r[0] for r in rows], np.int64) - task.rowid_first
            hidden[at[(at >= 0) & (at < task.n_rows)]] = True
            return hidden
        if self.db.scalar(f"SELECT 1 FROM TASK WHERE contextId != {_NO_CONTEXT} LIMIT 1") is None:
            return hidden
        ids = read_ints(self.db, "TASK", ["taskId", "contextId"])
        if ids.n_rows != task.n_rows:  # the table changed in between: leave it be
            return hidden
        context = ids["contextId"]
        sub = (context != _NO_CONTEXT) & (context != NULL)
        codes, _ = distinct_rows(device, stream, ids["taskId"])
        has_sub = np.zeros(int(codes.max()) + 1, bool)
        has_sub[codes[sub]] = True
        return ~sub & has_sub[codes]

    def _communication(self, tasks: _Tasks | None) -> None:
        """HCCL, one process per device: a thread per communication group (its collectives)
        followed by one per plane (its tasks again), numbered as msprof numbers them."""
        op = self.table("COMMUNICATION_OP")
        comm = tasks.comm if tasks is not None else None
        if op is None and comm is None:
            return
        # Both kinds of rows as (device, group, plane): the tasks' device is their TASK's.
        parts = []
        if comm is not None and tasks is not None:
            at, found = _lookup(tasks.task["globalTaskId"], comm["globalTaskId"])
            found &= tasks.ok[np.where(found, at, 0)]
            plane = comm["planeId"]
            plane = np.where((plane >= 0) & (plane < 1 << 16), plane, 0)
            parts.append((tasks.device[np.where(found, at, 0)], comm["groupName"], plane))
        if op is not None:
            device = np.where(op["deviceId"] == NULL, self.devices[0], op["deviceId"])
            parts.append((device, op["groupName"], np.full(op.n_rows, -1, np.int64)))
        device, group, plane = (np.concatenate(c) for c in zip(*parts))
        # Threads: per device, groups in order of first appearance, each followed by its
        # planes (tid = the group's + plane + 1; the next group after its highest plane).
        tid_of = {}  # (device, group) -> the group's tid
        pids = {}
        codes, first = distinct_rows(device, group)
        for k in np.argsort(first, kind="stable").tolist():
            d, g = int(device[first[k]]), int(group[first[k]])
            if d not in pids:
                pids[d] = (self.process(HCCL, d), 0, 0)
            pid, tid, n_groups = pids[d]
            tid_of[(d, g)] = tid
            self.b.declare_thread(pid, tid, f"Group {n_groups} Communication", tid)
            mine = plane[codes == k]
            planes = np.unique(mine[mine >= 0]).tolist()
            for p in planes:
                self.b.declare_thread(pid, tid + p + 1, f"Plane {p}", tid + p + 1)
            pids[d] = (pid, tid + max(planes, default=-1) + 2, n_groups + 1)
        base = np.array([tid_of[(int(device[first[k]]), int(group[first[k]]))]
                         for k in range(len(first))], np.int64)
        tids = base[codes] + np.where(plane >= 0, plane + 1, 0)
        pid_rows = np.array([pids[int(d)][0] for d in device[first].tolist()], np.int64)[codes]
        tracks = self.b.thread_track_ids(pid_rows, tids)
        n_comm = len(parts[0][0]) if comm is not None and tasks is not None else 0
        if op is not None:
            ok = _times_ok(self, op, "COMMUNICATION_OP")
            names = self.strings.interned(op["opName"])
            self.b.add_slice_columns(op["startNs"][ok], op["endNs"][ok], tracks[n_comm:][ok],
                                     names[ok], np.zeros(int(ok.sum()), np.int32),
                                     op["_ref"][ok])
            self.collectives = (op["connectionId"], op["_ref"], ok)
        if comm is not None and tasks is not None:
            task = tasks.task
            rows = at[found]
            names = self.strings.interned(comm["taskType"])
            self.b.add_slice_columns(task["startNs"][rows], task["endNs"][rows],
                                     tracks[:n_comm][found], names[found],
                                     np.zeros(int(found.sum()), np.int32), comm["_ref"][found])

    collectives: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    # -- host -----------------------------------------------------------------------------------

    def _pytorch(self) -> Columns | None:
        api = self.table("PYTORCH_API")
        if api is None:
            if self.db.has("CANN_API") and not self.db.has("PYTORCH_API") and self.db.has(
                    "STEP_TIME"):
                self.missing("PYTORCH_API", "torch ops")
            return None
        pid, tid = api["globalTid"] >> 32, api["globalTid"] & 0xFFFFFFFF
        for p in np.unique(pid).tolist():
            self.b.declare_process(int(p), PYTHON, "CPU", _SORT[PYTHON])
        tracks = self.b.thread_track_ids(pid, tid)
        names = self.strings.interned(api["name"])
        kinds = api["type"]
        cat_text = {k: self.b.strings[v] for k, v in _PYTORCH_CATS.items()}
        cats = np.zeros(api.n_rows, np.int32)
        for k, sid in cat_text.items():
            cats[kinds == k] = sid
        queue = np.flatnonzero(kinds == 50002)
        if len(queue):
            texts = self.b.strings.texts
            dequeue = np.array([texts[n].startswith("Dequeue") for n in names[queue].tolist()])
            cats[queue[dequeue]] = self.b.strings["dequeue"]
        ok = _times_ok(self, api, "PYTORCH_API")
        self.b.add_slice_columns(api["startNs"][ok], api["endNs"][ok], tracks[ok], names[ok],
                                 cats[ok], api["_ref"][ok])
        api.values["_ok"] = ok
        api.values["_name"] = names
        return api

    def _cann(self) -> Columns | None:
        api = self.table("CANN_API")
        if api is None:
            return None
        tid = api["globalTid"] & 0xFFFFFFFF
        pid = self.process(CANN, labels="CPU")
        tracks = self.b.thread_track_ids(np.full(api.n_rows, pid), tid)
        levels = self.enum("ENUM_API_TYPE")
        # "AscendCL@aclrtMemcpy": the level's name, "@", the API's name; once per pair.
        inverse, first = distinct_rows(api["type"], api["name"])
        texts = []
        for level, sid in zip(api["type"][first].tolist(), api["name"][first].tolist()):
            label = levels.get(level, "")
            prefix = _API_LEVELS.get(label, label.capitalize() if label else "")
            name = self.strings.text(sid)
            texts.append(f"{prefix}@{name}" if prefix else name)
        names = self.b.intern_texts(texts)[inverse] if len(first) else np.zeros(0, np.int32)
        ok = _times_ok(self, api, "CANN_API")
        self.b.add_slice_columns(api["startNs"][ok], api["endNs"][ok], tracks[ok], names[ok],
                                 np.zeros(int(ok.sum()), np.int32), api["_ref"][ok])
        api.values["_ok"] = ok
        return api

    def _mstx(self) -> Columns | None:
        """msprof's host-side mstx ranges (markers as instants) on their threads."""
        tx = self.table("MSTX_EVENTS")
        if tx is None:
            return None
        pid = self.process("MSTX", labels="CPU")
        tracks = self.b.thread_track_ids(np.full(tx.n_rows, pid), tx["globalTid"] & 0xFFFFFFFF)
        names = self.strings.interned(tx["message"])
        cat = np.full(tx.n_rows, self.b.strings["user_annotation"], np.int32)
        ok = _times_ok(self, tx, "MSTX_EVENTS")
        point = ok & (tx["startNs"] == tx["endNs"])
        ranges = ok & ~point
        self.b.add_slice_columns(tx["startNs"][ranges], tx["endNs"][ranges], tracks[ranges],
                                 names[ranges], cat[ranges], tx["_ref"][ranges])
        self.b.add_instant_columns(tx["startNs"][point], tracks[point], names[point],
                                   cat[point], tx["_ref"][point])
        tx.values["_ok"] = ranges
        return tx

    def enum(self, table: str) -> dict[int, str]:
        if not self.db.has(table, "id", "name"):
            return {}
        return {int(i): str(n) for i, n in self.db.fetch(f'SELECT id, name FROM "{table}"')
                if isinstance(i, int) and n is not None}

    # -- flows ----------------------------------------------------------------------------------

    def _flows(self, tasks: _Tasks | None, torch: Columns | None, cann: Columns | None,
               mstx: Columns | None) -> None:
        """Flows by connection id (one per pair of ends: see the module docstring)."""
        targets = []  # device ends: tasks that are not HCCL's, and collectives
        if tasks is not None:
            keep = tasks.ok & ~tasks.is_comm
            targets.append((tasks.task["connectionId"][keep], tasks.task["_ref"][keep]))
        if self.collectives is not None:
            conn, ref, ok = self.collectives
            targets.append((conn[ok], ref[ok]))
        dst_conn = np.concatenate([t[0] for t in targets]) if targets else np.zeros(0, np.int64)
        dst_ref = np.concatenate([t[1] for t in targets]) if targets else np.zeros(0, np.int64)
        if cann is not None:
            ok = cann["_ok"]
            self._pairs(cann["connectionId"][ok], cann["_ref"][ok], dst_conn, dst_ref,
                        "HostToDevice", "HostToDevice")
        if mstx is not None:
            ok = mstx["_ok"]
            self._pairs(mstx["connectionId"][ok], mstx["_ref"][ok], dst_conn, dst_ref,
                        "MsTx", "MsTx")
        if torch is None:
            return
        links = self.table("CONNECTION_IDS")
        if links is None:
            if self.db.has("PYTORCH_API"):
                self.missing("CONNECTION_IDS", "flows from torch ops")
            return
        ok = torch["_ok"]
        # Each torch API row names a list of connection ids (CONNECTION_IDS.id = its row's
        # connectionId): one end per (row, connection id).
        at, found = _lookup_many(links["id"], torch["connectionId"][ok])
        rows = np.flatnonzero(ok)[at[0]]
        conn = links["connectionId"][at[1]]
        kind = torch["type"][rows]
        ref = torch["_ref"][rows]
        op = kind == 50001
        self._pairs(conn[op], ref[op], dst_conn, dst_ref, "async_npu", "torch_to_npu")
        queue = kind == 50002
        names = torch["_name"][rows]
        texts = self.b.strings.texts
        dequeue = np.array([texts[n].startswith("Dequeue") for n in names[queue].tolist()],
                           bool)
        self._pairs(conn[queue][~dequeue], ref[queue][~dequeue], conn[queue][dequeue],
                    ref[queue][dequeue], "async_task_queue", "enqueue_to_dequeue")
        # A connection id two torch ops share, that leads to no device task: forward to
        # backward, the earlier op first.
        on_device = np.isin(conn, dst_conn)
        fb = op & ~on_device
        fb_conn, fb_ref = conn[fb], ref[fb]
        start = self._starts(torch, rows[fb])
        order = np.lexsort((start, fb_conn))
        fb_conn, fb_ref = fb_conn[order], fb_ref[order]
        first = np.ones(len(fb_conn), bool)
        first[1:] = fb_conn[1:] != fb_conn[:-1]
        lead = np.flatnonzero(first)
        self._pairs(fb_conn[lead], fb_ref[lead], fb_conn[~first], fb_ref[~first], "fwdbwd",
                    "fwdbwd")

    @staticmethod
    def _starts(cols: Columns, rows: np.ndarray) -> np.ndarray:
        return cols["startNs"][rows]

    def _pairs(self, src_conn: np.ndarray, src_ref: np.ndarray, dst_conn: np.ndarray,
               dst_ref: np.ndarray, cat: str, name: str) -> None:
        """A flow from every source end to every destination end of the same connection id."""
        keep = src_conn != NULL
        at, _ = _lookup_many(dst_conn, src_conn[keep])
        self.b.add_flow_pairs(src_ref[keep][at[0]], dst_ref[at[1]], cat, name)

    # -- derived tracks and steps ---------------------------------------------------------------

    def _overlap(self) -> None:
        lap = self.table("OVERLAP_ANALYSIS")
        if lap is None:
            return
        kinds = lap["type"]
        device = np.where(lap["deviceId"] == NULL, self.devices[0], lap["deviceId"])
        pids = np.zeros(lap.n_rows, np.int64)
        for d in np.unique(device).tolist():
            pid = self.process(OVERLAP, int(d))
            pids[device == d] = pid
            for k, text in enumerate(_OVERLAP_THREADS):
                if (kinds[device == d] == k).any():
                    self.b.declare_thread(pid, k, text, k)
        ok = _times_ok(self, lap, "OVERLAP_ANALYSIS") & (kinds >= 0) & (kinds < 4)
        tracks = self.b.thread_track_ids(pids, np.where(ok, kinds, 0))
        names = self.b.intern_texts(list(_OVERLAP_THREADS))[np.where(ok, kinds, 0)]
        self.b.add_slice_columns(lap["startNs"][ok], lap["endNs"][ok], tracks[ok], names[ok],
                                 np.zeros(int(ok.sum()), np.int32), lap["_ref"][ok])

    def _steps(self, torch: Columns | None) -> None:
        """STEP_TIME as ProfilerStep#N slices, where the torch ops do not have them."""
        if torch is not None:
            texts = self.b.strings.texts
            if any(_STEP.match(texts[n]) for n in np.unique(torch["_name"]).tolist()):
                return
        steps = self.table("STEP_TIME")
        if steps is None:
            return
        pid = self.host_pid if torch is not None else self.packed_pid(PYTHON)
        if torch is None:
            self.b.declare_process(pid, PYTHON, "CPU", _SORT[PYTHON])
        track = self.b.declare_thread(pid, "steps", "Steps", -1)
        names = self.b.intern_texts([f"ProfilerStep#{n}" for n in steps["id"].tolist()])
        ok = _times_ok(self, steps, "STEP_TIME")
        self.b.add_slice_columns(steps["startNs"][ok], steps["endNs"][ok],
                                 np.full(int(ok.sum()), track, np.int32), names[ok],
                                 np.full(int(ok.sum()), self.b.strings["user_annotation"],
                                         np.int32), steps["_ref"][ok])

@dataclass
class _Tasks:
    task: Columns
    ok: np.ndarray  # usable times
    is_comm: np.ndarray  # HCCL's tasks (COMMUNICATION_TASK_INFO)
    device: np.ndarray
    comm: Columns | None


class _Strings:
    """STRING_IDS: the database's string ids as the builder's (only those used are
    interned)."""

    def __init__(self, reader: _Reader) -> None:
        self.reader = reader
        db = reader.db
        rows = db.fetch("SELECT id, value FROM STRING_IDS") if db.has(
            "STRING_IDS", "id", "value") else []
        if not db.has("STRING_IDS", "id", "value"):
            reader.missing("STRING_IDS", "names: shown as their numbers")
        ids = np.array([r[0] if isinstance(r[0], int) else NULL for r in rows], np.int64)
        order = np.argsort(ids, kind="stable")
        self.known = ids[order]
        texts = [rows[i][1] for i in order.tolist()]
        self.texts = ["" if t is None else str(t) for t in texts]

    def text(self, sid: int) -> str:
        if sid == NULL:
            return ""
        k = int(np.searchsorted(self.known, sid))
        if k < len(self.known) and self.known[k] == sid:
            return self.texts[k]
        self.reader.diagnostics.add("db_unknown_string", 1, None, str(sid))
        return str(sid)

    def interned(self, sids: np.ndarray) -> np.ndarray:
        """The builder's string id of each database string id (NULL: the empty string)."""
        if not len(sids):
            return np.zeros(0, np.int32)
        uniq, inverse = np.unique(sids, return_inverse=True)
        mapped = self.reader.b.intern_texts([self.text(s) for s in uniq.tolist()])
        return mapped[inverse.reshape(-1)]


_NO_CONTEXT = 4294967295  # UINT32_MAX: a task that is not an FFTS+ subtask


def _lookup(keys: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of `wanted`, a position in `keys` holding it and whether there is one."""
    if not len(keys):
        return np.zeros(len(wanted), np.int64), np.zeros(len(wanted), bool)
    order = np.argsort(keys, kind="stable")
    pos = np.minimum(np.searchsorted(keys, wanted, sorter=order), len(keys) - 1)
    at = order[pos]
    return at, keys[at] == wanted


def _lookup_many(keys: np.ndarray, wanted: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray],
                                                                  np.ndarray]:
    """Every (i, j) with wanted[i] == keys[j] (a many-to-many join), and per wanted whether
    it matched at all."""
    order = np.argsort(keys, kind="stable")
    lo = np.searchsorted(keys, wanted, side="left", sorter=order)
    hi = np.searchsorted(keys, wanted, side="right", sorter=order)
    counts = hi - lo
    i = np.repeat(np.arange(len(wanted)), counts)
    offsets = np.arange(len(i)) - np.repeat(np.cumsum(counts) - counts, counts)
    j = order[np.repeat(lo, counts) + offsets]
    return (i, j), counts > 0


def _times_ok(reader: _Reader, cols: Columns, table: str) -> np.ndarray:
    """Rows with a start and an end (NULL ones are dropped and counted)."""
    ok = (cols["startNs"] != NULL) & (cols["endNs"] != NULL)
    if not ok.all():
        reader.diagnostics.add("bad_timestamp", int((~ok).sum()), None, table)
    return ok
