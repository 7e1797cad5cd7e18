"""The utilisation band on small screens: a line per rank, every series on u, one rank's on U,
8 track rows kept under it, scrolled (and following the focused rank) when it does not fit."""

from __future__ import annotations

import numpy as np
from offscreen import press, timeline_of
from textual.events import Click

from proftui.core.analysis.utilisation import utilisation
from proftui.themes import palette_for
from proftui.tui.widgets.lines import SLICES
from proftui.tui.widgets.render import StyleCache, busy_kinds, paint_busy_row
from proftui.tui.widgets.timeline import RULER_LINES, util_lines_of
from proftui.tui.widgets.util_band import MIN_TRACK_ROWS, UtilBand, UtilLine

SERIES = ("compute", "comm exposed", "comm overlapped", "host busy")


def _band(ranks: int) -> UtilBand:
    band = UtilBand()
    lines = []
    for r in range(ranks):
        lines.append(UtilLine(f"rank {r}", "device busy", f"rank {r} device busy", head=True))
        lines += [UtilLine(f"rank {r}", s, f"rank {r} {s}") for s in SERIES]
    band.set_lines(lines)
    return band


def test_a_line_per_rank_then_every_series_then_none() -> None:
    band = _band(2)
    assert [line.label for line in band.shown] == ["rank 0 device busy", "rank 1 device busy"]
    assert band.view == "ranks"
    band.cycle()
    assert band.view == "series" and len(band.shown) == 10
    band.cycle()
    assert band.view == "off" and band.shown == [] and band.rows(40) == 0
    band.cycle()
    assert band.view == "ranks" and len(band.shown) == 2
    # One rank expanded: its series right under its head, the other rank folded.
    band.toggle("rank 1")
    assert [line.series for line in band.shown] == ["device busy", "device busy", *SERIES]
    assert band.view == "some" and band.mark(band.shown[0]) == "▶"
    assert band.mark(band.shown[1]) == "▼" and band.mark(band.shown[2]) == " "
    band.cycle()  # from some expanded, u expands them all
    assert band.view == "series"
    band.toggle("rank 0")  # and U folds one back
    assert band.view == "some" and len(band.shown) == 6
    band.toggle("nobody")  # not a group: nothing changes
    assert len(band.shown) == 6


def test_the_band_leaves_eight_track_rows_and_scrolls() -> None:
    band = _band(8)
    band.cycle()  # 8 ranks x 5 series: 40 lines
    assert len(band.shown) == 40
    # At 80x24 the timeline has 13 rows under its ruler: 8 tracks and a header keep 9.
    assert band.rows(13) == 13 - MIN_TRACK_ROWS - 1 == 4
    # Taller, half the rows at most; on a tiny screen still one line.
    assert band.rows(48) == 24 and band.rows(6) == 1
    assert band.on_screen(13) == band.shown[:4]
    band.scroll(3, 13)
    assert band.on_screen(13) == band.shown[3:7]
    band.scroll(100, 13)  # never past the last line: the band's rows stay filled
    assert band.on_screen(13) == band.shown[36:]
    band.follow("rank 2", 13)  # a rank out of view comes to the band's top
    assert band.on_screen(13)[0] == UtilLine("rank 2", "device busy", "rank 2 device busy",
                                             head=True)
    band.scroll(-3, 13)
    band.follow("rank 2", 13)  # its head still on screen (the last row): the band stays
    assert band.first(13) == 7
    band.scroll(4, 13)
    band.follow("rank 2", 13)  # its head scrolled off: back at the top
    assert band.first(13) == 10
    band.scroll(-100, 13)
    assert band.first(13) == 0


def test_labels_give_way_before_the_rank() -> None:
    band = _band(2)
    head, overlapped = band.lines[0], band.lines[3]
    assert band.label_forms(head, several=True) == ["rank 0 device busy", "rank 0 busy",
                                                    "rank 0"]
    assert band.label_forms(head, several=False) == ["device busy", "busy"]
    assert band.label_forms(overlapped, several=True) == ["comm overlapped", "overlapped"]


def test_a_head_is_coloured_by_what_kept_the_device_busy() -> None:
    busy = np.array([0.0, 1.0, 0.5, 0.8, 0.6])
    compute = np.array([0.0, 0.9, 0.1, 0.0, 0.1])
    exposed = np.array([0.0, 0.1, 0.4, 0.1, 0.0])
    kinds = busy_kinds(busy, compute, exposed)
    # idle, compute, exposed communication, other work (copies), other again
    assert kinds.tolist() == [0, 1, 2, 3, 3]
    palette = palette_for("proftui-dark")
    colours = ["#000001", "#000002", "#000003", "#000004"]
    segments = paint_busy_row(busy, kinds, colours, palette, StyleCache(), cursor_cell=2)
    assert "".join(s.text for s in segments) == " █▄▆▅"
    fg = [s.style.color.name for s in segments for _ in s.text]
    bg = [s.style.bgcolor.name for s in segments for _ in s.text]
    assert fg == [colours[k] for k in (0, 1, 2, 3, 3)]
    assert bg[2] == palette.cursor and bg[0] == bg[1] == bg[3] == palette.background


def _ranks_timeline(tmp_path, ranks: int, height: int = 15):
    from cluster_inputs import rank_folders

    timeline = timeline_of(rank_folders(tmp_path, [[110]] * ranks), width=80, height=height)
    index = timeline.index
    whole = utilisation(index, index.start_ns, index.end_ns, 1, timeline.tables)
    timeline.state.set_util_lines(util_lines_of(whole))
    return timeline


def test_eight_ranks_at_80x24_keep_eight_track_rows_and_follow_the_focus(tmp_path) -> None:
    timeline = _ranks_timeline(tmp_path, 8)
    state = timeline.state
    assert len(state.band.shown) == 8  # a line per rank by default
    rows = state.util_rows
    assert rows == 13 - MIN_TRACK_ROWS - 1
    shown = [timeline.render_line(RULER_LINES + k).text for k in range(rows)]
    gutter = timeline.gutter_width
    assert shown[0].startswith("▶ rank 0 busy")
    assert shown[-1][:gutter].rstrip().endswith(f"↓{8 - rows}")  # 4 more below
    # Room for 8 tracks under a header (these ranks have a track per process: fewer here).
    assert state.body_height == MIN_TRACK_ROWS + 1
    # Down through the tracks: on rank 6's, its utilisation line comes into the band.
    rank6 = next(n for n, line in enumerate(timeline.lines) if line.kind == SLICES
                 and timeline.index.process_label(line.process).startswith("rank 6"))
    while timeline.focus_line < rank6:
        press(timeline, "down")
    band = [timeline.render_line(RULER_LINES + k).text[:gutter] for k in range(rows)]
    assert band[0].startswith("▶ rank 4 busy") and band[0].rstrip().endswith("↑4")
    assert band[2].startswith("▶ rank 6 busy")  # (the band's rows stay filled)
    # U expands the focused rank's series, its head on top; a click on the head's label
    # folds it again.
    press(timeline, "U")
    mine = [line for line in state.band.shown if line.group == "rank 6"]
    assert len(mine) > 1 and state.util_on_screen()[:len(mine)] == mine
    assert timeline.render_line(RULER_LINES).text.startswith("▼ rank 6 busy")
    timeline.on_click(Click(timeline, 1, RULER_LINES, 0, 0, 1, False, False, False))
    assert state.band.expanded == set() and timeline.selected == -1
    # The body under the band never runs past the widget.
    assert state.body_top + state.body_height == 15
