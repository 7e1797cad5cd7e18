"""The timeline's painter without an app: frame caches kept and repainted, labels, ruler."""

from __future__ import annotations

import json

import numpy as np
import pytest
from offscreen import press, timeline_of

from proftui.core.analysis.utilisation import utilisation
from proftui.themes import THEMES
from proftui.tui.text.format import fmt_duration
from proftui.tui.widgets.lines import PROCESS, SLICES
from proftui.tui.widgets.render import FULL, cell_classes, ruler_text
from proftui.tui.widgets.timeline import util_lines_of
from proftui.tui.widgets.timeline_painter import BodiesFrame, UtilStrips


def _backgrounds(strip) -> list[str]:
    """The background of each cell of a painted line."""
    return [seg.style.bgcolor.triplet.hex if seg.style and seg.style.bgcolor else ""
            for seg in strip for _ in seg.text]


def _with_utilisation(timeline):
    """The utilisation lines the app's worker would find, set."""
    index = timeline.index
    whole = utilisation(index, index.start_ns, index.end_ns, 1, timeline.tables)
    timeline.state.set_util_lines(util_lines_of(whole))
    assert timeline.util_rows > 0
    return timeline


def test_cells_bodies_and_gutters_are_kept_until_what_they_show_changes() -> None:
    timeline = timeline_of()
    painter = timeline.painter
    focus = timeline.state.body_top + timeline.focus_line - timeline.top_line

    def frame() -> list[str]:
        return [timeline.render_line(y).text for y in range(timeline.state.geometry.height + 2)]

    first = frame()
    cells, bodies, gutters = painter.cells, painter.bodies, painter.gutters
    assert frame() == first  # nothing changed: all kept
    assert painter.cells is cells and painter.bodies is bodies and painter.gutters is gutters
    press(timeline, "full_stop")  # the cursor moves: bodies again, no query, same gutters
    frame()
    assert painter.cells is cells and painter.bodies is not bodies
    assert painter.gutters is gutters
    press(timeline, "w")  # another window: cells and bodies again, the gutters kept
    assert frame()[focus] != first[focus]
    assert painter.cells is not cells and painter.gutters is gutters
    assert painter.cells.key[:2] == (timeline.view_start, timeline.view_end)
    press(timeline, "h")  # other lines: the gutters too
    frame()
    assert painter.gutters is not gutters


def test_kept_bodies_and_utilisation_lines_follow_what_they_show() -> None:
    """Slice bodies and utilisation lines are kept from frame to frame: a move of the cursor,
    a selection, marks, a range or another theme paints them again, as painted afresh."""
    timeline = _with_utilisation(timeline_of(height=26))
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
    press(timeline, "w", "w")
    cursor = timeline.cell_of(timeline.cursor_ns)
    shown = [timeline.render_line(y).text for y in (line_y(), 2)]
    shift = (timeline.view_end - timeline.view_start) // 3  # the window moves, the
    timeline.cursor_ns -= shift  # cursor with it: other cells, the cursor's cell kept
    timeline.set_window(timeline.view_start - shift, timeline.view_end - shift)
    assert timeline.cell_of(timeline.cursor_ns) == cursor
    for y, before in zip((line_y(), 2), shown):
        body(y)
        assert timeline.render_line(y).text != before
    press(timeline, "full_stop")  # the cursor one cell right
    for y in (line_y(), 2):
        assert body(y)[cursor] != dark.cursor and body(y)[cursor + 1] == dark.cursor
    press(timeline, "left_square_bracket", "full_stop", "full_stop",
          "right_square_bracket")  # a range of three cells
    assert body(2)[cursor + 1: cursor + 3] == [dark.range] * 2
    body(line_y())
    press(timeline, "escape")  # no slice selected: the range goes
    assert dark.range not in body(2)
    body(line_y())
    press(timeline, "enter")
    assert timeline.selected >= 0
    painted = timeline.render_line(line_y())
    assert any(seg.style.bgcolor and seg.style.bgcolor.triplet.hex == dark.selection
               or seg.style.color and seg.style.color.triplet.hex == dark.selection
               for seg in painted)
    body(line_y())
    assert not any(seg.style.underline for seg in list(painted)[1:])  # past the gutter
    press(timeline, "escape", "enter")  # cleared (the cursor stays), selected again
    assert timeline.selected >= 0 and timeline.state.marks is None  # no flows, no matches
    assert list(timeline.render_line(line_y())) == list(painted)
    press(timeline, "escape")
    assert timeline.selected < 0
    body(line_y())
    press(timeline, "enter")
    owners = timeline.painter.cells.by_line[timeline.focus_line].owner
    timeline.set_matches(np.unique(owners[owners >= 0]))
    assert any(seg.style.underline for seg in list(timeline.render_line(line_y()))[1:])
    body(line_y())
    timeline.set_palette(THEMES["proftui-light"][1])
    light = THEMES["proftui-light"][1]
    assert light.background in body(line_y()) and dark.background not in body(line_y())
    assert light.background in body(2) and dark.background not in body(2)


def test_kept_gutters_follow_focus_labels_width_and_theme() -> None:
    """Gutters are kept per line: moving the focus, a label that changes (a hidden track
    counted on its process's line), another width or another theme paints them again."""
    timeline = timeline_of(height=26)
    dark = THEMES["proftui-dark"][1]

    def gutter(n: int):
        strip = timeline.render_line(n - timeline.top_line + timeline.body_top)
        return strip.text[:timeline.gutter_width], _backgrounds(strip)[0]

    focus = timeline.focus_line
    assert gutter(focus)[1] == dark.focus and gutter(focus + 1)[1] == dark.gutter
    press(timeline, "down")
    assert gutter(focus)[1] == dark.gutter and gutter(focus + 1)[1] == dark.focus
    process = next(n for n in range(focus, -1, -1) if timeline.lines[n].kind == PROCESS)
    assert "hidden" not in gutter(process)[0]
    press(timeline, "h")  # the focused track hidden: its process's line counts it

    def header(n: int) -> str:  # gutter and rule: a long label goes on into the rule
        return timeline.render_line(n - timeline.top_line + timeline.body_top).text

    assert "+1 hidden ─" in header(process) and len(gutter(process)[0]) == 30
    timeline.state.resize(80, 26)
    assert timeline.gutter_width == 20
    assert len(gutter(process)[0]) == 20 and "+1 hidden ─" in header(process)
    timeline.set_palette(THEMES["proftui-light"][1])
    assert gutter(process)[1] == THEMES["proftui-light"][1].gutter


def test_the_ruler_follows_the_window_and_the_range() -> None:
    """Both ruler lines come from one reckoning of the labels and ticks per window and
    range: each zoom, pan or range shows its own."""
    timeline = timeline_of()

    def ruler(y: int) -> str:
        return timeline.render_line(y).text[timeline.gutter_width:]

    seen = set()
    for key in ("w", "w", "d", "s"):
        press(timeline, key)
        labels, ticks = ruler_text(timeline.view_start, timeline.view_end, timeline.cells,
                                   timeline.index.start_ns)
        assert ruler(0) == labels
        assert [c == "┬" for c in ruler(1)] == [c == "┬" for c in ticks]
        seen.add(labels)
    assert len(seen) == 4
    press(timeline, "left_square_bracket", "full_stop", "full_stop", "right_square_bracket")
    lo, hi = timeline.range
    assert f"[{fmt_duration(hi - lo)}]" in ruler(0)


@pytest.mark.parametrize(("width", "whole"), [(160, True), (80, False)])
def test_a_wide_slice_shows_as_much_of_its_name_as_it_is_wide(tmp_path, width, whole) -> None:
    """A slice's label takes the whole of its run on screen: a 100-character name is shown
    whole where the slice is wider, cut with an ellipsis at the slice's end where not."""
    name = "aten::" + "long_kernel_name_" * 5 + "x" * 9
    assert len(name) == 100
    events = [{"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": 0, "dur": 3000},
              {"ph": "X", "name": "next", "pid": 1, "tid": 1, "ts": 3000, "dur": 200}]
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(events))
    timeline = timeline_of(path, width)
    row = timeline.lines.find(kind=SLICES)
    body = timeline.render_line(timeline.body_top + row).text[timeline.gutter_width:]
    cells = timeline.painter.cells.by_line[row]
    owner, busy = cells.owner, cells.busy
    filled = np.flatnonzero((cell_classes(owner, busy) == FULL)
                            & (owner == next(i for i in range(2)
                                             if timeline.index.slice_name(i) == name)))
    first, n_cells = int(filled[0]), len(filled)
    assert filled[-1] - first + 1 == n_cells  # one run
    assert (n_cells > len(name) + 1) is whole
    label = body[first: first + n_cells]
    if whole:
        assert label.strip() == name
    else:
        assert label == " " + name[: n_cells - 2] + "…"
