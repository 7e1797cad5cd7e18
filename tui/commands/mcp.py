"""`proftui mcp`: a Model Context Protocol server over stdio, for an AI assistant."""

from __future__ import annotations

import importlib.util
import os
import sys

from proftui.tui.commands.common import EXIT_FAILURE, EXIT_OK
from proftui.tui.commands.spec import Arg, Command
from proftui.tui.text.safe import safe

SPEC = Command(
    "mcp", "a Model Context Protocol server for AI assistants",
    "Serve the headless commands to an AI assistant (an MCP client) over stdin and stdout: "
    "the tools info, summary, breakdown, advise, ops, iterations, diff, cluster, comm, "
    "memory, table and export, each answering its command's JSON (docs/json.md), with typed "
    "inputs and bounded answers. Read-only: it reads profiles only inside the ROOT folders "
    "(symlinks followed; a path out of them is refused). Needs pip install 'proftui[mcp]'.",
    (Arg("roots", nargs="*", metavar="ROOT", files=True,
         help="the folders the server may read (default: the current folder)"),),
    ("proftui mcp ~/profiles",
     "claude mcp add proftui -- proftui mcp ~/profiles",
     '{"mcpServers": {"proftui": {"command": "proftui", "args": ["mcp", "/data/profiles"]}}}'))


def cmd_mcp(argv: list[str]) -> int:
    _, args = SPEC.parse(argv)
    if importlib.util.find_spec("mcp") is None:
        sys.stderr.write("proftui: proftui mcp needs the MCP SDK: pip install 'proftui[mcp]'.\n")
        return EXIT_FAILURE
    from proftui.tui.commands.mcp_server import serve
    from proftui.tui.commands.mcp_tools import Tools

    tools = Tools(args.roots or [os.getcwd()])
    sys.stderr.write(f"proftui mcp: serving over stdio, reading inside "
                     f"{', '.join(safe(r) for r in tools.roots)}\n")
    serve(tools)
    return EXIT_OK
