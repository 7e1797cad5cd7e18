"""The on-disk cache of finished indexes: one file per trace version, reopened memory-mapped.

A cache file is ``MAGIC``, a little-endian u64 header length, a JSON header (format and program
version, a random id, the source files' identities, array table, metadata, diagnostics) and
64-byte aligned arrays, nothing after. Anything unexpected (another version, a file of another
length, a different source identity) makes the file be ignored, never trusted, and the next
store replaces it. Files are written to a temporary name and renamed: a reader sees the old
file or the whole new one, and a reader's map of a replaced file stays valid.

A write within the time-stamp tick of the previous one leaves a file's identity unchanged, so
an index is stored only when its sources were read from a tick after their last change on (see
:func:`settle`) and are unchanged once indexed.
"""

from __future__ import annotations

import errno
import hashlib
import json
import mmap
import os
import stat
import struct
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from proftui import __version__
from proftui.core.diagnostics import Diagnostics
from proftui.core.index import TraceIndex
from proftui.core.sources import FileIdentity
from proftui.core.strings import StringTable

FORMAT_VERSION = 3  # 3: events of unknown phases are kept as instants
MAGIC = b"PROFTUI-IDX\x00"
_ALIGN = 64
_FREE_RESERVE_BYTES = 64 << 20  # a cache never takes the last of the disk from the training job
_STALE_TEMP_S = 3600  # a temporary file untouched this long was left by a killed process
_FINE_TICK_NS = 20_000_000  # > one kernel timer tick (10 ms at HZ=100), when time stamps are fine
_RUN_KEYS = ("cache_path", "cache_id", "from_cache", "cache_error")  # meta of this run only


def cache_dir() -> Path:
    """Where indexes are cached: $PROFTUI_CACHE_DIR, else the user's XDG cache directory."""
    env = os.environ.get("PROFTUI_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "proftui"


def json_bytes(value: Any) -> bytes:
    """`value` as JSON. A path that is not UTF-8 holds lone surrogates (os.fsdecode), which
    orjson refuses: the standard library writes them as \\u escapes and reads them back."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)
    except TypeError:
        return json.dumps(value, default=_plain).encode()


def _plain(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _json_value(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # lone surrogates, escaped (see json_bytes)
        return json.loads(data)


def _identity_list(identities: list[FileIdentity]) -> list[list]:
    return [[i.path, i.size, i.mtime_ns, i.ctime_ns, i.inode] for i in identities]


def cache_key(identities: list[FileIdentity], options: str = "") -> str:
    """The name of the cache entry for these source files, options and program version."""
    text = json_bytes([_identity_list(identities), options, FORMAT_VERSION, __version__])
    return hashlib.sha256(text).hexdigest()[:40]


def cache_path(identities: list[FileIdentity], options: str = "") -> Path:
    return cache_dir() / f"{cache_key(identities, options)}.idx"


def _tick_ns(ctime_ns: int) -> int:
    """How long one time stamp may stand for, judged by its roundness (with a margin)."""
    for unit in (1_000_000_000, 100_000_000):  # whole seconds: FAT, ext3, HFS+ ...
        if ctime_ns % unit == 0:
            return 2 * unit
    return _FINE_TICK_NS


def settle(paths: list[str]) -> int:
    """Wait until these files' last change is a time-stamp tick old; returns the time (ns).

    A file read within the tick of its last change could be written again in that tick with
    no change to its identity; read from a later moment on, every write shows. The wait is
    at most one tick (20 ms, or 2 s on a file system with whole-second time stamps) and only
    for files written moments ago; a time stamp further in the future (a network file
    system's clock) is not waited for, and :func:`store` then declines.
    """
    identities = []
    for path in paths:
        try:
            identities.append(FileIdentity.of(path))
        except OSError:  # opening it will say what is wrong
            pass
    until_ns = max((i.ctime_ns + _tick_ns(i.ctime_ns) for i in identities), default=0)
    longest_ns = max((_tick_ns(i.ctime_ns) for i in identities), default=0)
    now = time.time_ns()
    if until_ns - now <= longest_ns:  # further off is another clock's future: not waited for
        while now < until_ns:
            time.sleep((until_ns - now) / 1e9)
            now = time.time_ns()
    return now


class CacheNotWritten(Exception):
    """The index was not stored; the message is one sentence for a person."""


def store(index: TraceIndex, identities: list[FileIdentity], options: str,
          read_start_ns: int) -> Path:
    """Write `index` to the cache atomically and note its path and id in `index.meta`.

    `read_start_ns` is when reading the sources began (the value :func:`settle` returned,
    taken before any of their bytes were read). Raises :class:`CacheNotWritten` when the
    sources changed around their reading, or the file cannot be written (disk full, read-only).
    """
    _check_unchanged(identities, read_start_ns)
    path = cache_path(identities, options)
    arrays = dict(index.arrays)
    arrays["strings.blob"] = index.strings.blob
    arrays["strings.offsets"] = index.strings.offsets
    cache_id = os.urandom(16).hex()
    try:
        _write(path, {
            "version": FORMAT_VERSION,
            "program": __version__,
            "id": cache_id,
            "sources": _identity_list(identities),
            "options": options,
            "meta": {k: v for k, v in index.meta.items() if k not in _RUN_KEYS},
            "diagnostics": index.diagnostics.to_list(),
        }, arrays)
    except OSError as exc:
        raise CacheNotWritten(f"could not write the cache: {exc.strerror or exc}") from None
    _sweep_temporaries(path.parent)
    index.meta["cache_path"] = str(path)
    index.meta["cache_id"] = cache_id
    return path


def _check_unchanged(identities: list[FileIdentity], read_start_ns: int) -> None:
    for identity in identities:
        name = os.path.basename(identity.path)
        if identity.ctime_ns > read_start_ns + _tick_ns(identity.ctime_ns):
            raise CacheNotWritten(f"not cached: {name} has a time stamp in the future")
        if identity.ctime_ns + _tick_ns(identity.ctime_ns) > read_start_ns:
            raise CacheNotWritten(f"not cached: {name} changed moments before it was read")
        try:
            now = FileIdentity.of(identity.path)
        except OSError:
            raise CacheNotWritten(f"not cached: {name} went away while it was read") from None
        if now != identity:
            raise CacheNotWritten(f"not cached: {name} changed while it was read")


def _write(path: Path, header: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write a header and 64-byte aligned arrays to `path`, atomically (temporary + rename).

    Raises OSError; no temporary file is left behind, whatever goes wrong.
    """
    table = []
    offset = 0
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        arrays[name] = arr
        table.append({"name": name, "dtype": arr.dtype.str, "shape": list(arr.shape),
                      "offset": offset, "nbytes": arr.nbytes})
        offset += -(-arr.nbytes // _ALIGN) * _ALIGN
    header = {**header, "arrays": table, "data_bytes": offset}
    blob = json_bytes(header)
    prefix_len = len(MAGIC) + 8 + len(blob)
    data_start = -(-prefix_len // _ALIGN) * _ALIGN
    path.parent.mkdir(parents=True, exist_ok=True)
    _check_space(path.parent, data_start + offset)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + struct.pack("<Q", len(blob)) + blob)
            f.write(b"\0" * (data_start - prefix_len))
            for entry in table:
                arr = arrays[entry["name"]]
                f.write(memoryview(arr).cast("B") if arr.nbytes else b"")
                f.write(b"\0" * (-arr.nbytes % _ALIGN))
        try:
            os.replace(tmp, path)
        except IsADirectoryError:
            os.rmdir(path)  # an empty directory squats on the name; a full one is left alone
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _check_space(directory: Path, nbytes: int) -> None:
    """Raise ENOSPC unless `nbytes` fit with room to spare (a full disk stops training jobs)."""
    try:
        fs = os.statvfs(directory)
    except (OSError, AttributeError):  # no statvfs here: writing will tell
        return
    free = fs.f_bavail * fs.f_frsize
    if free < nbytes + _FREE_RESERVE_BYTES:
        raise OSError(errno.ENOSPC, f"not enough free space ({free >> 20} MB free, "
                                    f"{(nbytes >> 20) + 1} MB needed, "
                                    f"{_FREE_RESERVE_BYTES >> 20} MB kept free)")


def _sweep_temporaries(directory: Path) -> None:
    """Remove temporary files of writers that were killed mid-write (long untouched)."""
    too_old = time.time() - _STALE_TEMP_S
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.startswith(".tmp-") and entry.stat().st_mtime < too_old:
                    os.unlink(entry.path)
    except OSError:  # swept by the next store
        pass


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
        index.meta["cache_id"] = str(header["id"])
    except CacheMiss:
        raise
    except Exception as exc:  # any damage at all means "not trusted"
        raise CacheMiss(f"damaged cache file: {exc}") from None
    index.meta["cache_path"] = str(path)
    return index


def _read(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and memory-mapped arrays of a file written by :func:`_write`."""
    try:
        # Non-blocking: a FIFO in place of the file must not hang the opening of the trace.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise CacheMiss(str(exc)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CacheMiss("not a regular file")
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:  # ValueError: an empty file cannot be mapped
        raise CacheMiss(str(exc)) from None
    finally:
        os.close(fd)
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
    header = _json_value(mm[start: start + header_len])
    if header.get("version") != FORMAT_VERSION or header.get("program") != __version__:
        raise CacheMiss("written by another version")
    data_start = -(-(start + header_len) // _ALIGN) * _ALIGN
    data_bytes = int(header["data_bytes"])
    if data_start + data_bytes != len(mm):
        raise CacheMiss("truncated or overlong file")
    arrays: dict[str, np.ndarray] = {}
    for entry in header["arrays"]:
        dtype = np.dtype(entry["dtype"])
        shape = tuple(int(n) for n in entry["shape"])
        offset, nbytes = int(entry["offset"]), int(entry["nbytes"])
        count = int(np.prod(shape)) if shape else 1
        if (min(shape, default=0) < 0 or count * dtype.itemsize != nbytes or offset < 0
                or offset + nbytes > data_bytes or dtype.hasobject):
            raise CacheMiss("inconsistent array table")
        arr = np.frombuffer(mm, dtype, count, data_start + offset).reshape(shape)
        arrays[entry["name"]] = arr
    return header, arrays


def store_derived(index: TraceIndex, kind: str, arrays: dict[str, np.ndarray]) -> None:
    """Keep arrays computed from a cached index (e.g. its timeline rows) beside it.

    Does nothing for an index that is not in the cache; errors writing are ignored (the
    arrays are only a shortcut).
    """
    base, cache_id = index.meta.get("cache_path"), index.meta.get("cache_id")
    if not base or not cache_id:
        return
    try:
        _write(Path(f"{base}.{kind}"),
               {"version": FORMAT_VERSION, "program": __version__, "of": cache_id},
               dict(arrays))
    except OSError:
        pass


def load_derived(index: TraceIndex, kind: str) -> dict[str, np.ndarray]:
    """Arrays stored by :func:`store_derived` for this very index; raises CacheMiss.

    They are matched by the random id of the index's cache file, not by what is at its path
    now: another process may have replaced that file since this index was mapped.
    """
    base, cache_id = index.meta.get("cache_path"), index.meta.get("cache_id")
    if not base or not cache_id:
        raise CacheMiss("the index is not cached")
    header, arrays = _read(Path(f"{base}.{kind}"))
    if header.get("of") != cache_id:
        raise CacheMiss("made for another version of the index")
    return arrays
