"""The index cache: reopened memory-mapped, never trusted when stale, foreign or damaged."""

from __future__ import annotations

import os

import pytest

from proftui.core import load_trace

from helpers import columns_equal, write_trace

EVENTS = [{"ph": "X", "name": f"op{i % 7}", "pid": 1, "tid": i % 3, "ts": i * 10, "dur": 5,
           "args": {"i": i}} for i in range(500)]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(path))
    return path


def test_second_open_is_from_the_cache(tmp_path, cache_dir) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    first = load_trace(str(trace))
    assert "from_cache" not in first.meta
    second = load_trace(str(trace))
    assert second.meta["from_cache"] is True
    assert columns_equal(first, second)
    assert not second.col("slices.start").flags.writeable  # mapped read-only
    assert second.slice_args(3) == first.slice_args(3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "t.json"]  # nothing beside


def test_changed_file_is_indexed_again(tmp_path, cache_dir) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    load_trace(str(trace))
    write_trace(trace, EVENTS[:100])
    os.utime(trace, ns=(1, 1))  # even with an old mtime, the size differs
    again = load_trace(str(trace))
    assert "from_cache" not in again.meta
    assert again.n_slices == 100


@pytest.mark.parametrize("damage", ["truncate", "garbage", "version", "empty"])
def test_damaged_cache_is_rebuilt(tmp_path, cache_dir, damage) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    good = load_trace(str(trace))
    [path] = cache_dir.glob("*.idx")
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(data[:100] + os.urandom(len(data) - 100))
    elif damage == "version":
        path.write_bytes(data.replace(b'"version":1', b'"version":9', 1))
    else:
        path.write_bytes(b"")
    rebuilt = load_trace(str(trace))
    assert "from_cache" not in rebuilt.meta
    assert columns_equal(good, rebuilt)
    assert load_trace(str(trace)).meta.get("from_cache") is True  # and stored again


def test_unwritable_cache_still_opens(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(blocker / "cache"))
    index = load_trace(str(write_trace(tmp_path / "t.json", EVENTS)))
    assert index.n_slices == 500
    assert "could not write the cache" in index.meta["cache_error"]


def test_no_cache_writes_nothing(tmp_path, cache_dir) -> None:
    load_trace(str(write_trace(tmp_path / "t.json", EVENTS)), use_cache=False)
    assert not cache_dir.exists()
