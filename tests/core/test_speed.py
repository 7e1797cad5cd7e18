"""Speed in the users' words: steps a second from the median step, samples a second from the
batch size, and the data loading's share of the steps (Paddle's Reader Ratio)."""

from __future__ import annotations

from pathlib import Path

from proftui.core.analysis.speed import reader_ratio, speed, speed_text, steps_per_s
from proftui.core.analysis.summary import summary_report

from helpers import load, write_trace, x

MS = 1_000  # µs per ms: the trace is written in µs


def _steps(loading_ms: list[int | None], step_ms: list[int]) -> list[dict]:
    """ProfilerStep#N of `step_ms` one after another, each opening with a DataLoader slice of
    `loading_ms` (None: none), and a kernel on the device."""
    events, at = [], 0
    for n, (loading, step) in enumerate(zip(loading_ms, step_ms), 1):
        events.append(x(f"ProfilerStep#{n}", at * MS, step * MS, cat="user_annotation"))
        if loading is not None:
            events.append(x("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                            at * MS, loading * MS, cat="user_annotation"))
        events.append(x("gemm", (at + step - 5) * MS, 4 * MS, pid=0, tid=7, cat="kernel"))
        at += step
    return events


def test_steps_and_samples_a_second_and_the_reader_ratio(tmp_path: Path) -> None:
    steps = _steps([90, 20, 30, 10], [400, 100, 100, 300])  # the first: warm-up, left out
    index = load(write_trace(tmp_path / "t.json", steps))
    group = summary_report(index, batch_size=8)["iterations"]["groups"][0]
    assert group["warmup"] == [1] and group["median_ns"] == 100_000_000
    assert group["steps_per_s"] == 10.0 and group["samples_per_s"] == 80.0
    assert group["batch_size"] == 8
    assert abs(group["reader_ratio"] - 60 / 500) < 1e-12  # summed loading over summed steps
    assert speed_text(group) == "10 steps/s, 80 samples/s (batch 8), data loading 12.0 %"


def test_without_a_batch_size_or_data_loading_nothing_is_made_up(tmp_path: Path) -> None:
    index = load(write_trace(tmp_path / "t.json", _steps([None, None], [50, 50])))
    group = summary_report(index)["iterations"]["groups"][0]
    assert group["steps_per_s"] == 20.0
    assert group["samples_per_s"] is None and group["reader_ratio"] is None
    assert speed_text(group) == "20 steps/s"


def test_the_figures_alone() -> None:
    assert steps_per_s(None) is None and steps_per_s(0) is None
    assert steps_per_s(4_000_000) == 250.0
    assert speed(None, (), 32) == {"steps_per_s": None, "samples_per_s": None,
                                   "batch_size": 32, "reader_ratio": None}
    assert reader_ratio(()) is None
    assert speed_text({"steps_per_s": 12_345.6}) == "12,300 steps/s"
