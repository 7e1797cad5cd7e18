"""The key map, shown by `?`."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    """The key map: rows of keys and what they do, the text wrapping to the screen's width
    beside its keys, and the whole scrolling where it does not fit (at 80x24 it does not)."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    AUTO_FOCUS = "ScrollableContainer"
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > ScrollableContainer { width: 100; max-width: 95%; height: auto;
                                  max-height: 95%; border: round $primary; padding: 0 1;
                                  background: $surface; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text or KEYS_HELP

    def compose(self) -> ComposeResult:
        with ScrollableContainer():
            yield Static(_flowing(self.text), markup=False)


def _flowing(text: str) -> Group:
    """The help text as it flows at any width: its key rows ("  KEYS  what they do", the
    text from column KEY_WIDTH; a row with no keys goes on the one above) as a two-column
    grid, the text wrapping under itself rather than under the keys; other lines as
    paragraphs (a blank line or a heading ending in ":" ends one)."""
    parts: list[Table | Text] = []
    rows: list[list[str]] = []
    paragraph: list[str] = []

    def flush() -> None:
        if rows:
            grid = Table.grid(padding=(0, 1))
            grid.add_column(no_wrap=True, min_width=KEY_WIDTH - 3)
            grid.add_column(ratio=1)
            for keys, what in rows:
                grid.add_row(keys, what)
            parts.append(grid)
            rows.clear()
        if paragraph:
            parts.append(Text(" ".join(paragraph)))
            paragraph.clear()

    for line in text.splitlines():
        if line.startswith("  ") and len(line) > KEY_WIDTH and line[KEY_WIDTH - 1] == " ":
            keys, what = line[:KEY_WIDTH].strip(), line[KEY_WIDTH:].strip()
            if paragraph:
                flush()
            if keys or not rows:
                rows.append([keys, what])
            else:
                rows[-1][1] += " " + what
            continue
        flush()
        if not line.strip():
            parts.append(Text(""))
        elif line.endswith(":"):
            parts.append(Text(line))
        else:
            paragraph.append(line.strip())
    flush()
    return Group(*parts)


# Where the text of a key row begins ("  w / s        zoom ...").
KEY_WIDTH = 15

KEYS_HELP = """proftui keys

  w / s        zoom in / out around the cursor (the wheel: at the mouse)
  a / d        pan left / right (or drag)
  , / .        move the cursor one cell (a click selects; in the gutter, collapses)
  left/right   previous / next slice in the row
  up/down      line up / down (keeps a selection at the cursor's time)
  PgUp/PgDn    a page of lines up / down
  Enter / Esc  select the slice at the cursor / clear the selection
  f / 0        fit the selection (or the range) / show everything
  [ / ]  r     range start / end at the cursor, range of the selected slice (shift+drag
               selects a range too; Esc clears it; the ops pane follows it)
  > / <        jump to the slice a flow leads to / comes from
  c  p  h  H   collapse process, pin track, hide track, show hidden tracks
  t            track order: device streams first in each rank (the default) / as in the trace
  u            utilisation lines on / off (device busy, compute, comm exposed / overlapped, host)
  /  n  N      search names (/regex/ for a regular expression), next, previous
  g            go to an iteration (by number)
  A            align the ranks at an iteration: each rank drawn from its own start of it
               (clocks of hosts differ; times shown stay each slice's own); A again undoes
  1 .. 7       panes: details, ops, tables, iterations, insights, comm, cluster (tab: focus)
  + / -  m     taller / shorter panes, maximise the focused one
  o  D         overview (iterations, processes, tables), import diagnostics
  e            export to CSV: the window's events, its ops, or the pane as shown
  T            next theme
  : or ctrl+p  every action with its key
  !            the pane as a proftui command (status line, clipboard)
  ?  q         this help, quit

w a s d 0 f move the timeline from the panes too, whenever it is on screen and no text box
has the focus (Tab or 1 focuses the timeline again, for all its keys).

In a table: arrows move, S sorts by the current column (again: the other way), a click on a
header sorts by it, / filters (text, /regex/, Column~text, Total>1ms, Count>=10), Enter opens.
A wide table scrolls sideways with left/right (shift+left/right or < > a page; shift+wheel),
its first column kept on screen; C chooses the columns and their order (remembered per kind).

Ops pane:
  b            group by name, category, type or engine
  v            all / device / host tracks
  t            only the pinned tracks
  W            the whole trace
  Enter        on an op: its instances; on an instance: show it on the timeline; Esc back

Tables pane: [ and ] switch tables.

Iterations pane: Enter zooms and scopes the ops to it.

Insights pane: Enter shows a finding's first evidence range on the timeline, n / N the
next / previous one.

Comm pane: [ and ] switch between collectives, transports, links and ranks; Enter on a
collective shows it on the timeline.
"""
