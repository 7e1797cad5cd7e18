"""Broken input to load_trace: what survives a truncation or garbage, what is counted, and
what is refused with one sentence."""

from __future__ import annotations

import gzip
import json
import os
import random
import re

import pytest

from proftui.core import NotATraceError, ProftuiError, TraceIndex
from proftui.core.importers.chrome.scan import entry_boundary
from proftui.core.query.args import slice_args

from helpers import BATCH_SIZES, columns_equal, load, problems, slices, write_trace

# One event of each kind the index keeps, with strings that look like event boundaries.
EVENTS = [
    {"ph": "X", "name": "x1", "pid": 1, "tid": 1, "ts": 1.5, "dur": 10,
     "args": {"k": "},{", "list": [1, {"a": "]"}]}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
    {"ph": "B", "name": "b1", "pid": 1, "tid": 2, "ts": "4.000"},
    {"ph": "i", "name": "i1", "pid": 1, "tid": 1, "ts": 5, "s": "p"},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 9},
    {"ph": "C", "name": "c1", "pid": 1, "ts": 6, "args": {"v": 2}},
    {"ph": "X", "name": 'x2"},{"', "pid": 1, "tid": 1, "ts": 20, "dur": 1},
    {"ph": "i", "name": "i2", "pid": 1, "tid": 1, "ts": 21},
    {"ph": "X", "name": "x3", "pid": 1, "tid": 3, "ts": "22.5", "dur": 0.5,
     "args": {"json": '[{"a":1},{"b":2},{"c":3},{"d":4},{"e":5},{"f":6}]'}},
    {"ph": "X", "name": "x4", "pid": 1, "tid": 3, "ts": 23, "dur": 1},
]

# A smaller trace, a boundary in a name and in args, its global instant last.
SMALL_TRACE = [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}},
    {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 10, "args": {"k": "v,{x}"}},
    {"ph": "X", "name": "b\"},{\"", "pid": 1, "tid": 1, "ts": 2, "dur": 3},
    {"ph": "B", "name": "c", "pid": 1, "tid": 2, "ts": 4},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 9},
    {"ph": "i", "name": "d", "pid": 1, "tid": 1, "ts": 5, "s": "g"},
]


def _spans(raw: bytes, events: list[dict]) -> list[tuple[dict, int, int]]:
    """(event, start, end): where each event's text lies in `raw`."""
    spans = []
    for event in events:
        text = json.dumps(event).encode()
        start = raw.index(text)
        spans.append((event, start, start + len(text)))
    return spans


def _survivors(index: TraceIndex) -> dict[str, object]:
    a = index.arrays
    return {
        "slices": {s[0]: (s[1], s[2]) for s in slices(index)},
        "instants": {index.strings[n] for n in a["instants.name"]},
        "series": {index.strings[n] for n in a["counters.series_name"]},
        "tracks": {index.track_label(t) for t in range(index.n_tracks)},
    }


def _expected(before: list[dict]) -> dict[str, object]:
    """What must survive of the events wholly before a cut."""
    phases = [e["ph"] for e in before]
    out: dict[str, object] = {"slices": {}, "instants": set(), "series": set()}
    ends = [e["ts"] for e in before if e["ph"] == "E"]
    for e in before:
        if e["ph"] == "X":
            out["slices"][e["name"]] = (round(float(e["ts"]) * 1000), round(e["dur"] * 1000))
        elif e["ph"] == "i":
            out["instants"].add(e["name"])
        elif e["ph"] == "C":
            out["series"] |= {f"{e['name']} {k}" for k in e["args"]}
    if "B" in phases:  # closed by its E, or at its track's last time stamp (its own start)
        out["slices"]["b1"] = (4000, 5000 if ends else 0)
    out["named_thread"] = "M" in phases
    return out


# -- truncated ---------------------------------------------------------------------------------

def _cuts(raw: bytes, spans: list[tuple[dict, int, int]], step: int, phase: int) -> list[int]:
    """Where to cut `raw`: at every byte within 3 of an event's start or end, and at every
    `step`-th byte (from `phase`) between."""
    edges = {e + d for _, start, end in spans for e in (start, end) for d in range(-3, 4)}
    return sorted({c for c in range(len(raw) + 1) if c % step == phase or c in edges})


def _sweep(batch: int) -> tuple[int, int]:
    """(step, phase) of the cuts for a batch size. The smallest and the largest batch split
    the bytes away from the event edges between them (even and odd), so that every byte is a
    cut of one of them, and every edge of both; the sizes between cut batches at the same
    event ends, so every fifth byte is enough for them. PROFTUI_FULL_SWEEP=1 cuts the
    smallest and the largest at every byte (twice the time)."""
    if batch not in (1, 1 << 20):
        return 5, 0
    if os.environ.get("PROFTUI_FULL_SWEEP"):
        return 1, 0
    return 2, int(batch != 1)

@pytest.mark.parametrize("batch", BATCH_SIZES)
@pytest.mark.parametrize("wrapper", [True, False], ids=["object", "array"])
def test_truncated_anywhere(tmp_path, wrapper, batch) -> None:
    body = {"displayTimeUnit": "ns", "traceEvents": EVENTS, "traceName": "t"}
    raw = json.dumps(body if wrapper else EVENTS).encode()
    spans = _spans(raw, EVENTS)
    array_start = raw.index(b"[") + 1
    path = tmp_path / "cut.json"
    for cut in _cuts(raw, spans, *_sweep(batch)):
        path.write_bytes(raw[:cut])
        try:
            index = load(path, batch)
        except NotATraceError:
            assert cut < array_start, cut  # refused only before the event array begins
            continue
        got = _survivors(index)
        want = _expected([e for e, _, end in spans if end <= cut])
        where = (cut, raw[max(0, cut - 20): cut])
        assert got["slices"] == want["slices"], where
        assert got["instants"] == want["instants"], where
        assert got["series"] == want["series"], where
        assert ("main (1)" in got["tracks"]) == want["named_thread"], where
        found = problems(index)
        if any(start < cut < end for _, start, end in spans):  # an event was cut
            assert "truncated" in found or "bad_json" in found, (where, found)
        assert set(found) <= {"truncated", "bad_json", "bad_tail", "unclosed_begin"}, where
        if cut == len(raw):
            assert found == {}


@pytest.mark.parametrize("wrapper", [True, False], ids=["object", "array"])
def test_every_truncation_keeps_the_complete_events(tmp_path, wrapper) -> None:
    raw = json.dumps({"traceEvents": SMALL_TRACE} if wrapper else SMALL_TRACE).encode()
    spans = _spans(raw, SMALL_TRACE)
    array_start = raw.index(b"[") + 1
    for cut in range(1, len(raw)):
        path = write_trace(tmp_path / "cut.json", raw=raw[:cut])
        try:
            index = load(path, batch_bytes=16)
        except NotATraceError:
            assert cut < array_start  # refused only before the event array begins
            continue
        names = {s[0] for s in slices(index)}
        for event, start, end in spans:
            if end <= cut and event["ph"] == "X":
                assert event["name"] in names, (cut, event["name"])
        if any(start < cut < end for _, start, end in spans):
            assert "truncated" in problems(index), (cut, problems(index))


BOUNDARY = re.compile(rb"\}\s*,\s*\{")


def _reference_boundary(buf: bytes, start: int, after: int):
    """What `entry_boundary` must find, by a plain walk over the bytes."""
    depth, in_string, i = 0, False, start
    while i < len(buf):
        c = buf[i: i + 1]
        if in_string:
            if c == b"\\":
                i += 1
            elif c == b'"':
                in_string = False
        elif c == b'"':
            in_string = True
        elif c in (b"{", b"["):
            depth += 1
        elif c in (b"}", b"]"):
            depth -= 1
            if depth < 0:
                return "closed"
            if depth == 0 and c == b"}" and i >= after:
                m = BOUNDARY.match(buf, i)
                if m:
                    return m.start() + 1, m.end() - 1, None
        i += 1
    return None


def test_event_boundaries_found_by_following_strings_and_brackets() -> None:
    """Random nests of strings, escapes and brackets: 500 traces with a fixed seed meet every
    kind of boundary-like text many times over (PROFTUI_FULL_SWEEP=1: 3000)."""
    rng = random.Random(17)
    atoms = [1, "a", 'x},{"y"\\', "\\", '"},{"', None, 2.5, "[{]}", '\\\"},{', "\\\\"]

    def value(level: int):
        r = rng.random()
        if level > 3 or r < 0.3:
            return rng.choice(atoms)
        if r < 0.6:
            return [value(level + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(["k", "},{", '\\"']) + str(i): value(level + 1)
                for i in range(rng.randint(0, 3))}

    for _ in range(3000 if os.environ.get("PROFTUI_FULL_SWEEP") else 500):
        events = [{"ph": "X", "args": value(0)} for _ in range(rng.randint(1, 6))]
        raw = json.dumps(events, separators=(rng.choice([",", ", \n"]), ":")).encode()
        if rng.random() < 0.5:
            raw = raw[: rng.randint(1, len(raw))]
        after = rng.randint(1, len(raw))
        expected = _reference_boundary(raw, 1, after)
        for block in (2, 7, 1 << 20):  # carried across blocks, whatever their size
            assert entry_boundary(raw, 1, after, block) == expected, (raw, block)


def test_truncated_gzip_keeps_what_was_inflated(tmp_path) -> None:
    events = [{"ph": "X", "name": f"e{i}", "pid": 1, "tid": i % 4, "ts": i, "dur": 0.5}
              for i in range(3000)]
    packed = gzip.compress(json.dumps(events).encode(), mtime=0)
    path = tmp_path / "cut.json.gz"
    seen = []
    for cut in range(20, len(packed), max(1, len(packed) // 25)):
        path.write_bytes(packed[:cut])
        try:
            index = load(path)
        except NotATraceError:
            assert cut < 64, cut  # nothing inflated yet
            continue
        names = [s[0] for s in slices(index)]
        # a prefix of the events survives, exactly
        assert sorted(names, key=lambda n: int(n[1:])) == [f"e{i}" for i in range(len(names))]
        assert "truncated" in problems(index)
        seen.append(len(names))
    assert seen == sorted(seen) and seen[-1] > 2000


def test_gzip_truncated_and_corrupt(tmp_path) -> None:
    raw = json.dumps(SMALL_TRACE * 200).encode()
    packed = gzip.compress(raw)
    reference = load(write_trace(tmp_path / "ref.json", raw=raw))
    index = load(write_trace(tmp_path / "ok.json.gz", raw=raw, gz=True))
    assert columns_equal(index, reference)
    assert slice_args(index, 0) == {"k": "v,{x}"}
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    index = load(cut)
    assert 0 < index.n_slices < reference.n_slices
    assert "truncated" in problems(index)
    bad = bytearray(packed)
    bad[10: 74] = b"\x00" * 64  # the first deflate block is damaged: nothing is readable
    with pytest.raises(NotATraceError, match="corrupt gzip data"):
        load(write_trace(tmp_path / "bad.json.gz", raw=bytes(bad)))


def test_two_gzip_members(tmp_path) -> None:
    raw = json.dumps(SMALL_TRACE).encode()
    path = tmp_path / "two.json.gz"
    path.write_bytes(gzip.compress(raw[:40]) + gzip.compress(raw[40:]))
    assert columns_equal(load(path), load(write_trace(tmp_path / "r.json", raw=raw)))


@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_legal_loose_endings(tmp_path, batch) -> None:
    events = json.dumps(SMALL_TRACE)[1:-1]
    reference = load(write_trace(tmp_path / "ref.json", SMALL_TRACE, wrapper=False))
    for raw in (f"[{events}", f"[{events},", f"[{events},\n  ", f"[{events},{{}}]",
                f"\ufeff[{events}]", f'{{"traceEvents": [{events}, {{}}]}}'):
        index = load(write_trace(tmp_path / "t.json", raw=raw.encode()), batch)
        assert columns_equal(index, reference), raw[-20:]


# -- garbage inside ---------------------------------------------------------------------------

@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_garbage_inside_events(tmp_path, batch) -> None:
    raw = b"""\xef\xbb\xbf{"traceEvents": [
     {"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
     {"ph": "X", "name": "nan ts", "pid": 1, "tid": 1, "ts": NaN, "dur": 2},
     {"ph": "X", "name": "inf ts", "pid": 1, "tid": 1, "ts": -Infinity, "dur": 2},
     {"ph": "X", "name": "list ts", "pid": 1, "tid": 1, "ts": [1], "dur": 2},
     {"ph": "X", "name": "object ts", "pid": 1, "tid": 1, "ts": {"us": 1}, "dur": 2},
     {"ph": "X", "name": "bool ts", "pid": 1, "tid": 1, "ts": true, "dur": 2},
     {"ph": "X", "name": "no ts", "pid": 1, "tid": 1, "dur": 2},
     {"ph": "X", "name": "nan dur", "pid": 1, "tid": 1, "ts": 3, "dur": NaN},
     {"ph": "X", "name": "bool dur", "pid": 1, "tid": 1, "ts": 4, "dur": true},
     {"ph": "X", "name": "list dur", "pid": 1, "tid": 1, "ts": 5, "dur": [1]},
     {"ph": "X", "name": "text dur", "pid": 1, "tid": 1, "ts": 6, "dur": "long"},
     {"ph": "X", "name": "no dur", "pid": 1, "tid": 1, "ts": 6.5},
     {"ph": "X", "name": "negative dur", "pid": 1, "tid": 1, "ts": 7, "dur": -1.5},
     {"ph": "X", "name": "list pid", "pid": [1], "tid": 1, "ts": 8, "dur": 1},
     {"ph": "X", "name": "object tid", "pid": 1, "tid": {"t": 1}, "ts": 9, "dur": 1},
     {"ph": "X", "name": "bool pid", "pid": false, "tid": 1, "ts": 9, "dur": 1},
     {"ph": "X", "name": "bad \xff\xfe utf8", "pid": 1, "tid": 1, "ts": 11, "dur": 1,
      "args": {"s": "\xc3("}},
     {"ph": "X", "name": ["list", "name"], "cat": {"c": 1}, "pid": 1, "tid": 1, "ts": 12,
      "dur": 1},
     {"ph": "X", "name": "dup", "name": "dup wins", "pid": 1, "tid": 1, "ts": 13, "dur": 1},
     17, "text", null, [],
     {"ph": "X", "name": "last", "pid": 1, "tid": 1, "ts": 14, "dur": 1}
    ], "displayTimeUnit": "ms"}"""
    index = load(write_trace(tmp_path / "t.json", raw=raw), batch)
    assert sorted(slices(index)) == sorted([
        ("ok", 1000, 2000, "Thread 1", 0),
        ("nan dur", 3000, 0, "Thread 1", 0),
        ("bool dur", 4000, 0, "Thread 1", 0),
        ("list dur", 5000, 0, "Thread 1", 0),
        ("text dur", 6000, 0, "Thread 1", 0),
        ("no dur", 6500, 0, "Thread 1", 0),
        ("negative dur", 7000, 0, "Thread 1", 0),  # clamped
        ("list pid", 8000, 1000, "Thread 1", 0),  # pid "[1]": a process of its own
        ("object tid", 9000, 1000, 'Thread {"t": 1}', 0),
        ("bool pid", 9000, 1000, "Thread 1", 0),
        ("bad \ufffd\ufffd utf8", 11000, 1000, "Thread 1", 0),
        ('["list", "name"]', 12000, 1000, "Thread 1", 0),
        ("dup wins", 13000, 1000, "Thread 1", 0),
        ("last", 14000, 1000, "Thread 1", 0),
    ])
    bad_utf8 = next(i for i in range(index.n_slices) if index.slice_name(i).startswith("bad"))
    assert slice_args(index, bad_utf8) == {"s": "\ufffd("}
    assert problems(index) == {"bad_timestamp": 6, "bad_duration": 5, "negative_duration": 1,
                               "bad_field": 4, "not_an_object": 4}
    assert index.meta["displayTimeUnit"] == "ms"


@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_garbage_inside_valid_json(tmp_path, batch) -> None:
    raw = b"""[
      {"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
      {"ph": "X", "name": "nan", "pid": 1, "tid": 1, "ts": NaN, "dur": 2},
      {"ph": "X", "name": "neg", "pid": 1, "tid": 1, "ts": 5, "dur": -3},
      {"ph": "X", "name": "bool ts", "pid": 1, "tid": 1, "ts": "x", "dur": 1},
      {"ph": "X", "name": "no dur", "pid": 1, "tid": 1, "ts": 7},
      {"ph": "X", "name": {"a": 1}, "pid": [1], "tid": 1, "ts": 8, "dur": 1},
      {"ph": "X", "name": "bad \xff utf8", "pid": 1, "tid": 1, "ts": 9, "dur": 1},
      {"ph": "X", "name": "dup", "name": "dup2", "pid": 1, "tid": 1, "ts": 10, "dur": 1},
      {"ph": "X", "name": "huge", "pid": 1, "tid": 1, "ts": 1e300, "dur": 1},
      17,
      {"ph": "X", "name": "last", "pid": 1, "tid": 1, "ts": 11, "dur": 1}
    ]"""
    index = load(write_trace(tmp_path / "t.json", raw=raw), batch)
    names = sorted(s[0] for s in slices(index))
    assert names == sorted(["ok", "neg", "no dur", '{"a": 1}', "bad \ufffd utf8", "dup2",
                            "last"])
    got = problems(index)
    assert got["bad_timestamp"] == 3  # NaN, "x", 1e300
    assert got["negative_duration"] == 1 and got["bad_duration"] == 1
    assert got["not_an_object"] == 1
    assert got["bad_field"] >= 1
    neg = next(s for s in slices(index) if s[0] == "neg")
    assert neg[2] == 0  # clamped


def test_args_with_nan_and_bad_utf8(tmp_path) -> None:
    raw = (b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, '
           b'"args": {"v": NaN, "s": "\xff\xfe"}}, '
           b'{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 1, '
           b'"args": {"s": "ok \xff"}}]')
    index = load(write_trace(tmp_path / "t.json", raw=raw))
    assert slice_args(index, 0) == {"v": None, "s": "\ufffd\ufffd"}
    assert slice_args(index, 1) == {"s": "ok \ufffd"}


@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_pids_and_tids_with_digits_int_refuses(tmp_path, batch) -> None:
    # "²" is a digit to str.isdigit() but not to int(); "١" is an Arabic-Indic one
    events = [
        {"ph": "X", "name": "a", "pid": "\u00b2", "tid": "\u00b3", "ts": 1, "dur": 1},
        {"ph": "X", "name": "b", "pid": "\u0661", "tid": 1, "ts": 1, "dur": 1},
        {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    ]
    index = load(write_trace(tmp_path / "t.json", events), batch)
    a = index.arrays
    assert [(index.strings[a["tracks.pid"][t]], index.strings[a["tracks.tid"][t]])
            for t in range(index.n_tracks)] == [("1", "1"), ("\u0661", "1"),  # float() takes it
                                                ("\u00b2", "\u00b3")]
    assert problems(index) == {}


@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_unusable_sort_indices_are_counted(tmp_path, batch) -> None:
    events = [
        {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 1,
         "args": {"sort_index": "--5"}},
        {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 2,
         "args": {"sort_index": "\u00b2"}},
        {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 3,
         "args": {"sort_index": "-3"}},
        {"ph": "M", "name": "process_sort_index", "pid": 1, "args": {"sort_index": 2**70}},
        {"ph": "M", "name": "process_sort_index", "pid": 2, "args": {"sort_index": 1e300}},
        {"ph": "M", "name": "process_sort_index", "pid": 3, "args": {"sort_index": "-7"}},
        {"ph": "M", "name": "process_sort_index", "pid": 4, "args": {"sort_index": 2.0}},
        {"ph": "M", "name": "process_sort_index", "pid": 5, "args": {"sort_index": True}},
    ] + [{"ph": "X", "name": "x", "pid": p, "tid": t, "ts": 1, "dur": 1}
         for p, t in ((1, 1), (1, 2), (1, 3), (2, 1), (3, 1), (4, 1), (5, 1))]
    index = load(write_trace(tmp_path / "t.json", events), batch)
    a = index.arrays
    assert {index.strings[a["processes.pid"][p]]: int(a["processes.sort_index"][p])
            for p in range(len(a["processes.pid"]))} == {"1": 0, "2": 0, "3": -7, "4": 2, "5": 0}
    assert [index.process_label(p) for p in range(len(a["processes.pid"]))] == [
        "Process 3", "Process 1", "Process 2", "Process 5", "Process 4"]
    assert [index.track_label(t) for t in range(1, 4)] == ["Thread 3", "Thread 1", "Thread 2"]
    assert problems(index) == {"bad_metadata": 5}


@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_counter_values_beyond_float_range(tmp_path, batch) -> None:
    events = [
        {"ph": "C", "name": "huge", "pid": 1, "ts": 1, "args": {"v": 10**400}},
        {"ph": "C", "name": "mixed", "pid": 1, "ts": 1, "args": {"v": 10**400, "w": 3}},
        {"ph": "C", "name": "big", "pid": 1, "ts": 2, "args": {"w": 2**70}},
    ]
    index = load(write_trace(tmp_path / "t.json", events), batch)
    a = index.arrays
    assert [index.strings[n] for n in a["counters.series_name"]] == ["mixed w", "big w"]
    assert a["counters.sample_value"].tolist() == [3.0, float(2**70)]
    assert problems(index) == {"bad_counter": 1}


@pytest.mark.parametrize("batch", BATCH_SIZES)
@pytest.mark.parametrize("reader", ["0", "1"])
def test_durations_beyond_range_are_counted_without_a_warning(
        tmp_path, monkeypatch, batch, reader) -> None:
    """Beyond a double in ns, or int64's least: numpy's overflow and cast warnings reached
    the terminal from the Python path."""
    import warnings

    monkeypatch.setenv("PROFTUI_NATIVE", reader)
    for durations in ([1e306, 3, 1.5e307, 2.5], [3, -2**63, 2]):
        events = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": k, "dur": d}
                  for k, d in enumerate(durations)]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            index = load(write_trace(tmp_path / "t.json", events), batch)
        bad = sum(abs(d) > 1e18 for d in durations)
        assert index.n_slices == len(durations) and problems(index) == {"bad_duration": bad}


def test_integer_durations_at_int64s_least_are_refused_without_a_warning() -> None:
    import warnings

    import numpy as np

    from proftui.core.importers.chrome.views import _float_durations_ns

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ns, ok = _float_durations_ns(np.array([3, -2**63, -1], np.int64))
    assert ns.tolist() == [3000, 0, -1000] and ok.tolist() == [True, False, True]


def test_an_array_of_non_events_is_counted_not_refused(tmp_path) -> None:
    index = load(write_trace(tmp_path / "t.json", raw=b'[1, "two", [3], null]'))
    assert index.n_slices == 0
    assert problems(index) == {"not_an_object": 4}


def test_invalid_json_between_events(tmp_path) -> None:
    raw = (b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},\n'
           b'{"ph": "X", "name": "broken" "pid": 1, "tid": 1, "ts": 2, "dur": 1},\n'
           b'{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 3, "dur": 1},\n'
           b'{oops},\n'
           b'{"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 4, "dur": 1}]')
    for batch in BATCH_SIZES:
        index = load(write_trace(tmp_path / "t.json", raw=raw), batch)
        assert [s[0] for s in slices(index)] == ["a", "b", "c"], batch
        assert problems(index) == {"bad_json": 2}, batch


# -- refused -----------------------------------------------------------------------------------

EMPTY = "is empty"
NOT_JSON = "does not start with"
NOT_CHROME = "no traceEvents"


@pytest.mark.parametrize("content,says", [
    (b"", EMPTY),
    (b"   \n\t ", EMPTY),
    (b"\xef\xbb\xbf", EMPTY),
    (b"\xef\xbb\xbf  \n", EMPTY),
    (b"Device_id,Model Name,Op Name\n0,resnet,conv1\n", NOT_JSON),
    (b"\xef\xbb\xbfName,Type,Task Duration(us)\nconv,AI_CORE,1.5\n", NOT_JSON),
    (b"Name,Type\nconv,AI_CORE\n", NOT_JSON),
    (bytes(range(256)), NOT_JSON),
    (b"\x00\x00\x00\x00{\"traceEvents\": []}", NOT_JSON),
    (b"hello", NOT_JSON),
    (b"42", NOT_JSON),
    (b'"traceEvents"', NOT_JSON),
    (b'{"traceEvents": 5}', NOT_CHROME),
    (b'{"traceEvents": "[]"}', NOT_CHROME),
    (b'{"projectId": "p", "spans": [{"spanId": "1"}]}', NOT_CHROME),
    (b"""{
  "projectId": "My Google Cloud Project",
  "traceId": "6ef9eae4acda422912f705b69539cec8",
  "spans": [
    {"spanId": "13616474711799465301", "kind": "RPC_CLIENT", "name": "/endpoint",
     "startTime": "2015-09-03T16:40:00.841654024Z", "endTime": "2015-09-03T16:40:00.856599389Z",
     "labels": {"key1": "value1"}}
  ]
}""", NOT_CHROME),
    (b'{"communication": {"step1": {"Communication Time Info": {"Elapse Time(ms)": 1.5}}}}',
     NOT_CHROME),
], ids=["empty", "whitespace", "bom", "bom-whitespace", "csv", "csv-bom", "csv-summary", "binary",
        "nul-lead", "text", "number", "string", "events-number", "events-string",
        "cloud-trace-short", "cloud-trace", "communication-json"])
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_not_a_trace_is_refused_with_a_sentence(tmp_path, content, says, gz) -> None:
    path = write_trace(tmp_path / "input.json", raw=content, gz=gz)
    with pytest.raises(NotATraceError) as info:
        load(path)
    message = str(info.value)
    assert str(path) in message and message.endswith(".") and "\n" not in message
    assert says in message


def test_unreadable_paths(tmp_path) -> None:
    with pytest.raises(ProftuiError, match="no such file"):
        load(tmp_path / "missing.json")
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(NotATraceError, match="holds no trace or profiler output"):
        load(empty_dir)


def test_odd_file_names_in_a_profile_directory(tmp_path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    write_trace(folder / "trace.json", [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1,
                                         "dur": 1}])
    (folder / "v2\u00b2").write_text("not a trace")  # "²" is a digit int() refuses
    (folder / "\u0661\u0662.txt").write_text("")
    index = load(folder)
    assert [s[0] for s in slices(index)] == ["a"]


