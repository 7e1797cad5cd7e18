"""`args` read back from a gzip trace by random access are the args of the events asked for,
for any subset in any order: the same as from the plain file, from the file's start or from
the seek points kept with the cache (and, those damaged, from the start again)."""

from __future__ import annotations

import csv
import fcntl
import gzip
import io
import os
import random
import string
from pathlib import Path

import numpy as np
import pytest

from proftui.core.cache import entries as cache_entries
from proftui.core.cache import indexes as cache
from proftui.core.cache import seeks as seek_cache
from proftui.core.cache.seeks import open_source
from proftui.core.export.to_csv import export_events, read_args
from proftui.core.load.loader import load_trace
from proftui.core.query.args import args_of
from proftui.core.source import gzip_seek
from proftui.core.source.streams import ByteSource

from helpers import load, write_trace

N = 20_000


def _events(n: int) -> list[dict]:
    rng = random.Random(7)
    return [{"ph": "X", "name": f"op{i % 37}", "pid": 1, "tid": i % 3, "ts": i * 10, "dur": 5,
             "args": {"correlation": i,  # text that compresses little: deflate blocks are short
                      "pad": "".join(rng.choices(string.ascii_letters, k=rng.randrange(300)))}}
            for i in range(n)]


def _trace_files(tmp_path_factory) -> tuple[Path, Path]:
    """The trace of N events (some 6 MB: several inflated chunks, gaps between the ranges),
    plain and gzip-compressed, written once for the whole run: making them is most of this
    module's setup, which every xdist worker running one of its tests would repeat. No test
    changes them (the cache's files are the tests' own)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root = shared / "gzip_args_trace"
    with open(shared / "gzip_args_trace.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker writes them, the others wait
        if not root.exists():
            part = root.with_suffix(".part")
            part.mkdir()
            events = _events(N)
            write_trace(part / "t.json", events)
            write_trace(part / "t.json.gz", events, gz=True)
            part.rename(root)
    return root / "t.json", root / "t.json.gz"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The same trace plain and gzip-compressed, indexed in small batches (many ranges)."""
    plain, packed = _trace_files(tmp_path_factory)
    assert gzip.open(packed).read() == plain.read_bytes()
    return load(plain, batch_bytes=1 << 16), load(packed, batch_bytes=1 << 16)


def test_every_events_args_read_in_bulk(pair) -> None:
    plain, packed = pair
    refs = plain.col("slices.ref")
    assert len(packed.col("batches.start")) > 50  # many ranges, not one
    assert read_args(packed, packed.col("slices.ref")) == read_args(plain, refs)
    # event ordinal i has correlation i
    assert [a["correlation"] for a in read_args(packed, refs)] == refs.tolist()


@pytest.mark.parametrize("seed", range(5))
def test_random_subsets_in_random_order(pair, seed) -> None:
    plain, packed = pair
    rng = random.Random(seed)
    refs = rng.sample(range(N), rng.choice([3, 50, 700]))
    got = read_args(packed, refs)
    assert got == read_args(plain, refs)
    assert [a["correlation"] for a in got] == refs  # event ordinal i has correlation i


def test_descending_and_one_at_a_time(pair) -> None:
    plain, packed = pair
    refs = list(range(N - 1, -1, -997))
    assert [a["correlation"] for a in read_args(packed, refs)] == refs
    for ref in refs[:5]:
        assert args_of(packed, ref) == args_of(plain, ref)


@pytest.fixture(scope="module")
def small_pair(tmp_path_factory):
    """A few thousand events, plain and gzip, for one-event-at-a-time reads of every event."""
    root = tmp_path_factory.mktemp("gz_small")
    events = _events(3000)
    plain = load(write_trace(root / "t.json", events), batch_bytes=1 << 14)
    packed = load(write_trace(root / "t.json.gz", events, gz=True), batch_bytes=1 << 14)
    return plain, packed


def test_event_args_one_at_a_time_at_every_batch_boundary(small_pair) -> None:
    """Each event read alone from the gzip trace, as a click reads it: the first and last
    event of every batch (where a read starts or ends at a cut) and a sample of the rest
    (every event of the 3,000 took 16 s and found nothing the boundaries do not)."""
    plain, packed = small_pair
    firsts = packed.col("batches.first_ordinal").tolist()
    assert len(firsts) > 20
    every = set(plain.col("slices.ref").tolist())
    edges = {ref for first in firsts for ref in (first - 1, first)} & every
    refs = sorted(edges | set(random.Random(7).sample(sorted(every), 300)))
    got = [args_of(packed, ref) for ref in refs]
    assert got == [args_of(plain, ref) for ref in refs]
    assert [a["correlation"] for a in got] == refs


def test_export_of_a_subset_with_args(pair, tmp_path) -> None:
    """A window deep in the file on one track, with args columns (the ranges start far from the
    stream's start): the same CSV from the gzip trace as from the plain one, and each row's
    correlation is its own event's."""
    plain, packed = pair
    track = int(plain.col("slices.track")[plain.col("slices.ref").tolist().index(1)])  # tid 1
    csvs = []
    for index, name in ((plain, "plain.csv"), (packed, "packed.csv")):
        export_events(index, str(tmp_path / name), start_ns=120_000_000, end_ns=125_000_000,
                      tracks=[track], args_keys=["correlation", "pad"], unit="ns")
        csvs.append((tmp_path / name).read_text())
    assert csvs[0] == csvs[1]
    rows = list(csv.DictReader(io.StringIO(csvs[1])))
    # ts = 10 us x ordinal, tid = ordinal % 3: the window is ordinals 12,000 to 12,499 on tid 1
    want = [i for i in range(12_000, 12_500) if i % 3 == 1]
    assert [int(r["args.correlation"]) for r in rows] == want
    assert [int(r["start_from_capture(ns)"]) for r in rows] == [i * 10_000 for i in want]


# -- seek points kept with the cache ----------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The trace plain (indexed without the cache) and the path of it gzip-compressed: the
    tests damage only their own cache's files, never these."""
    plain, packed = _trace_files(tmp_path_factory)
    return load(plain, batch_bytes=1 << 16), packed


@pytest.fixture
def cached(files, monkeypatch):
    """The trace plain, and gzip-compressed indexed into the test's own cache with a seek
    point every 256 KB, then reopened from it."""
    monkeypatch.setattr(gzip_seek, "SPACING", 256 << 10)
    plain, path = files
    load_trace(str(path), batch_bytes=1 << 16)
    packed = load_trace(str(path), batch_bytes=1 << 16)
    assert packed.meta.get("from_cache")
    return plain, packed


def _from_start_forbidden(monkeypatch) -> None:
    """Inflating a gzip file from its start fails the test from now on."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("inflated from the file's start")
    monkeypatch.setattr(ByteSource, "chunks", refuse)


def test_args_near_the_end_from_a_seek_point(cached, monkeypatch) -> None:
    plain, packed = cached
    points = open_source(packed, 0).seek_points
    assert points is not None and len(points.out) > 15  # several seek points
    want = read_args(plain, list(range(N - 300, N)))
    _from_start_forbidden(monkeypatch)  # the end is read from the seek points alone
    assert read_args(packed, list(range(N - 300, N))) == want
    assert [args_of(packed, ref) for ref in range(N - 5, N)] == want[-5:]
    assert [a["correlation"] for a in want] == list(range(N - 300, N))


def test_every_events_args_across_the_seek_points(cached) -> None:
    plain, packed = cached
    refs = plain.col("slices.ref")
    got = read_args(packed, refs)
    assert got == read_args(plain, refs)
    assert [a["correlation"] for a in got] == refs.tolist()
    rng = random.Random(3)
    some = rng.sample(range(N), 40)
    assert [args_of(packed, ref) for ref in some] == [args_of(plain, r) for r in some]


def _seek_file(index) -> Path:
    return Path(index.meta["cache_path"] + "." + seek_cache.KIND)


@pytest.mark.parametrize("damage", ["flipped byte", "cut short", "missing", "empty"])
def test_a_damaged_seek_file_falls_back_to_the_start(cached, damage) -> None:
    plain, packed = cached
    seek_file = _seek_file(packed)
    data = bytearray(seek_file.read_bytes())
    if damage == "flipped byte":
        data[-40_000] ^= 0x10  # inside the last window
        seek_file.write_bytes(bytes(data))
    elif damage == "cut short":
        seek_file.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "missing":
        seek_file.unlink()
    else:
        seek_file.write_bytes(b"")
    assert open_source(packed, 0).seek_points is None
    refs = [0, N // 2, N - 1, N - 2]
    assert read_args(packed, refs) == read_args(plain, refs)
    assert [a["correlation"] for a in read_args(packed, refs)] == refs


def test_inconsistent_seek_points_are_not_used(cached) -> None:
    """Points whose checksums match but that cannot be right (a bit count of 9, an offset past
    the file) are ignored."""
    plain, packed = cached
    arrays = {k: np.array(v) for k, v in cache.load_derived(packed, seek_cache.KIND).items()}
    arrays["0.bits"][3] = 9
    cache.store_derived(packed, seek_cache.KIND, arrays)
    assert open_source(packed, 0).seek_points is None
    arrays["0.bits"][3] = 0
    arrays["0.inp"][-1] = 10**12
    cache.store_derived(packed, seek_cache.KIND, arrays)
    assert open_source(packed, 0).seek_points is None
    assert read_args(packed, [N - 1]) == read_args(plain, [N - 1])
    # Consistent arrays, but the last window does not inflate: read from the start instead.
    arrays["0.inp"][-1] = arrays["0.inp"][-2] + 1
    arrays["0.windows"][-20:] = 0
    cache.store_derived(packed, seek_cache.KIND, arrays)
    assert open_source(packed, 0).seek_points is not None
    refs = [N - 3, N - 2, N - 1]
    assert read_args(packed, refs) == read_args(plain, refs)
    assert [a["correlation"] for a in read_args(packed, refs)] == refs


def test_seek_points_go_with_their_cache_entry(cached, cache_dir) -> None:
    """The seek file is part of its entry (listed, removed with it); an entry written again
    gets new points of its own, the old ones gone."""
    _, packed = cached
    seek_file = _seek_file(packed)
    [entry] = cache_entries.entries(cache_dir)
    assert entry.files == (packed.meta["cache_path"], str(seek_file))
    first_id = cache.load_derived(packed, seek_cache.KIND)
    Path(packed.meta["cache_path"]).unlink()
    again = load_trace(packed.meta["sources"][0]["path"], batch_bytes=1 << 16)
    assert not again.meta.get("from_cache")
    assert again.meta["cache_id"] != packed.meta["cache_id"]
    assert open_source(again, 0).seek_points is not None
    assert open_source(packed, 0).seek_points is None  # made for the entry that is gone
    assert len(cache.load_derived(again, seek_cache.KIND)["0.out"]) == len(first_id["0.out"])
    [entry] = cache_entries.entries(cache_dir)
    cache_entries.remove(entry)
    assert not seek_file.exists()


def test_without_the_system_zlib(tmp_path, monkeypatch) -> None:
    """Where zlib cannot be called through ctypes, nothing is kept and args are read from the
    file's start: the same args."""
    monkeypatch.setattr(gzip_seek, "_library", lambda: None)
    events = _events(3000)
    plain = load(write_trace(tmp_path / "t.json", events), batch_bytes=1 << 14)
    path = write_trace(tmp_path / "t.json.gz", events, gz=True)
    load_trace(str(path), batch_bytes=1 << 14)
    packed = load_trace(str(path), batch_bytes=1 << 14)
    assert packed.meta.get("from_cache")
    assert not _seek_file(packed).exists()
    refs = list(range(0, 3000, 97)) + [2999]
    assert read_args(packed, refs) == read_args(plain, refs)
