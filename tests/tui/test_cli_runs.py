"""A folder of several runs: every command refuses it with the list of runs and status 2,
--run N or the run's folder opens one; the app asks which one in a chooser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import OptionList
from tui_support import run_cli

from proftui.tui.app import ProftuiApp
from proftui.tui.screens.run_chooser import RunChooser

from helpers import slice_names

DAY1_NS = 1736408883_000_000_000  # 2025-01-09 07:48:03 UTC


def _torch_npu(folder: Path, rank: int, start_ns: int) -> None:
    """A torch_npu rank dir: profiler_info_N.json and a trace_view.json with one step."""
    out = folder / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    ts = f"{start_ns // 1000}.{start_ns % 1000:03d}"
    (out / "trace_view.json").write_text(json.dumps([
        {"ph": "X", "name": "ProfilerStep#1", "pid": 7, "tid": 7, "ts": ts, "dur": 100.0},
        {"ph": "X", "name": f"{folder.parent.name} rank {rank}", "pid": 7, "tid": 7,
         "ts": ts, "dur": 50.0}]))
    (folder / f"profiler_info_{rank}.json").write_text(json.dumps(
        {"end_info": {"collectionTimeEnd": start_ns + 10**9}, "rank_id": rank}))


@pytest.fixture
def two_jobs(tmp_path) -> Path:
    """job_a and job_b, ranks 0 and 1 each, captured at the same moment."""
    root = tmp_path / "runs"
    for job in ("job_a", "job_b"):
        for rank in (0, 1):
            _torch_npu(root / job / f"rank{rank}_ascend_pt", rank, DAY1_NS)
    return root


def test_info_refuses_several_runs_with_their_list(two_jobs, capsys) -> None:
    status, out, err = run_cli(capsys, "info", two_jobs)
    assert (status, out) == (2, "")
    assert err == (f"proftui: {two_jobs} holds 2 separate runs (rank 0 twice); pick one with "
                   "--run N, or open its folder.\n"
                   "  1  job_a/: rank 0, rank 1; captured 2025-01-09 07:48:03 UTC\n"
                   "  2  job_b/: rank 0, rank 1; captured 2025-01-09 07:48:03 UTC\n")


@pytest.mark.parametrize("command", [["summary"], ["ops"], ["iterations"], ["index"],
                                     ["export", "--all"], ["info", "--json"]])
def test_every_command_refuses_several_runs(two_jobs, capsys, command) -> None:
    status, out, err = run_cli(capsys, *command, two_jobs)
    assert (status, out) == (2, "")
    assert err.splitlines()[0].endswith("holds 2 separate runs (rank 0 twice); pick one with "
                                        "--run N, or open its folder.")
    assert len(err.splitlines()) == 3


def test_run_2_opens_only_the_second_runs_ranks(two_jobs, capsys) -> None:
    status, out, _ = run_cli(capsys, "info", "--json", "--run", "2", two_jobs)
    assert status == 0
    data = json.loads(out)
    assert data["profile"]["groups"] == ["rank 0", "rank 1"]
    assert [Path(s["path"]).relative_to(two_jobs).parts[:2] for s in data["sources"]] == [
        ("job_b", "rank0_ascend_pt"), ("job_b", "rank1_ascend_pt")]
    assert [p["group"] for p in data["processes"]] == ["rank 0", "rank 1"]
    status, out, _ = run_cli(capsys, "info", "--run", "2", two_jobs)
    assert "run        2 of 2: job_b/\n" in out
    # The run's folder opens the same timelines.
    status, alone, _ = run_cli(capsys, "info", "--json", two_jobs / "job_b")
    assert status == 0
    assert [s["path"] for s in json.loads(alone)["sources"]] == [s["path"]
                                                                 for s in data["sources"]]
    status, out, _ = run_cli(capsys, "ops", "--json", "--run", "1", two_jobs)
    assert status == 0
    assert sorted(r["name"] for r in json.loads(out)["rows"]) == [  # steps mark, no ops
        "job_a rank 0", "job_a rank 1"]


def test_a_run_that_is_not_there_is_one_sentence(two_jobs, capsys) -> None:
    status, out, err = run_cli(capsys, "summary", "--run", "3", two_jobs)
    assert (status, out) == (2, "")
    assert err == f"proftui: {two_jobs} holds 2 runs (1 to 2); there is no run 3.\n"
    status, _, err = run_cli(capsys, "info", "--run", "0", two_jobs)
    assert status == 2
    assert err == ("proftui info: argument --run: a run number is 1 or more, not '0' "
                   "(see proftui info --help)\n")


def test_info_says_when_one_capture_mixes_clocks(tmp_path, capsys) -> None:
    run = tmp_path / "rank0_ascend_pt"
    _torch_npu(run, 0, DAY1_NS)
    (run / "extra").mkdir()
    (run / "extra" / "worker.pt.trace.json").write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "zero-based", "pid": 1, "tid": 1, "ts": 40, "dur": 5}]}))
    status, out, _ = run_cli(capsys, "info", run)
    assert status == 0
    assert "  clock    own clock (zero-based or monotonic), not the others' wall clock\n" in out
    assert ("           1  a timeline on its own clock (zero-based or monotonic) shares the "
            "axis with timelines on the wall clock: their times do not line up: "
            "worker.pt.trace.json: own clock beside 1 on the wall clock\n") in out


async def test_the_app_asks_which_run_and_opens_the_chosen_one(two_jobs) -> None:
    app = ProftuiApp(str(two_jobs))
    async with app.run_test(size=(120, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, RunChooser) and app.index is None
        options = app.screen.query_one(OptionList)
        assert [str(options.get_option_at_index(i).prompt) for i in range(2)] == [
            "  1  job_a/: rank 0, rank 1; captured 2025-01-09 07:48:03 UTC",
            "  2  job_b/: rank 0, rank 1; captured 2025-01-09 07:48:03 UTC"]
        await pilot.press("down", "enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, RunChooser)
        assert app.run_number == 2 and app.index is not None
        names = sorted(slice_names(app.index))
        assert names == ["ProfilerStep#1", "ProfilerStep#1", "job_b rank 0", "job_b rank 1"]
        assert app.index.meta["profile"]["groups"] == ["rank 0", "rank 1"]


async def test_the_chooser_quits_on_escape(two_jobs) -> None:
    app = ProftuiApp(str(two_jobs))
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, RunChooser)
        await pilot.press("escape")
        await pilot.pause()
        assert app.index is None and app.run_number is None
        assert app._exit  # the app is on its way out, nothing was opened
