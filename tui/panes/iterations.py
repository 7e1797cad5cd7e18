"""The Iterations pane: every step with its breakdown as a stacked bar (`proftui iterations`
and `proftui breakdown` print the same numbers)."""

from __future__ import annotations

import numpy as np
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Static

from proftui.core.analysis.breakdown import TABLE_COLUMNS, StepBreakdown
from proftui.core.analysis.speed import speed_text
from proftui.core.analysis.step_parts import OTHER, StepParts, part_order, step_parts
from proftui.core.analysis.summary import iteration_summary
from proftui.core.model.table import Column, Table
from proftui.core.ops.instances import iterations_table
from proftui.core.ops.iterations import Iteration, Iterations
from proftui.themes import Palette, palette_for
from proftui.tui.panes.base import FilterBox, TablePane
from proftui.tui.text.format import fmt_duration, plural
from proftui.tui.text.safe import safe
from proftui.tui.widgets.table import TableView

# The bar's least width: a fifth of the pane, within these bounds; more when the columns
# leave more room.
MIN_BAR, MAX_LEAST_BAR = 12, 40


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
    """The iterations table (:func:`~proftui.core.ops.instances.iterations_table`, starts from
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

    BINDINGS = [Binding("z", "fold", "Fold steps")]

    class Chosen(Message):
        def __init__(self, iteration: Iteration) -> None:
            super().__init__()
            self.iteration = iteration

    class FoldWanted(Message):
        """`z` on a row: its rank's steps side by side on the timeline, this one focused."""

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
                     f"{computed}{self._speed()}")
        legend = self.table_view().legend()
        if legend.plain:
            title.append("; bar: ")
            title.append_text(legend)
        title.append("   Enter zooms the timeline and scopes Ops to it; z folds the steps")
        self.query_one("#iterations-title", Static).update(title)

    def _speed(self) -> str:
        """"; 354 steps/s, data loading 26.1 %" (per group where there are several), from
        the code and numbers of `proftui summary`."""
        steps: dict[str, list[StepBreakdown]] = {}
        for b in self.steps.values():
            steps.setdefault(b.group, []).append(b)
        found = iteration_summary(Iterations(self.source or "", self.iterations), steps)
        said = [(g["group"], speed_text(g)) for g in (found or {}).get("groups", [])]
        said = [(group, text) for group, text in said if text]
        if len(said) == 1:
            return f"; {said[0][1]}"
        return "".join(f"; {safe(group)}: {text}" for group, text in said)

    def action_fold(self) -> None:
        row = self.table_view().current_row
        if 0 <= row < len(self.iterations):
            self.post_message(self.FoldWanted(self.iterations[row]))

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
