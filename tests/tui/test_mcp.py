"""`proftui mcp`: the MCP server's tools answer the commands' JSON, inside the roots only."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from proftui.tui.cli import main
from proftui.tui.commands.mcp_tools import TOOLS, Tools, fitted

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
KINETO = "kineto_demo.pt.trace.json"
needs_sdk = pytest.mark.skipif(importlib.util.find_spec("mcp") is None,
                               reason="the MCP SDK is not installed (pip install 'proftui[mcp]')")


def cli_json(capsys, *argv: str) -> dict:
    """What `proftui ARGV --json` prints, parsed."""
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


async def ask(roots: list[str], calls: list[tuple[str, dict]], max_chars: int | None = None):
    """The results of `calls` (tool, inputs) to a server over the SDK's in-memory client."""
    from mcp import Client

    from proftui.tui.commands.mcp_server import make_server

    tools = Tools(roots) if max_chars is None else Tools(roots, max_chars)
    async with Client(make_server(tools)) as client:
        return [await client.call_tool(name, given) for name, given in calls]


def answer(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


@needs_sdk
async def test_the_tools_are_the_commands_with_typed_inputs() -> None:
    from mcp import Client

    from proftui.tui.commands.mcp_server import make_server

    async with Client(make_server(Tools([str(SAMPLES)]))) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert list(listed) == ["info", "summary", "breakdown", "advise", "ops", "iterations",
                            "diff", "cluster", "comm", "memory", "table", "export"]
    assert {n: t.input_schema["required"] for n, t in listed.items()} == {
        **{n: ["path"] for n in listed}, "diff": ["base", "new"]}
    ops = listed["ops"].input_schema["properties"]
    assert ops["top"] == {**ops["top"], "type": "integer", "default": 50}
    assert "engine" in ops["by"]["enum"] and ops["side"]["enum"] == ["all", "device", "host"]
    assert ops["run"]["type"] == "integer" and ops["iteration"]["type"] == "integer"
    assert listed["export"].input_schema["properties"]["all"]["type"] == "boolean"
    assert all(t.annotations.read_only_hint for t in listed.values())


@needs_sdk
@pytest.mark.parametrize("sample", [KINETO, "cluster_2rank"])
async def test_advise_answers_the_findings_of_advise_json(sample: str, capsys) -> None:
    expected = cli_json(capsys, "advise", str(SAMPLES / sample))
    [result] = await ask([str(SAMPLES)], [("advise", {"path": sample})])
    got = answer(result)
    assert got["findings"] and got["findings"] == expected["findings"]
    assert got == expected


@needs_sdk
async def test_ops_top_bounds_the_rows(capsys) -> None:
    everything = cli_json(capsys, "ops", str(SAMPLES / KINETO))
    three, default = await ask([str(SAMPLES)], [("ops", {"path": KINETO, "top": 3}),
                                                ("ops", {"path": KINETO})])
    rows = answer(three)["rows"]
    assert rows == everything["rows"][:3] and everything["ops"] > 3
    assert answer(default)["rows"] == everything["rows"][:50]
    assert {k: v for k, v in answer(three).items() if k != "rows"} == {
        k: v for k, v in everything.items() if k != "rows"}


@needs_sdk
async def test_paths_out_of_the_roots_are_refused(tmp_path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    shutil.copy(SAMPLES / KINETO, outside / KINETO)
    (root / "link.json").symlink_to(outside / KINETO)
    (root / "inside.json").symlink_to(outside / KINETO)
    results = await ask([str(root)], [
        ("info", {"path": f"../outside/{KINETO}"}),
        ("info", {"path": "link.json"}),
        ("info", {"path": str(outside / KINETO)}),
        ("diff", {"base": f"../outside/{KINETO}", "new": f"../outside/{KINETO}"})])
    for result, given in zip(results, (f"../outside/{KINETO}", "link.json",
                                       str(outside / KINETO), f"../outside/{KINETO}")):
        assert result.is_error
        assert result.content[0].text == (f"{given} is outside the folders this server may "
                                          f"read ({os.path.realpath(root)}).")


@needs_sdk
async def test_a_second_root_is_readable(tmp_path, capsys) -> None:
    expected = cli_json(capsys, "iterations", str(SAMPLES / KINETO))
    [result] = await ask([str(tmp_path), str(SAMPLES)],
                         [("iterations", {"path": str(SAMPLES / KINETO)})])
    assert answer(result) == expected


@needs_sdk
async def test_errors_are_the_commands_sentences(capsys) -> None:
    missing = SAMPLES / "no_such_trace.json"
    capsys.readouterr()
    assert main(["info", str(missing)]) == 2
    said = capsys.readouterr().err.strip().removeprefix("proftui: ")
    results = await ask([str(SAMPLES)], [
        ("info", {"path": "no_such_trace.json"}),
        ("ops", {"path": KINETO, "iteration": 999}),
        ("ops", {"path": KINETO, "top": "3"}),
        ("ops", {"path": KINETO, "by": "colour"}),
        ("ops", {"path": KINETO, "top": -1}),
        ("ops", {"path": KINETO, "colour": 1}),
        ("ops", {}),
        ("nothing", {"path": KINETO})])
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results)
    assert texts[0] == said and said.endswith("no such file or directory.")
    assert texts[1].startswith("Iteration 999 is not in this profile (it has iterations ")
    assert texts[2] == "\"top\" is an integer, not '3'."
    assert texts[3].startswith('"by" is one of name, category, ')
    assert texts[4] == "--top wants a count of 0 or more."
    assert texts[5].startswith('ops takes no input "colour" (it takes path, run, ')
    assert texts[6] == 'ops needs "path".'
    assert texts[7].startswith("There is no tool 'nothing' (the tools: info, summary,")
    assert not any("Traceback" in t for t in texts)


@needs_sdk
async def test_export_gives_the_windows_csv_cut_at_the_bound(capsys) -> None:
    capsys.readouterr()
    assert main(["export", str(SAMPLES / KINETO), "--iteration", "3"]) == 0
    csv_text = capsys.readouterr().out
    whole, cut = await ask([str(SAMPLES)], [("export", {"path": KINETO, "iteration": 3}),
                                            ("export", {"path": KINETO, "all": True})],
                           max_chars=len(csv_text) + 10)
    assert [c.text for c in whole.content] == [csv_text]
    text, note = (c.text for c in cut.content)
    assert len(text) <= len(csv_text) + 10 and text.endswith("\r\n")
    rows = text.count("\r\n") - 1
    assert note.startswith(f"note: cut to the first {rows} rows (")


def test_a_long_answer_is_cut_with_a_note_naming_what_was_kept() -> None:
    data = {"window": "whole trace", "rows": [{"name": f"op{i}", "total_ns": i}
                                              for i in range(1000)], "warnings": []}
    text, note = fitted(data, 2000)
    got = json.loads(text)
    assert len(text) <= 2000 and got["window"] == "whole trace"
    assert got["rows"] == data["rows"][:len(got["rows"])] and 0 < len(got["rows"]) < 1000
    assert note == (f"note: cut to fit 2,000 characters, items kept: rows {len(got['rows'])} "
                    "of 1,000; a smaller top or a window gives the rest.")
    assert fitted({"rows": [1, 2]}, 2000) == ['{"rows":[1,2]}']


def test_every_tool_takes_only_options_its_command_has() -> None:
    for tool in TOOLS:
        dests = {a.dest for a in tool.spec().args()}
        assert set(tool.options) <= dests, tool.name


def test_without_the_sdk_mcp_says_how_to_install_it(monkeypatch, capsys) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mcp" else real(name, *a))
    assert main(["mcp", str(SAMPLES)]) == 1
    assert capsys.readouterr().err == ("proftui: proftui mcp needs the MCP SDK: pip install "
                                       "'proftui[mcp]'.\n")


def test_a_root_that_is_no_folder_is_refused(capsys) -> None:
    assert main(["mcp", str(SAMPLES / KINETO)]) == 2
    assert capsys.readouterr().err == (f"proftui: {SAMPLES / KINETO} is not a folder (the "
                                       "roots are folders).\n")


@needs_sdk
async def test_proftui_mcp_serves_over_stdio(tmp_path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    # The SDK passes a server only a few variables unless told: this one imports proftui as
    # the tests do (installed, or through PYTHONPATH).
    env = dict(os.environ)
    server = StdioServerParameters(command=sys.executable,
                                   args=["-m", "proftui", "mcp", str(SAMPLES)], env=env)
    # The server's stderr to a file of its own: the SDK's default is the sys.stderr of when it
    # was imported, which under pytest may be a capture with no file descriptor.
    with open(tmp_path / "server.err", "w") as errlog:
        async with Client(stdio_client(server, errlog=errlog)) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("info", {"path": KINETO})
    assert names == [t.name for t in TOOLS]
    assert json.loads(result.content[0].text)["slices"] > 0


@needs_sdk
async def test_table_comm_and_diff_answer_their_commands_json(capsys) -> None:
    ranks = str(SAMPLES / "cluster_2rank")
    listing = cli_json(capsys, "table", ranks)
    one = cli_json(capsys, "table", ranks, "op_statistic", "--top", "3")
    comm = cli_json(capsys, "comm", ranks)
    before, after = (str(SAMPLES / f"diff_{s}.pt.trace.json") for s in ("before", "after"))
    diff = cli_json(capsys, "diff", before, after, "--top", "5")
    results = await ask([str(SAMPLES)], [
        ("table", {"path": "cluster_2rank"}),
        ("table", {"path": "cluster_2rank", "name": "op_statistic", "top": 3}),
        ("comm", {"path": "cluster_2rank"}),
        ("diff", {"base": "diff_before.pt.trace.json", "new": "diff_after.pt.trace.json",
                  "top": 5})])
    assert [answer(r) for r in results] == [listing, one, comm, diff]
    assert listing["tables"] and one["rows"] and comm["links"] and diff["ops"]
