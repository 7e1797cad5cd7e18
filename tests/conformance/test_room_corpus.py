"""Conformance: at 80x24 the timeline's first screen shows at least 8 track rows (all of them
where there are fewer) on the real captures of ../shared/corpus: torch_npu_2rank/text_level1
(two ranks), kineto/*.json.gz and ascend/* (a folder without a timeline, tables only, is left
out: it has no track rows).

Runs only where the corpus exists."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tui"))

FOLDERS = ["torch_npu_2rank/text_level1", "kineto/*.json.gz", "ascend/*"]
TABLES_ONLY = {"torch_npu_rank_0"}  # an ASCEND_PROFILER_OUTPUT of CSV and JSON summaries
PATHS = sorted(p for pattern in FOLDERS for p in CORPUS.glob(pattern)) \
    if CORPUS.is_dir() else []


@pytest.mark.parametrize("path", PATHS, ids=lambda p: str(p.relative_to(CORPUS)))
async def test_eight_track_rows_at_80x24(path: Path, tmp_path, monkeypatch) -> None:
    from tui_support import first_screen_rows

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    shown, total = await first_screen_rows(path, (80, 24))
    if path.name in TABLES_ONLY:
        assert total == 0
        return
    assert shown >= min(8, total) and total > 0, f"{path}: {shown} of {total} track rows"
