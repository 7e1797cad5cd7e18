"""The panes under the timeline: operators of a window, the summary CSVs, the iterations.

Each pane shows
:class:`~proftui.tui.widgets.table.TableView` tables of numbers computed by core calls
(the headless `proftui ops` and `proftui iterations` print the same), runs work that can take
a while in a worker, and tells the app what the user picked through messages.
"""

from __future__ import annotations

import numpy as np
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Input, Static

from proftui.core.analysis.breakdown import TABLE_COLUMNS, StepBreakdown
from proftui.core.analysis.step_parts import OTHER, StepParts, part_order, step_parts
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Column, Table
from proftui.core.ops.aggregate import (
    aggregate_ops,
    duration_histogram,
    instances_table,
    iterations_table,
    op_instances,
)
from proftui.core.ops.grouping import GROUP_BY, OpTypes, op_types
from proftui.core.ops.iterations import Iteration
from proftui.themes import Palette, palette_for
from proftui.tui.format import fmt_duration, plural
from proftui.tui.panes.ops_window import WHOLE_TRACE, Window
from proftui.tui.safe import safe
from proftui.tui.widgets.table import TableView

SIDES = ("all", "device", "host")
GROUPINGS = tuple(GROUP_BY)
# As `proftui ops`: one name is one row everywhere (b groups otherwise, keeping the sort).
DEFAULT_GROUPING = "name"
_SPARK = "▁▂▃▄▅▆▇█"
# The bar's least width: a fifth of the pane, within these bounds; more when the columns
# leave more room.
MIN_BAR, MAX_LEAST_BAR = 12, 40


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


class OpsPane(TablePane):
    """Operators of a window: count, total, self, avg, min, max and share, by name or
    category, for all tracks or the device or host side; Enter lists an operator's instances
    and Enter on an instance jumps the timeline to it."""

    BINDINGS = [
        Binding("b", "toggle_by", "Name/category/type/engine"),
        Binding("v", "cycle_side", "All/device/host"),
        Binding("t", "toggle_tracks", "Pinned tracks"),
        Binding("W", "whole_trace", "Whole trace", show=False),  # a pans the timeline
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
        self._stale = True  # computed when first shown: nothing competes with the first paint

    def compose(self) -> ComposeResult:
        yield Static("", classes="title", id="ops-title", markup=False)
        yield FilterBox(placeholder="filter: text, /regex/, Column~text, Total>1ms, Count>=10 "
                                    "(Enter applies, Esc closes)")
        yield TableView(hidden=("name_id",), id="ops-table")
        yield TableView(hidden=("Slice",), id="ops-instances")
        yield Static("", id="ops-histogram", markup=False)

    def on_mount(self) -> None:
        self.query_one("#ops-instances").display = False
        self.query_one("#ops-histogram").display = False

    def table_view(self) -> TableView:
        instances = self.query_one("#ops-instances", TableView)
        return instances if instances.display else self.query_one("#ops-table", TableView)

    def show_trace(self, index: TraceIndex, iterations: list[Iteration],
                   tables: list[Table] = ()) -> None:  # type: ignore[assignment]
        """A new trace, its ops grouped by the default (by name, as `proftui ops`)."""
        self.index, self.iterations, self.tables = index, iterations, list(tables)
        self.types = None
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
        view = f"by {self.by}" + (" (the default)" if self.by == DEFAULT_GROUPING else "")
        if self.tracks is not None:
            view += f", {plural(len(self.tracks), 'pinned track')}"
        rows = plural(self.ops.n_rows, "op") if self.ops is not None else ""
        state = "computing ..." if busy else rows
        text = (f"Ops of {safe(self.window.label)}, {view}, {self.side} tracks: {state}   "
                "b name/category/type/engine  v all/device/host  t pinned tracks  W whole trace  "
                "/ filter  S sort  Enter instances")
        self.query_one("#ops-title", Static).update(text)

    @work(thread=True, exclusive=True, group="ops")
    def recompute(self) -> None:
        """Aggregate in a worker: a window of ten million slices takes a moment."""
        if self.index is None:
            return
        self.app.call_from_thread(self._title, True)
        if self.by == "type" and self.types is None:
            self.types = op_types(self.index, self.tables)
        table = aggregate_ops(self.index, start_ns=self.window.start_ns,
                              end_ns=self.window.end_ns, tracks=self.tracks, by=self.by,
                              side=self.side, types=self.types, tables=self.tables,
                              groups=self.window.groups)
        self.app.call_from_thread(self._show_ops, table)

    def _show_ops(self, table: Table) -> None:
        self.ops = table
        view = self.query_one("#ops-table", TableView)
        view.show(table, keep_position=True)
        self._title()

    def action_toggle_by(self) -> None:
        """Group otherwise; the table keeps its sort (the first column: the new key)."""
        self.by = GROUPINGS[(GROUPINGS.index(self.by) + 1) % len(GROUPINGS)]
        self.recompute()

    def action_cycle_side(self) -> None:
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
        self.query_one("#ops-histogram", Static).update(
            f"{safe(name)}: {plural(len(self.instances), 'instance')} in "
            f"{safe(self.window.label)}"
            f"   {histogram_text(durations)}   Enter jumps to one, Esc returns")
        self.query_one("#ops-table").display = False
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


# The step breakdown's columns in the iterations table, as `proftui breakdown` prints them:
# (header, side of the StepBreakdown, key, unit). Device parts are of the step's device window.
BREAKDOWN_COLUMNS = tuple((header, side, key, "ns" if key.endswith("_ns") else "")
                          for header, side, key in TABLE_COLUMNS)
# Shown first in the iterations table, then the bar; the absolute Start (a wide timestamp)
# goes last.
_LEADING = ("Group", "Iteration", "Start from capture", "Duration", "vs median", "Mark")
BAR_COLUMN = "Breakdown"  # the stacked bar's column (its cells' text: the parts in words)


def breakdown_columns(iterations: list[Iteration],
                      steps: dict[tuple[str, int], StepBreakdown]) -> list[Column]:
    """The breakdown columns for these iterations (NaN where a step has no breakdown, or the
    profile does not mark the phase)."""
    out = []
    for header, side, key, unit in BREAKDOWN_COLUMNS:
        values = np.full(len(iterations), np.nan)
        for n, it in enumerate(iterations):
            step = steps.get((it.group, it.number))
            part = getattr(step, side) if step is not None else None
            value = part.get(key) if part is not None else None
            if value is not None:
                values[n] = float(value)
        # "count" in the name: the totals line sums the syncs
        name = "sync count" if key == "sync_count" else header
        out.append(Column(header, name, unit, "number", values))
    return out


def iteration_bars(iterations: list[Iteration],
                   steps: dict[tuple[str, int], StepBreakdown]) -> list[StepParts | None]:
    """Each iteration's disjoint parts (:func:`~proftui.core.analysis.step_parts.step_parts`):
    from its computed breakdown where it has device work, else from the profile's own."""
    out = []
    for it in iterations:
        step = steps.get((it.group, it.number))
        out.append(step_parts(it, step.device if step is not None else None))
    return out


def parts_text(parts: StepParts | None) -> str:
    """A bar's parts in words (its cell's text: what a filter matches, what a CSV holds)."""
    if parts is None:
        return ""
    line = " + ".join(f"{name} {fmt_duration(ns)}" for name, ns in parts.parts)
    return line + (f" ({fmt_duration(parts.over_ns)} past the step's end)"
                   if parts.over_ns else "")


def iterations_with_breakdown(iterations: list[Iteration],
                              steps: dict[tuple[str, int], StepBreakdown],
                              bars: list[StepParts | None] | None = None,
                              origin_ns: int = 0) -> Table:
    """The iterations table (:func:`~proftui.core.ops.aggregate.iterations_table`, starts from
    `origin_ns`, the capture start): the usual columns, the bar's column (when some
    iteration has parts), the breakdown columns (when there are steps), the profile's own
    parts, and the absolute Start last."""
    table = iterations_table(iterations, origin_ns)
    first = [c for name in _LEADING for c in table.columns if c.name == name]
    rest = [c for c in table.columns if c not in first and c.name != "Start"]
    start = [c for c in table.columns if c.name == "Start"]
    bars = iteration_bars(iterations, steps) if bars is None else bars
    bar = []
    if any(b is not None for b in bars):
        text = np.empty(len(bars), dtype=object)
        text[:] = [parts_text(b) for b in bars]
        bar = [Column(BAR_COLUMN, BAR_COLUMN, "", "text", text)]
    extra = breakdown_columns(iterations, steps) if steps else []
    return Table(table.kind, table.path, first + bar + extra + rest + start, table.n_rows)


class IterationsPane(TablePane):
    """One row per iteration with its breakdown (compute, exposed communication and copies,
    idle, data loading, syncs), its disjoint parts drawn as a stacked bar, the slowest and
    the outliers marked; Enter zooms the timeline to the iteration and scopes the ops to
    it."""

    # The legend wraps rather than being cut on a narrow screen.
    DEFAULT_CSS = """
    IterationsPane > #iterations-title { height: auto; max-height: 3; }
    """

    class Chosen(Message):
        def __init__(self, iteration: Iteration) -> None:
            super().__init__()
            self.iteration = iteration

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.iterations: list[Iteration] = []
        self.source: str | None = None
        self.steps: dict[tuple[str, int], StepBreakdown] = {}
        self.breakdown_shown = False
        self.origin_ns = 0  # the capture start, the zero of the starts shown

    def compose(self) -> ComposeResult:
        yield Static("No iterations found in this profile.", classes="title",
                     id="iterations-title", markup=False)
        yield FilterBox(placeholder="filter: Duration>50ms, Mark~outlier ... (Enter applies)")
        yield IterationTable(id="iterations-table")

    def table_view(self) -> IterationTable:
        return self.query_one("#iterations-table", IterationTable)

    def show_iterations(self, iterations: list[Iteration], source: str | None,
                        origin_ns: int) -> None:
        """Show `iterations` (found in `source`), their starts from `origin_ns`: the capture
        start (:func:`~proftui.core.ops.iterations.capture_start_ns`)."""
        self.iterations = iterations
        self.source = source
        self.origin_ns = origin_ns
        if not iterations:
            return
        view = self.table_view()
        if not any(it.group for it in iterations):
            view.hidden.add("Group")
        self._show(view)

    def show_breakdown(self, steps: list[StepBreakdown]) -> None:
        """Add the breakdown of each iteration (matched by group and number), keeping the
        filter."""
        self.steps = {(b.group, b.iteration): b for b in steps if b.iteration is not None}
        self.breakdown_shown = True
        if not self.iterations:
            return
        view = self.table_view()
        kept = view.filter_text
        self._show(view)
        if kept:
            view.set_filter(kept)

    def _show(self, view: IterationTable) -> None:
        bars = iteration_bars(self.iterations, self.steps)
        view.set_bars(bars)
        view.show(iterations_with_breakdown(self.iterations, self.steps, bars, self.origin_ns))
        self._title()

    def palette_changed(self) -> None:
        """The legend's swatches follow the bars' colours."""
        if self.iterations:
            self._title()

    def _title(self) -> None:
        computed = "" if self.breakdown_shown else " (breakdown computing ...)"
        title = Text(f"{plural(len(self.iterations), 'iteration')} from "
                     f"{safe(self.source or '?')}"
                     f"{computed}")
        legend = self.table_view().legend()
        if legend.plain:
            title.append("; bar: ")
            title.append_text(legend)
        title.append("   Enter zooms the timeline and scopes Ops to it")
        self.query_one("#iterations-title", Static).update(title)

    @on(TableView.RowChosen, "#iterations-table")
    def _chosen(self, event: TableView.RowChosen) -> None:
        event.stop()
        if 0 <= event.row < len(self.iterations):
            self.post_message(self.Chosen(self.iterations[event.row]))


class IterationTable(TableView):
    """The iterations table; its Breakdown column draws each row's disjoint parts as a
    stacked bar (in time order, numbered and coloured as the legend names them), on one
    scale for all rows, as wide as the other columns leave room for (at least a few cells,
    pushing the columns after it to the right rather than covering them)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.palette: Palette = palette_for("proftui-dark")
        self.bars: list[StepParts | None] = []
        self.names: list[str] = []  # the parts the bars hold, in the legend's order
        self._longest_ns = 0
        self._row = -1  # the table row being painted

    def set_bars(self, bars: list[StepParts | None]) -> None:
        """The parts of each table row (None: no bar)."""
        self.bars = bars
        found = {name for b in bars if b is not None for name, _ in b.parts}
        self.names = sorted(found, key=part_order)
        self._longest_ns = max((b.total_ns for b in bars if b is not None), default=0)

    def legend(self) -> Text:
        """The bars' parts in order, each with its number and colour; the step's end mark
        when some bar runs past it."""
        out = Text()
        for k, name in enumerate(self.names):
            colour = self._colour(k, name)
            out.append(f" {k + 1} ", Style(bgcolor=colour,
                                           color=self.palette.label_colour(colour)))
            out.append(f" {safe(name)} ")
        if any(b is not None and b.over_ns for b in self.bars):
            out.append("┃", Style(bold=True))
            out.append(" the step's end (device work ran on after it)  ")
        out.rstrip()
        return out

    def _colour(self, k: int, name: str) -> str:
        if name == OTHER:
            return self.palette.dim_text
        return self.palette.slices[k % len(self.palette.slices)]

    def _bar_slot(self) -> int | None:
        """Where the bar's column is among the columns shown."""
        if self.table is None:
            return None
        return next((n for n, i in enumerate(self._shown)
                     if self.table.columns[i].name == BAR_COLUMN), None)

    def _size_columns(self) -> None:
        super()._size_columns()
        slot = self._bar_slot()
        if slot is None:
            return
        width = self.size.width
        room = width - (sum(self._widths) - self._widths[slot])
        # at least a fifth of the pane, but not past its right edge where the columns before
        # leave less
        least = min(max(width // 5, MIN_BAR), MAX_LEAST_BAR,
                    max(width - sum(self._widths[:slot]), MIN_BAR // 2))
        self._widths[slot] = max(room, least)

    def render_line(self, y: int) -> Strip:
        n = self.top + y - 1
        self._row = int(self.order[n]) if 0 < y < self.size.height - 1 and 0 <= n < len(
            self.order) else -1
        return super().render_line(y)

    def cell_segments(self, body: str, column: Column, value: object,
                      style: Style) -> list[Segment]:
        if column.name != BAR_COLUMN or value is None or not (0 <= self._row < len(self.bars)):
            return super().cell_segments(body, column, value, style)
        parts = self.bars[self._row]
        cells = len(body)
        if parts is None or self._longest_ns <= 0 or cells <= 0:
            return [Segment(" " * (cells + 1), style)]
        scale = cells / self._longest_ns
        out = []
        done_ns = edge = 0
        end_cell = (int(round(parts.step_ns * scale)) if parts.over_ns else -1)
        for name, ns in parts.parts:
            done_ns += ns
            stop = min(int(round(done_ns * scale)), cells)
            if stop > edge:
                k = self.names.index(name)
                colour = self._colour(k, name)
                text = list((str(k + 1) + " " * stop)[:stop - edge])
                if edge <= end_cell < stop:  # the step ends inside this part
                    text[end_cell - edge] = "┃"
                out.append(Segment("".join(text), Style(
                    bgcolor=colour, color=self.palette.label_colour(colour))))
                edge = stop
        out.append(Segment(" " * (cells - edge + 1), style))
        return out
