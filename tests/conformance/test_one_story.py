"""One story on every screen: where two commands print the same thing, they print the same
number. Every command runs over the bundled samples and the named corpus folders (those run
only where ../shared/corpus exists), and the numbers they share are compared.

What is compared, and where it comes from:
- each step's start and length: `iterations` against `breakdown`;
- the median step: `info` against `summary`;
- the top device op types' time: `summary` against `ops --by type --side device`;
- the advisor's evidence: in the step `iterations` says holds its start (the latest-starting
  step whose window holds it);
- each rank's steps and median step: `cluster` against `iterations` and `summary`.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from proftui.core.model.stats import median_ns
from proftui.core.ops.iterations import warmup
from proftui.tui.cli import main

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
SAMPLES = ["kineto_demo.pt.trace.json", "diff_before.pt.trace.json", "torch_npu",
           "ascend_cann8", "ascend_old_layout", "cluster_2rank"]
CORPUS_PATHS = ["kineto/resnet50_num_workers_0.pt.trace.json.gz",
                "kineto/step_based_trace_2543932.json.gz", "torch_npu_2rank/text_level1",
                "torch_npu_2rank/db_level1", "ascend/torch_npu_rank_0",
                "ascend/PROF_000001_20230818142704322_COJGGGCANRMICFBC"]
INPUTS = [pytest.param(ROOT / "samples" / s, id=s) for s in SAMPLES] + [
    pytest.param(CORPUS / c, id=c, marks=pytest.mark.skipif(
        not CORPUS.is_dir(), reason="../shared/corpus not present")) for c in CORPUS_PATHS]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the module: each input is indexed once for all its commands."""
    return tmp_path_factory.mktemp("one-story-cache")


def _json(cache: Path, *argv: str | Path) -> dict:
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(io.StringIO()):
        mp.setenv("PROFTUI_CACHE_DIR", str(cache))
        status = main([str(a) for a in argv] + ["--json"])
    assert status == 0, argv
    return json.loads(out.getvalue())


@pytest.mark.parametrize("path", INPUTS)
def test_the_commands_agree(path: Path, cache: Path) -> None:
    steps = _json(cache, "iterations", path)["iterations"]
    _steps_and_breakdown(steps, _json(cache, "breakdown", path))
    summary = _json(cache, "summary", path)
    _medians(_json(cache, "info", path), summary)
    _top_types(summary, _json(cache, "ops", path, "--by", "type", "--side", "device"))
    _evidence(steps, _json(cache, "advise", path))
    groups = {s["group"] for s in steps}
    if len(groups) > 1:
        _cluster(steps, _json(cache, "cluster", path), summary)


def _timed(steps: list[dict]) -> dict[tuple[str, int], dict]:
    return {(s["group"], s["iteration"]): s for s in steps if s["dur_ns"] is not None}


def _steps_and_breakdown(steps: list[dict], found: dict) -> None:
    timed = _timed(steps)
    for b in found["iterations"]:
        step = timed.get((b["group"], b["iteration"]))
        if step is not None:
            assert (b["start_ns"], b["step_ns"]) == (step["start_ns"], step["dur_ns"]), b
    assert {(b["group"], b["iteration"]) for b in found["iterations"]} >= set(timed)


def _medians(info: dict, summary: dict) -> None:
    groups = summary["iterations"]["groups"] if summary["iterations"] else []
    if len(groups) != 1 or "median_ns" not in groups[0]:
        return
    items = info["iterations"]["items"]
    timed = [s["dur_ns"] for s in items if s["dur_ns"] is not None]
    if len(timed) == groups[0]["count"]:  # every step timed: the same steps, warm-up out
        assert median_ns(timed[warmup(len(timed)):]) == groups[0]["median_ns"]


def _top_types(summary: dict, ops: dict) -> None:
    top = summary["top_device_types"]
    if not top or top.get("table") or top["ranked_by"] != "total":
        return  # from a summary table, not the timeline: another source
    totals = {r["type"]: r["total_ns"] for r in ops["rows"]}
    for row in top["rows"]:
        assert totals[row["name"]] == row["time_ns"], row["name"]


def _evidence(steps: list[dict], advice: dict) -> None:
    timed = _timed(steps)
    for finding in advice["findings"]:
        for ev in finding["evidence"]:
            mine = [s for s in timed.values() if s["group"] == ev["group"]
                    and s["start_ns"] <= ev["start_ns"] < s["end_ns"]]
            holder = max(mine, key=lambda s: s["start_ns"], default=None)
            if ev["iteration"] is not None and holder is not None:
                assert ev["iteration"] == holder["iteration"], (finding["rule"], ev)


def _cluster(steps: list[dict], found: dict, summary: dict) -> None:
    timed = _timed(steps)
    medians = {g["group"]: g.get("median_ns") for g in summary["iterations"]["groups"]}
    for rank in found["ranks"]:
        for step in rank["steps"]:
            mine = timed.get((rank["group"], step["iteration"]))
            if mine is not None:
                assert step["step_ns"] == mine["dur_ns"], (rank["group"], step)
        if all(s["step_ns"] is not None for s in rank["steps"]):  # the same steps counted
            assert rank["median"]["step_ns"] == medians[rank["group"]], rank["group"]
