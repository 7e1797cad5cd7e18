"""The app's controllers' decisions without an app: status lines, prompt answers, routing."""

from __future__ import annotations

import json

import numpy as np
from offscreen import opened

from proftui.core.analysis.advise import Evidence
from proftui.core.ops.iterations import Iteration
from proftui.core.ops.rank_offsets import RankOffsets
from proftui.tui.app.loading import (
    Loading,
    file_note,
    overview_status,
    progress_status,
    unexpected,
)
from proftui.tui.app.prompts import align_choice, iteration_number, next_match, timed
from proftui.tui.app.routing import (
    evidence_view,
    iteration_window,
    range_window,
    timed_iteration,
)

US = 1_000


def test_the_progress_line_says_how_far_and_how_fast() -> None:
    assert progress_status("t.json", "", 50_000_000, 200_000_000, 123_456, 2.0) == (
        "Indexing t.json: 50 of 200 MB, 123,456 events, 25 MB/s (Esc cancels)")
    # the name escaped, the file of several named, no division by a zero time
    line = progress_status("\x1b[2Jt", file_note(2, 3, "b.json"), 10**6, 10**6, 0, 0.0)
    assert line.startswith("Indexing \\x1b[2Jt: b.json, 2 of 3 files; 1 of 1 MB")
    assert "1,000 MB/s" in line and "\x1b" not in line
    assert file_note(1, 1, "a.json") == ""


def test_the_overview_line_says_what_the_index_holds(tmp_path) -> None:
    index, _ = opened()
    line = overview_status(index)
    assert line.startswith(f"{index.n_slices:,} slices over ")
    assert line.endswith("processes; no import problems  (? keys)")
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0,
                                    "dur": 5}, {"ph": "X", "pid": 1}]))
    index, _ = opened(str(damaged))
    assert index.diagnostics.damage == 1
    # the damage said first, in the words every command prints it with (at the byte where
    # its batch begins: the last event is a batch of its own, read by the lenient path)
    assert overview_status(index) == (
        "warning: damaged input, the numbers below lack what was lost: event without a usable "
        "timestamp (dropped) at byte 66\n"
        "1 slice over 5 us, 1 process; 1 import problem (D)  (? keys)")


def test_an_unexpected_error_is_a_sentence() -> None:
    assert unexpected(KeyError("ts")) == ("unexpected KeyError while reading it ('ts'); "
                                          "please report it")


def test_while_a_run_is_chosen_only_the_choosers_keys_work() -> None:
    loading = Loading(app=None)  # type: ignore[arg-type]  (no call reaches the app)
    assert loading.allows("zoom_in") is None  # no say: the app decides
    loading.choosing_run = True
    assert loading.allows("zoom_in") is False and loading.allows("pane") is False
    assert all(loading.allows(a) for a in ("quit", "help", "command_palette"))
    assert loading.allows("cancel_load") is None


def test_iteration_numbers_as_typed() -> None:
    assert iteration_number("6") == 6 and iteration_number("#12") == 12
    assert iteration_number("six") is None and iteration_number("") is None


def test_matches_step_in_time_order_and_wrap() -> None:
    starts = np.array([10, 20, 20, 40], np.int64)
    assert next_match(starts, 0, 1) == 0
    assert next_match(starts, 10, 1) == 1  # from a match: the next one
    assert next_match(starts, 20, 1) == 3  # past every match at that time
    assert next_match(starts, 40, 1) == 0  # wraps to the first
    assert next_match(starts, 40, -1) == 2
    assert next_match(starts, 10, -1) == 3  # wraps to the last
    assert next_match(starts, 5, -1) == 3


def _steps() -> list[Iteration]:
    return [Iteration("rank 0", 1, 0, 100), Iteration("rank 1", 1, 5, 110),
            Iteration("rank 0", 2, 100, 200), Iteration("rank 1", 2, 110, 205),
            Iteration("rank 0", 3), Iteration("rank 1", 3, 205, 300)]


def test_iterations_with_a_time_window_are_found_by_number_and_rank() -> None:
    steps = _steps()
    assert [it.group for it in timed(steps, 1)] == ["rank 0", "rank 1"]
    assert [it.group for it in timed(steps, 3)] == ["rank 1"]  # rank 0's has no window
    assert timed(steps, 9) == []
    assert timed_iteration(steps, "rank 1", 2) is steps[3]
    assert timed_iteration(steps, "rank 0", 3) is None


def test_alignment_offers_the_iteration_under_the_cursor() -> None:
    steps = _steps()
    assert align_choice(steps, 150) == ([1, 2, 3], 2)
    assert align_choice(steps, 10**6) == ([1, 2, 3], 1)  # none there: the first
    assert align_choice([Iteration("", 1)], 0) == ([], 0)  # none with a window


def test_an_iteration_is_the_ops_window_of_its_rank_where_there_are_several() -> None:
    steps = _steps()
    window = iteration_window(steps[3], steps)
    assert (window.label, window.start_ns, window.end_ns) == ("iteration 2 of rank 1", 110, 205)
    assert window.groups == {"rank 1": (110, 205)}
    alone = Iteration("", 4, 7, 9)
    window = iteration_window(alone, [alone])
    assert (window.label, window.groups) == ("iteration 4", None)


def test_a_range_is_the_ops_window_on_each_ranks_clock_when_aligned() -> None:
    window = range_window(1_000 * US, 3_000 * US, 0, None)
    assert window.label == "range 1 ms to 3 ms (2 ms)"
    assert (window.start_ns, window.end_ns, window.groups) == (1_000 * US, 3_000 * US, None)
    aligned = RankOffsets(2, "rank 0", {"rank 0": 0, "rank 1": 40 * US}, ["rank 2"])
    window = range_window(1_000 * US, 3_000 * US, 0, aligned)
    assert window.label.startswith("range 1 ms to 3 ms (2 ms) aligned at iteration 2")
    assert window.groups == {"rank 0": (1_000 * US, 3_000 * US),
                             "rank 1": (1_040 * US, 3_040 * US),
                             "rank 2": (1_000 * US, 3_000 * US)}
    assert (window.start_ns, window.end_ns) == (1_000 * US, 3_040 * US)


def test_evidence_is_shown_with_a_tenth_either_side_on_its_ranks_clock() -> None:
    evidence = Evidence(1_000, 2_000, "a gap", "rank 1")
    assert evidence_view(evidence, 300) == ((600, 1_800), (700, 1_700))
    assert evidence_view(Evidence(5, 5, "an instant"), 0) == ((4, 6), (5, 5))
