"""The Timeline widget: a zoomable, pannable view of a trace's tracks, as chrome://tracing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual import events, work
from textual.binding import Binding
from textual.filter import ANSIToTruecolor, LineFilter
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.ops.rank_offsets import RankOffsets
from proftui.core.query.rows import RowIndex
from proftui.themes import Palette
from proftui.tui.widgets.timeline_painter import TimelinePainter
from proftui.tui.widgets.timeline_state import (
    RULER_LINES,
    Change,
    CursorMoved,
    IterationMark,
    RangeSet,
    SliceChosen,
    TimelineState,
    TracksHidden,
    WindowMoved,
)
from proftui.tui.widgets.util_band import HEAD_SERIES, UTIL_SHARE, UtilLine
from proftui.tui.widgets.viewport import PAN_FRACTION, ZOOM_STEP

if TYPE_CHECKING:
    from proftui.core.analysis.utilisation import Utilisation

ZOOM = Binding.Group("Zoom")  # w and s as "w s Zoom" in the footer

__all__ = ["PAN_FRACTION", "RULER_LINES", "UTIL_SHARE", "ZOOM_STEP", "IterationMark",
           "Timeline", "UtilLine", "util_lines_of"]


class _Shown:
    """An attribute of the timeline's state, read (and set) through the widget as before."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, timeline: Timeline | None, owner: type | None = None):  # noqa: ANN204
        return self if timeline is None else getattr(timeline.state, self.name)

    def __set__(self, timeline: Timeline, value: object) -> None:
        setattr(timeline.state, self.name, value)


class Timeline(Widget, can_focus=True):
    """Tracks and slices of one trace over a time window.

    Keys follow chrome://tracing (w/s zoom around the cursor, a/d pan); arrows move between
    slices (left/right in time, up/down across rows and tracks); the mouse clicks, wheels and
    drags. The widget is a shell: what it shows and where its cursor is live in
    :class:`TimelineState` (with its :class:`Viewport`), painting in :class:`TimelinePainter`.

    Above the first process, pinned lines show utilisation per cell of the window, from
    :func:`proftui.core.analysis.utilisation.utilisation`: a line per rank or device (its
    device busy), expanded on `u` or `U` to each series (see
    :class:`~proftui.tui.widgets.util_band.UtilBand`). They are not lines of
    :class:`~proftui.tui.widgets.lines.Lines`: the cursor, selection and layout keys never
    meet them."""

    DEFAULT_CSS = """
    Timeline { height: 1fr; }
    """
    BINDINGS = [
        Binding("w", "zoom_in", "Zoom in", group=ZOOM),
        Binding("s", "zoom_out", "Zoom out", group=ZOOM),
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
        Binding("F", "toggle_flows", "Every flow", show=False),
        Binding("u", "toggle_utilisation", "Utilisation", show=False),
        Binding("U", "toggle_util_group", "Rank's utilisation", show=False),
        Binding("t", "toggle_track_order", "Track order", show=False),
        Binding("z", "fold", "Fold steps", show=False),
    ]
    # Folded (steps side by side, in time from each step's start), these keys would work on
    # the lines or times of the normal view: they wait for Esc (or Enter on a band).
    UNFOLDED_ONLY = frozenset({
        "step_slice", "mark_range", "range_of_selection", "toggle_collapse", "toggle_pin",
        "hide_track", "show_hidden", "follow_flow", "toggle_flows", "toggle_utilisation",
        "toggle_util_group", "toggle_track_order"})

    class SliceSelected(Message):
        """The selection changed (`slice` is -1 when it was cleared)."""

        def __init__(self, timeline: Timeline, slice_index: int) -> None:
            super().__init__()
            self.timeline = timeline
            self.slice_index = slice_index

        @property
        def control(self) -> Timeline:
            return self.timeline

    class CursorChanged(Message):
        """The cursor moved (to `cursor_ns`, on the timeline's screen clock)."""

        def __init__(self, timeline: Timeline, cursor_ns: int) -> None:
            super().__init__()
            self.timeline = timeline
            self.cursor_ns = cursor_ns

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

    class Folded(Message):
        """The steps were folded or unfolded: `text` says what is shown; `opened`: the
        (group, step) Enter opened on the normal timeline, else None."""

        def __init__(self, timeline: Timeline, text: str,
                     opened: tuple[str, int] | None = None) -> None:
            super().__init__()
            self.timeline = timeline
            self.text = text
            self.opened = opened

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


    # The state's attributes, as other widgets, the app and the tests know them.
    index = _Shown()
    rows = _Shown()
    lines = _Shown()
    layout_state = _Shown()
    cursor_ns = _Shown()
    top_line = _Shown()
    focus_line = _Shown()
    selected = _Shown()
    range = _Shown()
    origin_ns = _Shown()
    matches = _Shown()
    iterations = _Shown()
    tables = _Shown()
    show_utilisation = _Shown()
    show_flows = _Shown()
    util_lines = _Shown()
    alignment = _Shown()
    folded = _Shown()
    gutter_width = _Shown()
    cells = _Shown()
    util_rows = _Shown()
    body_top = _Shown()
    body_height = _Shown()

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self.state = TimelineState(notify=self._changed)
        self.painter = TimelinePainter(self.state)
        self._drag_x: int | None = None
        self._range_anchor: int | None = None  # where a shift-drag started

    def _changed(self, change: Change) -> None:
        """The state's changes, posted as this widget's messages."""
        if isinstance(change, WindowMoved):
            if self.state.folded is not None:  # not a window of the trace's times
                return
            self.post_message(self.WindowChanged(self, change.start_ns, change.end_ns))
        elif isinstance(change, SliceChosen):
            self.post_message(self.SliceSelected(self, change.slice_index))
        elif isinstance(change, CursorMoved):
            self.post_message(self.CursorChanged(self, change.cursor_ns))
        elif isinstance(change, RangeSet):
            self.post_message(self.RangeChanged(change.start_ns, change.end_ns))
        elif isinstance(change, TracksHidden):
            self.post_message(self.HiddenChanged(self, change.hidden, change.label,
                                                 change.all_shown))

    # -- data -----------------------------------------------------------------------------------

    def show(self, index: TraceIndex, rows: RowIndex,
             iterations: list[IterationMark] | None = None,
             tables: Sequence[Table] = (), utilisation: bool = True) -> None:
        """Show a trace: the whole of it, first line focused. `tables` (the profile's summary
        tables) help tell device work apart for the utilisation lines; without `utilisation`
        those wait for :meth:`show_overview`."""
        self.state.show(index, rows, iterations, tables)
        self.refresh()
        if utilisation:
            self.prepare_utilisation(index, self.state.tables)

    def show_overview(self, iterations: list[IterationMark], tables: Sequence[Table]) -> None:
        """The iterations and summary tables of the trace shown, found after its first frame;
        the utilisation lines follow."""
        assert self.state.index is not None
        self.state.iterations = iterations
        self.state.tables = tuple(tables)
        self.refresh()
        self.prepare_utilisation(self.state.index, self.state.tables)

    @work(thread=True, exclusive=True, group="utilisation")
    def prepare_utilisation(self, index: TraceIndex, tables: tuple[Table, ...]) -> None:
        """Build the index's coverage off the UI thread (up to a second on a huge trace) and
        find which series hold anything over the whole capture; later windows then cost a
        binary search per cell."""
        from proftui.core.analysis.utilisation import utilisation  # (see timeline_painter)

        try:
            whole = utilisation(index, index.start_ns, max(index.end_ns, index.start_ns + 1), 1,
                                tables)
        except Exception:  # noqa: BLE001 - a derived view must not take the timeline down
            whole = []
        self.app.call_from_thread(self._utilisation_ready, index, whole)

    def _utilisation_ready(self, index: TraceIndex, whole: list[Utilisation]) -> None:
        if index is not self.state.index:  # another trace was shown meanwhile
            return
        self.state.set_util_lines(util_lines_of(whole))
        self.refresh()

    def set_palette(self, palette: Palette) -> None:
        self.painter.set_palette(palette)
        self.refresh()

    @property
    def palette(self) -> Palette:
        return self.painter.palette

    def set_matches(self, matches) -> None:  # noqa: ANN001 (an array of slice indices)
        self.state.set_matches(matches)
        self.refresh()

    # -- the window -----------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self.state.resize(event.size.width, event.size.height)
        self.refresh()

    @property
    def view_start(self) -> int:
        return self.state.viewport.start_ns

    @property
    def view_end(self) -> int:
        return self.state.viewport.end_ns

    @property
    def ns_per_cell(self) -> float:
        return self.state.viewport.ns_per_cell

    def time_at(self, cell: int) -> int:
        return self.state.viewport.time_at(cell)

    def cell_of(self, t_ns: int) -> int:
        return self.state.viewport.cell_of(t_ns)

    def set_window(self, start_ns: int, end_ns: int) -> None:
        """Show [start_ns, end_ns), kept to at least one ns per cell and on the trace."""
        self.state.unfold()
        self.state.set_window(start_ns, end_ns)
        self.refresh()

    def set_range(self, start_ns: int | None, end_ns: int | None) -> None:
        """Select [start_ns, end_ns) (bounds in either order), or nothing with None."""
        self.state.unfold()
        self.state.set_range(start_ns, end_ns)
        self.refresh()

    def select(self, i: int) -> None:
        """Select slice `i`, bring its track into view and show it whole where it fits."""
        self.state.unfold()
        self.state.select(i)
        self.refresh()

    def show_process(self, process: int, at_top: bool = False) -> None:
        """Focus a process's header line (expanding it); `at_top` scrolls it to the top."""
        self.state.unfold()
        self.state.show_process(process, at_top)
        self.refresh()

    def show_track(self, track: int) -> None:
        """Focus a track's first line, unhiding it and expanding its process if need be."""
        self.state.unfold()
        self.state.show_track(track)
        self.refresh()

    def align(self, offsets: RankOffsets | None) -> None:
        """Draw each rank's tracks moved left by its offset (None: on their own clocks)."""
        self.state.unfold()
        self.state.align(offsets)
        self.refresh()

    def first_process_of(self, group: str) -> int | None:
        return self.state.first_process_of(group)

    def shift_of_group(self, group: str) -> int:
        return self.state.shift_of_group(group)

    def shown_start(self, i: int) -> int:
        return self.state.shown_start(i)

    def hidden_in(self, process: int) -> int:
        return self.state.hidden_in(process)

    # -- actions (each a call on the state, then a repaint) --------------------------------------

    def action_zoom_in(self) -> None:
        self.state.zoom_in()
        self.refresh()

    def action_zoom_out(self) -> None:
        self.state.zoom_out()
        self.refresh()

    def action_pan_left(self) -> None:
        self.state.pan_left()
        self.refresh()

    def action_pan_right(self) -> None:
        self.state.pan_right()
        self.refresh()

    def action_reset(self) -> None:
        self.state.reset()
        self.refresh()

    def action_fit(self) -> None:
        """Fit the selected slice, else the selected range, else everything."""
        self.state.fit()
        self.refresh()

    def action_mark_range(self, end: int) -> None:
        self.state.mark_range(end)
        self.refresh()

    def action_range_of_selection(self) -> None:
        self.state.range_of_selection()
        self.refresh()

    def action_move_cursor(self, cells: int) -> None:
        self.state.move_cursor(cells)
        self.refresh()

    def action_step_line(self, step: int) -> None:
        self.state.step_line(step)
        self.refresh()

    def action_page(self, step: int) -> None:
        self.state.page(step)
        self.refresh()

    def action_step_slice(self, step: int) -> None:
        self.state.step_slice(step)
        self.refresh()

    def action_select_here(self) -> None:
        if self.state.folded is not None:
            self.open_band()
            return
        self.state.select_here()
        self.refresh()

    def action_clear_selection(self) -> None:
        if self.state.folded is not None:
            self.unfold()
            return
        self.state.clear_selection()
        self.refresh()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.state.folded is not None and action in self.UNFOLDED_ONLY:
            return None  # shown disabled
        return True

    # -- steps folded ---------------------------------------------------------------------------

    def action_fold(self) -> None:
        """`z`: fold the focused rank's steps, or back to the normal view."""
        if self.state.folded is not None:
            self.unfold()
        else:
            self.fold()

    def fold(self, group: str | None = None, number: int | None = None) -> None:
        """Show `group`'s steps (by default the focused line's rank), or every rank's step
        `number`, side by side; the status line says what (or why not)."""
        text = self.state.fold(group, number)
        self.refresh()
        self.refresh_bindings()
        self.post_message(self.Folded(self, text))

    def focus_band(self, group: str, number: int) -> None:
        self.state.focus_band(group, number)
        self.refresh()

    def unfold(self) -> None:
        if self.state.folded is None:
            return
        self.state.unfold()
        self.refresh()
        self.refresh_bindings()
        self.post_message(self.Folded(self, "Back to the timeline."))

    def open_band(self) -> None:
        """Enter on a band: the normal view, zoomed to its step."""
        band = self.state.open_band()
        self.refresh()
        self.refresh_bindings()
        if band is not None:
            self.post_message(self.Folded(self, f"Step {band.number}", (band.group,
                                                                        band.number)))

    def action_toggle_collapse(self) -> None:
        self.state.toggle_collapse()
        self.refresh()

    def action_toggle_pin(self) -> None:
        self.state.toggle_pin()
        self.refresh()

    def action_toggle_track_order(self) -> None:
        self.state.toggle_track_order()
        self.refresh()

    def action_hide_track(self) -> None:
        self.state.hide_track()
        self.refresh()

    def action_show_hidden(self) -> None:
        self.state.show_hidden()
        self.refresh()

    def action_follow_flow(self, direction: int) -> None:
        self.state.follow_flow(direction)
        self.refresh()

    def action_toggle_flows(self) -> None:
        self.state.toggle_flows()
        self.refresh()

    def action_toggle_utilisation(self) -> None:
        self.state.toggle_utilisation()
        self.refresh()

    def action_toggle_util_group(self) -> None:
        self.state.toggle_util_group()
        self.refresh()

    # -- mouse ----------------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        line = self.state.line_at(event.y)
        if line is None:
            band_row = event.y - RULER_LINES
            shown = self.state.util_on_screen()
            if 0 <= band_row < len(shown) and event.x < self.state.gutter_width \
                    and shown[band_row].head:  # a head's label folds or expands its rank
                self.state.toggle_util_group(shown[band_row].group)
                self.refresh()
            return
        cell = event.x - self.state.gutter_width
        if cell < 0:
            self.state.click(line, None)
        else:
            self.state.click(line, cell, self.painter.owner_at(line, cell))
        self.refresh()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if (event.shift or event.ctrl) and self._over_band(event.y):  # scrolls the band
            self.state.scroll_util(-1)
        elif event.shift or event.ctrl:  # with a modifier the wheel scrolls the lines
            self.state.scroll_lines(-3)
        else:
            self._wheel(event.x, 1 / ZOOM_STEP)
        self.refresh()
        event.stop()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        if (event.shift or event.ctrl) and self._over_band(event.y):
            self.state.scroll_util(1)
        elif event.shift or event.ctrl:
            self.state.scroll_lines(3)
        else:
            self._wheel(event.x, ZOOM_STEP)
        self.refresh()
        event.stop()

    def _over_band(self, y: int) -> bool:
        """Over the utilisation lines, and more of them than fit."""
        state = self.state
        return RULER_LINES <= y < state.body_top and len(state.band.shown) > state.util_rows

    def _wheel(self, x: int, factor: float) -> None:
        """Zoom about the time under the pointer (in the gutter: as the keys do)."""
        gutter = self.state.gutter_width
        self.state.zoom(factor, self.time_at(x - gutter) if x >= gutter else None)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A drag pans; with shift it selects a range instead."""
        if event.x >= self.state.gutter_width:
            self._drag_x = event.x
            if event.shift and self.state.folded is None:  # folded: no range
                self._range_anchor = self.time_at(event.x - self.state.gutter_width)
            self.capture_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._drag_x is None or not event.button:
            return
        if self._range_anchor is not None:
            self.set_range(self._range_anchor,
                           self.time_at(max(event.x - self.state.gutter_width, 0)))
            return
        cells, self._drag_x = self._drag_x - event.x, event.x
        self.state.drag(cells)
        self.refresh()

    def on_mouse_up(self, event: events.MouseUp) -> None:
        self._drag_x = None
        self._range_anchor = None
        self.release_mouse()

    # -- painting -------------------------------------------------------------------------------

    def get_line_filters(self) -> Sequence[LineFilter]:
        """The app's filters but the ANSI-to-truecolor one: every colour painted here is a
        palette's hex colour (a test holds the themes to it), so that the filter would copy
        each line's segments to change none of them."""
        return [f for f in super().get_line_filters() if not isinstance(f, ANSIToTruecolor)]

    def render_line(self, y: int) -> Strip:
        return self.painter.line(y, self.has_focus)

    @property
    def _cells_key(self) -> tuple | None:
        """(bench/bench_timeline.py sets it to None to time the cells' queries)"""
        return self.painter.cells.key

    @_cells_key.setter
    def _cells_key(self, value: None) -> None:
        self.painter.forget_cells()


def util_lines_of(whole: list[Utilisation]) -> list[UtilLine]:
    """The utilisation lines worth showing, from each group's utilisation over the whole
    capture (one bucket): none without device work anywhere; else per group its head (device
    busy) and each other series that is not all zero (no line of communication overlapped
    where there is no communication), labelled with its group's name where there are
    several."""
    if not any(u.series[HEAD_SERIES][0] > 0 for u in whole):
        return []
    several = len(whole) > 1
    lines = []
    for u in whole:
        named = f"{u.group} " if several and u.group else ""
        lines.append(UtilLine(u.group, HEAD_SERIES, f"{named}{HEAD_SERIES}", head=True))
        lines += [UtilLine(u.group, name, f"{named}{name}")
                  for name, fractions in u.series.items()
                  if name != HEAD_SERIES and fractions[0] > 0]
    return lines
