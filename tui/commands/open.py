"""`proftui PATH`: open a trace in the terminal viewer."""

from __future__ import annotations

import os
import sys

from proftui.tui.commands.common import EXIT_OK, EXIT_USAGE, new_parser
from proftui.tui.safe import safe


def cmd_open(argv: list[str], commands: tuple[str, ...] = ()) -> int:
    """Open the app on argv's path; `commands` (the registry's names) are listed when the
    path does not exist, as the user may have mistyped one."""
    from proftui.themes import DEFAULT_THEME, THEME_NAMES

    parser = new_parser("", "Open a trace in the terminal viewer (? in the viewer lists the "
                        "keys).",
                        "  proftui trace.json\n  proftui --theme light PROF_000001_...\n"
                        "  proftui before.json after.json   (compare: base above, new below)\n"
                        "  NO_COLOR=1 proftui trace.json\n"
                        "  proftui info trace.json      (headless)")
    parser.add_argument("new", nargs="?", help="a second profile: both open one above the "
                        "other to compare (base first, then new; see also proftui diff)")
    parser.add_argument("--theme", choices=sorted(THEME_NAMES), default=None,
                        help="colour theme (default dark; T switches at run time)")
    args = parser.parse_args(argv)
    from proftui.core.errors import ProftuiError
    from proftui.core.load import check_openable

    for path in (args.path, args.new):
        if path is not None and not os.path.exists(path):
            raise ProftuiError(f"{path}: no such file or directory (commands: "
                               f"{', '.join(commands)}; see proftui --help).")
        if path is not None:  # what shows at once is said at once, as the commands say it
            check_openable(path)
    theme = THEME_NAMES[args.theme] if args.theme else DEFAULT_THEME
    if args.new is not None:
        if args.run is not None:
            parser.error("--run opens one run of one profile; to compare, give each run's "
                         "folder")
        from proftui.tui.compare_app import CompareApp

        app = CompareApp(args.path, args.new, use_cache=not args.no_cache, theme=theme)
    else:
        from proftui.tui.app import ProftuiApp

        app = ProftuiApp(args.path, use_cache=not args.no_cache, theme=theme, run=args.run)
    app.run()
    return exit_status(app)


def exit_status(app) -> int:
    """After the app: the sentence of a trace it could not open, said again where scripts
    and the shell see it (as the commands say it), and exit status 2; else 0."""
    if app.error:
        sys.stderr.write(f"proftui: {safe(app.error)}\n")
        return EXIT_USAGE
    return EXIT_OK
