"""The panes under the timeline: ops of a window and their instances, summary tables,
iterations; sorting, filtering, jumping to the timeline, layout keys."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rich.color import Color
from textual.widgets import TabbedContent
from tui_support import press_again, press_until, settle

from proftui.core.ops.roles import op_slices
from proftui.core.tables.query import format_cell
from proftui.tui.app import ProftuiApp
from proftui.tui.panes.iterations import BAR_COLUMN, IterationsPane, IterationTable
from proftui.tui.panes.ops import OpsPane
from proftui.tui.panes.tables import TablesPane
from proftui.tui.text.safe import safe
from proftui.tui.widgets.column_chooser import ColumnList
from proftui.tui.widgets.table import TableView, cut
from proftui.tui.widgets.timeline import Timeline

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SAMPLE = SAMPLES / "kineto_demo.pt.trace.json"




def _column(view: TableView, name: str) -> np.ndarray:
    column = view.table.find(name)
    assert column is not None, name
    return column.values


async def test_layout_keys_then_the_ops_pane_aggregates_sorts_filters_and_lists() -> None:
    """One session, two checks in turn: the layout keys (which leave the Ops pane shown and
    the panes 4 lines taller), then the Ops pane's rows, sort, filter and instances."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        await _layout_keys_resize_and_maximise(app, pilot)
        await _ops_pane_aggregates_sorts_filters_and_lists_instances(app, pilot)


async def _ops_pane_aggregates_sorts_filters_and_lists_instances(app, pilot) -> None:
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


async def test_ops_of_the_pinned_tracks_then_the_iterations_pane_marks_and_scopes() -> None:
    """One session, two checks in turn: t scopes the ops to the pinned tracks (and back to
    all of them), then the Iterations pane marks the slowest and scopes the ops."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        await _ops_of_the_pinned_tracks(app, pilot)
        await _iterations_pane_marks_and_scopes_the_ops(app, pilot)


async def _iterations_pane_marks_and_scopes_the_ops(app, pilot) -> None:
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


async def test_ascend_tables_sort_by_the_usual_first_move_and_ops_group_by_type() -> None:
    """One session on an Ascend profile, two checks in turn: the Tables pane's first sort,
    then the Ops pane grouped by type as op_statistic is."""
    app = ProftuiApp(str(SAMPLES / "ascend_cann8"))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        await _tables_pane_sorts_by_the_usual_first_move(app, pilot)
        await _ascend_ops_are_grouped_by_type_like_op_statistic(app, pilot)


async def _tables_pane_sorts_by_the_usual_first_move(app, pilot) -> None:
    await pilot.press("3")
    pane = app.query_one(TablesPane)
    assert pane.tables
    kinds = [t.kind for t in pane.tables]
    await press_until(app, pilot, "right_square_bracket",
                      lambda: pane.tables[pane.current].kind == "op_summary")
    view = pane.table_view()
    column = view.table.find("Task Duration")
    shown = column.values[view.order]
    assert (np.diff(shown[~np.isnan(shown)]) <= 0).all()
    assert "op_statistic" in kinds
    await pilot.press("S")  # sort again by the same column: ascending now
    assert view.sort is not None and view.sort[1] is False


async def _layout_keys_resize_and_maximise(app, pilot) -> None:
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


async def _ascend_ops_are_grouped_by_type_like_op_statistic(app, pilot) -> None:
    await pilot.press("2")
    await settle(app, pilot)
    pane = app.query_one(OpsPane)
    # One default everywhere, as `proftui ops`: by name, and the header says so.
    assert pane.by == "name"
    assert "by name (the default)" in str(app.query_one("#ops-title").render())
    await pilot.press("b", "b")
    await settle(app, pilot)
    assert pane.by == "type"
    assert "by type," in str(app.query_one("#ops-title").render())
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


async def _ops_of_the_pinned_tracks(app, pilot) -> None:
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


@pytest.mark.parametrize("sample", ["torch_npu", "kineto_demo.pt.trace.json"])
async def test_iteration_bars_fit_beside_the_columns_and_follow_the_legend(sample):
    """At 80 and 250 columns (one session, the terminal made wider): every column but the
    bar's reads as it would without a bar; the bar's colours stay inside its column, which
    takes what the others leave (at least a fifth of the pane, 12 to 40 cells); its parts
    appear in the legend's order, numbered and coloured as the legend says, one scale for
    all rows."""
    app = ProftuiApp(str(SAMPLES / sample))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("4", "m")
        await settle(app, pilot)
        _check_iteration_bars(app)
        await pilot.resize_terminal(250, 60)
        await settle(app, pilot)
        assert app.query_one(IterationTable).size.width > 200, "not laid out at 250 columns"
        _check_iteration_bars(app)


def _check_iteration_bars(app) -> None:
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
    lines = [view.render_line(y).text for y in range(1, 3)]
    numbers = [str(k + 1) for k in range(len(view.names))]
    assert all(any(n in line[bar_x:bar_x + bar_w] for n in numbers)
               for line in lines)  # the bars, numbered


async def _op_summary(app, pilot) -> TableView:
    await settle(app, pilot)
    await pilot.press("3")
    pane = app.query_one(TablesPane)
    await press_until(app, pilot, "right_square_bracket",
                      lambda: pane.tables[pane.current].kind == "op_summary")
    await pilot.pause()
    return pane.table_view()


def _headers(view: TableView) -> list[str]:
    return [view.table.columns[i].header for i in view.shown_columns]


async def test_column_chooser_hides_reorders_and_is_remembered(config_dir) -> None:
    """A damaged settings file is ignored with a note (the defaults shown) and rewritten
    when columns are next chosen; the chooser hides and moves columns, and another session
    shows them so."""
    (config_dir / "proftui").mkdir(parents=True)
    (config_dir / "proftui" / "columns.json").write_text('{"tables": [')
    app = ProftuiApp(str(SAMPLES / "ascend_cann8"))
    notes: list[str] = []
    real_notify = app.notify

    def notify(message, **kw):
        notes.append(message)
        return real_notify(message, **kw)

    app.notify = notify  # type: ignore[method-assign]
    async with app.run_test(size=(120, 44)) as pilot:
        view = await _op_summary(app, pilot)
        default = _headers(view)
        assert default[:3] == ["Op Name", "Device_id", "Model ID"]  # the name first
        assert len([n for n in notes if "are damaged" in n]) == 1, notes
        await pilot.press("C")
        await pilot.pause()
        chooser = app.screen.query_one(ColumnList)
        # Hide Device_id (second), then move Task Duration up to second place.
        await pilot.press("down", "space")
        at = default.index("Task Duration(us)")
        await press_again(app, pilot, "down", at - 1)
        await press_again(app, pilot, "shift+up", at - 1)
        assert chooser.order[1] == view.table.columns.index(
            view.table.find("Task Duration"))
        await pilot.press("enter")
        await pilot.pause()
        chosen = _headers(view)
        assert chosen[:2] == ["Op Name", "Task Duration(us)"] and "Device_id" not in chosen
        header = view.render_line(0).text
        assert header.startswith("Op Name") and header.split("│")[1].startswith(
            "Task Duration(us) ▼")
        saved = json.loads((config_dir / "proftui" / "columns.json").read_text())
        assert saved["tables"]["op_summary"]["hidden"] == ["Device_id"]
        # Esc in the chooser changes nothing.
        await pilot.press("C", "space", "escape")
        await pilot.pause()
        assert _headers(view) == chosen
    # Another session with the same settings file: the same columns.
    app = ProftuiApp(str(SAMPLES / "ascend_cann8"))
    async with app.run_test(size=(120, 44)) as pilot:
        view = await _op_summary(app, pilot)
        assert _headers(view) == chosen
        # r in the chooser goes back to the default, and the file forgets the kind.
        await pilot.press("C", "r", "enter")
        await pilot.pause()
        assert _headers(view) == default
        saved = json.loads((config_dir / "proftui" / "columns.json").read_text())
        assert "op_summary" not in saved["tables"]


async def test_ops_columns_share_the_width_and_scroll_to_min_and_max() -> None:
    """At 250 columns all fit; made 80 wide (one session), they scroll."""
    widths = {}
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(250, 60)) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        for size in ((250, 60), (80, 24)):
            await pilot.resize_terminal(*size)
            await settle(app, pilot)
            view = app.query_one("#ops-table", TableView)
            assert view.size.width == size[0], "the table is not as wide as the terminal"
            widths[size[0]] = view._widths[0]
            if size[0] == 250:  # all in view, the longest name whole
                longest = max(len(n) for n in view.table.columns[0].values)
                assert not view.scrolls and view._widths[0] == longest + 1
                continue
            assert view.scrolls and "Max" not in view.render_line(0).text.split()
            # Long names are cut in the middle, to the width of the column.
            name = str(view.table.columns[0].values[view.order[0]])
            assert len(name) >= view._widths[0]
            assert view.render_line(1).text.startswith(
                cut(name, view._widths[0] - 1, middle=True) + "│")
            await press_until(app, pilot, "right",
                              lambda view=view: _headers(view)[view.column] == "Max")
            assert "Max" in view.render_line(0).text.split()
            assert view.render_line(0).text.startswith("Name")
            await pilot.press("S")
            maxima = _column(view, "Max")[view.order]
            assert (np.diff(maxima) <= 0).all()
            assert not (np.diff(_column(view, "Total")[view.order]) <= 0).all()
    assert widths[250] > widths[80]


async def test_ops_by_category_keeps_the_sort_and_v_keeps_the_device_side() -> None:
    """b groups by category (a row each) and keeps the sort by count; then v: the device
    side, kernels only."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 44)) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        view = app.query_one("#ops-table", TableView)
        await press_until(app, pilot, "left", lambda: _headers(view)[view.column] == "Count")
        await pilot.press("S", "S")  # by count, ascending
        assert view.sort == (view.table.columns.index(view.table.find("Count")), False)
        await pilot.press("b")
        await settle(app, pilot)
        assert app.query_one(OpsPane).by == "category"
        assert view.table.columns[view.sort[0]].header == "Count" and view.sort[1] is False
        counts = _column(view, "Count")[view.order]
        assert len(counts) > 1 and (np.diff(counts) >= 0).all()
        assert _headers(view)[view.column] == "Count"
        cats = app.index.arrays["slices.cat"][op_slices(app.index)]
        assert view.table.n_rows == len(np.unique(cats)), "a row per category"
        await pilot.press("v")
        await settle(app, pilot)
        assert app.query_one(OpsPane).side == "device"
        cats = {app.index.strings[int(i)] for i in _column(view, "name_id")}
        assert "kernel" in cats and "cpu_op" not in cats


async def test_table_tabs_carry_their_rank(tmp_path) -> None:
    header = "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us)," \
             "Ratio(%)\n"
    for rank in (0, 1):
        folder = tmp_path / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        folder.mkdir(parents=True)
        (folder / "op_statistic.csv").write_text(
            header + f"MatMul,AI_CORE,{rank + 1},30.0,5.0,10.0,15.0,100.0\n")
    app = ProftuiApp(str(tmp_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        title = str(app.query_one("#tables-title").render())
        assert title.startswith("[op_statistic rank0_ascend_pt] 1/2")
        assert "next: op_statistic rank1_ascend_pt" in title
        await pilot.press("right_square_bracket")
        title = str(app.query_one("#tables-title").render())
        assert title.startswith("[op_statistic rank1_ascend_pt] 2/2")
        assert "next: op_statistic rank0_ascend_pt" in title


async def test_iterations_pane_starts_from_the_capture_start_as_the_command_does(
        tmp_path, capsys) -> None:
    """The pane and `proftui iterations` count from one zero, the capture start (the
    earliest event, 25 µs before the first step), and their header says so and in ms."""
    from tui_support import run_cli

    def x(name, cat, pid, tid, ts, dur):
        return {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts,
                "dur": dur}

    path = tmp_path / "late.json"
    path.write_text(json.dumps({"traceEvents": [
        x("kernel", "kernel", 0, 7, 100, 5), x("ProfilerStep#1", "user_annotation", 1, 1, 125, 40),
        x("conv", "cpu_op", 1, 1, 130, 10), x("ProfilerStep#2", "user_annotation", 1, 1, 165.5, 60),
    ]}))
    status, out, _ = run_cli(capsys, "iterations", str(path))
    assert status == 0
    cli = {line.split()[0]: line.split()[1] for line in out.splitlines()[2:]}
    assert cli == {"1": "0.025", "2": "0.066"}
    app = ProftuiApp(str(path))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        view = app.query_one("#iterations-table", TableView)
        lines = [view.render_line(y).text for y in range(3)]
        assert "Start (ms, capture)" in lines[0]
        assert "Start (us, profiler clock)" in " ".join(
            view.table.columns[i].header for i in view.shown_columns)
        shown = {line.split("│")[0].strip(): line.split("│")[1].split()[0] for line in lines[1:]}
        assert shown == cli
        assert view.table.find("Start from capture").values.tolist() == [0.025, 0.0655]
        # The details of step 2 count from the same zero, and say so.
        step = next(i for i in range(app.index.n_slices)
                    if app.index.slice_name(i) == "ProfilerStep#2")
        app.query_one(Timeline).select(step)
        await settle(app, pilot)
        details = str(app.query_one("#details").render())
        assert "start  65.5 us from the capture start (165500 ns, profiler clock)" in details


async def test_counts_of_one_are_said_in_the_singular(tmp_path) -> None:
    """One step: "1 iteration" in the Iterations pane's title and "1 row" in its totals
    line."""
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
        {"ph": "X", "name": "conv", "pid": 1, "tid": 1, "ts": 5, "dur": 10}]}))
    app = ProftuiApp(str(path))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        title = str(app.query_one("#iterations-title").render())
        assert title.startswith("1 iteration from ProfilerStep#N annotations")
        view = app.query_one("#iterations-table", TableView)
        totals = view.render_line(view.size.height - 1).text
        assert totals.lstrip().startswith("1 row│"), totals
