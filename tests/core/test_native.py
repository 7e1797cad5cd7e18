"""The native event reader (core/importers/chrome/_native.c) against the Python path, the
reference: what it accepts gives the index the Python path gives, byte for byte; what it does
not fully understand it declines, and the Python path reads that batch."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pytest

from proftui.core.importers.chrome import native
from proftui.core.model.timeconv import us_to_ns

from helpers import assert_same_index as same_index
from helpers import columns_equal, load, write_trace

# CI builds the module (.ci/run sets PROFTUI_REQUIRE_NATIVE): there a missing module fails.
pytestmark = pytest.mark.skipif(
    native.MODULE is None and not os.environ.get("PROFTUI_REQUIRE_NATIVE"),
    reason="the native reader is not built here (no C compiler at install)")


def read(text: bytes | str, start: int = 0, end: int | None = None):
    data = text.encode() if isinstance(text, str) else text
    return native.MODULE.read_batch(data, start, len(data) if end is None else end)


def columns(text: str) -> native.Columns:
    data = text.encode()
    result = read(data)
    assert result is not None, text
    return native.Columns(data, result)


def index_of(path: Path, reader: str, batch: int, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PROFTUI_NATIVE", "1" if reader == "native" else "0")
    return load(path, batch)


def assert_same_index(path: Path, batch: int, monkeypatch: pytest.MonkeyPatch) -> dict:
    a = index_of(path, "native", batch, monkeypatch)
    b = index_of(path, "python", batch, monkeypatch)
    same_index(a, b, drop_meta=("reader",))
    assert b.meta["reader"]["native"] == 0
    return a.meta["reader"]


# -- what it reads, exactly ---------------------------------------------------------------------

TIMES = ["0", "1", "1.5", "1.0005", "1.0004999", "2.9995", "1780676244313289", "123.456",
         "1698316426434084.2", "1698316426434084.25", "1700000000000000.1234567",
         "5836443391361.742", "5836443391361.7425", "0.0005", "999999999999.9999", "7.10"]


@pytest.mark.parametrize("text", TIMES)
def test_times_are_the_python_paths_to_the_ns(text: str) -> None:
    """ts as a number and as a string, dur as a number: the ns the Python path gives."""
    ns, ok = us_to_ns([text])
    for ts in (text, json.dumps(text)):
        c = columns('{"ph":"X","ts":' + ts + "}")
        assert (int(c.ts[0]), bool(c.ts_ok[0])) == (int(ns[0]), bool(ok[0])), ts
    if Decimal(text) < 10**12:
        # the Python path reads a duration from its double, or from its text when the double
        # holds digits below the ns: the exact decimal, half away from zero, either way
        c = columns('{"ph":"X","ts":1,"dur":' + text + "}")
        dur_ns = int((Decimal(text) * 1000).to_integral_value(ROUND_HALF_UP))
        assert int(c.dur[0]) == dur_ns and c.dur_ok[0]


@pytest.mark.parametrize("digits", range(1, 17))
def test_whole_parts_of_every_length_are_read_to_the_ns(digits: int) -> None:
    # 8 to 16 digits are read 8 at a time: every digit of each place, and the limits
    rng = random.Random(digits)
    texts = ["9" * digits, "1" + "0" * (digits - 1), "8999999999999999"[:digits]]
    texts += ["".join(rng.choice("123456789" if i == 0 else "0123456789")
                      for i in range(digits)) + rng.choice(["", ".5", ".125"]) for _ in range(20)]
    for text in texts:
        ts, dur = '{"ph":"X","ts":' + text + "}", '{"ph":"X","dur":' + text + "}"
        if Decimal(text) < 9 * 10**15:
            ns, ok = us_to_ns([text])
            c = columns(ts)
            assert (int(c.ts[0]), bool(c.ts_ok[0])) == (int(ns[0]), bool(ok[0])), text
        else:
            assert read(ts) is None, text
        if Decimal(text) < 10**12:
            assert columns(dur).dur[0] == int(Decimal(text) * 1000), text
        else:
            assert read(dur) is None, text


def test_negative_durations_round_away_from_zero() -> None:
    c = columns('{"ph":"X","ts":1,"dur":-0.0005},{"ph":"X","ts":1,"dur":-2.5}')
    assert c.dur.tolist() == [-1, -2500]


def test_fields_are_ids_of_distinct_values_and_absent_is_none() -> None:
    c = columns('{"ph":"X","name":"a","pid":1,"tid":"t","ts":1,"dur":1},'
                '{"ph":"X","name":"a","pid":1.5,"cat":null,"ts":2},'
                '{"ph":"B","name":"caf\\u00e9","pid":true,"id":"0x1"}')
    values = c.values
    assert [values[i] for i in c.ids("name")] == ["a", "a", "café"]
    assert [values[i] for i in c.ids("pid")] == [1, "1.5", True]  # floats as their text
    assert [values[i] for i in c.ids("tid")] == ["t", None, None]
    assert [values[i] for i in c.ids("cat")] == [None, None, None]  # null is absent
    assert c.dur_ok.tolist() == [True, False, False]
    assert c.ts_ok.tolist() == [True, True, False]
    assert c.combo.tolist() == [0, 1, 2] and len(c.combos) == 3
    assert c.bounds.tolist()[0][0] == 0


@pytest.mark.parametrize("seed", range(3))
def test_combos_are_the_distinct_field_values_in_order_of_first_appearance(seed: int) -> None:
    # a combo is found from the last event's and from the last one of the same name: one
    # that differs in any part of them is another, also past 1024 names (their table's size)
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(1500)] if seed == 2 else ["a", "b", "c"]
    events, expected = [], []
    for _ in range(3000):
        parts = {"cname": rng.choice([None, "good"]), "pid": rng.choice([1, 2]),
                 "tid": rng.choice([1, 2, 3]), "name": rng.choice(names),
                 "cat": rng.choice([None, "x"])}
        events.append(json.dumps({"ph": "X", **{k: v for k, v in parts.items() if v}}))
        expected.append(tuple(parts[k] for k in native.COMBO))
    c = columns(",".join(events))
    order = list(dict.fromkeys(expected))
    assert c.combo_values() == order
    assert c.combo.tolist() == [order.index(e) for e in expected]


def test_keys_and_values_like_the_last_events_are_read_as_any_others() -> None:
    # the previous event's keys and values are matched by their bytes: a number they begin,
    # blanks, another order, a duplicate, a cut are all told apart as a scan tells them
    c = columns('{"ph":"X","pid":12,"tid":"a","ts":1},{"ph":"X","pid":123,"tid":"a","ts":1},'
                '{"ph" :"X","pid":12.5,"tid":"a" ,"ts":1},{"tid":"a","ph":"X","pid":12,"ts":1},'
                '{"ph":"X","pid":true,"tid":"a"},{"ph":"X","pid":true ,"tid":"ab"}')
    values = c.values
    assert [values[i] for i in c.ids("pid")] == [12, 123, "12.5", 12, True, True]
    assert [values[i] for i in c.ids("tid")] == ["a", "a", "a", "a", "a", "ab"]
    assert [values[i] for i in c.ids("ph")] == ["X"] * 6
    for text in ['{"ph":"X","pid":12},{"ph":"X","pid":12x}', '{"ph":"X","pid":0},{"pid":05}',
                 '{"ph":"X"},{"ph":"X","ph":"X"}', '{"ph":"X","pid":1},{"ph":"X","pid":1',
                 '{"ph":"X","pid":1},{"ph":"X","pid":1e}', '{"ph":"X"},{"ph":"X"']:
        assert read(text) is None, text


# args like the last ones of the same name and pid: its keys matched by their bytes, its
# values guessed of the last ones' length (a number of 15 digits, a string ending at the 16th
# byte after its quote, a key longer than 16 bytes)
_ARGS = ('{"n": 12, "long key of more than 16 bytes": 123456789012345, "s": "abcdefghijklmno",'
         ' "f": 1.5, "a": [1, [2, {"b": null}]], "t": true, "e": "\\u00e9"}')


def _look_alikes() -> list[str]:
    """_ARGS with each byte replaced by, and with each of, bytes that change its meaning."""
    out = []
    for at in range(len(_ARGS) + 1):
        for c in '0.e-"\\\x01\xc3\xff ,}]1a':
            out.append(_ARGS[:at] + c + _ARGS[at + 1:])
            out.append(_ARGS[:at] + c + _ARGS[at:])
    return out


@pytest.mark.parametrize("trail", ["", ',{"ph":"M"}' * 3])  # the last event or not
def test_args_like_the_last_ones_are_read_as_any_others(trail: str) -> None:
    import msgspec

    first = '{"name":"a","pid":1,"args":' + _ARGS + '}'
    assert read(first + "," + first + trail) is not None
    for args in _look_alikes():
        event = '{"name":"a","pid":1,"args":' + args + '}'
        data = (first + "," + event + trail).encode("utf-8", "surrogateescape")
        alone = (event + trail).encode("utf-8", "surrogateescape")
        got = read(data)
        # the same as where no args came before (read member by member) ...
        assert (got is None) == (read(alone) is None), args
        if got is not None:  # ... and never what is not JSON (args kept raw, as decode.py)
            msgspec.json.decode(b"[" + data + b"]", type=list[dict[str, msgspec.Raw]])
            at = len(first) + 1
            assert native.Columns(data, got).bounds.tolist()[1] == [at, len(data) - len(trail)]


@pytest.mark.parametrize("arrays, inner, ok", [
    (63, "", True), (63, "1", True), (64, "", False), (63, "{}", False), (62, '{"b":[]}', False)])
def test_args_nested_up_to_max_depth(arrays: int, inner: str, ok: bool) -> None:
    # the args object and what is nested in it: MAX_DEPTH containers at most, also where
    # the args is matched against the last ones of the same name and pid
    assert native.MODULE.MAX_DEPTH == 64
    event = ('{"name":"a","pid":1,"args":{"x":1,"d":' + "[" * arrays + inner + "]" * arrays
             + "}}")
    before = '{"name":"a","pid":1,"args":{"x":1,"d":[]}}'
    assert (read(event) is not None) == ok
    assert (read(before + "," + event) is not None) == ok
    assert (read(before + "," + event + "," + event) is not None) == ok


def test_events_have_their_byte_ranges() -> None:
    text = ' {"ph":"C","ts":1,"args":{"v":[1,{"a":"}"}]}} ,\n{"ph":"M"} '
    c = columns(text)
    (a0, b0), (a1, b1) = c.bounds.tolist()
    assert text[a0:b0] == '{"ph":"C","ts":1,"args":{"v":[1,{"a":"}"}]}}'
    assert text[a1:b1] == '{"ph":"M"}'


@pytest.mark.parametrize("text", [
    '{"ph":"X","ts":1e3}',  # an exponent
    '{"ph":"X","ts":-1}', '{"ph":"X","ts":"-1"}', '{"ph":"X","ts":" 12"}',  # signs, blanks
    '{"ph":"X","ts":"012"}', '{"ph":"X","ts":"1."}', '{"ph":"X","ts":true}',
    '{"ph":"X","ts":9000000000000000}', '{"ph":"X","dur":"1.5"}', '{"ph":"X","dur":1e2}',
    '{"ph":"X","dur":1000000000000}',  # past what the native reader takes on itself
    '{"ph":"X","name":"\\ud83d\\ude00"}', '{"ph":"X","name":"\\ud800"}',  # surrogates
    '{"ph":"X","name":"\xff"}', '{"ph":"X","name":"a\x01"}',  # bad UTF-8, a control byte
    '{"p\\u0068":"X"}', '{"ph":"X","ph":"B"}',  # an escaped key, a duplicate known key
    '{"ph":"X","name":["a"]}', '{"ph":"X","pid":{"a":1}}',  # not a label
    '{"ph":"X","bind_id":1,"flow_out":true}',  # flows v2
    '{"ph":"X","args":' + "[" * 70 + "]" * 70 + "}",  # deeper than MAX_DEPTH
    '{"ph":"X"},', '{"ph":"X"} {"ph":"X"}', '{"ph":"X",}', '[1]', '{"ph":"X","a":NaN}',
    '{"ph":"X","a":01}', '{"ph":"X","a":1.}', '{"ph":"X","a":tru}', '{"ph":"X"', '',
])
def test_what_it_does_not_fully_understand_is_declined(text: str) -> None:
    assert read(text.encode("utf-8", "surrogateescape") if "\xff" not in text
                else text.encode("latin-1")) is None


def test_duplicate_unknown_keys_and_bad_bytes_in_args_are_taken_as_msgspec_takes_them() -> None:
    assert read('{"ph":"X","tts":1,"tts":2}') is not None
    assert read(b'{"ph":"X","args":{"a":"\xff"}}') is None  # msgspec takes it: declined


@pytest.mark.parametrize("start, end", [(-1, 17), (0, 18), (3, 2), (1 << 62, 1 << 62)])
def test_a_range_outside_the_data_is_refused(start: int, end: int) -> None:
    with pytest.raises(ValueError, match="not inside the data"):
        read(b'{"ph":"X","ts":1}', start, end)


def test_only_the_range_is_read() -> None:
    data = b'{"ph":"X","ts":1}, {"ph":"B"}'
    assert len(native.Columns(data, read(data, 0, 17))) == 1
    assert len(native.Columns(data, read(data, 19, len(data)))) == 1
    assert read(data, 0, 5) is None  # cut inside the event
    assert read(data, 0, 0) is None  # nothing
    assert read(memoryview(data)[1:], 0, 16) is None  # a view starting inside the event


def test_turned_off_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROFTUI_NATIVE", "0")
    assert native.read_batch(b'{"ph":"X"}', 0, 10) is None
    assert native.reader_name() == "python"
    assert "PROFTUI_NATIVE=0" in native.unavailable_reason()


# -- the same index -----------------------------------------------------------------------------

def _mixed_events(seed: int, n: int = 600) -> list[dict]:
    """Every kind of event the reader meets, with the value shapes real files have."""
    rng = random.Random(seed)
    names = ["gemm", "aten::mm", "", "caf\u00e9 \u4e2d", 'q"uote', "b\\s", 7, None, "[memory]"]
    out: list[dict] = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}},
                       {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2,
                        "args": {"name": "t"}}]
    ts = 1_700_000_000_000_000.0
    for i in range(n):
        ts += rng.choice([0.5, 1, 2.25, 0.0005])
        ph = rng.choice("XXXXXXXBEistfCbeniM")
        ev: dict = {"ph": ph, "name": rng.choice(names), "pid": rng.choice([1, "1", 2]),
                    "tid": rng.choice([1, 2, "3"]), "cat": rng.choice(["kernel", "cpu_op", None])}
        ev["ts"] = rng.choice([round(ts, 3), f"{ts:.3f}", int(ts), f"{ts:.1f}"])
        if ph == "X":
            ev["dur"] = rng.choice([1, 0.5, 2.125, -1, 0.0004, 0.0005, None])
            if rng.random() < 0.1:
                ev["cname"] = rng.choice(["good", "bad"])
        if ph in "stfbne":
            ev["id"] = rng.choice([1, "0x1f", "12", 2**60, 3])
            if ph == "f" and rng.random() < 0.5:
                ev["bp"] = "e"
        if ph == "i":
            ev["s"] = rng.choice(["t", "p", "g", None])
        if ph == "i" and ev["name"] == "[memory]":
            ev["args"] = {"Device Type": 1, "Device Id": 0, "Total Allocated": 1024 * i,
                          "Total Reserved": 4096, "Bytes": 12, "Addr": 99}
        if ph == "C":
            ev["args"] = {"v": rng.choice([1, 2.5, "x"]), "w": 3}
        if ph == "M":
            ev["name"] = rng.choice(["process_sort_index", "thread_name", "num_cpus"])
            ev["args"] = {"sort_index": 3, "name": "n"}
        if rng.random() < 0.2:
            ev["args"] = {"deep": [[{"k": "},{"}]], "n": 1.5e300, "u": "\u00e9"}
        out.append(ev)
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("batch", [300, 1 << 12])
def test_the_same_index_as_the_python_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           seed: int, batch: int) -> None:
    path = write_trace(tmp_path / "t.json", _mixed_events(seed))
    read = assert_same_index(path, batch, monkeypatch)
    assert read["native"] > read["python"]  # it read most batches itself


def test_the_same_index_where_it_declines_some_batches(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    events = _mixed_events(9)
    for ev in events[2::40]:  # an exponent, a blank: each declines its batch
        ev["ts"] = f"{ev['ts']}e0" if not isinstance(ev["ts"], str) else " " + ev["ts"]
    events[100]["name"] = "\U0001f600"  # a surrogate pair when escaped
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}, ensure_ascii=True))
    read = assert_same_index(path, 1 << 11, monkeypatch)
    assert read["native"] and read["python"] > 1


def test_a_batch_and_its_groups_read_by_both_paths_in_one_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pretty-printed Kineto-like file with a header, as generated traces are written."""
    events = _mixed_events(3, 300)
    text = ('{\n  "schemaVersion": 1,\n  "traceEvents": [\n'
            + ",\n".join("  " + json.dumps(e, indent=2) for e in events) + "\n  ]\n}\n")
    path = tmp_path / "k.json"
    path.write_text(text)
    assert_same_index(path, 700, monkeypatch)


def test_mutated_traces_read_by_both_readers_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sample of bench/native_fuzz.py's cases (it runs 10,000 and more offline)."""
    monkeypatch.setenv("PROFTUI_NATIVE", "1")  # (it sets the variable itself: put back after)
    spec = importlib.util.spec_from_file_location(
        "proftui_bench_native_fuzz",
        Path(__file__).resolve().parents[2] / "bench" / "native_fuzz.py")
    fuzz = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = fuzz  # its dataclasses look their module up
    spec.loader.exec_module(fuzz)
    tally = fuzz.run(cases=60, seed=20261202, extra=[])
    assert tally.disagreements == []
    assert tally.native_batches > 10 * tally.python_batches  # the native reader was at work


# -- reading ahead ------------------------------------------------------------------------------

def _ahead_threads() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name.startswith("proftui-read-ahead")]


@pytest.mark.parametrize("seed, decline", [(0, False), (5, True)])
def test_reading_ahead_gives_the_index_a_serial_read_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, decline: bool) -> None:
    """The next batch read in a thread while the last is added: the same index, byte for byte,
    where every batch is read natively and where some are declined (read by the Python path
    in the reader's own thread)."""
    from proftui.core.load import indexing

    events = _mixed_events(seed, 1500)
    if decline:
        for ev in events[2::50]:
            ev["ts"] = f"{ev['ts']}e0" if not isinstance(ev["ts"], str) else " " + ev["ts"]
    path = write_trace(tmp_path / "t.json", events)
    monkeypatch.setenv("PROFTUI_NATIVE", "1")
    got = {}
    for ahead in (False, True):
        monkeypatch.setattr(indexing, "read_ahead", lambda workers, ahead=ahead: ahead)
        got[ahead] = load(path, 700)
    same_index(got[False], got[True])
    reader = got[True].meta["reader"]
    assert reader["native"] > 20 and (reader["python"] > 1) == decline
    assert _ahead_threads() == []  # the thread ends with the read


def test_reading_ahead_ends_its_thread_when_loading_is_cancelled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from proftui.core.build.builder import TraceBuilder
    from proftui.core.importers.chrome.events import ChromeEvents
    from proftui.core.importers.chrome.read import ChromeJsonReader
    from proftui.core.model.diagnostics import Diagnostics
    from proftui.core.model.errors import Cancelled
    from proftui.core.source.streams import ByteSource

    monkeypatch.setenv("PROFTUI_NATIVE", "1")
    path = write_trace(tmp_path / "t.json", _mixed_events(1, 1500))
    diagnostics = Diagnostics()
    reader = ChromeJsonReader(ByteSource(str(path)), diagnostics, batch_bytes=700,
                              read_ahead=True)
    batches = []

    def sink(events, first: int, offset: int) -> None:
        batches.append(first)
        assert _ahead_threads() != []  # it reads ahead while the batch is added

    add = ChromeEvents(TraceBuilder(diagnostics)).add_events
    with pytest.raises(Cancelled):
        reader.read(lambda *a: (sink(*a), add(*a)), cancelled=lambda: len(batches) >= 3)
    assert len(batches) == 3 and _ahead_threads() == []


def test_a_compressed_file_is_not_read_ahead(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Its inflating thread has the second core already: a plain file reads ahead, a .gz
    with read_ahead asked for does not, and both give the same index."""
    import gzip

    from proftui.core.build.builder import TraceBuilder
    from proftui.core.importers.chrome.events import ChromeEvents
    from proftui.core.importers.chrome.read import ChromeJsonReader
    from proftui.core.model.diagnostics import Diagnostics
    from proftui.core.source.streams import ByteSource

    monkeypatch.setenv("PROFTUI_NATIVE", "1")
    plain = write_trace(tmp_path / "t.json", _mixed_events(1, 1500))
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    seen = {}
    for path in (plain, packed):
        diagnostics = Diagnostics()
        reader = ChromeJsonReader(ByteSource(str(path)), diagnostics, batch_bytes=700,
                                  read_ahead=True)
        add = ChromeEvents(TraceBuilder(diagnostics)).add_events
        threads: list[bool] = []
        reader.read(lambda *a, threads=threads, add=add: (
            threads.append(_ahead_threads() != []), add(*a)))
        seen[path.suffix] = any(threads)
    assert seen == {".json": True, ".gz": False}
    same_index(load(plain, 700), load(packed, 700), drop_meta=("sources", "profile"))


def test_a_compressed_file_is_read_where_it_was_inflated(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A .json.gz's inflated chunks become the reader's buffers as they are, what a batch
    left unread put in the room before them; an unread part larger than that room (events of
    100 kB) is joined to the next chunk by copying, as before. Both readers give the same
    index, and it is the plain file's but where batches end (they follow the chunks)."""
    import gzip

    from proftui.core.importers.chrome import read
    from proftui.core.source import gzip_seek

    if not gzip_seek.available():
        pytest.skip("no system zlib to call")
    events = _mixed_events(3, 2500)
    for ev in events[5::400]:
        ev["args"] = {"text": "x" * 100_000}
    plain = write_trace(tmp_path / "t.json", events)
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    taken: list[bool] = []

    def with_before(piece, before):
        joined = gzip_seek.with_before(piece, before)
        taken.append(joined is not None)
        return joined

    monkeypatch.setattr(read, "with_before", with_before)
    indexes = {}
    for reader in ("1", "0"):
        monkeypatch.setenv("PROFTUI_NATIVE", reader)
        indexes[reader] = load(packed, 20_000)
    same_index(indexes["1"], indexes["0"], drop_meta=("reader",))
    assert taken.count(True) > 20 and False in taken
    expected = load(plain, 20_000)
    for index in (indexes["1"], expected):
        for key in [k for k in index.arrays if k.startswith("batches.")]:
            del index.arrays[key]
    same_index(expected, indexes["1"], drop_meta=("sources", "profile", "reader"))


@pytest.mark.parametrize("batch", [700, 20_000, 300_000])
def test_a_compressed_file_at_any_batch_size(tmp_path: Path, batch: int,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Events of every size, from a few bytes to more than the room before a chunk and more
    than a chunk, at small and large batches: the .json.gz's index is the plain file's but
    where batches end, and both readers give the same."""
    import gzip

    events = _mixed_events(batch, 1500)
    sizes = [0, 10, 3_000, 60_000, 70_000, 200_000]
    for k, ev in enumerate(events[3::97]):
        ev["args"] = {"text": "y" * sizes[k % len(sizes)]}
    plain = write_trace(tmp_path / "t.json", events)
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    indexes = {}
    for reader in ("1", "0"):
        monkeypatch.setenv("PROFTUI_NATIVE", reader)
        indexes[reader] = load(packed, batch)
    same_index(indexes["1"], indexes["0"], drop_meta=("reader",))
    expected = load(plain, batch)
    for index in (indexes["1"], expected):
        for key in [k for k in index.arrays if k.startswith("batches.")]:
            del index.arrays[key]
    same_index(expected, indexes["1"], drop_meta=("sources", "profile", "reader"))


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_args_read_again_natively_are_the_python_paths(tmp_path: Path, gz: bool,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The args of every event, read again as a click or an export reads them: where the
    native reader takes a recorded batch, only the events asked for are decoded (found by
    its bounds); the same args as decoding the whole batch by the Python path."""
    import gzip

    from proftui.core.query.args import read_args

    events = _mixed_events(11, 3000)
    for k, ev in enumerate(events[7::50]):
        ev["args"] = {"k": k, "nested": {"list": [k, str(k), None]}, "text": "z" * (k * 37)}
    path = write_trace(tmp_path / "t.json", events)
    if gz:
        path = tmp_path / "t.json.gz"
        path.write_bytes(gzip.compress((tmp_path / "t.json").read_bytes()))
    monkeypatch.setenv("PROFTUI_NATIVE", "1")
    index = load(path, 3000)
    reader = index.meta.get("reader") or {}
    assert reader.get("native") and reader.get("python")  # batches of both kinds
    refs = np.arange(int(index.col("batches.first_ordinal")[-1]) + 2, dtype=np.int64)
    got = {}
    for native_on in ("1", "0"):
        monkeypatch.setenv("PROFTUI_NATIVE", native_on)
        got[native_on] = read_args(index, refs)
    assert got["1"] == got["0"]
    assert sum(a is not None for a in got["1"]) > 100


@pytest.mark.parametrize("tail", ["", ', "deviceProperties": [{"id": 0}, {"id": 1}]}',
                                  ', "note": "},{"}', ']\n[{"ph": "X"}, {"ph": "X"}]'])
def test_the_last_batch_is_read_natively_but_its_last_event(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: str) -> None:
    """A file under a batch is all last batch: its events but the last are read as a batch of
    their own (natively), its last event and what follows the array by the Python path, and
    the Python path cuts the same batches. Boundaries past the array's end (in a trailer, in
    garbage after it) cut nothing."""
    events = _mixed_events(4, 300)
    if tail:
        text = '{"traceEvents": ' + json.dumps(events) + tail
        if not tail.startswith(","):
            text = json.dumps(events) + tail  # the array form, garbage after it
        path = tmp_path / "t.json"
        path.write_text(text)
    else:
        path = write_trace(tmp_path / "t.json", events)
    reader = assert_same_index(path, 1 << 20, monkeypatch)
    assert reader == {"native": 1, "python": 1}
    index = index_of(path, "python", 1 << 20, monkeypatch)
    assert index.col("batches.first_ordinal").tolist() == [0, len(events) - 1]


@pytest.mark.parametrize("ahead", [False, True])
@pytest.mark.parametrize("keep", [False, True])
def test_a_batch_kept_keeps_its_bytes_while_the_reading_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ahead: bool, keep: bool) -> None:
    """The reader's two buffers take turns (a refill reads into the one not in use): a batch
    still held when its buffer's turn comes (here by a sink that keeps them all) keeps its
    bytes, as a new buffer is read into instead; let go, the two are read over in turn."""
    from proftui.core.importers.chrome import read as read_module
    from proftui.core.importers.chrome.read import ChromeJsonReader
    from proftui.core.model.diagnostics import Diagnostics
    from proftui.core.source.streams import ByteSource

    made: list[int] = []

    def new_buffer(size: int) -> bytearray:
        made.append(size)
        return bytearray(size)

    monkeypatch.setattr(read_module, "bytearray", new_buffer, raising=False)
    monkeypatch.setenv("PROFTUI_NATIVE", "1")
    path = write_trace(tmp_path / "t.json", _mixed_events(3, 10000))
    text = path.read_bytes()
    reader = ChromeJsonReader(ByteSource(str(path)), Diagnostics(), batch_bytes=4000,
                              read_ahead=ahead)
    kept: list = []

    def sink(events, first: int, offset: int) -> None:
        if keep and isinstance(events, native.Columns):
            data = memoryview(events.data)
            seen = bytes(data[int(events.bounds[0, 0]):int(events.bounds[-1, 1])])
            kept.append((offset, seen, events))

    reader.read(sink)
    refills = len(text) // (1 << 16)  # reads of 64 kB (two batches, at least 64 kB)
    assert len(reader.batches) > 200 and refills > 20
    if keep:
        assert len(kept) > 200
        for offset, seen, events in kept:
            data = memoryview(events.data)
            start, end = int(events.bounds[0, 0]), int(events.bounds[-1, 1])
            assert bytes(data[start:end]) == seen == text[offset:offset + len(seen)]
        assert len(made) >= refills  # each refill read into a new buffer
    else:
        assert len(made) <= 4  # the two in turn (another where the reading ahead held one)


@pytest.mark.parametrize("ahead", [False, True])
@pytest.mark.parametrize("reader", ["native", "python"])
@pytest.mark.parametrize("trap", [False, True], ids=["plain", "boundaries-in-strings"])
def test_a_refill_carries_part_of_one_event_not_most_of_a_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ahead: bool, reader: str,
        trap: bool) -> None:
    """A buffer's last batch ends at its last proven boundary, at least half a batch on: a
    refill carries over part of one event (it carried most of a batch, half of what was
    read). Where that boundary lies in a string (`trap`: every event holds one), the batch is
    not proven, more is read and the batch is cut as any other; the index is the one a read
    in one batch gives, either way, and the same for both readers and with reading ahead."""
    from proftui.core.importers.chrome import read as read_module

    carried: list[int] = []
    fill = read_module._Stream.fill

    def counting_fill(stream, size: int) -> None:
        if len(stream.buf) - stream.pos < size and not stream.eof and stream.base + stream.pos:
            carried.append(len(stream.buf) - stream.pos)
        fill(stream, size)

    rng = random.Random(5)
    events = [{"ph": "X", "name": rng.choice(["gemm", "aten::mm", "caf\u00e9"]), "pid": 1,
               "tid": rng.choice([1, 2]), "ts": k, "dur": rng.choice([0.5, 1, 2.125]),
               "args": {"text": ("}, {" if trap else "ab") * rng.randrange(1, 40), "n": k}}
              for k in range(12000)]
    path = write_trace(tmp_path / "t.json", events)
    longest = max(len(json.dumps(ev)) for ev in events)
    monkeypatch.setenv("PROFTUI_NATIVE", "1" if reader == "native" else "0")
    whole = load(path)
    monkeypatch.setattr(read_module._Stream, "fill", counting_fill)
    monkeypatch.setattr(read_module.ChromeJsonReader, "__init__", _with_ahead(ahead))
    cut = load(path, batch_bytes=32 << 10)  # (read 64 kB at a time: two batches, as 4 MB)
    assert len(cut.col("batches.start")) > 40 and len(carried) > 15
    if trap:  # some buffers end in a boundary inside a string: read on, as before
        assert max(carried) > 4 * longest
    else:  # (where a buffer ends between two events, the last whole one is carried too)
        assert max(carried) <= 2 * longest
    assert columns_equal(whole, cut)


def _with_ahead(ahead: bool):
    from proftui.core.importers.chrome.read import ChromeJsonReader

    init = ChromeJsonReader.__init__

    def __init__(self, *args, **kwargs) -> None:
        init(self, *args, **{**kwargs, "read_ahead": ahead})

    return __init__


def test_memory_events_give_the_python_paths_samples(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The native path reads Kineto's [memory] totals in one typed decode a batch and adds
    them as columns; the samples, their series and the series' numbering are the Python
    path's, event by event, however odd the values (a batch with any the typed decode
    refuses is read event by event)."""
    rng = random.Random(7)
    devices = [(1, 0), (1, 1), (6, 0), (1.0, 0), (True, 0), (0, -1), (20, 3), (None, None),
               ("1", 0)]
    events = [x_ev for x_ev in _mixed_events(2, 200) if x_ev["ph"] != "i"]
    ts = 1_700_000_000_000_000.0
    for i in range(1200):
        ts += 0.75
        args: dict = {"Addr": i, "Bytes": rng.choice([512, -512])}
        dtype, did = rng.choice(devices)
        args.update({"Device Type": dtype, "Device Id": did})
        for key in ("Total Allocated", "Total Reserved"):
            value = rng.choice([1024 * i, 2.5 * i, None, "absent", 2**70, 0])
            if value != "absent":
                args[key] = value
        if i % 97 == 0:  # refused by the typed decode: its batch is read event by event
            args["Total Allocated"] = rng.choice([True, "12", [1]])
        ev = {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]",
              "pid": rng.choice([7, "7", 8]), "tid": 1, "ts": round(ts, 3), "args": args}
        if i % 50 == 1:
            ev["args"] = rng.choice([None, [1, 2], {}])
        events.append(ev)
    path = write_trace(tmp_path / "m.json", events)
    monkeypatch.setenv("PROFTUI_NATIVE", "1")
    index = load(path, 2000)
    assert index.arrays["counters.sample_ts"].size > 1500
    assert index.meta["reader"]["native"] > 20
    assert_same_index(path, 2000, monkeypatch)
