"""What a report holds, as plain data both pages draw: sections of sentences, tables as
shown, charts (stacked bars, a rank x iteration strip) and the advisor's findings."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from proftui.tui.text.format import fmt_duration

if TYPE_CHECKING:  # numpy's: a command's declaration imports this module, and nothing heavy
    from proftui.core.model.table import Table


@dataclass(frozen=True)
class Grid:
    """A table as the command line prints it: its cells as text, and behind each time cell
    the integer ns it shows (None for the other cells), kept for the page's data-ns."""

    title: str
    headers: tuple[str, ...]
    right: tuple[bool, ...]  # numbers are aligned right
    rows: tuple[tuple[str, ...], ...]
    ns: tuple[tuple[int | None, ...], ...]
    more: int = 0  # rows left out


def grid_of(title: str, table: Table, rows: Sequence[int] | None = None,
            leave_out: Sequence[str] = ("name_id",), limit: int | None = None) -> Grid:
    """The rows `rows` (all by default; the first `limit`) of a core table, every column but
    those named in `leave_out`, in the command line's words (rows_text)."""
    from proftui.core.tables.query import rows_text

    every = list(range(table.n_rows)) if rows is None else list(rows)
    shown = every[:limit] if limit is not None else every
    columns = [i for i, c in enumerate(table.columns) if c.name not in leave_out]
    cells = rows_text(table, shown, columns)
    ns = tuple(tuple(_ns(table.columns[c], r) for c in columns) for r in shown)
    return Grid(title, tuple(table.columns[c].header for c in columns),
                tuple(table.columns[c].kind != "text" for c in columns),
                tuple(tuple(row) for row in cells), ns, len(every) - len(shown))


def _ns(column, row: int) -> int | None:
    if column.unit != "ns" or column.kind == "text":
        return None
    value = float(column.values[row])
    return round(value) if math.isfinite(value) else None


@dataclass(frozen=True)
class Part:
    """One part of a stacked bar: its key (as the JSON names it), its words, its colour."""

    key: str
    label: str
    colour: str


@dataclass(frozen=True)
class Bars:
    """Horizontal stacked bars on one time scale: a row per label, ns per part."""

    title: str
    parts: tuple[Part, ...]
    rows: tuple[tuple[str, tuple[int, ...]], ...]
    note: str = ""


@dataclass(frozen=True)
class Strip:
    """A value per rank and iteration shaded from `lo_ns` to `hi_ns` (warm-up clipped to
    that scale: `shares`, as the Cluster pane shades them), `worst` (row, column) marked;
    `text` is the command line's strip of it."""

    title: str
    ranks: tuple[str, ...]
    iterations: tuple[int, ...]
    values: tuple[tuple[float | None, ...], ...]
    warm: tuple[tuple[bool, ...], ...]
    shares: tuple[tuple[float | None, ...], ...]  # each cell's place on the scale, 0 to 1
    lo_ns: int
    hi_ns: int
    worst: tuple[int, int] | None
    text: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """One part of the report: sentences, charts, tables and findings, and the command that
    prints the same numbers."""

    title: str
    command: str
    lines: tuple[str, ...] = ()
    charts: tuple[Bars | Strip, ...] = ()
    grids: tuple[Grid, ...] = ()
    findings: tuple[dict[str, Any], ...] = ()  # as `proftui advise --json` has them
    origin_ns: int | None = None  # evidence times are from it (None: not said)


@dataclass(frozen=True)
class Report:
    """The whole report: its title, what it is of, and its sections in order."""

    title: str
    lines: tuple[str, ...]
    sections: tuple[Section, ...]
    version: str = field(default="")


def number_text(key: str, value) -> str:
    """A finding's number in words: times (keys in _ns...) as durations, shares as %."""
    if isinstance(value, (int, float)) and "_ns" in key:
        return fmt_duration(round(value))
    if isinstance(value, float) and ("share" in key or "ratio" in key):
        return f"{value * 100:.1f} %"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
