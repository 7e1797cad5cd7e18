"""Summary tables in the cache: a CSV parsed once, its columns stored beside the indexes
(keyed by the file's path, size, times and inode, as traces are) and mapped on the next read.

A cached table holds each number column as float64 and each timestamp column as int64 ns,
mapped as they are; a text column as its distinct texts (one UTF-8 blob and their offsets in
characters) and a code per row, turned back into the same strings on reading. Its problems
(ragged rows, bad numbers) are kept with it. The file is checksummed like every cache file
(see :mod:`proftui.core.cache.indexes`): a damaged one is parsed again, never trusted.

A CSV is stored only when it did not change while it was read nor moments before (its
time stamp's tick): a file being written is parsed every time until it settles.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from proftui import __version__
from proftui.core.cache import indexes as cache
from proftui.core.importers.csv.summary import TextParts, parse_table
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.table import Column, Table
from proftui.core.source.streams import FileIdentity

# bump when what a cached table holds changes meaning (2: the step tables' µs said)
TABLE_FORMAT = "summary-table/2"


def table_path(identity: FileIdentity) -> Path:
    """Where the table of this version of a CSV is cached."""
    return cache.cache_dir() / f"{cache.cache_key([identity], TABLE_FORMAT)}.tbl"


def cached_table(path: str, kind: str = "", group: str = "") -> Table:
    """The table of the CSV at `path`: mapped from the cache when it holds this very version
    of the file, else parsed (:func:`~proftui.core.importers.csv.summary.parse_table`) and
    stored. Raises ProftuiError when the file cannot be read."""
    try:
        identity = FileIdentity.of(path)
    except OSError:  # parsing says what is wrong with it
        return parse_table(path, kind, group)[0]
    try:
        return load(identity, path, kind, group)
    except cache.CacheMiss:
        pass
    read_start_ns = time.time_ns()
    table, texts = parse_table(path, kind, group)
    try:
        store(table, texts, identity, read_start_ns)
    except cache.CacheNotWritten:
        pass  # only a shortcut: the table is right all the same
    return table


def store(table: Table, texts: TextParts, identity: FileIdentity, read_start_ns: int) -> None:
    """Write a parsed table to the cache; raises CacheNotWritten when the CSV changed around
    its reading or the file cannot be written."""
    cache.check_unchanged([identity], read_start_ns)
    arrays: dict[str, np.ndarray] = {}
    columns = []
    for i, column in enumerate(table.columns):
        columns.append({"header": column.header, "name": column.name, "unit": column.unit,
                        "kind": column.kind})
        if column.kind == "text":
            distinct, codes = texts[i]
            blob, offsets = _pack(distinct)
            arrays[f"{i}.codes"] = codes
            arrays[f"{i}.blob"] = blob
            arrays[f"{i}.offsets"] = offsets
        else:
            arrays[f"{i}.values"] = column.values
    path = table_path(identity)
    try:
        cache.write_file(path, {
            "version": cache.FORMAT_VERSION,
            "program": __version__,
            "id": os.urandom(16).hex(),
            "sources": cache.identity_list([identity]),
            "options": TABLE_FORMAT,
            "table": {"columns": columns, "n_rows": table.n_rows,
                      "diagnostics": table.diagnostics.to_list()},
        }, arrays)
    except OSError as exc:
        raise cache.CacheNotWritten(f"could not write the cache: {exc.strerror or exc}"
                                    ) from None


def load(identity: FileIdentity, path: str, kind: str, group: str) -> Table:
    """The cached table of this version of a CSV; raises CacheMiss."""
    header, arrays = cache.read_file(table_path(identity))
    if (header.get("sources") != cache.identity_list([identity])
            or header.get("options") != TABLE_FORMAT):
        raise cache.CacheMiss("for another file")
    try:
        described = header["table"]
        n_rows = int(described["n_rows"])
        columns = []
        for i, entry in enumerate(described["columns"]):
            kind_of = entry["kind"]
            if kind_of == "text":
                values = _unpack(arrays[f"{i}.blob"], arrays[f"{i}.offsets"],
                                 arrays[f"{i}.codes"])
            else:
                values = arrays[f"{i}.values"]
                expected = np.int64 if kind_of == "timestamp" else np.float64
                if values.dtype != expected or kind_of not in ("number", "timestamp"):
                    raise cache.CacheMiss("inconsistent column")
            if values.shape != (n_rows,):
                raise cache.CacheMiss("inconsistent column")
            columns.append(Column(str(entry["header"]), str(entry["name"]),
                                  str(entry["unit"]), kind_of, values))
        diagnostics = Diagnostics.from_list(described["diagnostics"])
    except cache.CacheMiss:
        raise
    except Exception as exc:  # any damage at all means "not trusted"
        raise cache.CacheMiss(f"damaged cache file: {exc}") from None
    return Table(kind, path, columns, n_rows, diagnostics, group)


def _pack(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Texts as one UTF-8 blob and the offsets of each in characters (n + 1 of them)."""
    lengths = np.fromiter(map(len, texts), np.int64, len(texts))
    offsets = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    blob = "".join(texts).encode("utf-8", "surrogatepass")
    return np.frombuffer(blob, np.uint8), offsets


def _unpack(blob: np.ndarray, offsets: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The object array of each row's text, from :func:`_pack`'s blob and offsets and the
    rows' codes."""
    whole = blob.tobytes().decode("utf-8", "surrogatepass")
    ends = offsets.tolist()
    if (not ends or ends[0] != 0 or ends[-1] != len(whole)
            or any(b < a for a, b in zip(ends, ends[1:]))):
        raise cache.CacheMiss("inconsistent texts")
    texts = np.empty(len(ends) - 1, dtype=object)
    texts[:] = [whole[a:b] for a, b in zip(ends, ends[1:])]
    if len(codes) and (int(codes.min()) < 0 or int(codes.max()) >= len(texts)):
        raise cache.CacheMiss("inconsistent texts")
    return texts[codes]


def read_table(path: str, kind: str = "", group: str = "", use_cache: bool = True) -> Table:
    """Read one summary CSV (or JSON table) of a rank or device; raises ProftuiError if it
    cannot be read.

    With `use_cache`, a table read before (the same file, unchanged) is mapped from the
    cache instead of parsed (see :func:`cached_table`); the numbers are the same.
    msprof-analyze's cluster JSON files (see :mod:`proftui.core.importers.cluster_tables`)
    are read as tables of their own each time.
    """
    from proftui.core.importers.cluster_tables import KINDS, read_cluster_table

    if kind in KINDS:
        return read_cluster_table(path, kind, group)
    if use_cache:
        return cached_table(path, kind, group)
    return parse_table(path, kind, group)[0]
