"""The timeline screen driven by keys and the mouse: window, selection, search, iterations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from proftui.core.query.slice_info import row_of
from proftui.themes import RESERVED_COLOURS, THEMES
from proftui.tui.app import ProftuiApp
from proftui.tui.widgets.lines import COUNTER, PROCESS, SLICES
from proftui.tui.widgets.render import FULL, cell_classes
from proftui.tui.widgets.timeline import ZOOM_STEP, Timeline
from proftui.tui.widgets.timeline_painter import BodiesFrame, UtilStrips

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SAMPLE = SAMPLES / "kineto_demo.pt.trace.json"


async def _open(pilot, app):
    await app.workers.wait_for_complete()
    await app.workers.wait_for_complete()  # the utilisation, started as the load ends
    await pilot.pause()
    return app.query_one(Timeline)


def _names(app, slices) -> list[str]:
    return [app.index.slice_name(int(i)) for i in slices]


async def test_opens_on_the_whole_trace_and_zooms_around_the_cursor() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        index = app.index
        assert timeline.view_start <= index.start_ns and timeline.view_end >= index.end_ns
        width0 = timeline.view_end - timeline.view_start
        cursor = timeline.cursor_ns
        await pilot.press("w")
        width1 = timeline.view_end - timeline.view_start
        assert width1 == pytest.approx(width0 / ZOOM_STEP, rel=1e-6)
        # The cursor keeps its place in the window (zoom around the cursor).
        before = (cursor - timeline.view_start) / width1
        assert before == pytest.approx(0.5, abs=0.02)
        await pilot.press("s", "s")
        assert timeline.view_end - timeline.view_start == pytest.approx(width0 * ZOOM_STEP,
                                                                        rel=1e-6)
        start = timeline.view_start
        await pilot.press("d")
        assert timeline.view_start > start
        await pilot.press("a", "a")
        assert timeline.view_start < start
        await pilot.press("0")
        assert (timeline.view_end - timeline.view_start) == width0


async def test_arrows_walk_slices_and_rows() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        assert timeline.selected == -1
        await pilot.press("enter")
        first = timeline.selected
        assert first >= 0
        assert app.index.slice_name(first).startswith("ProfilerStep#")
        start = app.index.arrays["slices.start"]
        await pilot.press("right")
        second = timeline.selected
        assert row_of(app.rows, app.index, second) == row_of(app.rows, app.index, first)
        assert start[second] > start[first]
        await pilot.press("left")
        assert timeline.selected == first
        # Down: the slice one row deeper at the cursor's time, inside the step.
        await pilot.press("down")
        child = timeline.selected
        assert int(app.index.arrays["slices.depth"][child]) == 1
        assert start[first] <= start[child] < start[first] + app.index.arrays["slices.dur"][first]
        details = str(app.query_one("#details").render())
        assert app.index.slice_name(child) in details and "parents ProfilerStep#" in details
        await pilot.press("f")
        dur = int(app.index.arrays["slices.dur"][child])
        assert timeline.view_start <= start[child] and timeline.view_end >= start[child] + dur
        assert timeline.view_end - timeline.view_start < 1.5 * dur
        await pilot.press("escape")
        assert timeline.selected == -1
        assert "Nothing selected" in str(app.query_one("#details").render())


async def test_details_read_args_lazily_and_flows_jump() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        names = app.index.arrays["slices.name"]
        launch = int(np.flatnonzero(names == app.index.strings.find("cudaLaunchKernel"))[0])
        timeline.select(launch)
        await app.workers.wait_for_complete()
        await pilot.pause()
        details = str(app.query_one("#details").render())
        assert '"correlation":' in details and "flows  out 1" in details
        partner = int(app.index.arrays["flows.dst_slice"][
            app.index.arrays["flows.src_slice"] == launch][0])
        marks = timeline.state.marks
        assert marks is not None and marks[partner]  # drawn underlined
        assert marks.sum() == 1
        await pilot.press("greater_than_sign")
        kernel = timeline.selected
        assert kernel == partner
        track = int(app.index.arrays["slices.track"][kernel])
        assert app.index.track_label(track).startswith("stream")
        await pilot.press("less_than_sign")
        assert timeline.selected == launch


async def test_search_counts_and_steps_through_matches() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        await pilot.press("slash")
        await pilot.press(*"NCCL", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        expected = sum(1 for n in range(app.index.n_slices)
                       if "nccl" in app.index.slice_name(n).lower())
        assert expected > 0 and app.match_count == expected
        assert "nccl" in app.index.slice_name(timeline.selected).lower()
        seen = [timeline.selected]
        for _ in range(expected):
            await pilot.press("n")
            seen.append(timeline.selected)
        assert len(set(seen)) == expected and seen[-1] == seen[0]  # wraps around
        # In time order from the cursor on, wrapping once at the end.
        starts = app.index.arrays["slices.start"][seen[:expected]]
        assert (np.diff(starts) < 0).sum() <= 1
        await pilot.press("N")
        assert timeline.selected == seen[-2]
        # A regular expression between slashes; a bad one is a readable message.
        await pilot.press("slash", *"/^aten::(relu_|linear)$/", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.match_count == 16
        await pilot.press("slash", *"/([/", "enter")
        assert "not a valid regular expression" in str(app.query_one("#status").render())


async def test_goto_iteration_zooms_to_its_window() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        step = next(it for it in app.summary["iterations"]["items"] if it["number"] == 6)
        await pilot.press("g", "6", "enter")
        assert timeline.view_start <= step["start_ns"] < timeline.view_start + step["dur_ns"]
        assert timeline.view_end >= step["start_ns"] + step["dur_ns"]
        assert timeline.view_end - timeline.view_start < 1.1 * step["dur_ns"]
        assert "iteration 6" in str(app.query_one("#status").render())
        await pilot.press("g", *"99", "enter")
        assert "No iteration 99" in str(app.query_one("#status").render())
        # The ruler marks iteration starts.
        ruler = timeline.render_line(1).text
        assert "┃#6" in ruler


async def test_collapse_pin_hide() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        n_lines = len(timeline.lines)
        timeline.focus_line = 0
        assert timeline.lines[0].kind == PROCESS
        await pilot.press("c")
        assert len(timeline.lines) < n_lines
        assert [line.kind for line in timeline.lines].count(PROCESS) == 2
        await pilot.press("c")
        assert len(timeline.lines) == n_lines
        gpu = next(n for n, line in enumerate(timeline.lines)
                   if line.kind == SLICES and line.label.startswith("stream 13"))
        track = timeline.lines[gpu].track
        timeline.focus_line = gpu
        await pilot.press("p")
        assert timeline.lines[0].track == track
        timeline.focus_line = 0
        await pilot.press("h")
        assert all(line.track != track for line in timeline.lines)
        await pilot.press("H")
        assert any(line.track == track for line in timeline.lines)


async def test_mouse_click_selects_and_wheel_zooms() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        line = next(n for n, line in enumerate(timeline.lines) if line.kind == SLICES)
        y = line - timeline.top_line + timeline.body_top  # under the utilisation lines
        x = timeline.gutter_width + timeline.cells // 2
        await pilot.click(Timeline, offset=(x, y))
        owner = timeline.painter.owner_at(line, x - timeline.gutter_width)
        assert owner >= 0 and timeline.selected == owner
        for _ in range(3):  # zoomed in: the whole trace in view cannot pan
            timeline.action_zoom_in()
        width = timeline.view_end - timeline.view_start
        start = timeline.view_start
        # Dragging 10 cells to the left pans 10 cells to the right (the pilot has no drag and
        # no wheel: post the events).
        from textual.events import MouseMove, MouseScrollUp

        await pilot.mouse_down(Timeline, offset=(x, y))
        timeline.post_message(MouseMove(timeline, x - 10, y, 0, 0, 1, False, False, False))
        await pilot.pause()
        await pilot.mouse_up(Timeline, offset=(x - 10, y))
        assert timeline.view_end - timeline.view_start == width
        assert timeline.view_start - start == pytest.approx(10 * width / timeline.cells, rel=0.01)
        timeline.post_message(MouseScrollUp(timeline, x, y, 0, 0, 0, False, False, False))
        await pilot.pause()
        assert timeline.view_end - timeline.view_start < width
        # With shift, the wheel scrolls the lines instead.
        from textual.events import MouseScrollDown

        width = timeline.view_end - timeline.view_start
        timeline.post_message(MouseScrollDown(timeline, x, y, 0, 0, 0, True, False, False))
        await pilot.pause()
        assert timeline.top_line == 3 and timeline.view_end - timeline.view_start == width


async def test_small_terminal_and_themes() -> None:
    app = ProftuiApp(str(SAMPLE), theme="proftui-light")
    async with app.run_test(size=(80, 24)) as pilot:
        timeline = await _open(pilot, app)
        assert timeline.size.height >= 10 and timeline.cells >= 50
        assert timeline.palette is THEMES["proftui-light"][1]
        from proftui.tui.panes.iterations import IterationTable

        # mounted after the first frame, in the theme's colours all the same
        assert app.query_one(IterationTable).palette is THEMES["proftui-light"][1]
        await pilot.press("T")
        assert app.theme == "proftui-contrast"
        assert timeline.palette is THEMES["proftui-contrast"][1]
        assert app.query_one(IterationTable).palette is THEMES["proftui-contrast"][1]
        await pilot.press("question_mark")
        assert "zoom in / out around the cursor" in app.screen.text  # the help
        await pilot.press("escape")
        assert app.screen.query(Timeline)


async def test_no_color_is_respected(monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, app)
        assert app.no_color
        assert any(type(f).__name__ in ("Monochrome", "NoColor") for f in app._filters)


async def test_hostile_names_are_escaped(tmp_path) -> None:
    path = tmp_path / "evil.json"
    path.write_text(json.dumps([
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1,
         "args": {"name": "\x1b]0;pwned\x07thread"}},
        {"ph": "X", "name": "\x1b[2J\x1b[31mclear", "cat": "\x9b1m", "pid": 1, "tid": 1,
         "ts": 0, "dur": 100, "args": {"k": "\x1b[5m"}}]))
    app = ProftuiApp(str(path))
    async with app.run_test(size=(100, 30)) as pilot:
        timeline = await _open(pilot, app)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        painted = "".join(timeline.render_line(y).text for y in range(6))
        details = str(app.query_one("#details").render())
        for text in (painted, details):
            assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
        assert "\\x1b[2J" in details and "\\x1b]0;pwned" in painted


async def test_command_palette_lists_the_timeline_actions() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(100, 30)) as pilot:
        await _open(pilot, app)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Zoom in", "Zoom out", "Fit selection", "Search", "Go to iteration",
                "Next theme", "Diagnostics"} <= titles


async def test_profile_without_timeline_shows_its_tables(tmp_path) -> None:
    table = SAMPLES / "torch_npu"
    csv = next(table.rglob("op_statistic*.csv"))
    (tmp_path / "op_statistic.csv").write_bytes(csv.read_bytes())
    app = ProftuiApp(str(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        timeline = await _open(pilot, app)
        assert app.error is None and not timeline.display
        assert app.query_one("#overview").has_class("shown")
        assert "No timeline in this profile; 1 summary table;" in str(
            app.query_one("#status").render())
        await pilot.press("w", "slash", "escape", "g")  # nothing to act on: no harm done
        assert "no iterations" in str(app.query_one("#status").render())


async def test_range_selection_keys_mouse_and_ops_following() -> None:
    from proftui.tui.panes.ops import OpsPane

    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        await pilot.press("enter")  # a ProfilerStep slice
        step = timeline.selected
        start = int(app.index.arrays["slices.start"][step])
        end = start + int(app.index.arrays["slices.dur"][step])
        await pilot.press("r")
        assert timeline.range == (start, end)
        ops = app.query_one(OpsPane)
        assert (ops.window.start_ns, ops.window.end_ns) == (start, end)
        assert "[ops: range" in str(app.query_one("#status").render())
        # The range is drawn on the ruler with its length, and behind idle cells.
        assert "[2." in timeline.render_line(0).text
        # Esc clears the slice first, then the range; f fits the range.
        await pilot.press("escape")
        assert timeline.selected == -1 and timeline.range == (start, end)
        await pilot.press("f")
        assert timeline.view_start < start and timeline.view_end > end
        assert timeline.view_end - timeline.view_start < 1.2 * (end - start)
        await pilot.press("escape")
        assert timeline.range is None and ops.window.label == "whole trace"
        # [ and ] set the bounds at the cursor.
        timeline.cursor_ns = start
        await pilot.press("left_square_bracket")
        timeline.cursor_ns = end
        await pilot.press("right_square_bracket")
        assert timeline.range == (start, end)
        # Shift-drag selects a range instead of panning.
        from textual.events import MouseDown, MouseMove, MouseUp

        view = (timeline.view_start, timeline.view_end)
        x0, y = timeline.gutter_width + 10, 3
        timeline.post_message(MouseDown(timeline, x0, y, 0, 0, 1, True, False, False))
        timeline.post_message(MouseMove(timeline, x0 + 20, y, 0, 0, 1, True, False, False))
        timeline.post_message(MouseUp(timeline, x0 + 20, y, 0, 0, 1, True, False, False))
        await pilot.pause()
        assert (timeline.view_start, timeline.view_end) == view
        lo, hi = timeline.range
        assert lo == timeline.time_at(10) and hi == timeline.time_at(30)


async def test_panning_stops_a_tenth_of_the_window_past_the_trace() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        index = app.index
        for _ in range(40):  # zoomed out, the whole trace stays in view whatever the pan
            timeline.action_pan_left()
        assert timeline.view_start <= index.start_ns and timeline.view_end >= index.end_ns
        for _ in range(4):
            timeline.action_zoom_in()
        width = timeline.view_end - timeline.view_start
        for _ in range(40):
            timeline.action_pan_left()
        assert timeline.view_start == index.start_ns - width // 10
        for _ in range(80):
            timeline.action_pan_right()
        assert timeline.view_end == index.end_ns + width // 10


async def test_go_to_an_iteration_puts_the_cursor_at_its_start() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        await pilot.press("g", "3", "enter")
        it = next(it for it in app.iterations if it.number == 3)
        assert timeline.cursor_ns == it.start_ns
        assert timeline.view_start <= timeline.cursor_ns < timeline.view_end


async def test_pinning_a_track_moves_the_cursor_with_it() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        last = max(n for n, line in enumerate(timeline.lines) if line.kind == SLICES)
        timeline.focus_line = last
        track = timeline.lines[last].track
        await pilot.press("p")
        assert timeline.layout_state.pinned == [track]
        assert timeline.lines[timeline.focus_line].track == track
        assert timeline.focus_line == timeline.lines.find(track=track) < last


async def test_hidden_tracks_are_counted_where_they_were_and_on_the_status_line(
        tmp_path) -> None:
    """h hides a track: its process's header counts it; hiding the only thread of a process
    hides the process, and the status line, which begins with how many are hidden (whatever
    the width), says so. H shows them all and the counts go."""
    events = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "trainer"}},
        {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "loader"}},
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "X", "name": "b", "pid": 1, "tid": 2, "ts": 0, "dur": 10},
        {"ph": "X", "name": "c", "pid": 2, "tid": 3, "ts": 0, "dur": 10},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    app = ProftuiApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        timeline = await _open(pilot, app)

        def status() -> str:
            return str(app.query_one("#status").render())

        def headers() -> list[str]:
            return [timeline.painter.gutter(n).text.strip()
                    for n, line in enumerate(timeline.lines) if line.kind == PROCESS]

        assert not any("hidden" in h for h in headers()) and "hidden" not in status()
        timeline.focus_line = next(n for n, line in enumerate(timeline.lines)
                                   if line.label.startswith("Thread 2"))
        await pilot.press("h")
        await pilot.pause()
        assert status().startswith("[1 hidden: H shows] Hid Thread 2")
        assert any(h.startswith("▼ trainer") and h.endswith("+1 hidden") for h in headers())
        timeline.focus_line = next(n for n, line in enumerate(timeline.lines)
                                   if line.label.startswith("Thread 3"))
        await pilot.press("h")
        await pilot.pause()
        assert status().startswith("[2 hidden: H shows] Hid Thread 3")
        assert "the process is hidden too" in status()
        assert not any("loader" in h for h in headers())
        await pilot.press("right")  # other keys leave the count on the status line
        await pilot.pause()
        assert status().startswith("[2 hidden: H shows]")
        # Selecting a slice of a hidden track (a search, a jump) shows the track: one less.
        timeline.select(next(i for i in range(app.index.n_slices)
                             if app.index.slice_name(i) == "b"))
        await pilot.pause()
        assert status().startswith("[1 hidden: H shows]")
        await pilot.press("H")
        await pilot.pause()
        assert status().startswith("Every hidden track is shown again.")
        assert not any("hidden" in h for h in headers())
        assert len([h for h in headers() if "loader" in h]) == 1


async def test_process_headers_keep_their_name_at_80_columns() -> None:
    """A header too long for the gutter leaves out its pid, then its labels, not its name."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(80, 24)) as pilot:
        timeline = await _open(pilot, app)
        headers = [timeline.painter.gutter(n).text.rstrip() for n, line in enumerate(timeline.lines)
                   if line.kind == PROCESS]
        assert sorted(headers) == ["▼ python [CPU]", "▼ python [GPU 0]"]
        assert app.index.process_label(0) == "python (41207) [CPU]"  # whole where it fits
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        assert "▼ python (41207) [CPU]" in [timeline.painter.gutter(n).text.rstrip()
                                            for n in range(len(timeline.lines))]


async def test_a_pinned_track_names_its_rank_and_process(tmp_path) -> None:
    """Pinned above every process, a track's label says which rank (and process) it is of,
    giving up the process before the rank where the gutter is narrow."""
    from cluster_inputs import rank_folders

    app = ProftuiApp(rank_folders(tmp_path, [[110], [160]]))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        stream = next(n for n, line in enumerate(timeline.lines) if line.label == "Stream 3"
                      and app.index.process_label(line.process).startswith("rank 1:"))
        timeline.focus_line = stream
        await pilot.press("p")
        assert timeline.lines[0].label == "rank 1 · Ascend Hardware · Stream 3"
        assert timeline.painter.gutter(0).text.rstrip() == "⚲ rank 1 · Stream 3"
        assert timeline.lines[1].label != timeline.lines[0].label  # under a header: as was
    app = ProftuiApp(str(SAMPLE))  # one rank, two processes: the process
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        timeline.focus_line = timeline.lines.find(kind=SLICES, track=next(
            t for t in range(app.index.n_tracks) if app.index.track_label(t) == "stream 7"))
        await pilot.press("p")
        assert timeline.painter.gutter(0).text.rstrip() == "⚲ python [GPU 0] · stream 7"
        # A pinned counter keeps its series' name.
        timeline.focus_line = timeline.lines.find(kind=COUNTER)
        series = timeline.lines[timeline.focus_line].label
        await pilot.press("p")
        assert timeline.lines[0].kind == COUNTER
        assert timeline.painter.gutter(0).text.rstrip() == f"⚲ {series}"


async def test_device_streams_come_first_below_a_deep_host_stack(tmp_path) -> None:
    """A Python stack 40 deep would push the device stream below the fold: by default the
    process with device work comes first in its rank; t gives the trace's order back (and
    again the default), the focused track staying focused."""
    stack = [{"ph": "X", "name": f"frame{d}", "cat": "python_function", "pid": 1, "tid": 1,
              "ts": d, "dur": 1000 - 2 * d} for d in range(40)]
    kernels = [{"ph": "X", "name": f"kernel{k}", "cat": "kernel", "pid": 2, "tid": 7,
                "ts": 100 * k, "dur": 50} for k in range(8)]
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(stack + kernels))
    app = ProftuiApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        timeline = await _open(pilot, app)

        def kernel_line() -> int:
            return next(n for n, line in enumerate(timeline.lines)
                        if line.kind == SLICES and line.process == 1)

        assert app.index.process_label(1) == "Process 2"  # after the host in the trace
        assert kernel_line() == 1 < timeline.body_height  # on the first screen
        assert timeline.focus_line == kernel_line()
        drawn = timeline.render_line(timeline.body_top + kernel_line()).text
        assert drawn.startswith("  Thread 7 ") and "k…" in drawn
        await pilot.press("t")
        assert kernel_line() == 42  # the host's header and 40 rows, its header
        assert timeline.focus_line == kernel_line()
        await pilot.press("t")
        assert kernel_line() == 1 and timeline.focus_line == 1


@pytest.mark.parametrize(("size", "whole"), [((160, 40), True), ((80, 24), False)])
async def test_a_wide_slice_shows_as_much_of_its_name_as_it_is_wide(tmp_path, size,
                                                                     whole) -> None:
    """A slice's label takes the whole of its run on screen: a 100-character name is shown
    whole where the slice is wider, cut with an ellipsis at the slice's end where not."""
    name = "aten::" + "long_kernel_name_" * 5 + "x" * 9
    assert len(name) == 100
    events = [{"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": 0, "dur": 3000},
              {"ph": "X", "name": "next", "pid": 1, "tid": 1, "ts": 3000, "dur": 200}]
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(events))
    app = ProftuiApp(str(path))
    async with app.run_test(size=size) as pilot:
        timeline = await _open(pilot, app)
        row = timeline.lines.find(kind=SLICES)
        body = timeline.render_line(timeline.body_top + row).text[timeline.gutter_width:]
        cells = timeline.painter.cells.by_line[row]
        owner, busy = cells.owner, cells.busy
        filled = np.flatnonzero((cell_classes(owner, busy) == FULL)
                                & (owner == next(i for i in range(2)
                                                 if app.index.slice_name(i) == name)))
        first, cells = int(filled[0]), len(filled)
        assert filled[-1] - first + 1 == cells  # one run
        assert (cells > len(name) + 1) is whole
        label = body[first: first + cells]
        if whole:
            assert label.strip() == name
        else:
            assert label == " " + name[: cells - 2] + "…"


def _backgrounds(strip) -> list[str]:
    """The background of each cell of a painted line."""
    return [seg.style.bgcolor.triplet.hex if seg.style and seg.style.bgcolor else ""
            for seg in strip for _ in seg.text]


async def test_kept_bodies_and_utilisation_lines_follow_what_they_show() -> None:
    """Slice bodies and utilisation lines are kept from frame to frame: a move of the cursor,
    a selection, marks, a range or another theme paints them again, as painted afresh."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        assert timeline.util_rows > 0
        gutter = timeline.gutter_width

        def line_y() -> int:
            return timeline.focus_line - timeline.top_line + timeline.body_top

        def body(y: int) -> list[str]:
            kept = timeline.render_line(y)
            if y < timeline.body_top:  # forget what was kept of this kind of line
                timeline.painter.util_strips = UtilStrips()
            else:
                timeline.painter.bodies = BodiesFrame()
            assert list(kept) == list(timeline.render_line(y))  # as painted afresh
            return _backgrounds(kept)[gutter:]

        dark = THEMES["proftui-dark"][1]
        cursor = timeline.cell_of(timeline.cursor_ns)
        for y in (line_y(), 2):  # a slice line and the first utilisation line
            assert body(y)[cursor] == dark.cursor
        await pilot.press("w", "w")
        cursor = timeline.cell_of(timeline.cursor_ns)
        shown = [timeline.render_line(y).text for y in (line_y(), 2)]
        shift = (timeline.view_end - timeline.view_start) // 3  # the window moves, the
        timeline.cursor_ns -= shift  # cursor with it: other cells, the cursor's cell kept
        timeline.set_window(timeline.view_start - shift, timeline.view_end - shift)
        assert timeline.cell_of(timeline.cursor_ns) == cursor
        for y, before in zip((line_y(), 2), shown):
            body(y)
            assert timeline.render_line(y).text != before
        await pilot.press("full_stop")  # the cursor one cell right
        for y in (line_y(), 2):
            assert body(y)[cursor] != dark.cursor and body(y)[cursor + 1] == dark.cursor
        await pilot.press("left_square_bracket", "full_stop", "full_stop",
                          "right_square_bracket")  # a range of three cells
        assert body(2)[cursor + 1: cursor + 3] == [dark.range] * 2
        body(line_y())
        await pilot.press("escape")  # no slice selected: the range goes
        assert dark.range not in body(2)
        body(line_y())
        await pilot.press("enter")
        assert timeline.selected >= 0
        painted = timeline.render_line(line_y())
        assert any(seg.style.bgcolor and seg.style.bgcolor.triplet.hex == dark.selection
                   or seg.style.color and seg.style.color.triplet.hex == dark.selection
                   for seg in painted)
        body(line_y())
        assert not any(seg.style.underline for seg in list(painted)[1:])  # past the gutter
        await pilot.press("escape", "enter")  # cleared (the cursor stays), selected again
        assert timeline.selected >= 0 and timeline.state.marks is None  # no flows, no matches
        assert list(timeline.render_line(line_y())) == list(painted)
        await pilot.press("escape")
        assert timeline.selected < 0
        body(line_y())
        await pilot.press("enter")
        owners = timeline.painter.cells.by_line[timeline.focus_line].owner
        timeline.set_matches(np.unique(owners[owners >= 0]))
        assert any(seg.style.underline for seg in list(timeline.render_line(line_y()))[1:])
        body(line_y())
        app.theme = "proftui-light"
        await pilot.pause()
        light = THEMES["proftui-light"][1]
        assert light.background in body(line_y()) and dark.background not in body(line_y())
        assert light.background in body(2) and dark.background not in body(2)


async def test_kept_gutters_follow_focus_labels_width_and_theme() -> None:
    """Gutters are kept per line: moving the focus, a label that changes (a hidden track
    counted on its process's line), another width or another theme paints them again."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        dark = THEMES["proftui-dark"][1]

        def gutter(n: int):
            strip = timeline.render_line(n - timeline.top_line + timeline.body_top)
            return strip.text[:timeline.gutter_width], _backgrounds(strip)[0]

        focus = timeline.focus_line
        assert gutter(focus)[1] == dark.focus and gutter(focus + 1)[1] == dark.gutter
        await pilot.press("down")
        assert gutter(focus)[1] == dark.gutter and gutter(focus + 1)[1] == dark.focus
        process = next(n for n in range(focus, -1, -1) if timeline.lines[n].kind == PROCESS)
        assert "hidden" not in gutter(process)[0]
        await pilot.press("h")  # the focused track hidden: its process's line counts it
        assert gutter(process)[0].rstrip().endswith("+1 hidden")
        assert len(gutter(process)[0]) == 30
        await pilot.resize_terminal(80, 40)
        await pilot.pause()
        assert timeline.gutter_width == 20
        assert len(gutter(process)[0]) == 20 and gutter(process)[0].rstrip().endswith("hidden")
        app.theme = "proftui-light"
        await pilot.pause()
        assert gutter(process)[1] == THEMES["proftui-light"][1].gutter


async def test_the_timeline_skips_only_the_truecolor_filter(monkeypatch) -> None:
    """The timeline leaves out Textual's ANSI-to-truecolor filter, which would change nothing
    of its lines: they are painted in hex colours only (every theme's palette); other filters
    (NO_COLOR's) still apply."""
    from rich.color import Color, ColorType
    from textual.filter import ANSIToTruecolor
    from textual.geometry import Region

    for _, palette in THEMES.values():
        colours = [getattr(palette, f) for f in palette.__dataclass_fields__ if f != "slices"]
        colours += [palette.colour_at(i)
                    for i in range(len(palette.slices) + len(RESERVED_COLOURS))]
        assert all(Color.parse(c).type == ColorType.TRUECOLOR for c in colours), palette
    monkeypatch.setenv("NO_COLOR", "1")
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        await pilot.press("enter", "left_square_bracket", "full_stop", "right_square_bracket")
        truecolor = next(f for f in app._filters if isinstance(f, ANSIToTruecolor))
        assert truecolor.enabled
        filters = timeline.get_line_filters()
        assert not any(isinstance(f, ANSIToTruecolor) for f in filters)
        assert any(type(f).__name__ in ("Monochrome", "NoColor") for f in filters)
        background = timeline.background_colors[1]
        for y in range(timeline.size.height):
            strip = timeline.render_line(y)
            assert list(strip.apply_filter(truecolor, background)) == list(strip)
        lines = timeline.render_lines(Region(0, 0, timeline.size.width, timeline.size.height))
        greys = {len(set(seg.style.color.triplet)) for strip in lines for seg in strip
                 if seg.style and seg.style.color}
        assert greys == {1}  # NO_COLOR's monochrome: red, green and blue alike


async def test_the_ruler_follows_the_window_and_the_range() -> None:
    """Both ruler lines come from one reckoning of the labels and ticks per window and
    range: each zoom, pan or range shows its own."""
    from proftui.tui.format import fmt_duration
    from proftui.tui.widgets.render import ruler_text

    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)

        def ruler(y: int) -> str:
            return timeline.render_line(y).text[timeline.gutter_width:]

        seen = set()
        for key in ("w", "w", "d", "s"):
            await pilot.press(key)
            labels, ticks = ruler_text(timeline.view_start, timeline.view_end, timeline.cells,
                                       app.index.start_ns)
            assert ruler(0) == labels
            assert [c == "┬" for c in ruler(1)] == [c == "┬" for c in ticks]
            seen.add(labels)
        assert len(seen) == 4
        await pilot.press("left_square_bracket", "full_stop", "full_stop",
                          "right_square_bracket")
        lo, hi = timeline.range
        assert f"[{fmt_duration(hi - lo)}]" in ruler(0)
