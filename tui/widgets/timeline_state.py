"""What the timeline shows and where its cursor is: lines, focus, selection, range, alignment."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.ops.fold import MAX_BANDS, NO_STEPS, Band, fold_steps
from proftui.core.ops.iterations import Iteration, group_windows, step_at
from proftui.core.ops.rank_offsets import RankOffsets
from proftui.core.query.rows import RowIndex
from proftui.core.query.slice_info import nearest_slice, neighbour, row_of, slice_at
from proftui.tui.widgets.folded import Folded, SavedView, fold_lines, fold_sentence, fold_tracks
from proftui.tui.widgets.lines import _S, PROCESS, SLICES, Lines, TrackChoices, build_lines
from proftui.tui.widgets.util_band import UtilBand, UtilLine
from proftui.tui.widgets.viewport import PAN_FRACTION, ZOOM_STEP, Viewport

RULER_LINES = 2


@dataclass(frozen=True)
class IterationMark:
    """An iteration drawn on the ruler (of `group`, its rank or device: "" for none)."""

    number: int
    start_ns: int
    end_ns: int
    group: str = ""


@dataclass(frozen=True)
class Geometry:
    """How the widget's size is shared: the gutter's width, the cells right of it, and the
    rows under the ruler."""

    gutter_width: int
    cells: int
    height: int

    @classmethod
    def of(cls, width: int, height: int) -> Geometry:
        gutter = max(10, min(30, width // 4))
        return cls(gutter, max(width - gutter, 1), max(height - RULER_LINES, 1))


# What changed, as `notify` hears it (the widget posts each as its message of the same sense).

@dataclass(frozen=True)
class WindowMoved:
    start_ns: int
    end_ns: int


@dataclass(frozen=True)
class RangeSet:
    start_ns: int | None
    end_ns: int | None


@dataclass(frozen=True)
class SliceChosen:
    slice_index: int


@dataclass(frozen=True)
class CursorMoved:
    cursor_ns: int


@dataclass(frozen=True)
class TracksHidden:
    hidden: int
    label: str = ""
    all_shown: bool = False


Change = WindowMoved | RangeSet | SliceChosen | TracksHidden | CursorMoved


class TimelineState:
    """The lines of a trace, the window over them, and the cursor, focus, selection and range.

    A pure object (no Textual): the Timeline widget turns its keys and clicks into calls here,
    repaints, and posts the changes this reports (through `notify`) as its messages.

    `generation` counts the changes that invalidate painted cells beyond the window and the
    lines shown (utilisation lines found or toggled, ranks aligned, lines rebuilt)."""

    def __init__(self, notify: Callable[[Change], None] | None = None) -> None:
        self.notify = notify or (lambda change: None)
        self.index: TraceIndex | None = None
        self.rows: RowIndex | None = None
        self.lines = Lines.empty()
        self.layout_state = TrackChoices.empty()
        self.viewport = Viewport()
        self.geometry = Geometry.of(80, 24)
        self.viewport.cells = self.geometry.cells
        self._cursor_ns = 0
        self.top_line = 0
        self.focus_line = 0
        self.selected = -1
        self.range: tuple[int, int] | None = None  # a selected time range (area selection)
        self.origin_ns: int | None = None  # the ruler's zero; None: the trace's start
        self.matches = np.zeros(0, np.int64)
        self.marks: np.ndarray | None = None  # slices drawn underlined, a mask over all
        self.iterations: list[IterationMark] = []
        self.tables: tuple[Table, ...] = ()
        # The utilisation lines: empty until the widget's worker has built the index's
        # coverage (and for a profile without device work).
        self.band = UtilBand()
        self.show_flows = False  # every flow in view drawn, not only the selection's
        # Ranks aligned at an iteration: each track drawn `track_shift[track]` ns earlier
        # (see align); None: every track on its own clock.
        self.alignment: RankOffsets | None = None
        self.track_shift: np.ndarray | None = None
        # Steps folded (see fold): the bands shown instead of the lines; None: the normal view.
        self.folded: Folded | None = None
        self.generation = 0

    @property
    def cursor_ns(self) -> int:
        """The cursor's time (on the screen's clock); a move is reported (CursorMoved)."""
        return self._cursor_ns

    @cursor_ns.setter
    def cursor_ns(self, value: int) -> None:
        if int(value) != self._cursor_ns:
            self._cursor_ns = int(value)
            self.notify(CursorMoved(self._cursor_ns))

    # -- data -----------------------------------------------------------------------------------

    def show(self, index: TraceIndex, rows: RowIndex,
             iterations: list[IterationMark] | None = None, tables: Sequence[Table] = ()) -> None:
        """Show a trace: the whole of it, first slice line focused."""
        self.index, self.rows = index, rows
        self.folded = None
        self.iterations = iterations or []
        self.tables = tuple(tables)
        self.band.set_lines([])
        self.alignment, self.track_shift = None, None
        # What named slices of the trace shown before (a folder followed is shown again,
        # numbered afresh): the caller selects again what it keeps.
        self.selected, self.range = -1, None
        self.matches, self.marks = np.zeros(0, np.int64), None
        self.viewport.span = self.span()
        self.rebuild_lines()
        self.focus_line = self.lines.find(kind=SLICES) or 0
        self.reset()

    @property
    def util_lines(self) -> list[UtilLine]:
        """Every utilisation line worth showing (those on screen: `band.on_screen`)."""
        return self.band.lines

    @property
    def show_utilisation(self) -> bool:
        return self.band.on

    def set_util_lines(self, lines: list[UtilLine]) -> None:
        self.band.set_lines(lines)
        self._band_changed()

    def toggle_utilisation(self) -> None:
        """`u`: a line per rank, every series of every rank, none (see UtilBand.cycle)."""
        self.band.cycle()
        self._band_changed()

    def toggle_util_group(self, group: str | None = None) -> None:
        """Expand or fold a rank's utilisation lines (by default the focused line's rank)."""
        group = self.focused_group() if group is None else group
        if group is None and len(self.band.groups()) == 1:
            group = next(iter(self.band.groups()))
        if group is not None:
            self.band.toggle(group)
            self._band_changed()

    def scroll_util(self, step: int) -> None:
        self.band.scroll(step, self.geometry.height)
        self.generation += 1

    def _band_changed(self) -> None:
        self.generation += 1
        self.keep_focus_visible()

    def focused_group(self) -> str | None:
        """The group (rank or device) of the focused line's process, if it has one."""
        if self.index is None or not self.lines:
            return None
        process = self.lines[self.focus_line].process
        return None if process < 0 else self.group_of(process)

    def group_of(self, process: int) -> str:
        """A process's group (rank or device; "" for none)."""
        assert self.index is not None
        return self.index.strings[self.index.arrays["processes.group"][process]]

    def toggle_flows(self) -> None:
        self.show_flows = not self.show_flows

    def set_matches(self, matches: np.ndarray) -> None:
        self.matches = matches
        self.update_marks()

    def update_marks(self) -> None:
        """Slices drawn underlined: search matches and the selection's flow partners (a mask
        over all slices, so that a frame looks its cells up instead of searching a list)."""
        partners = np.array(self.flow_partners(self.selected), np.int64)
        if len(self.matches) or len(partners):
            mask = np.zeros(self.index.n_slices if self.index is not None else 0, bool)
            mask[self.matches] = True
            mask[partners] = True
            self.marks = mask
        else:
            self.marks = None

    def flow_partners(self, i: int, direction: int = 0) -> list[int]:
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

    def rebuild_lines(self) -> None:
        assert self.index is not None and self.rows is not None
        self.lines = build_lines(self.index, self.rows, self.layout_state)
        self.focus_line = min(self.focus_line, max(len(self.lines) - 1, 0))
        self.generation += 1

    # -- geometry -------------------------------------------------------------------------------

    def resize(self, width: int, height: int) -> None:
        self.geometry = Geometry.of(width, height)
        self.viewport.cells = self.geometry.cells

    @property
    def gutter_width(self) -> int:
        return self.geometry.gutter_width

    @property
    def cells(self) -> int:
        return self.geometry.cells

    @property
    def util_rows(self) -> int:
        """How many utilisation lines are on screen (pinned under the ruler)."""
        if self.index is None or self.folded is not None:  # folded: times are the steps'
            return 0
        return self.band.rows(self.geometry.height)

    def util_on_screen(self) -> list[UtilLine]:
        if self.index is None or self.folded is not None:
            return []
        return self.band.on_screen(self.geometry.height)

    @property
    def screen_range(self) -> tuple[int, int] | None:
        """The range as drawn: none in the folded view (its times are the steps' own)."""
        return None if self.folded is not None else self.range

    @property
    def body_top(self) -> int:
        """The screen row of the first line of :attr:`lines`."""
        return RULER_LINES + self.util_rows

    @property
    def body_height(self) -> int:
        return max(self.geometry.height - self.util_rows, 1)

    def visible_lines(self) -> range:
        return range(self.top_line, min(self.top_line + self.body_height, len(self.lines)))

    def line_at(self, y: int) -> int | None:
        """The line at a screen row, if any."""
        top = self.body_top
        n = self.top_line + y - top
        return n if y >= top and 0 <= n < len(self.lines) else None

    # -- the window -----------------------------------------------------------------------------

    def set_window(self, start_ns: int, end_ns: int) -> None:
        """Show [start_ns, end_ns), kept to at least one ns per cell and on the trace."""
        if self.index is not None and self.viewport.set_window(start_ns, end_ns):
            self._window_moved()

    def _window_moved(self) -> None:
        self.notify(WindowMoved(self.viewport.start_ns, self.viewport.end_ns))

    def zoom(self, factor: float, anchor_ns: int | None = None) -> None:
        """Zoom by `factor` (< 1: in) about a time, by default the cursor (when in view)."""
        anchor = self.viewport.zoom_anchor(self.cursor_ns) if anchor_ns is None else anchor_ns
        if self.index is not None and self.viewport.zoom(factor, anchor):
            self._window_moved()

    def zoom_in(self) -> None:
        self.zoom(1 / ZOOM_STEP)

    def zoom_out(self) -> None:
        self.zoom(ZOOM_STEP)

    def pan(self, fraction: float) -> None:
        if self.index is not None and self.viewport.pan(fraction):
            self._window_moved()

    def pan_left(self) -> None:
        self.pan(-PAN_FRACTION)

    def pan_right(self) -> None:
        self.pan(PAN_FRACTION)

    def drag(self, cells: int) -> None:
        """The window dragged by `cells` (positive: its contents move left)."""
        if self.index is not None and self.viewport.pan_cells(cells):
            self._window_moved()

    def reset(self) -> None:
        """The whole trace, the cursor in its middle."""
        if self.index is None:
            return
        if self.viewport.whole():
            self._window_moved()
        lo, hi = self.span()
        self.cursor_ns = lo + (hi - lo) // 2

    def fit(self) -> None:
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
            self.reset()

    def keep_cursor_visible(self) -> None:
        if self.index is not None and self.viewport.centre_on(self.cursor_ns):
            self._window_moved()

    def move_cursor(self, cells: int) -> None:
        self.cursor_ns += round(cells * self.viewport.ns_per_cell)
        self.keep_cursor_visible()

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
            self.notify(RangeSet(*(new or (None, None))))

    def mark_range(self, end: int) -> None:
        """Set the range's start (0) or end (1) at the cursor; the other bound stays, or
        starts at the cursor too."""
        here = self.cursor_ns
        if self.range is None:
            self.set_range(here, here + max(round(self.viewport.ns_per_cell), 1))
        elif end:
            self.set_range(self.range[0], here)
        else:
            self.set_range(here, self.range[1])

    def range_of_selection(self) -> None:
        """The range of the selected slice, else of the iteration under the cursor."""
        if self.index is None:
            return
        if self.selected >= 0:
            start = self.shown_start(self.selected)
            self.set_range(start, start + int(self.index.arrays["slices.dur"][self.selected]))
            return
        steps = [Iteration(m.group, m.number, m.start_ns, m.end_ns) for m in self.iterations]
        for group in dict.fromkeys(m.group for m in self.iterations):
            shift = self.shift_of_group(group)
            number = step_at(steps, self.cursor_ns + shift, group)  # the one rule
            if number is not None:
                lo, hi = group_windows(steps, number)[group]
                self.set_range(lo - shift, hi - shift)
                return

    # -- lines ----------------------------------------------------------------------------------

    def step_line(self, step: int) -> None:
        if not self.lines:
            return
        self.focus_line = min(max(self.focus_line + step, 0), len(self.lines) - 1)
        self.keep_focus_visible()
        line = self.lines[self.focus_line]
        if line.kind == SLICES and self.selected >= 0:
            self.choose(self.slice_near_cursor(line.item), center=False)

    def page(self, step: int) -> None:
        self.step_line(step * max(self.body_height - 1, 1))

    def scroll_lines(self, step: int) -> None:
        self.top_line = min(max(self.top_line + step, 0), max(len(self.lines) - 1, 0))

    def keep_focus_visible(self) -> None:
        """Scroll the lines to the focused one, and the utilisation band to its rank."""
        if self.focus_line < self.top_line:
            self.top_line = self.focus_line
        elif self.focus_line >= self.top_line + self.body_height:
            self.top_line = self.focus_line - self.body_height + 1
        group = self.focused_group()
        if group is not None and len(self.band.shown) > self.util_rows:
            top = self.band.first(self.geometry.height)
            self.band.follow(group, self.geometry.height)
            if self.band.first(self.geometry.height) != top:
                self.generation += 1

    def toggle_collapse(self) -> None:
        if not self.lines:
            return
        process = self.lines[self.focus_line].process
        if process < 0:
            return
        self.layout_state.collapsed.symmetric_difference_update({process})
        self.rebuild_lines()
        found = self.lines.find(kind=PROCESS, process=process)
        self.focus_line = self.focus_line if found is None else found
        self.keep_focus_visible()

    def toggle_pin(self) -> None:
        track = self.lines[self.focus_line].track if self.lines else -1
        if track < 0:
            return
        pinned = self.layout_state.pinned
        if track in pinned:
            pinned.remove(track)
        else:
            pinned.insert(0, track)
        self.rebuild_lines()
        self.show_track(track)  # the cursor follows the track to its new place

    def toggle_track_order(self) -> None:
        """Device work first in each rank (the default), or the trace's own order; the
        focused line's track (or process) stays focused."""
        line = self.lines[self.focus_line] if self.lines else None
        self.layout_state.device_first = not self.layout_state.device_first
        self.rebuild_lines()
        if line is not None:
            found = (self.lines.find(track=line.track) if line.track >= 0 else
                     self.lines.find(kind=PROCESS, process=line.process))
            self.focus_line = self.focus_line if found is None else found
        self.keep_focus_visible()

    def _reveal(self, track: int) -> None:
        """Unhide a track and expand its process."""
        assert self.index is not None
        hidden = self.layout_state.hidden
        if track in hidden:
            hidden.discard(track)
            self.notify(TracksHidden(len(hidden)))
        self.layout_state.collapsed.discard(int(self.index.arrays["tracks.process"][track]))
        self.rebuild_lines()

    def show_process(self, process: int, at_top: bool = False) -> None:
        """Focus a process's header line (expanding it); `at_top` scrolls it to the top of
        the tracks (as far as the tracks below it allow)."""
        if self.index is None:
            return
        if process in self.layout_state.collapsed:
            self.layout_state.collapsed.discard(process)
            self.rebuild_lines()
        line = self.lines.find(kind=PROCESS, process=process)
        if line is not None:
            self.focus_line = line
            if at_top:
                self.top_line = max(min(line, len(self.lines) - self.body_height), 0)
            self.keep_focus_visible()

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
            self.keep_focus_visible()

    def hide_track(self) -> None:
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
        self.rebuild_lines()
        self.notify(TracksHidden(len(hidden), label))

    def show_hidden(self) -> None:
        if self.layout_state.hidden:
            self.layout_state.hidden.clear()
            self.notify(TracksHidden(0, all_shown=True))
        self.rebuild_lines()

    def hidden_in(self, process: int) -> int:
        """How many tracks of `process` are hidden."""
        if self.index is None or not self.layout_state.hidden:
            return 0
        owner = self.index.arrays["tracks.process"]
        return sum(1 for t in self.layout_state.hidden if owner[t] == process)

    # -- selection ------------------------------------------------------------------------------

    def step_slice(self, step: int) -> None:
        if self.index is None or self.rows is None or not self.lines:
            return
        if self.selected >= 0:
            target = neighbour(self.rows, self.index, self.selected, step)
            if target >= 0:
                self.choose(target)
            return
        line = self.lines[self.focus_line]
        if line.kind == SLICES:
            self.choose(self.slice_near_cursor(line.item))

    def select_here(self) -> None:
        if not self.lines:
            return
        line = self.lines[self.focus_line]
        if line.kind == SLICES:
            self.choose(self.slice_near_cursor(line.item), center=False)
        elif line.kind == PROCESS:
            self.toggle_collapse()

    def clear_selection(self) -> None:
        """Esc: clear the selected slice, or with none selected, the range."""
        if self.selected < 0 and self.range is not None:
            self.set_range(None, None)
        else:
            self.choose(-1)

    def follow_flow(self, direction: int) -> None:
        """Jump to the first flow partner of the selected slice (out with 1, in with -1)."""
        partners = self.flow_partners(self.selected, direction)
        if partners:
            self.select(partners[0])

    def select(self, i: int) -> None:
        """Select slice `i`, bring its track into view and show it whole where it fits."""
        if self.index is None or self.rows is None:
            return
        row = row_of(self.rows, self.index, i)
        line = self.lines.find(kind=SLICES, item=row)
        if line is None:  # hidden or collapsed: show it
            self._reveal(int(self.index.arrays["slices.track"][i]))
            line = self.lines.find(kind=SLICES, item=row)
        if line is not None:
            self.focus_line = line
            self.keep_focus_visible()
        start = self.shown_start(i)
        dur = int(self.index.arrays["slices.dur"][i])
        view = self.viewport
        width = view.end_ns - view.start_ns
        if dur > width * 0.9:
            self.set_window(start - dur // 10, start + dur + dur // 10)
        elif start < view.start_ns or start + dur > view.end_ns:
            self.set_window(start + dur // 2 - width // 2, start + dur // 2 + width // 2)
        self.choose(i, center=False)

    def choose(self, i: int, center: bool = True) -> None:
        """Make slice `i` (-1: none) the selection, the cursor at its middle; `center` brings
        the cursor into view."""
        if self.index is not None and i >= 0:
            start = self.shown_start(i)
            self.cursor_ns = start + int(self.index.arrays["slices.dur"][i]) // 2
            if center:
                self.keep_cursor_visible()
        if i != self.selected:
            self.selected = i
            self.update_marks()
            self.notify(SliceChosen(i))

    def click(self, line: int, cell: int | None, owner: int = -1) -> None:
        """A click on a line: in the gutter (`cell` None) it focuses the line and folds a
        process; on a cell it moves the cursor there and selects `owner` (-1: nothing)."""
        self.focus_line = line
        if cell is None:
            if self.lines[line].kind == PROCESS:
                self.toggle_collapse()
            return
        self.cursor_ns = self.viewport.time_at(cell)
        if self.folded is None:  # folded, a slice is not selected: Enter opens its step
            self.choose(owner, center=False)

    def slice_near_cursor(self, row: int) -> int:
        assert self.index is not None and self.rows is not None
        at = self.cursor_ns + self.shift_of_track(int(self.rows.row_track[row]))
        here = slice_at(self.index, self.rows, row, at)
        return here if here >= 0 else nearest_slice(self.index, self.rows, row, at)

    # -- ranks aligned at an iteration ------------------------------------------------------------

    def align(self, offsets: RankOffsets | None) -> None:
        """Draw each rank's tracks moved left by its offset (None: on their own clocks). The
        screen's clock is then the reference rank's; the slices' own times do not change."""
        assert self.index is not None
        self.alignment = offsets
        self.track_shift = None if offsets is None else offsets.track_offsets(self.index)
        self.viewport.span = self.span()
        self.generation += 1

    def shift_of_track(self, track: int) -> int:
        if self.track_shift is None or track < 0:
            return 0
        return int(self.track_shift[track])

    def shift_of_group(self, group: str) -> int:
        """How far a rank's (or device's) tracks are drawn to the left, in ns."""
        return 0 if self.alignment is None else self.alignment.offset_of(group)

    def shown_start(self, i: int) -> int:
        """Where slice `i` starts on screen: its start, less its rank's shift."""
        assert self.index is not None
        track = int(self.index.arrays["slices.track"][i])
        return int(self.index.arrays["slices.start"][i]) - self.shift_of_track(track)

    def span(self) -> tuple[int, int]:
        """The first and last instant of the trace on screen (ranks moved by their shifts);
        folded, from 0 to the end of the longest band."""
        assert self.index is not None
        if self.folded is not None:
            return 0, max(self.folded.fold.longest_ns, 1)
        lo, hi = self.index.start_ns, max(self.index.end_ns, self.index.start_ns + 1)
        if self.track_shift is not None and len(self.track_shift):
            lo -= max(int(self.track_shift.max()), 0)
            hi -= min(int(self.track_shift.min()), 0)
        return lo, hi

    # -- steps folded -----------------------------------------------------------------------------

    def shift_of_line(self, n: int) -> int:
        """How far line `n` is drawn to the left: its band's step start when folded, else
        its rank's alignment shift."""
        if self.folded is not None:
            return int(self.folded.shift[n])
        return self.shift_of_track(int(self.lines.track[n]))

    def fold(self, group: str | None = None, number: int | None = None,
             limit: int = MAX_BANDS) -> str:
        """Show `group`'s steps (by default the focused line's rank), or with `number` every
        rank's step `number`, side by side (see :mod:`proftui.tui.widgets.folded`); the
        sentence the status line says. Nothing changes where there is no step to fold."""
        if self.index is None or self.rows is None:
            return NO_STEPS
        steps = [Iteration(m.group, m.number, m.start_ns, m.end_ns) for m in self.iterations]
        if group is None and number is None:
            group = self.focused_group() or ""
            if group not in {s.group for s in steps}:  # a line of no rank's steps: the first's
                group = steps[0].group if steps else ""
        found = fold_steps(steps, group, number, limit)
        if not found.bands:
            return NO_STEPS if not steps else f"There is no step {number} to fold." \
                if number is not None else f"{group or 'This rank'} has no steps to fold."
        choices = self.layout_state
        order = self.lines.track[self.lines.kind == _S].tolist() if self.folded is None else ()
        tracks = {b.group: fold_tracks(self.index, self.rows, b.group, order, choices.pinned,
                                       tuple(choices.hidden)) for b in found.bands}
        lines, shift, band, first = fold_lines(self.index, self.rows, found, tracks)
        if not len(lines):
            return "The steps' ranks have no tracks with slices to fold."
        saved = self.folded.saved if self.folded is not None else SavedView(
            self.viewport.start_ns, self.viewport.end_ns, self.cursor_ns, self.top_line,
            self.focus_line)
        self.choose(-1)
        self.folded = Folded(found, lines, shift, band, first, saved)
        self.lines, self.top_line, self.focus_line = lines, 0, 0
        self.viewport.span = self.span()
        self.generation += 1
        self.reset()
        self.cursor_ns = 0
        slowest = max(found.bands, key=lambda b: b.dur_ns)
        self.focus_band(slowest.group, slowest.number)  # with the bands before it above
        return fold_sentence(found)

    def focus_band(self, group: str, number: int) -> None:
        """Focus the first line of a band, if it is shown, and show it whole."""
        if self.folded is None:
            return
        first = self.folded.first
        for k, b in enumerate(self.folded.fold.bands):
            if (b.group, b.number) == (group, number):
                # the band whole on screen where it fits, the lines before it above
                end = int(first[k + 1]) if k + 1 < len(first) else len(self.lines)
                self.focus_line = int(first[k])
                self.top_line = max(min(self.focus_line, end - self.body_height), 0)

    def unfold(self) -> None:
        """Back to the normal view as it was before folding."""
        if self.folded is None:
            return
        saved = self.folded.saved
        self.folded = None
        self.rebuild_lines()
        self.viewport.span = self.span()
        self.top_line, self.focus_line = saved.top_line, saved.focus_line
        self.focus_line = min(self.focus_line, max(len(self.lines) - 1, 0))
        self.set_window(saved.start_ns, saved.end_ns)
        self.cursor_ns = saved.cursor_ns

    def open_band(self) -> Band | None:
        """Enter on a band: back to the normal view zoomed to the focused band's step (on its
        rank's tracks); that band, or None when not folded."""
        band = self.folded.band_of(self.focus_line) if self.folded is not None else None
        if band is None:
            return None
        self.unfold()
        shift = self.shift_of_group(band.group)
        margin = band.dur_ns // 50
        self.set_window(band.start_ns - shift - margin, band.end_ns - shift + margin)
        self.cursor_ns = band.start_ns - shift
        process = self.first_process_of(band.group)
        if process is not None:
            self.show_process(process, at_top=True)
        return band
