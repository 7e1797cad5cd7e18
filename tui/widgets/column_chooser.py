"""The column chooser (`C` in a table): show or hide a table's columns and change their order."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from proftui.tui.text.safe import safe

HINT = ("Space show/hide   shift+↑↓ or k/j move   r default\n"
        "Enter apply   Esc cancel   (the first column stays on screen)")


class ColumnList(Widget, can_focus=True):
    """The columns, one a line with a checkbox, the cursor on one; they can be moved."""

    DEFAULT_CSS = "ColumnList { height: auto; max-height: 70vh; }"
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("home", "move(-1000000)", "First", show=False),
        Binding("end", "move(1000000)", "Last", show=False),
        Binding("space,x", "toggle", "Show/hide"),
        Binding("shift+up,k", "shift(-1)", "Move up"),
        Binding("shift+down,j", "shift(1)", "Move down"),
    ]

    def __init__(self, headers: list[str], order: list[int], hidden: set[int]) -> None:
        super().__init__()
        self.headers = headers  # by column index
        self.order = list(order)
        self.hidden = set(hidden)
        self.cursor = 0
        self.top = 0

    def get_content_height(self, container, viewport, width: int) -> int:  # noqa: ANN001
        return len(self.order)

    def action_move(self, step: int) -> None:
        self.cursor = min(max(self.cursor + step, 0), len(self.order) - 1)
        self._follow()

    def action_toggle(self) -> None:
        column = self.order[self.cursor]
        if column in self.hidden:
            self.hidden.discard(column)
        elif len(self.hidden) < len(self.order) - 1:  # one column stays
            self.hidden.add(column)
        self.refresh()

    def action_shift(self, step: int) -> None:
        to = self.cursor + step
        if 0 <= to < len(self.order):
            self.order[self.cursor], self.order[to] = self.order[to], self.order[self.cursor]
            self.cursor = to
            self._follow()

    def _follow(self) -> None:
        height = max(self.size.height, 1)
        if self.cursor < self.top:
            self.top = self.cursor
        elif self.cursor >= self.top + height:
            self.top = self.cursor - height + 1
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        n = self.top + y
        base = self.rich_style
        if n >= len(self.order):
            return Strip([Segment(" " * width, base)], width)
        column = self.order[n]
        mark = " " if column in self.hidden else "x"
        note = "  (kept on screen)" if n == 0 else ""
        text = safe(f"[{mark}] {self.headers[column]}{note}")[:width].ljust(width)
        style = base + Style(reverse=True) if n == self.cursor else base
        if column in self.hidden and n != self.cursor:
            style += Style(dim=True)
        return Strip([Segment(text, style)], width)


class ColumnChooser(ModalScreen["tuple[list[int], set[int]] | None"]):
    """Choose the columns of a table: dismissed with (order, hidden) as column indices, or
    None when cancelled."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("enter", "apply", "Apply"),
        Binding("r", "default", "Default"),
    ]
    DEFAULT_CSS = """
    ColumnChooser { align: center middle; }
    ColumnChooser > Vertical { width: auto; min-width: 50; max-width: 95%; height: auto;
                               max-height: 95%; border: round $primary; padding: 0 1;
                               background: $surface; }
    ColumnChooser Static { width: auto; }
    ColumnChooser .hint { color: $text-muted; }
    """
    AUTO_FOCUS = "ColumnList"

    def __init__(self, title: str, headers: list[str], order: list[int], hidden: set[int],
                 default: list[int]) -> None:
        super().__init__()
        self.title_text = title
        self.headers = headers
        self.start = (list(order), set(hidden))
        self.default = list(default)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe(self.title_text), markup=False)
            yield ColumnList(self.headers, *self.start)
            yield Static(HINT, classes="hint", markup=False)

    def action_apply(self) -> None:
        chosen = self.query_one(ColumnList)
        self.dismiss((list(chosen.order), set(chosen.hidden)))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_default(self) -> None:
        chosen = self.query_one(ColumnList)
        chosen.order, chosen.hidden, chosen.cursor, chosen.top = list(self.default), set(), 0, 0
        chosen.refresh()
