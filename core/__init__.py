"""The headless core of proftui: importers, the trace index, its cache and queries.

Nothing here imports textual or rich; scripts and the command line use it directly. The names
below are imported on first use: importing one small module of the core (a formatter, the
cache) does not load every importer with it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proftui.core.errors import Cancelled, NotATraceError, ProftuiError
    from proftui.core.index import TraceIndex
    from proftui.core.load import load_trace

__all__ = ["Cancelled", "NotATraceError", "ProftuiError", "TraceIndex", "load_trace"]
_HOMES = {"Cancelled": "errors", "NotATraceError": "errors", "ProftuiError": "errors",
          "TraceIndex": "index", "load_trace": "load"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
