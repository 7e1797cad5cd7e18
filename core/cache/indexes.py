"""The on-disk cache of finished indexes: one file per trace version, reopened memory-mapped.

A cache file (:mod:`proftui.core.cache.file`) holds a checksummed JSON header (format and
program version, a random id, the source files' identities, what it holds, metadata,
diagnostics) and checksummed arrays. Anything unexpected (another version, a file of another
length, a different source identity, a checksum that does not match) makes the file be
ignored, never trusted, and the next store replaces it. Files are written to a temporary name
and renamed: a reader sees the old file or the whole new one, and a reader's map of a
replaced file stays valid. The other entries of the cache are cache files too, written and
read through :func:`write_file` and :func:`read_file`: summary tables
(:mod:`proftui.core.cache.tables`), what discovery found in a folder
(:mod:`proftui.core.cache.discovery`) and each trace file of a profile of several as it was
read (:mod:`proftui.core.cache.ranks`); :mod:`proftui.core.cache.entries` lists them.

Checksums: every array is verified when its file is opened, before the index (or derived
arrays, or a summary table) is handed out, so a flipped bit, a zeroed page or a cut file is
rebuilt from the sources, never shown. The check (:func:`proftui.core.cache.file.checksum`)
sums each 4 KiB page's 64-bit words and adds the page sums by odd weights of their place:
in numpy that runs at memory speed, 10.9 GB/s on one core here against 2.6 for zlib's CRC-32
(used until November 2026), 1.3 for SHA-1 and 0.6 for BLAKE2b. Damage is accidental, not
adversarial: a flipped bit or a burst of up to 64 bits always changes its page's sum, and the
odd weight keeps that change modulo 2**64; a zeroed or garbled page, or pages swapped, go
unseen with odds of about 2**-64. What it misses are changes that cancel within one page (the
same bit flipped up in one word and down in another, words reordered), where a CRC would
catch the first; two such flips meeting is not a way files get damaged. Sampling pages was
rejected: it misses one flipped bit with the probability of not sampling its page.
Verifying lazily, array by array on first use, was rejected too: damage found after the index
is handed out could only fail the command or the pane that touched it, not rebuild the
index, and the first frame touches nearly every large array anyway. Measured by
bench/bench_cache.py, reopening an index of 8.3 M slices and its timeline rows (470 MB):
59 ms against 5 ms without the check (the CRC-32, on two threads, took 168 ms for 536 MB).
On a cold page cache the check reads the whole files (+0.4 s) where the first frame alone
reads part. `proftui PATH` opens the index (and its rows) in a thread while the app's modules
are imported and its widgets built (the sums release the GIL; see bench/bench_reopen.py):
nothing is shown before it ends either way.

A write within the time-stamp tick of the previous one leaves a file's identity unchanged, so
an index is stored only when its sources were read from a tick after their last change on (see
:func:`settle`) and are unchanged once indexed.

Every load marks its entry as used now (the file's modification time: one `utime` call, a few
µs), and every store first makes room under the size cap (:mod:`proftui.core.cache.entries`),
least recently used entries first.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from proftui import __version__
from proftui.core.cache import entries as cache_entries
from proftui.core.cache import file as cache_file
from proftui.core.cache.file import MAGIC, CacheMiss, json_bytes
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.index import TraceIndex
from proftui.core.model.strings import StringTable
from proftui.core.source.streams import FileIdentity

FORMAT_VERSION = 6  # 6: Kineto's deviceProperties kept (5: flows paired within a rank;
# 4: checksums; 3: events of unknown phases kept as instants)
__all__ = ["MAGIC", "CacheMiss", "json_bytes"]  # shared with the other users of the cache
_FINE_TICK_NS = 20_000_000  # > one kernel timer tick (10 ms at HZ=100), when time stamps are fine
# This run's, not the index's (ranks_cached: how many files came from rank entries).
_RUN_KEYS = ("cache_path", "cache_id", "from_cache", "cache_error", "no_cache", "ranks_cached")


def cache_dir() -> Path:
    """Where indexes are cached: $PROFTUI_CACHE_DIR, else the user's XDG cache directory."""
    env = os.environ.get("PROFTUI_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "proftui"


def identity_list(identities: list[FileIdentity]) -> list[list]:
    """Identities as the header of a cache file holds them."""
    return [[i.path, i.size, i.mtime_ns, i.ctime_ns, i.inode] for i in identities]


def cache_key(identities: list[FileIdentity], options: str = "") -> str:
    """The name of the cache entry for these source files, options and program version."""
    text = json_bytes([identity_list(identities), options, FORMAT_VERSION, __version__])
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


def write_file(path: Path, header: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write a cache file (see :func:`proftui.core.cache.file.write`), first making room for
    it under the cache's cap. Raises OSError."""
    cache_file.write(path, header, arrays,
                     before_write=lambda nbytes: cache_entries.make_room(path, nbytes))


def read_file(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and verified, mapped arrays of a cache file of this format and program
    version (marked as used); raises CacheMiss."""
    header, arrays = cache_file.read(path, expect={"version": FORMAT_VERSION,
                                                   "program": __version__})
    cache_entries.mark_used(path)
    return header, arrays


_write, _read = write_file, read_file  # the names the tests know


def store(index: TraceIndex, identities: list[FileIdentity], options: str,
          read_start_ns: int) -> Path:
    """Write `index` to the cache atomically and note its path and id in `index.meta`.

    `read_start_ns` is when reading the sources began (the value :func:`settle` returned,
    taken before any of their bytes were read). Raises :class:`CacheNotWritten` when the
    sources changed around their reading, or the file cannot be written (disk full, read-only).
    """
    check_unchanged(identities, read_start_ns)
    path = cache_path(identities, options)
    arrays = dict(index.arrays)
    arrays["strings.blob"] = index.strings.blob
    arrays["strings.offsets"] = index.strings.offsets
    cache_id = os.urandom(16).hex()
    try:
        write_file(path, {
            "version": FORMAT_VERSION,
            "program": __version__,
            "id": cache_id,
            "sources": identity_list(identities),
            "options": options,
            "meta": {k: v for k, v in index.meta.items() if k not in _RUN_KEYS},
            "diagnostics": index.diagnostics.to_list(),
        }, arrays)
    except OSError as exc:
        raise CacheNotWritten(f"could not write the cache: {exc.strerror or exc}") from None
    cache_file.sweep_temporaries(path.parent)
    _remove_derived(path)
    index.meta["cache_path"] = str(path)
    index.meta["cache_id"] = cache_id
    return path


def check_unchanged(identities: list[FileIdentity], read_start_ns: int) -> None:
    """Raise CacheNotWritten unless these files were unchanged from a tick before
    `read_start_ns` until now."""
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


def _remove_derived(path: Path) -> None:
    """Remove the arrays derived from the index that was at `path` before (another file now:
    they can never be used again)."""
    try:
        with os.scandir(path.parent) as entries:
            stale = [e.path for e in entries if e.name.startswith(f"{path.name}.")]
    except OSError:
        return
    for name in stale:
        if cache_entries.is_ours(name):
            try:
                os.unlink(name)
            except OSError:
                pass


def load(identities: list[FileIdentity], options: str = "") -> TraceIndex:
    """Open the cached index for these source files, memory-mapped; raises CacheMiss."""
    path = cache_path(identities, options)
    header, arrays = read_file(path)
    if header.get("sources") != identity_list(identities) or header.get("options") != options:
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


def store_derived(index: TraceIndex, kind: str, arrays: dict[str, np.ndarray]) -> None:
    """Keep arrays computed from a cached index (e.g. its timeline rows) beside it.

    Does nothing for an index that is not in the cache; errors writing are ignored (the
    arrays are only a shortcut).
    """
    base, cache_id = index.meta.get("cache_path"), index.meta.get("cache_id")
    if not base or not cache_id:
        return
    try:
        write_file(Path(f"{base}.{kind}"),
               {"version": FORMAT_VERSION, "program": __version__, "of": cache_id},
               dict(arrays))
    except OSError:
        pass


def derived(index: TraceIndex, kind: str, compute: Callable[[], dict[str, np.ndarray]],
            fits: Callable[[dict[str, np.ndarray]], bool]) -> dict[str, np.ndarray]:
    """Arrays computed from `index`: those stored beside its cache file under `kind` when
    they are there and `fits` them (the right lengths: a check against damage that the
    checksums cannot see, such as arrays of another layout), else `compute()`'s, stored there
    for the next time."""
    try:
        stored = load_derived(index, kind)
        if fits(stored):
            return stored
    except (CacheMiss, KeyError):
        pass
    arrays = compute()
    store_derived(index, kind, arrays)
    return arrays


def load_derived(index: TraceIndex, kind: str) -> dict[str, np.ndarray]:
    """Arrays stored by :func:`store_derived` for this very index; raises CacheMiss.

    They are matched by the random id of the index's cache file, not by what is at its path
    now: another process may have replaced that file since this index was mapped.
    """
    base, cache_id = index.meta.get("cache_path"), index.meta.get("cache_id")
    if not base or not cache_id:
        raise CacheMiss("the index is not cached")
    header, arrays = read_file(Path(f"{base}.{kind}"))
    if header.get("of") != cache_id:
        raise CacheMiss("made for another version of the index")
    return arrays
