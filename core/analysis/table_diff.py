"""Summary tables on both sides of a diff (op_statistic, kernel_details, ...) compared by key.

Which kinds are compared, and by which columns, is data (:data:`SPECS`): a key column (with an
optional detail column shown after it, "MatMul (AI_CORE)"), a duration column and a count
column, or one call per row. Names of kernels and operators are matched as the diff's op deltas
match them (generated parts ignored, the op map applied); statistic tables keep their keys.

The totals are the *whole capture*: every row of every table of a kind on a side, the tables
of several ranks or devices summed. They are not per step: op_statistic and api_statistic have
no step column, and kernel_details' `Step Id` is left unused so that every kind covers the same
steps; the warm-up step the diff leaves out is in these totals. Two captures of different
lengths differ by that too (the diff warns when the sides captured different numbers of steps).

A kind on one side only is listed as not compared; so is a kind one of whose tables lacks a
column the comparison needs (a partial sum would mislead), with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from proftui.core.analysis.summary import rows_table
from proftui.core.model.naming import natural_key
from proftui.core.model.table import MISSING, Column, Table
from proftui.core.tables.query import TIME_UNITS, factorize

SCOPE = "whole capture"


@dataclass(frozen=True)
class TableSpec:
    """How one kind of summary table is compared: its key, time and count columns."""

    kind: str
    key: str  # the column rows are matched by
    detail: str | None  # shown after the key when the table has it: "MatMul (AI_CORE)"
    time: str  # a duration column (with a time unit)
    count: str | None  # the calls per row; None: each row is one call
    normalised: bool  # names matched as the op deltas' (generated parts ignored)

    @property
    def key_text(self) -> str:
        return f"{self.key} ({self.detail})" if self.detail else self.key


SPECS = (
    TableSpec("op_statistic", "OP Type", "Core Type", "Total Time", "Count", False),
    TableSpec("kernel_details", "Name", None, "Duration", None, True),
    TableSpec("op_summary", "Op Name", None, "Task Duration", None, True),
    TableSpec("communication_statistic", "OP Type", None, "Total Time", "Count", False),
    TableSpec("api_statistic", "API Name", "Level", "Time", "Count", False),
    TableSpec("operator_details", "Name", None, "Device Total Duration", None, True),
)


@dataclass(frozen=True)
class KeyDelta:
    """One key (an op, an op type, a kernel) on both sides of a comparison: its totals and
    counts (a table's over the whole capture, the trace's ops per step)."""

    key: str
    base_total_ns: int
    new_total_ns: int
    base_count: float
    new_count: float

    @property
    def delta_ns(self) -> int:
        return self.new_total_ns - self.base_total_ns

    @property
    def status(self) -> str:
        """"added", "removed", "unchanged" (the same total and count on both sides) or
        "changed"."""
        if not self.base_count:
            return "added"
        if not self.new_count:
            return "removed"
        same = (self.base_total_ns, self.base_count) == (self.new_total_ns, self.new_count)
        return "unchanged" if same else "changed"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "base_total_ns": self.base_total_ns,
                "new_total_ns": self.new_total_ns, "delta_ns": self.delta_ns,
                "base_count": self.base_count, "new_count": self.new_count,
                "status": self.status}


@dataclass(frozen=True)
class TableDelta:
    """One kind of summary table compared: its rows by largest change, or why it was not."""

    kind: str
    key: str  # the key's columns, as text
    rows: list[KeyDelta]
    skipped: str | None  # why the kind was not compared (None when it was)
    base_groups: list[str]  # the ranks or devices whose tables were summed
    new_groups: list[str]
    scope: str = SCOPE

    def to_json(self, top: int | None = None) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "scope": self.scope,
                "groups": {"base": self.base_groups, "new": self.new_groups},
                "n_rows": len(self.rows), "rows": [r.to_json() for r in self.rows[:top]],
                "skipped": self.skipped}


def compare_tables(base: Sequence[Table], new: Sequence[Table],
                   key_of: Callable[[str], str] = str) -> list[TableDelta]:
    """Each kind of :data:`SPECS` either side has, compared (see the module docstring);
    `key_of` turns a kernel or operator name into the key it is matched by."""
    out = []
    for spec in SPECS:
        b = [t for t in base if t.kind == spec.kind]
        n = [t for t in new if t.kind == spec.kind]
        if not b and not n:
            continue
        groups = _groups(b), _groups(n)
        if not b or not n:
            side = "base" if b else "new"
            out.append(TableDelta(spec.kind, spec.key_text, [],
                                  f"only the {side} profile has {spec.kind} tables", *groups))
            continue
        b_totals, b_why = _totals(b, spec, key_of)
        n_totals, n_why = _totals(n, spec, key_of)
        why = f"base: {b_why}" if b_why else f"new: {n_why}" if n_why else None
        if why:
            out.append(TableDelta(spec.kind, spec.key_text, [], why, *groups))
            continue
        rows = [_key_delta(k, b_totals.get(k, (0, 0)), n_totals.get(k, (0, 0)))
                for k in set(b_totals) | set(n_totals)]
        rows.sort(key=lambda r: (-abs(r.delta_ns), r.key))
        out.append(TableDelta(spec.kind, spec.key_text, rows, None, *groups))
    return out


def _groups(tables: list[Table]) -> list[str]:
    return sorted({t.group for t in tables}, key=natural_key)


def _key_delta(key: str, base: tuple[int, int], new: tuple[int, int]) -> KeyDelta:
    """A key's delta from each side's (total ns, count)."""
    return KeyDelta(key, base[0], new[0], base[1], new[1])


def _totals(tables: list[Table], spec: TableSpec, key_of: Callable[[str], str]
            ) -> tuple[dict[str, tuple[int, int]], str | None]:
    """Per key, (total ns, count) over the tables; or the reason a table cannot be used."""
    sums: dict[str, tuple[float, float]] = {}
    for table in tables:
        where = os.path.basename(table.path) or table.kind
        where += f" [{table.group}]" if table.group else ""
        key, time = table.find(spec.key), table.find(spec.time)
        count = table.find(spec.count) if spec.count else None
        for name, column in ((spec.key, key), (spec.time, time), (spec.count, count)):
            if name and column is None:
                return {}, f'{where} has no "{name}" column'
        assert key is not None and time is not None
        if time.kind != "number" or time.unit not in TIME_UNITS:
            return {}, f'{where}: "{time.header}" is not a duration with a time unit'
        if count is not None and count.kind != "number":
            return {}, f'{where}: "{count.header}" is not a number'
        detail = table.find(spec.detail) if spec.detail else None
        codes, keys = _row_keys(key, detail, key_of if spec.normalised else _plain)
        ns = _present(time.values) * TIME_UNITS[time.unit]
        calls = _present(count.values) if count is not None else np.ones(table.n_rows)
        ns_by_key = np.bincount(codes, weights=ns, minlength=len(keys))
        calls_by_key = np.bincount(codes, weights=calls, minlength=len(keys))
        for k, t, c in zip(keys, ns_by_key.tolist(), calls_by_key.tolist()):
            total, calls_before = sums.get(k, (0.0, 0.0))
            sums[k] = (total + t, calls_before + c)
    # Summed in float and rounded once per key: the fractions of a ns in cells ("840.07675"
    # us) add up rather than being rounded away row by row.
    return {k: (round(t), round(c)) for k, (t, c) in sums.items()}, None


def _plain(name: str) -> str:
    return name


def _present(values: np.ndarray) -> np.ndarray:
    """A number column with its missing cells (NaN) as 0."""
    values = np.asarray(values, np.float64)
    return np.where(np.isfinite(values), values, 0.0)


def _row_keys(key: Column, detail: Column | None, key_of: Callable[[str], str]
              ) -> tuple[np.ndarray, list[str]]:
    """Each row's key code and the distinct keys: every distinct name is matched once."""
    codes, names = factorize(key.values)
    texts = [key_of(n.strip()) or "(no name)" for n in names]
    if detail is not None:
        detail_codes, details = factorize(detail.values)
        pairs, codes = np.unique(codes * len(details) + detail_codes, return_inverse=True)
        texts = [_with_detail(texts[p // len(details)], details[p % len(details)])
                 for p in pairs.tolist()]
    # Distinct names may share a key ("triton_poi_0", "triton_poi_1"): one code per key.
    merged: dict[str, int] = {}
    remap = np.fromiter((merged.setdefault(t, len(merged)) for t in texts), np.int64,
                        len(texts))
    return remap[np.asarray(codes, np.int64)], list(merged)


def _with_detail(key: str, detail: str) -> str:
    detail = detail.strip()
    return f"{key} ({detail})" if detail not in MISSING else key


def delta_tables(tables: Sequence[TableDelta], top: int | None = None
                 ) -> list[tuple[str, Table]]:
    """The kinds compared, each as a (title, table) pair of its `top` rows by largest change,
    then one table of the kinds not compared and why."""
    out = []
    for delta in tables:
        if delta.skipped is not None:
            continue
        rows = [(r.key, r.base_total_ns, r.new_total_ns, r.delta_ns, r.base_count, r.new_count,
                 r.status) for r in delta.rows[:top]]
        summed = _summed(delta.base_groups, delta.new_groups)
        out.append((f"{delta.kind} by {delta.key}: {delta.scope}{summed} ({len(delta.rows)} "
                    "in all)",
                    rows_table([delta.key, "Base", "New", "Delta", "Count base", "Count new",
                                "Status"], ["text", "ns", "ns", "ns", "", "", "text"], rows)))
    skipped = [(d.kind, d.skipped) for d in tables if d.skipped is not None]
    if skipped:
        out.append(("summary tables not compared",
                    rows_table(["Table", "Reason"], ["text", "text"], skipped)))
    return out


def _summed(base: list[str], new: list[str]) -> str:
    """", 2 ranks summed" where a side's tables come from several ranks or devices."""
    if len(base) < 2 and len(new) < 2:
        return ""
    noun = next((f"{word}s" for word in ("rank", "device")
                 if all(g.lower().startswith(word) for g in base + new)), "ranks or devices")
    count = str(len(base)) if len(base) == len(new) else f"{len(base)} and {len(new)}"
    return f", {count} {noun} summed"
