"""Pictures of the app at 80x24 and 200x50 on the bundled samples: the main screen, each pane,
the overview and the help overlay, compared with pytest-textual-snapshot (the plugin Textual
tests itself with).

A changed picture fails the test and the report shows old and new side by side. After checking
the new pictures by eye, refresh them with

    python -m pytest tests/tui/test_snapshots.py --snapshot-update

The pictures live in `__snapshots__/test_snapshots/`. They are drawn by the Textual version
they were taken with; under another version they are skipped rather than failed (see
`SNAPSHOT_TEXTUAL`), since a new Textual redraws borders and colours without anything of ours
changing.
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest
from tui_support import settle

from proftui.tui.app import ProftuiApp

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

# The Textual release the pictures were taken with (update it with the pictures).
SNAPSHOT_TEXTUAL = "8.2.8"

SIZES = {"80x24": (80, 24), "200x50": (200, 50)}

# (name, sample, keys pressed once the profile is open)
CASES = [
    ("kineto_main", "kineto_demo.pt.trace.json", ()),
    ("kineto_zoomed", "kineto_demo.pt.trace.json", ("w", "w", "w", "enter")),
    ("kineto_folded", "kineto_demo.pt.trace.json", ("z",)),
    ("ascend_cann8_main", "ascend_cann8", ()),
    ("ascend_old_layout_iteration_2", "ascend_old_layout", ("g", "2", "enter")),
    ("torch_npu_main", "torch_npu", ("down", "enter")),
    ("ops_pane", "torch_npu", ("2",)),
    ("tables_pane", "torch_npu", ("3",)),
    ("iterations_pane", "torch_npu", ("4",)),
    ("insights_pane", "torch_npu", ("5",)),
    ("comm_pane", "cluster_2rank", ("6",)),
    ("cluster_pane", "cluster_2rank", ("7",)),
    ("cluster_main", "cluster_2rank", ()),
    ("cluster_every_series", "cluster_2rank", ("u",)),
    ("cluster_rank_expanded", "cluster_2rank", ("U",)),
    ("cluster_aligned", "cluster_2rank", ("A", "3", "enter")),
    ("cluster_cell_opened", "cluster_2rank", ("7", "enter")),
    ("export_dialog", "torch_npu", ("3", "e")),
    ("overview", "torch_npu", ("o",)),
    ("help", "kineto_demo.pt.trace.json", ("question_mark",)),
]

pytestmark = pytest.mark.skipif(
    version("textual") != SNAPSHOT_TEXTUAL,
    reason=f"the pictures were drawn by Textual {SNAPSHOT_TEXTUAL}, "
           f"this is {version('textual')}")


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
@pytest.mark.parametrize(("name", "sample", "keys"), CASES, ids=[c[0] for c in CASES])
def test_snapshot(snap_compare, monkeypatch, name, sample, keys, size) -> None:
    if not (SAMPLES / sample).exists():
        pytest.fail(f"sample {sample} missing: run samples/make_samples.py")
    # A relative path, so that the title does not carry where the checkout lives.
    monkeypatch.chdir(SAMPLES)

    async def open_and_press(pilot) -> None:
        await settle(pilot.app, pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot.app, pilot)

    assert snap_compare(ProftuiApp(sample), terminal_size=SIZES[size],
                        run_before=open_and_press)


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
def test_snapshot_launch_and_its_kernel(snap_compare, monkeypatch, size) -> None:
    """The first cudaLaunchKernel of kineto_demo selected, fitted, then zoomed out until its
    kernel is in the window: the flow drawn from the launch to the kernel (at 80x24 the
    kernel's stream is scrolled out above: a marker with the flow's time)."""
    monkeypatch.chdir(SAMPLES)
    sample = "kineto_demo.pt.trace.json"

    async def select_launch(pilot) -> None:
        import numpy as np

        from proftui.tui.widgets.timeline import Timeline

        app = pilot.app
        await settle(app, pilot)
        names = app.index.arrays["slices.name"]
        launch = int(np.flatnonzero(names == app.index.strings.find("cudaLaunchKernel"))[0])
        app.query_one(Timeline).select(launch)
        await settle(app, pilot)
        for key in ("f", "s", "s", "s", "s", "s"):
            await pilot.press(key)
            await settle(app, pilot)

    assert snap_compare(ProftuiApp(sample), terminal_size=SIZES[size],
                        run_before=select_launch)
