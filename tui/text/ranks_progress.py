"""Each rank's progress while a profile of several indexes, as lines for the loading screen
and a count for the terminal's progress bar."""

from __future__ import annotations

from proftui.core.load.progress import CACHED, READ, READING, FileStatus, ranks_summary
from proftui.tui.text.format import shorten_middle
from proftui.tui.text.safe import safe

BAR_CELLS = 20
_STATE_WORDS = {READ: "read", CACHED: "from the cache", READING: "reading", "waiting": "waiting"}


def ranks_count(files: tuple[FileStatus, ...]) -> str:
    """How many files are done of how many, and how many of those came from the cache:
    ``5 of 8 ranks done (2 from the cache)``."""
    read, cached, total = ranks_summary(files)
    from_cache = f" ({cached} from the cache)" if cached else ""
    return f"{read + cached} of {total} ranks done{from_cache}"


def ranks_tally(files: tuple[FileStatus, ...]) -> str:
    """:func:`ranks_count` in few cells, for a terminal's progress bar: ``5/8 ranks done,
    2 cached``."""
    read, cached, total = ranks_summary(files)
    return f"{read + cached}/{total} ranks done" + (f", {cached} cached" if cached else "")


def rank_line(file: FileStatus, name_cells: int) -> str:
    """One file: its name, a bar of its bytes read, how many, its state."""
    share = file.done / file.size if file.size else (1.0 if file.finished else 0.0)
    filled = round(share * BAR_CELLS)
    bar = "█" * filled + "░" * (BAR_CELLS - filled)
    name = shorten_middle(safe(file.name), name_cells).ljust(name_cells)
    return (f"{name} {bar} {share:>4.0%} {_mb(file.done)} of {_mb(file.size)}  "
            f"{_STATE_WORDS.get(file.state, file.state)}")


def rank_lines(files: tuple[FileStatus, ...], width: int, room: int) -> list[str]:
    """At most `room` lines of `width` cells: every file when they fit, else the ones being
    read (the first of them that fit); then the count of those done."""
    shown = list(files) if len(files) < room else [f for f in files if f.state == READING]
    shown = shown[:max(room - 1, 0)]
    # what follows the name takes about 45 cells; names get the rest, 8 to 24
    name_cells = max(8, min(24, max((len(f.name) for f in files), default=8), width - 45))
    lines = [rank_line(f, name_cells)[:width] for f in shown]
    waiting = sum(not f.finished and f.state != READING for f in files)
    reading = sum(f.state == READING for f in files)
    count = f"{ranks_count(files)}, {reading} reading, {waiting} waiting"
    return [*lines, count[:width]]


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB" if n < 10e6 else f"{n / 1e6:,.0f} MB"
