"""The chooser shown when a folder holds several separate runs: Enter opens one, q quits."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from proftui.core.discover.runs import SeveralRunsError
from proftui.tui.text.safe import safe


class RunChooser(Screen["int | None"]):
    """The runs of a folder, one per line; dismissed with the chosen run's number or None."""

    BINDINGS = [Binding("escape,q", "quit_app", "Quit")]
    DEFAULT_CSS = """
    RunChooser #runs-title { padding: 1 1 0 1; height: auto; }
    RunChooser #runs-hint { padding: 0 1 1 1; height: auto; color: $text-muted; }
    RunChooser OptionList { height: 1fr; margin: 0 1; }
    """

    def __init__(self, several: SeveralRunsError) -> None:
        super().__init__()
        self.several = several

    def compose(self) -> ComposeResult:
        yield Static(safe(self.several), id="runs-title", markup=False)
        yield Static("Mixing them would put unrelated clocks and ranks on one axis. Enter "
                     "opens the run under the cursor; q or Esc quits. (proftui --run N PATH "
                     "opens one directly.)", id="runs-hint", markup=False)
        yield OptionList(*(Option(Content(safe(line)), id=str(run.number))
                           for run, line in zip(self.several.runs, self.several.lines())),
                         id="runs")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0) or None)

    def action_quit_app(self) -> None:
        self.dismiss(None)
