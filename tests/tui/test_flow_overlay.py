"""Flows drawn over the timeline, as pure geometry: connectors, heads, markers, the legend."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style

from proftui.tui.widgets.flow_overlay import (
    HEAD,
    LINE,
    MARKER,
    PARTNER,
    FlowOnScreen,
    Mark,
    apply_marks,
    connector,
    overlay,
)

HEIGHT, WIDTH = 10, 30


def picture(flows: list[FlowOnScreen], labelled: int = 0, drawn: int = 0,
            total: int = 0) -> list[str]:
    """The body as text: '.' where nothing was drawn."""
    rows = [["."] * WIDTH for _ in range(HEIGHT)]
    for row, marks in overlay(flows, HEIGHT, WIDTH, labelled, drawn, total).items():
        for mark in marks:
            for k in range(mark.width):
                if mark.kind == PARTNER:
                    rows[row][mark.cell + k] = "#"
                elif 0 <= mark.cell + k < WIDTH:
                    rows[row][mark.cell + k] = mark.text[k]
    return ["".join(r).rstrip(".") for r in rows]


def test_a_flow_on_one_track_runs_along_it_to_a_head_before_the_target() -> None:
    rows = picture([FlowOnScreen(2, 3, 2, 8)])
    assert rows[2] == "...────▶"
    assert all(not r for k, r in enumerate(rows) if k != 2)


def test_a_flow_to_a_track_below_turns_down_into_the_targets_first_cell() -> None:
    rows = picture([FlowOnScreen(1, 3, 4, 8)])
    assert rows[1] == "...─────┐"
    assert rows[2] == "........│"
    assert rows[3] == "........▼"  # just above the target, which starts at cell 8 of row 4
    assert rows[4] == ""


def test_a_flow_to_a_track_above_turns_up() -> None:
    rows = picture([FlowOnScreen(6, 3, 2, 8)])
    assert rows[6] == "...─────┘"
    assert rows[4] == rows[5] == "........│"
    assert rows[3] == "........▲"


def test_a_target_starting_before_the_source_ends_is_reached_straight_from_the_source() -> None:
    # a kernel that starts while its launch is still running: no line back over the launch
    rows = picture([FlowOnScreen(6, 10, 2, 8)])
    assert rows[6] == "" and rows[5] == rows[4] == "........│" and rows[3] == "........▲"


def test_the_partner_is_highlighted_over_its_cells_on_screen() -> None:
    rows = picture([FlowOnScreen(1, 3, 4, 8, partner="dst", partner_cells=(8, 40))],
                   labelled=1)
    assert rows[4] == "........" + "#" * (WIDTH - 8)


def test_a_partner_off_to_the_right_is_a_marker_at_the_right_edge_with_the_time() -> None:
    rows = picture([FlowOnScreen(2, 3, 2, 500, gap_ns=1_200_000, partner="dst")], labelled=1)
    assert rows[2].endswith("─→ 1.2 ms")
    assert len(rows[2]) == WIDTH and rows[2].startswith("...───")


def test_a_partner_off_to_the_left_is_a_marker_at_the_left_edge() -> None:
    # the selection is the target (an incoming flow); its source ran long before the window
    rows = picture([FlowOnScreen(5, -300, 5, 12, gap_ns=40_000, partner="src")], labelled=1)
    assert rows[5].startswith("← 40 us─") and rows[5].endswith("─▶")


def test_a_partner_whose_track_is_scrolled_out_is_a_marker_on_the_edge_row() -> None:
    below = picture([FlowOnScreen(2, 3, 40, 12, gap_ns=5_000, partner="dst")], labelled=1)
    assert below[2] == "...─────────┐"
    assert all(r == "............│" for r in below[3:HEIGHT - 1])
    assert below[HEIGHT - 1] == "............↓ 5 us"
    above = picture([FlowOnScreen(-7, 3, 4, 12, gap_ns=5_000, partner="src")], labelled=1)
    assert above[0] == "............↑ 5 us"
    assert above[1] == above[2] == "............│" and above[3] == "............▼"


def test_a_partner_both_scrolled_out_and_off_to_the_side_says_both() -> None:
    rows = picture([FlowOnScreen(2, 3, 40, 900, gap_ns=5_000, partner="dst")], labelled=1)
    assert rows[2].endswith("─↓→ 5 us") and len(rows[2]) == WIDTH


def test_unlabelled_flows_have_no_markers_and_the_selections_are_drawn_last() -> None:
    mine = FlowOnScreen(1, 3, 4, 8, gap_ns=1, partner="dst", partner_cells=(8, 9))
    other = FlowOnScreen(2, 0, 2, 900)  # crosses the selection's vertical at cell 8
    rows = picture([mine, other], labelled=1)
    assert rows[2] == "────────│─────────────────────"  # the selection's line on top
    assert "→" not in "".join(rows)


def test_the_legend_counts_the_flows_in_the_window_not_drawn() -> None:
    rows = picture([FlowOnScreen(2, 3, 2, 8)], drawn=64, total=1234)
    assert rows[HEIGHT - 1].endswith(" 64 nearest of 1,234 flows ")
    assert picture([FlowOnScreen(2, 3, 2, 8)], drawn=3, total=3)[HEIGHT - 1] == ""


def test_nothing_is_drawn_off_the_body() -> None:
    flow = FlowOnScreen(-5, -100, 50, 900, gap_ns=1, partner="dst")
    for row, mark in connector(flow, HEIGHT, WIDTH, labelled=True):
        assert 0 <= row < HEIGHT and 0 <= mark.cell < WIDTH


def test_marks_are_laid_on_a_rows_segments_cell_by_cell() -> None:
    plain, red = Style(color="white"), Style(bgcolor="red")
    line, marker, partner = Style(color="yellow"), Style(reverse=True), Style(bold=True)
    looks = {LINE: line, HEAD: line, MARKER: marker, PARTNER: partner}
    segments = [Segment("ab", plain), Segment("界c", red), Segment("def", plain)]  # 8 cells
    out = apply_marks(segments, [Mark(0, "─", LINE), Mark(2, "", PARTNER, 3),
                                 Mark(6, "▶", HEAD)], 8, looks)
    assert "".join(s.text for s in out) == "─b界cd▶f"
    assert sum(s.cell_length for s in out) == 8
    assert [s.style for s in out if s.text == "界c"] == [red + partner]
    # a mark over half of a wide character leaves a space, never half a glyph
    cut = apply_marks(segments, [Mark(3, "│", LINE)], 8, looks)
    assert "".join(s.text for s in cut) == "ab │cdef"
    assert sum(s.cell_length for s in cut) == 8
