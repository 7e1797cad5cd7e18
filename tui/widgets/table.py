"""TableView: a table over numpy columns, for tables of millions of rows.

Textual's DataTable makes objects per cell and slows down past some ten thousand rows; this
widget keeps the columns as they are (a :class:`~proftui.core.model.table.Table`)
and an order array (the rows left by the filter, sorted), and formats only the rows on screen.
Sorting and filtering are :mod:`proftui.core.tables.query` calls, so the headless commands give
the same answers. Numbers are right-aligned and human-formatted, headers carry their units and
the sort arrow, the last line holds the totals of the rows shown, and ratio columns (unit %)
get a bar in the cell.

Columns share the width there is (:func:`proftui.tui.text.widths.fit_widths`); a table wider than
that scrolls sideways a column at a time, its first column kept on screen. `C` chooses the
columns and their order, remembered per kind of table (:mod:`proftui.tui.widgets.columns`).
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

from proftui.core.model.errors import ProftuiError
from proftui.core.model.table import Column, Table
from proftui.core.model.words import plural
from proftui.core.tables.query import (
    default_sort,
    filter_mask,
    format_cell,
    sort_order,
    totals,
)
from proftui.tui.text.safe import safe
from proftui.tui.text.widths import fit_widths
from proftui.tui.widgets.columns import (
    ColumnSettings,
    arrange,
    column_keys,
    default_order,
    layout_of,
    shown_columns,
)

SAMPLE_ROWS = 200  # rows looked at to size the columns
MAX_NEED = 1000  # a column's width never grows past this (one huge cell in a sample)
_NOTED: set[str] = set()  # settings files whose problem was told (once a session)


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
        Binding("shift+left,less_than_sign", "page_columns(-1)", "Columns left", show=False),
        Binding("shift+right,greater_than_sign", "page_columns(1)", "Columns right",
                show=False),
        Binding("S", "sort", "Sort"),  # s is the timeline's zoom out
        Binding("C", "choose_columns", "Columns"),
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
        self.column = 0  # the column cursor: a position in the shown columns
        self.left = 1  # the first shown column drawn after the first (which stays)
        self.message = ""
        self._widths: list[int] = []  # of the shown columns, separator included
        self._order: list[int] = []  # the columns a person may see, in order
        self._shown: list[int] = []  # those not hidden by the column chooser
        self._settings: ColumnSettings | None = None
        self._sums: list = []  # the totals of the rows shown, per column

    # -- data -----------------------------------------------------------------------------------

    def show(self, table: Table, keep_position: bool = False) -> None:
        """Show `table`, sorted by its usual first move unless a sort is kept: with
        `keep_position` the same columns keep everything, other columns (an ops table
        grouped otherwise) keep the sort by a column of the same header."""
        old = self.table
        same = old is not None and column_keys(old) == column_keys(table)
        kept_sort = self._same_column(old, table, self.sort[0]) if (
            keep_position and not same and self.sort is not None) else None
        self.table = table
        layout = self.column_settings().get(table.kind)
        self._order = arrange(table, self.hidden, layout)
        self._shown = shown_columns(table, self._order, layout)
        if not (keep_position and same):
            self.sort = default_sort(table) if kept_sort is None else (
                kept_sort, self.sort[1])  # type: ignore[index]
            self.filter_text = ""
            self.cursor = self.top = 0
            self.left = 1
            # The column cursor starts on the sorted column: `s` then turns the order round.
            sorted_column = self.sort[0] if self.sort is not None else -1
            self.column = self._shown.index(sorted_column) if sorted_column in self._shown else 0
        self.column = min(self.column, max(len(self._shown) - 1, 0))
        self._apply()

    @staticmethod
    def _same_column(old: Table | None, new: Table, column: int) -> int | None:
        """The column of `new` standing for `column` of `old`: the same header, or the
        first column for the first (the key of a grouping)."""
        if old is None or column >= len(old.columns):
            return None
        if column == 0:
            return 0 if new.columns else None
        header = old.columns[column].header
        return next((i for i, c in enumerate(new.columns) if c.header == header), None)

    def column_settings(self) -> ColumnSettings:
        """The remembered column choices (read once per table; a problem told once)."""
        if self._settings is None:
            self._settings = ColumnSettings.load()
            note = self._settings.note
            if note and str(self._settings.path) not in _NOTED and self.is_attached:
                _NOTED.add(str(self._settings.path))
                self.app.notify(note, severity="warning", timeout=10)
        return self._settings

    def set_filter(self, text: str) -> None:
        """Keep the rows matching `text` (see :func:`proftui.core.tables.query.filter_mask`);
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
        self._keep_column_visible()
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
        # Kept for the totals line: summing millions of rows at every paint would make
        # each scroll step wait for it.
        self._sums = sums = totals(table, self.order)
        needs = []
        for n, i in enumerate(self._shown):
            column = table.columns[i]
            cells = [format_cell(column, column.values[r]) for r in sample.tolist()]
            # The totals line too: its first cell counts the rows.
            cells.append(plural(len(self.order), "row") if n == 0 else (
                "" if sums[i] is None else format_cell(column, sums[i])))
            width = max([len(self._header(i)), *map(len, cells)], default=4)
            needs.append(min(width, MAX_NEED) + 1)
        numeric = [table.columns[i].kind != "text" for i in self._shown]
        self._widths = fit_widths(needs, numeric, self.size.width)

    def on_resize(self) -> None:
        if self.table is not None:  # (the pane may have been hidden when it was shown)
            self._size_columns()
            self._keep_column_visible()
            self.refresh()

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

    # -- sideways ---------------------------------------------------------------------------------

    @property
    def scrolls(self) -> bool:
        """Whether the shown columns are wider than the widget (then it scrolls sideways)."""
        return sum(self._widths) > self.size.width

    def visible_columns(self) -> list[tuple[int, int, int]]:
        """(position in the shown columns, x, width) of each column drawn, the first
        always, then from `left` on while there is room (the last may be cut)."""
        if not self._widths:
            return []
        width = self.size.width
        out = [(0, 0, self._widths[0])]
        x = self._widths[0]
        for n in range(self.left, len(self._widths)):
            if x >= width:
                break
            out.append((n, x, self._widths[n]))
            x += self._widths[n]
        return out

    def _whole(self, n: int) -> bool:
        """Whether shown column `n` is drawn whole."""
        width = self.size.width
        return any(k == n and x + w <= width for k, x, w in self.visible_columns())

    @property
    def last_left(self) -> int:
        """The largest `left` worth scrolling to: from there the last column is drawn."""
        room = self.size.width - (self._widths[0] if self._widths else 0)
        left = len(self._widths)
        while left > 1 and room - self._widths[left - 1] >= 0:
            room -= self._widths[left - 1]
            left -= 1
        return max(min(left, len(self._widths) - 1), 1)

    def _keep_column_visible(self) -> None:
        """Scroll so that the column cursor is drawn whole (or as far left as it goes)."""
        if self.size.width <= 0:  # not laid out yet: scrolled when it is (on_resize)
            return
        self.left = min(max(self.left, 1), self.last_left)
        if self.column == 0:
            return
        if self.column < self.left:
            self.left = self.column
        while self.left < self.column and not self._whole(self.column):
            self.left += 1

    def scroll_columns(self, step: int) -> None:
        """Scroll `step` columns sideways; the column cursor stays on a column drawn."""
        if not self._widths:
            return
        self.left = min(max(self.left + step, 1), self.last_left)
        drawn = [n for n, _, _ in self.visible_columns() if n == 0 or self._whole(n)]
        if self.column not in drawn:
            scrolled = [n for n in drawn if n] or drawn
            self.column = min(scrolled, key=lambda n: abs(n - self.column))
        self.refresh()

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
            self._keep_column_visible()
            self.refresh()

    def action_page_columns(self, step: int) -> None:
        """A screenful of columns sideways (shift+arrows, < and >)."""
        page = max(sum(1 for n, _, _ in self.visible_columns() if n and self._whole(n)), 1)
        before = self.left
        self.scroll_columns(step * page)
        if self.left == before and self._shown:  # at an end: the cursor goes there
            self.column = len(self._shown) - 1 if step > 0 else (1 if self.column > 1 else 0)
            self._keep_column_visible()
            self.refresh()

    def action_choose_columns(self) -> None:
        """The column chooser: show, hide and order this kind of table's columns."""
        table = self.table
        if table is None:
            return
        from proftui.tui.widgets.column_chooser import ColumnChooser  # loaded when used

        headers = [c.header for c in table.columns]
        hidden = set(self._order) - set(self._shown)
        title = f"Columns of {table.kind} (remembered for every {table.kind} table)"
        self.app.push_screen(ColumnChooser(title, headers, self._order, hidden,
                                           default_order(table, self.hidden)),
                             self._columns_chosen)

    def _columns_chosen(self, chosen: tuple[list[int], set[int]] | None) -> None:
        table = self.table
        if chosen is None or table is None:
            return
        order, hidden = chosen
        layout = layout_of(table, order, hidden, self.hidden)
        problem = self.column_settings().put(table.kind, layout)
        if problem:
            self.app.notify(problem, severity="warning", timeout=10)
        current = self._shown[self.column] if self._shown else -1
        self._order = list(order)
        self._shown = shown_columns(table, self._order, layout)
        self.column = self._shown.index(current) if current in self._shown else 0
        self.left = 1
        self._apply()

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
            for n, x, width in self.visible_columns():
                if x <= event.x < x + width:
                    self.column = n
                    self._keep_column_visible()
                    self.action_sort()
                    return
        elif 1 <= event.y <= self.body_height:
            row = self.top + event.y - 1
            if row < len(self.order):
                self.cursor = row
                self.refresh()
                if event.chain >= 2:
                    self.action_choose()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        if event.shift or event.ctrl:  # as Textual's scrolling widgets: sideways
            self.scroll_columns(1)
        else:
            self.action_move(3)
        event.stop()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if event.shift or event.ctrl:
            self.scroll_columns(-1)
        else:
            self.action_move(-3)
        event.stop()

    def on_mouse_scroll_right(self, event: events.MouseScrollRight) -> None:
        self.scroll_columns(1)
        event.stop()

    def on_mouse_scroll_left(self, event: events.MouseScrollLeft) -> None:
        self.scroll_columns(-1)
        event.stop()

    # -- painting -------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        table = self.table
        if table is None:
            return Strip([Segment(" " * width, base)], width)
        drawn = self.visible_columns()
        header_style = base + Style(bold=True, reverse=False, underline=True)
        if y == 0:
            cells = [(self._header(self._shown[n]), self._shown[n], None) for n, _, _ in drawn]
            return self._row_strip(cells, drawn, header_style, width, header=True)
        if y == self.size.height - 1:
            if self.message:  # a filter that could not be used says why where totals go
                text = safe(f"filter not applied: {self.message}")[:width].ljust(width)
                return Strip([Segment(text, base + Style(bold=True, color="red"))], width)
            sums = self._sums
            cells = []
            for n, _, _ in drawn:
                i = self._shown[n]
                text = plural(len(self.order), "row") if n == 0 else (
                    "" if sums[i] is None else format_cell(table.columns[i], sums[i]))
                cells.append((text, i, None))
            return self._row_strip(cells, drawn, base + Style(bold=True), width)
        k = self.top + y - 1
        if k >= len(self.order):
            text = "(no rows match the filter)" if y == 1 and self.filter_text else ""
            return Strip([Segment(text[:width].ljust(width), base)], width)
        row = int(self.order[k])
        cells = []
        for n, _, _ in drawn:  # only the cells on screen are formatted
            i = self._shown[n]
            value = table.columns[i].values[row]
            cells.append((format_cell(table.columns[i], value), i, value))
        style = base + Style(reverse=True) if k == self.cursor and self.has_focus else (
            base + Style(bold=True) if k == self.cursor else base)
        return self._row_strip(cells, drawn, style, width)

    def _row_strip(self, cells: list[tuple[str, int, object]],
                   drawn: list[tuple[int, int, int]], style: Style, width: int,
                   header: bool = False) -> Strip:
        """One line of `cells` (text, column index, value) at the places of `drawn`."""
        segments: list[Segment] = []
        scrolls = self.scrolls
        for (text, i, value), (n, _, cell_width) in zip(cells, drawn):
            column = self.table.columns[i]  # type: ignore[union-attr]
            numeric = column.kind != "text"
            # Names (the first column) differ at their ends: cut in the middle; prose at its end.
            text = cut(safe(text), cell_width - 1, middle=n == 0 and not header and not numeric)
            body = text.rjust(cell_width - 1) if numeric and not header else text.ljust(
                cell_width - 1)
            # The first column stays while the others scroll: a rule says where.
            edge = "│" if n == 0 and scrolls else " "
            if header and n == 0 and scrolls and self.left > 1:
                edge = "«"  # columns hidden on the left
            cell_style = style + Style(underline=True) if (
                header and n == self.column) else style
            cell = self.cell_segments(body, column, None if header else value, cell_style)
            if edge != " ":  # the cell's last space becomes the rule
                last = cell[-1]
                cell[-1:] = [Segment(last.text[:-1], last.style), Segment(edge, style)]
            segments += cell
        strip = Strip(segments).crop(0, width).extend_cell_length(width, style)
        if header and drawn and width > 1:
            last, x, cell_width = drawn[-1]
            if last < len(self._widths) - 1 or x + cell_width - 1 > width:
                # columns hidden (or cut) on the right
                strip = Strip.join([strip.crop(0, width - 1), Strip([Segment("»", style)], 1)])
        return strip

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


def cut(text: str, width: int, middle: bool = False) -> str:
    """`text` in at most `width` cells, an ellipsis where it was cut: at the end, or in the
    middle (names that differ only at the end, `Default/net…Mask-op152`, stay apart)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    if not middle:
        return text[: width - 1] + "…"
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]
