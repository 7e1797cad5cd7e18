"""The on-disk cache of finished indexes: one file per trace version, reopened memory-mapped.

A cache file is ``MAGIC``, a little-endian u64 header length, a JSON header (format version,
the source file's identity, array table, metadata, diagnostics) and 64-byte aligned arrays.
Anything unexpected (another version, a truncated file, a different source identity) makes
the file be ignored, never trusted. Files are written to a temporary name and renamed.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import tempfile
from pathlib import Path

import numpy as np
import orjson

from proftui import __version__
from proftui.core.diagnostics import Diagnostics
from proftui.core.index import TraceIndex
from proftui.core.sources import FileIdentity
from proftui.core.strings import StringTable

FORMAT_VERSION = 1
MAGIC = b"PROFTUI-IDX\x00"
_ALIGN = 64


def cache_dir() -> Path:
    """Where indexes are cached: $PROFTUI_CACHE_DIR, else the user's XDG cache directory."""
    env = os.environ.get("PROFTUI_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "proftui"


def cache_key(identities: list[FileIdentity], options: str = "") -> str:
    text = "\0".join(f"{i.path}\0{i.size}\0{i.mtime_ns}" for i in identities)
    # The program version is part of the key: an index built by other code is never reused.
    text += f"\0{options}\0v{FORMAT_VERSION}\0{__version__}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def cache_path(identities: list[FileIdentity], options: str = "") -> Path:
    return cache_dir() / f"{cache_key(identities, options)}.idx"


def _identity_list(identities: list[FileIdentity]) -> list[list]:
    return [[i.path, i.size, i.mtime_ns] for i in identities]


def store(index: TraceIndex, identities: list[FileIdentity], options: str = "") -> Path:
    """Write `index` to the cache atomically; returns the cache file's path."""
    path = cache_path(identities, options)
    arrays = dict(index.arrays)
    arrays["strings.blob"] = index.strings.blob
    arrays["strings.offsets"] = index.strings.offsets
    _write(path, {
        "version": FORMAT_VERSION,
        "sources": _identity_list(identities),
        "options": options,
        "meta": index.meta,
        "diagnostics": index.diagnostics.to_list(),
    }, arrays)
    return path


def _write(path: Path, header: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write a header and 64-byte aligned arrays to `path`, atomically (temporary + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = []
    offset = 0
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        arrays[name] = arr
        table.append({"name": name, "dtype": arr.dtype.str, "shape": list(arr.shape),
                      "offset": offset, "nbytes": arr.nbytes})
        offset += -(-arr.nbytes // _ALIGN) * _ALIGN
    header = {**header, "arrays": table, "data_bytes": offset}
    blob = orjson.dumps(header, option=orjson.OPT_SERIALIZE_NUMPY)
    prefix_len = len(MAGIC) + 8 + len(blob)
    data_start = -(-prefix_len // _ALIGN) * _ALIGN
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + struct.pack("<Q", len(blob)) + blob)
            f.write(b"\0" * (data_start - prefix_len))
            for entry in table:
                arr = arrays[entry["name"]]
                f.write(memoryview(arr).cast("B") if arr.nbytes else b"")
                f.write(b"\0" * (-arr.nbytes % _ALIGN))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class CacheMiss(Exception):
    """No usable cache entry (absent, foreign, stale or damaged)."""


def load(identities: list[FileIdentity], options: str = "") -> TraceIndex:
    """Open the cached index for these source files, memory-mapped; raises CacheMiss."""
    path = cache_path(identities, options)
    header, arrays = _read(path)
    if header.get("sources") != _identity_list(identities) or header.get("options") != options:
        raise CacheMiss("for another file or options")
    try:
        strings = StringTable(arrays.pop("strings.blob"), arrays.pop("strings.offsets"))
        if len(strings.offsets) == 0 or int(strings.offsets[-1]) > len(strings.blob):
            raise CacheMiss("inconsistent string table")
        index = TraceIndex(arrays, strings, header["meta"],
                           Diagnostics.from_list(header["diagnostics"]))
    except CacheMiss:
        raise
    except Exception as exc:  # any damage at all means "not trusted"
        raise CacheMiss(f"damaged cache file: {exc}") from None
    index.meta["cache_path"] = str(path)
    return index


def _read(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and memory-mapped arrays of a file written by :func:`_write`."""
    try:
        with open(path, "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:
        raise CacheMiss(str(exc)) from None
    try:
        return _parse(mm)
    except CacheMiss:
        raise
    except Exception as exc:  # any damage at all means "not trusted"
        raise CacheMiss(f"damaged cache file: {exc}") from None


def _parse(mm: mmap.mmap) -> tuple[dict, dict[str, np.ndarray]]:
    if mm[: len(MAGIC)] != MAGIC:
        raise CacheMiss("not a proftui cache file")
    (header_len,) = struct.unpack_from("<Q", mm, len(MAGIC))
    start = len(MAGIC) + 8
    if start + header_len > len(mm):
        raise CacheMiss("truncated header")
    header = orjson.loads(mm[start: start + header_len])
    if header.get("version") != FORMAT_VERSION:
        raise CacheMiss("written by another version")
    data_start = -(-(start + header_len) // _ALIGN) * _ALIGN
    if data_start + int(header["data_bytes"]) > len(mm):
        raise CacheMiss("truncated data")
    arrays: dict[str, np.ndarray] = {}
    for entry in header["arrays"]:
        dtype = np.dtype(entry["dtype"])
        shape = tuple(entry["shape"])
        count = int(np.prod(shape)) if shape else 1
        if count * dtype.itemsize != entry["nbytes"]:
            raise CacheMiss("inconsistent array table")
        arr = np.frombuffer(mm, dtype, count, data_start + entry["offset"]).reshape(shape)
        arrays[entry["name"]] = arr
    return header, arrays


def store_derived(index: TraceIndex, kind: str, arrays: dict[str, np.ndarray]) -> None:
    """Keep arrays computed from a cached index (e.g. its timeline rows) beside it.

    Does nothing for an index that is not in the cache; errors writing are ignored (the
    arrays are only a shortcut).
    """
    base = index.meta.get("cache_path")
    if not base:
        return
    try:
        _write(Path(f"{base}.{kind}"), {"version": FORMAT_VERSION, "of": _stamp(base)},
               dict(arrays))
    except OSError:
        pass


def load_derived(index: TraceIndex, kind: str) -> dict[str, np.ndarray]:
    """Arrays stored by :func:`store_derived` for this very cache file; raises CacheMiss."""
    base = index.meta.get("cache_path")
    if not base:
        raise CacheMiss("the index is not cached")
    header, arrays = _read(Path(f"{base}.{kind}"))
    if header.get("of") != _stamp(base):
        raise CacheMiss("made for another version of the index")
    return arrays


def _stamp(path: str) -> list[int]:
    """Identity of a cache file: derived files are valid for this one only."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    return [st.st_size, st.st_mtime_ns, st.st_ino]
