"""The timeline's painter: a state's rows turned into strips, with the frame caches it keeps.

The analysis behind the utilisation band (~15 ms to import) and the memory peaks (~8 ms) is
imported as they are first drawn: the first frame of a trace has no band, and memory counters
only where the trace has them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from proftui.core.model.arrays import distinct
from proftui.core.model.index import TraceIndex
from proftui.core.ops.rank_offsets import RankOffsets
from proftui.core.query.flows import FlowEnds
from proftui.core.query.rows import cell_boundaries, paint_cells
from proftui.themes import Palette, palette_for
from proftui.tui.text.format import fmt_duration
from proftui.tui.text.safe import safe
from proftui.tui.text.widths import first_fitting
from proftui.tui.widgets.flow_overlay import (
    HEAD,
    LINE,
    MARKER,
    PARTNER,
    FlowOnScreen,
    apply_marks,
    overlay,
)
from proftui.tui.widgets.folded import band_label_forms
from proftui.tui.widgets.lines import _KINDS, COUNTER, INSTANTS, PROCESS, SLICES, Lines
from proftui.tui.widgets.render import (
    StyleCache,
    busy_kinds,
    paint_busy_row,
    paint_counter,
    paint_instants,
    paint_slice_rows,
    paint_utilisation_rows,
    ruler_text,
)
from proftui.tui.widgets.timeline_state import RULER_LINES, TimelineState, UtilLine

MAX_FLOWS_SHOWN = 64  # with every flow shown: the nearest to the cursor, the rest counted


def shift_text(alignment: RankOffsets | None, group: str, short: bool = False) -> str:
    """How a rank's tracks are drawn while the ranks are aligned ("" when they are not): its
    shift on screen (the ruler's time less its own: minus its offset), "reference" for the
    rank whose clock the ruler keeps, and for a rank without the iteration that it is not
    shifted. `short`: the form for a utilisation line's label."""
    if alignment is None or not group:
        return ""
    if group == alignment.reference:
        return "ref" if short else "reference"
    if group in alignment.missing:
        return f"no #{alignment.number}" if short else f"not shifted: no #{alignment.number}"
    shift = -alignment.offset_of(group)
    signed = f"{'+' if shift >= 0 else ''}{fmt_duration(shift)}"
    return signed if short else f"shifted {signed}"


@dataclass(frozen=True)
class SliceCells:
    """A slice line's cells: the slice owning each (-1: none) and how busy each is."""

    owner: np.ndarray
    busy: np.ndarray


@dataclass(frozen=True)
class CounterCells:
    """A counter line's cells: a value each (NaN before the first sample) and the cell of
    its memory peak (-1: none on screen)."""

    values: np.ndarray
    peak_cell: int


@dataclass(frozen=True)
class InstantCells:
    """An instants line's cells: how many instants fall in each."""

    counts: np.ndarray


LineCells = SliceCells | CounterCells | InstantCells


@dataclass
class CellsFrame:
    """The cells of the visible lines, by line, and the window and lines they are of."""

    key: tuple | None = None
    by_line: dict[int, LineCells] = field(default_factory=dict)


@dataclass
class UtilFrame:
    """Each shown utilisation series per cell, by (group, series), and the window of it."""

    key: tuple | None = None
    fractions: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)


@dataclass
class BodiesFrame:
    """The visible lines' bodies (right of the gutter) and what they were painted from."""

    cells: dict | None = None
    marks: np.ndarray | None = None
    styles: StyleCache | None = None
    look: tuple | None = None  # the cursor's cell, the selection, the range's cells
    bodies: dict[int, list[Segment]] = field(default_factory=dict)


@dataclass
class FlowFrame:
    """The bodies with the flows laid over them, and the bodies and choice they came from."""

    bodies: dict | None = None
    show_all: bool = False
    overlaid: dict[int, list[Segment]] = field(default_factory=dict)


@dataclass
class UtilStrips:
    """The utilisation lines painted, and what from."""

    fractions: dict | None = None
    lines: list[UtilLine] | None = None
    styles: StyleCache | None = None
    look: tuple | None = None  # the cursor's cell, the range's cells, the gutter's width,
    # the lines on screen and the groups expanded
    strips: list[Strip] = field(default_factory=list)


@dataclass
class GutterFrame:
    """The gutters painted, by (line, focused line, widget focused), and for which lines,
    styles and width."""

    lines: Lines | None = None
    styles: StyleCache | None = None
    width: int = 0
    alignment: RankOffsets | None = None  # the headers say each rank's shift
    painted: dict[tuple[int, bool, bool], Segment] = field(default_factory=dict)
    # process headers' whole labels, by (line, cells right of the gutter)
    headers: dict[tuple[int, int], str] = field(default_factory=dict)


@dataclass
class RulerFrame:
    """The ruler's labels and ticks, and the arguments of ruler_text they came from."""

    args: tuple | None = None
    labels: str = ""
    ticks: str = ""


class TimelinePainter:
    """Paints the lines of a :class:`TimelineState` as strips, keeping each frame's work.

    Each frame asks the core for the owners and busy fractions of every visible cell at once
    (:func:`proftui.core.query.rows.paint_cells`), then paints strips with
    :mod:`proftui.tui.widgets.render`. What a frame computed or painted is kept, with what it
    was made from, for the next: zooming repaints the bodies but not the gutters, moving the
    cursor repaints the bodies but queries nothing."""

    def __init__(self, state: TimelineState, palette: Palette | None = None) -> None:
        self.state = state
        self.palette: Palette = palette or palette_for("proftui-dark")
        self.styles = StyleCache()
        self.cells = CellsFrame()
        self.util = UtilFrame()
        self.bodies = BodiesFrame()
        self.flows = FlowFrame()
        self.util_strips = UtilStrips()
        self.gutters = GutterFrame()
        self.ruler = RulerFrame()
        # Of the index last painted: colour index by name (a string id, -1 until first
        # needed), counters' value ranges, memory series' peak times.
        self._index: TraceIndex | None = None
        self._colour_of_name = np.zeros(0, np.int16)
        self._counter_range: dict[int, tuple[float, float]] = {}
        self._peaks: dict[int, int] | None = None
        # Of the flows: their ends (per index and alignment), the selection's edges, and
        # each line of the lines last drawn by row id and by collapsed process.
        self._flow_ends: tuple[TraceIndex, np.ndarray | None, FlowEnds] | None = None
        self._selected_edges: tuple[FlowEnds, int, np.ndarray] | None = None
        self._line_maps: tuple[Lines, np.ndarray, np.ndarray] | None = None

    def set_palette(self, palette: Palette) -> None:
        self.palette = palette
        self.styles = StyleCache()
        self._colour_of_name = np.zeros(0, np.int16)

    def forget_cells(self) -> None:
        """Query the cells again at the next frame (as a benchmark of queries wants)."""
        self.cells.key = None

    def _same_index(self) -> TraceIndex:
        index = self.state.index
        assert index is not None
        if index is not self._index:
            self._index = index
            self._colour_of_name = np.zeros(0, np.int16)
            self._counter_range = {}
            self._peaks = None
        return index

    # -- a line ---------------------------------------------------------------------------------

    def line(self, y: int, has_focus: bool = True) -> Strip:
        """Screen row `y` of the timeline (`has_focus`: the widget's, for the focused line)."""
        state = self.state
        geometry = state.geometry
        width = geometry.gutter_width + geometry.cells
        if state.index is None or state.rows is None:
            return self._blank(width)
        if y < RULER_LINES:
            return self.ruler_line(y)
        body_top = state.body_top
        if y < body_top:
            strips = self.utilisation_strips()
            return strips[y - RULER_LINES] if y - RULER_LINES < len(strips) \
                else self._blank(width)
        n = state.top_line + y - body_top
        if not 0 <= n < len(state.lines):
            return self._blank(width)
        body = self.flow_bodies().get(n)
        if body is None:  # not a line of the last resize's height
            body = list(self._body(n))
        return Strip([self.gutter(n, has_focus), *body], width)

    def _blank(self, width: int) -> Strip:
        ground = self.styles(self.palette.text, self.palette.background)
        return Strip([Segment(" " * width, ground)], width)

    def owner_at(self, line: int, cell: int) -> int:
        """The slice painted at a cell of a line (-1: none, or not a slice line on screen)."""
        cached = self.cells.by_line.get(line)
        if not isinstance(cached, SliceCells) or not 0 <= cell < len(cached.owner):
            return -1
        return int(cached.owner[cell])

    # -- cells ----------------------------------------------------------------------------------

    def compute_cells(self) -> dict[int, LineCells]:
        """Owners and busy fractions (or counter values, instant counts) of the visible lines,
        computed once per window and scroll position."""
        state = self.state
        index = self._same_index()
        assert state.rows is not None
        view = state.viewport
        key = (view.start_ns, view.end_ns, state.cells, state.top_line, state.body_height,
               id(state.lines), state.generation)
        if key == self.cells.key:
            return self.cells.by_line
        found_cells: dict[int, LineCells] = {}
        self.cells = CellsFrame(key, found_cells)
        lines = state.lines
        visible = state.visible_lines()
        slice_lines = [n for n in visible if lines[n].kind == SLICES]
        shifts = {n: state.shift_of_line(n) for n in visible}
        # one window per shift: a rank's (aligned), or a step's (folded)
        for shift in sorted({shifts[n] for n in slice_lines}):
            mine = [n for n in slice_lines if shifts[n] == shift]
            found = paint_cells(index, state.rows, np.array([lines[n].item for n in mine]),
                                view.start_ns + shift, view.end_ns + shift, state.cells)
            for k, n in enumerate(mine):
                found_cells[n] = SliceCells(found.owner[k], found.busy[k])
        screen_edges = cell_boundaries(view.start_ns, view.end_ns, state.cells)
        if state.folded is not None:
            self._clip_to_bands(found_cells, slice_lines, screen_edges)
        for n in visible:
            line = lines[n]
            edges = screen_edges + shifts[n]
            if line.kind == COUNTER:
                found_cells[n] = CounterCells(self._counter_cells(line.item, edges),
                                              self._peak_cell(line.item, edges))
            elif line.kind == INSTANTS:
                found_cells[n] = InstantCells(self._instant_cells(line.item, edges))
        return found_cells

    def _clip_to_bands(self, found_cells: dict[int, LineCells], slice_lines: list[int],
                       edges: np.ndarray) -> None:
        """Folded, each band's cells outside its own step [0, its length) are blank (a
        cell whose middle is outside): the
        work of the steps before and after is not its own, and a longer step reaches further
        right."""
        folded = self.state.folded
        assert folded is not None
        for n in slice_lines:
            band = folded.band_of(n)
            cells = found_cells[n]
            if band is None or not isinstance(cells, SliceCells):
                continue
            middle = (edges[:-1] + edges[1:]) // 2  # a cell is the band's if its middle is
            outside = (middle < 0) | (middle >= band.dur_ns)
            if outside.any():
                found_cells[n] = SliceCells(np.where(outside, -1, cells.owner),
                                            np.where(outside, 0, cells.busy))

    def _counter_cells(self, series: int, edges: np.ndarray) -> np.ndarray:
        """Per cell the highest sample in it, else the value carried from the sample before."""
        a = self._same_index().arrays
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
        index = self._same_index()
        if self._peaks is None:
            from proftui.core.analysis.memory import memory_series, series_peak

            self._peaks = {m.series: found[0] for m in memory_series(index)
                           if (found := series_peak(index, m.series)) is not None}
        at = self._peaks.get(series)
        if at is None or not edges[0] <= at < edges[-1]:
            return -1
        return int(np.searchsorted(edges, at, side="right")) - 1

    def _instant_cells(self, track: int, edges: np.ndarray) -> np.ndarray:
        a = self._same_index().arrays
        tracks = a["instants.track"]
        lo, hi = np.searchsorted(tracks, [track, track + 1])
        ts = a["instants.ts"][lo:hi]
        k = np.searchsorted(ts, edges, side="left")
        return np.diff(k)

    def utilisation_cells(self) -> dict[tuple[str, str], np.ndarray]:
        """Each series per cell of the window, of the groups on screen in the band,
        computed once per window."""
        state = self.state
        index = self._same_index()
        view = state.viewport
        groups = tuple(dict.fromkeys(line.group for line in state.util_on_screen()))
        key = (view.start_ns, view.end_ns, state.cells, id(index), state.generation, groups)
        if key == self.util.key:
            return self.util.fractions
        fractions: dict[tuple[str, str], np.ndarray] = {}
        self.util = UtilFrame(key, fractions)
        from proftui.core.analysis.utilisation import utilisation

        by_shift: dict[int, set[str]] = {}  # each rank's lines over its own window
        for group in groups:
            by_shift.setdefault(state.shift_of_group(group), set()).add(group)
        for shift, shifted in by_shift.items():
            found = utilisation(index, view.start_ns + shift, view.end_ns + shift,
                                state.cells, state.tables, shifted)
            fractions.update({(u.group, name): series for u in found
                              for name, series in u.series.items()})
        return fractions

    # -- colours --------------------------------------------------------------------------------

    def _colours(self, owner: np.ndarray) -> np.ndarray:
        """Colour index per cell owner: its reserved `cname` if any, else its name's colour."""
        index = self._same_index()
        a = index.arrays
        safe_owner = np.maximum(owner, 0)
        names = a["slices.name"][safe_owner]
        table = self._colour_of_name
        if len(table) != len(index.strings):
            table = self._colour_of_name = np.full(len(index.strings), -1, np.int16)
        colours = table[names].astype(np.int64)
        new = colours < 0
        if new.any():  # names met for the first time
            for k in distinct(names[new]).tolist():
                table[k] = self.palette.colour_index(index.strings[k])
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
        index = self.palette.reserved_index(self._same_index().strings[cname_id])
        return -1 if index is None else index

    # -- gutters --------------------------------------------------------------------------------

    def gutter(self, n: int, has_focus: bool = True) -> Segment:
        """Line `n`'s label. Zooming and panning leave it alone: it is painted once per
        line, focus state, set of lines, palette and width."""
        state = self.state
        frame = self._gutter_frame()
        key = (n, n == state.focus_line, has_focus)
        segment = frame.painted.get(key)
        if segment is None:
            segment = frame.painted[key] = self._paint_gutter(n, has_focus)
        return segment

    def _gutter_frame(self) -> GutterFrame:
        """The gutters painted, forgotten when the lines, styles or width changed."""
        state = self.state
        frame = self.gutters
        if frame.lines is not state.lines or frame.styles is not self.styles \
                or frame.width != state.gutter_width or frame.alignment is not state.alignment:
            frame = self.gutters = GutterFrame(state.lines, self.styles, state.gutter_width,
                                               state.alignment)
        return frame

    def _paint_gutter(self, n: int, has_focus: bool) -> Segment:
        state = self.state
        line = state.lines[n]
        width = state.gutter_width
        focused = n == state.focus_line and has_focus
        bg = self.palette.focus if n == state.focus_line else self.palette.gutter
        if state.folded is not None:
            return self._band_gutter(n, bg, focused)
        if line.kind == PROCESS:
            text = self.header_text(n)[:width]
            style = self.styles(self.palette.text, bg, bold=True, underline=focused)
            return Segment(text.ljust(width) if len(text) == width else
                           text[: width - 1].ljust(width - 1) + " ", style)
        pinned = n < state.lines.n_pinned and line.label
        forms = (state.lines.label_forms(n) if pinned and state.lines.titled[n]
                 else [line.label])
        # a track's name cut shows it (…); a pinned one gives up its process first
        text = f"{'⚲' if pinned else ' '} {first_fitting([safe(f) for f in forms], width - 3)}"
        colour = self.palette.text if line.kind == SLICES else self.palette.dim_text
        style = self.styles(colour, bg, underline=focused)
        return Segment(text[: width - 1].ljust(width - 1) + " ", style)

    def _band_gutter(self, n: int, bg: str, focused: bool) -> Segment:
        """Folded, a band's first line says its step (`#7 12.3 ms (+21%) slowest`, a slow
        step's in the iteration colour, bold), the others their track's name."""
        state = self.state
        folded = state.folded
        assert folded is not None
        width = state.gutter_width
        band = folded.band_of(n)
        k = int(folded.band[n])
        if band is not None and int(folded.first[k]) == n:
            named = len({b.group for b in folded.fold.bands}) > 1
            forms = [safe(f) for f in band_label_forms(band, named)]
            slow = "slowest" in band.mark or "outlier" in band.mark
            text = first_fitting(forms, width - 1)
            style = self.styles(self.palette.iteration if slow else self.palette.text, bg,
                                bold=True, underline=focused)
        else:
            label = state.lines[n].label
            text = f"  {first_fitting([safe(label)], width - 3)}" if label else ""
            style = self.styles(self.palette.dim_text, bg, underline=focused)
        return Segment(text[: width - 1].ljust(width - 1) + " ", style)

    def header_text(self, n: int) -> str:
        """A process header's label: its mark (▶ collapsed, ▼ expanded), its name, how many
        of its tracks are hidden and, with the ranks aligned, its rank's shift. The header's
        body is a rule with nothing to show, so a name longer than the gutter goes on into
        it, up to half the row, before it gives way (its pid first, then its labels)."""
        state = self.state
        frame = self._gutter_frame()
        text = frame.headers.get((n, state.cells))
        if text is None:
            line = state.lines[n]
            mark = "▶" if line.process in state.layout_state.collapsed else "▼"
            hidden = state.hidden_in(line.process)
            note = f" +{hidden} hidden" if hidden else ""  # kept whole, as the shift
            room = max(state.gutter_width - 1, (state.gutter_width + state.cells) // 2)
            shift = shift_text(state.alignment, state.group_of(line.process))
            if shift:  # in the rule's room, not the name's, up to three quarters of the row
                note += f"  {shift}"
                room = min(room + len(shift) + 2, (state.gutter_width + state.cells) * 3 // 4)
            forms = [safe(form) for form in state.lines.label_forms(n)]
            text = frame.headers[n, state.cells] = \
                f"{mark} {first_fitting(forms, max(room - 2 - len(note), 1))}{note}"
        return text

    # -- bodies ---------------------------------------------------------------------------------

    def painted_bodies(self) -> dict[int, list[Segment]]:
        """The segments right of the gutter of each visible line, painted together (a numpy
        call serves every slice line at once) and again only when the cells, the cursor's
        cell, the selection, the marks, the range or the palette changed."""
        state = self.state
        cells = self.compute_cells()
        view = state.viewport
        look = (view.cell_of(state.cursor_ns), state.selected,
                view.range_cells(state.screen_range))
        frame = self.bodies
        if frame.cells is cells and frame.marks is state.marks \
                and frame.styles is self.styles and frame.look == look:
            return frame.bodies
        bodies: dict[int, list[Segment]] = {}
        slice_lines = [n for n, data in cells.items() if isinstance(data, SliceCells)]
        if slice_lines:
            owner = np.stack([cells[n].owner for n in slice_lines])  # type: ignore[union-attr]
            busy = np.stack([cells[n].busy for n in slice_lines])  # type: ignore[union-attr]
            marked = (None if state.marks is None
                      else state.marks[np.maximum(owner, 0)] & (owner >= 0))
            painted = paint_slice_rows(owner, busy, self._colours(owner),
                                       self._same_index().slice_name,
                                       self.palette, self.styles, selected=state.selected,
                                       marked=marked, cursor_cell=look[0],
                                       range_cells=look[2])
            bodies.update(zip(slice_lines, painted))
        for n in state.visible_lines():
            if n not in bodies:
                bodies[n] = list(self._body(n))
        self.bodies = BodiesFrame(cells, state.marks, self.styles, look, bodies)
        return bodies

    def _body(self, n: int) -> Strip:
        """A line other than a slice line, right of the gutter."""
        state = self.state
        line = state.lines[n]
        cells = state.cells
        if line.kind == PROCESS:  # a rule, after the end of a label too long for the gutter
            whole = self.header_text(n)
            rest = f"{whole[state.gutter_width:]} " if len(whole) >= state.gutter_width else ""
            return Strip([Segment(rest, self.styles(self.palette.text, self.palette.background,
                                                    bold=True)),
                          Segment("─" * (cells - len(rest)),
                                  self.styles(self.palette.dim_text, self.palette.background))],
                         cells)
        data = self.cells.by_line.get(n)
        if isinstance(data, CounterCells):
            low, high = self._counter_range.get(line.item, (0.0, 1.0))
            return paint_counter(data.values, low, high, self.palette, self.styles,
                                 peak_cell=data.peak_cell)
        if isinstance(data, InstantCells):
            return paint_instants(data.counts, self.palette, self.styles)
        return Strip([Segment(" " * cells, self.styles(None, self.palette.background))], cells)

    def utilisation_strips(self) -> list[Strip]:
        """The utilisation lines on screen, painted together and again only when their
        cells, the cursor's cell, the range or the palette changed."""
        state = self.state
        fractions_of = self.utilisation_cells()
        view = state.viewport
        shown = state.util_on_screen()
        look = (view.cell_of(state.cursor_ns), view.range_cells(state.screen_range),
                state.gutter_width, tuple(shown), frozenset(state.band.expanded),
                state.alignment)
        frame = self.util_strips
        if frame.fractions is fractions_of and frame.lines is state.band.shown \
                and frame.styles is self.styles and frame.look == look:
            return frame.strips
        from proftui.core.analysis.utilisation import SERIES

        cells = state.cells
        blank = np.zeros(cells)  # cannot happen for a group of the same index

        def series(line: UtilLine, name: str) -> np.ndarray:
            return fractions_of.get((line.group, name), blank)

        strips = []
        for k, line in enumerate(shown):
            if line.head:
                colours = [self.palette.colour_at(list(SERIES).index(name))
                           for name in ("device busy", "compute", "comm exposed",
                                        "device busy")]
                busy = series(line, "device busy")
                kinds = busy_kinds(busy, series(line, "compute"),
                                   series(line, "comm exposed"))
                body = paint_busy_row(busy, kinds, colours, self.palette, self.styles,
                                      cursor_cell=look[0], range_cells=look[1])
            else:
                colour = self.palette.colour_at(list(SERIES).index(line.series))
                body = paint_utilisation_rows(series(line, line.series)[None], [colour],
                                              self.palette, self.styles,
                                              cursor_cell=look[0], range_cells=look[1])[0]
            strips.append(Strip([self._util_gutter(line, k, len(shown)), *body],
                                state.gutter_width + cells))
        self.util_strips = UtilStrips(fractions_of, state.band.shown, self.styles, look,
                                      strips)
        return strips

    # -- flows ----------------------------------------------------------------------------------

    def flow_bodies(self) -> dict[int, list[Segment]]:
        """The visible lines' bodies with the flows drawn over them (see
        :mod:`proftui.tui.widgets.flow_overlay`): the selection's, labelled, and with
        `state.show_flows` the nearest others in view. Laid on again only when the bodies were
        repainted or the choice changed."""
        bodies = self.painted_bodies()
        state = self.state
        frame = self.flows
        if frame.bodies is bodies and frame.show_all == state.show_flows:
            return frame.overlaid
        overlaid = bodies
        by_row = self.flow_marks()
        if by_row:
            palette = self.palette
            line = self.styles(palette.flow, palette.background, bold=True)
            looks = {LINE: line, HEAD: line,
                     MARKER: self.styles(palette.background, palette.flow, bold=True),
                     PARTNER: Style(color=palette.label_colour(palette.flow),
                                    bgcolor=palette.flow, bold=True)}
            overlaid = dict(bodies)
            for row, marks in by_row.items():
                n = state.top_line + row
                if n in overlaid:
                    overlaid[n] = apply_marks(overlaid[n], marks, state.cells, looks)
        self.flows = FlowFrame(bodies, state.show_flows, overlaid)
        return overlaid

    def flow_marks(self) -> dict[int, list]:
        """The marks of the flows to draw, by body row (0: the first line shown)."""
        state = self.state
        index = self._same_index()
        if not len(index.arrays["flows.src_slice"]) or state.folded is not None or (
                state.selected < 0 and not state.show_flows):
            return {}
        ends = self.flow_ends()
        mine = self.selected_edges(ends)
        others = np.zeros(0, np.int64)
        drawn = total = 0
        if state.show_flows:
            view = state.viewport
            found = ends.in_window(view.start_ns, view.end_ns,
                                   view.zoom_anchor(state.cursor_ns), MAX_FLOWS_SHOWN)
            others = found.edges[~np.isin(found.edges, mine)]
            drawn, total = len(found.edges), found.total
        flows = self.flows_on_screen(ends, np.concatenate([mine, others]), len(mine))
        return overlay(flows, len(state.visible_lines()), state.cells,
                       labelled=sum(1 for f in flows if f.partner), drawn=drawn, total=total)

    def flow_ends(self) -> FlowEnds:
        """The index's flows with their drawn ends, made once per index and alignment."""
        index = self._same_index()
        shift = self.state.track_shift
        cached = self._flow_ends
        if cached is None or cached[0] is not index or cached[1] is not shift:
            cached = self._flow_ends = (index, shift, FlowEnds(index, shift))
        return cached[2]

    def selected_edges(self, ends: FlowEnds) -> np.ndarray:
        """The positions (in `ends`) of the selected slice's edges, found once a selection."""
        selected = self.state.selected
        if selected < 0:
            return np.zeros(0, np.int64)
        cached = self._selected_edges
        if cached is None or cached[0] is not ends or cached[1] != selected:
            cached = self._selected_edges = (ends, selected, ends.of_slice(selected))
        return cached[2]

    def lines_of(self, slices: np.ndarray) -> np.ndarray:
        """The line each slice is drawn on: its row's, or its collapsed process's header
        (-1: its track is hidden)."""
        state = self.state
        index = self._same_index()
        assert state.rows is not None
        lines = state.lines
        if self._line_maps is None or self._line_maps[0] is not lines:
            by_row = np.full(state.rows.n_rows, -1, np.int64)
            slice_lines = np.flatnonzero(lines.kind == _KINDS.index(SLICES))
            by_row[lines.item[slice_lines]] = slice_lines
            by_process = np.full(len(index.arrays["processes.group"]), -1, np.int64)
            headers = np.flatnonzero(lines.kind == _KINDS.index(PROCESS))
            collapsed = np.isin(lines.process[headers], list(state.layout_state.collapsed))
            by_process[lines.process[headers[collapsed]]] = headers[collapsed]
            self._line_maps = (lines, by_row, by_process)
        _, by_row, by_process = self._line_maps
        a = index.arrays
        track = a["slices.track"][slices]
        found = by_row[state.rows.track_first_row[track] + a["slices.depth"][slices]]
        process = a["tracks.process"][track]
        header = np.where(process >= 0, by_process[np.maximum(process, 0)], -1)
        return np.where(found >= 0, found, header)

    def flows_on_screen(self, ends: FlowEnds, edges: np.ndarray,
                        n_mine: int) -> list[FlowOnScreen]:
        """The edges at `edges` (the first `n_mine` the selection's) as rows and cells of the
        body; an edge with a hidden end is left out."""
        state = self.state
        view = state.viewport
        if not len(edges):
            return []
        src, dst = ends.src[edges], ends.dst[edges]
        src_line, dst_line = self.lines_of(src), self.lines_of(dst)

        def cells(t: np.ndarray) -> np.ndarray:
            return np.floor((t - view.start_ns) / view.ns_per_cell).astype(np.int64)

        src_cell = cells(ends.src_end[edges] - 1) + 1
        dst_cell = cells(ends.dst_start[edges])
        out = []
        for k in np.flatnonzero((src_line >= 0) & (dst_line >= 0)).tolist():
            partner, span = "", None
            if k < n_mine:  # the selection's: its partner highlighted
                partner = "dst" if int(src[k]) == state.selected else "src"
                other = int(dst[k] if partner == "dst" else src[k])
                start = state.shown_start(other)
                end = start + int(self._same_index().arrays["slices.dur"][other])
                span = (view.cell_of(start), view.cell_of(max(end - 1, start)) + 1)
            out.append(FlowOnScreen(int(src_line[k]) - state.top_line, int(src_cell[k]),
                                    int(dst_line[k]) - state.top_line, int(dst_cell[k]),
                                    int(ends.gap[edges[k]]), partner, span))
        return out

    def _util_gutter(self, line: UtilLine, k: int, rows: int) -> Segment:
        """A utilisation line's label: a head's mark (▶ folded, ▼ expanded) and its group,
        a series indented under it; on the band's first and last rows, how many lines are
        above (↑) and below (↓) when they do not all fit."""
        state = self.state
        band = state.band
        width = state.gutter_width
        top = band.first(state.geometry.height)
        above, below = top, len(band.shown) - top - rows
        note = (f" ↑{above}" if k == 0 and above else "") or \
            (f" ↓{below}" if k == rows - 1 and below > 0 else "")
        forms = [safe(form) for form in band.label_forms(line, len(band.groups()) > 1)]
        shift = shift_text(state.alignment, line.group, short=True) if line.head else ""
        if shift:  # the rank and its shift ("rank 1 -37 us") on every head alike
            forms = [f"{forms[-1]} {shift}", *forms]
        lead = f"{band.mark(line)} " if line.head else "   "
        text = lead + first_fitting(forms, max(width - 1 - len(lead) - len(note), 1))
        text = text[: width - 1 - len(note)].ljust(width - 1 - len(note)) + note + " "
        colour = self.palette.text if line.head else self.palette.dim_text
        return Segment(text[:width], self.styles(colour, self.palette.gutter))

    # -- the ruler ------------------------------------------------------------------------------

    def ruler_line(self, y: int) -> Strip:
        """Time labels (y 0) or ticks with the iterations' starts (y 1); the cursor's column
        is highlighted and its time, or the window's length, shown in the gutter."""
        state = self.state
        index = self._same_index()
        view = state.viewport
        cells = state.cells
        origin = index.start_ns if state.origin_ns is None else state.origin_ns
        if state.folded is not None:  # in time from each step's start
            origin = 0
        span = view.range_cells(state.screen_range)
        label, at = "", 0
        if span is not None and state.range is not None:
            label = f"[{fmt_duration(state.range[1] - state.range[0])}]"
            at = max(min(span[0], cells - len(label)), 0)
        # Both lines come from one ruler_text: the second line of a frame reuses the first's.
        args = (view.start_ns, view.end_ns, cells, origin,
                (at, at + len(label)) if label else None)
        if self.ruler.args != args:
            self.ruler = RulerFrame(args, *ruler_text(*args))
        if y == 0:
            head = f" @ {fmt_duration(state.cursor_ns - origin)}"
            chars = list(self.ruler.labels)
        else:
            head = f" ↔ {fmt_duration(view.end_ns - view.start_ns)}"
            chars = list(self.ruler.ticks)
        chars += [" "] * (cells - len(chars))
        plain = self.styles(self.palette.dim_text, self.palette.background)
        styles: list[Style] = [plain] * cells
        if y == 1 and state.folded is None:
            mark = self.styles(self.palette.iteration, self.palette.background)
            for it in state.iterations:
                cell = view.cell_of(it.start_ns - state.shift_of_group(it.group))
                for k, ch in enumerate(f"┃#{it.number}"):
                    if 0 <= cell + k < cells:
                        chars[cell + k], styles[cell + k] = ch, mark
        if span is not None:
            band = self.styles(self.palette.text, self.palette.range)
            styles[span[0]: span[1]] = [band] * (span[1] - span[0])
            if y == 0 and label:
                for k, ch in enumerate(label):
                    if 0 <= at + k < cells:
                        chars[at + k], styles[at + k] = ch, band
        cursor = view.cell_of(state.cursor_ns)
        if 0 <= cursor < cells:
            styles[cursor] = self.styles(self.palette.text, self.palette.cursor)
        gutter_width = state.gutter_width
        segments = [Segment(head[:gutter_width].ljust(gutter_width),
                            self.styles(self.palette.dim_text, self.palette.gutter))]
        start = 0
        for cell in range(1, cells):
            if styles[cell] is not styles[start]:
                segments.append(Segment("".join(chars[start:cell]), styles[start]))
                start = cell
        segments.append(Segment("".join(chars[start:]), styles[start]))
        return Strip(segments, gutter_width + cells)
