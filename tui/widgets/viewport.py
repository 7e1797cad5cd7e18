"""The timeline's viewport: the time window it shows, and how times map to cells."""

from __future__ import annotations

ZOOM_STEP = 1.5
PAN_FRACTION = 0.2


class Viewport:
    """A window [start_ns, end_ns) of `cells` columns over a span of time (the trace's, ranks
    moved by their shifts; None until there is one to show).

    Times are integers (epoch nanoseconds do not fit a double exactly); only offsets within
    the window go through floats. The window is kept to at least one ns per cell, at most
    four spans wide, and no further than a tenth of itself past either end of the span;
    zoomed out beyond the span, all of it stays in view."""

    def __init__(self, start_ns: int = 0, end_ns: int = 1, cells: int = 1) -> None:
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.cells = cells
        self.span: tuple[int, int] | None = None

    @property
    def width_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def ns_per_cell(self) -> float:
        return max(self.end_ns - self.start_ns, 1) / self.cells

    def time_at(self, cell: int) -> int:
        """The time at the middle of a cell."""
        return self.start_ns + int((cell + 0.5) * self.ns_per_cell)

    def cell_of(self, t_ns: int) -> int:
        """The cell holding a time (negative or past the last cell when outside)."""
        return int((t_ns - self.start_ns) // self.ns_per_cell)

    def clamped(self, start_ns: int, end_ns: int) -> tuple[int, int]:
        """The window [start_ns, end_ns) would become, kept on the span."""
        assert self.span is not None
        lo, hi = self.span
        span = hi - lo
        width = max(int(end_ns) - int(start_ns), self.cells)
        width = min(width, 4 * span + self.cells)
        slack = width // 10
        start = int(start_ns)
        if width >= span:
            start = min(max(start, hi - width), lo)
        else:
            start = min(max(start, lo - slack), hi + slack - width)
        return start, start + width

    def set_window(self, start_ns: int, end_ns: int) -> bool:
        """Show [start_ns, end_ns), kept on the span; whether the window moved (never without
        a span)."""
        if self.span is None:
            return False
        window = self.clamped(start_ns, end_ns)
        if window == (self.start_ns, self.end_ns):
            return False
        self.start_ns, self.end_ns = window
        return True

    def zoom_anchor(self, cursor_ns: int) -> int:
        """Where a key zooms about: the cursor when it is in view, else the window's middle."""
        inside = self.start_ns <= cursor_ns <= self.end_ns
        return cursor_ns if inside else (self.start_ns + self.end_ns) // 2

    def zoom(self, factor: float, anchor_ns: int) -> bool:
        """Scale the window by `factor` (< 1 zooms in) keeping `anchor_ns` at its place."""
        left = round((anchor_ns - self.start_ns) * factor)
        right = round((self.end_ns - anchor_ns) * factor)
        return self.set_window(anchor_ns - left, anchor_ns + right)

    def pan(self, fraction: float) -> bool:
        """Move the window by a fraction of its width (negative: to the left)."""
        shift = int((self.end_ns - self.start_ns) * fraction)
        return self.set_window(self.start_ns + shift, self.end_ns + shift)

    def pan_cells(self, cells: int) -> bool:
        """Move the window by a number of cells (a drag of the mouse)."""
        shift = int(cells * self.ns_per_cell)
        return bool(shift) and self.set_window(self.start_ns + shift, self.end_ns + shift)

    def whole(self) -> bool:
        """Show the whole span with a fiftieth of it on either side."""
        if self.span is None:
            return False
        lo, hi = self.span
        margin = (hi - lo) // 50
        return self.set_window(lo - margin, hi + margin)

    def centre_on(self, t_ns: int) -> bool:
        """Bring a time into view at the window's middle, unless it is in view already."""
        width = self.end_ns - self.start_ns
        if self.start_ns <= t_ns < self.end_ns:
            return False
        return self.set_window(t_ns - width // 2, t_ns + width // 2)

    def range_cells(self, time_range: tuple[int, int] | None) -> tuple[int, int] | None:
        """The cells [first, last) a time range covers on screen, if any."""
        if time_range is None:
            return None
        first = max(self.cell_of(time_range[0]), 0)
        last = min(self.cell_of(time_range[1] - 1) + 1, self.cells)
        return (first, last) if first < last else None
