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
import operator

import numpy as np

from proftui.core.importers.csv.blocks import BLOCK_BYTES, Block, Pieces
from proftui.core.importers.csv.columns import Chunks, ColumnBuilder
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.errors import ProftuiError
from proftui.core.model.table import Column, Table, split_unit
from proftui.core.runtime.malloc import indexing

csv.field_size_limit(16 << 20)  # a larger cell is damage: the rows before it are kept
_CHUNK_ROWS = 2048  # rows in flight where csv.reader reads: small enough for the CPU's caches
_BLOCK_BYTES = BLOCK_BYTES  # bytes of rows in flight where csv_blocks reads
# The step tables write µs without saying so in their headers (FORMATS.md: step_trace_time)
_STEP_TIMES = {"Computing", "Communication(Not Overlapped)", "Overlapped", "Communication",
               "Free", "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)",
               "Preparing"}
_UNIT_UNSAID = {"step_trace_time": _STEP_TIMES, "cluster_step_trace_time": _STEP_TIMES}
MAX_COLUMNS = 1024  # summary CSVs have tens; more is damage, and the rest is left out


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


def _with_unit(kind: str, name: str, unit: str) -> tuple[str, str]:
    """(name, unit) of a header, µs where the table's kind writes it without saying so."""
    return name, unit or ("us" if name in _UNIT_UNSAID.get(kind, ()) else "")


def _parse(path: str, kind: str, group: str, all_ns: bool, text: set[int]
           ) -> tuple[Table, list[ColumnBuilder]]:
    diagnostics = Diagnostics()
    try:
        with open(path, "rb") as f:
            pieces = Pieces(f, _CHUNK_ROWS, _BLOCK_BYTES)
            header = [h.strip() for h in pieces.header]
            if len(header) > MAX_COLUMNS:  # every row is as wide as the header: bound it
                diagnostics.add("wide_csv", len(header) - MAX_COLUMNS, None,
                                f"{len(header)} columns")
                header = header[:MAX_COLUMNS]
                pieces.width = 0  # csv.reader's rows, cut below
            names = [_with_unit(kind, *split_unit(h)) for h in header]
            builders = [ColumnBuilder(unit, all_ns, i in text)
                        for i, (_, unit) in enumerate(names)]
            chunks = Chunks(builders)
            width, n_rows, ragged = len(header), 0, 0
            rows = iter(pieces)
            while True:
                try:
                    chunk = next(rows, None)
                except csv.Error as exc:  # a cell past the field limit, a NUL byte
                    diagnostics.add("bad_csv", 1, None, f"line {pieces.line_num}: {exc}")
                    break
                if chunk is None:
                    break
                if isinstance(chunk, Block):
                    chunks.add_block(chunk)
                    n_rows += chunk.n_rows
                    continue
                body = _non_blank(chunk)
                if set(map(len, body)) - {width}:
                    ragged += _even_up(body, width)
                if body:
                    chunks.add(body)
                    n_rows += len(body)
    except OSError as exc:
        raise ProftuiError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except csv.Error as exc:
        raise ProftuiError(f"{path}: not a readable CSV ({exc}).") from None
    diagnostics.add("ragged_row", ragged, None, f"rows without {width} cells")
    for h, b in zip(header, builders):
        if b.bad_cells:
            diagnostics.add("bad_number", b.bad_cells, None,
                            f'column "{h}": not a number, e.g. "{b.first_bad[:40]}"')
    columns = []
    for h, (name, _), b in zip(header, names, builders):
        of_kind, unit, values = b.values()
        columns.append(Column(h, name, unit, of_kind, values))
    return Table(kind, path, columns, n_rows, diagnostics, group), builders


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

