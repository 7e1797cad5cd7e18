"""Ranks and devices in natural order (2 before 10): groups, processes, tracks and tables."""

from __future__ import annotations

import json
from pathlib import Path

from proftui.core import load_trace
from proftui.core.discover.profile import discover
from proftui.core.model.naming import natural_key


def _x(name: str, ts: float, pid: int = 1) -> dict:
    return {"ph": "X", "name": name, "pid": pid, "tid": 1, "ts": ts, "dur": 1}


def _ranks(root: Path, ranks: tuple[int, ...]) -> None:
    """A folder of ranks: rank_N/trace.json and rank_N/op_statistic.csv each."""
    for rank in ranks:
        (root / f"rank_{rank}").mkdir(parents=True)
        (root / f"rank_{rank}" / "trace.json").write_text(json.dumps([_x(f"op{rank}", rank)]))
        (root / f"rank_{rank}" / "op_statistic.csv").write_text(f"OP Type,Count\nMatMul,{rank}\n")


def _process_groups(index) -> list[str]:
    return [p["group"] for p in index.summary()["processes"]]


def test_natural_key_compares_digits_as_numbers() -> None:
    names = ["rank 10", "rank 2", "device_10", "rank 1", "device_2", "", "rank 02"]
    assert sorted(names, key=natural_key) == ["", "device_2", "device_10", "rank 1",
                                              "rank 02", "rank 2", "rank 10"]
    assert natural_key("rank 10") == (("rank ", 10, ""), "rank 10")
    assert natural_key("x²") == (("x²",), "x²")  # a digit int() refuses stays text


def test_ranks_come_out_in_natural_order(tmp_path) -> None:
    _ranks(tmp_path, (0, 1, 2, 10))
    layout = discover(str(tmp_path))
    order = ["rank 0", "rank 1", "rank 2", "rank 10"]
    assert layout.groups == order
    assert [t.group for t in layout.timelines] == order
    assert [t.group for t in layout.tables] == order
    index = load_trace(str(tmp_path), use_cache=False)
    assert _process_groups(index) == order
    # tracks in display order, each named by its process's group
    track_groups = [index.strings[index.arrays["processes.group"][p]]
                    for p in index.arrays["tracks.process"].tolist()]
    assert track_groups == order
    assert [t["group"] for t in index.meta["profile"]["tables"]] == order


def test_devices_and_rank_named_dirs_come_out_in_natural_order(tmp_path) -> None:
    prof = tmp_path / "PROF_000001_20240101000000000_AAAAAAAAAAAAAAAA"
    for device in (10, 2):
        timeline = prof / f"device_{device}" / "timeline"
        timeline.mkdir(parents=True)
        (timeline / f"msprof_{device}_1_1.json").write_text(
            json.dumps([_x(f"dev{device}", 5)]))
    assert discover(str(tmp_path)).groups == ["device 2", "device 10"]
    assert _process_groups(load_trace(str(tmp_path), use_cache=False)) == [
        "device 2", "device 10"]
    # torch_npu dirs named by their profiler_info rank: the dir names sort the other way.
    other = tmp_path / "npu"
    for name, rank in (("a_ascend_pt", 10), ("b_ascend_pt", 2)):
        out = other / name / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True)
        (out / "trace_view.json").write_text(json.dumps([_x(name, 1)]))
        (out / "op_statistic.csv").write_text("OP Type,Count\nMatMul,1\n")
        (other / name / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
    layout = discover(str(other))
    assert [t.group for t in layout.timelines] == ["rank 2", "rank 10"]
    assert [t.group for t in layout.tables] == ["rank 2", "rank 10"]


def test_iterations_and_busy_ratios_in_natural_order(tmp_path) -> None:
    from proftui.core.analysis.summary import summary_report
    from proftui.core.ops.iterations import find_iterations

    for rank in (0, 1, 2, 10):
        (tmp_path / f"rank_{rank}").mkdir(parents=True)
        (tmp_path / f"rank_{rank}" / "trace.json").write_text(json.dumps(
            [_x("ProfilerStep#1", 0), _x(f"op{rank}", 0.5)]))
    index = load_trace(str(tmp_path), use_cache=False)
    order = ["rank 0", "rank 1", "rank 2", "rank 10"]
    assert [it.group for it in find_iterations(index).items] == order
    assert [b["group"] for b in summary_report(index)["busy"]] == order
