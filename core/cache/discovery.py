"""The cached discovery of a profile folder: its layout, runs and clock offsets, reused while
nothing discovery looked at has changed.

Discovering a folder of many ranks reads every rank's head (twin hashes, first timestamps,
clock offsets): about half a second for 64 ranks, on every open. An entry (``<key>.lay`` in
the cache directory, a cache file of no arrays: its header checksummed, counted under the
size cap and listed by ``proftui cache``) holds what discovery and run splitting found for
one folder and run number (the layout and clock offsets, or the several runs to choose
from), with the fingerprint of the folder: every file the walk of discovery lists (the same
walk: skipped folders and depth) and its identity (path, size, mtime, ctime, inode). A
reopen lists the folder and stats its files; any difference (a file added, removed, touched
or replaced, a folder that cannot be read) redoes discovery. An entry is stored only when
the fingerprint is the same after discovery as before it, and its files were last changed a
time-stamp tick before discovery read them (see :func:`proftui.core.cache.indexes.settle`): never a
stale answer. A damaged or foreign entry is ignored.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from proftui import __version__
from proftui.core.cache import indexes as cache
from proftui.core.cache.file import CacheMiss
from proftui.core.discover.clock import ClockOffset
from proftui.core.discover.profile import ProfileLayout, TableFile, TimelineFile, walk
from proftui.core.discover.runs import Run, SeveralRunsError
from proftui.core.source.streams import FileIdentity

# Bump when discovery, run splitting or clock offsets change what they find for a folder.
LAYOUT_VERSION = 2  # 2: msprof-analyze's cluster JSON files are tables too
SUFFIX = "lay"


@dataclass(frozen=True)
class Fingerprint:
    """What discovery of a folder looks at: the files its walk lists, with their identities,
    and the folders it could not read."""

    root: str
    # its identity, else (it cannot be stat'ed) where a link points or ""
    files: tuple[tuple[str, FileIdentity | str], ...]
    unreadable: tuple[tuple[str, str], ...]  # (folder, why)

    @classmethod
    def of(cls, path: str) -> Fingerprint | None:
        """The fingerprint of the folder `path`; None for what is not a folder."""
        if not os.path.isdir(path):
            return None
        root = os.path.realpath(path)
        files, unreadable = walk(root)
        return cls(root, tuple((f, _identity(f)) for f in files), tuple(unreadable))

    def plain(self) -> list:
        """As the header of its entry holds it (JSON: lists)."""
        return [self.root,
                [[f, cache.identity_list([i])[0] if isinstance(i, FileIdentity) else i]
                 for f, i in self.files],
                [list(u) for u in self.unreadable]]

    def identities(self) -> list[FileIdentity]:
        """The identities of its files that exist."""
        return [i for _, i in self.files if isinstance(i, FileIdentity)]


@dataclass
class Discovered:
    """A folder's layout (of one run) and the clock offsets of its timelines."""

    layout: ProfileLayout
    clocks: list[ClockOffset]


def _identity(path: str) -> FileIdentity | str:
    try:
        return FileIdentity.of(path)  # the resolved path too: a link pointed elsewhere differs
    except OSError:
        try:
            return os.readlink(path)  # discovery names a dangling link's target
        except OSError:
            return ""


def entry_path(root: str, run: int | None) -> Path:
    """Where the entry of folder `root` (a real path) opened as run `run` is kept."""
    text = cache.json_bytes(["layout", root, run, LAYOUT_VERSION, cache.FORMAT_VERSION,
                             __version__])
    return cache.cache_dir() / f"{hashlib.sha256(text).hexdigest()[:40]}.{SUFFIX}"


def load(fingerprint: Fingerprint, run: int | None, path: str) -> Discovered | None:
    """What discovery found for this folder (`path` as it was given) and run when it is
    cached and nothing it looked at changed; None otherwise. Raises SeveralRunsError when
    that is what was found."""
    try:
        header, _ = cache.read_file(entry_path(fingerprint.root, run))
        if (header.get("layout_version") != LAYOUT_VERSION
                or header.get("fingerprint") != fingerprint.plain()):
            return None
        found = header["found"]
        if "runs" in found:
            raise SeveralRunsError(path, fingerprint.root,
                                   [_run(r) for r in found["runs"]], list(found["reasons"]))
        return Discovered(_layout(found["layout"]),
                          [ClockOffset(**c) for c in found["clocks"]])
    except (CacheMiss, OSError):
        return None
    except SeveralRunsError:
        raise
    except Exception:  # noqa: BLE001 - any damage at all means "not trusted"
        return None


def store(fingerprint: Fingerprint, run: int | None, read_start_ns: int,
          found: Discovered | SeveralRunsError) -> None:
    """Keep what discovery found for this folder and run, unless the folder changed since
    `fingerprint` was taken (at `read_start_ns`, see cache.settle) or moments before it.
    Errors writing are ignored: the entry is only a shortcut."""
    try:
        cache.check_unchanged(fingerprint.identities(), read_start_ns)
    except cache.CacheNotWritten:
        return
    if Fingerprint.of(fingerprint.root) != fingerprint:
        return
    if isinstance(found, SeveralRunsError):
        plain: dict[str, Any] = {"reasons": list(found.reasons),
                                 "runs": [asdict(r) for r in found.runs]}
    else:
        plain = {"layout": asdict(found.layout), "clocks": [asdict(c) for c in found.clocks]}
    path = entry_path(fingerprint.root, run)
    try:
        cache.write_file(path, {
            "version": cache.FORMAT_VERSION, "program": __version__,
            "id": os.urandom(16).hex(), "layout_version": LAYOUT_VERSION,
            "sources": cache.identity_list(fingerprint.identities()),
            "fingerprint": fingerprint.plain(), "found": plain}, {})
    except OSError:
        pass


def settle(fingerprint: Fingerprint) -> int:
    """Wait until the folder's files were last changed a tick ago (see cache.settle); the
    time discovery may begin reading them at."""
    return cache.settle([i.path for i in fingerprint.identities()])


def _run(plain: dict) -> Run:
    return Run(int(plain["number"]), tuple(plain["folders"]), tuple(plain["groups"]),
               plain["start_ns"], plain["stamp_ns"], str(plain["clock"]))


def _layout(plain: dict) -> ProfileLayout:
    return ProfileLayout(
        root=plain["root"], layouts=list(plain["layouts"]),
        timelines=[TimelineFile(**t) for t in plain["timelines"]],
        tables=[TableFile(**t) for t in plain["tables"]],
        skipped=[(str(p), str(why)) for p, why in plain["skipped"]],
        run_info=list(plain["run_info"]), run=plain["run"], ranks=dict(plain["ranks"]),
        comm=[TableFile(**t) for t in plain["comm"]])
