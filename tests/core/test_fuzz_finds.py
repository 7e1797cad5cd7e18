"""Regressions for what the offline fuzzer (bench/fuzz.py) found, each in its smallest form."""

from __future__ import annotations

import os

import numpy as np
import pytest

from proftui.core import NotATraceError, load_trace
from proftui.core.cache.tables import read_table
from proftui.core.importers.chrome import decode
from proftui.core.ops.iterations import Iterations, _from_msprof_csv, _join_torch_npu
from proftui.core.query.rows import build_rows, paint_cells

from helpers import load, write_trace


def test_a_trace_without_slices_has_no_rows(tmp_path) -> None:
    index = load(write_trace(tmp_path / "t.json", [
        {"ph": "C", "name": "mem", "pid": 1, "ts": 1, "args": {"v": 1}}]), 1 << 20)
    rows = build_rows(index)
    assert rows.n_rows == len(rows.count) == 0
    cells = paint_cells(index, rows, np.arange(rows.n_rows), 0, 10, 4)
    assert cells.owner.shape == (0, 4)


def test_flow_points_whose_bp_is_a_list(tmp_path) -> None:
    events = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]
    events += [{"ph": ph, "name": "f", "cat": "c", "id": 1, "pid": 1, "tid": 1, "ts": ts,
                "bp": [1, 2]} for ph, ts in (("s", 1), ("f", 5))]
    index = load(write_trace(tmp_path / "t.json", events), 1 << 20)
    assert index.n_slices == 1


def test_step_numbers_that_are_infinite_or_huge(tmp_path) -> None:
    path = tmp_path / "step_trace_time.csv"
    path.write_text("Step,Computing,Free\ninf,1,2\n1e300,3,4\n-inf,5,6\n7,8,9\n")
    found = Iterations("timeline", [])
    _join_torch_npu(found, read_table(str(path), "step_trace_time"))
    assert [it.number for it in found.items] == [7]
    path = tmp_path / "step_trace.csv"
    path.write_text("Iteration ID,Iteration End(us),Iteration Time(us)\n"
                    "1,inf,5\n2,1e300,5\n3,1780676244313289,1e400\n4,1780676244313300,5\n")
    numbers = [(it.number, it.end_ns) for it in _from_msprof_csv(read_table(str(path))).items]
    assert numbers == [(1, -1), (2, -1), (3, -1), (4, 1780676244313300000)]


def test_a_deep_value_that_never_ends_is_scanned_for_once(monkeypatch) -> None:
    calls = []
    shallow = decode.shallow_value
    monkeypatch.setattr(decode, "shallow_value",
                        lambda text, pos: calls.append(pos) or shallow(text, pos))
    event = b'{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":1,"args":{"a":%s}}'
    piece = b",".join([event % (b"[" * 3000)] * 50)  # none of them ends
    result = decode.decode_piece(piece, final=True)
    assert len(calls) == 1 and result.events == []
    assert result.problems["truncated"][0] + result.problems["bad_json"][0] == 50


def test_a_header_far_wider_than_its_rows(tmp_path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(5000)) + "\n" + "1,2\n" * 500)
    table = read_table(str(path))
    assert len(table.columns) == 1024 and table.n_rows == 500
    assert table.diagnostics.count("wide_csv") == 5000 - 1024


def test_epoch_nanoseconds_in_a_csv_are_exact(tmp_path) -> None:
    path = tmp_path / "tx.csv"
    path.write_text("Start_time(ns),End_time(ns)\n1780676244313289123,1780676244313289999\n"
                    "N/A,1780676244313290001\n")
    start, end = read_table(str(path)).columns
    assert start.kind == end.kind == "timestamp"
    assert start.values.tolist() == [1780676244313289123, np.iinfo(np.int64).min]
    assert end.values.tolist() == [1780676244313289999, 1780676244313290001]


def test_pipes_and_devices_are_refused_or_left_out(tmp_path) -> None:
    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    with pytest.raises(NotATraceError, match="not a regular file"):
        load_trace(str(fifo), use_cache=False)
    profile = tmp_path / "profile"
    profile.mkdir()
    write_trace(profile / "a.pt.trace.json", [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 1}])
    os.mkfifo(profile / "op_summary_1.csv")
    os.symlink("/dev/zero", profile / "kernel_details.csv")
    index = load_trace(str(profile), use_cache=False)
    skipped = {s["path"]: s["why"] for s in index.meta["profile"]["skipped"]}
    assert index.n_slices == 1 and len(skipped) == 2
    assert all("not a regular file" in why for why in skipped.values())
