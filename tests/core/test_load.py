"""load_trace as a whole: the index cache, its progress and cancelling, and a core that never
pulls in the UI."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from proftui.core import Cancelled, ProftuiError, load_trace
from proftui.core.load.loader import cached_trace
from proftui.core.query.args import slice_args

from helpers import columns_equal, slices, write_trace

EVENTS = [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "trainer"}},
    {"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": "1780676244313289.125", "dur": 900,
     "args": {"step": 1}},
    {"ph": "X", "name": "conv", "pid": 1, "tid": 1, "ts": 1780676244313300, "dur": 5.5,
     "args": {"shape": [[1, 3]]}},
    {"ph": "B", "name": "io", "pid": 1, "tid": 2, "ts": 1780676244313290},
    {"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 1780676244313291, "s": "g"},
    {"ph": "C", "name": "mem", "pid": 1, "ts": 1780676244313292, "args": {"used": 5}},
    {"ph": "s", "id": 2**60 + 1, "pid": 1, "tid": 1, "ts": 1780676244313301},
    {"ph": "f", "id": 2**60 + 1, "pid": 1, "tid": 2, "ts": 1780676244313302, "bp": "e"},
]


def _open(path) -> object:
    return load_trace(str(path), use_cache=True, batch_bytes=64)


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_second_load_comes_from_the_cache(tmp_path, cache_dir, gz) -> None:
    trace = write_trace(tmp_path / ("t.json.gz" if gz else "t.json"), EVENTS, gz=gz)
    first = _open(trace)
    assert "from_cache" not in first.meta
    assert len(list(cache_dir.glob("*.idx"))) == 1
    second = _open(trace)
    assert second.meta["from_cache"] is True
    assert columns_equal(first, second)
    assert slices(second) == slices(first) == [
        ("step", 1780676244313289125, 900000, "Thread 1", 0),
        ("conv", 1780676244313300000, 5500, "Thread 1", 1),
        ("io", 1780676244313290000, 0, "Thread 2", 0),
    ]
    assert second.diagnostics.count("unclosed_begin") == 1
    assert second.meta["phase_counts"] == first.meta["phase_counts"]
    assert second.col("flows.flow_id_num").tolist() == [2**60 + 1]
    assert [slice_args(second, i) for i in range(2)] == [{"step": 1}, {"shape": [[1, 3]]}]
    # nothing is written next to the trace
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["cache", trace.name])


def test_a_modified_file_is_indexed_again(tmp_path, cache_dir) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    _open(trace)
    stat = trace.stat()
    # same size, same content length, only the time stamp differs
    changed = [dict(e) for e in EVENTS]
    changed[1]["name"] = "stop"
    write_trace(trace, changed)
    assert trace.stat().st_size == stat.st_size
    os.utime(trace, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    again = _open(trace)
    assert "from_cache" not in again.meta
    assert again.slice_name(0) == "stop"
    # different size, old time stamp
    write_trace(trace, EVENTS[:3])
    os.utime(trace, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    smaller = _open(trace)
    assert "from_cache" not in smaller.meta
    assert [s[0] for s in slices(smaller)] == ["step", "conv"]
    assert _open(trace).meta.get("from_cache") is True


@pytest.mark.parametrize("damage", ["truncated-header", "truncated-data", "empty", "garbage",
                                    "bad-magic", "flipped-header", "huge-length"])
def test_a_damaged_cache_file_is_ignored_and_rebuilt(tmp_path, cache_dir, damage) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    good = _open(trace)
    [entry] = cache_dir.glob("*.idx")
    data = entry.read_bytes()
    damaged = {
        "truncated-header": data[:40],
        "truncated-data": data[: len(data) - 100],
        "empty": b"",
        "garbage": os.urandom(len(data)),
        "bad-magic": b"X" + data[1:],
        "flipped-header": data[:30] + bytes([data[30] ^ 0xFF]) + data[31:],
        "huge-length": data[:12] + (2**62).to_bytes(8, "little") + data[20:],
    }[damage]
    entry.write_bytes(damaged)
    rebuilt = _open(trace)
    assert "from_cache" not in rebuilt.meta
    assert columns_equal(good, rebuilt)
    assert entry.read_bytes() != damaged  # written again, whole
    assert _open(trace).meta.get("from_cache") is True


def test_without_cache_nothing_is_written(tmp_path, cache_dir) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    load_trace(str(trace), use_cache=False)
    assert not cache_dir.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


def test_progress_and_cancel(tmp_path) -> None:
    path = write_trace(tmp_path / "t.json", EVENTS * 300)
    seen: list[tuple[int, int, int]] = []
    load_trace(str(path), use_cache=False, batch_bytes=4096,
               progress=lambda done, total, events: seen.append((done, total, events)))
    assert len(seen) > 5
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)  # bytes only go forward
    assert seen[-1][0] == seen[-1][1] == path.stat().st_size
    assert seen[-1][2] == len(EVENTS) * 300
    calls = []
    with pytest.raises(Cancelled):
        load_trace(str(path), use_cache=False, batch_bytes=4096,
                   cancelled=lambda: calls.append(1) or len(calls) > 3)


def test_core_does_not_import_the_ui(tmp_path) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    code = (
        "import sys\n"
        "import proftui.core\n"
        "from proftui.core import load_trace\n"
        "from proftui.core.query.args import slice_args\n"
        f"index = load_trace({str(trace)!r}, use_cache=False)\n"
        "index.summary(); slice_args(index, 0)\n"
        "ui = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')\n"
        "            or m.startswith(('proftui.tui', 'proftui.themes')))\n"
        "print(index.n_slices, ui)\n"
    )
    env = dict(os.environ, PROFTUI_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "3 []"


def test_cached_trace_reads_the_cache_and_never_indexes(tmp_path, cache_dir) -> None:
    trace = write_trace(tmp_path / "t.json", EVENTS)
    assert cached_trace(str(trace)) is None
    assert not cache_dir.exists()  # nothing indexed, nothing stored
    first = _open(trace)
    again = cached_trace(str(trace))
    assert again is not None and again.meta["from_cache"] is True
    assert columns_equal(first, again) and slices(again) == slices(first)
    assert again.meta["profile"] == first.meta["profile"]
    write_trace(trace, EVENTS[:3])  # changed: the entry is no longer current
    assert cached_trace(str(trace)) is None
    with pytest.raises(ProftuiError, match="no-such"):
        cached_trace(str(tmp_path / "no-such.json"))


def test_reopening_from_the_cache_imports_no_indexing_code(tmp_path) -> None:
    """The cached path reads the cache: the parser, the builder, the worker processes and the
    SQLite importer are imported to index, not to check that a file opens nor to reopen it."""
    trace = write_trace(tmp_path / "t.json", EVENTS)
    env = dict(os.environ, PROFTUI_CACHE_DIR=str(tmp_path / "cache"))
    code = (
        "import sys\n"
        "from proftui.core.load.loader import check_openable, load_trace\n"
        "from proftui.core.query.rows import rows_for\n"
        f"check_openable({str(trace)!r})\n"
        f"index = load_trace({str(trace)!r})\n"
        "rows_for(index)\n"
        "heavy = ('proftui.core.build.builder', 'proftui.core.importers.chrome.read',\n"
        "         'proftui.core.importers.ascend_db.timeline', 'proftui.core.source.dbfile',\n"
        "         'sqlite3', 'proftui.core.load.indexing', 'proftui.core.runtime.workers')\n"
        "print(bool(index.meta.get('from_cache')), [m for m in heavy if m in sys.modules])\n"
    )
    outputs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, timeout=60) for _ in range(2)]
    assert all(out.returncode == 0 for out in outputs), outputs[-1].stderr
    assert outputs[0].stdout.split(" ", 1)[0] == "False"  # the first run indexed it
    assert outputs[1].stdout.strip() == "True []"
