"""Comparing two profiles: matching, verdict and comparability on small inline pairs."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from proftui.core.analysis.diff import Opened, compare, normalise, read_op_map
from proftui.core.analysis.diff_report import diff_tables
from proftui.core.analysis.overview import read_overview
from proftui.core.analysis.rank_diff import compare_ranks
from proftui.core.analysis.step_verdict import judge_steps
from proftui.core.model.errors import ProftuiError
from proftui.core.ops.iterations import find_iterations

from helpers import load, write_trace, x


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
    base = opened(tmp_path, "a.json", run([900, 905, 910, 895, 900, 903, 990], loader_us=600))
    new = opened(tmp_path, "b.json", run([400, 402, 398, 405, 401, 399, 480], loader_us=100))
    found = compare(base, new)
    step = found.step
    assert found.conclusive and step["delta_pct"] < -50 and step["outcome"] == "faster"
    # medians, the warm-up and the last step left out
    assert step["base_ns"] == 903_000 and step["new_ns"] == 401_000
    assert found.verdict.startswith("step -55.6 %") and "dataloader -500 us" in found.verdict
    assert "compute unchanged" in found.verdict
    assert found.parts["dataloader_ns"] == (600_000, 100_000)


def test_noise_only_is_inconclusive(tmp_path):
    base = opened(tmp_path, "a.json", run([500, 520, 480, 510, 490]))
    new = opened(tmp_path, "b.json", run([505, 515, 485, 500, 495]))
    found = compare(base, new)
    assert not found.conclusive and "too few steps" in found.reason
    assert "inconclusive" in found.verdict
    base = opened(tmp_path, "c.json", run([500, 520, 480, 510, 490, 515, 485, 500]))
    new = opened(tmp_path, "d.json", run([505, 515, 485, 500, 495, 490, 512, 500]))
    found = compare(base, new)
    assert found.step["outcome"] == "inconclusive" and "overlap too much" in found.reason


def test_one_step_a_side_is_inconclusive_and_iterations_can_be_chosen(tmp_path):
    base = opened(tmp_path, "a.json", run([500, 900, 910, 905, 908, 902, 950]))
    new = opened(tmp_path, "b.json", run([500, 400, 410, 405, 400, 402, 403, 401, 450]))
    found = compare(base, new, numbers=(2, 2))
    assert found.base.iterations == [2] and found.new.iterations == [2]
    assert not found.conclusive and "fewer than two steps" in found.reason
    found = compare(base, new)  # different step counts, the edges left out on each
    assert found.base.iterations == [2, 3, 4, 5, 6]
    assert found.new.iterations == [2, 3, 4, 5, 6, 7, 8]
    assert found.base.left_out == [(1, "warm-up"), (7, "the capture's last step")]
    assert found.conclusive and found.test.outcome == "faster"


def test_renamed_kernels_match_and_ops_on_one_side_are_added_or_removed(tmp_path):
    only_base = [lambda at: x("aten::to", at + 300, 20)]
    only_new = [lambda at: x("aten::pin_memory", at + 300, 20)]
    base = opened(tmp_path, "a.json", run([500] * 4, extra=only_base))
    new = opened(tmp_path, "b.json", run([500] * 4, kernel="triton_poi_fused_add_relu_1",
                                         extra=only_new))
    by_key = {o.key: o for o in compare(base, new).ops}
    assert by_key["triton_poi_fused_add_relu"].status == "unchanged"  # renamed, same time
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
    from proftui.core.ops.aggregate import aggregate_ops, op_totals

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
    from proftui.core.analysis.overview import read_overview

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


def npu_rank(root, rank, steps_us, op_statistic=None):
    """A torch_npu rank dir: profiler_info_N.json, a trace_view.json of steps of the given
    lengths (with a first and a last of 300 µs, at the capture's edges), and an
    op_statistic.csv when given."""
    out = root / f"rank{rank}_ascend_pt"
    (out / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (out / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
    events, at = [], 0
    for n, length in enumerate([300, *steps_us, 300], 1):  # and the last, cut by the stop
        events.append(x(f"ProfilerStep#{n}", at, length, pid=7, tid=7, cat="user_annotation"))
        at += length + 5
    (out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(events))
    if op_statistic:
        (out / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv").write_text(
            "OP Type,Core Type,Count,Total Time(us)\n" + op_statistic)
    return root


def opened_dir(root):
    index = load(root)
    _, tables, iterations = read_overview(index)
    return Opened(str(root), index, tables, iterations)


def test_ranks_are_compared_by_name_with_each_sides_slowest(tmp_path):
    for rank, b_steps, n_steps in ((0, [100, 102, 98], [110, 111, 109]),
                                   (1, [120, 120, 121], [90, 90, 90])):
        npu_rank(tmp_path / "a", rank, b_steps, f"MatMul,AI_CORE,2,{rank + 1}\n")
        npu_rank(tmp_path / "b", rank, n_steps, "MatMul,AI_CORE,2,1\n")
    found = compare(opened_dir(tmp_path / "a"), opened_dir(tmp_path / "b"))
    assert found.ranks.matched_by == "name"
    assert [(r.base_group, r.new_group, r.base_ns, r.new_ns, r.delta_ns) for r in
            found.ranks.rows] == [("rank 0", "rank 0", 100_000, 110_000, 10_000),
                                  ("rank 1", "rank 1", 120_000, 90_000, -30_000)]
    assert found.ranks.rows[1].delta_pct == -25.0
    data = found.to_json()
    assert data["slowest"] == {"base": {"group": "rank 1", "step_ns": 120_000},
                               "new": {"group": "rank 0", "step_ns": 110_000}}
    assert data["ranks"][0] == {"base_group": "rank 0", "new_group": "rank 0",
                                "base_ns": 100_000, "new_ns": 110_000, "delta_ns": 10_000,
                                "delta_pct": 10.0}
    [stat] = data["tables"]  # the two ranks' op_statistic summed on each side
    assert stat["groups"] == {"base": ["rank 0", "rank 1"], "new": ["rank 0", "rank 1"]}
    assert stat["rows"][0]["base_total_ns"] == 3_000 and stat["rows"][0]["new_total_ns"] == 2_000
    titles = [title for title, _ in diff_tables(found)]
    assert titles[1] == "ranks: median step per rank, matched by name"


def test_ranks_named_differently_are_matched_in_natural_order(tmp_path):
    for rank, steps in ((0, [100] * 3), (1, [120] * 3)):
        npu_rank(tmp_path / "a", rank, steps)
    for rank, steps in ((2, [110] * 3), (10, [90] * 3)):  # "rank 10" after "rank 2"
        npu_rank(tmp_path / "b", rank, steps)
    found = compare(opened_dir(tmp_path / "a"), opened_dir(tmp_path / "b"))
    assert "the ranks are named differently: compared in order" in found.warnings
    assert found.ranks.matched_by == "order"
    assert [(r.base_group, r.new_group, r.delta_ns) for r in found.ranks.rows] == [
        ("rank 0", "rank 2", 10_000), ("rank 1", "rank 10", -30_000)]
    assert (found.ranks.slowest_new.group, found.ranks.slowest_new.step_ns) == (
        "rank 2", 110_000)


def test_one_rank_a_side_has_no_rank_table_but_a_slowest(tmp_path):
    side = opened(tmp_path, "a.json", run([500, 510, 490, 505, 520]))
    found = compare(side, side)
    data = found.to_json()
    assert data["ranks"] == [] and data["ranks_matched_by"] is None
    assert data["slowest"]["base"] == {"group": "", "step_ns": 505_000}
    assert not any(title.startswith("ranks") for title, _ in diff_tables(found))


def test_ranks_without_a_partner_or_steps_are_listed_alone():
    ranks = compare_ranks(["rank 0", "rank 1", "rank 2"], {"rank 0": 5, "rank 2": 7},
                          ["rank 0", "rank 1"], {"rank 0": 6, "rank 1": 9})
    assert ranks.matched_by == "order"
    assert [(r.base_group, r.new_group, r.base_ns, r.new_ns, r.delta_ns) for r in
            ranks.rows] == [("rank 0", "rank 0", 5, 6, 1), ("rank 1", "rank 1", None, 9, None),
                            ("rank 2", None, 7, None, None)]
    assert (ranks.slowest_base.group, ranks.slowest_new.group) == ("rank 2", "rank 1")
    empty = compare_ranks([], {}, [], {})
    assert empty.rows == [] and empty.slowest_base.to_json() == {"group": None,
                                                                 "step_ns": None}


# -- the step verdict ---------------------------------------------------------------------------

MS = 1_000_000
# ResNet-50 with 0 and 4 data-loader workers: steps 6 to 10 of each capture (ms)
RESNET_BASE = [150.8, 141.3, 161.0, 148.5, 167.7]
RESNET_NEW = [118.1, 108.4, 124.1, 115.0, 152.1]


def test_the_resnet_steps_are_faster_whole_or_without_the_last_step():
    base = [round(s * MS) for s in RESNET_BASE]
    new = [round(s * MS) for s in RESNET_NEW]
    whole = judge_steps(base, new)  # the new 152.1 ms is an outlier: listed, not tested
    assert whole.outcome == "faster" and whole.outliers_new == [4] and whole.new_n == 4
    assert whole.p_value == pytest.approx(2 / 126)  # U = 0 of 4 x 5: 2 splits in 126
    lo, hi = whole.ci_pct
    assert lo < whole.shift_pct < hi < 0 and whole.confidence >= 0.95
    edges = judge_steps(base[:4], new[:4])  # the capture's last step left out
    assert edges.outcome == "faster" and edges.p_value == pytest.approx(2 / 70)
    assert edges.shift_pct == pytest.approx(-22.74, abs=0.01)


def _steps(rng, n: int, scale: float, sigma: float = 0.05) -> list[int]:
    """`n` step times (ns) around `scale`, log-normal with `sigma` (5 %: ResNet's noise)."""
    return [int(s) for s in (scale * np.exp(rng.normal(0.0, sigma, n))).round()]


def test_steps_of_one_distribution_are_no_change_or_inconclusive_95_times_in_100():
    told = [judge_steps(_steps(rng, 5, 100 * MS), _steps(rng, 5, 100 * MS)).outcome
            for rng in map(np.random.default_rng, range(1000))]
    assert sum(o in ("no change", "inconclusive") for o in told) >= 950


def test_a_20_percent_shift_with_one_outlier_step_is_found_80_times_in_100():
    found = 0
    for seed in range(1000):
        rng = np.random.default_rng(seed)
        faster = rng.random() < 0.5
        base, new = _steps(rng, 5, 100 * MS), _steps(rng, 5, (80 if faster else 120) * MS)
        side = base if rng.random() < 0.5 else new
        side[int(rng.integers(5))] = int(side[0] * 1.5)  # one hiccup, on either side
        found += judge_steps(base, new).outcome == ("faster" if faster else "slower")
    assert found >= 800


def test_the_exact_p_value_counts_every_split_ties_at_mid_ranks():
    from itertools import combinations

    from proftui.core.analysis.step_verdict import _mid_ranks, _rank_sum_counts

    rng = np.random.default_rng(7)
    for _ in range(30):
        pooled = rng.integers(1, 5, int(rng.integers(4, 10))).astype(float)  # many ties
        m = int(rng.integers(1, len(pooled)))
        ranks = _mid_ranks(pooled)
        counts = _rank_sum_counts(np.rint(2 * ranks).astype(np.int64), m)
        brute = np.zeros_like(counts)
        for chosen in combinations(range(len(pooled)), m):
            brute[int(round(2 * ranks[list(chosen)].sum()))] += 1
        assert counts.tolist() == brute.tolist()


def test_the_verdict_is_the_same_for_the_same_steps():
    rng = np.random.default_rng(3)
    base, new = _steps(rng, 30, 100 * MS), _steps(rng, 80, 97 * MS)  # 110: approximated
    first = judge_steps(base, new)
    assert first == judge_steps(base, new) and first.method.endswith("normal approximation")


def test_ops_per_step_are_those_inside_the_steps_compared(tmp_path):
    """Each step's kernel runs 100 µs past its end into the next step's data loading: the
    ops compared are those of the step windows, as breakdown's data loader counts them."""
    events, at = [], 0
    for n in range(1, 6):
        events += [x(f"ProfilerStep#{n}", at, 1000, cat="user_annotation"),
                   x("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", at, 300),
                   x("aten::copy_", at + 310, 50), k("sgemm_128x64", at + 900, 200)]
        at += 1000
    side = opened(tmp_path, "a.json", events)
    found = compare(side, side)
    assert found.base.iterations == [2, 3, 4]
    ops = {o.key: o for o in found.ops}
    loader = ops["enumerate(DataLoader)"]
    assert (loader.base_total_ns, loader.base_count) == (300_000, 1)
    assert loader.base_total_ns == found.parts["dataloader_ns"][0]
    assert ops["aten::copy_"].base_count == 1
    sgemm = ops["sgemm_128x64"]  # its own step's 100 µs and the previous one's last 100
    assert (sgemm.base_total_ns, sgemm.base_count) == (200_000, 2)
