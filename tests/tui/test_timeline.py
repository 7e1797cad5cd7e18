"""The timeline screen driven by keys and the mouse: window, selection, search, iterations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from proftui.themes import RESERVED_COLOURS, THEMES
from proftui.tui.app import ProftuiApp
from proftui.tui.widgets.lines import PROCESS, SLICES
from proftui.tui.widgets.timeline import Timeline

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SAMPLE = SAMPLES / "kineto_demo.pt.trace.json"


async def _open(pilot, app):
    await app.workers.wait_for_complete()
    await app.workers.wait_for_complete()  # the utilisation, started as the load ends
    await pilot.pause()
    return app.query_one(Timeline)


def _names(app, slices) -> list[str]:
    return [app.index.slice_name(int(i)) for i in slices]


async def test_details_and_flows_then_search() -> None:
    """One session, two checks in turn: the details and the flow keys of a fresh timeline
    (which end with nothing selected), then search and n/N."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        await _details_read_args_lazily_and_flows_jump(app, pilot, timeline)
        await _search_counts_and_steps_through_matches(app, pilot, timeline)


async def _details_read_args_lazily_and_flows_jump(app, pilot, timeline) -> None:
    await pilot.press("enter", "down")  # a ProfilerStep, then the slice under it
    child = timeline.selected
    details = str(app.query_one("#details").render())
    assert app.index.slice_name(child) in details and "parents ProfilerStep#" in details
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
    await pilot.press("escape")
    assert timeline.selected == -1
    assert "Nothing selected" in str(app.query_one("#details").render())


async def _search_counts_and_steps_through_matches(app, pilot, timeline) -> None:
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
    assert "match " in str(app.query_one("#status").render())
    await pilot.press("escape")  # the selection cleared: its match is no longer said
    await pilot.pause()
    status = str(app.query_one("#status").render())
    assert timeline.selected < 0 and "match " not in status and "(? keys)" in status
    # A regular expression between slashes; a bad one is a readable message.
    await pilot.press("slash", *"/^aten::(relu_|linear)$/", "enter")
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert app.match_count == 16
    await pilot.press("slash", *"/([/", "enter")
    assert "not a valid regular expression" in str(app.query_one("#status").render())


async def _goto_iteration_zooms_to_its_window(app, pilot, timeline) -> None:
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


async def _mouse_click_selects_and_wheel_zooms(app, pilot, timeline) -> None:
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


def _command_palette_lists_the_timeline_actions(app) -> None:
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


async def test_range_selection_then_going_to_iterations_and_the_palettes_commands() -> None:
    """One session, checks in turn: the range keys and mouse on a fresh timeline, then (the
    range cleared) g zooms to an iteration and puts the cursor at its start, then the
    command palette lists the timeline's actions, then (0: the whole trace) a click selects
    and the wheel zooms."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        await _range_selection_keys_mouse_and_ops_following(app, pilot, timeline)
        await pilot.press("escape")
        assert timeline.range is None and timeline.selected == -1
        await _goto_iteration_zooms_to_its_window(app, pilot, timeline)
        await _go_to_an_iteration_puts_the_cursor_at_its_start(app, pilot, timeline)
        _command_palette_lists_the_timeline_actions(app)
        await pilot.press("0")  # the whole trace again, the lines from the top
        assert timeline.top_line == 0
        await _mouse_click_selects_and_wheel_zooms(app, pilot, timeline)


async def _range_selection_keys_mouse_and_ops_following(app, pilot, timeline) -> None:
    from proftui.tui.panes.ops import OpsPane

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


async def _go_to_an_iteration_puts_the_cursor_at_its_start(app, pilot, timeline) -> None:
    await pilot.press("g", "3", "enter")
    it = next(it for it in app.iterations if it.number == 3)
    assert timeline.cursor_ns == it.start_ns
    assert timeline.view_start <= timeline.cursor_ns < timeline.view_end


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
            return [timeline.painter.header_text(n)  # gutter and rule
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


def _backgrounds(strip) -> list[str]:
    """The background of each cell of a painted line."""
    return [seg.style.bgcolor.triplet.hex if seg.style and seg.style.bgcolor else ""
            for seg in strip for _ in seg.text]


async def test_the_timeline_skips_only_the_truecolor_filter(monkeypatch) -> None:
    """The timeline leaves out Textual's ANSI-to-truecolor filter, which would change nothing
    of its lines: they are painted in hex colours only (every theme's palette); other filters
    (NO_COLOR's, which the app respects) still apply."""
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
        assert app.no_color, "NO_COLOR is not respected"
        assert any(type(f).__name__ in ("Monochrome", "NoColor") for f in app._filters)
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


