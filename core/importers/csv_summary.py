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
import itertools
import re
from dataclasses import dataclass, field

import numpy as np

from proftui.core.diagnostics import Diagnostics
from proftui.core.errors import ProftuiError
from proftui.core.timeconv import us_to_ns

_SUFFIX = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$")
# Parenthesised suffixes that are units; any other ("Communication(Not Overlapped)") is part
# of the column's name.
UNITS = frozenset({
    "ns", "us", "µs", "μs", "ms", "s", "%", "B", "Byte", "Bytes", "KB", "MB", "GB", "KiB",
    "MiB", "GiB", "B/s", "KB/s", "MB/s", "GB/s", "Hz", "KHz", "MHz", "GHz", "W", "mW", "C",
    "cycles", "cycle", "times", "count"})
_UNIT_WORD = re.compile(r"^[A-Za-zµμ%]{1,4}(?:/[A-Za-z]{1,3})?$")  # cm, kB/s: short, no spaces
_MISSING = {"", "N/A", "NA", "n/a", "-", "None", "null"}
MISSING = frozenset(_MISSING)  # cell texts that mean "no value"
_TIME_UNITS = {"us": 1_000, "ms": 1_000_000, "ns": 1, "s": 1_000_000_000}
# Beyond this many µs a time column holds epoch timestamps, kept as exact int64 ns.
_EPOCH_US = 1e12
csv.field_size_limit(16 << 20)  # a larger cell is damage: the rows before it are kept
_CHUNK_ROWS = 1 << 15
MAX_COLUMNS = 1024  # summary CSVs have tens; more is damage, and the rest is left out


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
    additive: bool = True  # whether its rows add up (else no totals: parts of one whole)

    def find(self, *names: str) -> Column | None:
        """The first column called any of `names` (case and unit suffix ignored)."""
        wanted = [_bare(n) for n in names]
        for name in wanted:
            for column in self.columns:
                if _bare(column.header) == name or column.name.lower() == name:
                    return column
        return None


def read_table(path: str, kind: str = "", group: str = "") -> Table:
    """Read one summary CSV of a rank or device; raises ProftuiError if it cannot be read.

    Rows are read a chunk at a time into typed columns, so a table costs about 8 bytes a cell
    (text repeats are shared) rather than a Python string each.
    """
    diagnostics = Diagnostics()
    try:
        with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
            reader = csv.reader(f)
            header = [h.strip() for h in next(reader, [])]
            if len(header) > MAX_COLUMNS:  # every row is as wide as the header: bound it
                diagnostics.add("wide_csv", len(header) - MAX_COLUMNS, None,
                                f"{len(header)} columns")
                header = header[:MAX_COLUMNS]
            builders = [_ColumnBuilder(h) for h in header]
            width, n_rows, ragged = len(header), 0, 0
            while True:
                try:
                    chunk = list(itertools.islice(reader, _CHUNK_ROWS))
                except csv.Error as exc:  # a cell past the field limit, a NUL byte
                    diagnostics.add("bad_csv", 1, None, f"line {reader.line_num}: {exc}")
                    break
                if not chunk:
                    break
                body = [r for r in chunk if any(map(str.strip, r))]
                for i, row in enumerate(body):
                    if len(row) != width:
                        # msprof ends some rows with a stray cell after the last TAB; extra
                        # empty cells are no problem, cells beyond the header or missing are.
                        if len(row) > width and (width == MAX_COLUMNS or not any(
                                c.strip() for c in row[width:])):
                            body[i] = row[:width]
                            continue
                        ragged += 1
                        body[i] = (row + [""] * width)[:width]
                if body:
                    for builder, cells in zip(builders, zip(*body)):
                        builder.add(list(map(str.strip, cells)))
                    n_rows += len(body)
    except OSError as exc:
        raise ProftuiError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except csv.Error as exc:
        raise ProftuiError(f"{path}: not a readable CSV ({exc}).") from None
    diagnostics.add("ragged_row", ragged, None, f"rows without {width} cells")
    for b in builders:
        if b.bad_cells:
            diagnostics.add("bad_number", b.bad_cells, None,
                            f'column "{b.header}": not a number, e.g. "{b.first_bad[:40]}"')
    return Table(kind, path, [b.column() for b in builders], n_rows, diagnostics, group)


class _ColumnBuilder:
    """One column's values, chunk by chunk: numbers (and exact ns for time units) until a cell
    is not a number, then text codes into a table of the distinct texts."""

    def __init__(self, header: str) -> None:
        self.header = header
        self.name, self.unit = split_unit(header)
        self.numbers: list[np.ndarray] = []
        self.ns: list[np.ndarray] = []  # time units only
        self.ok: list[np.ndarray] = []
        self.codes: list[np.ndarray] | None = None  # text columns
        self.texts: dict[str, int] = {}
        self.bad_cells = 0  # text in a column whose unit says numbers
        self.first_bad: str | None = None

    def _number_or_missing(self, cell: str) -> str:
        if cell in _MISSING:
            return cell
        try:
            float(cell)
        except ValueError:
            self.bad_cells += 1
            self.first_bad = self.first_bad or cell
            return ""
        return cell

    def add(self, cells: list[str]) -> None:
        if self.codes is None:
            try:
                try:  # most number columns have no missing cell
                    numbers = np.array(cells, np.float64)
                except ValueError:
                    numbers = np.array([c if c not in _MISSING else "nan" for c in cells],
                                       np.float64)
            except ValueError:
                if self.unit:  # a unit says numbers: the odd text is damage, not the column
                    cells = [self._number_or_missing(c) for c in cells]
                    self.add(cells)
                    return
                self._become_text()
            else:
                self.numbers.append(numbers)
                if self.unit in _TIME_UNITS:
                    ns, ok = _time_ns(cells, numbers, self.unit)
                    self.ns.append(ns)
                    self.ok.append(ok)
                return
        assert self.codes is not None
        self.codes.append(self._code(cells))

    def _code(self, cells: list[str]) -> np.ndarray:
        texts = self.texts
        for text in dict.fromkeys(cells):  # the new distinct texts get the next codes
            if text not in texts:
                texts[text] = len(texts)
        return np.fromiter(map(texts.__getitem__, cells), np.int32, len(cells))

    def _become_text(self) -> None:
        """Numbers read so far go back to text (as the shortest text of each number)."""
        self.codes = [self._code(["" if np.isnan(v) else np.format_float_positional(v, trim="-")
                                  for v in chunk.tolist()]) for chunk in self.numbers]
        self.numbers, self.ns, self.ok = [], [], []

    def column(self) -> Column:
        header, name, unit = self.header, self.name, self.unit
        if self.codes is not None:
            texts = np.empty(len(self.texts), dtype=object)
            texts[:] = list(self.texts)
            codes = np.concatenate(self.codes) if self.codes else np.zeros(0, np.int32)
            return Column(header, name, unit, "text", texts[codes])
        numbers = np.concatenate(self.numbers) if self.numbers else np.zeros(0)
        finite = np.isfinite(numbers)  # an inf says nothing of the column's magnitude
        if unit in _TIME_UNITS and finite.any() and np.abs(numbers[finite]).max() >= _EPOCH_US * (
                1_000 / _TIME_UNITS[unit]):
            ns, ok = np.concatenate(self.ns), np.concatenate(self.ok)
            return Column(header, name, "ns", "timestamp",
                          np.where(ok, ns, np.iinfo(np.int64).min))
        return Column(header, name, unit, "number", numbers)


def _time_ns(cells: list[str], numbers: np.ndarray, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """Exact int64 ns of a chunk of time cells (and which are usable): µs texts read exactly,
    ns texts as integers, ms and s through float64."""
    if unit == "us":
        return us_to_ns([c if c not in _MISSING else None for c in cells])
    if unit == "ns":
        try:  # integer texts, exact beyond float64's 2**53
            ns = np.array([c if c not in _MISSING else "0" for c in cells]).astype(np.int64)
            return ns, ~np.isnan(numbers)
        except (ValueError, OverflowError):
            pass  # decimals or out of range: through float64 below
    scaled = numbers * _TIME_UNITS[unit]
    ok = np.isfinite(scaled) & (np.abs(scaled) < 2.0 ** 63)
    return np.where(ok, np.rint(np.where(ok, scaled, 0.0)), 0).astype(np.int64), ok


def split_unit(header: str) -> tuple[str, str]:
    """(name, unit) of a header: "Task Duration(us)" -> ("Task Duration", "us"); a suffix
    that is no unit stays in the name: "Communication(Not Overlapped)" -> itself, ""."""
    m = _SUFFIX.match(header)
    if m and (m.group(2).strip() in UNITS or _UNIT_WORD.match(m.group(2))):
        return m.group(1), m.group(2).strip()
    return header, ""


def _bare(header: str) -> str:
    return split_unit(header)[0].strip().lower()
