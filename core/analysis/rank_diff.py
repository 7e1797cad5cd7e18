"""Rank to rank: each rank's (or device's) median step on both sides of a diff, and the slowest.

Ranks are matched by name when both sides have the same names, else in natural order
("rank 2" before "rank 10"), the first with the first; a rank the other side has no partner
for is listed alone. The comparison is made only when both sides have more than one rank.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from proftui.core.analysis.summary import rows_table
from proftui.core.model.naming import natural_key
from proftui.core.model.table import Table
from proftui.core.model.words import duration_text


@dataclass(frozen=True)
class RankDelta:
    """One rank of the base matched with one of the new profile, by median step."""

    base_group: str | None
    new_group: str | None
    base_ns: int | None  # None: no step kept on this rank (or no partner)
    new_ns: int | None

    @property
    def delta_ns(self) -> int | None:
        if self.base_ns is None or self.new_ns is None:
            return None
        return self.new_ns - self.base_ns

    @property
    def delta_pct(self) -> float | None:
        delta = self.delta_ns
        return delta / self.base_ns * 100.0 if delta is not None and self.base_ns else None

    def to_json(self) -> dict[str, Any]:
        return {"base_group": self.base_group, "new_group": self.new_group,
                "base_ns": self.base_ns, "new_ns": self.new_ns, "delta_ns": self.delta_ns,
                "delta_pct": self.delta_pct}


@dataclass(frozen=True)
class Slowest:
    """The rank with the largest median step on one side (None without steps)."""

    group: str | None = None
    step_ns: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "step_ns": self.step_ns}


@dataclass(frozen=True)
class RankComparison:
    """The ranks matched (empty unless both sides have several), how, and the slowest."""

    rows: list[RankDelta] = field(default_factory=list)
    matched_by: str | None = None  # "name", "order", or None when not compared
    slowest_base: Slowest = Slowest()
    slowest_new: Slowest = Slowest()


def compare_ranks(base_groups: Sequence[str], base_ns: dict[str, int],
                  new_groups: Sequence[str], new_ns: dict[str, int]) -> RankComparison:
    """Match the ranks of two sides (`*_groups`: every rank; `*_ns`: the median step of each
    rank with steps kept) and name each side's slowest."""
    slowest = _slowest(base_ns), _slowest(new_ns)
    b = sorted(set(base_groups) | set(base_ns), key=natural_key)
    n = sorted(set(new_groups) | set(new_ns), key=natural_key)
    if len(b) < 2 or len(n) < 2:
        return RankComparison([], None, *slowest)
    matched_by = "name" if b == n else "order"
    rows = [RankDelta(bg, ng, base_ns.get(bg) if bg else None, new_ns.get(ng) if ng else None)
            for bg, ng in zip_longest(b, n)]
    return RankComparison(rows, matched_by, *slowest)


def _slowest(per_group: dict[str, int]) -> Slowest:
    if not per_group:
        return Slowest()
    # The largest step; among equals the first in natural order.
    group = min(per_group, key=lambda g: (-per_group[g], natural_key(g)))
    return Slowest(group, per_group[group])


def rank_table(ranks: RankComparison) -> tuple[str, Table] | None:
    """The ranks matched, as a (title, table) pair for printing; None when not compared."""
    if not ranks.rows:
        return None
    by_name = ranks.matched_by == "name"
    rows = [((r.base_group,) if by_name else (r.base_group, r.new_group))
            + (r.base_ns, r.new_ns, r.delta_ns,
               r.delta_pct / 100.0 if r.delta_pct is not None else None) for r in ranks.rows]
    groups = ["Rank"] if by_name else ["Base rank", "New rank"]
    table = rows_table(groups + ["Base", "New", "Delta", "Delta(%)"],
                       ["text"] * len(groups) + ["ns", "ns", "ns", "%"], rows)
    # one median step per rank: they do not add up
    return (f"ranks: median step per rank, matched by {ranks.matched_by}",
            dataclasses.replace(table, additive=False))


def slowest_text(ranks: RankComparison) -> str:
    """"slowest rank: base rank 0 (155.986 ms), new rank 1 (150 ms)", or "" without steps."""
    said = [f"{side} {s.group} ({duration_text(s.step_ns)})"
            for side, s in (("base", ranks.slowest_base), ("new", ranks.slowest_new))
            if s.group is not None and s.step_ns is not None]
    return "slowest rank: " + ", ".join(said) if said else ""
