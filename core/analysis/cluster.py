"""Which rank is slow, and who waits for whom: the ranks of one profile compared step by step,
and each collective matched across the ranks of its communication group.

Steps: per rank (group: rank or device) and iteration, the step time and the device's
compute, exposed communication and free time of the breakdown (:mod:`.breakdown`, the same
numbers as ``proftui breakdown``). Per rank, the median of each over its steps with the
warm-up left out as every command leaves it out (the first step of a rank that has three or
more: :func:`~proftui.core.ops.iterations.warmup`); the spread of the ranks' median steps,
(max - min) / mean; the slowest (rank, iteration), warm-up left out. A rank without steps
is one window, its whole capture. The advisor's slow_rank rule says whether a rank *works*
longer than the others (its own compute, exposed copies and host-bound idle), which a longer
step alone does not: every rank's step stretches to the slowest one's at the collectives.

Collectives: the device-side communication operators of each rank (the slices the breakdown
counts as communication), matched by the first rule that applies to the profile:

- ``hccl_name``: Ascend HCCL ops on the device's HCCL "Group N Communication" track, one slice
  per collective per rank, named ``hcom_<op>__<group>_<index>_<n>`` (``hcom_allReduce__586_0_1``:
  group 586, the last three digits of the communication group's hash; 586's collective 0).
  The host's ``AscendCL@hcom_allReduce_`` carries no ordinals, the Plane tracks hold the
  tasks of a collective (many per collective) and are copies; so the device op it is. The
  same name on every rank is the same instance (the k-th time each rank shows it, where a
  graph runs the same op every step).
- ``nccl_args``: NCCL kernels whose args (or the args of the ``record_param_comms`` op that
  launched them) name the process group and collective: the same (group, collective,
  ``Seq``) on every rank, else the k-th (group, collective) of each rank.
- ``order``: otherwise the k-th slice of the same name on each rank.

Collectives the chosen rule cannot key (a name without ordinals, a kernel without args) are
matched by order of appearance. A group's members are the ranks that show any collective of
it. An instance found on every member (two or more) is matched: its arrival skew is the last
start less the first; per rank, its wait runs from its own start to the last arrival, its
transfer from the last arrival to its own end (the collective's own time once all are there:
moving the data, and any waiting inside the op the profile does not split out; negative only
when the ranks' clocks are not aligned: skews are as good as that alignment). An instance
missing on some member is unmatched, counted and listed. Totals (wait per rank, arrivals
last, who waited for whom) leave out the instances of warm-up steps, as the medians do.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from proftui.core.analysis import activity as act
from proftui.core.analysis.advise import (
    RULES_BY_ID,
    Finding,
    considered,
    run_rules,
    steps_by_group,
)
from proftui.core.analysis.breakdown import TIMELINE, Breakdown, StepBreakdown, breakdown
from proftui.core.analysis.summary import rows_table
from proftui.core.model.index import TraceIndex
from proftui.core.model.naming import natural_key
from proftui.core.model.table import Table
from proftui.core.ops.iterations import Iteration, Iterations, warmup

HCCL_NAME = re.compile(r"^(hcom_[A-Za-z0-9]+(?:_[A-Za-z][A-Za-z0-9]*)*)_+(\d+)_(\d+)_(\d+)$")
STEP_PARTS = ("compute_ns", "comm_exposed_ns", "free_ns")  # device parts per step
MATCH_RULES = ("hccl_name", "nccl_args", "order")
_NCCL_KEYS = ("Process Group Name", "Collective name")
_LAUNCHER = "record_param_comms"
UNMATCHED_LISTED = 50


@dataclass(frozen=True)
class RankStep:
    """One rank's step: its time and device parts (None where it ran nothing on a device);
    `warmup` when left out of the medians."""

    iteration: int | None
    step_ns: int
    compute_ns: int | None
    comm_exposed_ns: int | None
    free_ns: int | None
    warmup: bool = False
    source: str = TIMELINE  # the breakdown's: "timeline", "step_trace_time.csv" ...

    def to_json(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "step_ns": self.step_ns,
                "compute_ns": self.compute_ns, "comm_exposed_ns": self.comm_exposed_ns,
                "free_ns": self.free_ns, "warmup": self.warmup, "source": self.source}


@dataclass(frozen=True)
class RankSummary:
    """One rank: its steps in order, the medians over those that are not warm-up, and how
    many collectives it ran."""

    rank: str
    steps: list[RankStep]
    median: dict[str, int | None]
    collectives: int | None = 0  # None without a timeline to find them in

    @property
    def source(self) -> str:
        """Where its steps come from ("timeline", "step_trace_time.csv" ...), comma-joined."""
        return ", ".join(dict.fromkeys(s.source for s in self.steps))

    @property
    def timed(self) -> bool:
        """Whether its steps come from its timeline (collectives and waits are there only)."""
        return any(s.source == TIMELINE for s in self.steps)

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "source": self.source,
                "steps": [s.to_json() for s in self.steps],
                "median": self.median, "collectives": self.collectives}


@dataclass(frozen=True)
class Arrival:
    """One rank at one collective instance: its start (trace clock), wait and transfer."""

    start_ns: int
    wait_ns: int
    transfer_ns: int

    def to_json(self) -> dict[str, int]:
        return {"start_ns": self.start_ns, "wait_ns": self.wait_ns,
                "transfer_ns": self.transfer_ns}


@dataclass(frozen=True)
class Instance:
    """One collective matched on every rank of its group."""

    name: str
    group: str
    sequence: int
    iteration: int | None
    warmup: bool
    skew_ns: int
    last_rank: str | None  # None when all arrived at once
    per_rank: dict[str, Arrival]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "group": self.group, "sequence": self.sequence,
                "iteration": self.iteration, "warmup": self.warmup, "skew_ns": self.skew_ns,
                "last_rank": self.last_rank,
                "per_rank": {r: a.to_json() for r, a in self.per_rank.items()}}


@dataclass(frozen=True)
class Unmatched:
    """A collective instance some members of its group do not show."""

    name: str
    group: str
    sequence: int
    iteration: int | None
    ranks: list[str]
    missing: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "group": self.group, "sequence": self.sequence,
                "iteration": self.iteration, "ranks": self.ranks, "missing": self.missing}


@dataclass(frozen=True)
class Collectives:
    """The collectives matched across ranks, by which rule, and those that were not."""

    matched_by: str | None = None  # one of MATCH_RULES; None without collectives
    instances: list[Instance] = field(default_factory=list)  # by skew, largest first
    unmatched: list[Unmatched] = field(default_factory=list)
    count: dict[str, int] = field(default_factory=dict)  # collectives per rank

    def to_json(self, top: int | None = None) -> dict[str, Any]:
        return {"matched_by": self.matched_by, "matched": len(self.instances),
                "instances": [i.to_json() for i in self.instances[:top]],
                "unmatched": {"count": len(self.unmatched),
                              "instances": [u.to_json()
                                            for u in self.unmatched[:UNMATCHED_LISTED]]},
                "count": self.count}


@dataclass(frozen=True)
class Cluster:
    """The cluster question answered: per rank its steps and medians, the slowest cell, the
    spread of the median steps, the collectives matched, and who waits for whom."""

    ranks: list[RankSummary]
    slowest: tuple[str, int | None, int] | None  # (rank, iteration, step_ns)
    spread: float | None
    collectives: Collectives
    last_arrivals: dict[str, int]
    wait_ns: dict[str, int]
    waits_for: dict[str, dict[str, int]]  # waits_for[a][b]: a's wait at b's late arrivals
    slow_rank: list[Finding]
    source: str = ""  # where the steps came from (the iterations' source)

    @property
    def timed(self) -> bool:
        """Whether some rank has a timeline: without, no collective can be matched."""
        return any(r.timed for r in self.ranks)

    def to_json(self, top: int | None = None) -> dict[str, Any]:
        slowest = (None if self.slowest is None else
                   dict(zip(("rank", "iteration", "step_ns"), self.slowest)))
        sources = ", ".join(dict.fromkeys(r.source for r in self.ranks if r.source))
        return {"source": sources or None, "ranks": [r.to_json() for r in self.ranks],
                "slowest": slowest,
                "spread": self.spread, "collectives": self.collectives.to_json(top),
                "last_arrivals": self.last_arrivals, "wait_ns": self.wait_ns,
                "waits_for": self.waits_for,
                "slow_rank": [f.to_json() for f in self.slow_rank]}


def cluster(index: TraceIndex, iterations: Iterations | Sequence[Iteration],
            tables: Sequence[Table] = (), *, number: int | None = None,
            steps: Breakdown | None = None) -> Cluster:
    """Compare the ranks of a profile (or, with `number`, that one iteration alone, warm-up
    or not) and match their collectives. `steps`: the breakdown of `iterations`, when the
    caller has it already."""
    found = steps if steps is not None else breakdown(index, iterations, tables)
    all_steps = steps_by_group(found)
    kept = considered(all_steps)
    if number is not None:
        all_steps = {g: [b for b in s if b.iteration == number] for g, s in all_steps.items()}
        all_steps = {g: s for g, s in all_steps.items() if s}
        kept = all_steps
    names = sorted(all_steps, key=natural_key)
    ranks = []
    for name in names:
        out = {id(b) for b in all_steps[name]} - {id(b) for b in kept[name]}
        ranks.append(_summary(name, all_steps[name], kept[name], out))
    collectives = match_collectives(index, tables, all_steps)
    if number is not None:
        collectives = dataclasses.replace(
            collectives, instances=[i for i in collectives.instances if i.iteration == number],
            unmatched=[u for u in collectives.unmatched if u.iteration == number])
    counts = collectives.count
    ranks = [dataclasses.replace(r, collectives=counts.get(r.rank, 0) if r.timed else None)
             for r in ranks]
    last, wait, waits_for = _who_waits(names, collectives.instances)
    slow = (run_rules(index, tables, {g: kept[g] for g in names},
                      [RULES_BY_ID["slow_rank"]]).findings if len(names) > 1 else [])
    source = iterations.source if isinstance(iterations, Iterations) else ""
    return Cluster(ranks, _slowest(ranks), _spread(ranks), collectives, last, wait, waits_for,
                   slow, source if found.steps else "")


def _summary(name: str, steps: list[StepBreakdown], kept: list[StepBreakdown],
             warm: set[int]) -> RankSummary:
    rows = [RankStep(b.iteration, b.step_ns,
                     *(b.device[k] if b.device else None for k in STEP_PARTS),
                     warmup=id(b) in warm, source=b.source) for b in steps]
    median: dict[str, int | None] = {"step_ns": _median([b.step_ns for b in kept])}
    for key in STEP_PARTS:
        median[key] = _median([v for b in kept if b.device and (v := b.device[key]) is not None])
    return RankSummary(name, rows, median)


def _median(values: list[int]) -> int | None:
    return int(round(float(np.median(values)))) if values else None


def _slowest(ranks: list[RankSummary]) -> tuple[str, int | None, int] | None:
    cells = [(r.rank, s.iteration, s.step_ns) for r in ranks for s in r.steps if not s.warmup]
    if not cells:
        return None
    # The longest step; among equals the first rank in natural order, then iteration.
    return max(cells, key=lambda c: c[2])


def _spread(ranks: list[RankSummary]) -> float | None:
    medians = [r.median["step_ns"] for r in ranks if r.median["step_ns"] is not None]
    if len(medians) < 2 or sum(medians) <= 0:
        return None
    return (max(medians) - min(medians)) / (sum(medians) / len(medians))


def _who_waits(ranks: list[str], instances: list[Instance]
               ) -> tuple[dict[str, int], dict[str, int], dict[str, dict[str, int]]]:
    last = {r: 0 for r in ranks}
    wait = {r: 0 for r in ranks}
    waits_for: dict[str, dict[str, int]] = {}
    for inst in instances:
        if inst.warmup:
            continue
        for rank, arrival in inst.per_rank.items():
            wait[rank] = wait.get(rank, 0) + arrival.wait_ns
        if inst.last_rank is None:
            continue
        last[inst.last_rank] = last.get(inst.last_rank, 0) + 1
        for rank, arrival in inst.per_rank.items():
            if rank != inst.last_rank:
                mine = waits_for.setdefault(rank, {})
                mine[inst.last_rank] = mine.get(inst.last_rank, 0) + arrival.wait_ns
    return last, wait, waits_for


# -- collectives -------------------------------------------------------------------------------


@dataclass
class _Slice:
    """One rank's collective slice, keyed for matching."""

    row: int
    start_ns: int
    end_ns: int
    key: tuple
    name: str
    group: str
    sequence: int


def match_collectives(index: TraceIndex, tables: Sequence[Table] = (),
                      steps: dict[str, list[StepBreakdown]] | None = None) -> Collectives:
    """Match each rank's device collectives across the ranks of their group (see the module
    docstring); `steps` (per rank, all its steps) places each instance in an iteration."""
    found = act.activity(index, tables)
    rows = np.flatnonzero(found.device & (found.device_kind == act.COMM))
    if not len(rows):
        return Collectives()
    s = index.strings
    start = index.col("slices.start")[rows]
    end = start + index.col("slices.dur")[rows]
    order = np.lexsort((rows, start))
    rows, start, end = rows[order], start[order], end[order]
    groups = [s[g] for g in found.groups_of(rows).tolist()]
    names = [s[n] for n in index.col("slices.name")[rows].tolist()]
    parsed = [HCCL_NAME.match(n) for n in names]
    args: list[Any] = [None] * len(rows)
    if any(parsed):
        rule = "hccl_name"
    else:
        args = _nccl_args(index, rows)
        rule = "nccl_args" if any(a is not None for a in args) else "order"
    per_rank: dict[str, list[_Slice]] = {}
    seen: dict[tuple, int] = {}  # (rank, base key) -> occurrences so far
    for k, (row, name) in enumerate(zip(rows.tolist(), names)):
        rank = groups[k]
        base, group, sequence = _base_key(name, parsed[k], args[k])
        n = seen[(rank, base)] = seen.get((rank, base), -1) + 1
        if sequence is None:
            sequence = n
        label = name if base[0] != "nccl" else str(args[k].get("Collective name") or name)
        per_rank.setdefault(rank, []).append(
            _Slice(row, int(start[k]), int(end[k]), (*base, n), label, group, sequence))
    ranks = sorted(per_rank, key=natural_key)
    members: dict[str, list[str]] = {}
    for rank in ranks:
        for group in dict.fromkeys(x.group for x in per_rank[rank]):
            members.setdefault(group, []).append(rank)
    by_key: dict[tuple, dict[str, _Slice]] = {}
    for rank in ranks:
        for x in per_rank[rank]:
            by_key.setdefault(x.key, {})[rank] = x
    place = _placer(steps or {})
    instances, unmatched = [], []
    for key, present in by_key.items():
        first = next(iter(present.values()))
        group_ranks = members[first.group]
        if len(group_ranks) < 2:
            continue  # a group of one: nothing to match it with
        iteration, warm = place(present)
        if len(present) < len(group_ranks):
            unmatched.append(Unmatched(first.name, first.group, first.sequence, iteration,
                                       [r for r in group_ranks if r in present],
                                       [r for r in group_ranks if r not in present]))
            continue
        instances.append(_instance(first, present, iteration, warm))
    instances.sort(key=lambda i: (-i.skew_ns, min(a.start_ns for a in i.per_rank.values())))
    return Collectives(rule, instances, unmatched, {r: len(per_rank[r]) for r in ranks})


def _base_key(name: str, parsed: re.Match | None, args: dict | None
              ) -> tuple[tuple, str, int | None]:
    """(key without the occurrence count, group, sequence or None) of one slice."""
    if parsed is not None:
        return ("hccl", name), parsed.group(2), int(parsed.group(3))
    if args is not None:
        group = str(args.get("Process Group Name", ""))
        collective = str(args.get("Collective name", name))
        seq = args.get("Seq")
        if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0:
            return ("nccl", group, collective, seq), group, seq
        return ("nccl", group, collective), group, None
    return ("order", name), "", None


def _instance(first: _Slice, present: dict[str, _Slice], iteration: int | None,
              warm: bool) -> Instance:
    last_start = max(x.start_ns for x in present.values())
    skew = last_start - min(x.start_ns for x in present.values())
    # present is in natural rank order: the first of equal latest starts is the last rank
    last = next(r for r, x in present.items() if x.start_ns == last_start) if skew else None
    per_rank = {r: Arrival(x.start_ns, last_start - x.start_ns, x.end_ns - last_start)
                for r, x in present.items()}
    return Instance(first.name, first.group, first.sequence, iteration, warm, skew, last,
                    per_rank)


def _placer(steps: dict[str, list[StepBreakdown]]
            ) -> Callable[[dict[str, _Slice]], tuple[int | None, bool]]:
    """A function placing an instance (its slices per rank) in an iteration: the first rank
    (natural order) whose step, widened to its device window, holds its slice's start; and
    whether that step is warm-up there."""
    spans = {}
    for rank, mine in steps.items():
        n_warm = warmup(len(mine))
        spans[rank] = [(*b.extent(), b.iteration, k < n_warm) for k, b in enumerate(mine)
                       if b.iteration is not None]

    def place(present: dict[str, _Slice]) -> tuple[int | None, bool]:
        for rank, x in present.items():
            for lo, hi, iteration, warm in spans.get(rank, ()):
                if lo <= x.start_ns < hi:
                    return iteration, warm
        return None, False
    return place


def _nccl_args(index: TraceIndex, rows: np.ndarray) -> list[dict | None]:
    """Per collective kernel, the args naming its process group and collective: its own, else
    those of the record_param_comms op that launched it (by the launch flow, up the callers
    of the launching slice); None where neither has them."""
    from proftui.core.query.args import read_args
    from proftui.core.query.parents import slice_parents

    ref = index.col("slices.ref")
    own = read_args(index, ref[rows])
    out: list[dict | None] = [a if _names_group(a) else None for a in own]
    missing = [k for k, a in enumerate(out) if a is None]
    if not missing:
        return out
    src, dst = index.col("flows.src_slice"), index.col("flows.dst_slice")
    launcher_of = dict(zip(dst[dst >= 0].tolist(), src[dst >= 0].tolist()))
    launcher_name = index.strings.find(_LAUNCHER)
    if launcher_name < 0 or not launcher_of:
        return out
    parents = slice_parents(index)
    names = index.col("slices.name")
    found: dict[int, int] = {}  # position in rows -> record_param_comms slice
    for k in missing:
        at = launcher_of.get(int(rows[k]), -1)
        while at >= 0 and names[at] != launcher_name:
            at = int(parents[at])
        if at >= 0:
            found[k] = at
    if found:
        theirs = read_args(index, ref[np.array(list(found.values()), np.int64)])
        for k, a in zip(found, theirs):
            out[k] = a if _names_group(a) else None
    return out


def _names_group(args: Any) -> bool:
    return isinstance(args, dict) and any(key in args for key in _NCCL_KEYS)


# -- as tables ---------------------------------------------------------------------------------


def rank_table(found: Cluster) -> Table:
    """One row per rank: steps, medians, collectives, arrivals last and wait in all."""
    rows = [(r.rank or "(all)", len(r.steps), r.median["step_ns"], r.median["compute_ns"],
             r.median["comm_exposed_ns"], r.median["free_ns"], r.collectives,
             found.last_arrivals.get(r.rank) if r.timed else None,
             found.wait_ns.get(r.rank) if r.timed else None, r.source)
            for r in found.ranks]
    table = rows_table(["Rank", "Steps", "Step (median)", "Compute", "Comm exposed", "Free",
                        "Collectives", "Last", "Wait", "Source"],
                       ["text", "", "ns", "ns", "ns", "ns", "", "", "ns", "text"], rows)
    return dataclasses.replace(table, additive=False)  # medians do not add up


def step_table(rank: RankSummary) -> Table:
    """One rank's steps, one row each (warm-up marked)."""
    rows = [(s.iteration, s.step_ns, s.compute_ns, s.comm_exposed_ns, s.free_ns,
             "warm-up" if s.warmup else "") for s in rank.steps]
    return rows_table(["Iteration", "Step", "Compute", "Comm exposed", "Free", "Note"],
                      ["", "ns", "ns", "ns", "ns", "text"], rows)


def instance_table(instances: Sequence[Instance]) -> Table:
    """The collectives given, one row each: skew, the rank last and the one first to arrive,
    and the last one's transfer."""
    rows = []
    for i in instances:
        first = min(i.per_rank, key=lambda r: i.per_rank[r].start_ns)
        transfer = i.per_rank[i.last_rank].transfer_ns if i.last_rank else None
        rows.append((i.name, i.group, i.sequence, i.iteration, i.skew_ns, i.last_rank or "",
                     first if i.last_rank else "", transfer))
    table = rows_table(["Collective", "Group", "Seq index", "Iteration", "Skew", "Last",
                        "First", "Transfer"],
                       ["text", "text", "", "", "ns", "text", "text", "ns"], rows)
    return dataclasses.replace(table, additive=False)
