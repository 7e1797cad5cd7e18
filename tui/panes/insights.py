"""The Insights pane: the advisor's findings, their numbers and evidence, the rules skipped."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from proftui.core.model.table import Column, Table, text_column
from proftui.tui.panes.base import FilterBox, TablePane
from proftui.tui.text.format import fmt_duration
from proftui.tui.text.safe import safe
from proftui.tui.widgets.table import TableView

if TYPE_CHECKING:  # the advisor is imported when its findings are shown
    from proftui.core.analysis.advise import Advice, Evidence, Finding


def findings_table(findings: list[Finding], with_group: bool) -> Table:
    """One row per finding, in the advisor's order (most time lost first)."""
    columns = [
        text_column("Severity", [f.severity for f in findings]),
        text_column("Rule", [f.rule for f in findings]),
    ]
    if with_group:
        columns.append(text_column("Group", [f.group for f in findings]))
    columns += [
        # "mean" in the name: the findings overlap, so the totals line leaves them unsummed
        Column("Time lost/step", "time lost per step mean", "ns", "number",
               np.array([f.time_lost_ns for f in findings], np.float64)),
        Column("% of step", "percent of step", "%", "number",
               np.array([f.share * 100.0 for f in findings], np.float64)),
        text_column("Finding", [f.title for f in findings]),
    ]
    return Table("findings", "", columns, len(findings))


def number_text(key: str, value: Any) -> str:
    """One of a finding's numbers as text: times in human units, shares as percentages."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{_label(k)} {number_text(k, v)}" for k, v in value.items())
    if isinstance(value, list):
        shown = "; ".join(number_text(key, v) for v in value[:5])
        return shown + (f"; ... ({len(value)} in all)" if len(value) > 5 else "")
    if isinstance(value, (int, float)):
        if key.endswith("_ns") or "_ns_" in key:
            return fmt_duration(int(round(value)))
        if "share" in key:
            return f"{value * 100:.1f}%"
        if float(value) == int(value):
            return f"{int(value):,}"
        return f"{value:,.3g}"
    return safe(str(value))


def _label(key: str) -> str:
    return key.removesuffix("_ns").replace("_ns_", "_").replace("_", " ")


def finding_lines(finding: Finding) -> list[str]:
    """What the pane says of the selected finding: its cost, numbers, evidence, the fix."""
    group = f" ({safe(finding.group)})" if finding.group else ""
    n = len(finding.evidence)
    lines = [f"{finding.severity} {safe(finding.rule)}{group}: {safe(finding.title)}",
             f"  time lost {fmt_duration(finding.time_lost_ns)} per step, "
             f"{finding.share * 100:.1f}% of the median step; evidence: {n} range"
             f"{'' if n == 1 else 's'}" + ("  (Enter shows the first, n / N walk them)"
                                           if n else "")]
    lines += [f"  {_label(k)}: {number_text(k, v)}" for k, v in finding.numbers.items()]
    lines.append(f"  suggestion: {safe(finding.suggestion)}")
    return lines


class FindingsTable(TableView):
    """The findings, one a row; tells the pane when the cursor lands on another row."""

    class RowHighlighted(Message):
        """The cursor moved to another row (`row` indexes the table's rows, -1: none)."""

        def __init__(self, row: int) -> None:
            super().__init__()
            self.row = row

    _last_row = -2

    def _moved(self) -> None:
        if self.current_row != self._last_row:
            self._last_row = self.current_row
            self.post_message(self.RowHighlighted(self.current_row))

    def show(self, table: Table, keep_position: bool = False) -> None:
        super().show(table, keep_position)
        self._last_row = -2
        self._moved()

    def set_filter(self, text: str) -> None:
        super().set_filter(text)
        self._moved()

    def action_move(self, step: int) -> None:
        super().action_move(step)
        self._moved()

    def action_sort(self) -> None:
        super().action_sort()
        self._moved()

    def on_click(self, event: events.Click) -> None:
        super().on_click(event)
        self._moved()


class InsightsPane(TablePane):
    """What to fix first: the advisor's findings by time lost, the selected one's numbers,
    suggestion and evidence; Enter shows its first evidence range on the timeline, n / N the
    next and previous; the rules that could not run, and why, at the bottom."""

    BINDINGS = [
        Binding("n", "walk_evidence(1)", "Next evidence"),
        Binding("N", "walk_evidence(-1)", "Previous evidence"),
    ]
    DEFAULT_CSS = """
    InsightsPane > FindingsTable { height: 5; max-height: 60%; }
    InsightsPane > VerticalScroll { height: 1fr; }
    InsightsPane .skipped { color: $text-muted; text-style: dim; }
    """

    class EvidenceChosen(Message):
        """Evidence range `number` (from 0) of `finding` is to be shown on the timeline."""

        def __init__(self, finding: Finding, number: int) -> None:
            super().__init__()
            self.finding = finding
            self.number = number

        @property
        def evidence(self) -> Evidence:
            return self.finding.evidence[self.number]

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.advice: Advice | None = None
        self.findings: list[Finding] = []
        self.highlighted: Finding | None = None
        self.walking: Finding | None = None  # the finding whose evidence n / N walk
        self.evidence_number = -1

    def compose(self) -> ComposeResult:
        yield Static("Insights: waiting for the trace ...", classes="title", id="insights-title",
                     markup=False)
        yield FilterBox(placeholder="filter: text, /regex/, Rule~sync, Severity~high "
                                    "(Enter applies, Esc closes)")
        yield FindingsTable(id="insights-table")
        with VerticalScroll():
            yield Static("", id="insights-finding", markup=False)
            yield Static("", id="insights-skipped", classes="skipped", markup=False)

    def table_view(self) -> TableView:
        return self.query_one("#insights-table", TableView)

    def show_busy(self) -> None:
        """The advisor is running."""
        self._title_text("Insights: analysing the steps ...")

    def show_failure(self, reason: str) -> None:
        """The advisor could not run on this profile."""
        self._title_text(f"Insights: the analysis failed: {safe(reason)}")

    def show_advice(self, advice: Advice, several_groups: bool) -> None:
        """Show the findings (the Group column only when the profile has several groups)."""
        self.advice = advice
        self.findings = list(advice.findings)
        self.walking, self.evidence_number = None, -1
        view = self.table_view()
        view.display = bool(self.findings)
        if self.findings:
            table = findings_table(self.findings, several_groups)
            view.styles.height = min(len(self.findings), 8) + 2  # rows, header, totals
            view.show(table)
        else:
            from proftui.core.analysis.advise import RULES

            self.highlighted = None
            ran = f"{len(RULES) - len(advice.skipped)} rules ran and found nothing to fix"
            why = (f", {len(advice.skipped)} could not run (below)" if advice.skipped else "")
            self.query_one("#insights-finding", Static).update(
                f"No findings: {ran}{why}.")
        self._title()
        skipped = [f"skipped {safe(rule)}: {safe(reason)}" for rule, reason in advice.skipped]
        self.query_one("#insights-skipped", Static).update("\n".join(skipped))

    def _title_text(self, text: str) -> None:
        self.query_one("#insights-title", Static).update(text)

    def _title(self) -> None:
        if self.advice is None:
            return
        n = len(self.findings)
        text = f"{n} finding{'' if n == 1 else 's'}, most time lost first"
        if self.walking is not None and self.evidence_number >= 0:
            text += (f"   {safe(self.walking.rule)} evidence {self.evidence_number + 1} of "
                     f"{len(self.walking.evidence)}")
        if n:
            text += "   Enter: evidence on the timeline, n / N: next / previous"
        self._title_text(text)

    @on(FindingsTable.RowHighlighted)
    def _highlighted(self, event: FindingsTable.RowHighlighted) -> None:
        event.stop()
        finding = self.findings[event.row] if 0 <= event.row < len(self.findings) else None
        self.highlighted = finding
        self.query_one("#insights-finding", Static).update(
            "\n".join(finding_lines(finding)) if finding is not None else "")

    @on(TableView.RowChosen, "#insights-table")
    def _chosen(self, event: TableView.RowChosen) -> None:
        event.stop()
        if 0 <= event.row < len(self.findings):
            self._show_evidence(self.findings[event.row], 0)

    def action_walk_evidence(self, step: int) -> None:
        """The next (1) or previous (-1) evidence range of the finding being walked (else of
        the highlighted one, from its first)."""
        if self.walking is None or self.walking is not self.highlighted:
            if self.highlighted is not None:
                self._show_evidence(self.highlighted, 0)
            return
        n = len(self.walking.evidence)
        if n:
            self._show_evidence(self.walking, (self.evidence_number + step) % n)

    def _show_evidence(self, finding: Finding, number: int) -> None:
        self.walking = finding
        if not finding.evidence:
            self.evidence_number = -1
            self._title_text(f"Insights: {safe(finding.rule)} has no evidence range to show")
            return
        self.evidence_number = number
        self._title()
        self.post_message(self.EvidenceChosen(finding, number))

