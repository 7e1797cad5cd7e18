"""An overview of an opened trace or profile: the index summary, its tables and iterations.

Plain data (what `proftui info` prints and the app lists); reading the summary CSVs and finding
iterations happen here, so that callers run it off the UI thread.
"""

from __future__ import annotations

from typing import Any

from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.model.stats import whole_ns
from proftui.core.model.table import Table
from proftui.core.ops.iterations import Iterations, find_iterations


def overview(index: TraceIndex) -> dict[str, Any]:
    """`index.summary()` with each table's shape and problems, and the iterations."""
    return read_overview(index)[0]


def read_overview(index: TraceIndex) -> tuple[dict[str, Any], list[Table], Iterations]:
    """The overview as plain data, with the tables and iterations it was made from (the app
    shows them in its panes without reading the CSVs again)."""
    summary = index.summary()
    _describe_sides(index, summary)
    tables = _read_tables(summary, use_cache=not index.meta.get("no_cache"))
    found = find_iterations(index, tables)
    summary["iterations"] = {
        "source": found.source if found.items else None,
        "notes": found.notes,
        # `number` is the old name of `iteration`, kept for one release
        "items": [{"group": it.group, "iteration": it.number, "number": it.number,
                   "start_ns": it.start_ns if it.dur_ns >= 0 else None,
                   "dur_ns": it.dur_ns if it.dur_ns >= 0 else None,  # null: no window
                   "parts_ns": {k: whole_ns(v) for k, v in it.parts.items()}}
                  for it in found.items]}
    return summary, tables, found


def _describe_sides(index: TraceIndex, summary: dict[str, Any]) -> None:
    """Say of each described track which side it is on, by which rule, and its role (see
    :mod:`proftui.core.ops.roles`); count the tracks by side and rule."""
    from proftui.core.ops.roles import SIDE_RULES, roles

    found = roles(index)
    for track in [t for p in summary["processes"] for t in p["tracks"]] + summary["other_tracks"]:
        track.update(found.describe(track["track"]))
    with_slices = index.col("tracks.slice_count") > 0
    counts: dict[str, int] = {}
    for side, mask in (("device", found.device), ("host", ~found.device)):
        for code, rule in enumerate(SIDE_RULES):
            n = int((mask & with_slices & (found.side_rule == code)).sum())
            if n:
                counts[f"{side} by {rule}"] = n
    summary["sides"] = counts


def _read_tables(summary: dict[str, Any], use_cache: bool = True) -> list[Table]:
    """Read the profile's summary CSVs (from the cache, with `use_cache`); note rows, columns
    and problems in their entries."""
    # The readers (CSV, SQLite) are imported here, off the first frame's path.
    from proftui.core.cache.tables import read_table
    from proftui.core.importers.ascend_db.tables import read_db_table

    tables = []
    for entry in (summary.get("profile") or {}).get("tables", []):
        try:
            if entry.get("source"):  # a table of a SQLite export
                table = read_db_table(entry["path"], entry["kind"], entry["source"],
                                      entry.get("group", ""))
            else:
                table = read_table(entry["path"], entry["kind"], entry.get("group", ""),
                                   use_cache=use_cache)
        except ProftuiError as exc:
            entry["error"] = str(exc)
            continue
        tables.append(table)
        entry["rows"] = table.n_rows
        entry["columns"] = [{"header": c.header, "kind": c.kind, "unit": c.unit}
                            for c in table.columns]
        entry["diagnostics"] = table.diagnostics.to_list()
    return tables
