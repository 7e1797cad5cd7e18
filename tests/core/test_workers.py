"""The worker module: typed records back from another process (a fork, or a fresh interpreter),
each failure a clean Failed (a job that raised, a worker that died, a record of another type or
version), and stop() killing a worker mid-job (cancel). Every case runs with both kinds of
worker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import worker_jobs
from worker_jobs import Answer

from proftui.core.runtime.workers import Failed, Worker


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers import the job functions from this folder."""
    here = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (here, os.environ.get("PYTHONPATH")) if p))


EARLY = [False]  # whether _worker's workers receive early (every test runs both ways)
FORK = [False]  # whether they are forks (every test runs both ways)


@pytest.fixture(autouse=True, params=[False, True], ids=["when-asked", "received-early"])
def _receiving(request: pytest.FixtureRequest) -> None:
    EARLY[0] = request.param


@pytest.fixture(autouse=True, params=[False, True], ids=["fresh", "forked"])
def _forking(request: pytest.FixtureRequest) -> None:
    if request.param and not hasattr(os, "fork"):
        pytest.skip("no fork here")
    FORK[0] = request.param


def _worker(function: str, jobs: list) -> Worker:
    return Worker(f"worker_jobs:{function}", jobs, receive_early=EARLY[0], fork=FORK[0])


def test_a_fork_sees_the_parent_as_it_is_and_a_fresh_interpreter_as_imported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_jobs, "SET_IN_PARENT", "set in the parent")
    worker = _worker("set_in_parent", [0])
    try:
        got = worker.result(Answer)
    finally:
        worker.stop()
    assert got.value == ("set in the parent" if FORK[0] else "as imported")
    assert got.pid != os.getpid()


def test_each_starts_every_worker_of_one_kind_in_order() -> None:
    workers = Worker.each("worker_jobs:double", [[1], [2, 3], [4]], receive_early=EARLY[0],
                          fork=FORK[0])
    try:
        assert [[w.result(Answer).value for _ in range(w.n_jobs)] for w in workers] == \
            [[2], [4, 6], [8]]
        assert {w.forked for w in workers} == {FORK[0]}
    finally:
        for w in workers:
            w.stop()


FORKS = "import threading, time; from proftui.core.runtime.workers import forks; {}print(forks())"


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forks on Linux only")
def test_a_worker_is_a_fork_only_where_the_process_runs_one_thread() -> None:
    """Alone, a fork; beside another thread (the app's, a library's), a fresh interpreter."""
    def forks_in_child(setup: str) -> str:
        return subprocess.run([sys.executable, "-c", FORKS.format(setup)], capture_output=True,
                              text=True, check=True).stdout.strip()

    assert forks_in_child("") == "True"
    assert forks_in_child("threading.Thread(target=time.sleep, args=(5,), daemon=True)"
                          ".start(); ") == "False"


def test_a_reporting_worker_says_how_far_it_got() -> None:
    heard: list[tuple[int, int]] = []
    worker = Worker("worker_jobs:progress", [123], lambda k, done: heard.append((k, done)),
                    fork=FORK[0])
    try:
        assert worker.result(Answer).value == 123
        deadline = time.monotonic() + 5
        while not heard and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        worker.stop()
    assert heard == [(0, 123)]


def test_an_answer_received_early_lets_the_worker_end_before_it_is_asked_for() -> None:
    """Its bytes are read as they come, beside the caller's own work: a worker whose answer
    is larger than a pipe holds (64 kB) writes it all and ends before result() is called; a
    worker read only when asked is kept waiting on its full pipe."""
    ended = {}
    for early, wait_s in ((True, 30.0), (False, 1.5)):  # (a blocked worker never ends)
        worker = Worker("worker_jobs:arrays", [1_000_000], receive_early=early)
        try:
            began = time.monotonic()
            while worker.poll() is None and time.monotonic() - began < wait_s:
                time.sleep(0.05)
            ended[early] = worker.poll() is not None
            answer = worker.result(Answer)
        finally:
            worker.stop()
        assert not isinstance(answer, Failed) and len(answer.value["ints"]) == 1_000_000
    assert ended == {False: False, True: True}


def test_each_job_answers_in_order_from_another_process() -> None:
    worker = _worker("double", [1, 2, 3])
    try:
        got = [worker.result(Answer) for _ in range(3)]
    finally:
        worker.stop()
    assert [a.value for a in got] == [2, 4, 6]
    assert {a.pid for a in got} != {os.getpid()} and len({a.pid for a in got}) == 1
    with pytest.raises(IndexError):
        worker.result(Answer)


def test_a_job_that_raises_fails_alone() -> None:
    worker = _worker("fail_on_odd", [2, 3, 4])
    try:
        got = [worker.result(Answer) for _ in range(3)]
    finally:
        worker.stop()
    assert got[1] == Failed("ValueError('odd: 3')")
    assert [g.value for g in (got[0], got[2])] == [2, 4]


def test_a_worker_that_dies_fails_its_jobs() -> None:
    worker = _worker("die", [1, 2])
    try:
        got = [worker.result(Answer) for _ in range(2)]
    finally:
        worker.stop()
    assert got == [Failed("the worker stopped (error)")] * 2
    assert worker.poll() == 3


def test_a_function_that_does_not_exist_fails_cleanly() -> None:
    worker = _worker("no_such_function", [1])
    try:
        assert isinstance(worker.result(Answer), Failed)
    finally:
        worker.stop()


@pytest.mark.parametrize("function", ["stale", "wrong_type"])
def test_a_record_of_another_version_or_type_is_refused(function: str) -> None:
    worker = _worker(function, [1])
    try:
        got = worker.result(Answer)
    finally:
        worker.stop()
    assert isinstance(got, Failed)
    assert ("version 2, not 3" if function == "stale" else "a dict where") in got.why


def test_stop_kills_a_worker_mid_job() -> None:
    worker = _worker("slow", [30.0])
    began = time.monotonic()
    worker.stop()
    assert worker.poll() is not None and worker.poll() != 0
    assert time.monotonic() - began < 10
    assert isinstance(worker.result(Answer), Failed)  # its pipe is closed: no answer


def test_arrays_come_back_whole_and_writable() -> None:
    """Large arrays travel beside the pickle (protocol 5's out-of-band buffers) and are made
    on the buffers read: the same values and dtypes, writable."""
    import numpy as np

    worker = _worker("arrays", [300_000, 5])
    try:
        got = [worker.result(Answer) for _ in range(2)]
    finally:
        worker.stop()
    for answer, n in zip(got, (300_000, 5)):
        ints, floats = answer.value["ints"], answer.value["floats"]
        assert np.array_equal(ints, np.arange(n)) and ints.dtype == np.int64
        assert np.array_equal(floats, np.linspace(0, 1, n))
        assert np.array_equal(answer.value["step"], np.arange(0, 3 * n, 3))
        assert answer.value["step"].dtype == np.int32 and answer.value["empty"].size == 0
        ints[0] = 7  # writable: made on a bytearray, not a read-only bytes
