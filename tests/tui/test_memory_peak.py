"""The timeline marks a memory series' peak on its counter line, where `proftui memory` puts it."""

from __future__ import annotations

import numpy as np
from memory_helpers import T, write_text_rank
from offscreen import press, timeline_of

from proftui.core.analysis.memory import memory_series
from proftui.core.query.rows import cell_boundaries
from proftui.tui.widgets.lines import COUNTER
from proftui.tui.widgets.render import PEAK
from proftui.tui.widgets.timeline import Timeline


def _counter_text(timeline: Timeline, series: int) -> str:
    """The body of a counter series' line, scrolled to the top of the timeline."""
    n = timeline.lines.find(kind=COUNTER, item=series)
    assert n is not None
    timeline.top_line = n
    timeline.refresh()
    return timeline.render_line(timeline.body_top).text[timeline.gutter_width:]


def test_peak_of_a_memory_series_is_marked_at_its_cell(tmp_path) -> None:
    timeline = timeline_of(write_text_rank(tmp_path))
    index = timeline.index
    by_name = {(m.component, m.measure): m.series for m in memory_series(index)}
    pta = by_name[("PTA", "allocated")]
    text = _counter_text(timeline, pta)
    edges = cell_boundaries(timeline.view_start, timeline.view_end, timeline.cells)
    peak_cell = int(np.searchsorted(edges, T + 200_500, side="right")) - 1  # 3.5 MB
    assert text.count(PEAK) == 1 and text.index(PEAK) == peak_cell
    # the series' other samples are drawn as before, the peak is not a sample of them
    assert text[peak_cell - 1] != PEAK and text.strip(" ").replace(PEAK, "")
    # a counter that is not an allocator's gets no mark
    modules = index.strings.find("HCCL Total Reserved(MB)")
    hccl = int(np.flatnonzero(index.arrays["counters.series_name"] == modules)[0])
    assert PEAK not in _counter_text(timeline, hccl)
    # zoomed to a window after the peak: no mark on screen
    timeline.set_window(T + 250_000, T + 400_000)
    assert PEAK not in _counter_text(timeline, pta)
    # back to everything: the mark again, where the window now puts it
    press(timeline, "0")
    edges = cell_boundaries(timeline.view_start, timeline.view_end, timeline.cells)
    assert _counter_text(timeline, pta).index(PEAK) == int(
        np.searchsorted(edges, T + 200_500, side="right")) - 1
