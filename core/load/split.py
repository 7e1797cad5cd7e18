"""A lone large trace file indexed in parts: split at proven event boundaries, one part per
usable core, each other part read by a worker process and merged in order."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from proftui.core.load.file_pool import worker_count
from proftui.core.load.progress import Progress
from proftui.core.model.index import TraceIndex
from proftui.core.runtime.records import StaleRecord
from proftui.core.runtime.workers import Failed, Worker, forks
from proftui.core.source.streams import ByteSource


def parts_for(source: ByteSource, workers: int | None) -> int:
    """In how many processes to index a lone file (see :func:`index_in_parts`): one per
    usable core (or `workers`), up to MAX_PARTS, each part at least half PARALLEL_MIN_BYTES;
    one for a compressed file (it cannot be entered in the middle)."""
    workers = worker_count(MAX_PARTS) if workers is None else workers
    if source.compressed:
        return 1
    return max(1, min(workers, MAX_PARTS, 2 * source.size // PARALLEL_MIN_BYTES))


# Below this, a second process costs more than it saves: a fresh interpreter's start, and
# even a fork's (100 MB Kineto-like in two forked parts: the time of one part, 0.24 s).
PARALLEL_MIN_BYTES = 192 << 20


MAX_PARTS = 8  # the parent merges the parts and builds the index alone


# The first part is read where the file is opened; the others start late and send their
# part back through a pipe (1 GB Kineto-like, two parts: 55-70 ms): they are this much
# shorter (at most a quarter of a part). A fresh interpreter starts a fifth of a second late
# (its imports): 1 GB, two parts, side by side, 64-70 MB took 0.91-0.96x the time of 30 MB,
# and more than 100 MB was slower again. A fork starts at once: 32 MB read in 0.90-0.95x the
# time of 64 MB, 16 and 48 MB within the drift.
LATE_BYTES = 64 << 20
FORKED_LATE_BYTES = 32 << 20


def index_in_parts(source: ByteSource, progress: Progress | None,
                    cancelled: Callable[[], bool] | None, batch_bytes: int,
                    offset_ns: int = 0, memory_files: Sequence[str] = (), *,
                    parts: int = 2, read_ahead: bool = False, build_threads: int = 1,
                    ) -> TraceIndex | None:
    """Index a plain file in `parts` parts, the first here and each other in a process of its
    own, merged in order; None if it cannot be split (then it is indexed in one piece). With
    `read_ahead`, each part reads its next batch in a thread while it adds the last; the
    index is built in `build_threads` threads (see TraceBuilder.build)."""
    from proftui.core.build.builder import TraceBuilder
    from proftui.core.importers.chrome.events import ChromeEvents
    from proftui.core.importers.chrome.file_read import READ_JOB, FileRead, ReadJob
    from proftui.core.importers.chrome.read import (
        BatchRecord,
        ChromeJsonReader,
        batch_table,
        index_metadata,
    )
    from proftui.core.load.memory_csv import add_memory_csvs
    from proftui.core.model.diagnostics import Diagnostics

    diagnostics = Diagnostics()
    reader = ChromeJsonReader(source, diagnostics, batch_bytes=batch_bytes,
                              read_ahead=read_ahead)
    fork = forks()
    late = min(source.size // (4 * parts), FORKED_LATE_BYTES if fork else LATE_BYTES)
    splits: list[int] = []
    for k in range(1, parts):
        split = reader.find_split(source.size * k // parts + late, 0)
        if split is None or (splits and split <= splits[-1]):
            return None
        splits.append(split)
    workers = Worker.each(READ_JOB, [[ReadJob(source.path, None, offset_ns, batch_bytes, start,
                                              None if end < 0 else end, read_ahead)]
                                     for start, end in zip(splits, splits[1:] + [-1])],
                          receive_early=True, fork=fork)
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
        reader.count_unclosed(result.closed, source.size)  # (the last part's end)
        add_memory_csvs(builder, memory_files, diagnostics)
        if progress is not None:
            progress(source.size, source.size, reader.n_events)
        return builder.build(index_metadata(reader, source), batch_table(batches),
                             threads=build_threads)
    finally:
        for worker in workers:
            worker.stop()
