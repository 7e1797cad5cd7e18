"""`proftui PATH`: open a trace in the terminal viewer."""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import Future

from proftui.tui.commands.common import EXIT_OK, EXIT_USAGE, TRACE, peaks_asked, peaks_options
from proftui.tui.commands.spec import Arg, Command
from proftui.tui.commands.watch import FOLLOW, WATCH, check_folder
from proftui.tui.commands.watch import SPEC as WATCH_SPEC
from proftui.tui.text.safe import safe


def _theme_names() -> list[str]:
    from proftui.themes import THEME_NAMES

    return sorted(THEME_NAMES)


SPEC = Command(
    "", "view a trace or profile directory (two: compare them)",
    "Open a trace in the terminal viewer (? in the viewer lists the keys).",
    (*TRACE,
     Arg("new", nargs="?", files=True, help="a second profile: both open one above the other "
                                            "to compare (base first, then new; see also "
                                            "proftui diff)"),
     Arg("--theme", choices=_theme_names, default=None,
         help="colour theme (default dark; T switches at run time)"),
     WATCH, *FOLLOW, *peaks_options()),
    ("proftui trace.json",
     "proftui --theme light PROF_000001_...",
     "proftui before.json after.json   (compare: base above, new below)",
     "proftui ./prof_out --watch   (follow a profile being written: proftui watch)",
     "NO_COLOR=1 proftui trace.json",
     "proftui info trace.json      (headless)"))


def cmd_open(argv: list[str], commands: tuple[str, ...] = ()) -> int:
    """Open the app on argv's path; `commands` (the registry's names) are listed when the
    path does not exist, as the user may have mistyped one."""
    from proftui.themes import DEFAULT_THEME, THEME_NAMES

    parser, args = SPEC.parse(argv)
    from proftui.core.load.loader import check_openable
    from proftui.core.model.errors import ProftuiError

    if args.watch:
        if args.new is not None:
            parser.error("--watch follows one folder; compare two once they are written")
        return _open_app(args, THEME_NAMES[args.theme] if args.theme else DEFAULT_THEME)
    for path in (args.path, args.new):
        if path is not None and not os.path.exists(path):
            raise ProftuiError(f"{path}: no such file or directory (commands: "
                               f"{', '.join(commands)}; see proftui --help).")
        if path is not None:  # what shows at once is said at once, as the commands say it
            check_openable(path)
    theme = THEME_NAMES[args.theme] if args.theme else DEFAULT_THEME
    if args.peaks:  # a bad file is said now, not when the Ops pane's E first asks
        from proftui.core.perf.hardware import PeaksError, load_peaks

        try:
            load_peaks(args.peaks)
        except PeaksError as exc:
            raise ProftuiError(str(exc)) from None
    if args.new is not None:
        if args.run is not None:
            parser.error("--run opens one run of one profile; to compare, give each run's "
                         "folder")
        from proftui.tui.compare_app import CompareApp

        app = CompareApp(args.path, args.new, use_cache=not args.no_cache, theme=theme)
        app.run()
        return exit_status(app)
    return _open_app(args, theme)


def cmd_watch(argv: list[str]) -> int:
    """`proftui watch DIR`: the app following a folder as a job writes it."""
    from proftui.themes import DEFAULT_THEME

    _, args = WATCH_SPEC.parse(argv)
    args.watch = True
    return _open_app(args, DEFAULT_THEME)


def _open_app(args, theme: str) -> int:  # noqa: ANN001 (the parsed arguments)
    """Run the app on `args.path` (following it with `args.watch`) and return its status."""
    follow = None
    if args.watch:  # a folder being written may hold nothing complete yet: not checked more
        from proftui.tui.app.following import FollowOptions

        check_folder(args.path)
        follow = FollowOptions(args.interval, args.poll)
    # Begun before the app's modules are imported: reading the cache goes on beside that.
    cached = (None if args.no_cache or follow is not None
              else read_cached(args.path, args.run))
    from proftui.tui.app import ProftuiApp

    app = ProftuiApp(args.path, use_cache=not args.no_cache, theme=theme, run=args.run,
                     cached=cached, peaks=peaks_asked(args), follow=follow)
    app.run()
    return exit_status(app)


def exit_status(app) -> int:
    """After the app: the sentence of a trace it could not open, said again where scripts
    and the shell see it (as the commands say it), and exit status 2; else 0."""
    if app.error:
        sys.stderr.write(f"proftui: {safe(app.error)}\n")
        return EXIT_USAGE
    return EXIT_OK


def read_cached(path: str, run: int | None) -> Future:
    """Start reading the trace at `path` from the cache, with its timeline rows, in a thread:
    its checksums are verified (in numpy, beside the interpreter's lock) while the app's modules
    are imported and its widgets built. The future's result is (index, rows), or None when the
    cache has no current entry or anything goes wrong: the app then loads the trace itself,
    and says why it cannot."""
    from proftui.core.load.loader import cached_trace
    from proftui.core.query.rows import rows_for

    found: Future = Future()

    def read() -> None:
        try:
            index = cached_trace(path, run)
            found.set_result(None if index is None else (index, rows_for(index)))
        except Exception:  # noqa: BLE001 - the app's own load says what is wrong
            found.set_result(None)

    # A daemon: quitting at once does not wait for it.
    threading.Thread(target=read, name="proftui-read-cached", daemon=True).start()
    return found
