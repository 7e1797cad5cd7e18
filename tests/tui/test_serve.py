"""`proftui serve`: the viewer served to a web browser by textual-serve. The checks made before
serving, the shell command each browser session runs, and the real thing in headless Chromium:
the page loads, the timeline paints, `w` zooms."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tui_support import run_cli

from proftui.themes import DARK
from proftui.tui.commands import serve as serve_command

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
KINETO = str(SAMPLES / "kineto_demo.pt.trace.json")
HAS_SERVE = importlib.util.find_spec("textual_serve") is not None
needs_serve = pytest.mark.skipif(not HAS_SERVE, reason="textual-serve is not installed "
                                                       "(pip install 'proftui[serve]')")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium here (.ci/run installs Debian's where apt-get can)")


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


# -- before serving ----------------------------------------------------------------------------


@pytest.mark.parametrize("port", ["0", "65536", "80x", "-1"])
def test_a_bad_port_is_one_sentence(capsys, port) -> None:
    code, out, err = run_cli(capsys, "serve", KINETO, "--port", port)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "a port is a number from 1 to 65535" in err


def test_a_port_in_use_is_said_before_serving(capsys) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        code, out, err = run_cli(capsys, "serve", KINETO, "--port", str(port))
    assert code == 2 and out == ""
    assert err == (f"proftui: cannot listen on 127.0.0.1 port {port}: address already in use; "
                   "--port N picks another.\n")


def test_a_path_that_does_not_open_is_said_before_serving(capsys, tmp_path) -> None:
    code, out, err = run_cli(capsys, "serve", tmp_path / "missing.json")
    assert code == 2 and out == "" and err.count("\n") == 1 and "no such file" in err
    notes = tmp_path / "notes.json"
    notes.write_text("these are notes, not a trace\n")
    code, out, err = run_cli(capsys, "serve", notes)
    assert code == 2 and out == "" and err.count("\n") == 1 and "notes.json" in err


def test_run_with_two_profiles_is_bad_usage(capsys) -> None:
    code, _, err = run_cli(capsys, "serve", "--run", "1", KINETO, KINETO)
    assert code == 2 and "--run opens one run" in err


@pytest.mark.parametrize(("host", "local"), [
    ("127.0.0.1", True), ("127.3.2.1", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("0.0.0.0", False), ("::", False), ("192.168.1.20", False),
    ("gpu-node.example.org", False)])
def test_what_counts_as_a_loopback_address(host, local) -> None:
    assert serve_command.is_loopback(host) is local


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20"])
def test_a_network_address_needs_public(capsys, host) -> None:
    code, out, err = run_cli(capsys, "serve", KINETO, "--host", host)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"{host} is not a loopback address" in err and "--public" in err


def test_without_textual_serve_one_sentence_says_how_to_install_it(capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "textual_serve", None)  # as if it were not installed
    assert run_cli(capsys, "serve", "--help")[0] == 0
    code, out, err = run_cli(capsys, "serve", KINETO)
    assert code == 1 and out == ""
    assert err == "proftui: proftui serve needs textual-serve: pip install 'proftui[serve]'.\n"


def test_the_help_runs_in_a_python_without_textual_serve() -> None:
    code = ("import sys\nsys.modules['textual_serve'] = None\n"
            "from proftui.tui.cli import main\nraise SystemExit(main(['--help']))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and "proftui serve PATH" in result.stdout, result.stderr


def test_the_app_command_quotes_each_word_for_the_shell(tmp_path) -> None:
    """textual-serve hands the command to the shell: a path with spaces, quotes and a `$`
    reaches the viewer as one word, unexpanded."""
    odd = tmp_path / "it's a \"demo\" $HOME" / "kineto demo.json"
    args = serve_command.SPEC.parse([str(odd), "--run", "2", "--no-cache", "--theme", "light",
                                     "--port", "9000"])[1]
    command = serve_command.app_command(args)
    words = [sys.executable, "-m", "proftui", str(odd), "--run", "2", "--no-cache",
             "--theme", "light"]
    assert shlex.split(command) == words
    said = subprocess.run(["sh", "-c", f"printf '%s\\0' {command}"], capture_output=True,
                          check=True, timeout=10).stdout
    assert said.decode().split("\0")[:-1] == words


def test_a_relative_path_is_made_absolute_and_a_second_profile_kept(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = serve_command.SPEC.parse(["base.json", "new dir"])[1]
    assert shlex.split(serve_command.app_command(args))[3:] == [
        str(tmp_path / "base.json"), str(tmp_path / "new dir")]


@needs_serve
def test_public_warns_and_says_the_address_and_the_ssh_forward(capsys, monkeypatch) -> None:
    from proftui.tui.commands import serve_server

    served = []
    monkeypatch.setattr(serve_server, "serve", lambda *args, **kw: served.append((args, kw)))
    port = free_port()
    code, out, err = run_cli(capsys, "serve", KINETO, "--host", "0.0.0.0", "--public",
                             "--port", str(port))
    assert code == 0
    assert err.startswith("proftui serve: warning: listening on 0.0.0.0, not on a loopback "
                          "address: anyone who reaches this port can read the profile")
    host = socket.gethostname()
    assert out.splitlines() == [
        f"proftui serve: kineto_demo.pt.trace.json at http://{host}:{port}/ (Ctrl+C stops)",
        f"from another machine: ssh -L {port}:localhost:{port} {host}, then open "
        f"http://localhost:{port}/"]
    (command, host_given, port_given), options = served[0]
    assert shlex.split(command) == [sys.executable, "-m", "proftui", KINETO]
    assert (host_given, port_given, options["public"]) == ("0.0.0.0", port, True)


@needs_serve
def test_a_local_address_gives_no_warning(capsys, monkeypatch) -> None:
    from proftui.tui.commands import serve_server

    monkeypatch.setattr(serve_server, "serve", lambda *args, **kw: None)
    port = free_port()
    code, out, err = run_cli(capsys, "serve", KINETO, "--port", str(port))
    assert code == 0 and err == ""
    assert f"ssh -L {port}:127.0.0.1:{port} " in out


@needs_serve
@pytest.mark.parametrize(("host", "origin", "public", "allowed"), [
    ("127.0.0.1:8000", "http://127.0.0.1:8000", False, True),
    ("localhost:9000", "http://localhost:9000", False, True),  # an SSH forward to 9000
    ("127.0.0.1:8000", None, False, True),  # a program, not a page
    ("127.0.0.1:8000", "http://evil.example", False, False),  # another site's page
    ("evil.example:8000", "http://evil.example:8000", False, False),  # DNS rebinding
    ("gpu-node:8000", "http://gpu-node:8000", True, True),
    ("gpu-node:8000", "http://evil.example", True, False)])
def test_who_may_open_the_viewer_s_websocket(host, origin, public, allowed) -> None:
    from proftui.tui.commands.serve_server import allowed as may_open

    assert may_open(host, origin, public) is allowed


# -- served, in a browser ----------------------------------------------------------------------


def stop(process: subprocess.Popen) -> None:
    """End a process started in a session of its own, and all it started (the viewers)."""
    if process.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=5)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def wait_for(found, what: str, seconds: float):
    """Poll `found()` until it answers something true, or fail saying `what` never came."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if answer := found():
            return answer
        time.sleep(0.05)
    raise AssertionError(f"no {what} after {seconds} s")


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """`proftui serve` on the sample, copied to a folder whose name needs quoting, running
    until the module's tests are done: its address and its output's file."""
    if not HAS_SERVE:
        pytest.skip("textual-serve is not installed (pip install 'proftui[serve]')")
    folder = tmp_path_factory.mktemp("serve") / "it's a \"demo\" $HOME"
    folder.mkdir()
    trace = folder / "kineto demo.pt.trace.json"
    shutil.copy(KINETO, trace)
    log = folder.parent / "server.log"
    port = free_port()
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "proftui", "serve", str(trace), "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
    try:
        url = wait_for(lambda: re.search(r"at (http://\S+) ", log.read_text()), "address", 20)[1]
        wait_for(lambda: _listening(port), "server listening", 20)
        yield url, log
    finally:
        stop(server)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@needs_serve
def test_the_served_page_refuses_a_websocket_from_another_site(served) -> None:
    import aiohttp

    url, _ = served

    async def status(origin: str) -> int:
        async with aiohttp.ClientSession() as http:
            try:
                async with http.ws_connect(url + "ws", headers={"Origin": origin}) as ws:
                    await ws.close()
                    return 101
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status

    assert asyncio.run(status("http://evil.example")) == 403
    assert asyncio.run(status(url.rstrip("/"))) == 101  # the page's own origin opens it


@needs_serve
def test_the_page_names_its_websocket_by_the_address_the_browser_asked_for(served) -> None:
    """Behind `ssh -L 9000:127.0.0.1:PORT` the browser asks for localhost:9000: the page must
    send it there, not to the port the server listens on."""
    import aiohttp

    url, _ = served

    async def page(host: str) -> str:
        async with aiohttp.ClientSession() as http:
            async with http.get(url, headers={"Host": host}) as response:
                assert response.status == 200
                return await response.text()

    found = re.findall(r'data-session-websocket-url="([^"]*)"', asyncio.run(page("localhost:9000")))
    assert found == ["ws://localhost:9000/ws"]
    assert "<div>proftui kineto demo.pt.trace.json</div>" in asyncio.run(page(url[7:-1]))


class DevTools:
    """A page of Chromium driven over its DevTools protocol (a websocket of JSON messages):
    commands, and the app's websocket frames the page received, in order."""

    def __init__(self, ws) -> None:
        self.ws, self.next_id, self.waiting = ws, 0, {}
        self.frames: list[bytes] = []
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data:
                self.waiting.pop(data["id"]).set_result(data)
            elif data.get("method") == "Network.webSocketFrameReceived":
                frame = data["params"]["response"]
                payload = frame["payloadData"]
                self.frames.append(base64.b64decode(payload) if frame["opcode"] == 2
                                   else payload.encode())

    async def call(self, method: str, **params) -> dict:
        self.next_id += 1
        answer = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = answer
        await self.ws.send_json({"id": self.next_id, "method": method, "params": params})
        reply = await answer
        assert "error" not in reply, reply
        return reply["result"]

    async def evaluate(self, expression: str):
        result = await self.call("Runtime.evaluate", expression=expression, awaitPromise=True,
                                 returnByValue=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    async def screenshot(self, path: Path) -> str:
        data = (await self.call("Page.captureScreenshot", format="png"))["data"]
        path.write_bytes(base64.b64decode(data))
        return data

    def text(self, since: int = 0) -> str:
        """What the app wrote to the page since frame `since`, its escape sequences left out."""
        return ESCAPES.sub("", b"".join(self.frames[since:]).decode("utf-8", "replace"))

    async def until(self, found, what: str, seconds: float = 20):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if answer := found():
                return answer
            await asyncio.sleep(0.05)
        raise AssertionError(f"no {what} after {seconds} s: {self.text()[-2000:]!r}")

    async def quiet(self, seconds: float = 0.5) -> None:
        """Wait until the app has written nothing for `seconds` (it has settled)."""
        while True:
            count = len(self.frames)
            await asyncio.sleep(seconds)
            if len(self.frames) == count:
                return


ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.")
SPAN = re.compile(r"↔ ([0-9.]+) (ns|µs|ms|s)\b")
UNIT_NS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}
# The palette's colours in a screenshot, counted by the page itself (a canvas decodes it).
COUNT_COLOURS = """(async () => {
  const img = new Image(); img.src = "data:image/png;base64,%s"; await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = img.width; canvas.height = img.height;
  const ctx = canvas.getContext("2d"); ctx.drawImage(img, 0, 0);
  const px = ctx.getImageData(0, 0, img.width, img.height).data, counts = {};
  for (let i = 0; i < px.length; i += 4) {
    const hex = "#" + [px[i], px[i + 1], px[i + 2]].map(v => v.toString(16).padStart(2, "0"))
      .join("");
    counts[hex] = (counts[hex] || 0) + 1;
  }
  return counts;
})()"""


def shown_span_ns(text: str) -> float:
    """The span of the timeline the ruler says it shows (`↔ 27.505 ms`), the last said."""
    value, unit = SPAN.findall(text)[-1]
    return float(value) * UNIT_NS[unit]


def chromium(profile: Path) -> tuple[subprocess.Popen, int]:
    """Headless Chromium with its DevTools port (read from the file it writes). Every host
    name but the loopback's fails to resolve: textual-serve's page names a web font, and
    nothing of the test leaves the machine."""
    browser = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", "--remote-debugging-port=0",
         "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
         "--window-size=1280,800", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        start_new_session=True)
    active = profile / "DevToolsActivePort"
    try:
        port = wait_for(lambda: active.exists() and active.read_text().split()[:1],
                        "DevTools port", 20)[0]
    except BaseException:
        stop(browser)
        raise
    return browser, int(port)


async def browse(url: str, devtools_port: int, shots: Path) -> dict:
    """Open `url`, wait for the timeline, press `w`; what was seen, screenshots in `shots`."""
    import aiohttp

    async with aiohttp.ClientSession() as http:
        targets = await (await http.get(f"http://127.0.0.1:{devtools_port}/json/list")).json()
        page = next(t for t in targets if t["type"] == "page")
        async with http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as ws:
            tab = DevTools(ws)
            await tab.call("Network.enable")
            await tab.call("Page.enable")
            navigated = await tab.call("Page.navigate", url=url)
            await tab.until(lambda: SPAN.search(tab.text()) and "ProfilerStep#" in tab.text(),
                            "timeline")
            await tab.quiet()
            seen = {"navigated": navigated, "text": tab.text(),
                    "body": await tab.evaluate("document.body.className")}
            before = await tab.screenshot(shots / "before.png")
            seen["colours"] = await tab.evaluate(COUNT_COLOURS % before)
            await tab.evaluate("document.querySelector('.xterm-helper-textarea').focus()")
            pressed_at = len(tab.frames)
            for kind in ("keyDown", "keyUp"):
                await tab.call("Input.dispatchKeyEvent", type=kind, key="w", code="KeyW",
                               windowsVirtualKeyCode=87, text="w" if kind == "keyDown" else "")
            await tab.until(lambda: SPAN.search(tab.text(pressed_at)), "ruler after w", 10)
            await tab.quiet()
            seen["after"] = tab.text(pressed_at)
            seen["after_shot"] = await tab.screenshot(shots / "after.png")
            seen["before_shot"] = before
            tab.reader.cancel()
            return seen


@needs_serve
@needs_chromium
def test_chromium_shows_the_timeline_and_w_zooms(served, tmp_path, capsys) -> None:
    url, log = served
    browser, devtools_port = chromium(tmp_path / "profile")
    try:
        seen = asyncio.run(asyncio.wait_for(browse(url, devtools_port, tmp_path), 40))
    finally:
        stop(browser)
    with capsys.disabled():
        print(f"\nproftui serve in chromium: {tmp_path / 'before.png'}, after w: "
              f"{tmp_path / 'after.png'}; the server said: {log}")
    assert "errorText" not in seen["navigated"], seen["navigated"]
    assert "-first-byte" in seen["body"].split()  # textual-serve's page got the app's bytes
    # The sample's tracks and steps, as the viewer names them in a terminal.
    for shown in ("stream 7", "thread 41207 (python)", "ProfilerStep#6", "200 slices"):
        assert shown in seen["text"], shown
    # The timeline painted its slices: several of the palette's colours, each over an area.
    painted = [c for c in DARK.slices if seen["colours"].get(c, 0) >= 200]
    assert len(painted) >= 4, (painted, sorted(seen["colours"].items(), key=lambda c: -c[1])[:20])
    # `w` zoomed in around the cursor: the ruler says it shows a shorter span.
    before_ns, after_ns = shown_span_ns(seen["text"]), shown_span_ns(seen["after"])
    assert after_ns < 0.8 * before_ns, (before_ns, after_ns)
    assert seen["after_shot"] != seen["before_shot"]
