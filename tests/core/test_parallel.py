"""Indexing a file's parts in several processes gives the same index as one process."""

from __future__ import annotations

import pytest

from proftui.core.load.indexing import index_file
from proftui.core.load.loader import load_trace
from proftui.core.load.split import index_in_parts as _index_parallel
from proftui.core.query.args import slice_args
from proftui.core.source.streams import ByteSource

from helpers import columns_equal, problems, write_trace


@pytest.fixture(autouse=True, params=["fresh", "forked"])
def _workers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test with workers of both kinds: forks (as `proftui index` has them) and fresh
    interpreters (as the app, and this suite's processes, whose numpy runs a BLAS thread)."""
    from proftui.core.load import split
    from proftui.core.runtime import workers

    forked = request.param == "forked"
    monkeypatch.setattr(workers, "forks", lambda: forked)
    monkeypatch.setattr(split, "forks", lambda: forked)


def _events() -> list[dict]:
    events: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "host"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 7, "args": {"name": "main"}},
    ]
    for i in range(1500):
        ts = i * 20
        events += [
            {"ph": "X", "name": f"step{i % 5}", "cat": "cpu_op", "pid": 1, "tid": 7, "ts": ts,
             "dur": 15, "args": {"i": i}},
            {"ph": "X", "name": "kernel", "cat": "kernel", "pid": 0, "tid": 3,
             "ts": f"{ts + 5}.250", "dur": 4.5},
            {"ph": "s", "id": 2**60 + i, "cat": "ac2g", "name": "ac2g", "pid": 1, "tid": 7,
             "ts": ts + 1},
            {"ph": "f", "id": 2**60 + i, "cat": "ac2g", "name": "ac2g", "pid": 0, "tid": 3,
             "ts": ts + 6, "bp": "e"},
            {"ph": "C", "name": "mem", "pid": 0, "ts": ts, "args": {"MB": i % 17}},
        ]
        if i % 50 == 0:
            events += [{"ph": "B", "name": "phase", "pid": 1, "tid": 8, "ts": ts},
                       {"ph": "b", "cat": "io", "id": i, "name": "req", "pid": 1, "ts": ts},
                       {"ph": "e", "cat": "io", "id": i, "name": "req", "pid": 1, "ts": ts + 30},
                       {"ph": "i", "name": "mark", "pid": 1, "tid": 7, "ts": ts, "s": "p"}]
        if i % 50 == 49:
            events.append({"ph": "E", "pid": 1, "tid": 8, "ts": ts})
    events.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": 3,
                   "args": {"name": "stream 3"}})  # metadata at the end, in the second half
    return events


def test_two_halves_equal_one_pass(tmp_path) -> None:
    path = write_trace(tmp_path / "t.json", _events(), displayTimeUnit="ns")
    serial = index_file(ByteSource(str(path)), workers=1, batch_bytes=4096)
    parallel = _index_parallel(ByteSource(str(path)), None, None, 4096)
    assert parallel is not None  # the split was found and the worker answered
    assert columns_equal(serial, parallel)
    assert parallel.meta["phase_counts"] == serial.meta["phase_counts"]
    assert parallel.meta["displayTimeUnit"] == "ns"
    assert problems(parallel) == problems(serial) == {}
    assert len(parallel.col("flows.src_slice")) == 1500
    last = parallel.n_slices - 1
    assert slice_args(parallel, last) == slice_args(serial, last)
    labels = {parallel.track_label(t) for t in range(parallel.n_tracks)}
    assert {"main (7)", "stream 3"} <= labels


@pytest.mark.parametrize("parts", [3, 4])
def test_parts_equal_one_pass(tmp_path, parts: int) -> None:
    path = write_trace(tmp_path / "t.json", _events(), displayTimeUnit="ns")
    serial = index_file(ByteSource(str(path)), workers=1, batch_bytes=4096)
    parallel = _index_parallel(ByteSource(str(path)), None, None, 4096, parts=parts)
    assert parallel is not None
    assert columns_equal(serial, parallel)
    assert parallel.meta["phase_counts"] == serial.meta["phase_counts"]
    for i in (0, parallel.n_slices // 3, parallel.n_slices // 2, parallel.n_slices - 1):
        assert slice_args(parallel, i) == slice_args(serial, i)


def test_a_file_too_small_for_its_parts_is_read_in_one(tmp_path) -> None:
    """Splits that cannot be told apart (more parts than batches) fall back to one pass."""
    path = write_trace(tmp_path / "t.json", _events()[:40])
    assert _index_parallel(ByteSource(str(path)), None, None, 1 << 20, parts=4) is None


def test_parts_follow_the_cores_and_the_size(tmp_path, monkeypatch) -> None:
    from proftui.core.load import indexing, split

    monkeypatch.setattr(indexing, "worker_count", lambda n: min(n, 6))
    monkeypatch.setattr(split, "worker_count", lambda n: min(n, 6))
    monkeypatch.setattr(split, "PARALLEL_MIN_BYTES", 1000)
    plain = write_trace(tmp_path / "t.json", [{"ph": "X", "ts": 1, "dur": 1}] * 100)
    size = plain.stat().st_size
    assert split.parts_for(ByteSource(str(plain)), None) == min(6, 2 * size // 1000)
    assert split.parts_for(ByteSource(str(plain)), 3) == 3
    assert split.parts_for(ByteSource(str(plain)), 1) == 1
    packed = write_trace(tmp_path / "t.json.gz", [{"ph": "X", "ts": 1, "dur": 1}] * 100, gz=True)
    assert split.parts_for(ByteSource(str(packed)), None) == 1
    monkeypatch.setattr(split, "PARALLEL_MIN_BYTES", 10 * size)
    assert split.parts_for(ByteSource(str(plain)), None) == 1


def _rank_folder(root, damaged: int | None = None):
    """Four torch_npu ranks of the events above (rank k's clock 1 ms later than rank k-1's);
    rank `damaged`'s trace is cut in the middle of an event."""
    import json

    for rank in range(4):
        out = root / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True)
        (out.parent / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
        events = [dict(e, ts=_shift(e["ts"], 1000 * rank)) if "ts" in e else e
                  for e in _events()]
        path = write_trace(out / "trace_view.json", events[:len(events) // (rank + 1)])
        if rank == damaged:
            data = path.read_bytes()
            path.write_bytes(data[:len(data) // 2])
    return root


def _shift(ts, by):
    return f"{float(ts) + by:.3f}" if isinstance(ts, str) else ts + by


def _both(root, monkeypatch):
    from proftui.core.load import indexing, split

    made = []
    real = indexing.FilePool
    monkeypatch.setattr(indexing, "FilePool",
                        lambda jobs, workers: made.append(len(jobs)) or real(jobs, workers))
    monkeypatch.setattr(indexing, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(indexing, "worker_count", lambda n: 2)
    monkeypatch.setattr(split, "worker_count", lambda n: 2)
    pooled = load_trace(str(root), use_cache=False, batch_bytes=4096)
    assert made == [4]  # the four ranks went to the workers
    monkeypatch.setattr(indexing, "worker_count", lambda n: 1)
    monkeypatch.setattr(split, "worker_count", lambda n: 1)
    serial = load_trace(str(root), use_cache=False, batch_bytes=4096)
    assert made == [4]
    return pooled, serial


def test_ranks_read_by_worker_processes_equal_one_process(tmp_path, monkeypatch) -> None:
    pooled, serial = _both(_rank_folder(tmp_path), monkeypatch)
    assert columns_equal(serial, pooled)
    assert pooled.meta["phase_counts"] == serial.meta["phase_counts"]
    assert problems(pooled) == problems(serial)
    assert pooled.n_slices == serial.n_slices > 4000
    groups = {pooled.strings[g] for g in pooled.arrays["processes.group"].tolist()}
    assert groups == {"rank 0", "rank 1", "rank 2", "rank 3"}
    for k in (0, pooled.n_slices // 2, pooled.n_slices - 1):  # args read back from each file
        assert slice_args(pooled, k) == slice_args(serial, k)


def test_a_damaged_rank_is_counted_and_the_others_still_open(tmp_path, monkeypatch) -> None:
    pooled, serial = _both(_rank_folder(tmp_path, damaged=1), monkeypatch)
    assert columns_equal(serial, pooled)
    assert problems(pooled) == problems(serial) and problems(pooled)  # the cut is counted
    groups = {pooled.strings[g] for g in pooled.arrays["processes.group"].tolist()}
    assert groups == {"rank 0", "rank 1", "rank 2", "rank 3"}  # rank 1's first half kept

def test_cancelling_stops_the_workers(tmp_path, monkeypatch) -> None:
    import pytest

    from proftui.core.load import indexing, split
    from proftui.core.model.errors import Cancelled

    pools = []
    real = indexing.FilePool
    monkeypatch.setattr(indexing, "FilePool",
                        lambda jobs, workers: pools.append(real(jobs, workers)) or pools[-1])
    monkeypatch.setattr(indexing, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(indexing, "worker_count", lambda n: 2)
    monkeypatch.setattr(split, "worker_count", lambda n: 2)
    with pytest.raises(Cancelled):
        load_trace(str(_rank_folder(tmp_path)), use_cache=False, cancelled=lambda: True)
    assert pools and all(p.poll() is not None for p in pools[0]._procs)


def test_a_lone_plain_trace_over_the_threshold_is_split(tmp_path, monkeypatch) -> None:
    """load_trace splits a lone plain trace of PARALLEL_MIN_BYTES or more when there is a
    second core; never a gzip one, nor where index_file is given one worker."""
    from proftui.core.load import indexing, split

    plain = write_trace(tmp_path / "t.json", _events())
    packed = write_trace(tmp_path / "t.json.gz", _events(), gz=True)
    calls: list[str] = []
    real = split.index_in_parts
    monkeypatch.setattr(indexing, "index_in_parts",
                        lambda source, *rest, **kw: calls.append(source.path)
                        or real(source, *rest, **kw))
    monkeypatch.setattr(split, "PARALLEL_MIN_BYTES", 1 << 10)
    monkeypatch.setattr(indexing, "worker_count", lambda n: 2)
    monkeypatch.setattr(split, "worker_count", lambda n: 2)
    serial = index_file(ByteSource(str(plain)), workers=1, batch_bytes=4096)
    gzipped = load_trace(str(packed), use_cache=False, batch_bytes=4096)
    assert calls == []
    halves = load_trace(str(plain), use_cache=False, batch_bytes=4096)
    assert [p.rsplit("/", 1)[-1] for p in calls] == ["t.json"]
    assert columns_equal(serial, halves)
    assert halves.meta["sources"] == serial.meta["sources"]
    assert columns_equal(serial, gzipped)


def test_the_workers_answer_for_every_file(tmp_path) -> None:
    """Each file comes back as its worker read it, not as an error for the parent to redo
    (which would give the same index, only slower)."""
    from proftui.core.load.file_pool import FileJob, FilePool

    paths = sorted(_rank_folder(tmp_path).glob("*/ASCEND_PROFILER_OUTPUT/trace_view.json"))
    pool = FilePool([FileJob(n, str(p), f"rank {n}", 0, 4096) for n, p in enumerate(paths)], 2)
    try:
        results = [result for _, result in pool.results(None)]
    finally:
        pool.close()
    from proftui.core.importers.chrome.file_read import FileRead

    assert [type(r) for r in results] == [FileRead] * 4
    assert results[0].n_events == len(_events())


def test_each_rank_is_named_as_its_indexing_begins(tmp_path, monkeypatch) -> None:
    """Of a folder of ranks, file_progress hears which rank is next and how many there are,
    in order, read by worker processes or here; bytes and events still go to progress."""
    from proftui.core.load import indexing, split

    root = _rank_folder(tmp_path)
    expected = [(n + 1, 4, f"rank {n} (trace_view.json)") for n in range(4)]
    monkeypatch.setattr(indexing, "POOL_MIN_BYTES", 0)
    for workers in (2, 1):
        monkeypatch.setattr(indexing, "worker_count", lambda n, w=workers: w)
        monkeypatch.setattr(split, "worker_count", lambda n, w=workers: w)
        begun: list[tuple[int, int, str]] = []
        done: list[int] = []
        load_trace(str(root), use_cache=False, batch_bytes=4096,
                   file_progress=lambda *args, into=begun: into.append(args),
                   progress=lambda read, total, events, into=done: into.append(read))
        assert begun == expected
        assert done and done == sorted(done)


@pytest.fixture
def dying_workers(monkeypatch):
    """Every worker that reads a trace file dies before it answers."""
    import os
    from pathlib import Path

    from proftui.core.importers.chrome import file_read as chrome_read

    here = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (here, os.environ.get("PYTHONPATH")) if p))
    monkeypatch.setattr(chrome_read, "READ_JOB", "worker_jobs:die")


def test_ranks_whose_workers_die_are_read_here(tmp_path, monkeypatch, dying_workers) -> None:
    from proftui.core.load import indexing, split

    root = _rank_folder(tmp_path)
    monkeypatch.setattr(indexing, "worker_count", lambda n: 1)
    monkeypatch.setattr(split, "worker_count", lambda n: 1)
    serial = load_trace(str(root), use_cache=False, batch_bytes=4096)
    results = []
    real = indexing.FilePool.results
    monkeypatch.setattr(indexing.FilePool, "results", lambda self, cancelled: (
        results.append(r) or r for r in real(self, cancelled)))
    monkeypatch.setattr(indexing, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(indexing, "worker_count", lambda n: 2)
    monkeypatch.setattr(split, "worker_count", lambda n: 2)
    pooled = load_trace(str(root), use_cache=False, batch_bytes=4096)
    assert len(results) == 4 and all(type(r).__name__ == "Failed" for _, r in results)
    assert columns_equal(serial, pooled)
    assert problems(pooled) == problems(serial)


def test_a_split_whose_worker_dies_is_indexed_in_one_piece(tmp_path, monkeypatch,
                                                           dying_workers) -> None:
    from proftui.core.load import indexing, split

    path = write_trace(tmp_path / "t.json", _events())
    for parts in (2, 3):
        assert _index_parallel(ByteSource(str(path)), None, None, 4096, parts=parts) is None
    serial = index_file(ByteSource(str(path)), workers=1, batch_bytes=4096)
    monkeypatch.setattr(split, "PARALLEL_MIN_BYTES", 1 << 10)
    monkeypatch.setattr(indexing, "worker_count", lambda n: 2)
    monkeypatch.setattr(split, "worker_count", lambda n: 2)
    assert columns_equal(serial, load_trace(str(path), use_cache=False, batch_bytes=4096))


def test_an_object_cut_between_events_is_one_truncation_in_parts_as_in_one(tmp_path) -> None:
    raw = write_trace(tmp_path / "whole.json", _events()).read_bytes()
    cut = raw.rindex(b"},", 0, len(raw) - 100) + 2  # just after an event and its comma
    path = tmp_path / "t.json"
    path.write_bytes(raw[:cut])
    serial = index_file(ByteSource(str(path)), workers=1, batch_bytes=4096)
    parallel = _index_parallel(ByteSource(str(path)), None, None, 4096)
    assert parallel is not None and columns_equal(serial, parallel)
    assert problems(serial) == problems(parallel) == {"truncated": 1}
    array = tmp_path / "array.json"  # the array form may end unclosed: no damage
    array_raw = write_trace(tmp_path / "a.json", _events(), wrapper=False).read_bytes()
    array.write_bytes(array_raw[:array_raw.rindex(b"},", 0, len(array_raw) - 100) + 2])
    assert problems(index_file(ByteSource(str(array)), workers=1, batch_bytes=4096)) == {}
