"""`proftui serve`'s web server: textual-serve's, with the app's websocket kept to pages the
server itself gave (imported only when the command runs: textual-serve is an optional extra)."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from textual_serve.server import Server

from proftui.tui.commands.common import is_loopback


class ViewerServer(Server):
    """textual-serve's server running `command` (the viewer) once per browser session.

    A page of any other site open in the same browser could otherwise open the websocket to
    127.0.0.1 (websockets are not held to the same-origin rule) and so read the profile and
    type into the viewer. So the websocket is refused to a page whose origin is not the
    address asked for, and, unless `public`, to an address not naming the loopback (a name of
    the attacker's that resolves to 127.0.0.1: DNS rebinding)."""

    def __init__(self, command: str, host: str, port: int, title: str, public: bool) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.public = public

    def initialize_logging(self) -> None:
        # textual-serve logs each request; a problem (an app that did not start) is enough.
        logging.basicConfig(level=logging.WARNING, format="proftui serve: %(message)s")

    async def on_startup(self, app: web.Application) -> None:
        """Nothing: the command printed the address before serving."""

    async def handle_index(self, request: web.Request) -> Any:
        # The page names its websocket by the address the browser asked for (an SSH forward
        # to another local port, the machine's name on a LAN), not the one listened on. No
        # other request runs between this line and the page's use of it (no await between).
        self.public_url = f"{request.scheme}://{request.host}"
        return await super().handle_index(request)

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        if not allowed(request.host, request.headers.get("Origin"), self.public):
            raise web.HTTPForbidden(text="proftui serve: this page may not open the viewer.")
        return await super().handle_websocket(request)


def allowed(host: str, origin: str | None, public: bool) -> bool:
    """Whether a websocket asked for at `host` (the Host header) by a page of `origin` (None
    from a program that is not a browser page) may run the viewer."""
    if not public and not is_loopback(urlsplit(f"//{host}").hostname or ""):
        return False
    return origin is None or urlsplit(origin).netloc == host


def serve(command: str, host: str, port: int, title: str, public: bool) -> None:
    """Serve the viewer until Ctrl+C (or SIGTERM)."""
    ViewerServer(command, host, port, title, public).serve()
