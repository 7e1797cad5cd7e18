"""One cache file on disk: a checksummed JSON header and 64-byte aligned arrays, written
atomically and read back memory-mapped, every array verified before it is handed out.

Layout: ``MAGIC``, a little-endian u64 header length, the CRC-32 of the header (u32, then four
zero bytes), the JSON header, zero padding to 64 bytes, then the arrays, each padded to 64
bytes, nothing after. The header's ``arrays`` table gives each array's name, dtype, shape,
offset, size and checksum (``sum64``, see :func:`checksum`); ``checksum`` names how those were
made, ``data_bytes`` the length of the data. What the header says beyond that belongs to the
caller (see :mod:`proftui.core.cache.indexes`).

Why this checksum, and why all of it at once, is said in
:mod:`proftui.core.cache.indexes`; the cost is measured by bench/bench_cache.py.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import stat
import struct
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import orjson

MAGIC = b"PROFTUI-IDX\x00"
PREFIX = struct.Struct("<QI4x")  # header length, CRC-32 of the header, padding
CHECKSUM = "sum64 of 4 KiB pages"  # the header's name for the arrays' checksums
PAGE = 4096
_ALIGN = 64
_FREE_RESERVE_BYTES = 64 << 20  # a cache never takes the last of the disk from the training job
# Every file is written under a temporary name beside its place, then renamed into it.
TEMP_PREFIX = ".tmp-"
STALE_TEMP_S = 3600  # a temporary file untouched this long was left by a killed writer


class CacheMiss(Exception):
    """No usable cache entry (absent, foreign, stale or damaged)."""


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


def checksum(data: np.ndarray) -> int:
    """The checksum of bytes (a uint8 array): the little-endian 64-bit words of each 4 KiB
    page summed (the last page padded with zeros), and the pages' sums added, each times an
    odd weight by its place (1, 3, 5, ...), all modulo 2**64.

    A flipped bit or a burst of up to 64 bits always changes its page's sum, and an odd weight
    keeps that change modulo 2**64; pages zeroed, garbled or swapped change the total but
    with odds of about 2**-64 (what cancels within a page is missed: see
    :mod:`proftui.core.cache.indexes`). It runs at memory speed in numpy, with the GIL released."""
    whole = len(data) // PAGE * PAGE
    pages = data[:whole].view("<u8").reshape(-1, PAGE // 8).sum(axis=1, dtype=np.uint64)
    if whole < len(data):
        last = np.zeros(PAGE, np.uint8)
        last[: len(data) - whole] = data[whole:]
        pages = np.append(pages, last.view("<u8").sum(dtype=np.uint64))
    weights = np.arange(1, 2 * len(pages), 2, dtype=np.uint64)
    return int((pages * weights).sum(dtype=np.uint64))


def file_size(header: dict, arrays: dict[str, np.ndarray]) -> int:
    """The bytes :func:`write` will take for these arrays and header (near enough: the
    header's own length is estimated without its table)."""
    data = sum(-(-a.nbytes // _ALIGN) * _ALIGN for a in arrays.values())
    return len(MAGIC) + PREFIX.size + len(json_bytes(header)) + 128 * len(arrays) + data


def write(path: Path, header: dict, arrays: dict[str, np.ndarray],
          before_write: Any = None) -> int:
    """Write a header and 64-byte aligned arrays to `path`, atomically (temporary + rename);
    returns the file's size. `before_write(nbytes)`, when given, is called once the size is
    known and before anything is written (to make room in the cache).

    Raises OSError; no temporary file is left behind, whatever goes wrong.
    """
    table = []
    offset = 0
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        arrays[name] = arr
        table.append({"name": name, "dtype": arr.dtype.str, "shape": list(arr.shape),
                      "offset": offset, "nbytes": arr.nbytes,
                      "sum64": checksum(arr.reshape(-1).view(np.uint8))})
        offset += -(-arr.nbytes // _ALIGN) * _ALIGN
    header = {**header, "arrays": table, "data_bytes": offset, "checksum": CHECKSUM}
    blob = json_bytes(header)
    prefix_len = len(MAGIC) + PREFIX.size + len(blob)
    data_start = -(-prefix_len // _ALIGN) * _ALIGN
    path.parent.mkdir(parents=True, exist_ok=True)
    if before_write is not None:  # first: what it removes counts as free space
        before_write(data_start + offset)
    _check_space(path.parent, data_start + offset)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + PREFIX.pack(len(blob), zlib.crc32(blob)) + blob)
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
    return data_start + offset


def sweep_temporaries(directory: Path) -> tuple[int, int]:
    """Remove the temporary files that writers killed mid-write left in `directory`; returns
    (files removed, bytes freed). One is removed only when it is a regular file (not a
    symlink), untouched for STALE_TEMP_S, and ours: it starts with MAGIC, or it is empty (a
    writer killed before its first byte). Anything else under the name is someone else's."""
    removed = freed = 0
    too_old = time.time() - STALE_TEMP_S
    try:
        with os.scandir(directory) as listing:
            for item in listing:
                if not (item.name.startswith(TEMP_PREFIX)
                        and item.is_file(follow_symlinks=False)):
                    continue
                st = item.stat(follow_symlinks=False)
                if st.st_mtime < too_old and (st.st_size == 0 or is_ours(item.path)):
                    os.unlink(item.path)
                    removed += 1
                    freed += st.st_size
    except OSError:  # gone, or not ours to remove: swept another time
        pass
    return removed, freed


def is_ours(path: str) -> bool:
    """Whether the file at `path` starts with proftui's MAGIC."""
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


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


def read(path: Path, expect: dict[str, Any] | None = None, verify: bool = True
         ) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and memory-mapped arrays of a file written by :func:`write`, whose header
    has the values of `expect` (a format and program version); raises CacheMiss. With
    `verify` (always, but to measure what it costs) every array's checksums are compared
    first."""
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
        header, data_start = read_header(mm)
        if any(header.get(key) != value for key, value in (expect or {}).items()):
            raise CacheMiss("written by another version")
        arrays = _arrays(mm, header, data_start)
        if verify:
            _verify(mm, header, data_start)
        return header, arrays
    except CacheMiss:
        raise
    except Exception as exc:  # any damage at all means "not trusted"
        raise CacheMiss(f"damaged cache file: {exc}") from None


def read_header(data: Any) -> tuple[dict, int]:
    """The header of a cache file's bytes (a map, or its first bytes) and where its data
    starts; raises CacheMiss for what is not a whole, unchanged header of a cache file."""
    if bytes(data[: len(MAGIC)]) != MAGIC:
        raise CacheMiss("not a proftui cache file")
    start = len(MAGIC) + PREFIX.size
    if len(data) < start:
        raise CacheMiss("truncated header")
    header_len, header_crc = PREFIX.unpack_from(data, len(MAGIC))
    if start + header_len > len(data):
        raise CacheMiss("truncated header")
    blob = bytes(data[start: start + header_len])
    if zlib.crc32(blob) != header_crc:
        raise CacheMiss("damaged header (checksum)")
    header = _json_value(blob)
    if not isinstance(header, dict):
        raise CacheMiss("damaged header")
    return header, -(-(start + header_len) // _ALIGN) * _ALIGN


def _arrays(mm: mmap.mmap, header: dict, data_start: int) -> dict[str, np.ndarray]:
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
    return arrays


def _verify(mm: mmap.mmap, header: dict, data_start: int) -> None:
    """Compare every array with its checksum; raise CacheMiss at the first that differs.

    The pages read are let go of as each array is checked: they stay in the page cache, but
    no longer count in this process's memory (a command touches a few of the columns; all of
    a 1 GB trace's would be 100 MB of its peak)."""
    if header.get("checksum") != CHECKSUM:
        raise CacheMiss("no checksums")
    data = np.frombuffer(mm, np.uint8)
    for entry in header["arrays"]:
        start = data_start + int(entry["offset"])
        end = start + int(entry["nbytes"])
        if checksum(data[start: end]) != entry["sum64"]:
            raise CacheMiss(f"damaged cache file: {entry['name']} does not match its checksum")
        _let_go(mm, start, end)


def _let_go(mm: mmap.mmap, start: int, end: int) -> None:
    """Drop the pages of mm[start:end] from this process (a shared read-only map: they are
    read again from the page cache when touched)."""
    first = start // mmap.PAGESIZE * mmap.PAGESIZE
    if end > first and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        mm.madvise(mmap.MADV_DONTNEED, first, end - first)


