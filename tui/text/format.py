"""Human formatting of times and counts for display."""

from __future__ import annotations

import os
from typing import Any

from proftui.core.model.words import duration_text, plural

# One formatter for durations everywhere: the tables' cells (core) and the screens (tui).
fmt_duration = duration_text
__all__ = ["fmt_count", "fmt_duration", "plural", "shorten_apart", "shorten_middle",
           "track_contents"]


def fmt_count(n: int) -> str:
    return f"{n:,}"


def shorten_middle(text: str, width: int, head_share: float = 0.6) -> str:
    """`text` in at most `width` characters, cut in the middle where it is longer (kernel
    names differ at both ends: the template's first arguments and the signature's last),
    `head_share` of what is kept before the cut."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:max(width, 0)]
    head = min(max(round((width - 1) * head_share), 0), width - 1)
    tail = width - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def shorten_apart(texts: list[str], width: int) -> list[str]:
    """Each text shortened in the middle to `width` (:func:`shorten_middle`); texts that
    differ but would read the same so (two instantiations of one template) show, between
    two cuts, where they first differ."""
    out = [shorten_middle(t, width) for t in texts]
    if len(set(out)) == len(set(texts)) or width < 30:
        return out
    for k, text in enumerate(texts):
        same = [t for t, o in zip(texts, out) if o == out[k] and t != text]
        if not same:
            continue
        differ = max(os.path.commonprefix([text, t]).__len__() for t in same)
        head, tail = 12, 8
        middle = width - head - tail - 2
        start = min(max(differ - middle // 3, head), max(len(text) - tail - middle, head))
        out[k] = (text[:head] + "…" + text[start:start + middle] + "…" + text[-tail:])
    return out


def track_contents(track: dict[str, Any]) -> str:
    """What a track holds, e.g. "1,024 slices in 3 rows, 2 instants"."""
    parts = []
    if track["slices"]:
        parts.append(f"{plural(track['slices'], 'slice')} in {plural(track['rows'], 'row')}")
    if track["instants"]:
        parts.append(plural(track["instants"], "instant"))
    if track["counter_series"]:
        parts.append(f"{track['counter_series']} counters")
    return ", ".join(parts) or "empty"
