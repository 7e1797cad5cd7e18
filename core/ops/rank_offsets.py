"""Ranks aligned at an iteration: how far each rank's clock runs from a reference rank's.

The hosts of a job do not share a clock, so one rank's timestamps may be ahead of another's by
far more than any wait between them. Taking each rank's own start of one iteration as the
same instant gives every rank an offset: its iteration N start less the reference rank's (the
first rank, in natural order, that has iteration N). Drawing rank r's tracks at their time
less its offset lines the starts of iteration N up; the trace's own times stay untouched.
The steps are each rank's own windows of :func:`proftui.core.ops.iterations.group_windows`, as
``--iteration N`` takes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.model.naming import natural_key
from proftui.core.ops.iterations import Iteration, group_windows

ONE_RANK = ("Aligning ranks needs a profile of several ranks or devices; this one has one "
            "rank.")


@dataclass(frozen=True)
class RankOffsets:
    """Each rank's offset (ns) at iteration `number`: its start of that iteration less the
    `reference` rank's. `missing` ranks have no such iteration and are not shifted."""

    number: int
    reference: str
    offsets_ns: dict[str, int]  # every rank with iteration `number`, the reference at 0
    missing: list[str]

    def offset_of(self, rank: str) -> int:
        """How far `rank` is drawn to the left (0 for a rank without the iteration)."""
        return self.offsets_ns.get(rank, 0)

    def process_offsets(self, index: TraceIndex) -> np.ndarray:
        """The offset of each process of `index` (int64 ns, by process id): its rank's."""
        groups = index.col("processes.group")
        out = np.zeros(len(groups), np.int64)
        for rank, offset in self.offsets_ns.items():
            sid = index.strings.find(rank)
            if sid >= 0:
                out[groups == sid] = offset
        return out

    def track_offsets(self, index: TraceIndex) -> np.ndarray:
        """The offset of each track of `index` (int64 ns, by track id): its process's, 0 for
        a track of no process."""
        process = index.col("tracks.process").astype(np.int64)
        per_process = self.process_offsets(index)
        if not len(per_process):
            return np.zeros(len(process), np.int64)
        return np.where(process >= 0, per_process[np.maximum(process, 0)], 0)

    def windows(self, start_ns: int, end_ns: int) -> dict[str, tuple[int, int]]:
        """A window of the aligned clock as each rank's own window on its true clock (a
        range selected on the aligned timeline covers these)."""
        return {rank: (start_ns + offset, end_ns + offset) for rank, offset in
                [*self.offsets_ns.items(), *((rank, 0) for rank in self.missing)]}

    def describe(self) -> str:
        """One sentence: what is aligned to what, and which ranks are not shifted."""
        text = (f"ranks aligned at iteration {self.number}: each drawn at its own start of "
                f"it ({self.reference}'s clock)")
        if self.missing:
            text += (f"; {', '.join(self.missing)} "
                     f"{'has' if len(self.missing) == 1 else 'have'} no iteration "
                     f"{self.number} and {'is' if len(self.missing) == 1 else 'are'} "
                     "not shifted")
        return text


def ranks_of(index: TraceIndex) -> list[str]:
    """The ranks (or devices: the named groups) that own processes, in natural order."""
    s = index.strings
    ids = np.unique(index.col("processes.group")).tolist()
    return sorted((name for i in ids if (name := s[i])), key=natural_key)


def rank_offsets(index: TraceIndex, iterations: Sequence[Iteration], number: int) -> RankOffsets:
    """The ranks of `index` aligned at their own starts of iteration `number`.

    Raises ProftuiError (one sentence) on a profile of one rank, or when fewer than two ranks
    have a time window for that iteration: there is nothing to align then."""
    ranks = ranks_of(index)
    if len(ranks) < 2:
        raise ProftuiError(ONE_RANK)
    windows = group_windows(iterations, number)
    starts = {rank: windows[rank][0] for rank in ranks if rank in windows}
    if len(starts) < 2:
        having = f" (only {', '.join(starts)} has it)" if starts else ""
        raise ProftuiError(f"Iteration {number} has no time window on two ranks or more"
                           f"{having}: there is nothing to align.")
    reference = next(iter(starts))  # the first in natural order
    return RankOffsets(number, reference,
                       {rank: start - starts[reference] for rank, start in starts.items()},
                       [rank for rank in ranks if rank not in starts])
