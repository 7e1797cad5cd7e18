"""Following a profile folder as a job writes it (`proftui watch DIR`): the app opens what is
complete, opens it again as ranks, cycle traces and tables are completed, and keeps the view
where the user is (window, selection, scroll, pane)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.widget import Widget
from textual.widgets import TabbedContent

from proftui.core import ProftuiError, TraceIndex
from proftui.core.analysis.growth import NewGroup, NewStep, Seen, appeared
from proftui.core.analysis.overview import read_overview
from proftui.core.load.loader import check_not_empty
from proftui.core.load.watch import POLL_S, ProfileWatcher, open_complete
from proftui.core.model.table import Table
from proftui.core.ops.iterations import Iterations
from proftui.core.query.rows import RowIndex, rows_for
from proftui.core.query.same_slice import SliceKey, find_slice
from proftui.tui.app.loading import overview_status, unexpected
from proftui.tui.text.format import plural
from proftui.tui.text.safe import safe
from proftui.tui.widgets.timeline import Timeline

if TYPE_CHECKING:
    from proftui.tui.app.shell import ProftuiApp


@dataclass(frozen=True)
class FollowOptions:
    """How to follow: the poll interval, and polling forced (no file events)."""

    interval_s: float = POLL_S
    polling: bool = False


@dataclass
class KeptView:
    """Where the user is, taken before the profile is shown again and given back after."""

    window: tuple[int, int]
    whole: bool  # the window showed the whole trace: it grows with it
    selected: SliceKey | None
    top_line: int
    pane: str
    focused: Widget | None

    @classmethod
    def of(cls, app: ProftuiApp) -> KeptView:
        timeline = app.query_one(Timeline)
        index = timeline.index
        selected = (SliceKey.of(index, timeline.selected)
                    if index is not None and timeline.selected >= 0 else None)
        whole = index is not None and (timeline.view_start <= index.start_ns
                                       and timeline.view_end >= index.end_ns)
        return cls((timeline.view_start, timeline.view_end), whole, selected,
                   timeline.top_line, app.query_one(TabbedContent).active, app.focused)

    def restore(self, app: ProftuiApp) -> None:
        timeline = app.query_one(Timeline)
        index = timeline.index
        if index is None:
            return
        if self.selected is not None and (i := find_slice(index, self.selected)) >= 0:
            timeline.select(i)
        if not self.whole:
            timeline.set_window(*self.window)
        timeline.top_line = max(0, min(self.top_line, len(timeline.lines) - 1))
        timeline.refresh()
        if self.pane:
            app.query_one(TabbedContent).active = self.pane
        if self.focused is not None and self.focused.is_attached:
            self.focused.focus()


def growth_note(found: list[NewGroup | NewStep]) -> str:
    """What a reopening brought, in a few words ("" for nothing new)."""
    groups = [safe(f.group or f.where) for f in found if isinstance(f, NewGroup)]
    steps = sum(isinstance(f, NewStep) for f in found)
    said = []
    if groups:
        said.append(f"new {', '.join(groups[:4])}{' ...' if len(groups) > 4 else ''}")
    if steps:
        said.append(plural(steps, "new step"))
    return "; ".join(said)


class Following:
    """The app's following of a folder: a watcher in a worker thread, each change opened
    again (the unchanged files from the cache) and shown with the view kept."""

    def __init__(self, app: ProftuiApp, options: FollowOptions) -> None:
        self.app = app
        self.watcher = ProfileWatcher(app.path, options.interval_s, options.polling)
        self.stopped = threading.Event()
        self.seen = Seen()
        self.reloads = 0  # how many times the profile was shown again

    def stop(self) -> None:
        self.stopped.set()

    def run(self) -> None:
        """The worker's work: until the app stops it, open each new set of complete files."""
        app = self.app
        app.call_from_thread(app._status, f"Following {safe(app.path)} by "
                                          f"{self.watcher.mode}: waiting for a complete file ...")
        for complete in self.watcher.changes(self.stopped):
            if app.index is None:
                app.error = None  # an earlier failure is not final while the job writes
                app.loading.run(keep=complete.__contains__)
                if app.index is not None:
                    self.seen = self._seen_now(app.index)
                continue
            try:
                opened = self._open(complete)
            except ProftuiError as exc:
                app.call_from_thread(app._status, f"Following: {safe(exc)} (showing the last "
                                                  "complete state)")
                continue
            except Exception as exc:  # noqa: BLE001 - the shown profile stays usable
                app.call_from_thread(app._status, f"Following: {unexpected(exc)}")
                continue
            app.call_from_thread(self.show_again, *opened)

    def _seen_now(self, index: TraceIndex) -> Seen:
        _, _, found = read_overview(index)
        return appeared(Seen(), index.meta.get("profile") or {}, found)[1]

    def _open(self, complete: frozenset[str]) -> tuple[Any, ...]:
        app = self.app
        index = open_complete(app.path, complete, app.run_number, app.use_cache)
        check_not_empty(index, app.path)
        rows = rows_for(index)
        summary, tables, found = read_overview(index)
        new, self.seen = appeared(self.seen, index.meta.get("profile") or {}, found)
        return index, rows, summary, tables, found, growth_note(new)

    def show_again(self, index: TraceIndex, rows: RowIndex, summary: dict[str, Any],
                   tables: list[Table], found: Iterations, note: str) -> None:
        """Show the profile opened again, the view kept (on the UI thread)."""
        app = self.app
        timeline = app.query_one_optional(Timeline)
        if timeline is None:  # a reload that came as the app closed: its screen is gone
            return
        kept = KeptView.of(app)
        timeline.show(index, rows, utilisation=False)
        app._show_index(index, rows, summary, tables, found.items)
        kept.restore(app)
        self.reloads += 1
        app._status(f"Followed: {note or 'files completed'}. {overview_status(index)}")
