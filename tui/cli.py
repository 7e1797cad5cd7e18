"""The `proftui` command line: open a trace in the app, or run a headless command.

Exit status: 0 success, 1 failure, 2 bad usage or unreadable input. Errors are one sentence on
stderr; results go to stdout; progress bars go to stderr, and only when it is a terminal.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any

# numpy's BLAS starts a thread per core as it is imported, and proftui multiplies no matrices:
# one thread spares the start-up ~30 ms on two cores (a setting of the user's own wins).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from proftui import __version__  # noqa: E402 (after the setting, which numpy reads as loaded)
from proftui.tui.commands.common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from proftui.tui.commands.spec import version_text
from proftui.tui.text.safe import safe, safe_lines

if TYPE_CHECKING:
    from proftui.tui.commands.spec import Command

# The headless commands: `proftui NAME` runs cmd_NAME of proftui.tui.commands.NAME, imported
# when it runs (opening the viewer, the common case, loads none of them). Each module declares
# its arguments once, in SPEC; usage, help and completion are made from the declarations.
COMMANDS = ("info", "index", "ops", "iterations", "export", "summary", "breakdown", "advise",
            "diff", "table", "cluster", "memory", "comm", "cache", "mcp", "report", "serve",
            "watch")
# Those that open the app: declared in their module like the others, run by tui.launch (the
# commands come before the app in the import order).
OPENS_APP = ("watch",)
# `proftui completion` is not among them: it answers about proftui itself, not a trace.
# What a command's line in the usage leaves room for before its summary.
SYNOPSIS_WIDTH = 38

FOOTER = """
Every command takes --help (with examples) and --version. A folder holding several separate
runs (the same rank twice, captures far apart in time, clocks of different kinds) is refused
with the list of its runs: --run N (with any command) or the run's folder opens one.
Exit status: 0 success, 1 failure, 2 bad usage or unreadable input. Results go to stdout,
errors and progress to stderr. Completion: eval "$(proftui completion bash)" (or zsh).
"""


def command(name: str) -> Callable[[list[str]], int]:
    """The function running the command `name` (one of COMMANDS)."""
    module = "proftui.tui.launch" if name in OPENS_APP else f"proftui.tui.commands.{name}"
    return getattr(import_module(module), f"cmd_{name}")


def declarations() -> list[Command]:
    """Every command's declaration: the viewer's (`proftui PATH`), those of COMMANDS, then
    `completion`. Their modules import nothing heavy until a command runs."""
    from proftui.tui.commands.completion import SPEC as COMPLETION
    from proftui.tui.launch import SPEC as OPEN

    named = [import_module(f"proftui.tui.commands.{name}").SPEC for name in COMMANDS]
    return [OPEN, *named, COMPLETION]


def usage() -> str:
    """What `proftui` and `proftui --help` print: each command's synopsis and summary."""
    lines = []
    for spec in declarations():
        for synopsis, summary in ((spec.synopsis(), spec.summary), *spec.forms):
            lead = "usage: " if not lines else " " * len("usage: ")
            if len(synopsis) + 2 <= SYNOPSIS_WIDTH:
                lines.append(f"{lead}{synopsis:<{SYNOPSIS_WIDTH}}{summary}")
            else:  # the summary below, where the others' are
                lines += [f"{lead}{synopsis}", " " * (len(lead) + SYNOPSIS_WIDTH) + summary]
    lines.append(" " * len("usage: ") + "proftui --version")
    return "\n".join(lines) + "\n" + FOOTER + f"proftui {__version__}\n"


def main(argv: list[str] | None = None) -> int:
    """Run `proftui ARGV` (sys.argv's when None) and return its exit status."""
    if argv is None:  # the program itself: even a bug's traceback must not carry raw escapes
        sys.excepthook = _escaped_traceback
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        sys.stderr.write(usage())
        return EXIT_USAGE
    if argv[0] in ("-h", "--help"):
        sys.stdout.write(usage())
        return EXIT_OK
    if argv[0] in ("-V", "--version"):
        sys.stdout.write(version_text())
        return EXIT_OK
    opening = argv[0] in OPENS_APP or argv[0] not in (*COMMANDS, "completion")
    collecting = gc.isenabled()
    # Until the viewer's first frame the cyclic collector is off (the app turns it on again then,
    # see ProftuiApp._panes_ready): importing numpy and Textual and building the screen make
    # some hundred thousand objects, and its passes over them took 0.1-0.2 s of the way there.
    if opening:
        gc.disable()
    try:
        return _run(argv)
    finally:
        if collecting:
            gc.enable()


def _run(argv: list[str]) -> int:
    """`proftui ARGV` past the usage, its errors said as one sentence."""
    # Imported past the usage, which answers before numpy is loaded (runs need it).
    from proftui.core.discover.runs import SeveralRunsError
    from proftui.core.model.errors import Cancelled, ExportError, ExportExists, ProftuiError

    try:
        if argv[0] in COMMANDS:
            return command(argv[0])(argv[1:])
        if argv[0] == "completion":
            from proftui.tui.commands.completion import cmd_completion

            return cmd_completion(argv[1:], declarations())
        from proftui.tui.launch import cmd_open

        return cmd_open(argv, COMMANDS)
    except Cancelled:
        sys.stderr.write("proftui: cancelled.\n")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        sys.stderr.write("proftui: interrupted.\n")
        return 130
    except ExportExists as exc:
        sys.stderr.write(f"proftui: {safe(str(exc).rstrip('.'))}; --force overwrites it.\n")
        return EXIT_FAILURE
    except ExportError as exc:  # the input was fine; the output could not be written
        sys.stderr.write(f"proftui: {safe(exc)}\n")
        return EXIT_FAILURE
    except SeveralRunsError as exc:
        runs = [safe(line) for line in exc.lines()]  # folder names may hold escapes
        sys.stderr.write(f"proftui: {safe(exc)}\n" + "\n".join(runs) + "\n")
        return EXIT_USAGE
    except ProftuiError as exc:
        sys.stderr.write(f"proftui: {safe(exc)}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_OK


def _escaped_traceback(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
    """The default traceback on stderr, with control characters of messages (which may quote
    trace text or file names) shown escaped."""
    import traceback

    sys.stderr.write(safe_lines("".join(traceback.format_exception(kind, exc, tb))))


def _quiet_stdout() -> None:
    """After the reader of a pipe went away (`| head`), point stdout at /dev/null so that
    flushing it at exit does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
