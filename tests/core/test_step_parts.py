"""The disjoint parts of a step (what the Iterations pane stacks): the parts that contain one
another are left out, and what is stacked adds up to the step to the nanosecond."""

from __future__ import annotations

from test_breakdown import US, kineto_step, x
from test_step_csvs import STEP_TRACE_TIME

from proftui.core.analysis.breakdown import breakdown
from proftui.core.analysis.step_parts import OTHER, part_order, step_parts
from proftui.core.cache.tables import read_table
from proftui.core.ops.iterations import Iteration, Iterations, _join_torch_npu, find_iterations

from helpers import load, write_trace


def test_the_computed_breakdown_tiles_the_step(tmp_path):
    """kineto_step: the step is 0-1000 µs, its device window 300-980 µs (compute 280,
    exposed communication 140, free 260), then 20 µs of host after the last kernel."""
    index = load(write_trace(tmp_path / "t.json", kineto_step()))
    found = find_iterations(index)
    (step,) = breakdown(index, found).steps
    parts = step_parts(found.items[0], step.device)
    assert parts.parts == (("Prepare", 300 * US), ("Compute", 280 * US),
                           ("Comm exposed", 140 * US), ("Free", 260 * US), (OTHER, 20 * US))
    assert parts.total_ns == parts.step_ns == step.step_ns == 1000 * US
    assert parts.over_ns == 0


def test_device_work_past_the_step_is_not_cut_and_says_by_how_much(tmp_path):
    """A kernel launched in the step runs 200 µs past its end: the parts are the step plus
    that, and there is no "other"."""
    events = [x("ProfilerStep#1", 0, 500),
              x("cudaLaunchKernel", 50, 10, cat="cuda_runtime"),
              x("sgemm", 100, 600, pid=0, tid=7, cat="kernel"),
              {"ph": "s", "id": 1, "ts": 50, "pid": 1, "tid": 1, "cat": "ac2g", "name": "ac2g"},
              {"ph": "f", "id": 1, "ts": 100, "pid": 0, "tid": 7, "cat": "ac2g",
               "name": "ac2g", "bp": "e"}]
    index = load(write_trace(tmp_path / "t.json", events))
    found = find_iterations(index)
    (step,) = breakdown(index, found).steps
    parts = step_parts(found.items[0], step.device)
    assert parts.parts == (("Prepare", 100 * US), ("Compute", 600 * US))
    assert (parts.step_ns, parts.over_ns) == (500 * US, 200 * US)
    assert parts.total_ns == parts.step_ns + parts.over_ns


def test_torch_npu_parts_stack_without_stage_communication_or_overlapped(tmp_path):
    """The corpus's rank 0: Stage (136.581 ms) holds Computing, Communication(Not Overlapped)
    and Free; Communication holds Not Overlapped and Overlapped. Only the disjoint four are
    stacked, and the 1.516 ms they leave of the 156 ms step is "other"."""
    path = tmp_path / "step_trace_time.csv"
    path.write_text(STEP_TRACE_TIME)
    found = Iterations("ProfilerStep#N annotations", [Iteration("", 50, 0, 156_000_000)])
    _join_torch_npu(found, read_table(str(path), "step_trace_time"))
    it = found.items[0]
    assert {"stage", "communication", "overlapped", "bubble"} <= it.parts.keys()
    parts = step_parts(it)
    assert parts.parts == (("preparing", 17_902_500), ("computing", 8_873_756),
                           ("communication(not overlapped)", 101_963_203),
                           ("free", 25_744_050), (OTHER, 1_516_491))
    assert parts.total_ns == parts.step_ns == 156_000_000
    # Stage is what the device window's three parts add up to, as torch_npu defines it.
    assert abs(8_873_756 + 101_963_203 + 25_744_050 - it.parts["stage"]) < 10


def test_a_step_known_by_its_parts_only_is_their_sum():
    it = Iteration("", 2, parts={"computing": 75_174_574.6, "communication(not overlapped)":
                                 146_614_020.3, "overlapped": 6_987_303.3, "communication":
                                 153_601_323.6, "free": 69_909_503.5, "stage": 291_698_000.0})
    parts = step_parts(it)
    assert [name for name, _ in parts.parts] == ["computing", "communication(not overlapped)",
                                                 "free"]
    assert parts.step_ns == parts.total_ns == 75_174_575 + 146_614_020 + 69_909_504


def test_msprof_and_mindspore_step_traces():
    msprof = Iteration("", 1, 0, 3_091_000, parts={
        "iteration refresh": 230_000.0, "FP+BP": 2_728_000.0, "data aug bound": 100_000.0})
    parts = step_parts(msprof)
    assert parts.parts == (("data aug bound", 100_000), ("FP+BP", 2_728_000),
                           ("iteration refresh", 230_000), (OTHER, 33_000))
    mindspore = Iteration("", 1, length_ns=1_000, parts={
        "tail": 100.0, "FP+BP": 800.0, "iteration interval": 100.0, "stream_0_x": 500.0})
    parts = step_parts(mindspore)
    assert parts.parts == (("iteration interval", 100), ("FP+BP", 800), ("tail", 100))
    assert parts.total_ns == parts.step_ns == 1_000


def test_nothing_known_is_no_parts_and_legends_keep_time_order():
    assert step_parts(Iteration("", 1, 0, 100)) is None
    assert step_parts(Iteration("", 1, 0, 100, parts={"stage": 90.0})) is None
    names = ["other", "free", "Compute", "preparing", "Prepare", "computing"]
    assert sorted(names, key=part_order) == ["Prepare", "Compute", "preparing", "computing",
                                             "free", "other"]
