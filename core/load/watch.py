"""Following a profile folder as a job writes it: which of its files are complete, and a
watcher that says when that set changes (file events through watchfiles, else polling).

A profiler writes a folder over minutes: rank after rank, one trace per cycle of its
schedule, summary CSVs at the end. A file is read only once it is complete:

- its size and modification time have held for a poll interval: over looks at least that
  far apart, or, for a file there at the first look, since its modification time;
- its end is valid: a JSON file (``.json``) ends with ``]`` or ``}`` after trimming
  whitespace, a CSV's last line ends with a newline; other files (gzip, SQLite) have the
  first rule alone;
- a file of a torch_npu or MindSpore capture folder (``*_ascend_pt``, ``*_ascend_ms``) waits
  for the folder's ``profiler_info*.json``, which the profiler writes last, to be complete.

The watcher looks again on each file event (watchfiles, when it is installed and the system
lets it watch: inotify's limits) and, while a file is still being written, every poll
interval, since a file that stops growing sends no event; without events it polls.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from proftui.core.discover.profile import walk
from proftui.core.load.loader import load_trace
from proftui.core.model.index import TraceIndex

POLL_S = 1.0  # between looks at a file being written, and between polls without events
_CAPTURE_DIR = re.compile(r"_ascend_(pt|ms)$")
_PROFILER_INFO = re.compile(r"^profiler_info(_\d+)?\.json$")
_TAIL_BYTES = 64  # enough to see past the trailing whitespace of any writer


def end_is_valid(path: str) -> bool:
    """Whether the file's end is one its writer leaves when done (see the module's rules):
    True for kinds whose end says nothing; False for an empty or unreadable file."""
    name = path.lower()
    try:
        size = os.path.getsize(path)
        if size == 0:
            return False
        if not name.endswith((".json", ".csv")):
            return True
        with open(path, "rb") as f:
            f.seek(max(0, size - _TAIL_BYTES))
            tail = f.read()
    except OSError:
        return False
    if name.endswith(".csv"):
        return tail.endswith(b"\n")
    return tail.rstrip().endswith((b"]", b"}"))


def capture_folder(root: str, path: str) -> str | None:
    """The nearest torch_npu or MindSpore capture folder holding `path` (the root itself
    may be one), or None."""
    here = os.path.dirname(path)
    while True:
        if _CAPTURE_DIR.search(os.path.basename(here)):
            return here
        if here == root or len(here) <= len(root):
            return None
        here = os.path.dirname(here)


@dataclass(frozen=True)
class _Look:
    """A file as a poll saw it, and since when the polls have seen it so."""

    size: int
    mtime_ns: int
    since_ns: int

    def same(self, other: _Look) -> bool:
        return (self.size, self.mtime_ns) == (other.size, other.mtime_ns)


class CompleteFiles:
    """The complete files of a folder, looked at again by each :meth:`poll`."""

    def __init__(self, root: str, hold_s: float = POLL_S) -> None:
        self.root = os.path.realpath(root)
        self.hold_ns = int(hold_s * 1e9)
        self._last: dict[str, _Look] = {}
        self._polled = False
        self.pending: list[str] = []  # files seen but not complete at the last poll

    def poll(self) -> frozenset[str]:
        """The files complete now (real paths, as discovery lists them)."""
        now_ns = time.time_ns()
        looks: dict[str, _Look] = {}
        for path in walk(self.root)[0]:
            try:
                st = os.stat(path)
            except OSError:
                continue  # gone between the listing and now
            # At the first poll a file is taken to have been so since its last change; a
            # file that appears or changes later, since the poll that saw it so.
            since_ns = now_ns if self._polled else min(now_ns, st.st_mtime_ns)
            look = _Look(st.st_size, st.st_mtime_ns, since_ns)
            before = self._last.get(path)
            looks[path] = before if before is not None and look.same(before) else look
        held = {p for p, look in looks.items() if now_ns - look.since_ns >= self.hold_ns}
        self._polled = True
        whole = {p for p in held if end_is_valid(p)}
        self._last = looks
        complete = {p for p in whole if self._capture_done(p, whole)}
        self.pending = sorted(set(looks) - complete)
        return frozenset(complete)

    def _capture_done(self, path: str, whole: set[str]) -> bool:
        folder = capture_folder(self.root, path)
        if folder is None:
            return True
        return any(os.path.dirname(p) == folder and _PROFILER_INFO.match(os.path.basename(p))
                   for p in whole)


class ProfileWatcher:
    """Says when the complete files of a folder change (see :meth:`changes`)."""

    def __init__(self, path: str, interval_s: float = POLL_S, polling: bool = False) -> None:
        """`polling` forces polling every `interval_s` even where file events work."""
        self.files = CompleteFiles(path, interval_s)
        self.interval_s = interval_s
        self.why_polling = "asked for" if polling else _events_missing()
        self.complete: frozenset[str] = frozenset()

    @property
    def mode(self) -> str:
        """How it learns of changes, in words."""
        return ("file events (watchfiles)" if not self.why_polling
                else f"polling every {self.interval_s:g} s ({self.why_polling})")

    def changes(self, stop: threading.Event) -> Iterator[frozenset[str]]:
        """Each new set of complete files, the first as soon as there is one, until `stop`
        is set. Files that were complete and went away count as a change too."""
        for _ in self._ticks(stop):
            found = self.files.poll()
            if found != self.complete and (found or self.complete):
                self.complete = found
                yield found

    def _ticks(self, stop: threading.Event) -> Iterator[None]:
        yield None  # a first look at once
        if not self.why_polling:
            try:
                yield from self._event_ticks(stop)
            except Exception as exc:  # noqa: BLE001 - inotify limits, a folder gone ...
                self.why_polling = f"file events failed: {type(exc).__name__}: {exc}"
        while not stop.wait(self.interval_s):
            yield None

    def _event_ticks(self, stop: threading.Event) -> Iterator[None]:
        import watchfiles

        timeout_ms = max(1, int(self.interval_s * 1000))
        for events in watchfiles.watch(self.files.root, stop_event=stop,
                                       rust_timeout=timeout_ms, yield_on_timeout=True,
                                       debounce=timeout_ms, step=min(50, timeout_ms),
                                       raise_interrupt=False):
            if stop.is_set():
                return
            if events or self.files.pending:  # a file still being written: look again
                yield None
        if not stop.is_set():
            raise OSError("the watch ended (the folder was removed?)")


def _events_missing() -> str:
    """Why file events cannot be had here ("" when they can)."""
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        return "watchfiles is not installed: pip install 'proftui[watch]'"
    return ""


def open_complete(path: str, complete: frozenset[str], run: int | None = None,
                  use_cache: bool = True, **load: Callable | None) -> TraceIndex:
    """Open the folder `path` as far as its `complete` files go (see :func:`load_trace`; its
    unchanged files come from the cache)."""
    return load_trace(path, run=run, use_cache=use_cache, keep=complete.__contains__,
                      **load)  # type: ignore[arg-type]
