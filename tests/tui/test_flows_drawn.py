"""Flows drawn on the timeline: the selection's connectors, partners, markers, and F."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from offscreen import press, timeline_of

from proftui.themes import palette_for
from proftui.tui.app import ProftuiApp
from proftui.tui.widgets.lines import PROCESS
from proftui.tui.widgets.timeline import Timeline
from proftui.tui.widgets.timeline_painter import MAX_FLOWS_SHOWN
from tests.core.helpers import launches, write_trace

FLOW = palette_for("proftui-dark").flow


def _trace(tmp_path: Path, n: int = 3) -> Path:
    return write_trace(tmp_path / "launches.json", launches(n))


def _launch_and_kernel(timeline: Timeline, k: int) -> tuple[int, int]:
    a = timeline.index.arrays
    kernel = int(np.flatnonzero(a["slices.name"]
                                == timeline.index.strings.find(f"kernel_{k}"))[0])
    launch = int(a["flows.src_slice"][a["flows.dst_slice"] == kernel][0])
    return launch, kernel


def _body(timeline: Timeline) -> list[str]:
    """The text right of the gutter of each body row."""
    top, gutter = timeline.state.body_top, timeline.gutter_width
    return [timeline.render_line(y).text[gutter:]
            for y in range(top, top + timeline.body_height)]


def _line_row(timeline: Timeline, slice_index: int) -> int:
    return int(timeline.painter.lines_of(np.array([slice_index]))[0]) - timeline.top_line


def _show_both(timeline: Timeline, launch: int, kernel: int) -> None:
    """Select the launch with both it and its kernel in the window."""
    a = timeline.index.arrays
    timeline.select(launch)
    start = int(a["slices.start"][launch])
    end = int(a["slices.start"][kernel] + a["slices.dur"][kernel])
    timeline.set_window(start - 20_000, end + 20_000)


def _flow_cells(strip) -> list[int]:
    """The cells of a painted line (gutter included) drawn in the flow colour."""
    cells, at = [], 0
    for seg in strip:
        style = seg.style
        if style is not None and FLOW in (style.color and style.color.triplet
                                          and style.color.triplet.hex,
                                          style.bgcolor and style.bgcolor.triplet
                                          and style.bgcolor.triplet.hex):
            cells += range(at, at + seg.cell_length)
        at += seg.cell_length
    return cells


def test_a_selected_launch_is_joined_to_its_kernel_on_the_track_above(tmp_path) -> None:
    timeline = timeline_of(_trace(tmp_path), width=100, height=14)
    launch, kernel = _launch_and_kernel(timeline, 1)
    body = _body(timeline)
    assert not any(ch in "".join(body) for ch in "┘▲")  # nothing selected: nothing drawn
    _show_both(timeline, launch, kernel)
    body = _body(timeline)
    view = timeline.state.viewport
    src_row, dst_row = _line_row(timeline, launch), _line_row(timeline, kernel)
    assert dst_row < src_row  # the device's process first
    start = int(timeline.index.arrays["slices.start"][kernel])
    column = view.cell_of(start)
    assert body[src_row][column] == "┘" and "─" in body[src_row]
    assert body[dst_row + 1][column] == "▲"
    assert all(body[r][column] == "│" for r in range(dst_row + 2, src_row))
    # the kernel (the partner) in the flow colour
    kernel_line = timeline.render_line(timeline.state.body_top + dst_row)
    assert timeline.gutter_width + column in _flow_cells(kernel_line)
    # and the same from the kernel's side
    timeline.select(kernel)
    assert _body(timeline)[dst_row + 1][column] == "▲"


def test_a_partner_in_a_collapsed_group_is_drawn_to_its_header(tmp_path) -> None:
    timeline = timeline_of(_trace(tmp_path), width=100, height=14)
    launch, kernel = _launch_and_kernel(timeline, 1)
    device = int(timeline.index.arrays["tracks.process"][
        timeline.index.arrays["slices.track"][kernel]])
    timeline.state.layout_state.collapsed.add(device)
    timeline.state.rebuild_lines()
    _show_both(timeline, launch, kernel)
    header = timeline.lines.find(kind=PROCESS, process=device)
    assert _line_row(timeline, kernel) == header - timeline.top_line
    column = timeline.cell_of(int(timeline.index.arrays["slices.start"][kernel]))
    body = _body(timeline)
    src_row = _line_row(timeline, launch)
    assert src_row > header - timeline.top_line
    assert body[header - timeline.top_line + 1][column] == "▲"
    assert body[src_row][column] == "┘"


def test_partners_off_screen_are_edge_markers_with_the_flows_time(tmp_path) -> None:
    timeline = timeline_of(_trace(tmp_path), width=100, height=14)
    launch, kernel = _launch_and_kernel(timeline, 1)
    timeline.select(launch)
    press(timeline, "f")  # the launch fills the window: its kernel is off to the right
    src_row = _line_row(timeline, launch)
    assert _body(timeline)[src_row].rstrip().endswith("→ 25 us")
    # the kernel's track scrolled out of view (above): ↑ at the top row
    _show_both(timeline, launch, kernel)
    timeline.state.top_line = _line_row(timeline, launch) + timeline.top_line
    body = _body(timeline)
    column = timeline.cell_of(int(timeline.index.arrays["slices.start"][kernel]))
    assert body[0][column:].startswith("↑ 25 us")


def test_f_draws_the_nearest_flows_in_view_and_counts_the_rest(tmp_path) -> None:
    n = MAX_FLOWS_SHOWN + 36
    timeline = timeline_of(_trace(tmp_path, n), width=120, height=14)
    press(timeline, "0")
    before = "\n".join(_body(timeline))
    assert "▲" not in before
    press(timeline, "F")
    assert timeline.show_flows
    body = _body(timeline)
    assert "▲" in "\n".join(body)
    last = len(timeline.state.visible_lines()) - 1  # the last line shown
    assert body[last].endswith(f" {MAX_FLOWS_SHOWN} nearest of {n} flows ")
    press(timeline, "w", "w", "w", "w", "w", "w", "w", "w")  # few flows in view: no count
    assert "nearest of" not in "\n".join(_body(timeline))
    assert "▲" in "\n".join(_body(timeline))
    press(timeline, "F")
    assert "▲" not in "\n".join(_body(timeline))


def test_flows_are_laid_on_once_per_painted_frame(tmp_path) -> None:
    timeline = timeline_of(_trace(tmp_path), width=100, height=14)
    launch, kernel = _launch_and_kernel(timeline, 1)
    _show_both(timeline, launch, kernel)
    first = _body(timeline)
    frame = timeline.painter.flows
    assert _body(timeline) == first and timeline.painter.flows is frame
    press(timeline, "full_stop")  # the cursor moved: the bodies, and the flows, again
    _body(timeline)
    assert timeline.painter.flows is not frame


async def test_the_app_draws_a_launchs_flow_and_f_toggles_every_flow(tmp_path) -> None:
    app = ProftuiApp(str(_trace(tmp_path, MAX_FLOWS_SHOWN + 10)))
    async with app.run_test(size=(120, 30)) as pilot:
        await app.workers.wait_for_complete()
        await app.workers.wait_for_complete()
        await pilot.pause()
        timeline = app.query_one(Timeline)
        launch, kernel = _launch_and_kernel(timeline, 5)
        timeline.select(launch)
        await pilot.press("f", *"sssssss")
        await pilot.pause()
        screen = "\n".join(_body(timeline))
        assert "┘" in screen and "▲" in screen
        await pilot.press("F")
        await pilot.pause()
        assert timeline.show_flows
        await pilot.press("0")
        await pilot.pause()
        assert f"nearest of {MAX_FLOWS_SHOWN + 10} flows" in "\n".join(_body(timeline))
