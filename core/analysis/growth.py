"""What appeared in a profile being written, between two openings of it: new ranks (or cycle
traces, devices: groups) with their median step, and new steps of the ranks seen before.

A group is known by its timeline files rather than its label: discovery names a lone rank ""
and the same rank "rank 0" once a second one is beside it (see
:func:`proftui.core.discover.profile.discover`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from proftui.core.analysis.step_parts import step_parts
from proftui.core.analysis.summary import iteration_summary
from proftui.core.ops.iterations import Iteration, Iterations


@dataclass(frozen=True)
class NewGroup:
    """A rank (device, cycle trace) that was not there before."""

    group: str  # its label in the new opening ("" for the lone one)
    where: str  # its first file's first folder (or file) under the profile's root
    steps: int
    median_step_ns: int | None  # as `summary` says it (warm-up left out); None: no step


@dataclass(frozen=True)
class NewStep:
    """A step of a rank seen before that was not there before."""

    group: str
    number: int
    dur_ns: int | None  # None: its length is not known


@dataclass
class Seen:
    """What one opening held: its groups (by their files) and their steps."""

    groups: set[str] = field(default_factory=set)  # group keys (see group_key)
    steps: set[tuple[str, int]] = field(default_factory=set)  # (group key, step number)


def group_keys(profile: dict[str, Any]) -> dict[str, str]:
    """Each group label of an opening's profile description (``index.meta["profile"]``) and
    what stays the same of it while the folder grows: its first timeline file, else its
    first table's, else the label."""
    keys: dict[str, str] = {}
    for entry in [*profile.get("timelines", ()), *profile.get("tables", ())]:
        keys.setdefault(entry["group"], entry["path"])
    return keys


def appeared(before: Seen, profile: dict[str, Any], found: Iterations
             ) -> tuple[list[NewGroup | NewStep], Seen]:
    """What the opening described by `profile` (with its iterations `found`) holds that
    `before` did not, new groups first, and what it holds (the next call's `before`)."""
    keys = group_keys(profile)
    labels = list(dict.fromkeys([*keys, *(it.group for it in found.items)]))
    now = Seen({keys.get(g, g) for g in labels},
               {(keys.get(it.group, it.group), it.number) for it in found.items})
    medians = {entry["group"]: entry for entry in
               (iteration_summary(found) or {"groups": []})["groups"]}
    out: list[NewGroup | NewStep] = []
    for label in labels:
        if keys.get(label, label) not in before.groups:
            entry = medians.get(label, {})
            out.append(NewGroup(label, _where(profile, keys.get(label, label)),
                                entry.get("count", 0), entry.get("median_ns")))
    for it in found.items:
        key = keys.get(it.group, it.group)
        if key in before.groups and (key, it.number) not in before.steps:
            out.append(NewStep(it.group, it.number, _length_ns(it)))
    return out, now


def _where(profile: dict[str, Any], key: str) -> str:
    root = profile.get("root") or ""
    if not root or not os.path.isabs(key):
        return key
    return os.path.relpath(key, root).split(os.sep)[0]


def _length_ns(it: Iteration) -> int | None:
    if it.dur_ns >= 0:
        return it.dur_ns
    parts = step_parts(it)
    return None if parts is None else int(parts.step_ns)
