"""A hostile trace cannot take over the terminal: every text it carries (names, categories,
args, process and thread names, counter series, CSV cells and headers, file and folder names)
reaches the screen escaped, in every headless command (text, JSON, CSV on a terminal, error
sentences) and in every pane of the app. No raw ESC (CSI, OSC, DCS), no other C0 control but
the newlines the program writes itself, no C1 control, no bidi control, no markup run."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from pathlib import Path

import pytest
from textual.widgets import Input, Label, Static
from tui_support import run_cli, settle

from proftui.tui.app import ProftuiApp
from proftui.tui.screens.export_dialog import ExportDialog
from proftui.tui.text.safe import safe, safe_json, safe_lines
from proftui.tui.widgets.timeline import Timeline

# Clear screen, set the window title (OSC ... BEL), a one-character C1 CSI, a right-to-left
# override and an isolate, NUL, CR, a DCS query (ESC P ... ESC \), DEL, and console markup that
# would run as bold and as a hyperlink (and "[/]", which is an error) if it were parsed.
HOSTILE = ("\x1b[2J\x1b]0;pwned\x07\x9b31m\u202eevil\u2066\x00\r\x1bP1$r\x1b\\\x7f"
           "[b]B[link=https://x.invalid]L[/link][/]")
# The same without what a file name or a CSV cell cannot hold (NUL; "/" in a name).
IN_NAMES = HOSTILE.replace("\x00", "").replace("/", "")
SHOWN = "\\x1b]0;pwned\\x07\\x9b31m\\u202eevil"  # how the hostile text reads once escaped
BIG = "big\x1b]0;" + "x" * 1_000_000  # a 1 MB name

# Built here rather than taken from tui.safe, so that the test does not grade its own answer.
FORBIDDEN = re.compile("[" + "".join(
    f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in (
        (0x00, 0x09), (0x0B, 0x1F),  # C0 but newline
        (0x7F, 0x9F),  # DEL and C1
        (0x061C, 0x061C), (0x200E, 0x200F), (0x202A, 0x202E), (0x2066, 0x2069),  # bidi
        (0x2028, 0x2029),  # line and paragraph separators
        (0xD800, 0xDFFF),  # lone surrogates (not UTF-8: printing one raises)
    )) + "]")
SGR = re.compile(r"\x1b\[[0-9;]*m")  # the colours rich draws tables with on a terminal


def _assert_clean(text: str, where: str) -> None:
    found = sorted(set(FORBIDDEN.findall(text)))
    assert not found, f"{where}: raw {', '.join(map(ascii, found))} reached the terminal"


def _events(tag: str = "") -> list[dict]:
    def h(word: str) -> str:
        return word + HOSTILE

    return [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": h("proc")}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": h("thread")}},
        {"ph": "M", "name": "process_labels", "pid": 1, "args": {"labels": h("labels")}},
        {"ph": "X", "name": h("ProfilerStep#1"), "cat": h("cat"), "pid": 1, "tid": 2, "ts": 0,
         "dur": 100, "args": {h("key"): h("value"), "list": [h("item")]}},
        {"ph": "X", "name": h("slice"), "cat": h("cat"), "pid": 1, "tid": 2, "ts": 10,
         "dur": 50, "args": {h("key"): h("value")}},
        {"ph": "X", "name": BIG, "pid": 1, "tid": 2, "ts": 70, "dur": 20},
        {"ph": "i", "name": h("instant"), "cat": h("cat"), "pid": 1, "tid": 2, "ts": 20,
         "s": "t"},
        {"ph": "C", "name": h("counter"), "pid": 1, "ts": 5, "args": {h("series"): 3}},
        {"ph": "C", "name": h("counter"), "pid": 1, "ts": 50, "args": {h("series"): 4}},
        {"ph": "s", "name": h("flow"), "cat": h("cat"), "id": 1, "pid": 1, "tid": 2, "ts": 12},
        {"ph": "f", "name": h("flow"), "cat": h("cat"), "id": 1, "pid": 1, "tid": 2, "ts": 75,
         "bp": "e"},
        {"ph": "X", "name": h("kernel"), "cat": "kernel", "pid": h("pid"), "tid": h("tid"),
         "ts": 15, "dur": 5},
        {"ph": "B", "name": h("begin"), "pid": 1, "tid": 3, "ts": 30},  # never closed
        {"ph": "E", "pid": 1, "tid": 4, "ts": 31},  # a problem to report
        {"ph": "X", "name": "tag" + tag, "pid": 9, "tid": 9, "ts": 1, "dur": 1},
    ]


def _strings(data: object) -> list[str]:
    """Every string of decoded JSON, keys and values."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [*data, *(s for v in data.values() for s in _strings(v))]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return []


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, str]:
    """A trace file with a hostile name, and a torch_npu profile of two ranks in hostile
    folders whose trace_view.json and summary CSVs (cells, headers, a file name) are hostile."""
    root = tmp_path_factory.mktemp("hostile")
    trace = root / f"trace{IN_NAMES}.json"
    trace.write_text(json.dumps({"traceEvents": _events()}))
    profile = root / "prof\x1b]0;dir\x07"
    for n, worker in enumerate((f"w1{IN_NAMES}_ascend_pt", "w2\x1b]0;t\x07_ascend_pt")):
        out = profile / worker / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True)
        (out / "trace_view.json").write_text(json.dumps({"traceEvents": _events(str(n))}))
        cell = IN_NAMES
        _write_csv(out / "op_statistic.csv",
                   ["OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)",
                    "Avg Time(us)", "Max Time(us)", "Ratio(%)"],
                   [["optype" + cell, "core" + cell, 2, 10, 4, 5, 6, 50]])
        _write_csv(out / "kernel_details.csv",
                   ["Step Id", "Model ID", "Task ID", "Stream ID", "Name", "Type",
                    "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)",
                    "Block Dim"],
                   [[1, 1, 0, 2, "kname" + cell, "ktype" + cell, "core" + cell, "15\t", 5, 0,
                     24]])
        _write_csv(out / "step_trace_time.csv",
                   ["Step", "Computing" + cell, "Communication(Not Overlapped)", "Overlapped",
                    "Communication", "Free", "Stage", "Bubble"],
                   [[1, 20, 10, 0, 10, 5, 0, 0]])
        _write_csv(out / f"notes{IN_NAMES}.csv", ["a" + cell, "b"], [["x" + cell, 1]])
    return {"trace": str(trace), "profile": str(profile), "root": str(root)}


# -- the headless commands -----------------------------------------------------------------------

TEXT_COMMANDS = [
    ("info",), ("index",), ("ops",), ("ops", "--by", "category"), ("ops", "--by", "type"),
    ("ops", "--range", "0:50us", "--sort", "Name"), ("iterations",), ("summary",),
    ("cluster",)]
JSON_COMMANDS = [("info", "--json"), ("ops", "--json"), ("iterations", "--json"),
                 ("summary", "--json"), ("cluster", "--json")]
EXPORTS = [("export", "--all"), ("export", "--all", "--what", "ops", "--by", "type"),
           ("export", "--iteration", "1", "--args", f"list,key{HOSTILE}"),
           ("export", "--all", "--tracks", "evil")]


def _terminal(monkeypatch) -> None:
    """Make the captured stdout claim to be a terminal (rich tables, escaped CSV)."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)


@pytest.mark.parametrize("on_terminal", [False, True], ids=["piped", "terminal"])
@pytest.mark.parametrize("which", ["trace", "profile"])
@pytest.mark.parametrize("command", TEXT_COMMANDS, ids=" ".join)
def test_text_commands_show_trace_text_escaped(hostile, capsys, monkeypatch, command, which,
                                               on_terminal) -> None:
    if on_terminal:
        _terminal(monkeypatch)
    status, out, err = run_cli(capsys, *command, hostile[which])
    assert status == 0, err
    _assert_clean(SGR.sub("", out), "stdout")
    _assert_clean(err, "stderr")
    # iterations and cluster show folder names only as the names of ranks
    shows_text = {"index": False, "iterations": which == "profile" and not on_terminal,
                  "cluster": which == "profile"}
    if shows_text.get(command[0], True):
        assert "\\x1b" in out  # the hostile text was shown, escaped, not left out
    if command[0] == "ops" and not on_terminal:  # a 1 MB name does not pad every line
        assert max(len(line) for line in out.splitlines() if not line.startswith("big")) < 2000


@pytest.mark.parametrize("which", ["trace", "profile"])
@pytest.mark.parametrize("command", JSON_COMMANDS, ids=" ".join)
def test_json_is_valid_faithful_and_safe_for_a_terminal(hostile, capsys, command,
                                                        which) -> None:
    status, out, err = run_cli(capsys, *command, hostile[which])
    assert status == 0, err
    _assert_clean(out, "stdout")
    data = json.loads(out)
    if command[0] not in ("iterations", "cluster") or which == "profile":  # text survives
        assert any(HOSTILE in text or IN_NAMES in text for text in _strings(data))
    if command[0] == "info":
        names = [p["name"] for p in data["processes"]]
        assert "proc" + HOSTILE in names


@pytest.mark.parametrize("which", ["trace", "profile"])
@pytest.mark.parametrize("command", EXPORTS, ids=["events", "ops", "args", "tracks"])
def test_csv_to_a_terminal_is_escaped_and_to_a_pipe_is_exact(hostile, capsys, monkeypatch,
                                                             command, which) -> None:
    status, piped, err = run_cli(capsys, *command, hostile[which])
    assert status == 0, err
    assert "\x1b]0;pwned\x07\x9b31m\u202eevil" in piped  # data kept as it is
    rows = list(csv.reader(io.StringIO(piped, newline="")))
    assert len(rows) >= 2 and len({len(row) for row in rows}) == 1
    _terminal(monkeypatch)
    status, shown, err = run_cli(capsys, *command, hostile[which])
    assert status == 0, err
    _assert_clean(shown, "stdout")
    assert SHOWN in shown
    assert shown.count("\n") == piped.count("\r\n")  # a row a line; a CR in a cell escaped


def test_export_help_says_what_a_terminal_gets(capsys) -> None:
    status, out, _ = run_cli(capsys, "export", "--help")
    assert status == 0
    assert "Written to a terminal" in out and "written exactly" in out


@pytest.mark.parametrize("argv,status,message", [
    (("info", "{root}/gone\x1b]0;owned\x07.json"), 2, "no such file"),
    (("{root}/gone\x1b]0;owned\x07.json",), 2, "no such file"),
    (("info", "{root}/empty\x1b]0;owned\x07.json"), 2, "is empty"),
    (("export", "--all", "-o", "{profile}", "{trace}"), 1, "is a directory"),
    (("export", "--all", "-o", "{root}/none\x1b]0;owned\x07/x.csv", "{trace}"), 1,
     "does not exist"),
    (("export", "--all", "--tracks", "\x1b]0;owned\x07", "{trace}"), 1, "no track matches"),
    (("ops", "--range", "\x1b]0;owned\x07", "{trace}"), 2, "--range"),
    (("ops", "--sort", "\x1b]0;owned\x07", "{trace}"), 2, "Unknown column"),
    (("info", "--bogus\x1b]0;owned\x07", "{trace}"), 2, "unrecognized arguments"),
    (("ops", "--top", "\x1b]0;owned\x07", "{trace}"), 2, "invalid int value"),
])
def test_error_sentences_quote_names_escaped(hostile, capsys, argv, status, message) -> None:
    Path(hostile["root"], "empty\x1b]0;owned\x07.json").touch()
    argv = tuple(a.format(**hostile) for a in argv)
    got, out, err = run_cli(capsys, *argv)
    assert got == status and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    _assert_clean(err, "stderr")
    assert "\\x1b]0;" in err  # the name is quoted, escaped


@pytest.fixture
def not_utf8_name(hostile, tmp_path) -> str:
    """The hostile trace under a file name that is not UTF-8 (a lone surrogate in Python)."""
    path = os.path.join(os.fsencode(tmp_path), b"bad\xff\x1b.json")
    try:
        with open(path, "wb") as f:
            f.write(Path(hostile["trace"]).read_bytes())
    except OSError:
        pytest.skip("this file system wants UTF-8 names")
    return os.fsdecode(path)


@pytest.mark.parametrize("command", [("info",), ("info", "--json"), ("summary", "--json"),
                                     ("iterations",)], ids=" ".join)
def test_a_file_name_that_is_not_utf8_is_shown_escaped(not_utf8_name, capsys,
                                                       command) -> None:
    status, out, err = run_cli(capsys, *command, "--no-cache", not_utf8_name)
    assert status == 0, err
    _assert_clean(out + err, "output")
    out.encode("utf-8")  # printable
    if "--json" in command:
        assert not_utf8_name in _strings(json.loads(out))
    elif command[0] == "info":
        assert "bad\\udcff\\x1b.json" in out


def test_a_file_name_that_is_not_utf8_can_be_cached(not_utf8_name, capsys) -> None:
    status, out, err = run_cli(capsys, "info", not_utf8_name)
    assert status == 0, err
    status, again, err = run_cli(capsys, "info", not_utf8_name)
    assert status == 0 and again == out  # the second time from the cache


# -- the escaping helpers ------------------------------------------------------------------------


def _every_forbidden_character() -> str:
    return "".join(chr(c) for c in range(0x10000) if FORBIDDEN.match(chr(c)))


def test_safe_leaves_nothing_a_terminal_obeys() -> None:
    every = _every_forbidden_character()
    assert len(every) > 2000 and "\x1b" in every and "\u202e" in every and "\t" in every
    _assert_clean(safe(every), "safe")
    assert "\n" not in safe(every + "\n")  # one line
    assert safe("a\x1b[2Jb") == "a\\x1b[2Jb" and safe("\u202e") == "\\u202e"
    assert safe("plain ascii, ümlauts, 漢字 and [brackets]") == (
        "plain ascii, ümlauts, 漢字 and [brackets]")
    lines = safe_lines("a,\x1bb\r\nc\rd\n")
    assert lines == "a,\\x1bb\nc\\rd\n"
    _assert_clean(safe_lines(every), "safe_lines")


def test_safe_json_is_the_same_json() -> None:
    # Surrogates one at a time: two side by side would read back as one character.
    every = "".join(ch for ch in _every_forbidden_character() if not "\ud800" <= ch <= "\udfff")
    for data in ({"k" + every: ["v" + every, 1, None]}, {"lone": "a\udcff"}):
        text = safe_json(json.dumps(data, ensure_ascii=False, indent=2))
        _assert_clean(text, "safe_json")
        assert json.loads(text) == data


# -- the app -------------------------------------------------------------------------------------




def _screen_text(app, where: str, skip: tuple = ()) -> str:
    """Every segment the screen would draw (but those of the widgets in `skip`), checked for
    raw controls and for markup that ran (a hyperlink)."""
    skipped = [app.screen.find_widget(w).region for w in skip]
    lines = []
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        x = 0
        line = []
        for segment in strip:
            inside = any(r.contains(x, y) for r in skipped)
            x += segment.cell_length
            if inside:
                continue
            style = segment.style
            assert style is None or not style.link, f"{where}: a hyperlink ran from markup"
            line.append(segment.text)
        lines.append("".join(line))
    text = "\n".join(lines)
    _assert_clean(text, f"{where} ({type(app.screen).__name__})")
    return text


@pytest.mark.parametrize("which", ["trace", "profile"])
async def test_every_pane_shows_hostile_text_escaped(hostile, which, tmp_path,
                                                     monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = ProftuiApp(hostile[which])
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(app, pilot)
        assert app.index is not None and app.error is None
        assert "\\x1b" in _screen_text(app, "timeline")  # track names, escaped
        timeline = app.query_one(Timeline)
        for n in range(app.index.n_slices):
            timeline.select(n)
            await settle(app, pilot)
            _screen_text(app, f"slice {n} selected")
        big = next(n for n in range(app.index.n_slices) if app.index.slice_name(n) == BIG)
        timeline.select(big)
        await settle(app, pilot)
        assert len(str(app.query_one("#details", Static).render())) < 10_000
        hostile_slice = next(n for n in range(app.index.n_slices)
                             if app.index.slice_name(n) == "slice" + HOSTILE)
        timeline.select(hostile_slice)
        await settle(app, pilot)
        details = str(app.query_one("#details", Static).render())
        assert "slice\\x1b[2J" in details and "key\\u001b[2J" in details  # name, args
        assert "[link=https://x.invalid]" in details  # shown, not run as markup
        _screen_text(app, "details")

        await pilot.press("2")
        await settle(app, pilot)
        assert "\\x1b[2J" in _screen_text(app, "ops pane")
        await pilot.press("enter")  # the instances of the first op, and their histogram
        await settle(app, pilot)
        _screen_text(app, "op instances")
        await pilot.press("escape")

        await pilot.press("3")
        await settle(app, pilot)
        tables = app.query_one("#tables")
        for _ in range(len(tables.tables)):
            _screen_text(app, f"table {tables.current}")
            await pilot.press("right_square_bracket")
            await settle(app, pilot)

        await pilot.press("4")
        await settle(app, pilot)
        _screen_text(app, "iterations pane")
        rows = len(app.iterations)
        for row in range(rows):  # each iteration (a hostile rank folder name in its label)
            await pilot.press("4", "home", *["down"] * row, "enter")
            await settle(app, pilot)
            await pilot.press("2")
            await settle(app, pilot)
            _screen_text(app, f"ops of iteration row {row}")

        await pilot.press("o")
        await settle(app, pilot)
        assert "[link=" in _screen_text(app, "overview")  # shown as text, not a hyperlink
        await pilot.press("o", "D")
        await settle(app, pilot)
        assert "E event without a matching B" in _screen_text(app, "diagnostics")
        await pilot.press("D")

        app.set_focus(timeline)
        await pilot.press("slash", *"evil", "enter")
        await settle(app, pilot)
        assert "\\u202eevil" in str(app.query_one("#status", Static).render())
        _screen_text(app, "search")

        await pilot.press("3")
        while tables.tables and not tables.tables[tables.current].kind.startswith("notes"):
            await pilot.press("right_square_bracket")  # a table named by a hostile file name
        await pilot.press("e")  # the dialog offers the pane's table by its name
        await settle(app, pilot)
        assert isinstance(app.screen, ExportDialog)
        _screen_text(app, "export dialog")
        # A path the user types is theirs; the warning that quotes it is checked alone.
        field = app.screen.query_one("#export-path", Input)
        field.value = hostile["profile"]
        field.focus()
        await pilot.press("enter")  # (Enter in the field: a button ignores a quick 2nd click)
        await pilot.pause()
        warning = str(app.screen.query_one("#export-warning", Label).render())
        assert "prof\\x1b]0;dir\\x07 is a directory" in warning
        _assert_clean(warning, "export warning")
        _screen_text(app, "export warning", skip=(field,))
        field.value = str(tmp_path / "out.csv")
        await pilot.press("enter")
        await settle(app, pilot)
        status = str(app.query_one("#status", Static).render())
        assert "Wrote" in status, status
        _screen_text(app, "after the export")

        await pilot.press("question_mark")
        await pilot.pause()
        _screen_text(app, "help")


# -- proftui table: the summary CSVs by name --------------------------------------------------

TABLE_TEXT = [(), ("op_statistic",), ("kernel_details", "--where", "Name~kname"),
              ("notes",), ("op_statistic", "--group", "w2\x1b]0;t\x07_ascend_pt")]


@pytest.mark.parametrize("on_terminal", [False, True], ids=["piped", "terminal"])
@pytest.mark.parametrize("argv", TABLE_TEXT, ids=lambda a: safe(" ".join(a)) or "list")
def test_table_shows_cells_headers_and_names_escaped(hostile, capsys, monkeypatch, argv,
                                                     on_terminal) -> None:
    if on_terminal:
        _terminal(monkeypatch)
    status, out, err = run_cli(capsys, "table", hostile["profile"], *argv)
    assert status == 0, err
    _assert_clean(SGR.sub("", out), "stdout")
    _assert_clean(err, "stderr")
    assert "\\x1b" in out  # cells, headers, the file and folder names: shown, escaped


@pytest.mark.parametrize("argv", [(), ("op_statistic",), ("notes",)],
                         ids=lambda a: " ".join(a) or "list")
def test_table_json_is_faithful_and_safe(hostile, capsys, argv) -> None:
    status, out, err = run_cli(capsys, "table", hostile["profile"], *argv, "--json")
    assert status == 0, err
    _assert_clean(out, "stdout")
    assert any(IN_NAMES in text for text in _strings(json.loads(out)))


def test_table_csv_to_a_terminal_is_escaped(hostile, capsys, monkeypatch) -> None:
    status, piped, err = run_cli(capsys, "table", hostile["profile"], "op_statistic", "--csv")
    assert status == 0, err
    assert IN_NAMES in piped  # data kept as it is (the Group column too)
    _terminal(monkeypatch)
    status, shown, err = run_cli(capsys, "table", hostile["profile"], "op_statistic", "--csv")
    assert status == 0, err
    _assert_clean(shown, "stdout")
    assert SHOWN in shown and shown.count("\n") == piped.count("\r\n")


@pytest.mark.parametrize("argv,message", [
    (("nope\x1b]0;owned\x07",), "No table"),
    (("op_statistic", "--where", "\x1b]0;owned\x07>3"), "Unknown column"),
    (("op_statistic", "--group", "\x1b]0;owned\x07"), "has no group"),
])
def test_table_error_sentences_are_escaped(hostile, capsys, argv, message) -> None:
    status, out, err = run_cli(capsys, "table", hostile["profile"], *argv)
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1
    _assert_clean(err, "stderr")
    assert "\\x1b]0;" in err
