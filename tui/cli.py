"""The `proftui` command line: open a trace in the app, or run a headless command.

Exit status: 0 success, 1 failure, 2 bad usage or unreadable input. Errors are one sentence on
stderr; results go to stdout; progress bars go to stderr, and only when it is a terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from importlib import import_module
from typing import Any

from proftui import __version__
from proftui.tui.commands.common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from proftui.tui.safe import safe, safe_lines

# The headless commands: `proftui NAME` runs cmd_NAME of proftui.tui.commands.NAME, imported
# when it runs (opening the viewer, the common case, loads none of them).
COMMANDS = ("info", "index", "ops", "iterations", "export", "summary", "breakdown", "advise",
            "diff", "table", "cluster", "memory", "comm", "cache")


def command(name: str) -> Callable[[list[str]], int]:
    """The function running the headless command `name` (one of COMMANDS)."""
    return getattr(import_module(f"proftui.tui.commands.{name}"), f"cmd_{name}")


USAGE = f"""usage: proftui PATH                 open a trace or profile directory in the viewer
       proftui BASE NEW               open two, one above the other, to compare them
       proftui info PATH [--json]     what it holds: tracks, iterations, tables, problems
       proftui summary PATH [--json]  one screen: step time, top op types, busy ratios
       proftui index PATH             build the cache (with a progress bar)
       proftui ops PATH [--iteration N | --range T0:T1] [--by name|category|type]
                   [--side all|device|host] [--sort COL] [--top K] [--json]
                                      operator statistics of a window
       proftui iterations PATH [--json]
                                      iterations, their breakdown, slowest and outliers
       proftui breakdown PATH [--iteration N | --range T0:T1] [--json]
                                      where each step's time goes, device and host
       proftui advise PATH [--set RULE.KEY=VALUE ...] [--json] | advise --rules
                                      what to fix first, with evidence ranges
       proftui diff BASE NEW [--by name|category|type] [--side ...] [--top K]
                   [--skip N | --iterations A:B] [--op-map FILE] [--gate PCT] [--json]
                   [--csv FILE]           did the fix help: step, parts and ops compared
       proftui table PATH [NAME] [--group G] [--where EXPR] [--sort COL] [--desc|--asc]
                   [--columns A,B,...] [--top K] [--json | --csv [-o FILE] [--force]]
                                      the summary tables (op_statistic ...): list, or one
                                      filtered and sorted
       proftui cluster PATH [--iteration N] [--top K] [--json]
                                      ranks compared: the slow one, who waits for whom
       proftui memory PATH [--iteration N | --range T0:T1] [--top K] [--json]
                                      peak memory per rank, when, the op running then,
                                      and the top allocating operators
       proftui comm PATH [--top K] [--json]
                                      communication: collectives' times, bandwidth per
                                      transport and link, slow links, small packets
       proftui export PATH (--range T0:T1 | --iteration N | --all) [--tracks PATTERN]
                   [--what events|ops] [--by name|category|type] [--args KEY,...]
                   [--unit ns|us|ms|s] [--time relative|absolute] [--raw] [--force]
                   [-o FILE|-]
                                      the events or ops of a window as CSV
       proftui cache [clear] [--json]  what the cache holds (size, last use, sources);
                                      clear empties it (cap: PROFTUI_CACHE_MAX, default 10G)
       proftui --version

Every command takes --help (with examples) and --version. A folder holding several separate
runs (the same rank twice, captures far apart in time, clocks of different kinds) is refused
with the list of its runs: --run N (with any command) or the run's folder opens one.
Exit status: 0 success, 1 failure, 2 bad usage or unreadable input. Results go to stdout,
errors and progress to stderr.
proftui {__version__}
"""


def main(argv: list[str] | None = None) -> int:
    from proftui.core.discover.runs import SeveralRunsError
    from proftui.core.model.errors import Cancelled, ExportError, ExportExists, ProftuiError

    if argv is None:  # the program itself: even a bug's traceback must not carry raw escapes
        sys.excepthook = _escaped_traceback
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        sys.stderr.write(USAGE)
        return EXIT_USAGE
    if argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return EXIT_OK
    if argv[0] in ("-V", "--version"):
        sys.stdout.write(f"proftui {__version__}\n")
        return EXIT_OK
    try:
        if argv[0] in COMMANDS:
            return command(argv[0])(argv[1:])
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
