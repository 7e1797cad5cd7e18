"""Steps folded (`z`): each step a band of its rank's device rows, drawn from its own start."""

from __future__ import annotations

import json
import math

import numpy as np
from offscreen import SAMPLES, press, timeline_of
from tui_support import settle

from proftui.core.ops.fold import NO_STEPS, Band, fold_steps
from proftui.core.ops.iterations import find_iterations
from proftui.core.ops.roles import device_tracks
from proftui.tui.app import ProftuiApp
from proftui.tui.panes.cluster import HeatStrip
from proftui.tui.text.format import fmt_duration
from proftui.tui.widgets.folded import band_label_forms, fold_lines, fold_sentence
from proftui.tui.widgets.timeline import IterationMark, Timeline

KINETO = SAMPLES / "kineto_demo.pt.trace.json"


def _with_steps(width: int = 120, height: int = 40) -> Timeline:
    """The Kineto sample's timeline with its steps on the ruler, as the app gives them."""
    timeline = timeline_of(KINETO, width, height)
    found = find_iterations(timeline.index).items
    timeline.state.iterations = [IterationMark(it.number, it.start_ns, it.end_ns, it.group)
                                 for it in found if it.start_ns >= 0]
    return timeline


# -- the bands' labels and lines ----------------------------------------------------------------

def test_a_bands_label_gives_way_from_its_mark_to_its_number() -> None:
    band = Band("rank 1", 7, 0, 12_300_000, 21.4, "slowest, outlier")
    forms = band_label_forms(band, named=False)
    assert forms[0] == "#7 12.3 ms (+21%) slowest, outlier"
    assert forms[1:4] == ["#7 12.3 ms (+21%) slowest", "#7 12.3 ms (+21%)", "#7 12.3 ms"]
    assert forms[-1] == "#7"
    assert band_label_forms(band, named=True)[2] == "rank 1 #7 12.3 ms (+21%)"
    short = Band("", 3, 0, 5_000, math.nan)
    assert band_label_forms(short, False)[0] == f"#3 {fmt_duration(5_000)}"


def test_each_bands_lines_are_its_tracks_rows_shifted_by_its_start() -> None:
    timeline = _with_steps()
    index, rows = timeline.index, timeline.rows
    fold = fold_steps(find_iterations(index).items, "")
    tracks = np.flatnonzero(device_tracks(index)).tolist()
    lines, shift, band, first = fold_lines(index, rows, fold, {"": tracks})
    per_band = int(sum(np.diff(rows.track_first_row)[tracks]))
    assert len(lines) == per_band * len(fold.bands)
    assert first.tolist() == [k * per_band for k in range(len(fold.bands))]
    for k, b in enumerate(fold.bands):
        mine = np.flatnonzero(band == k)
        assert (shift[mine] == b.start_ns).all()
        assert lines.item[mine].tolist() == lines.item[:per_band].tolist()  # the same rows


def test_the_sentence_counts_the_steps_left_out() -> None:
    fold = fold_steps(find_iterations(timeline_of(KINETO).index).items, "", limit=3)
    assert fold_sentence(fold) == (
        "Folded: 3 steps, each from its own start (5 more not shown: the slowest, the median "
        "and the furthest from it are). Enter opens a step, Esc goes back.")


# -- the state ----------------------------------------------------------------------------------

def test_z_folds_the_eight_steps_each_band_showing_only_its_own_step() -> None:
    timeline = _with_steps()
    before = (timeline.view_start, timeline.view_end)
    press(timeline, "z")
    folded = timeline.folded
    assert folded is not None and [b.number for b in folded.fold.bands] == list(range(1, 9))
    slowest = max(folded.fold.bands, key=lambda b: b.dur_ns)
    assert slowest.number == 6 and "slowest" in slowest.mark
    # the window is in time from each step's start, as long as the longest step
    assert timeline.view_start <= 0 and slowest.dur_ns <= timeline.view_end
    for y in range(timeline.size.height or 40):
        timeline.render_line(y)
    starts = timeline.index.arrays["slices.start"]
    ends = starts + timeline.index.arrays["slices.dur"]
    last_busy = {}
    for n in timeline.state.visible_lines():
        band = folded.band_of(n)
        owner = timeline.painter.cells.by_line[n].owner
        seen = np.unique(owner[owner >= 0])
        # every slice painted in a band is of its own step's window (to a cell), none past it
        cell = timeline.ns_per_cell
        assert ((starts[seen] < band.end_ns + cell) & (ends[seen] > band.start_ns - cell)).all()
        busy = np.flatnonzero(owner >= 0)
        if len(busy):
            last = timeline.time_at(int(busy[-1]))
            assert last <= band.dur_ns + timeline.ns_per_cell
            last_busy[band.number] = max(last_busy.get(band.number, 0), last)
    assert max(last_busy, key=last_busy.get) == 6  # the slow step's work reaches furthest
    press(timeline, "escape")
    assert timeline.folded is None and (timeline.view_start, timeline.view_end) == before


def test_enter_on_a_band_opens_its_step_on_the_normal_timeline() -> None:
    timeline = _with_steps()
    press(timeline, "z")
    band = timeline.folded.fold.bands[5]
    timeline.state.focus_band("", band.number)
    assert timeline.folded.band_of(timeline.focus_line) == band
    press(timeline, "enter")
    assert timeline.folded is None and timeline.selected == -1
    assert timeline.view_start <= band.start_ns < band.end_ns <= timeline.view_end
    assert timeline.view_end - timeline.view_start < band.dur_ns * 1.1
    assert timeline.cursor_ns == band.start_ns


def test_a_profile_without_steps_says_so_and_stays_as_it_was() -> None:
    timeline = timeline_of(KINETO)  # no iterations given
    lines = timeline.lines
    assert timeline.state.fold() == NO_STEPS
    assert timeline.folded is None and timeline.lines is lines


# -- the app ------------------------------------------------------------------------------------

async def test_z_in_the_app_folds_and_esc_unfolds(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(tmp_path))
    app = ProftuiApp(str(KINETO))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        timeline = app.query_one(Timeline)
        timeline.focus()
        await pilot.press("z")
        await settle(app, pilot)
        assert timeline.folded is not None and len(timeline.folded.fold.bands) == 8
        assert app._status_text.startswith("Folded: 8 steps, each from its own start.")
        # the slowest band focused, whole on screen, with the bands before it above
        focus = timeline.focus_line
        assert timeline.folded.band_of(focus).number == 6
        y = focus - timeline.top_line + timeline.body_top
        gutter = "".join(s.text for s in timeline.render_line(y))[:timeline.gutter_width]
        assert gutter.startswith("#6 ") and "slowest" in gutter
        last = int(timeline.folded.first[6]) - 1  # band #6's last line, on screen
        assert 0 < timeline.top_line and last < timeline.top_line + timeline.body_height
        await pilot.press("c")  # a layout key waits: the lines are the bands'
        assert timeline.folded is not None
        await pilot.press("escape")
        await settle(app, pilot)
        assert timeline.folded is None and app._status_text == "Back to the timeline."


async def test_z_on_a_profile_without_steps_says_why(tmp_path, monkeypatch) -> None:
    trace = tmp_path / "no_steps.json"
    trace.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "matmul", "ts": 10, "dur": 5, "pid": 1, "tid": 1},
        {"ph": "X", "name": "relu", "ts": 20, "dur": 5, "pid": 1, "tid": 1}]}))
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(tmp_path / "cache"))
    app = ProftuiApp(str(trace))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.query_one(Timeline).focus()
        await pilot.press("z")
        await settle(app, pilot)
        assert app._status_text == NO_STEPS
        assert app.query_one(Timeline).folded is None


async def test_the_cluster_panes_z_folds_every_rank_at_its_step(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(tmp_path))
    app = ProftuiApp(str(SAMPLES / "cluster_2rank"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        strip = app.query_one(HeatStrip)
        assert app.focused is strip
        await pilot.press("right", "z")
        await settle(app, pilot)
        rank, number = strip.current_cell
        timeline = app.query_one(Timeline)
        bands = timeline.folded.fold.bands
        assert [(b.group, b.number) for b in bands] == [("rank 0", number), ("rank 1", number)]
        assert app.focused is timeline
        assert timeline.folded.band_of(timeline.focus_line).group == rank
        gutter = "".join(s.text for s in timeline.render_line(timeline.body_top))
        assert gutter.startswith(f"rank 0 #{number} ")
        await pilot.press("enter")  # opens the focused band: the cell's rank's step
        await settle(app, pilot)
        assert timeline.folded is None
        assert app._status_text.startswith(f"iteration {number} of {rank}: ")


async def test_the_iterations_panes_z_folds_the_rows_rank(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(tmp_path))
    app = ProftuiApp(str(SAMPLES / "cluster_2rank"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        await pilot.press("down", "down", "z")
        await settle(app, pilot)
        timeline = app.query_one(Timeline)
        fold = timeline.folded.fold
        assert fold.group == "rank 0" and [b.number for b in fold.bands] == [1, 2, 3, 4]
        focused = timeline.folded.band_of(timeline.focus_line)
        assert (focused.group, focused.number) == ("rank 0", 3)
        assert "slowest" in focused.mark  # step 3 is rank 0's slow one
