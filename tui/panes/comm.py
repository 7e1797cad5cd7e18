"""The Communication pane: the tables `proftui comm` prints (collectives, transports, links,
ranks), the flags and the problems; Enter on a collective shows it on the timeline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from proftui.tui.panes.base import FilterBox, TablePane
from proftui.tui.text.format import fmt_count, fmt_duration, plural
from proftui.tui.text.safe import safe
from proftui.tui.widgets.table import TableView

if TYPE_CHECKING:  # the analysis is imported when its report is shown
    from proftui.core.analysis.comm import CollectiveStat, CommReport

VIEWS = ("collectives", "transports", "links", "ranks")


def flag_lines(report: CommReport) -> list[str]:
    """The flags, one line each, then what was wrong in the files and what was not read."""
    from proftui.core.analysis.comm_tables import flag_text, not_judged_text, problem_texts

    lines = [safe(flag_text(f)) for f in report.flags]
    if not lines:
        lines.append("No slow link or transport, no small packets.")
    if report.links_not_judged:
        lines.append(not_judged_text(report.links_not_judged) + ".")
    return lines + [safe(line) for line in problem_texts(report)]


def collective_lines(stat: CollectiveStat) -> list[str]:
    """What one collective moved, per transport."""
    c = stat.op
    lines = [f"{safe(c.name)}{' of ' + safe(stat.rank) if stat.rank else ''}: elapse "
             f"{fmt_duration(c.elapse_ns or 0)}, transit {fmt_duration(c.transit_ns or 0)}, "
             f"group {safe(c.group)}"]
    for t in stat.transports:
        speed = f"{t.bandwidth_gbps:.3f} GB/s" if t.bandwidth_gbps is not None else "-"
        packets = (f", {fmt_count(t.packets)} packets, {t.large_packets} large"
                   if t.packets else "")
        lines.append(f"  {safe(t.transport)}: {t.size_bytes / 1e6:,.3f} MB in "
                     f"{fmt_duration(t.time_ns)}, {speed}{packets}")
    return lines


class CommPane(TablePane):
    """How the ranks communicate: `[` and `]` switch between the collectives (longest elapse
    first; Enter shows one on the timeline), transports, links (slowest against their peers
    first) and ranks; the flags below."""

    BINDINGS = [
        Binding("left_square_bracket", "switch(-1)", "Previous table"),
        Binding("right_square_bracket", "switch(1)", "Next table"),
    ]
    DEFAULT_CSS = """
    CommPane > TableView { height: 1fr; }
    CommPane > VerticalScroll { height: auto; max-height: 40%; }
    """

    class CollectiveChosen(Message):
        """A collective is to be shown on the timeline."""

        def __init__(self, stat: CollectiveStat) -> None:
            super().__init__()
            self.stat = stat

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.report: CommReport | None = None
        self.current = 0

    def compose(self) -> ComposeResult:
        yield Static("Communication: waiting for the trace ...", classes="title",
                     id="comm-title", markup=False)
        yield FilterBox(placeholder="filter: text, /regex/, Rank~1, Elapse>1ms "
                                    "(Enter applies, Esc closes)")
        yield TableView(id="comm-table")
        with VerticalScroll():
            yield Static("", id="comm-detail", markup=False)

    def table_view(self) -> TableView:
        return self.query_one("#comm-table", TableView)

    @property
    def view_name(self) -> str:
        return VIEWS[self.current]

    def show_busy(self) -> None:
        self._title_text("Communication: reading the communication summaries ...")

    def show_failure(self, reason: str) -> None:
        self._title_text(f"Communication: could not be read: {safe(reason)}")

    def show_report(self, report: CommReport) -> None:
        """Show the report (or say that the profile has no communication data)."""
        self.report = report
        view = self.table_view()
        if report.empty:
            view.display = False
            errors = [s.error for s in report.sources if s.error]
            self._title_text("Communication: " + (safe(" ".join(errors)) if errors else
                             "no communication data in this profile (no communication.json, "
                             "communication_matrix.json or analysis.db communication tables)."))
            return
        view.display = True
        self.current = 0
        self._show()

    def action_switch(self, step: int) -> None:
        if self.report is not None and not self.report.empty:
            self.current = (self.current + step) % len(VIEWS)
            self._show()

    def _show(self) -> None:
        assert self.report is not None
        from proftui.core.analysis.comm_tables import (
            collective_table,
            link_table,
            rank_table,
            slowest_links,
            transport_table,
        )

        report = self.report
        table = {"collectives": lambda: collective_table(report.collectives),
                 "transports": lambda: transport_table(report),
                 "links": lambda: link_table(slowest_links(report.links)),
                 "ranks": lambda: rank_table(report)}[self.view_name]()
        self.table_view().show(table)
        names = "  ".join(f"[{v}]" if n == self.current else v for n, v in enumerate(VIEWS))
        hint = "; Enter: on the timeline" if self.view_name == "collectives" else ""
        self._title_text(f"{names}   ({plural(table.n_rows, 'row')}; [ ] switch, / filter, "
                         f"S sort{hint})")
        self.query_one("#comm-detail", Static).update("\n".join(flag_lines(report)))

    def _title_text(self, text: str) -> None:
        self.query_one("#comm-title", Static).update(text)

    @on(TableView.RowChosen, "#comm-table")
    def _chosen(self, event: TableView.RowChosen) -> None:
        event.stop()
        if self.report is None or self.view_name != "collectives":
            return
        if 0 <= event.row < len(self.report.collectives):
            stat = self.report.collectives[event.row]
            self.query_one("#comm-detail", Static).update(
                "\n".join(collective_lines(stat) + [""] + flag_lines(self.report)))
            self.post_message(self.CollectiveChosen(stat))
