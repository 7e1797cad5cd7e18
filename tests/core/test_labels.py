"""Labels of events by their distinct combinations (chrome_views.Labels) give the same index, ids
and all, as reading the fields one at a time."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from proftui.core.build import builder as build
from proftui.core.importers.chrome import events as chrome_events
from proftui.core.importers.chrome import views as chrome_views
from proftui.core.model.index import TraceIndex

from helpers import load, problems, write_trace


def _one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chrome_views.Labels, "of", lambda self, builder, evs: None)


def _same(a: TraceIndex, b: TraceIndex) -> None:
    assert a.arrays.keys() == b.arrays.keys()
    for key in a.arrays:
        assert np.array_equal(a.arrays[key], b.arrays[key]), key
    assert [a.strings[i] for i in range(len(a.strings))] == \
        [b.strings[i] for i in range(len(b.strings))]
    assert problems(a) == problems(b)


def _events(seed: int) -> list[dict]:
    """Complete, begin/end and flow events over few names, threads and colours, repeated;
    pids as numbers and as their text, a bool, a float and (rarely) a list among them."""
    rng = random.Random(seed)
    names = ["gemm", "relu", "copy", "", 7, None, "a\u00e9b"]
    cats = ["kernel", "cpu_op", None, "gpu_memcpy"]
    pids = [1, "1", 2, True, "2.5"]
    out: list[dict] = []
    ts = 0.0
    for i in range(400):
        ts += rng.choice([1, 2.5, 0.125])
        ev = {"ph": rng.choice("XXXXXBEstf"), "name": rng.choice(names),
              "cat": rng.choice(cats), "pid": rng.choice(pids), "tid": rng.choice([1, 2, "3"]),
              "ts": ts, "dur": rng.choice([1, 0.5, 2])}
        if ev["ph"] in "stf":
            ev["id"] = rng.randrange(5)
        if rng.random() < 0.2:
            ev["cname"] = rng.choice(["good", "bad", None])
        if rng.random() < 0.01:
            ev["pid"] = [3]  # unhashable: its batch is read one field at a time
        for key in ("name", "cat", "pid"):
            if rng.random() < 0.05:
                del ev[key]
        out.append(ev)
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("batch", [64, 1 << 12, 1 << 20])
def test_labels_equal_the_fields_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               seed: int, batch: int) -> None:
    path = write_trace(tmp_path / "t.json", _events(seed))
    fast = load(path, batch)
    _one_at_a_time(monkeypatch)
    _same(fast, load(path, batch))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("limit", [0, 3, 12])
def test_labels_that_forget_past_their_limit_equal_the_fields_one_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, limit: int) -> None:
    """Labels forget their combinations past LIMIT, also while a batch is read (the native
    reader's combinations looked up once a batch are looked up again then)."""
    path = write_trace(tmp_path / "t.json", _events(seed))
    monkeypatch.setattr(chrome_views.Labels, "LIMIT", limit)
    fast = load(path, 1 << 12)
    _one_at_a_time(monkeypatch)
    _same(fast, load(path, 1 << 12))


def test_new_strings_are_numbered_by_column_then_event(tmp_path: Path) -> None:
    """Every new name before any new category, as the columns one by one number them."""
    events = [{"ph": "X", "name": n, "cat": c, "pid": 1, "tid": 1, "ts": i, "dur": 1}
              for i, (n, c) in enumerate([("a", "k1"), ("b", "k2"), ("a", "k2")])]
    index = load(write_trace(tmp_path / "t.json", events))
    ids = {index.strings[i]: i for i in range(len(index.strings))}
    assert ids["a"] < ids["b"] < ids["k1"] < ids["k2"]


def _grouped_columns(batch: list) -> dict[str, np.ndarray]:
    """The slices of one batch added twice, as the files of two ranks (one builder)."""
    from proftui.core.model.diagnostics import Diagnostics

    builder = build.TraceBuilder(Diagnostics())
    events = chrome_events.ChromeEvents(builder)
    for n, group in enumerate(["rank 0", "rank 1"]):
        builder.tracks.set_group(group)
        events.add_events(batch, n * len(batch), 0)
    return {k: np.concatenate(v) for k, v in builder._slices.parts.items()} | {
        "tracks": np.array(builder.tracks.keys_in_order, object)}


def test_the_same_threads_in_two_ranks_are_two_tracks(monkeypatch: pytest.MonkeyPatch) -> None:
    import orjson

    from proftui.core.importers.chrome.decode import decode_fast

    def batch() -> list:
        return decode_fast(orjson.dumps([e for e in _events(1) if e["ph"] == "X"
                                          and isinstance(e.get("pid"), (int, str))]))

    fast = _grouped_columns(batch())
    _one_at_a_time(monkeypatch)
    slow = _grouped_columns(batch())
    assert fast.keys() == slow.keys()
    for key in fast:
        assert np.array_equal(fast[key], slow[key]), key
    half = len(fast["track"]) // 2
    assert not set(fast["track"][:half]) & set(fast["track"][half:])
