"""`proftui report`: a profile's answers in one file to attach, HTML (self-contained) or
Markdown; of two profiles, their diff first."""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
import tempfile

from proftui import __version__
from proftui.tui.commands.common import (
    EXIT_OK,
    NO_CACHE,
    RUN,
    diagnostic_lines,
    index_warning_line,
    load,
    ops_window,
    top_option,
)
from proftui.tui.commands.spec import Arg, Command
from proftui.tui.report.content import Bars, Part, Report, Section, Strip, grid_of
from proftui.tui.text.format import fmt_duration, plural

FORMATS = ("html", "md")
DEFAULT_TOP = 15
MAX_ROWS = 120  # steps drawn and listed (rank by rank): the cluster strip shows every one
REST = "#d9d9d9"
# The parts of a step's bar, in the breakdown JSON's keys, in the order they are stacked:
# where a profile does not split compute (or idle), the whole one stands in for the split.
STEP_PARTS = (
    Part("prepare_ns", "preparing (to the first device op)", "#b8b8b8"),
    Part("compute_matrix_ns", "compute: matrix", "#2f6fc0"),
    Part("compute_vector_ns", "compute: vector", "#6aa5e8"),
    Part("compute_ai_cpu_ns", "compute: AI CPU", "#9b7fd0"),
    Part("compute_other_ns", "compute: other", "#5ab4ac"),
    Part("compute_ns", "compute (not split)", "#2f6fc0"),
    Part("comm_exposed_ns", "communication, exposed", "#e4572e"),
    Part("memcpy_exposed_ns", "copies, exposed", "#f3a712"),
    Part("host_bound_ns", "idle: host-bound", "#8c564b"),
    Part("wait_ns", "idle: waiting (sync, data loader)", "#c49c94"),
    Part("idle_other_ns", "idle: other", "#eedfcc"),
    Part("free_ns", "free (idle and copies, not split)", "#c49c94"),
    Part("rest", "rest of the step (after the device window)", REST))
# A part a profile may give whole or split, and its split.
WHOLES = {"compute_ns": ("compute_matrix_ns", "compute_vector_ns", "compute_ai_cpu_ns",
                         "compute_other_ns"),
          "free_ns": ("host_bound_ns", "wait_ns", "idle_other_ns")}
DIFF_PARTS = (
    Part("prepare_ns", "preparing", "#b8b8b8"), Part("compute_ns", "compute", "#2f6fc0"),
    Part("comm_exposed_ns", "communication, exposed", "#e4572e"),
    Part("memcpy_exposed_ns", "copies, exposed", "#f3a712"),
    Part("idle_ns", "idle", "#c49c94"))

SPEC = Command(
    "report", "a report to attach: one HTML file, or Markdown",
    "Write one file to attach to a ticket, a mail or a pull request: the summary, the step "
    "breakdown as a stacked bar per step and rank, the top device ops, the advisor's findings "
    "with their evidence, the cluster strip (with several ranks) and, of two profiles, their "
    "diff first (then the new profile's report). The numbers are those the headless commands "
    "print. HTML is one self-contained page (its style and charts inline, no script; it loads "
    "nothing); Markdown has the tables, the findings and the rank strip as text.",
    (Arg("path", files=True, help="a trace file or a profile directory (with NEW: the base)"),
     Arg("new", nargs="?", files=True, help="a second profile: the report of its diff with "
                                            "PATH first, then its own"),
     Arg("-o", "--output", metavar="FILE", files=True,
         help="the file to write (replaced when it exists; default proftui-report.html or "
              ".md, numbered when taken)"),
     Arg("--format", choices=FORMATS, help="html (default) or md; a FILE ending in .md "
                                           "means md"),
     Arg("--iteration", type=int, metavar="N", help="the breakdown, ops and cluster of "
                                                    "iteration N only"),
     top_option(f"ops and collectives listed (default {DEFAULT_TOP})", default=DEFAULT_TOP),
     RUN, NO_CACHE),
    ("proftui report PROF_000001_...                  # proftui-report.html",
     "proftui report -o slow-step.html --iteration 7 cluster_run/",
     "proftui report --format md before.json after.json > /dev/null  # writes proftui-report.md"),
    forms=(("proftui report BASE NEW [options]", "the diff of two profiles, then NEW's report"),))


def cmd_report(argv: list[str]) -> int:
    parser, args = SPEC.parse(argv)
    if args.new is not None and args.run is not None:
        parser.error("--run opens one run of one profile; with BASE NEW give each run's folder")
    form = args.format or ("md" if (args.output or "").lower().endswith(".md") else "html")
    inputs = [p for p in (args.path, args.new) if p is not None]
    _check_output(args.output, inputs)  # before the profiles are read, which can take long
    report = build_report(args)
    from proftui.tui.report.html_page import render_html
    from proftui.tui.report.markdown_page import render_markdown

    text = render_html(report) if form == "html" else render_markdown(report)
    written = _write(args.output, text, form)
    from proftui.tui.text.safe import safe

    sys.stdout.write(f"wrote {safe(written)} ({len(text.encode()) / 1024:.0f} kB, {form})\n")
    return EXIT_OK


def build_report(args: argparse.Namespace) -> Report:
    """The report `args` asks for: of one profile, or of two (the diff first)."""
    from proftui.tui.commands.diff import opened

    sections: list[Section] = []
    path = args.path
    if args.new is not None:
        sides = [opened(p, args.no_cache) for p in (args.path, args.new)]
        sections.append(diff_section(sides, args.top))
        index, path = sides[1].index, args.new
    else:
        index = load(argparse.Namespace(path=path, run=args.run, no_cache=args.no_cache))
    number = args.iteration
    if number is not None:  # the same sentence as the other commands for a step not there
        ops_window(argparse.Namespace(iteration=number, range=None), index)
    sections += [summary_section(index, path), breakdown_section(index, path, number),
                 ops_section(index, path, number, args.top), advise_section(index, path)]
    cluster = cluster_section(index, path, number, args.top)
    if cluster is not None:
        sections.append(cluster)
    what = path if args.new is None else f"{args.path} -> {args.new}"
    lines = [f"of {what}" + (f", iteration {number}" if number is not None else "")]
    if warning := index_warning_line(index):
        lines.append(warning)
    return Report(f"proftui report: {os.path.basename(os.path.normpath(path))}",
                  tuple(lines), tuple(sections), f"proftui {__version__}")


def _command(*words: str | None) -> str:
    return " ".join(shlex.quote(w) if not w.startswith("-") and w != "proftui" else w
                    for w in words if w)


def _iteration_words(number: int | None) -> tuple[str | None, str | None]:
    return ("--iteration", str(number)) if number is not None else (None, None)


def summary_section(index, path: str) -> Section:
    """The summary: what was read, the iterations, the top op types and ops, busy ratios."""
    from proftui.core.analysis.summary import report_tables
    from proftui.tui.commands.summary import summary_json

    report = summary_json(index)
    files = report["files"]
    tables = ", ".join(sorted({t["kind"] for t in report["tables"]}))
    what = (f"span {fmt_duration(report['span_ns'])}, {plural(report['slices'], 'slice')} "
            f"from {plural(len(files), 'timeline')}" if files
            else "no timeline: summarised from its tables")
    lines = [what + (f"; tables: {tables}" if tables else "")]
    if report["iterations"] is None:
        lines.append("iterations: none found")
    lines += diagnostic_lines([{"kind": k, "count": n}
                               for k, n in report["diagnostics"].items()])
    return Section("Summary", _command("proftui", "summary", path), tuple(lines),
                   grids=tuple(grid_of(t, table) for t, table in report_tables(report)))


def breakdown_section(index, path: str, number: int | None) -> Section:
    """Where each step's time goes: a stacked bar per step and rank, and the table."""
    from proftui.core.analysis.breakdown import breakdown_table
    from proftui.core.analysis.speed import speed_text
    from proftui.tui.commands.breakdown import breakdown_answer, breakdown_json, source_text

    found, speeds = breakdown_answer(index, number)
    data = breakdown_json(found, speeds, index)
    steps, rows = (data["iterations"], found.steps) if found.steps else (data["total"],
                                                                         found.total)
    several = len({s["group"] for s in steps}) > 1
    bars = tuple((_step_label(s, several), step_values(s)) for s in steps[:MAX_ROWS])
    more = (f"the first {MAX_ROWS} of {len(steps)} steps (the cluster strip and "
            "`proftui breakdown` have every one)" if len(steps) > MAX_ROWS else "")
    chart = Bars("each step's time, device parts over its device window", STEP_PARTS, bars,
                 more)
    table = breakdown_table(rows)
    hidden = ["name_id"] if several else ["name_id", "Group"]
    if not any(b.timed for b in rows):  # the parts a step table does not split
        hidden += [c.name for c in table.columns[3:] if all(map(math.isnan, c.values))]
    lines = [source_text(rows)] + [f"speed{' of ' + e['group'] if e['group'] else ''}: {t}"
                                   for e in speeds if (t := speed_text(e))]
    return Section("Step breakdown", _command("proftui", "breakdown", *_iteration_words(number),
                                              path),
                   tuple(lines), (chart,),
                   (grid_of("per step" if found.steps else "the whole capture", table,
                            leave_out=hidden, limit=MAX_ROWS),))


def _step_label(step: dict, several: bool) -> str:
    number = f"#{step['iteration']}" if step["iteration"] is not None else "all"
    return f"{step['group']} {number}" if several and step["group"] else number


def step_values(step: dict) -> tuple[int, ...]:
    """A step of the breakdown's JSON as ns per part of STEP_PARTS: the split where the
    profile has it, else the whole part; what is left of the step last."""
    device = step.get("device") or {}
    left_out: set[str] = set()
    for whole, split in WHOLES.items():
        left_out |= set(split) if device.get(split[0]) is None else {whole}
    values = [0 if p.key in left_out else int(device.get(p.key) or 0) for p in STEP_PARTS[:-1]]
    return (*values, max(int(step["step_ns"]) - sum(values), 0))


def ops_section(index, path: str, number: int | None, top: int) -> Section:
    """The top device ops by total time (all ops where there is no device)."""
    from proftui.tui.commands.ops import ops_answer

    side = "device"
    ask = argparse.Namespace(iteration=number, range=None, by="name", side=side, sort=None,
                             top=top, json=True)
    found = ops_answer(ask, index)
    if not found.table.n_rows:
        side = ask.side = "all"
        found = ops_answer(ask, index)
    where = f"iteration {number}" if number is not None else "the whole capture"
    title = (f"{side} ops of {where} by total time: {plural(found.table.n_rows, 'op')}, "
             f"{plural(found.slices, 'slice')}")
    return Section("Top ops", _command("proftui", "ops", "--side", side, "--top", str(top),
                                       *_iteration_words(number), path),
                   grids=(grid_of(title, found.table, found.shown),))


def advise_section(index, path: str) -> Section:
    """The advisor's findings with their evidence, most time lost first."""
    from proftui.core.ops.iterations import capture_start_ns
    from proftui.tui.commands.advise import advice, advise_json

    data = advise_json(advice(index), index)
    origin: int | None = capture_start_ns(index)
    starts = [e["start_ns"] for f in data["findings"] for e in f["evidence"]]
    lines = []
    if not index.meta.get("sources"):  # no timeline: the tables' own clock, as advise says
        origin = min(starts) if starts else None
        if starts:
            lines.append("no timeline: evidence times are from the first task the tables list "
                         "as evidence")
    if not data["findings"]:
        lines.append("no findings: no rule's threshold is crossed on this profile")
    lines += [f"skipped {s['rule']}: {s['reason']}" for s in data["skipped"]]
    return Section("Findings", _command("proftui", "advise", path), tuple(lines),
                   findings=tuple(data["findings"]), origin_ns=origin)


def cluster_section(index, path: str, number: int | None, top: int) -> Section | None:
    """The ranks compared (None with one rank): the strip, the ranks, the collectives."""
    from proftui.core.analysis.cluster import instance_table, rank_table
    from proftui.core.analysis.heat import heat_grid
    from proftui.tui.commands.cluster import (
        _spread_lines,
        cluster_answer,
        cluster_json,
        step_strip,
        who_waits_lines,
    )

    answer = cluster_answer(index, number)
    found = answer[0]
    if len(cluster_json(answer, top, index)["ranks"]) < 2:
        return None
    grid = heat_grid(found)
    strip = Strip("step time per rank and iteration", tuple(grid.ranks),
                  tuple(grid.iterations),
                  tuple(tuple(None if math.isnan(v) else float(v) for v in row)
                        for row in grid.values),
                  tuple(tuple(bool(w) for w in row) for row in grid.warmup),
                  tuple(tuple(grid.share(r, k) for k in range(len(grid.iterations)))
                        for r in range(len(grid.ranks))),
                  grid.lo_ns, grid.hi_ns, grid.worst, tuple(step_strip(found)))
    lines = [line.rstrip("\n") for line in _spread_lines(found) + who_waits_lines(found, top)]
    grids = [grid_of("ranks: medians over their steps, warm-up left out", rank_table(found))]
    shown = found.collectives.instances[:top]
    if shown:
        grids.append(grid_of(f"collectives: top {len(shown)} of "
                             f"{len(found.collectives.instances)} by arrival skew",
                             instance_table(shown)))
    return Section("Cluster", _command("proftui", "cluster", *_iteration_words(number), path),
                   tuple(lines), (strip,), tuple(grids))


def diff_section(sides, top: int) -> Section:
    """Did the fix help: the verdict, the parts base and new side by side, the tables."""
    from proftui.core.analysis.diff import compare
    from proftui.core.analysis.diff_report import diff_tables, evidence
    from proftui.core.analysis.rank_diff import slowest_text
    from proftui.tui.commands.diff import diff_json

    found = compare(sides[0], sides[1])
    data = diff_json(found, sides, top)
    lines = [f"warning: {w['message']}" for w in data["warnings"]]
    if not found.comparable:
        lines.append("not comparable: the numbers below compare unlike profiles")
    lines += [found.verdict, *evidence(found)]
    if found.ranks.rows and (slowest := slowest_text(found.ranks)):
        lines.append(slowest)
    parts = data["breakdown"]
    bars = tuple((side, tuple(round((parts.get(p.key) or {}).get(side) or 0)
                              for p in DIFF_PARTS)) for side in ("base", "new"))
    chart = Bars("a step's parts, base and new, as the diff compares them", DIFF_PARTS, bars)
    return Section("Diff", _command("proftui", "diff", sides[0].label, sides[1].label),
                   tuple(lines), (chart,),
                   tuple(grid_of(t, table) for t, table in diff_tables(found, top)))


def _check_output(output: str | None, inputs: list[str]) -> None:
    """Refuse an --output that is a folder, lies in no folder, or is one of the inputs."""
    from proftui.core.model.errors import ProftuiError

    if output is None:
        return
    if os.path.isdir(output):
        raise ProftuiError(f"{output} is a folder; -o names the file to write.")
    folder = os.path.dirname(output) or "."
    if not os.path.isdir(folder):
        raise ProftuiError(f"{folder} is not a folder; -o names a file in an existing one.")
    for path in inputs:
        if os.path.exists(output) and os.path.samefile(output, path):
            raise ProftuiError(f"{output} is a profile this report reads; -o names another "
                               "file.")


def _write(output: str | None, text: str, form: str) -> str:
    """Write `text` to `output`, through a temporary file so that a failed write leaves the
    old one whole; without `output`, to a new proftui-report file (never an existing one).
    Returns the path written."""
    from proftui.core.export.names import free_name
    from proftui.core.model.errors import ExportError

    target = output
    try:
        if target is None:
            while True:  # another process may take the free name first
                target = free_name(f"proftui-report.{form}")
                try:
                    with open(target, "x", encoding="utf-8") as handle:
                        handle.write(text)
                    return target
                except FileExistsError:
                    continue
        handle, temp = tempfile.mkstemp(prefix=".proftui-report-",
                                        dir=os.path.dirname(target) or ".")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.chmod(temp, 0o644)
            os.replace(temp, target)
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
    except OSError as exc:
        raise ExportError(f"{target}: cannot write ({exc.strerror}).") from None
    return target
