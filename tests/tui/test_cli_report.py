"""`proftui report`: the HTML page and the Markdown, their numbers against the commands' JSON,
escaping, where the file goes, bad input, and the page rendered in headless Chromium."""

from __future__ import annotations

import html
import json
import re
import shutil
import socket
import struct
import subprocess
import threading
import zlib
from pathlib import Path

import pytest
from tui_support import run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CLUSTER = str(SAMPLES / "cluster_2rank")
KINETO = str(SAMPLES / "kineto_demo.pt.trace.json")
BEFORE = str(SAMPLES / "diff_before.pt.trace.json")
AFTER = str(SAMPLES / "diff_after.pt.trace.json")
RECT = re.compile(r'<rect [^>]*data-row="([^"]*)" data-part="([^"]*)" data-ns="(\d+)"')


def _report(capsys, tmp_path: Path, *argv: str, name: str = "report.html") -> str:
    target = tmp_path / name
    code, out, err = run_cli(capsys, "report", "-o", target, *argv)
    assert code == 0, err
    assert out == f"wrote {target} ({round(target.stat().st_size / 1024)} kB, " \
                  f"{'md' if name.endswith('.md') else 'html'})\n"
    return target.read_text(encoding="utf-8")


def _json(capsys, *argv: str) -> dict:
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_the_step_bars_are_the_breakdowns_json_to_the_nanosecond(capsys, tmp_path) -> None:
    page = _report(capsys, tmp_path, CLUSTER)
    steps = _json(capsys, "breakdown", CLUSTER)["iterations"]
    drawn: dict[str, dict[str, int]] = {}
    for row, part, ns in RECT.findall(page):
        drawn.setdefault(row, {})[part] = int(ns)
    assert len(steps) == 8 and set(drawn) == {f"{s['group']} #{s['iteration']}" for s in steps}
    for step in steps:
        bar, device = drawn[f"{step['group']} #{step['iteration']}"], step["device"]
        for key in ("prepare_ns", "compute_matrix_ns", "compute_vector_ns", "comm_exposed_ns",
                    "wait_ns"):
            assert bar.get(key, 0) == device[key], (step["iteration"], key)
        assert "compute_ns" not in bar and "free_ns" not in bar  # the split stands for them
        assert sum(bar.values()) == step["step_ns"]  # what is left: the rest of the step


def test_the_ops_findings_and_strip_are_the_commands_json(capsys, tmp_path) -> None:
    page = _report(capsys, tmp_path, CLUSTER)
    ops = _json(capsys, "ops", "--side", "device", "--top", "15", CLUSTER)["rows"]
    top = page[page.index("<h2>Top ops</h2>"):page.index("<h2>Findings</h2>")]
    totals = re.findall(r'<tr><td(?: title="[^"]*")?>([^<]*)</td><td class=n>\d+</td>'
                        r'<td class=n data-ns="(\d+)"', top)
    assert [(r["name"], r["total_ns"]) for r in ops] == [(n, int(t)) for n, t in totals]
    findings = _json(capsys, "advise", CLUSTER)["findings"]
    lost = re.findall(r'loses <b data-ns="(\d+)">', page)
    assert findings and [int(x) for x in lost] == [f["time_lost_ns"] for f in findings]
    ranks = _json(capsys, "cluster", CLUSTER)["ranks"]
    strip = page[page.index("<h2>Cluster</h2>"):]
    cells = [int(x) for x in re.findall(r'data-ns="(\d+)"><title>rank', strip)]
    assert cells == [s["step_ns"] for r in ranks for s in r["steps"]]
    assert strip.count('stroke="#000000"') == 1  # the slowest step outlined, once


def test_one_rank_has_no_cluster_section_and_says_each_command(capsys, tmp_path) -> None:
    page = _report(capsys, tmp_path, KINETO)
    heads = re.findall(r"<h2>([^<]*)</h2>", page)
    assert heads == ["Summary", "Step breakdown", "Top ops", "Findings"]
    assert f"<code>proftui breakdown {KINETO}</code>" in page
    assert 'http-equiv="Content-Security-Policy" content="default-src \'none\'' in page
    assert "<script" not in page and "<link" not in page and "@import" not in page


def test_iteration_narrows_the_breakdown_ops_and_cluster(capsys, tmp_path) -> None:
    page = _report(capsys, tmp_path, "--iteration", "3", CLUSTER)
    assert {row for row, _, _ in RECT.findall(page)} == {"rank 0 #3", "rank 1 #3"}
    assert "<code>proftui ops --side device --top 15 --iteration 3 " in page
    code, _, err = run_cli(capsys, "report", "-o", tmp_path / "x.html", "--iteration", "30",
                           CLUSTER)
    assert code == 2 and err == ("proftui: Iteration 30 is not in this profile (it has "
                                 "iterations 1 to 4).\n")
    assert not (tmp_path / "x.html").exists()


def test_the_diff_comes_first_then_the_new_profile(capsys, tmp_path) -> None:
    page = _report(capsys, tmp_path, BEFORE, AFTER)
    verdict = _json(capsys, "diff", BEFORE, AFTER)["verdict"]
    heads = re.findall(r"<h2>([^<]*)</h2>", page)
    assert heads == ["Diff", "Summary", "Step breakdown", "Top ops", "Findings"]
    assert f"<p>{html.escape(verdict)}</p>" in page
    parts = _json(capsys, "diff", BEFORE, AFTER)["breakdown"]
    bars = {(row, part): int(ns) for row, part, ns in RECT.findall(page)}
    assert bars[("base", "prepare_ns")] == round(parts["prepare_ns"]["base"])
    assert bars[("new", "compute_ns")] == round(parts["compute_ns"]["new"])


def test_markdown_has_the_tables_findings_and_the_strip_as_text(capsys, tmp_path) -> None:
    text = _report(capsys, tmp_path, CLUSTER, name="r.md")  # .md: Markdown without --format
    assert "<svg" not in text and "<rect" not in text
    assert "| Name | Count | Total | Self | Avg | Min | Max |" in text
    tables = re.findall(r"\n(\|[^\n]*\|)\n(\|[-:|]+\|)\n((?:\|[^\n]*\|\n)+)", text)
    assert len(tables) >= 6
    for header, rule, body in tables:  # every row as many cells as the header
        cells = len(re.findall(r"(?<!\\)\|", header))
        assert len(re.findall(r"(?<!\\)\|", rule)) == cells
        assert {len(re.findall(r"(?<!\\)\|", row)) for row in body.splitlines()} == {cells}
    finding = _json(capsys, "advise", CLUSTER)["findings"][0]
    rule_id = finding["rule"].replace("_", "\\_")
    assert f"- **{finding['severity'].upper()}** {rule_id} \\[rank 0\\]: " in text
    strip = re.search(r"```text\n(step time per rank and iteration[^`]*)```", text)
    assert strip and "rank 0" in strip.group(1) and "◆" in strip.group(1)
    code, out, _ = run_cli(capsys, "cluster", CLUSTER)
    assert strip.group(1).splitlines()[2] in out.splitlines()  # the command's own strip


HOSTILE = '<img src=x onerror="alert(1)">|evil_`name`\x1b[31m'


def _hostile_trace(path: Path) -> str:
    """A Kineto trace whose kernel and step names are markup, a pipe and an escape."""
    events = []
    for n in range(1, 5):
        at = n * 1000
        events += [{"ph": "X", "name": f"ProfilerStep#{n}", "ts": at, "dur": 900, "pid": 1,
                    "tid": 1, "cat": "user_annotation"},
                   {"ph": "X", "name": HOSTILE, "ts": at + 10, "dur": 400, "pid": 0,
                    "tid": 7, "cat": "kernel", "args": {"stream": 7, "device": 0}}]
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)


def test_names_from_the_profile_are_escaped(capsys, tmp_path) -> None:
    trace = _hostile_trace(tmp_path / "hostile.pt.trace.json")
    page = _report(capsys, tmp_path, trace)
    assert "<img" not in page and "\x1b" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;|evil_`name`\\x1b[31m" in page
    text = _report(capsys, tmp_path, trace, name="r.md")
    assert not re.search(r"(?<!\\)<img", text) and "\x1b" not in text
    assert "\\<img src=x onerror=\"alert(1)\"\\>\\|evil\\_\\`name\\`\\\\x1b\\[31m" in text


def test_the_default_name_never_replaces_a_file(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "proftui-report.html").write_text("mine")
    code, out, _ = run_cli(capsys, "report", KINETO)
    assert code == 0 and out.startswith("wrote proftui-report-1.html (")
    assert (tmp_path / "proftui-report.html").read_text() == "mine"
    code, out, _ = run_cli(capsys, "report", "--format", "md", KINETO)
    assert out.startswith("wrote proftui-report.md (")
    assert (tmp_path / "proftui-report.md").read_text().startswith("# proftui report: ")


@pytest.mark.parametrize(("argv", "error"), [
    (["/no/such/profile"], "proftui: /no/such/profile: no such file or directory.\n"),
    (["-o", "{tmp}", KINETO], "proftui: {tmp} is a folder; -o names the file to write.\n"),
    (["-o", "{tmp}/no/r.html", KINETO],
     "proftui: {tmp}/no is not a folder; -o names a file in an existing one.\n"),
    (["-o", KINETO, KINETO],
     f"proftui: {KINETO} is a profile this report reads; -o names another file.\n"),
])
def test_bad_input_is_one_sentence(capsys, tmp_path, argv, error) -> None:
    before = KINETO and Path(KINETO).read_bytes()
    code, out, err = run_cli(capsys, "report", *[a.format(tmp=tmp_path) for a in argv])
    assert (code, out, err) == (2, "", error.format(tmp=tmp_path))
    assert Path(KINETO).read_bytes() == before


def test_run_with_two_profiles_is_bad_usage(capsys) -> None:
    code, _, err = run_cli(capsys, "report", "--run", "1", BEFORE, AFTER)
    assert code == 2 and err.count("\n") == 1 and "--run opens one run" in err


# -- in a browser ------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium here (.ci/run installs Debian's where apt-get can)")
# Chromium's own services, which it calls whatever page it shows (network time, the component
# updater, sign-in) even with the flags below: set apart by name, a page's request is not.
BROWSER_OWN = {"clients2.google.com", "update.googleapis.com", "accounts.google.com"}
QUIET = ("--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,"
         "Translate,AutofillServerCommunication", "--disable-default-apps",
         "--disable-extensions", "--no-pings", "--disable-domain-reliability",
         "--disable-client-side-phishing-detection", "--safebrowsing-disable-auto-update")
URL_IN_PAGE = re.compile(r"""(?:src|href)\s*=\s*["']?\s*https?:|url\(\s*["']?\s*https?:""",
                         re.IGNORECASE)


class Proxy:
    """A proxy that answers nothing and records the first line of each request: a browser
    pointed at it shows here every request that would leave the machine."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.requests: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    first = conn.recv(4096).split(b"\r\n", 1)[0]
                except OSError:
                    first = b"(nothing)"
                self.requests.append(first.decode("latin-1"))

    def close(self) -> None:
        self.server.close()

    def page_requests(self) -> list[str]:
        """The requests but those of the browser's own services."""
        return [r for r in self.requests if _host(r) not in BROWSER_OWN]


def _host(request: str) -> str:
    """The host a proxied request line names: CONNECT host:443, GET http://host/..."""
    words = request.split()
    target = words[1] if len(words) > 1 else ""
    return target.split("://")[-1].split("/")[0].split(":")[0]


def _screenshot(page: Path, shot: Path, profile: Path, proxy: Proxy) -> None:
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", f"--proxy-server=127.0.0.1:{proxy.port}",
         "--proxy-bypass-list=<-loopback>", *QUIET, f"--screenshot={shot}",
         "--window-size=1200,2000", page.as_uri()], check=True, capture_output=True, timeout=120)
    assert shot.exists(), "chromium made no screenshot"


def _pixels(png: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) bytes of an 8-bit, non-interlaced PNG."""
    data = png.read_bytes()
    at, chunks, header = 8, [], b""
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        header = body if kind == b"IHDR" else header
        chunks += [body] if kind == b"IDAT" else []
        at += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    size = 3 if colour == 2 else 4
    raw, stride, rows, previous = zlib.decompress(b"".join(chunks)), width * size, [], None
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) *
                                                      (stride + 1)])
        up = previous or bytearray(stride)
        for x in range(stride):
            left = line[x - size] if x >= size else 0
            corner = up[x - size] if x >= size else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up[x]) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up[x]) // 2) & 255
            elif kind == 4:
                p = left + up[x] - corner
                pa, pb, pc = abs(p - left), abs(p - up[x]), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else
                                      up[x] if pb <= pc else corner)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def _count(rows: list[bytes], width: int, colour: str) -> int:
    size = len(rows[0]) // width
    rgb = bytes.fromhex(colour.lstrip("#"))
    return sum(1 for row in rows for x in range(0, len(row), size) if row[x:x + 3] == rgb)


@needs_chromium
def test_the_proxy_sees_a_page_that_does_load_something(tmp_path) -> None:
    """The check below can fail: a page naming an outside image is seen asking for it."""
    page = tmp_path / "leaky.html"
    page.write_text('<!DOCTYPE html><img src="http://example.com/pixel.png">')
    proxy = Proxy()
    try:
        _screenshot(page, tmp_path / "leaky.png", tmp_path / "profile", proxy)
    finally:
        proxy.close()
    assert any(_host(r) == "example.com" for r in proxy.page_requests()), proxy.requests


@needs_chromium
@pytest.mark.parametrize(("name", "argv", "colours"), [
    ("cluster", [CLUSTER], ("#2f6fc0", "#e4572e")),  # compute (matrix), exposed comm
    ("kineto", [KINETO], ("#2f6fc0",)),
    ("diff", [BEFORE, AFTER], ("#2f6fc0", "#b8b8b8")),  # compute, preparing
])
def test_chromium_draws_the_charts_and_nothing_leaves_the_page(capsys, tmp_path, name, argv,
                                                               colours) -> None:
    page = tmp_path / f"{name}.html"
    text = _report(capsys, tmp_path, *argv, name=page.name)
    assert not URL_IN_PAGE.search(text) and "http://" not in text and "https://" not in text
    shot = tmp_path / f"{name}.png"
    proxy = Proxy()
    try:
        _screenshot(page, shot, tmp_path / "profile", proxy)
    finally:
        proxy.close()
    with capsys.disabled():
        print(f"\nscreenshot of the {name} report: {shot}")
    assert proxy.page_requests() == [], proxy.requests
    width, _, rows = _pixels(shot)
    for colour in colours:  # a bar of each drew (a 10 x 10 patch at least)
        assert _count(rows, width, colour) > 100, colour
