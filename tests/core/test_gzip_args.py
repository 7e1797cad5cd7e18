"""`args` read back from a gzip trace by random access are the args of the events asked for,
for any subset in any order: the same as from the plain file."""

from __future__ import annotations

import gzip
import random

import pytest

from proftui.core.export import read_args

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
