"""The headless core of proftui: importers, the trace index, its cache and queries.

Nothing here imports textual or rich; scripts and the command line use it directly.
"""

from proftui.core.errors import Cancelled, NotATraceError, ProftuiError
from proftui.core.index import TraceIndex
from proftui.core.load import load_trace

__all__ = ["Cancelled", "NotATraceError", "ProftuiError", "TraceIndex", "load_trace"]
