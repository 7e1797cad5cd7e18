"""Charts drawn as inline SVG text: stacked bars on one time scale and a rank x iteration
strip. Every text in them comes from the profile and is escaped here."""

from __future__ import annotations

from proftui.tui.report.content import Bars, Strip
from proftui.tui.report.escape import html_text
from proftui.tui.text.format import fmt_duration

WIDTH = 1000
LABEL_WIDTH = 150  # room for a row's label left of the bars
ROW = 18
GAP = 4
LEGEND_ROW = 18
# The strip's ramp: from the cluster's smallest value (pale) to its largest (dark red).
COOL, HOT = (255, 237, 160), (189, 0, 38)
SLOWEST_MARK = "#000000"


def stacked_bars(bars: Bars) -> str:
    """`bars` as one SVG: a legend of the parts present, then a bar per row."""
    shown = [k for k, part in enumerate(bars.parts) if any(v[k] for _, v in bars.rows)]
    legend, height = _legend([bars.parts[k] for k in shown])
    scale = max((sum(v) for _, v in bars.rows), default=0) or 1
    room = WIDTH - LABEL_WIDTH - 10
    out = []
    top = height + GAP
    for n, (label, values) in enumerate(bars.rows):
        y = top + n * (ROW + GAP)
        out.append(_label(label, y))
        x = float(LABEL_WIDTH)
        for k in shown:
            if values[k] <= 0:
                continue
            part, width = bars.parts[k], values[k] / scale * room
            out.append(f'<rect x="{x:.2f}" y="{y}" width="{max(width, 0.5):.2f}" '
                       f'height="{ROW}" fill="{part.colour}" data-row="{html_text(label)}" '
                       f'data-part="{part.key}" data-ns="{values[k]}"><title>'
                       f'{html_text(label)}: {html_text(part.label)} '
                       f'{fmt_duration(values[k])}</title></rect>')
            x += width
    bottom = top + len(bars.rows) * (ROW + GAP)
    out.append(_axis(scale, room, bottom))
    return _svg(bars.title, legend + "".join(out), bottom + 20)


def heat_strip(strip: Strip) -> str:
    """`strip` as one SVG: a row per rank, a cell per iteration, its number above every
    tenth column, the worst cell outlined; warm-up cells drawn faint."""
    n = max(len(strip.iterations), 1)
    cell = (WIDTH - LABEL_WIDTH - 10) / n
    top = 2 * ROW
    out = [f'<text x="0" y="{ROW - 4}" font-size="12">{fmt_duration(strip.lo_ns)}</text>',
           f'<rect x="80" y="4" width="60" height="{ROW - 8}" fill="{_shade(0.0)}"/>',
           f'<rect x="140" y="4" width="60" height="{ROW - 8}" fill="{_shade(0.5)}"/>',
           f'<rect x="200" y="4" width="60" height="{ROW - 8}" fill="{_shade(1.0)}"/>',
           f'<text x="270" y="{ROW - 4}" font-size="12">{fmt_duration(strip.hi_ns)}'
           '; outlined: the worst; faint: warm-up</text>']
    step = max(1, round(40 / cell)) if cell < 40 else 1
    for k in range(0, len(strip.iterations), step):
        out.append(f'<text x="{LABEL_WIDTH + k * cell:.2f}" y="{top - 4}" font-size="11">'
                   f'{strip.iterations[k]}</text>')
    for row, rank in enumerate(strip.ranks):
        y = top + row * (ROW + 2)
        out.append(_label(rank or "(all)", y))
        for k, value in enumerate(strip.values[row]):
            share = strip.shares[row][k]
            if value is None or share is None:
                continue
            faint = ' fill-opacity="0.35"' if strip.warm[row][k] else ""
            out.append(f'<rect x="{LABEL_WIDTH + k * cell:.2f}" y="{y}" '
                       f'width="{max(cell - 1, 0.5):.2f}" height="{ROW}" fill="{_shade(share)}"'
                       f'{faint} data-ns="{round(value)}"><title>{html_text(rank)} '
                       f'iteration {strip.iterations[k]}: {fmt_duration(round(value))}'
                       f'{" (warm-up)" if strip.warm[row][k] else ""}</title></rect>')
    if strip.worst is not None:
        row, k = strip.worst
        out.append(f'<rect x="{LABEL_WIDTH + k * cell:.2f}" y="{top + row * (ROW + 2)}" '
                   f'width="{max(cell - 1, 0.5):.2f}" height="{ROW}" fill="none" '
                   f'stroke="{SLOWEST_MARK}" stroke-width="2"/>')
    return _svg(strip.title, "".join(out), top + len(strip.ranks) * (ROW + 2) + 4)


def _shade(share: float) -> str:
    """The ramp's colour at `share` (0 the smallest value, 1 the largest)."""
    r, g, b = (round(c + (h - c) * share) for c, h in zip(COOL, HOT))
    return f"#{r:02x}{g:02x}{b:02x}"


def _legend(parts) -> tuple[str, int]:
    """Swatches and names of `parts`, wrapped over as many rows as they need."""
    out, x, y = [], 0, 0
    for part in parts:
        width = 18 + 7 * len(part.label)
        if x and x + width > WIDTH:
            x, y = 0, y + LEGEND_ROW
        out.append(f'<rect x="{x}" y="{y + 3}" width="12" height="12" fill="{part.colour}"/>'
                   f'<text x="{x + 16}" y="{y + 13}" font-size="12">'
                   f'{html_text(part.label)}</text>')
        x += width + 12
    return "".join(out), y + LEGEND_ROW


def _label(text: str, y: int) -> str:
    shown = text if len(text) <= 22 else text[:21] + "…"
    return (f'<text x="{LABEL_WIDTH - 6}" y="{y + ROW - 5}" font-size="12" '
            f'text-anchor="end">{html_text(shown)}<title>{html_text(text)}</title></text>')


def _axis(scale: int, room: int, y: int) -> str:
    """Ticks at 0, a quarter ... the whole scale, below the bars."""
    out = [f'<line x1="{LABEL_WIDTH}" y1="{y}" x2="{LABEL_WIDTH + room}" y2="{y}" '
           'stroke="#888"/>']
    for k in range(5):
        x = LABEL_WIDTH + room * k / 4
        anchor = "start" if k == 0 else "end" if k == 4 else "middle"
        out.append(f'<text x="{x:.2f}" y="{y + 14}" font-size="11" text-anchor="{anchor}">'
                   f'{fmt_duration(round(scale * k / 4))}</text>')
    return "".join(out)


def _svg(title: str, body: str, height: int) -> str:
    # Inline in HTML, an <svg> needs no xmlns: the page names no URL at all.
    return (f'<svg role="img" width="{WIDTH}" '
            f'height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">'
            f'<title>{html_text(title)}</title>{body}</svg>')
