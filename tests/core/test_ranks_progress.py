"""Each file's progress while a profile of several ranks indexes: which rank, how far, which
came from the rank cache, said a few times a second, from worker processes too."""

from __future__ import annotations

from pathlib import Path

import pytest

from proftui.core.load import indexing, progress
from proftui.core.load.loader import load_trace
from proftui.core.load.progress import (
    CACHED,
    READ,
    READING,
    WAITING,
    FileStatus,
    RanksTracker,
    ranks_summary,
)

from helpers import kineto_ranks


def _events(rank: int) -> list[dict]:
    events: list[dict] = [{"ph": "M", "name": "process_name", "pid": 1,
                           "args": {"name": f"host {rank}"}}]
    for i in range(25_000 if rank == 3 else 300 + 50 * rank):  # rank 3: over 2 MB
        events.append({"ph": "X", "name": f"op{i % 7}", "cat": "cpu_op", "pid": 1, "tid": 7,
                       "ts": 1_700_000_000_000_000 + i * 20, "dur": 15, "args": {"i": i}})
    return events


@pytest.fixture
def ranks(tmp_path) -> Path:
    """Four Kineto ranks of different sizes, the last one read in several chunks."""
    return kineto_ranks(tmp_path / "ranks", _events, ranks=4)


def _opened(path: Path, **kwargs) -> list[tuple[FileStatus, ...]]:
    said: list[tuple[FileStatus, ...]] = []
    load_trace(str(path), batch_bytes=4096, ranks_progress=said.append, **kwargs)
    return said


def test_the_tracker_says_at_most_every_interval_and_the_last_picture_always() -> None:
    now = [0.0]
    said: list[tuple[FileStatus, ...]] = []
    tracker = RanksTracker(["rank 0", "rank 1"], [100, 200], said.append, every_s=0.25,
                           clock=lambda: now[0])
    tracker.reading(0, 10)  # the first is said at once
    tracker.reading(0, 50)
    tracker.reading(1, 20)  # within the interval: kept, not said
    assert len(said) == 1 and said[0][0].done == 10 and said[0][1].state == WAITING
    now[0] = 0.3
    tracker.finished(0, cached=False)
    assert [(f.state, f.done) for f in said[-1]] == [(READ, 100), (READING, 20)]
    tracker.reading(0, 5)  # a finished file stays finished
    tracker.finished(1, cached=True)
    assert len(said) == 2
    tracker.flush()
    assert [(f.name, f.state, f.done) for f in said[-1]] == [("rank 0", READ, 100),
                                                              ("rank 1", CACHED, 200)]
    assert ranks_summary(said[-1]) == (1, 1, 2)


def test_each_rank_read_then_each_from_its_rank_entry(ranks, monkeypatch) -> None:
    monkeypatch.setattr(progress, "REPORT_EVERY_S", 0.0)  # every change said
    said = _opened(ranks)
    names = [f.name for f in said[-1]]
    assert names == ["rank-0", "rank-1", "rank-2", "rank-3"]  # their groups
    assert [f.state for f in said[-1]] == [READ] * 4
    assert all(f.done == f.size > 4096 for f in said[-1])
    assert said[-1][3].size > 2 << 20
    # Part way: the last rank read chunk by chunk once the others are read.
    partial = [s for s in said if s[3].state == READING and 0 < s[3].done < s[3].size]
    assert partial and all(f.state == READ for f in partial[0][:3])
    assert said[0][3].state == WAITING
    # Reopened without the whole profile's entry: each rank from its own.
    from proftui.core.cache import indexes as cache

    monkeypatch.setattr(cache, "load", lambda *a, **k: (_ for _ in ()).throw(cache.CacheMiss()))
    again = _opened(ranks)
    assert [f.state for f in again[-1]] == [CACHED] * 4
    assert ranks_summary(again[-1]) == (0, 4, 4)


def test_ranks_read_by_worker_processes_say_how_far_they_are(ranks, monkeypatch) -> None:
    monkeypatch.setattr(progress, "REPORT_EVERY_S", 0.0)
    monkeypatch.setattr(indexing, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(indexing, "worker_count", lambda n: 2)
    pools = []
    real = indexing.FilePool
    monkeypatch.setattr(indexing, "FilePool",
                        lambda jobs, workers: pools.append(real(jobs, workers)) or pools[-1])
    said = _opened(ranks, use_cache=False)
    assert len(pools) == 1
    assert [f.state for f in said[-1]] == [READ] * 4
    # The last rank is read by a worker: how far it is is said from the worker's reports
    # before its record arrives.
    last = [s[3] for s in said if s[3].state == READING]
    assert any(0 < f.done < f.size for f in last)


