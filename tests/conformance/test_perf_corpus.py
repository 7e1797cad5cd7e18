"""Conformance of the op efficiency on real torch_npu output: the matmuls' FLOPs from
kernel_details shapes (text) and from COMPUTE_TASK_INFO (SQLite), and the two captures of one
job answering alike.

Runs only where ../shared/corpus exists. Folders checked:
- torch_npu_2rank/text_level1 and torch_npu_2rank/db_level1: one 2-rank job captured twice,
  as text and as SQLite (SOURCES.md: the same job, not the same capture, so times differ a
  little while the ops and their shapes do not).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.perf.efficiency import efficiency, profile_peaks
from proftui.core.perf.instances import op_instances

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")
JOB = CORPUS / "torch_npu_2rank"


def _efficiency(folder: str):
    index = load_trace(str(JOB / folder))
    return efficiency(op_instances(index), profile_peaks(index)[0]), index


def _modelled(found) -> dict[tuple, tuple[int, int]]:
    return {(g.op, g.inputs): (g.calls, g.work.flops) for g in found.groups
            if g.work.__class__.__name__ == "Work"}


def test_the_matmuls_flops_from_their_shapes() -> None:
    found, _ = _efficiency("text_level1")
    models = _modelled(found)
    # fc6 of the AlexNet-style model: [32, 9216] x [4096, 9216]^T + bias [4096], in fp32 on
    # both ranks: 2*32*9216*4096 + 32*4096 FLOPs a call
    assert models[("MatMulV2", ((32, 9216), (4096, 9216), (4096,)))] == (
        2, 2 * 32 * 9216 * 4096 + 32 * 4096)
    # its weight gradient, [32, 4096]^T x [32, 9216]
    assert models[("MatMulV3", ((32, 4096), (32, 9216)))] == (2, 2 * 4096 * 9216 * 32)
    assert models[("MatMulV2", ((32, 4096), (1000, 4096), (1000,)))] == (
        2, 2 * 32 * 4096 * 1000 + 32 * 1000)


def test_text_and_sqlite_captures_answer_alike() -> None:
    text, _ = _efficiency("text_level1")
    db, index = _efficiency("db_level1")
    assert text.source == "kernel_details.csv" and db.source == "COMPUTE_TASK_INFO"
    assert _modelled(text) == _modelled(db)
    assert {(g.op, g.inputs) for g in text.groups} == {(g.op, g.inputs) for g in db.groups}
    assert abs(text.total_ns - db.total_ns) < 0.01 * text.total_ns  # two captures
    # the SQLite export names its chip; the peaks table has no 910B row (docs say why)
    assert profile_peaks(index) == (None, "the profile names Ascend910B, which the peaks "
                                          "table does not hold: give --device, --peaks FILE "
                                          "or --peak-tflops/--peak-tbps")
