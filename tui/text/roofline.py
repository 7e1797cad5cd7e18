"""A roofline drawn in text: ops as points on log-log axes (arithmetic intensity in FLOP per
byte across, achieved TFLOP/s up), the roof as a line (memory bandwidth rising to the compute
peak), each op's mark sized by the time it costs. `proftui ops --roofline` prints it and the
Ops pane's efficiency view shows the same lines."""

from __future__ import annotations

import math
from collections.abc import Sequence

from proftui.core.perf.efficiency import RoofPoint as Point

MARKS = (("●", 0.10), ("•", 0.01), ("·", 0.0))  # the mark of an op costing at least that share
LABELLED = 9  # the costliest ops are numbered on the plot and named in the legend
Y_LABEL = 9  # cells for the TFLOP/s labels left of the plot
X_UNIT = "  FLOP/B"  # after the intensity axis's last label


def _mark(share: float) -> str:
    return next(mark for mark, least in MARKS if share >= least)


def _decades(lo: float, hi: float) -> tuple[float, float]:
    """log10 bounds on whole decades around [lo, hi] (at least one decade wide)."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return float(a), float(max(b, a + 1))


def _axis_number(value: float) -> str:
    return f"{value:g}" if 1e-3 <= value < 1e5 else f"{value:.0e}"


def _bounds(points: Sequence[Point], peak: float | None, bandwidth: float | None,
            ) -> tuple[float, float, float, float]:
    xs = [p.intensity for p in points]
    ys = [p.flops_per_s for p in points]
    if peak:
        ys.append(peak)
        if bandwidth:
            ridge = peak / bandwidth
            xs += [ridge / 10, ridge * 10]
    x0, x1 = _decades(min(xs), max(xs))
    y0, y1 = _decades(min(ys) / 1e12, max(ys) / 1e12)
    return x0, x1, y0, y1


def roofline_lines(points: Sequence[Point], peak: float | None, bandwidth: float | None,
                   width: int = 72, height: int = 18) -> list[str]:
    """The plot as lines of text, then one legend line per numbered op. Points with no
    positive intensity or rate cannot sit on log axes and are left out (the caller counts
    them); with no point at all, one line says so."""
    points = [p for p in points if p.intensity > 0 and p.flops_per_s > 0 and p.time_ns >= 0]
    if not points:
        return ["(no op with a model and a time to plot)"]
    cols, rows = max(width - Y_LABEL - 1 - len(X_UNIT), 10), max(height - 2, 4)
    x0, x1, y0, y1 = _bounds(points, peak, bandwidth)
    grid = [[" "] * cols for _ in range(rows)]

    def col(intensity: float) -> int:
        return min(cols - 1, max(0, int((math.log10(intensity) - x0) / (x1 - x0) * cols)))

    def row(tflops: float) -> int:
        r = int((math.log10(tflops) - y0) / (y1 - y0) * rows)
        return rows - 1 - min(rows - 1, max(0, r))

    if peak:
        _draw_roof(grid, cols, rows, x0, x1, peak, bandwidth, row)
    total = sum(p.time_ns for p in points) or 1
    ranked = sorted(points, key=lambda p: -p.time_ns)
    for n, p in reversed(list(enumerate(ranked, 1))):  # the costliest drawn last, on top
        r, c = row(p.flops_per_s / 1e12), col(p.intensity)
        grid[r][c] = _mark(p.time_ns / total)
        if n <= LABELLED and c + 1 < cols:
            grid[r][c + 1] = str(n)
    labels = {row(10.0 ** d): _axis_number(10.0 ** d) for d in range(int(y0), int(y1) + 1)}
    lines = []
    for r in range(rows):
        lines.append(f"{labels.get(r, ''):>{Y_LABEL - 1}} │" + "".join(grid[r]).rstrip())
    lines.append(" " * (Y_LABEL - 1) + " └" + "─" * cols)
    lines.append(_x_labels(x0, x1, cols) + X_UNIT)
    lines.insert(0, f"{'TFLOP/s':>{Y_LABEL - 1}}")
    for n, p in enumerate(ranked[:LABELLED], 1):
        line = (f"{n} {_mark(p.time_ns / total)} {p.label}: {100 * p.time_ns / total:.1f}% "
                f"of the time, {p.flops_per_s / 1e12:.3g} TFLOP/s at {p.intensity:.3g} FLOP/B")
        lines.append(line if len(line) <= width else line[:width - 3] + "...")
    return lines


def _x_labels(x0: float, x1: float, cols: int) -> str:
    line = [" "] * (cols + Y_LABEL + 1)
    for d in range(int(x0), int(x1) + 1):
        text = _axis_number(10.0 ** d)
        at = Y_LABEL + int((d - x0) / (x1 - x0) * cols) - len(text) // 2
        at = max(0, min(at, len(line) - len(text)))
        if all(ch == " " for ch in line[max(0, at - 1):at + len(text)]):
            line[at:at + len(text)] = text
    return "".join(line).rstrip()


def _draw_roof(grid: list[list[str]], cols: int, rows: int, x0: float, x1: float,
               peak: float, bandwidth: float | None, row) -> None:
    """The roof: min(peak, intensity x bandwidth), a rising slope then a flat line; cells
    between one column's roof and the next are filled so the slope is not broken."""
    last = None
    for c in range(cols):
        x = 10 ** (x0 + (c + 0.5) / cols * (x1 - x0))
        roof = min(peak, x * bandwidth) if bandwidth else peak
        r = row(roof / 1e12)
        flat = not bandwidth or x * bandwidth >= peak
        for rr in range(r, last if last is not None and last > r + 1 else r + 1):
            if grid[rr][c] == " ":
                grid[rr][c] = "─" if flat and rr == r else "╱"
        last = r
