"""While a folder of several ranks indexes, the loading screen has a line per rank being read
(which rank, a bar, its bytes, read or from the cache) and a count of those done; at 80
columns, many ranks are the ones being read and a count."""

from __future__ import annotations

import json

from textual.widgets import Static
from tui_support import settle

from proftui.core.load import progress
from proftui.core.load.progress import CACHED, READ, READING, WAITING, FileStatus
from proftui.tui.app import ProftuiApp
from proftui.tui.app.loading import Loading
from proftui.tui.text.ranks_progress import rank_lines, ranks_count


def _ranks(folder, n: int):
    """`n` Kineto ranks (rank-N.pt.trace.json with its distributedInfo), of a few slices."""
    folder.mkdir()
    for rank in range(n):
        events = [{"ph": "X", "name": f"op{i}", "cat": "cpu_op", "pid": 1, "tid": 7,
                   "ts": 1_700_000_000_000_000 + 20 * i, "dur": 15} for i in range(200)]
        (folder / f"rank-{rank}.pt.trace.json").write_text(json.dumps(
            {"schemaVersion": 1, "distributedInfo": {"rank": rank}, "traceEvents": events}))
    return folder


def _files(n_read: int, n_cached: int, n_reading: int, n_waiting: int
           ) -> tuple[FileStatus, ...]:
    states = [READ] * n_read + [CACHED] * n_cached + [READING] * n_reading + [WAITING] * n_waiting
    return tuple(FileStatus(k, f"rank {k}", 40_000_000,
                            {READ: 40_000_000, CACHED: 40_000_000, READING: 10_000_000}.get(s, 0),
                            s) for k, s in enumerate(states))


def test_every_rank_has_its_line_when_they_fit() -> None:
    lines = rank_lines(_files(1, 1, 1, 0), width=78, room=8)
    assert lines == [
        "rank 0   ████████████████████ 100% 40 MB of 40 MB  read",
        "rank 1   ████████████████████ 100% 40 MB of 40 MB  from the cache",
        "rank 2   █████░░░░░░░░░░░░░░░  25% 10 MB of 40 MB  reading",
        "2 of 3 ranks done (1 from the cache), 1 reading, 0 waiting"]


def test_many_ranks_at_80_columns_are_those_being_read_and_a_count() -> None:
    files = _files(40, 16, 3, 5)
    lines = rank_lines(files, width=78, room=5)
    assert [line.split()[1] for line in lines[:3]] == ["56", "57", "58"]  # the ones reading
    assert lines[-1] == "56 of 64 ranks done (16 from the cache), 3 reading, 5 waiting"
    assert all(len(line) <= 78 for line in lines)
    assert len(rank_lines(_files(0, 0, 9, 0), width=78, room=5)) == 5  # the first 4 and the count
    assert ranks_count(_files(2, 0, 0, 1)) == "2 of 3 ranks done"


async def test_the_loading_screen_shows_each_rank_then_makes_way(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(progress, "REPORT_EVERY_S", 0.0)  # every change said
    folder = _ranks(tmp_path / "ranks", 5)
    shown: list[str] = []
    real = Loading.update_ranks

    def spy(self, files) -> None:
        real(self, files)
        ranks = self.app.query_one("#ranks", Static)
        if ranks.has_class("shown"):
            shown.append(str(ranks.render()))

    monkeypatch.setattr(Loading, "update_ranks", spy)
    app = ProftuiApp(str(folder))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert app.index is not None
        assert not app.query_one("#ranks", Static).has_class("shown")  # gone once open
    assert shown, "no rank line was shown while the folder indexed"
    first, last = shown[0].splitlines(), shown[-1].splitlines()
    assert first[0].startswith("rank-0") and first[0].endswith("reading")
    assert first[-1] == "0 of 5 ranks done, 1 reading, 4 waiting"
    assert [line.split()[0] for line in last[:5]] == [f"rank-{k}" for k in range(5)]
    assert last[-1] == "5 of 5 ranks done, 0 reading, 0 waiting"

    # Opened again without the profile's whole entry: every rank from its own.
    from proftui.core.cache import indexes as cache

    monkeypatch.setattr(cache, "load", lambda *a, **k: (_ for _ in ()).throw(cache.CacheMiss()))
    shown.clear()
    app = ProftuiApp(str(folder))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
    assert shown[-1].splitlines()[-1] == (
        "5 of 5 ranks done (5 from the cache), 0 reading, 0 waiting")
    assert shown[-1].splitlines()[0].endswith("from the cache")
