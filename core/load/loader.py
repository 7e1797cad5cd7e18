"""Opening a trace or a profile: from the cache when it is current, else by indexing it.

What indexing needs (the parser, msgspec, the builder, SQLite, the worker processes) is imported
when a trace is indexed, not to check that a file opens nor to reopen one from the cache (see
bench/bench_reopen.py)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from proftui.core.cache import discovery as discovery_cache
from proftui.core.cache import indexes as cache
from proftui.core.cache.seeks import store_seek_points
from proftui.core.discover.clock import (
    OWN_CLOCK,
    WALL_CLOCK,
    ClockOffset,
    clock_of,
    first_ts_ns,
    offset_for,
)
from proftui.core.discover.profile import DB_KIND, ProfileLayout, TimelineFile, discover
from proftui.core.discover.runs import SeveralRunsError, open_run
from proftui.core.load.memory_csv import memory_csvs
from proftui.core.load.progress import FileProgress, Progress, RanksProgress
from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.source.streams import ByteSource, FileIdentity


def check_openable(path: str) -> None:
    """Raise :class:`~proftui.core.model.errors.ProftuiError`, with the sentence load_trace would
    end with, for what is wrong with `path` that shows without indexing it: no such path, a
    folder holding nothing proftui reads, a file that cannot be opened (a directory, a pipe,
    no permission) or whose first bytes are no Chrome trace. A path that passes can still
    fail later (a profile whose every timeline is unreadable); damage inside a file is
    counted, never fatal."""
    try:
        if _discovered(path, None, use_cache=True)[1] is not None:
            return  # discovered before, and nothing it looked at changed
    except SeveralRunsError:
        return  # so it holds something to open
    discover(path)
    if not os.path.isdir(path):
        from proftui.core.importers.chrome.head import find_events

        source = ByteSource(path)
        find_events(source.chunks(1 << 16), source)


def load_trace(path: str, *, run: int | None = None, use_cache: bool = True,
               progress: Progress | None = None, cancelled: Callable[[], bool] | None = None,
               batch_bytes: int | None = None,
               file_progress: FileProgress | None = None,
               keep: Callable[[str], bool] | None = None,
               ranks_progress: RanksProgress | None = None) -> TraceIndex:
    """Open a trace file or a profile directory: from the cache, else by indexing it
    (`batch_bytes` at a time; None: the parser's default), saying how far it got to
    `progress` and, of a profile of several timelines, which one it is at to `file_progress`
    and how far each one has got (read here or by a worker, or merged from the rank cache) to
    `ranks_progress` (see :func:`proftui.core.load.indexing.index_files`).

    A directory is one profile: its timelines (see :mod:`proftui.core.discover.profile`) are indexed
    together, each rank or device a group of tracks; `meta["profile"]` says what was found,
    used and left out. A directory holding several separate runs (see
    :mod:`proftui.core.discover.runs`) opens the one numbered `run`. Raises
    :class:`~proftui.core.discover.runs.SeveralRunsError` when it holds several and `run` is None,
    :class:`~proftui.core.model.errors.ProftuiError` (with a readable message) for a path that
    cannot be read or holds no trace or no such run, and
    :class:`~proftui.core.model.errors.Cancelled` when `cancelled` returns True during indexing.

    `keep` limits a directory to the files it accepts (those a job has finished writing: see
    :mod:`proftui.core.load.watch`); its discovery is then not cached (the folder's other
    files would make it a different answer), while the index cache is used as ever.
    """
    opening = _opening(path, run, use_cache, keep)
    sources, used, clocks = opening.sources, opening.used, opening.clocks
    if use_cache:
        index = _from_cache(opening)
        if index is not None:
            return index
    from proftui.core.load.indexing import index_files

    index = index_files(sources, used, clocks, progress=progress, cancelled=cancelled,
                        batch_bytes=batch_bytes, memory=opening.memory,
                        file_progress=file_progress, ranks_progress=ranks_progress,
                        cache_since_ns=opening.read_start_ns if use_cache else None)
    _note_clocks(index, clocks, several_groups=len({t.group for t in used}) > 1)
    if len(sources) > 1:
        _note_mixed_clocks(index, sources, clocks, [t.kind for t in used])
    index.meta["profile"] = describe(opening.layout)
    if not use_cache:
        index.meta["no_cache"] = True  # its summary tables are read afresh too (overview)
    if use_cache and (sources or opening.memory):
        try:
            cache.store(index, opening.identities, opening.options, opening.read_start_ns)
            store_seek_points(index, sources)
        except cache.CacheNotWritten as exc:
            index.meta["cache_error"] = str(exc)
    return index


def cached_trace(path: str, run: int | None = None) -> TraceIndex | None:
    """The index of a trace file or profile directory (run `run` of a folder of several) from
    the cache, when it holds a current one; None otherwise: nothing is indexed. Raises as
    :func:`load_trace` does for a path that cannot be opened."""
    return _from_cache(_opening(path, run, use_cache=True))


def profile_layout(path: str, run: int | None = None, use_cache: bool = True) -> ProfileLayout:
    """What discovery finds in `path` (its run `run`): from the discovery cache when it holds a
    current entry (a folder opened before), else discovered now (not stored: an entry holds
    the timelines' clocks too, which only opening reads). Raises as
    :func:`proftui.core.discover.runs.open_run` does."""
    found = _discovered(path, run, use_cache)[1]
    return found.layout if found is not None else open_run(path, run)


def _discovered(path: str, run: int | None, use_cache: bool
                ) -> tuple[discovery_cache.Fingerprint | None, discovery_cache.Discovered | None]:
    """The fingerprint of `path` (None without the cache, or for a path that has none) and
    what discovery found there before, if it is cached and current (else None)."""
    fingerprint = discovery_cache.Fingerprint.of(path) if use_cache else None
    found = discovery_cache.load(fingerprint, run, path) if fingerprint is not None else None
    return fingerprint, found


@dataclass
class _Opening:
    """What a path opens: its layout, the timelines that can be read (with their clocks) and
    the memory CSVs joining them, and what identifies them in the cache."""

    layout: ProfileLayout
    sources: list[ByteSource]
    used: list[TimelineFile]
    clocks: list[ClockOffset]
    memory: dict[str, list[str]]
    identities: list[FileIdentity]
    options: str
    read_start_ns: int  # when reading them began (see cache.settle); 0 without the cache


def _opening(path: str, run: int | None, use_cache: bool,
             keep: Callable[[str], bool] | None = None) -> _Opening:
    fingerprint, found = _discovered(path, run, use_cache and keep is None)
    if found is not None:
        layout, discovered_ns = found.layout, 0
    else:
        layout, discovered_ns = _discover(path, run, fingerprint, keep)
    # A SQLite export's -wal or -journal holds some of its content: part of its identity; so
    # do the memory CSVs whose counters join their rank's timeline.
    side = _sidecars([t.path for t in layout.timelines if t.kind == DB_KIND])
    memory = memory_csvs(layout)
    side += [p for paths in memory.values() for p in paths]
    # Before the files are opened (their first bytes tell gzip from plain): see cache.settle.
    read_start_ns = cache.settle([t.path for t in layout.timelines] + side) if use_cache else 0
    sources: list[ByteSource] = []
    used: list[TimelineFile] = []
    for timeline in layout.timelines:
        try:
            sources.append(ByteSource(timeline.path))
            used.append(timeline)
        except ProftuiError as exc:
            layout.skipped.append((timeline.path, str(exc)))
            if not os.path.isdir(path):
                raise  # the one file asked for: its own sentence
    if layout.timelines and not sources:
        raise ProftuiError(f"{path}: none of its timelines can be read.")
    identities = [s.identity for s in sources] + _identities(side)
    if found is not None and len(found.clocks) == len(used):
        clocks = found.clocks
    else:
        clocks = [offset_for(t.path, t.kind, s) for t, s in zip(used, sources)]
        if fingerprint is not None and len(used) == len(layout.timelines):
            discovery_cache.store(fingerprint, run, discovered_ns,
                                  discovery_cache.Discovered(layout, clocks))
    # The clocks are in the key: a start_info that changes re-indexes the profile.
    options = cache.json_bytes([[t.group, t.kind, c.offset_ns, c.describe()]
                                for t, c in zip(used, clocks)]).decode()
    return _Opening(layout, sources, used, clocks, memory, identities, options, read_start_ns)


def _discover(path: str, run: int | None, fingerprint: discovery_cache.Fingerprint | None,
              keep: Callable[[str], bool] | None = None) -> tuple[ProfileLayout, int]:
    """Discover `path` (its run `run`; the files `keep` accepts), and when it was begun (see
    cache.settle; 0 without a fingerprint, when nothing is cached). Several runs found are
    cached as such, then raised."""
    discovered_ns = discovery_cache.settle(fingerprint) if fingerprint is not None else 0
    try:
        return open_run(path, run, keep), discovered_ns
    except SeveralRunsError as exc:
        if fingerprint is not None:
            discovery_cache.store(fingerprint, run, discovered_ns, exc)
        raise


def check_not_empty(index: TraceIndex, path: str) -> None:
    """Raise ProftuiError for a trace that holds no event and a profile with nothing else to
    show (no summary table, no communication file): an empty ruler answers nothing. The
    commands and the app ask it of what load_trace opened (which opens it all the same)."""
    profile = index.meta.get("profile") or {}
    if profile.get("tables") or profile.get("comm"):
        return
    if sum(index.meta.get("phase_counts", {}).values()) or any(
            len(index.arrays.get(name, ())) for name in
            ("slices.start", "instants.ts", "counters.sample_ts")):
        return
    raise ProftuiError(f"{path} has no events (its event array is empty, or the file ends "
                       "before the first event).")


def _from_cache(opening: _Opening) -> TraceIndex | None:
    """The cached index of what `opening` opens; None when there is none that is current."""
    if not (opening.sources or opening.memory):
        return None
    try:
        index = cache.load(opening.identities, opening.options)
    except cache.CacheMiss:
        return None
    index.meta["from_cache"] = True
    index.meta["profile"] = describe(opening.layout)
    return index


def _sidecars(databases: list[str]) -> list[str]:
    """The -wal and -journal files beside these SQLite exports that exist now."""
    if not databases:
        return []
    from proftui.core.source.dbfile import sidecars

    return [p for path in databases for p in sidecars(path)]


def _identities(paths: list[str]) -> list[FileIdentity]:
    """The identities of the files that still exist (a -wal may go as it is checkpointed)."""
    out = []
    for p in paths:
        try:
            out.append(FileIdentity.of(p))
        except OSError:
            pass
    return out


def describe(layout: ProfileLayout) -> dict[str, Any]:
    """What discovery found, as plain data for the index's metadata."""
    return {
        "root": layout.root,
        "layouts": layout.layouts,
        "groups": layout.groups,
        "timelines": [{"path": t.path, "group": t.group, "kind": t.kind}
                      for t in layout.timelines],
        "tables": [{"path": t.path, "group": t.group, "kind": t.kind,
                    **({"source": t.source} if t.source else {})} for t in layout.tables],
        "skipped": [{"path": p, "why": why} for p, why in layout.skipped],
        "run": layout.run,
        "ranks": layout.ranks,
        "comm": [{"path": c.path, "group": c.group, "kind": c.kind} for c in layout.comm],
    }


def _note_clocks(index: TraceIndex, clocks: list[ClockOffset], several_groups: bool) -> None:
    """Say in each source's metadata which clock offset it got; count the failures.

    A lone device without its start_info misaligns nothing, so only the metadata says so
    then; a garbled reference, or a missing one among several ranks or devices, is counted.
    """
    for entry, clock in zip(index.meta.get("sources", []), clocks):
        entry.update(clock.describe())
        if clock.problem and (several_groups or not clock.reference_missing):
            index.diagnostics.add("clock_unaligned", 1, None,
                                  f"{os.path.basename(entry['path'])}: {clock.problem}")


def _note_mixed_clocks(index: TraceIndex, sources: list[ByteSource],
                       clocks: list[ClockOffset], timeline_kinds: list[str]) -> None:
    """Say so when some timelines are on the wall clock and others on their own (zero-based
    or monotonic): one axis then spans decades, and their times do not line up.

    Runs never mix clocks (see core.runs); one capture folder still can (a PROF dir with a
    device lacking its start_info, a folder of unrelated traces). Sources already counted
    for a failed alignment are not counted twice.
    """
    # A SQLite export's times are epoch ns by definition.
    kinds = [WALL_CLOCK if kind == DB_KIND else clock_of(first_ts_ns(s, c.offset_ns))
             for s, c, kind in zip(sources, clocks, timeline_kinds)]
    if WALL_CLOCK not in kinds or OWN_CLOCK not in kinds:
        return
    own = [(entry, clock) for entry, clock, kind in zip(index.meta.get("sources", []), clocks,
                                                         kinds) if kind == OWN_CLOCK]
    names = []
    for entry, clock in own:
        if not clock.problem:
            entry["clock"] = "own clock (zero-based or monotonic), not the others' wall clock"
            names.append(os.path.basename(entry["path"]))
    if names:
        index.diagnostics.add("mixed_clocks", len(names), None,
                              f"{', '.join(names[:5])}{' ...' if len(names) > 5 else ''}: "
                              f"own clock beside {kinds.count(WALL_CLOCK)} on the wall clock")
