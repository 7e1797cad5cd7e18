"""Summary CSVs read into typed columns, with the quirks real profiler output has."""

from __future__ import annotations

import math

import numpy as np

from proftui.core.cache.tables import read_table


def _write(tmp_path, text: str, name: str = "t.csv", bom: bool = False):
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return str(path)


def test_op_summary_quirks(tmp_path) -> None:
    path = _write(tmp_path, (
        "Device_id,Model ID,Task ID,Op Name,Task Start Time(us),Task Duration(us),Block Dim,"
        "Input Shapes\n"
        '0,4294967295,0,main_kernel,1780676244313289.000\t,87139.380,256,"""2,8193;2;2"""\n'
        "0,4294967295,N/A,hcom_allReduce,1780676244400429.125\t,12.5,N/A,N/A\n"), bom=True)
    table = read_table(path, "op_summary")
    assert table.n_rows == 2 and table.columns[0].header == "Device_id"
    start = table.find("Task Start Time", "Start Time")
    assert start.kind == "timestamp" and start.unit == "ns"
    assert start.values.tolist() == [1780676244313289000, 1780676244400429125]
    dur = table.find("Task Duration")
    assert dur.unit == "us" and dur.values.tolist() == [87139.38, 12.5]
    assert table.find("Block Num", "Block Dim").header == "Block Dim"
    task = table.find("Task ID")
    assert task.kind == "number" and task.values[0] == 0 and math.isnan(task.values[1])
    assert table.find("Model ID").values[0] == 4294967295  # the "no model" sentinel, exact
    assert table.find("Input Shapes").values.tolist() == ['"2,8193;2;2"', "N/A"]
    assert len(table.diagnostics) == 0


def test_duplicate_headers_multiline_cells_and_ragged_rows(tmp_path) -> None:
    path = _write(tmp_path, (
        "Iteration ID,Model ID,Reduce Start(us),Reduce Duration(us),Reduce Start(us),"
        "Reduce Duration(us)\n"
        "1,2,10,5,30,6\n"
        "2,2,40,5\n"
        "\n"
        "3,2,70,5,90,6,\n"))
    table = read_table(path)
    assert [c.header for c in table.columns].count("Reduce Start(us)") == 2
    second = [c for c in table.columns if c.header == "Reduce Start(us)"][1]
    assert np.isnan(second.values[1]) and second.values[2] == 90
    assert table.n_rows == 3
    assert table.diagnostics.count("ragged_row") == 1  # the short row; a trailing comma is fine
    path = _write(tmp_path, 'Name,Call Stack,Host Self Duration(us)\n'
                            'aten::add,"a.py(1): f\nb.py(2): g",12.5\n', "ops.csv")
    table = read_table(path)
    assert table.n_rows == 1
    assert table.find("Call Stack").values[0] == "a.py(1): f\nb.py(2): g"


def test_unknown_csv_and_empty_file(tmp_path) -> None:
    table = read_table(_write(tmp_path, "colour,size(cm)\nred,3\nblue,x\n"))
    # A unit says numbers: the "x" is counted as damage and left empty.
    assert [(c.name, c.unit, c.kind) for c in table.columns] == [
        ("colour", "", "text"), ("size", "cm", "number")]
    assert {p.kind: p.count for p in table.diagnostics} == {"bad_number": 1}
    empty = read_table(_write(tmp_path, "", "e.csv"))
    assert empty.n_rows == 0 and empty.columns == []
