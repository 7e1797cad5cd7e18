"""Indexing the trace files of a profile (a folder of ranks) in worker processes.

Each worker (:class:`proftui.core.runtime.workers.Worker`, a fork or a fresh interpreter)
stays up for many files, so a folder of 64 small ranks pays for two worker starts, not 64. A
worker reads one file into a builder of its own, with the file's group and clock offset, and sends
back a :class:`~proftui.core.importers.chrome.file_read.FileRead`; the parent merges the builders'
states in file order, so that the index is the one a single process builds, ordinals and all.
A file a worker cannot read comes back as Failed and the parent reads it itself, counting its
problems as it would have.

Memory: a worker holds one file's builder at a time; the parent holds the merged builder and
the states that arrived ahead of their turn.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from proftui.core.model.errors import Cancelled
from proftui.core.runtime.cores import usable_cores
from proftui.core.runtime.workers import Failed, Worker
from proftui.core.source.streams import file_size

if TYPE_CHECKING:
    from proftui.core.importers.chrome.file_read import FileRead

POOL_MIN_BYTES = 48 << 20  # below this in all, starting interpreters costs more than it saves


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
    """Worker processes indexing files; :meth:`results` yields each file's record in the
    order the jobs were given. `on_progress`, when set, is told (a job's number, its bytes
    read) as the workers read, a few times a second, and once more as each file's record
    arrives (from the pool's threads)."""

    def __init__(self, jobs: list[FileJob], workers: int) -> None:
        self.jobs = jobs
        self.on_progress: Callable[[int, int], None] | None = None
        self._results: dict[int, FileRead | Failed] = {}
        self._arrived = queue.Queue()  # type: queue.Queue[int]
        self._procs: list[Worker] = []
        self._threads: list[threading.Thread] = []
        load = [0] * workers
        mine: list[list[FileJob]] = [[] for _ in range(workers)]
        for job in jobs:  # the least loaded worker by bytes; each keeps file order
            w = load.index(min(load))
            mine[w].append(job)
            load[w] += max(file_size(job.path), 1)
        from proftui.core.importers.chrome.file_read import READ_JOB, ReadJob

        mine = [assigned for assigned in mine if assigned]
        self._procs = Worker.each(READ_JOB, [[ReadJob(j.path, j.group, j.offset_ns,
                                                       j.batch_bytes) for j in assigned]
                                             for assigned in mine],
                                  on_progress=lambda w, k, done: self._told_of(mine[w], k, done))
        for worker, assigned in zip(self._procs, mine):
            thread = threading.Thread(target=self._drain, args=(worker, assigned), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _told_of(self, assigned: list[FileJob], k: int, done: int) -> None:
        if 0 <= k < len(assigned):
            self._told(assigned[k].number, done)

    def _drain(self, worker: Worker, assigned: list[FileJob]) -> None:
        """Read a worker's results as they come (so that it never blocks on a full pipe)."""
        from proftui.core.importers.chrome.file_read import FileRead

        for job in assigned:
            self._results[job.number] = worker.result(FileRead)
            self._told(job.number, file_size(job.path))
            self._arrived.put(job.number)

    def _told(self, number: int, done: int) -> None:
        if self.on_progress is not None:
            self.on_progress(number, done)

    def results(self, cancelled: Callable[[], bool] | None = None
                ) -> Iterator[tuple[FileJob, FileRead | Failed]]:
        """(job, its FileRead, or Failed: then the parent reads the file itself) in job
        order. Raises Cancelled when `cancelled` says so."""
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
        for worker in self._procs:
            worker.stop()
