"""TableView on its own: virtual scrolling over many rows, sort keys and clicks, filters,
totals, ratio bars, choosing a row."""

from __future__ import annotations

import numpy as np
from textual.app import App, ComposeResult

from proftui.core.importers.csv_summary import Column, Table
from proftui.tui.table import TableView


def _table(n: int) -> Table:
    rng = np.random.default_rng(7)
    names = np.array([f"op{i % 97}" for i in range(n)], dtype=object)
    duration = rng.integers(1, 10_000, n).astype(float)
    duration[5] = np.nan
    ratio = duration / np.nansum(duration) * 100
    return Table("op_summary", "t.csv", [
        Column("Op Name", "Op Name", "", "text", names),
        Column("Task Duration(us)", "Task Duration", "us", "number", duration),
        Column("Ratio(%)", "Ratio", "%", "number", ratio),
    ], n)


class _Host(App[None]):
    def __init__(self, table: Table) -> None:
        super().__init__()
        self.table = table
        self.chosen: list[int] = []

    def compose(self) -> ComposeResult:
        yield TableView(id="view")

    def on_mount(self) -> None:
        view = self.query_one(TableView)
        view.show(self.table)
        view.focus()

    def on_table_view_row_chosen(self, message: TableView.RowChosen) -> None:
        self.chosen.append(message.row)


async def test_many_rows_scroll_sort_and_choose() -> None:
    table = _table(300_000)
    app = _Host(table)
    async with app.run_test(size=(90, 20)) as pilot:
        view = app.query_one(TableView)
        values = table.columns[1].values
        # op_summary's first move: Task Duration, longest first, missing last.
        assert view.sort == (1, True)
        shown = values[view.order]
        assert np.isnan(shown[-1]) and (np.diff(shown[:-1]) <= 0).all()
        assert view.render_line(0).text.startswith("Op Name")
        assert "Task Duration(us) ▼" in view.render_line(0).text
        await pilot.press("end")
        assert view.cursor == 299_999
        assert view.render_line(view.size.height - 2).text.strip() != ""  # the last rows
        await pilot.press("home", "down", "down", "enter")
        assert app.chosen == [int(view.order[2])]
        # `s` turns the order round on the sorted column; left then `s` sorts by names.
        await pilot.press("s")
        assert view.sort == (1, False) and values[view.order[0]] == np.nanmin(values)
        await pilot.press("left", "s")
        assert view.sort == (0, False)
        first = [table.columns[0].values[r] for r in view.order[:3]]
        assert first == sorted(first)
        totals_line = view.render_line(view.size.height - 1).text
        assert "300,000 rows" in totals_line and "100.00%" in totals_line


async def test_filters_and_their_errors() -> None:
    table = _table(1000)
    app = _Host(table)
    async with app.run_test(size=(90, 20)) as pilot:
        view = app.query_one(TableView)
        view.set_filter("op1 \"Task Duration\">5ms")
        names = table.columns[0].values[view.order]
        assert len(view.order) and all("op1" in n for n in names)
        assert (table.columns[1].values[view.order] > 5000).all()
        expected = sum(1 for n, d in zip(table.columns[0].values, table.columns[1].values)
                       if "op1" in n and d > 5000)
        assert len(view.order) == expected
        view.set_filter("Nope>3")
        assert "Nope" in view.message and len(view.order) == 1000
        assert "filter not applied" in view.render_line(view.size.height - 1).text
        view.set_filter("zzz")
        assert len(view.order) == 0 and "no rows match" in view.render_line(1).text
        view.set_filter("")
        await pilot.pause()
        assert len(view.order) == 1000 and view.message == ""


async def test_header_click_sorts_and_ratio_cells_get_a_bar() -> None:
    table = _table(50)
    app = _Host(table)
    async with app.run_test(size=(90, 20)) as pilot:
        view = app.query_one(TableView)
        x = sum(view._widths[:2]) + 1  # the third column: Ratio(%)
        await pilot.click(TableView, offset=(x, 0))
        assert view.sort == (2, True)
        await pilot.press("down")  # the cursor leaves row 0: its bar shows
        bar = [s for s in view.render_line(1) if s.style and s.style.bgcolor is not None]
        assert bar and len("".join(s.text for s in bar)) >= 1
