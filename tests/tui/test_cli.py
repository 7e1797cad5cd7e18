"""The command line: info (text and JSON), index, exit statuses and error sentences."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from proftui.tui.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kineto_demo.pt.trace.json"

TRACE = {"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "trainer\x1b[31m"}},
    {"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "main"}},
    {"ph": "X", "name": "step", "pid": 7, "tid": 1, "ts": 10, "dur": 5},
    {"ph": "X", "name": "op", "pid": 7, "tid": 1, "ts": 11, "dur": 2},
    {"ph": "E", "pid": 7, "tid": 1, "ts": 30},
]}


@pytest.fixture
def trace(tmp_path) -> Path:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(TRACE))
    return path


def test_info_text(trace, capsys) -> None:
    assert main(["info", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "events     5 (M 2, X 2, E 1)" in out
    assert "slices     2;" in out
    assert "trainer\\x1b[31m (pid 7)" in out  # escape sequences shown, never sent
    assert "\x1b" not in out
    assert "main (1)" in out and "2 slices in 2 rows" in out
    assert "E event without a matching B (dropped)" in out


def test_info_json(trace, capsys) -> None:
    assert main(["info", "--json", str(trace)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["slices"] == 2
    assert data["start_ns"] == 10_000 and data["end_ns"] == 15_000  # the lone E is dropped
    assert data["phase_counts"] == {"M": 2, "X": 2, "E": 1}
    assert data["processes"][0]["name"] == "trainer\x1b[31m"  # JSON escapes it itself
    assert [d["kind"] for d in data["diagnostics"]] == ["unmatched_end"]
    assert data["diagnostics"][0]["severity"] == "damage"  # an event dropped


def test_index_then_info_uses_the_cache(trace, cache_dir, capsys) -> None:
    assert main(["index", str(trace)]) == 0
    assert "indexed 2 slices into" in capsys.readouterr().out
    assert len(list(cache_dir.glob("*.idx"))) == 1
    assert main(["index", str(trace)]) == 0
    assert "already indexed" in capsys.readouterr().out
    assert sorted(p.name for p in trace.parent.iterdir()) == ["cache", "t.json"]


@pytest.mark.parametrize("content,message", [
    (b"", "is empty"),
    (b"a,b,c\n1,2,3\n", "is not a JSON trace"),
    (b"\x00\x01\x02\xff", "is not a JSON trace"),
    (b'{"spans": []}', "not a Chrome trace"),
])
def test_not_a_trace_is_one_sentence_and_status_2(tmp_path, capsys, content, message) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("content,message", [
    (b"", "is empty"),
    (b"a,b,c\n1,2,3\n", "is not a JSON trace"),
    (b'{"spans": []}', "not a Chrome trace"),
])
def test_the_viewer_says_what_is_no_trace_before_it_opens(tmp_path, capsys, content,
                                                           message) -> None:
    """`proftui PATH` reads the file's head before the app (see check_openable); the collector,
    off until the app's first frame, is on again after a refusal."""
    import gc

    path = tmp_path / "x.json"
    path.write_bytes(content)
    assert gc.isenabled()
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert gc.isenabled()


def test_missing_file_and_bad_usage(tmp_path, capsys) -> None:
    assert main(["info", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["info", "--bogus", "x"])
    assert exc.value.code == 2
    capsys.readouterr()
    assert main(["info", str(tmp_path)]) == 2
    assert "holds no trace or profiler output" in capsys.readouterr().err


def test_version_and_module_entry() -> None:
    out = subprocess.run([sys.executable, "-m", "proftui", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith("proftui ")


def test_info_on_the_bundled_sample(capsys) -> None:
    assert main(["info", "--no-cache", str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "thread 41207 (python)" in out and "stream 7" in out
    assert "diagnostics none" in out


def test_info_on_a_profile_directory(capsys) -> None:
    sample = SAMPLE.parent / "torch_npu"
    assert main(["info", "--no-cache", str(sample)]) == 0
    out = capsys.readouterr().out
    assert "found      torch_npu (ASCEND_PROFILER_OUTPUT)" in out
    assert "iterations 6 (from ProfilerStep#N annotations)" in out and "slowest #4" in out
    assert "kernel_details                72 rows x 11" in out
    assert "profiler_info_0.json: profiler run information (not a timeline)" in out
    assert main(["info", "--json", "--no-cache", str(sample)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [t["kind"] for t in data["profile"]["tables"]] == [
        "kernel_details", "op_statistic", "step_trace_time"]
    steps = data["iterations"]["items"]
    assert steps[0]["parts_ns"]["computing"] > 0 and len(steps) == 6


def test_info_says_how_a_device_clock_was_aligned(tmp_path, capsys) -> None:
    import shutil

    src = Path(__file__).resolve().parents[2] / "samples" / "ascend_old_layout"
    prof = tmp_path / "profile"
    shutil.copytree(src, prof)
    device = next(prof.glob("PROF_*/device_0"))
    (device / "start_info.0").write_text(json.dumps(
        {"collectionTimeBegin": "1692340024324979", "clockMonotonicRaw": "56579931060630"}))
    assert main(["info", str(prof)]) == 0
    out = capsys.readouterr().out
    assert "  clock    monotonic -> wall via device_0/start_info.0" in out


def test_info_json_lists_ranks_in_natural_order(tmp_path, capsys) -> None:
    for rank in (10, 2, 1, 0):
        (tmp_path / f"rank_{rank}").mkdir()
        (tmp_path / f"rank_{rank}" / "trace.json").write_text(json.dumps(
            [{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": rank, "dur": 1}]))
        (tmp_path / f"rank_{rank}" / "op_statistic.csv").write_text("OP Type,Count\nMatMul,1\n")
    assert main(["info", "--json", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    order = ["rank 0", "rank 1", "rank 2", "rank 10"]
    assert data["profile"]["groups"] == order
    assert [p["group"] for p in data["processes"]] == order
    assert [s["group"] for s in data["sources"]] == order
    assert [t["group"] for t in data["profile"]["tables"]] == order


def test_indexing_a_folder_of_ranks_names_each_rank_on_the_bar(tmp_path, monkeypatch) -> None:
    """On a terminal, `proftui index` of a folder of ranks says which rank it is at, how
    many of how many, and how many are done and came from the rank cache (the bar is drawn
    on stderr, and only on a terminal)."""
    import io

    from cluster_inputs import rank_folders

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    root = rank_folders(tmp_path, [[110, 140], [160, 110], [120, 120]])
    stderr = Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setenv("COLUMNS", "160")
    assert main(["index", root]) == 0
    assert "indexing 3 of 3: rank 2 (trace_view.json)" in stderr.getvalue()
    assert "(3/3 ranks done)" in stderr.getvalue()
    stderr.seek(0)
    stderr.truncate()
    from proftui.core.cache import indexes as cache  # the profile's entry gone: the ranks'

    monkeypatch.setattr(cache, "load", lambda *a, **k: (_ for _ in ()).throw(cache.CacheMiss()))
    assert main(["index", root]) == 0
    assert "(3/3 ranks done, 3 cached)" in stderr.getvalue()
    piped = io.StringIO()  # not a terminal: no bar
    monkeypatch.setattr(sys, "stderr", piped)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert main(["info", "--no-cache", root]) == 0 and piped.getvalue() == ""


def test_the_command_line_imports_textual_only_to_open_the_app() -> None:
    """`proftui PATH` reads the cache while the app's modules (Textual's) are imported: until
    then nothing imports them, nor the headless commands or the indexing code."""
    code = ("import sys\n"
            "import proftui.tui.cli, proftui.tui.launch\n"
            "from proftui.themes import DEFAULT_THEME, THEME_NAMES, palette_for\n"
            "palette_for(THEME_NAMES['light'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')\n"
            "             or m.startswith(('proftui.tui.commands.info',\n"
            "                              'proftui.core.build.builder'))))\n"
            "from proftui.themes import THEMES\n"
            "print(sorted(THEMES), THEMES[DEFAULT_THEME][0].name)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "[]", "['proftui-contrast', 'proftui-dark', 'proftui-light'] proftui-dark"]
