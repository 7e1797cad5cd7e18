"""The time window the Ops pane's numbers describe."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
    """The time window the ops numbers describe (None bounds: the whole trace); with
    `groups`, each group (rank or device) named there in its own window, the others left
    out (see :func:`proftui.core.ops.aggregate.aggregate_ops`)."""

    label: str
    start_ns: int | None = None
    end_ns: int | None = None
    groups: dict[str, tuple[int, int]] | None = None


WHOLE_TRACE = Window("whole trace")
