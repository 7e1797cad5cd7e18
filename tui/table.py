"""TableView: a table over numpy columns, for tables of millions of rows.

Textual's DataTable makes objects per cell and slows down past some ten thousand rows; this
widget keeps the columns as they are (a :class:`~proftui.core.importers.csv_summary.Table`)
and an order array (the rows left by the filter, sorted), and formats only the rows on screen.
Sorting and filtering are :mod:`proftui.core.table_query` calls, so the headless commands give
the same answers. Numbers are right-aligned and human-formatted, headers carry their units and
the sort arrow, the last line holds the totals of the rows shown, and ratio columns (unit %)
get a bar in the cell.
"""

from __future__ import annotations

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from proftui.core.errors import ProftuiError
from proftui.core.importers.csv_summary import Column, Table
from proftui.core.table_query import default_sort, filter_mask, format_cell, sort_order, totals
from proftui.tui.safe import safe

MAX_TEXT_WIDTH = 48
SAMPLE_ROWS = 200  # rows looked at to size the columns


class TableView(Widget, can_focus=True):
    """Rows of a table: sortable by any column, filterable, with a totals line."""

    DEFAULT_CSS = """
    TableView { height: 1fr; }
    """
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "move(-1000000000)", "First", show=False),
        Binding("end", "move(1000000000)", "Last", show=False),
        Binding("left", "column(-1)", "Column left", show=False),
        Binding("right", "column(1)", "Column right", show=False),
        Binding("s", "sort", "Sort"),
        Binding("enter", "choose", "Open", show=False),
    ]

    class RowChosen(Message):
        """Enter (or a double click) on a row; `row` indexes the table's rows."""

        def __init__(self, view: TableView, row: int) -> None:
            super().__init__()
            self.view = view
            self.row = row

        @property
        def control(self) -> TableView:
            return self.view

    def __init__(self, *, hidden: tuple[str, ...] = (), id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.table: Table | None = None
        self.hidden = set(hidden)  # column names not shown (ids kept for the program)
        self.order = np.zeros(0, np.int64)
        self.sort: tuple[int, bool] | None = None
        self.filter_text = ""
        self.cursor = 0
        self.top = 0
        self.column = 0
        self.message = ""
        self._widths: list[int] = []
        self._shown: list[int] = []

    # -- data -----------------------------------------------------------------------------------

    def show(self, table: Table, keep_position: bool = False) -> None:
        """Show `table`, sorted by its usual first move unless a sort is kept."""
        same = self.table is not None and [c.header for c in self.table.columns] == [
            c.header for c in table.columns]
        self.table = table
        self._shown = [i for i, c in enumerate(table.columns) if c.name not in self.hidden]
        if not (keep_position and same):
            self.sort = default_sort(table)
            self.filter_text = ""
            self.cursor = self.top = 0
            # The column cursor starts on the sorted column: `s` then turns the order round.
            sorted_column = self.sort[0] if self.sort is not None else -1
            self.column = self._shown.index(sorted_column) if sorted_column in self._shown else 0
        self._apply()

    def set_filter(self, text: str) -> None:
        """Keep the rows matching `text` (see :func:`proftui.core.table_query.filter_mask`);
        an invalid expression leaves the rows as they are and says why in `message`."""
        self.filter_text = text.strip()
        self._apply()

    def sort_by(self, column: int, descending: bool) -> None:
        self.sort = (column, descending)
        self._apply()

    def _apply(self) -> None:
        table = self.table
        if table is None:
            return
        rows = np.arange(table.n_rows)
        self.message = ""
        if self.filter_text:
            try:
                rows = np.flatnonzero(filter_mask(table, self.filter_text))
            except ProftuiError as exc:
                self.message = str(exc)
        if self.sort is not None:
            order = sort_order(table, self.sort[0], self.sort[1])
            keep = np.zeros(table.n_rows, bool)
            keep[rows] = True
            rows = order[keep[order]]
        self.order = rows
        self.cursor = min(self.cursor, max(len(rows) - 1, 0))
        self._size_columns()
        self._keep_cursor_visible()
        self.refresh()

    @property
    def shown_columns(self) -> list[int]:
        """Indices of the columns on screen, in order."""
        return list(self._shown)

    @property
    def current_row(self) -> int:
        """The table row under the cursor, or -1."""
        return int(self.order[self.cursor]) if len(self.order) else -1

    # -- layout ---------------------------------------------------------------------------------

    def _size_columns(self) -> None:
        table = self.table
        assert table is not None
        sample = self.order[:SAMPLE_ROWS]
        sums = totals(table, self.order)
        widths = []
        for n, i in enumerate(self._shown):
            column = table.columns[i]
            cells = [format_cell(column, column.values[r]) for r in sample.tolist()]
            # The totals line too: its first cell counts the rows.
            cells.append(f"{len(self.order):,} rows" if n == 0 else (
                "" if sums[i] is None else format_cell(column, sums[i])))
            width = max([len(self._header(i)), *map(len, cells)], default=4)
            widths.append(min(width, MAX_TEXT_WIDTH) + 1)
        self._widths = widths

    def _header(self, i: int) -> str:
        column = self.table.columns[i]  # type: ignore[union-attr]
        arrow = ""
        if self.sort is not None and self.sort[0] == i:
            arrow = " ▼" if self.sort[1] else " ▲"
        return f"{column.header}{arrow}"

    @property
    def body_height(self) -> int:
        return max(self.size.height - 2, 1)

    def _keep_cursor_visible(self) -> None:
        if self.cursor < self.top:
            self.top = self.cursor
        elif self.cursor >= self.top + self.body_height:
            self.top = self.cursor - self.body_height + 1

    # -- actions --------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        if not len(self.order):
            return
        self.cursor = min(max(self.cursor + step, 0), len(self.order) - 1)
        self._keep_cursor_visible()
        self.refresh()

    def action_page(self, step: int) -> None:
        self.action_move(step * max(self.body_height - 1, 1))

    def action_column(self, step: int) -> None:
        if self._shown:
            self.column = min(max(self.column + step, 0), len(self._shown) - 1)
            self.refresh()

    def action_sort(self) -> None:
        """Sort by the current column: descending first for numbers, then the other way."""
        if self.table is None or not self._shown:
            return
        column = self._shown[self.column]
        numeric = self.table.columns[column].kind != "text"
        if self.sort is not None and self.sort[0] == column:
            self.sort_by(column, not self.sort[1])
        else:
            self.sort_by(column, numeric)

    def action_choose(self) -> None:
        if self.current_row >= 0:
            self.post_message(self.RowChosen(self, self.current_row))

    def on_click(self, event: events.Click) -> None:
        if self.table is None:
            return
        if event.y == 0:  # a header: sort by it
            x = 0
            for n, width in enumerate(self._widths):
                if x <= event.x < x + width:
                    self.column = n
                    self.action_sort()
                    return
                x += width
        elif 1 <= event.y <= self.body_height:
            row = self.top + event.y - 1
            if row < len(self.order):
                self.cursor = row
                self.refresh()
                if event.chain >= 2:
                    self.action_choose()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.action_move(3)
        event.stop()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.action_move(-3)
        event.stop()

    # -- painting -------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if self.table is None:
            return Strip([Segment(" " * width, base)], width)
        header_style = base + Style(bold=True, reverse=False, underline=True)
        if y == 0:
            cells = [(self._header(i), self.table.columns[i], None) for i in self._shown]
            return self._row_strip(cells, header_style, width, header=True)
        if y == self.size.height - 1:
            if self.message:  # a filter that could not be used says why where totals go
                text = safe(f"filter not applied: {self.message}")[:width].ljust(width)
                return Strip([Segment(text, base + Style(bold=True, color="red"))], width)
            sums = totals(self.table, self.order)
            cells = [(("" if sums[i] is None else format_cell(self.table.columns[i], sums[i]))
                      if n else f"{len(self.order):,} rows", self.table.columns[i], None)
                     for n, i in enumerate(self._shown)]
            return self._row_strip(cells, base + Style(bold=True), width)
        n = self.top + y - 1
        if n >= len(self.order):
            text = "(no rows match the filter)" if y == 1 and self.filter_text else ""
            return Strip([Segment(text[:width].ljust(width), base)], width)
        row = int(self.order[n])
        cells = [(format_cell(column, column.values[row]), column, column.values[row])
                 for column in (self.table.columns[i] for i in self._shown)]
        style = base + Style(reverse=True) if n == self.cursor and self.has_focus else (
            base + Style(bold=True) if n == self.cursor else base)
        return self._row_strip(cells, style, width)

    def _row_strip(self, cells: list[tuple[str, Column, object]], style: Style, width: int,
                   header: bool = False) -> Strip:
        segments = []
        used = 0
        for n, ((text, column, value), cell_width) in enumerate(zip(cells, self._widths)):
            text = safe(text)
            if len(text) > cell_width - 1:
                text = text[: cell_width - 2] + "…"
            numeric = column.kind != "text"
            body = text.rjust(cell_width - 1) if numeric and not header else text.ljust(
                cell_width - 1)
            cell_style = style + Style(underline=True) if (
                header and n == self.column) else style
            segments += self.cell_segments(body, column, None if header else value, cell_style)
            used += cell_width
            if used >= width:
                break
        strip = Strip(segments)
        return strip.crop(0, width).extend_cell_length(width, style)

    def cell_segments(self, body: str, column: Column, value: object,
                      style: Style) -> list[Segment]:
        """One cell (`body`: its text padded to the cell's width less the space after it;
        `value` None in the header): ratio columns get a bar of their value. A subclass may
        paint some columns its own way."""
        if column.unit == "%" and value is not None and not style.reverse:
            filled = self._bar_cells(value, len(body))
            return [Segment(body[:filled], style + Style(bgcolor="#3a5a80")),
                    Segment(body[filled:] + " ", style)]
        return [Segment(body + " ", style)]

    @staticmethod
    def _bar_cells(value: object, width: int) -> int:
        """Cells of a ratio column's bar: its value (a percentage) of the cell's width."""
        try:
            ratio = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return 0
        if ratio != ratio:  # NaN: no bar
            return 0
        return int(round(min(max(ratio, 0.0), 100.0) / 100.0 * width))
