"""A: the ranks aligned at an iteration on the timeline; what is drawn moves, times do not."""

from __future__ import annotations

import csv

import pytest
from cluster_inputs import rank_folders
from textual.widgets import Input, Static
from tui_support import settle

from proftui.core.analysis.utilisation import utilisation
from proftui.core.export.to_csv import window_events
from proftui.tui.app import ProftuiApp
from proftui.tui.panes.ops import OpsPane
from proftui.tui.screens.export_dialog import ExportDialog
from proftui.tui.widgets.lines import SLICES
from proftui.tui.widgets.timeline import Timeline

US = 1000
# Each rank's step n starts at 1000 n µs of its own clock, a 100 µs MatMulV3 10 µs after it;
# rank 1's clock is 37 µs ahead of rank 0's.
ARRIVALS = [[110, 140, 120], [160, 110, 110]]
SKEW_US = 37


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def _matmul_line(timeline: Timeline, rank: str) -> int:
    """The line of `rank`'s device stream (its MatMulV3 row)."""
    index = timeline.index
    return next(n for n in range(len(timeline.lines)) if timeline.lines[n].kind == SLICES
                and index.process_label(timeline.lines[n].process).startswith(
                    f"{rank}: Ascend Hardware"))


def _body(timeline: Timeline, line: int) -> str:
    """The rendered text of a line, right of the gutter."""
    strip = timeline.render_line(line - timeline.top_line + timeline.body_top)
    return "".join(segment.text for segment in strip)[timeline.gutter_width:]


def _first_busy(timeline: Timeline, rank: str) -> tuple[int, int]:
    """The first cell of `rank`'s stream that shows a slice, and the slice it shows."""
    line = _matmul_line(timeline, rank)
    body = _body(timeline, line)
    cell = len(body) - len(body.lstrip())
    return cell, timeline.painter.owner_at(line, cell)


def _matmul(app: ProftuiApp, rank: str, start_us: int) -> int:
    index = app.index
    found = [i for i in range(index.n_slices) if index.slice_name(i) == "MatMulV3"
             and int(index.col("slices.start")[i]) == start_us * US
             and index.process_label(int(index.col("tracks.process")[
                 index.col("slices.track")[i]])).startswith(rank)]
    assert len(found) == 1
    return found[0]


async def test_a_aligns_rank_1_at_its_own_step_and_a_again_puts_it_back(tmp_path) -> None:
    path = rank_folders(tmp_path, ARRIVALS, clock_us=[0, SKEW_US])
    app = ProftuiApp(path)
    async with app.run_test(size=(130, 40)) as pilot:
        await settle(app, pilot)
        timeline = app.query_one(Timeline)
        timeline.top_line = 0
        rank0_mm = _matmul(app, "rank 0", 1010)
        rank1_mm = _matmul(app, "rank 1", 1000 + SKEW_US + 10)
        timeline.set_window(900 * US, 1300 * US)
        before = _first_busy(timeline, "rank 1")
        assert before == (timeline.cell_of((1010 + SKEW_US) * US), rank1_mm)
        assert _first_busy(timeline, "rank 0") == (timeline.cell_of(1010 * US), rank0_mm)

        await pilot.press("A")
        prompt = app.query_one("#prompt", Input)
        assert prompt.display and prompt.placeholder.startswith(
            "iteration to align the ranks at (1 to 3; Enter alone: ")
        await pilot.press("2", "enter")
        await settle(app, pilot)
        assert timeline.alignment is not None
        assert timeline.alignment.offsets_ns == {"rank 0": 0, "rank 1": SKEW_US * US}
        # shown: both steps 2, from their common start to the longer one's end
        assert timeline.view_start < 1000 * US and 1210 * US < timeline.view_end
        assert timeline.view_end - timeline.view_start < 230 * US
        status = app._status_text
        assert status.startswith("Ranks aligned at iteration 2: each drawn at its own start "
                                 "of it (rank 0's clock). Details, the ops and exports keep")
        line = str(app.query_one("#status", Static).render())
        assert line.startswith("[aligned at iteration 2: A undoes] Ranks aligned")
        # The same window: rank 1's MatMulV3 moved 37 µs to the left, onto rank 0's.
        timeline.set_window(900 * US, 1300 * US)
        after = _first_busy(timeline, "rank 1")
        assert after == (timeline.cell_of(1010 * US), rank1_mm)
        assert after[0] < before[0]
        assert _first_busy(timeline, "rank 0") == (timeline.cell_of(1010 * US), rank0_mm)
        # rank 1's utilisation lines too (rank 0's stay on its clock, the reference)
        timeline.painter.utilisation_cells()
        assert {line.group for line in timeline.util_lines} == {"rank 0", "rank 1"}
        moved = utilisation(app.index, timeline.view_start + SKEW_US * US,
                            timeline.view_end + SKEW_US * US, timeline.cells, timeline.tables)
        own = utilisation(app.index, timeline.view_start, timeline.view_end, timeline.cells,
                          timeline.tables)
        fractions = timeline.painter.util.fractions
        busy = fractions[("rank 1", "device busy")]
        assert (busy == moved[1].series["device busy"]).all()
        assert not (busy == own[1].series["device busy"]).all()
        assert (fractions[("rank 0", "device busy")] == own[0].series["device busy"]).all()
        # both ranks' "┃#2" on the ruler at one cell
        ticks = "".join(s.text for s in timeline.render_line(1))[timeline.gutter_width:]
        assert ticks.count("┃#2") == 1 and ticks.index("┃#2") == timeline.cell_of(1000 * US)

        # A click on rank 1's slice where it is drawn selects it; its details keep its time.
        line1 = _matmul_line(timeline, "rank 1")
        x = timeline.gutter_width + timeline.cell_of(1060 * US)
        await pilot.click(Timeline, offset=(x, line1 - timeline.top_line + timeline.body_top))
        await settle(app, pilot)
        assert timeline.selected == rank1_mm
        assert timeline.cell_of(timeline.cursor_ns) == timeline.cell_of(1060 * US)
        details = str(app.query_one("#details", Static).render())
        assert (f"start  1.047 ms from the capture start ({(1000 + SKEW_US + 10) * US} ns, "
                "profiler clock)") in details
        # The range of the selection is where it is drawn, and means each rank's own window.
        await pilot.press("r")
        await settle(app, pilot)
        assert timeline.range == (1010 * US, 1110 * US)
        window = app.query_one(OpsPane).window
        assert window.groups == {"rank 0": (1010 * US, 1110 * US),
                                 "rank 1": (1047 * US, 1147 * US)}
        assert "aligned at iteration 2: each rank's own window, moved by its offset" in \
            window.label
        # ... and so does its export: each rank's slices in its own window, true times.
        target = tmp_path / "aligned.csv"
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportDialog)
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.click("#export-go")
        await settle(app, pilot)
        with open(target, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        slices, _ = window_events(app.index, None, None, None, True, window.groups)
        assert len(rows) - 1 == len(slices) > 0
        assert {(r[0], r[2].split(":")[0], r[4]) for r in rows[1:]} == {
            ("ProfilerStep#2", "rank 0", "1000.000"), ("MatMulV3", "rank 0", "1010.000"),
            ("ProfilerStep#2", "rank 1", "1037.000"), ("MatMulV3", "rank 1", "1047.000")}

        await pilot.press("escape", "escape")  # the selection, then the range
        await pilot.press("A")
        await settle(app, pilot)
        assert timeline.alignment is None
        assert app._status_text == "Every rank is drawn on its own clock again."
        timeline.set_window(900 * US, 1300 * US)
        assert _first_busy(timeline, "rank 1") == before


async def test_enter_alone_aligns_at_the_iteration_under_the_cursor(tmp_path) -> None:
    path = rank_folders(tmp_path, ARRIVALS, clock_us=[0, SKEW_US], no_step=[(1, 0)])
    app = ProftuiApp(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        timeline = app.query_one(Timeline)
        timeline.cursor_ns = 2100 * US  # in step 3 of rank 0
        await pilot.press("A", "enter")
        await settle(app, pilot)
        assert timeline.alignment is not None and timeline.alignment.number == 3
        # g N shows each rank's step N where it is drawn: rank 1's [1037, 1247) µs at 1000 µs
        await pilot.press("g", "2", "enter")
        await settle(app, pilot)
        assert timeline.view_start < 1000 * US and 1210 * US < timeline.view_end < 1247 * US
        # Step 1 is rank 0's only: nothing to align there, said in one sentence.
        await pilot.press("A")
        assert timeline.alignment is None
        await pilot.press("A", "1", "enter")
        await settle(app, pilot)
        assert timeline.alignment is None
        assert app._status_text == ("Iteration 1 has no time window on two ranks or more "
                                    "(only rank 0 has it): there is nothing to align.")


# One rank has nothing to align: checked in the one-rank session of test_cluster_pane.py.
