"""A profile's summary tables asked for by name: chosen by kind, file name or prefix and rank
(from :func:`proftui.core.discover.runs.open_run`'s layout, without indexing the timelines), stacked
across ranks, filtered, sorted and cut.

What `proftui table` prints; the app's Tables pane shows the same :class:`Table` objects (read
by :mod:`proftui.core.analysis.overview` from the same files), sorted and filtered by the same
:mod:`proftui.core.tables.query` calls.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from proftui.core.cache.tables import read_table
from proftui.core.discover.profile import TableFile
from proftui.core.model.errors import ProftuiError
from proftui.core.model.table import MISSING, Column, Table, text_column
from proftui.core.tables.query import (
    TIME_UNITS,
    column_index,
    default_sort,
    filter_mask,
    sort_order,
)

GROUP_COLUMN = "Group"  # the first column of tables stacked from several ranks or devices
_MISSING_TS = np.iinfo(np.int64).min


def file_name(file: TableFile) -> str:
    """The base name a person may call a table by ("op_summary_20260605161737.csv")."""
    return os.path.basename(file.path)


def choose(files: Sequence[TableFile], name: str, group: str | None = None) -> list[TableFile]:
    """The tables called `name` (a kind such as op_statistic, a file's base name with or
    without ".csv", or a prefix of one kind only; case ignored), of the rank or device
    `group` when given. Raises ProftuiError with one sentence naming what there is."""
    if not files:
        raise ProftuiError("This profile has no summary tables.")
    wanted = name.strip().lower()
    kinds = list(dict.fromkeys(f.kind for f in files))
    chosen = [f for f in files if f.kind.lower() == wanted]
    if not chosen:
        chosen = [f for f in files if file_name(f).lower() in
                  (wanted, wanted + ".csv", wanted + ".json")]
        # a file of several tables (msprof-analyze's cluster_communication.json): its first
        chosen = [f for f in chosen if f.kind == chosen[0].kind]
    if not chosen:
        prefixed = [k for k in kinds if k.lower().startswith(wanted)] if wanted else []
        if len(prefixed) > 1:
            raise ProftuiError(f'"{name}" could be any of {", ".join(prefixed)}: name one.')
        if not prefixed:
            raise ProftuiError(f'No table "{name}" in this profile; its tables are '
                               f'{", ".join(kinds)}.')
        chosen = [f for f in files if f.kind == prefixed[0]]
    if group is not None:
        groups = list(dict.fromkeys(f.group for f in chosen))
        mine = [f for f in chosen if f.group.lower() == group.strip().lower()]
        if not mine:
            known = ", ".join(f'"{g}"' for g in groups if g) or "none (one rank or device)"
            raise ProftuiError(f'{chosen[0].kind} has no group "{group}"; its groups are '
                               f"{known}.")
        chosen = mine
    return chosen


def read_tables(files: Sequence[TableFile], use_cache: bool = True) -> list[Table]:
    """Read the chosen CSVs (as :mod:`proftui.core.analysis.overview` does for the app), from the
    cache with `use_cache`."""
    return [read_table(f.path, f.kind, f.group, use_cache=use_cache) for f in files]


# -- several ranks as one table -----------------------------------------------------------------


def stack(tables: Sequence[Table]) -> Table:
    """One table of the rows of `tables` (one kind, several ranks or devices) in their order,
    with a Group column first saying whose each row is; a lone table as it is.

    Columns are matched by header (the second of two equal headers with the second); one a
    table lacks is missing in its rows; a column that is text in one table and numbers in
    another becomes text.
    """
    if len(tables) == 1:
        return tables[0]
    if not tables:
        raise ProftuiError("No tables to show.")
    keys: list[tuple[str, int]] = []
    per_table: list[dict[tuple[str, int], Column]] = []
    for table in tables:
        seen: dict[str, int] = {}
        mine = {}
        for column in table.columns:
            key = (column.header, seen.get(column.header, 0))
            seen[column.header] = key[1] + 1
            mine[key] = column
            if key not in keys:
                keys.append(key)
        per_table.append(mine)
    columns = [text_column(GROUP_COLUMN, [t.group for t in tables for _ in range(t.n_rows)])]
    for key in keys:
        parts = [mine.get(key) for mine in per_table]
        columns.append(_joined(parts, [t.n_rows for t in tables]))
    first = tables[0]
    return Table(first.kind, "", columns, sum(t.n_rows for t in tables), group="",
                 additive=all(t.additive for t in tables))


def _joined(parts: list[Column | None], sizes: list[int]) -> Column:
    """One column of the stacked table from each table's column (None: it has none)."""
    present = [c for c in parts if c is not None]
    kinds = {c.kind for c in present}
    kind = present[0].kind if len(kinds) == 1 else "text" if "text" in kinds else "number"
    model = next(c for c in present if c.kind == kind)
    unit = model.unit
    chunks = []
    for column, size in zip(parts, sizes):
        if column is None:
            chunks.append(_blank(kind, size))
        elif column.kind == kind:
            chunks.append(column.values)
        elif kind == "text":
            chunks.append(_as_text(column))
        else:  # epoch timestamps (ns) among numbers in the column's unit
            values = column.values.astype(np.float64) / TIME_UNITS.get(unit, 1)
            chunks.append(np.where(column.values == _MISSING_TS, np.nan, values))
    values = np.concatenate(chunks) if chunks else np.zeros(0)
    if kind == "text":
        values = values.astype(object)
    return Column(model.header, model.name, unit, kind, values)


def _blank(kind: str, size: int) -> np.ndarray:
    if kind == "text":
        blank = np.empty(size, dtype=object)
        blank[:] = ""
        return blank
    if kind == "timestamp":
        return np.full(size, _MISSING_TS, np.int64)
    return np.full(size, np.nan)


def _as_text(column: Column) -> np.ndarray:
    out = np.empty(len(column.values), dtype=object)
    if column.kind == "timestamp":
        out[:] = ["" if v == _MISSING_TS else str(v) for v in column.values.tolist()]
    else:
        out[:] = ["" if v != v else np.format_float_positional(v, trim="-")
                  for v in np.asarray(column.values, np.float64).tolist()]
    return out


# -- the rows asked for -------------------------------------------------------------------------


@dataclass(frozen=True)
class TableAnswer:
    """The rows and columns of a table asked for, in the order to show them."""

    table: Table
    rows: np.ndarray  # row numbers, filtered, sorted and cut to `top`
    columns: list[int]
    n_matching: int  # rows that passed the filter (before the cut)
    sort: tuple[int, bool] | None  # (column, descending), None: the file's order
    where: str


def ask(table: Table, *, where: str = "", sort: str | None = None,
        descending: bool | None = None, columns: Sequence[str] = (), top: int = 0
        ) -> TableAnswer:
    """Filter `table` by `where` (:func:`~proftui.core.tables.query.filter_mask`), sort it by
    the column `sort` (numbers largest first and text A to Z unless `descending` says) or
    else by its kind's usual first move (:func:`~proftui.core.tables.query.default_sort`,
    turned round when `descending` disagrees), keep the first `top` rows (0: all) and the
    named `columns` (all when empty; a stacked table's Group first unless named).
    Raises ProftuiError with one sentence for a bad expression or an unknown column."""
    rows = np.flatnonzero(filter_mask(table, where)) if where.strip() else np.arange(
        table.n_rows)
    order: tuple[int, bool] | None
    if sort is not None:
        c = column_index(table, sort)
        order = (c, table.columns[c].kind != "text" if descending is None else descending)
    else:
        order = default_sort(table)
        if order is not None and descending is not None:
            order = (order[0], descending)
    if order is not None:
        ordered = sort_order(table, *order)
        keep = np.zeros(table.n_rows, bool)
        keep[rows] = True
        rows = ordered[keep[ordered]]
    n_matching = len(rows)
    if top:
        rows = rows[:top]
    if columns:
        shown = list(dict.fromkeys(column_index(table, name) for name in columns))
        group = group_column(table)
        if group is not None and group not in shown:
            shown.insert(0, group)
    else:
        shown = list(range(len(table.columns)))
    return TableAnswer(table, rows, shown, n_matching, order, where.strip())


def group_column(table: Table) -> int | None:
    """The index of the Group column :func:`stack` put first (None for one rank's table:
    a stacked table has no path)."""
    first = table.columns[0] if table.columns else None
    stacked = first is not None and first.header == GROUP_COLUMN and not table.path
    return 0 if stacked else None


# -- plain values for JSON ----------------------------------------------------------------------


def plain_column(column: Column) -> dict[str, str]:
    """A column as the JSON of `proftui table` describes it: times (any time unit, and
    timestamps) in "ns", other units as the header says."""
    unit = "ns" if column.kind == "timestamp" or column.unit in TIME_UNITS else column.unit
    return {"name": column.name, "header": column.header, "unit": unit, "kind": column.kind}


def plain_rows(table: Table, rows: np.ndarray, columns: Sequence[int]) -> list[list]:
    """The cells of `rows` and `columns` as plain values: times as integer ns (rounded to
    the nearest), whole numbers as integers, text as strings; missing cells (NaN, N/A,
    empty text, missing timestamps) as None."""
    cells = [_plain_values(table.columns[c], rows) for c in columns]
    return [list(row) for row in zip(*cells)] if cells else [[] for _ in range(len(rows))]


def _plain_values(column: Column, rows: np.ndarray) -> list:
    values = column.values[rows]
    if column.kind == "text":
        return [None if v is None or (isinstance(v, float) and math.isnan(v))
                or str(v).strip() in MISSING else str(v) for v in values.tolist()]
    if column.kind == "timestamp":
        return [None if v == _MISSING_TS else v for v in values.astype(np.int64).tolist()]
    numbers = np.asarray(values, np.float64)
    if column.unit in TIME_UNITS:
        with np.errstate(invalid="ignore", over="ignore"):
            numbers = np.rint(numbers * TIME_UNITS[column.unit])
        fits = np.isfinite(numbers) & (np.abs(numbers) < 2.0 ** 63)
        ints = np.where(fits, numbers, 0).astype(np.int64).tolist()
        return [n if ok else None for n, ok in zip(ints, fits.tolist())]
    return [None if not math.isfinite(v) else int(v) if v.is_integer() and abs(v) < 2.0 ** 53
            else v for v in numbers.tolist()]
