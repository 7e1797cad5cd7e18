"""What opening a trace says of its progress: the callbacks' shapes, and each file's part."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

Progress = Callable[[int, int, int], None]  # (bytes read, bytes total, events so far)

# Each timeline of a profile of several, as its indexing begins: (its number from 1, how many
# there are, its name: the group (rank or device) and the file's name).
FileProgress = Callable[[int, int, str], None]

# Each file's state: not begun, being read (here or by a worker), read, or merged from its
# entry in the rank cache.
WAITING, READING, READ, CACHED = "waiting", "reading", "read", "cached"

# At most this often is the whole profile's picture said (an app repaints it, a terminal
# redraws it): reading is never slowed by the saying.
REPORT_EVERY_S = 0.25


@dataclass(frozen=True)
class FileStatus:
    """How far one timeline file of a profile has got: its number (from 0), its name (its
    group, rank or device, else the file's name), its bytes and those read, its state."""

    number: int
    name: str
    size: int
    done: int
    state: str

    @property
    def finished(self) -> bool:
        return self.state in (READ, CACHED)


# The state of every timeline file of a profile of several (in file order), as indexing goes.
RanksProgress = Callable[[tuple[FileStatus, ...]], None]


class RanksTracker:
    """Each file's progress, told by the reading thread and the worker pool's threads alike,
    said to `report` at most every `every_s` seconds (None: REPORT_EVERY_S) and once more
    when :meth:`flush` is called, at the end."""

    def __init__(self, names: list[str], sizes: list[int], report: RanksProgress,
                 every_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._files = [FileStatus(n, name, size, 0, WAITING)
                       for n, (name, size) in enumerate(zip(names, sizes))]
        self._report = report
        self._every_s = REPORT_EVERY_S if every_s is None else every_s
        self._clock = clock
        self._said_at: float | None = None
        self._lock = threading.Lock()

    def reading(self, number: int, done: int) -> None:
        """File `number` has `done` of its bytes read (a file already finished stays so)."""
        with self._lock:
            old = self._files[number]
            if old.finished:
                return
            self._files[number] = FileStatus(number, old.name, old.size,
                                             min(max(done, old.done), old.size), READING)
            self._maybe_say()

    def finished(self, number: int, cached: bool) -> None:
        """File `number` is in the index: read, or merged from its rank entry."""
        with self._lock:
            old = self._files[number]
            self._files[number] = FileStatus(number, old.name, old.size, old.size,
                                             CACHED if cached else READ)
            self._maybe_say()

    def flush(self) -> None:
        """Say the picture now (the last one: every file finished)."""
        with self._lock:
            self._say()

    def _maybe_say(self) -> None:
        now = self._clock()
        if self._said_at is None or now - self._said_at >= self._every_s:
            self._say()

    def _say(self) -> None:
        self._said_at = self._clock()
        self._report(tuple(self._files))


def ranks_summary(files: tuple[FileStatus, ...]) -> tuple[int, int, int]:
    """(files read, files from the cache, files in all)."""
    return (sum(f.state == READ for f in files), sum(f.state == CACHED for f in files),
            len(files))
