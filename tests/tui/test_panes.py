"""The panes under the timeline: ops of a window and their instances, summary tables,
iterations; sorting, filtering, jumping to the timeline, layout keys."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rich.color import Color
from textual.widgets import TabbedContent
from tui_support import settle

from proftui.core.roles import op_slices
from proftui.core.table_query import format_cell
from proftui.tui.app import ProftuiApp
from proftui.tui.panes import BAR_COLUMN, IterationsPane, IterationTable, OpsPane, TablesPane
from proftui.tui.safe import safe
from proftui.tui.table import TableView
from proftui.tui.timeline import Timeline

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SAMPLE = SAMPLES / "kineto_demo.pt.trace.json"




def _column(view: TableView, name: str) -> np.ndarray:
    column = view.table.find(name)
    assert column is not None, name
    return column.values


async def test_ops_pane_aggregates_sorts_filters_and_lists_instances() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        assert app.query_one(TabbedContent).active == "pane-ops"
        view = app.query_one("#ops-table", TableView)
        index = app.index
        # Every operator name once: the ProfilerStep#N markers are not operators.
        names = index.arrays["slices.name"][op_slices(index)]
        assert view.table.n_rows == len(np.unique(names)) < len(
            np.unique(index.arrays["slices.name"]))
        # Sorted by total time, longest first; the first row's numbers by hand.
        totals = _column(view, "Total")[view.order]
        assert (np.diff(totals) <= 0).all()
        top = int(_column(view, "name_id")[view.order[0]])
        durations = index.arrays["slices.dur"][op_slices(index)][names == top]
        assert totals[0] == durations.sum()
        assert _column(view, "Count")[view.order[0]] == len(durations)
        # Filter, then sort by the current column the other way.
        await pilot.press("slash", *"Count>=16", "enter")
        counts = _column(view, "Count")[view.order]
        assert len(counts) and (counts >= 16).all()
        assert len(view.order) == int((np.bincount(names) >= 16).sum())
        # Enter: the instances of the op under the cursor, by start.
        op = int(_column(view, "name_id")[view.order[0]])
        await pilot.press("enter")
        instances = app.query_one("#ops-instances", TableView)
        assert instances.display and not view.display
        slices = _column(instances, "Slice").astype(np.int64)
        assert sorted(slices.tolist()) == op_slices(index)[names == op].tolist()
        await pilot.press("down", "down", "enter")
        chosen = int(_column(instances, "Slice")[instances.order[2]])
        assert app.query_one(Timeline).selected == chosen
        await pilot.press("escape")
        assert view.display and not instances.display
        assert view.filter_text == "Count>=16"  # the table's state is kept


async def test_ops_by_category_and_device_side() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        pane = app.query_one(OpsPane)
        await pilot.press("b")
        await settle(app, pilot)
        view = app.query_one("#ops-table", TableView)
        assert pane.by == "category"
        cats = app.index.arrays["slices.cat"][op_slices(app.index)]
        assert view.table.n_rows == len(np.unique(cats))
        await pilot.press("v")
        await settle(app, pilot)
        assert pane.side == "device"
        cats = {app.index.strings[int(i)] for i in _column(view, "name_id")}
        assert "kernel" in cats and "cpu_op" not in cats


async def test_iterations_pane_marks_and_scopes_the_ops() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        view = app.query_one("#iterations-table", TableView)
        assert view.table.n_rows == 8
        marks = _column(view, "Mark")
        numbers = _column(view, "Iteration")
        durations = _column(view, "Duration")
        slowest = int(numbers[int(np.nanargmax(durations))])
        assert "slowest" in marks[list(numbers).index(slowest)]
        # Choose iteration 6: the timeline zooms to it and the ops describe it.
        row = list(view.order).index(list(numbers).index(6))
        for _ in range(row):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(app, pilot)
        step = next(it for it in app.iterations if it.number == 6)
        timeline = app.query_one(Timeline)
        assert timeline.view_start <= step.start_ns and timeline.view_end >= step.end_ns
        assert app.query_one(OpsPane).window.label == "iteration 6"
        assert "[ops: iteration 6]" in str(app.query_one("#status").render())
        await pilot.press("2")
        await settle(app, pilot)
        ops = app.query_one("#ops-table", TableView)
        total = _column(ops, "Total")
        assert total.max() <= step.dur_ns * 4  # clipped to the iteration's window


async def test_tables_pane_sorts_by_the_usual_first_move() -> None:
    app = ProftuiApp(str(SAMPLES / "ascend_cann8"))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        pane = app.query_one(TablesPane)
        assert pane.tables
        kinds = [t.kind for t in pane.tables]
        while pane.tables[pane.current].kind != "op_summary":
            await pilot.press("right_square_bracket")
        view = pane.table_view()
        column = view.table.find("Task Duration")
        shown = column.values[view.order]
        assert (np.diff(shown[~np.isnan(shown)]) <= 0).all()
        assert "op_statistic" in kinds
        await pilot.press("s")  # sort again by the same column: ascending now
        assert view.sort is not None and view.sort[1] is False


async def test_layout_keys_resize_and_maximise() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        panes = app.query_one("#panes")
        height = panes.size.height
        await pilot.press("plus", "plus")
        await pilot.pause()
        assert panes.size.height == height + 4
        await pilot.press("2")
        await settle(app, pilot)
        await pilot.press("m")
        await pilot.pause()
        assert not app.query_one("#main").display and panes.has_class("maximised")
        await pilot.press("m")
        await pilot.pause()
        assert app.query_one("#main").display and not panes.has_class("maximised")
        assert app.query_one(IterationsPane).iterations


async def test_ascend_ops_are_grouped_by_type_like_op_statistic() -> None:
    app = ProftuiApp(str(SAMPLES / "ascend_cann8"))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        pane = app.query_one(OpsPane)
        assert pane.by == "type"
        await pilot.press("v")  # device tracks
        await settle(app, pilot)
        view = app.query_one("#ops-table", TableView)
        top = view.order[0]
        assert view.table.columns[0].values[top] == "DropOutDoMask"  # the AI CPU op dominates
        assert _column(view, "Count")[top] == 12
        await pilot.press("enter")
        instances = app.query_one("#ops-instances", TableView)
        assert instances.table.n_rows == 12
        assert "DropOutDoMask: 12 instances" in str(app.query_one("#ops-histogram").render())


async def test_ops_of_the_pinned_tracks() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        timeline = app.query_one(Timeline)
        await pilot.press("2", "t")
        assert "No track is pinned" in str(app.query_one("#status").render())
        nccl = next(n for n, line in enumerate(timeline.lines)
                    if line.label.startswith("stream 13"))
        timeline.focus_line = nccl
        timeline.action_toggle_pin()
        await pilot.press("2", "t")
        await settle(app, pilot)
        view = app.query_one("#ops-table", TableView)
        names = list(view.table.columns[0].values)
        assert names and all(name.startswith("nccl") for name in names)
        await pilot.press("t")  # all tracks again
        await settle(app, pilot)
        assert view.table.n_rows > len(names)


async def test_iterations_known_only_by_their_parts_draw_without_failing(tmp_path) -> None:
    # A torch_npu step_trace_time.csv alone: parts, no window, no length.
    (tmp_path / "step_trace_time.csv").write_text(
        "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n"
        "2,75174.5,146614.0,0,146614.0,69910.0\n3,70000.0,100000.0,0,100000.0,50000.0\n")
    app = ProftuiApp(str(tmp_path))
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await pilot.pause()
        view = app.query_one("#iterations-table", TableView)
        assert view.table.n_rows == 2
        # Stacked: computing, communication(not overlapped), free; not Communication
        assert view.names == ["computing", "communication(not overlapped)", "free"]
        for y in (1, 2):
            assert [number for number, _, _ in _bar_cells(view, y)] == [1, 2, 3]


def _bar_cells(view: IterationTable, y: int) -> list[tuple[int | None, int, int]]:
    """The bar's segments on line `y`: (the number in its first cell or None, first x, end x),
    found by their colours (those of the legend's parts)."""
    colours = {Color.parse(view._colour(k, name)): k + 1 for k, name in enumerate(view.names)}
    out, x = [], 0
    for segment in view.render_line(y):
        bg = segment.style.bgcolor if segment.style else None
        if bg in colours:
            first = segment.text[:1]
            number = int(first) if first.isdigit() else None
            assert number in (None, colours[bg])  # the number is its colour's in the legend
            out.append((colours[bg], x, x + len(segment.text)))
        x += len(segment.text)
    return out


@pytest.mark.parametrize("size", [(80, 24), (250, 60)])
@pytest.mark.parametrize("sample", ["torch_npu", "kineto_demo.pt.trace.json"])
async def test_iteration_bars_fit_beside_the_columns_and_follow_the_legend(size, sample):
    """At 80 and 250 columns: every column but the bar's reads as it would without a bar;
    the bar's colours stay inside its column, which takes what the others leave (at least a
    fifth of the pane, 12 to 40 cells); its parts appear in the legend's order, numbered and
    coloured as the legend says, one scale for all rows."""
    app = ProftuiApp(str(SAMPLES / sample))
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("4", "m")
        await settle(app, pilot)
        view = app.query_one(IterationTable)
        assert view.names[:2] == ["Prepare", "Compute"] and view.names[-1] == "other"
        table, width = view.table, view.size.width
        x, cells = 0, []
        for n, i in enumerate(view.shown_columns):
            cells.append((x, view._widths[n], table.columns[i]))
            x += view._widths[n]
        (bar_x, bar_w), = [(x, w) for x, w, c in cells if c.name == BAR_COLUMN]
        assert bar_w == max(width - (x - bar_w), min(max(width // 5, 12), 40, width - bar_x))
        assert bar_x + bar_w <= width
        legend = view.legend().plain
        at = [legend.index(f" {k + 1}  {name}") for k, name in enumerate(view.names)]
        assert at == sorted(at)
        title = str(app.query_one("#iterations-title").render())
        assert legend.split("  ")[0] in title
        longest = max(b.total_ns for b in view.bars if b is not None)
        for y in range(1, min(len(view.order), view.size.height - 2) + 1):
            row = int(view.order[view.top + y - 1])
            line = view.render_line(y).text
            for x, w, column in cells:
                if column.name == BAR_COLUMN or x >= width:
                    continue
                text = safe(format_cell(column, column.values[row]))
                text = text if len(text) <= w - 1 else text[:w - 2] + "…"
                text = text.rjust(w - 1) if column.kind != "text" else text.ljust(w - 1)
                assert line[x:x + w - 1] == text[:width - x], (column.name, line)
            segments = _bar_cells(view, y)
            assert segments and all(bar_x <= a < b <= bar_x + bar_w - 1 for _, a, b in segments)
            numbers = [k for k, _, _ in segments]
            assert numbers == sorted(numbers)  # in the legend's order, left to right
            names = [name for name, _ in view.bars[row].parts]
            assert [view.names[k - 1] for k in numbers] == [
                n for n in names if view.names.index(n) + 1 in numbers]
            # one scale: the bar's cells stand for the row's parts over the longest row's
            drawn = segments[-1][2] - bar_x
            assert drawn == round(view.bars[row].total_ns / longest * (bar_w - 1))
