"""msprof-analyze's cluster_communication.json and cluster_communication_matrix.json as
summary tables: exact headers, a row per rank of each op, per transport, per link; start
timestamps as exact integer ns; a malformed entry counted, the rest shown."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from cluster_output_inputs import GROUP, OP, write_cluster_output, write_ranks

from proftui.core.discover.profile import discover
from proftui.core.importers.cluster_tables import read_cluster_table
from proftui.core.model.errors import ProftuiError
from proftui.core.tables.by_name import choose, read_tables


@pytest.fixture
def output(tmp_path) -> Path:
    """The two ranks' cluster_analysis_output as msprof-analyze writes it, rank 0's op with
    its wait ratios and a start timestamp past 2^53 ns (as Python's JSON writer prints it:
    its shortest text, read back digit for digit)."""
    root = tmp_path / "job"
    root.mkdir()
    write_ranks(root)
    out = write_cluster_output(root)
    path = out / "cluster_communication.json"
    data = json.loads(path.read_text())
    info = data["(0, 1)"]["step1"][f"{OP}@{GROUP}"]["0"]["Communication Time Info"]
    info.update({"Start Timestamp(us)": 1736413971558972.8, "Wait Time Ratio": 0.3333,
                 "Synchronization Time Ratio": 0.0})
    path.write_text(json.dumps(data))
    return out


def _cells(table, header: str) -> list:
    column = next(c for c in table.columns if c.header == header)
    return [None if isinstance(v, float) and math.isnan(v) else v
            for v in column.values.tolist()]


def test_a_row_per_rank_of_each_op_with_its_times(output) -> None:
    table = read_cluster_table(str(output / "cluster_communication.json"),
                               "cluster_communication")
    assert [c.header for c in table.columns] == [
        "Rank Set", "Step", "Op Name", "Group Name", "Rank ID", "Start Timestamp(us)",
        "Elapse Time(ms)", "Transit Time(ms)", "Wait Time(ms)", "Synchronization Time(ms)",
        "Idle Time(ms)", "Wait Time Ratio", "Synchronization Time Ratio"]
    assert table.n_rows == 4 and not table.additive
    assert _cells(table, "Op Name") == [OP, OP, "Total Op Info", "Total Op Info"]
    assert _cells(table, "Rank ID") == [0, 1, 0, 1]
    assert _cells(table, "Group Name") == [GROUP] * 4
    assert _cells(table, "Rank Set") == ["(0, 1)"] * 4 and _cells(table, "Step") == [1] * 4
    start = next(c for c in table.columns if c.header == "Start Timestamp(us)")
    assert start.kind == "timestamp" and start.values.dtype == np.int64
    assert start.values[:2].tolist() == [1736413971558972800, 1_000_000]  # exact ns
    assert start.values[2] == np.iinfo(np.int64).min  # the totals have none
    assert _cells(table, "Elapse Time(ms)") == [0.03, 0.02, 0.03, 0.02]
    assert _cells(table, "Wait Time Ratio") == [0.3333, None, None, None]
    assert next(c for c in table.columns if c.header == "Wait Time(ms)").unit == "ms"
    assert table.diagnostics.damage == 0


def test_a_row_per_transport_used(output) -> None:
    table = read_cluster_table(str(output / "cluster_communication.json"),
                               "cluster_communication_bandwidth")
    assert [c.header for c in table.columns] == [
        "Rank Set", "Step", "Op Name", "Group Name", "Rank ID", "Transport Type",
        "Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)", "Large Packet Ratio"]
    # RDMA, PCIE and SIO moved nothing: padding, left out
    assert _cells(table, "Transport Type") == ["HCCS", "SDMA"] * 4
    assert _cells(table, "Rank ID") == [0, 0, 1, 1] * 2
    assert _cells(table, "Bandwidth(GB/s)") == [20.0, 20.0, 10.0, 10.0] * 2
    assert _cells(table, "Large Packet Ratio") == [0.0] * 4 + [None] * 4  # totals: none


def test_a_row_per_link_of_each_op_type(output) -> None:
    table = read_cluster_table(str(output / "cluster_communication_matrix.json"),
                               "cluster_communication_matrix")
    assert [c.header for c in table.columns] == [
        "Rank Set", "Step", "Op Type", "Group Name", "Src Rank", "Dst Rank", "Transport Type",
        "Op Name", "Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)"]
    assert _cells(table, "Op Type") == ["allreduce-total"] * 4 + ["allgather-total"] + [
        "Total Op Info"] * 4
    assert list(zip(_cells(table, "Src Rank"), _cells(table, "Dst Rank")))[:5] == [
        (0, 0), (0, 1), (1, 1), (1, 0), (0, 1)]
    assert _cells(table, "Transport Type")[:4] == ["LOCAL", "HCCS", "LOCAL", "HCCS"]
    assert _cells(table, "Transit Time(ms)")[3] == 1.0
    assert _cells(table, "Bandwidth(GB/s)")[3] == 10.0


def test_malformed_entries_are_counted_and_the_rest_shown(tmp_path) -> None:
    times = {"Elapse Time(ms)": 0.5, "Transit Time(ms)": "fast", "Wait Time(ms)": -1,
             "Synchronization Time(ms)": 0, "Idle Time(ms)": 0.1}
    path = tmp_path / "cluster_communication.json"
    path.write_text(json.dumps({
        "(0, 1)": {"step2": {
            f"{OP}@{GROUP}": {"0": {"Communication Time Info": times},
                              "1": [1, 2],  # not an entry
                              "rank": {"Communication Time Info": times},  # not a rank
                              "2": {"Communication Time Info": "none"}}},  # no times
            "step3": "cut"},  # not a step's ops
        "(2, 3)": 7}))
    table = read_cluster_table(str(path), "cluster_communication")
    assert table.n_rows == 1
    assert _cells(table, "Step") == [2] and _cells(table, "Elapse Time(ms)") == [0.5]
    assert _cells(table, "Transit Time(ms)") == [None] and _cells(table, "Wait Time(ms)") == [None]
    assert table.diagnostics.count("json_bad_entry") == 5
    assert table.diagnostics.count("json_bad_value") == 2
    matrix = tmp_path / "cluster_communication_matrix.json"
    matrix.write_text(json.dumps({"(0, 1)": {"step": {f"allreduce-total@{GROUP}": {
        "0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 1, "Transit Time(ms)": 1,
                "Bandwidth(GB/s)": 1},
        "0to1": {}, "1-x": {}, "1-0": "HCCS"}}}}))
    table = read_cluster_table(str(matrix), "cluster_communication_matrix")
    assert table.n_rows == 1 and _cells(table, "Step") == [None]  # a step not numbered
    assert table.diagnostics.count("json_bad_entry") == 3


def test_a_file_that_is_no_json_object_is_one_sentence(tmp_path) -> None:
    path = tmp_path / "cluster_communication.json"
    path.write_text('{"(0, 1)": {"step1": ')
    with pytest.raises(ProftuiError, match="cluster_communication.json is not valid JSON"):
        read_cluster_table(str(path), "cluster_communication")


def test_discovery_lists_them_with_the_profile_s_tables(output) -> None:
    layout = discover(str(output.parent))
    kinds = [t.kind for t in layout.tables]
    assert {"cluster_communication", "cluster_communication_bandwidth",
            "cluster_communication_matrix", "cluster_step_trace_time"} <= set(kinds)
    # by the file's name: its first table
    chosen = choose(layout.tables, "cluster_communication.json")
    assert [t.kind for t in chosen] == ["cluster_communication"]
    assert read_tables(chosen)[0].n_rows == 4
    # still what `proftui cluster` reads
    assert {c.kind for c in layout.comm} >= {"cluster_communication",
                                             "cluster_communication_matrix"}
