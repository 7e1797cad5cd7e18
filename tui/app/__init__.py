"""The app for one trace: its shell (ProftuiApp), the controllers it hands work to, and what
the compare app shares with it (base)."""

from proftui.tui.app.prompts import Prompt
from proftui.tui.app.shell import PANE_NAMES, ProftuiApp, StatusLine, settle_heap, table_panes

__all__ = ["PANE_NAMES", "ProftuiApp", "Prompt", "StatusLine", "settle_heap", "table_panes"]
