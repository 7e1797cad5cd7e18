"""A builder's state as a typed, versioned record: what a worker or the rank cache hands over."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from proftui.core.build.tracks import Meta
from proftui.core.runtime.records import Record


@dataclass
class BuilderState(Record):
    """Everything a :class:`~proftui.core.build.builder.TraceBuilder` was given, in its own
    numbering (string ids index `texts`, track ids `tracks`, ordinals from its first event),
    to merge into another builder (see ``TraceBuilder.merge``). Bump VERSION whenever a field
    or a table's columns change."""

    # 1: the string-keyed dict this record replaced; 2: no reader; 3: counter samples as lists
    VERSION: ClassVar[int] = 4

    texts: list[Any]  # the string table, by id
    tracks: list[tuple]  # full track keys, by id
    phase_counts: dict[Any, int]
    processes: dict[Any, Meta]
    threads: dict[tuple, Meta]
    empty_events: int
    # table (_slices, _be, _instants, _flows, _bound, _samples) -> column -> values
    chunks: dict[str, dict[str, np.ndarray]]
    counter_series: dict[tuple[int, str], int]  # (track, series name) -> series id
    async_events: list[tuple]  # as TraceBuilder.add_async_event keeps them
    diagnostics: list[dict[str, Any]]  # Diagnostics.to_list()
    batches_read: dict[str, int]  # batches with events, by the reader that read them
    version: int = VERSION
