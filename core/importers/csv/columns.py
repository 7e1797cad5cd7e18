"""Typed columns from chunks of CSV rows: numbers (exact ns for epoch timestamps) until a
cell is not one, else text codes; what :mod:`proftui.core.importers.csv.summary` parses with.

Where the time goes, and what is done about it (bench/bench_tables.py measures it against a
bare `csv.reader` pass): the cyclic GC is off and chunks are small (they stay in the CPU's
caches); the number columns of a chunk are joined row by row (a row's cells lie side by side
in memory) into one JSON array and decoded by msgspec in one C pass, instead of a float()
per cell; the text columns of a row are coded at once, by the tuple of their cells (a
kernel's name, type, shapes and formats repeat together), instead of a dictionary look-up
per cell. Any chunk these shortcuts do not fit is read cell by cell as before. Plain rows
come in blocks of bytes instead (csv_blocks.py, Chunks.add_block), whose number cells never
become strings.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

import msgspec
import numpy as np

from proftui.core.importers.csv.blocks import Block
from proftui.core.model.table import MISSING
from proftui.core.model.timeconv import us_to_ns

TIME_UNITS = {"us": 1_000, "ms": 1_000_000, "ns": 1, "s": 1_000_000_000}
_EPOCH_US = 1e12  # beyond this many µs a time column holds epoch timestamps (exact int64 ns)
_MISSING_TS = np.iinfo(np.int64).min


class ColumnBuilder:
    """One column's values, chunk by chunk: numbers (and exact ns for time units) until a cell
    is not a number, then text codes into a table of the distinct texts."""

    def __init__(self, unit: str, all_ns: bool = True, text: bool = False) -> None:
        self.unit = unit
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
        self.joint = True  # decoded with the other number columns (see add_chunk)

    def _number_or_missing(self, cell: str) -> str:
        if cell in MISSING:
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
            fast = plain_numbers(cells)
            self.joint = fast is not None
            if fast is not None:
                self.add_numbers(fast, lambda: cells)
                return
            cells = list(map(str.strip, cells))
            try:
                try:  # most number columns have no missing cell
                    numbers = np.array(cells, np.float64)
                except ValueError:
                    numbers = np.array([c if c not in MISSING else "nan" for c in cells],
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
        self.codes.append(self.code(cells))

    def add_numbers(self, numbers: np.ndarray, cells: Callable[[], Sequence[str]],
                    epoch: bool | None = None,
                    us_ns: Callable[[], tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        """Add a chunk of numbers; `cells()` gives their text, for exact ns; `epoch` whether
        they reach epoch timestamps (None: find out); `us_ns()`, if given, their exact ns
        (and which are usable) when the unit is µs, as _time_ns would give them."""
        self.numbers.append(numbers)
        if self.unit not in TIME_UNITS:
            return
        if epoch is None:
            epoch = _has_epoch(numbers, self.unit)
        if not self.epoch and epoch:
            self.epoch = True
            self.late_epoch = len(self.numbers) > 1  # earlier chunks lack their ns
        if self.epoch:
            if us_ns is not None and self.unit == "us":
                ns, ok = us_ns()
            else:
                ns, ok = _time_ns(list(map(str.strip, cells())), numbers, self.unit)
            self.ns.append(ns)
            self.ok.append(ok)
        else:
            self.ns.append(None)
            self.ok.append(None)

    def code(self, cells: Sequence[str]) -> np.ndarray:
        """The codes of these cells (new texts get the next codes)."""
        # One lookup a cell at C speed; a new text gets the next code (_Codes.__missing__).
        return np.fromiter(map(self.texts.__getitem__, cells), np.int32, len(cells))

    def _become_text(self) -> None:
        """The column is text: numbers read so far go back to text (as the shortest text of
        each number, until the file is read again for their own text: see late_text)."""
        self.late_text = bool(self.numbers)
        self.codes = [self.code(["" if np.isnan(v) else np.format_float_positional(v, trim="-")
                                 for v in chunk.tolist()]) for chunk in self.numbers]
        self.numbers, self.ns, self.ok = [], [], []
        self.late_epoch = False

    def text_parts(self) -> tuple[list[str], np.ndarray]:
        """A text column's texts (stripped; two cells that differ only by spaces around them
        may give the same text twice) and each row's code into them."""
        codes = np.concatenate(self.codes) if self.codes else np.zeros(0, np.int32)
        return [t.strip() for t in self.texts], codes

    def values(self) -> tuple[str, str, np.ndarray]:
        """The column's kind ("text", "number" or "timestamp"), unit and values."""
        unit = self.unit
        if self.codes is not None:
            distinct, codes = self.text_parts()
            texts = np.empty(len(distinct), dtype=object)
            texts[:] = distinct
            return "text", unit, texts[codes]
        numbers = np.concatenate(self.numbers) if self.numbers else np.zeros(0)
        if self.epoch and unit in TIME_UNITS and _has_epoch(numbers, unit):
            if self.late_epoch:  # the file is read again with every chunk's ns
                return "number", unit, numbers
            ns = np.concatenate(self.ns)  # type: ignore[arg-type]
            ok = np.concatenate(self.ok)  # type: ignore[arg-type]
            return "timestamp", "ns", np.where(ok, ns, _MISSING_TS)
        return "number", unit, numbers


class _Codes(dict):
    """Text -> code, a new text getting the next code."""

    def __missing__(self, text: str) -> int:
        code = self[text] = len(self)
        return code


class TextRows:
    """Codes for the text columns of whole rows at once: each distinct tuple of their cells
    gets a number, and each column's code of it is looked up once, when it is first seen.

    Given up (None from :meth:`codes`) when the tuples hardly repeat: then they would only
    hold memory.
    """

    _GIVE_UP = 1 << 14  # distinct tuples before asking whether they repeat enough

    def __init__(self, builders: list[ColumnBuilder], columns: list[int]) -> None:
        self.builders = [builders[i] for i in columns]
        self.columns = columns
        self.pick = operator.itemgetter(*columns)
        self.rows = _RowCodes(self)
        self.per_column: list[list[int]] = [[] for _ in columns]  # tuple number -> code
        self.arrays: list[np.ndarray] = []  # per_column as arrays, while no tuple is new
        self.seen = 0
        self.cells: Callable[[Any], Sequence[str]] = tuple

    def add(self, body: list[list[str]]) -> bool:
        """Code the text columns of `body`; False when the tuples repeat too little (the
        caller codes cell by cell from now on)."""
        if len(self.columns) == 1:
            rows = [(r[self.columns[0]],) for r in body]
        else:
            rows = list(map(self.pick, body))
        return self.add_keys(rows, tuple)

    def add_keys(self, rows: Sequence[Hashable], cells: Callable[[Any], Sequence[str]]
                 ) -> bool:
        """:meth:`add` for rows given by a key each (a tuple of their text cells, or a
        block's row of them: see csv_blocks.Block.rows); `cells` gives a new key's cells."""
        self.cells = cells
        numbers = np.fromiter(map(self.rows.__getitem__, rows), np.int32, len(rows))
        self.seen += len(rows)
        if len(self.arrays) != len(self.per_column):
            self.arrays = [np.array(codes, np.int32) for codes in self.per_column]
        for builder, codes in zip(self.builders, self.arrays):
            assert builder.codes is not None
            builder.codes.append(codes[numbers])
        return len(self.rows) < self._GIVE_UP or 4 * len(self.rows) < self.seen

    def _new(self, row: Hashable) -> None:
        for builder, codes, cell in zip(self.builders, self.per_column, self.cells(row)):
            codes.append(builder.texts[cell])
        self.arrays = []


class _RowCodes(dict):
    """Tuple of a row's text cells -> its number; a new tuple gets the next number."""

    def __init__(self, owner: TextRows) -> None:
        super().__init__()
        self.owner = owner

    def __missing__(self, row: Hashable) -> int:
        number = self[row] = len(self)
        self.owner._new(row)
        return number


class Chunks:
    """Hands each column its cells of a chunk of rows (of equal width).

    The number columns are decoded together, row by row: their cells are joined into one JSON
    array and decoded at once. When a cell of any of them is not a plain number, each of them
    tries on its own, and one that fails is read by float() from then on. The text columns
    are coded by whole rows (:class:`TextRows`) while their rows repeat.
    """

    def __init__(self, builders: list[ColumnBuilder]) -> None:
        self.builders = builders
        self.text_rows: TextRows | None = None
        self.by_rows = True  # whether the text columns are still coded by whole rows

    def add(self, body: list[list[str]]) -> None:
        builders = self.builders
        joint = self._joint()
        matrix = plain_matrix(body, joint) if joint else None
        if matrix is not None:
            self._add_matrix(joint, matrix, lambda i: [r[i] for r in body])
            done = set(joint)
            text = self._text()
            if text and self.by_rows:
                self._add_rows(text, lambda rows: rows.add(body))
                done.update(text)
            rest = [i for i in range(len(builders)) if i not in done]
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

    def add_block(self, block: Block) -> None:
        """:meth:`add` for a block of plain rows: its number columns decoded together, its
        text rows coded at once, any other column from the strings csv.reader reads."""
        done: set[int] = set()
        text = self._text()
        first = block.row_cells(block.raw[:block.ends[0, -1]])
        joint = [i for i in self._joint() if _number_like(first[i])]  # the others would fail
        for columns, matrix in _decoded(block, joint, text if self.by_rows else None):
            self._add_matrix(columns, matrix, lambda i: block.cells([i])[0], block.us_ns)
            done.update(columns)
        if text and self.by_rows:
            self._add_rows(text, lambda rows: rows.add_keys(block.rows(text), block.row_cells))
            done.update(text)
        rest = [i for i in range(len(self.builders)) if i not in done]
        if rest:
            for i, cells in zip(rest, block.cells(rest)):
                self.builders[i].add(cells)

    def _joint(self) -> list[int]:
        return [i for i, b in enumerate(self.builders) if b.codes is None and b.joint]

    def _text(self) -> list[int]:
        return [i for i, b in enumerate(self.builders) if b.codes is not None]

    def _add_matrix(self, joint: list[int], matrix: np.ndarray,
                    cells: Callable[[int], Sequence[str]],
                    us_ns: Callable[[int], tuple[np.ndarray, np.ndarray]] | None = None
                    ) -> None:
        """Hand the number columns `joint` their values (`cells(i)`: column i's strings;
        `us_ns(i)`: its exact ns if µs)."""
        builders = self.builders
        # Which time columns reach epoch timestamps: one pass over the matrix.
        scale = np.array([_epoch_threshold(builders[i].unit) for i in joint])
        with np.errstate(invalid="ignore"):
            reach = np.abs(np.where(np.isfinite(matrix), matrix, 0.0)).max(axis=0) >= scale
        for j, i in enumerate(joint):
            builders[i].add_numbers(matrix[:, j], lambda i=i: cells(i), bool(reach[j]),
                                    None if us_ns is None else lambda i=i: us_ns(i))

    def _add_rows(self, text: list[int], add: Callable[[TextRows], bool]) -> None:
        """Code the text columns by whole rows (`add` hands them to a TextRows)."""
        if self.text_rows is None or self.text_rows.columns != text:
            self.text_rows = TextRows(self.builders, text)
        self.by_rows = add(self.text_rows)
        if not self.by_rows:
            self.text_rows = None


def _number_like(cell: str) -> bool:
    """Whether float() reads a cell, or it is a missing value."""
    try:
        float(cell)
    except ValueError:
        return cell.strip() in MISSING
    return True


def _decoded(block: Block, columns: list[int], text: list[int] | None = None
             ) -> Iterator[tuple[list[int], np.ndarray]]:
    """The number columns of a block decoded together (see Block.numbers), as many as can
    be: when one cell is not a plain number, each half of them is tried, and so on."""
    if not columns:
        return
    matrix = block.numbers(columns, text)
    if matrix is not None:
        yield columns, matrix
    elif len(columns) > 1:
        half = len(columns) // 2
        yield from _decoded(block, columns[:half])
        yield from _decoded(block, columns[half:])


_NUMBERS = msgspec.json.Decoder(list[float])
_NUMBERS_OR_NULL = msgspec.json.Decoder(list[float | None])
_MINUS_ZERO = re.compile(r"-0(?![.eE])")  # an integer -0: JSON reads it as 0, without sign
# N/A while decoding (see plain_numbers): a number no table holds, and quick to read (the
# smallest subnormal, the obvious choice, takes msgspec 100 times longer than this).
_SENTINEL_TEXT = "-1.25e-300"
_SENTINEL = float(_SENTINEL_TEXT)


def plain_matrix(body: list[list[str]], columns: list[int]) -> np.ndarray | None:
    """The cells of `columns` as a (rows, columns) float64 matrix, when every one is plain
    (see :func:`plain_numbers`); else None."""
    if len(columns) == 1:
        cells: Sequence[str] = [r[columns[0]] for r in body]
    else:
        pick = operator.itemgetter(*columns)
        cells = list(map(",".join, map(pick, body)))
    values = plain_numbers(cells, len(body) * len(columns))
    return None if values is None else values.reshape(len(body), len(columns))


def plain_numbers(cells: Sequence[str], count: int = -1) -> np.ndarray | None:
    """The cells as float64 when every one is a JSON number, N/A or empty (NaN), with JSON
    whitespace (space, TAB) around it allowed: one C pass (msgspec) instead of a float() per
    cell. None when any cell is anything else; the caller then reads them one by one.
    `count` is how many values the cells hold (when each is several joined by commas).

    Exactly float()'s values: both round correctly. An integer "-0" is left to float() (JSON
    reads it as zero, without its sign), as is a cell holding a comma (it would read as two).
    N/A is decoded as an unlikely number, then made NaN: that so many of them came out as N/A
    cells went in proves no real number was taken for one (an "N/A" inside a cell leaves
    invalid JSON or another number).
    """
    if not cells:
        return np.zeros(0) if count <= 0 else None
    text = ",".join(cells)
    if "-0" in text and _MINUS_ZERO.search(text):
        return None
    expected = len(cells) if count < 0 else count
    missing = text.count("N/A")
    bracketed = f"[{text.replace('N/A', _SENTINEL_TEXT) if missing else text}]"
    try:
        values = np.fromiter(_NUMBERS.decode(bracketed), np.float64)
    except (msgspec.DecodeError, UnicodeEncodeError):
        return _with_empty_cells(text, expected)
    if len(values) != expected:
        return None
    if missing or _SENTINEL_TEXT in text:
        where = values == _SENTINEL
        if int(where.sum()) != missing:
            return None
        values[where] = np.nan
    return values


def _with_empty_cells(text: str, expected: int) -> np.ndarray | None:
    """:func:`plain_numbers` when some cells may be empty (or it is not numbers at all)."""
    text = f"[{text.replace('N/A', 'null')}]"
    if ",," not in text and "[," not in text and ",]" not in text:
        return None  # no empty cell: something else is not a number
    text = text.replace(",,", ",null,").replace(",,", ",null,")
    text = text.replace("[,", "[null,").replace(",]", ",null]")
    try:
        values = _NUMBERS_OR_NULL.decode(text)
    except (msgspec.DecodeError, UnicodeEncodeError):
        return None
    return np.array(values, np.float64) if len(values) == expected else None


def _epoch_threshold(unit: str) -> float:
    """From what magnitude a column in `unit` holds epoch timestamps (inf: never)."""
    return _EPOCH_US * (1_000 / TIME_UNITS[unit]) if unit in TIME_UNITS else np.inf


def _has_epoch(numbers: np.ndarray, unit: str) -> bool:
    """Whether a time column's values reach epoch timestamps (an inf says nothing of the
    column's magnitude)."""
    finite = np.isfinite(numbers)
    return bool(finite.any()) and float(np.abs(numbers[finite]).max()) >= _epoch_threshold(unit)


def _time_ns(cells: list[str], numbers: np.ndarray, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """Exact int64 ns of a chunk of time cells (and which are usable): µs texts read exactly,
    ns texts as integers, ms and s through float64."""
    if unit == "us":
        return us_to_ns([c if c not in MISSING else None for c in cells])
    exact: dict[int, int] = {}
    if unit == "ns":
        texts = [c if c not in MISSING else "0" for c in cells]
        try:  # integer texts, exact beyond float64's 2**53
            return np.array(texts).astype(np.int64), ~np.isnan(numbers)
        except (ValueError, OverflowError):  # decimals or out of range: through float64
            exact = _integers(texts)  # but each integer exact all the same
    scaled = numbers * TIME_UNITS[unit]
    ok = np.isfinite(scaled) & (np.abs(scaled) < 2.0 ** 63)
    ns = np.where(ok, np.rint(np.where(ok, scaled, 0.0)), 0).astype(np.int64)
    if exact:
        where = np.fromiter(exact, np.int64, len(exact))
        ns[where] = np.fromiter(exact.values(), np.int64, len(exact))
        ok[where] = ~np.isnan(numbers[where])
    return ns, ok


def _integers(texts: list[str]) -> dict[int, int]:
    """Which texts are integers inside int64 (as int() reads them), and their values."""
    exact = {}
    for i, text in enumerate(texts):
        try:
            value = int(text)
        except ValueError:
            continue
        if -(1 << 63) <= value < 1 << 63:
            exact[i] = value
    return exact
