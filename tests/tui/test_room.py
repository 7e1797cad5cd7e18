"""Small terminals first-class: at 80x24 every bundled sample shows at least 8 track rows on
its first screen (all of them where it has fewer), under its utilisation lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_support import first_screen_rows

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
PROFILES = sorted(p.name for p in SAMPLES.iterdir()
                  if p.suffix != ".py" and not p.name.startswith((".", "__")))


def test_every_sample_is_checked() -> None:
    assert {"kineto_demo.pt.trace.json", "torch_npu", "cluster_2rank", "ascend_cann8",
            "ascend_old_layout"} <= set(PROFILES)


@pytest.mark.parametrize("name", PROFILES)
async def test_eight_track_rows_at_80x24(name: str) -> None:
    shown, total = await first_screen_rows(SAMPLES / name, (80, 24))
    assert total > 0
    assert shown >= min(8, total), f"{name}: {shown} track rows of {total} at 80x24"


async def test_the_footer_keeps_its_keys_at_80_columns() -> None:
    """At 80 columns every key of the footer shows whole, ? (the keys) and e (export) too."""
    from textual.widgets import Footer
    from tui_support import settle

    from proftui.tui.app import ProftuiApp

    app = ProftuiApp(str(SAMPLES / "torch_npu"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        footer = app.query_one(Footer)
        shown = list(footer.query("FooterKey, FooterLabel"))
        texts = [str(item.render()).strip() for item in shown]
        assert {"? Keys", "e Export", "/ Search", "q Quit"} <= set(texts), texts
        assert all(item.region.right <= 80 and item.region.width > 0 for item in shown)


@pytest.mark.parametrize("rows", [14, 20])
async def test_a_short_terminal_keeps_the_status_line_and_the_footer_in_sight(rows: int) -> None:
    """Below 24 rows (a split pane) the timeline and the panes shrink as 3:2; the screen
    does not scroll the status line out of sight, and the footer stays on its last row."""
    from textual.widgets import Footer
    from tui_support import settle

    from proftui.tui.app import ProftuiApp

    app = ProftuiApp(str(SAMPLES / "kineto_demo.pt.trace.json"))
    async with app.run_test(size=(100, rows)) as pilot:
        await settle(app, pilot)
        assert app.screen.has_class("-short")
        assert app.screen.scroll_offset.y == 0
        assert app.query_one("#status").region.y == 0
        assert app.query_one(Footer).region.y == rows - 1
        timeline, panes = app.query_one("#main").region, app.query_one("#panes").region
        assert timeline.height >= 6 and panes.height >= 4
        assert panes.bottom <= rows - 1
