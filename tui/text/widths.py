"""Sharing a terminal's width among the columns of a table: the headless commands' printed
tables and the app's table panes size their columns with the same rules; a label made to fit
a narrow place by leaving out its least useful parts first."""

from __future__ import annotations

from collections.abc import Sequence

# A text column squeezed to share the width keeps at least this many cells (or its need).
LEAST_TEXT = 12
# A text column of a table that scrolls sideways is cut at this width: what is further right
# is reached by scrolling, so one long column need not fill the screen.
MAX_TEXT_WIDTH = 48


def share_widths(needs: list[int], room: int, least: int = 8) -> list[int]:
    """Widths of text columns that need `needs` characters sharing `room`: the narrow ones
    get all they need, the others share what is left equally (at least `least` each)."""
    out = [0] * len(needs)
    left = room
    for k, i in enumerate(sorted(range(len(needs)), key=needs.__getitem__)):
        out[i] = min(needs[i], max(left // (len(needs) - k), least))
        left -= out[i]
    return out


def fit_widths(needs: Sequence[int], numeric: Sequence[bool], room: int) -> list[int]:
    """Widths of a table's columns (each need counts its separator) in `room` cells.

    All that they need when that fits. Else numbers keep their width and the text columns
    share what the numbers leave (:func:`share_widths`, at least LEAST_TEXT each) when that
    makes the table fit and leaves the first column (the name) what it needs or a quarter of
    the room. Else the table will scroll sideways: the first column (frozen on screen) takes
    at most a third of the room, the other text columns at most MAX_TEXT_WIDTH, numbers
    their width (a 46-column kernel_details at 250 cells had its names cut to 13 cells).
    """
    out = list(needs)
    if sum(out) <= room or not out:
        return out
    text = [i for i, number in enumerate(numeric) if not number]
    spare = room - sum(w for w, number in zip(needs, numeric) if number)
    shared = share_widths([needs[i] for i in text], spare, LEAST_TEXT)
    for i, width in zip(text, shared):
        out[i] = width
    if sum(out) <= room and (numeric[0] or out[0] >= min(needs[0], room // 4)):
        return out
    out = [min(w, MAX_TEXT_WIDTH + 1) if not number else w for w, number in zip(needs, numeric)]
    if not numeric[0]:
        out[0] = min(needs[0], max(room // 3, LEAST_TEXT + 1))
    return out


def first_fitting(forms: Sequence[str], width: int) -> str:
    """The first of `forms` (longest and fullest first) that fits `width` cells, else the
    last one cut with an ellipsis: a label gives up its least useful parts before its name."""
    for text in forms:
        if len(text) <= width:
            return text
    last = forms[-1] if forms else ""
    return last[: max(width - 1, 0)] + "…" if width > 0 else ""
