""""View as a command": the command built from a pane's state prints the pane's numbers."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.analysis.overview import read_overview
from proftui.core.ops.aggregate import aggregate_ops
from proftui.core.ops.grouping import op_types
from proftui.core.ops.iterations import Iteration
from proftui.core.tables.query import parse_time_ns, sort_order
from proftui.tui.app.as_command import exact_time, ops_command, window_args
from proftui.tui.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SAMPLE = SAMPLES / "kineto_demo.pt.trace.json"


@pytest.mark.parametrize("ns", [0, 1, 999, 1000, 1_234_567, 2_000_000_000, 12_345_678_901,
                                86_399_999_999_999])
def test_exact_time_parses_back_to_the_same_ns(ns: int) -> None:
    assert parse_time_ns(exact_time(ns)) == ns


def test_a_window_is_an_iteration_only_where_that_is_the_same_window() -> None:
    its = [Iteration("rank 0", 1, 100, 150), Iteration("rank 1", 1, 110, 170),
           Iteration("rank 0", 2, 150, 200), Iteration("rank 1", 2, 170, 220),
           Iteration("rank 0", 3, -1, -1, length_ns=40)]
    both = {"rank 0": (100, 150), "rank 1": (110, 170)}
    assert window_args(0, 1000, its, 100, 170, both) == (["--iteration", "1"], [])
    # one rank's step: no command says that; the range and a note
    args, notes = window_args(0, 1000, its, 100, 150, {"rank 0": (100, 150)})
    assert args == ["--range", "100ns:150ns"] and "rank 0" in notes[0]
    assert window_args(10, 1000, its, 5, 2000, None) == ([], [])  # clamped: the whole trace
    assert window_args(10, 1000, its, 5, 510, None) == (["--range", ":500ns"], [])
    assert exact_time(1_500_000) == "1.5ms" and exact_time(12_000_000_345) == "12.000000345s"
    assert window_args(10, 1000, its, None, None, None) == ([], [])


def _pane_rows(index, tables, iterations, start, end, groups, by, side, sort=None):
    """The ops pane's rows as it computes them (tui/panes.py OpsPane.recompute)."""
    types = op_types(index, tables) if by == "type" else None
    table = aggregate_ops(index, start_ns=start, end_ns=end, by=by, side=side, types=types,
                          tables=tables, groups=groups)
    order = list(range(table.n_rows))
    if sort is not None:
        c = [col.name for col in table.columns].index(sort)
        order = sort_order(table, c, table.columns[c].kind != "text").tolist()
    names = table.columns[0].values
    return [(str(names[r]), int(table.find("Count").values[r]),
             int(table.find("Total").values[r])) for r in order]


def _cli_rows(line: str, capsys) -> list[tuple[str, int, int]]:
    words = shlex.split(line)
    assert words[:2] == ["proftui", "ops"]
    capsys.readouterr()
    assert main(words[1:] + ["--json", "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    first = next(iter(out["rows"][0])) if out["rows"] else ""
    return [(str(row[first]), row["count"], row["total_ns"]) for row in out["rows"]]


@pytest.mark.parametrize("window,by,side,sort", [
    ("whole", "name", "all", None),
    ("iteration", "category", "device", None),
    ("range", "name", "host", "Count"),
    ("range", "type", "all", None),
])
def test_the_command_prints_the_panes_numbers(window, by, side, sort, capsys) -> None:
    index = load_trace(str(SAMPLE), use_cache=False)
    _, tables, iterations = read_overview(index)
    items = iterations.items
    start = end = None
    if window == "iteration":
        it = items[2]
        start, end = it.start_ns, it.end_ns
    elif window == "range":  # odd nanoseconds, as a mouse selection gives
        span = index.end_ns - index.start_ns
        start, end = index.start_ns + span // 3 + 7, index.start_ns + 2 * span // 3 + 3
    command = ops_command(str(SAMPLE), None, index.start_ns, index.end_ns, items, start, end,
                          None, by, side, None if sort is None else (sort, True, True), 60)
    assert command.notes == ()
    if window == "iteration":
        assert f"--iteration {items[2].number} " in command.line
    pane = _pane_rows(index, tables, items, start, end, None, by, side, sort)
    assert pane and _cli_rows(command.line, capsys) == pane


def test_the_path_is_shell_quoted() -> None:
    line = ops_command("my trace's dir/x.json", 2, 0, 10, [], None, None, None, "name",
                       "all").line
    assert shlex.split(line)[:5] == ["proftui", "ops", "my trace's dir/x.json", "--run", "2"]
