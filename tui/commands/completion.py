"""`proftui completion bash|zsh`: shell completion scripts written from the commands'
declarations."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterable, Sequence

from proftui.tui.commands.spec import EXIT_OK, Arg, Command, Group

SHELLS = ("bash", "zsh")
# zsh shows each option's help beside it: its first words, to keep the menu one line each.
ZSH_HELP = 60

SPEC = Command(
    "completion", "a shell completion script (bash or zsh)",
    "Print a completion script for bash or zsh: it completes the commands, each command's "
    "options, the values of options that take one of a fixed set (--by, --side, --unit ...), "
    "and file names for paths. The script is made from the commands' declarations; write it "
    "again after an upgrade.",
    (Arg("shell", choices=SHELLS, help="the shell the script is for"),),
    ('eval "$(proftui completion bash)"      # in ~/.bashrc',
     "proftui completion bash > ~/.local/share/bash-completion/completions/proftui",
     "proftui completion zsh > ~/.zfunc/_proftui   # a folder of $fpath, before compinit"))


def cmd_completion(argv: list[str], commands: Sequence[Command]) -> int:
    """Print the script for the shell named in `argv`; `commands` are every declaration,
    the viewer's (named "") first."""
    _, args = SPEC.parse(argv)
    write = bash_script if args.shell == "bash" else zsh_script
    sys.stdout.write(write(commands))
    return EXIT_OK


def bash_script(commands: Sequence[Command]) -> str:
    """A bash completion function for `proftui` and the line registering it."""
    named = [c for c in commands if c.name]
    viewer = next(c for c in commands if not c.name)
    branches = [_bash_branch(c, c.name) for c in named] + [_bash_branch(viewer, "*")]
    return f"""\
# bash completion for proftui, written by `proftui completion bash`. To use it, put
#   eval "$(proftui completion bash)"
# in ~/.bashrc, or save it as ~/.local/share/bash-completion/completions/proftui
_proftui_files() {{
    compopt -o filenames 2>/dev/null
    local IFS=$'\\n'
    COMPREPLY+=($(compgen -f -- "$cur"))
}}

_proftui() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
    # bash splits --by=type at the =: complete the value of the option before it.
    if [[ $cur == = ]]; then
        cur=
    elif [[ $prev == = ]]; then
        prev=${{COMP_WORDS[COMP_CWORD-2]}}
    fi
    local command= options= words= value=
    ((COMP_CWORD > 1)) && command=${{COMP_WORDS[1]}}
    case $command in
{"".join(branches)}    esac
    COMPREPLY=()
    if [[ -z $value && $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    elif [[ $words == :files ]]; then
        _proftui_files
    else
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    fi
    # The first word is a command, or the path of a trace to open in the viewer.
    if ((COMP_CWORD == 1)) && [[ $cur != -* ]]; then
        COMPREPLY+=($(compgen -W {shlex.quote(" ".join(c.name for c in named))} -- "$cur"))
    fi
}}
complete -F _proftui proftui
"""


def _bash_branch(command: Command, pattern: str) -> str:
    """The case branch of one command: its options; what its positionals complete to; and,
    after an option taking a value, that value's completion (`value` set: no options then)."""
    options = " ".join(f for a in command.args() if a.is_option for f in a.flags)
    positionals = _bash_words(a for a in command.args() if not a.is_option)
    lines = [f"        {pattern})",
             f"            options={shlex.quote(options)}",
             f"            words={shlex.quote(positionals)}",
             "            case $prev in"]
    for arg in command.args():
        if arg.is_option and arg.takes_value:
            lines.append(f"                {'|'.join(arg.flags)}) value=1; "
                         f"words={shlex.quote(_bash_words([arg]))} ;;")
    lines += ["            esac", "            ;;"]
    return "\n".join(lines) + "\n"


def _bash_words(found: Iterable[Arg]) -> str:
    """What a value of these arguments completes to: `:files`, their choices, or nothing."""
    args = list(found)
    if any(a.files for a in args):
        return ":files"
    return " ".join(c for a in args for c in a.choices() or ())


def zsh_script(commands: Sequence[Command]) -> str:
    """A zsh completion function (#compdef) for `proftui`."""
    named = [c for c in commands if c.name]
    viewer = next(c for c in commands if not c.name)
    described = "\n".join(f"    {_zsh_quote(f'{c.name}:{c.summary}')}" for c in named)
    branches = "".join(f"    {c.name})\n{_zsh_arguments(c, 6)}      ;;\n" for c in named)
    return f"""\
#compdef proftui
# zsh completion for proftui, written by `proftui completion zsh`. To use it, save it as
# _proftui in a folder of $fpath (before compinit runs), or: source <(proftui completion zsh)

_proftui() {{
  local -a commands
  commands=(
{described}
  )
  # The first word is a command, or the path of a trace to open in the viewer.
  if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then
    _describe -t commands 'command' commands
    _files
    return
  fi
  if (( ${{commands[(I)$words[2]:*]}} )); then
    shift words
    (( CURRENT-- ))
  fi
  case $words[1] in
{branches}    *)
{_zsh_arguments(viewer, 6)}      ;;
  esac
}}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _proftui "$@"
else
  compdef _proftui proftui
fi
"""


def _zsh_arguments(command: Command, indent: int) -> str:
    """An _arguments call completing `command`'s options and positionals."""
    specs: list[str] = []
    for item in command.items():
        group = item.args if isinstance(item, Group) else (item,)
        for arg in group:
            specs += _zsh_specs(arg, group)
    pad = " " * indent
    return f"{pad}_arguments -s \\\n" + " \\\n".join(f"{pad}  {s}" for s in specs) + "\n"


def _zsh_specs(arg: Arg, group: tuple[Arg, ...]) -> list[str]:
    """One arg as _arguments specs: '(excluded)--flag[help]:MESSAGE:action' per flag, or
    'N:message:action' for the Nth positional."""
    action = ("_files" if arg.files else
              f"({' '.join(arg.choices() or ())})" if arg.choices() else " ")
    if not arg.is_option:
        optional = ":" if arg.keywords.get("nargs") == "?" else ""
        return [_zsh_quote(f":{optional}{arg.metavar.lower()}:{action}")]
    helped = arg.help if len(arg.help) <= ZSH_HELP else arg.help[:ZSH_HELP - 1] + "…"
    helped = helped.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    value = f":{arg.metavar.replace(':', '-')}:{action}" if arg.takes_value else ""
    excluded = [f for a in group for f in a.flags] if len(group) > 1 else list(arg.flags)
    if arg.flags[0] in ("-h", "-V"):  # --help and --version end the command line
        excluded = ["-", "*"]
    prefix = "*" if arg.repeats else f"({' '.join(excluded)})"
    return [_zsh_quote(f"{prefix}{flag}[{helped}]{value}") for flag in arg.flags]


def _zsh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
