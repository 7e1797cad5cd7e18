"""`proftui serve`: the viewer in a web browser, served by textual-serve (an optional extra)."""

from __future__ import annotations

import argparse
import errno
import importlib.util
import os
import shlex
import socket
import sys

from proftui.tui.commands.common import EXIT_FAILURE, EXIT_OK, TRACE, is_loopback
from proftui.tui.commands.spec import Arg, Command
from proftui.tui.text.safe import safe

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8000
# Host names that are this machine's loopback whatever the resolver says.


def _port(text: str) -> int:
    """A TCP port for --port: 1 to 65535."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 1 to 65535, not {text!r}")
    return int(text)


def _theme_names() -> list[str]:
    from proftui.themes import THEME_NAMES

    return sorted(THEME_NAMES)


SPEC = Command(
    "serve", "the viewer in a web browser (textual-serve)",
    "Serve the viewer (`proftui PATH`, the same app and keys) to a web browser: each browser "
    "tab that opens the printed address runs its own viewer on this machine. The address is "
    "local (127.0.0.1) unless --public is given; from another machine, forward the port over "
    "SSH (the command prints how). Needs pip install 'proftui[serve]'.",
    (*TRACE,
     Arg("new", nargs="?", files=True, help="a second profile: both open one above the other "
                                            "to compare, as with proftui BASE NEW"),
     Arg("--theme", choices=_theme_names, default=None, help="colour theme (default dark)"),
     Arg("--host", default=DEFAULT_HOST,
         help=f"the address to listen on (default {DEFAULT_HOST}; one that is not a loopback "
              "address needs --public)"),
     Arg("--port", type=_port, default=DEFAULT_PORT, metavar="N",
         help=f"the TCP port to listen on (default {DEFAULT_PORT})"),
     Arg("--public", action="store_true",
         help="allow a --host reachable from other machines (0.0.0.0, a LAN address): anyone "
              "who reaches the port can then read the profile")),
    ("proftui serve trace.json                  (then open http://127.0.0.1:8000)",
     "ssh -L 8000:127.0.0.1:8000 gpu-node       (on your laptop, to reach it)",
     "proftui serve PROF_dir --port 8100 --theme light",
     "proftui serve BASE NEW",
     "proftui serve trace.json --host 0.0.0.0 --public"))


def cmd_serve(argv: list[str]) -> int:
    parser, args = SPEC.parse(argv)
    if args.new is not None and args.run is not None:
        parser.error("--run opens one run of one profile; to compare, give each run's folder")
    if not is_loopback(args.host) and not args.public:
        parser.error(f"{args.host} is not a loopback address: anyone who reaches it could read "
                     "the profile; add --public to serve it there all the same")
    if importlib.util.find_spec("textual_serve") is None:
        sys.stderr.write("proftui: proftui serve needs textual-serve: "
                         "pip install 'proftui[serve]'.\n")
        return EXIT_FAILURE
    check_inputs(args.path, args.new)
    check_port_free(args.host, args.port)
    if args.public:
        sys.stderr.write(f"proftui serve: warning: listening on {safe(args.host)}, not on a "
                         "loopback address: anyone who reaches this port can read the profile "
                         "and use the viewer as you (its export writes files here).\n")
    print("\n".join(greeting(args.host, args.port, args.path)), flush=True)
    from proftui.tui.commands.serve_server import serve

    serve(app_command(args), args.host, args.port, title=f"proftui {os.path.basename(args.path)}",
          public=args.public)
    return EXIT_OK


def check_inputs(path: str, new: str | None) -> None:
    """Say now, in the terminal, what the viewer would say about the paths in the browser."""
    from proftui.core.load.loader import check_openable
    from proftui.core.model.errors import ProftuiError

    for given in (path, new):
        if given is None:
            continue
        if not os.path.exists(given):
            raise ProftuiError(f"{given}: no such file or directory.")
        check_openable(given)


def check_port_free(host: str, port: int) -> None:
    """Listen on (host, port) for a moment, as the server will (address reuse on, so that a
    port in TIME_WAIT is free): a port in use, an address not on this machine or a port
    needing root is said in one sentence before the server starts."""
    from proftui.core.model.errors import ProftuiError

    try:
        probe = socket.create_server((host.strip("[]"), port), reuse_port=False)
    except OSError as exc:
        reason = (os.strerror(exc.errno) if exc.errno else str(exc)).lower()
        hint = "; --port N picks another" if exc.errno in (errno.EADDRINUSE, errno.EACCES) else ""
        raise ProftuiError(f"cannot listen on {host} port {port}: {reason}{hint}.") from None
    probe.close()


def app_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve runs for each browser session (it hands it to the
    shell): this Python running `proftui PATH` with the viewer's options, each word quoted,
    paths made absolute (the server's folder is the app's, but a path is clearer so)."""
    words = [sys.executable, "-m", "proftui", os.path.abspath(args.path)]
    if args.new is not None:
        words.append(os.path.abspath(args.new))
    if args.run is not None:
        words += ["--run", str(args.run)]
    if args.no_cache:
        words.append("--no-cache")
    if args.theme is not None:
        words += ["--theme", args.theme]
    return shlex.join(words)


def greeting(host: str, port: int, path: str) -> list[str]:
    """What the command prints before it serves: the address to open and how to reach it from
    another machine."""
    wildcard = host in ("0.0.0.0", "::")  # every address of this machine: name one
    shown = socket.gethostname() if wildcard else f"[{host}]" if ":" in host else host
    target = "localhost" if wildcard else shown
    return [f"proftui serve: {safe(os.path.basename(os.path.abspath(path)))} at "
            f"http://{shown}:{port}/ (Ctrl+C stops)",
            f"from another machine: ssh -L {port}:{target}:{port} {socket.gethostname()}, "
            f"then open http://localhost:{port}/"]
