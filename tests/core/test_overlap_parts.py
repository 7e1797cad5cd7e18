"""An iteration's breakdown from msprof's Overlap Analysis track, as step_trace_time.csv
computes it (torch_npu): per part, the durations of its slices that start in the step."""

from __future__ import annotations

from proftui.core.ops.iterations import find_iterations

from helpers import load, write_trace

US = 1_000


def _x(name, pid, tid, ts, dur, cat=None):
    event = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    return event | ({"cat": cat} if cat else {})


def test_parts_of_each_step_from_the_overlap_track(tmp_path) -> None:
    events = [
        {"ph": "M", "name": "process_name", "pid": 4, "args": {"name": "Overlap Analysis"}},
        _x("ProfilerStep#1", 1, 1, 0, 100, "cpu_op"),
        _x("ProfilerStep#2", 1, 1, 100, 100, "cpu_op"),
        _x("Computing", 4, 0, 10, 20), _x("Computing", 4, 0, 60, 5),
        _x("Communication", 4, 1, 25, 40),
        _x("Communication(Not Overlapped)", 4, 2, 30, 30),
        _x("Free", 4, 3, 65, 40),  # starts in step 1, runs into step 2: step 1's
        _x("Computing", 4, 0, 120, 50), _x("Free", 4, 3, 170, 30),
    ]
    found = find_iterations(load(write_trace(tmp_path / "t.json", events)))
    first, second = found.items
    assert first.parts == {"computing": 25 * US, "communication": 40 * US,
                           "communication(not overlapped)": 30 * US, "free": 40 * US,
                           "overlapped": 10 * US}
    assert second.parts == {"computing": 50 * US, "communication": 0,
                            "communication(not overlapped)": 0, "free": 30 * US,
                            "overlapped": 0}


def test_no_overlap_track_no_parts(tmp_path) -> None:
    found = find_iterations(load(write_trace(tmp_path / "t.json", [
        _x("ProfilerStep#1", 1, 1, 0, 100, "cpu_op"), _x("Computing", 1, 2, 10, 5)])))
    assert found.items[0].parts == {}


def test_a_part_the_track_does_not_have_is_zero(tmp_path) -> None:
    events = [
        {"ph": "M", "name": "process_name", "pid": 4, "args": {"name": "Overlap Analysis"}},
        _x("ProfilerStep#1", 1, 1, 0, 100, "cpu_op"), _x("Computing", 4, 0, 10, 20),
        _x("Communication", 4, 1, 25, 40)]
    found = find_iterations(load(write_trace(tmp_path / "t.json", events)))
    assert found.items[0].parts == {"computing": 20 * US, "communication": 40 * US,
                                    "communication(not overlapped)": 0, "free": 0,
                                    "overlapped": 40 * US}
