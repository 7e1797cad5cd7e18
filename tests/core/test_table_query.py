"""Table queries: stable sorts with missing values last, every filter form and its errors,
totals of summable columns, cell text, the usual first sort of each table kind."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from proftui.core.cache.tables import read_table
from proftui.core.model.errors import ProftuiError
from proftui.core.model.table import Column, Table
from proftui.core.model.words import duration_text
from proftui.core.tables.query import (
    column_index,
    default_sort,
    factorize,
    filter_mask,
    format_cell,
    parse_time_ns,
    sort_order,
    totals,
)

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
NAN = math.nan
TS = 1_780_676_244_313_289_000  # epoch ns, beyond float precision


def _text(values):
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


@pytest.fixture
def table() -> Table:
    columns = [
        Column("Op Name", "Op Name", "", "text",
               _text(["conv2d", "Relu", "aten::conv", "N/A", "relu", "", "Aten::add"])),
        Column("Task Duration(us)", "Task Duration", "us", "number",
               np.array([100.0, 5.5, NAN, 2000.0, 5.5, 0.2, 1.0])),
        Column("Count", "Count", "", "number", np.array([3.0, 1, 3, NAN, 2, 5, 3])),
        Column("Ratio(%)", "Ratio", "%", "number", np.array([50.0, 1, 4.9, 5, NAN, 3, 36.1])),
        Column("Task Start Time(us)", "Task Start Time", "ns", "timestamp",
               np.array([TS + 1, TS, TS + 2, np.iinfo(np.int64).min, TS, TS + 1_000, TS + 5],
                        np.int64)),
        Column("Task ID", "Task ID", "", "number", np.array([1.0, 2, 3, 4, 5, 6, 7])),
        Column("Avg Time(ns)", "Avg Time", "ns", "number", np.arange(7.0)),
    ]
    return Table("op_summary", "", columns, 7)


def _rows(table, expression) -> list[int]:
    return np.flatnonzero(filter_mask(table, expression)).tolist()


# -- sorting ------------------------------------------------------------------------------------


def test_numbers_sort_stably_with_nan_last_both_ways(table) -> None:
    assert sort_order(table, 1).tolist() == [5, 6, 1, 4, 0, 3, 2]
    assert sort_order(table, 1, descending=True).tolist() == [3, 0, 1, 4, 6, 5, 2]
    assert sort_order(table, 2, descending=True).tolist() == [5, 0, 2, 6, 4, 1, 3]
    assert sort_order(table, 2).tolist() == [1, 4, 0, 2, 6, 5, 3]


def test_text_sorts_case_insensitively_with_missing_last(table) -> None:
    assert sort_order(table, 0).tolist() == [6, 2, 0, 1, 4, 3, 5]  # Relu before relu (stable)
    assert sort_order(table, 0, descending=True).tolist() == [1, 4, 0, 2, 6, 3, 5]


def test_timestamps_sort_exactly_with_missing_last(table) -> None:
    assert sort_order(table, 4).tolist() == [1, 4, 0, 2, 6, 5, 3]
    assert sort_order(table, 4, descending=True).tolist() == [5, 6, 2, 0, 1, 4, 3]


def test_a_million_rows_sort_by_text_and_number() -> None:
    rng = np.random.default_rng(1)
    names = _text([f"op{k}" for k in rng.integers(0, 5_000, 1_000_000).tolist()])
    values = rng.random(1_000_000)
    values[::7] = NAN
    big = Table("t", "", [Column("Name", "Name", "", "text", names),
                          Column("V", "V", "", "number", values)], 1_000_000)
    order = sort_order(big, 1, descending=True)
    shown = values[order]
    n_nan = int(np.isnan(values).sum())
    assert np.isnan(shown[-n_nan:]).all() and (np.diff(shown[:-n_nan]) <= 0).all()
    order = sort_order(big, 0)
    lowered = [names[i] for i in order[:2_000].tolist()]
    assert lowered == sorted(lowered)
    firsts = order[names[order] == names[order[0]]]
    assert (np.diff(firsts) > 0).all()  # equal names keep their row order


# -- filtering ----------------------------------------------------------------------------------


def test_substring_regex_and_one_column(table) -> None:
    assert _rows(table, "conv") == [0, 2]
    assert _rows(table, "RELU") == [1, 4]
    assert _rows(table, "/^aten::/") == [2, 6]
    assert _rows(table, "/u$/") == [1, 4]
    assert _rows(table, "Op Name~conv") == [0, 2]
    assert _rows(table, "OpName~/^re/") == [1, 4]
    assert _rows(table, "op_name=relu") == [1, 4]
    assert _rows(table, '"Op Name"!=relu') == [0, 2, 6]  # missing text is never a match
    assert _rows(table, "!conv") == [1, 3, 4, 5, 6]
    assert _rows(table, '"aten::c"') == [2]
    assert _rows(table, "") == list(range(7))


def test_numeric_comparisons_with_units(table) -> None:
    assert _rows(table, "Task Duration>100us") == [3]
    assert _rows(table, "Task Duration >= 100") == [0, 3]  # bare: the column's unit (µs)
    assert _rows(table, "Task Duration>=0.1ms") == [0, 3]
    assert _rows(table, "TaskDuration<2ms") == [0, 1, 4, 5, 6]
    assert _rows(table, "TaskDuration<0.002001s") == [0, 1, 3, 4, 5, 6]
    assert _rows(table, "Task Duration<=200ns") == [5]
    assert _rows(table, "Task Duration=5.5") == [1, 4]
    assert _rows(table, "Count=3") == [0, 2, 6]
    assert _rows(table, "count != 3") == [1, 4, 5]  # NaN never matches
    assert _rows(table, "Ratio(%)<5") == [1, 2, 5]
    assert _rows(table, "Ratio<5%") == [1, 2, 5]
    assert _rows(table, "Avg Time>3us") == []
    assert _rows(table, "Avg Time>=3") == [3, 4, 5, 6]
    assert _rows(table, "avg_time > 0.004us") == [5, 6]


def test_timestamps_compare_exactly(table) -> None:
    assert _rows(table, "Task Start Time>1780676244313289us") == [0, 2, 5, 6]
    assert _rows(table, "Task Start Time=1780676244313289.002us") == [2]
    assert _rows(table, f"Task Start Time<={TS + 1}") == [0, 1, 4]
    # beyond int64 ns: every time is below it; beyond decimal's range: refused in a sentence
    assert _rows(table, "Task Start Time<1e30s") == [0, 1, 2, 4, 5, 6]  # 3 has none
    with pytest.raises(ProftuiError, match="out of range"):
        _rows(table, "Task Start Time>1e999999999999999999")


def test_terms_are_anded(table) -> None:
    assert _rows(table, "conv Count=3") == [0, 2]
    assert _rows(table, "/^aten/ Ratio(%) > 10") == [6]
    assert _rows(table, "Count=3 Task Duration>1us !conv") == []


@pytest.mark.parametrize("expression,message", [
    ("Foo>3", 'Unknown column "Foo" (known: Op Name, Task Duration(us), Count,'),
    ("Count>3ms", 'Column "Count" holds no times: compare it without "ms".'),
    ("Count>abc", 'Cannot read "abc" as a number'),
    ("Op Name>3", 'Column "Op Name" holds text: use Op Name~text or Op Name=text.'),
    ("Count~3", 'Column "Count" holds numbers: compare it, e.g. Count>5.'),
    ("Task Duration>5%", 'Column "Task Duration(us)" is not a percentage: drop the "%".'),
    ("/(unclosed/", 'Bad regular expression "/(unclosed/": missing ), unterminated'),
    ("Count>", '"Count>" needs a column and a value on both sides'),
    ('"open', "Cannot read the filter from"),
])
def test_bad_expressions_say_why_in_one_sentence(table, expression, message) -> None:
    with pytest.raises(ProftuiError) as exc:
        filter_mask(table, expression)
    text = str(exc.value)
    assert text.startswith(message) and text.endswith(".") and "\n" not in text


def test_text_columns_are_factorised_once_per_array(table) -> None:
    codes, uniques = factorize(table.columns[0].values)
    assert uniques == ["conv2d", "Relu", "aten::conv", "N/A", "relu", "", "Aten::add"]
    again = factorize(table.columns[0].values)
    assert again[0] is codes
    copy = table.columns[0].values.copy()
    assert factorize(copy)[0] is not codes


# -- totals and cells ---------------------------------------------------------------------------


def test_totals_of_summable_columns_only(table) -> None:
    sums = totals(table)
    assert sums[:4] == [None, pytest.approx(2112.2), 17.0, pytest.approx(100.0)]
    assert sums[4:] == [None, None, None]  # timestamps, ids, averages
    assert totals(table, np.array([0, 1]))[1:4] == [105.5, 4.0, 51.0]


def test_cell_text(table) -> None:
    cols = table.columns
    assert format_cell(cols[0], "conv2d") == "conv2d" and format_cell(cols[0], NAN) == ""
    assert format_cell(cols[1], 2000.0) == "2 ms" and format_cell(cols[1], 0.2) == "200 ns"
    assert format_cell(cols[1], 87139.38) == "87.139 ms" and format_cell(cols[1], NAN) == ""
    assert format_cell(cols[2], 1234567.0) == "1,234,567"
    assert format_cell(cols[3], 4.9) == "4.90%"
    assert format_cell(cols[4], TS + 2) == "1780676244313289.002"
    assert format_cell(cols[4], np.iinfo(np.int64).min) == ""
    assert format_cell(cols[5], 12345.0) == "12345"  # ids without separators
    plain = Column("x", "x", "", "number", np.zeros(0))
    assert format_cell(plain, 12345.678) == "12,345.678" and format_cell(plain, 0.00012) == (
        "0.00012")
    assert format_cell(plain, None) == ""


def test_duration_text_is_the_tui_formatter() -> None:
    from proftui.tui.text.format import fmt_duration

    for ns in [0, 1, 999, 1_000, 1_500, 999_999, 12_345_678, 10**9, 3_600 * 10**9, -2_500]:
        assert duration_text(ns) == fmt_duration(ns)


def test_times_with_units() -> None:
    assert parse_time_ns("12.5ms") == 12_500_000
    assert parse_time_ns("340us") == parse_time_ns("340µs") == 340_000
    assert parse_time_ns("2s") == 2_000_000_000 and parse_time_ns("1500") == 1_500_000
    assert parse_time_ns("7", bare_unit="ns") == 7
    with pytest.raises(ProftuiError, match="percentage"):
        parse_time_ns("5%")
    with pytest.raises(ProftuiError, match="as a number"):
        parse_time_ns("soon")


def test_columns_by_name_or_header(table) -> None:
    assert column_index(table, "ratio(%)") == column_index(table, "Ratio") == 3
    assert column_index(table, "task_duration") == 1
    with pytest.raises(ProftuiError, match='Unknown column "Nope"'):
        column_index(table, "Nope")


def test_default_sorts_of_the_sample_tables() -> None:
    root = SAMPLES / "ascend_cann8"
    paths = {p.name.split("_2026")[0]: p for p in root.rglob("*.csv")}
    expected = {"op_summary": "Task Duration(us)", "op_statistic": "Ratio(%)",
                "aicpu": "Total_time(us)"}
    for kind, header in expected.items():
        t = read_table(str(paths[kind]), kind)
        column, descending = default_sort(t)
        assert (t.columns[column].header, descending) == (header, True)
        order = sort_order(t, column, descending)
        values = t.columns[column].values[order]
        assert (np.diff(values) <= 0).all()
    assert default_sort(read_table(str(paths["step_trace"]), "step_trace")) is None
