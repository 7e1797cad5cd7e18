"""The command line declared once: the usage, each command's --help and the completion
scripts name every command and every option its parser has."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from tui_support import run_cli

from proftui.core.ops.grouping import GROUP_BY
from proftui.tui.cli import COMMANDS, declarations, main
from proftui.tui.commands.completion import bash_script, zsh_script
from proftui.tui.launch import cmd_open

NAMED = [*COMMANDS, "completion"]


def parsers() -> dict[str, object]:
    """Each command's argparse parser, the viewer's as ""."""
    return {spec.name: spec.parser() for spec in declarations()}


def option_strings(parser) -> set[str]:
    # argparse's own record of the parser, not the declarations the parser was made from.
    return {s for action in parser._actions for s in action.option_strings}


def test_the_declarations_are_the_commands() -> None:
    assert [spec.name for spec in declarations()] == ["", *NAMED]


def test_the_usage_names_every_command(capsys) -> None:
    status, out, err = run_cli(capsys, "--help")
    assert status == 0 and err == ""
    listed = re.findall(r"^(?:usage: |       )proftui ([a-z]\S*)", out, re.MULTILINE)
    assert list(dict.fromkeys(listed)) == NAMED
    assert "usage: proftui PATH [NEW] [options]" in out
    assert "proftui advise --rules" in out  # another way to call a command, declared with it
    status, no_args, err = run_cli(capsys)
    assert status == 2 and no_args == "" and err == out


def test_the_usage_imports_no_command_s_heavy_modules() -> None:
    """`proftui --help` reads the declarations: no numpy, no core analysis, no Textual."""
    code = ("import sys\n"
            "from proftui.tui.cli import main\n"
            "main(['--help'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'textual', 'rich') or m.startswith(('proftui.core.analysis', "
            "'proftui.core.ops', 'proftui.core.load'))))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize("command", NAMED)
def test_every_command_s_help_names_each_of_its_options(command, capsys) -> None:
    status, out, err = run_cli(capsys, command, "--help")
    assert status == 0 and err == "" and out.startswith(f"usage: proftui {command} ")
    for option in option_strings(parsers()[command]):
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", out), option
    assert "\nexamples:\n  " in out


def test_the_viewer_s_help_names_each_of_its_options(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cmd_open(["--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and out.startswith("usage: proftui ")
    for option in option_strings(parsers()[""]) | {"--theme", "--run", "--no-cache"}:
        assert option in out


def test_shared_options_keep_their_names_defaults_and_values() -> None:
    found = parsers()
    ops = {a.dest: a for a in found["ops"]._actions}
    assert ops["by"].choices == tuple(GROUP_BY) and ops["by"].default == "name"
    assert ops["side"].choices == ("all", "device", "host") and ops["side"].default == "all"
    assert ops["top"].default is None and ops["run"].metavar == "N"
    diff = {a.dest: a for a in found["diff"]._actions}
    assert diff["by"].choices == ("name", "category", "type") and diff["top"].default == 20
    assert {a.dest: a for a in found["memory"]._actions}["top"].default == 10


@pytest.mark.parametrize("argv,says", [
    (["ops", "--top", "-1", "x"], "proftui ops: --top wants a count of 0 or more"),
    (["memory", "--top", "0", "x"], "proftui memory: --top wants 1 or more"),
    (["table", "--top", "-2", "x"], "proftui table: --top wants a count of 0 or more"),
    (["ops", "--by", "colour", "x"], "argument --by: invalid choice: 'colour' (choose from "
                                     "'name', 'category', 'type', 'engine')"),
    (["export", "x"], "one of the arguments --iteration --range --all is required"),
    (["ops", "--run", "0", "x"], "a run number is 1 or more, not '0'"),
])
def test_declared_checks_say_what_they_said(argv, says, capsys) -> None:
    status, out, err = run_cli(capsys, *argv)
    assert status == 2 and out == "" and says in err and err.count("\n") == 1


def test_completion_needs_a_shell(capsys) -> None:
    status, _, err = run_cli(capsys, "completion", "fish")
    assert status == 2 and "invalid choice: 'fish'" in err
    status, out, _ = run_cli(capsys, "completion", "bash")
    assert status == 0 and out == bash_script(declarations())


# Completing `proftui WORDS...` in bash: the script sourced, COMP_WORDS set, then COMPREPLY.
BASH_DRIVER = """
source {script}
complete_line() {{
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
    _proftui
    printf '%s\\n' "${{COMPREPLY[@]}}" | sort -u | tr '\\n' ' '; echo
}}
"""


def bash_completions(tmp_path, lines: list[list[str]]) -> list[set[str]]:
    """What bash offers for the last word of each of `lines` (run in `tmp_path`)."""
    script = tmp_path / "proftui.bash"
    script.write_text(bash_script(declarations()))
    calls = "".join("complete_line " + " ".join(f"'{w}'" for w in line) + "\n"
                    for line in lines)
    result = subprocess.run(["bash", "--norc", "-c", BASH_DRIVER.format(script=script) + calls],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return [set(out.split()) for out in result.stdout.splitlines()]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_every_command_and_every_option_of_every_parser(tmp_path) -> None:
    found = parsers()
    lines = [["proftui", ""], ["proftui", "-"]] + [["proftui", c, "-"] for c in NAMED]
    first, viewer, *commands = bash_completions(tmp_path, lines)
    assert set(NAMED) <= first and "proftui.bash" in first  # commands, and files to open
    assert viewer == option_strings(found[""])
    for name, offered in zip(NAMED, commands):
        assert offered == option_strings(found[name]), name


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_values_and_files(tmp_path) -> None:
    (tmp_path / "run.pt.trace.json").write_text("[]")
    (tmp_path / "PROF_1").mkdir()
    by, by_eq, side, unit, diff_by, top, theme, path, output, cache, shell, new = \
        bash_completions(tmp_path, [
            ["proftui", "ops", "--by", ""], ["proftui", "ops", "--by", "=", "ty"],
            ["proftui", "export", "x", "--side", ""], ["proftui", "export", "--unit", "m"],
            ["proftui", "diff", "--by", ""], ["proftui", "ops", "--top", ""],
            ["proftui", "--theme", ""], ["proftui", "info", "r"],
            ["proftui", "table", "-o", "PR"], ["proftui", "cache", ""],
            ["proftui", "completion", ""], ["proftui", "x.json", "P"]])
    assert by == set(GROUP_BY) and by_eq == {"type"} and side == {"all", "device", "host"}
    assert unit == {"ms"} and diff_by == {"name", "category", "type"} and top == set()
    assert theme == set(found_themes())
    assert path == {"run.pt.trace.json"} and output == {"PROF_1"} and new == {"PROF_1"}
    assert cache == {"clear"} and shell == {"bash", "zsh"}


def found_themes() -> list[str]:
    from proftui.themes import THEME_NAMES

    return sorted(THEME_NAMES)


def zsh_branches() -> dict[str, str]:
    """The zsh script's _arguments call for each command (the viewer's as "")."""
    text = zsh_script(declarations())
    body = text[text.index("  case $words[1] in\n"):]
    parts = re.split(r"^    (\S+)\)\n", body, flags=re.MULTILINE)[1:]
    return {("" if name == "*" else name): spec for name, spec in zip(parts[::2], parts[1::2])}


def test_zsh_completes_every_command_and_every_option_of_every_parser() -> None:
    text = zsh_script(declarations())
    listed = re.findall(r"^    '([a-z]+):", text, re.MULTILINE)
    assert listed == NAMED
    branches = zsh_branches()
    assert set(branches) == {"", *NAMED}
    for name, parser in parsers().items():
        declared = set(re.findall(r"'(?:\([^)]*\)|\*)?(-[\w-]+)\[", branches[name]))
        assert declared == option_strings(parser), name
    assert "'(--by)--by[group operators by name (default), category, operator type …]:BY:" \
           f"({' '.join(GROUP_BY)})'" in branches["ops"]
    assert "'(-o --output)--output[where to write (default -, stdout; escaped on a terminal)]" \
           ":FILE:_files'" in branches["export"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="no zsh")
def test_the_zsh_script_is_zsh(tmp_path) -> None:
    script = tmp_path / "_proftui"
    script.write_text(zsh_script(declarations()))
    result = subprocess.run(["zsh", "-n", str(script)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_main_runs_completion(capsys) -> None:
    assert main(["completion", "zsh"]) == 0
    assert capsys.readouterr().out == zsh_script(declarations())


# Completing in an interactive zsh (through a pseudo-terminal, as a person presses Tab): each
# case types a line and Tab, and reads until the completion it waits for shows.
ZSH_DRIVER = r"""
zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z 'PS1="> "; fpath=({functions} $fpath); autoload -U compinit; compinit -u -D; '\
'proftui() {{ }}; setopt nolistbeep'
for line pattern in {cases}; do
  zpty -w -n z "$line"$'\t'
  zpty -r z out "$pattern"
  print -r -- "=== $out"
  zpty -w -n z $'\C-u'
done
zpty -d z
"""


@pytest.mark.skipif(shutil.which("zsh") is None, reason="no zsh")
def test_zsh_completes_commands_values_and_options(tmp_path) -> None:
    (tmp_path / "_proftui").write_text(zsh_script(declarations()))
    cases = [("proftui ", "*table  *--*_proftui*"), ("proftui ops --by ", "*category*type*"),
             ("proftui diff --by ", "*category*type*"), ("proftui cache ", "*clear*"),
             ("proftui export --ti", "*--time*"), ("proftui --th", "*--theme*")]
    words = " ".join(f"'{line}' '{pattern}'" for line, pattern in cases)
    script = ZSH_DRIVER.format(functions=tmp_path, cases=words)
    result = subprocess.run(["zsh", "-f", "-c", script], capture_output=True, text=True,
                            cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    shown = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", part)
             for part in result.stdout.split("=== ")[1:]]
    first, ops_by, diff_by, cache, export, viewer = shown
    assert all(name in first for name in NAMED) and "_proftui" in first  # and files
    assert all(key in ops_by for key in GROUP_BY)
    assert "engine" not in diff_by and all(k in diff_by for k in ("name", "category", "type"))
    assert "proftui cache clear" in cache and "proftui export --time" in export
    assert "proftui --theme" in viewer
