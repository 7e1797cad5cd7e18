"""Conformance of the row behind a slice on real torch_npu output: kernel_details rows matched
to the device slices of their trace_view.json by stream, start and task id.

Runs only where ../shared/corpus exists. Folders checked:
- torch_npu_2rank/text_level1/rank0_ascend_pt: one capture, kernel_details.csv and its
  trace_view.json. 187 of its 191 rows match a slice; the 4 left are the hcom_allReduce
  collectives, which kernel_details lists without a task or stream id.
- ascend/torch_npu_trace_view: a kernel_details.csv and a trace_view.json of two different
  captures (SOURCES.md: the msprof-analyze advisor's compute and timeline test data), with 8
  op names in common: no row may match (a match by name would).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.perf.instances import op_instances, row_behind

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")


def test_kernel_details_rows_match_their_timeline_slices() -> None:
    index = load_trace(str(CORPUS / "torch_npu_2rank/text_level1/rank0_ascend_pt"),
                       use_cache=False)
    found = op_instances(index)
    matched = found.slice_rows >= 0
    assert (len(found), int(matched.sum())) == (191, 187)
    assert {n for n, m in zip(found.names, matched.tolist()) if not m} == {
        f"hcom_allReduce__586_{k}_1" for k in range(4)}
    a = index.arrays
    for k in [int(k) for k in matched.nonzero()[0]]:
        i = int(found.slice_rows[k])
        assert index.slice_name(i) == found.names[k]
        assert int(a["slices.start"][i]) == int(found.start_ns[k])
    conv = found.names.index("Conv2D1")
    behind = row_behind(index, int(found.slice_rows[conv]))
    assert behind is not None and behind.row["Task ID"] == "11053"
    assert behind.host is not None and behind.host[0] == "aten::_convolution"
    assert behind.host[1][:3] == [(32, 3, 224, 224), (64, 3, 11, 11), (64,)]


def test_rows_of_another_capture_match_nothing() -> None:
    index = load_trace(str(CORPUS / "ascend/torch_npu_trace_view"), use_cache=False)
    found = op_instances(index)
    names = {index.slice_name(i) for i in range(index.n_slices)}
    assert len(found) == 29 and sum(n in names for n in found.names) == 8
    assert (found.slice_rows >= 0).sum() == 0
