"""The memory CSVs of a text export as counter series: memory_record.csv and npu_module_mem.csv
(torch_npu's ASCEND_PROFILER_OUTPUT, msprof's mindstudio_profiler_output) on the rank's timeline.

They become the series the SQLite export's MEMORY_RECORD and NPU_MODULE_MEM tables give (see
:mod:`.ascend_db_counters`), with the same process names, sort indexes, labels, series names
and units, so that the text and the db export of one job answer alike:

- memory_record.csv -> process ``Memory`` (labels ``CPU``), per device and component
  ``{component} Total Allocated(MB)``, ``... Total Reserved(MB)``, ``... Total Active(MB)``;
- npu_module_mem.csv -> process ``NPU Module Memory`` (labels ``NPU``, ``NPU N`` with several
  devices), per device and module ``{module} Total Reserved(MB)``.

Values are MB (KB and bytes columns, as msprof writes them, are converted). Left out, as the
db export leaves them out: memory_record's ``APP`` rows (torch_npu copies them from CANN's
npu_mem, which the timeline already shows as ``NPU MEM`` / ``APP/...``; the db keeps them in
NPU_MEM only), empty cells (``GE`` has no Total Active), and series that are zero throughout
(the many CANN modules that never reserve anything). A file that cannot be read is counted
and the rest of the profile loads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from proftui.core.discover.profile import DB_KIND, ProfileLayout
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.errors import ProftuiError
from proftui.core.model.table import BYTES_PER_UNIT, Column, Table

if TYPE_CHECKING:  # the builder is imported by who indexes, not to reopen from the cache
    from proftui.core.build.builder import TraceBuilder

KINDS = ("memory_record", "npu_module_mem")  # table kinds this module reads as counters
MEMORY, MODULES = "Memory", "NPU Module Memory"
SORT = {MEMORY: 24, MODULES: 25}  # as ascend_db gives them (the text export has neither)
MEASURES = ("Allocated", "Reserved", "Active")
_DEVICE = re.compile(r"(\d+)\s*$")  # "NPU:0", "0"
_NO_TS = np.iinfo(np.int64).min  # how a timestamp column marks an empty cell
_COPIED = {"APP"}  # memory_record components that repeat another counter (see above)


def memory_csvs(layout: ProfileLayout) -> dict[str, list[str]]:
    """The memory CSVs of each group (rank or device) of a profile whose counters join its
    timeline: not where the group's timeline is a SQLite export (its own tables give them)."""
    from_db = {t.group for t in layout.timelines if t.kind == DB_KIND}
    found: dict[str, list[str]] = {}
    for table in layout.tables:
        if table.kind in KINDS and not table.source and table.group not in from_db:
            found.setdefault(table.group, []).append(table.path)
    return found


def add_memory_csvs(builder: TraceBuilder, paths: Sequence[str],
                    diagnostics: Diagnostics) -> None:
    """The counters of one rank's memory CSVs into `builder` (its group and clock offset
    already set for that rank). A file that cannot be read is counted as unreadable_file."""
    from proftui.core.cache.tables import read_table  # (the CSV reader: only when there are some)

    host_pid = _host_pid(builder)
    for path in paths:
        try:
            table = read_table(path)
        except ProftuiError as exc:
            diagnostics.add("unreadable_file", 1, None, str(exc))
            continue
        if table.find("Total Allocated") is not None:
            _add(builder, table, MEMORY, "CPU", host_pid)
        else:
            _add(builder, table, MODULES, "NPU", host_pid)


def _add(builder: TraceBuilder, table: Table, process: str, labels: str, host_pid: int) -> None:
    ts = _times(table.find("Timestamp"))
    component = table.find("Component")
    where = table.find("Device Type", "Device")
    if ts is None or component is None:
        return  # not the file it is named for: it stays a summary table
    names = component.values.astype(str)
    devices = _devices(where, table.n_rows)
    several = len(set(devices.tolist())) > 1
    for device in dict.fromkeys(devices.tolist()):
        pid = (host_pid << 10) | (SORT[process] << 5) | (device & 31)
        builder.declare_process(pid, process, f"{labels} {device}" if several and
                                labels == "NPU" else labels, SORT[process])
        track = builder.process_track_id(pid)
        mine = devices == device
        for name in dict.fromkeys(names[mine].tolist()):
            if process == MEMORY and name in _COPIED:
                continue
            rows = np.flatnonzero(mine & (names == name) & (ts != _NO_TS))
            for measure in MEASURES if process == MEMORY else ("Reserved",):
                column = table.find(f"Total {measure}")
                values = _megabytes(column)
                if values is None:
                    continue
                keep = rows[~np.isnan(values[rows])]
                if not len(keep) or not np.any(values[keep]):
                    continue  # empty, or zero throughout
                builder.add_counter_columns(track, f"{name} Total {measure}(MB)", ts[keep],
                                            values[keep], np.full(len(keep), -1, np.int64))


def _times(column: Column | None) -> np.ndarray | None:
    """Timestamps in ns (empty cells as _NO_TS): epoch columns are exact already; small
    (zero-based) µs values are scaled."""
    if column is None:
        return None
    if column.kind == "timestamp":
        return column.values
    if column.kind != "number":
        return None
    scale = {"us": 1_000, "ms": 1_000_000, "ns": 1, "s": 1_000_000_000}.get(column.unit, 1_000)
    ok = np.isfinite(column.values)
    return np.where(ok, np.rint(np.where(ok, column.values, 0) * scale), _NO_TS).astype(np.int64)


def _megabytes(column: Column | None) -> np.ndarray | None:
    if column is None or column.kind != "number":
        return None
    mb = BYTES_PER_UNIT["MB"]
    return column.values * (BYTES_PER_UNIT.get(column.unit, mb) / mb)


def _devices(column: Column | None, n: int) -> np.ndarray:
    """The device number of each row ("NPU:0" -> 0); 0 where none is said."""
    if column is None:
        return np.zeros(n, np.int64)
    if column.kind == "number":
        return np.nan_to_num(column.values).astype(np.int64)
    found = {text: int(m.group(1)) if (m := _DEVICE.search(str(text))) else 0
             for text in dict.fromkeys(column.values.tolist())}
    return np.array([found[v] for v in column.values.tolist()], np.int64)


def _host_pid(builder: TraceBuilder) -> int:
    """The rank's host pid, as the torch_npu timeline already read into `builder` has it (its
    ``Python`` process): the Memory processes are packed from it as torch_npu packs its own
    (pid << 10 | sort << 5 | device). 0 when the timeline has none."""
    group = builder.tracks.group
    for key, meta in builder.processes.items():
        pid: Any = key[1] if group is not None and isinstance(key, tuple) else key
        if meta.name == "Python" and (group is None or key[0] == group) and isinstance(pid, int):
            return pid if 0 <= pid < 1 << 40 else 0
    return 0
