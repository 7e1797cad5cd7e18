"""Counter tables of the Ascend SQLite exports as the counter series their text export has
(same process, series names and units): NPU_MEM ("NPU MEM", KB), AICORE_FREQ ("AI Core Freq",
MHz), HBM and LLC (MB/s, %), and the framework's MEMORY_RECORD and NPU_MODULE_MEM (MB, in
processes of their own: the text export keeps them in CSVs)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from proftui.core.build.builder import distinct_rows
from proftui.core.source.dbfile import NULL, Columns, read_floats

_MB = 1024.0 * 1024.0
Series = Iterator[tuple[str, np.ndarray, np.ndarray]]  # (series name, rows, values)
_TIME_COLUMN = {"MEMORY_RECORD": "timestamp"}  # the others call it timestampNs


def read_counters(reader: Any) -> None:
    """The counter tables of the database an ascend_db reader reads, into its builder."""
    tables: tuple[tuple[str, str, Callable[..., Series]], ...] = (
        ("NPU_MEM", "NPU MEM", _npu_mem), ("AICORE_FREQ", "AI Core Freq", _freq),
        ("HBM", "HBM", _hbm), ("LLC", "LLC", _llc),
        ("MEMORY_RECORD", "Memory", _memory_record),
        ("NPU_MODULE_MEM", "NPU Module Memory", _module_mem))
    for table, process, series in tables:
        cols = reader.table(table)
        if cols is None or not cols.n_rows:
            continue
        numbers = read_floats(reader.db, table, [c[1:] for c in reader.columns(table)
                                                 if c[0] == "~"
                                                 and c[1:] in reader.db.tables[table]])
        device = cols["deviceId"]
        for d in np.unique(device).tolist():
            mine = device == d
            pid = reader.process(process, reader.devices[0] if d == NULL else int(d),
                                 "CPU" if process == "Memory" else "NPU")
            track = reader.b.process_track_id(pid)
            for name, rows, values in series(reader, cols, numbers, mine):
                ts = cols[_TIME_COLUMN.get(table, "timestampNs")][rows]
                keep = ts != NULL
                reader.b.add_counter_columns(track, name, ts[keep], values[keep],
                                             cols["_ref"][rows][keep])


def _npu_mem(reader: Any, cols: Columns, numbers: dict, mine: np.ndarray) -> Series:
    for kind in np.unique(cols["type"][mine]).tolist():
        rows = np.flatnonzero(mine & (cols["type"] == kind))
        label = reader.strings.text(kind) if kind != NULL else "APP"
        label = {"app": "APP", "device": "Device"}.get(label.lower(), label)
        ddr = numbers.get("ddr", np.zeros(len(mine)))[rows] / 1024.0
        hbm = numbers.get("hbm", np.zeros(len(mine)))[rows] / 1024.0
        yield f"{label}/DDR KB", rows, ddr
        yield f"{label}/HBM KB", rows, hbm
        yield f"{label}/Memory KB", rows, ddr + hbm


def _freq(reader: Any, cols: Columns, numbers: dict, mine: np.ndarray) -> Series:
    rows = np.flatnonzero(mine)
    if "freq" in numbers:
        yield "AI Core Freq MHz", rows, numbers["freq"][rows]


def _hbm(reader: Any, cols: Columns, numbers: dict, mine: np.ndarray) -> Series:
    if "bandwidth" not in numbers:
        return
    for unit, kind in _pairs_of(cols["hbmId"][mine], cols["type"][mine]):
        rows = np.flatnonzero(mine & (cols["hbmId"] == unit) & (cols["type"] == kind))
        what = reader.strings.text(kind).capitalize() if kind != NULL else "Bandwidth"
        yield (f"HBM {max(unit, 0)}/{what} {what}(MB/s)", rows,
               numbers["bandwidth"][rows] / _MB)


def _llc(reader: Any, cols: Columns, numbers: dict, mine: np.ndarray) -> Series:
    for unit, kind in _pairs_of(cols["llcId"][mine], cols["mode"][mine]):
        rows = np.flatnonzero(mine & (cols["llcId"] == unit) & (cols["mode"] == kind))
        what = reader.strings.text(kind).capitalize() if kind != NULL else "Read"
        if "hitRate" in numbers:
            yield (f"LLC {max(unit, 0)} {what}/Hit Rate Hit Rate(%)", rows,
                   numbers["hitRate"][rows] * 100.0)
        if "throughput" in numbers:
            yield (f"LLC {max(unit, 0)} {what}/Throughput Throughput(MB/s)", rows,
                   numbers["throughput"][rows] / _MB)


def _memory_record(reader: Any, cols: Columns, numbers: dict, mine: np.ndarray) -> Series:
    for component in np.unique(cols["component"][mine]).tolist():
        rows = np.flatnonzero(mine & (cols["component"] == component))
        label = reader.strings.text(component) if component != NULL else "PTA"
        for column, what in (("totalAllocated", "Allocated"), ("totalReserved", "Reserved"),
                             ("totalActive", "Active")):
            # torch_npu writes GE's Total Active as 0 (the text export leaves it empty)
            if column in numbers and np.any(np.nan_to_num(numbers[column][rows])):
                yield f"{label} Total {what}(MB)", rows, numbers[column][rows] / _MB


def _module_mem(reader: Any, cols: Columns, numbers: dict, mine: np.ndarray) -> Series:
    modules = reader.enum("ENUM_MODULE")
    for module in np.unique(cols["moduleId"][mine]).tolist():
        rows = np.flatnonzero(mine & (cols["moduleId"] == module))
        values = numbers.get("totalReserved", np.zeros(len(mine)))[rows]
        if not np.nansum(values):
            continue  # the many modules that never reserve anything
        yield f"{modules.get(module, str(module))} Total Reserved(MB)", rows, values / _MB


def _pairs_of(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int]]:
    """The distinct (a, b) pairs, in order."""
    _, first = distinct_rows(a, b)
    return sorted(zip(a[first].tolist(), b[first].tolist()))
