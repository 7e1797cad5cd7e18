"""`proftui cache`: the entries listed with sizes, last use and sources (whether they still
exist), as text and JSON; `cache clear` removes only what proftui wrote."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from proftui.core.cache.entries import fmt_bytes
from proftui.tui.cli import main

EVENTS = [{"ph": "X", "name": f"op{i % 3}", "pid": 1, "tid": 1, "ts": i * 10, "dur": 5}
          for i in range(50)]
CSV = "Step Id,Name,Duration(us)\n1,add_1,5.5\n1,matmul_1,100.25\n"


def _trace(tmp_path: Path, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": EVENTS}))
    return path


def _listing(capsys) -> dict:
    assert main(["cache", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_an_empty_cache(tmp_path, cache_dir, capsys) -> None:
    assert main(["cache"]) == 0
    assert capsys.readouterr().out == (f"0 entries, 0 B of 10 GiB (PROFTUI_CACHE_MAX) in "
                                       f"{cache_dir}\n")
    found = _listing(capsys)
    assert found == {"directory": str(cache_dir), "max_bytes": 10 << 30, "total_bytes": 0,
                     "entries": [], "warnings": []}


def test_entries_with_their_sizes_sources_and_last_use(tmp_path, cache_dir, capsys,
                                                       monkeypatch) -> None:
    from proftui.core import load_trace
    from proftui.core.cache.tables import read_table
    from proftui.core.query.rows import rows_for

    kept, gone = _trace(tmp_path, "kept.json"), _trace(tmp_path, "gone.json")
    table = tmp_path / "kernel_details.csv"
    table.write_text(CSV)
    time.sleep(0.05)  # a CSV written moments ago is not cached
    rows_for(load_trace(str(kept)))
    load_trace(str(gone))
    read_table(str(table))
    gone.unlink()
    monkeypatch.setenv("PROFTUI_CACHE_MAX", "2G")
    found = _listing(capsys)
    entries = {Path(e["sources"][0]["path"]).name: e for e in found["entries"]}
    assert set(entries) == {"kept.json", "gone.json", "kernel_details.csv"}
    assert found["max_bytes"] == 2 << 30
    sizes = {p.name: p.stat().st_size for p in cache_dir.iterdir()}
    assert found["total_bytes"] == sum(sizes.values())
    kept_entry = entries["kept.json"]
    assert kept_entry["kind"] == "index" and len(kept_entry["files"]) == 2  # with its rows
    assert kept_entry["size_bytes"] == sum(sizes[Path(f).name] for f in kept_entry["files"])
    assert kept_entry["sources"] == [{"path": str(kept.resolve()), "exists": True}]
    assert entries["gone.json"]["sources"][0]["exists"] is False
    assert entries["kernel_details.csv"]["kind"] == "table"
    assert all(abs(e["last_used_ns"] - time.time_ns()) < 60e9 for e in found["entries"])
    assert all(e["problem"] is None for e in found["entries"])
    assert found["entries"][0]["sources"][0]["path"].endswith("kernel_details.csv")  # newest
    assert main(["cache"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("3 entries, ") and " of 2 GiB (PROFTUI_CACHE_MAX) in " in text
    assert f"{gone.resolve()} (gone)" in text and "table" in text and "index" in text


def test_clear_removes_only_proftuis_files(tmp_path, cache_dir, capsys) -> None:
    from proftui.core import load_trace

    load_trace(str(_trace(tmp_path)))
    size = sum(p.stat().st_size for p in cache_dir.iterdir())
    mine = cache_dir / "notes.txt"
    mine.write_text("keep me")
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == (f"removed 1 file ({fmt_bytes(size)}) from "
                                       f"{cache_dir}\n")
    assert [p.name for p in cache_dir.iterdir()] == ["notes.txt"]
    assert main(["cache", "clear", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"directory": str(cache_dir),
                                                   "removed_files": 0, "freed_bytes": 0,
                                                   "warnings": []}


def test_a_cap_that_is_not_a_size(tmp_path, cache_dir, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PROFTUI_CACHE_MAX", "plenty")
    assert main(["cache"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == ("proftui: PROFTUI_CACHE_MAX='plenty' is not a size (for "
                                 "example 10G, 500M or a number of bytes).\n")


def test_bad_arguments(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["cache", "empty"])
    assert exited.value.code == 2 and "invalid choice: 'empty'" in capsys.readouterr().err
    assert os.environ["PROFTUI_CACHE_DIR"]  # the tests' own cache, never the user's


def test_no_cache_leaves_the_cache_alone(tmp_path, cache_dir, capsys) -> None:
    """--no-cache reads the summary tables afresh too, and writes nothing."""
    root = Path(__file__).resolve().parents[2] / "samples" / "torch_npu"
    assert main(["table", str(root), "op_statistic", "--no-cache", "--json"]) == 0
    assert main(["info", str(root), "--no-cache", "--json"]) == 0
    assert not cache_dir.exists()
    capsys.readouterr()
    assert main(["table", str(root), "op_statistic", "--json"]) == 0
    first = capsys.readouterr().out
    assert [p.suffix for p in cache_dir.iterdir()] == [".tbl"]
    assert main(["table", str(root), "op_statistic", "--json"]) == 0  # from the cache
    assert capsys.readouterr().out == first
