"""Following a folder being written: the app grows from one rank to two with the view kept,
and `proftui summary DIR --watch` prints the new rank's line, then exits on Ctrl-C."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from textual.widgets import Footer, TabbedContent
from tui_support import run_cli

from proftui.core.query.same_slice import SliceKey
from proftui.tui.app import ProftuiApp
from proftui.tui.app.following import FollowOptions
from proftui.tui.widgets.timeline import Timeline

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "cluster_2rank"


def copy_rank(rank: int, job: Path) -> None:
    """A rank's folder written now (fresh file times, as the job writes it)."""
    shutil.copytree(SAMPLE / f"rank{rank}_ascend_pt", job / f"rank{rank}_ascend_pt",
                    copy_function=shutil.copyfile)


async def _until(pilot, done, limit_s: float = 20.0) -> None:
    until = time.monotonic() + limit_s
    while not done():
        assert time.monotonic() < until, "the app did not get there in time"
        await pilot.pause(0.02)


async def test_the_app_grows_from_one_rank_to_two_keeping_the_selection(tmp_path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    copy_rank(0, job)
    app = ProftuiApp(str(job), follow=FollowOptions(interval_s=0.05, polling=True))
    said: list[str] = []  # every status line (a copy that spans two polls reloads twice:
    status = app._status  # the second says only "files completed")

    def _status(text: str, *args, **kwargs) -> None:
        said.append(text)
        status(text, *args, **kwargs)

    app._status = _status  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.index is not None and app.iterations)
        timeline = app.query_one(Timeline)
        assert app.index.meta["profile"]["groups"] == [""]
        chosen = len(app.index.arrays["slices.start"]) // 2
        timeline.select(chosen)
        await pilot.press("w", "w")  # zoomed in: a window of its own, not the whole trace
        key = SliceKey.of(app.index, chosen)
        window = (timeline.view_start, timeline.view_end)
        await pilot.press("4")  # the Iterations pane
        copy_rank(1, job)
        await _until(pilot, lambda: app.following.reloads >= 1
                     and app.index.meta["profile"]["groups"] == ["rank 0", "rank 1"])
        await _until(pilot, lambda: "2 ranks" in str(app.query_one("#cluster-title").render()))
        assert {it.group for it in app.iterations} == {"rank 0", "rank 1"}
        assert SliceKey.of(app.index, timeline.selected) == key  # numbered afresh, found again
        assert (timeline.view_start, timeline.view_end) == window
        assert window[1] - window[0] < (app.index.end_ns - app.index.start_ns) / 2
        assert app.query_one(TabbedContent).active == "pane-iterations"
        assert any("new rank 1" in text for text in said)


async def test_following_an_empty_folder_turns_the_collector_on(tmp_path) -> None:
    """`proftui DIR --watch` starts with the collector off (see cli.main) and may wait long for
    a complete file: the app turns it on as it starts following, not at a first frame; the
    tabs and the footer's keys are there meanwhile."""
    gc.disable()
    try:
        app = ProftuiApp(str(tmp_path), follow=FollowOptions(interval_s=0.05, polling=True))
        async with app.run_test(size=(120, 40)) as pilot:
            await _until(pilot, lambda: "waiting for a complete file" in app._status_text)
            await _until(pilot, lambda: bool(app.query(Footer)))
            assert app.index is None and gc.isenabled()
            assert app.query(TabbedContent)
    finally:
        gc.enable()


def test_summary_watch_prints_the_new_ranks_line_and_stops_on_ctrl_c(tmp_path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    copy_rank(0, job)
    env = dict(os.environ)  # proftui imported as the tests import it (installed, PYTHONPATH)
    proc = subprocess.Popen(
        [sys.executable, "-m", "proftui", "summary", str(job), "--watch", "--poll",
         "--interval", "0.05"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env)
    try:
        first = proc.stdout.readline()
        copy_rank(1, job)
        second = proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert first == "+ rank0_ascend_pt: 4 steps, median step 10.962 ms\n"
    assert second == "+ rank 1: 4 steps, median step 10.944 ms\n"
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "Ctrl-C stops" in err


def test_watch_wants_a_folder(tmp_path, capsys) -> None:
    trace = tmp_path / "one.json"
    trace.write_text("[]")
    code, _, err = run_cli(capsys, "summary", trace, "--watch")
    assert code == 2
    assert "--watch follows a folder a job writes into; this is not a folder." in err
