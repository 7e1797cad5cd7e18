"""The overview: what a trace or profile holds (iterations, processes, tables), as a tree."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree

from proftui.tui.text.format import fmt_count, fmt_duration, plural, track_contents
from proftui.tui.text.safe import safe


class OverviewTree(Tree):
    """Iterations (slowest marked), processes and their tracks, and the summary tables; Enter
    on an iteration, process or track shows it on the timeline, Esc closes."""

    BINDINGS = [Binding("escape", "close", "Close", show=False)]

    class Chosen(Message):
        """Enter on an iteration (value: (group, number)), a process or a track (its id)."""

        def __init__(self, what: str, value: Any) -> None:
            super().__init__()
            self.what = what
            self.value = value

    def action_close(self) -> None:
        self.app.action_toggle_overview()  # type: ignore[attr-defined]

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        event.stop()
        if event.node.data is not None:
            self.post_message(self.Chosen(*event.node.data))

    def process_label(self, label: str | Text) -> Text:
        """A label as plain text: Tree would read a str as markup, and trace names hold
        square brackets ("[link=...]" would become a hyperlink, "[/]" an error)."""
        return super().process_label(Text(label) if isinstance(label, str) else label)

    def show_summary(self, summary: dict[str, Any], path: str) -> None:
        """List the iterations, processes with their tracks, and the summary tables."""
        tree = self
        tree.clear()
        tree.root.set_label(safe(path))
        self._add_iterations(summary["iterations"])
        for p, proc in enumerate(summary["processes"]):
            label = f"{safe(proc['name']) or 'Process'} (pid {safe(proc['pid']) or '-'})"
            if proc["group"]:
                label = f"{safe(proc['group'])}: {label}"
            node = tree.root.add(label, expand=True, data=("process", p))
            for track in proc["tracks"]:
                node.add_leaf(f"{safe(track['name'])}  {track_contents(track)}",
                              data=("track", track["track"]))
            if proc["n_tracks"] > len(proc["tracks"]):
                node.add_leaf(f"... {fmt_count(proc['n_tracks'] - len(proc['tracks']))} "
                              "more tracks")
        for track in summary["other_tracks"]:
            tree.root.add_leaf(f"{safe(track['name'])}  {track_contents(track)}",
                               data=("track", track["track"]))
        if summary["n_other_tracks"] > len(summary["other_tracks"]):
            more = summary["n_other_tracks"] - len(summary["other_tracks"])
            tree.root.add_leaf(f"... {fmt_count(more)} more tracks")
        tables = (summary.get("profile") or {}).get("tables", [])
        if tables:
            node = tree.root.add(f"Summary tables ({len(tables)})", expand=True)
            for table in tables:
                shape = (f"{plural(table['rows'], 'row')} x "
                         f"{plural(len(table['columns']), 'column')}"
                         if "rows" in table else safe(table.get("error", "")))
                node.add_leaf(f"{safe(table['kind'])}  {shape}")
        tree.root.expand()

    def _add_iterations(self, iterations: dict[str, Any]) -> None:
        items = iterations["items"]
        if not items:
            return
        timed = [it["dur_ns"] for it in items if it["dur_ns"] is not None]
        slowest = max(timed) if timed else -1
        node = self.root.add(f"Iterations ({len(items)}, from {safe(iterations['source'])})",
                             expand=len(items) <= 20)
        for it in items:
            group = f"{safe(it['group'])} " if it["group"] else ""
            took = fmt_duration(it["dur_ns"]) if it["dur_ns"] is not None else "(no window)"
            parts = ", ".join(f"{safe(name)} {fmt_duration(int(ns))}"
                              for name, ns in it["parts_ns"].items() if ns is not None)
            mark = "  <- slowest" if it["dur_ns"] == slowest and len(timed) > 1 else ""
            node.add_leaf(f"{group}#{it['iteration']}  {took}{'  ' + parts if parts else ''}"
                          f"{mark}", data=("iteration", (it["group"], it["iteration"])))
