"""The advisor's rules, each threshold tried on both sides on small inline traces."""

from __future__ import annotations

import pytest

from proftui.core.analysis.advise import RULES, advise, parse_overrides
from proftui.core.model.errors import ProftuiError
from proftui.core.ops.iterations import find_iterations

from helpers import load, write_trace, x

STEP_US = 1000


def k(name, ts, dur, tid=7, cat="kernel"):
    return x(name, ts, dur, tid=tid, pid=0, cat=cat)


def steps(per_step, n=4, step_us=STEP_US, first=None):
    """`n` steps of `step_us`; `per_step(offset_us, number)` gives each step's events (the
    first step, a warm-up, from `first` if given)."""
    events = []
    for i in range(n):
        at = i * step_us
        events.append(x(f"ProfilerStep#{i + 1}", at, step_us, cat="user_annotation"))
        events += (first or per_step)(at, i + 1) if i == 0 else per_step(at, i + 1)
    return events


def run(tmp_path, events, **overrides):
    index = load(write_trace(tmp_path / "t.json", events))
    settings = parse_overrides([f"{key.replace('__', '.')}={v}"
                                for key, v in overrides.items()])
    return advise(index, find_iterations(index), (), settings)


def rules_found(advice):
    return {f.rule for f in advice.findings}


def test_exposed_communication_over_a_tenth_of_the_device_span(tmp_path):
    def step(comm_us):
        return lambda at, _: [k("sgemm", at + 100, 400),
                              k("ncclKernel_AllReduce", at + 500, comm_us, tid=8)]
    over = run(tmp_path, steps(step(50)))  # 50 of 450 µs: 11 %
    (f,) = [f for f in over.findings if f.rule == "exposed_comm"]
    assert f.time_lost_ns == 50_000 and f.share == pytest.approx(0.05)
    assert f.severity == "high" and f.evidence[0].end_ns - f.evidence[0].start_ns == 50_000
    assert "exposed_comm" not in rules_found(run(tmp_path, steps(step(40))))  # 9 %


def test_ai_cpu_over_twenty_microseconds_or_a_twentieth_of_device_time(tmp_path):
    def step(ai_cpu_us):
        return lambda at, _: [k("sgemm", at + 100, 800),
                              k("DropOutDoMask_AiCpu", at + 900, ai_cpu_us, cat="kernel")]
    assert "ai_cpu" in rules_found(run(tmp_path, steps(step(25))))
    assert "ai_cpu" not in rules_found(run(tmp_path, steps(step(15))))  # short and 1.8 %
    found = run(tmp_path, steps(step(15)), ai_cpu__max_share=0.01)
    (f,) = [f for f in found.findings if f.rule == "ai_cpu"]
    assert f.numbers["top"][0]["name"] == "DropOutDoMask_AiCpu"


def test_host_bound_and_launch_bound(tmp_path):
    def step(gap_us, small=False):
        dur = 5 if small else 100
        return lambda at, _: [k("sgemm", at + 100, dur), x("aten::foo", at + 100 + dur, gap_us),
                              k("sgemm", at + 100 + dur + gap_us, dur)]
    found = run(tmp_path, steps(step(30)))  # idle 30 of 230 µs with the host busy
    (f,) = [f for f in found.findings if f.rule == "host_bound"]
    assert f.time_lost_ns == 30_000 and not f.numbers["launch_bound"]
    assert "host_bound" not in rules_found(run(tmp_path, steps(step(10))))  # 10 of 210
    (f,) = [f for f in run(tmp_path, steps(step(30, small=True))).findings
            if f.rule == "host_bound"]
    assert f.numbers["launch_bound"] and "launch-bound" in f.title


def test_input_pipeline_over_a_twentieth_of_the_step(tmp_path):
    def step(load_us):
        return lambda at, _: [x("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                                at, load_us), k("sgemm", at + load_us + 10, 500)]
    (f,) = [f for f in run(tmp_path, steps(step(60))).findings if f.rule == "input_pipeline"]
    assert f.numbers["dataloader_ns_per_step"] == 60_000
    assert f.time_lost_ns == 60_000  # the device did nothing while the data loaded
    assert "input_pipeline" not in rules_found(run(tmp_path, steps(step(40))))
    assert "input_pipeline" in rules_found(run(tmp_path, steps(step(40)),
                                               input_pipeline__min_share=0.03))
    none = run(tmp_path, steps(lambda at, _: [k("sgemm", at + 10, 500)]))
    assert ("input_pipeline", "the profile marks no data loading (no DataLoader or "
            "Dataloader slices)") in none.skipped


def test_synchronisations_and_who_called_them(tmp_path):
    def step(at, _):
        return [k("sgemm", at + 10, 300), x("train_step", at + 5, 900),
                x("aten::item", at + 400, 50), x("aten::_local_scalar_dense", at + 401, 48),
                x("cudaStreamSynchronize", at + 402, 46, cat="cuda_runtime"),
                k("relu", at + 460, 100)]
    (f,) = [f for f in run(tmp_path, steps(step)).findings if f.rule == "sync"]
    assert f.numbers["syncs_per_step"] == 1
    assert f.numbers["outermost"][0]["name"] == "aten::item"
    assert f.numbers["called_from"][0]["name"] == "train_step"
    assert f.time_lost_ns == 50_000  # the device idle 410-460 while the host waits
    assert "sync" not in rules_found(run(tmp_path, steps(step), sync__min_per_step=2))


def test_exposed_copies_over_a_hundredth_of_the_span(tmp_path):
    def step(copy_us):
        return lambda at, _: [k("sgemm", at + 10, 500),
                              k("Memcpy HtoD", at + 510, copy_us, cat="gpu_memcpy"),
                              k("relu", at + 600, 400)]
    assert "exposed_memcpy" in rules_found(run(tmp_path, steps(step(20))))  # 2 %
    assert "exposed_memcpy" not in rules_found(run(tmp_path, steps(step(5))))  # 0.5 %


def test_slow_iterations_over_1_2_times_the_median_warm_up_left_out(tmp_path):
    def step(at, n):
        return [k("sgemm", at + 10, 500)]
    slow = steps(step, n=4)
    slow[-2]["dur"] = 1300  # step 4: 1.3 x
    found = run(tmp_path, slow)
    (f,) = [f for f in found.findings if f.rule == "slow_iterations"]
    assert [s["iteration"] for s in f.numbers["slow"]] == [4]
    near = steps(step, n=4)
    near[-2]["dur"] = 1100
    assert "slow_iterations" not in rules_found(run(tmp_path, near))
    warm = steps(step, n=4)
    warm[0]["dur"] = 5000  # a slow first step is a warm-up, not a finding
    assert "slow_iterations" not in rules_found(run(tmp_path, warm))


def test_gc_pauses_over_a_millisecond(tmp_path):
    def step(gc_us):
        return lambda at, _: [k("sgemm", at + 10, 500), x("GC", at + 600, gc_us, tid=9)]
    assert "gc" in rules_found(run(tmp_path, steps(step(1500), step_us=3000)))
    assert "gc" not in rules_found(run(tmp_path, steps(step(500), step_us=3000)))
    found = run(tmp_path, steps(lambda at, _: [k("sgemm", at + 10, 500)]))
    assert ("gc", "no garbage-collection events in this profile") in found.skipped


def test_small_collectives_from_twenty_a_step(tmp_path):
    def step(n):
        return lambda at, _: [k("sgemm", at + 10, 100)] + [
            k("ncclKernel_AllReduce", at + 120 + 30 * i, 20, tid=8) for i in range(n)]
    assert "small_collectives" in rules_found(run(tmp_path, steps(step(25), step_us=2000)))
    assert "small_collectives" not in rules_found(run(tmp_path, steps(step(15),
                                                                      step_us=2000)))


def test_findings_are_sorted_by_time_lost_and_cluster_rules_skip_on_one_rank(tmp_path):
    def step(at, _):
        return [x("enumerate(DataLoader)#it", at, 300), k("sgemm", at + 310, 100),
                k("ncclKernel_AllReduce", at + 410, 50, tid=8)]
    found = run(tmp_path, steps(step))
    lost = [f.time_lost_ns for f in found.findings]
    assert lost == sorted(lost, reverse=True) and found.findings[0].rule == "input_pipeline"
    assert dict(found.skipped)["slow_rank"] == "one rank or device: no other to compare with"
    assert found.to_json()["version"] == 2


def test_settings_name_a_rule_and_one_of_its_thresholds():
    assert parse_overrides(["sync.min_per_step=3"]) == {"sync": {"min_per_step": 3.0}}
    for bad in ("sync=3", "nope.x=1", "sync.nope=1", "sync.min_per_step=abc",
                "sync.min_per_step=nan"):
        with pytest.raises(ProftuiError):
            parse_overrides([bad])
    assert len({r.id for r in RULES}) == len(RULES) >= 10


def test_an_input_copy_before_the_first_kernel_is_an_exposed_copy(tmp_path):
    """Outside the device window (which starts at the first compute, as msprof counts), yet
    the step waits for it."""
    def step(at, _):
        return [k("Memcpy HtoD", at + 10, 40, cat="gpu_memcpy"), k("sgemm", at + 60, 800)]
    (f,) = [f for f in run(tmp_path, steps(step)).findings if f.rule == "exposed_memcpy"]
    assert f.time_lost_ns == 40_000 and f.evidence[0].start_ns % (STEP_US * 1000) == 10_000
    # said as the breakdown's two parts: all of it in Prepare, none in Memcpy exposed
    assert f.numbers["before_device_window_ns_per_step"] == 40_000
    assert f.numbers["in_device_window_ns_per_step"] == 0
    assert "40 us a step before the first kernel (breakdown's Prepare)" in f.title


def test_evidence_names_its_step(tmp_path):
    def step(at, _):
        return [k("sgemm", at + 10, 300), x("aten::item", at + 400, 50),
                k("relu", at + 460, 100)]
    (f,) = [f for f in run(tmp_path, steps(step)).findings if f.rule == "sync"]
    assert sorted(e.iteration for e in f.evidence) == [2, 3, 4]  # step 1: warm-up


def test_evidence_is_in_the_step_whose_window_holds_it(tmp_path):
    """A step's kernel runs on past the next step's start (its device window reaches into
    the next step), and the next step loads its data then: that load is the next step's, as
    the ruler's #N says, not the one whose device work is still running."""
    def step(at, _):
        return [x("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", at + 10, 200),
                k("sgemm", at + 300, 800)]  # to at + 1100: 100 µs into the next step
    (f,) = [f for f in run(tmp_path, steps(step)).findings if f.rule == "input_pipeline"]
    got = sorted((e.start_ns // 1000 % 100_000, e.iteration) for e in f.evidence)
    assert got == [(1010, 2), (2010, 3), (3010, 4)]
