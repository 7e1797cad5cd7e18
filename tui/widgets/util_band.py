"""The utilisation band: the lines pinned under the timeline's ruler, one per rank by default.

Each rank (or device) has a head line, its device busy share per cell coloured by what kept
the device busy there (compute, exposed communication, other work such as copies; idle is
blank). Expanded, a rank adds its other series under it (compute, communication exposed and
overlapped, host busy). `u` steps through the views: a line per rank (the default), every
rank expanded, none at all; `U` (or a click on a head's label) expands or folds one rank.

On a small screen the band gives way: it takes at most half the rows under the ruler and
leaves :data:`MIN_TRACK_ROWS` lines of tracks below it where it can; what does not fit
scrolls, and follows the rank of the focused track. A pure object, as the timeline's state.
"""

from __future__ import annotations

from dataclasses import dataclass

UTIL_SHARE = 0.5  # at most this share of the rows under the ruler goes to the band
MIN_TRACK_ROWS = 8  # lines of tracks (and their process's header) kept under the band
HEAD_SERIES = "device busy"
# A series' name where the gutter is narrow (under its group's head, the rest is implied).
SHORT = {"comm exposed": "exposed", "comm overlapped": "overlapped", "host busy": "host"}


@dataclass(frozen=True)
class UtilLine:
    """A utilisation line: one series (a key of SERIES) of one group (rank or device, "" for
    none); the head of its group carries `head` (its device busy, coloured by what kept the
    device busy)."""

    group: str
    series: str
    label: str
    head: bool = False


class UtilBand:
    """Which utilisation lines are shown, and which of them are on screen.

    `lines` are every line worth showing (see util_lines_of); `shown` those of the view (the
    heads, and the other lines of the expanded groups), a new list at each change so that a
    painter can tell by identity; `top` the first shown line on screen."""

    def __init__(self) -> None:
        self.lines: list[UtilLine] = []
        self.on = True
        self.expanded: set[str] = set()
        self.top = 0
        self.shown: list[UtilLine] = []

    def set_lines(self, lines: list[UtilLine]) -> None:
        self.lines = lines
        self.expanded &= self.groups()
        self._reshow()

    def groups(self) -> set[str]:
        return {line.group for line in self.lines}

    def _reshow(self) -> None:
        self.shown = [line for line in self.lines
                      if self.on and (line.head or line.group in self.expanded)]
        self.top = min(self.top, max(len(self.shown) - 1, 0))

    @property
    def view(self) -> str:
        """"ranks" (heads only, the default), "series" (every group expanded), "some"
        (some expanded) or "off"."""
        if not self.on:
            return "off"
        if not self.expanded:
            return "ranks"
        return "series" if self.expanded >= self.groups() else "some"

    def cycle(self) -> None:
        """A line per rank, then every series of every rank, then none, then again."""
        if not self.on:
            self.on, self.expanded = True, set()
        elif self.view != "series" and self.has_series():
            self.expanded = self.groups()
        else:
            self.on = False
        self.top = 0
        self._reshow()

    def has_series(self) -> bool:
        return any(not line.head for line in self.lines)

    def toggle(self, group: str) -> None:
        """Expand a group's lines (its head to the band's top, as far as the lines below
        allow), or fold them into its head; the band shows if it was off."""
        if group not in self.groups():
            return
        if not self.on:
            self.on = True
            self.expanded.add(group)
        else:
            self.expanded.symmetric_difference_update({group})
        self._reshow()
        if group in self.expanded:
            self.top = next(k for k, line in enumerate(self.shown)
                            if line.head and line.group == group)

    def rows(self, height: int) -> int:
        """How many of the `height` rows under the ruler the band takes."""
        room = min(int(height * UTIL_SHARE), height - MIN_TRACK_ROWS - 1)
        return min(len(self.shown), max(room, 1))

    def on_screen(self, height: int) -> list[UtilLine]:
        top = self.first(height)
        return self.shown[top: top + self.rows(height)]

    def first(self, height: int) -> int:
        """The first line on screen (kept so that the band's rows stay filled)."""
        return max(min(self.top, len(self.shown) - self.rows(height)), 0)

    def scroll(self, step: int, height: int) -> None:
        self.top = max(min(self.first(height) + step, len(self.shown) - self.rows(height)), 0)

    def follow(self, group: str, height: int) -> None:
        """Bring a group's head on screen (at the band's top) if it is not."""
        head = next((k for k, line in enumerate(self.shown)
                     if line.head and line.group == group), None)
        if head is None:
            return
        top, rows = self.first(height), self.rows(height)
        if not top <= head < top + rows:
            self.top = max(min(head, len(self.shown) - rows), 0)

    def label_forms(self, line: UtilLine, several: bool) -> list[str]:
        """A line's label, fullest first, then shorter forms for a narrow gutter."""
        if not line.head:
            return list(dict.fromkeys([line.series, SHORT.get(line.series, line.series)]))
        if several and line.group:
            return [f"{line.group} device busy", f"{line.group} busy", line.group]
        return [HEAD_SERIES, "busy"]

    def mark(self, line: UtilLine) -> str:
        """▶ a folded head with lines to show, ▼ an expanded one; blank for the rest."""
        if not line.head or not any(o.group == line.group and not o.head for o in self.lines):
            return " "
        return "▼" if line.group in self.expanded else "▶"
