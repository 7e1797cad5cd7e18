"""Ranks aligned at an iteration: each rank's offset from the reference rank's clock."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cluster_inputs import rank_folders

from proftui.core.model.errors import ProftuiError
from proftui.core.ops.iterations import Iteration, find_iterations, group_windows
from proftui.core.ops.rank_offsets import rank_offsets, ranks_of

from helpers import load

US = 1000
SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kineto_demo.pt.trace.json"
ARRIVALS = [[110, 140, 120], [160, 110, 110], [120, 120, 120]]


def _opened(tmp_path, **kw):
    index = load(Path(rank_folders(tmp_path, ARRIVALS, **kw)))
    return index, find_iterations(index).items


def test_each_rank_is_offset_by_its_own_start_of_the_iteration(tmp_path) -> None:
    # Step 2 starts at 1000 µs of each rank's clock; rank 1's clock is 37 µs ahead, rank 2's
    # 5 µs behind.
    index, items = _opened(tmp_path, clock_us=[0, 37, -5])
    assert ranks_of(index) == ["rank 0", "rank 1", "rank 2"]
    found = rank_offsets(index, items, 2)
    assert found.reference == "rank 0" and found.missing == []
    assert found.offsets_ns == {"rank 0": 0, "rank 1": 37 * US, "rank 2": -5 * US}
    # the three steps start at the same instant once each is moved by its offset
    starts = {g: w[0] - found.offset_of(g) for g, w in group_windows(items, 2).items()}
    assert set(starts.values()) == {1000 * US}
    # per process (three a rank), its rank's offset
    offsets = found.process_offsets(index)
    groups = [index.strings[g] for g in index.col("processes.group").tolist()]
    assert offsets.dtype == np.int64
    assert offsets.tolist() == [found.offsets_ns[g] for g in groups]
    assert sorted(set(offsets.tolist())) == [-5 * US, 0, 37 * US]
    process = index.col("tracks.process")
    assert found.track_offsets(index).tolist() == [int(offsets[p]) for p in process.tolist()]
    # a window of the aligned clock is each rank's own window on its true clock
    assert found.windows(1000 * US, 1200 * US) == {
        "rank 0": (1000 * US, 1200 * US), "rank 1": (1037 * US, 1237 * US),
        "rank 2": (995 * US, 1195 * US)}


def test_a_rank_without_the_iteration_is_named_and_not_shifted(tmp_path) -> None:
    # Rank 2 has no ProfilerStep#2; rank 0 has no step 1, so rank 1 is step 1's reference.
    index, items = _opened(tmp_path, clock_us=[0, 37, 12], no_step=[(2, 1), (0, 0)])
    found = rank_offsets(index, items, 2)
    assert found.offsets_ns == {"rank 0": 0, "rank 1": 37 * US}
    assert found.missing == ["rank 2"] and found.offset_of("rank 2") == 0
    assert found.windows(0, 10)["rank 2"] == (0, 10)
    assert found.describe() == ("ranks aligned at iteration 2: each drawn at its own start "
                                "of it (rank 0's clock); rank 2 has no iteration 2 and is "
                                "not shifted")
    first = rank_offsets(index, items, 1)
    assert first.reference == "rank 1" and first.missing == ["rank 0"]
    assert first.offsets_ns == {"rank 1": 0, "rank 2": (12 - 37) * US}


def test_nothing_to_align_is_one_sentence(tmp_path) -> None:
    index, items = _opened(tmp_path, no_step=[(1, 2), (2, 2)])
    with pytest.raises(ProftuiError, match=r"^Iteration 3 has no time window on two ranks "
                                           r"or more \(only rank 0 has it\): there is "
                                           r"nothing to align\.$"):
        rank_offsets(index, items, 3)
    with pytest.raises(ProftuiError, match=r"^Iteration 9 has no time window on two ranks "
                                           r"or more: there is nothing to align\.$"):
        rank_offsets(index, items, 9)
    one = load(SAMPLE)
    with pytest.raises(ProftuiError, match="^Aligning ranks needs a profile of several ranks"):
        rank_offsets(one, find_iterations(one).items, 1)


def test_group_windows_join_a_groups_entries_and_skip_those_without_a_window() -> None:
    items = [Iteration("a", 2, 100, 200), Iteration("a", 2, 90, 150), Iteration("b", 2),
             Iteration("b", 3, 5, 6), Iteration("c", 2, 300, 420)]
    assert group_windows(items, 2) == {"a": (90, 200), "c": (300, 420)}
    assert group_windows(items, 4) == {}
