"""Step CSVs as profilers write them: headers whose parentheses are part of the name, and the
msprof-analyze cluster table whose stage rows are no numbers."""

from __future__ import annotations

import math

from proftui.core.cache.tables import read_table
from proftui.core.model.table import split_unit
from proftui.core.ops.iterations import Iteration, Iterations, _join_torch_npu

# torch_npu step_trace_time.csv of the corpus's rank 0 (µs).
STEP_TRACE_TIME = (
    "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
    "Communication(Not Overlapped and Exclude Receive),Preparing\n"
    "50,8873.756000000001,101963.203,4028.6750000000175,105991.87800000001,25744.050000000003,"
    "136581.0,0,101963.203,17902.5\n")


def test_only_real_units_are_units() -> None:
    assert split_unit("Task Duration(us)") == ("Task Duration", "us")
    assert split_unit("Ratio(%)") == ("Ratio", "%")
    assert split_unit("Bandwidth(GB/s)") == ("Bandwidth", "GB/s")
    assert split_unit("Size(KB)") == ("Size", "KB")
    assert split_unit("Communication(Not Overlapped)") == ("Communication(Not Overlapped)", "")
    assert split_unit("Communication(Not Overlapped and Exclude Receive)") == (
        "Communication(Not Overlapped and Exclude Receive)", "")


def test_communication_is_not_communication_not_overlapped(tmp_path) -> None:
    path = tmp_path / "step_trace_time.csv"
    path.write_text(STEP_TRACE_TIME)
    table = read_table(str(path), "step_trace_time")
    assert table.find("Communication").values[0] == 105991.87800000001
    assert table.find("Communication(Not Overlapped)").values[0] == 101963.203
    found = Iterations("ProfilerStep#N annotations", [Iteration("", 50, 0, 156_000_000)])
    _join_torch_npu(found, table)
    parts = found.items[0].parts
    assert round(parts["communication"]) == 105_991_878
    assert round(parts["communication(not overlapped)"]) == 101_963_203
    assert round(parts["overlapped"]) == 4_028_675
    assert round(parts["computing"]) == 8_873_756 and round(parts["free"]) == 25_744_050


CLUSTER = (
    "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,"
    "Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n"
    "3,rank,0,8873.756,101963.203,4028.675,105991.878,25744.05,136581.0,0,101963.203,17902.5\n"
    "3,rank,1,8878.295,96359.047,4016.239,100375.286,26675.274,131912.5,0,96359.047,20433.25\n"
    '3,stage,"(0, 1)",8878.295,101963.203,4028.675,105991.878,26675.274,136581.0,0,1,2\n')


def test_cluster_step_trace_time_with_stage_rows(tmp_path) -> None:
    """Stage rows carry an Index such as "(0, 1)": the table loads, the ranks' rows become
    their iterations, the stage rows (a maximum over a group) are left out."""
    path = tmp_path / "cluster_step_trace_time.csv"
    path.write_text(CLUSTER)
    table = read_table(str(path), "cluster_step_trace_time")
    assert table.n_rows == 3 and table.find("Index").kind == "text"
    found = Iterations("", [])
    _join_torch_npu(found, table)
    assert [(it.group, it.number) for it in found.items] == [("rank 0", 3), ("rank 1", 3)]
    assert round(found.items[1].parts["communication"]) == 100_375_286


def test_text_in_a_column_with_a_unit_is_counted_not_fatal(tmp_path) -> None:
    path = tmp_path / "kernel_details.csv"
    path.write_text("Name,Duration(us),Ratio(%)\na,1.5,10\nb,oops,N/A\nc,2.5,\"(0, 1)\"\n")
    table = read_table(str(path), "kernel_details")
    duration, ratio = table.find("Duration"), table.find("Ratio")
    assert duration.kind == ratio.kind == "number"
    assert duration.values[0] == 1.5 and math.isnan(duration.values[1])
    assert duration.values[2] == 2.5 and math.isnan(ratio.values[2])
    problems = {p.kind: p.count for p in table.diagnostics}
    assert problems == {"bad_number": 2}
