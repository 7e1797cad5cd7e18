"""One Chrome trace file read into a builder of its own: the job, the function and the record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from proftui.core.build.state import BuilderState
from proftui.core.importers.chrome.read import BatchRecord
from proftui.core.runtime.records import Record
from proftui.core.source.gzip_seek import SeekPoints
from proftui.core.source.streams import ByteSource

# The worker function (see proftui.core.runtime.workers.Worker) of a ReadJob.
READ_JOB = "proftui.core.importers.chrome.file_read:read_job"


@dataclass
class FileRead(Record):
    """A trace file (or a byte range of one) read into a builder of its own: what a worker
    sends back and the rank cache keeps, merged in file order by the parent. Ordinals are
    numbered from 0 so that it merges at any place. Bump VERSION whenever a field changes."""

    VERSION: ClassVar[int] = 1

    state: BuilderState
    batches: list[BatchRecord]
    metadata: dict[str, Any]  # what the reader found beside the events (format, header keys)
    n_events: int
    closed: bool  # the event array ended in it
    seek_points: SeekPoints | None  # of a gzip file; None for a plain one
    version: int = VERSION


@dataclass(frozen=True)
class ReadJob:
    """What to read: a file, from byte `start` (its start or an event's ``{``) to `end` (just
    past an event's ``}``; None: the file's end), with its group (None: pids unqualified),
    clock offset and batch size; `read_ahead`: see ChromeJsonReader."""

    path: str
    group: str | None
    offset_ns: int
    batch_bytes: int
    start: int = 0
    end: int | None = None
    read_ahead: bool = False


def read_job(job: ReadJob) -> FileRead:
    """A worker's reading of `job` (raises what reading raises: the worker sends it back as
    a failure, and the parent reads the file itself); how far it got is said to the parent
    when it asked (see :func:`proftui.core.runtime.workers.job_progress`)."""
    from proftui.core.runtime.workers import job_progress

    return read_alone(ByteSource(job.path), job.group, job.offset_ns, job.batch_bytes,
                      job.start, progress=job_progress(), end=job.end,
                      read_ahead=job.read_ahead)


def read_alone(source: ByteSource, group: str | None, offset_ns: int, batch_bytes: int,
               start: int = 0, progress: Callable[[int, int, int], None] | None = None,
               cancelled: Callable[[], bool] | None = None, end: int | None = None,
               read_ahead: bool = False) -> FileRead:
    """One trace file (from byte `start` to `end`) read into a builder of its own, with its
    group and clock offset. Raises what reading raises."""
    from proftui.core.build.builder import TraceBuilder
    from proftui.core.importers.chrome.events import ChromeEvents
    from proftui.core.importers.chrome.read import ChromeJsonReader
    from proftui.core.model.diagnostics import Diagnostics
    from proftui.core.runtime.malloc import indexing

    diagnostics = Diagnostics()
    reader = ChromeJsonReader(source, diagnostics, batch_bytes=batch_bytes,
                              read_ahead=read_ahead)
    builder = TraceBuilder(diagnostics)
    builder.tracks.set_group(group)
    builder.time_offset_ns = offset_ns
    with indexing():
        reader.read(ChromeEvents(builder).add_events, progress=progress, cancelled=cancelled,
                    region=(start, end))
    return FileRead(builder.state(), reader.batches, reader.metadata, reader.n_events,
                    reader.closed, source.seek_points)
