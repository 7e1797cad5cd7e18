"""A profile's summary tables by name: chosen, stacked across ranks, asked, made plain."""

from __future__ import annotations

import numpy as np
import pytest

from proftui.core.cache.tables import read_table
from proftui.core.discover.profile import TableFile
from proftui.core.model.errors import ProftuiError
from proftui.core.tables.by_name import (
    ask,
    choose,
    group_column,
    plain_column,
    plain_rows,
    read_tables,
    stack,
)

FILES = [
    TableFile("/p/rank0/op_statistic.csv", "rank 0", "op_statistic"),
    TableFile("/p/rank0/operator_details.csv", "rank 0", "operator_details"),
    TableFile("/p/rank0/op_summary_20260605161737.csv", "rank 0", "op_summary"),
    TableFile("/p/rank1/op_statistic.csv", "rank 1", "op_statistic"),
    TableFile("/p/rank1/op_summary_20260605161740.csv", "rank 1", "op_summary"),
]


def _paths(files) -> list[str]:
    return [f.path for f in files]


def test_choose_by_kind_file_name_prefix_and_group() -> None:
    assert _paths(choose(FILES, "op_statistic")) == [
        "/p/rank0/op_statistic.csv", "/p/rank1/op_statistic.csv"]
    assert _paths(choose(FILES, "OP_Summary")) == [
        "/p/rank0/op_summary_20260605161737.csv", "/p/rank1/op_summary_20260605161740.csv"]
    # A file's base name, with or without .csv, picks that file only.
    assert _paths(choose(FILES, "op_summary_20260605161740")) == [
        "/p/rank1/op_summary_20260605161740.csv"]
    assert _paths(choose(FILES, "op_summary_20260605161737.csv")) == [
        "/p/rank0/op_summary_20260605161737.csv"]
    assert _paths(choose(FILES, "operator_d")) == ["/p/rank0/operator_details.csv"]
    assert _paths(choose(FILES, "op_stat", "Rank 1")) == ["/p/rank1/op_statistic.csv"]


def test_choose_says_what_there_is() -> None:
    with pytest.raises(ProftuiError, match='^"op" could be any of op_statistic, '
                                           "operator_details, op_summary: name one.$"):
        choose(FILES, "op")
    with pytest.raises(ProftuiError, match='^No table "aicpu" in this profile; its tables are '
                                           "op_statistic, operator_details, op_summary.$"):
        choose(FILES, "aicpu")
    with pytest.raises(ProftuiError, match='^op_statistic has no group "rank 7"; its groups '
                                           'are "rank 0", "rank 1".$'):
        choose(FILES, "op_statistic", "rank 7")
    with pytest.raises(ProftuiError, match="^This profile has no summary tables.$"):
        choose([], "op_statistic")


def _csv(tmp_path, folder: str, name: str, text: str) -> TableFile:
    path = tmp_path / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return TableFile(str(path), folder.replace("_", " "), name[:-4])


def test_stack_matches_columns_by_header_and_puts_the_group_first(tmp_path) -> None:
    a = _csv(tmp_path, "rank_0", "op_statistic.csv",
             "OP Type,Count,Total Time(us),Note\nMatMul,2,10.5,x\nAdd,1,N/A,y\n")
    # Rank 1's file has no Note, an extra column, and its columns in another order.
    b = _csv(tmp_path, "rank_1", "op_statistic.csv",
             "Count,OP Type,Total Time(us),Extra(%)\n3,Conv,7.25,50\n")
    tables = read_tables([a, b])
    table = stack(tables)
    assert [c.header for c in table.columns] == [
        "Group", "OP Type", "Count", "Total Time(us)", "Note", "Extra(%)"]
    assert table.n_rows == 3 and group_column(table) == 0 and group_column(tables[0]) is None
    assert table.find("Group").values.tolist() == ["rank 0", "rank 0", "rank 1"]
    assert table.find("OP Type").values.tolist() == ["MatMul", "Add", "Conv"]
    assert table.find("Count").values.tolist() == [2, 1, 3]
    assert np.isnan(table.find("Total Time").values[1])
    assert table.find("Note").values.tolist() == ["x", "y", ""]
    extra = table.find("Extra")
    assert extra.unit == "%" and np.isnan(extra.values[:2]).all() and extra.values[2] == 50
    assert stack(tables[:1]) is tables[0]


def test_stack_keeps_duplicate_headers_apart_and_text_wins(tmp_path) -> None:
    a = _csv(tmp_path, "rank_0", "step.csv",
             "Iteration ID,Reduce Start(us),Reduce Start(us),Index\n1,10,30,5\n")
    b = _csv(tmp_path, "rank_1", "step.csv",
             "Iteration ID,Reduce Start(us),Reduce Start(us),Index\n1,11,31,\"(0, 1)\"\n")
    table = stack(read_tables([a, b]))
    starts = [c for c in table.columns if c.header == "Reduce Start(us)"]
    assert [s.values.tolist() for s in starts] == [[10, 11], [30, 31]]
    index = table.find("Index")
    assert index.kind == "text" and index.values.tolist() == ["5", "(0, 1)"]


OP_SUMMARY = (
    "Device_id,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),Ratio(%)\n"
    "0,conv1,Conv2D,AI_CORE,1780676244313289.000\t,87139.380,60\n"
    "0,relu1,Relu,AI_VECTOR_CORE,1780676244400429.125\t,12.5,N/A\n"
    "0,alloc,N/A,AI_CPU,N/A,840.07675,40\n")


def test_ask_defaults_filters_sorts_and_cuts(tmp_path) -> None:
    table = read_table(str(_write(tmp_path, OP_SUMMARY)), "op_summary")
    answer = ask(table)
    assert answer.sort == (5, True) and answer.rows.tolist() == [0, 2, 1]
    assert answer.n_matching == 3 and answer.columns == list(range(7))
    answer = ask(table, descending=False, top=2)  # the usual column, turned round
    assert answer.sort == (5, False) and answer.rows.tolist() == [1, 2]
    assert answer.n_matching == 3
    answer = ask(table, where="Task Duration>500us", sort="op name")
    assert answer.sort == (1, False) and answer.rows.tolist() == [2, 0]  # text: A to Z
    answer = ask(table, columns=["Task Duration", "Op Name"])
    assert answer.columns == [5, 1]
    with pytest.raises(ProftuiError, match='^Unknown column "Nope"'):
        ask(table, sort="Nope")
    with pytest.raises(ProftuiError, match="^Cannot read"):
        ask(table, where="Ratio>>3")


def _write(tmp_path, text: str, name: str = "op_summary.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_plain_values_are_integer_ns_and_null(tmp_path) -> None:
    table = read_table(str(_write(tmp_path, OP_SUMMARY)), "op_summary")
    columns = list(range(len(table.columns)))
    assert [plain_column(table.columns[c]) for c in (2, 4, 5, 6)] == [
        {"name": "OP Type", "header": "OP Type", "unit": "", "kind": "text"},
        {"name": "Task Start Time", "header": "Task Start Time(us)", "unit": "ns",
         "kind": "timestamp"},
        {"name": "Task Duration", "header": "Task Duration(us)", "unit": "ns", "kind": "number"},
        {"name": "Ratio", "header": "Ratio(%)", "unit": "%", "kind": "number"}]
    assert plain_rows(table, np.array([0, 1, 2]), columns) == [
        [0, "conv1", "Conv2D", "AI_CORE", 1780676244313289000, 87139380, 60],
        [0, "relu1", "Relu", "AI_VECTOR_CORE", 1780676244400429125, 12500, None],
        # 840.07675 us is 840076.75 ns: rounded to the nearest ns.
        [0, "alloc", None, "AI_CPU", None, 840077, 40]]
    assert plain_rows(table, np.array([1]), [5, 1]) == [[12500, "relu1"]]
