"""The app's shell for one trace: its screen, keys and panels, over its controllers."""

from __future__ import annotations

import gc
import os
import re
import time
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson
from rich.cells import cell_len
from textual import events, on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Input, ProgressBar, Static, TabbedContent, TabPane

from proftui.core import ProftuiError, TraceIndex
from proftui.core.model.table import Table
from proftui.core.ops.iterations import Iteration, Iterations, capture_start_ns
from proftui.core.query.args import slice_args
from proftui.core.query.rows import RowIndex
from proftui.core.query.search import find_slices
from proftui.core.query.slice_info import SliceInfo, describe_slice
from proftui.core.runtime.malloc import release_free_memory, tune_malloc
from proftui.themes import DEFAULT_THEME, Palette
from proftui.tui.app.base import BaseApp
from proftui.tui.app.loading import Loading, overview_status
from proftui.tui.app.prompts import Prompt, Prompts
from proftui.tui.app.routing import Routing
from proftui.tui.commands.info import info_lines
from proftui.tui.panes.ops_window import Window
from proftui.tui.text.format import plural
from proftui.tui.text.safe import safe
from proftui.tui.text.widths import first_fitting
from proftui.tui.widgets.details import details_lines
from proftui.tui.widgets.overview_tree import OverviewTree
from proftui.tui.widgets.timeline import IterationMark, Timeline

# The panes that show a table, in tab order, by the name their tab carries ("pane-<name>")
# and their own id; their classes are `table_panes()`. Their classes are imported after the
# first frame, so the app handles their messages by handler name (on_ops_pane_jump_to ...)
# rather than with @on(OpsPane.JumpTo).
PANE_NAMES = ("ops", "tables", "iterations", "insights", "comm", "cluster")

# Below this many columns the footer's keys close up, so that more of them are read whole.
COMPACT_FOOTER_BELOW = 120


if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from proftui.core.analysis.advise import Advice
    from proftui.core.analysis.breakdown import Breakdown
    from proftui.core.perf.instances import Behind
    from proftui.tui.app.as_command import ViewCommand
    from proftui.tui.app.following import Following, FollowOptions
    from proftui.tui.app.key_commands import KeyCommand
    from proftui.tui.panes.base import TablePane
    from proftui.tui.panes.cluster import HeatStrip
    from proftui.tui.panes.comm import CommPane
    from proftui.tui.panes.insights import InsightsPane
    from proftui.tui.panes.iterations import IterationsPane
    from proftui.tui.panes.ops import OpsPane
    from proftui.tui.screens.export_dialog import ExportJob, ExportRequest
    from proftui.tui.widgets.table import TableView


def table_panes() -> dict[str, type[TablePane]]:
    """The classes of the panes named in PANE_NAMES. Imported as the panes are mounted, after
    the first frame (see ProftuiApp._panes_ready): about 40 ms of imports off its path."""
    from proftui.tui.panes.cluster import ClusterPane
    from proftui.tui.panes.comm import CommPane
    from proftui.tui.panes.insights import InsightsPane
    from proftui.tui.panes.iterations import IterationsPane
    from proftui.tui.panes.ops import OpsPane
    from proftui.tui.panes.tables import TablesPane

    return dict(zip(PANE_NAMES, (OpsPane, TablesPane, IterationsPane, InsightsPane, CommPane,
                                 ClusterPane), strict=True))


class StatusLine(Static):
    """The app's status line, said again when its width changes."""

    def on_resize(self, event: events.Resize) -> None:
        if isinstance(self.app, ProftuiApp):
            self.app.refresh_status()


class ProftuiApp(BaseApp):
    """proftui's terminal app for one trace or profile."""

    TITLE = "proftui"
    # The rows the layout below needs at its minimums (status, timeline, panes, footer):
    # fewer give the screen the class -short.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (24, "-tall")]
    CSS = """
    #status { height: 1; padding: 0 1; background: $panel; }
    /* an error is read whole, on as many lines as it takes (and again under D) */
    #status.error { height: auto; max-height: 8; background: $error 35%; }
    /* damaged input: its warning line first, above what the index holds */
    #status.damaged { height: auto; max-height: 4; background: $warning 30%; }
    #progress { padding: 0 1; }
    /* while a profile of several ranks indexes: a line per rank being read, and a count */
    #ranks { height: auto; max-height: 9; padding: 0 1; display: none; }
    #ranks.shown { display: block; }
    /* 3:2, but the timeline keeps the ruler, a line per rank of two and 8 tracks under
       their headers (15 rows): at 80x24 the panes give way first, down to 7 rows */
    #main { height: 3fr; min-height: 15; }
    #panes, #panes-room { height: 2fr; min-height: 7; }
    /* a terminal of fewer rows (a split pane): both shrink as 3:2 rather than the screen
       scrolling the status line out of sight */
    Screen.-short #main { min-height: 6; }
    Screen.-short #panes, Screen.-short #panes-room { min-height: 4; }
    #footer-room { height: 1; dock: bottom; }
    /* the tabs on one row (the active one stands out by its colour): a row more for the
       pane's table, which at 7 rows would show 2 */
    #panes ContentTabs { height: 1; }
    #panes.maximised { height: 1fr; }
    #details { padding: 0 1; }
    #overview { height: 1fr; display: none; }
    #overview.shown { display: block; }
    #diagnostics { height: auto; max-height: 50%; padding: 0 1; display: none;
                   overflow-y: auto; }
    #diagnostics.shown { display: block; }
    #prompt { display: none; }
    /* a group's description ("w s Zoom") spaced from the next key, as a key's is */
    Footer.-compact FooterLabel { margin: 0 1 0 0; }
    """
    BINDINGS = [
        # first of the app's keys in the footer: on a narrow screen the last ones are cut
        Binding("question_mark", "help", "Keys"),
        Binding("slash", "search", "Search"),
        Binding("n", "next_match(1)", "Next match", show=False),
        Binding("N", "next_match(-1)", "Previous match", show=False),
        Binding("g", "goto_iteration", "Iteration"),
        Binding("A", "align_ranks", "Align ranks", show=False),
        Binding("1", "pane('details')", "Details", show=False),
        Binding("2", "pane('ops')", "Ops", show=False),
        Binding("3", "pane('tables')", "Tables", show=False),
        Binding("4", "pane('iterations')", "Iterations", show=False),
        Binding("5", "pane('insights')", "Insights", show=False),
        Binding("6", "pane('comm')", "Communication", show=False),
        Binding("7", "pane('cluster')", "Cluster", show=False),
        Binding("o", "toggle_overview", "Overview"),
        # (the status line says "(D)" where there are import problems)
        Binding("D", "toggle_diagnostics", "Diagnostics", show=False),
        Binding("e", "export", "Export"),
        Binding("colon", "command_palette", "Commands", show=False),
        Binding("exclamation_mark", "view_as_command", "As a command", show=False),
    ]
    def __init__(self, path: str, use_cache: bool = True, theme: str = DEFAULT_THEME,
                 run: int | None = None, cached: Future | None = None,
                 peaks: dict[str, Any] | None = None,
                 follow: FollowOptions | None = None) -> None:
        """`cached`, when given, is reading the index and its rows from the cache already
        (see :func:`proftui.tui.launch.read_cached`); `peaks`, how the op efficiency's
        peaks were asked for on the command line (profile_peaks' keywords); `follow`, when
        given, follows the folder as a job writes it (see following.py)."""
        self.path = path
        self.peaks_asked = dict(peaks or {})
        self.run_number = run  # of a folder holding several runs; None until one is chosen
        self.use_cache = use_cache
        self.index: TraceIndex | None = None
        self.rows: RowIndex | None = None
        self.summary: dict[str, Any] | None = None
        self.iterations: list[Iteration] = []
        self.ops_window = "whole trace"
        self._status_text = ""
        self._status_shorter: tuple[str, ...] = ()  # the message's shorter forms
        self._details_rows: tuple[int, int] | None = None  # see _show_details
        self.errors: list[str] = []  # said on the status line, and kept under D
        self.hidden_tracks = 0  # said first on the status line while there are any
        self._diagnostics_text = ""
        self.first_paint_s: float | None = None
        self._pane_mounts: list[AwaitMount] | None = None  # see _panes_ready
        self.match_count = 0
        self.match_status = ""  # the status line of the search match last selected
        self.loading = Loading(self, cached)
        self.prompts = Prompts(self)
        self.routing = Routing(self)
        self.following: Following | None = None
        if follow is not None:  # imported only then: the analysis it uses is off the first
            from proftui.tui.app.following import Following  # frame's path otherwise

            self.following = Following(self, follow)
        super().__init__(theme)

    def compose(self) -> ComposeResult:
        yield StatusLine(f"Opening {safe(self.path)} ...", id="status", markup=False)
        yield ProgressBar(id="progress", show_eta=True)
        yield Static("", id="ranks", markup=False)
        with Vertical(id="main"):
            yield Timeline(id="timeline")
        # The tabs with their panes, the overview (hidden until o) below the timeline and the
        # footer are mounted once the first frame is painted (see _panes_ready): styling and
        # laying out their few hundred widgets first delayed it. Their room is kept meanwhile,
        # so that the timeline is laid out once, at its size.
        yield Static("", id="panes-room")
        yield Static("", id="diagnostics", markup=False)
        yield Prompt(id="prompt")
        yield Static("", id="footer-room")

    def on_resize(self, event: events.Resize) -> None:
        for footer in self.query(Footer):
            footer.compact = event.size.width < COMPACT_FOOTER_BELOW

    def on_mount(self) -> None:
        self.sub_title = safe(self.path)
        self.watch_theme(self.theme)
        if self.following is not None:  # (a job may write nothing for minutes: no first
            gc.enable()  # frame to hurry, and the collector is not left off meanwhile)
            self.call_later(self._panes_ready)  # (the footer's keys while it waits)
            self.follow()
        else:
            self.load_index()

    def palette_changed(self, palette: Palette) -> None:
        for bars in self.query("IterationTable"):  # the breakdown bars use the slice colours
            bars.palette = palette
            bars.refresh()
        for pane in self.query("IterationsPane"):  # and so does their legend (once mounted)
            pane.palette_changed()

    async def _panes_ready(self) -> None:
        """Mount the tabs with their panes, the overview under the timeline and the footer
        (the first call), and wait until they are.

        Called once the first frame is painted, before the overview fills the panes, and
        before any input is handled: keys and clicks wait for the panes (see `on_event`)."""
        mounts = self._pane_mounts
        first = mounts is None
        if mounts is None:
            gc.enable()  # off until now when `proftui PATH` started the app (see cli.main)
            tabs = TabbedContent(id="panes", initial="pane-details")
            tabs.compose_add_child(TabPane("1 Details", Static("", id="details", markup=False),
                                           id="pane-details"))
            for number, (name, pane) in enumerate(table_panes().items(), 2):  # "2 Ops", ...
                tabs.compose_add_child(TabPane(f"{number} {name.title()}", pane(id=name),
                                               id=f"pane-{name}"))
            screen = self.screen_stack[0]  # the viewer's, under any screen shown over it
            panes_room = screen.query_one("#panes-room")
            footer_room = screen.query_one("#footer-room")
            mounts = self._pane_mounts = [
                screen.mount(tabs, before=panes_room),
                screen.query_one("#main").mount(OverviewTree("trace", id="overview")),
                screen.mount(Footer(compact=self.size.width < COMPACT_FOOTER_BELOW),
                             before=footer_room)]
            panes_room.remove()
            footer_room.remove()
        for mounting in mounts:
            await mounting
        if first:
            self.palette_changed(self.palette())  # they were made in the default colours

    async def on_event(self, event: events.Event) -> None:
        if self._pane_mounts is None and isinstance(event, (events.Key, events.MouseEvent)):
            await self._panes_ready()  # (the app's queue waits meanwhile: input stays in order)
        await super().on_event(event)
    # -- loading (see loading.py) --------------------------------------------------------------

    @work(thread=True, exclusive=True)
    def load_index(self) -> None:
        """Index (or reopen from the cache) in a thread; the UI stays live."""
        self.loading.run()

    @work(thread=True, exclusive=True, group="follow")
    def follow(self) -> None:
        """Open the folder as far as it is written, and again as it grows (in a thread)."""
        assert self.following is not None
        self.following.run()

    async def _with_panes(self, show: Callable[..., None], *args: Any) -> None:
        await self._panes_ready()
        show(*args)

    def _status(self, text: str, shorter: tuple[str, ...] = (), error: bool = False) -> None:
        """The status line: a message, then which window the ops numbers describe. Where
        the line is too narrow, the window goes first, then the message gives way to the
        first of its `shorter` forms that fits (the last one, cut, if none does). An `error`
        is wrapped to be read whole (see _error)."""
        self._status_text = text
        self._status_shorter = shorter
        suffix = f"   [ops: {safe(self.ops_window)}]" if self.index is not None else ""
        # first, so that a narrow screen does not cut it off
        prefix = f"[{self.hidden_tracks} hidden: H shows] " if self.hidden_tracks else ""
        try:
            alignment = self.query_one(Timeline).alignment
            status = self.query_one("#status", Static)
        except NoMatches:  # a message handled late, as the app closes: its screen is emptied
            return
        if alignment is not None:
            prefix += f"[aligned at iteration {alignment.number}: A undoes] "
        status.set_class(error, "error")
        status.set_class(text.startswith("warning:"), "damaged")
        room = status.size.width - 2  # its padding; 0 before the first layout
        if 0 < room < len(prefix + text + suffix):
            suffix = ""  # rather than cut in half: the Ops pane's title names its window too
            if shorter and room < len(prefix + text):
                text = first_fitting([text, *shorter], max(room - len(prefix), 1))
        status.update(prefix + text + suffix)

    def refresh_status(self) -> None:
        """Say the status line again (at a new width, what fits changes); an error stays."""
        if not self.query_one("#status", Static).has_class("error"):
            self._status(self._status_text, self._status_shorter)

    def _error(self, text: str) -> None:
        """An error on the status line, wrapped to be read whole at any width, and kept in
        the diagnostics panel (D) with the others of this session."""
        self._status(text, error=True)
        self.errors.append(text)
        self._show_diagnostics()

    def _show_diagnostics(self) -> None:
        lines = [f"error: {e}" for e in self.errors]
        try:
            panel = self.query_one("#diagnostics", Static)
        except NoMatches:  # as the app closes (see _status)
            return
        panel.update("\n".join(lines + ([self._diagnostics_text] if self._diagnostics_text
                                         else [])))

    def _show_index(self, index: TraceIndex, rows: RowIndex, summary: dict[str, Any],
                    tables: list[Table], iterations: list[Iteration]) -> None:
        self.index, self.rows, self.summary = index, rows, summary
        self.iterations = iterations
        self.loading.hide_progress()
        self._status(overview_status(index))
        self.query_one(OverviewTree).show_summary(summary, self.path)
        diag = [line for line in info_lines(summary) if line.startswith(("diagnostics", "  "))]
        start = next((i for i, line in enumerate(diag) if line.startswith("diagnostics")), 0)
        self._diagnostics_text = "\n".join(diag[start:])
        self._show_diagnostics()
        timeline = self.query_one(Timeline)
        if summary["sources"]:
            marks = [IterationMark(it.number, it.start_ns, it.end_ns, it.group)
                     for it in self.iterations if it.start_ns >= 0 and it.dur_ns >= 0]
            timeline.show_overview(marks, tables)
            self._pane("ops").show_trace(index, self.iterations, tables)
        else:
            timeline.display = False
            self.query_one("#overview").add_class("shown")
            self.query_one(TabbedContent).active = "pane-tables"
            self.screen.set_focus(self._pane("tables").table_view())
        self._pane("tables").show_tables(tables)
        self._pane("iterations").show_iterations(
            self.iterations, summary["iterations"]["source"],
            capture_start_ns(index, self.iterations))
        self._show_details(None)
        self._pane("insights").show_busy()
        self._pane("cluster").show_busy()
        self.analyse(index, self.iterations, tables, summary["iterations"]["source"])
        self._pane("comm").show_busy()
        self.read_comm((summary.get("profile") or {}).get("comm", []))
        settle_heap()

    def on_unmount(self) -> None:
        if self.following is not None:
            self.following.stop()  # its thread ends at its next look
        gc.unfreeze()  # what settle_heap froze can be collected again once the app is gone

    @work(thread=True, exclusive=True, group="analysis")
    def analyse(self, index: TraceIndex, iterations: list[Iteration],
                tables: list[Table], source: str | None) -> None:
        """The steps' breakdown, the advisor's findings and the ranks compared, off the UI
        thread."""
        try:
            # Imported here, off the first frame's path.
            from proftui.core.analysis.advise import advise
            from proftui.core.analysis.breakdown import breakdown
            from proftui.core.analysis.cluster import cluster
            from proftui.core.analysis.cluster_comm import read_communication

            found = breakdown(index, iterations, tables)
            advice = advise(index, iterations, tables,  # type: ignore[arg-type]
                            peaks=self.peaks_asked)
        except Exception as exc:  # noqa: BLE001 - the rest of the app stays usable
            self.call_from_thread(self._analysis_failed, f"{type(exc).__name__}: {exc}")
            return
        release_free_memory()  # what the analysis freed, before it is shown
        self.call_from_thread(self._analysis_done, found, advice)
        try:  # the collectives are matched after the insights are shown
            ranks = cluster(index, Iterations(source or "", iterations), tables, steps=found)
        except Exception as exc:  # noqa: BLE001
            self.call_from_thread(self._to_pane, "cluster", "show_failure",
                                  f"{type(exc).__name__}: {exc}")
            return
        self.call_from_thread(self._to_pane, "cluster", "show_cluster", ranks)
        try:  # the ranks' communication, and msprof-analyze's cluster output compared
            comm, profiler = read_communication(
                (index.meta.get("profile") or {}).get("comm", []), tables, ranks)
        except Exception as exc:  # noqa: BLE001
            self.call_from_thread(self._to_pane, "cluster", "show_comm_failure",
                                  f"{type(exc).__name__}: {exc}")
            return
        self.call_from_thread(self._to_pane, "cluster", "show_comm", comm, profiler)

    def _to_pane(self, name: str, method: str, *args: Any, **kwargs: Any) -> None:
        """Call a pane's `method`, from a worker thread's call_from_thread: nothing once the
        app closes and its panes are gone (a worker may end then; see tests/tui/
        test_watch_app.py, where that failed the worker)."""
        try:
            pane = self._pane(name)
        except NoMatches:
            return
        getattr(pane, method)(*args, **kwargs)

    def _analysis_done(self, found: Breakdown, advice: Advice) -> None:
        self._to_pane("iterations", "show_breakdown", found.steps)
        groups = {b.group for b in found.total} | {f.group for f in advice.findings}
        self._to_pane("insights", "show_advice", advice, several_groups=len(groups) > 1)

    def _analysis_failed(self, reason: str) -> None:
        self._to_pane("iterations", "show_breakdown", [])
        self._to_pane("insights", "show_failure", reason)
        self._to_pane("cluster", "show_failure", reason)

    @work(thread=True, exclusive=True, group="comm")
    def read_comm(self, entries: list[dict]) -> None:
        """The communication summaries, read and analysed off the UI thread."""
        from proftui.core.analysis.comm import communication
        from proftui.core.load.comm_sources import read_sources

        try:
            report = communication(*read_sources(entries))
        except Exception as exc:  # noqa: BLE001 - the rest of the app stays usable
            self.call_from_thread(self._to_pane, "comm", "show_failure",
                                  f"{type(exc).__name__}: {exc}")
            return
        self.call_from_thread(self._to_pane, "comm", "show_report", report)

    def _painted(self) -> None:
        self.first_paint_s = time.monotonic() - self._started

    # -- details --------------------------------------------------------------------------------

    @on(Timeline.SliceSelected)
    def _selected(self, message: Timeline.SliceSelected) -> None:
        if self.index is None or self.rows is None or message.slice_index < 0:
            self._show_details(None)
            if self.index is not None and self._status_text == self.match_status:
                self._status(overview_status(self.index))  # the match is no longer shown
            return
        info = describe_slice(self.index, self.rows, message.slice_index)
        self._show_details(info)
        self.load_args(info)

    def _show_details(self, info: SliceInfo | None, args: str = "(args loading ...)",
                      behind: Behind | None = None) -> None:
        details = self.query_one("#details", Static)
        if info is None or self.index is None:
            text = ("Nothing selected: Enter or a click selects a slice; arrows move "
                    "between slices; ? lists the keys.")
        else:
            text = "\n".join(details_lines(self.index, info, args, behind))
        # Laying the screen out again takes ~10 ms, half the frame of a step between slices:
        # only where the text's height may change. Lines none of which wraps take a row each:
        # as many of them at the same width keep the height.
        lines = text.split("\n")
        width = details.content_region.width
        rows = ((len(lines), width) if width > 0 and all(cell_len(line) <= width
                                                         for line in lines) else None)
        details.update(text, layout=rows is None or rows != self._details_rows)
        self._details_rows = rows

    @work(thread=True, exclusive=True, group="args")
    def load_args(self, info: SliceInfo) -> None:
        """Read the selected slice's args from the trace file (lazily, off the UI thread)."""
        assert self.index is not None
        try:
            args = slice_args(self.index, info.slice)
            text = "(none)" if args is None else orjson.dumps(args).decode()
        except (OSError, ProftuiError, ValueError) as exc:
            text = f"(could not be read: {exc})"
        from proftui.core.perf.instances import row_behind  # (off the first frame's path)

        try:
            behind = row_behind(self.index, info.slice)
        except (OSError, ProftuiError, ValueError):
            behind = None  # the args line says what could not be read
        self.call_from_thread(self._args_loaded, info, text, behind)

    def _args_loaded(self, info: SliceInfo, args: str, behind: Behind | None = None) -> None:
        if self.query_one(Timeline).selected == info.slice:
            self._show_details(info, args, behind)
    # -- prompts: search, iterations, alignment (see prompts.py) ----------------------------------

    def action_search(self) -> None:
        self.prompts.search()

    def action_goto_iteration(self) -> None:
        self.prompts.goto_iteration()

    def action_next_match(self, step: int) -> None:
        self.prompts.next_match(step)

    def action_align_ranks(self) -> None:
        self.prompts.align_ranks()

    @on(Input.Submitted, "#prompt")
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        self.prompts.submitted(event.value)

    def _close_prompt(self) -> None:
        self.prompts.close()

    @work(thread=True, exclusive=True, group="search")
    def run_search(self, pattern: re.Pattern[str]) -> None:
        assert self.index is not None
        matches = find_slices(self.index, pattern)
        self.call_from_thread(self.prompts.search_done, pattern.pattern, matches)

    def goto_iteration(self, text: str) -> None:
        self.prompts.go_to(text)

    # -- routing between panes (see routing.py) --------------------------------------------------

    def show_iteration(self, iteration: Iteration) -> None:
        """Zoom the timeline to an iteration and scope the ops pane to it."""
        self.routing.show_iteration(iteration)

    def on_iterations_pane_chosen(self, message: IterationsPane.Chosen) -> None:
        self.routing.iteration_chosen(message.iteration)

    def on_iterations_pane_fold_wanted(self, message: IterationsPane.FoldWanted) -> None:
        it = message.iteration
        self.routing.fold_steps(it.group, None, (it.group, it.number))

    def on_heat_strip_fold_wanted(self, message: HeatStrip.FoldWanted) -> None:
        self.routing.fold_steps(None, message.iteration, (message.rank, message.iteration))

    def on_insights_pane_evidence_chosen(self, message: InsightsPane.EvidenceChosen) -> None:
        self.routing.evidence_chosen(message.finding, message.evidence, message.number)

    def on_heat_strip_cell_chosen(self, message: HeatStrip.CellChosen) -> None:
        self.routing.rank_step_chosen(message.rank, message.iteration)

    def on_comm_pane_collective_chosen(self, message: CommPane.CollectiveChosen) -> None:
        self.routing.collective_chosen(message.stat)

    @on(OverviewTree.Chosen)
    def _overview_chosen(self, message: OverviewTree.Chosen) -> None:
        self.routing.overview_chosen(message.what, message.value)

    @on(Timeline.Folded)
    def _folded(self, message: Timeline.Folded) -> None:
        """Steps folded or unfolded: the status says so; a step opened from a band scopes the
        ops to it, as the Iterations pane's Enter does."""
        if message.opened is not None:
            self.routing.rank_step_chosen(*message.opened)
        else:
            self._status(message.text)

    @on(Timeline.HiddenChanged)
    def _hidden_changed(self, message: Timeline.HiddenChanged) -> None:
        self.hidden_tracks = message.hidden
        if message.label:
            self._status(f"Hid {safe(message.label)} (H shows every hidden track).")
        elif message.all_shown:
            self._status("Every hidden track is shown again.")
        else:  # a search result or a jump on a hidden track showed it: the count changes
            self._status(self._status_text)

    def on_ops_pane_jump_to(self, message: OpsPane.JumpTo) -> None:
        self.query_one(Timeline).select(message.slice_index)

    @on(Timeline.RangeChanged)
    def _range_changed(self, message: Timeline.RangeChanged) -> None:
        self.routing.range_changed(message.start_ns, message.end_ns)

    def on_ops_pane_tracks_wanted(self, message: OpsPane.TracksWanted) -> None:
        self.routing.pinned_tracks_wanted()

    def on_ops_pane_window_set(self, message: OpsPane.WindowSet) -> None:
        self.ops_window = message.window.label
        self._status(self._status_text)

    @on(TabbedContent.TabActivated)
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "pane-ops":
            self._pane("ops").ensure_computed()

    # -- export -----------------------------------------------------------------------------------

    def _export_window(self) -> Window:
        """The window an export covers: the selected range, else the ops pane's window."""
        timeline = self.query_one(Timeline)
        return (self.routing.range_window(*timeline.range) if timeline.range is not None
                else self._pane("ops").window)

    def _pane(self, name: str) -> Any:
        """The pane of that name (one of PANE_NAMES; mounted after the first frame, before
        any input and any overview is handled: see _panes_ready)."""
        return self.query_one(f"#{name}")

    def _pane_view(self) -> TableView | None:
        """The table of the active pane, if it shows one."""
        name = self.query_one(TabbedContent).active.removeprefix("pane-")
        if name not in PANE_NAMES:
            return None
        view = self._pane(name).table_view()
        return view if view.table is not None else None

    def action_export(self) -> None:
        from proftui.tui.screens.export_dialog import ExportDialog, free_name  # loaded when used

        if self.index is None:
            self._status("Nothing to export yet.")
            return
        label = self._export_window().label
        view = self._pane_view()
        pane_label = (f"{safe(view.table.kind) or 'table'}, {plural(len(view.order), 'row')}"
                      if view is not None and view.table is not None else None)
        self.push_screen(ExportDialog(label, free_name("proftui-export.csv"), pane_label),
                         self._export_chosen)

    def _export_chosen(self, request: ExportRequest | None) -> None:
        """Gather what the export needs from the widgets here, then write in a worker."""
        from proftui.tui.screens.export_dialog import ExportJob

        if request is None or self.index is None:
            return
        window = self._export_window()
        ops = self._pane("ops")
        view = self._pane_view()
        pane = (view.table, view.order.copy(), view.shown_columns) if view is not None else None
        job = ExportJob(request, window.label, window.start_ns, window.end_ns, ops.by, ops.side,
                        ops.types, ops.tables, pane, window.groups)
        self._status(f"Exporting to {safe(request.path)} ...")
        self.run_export(job)

    @work(thread=True, exclusive=True, group="export")
    def run_export(self, job: ExportJob) -> None:
        """Write the CSV off the UI thread; the status line says how many rows went where."""
        assert self.index is not None
        try:
            result = job.run(self.index)
        except ProftuiError as exc:
            self.call_from_thread(self._error, f"Export failed: {safe(exc)}")
            return
        self.call_from_thread(self._status, *wrote(plural(result.rows, "row"), job.label,
                                                   str(result.path)))
    # -- panels, themes, help -------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        allowed = self.loading.allows(action)
        return super().check_action(action, parameters) if allowed is None else allowed

    def key_timeline(self) -> Timeline | None:
        timeline = self.query_one(Timeline)
        shown = (timeline.index is not None and timeline.display
                 and bool(self.query_one("#main").display))
        return timeline if shown else None

    def action_pane(self, name: str) -> None:
        self.routing.pane(name, PANE_NAMES)

    def action_toggle_overview(self) -> None:
        overview_tree = self.query_one("#overview")
        overview_tree.toggle_class("shown")
        if self.query_one(Timeline).index is not None:
            self.query_one(Timeline).display = not overview_tree.has_class("shown")
        self.refresh_bindings()  # the timeline's keys come and go with it

    def action_view_as_command(self) -> None:
        """The headless command printing what the shown pane shows, in the status line and
        (OSC 52, where the terminal allows) on the clipboard."""
        if self.index is None:
            self._status("Nothing to show as a command yet.")
            return
        command = self._view_command()
        self.copy_to_clipboard(command.line)
        notes = f"  (not in it: {'; '.join(command.notes)})" if command.notes else ""
        self._status(f"{safe(command.line)}{safe(notes)}  [copied]")

    def _view_command(self) -> ViewCommand:
        from proftui.core.tables.query import default_sort
        from proftui.tui.app.as_command import ops_command, profile_command, table_command

        assert self.index is not None
        pane = self.query_one(TabbedContent).active.removeprefix("pane-")
        if pane in ("iterations", "cluster", "comm"):
            return profile_command(pane, self.path, self.run_number)
        if pane == "insights":
            return profile_command("advise", self.path, self.run_number)
        if pane == "tables":
            tables = self._pane("tables")
            view = tables.table_view()
            if view.table is not None:
                table = view.table
                sort = view.sort if view.sort != default_sort(table) else None
                name = table.kind or table.path.replace("\\", "/").rsplit("/", 1)[-1]
                return table_command(self.path, self.run_number, name, table.group,
                                     view.filter_text, None if sort is None else (
                                         table.columns[sort[0]].name, sort[1]))
        ops = self._pane("ops")  # the timeline and the details: the ops of the window
        view = ops.query_one("#ops-table")
        sort = None
        if view.table is not None and view.sort is not None and \
                view.sort != default_sort(view.table):
            column = view.table.columns[view.sort[0]]
            sort = (column.name, view.sort[1], column.kind != "text")
        window = ops.window
        return ops_command(self.path, self.run_number, capture_start_ns(self.index),
                           self.index.end_ns,
                           self.iterations, window.start_ns, window.end_ns, window.groups,
                           ops.by, ops.side, sort, len(view.order), view.filter_text,
                           len(ops.tracks or ()))

    def action_toggle_diagnostics(self) -> None:
        self.query_one("#diagnostics").toggle_class("shown")

    def action_help(self) -> None:
        from proftui.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen) -> Any:
        """Every bound action with its key (see :mod:`proftui.tui.app.key_commands`), then
        Textual's own commands that proftui has no key for."""
        from proftui.tui.app.key_commands import key_commands

        commands = key_commands(self, self.query_one(Timeline), {
            name: self._pane(name) for name in PANE_NAMES}, self._pane_view())
        titles = {command.title for command in commands}
        for command in commands:
            yield SystemCommand(command.title, f"{command.help} (key {command.key})",
                                partial(self._run_key_command, command))
        for command in super().get_system_commands(screen):
            if command.title not in titles:
                yield command

    async def _run_key_command(self, command: KeyCommand) -> None:
        if command.pane == "timeline":
            self.routing.show_timeline()
        elif command.pane is not None:
            self.action_pane(command.pane)
        await self.run_action(command.action, command.target)


def wrote(rows: str, label: str, path: str) -> tuple[str, tuple[str, ...]]:
    """The status line after an export, and its shorter forms: the file's name is what the
    user looks for, so the window goes first, then the folders (relative to the working
    folder, then left out)."""
    name = os.path.basename(path)
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    forms = [f"Wrote {rows} ({safe(label)}) to {safe(path)}", f"Wrote {rows} to {safe(path)}"]
    if not relative.startswith(".."):
        forms.append(f"Wrote {rows} to {safe(relative)}")
    forms += [f"Wrote {rows} to …/{safe(name)}", f"{rows} to …/{safe(name)}"]
    forms = list(dict.fromkeys(forms))
    return forms[0], tuple(forms[1:])


def settle_heap() -> None:
    """Keep what the opened trace holds (its widgets, tables, overview) out of the cyclic
    garbage collector's full passes: one took ~50 ms of a frame whenever it fell during
    navigation (bench/bench_frames.py), over objects that live as long as the trace is shown.
    What an earlier trace left is collected first; the app unfreezes all on unmount."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    # Arrays of 4 MB and more mapped apart, so that what an analysis frees goes back to the
    # system at once (glibc's own threshold rises after such frees and keeps the pages).
    tune_malloc()
    release_free_memory()
