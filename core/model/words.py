"""Numbers said in words, the same in every pane and command: durations and counts.

A leaf module (nothing of proftui's, no numpy): the command line imports it before anything
else is needed.
"""

from __future__ import annotations

_DURATION_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns"))


def duration_text(ns: float) -> str:
    """A duration in the largest unit that keeps it >= 1, with 3 significant decimals
    (the same text as ``proftui.tui.text.format.fmt_duration``)."""
    sign = "-" if ns < 0 else ""
    ns = abs(int(ns))
    for scale, unit in _DURATION_UNITS:
        if ns >= scale:
            value = ns / scale
            text = f"{value:.3f}".rstrip("0").rstrip(".") if scale > 1 else str(ns)
            return f"{sign}{text} {unit}"
    return "0 ns"


def plural(count: int, noun: str, many: str | None = None) -> str:
    """A count and its noun, singular for one: "1 iteration", "6 iterations", "2,048 slices"
    (`many` for a plural that is not the noun and an "s": "2 processes")."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"
