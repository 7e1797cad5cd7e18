"""One cache entry per trace file of a profile of several: stored on a cold open, merged on a
reopen into the very index a cold open builds, only the changed files read again; a damaged
entry is read afresh, never trusted; nothing stored without the cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from proftui.core.cache import entries as cache_entries
from proftui.core.cache import file as cache_file
from proftui.core.cache import indexes as cache
from proftui.core.cache import ranks as rank_cache
from proftui.core.importers.chrome.read import BATCH_BYTES
from proftui.core.load import indexing
from proftui.core.load import loader as load
from proftui.core.load.loader import load_trace
from proftui.core.model.index import TraceIndex
from proftui.core.query.args import slice_args
from proftui.tui.cli import main

from helpers import kineto_rank_file, kineto_ranks

START_US = 1_700_000_000_000_000  # the wall clock, as Kineto writes it


def _events(rank: int, extra: int = 0) -> list[dict]:
    """Every kind of event a builder's state keeps: slices, B/E, instants, flows, counters,
    async spans, process and thread names."""
    events: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": f"host {rank}"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 7, "args": {"name": "main"}},
        {"ph": "M", "name": "process_sort_index", "pid": 0, "args": {"sort_index": 5}},
    ]
    for i in range(40 + extra):
        ts = START_US + i * 20
        events += [
            {"ph": "X", "name": f"op{i % 5}", "cat": "cpu_op", "pid": 1, "tid": 7, "ts": ts,
             "dur": 15, "args": {"i": i}},
            {"ph": "X", "name": f"kernel r{rank}", "cat": "kernel", "pid": 0, "tid": 3,
             "ts": ts + 5, "dur": 4},
            {"ph": "s", "id": i, "cat": "ac2g", "name": "ac2g", "pid": 1, "tid": 7,
             "ts": ts + 1},
            {"ph": "f", "id": i, "cat": "ac2g", "name": "ac2g", "pid": 0, "tid": 3,
             "ts": ts + 6, "bp": "e"},
            {"ph": "C", "name": "mem", "pid": 0, "ts": ts, "args": {"MB": i % 7}},
        ]
        if i % 10 == 0:
            events += [{"ph": "B", "name": "phase", "pid": 1, "tid": 8, "ts": ts},
                       {"ph": "E", "pid": 1, "tid": 8, "ts": ts + 12},
                       {"ph": "b", "cat": "io", "id": f"req{i}", "name": "req", "pid": 1,
                        "ts": ts},
                       {"ph": "e", "cat": "io", "id": f"req{i}", "name": "req", "pid": 1,
                        "ts": ts + 30},
                       {"ph": "i", "name": "mark", "pid": 1, "tid": 7, "ts": ts, "s": "p"}]
    return events


def _write_rank(folder: Path, rank: int, extra: int = 0) -> Path:
    return kineto_rank_file(folder, rank, _events(rank, extra))


@pytest.fixture
def ranks(tmp_path) -> Path:
    """A folder of three Kineto ranks (of different sizes)."""
    return kineto_ranks(tmp_path / "ranks", lambda rank: _events(rank, extra=rank))


@pytest.fixture(params=["here", "pool"])
def reading(request, monkeypatch) -> list[str]:
    """The names of the files read afresh from now on: here (read_alone), and with the
    "pool" parameter also by worker processes."""
    read: list[str] = []
    real = indexing.read_alone
    monkeypatch.setattr(indexing, "read_alone", lambda source, *args, **kwargs: (
        read.append(Path(source.path).name) or real(source, *args, **kwargs)))
    if request.param == "pool":
        real_pool = indexing.FilePool
        monkeypatch.setattr(indexing, "POOL_MIN_BYTES", 0)
        monkeypatch.setattr(indexing, "worker_count", lambda n: 2)
        monkeypatch.setattr(indexing, "FilePool", lambda jobs, workers: (
            read.extend(Path(j.path).name for j in jobs) or real_pool(jobs, workers)))
    return read


def _rank_entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob(f"*.{rank_cache.SUFFIX}"))


def _without_index(index: TraceIndex) -> None:
    """Remove the profile's whole index from the cache (its rank entries stay)."""
    Path(index.meta["cache_path"]).unlink()


def _key(ranks: Path, number: int) -> rank_cache.Key:
    """The key of file `number` of the folder, opened with the default batch size."""
    opening = load._opening(str(ranks), None, True)
    return rank_cache.Key(opening.sources[number].identity, opening.used[number].group,
                          opening.clocks[number].offset_ns, BATCH_BYTES)


def _same(a: TraceIndex, b: TraceIndex) -> None:
    """Every array, the string table, the metadata (but this run's) and the diagnostics."""
    assert a.arrays.keys() == b.arrays.keys()
    for key in a.arrays:
        assert a.arrays[key].dtype == b.arrays[key].dtype, key
        assert np.array_equal(a.arrays[key], b.arrays[key]), key
    assert a.strings.blob.tobytes() == b.strings.blob.tobytes()
    assert np.array_equal(a.strings.offsets, b.strings.offsets)

    def meta(index: TraceIndex) -> dict:
        return {k: v for k, v in index.meta.items() if k not in cache._RUN_KEYS}

    assert meta(a) == meta(b)
    assert a.diagnostics.to_list() == b.diagnostics.to_list()


def test_a_cold_open_stores_one_rank_entry_per_file(ranks, cache_dir, reading,
                                                    capsys) -> None:
    index = load_trace(str(ranks))
    assert sorted(reading) == [f"rank-{n}.pt.trace.json" for n in range(3)]
    assert index.meta["ranks_cached"] == 0
    assert len(_rank_entries(cache_dir)) == 3
    described = [cache_entries.describe(e, cache.FORMAT_VERSION, cache.__version__)
                 for e in cache_entries.entries(cache_dir)]
    ranked = sorted((Path(d.sources[0]).name, d.problem) for d in described
                    if d.kind == "rank")
    assert ranked == [(f"rank-{n}.pt.trace.json", "") for n in range(3)]
    assert main(["cache", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["entries"]
    assert sorted(Path(e["sources"][0]["path"]).name for e in listed if e["kind"] == "rank") \
        == [f"rank-{n}.pt.trace.json" for n in range(3)]
    assert main(["cache"]) == 0
    kinds = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert kinds.count("rank") == 3
    assert main(["cache", "clear"]) == 0
    assert _rank_entries(cache_dir) == []


def test_the_index_merged_from_rank_entries_is_the_cold_one(ranks, reading) -> None:
    cold = load_trace(str(ranks))
    _without_index(cold)
    del reading[:]
    merged = load_trace(str(ranks))
    assert reading == []  # no file read again
    assert merged.meta["ranks_cached"] == 3
    assert "from_cache" not in merged.meta  # indexed anew, from the rank entries
    uncached = load_trace(str(ranks), use_cache=False)
    _same(merged, uncached)
    _same(merged, cold)
    assert merged.n_slices > 3 * 40 and slice_args(merged, 0) == slice_args(uncached, 0)


def test_only_the_changed_rank_is_read_again(ranks, cache_dir, reading) -> None:
    load_trace(str(ranks))
    _write_rank(ranks, 1, extra=9)  # rank 1 rewritten: another size and content
    del reading[:]
    reopened = load_trace(str(ranks))
    assert reading == ["rank-1.pt.trace.json"]
    assert reopened.meta["ranks_cached"] == 2
    _same(reopened, load_trace(str(ranks), use_cache=False))
    assert len(_rank_entries(cache_dir)) == 4  # rank 1's new entry beside its old one
    _without_index(reopened)
    del reading[:]
    assert load_trace(str(ranks)).meta["ranks_cached"] == 3 and reading == []


def test_proftui_index_says_how_many_ranks_came_from_their_entries(ranks, capsys) -> None:
    assert main(["index", str(ranks)]) == 0
    assert "cache entries" not in capsys.readouterr().out  # all read: nothing to say
    _write_rank(ranks, 2, extra=5)
    assert main(["index", str(ranks)]) == 0
    assert "(2 of 3 trace files from their own cache entries)" in capsys.readouterr().out


def test_a_rank_added_or_removed_reads_no_other(ranks, reading) -> None:
    load_trace(str(ranks))
    _write_rank(ranks, 3)
    del reading[:]
    grown = load_trace(str(ranks))
    assert reading == ["rank-3.pt.trace.json"] and grown.meta["ranks_cached"] == 3
    _same(grown, load_trace(str(ranks), use_cache=False))
    (ranks / "rank-0.pt.trace.json").unlink()
    del reading[:]
    shrunk = load_trace(str(ranks))
    assert reading == [] and shrunk.meta["ranks_cached"] == 3
    _same(shrunk, load_trace(str(ranks), use_cache=False))


def test_a_touched_rank_is_read_again(ranks, reading) -> None:
    import os

    load_trace(str(ranks))
    os.utime(ranks / "rank-2.pt.trace.json")  # the same bytes, another identity
    del reading[:]
    reopened = load_trace(str(ranks))
    assert reading == ["rank-2.pt.trace.json"] and reopened.meta["ranks_cached"] == 2
    _same(reopened, load_trace(str(ranks), use_cache=False))


def _flip_in_arrays(path: Path) -> None:
    """Flip one byte of an entry's first array (the header, and its checksums, unchanged)."""
    data = bytearray(path.read_bytes())
    header, data_start = cache_file.read_header(bytes(data))
    first = next(a for a in header["arrays"] if a["nbytes"])
    data[data_start + first["offset"]] ^= 0x40
    path.write_bytes(bytes(data))


def test_a_damaged_rank_entry_is_read_again(ranks, cache_dir, reading) -> None:
    cold = load_trace(str(ranks))
    _without_index(cold)
    key = _key(ranks, 1)
    assert rank_cache.load(key) is not None
    _flip_in_arrays(key.path())
    assert rank_cache.load(key) is None
    del reading[:]
    reopened = load_trace(str(ranks))
    assert reading == ["rank-1.pt.trace.json"]
    assert reopened.meta["ranks_cached"] == 2
    _same(reopened, load_trace(str(ranks), use_cache=False))
    _same(reopened, cold)
    _without_index(reopened)  # its entry was written again, whole
    assert load_trace(str(ranks)).meta["ranks_cached"] == 3


def test_an_entry_naming_another_class_is_refused(ranks, cache_dir) -> None:
    """The pickled part is unpickled by a loader that makes only what an entry holds."""
    import pickle

    class Sneaky:
        def __reduce__(self):
            return (print, ("ran",))

    load_trace(str(ranks))
    key = _key(ranks, 0)
    assert rank_cache.load(key) is not None
    header, arrays = cache.read_file(key.path())
    arrays = {k: np.array(v) for k, v in arrays.items()}
    arrays["rest"] = np.frombuffer(pickle.dumps({"state": Sneaky()}), np.uint8)
    cache.write_file(key.path(), {k: v for k, v in header.items()
                                  if k not in ("arrays", "data_bytes", "checksum")}, arrays)
    assert rank_cache.load(key) is None


def test_without_the_cache_no_rank_entry_is_read_or_written(ranks, cache_dir,
                                                            monkeypatch) -> None:
    uncached = load_trace(str(ranks), use_cache=False)
    assert _rank_entries(cache_dir) == []
    assert "ranks_cached" not in uncached.meta
    load_trace(str(ranks))
    assert len(_rank_entries(cache_dir)) == 3

    def no(*args):
        raise AssertionError("the rank cache was used")

    monkeypatch.setattr(rank_cache, "load", no)
    monkeypatch.setattr(rank_cache, "store", no)
    _same(load_trace(str(ranks), use_cache=False), uncached)


def test_a_lone_trace_gets_no_rank_entry(tmp_path, cache_dir) -> None:
    load_trace(str(_write_rank(tmp_path, 0)))
    assert _rank_entries(cache_dir) == []


def test_gzip_ranks_keep_their_seek_points(tmp_path, reading) -> None:
    """A gzip rank's seek points (for reading args back) come back with its entry, and from
    a worker process that read it: every rank of the index has them."""
    import gzip
    import random
    import string

    from proftui.core.cache.seeks import open_source
    from proftui.core.export.to_csv import read_args
    from proftui.core.source.gzip_seek import SPACING

    rng = random.Random(3)
    pad = "".join(rng.choices(string.ascii_letters, k=1 << 16))  # compresses little
    folder = tmp_path / "gz"
    folder.mkdir()
    for rank in range(2):
        events = [{"ph": "X", "name": f"op{i % 7}", "pid": 1, "tid": 1,
                   "ts": START_US + 10 * i, "dur": 5,
                   "args": {"i": i, "pad": pad[(i * 97) % 60000:][:300]}}
                  for i in range(SPACING // 330 + 2000)]
        data = json.dumps({"distributedInfo": {"rank": rank}, "traceEvents": events}).encode()
        assert len(data) > SPACING
        (folder / f"rank-{rank}.pt.trace.json.gz").write_bytes(gzip.compress(data, 1))
    cold = load_trace(str(folder))
    assert all(open_source(cold, n).seek_points is not None for n in range(2))
    _without_index(cold)
    del reading[:]
    merged = load_trace(str(folder))
    assert reading == [] and merged.meta["ranks_cached"] == 2
    assert all(open_source(merged, n).seek_points is not None for n in range(2))
    last = merged.col("slices.ref")[-3:]
    assert read_args(merged, last) == read_args(load_trace(str(folder), use_cache=False), last)


@pytest.mark.parametrize("record", ["file", "state"])
def test_an_entry_of_another_record_version_is_read_again(ranks, cache_dir, reading,
                                                         record) -> None:
    """Its header as current as can be, but the record it holds of another version: a miss,
    the rank read afresh, the index the same."""
    import dataclasses
    import io
    import pickle

    from proftui.core.cache.ranks import _Loader

    cold = load_trace(str(ranks))
    _without_index(cold)
    key = _key(ranks, 1)
    assert rank_cache.load(key) is not None
    header, arrays = cache.read_file(key.path())
    arrays = {k: np.array(v) for k, v in arrays.items()}
    rest = _Loader(io.BytesIO(arrays["rest"].tobytes())).load()
    if record == "file":
        rest = dataclasses.replace(rest, version=rest.VERSION + 1)
    else:
        rest = dataclasses.replace(rest, state=dataclasses.replace(
            rest.state, version=rest.state.VERSION + 1))
    arrays["rest"] = np.frombuffer(pickle.dumps(rest), np.uint8)
    cache.write_file(key.path(), {k: v for k, v in header.items()
                                  if k not in ("arrays", "data_bytes", "checksum")}, arrays)
    assert rank_cache.load(key) is None
    del reading[:]
    reopened = load_trace(str(ranks))
    assert reading == ["rank-1.pt.trace.json"]
    assert reopened.meta["ranks_cached"] == 2
    _same(reopened, cold)
