"""The key map, shown by `?`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    """The key map."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    AUTO_FOCUS = "ScrollableContainer"
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > ScrollableContainer { width: auto; max-width: 95%; height: auto; max-height: 95%;
                                  border: round $primary; padding: 0 1; background: $surface; }
    HelpScreen Static { width: auto; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text or KEYS_HELP

    def compose(self) -> ComposeResult:
        # at 80x24 the keys do not fit: the arrows, PgUp / PgDn and the wheel scroll them
        with ScrollableContainer():
            yield Static(self.text, markup=False)


KEYS_HELP = """proftui keys

  w / s        zoom in / out around the cursor      wheel: zoom at the mouse
  a / d        pan left / right                     drag: pan
  , / .        move the cursor one cell             click: select (gutter: collapse)
  left/right   previous / next slice in the row
  up/down      line up / down (keeps a selection at the cursor's time)
  PgUp/PgDn    a page of lines up / down
  Enter        select the slice at the cursor       Esc   clear the selection
  f            fit the selection (or the range)     0     show everything
  [ / ]        range start / end at the cursor      r     range of the selected slice
               (shift+drag selects a range too; Esc clears it; the ops pane follows it)
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
  T            next theme                  : or ctrl+p  every action with its key
  !            the pane as a proftui command (status line, clipboard)
  ?            this help                            q     quit

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
Tables pane: [ and ] switch tables.   Iterations pane: Enter zooms and scopes the ops to it.
Insights pane: Enter shows a finding's first evidence range on the timeline, n / N the
next / previous one.
Comm pane: [ and ] switch between collectives, transports, links and ranks; Enter on a
collective shows it on the timeline.
"""
