"""Conformance: real profiler output from ../shared/corpus indexes with the expected contents.

Runs only where the corpus exists (CI has it beside the repository; a user's machine does not).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from proftui.core import NotATraceError, load_trace
from proftui.core.query.args import slice_args

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")

CHROME = sorted(CORPUS.glob("chrome/*.json")) if CORPUS.is_dir() else []
KINETO = sorted(CORPUS.glob("kineto/*.json.gz")) if CORPUS.is_dir() else []
NOT_TRACES = {"google_cloud_trace.json"}


def _load(path: Path):
    """A corpus path; "folder#N" opens run N of a folder holding several."""
    name, _, run = str(path).partition("#")
    return load_trace(name, run=int(run) if run else None, use_cache=False)


@pytest.mark.parametrize("path", CHROME + KINETO, ids=lambda p: p.name)
def test_every_corpus_trace_indexes(path: Path) -> None:
    if path.name in NOT_TRACES:
        with pytest.raises(NotATraceError, match="not a Chrome trace"):
            _load(path)
        return
    index = _load(path)
    summary = index.summary()
    assert summary["events"] > 0
    assert index.n_slices + len(index.col("instants.ts")) > 0
    assert index.end_ns >= index.start_ns
    # Slices are sorted by track, then start, and lie inside the span.
    track, start = index.col("slices.track"), index.col("slices.start")
    assert np.all(np.diff(track) >= 0)
    same = track[1:] == track[:-1]
    assert np.all(np.diff(start)[same] >= 0)
    if index.n_slices:
        assert start.min() >= index.start_ns
        assert (start + index.col("slices.dur")).max() <= index.end_ns


# (file, phase counts, slices, instants, counter samples, flow edges, diagnostics by kind)
EXPECTED = [
    ("chrome/big_trace.json", {"B": 933, "E": 933}, 933, 0, 0, 0, {}),
    ("chrome/main_thread_has_unclosed_slices.json", {"B": 1684, "E": 1680, "M": 22},
     1684, 0, 0, 0, {"unclosed_begin": 4}),
    ("chrome/simple_trace.json", {"B": 8, "E": 8, "I": 6, "C": 5, "X": 4, "P": 3, "M": 3},
     12, 6, 5, 0, {"end_name_mismatch": 1}),
    ("chrome/flow_simple.json", {"X": 5, "s": 2, "f": 2, "t": 1}, 5, 0, 0, 3, {}),
    ("chrome/nanoseconds.json", {"B": 8, "E": 8}, 8, 0, 0, 0, {}),
    ("chrome/nestable_async.json", {"b": 9, "e": 9, "n": 2}, 9, 2, 0, 0,
     {"unmatched_async_end": 1, "unclosed_async": 1}),
    ("chrome/instant_events.json", {"i": 5}, 0, 5, 0, 0, {}),
    ("kineto/resnet50_num_workers_0.pt.trace.json.gz",
     {"X": 54320, "f": 10015, "s": 9282, "M": 20, "i": 2}, 54320, 2, 0, 9282,
     {"flow_orphan": 733}),
    ("kineto/step_based_trace_2543932.json.gz",
     {"X": 984, "f": 180, "s": 140, "M": 38, "i": 2}, 984, 2, 0, 140, {"flow_orphan": 40}),
    ("ascend/torch_npu_trace_view/trace_view.json", {"X": 2212, "s": 713, "f": 713, "M": 32},
     2212, 0, 0, 713, {}),
    ("ascend/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
     "msprof_20260605161734.json", {"X": 83, "M": 28, "C": 4, "s": 3, "f": 3}, 83, 0, 4, 3, {}),
    ("ascend/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/timeline/"
     "msprof_0_2_1.json", {"X": 1049, "M": 57, "s": 1, "t": 1}, 1049, 0, 0, 1, {}),
]


@pytest.mark.parametrize("name,phases,slices,instants,samples,edges,problems", EXPECTED,
                         ids=[e[0].rsplit("/", 1)[-1] for e in EXPECTED])
def test_corpus_contents(name, phases, slices, instants, samples, edges, problems) -> None:
    index = _load(CORPUS / name)
    assert index.meta["phase_counts"] == phases
    assert index.n_slices == slices
    assert len(index.col("instants.ts")) == instants
    assert len(index.col("counters.sample_ts")) == samples
    assert len(index.col("flows.src_slice")) == edges
    assert {p.kind: p.count for p in index.diagnostics} == problems


def _process_names(index) -> list[str]:
    return [index.strings[i] for i in index.col("processes.name")]


def test_torch_npu_trace_view_names_and_exact_times() -> None:
    index = _load(CORPUS / "ascend/torch_npu_trace_view/trace_view.json")
    assert _process_names(index) == ["Python", "CANN", "Ascend Hardware", "Overlap Analysis"]
    # String timestamps keep their nanoseconds: "1704161511420289.011" us.
    assert index.start_ns == 1704161511420289011
    # Every flow binds both ends to slices (torch_to_npu ids exceed 2^53).
    assert (index.col("flows.src_slice") >= 0).all()
    assert (index.col("flows.dst_slice") >= 0).all()
    assert index.col("flows.flow_id_num").max() > 2**53


def test_msprof_cann8_tracks() -> None:
    index = _load(CORPUS / EXPECTED[10][0])
    assert _process_names(index) == ["CANN", "Ascend Hardware", "AI Core Freq",
                                     "Overlap Analysis"]
    labels = [index.track_label(t) for t in range(index.n_tracks)]
    assert "Stream 1756" in labels and "Computing (2)" in labels


def test_kineto_2021_string_tids_join_their_threads() -> None:
    # X events there carry tid "1890023232" and flow starts tid 1890023232: one thread.
    index = _load(CORPUS / "kineto/resnet50_num_workers_0.pt.trace.json.gz")
    assert (index.col("flows.src_slice") >= 0).all()


# -- profile directories ------------------------------------------------------------------------


def test_old_layout_prof_directory() -> None:
    root = CORPUS / "ascend/PROF_000001_20230818142704322_COJGGGCANRMICFBC"
    index = _load(root)
    profile = index.meta["profile"]
    assert profile["layouts"] == ["msprof (old CANN device_N/timeline)"]
    assert [Path(t["path"]).name for t in profile["timelines"]] == [
        f"msprof_0_2_{i}.json" for i in range(1, 11)]
    assert len(profile["skipped"]) == 30  # task_time, hccl and step_trace: inside msprof_*
    assert _process_names(index) == ["CANN", "Ascend Hardware", "HCCL", "Overlap Analysis"]
    labels = {index.track_label(t) for t in range(index.n_tracks)}
    assert {"Stream 2", "Plane 0", "Step Trace(Model ID:2) (10036)"} <= labels
    assert index.n_slices == 10838
    stream = next(t for t in range(index.n_tracks) if index.track_label(t) == "Stream 2")
    first = int(index.col("tracks.first_slice")[stream])
    assert "Task Type" in slice_args(index, first)  # args read lazily from the right file


def test_cann8_prof_directory() -> None:
    index = _load(CORPUS / "ascend/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA")
    profile = index.meta["profile"]
    assert sorted(t["kind"] for t in profile["tables"]) == [
        "api_statistic", "op_statistic", "op_summary", "task_time"]
    assert index.n_slices == 83


def test_torch_npu_rank_without_trace_lists_its_tables() -> None:
    index = _load(CORPUS / "ascend/torch_npu_rank_0")
    profile = index.meta["profile"]
    assert index.n_slices == 0 and profile["layouts"] == ["summary tables only"]
    assert sorted(t["kind"] for t in profile["tables"]) == [
        "kernel_details", "memory_record", "npu_module_mem", "operator_details",
        "operator_memory", "step_trace_time"]
    assert {Path(s["path"]).name for s in profile["skipped"]} == {
        "profiler_info_0.json", "communication.json", "communication_matrix.json"}


def test_kineto_folder_is_two_runs() -> None:
    # Two unrelated traces two years apart: once one profile of two groups on one axis.
    from proftui.core.discover.runs import SeveralRunsError

    with pytest.raises(SeveralRunsError) as caught:
        _load(CORPUS / "kineto")
    assert caught.value.lines() == [
        "  1  resnet50_num_workers_0.pt.trace.json.gz; captured 2021-01-11 12:04:22 UTC",
        "  2  step_based_trace_2543932.json.gz; captured 2023-01-04 23:59:59 UTC"]
    assert [_load(CORPUS / f"kineto#{n}").n_slices for n in (1, 2)] == [54320, 984]


def test_ascend_folder_is_four_runs_each_as_its_folder_opens() -> None:
    from proftui.core.discover.runs import SeveralRunsError

    with pytest.raises(SeveralRunsError) as caught:
        _load(CORPUS / "ascend")
    assert str(caught.value) == (f"{CORPUS / 'ascend'} holds 4 separate runs (capture times "
                                 "far apart); pick one with --run N, or open its folder.")
    assert caught.value.lines() == [
        f"  1  {OLD}: device 0; captured 2023-08-18 06:27:04 UTC",
        "  2  torch_npu_rank_0: rank 0; captured 2023-09-19 09:22:59 UTC",
        "  3  torch_npu_trace_view/; captured 2024-01-02 02:11:51 UTC",
        "  4  PROF_000001_20260605161708478_FRJKORBPFMHQMGLA; captured 2026-06-05 16:17:08 UTC"]
    for n, folder in enumerate([OLD, "torch_npu_rank_0", "torch_npu_trace_view",
                                "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA"], 1):
        run, alone = _load(CORPUS / f"ascend#{n}"), _load(CORPUS / "ascend" / folder)
        for key in ("timelines", "tables"):
            assert [t["path"] for t in run.meta["profile"][key]] == [
                t["path"] for t in alone.meta["profile"][key]]
        assert (run.n_slices, run.start_ns, run.end_ns) == (
            alone.n_slices, alone.start_ns, alone.end_ns)


TABLE_ROWS = {
    "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
    "op_summary_20260605161737.csv": 3,
    "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
    "op_statistic_20260605161737.csv": 1,
    "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
    "api_statistic_20260605161737.csv": 31,
    "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
    "task_time_20260605161737.csv": 7,
    "torch_npu_rank_0/ASCEND_PROFILER_OUTPUT/kernel_details.csv": 21,
    "torch_npu_rank_0/ASCEND_PROFILER_OUTPUT/memory_record.csv": 11,
    "torch_npu_rank_0/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv": 78,
    "torch_npu_rank_0/ASCEND_PROFILER_OUTPUT/operator_details.csv": 2,
    "torch_npu_rank_0/ASCEND_PROFILER_OUTPUT/operator_memory.csv": 28,
    "torch_npu_rank_0/ASCEND_PROFILER_OUTPUT/step_trace_time.csv": 1,
    "torch_npu_trace_view/kernel_details.csv": 29,
}


@pytest.mark.parametrize("name,rows", TABLE_ROWS.items(), ids=lambda v: str(v)[-30:])
def test_corpus_table_rows(name, rows) -> None:
    from proftui.core.cache.tables import read_table

    table = read_table(str(CORPUS / "ascend" / name))
    assert table.n_rows == rows
    assert all(len(c.values) == rows for c in table.columns)


@pytest.mark.parametrize("name,count,source", [
    ("ascend/PROF_000001_20230818142704322_COJGGGCANRMICFBC", 10, "msprof step trace"),
    ("ascend/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA", 0, "ProfilerStep#N annotations"),
    ("ascend/torch_npu_trace_view", 1, "ProfilerStep#N annotations"),
    ("ascend/torch_npu_rank_0", 1, "step_trace_time.csv"),
    ("kineto#1", 6, "ProfilerStep#N annotations"),
    ("kineto/step_based_trace_2543932.json.gz", 0, "ProfilerStep#N annotations"),
])
def test_corpus_iterations(name, count, source) -> None:
    from proftui.core.cache.tables import read_table
    from proftui.core.ops.iterations import find_iterations

    index = _load(CORPUS / name)
    tables = [read_table(t["path"], t["kind"], t["group"])
              for t in index.meta["profile"]["tables"]]
    found = find_iterations(index, tables)
    assert (found.source, len(found.items)) == (source, count)
    if name.endswith("COJGGGCANRMICFBC"):  # Iteration Time(ns) of iteration 1, from its args
        first = found.items[0]
        assert first.dur_ns == 47587810 and first.parts["FP+BP"] == 4236100


# -- what `proftui info` says about each profile: groups, clocks, iterations, tables -------------

OLD = "PROF_000001_20230818142704322_COJGGGCANRMICFBC"
OLD_OFFSET_NS = 1692340024324979 * 1000 - 56579931060630  # its device_0/start_info.0


def _overview(name: str) -> dict:
    from proftui.core.analysis.overview import overview

    return overview(_load(CORPUS / name))


def test_old_layout_is_moved_to_the_wall_clock_of_its_start_info() -> None:
    info = _overview(f"ascend/{OLD}")
    assert {(s["clock"], s["offset_ns"]) for s in info["sources"]} == {
        ("monotonic -> wall via device_0/start_info.0", OLD_OFFSET_NS)}
    # Everything lies inside the collection window start_info.0 and end_info.0 record.
    assert 1692340024324979000 <= info["start_ns"] < info["end_ns"] <= 1692340082430569000
    assert info["start_ns"] == 56635864386800 + OLD_OFFSET_NS
    assert {d["kind"]: d["count"] for d in info["diagnostics"]} == {"flow_unbound": 4}
    first = info["iterations"]["items"][0]
    assert first["start_ns"] > 1692340024324979000  # windows are on the same clock


@pytest.mark.parametrize("name,start_ns", [
    ("ascend/torch_npu_trace_view", 1704161511420289011),
    ("kineto#1", 1610366662254282000),  # 2021 Kineto: epoch µs, no baseTimeNanoseconds
    ("ascend/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA", 1780676228898322000),
])
def test_epoch_traces_keep_their_clock(name, start_ns) -> None:
    info = _overview(name)
    assert all("clock" not in s for s in info["sources"])
    assert info["start_ns"] == start_ns


# (profile, groups, {process names}, {(table kind, group): rows}, iterations by group)
PROFILES = [
    (f"ascend/{OLD}", [""], {"CANN", "Ascend Hardware", "HCCL", "Overlap Analysis"}, {},
     {"": 10}),
    ("ascend/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA", [""],
     {"CANN", "Ascend Hardware", "AI Core Freq", "Overlap Analysis"},
     {("op_summary", ""): 3, ("op_statistic", ""): 1, ("api_statistic", ""): 31,
      ("task_time", ""): 7}, {}),
    ("ascend/torch_npu_trace_view", [""],
     {"Python", "CANN", "Ascend Hardware", "Overlap Analysis"}, {("kernel_details", ""): 29},
     {"": 1}),
    # no timeline: its memory CSVs alone give counters
    ("ascend/torch_npu_rank_0", [], {"Memory", "NPU Module Memory"},
     {("kernel_details", ""): 21, ("memory_record", ""): 11, ("npu_module_mem", ""): 78,
      ("operator_details", ""): 2, ("operator_memory", ""): 28, ("step_trace_time", ""): 1},
     {"": 1}),
    ("kineto#1", [""], {"python", ""}, {}, {"": 6}),
]


@pytest.mark.parametrize("name,groups,processes,tables,iterations", PROFILES,
                         ids=[p[0] for p in PROFILES])
def test_info_of_each_profile(name, groups, processes, tables, iterations) -> None:
    info = _overview(name)
    assert info["profile"]["groups"] == groups
    assert {p["name"] for p in info["processes"]} == processes
    rows = {(t["kind"], t["group"]): t["rows"] for t in info["profile"]["tables"]}
    assert {key: rows.get(key) for key in tables} == tables
    assert all("error" not in t for t in info["profile"]["tables"])
    counts: dict[str, int] = {}
    for item in info["iterations"]["items"]:
        counts[item["group"]] = counts.get(item["group"], 0) + 1
    assert counts == iterations


# -- ops from the timeline against the op_statistic CSV of the same profile ----------------------

# Profiles holding both a timeline and an op_statistic CSV written by the same run. (The
# torch_npu_trace_view folder joins a trace_view.json and a kernel_details.csv of two
# different runs, and the old layout has no summary CSVs: neither applies.)
OP_STATISTIC_PROFILES = ["ascend/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA"]


@pytest.mark.parametrize("name", OP_STATISTIC_PROFILES)
def test_op_statistic_agrees_with_the_device_slices(name) -> None:
    """msprof writes one device slice per task, named by its Op Name; op_summary maps Op Name
    to OP Type. op_statistic's Count and Total Time per OP Type are then the count and the
    summed duration (to the µs it rounds to) of the device slices of that type."""
    from proftui.core.cache.tables import read_table
    from proftui.core.ops.aggregate import aggregate_ops

    index = _load(CORPUS / name)
    tables = {t["kind"]: read_table(t["path"], t["kind"])
              for t in index.meta["profile"]["tables"]}
    summary, stat = tables["op_summary"], tables["op_statistic"]
    type_of = dict(zip(summary.find("Op Name").values, summary.find("OP Type").values))
    ops = aggregate_ops(index, side="device")
    count: dict[str, int] = {}
    total_us: dict[str, float] = {}
    for op, n, total in zip(ops.columns[0].values, ops.find("Count").values,
                            ops.find("Total").values):
        if op in type_of:
            count[type_of[op]] = count.get(type_of[op], 0) + int(n)
            total_us[type_of[op]] = total_us.get(type_of[op], 0.0) + float(total) / 1_000
    expected = dict(zip(stat.find("OP Type").values, stat.find("Count").values.astype(int)))
    assert count == expected and sum(count.values()) == summary.n_rows
    for op_type, us in zip(stat.find("OP Type").values, stat.find("Total Time").values):
        assert total_us[op_type] == pytest.approx(float(us), abs=0.002)


# -- which side, which ops: the numbers the summary and the Ops pane stand on -------------------

TORCH_NPU_RANKS = ["torch_npu_2rank/text_level1/rank0_ascend_pt",
                   "torch_npu_2rank/text_level1/rank1_ascend_pt"]


@pytest.mark.parametrize("name", TORCH_NPU_RANKS)
def test_device_ops_by_type_are_op_statistic(name) -> None:
    """torch_npu's op_statistic.csv counts the compute tasks of kernel_details by OP Type: the
    device ops of trace_view.json grouped by type hold the same counts and totals (the HCCL
    planes, the Overlap Analysis view and the collectives' stream tasks not counted again)."""
    from proftui.core.cache.tables import read_table
    from proftui.core.ops.aggregate import aggregate_ops

    index = _load(CORPUS / name)
    tables = [read_table(t["path"], t["kind"]) for t in index.meta["profile"]["tables"]]
    stat = next(t for t in tables if t.kind == "op_statistic")
    ops = aggregate_ops(index, side="device", by="type", tables=tables)
    mine = {t: (int(n), float(total) / 1_000) for t, n, total in zip(
        ops.columns[0].values, ops.find("Count").values, ops.find("Total").values)}
    for op_type, n, us in zip(stat.find("OP Type").values, stat.find("Count").values,
                              stat.find("Total Time").values):
        assert mine[op_type][0] == int(n), op_type
        assert mine[op_type][1] == pytest.approx(float(us), abs=0.0005 * n + 0.001), op_type
    # Each communication op once: the four all-reduces of step 50, not their tasks.
    assert mine["hcom_allReduce_"][0] == 4
    assert not {"Notify_Wait", "Notify Wait", "SDMA", "Computing", "Free"} & set(mine)


@pytest.mark.parametrize("path", KINETO, ids=lambda p: p.name)
def test_kineto_sides_follow_the_categories(path: Path) -> None:
    """No host category on the device side and no device category on the host side; the
    device ops of a stream never add up to more than the stream's span."""
    from proftui.core.ops.aggregate import aggregate_ops
    from proftui.core.ops.roles import DEVICE_CATEGORIES, HOST_CATEGORIES, device_tracks

    index = _load(path)
    device = device_tracks(index)
    on_device = device[index.col("slices.track")]
    cats = index.col("slices.cat")
    device_cats = {index.strings[c] for c in np.unique(cats[on_device]).tolist()}
    host_cats = {index.strings[c] for c in np.unique(cats[~on_device]).tolist()}
    assert device_cats and not device_cats & HOST_CATEGORIES
    assert not host_cats & DEVICE_CATEGORIES
    for t in np.flatnonzero(device).tolist():
        first = int(index.col("tracks.first_slice")[t])
        n = int(index.col("tracks.slice_count")[t])
        if not n:
            continue
        start = index.col("slices.start")[first:first + n]
        span = int((start + index.col("slices.dur")[first:first + n]).max() - start.min())
        ops = aggregate_ops(index, tracks=[t])
        assert ops.find("Total").values.sum() <= span
        assert (ops.find("Window").values <= 100.0 + 1e-9).all()


# Step 50 of the two ranks, as their step_trace_time.csv says (µs).
STEP_50 = {
    "torch_npu_2rank/text_level1/rank0_ascend_pt": {
        "computing": 8873.756, "communication(not overlapped)": 101963.203,
        "overlapped": 4028.675, "communication": 105991.878, "free": 25744.05},
    "torch_npu_2rank/text_level1/rank1_ascend_pt": {
        "computing": 8878.295, "communication(not overlapped)": 96359.047,
        "overlapped": 4016.239, "communication": 100375.286, "free": 26675.274},
}


@pytest.mark.parametrize("name", STEP_50)
def test_step_breakdown_from_the_trace_equals_step_trace_time(name) -> None:
    """From the timeline alone (no CSV read), step 50's parts equal step_trace_time.csv."""
    from proftui.core.ops.iterations import find_iterations

    found = find_iterations(_load(CORPUS / name), [])
    (step,) = found.items
    assert step.number == 50
    assert {k: step.parts[k] / 1_000 for k in STEP_50[name]} == pytest.approx(
        STEP_50[name], abs=1e-6)


@pytest.mark.parametrize("name", STEP_50)
def test_step_breakdown_shown_equals_step_trace_time(name) -> None:
    """What `proftui iterations` and the summary show for step 50 (the trace's parts, with
    step_trace_time.csv joined) equals the CSV; Communication is not the not-overlapped part."""
    from proftui.core.analysis.overview import read_overview

    (step,) = read_overview(_load(CORPUS / name))[2].items
    assert {k: step.parts[k] / 1_000 for k in STEP_50[name]} == pytest.approx(
        STEP_50[name], abs=1e-6)
    assert step.parts["communication"] != step.parts["communication(not overlapped)"]


SELF_TIME_TRACES = [p for p in CHROME + KINETO if p.name not in NOT_TRACES] + (
    [CORPUS / e[0] for e in EXPECTED if e[0].startswith("ascend/")] +  # the files themselves
    [CORPUS / "ascend" / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA",
     CORPUS / "ascend" / "PROF_000001_20230818142704322_COJGGGCANRMICFBC",
     *(CORPUS / name for name in TORCH_NPU_RANKS)] if CORPUS.is_dir() else [])


@pytest.mark.parametrize("path", SELF_TIME_TRACES, ids=lambda p: p.name)
def test_self_times_sum_to_each_tracks_busy_time(path: Path) -> None:
    """On every track, self times add up to the union of its slices, and none is negative
    or longer than its slice (Python stacks overlap without nesting in real traces)."""
    from proftui.core.ops.aggregate import union_ns
    from proftui.core.query.self_time import self_times

    index = _load(path)
    found = self_times(index)
    start, dur, track = (index.col("slices.start"), index.col("slices.dur"),
                         index.col("slices.track"))
    assert (found >= 0).all() and (found <= dur).all()
    order = np.argsort(track, kind="stable")
    bounds = np.searchsorted(track[order], np.arange(index.n_tracks + 1))
    for t in range(index.n_tracks):
        mine = order[bounds[t]:bounds[t + 1]]
        assert int(found[mine].sum()) == union_ns(start[mine], start[mine] + dur[mine]), t
