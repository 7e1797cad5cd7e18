"""The Timeline widget: a zoomable, pannable view of a trace's tracks, as chrome://tracing.

Keys follow chrome://tracing (w/s zoom around the cursor, a/d pan); arrows move between slices
(left/right in time, up/down across rows and tracks); the mouse clicks, wheels and drags.
Each frame asks the core for the owners and busy fractions of every visible cell at once
(:func:`proftui.core.query.rows.paint_cells`), then paints strips with
:mod:`proftui.tui.widgets.render`.

Above the first process, pinned lines show utilisation (device busy, compute, communication
overlapped by compute, host busy; per rank or device where there are several) per cell of
the window, from :func:`proftui.core.analysis.utilisation.utilisation`. They are not lines of
:class:`~proftui.tui.widgets.lines.Lines`: the cursor, selection and layout keys never meet them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rich.segment import Segment
from textual import events, work
from textual.binding import Binding
from textual.filter import ANSIToTruecolor, LineFilter
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from proftui.core.analysis.memory import memory_series, series_peak
from proftui.core.analysis.utilisation import SERIES, Utilisation, utilisation
from proftui.core.model.arrays import distinct
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.ops.rank_offsets import RankOffsets
from proftui.core.query.rows import RowIndex, cell_boundaries, paint_cells
from proftui.core.query.slice_info import nearest_slice, neighbour, row_of, slice_at
from proftui.themes import Palette, palette_for
from proftui.tui.format import fmt_duration
from proftui.tui.safe import safe
from proftui.tui.widgets.lines import (
    COUNTER,
    INSTANTS,
    PROCESS,
    SLICES,
    Lines,
    TrackChoices,
    build_lines,
)
from proftui.tui.widgets.render import (
    StyleCache,
    paint_counter,
    paint_instants,
    paint_slice_rows,
    paint_utilisation_rows,
    ruler_text,
)
from proftui.tui.widths import first_fitting

RULER_LINES = 2
ZOOM_STEP = 1.5
PAN_FRACTION = 0.2
UTIL_SHARE = 0.5  # at most this share of the body's height goes to the utilisation lines


@dataclass(frozen=True)
class UtilLine:
    """A utilisation line: one series (a key of SERIES) of one group, with its gutter label."""

    group: str
    series: str
    label: str


@dataclass(frozen=True)
class IterationMark:
    """An iteration drawn on the ruler (of `group`, its rank or device: "" for none)."""

    number: int
    start_ns: int
    end_ns: int
    group: str = ""


class Timeline(Widget, can_focus=True):
    """Tracks and slices of one trace over a time window."""

    DEFAULT_CSS = """
    Timeline { height: 1fr; }
    """
    BINDINGS = [
        Binding("w", "zoom_in", "Zoom in"),
        Binding("s", "zoom_out", "Zoom out"),
        Binding("a", "pan_left", "Pan left", show=False),
        Binding("d", "pan_right", "Pan right", show=False),
        Binding("left", "step_slice(-1)", "Previous slice", show=False),
        Binding("right", "step_slice(1)", "Next slice", show=False),
        Binding("up", "step_line(-1)", "Line up", show=False),
        Binding("down", "step_line(1)", "Line down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("comma", "move_cursor(-1)", "Cursor left", show=False),
        Binding("full_stop", "move_cursor(1)", "Cursor right", show=False),
        Binding("f", "fit", "Fit"),
        Binding("0", "reset", "Reset", show=False),
        Binding("enter", "select_here", "Select", show=False),
        Binding("escape", "clear_selection", "Clear", show=False),
        Binding("left_square_bracket", "mark_range(0)", "Range start", show=False),
        Binding("right_square_bracket", "mark_range(1)", "Range end", show=False),
        Binding("r", "range_of_selection", "Range", show=False),
        Binding("c", "toggle_collapse", "Collapse", show=False),
        Binding("p", "toggle_pin", "Pin", show=False),
        Binding("h", "hide_track", "Hide", show=False),
        Binding("H", "show_hidden", "Show hidden", show=False),
        Binding("greater_than_sign", "follow_flow(1)", "Flow out", show=False),
        Binding("less_than_sign", "follow_flow(-1)", "Flow in", show=False),
        Binding("u", "toggle_utilisation", "Utilisation", show=False),
        Binding("t", "toggle_track_order", "Track order", show=False),
    ]

    class SliceSelected(Message):
        """The selection changed (`slice` is -1 when it was cleared)."""

        def __init__(self, timeline: Timeline, slice_index: int) -> None:
            super().__init__()
            self.timeline = timeline
            self.slice_index = slice_index

        @property
        def control(self) -> Timeline:
            return self.timeline

    class RangeChanged(Message):
        """The selected time range changed (None bounds: no range)."""

        def __init__(self, start_ns: int | None, end_ns: int | None) -> None:
            super().__init__()
            self.start_ns = start_ns
            self.end_ns = end_ns

    class HiddenChanged(Message):
        """Tracks were hidden or shown again: `hidden` are hidden now; `label` names the one
        just hidden ("" when tracks were shown); `all_shown`: H showed every one."""

        def __init__(self, timeline: Timeline, hidden: int, label: str = "",
                     all_shown: bool = False) -> None:
            super().__init__()
            self.timeline = timeline
            self.hidden = hidden
            self.label = label
            self.all_shown = all_shown

        @property
        def control(self) -> Timeline:
            return self.timeline

    class WindowChanged(Message):
        """The visible time window changed."""

        def __init__(self, timeline: Timeline, start_ns: int, end_ns: int) -> None:
            super().__init__()
            self.timeline = timeline
            self.start_ns = start_ns
            self.end_ns = end_ns

        @property
        def control(self) -> Timeline:
            return self.timeline

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self.index: TraceIndex | None = None
        self.rows: RowIndex | None = None
        self.lines = Lines.empty()
        self.layout_state = TrackChoices.empty()
        self.view_start = 0
        self.view_end = 1
        self.cursor_ns = 0
        self.top_line = 0
        self.focus_line = 0
        self.selected = -1
        self.range: tuple[int, int] | None = None  # a selected time range (area selection)
        self.origin_ns: int | None = None  # the ruler's zero; None: the trace's start
        self._range_anchor: int | None = None  # where a shift-drag started
        self.matches = np.zeros(0, np.int64)
        self._marks: np.ndarray | None = None
        self.iterations: list[IterationMark] = []
        self.palette: Palette = palette_for("proftui-dark")
        self._styles = StyleCache()
        # Colour index by name (a string id), -1 until first needed; sized on first use.
        self._colour_of_name = np.zeros(0, np.int16)
        self._cells_key: tuple | None = None
        self._cells: dict[int, tuple] = {}
        # What a frame paints, kept for the next: the visible lines' bodies and the
        # utilisation lines (with what they were painted from), the gutters by line.
        self._bodies: tuple = (None, None, None, None, {})
        self._util_strips: tuple = (None, None, None, None, [])
        self._gutters: tuple = (None, None, 0, {})
        self._ruler_text: tuple = (None, ("", ""))  # (its arguments, labels and ticks)
        self._counter_range: dict[int, tuple[float, float]] = {}
        self._peaks: dict[int, int] | None = None  # memory series -> time of its peak
        self._drag_x: int | None = None
        self._geometry = self._measure(80, 24)
        self.tables: tuple[Table, ...] = ()
        self.show_utilisation = True
        # Lines with something to show over the whole capture; empty until the worker has
        # built the index's coverage (and for a profile without device work).
        self.util_lines: list[UtilLine] = []
        self._util_key: tuple | None = None
        self._util: dict[tuple[str, str], np.ndarray] = {}
        # Ranks aligned at an iteration: each track drawn `_track_shift[track]` ns earlier
        # (see align); None: every track on its own clock.
        self.alignment: RankOffsets | None = None
        self._track_shift: np.ndarray | None = None

    # -- data -----------------------------------------------------------------------------------

    def show(self, index: TraceIndex, rows: RowIndex,
             iterations: list[IterationMark] | None = None,
             tables: Sequence[Table] = (), utilisation: bool = True) -> None:
        """Show a trace: the whole of it, first line focused. `tables` (the profile's summary
        tables) help tell device work apart for the utilisation lines; without `utilisation`
        those wait for :meth:`show_overview`."""
        self.index, self.rows = index, rows
        self.iterations = iterations or []
        self.tables = tuple(tables)
        self._colour_of_name = np.zeros(0, np.int16)
        self._counter_range.clear()
        self._peaks = None
        self.util_lines = []
        self._util_key = None
        self.alignment, self._track_shift = None, None
        self._rebuild_lines()
        self.focus_line = self.lines.find(kind=SLICES) or 0
        self.action_reset()
        if utilisation:
            self.prepare_utilisation(index, self.tables)

    def show_overview(self, iterations: list[IterationMark], tables: Sequence[Table]) -> None:
        """The iterations and summary tables of the trace shown, found after its first frame;
        the utilisation lines follow."""
        assert self.index is not None
        self.iterations = iterations
        self.tables = tuple(tables)
        self.refresh()
        self.prepare_utilisation(self.index, self.tables)

    # -- utilisation ------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="utilisation")
    def prepare_utilisation(self, index: TraceIndex, tables: tuple[Table, ...]) -> None:
        """Build the index's coverage off the UI thread (up to a second on a huge trace) and
        find which series hold anything over the whole capture; later windows then cost a
        binary search per cell."""
        try:
            whole = utilisation(index, index.start_ns, max(index.end_ns, index.start_ns + 1), 1,
                                tables)
        except Exception:  # noqa: BLE001 - a derived view must not take the timeline down
            whole = []
        self.app.call_from_thread(self._utilisation_ready, index, whole)

    def _utilisation_ready(self, index: TraceIndex, whole: list[Utilisation]) -> None:
        if index is not self.index:  # another trace was shown meanwhile
            return
        self.util_lines = util_lines_of(whole)
        self._util_key = None
        self._cells_key = None
        self._keep_focus_visible()

    def action_toggle_utilisation(self) -> None:
        self.show_utilisation = not self.show_utilisation
        self._cells_key = None
        self._keep_focus_visible()

    @property
    def util_rows(self) -> int:
        """How many utilisation lines are on screen (pinned under the ruler)."""
        if not self.show_utilisation or self.index is None:
            return 0
        return min(len(self.util_lines), int(self._geometry[2] * UTIL_SHARE))

    @property
    def body_top(self) -> int:
        """The screen row of the first line of :attr:`lines`."""
        return RULER_LINES + self.util_rows

    def _utilisation_cells(self) -> None:
        """Each shown series per cell of the window, computed once per window."""
        assert self.index is not None
        key = (self.view_start, self.view_end, self.cells, id(self.index))
        if key == self._util_key:
            return
        self._util_key = key
        self._util = {}
        by_shift: dict[int, set[str]] = {}  # each rank's lines over its own window
        for line in self.util_lines:
            by_shift.setdefault(self.shift_of_group(line.group), set()).add(line.group)
        for shift, groups in by_shift.items():
            found = utilisation(self.index, self.view_start + shift, self.view_end + shift,
                                self.cells, self.tables, groups)
            self._util.update({(u.group, name): fractions for u in found
                               for name, fractions in u.series.items()})

    def set_palette(self, palette: Palette) -> None:
        self.palette = palette
        self._styles = StyleCache()
        self._colour_of_name = np.zeros(0, np.int16)
        self.refresh()

    def set_matches(self, matches: np.ndarray) -> None:
        self.matches = matches
        self._update_marks()

    def _update_marks(self) -> None:
        """Slices drawn underlined: search matches and the selection's flow partners (a mask
        over all slices, so that a frame looks its cells up instead of searching a list)."""
        partners = np.array(self._flow_partners(self.selected), np.int64)
        if len(self.matches) or len(partners):
            mask = np.zeros(self.index.n_slices if self.index is not None else 0, bool)
            mask[self.matches] = True
            mask[partners] = True
            self._marks = mask
        else:
            self._marks = None
        self.refresh()

    def _flow_partners(self, i: int, direction: int = 0) -> list[int]:
        """Slices that flows of slice `i` lead to (direction 1), come from (-1), or both (0)."""
        if self.index is None or i < 0:
            return []
        a = self.index.arrays
        found = []
        if direction >= 0:
            found.append(a["flows.dst_slice"][a["flows.src_slice"] == i])
        if direction <= 0:
            found.append(a["flows.src_slice"][a["flows.dst_slice"] == i])
        return [int(p) for p in np.concatenate(found) if p >= 0]

    def _rebuild_lines(self) -> None:
        assert self.index is not None and self.rows is not None
        self.lines = build_lines(self.index, self.rows, self.layout_state)
        self.focus_line = min(self.focus_line, max(len(self.lines) - 1, 0))
        self._cells_key = None
        self.refresh()

    # -- geometry -------------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self._geometry = self._measure(event.size.width, event.size.height)
        self.refresh()

    @staticmethod
    def _measure(width: int, height: int) -> tuple[int, int, int]:
        gutter = max(10, min(30, width // 4))
        return gutter, max(width - gutter, 1), max(height - RULER_LINES, 1)

    # Kept from the last resize: reading `size` costs a walk to the screen, and a frame asks
    # for these a few hundred times.
    @property
    def gutter_width(self) -> int:
        return self._geometry[0]

    @property
    def cells(self) -> int:
        return self._geometry[1]

    @property
    def body_height(self) -> int:
        return max(self._geometry[2] - self.util_rows, 1)

    @property
    def ns_per_cell(self) -> float:
        return max(self.view_end - self.view_start, 1) / self.cells

    def time_at(self, cell: int) -> int:
        return self.view_start + int((cell + 0.5) * self.ns_per_cell)

    def cell_of(self, t_ns: int) -> int:
        return int((t_ns - self.view_start) // self.ns_per_cell)

    def set_window(self, start_ns: int, end_ns: int) -> None:
        """Show [start_ns, end_ns), kept to at least one ns per cell and on the trace."""
        if self.index is None:
            return
        lo, hi = self._span()
        span = hi - lo
        width = max(int(end_ns) - int(start_ns), self.cells)
        width = min(width, 4 * span + self.cells)
        # No further than a tenth of the window past either end of the trace; zoomed out
        # beyond the trace, all of it stays in view.
        slack = width // 10
        start = int(start_ns)
        if width >= span:
            start = min(max(start, hi - width), lo)
        else:
            start = min(max(start, lo - slack), hi + slack - width)
        if (start, start + width) != (self.view_start, self.view_end):
            self.view_start, self.view_end = start, start + width
            self.post_message(self.WindowChanged(self, self.view_start, self.view_end))
        self.refresh()

    # -- actions --------------------------------------------------------------------------------

    def action_zoom_in(self) -> None:
        self._zoom(1 / ZOOM_STEP, self._zoom_anchor())

    def action_zoom_out(self) -> None:
        self._zoom(ZOOM_STEP, self._zoom_anchor())

    def _zoom_anchor(self) -> int:
        inside = self.view_start <= self.cursor_ns <= self.view_end
        return self.cursor_ns if inside else (self.view_start + self.view_end) // 2

    def _zoom(self, factor: float, anchor_ns: int) -> None:
        # Offsets in float, times in int: epoch nanoseconds do not fit a double exactly.
        left = round((anchor_ns - self.view_start) * factor)
        right = round((self.view_end - anchor_ns) * factor)
        self.set_window(anchor_ns - left, anchor_ns + right)

    def action_pan_left(self) -> None:
        self._pan(-PAN_FRACTION)

    def action_pan_right(self) -> None:
        self._pan(PAN_FRACTION)

    def _pan(self, fraction: float) -> None:
        shift = int((self.view_end - self.view_start) * fraction)
        self.set_window(self.view_start + shift, self.view_end + shift)

    def action_reset(self) -> None:
        if self.index is None:
            return
        lo, hi = self._span()
        margin = (hi - lo) // 50
        self.set_window(lo - margin, hi + margin)
        self.cursor_ns = lo + (hi - lo) // 2

    def action_fit(self) -> None:
        """Fit the selected slice, else the selected range, else everything."""
        if self.index is None:
            return
        if self.selected >= 0:
            start = self.shown_start(self.selected)
            dur = max(int(self.index.arrays["slices.dur"][self.selected]), 1)
            self.set_window(start - dur // 10, start + dur + dur // 10)
        elif self.range is not None:
            start, end = self.range
            margin = max((end - start) // 20, 1)
            self.set_window(start - margin, end + margin)
        else:
            self.action_reset()

    # -- range selection ------------------------------------------------------------------------

    def set_range(self, start_ns: int | None, end_ns: int | None) -> None:
        """Select [start_ns, end_ns) (bounds in either order), or nothing with None."""
        if start_ns is None or end_ns is None:
            new = None
        else:
            lo, hi = sorted((int(start_ns), int(end_ns)))
            new = (lo, max(hi, lo + 1))
        if new != self.range:
            self.range = new
            self.post_message(self.RangeChanged(*(new or (None, None))))
        self.refresh()

    def action_mark_range(self, end: int) -> None:
        """Set the range's start (0) or end (1) at the cursor; the other bound stays, or
        starts at the cursor too."""
        here = self.cursor_ns
        if self.range is None:
            self.set_range(here, here + max(round(self.ns_per_cell), 1))
        elif end:
            self.set_range(self.range[0], here)
        else:
            self.set_range(here, self.range[1])

    def action_range_of_selection(self) -> None:
        """The range of the selected slice, else of the iteration under the cursor."""
        if self.index is None:
            return
        if self.selected >= 0:
            start = self.shown_start(self.selected)
            self.set_range(start, start + int(self.index.arrays["slices.dur"][self.selected]))
            return
        for it in self.iterations:
            shift = self.shift_of_group(it.group)
            if it.start_ns - shift <= self.cursor_ns < it.end_ns - shift:
                self.set_range(it.start_ns - shift, it.end_ns - shift)
                return

    def action_move_cursor(self, cells: int) -> None:
        self.cursor_ns += round(cells * self.ns_per_cell)
        self._keep_cursor_visible()
        self.refresh()

    def action_step_line(self, step: int) -> None:
        if not self.lines:
            return
        self.focus_line = min(max(self.focus_line + step, 0), len(self.lines) - 1)
        self._keep_focus_visible()
        line = self.lines[self.focus_line]
        if line.kind == SLICES and self.selected >= 0:
            self._select(self._slice_near_cursor(line.item), center=False)
        self.refresh()

    def action_page(self, step: int) -> None:
        self.action_step_line(step * max(self.body_height - 1, 1))

    def action_step_slice(self, step: int) -> None:
        if self.index is None or self.rows is None or not self.lines:
            return
        if self.selected >= 0:
            target = neighbour(self.rows, self.index, self.selected, step)
            if target >= 0:
                self._select(target)
            return
        line = self.lines[self.focus_line]
        if line.kind == SLICES:
            self._select(self._slice_near_cursor(line.item))

    def action_select_here(self) -> None:
        if not self.lines:
            return
        line = self.lines[self.focus_line]
        if line.kind == SLICES:
            self._select(self._slice_near_cursor(line.item), center=False)
        elif line.kind == PROCESS:
            self.action_toggle_collapse()

    def action_clear_selection(self) -> None:
        """Esc: clear the selected slice, or with none selected, the range."""
        if self.selected < 0 and self.range is not None:
            self.set_range(None, None)
        else:
            self._select(-1)

    def action_toggle_collapse(self) -> None:
        if not self.lines:
            return
        process = self.lines[self.focus_line].process
        if process < 0:
            return
        collapsed = self.layout_state.collapsed
        collapsed.symmetric_difference_update({process})
        self._rebuild_lines()
        found = self.lines.find(kind=PROCESS, process=process)
        self.focus_line = self.focus_line if found is None else found
        self._keep_focus_visible()

    def action_toggle_pin(self) -> None:
        track = self.lines[self.focus_line].track if self.lines else -1
        if track < 0:
            return
        pinned = self.layout_state.pinned
        if track in pinned:
            pinned.remove(track)
        else:
            pinned.insert(0, track)
        self._rebuild_lines()
        self.show_track(track)  # the cursor follows the track to its new place

    def action_toggle_track_order(self) -> None:
        """Device work first in each rank (the default), or the trace's own order; the
        focused line's track (or process) stays focused."""
        line = self.lines[self.focus_line] if self.lines else None
        self.layout_state.device_first = not self.layout_state.device_first
        self._rebuild_lines()
        if line is not None:
            found = (self.lines.find(track=line.track) if line.track >= 0 else
                     self.lines.find(kind=PROCESS, process=line.process))
            self.focus_line = self.focus_line if found is None else found
        self._keep_focus_visible()

    def _reveal(self, track: int) -> None:
        """Unhide a track and expand its process."""
        assert self.index is not None
        hidden = self.layout_state.hidden
        if track in hidden:
            hidden.discard(track)
            self.post_message(self.HiddenChanged(self, len(hidden)))
        self.layout_state.collapsed.discard(int(self.index.arrays["tracks.process"][track]))
        self._rebuild_lines()

    def show_process(self, process: int, at_top: bool = False) -> None:
        """Focus a process's header line (expanding it); `at_top` scrolls it to the top of
        the tracks (as far as the tracks below it allow)."""
        if self.index is None:
            return
        if process in self.layout_state.collapsed:
            self.layout_state.collapsed.discard(process)
            self._rebuild_lines()
        line = self.lines.find(kind=PROCESS, process=process)
        if line is not None:
            self.focus_line = line
            if at_top:
                self.top_line = max(min(line, len(self.lines) - self.body_height), 0)
            self._keep_focus_visible()

    def first_process_of(self, group: str) -> int | None:
        """The first process (in display order) of a group (rank or device); None for the
        unnamed group of a one-group profile, or a group without processes."""
        if self.index is None or not group:
            return None
        group_id = self.index.strings.find(group)
        if group_id < 0:
            return None
        found = np.flatnonzero(self.index.arrays["processes.group"] == group_id)
        shown = [(line, p) for p in found.tolist()
                 if (line := self.lines.find(kind=PROCESS, process=p)) is not None]
        return min(shown)[1] if shown else (int(found[0]) if len(found) else None)

    def show_track(self, track: int) -> None:
        """Focus a track's first line, unhiding it and expanding its process if need be."""
        if self.index is None:
            return
        line = self.lines.find(track=track)
        if line is None:
            self._reveal(track)
            line = self.lines.find(track=track)
        if line is not None:
            self.focus_line = line
            self._keep_focus_visible()
            self.refresh()

    def action_hide_track(self) -> None:
        track = self.lines[self.focus_line].track if self.lines else -1
        if track < 0 or self.index is None:
            return
        hidden = self.layout_state.hidden
        hidden.add(track)
        process = self.index.arrays["tracks.process"]
        label = self.index.track_label(track)
        if process[track] >= 0:  # which process (and rank): thread names repeat
            label = f"{label} of {self.index.process_label(int(process[track]))}"
        if process[track] >= 0 and all(
                t in hidden for t in np.flatnonzero(process == process[track]).tolist()):
            label += " (its process's last track: the process is hidden too)"
        self._rebuild_lines()
        self.post_message(self.HiddenChanged(self, len(hidden), label))

    def action_show_hidden(self) -> None:
        if self.layout_state.hidden:
            self.layout_state.hidden.clear()
            self.post_message(self.HiddenChanged(self, 0, all_shown=True))
        self._rebuild_lines()

    def hidden_in(self, process: int) -> int:
        """How many tracks of `process` are hidden."""
        if self.index is None or not self.layout_state.hidden:
            return 0
        owner = self.index.arrays["tracks.process"]
        return sum(1 for t in self.layout_state.hidden if owner[t] == process)

    def action_follow_flow(self, direction: int) -> None:
        """Jump to the first flow partner of the selected slice (out with 1, in with -1)."""
        partners = self._flow_partners(self.selected, direction)
        if partners:
            self.select(partners[0])

    # -- selection ------------------------------------------------------------------------------

    def select(self, i: int) -> None:
        """Select slice `i`, bring its track into view and show it whole where it fits."""
        if self.index is None or self.rows is None:
            return
        row = row_of(self.rows, self.index, i)
        line = self._line_of_row(row)
        if line is None:  # hidden or collapsed: show it
            self._reveal(int(self.index.arrays["slices.track"][i]))
            line = self._line_of_row(row)
        if line is not None:
            self.focus_line = line
            self._keep_focus_visible()
        start = self.shown_start(i)
        dur = int(self.index.arrays["slices.dur"][i])
        width = self.view_end - self.view_start
        if dur > width * 0.9:
            self.set_window(start - dur // 10, start + dur + dur // 10)
        elif start < self.view_start or start + dur > self.view_end:
            self.set_window(start + dur // 2 - width // 2, start + dur // 2 + width // 2)
        self._select(i, center=False)

    def _select(self, i: int, center: bool = True) -> None:
        if self.index is not None and i >= 0:
            start = self.shown_start(i)
            self.cursor_ns = start + int(self.index.arrays["slices.dur"][i]) // 2
            if center:
                self._keep_cursor_visible()
        if i != self.selected:
            self.selected = i
            self._update_marks()
            self.post_message(self.SliceSelected(self, i))
        self.refresh()

    def _slice_near_cursor(self, row: int) -> int:
        assert self.index is not None and self.rows is not None
        at = self.cursor_ns + self._shift_of_track(int(self.rows.row_track[row]))
        here = slice_at(self.index, self.rows, row, at)
        return here if here >= 0 else nearest_slice(self.index, self.rows, row, at)

    def _line_of_row(self, row: int) -> int | None:
        return self.lines.find(kind=SLICES, item=row)

    def _keep_cursor_visible(self) -> None:
        width = self.view_end - self.view_start
        if not self.view_start <= self.cursor_ns < self.view_end:
            self.set_window(self.cursor_ns - width // 2, self.cursor_ns + width // 2)

    def _keep_focus_visible(self) -> None:
        if self.focus_line < self.top_line:
            self.top_line = self.focus_line
        elif self.focus_line >= self.top_line + self.body_height:
            self.top_line = self.focus_line - self.body_height + 1
        self.refresh()

    # -- mouse ----------------------------------------------------------------------------------

    def _line_at(self, y: int) -> int | None:
        top = self.body_top
        n = self.top_line + y - top
        return n if y >= top and 0 <= n < len(self.lines) else None

    def on_click(self, event: events.Click) -> None:
        line = self._line_at(event.y)
        if line is None:
            return
        self.focus_line = line
        if event.x < self.gutter_width:
            if self.lines[line].kind == PROCESS:
                self.action_toggle_collapse()
            self.refresh()
            return
        cell = event.x - self.gutter_width
        self.cursor_ns = self.time_at(cell)
        owner = self._owner_at(line, cell)
        self._select(owner, center=False)

    def _owner_at(self, line: int, cell: int) -> int:
        cached = self._cells.get(line)
        if cached is None or cached[0] != SLICES or not 0 <= cell < len(cached[1]):
            return -1
        return int(cached[1][cell])

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if event.shift or event.ctrl:  # with a modifier the wheel scrolls the lines
            self._scroll_lines(-3)
        else:
            self._wheel(event.x, 1 / ZOOM_STEP)
        event.stop()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        if event.shift or event.ctrl:
            self._scroll_lines(3)
        else:
            self._wheel(event.x, ZOOM_STEP)
        event.stop()

    def _scroll_lines(self, step: int) -> None:
        self.top_line = min(max(self.top_line + step, 0), max(len(self.lines) - 1, 0))
        self.refresh()

    def _wheel(self, x: int, factor: float) -> None:
        if x >= self.gutter_width:
            self._zoom(factor, self.time_at(x - self.gutter_width))
        else:
            self._zoom(factor, self._zoom_anchor())

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A drag pans; with shift it selects a range instead."""
        if event.x >= self.gutter_width:
            self._drag_x = event.x
            if event.shift:
                self._range_anchor = self.time_at(event.x - self.gutter_width)
            self.capture_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._drag_x is None or not event.button:
            return
        if self._range_anchor is not None:
            self.set_range(self._range_anchor, self.time_at(max(event.x - self.gutter_width, 0)))
            return
        shift = int((self._drag_x - event.x) * self.ns_per_cell)
        self._drag_x = event.x
        if shift:
            self.set_window(self.view_start + shift, self.view_end + shift)

    def on_mouse_up(self, event: events.MouseUp) -> None:
        self._drag_x = None
        self._range_anchor = None
        self.release_mouse()

    # -- ranks aligned at an iteration ------------------------------------------------------------

    def align(self, offsets: RankOffsets | None) -> None:
        """Draw each rank's tracks moved left by its offset (None: on their own clocks). The
        screen's clock is then the reference rank's; the slices' own times do not change."""
        assert self.index is not None
        self.alignment = offsets
        self._track_shift = None if offsets is None else offsets.track_offsets(self.index)
        self._cells_key = self._util_key = None
        self.refresh()

    def _shift_of_track(self, track: int) -> int:
        if self._track_shift is None or track < 0:
            return 0
        return int(self._track_shift[track])

    def shift_of_group(self, group: str) -> int:
        """How far a rank's (or device's) tracks are drawn to the left, in ns."""
        return 0 if self.alignment is None else self.alignment.offset_of(group)

    def shown_start(self, i: int) -> int:
        """Where slice `i` starts on screen: its start, less its rank's shift."""
        assert self.index is not None
        track = int(self.index.arrays["slices.track"][i])
        return int(self.index.arrays["slices.start"][i]) - self._shift_of_track(track)

    def _span(self) -> tuple[int, int]:
        """The first and last instant of the trace on screen (ranks moved by their shifts)."""
        assert self.index is not None
        lo, hi = self.index.start_ns, max(self.index.end_ns, self.index.start_ns + 1)
        if self._track_shift is not None and len(self._track_shift):
            lo -= max(int(self._track_shift.max()), 0)
            hi -= min(int(self._track_shift.min()), 0)
        return lo, hi

    # -- painting -------------------------------------------------------------------------------

    def get_line_filters(self) -> Sequence[LineFilter]:
        """The app's filters but the ANSI-to-truecolor one: every colour painted here is a
        palette's hex colour (a test holds the themes to it), so that the filter would copy
        each line's segments to change none of them."""
        return [f for f in super().get_line_filters() if not isinstance(f, ANSIToTruecolor)]

    def render_line(self, y: int) -> Strip:
        width = self.gutter_width + self.cells
        ground = self._styles(self.palette.text, self.palette.background)
        if self.index is None or self.rows is None:
            return Strip([Segment(" " * width, ground)], width)
        if y < RULER_LINES:
            return self._ruler_line(y)
        if y < self.body_top:
            return self._utilisation_strips()[y - RULER_LINES]
        n = self._line_at(y)
        if n is None:
            return Strip([Segment(" " * width, ground)], width)
        body = self._painted_bodies().get(n)
        if body is None:  # not a line of the last resize's height
            body = list(self._body(n))
        return Strip([self._gutter(n), *body], width)

    def _compute_cells(self) -> None:
        """Owners and busy fractions (or counter values, instant counts) of the visible lines,
        computed once per window and scroll position."""
        assert self.index is not None and self.rows is not None
        key = (self.view_start, self.view_end, self.cells, self.top_line, self.body_height,
               id(self.lines))
        if key == self._cells_key:
            return
        self._cells_key = key
        self._cells = {}
        visible = range(self.top_line, min(self.top_line + self.body_height, len(self.lines)))
        slice_lines = [n for n in visible if self.lines[n].kind == SLICES]
        shifts = {n: self._shift_of_track(int(self.lines.track[n])) for n in visible}
        for shift in sorted({shifts[n] for n in slice_lines}):  # one window per rank's shift
            mine = [n for n in slice_lines if shifts[n] == shift]
            found = paint_cells(self.index, self.rows,
                                np.array([self.lines[n].item for n in mine]),
                                self.view_start + shift, self.view_end + shift, self.cells)
            for k, n in enumerate(mine):
                self._cells[n] = (SLICES, found.owner[k], found.busy[k])
        screen_edges = cell_boundaries(self.view_start, self.view_end, self.cells)
        for n in visible:
            line = self.lines[n]
            edges = screen_edges + shifts[n]
            if line.kind == COUNTER:
                self._cells[n] = (COUNTER, self._counter_cells(line.item, edges),
                                  self._peak_cell(line.item, edges))
            elif line.kind == INSTANTS:
                self._cells[n] = (INSTANTS, self._instant_cells(line.item, edges))

    def _counter_cells(self, series: int, edges: np.ndarray) -> np.ndarray:
        """Per cell the highest sample in it, else the value carried from the sample before."""
        a = self.index.arrays  # type: ignore[union-attr]
        first = a["counters.series_first"]
        lo = int(first[series])
        hi = int(first[series + 1]) if series + 1 < len(first) else len(a["counters.sample_ts"])
        ts = a["counters.sample_ts"][lo:hi]
        values = a["counters.sample_value"][lo:hi]
        out = np.full(len(edges) - 1, np.nan)
        if len(ts) == 0:
            return out
        k = np.searchsorted(ts, edges, side="left")
        carried = k[:-1] - 1
        has_prev = carried >= 0
        out[has_prev] = values[carried[has_prev]]
        inside = k[1:] > k[:-1]
        if inside.any():
            # Cells holding samples are contiguous runs of samples, one after the other: a
            # reduceat over their first samples (up to the window's end) gives each its max.
            out[inside] = np.maximum.reduceat(values[: k[-1]], k[:-1][inside])
        if series not in self._counter_range:
            finite = values[np.isfinite(values)]
            self._counter_range[series] = ((float(finite.min()), float(finite.max()))
                                           if len(finite) else (0.0, 1.0))
        return out

    def _peak_cell(self, series: int, edges: np.ndarray) -> int:
        """The cell holding a memory series' peak (core.analysis.memory), -1 if none is on
        screen or the series is not an allocator's."""
        if self._peaks is None:
            assert self.index is not None
            self._peaks = {m.series: found[0] for m in memory_series(self.index)
                           if (found := series_peak(self.index, m.series)) is not None}
        at = self._peaks.get(series)
        if at is None or not edges[0] <= at < edges[-1]:
            return -1
        return int(np.searchsorted(edges, at, side="right")) - 1

    def _instant_cells(self, track: int, edges: np.ndarray) -> np.ndarray:
        a = self.index.arrays  # type: ignore[union-attr]
        tracks = a["instants.track"]
        lo, hi = np.searchsorted(tracks, [track, track + 1])
        ts = a["instants.ts"][lo:hi]
        k = np.searchsorted(ts, edges, side="left")
        return np.diff(k)

    def _colours(self, owner: np.ndarray) -> np.ndarray:
        """Colour index per cell owner: its reserved `cname` if any, else its name's colour."""
        assert self.index is not None
        a = self.index.arrays
        safe_owner = np.maximum(owner, 0)
        names = a["slices.name"][safe_owner]
        table = self._colour_of_name
        if len(table) != len(self.index.strings):
            table = self._colour_of_name = np.full(len(self.index.strings), -1, np.int16)
        colours = table[names].astype(np.int64)
        new = colours < 0
        if new.any():  # names met for the first time
            for k in distinct(names[new]).tolist():
                table[k] = self.palette.colour_index(self.index.strings[k])
            colours = table[names].astype(np.int64)
        cname_slices = a["slice_cname.slice"]
        if len(cname_slices):
            pos = np.searchsorted(cname_slices, safe_owner)
            hit = (pos < len(cname_slices)) & (cname_slices[np.minimum(
                pos, len(cname_slices) - 1)] == safe_owner) & (owner >= 0)
            if hit.any():
                cnames = a["slice_cname.cname"][pos[hit]]
                reserved = np.array([self._reserved(int(c)) for c in cnames.tolist()], np.int64)
                colours[hit] = np.where(reserved >= 0, reserved, colours[hit])
        return colours

    def _reserved(self, cname_id: int) -> int:
        index = self.palette.reserved_index(self.index.strings[cname_id])  # type: ignore[union-attr]
        return -1 if index is None else index

    def _gutter(self, n: int) -> Segment:
        """Line `n`'s label. Zooming and panning leave it alone: it is painted once per
        line, focus state, set of lines, palette and width."""
        lines_of, styles_of, width_of, painted = self._gutters
        if lines_of is not self.lines or styles_of is not self._styles \
                or width_of != self.gutter_width:
            painted = {}
            self._gutters = (self.lines, self._styles, self.gutter_width, painted)
        key = (n, n == self.focus_line, self.has_focus)
        segment = painted.get(key)
        if segment is None:
            segment = painted[key] = self._paint_gutter(n)
        return segment

    def _paint_gutter(self, n: int) -> Segment:
        line = self.lines[n]
        width = self.gutter_width
        focused = n == self.focus_line and self.has_focus
        bg = self.palette.focus if n == self.focus_line else self.palette.gutter
        if line.kind == PROCESS:
            mark = "▶" if line.process in self.layout_state.collapsed else "▼"
            hidden = self.hidden_in(line.process)
            # the count is kept whole; the label gives way (its pid first) where it is narrow
            note = f" +{hidden} hidden" if hidden else ""
            forms = [safe(form) for form in self.lines.label_forms(n)]
            text = f"{mark} {first_fitting(forms, max(width - 3 - len(note), 1))}{note}"
            style = self._styles(self.palette.text, bg, bold=True, underline=focused)
        else:
            pinned = n < self.lines.n_pinned and line.label
            forms = self.lines.label_forms(n) if pinned and self.lines.titled[n] else [line.label]
            text = f"⚲ {first_fitting([safe(f) for f in forms], width - 3)}" if pinned \
                else f"  {safe(line.label)}"
            colour = self.palette.text if line.kind == SLICES else self.palette.dim_text
            style = self._styles(colour, bg, underline=focused)
        text = text[: width - 1].ljust(width - 1) + " "
        return Segment(text, style)

    def _painted_bodies(self) -> dict[int, list[Segment]]:
        """The segments right of the gutter of each visible line, painted together (a numpy
        call serves every slice line at once) and again only when the cells, the cursor's
        cell, the selection, the marks, the range or the palette changed."""
        self._compute_cells()
        look = (self.cell_of(self.cursor_ns), self.selected, self._range_cells())
        cells_of, marks_of, styles_of, look_of, bodies = self._bodies
        if cells_of is self._cells and marks_of is self._marks and styles_of is self._styles \
                and look_of == look:
            return bodies
        bodies = {}
        slice_lines = [n for n, data in self._cells.items() if data[0] == SLICES]
        if slice_lines:
            owner = np.stack([self._cells[n][1] for n in slice_lines])
            busy = np.stack([self._cells[n][2] for n in slice_lines])
            marked = (None if self._marks is None
                      else self._marks[np.maximum(owner, 0)] & (owner >= 0))
            painted = paint_slice_rows(owner, busy, self._colours(owner),
                                       self.index.slice_name,  # type: ignore[union-attr]
                                       self.palette, self._styles, selected=self.selected,
                                       marked=marked, cursor_cell=look[0],
                                       range_cells=look[2])
            bodies.update(zip(slice_lines, painted))
        for n in range(self.top_line, min(self.top_line + self.body_height, len(self.lines))):
            if n not in bodies:
                bodies[n] = list(self._body(n))
        self._bodies = (self._cells, self._marks, self._styles, look, bodies)
        return bodies

    def _body(self, n: int) -> Strip:
        """A line other than a slice line, right of the gutter."""
        line = self.lines[n]
        cells = self.cells
        if line.kind == PROCESS:
            return Strip([Segment("─" * cells, self._styles(self.palette.dim_text,
                                                          self.palette.background))], cells)
        data = self._cells.get(n)
        if data is None:
            return Strip([Segment(" " * cells, self._styles(None, self.palette.background))],
                         cells)
        if data[0] == COUNTER:
            low, high = self._counter_range.get(line.item, (0.0, 1.0))
            return paint_counter(data[1], low, high, self.palette, self._styles,
                                 peak_cell=data[2])
        return paint_instants(data[1], self.palette, self._styles)

    def _utilisation_strips(self) -> list[Strip]:
        """The utilisation lines, painted together and again only when their cells, the
        cursor's cell, the range or the palette changed."""
        self._utilisation_cells()
        look = (self.cell_of(self.cursor_ns), self._range_cells(), self.gutter_width)
        util_of, lines_of, styles_of, look_of, strips = self._util_strips
        if util_of is self._util and lines_of is self.util_lines \
                and styles_of is self._styles and look_of == look:
            return strips
        width = self.gutter_width
        gutter = self._styles(self.palette.dim_text, self.palette.gutter)
        blank = np.zeros(self.cells)  # cannot happen for a group of the same index
        fractions = np.array([self._util.get((line.group, line.series), blank)
                              for line in self.util_lines]).reshape(-1, self.cells)
        colours = [self.palette.colour_at(list(SERIES).index(line.series))
                   for line in self.util_lines]
        bodies = paint_utilisation_rows(fractions, colours, self.palette, self._styles,
                                        cursor_cell=look[0], range_cells=look[1])
        strips = [Strip([Segment(f"  {safe(line.label)}"[: width - 1].ljust(width - 1) + " ",
                                 gutter), *body], width + self.cells)
                  for line, body in zip(self.util_lines, bodies)]
        self._util_strips = (self._util, self.util_lines, self._styles, look, strips)
        return strips

    def _range_cells(self) -> tuple[int, int] | None:
        """The cells [first, last) the selected range covers on screen, if any."""
        if self.range is None:
            return None
        first = max(self.cell_of(self.range[0]), 0)
        last = min(self.cell_of(self.range[1] - 1) + 1, self.cells)
        return (first, last) if first < last else None

    def _ruler_line(self, y: int) -> Strip:
        """Time labels (y 0) or ticks with the iterations' starts (y 1); the cursor's column
        is highlighted and its time, or the window's length, shown in the gutter."""
        assert self.index is not None
        cells = self.cells
        origin = self.index.start_ns if self.origin_ns is None else self.origin_ns
        span = self._range_cells()
        label, at = "", 0
        if span is not None and self.range is not None:
            label = f"[{fmt_duration(self.range[1] - self.range[0])}]"
            at = max(min(span[0], cells - len(label)), 0)
        # Both lines come from one ruler_text: the second line of a frame reuses the first's.
        args = (self.view_start, self.view_end, cells, origin,
                (at, at + len(label)) if label else None)
        if self._ruler_text[0] != args:
            self._ruler_text = (args, ruler_text(*args))
        labels, ticks = self._ruler_text[1]
        if y == 0:
            head, chars = f" @ {fmt_duration(self.cursor_ns - origin)}", list(labels)
        else:
            head, chars = f" ↔ {fmt_duration(self.view_end - self.view_start)}", list(ticks)
        chars += [" "] * (cells - len(chars))
        plain = self._styles(self.palette.dim_text, self.palette.background)
        styles = [plain] * cells
        if y == 1:
            mark = self._styles(self.palette.iteration, self.palette.background)
            for it in self.iterations:
                cell = self.cell_of(it.start_ns - self.shift_of_group(it.group))
                for k, ch in enumerate(f"┃#{it.number}"):
                    if 0 <= cell + k < cells:
                        chars[cell + k], styles[cell + k] = ch, mark
        if span is not None:
            band = self._styles(self.palette.text, self.palette.range)
            styles[span[0]: span[1]] = [band] * (span[1] - span[0])
            if y == 0 and label:
                for k, ch in enumerate(label):
                    if 0 <= at + k < cells:
                        chars[at + k], styles[at + k] = ch, band
        cursor = self.cell_of(self.cursor_ns)
        if 0 <= cursor < cells:
            styles[cursor] = self._styles(self.palette.text, self.palette.cursor)
        segments = [Segment(head[: self.gutter_width].ljust(self.gutter_width),
                            self._styles(self.palette.dim_text, self.palette.gutter))]
        start = 0
        for cell in range(1, cells):
            if styles[cell] is not styles[start]:
                segments.append(Segment("".join(chars[start:cell]), styles[start]))
                start = cell
        segments.append(Segment("".join(chars[start:]), styles[start]))
        return Strip(segments, self.gutter_width + cells)


def util_lines_of(whole: list[Utilisation]) -> list[UtilLine]:
    """The utilisation lines worth showing, from each group's utilisation over the whole
    capture (one bucket): none without device work anywhere; else each series that is not
    all zero (no line of communication overlapped where there is no communication), labelled
    with its group's name where there are several."""
    if not any(u.series["device busy"][0] > 0 for u in whole):
        return []
    several = len(whole) > 1
    return [UtilLine(u.group, name, f"{u.group} {name}" if several and u.group else name)
            for u in whole for name, fractions in u.series.items() if fractions[0] > 0]
