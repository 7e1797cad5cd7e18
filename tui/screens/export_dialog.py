"""Exporting from the app: the dialog (what to write: the window's events, its ops or a pane
as shown; which tracks and args; the time unit and clock, as `proftui export --unit --time`
take them; the file, never overwritten without asking)
and the job it becomes, which a worker runs with core calls."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, RadioButton, RadioSet, Select

from proftui.core.export.names import free_name as free_name  # the app's default name
from proftui.core.export.to_csv import export_events, export_table, select_tracks
from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.ops.aggregate import aggregate_ops
from proftui.core.ops.grouping import OpTypes
from proftui.tui.text.safe import safe

WHAT = (("events", "Events in the window (one row per slice)"),
        ("ops", "Ops of the window (as the ops pane aggregates them)"),
        ("pane", "The current pane's table as shown (filtered and sorted)"))
PANE_SHORT = "The pane's table as shown"  # where the table's name would not fit beside WHAT's
# Below this many rows the dialog's fields drop their borders (a row each): at 80x24 it
# would otherwise scroll its title and choices out of sight.
ROOMY_ROWS = 34
UNITS = ("us", "ns", "ms", "s")
# The events' start and end: from the capture start, or the profiler's clock (core.export).
CLOCK_CHOICES = (("from the capture start", "relative"), ("on the profiler's clock", "absolute"))


@dataclass(frozen=True)
class ExportRequest:
    """What the user asked to export."""

    what: str
    path: str
    tracks: str
    args_keys: tuple[str, ...]
    unit: str
    neutralize: bool
    overwrite: bool
    clock: str = "relative"  # of the events' start and end (see core.export.export_events)


class ExportDialog(ModalScreen["ExportRequest | None"]):
    """Choose what to export and where; Esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    ExportDialog { align: center middle; }
    ExportDialog > Vertical { width: 90; max-width: 95%; height: auto; max-height: 100%;
                              overflow-y: auto; padding: 0 1;
                              border: round $primary; background: $surface; }
    ExportDialog Input { margin: 0 0 0 0; }
    ExportDialog #export-warning { color: $warning; height: auto; }
    ExportDialog Horizontal { height: auto; }
    ExportDialog #export-unit { width: 20; }
    ExportDialog #export-clock { width: 1fr; }
    """

    def __init__(self, window_label: str, default_path: str, pane_label: str | None) -> None:
        super().__init__()
        self.window_label = window_label
        self.default_path = default_path
        self.pane_label = pane_label
        self._confirmed_path: str | None = None  # the path the user agreed to overwrite

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Export to CSV: {safe(self.window_label)}", markup=False)
            with RadioSet(id="export-what"):
                for n, (key, text) in enumerate(WHAT):
                    if key == "pane" and self.pane_label is None:
                        continue
                    label = self._pane_choice(text) if key == "pane" else text
                    yield RadioButton(Content(label), value=n == 0, name=key)  # no markup
            yield Input(placeholder="tracks: all; or a pattern like 'stream' or /^rank 0/",
                        id="export-tracks")
            yield Input(placeholder="args keys as columns, e.g. correlation,Task Type",
                        id="export-args")
            with Horizontal():
                yield Select([(f"times in {u}", u) for u in UNITS], value="us",
                             allow_blank=False, id="export-unit")
                yield Select(CLOCK_CHOICES, value="relative", allow_blank=False,
                             id="export-clock")
            yield Checkbox("neutralise cells starting with = + - @", value=True,
                           id="export-neutralize")
            yield Input(value=self.default_path, id="export-path")
            yield Label("", id="export-warning", markup=False)
            with Horizontal():
                yield Button("Export", variant="primary", id="export-go")
                yield Button("Cancel", id="export-cancel")

    def _pane_choice(self, text: str) -> str:
        """The pane's choice, naming its table: shorter where the dialog is narrow."""
        # the dialog's width (90, at most 95% of the screen) less its border, padding and
        # the radio button's own
        room = min(90, self.app.size.width * 95 // 100) - 10
        full = f"{text}: {safe(self.pane_label)}"
        return full if len(full) <= room or room <= 0 else \
            f"{PANE_SHORT}: {safe(self.pane_label)}"

    def on_mount(self) -> None:
        self._fit(self.app.size.height)
        # The choice first: arrows meant for it must not go to (and replace) the file name.
        self.query_one("#export-what", RadioSet).focus()

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.height)

    def _fit(self, rows: int) -> None:
        """Fields without borders on a short screen, so that the whole dialog shows."""
        compact = 0 < rows < ROOMY_ROWS
        for field in self.query("Input, Select, Checkbox, RadioSet, Button"):
            field.compact = compact  # type: ignore[attr-defined]

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#export-cancel")
    def _cancel(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-go")
    def _go(self) -> None:
        path = os.path.expanduser(self.query_one("#export-path", Input).value.strip())
        warning = self.query_one("#export-warning", Label)
        if not path or path == "-":  # standard output is the screen the app draws on
            warning.update("Give a file name.")
            return
        if os.path.isdir(path):
            warning.update(f"{safe(path)} is a directory: give a file name.")
            return
        overwrite = False
        if os.path.exists(path):
            if self._confirmed_path != path:
                self._confirmed_path = path
                warning.update(f"{safe(path)} exists: press Export again to overwrite it.")
                return
            overwrite = True
        pressed = self.query_one("#export-what", RadioSet).pressed_button
        what = pressed.name if pressed is not None and pressed.name else "events"
        keys = tuple(k.strip() for k in self.query_one("#export-args", Input).value.split(",")
                     if k.strip())
        self.dismiss(ExportRequest(
            what=what, path=path, tracks=self.query_one("#export-tracks", Input).value.strip(),
            args_keys=keys, unit=str(self.query_one("#export-unit", Select).value),
            neutralize=self.query_one("#export-neutralize", Checkbox).value,
            overwrite=overwrite, clock=str(self.query_one("#export-clock", Select).value)))


@dataclass(frozen=True)
class ExportJob:
    """An export with everything it needs from the screen, so a worker can run it."""

    request: ExportRequest
    label: str
    start_ns: int | None
    end_ns: int | None
    by: str
    side: str
    types: OpTypes | None
    tables: list[Table]
    pane: tuple[Table, Any, list[int]] | None  # (table, row order, shown columns)
    # each rank's own window (a step N of several ranks, a range of ranks aligned), or None
    groups: dict[str, tuple[int, int]] | None = None

    def run(self, index: TraceIndex) -> Any:
        request = self.request
        tracks = None
        if request.tracks:
            tracks = select_tracks(index, request.tracks)
            if not len(tracks):
                raise ProftuiError(f"no track matches {request.tracks!r}.")
        common = {"neutralize": request.neutralize, "overwrite": request.overwrite}
        if request.what == "events":
            return export_events(index, request.path, start_ns=self.start_ns,
                                 end_ns=self.end_ns, tracks=tracks, groups=self.groups,
                                 args_keys=request.args_keys, unit=request.unit,
                                 clock=request.clock, **common)
        if request.what == "ops":
            table = aggregate_ops(index, start_ns=self.start_ns, end_ns=self.end_ns,
                                  tracks=tracks, by=self.by, side=self.side, types=self.types,
                                  tables=self.tables, groups=self.groups)
            shown = [i for i, c in enumerate(table.columns) if c.name != "name_id"]
            return export_table(table, request.path, columns=shown, **common)
        if self.pane is None:
            raise ProftuiError("the active pane shows no table.")
        table, rows, columns = self.pane
        return export_table(table, request.path, rows=rows, columns=columns, **common)
