"""Following a folder a job writes: the completeness rules, the watcher (file events and
polling), opening only what is complete, and what appeared between two openings."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import orjson
import pytest

from proftui.core.analysis.growth import NewGroup, NewStep, Seen, appeared
from proftui.core.analysis.overview import read_overview
from proftui.core.load.loader import load_trace
from proftui.core.load.watch import CompleteFiles, ProfileWatcher, end_is_valid, open_complete
from proftui.core.ops.iterations import Iteration, Iterations

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "cluster_2rank"
SAMPLE_START_US = 1_767_268_800_000_000  # the sample's ranks start then (epoch µs)
HOLD_S = 0.05
# The watcher's test holds longer: under a loaded CI machine a write stalled for longer than
# the hold, at a point where the text happened to end with "}", was once said complete (the
# sets seen were 8, 9, 8, 17), the rule the production hold of POLL_S (1 s) stands on.
FOLLOW_HOLD_S = 0.25


def kineto_cycle(first_step: int, t0_us: int) -> bytes:
    """A Kineto cycle trace as tensorboard_trace_handler writes it: two ProfilerStep#N
    annotations on the CPU thread and a kernel each, 10 ms apart."""
    events = [{"ph": "M", "name": "process_name", "pid": 7, "tid": 0,
               "args": {"name": "python"}}]
    for k in range(2):
        ts = t0_us + k * 10_000
        events += [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{first_step + k}",
                    "pid": 7, "tid": 7, "ts": ts, "dur": 9_000},
                   {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
                    "ts": ts + 100, "dur": 5_000}]
    doc = {"schemaVersion": 1, "traceEvents": events, "traceName": "cycle"}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2)


def copy_fresh(src: Path, dst: Path, skip: str = "") -> None:
    """Copy a rank's folder as a job writes it: every file modified now (not the sample's
    times), but the files named `skip` (written later)."""
    shutil.copytree(src, dst, copy_function=shutil.copyfile,
                    ignore=lambda _d, names: [n for n in names if n == skip])


def polls(files: CompleteFiles, times: int = 3) -> frozenset[str]:
    """Look `times` times a hold apart; the last answer."""
    found = frozenset()
    for _ in range(times):
        found = files.poll()
        time.sleep(HOLD_S * 1.5)
    return found


def test_the_end_of_a_json_or_csv_says_whether_its_writer_is_done(tmp_path) -> None:
    whole = kineto_cycle(1, 1_000_000)
    cases = {"a.pt.trace.json": (whole, True),
             "b.pt.trace.json": (whole[:len(whole) // 2], False),
             "c.json": (b"[{\"ph\": \"X\"}]\n\n", True),
             "d.csv": (b"Step,Time\r\n1,2\r\n", True),
             "e.csv": (b"Step,Time\r\n1,2", False),
             "f.json": (b"", False),
             "g.json.gz": (b"\x1f\x8b partial", True)}  # gzip: its size alone says
    for name, (data, _) in cases.items():
        (tmp_path / name).write_bytes(data)
    assert {n: end_is_valid(str(tmp_path / n)) for n in cases} == {
        n: valid for n, (_, valid) in cases.items()}


def test_a_half_written_cycle_trace_is_never_complete_until_its_second_half(tmp_path) -> None:
    whole = kineto_cycle(1, 1_000_000)
    path = tmp_path / "host_1.1700000000001.pt.trace.json"
    path.write_bytes(whole[:len(whole) // 2])
    files = CompleteFiles(str(tmp_path), HOLD_S)
    assert polls(files, 4) == frozenset()  # its size holds, but its end is not done
    assert files.pending == [str(path)]
    with open(path, "ab") as f:
        f.write(whole[len(whole) // 2:])
    assert files.poll() == frozenset()  # it just changed: not held yet
    time.sleep(HOLD_S * 1.5)
    assert files.poll() == {str(path)}
    assert files.pending == []


def test_a_file_growing_between_polls_is_not_complete(tmp_path) -> None:
    path = tmp_path / "kernel_details.csv"
    files = CompleteFiles(str(tmp_path), HOLD_S)
    for row in range(4):  # each poll sees it longer, each time ending in a whole line
        with open(path, "ab") as f:
            f.write(b"Name,Duration(us)\n" if row == 0 else b"gemm,12\n")
        assert files.poll() == frozenset()
    assert files.poll() == frozenset()  # two looks alike, but not a hold apart
    time.sleep(HOLD_S * 1.5)
    assert files.poll() == {str(path)}


def test_a_torch_npu_rank_is_complete_once_its_profiler_info_is(tmp_path) -> None:
    copy_fresh(SAMPLE / "rank0_ascend_pt", tmp_path / "rank0_ascend_pt",
               skip="profiler_info_0.json")
    files = CompleteFiles(str(tmp_path), HOLD_S)
    assert polls(files) == frozenset()  # every file holds, but the rank is not written
    shutil.copyfile(SAMPLE / "rank0_ascend_pt" / "profiler_info_0.json",
                    tmp_path / "rank0_ascend_pt" / "profiler_info_0.json")
    found = polls(files)
    assert len(found) == 8 and all("rank0_ascend_pt" in p for p in found)


def test_files_finished_before_the_first_look_are_complete_at_once(tmp_path) -> None:
    shutil.copytree(SAMPLE / "rank0_ascend_pt", tmp_path / "rank0_ascend_pt")
    for path in (tmp_path / "rank0_ascend_pt").rglob("*"):
        os.utime(path, (1e9, 1e9))  # written in 2001
    files = CompleteFiles(str(tmp_path), 3600.0)  # no second look within the test
    assert len(files.poll()) == 8
    (tmp_path / "later.csv").write_bytes(b"Step,Time\n1,2\n")  # appears after the first look
    assert len(files.poll()) == 8


def test_opening_keeps_to_the_complete_files(tmp_path) -> None:
    (tmp_path / "w.1700000000001.pt.trace.json").write_bytes(kineto_cycle(1, 1_000_000))
    (tmp_path / "w.1700000000002.pt.trace.json").write_bytes(kineto_cycle(3, 1_020_000))
    first = str(tmp_path / "w.1700000000001.pt.trace.json")
    index = load_trace(str(tmp_path), keep=lambda p: p == first)
    assert [t["path"] for t in index.meta["profile"]["timelines"]] == [first]
    assert len(load_trace(str(tmp_path)).meta["profile"]["timelines"]) == 2


@pytest.mark.parametrize("polling", [False, True], ids=["events", "polling"])
def test_the_watcher_follows_ranks_and_cycles_and_never_reads_half(tmp_path,
                                                                   polling: bool) -> None:
    """Rank 0, then a cycle trace written in two halves with a pause, then rank 1: each
    change is said once complete, the half-written trace in none of them."""
    if not polling:
        pytest.importorskip("watchfiles")
    tmp_path = tmp_path / "job"  # (the test's cache folder is tmp_path/cache)
    tmp_path.mkdir()
    watcher = ProfileWatcher(str(tmp_path), FOLLOW_HOLD_S, polling=polling)
    assert (watcher.why_polling != "") is polling
    stop = threading.Event()
    seen: list[frozenset[str]] = []
    opened: list[list[str]] = []
    sizes: list[int] = []  # of the cycle trace, each time it was said complete

    def follow() -> None:
        for complete in watcher.changes(stop):
            seen.append(complete)
            sizes.extend(os.path.getsize(p) for p in complete if p.endswith(".pt.trace.json"))
            opened.append([t["path"] for t in open_complete(
                str(tmp_path), complete).meta["profile"]["timelines"]])

    thread = threading.Thread(target=follow)
    thread.start()
    try:
        copy_fresh(SAMPLE / "rank0_ascend_pt", tmp_path / "rank0_ascend_pt")
        _wait(lambda: len(seen) >= 1)
        cycle = tmp_path / "w.1700000000002.pt.trace.json"
        whole = kineto_cycle(1, SAMPLE_START_US + 60_000)  # a host's cycle, same job
        cycle.write_bytes(whole[:len(whole) // 3])
        time.sleep(FOLLOW_HOLD_S * 6)  # the pause: several looks at the half
        with open(cycle, "ab") as f:
            f.write(whole[len(whole) // 3:])
        _wait(lambda: any(str(cycle) in s for s in seen))
        copy_fresh(SAMPLE / "rank1_ascend_pt", tmp_path / "rank1_ascend_pt")
        _wait(lambda: any("rank1_ascend_pt" in p for p in seen[-1]))
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
    assert sizes == [len(whole)] * 2  # never its first third, nor a part of a write
    assert [len(s) for s in seen] == [8, 9, 17]
    trace_view = str(tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    assert opened[0] == [trace_view]
    assert sorted(opened[1]) == sorted([trace_view, str(cycle)])
    assert len(opened[2]) == 3


def _wait(done, limit_s: float = 10.0) -> None:
    until = time.monotonic() + limit_s
    while not done():
        assert time.monotonic() < until, "the watcher said nothing in time"
        time.sleep(0.01)


def test_a_rank_renamed_as_a_second_appears_is_not_new(tmp_path) -> None:
    """Discovery names a lone rank "" and "rank 0" once rank 1 is beside it: it is known by
    its files. Then rank 1 is new, with its median step; then a step of rank 0 is."""
    r0 = str(tmp_path / "rank0_ascend_pt" / "trace_view.json")
    r1 = str(tmp_path / "rank1_ascend_pt" / "trace_view.json")
    lone = {"root": str(tmp_path), "timelines": [{"path": r0, "group": ""}]}
    both = {"root": str(tmp_path), "timelines": [{"path": r0, "group": "rank 0"},
                                                  {"path": r1, "group": "rank 1"}]}

    def steps(group: str, n: int, dur_ns: int) -> list[Iteration]:
        return [Iteration(group, k, k * 100_000_000, k * 100_000_000 + dur_ns)
                for k in range(1, n + 1)]

    new, seen = appeared(Seen(), lone, Iterations("slices", steps("", 3, 10_000_000)))
    assert new == [NewGroup("", "rank0_ascend_pt", 3, 10_000_000)]
    new, seen = appeared(seen, both, Iterations("slices", steps("rank 0", 3, 10_000_000)
                                                + steps("rank 1", 4, 12_000_000)))
    assert new == [NewGroup("rank 1", "rank1_ascend_pt", 4, 12_000_000)]
    new, _ = appeared(seen, both, Iterations("slices", steps("rank 0", 4, 11_000_000)
                                             + steps("rank 1", 4, 12_000_000)))
    assert new == [NewStep("rank 0", 4, 11_000_000)]


def test_the_new_ranks_median_is_summarys(tmp_path) -> None:
    copy_fresh(SAMPLE / "rank0_ascend_pt", tmp_path / "rank0_ascend_pt")
    index = load_trace(str(tmp_path))
    _, _, found = read_overview(index)
    new, _ = appeared(Seen(), index.meta["profile"], found)
    from proftui.core.analysis.summary import summary_report

    groups = summary_report(index)["iterations"]["groups"]
    assert [(g.steps, g.median_step_ns) for g in new] == [
        (g["count"], g["median_ns"]) for g in groups]
