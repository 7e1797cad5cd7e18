"""`args` read back from a gzip trace by random access are the args of the events asked for,
for any subset in any order: the same as from the plain file."""

from __future__ import annotations

import csv
import gzip
import io
import random

import pytest

from proftui.core.export import export_events, read_args

from helpers import load, write_trace

N = 20_000


def _events(n: int) -> list[dict]:
    rng = random.Random(7)
    return [{"ph": "X", "name": f"op{i % 37}", "pid": 1, "tid": i % 3, "ts": i * 10, "dur": 5,
             "args": {"correlation": i, "pad": "x" * rng.randrange(0, 300)}}
            for i in range(n)]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The same trace plain and gzip-compressed, indexed in small batches (many ranges)."""
    root = tmp_path_factory.mktemp("gz")
    events = _events(N)  # some 6 MB: several inflated chunks, gaps between the ranges
    plain = load(write_trace(root / "t.json", events), batch_bytes=1 << 16)
    packed = load(write_trace(root / "t.json.gz", events, gz=True), batch_bytes=1 << 16)
    assert gzip.open(root / "t.json.gz").read() == (root / "t.json").read_bytes()
    return plain, packed


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
        assert packed.event_args(ref) == plain.event_args(ref)


@pytest.fixture(scope="module")
def small_pair(tmp_path_factory):
    """A few thousand events, plain and gzip, for one-event-at-a-time reads of every event."""
    root = tmp_path_factory.mktemp("gz_small")
    events = _events(3000)
    plain = load(write_trace(root / "t.json", events), batch_bytes=1 << 14)
    packed = load(write_trace(root / "t.json.gz", events, gz=True), batch_bytes=1 << 14)
    return plain, packed


def test_event_args_of_every_event(small_pair) -> None:
    plain, packed = small_pair
    refs = plain.col("slices.ref").tolist()
    assert len(packed.col("batches.start")) > 20
    got = [packed.event_args(ref) for ref in refs]
    assert got == [plain.event_args(ref) for ref in refs]
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
