"""Flows drawn over the timeline's slices: connectors, arrow heads and edge markers as cells.

Pure geometry: a flow's two ends, in body rows (0: the first line shown; negative above the
screen, `height` and more below) and cells (negative left of the window, `width` and more
right of it), become the cells to overwrite. A connector leaves the source on its row, runs
along it to the target's first cell, turns there and goes straight down (or up) into the
target, an arrow head just before it; on one row it runs straight to a head before the
target. An end that is off the screen is drawn as far as the screen goes, and for a
labelled flow (the selection's) a marker where it leaves says which way its partner is and
how long the flow took (`→ 1.2 ms`, `↓ 40 µs`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import get_character_cell_size as cell_size
from rich.segment import Segment
from rich.style import Style

from proftui.tui.text.format import fmt_duration

LINE, HEAD, MARKER, PARTNER = "line", "head", "marker", "partner"


@dataclass(frozen=True)
class FlowOnScreen:
    """A flow's source end (`src_row`, `src_cell`: the cell after the source's last) and its
    target's start (`dst_row`, `dst_cell`: the target's first cell), `gap_ns` from the one to
    the other. `partner` ("src", "dst" or "": none) names the end that is not the selected
    slice; `partner_cells` [first, last) is its span on its row, if any is on screen."""

    src_row: int
    src_cell: int
    dst_row: int
    dst_cell: int
    gap_ns: int = 0
    partner: str = ""
    partner_cells: tuple[int, int] | None = None


@dataclass(frozen=True)
class Mark:
    """Cells to overwrite on a row from `cell`: `text` in the look of `kind` (a PARTNER mark
    keeps the cells' text and restyles `width` of them)."""

    cell: int
    text: str
    kind: str
    width: int = 1


def _clip(a: int, b: int, limit: int) -> range:
    """Cells (or rows) a..b, either way round, that lie in [0, limit)."""
    lo, hi = min(a, b), max(a, b)
    return range(max(lo, 0), min(hi, limit - 1) + 1)


def connector(flow: FlowOnScreen, height: int, width: int,
              labelled: bool = False) -> list[tuple[int, Mark]]:
    """The (row, mark) pairs that draw one flow on a body of `height` rows by `width` cells."""
    sr, sc, tr, tc = flow.src_row, flow.src_cell, flow.dst_row, flow.dst_cell
    out: list[tuple[int, Mark]] = []

    def put(row: int, cell: int, text: str, kind: str = LINE) -> None:
        if 0 <= row < height and 0 <= cell < width:
            out.append((row, Mark(cell, text, kind)))

    def run(row: int, cells: range) -> None:  # a horizontal line: one mark
        if 0 <= row < height and len(cells):
            out.append((row, Mark(cells.start, "─" * len(cells), LINE, len(cells))))

    if sr == tr:
        if tc - 1 >= sc:
            run(sr, _clip(sc, tc - 2, width))
            put(sr, tc - 1, "▶", HEAD)
    else:
        down = tr > sr
        if tc >= sc:  # along the source's row to the target's column, and a corner
            run(sr, _clip(sc, tc - 1, width))
            put(sr, tc, "┐" if down else "┘")
        # (a target starting before the source ends: straight out of the source instead)
        step = 1 if down else -1
        for r in _clip(sr + step, tr - step, height):
            put(r, tc, "│")
        put(tr - step, tc, "▼" if down else "▲", HEAD)
    if flow.partner and flow.partner_cells is not None and 0 <= (
            flow.src_row if flow.partner == "src" else flow.dst_row) < height:
        first, last = max(flow.partner_cells[0], 0), min(flow.partner_cells[1], width)
        if first < last:
            row = flow.src_row if flow.partner == "src" else flow.dst_row
            out.append((row, Mark(first, "", PARTNER, last - first)))
    if labelled:
        out.extend(_marker(flow, height, width))
    return out


def _marker(flow: FlowOnScreen, height: int, width: int) -> list[tuple[int, Mark]]:
    """The edge marker of a flow whose partner is off the screen: where the connector leaves
    it (walking from the selected end through the corner), which way the partner lies and the
    flow's time."""
    if flow.partner not in ("src", "dst"):
        return []
    if flow.partner == "dst":
        mine, theirs = (flow.src_row, flow.src_cell), (flow.dst_row, flow.dst_cell)
    else:
        mine, theirs = (flow.dst_row, flow.dst_cell), (flow.src_row, flow.src_cell)
    pr, pc = theirs
    if 0 <= pr < height and 0 <= pc < width:
        return []
    if not (0 <= mine[0] < height and 0 <= mine[1] < width):
        return []  # the selected end is off the screen too: nothing to point from
    corner = (flow.src_row, flow.dst_cell)

    def clamped(point: tuple[int, int]) -> tuple[int, int]:
        return min(max(point[0], 0), height - 1), min(max(point[1], 0), width - 1)

    corner_seen = 0 <= corner[0] < height and 0 <= corner[1] < width
    row, cell = clamped(theirs) if corner_seen else clamped(corner)
    if corner_seen:  # from the corner straight to the partner: one of the two holds
        row, cell = (row, corner[1]) if corner[1] == pc else (corner[0], cell)
    arrows = ("↑" if pr < 0 else "↓" if pr >= height else "") + \
        ("←" if pc < 0 else "→" if pc >= width else "")
    text = f"{arrows} {fmt_duration(abs(flow.gap_ns))}"[:width]
    if cell == width - 1 and pc >= width:
        at = width - len(text)  # against the right edge
    elif cell == 0 and pc < 0:
        at = 0
    else:
        at = min(cell, width - len(text))
    return [(row, Mark(max(at, 0), text, MARKER, len(text)))]


def legend(drawn: int, total: int, height: int, width: int) -> list[tuple[int, Mark]]:
    """The count of flows in the window that were not drawn, at the body's bottom right."""
    if total <= drawn or height < 1:
        return []
    text = f" {drawn} nearest of {total:,} flows "[:width]
    return [(height - 1, Mark(max(width - len(text), 0), text, MARKER, len(text)))]


def overlay(flows: list[FlowOnScreen], height: int, width: int, labelled: int = 0,
            drawn: int = 0, total: int = 0) -> dict[int, list[Mark]]:
    """The marks of every flow by row, in the order they are laid on: the unlabelled flows'
    lines and heads, then the first `labelled` flows' (the selection's), then partners, then
    markers and the legend (`drawn` of `total` flows in the window), so that what matters most
    is drawn last."""
    pairs: list[tuple[int, Mark]] = []
    for k in range(len(flows) - 1, -1, -1):  # the labelled ones, first in the list, last
        pairs.extend(connector(flows[k], height, width, labelled=k < labelled))
    pairs.extend(legend(drawn, total, height, width))
    rank = {LINE: 0, HEAD: 1, PARTNER: 2, MARKER: 3}
    pairs.sort(key=lambda pair: rank[pair[1].kind])  # stable: the order of flows holds
    by_row: dict[int, list[Mark]] = {}
    for row, mark in pairs:
        by_row.setdefault(row, []).append(mark)
    return by_row


def apply_marks(segments: list[Segment], marks: list[Mark], width: int,
                looks: dict[str, Style]) -> list[Segment]:
    """A row's segments (`width` cells) with its marks laid on in order: a later mark covers
    an earlier one; `looks` gives each kind's style (a PARTNER's is laid over the cells')."""
    cells: list[tuple[str, Style | None]] = []
    for segment in segments:  # one entry per cell (a wide character: its cell, then "")
        for ch in segment.text:
            cells.append((ch, segment.style))
            if cell_size(ch) == 2:
                cells.append(("", segment.style))
    cells = (cells + [(" ", None)] * width)[:width]
    for mark in marks:
        look = looks[mark.kind]
        for k in range(mark.width):
            c = mark.cell + k
            if not 0 <= c < width:
                continue
            if mark.kind == PARTNER:
                ch, style = cells[c]
                cells[c] = (ch, look if style is None else style + look)
            else:
                cells[c] = (mark.text[k] if k < len(mark.text) else " ", look)
    for c in range(width):  # a wide character cut in half by a mark becomes a space
        if cells[c][0] == "" and (c == 0 or cell_size(cells[c - 1][0] or " ") != 2):
            cells[c] = (" ", cells[c][1])
        elif c + 1 < width and cells[c][0] and cell_size(cells[c][0]) == 2 and cells[c + 1][0]:
            cells[c] = (" ", cells[c][1])
    out: list[Segment] = []
    start = 0
    for c in range(1, width + 1):
        if c == width or cells[c][1] is not cells[start][1]:
            out.append(Segment("".join(ch for ch, _ in cells[start:c]), cells[start][1]))
            start = c
    return out
