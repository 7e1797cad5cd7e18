"""Opening a trace or a profile: from the cache when it is current, else by indexing it."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from proftui.core.cache import discovery as discovery_cache
from proftui.core.cache import indexes as cache
from proftui.core.cache import ranks as rank_cache
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
from proftui.core.load.file_pool import POOL_MIN_BYTES, FileJob, FilePool, worker_count
from proftui.core.load.memory_csv import memory_csvs
from proftui.core.model.errors import NotATraceError, ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.runtime.malloc import indexing
from proftui.core.runtime.records import StaleRecord
from proftui.core.runtime.workers import Failed, Worker
from proftui.core.source.streams import ByteSource, FileIdentity

# What indexing needs (the parser, msgspec, the builder, SQLite) is imported when a trace is
# indexed, not to reopen one from the cache (see bench/bench_reopen.py).
if TYPE_CHECKING:
    from proftui.core.importers.chrome.events import ChromeEvents
    from proftui.core.importers.chrome.file_read import FileRead
    from proftui.core.importers.chrome.read import BatchRecord, ChromeJsonReader

Progress = Callable[[int, int, int], None]  # (bytes read, bytes total, events so far)
# Each timeline of a profile of several, as its indexing begins: (its number from 1, how many
# there are, its name: the group (rank or device) and the file's name).
FileProgress = Callable[[int, int, str], None]

_KEPT_METADATA = ("displayTimeUnit", "baseTimeNanoseconds", "schemaVersion", "traceName",
                  "distributedInfo", "span_indx", "trace_id")


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
        from proftui.core.importers.chrome.read import ChromeJsonReader
        from proftui.core.model.diagnostics import Diagnostics

        ChromeJsonReader(ByteSource(path), Diagnostics()).check_head()


def load_trace(path: str, *, run: int | None = None, use_cache: bool = True,
               progress: Progress | None = None, cancelled: Callable[[], bool] | None = None,
               batch_bytes: int | None = None,
               file_progress: FileProgress | None = None) -> TraceIndex:
    """Open a trace file or a profile directory: from the cache, else by indexing it
    (`batch_bytes` at a time; None: the parser's default), saying how far it got to
    `progress` and, of a profile of several timelines, which one it is at to `file_progress`.

    A directory is one profile: its timelines (see :mod:`proftui.core.discover.profile`) are indexed
    together, each rank or device a group of tracks; `meta["profile"]` says what was found,
    used and left out. A directory holding several separate runs (see
    :mod:`proftui.core.discover.runs`) opens the one numbered `run`. Raises
    :class:`~proftui.core.discover.runs.SeveralRunsError` when it holds several and `run` is None,
    :class:`~proftui.core.model.errors.ProftuiError` (with a readable message) for a path that
    cannot be read or holds no trace or no such run, and
    :class:`~proftui.core.model.errors.Cancelled` when `cancelled` returns True during indexing.
    """
    opening = _opening(path, run, use_cache)
    sources, used, clocks = opening.sources, opening.used, opening.clocks
    if use_cache:
        index = _from_cache(opening)
        if index is not None:
            return index
    index = index_files(sources, used, clocks, progress=progress, cancelled=cancelled,
                        batch_bytes=batch_bytes, memory=opening.memory,
                        file_progress=file_progress,
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


def _opening(path: str, run: int | None, use_cache: bool) -> _Opening:
    fingerprint, found = _discovered(path, run, use_cache)
    if found is not None:
        layout, discovered_ns = found.layout, 0
    else:
        layout, discovered_ns = _discover(path, run, fingerprint)
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


def _discover(path: str, run: int | None,
              fingerprint: discovery_cache.Fingerprint | None) -> tuple[ProfileLayout, int]:
    """Discover `path` (its run `run`), and when it was begun (see cache.settle; 0 without a
    fingerprint, when nothing is cached). Several runs found are cached as such, then raised."""
    discovered_ns = discovery_cache.settle(fingerprint) if fingerprint is not None else 0
    try:
        return open_run(path, run), discovered_ns
    except SeveralRunsError as exc:
        if fingerprint is not None:
            discovery_cache.store(fingerprint, run, discovered_ns, exc)
        raise


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


def index_files(sources: list[ByteSource], timelines: list[TimelineFile],
                clocks: list[ClockOffset], *, progress: Progress | None = None,
                cancelled: Callable[[], bool] | None = None, batch_bytes: int | None = None,
                memory: dict[str, list[str]] | None = None, workers: int | None = None,
                file_progress: FileProgress | None = None,
                cache_since_ns: int | None = None) -> TraceIndex:
    """Index the timeline files of a profile into one index: the tracks of each file
    qualified by its group when there are several groups, with the counters of each group's
    memory CSVs (see core.importers.memory_csv).

    With `cache_since_ns` (when reading the files began, see cache.settle), each trace file of
    a profile of several is merged from its entry in the cache when it holds a current one
    (:mod:`proftui.core.cache.ranks`; ``meta["ranks_cached"]`` counts them), and each read
    afresh is read into a builder of its own and stored as its entry; None: no entry is read
    or written.

    A lone trace file (no other group's memory CSVs beside it) is the profile: when it is not
    a trace its own sentence is raised rather than counted, and a large uncompressed one is
    split near its middle at a proven event boundary, its second half indexed by a second
    process, when `workers` (default: the cores, at most 2) allows it. Each file of several
    is named to `file_progress` as it is begun; `batch_bytes` None is the parser's default.
    """
    from proftui.core.importers.chrome.read import BATCH_BYTES

    batch_bytes = batch_bytes or BATCH_BYTES
    memory = memory or {}
    lone = (len(sources) == 1 and importer_for(timelines[0].kind).in_workers
            and set(memory) <= {timelines[0].group})
    parts = _parts(sources[0], workers) if lone else 1
    if parts > 1:
        with indexing():
            index = _index_parallel(sources[0], progress, cancelled, batch_bytes,
                                    clocks[0].offset_ns, memory.get(timelines[0].group, ()),
                                    parts=parts)
        if index is not None:
            return index
    run = _Indexing(sources, timelines, clocks, memory, batch_bytes, cancelled, lone,
                    cache_since_ns)
    total = sum(s.size for s in sources)
    done_before = 0
    try:
        with indexing():
            for number, (source, timeline) in enumerate(zip(sources, timelines)):

                def step(done: int, _total: int, events: int,
                         base: int = done_before) -> None:
                    if progress is not None:
                        progress(base + done, total, events)

                done_before += source.size
                run.begin(number)
                if file_progress is not None and len(sources) > 1:
                    name = os.path.basename(timeline.path)
                    file_progress(number + 1, len(sources),
                                  f"{timeline.group} ({name})" if timeline.group else name)
                importer_for(timeline.kind).read(run, number, step)
            run.add_memory_csvs()
    finally:
        run.close()
    return run.build()


class _Indexing:
    """A profile's timeline files being indexed one after another into one builder: what
    each file's importer needs (the builder, its Chrome event sink, the batch size, the rank
    cache's keys, the worker pool) and what they leave for the index (batches, the files'
    metadata, how each database was read)."""

    def __init__(self, sources: list[ByteSource], timelines: list[TimelineFile],
                 clocks: list[ClockOffset], memory: dict[str, list[str]], batch_bytes: int,
                 cancelled: Callable[[], bool] | None, lone: bool,
                 cache_since_ns: int | None) -> None:
        from proftui.core.build.builder import TraceBuilder
        from proftui.core.importers.chrome.events import ChromeEvents
        from proftui.core.model.diagnostics import Diagnostics

        self.sources, self.timelines, self.clocks = sources, timelines, clocks
        self.memory = memory
        self.batch_bytes = batch_bytes
        self.cancelled = cancelled
        self.lone = lone
        self.cache_since_ns = cache_since_ns
        self.diagnostics = Diagnostics()
        self.builder = TraceBuilder(self.diagnostics)
        self.events = ChromeEvents(self.builder)  # one for all files: it remembers labels
        self.grouped = len({t.group for t in timelines} | set(memory)) > 1
        self.batches: list[BatchRecord] = []
        self.batch_files: list[int] = []
        self.next_ordinal = 0
        self.metadata: dict[str, Any] = {}
        self.databases: dict[int, dict[str, Any]] = {}  # file number -> how it was read
        pooled_kinds = [importer_for(t.kind).in_workers for t in timelines]
        self.ranked = cache_since_ns is not None and sum(pooled_kinds) > 1
        self.keys = [rank_cache.Key(s.identity, t.group if self.grouped else None,
                                    c.offset_ns, batch_bytes)
                     if self.ranked and in_workers else None
                     for s, t, c, in_workers in zip(sources, timelines, clocks, pooled_kinds)]
        # Each entry is loaded as its turn comes (one at a time in memory, not all); one
        # found damaged then is read here.
        self.cached = {n for n, key in enumerate(self.keys)
                       if key is not None and key.path().exists()}
        self.ranks_cached = 0
        self.pool = _pool(sources, timelines, clocks, self.grouped, batch_bytes, self.cached)
        self.pooled = self.pool.results(cancelled) if self.pool is not None else None

    def begin(self, number: int) -> None:
        """Point the builder at file `number`: its group, its clock, its first ordinal."""
        self.builder.tracks.set_group(self.timelines[number].group if self.grouped else None)
        self.builder.time_offset_ns = self.clocks[number].offset_ns
        self.builder.ref_base = self.next_ordinal  # events of all files number on

    def add_file(self, number: int, batches: list[BatchRecord], n_events: int) -> None:
        """The batches (ordinals from 0) and event count of file `number`, read."""
        from proftui.core.importers.chrome.read import BatchRecord

        self.batches += [BatchRecord(b.start, b.end, b.first_ordinal + self.next_ordinal,
                                     b.final) for b in batches]
        self.batch_files += [number] * len(batches)
        self.next_ordinal += n_events

    def add_memory_csvs(self) -> None:
        """The counters of each group's memory CSVs, on the clock of its timeline (torch_npu
        and msprof 8 write the same)."""
        from proftui.core.load.memory_csv import add_memory_csvs

        for group, paths in self.memory.items():
            self.builder.tracks.set_group(group if self.grouped else None)
            self.builder.time_offset_ns = next((c.offset_ns for t, c in
                                                zip(self.timelines, self.clocks)
                                                if t.group == group), 0)
            add_memory_csvs(self.builder, paths, self.diagnostics)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()

    def build(self) -> TraceIndex:
        """The index of everything read."""
        metadata = self.metadata
        if not self.lone:  # a lone file keeps the entry _metadata gave it (no group, no kind)
            metadata["sources"] = [
                {"path": s.identity.path, "size": s.size, "compressed": s.compressed,
                 "group": t.group, "kind": t.kind,
                 **({"sqlite": self.databases[n]} if n in self.databases else {})}
                for n, (s, t) in enumerate(zip(self.sources, self.timelines))]
        if self.ranked:
            metadata["ranks_cached"] = self.ranks_cached
        table = _batch_table(self.batches)
        table["file"] = np.array(self.batch_files, np.int32)
        with indexing():
            return self.builder.build(metadata, table)


class _SqliteTimeline:
    """A SQLite export (msprof's or torch_npu's), read here, table by table."""

    in_workers = False  # read by this process (it has a second one of its own: Prefetch)

    @staticmethod
    def read(run: _Indexing, number: int, step: Progress) -> None:
        from proftui.core.importers.ascend_db.timeline import import_db
        from proftui.core.importers.chrome.read import BatchRecord

        source = run.sources[number]
        try:
            got = import_db(
                source.path, run.builder, run.diagnostics, cancelled=run.cancelled,
                progress=lambda done, total, events, size=source.size:
                step(size * done // max(total, 1), 0, events))
        except NotATraceError as exc:
            if len(run.sources) == 1:
                raise  # the one timeline of the profile: its own sentence
            run.diagnostics.add("unreadable_file", 1, None, str(exc))
            return
        # One empty batch: its ordinals are rows of the database (see read_args).
        run.add_file(number, [BatchRecord(0, 0, 0, True)], got.n_refs)
        run.databases[number] = {"opened": got.opened, "refs": got.refs, **got.facts}
        run.metadata.setdefault("format", "sqlite")


class _ChromeTimeline:
    """A Chrome-trace JSON file (plain or gzip): merged from its rank entry or from what a
    worker read, else read here."""

    in_workers = True  # a worker or the rank cache can read it into a builder of its own

    @staticmethod
    def read(run: _Indexing, number: int, step: Progress) -> None:
        source, key = run.sources[number], run.keys[number]
        result = rank_cache.load(key) if number in run.cached else None
        if result is not None:
            run.ranks_cached += 1
        else:
            if run.pooled is not None and number not in run.cached:
                result = next(run.pooled)[1]
            elif key is not None:
                result = _read_alone(source, key, step, run.cancelled)
            if (key is not None and run.cache_since_ns is not None
                    and result is not None and not isinstance(result, Failed)):
                rank_cache.store(key, result, run.cache_since_ns)
        if (result is not None and not isinstance(result, Failed)
                and result.seek_points is not None):
            source.seek_points = result.seek_points  # kept beside the index
        reader = _read_json(source, run.events, run.batch_bytes, step, run.cancelled, result,
                            run.lone)
        if reader is None:
            return
        run.add_file(number, reader.batches, reader.n_events)
        for key_, value in _metadata(reader, source).items():
            if key_ == "format" and run.metadata.get(key_) == "sqlite":
                run.metadata[key_] = value  # the JSON's form says more
            run.metadata.setdefault(key_, value)


# Each kind of timeline file (as discovery names it) -> its importer; every kind not named
# here is a Chrome trace (discovery names those by layout: trace, msprof, torch_npu ...).
_IMPORTERS: dict[str, type[_SqliteTimeline] | type[_ChromeTimeline]] = {
    DB_KIND: _SqliteTimeline}


def importer_for(kind: str) -> type[_SqliteTimeline] | type[_ChromeTimeline]:
    """The importer of a timeline file of `kind`."""
    return _IMPORTERS.get(kind, _ChromeTimeline)


def _pool(sources: list[ByteSource], timelines: list[TimelineFile],
          clocks: list[ClockOffset], grouped: bool, batch_bytes: int,
          cached: set[int]) -> FilePool | None:
    """Worker processes for the trace files of a profile (but those numbered in `cached`),
    when there are several and enough bytes to be worth starting them; None to read them all
    here."""
    jobs = [FileJob(n, s.path, t.group if grouped else None, c.offset_ns, batch_bytes)
            for n, (s, t, c) in enumerate(zip(sources, timelines, clocks))
            if importer_for(t.kind).in_workers and n not in cached]
    workers = worker_count(len(jobs))
    if workers < 2 or sum(sources[j.number].size for j in jobs) < POOL_MIN_BYTES:
        return None
    return FilePool(jobs, workers)


def _read_json(source: ByteSource, events: ChromeEvents, batch_bytes: int,
               progress: Progress, cancelled: Callable[[], bool] | None,
               got: FileRead | Failed | None, lone: bool) -> ChromeJsonReader | None:
    """One trace file into the builder of `events`: merged from `got` (what a worker, this
    process or the cache read into a builder of its own: see chrome_read.read_alone), else read
    here (also when the worker failed: its problems are then counted here). None when it is not a
    trace (counted as an unreadable file), unless it is `lone`: then that is raised."""
    from proftui.core.importers.chrome.read import ChromeJsonReader

    builder = events.builder
    reader = ChromeJsonReader(source, builder.diagnostics, batch_bytes=batch_bytes)
    if got is not None and not isinstance(got, Failed):
        try:
            builder.merge(got.state, builder.ref_base)
        except StaleRecord:
            got = None  # of another version (nothing was merged): read here
        else:
            reader.batches, reader.n_events = got.batches, got.n_events
            reader.metadata.update(got.metadata)
            progress(source.size, 0, builder.ref_base + reader.n_events)
            return reader
    try:
        reader.read(events.add_events, progress=progress, cancelled=cancelled)
    except NotATraceError as exc:
        if lone:
            raise  # the one trace asked for: its own sentence
        builder.diagnostics.add("unreadable_file", 1, None, str(exc))
        return None
    return reader


def read_alone(source: ByteSource, group: str | None, offset_ns: int, batch_bytes: int,
               progress: Progress | None = None,
               cancelled: Callable[[], bool] | None = None) -> FileRead:
    """See :func:`proftui.core.importers.chrome.file_read.read_alone` (imported when a file is
    read, not to reopen one from the cache)."""
    from proftui.core.importers.chrome import file_read as chrome_read

    return chrome_read.read_alone(source, group, offset_ns, batch_bytes, progress=progress,
                                  cancelled=cancelled)


def _read_alone(source: ByteSource, key: rank_cache.Key, progress: Progress,
                cancelled: Callable[[], bool] | None) -> FileRead | None:
    """One trace file read here into a builder of its own (to keep as its rank entry); None
    when it is not a trace (:func:`_read_json` then reads and counts it as one)."""
    try:
        return read_alone(source, key.group, key.offset_ns, key.batch_bytes,
                          progress=progress, cancelled=cancelled)
    except NotATraceError:
        return None


def index_file(source: ByteSource, *, progress: Progress | None = None,
               cancelled: Callable[[], bool] | None = None,
               batch_bytes: int | None = None, workers: int | None = None,
               offset_ns: int = 0, memory_files: Sequence[str] = ()) -> TraceIndex:
    """Index one trace file, without the cache (see :func:`index_files`, of a list of one);
    `offset_ns` is added to every timestamp; the counters of `memory_files` (its rank's
    memory CSVs) join it."""
    return index_files([source], [TimelineFile(source.path, "", "trace")],
                       [ClockOffset(offset_ns)], progress=progress, cancelled=cancelled,
                       batch_bytes=batch_bytes, memory={"": list(memory_files)},
                       workers=workers)


def _parts(source: ByteSource, workers: int | None) -> int:
    """In how many processes to index a lone file (see :func:`_index_parallel`): one per
    usable core (or `workers`), up to MAX_PARTS, each part at least half PARALLEL_MIN_BYTES;
    one for a compressed file (it cannot be entered in the middle)."""
    workers = worker_count(MAX_PARTS) if workers is None else workers
    if source.compressed:
        return 1
    return max(1, min(workers, MAX_PARTS, 2 * source.size // PARALLEL_MIN_BYTES))


PARALLEL_MIN_BYTES = 192 << 20  # below this, starting a second interpreter costs more than it saves
MAX_PARTS = 8  # the parent merges the parts and builds the index alone


def _index_parallel(source: ByteSource, progress: Progress | None,
                    cancelled: Callable[[], bool] | None, batch_bytes: int,
                    offset_ns: int = 0, memory_files: Sequence[str] = (), *,
                    parts: int = 2) -> TraceIndex | None:
    """Index a plain file in `parts` parts, the first here and each other in a process of its
    own, merged in order; None if it cannot be split (then it is indexed in one piece)."""
    from proftui.core.build.builder import TraceBuilder
    from proftui.core.importers.chrome.events import ChromeEvents
    from proftui.core.importers.chrome.file_read import READ_JOB, FileRead, ReadJob
    from proftui.core.importers.chrome.read import BatchRecord, ChromeJsonReader
    from proftui.core.load.memory_csv import add_memory_csvs
    from proftui.core.model.diagnostics import Diagnostics

    diagnostics = Diagnostics()
    reader = ChromeJsonReader(source, diagnostics, batch_bytes=batch_bytes)
    # Workers start a fraction of a second late (a fresh interpreter): give them a little less.
    late = min(source.size // (16 * parts), 32 << 20)
    splits: list[int] = []
    for k in range(1, parts):
        split = reader.find_split(source.size * k // parts + late, 0)
        if split is None or (splits and split <= splits[-1]):
            return None
        splits.append(split)
    workers = [Worker(READ_JOB, [ReadJob(source.path, None, offset_ns, batch_bytes, start,
                                         None if end < 0 else end)])
               for start, end in zip(splits, splits[1:] + [-1])]
    try:
        builder = TraceBuilder(diagnostics)
        builder.time_offset_ns = offset_ns

        def all_parts(done: int, total: int, events: int) -> None:
            if progress is not None:  # assume the other parts go as fast as this one
                progress(min(parts * done, total), total, parts * events)

        reader.read(ChromeEvents(builder).add_events, progress=all_parts, cancelled=cancelled,
                    region=(0, splits[0]))
        if reader.closed:
            return None  # a split fell after the event array: index the file in one piece
        batches = list(reader.batches)
        for number, worker in enumerate(workers, 1):
            result = worker.result(FileRead)
            if isinstance(result, Failed) or (result.closed and number < len(workers)):
                return None
            try:
                builder.merge(result.state, reader.n_events)
            except StaleRecord:
                return None
            reader.metadata.update({k: v for k, v in result.metadata.items()
                                    if k not in reader.metadata})
            batches += [BatchRecord(b.start, b.end, b.first_ordinal + reader.n_events, b.final)
                        for b in result.batches]
            reader.n_events += result.n_events
        add_memory_csvs(builder, memory_files, diagnostics)
        if progress is not None:
            progress(source.size, source.size, reader.n_events)
        return builder.build(_metadata(reader, source), _batch_table(batches))
    finally:
        for worker in workers:
            worker.stop()


def _metadata(reader: ChromeJsonReader, source: ByteSource) -> dict[str, Any]:
    metadata: dict[str, Any] = {k: reader.metadata[k] for k in _KEPT_METADATA
                                if k in reader.metadata}
    metadata["format"] = reader.metadata.get("format")
    metadata["sources"] = [{"path": source.identity.path, "size": source.size,
                            "compressed": source.compressed}]
    return metadata


def _batch_table(batches: list[BatchRecord]) -> dict[str, np.ndarray]:
    return {
        "file": np.zeros(len(batches), np.int32),
        "start": np.array([r.start for r in batches], np.int64),
        "end": np.array([r.end for r in batches], np.int64),
        "first_ordinal": np.array([r.first_ordinal for r in batches], np.int64),
        "final": np.array([r.final for r in batches], np.bool_),
    }
