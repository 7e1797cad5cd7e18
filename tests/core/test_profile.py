"""Profile directories: discovery of layouts, groups, stitched slices, and what is left out."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from proftui.core import NotATraceError, load_trace
from proftui.core.discover.profile import discover
from proftui.core.query.args import slice_args

from helpers import slice_names


def _trace(path: Path, events: list[dict], array: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(events if array else {"traceEvents": events}))
    return path


def _x(name: str, ts: float, pid: int = 1, tid: int = 1, dur: float = 1) -> dict:
    return {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


def test_cann8_slices_are_stitched_in_order(tmp_path) -> None:
    out = tmp_path / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA" / "mindstudio_profiler_output"
    _trace(out / "msprof_slice_1_20260605161734.json", [_x("second", 20)])
    _trace(out / "msprof_slice_0_20260605161734.json",
           [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Ascend Hardware"}},
            _x("first", 10)])
    _trace(out / "msprof_tx_20260605161734.json", [_x("tx", 5)])
    (out / "op_summary_20260605161737.csv").write_text("Device_id,OP Type\n0,MatMul\n")
    (out / "op_statistic_slice_0_20260605161737.csv").write_text("OP Type,Count\nMatMul,1\n")
    layout = discover(str(tmp_path))
    assert [Path(t.path).name for t in layout.timelines] == [
        "msprof_slice_0_20260605161734.json", "msprof_slice_1_20260605161734.json"]
    assert sorted(t.kind for t in layout.tables) == ["op_statistic", "op_summary"]
    assert [Path(p).name for p, _ in layout.skipped] == ["msprof_tx_20260605161734.json"]
    index = load_trace(str(tmp_path), use_cache=False)
    assert slice_names(index) == ["first", "second"]
    assert index.process_label(0) == "Ascend Hardware (1)"  # one group: no prefix


def test_devices_and_ranks_are_groups(tmp_path) -> None:
    for rank in (0, 1):
        root = tmp_path / f"host_{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        _trace(root / "trace_view.json",
               [{"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "Python"}},
                _x(f"op{rank}", 10 + rank, pid=7)])
    layout = discover(str(tmp_path))
    assert layout.groups == ["host_0_ascend_pt", "host_1_ascend_pt"]
    index = load_trace(str(tmp_path), use_cache=False)
    # the same pid in two ranks: two processes, each labelled with its rank
    assert [index.process_label(p) for p in range(2)] == [
        "host_0_ascend_pt: Python (7)", "host_1_ascend_pt: Python (7)"]
    assert sorted(slice_names(index)) == ["op0", "op1"]
    args = [slice_args(index, i) for i in range(index.n_slices)]
    assert args == [None, None]


def test_old_layout_duplicates_are_left_out(tmp_path) -> None:
    timeline = tmp_path / "PROF_1" / "device_0" / "timeline"
    for it in (1, 2):
        _trace(timeline / f"msprof_0_2_{it}.json", [_x(f"iter{it}", it * 100)])
        _trace(timeline / f"task_time_0_2_{it}.json", [_x("task", it * 100)])
        _trace(timeline / f"step_trace_0_2_{it}.json", [_x("Iteration 1", 0, dur=500)])
    layout = discover(str(tmp_path))
    assert [Path(t.path).name for t in layout.timelines] == ["msprof_0_2_1.json",
                                                             "msprof_0_2_2.json"]
    reasons = {Path(p).name: why for p, why in layout.skipped}
    assert reasons["task_time_0_2_1.json"] == "its events are in msprof_*.json too"
    index = load_trace(str(tmp_path), use_cache=False)
    assert slice_names(index) == ["iter1", "iter2"]
    assert slice_args(index, 1) is None and index.meta["profile"]["groups"] == [""]


def test_an_unreadable_timeline_is_reported_and_the_rest_loads(tmp_path) -> None:
    _trace(tmp_path / "a.pt.trace.json", [_x("good", 1)], array=False)
    (tmp_path / "b.pt.trace.json").write_text("this is not json at all")
    index = load_trace(str(tmp_path), use_cache=False)
    assert slice_names(index) == ["good"]
    assert index.diagnostics.count("unreadable_file") == 1


def test_directory_with_nothing_recognisable(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "data.json").write_text('{"a": 1}')
    with pytest.raises(NotATraceError, match="holds no trace or profiler output"):
        load_trace(str(tmp_path), use_cache=False)


def test_profile_cache_follows_its_files(tmp_path) -> None:
    root = tmp_path / "run"
    _trace(root / "w0.pt.trace.json", [_x("a", 1)], array=False)
    _trace(root / "w1.pt.trace.json", [_x("b", 2)], array=False)
    assert load_trace(str(root)).n_slices == 2
    again = load_trace(str(root))
    assert again.meta["from_cache"] is True
    assert again.meta["profile"]["groups"] == ["w0", "w1"]  # workers side by side: ranks
    _trace(root / "w1.pt.trace.json", [_x("b", 2), _x("c", 3)], array=False)
    assert load_trace(str(root)).n_slices == 3


def test_a_dangling_link_is_reported_and_the_rest_loads(tmp_path) -> None:
    timeline = tmp_path / "PROF_1" / "device_0" / "timeline"
    _trace(timeline / "msprof_0_1_1.json", [_x("kept", 1)])
    (timeline / "msprof_0_1_2.json").symlink_to(tmp_path / "gone.json")
    summary = tmp_path / "PROF_1" / "device_0" / "summary"
    summary.mkdir()
    (summary / "op_summary_0_1_1.csv").symlink_to("nowhere.csv")
    index = load_trace(str(tmp_path), use_cache=False)
    assert slice_names(index) == ["kept"]
    reasons = {Path(s["path"]).name: s["why"] for s in index.meta["profile"]["skipped"]}
    assert reasons == {"msprof_0_1_2.json": f"a link to {tmp_path / 'gone.json'}, which "
                                            "does not exist",
                       "op_summary_0_1_1.csv": "a link to nowhere.csv, which does not exist"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_without_permission_is_reported_and_the_rest_loads(tmp_path) -> None:
    _trace(tmp_path / "a.pt.trace.json", [_x("good", 1)], array=False)
    locked = _trace(tmp_path / "b.pt.trace.json", [_x("locked", 1)], array=False)
    locked.chmod(0)
    try:
        index = load_trace(str(tmp_path), use_cache=False)
    finally:
        locked.chmod(0o644)
    assert slice_names(index) == ["good"]
    assert index.meta["profile"]["skipped"] == [
        {"path": str(locked), "why": "cannot be read (Permission denied)"}]


def _torch_npu(root: Path, name: str, rank: int | None) -> None:
    _trace(root / name / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", [_x(name, 1)])
    if rank is not None:
        (root / name / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))


def test_torch_npu_dirs_are_named_by_their_rank(tmp_path) -> None:
    _torch_npu(tmp_path, "node7_1234_20240101_ascend_pt", 1)
    _torch_npu(tmp_path, "node3_999_20240101_ascend_pt", 0)
    assert discover(str(tmp_path)).groups == ["rank 0", "rank 1"]


def test_two_runs_of_one_rank_keep_their_dir_names(tmp_path) -> None:
    _torch_npu(tmp_path, "a_ascend_pt", 0)
    _torch_npu(tmp_path, "b_ascend_pt", 0)
    _torch_npu(tmp_path, "c_ascend_pt", None)
    assert discover(str(tmp_path)).groups == ["a_ascend_pt", "b_ascend_pt", "c_ascend_pt"]


def test_torch_npu_embedded_msprof_timeline_is_not_indexed_twice(tmp_path) -> None:
    run = tmp_path / "node_1_20240101_ascend_pt"
    _trace(run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", [_x("kernel", 5)])
    out = run / "PROF_000001_20240101000000000_ABCDEFGHIJKLMNOP" / "mindstudio_profiler_output"
    _trace(out / "msprof_20240101000001.json", [_x("kernel", 5)])
    (out / "op_summary_20240101000001.csv").write_text("Op Name\nkernel\n")
    layout = discover(str(tmp_path))
    assert [Path(t.path).name for t in layout.timelines] == ["trace_view.json"]
    assert layout.skipped == [(str(out / "msprof_20240101000001.json"),
                               "trace_view.json of this run holds the same timeline")]
    assert [t.kind for t in layout.tables] == ["op_summary"]
    assert slice_names(load_trace(str(tmp_path), use_cache=False)) == ["kernel"]
    # Without the trace_view.json, the embedded msprof timeline is the one to show.
    (run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()
    assert [Path(t.path).name for t in discover(str(tmp_path)).timelines] == [
        "msprof_20240101000001.json"]


def test_a_trace_view_beside_a_prof_dir_is_not_its_run(tmp_path) -> None:
    # A folder of unrelated outputs: a bare trace_view.json and a CANN 8 PROF dir.
    _trace(tmp_path / "npu" / "trace_view.json", [_x("torch", 5)])
    out = tmp_path / "PROF_000001_20240101000000000_ABCDEFGHIJKLMNOP" / "mindstudio_profiler_output"
    _trace(out / "msprof_20240101000001.json", [_x("msprof", 5)])
    assert sorted(Path(t.path).name for t in discover(str(tmp_path)).timelines) == [
        "msprof_20240101000001.json", "trace_view.json"]


def test_copies_of_a_timeline_are_left_out_and_files_of_one_size_kept(tmp_path) -> None:
    """A copy is left out (named after the file it copies); a file of the same size with
    other content is kept, as is one of another size."""
    first = _trace(tmp_path / "w0" / "t.pt.trace.json", [_x("aa", 1)], array=False)
    (tmp_path / "w1").mkdir()
    (tmp_path / "w1" / "t.pt.trace.json").write_bytes(first.read_bytes())
    same_size = _trace(tmp_path / "w2" / "t.pt.trace.json", [_x("ab", 1)], array=False)
    other = _trace(tmp_path / "w3" / "t.pt.trace.json", [_x("abc", 1)], array=False)
    assert same_size.stat().st_size == first.stat().st_size != other.stat().st_size
    layout = discover(str(tmp_path))
    assert sorted(Path(t.path).parent.name for t in layout.timelines) == ["w0", "w2", "w3"]
    assert [(Path(p).parent.name, why) for p, why in layout.skipped] == [
        ("w1", f"same content as {os.path.join('w0', 't.pt.trace.json')}")]
