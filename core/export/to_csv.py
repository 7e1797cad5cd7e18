"""CSV export: the events of a window, or any table, written safely for spreadsheets.

CSV as RFC 4180 says: fields with a comma, a double quote, CR or LF are quoted (quotes
doubled), lines end in CRLF, UTF-8 (a byte-order mark only when asked, for Excel), one header
row. Text cells that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``,
``@``, TAB or CR, as OWASP lists them) get a leading ``'`` unless `neutralize` is False; cells
of numeric columns are numbers and are never touched, nor is text that is a plain number.

Times are exact: int64 ns turned into decimal text digit by digit (``12.345`` µs is exactly
12345 ns), never through a float. Rows are made column by column with numpy, a chunk of rows
at a time: text columns are looked up per distinct string (quoted and neutralised once), so
there is no Python object per event except for `args` columns, which are read from the trace
file one decoded batch at a time.

A file target is written to a temporary file beside it and renamed into place, so a failed
export never leaves a partial file; an existing file is kept unless `overwrite` is True.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import IO, Any

import numpy as np
import orjson

from proftui.core.discover.clock import file_offsets
from proftui.core.model.errors import ExportError, ExportExists, ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.model.strings import json_text
from proftui.core.model.table import Table
from proftui.core.ops.aggregate import GroupWindows, group_bounds
from proftui.core.ops.iterations import capture_start_ns
from proftui.core.query.args import read_args
from proftui.core.query.search import pattern_of

UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_DIGITS = {"ns": 0, "us": 3, "ms": 6, "s": 9}
# The clocks an events export can write its starts and ends on, as their headers name them.
CLOCKS = {"relative": "from_capture", "absolute": "profiler_clock"}
CHUNK_ROWS = 1 << 16  # rows formatted and written at a time (bounds memory)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_NEEDS_QUOTES = re.compile(r'[,"\r\n]')
_THREE = [f"{k:03d}" for k in range(1000)]
_DOT_THREE = ["." + t for t in _THREE]
_MISSING_TS = np.iinfo(np.int64).min
_HEADER_UNIT = re.compile(r"\(([^()]*)\)\s*$")  # "Task Start Time(us)" -> us
Progress = Callable[[int, int], None]  # (rows written, rows in all)


@dataclass
class ExportResult:
    """What an export wrote: how many data rows (the header not counted) and where ("-" for
    stdout or a stream)."""

    rows: int
    path: str
    # args keys asked for that no event written holds (their columns are empty), and the
    # keys those events do hold, for saying so
    keys_absent: list[str] = field(default_factory=list)
    keys_held: list[str] = field(default_factory=list)


# -- cell text ----------------------------------------------------------------------------------


def neutralized(text: str) -> str:
    """`text` with a leading ``'`` when a spreadsheet would read it as a formula (it starts with
    =, +, -, @, TAB or CR and is not a plain number)."""
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(text):
        return "'" + text
    return text


def quoted(text: str) -> str:
    """`text` as one RFC 4180 field: in double quotes (quotes doubled) when it holds a comma,
    a quote, CR or LF."""
    if _NEEDS_QUOTES.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text


def text_cell(text: str, neutralize: bool = True) -> str:
    """A text value as a field, neutralised (when asked) and quoted."""
    return quoted(neutralized(text) if neutralize else text)


def decimal_text(ns: np.ndarray, unit: str = "ns") -> list[str]:
    """Exact decimal text of int64 nanoseconds in `unit` (ns, us, ms or s), with all the
    fraction digits of the unit: 12345 ns is "12.345" us, "0.012345" ms."""
    if unit not in UNITS:
        raise ProftuiError(f'Unknown time unit "{unit}": use ns, us, ms or s.')
    values = np.asarray(ns, np.int64)
    negative = values < 0
    magnitude = np.abs(values)
    if unit == "ns":
        texts = list(map(str, magnitude.tolist()))
    else:
        whole, frac = np.divmod(magnitude, np.int64(UNITS[unit]))
        texts = list(map(str, whole.tolist()))
        groups = _DIGITS[unit] // 3
        for g in range(groups):
            digits = (frac // 10 ** (3 * (groups - 1 - g))) % 1000
            table = np.array(_DOT_THREE if g == 0 else _THREE, dtype=object)
            texts = list(map(str.__add__, texts, table[digits].tolist()))
    for i in np.flatnonzero(negative).tolist():
        texts[i] = "-" + texts[i]
    return texts


def number_text(values: np.ndarray) -> list[str]:
    """Numbers as plain machine-readable text: integers without a fraction or separators,
    other values by their shortest round-trip repr; NaN as an empty cell."""
    values = np.asarray(values, np.float64)
    integral = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**53)
    out = np.empty(len(values), dtype=object)
    out[integral] = list(map(str, values[integral].astype(np.int64).tolist()))
    rest = np.flatnonzero(~integral)
    out[rest] = ["" if v != v else "inf" if v == np.inf else "-inf" if v == -np.inf
                 else repr(v) for v in values[rest].tolist()]
    return out.tolist()


def _ns_number_text(values: np.ndarray, unit: str) -> list[str]:
    """ns values (float64, NaN missing) as exact decimals in `unit`."""
    values = np.asarray(values, np.float64)
    integral = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**62)
    out = np.empty(len(values), dtype=object)
    out[integral] = decimal_text(values[integral].astype(np.int64), unit)
    rest = np.flatnonzero(~integral)
    shift = -_DIGITS[unit]
    out[rest] = ["" if v != v else ("inf" if v > 0 else "-inf") if v in (np.inf, -np.inf)
                 else format(Decimal(repr(v)).scaleb(shift).normalize(), "f")
                 for v in values[rest].tolist()]
    return out.tolist()


def _json_cell(value: Any, neutralize: bool) -> str:
    """One `args` value as a field: text as it is, numbers and booleans as JSON, objects and
    arrays as compact JSON text, absent or null as an empty cell."""
    if isinstance(value, str):
        return text_cell(value, neutralize)
    if value is None:
        return ""
    if isinstance(value, (bool, int, float)):
        return json_text(value)
    try:
        text = orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):  # ints beyond 64 bits
        text = json_text(value)
    return quoted(text)


# -- which events -------------------------------------------------------------------------------


def select_tracks(index: TraceIndex, pattern: str) -> np.ndarray:
    """Ids of the tracks whose "process / track" label contains `pattern` (ignoring case), or
    matches it as a regular expression when written ``/regex/``; empty when none does."""
    regex = pattern_of(pattern)
    return np.array([t for t in range(index.n_tracks)
                     if regex.search(track_title(index, t)) is not None], np.int64)


def track_title(index: TraceIndex, t: int) -> str:
    """A track's "process / track" label (the track's alone when it has no process)."""
    p = int(index.col("tracks.process")[t])
    label = index.track_label(t)
    return f"{index.process_label(p)} / {label}" if p >= 0 else label


def window_events(index: TraceIndex, start_ns: int | None, end_ns: int | None,
                   tracks: Sequence[int] | np.ndarray | None, instants: bool,
                   groups: GroupWindows | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(slice indices, instant indices) in the window on the tracks; a None bound is open.
    With `groups`, each group named there in its own window (the others left out)."""
    keep = None
    if tracks is not None:
        keep = np.zeros(index.n_tracks, bool)
        keep[np.asarray(tracks, np.int64)] = True
    lo = np.int64(np.iinfo(np.int64).min if start_ns is None else start_ns)
    hi = np.int64(np.iinfo(np.int64).max if end_ns is None else end_ns)
    if hi < lo:
        raise ProftuiError(f"The window ends ({hi} ns) before it starts ({lo} ns).")
    track_lo = track_hi = None
    if groups is not None:
        track_lo, track_hi, mine = group_bounds(index, groups)
        keep = mine if keep is None else keep & mine
    start, dur = index.col("slices.start"), index.col("slices.dur")
    track = index.col("slices.track")
    if track_lo is not None:
        lo, hi = track_lo[track], track_hi[track]
    # As core.query.slices_in_window: overlapping [lo, hi), a zero-length slice inside it.
    mask = (start < hi) & ((start + dur > lo) | ((start >= lo) & (dur == 0)))
    if keep is not None:
        mask &= keep[track]
    slices = np.flatnonzero(mask)
    if not instants:
        return slices, np.zeros(0, np.int64)
    ts = index.col("instants.ts")
    if track_lo is not None:
        at = index.col("instants.track")
        imask = (ts >= track_lo[at]) & (ts < track_hi[at])
    else:
        imask = (ts >= lo) & (ts < hi) if end_ns is not None else ts >= lo
    if keep is not None:
        imask &= keep[index.col("instants.track")]
    return slices, np.flatnonzero(imask)


# -- exports ------------------------------------------------------------------------------------


def export_events(index: TraceIndex, target: Any, *, start_ns: int | None = None,
                  end_ns: int | None = None, tracks: Sequence[int] | np.ndarray | None = None,
                  args_keys: Sequence[str] = (), unit: str = "us", neutralize: bool = True,
                  overwrite: bool = False, instants: bool = True, bom: bool = False,
                  progress: Progress | None = None,
                  groups: GroupWindows | None = None, clock: str = "relative",
                  shapes: bool = False) -> ExportResult:
    """Write the events overlapping [start_ns, end_ns) (absolute ns; None leaves that side
    open) on `tracks` (track ids; None for all) as CSV to `target` (a path, "-" for stdout,
    or a writable text stream).

    One row per slice, and per instant event unless `instants` is False, ordered by start,
    then track, then depth. Columns: name, category, process, thread (the track's label),
    start, end and duration in `unit`, exact decimals of the ns; start and end on `clock`:
    "relative", from the capture start (:func:`~proftui.core.ops.iterations.capture_start_ns`),
    or "absolute", the profiler's own clock as its file writes it (before any offset that
    put several files on one clock), so that rows join with other tools; the headers say
    which and the unit (``start_from_capture(us)``, ``start_profiler_clock(us)``,
    ``duration(us)``), depth (row in the track; empty for instants), kind
    ("slice" or "instant"), then ``args.KEY`` per key of `args_keys` (text as it is, numbers
    and booleans as JSON, objects and arrays as JSON text; empty when absent). With `shapes`,
    ``input_shapes`` and ``input_dtypes``: a device task's from the profiler's row behind it
    (kernel_details, the SQLite export, the Kineto op that launched it), a host op's from its
    own args (``32x9216;9216x4096``, ``-`` for an input that is no tensor; empty when none
    is known); see :func:`shape_cells`.
    With `groups`, each group (rank or device) named there in its own window and the
    others left out. `progress(rows_done, rows_total)` is called after each chunk; an
    exception raised in it (e.g. Cancelled) stops the export and leaves no file.
    """
    if unit not in UNITS:
        raise ProftuiError(f'Unknown time unit "{unit}": use ns, us, ms or s.')
    if clock not in CLOCKS:
        raise ProftuiError(f'Unknown clock "{clock}": use relative or absolute.')
    slices, points = window_events(index, start_ns, end_ns, tracks, instants, groups)
    n_slices = len(slices)
    start = np.concatenate([index.col("slices.start")[slices], index.col("instants.ts")[points]])
    dur = np.concatenate([index.col("slices.dur")[slices], np.zeros(len(points), np.int64)])
    track = np.concatenate([index.col("slices.track")[slices],
                            index.col("instants.track")[points]]).astype(np.int64)
    depth = np.concatenate([index.col("slices.depth")[slices],
                            np.full(len(points), np.iinfo(np.int16).max, np.int16)])
    name = np.concatenate([index.col("slices.name")[slices], index.col("instants.name")[points]])
    cat = np.concatenate([index.col("slices.cat")[slices], index.col("instants.cat")[points]])
    order = np.lexsort((depth, track, start))
    start, dur, track, depth, name, cat = (c[order] for c in (start, dur, track, depth, name, cat))
    is_instant = order >= n_slices
    s = index.strings
    names = _Lookup(name, lambda i: text_cell(s[i], neutralize))
    cats = _Lookup(cat, lambda i: text_cell(s[i], neutralize))
    process = index.col("tracks.process")
    procs = _Lookup(track, lambda t: text_cell(
        index.process_label(int(process[t])) if process[t] >= 0 else "", neutralize))
    threads = _Lookup(track, lambda t: text_cell(index.track_label(t), neutralize))
    args_cells: list[list[str]] = []
    refs = np.concatenate([index.col("slices.ref")[slices].astype(np.int64),
                           index.col("instants.ref")[points].astype(np.int64)])[order]
    held: set[str] = set()
    if args_keys:
        all_args = read_args(index, refs)
        for a in all_args:
            if isinstance(a, dict):
                held.update(a)
        for key in args_keys:
            args_cells.append([_json_cell(a.get(key) if isinstance(a, dict) else None,
                                          neutralize) for a in all_args])
    if shapes:
        shape_cells_ = shape_cells(index, np.where(is_instant, -1, np.concatenate(
            [slices, np.full(len(points), -1)])[order]), refs, neutralize)
        args_cells += shape_cells_
    origin = (file_offsets(index, refs) if clock == "absolute"
              else np.full(len(refs), capture_start_ns(index), np.int64))
    on = CLOCKS[clock]
    header = ["name", "category", "process", "thread", f"start_{on}({unit})",
              f"end_{on}({unit})", f"duration({unit})", "depth", "kind",
              *(f"args.{k}" for k in args_keys),
              *(("input_shapes", "input_dtypes") if shapes else ())]
    kinds = np.array(["slice", "instant"], dtype=object)

    def cells(lo: int, hi: int) -> list[list[str]]:
        begin = start[lo:hi] - origin[lo:hi]
        depth_text = list(map(str, depth[lo:hi].tolist()))
        for i in np.flatnonzero(is_instant[lo:hi]).tolist():
            depth_text[i] = ""
        return [names.cells(lo, hi), cats.cells(lo, hi), procs.cells(lo, hi),
                threads.cells(lo, hi), decimal_text(begin, unit),
                decimal_text(begin + dur[lo:hi], unit), decimal_text(dur[lo:hi], unit),
                depth_text, kinds[is_instant[lo:hi].astype(np.int64)].tolist(),
                *(column[lo:hi] for column in args_cells)]

    header = [text_cell(h, neutralize) for h in header]
    result = _write(target, header, len(order), cells, overwrite=overwrite, bom=bom,
                    progress=progress)
    return replace(result, keys_absent=[k for k in args_keys if k not in held],
                   keys_held=sorted(held))


def _shapes_text(inputs: Sequence) -> str:
    return ";".join("x".join(map(str, s)) if s else "-" for s in inputs)


def shape_cells(index: TraceIndex, slice_rows: np.ndarray, refs: np.ndarray,
                neutralize: bool = True) -> list[list[str]]:
    """The input_shapes and input_dtypes cells of the events `slice_rows` (-1: an instant),
    whose args are `refs`: a device task's from its row (core.perf.instances), another
    slice's from its own Kineto-style args (Input Dims, Input type) where it has them."""
    from proftui.core.perf.instances import op_instances
    from proftui.core.perf.shapes import kineto_list, kineto_shapes

    found = op_instances(index)
    known = {int(s): i for i, s in enumerate(found.slice_rows.tolist()) if s >= 0}
    shapes_col, dtypes_col = [""] * len(slice_rows), [""] * len(slice_rows)
    rest = [k for k, s in enumerate(slice_rows.tolist()) if s >= 0 and s not in known]
    for k, s in enumerate(slice_rows.tolist()):
        if s in known:
            i = known[s]
            shapes_col[k] = _shapes_text(found.inputs[i])
            dtypes_col[k] = ";".join(found.dtypes[i])
    if rest:  # host ops: their own args, read for those only
        for k, args in zip(rest, read_args(index, refs[rest])):
            if isinstance(args, dict) and "Input Dims" in args:
                shapes_col[k] = _shapes_text(kineto_shapes(args["Input Dims"]))
                dtypes_col[k] = ";".join(kineto_list(args.get("Input type")))
    # the shapes are ours, made of integers ("-" for no tensor is not a formula); the dtypes
    # are the file's text
    return [shapes_col, [text_cell(c, neutralize) if c else "" for c in dtypes_col]]


class _Lookup:
    """A column of ids shown through a per-id text, made once per distinct id."""

    def __init__(self, ids: np.ndarray, text: Callable[[int], str]) -> None:
        distinct, self.codes = np.unique(ids, return_inverse=True)
        self.codes = self.codes.reshape(-1)
        self.texts = np.empty(len(distinct), dtype=object)
        self.texts[:] = [text(int(i)) for i in distinct.tolist()]

    def cells(self, lo: int, hi: int) -> list[str]:
        return self.texts[self.codes[lo:hi]].tolist()


def export_table(table: Table, target: Any, *, rows: Sequence[int] | np.ndarray | None = None,
                 columns: Sequence[int] | None = None, neutralize: bool = True,
                 overwrite: bool = False, unit: str | None = None, bom: bool = False,
                 progress: Progress | None = None) -> ExportResult:
    """Write a table (a summary CSV, ops, iterations, instances ...) as CSV to `target`.

    `rows` are row numbers in the order to write (e.g. a view's filtered and sorted order;
    None for all in order) and `columns` column numbers (None for all, hidden ones such as
    the ops table's "name_id" included). Headers are the columns' own, except that with
    `unit` the columns in ns are converted to it (exact decimals) and their headers say so
    ("Total(us)"). Numbers are written plainly (integers without a fraction, no separators,
    NaN empty); times in ns stay integers without `unit`; timestamps are written exactly in
    their header's unit (µs for msprof), else in ns.
    """
    if unit is not None and unit not in UNITS:
        raise ProftuiError(f'Unknown time unit "{unit}": use ns, us, ms or s.')
    from proftui.core.tables.query import factorize

    order = np.arange(table.n_rows) if rows is None else np.asarray(rows, np.int64)
    chosen = [table.columns[c] for c in (range(len(table.columns)) if columns is None
                                         else columns)]
    header: list[str] = []
    makers: list[Callable[[np.ndarray], list[str]]] = []
    for column in chosen:
        head = column.header
        header_unit = (m.group(1) if (m := _HEADER_UNIT.search(head)) else "").strip()
        if column.kind == "text":
            codes, uniques = factorize(column.values)
            texts = np.empty(len(uniques), dtype=object)
            texts[:] = [text_cell(u, neutralize) for u in uniques]
            makers.append(lambda at, codes=codes, texts=texts: texts[codes[at]].tolist())
        elif column.kind == "timestamp":
            ts_unit = header_unit if header_unit in UNITS else "ns"
            makers.append(lambda at, v=column.values, u=ts_unit: _timestamps(v[at], u))
        elif column.unit == "ns":
            to = unit or "ns"
            if unit is not None:  # say which unit the values were converted to
                head = (head[:-len("(ns)")] if head.endswith("(ns)") else head) + f"({to})"
            makers.append(lambda at, v=column.values, to=to: _ns_number_text(v[at], to))
        else:
            makers.append(lambda at, v=column.values: number_text(np.asarray(v)[at]))
        header.append(text_cell(head, neutralize))

    def cells(lo: int, hi: int) -> list[list[str]]:
        at = order[lo:hi]
        return [make(at) for make in makers]

    return _write(target, header, len(order), cells, overwrite=overwrite, bom=bom,
                  progress=progress)


def _timestamps(values: np.ndarray, unit: str) -> list[str]:
    values = np.asarray(values, np.int64)
    missing = values == _MISSING_TS
    texts = decimal_text(np.where(missing, 0, values), unit)
    for i in np.flatnonzero(missing).tolist():
        texts[i] = ""
    return texts


# -- writing ------------------------------------------------------------------------------------


def _write(target: Any, header: list[str], n_rows: int,
           cells: Callable[[int, int], list[list[str]]], *, overwrite: bool, bom: bool,
           progress: Progress | None) -> ExportResult:
    """Write the header and `n_rows` rows, made a chunk at a time by `cells(lo, hi)` (a list
    of columns of field texts), to a path (atomically), "-" (stdout) or a text stream."""
    if target == "-" or hasattr(target, "write"):
        stream = sys.stdout if target == "-" else target
        write_rows(stream, header, n_rows, cells, bom, progress)
        return ExportResult(n_rows, "-")
    path = os.path.abspath(os.fspath(target))
    with _atomic_file(path, overwrite) as stream:
        write_rows(stream, header, n_rows, cells, bom, progress)
    return ExportResult(n_rows, path)


def write_rows(stream: IO[str], header: list[str], n_rows: int,
               cells: Callable[[int, int], list[list[str]]], bom: bool = False,
               progress: Progress | None = None) -> None:
    """The CSV text: fields joined by commas, lines ended by CRLF."""
    # A line of one empty field would read back as no row at all: RFC 4180 quotes it.
    lone = len(header) == 1
    if bom:
        stream.write("\ufeff")
    stream.write(",".join(header) + "\r\n")
    for lo in range(0, n_rows, CHUNK_ROWS):
        hi = min(lo + CHUNK_ROWS, n_rows)
        columns = cells(lo, hi)
        if lone:
            columns = [[x or '""' for x in columns[0]]]
        stream.write("\r\n".join(map(",".join, zip(*columns))))
        stream.write("\r\n")
        if progress is not None:
            progress(hi, n_rows)


@contextmanager
def _atomic_file(path: str, overwrite: bool) -> Iterator[IO[str]]:
    """A text stream onto a temporary file beside `path`, moved to `path` when the block ends
    without an error and removed otherwise."""
    if os.path.isdir(path):
        raise ExportError(f"{path} is a directory; give a file name.")
    if not overwrite and os.path.lexists(path):
        raise ExportExists(f"{path} already exists.")
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise ExportError(f"Cannot write {path}: the folder {folder} does not exist.")
    temp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(4)}.part")
    try:
        # 0o666 less the umask, as for any new file; O_EXCL: never someone else's file.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise ExportError(f"Cannot write in {folder}: {exc.strerror or exc}.") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        _move_into_place(temp, path, overwrite)
    except BaseException as exc:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise ExportError(f"Cannot write {path}: {exc.strerror or exc}.") from None
        raise


def _move_into_place(temp: str, path: str, overwrite: bool) -> None:
    if overwrite:
        if os.path.exists(path):
            os.chmod(temp, os.stat(path).st_mode & 0o7777)
        os.replace(temp, path)
        return
    try:
        os.link(temp, path)  # fails if `path` appeared meanwhile: never clobber it
    except FileExistsError:
        raise ExportExists(f"{path} already exists.") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV,
                             errno.EMLINK):
            raise
        os.replace(temp, path)  # a filesystem without hard links
        return
    os.unlink(temp)
