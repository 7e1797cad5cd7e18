"""Broken and hostile input: what survives, what is counted, and what is refused."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from proftui.core import NotATraceError, ProftuiError

from helpers import BATCH_SIZES, columns_equal, load, problems, slices, write_trace

EVENTS = [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}},
    {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 10, "args": {"k": "v,{x}"}},
    {"ph": "X", "name": "b\"},{\"", "pid": 1, "tid": 1, "ts": 2, "dur": 3},
    {"ph": "B", "name": "c", "pid": 1, "tid": 2, "ts": 4},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 9},
    {"ph": "i", "name": "d", "pid": 1, "tid": 1, "ts": 5, "s": "g"},
]


@pytest.mark.parametrize("wrapper", [True, False], ids=["object", "array"])
def test_every_truncation_keeps_the_complete_events(tmp_path, wrapper) -> None:
    raw = json.dumps({"traceEvents": EVENTS} if wrapper else EVENTS).encode()
    spans = []
    for event in EVENTS:
        text = json.dumps(event).encode()
        start = raw.index(text)
        spans.append((event, start, start + len(text)))
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


@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_legal_loose_endings(tmp_path, batch) -> None:
    events = json.dumps(EVENTS)[1:-1]
    reference = load(write_trace(tmp_path / "ref.json", EVENTS, wrapper=False))
    for raw in (f"[{events}", f"[{events},", f"[{events},\n  ", f"[{events},{{}}]",
                f"\ufeff[{events}]", f'{{"traceEvents": [{events}, {{}}]}}'):
        index = load(write_trace(tmp_path / "t.json", raw=raw.encode()), batch)
        assert columns_equal(index, reference), raw[-20:]


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
    assert index.slice_args(0) == {"v": None, "s": "\ufffd\ufffd"}
    assert index.slice_args(1) == {"s": "ok \ufffd"}


@pytest.mark.parametrize("content,message", [
    (b"", "is empty"),
    (b"   \n\t ", "is empty"),
    (b"Name,Type\nconv,AI_CORE\n", "does not start with"),
    (bytes(range(256)), "does not start with"),
    (b'{"projectId": "p", "spans": [{"spanId": "1"}]}', "no traceEvents"),
])
def test_not_a_trace(tmp_path, content, message) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(NotATraceError, match=message):
        load(path)
    gz = tmp_path / "x.json.gz"
    gz.write_bytes(gzip.compress(content))
    with pytest.raises(NotATraceError, match=message):
        load(gz)


def test_unreadable_paths(tmp_path) -> None:
    with pytest.raises(ProftuiError, match="no such file"):
        load(tmp_path / "missing.json")
    with pytest.raises(NotATraceError, match="holds no trace or profiler output"):
        load(tmp_path)  # an empty directory


def test_gzip_truncated_and_corrupt(tmp_path) -> None:
    raw = json.dumps(EVENTS * 200).encode()
    packed = gzip.compress(raw)
    reference = load(write_trace(tmp_path / "ref.json", raw=raw))
    index = load(write_trace(tmp_path / "ok.json.gz", raw=raw, gz=True))
    assert columns_equal(index, reference)
    assert index.slice_args(0) == {"k": "v,{x}"}
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
    raw = json.dumps(EVENTS).encode()
    path = tmp_path / "two.json.gz"
    path.write_bytes(gzip.compress(raw[:40]) + gzip.compress(raw[40:]))
    assert columns_equal(load(path), load(write_trace(tmp_path / "r.json", raw=raw)))


def test_importing_core_loads_no_ui(tmp_path) -> None:
    path = write_trace(tmp_path / "t.json", EVENTS)
    code = ("import sys; from proftui.core import load_trace; "
            f"load_trace({str(path)!r}, use_cache=False); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_progress_and_cancel(tmp_path) -> None:
    from proftui.core import Cancelled, load_trace

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
