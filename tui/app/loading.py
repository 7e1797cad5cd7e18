"""Opening a trace in the app: the loading worker's work, its progress and cancel, runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from textual.widgets import ProgressBar, Static

from proftui.core import Cancelled, ProftuiError, TraceIndex, load_trace
from proftui.core.analysis.overview import read_overview
from proftui.core.discover.runs import SeveralRunsError
from proftui.core.load.loader import check_not_empty
from proftui.core.load.progress import FileStatus
from proftui.core.query.rows import RowIndex, rows_for
from proftui.tui.commands.common import index_warning_line
from proftui.tui.text.format import fmt_count, fmt_duration, plural
from proftui.tui.text.ranks_progress import rank_lines
from proftui.tui.text.safe import safe
from proftui.tui.widgets.timeline import Timeline

if TYPE_CHECKING:
    from proftui.tui.app.shell import ProftuiApp

# How long the overview waits for the first frame before it is read anyway.
FIRST_FRAME_WAIT_S = 1.0
RANK_LINES = 8  # at most, under the progress bar (fewer on a short screen)


def progress_status(path: str, file_note: str, done: int, total: int, events: int,
                    elapsed_s: float) -> str:
    """The status line while a trace is indexed (`file_note`: which file of several)."""
    elapsed = max(elapsed_s, 1e-3)
    return (f"Indexing {safe(path)}: {file_note}{done / 1e6:,.0f} of {total / 1e6:,.0f} MB, "
            f"{fmt_count(events)} events, {done / 1e6 / elapsed:,.0f} MB/s (Esc cancels)")


def file_note(number: int, of: int, name: str) -> str:
    """Which file of a profile of several timelines is indexed ("" for one file)."""
    return f"{safe(name)}, {number} of {of} files; " if of > 1 else ""


def overview_status(index: TraceIndex) -> str:
    """What the index holds, in a line (from the index alone: it is shown with the first
    frame, before the overview is read), after the warning line of its damage, as the
    commands print it first."""
    warned = index_warning_line(index)
    said = _holds(index)
    return f"{warned}\n{said}" if warned else said


def _holds(index: TraceIndex) -> str:
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


def unexpected(exc: Exception) -> str:
    """A bug met while reading, said as a sentence rather than a traceback."""
    return (f"unexpected {type(exc).__name__} while reading it ({exc}); "
            "please report it")


class Loading:
    """The app's loading: indexes (or reopens from the cache) in the app's worker thread,
    reports progress, shows the first frame before the overview is read, and asks which run
    to open when a folder holds several."""

    def __init__(self, app: ProftuiApp, cached: Future | None = None) -> None:
        self.app = app
        self.cached = cached  # reading the index and its rows from the cache already
        self.first_frame = threading.Event()  # set once the timeline is first painted
        self.indexing_file = ""  # of a profile of several timelines: which one is indexed
        self.choosing_run = False

    def run(self, keep: Callable[[str], bool] | None = None) -> None:
        """The worker's work (see ProftuiApp.load_index). The timeline is shown as soon as
        the index and its rows are there; the overview (the tracks' roles, the summary
        tables, the iterations) is read once it is painted, and fills the panes. `keep`:
        the files of a folder being written that are complete (see Following)."""
        app = self.app
        try:
            cached, self.cached = self.cached, None  # (a run chosen later is loaded here)
            opened = cached.result() if cached is not None and keep is None else None
            if opened is not None:
                index, rows = opened
            else:  # indexing takes a while: the panes are there meanwhile
                app.call_from_thread(app._panes_ready)
                index = load_trace(app.path, run=app.run_number, use_cache=app.use_cache,
                                   progress=self._report_progress,
                                   cancelled=app._cancel.is_set,
                                   file_progress=self._report_file, keep=keep,
                                   ranks_progress=self._report_ranks)
                rows = rows_for(index)
            check_not_empty(index, app.path)  # (a cached empty one is said again)
            if index.meta.get("sources"):  # (a profile of summary tables only has none)
                self.first_frame.clear()
                app.call_from_thread(self.show_timeline_first, index, rows)
                # Not sooner: this thread would take turns with the painting one.
                self.first_frame.wait(FIRST_FRAME_WAIT_S)
            summary, tables, iterations = read_overview(index)
        except Cancelled:
            app.call_from_thread(app._with_panes, self.show_stopped,
                                 "Loading cancelled (press q to quit).")
        except SeveralRunsError as exc:
            app.call_from_thread(app._with_panes, self.choose_run, exc)
        except ProftuiError as exc:
            app.call_from_thread(app._with_panes, self.show_failure, str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must not leave a traceback on screen
            app.call_from_thread(app._with_panes, self.show_failure, unexpected(exc))
        else:
            app.call_from_thread(app._with_panes, app._show_index, index, rows, summary,
                                 tables, iterations.items)
        finally:
            app._loading = False  # Esc is the focused widget's again

    # -- progress -------------------------------------------------------------------------------

    def _report_progress(self, done: int, total: int, events: int) -> None:
        self.app.call_from_thread(self.update_progress, done, total, events)

    def _report_file(self, number: int, of: int, name: str) -> None:
        if of > 1:
            self.app.call_from_thread(setattr, self, "indexing_file", file_note(number, of, name))

    def _report_ranks(self, files: tuple[FileStatus, ...]) -> None:
        self.app.call_from_thread(self.update_ranks, files)

    def update_ranks(self, files: tuple[FileStatus, ...]) -> None:
        """A line per rank being read (every rank when they fit), and how many are done and
        came from the cache, under the progress bar."""
        app = self.app
        if not app.query_one(ProgressBar).display:
            return  # said late: the profile is open already
        room = max(2, min(RANK_LINES, app.size.height // 3))
        ranks = app.query_one("#ranks", Static)
        ranks.update("\n".join(rank_lines(files, max(app.size.width - 2, 20), room)))
        ranks.add_class("shown")

    def hide_progress(self) -> None:
        """The progress bar and the ranks' lines gone: the profile is open, or will not be."""
        self.app.query_one(ProgressBar).display = False
        self.app.query_one("#ranks", Static).remove_class("shown")

    def update_progress(self, done: int, total: int, events: int) -> None:
        app = self.app
        app.query_one(ProgressBar).update(total=max(total, 1), progress=done)
        app._status(progress_status(app.path, self.indexing_file, done, total, events,
                                    time.monotonic() - app._started))

    # -- outcomes -------------------------------------------------------------------------------

    def show_stopped(self, message: str) -> None:
        self.hide_progress()
        self.app._status(message)

    def show_failure(self, message: str) -> None:
        app = self.app
        app.error = message
        self.hide_progress()
        app._error(f"Cannot open this trace: {safe(message)}")

    def show_timeline_first(self, index: TraceIndex, rows: RowIndex) -> None:
        """The first frame: the timeline of the index, before its overview is read."""
        app = self.app
        app.index, app.rows = index, rows
        app._loading = False  # nothing left to cancel: Esc is the focused widget's again
        self.hide_progress()
        app._status(overview_status(index))
        timeline = app.query_one(Timeline)
        timeline.show(index, rows, utilisation=False)  # (it needs the tables)
        timeline.focus()
        app.call_after_refresh(self._first_frame_painted)

    async def _first_frame_painted(self) -> None:
        self.app._painted()
        await self.app._panes_ready()
        self.first_frame.set()  # the overview is read now (see run)

    # -- several runs ---------------------------------------------------------------------------

    def choose_run(self, several: SeveralRunsError) -> None:
        """Several separate runs: ask which one to open rather than mix their clocks."""
        from proftui.tui.screens.run_chooser import RunChooser

        app = self.app
        app._status(f"{safe(app.path)} holds {len(several.runs)} separate runs: choose one.")
        self.choosing_run = True
        app.push_screen(RunChooser(several), self.run_chosen)

    def run_chosen(self, number: int | None) -> None:
        app = self.app
        self.choosing_run = False
        if number is None:
            app.exit()
            return
        app.run_number = number
        app.sub_title = f"{safe(app.path)} (run {number})"
        app._loading = True
        app._started = time.monotonic()
        app.query_one(ProgressBar).display = True
        app._status(f"Opening run {number} of {safe(app.path)} ...")
        app.load_index()

    def allows(self, action: str) -> bool | None:
        """While the run chooser is up, the chooser's keys only (None: no say)."""
        if self.choosing_run and action != "cancel_load":
            return action in ("quit", "help", "command_palette")
        return None
