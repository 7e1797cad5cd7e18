"""The Communication pane (key 6): the tables of `proftui comm`, the flags, and Enter on a
collective showing it on the timeline."""

from __future__ import annotations

import json
from pathlib import Path

from comm_helpers import AG, AR, write_text
from textual.widgets import Static, TabbedContent
from tui_support import settle

from proftui.tui.app import ProftuiApp
from proftui.tui.widgets.table import TableView
from proftui.tui.widgets.timeline import Timeline


def _profile(root: Path, names: tuple[str, ...] = (AG, AR)) -> Path:
    """A torch_npu rank whose HCCL track holds `names` (50 µs each, 100 µs apart) and whose
    communication summary is comm_helpers'."""
    out = root / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    write_text(out)
    events = [{"ph": "M", "name": "process_name", "pid": 9, "args": {"name": "HCCL"}},
              {"ph": "M", "name": "thread_name", "pid": 9, "tid": 1,
               "args": {"name": "Group 0 Communication"}},
              {"ph": "X", "name": "MatMul", "pid": 9, "tid": 2, "ts": 0, "dur": 500}]
    events += [{"ph": "X", "name": n, "pid": 9, "tid": 1, "ts": 10 + 100 * k, "dur": 50}
               for k, n in enumerate(names)]
    (out / "trace_view.json").write_text(json.dumps(events))
    return root / "rank0_ascend_pt"


def _names(app: ProftuiApp) -> list[str]:
    view = app.query_one("#comm-table", TableView)
    return [str(view.table.find("Collective").values[r]) for r in view.order.tolist()]


def _text(app: ProftuiApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def test_enter_shows_the_collective_then_the_pane_lists_them_and_the_flags(
        tmp_path: Path) -> None:
    """One session, two checks in turn: Enter on a collective shows it on the timeline, then
    the pane lists the collectives, the transports and the links with their flags."""
    app = ProftuiApp(str(_profile(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await _enter_shows_the_collective_on_the_timeline(app, pilot)
        await _the_pane_lists_the_collectives_and_the_flags(app, pilot)


async def _the_pane_lists_the_collectives_and_the_flags(app, pilot) -> None:
    await pilot.press("6")
    await settle(app, pilot)
    assert app.query_one(TabbedContent).active == "pane-comm"
    assert isinstance(app.focused, TableView) and app.focused.id == "comm-table"
    assert _names(app) == [AR, AG]  # the longest elapse first
    view = app.query_one("#comm-table", TableView)
    assert list(view.table.find("Elapse").values) == [2_500_000, 1_000_000]
    assert _text(app, "#comm-title").startswith("[collectives]  transports  links  ranks")
    detail = _text(app, "#comm-detail")
    assert "slow link: step 3: 0 -> 3 HCCS (allreduce) runs at 10.00 GB/s" in detail
    assert "small packets: step 3: 1 of 1 ops on RDMA" in detail
    assert "communication.json: 1 x a figure that is not a number" in detail
    await pilot.press("right_square_bracket")
    await settle(app, pilot)
    assert _text(app, "#comm-title").startswith("collectives  [transports]")
    assert [str(x) for x in view.table.find("Transport").values] == ["HCCS", "RDMA",
                                                                      "SDMA"]
    await pilot.press("right_square_bracket")
    await settle(app, pilot)
    flags = [str(x) for x in view.table.find("Flag").values]
    assert flags[0] == "slow" and view.table.find("Dst").values[0] == "3"


async def _enter_shows_the_collective_on_the_timeline(app, pilot) -> None:
    await pilot.press("6")
    await settle(app, pilot)
    await pilot.press("enter")
    await settle(app, pilot)
    timeline = app.query_one(Timeline)
    assert timeline.selected >= 0 and app.index.slice_name(timeline.selected) == AR
    status = _text(app, "#status")
    assert f"{AR}: elapse 2.5 ms (HCCL), 50 us on the timeline" in status
    detail = _text(app, "#comm-detail")
    assert detail.startswith(f"{AR}: elapse 2.5 ms, transit 1 ms")
    assert "  HCCS: 40.000 MB in 2 ms, 20.000 GB/s, 2 packets, 1 large" in detail


async def test_a_collective_not_on_the_timeline_is_said_so(tmp_path: Path) -> None:
    app = ProftuiApp(str(_profile(tmp_path, names=(AG,))))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.query_one(Timeline).selected < 0
        assert f"{AR} is not on the timeline." in _text(app, "#status")


# A profile without communication data says so: checked in the torch_npu sample's session
# of test_insights.py (test_torch_npu_findings_then_the_breakdown_then_the_evidence).
