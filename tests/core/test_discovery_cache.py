"""The cached discovery of a folder: reused while nothing it looked at changed, redone when a
file is touched, added or removed, several runs still split, a damaged entry ignored."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_runs import DAY1_NS, torch_npu

from proftui.core.cache import discovery as discovery_cache
from proftui.core.cache import entries as cache_entries
from proftui.core.discover import clock, profile, runs
from proftui.core.discover.runs import SeveralRunsError
from proftui.core.load import loader as load
from proftui.core.load.loader import check_openable, load_trace

from helpers import kineto_rank_file, kineto_ranks

START_US = DAY1_NS // 1000


def kineto_events(rank: int, events: int = 2) -> list[dict]:
    """A rank's slices (sizes differ by `events`: no twins to hash)."""
    return [{"ph": "X", "name": f"r{rank}.{n}", "pid": rank, "tid": 1,
             "ts": START_US + 10 * n, "dur": 5} for n in range(events)]


def kineto_rank(folder: Path, rank: int, events: int = 2) -> Path:
    """A Kineto trace of one rank."""
    return kineto_rank_file(folder, rank, kineto_events(rank, events))


@pytest.fixture
def ranks(tmp_path) -> Path:
    return kineto_ranks(tmp_path / "ranks", lambda rank: kineto_events(rank, 2 + rank))


@pytest.fixture
def discoveries(monkeypatch) -> list[str]:
    """The paths discovered (runs.open_run's discover) from now on."""
    seen: list[str] = []
    real = runs.discover

    def counted(path, keep=None):
        seen.append(path)
        return real(path, keep)

    monkeypatch.setattr(runs, "discover", counted)
    return seen


def _groups(index) -> list[str]:
    return index.meta["profile"]["groups"]


def _fail(*_args, **_kwargs):
    raise AssertionError("a rank file's head was read")


def test_a_reopen_with_nothing_changed_reads_no_heads(ranks, monkeypatch, cache_dir) -> None:
    first = load_trace(str(ranks))
    assert not first.meta.get("from_cache")
    for module, name in ((profile, "_digest"), (profile, "_looks_like_trace"),
                         (profile, "_unreadable"), (profile, "discover"),
                         (runs, "discover"), (runs, "_first_ns"), (runs, "_info_times"),
                         (clock, "_head"), (load, "discover"), (load, "offset_for")):
        monkeypatch.setattr(module, name, _fail)
    check_openable(str(ranks))  # known to hold something to open: not discovered again
    again = load_trace(str(ranks))
    assert again.meta["from_cache"]
    assert again.meta["profile"] == first.meta["profile"]
    assert _groups(again) == ["rank-0", "rank-1", "rank-2"]
    kinds = [cache_entries.describe(e, 0, "").kind for e in cache_entries.entries(cache_dir)]
    # listed by `proftui cache`, under its cap (each rank file has its entry too)
    assert sorted(kinds) == ["index", "layout", "rank", "rank", "rank"]


@pytest.mark.parametrize("change", ["touched", "added", "removed", "replaced"])
def test_a_changed_rank_file_redoes_discovery(ranks, discoveries, change) -> None:
    load_trace(str(ranks))
    assert load_trace(str(ranks)).meta["from_cache"] and len(discoveries) == 1
    expected = ["rank-0", "rank-1", "rank-2"]
    if change == "touched":
        os.utime(ranks / "rank-1.pt.trace.json", ns=(DAY1_NS, DAY1_NS))
    elif change == "added":
        kineto_rank(ranks, 3, events=7)
        expected.append("rank-3")
    elif change == "removed":
        (ranks / "rank-2.pt.trace.json").unlink()
        expected.remove("rank-2")
    else:  # the same size and time stamps, other content: its inode and ctime tell
        path = ranks / "rank-0.pt.trace.json"
        st = path.stat()
        text = path.read_text().replace('"r0.0"', '"r0.X"')
        path.unlink()
        path.write_text(text)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    index = load_trace(str(ranks))
    assert len(discoveries) == 2
    assert _groups(index) == expected
    assert not index.meta.get("from_cache")  # the index of other files is another entry too
    load_trace(str(ranks))
    assert len(discoveries) == 2  # the new discovery is cached in turn


def test_several_runs_still_split_from_the_cache(tmp_path, discoveries) -> None:
    for job in ("job_a", "job_b"):
        for rank in (0, 1):
            torch_npu(tmp_path / "jobs" / job / f"rank{rank}_ascend_pt", rank, DAY1_NS)
    folder = str(tmp_path / "jobs")
    lines = []
    for _ in range(2):
        with pytest.raises(SeveralRunsError) as caught:
            load_trace(folder)
        lines.append((str(caught.value), caught.value.lines(), caught.value.reasons))
        check_openable(folder)
    with pytest.raises(SeveralRunsError) as caught:
        load_trace(folder + "/")  # the same folder: said by the path as it is given now
    assert str(caught.value).startswith(f"{folder}/ holds 2 separate runs (rank 0 twice);")
    assert len(discoveries) == 1
    assert lines[0] == lines[1]
    assert lines[0][1] == ["  1  job_a/: rank 0, rank 1; captured 2025-01-09 07:48:02 UTC",
                           "  2  job_b/: rank 0, rank 1; captured 2025-01-09 07:48:02 UTC"]
    opened = [load_trace(folder, run=2) for _ in range(2)]
    assert opened[1].meta["from_cache"]
    assert opened[0].meta["profile"] == opened[1].meta["profile"]
    assert opened[1].meta["profile"]["run"]["where"] == "job_b/"
    assert [Path(t["path"]).parts[-4] for t in opened[1].meta["profile"]["timelines"]] == [
        "job_b", "job_b"]
    assert len(discoveries) == 3  # run 2 once: the folder, then its run narrowed


@pytest.mark.parametrize("damage", ["flipped", "cut", "emptied"])
def test_a_damaged_entry_is_ignored_and_replaced(ranks, discoveries, damage) -> None:
    first = load_trace(str(ranks))
    fingerprint = discovery_cache.Fingerprint.of(str(ranks))
    entry = discovery_cache.entry_path(fingerprint.root, None)
    data = bytearray(entry.read_bytes())
    if damage == "flipped":
        at = data.index(b"rank-1")
        data[at + 5] ^= 0x04  # rank-1 -> rank-5 in the header: its checksum no longer holds
    entry.write_bytes({"flipped": bytes(data), "cut": bytes(data[:len(data) // 2]),
                       "emptied": b""}[damage])
    assert discovery_cache.load(fingerprint, None, str(ranks)) is None
    again = load_trace(str(ranks))
    assert len(discoveries) == 2
    assert again.meta["profile"] == first.meta["profile"]
    assert discovery_cache.load(fingerprint, None, str(ranks)) is not None  # stored afresh


def test_table_and_comm_take_an_opened_folder_from_the_discovery_cache(ranks, discoveries,
                                                                        capsys) -> None:
    from proftui.core.load.comm_sources import profile_entries
    from proftui.tui.cli import main

    load_trace(str(ranks))
    assert discoveries == [str(ranks)]
    assert main(["table", str(ranks)]) == 0
    assert profile_entries(str(ranks)) == []
    assert discoveries == [str(ranks)]  # neither walked the folder again
    assert main(["table", "--no-cache", str(ranks)]) == 0
    assert discoveries == [str(ranks)] * 2
    capsys.readouterr()
