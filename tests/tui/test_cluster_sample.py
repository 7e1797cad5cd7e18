"""The bundled two-rank sample in the app: the Cluster and Comm panes have its story."""

from __future__ import annotations

import html
import re
from pathlib import Path

from textual.widgets import Static
from tui_support import settle

from proftui.tui.app import ProftuiApp
from proftui.tui.panes.cluster import HeatStrip
from proftui.tui.widgets.table import TableView

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "cluster_2rank"


def _text(app: ProftuiApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


def _screen(app: ProftuiApp) -> str:
    """The text the terminal shows."""
    svg = app.export_screenshot()
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    return html.unescape("".join(texts)).replace("\xa0", " ")


async def test_the_strip_is_first_painted_from_its_first_cell_then_the_story() -> None:
    """One session, two checks in turn: the Cluster pane's strip is first painted from its
    first cell; the Cluster and Comm panes tell the sample's story."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await _the_strip_is_first_painted_from_its_first_cell(app, pilot)
        await _the_cluster_and_comm_panes_tell_the_samples_story(app, pilot)


async def _the_cluster_and_comm_panes_tell_the_samples_story(app, pilot) -> None:
    await pilot.press("7")
    await settle(app, pilot)
    assert _text(app, "#cluster-title").startswith(
        "2 ranks; spread 0.2 %; slowest: rank 1 step 3 (15.051 ms)")
    strip = app.query_one(HeatStrip)
    assert strip.grid.ranks == ["rank 0", "rank 1"]
    assert strip.grid.iterations == [1, 2, 3, 4] and strip.cursor == (1, 2)
    ranks = app.query_one("#cluster-ranks", TableView).table
    assert list(ranks.find("Rank").values) == ["rank 0", "rank 1"]
    assert list(ranks.find("Collectives").values) == [8, 8]
    await pilot.press("6")
    await settle(app, pilot)
    view = app.query_one("#comm-table", TableView)
    assert view.table.n_rows == 16  # 8 all-reduces on each rank
    first = int(view.order[0])  # the longest: rank 0 waiting at step 3
    assert (view.table.find("Rank").values[first], view.table.find("Step").values[first]) \
        == ("rank 0", 3)
    assert "slow link: rank 1, step 3: 1 -> 0 HCCS (allreduce)" in _text(app, "#comm-detail")


async def _the_strip_is_first_painted_from_its_first_cell(app, pilot) -> None:
    await pilot.press("7")
    await settle(app, pilot)
    strip = app.query_one(HeatStrip)
    assert (strip.top, strip.left) == (0, 0)  # what it means to show
    assert "iteration  1   3" in _screen(app)  # what it shows


async def test_at_80x24_the_ranks_table_is_reached_by_tab() -> None:
    # The strip, the cell's line and the filter left the ranks' table no row on a short
    # screen: the pane scrolls to the table when it takes the focus.
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        await pilot.press("tab")
        await settle(app, pilot)
        view = app.query_one("#cluster-ranks", TableView)
        assert app.focused is view
        shown = view.region.intersection(app.query_one("#panes").region)
        assert shown.height >= 3  # header and both ranks
        assert "rank 0" in view.render_line(1).text and "rank 1" in view.render_line(2).text
