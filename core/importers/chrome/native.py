"""The optional native fast path of the event reader, and the Python path's say over it.

The extension `_native` (C, built at install where a compiler exists) reads one cut batch of
events into columns with no Python object per event: times as exact ns, labels as ids into the
batch's distinct raw JSON values. It declines (None) anything it does not fully understand,
and :mod:`~proftui.core.importers.chrome.decode` (the reference) reads that batch instead; a
batch it accepts gives the index the Python path would give, byte for byte (tests/core/
test_native.py, bench/native_parity.py). ``PROFTUI_NATIVE=0`` turns it off.

Why C against the CPython API: one file, no build dependency beyond a compiler and the Python
headers (Cython would be a build requirement of its own), and the parse needs no Python object
until its result is built, so the GIL is released while it runs.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
import numpy as np

try:
    from proftui.core.importers.chrome import _native as MODULE
except ImportError:  # not built: no C compiler at install, or PROFTUI_BUILD_NATIVE=0
    MODULE = None

# The token fields, in the order of the extension's columns.
FIELDS = ("ph", "pid", "tid", "name", "cat", "cname", "id", "id2", "bp", "s")
_FIELD = {name: i for i, name in enumerate(FIELDS)}
# The parts of a label combination (the extension's `combos` rows).
COMBO = ("cname", "pid", "tid", "name", "cat")

# Token texts are decoded as the Python path decodes an event's fields: float literals as their
# text (see decode.DECODER).
_TOKENS = msgspec.json.Decoder(list, float_hook=str)


def enabled() -> bool:
    """Whether batches are offered to the native reader."""
    return MODULE is not None and os.environ.get("PROFTUI_NATIVE", "1") != "0"


def reader_name() -> str:
    return "native" if enabled() else "python"


def unavailable_reason() -> str | None:
    """Why the native reader does not run, or None when it does."""
    if MODULE is None:
        return "not built (no C compiler at install, or PROFTUI_BUILD_NATIVE=0)"
    if not enabled():
        return "turned off by PROFTUI_NATIVE=0"
    return None


class Columns:
    """One batch read by the native reader: per event, the ids of its fields' values
    (`values` holds them, with None last so that the absent id -1 reads as None), its times
    and its byte range in `data`."""

    __slots__ = ("data", "n", "values", "fields", "ts", "ts_ok", "dur", "dur_ok", "bounds",
                 "combo", "combos", "known", "_combo_values")

    def __init__(self, data: Any, result: tuple) -> None:
        (n, tokens, fields, ts, ts_ok, dur, dur_ok, bounds, combo, combos) = result
        self.data = data
        self.n = n
        decoded = _TOKENS.decode(tokens)  # raises on what msgspec refuses
        values = np.empty(len(decoded) + 1, object)
        values[:-1] = decoded
        values[-1] = None
        self.values = values
        self.fields = np.frombuffer(fields, np.int32).reshape(len(FIELDS), n)
        self.ts = np.frombuffer(ts, np.int64)
        self.ts_ok = np.frombuffer(ts_ok, np.bool_)
        self.dur = np.frombuffer(dur, np.int64)
        self.dur_ok = np.frombuffer(dur_ok, np.bool_)
        self.bounds = np.frombuffer(bounds, np.int64).reshape(n, 2)
        self.combo = np.frombuffer(combo, np.int32)
        self.combos = np.frombuffer(combos, np.int32).reshape(-1, len(COMBO))
        self.known: dict[Any, Any] = {}  # per Labels, what it knows of the combinations
        self._combo_values: list[tuple] | None = None

    def __len__(self) -> int:
        return self.n

    def combo_values(self) -> list[tuple]:
        """Per combination (`combos`), the values of its parts (native.COMBO)."""
        if self._combo_values is None:
            values = self.values.tolist()
            self._combo_values = [tuple(map(values.__getitem__, parts))
                                  for parts in self.combos.tolist()]
        return self._combo_values

    def ids(self, name: str) -> np.ndarray:
        """The value ids of field `name`, per event (-1: absent)."""
        return self.fields[_FIELD[name]]


def read_batch(data: Any, start: int, end: int) -> Columns | None:
    """The events of data[start:end] as columns, or None when the native reader is off or
    declines the batch (the Python path reads it then)."""
    if not enabled():
        return None
    result = MODULE.read_batch(data, start, end)
    if result is None:
        return None
    try:
        return Columns(data, result)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):  # pragma: no cover
        return None  # a value the extension let through but msgspec refuses: its batch too
