"""Which event reader ran: `proftui --version` says which one reads traces now (and why not
the native one), `proftui info` which one read the trace, from the index's metadata."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from proftui.core.importers.chrome import native
from proftui.tui import cli
from proftui.tui.commands import info

from helpers import load, write_trace, x


def _cli(capsys, *argv: str) -> tuple[int, str]:
    try:
        status = cli.main(list(argv))
    except SystemExit as exc:  # argparse's --version
        status = exc.code
    return status, capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--version"], ["-V"], ["info", "--version"]])
def test_version_names_the_reader_and_why_not_the_native_one(argv, capsys,
                                                            monkeypatch) -> None:
    monkeypatch.delenv("PROFTUI_NATIVE", raising=False)
    monkeypatch.setattr(native, "MODULE", SimpleNamespace(read_batch=lambda *a: None))
    status, out = _cli(capsys, *argv)
    assert status == 0 and out.splitlines()[1] == "event reader: native"
    assert out.startswith("proftui ")

    monkeypatch.setenv("PROFTUI_NATIVE", "0")
    assert _cli(capsys, *argv)[1].splitlines()[1] == \
        "event reader: python; native reader turned off by PROFTUI_NATIVE=0"

    monkeypatch.delenv("PROFTUI_NATIVE")
    monkeypatch.setattr(native, "MODULE", None)
    assert _cli(capsys, *argv)[1].splitlines()[1] == (
        "event reader: python; native reader not built (no C compiler at install, or "
        "PROFTUI_BUILD_NATIVE=0)")


@pytest.fixture
def indexed(tmp_path, monkeypatch):
    """`info` on an inline trace whose metadata says which reader read it."""
    index = load(write_trace(tmp_path / "t.json", [x("a", 0, 5), x("b", 10, 5)]))
    monkeypatch.setattr(info, "load", lambda args: index)
    return index


@pytest.mark.parametrize("reader, line", [
    ({"native": 1021, "python": 3}, "reader     native (1,021 batches; 3 by the Python path)"),
    ({"native": 1, "python": 0}, "reader     native (1 batch)"),
    ({"native": 0, "python": 24}, "reader     python (24 batches)"),
])
def test_info_says_which_reader_read_the_trace(reader, line, indexed, capsys) -> None:
    indexed.meta["reader"] = reader
    status, out = _cli(capsys, "info", "t.json")
    assert status == 0 and line in out.splitlines()
    status, out = _cli(capsys, "info", "--json", "t.json")
    assert status == 0 and json.loads(out)["reader"] == reader


def test_info_of_an_index_without_the_reader_says_nothing_of_it(indexed, capsys) -> None:
    indexed.meta.pop("reader", None)  # a SQLite export, or an index built before
    status, out = _cli(capsys, "info", "t.json")
    assert status == 0 and "reader " not in out
    assert json.loads(_cli(capsys, "info", "--json", "t.json")[1])["reader"] is None
