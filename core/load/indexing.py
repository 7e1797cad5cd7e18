"""Indexing the timeline files of a profile into one index, each through the importer its
kind names, in worker processes when there are several (see file_pool) or in parts when one
file is large (see split)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from proftui.core.cache import ranks as rank_cache
from proftui.core.discover.clock import (
    ClockOffset,
)
from proftui.core.discover.profile import DB_KIND, TimelineFile
from proftui.core.load.file_pool import POOL_MIN_BYTES, FileJob, FilePool, worker_count
from proftui.core.load.progress import FileProgress, Progress, RanksProgress, RanksTracker
from proftui.core.load.split import index_in_parts, parts_for
from proftui.core.model.errors import NotATraceError
from proftui.core.model.index import TraceIndex
from proftui.core.runtime.cores import usable_cores
from proftui.core.runtime.malloc import indexing
from proftui.core.runtime.records import StaleRecord
from proftui.core.runtime.workers import Failed
from proftui.core.source.streams import ByteSource

# What indexing needs (the parser, msgspec, the builder, SQLite) is imported when a trace is
# indexed, not to reopen one from the cache (see bench/bench_reopen.py).
if TYPE_CHECKING:
    from proftui.core.importers.chrome.events import ChromeEvents
    from proftui.core.importers.chrome.file_read import FileRead
    from proftui.core.importers.chrome.read import BatchRecord, ChromeJsonReader


def index_files(sources: list[ByteSource], timelines: list[TimelineFile],
                clocks: list[ClockOffset], *, progress: Progress | None = None,
                cancelled: Callable[[], bool] | None = None, batch_bytes: int | None = None,
                memory: dict[str, list[str]] | None = None, workers: int | None = None,
                file_progress: FileProgress | None = None,
                ranks_progress: RanksProgress | None = None,
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
    is named to `file_progress` as it is begun, and every file's state and bytes read (those
    the worker processes read too, and those merged from the rank cache) are said to
    `ranks_progress` a few times a second (see :class:`RanksTracker`) and once at the end;
    `batch_bytes` None is the parser's default.
    """
    from proftui.core.importers.chrome.read import BATCH_BYTES

    batch_bytes = batch_bytes or BATCH_BYTES
    memory = memory or {}
    ahead = read_ahead(workers)
    lone = (len(sources) == 1 and importer_for(timelines[0].kind).in_workers
            and set(memory) <= {timelines[0].group})
    parts = parts_for(sources[0], workers) if lone else 1
    if parts > 1:
        with indexing():
            index = index_in_parts(sources[0], progress, cancelled, batch_bytes,
                                    clocks[0].offset_ns, memory.get(timelines[0].group, ()),
                                    parts=parts, read_ahead=ahead and usable_cores() >= 2 * parts,
                                    build_threads=2 if ahead else 1)
        if index is not None:
            return index
    run = _Indexing(sources, timelines, clocks, memory, batch_bytes, cancelled, lone,
                    cache_since_ns, ahead)
    tracker = _tracker(run, ranks_progress)
    total = sum(s.size for s in sources)
    done_before = 0
    try:
        with indexing():
            for number, (source, timeline) in enumerate(zip(sources, timelines)):

                def step(done: int, _total: int, events: int,
                         base: int = done_before, number: int = number) -> None:
                    if progress is not None:
                        progress(base + done, total, events)
                    if tracker is not None:
                        tracker.reading(number, done)

                done_before += source.size
                run.begin(number)
                if file_progress is not None and len(sources) > 1:
                    name = os.path.basename(timeline.path)
                    file_progress(number + 1, len(sources),
                                  f"{timeline.group} ({name})" if timeline.group else name)
                cached_before = run.ranks_cached
                importer_for(timeline.kind).read(run, number, step)
                if tracker is not None:
                    tracker.finished(number, cached=run.ranks_cached > cached_before)
            run.add_memory_csvs()
            if tracker is not None:
                tracker.flush()
    finally:
        run.close()
    return run.build()


def read_ahead(workers: int | None) -> bool:
    """Whether a file read in this process reads its next batch in a thread of its own (see
    ChromeJsonReader): when `workers` (None: the default) allows more than one core and the
    process has more than one. (A file split in parts reads ahead only where each part has
    a second core: two parts reading ahead on two cores took 6 % longer than without, 1 GB
    Kineto-like, 8 runs each.)"""
    return (workers is None or workers > 1) and usable_cores() > 1


def _tracker(run: _Indexing, report: RanksProgress | None) -> RanksTracker | None:
    """Each file's progress for `report`, of a profile of several files (None otherwise);
    told by the worker pool too."""
    if report is None or len(run.sources) < 2:
        return None
    names = [t.group or os.path.basename(t.path) for t in run.timelines]
    tracker = RanksTracker(names, [s.size for s in run.sources], report)
    if run.pool is not None:
        run.pool.on_progress = tracker.reading
    return tracker


class _Indexing:
    """A profile's timeline files being indexed one after another into one builder: what
    each file's importer needs (the builder, its Chrome event sink, the batch size, the rank
    cache's keys, the worker pool) and what they leave for the index (batches, the files'
    metadata, how each database was read)."""

    def __init__(self, sources: list[ByteSource], timelines: list[TimelineFile],
                 clocks: list[ClockOffset], memory: dict[str, list[str]], batch_bytes: int,
                 cancelled: Callable[[], bool] | None, lone: bool,
                 cache_since_ns: int | None, read_ahead: bool) -> None:
        from proftui.core.build.builder import TraceBuilder
        from proftui.core.importers.chrome.events import ChromeEvents
        from proftui.core.model.diagnostics import Diagnostics

        self.sources, self.timelines, self.clocks = sources, timelines, clocks
        self.memory = memory
        self.batch_bytes = batch_bytes
        self.read_ahead = read_ahead
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
        from proftui.core.importers.chrome.read import batch_table

        table = batch_table(self.batches)
        table["file"] = np.array(self.batch_files, np.int32)
        with indexing():
            return self.builder.build(metadata, table, threads=2 if self.read_ahead else 1)


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
                            run.lone, run.read_ahead)
        if reader is None:
            return
        from proftui.core.importers.chrome.read import index_metadata

        run.add_file(number, reader.batches, reader.n_events)
        for key_, value in index_metadata(reader, source).items():
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
               got: FileRead | Failed | None, lone: bool,
               read_ahead: bool) -> ChromeJsonReader | None:
    """One trace file into the builder of `events`: merged from `got` (what a worker, this
    process or the cache read into a builder of its own: see chrome_read.read_alone), else read
    here (also when the worker failed: its problems are then counted here). None when it is not a
    trace (counted as an unreadable file), unless it is `lone`: then that is raised. With
    `read_ahead`, the next batch is read in a thread while this one is added."""
    from proftui.core.importers.chrome.read import ChromeJsonReader

    builder = events.builder
    reader = ChromeJsonReader(source, builder.diagnostics, batch_bytes=batch_bytes,
                              read_ahead=read_ahead)
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
