"""SQLite files opened strictly read-only (no byte or time stamp of them changes), and their
columns read in bulk as numpy arrays.

SQLite's own read-only mode still writes: on a WAL database it creates or updates the `-shm`
and `-wal` files beside it (the Ascend corpus shows both, left by a reader). So:

- a database whose `-wal` holds no frame and with no `-journal` left by a writer is opened
  ``immutable=1``: no lock, no side file, only the database file is read;
- one whose `-wal` holds frames (committed data not yet in the database file) or with a hot
  `-journal` (a writer stopped mid-transaction) is copied with that file into a private
  temporary directory, where SQLite recovers it (once per version of the files; the copy is
  kept until exit, as discovery, indexing, tables and args all open the database);
- a database that a program is writing (a write lock held on it, or on its `-shm`) is refused
  with one sentence, as are an empty file, a file that is not SQLite and a truncated one.

Columns are read a rowid range at a time as one text per range (``group_concat`` of
``printf``), parsed by numpy: no Python object per row. Integers are read from their decimal
text, exact to the last digit (timestamps stored as TEXT included); a value that is not an
integer sends its range down a slower exact path, and is counted. SQLite's work is most of
a large read: :class:`Prefetch` has a second process read some tables meanwhile.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sqlite3
import struct
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from proftui.core.model.errors import NotATraceError, ProftuiError
from proftui.core.runtime.malloc import release_free_memory
from proftui.core.runtime.records import Record
from proftui.core.runtime.workers import Failed, Worker
from proftui.core.source.streams import file_size

MAGIC = b"SQLite format 3\x00"
NULL = -(2**62)  # a NULL cell of an integer column reads as this
_HEADER = 100
_WAL_HEADER, _WAL_FRAME_HEADER = 32, 24
_PENDING_BYTE = 0x40000000  # SQLite's lock bytes: PENDING, RESERVED, then the SHARED range
_WAL_WRITE_LOCK = 120  # byte of the -shm file a WAL writer locks
_CHUNK_ROWS = 1 << 16  # rows per rowid range read at once (bounds the text held)


class DamagedDatabase(NotATraceError):
    """A database that cannot be read (the message is one sentence)."""


@dataclass
class DbFile:
    """An opened database: its connection, tables and columns, and how it was opened."""

    path: str
    conn: sqlite3.Connection
    how: str  # "immutable" or "private copy (...)"
    tables: dict[str, list[str]] = field(default_factory=dict)  # name -> column names

    def has(self, table: str, *columns: str) -> bool:
        """Whether `table` exists with all of `columns`."""
        have = self.tables.get(table)
        return have is not None and all(c in have for c in columns)

    def count(self, table: str) -> int:
        return int(self.scalar(f'SELECT count(*) FROM "{table}"') or 0)

    def scalar(self, sql: str, params: Sequence = ()) -> object:
        row = self.fetch(sql, params)
        return row[0][0] if row else None

    def fetch(self, sql: str, params: Sequence = ()) -> list[tuple]:
        """All rows of a small query (enums, metadata)."""
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise _damaged(self.path, exc) from None


def sidecars(path: str) -> list[str]:
    """The files SQLite keeps beside a database that hold some of its content (-wal,
    -journal) and exist now: part of what identifies a version of it."""
    return [p for p in (path + "-wal", path + "-journal") if os.path.exists(p)]


@contextlib.contextmanager
def open_db(path: str) -> Iterator[DbFile]:
    """Open `path` read-only without changing any file (see the module docstring).

    Raises :class:`DamagedDatabase` (a :class:`ProftuiError`) with one sentence when it
    cannot be read.
    """
    name = os.path.basename(path)
    page_size = _check_header(path, name)
    wal_frames = _wal_has_frames(path + "-wal", page_size)
    hot_journal = file_size(path + "-journal") > 0
    if _write_locked(path, wal_frames):
        raise DamagedDatabase(f"{name} is locked by a program writing to it: open it again "
                              "when that program has finished.")
    with contextlib.ExitStack() as stack:
        if wal_frames or hot_journal:
            target = _private_copy(path, path + ("-wal" if wal_frames else "-journal"))
            uri, how = f"file:{_quote(target)}?mode=ro&immutable=1", (
                "private copy (its write-ahead log holds data)" if wal_frames
                else "private copy (a writer left a journal)")
        else:
            uri, how = f"file:{_quote(path)}?mode=ro&immutable=1", "immutable"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            raise _damaged(path, exc) from None
        stack.callback(conn.close)
        db = DbFile(path, conn, how)
        try:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            for (table,) in rows:
                info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
                db.tables[table] = [r[1] for r in info]
        except sqlite3.DatabaseError as exc:
            raise _damaged(path, exc) from None
        yield db


# Private copies of databases whose -wal or -journal holds data, by the versions of both
# files: made once (discovery, indexing, tables and args all open the database), removed at
# exit; the oldest go when more are held.
_COPIES: dict[tuple, tempfile.TemporaryDirectory] = {}
_COPIES_HELD = 4


def _private_copy(path: str, side: str) -> str:
    """A consolidated copy of the database and its -wal or -journal: SQLite recovers it there
    (commits the log's frames, rolls a hot journal back), in a directory of our own."""
    name = os.path.basename(path)
    try:
        key = tuple((os.stat(p).st_size, os.stat(p).st_mtime_ns, os.stat(p).st_ino, p)
                    for p in (os.path.realpath(path), side))
    except OSError as exc:
        raise DamagedDatabase(f"{name} cannot be read ({exc.strerror or exc}).") from None
    held = _COPIES.get(key)
    if held is not None and os.path.exists(os.path.join(held.name, "copy.db")):
        return os.path.join(held.name, "copy.db")
    private = tempfile.TemporaryDirectory(prefix="proftui-db-")
    target = os.path.join(private.name, "copy.db")
    try:
        shutil.copyfile(path, target)
        shutil.copyfile(side, target + side[len(path):])
        conn = sqlite3.connect(target)
        try:
            conn.execute("PRAGMA journal_mode=DELETE")  # the log into the copy, then gone
        finally:
            conn.close()
    except OSError as exc:
        private.cleanup()
        raise DamagedDatabase(f"{name}: its {side[len(path) + 1:]} file could not be copied "
                              f"to be read ({exc.strerror or exc}).") from None
    except sqlite3.Error as exc:
        private.cleanup()
        raise _damaged(path, exc) from None
    _COPIES[key] = private
    while len(_COPIES) > _COPIES_HELD:
        _COPIES.pop(next(iter(_COPIES))).cleanup()
    return target


def _quote(path: str) -> str:
    """A path as the file: URI wants it (? and # would start the query or fragment)."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def _damaged(path: str, exc: BaseException) -> DamagedDatabase:
    name = os.path.basename(path)
    text = str(exc).rstrip(".")
    if "locked" in text or "busy" in text:
        return DamagedDatabase(f"{name} is locked by a program writing to it: open it again "
                               "when that program has finished.")
    return DamagedDatabase(f"{name} is a damaged SQLite database ({text}).")


def _check_header(path: str, name: str) -> int:
    """The page size; raises when the file is empty, not SQLite or shorter than it says."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEADER)
            size = os.fstat(f.fileno()).st_size
    except FileNotFoundError:
        raise ProftuiError(f"{path}: no such file.") from None
    except OSError as exc:
        raise DamagedDatabase(f"{name} cannot be read ({exc.strerror or exc}).") from None
    if not head:
        raise DamagedDatabase(f"{name} is empty (0 bytes), not a SQLite database.")
    if not head.startswith(MAGIC):
        raise DamagedDatabase(f"{name} is not a SQLite database (it does not start with "
                              "the SQLite header).")
    if len(head) < _HEADER:
        raise DamagedDatabase(f"{name} is truncated ({size} bytes, shorter than the SQLite "
                              "header).")
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    change, pages, valid_for = struct.unpack(">I", head[24:28])[0], struct.unpack(
        ">I", head[28:32])[0], struct.unpack(">I", head[92:96])[0]
    if pages and change == valid_for and size < pages * page_size:
        raise DamagedDatabase(f"{name} is truncated ({size:,} of the {pages * page_size:,} "
                              "bytes its header announces).")
    return page_size


def _wal_has_frames(wal: str, page_size: int) -> bool:
    """Whether a write-ahead log holds at least one frame (data the database file lacks)."""
    return file_size(wal) >= _WAL_HEADER + _WAL_FRAME_HEADER + page_size


_FLOCK = "hhqqi4x"  # struct flock on Linux (l_type, l_whence, l_start, l_len, l_pid)


def _write_locked(path: str, wal_frames: bool) -> bool:
    """Whether another program holds a write lock on the database (a rollback-mode writer:
    RESERVED or PENDING) or on its -shm (a WAL writer, only of concern when the log holds
    data, which is then read through a copy: refused all the same, as it may be mid-commit
    of many frames)."""
    checks = [(path, _PENDING_BYTE, 2)]
    if wal_frames and os.path.exists(path + "-shm"):
        checks.append((path + "-shm", _WAL_WRITE_LOCK, 1))
    for file, start, length in checks:
        try:
            fd = os.open(file, os.O_RDONLY)
        except OSError:
            continue
        try:
            if _lock_held(fd, start, length):
                return True
        finally:
            os.close(fd)
    return False


def _lock_held(fd: int, start: int, length: int) -> bool:
    """Whether a write lock (held by anyone, this process included where the system can
    tell) covers bytes [start, start + length). Asking changes nothing."""
    query = struct.pack(_FLOCK, fcntl.F_RDLCK, os.SEEK_SET, start, length, 0)
    for command in (getattr(fcntl, "F_OFD_GETLK", None), fcntl.F_GETLK):
        if command is None:
            continue
        try:
            answer = fcntl.fcntl(fd, command, query)
        except (OSError, ValueError):
            continue
        return struct.unpack(_FLOCK, answer)[0] != fcntl.F_UNLCK
    return False


# -- bulk columns -------------------------------------------------------------------------------


@dataclass
class Columns:
    """Integer columns of one table in scan (rowid) order; `rowid_first` is the first rowid
    when the rowids run without gaps (else None); `inexact` counts cells that were not
    integers (read by the exact slow path: decimals rounded, text that is no number NULL)."""

    values: dict[str, np.ndarray]
    n_rows: int
    rowid_first: int | None
    inexact: int = 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[name]


def read_ints(db: DbFile, table: str, columns: Sequence[str]) -> Columns:
    """Integer columns of `table` (NULL as :data:`NULL`), exact, in rowid order."""
    exprs = ", ".join(f'ifnull("{c}", {NULL})' for c in columns)
    fmt = ",".join(["%s"] * len(columns))
    plain = ", ".join(f'"{c}"' for c in columns)
    try:
        lo, hi, n_rows = db.conn.execute(
            f'SELECT min(rowid), max(rowid), count(*) FROM "{table}"').fetchone()
        ranges: list[str] = [f" WHERE rowid BETWEEN {a} AND {min(a + _CHUNK_ROWS - 1, hi)}"
                             for a in range(lo, hi + 1, _CHUNK_ROWS)] if n_rows else []
    except sqlite3.OperationalError:  # a table without rowids: one range
        lo = hi = None
        n_rows = 0
        ranges = [""]
    except sqlite3.DatabaseError as exc:
        raise _damaged(db.path, exc) from None
    # Filled a range at a time: the columns and one range's text are all that is held.
    out = np.empty((len(columns), n_rows), np.int64)
    filled = 0
    inexact = 0
    for where in ranges:
        try:
            n, text = db.conn.execute(
                f"SELECT count(*), group_concat(printf('{fmt}', {exprs})) FROM \"{table}\""
                + where).fetchone()
        except sqlite3.DatabaseError as exc:
            raise _damaged(db.path, exc) from None
        if not n:
            continue
        block = _parse(text, n * len(columns))
        del text
        if block is None:
            block, bad = _exact_rows(db, f'SELECT {plain} FROM "{table}"{where}')
            inexact += bad
        if filled + n > out.shape[1]:  # rows added since they were counted, or no rowids
            out = np.concatenate([out, np.empty((len(columns), filled + n - out.shape[1]),
                                                np.int64)], axis=1)
        out[:, filled:filled + n] = block.reshape(n, len(columns)).T
        filled += n
    out = out[:, :filled]
    release_free_memory()  # SQLite's and the texts' buffers, freed to the heap, go back
    first = (int(lo) if lo is not None and filled and int(hi) - int(lo) + 1 == filled
             else None)
    return Columns({c: out[k] for k, c in enumerate(columns)}, filled, first, inexact)


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse(text: str | None, expected: int) -> np.ndarray | None:
    """Comma-separated decimal integers as int64; None unless every one of the `expected`
    is a plain integer inside int64 (then the exact slow path decides)."""
    if text is None:
        return None
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        return None
    if raw.translate(None, b"0123456789,-"):  # a decimal point, a letter, a space ...
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy warns (or raises) at text it cannot read
        try:
            values = np.fromstring(raw, dtype=np.int64, sep=",")
        except (ValueError, DeprecationWarning):
            return None
    if len(values) != expected:
        return None
    if len(values) and (values.max() == _INT64_MAX or values.min() == _INT64_MIN):
        return None  # saturated: a number beyond int64 (or at its very edge) read exactly
    return values


def _exact_rows(db: DbFile, sql: str) -> tuple[np.ndarray, int]:
    """The slow path: rows fetched as Python values and made integers exactly (decimal text
    read by int(), never through a float); returns the values and how many cells were not
    integers (rounded, or NULL when not numbers at all)."""
    try:
        rows = db.conn.execute(sql).fetchall()
    except sqlite3.DatabaseError as exc:
        raise _damaged(db.path, exc) from None
    cells = [v for row in rows for v in row]
    out = np.empty(len(cells), np.int64)
    bad = 0
    for i, value in enumerate(cells):
        number = exact_int(value)
        if value is not None and (number is None or not _is_integer(value)):
            bad += 1
        out[i] = NULL if number is None else number
    return out, bad


def _is_integer(value: object) -> bool:
    if isinstance(value, int):
        return True
    if isinstance(value, str):
        text = value.strip()
        return text.lstrip("+-").isdigit() and text.isascii()
    return False


def exact_int(value: object) -> int | None:
    """An integer cell as int: integers as they are, integer text by int() (exact beyond
    2**53), a decimal (text or REAL) rounded half away from zero; None otherwise."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else None
    if isinstance(value, str):
        text = value.strip()
        try:
            number = int(text)
        except ValueError:
            from decimal import Decimal, InvalidOperation

            try:
                dec = Decimal(text)
            except InvalidOperation:
                return None
            if not dec.is_finite():
                return None
            number = int(dec.to_integral_value(rounding="ROUND_HALF_UP"))
        return number if -(2**63) <= number < 2**63 else None
    if isinstance(value, float) and value == value and abs(value) < 2.0**63:
        return int(round(value))
    return None


def read_floats(db: DbFile, table: str, columns: Sequence[str]) -> dict[str, np.ndarray]:
    """Numeric columns of a small table (counters) as float64 (NULL and text as NaN)."""
    quoted = ", ".join(f'"{c}"' for c in columns)
    sql = f'SELECT {quoted} FROM "{table}"'
    rows = db.fetch(sql)
    out = {}
    for k, column in enumerate(columns):
        out[column] = np.array([_float(r[k]) for r in rows], np.float64)
    return out


def _float(value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            return float("nan")
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return float("nan")
    return float("nan")


@dataclass
class PrefetchedColumns(Record):
    """What the worker of :class:`Prefetch` read: table -> its Columns. Bump VERSION whenever
    a field (or Columns') changes."""

    VERSION: ClassVar[int] = 1

    tables: dict[str, Columns]
    version: int = VERSION


@dataclass(frozen=True)
class PrefetchJob:
    """The tables (and their integer columns) to read from the database at `path`."""

    path: str
    wanted: dict[str, list[str]]


class Prefetch:
    """Integer columns of some tables, read by a second process while this one reads others.

    For a database read in place only (a private copy is this process's). Whatever goes
    wrong there, :meth:`get` answers None and the caller reads the table itself.
    """

    def __init__(self, db: DbFile, wanted: dict[str, list[str]]) -> None:
        self.wanted = wanted
        self.got: dict[str, Columns] | None = None
        self.worker = Worker("proftui.core.source.dbfile:prefetch_columns",
                             [PrefetchJob(db.path, wanted)])

    def get(self, table: str, columns: Sequence[str]) -> Columns | None:
        """The table's columns as the worker read them, None if it did not (or differently)."""
        if self.wanted.get(table) != list(columns):
            return None
        if self.got is None:
            got = self.worker.result(PrefetchedColumns)
            self.got = {} if isinstance(got, Failed) else got.tables
        return self.got.get(table)

    def close(self) -> None:
        self.worker.stop()


def prefetch_columns(job: PrefetchJob) -> PrefetchedColumns:
    """The worker function of :class:`Prefetch`: the wanted columns of a database that can be
    read in place (none of one that cannot: the parent reads it then)."""
    with open_db(job.path) as db:
        if db.how != "immutable":
            return PrefetchedColumns({})
        return PrefetchedColumns({table: read_ints(db, table, columns)
                                  for table, columns in job.wanted.items()})
