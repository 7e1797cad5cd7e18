"""The Textual app: loads a trace in a worker (with progress and cancel) and shows what it holds.

This first screen lists the iterations, processes and tracks with their contents, the summary
tables of a profile, the time span and the import diagnostics; the zoomable timeline comes
next (issue "The timeline screen").
"""

from __future__ import annotations

import threading
import time
from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, ProgressBar, Static, Tree

from proftui.core import Cancelled, ProftuiError, TraceIndex, load_trace
from proftui.core.overview import overview
from proftui.tui.cli import info_lines, track_contents
from proftui.tui.format import fmt_count, fmt_duration
from proftui.tui.safe import safe


class ProftuiApp(App[None]):
    """proftui's terminal app for one trace."""

    TITLE = "proftui"
    CSS = """
    #status { height: auto; padding: 0 1; }
    #progress { padding: 0 1; }
    #tracks { height: 1fr; }
    #diagnostics { height: auto; max-height: 50%; padding: 0 1; display: none; }
    #diagnostics.shown { display: block; }
    """
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("escape", "cancel_load", "Cancel load", show=False),
        Binding("D", "toggle_diagnostics", "Diagnostics"),
    ]

    def __init__(self, path: str, use_cache: bool = True) -> None:
        super().__init__()
        self.path = path
        self.use_cache = use_cache
        self.index: TraceIndex | None = None
        self.error: str | None = None
        self._cancel = threading.Event()
        self._started = time.monotonic()

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"Opening {safe(self.path)} ...", id="status", markup=False)
        yield ProgressBar(id="progress", show_eta=True)
        yield Tree("trace", id="tracks")
        yield Static("", id="diagnostics", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = safe(self.path)
        self.load_index()

    @work(thread=True, exclusive=True)
    def load_index(self) -> None:
        """Index (or reopen from the cache) in a thread; the UI stays live."""
        try:
            index = load_trace(self.path, use_cache=self.use_cache,
                               progress=self._report_progress, cancelled=self._cancel.is_set)
            summary = overview(index)
        except Cancelled:
            self.call_from_thread(self._show_status, "Loading cancelled (press q to quit).")
        except ProftuiError as exc:
            self.call_from_thread(self._show_error, str(exc))
        else:
            self.call_from_thread(self._show_index, index, summary)

    def _report_progress(self, done: int, total: int, events: int) -> None:
        self.call_from_thread(self._update_progress, done, total, events)

    def _update_progress(self, done: int, total: int, events: int) -> None:
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)
        elapsed = max(time.monotonic() - self._started, 1e-3)
        self.query_one("#status", Static).update(
            f"Indexing {safe(self.path)}: {done / 1e6:,.0f} of {total / 1e6:,.0f} MB, "
            f"{fmt_count(events)} events, {done / 1e6 / elapsed:,.0f} MB/s (Esc cancels)")

    def _show_status(self, message: str) -> None:
        self.query_one(ProgressBar).display = False
        self.query_one("#status", Static).update(message)

    def _show_error(self, message: str) -> None:
        self.error = message
        self.query_one(ProgressBar).display = False
        self.query_one("#status", Static).update(f"Cannot open this trace: {safe(message)}")

    def _show_index(self, index: TraceIndex, summary: dict[str, Any]) -> None:
        self.index = index
        self.query_one(ProgressBar).display = False
        n_problems = index.diagnostics.total
        problems = (f"; {fmt_count(n_problems)} import problems (D to show)" if n_problems
                    else "; no import problems")
        tables = (summary.get("profile") or {}).get("tables", [])
        if summary["sources"]:
            status = (f"{fmt_count(summary['slices'])} slices over "
                      f"{fmt_duration(summary['duration_ns'])}, "
                      f"{len(summary['processes'])} processes{problems}")
        else:
            status = f"No timeline in this profile; {len(tables)} summary tables{problems}"
        self.query_one("#status", Static).update(status)
        tree = self.query_one(Tree)
        tree.clear()
        tree.root.set_label(safe(self.path))
        self._add_iterations(tree, summary["iterations"])
        for proc in summary["processes"]:
            label = f"{safe(proc['name']) or 'Process'} (pid {safe(proc['pid']) or '-'})"
            if proc["group"]:
                label = f"{safe(proc['group'])}: {label}"
            node = tree.root.add(label, expand=True)
            for track in proc["tracks"]:
                node.add_leaf(f"{safe(track['name'])}  {track_contents(track)}")
        for track in summary["other_tracks"]:
            tree.root.add_leaf(f"{safe(track['name'])}  {track_contents(track)}")
        if tables:
            node = tree.root.add(f"Summary tables ({len(tables)})", expand=True)
            for table in tables:
                shape = (f"{fmt_count(table['rows'])} rows x {len(table['columns'])} columns"
                         if "rows" in table else safe(table.get("error", "")))
                node.add_leaf(f"{safe(table['kind'])}  {shape}")
        tree.root.expand()
        diag = [line for line in info_lines(summary) if line.startswith(("diagnostics", "  "))]
        start = next((i for i, line in enumerate(diag) if line.startswith("diagnostics")), 0)
        self.query_one("#diagnostics", Static).update("\n".join(diag[start:]))

    def _add_iterations(self, tree: Tree, iterations: dict[str, Any]) -> None:
        items = iterations["items"]
        if not items:
            return
        timed = [it["dur_ns"] for it in items if it["dur_ns"] >= 0]
        slowest = max(timed) if timed else -1
        node = tree.root.add(f"Iterations ({len(items)}, from {iterations['source']})",
                             expand=len(items) <= 20)
        for it in items:
            group = f"{safe(it['group'])} " if it["group"] else ""
            took = fmt_duration(it["dur_ns"]) if it["dur_ns"] >= 0 else "(no window)"
            parts = ", ".join(f"{name} {fmt_duration(int(ns))}"
                              for name, ns in it["parts_ns"].items())
            mark = "  <- slowest" if it["dur_ns"] == slowest and len(timed) > 1 else ""
            node.add_leaf(f"{group}#{it['number']}  {took}{'  ' + parts if parts else ''}{mark}")

    def action_cancel_load(self) -> None:
        self._cancel.set()

    def action_toggle_diagnostics(self) -> None:
        self.query_one("#diagnostics").toggle_class("shown")
