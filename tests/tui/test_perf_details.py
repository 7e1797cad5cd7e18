"""The details pane shows the profiler's row behind a selected device slice (its shapes,
dtypes, counters and the op that launched it) and, for a host op, the tasks it launched."""

from __future__ import annotations

import sys
from pathlib import Path

from textual.widgets import Static
from tui_support import settle

from proftui.tui.app import ProftuiApp
from proftui.tui.widgets.timeline import Timeline

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.core.helpers import write_trace  # noqa: E402
from tests.core.test_perf_instances import TS_NS, _ascend_profile, _kineto_events  # noqa: E402


def _slice(app, name: str, start_ns: int | None = None) -> int:
    index = app.index
    found = [i for i in range(index.n_slices) if index.slice_name(i) == name and (
        start_ns is None or int(index.arrays["slices.start"][i]) == start_ns)]
    return found[0]


async def _details_of(app, pilot, i: int) -> str:
    app.query_one(Timeline).select(i)
    await settle(app, pilot)
    return str(app.query_one("#details", Static).render())


async def test_an_ascend_task_shows_its_kernel_details_row_and_host_op(tmp_path) -> None:
    app = ProftuiApp(str(_ascend_profile(tmp_path)))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app, pilot)
        text = await _details_of(app, pilot, _slice(app, "MatMul1", TS_NS))
        assert "row    kernel_details.csv  type MatMulV2" in text
        assert "shapes [32x9216, 9216x4096] -> [32x4096]" in text
        assert "dtypes FLOAT, FLOAT" in text
        assert "aic_mac_ratio 0.519" in text and "cube_utilization(%) 66.3" in text
        assert "host   aten::mm  [32x9216, 9216x4096]  float, float" in text
        # the other task on the stream has no row: no such section
        text = await _details_of(app, pilot, _slice(app, "MatMul1", TS_NS + 1_000_000))
        assert "row " not in text and "shapes" not in text
        text = await _details_of(app, pilot, _slice(app, "aten::mm"))
        assert "device 1 task launched, 313.886 us in all: MatMul1" in text


async def test_a_kineto_kernel_shows_its_host_ops_input_dims(tmp_path) -> None:
    app = ProftuiApp(str(write_trace(tmp_path / "k.json", _kineto_events())))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app, pilot)
        text = await _details_of(app, pilot, _slice(app, "sm90_xmma_gemm_bf16"))
        assert "row    trace  type aten::addmm" in text
        assert "host   aten::addmm  [4096, 64x1024, 1024x4096, -, -]" in text
        assert "grid 64, block 128, registers per thread 168" in text
        text = await _details_of(app, pilot, _slice(app, "aten::linear"))
        assert "shapes [64x1024, 4096x1024, 4096]" in text
        assert "device 2 tasks launched, 30 us in all: sm90_xmma_gemm_bf16, other_kernel" in \
            text
