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
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec
import numpy as np

from proftui.core.diagnostics import Diagnostics
from proftui.core.errors import ProftuiError
from proftui.core.memory import indexing
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
_CHUNK_ROWS = 2048  # rows in flight: small enough to stay in the CPU's caches
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


def read_table(path: str, kind: str = "", group: str = "", use_cache: bool = True) -> Table:
    """Read one summary CSV of a rank or device; raises ProftuiError if it cannot be read.

    With `use_cache`, a table read before (the same file, unchanged) is mapped from the
    cache instead of parsed (see :mod:`proftui.core.table_cache`); the numbers are the same.
    """
    if use_cache:
        from proftui.core.table_cache import cached_table

        return cached_table(path, kind, group)
    return parse_table(path, kind, group)[0]


TextParts = dict[int, tuple[list[str], np.ndarray]]  # column -> (texts, codes into them)


def parse_table(path: str, kind: str = "", group: str = "") -> tuple[Table, TextParts]:
    """Parse one summary CSV; also returns each text column's distinct texts and codes (what
    the cache stores). Raises ProftuiError if it cannot be read.

    Rows are read a chunk at a time into typed columns, so a table costs about 8 bytes a cell
    (text repeats are shared) rather than a Python string each. A time column's exact ns are
    worked out only once it shows epoch timestamps, and a column is taken for numbers until
    a cell is not one; the file is read again in the rare case that either happens after the
    column's first chunk (epoch timestamps late in a column, a column of numbers with text
    far down), so that every ns is exact and every text is the file's.
    """
    with indexing():  # no reference cycles: the collector would walk every row for nothing
        table, builders = _parse(path, kind, group, all_ns=False, text=set())
        late_text = {i for i, b in enumerate(builders) if b.late_text}
        if late_text or any(b.late_epoch for b in builders):
            table, builders = _parse(path, kind, group, all_ns=True, text=late_text)
    return table, {i: b.text_parts() for i, b in enumerate(builders) if b.codes is not None}


def _parse(path: str, kind: str, group: str, all_ns: bool, text: set[int]
           ) -> tuple[Table, list[_ColumnBuilder]]:
    diagnostics = Diagnostics()
    try:
        with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
            reader = csv.reader(f)
            header = [h.strip() for h in next(reader, [])]
            if len(header) > MAX_COLUMNS:  # every row is as wide as the header: bound it
                diagnostics.add("wide_csv", len(header) - MAX_COLUMNS, None,
                                f"{len(header)} columns")
                header = header[:MAX_COLUMNS]
            builders = [_ColumnBuilder(h, all_ns, i in text) for i, h in enumerate(header)]
            width, n_rows, ragged = len(header), 0, 0
            while True:
                try:
                    chunk = list(itertools.islice(reader, _CHUNK_ROWS))
                except csv.Error as exc:  # a cell past the field limit, a NUL byte
                    diagnostics.add("bad_csv", 1, None, f"line {reader.line_num}: {exc}")
                    break
                if not chunk:
                    break
                body = _non_blank(chunk)
                if set(map(len, body)) - {width}:
                    ragged += _even_up(body, width)
                if body:
                    _add_chunk(builders, body)
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
    return Table(kind, path, [b.column() for b in builders], n_rows, diagnostics, group), builders


def _non_blank(chunk: list[list[str]]) -> list[list[str]]:
    """The rows of `chunk` with a cell that is not blank. Most chunks have none blank, and
    their first cells say so at once."""
    if [] not in chunk and "" not in map(str.strip, map(operator.itemgetter(0), chunk)):
        return chunk
    return [r for r in chunk if any(map(str.strip, r))]


def _even_up(body: list[list[str]], width: int) -> int:
    """Pad or cut the rows of `body` to `width` cells in place; returns how many were ragged.

    msprof ends some rows with a stray cell after the last TAB; extra empty cells are no
    problem, cells beyond the header or missing are.
    """
    ragged = 0
    for i, row in enumerate(body):
        if len(row) != width:
            if len(row) > width and (width == MAX_COLUMNS or not any(
                    c.strip() for c in row[width:])):
                body[i] = row[:width]
                continue
            ragged += 1
            body[i] = (row + [""] * width)[:width]
    return ragged


def _add_chunk(builders: list[_ColumnBuilder], body: list[list[str]]) -> None:
    """Hand each column its cells of `body` (rows of equal width).

    The number columns are decoded together, row by row (a row's cells lie side by side in
    memory; picking them column by column is what costs): their cells are joined into one
    JSON array and decoded at once. When a cell of any of them is not a plain number, each
    of them tries on its own, and one that fails is read by float() from then on.
    """
    joint = [i for i, b in enumerate(builders) if b.codes is None and b.joint]
    matrix = _plain_matrix(body, joint) if joint else None
    if matrix is not None:
        # Which time columns reach epoch timestamps: one pass over the matrix, not one a column.
        scale = np.array([_epoch_threshold(builders[i].unit) for i in joint])
        with np.errstate(invalid="ignore"):
            reach = np.abs(np.where(np.isfinite(matrix), matrix, 0.0)).max(axis=0) >= scale
        for j, i in enumerate(joint):
            builders[i].add_numbers(matrix[:, j], lambda i=i: [r[i] for r in body],
                                    bool(reach[j]))
        rest = [i for i in range(len(builders)) if i not in set(joint)]
    else:
        rest = list(range(len(builders)))
    if not rest:
        return
    if len(rest) == len(builders):
        columns = zip(*body)
    else:
        pick = operator.itemgetter(*rest)
        columns = zip(*map(pick, body)) if len(rest) > 1 else iter([list(map(pick, body))])
    for i, cells in zip(rest, columns):
        builders[i].add(cells)


_NUMBERS = msgspec.json.Decoder(list[float | None])
_MINUS_ZERO = re.compile(r"-0(?![.eE])")  # an integer -0: JSON reads it as 0, without sign


def _plain_matrix(body: list[list[str]], columns: list[int]) -> np.ndarray | None:
    """The cells of `columns` as a (rows, columns) float64 matrix, when every one is plain
    (see :func:`_plain_numbers`); else None."""
    if len(columns) == 1:
        cells: Sequence[str] = [r[columns[0]] for r in body]
    else:
        pick = operator.itemgetter(*columns)
        cells = list(map(",".join, map(pick, body)))
    values = _plain_numbers(cells, len(body) * len(columns))
    return None if values is None else values.reshape(len(body), len(columns))


def _plain_numbers(cells: Sequence[str], count: int = -1) -> np.ndarray | None:
    """The cells as float64 when every one is a JSON number, N/A or empty (NaN), with JSON
    whitespace (space, TAB) around it allowed: one C pass (msgspec) instead of a float() per
    cell. None when any cell is anything else; the caller then reads them one by one.
    `count` is how many values the cells hold (when each is several joined by commas).

    Exactly float()'s values: both round correctly. An integer "-0" is left to float() (JSON
    reads it as zero, without its sign), as is a cell holding a comma (it would read as two).
    """
    text = ",".join(cells)
    if "-0" in text and _MINUS_ZERO.search(text):
        return None
    if "N/A" in text:
        text = text.replace("N/A", "null")
    text = f"[{text}]"
    if ",," in text or "[," in text or ",]" in text:  # empty cells
        text = text.replace(",,", ",null,").replace(",,", ",null,")
        text = text.replace("[,", "[null,").replace(",]", ",null]")
    try:
        values = _NUMBERS.decode(text)
    except (msgspec.DecodeError, UnicodeEncodeError):
        return None
    if len(values) != (len(cells) if count < 0 else count):
        return None
    return np.array(values, np.float64)


class _ColumnBuilder:
    """One column's values, chunk by chunk: numbers (and exact ns for time units) until a cell
    is not a number, then text codes into a table of the distinct texts."""

    def __init__(self, header: str, all_ns: bool = True, text: bool = False) -> None:
        self.header = header
        self.name, self.unit = split_unit(header)
        self.numbers: list[np.ndarray] = []
        self.ns: list[np.ndarray | None] = []  # time units only; None: not worked out
        self.ok: list[np.ndarray | None] = []
        self.epoch = all_ns  # whether to work out exact ns (a chunk had epoch timestamps)
        self.late_epoch = False  # epoch timestamps after chunks whose ns were not worked out
        self.late_text = False  # text after chunks of numbers (whose texts are gone)
        self.codes: list[np.ndarray] | None = [] if text else None  # text columns
        self.texts = _Codes()  # cells as read (spaces around them stripped at the end)
        self.bad_cells = 0  # text in a column whose unit says numbers
        self.first_bad: str | None = None
        self.joint = True  # decoded with the other number columns (see _add_chunk)

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

    def add(self, cells: Sequence[str]) -> None:
        """Add a chunk of cells, as read (stripped here where it matters)."""
        if self.codes is None:
            fast = _plain_numbers(cells)
            self.joint = fast is not None
            if fast is not None:
                self.add_numbers(fast, lambda: cells)
                return
            cells = list(map(str.strip, cells))
            try:
                try:  # most number columns have no missing cell
                    numbers = np.array(cells, np.float64)
                except ValueError:
                    numbers = np.array([c if c not in _MISSING else "nan" for c in cells],
                                       np.float64)
            except ValueError:
                if self.unit:  # a unit says numbers: the odd text is damage, not the column
                    self.add([self._number_or_missing(c) for c in cells])
                    return
                self._become_text()
            else:
                self.add_numbers(numbers, lambda: cells)
                return
        assert self.codes is not None
        self.codes.append(self._code(cells))

    def add_numbers(self, numbers: np.ndarray, cells: Callable[[], Sequence[str]],
                    epoch: bool | None = None) -> None:
        """Add a chunk of numbers; `cells()` gives their text, for exact ns; `epoch` whether
        they reach epoch timestamps (None: find out)."""
        self.numbers.append(numbers)
        if self.unit not in _TIME_UNITS:
            return
        if epoch is None:
            epoch = _has_epoch(numbers, self.unit)
        if not self.epoch and epoch:
            self.epoch = True
            self.late_epoch = len(self.numbers) > 1  # earlier chunks lack their ns
        if self.epoch:
            ns, ok = _time_ns(list(map(str.strip, cells())), numbers, self.unit)
            self.ns.append(ns)
            self.ok.append(ok)
        else:
            self.ns.append(None)
            self.ok.append(None)

    def _code(self, cells: Sequence[str]) -> np.ndarray:
        # One lookup a cell at C speed; a new text gets the next code (_Codes.__missing__).
        return np.fromiter(map(self.texts.__getitem__, cells), np.int32, len(cells))

    def _become_text(self) -> None:
        """The column is text: numbers read so far go back to text (as the shortest text of
        each number, until parse_table reads the file again for their own text)."""
        self.late_text = bool(self.numbers)
        self.codes = [self._code(["" if np.isnan(v) else np.format_float_positional(v, trim="-")
                                  for v in chunk.tolist()]) for chunk in self.numbers]
        self.numbers, self.ns, self.ok = [], [], []
        self.late_epoch = False

    def text_parts(self) -> tuple[list[str], np.ndarray]:
        """A text column's texts (stripped; two cells that differ only by spaces around them
        may give the same text twice) and each row's code into them."""
        codes = np.concatenate(self.codes) if self.codes else np.zeros(0, np.int32)
        return [t.strip() for t in self.texts], codes

    def column(self) -> Column:
        header, name, unit = self.header, self.name, self.unit
        if self.codes is not None:
            distinct, codes = self.text_parts()
            texts = np.empty(len(distinct), dtype=object)
            texts[:] = distinct
            return Column(header, name, unit, "text", texts[codes])
        numbers = np.concatenate(self.numbers) if self.numbers else np.zeros(0)
        if self.epoch and unit in _TIME_UNITS and _has_epoch(numbers, unit):
            if self.late_epoch:  # parse_table reads the file again with every chunk's ns
                return Column(header, name, unit, "number", numbers)
            ns = np.concatenate(self.ns)  # type: ignore[arg-type]
            ok = np.concatenate(self.ok)  # type: ignore[arg-type]
            return Column(header, name, "ns", "timestamp",
                          np.where(ok, ns, np.iinfo(np.int64).min))
        return Column(header, name, unit, "number", numbers)


class _Codes(dict):
    """Text -> code, a new text getting the next code."""

    def __missing__(self, text: str) -> int:
        code = self[text] = len(self)
        return code


def _epoch_threshold(unit: str) -> float:
    """From what magnitude a column in `unit` holds epoch timestamps (inf: never)."""
    return _EPOCH_US * (1_000 / _TIME_UNITS[unit]) if unit in _TIME_UNITS else np.inf


def _has_epoch(numbers: np.ndarray, unit: str) -> bool:
    """Whether a time column's values reach epoch timestamps (an inf says nothing of the
    column's magnitude)."""
    finite = np.isfinite(numbers)
    return bool(finite.any()) and float(np.abs(numbers[finite]).max()) >= _epoch_threshold(unit)


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
