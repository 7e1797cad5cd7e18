"""The Model Context Protocol server of `proftui mcp`: the tools of mcp_tools over stdio, with
the `mcp` SDK (the optional extra `proftui[mcp]`), imported only when a server is made."""

from __future__ import annotations

import sys
import traceback
from typing import Any

from proftui import __version__
from proftui.core.model.errors import ProftuiError
from proftui.tui.commands.mcp_tools import TOOLS, Tools, description, input_schema

INSTRUCTIONS = (
    "proftui answers questions about AI-training profiles (Ascend msprof / torch_npu, PyTorch "
    "Kineto, Paddle): start with info or summary on a profile folder or trace file, then "
    "advise for what to fix first, breakdown and iterations for the steps, ops for the "
    "operators of a window, cluster and comm for the ranks, diff for two profiles. Times in "
    "the JSON are integer nanoseconds. Paths are read only inside the server's roots.")


def make_server(tools: Tools):
    """An MCP server (the SDK's low-level Server) answering with `tools`."""
    import anyio
    import mcp.types as types
    from mcp.server import Server

    listing = [types.Tool(name=t.name, description=description(t), input_schema=input_schema(t),
                          annotations=types.ToolAnnotations(read_only_hint=True,
                                                            destructive_hint=False,
                                                            idempotent_hint=True,
                                                            open_world_hint=False))
               for t in TOOLS]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # Loading a profile takes seconds: a worker thread, so that the session stays live.
        try:
            texts = await anyio.to_thread.run_sync(tools.call, params.name,
                                                   dict(params.arguments or {}))
        except ProftuiError as exc:
            return _error(types, _sentence(exc))
        except Exception as exc:  # a bug: its traceback to the log (stderr), one line back
            traceback.print_exc(file=sys.stderr)
            return _error(types, f"internal error ({type(exc).__name__}: {exc}); the server's "
                                 "log has the traceback.")
        return types.CallToolResult(content=[types.TextContent(type="text", text=t)
                                             for t in texts])

    return Server("proftui", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _sentence(exc: ProftuiError) -> str:
    """The error as the command line says it (a folder of several runs lists them)."""
    lines = exc.lines() if hasattr(exc, "lines") else []
    return "\n".join([str(exc), *lines])


def _error(types: Any, text: str):
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=True)


def serve(tools: Tools) -> None:
    """Answer one client over stdin and stdout until it closes them."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = make_server(tools)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)
