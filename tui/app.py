"""The Textual app: loads a trace in a worker (with progress and cancel) and explores it.

The screen is the timeline with a details pane for the selected slice below it; the overview
(iterations, processes, summary tables) and the import diagnostics are a key away, as are
search (`/`, `n`, `N`) and going to an iteration (`g`).
"""

from __future__ import annotations

import gc
import re
import threading
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
from textual.screen import Screen
from textual.widgets import Footer, Input, ProgressBar, Static, TabbedContent, TabPane

from proftui.core import Cancelled, ProftuiError, TraceIndex, load_trace
from proftui.core.analysis.overview import read_overview
from proftui.core.discover.runs import SeveralRunsError
from proftui.core.model.table import Table
from proftui.core.ops.iterations import Iteration, Iterations, capture_start_ns, group_windows
from proftui.core.ops.rank_offsets import ONE_RANK, rank_offsets, ranks_of
from proftui.core.query.args import slice_args
from proftui.core.query.rows import RowIndex, rows_for
from proftui.core.query.search import find_slices, pattern_of
from proftui.core.query.slice_info import SliceInfo, describe_slice
from proftui.themes import DEFAULT_THEME, Palette
from proftui.tui.base_app import BaseApp
from proftui.tui.commands.info import info_lines
from proftui.tui.format import fmt_count, fmt_duration, plural
from proftui.tui.panes.ops_window import WHOLE_TRACE, Window
from proftui.tui.safe import safe
from proftui.tui.widgets.details import details_lines
from proftui.tui.widgets.overview_tree import OverviewTree
from proftui.tui.widgets.timeline import IterationMark, Timeline

# The panes that show a table, in tab order, by the name their tab carries ("pane-<name>")
# and their own id; their classes are `table_panes()`. Their classes are imported after the
# first frame, so the app handles their messages by handler name (on_ops_pane_jump_to ...)
# rather than with @on(OpsPane.JumpTo).
PANE_NAMES = ("ops", "tables", "iterations", "insights", "comm", "cluster")

# How long the overview waits for the first frame before it is read anyway.
FIRST_FRAME_WAIT_S = 1.0

if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from proftui.core.analysis.advise import Advice
    from proftui.core.analysis.breakdown import Breakdown
    from proftui.tui.as_command import ViewCommand
    from proftui.tui.key_commands import KeyCommand
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
    CSS = """
    #status { height: 1; padding: 0 1; background: $panel; }
    /* an error is read whole, on as many lines as it takes (and again under D) */
    #status.error { height: auto; max-height: 8; background: $error 35%; }
    #progress { padding: 0 1; }
    #main { height: 1fr; }
    #panes { height: 40%; min-height: 7; }
    #panes.maximised { height: 1fr; }
    #details { padding: 0 1; }
    #overview { height: 1fr; display: none; }
    #overview.shown { display: block; }
    #diagnostics { height: auto; max-height: 50%; padding: 0 1; display: none;
                   overflow-y: auto; }
    #diagnostics.shown { display: block; }
    #prompt { display: none; }
    """
    BINDINGS = [
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
        Binding("D", "toggle_diagnostics", "Diagnostics"),
        Binding("e", "export", "Export"),
        Binding("question_mark", "help", "Keys"),
        Binding("colon", "command_palette", "Commands", show=False),
        Binding("exclamation_mark", "view_as_command", "As a command", show=False),
    ]

    def __init__(self, path: str, use_cache: bool = True, theme: str = DEFAULT_THEME,
                 run: int | None = None, cached: Future | None = None) -> None:
        """`cached`, when given, is reading the index and its rows from the cache already
        (see :func:`proftui.tui.launch.read_cached`)."""
        self.path = path
        self._cached = cached
        self.run_number = run  # of a folder holding several runs; None until one is chosen
        self.use_cache = use_cache
        self.index: TraceIndex | None = None
        self.rows: RowIndex | None = None
        self.summary: dict[str, Any] | None = None
        self.iterations: list[Iteration] = []
        self.ops_window = "whole trace"
        self._status_text = ""
        self._details_rows: tuple[int, int] | None = None  # see _show_details
        self.errors: list[str] = []  # said on the status line, and kept under D
        self.hidden_tracks = 0  # said first on the status line while there are any
        self._diagnostics_text = ""
        self.first_paint_s: float | None = None
        self._pane_mounts: list[AwaitMount] | None = None  # see _panes_ready
        self._first_frame = threading.Event()  # set once the timeline is first painted
        self._indexing_file = ""  # of a profile of several timelines: which one is indexed
        self.match_count = 0
        self._prompt_mode = ""
        self._align_default = 0  # the iteration A offers: the one at the cursor
        self._choosing_run = False
        super().__init__(theme)

    def compose(self) -> ComposeResult:
        yield StatusLine(f"Opening {safe(self.path)} ...", id="status", markup=False)
        yield ProgressBar(id="progress", show_eta=True)
        with Vertical(id="main"):
            yield Timeline(id="timeline")
        # The panes' widgets are mounted into their tabs once the first frame is painted, and
        # the overview (hidden until o) below the timeline (see _panes_ready): styling and
        # laying out their few hundred widgets first delayed it by 0.2-0.3 s.
        with TabbedContent(id="panes", initial="pane-details"):
            with TabPane("1 Details", id="pane-details"):
                yield Static("", id="details", markup=False)
            for number, name in enumerate(PANE_NAMES, 2):  # "2 Ops", ...
                yield TabPane(f"{number} {name.title()}", id=f"pane-{name}")
        yield Static("", id="diagnostics", markup=False)
        yield Prompt(id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = safe(self.path)
        self.watch_theme(self.theme)
        self.load_index()

    def palette_changed(self, palette: Palette) -> None:
        for bars in self.query("IterationTable"):  # the breakdown bars use the slice colours
            bars.palette = palette
            bars.refresh()
        for pane in self.query("IterationsPane"):  # and so does their legend (once mounted)
            pane.palette_changed()

    async def _panes_ready(self) -> None:
        """Mount the panes' widgets into their tabs and the overview under the timeline (the
        first call), and wait until they are.

        Called once the first frame is painted, before the overview fills the panes, and
        before any input is handled: keys and clicks wait for the panes (see `on_event`)."""
        mounts = self._pane_mounts
        first = mounts is None
        if mounts is None:
            gc.enable()  # off until now when `proftui PATH` started the app (see cmd_open)
            mounts = self._pane_mounts = [
                self.query_one(f"#pane-{name}", TabPane).mount(pane(id=name))
                for name, pane in table_panes().items()]
            mounts.append(self.query_one("#main").mount(OverviewTree("trace", id="overview")))
        for mounting in mounts:
            await mounting
        if first:
            self.palette_changed(self.palette())  # they were made in the default colours

    async def on_event(self, event: events.Event) -> None:
        if self._pane_mounts is None and isinstance(event, (events.Key, events.MouseEvent)):
            await self._panes_ready()  # (the app's queue waits meanwhile: input stays in order)
        await super().on_event(event)

    # -- loading --------------------------------------------------------------------------------

    @work(thread=True, exclusive=True)
    def load_index(self) -> None:
        """Index (or reopen from the cache) in a thread; the UI stays live. The timeline is
        shown as soon as the index and its rows are there; the overview (the tracks' roles,
        the summary tables, the iterations) is read once it is painted, and fills the panes."""
        try:
            cached, self._cached = self._cached, None  # (a run chosen later is loaded here)
            opened = cached.result() if cached is not None else None
            if opened is not None:
                index, rows = opened
            else:  # indexing takes a while: the panes are there meanwhile
                self.call_from_thread(self._panes_ready)
                index = load_trace(self.path, run=self.run_number, use_cache=self.use_cache,
                                   progress=self._report_progress,
                                   cancelled=self._cancel.is_set,
                                   file_progress=self._report_file)
                rows = rows_for(index)
            if index.meta.get("sources"):  # (a profile of summary tables only has none)
                self._first_frame.clear()
                self.call_from_thread(self._show_timeline_first, index, rows)
                # Not sooner: this thread would take turns with the painting one.
                self._first_frame.wait(FIRST_FRAME_WAIT_S)
            summary, tables, iterations = read_overview(index)
        except Cancelled:
            self.call_from_thread(self._with_panes, self._show_status,
                                  "Loading cancelled (press q to quit).")
        except SeveralRunsError as exc:
            self.call_from_thread(self._with_panes, self._choose_run, exc)
        except ProftuiError as exc:
            self.call_from_thread(self._with_panes, self._show_error, str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must not leave a traceback on screen
            self.call_from_thread(self._with_panes, self._show_error,
                                  f"unexpected {type(exc).__name__} while reading it ({exc}); "
                                  "please report it")
        else:
            self.call_from_thread(self._with_panes, self._show_index, index, rows, summary,
                                  tables, iterations.items)
        finally:
            self._loading = False  # Esc is the focused widget's again

    async def _with_panes(self, show: Callable[..., None], *args: Any) -> None:
        await self._panes_ready()
        show(*args)

    def _choose_run(self, several: SeveralRunsError) -> None:
        """Several separate runs: ask which one to open rather than mix their clocks."""
        from proftui.tui.screens.run_chooser import RunChooser

        self._show_status(f"{safe(self.path)} holds {len(several.runs)} separate runs: "
                          "choose one.")
        self._choosing_run = True
        self.push_screen(RunChooser(several), self._run_chosen)

    def _run_chosen(self, number: int | None) -> None:
        self._choosing_run = False
        if number is None:
            self.exit()
            return
        self.run_number = number
        self.sub_title = f"{safe(self.path)} (run {number})"
        self._loading = True
        self._started = time.monotonic()
        self.query_one(ProgressBar).display = True
        self._status(f"Opening run {number} of {safe(self.path)} ...")
        self.load_index()

    def _report_progress(self, done: int, total: int, events: int) -> None:
        self.call_from_thread(self._update_progress, done, total, events)

    def _report_file(self, number: int, of: int, name: str) -> None:
        if of > 1:
            self.call_from_thread(setattr, self, "_indexing_file",
                                  f"{safe(name)}, {number} of {of} files; ")

    def _update_progress(self, done: int, total: int, events: int) -> None:
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)
        elapsed = max(time.monotonic() - self._started, 1e-3)
        self._status(f"Indexing {safe(self.path)}: {self._indexing_file}{done / 1e6:,.0f} of "
                     f"{total / 1e6:,.0f} MB, {fmt_count(events)} events, "
                     f"{done / 1e6 / elapsed:,.0f} MB/s (Esc cancels)")

    def _status(self, text: str) -> None:
        """The status line: a message, then which window the ops numbers describe."""
        self._status_text = text
        suffix = f"   [ops: {safe(self.ops_window)}]" if self.index is not None else ""
        # first, so that a narrow screen does not cut it off
        prefix = f"[{self.hidden_tracks} hidden: H shows] " if self.hidden_tracks else ""
        alignment = self.query_one(Timeline).alignment
        if alignment is not None:
            prefix += f"[aligned at iteration {alignment.number}: A undoes] "
        status = self.query_one("#status", Static)
        status.remove_class("error")
        room = status.size.width - 2  # its padding; 0 before the first layout
        if 0 < room < len(prefix + text + suffix):
            suffix = ""  # rather than cut in half: the Ops pane's title names its window too
        status.update(prefix + text + suffix)

    def refresh_status(self) -> None:
        """Say the status line again (at a new width, what fits changes); an error stays."""
        if not self.query_one("#status", Static).has_class("error"):
            self._status(self._status_text)

    def _error(self, text: str) -> None:
        """An error on the status line, wrapped to be read whole at any width, and kept in
        the diagnostics panel (D) with the others of this session."""
        self._status(text)
        self.query_one("#status", Static).add_class("error")
        self.errors.append(text)
        self._show_diagnostics()

    def _show_diagnostics(self) -> None:
        lines = [f"error: {e}" for e in self.errors]
        self.query_one("#diagnostics", Static).update(
            "\n".join(lines + ([self._diagnostics_text] if self._diagnostics_text else [])))

    def _show_status(self, message: str) -> None:
        self.query_one(ProgressBar).display = False
        self._status(message)

    def _show_error(self, message: str) -> None:
        self.error = message
        self.query_one(ProgressBar).display = False
        self._error(f"Cannot open this trace: {safe(message)}")

    def _show_timeline_first(self, index: TraceIndex, rows: RowIndex) -> None:
        """The first frame: the timeline of the index, before its overview is read."""
        self.index, self.rows = index, rows
        self._loading = False  # nothing left to cancel: Esc is the focused widget's again
        self.query_one(ProgressBar).display = False
        self._status(self._overview_status())
        timeline = self.query_one(Timeline)
        timeline.show(index, rows, utilisation=False)  # (it needs the tables)
        timeline.focus()
        self.call_after_refresh(self._first_frame_painted)

    async def _first_frame_painted(self) -> None:
        self._painted()
        await self._panes_ready()
        self._first_frame.set()  # the overview is read now (see load_index)

    def _show_index(self, index: TraceIndex, rows: RowIndex, summary: dict[str, Any],
                    tables: list[Table], iterations: list[Iteration]) -> None:
        self.index, self.rows, self.summary = index, rows, summary
        self.iterations = iterations
        self.query_one(ProgressBar).display = False
        self._status(self._overview_status())
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
            advice = advise(index, iterations, tables)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - the rest of the app stays usable
            self.call_from_thread(self._analysis_failed, f"{type(exc).__name__}: {exc}")
            return
        self.call_from_thread(self._analysis_done, found, advice)
        try:  # the collectives are matched after the insights are shown
            ranks = cluster(index, Iterations(source or "", iterations), tables, steps=found)
        except Exception as exc:  # noqa: BLE001
            self.call_from_thread(self._pane("cluster").show_failure,
                                  f"{type(exc).__name__}: {exc}")
            return
        self.call_from_thread(self._pane("cluster").show_cluster, ranks)
        try:  # the ranks' communication, and msprof-analyze's cluster output compared
            comm, profiler = read_communication(
                (index.meta.get("profile") or {}).get("comm", []), tables, ranks)
        except Exception as exc:  # noqa: BLE001
            self.call_from_thread(self._pane("cluster").show_comm_failure,
                                  f"{type(exc).__name__}: {exc}")
            return
        self.call_from_thread(self._pane("cluster").show_comm, comm, profiler)

    def _analysis_done(self, found: Breakdown, advice: Advice) -> None:
        self._pane("iterations").show_breakdown(found.steps)
        groups = {b.group for b in found.total} | {f.group for f in advice.findings}
        self._pane("insights").show_advice(advice, several_groups=len(groups) > 1)

    def _analysis_failed(self, reason: str) -> None:
        self._pane("iterations").show_breakdown([])
        self._pane("insights").show_failure(reason)
        self._pane("cluster").show_failure(reason)

    @work(thread=True, exclusive=True, group="comm")
    def read_comm(self, entries: list[dict]) -> None:
        """The communication summaries, read and analysed off the UI thread."""
        from proftui.core.analysis.comm import communication
        from proftui.core.load.comm_sources import read_sources

        try:
            report = communication(*read_sources(entries))
        except Exception as exc:  # noqa: BLE001 - the rest of the app stays usable
            self.call_from_thread(self._pane("comm").show_failure,
                                  f"{type(exc).__name__}: {exc}")
            return
        self.call_from_thread(self._pane("comm").show_report, report)

    def on_comm_pane_collective_chosen(self, message: CommPane.CollectiveChosen) -> None:
        """Show a collective of the Communication pane on the timeline, if it is there."""
        from proftui.core.analysis.comm import find_on_timeline

        stat = message.stat
        who = f" of {safe(stat.rank)}" if stat.rank else ""
        found = (find_on_timeline(self.index, stat.rank, stat.op.name)
                 if self.index is not None else None)
        if found is None:
            self._status(f"{safe(stat.op.name)}{who} is not on the timeline.")
            return
        self._show_timeline()
        self.query_one(Timeline).select(found)
        self._status(f"{safe(stat.op.name)}{who}: elapse {fmt_duration(stat.op.elapse_ns or 0)}"
                     f" (HCCL), {fmt_duration(int(self.index.col('slices.dur')[found]))} on "
                     "the timeline")

    def _painted(self) -> None:
        self.first_paint_s = time.monotonic() - self._started

    def _overview_status(self) -> str:
        """What the index holds, in a line (from the index alone: it is shown with the first
        frame, before the overview is read)."""
        index = self.index
        assert index is not None
        # Damage only: notes (flows without a partner ...) are normal output, listed under D.
        n_problems = index.diagnostics.damage
        problems = (f"; {plural(n_problems, 'import problem')} (D)"
                    if n_problems else "; no import problems")
        if index.meta.get("sources"):
            return (f"{plural(index.n_slices, 'slice')} over "
                    f"{fmt_duration(index.end_ns - index.start_ns)}, "
                    f"{plural(index.n_processes, 'process', 'processes')}{problems}"
                    "  (? keys)")
        tables = (index.meta.get("profile") or {}).get("tables", [])
        return (f"No timeline in this profile; {plural(len(tables), 'summary table')}"
                f"{problems}")

    # -- details --------------------------------------------------------------------------------

    @on(Timeline.SliceSelected)
    def _selected(self, message: Timeline.SliceSelected) -> None:
        if self.index is None or self.rows is None or message.slice_index < 0:
            self._show_details(None)
            return
        info = describe_slice(self.index, self.rows, message.slice_index)
        self._show_details(info)
        self.load_args(info)

    def _show_details(self, info: SliceInfo | None, args: str = "(args loading ...)") -> None:
        details = self.query_one("#details", Static)
        if info is None or self.index is None:
            text = ("Nothing selected: Enter or a click selects a slice; arrows move "
                    "between slices; ? lists the keys.")
        else:
            text = "\n".join(details_lines(self.index, info, args))
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
        self.call_from_thread(self._args_loaded, info, text)

    def _args_loaded(self, info: SliceInfo, args: str) -> None:
        if self.query_one(Timeline).selected == info.slice:
            self._show_details(info, args)

    # -- search and iterations ------------------------------------------------------------------

    def _ask(self, mode: str, placeholder: str) -> None:
        prompt = self.query_one("#prompt", Input)
        self._prompt_mode = mode
        prompt.placeholder = placeholder
        prompt.value = ""
        prompt.display = True
        # Focus now, not after the next refresh: keys typed right after `/` are the query.
        self.screen.set_focus(prompt)

    def action_search(self) -> None:
        if self.index is not None:
            self._ask("search", "search slice names (substring; /regex/ for a regular "
                                "expression); Enter finds, Esc cancels")

    def action_goto_iteration(self) -> None:
        if self.index is not None and self.summary is None:
            self._status("The iterations are still being found: try again in a moment.")
        elif self.iterations:
            numbers = [it.number for it in self.iterations]
            self._ask("iteration", f"iteration number ({min(numbers)} to {max(numbers)}); "
                                   "Enter goes there, Esc cancels")
        else:
            self._status("This profile has no iterations.")

    @on(Input.Submitted, "#prompt")
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        self._close_prompt()
        text = event.value.strip()
        if not text and self._prompt_mode == "align":
            text = str(self._align_default)
        if not text:
            return
        if self._prompt_mode == "search":
            try:
                pattern = pattern_of(text)
            except ProftuiError as exc:
                self._error(f"Search: {safe(exc)}")
                return
            self._status(f"Searching for {safe(text)} ...")
            self.run_search(pattern)
        elif self._prompt_mode == "iteration":
            self.goto_iteration(text)
        elif self._prompt_mode == "align":
            self.align_at(text)

    def _close_prompt(self) -> None:
        self.query_one("#prompt", Input).display = False
        self.screen.set_focus(self.query_one(Timeline))

    @work(thread=True, exclusive=True, group="search")
    def run_search(self, pattern: re.Pattern[str]) -> None:
        assert self.index is not None
        matches = find_slices(self.index, pattern)
        self.call_from_thread(self._search_done, pattern.pattern, matches)

    def _search_done(self, text: str, matches) -> None:
        timeline = self.query_one(Timeline)
        timeline.set_matches(matches)
        self.match_count = len(matches)
        if not len(matches):
            self._status(f"No slice name matches {safe(text)}.")
            return
        verb = "matches" if len(matches) == 1 else "match"
        self._status(f"{plural(len(matches), 'slice')} {verb} {safe(text)} (n next, N previous)")
        self.action_next_match(1)

    def action_next_match(self, step: int) -> None:
        timeline = self.query_one(Timeline)
        matches = timeline.matches
        if self.index is None or not len(matches):
            return
        starts = self.index.arrays["slices.start"][matches]
        here = timeline.cursor_ns
        if timeline.selected >= 0:
            here = int(self.index.arrays["slices.start"][timeline.selected])
        if step > 0:
            k = int(starts.searchsorted(here, side="right"))
            k = k if k < len(matches) else 0
        else:
            k = int(starts.searchsorted(here, side="left")) - 1
            k = k if k >= 0 else len(matches) - 1
        timeline.select(int(matches[k]))
        self._status(f"match {k + 1} of {fmt_count(len(matches))}: "
                     f"{safe(self.index.slice_name(int(matches[k])))}")

    def goto_iteration(self, text: str) -> None:
        try:
            number = int(text.lstrip("#"))
        except ValueError:
            self._status(f"Not an iteration number: {safe(text)}")
            return
        found = [it for it in self.iterations if it.number == number and it.start_ns >= 0
                 and it.dur_ns >= 0]
        if not found:
            self._status(f"No iteration {number} with a time window in this profile.")
            return
        groups = {it.group for it in found}
        if len(groups) < 2:
            self.show_iteration(found[0])
            return
        # Every rank's own step N: the timeline shows them all, the ops count each rank's
        # slices in its own step (their steps do not line up, nor across hosts their clocks).
        windows = group_windows(found, number)
        lo, hi = min(w[0] for w in windows.values()), max(w[1] for w in windows.values())
        label = f"iteration {number} of {len(groups)} ranks, each its own"
        shift = self.query_one(Timeline).shift_of_group
        self._zoom_to(min(w[0] - shift(g) for g, w in windows.items()),
                      max(w[1] - shift(g) for g, w in windows.items()))
        self._pane("ops").set_window(Window(label, lo, hi, windows))
        longest = max(it.dur_ns for it in found)
        self._status(f"{safe(label)}: {fmt_duration(min(it.dur_ns for it in found))} to "
                     f"{fmt_duration(longest)}")

    def action_align_ranks(self) -> None:
        """Ask at which iteration to align the ranks (the one at the cursor offered), or,
        aligned, put every rank back on its own clock."""
        timeline = self.query_one(Timeline)
        if self.index is None or timeline.index is None:
            return
        if timeline.alignment is not None:
            timeline.align(None)
            self._status("Every rank is drawn on its own clock again.")
            return
        if len(ranks_of(self.index)) < 2:
            self._status(ONE_RANK)
            return
        numbers = sorted({it.number for it in self.iterations if it.start_ns >= 0})
        if not numbers:
            self._status("This profile has no iterations with a time window to align the "
                         "ranks at.")
            return
        self._align_default = next((it.number for it in self.iterations if it.start_ns >= 0
                                    and it.start_ns <= timeline.cursor_ns < it.end_ns),
                                   numbers[0])
        self._ask("align", f"iteration to align the ranks at ({numbers[0]} to {numbers[-1]}; "
                           f"Enter alone: {self._align_default}); Esc cancels")

    def align_at(self, text: str) -> None:
        """Draw every rank moved by its offset at iteration `text` (see core.rank_offsets)
        and show that iteration."""
        assert self.index is not None
        try:
            number = int(text.lstrip("#"))
        except ValueError:
            self._status(f"Not an iteration number: {safe(text)}")
            return
        try:
            found = rank_offsets(self.index, self.iterations, number)
        except ProftuiError as exc:
            self._status(safe(exc))
            return
        timeline = self.query_one(Timeline)
        timeline.align(found)
        windows = group_windows(self.iterations, number)
        self._zoom_to(min(lo - found.offset_of(g) for g, (lo, _) in windows.items()),
                      max(hi - found.offset_of(g) for g, (_, hi) in windows.items()))
        range_now = timeline.range
        if range_now is not None:  # the ops follow the range, which now means each rank's own
            self._pane("ops").set_window(self._range_window(*range_now))
        text = found.describe()
        self._status(f"{safe(text[:1].upper() + text[1:])}. Details, the ops and exports keep "
                     "each slice's own times.")

    def _zoom_to(self, start_ns: int, end_ns: int) -> None:
        """The timeline shows [start_ns, end_ns) with a little room, its cursor at the start."""
        margin = (end_ns - start_ns) // 50
        timeline = self.query_one(Timeline)
        timeline.set_window(start_ns - margin, end_ns + margin)
        timeline.cursor_ns = start_ns  # where zooming in starts from

    def show_iteration(self, iteration: Iteration) -> None:
        """Zoom the timeline to an iteration and scope the ops pane to it (to its rank's
        tracks, when it is one rank's of several)."""
        shift = self.query_one(Timeline).shift_of_group(iteration.group)
        self._zoom_to(iteration.start_ns - shift, iteration.end_ns - shift)
        group = f" of {safe(iteration.group)}" if iteration.group else ""  # a folder name
        label = f"iteration {iteration.number}{group}"
        several = len({it.group for it in self.iterations}) > 1
        groups = ({iteration.group: (iteration.start_ns, iteration.end_ns)}
                  if iteration.group and several else None)
        self._pane("ops").set_window(Window(label, iteration.start_ns, iteration.end_ns,
                                                  groups))
        self._status(f"{safe(label)}: {fmt_duration(iteration.dur_ns)}")

    def on_iterations_pane_chosen(self, message: IterationsPane.Chosen) -> None:
        if message.iteration.start_ns < 0:
            self._status(f"Iteration {message.iteration.number} has no time window.")
            return
        self.show_iteration(message.iteration)

    def on_insights_pane_evidence_chosen(self, message: InsightsPane.EvidenceChosen) -> None:
        """Show an evidence range: the timeline (made visible) zooms to it and selects it."""
        evidence = message.evidence
        self._show_timeline()
        margin = max((evidence.end_ns - evidence.start_ns) // 10, 1)
        timeline = self.query_one(Timeline)
        start, end = (t - timeline.shift_of_group(evidence.group)
                      for t in (evidence.start_ns, evidence.end_ns))
        timeline.set_window(start - margin, end + margin)
        timeline.set_range(start, end)
        where = f" in {safe(evidence.group)}" if evidence.group else ""
        step = f", step {evidence.iteration}" if evidence.iteration is not None else ""
        self._status(f"{safe(message.finding.rule)} evidence {message.number + 1} of "
                     f"{len(message.finding.evidence)}: {safe(evidence.label)}{where}{step}, "
                     f"{fmt_duration(evidence.end_ns - evidence.start_ns)} (n / N walk)")

    def _show_timeline(self) -> None:
        """Make the timeline visible (un-maximise the panes, hide the overview)."""
        timeline = self.query_one(Timeline)
        if timeline.index is None:
            return
        panes = self.query_one("#panes")
        panes.remove_class("maximised")
        panes.display = self.query_one("#main").display = True
        self.query_one("#overview").remove_class("shown")
        timeline.display = True
        self.refresh_bindings()

    def on_heat_strip_cell_chosen(self, message: HeatStrip.CellChosen) -> None:
        """A rank's step chosen in the Cluster pane: the timeline shows that rank's step."""
        found = [it for it in self.iterations if (it.group, it.number) == (
            message.rank, message.iteration) and it.start_ns >= 0 and it.dur_ns >= 0]
        if not found:
            self._status(f"{safe(message.rank) or 'The profile'} has no time window for "
                         f"iteration {message.iteration}.")
            return
        self._show_timeline()
        self.show_iteration(found[0])
        timeline = self.query_one(Timeline)
        process = timeline.first_process_of(message.rank)
        if process is not None:
            timeline.show_process(process, at_top=True)

    @on(OverviewTree.Chosen)
    def _overview_chosen(self, message: OverviewTree.Chosen) -> None:
        """An iteration, process or track chosen in the overview: shown on the timeline."""
        what, value = message.what, message.value
        if what == "iteration":
            found = [it for it in self.iterations if (it.group, it.number) == value
                     and it.start_ns >= 0 and it.dur_ns >= 0]
            if not found:
                self._status(f"Iteration {value[1]} has no time window.")
                return
            self._show_timeline()
            self.show_iteration(found[0])
        else:
            self._show_timeline()
            timeline = self.query_one(Timeline)
            if what == "track":
                timeline.show_track(value)
            else:
                timeline.show_process(value)
        self.screen.set_focus(self.query_one(Timeline))

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
        """The ops follow the selected range (an area selection); no range: the whole trace."""
        ops = self._pane("ops")
        if message.start_ns is None or message.end_ns is None or self.index is None:
            ops.set_window(WHOLE_TRACE)
            return
        ops.set_window(self._range_window(message.start_ns, message.end_ns))

    def _range_window(self, start_ns: int, end_ns: int) -> Window:
        """A selected range as a window, labelled from the capture start. With the ranks
        aligned, the range is on the aligned clock: each rank's own window, moved by its
        offset."""
        origin = capture_start_ns(self.index) if self.index is not None else 0
        label = (f"range {fmt_duration(start_ns - origin)} to {fmt_duration(end_ns - origin)} "
                 f"({fmt_duration(end_ns - start_ns)})")
        alignment = self.query_one(Timeline).alignment
        if alignment is None:
            return Window(label, start_ns, end_ns)
        windows = alignment.windows(start_ns, end_ns)
        return Window(f"{label} aligned at iteration {alignment.number}: each rank's own "
                      "window, moved by its offset",
                      min(w[0] for w in windows.values()), max(w[1] for w in windows.values()),
                      windows)

    def on_ops_pane_tracks_wanted(self, message: OpsPane.TracksWanted) -> None:
        pinned = self.query_one(Timeline).layout_state.pinned
        if not pinned:
            self._status("No track is pinned: p on the timeline pins the focused track.")
            return
        self._pane("ops").set_tracks(pinned)

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
        return (self._range_window(*timeline.range) if timeline.range is not None
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
        self.call_from_thread(self._status, f"Wrote {plural(result.rows, 'row')} "
                                            f"({safe(job.label)}) to {safe(result.path)}")

    # -- panels, themes, help -------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self._choosing_run and action != "cancel_load":  # the chooser's keys only
            return action in ("quit", "help", "command_palette")
        return super().check_action(action, parameters)

    def key_timeline(self) -> Timeline | None:
        timeline = self.query_one(Timeline)
        shown = (timeline.index is not None and timeline.display
                 and bool(self.query_one("#main").display))
        return timeline if shown else None

    def action_pane(self, name: str) -> None:
        self.query_one(TabbedContent).active = f"pane-{name}"
        if name in PANE_NAMES:
            widget = self._pane(name)
            first = getattr(widget, "first_focus", widget.table_view)
            self.screen.set_focus(first())
        elif self.key_timeline() is not None:  # the details have no keys: the timeline's work
            self.screen.set_focus(self.query_one(Timeline))

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
        from proftui.tui.as_command import ops_command, profile_command, table_command

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
        """Every bound action with its key (see :mod:`proftui.tui.key_commands`), then
        Textual's own commands that proftui has no key for."""
        from proftui.tui.key_commands import key_commands

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
            self._show_timeline()
        elif command.pane is not None:
            self.action_pane(command.pane)
        await self.run_action(command.action, command.target)


class Prompt(Input):
    """The one-line prompt for a search or an iteration number; Esc closes it."""

    BINDINGS = [Binding("escape", "close", "Cancel", show=False)]

    def allow_focus(self) -> bool:
        return self.display  # hidden, it must not take the keys meant for the screen

    def action_close(self) -> None:
        self.app._close_prompt()  # type: ignore[attr-defined]


def settle_heap() -> None:
    """Keep what the opened trace holds (its widgets, tables, overview) out of the cyclic
    garbage collector's full passes: one took ~50 ms of a frame whenever it fell during
    navigation (bench/bench_frames.py), over objects that live as long as the trace is shown.
    What an earlier trace left is collected first; the app unfreezes all on unmount."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
