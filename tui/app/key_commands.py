"""The command palette's list of every key's action, with its key, read from the bindings.

The palette (`:` or Ctrl+P) is built from the same `BINDINGS` the keys, the footer and the
help use, so that a key added anywhere shows up there too: the app's keys, the timeline's, each
pane's (choosing one shows its pane first) and those of the table of the pane shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.dom import DOMNode
from textual.widgets import Input

from proftui.tui.widgets.table import TableView

if TYPE_CHECKING:
    from textual.app import App

# Better titles and help than a footer's short description, by action.
TITLES: dict[str, tuple[str, str]] = {
    "search": ("Search", "Find slices by name (/regex/ too)"),
    "goto_iteration": ("Go to iteration", "Zoom to an iteration by number"),
    "pane('details')": ("Details", "The selected slice's details"),
    "pane('ops')": ("Ops", "Operators of the window"),
    "pane('tables')": ("Summary tables", "The profile's CSVs"),
    "pane('iterations')": ("Iterations", "Iterations and their breakdown"),
    "pane('insights')": ("Insights", "What to fix first: findings and their evidence"),
    "pane('comm')": ("Communication", "Collectives, bandwidth per transport and link, slow "
                     "links"),
    "pane('cluster')": ("Cluster", "The ranks compared: heat strip of steps, waits"),
    "toggle_overview": ("Overview", "Iterations, processes and tables"),
    "toggle_diagnostics": ("Diagnostics", "Import problems"),
    "export": ("Export", "Write the window's events, its ops or a pane to CSV"),
    "help": ("Key map", "All the keys, on one screen"),
    "view_as_command": ("View as a command", "The proftui command printing what the pane "
                        "shows: in the status line and copied"),
    "next_theme": ("Next theme", "Cycle proftui's themes"),
    "quit": ("Quit", "Leave proftui"),
    "resize_panes(2)": ("Taller panes", "Give the panes two more lines"),
    "resize_panes(-2)": ("Shorter panes", "Give the timeline two more lines"),
    "maximise": ("Maximise", "The whole screen to the panes or the timeline (where the focus is)"),
    "zoom_in": ("Zoom in", "Zoom the timeline in around the cursor"),
    "zoom_out": ("Zoom out", "Zoom the timeline out around the cursor"),
    "pan_left": ("Pan left", "Move the timeline's window left"),
    "pan_right": ("Pan right", "Move the timeline's window right"),
    "fit": ("Fit selection", "Fit the selected slice (or the range)"),
    "reset": ("Show everything", "Reset the zoom"),
    "toggle_by": ("Group by", "Ops by name, category, operator type or engine"),
    "cycle_side": ("Side", "Ops of all, device or host tracks"),
    "toggle_tracks": ("Pinned tracks", "Ops of the tracks pinned on the timeline only"),
    "whole_trace": ("Whole trace", "Ops of the whole trace"),
    "select_here": ("Select", "Select the slice at the cursor"),
    "clear_selection": ("Clear selection", "Clear the selection, then the range"),
    "mark_range(0)": ("Range start", "Start the range at the cursor"),
    "mark_range(1)": ("Range end", "End the range at the cursor"),
    "range_of_selection": ("Range of selection", "The range over the selected slice"),
    "toggle_collapse": ("Collapse process", "Collapse or expand the focused process"),
    "toggle_pin": ("Pin track", "Pin the focused track at the top, or unpin it"),
    "hide_track": ("Hide track", "Hide the focused track"),
    "follow_flow(1)": ("Flow out", "Jump to the slice a flow of the selection leads to"),
    "follow_flow(-1)": ("Flow in", "Jump to the slice a flow of the selection comes from"),
    "show_hidden": ("Show hidden tracks", "Unhide every hidden track"),
    "toggle_utilisation": ("Utilisation lines", "Show or hide the utilisation lines"),
    "toggle_track_order": ("Track order", "Device streams first in each rank, or the trace's "
                           "own order"),
}
# Plumbing, not commands: cancelling a load, the palette itself, closing a text box.
SKIPPED = {"cancel_load", "command_palette", "close"}
# A table's or the heat strip's cursor moves: keys to hold, not commands to look up.
MOVES = {"move", "page", "column"}


@dataclass(frozen=True)
class KeyCommand:
    """One bound action as a palette entry: run `action` on `target`, after showing `pane`
    (a pane's name, or "timeline")."""

    title: str
    help: str
    key: str
    action: str
    target: DOMNode
    pane: str | None = None


def own_bindings(node: DOMNode) -> list[Binding]:
    """The bindings proftui's classes declare for `node` (its own class first), one per key."""
    found: list[Binding] = []
    for cls in type(node).__mro__:
        if cls.__module__.startswith("proftui.") and "BINDINGS" in cls.__dict__:
            found.extend(Binding.make_bindings(cls.__dict__["BINDINGS"]))
    return found


def _commands(bindings: list[Binding], target: DOMNode, scope: str, key_display: Callable[
        [Binding], str], pane: str | None = None, moves: bool = False) -> Iterator[KeyCommand]:
    keys: dict[str, list[str]] = {}
    described: dict[str, Binding] = {}
    skipped = SKIPPED if moves else SKIPPED | MOVES
    for binding in bindings:
        name = binding.action.split("(")[0]
        if name in skipped or name == "timeline":  # timeline(): the timeline's own below
            continue
        keys.setdefault(binding.action, []).append(key_display(binding))
        described.setdefault(binding.action, binding)
    for action, binding in described.items():
        title, help_text = TITLES.get(action, (binding.description, binding.description))
        if scope:
            title = f"{scope}: {title}"
        yield KeyCommand(title, help_text, " or ".join(dict.fromkeys(keys[action])), action,
                         target, pane)


def key_commands(app: App[Any], timeline: DOMNode, panes: dict[str, DOMNode],
                 table: DOMNode | None) -> list[KeyCommand]:
    """Every bound action of the app, the timeline, the panes (by name; with the widgets
    inside them that have keys of their own) and `table` (the shown pane's table, if any)."""
    display = app.get_key_display
    found = list(_commands(own_bindings(app), app, "", display))
    found += _commands(own_bindings(timeline), timeline, "", display, "timeline", moves=True)
    for name, pane in panes.items():
        scope = name.capitalize()
        found += _commands(own_bindings(pane), pane, scope, display, name)
        # widgets with keys of their own inside (the cluster's heat strip); not the tables,
        # whose keys are the shown table's below, nor the filter box
        inner = {type(w): w for w in pane.query("*")
                 if not isinstance(w, (Input, TableView)) and own_bindings(w)}
        for widget in inner.values():
            found += _commands(own_bindings(widget), widget, scope, display, name)
    if table is not None:
        found += _commands(own_bindings(table), table, "Table", display)
    return found
