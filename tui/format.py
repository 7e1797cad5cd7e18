"""Human formatting of times and counts for display."""

from __future__ import annotations

from proftui.core.table_query import duration_text

# One formatter for durations everywhere: the tables' cells (core) and the screens (tui).
fmt_duration = duration_text


def fmt_count(n: int) -> str:
    return f"{n:,}"
