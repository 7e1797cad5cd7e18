"""The headless core of proftui: importers, the trace index, its cache and queries.

Nothing here imports textual or rich; scripts and the command line use it directly. The names
below are imported on first use: importing one small module of the core (a formatter, the
cache) does not load every importer with it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proftui.core.load.loader import load_trace
    from proftui.core.model.errors import Cancelled, NotATraceError, ProftuiError
    from proftui.core.model.index import TraceIndex

__all__ = ["Cancelled", "NotATraceError", "ProftuiError", "TraceIndex", "load_trace"]
_HOMES = {"Cancelled": "model.errors", "NotATraceError": "model.errors",
          "ProftuiError": "model.errors", "TraceIndex": "model.index", "load_trace": "load.loader"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
