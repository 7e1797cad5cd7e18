"""The viewport alone: time to cells and back, zoom about a point, pans and their clamps."""

from __future__ import annotations

import pytest

from proftui.tui.widgets.viewport import PAN_FRACTION, ZOOM_STEP, Viewport

EPOCH = 1_717_990_000_004_055_168  # epoch nanoseconds, as torch_npu writes: beyond a double


def viewport(lo: int = 0, hi: int = 1_000_000, cells: int = 100) -> Viewport:
    view = Viewport(cells=cells)
    view.span = (lo, hi)
    assert view.whole()
    return view


def test_whole_shows_the_span_with_a_fiftieth_either_side() -> None:
    view = viewport(EPOCH, EPOCH + 1_000_000)
    assert (view.start_ns, view.end_ns) == (EPOCH - 20_000, EPOCH + 1_020_000)
    assert not view.whole()  # already there: no move


def test_cells_and_times_round_trip_to_the_nanosecond_near_the_epoch() -> None:
    view = viewport(EPOCH, EPOCH + 10**9, cells=173)
    for cell in range(view.cells):
        t = view.time_at(cell)
        assert isinstance(t, int) and view.cell_of(t) == cell
        assert view.start_ns + cell * view.ns_per_cell <= t < view.start_ns + (cell + 1) * \
            view.ns_per_cell
    assert view.cell_of(view.start_ns - 1) == -1
    assert view.cell_of(view.end_ns + int(view.ns_per_cell) + 1) >= view.cells  # past the last


@pytest.mark.parametrize("anchor_cell", [0, 13, 50, 99])
def test_zoom_keeps_its_anchor_in_place(anchor_cell: int) -> None:
    view = viewport(EPOCH, EPOCH + 10**9)
    anchor = view.time_at(anchor_cell)
    share = (anchor - view.start_ns) / view.width_ns
    width = view.width_ns
    assert view.zoom(1 / ZOOM_STEP, anchor)
    assert view.width_ns == pytest.approx(width / ZOOM_STEP, abs=2)
    assert (anchor - view.start_ns) / view.width_ns == pytest.approx(share, abs=1e-6)
    assert view.zoom(ZOOM_STEP, anchor)  # and back out, to within a rounding
    assert view.width_ns == pytest.approx(width, abs=3)


def test_zoom_anchor_is_the_cursor_in_view_else_the_middle() -> None:
    view = viewport()
    assert view.zoom_anchor(123_456) == 123_456
    assert view.zoom_anchor(10**9) == (view.start_ns + view.end_ns) // 2


def test_extreme_zooms_stop_at_a_nanosecond_a_cell_and_at_four_spans() -> None:
    view = viewport(EPOCH, EPOCH + 3 * 10**9, cells=150)
    anchor = EPOCH + 1_234_567_891
    for _ in range(200):  # far past one ns per cell
        view.zoom(1 / ZOOM_STEP, anchor)
    assert view.width_ns == view.cells and view.ns_per_cell == 1.0
    assert view.start_ns <= anchor < view.end_ns
    assert view.cell_of(anchor) == anchor - view.start_ns  # one cell, one nanosecond
    assert not view.zoom(1 / ZOOM_STEP, anchor)  # no further
    for _ in range(200):
        view.zoom(ZOOM_STEP, anchor)
    assert view.width_ns == 4 * 3 * 10**9 + view.cells
    assert view.start_ns <= EPOCH and view.end_ns >= EPOCH + 3 * 10**9  # all of it in view


def test_pans_stop_a_tenth_of_the_window_past_the_span() -> None:
    view = viewport(0, 1_000_000)
    for step in (-PAN_FRACTION, PAN_FRACTION):
        for _ in range(40):  # zoomed out, the whole span stays in view whatever the pan
            view.pan(step)
            assert view.start_ns <= 0 and view.end_ns >= 1_000_000
    view.set_window(400_000, 500_000)
    width = view.width_ns
    for _ in range(40):
        view.pan(-PAN_FRACTION)
    assert view.start_ns == -(width // 10) and view.width_ns == width
    assert not view.pan(-PAN_FRACTION)  # clamped: no move
    for _ in range(80):
        view.pan(PAN_FRACTION)
    assert view.end_ns == 1_000_000 + width // 10


def test_a_drag_moves_by_cells_and_a_small_one_not_at_all() -> None:
    view = viewport(0, 1_000_000)
    view.set_window(400_000, 500_000)  # 1,000 ns a cell
    assert view.pan_cells(10) and view.start_ns == 410_000
    assert not view.pan_cells(0)


def test_centre_on_moves_only_for_a_time_out_of_view() -> None:
    view = viewport(0, 1_000_000)
    view.set_window(400_000, 500_000)
    assert not view.centre_on(450_000)
    assert view.centre_on(700_000)
    assert (view.start_ns, view.end_ns) == (650_000, 750_000)


def test_range_cells_are_clipped_to_the_screen() -> None:
    view = viewport(0, 1_000_000)
    view.set_window(0, 100_000)  # 1,000 ns a cell
    assert view.range_cells(None) is None
    assert view.range_cells((5_000, 8_000)) == (5, 8)
    assert view.range_cells((5_000, 5_001)) == (5, 6)  # a sliver still takes its cell
    assert view.range_cells((-50_000, 10**9)) == (0, 100)
    assert view.range_cells((200_000, 300_000)) is None  # off screen


def test_without_a_span_nothing_moves() -> None:
    view = Viewport(cells=80)
    assert not view.set_window(0, 10**6) and not view.whole()
    assert (view.start_ns, view.end_ns) == (0, 1)
