"""TableView on its own: virtual scrolling over many rows, sort keys and clicks, filters,
totals, ratio bars, choosing a row."""

from __future__ import annotations

import numpy as np
from textual import events
from textual.app import App, ComposeResult
from tui_support import press_again

from proftui.core.model.table import Column, Table
from proftui.core.tables.query import format_cell
from proftui.tui.widgets.table import TableView, cut


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
        await pilot.press("S")
        assert view.sort == (1, False) and values[view.order[0]] == np.nanmin(values)
        await pilot.press("left", "S")
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


def _wide_table(n_rows: int = 30, n_numbers: int = 44) -> Table:
    """A name and 44 numeric columns (45 in all), each column's values distinct per row."""
    names = np.array([f"kernel_{i:03d}" for i in range(n_rows)], dtype=object)
    columns = [Column("Op Name", "Op Name", "", "text", names)]
    for k in range(1, n_numbers + 1):
        values = ((np.arange(n_rows) * (k + 7)) % n_rows + k * 1000).astype(float)
        columns.append(Column(f"c{k:02d}(us)", f"c{k:02d}", "us", "number", values))
    return Table("op_summary", "w.csv", columns, n_rows)


def _scroll(view: TableView, kind, **keys) -> None:
    event = kind(view, 5, 3, 0, 0, 0, keys.get("shift", False), False, False)
    view.post_message(event)


async def test_wide_table_scrolls_sideways_with_the_first_column_kept() -> None:
    table = _wide_table()
    app = _Host(table)
    async with app.run_test(size=(90, 20)) as pilot:
        view = app.query_one(TableView)
        view.sort_by(0, False)  # by name: row k is kernel_k
        await pilot.pause()
        header = view.render_line(0).text
        assert header.startswith("Op Name") and "c44(us)" not in header
        assert header.endswith("»")  # more to the right
        # To the last column with the arrows: it scrolls into view, the names stay.
        await press_again(app, pilot, "right", 50)
        assert view.column == 44
        header = view.render_line(0).text
        assert header.startswith("Op Name") and "c44(us)" in header and "c01(us)" not in header
        last = table.columns[44]
        for y in (1, 2, 3):
            row = int(view.order[y - 1])
            line = view.render_line(y).text
            assert line.startswith(f"kernel_{row:03d}")
            assert line.rstrip().endswith(format_cell(last, last.values[row]))
        # Sorting by the column brought into view orders the rows by it.
        await pilot.press("S")
        assert view.sort == (44, True)
        shown = last.values[view.order]
        assert (np.diff(shown) <= 0).all() and not (np.diff(last.values) <= 0).all()
        assert view.render_line(1).text.startswith(f"kernel_{int(np.argmax(last.values)):03d}")
        # Pages back to the start (shift+left and <), then a page on (>).
        while view.left > 1:
            await pilot.press("less_than_sign")
        assert "c01(us)" in view.render_line(0).text and view.column >= 1
        await pilot.press("home")
        left = view.left
        await pilot.press("greater_than_sign")
        assert view.left > left and view._whole(view.column)
        await pilot.press("shift+left")
        assert view.left == left


async def test_the_mouse_wheel_scrolls_sideways_with_shift_or_the_horizontal_wheel() -> None:
    app = _Host(_wide_table())
    async with app.run_test(size=(90, 20)) as pilot:
        view = app.query_one(TableView)
        assert view.left == 1
        _scroll(view, events.MouseScrollRight)
        _scroll(view, events.MouseScrollDown, shift=True)
        await pilot.pause()
        assert view.left == 3 and view.cursor == 0  # sideways, not down
        _scroll(view, events.MouseScrollLeft)
        await pilot.pause()
        assert view.left == 2
        _scroll(view, events.MouseScrollDown)
        await pilot.pause()
        assert view.left == 2 and view.cursor == 3  # the plain wheel moves the rows
        assert view.render_line(1).text.startswith("kernel_")
        # A click on a header scrolled into view sorts by that column.
        n, x, _ = view.visible_columns()[2]
        await pilot.click(TableView, offset=(x + 1, 0))
        assert n == 3 and view.sort == (view.shown_columns[n], True) and view.column == n


async def test_columns_share_the_width_there_is() -> None:
    names = np.array(["x" * 70, "y" * 10], dtype=object)
    table = Table("ops", "", [Column("Name", "Name", "", "text", names),
                              Column("Total", "Total", "ns", "number", np.array([5e6, 1e3])),
                              Column("Count", "Count", "", "number", np.array([3.0, 1.0]))],
                  2)
    # Total needs 9 cells (its totals "5.001 ms" and a space), Count 6 ("Count" and a space).
    for width, name_width in ((200, 71), (60, 60 - 9 - 6)):
        app = _Host(table)
        async with app.run_test(size=(width, 10)):
            view = app.query_one(TableView)
            assert view._widths[0] == name_width  # all it needs, or what the numbers leave
            assert not view.scrolls
            assert view.render_line(0).text.split()[-1] == "Count"


def test_text_is_cut_in_the_middle_so_that_names_differing_at_the_end_stay_apart() -> None:
    assert cut("Default/network/DropOutDoMask-op152", 25, middle=True) == (
        "Default/netw…DoMask-op152")
    assert cut("Default/network/DropOutDoMask-op152", 25) == "Default/network/DropOutD…"
    assert cut("short", 5, middle=True) == "short"
    assert cut("abcdef", 1) == "…" and cut("abcdef", 0) == ""
