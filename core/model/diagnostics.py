"""Counted import problems: what was wrong in a file, how often, and where first.

Each kind is *damage* (something of the input could not be read or used as written: bytes
skipped, events dropped, values clamped or guessed, tables or columns not read, clocks that do
not line up) or a *note* (what these profilers write in normal output, kept as the format
allows: a flow whose other end is outside the capture, a begin the capture ended before its
end, an event of a phase this reader does not know, kept as an instant). Only damage is
alarming; notes are listed for those who look.
"""

from __future__ import annotations

from dataclasses import dataclass

# Every kind a problem can have, with the sentence shown for it.
KINDS: dict[str, str] = {
    "bad_json": "a stretch of the file is not valid JSON and was skipped",
    "truncated": "the file ends early, inside an event or before its event array closes "
                 "(truncated)",
    "bad_tail": "the JSON after the event array could not be read",
    "not_an_object": "an entry of the event array is not a JSON object",
    "oversized": "an entry of more than 32 MB without an end that can be found was skipped",
    "too_deep": "an event nested more than 100 levels deep (the deeper levels read as null)",
    "missing_phase": "event without a phase (ph)",
    "unknown_phase": "event with an unknown phase (kept as an instant)",
    "bad_field": "a name, category, pid or tid of an unexpected JSON type (shown as text)",
    "bad_timestamp": "event without a usable timestamp (dropped)",
    "bad_duration": "complete (X) event with a missing or unusable duration (taken as 0)",
    "negative_duration": "negative duration (clamped to 0)",
    "too_long": "a slice (B/E or async pair) longer than 26 days, more than any profiler "
                "captures (taken as 0 long)",
    "unmatched_end": "E event without a matching B (dropped)",
    "unclosed_begin": "B event never closed (ended at its track's last timestamp)",
    "end_name_mismatch": "E event whose name differs from its B",
    "unmatched_async_end": "async end without a matching begin (dropped)",
    "unclosed_async": "async begin never ended (ended at the trace's end)",
    "flow_unbound": "flow point with no slice to bind to",
    "flow_orphan": "flow with a single point (no partner in the capture)",
    "bad_counter": "counter event without numeric values",
    "bad_metadata": "metadata (M) event with unusable arguments",
    "clock_outlier": "timestamp beyond int64 nanoseconds (dropped)",
    "unreadable_file": "a timeline of the profile could not be read (the others were)",
    "clock_unaligned": "a timeline keeps its own clock: its reference to the shared clock "
                       "is missing or unusable",
    "mixed_clocks": "a timeline on its own clock (zero-based or monotonic) shares the axis "
                    "with timelines on the wall clock: their times do not line up",
    "ragged_row": "CSV row with more or fewer cells than its header (padded or cut)",
    "bad_number": "CSV cell that is not a number in a column whose unit says numbers (left "
                  "empty)",
    "wide_csv": "CSV columns beyond the 1024th (left out)",
    "bad_csv": "the CSV cannot be read on from here (a cell over 16 MB, a NUL byte); "
               "the rows before are kept",
    "json_bad_entry": "an entry of a JSON summary (msprof-analyze's cluster files) of an "
                      "unexpected shape (skipped)",
    "json_bad_value": "a figure of a JSON summary that is not a number, or is negative (left "
                      "empty)",
    "db_missing_table": "a table the SQLite export should have is missing (what it holds "
                        "is not shown)",
    "db_missing_column": "a table of the SQLite export lacks a column proftui needs (the "
                         "table is not read)",
    "db_inexact_value": "a SQLite cell that should hold an integer held a decimal or text "
                        "(rounded, or left out when not a number)",
    "db_unknown_string": "a string id of the SQLite export that STRING_IDS does not hold "
                         "(shown as its number)",
}

# The kinds that are notes (see the module docstring); every other kind is damage.
NOTES: frozenset[str] = frozenset({
    "unknown_phase", "unclosed_begin", "end_name_mismatch", "unclosed_async", "flow_unbound",
    "flow_orphan"})


# Kinds after which nothing more of a file was read: a warning of one says where the profile
# stops, as what came after is lost.
CUT_SHORT: frozenset[str] = frozenset({"truncated", "bad_csv"})


def severity(kind: str) -> str:
    """"damage" or "note" (a kind not known here is damage: it is not known to be normal)."""
    return "note" if kind in NOTES else "damage"


@dataclass
class Problem:
    """One kind of problem: how often it happened and the first place it happened."""

    kind: str
    count: int
    first_offset: int | None
    detail: str

    @property
    def message(self) -> str:
        return KINDS.get(self.kind, self.kind)

    @property
    def severity(self) -> str:
        """"damage" or "note"."""
        return severity(self.kind)


class Diagnostics:
    """Problems found while importing, counted by kind."""

    def __init__(self) -> None:
        self._problems: dict[str, Problem] = {}

    def add(self, kind: str, count: int = 1, offset: int | None = None, detail: str = "") -> None:
        """Count `count` problems of `kind`; the first offset and detail seen are kept."""
        if count <= 0:
            return
        problem = self._problems.get(kind)
        if problem is None:
            self._problems[kind] = Problem(kind, count, offset, detail[:200])
        else:
            problem.count += count
            if problem.first_offset is None and offset is not None:
                problem.first_offset = offset

    def explain(self, kind: str, detail: str) -> None:
        """Replace the detail of `kind`, counted already, by a better reason for it."""
        problem = self._problems.get(kind)
        if problem is not None:
            problem.detail = detail[:200]

    def __iter__(self):
        return iter(sorted(self._problems.values(), key=lambda p: -p.count))

    def __len__(self) -> int:
        return len(self._problems)

    def count(self, kind: str) -> int:
        problem = self._problems.get(kind)
        return problem.count if problem else 0

    @property
    def total(self) -> int:
        """Problems of every kind, notes included."""
        return sum(p.count for p in self._problems.values())

    @property
    def damage(self) -> int:
        """Problems that are damage (see the module docstring)."""
        return sum(p.count for p in self._problems.values() if p.severity == "damage")

    @property
    def notes(self) -> int:
        """Problems that are notes."""
        return self.total - self.damage

    def to_list(self) -> list[dict]:
        return [
            {"kind": p.kind, "count": p.count, "first_offset": p.first_offset,
             "message": p.message, "detail": p.detail, "severity": p.severity}
            for p in self
        ]

    def warnings(self, end_ns: int | None = None) -> list[dict]:
        """The damage (notes left out), one warning a kind, most frequent first: its `kind`,
        `count`, `message`, `first_offset` (a byte, or null) and `end_ns`, where the profile
        stops (absolute), for a kind that cut a file short (CUT_SHORT) when `end_ns` is known
        (of a profile of one timeline), else null."""
        return [
            {"kind": p.kind, "count": p.count, "message": p.message,
             "first_offset": p.first_offset,
             "end_ns": end_ns if p.kind in CUT_SHORT else None}
            for p in self if p.severity == "damage"
        ]

    @classmethod
    def from_list(cls, items: list[dict]) -> Diagnostics:
        diags = cls()
        for item in items:
            diags.add(item["kind"], int(item["count"]), item.get("first_offset"),
                      item.get("detail", ""))
        return diags
