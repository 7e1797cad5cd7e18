"""The table model: named, typed columns with units, as the summary CSVs, the SQLite exports'
tables and proftui's own reports give them (read by :mod:`proftui.core.importers.csv.summary`,
:mod:`proftui.core.importers.ascend_db.tables` and others)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from proftui.core.model.diagnostics import Diagnostics

MISSING = frozenset({"", "N/A", "NA", "n/a", "-", "None", "null"})  # texts of "no value"
_SUFFIX = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$")
# Parenthesised suffixes that are units; any other ("Communication(Not Overlapped)") is part
# of the column's name.
UNITS = frozenset({
    "ns", "us", "µs", "μs", "ms", "s", "%", "B", "Byte", "Bytes", "KB", "MB", "GB", "KiB",
    "MiB", "GiB", "B/s", "KB/s", "MB/s", "GB/s", "Hz", "KHz", "MHz", "GHz", "W", "mW", "C",
    "cycles", "cycle", "times", "count"})
_UNIT_WORD = re.compile(r"^[A-Za-zµμ%]{1,4}(?:/[A-Za-z]{1,3})?$")  # cm, kB/s: short, no spaces
# Bytes in one of each size unit the summary CSVs write (binary: their MB is 2^20 bytes).
BYTES_PER_UNIT = {"B": 1, "Byte": 1, "Bytes": 1, "KB": 1 << 10, "KiB": 1 << 10, "MB": 1 << 20,
                  "MiB": 1 << 20, "GB": 1 << 30, "GiB": 1 << 30}


@dataclass
class Column:
    """One column: its header as written, name and unit apart, and its values."""

    header: str
    name: str
    unit: str
    kind: str  # "number", "timestamp" (int64 ns) or "text"
    values: np.ndarray
    # shown in its own unit (3 decimals) rather than in human units, as its header says
    fixed: bool = False


def text_column(header: str, values: Sequence[Any]) -> Column:
    """A text column named by its header, without a unit: one cell per value, in an object
    array (np.array would make fixed-width strings of them)."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return Column(header, header, "", "text", array)


@dataclass
class Table:
    """A table as columns: a summary CSV, a SQLite export's table or one of proftui's
    reports."""

    kind: str
    path: str
    columns: list[Column]
    n_rows: int
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    group: str = ""  # the rank or device of the profile it belongs to
    additive: bool = True  # whether its rows add up (else no totals: parts of one whole)

    def find(self, *names: str) -> Column | None:
        """The first column called any of `names` (case and unit suffix ignored)."""
        wanted = [_bare(n) for n in names]
        for name in wanted:
            for column in self.columns:
                if _bare(column.header) == name or column.name.lower() == name:
                    return column
        return None


def split_unit(header: str) -> tuple[str, str]:
    """(name, unit) of a header: "Task Duration(us)" -> ("Task Duration", "us"); a suffix
    that is no unit stays in the name: "Communication(Not Overlapped)" -> itself, ""."""
    m = _SUFFIX.match(header)
    if m and (m.group(2).strip() in UNITS or _UNIT_WORD.match(m.group(2))):
        return m.group(1), m.group(2).strip()
    return header, ""


def _bare(header: str) -> str:
    return split_unit(header)[0].strip().lower()
