"""Summary CSVs (op_summary, op_statistic, kernel_details, step_trace_time, ...) as typed tables.

Every column keeps its header (duplicates included, e.g. `Reduce Start(us)` once per group), its
unit from the header (`(us)`, `(%)`, `(KB)`, ...) and its values as a numpy array: numbers as
float64 with NaN for `N/A` and empty cells, epoch timestamps as exact int64 nanoseconds, text as
strings. Cells are stripped of the TAB msprof appends to keep Excel from mangling long numbers;
quoted multi-line cells and a byte-order mark are read as such. Ragged rows are padded or cut
and counted. An unknown CSV loads the same way, with its own header.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

import numpy as np

from proftui.core.diagnostics import Diagnostics
from proftui.core.errors import ProftuiError
from proftui.core.timeconv import us_to_ns

_UNIT = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$")
_MISSING = {"", "N/A", "NA", "n/a", "-", "None", "null"}
MISSING = frozenset(_MISSING)  # cell texts that mean "no value"
_TIME_UNITS = {"us": 1_000, "ms": 1_000_000, "ns": 1, "s": 1_000_000_000}
# Beyond this many µs a time column holds epoch timestamps, kept as exact int64 ns.
_EPOCH_US = 1e12
csv.field_size_limit(1 << 30)


@dataclass
class Column:
    """One column: its header as written, name and unit apart, and its values."""

    header: str
    name: str
    unit: str
    kind: str  # "number", "timestamp" (int64 ns) or "text"
    values: np.ndarray


@dataclass
class Table:
    """A summary CSV read into columns."""

    kind: str
    path: str
    columns: list[Column]
    n_rows: int
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    group: str = ""  # the rank or device of the profile it belongs to

    def find(self, *names: str) -> Column | None:
        """The first column called any of `names` (case and unit suffix ignored)."""
        wanted = [_bare(n) for n in names]
        for name in wanted:
            for column in self.columns:
                if _bare(column.header) == name or column.name.lower() == name:
                    return column
        return None


def read_table(path: str, kind: str = "", group: str = "") -> Table:
    """Read one summary CSV of a rank or device; raises ProftuiError if it cannot be read."""
    diagnostics = Diagnostics()
    try:
        with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
            rows = list(csv.reader(f))
    except OSError as exc:
        raise ProftuiError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except csv.Error as exc:
        raise ProftuiError(f"{path}: not a readable CSV ({exc}).") from None
    if not rows:
        return Table(kind, path, [], 0, diagnostics, group)
    header = [h.strip() for h in rows[0]]
    body = [r for r in rows[1:] if any(cell.strip() for cell in r)]
    width = len(header)
    ragged = 0
    for i, row in enumerate(body):
        if len(row) != width:
            # msprof ends some rows with a stray cell after the last TAB; extra empty cells
            # are no problem, cells beyond the header or missing ones are.
            if len(row) > width and not any(c.strip() for c in row[width:]):
                body[i] = row[:width]
                continue
            ragged += 1
            body[i] = (row + [""] * width)[:width]
    diagnostics.add("ragged_row", ragged, None, f"rows without {width} cells")
    cells = list(zip(*body)) if body else [()] * width
    columns = [_column(h, [c.strip() for c in col]) for h, col in zip(header, cells)]
    return Table(kind, path, columns, len(body), diagnostics, group)


def _column(header: str, cells: list[str]) -> Column:
    m = _UNIT.match(header)
    name, unit = (m.group(1), m.group(2)) if m else (header, "")
    present = [c for c in cells if c not in _MISSING]
    if not present:
        return Column(header, name, unit, "number", np.full(len(cells), np.nan))
    try:
        numbers = np.array([c if c not in _MISSING else "nan" for c in cells], np.float64)
    except ValueError:
        return Column(header, name, unit, "text", np.array(cells, dtype=object))
    if unit in _TIME_UNITS and np.nanmax(np.abs(numbers)) >= _EPOCH_US * (
            1_000 / _TIME_UNITS[unit]):
        ns, ok = us_to_ns([c if c not in _MISSING else None for c in cells])
        if unit != "us":
            ns = (numbers * _TIME_UNITS[unit]).astype(np.int64)
        return Column(header, name, "ns", "timestamp", np.where(ok, ns, np.iinfo(np.int64).min))
    return Column(header, name, unit, "number", numbers)


def _bare(header: str) -> str:
    m = _UNIT.match(header)
    return (m.group(1) if m else header).strip().lower()
