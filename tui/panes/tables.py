"""The Tables pane: the profile's summary CSVs, each sortable and filterable."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from proftui.core.model.table import Table
from proftui.tui.panes.base import FilterBox, TablePane
from proftui.tui.text.format import plural
from proftui.tui.text.safe import safe
from proftui.tui.widgets.table import TableView


class TablesPane(TablePane):
    """The profile's summary CSVs, each sortable and filterable; `[` and `]` switch."""

    BINDINGS = [
        Binding("left_square_bracket", "switch(-1)", "Previous table"),
        Binding("right_square_bracket", "switch(1)", "Next table"),
    ]

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.tables: list[Table] = []
        self.current = 0

    def compose(self) -> ComposeResult:
        yield Static("No summary tables in this profile.", classes="title", id="tables-title",
                     markup=False)
        yield FilterBox(placeholder="filter: text, /regex/, Column~text, Duration>100us "
                                    "(Enter applies, Esc closes)")
        yield TableView(id="tables-table")

    def table_view(self) -> TableView:
        return self.query_one("#tables-table", TableView)

    def show_tables(self, tables: list[Table]) -> None:
        self.tables = tables
        self.current = 0
        if tables:
            self._show()

    def action_switch(self, step: int) -> None:
        if self.tables:
            self.current = (self.current + step) % len(self.tables)
            self._show()

    def _show(self) -> None:
        table = self.tables[self.current]
        self.table_view().show(table)
        self.query_one("#tables-title", Static).update(tables_title(self.tables, self.current))


def table_name(table: Table, ranked: bool) -> str:
    """A table's tab label: its kind, and its rank or device where the profile has several
    (`op_summary rank 1`)."""
    return f"{table.kind} {table.group}" if ranked and table.group else table.kind


def tables_title(tables: list[Table], current: int) -> str:
    """The Tables pane's title: the table shown (with its rank where there are several), its
    place among the others and the tables that `]` brings next (the footer has the keys)."""
    ranked = len({t.group for t in tables}) > 1
    table = tables[current]
    after = [table_name(tables[(current + k) % len(tables)], ranked)
             for k in range(1, len(tables))]
    return (f"[{safe(table_name(table, True))}] {current + 1}/{len(tables)}, "
            f"{plural(table.n_rows, 'row')}" + (f"   ] next: {safe(', '.join(after))}"
                                                 if after else ""))
