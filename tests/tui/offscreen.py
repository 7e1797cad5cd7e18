"""A Timeline driven without an app: keys pressed through its bindings, as Pilot would."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from textual.actions import parse

from proftui.core import TraceIndex, load_trace
from proftui.core.query.rows import RowIndex, rows_for
from proftui.tui.widgets.timeline import Timeline

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SAMPLE = SAMPLES / "kineto_demo.pt.trace.json"


@lru_cache(maxsize=8)
def opened(path: str = str(SAMPLE)) -> tuple[TraceIndex, RowIndex]:
    """A trace's index and rows, read once per test process (nothing here changes them)."""
    index = load_trace(path, use_cache=False)
    return index, rows_for(index)


def timeline_of(path: str | Path = SAMPLE, width: int = 120, height: int = 22) -> Timeline:
    """A Timeline showing a trace at a size, as the app shows it, without an app (so without
    its utilisation worker: the tests that want those lines set them)."""
    timeline = Timeline()
    timeline.state.resize(width, height)
    index, rows = opened(str(path))
    timeline.show(index, rows, utilisation=False)
    return timeline


def press(timeline: Timeline, *keys: str) -> None:
    """Run the actions the timeline binds to `keys` (a key it does not bind fails)."""
    for key in keys:
        binding = next(b for b in Timeline.BINDINGS if key in b.key.split(","))
        _, name, args = parse(binding.action)
        getattr(timeline, f"action_{name}")(*args)
