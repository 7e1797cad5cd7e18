"""The native event reader on real traces: each named corpus trace indexed with it and with
the Python path (the reference) gives the same index, byte for byte, in batches small enough
that the native reader reads most of the file (bench/native_parity.py does every corpus trace
at any batch size)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.importers.chrome import native

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from helpers import assert_same_index  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = [
    pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present"),
    pytest.mark.skipif(native.MODULE is None and not os.environ.get("PROFTUI_REQUIRE_NATIVE"),
                       reason="the native reader is not built here (no C compiler at install)"),
]

TRACES = [
    "kineto/resnet50_num_workers_0.pt.trace.json.gz",
    "kineto/step_based_trace_2543932.json.gz",
    "torch_npu_2rank/text_level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
    "ascend/torch_npu_trace_view/trace_view.json",
    "ascend/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/timeline/msprof_0_2_1.json",
    "ascend/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/timeline/hccl_0_2_1.json",
    "ascend/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
    "msprof_20260605161734.json",
    "chrome/flow_simple.json", "chrome/nestable_async.json", "chrome/instant_events.json",
    "chrome/main_thread_has_unclosed_slices.json", "chrome/nanoseconds.json",
    "chrome/big_trace.json",
]


def _index(path: Path, reader: str, batch: int, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PROFTUI_NATIVE", "1" if reader == "native" else "0")
    return load_trace(str(path), use_cache=False, batch_bytes=batch)


@pytest.mark.parametrize("name", TRACES)
def test_the_same_index_from_both_readers(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = CORPUS / name
    a = _index(path, "native", 16 << 10, monkeypatch)
    b = _index(path, "python", 16 << 10, monkeypatch)
    assert_same_index(a, b, drop_meta=("reader",))
    if path.stat().st_size > 64 << 10:
        assert a.meta["reader"]["native"] > a.meta["reader"]["python"]
