"""`proftui watch DIR`: follow a profile folder as a job writes it (the app, run by
tui.launch), and `proftui summary DIR --watch`, its headless form: a line per new rank or
step."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

from proftui.tui.commands.common import EXIT_OK, TRACE, json_text
from proftui.tui.commands.spec import Arg, Command
from proftui.tui.text.format import fmt_duration, plural
from proftui.tui.text.safe import safe

if TYPE_CHECKING:
    from proftui.core.analysis.growth import NewGroup, NewStep


def _check_interval(parser: argparse.ArgumentParser, seconds: float) -> None:
    if not seconds > 0:
        parser.error("--interval wants a number of seconds above 0")


WATCH = Arg("--watch", action="store_true",
            help="follow the folder as a job writes it: ranks, cycle traces and tables are "
                 "read once complete (see proftui watch)")
INTERVAL = Arg("--interval", type=float, default=1.0, metavar="S", check=_check_interval,
               help="following a folder: seconds between looks at a file being written, "
                    "and between polls without file events (default 1)")
POLL = Arg("--poll", action="store_true",
           help="following a folder: poll it rather than wait for file events")
FOLLOW = (INTERVAL, POLL)

SPEC = Command(
    "watch", "follow a profile folder as a job writes it",
    "Open the viewer on a profile folder and follow it as the job writes it: new ranks, new "
    "cycle traces (schedule(repeat=...)) and new summary tables are read once complete (a "
    "file whose size holds and whose end is valid; a torch_npu rank once its profiler_info "
    "is written). The Iterations and Cluster panes and the advice grow; the view stays "
    "where it is. The same as proftui DIR --watch.",
    (*TRACE, *FOLLOW),
    ("proftui watch ./prof_out",
     "proftui watch --poll --interval 5 /nfs/job/prof   (a network file system: no events)",
     "proftui summary ./prof_out --watch      (headless: a line per new rank or step)"),
    notes="File events come from watchfiles (pip install 'proftui[watch]'); without it, or "
          "where the system refuses (inotify limits), the folder is polled.")


def check_folder(path: str) -> None:
    """One sentence when `path` is no folder to follow."""
    from proftui.core.model.errors import ProftuiError

    if not os.path.isdir(path):
        raise ProftuiError(f"{path}: --watch follows a folder a job writes into; this is "
                           "not a folder." if os.path.exists(path)
                           else f"{path}: no such folder.")


def appeared_line(found: NewGroup | NewStep) -> str:
    """One line of `summary --watch`: a new rank with its median step, or a new step."""
    from proftui.core.analysis.growth import NewGroup

    if isinstance(found, NewGroup):
        median = (f", median step {fmt_duration(found.median_step_ns)}"
                  if found.median_step_ns is not None else "")
        return (f"+ {safe(found.group or found.where)}: {plural(found.steps, 'step')}"
                f"{median}")
    where = f" [{safe(found.group)}]" if found.group else ""
    length = fmt_duration(found.dur_ns) if found.dur_ns is not None else "length unknown"
    return f"+ step {found.number}{where}: {length}"


def appeared_json(found: NewGroup | NewStep) -> dict:
    """One line of `summary --watch --json` (docs/json.md)."""
    from proftui.core.analysis.growth import NewGroup

    if isinstance(found, NewGroup):
        return {"appeared": "group", "group": found.group, "where": found.where,
                "steps": found.steps,
                "median_step_ns": found.median_step_ns}
    return {"appeared": "step", "group": found.group, "iteration": found.number,
            "dur_ns": found.dur_ns}


def follow_summary(args: argparse.Namespace) -> int:
    """`summary DIR --watch`: a line per new rank or step until Ctrl-C (exit 0)."""
    from proftui.core.load.watch import ProfileWatcher

    check_folder(args.path)
    watcher = ProfileWatcher(args.path, args.interval, args.poll)
    stop = threading.Event()
    sys.stderr.write(f"following {safe(args.path)} by {watcher.mode}; Ctrl-C stops\n")
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda *_: stop.set())  # the watch ends at its next look
    try:
        _print_growth(args, watcher, stop)
    finally:
        signal.signal(signal.SIGINT, previous)
    return EXIT_OK


def _print_growth(args: argparse.Namespace, watcher, stop: threading.Event) -> None:  # noqa: ANN001
    from proftui.core.analysis.growth import Seen, appeared
    from proftui.core.analysis.overview import read_overview
    from proftui.core.load.watch import open_complete
    from proftui.core.model.errors import ProftuiError

    seen = Seen()
    for complete in watcher.changes(stop):
        try:
            index = open_complete(args.path, complete, args.run, not args.no_cache)
            _, _, found = read_overview(index)
        except ProftuiError as exc:  # not yet enough to open: the next change may be
            sys.stderr.write(f"proftui: waiting: {safe(exc)}\n")
            continue
        new, seen = appeared(seen, index.meta.get("profile") or {}, found)
        for item in new:
            if args.json:
                sys.stdout.write(json_text(appeared_json(item), indent=False) + "\n")
            else:
                sys.stdout.write(appeared_line(item) + "\n")
        sys.stdout.flush()
