"""The app for one trace: its shell (ProftuiApp) and the controllers it hands work to."""

from proftui.tui.app.prompts import Prompt
from proftui.tui.app.shell import PANE_NAMES, ProftuiApp, StatusLine, settle_heap, table_panes

__all__ = ["PANE_NAMES", "ProftuiApp", "Prompt", "StatusLine", "settle_heap", "table_panes"]
