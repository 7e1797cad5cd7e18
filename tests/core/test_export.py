"""CSV export: round trips to the ns, units, args columns, formula injection, atomic writes,
refusing to overwrite, stdout, track patterns and tables as shown."""

from __future__ import annotations

import csv
import io
import json
import os
from decimal import Decimal

import numpy as np
import pytest

from proftui.core.cache.tables import read_table
from proftui.core.export import to_csv as export
from proftui.core.export.to_csv import (
    ExportError,
    ExportExists,
    decimal_text,
    export_events,
    export_table,
    read_args,
    select_tracks,
)
from proftui.core.model.errors import Cancelled, ProftuiError
from proftui.core.ops.aggregate import aggregate_ops
from proftui.core.tables.query import filter_mask, sort_order

from helpers import load, write_trace

HEADER = ["name", "category", "process", "thread", "start_from_capture(us)",
          "end_from_capture(us)", "duration(us)", "depth", "kind"]


def _x(name, ts, dur, pid=1, tid=1, cat="op", args=None):
    event = {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args is not None:
        event["args"] = args
    return event


# Times in µs with ns digits; the trace starts at 1000.000 µs.
EVENTS = [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "trainer"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
    {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "=cmd|' /C calc'!A0"}},
    {"ph": "M", "name": "thread_name", "pid": 2, "tid": 5, "args": {"name": "stream 5"}},
    _x("step", 1000, 50, args={"k": "a,b", "q": 'say "hi"', "nl": "two\nlines", "n": -3}),
    _x("=1+1", 1000.001, 9.999, args={"nested": {"x": [1, 2], "y": None}, "k": "-x"}),
    _x("+x", 1020.5, 1, args={"k": "=HYPERLINK(\"http://evil\")"}),
    _x("-x", 1030, 2.25),
    _x("@x", 1040, 0.001),
    _x("\t=x", 1045, 0, args={"k": 1.5}),
    _x("kernel,\"quoted\"", 1001, 20, pid=2, tid=5, cat="kernel", args={"k": True}),
    _x("naïve ✓", 1030, 30, pid=2, tid=5, cat="kernel"),
    {"ph": "i", "name": "mark", "cat": "", "pid": 1, "tid": 1, "ts": 1025, "s": "t",
     "args": {"k": "at mark"}},
]


@pytest.fixture
def index(tmp_path):
    return load(write_trace(tmp_path / "t.json", EVENTS))


def _read(text: str) -> list[list[str]]:
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "").replace(
        "two\nlines", "")
    return list(csv.reader(io.StringIO(text, newline="")))


def _export(index, **options) -> list[list[str]]:
    buf = io.StringIO(newline="")
    result = export_events(index, buf, **options)
    rows = _read(buf.getvalue())
    assert result.rows == len(rows) - 1 and result.path == "-"
    return rows


def _ns(text: str, unit: str = "us") -> int:
    value = Decimal(text) * {"ns": 1, "us": 1000, "ms": 10**6, "s": 10**9}[unit]
    assert value == value.to_integral_value()
    return int(value)


def test_round_trip_to_the_ns(index) -> None:
    rows = _export(index, neutralize=False)
    assert rows[0] == HEADER
    origin = index.start_ns
    assert origin == 1_000_000
    # Every slice comes back, with its exact start and duration, ordered by start then track.
    want = sorted((int(index.col("slices.start")[i]), int(index.col("slices.track")[i]),
                   int(index.col("slices.depth")[i]), index.slice_name(i),
                   int(index.col("slices.dur")[i])) for i in range(index.n_slices))
    got = [(origin + _ns(r[4]), r[0], _ns(r[6]), _ns(r[5]) - _ns(r[4])) for r in rows[1:]
           if r[8] == "slice"]
    assert got == [(s, name, d, d) for s, _t, _d, name, d in want]
    assert [r[0] for r in rows[1:]] == [
        "step", "=1+1", "kernel,\"quoted\"", "+x", "mark", "-x", "naïve ✓", "@x", "\t=x"]
    step, first = rows[1], rows[2]
    assert step[2:] == ["trainer (1)", "main (1)", "0.000", "50.000", "50.000", "0", "slice"]
    assert first[4:8] == ["0.001", "10.000", "9.999", "1"]  # 1000.001 µs + 9.999 µs, depth 1
    mark = rows[5]
    assert mark[4:] == ["25.000", "25.000", "0.000", "", "instant"]


def test_units_are_exact_decimals(index) -> None:
    for unit, start, dur in (("ns", "1", "9999"), ("us", "0.001", "9.999"),
                             ("ms", "0.000001", "0.009999"), ("s", "0.000000001",
                                                              "0.000009999")):
        rows = _export(index, unit=unit)
        assert rows[0][4:7] == [f"start_from_capture({unit})", f"end_from_capture({unit})",
                                f"duration({unit})"]
        assert rows[2][4] == start and rows[2][6] == dur
    assert decimal_text(np.array([-1500, 10**18 + 7]), "us") == ["-1.500",
                                                                 "1000000000000000.007"]
    with pytest.raises(ProftuiError, match="Unknown time unit"):
        _export(index, unit="min")


def test_window_tracks_and_instants(index) -> None:
    origin = index.start_ns
    # [20 µs, 30 µs): overlapping slices only (a slice ending at 20 µs is out, one starting
    # at 30 µs is out); the instant at 25 µs is in.
    rows = _export(index, start_ns=origin + 20_000, end_ns=origin + 30_000)
    assert [r[0] for r in rows[1:]] == ["step", "kernel,\"quoted\"", "'+x", "mark"]
    stream = select_tracks(index, "stream")
    rows = _export(index, tracks=stream)
    assert {r[3] for r in rows[1:]} == {"stream 5"} and len(rows) == 3
    rows = _export(index, instants=False)
    assert "instant" not in {r[8] for r in rows[1:]}
    with pytest.raises(ProftuiError, match="ends"):
        _export(index, start_ns=origin + 5, end_ns=origin)


def test_args_columns(index) -> None:
    rows = _export(index, args_keys=["k", "q", "nl", "nested", "n", "absent"])
    assert rows[0][9:] == ["args.k", "args.q", "args.nl", "args.nested", "args.n",
                           "args.absent"]
    by_name = {r[0]: r[9:] for r in rows[1:]}
    assert by_name["step"] == ["a,b", 'say "hi"', "two\nlines", "", "-3", ""]
    assert by_name["'=1+1"] == ["'-x", "", "", '{"x":[1,2],"y":null}', "", ""]
    assert by_name["'+x"][0] == "'=HYPERLINK(\"http://evil\")"
    assert by_name["'\t=x"][0] == "1.5"
    assert by_name['kernel,"quoted"'][0] == "true"
    assert by_name["mark"][0] == "at mark"
    assert by_name["naïve ✓"] == [""] * 6


def test_args_read_batch_by_batch_from_gzip(tmp_path) -> None:
    events = [_x(f"op{k}", k * 10, 5, args={"k": k, "s": "x" * (k % 7)}) for k in range(300)]
    index = load(write_trace(tmp_path / "t.json.gz", events, gz=True), batch_bytes=256)
    assert len(index.col("batches.start")) > 20
    refs = index.col("slices.ref")[::-1].astype(np.int64)  # any order, repeated batches
    got = read_args(index, refs)
    want = [int(index.slice_name(i)[2:]) for i in range(index.n_slices)][::-1]
    assert [a["k"] for a in got] == want
    assert read_args(index, np.zeros(0, np.int64)) == []


def test_formula_injection_neutralised_by_default_and_kept_raw(index) -> None:
    names = [r[0] for r in _export(index)[1:]]
    assert names == ["step", "'=1+1", 'kernel,"quoted"', "'+x", "mark", "'-x", "naïve ✓",
                     "'@x", "'\t=x"]
    procs = {r[2] for r in _export(index)[1:]}
    assert "'=cmd|' /C calc'!A0 (2)" in procs
    raw = [r[0] for r in _export(index, neutralize=False)[1:]]
    assert raw[1] == "=1+1" and raw[3] == "+x" and raw[-1] == "\t=x"
    # Numbers stay numbers: a negative args number is not a formula.
    assert _export(index, args_keys=["n"])[1][9] == "-3"


def test_file_written_and_never_overwritten(index, tmp_path) -> None:
    target = tmp_path / "out.csv"
    result = export_events(index, target)
    assert result.rows == 9 and result.path == str(target)
    body = target.read_bytes()
    assert body.startswith(b"name,category,") and body.count(b"\r\n") == 10
    assert "naïve ✓".encode() in body
    with pytest.raises(ExportExists, match="already exists"):
        export_events(index, target, unit="ns")
    assert target.read_bytes() == body  # untouched
    export_events(index, target, unit="ns", overwrite=True, bom=True)
    assert target.read_bytes().startswith("\ufeffname,".encode())
    assert b"start_from_capture(ns)" in target.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["out.csv", "t.json"]  # no temporary files left


def test_bad_targets_are_one_sentence(index, tmp_path, monkeypatch) -> None:
    with pytest.raises(ExportError, match="is a directory"):
        export_events(index, tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ExportError, match="does not exist"):
        export_events(index, tmp_path / "file" / "out.csv")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(export.os, "open", refuse)
    with pytest.raises(ExportError, match=r"Cannot write in .*: Permission denied\.$"):
        export_events(index, tmp_path / "out.csv")


def test_a_failure_mid_write_leaves_no_file(index, tmp_path, monkeypatch) -> None:
    target = tmp_path / "out.csv"
    real = export.write_rows

    def failing(stream, header, n_rows, cells, bom=False, progress=None):
        real(stream, header, n_rows, cells, bom)
        stream.flush()
        assert any(p.name.endswith(".part") for p in tmp_path.iterdir())  # it was written
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export, "write_rows", failing)
    with pytest.raises(ExportError, match="No space left on device"):
        export_events(index, target)
    assert sorted(os.listdir(tmp_path)) == ["t.json"]
    monkeypatch.setattr(export, "write_rows", real)
    # Cancelled from the progress callback between chunks: nothing left either, and an
    # existing file is kept as it was.
    target.write_text("keep")
    monkeypatch.setattr(export, "CHUNK_ROWS", 2)
    seen = []

    def cancel(done, total):
        seen.append((done, total))
        if done >= 4:
            raise Cancelled("stop")

    with pytest.raises(Cancelled):
        export_events(index, target, overwrite=True, progress=cancel)
    assert seen == [(2, 9), (4, 9)]
    assert target.read_text() == "keep" and sorted(os.listdir(tmp_path)) == ["out.csv",
                                                                            "t.json"]


def test_stdout_target(index, capsys) -> None:
    result = export_events(index, "-", tracks=select_tracks(index, "stream 5"))
    out = capsys.readouterr().out
    assert result.path == "-" and result.rows == 2
    assert _read(out)[1][0] == 'kernel,"quoted"'


def test_select_tracks(index) -> None:
    main_track = [t for t in range(index.n_tracks) if index.track_label(t) == "main (1)"]
    assert select_tracks(index, "TRAINER (1) / MAIN").tolist() == main_track
    assert select_tracks(index, "/^trainer.*main/").tolist() == main_track
    assert len(select_tracks(index, "/stream \\d$/")) == 1
    assert select_tracks(index, "nothing like it").tolist() == []
    with pytest.raises(ProftuiError, match="not a valid regular expression"):
        select_tracks(index, "/(/")


def test_export_table_as_shown(index, tmp_path) -> None:
    ops = aggregate_ops(index)
    order = sort_order(ops, 2)  # by Total, shortest first; then filtered
    rows = order[filter_mask(ops, "Count>=1 !kernel")[order]]
    columns = [0, 1, 2, 4]  # Name, Count, Total, Avg as shown
    buf = io.StringIO(newline="")
    result = export_table(ops, buf, rows=rows, columns=columns)
    got = _read(buf.getvalue())
    assert result.rows == 7
    assert got[0] == ["Name", "Count", "Total", "Avg"]  # the headers as shown
    assert got[1:] == [["'\t=x", "1", "0", "0"], ["'@x", "1", "1", "1"], ["'+x", "1", "1000",
                       "1000"], ["'-x", "1", "2250", "2250"], ["'=1+1", "1", "9999", "9999"],
                       ["naïve ✓", "1", "30000", "30000"], ["step", "1", "50000", "50000"]]
    buf = io.StringIO(newline="")
    export_table(ops, buf, rows=rows[:2], columns=[0, 2], unit="us", neutralize=False)
    assert _read(buf.getvalue()) == [["Name", "Total(us)"], ["\t=x", "0.000"],
                                     ["@x", "0.001"]]


def test_export_table_numbers_timestamps_and_text(tmp_path) -> None:
    source = tmp_path / "op_summary.csv"
    source.write_text("Op Name,Task Start Time(us),Task Duration(us),Delta,Note\n"
                      "conv,1780676244313289.123\t,12.5,-3,-x\n"
                      "relu,N/A,N/A,2.25,\"a,b\"\n", encoding="utf-8")
    table = read_table(str(source), "op_summary")
    assert table.columns[1].kind == "timestamp"
    target = tmp_path / "out.csv"
    export_table(table, target, rows=[1, 0])
    assert target.read_bytes().decode() == (
        "Op Name,Task Start Time(us),Task Duration(us),Delta,Note\r\n"
        'relu,,,2.25,"a,b"\r\n'
        "conv,1780676244313289.123,12.5,-3,'-x\r\n")


def test_single_column_of_empty_cells_reads_back(tmp_path) -> None:
    source = tmp_path / "x.csv"
    source.write_text("Note,Other\nx,1\n,2\n")
    table = read_table(str(source))
    buf = io.StringIO(newline="")
    export_table(table, buf, columns=[0])
    assert _read(buf.getvalue()) == [["Note"], ["x"], [""]]


def test_json_of_the_trace_read_back_equals_args(index) -> None:
    rows = _export(index, args_keys=["nested"], neutralize=False)
    cell = next(r[9] for r in rows[1:] if r[0] == "=1+1")
    assert json.loads(cell) == {"x": [1, 2], "y": None}
