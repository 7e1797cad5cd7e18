"""Indexing the trace files of a profile (a folder of ranks) in worker processes.

Each worker is a fresh interpreter (not multiprocessing: nothing depends on the caller's main
module or threads; the app indexes from a worker thread) that stays up for many files, so a
folder of 64 small ranks pays for two interpreter starts, not 64. A worker reads one file
into a builder of its own, with the file's group and clock offset, and sends back the
builder's state; the parent merges the states in file order, so that the index is the one a
single process builds, ordinals and all. A file a worker cannot read comes back as an error
and the parent reads it itself, counting its problems as it would have.

Memory: a worker holds one file's builder at a time; the parent holds the merged builder and
the states that arrived ahead of their turn.
"""

from __future__ import annotations

import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proftui.core.model.errors import Cancelled
from proftui.core.runtime.cores import usable_cores
from proftui.core.source.streams import file_size

if TYPE_CHECKING:
    from proftui.core.source.streams import ByteSource

POOL_MIN_BYTES = 48 << 20  # below this in all, starting interpreters costs more than it saves
_LENGTH = struct.Struct("<Q")


@dataclass(frozen=True)
class FileJob:
    """One file for a worker: where it is, its group (None: pids unqualified), its clock."""

    number: int
    path: str
    group: str | None
    offset_ns: int
    batch_bytes: int


def worker_count(n_files: int) -> int:
    """Workers for `n_files`: one per core the process may use, at most one per file."""
    return max(min(usable_cores(), n_files), 0)


class FilePool:
    """Worker processes indexing files; :meth:`results` yields each file's state in the order
    the jobs were given."""

    def __init__(self, jobs: list[FileJob], workers: int) -> None:
        self.jobs = jobs
        self._results: dict[int, dict[str, Any]] = {}
        self._arrived = queue.Queue()  # type: queue.Queue[int]
        self._procs: list[subprocess.Popen] = []
        self._threads: list[threading.Thread] = []
        load = [0] * workers
        mine: list[list[FileJob]] = [[] for _ in range(workers)]
        for job in jobs:  # the least loaded worker by bytes; each keeps file order
            w = load.index(min(load))
            mine[w].append(job)
            load[w] += max(file_size(job.path), 1)
        for assigned in mine:
            if assigned:
                self._start(assigned)

    def _start(self, assigned: list[FileJob]) -> None:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from proftui.core.load.file_pool import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None
        proc.stdin.write(pickle.dumps(assigned, protocol=pickle.HIGHEST_PROTOCOL))
        proc.stdin.close()
        self._procs.append(proc)
        thread = threading.Thread(target=self._drain, args=(proc, assigned), daemon=True)
        thread.start()
        self._threads.append(thread)

    def _drain(self, proc: subprocess.Popen, assigned: list[FileJob]) -> None:
        """Read a worker's results as they come (so that it never blocks on a full pipe)."""
        assert proc.stdout is not None
        for job in assigned:
            try:
                head = proc.stdout.read(_LENGTH.size)
                (size,) = _LENGTH.unpack(head)
                result = pickle.loads(proc.stdout.read(size))
            except (struct.error, pickle.UnpicklingError, EOFError, ValueError, OSError,
                    MemoryError) as exc:
                result = {"error": f"the worker stopped ({type(exc).__name__})"}
            self._results[job.number] = result
            self._arrived.put(job.number)

    def results(self, cancelled: Callable[[], bool] | None = None
                ) -> Iterator[tuple[FileJob, dict[str, Any]]]:
        """(job, result) in job order; a result is {"state", "batches", "metadata",
        "n_events", "seek_points"} or {"error"}. Raises Cancelled when `cancelled` says so."""
        for job in self.jobs:
            while job.number not in self._results:
                if cancelled is not None and cancelled():
                    raise Cancelled()
                try:
                    self._arrived.get(timeout=0.1)
                except queue.Empty:
                    pass
            yield job, self._results.pop(job.number)

    def close(self) -> None:
        """Stop the workers (those still running are killed)."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def worker_read(path: str, group: str | None, offset_ns: int, batch_bytes: int,
                start: int = 0, end: int | None = None) -> dict[str, Any]:
    """What a worker process sends back for one trace file, read from byte `start` (the file's
    start or an event's ``{``) to `end` (just past an event's ``}``, None: the file's end; see
    :func:`read_alone`); {"error": ...} when it failed (the parent then reads the file
    itself)."""
    from proftui.core.source.streams import ByteSource

    try:
        return read_alone(ByteSource(path), group, offset_ns, batch_bytes, start, end=end)
    except Exception as exc:  # noqa: BLE001 - the parent reads the file itself
        return {"error": repr(exc)}


def read_alone(source: ByteSource, group: str | None, offset_ns: int, batch_bytes: int,
               start: int = 0, progress: Callable[[int, int, int], None] | None = None,
               cancelled: Callable[[], bool] | None = None, end: int | None = None,
               ) -> dict[str, Any]:
    """One trace file (from byte `start` to `end`) read into a builder of its own, with its
    group and clock offset: the builder's state, the batches, the metadata, the event count
    (ordinals numbered from 0, to merge in file order), whether the event array ended in it,
    and the seek points of a gzip file (None for a plain one). Raises what reading raises."""
    from proftui.core.build.builder import TraceBuilder
    from proftui.core.importers.chrome_events import ChromeEvents
    from proftui.core.importers.chrome_json import ChromeJsonReader
    from proftui.core.model.diagnostics import Diagnostics
    from proftui.core.runtime.malloc import indexing

    diagnostics = Diagnostics()
    reader = ChromeJsonReader(source, diagnostics, batch_bytes=batch_bytes)
    builder = TraceBuilder(diagnostics)
    builder.tracks.set_group(group)
    builder.time_offset_ns = offset_ns
    with indexing():
        reader.read(ChromeEvents(builder).add_events, progress=progress, cancelled=cancelled,
                    region=(start, end))
    return {"state": builder.state(), "batches": reader.batches,
            "metadata": reader.metadata, "n_events": reader.n_events,
            "closed": reader.closed, "seek_points": source.seek_points}


def serve() -> None:
    """Worker process: index each job read (pickled) from stdin, writing one
    length-prefixed pickled result per job to stdout."""
    jobs: list[FileJob] = pickle.loads(sys.stdin.buffer.read())
    out = sys.stdout.buffer
    for job in jobs:
        result = worker_read(job.path, job.group, job.offset_ns, job.batch_bytes)
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        del result
        out.write(_LENGTH.pack(len(data)))
        out.write(data)
        out.flush()
