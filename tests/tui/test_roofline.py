"""The roofline in text (`proftui ops --efficiency --roofline`, the Ops pane's R) and the
efficiency view of the command and the pane."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tui_support import run_cli, settle, wait_for

from proftui.core.perf.efficiency import RoofPoint
from proftui.tui.app import ProftuiApp
from proftui.tui.text.roofline import roofline_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.core.perf_inputs import gemm_trace  # noqa: E402

PEAK, BANDWIDTH = 1000e12, 2e12  # ridge at 500 FLOP/B


def _plot(lines: list[str]) -> list[str]:
    """The plot's rows (between the title and the x axis)."""
    return lines[1:lines.index(next(x for x in lines if "└" in x))]


def test_points_sit_under_the_roof_sized_by_their_time() -> None:
    points = [RoofPoint(1000, 500e12, 845, "big gemm"), RoofPoint(0.25, 0.1e12, 150, "add"),
              RoofPoint(10, 1e12, 5, "tiny"), RoofPoint(0, 1e12, 5, "no bytes")]
    lines = roofline_lines(points, PEAK, BANDWIDTH, width=70, height=18)
    plot = _plot(lines)
    assert len(plot) == 16 and all(len(x) <= 70 for x in lines)
    top = next(r for r, x in enumerate(plot) if "─" in x)  # the flat roof: the peak
    gemm = next(r for r, x in enumerate(plot) if "●1" in x)
    add = next(r for r, x in enumerate(plot) if "●2" in x)  # 15% of the time: a big mark
    tiny = next(r for r, x in enumerate(plot) if "·3" in x)  # 0.5%: the smallest mark
    assert top < gemm < tiny < add  # rows count down: higher rate, higher row
    assert plot[gemm].index("●1") > plot[tiny].index("·3") > plot[add].index("●2")
    assert "╱" in "".join(plot)  # the memory roof rises to the ridge
    legend = lines[-3:]
    assert legend[0].startswith("1 ● big gemm: 84.5% of the time, 500 TFLOP/s at 1e+03")
    assert not any("no bytes" in x for x in lines)  # no intensity: off the log axes


def test_no_roof_without_peaks_and_no_points() -> None:
    lines = roofline_lines([RoofPoint(10, 1e12, 10, "x")], None, None)
    assert not any(c in "".join(_plot(lines)) for c in "─╱")
    assert roofline_lines([], PEAK, BANDWIDTH) == ["(no op with a model and a time to plot)"]


def test_ops_efficiency_text_json_and_roofline(tmp_path, capsys) -> None:
    trace = gemm_trace(tmp_path / "t.json")
    code, out, _ = run_cli(capsys, "ops", "--efficiency", "--roofline", trace)
    assert code == 0
    assert "3 op shapes from trace; peaks: NVIDIA H100 SXM5 80GB (named by the profile)" in out
    assert "the models cover 70 us of 75 us device time with shapes (93.3%)" in out
    assert "left out: 5 us of device tasks with no input shapes" in out
    assert "roofline: NVIDIA H100 SXM5 80GB, bf16 matrix peak 989.4 TFLOP/s, 3.35 TB/s" in out
    assert "1 ● aten::mm 64x1024, 1024x4096 bf16: 85.7% of the time" in out
    code, out, _ = run_cli(capsys, "ops", "--efficiency", "--json", trace)
    found = json.loads(out)
    row = found["rows"][0]
    assert row["op"] == "aten::mm" and row["shapes"] == [[64, 1024], [1024, 4096]]
    assert row["dtypes"] == ["c10::BFloat16"] * 2 and row["count"] == 2
    assert row["total_ns"] == 60_000 and row["flops"] == 536_870_912
    assert row["bytes"] == 9_043_968 and row["bound"] == "memory" and row["model"] == "gemm"
    assert found["peaks"]["matrix_tflops"]["bf16"] == 989.4
    assert (found["modelled_ns"], found["total_ns"], found["unshaped_ns"]) == (
        70_000, 75_000, 5_000)
    assert found["rows"][2]["no_model"] and found["rows"][2]["flops"] is None


def test_ops_efficiency_refuses_a_bad_peaks_file(tmp_path, capsys) -> None:
    bad = tmp_path / "peaks.csv"
    bad.write_text("not,a,peaks,file\n")
    code, out, err = run_cli(capsys, "ops", "--efficiency", "--peaks", bad,
                             gemm_trace(tmp_path / "t.json"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


async def _efficiency_view(app, pilot):
    """The Ops pane, switched to its efficiency view (E) once the app has settled."""
    await settle(app, pilot)
    await pilot.press("2")
    await settle(app, pilot)
    pane = app.query_one("#ops")
    app.screen.set_focus(pane.query_one("#ops-table"))
    await pilot.press("E")
    await wait_for(pilot, lambda: pane.efficiency is not None)
    return pane


async def test_ops_pane_efficiency_view_roofline_and_calls(tmp_path) -> None:
    app = ProftuiApp(str(gemm_trace(tmp_path / "t.json")))
    async with app.run_test(size=(160, 50)) as pilot:
        pane = await _efficiency_view(app, pilot)
        title = str(pane.query_one("#ops-title").render())
        assert "Op efficiency of whole trace: 3 op shapes from trace" in title
        assert "the models cover 93% of 75 us; peaks: NVIDIA H100 SXM5 80GB" in title
        assert pane.query_one("#ops-table").table.kind == "efficiency"
        await pilot.press("R")
        await settle(app, pilot)
        plot = str(pane.query_one("#ops-roofline").render())
        assert "roofline: NVIDIA H100 SXM5 80GB" in plot and "●1" in plot
        assert not pane.query_one("#ops-table").display  # in the table's place
        await pilot.press("R")  # the table again
        await settle(app, pilot)
        assert pane.query_one("#ops-table").display
        assert not pane.query_one("#ops-roofline").display
        await pilot.press("enter")  # the first row's calls: two, each 30 µs
        await settle(app, pilot)
        calls = pane.query_one("#ops-instances")
        assert calls.display and calls.table.find("Duration").values.tolist() == [30_000] * 2
        await pilot.press("escape", "E")
        await wait_for(pilot, lambda: pane.query_one("#ops-table").table.kind
                          == "ops")


async def test_the_viewer_judges_by_the_peaks_asked_for(tmp_path) -> None:
    """`proftui PATH --peak-tflops X --peak-tbps Y`: the Ops pane's E uses them where the
    profile names no device."""
    app = ProftuiApp(str(gemm_trace(tmp_path / "t.json", device=None)),
                     peaks={"tflops": 100.0, "tbps": 1.0})
    async with app.run_test(size=(160, 50)) as pilot:
        pane = await _efficiency_view(app, pilot)
        assert pane.efficiency.peaks.matrix["bf16"] == 100e12
        assert "--peak-tflops 100 --peak-tbps 1" in str(pane.query_one("#ops-title").render())
