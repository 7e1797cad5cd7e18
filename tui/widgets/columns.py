"""Which columns a table pane shows, and in what order: by default every column with the
row's name first; else what the person chose in the column chooser for that kind of table,
remembered in `$XDG_CONFIG_HOME/proftui/columns.json` (`~/.config/proftui/columns.json`)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from proftui.core.model.table import Table

# when the table scrolls sideways): the CSVs put ids (Device_id, Task ID ...) before it.
NAME_COLUMNS = {
    "op_summary": "Op Name",
    "kernel_details": "Name",
    "op_statistic": "OP Type",
    "aicpu": "Node",
    "api_statistic": "API Name",
    "l2_cache": "Op Name",
    "communication_statistic": "OP Type",
    "operator_details": "Name",
    "operator_memory": "Name",
    "step_trace": "Iteration ID",
}
VERSION = 1


@dataclass(frozen=True)
class ColumnLayout:
    """A chosen layout: column keys (see :func:`column_keys`) in order, and those hidden.
    Columns it does not name (a newer profiler's) are shown where the file puts them."""

    order: tuple[str, ...]
    hidden: frozenset[str] = frozenset()


def column_keys(table: Table) -> list[str]:
    """A key per column: its header, with " #2", " #3" ... on a header seen before."""
    seen: dict[str, int] = {}
    keys = []
    for column in table.columns:
        seen[column.header] = seen.get(column.header, 0) + 1
        n = seen[column.header]
        keys.append(column.header if n == 1 else f"{column.header} #{n}")
    return keys


def default_order(table: Table, program_hidden: Collection[str] = ()) -> list[int]:
    """The columns a person may see (not those the program keeps for itself, named in
    `program_hidden`), in the file's order with the kind's name column first."""
    shown = [i for i, c in enumerate(table.columns) if c.name not in program_hidden]
    name = NAME_COLUMNS.get(table.kind)
    first = table.find(name) if name else None
    if first is not None:
        at = next(i for i, c in enumerate(table.columns) if c is first)
        if at in shown:
            shown.remove(at)
            shown.insert(0, at)
    return shown


def arrange(table: Table, program_hidden: Collection[str] = (),
            layout: ColumnLayout | None = None) -> list[int]:
    """Indices of the columns a person may see, in order: `layout`'s order applied to the
    default order (a column the layout does not name follows the one before it by default).
    Which of them are hidden is `layout.hidden` (see :func:`shown_columns`)."""
    order = default_order(table, program_hidden)
    if layout is None:
        return order
    keys = column_keys(table)
    rank = {key: n for n, key in enumerate(layout.order)}
    placed = [i for i in order if keys[i] in rank]
    placed.sort(key=lambda i: rank[keys[i]])
    for n, i in enumerate(order):
        if keys[i] not in rank:
            before = order[n - 1] if n else None
            placed.insert(placed.index(before) + 1 if before in placed else 0, i)
    return placed


def shown_columns(table: Table, order: list[int], layout: ColumnLayout | None) -> list[int]:
    """The columns of `order` that `layout` does not hide (the first at least)."""
    if layout is None or not layout.hidden:
        return list(order)
    keys = column_keys(table)
    return [i for i in order if keys[i] not in layout.hidden] or order[:1]


def layout_of(table: Table, order: list[int], hidden: Collection[int],
              program_hidden: Collection[str] = ()) -> ColumnLayout | None:
    """The layout of columns `order` with `hidden` not shown; None when that is the
    default (nothing to remember)."""
    if list(order) == default_order(table, program_hidden) and not hidden:
        return None
    keys = column_keys(table)
    return ColumnLayout(tuple(keys[i] for i in order), frozenset(keys[i] for i in hidden))


def settings_path() -> Path:
    """Where the layouts are kept: $XDG_CONFIG_HOME/proftui/columns.json."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"),
                                                             ".config")
    return Path(base) / "proftui" / "columns.json"


class ColumnSettings:
    """The layouts chosen per kind of table, read from and written to `path`. A file that
    cannot be read or is not what this program writes is ignored, and `note` says so (it is
    replaced when a layout is next chosen)."""

    def __init__(self, path: Path, layouts: dict[str, ColumnLayout],
                 note: str | None = None) -> None:
        self.path = path
        self.layouts = layouts
        self.note = note

    @classmethod
    def load(cls, path: Path | None = None) -> ColumnSettings:
        """The settings of `path` (default :func:`settings_path`); never raises."""
        path = path or settings_path()
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return cls(path, {})
        except OSError as exc:
            return cls(path, {}, f"Column choices in {path} not read ({_reason(exc)}); "
                                 "using the defaults.")
        try:
            return cls(path, _parse(json.loads(data.decode("utf-8"))))
        except (ValueError, TypeError, AttributeError) as exc:
            return cls(path, {}, f"Column choices in {path} are damaged ({_reason(exc)}); "
                                 "using the defaults, the file is rewritten when columns "
                                 "are next chosen.")

    def get(self, kind: str) -> ColumnLayout | None:
        return self.layouts.get(kind)

    def put(self, kind: str, layout: ColumnLayout | None) -> str | None:
        """Remember `layout` for `kind` (None: back to the default) for this session and in
        the file; returns why the file could not be written, or None."""
        # Another app may have written other kinds since: keep them (unless that file is
        # damaged: then it is replaced by what this session knows).
        on_disk = ColumnSettings.load(self.path)
        merged = dict(self.layouts if on_disk.note else on_disk.layouts)
        if layout is None:
            merged.pop(kind, None)
        else:
            merged[kind] = layout
        self.layouts = merged
        data = {"version": VERSION, "tables": {
            k: {"order": list(v.order), "hidden": sorted(v.hidden)} for k, v in merged.items()}}
        tmp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Written whole, then renamed: a crash never leaves half a file.
            fd, tmp = tempfile.mkstemp(prefix=".columns.", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=1, ensure_ascii=False)
            os.replace(tmp, self.path)
        except OSError as exc:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
            return f"Column choices kept for this session only: {self.path} not written " \
                   f"({_reason(exc)})."
        return None


def _parse(data: object) -> dict[str, ColumnLayout]:
    """The layouts of the file's JSON; raises ValueError where it is not ours."""
    if not isinstance(data, dict) or not isinstance(data.get("tables"), dict):
        raise ValueError('no "tables" object')
    out = {}
    for kind, entry in data["tables"].items():
        order, hidden = entry.get("order"), entry.get("hidden", [])
        if not (isinstance(order, list) and isinstance(hidden, list)
                and all(isinstance(k, str) for k in order + hidden)):
            raise ValueError(f"the entry of {kind} is not lists of column names")
        out[str(kind)] = ColumnLayout(tuple(order), frozenset(hidden))
    return out


def _reason(exc: Exception) -> str:
    return (exc.strerror or type(exc).__name__) if isinstance(exc, OSError) else str(exc)
