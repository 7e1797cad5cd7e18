"""The Cluster pane: a rank x iteration heat strip, the ranks compared, and a key to the step.

The strip shades each rank's step time (or, `v`, its compute, exposed communication or free
time) on the cluster's scale and marks the worst cell, as the strip of ``proftui cluster``
does (both draw :func:`~proftui.core.analysis.heat.heat_grid`). Enter on a cell, or on a row
of the ranks table, opens that rank's step on the timeline, the ranks aligned at that step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from proftui.tui.panes.base import FilterBox, TablePane
from proftui.tui.text.format import fmt_duration, plural
from proftui.tui.text.safe import safe
from proftui.tui.widgets.table import TableView

if TYPE_CHECKING:  # the analyses are imported when their results are shown
    from proftui.core.analysis.cluster import Cluster
    from proftui.core.analysis.cluster_comm import ClusterComm, ProfilerComparison
    from proftui.core.analysis.heat import HeatGrid

RAMP = "▁▂▃▄▅▆▇█"  # as the command's strip: readable without colour
# From cool to hot (ColorBrewer RdYlBu, reversed): the colour says the same as the glyph.
HEAT_COLOURS = ("#4575b4", "#74add1", "#abd9e9", "#e0f3f8", "#fee090", "#fdae61", "#f46d43",
                "#d73027")
WORST = "◆"
CELL_WIDTH = 2
MAX_LABEL = 16


class HeatStrip(Widget, can_focus=True):
    """One row per rank, one cell per iteration, shaded by the chosen metric; a cursor cell
    (arrows), Enter opens it, `v` switches the metric."""

    DEFAULT_CSS = """
    HeatStrip { height: auto; max-height: 60%; }
    """
    BINDINGS = [
        Binding("up", "move(-1, 0)", "Up", show=False),
        Binding("down", "move(1, 0)", "Down", show=False),
        Binding("left", "move(0, -1)", "Left", show=False),
        Binding("right", "move(0, 1)", "Right", show=False),
        Binding("home", "move(0, -1000000)", "First step", show=False),
        Binding("end", "move(0, 1000000)", "Last step", show=False),
        Binding("enter", "choose", "Open step"),
        Binding("v", "next_metric", "Metric"),
        Binding("x", "worst", "Worst cell"),
        Binding("z", "fold", "Fold ranks"),
    ]

    class CellChosen(Message):
        """Enter on a cell: `rank`'s step `iteration` is to be shown."""

        def __init__(self, rank: str, iteration: int) -> None:
            super().__init__()
            self.rank = rank
            self.iteration = iteration

    class FoldWanted(Message):
        """`z` on a cell: every rank's step `iteration` side by side on the timeline."""

        def __init__(self, rank: str, iteration: int) -> None:
            super().__init__()
            self.rank = rank
            self.iteration = iteration

    class CellHighlighted(Message):
        """The cursor moved to another cell (or the metric changed)."""

        def __init__(self, rank: str, iteration: int) -> None:
            super().__init__()
            self.rank = rank
            self.iteration = iteration

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.found: Cluster | None = None
        self.grid: HeatGrid | None = None
        self.metric = "step_ns"
        self.cursor = (0, 0)  # (rank row, iteration column)
        self.top = 0
        self.left = 0

    def show(self, found: Cluster, metric: str | None = None) -> None:
        """Draw the grid of `found`, the cursor on its worst cell."""
        self.found = found
        self.metric = metric or self.metric
        from proftui.core.analysis.heat import heat_grid

        self.grid = heat_grid(found, self.metric)
        self.styles.height = len(self.grid.ranks) + 1 if self.grid.iterations else 1
        self.cursor = self.grid.worst or (0, 0)
        self._keep_cursor_visible()
        self._highlighted()
        self.refresh()

    @property
    def label_width(self) -> int:
        if self.grid is None:
            return 0
        return max(len("iteration"), *(len(self._label(r)) for r in self.grid.ranks))

    @staticmethod
    def _label(rank: str) -> str:
        text = safe(rank) or "(all)"
        return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + "…"

    @property
    def columns_shown(self) -> int:
        return max((self.size.width - self.label_width - 2) // CELL_WIDTH, 1)

    @property
    def rows_shown(self) -> int:
        return max(self.size.height - 1, 1)

    # -- keys -------------------------------------------------------------------------------------

    def action_move(self, rows: int, columns: int) -> None:
        grid = self.grid
        if grid is None or not grid.iterations:
            return
        row = min(max(self.cursor[0] + rows, 0), len(grid.ranks) - 1)
        column = min(max(self.cursor[1] + columns, 0), len(grid.iterations) - 1)
        if (row, column) != self.cursor:
            self.cursor = (row, column)
            self._keep_cursor_visible()
            self._highlighted()
            self.refresh()

    def action_worst(self) -> None:
        if self.grid is not None and self.grid.worst is not None:
            self.cursor = self.grid.worst
            self._keep_cursor_visible()
            self._highlighted()
            self.refresh()

    def action_choose(self) -> None:
        cell = self.current_cell
        if cell is not None:
            self.post_message(self.CellChosen(*cell))

    def action_fold(self) -> None:
        cell = self.current_cell
        if cell is not None:
            self.post_message(self.FoldWanted(*cell))

    def action_next_metric(self) -> None:
        if self.found is None:
            return
        from proftui.core.analysis.heat import METRICS

        keys = list(METRICS)
        cursor = self.cursor
        self.show(self.found, keys[(keys.index(self.metric) + 1) % len(keys)])
        self.cursor = cursor  # the same cell, now shaded by the other metric
        self._keep_cursor_visible()
        self._highlighted()

    @property
    def current_cell(self) -> tuple[str, int] | None:
        """(rank, iteration) under the cursor."""
        grid = self.grid
        if grid is None or not grid.iterations:
            return None
        return grid.ranks[self.cursor[0]], grid.iterations[self.cursor[1]]

    def _highlighted(self) -> None:
        cell = self.current_cell
        if cell is not None:
            self.post_message(self.CellHighlighted(*cell))

    def _keep_cursor_visible(self) -> None:
        grid = self.grid
        if grid is None:
            return
        row, column = self.cursor
        # No further than needed: a strip that fits starts at its first cell.
        top = min(self.top, max(len(grid.ranks) - self.rows_shown, 0))
        left = min(self.left, max(len(grid.iterations) - self.columns_shown, 0))
        self.top = min(max(top, row - self.rows_shown + 1), row)
        self.left = min(max(left, column - self.columns_shown + 1), column)

    def on_resize(self, event: events.Resize) -> None:
        self._keep_cursor_visible()  # laid out while hidden, it scrolled for a 0x0 size
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        grid = self.grid
        if grid is None or event.y < 1:
            return
        row = self.top + event.y - 1
        column = self.left + (event.x - self.label_width - 2) // CELL_WIDTH
        if 0 <= row < len(grid.ranks) and 0 <= column < len(grid.iterations) and (
                event.x >= self.label_width + 2):
            self.cursor = (row, column)
            self._highlighted()
            self.refresh()
            if event.chain >= 2:
                self.action_choose()

    # -- painting -------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        grid = self.grid
        if grid is None or not grid.iterations:
            text = "no numbered steps to draw" if grid is not None else ""
            return Strip([Segment(text[:width].ljust(width), base)], width)
        label_width = self.label_width
        if y == 0:
            return self._ruler(base, width, label_width)
        row = self.top + y - 1
        if row >= len(grid.ranks):
            return Strip([Segment(" " * width, base)], width)
        label = self._label(grid.ranks[row]).ljust(label_width + 2)
        segments = [Segment(label, base + Style(bold=row == self.cursor[0]))]
        last = min(self.left + self.columns_shown, len(grid.iterations))
        for column in range(self.left, last):
            segments.append(self._cell(row, column, base))
        return Strip(segments).crop(0, width).extend_cell_length(width, base)

    def _cell(self, row: int, column: int, base: Style) -> Segment:
        grid = self.grid
        assert grid is not None
        share = grid.share(row, column)
        cursor = (row, column) == self.cursor
        if share is None:
            text, style = "·".ljust(CELL_WIDTH), base + Style(dim=True)
        else:
            k = round(share * (len(RAMP) - 1))
            glyph = WORST if grid.worst == (row, column) else RAMP[k]
            style = base + Style(color=HEAT_COLOURS[k], bold=glyph == WORST)
            if grid.warmup[row, column]:
                style += Style(dim=True)
            text = glyph * CELL_WIDTH if glyph != WORST else WORST.ljust(CELL_WIDTH)
        if cursor:
            style += Style(reverse=True) if self.has_focus else Style(underline=True)
        return Segment(text, style)

    def _ruler(self, base: Style, width: int, label_width: int) -> Strip:
        """Iteration numbers over the cells, where they fit."""
        grid = self.grid
        assert grid is not None
        room = width - label_width - 2
        line = [" "] * max(room, 0)
        free_from = 0
        last = min(self.left + self.columns_shown, len(grid.iterations))
        for column in range(self.left, last):
            text = str(grid.iterations[column])
            at = (column - self.left) * CELL_WIDTH
            if at >= free_from and at + len(text) <= room and (
                    column == self.cursor[1] or column % 5 == 0 or column == self.left):
                line[at:at + len(text)] = text
                free_from = at + len(text) + 1
        text = "iteration".ljust(label_width + 2) + "".join(line)
        return Strip([Segment(text[:width].ljust(width), base + Style(dim=True))], width)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()


VIEWS = ("ranks", "link types", "link matrix", "vs msprof-analyze")


class ClusterPane(TablePane):
    """The ranks compared: the heat strip, the facts of the cell under its cursor, and one row
    per rank (medians, collectives, arrivals last, waits); Enter opens a step. `[` and `]`
    switch the table to the bandwidth per link type and rank, the link matrix (slow links
    flagged) and msprof-analyze's cluster output beside proftui's figures, where there."""

    BINDINGS = [
        Binding("left_square_bracket", "switch(-1)", "Previous table"),
        Binding("right_square_bracket", "switch(1)", "Next table"),
    ]
    DEFAULT_CSS = """
    /* on a short screen the ranks' table is below the fold: the pane scrolls to it */
    ClusterPane { overflow-y: auto; }
    ClusterPane > #cluster-cell { height: auto; }
    ClusterPane > #cluster-comm { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.found: Cluster | None = None
        self.comm: ClusterComm | None = None
        self.profiler: ProfilerComparison | None = None
        self.current = 0

    def compose(self) -> ComposeResult:
        yield Static("Cluster: waiting for the trace ...", classes="title", id="cluster-title",
                     markup=False)
        yield HeatStrip(id="cluster-strip")
        yield Static("", id="cluster-cell", markup=False)
        yield FilterBox(placeholder="filter the ranks: rank 1, Last>0 ... (Enter applies)")
        yield TableView(id="cluster-ranks")
        yield Static("", id="cluster-comm", markup=False)

    def table_view(self) -> TableView:
        return self.query_one("#cluster-ranks", TableView)

    def strip(self) -> HeatStrip:
        return self.query_one(HeatStrip)

    def first_focus(self) -> Widget:
        """What takes the keys when the pane is switched to: the strip, once there is one."""
        strip = self.strip()
        return strip if strip.grid is not None and strip.grid.iterations else self.table_view()

    def show_busy(self) -> None:
        self._title_text("Cluster: comparing the ranks ...")

    def show_failure(self, reason: str) -> None:
        self._title_text(f"Cluster: the analysis failed: {safe(reason)}")

    def show_cluster(self, found: Cluster) -> None:
        """Show the ranks of `found` (a profile of one rank says there is nothing to compare,
        and still shows its steps)."""
        self.found = found
        if not found.ranks:
            self._title_text("Cluster: no slices to compare in this profile.")
            return
        self.strip().show(found)
        self.current = 0
        self._show_table()
        self._title()

    def show_comm(self, comm: ClusterComm | None, profiler: ProfilerComparison | None) -> None:
        """Add the ranks' communication and the profiler's cluster output compared (either
        None when the profile has none)."""
        self.comm, self.profiler = comm, profiler
        self._comm_text("\n".join(comm_lines(comm, profiler)))

    def show_comm_failure(self, reason: str) -> None:
        self._comm_text(f"Communication could not be read: {safe(reason)}")

    def _comm_text(self, text: str) -> None:
        # The analysis runs in a worker: it may answer while the app closes (its widgets
        # already gone), with nothing left to show it on.
        try:
            self.query_one("#cluster-comm", Static).update(text)
        except NoMatches:
            pass

    @property
    def views(self) -> list[str]:
        """The tables there is something for."""
        have = {"ranks": self.found is not None, "link types": self.comm is not None,
                "link matrix": self.comm is not None,
                "vs msprof-analyze": self.profiler is not None}
        return [v for v in VIEWS if have[v]]

    @property
    def view_name(self) -> str:
        views = self.views
        return views[self.current % len(views)] if views else "ranks"

    def action_switch(self, step: int) -> None:
        if self.found is not None and self.found.ranks and len(self.views) > 1:
            self.current = (self.current + step) % len(self.views)
            self._show_table()
            self._title()

    def _show_table(self) -> None:
        from proftui.core.analysis.cluster import rank_table
        from proftui.core.analysis.cluster_comm import (
            check_table,
            link_type_table,
            matrix_table,
        )

        assert self.found is not None
        view = self.table_view()
        name = self.view_name
        if name == "ranks":
            table = rank_table(self.found)
        elif name == "link types":
            assert self.comm is not None
            table = link_type_table(self.comm)
        elif name == "link matrix":
            assert self.comm is not None
            table = matrix_table(self.comm.matrix)
        else:
            assert self.profiler is not None
            table = check_table(sorted(self.profiler.checks, key=lambda c: not c.differs))
        view.styles.height = min(table.n_rows, 16) + 2  # rows, header, totals line
        view.show(table)

    def _title(self) -> None:
        found = self.found
        strip = self.strip()
        if found is None:
            return
        from proftui.core.analysis.heat import METRICS

        n = len(found.ranks)
        what = METRICS[strip.metric]
        parts = [f"{n} ranks" if n > 1 else "one rank: nothing to compare across ranks"]
        if len(self.views) > 1:
            parts.insert(0, "  ".join(f"[{v}]" if v == self.view_name else v
                                      for v in self.views) + " ([ ] switch)")
        if found.spread is not None:
            parts.append(f"spread {found.spread * 100:.1f} %")
        if found.slowest is not None:
            rank, iteration, step_ns = found.slowest
            at = f" step {iteration}" if iteration is not None else ""
            parts.append(f"slowest: {safe(rank) or '(all)'}{at} ({fmt_duration(step_ns)})")
        grid = strip.grid
        if grid is not None and grid.iterations:
            parts.append(f"strip: {what} {RAMP[0]} {fmt_duration(grid.lo_ns)} .. {RAMP[-1]} "
                         f"{fmt_duration(grid.hi_ns)}")
        self._title_text("; ".join(parts))

    def _title_text(self, text: str) -> None:
        self.query_one("#cluster-title", Static).update(text)

    @on(HeatStrip.CellHighlighted)
    def _cell_highlighted(self, message: HeatStrip.CellHighlighted) -> None:
        message.stop()
        if self.found is None:
            return
        self._title()
        self.query_one("#cluster-cell", Static).update(
            cell_text(self.found, message.rank, message.iteration))

    @on(TableView.RowChosen, "#cluster-ranks")
    def _rank_chosen(self, event: TableView.RowChosen) -> None:
        """Enter on a rank: its worst step (by the strip's metric) opens."""
        event.stop()
        if self.view_name != "ranks":
            return
        grid = self.strip().grid
        if grid is None or not grid.iterations or not 0 <= event.row < len(grid.ranks):
            return
        values = grid.values[event.row]
        kept = [(float(v), k) for k, v in enumerate(values)
                if v == v and not grid.warmup[event.row, k]]
        if kept:
            column = max(kept, key=lambda vk: (vk[0], -vk[1]))[1]
            self.post_message(HeatStrip.CellChosen(grid.ranks[event.row],
                                                   grid.iterations[column]))


def cell_text(found: Cluster, rank: str, iteration: int) -> str:
    """The line under the strip: the cell's step, its parts and the rank's waits there."""
    from proftui.core.analysis.heat import cell_facts

    facts = cell_facts(found, rank, iteration)
    who = safe(rank) or "(all)"
    step = facts.step
    if step is None:
        return f"{who}, iteration {iteration}: no such step"
    parts = [f"step {fmt_duration(step.step_ns)}"]
    for key, label in (("compute_ns", "compute"), ("comm_exposed_ns", "exposed comm"),
                       ("free_ns", "free")):
        value = getattr(step, key)
        if value is not None:
            parts.append(f"{label} {fmt_duration(value)}")
    text = f"{who}, iteration {iteration}{' (warm-up)' if step.warmup else ''}: " + ", ".join(
        parts)
    if facts.collectives:
        text += (f"; at its {plural(facts.collectives, 'collective')} waited "
                 f"{fmt_duration(facts.wait_ns)}, arrived last at {facts.arrived_last}")
    return text


def comm_lines(comm: ClusterComm | None, profiler: ProfilerComparison | None) -> list[str]:
    """Under the table: the slow links and transports, and how the profiler's figures
    compare."""
    from proftui.core.analysis.cluster_comm import SLOW_DEFINITION

    lines = []
    if comm is not None:
        slow = [c for c in comm.matrix if c.slow]
        slow_types = [(r.rank, r.step, t) for r in comm.ranks for t in r.transports if t.slow]
        small = (f", {comm.links_not_judged} too small to judge (under 1 MB)"
                 if comm.links_not_judged else "")
        lines.append(f"Links: {len(comm.matrix)}, {len(slow)} slow{small}; link types slow on "
                     f"a rank: {len(slow_types)} ({SLOW_DEFINITION})")
        for c in slow[:5]:
            lines.append(f"  slow link: step {c.step}: {safe(c.src)} -> {safe(c.dst)} "
                         f"{safe(c.transport)} {c.bandwidth_gbps:.2f} GB/s (median "
                         f"{c.median_gbps:.2f} GB/s)")
    if profiler is not None:
        lines.append(f"msprof-analyze's cluster output: {len(profiler.checks)} figures "
                     f"compared, {len(profiler.differing)} differ"
                     + "".join(f"; {safe(e)}" for e in profiler.errors))
    return lines
