"""The optional compiled event reader (`_native`, built from _native.c at install when a C
compiler is there): whether it is here, whether it is used, and why not.

PROFTUI_NATIVE=0 turns it off: every batch is then read by the Python path (msgspec).
"""

from __future__ import annotations

import os
from types import ModuleType

MODULE: ModuleType | None
try:
    from proftui.core.importers.chrome import _native as MODULE
except ImportError:  # not built: no C compiler or Python headers at install
    MODULE = None


def enabled() -> bool:
    """Whether batches go to the native reader first."""
    return MODULE is not None and os.environ.get("PROFTUI_NATIVE") != "0"


def reader_name() -> str:
    """"native" or "python": the reader that reads batches now."""
    return "native" if enabled() else "python"


def unavailable_reason() -> str | None:
    """Why the native reader is not used (None when it is)."""
    if MODULE is None:
        return "not built (no C compiler at install)"
    if os.environ.get("PROFTUI_NATIVE") == "0":
        return "turned off by PROFTUI_NATIVE=0"
    return None
