"""Ranks aligned, seen and reached: the headers and utilisation lines say each rank's shift,
the Cluster pane's Enter aligns at the cell's step, and an evidence jump (Insights) scrolls to
its rank's tracks."""

from __future__ import annotations

from pathlib import Path

import pytest
from cluster_inputs import rank_folders
from textual.widgets import Static
from tui_support import press_until, settle

from proftui.core.ops.iterations import group_windows
from proftui.tui.app import ProftuiApp
from proftui.tui.panes.cluster import HeatStrip
from proftui.tui.panes.insights import InsightsPane
from proftui.tui.widgets.lines import PROCESS
from proftui.tui.widgets.timeline import RULER_LINES, Timeline

US = 1000
SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "cluster_2rank"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(tmp_path / "cache"))


def _headers(timeline: Timeline) -> dict[str, str]:
    """Each process header's whole label, by the process's label."""
    index = timeline.index
    return {index.process_label(line.process, pid=False): timeline.painter.header_text(n)
            for n, line in enumerate(timeline.lines) if line.kind == PROCESS}


def _band_labels(timeline: Timeline) -> list[str]:
    """The utilisation lines' labels, as the gutter shows them."""
    return ["".join(s.text for s in timeline.render_line(y))[:timeline.gutter_width].strip()
            for y in range(RULER_LINES, timeline.body_top)]


async def test_the_headers_and_the_utilisation_lines_say_each_ranks_shift(tmp_path) -> None:
    # rank 1's clock is 37 µs ahead of rank 0's; rank 2 has no step 2
    path = rank_folders(tmp_path, [[110, 140, 120], [160, 110, 110], [120, 120, 120]],
                        clock_us=[0, 37, 0], no_step=[(2, 1)])
    app = ProftuiApp(path)
    async with app.run_test(size=(130, 40)) as pilot:
        await settle(app, pilot)
        timeline = app.query_one(Timeline)
        assert not any("shift" in text for text in _headers(timeline).values())
        assert _band_labels(timeline) == ["▶ rank 0 device busy", "▶ rank 1 device busy",
                                          "▶ rank 2 device busy"]
        await pilot.press("A", "2", "enter")
        await settle(app, pilot)
        headers = _headers(timeline)
        assert headers["rank 0: Ascend Hardware"] == "▼ rank 0: Ascend Hardware (2)  reference"
        assert headers["rank 1: Ascend Hardware"].endswith("  shifted -37 us")
        assert headers["rank 1: HCCL"].endswith("  shifted -37 us")
        assert headers["rank 2: Python"].endswith("  not shifted: no #2")
        assert _band_labels(timeline) == ["▶ rank 0 ref", "▶ rank 1 -37 us", "▶ rank 2 no #2"]
        # what is drawn moved; the details keep the slice's own time (the export too:
        # test_align.py)
        rank1 = [i for i in range(app.index.n_slices) if app.index.slice_name(i) == "MatMulV3"
                 and timeline.shown_start(i) == 1010 * US
                 and int(app.index.col("slices.start")[i]) == 1047 * US]
        assert len(rank1) == 1
        timeline.select(rank1[0])
        await settle(app, pilot)
        details = str(app.query_one("#details", Static).render())
        assert "start  1.047 ms from the capture start (1047000 ns, profiler clock)" in details
        await pilot.press("A")  # every rank on its own clock: no shift said
        await settle(app, pilot)
        assert not any("shift" in text for text in _headers(timeline).values())
        assert _band_labels(timeline)[1] == "▶ rank 1 device busy"


async def test_enter_on_a_cluster_cell_aligns_the_ranks_at_its_step() -> None:
    """Enter on rank 1's slow step 3 (the strip's worst cell): every rank shifted so that
    step 3 starts together, the timeline on rank 1's step 3 and rank 1's tracks at the
    top."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        assert app.query_one(HeatStrip).current_cell == ("rank 1", 3)
        await pilot.press("enter")
        await settle(app, pilot)
        timeline = app.query_one(Timeline)
        windows = group_windows(app.iterations, 3)
        aligned = timeline.alignment
        assert aligned is not None and aligned.number == 3
        starts = {rank: lo - aligned.offset_of(rank) for rank, (lo, _) in windows.items()}
        assert starts["rank 0"] == starts["rank 1"] != windows["rank 1"][0]
        lo, hi = windows["rank 1"]
        shift = timeline.shift_of_group("rank 1")
        assert timeline.view_start < lo - shift < hi - shift < timeline.view_end
        assert timeline.view_end - timeline.view_start < (hi - lo) * 1.1
        header = timeline.first_process_of("rank 1")
        assert timeline.lines[timeline.top_line].process == header
        assert str(app.query_one("#status", Static).render()).startswith(
            "[aligned at iteration 3: A undoes] iteration 3 of rank 1")
        # the ruler says the shift: rank 1's header, on screen
        assert "shifted" in timeline.painter.header_text(timeline.top_line)


async def test_an_evidence_jump_scrolls_to_its_ranks_tracks() -> None:
    """At 80x24 rank 1's tracks are below the screen: its findings' evidence (time ranges
    of no one slice) brings them up, and a rank 0 finding's brings rank 0's back."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        timeline = app.query_one(Timeline)

        def rank_shown(rank: str) -> bool:
            header = timeline.lines.find(kind=PROCESS, process=timeline.first_process_of(rank))
            return header in timeline.state.visible_lines()

        assert rank_shown("rank 0") and not rank_shown("rank 1")
        await pilot.press("5")
        await settle(app, pilot)
        pane = app.query_one(InsightsPane)
        view = pane.table_view()
        for rank in ("rank 1", "rank 0"):
            finding = next(f for f in pane.findings if f.evidence and f.evidence[0].slice
                           is None and f.evidence[0].group == rank)
            view.focus()
            await press_until(app, pilot, "up", lambda: view.cursor == 0)
            await press_until(app, pilot, "down", lambda f=finding: pane.highlighted is f)
            await pilot.press("enter")
            await settle(app, pilot)
            evidence = finding.evidence[0]
            assert timeline.range == (evidence.start_ns - timeline.shift_of_group(rank),
                                      evidence.end_ns - timeline.shift_of_group(rank))
            assert rank_shown(rank) and not rank_shown({"rank 0": "rank 1",
                                                        "rank 1": "rank 0"}[rank])
            await pilot.press("n")  # the next evidence of the same rank: still in view
            await settle(app, pilot)
            assert pane.evidence_number == 1 and rank_shown(rank)
