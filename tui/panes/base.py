"""The panes' common frame: a table view with a filter box (`/`).

Each pane shows
:class:`~proftui.tui.widgets.table.TableView` tables of numbers computed by core calls
(the headless commands print the same), runs work that can take a while in a worker, and
tells the app what the user picked through messages.
"""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input

from proftui.tui.widgets.table import TableView


class FilterBox(Input):
    """A table's filter; Esc closes it, Enter applies it."""

    BINDINGS = [Binding("escape", "close", "Close", show=False)]

    class Closed(Message):
        pass

    def allow_focus(self) -> bool:
        return self.display  # hidden, it must not take keys

    def action_close(self) -> None:
        self.post_message(self.Closed())


class TablePane(Vertical):
    """A pane whose main widget is a TableView with a filter box (`/`)."""

    BINDINGS = [Binding("slash", "filter", "Filter")]
    DEFAULT_CSS = """
    TablePane > .title { height: 1; }
    TablePane > FilterBox { display: none; }
    """

    def table_view(self) -> TableView:
        raise NotImplementedError

    def action_filter(self) -> None:
        box = self.query_one(FilterBox)
        box.value = self.table_view().filter_text
        box.display = True
        self.screen.set_focus(box)

    @on(Input.Submitted)
    def _filter(self, event: Input.Submitted) -> None:
        event.stop()
        view = self.table_view()
        view.set_filter(event.value)
        self._close_filter()
        self.on_filtered(view)

    @on(FilterBox.Closed)
    def _close_filter(self) -> None:
        self.query_one(FilterBox).display = False
        self.screen.set_focus(self.table_view())

    def on_filtered(self, view: TableView) -> None:
        """Hook: after a filter was applied."""
