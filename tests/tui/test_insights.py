"""The Insights pane (the advisor's findings, jumping to their evidence) and the breakdown
columns of the Iterations pane."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from textual.widgets import Static, TabbedContent
from tui_support import settle

from proftui.tui.app import ProftuiApp
from proftui.tui.panes.insights import InsightsPane
from proftui.tui.widgets.table import TableView
from proftui.tui.widgets.timeline import Timeline

SAMPLES = Path(__file__).resolve().parents[2] / "samples"




def _rules(app: ProftuiApp) -> list[str]:
    view = app.query_one("#insights-table", TableView)
    return [str(view.table.find("Rule").values[r]) for r in view.order.tolist()]


async def test_insights_pane_lists_the_findings_of_a_kineto_trace() -> None:
    app = ProftuiApp(str(SAMPLES / "kineto_demo.pt.trace.json"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await _insights_pane_lists_the_findings(app, pilot, "input_pipeline")


async def test_torch_npu_findings_then_the_breakdown_then_the_evidence() -> None:
    """One session on the torch_npu sample, checks in turn: the Insights pane lists the
    findings, the Iterations pane shows the breakdown, then Enter in the Insights pane shows
    the first evidence and n walks to the next (the timeline untouched until then); the
    Communication pane says the profile has no communication data."""
    app = ProftuiApp(str(SAMPLES / "torch_npu"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await _insights_pane_lists_the_findings(app, pilot, "ai_cpu")
        await _iterations_pane_shows_the_breakdown(app, pilot)
        await _enter_shows_the_first_evidence_and_n_walks_to_the_next(app, pilot)
        await _a_profile_without_communication_data_says_so(app, pilot)


async def _a_profile_without_communication_data_says_so(app, pilot) -> None:
    from proftui.tui.panes.comm import CommPane

    await pilot.press("6")
    await settle(app, pilot)
    assert "no communication data in this profile" in str(
        app.query_one("#comm-title", Static).render())
    assert not app.query_one("#comm-table", TableView).display
    assert app.query_one(CommPane).report is not None


async def _insights_pane_lists_the_findings(app, pilot, rule: str) -> None:
    await pilot.press("5")
    await settle(app, pilot)
    assert app.query_one(TabbedContent).active == "pane-insights"
    assert isinstance(app.focused, TableView) and app.focused.id == "insights-table"
    rules = _rules(app)
    assert rules[0] == rule  # the most time lost first
    view = app.query_one("#insights-table", TableView)
    assert view.table.find("Group") is None  # one group: no Group column
    lost = view.table.find("Time lost/step").values
    assert lost[0] > 0 and list(lost) == sorted(lost, reverse=True)
    finding = str(app.query_one("#insights-finding", Static).render())
    assert finding.startswith(f"high {rule}:") and "suggestion:" in finding
    assert "evidence:" in finding
    skipped = str(app.query_one("#insights-skipped", Static).render())
    assert "skipped gc: no garbage-collection events" in skipped


async def _enter_shows_the_first_evidence_and_n_walks_to_the_next(app, pilot) -> None:
    await pilot.press("5")
    await settle(app, pilot)
    finding = app.query_one(InsightsPane).findings[0]
    first, second = finding.evidence[:2]
    timeline = app.query_one(Timeline)
    assert not (timeline.view_start <= first.start_ns and timeline.view_end
                <= first.end_ns * 2 - first.start_ns)  # the whole trace, not the range
    await pilot.press("enter")
    await settle(app, pilot)
    assert timeline.range == (first.start_ns, first.end_ns)
    assert timeline.view_start <= first.start_ns < first.end_ns <= timeline.view_end
    assert timeline.view_end - timeline.view_start < 2 * (first.end_ns - first.start_ns)
    assert timeline.display
    assert first.slice is not None and timeline.selected == first.slice  # the slice
    assert finding.evidence[0].label in str(app.query_one("#details", Static).render())
    title = str(app.query_one("#insights-title", Static).render())
    assert f"evidence 1 of {len(finding.evidence)}" in title
    await pilot.press("n")  # the pane's n, not the search's
    await settle(app, pilot)
    assert timeline.range == (second.start_ns, second.end_ns)
    assert timeline.view_start <= second.start_ns < second.end_ns <= timeline.view_end
    assert timeline.selected == second.slice
    assert "evidence 2 of" in str(app.query_one("#insights-title", Static).render())
    assert "evidence 2 of" in str(app.query_one("#status", Static).render())
    assert app.query_one("#ops").window.start_ns == second.start_ns  # Ops follow the range
    await pilot.press("N")
    await settle(app, pilot)
    assert timeline.range == (first.start_ns, first.end_ns)


async def _iterations_pane_shows_the_breakdown(app, pilot) -> None:
    await pilot.press("4")
    await settle(app, pilot)
    view = app.query_one("#iterations-table", TableView)
    headers = [view.table.columns[i].header for i in view.shown_columns]
    for name in ("Compute", "Comm exposed", "Overlapped", "Memcpy exposed", "Idle",
                 "Prepare", "Dataloader", "Syncs", "Duration", "Mark",
                 "Start (ms, capture)", "Start (us, profiler clock)"):
        assert name in headers, name
    assert headers.index("Compute") < headers.index("Start (us, profiler clock)")
    compute = view.table.find("Compute").values
    durations = view.table.find("Duration").values
    assert np.all(compute > 0) and np.all(compute <= durations)
    assert np.all(view.table.find("Syncs").values == 0)
    assert np.all(np.isnan(view.table.find("Dataloader").values))  # not marked: blank
    # On screen, at 120 columns: the Compute header and a value of iteration 1.
    lines = [view.render_line(y).text for y in range(3)]
    assert "Compute" in lines[0]
    assert "2.667 ms" in lines[1] or "2.667 ms" in lines[2]


async def test_no_iterations_nor_device_work_is_one_readable_line(tmp_path) -> None:
    path = tmp_path / "cpu_only.json"
    path.write_text(json.dumps([{"ph": "X", "name": f"f{i}", "pid": 1, "tid": 1,
                                 "ts": i * 10, "dur": 5} for i in range(5)]))
    app = ProftuiApp(str(path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        pane = app.query_one(InsightsPane)
        assert pane.advice is not None and not pane.findings
        text = str(app.query_one("#insights-finding", Static).render())
        assert text.startswith("No findings: ") and "\n" not in text
        assert not app.query_one("#insights-table", TableView).display
        assert "skipped" in str(app.query_one("#insights-skipped", Static).render())
        await pilot.press("enter", "n")  # nothing to walk: no error
        await settle(app, pilot)
        assert app.query_one(Timeline).range is None
