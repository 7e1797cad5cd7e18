"""A CSV file read a block of whole rows at a time, its cells found by numpy; what
:mod:`proftui.core.importers.csv.summary` reads with, `csv.reader` standing in wherever a
block is not plain.

Why: a bare `csv.reader` pass makes a Python string of every cell, and a float() or a
dictionary look-up of each costs as much again. Here the separators of a block (about
`BLOCK_BYTES` of rows) are found with numpy; the number columns are decoded by msgspec as one
JSON array, the block itself with every other cell blanked out in place (single digits and
N/A are set without decoding); µs timestamps are read exactly from their bytes; the text
columns are cut out as one string of bytes per row, so that a row whose texts were seen
before costs one dictionary look-up (see csv_columns.TextRows). No string is made of a
number cell. bench/bench_tables.py measures it against a bare `csv.reader` pass.

A block is plain when its quotes pair around whole cells (a cell starting with a quote ends
with one; doubled quotes inside), as they do in what profilers write. Then csv.reader reads
it the same way, its quotes toggle, and numpy can tell the separators inside quotes. Where a
block is not plain the cells are csv.reader's:

- a row of another width, a blank row, a line break or a lone CR inside quotes: csv.reader
  reads that block (its cut between rows is right, the quotes having paired);
- a quote csv.reader reads otherwise (one inside a cell, text after a closing quote), a NUL
  byte, or a row longer than `_LONGEST_ROW`: csv.reader reads the rest of the file, as it
  read all of it before, so that its errors and line numbers are the same.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import re
from collections.abc import Iterator
from typing import BinaryIO

import msgspec
import numpy as np

from proftui.core.model.table import MISSING
from proftui.core.model.timeconv import parse_decimal_us, us_to_ns

BLOCK_BYTES = 1 << 19  # rows in flight: small enough to stay in the CPU's caches
_LONGEST_ROW = 16 << 20  # longer is damage (csv's field limit): csv.reader says where
_COMMA, _LF, _QUOTE, _SPACE, _ZERO = 44, 10, 34, 32, 48
_DECODED, _TEXT, _BLANKED = 0, 1, 2  # what Block.numbers does with a cell
_N, _SLASH, _A = b"N/A"
_NUMBERS = msgspec.json.Decoder(list[float])
_MINUS_ZERO = re.compile(rb"-0(?![.eE])")  # an integer -0: JSON reads it as 0, without sign
_BLANK = np.zeros(256, bool)  # what str.strip takes around a plain µs cell (or part of it)
_BLANK[[_SPACE, ord("\t")]] = True
# Bytes that make a row's first cell (hence the row) not blank; a row starting with any
# other byte (blank, quote, comma, non-ASCII) may be blank: csv.reader sees to that block.
_NOT_BLANK = np.zeros(256, bool)
_NOT_BLANK[0x21:0x7F] = True
_NOT_BLANK[[_QUOTE, _COMMA]] = False


class Block:
    """Whole rows of a CSV, all of the header's width, as bytes (CRLF as LF, ending with LF)
    and the position of each cell's separator."""

    def __init__(self, raw: bytes, ends: np.ndarray, quotes: np.ndarray) -> None:
        self.raw = raw
        self.data = np.frombuffer(raw, np.uint8)
        self.ends = ends  # (rows, width): the comma or line feed after each cell
        self.quotes = quotes
        self.n_rows, self.width = ends.shape
        sizes = np.empty(ends.shape, np.int64)  # each cell's bytes and its separator
        sizes.flat[0] = ends.flat[0] + 1
        sizes.ravel()[1:] = np.diff(ends.ravel())
        self.sizes = sizes
        self._text_bytes: tuple[list[int] | None, np.ndarray | None] = (None, None)

    def numbers(self, columns: list[int], text: list[int] | None = None
                ) -> np.ndarray | None:
        """The cells of `columns` (ascending) as a (rows, columns) float64 matrix, NaN for
        N/A and empty cells; None when one is not a JSON number (blanks around it allowed),
        N/A or empty, or is an integer -0 (JSON reads it without its sign): the caller reads
        them otherwise. Exactly float()'s values: msgspec rounds correctly, as
        csv_columns.plain_numbers does.

        The cells are decoded as one JSON array: the block with every other cell, and each
        N/A or empty one, blanked out with its separator, and quotes blanked. Which bytes
        are those of the `text` columns is found on the way, for :meth:`rows`."""
        wanted = np.zeros(self.width, bool)
        wanted[columns] = True
        shape = (self.n_rows, len(columns))
        sizes, ends = self.sizes[:, wanted].ravel(), self.ends[:, wanted].ravel()  # by rows
        b = self.data
        # Single digits ("0" is common) and N/A are set here, not decoded; empty cells (their
        # separator alone) are NaN.
        last = b[ends - 1]
        digit = (sizes == 2) & (last - _ZERO < 10)
        out = np.where(digit, last - np.float64(_ZERO), np.nan)
        number = (sizes != 1) & ~digit
        maybe_na = np.flatnonzero((sizes == 4) & (last == _A))
        at = ends[maybe_na]
        number[maybe_na[(b[at - 2] == _SLASH) & (b[at - 3] == _N)]] = False
        kept = int(np.count_nonzero(number))
        if not kept:
            return np.asfortranarray(out.reshape(shape))
        kind = np.full(self.ends.shape, _BLANKED, np.uint8)  # of each cell
        kind[:, wanted] = np.where(number, _DECODED, _BLANKED).reshape(shape)
        if text:
            kind[:, text] = _TEXT
        kinds = np.repeat(kind.ravel(), self.sizes.ravel())  # of each byte
        if text:
            self._text_bytes = (text, kinds == _TEXT)
        chars = b.copy()
        chars[self.quotes] = _SPACE
        np.putmask(chars, kinds != _DECODED, _SPACE)
        seps = ends[number]
        chars[seps] = _COMMA
        chars[seps[-1]] = _SPACE  # no comma after the last
        joined = b"[" + chars.tobytes() + b"]"
        if b"-" in joined and _MINUS_ZERO.search(joined):
            return None
        try:
            values = _NUMBERS.decode(joined)
        except msgspec.DecodeError:
            return None
        if len(values) != kept:  # a comma inside a quoted cell
            return None
        out[number] = np.fromiter(values, np.float64, kept)
        return np.asfortranarray(out.reshape(shape))  # each column contiguous

    def _joined(self, columns: list[int], row_end: int) -> str:
        """The cells of `columns` as read (quoted ones with their quotes), each followed by
        NUL, the last of a row by `row_end`."""
        sizes = self.sizes[:, columns].ravel()
        ends = np.cumsum(sizes)
        where = np.repeat(self.ends[:, columns].ravel() + 1 - ends, sizes)
        where += np.arange(len(where))
        text = self.data[where]
        text[ends - 1] = 0
        if row_end:
            text[ends[len(columns) - 1::len(columns)] - 1] = row_end
        return text.tobytes().decode("utf-8", "replace")

    def cells(self, columns: list[int]) -> list[list[str]]:
        """Each of `columns` as the strings csv.reader reads."""
        joined = self._joined(columns, 0)
        if '""' not in joined:  # each quote is one of a pair around a cell
            joined = joined.replace('"', "")
        flat = joined.split("\0")
        flat.pop()
        if '"' in joined:
            flat = [unquote(c) for c in flat]
        return [flat[k::len(columns)] for k in range(len(columns))]

    def rows(self, columns: list[int]) -> list[bytes]:
        """A key for each row's cells of `columns`: their bytes as read, separators between
        them; :meth:`row_cells` gives the strings csv.reader reads in one."""
        if self._text_bytes[0] == columns:
            of_columns = self._text_bytes[1]
        else:
            flags = np.zeros(self.width, bool)
            flags[columns] = True
            of_columns = np.repeat(np.tile(flags, self.n_rows), self.sizes.ravel())
        text = self.data.copy()
        text[self.ends[:, columns[-1]]] = _LF
        rows = text[of_columns].tobytes()
        keys = rows.split(b"\n")
        keys.pop()
        return keys

    @staticmethod
    def row_cells(key: bytes) -> list[str]:
        """The cells csv.reader reads in a key of :meth:`rows`."""
        return next(csv.reader([key.decode("utf-8", "replace")]), None) or [""]

    def us_ns(self, column: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact int64 ns of a column of µs (and which are usable), as
        :func:`~proftui.core.model.timeconv.us_to_ns` gives them for its stripped strings (N/A and
        empty cells unusable), read from the bytes where they are plain decimals."""
        b = self.data
        end = self.ends[:, column]
        start = end - self.sizes[:, column] + 1
        quoted = b[start] == _QUOTE  # then it ends with one too: the block is plain
        start += quoted
        end -= quoted
        for _ in range(2):  # a TAB or spaces (msprof ends stamps with a TAB)
            start += (start < end) & _BLANK[b[start]]
            end -= (end > start) & _BLANK[b[end - 1]]
        lengths = end - start
        width = int(lengths.max()) if len(lengths) else 0
        offsets = np.arange(width)
        chars = b[np.minimum(start[:, None] + offsets, len(b) - 1)]
        chars[offsets >= lengths[:, None]] = 0
        ns, ok = parse_decimal_us(chars, lengths)
        if not ok.all():  # anything else (N/A, signs, exponents): as us_to_ns reads it
            odd = np.flatnonzero(~ok)
            cells = self.cells([column])[0]
            texts = [cells[i].strip() for i in odd.tolist()]
            ns[odd], ok[odd] = us_to_ns([t if t not in MISSING else None for t in texts])
        return ns, ok


def unquote(cell: str) -> str:
    """A cell of a plain block as csv.reader reads it (a quote in it is one of a pair around
    all of it, or doubled)."""
    return cell[1:-1].replace('""', '"') if cell[:1] == '"' else cell


class Pieces:
    """The header of a CSV file, then its rows: :class:`Block` s where they are plain, else
    lists of csv.reader's rows (up to `chunk_rows` at a time). `line_num` is the line
    csv.reader is at, for its errors."""

    def __init__(self, f: BinaryIO, chunk_rows: int, block_bytes: int = BLOCK_BYTES) -> None:
        self.f = f
        self.chunk_rows = chunk_rows
        self.block_bytes = max(1, block_bytes)
        self.pending = b""
        self.at_start = True  # nothing handed out yet (a byte-order mark may lead)
        self.eof = False
        self.lines = 0  # lines read before csv.reader's
        self.reader: Iterator[list[str]] | None = None
        self.width = 0
        self.header = self._header()

    @property
    def line_num(self) -> int:
        return self.lines + (self.reader.line_num if self.reader is not None else 0)

    def _header(self) -> list[str]:
        data = self._read_rows()
        if not data:  # None: no line end where there should be one
            return self._to_csv(data or b"")
        bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
        line = data[:data.index(b"\n") + 1]
        if (_analyse(data[len(bom):], 0) is False or line.count(b'"') % 2
                or b"\r" in line[:-1].rstrip(b"\r")):  # a line break inside, to csv.reader
            return self._to_csv(data)
        self.at_start = False
        text = line[len(bom):].decode("utf-8", "replace")
        header = next(csv.reader(io.StringIO(text, newline="")), [])
        self.lines = 1
        self.pending = data[len(line):] + self.pending
        self.width = len(header)
        return header

    def __iter__(self) -> Iterator[Block | list[list[str]]]:
        while self.reader is None:
            data = self._read_rows()
            if data is None:
                self._to_csv()
                break
            if not data:
                return
            block = _analyse(data, self.width)
            if block is False:
                self._to_csv(data)
                break
            if block is True:  # csv.reader reads this block
                self.reader = csv.reader(io.StringIO(data.decode("utf-8", "replace"),
                                                     newline=""))
                rows = list(self.reader)
                self.lines += self.reader.line_num
                self.reader = None
                yield rows
            else:
                self.lines += block.n_rows
                yield block
        while self.reader is not None:
            chunk: list[list[str]] = []
            try:
                chunk.extend(itertools.islice(self.reader, self.chunk_rows))
            except csv.Error:  # every row before it is kept
                if chunk:
                    yield chunk
                raise
            if not chunk:
                return
            yield chunk

    def _read_rows(self) -> bytes | None:
        """The next whole rows (cut after a line feed outside quotes), b"" at the end of the
        file, None when no row ends within `_LONGEST_ROW` bytes."""
        data = self.pending
        size = self.block_bytes
        while True:
            if not self.eof:
                more = self.f.read(max(size - len(data), 1))
                self.eof = not more
                data += more
            cut = data.rfind(b"\n") + 1
            odd = data.count(b'"', 0, cut) % 2
            while cut and odd:  # that line feed is inside quotes: the one before?
                before = data.rfind(b"\n", 0, cut - 1) + 1
                odd ^= data.count(b'"', before, cut) % 2
                cut = before
            if self.eof and data and not data.count(b'"') % 2:
                cut = len(data)  # the last row may lack its line feed
            if cut > _LONGEST_ROW or (not cut and data and (
                    self.eof or len(data) > _LONGEST_ROW)):
                self.pending = data  # a row too long for csv.reader, or quotes left open
                return None
            if cut or not data:
                self.pending = data[cut:]
                rows = data[:cut]
                return rows if rows.endswith(b"\n") or not rows else rows + b"\n"
            size = 2 * max(size, len(data))

    def _to_csv(self, data: bytes = b"") -> list[str]:
        """Hand `data` and the rest of the file to csv.reader; returns its first row when
        nothing was handed out yet (the header)."""
        rest = _Rest(data + self.pending, self.f)
        self.pending = b""
        text = io.TextIOWrapper(io.BufferedReader(rest), newline="", errors="replace",
                                encoding="utf-8-sig" if self.at_start else "utf-8")
        self.reader = csv.reader(text)
        if self.at_start:
            self.at_start = False
            return next(self.reader, [])
        return []


class _Rest(io.RawIOBase):
    """Bytes already read, then the rest of a file."""

    def __init__(self, head: bytes, f: BinaryIO) -> None:
        self.head = memoryview(head)
        self.f = f

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        return self.f.readinto(buffer)


def _analyse(data: bytes, width: int) -> Block | bool:
    """`data` (whole rows) as a :class:`Block`; True when its quotes pair (as csv.reader
    reads them) but it is not plain, False when they do not. A `width` of 0 only checks the
    quotes."""
    if b"\0" in data:
        return False
    crlf = b"\r" in data
    plain = data.replace(b"\r\n", b"\n") if crlf else data
    b = np.frombuffer(plain, np.uint8)
    quotes = np.flatnonzero(b == _QUOTE)
    if len(quotes) % 2:
        return False
    seps = np.flatnonzero((b == _COMMA) | (b == _LF))
    if len(quotes):
        opening, closing = quotes[0::2], quotes[1::2]
        before = b[opening - 1]
        before[opening == 0] = _LF
        after = b[np.minimum(closing + 1, len(b) - 1)]
        after[closing == len(b) - 1] = _LF
        opens = (before == _COMMA) | (before == _LF)
        opens[1:] |= opening[1:] == closing[:-1] + 1  # a doubled quote
        closes = (after == _COMMA) | (after == _LF)
        closes[:-1] |= closing[:-1] + 1 == opening[1:]
        if not (opens.all() and closes.all()):
            return False
        wide = np.flatnonzero(closing - opening > 1)  # not a doubled quote, nor ""
        opening, closing = opening[wide], closing[wide]
        first = np.searchsorted(seps, opening)  # the first separator after each (a LF ends b)
        holding = np.flatnonzero(seps[first] < closing)  # quoted cells with commas or LFs
        if len(holding):
            first = first[holding]
            counts = np.searchsorted(seps, closing[holding]) - first
            inside = (np.repeat(first - (np.cumsum(counts) - counts), counts)
                      + np.arange(int(counts.sum())))
            if (b[seps[inside]] == _LF).any():
                return True  # a line break inside quotes
            keep = np.ones(len(seps), bool)
            keep[inside] = False
            seps = seps[keep]
    if width == 0:
        return True
    if crlf and plain.count(b"\r"):
        return True  # a lone CR: a line end to csv.reader
    n_rows = len(b) - len(plain.replace(b"\n", b""))
    if len(seps) != n_rows * width or not (b[seps[width - 1::width]] == _LF).all():
        return True  # rows of other widths
    ends = seps.reshape(n_rows, width)
    row_starts = np.empty(n_rows, np.int64)
    row_starts[0] = 0
    row_starts[1:] = ends[:-1, -1] + 1
    if not _NOT_BLANK[b[row_starts]].all():
        return True  # maybe a blank row
    return Block(plain, ends, quotes)

