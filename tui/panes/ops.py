"""The Ops pane: operators of a window, by name, category, type or engine, for all tracks or
one side; Enter lists an operator's instances (`proftui ops` prints the same numbers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.ops.aggregate import aggregate_ops, op_instances
from proftui.core.ops.grouping import GROUP_BY, OpTypes, op_types
from proftui.core.ops.instances import duration_histogram, instances_table
from proftui.core.ops.iterations import Iteration
from proftui.tui.panes.base import FilterBox, TablePane
from proftui.tui.panes.ops_window import WHOLE_TRACE, Window
from proftui.tui.text.format import fmt_duration, plural
from proftui.tui.text.safe import safe
from proftui.tui.widgets.table import TableView

if TYPE_CHECKING:  # the op efficiency is imported when E first asks for it
    from proftui.core.perf.efficiency import Efficiency
    from proftui.core.perf.hardware import Peaks

SIDES = ("all", "device", "host")
GROUPINGS = tuple(GROUP_BY)
# As `proftui ops`: one name is one row everywhere (b groups otherwise, keeping the sort).
DEFAULT_GROUPING = "name"
_SPARK = "▁▂▃▄▅▆▇█"


class Roofline(Static, can_focus=True):
    """The efficiency view's roofline, in the table's place: focusable, so that the pane's
    keys (R back to the table, E, Esc) still reach the pane."""


class OpsPane(TablePane):
    """Operators of a window: count, total, self, avg, min, max and share, by name or
    category, for all tracks or the device or host side; Enter lists an operator's instances
    and Enter on an instance jumps the timeline to it."""

    BINDINGS = [
        Binding("b", "toggle_by", "Name/category/type/engine"),
        Binding("v", "cycle_side", "All/device/host"),
        Binding("t", "toggle_tracks", "Pinned tracks"),
        Binding("W", "whole_trace", "Whole trace", show=False),  # a pans the timeline
        Binding("E", "toggle_efficiency", "Efficiency"),  # e exports, everywhere
        Binding("R", "toggle_roofline", "Roofline", show=False),
        Binding("escape", "back", "Back", show=False),
    ]

    class JumpTo(Message):
        """Show this slice on the timeline."""

        def __init__(self, slice_index: int) -> None:
            super().__init__()
            self.slice_index = slice_index

    class TracksWanted(Message):
        """The pane asks for the tracks pinned on the timeline (to scope the ops to them)."""

    class WindowSet(Message):
        """The pane describes this window from now on."""

        def __init__(self, window: Window) -> None:
            super().__init__()
            self.window = window

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.index: TraceIndex | None = None
        self.iterations: list[Iteration] = []
        self.tables: list[Table] = []
        self.types: OpTypes | None = None
        self.window = WHOLE_TRACE
        self.by = "name"
        self.side = "all"
        self.tracks: list[int] | None = None  # only these tracks (the pinned ones), or all
        self.ops: Table | None = None
        self.instances: np.ndarray = np.zeros(0, np.int64)
        self.efficient = False  # the efficiency view (E) rather than the ops
        self.efficiency: Efficiency | None = None
        self.peaks: tuple[Peaks | None, str] | None = None  # found once per trace
        self._stale = True  # computed when first shown: nothing competes with the first paint

    def compose(self) -> ComposeResult:
        yield Static("", classes="title", id="ops-title", markup=False)
        yield FilterBox(placeholder="filter: text, /regex/, Column~text, Total>1ms, Count>=10 "
                                    "(Enter applies, Esc closes)")
        yield TableView(hidden=("name_id",), id="ops-table")
        yield TableView(hidden=("Slice",), id="ops-instances")
        yield Static("", id="ops-histogram", markup=False)
        yield Roofline("", id="ops-roofline", markup=False)

    def on_mount(self) -> None:
        self.query_one("#ops-instances").display = False
        self.query_one("#ops-histogram").display = False
        self.query_one("#ops-roofline").display = False

    def table_view(self) -> TableView:
        instances = self.query_one("#ops-instances", TableView)
        return instances if instances.display else self.query_one("#ops-table", TableView)

    def show_trace(self, index: TraceIndex, iterations: list[Iteration],
                   tables: list[Table] = ()) -> None:  # type: ignore[assignment]
        """A new trace, its ops grouped by the default (by name, as `proftui ops`)."""
        self.index, self.iterations, self.tables = index, iterations, list(tables)
        self.types = None
        self.peaks = None
        self.by = DEFAULT_GROUPING
        self.set_window(WHOLE_TRACE)

    def set_window(self, window: Window) -> None:
        """Describe `window` from now on (computed when the pane is next shown)."""
        self.window = window
        self._stale = True
        self.post_message(self.WindowSet(window))
        self._back_to_ops()
        self._title(busy=True)
        if self.display and self.parent is not None and self.parent.display:
            self.ensure_computed()

    def ensure_computed(self) -> None:
        """Aggregate the window if that has not been done since it changed."""
        if self._stale and self.index is not None:
            self._stale = False
            self.recompute()

    def _title(self, busy: bool = False) -> None:
        if self.efficient:
            self._efficiency_title(busy)
            return
        view = f"by {self.by}" + (" (the default)" if self.by == DEFAULT_GROUPING else "")
        if self.tracks is not None:
            view += f", {plural(len(self.tracks), 'pinned track')}"
        rows = plural(self.ops.n_rows, "op") if self.ops is not None else ""
        state = "computing ..." if busy else rows
        text = (f"Ops of {safe(self.window.label)}, {view}, {self.side} tracks: {state}   "
                "b name/category/type/engine  v all/device/host  t pinned tracks  W whole trace  "
                "E efficiency  / filter  S sort  Enter instances")
        self.query_one("#ops-title", Static).update(text)

    def _efficiency_title(self, busy: bool) -> None:
        found = self.efficiency
        if busy or found is None:
            state = "computing ..."
        else:
            cover = (f", the models cover {100 * found.modelled_ns / found.total_ns:.0f}% of "
                     f"{fmt_duration(found.total_ns)}" if found.total_ns else "")
            state = (f"{plural(found.table.n_rows, 'op shape')} from "
                     f"{found.source or 'no table with shapes'}{cover}; peaks: "
                     f"{self.peaks[1] if self.peaks else 'unknown'}")
            if found.notes:  # what to capture to see more, before the keys
                state += ". " + " ".join(found.notes)
        text = (f"Op efficiency of {safe(self.window.label)}: {safe(state)}   "
                "E ops  R roofline  / filter  S sort  Enter calls")
        self.query_one("#ops-title", Static).update(text)

    @work(thread=True, exclusive=True, group="ops")
    def recompute(self) -> None:
        """Aggregate in a worker: a window of ten million slices takes a moment."""
        if self.index is None:
            return
        self.app.call_from_thread(self._title, True)
        if self.efficient:
            self._compute_efficiency()
            return
        if self.by == "type" and self.types is None:
            self.types = op_types(self.index, self.tables)
        table = aggregate_ops(self.index, start_ns=self.window.start_ns,
                              end_ns=self.window.end_ns, tracks=self.tracks, by=self.by,
                              side=self.side, types=self.types, tables=self.tables,
                              groups=self.window.groups)
        self.app.call_from_thread(self._show_ops, table)

    def _compute_efficiency(self) -> None:
        """Runs in the worker: the peaks once per trace, then the window's op shapes."""
        from proftui.core.perf.efficiency import efficiency, profile_peaks
        from proftui.core.perf.instances import op_instances

        if self.peaks is None:
            self.peaks = profile_peaks(self.index, **getattr(self.app, "peaks_asked", {}))
        found = efficiency(op_instances(self.index, start_ns=self.window.start_ns,
                                        end_ns=self.window.end_ns), self.peaks[0])
        self.app.call_from_thread(self._show_efficiency, found)

    def _show_efficiency(self, found: Efficiency) -> None:
        self.efficiency = found
        self.query_one("#ops-table", TableView).show(found.table, keep_position=True)
        self._title()
        if self.query_one("#ops-roofline").display:
            self._draw_roofline()

    def action_toggle_efficiency(self) -> None:
        """Ops, or their efficiency (the same window): `proftui ops --efficiency`."""
        self.efficient = not self.efficient
        self.query_one("#ops-roofline").display = False
        self._back_to_ops()
        self.recompute()

    def action_toggle_roofline(self) -> None:
        """The efficiency view's ops on a roofline, in the table's place (R again: the
        table)."""
        plot = self.query_one("#ops-roofline", Static)
        table = self.query_one("#ops-table", TableView)
        if not self.efficient or self.efficiency is None or not (table.display or plot.display):
            return
        plot.display, table.display = not plot.display, plot.display
        if plot.display:
            self._draw_roofline()
        self.screen.set_focus(plot if plot.display else table)

    def _draw_roofline(self) -> None:
        from proftui.core.perf.efficiency import roofline_points
        from proftui.tui.text.roofline import roofline_lines

        points, roof = roofline_points(self.efficiency)
        width = max(self.size.width - 2, 40)
        # the pane's height less the title, the plot's head and its legend (up to 9 lines)
        height = max(self.size.height - 3 - min(len(points), 9), 8)
        lines = roofline_lines(points, roof.flops if roof else None,
                               roof.bandwidth if roof else None, width=width, height=height)
        head = f"roofline: {roof.text}" if roof else "roofline: no peaks (device unknown)"
        self.query_one("#ops-roofline", Static).update("\n".join([head, *lines]))

    def _show_ops(self, table: Table) -> None:
        self.ops = table
        view = self.query_one("#ops-table", TableView)
        view.show(table, keep_position=True)
        self._title()

    def action_toggle_by(self) -> None:
        """Group otherwise; the table keeps its sort (the first column: the new key)."""
        if self.efficient:
            return
        self.by = GROUPINGS[(GROUPINGS.index(self.by) + 1) % len(GROUPINGS)]
        self.recompute()

    def action_cycle_side(self) -> None:
        if self.efficient:
            return
        self.side = SIDES[(SIDES.index(self.side) + 1) % len(SIDES)]
        self.recompute()

    def action_toggle_tracks(self) -> None:
        if self.tracks is None:
            self.post_message(self.TracksWanted())
        else:
            self.set_tracks(None)

    def set_tracks(self, tracks: list[int] | None) -> None:
        """Count only the slices of these tracks (None: of all tracks)."""
        self.tracks = list(tracks) if tracks is not None else None
        self.recompute()

    def action_whole_trace(self) -> None:
        self.set_window(WHOLE_TRACE)

    @on(TableView.RowChosen, "#ops-table")
    def _op_chosen(self, event: TableView.RowChosen) -> None:
        event.stop()
        if self.efficient:
            self._calls_chosen(event.row)
            return
        if self.index is None or self.ops is None:
            return
        key = self.ops.find("name_id")
        if key is None:
            return
        key_id = int(key.values[event.row])
        self.instances = op_instances(self.index, key_id, by=self.by,
                                      start_ns=self.window.start_ns,
                                      end_ns=self.window.end_ns, tracks=self.tracks,
                                      side=self.side, types=self.types,
                                      tables=self.tables, groups=self.window.groups)
        table = instances_table(self.index, self.instances, self.iterations)
        view = self.query_one("#ops-instances", TableView)
        view.show(table)
        name = str(table_label(self.ops, event.row))
        durations = self.index.arrays["slices.dur"][self.instances]
        self._show_instances(view, f"{safe(name)}: {plural(len(self.instances), 'instance')} "
                                   f"in {safe(self.window.label)}   {histogram_text(durations)}")

    def _calls_chosen(self, row: int) -> None:
        """The calls of one op shape, each with the rate it reached."""
        from proftui.core.perf.efficiency import calls_table

        if self.index is None or self.efficiency is None:
            return
        group = self.efficiency.groups[row]
        table = calls_table(self.index, group, self.efficiency.peaks, self.iterations)
        view = self.query_one("#ops-instances", TableView)
        view.show(table)
        lost = group.calls - table.n_rows
        self._show_instances(view, f"{safe(group.op)}: {plural(group.calls, 'call')}"
                                   + (f" ({lost} not found on the timeline)" if lost else ""))

    def _show_instances(self, view: TableView, text: str) -> None:
        self.query_one("#ops-histogram", Static).update(
            f"{text}   Enter jumps to one, Esc returns")
        self.query_one("#ops-table").display = False
        self.query_one("#ops-roofline").display = False
        view.display = True
        self.query_one("#ops-histogram").display = True
        self.screen.set_focus(view)

    @on(TableView.RowChosen, "#ops-instances")
    def _instance_chosen(self, event: TableView.RowChosen) -> None:
        event.stop()
        column = event.view.table.find("Slice") if event.view.table is not None else None
        if column is not None:
            self.post_message(self.JumpTo(int(column.values[event.row])))

    def action_back(self) -> None:
        self._back_to_ops()

    def _back_to_ops(self) -> None:
        ops = self.query_one("#ops-table", TableView)
        self.query_one("#ops-roofline").display = False
        if ops.display:
            return
        self.query_one("#ops-instances").display = False
        self.query_one("#ops-histogram").display = False
        ops.display = True
        self.screen.set_focus(ops)


def table_label(table: Table, row: int) -> object:
    """The first column's value of a row (the op's name, category or type)."""
    return table.columns[0].values[row]


def histogram_text(durations_ns: np.ndarray, bins: int = 16) -> str:
    """A one-line duration histogram: min, a bar per bin (height ~ count), max."""
    if len(durations_ns) == 0:
        return ""
    counts, edges = duration_histogram(durations_ns, bins)
    top = max(int(counts.max()), 1)
    bars = "".join(_SPARK[min(len(_SPARK) - 1, int(round(c / top * (len(_SPARK) - 1))))]
                   if c else " " for c in counts.tolist())
    return f"{fmt_duration(int(edges[0]))} {bars} {fmt_duration(int(edges[-1]))}"
