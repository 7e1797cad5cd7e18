"""Utilisation lines over the timeline: the painter, which lines show, and the app's lines on
the samples (content, zoom, the `u` toggle, navigation past them)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from offscreen import press, timeline_of
from textual.events import Click
from textual.strip import Strip

from proftui.core.analysis.utilisation import Utilisation, utilisation
from proftui.themes import palette_for
from proftui.tui.app import ProftuiApp
from proftui.tui.widgets.lines import PROCESS
from proftui.tui.widgets.render import StyleCache, paint_utilisation_rows, utilisation_chars
from proftui.tui.widgets.timeline import RULER_LINES, Timeline, util_lines_of

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kineto_demo.pt.trace.json"
SERIES_LABELS = ["device busy", "compute", "comm overlapped", "host busy"]


async def _open(pilot, app) -> Timeline:
    await app.workers.wait_for_complete()
    await app.workers.wait_for_complete()  # the utilisation worker starts as the load ends
    await pilot.pause()
    return app.query_one(Timeline)


def _body(timeline: Timeline, y: int) -> str:
    return timeline.render_line(y).text[timeline.gutter_width:]


def test_fractions_become_bars() -> None:
    f = np.array([0.0, 1e-6, 0.125, 0.5, 0.99, 1.0, np.nan, -0.5, 2.0])
    assert utilisation_chars(f[None]) == [" ▁▁▄▇█  █"]
    # Monotonic: more work is never a lower bar.
    ramp = " ▁▂▃▄▅▆▇█"
    levels = [ramp.index(c) for c in utilisation_chars(np.linspace(0, 1, 101)[None])[0]]
    assert levels == sorted(levels) and levels[0] == 0 and levels[-1] == 8


def test_paint_utilisation_marks_cursor_and_range() -> None:
    palette = palette_for("proftui-dark")
    strip = Strip(paint_utilisation_rows(np.array([[0.0, 0.5, 1.0, 1.0, 0.25]]), ["#123456"],
                                         palette, StyleCache(), cursor_cell=1,
                                         range_cells=(3, 5))[0], 5)
    assert strip.text == " ▄██▂"
    grounds = [str(seg.style.bgcolor.name) for seg in strip for _ in seg.text]
    assert grounds[1] == palette.cursor and grounds[3:] == [palette.range] * 2
    assert grounds[0] == grounds[2] == palette.background
    assert all(seg.style.color.name == "#123456" for seg in strip)


def _util(group: str, **whole: float) -> Utilisation:
    series = {name: np.array([whole.get(name.replace(" ", "_"), 0.0)])
              for name in SERIES_LABELS}
    return Utilisation(group, np.array([0, 10]), series)


def test_which_lines_show() -> None:
    # No device work anywhere: no block at all, even with the host busy.
    assert util_lines_of([_util("", host_busy=0.7)]) == []
    assert util_lines_of([]) == []
    # One group: its head (device busy), then its other series that are not all zero (no
    # communication here), with bare names.
    one = util_lines_of([_util("", device_busy=0.5, compute=0.4, host_busy=0.2)])
    assert [line.label for line in one] == ["device busy", "compute", "host busy"]
    assert [line.head for line in one] == [True, False, False]
    # Several: each line carries its group's name; every group has a head, even one whose
    # device was idle throughout.
    two = util_lines_of([_util("rank 0", device_busy=0.5, comm_overlapped=0.1),
                         _util("rank 1", host_busy=0.3)])
    assert [line.label for line in two] == ["rank 0 device busy", "rank 0 comm overlapped",
                                            "rank 1 device busy", "rank 1 host busy"]
    assert two[0].group == "rank 0" and two[0].series == "device busy" and two[0].head


async def test_lines_show_follow_zoom_and_toggle() -> None:
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = await _open(pilot, app)
        assert [line.label for line in timeline.util_lines] == SERIES_LABELS
        # By default one line: the device busy, its other series folded under it (▶).
        assert timeline.body_top == RULER_LINES + 1
        assert timeline.render_line(RULER_LINES).text.startswith("▶ device busy")
        # The first process comes right under it.
        assert timeline.render_line(timeline.body_top).text.startswith("▼ python")
        busy = _body(timeline, RULER_LINES)
        assert len(set(busy.strip())) >= 3 and "█" in busy and busy.count(" ") > 5
        # Each zoom recomputes the lines for the new window, one bucket per cell.
        before = busy
        for _ in range(3):
            await pilot.press("w")
        await pilot.pause()
        after = _body(timeline, RULER_LINES)
        assert after != before and after.strip()
        expected = utilisation(app.index, timeline.view_start, timeline.view_end,
                               timeline.cells)[0].series["device busy"]
        assert after == utilisation_chars(np.asarray(expected)[None])[0]
        await pilot.press("d")
        await pilot.pause()
        assert _body(timeline, RULER_LINES) != after
        # u shows every series, each under the head, indented.
        focus, height = timeline.focus_line, timeline.body_height
        await pilot.press("u")
        await pilot.pause()
        assert timeline.util_rows == 4 and timeline.body_height == height - 3
        assert timeline.render_line(RULER_LINES).text.startswith("▼ device busy")
        for k, label in enumerate(SERIES_LABELS[1:], 1):
            assert timeline.render_line(RULER_LINES + k).text.startswith(f"   {label}")
        # The host and the device are busy at different times.
        assert _body(timeline, RULER_LINES + 3) != _body(timeline, RULER_LINES)
        # u again hides them (the process takes their place), and again shows the one line.
        await pilot.press("u")
        await pilot.pause()
        assert timeline.util_rows == 0 and timeline.body_height == height + 1
        assert timeline.render_line(RULER_LINES).text.startswith("▼ python")
        assert timeline.focus_line == focus
        await pilot.press("u")
        await pilot.pause()
        assert timeline.util_rows == 1
        assert timeline.render_line(RULER_LINES).text.startswith("▶ device busy")


def test_navigation_and_clicks_pass_over_them() -> None:
    timeline = timeline_of(height=26)
    index = timeline.index
    timeline.state.set_util_lines(util_lines_of(utilisation(index, index.start_ns,
                                                            index.end_ns, 1)))
    press(timeline, "u")  # every series
    assert timeline.util_rows == 4
    # Up from the first line stays on it: the utilisation lines are not lines to focus.
    timeline.focus_line = 0
    press(timeline, "up", "up", "enter")
    assert timeline.focus_line == 0 and timeline.lines[0].kind == PROCESS
    press(timeline, "enter")  # collapsed and expanded again: a process line
    # A click on a utilisation line (body or gutter) selects nothing and moves nothing.
    lines = len(timeline.lines)
    for x in (2, timeline.gutter_width + timeline.cells // 2):
        timeline.on_click(Click(timeline, x, RULER_LINES + 1, 0, 0, 1, False, False, False))
        assert timeline.selected == -1 and timeline.focus_line == 0
    assert len(timeline.lines) == lines
    # Pin, hide and collapse still act on the tracks, under the utilisation lines.
    press(timeline, "down", "down", "p")
    assert timeline.layout_state.pinned
    assert timeline.render_line(timeline.body_top).text.startswith("⚲ ")
    assert timeline.render_line(RULER_LINES).text.startswith("▼ device busy")
    press(timeline, "h", "H", "c")
    # Paging to the end keeps the focused line on screen below the pinned block.
    press(timeline, "pagedown", "pagedown")
    assert timeline.top_line <= timeline.focus_line < timeline.top_line + timeline.body_height
    assert timeline.body_top + timeline.body_height <= 26


async def test_no_device_work_no_lines(tmp_path) -> None:
    path = tmp_path / "host.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "step", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
        {"ph": "X", "name": "aten::mm", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 10,
         "dur": 20}]}))
    app = ProftuiApp(str(path))
    async with app.run_test(size=(100, 30)) as pilot:
        timeline = await _open(pilot, app)
        assert app.index is not None and app.error is None
        assert timeline.util_lines == [] and timeline.util_rows == 0
        assert timeline.body_top == RULER_LINES
        assert timeline.render_line(RULER_LINES).text.startswith("▼")
