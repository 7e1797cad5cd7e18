"""The `args` of an event read from an Ascend SQLite export: its row, read again.

An event's ordinal says which table and row it came from (the ranges ``import_db`` noted in
the source's metadata). The row's cells become its args, string ids and enums as their text;
a device task gets the cells of its COMPUTE_TASK_INFO or COMMUNICATION_TASK_INFO row too, and
a torch op its call stack, as the text export's args carry them.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from proftui.core.model.errors import ProftuiError
from proftui.core.source.dbfile import DbFile, open_db

# Per table: columns holding STRING_IDS ids, and columns holding an ENUM_ table's ids.
_STRING_COLUMNS = {
    "TASK": ("taskType",),
    "COMPUTE_TASK_INFO": ("name", "taskType", "opType", "inputFormats", "inputDataTypes",
                          "inputShapes", "outputFormats", "outputDataTypes", "outputShapes",
                          "attrInfo", "opState", "hf32Eligible"),
    "COMMUNICATION_TASK_INFO": ("name", "taskType", "groupName"),
    "COMMUNICATION_OP": ("opName", "groupName", "algType", "opType"),
    "CANN_API": ("name",), "PYTORCH_API": ("name", "inputDtypes", "inputShapes"),
    "MSTX_EVENTS": ("message",), "NPU_MEM": ("type",), "HBM": ("type",), "LLC": ("mode",),
    "MEMORY_RECORD": ("component",),
}
_ENUM_COLUMNS = {
    "rdmaType": "ENUM_HCCL_RDMA_TYPE", "transportType": "ENUM_HCCL_TRANSPORT_TYPE",
    "dataType": "ENUM_HCCL_DATA_TYPE", "linkType": "ENUM_HCCL_LINK_TYPE",
    "eventType": "ENUM_MSTX_EVENT_TYPE", "moduleId": "ENUM_MODULE",
}
_API_TYPE = ("CANN_API", "PYTORCH_API")  # their "type" is an ENUM_API_TYPE id


def db_args(path: str, refs_table: Sequence[Sequence], refs: Sequence[int]) -> list[Any]:
    """The args of each event numbered in `refs` (None where it is no row of the database),
    reading the database once; `refs_table` is the source's [table, first ordinal, rows,
    first rowid or None] list."""
    out: list[Any] = [None] * len(refs)
    starts = [int(entry[1]) for entry in refs_table]
    try:
        with open_db(path) as db:
            labels = _Labels(db)
            for pos, ref in enumerate(refs):
                k = bisect.bisect_right(starts, int(ref)) - 1
                if k < 0:
                    continue
                table, first, count, rowid_first = refs_table[k]
                row = int(ref) - int(first)
                if 0 <= row < int(count) and table in db.tables:
                    out[pos] = _row_args(db, labels, table, row, rowid_first)
    except ProftuiError:
        return out  # the database went away or was damaged since: no args
    return out


def _row_args(db: DbFile, labels: _Labels, table: str, row: int,
              rowid_first: int | None) -> dict[str, Any] | None:
    if rowid_first is not None:
        rows = db.fetch(f'SELECT * FROM "{table}" WHERE rowid = ?', (int(rowid_first) + row,))
    else:
        rows = db.fetch(f'SELECT * FROM "{table}" LIMIT 1 OFFSET ?', (row,))
    if not rows:
        return None
    args = labels.named(table, dict(zip(db.tables[table], rows[0])))
    if table == "TASK" and isinstance(args.get("globalTaskId"), int):
        for info in ("COMPUTE_TASK_INFO", "COMMUNICATION_TASK_INFO"):
            if db.has(info, "globalTaskId"):
                found = db.fetch(f'SELECT * FROM "{info}" WHERE globalTaskId = ? LIMIT 1',
                                 (args["globalTaskId"],))
                if found:
                    cells = labels.named(info, dict(zip(db.tables[info], found[0])))
                    args.update({k: v for k, v in cells.items() if k not in args})
                    args["Task Type"] = cells.get("taskType", args.get("taskType"))
                    break
    if table == "PYTORCH_API" and isinstance(args.get("callchainId"), int) and db.has(
            "PYTORCH_CALLCHAINS", "id", "stack", "stackDepth"):
        frames = db.fetch("SELECT stack FROM PYTORCH_CALLCHAINS WHERE id = ? "
                          "ORDER BY stackDepth", (args["callchainId"],))
        args["Call stack"] = ";\n".join(labels.text(f[0]) for f in frames)
    return args


class _Labels:
    """STRING_IDS and the ENUM_ tables, read once."""

    def __init__(self, db: DbFile) -> None:
        self.db = db
        self.strings: dict[Any, str] | None = None
        self.enums: dict[str, dict[Any, str]] = {}

    def text(self, sid: Any) -> str:
        if self.strings is None:
            self.strings = dict(self.db.fetch("SELECT id, value FROM STRING_IDS")) if self.db.has(
                "STRING_IDS", "id", "value") else {}
        value = self.strings.get(sid)
        return str(sid) if value is None else str(value)

    def enum(self, table: str, value: Any) -> Any:
        if table not in self.enums:
            self.enums[table] = dict(self.db.fetch(f'SELECT id, name FROM "{table}"')) if (
                self.db.has(table, "id", "name")) else {}
        return self.enums[table].get(value, value)

    def named(self, table: str, cells: dict[str, Any]) -> dict[str, Any]:
        """The cells with string ids and enum ids as their text."""
        for column in _STRING_COLUMNS.get(table, ()):
            if cells.get(column) is not None:
                cells[column] = self.text(cells[column])
        for column, enum in _ENUM_COLUMNS.items():
            if cells.get(column) is not None:
                cells[column] = self.enum(enum, cells[column])
        if table in _API_TYPE and cells.get("type") is not None:
            cells["type"] = self.enum("ENUM_API_TYPE", cells["type"])
        return cells
