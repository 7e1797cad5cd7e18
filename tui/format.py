"""Human formatting of times and counts for display."""

from __future__ import annotations

_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns"))


def fmt_duration(ns: int) -> str:
    """A duration in the largest unit that keeps it >= 1, with 3 significant decimals."""
    sign = "-" if ns < 0 else ""
    ns = abs(int(ns))
    for scale, unit in _UNITS:
        if ns >= scale:
            value = ns / scale
            text = f"{value:.3f}".rstrip("0").rstrip(".") if scale > 1 else str(ns)
            return f"{sign}{text} {unit}"
    return "0 ns"


def fmt_count(n: int) -> str:
    return f"{n:,}"
