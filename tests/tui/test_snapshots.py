"""Snapshots of the timeline at fixed sizes on the bundled samples (text of every line).

A changed picture fails the test; after checking the new picture by eye, refresh the files
with `PROFTUI_UPDATE_SNAPSHOTS=1 python -m pytest tests/tui/test_snapshots.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from proftui.tui.app import ProftuiApp
from proftui.tui.timeline import Timeline

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SNAPSHOTS = Path(__file__).parent / "snapshots"

CASES = [
    ("kineto_100x30", "kineto_demo.pt.trace.json", (100, 30), ()),
    ("kineto_80x24_zoomed", "kineto_demo.pt.trace.json", (80, 24), ("w", "w", "w", "enter")),
    ("ascend_cann8_120x40", "ascend_cann8", (120, 40), ()),
    ("ascend_old_layout_100x30", "ascend_old_layout", (100, 30), ("g", "2", "enter")),
    ("torch_npu_100x30", "torch_npu", (100, 30), ("down", "enter")),
]


@pytest.mark.parametrize(("name", "sample", "size", "keys"), CASES, ids=[c[0] for c in CASES])
async def test_timeline_snapshot(name, sample, size, keys) -> None:
    app = ProftuiApp(str(SAMPLES / sample))
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
        await app.workers.wait_for_complete()
        await pilot.pause()
        timeline = app.query_one(Timeline)
        lines = [timeline.render_line(y).text.rstrip() for y in range(timeline.size.height)]
        lines.append("-" * size[0])
        lines += str(app.query_one("#details").render()).splitlines()
        picture = "\n".join(lines) + "\n"
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("PROFTUI_UPDATE_SNAPSHOTS"):
        path.write_text(picture, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with PROFTUI_UPDATE_SNAPSHOTS=1"
    assert picture == path.read_text(encoding="utf-8")
