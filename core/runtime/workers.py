"""Worker processes: another process runs a function on jobs and sends back typed records.

Not multiprocessing: nothing depends on the caller's main module. Where the caller runs
alone in its process (one thread, on Linux: `proftui index`) the worker is a fork
of it, with every module already imported and the jobs already in memory; it starts in a few
milliseconds, not the fifth of a second a fresh interpreter takes to import numpy. Anywhere
else (the app indexes from a thread of its own, and forking beside other threads could copy a
lock another thread holds) it is a fresh interpreter, and the parent writes the pickled jobs
to its stdin. Either way the worker calls the function on each job in turn and writes
each result as a length-prefixed pickle to its stdout, its large arrays beside it (pickle
protocol 5's out-of-band buffers: neither side holds a second copy of them), flushed at once
so that the parent can merge one while the next is read. A job whose function raises comes
back as a :class:`Failed`, and the worker goes on with the next. On the parent's side, a worker that
stopped, wrote something that does not unpickle, or answered with a record of another type
or version gives a :class:`Failed` too: callers then do the work themselves. Stopping a
worker (on cancel, or once it is no longer needed) kills it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any, TypeVar

from proftui.core.runtime.records import Record, StaleRecord, checked

_LENGTH = struct.Struct("<Q")
_PROGRESS = b"PROGRESS"  # the head of a progress line from a reporting worker
REPORT_EVERY_S = 0.2  # a worker's progress lines, at most this often
R = TypeVar("R", bound=Record)


@dataclass(frozen=True)
class Failed:
    """A job that gave no result: why, in a few words (the caller does the work itself)."""

    why: str


class Worker:
    """A worker process (a fork of this one or a fresh interpreter, see the module) running
    the module-level function `function` ("package.module:name", taking one job, returning
    one record) on each of `jobs` in order.

    :meth:`result` reads the next job's record (blocking); :meth:`stop` ends the worker.
    `on_progress`, if given, is told (job's number from 0, bytes done) as the job's function
    says (see :func:`job_progress`), from a thread of its own.
    `fork`: whether the worker is a fork of this process (None: where :func:`forks` says;
    `forked` tells which it is).
    """

    def __init__(self, function: str, jobs: Sequence[Any],
                 on_progress: Callable[[int, int], None] | None = None,
                 receive_early: bool = False, fork: bool | None = None, *,
                 _listen: bool = True) -> None:
        self.function = function
        self.n_jobs = len(jobs)
        self._answered = 0
        self.on_progress = on_progress
        reports = on_progress is not None
        # With `receive_early`, a thread reads each answer's bytes as soon as the worker writes
        # them, while the caller still works: a worker that finishes first is not kept
        # waiting on a full pipe, and its answer is not copied after the caller's own work.
        self._early: queue.Queue | None = queue.Queue() if receive_early else None
        self.proc: subprocess.Popen | _Forked
        self.forked = forks() if fork is None else fork
        if self.forked:
            self.proc = _Forked(function, jobs, reports)
        else:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", "from proftui.core.runtime.workers import serve; serve()",
                 function, *(["report"] if reports else [])],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if reports else subprocess.DEVNULL)
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(pickle.dumps(list(jobs), protocol=pickle.HIGHEST_PROTOCOL))
                self.proc.stdin.close()
            except OSError:  # it died at once: its results read as Failed
                pass
        if _listen:
            self._listen()

    @classmethod
    def each(cls, function: str, job_lists: Sequence[Sequence[Any]],
             on_progress: Callable[[int, int, int], None] | None = None,
             receive_early: bool = False, fork: bool | None = None) -> list[Worker]:
        """One worker per list of jobs, all forked (where `fork`, or :func:`forks`, says)
        before any of them starts the threads that listen to it; `on_progress` is told
        (worker's number, job's number, bytes done)."""
        fork = forks() if fork is None else fork
        workers: list[Worker] = []
        try:
            for number, jobs in enumerate(job_lists):
                told = None if on_progress is None else functools.partial(on_progress, number)
                workers.append(cls(function, jobs, told, receive_early, fork, _listen=False))
        except BaseException:
            for worker in workers:
                worker.stop()
            raise
        for worker in workers:
            worker._listen()
        return workers

    def _listen(self) -> None:
        """Start the threads that read the worker's reports and (receive_early) answers."""
        if self.on_progress is not None:
            threading.Thread(target=self._read_reports, daemon=True).start()
        if self._early is not None:
            threading.Thread(target=self._receive, daemon=True).start()

    def result(self, expected: type[R]) -> R | Failed:
        """The next job's result: an `expected` record of this version, or Failed (the job
        failed, the worker stopped, or it answered with something else)."""
        if self._answered >= self.n_jobs:
            raise IndexError("every job of this worker has answered")
        self._answered += 1
        assert self.proc.stdout is not None
        try:
            raw = _read_raw(self.proc.stdout) if self._early is None else self._early.get()
            if isinstance(raw, BaseException):
                raise raw
            got = pickle.loads(raw[0], buffers=raw[1])
        except (*_READ_ERRORS, pickle.UnpicklingError, AttributeError, ImportError,
                IndexError, TypeError) as exc:
            return Failed(f"the worker stopped ({type(exc).__name__})")
        if isinstance(got, Failed):
            return got
        try:
            return checked(got, expected)
        except StaleRecord as exc:
            return Failed(str(exc))

    def _receive(self) -> None:
        """Read every answer's bytes as they come (see `receive_early`); a reading that
        fails ends it, handed on to :meth:`result` as its exception."""
        assert self.proc.stdout is not None and self._early is not None
        for k in range(self.n_jobs):
            try:
                self._early.put(_read_raw(self.proc.stdout))
            except _READ_ERRORS as exc:
                for _ in range(k, self.n_jobs):  # no answer comes after it
                    self._early.put(exc)
                return

    def _read_reports(self) -> None:
        """Hand each progress line from the worker to on_progress (until it ends);
        anything else it writes there (a warning) is passed over."""
        assert self.proc.stderr is not None
        try:
            for line in self.proc.stderr:
                parts = line.split()
                if len(parts) == 3 and parts[0] == _PROGRESS and self.on_progress is not None:
                    try:
                        self.on_progress(int(parts[1]), int(parts[2]))
                    except ValueError:
                        pass
        except (OSError, ValueError):  # closed by stop
            pass

    def poll(self) -> int | None:
        """The worker's exit status, None while it runs."""
        return self.proc.poll()

    def stop(self) -> None:
        """Kill the worker if it still runs; wait for it; release its pipe."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.proc.stderr is not None:
            self.proc.stderr.close()


_READ_ERRORS = (struct.error, EOFError, ValueError, OSError, MemoryError)


def _read_raw(stream: IO[bytes]) -> tuple[bytearray, list[bytearray]]:
    """One record's bytes as :func:`_write_record` wrote them (the pickle, its large arrays):
    the arrays are read straight into the buffers they are made on (no second copy)."""
    (size,) = _LENGTH.unpack(stream.read(_LENGTH.size))
    data = _read_exactly(stream, bytearray(size))
    (count,) = _LENGTH.unpack(stream.read(_LENGTH.size))
    buffers = []
    for _ in range(count):
        (nbytes,) = _LENGTH.unpack(stream.read(_LENGTH.size))
        buffers.append(_read_exactly(stream, bytearray(nbytes)))
    return data, buffers


def _read_exactly(stream: IO[bytes], buffer: bytearray) -> bytearray:
    view, got = memoryview(buffer), 0
    while got < len(buffer):
        n = stream.readinto(view[got:])  # type: ignore[attr-defined]
        if not n:
            raise EOFError("the worker's answer ends early")
        got += n
    return buffer


def _write_record(out: IO[bytes], record: Any) -> None:
    """A length-prefixed pickle of `record`, then its large arrays' bytes (pickle protocol
    5's out-of-band buffers), each length-prefixed: written from where they are, not
    copied into the pickle first."""
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(record, protocol=5, buffer_callback=buffers.append)
    out.write(_LENGTH.pack(len(data)))
    out.write(data)
    del data
    out.write(_LENGTH.pack(len(buffers)))
    for buffer in buffers:
        raw = buffer.raw()
        out.write(_LENGTH.pack(raw.nbytes))
        out.write(raw)


def forks() -> bool:
    """Whether a worker started now is a fork of this process: on Linux, where this is the
    process's only thread, its own or a library's (numpy's BLAS starts one per core unless
    OPENBLAS_NUM_THREADS is 1, as the command line sets it); see the module's docstring."""
    if sys.platform != "linux":
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class _Forked:
    """A fork of this process serving `jobs` (see :func:`serve`): what Worker uses of a Popen.
    The child never returns into the caller's code: it leaves through os._exit."""

    def __init__(self, function: str, jobs: Sequence[Any], reports: bool) -> None:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe() if reports else (-1, -1)
        self.returncode: int | None = None
        try:
            self.pid = os.fork()
        except OSError:
            for fd in (out_r, out_w, err_r, err_w):
                if fd >= 0:
                    os.close(fd)
            raise
        if self.pid == 0:  # the child
            status = 1
            try:
                os.close(out_r)
                if reports:
                    os.close(err_r)
                with open(out_w, "wb") as out, \
                        (open(err_w, "wb") if reports else contextlib.nullcontext()) as err:
                    _answer(_function(function), jobs, out, err)
                status = 0
            finally:
                os._exit(status)
        os.close(out_w)
        self.stdout: IO[bytes] = open(out_r, "rb")
        self.stderr: IO[bytes] | None = None
        if reports:
            os.close(err_w)
            self.stderr = open(err_r, "rb")

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            os.kill(self.pid, signal.SIGKILL)

    def wait(self) -> int:
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode


def _function(named: str) -> Callable[[Any], Any]:
    module, name = named.split(":")
    return getattr(importlib.import_module(module), name)


def serve(function: Callable[[Any], Any] | None = None) -> None:
    """Worker process: run the function named by the first argument (or `function`) on each
    job pickled on stdin, writing one length-prefixed pickled record (or Failed) per job to
    stdout."""
    _answer(function or _function(sys.argv[1]), pickle.loads(sys.stdin.buffer.read()),
            sys.stdout.buffer, sys.stderr.buffer if sys.argv[2:3] == ["report"] else None)


def _answer(function: Callable[[Any], Any], jobs: Sequence[Any], out: IO[bytes],
            reports: IO[bytes] | None) -> None:
    """Run `function` on each job, writing one length-prefixed pickled record (or Failed)
    per job to `out`; progress lines go to `reports`, if given (see job_progress)."""
    global _reporting
    for number, job in enumerate(jobs):
        _reporting = None if reports is None else (number, reports)
        try:
            result = function(job)
        except Exception as exc:  # noqa: BLE001 - the parent does the job itself
            result = Failed(repr(exc))
        _write_record(out, result)
        out.flush()
        del result


# In a reporting worker: the number of the job it runs, and where its progress lines go.
_reporting: tuple[int, IO[bytes]] | None = None


def job_progress() -> Callable[[int, int, int], None] | None:
    """In a worker told to report (given an `on_progress`), a progress callback (bytes done,
    bytes total, events) for the job being run, writing a line to the parent at most every
    REPORT_EVERY_S; None elsewhere (nobody would read it)."""
    if _reporting is None:
        return None
    number, reports = _reporting
    said_at = [0.0]

    def say(done: int, _total: int, _events: int) -> None:
        now = time.monotonic()
        if now - said_at[0] >= REPORT_EVERY_S:
            said_at[0] = now
            reports.write(b"%s %d %d\n" % (_PROGRESS, number, done))
            reports.flush()

    return say
