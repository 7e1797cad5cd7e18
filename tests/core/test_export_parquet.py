"""The index as Parquet, partitioned by rank (pyarrow is an optional extra; CI installs it)."""

from __future__ import annotations

import numpy as np
import pytest
from cluster_inputs import rank_folders

from proftui.core.analysis.breakdown import breakdown
from proftui.core.analysis.overview import read_overview
from proftui.core.export.to_csv import ExportError, ExportExists
from proftui.core.export.to_parquet import export_parquet, partition

from helpers import load

pq = pytest.importorskip("pyarrow.parquet")
US = 1000


def _export(tmp_path, out="out", **kwargs):
    inputs = tmp_path / "in"
    if not inputs.exists():
        rank_folders(inputs, [[110, 140, 120], [160, 110, 110]])
    index = load(inputs)
    _, tables, iterations = read_overview(index)
    steps = breakdown(index, iterations, tables).steps
    result = export_parquet(index, str(tmp_path / out), iterations=iterations.items,
                            steps=steps, **kwargs)
    return index, result


def test_slices_and_steps_are_written_per_rank(tmp_path):
    index, result = _export(tmp_path)
    out = tmp_path / "out"
    assert sorted(p.name for p in (out / "slices").iterdir()) == ["rank=0", "rank=1"]
    assert (result.slices, result.steps, result.partitions) == (index.n_slices, 6, 2)
    rank1 = pq.read_table(out / "slices" / "rank=1" / "part-0.parquet").to_pydict()
    assert set(rank1["group"]) == {"rank 1"}
    steps = [n for n in rank1["name"] if n.startswith("ProfilerStep")]
    assert sorted(steps) == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]
    both = [pq.read_table(out / "slices" / p / "part-0.parquet").to_pydict()
            for p in ("rank=0", "rank=1")]
    assert sum(sum(t["dur_ns"]) for t in both) == int(index.col("slices.dur").sum())
    # rank 1's MatMulV3 of step 2 starts at 1010 µs: in its step 2 (1000 to 1210 µs)
    k = [i for i, (n, s) in enumerate(zip(rank1["name"], rank1["start_ns"]))
         if n == "MatMulV3" and s == 1010 * US]
    assert len(k) == 1 and rank1["iteration"][k[0]] == 2
    assert rank1["side"][k[0]] == "device" and rank1["is_op"][k[0]] is True
    assert rank1["dur_ns"][k[0]] == 100 * US and rank1["track"][k[0]] == "Stream 3"
    marker = rank1["name"].index("ProfilerStep#2")
    assert rank1["side"][marker] == "host" and rank1["is_op"][marker] is False
    steps = pq.read_table(out / "steps" / "rank=1" / "part-0.parquet").to_pydict()
    assert steps["iteration"] == [1, 2, 3] and steps["step_ns"] == [210 * US] * 3
    assert steps["compute_ns"] == [100 * US] * 3  # the matmul
    assert all(k.startswith("host_") for k in steps if "launch" in k)


def test_a_window_keeps_its_slices(tmp_path):
    index, result = _export(tmp_path, start_ns=1000 * US, end_ns=1100 * US)
    start = index.col("slices.start")
    end = start + index.col("slices.dur")
    assert result.slices == int(np.sum((start < 1100 * US) & (end > 1000 * US)))


def test_an_existing_directory_is_kept_unless_forced_and_ours(tmp_path):
    _export(tmp_path)
    with pytest.raises(ExportExists):
        _export(tmp_path)
    _, result = _export(tmp_path, overwrite=True)  # an earlier export: replaced
    assert result.partitions == 2
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(ExportError, match="holds more than an earlier export"):
        _export(tmp_path, out="mine", overwrite=True)
    assert (mine / "notes.txt").read_text() == "keep me"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".proftui-parquet-")]


def test_partition_names():
    assert partition("rank 12") == "rank=12"
    assert partition("device 3") == "rank=device%203" and partition("") == "rank=all"
