"""Routing between the app's panes: a choice in one shows it on the timeline and the ops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.widgets import TabbedContent

from proftui.core.model.errors import ProftuiError
from proftui.core.ops.iterations import Iteration, capture_start_ns
from proftui.core.ops.rank_offsets import RankOffsets, rank_offsets
from proftui.tui.panes.ops_window import WHOLE_TRACE, Window
from proftui.tui.text.format import fmt_duration
from proftui.tui.text.safe import safe
from proftui.tui.widgets.timeline import Timeline

if TYPE_CHECKING:
    from proftui.core.analysis.advise import Evidence, Finding
    from proftui.core.analysis.comm import CollectiveStat
    from proftui.tui.app.shell import ProftuiApp


def range_window(start_ns: int, end_ns: int, origin_ns: int,
                 alignment: RankOffsets | None) -> Window:
    """A selected range as the ops' window, labelled from `origin_ns` (the capture start).
    With the ranks aligned, the range is on the aligned clock: each rank's own window, moved
    by its offset."""
    label = (f"range {fmt_duration(start_ns - origin_ns)} to {fmt_duration(end_ns - origin_ns)} "
             f"({fmt_duration(end_ns - start_ns)})")
    if alignment is None:
        return Window(label, start_ns, end_ns)
    windows = alignment.windows(start_ns, end_ns)
    return Window(f"{label} aligned at iteration {alignment.number}: each rank's own "
                  "window, moved by its offset",
                  min(w[0] for w in windows.values()), max(w[1] for w in windows.values()),
                  windows)


def iteration_window(iteration: Iteration, iterations: Sequence[Iteration]) -> Window:
    """An iteration as the ops' window: of its rank's tracks only when it is one rank's of
    several."""
    group = f" of {safe(iteration.group)}" if iteration.group else ""  # a folder name
    several = len({it.group for it in iterations}) > 1
    groups = ({iteration.group: (iteration.start_ns, iteration.end_ns)}
              if iteration.group and several else None)
    return Window(f"iteration {iteration.number}{group}", iteration.start_ns, iteration.end_ns,
                  groups)


def timed_iteration(iterations: Sequence[Iteration], group: str,
                    number: int) -> Iteration | None:
    """A group's iteration of that number, if it has a time window."""
    return next((it for it in iterations if (it.group, it.number) == (group, number)
                 and it.start_ns >= 0 and it.dur_ns >= 0), None)


def evidence_view(evidence: Evidence, shift_ns: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The window and the range an insight's evidence is shown with (its rank drawn
    `shift_ns` to the left): the range, with a tenth of it either side."""
    margin = max((evidence.end_ns - evidence.start_ns) // 10, 1)
    start, end = evidence.start_ns - shift_ns, evidence.end_ns - shift_ns
    return (start - margin, end + margin), (start, end)


class Routing:
    """What a choice in a pane, the overview or the timeline shows elsewhere."""

    def __init__(self, app: ProftuiApp) -> None:
        self.app = app

    def _timeline(self) -> Timeline:
        return self.app.query_one(Timeline)

    def show_timeline(self) -> None:
        """Make the timeline visible (un-maximise the panes, hide the overview)."""
        app = self.app
        timeline = self._timeline()
        if timeline.index is None:
            return
        panes = app.query_one("#panes")
        panes.remove_class("maximised")
        panes.display = app.query_one("#main").display = True
        app.query_one("#overview").remove_class("shown")
        timeline.display = True
        app.refresh_bindings()

    def zoom_to(self, start_ns: int, end_ns: int) -> None:
        """The timeline shows [start_ns, end_ns) with a little room, its cursor at the start."""
        margin = (end_ns - start_ns) // 50
        timeline = self._timeline()
        timeline.set_window(start_ns - margin, end_ns + margin)
        timeline.cursor_ns = start_ns  # where zooming in starts from

    def show_iteration(self, iteration: Iteration) -> None:
        """Zoom the timeline to an iteration and scope the ops pane to it (to its rank's
        tracks, when it is one rank's of several)."""
        app = self.app
        shift = self._timeline().shift_of_group(iteration.group)
        self.zoom_to(iteration.start_ns - shift, iteration.end_ns - shift)
        window = iteration_window(iteration, app.iterations)
        app._pane("ops").set_window(window)
        app._status(f"{safe(window.label)}: {fmt_duration(iteration.dur_ns)}")

    def range_window(self, start_ns: int, end_ns: int) -> Window:
        """A selected range as a window (see the function of that name)."""
        index = self.app.index
        origin = capture_start_ns(index) if index is not None else 0
        return range_window(start_ns, end_ns, origin, self._timeline().alignment)

    def range_changed(self, start_ns: int | None, end_ns: int | None) -> None:
        """The ops follow the selected range (an area selection); no range: the whole trace."""
        ops = self.app._pane("ops")
        if start_ns is None or end_ns is None or self.app.index is None:
            ops.set_window(WHOLE_TRACE)
            return
        ops.set_window(self.range_window(start_ns, end_ns))

    def iteration_chosen(self, iteration: Iteration) -> None:
        if iteration.start_ns < 0:
            self.app._status(f"Iteration {iteration.number} has no time window.")
            return
        self.show_iteration(iteration)

    def evidence_chosen(self, finding: Finding, evidence: Evidence, number: int) -> None:
        """Show an evidence range: the timeline (made visible) zooms to it and selects it."""
        self.show_timeline()
        timeline = self._timeline()
        window, chosen = evidence_view(evidence, timeline.shift_of_group(evidence.group))
        timeline.set_window(*window)
        timeline.set_range(*chosen)
        self.show_rank(evidence.group)  # its rank's tracks, not whichever were on screen
        if evidence.slice is not None:  # the evidence is a slice: selected, its details shown
            timeline.select(evidence.slice)
        where = f" in {safe(evidence.group)}" if evidence.group else ""
        step = f", step {evidence.iteration}" if evidence.iteration is not None else ""
        self.app._status(f"{safe(finding.rule)} evidence {number + 1} of "
                         f"{len(finding.evidence)}: {safe(evidence.label)}{where}{step}, "
                         f"{fmt_duration(evidence.end_ns - evidence.start_ns)} (n / N walk)")

    def show_rank(self, group: str) -> None:
        """Scroll the timeline to a rank's (or device's) first process, at the top of the
        tracks; nothing for no group."""
        timeline = self._timeline()
        process = timeline.first_process_of(group)
        if process is not None:
            timeline.show_process(process, at_top=True)

    def rank_step_chosen(self, rank: str, number: int) -> None:
        """A rank's step chosen in the Cluster pane: the ranks aligned at that iteration
        (where two ranks or more have it), the timeline zoomed to that rank's step and
        scrolled to its tracks."""
        app = self.app
        found = timed_iteration(app.iterations, rank, number)
        if found is None:
            app._status(f"{safe(rank) or 'The profile'} has no time window for "
                        f"iteration {number}.")
            return
        self.show_timeline()
        self.align_ranks_at(number)  # the status line's prefix says so
        self.show_iteration(found)
        self.show_rank(rank)

    def align_ranks_at(self, number: int) -> bool:
        """Align the ranks at iteration `number` (see core.ops.rank_offsets); False, leaving
        the timeline as it was, where fewer than two ranks have it."""
        index = self.app.index
        timeline = self._timeline()
        if index is None or timeline.index is None:
            return False
        try:
            found = rank_offsets(index, self.app.iterations, number)
        except ProftuiError:  # one rank, or one with that step: shown on its own clock
            return False
        if timeline.alignment != found:
            timeline.align(found)
        return True

    def fold_steps(self, group: str | None, number: int | None,
                   focus: tuple[str, int]) -> None:
        """The Iterations pane's `z` (a rank's steps) or the Cluster pane's (every rank's step
        `number`): the timeline, shown and focused, folds them, the band `focus` focused."""
        self.show_timeline()
        timeline = self._timeline()
        timeline.unfold()
        timeline.fold(group, number)
        timeline.focus_band(*focus)
        timeline.focus()

    def overview_chosen(self, what: str, value: object) -> None:
        """An iteration, process or track chosen in the overview: shown on the timeline."""
        app = self.app
        if what == "iteration":
            group, number = value  # type: ignore[misc]
            found = timed_iteration(app.iterations, group, number)
            if found is None:
                app._status(f"Iteration {number} has no time window.")
                return
            self.show_timeline()
            self.show_iteration(found)
        else:
            self.show_timeline()
            timeline = self._timeline()
            if what == "track":
                timeline.show_track(value)  # type: ignore[arg-type]
            else:
                timeline.show_process(value)  # type: ignore[arg-type]
        app.screen.set_focus(self._timeline())

    def collective_chosen(self, stat: CollectiveStat) -> None:
        """Show a collective of the Communication pane on the timeline, if it is there."""
        from proftui.core.analysis.comm import find_on_timeline

        app = self.app
        who = f" of {safe(stat.rank)}" if stat.rank else ""
        found = (find_on_timeline(app.index, stat.rank, stat.op.name)
                 if app.index is not None else None)
        if found is None:
            app._status(f"{safe(stat.op.name)}{who} is not on the timeline.")
            return
        self.show_timeline()
        self._timeline().select(found)
        assert app.index is not None
        app._status(f"{safe(stat.op.name)}{who}: elapse {fmt_duration(stat.op.elapse_ns or 0)}"
                    f" (HCCL), {fmt_duration(int(app.index.col('slices.dur')[found]))} on "
                    "the timeline")

    def pinned_tracks_wanted(self) -> None:
        """The Ops pane asks for the pinned tracks' ops."""
        pinned = self._timeline().layout_state.pinned
        if not pinned:
            self.app._status("No track is pinned: p on the timeline pins the focused track.")
            return
        self.app._pane("ops").set_tracks(pinned)

    def pane(self, name: str, pane_names: Sequence[str]) -> None:
        """Show a pane's tab and focus its first widget (the details: the timeline)."""
        app = self.app
        app.query_one(TabbedContent).active = f"pane-{name}"
        if name in pane_names:
            widget = app._pane(name)
            first = getattr(widget, "first_focus", widget.table_view)
            app.screen.set_focus(first())
        elif app.key_timeline() is not None:  # the details have no keys: the timeline's work
            app.screen.set_focus(self._timeline())
