"""Conformance of the breakdown: from the streams alone it equals the profiler's own numbers.

Runs only where ../shared/corpus exists. Names the folders it checks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from proftui.core import load_trace
from proftui.core.analysis.breakdown import breakdown
from proftui.core.cache.tables import read_table
from proftui.core.ops.aggregate import union_ns
from proftui.core.ops.iterations import find_iterations

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")
TEXT_2RANK = "torch_npu_2rank/text_level1"
RANKS = {"rank 0": "rank0_ascend_pt", "rank 1": "rank1_ascend_pt"}
# step_trace_time.csv column -> breakdown field (device), µs
COLUMNS = {"Computing": "compute_ns", "Communication(Not Overlapped)": "comm_exposed_ns",
           "Overlapped": "overlapped_ns", "Communication": "comm_ns", "Free": "free_ns",
           "Stage": "span_ns", "Preparing": "prepare_ns"}


def _within(mine_ns: int, theirs_us: float) -> bool:
    """Within 1 % or 2 µs, whichever is wider."""
    return abs(mine_ns / 1000 - theirs_us) <= max(2.0, abs(theirs_us) * 0.01)


def test_two_ranks_from_streams_equal_step_trace_time() -> None:
    """Both ranks opened together; no summary table given to the breakdown, and the Overlap
    Analysis track (msprof's own answer) is a derived view it never counts."""
    index = load_trace(str(CORPUS / TEXT_2RANK), use_cache=False)
    found = breakdown(index, find_iterations(index, []))
    assert {b.group for b in found.steps} == set(RANKS)
    for step in found.steps:
        csv = CORPUS / TEXT_2RANK / RANKS[step.group] / "ASCEND_PROFILER_OUTPUT"
        table = read_table(str(csv / "step_trace_time.csv"), "step_trace_time")
        row = list(table.find("Step").values).index(step.iteration)
        for column, key in COLUMNS.items():
            theirs = float(table.find(column).values[row])
            assert _within(step.device[key], theirs), (step.group, column, step.device[key])
        # and not by luck: the parts are large and differ between the ranks
        assert step.device["comm_exposed_ns"] > 0.7 * step.device["span_ns"]


def test_kineto_device_busy_is_the_union_of_kernels_copies_and_sets() -> None:
    index = load_trace(str(CORPUS / "kineto/resnet50_num_workers_0.pt.trace.json.gz"),
                       use_cache=False)
    lo, hi = index.start_ns, index.end_ns
    (whole,) = breakdown(index, [], window=(lo, hi)).steps
    # (this 2021 trace spells the categories Kernel, Memcpy, Memset)
    cats = {index.strings.find(c) for c in ("kernel", "gpu_memcpy", "gpu_memset", "Kernel",
                                            "Memcpy", "Memset")}
    rows = np.isin(index.col("slices.cat"), list(cats))
    start = index.col("slices.start")[rows]
    assert whole.device["busy_ns"] == union_ns(start, start + index.col("slices.dur")[rows])
    assert whole.device["busy_ns"] > 0


def test_advice_on_two_ranks_ranks_exposed_communication_first_and_reports_syncs() -> None:
    from proftui.core.analysis.advise import advise

    index = load_trace(str(CORPUS / TEXT_2RANK), use_cache=False)
    found = advise(index, find_iterations(index, []))
    for rank in RANKS:
        mine = [f for f in found.findings if f.group == rank]
        assert mine[0].rule == "exposed_comm" and mine[0].severity == "high"
        (sync,) = [f for f in mine if f.rule == "sync"]
        calls = {c["name"] for c in sync.numbers["calls"]}
        assert "AscendCL@aclrtSynchronizeStreamWithTimeout" in calls
        assert "aten::_local_scalar_dense" in calls


def test_advice_on_resnet50_without_workers_finds_the_input_pipeline() -> None:
    from proftui.core.analysis.advise import advise

    index = load_trace(str(CORPUS / "kineto/resnet50_num_workers_0.pt.trace.json.gz"),
                       use_cache=False)
    found = advise(index, find_iterations(index, []))
    (f,) = [f for f in found.findings if f.rule == "input_pipeline"]
    assert f.severity == "high" and f.evidence
    assert f.numbers["device_idle_while_loading_ns_per_step"] > 10_000_000
