"""The parts of a step that do not overlap one another and add up to it: what a stacked bar
of the step may draw.

A profile's own breakdown names parts that contain one another: torch_npu's Stage holds
Computing, Communication(Not Overlapped) and Free (less the Bubble, which is receive time
inside Communication(Not Overlapped)), Communication holds its Not Overlapped and Overlapped
parts, and Overlapped lies inside Computing. Stacking them all draws a 156 ms step as 397 ms.
Of each vocabulary only one disjoint set is stacked, in the order the parts happen:

- the breakdown computed from the tracks (:mod:`proftui.core.analysis.breakdown`): Prepare
  (step start to the device window), then over the device window Compute, Comm exposed and
  Free (which is the window less the other two, so the three tile it);
- torch_npu's step_trace_time.csv, or msprof's Overlap Analysis track: preparing, computing,
  communication(not overlapped), free;
- msprof's step trace: data aug bound, FP+BP, iteration refresh;
- MindSpore's step trace: iteration interval, FP+BP, tail.

What the parts leave of the step is "other" (the host's tail after the last device operator,
or what a profiler's parts do not name), so the parts always add up to the step exactly.
Where they add up to more (device work the step launched still running after its end, as
Kineto traces often show), nothing is cut: `over_ns` says by how much they pass the step's
end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from proftui.core.ops.iterations import Iteration

OTHER = "other"
# (required parts, parts in the order they happen) of a profile's own breakdown; names as
# Iteration.parts holds them.
PROFILE_SETS: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = (
    (frozenset({"computing", "communication(not overlapped)", "free"}),
     ("preparing", "computing", "communication(not overlapped)", "free")),
    (frozenset({"FP+BP", "iteration interval"}), ("iteration interval", "FP+BP", "tail")),
    (frozenset({"FP+BP"}), ("data aug bound", "FP+BP", "iteration refresh")),
)
# torch_npu's step_trace_time parts (as Iteration.parts names them) -> the breakdown's device
# keys they stand for, where a profile has the table but no timeline. Stage is the device
# window (Computing + Communication(Not Overlapped) + Free); Free is the window less compute
# and exposed communication, so copies and idle time are in it, not apart; Bubble
# (pipeline receive time inside Communication(Not Overlapped)) has no key of its own.
STEP_TRACE_DEVICE = {
    "computing": "compute_ns", "communication(not overlapped)": "comm_exposed_ns",
    "overlapped": "overlapped_ns", "communication": "comm_ns", "free": "free_ns",
    "stage": "span_ns", "preparing": "prepare_ns"}

# The computed breakdown's disjoint parts: (header as the breakdown's columns name it, key).
BREAKDOWN_SET = (("Prepare", "prepare_ns"), ("Compute", "compute_ns"),
                 ("Comm exposed", "comm_exposed_ns"), ("Free", "free_ns"))


@dataclass(frozen=True)
class StepParts:
    """The disjoint parts of one step, in time order, with "other" last where the step holds
    more; `sum(ns) == step_ns + over_ns`."""

    parts: tuple[tuple[str, int], ...]
    step_ns: int
    over_ns: int = 0  # how far the parts run past the step's end

    @property
    def total_ns(self) -> int:
        return sum(ns for _, ns in self.parts)


def step_parts(iteration: Iteration, device: Mapping[str, int] | None = None
               ) -> StepParts | None:
    """The disjoint parts of `iteration`: from its computed breakdown's `device` part (see
    :class:`~proftui.core.analysis.breakdown.StepBreakdown`) when given with every part,
    else (a breakdown read from the step table itself) from the first of the profile's own
    sets its parts hold; None when neither says anything."""
    if device is not None and all(device.get(key) is not None for _, key in BREAKDOWN_SET):
        named = [(header, max(int(device[key]), 0)) for header, key in BREAKDOWN_SET]
    else:
        named = _profile_parts(iteration.parts)
        if named is None:
            return None
    total = sum(ns for _, ns in named)
    step = iteration.dur_ns if iteration.dur_ns >= 0 else total
    if total < step:
        named.append((OTHER, step - total))
    return StepParts(tuple((name, ns) for name, ns in named if ns > 0), step,
                     max(total - step, 0))


def _profile_parts(parts: Mapping[str, float]) -> list[tuple[str, int]] | None:
    for required, order in PROFILE_SETS:
        if required <= parts.keys():
            # Parts are read from µs text: whole ns, so that they add up exactly.
            return [(name, max(int(round(parts[name])), 0)) for name in order if name in parts]
    return None


def step_trace_device(iteration: Iteration) -> dict[str, int] | None:
    """The breakdown's device parts a step_trace_time row gives `iteration` (whole ns; the
    keys of STEP_TRACE_DEVICE its row has), or None when its parts are not torch_npu's."""
    if not PROFILE_SETS[0][0] <= iteration.parts.keys():
        return None
    return {key: max(int(round(iteration.parts[part])), 0)
            for part, key in STEP_TRACE_DEVICE.items() if part in iteration.parts}


_ORDER = {name: k for k, name in enumerate(dict.fromkeys(
    [header for header, _ in BREAKDOWN_SET] + [n for _, order in PROFILE_SETS for n in order]
    + [OTHER]))}


def part_order(name: str) -> int:
    """Where a part goes among all the sets' parts: in the order parts happen, "other"
    last (to order a legend of several steps' parts)."""
    return _ORDER.get(name, len(_ORDER))
