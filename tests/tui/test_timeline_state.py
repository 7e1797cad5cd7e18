"""The timeline's keys without an app: what they move, and the changes the state reports."""

from __future__ import annotations

import json

import pytest
from offscreen import opened, press, timeline_of

from proftui.core.query.slice_info import row_of
from proftui.tui.widgets.lines import COUNTER, PROCESS, SLICES
from proftui.tui.widgets.timeline import ZOOM_STEP
from proftui.tui.widgets.timeline_state import (
    CursorMoved,
    RangeSet,
    SliceChosen,
    TimelineState,
    TracksHidden,
    WindowMoved,
)


def test_opens_on_the_whole_trace_and_zooms_around_the_cursor() -> None:
    timeline = timeline_of()
    index = timeline.index
    assert timeline.view_start <= index.start_ns and timeline.view_end >= index.end_ns
    width0 = timeline.view_end - timeline.view_start
    cursor = timeline.cursor_ns
    press(timeline, "w")
    width1 = timeline.view_end - timeline.view_start
    assert width1 == pytest.approx(width0 / ZOOM_STEP, rel=1e-6)
    # The cursor keeps its place in the window (zoom around the cursor).
    assert (cursor - timeline.view_start) / width1 == pytest.approx(0.5, abs=0.02)
    press(timeline, "s", "s")
    assert timeline.view_end - timeline.view_start == pytest.approx(width0 * ZOOM_STEP,
                                                                    rel=1e-6)
    start = timeline.view_start
    press(timeline, "d")
    assert timeline.view_start > start
    press(timeline, "a", "a")
    assert timeline.view_start < start
    press(timeline, "0")
    assert (timeline.view_end - timeline.view_start) == width0


def test_arrows_walk_slices_and_rows() -> None:
    timeline = timeline_of()
    index, rows = opened()
    assert timeline.selected == -1
    press(timeline, "enter")
    first = timeline.selected
    assert first >= 0
    assert index.slice_name(first).startswith("ProfilerStep#")
    start = index.arrays["slices.start"]
    press(timeline, "right")
    second = timeline.selected
    assert row_of(rows, index, second) == row_of(rows, index, first)
    assert start[second] > start[first]
    press(timeline, "left")
    assert timeline.selected == first
    # Down: the slice one row deeper at the cursor's time, inside the step.
    press(timeline, "down")
    child = timeline.selected
    assert int(index.arrays["slices.depth"][child]) == 1
    assert start[first] <= start[child] < start[first] + index.arrays["slices.dur"][first]
    press(timeline, "f")
    dur = int(index.arrays["slices.dur"][child])
    assert timeline.view_start <= start[child] and timeline.view_end >= start[child] + dur
    assert timeline.view_end - timeline.view_start < 1.5 * dur
    press(timeline, "escape")
    assert timeline.selected == -1


def test_collapse_pin_hide() -> None:
    timeline = timeline_of()
    n_lines = len(timeline.lines)
    timeline.focus_line = 0
    assert timeline.lines[0].kind == PROCESS
    press(timeline, "c")
    assert len(timeline.lines) < n_lines
    assert [line.kind for line in timeline.lines].count(PROCESS) == 2
    press(timeline, "c")
    assert len(timeline.lines) == n_lines
    gpu = next(n for n, line in enumerate(timeline.lines)
               if line.kind == SLICES and line.label.startswith("stream 13"))
    track = timeline.lines[gpu].track
    timeline.focus_line = gpu
    press(timeline, "p")
    assert timeline.lines[0].track == track
    timeline.focus_line = 0
    press(timeline, "h")
    assert all(line.track != track for line in timeline.lines)
    press(timeline, "H")
    assert any(line.track == track for line in timeline.lines)


def test_panning_stops_a_tenth_of_the_window_past_the_trace() -> None:
    timeline = timeline_of()
    index = timeline.index
    for _ in range(40):  # zoomed out, the whole trace stays in view whatever the pan
        press(timeline, "a")
    assert timeline.view_start <= index.start_ns and timeline.view_end >= index.end_ns
    press(timeline, "w", "w", "w", "w")
    width = timeline.view_end - timeline.view_start
    for _ in range(40):
        press(timeline, "a")
    assert timeline.view_start == index.start_ns - width // 10
    for _ in range(80):
        press(timeline, "d")
    assert timeline.view_end == index.end_ns + width // 10


def test_pinning_a_track_moves_the_cursor_with_it() -> None:
    timeline = timeline_of()
    last = max(n for n, line in enumerate(timeline.lines) if line.kind == SLICES)
    timeline.focus_line = last
    track = timeline.lines[last].track
    press(timeline, "p")
    assert timeline.layout_state.pinned == [track]
    assert timeline.lines[timeline.focus_line].track == track


def test_process_headers_keep_their_name_at_80_columns() -> None:
    """A header's label goes on past the gutter into its rule (a header shows no slices), up
    to half the row; beyond that it leaves out its pid, then its labels, not its name."""

    def headers(timeline) -> list[str]:
        return [timeline.painter.header_text(n) for n, line in enumerate(timeline.lines)
                if line.kind == PROCESS]

    timeline = timeline_of(width=80)
    assert timeline.gutter_width == 20
    assert sorted(headers(timeline)) == ["▼ python (0) [GPU 0]", "▼ python (41207) [CPU]"]
    first = next(n for n, line in enumerate(timeline.lines) if line.kind == PROCESS)
    y = timeline.body_top + first - timeline.top_line
    assert timeline.render_line(y).text.startswith(headers(timeline)[0] + " ──")
    timeline = timeline_of(width=36)
    assert sorted(headers(timeline)) == ["▼ python [CPU]", "▼ python [GPU 0]"]


def test_a_pinned_track_names_its_rank_and_process(tmp_path) -> None:
    """Pinned above every process, a track's label says which rank (and process) it is of,
    giving up the process before the rank where the gutter is narrow."""
    from cluster_inputs import rank_folders

    timeline = timeline_of(rank_folders(tmp_path, [[110], [160]]))
    index = timeline.index
    stream = next(n for n, line in enumerate(timeline.lines) if line.label == "Stream 3"
                  and index.process_label(line.process).startswith("rank 1:"))
    timeline.focus_line = stream
    press(timeline, "p")
    assert timeline.lines[0].label == "rank 1 · Ascend Hardware · Stream 3"
    assert timeline.painter.gutter(0).text.rstrip() == "⚲ rank 1 · Stream 3"
    assert timeline.lines[1].label != timeline.lines[0].label  # under a header: as was
    timeline = timeline_of()  # one rank, two processes: the process
    index = timeline.index
    timeline.focus_line = timeline.lines.find(kind=SLICES, track=next(
        t for t in range(index.n_tracks) if index.track_label(t) == "stream 7"))
    press(timeline, "p")
    assert timeline.painter.gutter(0).text.rstrip() == "⚲ python [GPU 0] · stream 7"
    # A pinned counter keeps its series' name.
    timeline.focus_line = timeline.lines.find(kind=COUNTER)
    series = timeline.lines[timeline.focus_line].label
    press(timeline, "p")
    assert timeline.lines[0].kind == COUNTER
    assert timeline.painter.gutter(0).text.rstrip() == f"⚲ {series}"


def test_device_streams_come_first_below_a_deep_host_stack(tmp_path) -> None:
    """A Python stack 40 deep would push the device stream below the fold: by default the
    process with device work comes first in its rank; t gives the trace's order back (and
    again the default), the focused track staying focused."""
    stack = [{"ph": "X", "name": f"frame{d}", "cat": "python_function", "pid": 1, "tid": 1,
              "ts": d, "dur": 1000 - 2 * d} for d in range(40)]
    kernels = [{"ph": "X", "name": f"kernel{k}", "cat": "kernel", "pid": 2, "tid": 7,
                "ts": 100 * k, "dur": 50} for k in range(8)]
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(stack + kernels))
    timeline = timeline_of(path, 80, 14)

    def kernel_line() -> int:
        return next(n for n, line in enumerate(timeline.lines)
                    if line.kind == SLICES and line.process == 1)

    assert timeline.index.process_label(1) == "Process 2"  # after the host in the trace
    assert kernel_line() == 1 < timeline.body_height  # on the first screen
    assert timeline.focus_line == kernel_line()
    drawn = timeline.render_line(timeline.body_top + kernel_line()).text
    assert drawn.startswith("  Thread 7 ") and "k…" in drawn
    press(timeline, "t")
    assert kernel_line() == 42  # the host's header and 40 rows, its header
    assert timeline.focus_line == kernel_line()
    press(timeline, "t")
    assert kernel_line() == 1 and timeline.focus_line == 1


def test_the_state_reports_what_changed_once_each() -> None:
    """Each change is reported once, as it happens (the widget posts each as a message);
    a key that changes nothing reports nothing."""
    index, rows = opened()
    changes: list = []
    state = TimelineState(notify=changes.append)
    state.resize(120, 22)
    state.show(index, rows)
    assert changes == [WindowMoved(state.viewport.start_ns, state.viewport.end_ns),
                       CursorMoved(state.cursor_ns)]  # the cursor in the middle
    changes.clear()
    state.reset()  # already showing all of it, the cursor in its middle
    assert changes == []
    state.select_here()
    assert changes == [CursorMoved(state.cursor_ns), SliceChosen(state.selected)]
    assert state.selected >= 0
    changes.clear()
    state.range_of_selection()
    start = int(index.arrays["slices.start"][state.selected])
    assert changes == [RangeSet(start, start + int(index.arrays["slices.dur"][state.selected]))]
    changes.clear()
    state.clear_selection()  # the slice first, then the range
    state.clear_selection()
    assert changes == [SliceChosen(-1), RangeSet(None, None)]
    changes.clear()
    track = state.lines[state.focus_line].track
    state.hide_track()
    assert changes == [TracksHidden(1, changes[0].label)] and changes[0].label
    changes.clear()
    state.show_track(track)  # a jump to a hidden track shows it: one less hidden
    assert changes == [TracksHidden(0)]
    changes.clear()
    state.hide_track()
    state.show_hidden()
    assert changes[1] == TracksHidden(0, all_shown=True)
