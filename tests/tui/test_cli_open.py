"""`proftui PATH` on a path it cannot open: the commands' one sentence, exit status 2, never a
traceback; at once when that shows before the app starts, else after the user leaves it."""

from __future__ import annotations

import os

import pytest
from tui_support import run_cli, settle

from proftui.tui.app import ProftuiApp
from proftui.tui.launch import exit_status


def _unreadable(path, monkeypatch) -> None:
    """Make `path` unreadable (as root, chmod does not: open() is refused for it instead)."""
    import builtins

    real = builtins.open

    def refusing(file, *args, **kwargs):
        if os.fspath(file) == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing)


@pytest.mark.parametrize("kind", ["not a trace", "not a chrome trace", "bad gzip", "empty",
                                  "empty folder", "folder of other files", "pipe",
                                  "unreadable"])
def test_a_path_the_app_cannot_open_is_refused_as_the_commands_refuse_it(
        kind, tmp_path, capsys, monkeypatch) -> None:
    path = tmp_path / "t.json"
    if kind == "not a trace":
        path.write_text("hello, world\n")
    elif kind == "not a chrome trace":
        path.write_text('{"foo": 1}')
    elif kind == "bad gzip":
        path = tmp_path / "t.json.gz"
        path.write_bytes(b"\x1f\x8b\x08garbage")
    elif kind == "empty":
        path.write_text("  \n")
    elif kind == "empty folder":
        path = tmp_path / "nothing"
        path.mkdir()
    elif kind == "folder of other files":
        path = tmp_path / "notes"
        path.mkdir()
        (path / "readme.txt").write_text("no trace here")
    elif kind == "pipe":
        os.mkfifo(path)
    else:
        path.write_text('{"traceEvents": []}')
        _unreadable(path, monkeypatch)
    monkeypatch.setattr(ProftuiApp, "run", lambda self, *a, **k: pytest.fail("app started"))
    status, out, err = run_cli(capsys, str(path))
    assert status == 2 and out == ""
    assert err.startswith("proftui: ") and err.count("\n") == 1 and "Traceback" not in err
    same, _, said = run_cli(capsys, "summary", str(path))
    assert same == 2 and said == err


async def test_what_shows_only_while_opening_is_said_after_the_user_leaves(
        tmp_path, capsys) -> None:
    """A torch_npu SQLite export that is damaged: discovery finds it, opening it fails. The
    app shows the sentence, and after q the command says it and exits with status 2."""
    folder = tmp_path / "run" / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir(parents=True)
    (folder / "ascend_pytorch_profiler_0.db").write_bytes(
        b"SQLite format 3\x00" + bytes(200) + b"garbage" * 100)
    folder = folder.parent
    status, _, said = run_cli(capsys, "summary", str(folder))
    assert status == 2 and "is a damaged SQLite database" in said
    app = ProftuiApp(str(folder), use_cache=False)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(app, pilot)
        assert f"proftui: {app.error}\n" == said
        assert "Cannot open this trace" in str(app.query_one("#status").render())
        await pilot.press("q")
    assert exit_status(app) == 2
    assert capsys.readouterr().err == said
    ok = ProftuiApp(str(tmp_path))  # never opened: no error, status 0
    assert exit_status(ok) == 0 and capsys.readouterr().err == ""


@pytest.mark.parametrize("text", ['{"traceEvents": [', '{"traceEvents": []}', "["])
async def test_a_trace_of_no_events_is_said_in_the_app_as_the_commands_say_it(
        text, tmp_path, capsys) -> None:
    path = tmp_path / "t.json"
    path.write_text(text)
    status, _, said = run_cli(capsys, "summary", str(path))
    assert status == 2 and "has no events" in said
    app = ProftuiApp(str(path), use_cache=False)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(app, pilot)
        assert f"proftui: {app.error}\n" == said and app.index is None
        assert "has no events" in str(app.query_one("#status").render())
        await pilot.press("q")
    assert exit_status(app) == 2
    assert capsys.readouterr().err == said
