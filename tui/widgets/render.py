"""Pure painters: cells of the timeline (owners, busy fractions, counter values) to strips.

Nothing here knows about widgets or the app: each painter takes arrays and a palette and
returns a Textual :class:`Strip` made of one segment per run of equally styled cells (a
segment per cell costs several times more to build and to send). Trace text reaching a strip
goes through :func:`~proftui.tui.text.safe.safe`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from proftui.themes import Palette
from proftui.tui.text.safe import safe

# Cell classes by busy fraction: how much of a cell's time its row spends in slices.
IDLE, MARK, LIGHT, MEDIUM, HEAVY, FULL = range(6)
_GLYPHS = {IDLE: " ", MARK: "▏", LIGHT: "░", MEDIUM: "▒", HEAVY: "▓", FULL: " "}
_SPARK = "▁▂▃▄▅▆▇█"


def cell_classes(owner: np.ndarray, busy: np.ndarray) -> np.ndarray:
    """The class of each cell: idle without an owner; a zero-length or tiny slice still shows
    (MARK), so that short kernels never vanish at a coarse zoom; FULL from 3/4 busy."""
    # The thresholds rise with the classes: a sum of comparisons is np.select's answer (NaN
    # compares false: MARK), at a fraction of its cost.
    classes = (busy > 0.04).astype(np.int8)
    classes += MARK
    classes += busy >= 0.25
    classes += busy >= 0.5
    classes += busy >= 0.75
    classes[owner < 0] = IDLE
    return classes


class StyleCache:
    """rich Styles by (foreground, background, bold, underline), made once."""

    def __init__(self) -> None:
        self._styles: dict[tuple, Style] = {}
        self.by_key: dict[int, Style] = {}  # painters' own integer keys (same palette)

    def __call__(self, fg: str | None, bg: str | None, bold: bool = False,
                 underline: bool = False) -> Style:
        key = (fg, bg, bold, underline)
        style = self._styles.get(key)
        if style is None:
            # None, not False, for unset attributes: a style laid over another keeps them.
            style = self._styles[key] = Style(color=fg, bgcolor=bg, bold=bold or None,
                                              underline=underline or None)
        return style


def paint_slice_rows(owner: np.ndarray, busy: np.ndarray, colours: np.ndarray,
                     name_of: Callable[[int], str], palette: Palette, styles: StyleCache, *,
                     selected: int = -1, marked: np.ndarray | None = None,
                     cursor_cell: int = -1, background: str | None = None,
                     range_cells: tuple[int, int] | None = None) -> list[list[Segment]]:
    """The segments of slice rows: `owner`, `busy`, `colours` (colour index per cell) and
    `marked` have a row per line. Cells at least 3/4 busy are filled with their owner's colour
    and, where a run of them belongs to one slice, labelled with its name; lighter cells show
    a shade glyph in the owner's colour. The selected slice is drawn in the selection colour;
    `marked` cells (matches of a search, flow partners of the selection) are underlined;
    cells in `range_cells` [first, last) (a selected time range) get the range background.

    The rows of a frame are painted together: a row is narrow, so that the cost of a numpy
    call, not its size, dominates; each call here serves every row at once."""
    n_rows, width = owner.shape
    ground = background or palette.background
    classes = cell_classes(owner, busy)
    is_match = marked if marked is not None else np.zeros(owner.shape, bool)
    # A run continues while the owner (for filled cells) or the look (for the others) holds.
    full = classes == FULL
    look = np.where(full, owner * 2 + 1, (colours * 8 + classes) * 2)
    look = np.where(owner == selected, -2 - classes, look) if selected >= 0 else look
    look = look * 3 + is_match
    run_start = np.empty(owner.shape, bool)  # where a run begins
    run_start[:, 0] = True
    np.not_equal(look[:, 1:], look[:, :-1], out=run_start[:, 1:])
    # Shaded and idle cells: one style per (colour, glyph, cursor or range, underline), looked
    # up by an integer key made for all cells at once; the loop below only slices and appends.
    on_cursor = np.zeros(width, np.int64)  # 1: the cursor's cell, 2: in the range
    if range_cells is not None:
        on_cursor[range_cells[0]: range_cells[1]] = 2
        run_start[:, [c for c in range_cells if 0 < c < width]] = True
    if 0 <= cursor_cell < width:  # the cursor's cell is a run of its own
        on_cursor[cursor_cell] = 1
        run_start[:, [c for c in (cursor_cell, cursor_cell + 1) if c < width]] = True
    colour_key = np.where(owner == selected, -1, colours) if selected >= 0 else colours
    shade_key = (((colour_key + 2) * 8 + classes) * 3 + on_cursor) * 2 + is_match
    flat_starts = np.flatnonzero(run_start)
    starts = flat_starts.tolist()
    class_list, key_list, owner_list = (a.ravel()[flat_starts].tolist()
                                        for a in (classes, shade_key, owner))
    rows: list[list[Segment]] = [[] for _ in range(n_rows)]
    by_key = styles.by_key
    label_start = 0  # a filled run split by the cursor keeps one label across its parts
    label = ""
    n_runs = len(starts)
    for i in range(n_runs):
        row, a = divmod(starts[i], width)
        b = starts[i + 1] - row * width if i + 1 < n_runs and starts[i + 1] % width else width
        cls = class_list[i]
        k = owner_list[i]
        if cls != FULL:
            key = key_list[i]
            style = by_key.get(key)
            if style is None:
                bg = (palette.cursor if a == cursor_cell else palette.range
                      if on_cursor[a] == 2 else ground)
                fg = (None if cls == IDLE else palette.selection if k == selected
                      else palette.colour_at(int(colours[row, a])))
                style = by_key[key] = styles(fg, bg, underline=bool(is_match[row, a]))
            rows[row].append(Segment(_GLYPHS[cls] * (b - a), style))
            continue
        if not a or class_list[i - 1] != FULL or owner_list[i - 1] != k:
            # the first run of the slice's filled stretch: the label spans the stretch
            j = i + 1
            while j < n_runs and starts[j] % width and class_list[j] == FULL \
                    and owner_list[j] == k:
                j += 1
            stretch_end = starts[j] - row * width if j < n_runs and starts[j] % width \
                else width
            label, label_start = _label(name_of(k), stretch_end - a), a
        key = -1 - key_list[i]  # filled cells: the negative keys
        style = by_key.get(key)
        if style is None:
            colour = (palette.selection if k == selected
                      else palette.colour_at(int(colours[row, a])))
            style = styles(palette.label_colour(colour), colour, bold=k == selected,
                           underline=bool(is_match[row, a]))
            if a == cursor_cell:
                style = style + styles(None, palette.cursor)
            by_key[key] = style
        rows[row].append(Segment(label[a - label_start: b - label_start], style))
    return rows


def _label(name: str, width: int) -> str:
    """`name` fitted into a run of `width` cells (with a space each side when it fits)."""
    # One cell per character, so that a run can be cut anywhere (wide characters shown as ?).
    if width < 3:
        return " " * width
    text = safe(name[:width])
    if not text.isascii():
        text = "".join(ch if cell_len(ch) == 1 else "?" for ch in text)
    if len(text) + 1 <= width:
        return f" {text}".ljust(width)
    return f" {text[: width - 2]}…"


PEAK = "▲"  # a memory series' peak on its counter line


def paint_counter(values: np.ndarray, low: float, high: float, palette: Palette,
                  styles: StyleCache, peak_cell: int = -1) -> Strip:
    """A counter as a sparkline: per cell the highest value (NaN where no sample applies);
    `peak_cell`, when on screen, is marked with PEAK (a memory series' highest sample)."""
    width = len(values)
    span = high - low if high > low else 1.0
    level = np.clip(((values - low) / span * (len(_SPARK) - 1)).round(), 0, len(_SPARK) - 1)
    chars = np.array(list(_SPARK))[np.nan_to_num(level, nan=0).astype(np.int64)]
    chars[np.isnan(values)] = " "
    text = "".join(chars.tolist())
    style = styles(palette.counter, palette.background)
    if not 0 <= peak_cell < width:
        return Strip([Segment(text, style)], width)
    peak = styles(palette.match, palette.background, bold=True)
    return Strip([Segment(text[:peak_cell], style), Segment(PEAK, peak),
                  Segment(text[peak_cell + 1:], style)], width)


_RAMP = " ▁▂▃▄▅▆▇█"
_RAMP_CHARS = np.array(list(_RAMP))


def utilisation_chars(fractions: np.ndarray) -> list[str]:
    """Each row of fractions in [0, 1] as bars of eighths of a cell, one character per cell:
    any work at all shows at least the lowest bar, so that a short burst never vanishes at a
    coarse zoom; a full bar only for a cell busy throughout."""
    f = np.clip(np.nan_to_num(np.asarray(fractions, np.float64)), 0.0, 1.0)
    top = len(_RAMP) - 1
    level = np.where(f > 0, np.clip(np.floor(f * top + 0.5), 1, top), 0).astype(np.int64)
    level[(level == top) & (f < 1.0)] = top - 1
    return ["".join(row) for row in _RAMP_CHARS[level].tolist()]


def paint_utilisation_rows(fractions: np.ndarray, colours: list[str], palette: Palette,
                           styles: StyleCache, *, cursor_cell: int = -1,
                           range_cells: tuple[int, int] | None = None) -> list[list[Segment]]:
    """The segments of utilisation lines, a row of `fractions` each: per cell a bar as high
    as the cell's busy fraction, in the row's colour of `colours`, over the cursor's and the
    selected range's backgrounds as the slice rows have them."""
    width = fractions.shape[1]
    # Runs of one background: cut only where the range or the cursor begins or ends.
    lo, hi = range_cells if range_cells is not None else (0, 0)
    on_cursor = 0 <= cursor_cell < width
    cuts = {0, width, lo, hi} | ({cursor_cell, cursor_cell + 1} if on_cursor else set())
    bounds = sorted(c for c in cuts if 0 <= c <= width)
    grounds = [palette.cursor if on_cursor and a == cursor_cell else
               palette.range if lo <= a < hi else palette.background for a in bounds]
    return [[Segment(text[a:b], styles(colour, ground))
             for a, b, ground in zip(bounds, bounds[1:], grounds)]
            for text, colour in zip(utilisation_chars(fractions), colours)]


BUSY_KINDS = ("idle", "compute", "comm exposed", "other")  # what kept a cell's device busy


def busy_kinds(busy: np.ndarray, compute: np.ndarray, exposed: np.ndarray) -> np.ndarray:
    """Per cell, the index in BUSY_KINDS of what held most of its device time: compute,
    communication not under compute, or other device work (copies: busy time neither
    covers); idle where the device did nothing."""
    busy = np.nan_to_num(np.asarray(busy, np.float64))
    compute = np.nan_to_num(np.asarray(compute, np.float64))
    exposed = np.nan_to_num(np.asarray(exposed, np.float64))
    other = np.clip(busy - compute - exposed, 0.0, None)
    kind = np.argmax(np.stack([compute, exposed, other]), axis=0) + 1
    return np.where(busy > 0, kind, 0).astype(np.int64)


def paint_busy_row(busy: np.ndarray, kinds: np.ndarray, colours: list[str], palette: Palette,
                   styles: StyleCache, *, cursor_cell: int = -1,
                   range_cells: tuple[int, int] | None = None) -> list[Segment]:
    """A head utilisation line: per cell a bar as high as `busy`, in the colour of its kind
    (`colours[kinds[cell]]`, see busy_kinds), over the cursor's and the range's backgrounds."""
    width = len(busy)
    text = utilisation_chars(np.asarray(busy)[None])[0]
    ground = np.zeros(width, np.int64)  # 0 background, 1 range, 2 cursor
    if range_cells is not None:
        ground[max(range_cells[0], 0): max(range_cells[1], 0)] = 1
    if 0 <= cursor_cell < width:
        ground[cursor_cell] = 2
    key = np.asarray(kinds, np.int64) * 3 + ground
    cuts = [0, *(np.flatnonzero(np.diff(key)) + 1).tolist(), width]
    grounds = (palette.background, palette.range, palette.cursor)
    return [Segment(text[a:b], styles(colours[int(key[a]) // 3], grounds[int(key[a]) % 3]))
            for a, b in zip(cuts, cuts[1:]) if b > a]


def paint_instants(counts: np.ndarray, palette: Palette, styles: StyleCache) -> Strip:
    """Instant events as markers: one per cell holding any (a diamond where several fall)."""
    chars = np.where(counts > 1, "◆", np.where(counts == 1, "│", " "))
    text = "".join(chars.tolist())
    return Strip([Segment(text, styles(palette.instant, palette.background))], len(counts))


def nice_step(ns_per_cell: float, min_cells: int = 12) -> int:
    """A ruler step (1, 2 or 5 times a power of ten, in ns) at least `min_cells` cells wide."""
    target = max(ns_per_cell * min_cells, 1.0)
    power = 1
    while True:
        for m in (1, 2, 5):
            if m * power >= target:
                return m * power
        power *= 10


_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns"))


def fmt_tick(ns: int, step_ns: int) -> str:
    """A ruler label: `ns` in its largest unit, with as many decimals as the step needs to
    tell neighbouring ticks apart (162.9942 s next to 162.9944 s)."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    scale, unit = next(((sc, u) for sc, u in _UNITS if ns >= sc), (1, "ns"))
    decimals = 0
    while decimals < 9 and step_ns * 10**decimals < scale:
        decimals += 1
    text = f"{ns / scale:.{decimals}f}"
    if decimals:
        text = text.rstrip("0").rstrip(".")
    return f"{sign}{text} {unit}"


def ruler_text(start_ns: int, end_ns: int, width: int, origin_ns: int,
               keep_clear: tuple[int, int] | None = None) -> tuple[str, str]:
    """Two ruler lines: time labels (relative to `origin_ns`) and tick marks. No label is
    written into the cells `keep_clear` (the range's label goes there)."""
    if width <= 0:
        return "", ""
    ns_per_cell = max(end_ns - start_ns, 1) / width
    step = nice_step(ns_per_cell)
    first = -(-(start_ns - origin_ns) // step) * step + origin_ns
    labels = [" "] * width
    ticks = ["─"] * width
    t = first
    while t < end_ns:
        cell = int((t - start_ns) / ns_per_cell)
        if 0 <= cell < width:
            ticks[cell] = "┬"
            text = fmt_tick(t - origin_ns, step) if t != origin_ns else "0"
            # A label that would run past the edge ends at it (its tick stays where it is):
            # "400" cut from "400 ms" would read as another time.
            at = min(cell, width - len(text))
            clear = keep_clear is None or at + len(text) < keep_clear[0] \
                or at > keep_clear[1]
            before = at - 1 if at < cell else at  # moved: a space after the label before
            if at >= 0 and clear and all(c == " " for c in labels[max(before, 0):
                                                                  at + len(text) + 1]):
                labels[at: at + len(text)] = text
        t += step
    return "".join(labels)[:width], "".join(ticks)
