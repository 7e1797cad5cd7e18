"""Steps folded: which steps become bands, from where, and how each is marked."""

from __future__ import annotations

from proftui.core.ops.fold import fold_steps
from proftui.core.ops.iterations import Iteration

MS = 1_000_000


def _steps(group: str, lengths_ms: list[float], first: int = 1, at_ms: int = 0) -> list[Iteration]:
    """Steps back to back on `group`'s clock from `at_ms`, numbered from `first`."""
    out, t = [], at_ms * MS
    for k, length in enumerate(lengths_ms):
        end = t + int(length * MS)
        out.append(Iteration(group, first + k, t, end))
        t = end + MS // 10  # a gap between steps
    return out


def test_a_ranks_steps_are_bands_from_their_own_starts_marked_as_the_iterations_pane() -> None:
    steps = _steps("rank 0", [30, 10, 10, 12, 10]) + _steps("rank 1", [9, 9, 9], at_ms=500)
    fold = fold_steps(steps, "rank 0")
    assert [b.number for b in fold.bands] == [1, 2, 3, 4, 5]
    assert fold.total == 5 and fold.left_out == 0 and fold.group == "rank 0"
    assert [b.start_ns for b in fold.bands] == [s.start_ns for s in steps[:5]]
    assert fold.longest_ns == 30 * MS
    # the first step is the warm-up (left out of the median, 10 ms); #4 is the slowest
    assert [b.mark for b in fold.bands] == ["warm-up", "", "", "slowest", ""]
    assert round(fold.bands[3].vs_median, 6) == 20.0
    assert round(fold.bands[0].vs_median, 6) == 200.0 and fold.bands[1].vs_median == 0.0


def test_an_outlier_is_marked_so() -> None:
    fold = fold_steps(_steps("", [10, 10, 10, 13, 10]))
    assert fold.bands[3].mark == "slowest, outlier"


def test_past_the_limit_the_slowest_the_median_and_the_furthest_from_it_stay() -> None:
    lengths = [50, 10, 10.2, 9.9, 10.1, 25, 10, 4, 10.05, 10.3]  # #1 warm-up, #6 slow, #8 fast
    fold = fold_steps(_steps("", lengths), "", limit=4)
    assert fold.total == 10 and fold.left_out == 6
    # the slowest (#6), the median (#9, 10.05 ms of the nine after the warm-up), then the
    # furthest from it: #1 (50 ms), #8 (4 ms); shown in step order
    assert [b.number for b in fold.bands] == [1, 6, 8, 9]
    assert [b.number for b in fold_steps(_steps("", lengths), "", limit=2).bands] == [6, 9]


def test_every_rank_at_one_step_in_rank_order() -> None:
    steps = (_steps("rank 10", [10, 10, 10]) + _steps("rank 2", [10, 16, 10], at_ms=7)
             + _steps("rank 0", [10, 11, 10], at_ms=3))
    fold = fold_steps(steps, number=2)
    assert [(b.group, b.number) for b in fold.bands] == [("rank 0", 2), ("rank 2", 2),
                                                          ("rank 10", 2)]
    assert fold.group is None and fold.number == 2
    assert fold.bands[1].start_ns == steps[4].start_ns
    assert fold.bands[1].mark == "slowest, outlier"  # of its rank's: 16 > 1.2 x 13 ms


def test_steps_without_a_window_fold_into_nothing() -> None:
    steps = [Iteration("", 1, -1, -1, length_ns=5 * MS), Iteration("", 2, -1, -1)]
    fold = fold_steps(steps, "")
    assert fold.bands == () and fold.total == 0
    lone = fold_steps(_steps("", [10]), "").bands[0]  # one step: its own median
    assert lone.vs_median == 0.0 and lone.mark == ""
