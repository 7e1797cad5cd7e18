"""The `proftui` command line: open a trace in the app, or run a headless command.

Exit status: 0 success, 1 failure, 2 bad usage or unreadable input. Errors are one sentence on
stderr; results go to stdout; progress bars go to stderr, and only when it is a terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from proftui import __version__
from proftui.tui.format import fmt_count, fmt_duration
from proftui.tui.safe import safe

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
MAX_TRACKS_SHOWN = 200
MAX_FILES_SHOWN = 20


class _Parser(argparse.ArgumentParser):
    """argparse that exits with status 2 and one sentence on bad usage."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser(command: str, description: str, examples: str) -> _Parser:
    parser = _Parser(
        prog=f"proftui {command}".strip(), description=description,
        epilog=f"examples:\n{examples}", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a trace file (.json, .json.gz) or a profile directory "
                                     "(PROF_XXX, *_ascend_pt, a folder of ranks)")
    parser.add_argument("--no-cache", action="store_true",
                        help="index the file afresh; do not read or write the cache")
    return parser


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[int, int, int], None] | None]:
    """A progress callback drawing a bar on stderr, or None when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (TextColumn("indexing"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
               TextColumn("{task.fields[events]} events"), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("index", total=None, events="0")

        def update(done: int, total: int, events: int) -> None:
            bar.update(task, completed=done, total=total, events=fmt_count(events))

        yield update


def _load(args: argparse.Namespace, show_progress: bool = True):
    from proftui.core import load_trace

    with _progress(show_progress) as progress:
        return load_trace(args.path, use_cache=not args.no_cache, progress=progress)


# -- commands -------------------------------------------------------------------------------


def cmd_info(argv: list[str]) -> int:
    parser = _parser("info", "Print what a trace or profile holds: processes, threads, event "
                     "counts by phase, time span, iterations, summary tables, files not used "
                     "and import diagnostics.",
                     "  proftui info trace.json\n"
                     "  proftui info PROF_000001_20260605161708478_FRJKORBPFMHQMGLA\n"
                     "  proftui info --json run.pt.trace.json.gz | jq .slices")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    args = parser.parse_args(argv)
    from proftui.core.overview import overview

    summary = overview(_load(args))
    if args.json:
        sys.stdout.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write("\n".join(info_lines(summary)) + "\n")
    return EXIT_OK


def info_lines(summary: dict[str, Any]) -> list[str]:
    """The `info` report as plain lines (all trace text escaped)."""
    lines = []
    profile = summary.get("profile") or {}
    if profile and profile.get("layouts") != ["trace file"]:
        lines.append(f"profile    {safe(profile['root'])}")
        lines.append(f"found      {', '.join(profile['layouts']) or 'nothing recognised'}")
        if profile["groups"] and profile["groups"] != [""]:
            lines.append(f"groups     {', '.join(safe(g) or '(top)' for g in profile['groups'])}")
    for n, src in enumerate(summary["sources"]):
        if n == MAX_FILES_SHOWN:
            lines.append(f"           ... and {len(summary['sources']) - n} more (see --json)")
            break
        gz = ", gzip" if src.get("compressed") else ""
        group = f" [{safe(src['group'])}]" if src.get("group") else ""
        lines.append(f"trace      {safe(src['path'])} ({fmt_count(src['size'])} bytes{gz}){group}")
    if summary["sources"]:
        lines.append(f"format     {summary['format']} form, display unit "
                     f"{summary['display_time_unit']}")
        lines += _timeline_lines(summary)
    if "iterations" in summary:
        lines += _iteration_lines(summary["iterations"])
    if profile.get("tables"):
        lines.append(f"tables     {len(profile['tables'])}")
        for table in profile["tables"]:
            group = f" [{safe(table['group'])}]" if table["group"] else ""
            shape = (f"{fmt_count(table['rows']):>9} rows x {len(table['columns']):<3}"
                     if "rows" in table else table.get("error", ""))
            lines.append(f"  {safe(table['kind']):<22} {shape} "
                         f"{safe(_short(table['path'], profile))}{group}")
            for problem in table.get("diagnostics", []):
                lines.append(f"  {'':<22} {fmt_count(problem['count']):>9} {problem['message']}")
    if profile.get("skipped"):
        lines.append(f"not used   {len(profile['skipped'])}")
        for item in profile["skipped"]:
            lines.append(f"  {safe(_short(item['path'], profile))}: {safe(item['why'])}")
    if summary["diagnostics"]:
        lines.append("diagnostics")
        for d in summary["diagnostics"]:
            where = f" (first at byte {d['first_offset']})" if d["first_offset"] is not None else ""
            detail = f": {safe(d['detail'])}" if d["detail"] else ""
            lines.append(f"  {fmt_count(d['count']):>10}  {d['message']}{where}{detail}")
    else:
        lines.append("diagnostics none")
    return lines


def _timeline_lines(summary: dict[str, Any]) -> list[str]:
    lines: list[str] = []

    lines.append(f"span       {fmt_duration(summary['duration_ns'])} "
                 f"(from {summary['start_ns']} ns to {summary['end_ns']} ns)")
    phases = ", ".join(f"{safe(k) or '(none)'} {fmt_count(v)}"
                       for k, v in summary["phase_counts"].items())
    lines.append(f"events     {fmt_count(summary['events'])}" + (f" ({phases})" if phases else ""))
    lines.append(f"slices     {fmt_count(summary['slices'])}; instants "
                 f"{fmt_count(summary['instants'])}; counters {summary['counter_series']} series, "
                 f"{fmt_count(summary['counter_samples'])} samples; flow edges "
                 f"{fmt_count(summary['flow_edges'])}")
    lines.append(f"processes  {len(summary['processes'])}")
    shown = 0
    for proc in summary["processes"]:
        label = safe(proc["name"]) or "Process"
        if proc.get("group"):
            label = f"{safe(proc['group'])}: {label}"
        extra = f" [{safe(proc['labels'])}]" if proc["labels"] else ""
        lines.append(f"  {label} (pid {safe(proc['pid']) or '-'}){extra}")
        for track in proc["tracks"]:
            shown += 1
            if shown > MAX_TRACKS_SHOWN:
                continue
            lines.append(f"    {_track_line(track)}")
    for track in summary["other_tracks"]:
        shown += 1
        if shown <= MAX_TRACKS_SHOWN:
            lines.append(f"  {_track_line(track)}")
    if shown > MAX_TRACKS_SHOWN:
        lines.append(f"  ... and {fmt_count(shown - MAX_TRACKS_SHOWN)} more tracks "
                     "(see --json)")
    return lines


def _iteration_lines(iterations: dict[str, Any]) -> list[str]:
    items = iterations["items"]
    if not items:
        return ["iterations none found"]
    timed = [it for it in items if it["dur_ns"] >= 0]
    line = f"iterations {len(items)} (from {iterations['source']})"
    if timed:
        durations = sorted(it["dur_ns"] for it in timed)
        slowest = max(timed, key=lambda it: it["dur_ns"])
        group = f" of {safe(slowest['group'])}" if slowest["group"] else ""
        line += (f"; median {fmt_duration(durations[len(durations) // 2])}, slowest "
                 f"#{slowest['number']}{group} {fmt_duration(slowest['dur_ns'])}")
    return [line]


def _short(path: str, profile: dict[str, Any]) -> str:
    """A path relative to the profile's root."""
    root = profile.get("root") or ""
    return path[len(root) + 1:] if root and path.startswith(root + "/") else path


def track_contents(track: dict[str, Any]) -> str:
    """What a track holds, e.g. "1,024 slices in 3 rows, 2 instants"."""
    parts = []
    if track["slices"]:
        parts.append(f"{fmt_count(track['slices'])} slices in {track['rows']} rows")
    if track["instants"]:
        parts.append(f"{fmt_count(track['instants'])} instants")
    if track["counter_series"]:
        parts.append(f"{track['counter_series']} counters")
    return ", ".join(parts) or "empty"


def _track_line(track: dict[str, Any]) -> str:
    return f"{safe(track['name']):<40} {track['kind']:<8} {track_contents(track)}"


def cmd_index(argv: list[str]) -> int:
    parser = _parser("index", "Index a trace and store the index in the cache, so that "
                     "opening it later is instant.", "  proftui index big_trace.json.gz")
    args = parser.parse_args(argv)
    if args.no_cache:
        parser.error("--no-cache makes no sense for index")
    index = _load(args)
    where = index.meta.get("cache_path")
    if index.meta.get("from_cache"):
        sys.stdout.write(f"already indexed: {fmt_count(index.n_slices)} slices\n")
    elif where:
        sys.stdout.write(f"indexed {fmt_count(index.n_slices)} slices into {safe(where)}\n")
    else:
        sys.stderr.write(f"proftui: {index.meta.get('cache_error', 'the cache was not written')}\n")
        return EXIT_FAILURE
    return EXIT_OK


def cmd_open(argv: list[str]) -> int:
    from proftui.themes import DEFAULT_THEME, THEME_NAMES

    parser = _parser("", "Open a trace in the terminal viewer (? in the viewer lists the keys).",
                     "  proftui trace.json\n  proftui --theme light PROF_000001_...\n"
                     "  NO_COLOR=1 proftui trace.json\n  proftui info trace.json      (headless)")
    parser.add_argument("--theme", choices=sorted(THEME_NAMES), default=None,
                        help="colour theme (default dark; T switches at run time)")
    args = parser.parse_args(argv)
    from proftui.tui.app import ProftuiApp

    theme = THEME_NAMES[args.theme] if args.theme else DEFAULT_THEME
    ProftuiApp(args.path, use_cache=not args.no_cache, theme=theme).run()
    return EXIT_OK


COMMANDS: dict[str, Callable[[list[str]], int]] = {"info": cmd_info, "index": cmd_index}

USAGE = f"""usage: proftui PATH                 open a trace or profile directory in the viewer
       proftui info PATH [--json]     what it holds: tracks, iterations, tables, problems
       proftui index PATH             build the cache (with a progress bar)
       proftui --version

Every command takes --help. proftui {__version__}
"""


def main(argv: list[str] | None = None) -> int:
    from proftui.core.errors import Cancelled, ProftuiError

    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return EXIT_OK if argv else EXIT_USAGE
    if argv[0] in ("-V", "--version"):
        sys.stdout.write(f"proftui {__version__}\n")
        return EXIT_OK
    command = COMMANDS.get(argv[0])
    try:
        if command is not None:
            return command(argv[1:])
        return cmd_open(argv)
    except Cancelled:
        sys.stderr.write("proftui: cancelled.\n")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        sys.stderr.write("proftui: interrupted.\n")
        return 130
    except ProftuiError as exc:
        sys.stderr.write(f"proftui: {safe(exc)}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
