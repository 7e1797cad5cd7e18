"""Comparing two profiles: matching, verdict and comparability on small inline pairs."""

from __future__ import annotations

import re

import pytest

from proftui.core.analysis.diff import Opened, compare, normalise, read_op_map
from proftui.core.errors import ProftuiError
from proftui.core.iterations import find_iterations

from helpers import load, write_trace


def x(name, ts, dur, tid=1, pid=1, cat="cpu_op"):
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, "cat": cat}


def k(name, ts, dur, tid=7):
    return x(name, ts, dur, tid=tid, pid=0, cat="kernel")


def run(steps_us, kernel="triton_poi_fused_add_relu_0", loader_us=0, extra=()):
    """Steps of the given lengths: a data loader, a matmul and a Triton kernel each."""
    events, at = [], 0
    for n, length in enumerate(steps_us, 1):
        events += [x(f"ProfilerStep#{n}", at, length, cat="user_annotation"),
                   k("sgemm_128x64", at + loader_us + 10, 100), k(kernel, at + loader_us + 120,
                                                                  30)]
        if loader_us:
            events.append(x("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                            at, loader_us))
        events += [e(at) for e in extra]
        at += length + 5
    return events


def opened(tmp_path, name, events):
    index = load(write_trace(tmp_path / name, events))
    return Opened(name, index, (), find_iterations(index))


def test_the_same_profile_is_no_change(tmp_path):
    side = opened(tmp_path, "a.json", run([500, 510, 490, 505]))
    found = compare(side, side)
    assert found.verdict == "no change" and found.conclusive and found.comparable
    assert all(o.delta_ns == 0 for o in found.ops) and not found.warnings


def test_a_faster_loader_is_a_conclusive_change_named_in_the_verdict(tmp_path):
    base = opened(tmp_path, "a.json", run([900, 905, 910, 895, 900], loader_us=600))
    new = opened(tmp_path, "b.json", run([400, 402, 398, 405, 401], loader_us=100))
    found = compare(base, new)
    step = found.step
    assert found.conclusive and step["delta_pct"] < -50
    assert step["base_ns"] == 902_500 and step["new_ns"] == 401_500  # medians, warm-up out
    assert found.verdict.startswith("step -55.5 %") and "dataloader -500 us" in found.verdict
    assert "compute unchanged" in found.verdict
    assert found.parts["dataloader_ns"] == (600_000, 100_000)


def test_noise_only_is_inconclusive(tmp_path):
    base = opened(tmp_path, "a.json", run([500, 520, 480, 510, 490]))
    new = opened(tmp_path, "b.json", run([505, 515, 485, 500, 495]))
    found = compare(base, new)
    assert not found.conclusive and "spread" in found.reason
    assert "inconclusive" in found.verdict


def test_one_step_a_side_is_inconclusive_and_iterations_can_be_chosen(tmp_path):
    base = opened(tmp_path, "a.json", run([500, 900, 910, 905]))
    new = opened(tmp_path, "b.json", run([500, 400, 410, 405, 400, 402]))
    found = compare(base, new, numbers=(2, 2))
    assert found.base.iterations == [2] and found.new.iterations == [2]
    assert not found.conclusive and "fewer than two steps" in found.reason
    found = compare(base, new)  # different step counts, warm-up left out on each
    assert found.base.iterations == [2, 3, 4] and found.new.iterations == [2, 3, 4, 5, 6]
    assert found.conclusive


def test_renamed_kernels_match_and_ops_on_one_side_are_added_or_removed(tmp_path):
    only_base = [lambda at: x("aten::to", at + 300, 20)]
    only_new = [lambda at: x("aten::pin_memory", at + 300, 20)]
    base = opened(tmp_path, "a.json", run([500] * 4, extra=only_base))
    new = opened(tmp_path, "b.json", run([500] * 4, kernel="triton_poi_fused_add_relu_1",
                                         extra=only_new))
    by_key = {o.key: o for o in compare(base, new).ops}
    assert by_key["triton_poi_fused_add_relu"].status == "changed"
    assert by_key["triton_poi_fused_add_relu"].base_count == 1.0  # per step
    assert by_key["aten::to"].status == "removed" and by_key["aten::to"].new_count == 0
    assert by_key["aten::pin_memory"].status == "added"
    assert by_key["aten::pin_memory"].delta_ns == 20_000


@pytest.mark.parametrize("name, key", [
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
     "void at::native::vectorized_elementwise_kernel<>"),
    ("hcom_allReduce__586_0_1", "hcom_allReduce_"),
    ("triton_red_fused_native_layer_norm_12", "triton_red_fused_native_layer_norm"),
    # a Python built-in is not a template: its name stays (but not its address)
    ("<built-in method item of Tensor object at 0xfffcd9a5ae00>",
     "<built-in method item of Tensor object at 0x>"),
    ("void k<4, F<float>, A<char*, 1> >(int, F<float>, A<char*, 1>)", "void k<>(int, F<>, A<>)"),
    ("Default/network/DropOutDoMask-op152", "DropOutDoMask"),
    ("matmul[114.000 us]", "matmul"),
    ("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "enumerate(DataLoader)"),
    ("aten::mm", "aten::mm"),
])
def test_generated_parts_of_names_are_ignored(name, key):
    assert normalise(name) == key


def test_an_op_map_renames_before_anything_else(tmp_path):
    csv_map = tmp_path / "map.csv"
    csv_map.write_text("# regex,name\n^fused_.*gemm,gemm\n")
    toml_map = tmp_path / "map.toml"
    toml_map.write_text('[map]\n"^old_" = "renamed"\n')
    mapping = read_op_map(str(csv_map)) + read_op_map(str(toml_map))
    assert normalise("fused_bias_gemm_v2", mapping) == "gemm"
    assert normalise("old_kernel", mapping) == "renamed"
    bad = tmp_path / "bad.csv"
    bad.write_text("([,x\n")
    with pytest.raises(ProftuiError, match="not an op map"):
        read_op_map(str(bad))
    with pytest.raises(ProftuiError, match="cannot read"):
        read_op_map(str(tmp_path / "missing.csv"))
    assert isinstance(mapping[0][0], re.Pattern)


def test_unlike_profiles_are_warned_about_and_not_comparable(tmp_path):
    base = opened(tmp_path, "a.json", run([500] * 4))
    host_only = [x(f"ProfilerStep#{n}", n * 600, 500, cat="user_annotation")
                 for n in range(1, 5)] + [x("python_work", n * 600 + 10, 400)
                                         for n in range(1, 5)]
    new = opened(tmp_path, "b.json", host_only)
    found = compare(base, new)
    assert not found.comparable
    assert any("different devices" in w for w in found.warnings)
    assert any("overlap little" in w for w in found.warnings)


def test_op_totals_are_the_ops_panes_totals_and_counts():
    from pathlib import Path

    from proftui.core import load_trace
    from proftui.core.aggregate import aggregate_ops, op_totals

    sample = Path(__file__).resolve().parents[2] / "samples" / "kineto_demo.pt.trace.json"
    index = load_trace(str(sample), use_cache=False)
    lo = index.start_ns + (index.end_ns - index.start_ns) // 3
    for side in ("all", "device", "host"):
        for by in ("name", "category"):
            ops = aggregate_ops(index, start_ns=lo, by=by, side=side)
            full = {str(n): (int(t), int(c)) for n, t, c in zip(
                ops.columns[0].values, ops.find("Total").values, ops.find("Count").values)}
            names, totals, counts = op_totals(index, start_ns=lo, by=by, side=side)
            assert dict(zip(map(str, names), zip(totals.tolist(), counts.tolist()))) == full


def test_the_bundled_before_and_after_tell_the_loader_story():
    from pathlib import Path

    from proftui.core import load_trace
    from proftui.core.overview import read_overview

    samples = Path(__file__).resolve().parents[2] / "samples"
    sides = []
    for name in ("diff_before.pt.trace.json", "diff_after.pt.trace.json"):
        index = load_trace(str(samples / name), use_cache=False)
        _, tables, iterations = read_overview(index)
        sides.append(Opened(name, index, tables, iterations))
    found = compare(*sides)
    assert found.comparable and found.conclusive and not found.warnings
    assert found.step["delta_pct"] < -50
    assert "dataloader" in found.verdict and "compute unchanged" in found.verdict
    status = {o.key: o.status for o in found.ops}
    assert status["enumerate(DataLoader)"] == "changed"
    assert status["triton_poi_fused_add_relu"] == "changed"
    assert status["aten::to"] == "removed" and status["aten::pin_memory"] == "added"
